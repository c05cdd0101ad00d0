--[[
fuzz.lua — the Lua API fuzzer: every callable of `lm`, `lm.nn.functional`, `kernels`, `lm.cuda`,
`lm.sys`, `lm.autograd`, the Tensor methods and metamethods and those of kernels' Sparse and Trace
userdata, called with random argument lists drawn from nasty values.

The rule it checks (the project's standard): a call either returns or raises a Lua error whose
message names a function ("lm.zeros: ...", "Tensor:view: ..."); it never crashes, aborts or hangs;
what it returns is usable (shape, tostring, tolist); and the live tensor memory (lm.memory()) is
back to its level once an episode's values are dropped and collected.

Design: a run is a seed; it runs episodes, each with its own pool of values (tensors of every
dtype and layout, closed tensors, tensors that require grad, sparse matrices, traces, tables,
functions, hostile tables whose metamethods close tensors) and a sequence of calls. Everything
comes from a private splitmix64 generator keyed by (seed, episode), so an episode is reproduced
from its two numbers alone (lm's own RNG is reseeded too). Sizes are capped (pool tensors are
small, the memory limit is lowered) so no call may legitimately take long; a call slower than
opts.slow seconds is a failure. A leak found at the end of an episode is confirmed by running the
episode again, then narrowed to the shortest leaking prefix of its calls.

Used by tests/lua/test_fuzz.lua (a few fixed seeds, fast) and tests/lua/fuzz/run.lua (long runs
in child processes, so a crash or a hang is caught and replayed). Read next: run.lua.
]]
local lm = require 'lumen'
local kernels = require 'kernels'
local oracle = dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'oracle.lua')

local M = {}

-- ------------------------------------------------------------------ random numbers

-- splitmix64 over Lua's wrapping 64-bit integers: independent of math.random and of lm's RNG.
local function new_rng(seed, stream)
  local s = (seed * 0x2545F4914F6CDD1D + stream * 0x9E3779B97F4A7C15) ~ 0x5DEECE66D
  local r = {}
  function r.next()
    s = s + 0x9E3779B97F4A7C15
    local z = s
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  function r.int(n) return (r.next() >> 1) % n + 1 end -- 1..n
  function r.range(a, b) return a + r.int(b - a + 1) - 1 end
  function r.float() return (r.next() >> 11) * 2.0 ^ -53 end
  function r.chance(p) return r.float() < p end
  function r.pick(t) return t[r.int(#t)] end
  return r
end

-- ------------------------------------------------------------------ the API

local DTYPES = { 'float32', 'float64', 'int32', 'int64', 'uint8' }

-- Calls that change process-wide state get it restored after each call (see restore()).
local STATEFUL = {
  ['lm.set_memory_limit'] = true, ['lm.set_num_threads'] = true, ['lm.set_grad_enabled'] = true,
  ['kernels.latency'] = true, ['kernels.racecheck'] = true, ['lm.sys.fail_alloc_after'] = true,
}

-- Calls that write files at the path they are given: left out (a run must not litter the working
-- directory with files named 'add' or 'sum'; the file formats have their own fuzzer, tests/io).
local WRITERS = { ['lm.save'] = true, ['lm.save_npy'] = true, ['lm.sys.write_file'] = true }

local function sorted_functions(t)
  local names = {}
  for k, v in pairs(t) do
    if type(k) == 'string' and type(v) == 'function' then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end

-- Every callable, as {name=, fn=, family=, self=} (self: the userdata kind its first argument
-- usually is). Sorted, so an index into the list is reproducible.
function M.api()
  local list = {}
  local function add(prefix, t, family, self)
    for _, k in ipairs(sorted_functions(t)) do
      if not WRITERS[prefix .. k] then
        list[#list + 1] = { name = prefix .. k, fn = t[k], family = family, self = self }
      end
    end
  end
  local x = lm.zeros(1)
  local _, info = kernels.reduce(lm.ones(4), { backend = 'emu' })
  local sp = kernels.sparse(lm.eye(2))
  add('lm.', lm, 'lm')
  add('lm.autograd.', lm.autograd, 'autograd')
  add('lm.cuda.', lm.cuda, 'lm')
  add('lm.sys.', lm.sys, 'sys')
  add('F.', lm.nn.functional, 'F')
  add('kernels.', kernels, 'kernels')
  add('Tensor:', lm.Tensor, 'lm', 'tensor')
  add('Tensor.', getmetatable(x), 'lm', 'tensor') -- __index, __add, __gc, ... called directly
  add('Sparse.', getmetatable(sp), 'kernels', 'sparse')
  add('sparse:', getmetatable(sp).methods, 'kernels', 'sparse')
  add('Trace.', getmetatable(info.trace), 'trace', 'trace')
  add('trace:', getmetatable(info.trace).methods, 'trace', 'trace')
  add('Info.', getmetatable(info), 'kernels', 'info')
  return list
end

-- ------------------------------------------------------------------ values

local NAN = 0 / 0
local NUMBERS = {
  0, 1, -1, 2, 3, 2.5, -2.5, 0.5, -0.0, NAN, math.huge, -math.huge, 2 ^ 53, 2 ^ 63, -2 ^ 63,
  math.maxinteger, math.mininteger, 1e300, 1e-300, 2 ^ 31, 2 ^ 32, -2 ^ 31, 7, 64, 1024, 1e9,
  2.0, -3, 4, 5, 1e-6, 0.1,
}
local SMALL = { 1, 2, 3, -1, -2, 0, 1, 2, 1 } -- dims, indices, counts: valid more often than not
local STRINGS = {
  '', 'a', 'float32', 'float64', 'int32', 'int64', 'uint8', 'float16', 'cpu', 'cuda', 'cuda:1',
  'mean', 'sum', 'none', 'tanh', 'fro', 'naive', 'tiled', 'emu', 'auto', 'csr', 'coo', 'ell',
  'jds', 'kogge-stone', 'brent-kung', 'hierarchical', 'global-atomic', 'privatized', 'aggregated',
  'even-odd', 'half-warp', 'default', 'shared', 'convergent', 'coarsened', 'constant',
  'tiled-input', 'tiled-output', 'add', 'load', 'global', '1', '-1', '2.5', '%s%n%d', '\0x\0',
  '\255\254', 'requires_grad', 'grad', 'dtype', 'shape', 'is_leaf', 'grad_fn', 'methods',
}

-- Option keys by family, with values worth trying (valid ones included, so calls get deep).
local OPTS = {
  dtype = { 'float32', 'float64', 'int32', 'int64', 'uint8', 'float16', 5, true },
  requires_grad = { true, false, 1, 'yes' },
  device = { 'cpu', 'cuda', 'tpu', 0 },
  stride = { 1, 2, 3, { 1, 2 }, 0, -1, 2 ^ 62, { 1 }, 2.5 },
  padding = { 0, 1, 2, { 1, 0 }, -1, 2 ^ 40, { 0, 0, 0 } },
  dilation = { 1, 2, { 2, 1 }, 0, -1, 2 ^ 40 },
  groups = { 1, 2, 3, 0, -1, 2 ^ 63 },
  return_indices = { true, false, 1 },
  reduction = { 'mean', 'sum', 'none', 'max', 1 },
  label_smoothing = { 0, 0.1, 1, -1, 2, NAN },
  approximate = { 'tanh', 'none', 'erf', false },
  unbiased = { true, false, 0 },
  correction = { 0, 1, 2, 10, -1, 1e7, 2.5 },
  retain_graph = { true, false, 'x' },
  eps = { 1e-6, 1e-3, 0, -1, NAN, math.huge },
  atol = { 1e-5, 0, -1, NAN },
  rtol = { 1e-3, 0, -1 },
  max_elements = { 1, 10, 0, -1, 2 ^ 53 },
  backend = { 'emu', 'cpu', 'cuda', 'auto', 'gpu', 1 },
  algo = { 'naive', 'convergent', 'shared', 'coarsened', 'kogge-stone', 'brent-kung',
           'hierarchical', 'global-atomic', 'privatized', 'aggregated', 'tiled', 'constant',
           'tiled-input', 'tiled-output', 'x', 3 },
  block = { 1, 2, 4, 32, 64, 256, 1024, 2048, 3, 0, -1, 2 ^ 40 },
  coarsen = { 1, 2, 8, 0, -1, 1e9, 3 },
  trace = { true, false, 1 },
  inclusive = { true, false },
  trace_cap = { 0, 1, 10, 100, -1, 2 ^ 40 },
  repeats = { 1, 2, 1000, 1001, 0, -1 },
  tile = { 1, 2, 4, 8, 16, 32, 3, 0, -1, 64, 2 ^ 31 },
  format = { 'coo', 'csr', 'ell', 'jds', 'dense', 1 },
  pattern = { 'even-odd', 'half-warp', 'data', 'warp', 'none', 'x' },
  warps = { 1, 2, 8, 32, 0, -1, 2 ^ 20 },
  segments = { 1, 2, 4, 64, 0, -1, 2 ^ 20 },
  bytes = { 1, 1024, 2 ^ 20, 2 ^ 30, 0, -1, 2 ^ 62 },
  copy_engines = { 1, 2, 0, -1, 100 },
  sms = { 1, 4, 132, 0, -1, 1e6 },
  pcie_gbps = { 1, 16, 0, -1, math.huge, NAN },
  clock_ghz = { 1, 1.5, 0, -1, math.huge, NAN },
  kind = { 'load', 'store', 'add', 'atomic', 'barrier', 'x' },
  space = { 'global', 'shared', 'constant', 'none', 'x' },
  step = { 0, 1, -1 }, lane = { 0, 1, 31, -1 }, launch = { 0, 1, -1 }, warp = { 0, 1 },
  global = { 1, 400, 0, -1, NAN, math.huge, 1e18 }, shared = { 1, 30, 0, -1 },
  constant = { 1, 0, -5 }, arith = { 1, 4, 0 }, barrier = { 1, 20, -1 },
  rows = { { 1, 2 }, { 1, 1 }, { 0 }, {}, { 3, 1, 2 } },
  cols = { { 1, 2 }, { 2, 1 }, { -1 }, {}, { 1, 2, 3 } },
  vals = { { 1.5, 2 }, { NAN, 1 }, {}, { 'a' }, { 1, 2, 3 } },
  shape = { { 2, 2 }, { 3, 3 }, { 0, 0 }, { -1, 2 }, { 2 ^ 40, 2 ^ 40 }, { 2 }, 3 },
}
local FAMILY_KEYS = {
  lm = { 'dtype', 'requires_grad', 'device', 'unbiased', 'correction' },
  autograd = { 'eps', 'atol', 'rtol', 'max_elements', 'retain_graph' },
  F = { 'stride', 'padding', 'dilation', 'groups', 'return_indices', 'reduction',
        'label_smoothing', 'approximate' },
  kernels = { 'backend', 'algo', 'block', 'coarsen', 'trace', 'inclusive', 'trace_cap', 'repeats',
              'tile', 'format', 'pattern', 'warps', 'segments', 'bytes', 'copy_engines', 'sms',
              'pcie_gbps', 'clock_ghz', 'rows', 'cols', 'vals', 'shape', 'dtype', 'global',
              'shared', 'constant', 'arith', 'barrier' },
  trace = { 'kind', 'space', 'step', 'block', 'warp', 'lane', 'launch' },
  sys = { 'dtype' },
}
local ALL_KEYS = {}
for k in pairs(OPTS) do ALL_KEYS[#ALL_KEYS + 1] = k end
table.sort(ALL_KEYS)

-- A tensor of the pool: made from a recipe, so a failure report can say what it was.
local SHAPES = {
  {}, { 0 }, { 1 }, { 3 }, { 5 }, { 2, 3 }, { 3, 1 }, { 1, 4 }, { 2, 0, 3 }, { 2, 3, 4 },
  { 1, 1, 1, 1 }, { 1, 2, 5, 5 }, { 2, 3, 4, 4 }, { 3, 2, 3, 3 }, { 4, 4 }, { 2, 2, 2, 2, 2 },
  { 1, 1, 1, 1, 1, 1, 1, 2 }, { 33, 65 }, { 1, 300 }, { 3, 3 }, { 4 }, { 2 }, { 6 }, { 0, 4 },
}
local FILLS = { 'randn', 'int', 'int', 'special', 'ones', 'zeros', 'neg', 'big' }
local SPECIAL = { NAN, math.huge, -math.huge, 0, -0.0, 1e38, -1e-40, 3, -7, 255, 256, 2 ^ 31 }

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

local function nested(shape, d, gen)
  if d > #shape then return gen() end
  local t = {}
  for i = 1, shape[d] do t[i] = nested(shape, d + 1, gen) end
  return t
end

-- Returns tensor, label.
local function make_tensor(r)
  local shape = r.pick(SHAPES)
  local dtype = r.pick(DTYPES)
  local fill = r.pick(FILLS)
  local gen
  if fill == 'randn' then gen = function() return (r.float() - 0.5) * 6 end
  elseif fill == 'int' then gen = function() return r.range(0, 4) end
  elseif fill == 'special' then gen = function() return r.pick(SPECIAL) end
  elseif fill == 'ones' then gen = function() return 1 end
  elseif fill == 'zeros' then gen = function() return 0 end
  elseif fill == 'neg' then gen = function() return r.range(-3, 3) end
  else gen = function() return (r.float() - 0.5) * 1e30 end end
  local x
  -- integer tensors get the values through a conversion, which wraps them (lm.tensor refuses
  -- numbers outside the dtype's range)
  local made = dtype:find('int') and 'float64' or dtype
  if #shape == 0 then x = lm.tensor(gen(), { dtype = made })
  elseif numel(shape) == 0 then x = lm.zeros(shape, { dtype = made })
  else x = lm.tensor(nested(shape, 1, gen), { dtype = made }) end
  if made ~= dtype then x = x:to(dtype) end
  local label = string.format('%s%s:%s', fill, table.concat(shape, 'x'), dtype)
  local float = dtype == 'float32' or dtype == 'float64'
  if float and r.chance(0.3) then
    x:requires_grad_(true)
    label = label .. ':rg'
    if r.chance(0.5) then x = x * 2; label = label .. ':*2' end
  end
  local layout = r.range(1, 9)
  local nd = x:dim()
  if layout == 1 and nd >= 2 then x = x:transpose(1, nd); label = label .. ':T'
  elseif layout == 2 and nd >= 1 and x:size(1) > 1 then
    x = x:narrow(1, 2, x:size(1) - 1); label = label .. ':narrow'
  elseif layout == 3 and nd < 8 then
    local s = x:shape()
    table.insert(s, 1, 3)
    x = x:unsqueeze(1):expand(s); label = label .. ':expand3'
  elseif layout == 4 and nd >= 2 then
    local p = {}
    for i = nd, 1, -1 do p[#p + 1] = i end
    x = x:permute(p); label = label .. ':permute'
  elseif layout == 5 and nd >= 1 and x:size(1) > 1 then
    x = x:select(1, 2); label = label .. ':select'
  elseif layout == 6 then
    x = x:detach(); label = label .. ':detach'
  end
  return x, label
end

local function hostile_table(r, pool)
  local kind = r.range(1, 5)
  if kind == 1 then -- closes a tensor of the pool when an absent key is read
    return setmetatable({}, { __index = function()
      local t = pool.tensors[r.int(#pool.tensors)]
      if lm.is_tensor(t) then t:close() end
    end }), 'table{__index closes a tensor}'
  elseif kind == 2 then
    return setmetatable({}, { __index = function() error('fuzzfn: __index raised', 0) end }),
      'table{__index raises}'
  elseif kind == 3 then -- fresh strings (collectable once popped) for any key
    return setmetatable({}, { __index = function(_, k)
      local v = r.pick(OPTS[k] or STRINGS)
      if type(v) == 'string' then return v .. string.rep('', 1) end -- a new string object
      return v
    end }), 'table{__index gives fresh values}'
  elseif kind == 4 then
    return setmetatable({ 1, 2 }, { __len = function() return 2 ^ 40 end,
      __index = function() return 3 end }), 'table{__len 2^40}'
  end
  return setmetatable({}, { __newindex = function() error('fuzzfn: __newindex', 0) end,
    __call = function() return 1 end }), 'table{__newindex raises}'
end

local function options_table(r, family, keys)
  local t = {}
  keys = keys or FAMILY_KEYS[family] or ALL_KEYS
  for _ = 1, r.range(0, 4) do
    local k = r.chance(0.85) and r.pick(keys) or (r.chance(0.5) and r.pick(ALL_KEYS) or 'bogus')
    t[k] = r.chance(0.8) and OPTS[k] and r.pick(OPTS[k]) or r.pick(NUMBERS)
  end
  return t, M.describe(t)
end

-- A short text for a value (never calls a metamethod).
function M.describe(v)
  local tp = type(v)
  if tp == 'number' then
    if v ~= v then return 'nan' end
    if math.type(v) == 'integer' then return tostring(v) end
    return string.format('%.17g', v)
  elseif tp == 'string' then
    return string.format('%q', #v > 40 and v:sub(1, 40) .. '...' or v)
  elseif tp == 'table' then
    if getmetatable(v) then return 'a table with a metatable' end
    local parts = {}
    for i = 1, math.min(rawlen(v), 6) do parts[i] = M.describe(rawget(v, i)) end
    for k, x in next, v do
      if type(k) == 'string' and #parts < 8 then parts[#parts + 1] = k .. '=' .. M.describe(x) end
    end
    if rawlen(v) > 6 then parts[#parts + 1] = '... (' .. rawlen(v) .. ')' end
    return '{' .. table.concat(parts, ', ') .. '}'
  elseif lm.is_tensor(v) then
    return 'a tensor'
  end
  return tp
end

-- The pool of an episode: labelled values of every kind.
local function make_pool(r)
  local pool = { values = {}, labels = {}, tensors = {}, fns = {} }
  local function put(v, label)
    pool.values[#pool.values + 1] = v
    pool.labels[#pool.labels + 1] = label
    if lm.is_tensor(v) then pool.tensors[#pool.tensors + 1] = v end
    return v
  end
  for i = 1, r.range(12, 24) do
    local x, label = make_tensor(r)
    put(x, 'T' .. i .. '=' .. label)
  end
  -- tensors that reach the deep paths of the common ops
  put(lm.randn(1, 2, 5, 5, { dtype = r.pick({ 'float32', 'float64' }) }), 'image(1,2,5,5)')
  put(lm.randn(3, 2, 3, 3), 'conv_w(3,2,3,3)')
  put(lm.tensor({ 1, 2, 3 }), 'idx{1,2,3}')
  put(lm.tensor({ { 1, 2 }, { 2, 1 } }), 'idx{{1,2},{2,1}}')
  put(lm.tensor({ 0, -1, 5 }), 'idx{0,-1,5}')
  put(lm.tensor({ math.maxinteger, math.mininteger }), 'idx{maxint,minint}')
  put(lm.tensor({ 1, 0, 1 }, { dtype = 'uint8' }), 'mask{1,0,1}:uint8')
  put(lm.rand(3, 3, { dtype = 'float64', requires_grad = true }), 'rand(3,3):float64:rg')
  put(lm.rand(4, { requires_grad = true }):sum(), 'scalar-loss')
  local closed = lm.ones(2, 2)
  closed:close()
  put(closed, 'closed')
  local base = lm.arange(12.0):view(3, 4)
  local view = base:t()
  base:close()
  put(view, 'view-of-closed-base')
  put(lm.arange(64.0):view(8, 8):narrow(2, 2, 5), 'narrow(8x8)')
  put(lm.ones(1):expand(4, 4), 'expand-1-to-4x4')
  -- no elements, huge dims: work proportional to a dim (not to the elements) shows as a hang
  put(lm.zeros(2 ^ 32, 0), 'zeros(2^32, 0)')
  put(lm.empty(0, 2 ^ 40, { dtype = 'int64' }), 'empty(0, 2^40):int64')
  put(lm.zeros(2 ^ 31, 0, 2 ^ 31, { dtype = 'float64', requires_grad = true }), 'zeros(2^31, 0, 2^31):rg')
  put(lm.zeros(0, math.maxinteger), 'zeros(0, 2^63-1)')
  put(lm.ones(math.maxinteger, 0, { dtype = 'float64' }), 'ones(2^63-1, 0):float64')
  -- kernels' userdata
  put(kernels.sparse(lm.tensor({ { 1, 0, 2 }, { 0, 0, 3 }, { 4, 0, 0 } }, { dtype = 'float32' })),
    'sparse(3x3)')
  put(kernels.sparse(lm.zeros(1, 4, { dtype = 'float64' })), 'sparse(1x4, no nonzeros)')
  local closed_sp = kernels.sparse(lm.eye(2))
  getmetatable(closed_sp).__gc(closed_sp)
  put(closed_sp, 'closed-sparse')
  local okk, _, info = pcall(kernels.scan, lm.ones(8), { backend = 'emu' })
  if okk then put(info, 'info(scan)'); put(info.trace, 'trace(scan)') end
  local okr, _, info2 = pcall(kernels.reduce, lm.ones(16), { backend = 'emu', trace_cap = 3 })
  if okr then put(info2.trace, 'trace(truncated)') end
  -- functions (for no_grad, gradcheck, and as wrong arguments)
  local tensors = pool.tensors
  local fns = {
    { function(...) return (...) end, 'fn(identity)' },
    { function(x) return x * 2 end, 'fn(x*2)' },
    { function(x) return x:sum() end, 'fn(x:sum())' },
    { function() error('fuzzfn: raised', 0) end, 'fn(raises)' },
    { function() error(M.FUZZ_ERROR) end, 'fn(raises a table)' },
    { function() return nil end, 'fn(nil)' },
    { function(x) if lm.is_tensor(x) then x:close() end return x end, 'fn(closes its argument)' },
    { function() collectgarbage() return tensors[1] end, 'fn(collects)' },
    { function() return tensors[r.int(#tensors)] end, 'fn(a pool tensor)' },
    { function(x) return lm.no_grad(function() return x end) end, 'fn(nested no_grad)' },
  }
  for _, f in ipairs(fns) do put(f[1], f[2]); pool.fns[#pool.fns + 1] = f[1] end
  -- other values
  local rec = {}
  rec[1] = rec
  rec.self = rec
  put(rec, 'recursive table')
  put({}, '{}')
  put(io.stdout, 'io.stdout (foreign userdata)')
  put(coroutine.create(function() end), 'a coroutine')
  local deep = { 1 }
  for _ = 1, 12 do deep = { deep } end
  put(deep, 'table nested 13 deep')
  local long = {}
  for i = 1, 1000 do long[i] = i % 7 end
  put(long, 'table of 1000 numbers')
  put({ { 1, 2 }, { 3 } }, 'ragged table')
  put(string.rep('x', 5000), 'long string')
  return pool
end

-- One argument.
local function gen_arg(r, pool, family)
  local c = r.float()
  if c < 0.40 then
    local i = r.int(#pool.tensors)
    return pool.tensors[i], 'T#' .. i
  elseif c < 0.50 then
    local v = r.pick(SMALL)
    return v, M.describe(v)
  elseif c < 0.62 then
    local v = r.pick(NUMBERS)
    return v, M.describe(v)
  elseif c < 0.68 then
    local v = r.pick(STRINGS)
    return v, M.describe(v)
  elseif c < 0.78 then
    return options_table(r, family)
  elseif c < 0.84 then -- a table of tensors, or of sizes
    local t, parts = {}, {}
    for i = 1, r.range(0, 4) do
      if r.chance(0.7) then
        local j = r.int(#pool.tensors)
        t[i] = pool.tensors[j]
        parts[i] = 'T#' .. j
      else
        t[i] = r.pick(SMALL)
        parts[i] = tostring(t[i])
      end
    end
    return t, '{' .. table.concat(parts, ', ') .. '}'
  elseif c < 0.87 then
    return hostile_table(r, pool)
  elseif c < 0.90 then
    return nil, 'nil'
  elseif c < 0.92 then
    local v = r.chance(0.5)
    return v, tostring(v)
  else
    local i = r.int(#pool.values)
    return pool.values[i], pool.labels[i]
  end
end

-- The first argument of a method: usually the userdata it belongs to.
local function gen_self(r, pool, entry)
  if entry.self and r.chance(0.9) then
    local want = entry.self
    local candidates = {}
    for i, v in ipairs(pool.values) do
      local tp = type(v) == 'userdata' and getmetatable(v) and getmetatable(v).__name
      local kind = lm.is_tensor(v) and 'tensor' or tp == 'lumen.Sparse' and 'sparse'
        or tp == 'lumen.Trace' and 'trace' or (type(v) == 'table' and getmetatable(v)
        and getmetatable(v).__tostring and 'info')
      if kind == want then candidates[#candidates + 1] = i end
    end
    if #candidates > 0 then
      local i = r.pick(candidates)
      return pool.values[i], pool.labels[i]
    end
  end
  return gen_arg(r, pool, entry.family)
end

-- ------------------------------------------------------------------ signatures

-- Most random argument lists fail at the first check. To reach the code behind the checks, a call
-- follows its function's signature (below) most of the time: each argument is generated by kind,
-- related to the first one (same or broadcastable shapes, dims and indices in range), and then
-- mutated now and then into a nasty value.

local FLOATS = { 'float32', 'float64' }

-- A fresh tensor of the given shape and dtype in a random layout: contiguous, narrowed (strided),
-- permuted, or expanded from size-1 dims (stride 0); floats may require grad (then a view of
-- a leaf, or a result of one).
local function materialize(r, shape, dtype)
  -- (ipairs would follow a hostile table's __index forever)
  if type(shape) ~= 'table' or getmetatable(shape) ~= nil then shape = { 3 } end
  for _, d in ipairs(shape) do
    if math.type(d) ~= 'integer' or d < 0 or d > 64 then shape = { 3 }; break end
  end
  local float = dtype == 'float32' or dtype == 'float64'
  local layout = r.range(1, 5)
  local base_shape = {}
  for i, d in ipairs(shape) do base_shape[i] = d end
  local expand_dims = {}
  if layout == 2 and #shape > 0 then base_shape[#shape] = shape[#shape] * 2 + 1 end
  if layout == 3 then
    local rev = {}
    for i = #shape, 1, -1 do rev[#rev + 1] = base_shape[i] end
    base_shape = rev
  end
  if layout == 4 then
    for i = 1, #shape do
      if r.chance(0.5) then base_shape[i] = 1; expand_dims[i] = true end
    end
  end
  local x
  if float then
    x = lm.randn(base_shape, { dtype = dtype })
    if r.chance(0.1) then x:fill_(r.pick(SPECIAL)) end
  else
    x = lm.randint(dtype == 'uint8' and 0 or -2, 6, base_shape, { dtype = dtype })
  end
  if float and r.chance(0.25) then x:requires_grad_(true) end
  if layout == 2 and #shape > 0 then x = x:narrow(#shape, 2, shape[#shape])
  elseif layout == 3 and #shape > 0 then
    local p = {}
    for i = #shape, 1, -1 do p[#p + 1] = i end
    x = x:permute(p)
  elseif layout == 4 and next(expand_dims) then x = x:expand(shape)
  elseif layout == 5 and float and x.requires_grad then x = x * 1 end
  return x
end

local function open_tensor(v)
  return lm.is_tensor(v) and not v:is_closed() and v or nil
end

-- A shape related to s: the same, broadcastable, with fewer or more dims, or mismatched.
local function related_shape(r, s)
  local t = {}
  for i, d in ipairs(s) do t[i] = d end
  local c = r.range(1, 8)
  if c <= 3 then return t end
  if c == 4 then
    for i = 1, #t do if r.chance(0.5) then t[i] = 1 end end
  elseif c == 5 and #t > 0 then table.remove(t, 1)
  elseif c == 6 and #t < 8 then table.insert(t, 1, r.range(1, 3))
  elseif c == 7 and #t > 0 then local i = r.int(#t); t[i] = t[i] + 1
  elseif #t > 0 then t[r.int(#t)] = 0 end
  return t
end

local function some_shape(r)
  return r.pick(SHAPES)
end

-- A dim of x in Lua terms (1-based, negatives from the end), sometimes out of range.
local function dim_of(r, x, extra)
  local n = math.max((x and x:dim() or 1) + (extra or 0), 1)
  if r.chance(0.1) then return r.pick({ 0, n + 1, -n - 1, 2.5, 1e300 }) end
  local d = r.range(1, n)
  return r.chance(0.3) and d - n - 1 or d
end

-- 1-based indices into a dim of size n, as an int64 tensor of the given shape.
local function index_tensor(r, n, shape)
  local hi = math.max(n, 1)
  local x = lm.randint(1, hi + 1, shape, { dtype = r.chance(0.8) and 'int64' or 'int32' })
  if r.chance(0.1) then x:fill_(r.pick({ 0, -1, n + 1, 2 ^ 31 - 1 })) end
  return x
end

local G = {} -- generators by kind: G[kind](r, pool, args) -> value, label

function G.T(r, pool) -- any pool tensor
  local i = r.int(#pool.tensors)
  return pool.tensors[i], 'T#' .. i
end
function G.Tf(r, pool) -- a float tensor
  for _ = 1, 8 do
    local i = r.int(#pool.tensors)
    local x = open_tensor(pool.tensors[i])
    if x and (x:dtype() == 'float32' or x:dtype() == 'float64') then return x, 'T#' .. i end
  end
  local s = some_shape(r)
  return materialize(r, s, r.pick(FLOATS)), 'fresh float ' .. table.concat(s, 'x')
end
function G.like(r, pool, args) -- related to argument 1
  local x = open_tensor(args[1])
  if not x or r.chance(0.15) then return G.T(r, pool) end
  local s = related_shape(r, x:shape())
  local dt = r.chance(0.7) and x:dtype() or r.pick(DTYPES)
  return materialize(r, s, dt), string.format('fresh %s %s', table.concat(s, 'x'), dt)
end
function G.like_or_num(r, pool, args)
  if r.chance(0.3) then local v = r.pick(NUMBERS); return v, M.describe(v) end
  return G.like(r, pool, args)
end
function G.num(r) local v = r.chance(0.6) and r.pick(SMALL) or r.pick(NUMBERS); return v, M.describe(v) end
function G.count(r) local v = r.chance(0.8) and r.range(0, 5) or r.pick(NUMBERS); return v, M.describe(v) end
function G.bool(r) local v = r.chance(0.5); return v, tostring(v) end
function G.dim(r, _, args) local v = dim_of(r, open_tensor(args[1])); return v, M.describe(v) end
function G.dim1(r, _, args) local v = dim_of(r, open_tensor(args[1]), 1); return v, M.describe(v) end
function G.maybe_dim(r, pool, args)
  if r.chance(0.3) then return nil, 'nil' end
  return G.dim(r, pool, args)
end
function G.index1(r, _, args) -- an index along some dim of argument 1
  local x = open_tensor(args[1])
  local n = x and x:dim() > 0 and x:size(1) or 1
  local v = r.chance(0.85) and r.range(-n, n) or r.pick(NUMBERS)
  return v, M.describe(v)
end
function G.sizes(r, _, args) -- sizes for view/reshape/expand of argument 1, or a fresh shape
  local x = open_tensor(args[1])
  local s
  if x and r.chance(0.7) then
    local n = x:numel()
    s = r.pick({ { n }, { -1 }, { 1, -1 }, { -1, 1 }, x:shape(), related_shape(r, x:shape()) })
  else
    s = related_shape(r, some_shape(r))
  end
  return s, M.describe(s)
end
function G.shape(r) local s = related_shape(r, some_shape(r)); return s, M.describe(s) end
function G.copts(r) -- creation options
  if r.chance(0.4) then return nil, 'nil' end
  local t = {}
  if r.chance(0.6) then t.dtype = r.pick(DTYPES) end
  if r.chance(0.3) then t.requires_grad = r.chance(0.7) end
  if r.chance(0.1) then t.device = r.pick({ 'cpu', 'cuda' }) end
  return t, M.describe(t)
end
-- Option keys by function, so that an options table is valid often enough to get past it.
local OPTKEYS = {
  conv2d = { 'stride', 'padding', 'dilation', 'groups' },
  max_pool2d = { 'stride', 'padding', 'return_indices' }, avg_pool2d = { 'stride', 'padding' },
  cross_entropy = { 'reduction', 'label_smoothing' }, nll_loss = { 'reduction' },
  mse_loss = { 'reduction' }, binary_cross_entropy = { 'reduction' }, gelu = { 'approximate' },
  var = { 'unbiased', 'correction' }, std = { 'unbiased', 'correction' }, backward = { 'retain_graph' },
  gradcheck = { 'eps', 'atol', 'rtol', 'max_elements' },
  reduce = { 'backend', 'algo', 'block', 'coarsen', 'trace', 'trace_cap', 'repeats' },
  scan = { 'backend', 'algo', 'block', 'coarsen', 'trace', 'inclusive', 'trace_cap' },
  histogram = { 'backend', 'algo', 'block', 'coarsen', 'trace', 'trace_cap' },
  matmul = { 'backend', 'algo', 'tile', 'trace', 'trace_cap', 'block' },
  conv2d_k = { 'backend', 'algo', 'tile', 'trace', 'trace_cap', 'block' },
  spmv = { 'backend', 'format', 'block', 'trace', 'trace_cap' },
  divergence = { 'backend', 'pattern', 'warps', 'block', 'trace', 'trace_cap' },
  streams = { 'backend', 'segments', 'bytes', 'copy_engines', 'pcie_gbps', 'clock_ghz', 'sms' },
  latency = { 'global', 'shared', 'constant', 'arith', 'barrier', 'sms' },
  filter = { 'kind', 'space', 'step', 'block', 'warp', 'lane', 'launch' },
}
function G.opts(r, _, _, family, name)
  if r.chance(0.3) then return nil, 'nil' end
  local short = name:match('[:.]([%w_]+)$')
  if name == 'kernels.conv2d' then short = 'conv2d_k' end
  return options_table(r, family, OPTKEYS[short])
end
function G.perm(r, _, args)
  local x = open_tensor(args[1])
  local p = {}
  for i = 1, x and x:dim() or 2 do table.insert(p, r.range(1, #p + 1), i) end
  return p, M.describe(p)
end
function G.idx(r, _, args) -- index tensor for index_select-like use along some dim of argument 1
  local x = open_tensor(args[1])
  local n = x and x:dim() > 0 and x:size(1) or 1
  local shape = r.pick({ { 3 }, { 0 }, { 1 }, { 2, 2 }, {} })
  return index_tensor(r, n, shape), 'index tensor'
end
function G.idx_same(r, _, args) -- index tensor with argument 1's number of dims (gather)
  local x = open_tensor(args[1])
  local s = x and related_shape(r, x:shape()) or { 2 }
  local n = x and x:dim() > 0 and x:size(1) or 1
  return index_tensor(r, n, s), 'index tensor ' .. table.concat(s, 'x')
end
function G.mask(r, _, args)
  local x = open_tensor(args[1])
  local s = x and related_shape(r, x:shape()) or { 2 }
  local m = lm.randint(0, 2, s, { dtype = r.chance(0.8) and 'uint8' or 'int64' })
  return m, 'mask ' .. table.concat(s, 'x')
end
function G.list(r, pool, args) -- tensors of related shapes (cat, stack)
  local t = {}
  local first = G.Tf(r, pool)
  t[1] = first
  for i = 2, r.range(1, 4) do t[i] = (G.like(r, pool, { first })) end
  return t, 'a list of ' .. #t .. ' tensors'
end
function G.mm(r, pool, args) -- a right operand for matmul of argument 1
  local x = open_tensor(args[1])
  if not x or x:dim() == 0 then return G.Tf(r, pool) end
  local k = x:size(-1)
  local s = r.pick({ { k }, { k, r.range(0, 3) }, { 2, k, 2 }, { k + 1, 2 } })
  local dt = r.chance(0.8) and x:dtype() or r.pick(DTYPES)
  return materialize(r, s, dt), 'mm operand ' .. table.concat(s, 'x')
end
function G.image(r) -- (N, C, H, W)
  local s = { r.range(0, 2), r.range(1, 3), r.range(1, 7), r.range(1, 7) }
  if r.chance(0.1) then s = r.pick({ { 2, 5, 5 }, { 1, 1, 0, 4 }, {} }) end
  return materialize(r, s, r.chance(0.9) and r.pick(FLOATS) or r.pick(DTYPES)),
    'image ' .. table.concat(s, 'x')
end
function G.convw(r, _, args)
  local x = open_tensor(args[1])
  local c = x and x:dim() == 4 and x:size(2) or 2
  local s = { r.range(1, 4), r.chance(0.8) and c or r.range(1, 3), r.range(1, 3), r.range(1, 3) }
  return materialize(r, s, x and r.chance(0.9) and x:dtype() or r.pick(FLOATS)),
    'conv weight ' .. table.concat(s, 'x')
end
function G.maybe_bias(r, _, args)
  if r.chance(0.3) then return nil, 'nil' end
  local w = open_tensor(args[2])
  local n = w and w:dim() > 0 and w:size(1) or 3
  if r.chance(0.1) then n = n + 1 end
  return materialize(r, { n }, w and w:dtype() or 'float32'), 'bias ' .. n
end
function G.linw(r, _, args)
  local x = open_tensor(args[1])
  local k = x and x:dim() > 0 and x:size(-1) or 3
  if r.chance(0.1) then k = k + 1 end
  local s = { r.range(0, 4), k }
  return materialize(r, s, x and x:dtype() or 'float32'), 'weight ' .. table.concat(s, 'x')
end
function G.ksize(r)
  local v = r.chance(0.8) and r.range(1, 3) or r.pick({ 0, -1, { 2, 1 }, { 1 }, 2 ^ 40 })
  return v, M.describe(v)
end
G.Fopts = G.opts
function G.normshape(r, _, args)
  local x = open_tensor(args[1])
  local s = {}
  if x and x:dim() > 0 then
    for i = r.range(1, x:dim()), x:dim() do s[#s + 1] = x:size(i) end
  end
  if r.chance(0.15) then s = related_shape(r, s) end
  return s, M.describe(s)
end
function G.normw(r, _, args)
  if r.chance(0.3) then return nil, 'nil' end
  local s = args[2]
  if type(s) ~= 'table' then s = { 3 } end
  return materialize(r, s, r.pick(FLOATS)), 'norm weight'
end
function G.chan(r, _, args) -- per-channel vector for batch_norm
  if r.chance(0.2) then return nil, 'nil' end
  local x = open_tensor(args[1])
  local c = x and x:dim() >= 2 and x:size(2) or 3
  return materialize(r, { c }, x and x:dtype() or 'float32'), 'channels ' .. c
end
function G.embw(r) local s = { r.range(0, 6), r.range(1, 4) }; return materialize(r, s, r.pick(FLOATS)), 'embedding ' .. table.concat(s, 'x') end
function G.embidx(r) return index_tensor(r, 5, r.pick({ { 3 }, { 2, 2 }, {}, { 0 } })), 'indices' end
function G.pads(r, _, args)
  local x = open_tensor(args[1])
  local t = {}
  for i = 1, 2 * r.range(0, math.min(x and x:dim() or 1, 3)) do t[i] = r.range(0, 2) end
  if r.chance(0.1) then t[#t + 1] = r.pick({ -1, 2 ^ 40, 2.5 }) end
  return t, M.describe(t)
end
function G.target(r, _, args) -- class indices for logits argument 1: (N) for (N, C)
  local x = open_tensor(args[1])
  local c = x and x:dim() >= 1 and (x:dim() == 1 and x:size(1) or x:size(2)) or 3
  local s = x and x:dim() >= 2 and { x:size(1) } or {}
  if x and x:dim() > 2 then
    s = x:shape()
    table.remove(s, 2)
  end
  if r.chance(0.1) then s = related_shape(r, s) end
  return index_tensor(r, c, s), 'targets ' .. table.concat(s, 'x')
end
function G.fn(r, pool) local i = r.int(#pool.fns); return pool.fns[i], 'fn#' .. i end
function G.gradinputs(r)
  local t = {}
  for i = 1, r.range(0, 3) do
    t[i] = materialize(r, r.pick({ { 2 }, { 2, 2 }, {}, { 0 } }), r.chance(0.8) and 'float64' or r.pick(DTYPES))
    if r.chance(0.7) and t[i]:dtype() == 'float64' and t[i].is_leaf then t[i]:requires_grad_(true) end
  end
  return t, 'gradcheck inputs (' .. #t .. ')'
end
function G.kvec(r) -- a kernel input: a 1-D float tensor
  local n = r.pick({ 0, 1, 7, 8, 33, 256, 1000, 2049 })
  return materialize(r, { n }, r.chance(0.9) and r.pick(FLOATS) or r.pick(DTYPES)), 'vector ' .. n
end
function G.kmat(r)
  local s = { r.range(0, 20), r.range(0, 20) }
  return materialize(r, s, r.chance(0.9) and r.pick(FLOATS) or r.pick(DTYPES)), 'matrix ' .. table.concat(s, 'x')
end
function G.kmat2(r, _, args)
  local a = open_tensor(args[1])
  local k = a and a:dim() == 2 and a:size(2) or 4
  local s = { r.chance(0.9) and k or k + 1, r.range(0, 20) }
  return materialize(r, s, a and a:dtype() or 'float32'), 'matrix ' .. table.concat(s, 'x')
end
function G.kmask(r, _, args)
  local k = r.pick({ 1, 3, 5, 2, 0, 9 })
  local a = open_tensor(args[1])
  return materialize(r, { k, k }, a and r.chance(0.9) and a:dtype() or r.pick(FLOATS)), 'mask ' .. k
end
function G.bins_input(r)
  if r.chance(0.4) then
    local n = r.pick({ 0, 1, 10, 300 })
    local b = {}
    for i = 1, n do b[i] = string.char(r.range(0, 255)) end
    return table.concat(b), 'bytes ' .. n
  end
  local n = r.pick({ 0, 5, 100 })
  local x = lm.randint(0, 8, { n }, { dtype = r.chance(0.5) and 'uint8' or 'int32' })
  return x, 'bins tensor ' .. n
end
G.kopts = G.opts
function G.format(r) local v = r.pick({ 'coo', 'csr', 'ell', 'jds', 'dia', 3 }); return v, M.describe(v) end
function G.str(r) local v = r.pick(STRINGS); return v, M.describe(v) end
function G.graph(r) -- a result of a small random graph over leaves that require grad
  local dt = r.pick(FLOATS)
  local leaf = lm.randn(r.pick({ { 3 }, { 2, 3 }, { 3, 3 }, { 1, 2, 4, 4 }, {} }), { dtype = dt, requires_grad = true })
  local other = lm.randn(leaf:shape(), { dtype = dt, requires_grad = r.chance(0.5) })
  local y = leaf
  local ops = {
    function(x) return x:t() end, function(x) return x * other end, function(x) return x:exp() end,
    function(x) return x:sum(1, true) end, function(x) return x:expand(2, table.unpack(x:shape())) end,
    function(x) return x:narrow(1, 1, 1) end, function(x) return F.softmax(x, 1) end,
    function(x) return x:matmul(x:t()) end, function(x) return x:max(1) end,
    function(x) return x:index_select(1, lm.tensor({ 1, 1 })) end, function(x) return x:sort() end,
    function(x) return x / (other + 3) end, function(x) return x:pow(2.5) end,
    function(x) return x:flip(1) end, function(x) return F.layer_norm(x, { x:size(-1) }) end,
    function(x) return x:cumsum(1) end, function(x) return x:clamp(-0.5, 0.5) end,
    function(x) return x:var() end, function(x) return x:norm() end, function(x) return x:tile(2) end,
    function(x) return F.max_pool2d(x, 2) end, function(x) return F.conv2d(x, lm.randn(2, x:size(2), 2, 2, { dtype = dt })) end,
    function(x) return x:mean(-1) end, function(x) return lm.where(x:gt(0), x, other) end,
    function(x) return lm.cat({ x, other }, 1) end, function(x) return lm.stack({ x, x }) end,
  }
  for _ = 1, r.range(1, 4) do
    local ok, z = pcall(r.pick(ops), y)
    if ok and lm.is_tensor(z) then y = z end
  end
  if r.chance(0.5) then local ok, z = pcall(function() return y:sum() end); if ok then y = z end end
  return y, 'graph result ' .. table.concat(y:shape(), 'x')
end
function G.sparse_src(r)
  if r.chance(0.5) then return G.kmat(r) end
  local t = { rows = r.pick(OPTS.rows), cols = r.pick(OPTS.cols), vals = r.pick(OPTS.vals),
              shape = r.pick(OPTS.shape) }
  if r.chance(0.2) then t.dtype = r.pick(DTYPES) end
  return t, M.describe(t)
end
function G.trace(r, pool)
  for _ = 1, 8 do
    local v = pool.values[r.int(#pool.values)]
    if type(v) == 'userdata' and getmetatable(v) and getmetatable(v).__name == 'lumen.Trace' then
      return v, 'a trace'
    end
  end
  return G.T(r, pool)
end
function G.sparse(r, pool)
  for _ = 1, 8 do
    local v = pool.values[r.int(#pool.values)]
    if type(v) == 'userdata' and getmetatable(v) and getmetatable(v).__name == 'lumen.Sparse' then
      return v, 'a sparse matrix'
    end
  end
  local ok, sp = pcall(kernels.sparse, lm.randn(r.range(0, 5), r.range(0, 5)):relu())
  return ok and sp or nil, 'fresh sparse'
end
function G.spvec(r, _, args)
  local a = args[1]
  local ok, n = pcall(function() return a.shape[2] end)
  n = ok and n or 3
  if r.chance(0.1) then n = n + 1 end
  return materialize(r, { n }, r.chance(0.8) and 'float32' or r.pick(DTYPES)), 'vector ' .. n
end
function G.key(r, _, args) -- an element-access key for argument 1
  if r.chance(0.1) then
    local k = r.pick({ 'grad', 'requires_grad', 'grad_fn', 'is_leaf', 'shape', 'bogus' })
    return k, M.describe(k)
  end
  local x = open_tensor(args[1])
  local n = x and x:dim() or 1
  if r.chance(0.3) then return G.index1(r, nil, args) end
  local t = {}
  for i = 1, r.range(0, n) do
    local size = x and x:size(i) or 1
    local c = r.range(1, 4)
    if c == 1 then t[i] = r.range(-size, size)
    elseif c == 2 then t[i] = {}
    elseif c == 3 then t[i] = { r.range(-size, size) }
    else t[i] = { r.range(-size, size), r.range(-size, size) } end
  end
  return t, M.describe(t)
end
function G.value(r, pool, args) -- what __newindex stores
  if r.chance(0.1) then return args[1], 'argument 1 itself' end -- x.grad = x, x[1] = x
  if r.chance(0.5) then return G.num(r) end
  local x = open_tensor(args[1])
  local s = r.pick({ {}, { 1 }, x and x:dim() > 0 and { x:size(-1) } or { 2 } })
  return materialize(r, s, r.pick(DTYPES)), 'value ' .. table.concat(s, 'x')
end
function G.counts(r) local t = {}; for i = 1, r.range(0, 3) do t[i] = r.range(0, 3) end; return t, M.describe(t) end

local UNARY = { 'exp', 'log', 'sqrt', 'abs', 'neg', 'sin', 'cos', 'tanh', 'sigmoid', 'relu', 'sign',
                'floor', 'ceil', 'round', 'rsqrt', 'reciprocal', 'square' }
local BINARY = { 'add', 'sub', 'mul', 'div', 'pow', 'maximum', 'minimum', 'eq', 'ne', 'lt', 'le',
                 'gt', 'ge' }
local REDUCE = { 'sum', 'mean', 'prod', 'argmax', 'argmin', 'max', 'min' }

local SIG = {
  ['lm.zeros'] = { 'sizes', 'copts' }, ['lm.ones'] = { 'sizes', 'copts' },
  ['lm.empty'] = { 'sizes', 'copts' }, ['lm.rand'] = { 'sizes', 'copts' },
  ['lm.randn'] = { 'sizes', 'copts' }, ['lm.full'] = { 'shape', 'num', 'copts' },
  ['lm.full_like'] = { 'T', 'num', 'copts' }, ['lm.arange'] = { 'num', 'num', 'num', 'copts' },
  ['lm.linspace'] = { 'num', 'num', 'count', 'copts' }, ['lm.eye'] = { 'count', 'count', 'copts' },
  ['lm.randint'] = { 'num', 'num', 'shape', 'copts' }, ['lm.tensor'] = { 'nested', 'copts' },
  ['lm.manual_seed'] = { 'count' }, ['lm.set_rng_state'] = { 'count', 'count' },
  view = { 'T', 'sizes' }, reshape = { 'T', 'sizes' }, expand = { 'T', 'sizes' },
  expand_as = { 'T', 'like' }, transpose = { 'T', 'dim', 'dim' }, permute = { 'T', 'perm' },
  narrow = { 'T', 'dim', 'index1', 'count' }, select = { 'T', 'dim', 'index1' },
  squeeze = { 'T', 'maybe_dim' }, unsqueeze = { 'T', 'dim1' }, flatten = { 'T', 'dim', 'dim' },
  where = { 'mask', 'like_or_num', 'like_or_num' }, matmul = { 'T', 'mm' }, mm = { 'T', 'mm' },
  clamp = { 'T', 'num', 'num' }, clamp_ = { 'T', 'num', 'num' }, fill_ = { 'T', 'num' },
  copy_ = { 'T', 'like' }, var = { 'T', 'maybe_dim', 'bool', 'opts' },
  std = { 'T', 'maybe_dim', 'bool', 'opts' }, norm = { 'T', 'num', 'maybe_dim', 'bool' },
  cat = { 'list', 'dim' }, stack = { 'list', 'dim1' }, index_select = { 'T', 'dim', 'idx' },
  gather = { 'T', 'dim', 'idx_same' }, scatter_add = { 'T', 'dim', 'idx_same', 'like' },
  masked_fill = { 'T', 'mask', 'num' }, sort = { 'T', 'maybe_dim', 'bool' },
  topk = { 'T', 'count', 'maybe_dim', 'bool' }, one_hot = { 'idx', 'count' },
  cumsum = { 'T', 'dim' }, tril = { 'T', 'num' }, triu = { 'T', 'num' }, tile = { 'T', 'counts' },
  ['repeat'] = { 'T', 'counts' }, flip = { 'T', 'counts' }, requires_grad_ = { 'T', 'bool' },
  backward = { 'graph', 'like', 'opts' }, ['lm.set_memory_limit'] = { 'count' },
  ['lm.set_num_threads'] = { 'count' }, ['lm.set_grad_enabled'] = { 'bool' },
  ['lm.sys.listdir'] = { 'str' }, ['lm.sys.isdir'] = { 'str' },
  ['sparse:arrays'] = { 'sparse', 'format' }, ['sparse:dense'] = { 'sparse' },
  ['sparse:row_nnz'] = { 'sparse' }, ['Sparse.__index'] = { 'sparse', 'str' },
  ['Sparse.__tostring'] = { 'sparse' }, ['trace:filter'] = { 'trace', 'opts' }, ['lm.no_grad'] = { 'fn', 'T' },
  ['lm.autograd.gradcheck'] = { 'fn', 'gradinputs', 'opts' }, size = { 'T', 'dim' },
  stride = { 'T', 'dim' }, to = { 'T', 'copts' }, uniform_ = { 'T', 'num', 'num' },
  normal_ = { 'T', 'num', 'num' }, bernoulli_ = { 'T', 'num' }, softmax = { 'T', 'dim' },
  log_softmax = { 'T', 'dim' }, shares_storage = { 'T', 'like' },
  ['F.linear'] = { 'Tf', 'linw', 'maybe_bias' }, ['F.conv2d'] = { 'image', 'convw', 'maybe_bias', 'Fopts' },
  ['F.max_pool2d'] = { 'image', 'ksize', 'Fopts' }, ['F.avg_pool2d'] = { 'image', 'ksize', 'Fopts' },
  ['F.dropout'] = { 'T', 'num', 'bool' }, ['F.layer_norm'] = { 'Tf', 'normshape', 'normw', 'normw', 'num' },
  ['F.batch_norm'] = { 'image', 'chan', 'chan', 'chan', 'chan', 'bool', 'num', 'num' },
  ['F.embedding'] = { 'embidx', 'embw' }, ['F.pad'] = { 'T', 'pads', 'num' },
  ['F.cross_entropy'] = { 'Tf', 'target', 'Fopts' }, ['F.nll_loss'] = { 'Tf', 'target', 'Fopts' },
  ['F.mse_loss'] = { 'Tf', 'like', 'Fopts' }, ['F.binary_cross_entropy'] = { 'Tf', 'like', 'Fopts' },
  ['F.leaky_relu'] = { 'T', 'num' }, ['F.gelu'] = { 'T', 'Fopts' }, ['F.softmax'] = { 'T', 'dim' },
  ['F.log_softmax'] = { 'T', 'dim' }, ['F.one_hot'] = { 'idx', 'count' },
  ['kernels.reduce'] = { 'kvec', 'kopts' }, ['kernels.scan'] = { 'kvec', 'kopts' },
  ['kernels.histogram'] = { 'bins_input', 'count', 'kopts' }, ['kernels.matmul'] = { 'kmat', 'kmat2', 'kopts' },
  ['kernels.conv2d'] = { 'kmat', 'kmask', 'kopts' }, ['kernels.sparse'] = { 'sparse_src' },
  ['kernels.spmv'] = { 'sparse', 'spvec', 'kopts' }, ['kernels.divergence'] = { 'kopts' },
  ['kernels.streams'] = { 'kopts' }, ['kernels.latency'] = { 'opts' },
  ['Tensor.__index'] = { 'T', 'key' }, ['Tensor.__newindex'] = { 'T', 'key', 'value' },
}
for _, k in ipairs(UNARY) do SIG[k] = { 'T' }; SIG[k .. '_'] = { 'T' } end
for _, k in ipairs(BINARY) do SIG[k] = { 'T', 'like_or_num' }; SIG[k .. '_'] = { 'T', 'like_or_num' } end
for _, k in ipairs(REDUCE) do SIG[k] = { 'T', 'maybe_dim', 'bool' } end
for _, k in ipairs({ 'add', 'sub', 'mul', 'div', 'pow' }) do SIG['Tensor.__' .. k] = { 'T', 'like_or_num' } end

function G.nested(r)
  local s = some_shape(r)
  local gen = r.chance(0.5) and function() return r.range(-3, 3) end or function() return r.pick(NUMBERS) end
  if #s == 0 then local v = gen(); return v, M.describe(v) end
  if numel(s) == 0 then return {}, '{}' end
  local t = nested(s, 1, gen)
  return t, 'nested ' .. table.concat(s, 'x')
end

-- The signature of an API entry: by full name, else by the name after the prefix.
local function signature(entry)
  return SIG[entry.name] or SIG[entry.name:match('[:.]([%w_]+)$')]
end

-- ------------------------------------------------------------------ checks

M.FUZZ_ERROR = setmetatable({}, { __tostring = function() return 'fuzzfn: a table error' end })

-- Error messages must name a function of the API (or be an error a fuzz function raised).
local NAMES = { 'lm%.', 'Tensor[:.]', 'F%.', 'nn%.', 'kernels%.', 'Sparse[:.]', 'sparse:', 'Trace[:.]',
                'trace:', 'fuzzfn:' }

local function names_function(msg)
  local m = msg:gsub('^[^\n]-:%d+: ', '') -- "file:line: " from luaL_error, when there is one
  for _, p in ipairs(NAMES) do
    if m:find('^' .. p .. '[%w_.]*[: ]') then return true end
  end
  return false
end

local function check_error(err)
  if err == M.FUZZ_ERROR then return nil end
  if type(err) ~= 'string' then return 'raised a non-string error (' .. type(err) .. ')' end
  if err:find('fuzzhang:', 1, true) then return err end
  if err:find('^[^\n]-fuzz/fuzz%.lua:%d+: ') then return nil end -- raised by a fuzz function
  if not names_function(err) then return 'error does not name a function: ' .. err end
  if #err > 2000 then return 'error message of ' .. #err .. ' bytes' end
  return nil
end

-- A returned tensor must be usable: shape and numel agree, tostring and tolist work.
local function check_result(v)
  if not lm.is_tensor(v) or v:is_closed() then
    if type(v) == 'userdata' and getmetatable(v) and getmetatable(v).__tostring then
      local ok, e = pcall(tostring, v)
      if not ok then return 'tostring of the result failed: ' .. tostring(e) end
    end
    return nil
  end
  local ok, e = pcall(function()
    local s, n = v:shape(), 1
    for _, d in ipairs(s) do
      assert(math.type(d) == 'integer' and d >= 0, 'bad size in shape')
      n = n * d
    end
    assert(n == v:numel(), 'numel ' .. v:numel() .. ' ~= product of the shape ' .. n)
    assert(#s == v:dim(), 'dim disagrees with the shape')
    assert(type(tostring(v)) == 'string')
    if n <= 20000 then
      local okl, l = pcall(v.tolist, v) -- may refuse (too many tables), naming itself
      if okl and #s > 0 then assert(#l == s[1], 'tolist length') end
      if not okl then assert(names_function(l), l) end
    end
  end)
  if not ok then return 'the result is unusable: ' .. tostring(e) end
  return nil
end

-- ------------------------------------------------------------------ running

local LIMIT = 512 * 2 ^ 20 -- bytes: a call asking for more fails fast instead of taking long

local function restore(state)
  lm.sys.fail_alloc_after(0)
  lm.set_grad_enabled(true)
  lm.set_memory_limit(LIMIT)
  if lm.get_num_threads() ~= state.threads then lm.set_num_threads(state.threads) end
  if state.latency_changed then kernels.latency('default'); state.latency_changed = false end
  if kernels.racecheck() ~= state.racecheck then kernels.racecheck(state.racecheck) end
end

local function live()
  collectgarbage()
  collectgarbage()
  local m = lm.memory()
  return m.live_bytes, m.live_tensors
end

-- Runs the calls of one episode; stops after `upto` calls when given. Returns the list of
-- failures ({episode=, call=, what=, text=}) and the text of the last call. opts.trace prints each
-- call before it runs.
local function run_episode(api, seed, e, opts, upto, state)
  local r = new_rng(seed, e)
  lm.manual_seed(seed * 1000003 + e)
  local failures, last = {}, nil
  local pool = make_pool(r)
  local ncalls = upto or opts.calls
  -- wrong answers: results checked against the same computation in plain Lua (oracle.lua), from
  -- a stream of their own, so a replay of the calls (upto) draws the same calls without them
  local ro = new_rng(seed, e + 0x10000000)
  for k = 1, upto and 0 or (opts.oracle or 0) do
    local ok, diff = pcall(oracle.check, ro)
    if not ok or diff then
      failures[#failures + 1] = { episode = e, call = 0, text = string.format(
        'seed %d episode %d oracle check %d', seed, e, k), what = 'wrong answer: ' .. tostring(diff) }
    end
  end
  for c = 1, ncalls do
    local entry = api[r.int(#api)]
    local args, labels, n = {}, {}, r.pick({ 0, 1, 1, 2, 2, 2, 3, 3, 4, 5 })
    local sig = signature(entry)
    if sig and r.chance(0.75) then -- by the signature, each argument mutated now and then
      n = #sig
      if r.chance(0.15) then n = r.range(0, #sig + 1) end
      for i = 1, n do
        local ok = false
        if sig[i] and G[sig[i]] and not r.chance(0.06) then
          -- a generator may fail (a shape too large for a related tensor): then a random value
          ok, args[i], labels[i] = pcall(G[sig[i]], r, pool, args, entry.family, entry.name)
        end
        if not ok then
          args[i], labels[i] = gen_arg(r, pool, entry.family)
        end
      end
    else
      if n > 0 or entry.self then
        n = math.max(n, 1)
        args[1], labels[1] = gen_self(r, pool, entry)
      end
      for i = 2, n do args[i], labels[i] = gen_arg(r, pool, entry.family) end
      if r.chance(0.01) then -- very many arguments (a C function is only promised 20 free slots)
        for i = n + 1, n + r.range(20, 250) do args[i], labels[i] = r.pick(SMALL), '1' end
        n = #labels
      end
    end
    local inject = r.chance(opts.inject or 0.05) and r.range(1, 12) or nil
    local in_coroutine = r.chance(0.03)
    local garbage = r.chance(0.05) -- garbage whose finalizer closes a tensor of the pool
    local text = string.format('seed %d episode %d call %d: %s(%s)%s%s%s', seed, e, c, entry.name,
      table.concat(labels, ', ', 1, n), inject and (' [allocation ' .. inject .. ' fails]') or '',
      in_coroutine and ' [in a coroutine]' or '', garbage and ' [garbage with a finalizer]' or '')
    if opts.trace then io.stderr:write(text, '\n'); io.stderr:flush() end
    if garbage then -- finalizers that run API calls wherever the collector runs them
      local victim = pool.tensors[r.int(#pool.tensors)]
      local act = r.range(1, 4)
      setmetatable({}, { __gc = function()
        if act == 1 then victim:close()
        elseif act == 2 then victim:fill_(7)
        elseif act == 3 then victim.grad = nil; victim:requires_grad_(false)
        else local _ = lm.zeros(1000) + victim end
      end })
    end
    if entry.name == 'kernels.latency' then state.latency_changed = true end
    local t0 = lm.sys.clock()
    -- a Lua loop (in a Lua-side API function) that runs past the limit is stopped here; C loops
    -- are caught by the child process's timeout in run.lua
    local limit = opts.slow or 5
    debug.sethook(function()
      if lm.sys.clock() - t0 > limit then error('fuzzhang: a Lua loop ran past ' .. limit .. ' s', 0) end
    end, '', 1000000)
    if inject then lm.sys.fail_alloc_after(inject) end
    local res
    if in_coroutine then
      local co = coroutine.create(function() return table.pack(pcall(entry.fn, table.unpack(args, 1, n))) end)
      local ok, packed = coroutine.resume(co)
      res = ok and packed or { n = 2, false, 'fuzzfn: coroutine failed: ' .. tostring(packed) }
    else
      res = table.pack(pcall(entry.fn, table.unpack(args, 1, n)))
    end
    debug.sethook()
    restore(state)
    local dt = lm.sys.clock() - t0
    if opts.stats then
      local st = opts.stats[entry.name] or { calls = 0, ok = 0 }
      opts.stats[entry.name] = st
      st.calls = st.calls + 1
      if res[1] then st.ok = st.ok + 1 end
    end
    if opts.show and entry.name:find(opts.show, 1, true) then
      print(text, res[1] and 'returned' or ('raised ' .. tostring(res[2])))
    end
    local problem
    if res[1] then
      for i = 2, res.n do problem = problem or check_result(res[i]) end
    else
      problem = check_error(res[2])
    end
    if not problem and dt > (opts.slow or 5) then problem = string.format('took %.1f s', dt) end
    if problem then
      failures[#failures + 1] = { episode = e, call = c, what = problem, text = text }
      if opts.stop_on_failure then break end
    end
    res = nil
    last = text
  end
  return failures, last
end

-- Runs opts.episodes episodes of opts.calls calls from seed (opts.first_episode, default 1).
-- Returns failures, stats.
function M.run(seed, opts)
  local api = M.api()
  local state = { threads = lm.get_num_threads(), racecheck = kernels.racecheck() }
  local rng_seed, rng_offset = lm.rng_state()
  local saved_limit = lm.set_memory_limit(LIMIT)
  local failures, stats = {}, { calls = 0, episodes = 0 }
  local first = opts.first_episode or 1
  local log = opts.log or function() end
  for e = first, first + opts.episodes - 1 do
    local b0, t0 = live()
    local f = run_episode(api, seed, e, opts, opts.upto, state)
    for _, x in ipairs(f) do failures[#failures + 1] = x end
    local b1, t1 = live()
    stats.calls = stats.calls + (opts.upto or opts.calls)
    stats.episodes = stats.episodes + 1
    if (b1 ~= b0 or t1 ~= t0) and not opts.upto then
      -- confirm (a first use may allocate something that lives on), then find the shortest
      -- leaking prefix of the episode's calls
      local b2, t2 = live()
      run_episode(api, seed, e, opts, nil, state)
      local b3, t3 = live()
      if b3 ~= b2 or t3 ~= t2 then
        local lo, hi = 1, opts.calls
        while lo < hi do
          local mid = (lo + hi) // 2
          local bb, tt = live()
          run_episode(api, seed, e, opts, mid, state)
          local ba, ta = live()
          if ba ~= bb or ta ~= tt then hi = mid else lo = mid + 1 end
        end
        local bb, tt = live()
        local _, last = run_episode(api, seed, e, opts, lo, state)
        local ba, ta = live()
        failures[#failures + 1] = { episode = e, call = lo, text = last, what = string.format(
          'leak: %d bytes, %d tensors left after the episode; calls 1..%d leak %d bytes (the last '
          .. 'of them is shown)', b3 - b2, t3 - t2, lo, ba - bb) }
      end
    end
    log(e, #failures)
    if opts.stop_on_failure and #failures > 0 then break end
  end
  lm.set_memory_limit(saved_limit)
  lm.sys.fail_alloc_after(0)
  lm.set_grad_enabled(true)
  lm.set_rng_state(rng_seed, rng_offset)
  return failures, stats
end

return M
