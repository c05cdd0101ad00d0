--[[
lumen — `require 'lumen'` (preloaded as the global `lm` in scripts and the REPL).

The tensor type and its functions are C bindings (src/lua/, loaded here as 'lumen.core'); this
file adds the parts that read better in Lua: lm.allclose, lm.equal, the dtype constants, and the
names docs/API.md promises that this build does not have yet (lm.planned), which say so wherever
a user meets them. Names follow docs/API.md. Read next: lumen/test.lua.
]]
local lm = require 'lumen.core'
lm.autograd.Function = require('lumen.autograd').Function -- Lua forward and backward (lumen/autograd.lua)

-- ---------------------------------------------------------------- dtypes

-- lm.float32 ... lm.q4_0 (and PyTorch's aliases lm.float, lm.double, lm.int, lm.long, lm.half) are
-- the dtype names, so {dtype = lm.float64} works and x:dtype() == lm.float64 compares names.
for _, name in ipairs({ 'float32', 'float64', 'int32', 'int64', 'uint8', 'int8', 'float16', 'bfloat16',
  'q8_0', 'q4_0' }) do lm[name] = name end
lm.float, lm.double, lm.int, lm.long, lm.half = 'float32', 'float64', 'int32', 'int64', 'float16'

-- ---------------------------------------------------------------- helpers in Lua

-- Raises "<fname>: <what> must be a tensor, got X" unless v is an open tensor.
local function check_tensor(fname, v, what)
  if not lm.is_tensor(v) then
    error(string.format('%s: %s must be a tensor, got %s', fname, what, type(v)), 3)
  elseif v:is_closed() then
    error(string.format('%s: %s: tensor is closed', fname, what), 3)
  end
end

-- Runs fn(...) and re-raises its error as fname's: a Lua function built on other bindings must
-- not report "Tensor:__sub: ..." for a call the user made to lm.allclose.
local function as(fname, fn, ...)
  local ok, a, b = pcall(fn, ...)
  if ok then return a, b end
  local msg = tostring(a):gsub('^[^:\n]*:%d+: ', ''):gsub('^[%w_.:]+: ', '', 1)
  error(fname .. ': ' .. msg, 3)
end

local function allclose(a, b, rtol, atol)
  local ok = (a - b):abs():le(lm.abs(b) * rtol + atol)
  return ok:numel() == 0 or ok:min():item() == 1
end

--- lm.allclose(a, b [, rtol [, atol]]): |a - b| <= atol + rtol * |b| everywhere (broadcasting);
--- NaNs are never close. Defaults as PyTorch: rtol 1e-5, atol 1e-8.
function lm.allclose(a, b, rtol, atol)
  check_tensor('lm.allclose', a, 'argument 1')
  check_tensor('lm.allclose', b, 'argument 2')
  rtol, atol = rtol or 1e-5, atol or 1e-8
  if math.type(rtol) == nil or math.type(atol) == nil then
    error(string.format('lm.allclose: rtol and atol must be numbers, got %s and %s', type(rtol),
      type(atol)), 2)
  end
  return as('lm.allclose', allclose, a, b, rtol, atol)
end

--- lm.equal(a, b): same shape and the same values.
function lm.equal(a, b)
  check_tensor('lm.equal', a, 'argument 1')
  check_tensor('lm.equal', b, 'argument 2')
  local sa, sb = a:shape(), b:shape()
  if #sa ~= #sb then return false end
  for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
  return a:numel() == 0 or as('lm.equal', function() return a:eq(b):min():item() == 1 end)
end

-- ---------------------------------------------------------------- names not built yet

--[[
lm.planned: what docs/API.md promises and this build may not have, by where a user meets it:
`globals` (nn, optim, ...: the modules a script or the REPL sees as globals), `lm`, `lm.cuda`,
`Tensor` (methods). Each entry is a short phrase saying what it is. A name that exists (the module
file is there, the function is set) is simply found; one that does not says so when used, instead
of Lua's "attempt to index a nil value": reading `nn` in a script, calling lm.save, x:pin_memory.
Lists, not code: when a module lands, its entry stays and is no longer reached. Tests add entries
of their own to check the mechanism (tests/lua/test_first_hour.lua).
]]
lm.planned = {
  globals = {
    nn = "the 'nn' module (layers, losses, initialisers)",
    optim = "the 'optim' module (optimisers and learning-rate schedulers)",
    data = "the 'data' module (data sets and loaders)",
    viz = "the 'viz' module (the visualizer)",
  },
  lm = {
    save = 'saving tensors (safetensors files)',
    load = 'loading tensors (safetensors files)',
    save_npy = 'saving NumPy .npy files',
    load_npy = 'loading NumPy .npy files',
  },
  ['lm.cuda'] = {},
  Tensor = {},
}

-- The message for a planned name that is not built (full: the name as the user wrote it).
local function not_built(full, what)
  local help = full:gsub('^lm%.nn%.', 'nn.')
  return string.format('%s is not built yet: %s comes with a later version of Lumen (docs/API.md '
    .. 'promises it; :help %s says what it will do)', full, what, help)
end

-- Makes t answer its planned names (lm.planned[where]) with the message above; other missing
-- names stay nil. Keeps an __index the table already had.
local function guard(t, where, prefix)
  local mt = getmetatable(t) or {}
  if type(mt) ~= 'table' or rawget(mt, '__metatable') ~= nil then
    error('lm._guard_globals: the table has a protected metatable', 3)
  end
  local old = rawget(mt, '__index')
  mt.__index = function(tbl, k)
    if where == 'globals' and lm._lazy[k] then -- a module of the program, loaded on first use
      local m = require(k)
      rawset(tbl, k, m)
      return m
    end
    if where == 'lm' and k == 'vision' then -- lumen/vision.lua (boxes), on first use
      local v = require 'lumen.vision'
      rawset(tbl, 'vision', v)
      return v
    end
    if where == 'lm' and (k == 'compile' or k == 'graph') then -- lumen/graph.lua, on first use
      local g = require 'lumen.graph'
      rawset(tbl, 'graph', g)
      rawset(tbl, 'compile', g.compile)
      return rawget(tbl, k)
    end
    if where == 'lm' and k == 'tune' then -- lumen/tune.lua (operator-level autotuning), on first use
      local f = require('lumen.tune').tune
      rawset(tbl, 'tune', f)
      return f
    end
    if where == 'lm' and (k == 'quant' or k == 'autocast') then -- lumen/quant.lua, on first use
      local q = require 'lumen.quant'
      rawset(tbl, 'quant', q)
      rawset(tbl, 'autocast', q.autocast)
      return rawget(tbl, k)
    end
    local list = lm.planned[where]
    local what = type(k) == 'string' and list and rawget(list, k)
    if what then error(not_built(prefix .. k, what), 2) end
    if type(old) == 'function' then return old(tbl, k) end
    if type(old) == 'table' then return old[k] end
    return nil
  end
  setmetatable(t, mt)
end

guard(lm, 'lm', 'lm.')
if type(lm.cuda) == 'table' then guard(lm.cuda, 'lm.cuda', 'lm.cuda.') end
-- Tensor methods: the C __index asks this function about a key that is neither a method nor a
-- field (src/lua/tensor.c), so x:pin_memory() says what it is instead of "attempt to call nil".
lm._tensor_missing = function(k)
  local what = type(k) == 'string' and rawget(lm.planned.Tensor, k)
  if what then error(not_built('Tensor:' .. k, what), 3) end
end

--- The lumen program's module globals (nn, optim, data, kernels, viz, lesson: src/app/state.c
--- names those this build has), each required the first time its global is read.
lm._lazy = {}

--- The global name, loading it first if it is one of lm._lazy (for code that looks at globals
--- without reading them: completion, :help); nil when there is none, never an error.
function lm._global(name)
  local v = rawget(_G, name)
  if v ~= nil or not lm._lazy[name] then return v end
  local m = require(name)
  rawset(_G, name, m)
  return m
end

--- For the lumen program's globals (src/app/state.c): a planned module that is not built says so
--- when a script or the REPL reads its global, instead of being nil.
function lm._guard_globals(env)
  if type(env) ~= 'table' then
    error('lm._guard_globals: env must be a table, got ' .. type(env), 2)
  end
  guard(env, 'globals', '')
end

-- F.scaled_dot_product_attention, F.adaptive_avg_pool2d, F.interpolate and F.group_norm are
-- written in Lua (lumen/nn/attention.lua, resize.lua, norm.lua), loaded on first call.
if type(lm.nn) == 'table' and type(rawget(lm.nn, 'functional')) == 'table' then
  local Fn = rawget(lm.nn, 'functional')
  Fn.scaled_dot_product_attention = function(...)
    return require('lumen.nn.attention').scaled_dot_product_attention(...)
  end
  Fn.adaptive_avg_pool2d = function(...) return require('lumen.nn.resize').adaptive_avg_pool2d(...) end
  Fn.interpolate = function(...) return require('lumen.nn.resize').interpolate(...) end
  Fn.group_norm = function(...) return require('lumen.nn.norm').group_norm(...) end
  -- F.silu(x) = x * sigmoid(x) (the swish of diffusion U-Nets), composed: its gradient is the ops'
  Fn.silu = function(x)
    if not lm.is_tensor(x) then error('F.silu: input must be a tensor, got ' .. type(x), 2) end
    return x * x:sigmoid()
  end
end

-- lm.nn is the functional half (lm.nn.functional, F); torch.nn.Linear is nn.Linear here, so
-- lm.nn.<name> reaches the nn module once it exists (and says it is not built before).
if type(lm.nn) == 'table' then
  local loading = false
  setmetatable(lm.nn, { __index = function(_, k)
    if type(k) ~= 'string' or loading then return nil end
    loading = true
    local ok, nn = pcall(require, 'nn')
    loading = false
    if ok and type(nn) == 'table' then return nn[k] end
    if not ok and tostring(nn):find('not built yet', 1, true) then
      error(not_built('lm.nn.' .. k, lm.planned.globals.nn), 2)
    end
    return nil
  end })
end

return lm
