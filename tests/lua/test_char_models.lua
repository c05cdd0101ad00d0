-- examples/char_gpt.lua and char_lstm.lua (with their loop, examples/text_train.lua): a few
-- iterations of each on a small text lower the validation loss, sampling returns the prompt and the
-- asked number of characters, all from the vocabulary, seeded sampling repeats, the log has its rows;
-- the bad inputs (an unknown corpus, a prompt character outside the vocabulary, a context longer
-- than the GPT's position table, bad options) are clear errors. Tiny models: seconds in all.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local root = here .. '../../'

-- a small text with structure (lines of a poem, English and Chinese): learnable in a few steps
local LINES = { '床前明月光，疑是地上霜。', '举头望明月，低头思故乡。', 'the moon before my bed,', 'frost on the ground.' }
local text = {}
for i = 1, 60 do text[i] = LINES[(i - 1) % #LINES + 1] end
local path = os.tmpname()
do
  local f = assert(io.open(path, 'wb'))
  f:write(table.concat(text, '\n'), '\n')
  f:close()
end

-- runs an example with the arguments (a table) and returns its summary; the example's globals
-- (model, train_set, ...) stay in _G
local function run(name, args)
  local saved = _G.arg
  _G.arg = { [0] = root .. 'examples/' .. name .. '.lua', table.unpack(args) }
  local ok, res = pcall(dofile, root .. 'examples/' .. name .. '.lua')
  _G.arg = saved
  if not ok then error(res, 0) end
  return res
end

local SMALL = {
  char_gpt = { '--layers', '2', '--heads', '2', '--width', '32' },
  char_lstm = { '--layers', '2', '--width', '32' },
}

local function args(name, extra)
  local a = { '--text', path, '--block', '16', '--batch', '8', '--iters', '60', '--lr', '1e-2', '--min-lr', '1e-3',
    '--warmup', '5', '--eval-every', '20', '--eval-iters', '4', '--length', '40', '--quiet', '--seed', '3' }
  for _, v in ipairs(SMALL[name]) do a[#a + 1] = v end
  for _, v in ipairs(extra or {}) do a[#a + 1] = v end
  return a
end

local function chars(s)
  local out = {}
  for ch in s:gmatch(utf8.charpattern) do out[#out + 1] = ch end
  return out
end

for _, name in ipairs({ 'char_gpt', 'char_lstm' }) do
  test.case(name .. ': the loss falls; sampling gives the asked length from the vocabulary', function()
    local log = os.tmpname()
    local s = run(name, args(name, { '--prompt', '明月', '--log', log, '--top-k', '5' }))
    local V = _G.train_set.vocab_size
    test.eq(s.iters, 60)
    test.ok(#_G.history == 3, 'validation at steps 20, 40 and at the end: ' .. #_G.history)
    local first, last = _G.history[1].val_loss, s.val_loss
    test.ok(first < math.log(V), string.format('after 20 steps %.3f, below the uniform guess %.3f', first, math.log(V)))
    test.ok(last < first - 0.3, string.format('the validation loss falls: %.3f at step 20, %.3f at 60', first, last))
    test.ok(s.ms_per_iter > 0)
    -- the sample: the prompt and 40 characters, each in the vocabulary
    test.eq(utf8.len(s.text), 2 + 40)
    test.eq(s.text:sub(1, #'明月'), '明月')
    for _, ch in ipairs(chars(s.text)) do test.ok(_G.train_set.stoi[ch], 'a character of the vocabulary: ' .. ch) end
    -- sample() at the prompt: seeded samples repeat, another length
    local a, b = _G.sample('the', 25, { seed = 7 }), _G.sample('the', 25, { seed = 7 })
    test.eq(a, b, 'the same seed, the same sample')
    test.eq(utf8.len(a), 28)
    local greedy = _G.sample('床', 10, { top_k = 1 })
    test.eq(greedy, _G.sample('床', 10, { top_k = 1 }), 'top-k 1 is greedy: deterministic')
    -- the log: train rows every 10 steps, val rows at each validation
    local train_rows, val_rows = 0, 0
    for line in io.lines(log) do
      if line:match(',train$') then train_rows = train_rows + 1 end
      if line:match(',val$') then val_rows = val_rows + 1 end
    end
    os.remove(log)
    test.eq(train_rows, 6)
    test.eq(val_rows, 3)
  end)

  test.case(name .. ': bad input', function()
    local bad = args(name)
    bad[1], bad[2] = '--corpus', 'klingon' -- instead of --text
    test.raises(function() run(name, bad) end, "data.Corpus: unknown corpus 'klingon' (expected fortunes, fortunes-zh, song, tang)")
    -- the prompt is checked before training starts
    local t0 = lm.sys.clock()
    test.raises(function() run(name, args(name, { '--prompt', 'moon☃' })) end,
      "--prompt: character '☃' (U+2603) at position 5 is not in the vocabulary")
    test.ok(lm.sys.clock() - t0 < 5, 'before training')
    test.raises(function() run(name, args(name, { '--iters', '0' })) end, '--iters needs a positive integer, got 0')
    test.raises(function() run(name, args(name, { '--temperature', '-1' })) end, '--temperature needs a positive number')
    test.raises(function() run(name, args(name, { '--bogus' })) end, "unknown option '--bogus'")
    test.raises(function() run(name, args(name, { '--lr', '1e-4', '--min-lr', '1e-3' })) end, '--min-lr 0.001 is above --lr')
  end)
end

test.case('char_gpt: a context longer than the position table is an error naming the sizes', function()
  run('char_gpt', args('char_gpt', { '--iters', '2', '--length', '0' }))
  local train = dofile(root .. 'examples/text_train.lua')
  local model, ds = _G.model, _G.train_set
  test.raises(function() train.sample(model, ds, 'the', 5, { block = 17 }) end,
    'a context of 17 characters is longer than the position table of the model (block_size 16)')
  test.raises(function() model(lm.ones(1, 17, { dtype = 'int64' })) end,
    'GPT: a sequence of 17 tokens (input 1x17) is longer than the position table (block_size 16)')
  test.raises(function() train.sample(model, ds, 'o☃', 5) end, "the prompt character '☃' (U+2603) at position 2")
  test.raises(function() train.sample(model, ds, '', 5) end, 'the prompt must be a non-empty string')
  test.raises(function() run('char_gpt', args('char_gpt', { '--width', '30', '--heads', '4' })) end,
    '--width 30 is not a multiple of --heads 4')
  test.raises(function() run('char_lstm', args('char_lstm', { '--heads', '4' })) end, "unknown option '--heads'")
end)

test.case('char_gpt: Ctrl-C stops training and still samples', function()
  local out = os.tmpname()
  local cmd = string.format("cd '%s' && exec '%s' examples/char_gpt.lua --text '%s' --block 16 --batch 8 --iters 1000000 " ..
    "--eval-every 5 --eval-iters 1 --layers 1 --heads 2 --width 16 --length 12 --prompt 'the' > '%s' 2>&1 & echo $!",
    root, lm.sys.executable(), path, out)
  local p = io.popen(cmd)
  local child = p:read('l')
  p:close()
  local function output()
    local f = io.open(out)
    local s = f and f:read('a') or ''
    if f then f:close() end
    return s
  end
  local deadline = lm.sys.clock() + (lm.build_info().sanitize and 120 or 30)
  while not output():find('step 10:', 1, true) and lm.sys.clock() < deadline do os.execute('sleep 0.05') end
  io.popen('kill -INT ' .. child):close()
  while not output():find('summary:', 1, true) and lm.sys.clock() < deadline do os.execute('sleep 0.05') end
  local s = output()
  os.remove(out)
  test.ok(s:find('stopped by Ctrl%-C after %d+ steps: sampling'), s)
  local sample = s:match('%-%-%- a sample[^\n]*\n(.-)\n%-%-%-')
  test.ok(sample and sample:sub(1, 3) == 'the' and utf8.len(sample) == 15, 'a sample of 3 + 12 characters: ' .. s)
end)

test.case('the schedule: linear warm-up to --lr, cosine down to --min-lr', function()
  local train = dofile(root .. 'examples/text_train.lua')
  local o = { lr = 1e-3, min_lr = 1e-4, warmup = 100, iters = 2000 }
  test.near(train.lr_factor(0, o), 0.01, 1e-12)
  test.near(train.lr_factor(99, o), 1, 1e-12)
  test.near(train.lr_factor(100, o), 1, 1e-12)
  test.near(train.lr_factor(1050, o), 0.55, 1e-12, 'halfway: (1 + 0.1) / 2')
  test.near(train.lr_factor(2000, o), 0.1, 1e-12)
end)

test.case('(the text file removed)', function() os.remove(path) end)
