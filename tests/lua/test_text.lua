-- text data: data.TextFile, data.CharDataset (UTF-8 tokens: a Chinese character is one; the
-- vocabulary in code-point order; encode/decode round trips; the train/val split without overlap;
-- batches that are windows of the text with y one character on, gathered by tensor ops; seeded
-- batches reproducible; the DataLoader), the bad inputs (an empty or binary file, invalid UTF-8, a
-- character outside the vocabulary) and the Debian corpora (fortunes, fortunes-zh) when installed.
local test = require 'lumen.test'

local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p '" .. tmp .. "'")

local function write(name, bytes)
  local f = assert(io.open(tmp .. '/' .. name, 'wb'))
  f:write(bytes)
  f:close()
  return tmp .. '/' .. name
end

local MIXED = 'Hello, 世界! 床前明月光，疑是地上霜。hello world 举头望明月，低头思故乡。'

-- the characters of s, one per UTF-8 sequence
local function chars(s)
  local out = {}
  for ch in s:gmatch(utf8.charpattern) do out[#out + 1] = ch end
  return out
end

test.case('UTF-8 tokens: a Chinese character is one; the vocabulary sorted by code point', function()
  local ds = data.CharDataset(MIXED, { block_size = 4, split = 'all' })
  local seen, want = {}, {}
  for _, ch in ipairs(chars(MIXED)) do
    if not seen[ch] then seen[ch] = true; want[#want + 1] = ch end
  end
  table.sort(want, function(a, b) return utf8.codepoint(a) < utf8.codepoint(b) end)
  test.eq(ds.vocab, want)
  test.eq(ds.vocab_size, #want)
  test.eq(ds.vocab[1], ' ', 'the space comes first (U+0020)')
  test.eq(ds.vocab[ds.vocab_size], '，', 'the fullwidth comma last (U+FF0C)')
  test.eq(ds.data:numel(), utf8.len(MIXED), 'one token per character, not per byte')
  test.ok(ds.data:numel() < #MIXED)
  local ids = ds:encode('世界')
  test.eq(ids:dtype(), 'int64')
  test.eq(ids:numel(), 2)
  test.eq(ds.vocab[ids[1]:item()], '世')
  test.eq(ds.vocab[ids[2]:item()], '界')
  -- round trips
  for _, s in ipairs({ MIXED, 'hello', '床前明月光', '', 'H' }) do
    test.eq(ds:decode(ds:encode(s)), s, 'decode(encode(s)) for ' .. s)
  end
  test.eq(ds:encode('Hello'):tolist(), { ds.stoi.H, ds.stoi.e, ds.stoi.l, ds.stoi.l, ds.stoi.o })
  test.eq(ds:decode({ ds.stoi['床'], ds.stoi['光'] }), '床光', 'a table of ids')
  test.eq(ds:decode(ds.stoi['月']), '月', 'one id')
  test.eq(ds:decode(ds:encode('明月'):int()), '明月', 'int32 ids')
  local rows = ds:decode(lm.stack({ ds:encode('明月'), ds:encode('故乡') }))
  test.eq(rows, { '明月', '故乡' }, 'a 2-D batch decodes to one string per row')
  test.eq(ds:decode(ds.data), MIXED, 'the whole text')
  -- a TextFile gives the same data set
  local tf = data.TextFile(write('mixed.txt', MIXED))
  test.eq(#tf, utf8.len(MIXED))
  test.eq(tf.bytes, #MIXED)
  test.eq(tf.text, MIXED)
  local ds2 = data.CharDataset(tf, { block_size = 4, split = 'all' })
  test.eq(ds2.vocab, ds.vocab)
  test.eq(ds2.data:tolist(), ds.data:tolist())
  test.ok(tostring(ds2):find('vocabulary of ' .. #want, 1, true))
end)

test.case('the split: train the first 90%, val the last 10%, no overlap', function()
  local text = string.rep('abcdefghij', 9) .. '世界和平。一二三四五'
  local n = utf8.len(text)
  local all = data.CharDataset(text, { block_size = 3, split = 'all' })
  local tr = data.CharDataset(text, { block_size = 3 })
  local va = data.CharDataset(text, { block_size = 3, split = 'val' })
  test.eq(tr.split, 'train', 'train by default')
  test.eq(tr.vocab, va.vocab, 'one vocabulary for both splits (from the whole text)')
  test.eq(tr.data:numel() + va.data:numel(), n)
  test.eq(va.data:numel(), 10)
  test.eq(tr.offset, 0)
  test.eq(va.offset, tr.data:numel())
  test.eq(tr:decode(tr.data) .. va:decode(va.data), text, 'train then val is the text')
  test.eq(va:decode(va.data), '世界和平。一二三四五')
  test.eq(all.data:tolist(), lm.cat({ tr.data, va.data }):tolist())
  -- every window of a split, and its targets, stay inside the split
  local _, last_y = tr:get(#tr)
  test.eq(tr:decode(last_y):sub(-1), tr:decode(tr.data):sub(-1), 'the last target is the last train character')
  test.eq(#tr, tr.data:numel() - 3)
  local x, y = va:batch(200, 1)
  test.ok(x:min():item() >= 1)
  local val_ids = {}
  for _, id in ipairs(va.data:tolist()) do val_ids[id] = true end
  for _, id in ipairs(y:view(-1):tolist()) do test.ok(val_ids[id], 'val targets come from the val text') end
  local train_ids = {}
  for _, id in ipairs(lm.cat({ tr:batch(500, 2) }):view(-1):tolist()) do train_ids[id] = true end
  for _, ch in ipairs(chars('世界和平。一二三四五')) do
    test.ok(not train_ids[tr.stoi[ch]], 'no val character ' .. ch .. ' in a train batch')
  end
  local q = data.CharDataset(text, { block_size = 3, split = 'val', val_fraction = 0.2 })
  test.eq(q.data:numel(), 20)
end)

test.case('batches: windows of the text, y = x one character on, gathered as tensors', function()
  local text = MIXED .. ' ' .. MIXED:reverse():gsub('[\128-\255]', '') .. ' 海上生明月，天涯共此时。'
  local ds = data.CharDataset(text, { block_size = 7, split = 'all' })
  local decoded = chars(ds:decode(ds.data))
  local function window(s, len) return table.concat(decoded, '', s, s + len - 1) end
  local x, y = ds:batch(16, 123)
  test.eq(x:shape(), { 16, 7 })
  test.eq(y:shape(), { 16, 7 })
  test.eq(x:dtype(), 'int64')
  test.eq(y:dtype(), 'int64')
  test.eq(x:narrow(2, 2, 6):tolist(), y:narrow(2, 1, 6):tolist(), 'y is x shifted by one')
  local xs, ys = ds:decode(x), ds:decode(y)
  for r = 1, 16 do
    -- find the window's start in the text: x must be the characters there, y the ones after
    local found
    for s = 1, #decoded - 7 do
      if window(s, 7) == xs[r] and window(s + 1, 7) == ys[r] then found = s; break end
    end
    test.ok(found, 'row ' .. r .. ' is a window of the text: ' .. xs[r])
  end
  -- ds[i] and ds:get(i): window i
  local a, b = ds:get(5)
  test.eq(ds:decode(a), window(5, 7))
  test.eq(ds:decode(b), window(6, 7))
  test.eq(ds:decode(ds[#ds][2]), window(#ds + 1, 7), 'the last window ends at the last character')
  test.raises(function() return ds[#ds + 1] end, 'CharDataset: index ' .. (#ds + 1) .. ' is out of range 1..' .. #ds)
  test.raises(function() return ds:get(0) end, 'out of range')
  -- the DataLoader: every window once per epoch, gathered by ds:_take
  local small = data.CharDataset('abcdefghijklmnop', { block_size = 4, split = 'all' })
  local dl = data.DataLoader(small, { batch_size = 5, shuffle = true, seed = 3 })
  test.eq(#dl, 3)
  local starts = {}
  for bx, by in dl:iter() do
    test.eq(bx:size(2), 4)
    test.eq(bx:narrow(2, 2, 3):tolist(), by:narrow(2, 1, 3):tolist())
    for _, s in ipairs(small:decode(bx)) do starts[#starts + 1] = s:byte(1) - 96 end
  end
  table.sort(starts)
  test.eq(starts, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, 'each window once')
end)

test.case('determinism: seeded batches repeat, and leave the global generator alone', function()
  local ds = data.CharDataset(MIXED, { block_size = 5, split = 'all' })
  local x1, y1 = ds:batch(8, 42)
  lm.manual_seed(1)
  local r1 = lm.rand(3):tolist()
  lm.manual_seed(1)
  local x2, y2 = ds:batch(8, 42)
  test.eq(lm.rand(3):tolist(), r1, 'a seeded batch does not move Lumen\'s generator')
  test.eq(x1:tolist(), x2:tolist())
  test.eq(y1:tolist(), y2:tolist())
  local x3 = ds:batch(8, 43)
  test.ok(not (x3:tolist()[1][1] == x1:tolist()[1][1] and x3:tolist()[2][1] == x1:tolist()[2][1]
    and x3:tolist()[3][1] == x1:tolist()[3][1]), 'another seed, other windows')
  -- seed= at construction: the data set's own stream, the same sequence every time
  local function seq(seed)
    local d = data.CharDataset(MIXED, { block_size = 5, split = 'all', seed = seed })
    local out = {}
    for i = 1, 3 do out[i] = d:batch(4):tolist() end
    return out
  end
  local s1 = seq(7)
  test.eq(seq(7), s1)
  local function flat(t) local o = {} for _, r in ipairs(t) do o[#o + 1] = table.concat(r, ',') end return table.concat(o, ';') end
  test.ok(flat(s1[1]) ~= flat(s1[2]) or flat(s1[2]) ~= flat(s1[3]), 'successive batches differ')
  -- without a seed: Lumen's generator (lm.manual_seed)
  lm.manual_seed(5)
  local u = ds:batch(6):tolist()
  lm.manual_seed(5)
  test.eq(ds:batch(6):tolist(), u)
end)

test.case('bad input: empty, binary or non-UTF-8 files, unknown characters, options', function()
  test.raises(function() data.TextFile(write('empty.txt', '')) end,
    "data.TextFile: '" .. tmp .. "/empty.txt' is empty: a corpus needs text")
  test.raises(function() data.TextFile(write('bin.dat', 'abc\0\1\2')) end,
    "data.TextFile: '" .. tmp .. "/bin.dat' is not text: a NUL byte at byte offset 3 (binary data?)")
  test.raises(function() data.TextFile(write('latin1.txt', 'caf\xe9 au lait')) end,
    "data.TextFile: '" .. tmp .. "/latin1.txt' is not UTF-8 text: byte 0xE9 at byte offset 3")
  test.raises(function() data.TextFile(write('png.bin', '\x89PNG\r\n')) end, 'byte 0x89 at byte offset 0')
  test.raises(function() data.TextFile(tmp .. '/nowhere.txt') end,
    "data.TextFile: cannot read '" .. tmp .. "/nowhere.txt': ")
  test.raises(function() data.TextFile(tmp) end, 'not a regular file')
  test.raises(function() data.TextFile(tmp, { limit_bytes = 10 }) end, 'not a regular file')
  test.raises(function() data.TextFile(42) end, 'data.TextFile: path must be a non-empty string, got 42')
  test.raises(function() data.TextFile(write('a.txt', 'abc'), { limit = 2 }) end, "data.TextFile: unknown option 'limit'")
  -- limit_bytes: cut back to a whole character
  local p = write('zh.txt', '床前明月光')
  test.eq(data.TextFile(p, { limit_bytes = 7 }).text, '床前', '7 bytes hold two whole characters')
  test.eq(data.TextFile(p, { limit_bytes = 6 }).text, '床前')
  test.eq(data.TextFile(p, { limit_bytes = 100 }).text, '床前明月光')
  test.raises(function() data.TextFile(p, { limit_bytes = 0 }) end, 'option limit_bytes must be a positive integer, got 0')
  -- CharDataset
  test.raises(function() data.CharDataset('', { block_size = 2 }) end, 'data.CharDataset: the text is empty')
  test.raises(function() data.CharDataset('ab\0cd', { block_size = 2 }) end, 'a NUL byte at byte offset 2')
  test.raises(function() data.CharDataset('ab\xffcd', { block_size = 2 }) end, 'byte 0xFF at byte offset 2')
  test.raises(function() data.CharDataset(42, { block_size = 2 }) end, 'argument 1 must be a string or a data.TextFile, got 42')
  test.raises(function() data.CharDataset('abcdef', {}) end, 'data.CharDataset: option block_size is required')
  test.raises(function() data.CharDataset('abcdef', { block_size = 0 }) end,
    'option block_size (the characters of a window) must be a positive integer, got 0')
  test.raises(function() data.CharDataset('abcdef', { block_size = 2, split = 'test' }) end,
    "option split must be 'train', 'val' or 'all', got 'test'")
  test.raises(function() data.CharDataset('abcdef', { block_size = 2, val_fraction = 1 }) end,
    'option val_fraction must be a number in (0, 1), got 1')
  test.raises(function() data.CharDataset(string.rep('a', 50), { block_size = 8, split = 'val' }) end,
    'data.CharDataset: the val split holds 5 characters, fewer than block_size + 1 = 9')
  test.raises(function() data.CharDataset('abc', { block_size = 3, split = 'all' }) end,
    'the all split holds 3 characters, fewer than block_size + 1 = 4')
  local ds = data.CharDataset('hello 世界', { block_size = 2, split = 'all' })
  test.raises(function() ds:encode('hello 世人') end,
    "CharDataset:encode: character '人' (U+4EBA) at position 8 is not in the vocabulary (the 7 characters of the text")
  test.raises(function() ds:encode('he\tllo') end, "character '\\t' (U+0009) at position 3 is not in the vocabulary")
  test.raises(function() ds:encode('h\xe4') end, 'CharDataset:encode: the string is not UTF-8 text: byte 0xE4 at byte offset 1')
  test.raises(function() ds:encode(5) end, 'CharDataset:encode: expected a string, got 5')
  test.raises(function() ds:decode({ 1, 9 }) end, 'CharDataset:decode: id 9 at position 2 is not a character id (1..7)')
  test.raises(function() ds:decode(lm.tensor({ 0 })) end, 'id 0 at position 1 is not a character id (1..7)')
  test.raises(function() ds:decode(lm.tensor({ 1.5 })) end, 'CharDataset:decode: expected integer ids, got a float32 tensor')
  test.raises(function() ds:batch(0) end, 'CharDataset:batch: batch_size must be a positive integer, got 0')
  test.raises(function() ds:batch(2, 1.5) end, 'CharDataset:batch: seed must be an integer, got 1.5')
  -- corpora
  test.raises(function() data.Corpus('klingon') end,
    "data.Corpus: unknown corpus 'klingon' (expected fortunes, fortunes-zh, song, tang)")
  test.raises(function() data.Corpus('tang', { root = tmp }) end,
    "data.Corpus: the corpus 'tang' (the 300 Tang poems (唐诗三百首)) needs Debian's fortunes-zh: '" .. tmp ..
    "/tang300' was not found (apt-get install fortunes-zh; ./run.sh and ./test.sh install it)")
  test.raises(function() data.Corpus('fortunes', { root = tmp }) end,
    "needs Debian's fortunes: '" .. tmp .. "/art' was not found (apt-get install fortunes;")
  write('tang300', '')
  test.raises(function() data.Corpus('tang', { root = tmp }) end, "data.Corpus: '" .. tmp .. "/tang300' is empty")
end)

test.case('a fortune file: records, colour escapes and overstrikes', function()
  local dir = tmp .. '/fortunes'
  os.execute("mkdir -p '" .. dir .. "'")
  local f = assert(io.open(dir .. '/tang300', 'wb'))
  f:write('\27[32m《静夜思》\27[m\n\27[33m作者：李白\27[m\n床前明月光，疑是地上霜。\n%\n',
    '\27[;\27[34;1m《登鹳雀楼》\27[m\n白日依山尽。\n%\n')
  f:close()
  local c = data.Corpus('tang', { root = dir })
  test.eq(c.text, '《静夜思》\n作者：李白\n床前明月光，疑是地上霜。\n\n《登鹳雀楼》\n白日依山尽。\n')
  test.eq(c.records, 2)
  test.eq(c.name, 'tang')
  test.eq(c.package, 'fortunes-zh')
  f = assert(io.open(dir .. '/song100', 'wb'))
  f:write('An *___\8\8\8and* a _\8b.\7\n%\nfl\'\8echettes\n')
  f:close()
  test.eq(data.Corpus('song', { root = dir }).text, 'An *and* a b.\n\nflechettes\n')
end)

test.case('the Debian corpora (fortunes, fortunes-zh)', function()
  if not lm.sys.isfile('/usr/share/games/fortunes/tang300') then
    return test.skip('fortunes-zh is not installed (apt-get install fortunes-zh; ./test.sh installs it)')
  end
  local tang = data.Corpus('tang')
  test.ok(tang.text:find('床前明月光，疑是地上霜。', 1, true), 'the Quiet Night Thought of Li Bai')
  test.ok(tang.text:find('《夜思》\n作者：李白\n床前明月光', 1, true), 'title, author and poem (this edition titles it 夜思)')
  test.ok(not tang.text:find('[\0-\8\11-\31\127]'), 'no escape or other control byte left')
  test.ok(tang.records > 300)
  local ds = data.CharDataset(tang, { block_size = 32 })
  test.ok(ds.vocab_size > 2000, 'thousands of Chinese characters, each one token')
  test.eq(ds.stoi['床'] ~= nil, true)
  test.eq(ds:decode(ds:encode('床前明月光')), '床前明月光')
  test.eq(#ds:encode('床前明月光'):tolist(), 5)
  local zh = data.Corpus('fortunes-zh')
  test.ok(zh.chars > 500000)
  test.ok(not zh.text:find('[\0-\8\11-\31\127]'), 'no escape left in the Chinese fortunes')
  if not lm.sys.isfile('/usr/share/games/fortunes/computers') then
    return test.skip('fortunes is not installed (apt-get install fortunes; ./test.sh installs it)')
  end
  local en = data.Corpus('fortunes', { limit_bytes = 200000 })
  test.ok(en.bytes <= 200000 and en.bytes > 190000)
  test.ok(not en.text:find('[\0-\8\11-\31\127]'), 'no backspace, bell or escape left')
  local full = data.Corpus('fortunes')
  test.ok(full.records > 10000)
  test.ok(full.text:find('A day for firm decisions!!!!!  Or is it?', 1, true))
  local tr = data.CharDataset(full, { block_size = 64 })
  local va = data.CharDataset(full, { block_size = 64, split = 'val' })
  test.ok(tr.vocab_size < 200, 'English: a small vocabulary')
  test.eq(tr.data:numel() + va.data:numel(), full.chars)
  local x, y = tr:batch(12, 1)
  test.eq(x:shape(), { 12, 64 })
  test.eq(x:narrow(2, 2, 63):tolist(), y:narrow(2, 1, 63):tolist())
end)

test.case('cleanup', function() os.execute("rm -rf '" .. tmp .. "'") end)
