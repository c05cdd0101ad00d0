--[[
lumen.data.text — text data (part of `require 'data'`): data.TextFile, data.CharDataset and the
named corpora of data.Corpus, as data.FashionMNIST is for images.

Text is UTF-8 and a token is one character (one code point: a Chinese character is one token, not
three bytes). data.TextFile(path) reads a file once and refuses what is not text: an empty file, a
NUL byte (a binary file) or an invalid UTF-8 sequence, each named with its byte offset.
data.CharDataset(text, {block_size=}) builds the vocabulary (the sorted unique characters of the
whole text, ids 1-based), encodes the text once into an int64 tensor and keeps the split asked
for: the first 90% of the characters (train) or the last 10% (val), so no window of one split
reads a character of the other. A sample is a window of block_size characters and its targets,
the same window one character on: ds:batch(n) draws n window starts and gathers x and y with one
index_select each (the indices are starts + 1..block_size, built by tensor ops: no Lua per
element); the DataLoader gathers its batches the same way (ds:_take).
data.Corpus(name) reads Debian's fortune files (fortunes, fortunes-min, fortunes-zh, installed
by ./run.sh and ./test.sh through tools/deps.sh): the %-separated records joined by blank lines,
the terminal colour escapes of fortunes-zh and the backspace overstrikes of the English files
removed. See docs/nn.md. Read next: lumen/data/init.lua.
]]
local lm = require 'lumen'
local check = require 'lumen.nn.check'
local raise, describe = check.raise, check.describe
local function options(name, opts, allowed) return check.options(opts, allowed, name) end

local M = {}

-- ---------------------------------------------------------------- UTF-8 text checks

--- A character for messages: itself when printable, an escape for a control character, and its
--- code point.
local function show_char(ch)
  local cp = utf8.codepoint(ch)
  local names = { [9] = '\\t', [10] = '\\n', [13] = '\\r' }
  local shown = names[cp] or (cp < 32 or cp == 127) and string.format('\\x%02X', cp) or ch
  return string.format("'%s' (U+%04X)", shown, cp)
end

--- Raises unless s is non-empty UTF-8 text without NUL bytes; what names s in the message.
local function check_text(fname, what, s)
  if #s == 0 then raise(string.format('%s: %s is empty: a corpus needs text', fname, what)) end
  local nul = s:find('\0', 1, true)
  if nul then
    raise(string.format('%s: %s is not text: a NUL byte at byte offset %d (binary data?)', fname, what, nul - 1))
  end
  local n, bad = utf8.len(s)
  if not n then
    raise(string.format('%s: %s is not UTF-8 text: byte 0x%02X at byte offset %d does not start or continue a ' ..
      'valid UTF-8 character (binary data, or another encoding?)', fname, what, s:byte(bad), bad - 1))
  end
  return n
end

--- s cut back to a character boundary when its end holds an incomplete UTF-8 sequence.
local function trim_partial(s)
  for back = 0, math.min(3, #s - 1) do
    local p = #s - back
    local b = s:byte(p)
    if b < 0x80 then return s end
    if b >= 0xC0 then -- a lead byte: the length it announces
      local len = b >= 0xF0 and 4 or b >= 0xE0 and 3 or 2
      if p + len - 1 > #s then return s:sub(1, p - 1) end
      return s
    end
  end
  return s
end

-- ---------------------------------------------------------------- TextFile

local TextFile = { __name = 'TextFile' }
TextFile.__index = TextFile
M.TextFile = setmetatable(TextFile, {
  __call = function(cls, ...) return cls.new(...) end,
  __tostring = function() return 'class data.TextFile' end,
})

local function new_textfile(text, path, chars, extra)
  local tf = { text = text, path = path, bytes = #text, chars = chars }
  for k, v in pairs(extra or {}) do tf[k] = v end
  return setmetatable(tf, TextFile)
end

--- data.TextFile(path [, {limit_bytes=}]) -> tf: tf.text (the whole text), tf.path, tf.bytes,
--- tf.chars (#tf too); limit_bytes reads only the first bytes, cut back to a whole character.
function TextFile.new(path, o)
  local fname = 'data.TextFile'
  if type(path) ~= 'string' or path == '' then raise(fname .. ': path must be a non-empty string, got ' .. describe(path)) end
  o = options(fname, o, { limit_bytes = true })
  local limit = o.limit_bytes
  if limit ~= nil and (math.type(limit) ~= 'integer' or limit < 1) then
    raise(fname .. ': option limit_bytes must be a positive integer, got ' .. describe(limit))
  end
  local text, why
  if limit then
    local ok, what = lm.sys.isfile(path)
    if not ok then
      raise(string.format("%s: cannot read '%s': %s", fname, path, what == 'missing' and 'no such file' or
        ('it is ' .. what .. ', not a regular file')))
    end
    local f, err = io.open(path, 'rb')
    if not f then raise(string.format("%s: cannot read '%s': %s", fname, path, err)) end
    text = f:read(limit) or ''
    f:close()
    if #text == limit then text = trim_partial(text) end
  else
    text, why = lm.sys.read_file(path)
    if not text then raise(string.format("%s: cannot read '%s': %s", fname, path, why)) end
  end
  local chars = check_text(fname, "'" .. path .. "'", text)
  return new_textfile(text, path, chars)
end

function TextFile:__len() return self.chars end

function TextFile:__tostring()
  return string.format("TextFile(%s: %d bytes, %d characters)", self.name and ("corpus '" .. self.name .. "'") or
    self.path and ("'" .. self.path .. "'") or 'a string', self.bytes, self.chars)
end

-- ---------------------------------------------------------------- the vocabulary and encoding

--- The vocabulary of s (sorted by code point), its map char -> 1-based id, and s encoded (int64).
local function build_vocab(s)
  local seen, vocab = {}, {}
  for ch in s:gmatch(utf8.charpattern) do
    if not seen[ch] then seen[ch] = true; vocab[#vocab + 1] = ch end
  end
  local cp = {}
  for _, ch in ipairs(vocab) do cp[ch] = utf8.codepoint(ch) end
  table.sort(vocab, function(a, b) return cp[a] < cp[b] end) -- by code point, not strcoll's locale order
  local stoi = {}
  for i, ch in ipairs(vocab) do stoi[ch] = i end
  local ids, n = {}, 0
  for ch in s:gmatch(utf8.charpattern) do n = n + 1; ids[n] = stoi[ch] end
  return vocab, stoi, lm.tensor(ids, { dtype = 'int64' })
end

-- ---------------------------------------------------------------- CharDataset

local CharDataset = { __name = 'CharDataset' }
M.CharDataset = setmetatable(CharDataset, {
  __call = function(cls, ...) return cls.new(...) end,
  __tostring = function() return 'class data.CharDataset' end,
})

--- data.CharDataset(text or TextFile, {block_size=, split='train'|'val'|'all', val_fraction=0.1, seed=})
function CharDataset.new(src, o)
  local fname = 'data.CharDataset'
  local tf
  if getmetatable(src) == TextFile then tf = src
  elseif type(src) == 'string' then
    tf = new_textfile(src, nil, check_text(fname, 'the text', src))
  else
    raise(fname .. ': argument 1 must be a string or a data.TextFile, got ' .. describe(src))
  end
  o = options(fname, o, { block_size = true, split = true, val_fraction = true, seed = true })
  local block = o.block_size
  if block == nil then
    raise(fname .. ': option block_size is required (the characters of a window: {block_size = 64})')
  end
  if math.type(block) ~= 'integer' or block < 1 then
    raise(fname .. ': option block_size (the characters of a window) must be a positive integer, got ' .. describe(block))
  end
  local split = o.split or 'train'
  if split ~= 'train' and split ~= 'val' and split ~= 'all' then
    raise(fname .. ": option split must be 'train', 'val' or 'all', got " .. describe(split))
  end
  local vf = o.val_fraction == nil and 0.1 or o.val_fraction
  if type(vf) ~= 'number' or not (vf > 0 and vf < 1) then
    raise(fname .. ': option val_fraction must be a number in (0, 1), got ' .. describe(vf))
  end
  if o.seed ~= nil and math.type(o.seed) ~= 'integer' then
    raise(fname .. ': option seed must be an integer, got ' .. describe(o.seed))
  end
  -- the encoding of a TextFile is kept on it: the train and val sets of one corpus encode it once
  local enc = rawget(tf, '_encoded')
  if not enc then
    local vocab, stoi, ids = build_vocab(tf.text)
    enc = { vocab = vocab, stoi = stoi, ids = ids }
    rawset(tf, '_encoded', enc)
  end
  local n = enc.ids:numel()
  local n_val = math.floor(n * vf + 0.5)
  local first, count = 0, n
  if split == 'train' then count = n - n_val
  elseif split == 'val' then first, count = n - n_val, n_val end
  if count < block + 1 then
    raise(string.format('%s: the %s split holds %d characters, fewer than block_size + 1 = %d (a window and its ' ..
      'next character): use a smaller block_size%s or a longer text', fname, split, count, block + 1,
      split == 'all' and '' or ', another val_fraction'))
  end
  local d = enc.ids:narrow(1, first + 1, count):clone()
  local self = {
    data = d, block_size = block, split = split, val_fraction = vf, offset = first, source = tf,
    vocab = enc.vocab, vocab_size = #enc.vocab, stoi = enc.stoi,
    _next = d:narrow(1, 2, count - 1), _offsets = lm.arange(1, block + 1):view(1, block),
    _rng = o.seed ~= nil and { o.seed, 0 } or nil,
  }
  return setmetatable(self, CharDataset)
end

--- #ds: the number of windows (starts 1 .. #text - block_size).
function CharDataset:__len() return rawget(self, 'data'):numel() - rawget(self, 'block_size') end

local function sample(self, i)
  local m = #self
  if math.type(i) ~= 'integer' or i < 1 or i > m then
    raise(string.format('CharDataset: index %s is out of range 1..%d', tostring(i), m))
  end
  local d, b = rawget(self, 'data'), rawget(self, 'block_size')
  return d:narrow(1, i, b), d:narrow(1, i + 1, b)
end

--- ds[i] -> {x, y}: window i (views): x the characters i .. i + block_size - 1 of the split, y the
--- same one on.
function CharDataset.__index(self, k)
  if math.type(k) == 'integer' then return { sample(self, k) } end
  return CharDataset[k]
end

--- ds:get(i) -> x, y (views).
function CharDataset:get(i) return sample(self, math.tointeger(i) or i) end

--- The windows at 0-based starts (an int64 tensor (n, 1)): x, y (n, block_size), one index_select each.
local function gather(self, starts)
  local b, n = self.block_size, starts:size(1)
  local idx = (starts + self._offsets):view(n * b)
  return self.data:index_select(1, idx):view(n, b), self._next:index_select(1, idx):view(n, b)
end

--- Draws n window starts from Lumen's generator in the state (seed, offset), leaving the global
--- generator as it was; returns the starts and the new offset.
local function draw_seeded(m, n, seed, offset)
  local gs, go = lm.rng_state()
  lm.set_rng_state(seed, offset)
  local ok, starts = pcall(lm.randint, 0, m, { n, 1 })
  local _, new_offset = lm.rng_state()
  lm.set_rng_state(gs, go)
  if not ok then error(starts, 0) end
  return starts, new_offset
end

--- ds:batch(batch_size [, seed]) -> x, y (batch_size, block_size) int64: windows at random starts,
--- y = x one character on. The starts come from the data set's own generator when it was made with
--- seed= (a new batch each call, the same sequence every run), from seed when one is given (the
--- same batch for the same seed), else from Lumen's generator (lm.manual_seed).
function CharDataset:batch(bs, seed)
  if math.type(bs) ~= 'integer' or bs < 1 then
    raise('CharDataset:batch: batch_size must be a positive integer, got ' .. describe(bs))
  end
  if seed ~= nil and math.type(seed) ~= 'integer' then
    raise('CharDataset:batch: seed must be an integer, got ' .. describe(seed))
  end
  local m, starts = #self, nil
  local rng = rawget(self, '_rng')
  if seed ~= nil then starts = draw_seeded(m, bs, seed, 0)
  elseif rng then starts, rng[2] = draw_seeded(m, bs, rng[1], rng[2])
  else starts = lm.randint(0, m, { bs, 1 }) end
  return gather(self, starts)
end

--- For data.DataLoader: the windows at order[first .. first + count) (0-based), gathered in C.
function CharDataset:_take(order, first, count)
  return gather(self, order:narrow(1, first + 1, count):view(count, 1))
end

--- ds:encode(str) -> int64 tensor of 1-based ids, one per character.
function CharDataset:encode(s)
  local fname = 'CharDataset:encode'
  if type(s) ~= 'string' then raise(fname .. ': expected a string, got ' .. describe(s)) end
  if #s == 0 then return lm.zeros(0, { dtype = 'int64' }) end
  local n, bad = utf8.len(s)
  if not n then
    raise(string.format('%s: the string is not UTF-8 text: byte 0x%02X at byte offset %d', fname, s:byte(bad), bad - 1))
  end
  local stoi, ids, k = self.stoi, {}, 0
  for ch in s:gmatch(utf8.charpattern) do
    k = k + 1
    local id = stoi[ch]
    if not id then
      raise(string.format('%s: character %s at position %d is not in the vocabulary (the %d characters of the ' ..
        'text the data set was made from)', fname, show_char(ch), k, self.vocab_size))
    end
    ids[k] = id
  end
  return lm.tensor(ids, { dtype = 'int64' })
end

local INT_DTYPES = { int64 = true, int32 = true, int16 = true, int8 = true, uint8 = true }

--- ds:decode(ids) -> string: ids a 1-D tensor, a table of integers or one integer; a 2-D tensor
--- (a batch) gives a table of strings, one per row.
function CharDataset:decode(ids)
  local fname = 'CharDataset:decode'
  local list
  if math.type(ids) == 'integer' then list = { ids }
  elseif lm.is_tensor(ids) then
    if not INT_DTYPES[ids:dtype()] then raise(fname .. ': expected integer ids, got a ' .. ids:dtype() .. ' tensor') end
    if ids:dim() == 2 then
      local out = {}
      for r = 1, ids:size(1) do out[r] = self:decode(ids[r]) end
      return out
    end
    if ids:dim() > 2 then raise(fname .. ': expected a 1-D or 2-D tensor of ids, got ' .. describe(ids)) end
    list = ids:dim() == 0 and { ids:item() } or ids:tolist()
  elseif type(ids) == 'table' then list = ids
  else
    raise(fname .. ': expected a tensor or a table of ids, got ' .. describe(ids))
  end
  local vocab, out, v = self.vocab, {}, self.vocab_size
  for i, id in ipairs(list) do
    local ch = math.type(id) == 'integer' and vocab[id]
    if not ch then
      raise(string.format('%s: id %s at position %d is not a character id (1..%d)', fname, tostring(id), i, v))
    end
    out[i] = ch
  end
  return table.concat(out)
end

function CharDataset:__tostring()
  return string.format('CharDataset(%s split of %s: %d characters, vocabulary of %d, block_size %d): %d windows',
    self.split, tostring(self.source), self.data:numel(), self.vocab_size, self.block_size, #self)
end

-- ---------------------------------------------------------------- named corpora (Debian)

local FORTUNE_ROOT = '/usr/share/games/fortunes'

-- The English files of Debian's fortunes and fortunes-min (a fixed list: other fortune packages
-- installing beside them do not change the corpus).
local ENGLISH = { 'art', 'ascii-art', 'computers', 'cookie', 'debian', 'definitions', 'disclaimer', 'drugs',
  'education', 'ethnic', 'food', 'fortunes', 'goedel', 'humorists', 'kids', 'knghtbrd', 'law', 'linux',
  'linuxcookie', 'literature', 'love', 'magic', 'medicine', 'men-women', 'miscellaneous', 'news', 'paradoxum',
  'people', 'perl', 'pets', 'platitudes', 'politics', 'pratchett', 'riddles', 'science', 'songs-poems', 'sports',
  'startrek', 'tao', 'translate-me', 'wisdom', 'work', 'zippy' }
local MIN_FILES = { fortunes = true, literature = true, riddles = true }

local CORPORA = {
  fortunes = { files = ENGLISH, lang = 'en', what = 'English fortune cookies' },
  tang = { files = { 'tang300' }, package = 'fortunes-zh', lang = 'zh', what = 'the 300 Tang poems (唐诗三百首)' },
  ['fortunes-zh'] = { files = { 'chinese' }, package = 'fortunes-zh', lang = 'zh', what = 'Chinese fortunes' },
  song = { files = { 'song100' }, package = 'fortunes-zh', lang = 'zh', what = '100 Song ci poems (宋词)' },
}
M.corpora = {}
for name in pairs(CORPORA) do M.corpora[#M.corpora + 1] = name end
table.sort(M.corpora)

--- s without its backspaces and the characters they step back over (at most to the line's start).
local function strip_overstrikes(s)
  local out, pos = {}, 1
  while true do
    local p = s:find('\8', pos, true)
    if not p then break end
    local q = p
    while s:byte(q + 1) == 8 do q = q + 1 end
    local cut = p -- step back over q - p + 1 characters (UTF-8: a lead byte and its continuations)
    for _ = 1, q - p + 1 do
      if cut <= pos or s:byte(cut - 1) == 10 then break end
      cut = cut - 1
      while cut > pos and s:byte(cut) >= 0x80 and s:byte(cut) < 0xC0 do cut = cut - 1 end
    end
    out[#out + 1] = s:sub(pos, cut - 1)
    pos = q + 1
  end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

--- The text of one fortune file: colour escapes (fortunes-zh) and backspace overstrikes (the
--- English files' underlining and accents) removed; the records (between lines of '%') trimmed and
--- joined by blank lines. Returns the text and the number of records.
local function clean_fortunes(s)
  if s:find('\r', 1, true) then s = s:gsub('\r\n', '\n') end
  -- ANSI colour escapes: ESC [ params m; fortunes-zh also holds cut ones (ESC [ ; ESC [ 34;1m)
  if s:find('\27', 1, true) then s = s:gsub('\27%[[%d;]*m', ''):gsub('\27%[[%d;]*', ''):gsub('\27', '') end
  -- overstrikes: '_\bI' or '___\b\b\band' draw two characters in one place; keep the last ones
  if s:find('\8', 1, true) then s = strip_overstrikes(s) end
  if s:find('\7', 1, true) then s = s:gsub('\7', '') end
  local records = {}
  s = '\n' .. s .. '\n%\n'
  local pos = 1
  while true do
    local a, b = s:find('\n%%[ \t]*\n', pos)
    if not a then break end
    local rec = s:sub(pos, a - 1):gsub('^\n+', ''):gsub('[ \t\n]+$', '')
    if rec ~= '' then records[#records + 1] = rec end
    pos = b + 1
  end
  return records
end

local corpus_cache = setmetatable({}, { __mode = 'v' })

--- data.Corpus(name [, {root=, limit_bytes=}]) -> TextFile: 'fortunes' (English), 'tang',
--- 'fortunes-zh', 'song'.
function M.Corpus(name, o)
  local fname = 'data.Corpus'
  local c = CORPORA[name]
  if not c then
    raise(string.format('%s: unknown corpus %s (expected %s)', fname, describe(name), table.concat(M.corpora, ', ')))
  end
  o = options(fname, o, { root = true, limit_bytes = true })
  local root = o.root or FORTUNE_ROOT
  if type(root) ~= 'string' then raise(fname .. ': option root must be a directory path, got ' .. describe(root)) end
  root = root:gsub('/$', '')
  local limit = o.limit_bytes
  if limit ~= nil and (math.type(limit) ~= 'integer' or limit < 1) then
    raise(fname .. ': option limit_bytes must be a positive integer, got ' .. describe(limit))
  end
  local key = name .. '\0' .. root .. '\0' .. tostring(limit)
  if corpus_cache[key] then return corpus_cache[key] end
  local records, paths = {}, {}
  for _, f in ipairs(c.files) do
    local path = root .. '/' .. f
    local pkg = c.package or (MIN_FILES[f] and 'fortunes-min' or 'fortunes')
    local s, why, what = lm.sys.read_file(path)
    if not s then
      if what == 'missing' then
        raise(string.format("%s: the corpus '%s' (%s) needs Debian's %s: '%s' was not found (apt-get install %s; " ..
          './run.sh and ./test.sh install it)', fname, name, c.what, pkg, path, pkg))
      end
      raise(string.format("%s: cannot read '%s': %s", fname, path, why))
    end
    check_text(fname, "'" .. path .. "'", s)
    for _, r in ipairs(clean_fortunes(s)) do records[#records + 1] = r end
    paths[#paths + 1] = path
  end
  local text = table.concat(records, '\n\n') .. '\n'
  if limit and #text > limit then text = trim_partial(text:sub(1, limit)) end
  local chars = check_text(fname, "the corpus '" .. name .. "'", text)
  local tf = new_textfile(text, #paths == 1 and paths[1] or root, chars,
    { name = name, files = paths, records = #records, lang = c.lang, package = c.package or 'fortunes' })
  corpus_cache[key] = tf
  return tf
end

return M
