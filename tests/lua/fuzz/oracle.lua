--[[
oracle.lua — the fuzzer's check for wrong answers: random small tensors of every dtype and layout
(contiguous, narrowed, permuted, expanded), random ops on them, and the same computation done
again in plain Lua on x:tolist(), element by element. Covers the Lua-facing rules that the core's
op table does not see: broadcasting with numbers on either side, dtype promotion (float64 >
float32 > int64 > int32 > uint8, integer division giving float32, comparisons giving uint8),
integer wrap-around, 1-based dims, indices and ranges, keepdim, x[{...}] reads and writes.

M.check(r) runs one random check with the fuzzer's generator r and returns nil, or a text saying
what differed (with the op and the inputs). Read next: fuzz.lua.
]]
local lm = require 'lumen'

local M = {}

local DTYPES = { 'float32', 'float64', 'int32', 'int64', 'uint8' }
local RANK = { uint8 = 1, int32 = 2, int64 = 3, float32 = 4, float64 = 5 }
local function is_float(dt) return dt == 'float32' or dt == 'float64' end
local function promote(a, b) return RANK[a] >= RANK[b] and a or b end

-- ------------------------------------------------------------------ Lua-side tensors

-- A tensor as {shape=, data=} (data flat, C order) from x:tolist().
local function flat(x)
  local shape, data = x:shape(), {}
  local function walk(v, d)
    if d > #shape then data[#data + 1] = v; return end
    for i = 1, shape[d] do walk(v[i], d + 1) end
  end
  walk(x:tolist(), 1)
  return { shape = shape, data = data }
end

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

-- The 0-based multi-index of flat position k (0-based) in shape.
local function unravel(k, shape)
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = k % shape[d]
    k = k // shape[d]
  end
  return idx
end

local function ravel(idx, shape)
  local k = 0
  for d = 1, #shape do k = k * shape[d] + idx[d] end
  return k
end

-- Integer wrap-around to a dtype (Lua integers wrap at 64 bits already).
local function wrap(v, dt)
  if dt == 'int32' then
    v = v & 0xffffffff
    return v >= 0x80000000 and v - 0x100000000 or v
  elseif dt == 'uint8' then
    return v & 0xff
  end
  return v
end

-- A float converted to an integer dtype as documented (docs/lua.md, "Conversions"): truncation
-- toward zero, then modulo 2^bits as integers wrap; NaN and infinities give 0.
local function to_int(v, dt)
  if v ~= v or v == math.huge or v == -math.huge then return 0 end
  local t = v < 0 and math.ceil(v) or math.floor(v)
  local i = math.tointeger(t)
  if not i then -- |t| >= 2^63: an integer multiple of 2^11; its remainder mod 2^64 is exact
    local m = math.fmod(t, 2 ^ 64)
    if m < 0 then m = m + 2 ^ 64 end
    i = m >= 2 ^ 63 and math.tointeger(m - 2 ^ 64) or math.tointeger(m)
  end
  return wrap(i, dt)
end

local function f32(v) return string.unpack('f', string.pack('f', v)) end

-- The value v (a Lua number) as stored in dtype dt.
local function store(v, dt)
  if dt == 'float64' then return v * 1.0 end
  if dt == 'float32' then return f32(v) end
  if math.type(v) == 'integer' then return wrap(v, dt) end -- a number in arithmetic wraps
  return to_int(v, dt)
end

local function close_enough(got, want, dt)
  if want ~= want then return got ~= got end
  if got == want then return true end
  if not is_float(dt) then return false end
  if want == math.huge or want == -math.huge then return got == want end
  local tol = dt == 'float32' and 2e-6 or 1e-12
  return math.abs(got - want) <= tol * math.max(1, math.abs(want))
end

-- ------------------------------------------------------------------ inputs

local function values(r, dt)
  if dt == 'uint8' then return function() return r.range(0, 6) end end
  if not is_float(dt) then return function() return r.range(-4, 6) end end
  return function()
    if r.chance(0.05) then return r.pick({ 0 / 0, math.huge, -math.huge, 0.0, -0.0 }) end
    return r.range(-400, 400) / 100
  end
end

-- A tensor of shape and dtype with values from gen, in a random layout.
local function tensor(r, shape, dt, gen)
  gen = gen or values(r, dt)
  local layout = #shape > 0 and r.range(1, 4) or 1
  local base = {}
  for i, s in ipairs(shape) do base[i] = s end
  if layout == 2 then base[#base] = base[#base] + 2 end
  if layout == 3 then
    local rev = {}
    for i = #shape, 1, -1 do rev[#rev + 1] = shape[i] end
    base = rev
  end
  local vals = {}
  for i = 1, numel(base) do vals[i] = gen() end
  local x
  if #base == 0 then x = lm.tensor(gen(), { dtype = dt })
  elseif numel(base) == 0 then x = lm.zeros(base, { dtype = dt })
  else x = lm.tensor(vals, { dtype = dt }):view(base) end
  if layout == 2 then x = x:narrow(#shape, 2, shape[#shape])
  elseif layout == 3 then
    local p = {}
    for i = #shape, 1, -1 do p[#p + 1] = i end
    x = x:permute(p)
  elseif layout == 4 then
    -- a size-1 dim expanded: only where the shape says 1 is no expansion possible
    local d = r.int(#shape)
    if shape[d] > 1 then
      local one = {}
      for i, s in ipairs(shape) do one[i] = i == d and 1 or s end
      local small = {}
      for i = 1, numel(one) do small[i] = gen() end
      x = numel(one) > 0 and lm.tensor(small, { dtype = dt }):view(one):expand(shape)
        or lm.zeros(shape, { dtype = dt })
    end
  end
  return x
end

local function some_shape(r)
  local n = r.range(0, 3)
  local s = {}
  for i = 1, n do s[i] = r.pick({ 1, 2, 3, 4, 0, 1, 2, 3 }) end
  return s
end

-- A shape broadcastable with s.
local function broadcastable(r, s)
  local t = {}
  local drop = r.range(0, #s)
  for i = drop + 1, #s do t[#t + 1] = r.chance(0.3) and 1 or s[i] end
  return t
end

local function bshape(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local x = a[#a - n + i] or 1
    local y = b[#b - n + i] or 1
    out[i] = x == 1 and y or x
  end
  return out
end

-- Element of f (a flat tensor) at the broadcast index idx of the output shape.
local function at(f, idx)
  local k, n = 0, #f.shape
  local off = #idx - n
  for d = 1, n do k = k * f.shape[d] + (f.shape[d] == 1 and 0 or idx[off + d]) end
  return f.data[k + 1]
end

local function show(x)
  if lm.is_tensor(x) then
    local ok, s = pcall(function()
      return string.format('%s %s %s', x:dtype(), table.concat(x:shape(), 'x'),
        (tostring(x):gsub('\n', ' ')))
    end)
    return ok and s or 'a tensor'
  end
  return tostring(x)
end

-- Compares tensor y with the expected shape, dtype and flat values; returns nil or a text.
local function compare(y, shape, dt, want)
  if not lm.is_tensor(y) then return 'result is not a tensor: ' .. tostring(y) end
  if dt and y:dtype() ~= dt then return 'dtype ' .. y:dtype() .. ', expected ' .. dt end
  local ys = y:shape()
  if table.concat(ys, ',') ~= table.concat(shape, ',') then
    return 'shape [' .. table.concat(ys, ', ') .. '], expected [' .. table.concat(shape, ', ') .. ']'
  end
  local got = flat(y).data
  for i = 1, #want do
    if not close_enough(got[i], want[i], y:dtype()) then
      return string.format('element %d is %s, expected %s', i, tostring(got[i]), tostring(want[i]))
    end
  end
  return nil
end

-- ------------------------------------------------------------------ checks

local BINARY = {
  add = function(a, b) return a + b end, sub = function(a, b) return a - b end,
  mul = function(a, b) return a * b end, div = function(a, b) return a / b end,
  maximum = function(a, b)
    if a ~= a or b ~= b then return 0 / 0 end
    return a > b and a or b
  end,
  minimum = function(a, b)
    if a ~= a or b ~= b then return 0 / 0 end
    return a < b and a or b
  end,
  eq = function(a, b) return a == b and 1 or 0 end, ne = function(a, b) return a ~= b and 1 or 0 end,
  lt = function(a, b) return a < b and 1 or 0 end, le = function(a, b) return a <= b and 1 or 0 end,
  gt = function(a, b) return a > b and 1 or 0 end, ge = function(a, b) return a >= b and 1 or 0 end,
}
local BINARY_NAMES = {}
for k in pairs(BINARY) do BINARY_NAMES[#BINARY_NAMES + 1] = k end
table.sort(BINARY_NAMES)
local COMPARE = { eq = true, ne = true, lt = true, le = true, gt = true, ge = true }

-- The result dtype of op on operands of dtypes da, db.
local function result_dtype(op, da, db)
  if COMPARE[op] then return 'uint8' end
  local dt = promote(da, db)
  if op == 'div' and not is_float(dt) then return 'float32' end
  return dt
end

-- op(a, b) in Lua for one pair of elements of the compute dtype dt, stored in the result dtype.
local function apply(op, a, b, ct, rt)
  if not is_float(ct) and not COMPARE[op] and op ~= 'div' then
    return wrap(BINARY[op](math.tointeger(a), math.tointeger(b)), rt)
  end
  if ct == 'float32' then a, b = f32(a), f32(b) end
  local v = BINARY[op](a * 1.0, b * 1.0) -- (* 1.0 keeps -0.0, + 0.0 would not)
  return COMPARE[op] and v or store(v, rt)
end

local function check_binary(r)
  local op = r.pick(BINARY_NAMES)
  local sa = some_shape(r)
  local sb = r.chance(0.8) and broadcastable(r, sa) or some_shape(r)
  if r.chance(0.5) then sa, sb = sb, sa end
  local da, db = r.pick(DTYPES), r.pick(DTYPES)
  local a = tensor(r, sa, da)
  local form = r.range(1, 4) -- tensor-tensor, tensor-number, number-tensor, method
  local b, bnum
  if form == 2 or form == 3 then
    bnum = r.chance(0.5) and r.range(-3, 5) or r.range(-300, 300) / 100
    if op == 'div' and bnum == 0 then bnum = 2 end
  else
    b = tensor(r, sb, db)
  end
  local ok, y = pcall(function()
    if form == 1 then return lm[op](a, b)
    elseif form == 2 then return lm[op](a, bnum)
    elseif form == 3 then return lm[op](bnum, a)
    else return a[op](a, b) end
  end)
  local shape
  if b then
    -- broadcastable?
    local n = math.max(#sa, #sb)
    for i = 1, n do
      local x, z = sa[#sa - n + i] or 1, sb[#sb - n + i] or 1
      if x ~= z and x ~= 1 and z ~= 1 then
        if ok then return op .. ': shapes do not broadcast, but it returned ' .. show(y) end
        return nil
      end
    end
    shape = bshape(sa, sb)
  else
    shape = sa
  end
  local fa = flat(a)
  local fb, bdt = b and flat(b), db
  if not b then -- PyTorch's rule: a Lua float next to an integer tensor is float32; a Lua integer
    -- keeps the tensor's dtype, except that a comparison sees one outside its range exactly
    local rg = ({ uint8 = { 0, 255 }, int32 = { -2147483648, 2147483647 } })[da]
    if is_float(da) then bdt = da
    elseif math.type(bnum) == 'float' then bdt = 'float32'
    elseif COMPARE[op] and rg and (bnum < rg[1] or bnum > rg[2]) then bdt = 'int64'
    else bdt = da end
  end
  local ct = promote(da, bdt)
  local rt = result_dtype(op, da, bdt)
  if not ok then
    if op == 'div' and not is_float(ct) then return nil end -- an integer 0 divisor may raise
    return op .. ' raised: ' .. tostring(y) .. ' for ' .. show(a) .. ' and ' .. show(b or bnum)
  end
  local want = {}
  for k = 0, numel(shape) - 1 do
    local idx = unravel(k, shape)
    local x = at(fa, idx)
    local z = b and at(fb, idx) or store(bnum, bdt)
    if form == 3 then x, z = z, x end
    if not is_float(ct) and op == 'div' then
      want[k + 1] = store(x / z, 'float32')
    else
      want[k + 1] = apply(op, x, z, form == 3 and ct or ct, rt)
    end
  end
  local diff = compare(y, shape, rt, want)
  if diff then
    local args = form == 3 and (tostring(bnum) .. ', ' .. show(a)) or
      (show(a) .. ', ' .. (b and show(b) or tostring(bnum)))
    return string.format('lm.%s(%s) [form %d]: %s; got %s', op, args, form, diff, show(y))
  end
end

local REDUCE = { 'sum', 'max', 'min', 'argmax', 'argmin', 'prod', 'mean' }

local function check_reduce(r)
  local op = r.pick(REDUCE)
  local shape = some_shape(r)
  if #shape == 0 then shape = { 3 } end
  local dt = r.pick(DTYPES)
  if op == 'mean' and not is_float(dt) then dt = 'float64' end
  local x = tensor(r, shape, dt, function() return dt == 'uint8' and r.range(0, 5) or r.range(-3, 5) end)
  local with_dim = r.chance(0.7)
  local d = r.range(1, #shape)
  local dim = r.chance(0.3) and d - #shape - 1 or d
  local keep = r.chance(0.5)
  local ok, y, yi = pcall(function()
    if with_dim then return x[op](x, dim, keep) end
    return x[op](x)
  end)
  local fx = flat(x)
  local empty = numel(shape) == 0 or (with_dim and shape[d] == 0)
  if not ok then
    if empty and op ~= 'sum' and op ~= 'prod' and op ~= 'mean' then return nil end
    return string.format('%s(%s, %s) raised %s', op, show(x), with_dim and dim or '', tostring(y))
  end
  -- reference
  local out_shape, groups = {}, {}
  if with_dim then
    for i, s in ipairs(shape) do
      if i ~= d then out_shape[#out_shape + 1] = s elseif keep then out_shape[#out_shape + 1] = 1 end
    end
    for k = 0, numel(shape) - 1 do
      local idx = unravel(k, shape)
      local key_idx = {}
      for i = 1, #shape do if i ~= d then key_idx[#key_idx + 1] = idx[i] end end
      local rest = {}
      for i = 1, #shape do if i ~= d then rest[#rest + 1] = shape[i] end end
      local g = ravel(key_idx, rest) + 1
      groups[g] = groups[g] or {}
      table.insert(groups[g], { v = fx.data[k + 1], i = idx[d] + 1 })
    end
    for g = 1, numel(out_shape) do groups[g] = groups[g] or {} end
  else
    groups[1] = {}
    for k, v in ipairs(fx.data) do groups[1][k] = { v = v, i = k } end
  end
  local acc_dt = (op == 'sum' or op == 'prod') and not is_float(dt) and 'int64' or dt
  local want, want_i = {}, {}
  for g, items in ipairs(groups) do
    if op == 'sum' or op == 'mean' then
      local s = is_float(dt) and 0.0 or 0
      for _, it in ipairs(items) do s = s + it.v end
      want[g] = op == 'mean' and s / #items or s
    elseif op == 'prod' then
      local s = is_float(dt) and 1.0 or 1
      for _, it in ipairs(items) do s = s * it.v end
      want[g] = s
    else
      local best
      for _, it in ipairs(items) do
        local better = not best or ((op == 'max' or op == 'argmax') and it.v > best.v)
          or ((op == 'min' or op == 'argmin') and it.v < best.v)
        if better then best = it end
      end
      want[g] = (op == 'argmax' or op == 'argmin') and best.i or best.v
      want_i[g] = best.i
    end
  end
  local rdt = (op == 'argmax' or op == 'argmin') and 'int64' or acc_dt
  local diff = compare(y, with_dim and out_shape or {}, rdt, want)
  if not diff and with_dim and (op == 'max' or op == 'min') then
    diff = compare(yi, out_shape, 'int64', want_i)
    if diff then diff = 'indices: ' .. diff end
  end
  if diff then
    return string.format('x:%s(%s) of %s: %s; got %s', op,
      with_dim and (dim .. ', ' .. tostring(keep)) or '', show(x), diff, show(y))
  end
end

-- x[{...}] read and write against the same selection done on the flat copy.
local function check_index(r)
  local shape = some_shape(r)
  if #shape == 0 then shape = { 4 } end
  local dt = r.pick(DTYPES)
  local x = tensor(r, shape, dt)
  local key, sel = {}, {} -- sel[d] = list of 0-based indices kept, or a single index (dropped)
  for d = 1, r.range(0, #shape) do
    local n = shape[d]
    local c = r.range(1, 4)
    if c == 1 and n > 0 then
      local i = r.range(1, n)
      local neg = r.chance(0.3)
      key[d] = neg and i - n - 1 or i
      sel[d] = { drop = true, i - 1 }
    elseif c == 2 then
      key[d] = {}
    elseif n > 0 then
      local a = r.range(1, n)
      local b = c == 3 and a or r.range(a - 1, n)
      key[d] = c == 3 and { a } or { a, b }
      if r.chance(0.3) then key[d][1] = a - n - 1 end
      local l = {}
      for i = a, b do l[#l + 1] = i - 1 end
      sel[d] = l
    else
      key[d] = {}
    end
  end
  for d = 1, #shape do
    if not sel[d] then
      local l = {}
      for i = 1, shape[d] do l[i] = i - 1 end
      sel[d] = l
    end
  end
  local out_shape = {}
  for d = 1, #shape do if not sel[d].drop then out_shape[#out_shape + 1] = #sel[d] end end
  local ok, y = pcall(function() return x[key] end)
  if not ok then return 'x[key] raised ' .. tostring(y) .. ' for ' .. show(x) end
  local fx = flat(x)
  local want, positions = {}, {}
  local function walk(d, idx)
    if d > #shape then
      local k = ravel(idx, shape)
      want[#want + 1] = fx.data[k + 1]
      positions[#positions + 1] = k
      return
    end
    for _, i in ipairs(sel[d]) do idx[d] = i; walk(d + 1, idx) end
  end
  walk(1, {})
  local diff = compare(y, out_shape, dt, want)
  if diff then return 'x[key] read of ' .. show(x) .. ': ' .. diff end
  -- write a number through the same key into a contiguous clone (a uint8 takes no -2: an error)
  local z = x:contiguous():clone()
  local v = r.range(-2, 7)
  local okw, e = pcall(function() z[key] = v end)
  if dt == 'uint8' and v < 0 then
    if okw or not tostring(e):find('out of range for uint8', 1, true) then
      return 'x[key] = ' .. v .. ' on a uint8 tensor: expected an out-of-range error, got ' .. tostring(e)
    end
    return nil
  end
  if not okw then return 'x[key] = v raised ' .. tostring(e) end
  local fz = flat(z).data
  local expect = {}
  for i, val in ipairs(fx.data) do expect[i] = val end
  for _, k in ipairs(positions) do expect[k + 1] = store(v, dt) end
  for i = 1, #expect do
    if not close_enough(fz[i], expect[i], dt) then
      return string.format('x[key] = %d on %s: element %d is %s, expected %s', v, show(x), i,
        tostring(fz[i]), tostring(expect[i]))
    end
  end
end

-- Shape ops that move elements: transpose, permute, flip, narrow, select, tril, triu, cumsum.
local function check_move(r)
  local shape = some_shape(r)
  if #shape == 0 then shape = { 3 } end
  local dt = r.pick(DTYPES)
  local x = tensor(r, shape, dt)
  local fx = flat(x)
  local n = #shape
  local op = r.pick({ 'transpose', 'flip', 'narrow', 'select', 'tril', 'triu', 'cumsum', 'tile' })
  local d = r.range(1, n)
  local y, out_shape, src -- src(idx of output, 0-based) -> value
  local ok, err = pcall(function()
    if op == 'transpose' then
      local d2 = r.range(1, n)
      y = x:transpose(d, d2)
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = s end
      out_shape[d], out_shape[d2] = shape[d2], shape[d]
      src = function(idx)
        local j = {}
        for i, v in ipairs(idx) do j[i] = v end
        j[d], j[d2] = idx[d2], idx[d]
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'flip' then
      y = x:flip(d)
      out_shape = shape
      src = function(idx)
        local j = {}
        for i, v in ipairs(idx) do j[i] = v end
        j[d] = shape[d] - 1 - idx[d]
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'narrow' then
      if shape[d] == 0 then y = x; out_shape = shape; src = function() end; return end
      local start = r.range(1, shape[d])
      local len = r.range(0, shape[d] - start + 1)
      y = x:narrow(d, start, len)
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = i == d and len or s end
      src = function(idx)
        local j = {}
        for i, v in ipairs(idx) do j[i] = v end
        j[d] = idx[d] + start - 1
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'select' then
      if shape[d] == 0 then y = x; out_shape = shape; src = function() end; return end
      local i0 = r.range(1, shape[d])
      y = x:select(d, r.chance(0.3) and i0 - shape[d] - 1 or i0)
      out_shape = {}
      for i, s in ipairs(shape) do if i ~= d then out_shape[#out_shape + 1] = s end end
      src = function(idx)
        local j = {}
        for i = 1, n do j[i] = i < d and idx[i] or i > d and idx[i - 1] or i0 - 1 end
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'tril' or op == 'triu' then
      if n < 2 then y = x; out_shape = shape; src = function() end; return end
      local k = r.range(-3, 3)
      y = x[op](x, k)
      out_shape = shape
      src = function(idx)
        local i, j = idx[n - 1], idx[n]
        local keep = op == 'tril' and j - i <= k or op == 'triu' and j - i >= k
        return keep and fx.data[ravel(idx, shape) + 1] or 0
      end
    elseif op == 'cumsum' then
      y = x:cumsum(d)
      out_shape = shape
      local adt = is_float(dt) and dt or 'int64'
      src = function(idx)
        local s = is_float(dt) and 0.0 or 0
        local j = {}
        for i, v in ipairs(idx) do j[i] = v end
        for t = 0, idx[d] do j[d] = t; s = s + fx.data[ravel(j, shape) + 1] end
        return adt == 'float32' and f32(s) or s
      end
    else -- tile
      local reps = {}
      for i = 1, n do reps[i] = r.range(0, 2) end
      y = x:tile(reps)
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = s * reps[i] end
      src = function(idx)
        local j = {}
        for i, v in ipairs(idx) do j[i] = v % shape[i] end
        return fx.data[ravel(j, shape) + 1]
      end
    end
  end)
  if not ok then return op .. ' raised ' .. tostring(err) .. ' on ' .. show(x) end
  if y == x then return nil end
  local want = {}
  for k = 0, numel(out_shape) - 1 do want[k + 1] = src(unravel(k, out_shape)) end
  local rdt = op == 'cumsum' and not is_float(dt) and 'int64' or dt
  local diff = compare(y, out_shape, rdt, want)
  if diff then return string.format('%s (dim %d) of %s: %s; got %s', op, d, show(x), diff, show(y)) end
end

-- Conversions: x:to(dt) against the documented rules.
local function check_convert(r)
  local shape = some_shape(r)
  local from, to = r.pick(DTYPES), r.pick(DTYPES)
  local x = tensor(r, shape, from, function()
    if is_float(from) then return r.pick({ 0 / 0, 1e10, -1e10, 300.7, -1.5, 2.5, 255.9, 3e9, 0.0 }) end
    if from == 'int32' then return r.pick({ 300, -1, 2147483647, -2147483648, 7, 256, 70000 }) end
    return from == 'uint8' and r.range(0, 255) or r.pick({ 300, -1, 3000000000, -3000000000, 7, 256 })
  end)
  local y = x:to(to)
  local fx = flat(x)
  local want = {}
  for i, v in ipairs(fx.data) do
    if is_float(to) then want[i] = store(v * 1.0, to)
    elseif is_float(from) then want[i] = to_int(v, to)
    else want[i] = wrap(v, to) end
  end
  local diff = compare(y, shape, to, want)
  if diff then return string.format('%s:to(%s): %s', show(x), to, diff) end
end

-- Ops that pick elements by index or condition: index_select, gather, masked_fill, where, clamp,
-- cat, stack, sort, topk, matmul.
local function check_pick(r)
  local shape = some_shape(r)
  if #shape == 0 then shape = { 3 } end
  local n = #shape
  local dt = r.pick(DTYPES)
  local x = tensor(r, shape, dt)
  local fx = flat(x)
  local d = r.range(1, n)
  local op = r.pick({ 'index_select', 'gather', 'masked_fill', 'where', 'clamp', 'cat', 'stack',
                      'sort', 'topk', 'matmul' })
  local y, yi, out_shape, src, rdt = nil, nil, nil, nil, dt
  local ok, err = pcall(function()
    if op == 'index_select' then
      local m = shape[d] > 0 and r.range(0, 4) or 0
      local idx = {}
      for i = 1, m do idx[i] = r.range(1, shape[d]) end
      y = x:index_select(d, m > 0 and lm.tensor(idx) or lm.zeros(0, { dtype = 'int64' }))
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = i == d and m or s end
      src = function(o)
        local j = {}
        for i, v in ipairs(o) do j[i] = v end
        j[d] = idx[o[d] + 1] - 1
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'gather' then
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = i == d and r.range(0, 3) or s end
      if shape[d] == 0 then out_shape[d] = 0 end
      local idx = {}
      for k = 1, numel(out_shape) do idx[k] = shape[d] > 0 and r.range(1, shape[d]) or 1 end
      local it = numel(out_shape) > 0 and lm.tensor(idx):view(out_shape) or lm.zeros(out_shape, { dtype = 'int64' })
      y = x:gather(d, it)
      src = function(o)
        local j = {}
        for i, v in ipairs(o) do j[i] = v end
        j[d] = idx[ravel(o, out_shape) + 1] - 1
        return fx.data[ravel(j, shape) + 1]
      end
    elseif op == 'masked_fill' or op == 'where' then
      local mshape = broadcastable(r, shape)
      local m = tensor(r, mshape, 'uint8', function() return r.range(0, 1) end)
      local fm = flat(m)
      local v = dt == 'uint8' and r.range(0, 3) or r.range(-3, 3) -- (stored: must fit dt)
      out_shape = shape
      if op == 'masked_fill' then
        y = x:masked_fill(m, v)
        src = function(o) return at(fm, o) ~= 0 and store(v, dt) or fx.data[ravel(o, shape) + 1] end
      else
        y = lm.where(m, x, v)
        src = function(o) return at(fm, o) ~= 0 and fx.data[ravel(o, shape) + 1] or store(v, dt) end
      end
    elseif op == 'clamp' then
      local lo = r.range(dt == 'uint8' and 0 or -2, 1) -- (a bound below 0 has no uint8 value)
      local hi = lo + r.range(0, 3)
      y = x:clamp(lo, hi)
      out_shape = shape
      src = function(o)
        local v = fx.data[ravel(o, shape) + 1]
        if v ~= v then return v end
        return store(math.max(lo, math.min(hi, v)), dt) -- the bounds as numbers, not in dt
      end
    elseif op == 'cat' or op == 'stack' then
      local other = {}
      for i, s in ipairs(shape) do other[i] = s end
      if op == 'cat' then other[d] = r.range(0, 3) end
      local z = tensor(r, other, dt)
      local fz = flat(z)
      if op == 'cat' then
        y = lm.cat({ x, z }, d)
        out_shape = {}
        for i, s in ipairs(shape) do out_shape[i] = i == d and s + other[d] or s end
        src = function(o)
          local j = {}
          for i, v in ipairs(o) do j[i] = v end
          if o[d] < shape[d] then return fx.data[ravel(j, shape) + 1] end
          j[d] = o[d] - shape[d]
          return fz.data[ravel(j, other) + 1]
        end
      else
        local sd = r.range(1, n + 1)
        y = lm.stack({ x, z }, sd)
        out_shape = {}
        for i = 1, n + 1 do out_shape[i] = i < sd and shape[i] or i == sd and 2 or shape[i - 1] end
        src = function(o)
          local j = {}
          for i = 1, n + 1 do if i ~= sd then j[#j + 1] = o[i] end end
          return (o[sd] == 0 and fx or fz).data[ravel(j, shape) + 1]
        end
      end
    elseif op == 'sort' or op == 'topk' then
      if not is_float(dt) or true then
        -- sort rows along d: distinct values, so the indices are determined
        local vals, used = {}, {}
        for k = 1, numel(shape) do
          local v
          repeat v = r.range(0, 250) until not used[v]
          used[v] = true
          vals[k] = v
        end
        x = numel(shape) > 0 and lm.tensor(vals, { dtype = dt }):view(shape) or lm.zeros(shape, { dtype = dt })
        fx = flat(x)
      end
      local desc = r.chance(0.5)
      local k = op == 'topk' and r.range(0, shape[d]) or shape[d]
      if op == 'sort' then y, yi = x:sort(d, desc) else y, yi = x:topk(k, d, desc) end
      out_shape = {}
      for i, s in ipairs(shape) do out_shape[i] = i == d and k or s end
      local order = {} -- per row (the other dims), the sorted 1-based positions along d
      src = function(o)
        local j = {}
        for i, v in ipairs(o) do j[i] = v end
        j[d] = 0
        local key = ravel(j, shape)
        if not order[key] then
          local pos = {}
          for t = 1, shape[d] do pos[t] = t end
          local function val(t) j[d] = t - 1; return fx.data[ravel(j, shape) + 1] end
          table.sort(pos, function(a, b)
            if desc then return val(a) > val(b) end
            return val(a) < val(b)
          end)
          order[key] = pos
        end
        j[d] = order[key][o[d] + 1] - 1
        return fx.data[ravel(j, shape) + 1], order[key][o[d] + 1]
      end
    else -- matmul of a (m, k) by (k, p), small integers in float64 or int64
      local m, k, p = r.range(0, 3), r.range(0, 3), r.range(0, 3)
      local mdt = r.pick({ 'float64', 'int64', 'float32' })
      local a = tensor(r, { m, k }, mdt, function() return r.range(-3, 3) end)
      local b = tensor(r, { k, p }, mdt, function() return r.range(-3, 3) end)
      local fa, fb = flat(a), flat(b)
      x = a
      y = a:matmul(b)
      out_shape, rdt = { m, p }, mdt
      src = function(o)
        local s = 0
        for t = 0, k - 1 do s = s + fa.data[o[1] * k + t + 1] * fb.data[t * p + o[2] + 1] end
        return store(s, mdt)
      end
    end
  end)
  if not ok then return op .. ' raised ' .. tostring(err) .. ' on ' .. show(x) end
  local want, want_i = {}, {}
  for k = 0, numel(out_shape) - 1 do want[k + 1], want_i[k + 1] = src(unravel(k, out_shape)) end
  local diff = compare(y, out_shape, rdt, want)
  if not diff and yi then
    diff = compare(yi, out_shape, 'int64', want_i)
    if diff then diff = 'indices: ' .. diff end
  end
  if diff then return string.format('%s (dim %d) of %s: %s; got %s', op, d, show(x), diff, show(y)) end
end

local UNARY = {
  exp = math.exp, log = function(v) return v < 0 and 0 / 0 or math.log(v) end,
  sqrt = function(v) return v < 0 and 0 / 0 or math.sqrt(v) end, abs = math.abs,
  neg = function(v) return -v end, sin = math.sin, cos = math.cos,
  tanh = function(v)
    if v > 20 then return 1.0 elseif v < -20 then return -1.0 end
    local e = math.exp(2 * v)
    return (e - 1) / (e + 1)
  end,
  sigmoid = function(v) return 1 / (1 + math.exp(-v)) end,
  relu = function(v) return v > 0 and v or 0.0 end,
  sign = function(v) return v > 0 and 1.0 or v < 0 and -1.0 or v * 1.0 end,
  floor = math.floor, ceil = math.ceil, square = function(v) return v * v end,
  reciprocal = function(v) return 1 / v end,
}
local UNARY_NAMES = {}
for k in pairs(UNARY) do UNARY_NAMES[#UNARY_NAMES + 1] = k end
table.sort(UNARY_NAMES)

local function check_unary(r)
  local op = r.pick(UNARY_NAMES)
  local shape = some_shape(r)
  local dt = r.pick({ 'float32', 'float64' })
  local x = tensor(r, shape, dt)
  local inplace = r.chance(0.3)
  local y
  local ok, err = pcall(function()
    if inplace then y = x:contiguous():clone(); y[op .. '_'](y) else y = x[op](x) end
  end)
  if not ok then return op .. ' raised ' .. tostring(err) end
  local want = {}
  for i, v in ipairs(flat(x).data) do
    local w = v ~= v and v or UNARY[op](v)
    if op ~= 'relu' and op ~= 'abs' and op ~= 'neg' and w ~= w then w = 0 / 0 end
    want[i] = store(w * 1.0, dt)
  end
  local diff = compare(y, shape, dt, want)
  if diff then return string.format('%s%s of %s: %s; got %s', op, inplace and '_' or '', show(x), diff, show(y)) end
end

local CHECKS = { check_binary, check_binary, check_binary, check_reduce, check_reduce, check_index,
                 check_move, check_move, check_convert, check_pick, check_pick, check_unary }

function M.check(r)
  return r.pick(CHECKS)(r)
end

return M
