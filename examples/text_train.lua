--[[
examples/text_train.lua — the training loop shared by char_gpt.lua and char_lstm.lua: options, the
corpus, the loop over random windows, periodic validation, the progress bar, the CSV log, live
curves, a clean stop on Ctrl-C and sampling. Written out in full so it can be read and copied (as
fashion_train.lua is for images); the two examples only define their model.

A model takes x (batch, T) int64 ids and returns logits (batch, T, vocab); the loss is the cross
entropy of each position's next character. Training draws --batch random windows of --block
characters from the first 90% of the text per step; validation averages the loss over --eval-iters
fixed batches of the last 10%. The learning rate warms up linearly over --warmup steps to --lr, then
decays as a cosine to --min-lr at --iters (AdamW, weight decay 0.1 on the matrices only, gradients
clipped to norm 1.0). Sampling: the prompt's ids, then one character at a time from the softmax of
the last position's logits / --temperature, restricted to the --top-k most likely (0: all), the
context cut to the last --block characters.

Options: --corpus tang|fortunes|fortunes-zh|song  --text FILE (instead of a corpus)
         --iters N  --batch N  --block N  --lr X  --min-lr X  --warmup N  --dropout P  --seed N
         --layers N  --heads N  --width N  (the model's size; --heads for the GPT only)
         --eval-every N  --eval-iters N  --log FILE.csv  --log-every N  --threads N  --quiet
         --viz (live loss curves)  --viz=attention (the GPT only: its attention over the prompt's
           line, every layer and head, redrawn every --log-every steps while it trains)
         --prompt TEXT  --length N (characters to sample, 0: none)  --temperature X  --top-k N
The CSV log has the columns step,epoch,loss,accuracy,lr,seconds,split (MetricsLog's): a 'train' row
every --log-every steps (the mean loss since the previous row) and a 'val' row at each validation.
The last line is a summary the benchmark reads: `summary: iters=N ms_per_iter=X train_loss=X
val_loss=X` (ms_per_iter counts the training steps only, not validation or sampling).
]]
local M = {}

local function usage(name, d)
  return string.format([[usage: lumen examples/%s.lua [--corpus tang|fortunes|fortunes-zh|song | --text FILE]
         [--iters N] [--batch N] [--block N] [--lr X] [--min-lr X] [--warmup N] [--dropout P] [--seed N]
         [--layers N] [--heads N] [--width N] [--eval-every N] [--eval-iters N]
         [--log FILE.csv] [--log-every N] [--viz | --viz=attention] [--threads N] [--quiet]
         [--prompt TEXT] [--length N] [--temperature X] [--top-k N]
defaults: --corpus %s --iters %d --batch %d --block %d --lr %g --min-lr %g --warmup %d --dropout %g
          --layers %d%s --width %d --eval-every %d --eval-iters %d --length %d --temperature %g --top-k %d --seed %d]],
    name, d.corpus, d.iters, d.batch, d.block, d.lr, d.min_lr, d.warmup, d.dropout, d.layers,
    d.heads and (' --heads ' .. d.heads) or '', d.width, d.eval_every, d.eval_iters, d.length, d.temperature,
    d.top_k, d.seed)
end

-- option -> field, kind: 'int' (positive), 'int0' (>= 0), 'pos' (a number > 0), 'prob' ([0, 1)), 'str'
local OPTIONS = {
  ['--corpus'] = { 'corpus', 'str' }, ['--text'] = { 'text', 'str' }, ['--iters'] = { 'iters', 'int' },
  ['--batch'] = { 'batch', 'int' }, ['--block'] = { 'block', 'int' }, ['--lr'] = { 'lr', 'pos' },
  ['--min-lr'] = { 'min_lr', 'num0' }, ['--warmup'] = { 'warmup', 'int0' }, ['--dropout'] = { 'dropout', 'prob' },
  ['--seed'] = { 'seed', 'int0' }, ['--layers'] = { 'layers', 'int' }, ['--heads'] = { 'heads', 'int' },
  ['--width'] = { 'width', 'int' }, ['--eval-every'] = { 'eval_every', 'int' },
  ['--eval-iters'] = { 'eval_iters', 'int' }, ['--log'] = { 'log', 'str' }, ['--log-every'] = { 'log_every', 'int' },
  ['--threads'] = { 'threads', 'int' }, ['--prompt'] = { 'prompt', 'str' }, ['--length'] = { 'length', 'int0' },
  ['--temperature'] = { 'temperature', 'pos' }, ['--top-k'] = { 'top_k', 'int0' },
}
local KIND = { int = 'positive integer', int0 = 'integer >= 0', pos = 'positive number', num0 = 'number >= 0',
  prob = 'number in [0, 1)' }

--- The command line (arg[1..n]) as a table; errors say what is wrong and show the usage.
function M.parse(argv, name, defaults)
  local o = {}
  for k, v in pairs(defaults) do o[k] = v end
  o.log_every = o.log_every or 10
  local i = 1
  while argv and argv[i] do
    local a = argv[i]
    local key, inline = a:match('^(%-%-[%w-]+)=(.*)$')
    if key then a = key end
    local spec = OPTIONS[a]
    if spec and not (a == '--heads' and not defaults.heads) then
      local v
      if inline then v = inline else
        i = i + 1
        v = argv[i]
        if v == nil then error(name .. ': ' .. a .. ' needs a value\n' .. usage(name, defaults), 0) end
      end
      local field, kind = spec[1], spec[2]
      if kind ~= 'str' then
        local n = tonumber(v)
        local ok = n and n == n and ((kind == 'int' and math.tointeger(n) and n >= 1) or
          (kind == 'int0' and math.tointeger(n) and n >= 0) or (kind == 'pos' and n > 0) or
          (kind == 'num0' and n >= 0) or (kind == 'prob' and n >= 0 and n < 1))
        if not ok then
          error(string.format('%s: %s needs a %s, got %s\n%s', name, a, KIND[kind], v, usage(name, defaults)), 0)
        end
        v = (kind == 'int' or kind == 'int0') and math.tointeger(n) or n
      end
      o[field] = v
    elseif a == '--quiet' then
      o.quiet = true
    elseif a == '--viz' then
      if inline and inline ~= 'curves' and inline ~= 'attention' then
        error(name .. ": --viz shows 'curves' (the default) or 'attention', got '" .. inline .. "'\n" ..
          usage(name, defaults), 0)
      end
      o.viz = inline or 'curves'
      if o.viz == 'attention' and not defaults.heads then
        error(name .. ': --viz=attention: this model has no attention to show (the GPT has: char_gpt.lua); '
          .. 'use --viz for the loss curves', 0)
      end
    elseif a == '--help' or a == '-h' then
      print(usage(name, defaults))
      o.help = true
    else
      error(name .. ": unknown option '" .. a .. "'\n" .. usage(name, defaults), 0)
    end
    i = i + 1
  end
  if o.warmup >= o.iters and o.iters > 1 then o.warmup = o.iters // 10 end
  if o.min_lr > o.lr then
    error(string.format('%s: --min-lr %g is above --lr %g\n%s', name, o.min_lr, o.lr, usage(name, defaults)), 0)
  end
  return o
end

--- The learning-rate factor at step t (0-based, as LambdaLR counts): a linear warm-up over `warmup`
--- steps to 1, then a cosine from 1 to min_lr / lr at step `iters`.
function M.lr_factor(t, o)
  if t < o.warmup then return (t + 1) / o.warmup end
  local floor = o.min_lr / o.lr
  local span = math.max(1, o.iters - o.warmup)
  local p = math.min(1, (t - o.warmup) / span)
  return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p))
end

--- The mean cross entropy of model on x -> y (batch, T): logits (batch, T, V) against the next ids.
function M.loss(model, x, y)
  local logits = model(x)
  local B, T, V = logits:size(1), logits:size(2), logits:size(3)
  return F.cross_entropy(logits:reshape(B * T, V), y:reshape(B * T))
end

--- The mean loss over n fixed batches of ds (batch b): the same windows at every call (seeds 1..n).
function M.evaluate(model, ds, n, b)
  local was = model.training
  model:eval()
  local sum = 0
  lm.no_grad(function()
    for s = 1, n do
      local x, y = ds:batch(b, s)
      sum = sum + M.loss(model, x, y):item()
    end
  end)
  model:train(was)
  return sum / n
end

--- sample(model, ds, prompt, n [, {temperature=1, top_k=0, block=, seed=}]) -> the prompt followed by
--- n sampled characters. block: the longest context the model takes (the GPT's position table;
--- model.block_size when the model has one); a character of the prompt outside the vocabulary is an
--- error naming it.
function M.sample(model, ds, prompt, n, o)
  o = o or {}
  local fname = 'sample'
  if type(prompt) ~= 'string' or prompt == '' then
    error(fname .. ': the prompt must be a non-empty string, got ' .. (type(prompt) == 'string' and "''" or type(prompt)), 2)
  end
  local ok, ids = pcall(ds.encode, ds, prompt)
  if not ok then
    error(fname .. ': the prompt ' .. tostring(ids):gsub('^.-CharDataset:encode: ', ''):gsub('^the string ', ''), 2)
  end
  local temperature, top_k = o.temperature or 1, o.top_k or 0
  if not (type(temperature) == 'number' and temperature > 0) then
    error(fname .. ': temperature must be a positive number, got ' .. tostring(temperature), 2)
  end
  local limit = rawget(model, 'block_size') or model.block_size
  local block = o.block or limit
  if limit and block > limit then
    error(string.format('%s: a context of %d characters is longer than the position table of the model (block_size %d)',
      fname, block, limit), 2)
  end
  local V = ds.vocab_size
  if top_k > V then top_k = V end
  local gs, go = lm.rng_state()
  if o.seed then lm.manual_seed(o.seed) end
  local was = model.training
  model:eval()
  local out = ids:tolist()
  lm.no_grad(function()
    for _ = 1, n do
      local first = block and math.max(1, #out - block + 1) or 1
      local ctx = lm.tensor({ table.unpack(out, first) }, { dtype = 'int64' }):view(1, #out - first + 1)
      local logits = model(ctx)
      local last = logits[1][logits:size(2)]:double() / temperature -- (V)
      local idx
      if top_k > 0 and top_k < V then
        local vals, ix = last:topk(top_k)
        last, idx = vals, ix
      end
      local p = F.softmax(last, 1):cumsum(1)
      local u = lm.rand(1):double():item() * p[p:size(1)]:item()
      local k = math.min(p:size(1), p:lt(u):sum():item() + 1) -- the first index whose cumulated p >= u
      out[#out + 1] = idx and idx[k]:item() or k
    end
  end)
  model:train(was)
  if o.seed then lm.set_rng_state(gs, go) end
  return ds:decode(out)
end

local function commas(n)
  return (tostring(n):reverse():gsub('(%d%d%d)', '%1,'):reverse():gsub('^,', ''))
end

--- The text to train on: --text FILE or --corpus NAME (a TextFile).
local function load_text(o)
  if o.text then return data.TextFile(o.text) end
  return data.Corpus(o.corpus)
end

--- Trains spec.make_model(o, vocab_size) as the command line says, then samples. Leaves model,
--- optimizer, train_set, val_set, history and sample (a function: sample(prompt, n)) as globals
--- (for `lumen -i`). Returns a summary table {iters=, ms_per_iter=, train_loss=, val_loss=, text=}.
function M.run(spec)
  local name, defaults = spec.name, spec.defaults
  local o = M.parse(spec.args, name, defaults)
  if o.help then return end
  local say = o.quiet and function() end or print
  if o.threads then lm.set_num_threads(o.threads) end
  lm.manual_seed(o.seed)
  if o.viz then
    viz.clear()
    if o.viz == 'curves' and not viz.state().scene then
      viz.scene('curves')
      viz.redraw()
    end
  end
  local t0 = lm.sys.clock()
  local tf = load_text(o)
  train_set = data.CharDataset(tf, { block_size = o.block, seed = o.seed })
  val_set = data.CharDataset(tf, { block_size = o.block, split = 'val' })
  -- the prompt is checked before training, not after it
  local prompt = o.prompt or tf.text:match(utf8.charpattern)
  if o.length > 0 then
    local ok, err = pcall(train_set.encode, train_set, prompt)
    if not ok then
      error(name .. ': --prompt: ' .. tostring(err):gsub('^.-CharDataset:encode: ', ''), 0)
    end
  end
  say(string.format('%s: %d characters (%d for training, %d for validation), a vocabulary of %d, loaded in %.2f s ' ..
    '(CPU, %d threads)', tostring(tf.name or tf.path), tf.chars, train_set.data:numel(), val_set.data:numel(),
    train_set.vocab_size, lm.sys.clock() - t0, lm.get_num_threads()))
  model = spec.make_model(o, train_set.vocab_size)
  local decay, no_decay = {}, {}
  for _, p in ipairs(model:parameters()) do
    if p:dim() >= 2 then decay[#decay + 1] = p else no_decay[#no_decay + 1] = p end
  end
  optimizer = optim.AdamW({ { params = decay, weight_decay = 0.1 }, { params = no_decay, weight_decay = 0 } },
    { lr = o.lr, betas = { 0.9, 0.95 } })
  local scheduler = optim.lr_scheduler.LambdaLR(optimizer, function(t) return M.lr_factor(t, o) end)
  local n_params = 0
  for _, p in ipairs(model:parameters()) do n_params = n_params + p:numel() end
  say(tostring(model))
  say(string.format('%s parameters; AdamW lr %g -> %g (warm-up %d), batch %d, block %d, %d iterations, seed %d',
    commas(n_params), o.lr, o.min_lr, o.warmup, o.batch, o.block,
    o.iters, o.seed))
  -- --viz=attention: the model's weights over one line (of the prompt, else of the validation
  -- text: the first of 10 characters or more), at most --block and 32 characters, redrawn every
  -- --log-every steps
  local show_attention
  if o.viz == 'attention' then
    local text = o.prompt or val_set:decode(val_set.data:narrow(1, 1, math.min(val_set.data:numel(), 2000)))
    local line
    for l in text:gmatch('[^\n]*%S[^\n]*') do -- the first line of 10 characters or more, else the first
      line = line or l
      if utf8.len(l) and utf8.len(l) >= 10 then line = l break end
    end
    line = line or text
    local ids = train_set:encode(line)
    ids = ids:narrow(1, 1, math.min(ids:numel(), o.block, 32)):view(1, -1)
    local tokens = {}
    for i = 1, ids:size(2) do tokens[i] = train_set:decode(ids[1]:narrow(1, i, 1)) end
    show_attention = function(step)
      local w = lm.no_grad(spec.attention, model, ids)
      viz.show('attention', { weights = w, tokens = tokens, causal = true,
        source = string.format("computed by Lumen (CPU): %s's weights after step %d of %d", name, step, o.iters) })
    end
    show_attention(0)
  end
  local log = o.log and nn.utils.MetricsLog(o.log)
  history = {}
  local params = model:parameters()
  local guard <close> = nn.utils.catch_interrupt()
  local bar = nn.utils.Progress { total = o.iters, title = name, silent = o.quiet }
  local step, stopped, train_time = 0, false, 0
  local row_loss, row_n, last_val = 0, 0, nil
  local start = lm.sys.clock()
  local function validate()
    local v = M.evaluate(model, val_set, o.eval_iters, o.batch)
    last_val = v
    history[#history + 1] = { step = step, val_loss = v }
    if log then log:write { step = step, loss = v, lr = optimizer.param_groups[1].lr,
      seconds = lm.sys.clock() - start, split = 'val' } end
    if o.viz then viz.plot('val/loss', step, v) end
    return v
  end
  model:train()
  for it = 1, o.iters do
    local ts = lm.sys.clock()
    local x, y = train_set:batch(o.batch)
    optimizer:zero_grad()
    local loss = M.loss(model, x, y)
    loss:backward()
    nn.utils.clip_grad_norm_(params, 1.0)
    optimizer:step()
    scheduler:step()
    local l = loss:item()
    train_time = train_time + (lm.sys.clock() - ts)
    step = it
    bar:update(o.batch, l)
    row_loss, row_n = row_loss + l, row_n + 1
    if step % o.log_every == 0 then
      if log then log:write { step = step, loss = row_loss / row_n, lr = optimizer.param_groups[1].lr,
        seconds = lm.sys.clock() - start, split = 'train' } end
      if o.viz then viz.plot('train/loss', step, row_loss / row_n) end
      if show_attention then show_attention(step) end
      row_loss, row_n = 0, 0
    end
    if guard:requested() then stopped = true; break end
    if step % o.eval_every == 0 and step < o.iters then
      local v = validate()
      if bar.tty and not o.quiet then io.write('\n') end
      say(string.format('step %d: train loss %.4f, val loss %.4f', step, bar.loss_sum / math.max(1, bar.loss_n), v))
      bar.loss_sum, bar.loss_n = 0, 0
    end
  end
  local train_loss = bar:done()
  guard:close()
  if stopped then
    print(string.format('\nstopped by Ctrl-C after %d steps: sampling from the model as it is', step))
  end
  local val = step > 0 and validate() or M.evaluate(model, val_set, o.eval_iters, o.batch)
  if log then log:close() end
  say(string.format('after %d steps: val loss %.4f (%.1f ms per step, %.1f s of training)', step, val,
    1000 * train_time / math.max(1, step), train_time))
  sample = function(p, n, opts)
    opts = opts or {}
    return M.sample(model, train_set, p or prompt, n or o.length, { temperature = opts.temperature or o.temperature,
      top_k = opts.top_k or o.top_k, block = opts.block or o.block, seed = opts.seed })
  end
  local text
  if o.length > 0 then
    text = M.sample(model, train_set, prompt, o.length, { temperature = o.temperature, top_k = o.top_k, block = o.block })
    say(string.format('--- a sample (temperature %g, top-k %d) ---', o.temperature, o.top_k))
    say(text)
    say('---')
  end
  local summary = { iters = step, ms_per_iter = 1000 * train_time / math.max(1, step), train_loss = train_loss,
    val_loss = val, text = text, stopped = stopped }
  print(string.format('summary: iters=%d ms_per_iter=%.3f train_loss=%.4f val_loss=%.4f', step, summary.ms_per_iter,
    train_loss or 0 / 0, val))
  return summary
end

return M
