-- lm.save / lm.load (safetensors), lm.save_gguf / lm.load_gguf, lm.save_npy / lm.load_npy,
-- lm.load_idx: round trips of every dtype and layout (q8_0 / q4_0 byte for byte), the reference
-- fixtures in tests/data/ (made by numpy and the safetensors library), interop with numpy in both
-- directions (tests/io/interop.py) and with the gguf package, ggml's own reader, writer and
-- quantizers (tests/io/gguf_check.py), both through /usr/bin/python3, and clear errors for bad
-- arguments and corrupted files.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local root = here .. '../../'
local data_dir = root .. 'tests/data/'
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p '" .. tmp .. "'")
local function path(name) return tmp .. '/' .. name end

local DTYPES = { 'float32', 'float64', 'int32', 'int64', 'uint8', 'int8', 'float16', 'bfloat16' }

-- value(i) of tests/data/make_fixtures.py for the flat C-order index i
local function values(shape, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for i = 0, n - 1 do
    local v
    if dtype == 'uint8' then v = (37 * i) % 256
    elseif dtype == 'bool' then v = (i % 3 == 0) and 1 or 0
    elseif dtype:match('float') then v = ((7 * i) % 11 - 5) / 4
    else v = (7 * i) % 11 - 5 end
    flat[#flat + 1] = v
  end
  local dt = dtype == 'bool' and 'uint8' or dtype
  if #shape == 0 then return lm.tensor(flat[1], { dtype = dt }) end
  if n == 0 then return lm.zeros(shape, { dtype = dt }) end
  return lm.tensor(flat, { dtype = dt }):reshape(shape)
end

local function same(a, b, what)
  test.ok(lm.is_tensor(a), what .. ': a tensor')
  test.eq(a:dtype(), b:dtype(), what .. ': dtype')
  test.eq(a:shape(), b:shape(), what .. ': shape')
  test.ok(a:numel() == 0 or lm.equal(a, b), what .. ': values')
end

test.case('lm.save / lm.load: one tensor, a table of tensors, every dtype and layout', function()
  local x = lm.randn(3, 4)
  lm.save(path('one.safetensors'), x)
  local y = lm.load(path('one.safetensors'))
  same(y, x, 'one tensor')
  local t = {}
  for _, dt in ipairs(DTYPES) do t['w.' .. dt] = values({ 2, 3 }, dt) end
  t.transposed = lm.randn(4, 6):t():narrow(1, 2, 3) -- written in C order
  t.scalar = lm.tensor(2.5)
  t.empty = lm.zeros(0, 7)
  lm.save(path('many.safetensors'), t, { metadata = { epoch = '3', note = 'caf\u{e9}' } })
  local u, meta = lm.load(path('many.safetensors'))
  for k, v in pairs(t) do same(u[k], v, k) end
  local n = 0
  for _ in pairs(u) do n = n + 1 end
  test.eq(n, #DTYPES + 3)
  test.eq(meta, { epoch = '3', note = 'caf\u{e9}' })
  test.ok(u.transposed:is_contiguous())
end)

test.case('lm.save_npy / lm.load_npy: every dtype, 0-d, empty, views', function()
  for _, dt in ipairs(DTYPES) do
    if dt ~= 'bfloat16' then -- numpy has none: the next case
      local x = values({ 3, 1, 4 }, dt)
      lm.save_npy(path(dt .. '.npy'), x)
      same(lm.load_npy(path(dt .. '.npy')), x, dt)
    end
  end
  for _, x in ipairs({ lm.tensor(7.5), lm.zeros(0, 3, { dtype = 'int64' }), lm.randn(5, 6):t(),
                       lm.arange(0, 20):reshape(4, 5)[{ {}, 2 }] }) do
    lm.save_npy(path('v.npy'), x)
    same(lm.load_npy(path('v.npy')), x:contiguous(), 'view ' .. table.concat(x:shape(), 'x'))
  end
end)

test.case('the fixtures written by numpy and the safetensors library load', function()
  local t, meta = lm.load(data_dir .. 'ref.safetensors')
  test.eq(meta, { format = 'np', note = 'lumen fixture' })
  same(t.f32, values({ 2, 3 }, 'float32'), 'f32')
  same(t.f64, values({ 4 }, 'float64'), 'f64')
  same(t.i32, values({ 3, 1, 2 }, 'int32'), 'i32')
  same(t.i64, values({ 5 }, 'int64'), 'i64')
  same(t.u8, values({ 2, 2 }, 'uint8'), 'u8')
  same(t.bool, values({ 7 }, 'bool'), 'bool as uint8')
  same(t.f16, values({ 2, 2 }, 'float32'):half(), 'f16 as float16')
  same(t.i16, values({ 3 }, 'int32'), 'i16 as int32')
  same(t.scalar, values({}, 'float32'), 'scalar')
  same(t.empty, lm.zeros(0, 3), 'empty')
  same(t['layer.1.weight'], values({ 3, 4 }, 'float32'), 'layer.1.weight')
  same(lm.load_npy(data_dir .. 'v1_f32.npy'), values({ 2, 3 }, 'float32'), 'v1')
  same(lm.load_npy(data_dir .. 'v2_i64.npy'), values({ 3, 2 }, 'int64'), 'v2')
  same(lm.load_npy(data_dir .. 'v3_f64.npy'), values({ 2, 2, 2 }, 'float64'), 'v3')
  same(lm.load_npy(data_dir .. 'fortran_f32.npy'), values({ 3, 4 }, 'float32'), 'fortran')
  same(lm.load_npy(data_dir .. 'big_f64.npy'), values({ 5 }, 'float64'), 'big-endian')
  same(lm.load_npy(data_dir .. 'u8_0d.npy'), values({}, 'uint8'), '0-d')
  same(lm.load_idx(data_dir .. 'images-idx3-ubyte.gz'), values({ 3, 2, 4 }, 'uint8'), 'idx.gz')
  local f = lm.load_idx(data_dir .. 'images-idx3-ubyte', { scale = 1 / 255, limit = 2 })
  test.tensor_near(f, values({ 2, 2, 4 }, 'uint8'):float() / 255, 1e-7)
end)

test.case('numpy reads what Lumen writes, Lumen reads what numpy writes', function()
  if not os.execute('/usr/bin/python3 -c "import numpy" 2>/dev/null') then
    print('  skipped: /usr/bin/python3 with numpy is not installed (apt-get install python3-numpy; ' ..
      './test.sh installs it)')
    return
  end
  local NP = { 'float32', 'float64', 'int32', 'int64', 'uint8', 'int8', 'float16' } -- numpy has no bfloat16
  for _, dt in ipairs(NP) do lm.save_npy(path('lumen_' .. dt .. '.npy'), values({ 3, 4 }, dt)) end
  test.raises(function() lm.save_npy(path('bf.npy'), values({ 2 }, 'bfloat16')) end, 'numpy has no bfloat16 dtype')
  lm.save_npy(path('lumen_t.npy'), values({ 4, 3 }, 'float32'):t())
  lm.save_npy(path('lumen_0d.npy'), values({}, 'float64'))
  local t = { ['layer.1.weight'] = values({ 3, 2 }, 'float32') }
  for _, dt in ipairs(NP) do t[dt] = values({ 2, 5 }, dt) end
  lm.save(path('lumen.safetensors'), t)
  lm.save(path('lumen_bf16.safetensors'), { bf16 = values({ 2, 5 }, 'bfloat16') }) -- read bit by bit
  local p = io.popen("/usr/bin/python3 '" .. root .. "tests/io/interop.py' '" .. tmp .. "' 2>&1")
  local out = p:read('a')
  local ok = p:close()
  test.ok(ok and out:match('^ok'), 'interop.py: ' .. out)
  same(lm.load_npy(path('np_v1.npy')), values({ 2, 3 }, 'float32'), 'np v1')
  same(lm.load_npy(path('np_v2.npy')), values({ 3, 2 }, 'int64'), 'np v2')
  same(lm.load_npy(path('np_v3.npy')), values({ 2, 2, 3 }, 'float64'), 'np v3')
  same(lm.load_npy(path('np_fortran.npy')), values({ 3, 5 }, 'int32'), 'np fortran')
  same(lm.load_npy(path('np_big.npy')), values({ 4 }, 'float32'), 'np big-endian')
  same(lm.load_npy(path('np_bool.npy')), values({ 5 }, 'bool'), 'np bool')
  same(lm.load_npy(path('np_f16.npy')), values({ 2, 2 }, 'float32'):half(), 'np float16')
  same(lm.load_npy(path('np_u8.npy')), values({ 6 }, 'uint8'), 'np uint8')
  local s, meta = lm.load(path('np.safetensors'))
  test.eq(meta.written_by, 'numpy')
  same(s.f32, values({ 2, 3 }, 'float32'), 'st f32')
  same(s.i64, values({ 4 }, 'int64'), 'st i64')
  same(s.bool, values({ 3 }, 'bool'), 'st bool')
  same(s['conv.weight'], values({ 2, 1, 3, 3 }, 'float32'), 'st conv.weight')
end)

test.case('bad arguments are errors naming the function', function()
  test.raises(function() lm.save(42, lm.ones(1)) end, 'lm.save: path must be a string, got 42')
  test.raises(function() lm.save('', lm.ones(1)) end, 'lm.save: path is empty')
  test.raises(function() lm.save(path('x'), 'text') end, 'lm.save: argument 2 must be a tensor or a table')
  test.raises(function() lm.save(path('x'), { 1, 2 }) end, "lm.save: the table's keys must be strings")
  test.raises(function() lm.save(path('x'), { w = 'no' }) end, "lm.save: value of 'w' must be a tensor")
  local c = lm.ones(2)
  c:close()
  test.raises(function() lm.save(path('x'), { w = c }) end, 'lm.save: w: tensor is closed')
  test.raises(function() lm.save(path('x'), { __metadata__ = lm.ones(1) }) end, 'reserved')
  test.raises(function() lm.save(path('x'), { w = lm.ones(1) }, { metadata = { k = 1 } }) end,
    'option metadata must map strings to strings')
  test.raises(function() lm.save(path('x'), { w = lm.ones(1) }, { meta = {} }) end, "unknown option 'meta'")
  test.raises(function() lm.save('/nonexistent-dir/x.safetensors', lm.ones(1)) end,
    "lm.save: cannot write '/nonexistent-dir/x.safetensors'")
  test.raises(function() lm.load(path('missing.safetensors')) end,
    "lm.load: '" .. path('missing.safetensors') .. "': cannot open: No such file or directory")
  test.raises(function() lm.load_npy(tmp) end, 'lm.load_npy: .*not a regular file')
  test.raises(function() lm.load_idx(path('x'), { scale = -1 }) end, 'option scale must be a positive number')
  test.raises(function() lm.load_idx(path('x'), { limit = -1 }) end, 'option limit must be non-negative')
  test.raises(function() lm.save_npy(path('x.npy'), {}) end, 'lm.save_npy: argument 2 must be a tensor')
end)

test.case('corrupted files are clear errors naming the file and the fault', function()
  local function write(name, bytes)
    local f = assert(io.open(path(name), 'wb'))
    f:write(bytes)
    f:close()
    return path(name)
  end
  local function read(name)
    local f = assert(io.open(name, 'rb'))
    local s = f:read('a')
    f:close()
    return s
  end
  lm.save(path('good.safetensors'), { w = lm.ones(4, 4) })
  local good = read(path('good.safetensors'))
  local p = write('cut.safetensors', good:sub(1, #good - 10))
  test.raises(function() lm.load(p) end, "'" .. p .. "': the tensors' data_offsets run past the end")
  p = write('header.safetensors', string.pack('<I8', 1e6) .. good:sub(9))
  test.raises(function() lm.load(p) end, 'header length 1000000 runs past the end of the file')
  p = write('json.safetensors', string.pack('<I8', 8) .. '{"w":[1,' .. good:sub(17))
  test.raises(function() lm.load(p) end, 'header: bad JSON at byte 8')
  lm.save_npy(path('good.npy'), lm.ones(3, 3))
  test.raises(function() lm.load(path('good.npy')) end, 'this is a NumPy .npy file')
  test.raises(function() lm.load_npy(path('good.safetensors')) end, 'a safetensors file? read it with lm.load')
  local npy = read(path('good.npy'))
  p = write('cut.npy', npy:sub(1, #npy - 4))
  test.raises(function() lm.load_npy(p) end, 'truncated: shape [3, 3] of <f4 needs 36 bytes of data, the file holds 32')
  local gz = read(data_dir .. 'images-idx3-ubyte.gz')
  p = write('cut.gz', gz:sub(1, #gz - 20))
  test.raises(function() lm.load_idx(p) end, "lm.load_idx: '" .. p .. "': truncated")
  p = write('plain-idx', read(data_dir .. 'images-idx3-ubyte') .. 'xx')
  test.raises(function() lm.load_idx(p) end, 'trailing bytes: dims [3, 2, 4] of unsigned byte need 24 bytes of data, the file holds 26')
end)

-- The bytes of a block tensor (q8_0, q4_0): lm.save writes them as a U8 entry, the data section.
local function bytes(x)
  local p = path('bytes.safetensors')
  lm.save(p, { x = x })
  local f = assert(io.open(p, 'rb'))
  local s = f:read('a')
  f:close()
  return s:sub(9 + string.unpack('<I8', s))
end

local function slurp(name)
  local f = assert(io.open(name, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end

local function spit(name, s)
  local f = assert(io.open(path(name), 'wb'))
  f:write(s)
  f:close()
  return path(name)
end

test.case('lm.save / lm.load: q8_0 and q4_0 as U8 bytes with the metadata that says how to read them', function()
  local q4, q8 = lm.randn(4, 64):to('q4_0'), lm.randn(3, 2, 32):to('q8_0')
  lm.save(path('q.safetensors'), { w = q4, v = q8, b = lm.ones(2) }, { metadata = { epoch = '1' } })
  local t, meta = lm.load(path('q.safetensors'))
  test.eq(t.w:dtype(), 'q4_0')
  test.eq(t.w:shape(), { 4, 64 })
  test.eq(t.v:dtype(), 'q8_0')
  test.eq(t.v:shape(), { 3, 2, 32 })
  test.ok(bytes(t.w) == bytes(q4) and bytes(t.v) == bytes(q8), 'the blocks come back byte for byte')
  test.eq(meta, { epoch = '1' }) -- the lumen.* keys are consumed
  local raw = slurp(path('q.safetensors'))
  for _, s in ipairs({ '"lumen.dtype.w":"q4_0"', '"lumen.shape.w":"[4,64]"', '"w":{"dtype":"U8","shape":[4,36],',
                       '"lumen.shape.v":"[3,2,32]"', '"v":{"dtype":"U8","shape":[3,2,34],' }) do
    test.ok(raw:find(s, 1, true), 'the header holds ' .. s)
  end
  lm.save(path('q1.safetensors'), q4) -- one tensor
  test.ok(bytes(lm.load(path('q1.safetensors'))) == bytes(q4), 'lm.save of one block tensor')
  test.raises(function() lm.save(path('x'), { w = q4 }, { metadata = { ['lumen.dtype.w'] = 'q4_0' } }) end,
    "lm.save: the metadata key 'lumen.dtype.w' is Lumen's own")
  -- metadata that does not fit the entry (edited in place, the header's length unchanged)
  local p = spit('shape.safetensors', (raw:gsub('"%[4,64%]"', '"[4,96]"')))
  test.raises(function() lm.load(p) end,
    "lm.load: '" .. p .. "': tensor 'w': q4_0 of shape [4, 96] is stored as U8 [4, 54], but the file holds U8 [4, 36]")
  p = spit('type.safetensors', (raw:gsub('"q4_0"', '"q5_1"')))
  test.raises(function() lm.load(p) end, "tensor 'w': lumen.dtype.w is 'q5_1', not a block type Lumen knows")
  p = spit('name.safetensors', (raw:gsub('"lumen.shape.w"', '"lumen.shape.x"')))
  test.raises(function() lm.load(p) end, "__metadata__ key 'lumen.shape.x' names no tensor of the file")
end)

-- one tensor of every dtype GGUF and Lumen share, as tests/io/gguf_check.py expects them
local function gguf_tensors()
  return {
    ['w.q4_0'] = lm.randn(4, 64):to('q4_0'),
    ['w.q8_0'] = lm.randn(3, 32):to('q8_0'),
    ['blk.0.q4_0'] = (lm.randn(2, 1, 96) * 3):to('q4_0'),
    f32 = values({ 2, 3 }, 'float32'), f64 = values({ 5 }, 'float64'), f16 = values({ 3, 2 }, 'float16'),
    bf16 = values({ 2, 2 }, 'bfloat16'), i8 = values({ 4 }, 'int8'), i32 = values({ 2, 2 }, 'int32'),
    i64 = values({ 3 }, 'int64'),
  }
end

test.case('lm.save_gguf / lm.load_gguf: every dtype GGUF has, the blocks byte for byte, metadata', function()
  local t = gguf_tensors()
  t.scalar = lm.tensor(2.5) -- ne [1], as ggml writes a scalar
  t.empty = lm.zeros(0, 3, { dtype = 'int32' })
  t.view = lm.randn(4, 6):t() -- written in C order
  lm.save_gguf(path('a.gguf'), t, { metadata = { ['general.name'] = 'test', note = 'caf\u{e9}' } })
  local g, meta = lm.load_gguf(path('a.gguf'))
  for k, x in pairs(t) do
    if x:dtype():match('^q') then
      test.eq(g[k]:dtype(), x:dtype(), k)
      test.eq(g[k]:shape(), x:shape(), k)
      test.ok(bytes(g[k]) == bytes(x), k .. ': byte for byte')
    elseif k ~= 'scalar' then
      same(g[k], x:contiguous(), k)
    end
  end
  same(g.scalar, lm.tensor({ 2.5 }), 'a 0-d tensor comes back as shape [1]')
  test.eq(meta, { ['general.architecture'] = 'lumen', ['general.name'] = 'test', note = 'caf\u{e9}' })
  -- the file is the same every time (a Lua table has no order: names and keys are sorted)
  lm.save_gguf(path('b.gguf'), t, { metadata = { note = 'caf\u{e9}', ['general.name'] = 'test' } })
  test.ok(slurp(path('a.gguf')) == slurp(path('b.gguf')), 'the same bytes for the same tensors')
  lm.save_gguf(path('c.gguf'), { w = lm.ones(2) }, { metadata = { ['general.alignment'] = '64', ['general.architecture'] = 'llama' } })
  g, meta = lm.load_gguf(path('c.gguf'))
  test.eq(meta, { ['general.alignment'] = '64', ['general.architecture'] = 'llama' })
  test.eq(#slurp(path('c.gguf')) % 64, 0)
  -- what GGUF cannot hold, bad arguments, bad files
  test.raises(function() lm.save_gguf(path('x.gguf'), { u = lm.ones(2):byte() }) end,
    "lm.save_gguf: tensor 'u' is uint8, which GGUF has no type for")
  test.raises(function() lm.save_gguf(path('x.gguf'), { w = lm.ones(1, 1, 1, 1, 2) }) end, 'has 5 dims; ggml reads at most 4')
  test.raises(function() lm.save_gguf(path('x.gguf'), lm.ones(2)) end, 'lm.save_gguf: argument 2 must be a table of named tensors')
  test.raises(function() lm.save_gguf(path('x.gguf'), { w = lm.ones(2) }, { metadata = { k = 1 } }) end,
    'option metadata must map strings to strings')
  test.raises(function() lm.save_gguf(path('x.gguf'), { w = lm.ones(2) }, { metadata = { ['general.alignment'] = '48' } }) end,
    'general.alignment must be a power of two')
  test.raises(function() lm.load_gguf(path('q.safetensors')) end, 'this is a safetensors file, not GGUF (read it with lm.load)')
  test.raises(function() lm.load(path('a.gguf')) end, 'this is a GGUF file, not safetensors (read it with lm.load_gguf)')
  local raw = slurp(path('a.gguf'))
  local p = spit('cut.gguf', raw:sub(1, 400))
  test.raises(function() lm.load_gguf(p) end, "lm.load_gguf: '" .. p .. "': truncated: the file ends at byte 400")
  p = spit('cut2.gguf', raw:sub(1, #raw - 40))
  test.raises(function() lm.load_gguf(p) end, "run past the end of the file")
end)

test.case('the gguf Python package reads what Lumen writes, Lumen reads what it writes (ggml\'s quantizers)', function()
  if not os.execute('/usr/bin/python3 -c "import numpy" 2>/dev/null') then
    print('  skipped: /usr/bin/python3 with numpy is not installed (apt-get install python3-numpy; ' ..
      './test.sh installs it)')
    return
  end
  if not os.execute('/usr/bin/python3 -c "import gguf" 2>/dev/null') then
    print('  skipped: the gguf Python package is not installed (pip install gguf; ./test.sh installs it)')
    return
  end
  local t = gguf_tensors()
  lm.save_gguf(path('lumen.gguf'), t, { metadata = { note = 'caf\u{e9}' } })
  for k, x in pairs(t) do
    if x:dtype():match('^q') then lm.save_npy(path('lumen_' .. k .. '_float.npy'), x:float())
    elseif x:dtype() == 'bfloat16' then lm.save_npy(path('lumen_bf16.npy'), x:float())
    else lm.save_npy(path('lumen_' .. k .. '.npy'), x) end
  end
  local pipe = io.popen("/usr/bin/python3 '" .. root .. "tests/io/gguf_check.py' '" .. tmp .. "' 2>&1")
  local out = pipe:read('a')
  local ok = pipe:close()
  test.ok(ok and out:match('^ok'), 'gguf_check.py: ' .. out)
  print('  ' .. out:gsub('\n$', ''))
  local g, meta = lm.load_gguf(path('py.gguf'))
  for _, rows in ipairs({ 'cos', 'randn' }) do
    local x = lm.load_npy(path('py_' .. rows .. '.npy'))
    for _, q in ipairs({ 'q4_0', 'q8_0' }) do
      local name = rows .. '.' .. q
      test.eq(g[name]:dtype(), q, name)
      test.eq(g[name]:shape(), x:shape(), name)
      test.ok(bytes(g[name]) == bytes(x:to(q)), name .. ": gguf.quants.quantize's bytes are x:to('" .. q .. "')'s")
    end
    if rows == 'cos' then
      same(g['cos.f32'], x, 'cos.f32')
      same(g['cos.f16'], x:half(), 'cos.f16')
    end
  end
  test.eq(meta, { ['general.architecture'] = 'lumen-check', note = 'written by gguf-py', count = '7',
                  scale = '0.25', flag = 'true', ints = '[1,-2,3]', words = '["a","b c"]' })
end)

test.case('cleanup', function() os.execute("rm -rf '" .. tmp .. "'") end)

-- Names and metadata round-trip exactly (issue 29.10): a NUL inside a name or a metadata string
-- would cut it short in the file, so it is refused; Lumen's own metadata key is refused in a
-- user's metadata, so a table of one tensor never comes back as a bare tensor.
test.case('names and metadata: NUL refused, the single-tensor marker reserved, one named tensor stays a table', function()
  local path = os.tmpname()
  test.raises(function() lm.save(path, {['w\0secret'] = lm.ones(1)}) end, "a tensor name holds a NUL character")
  test.raises(function() lm.save(path, {w = lm.ones(1)}, {metadata = {['k\0'] = 'v'}}) end, 'a metadata key holds a NUL')
  test.raises(function() lm.save(path, {w = lm.ones(1)}, {metadata = {k = 'v\0w'}}) end, 'a metadata value holds a NUL')
  test.raises(function() lm.save(path, {w = lm.ones(2)}, {metadata = {lumen = 'tensor'}}) end, "the key 'lumen' is Lumen's own")
  lm.save(path, {tensor = lm.ones(2)}, {metadata = {format = 'pt'}})
  local t, meta = lm.load(path)
  test.ok(not lm.is_tensor(t) and lm.is_tensor(t.tensor), 'a table with one tensor named tensor stays a table')
  test.eq(meta.format, 'pt')
  lm.save(path, {['é \n\t"quoted"'] = lm.ones(1)})
  t = lm.load(path)
  test.ok(lm.is_tensor(t['é \n\t"quoted"']), 'an unusual name round-trips exactly')
  lm.save(path, lm.arange(1, 4))
  test.ok(lm.is_tensor((lm.load(path))), 'lm.save of one tensor still loads as a tensor')
  os.remove(path)
end)
