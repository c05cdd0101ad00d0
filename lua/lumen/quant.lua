--[[
lumen.quant — quantization and mixed precision (lm.quant, nn.quantized, lm.autocast), following
the notes' taxonomy (AICS ch. 3): symmetric or asymmetric, per tensor, per channel or per group,
post-training (weights only; weights and activations with calibration) or quantization-aware
(fake quantization with the straight-through estimator), SmoothQuant's migration, and FP16/BF16
mixed-precision training with dynamic loss scaling.

The rules, once (the scene `quant` and the lesson follow them):
  symmetric   codes q in [-(2^(b-1) - 1), 2^(b-1) - 1] (the narrow range: int8 is -127..127, 2 bits
              ternary), zero point 0, s = max|x| / (2^(b-1) - 1) over the granule;
  asymmetric  codes in [0, 2^b - 1], the range [min(x, 0), max(x, 0)] (0 always exact),
              s = (max - min) / (2^b - 1), z = clamp(round(-min / s), 0, 2^b - 1);
  q = clamp(round(x / s) + z, qmin, qmax), rounding half to even; x' = s (q - z).
  A zero range (an all-zero granule) takes s = float32's epsilon, as PyTorch's observers do, so
  zeros stay exact and nothing divides by zero; a scale the user gives must be positive and
  finite. NaN or Inf in what is quantized is an error, as is a group size that does not divide
  the dim.
Granularity: 'tensor' (one s, z), 'channel' (one per index of dim `axis`, 1 by default: a
weight's output channels), 'group' (groups of `group_size` consecutive values along the last dim:
what 4-bit LLM quantizers use).
Read next: lua/lumen/nn/layers.lua (the float layers), src/ops/quant.c (int_mm), docs/quant.md.
]]
local lm = require 'lumen'

local M = {}
local EPS = 1.1920928955078125e-07 -- float32's epsilon: the scale of a zero range

local raise = require('lumen.nn.check').raise -- at the user's line, wherever it is called from

local function is_module(v)
  local mt = type(v) == 'table' and getmetatable(v)
  return mt and type(mt) == 'table' and rawget(mt, '_is_module_class') == true or false
end

-- Whether module m is an instance of class K or of a subclass of it.
local function is_a(m, K)
  local c = getmetatable(m)
  while c do
    if c == K then return true end
    c = rawget(c, 'super')
  end
  return false
end

-- The class's forward (what an instance's own forward, set here, wraps).
local function class_forward(m) return getmetatable(m).forward end

-- ---------------------------------------------------------------- options

local GRANULARITIES = { tensor = true, channel = true, group = true }

--- The options every function takes, checked once: bits (2..8), symmetric, granularity, axis,
--- group_size. fname names the caller in errors.
local function scheme(opts, fname)
  opts = opts or {}
  if type(opts) ~= 'table' then raise(fname .. ': options must be a table, got ' .. type(opts)) end
  local s = {
    bits = opts.bits or 8,
    symmetric = opts.symmetric,
    granularity = opts.granularity or 'tensor',
    axis = opts.axis or 1,
    group_size = opts.group_size or 32,
    ragged = opts.ragged or false,
  }
  if s.symmetric == nil then s.symmetric = true end
  if math.type(s.bits) ~= 'integer' or s.bits < 2 or s.bits > 8 then
    raise(string.format('%s: bits must be an integer from 2 to 8, got %s', fname, tostring(opts.bits)))
  end
  if not GRANULARITIES[s.granularity] then
    raise(string.format("%s: granularity must be 'tensor', 'channel' or 'group', got %s", fname,
      tostring(opts.granularity)))
  end
  if math.type(s.group_size) ~= 'integer' or s.group_size < 1 then
    raise(string.format('%s: group_size must be a positive integer, got %s', fname, tostring(opts.group_size)))
  end
  if s.symmetric then
    s.qmin, s.qmax = -(2 ^ (s.bits - 1) - 1) // 1, (2 ^ (s.bits - 1) - 1) // 1
  else
    s.qmin, s.qmax = 0, (2 ^ s.bits - 1) // 1
  end
  s.qmin, s.qmax = math.tointeger(s.qmin), math.tointeger(s.qmax)
  return s
end

local function check_finite(x, fname, what)
  if not lm.is_tensor(x) then raise(string.format('%s: %s must be a tensor, got %s', fname, what, type(x))) end
  if not x:dtype():match('^float') and not x:dtype():match('^bfloat') then
    raise(string.format('%s: %s must be a float tensor, got %s', fname, what, x:dtype()))
  end
  if x:numel() > 0 then
    local bad = lm.no_grad(function() return x:ne(x):sum():item() + x:abs():eq(math.huge):sum():item() end)
    if bad > 0 then
      raise(string.format('%s: %s holds %d NaN or infinite value%s; quantization takes finite values only',
        fname, what, bad, bad == 1 and '' or 's'))
    end
  end
end

-- x viewed so that the granule is the last dim: (granules, size) plus how to undo it.
local function granules(x, s, fname)
  local shape = x:shape()
  if s.granularity == 'tensor' then return x:reshape(1, -1), function(t) return t:reshape(shape) end end
  if #shape == 0 then raise(fname .. ": granularity '" .. s.granularity .. "' needs a tensor with dims, got a 0-d one") end
  if s.granularity == 'group' then
    local last = shape[#shape]
    local rem = last % s.group_size
    if rem ~= 0 and not s.ragged then
      raise(string.format('%s: group_size %d does not divide the last dim (%d) of shape %s (ragged=true takes a ' ..
        'shorter last group)', fname, s.group_size, last, '[' .. table.concat(shape, ', ') .. ']'))
    end
    if rem == 0 then return x:reshape(-1, s.group_size), function(t) return t:reshape(shape) end end
    -- a shorter last group: zeros appended change no range (0 is always in it) and are cut again
    local padded = { table.unpack(shape) }
    padded[#padded] = last + s.group_size - rem
    local zshape = { table.unpack(shape) }
    zshape[#zshape] = s.group_size - rem
    local xp = lm.cat({ x, lm.zeros(zshape, { dtype = x:dtype() }) }, #shape)
    return xp:reshape(-1, s.group_size), function(t) return t:reshape(padded):narrow(#shape, 1, last):contiguous() end
  end
  local nd = #shape
  local axis = s.axis < 0 and s.axis + nd + 1 or s.axis
  if axis < 1 or axis > nd then
    raise(string.format('%s: axis %d is out of range for %d dims', fname, s.axis, nd))
  end
  local moved = x:transpose(1, axis):contiguous()
  local mshape = moved:shape()
  return moved:reshape(mshape[1], -1), function(t) return t:reshape(mshape):transpose(1, axis):contiguous() end
end

-- The scale and zero point of each row of g (granules, size) from its min and max: (granules, 1).
local function qparams_of(lo, hi, s)
  if s.symmetric then
    local m = lm.maximum(lo:abs(), hi:abs())
    local scale = (m / s.qmax):clamp(EPS, math.huge)
    return scale, lm.zeros_like(scale)
  end
  lo, hi = lo:clamp(-math.huge, 0), hi:clamp(0, math.huge)
  local scale = ((hi - lo) / (s.qmax - s.qmin)):clamp(EPS, math.huge)
  local zp = (lo / scale):neg():round():add(s.qmin):clamp(s.qmin, s.qmax)
  return scale, zp
end

--- quant.qparams(min, max [, opts]) -> scale, zero_point: the rule above for given ranges
--- (numbers or tensors of the granules' minima and maxima).
function M.qparams(lo, hi, opts)
  local s = scheme(opts, 'quant.qparams')
  local tl = lm.is_tensor(lo) and lo:float() or lm.tensor({ lo })
  local th = lm.is_tensor(hi) and hi:float() or lm.tensor({ hi })
  local scale, zp = qparams_of(tl, th, s)
  if not lm.is_tensor(lo) then return scale:item(), math.tointeger(zp:item()) end
  return scale, zp
end

-- ---------------------------------------------------------------- quantize / dequantize

local QTensor = {}
QTensor.__index = QTensor

--- Codes of x (an integer tensor: int8 for symmetric, uint8 for asymmetric) with scale and zero
--- point per granule.
local function quantize_with(x, s, scale, zp, fname)
  local g, undo = granules(x:float(), s, fname)
  local q = lm.no_grad(function() return (g / scale):round():add(zp):clamp(s.qmin, s.qmax) end)
  return undo(q):to(s.symmetric and 'int8' or 'uint8')
end

--- quant.quantize(x [, {bits=8, symmetric=true, granularity='tensor', axis=1, group_size=32,
--- ragged=false, scale=, zero_point=}]) -> q (ragged: a last dim that group_size does not divide
--- ends in a shorter group instead of an error): the codes (q.q: int8 or uint8), q.scale and q.zero_point (one per
--- granule: tensors of shape (granules, 1)), q.bits, q.symmetric, q.granularity; q:dequantize().
function M.quantize(x, opts)
  local fname = 'quant.quantize'
  local s = scheme(opts, fname)
  check_finite(x, fname, 'the input')
  local g = granules(x:float(), s, fname)
  local scale, zp
  if opts and opts.scale ~= nil then
    scale = lm.is_tensor(opts.scale) and opts.scale:float():reshape(-1, 1) or lm.tensor({ { opts.scale } })
    if scale:size(1) ~= 1 and scale:size(1) ~= g:size(1) then
      raise(string.format('%s: %d scales for %d granules', fname, scale:size(1), g:size(1)))
    end
    if scale:le(0):sum():item() > 0 or scale:ne(scale):sum():item() > 0 or scale:eq(math.huge):sum():item() > 0 then
      raise(fname .. ': a scale must be positive and finite (a zero scale would divide by zero)')
    end
    local z = opts.zero_point or 0
    zp = lm.is_tensor(z) and z:float():reshape(-1, 1) or lm.full({ 1, 1 }, z)
  else
    local lo, hi = lm.no_grad(function() return g:amin(2, true), g:amax(2, true) end)
    scale, zp = qparams_of(lo, hi, s)
  end
  local q = quantize_with(x, s, scale, zp, fname)
  return setmetatable({ q = q, scale = scale, zero_point = zp, bits = s.bits, symmetric = s.symmetric,
    granularity = s.granularity, axis = s.axis, group_size = s.group_size, _s = s, dtype = x:dtype() }, QTensor)
end

function QTensor:dequantize()
  local g, undo = granules(self.q:float(), self._s, 'quant.dequantize')
  return undo((g - self.zero_point) * self.scale):to(self.dtype)
end

function QTensor:__tostring()
  return string.format('QTensor(%d-bit %s, %s, codes %s %s, %d scale%s)', self.bits,
    self.symmetric and 'symmetric' or 'asymmetric', self.granularity, self.q:dtype(),
    '[' .. table.concat(self.q:shape(), ', ') .. ']', self.scale:numel(), self.scale:numel() == 1 and '' or 's')
end

--- quant.dequantize(q) -> the float tensor s (q - z).
function M.dequantize(q)
  if getmetatable(q) ~= QTensor then raise('quant.dequantize: expected what quant.quantize returns, got ' .. type(q)) end
  return q:dequantize()
end

--- quant.fake_quantize(x [, opts]) -> x quantized and dequantized, differentiable by the
--- straight-through estimator: the gradient passes unchanged where x is inside the grid's range
--- and is 0 where it was clipped (as PyTorch's fake_quantize).
function M.fake_quantize(x, opts)
  local fname = 'quant.fake_quantize'
  local s = scheme(opts, fname)
  check_finite(x, fname, 'the input')
  local qt = lm.no_grad(function() return M.quantize(x:detach(), opts) end)
  local qdq = lm.no_grad(function() return qt:dequantize() end)
  -- inside the range: the codes before clamping lie in [qmin, qmax]
  local mask = lm.no_grad(function()
    local g, undo = granules(x:detach():float(), s, fname)
    local r = (g / qt.scale):round():add(qt.zero_point)
    return undo(r:ge(s.qmin):float() * r:le(s.qmax):float()):to(x:dtype())
  end)
  return x * mask + (qdq - x * mask):detach()
end

-- ---------------------------------------------------------------- observers

local Observer = {}
Observer.__index = Observer

local function new_observer(kind, opts, fname)
  local s = scheme(opts, fname)
  local o = setmetatable({ kind = kind, _s = s, bits = s.bits, symmetric = s.symmetric,
    granularity = s.granularity, count = 0 }, Observer)
  o.averaging_constant = (opts and opts.averaging_constant) or 0.01
  o.bins = (opts and opts.bins) or 2048
  o.percentile = (opts and opts.percentile) or 99.99
  if kind == 'histogram' and s.granularity ~= 'tensor' then
    raise(fname .. ": a histogram observer is per tensor (granularity 'tensor')")
  end
  if not (o.percentile > 50 and o.percentile <= 100) then
    raise(fname .. ': percentile must be in (50, 100], got ' .. tostring(o.percentile))
  end
  return o
end

--- quant.MinMaxObserver(opts): the running minimum and maximum of what it sees.
function M.MinMaxObserver(opts) return new_observer('minmax', opts, 'quant.MinMaxObserver') end
--- quant.MovingAverageMinMaxObserver(opts with averaging_constant=0.01): min and max averaged
--- over batches (the first batch's taken as they are).
function M.MovingAverageMinMaxObserver(opts)
  return new_observer('moving_average', opts, 'quant.MovingAverageMinMaxObserver')
end
--- quant.HistogramObserver(opts with bins=2048, percentile=99.99): a histogram of the values
--- seen; the range clips the (100 - percentile)% most extreme on each side.
function M.HistogramObserver(opts) return new_observer('histogram', opts, 'quant.HistogramObserver') end

local function histogram_add(o, x)
  local lo, hi = x:amin():item(), x:amax():item()
  if not o.hist then
    local r = math.max(math.abs(lo), math.abs(hi), EPS)
    o.lo, o.hi, o.hist = -r, r, lm.zeros(o.bins, { dtype = 'float64' })
  end
  while lo < o.lo or hi > o.hi do -- double the range: pairs of bins merge, the middle half holds the old
    local h = o.hist:reshape(o.bins // 2, 2):sum(2)
    local z = lm.zeros(o.bins // 4, { dtype = 'float64' })
    o.hist = lm.cat({ z, h, z })
    o.lo, o.hi = 2 * o.lo, 2 * o.hi
  end
  local idx = ((x:reshape(-1):double() - o.lo) / (o.hi - o.lo) * o.bins):floor():clamp(0, o.bins - 1):long() + 1
  o.hist = o.hist:scatter_add(1, idx, lm.ones(idx:numel(), { dtype = 'float64' }))
end

--- obs(x) or obs:observe(x): records x (no gradient) and returns it.
function Observer:observe(x)
  check_finite(x, 'quant.' .. self.kind .. ' observer', 'the input')
  lm.no_grad(function()
    local xf = x:detach():float()
    self.count = self.count + 1
    if self.kind == 'histogram' then return histogram_add(self, xf) end
    local g = granules(xf, self._s, 'observer')
    local lo, hi = g:amin(2, true), g:amax(2, true)
    if not self.min then
      self.min, self.max = lo, hi
    elseif self.kind == 'minmax' then
      self.min, self.max = lm.minimum(self.min, lo), lm.maximum(self.max, hi)
    else
      local c = self.averaging_constant
      self.min, self.max = self.min + (lo - self.min) * c, self.max + (hi - self.max) * c
    end
  end)
  return x
end
Observer.__call = Observer.observe

--- obs:range() -> min, max (tensors (granules, 1)) the qparams come from.
function Observer:range()
  if self.count == 0 then raise('quant observer: it has seen no data yet (call it on a batch first)') end
  if self.kind ~= 'histogram' then return self.min, self.max end
  local h = self.hist
  local total = h:sum():item()
  local cum = h:cumsum(1)
  local cut = total * (1 - self.percentile / 100)
  local width = (self.hi - self.lo) / self.bins
  local lo_bin = cum:lt(cut):sum():item() -- bins entirely below the lower cut
  local hi_bin = self.bins - cum:lt(total - cut):sum():item() -- bins from the upper cut on
  local lo = self.lo + lo_bin * width
  local hi = self.lo + (self.bins - hi_bin + 1) * width
  return lm.tensor({ { math.min(lo, 0) } }), lm.tensor({ { math.max(hi, 0) } })
end

--- obs:qparams() -> scale, zero_point (tensors (granules, 1)).
function Observer:qparams()
  local lo, hi = self:range()
  return qparams_of(lo:float(), hi:float(), self._s)
end

-- ---------------------------------------------------------------- walking a model

-- Calls fn(parent, name, module) for every Linear and Conv2d under model (depth first).
local function each_layer(model, fn, kinds)
  local nn = require 'nn'
  kinds = kinds or { nn.Linear, nn.Conv2d }
  local function walk(m)
    local mods = rawget(m, '_modules')
    for _, name in ipairs({ table.unpack(rawget(m, '_module_order')) }) do
      local c = mods[name]
      local hit = false
      for _, K in ipairs(kinds) do
        if is_a(c, K) then hit = true end
      end
      if hit then fn(m, name, c) else walk(c) end
    end
  end
  walk(model)
end
M._each_layer = each_layer

--- quant.quantize_weights(model [, opts]) -> model: every Linear and Conv2d weight replaced, in
--- place, by its quantized and dequantized values (weight-only post-training quantization, the
--- way accuracy at 8, 4, 3, 2 bits is measured). Conv2d weights: channel = output channel, groups
--- along the flattened (in, kh, kw).
function M.quantize_weights(model, opts)
  local fname = 'quant.quantize_weights'
  if not is_module(model) then raise(fname .. ': expected a module, got ' .. type(model)) end
  scheme(opts, fname)
  each_layer(model, function(_, _, m)
    lm.no_grad(function()
      local w = m.weight
      local flat = w:reshape(w:size(1), -1)
      local qdq = M.quantize(flat, opts):dequantize():reshape(w:shape())
      w:copy_(qdq)
    end)
  end)
  return model
end

-- ---------------------------------------------------------------- the layers' own forward

--[[ What prepare, prepare_qat and smooth install on a Linear or Conv2d, composed in one forward so
that they stack in any order: fields on the layer say what it does, in this order — _smooth (the
input times 1/s), _record (SmoothQuant's calibration: the running max|x_j|), _observer (the
activation range quant.convert will use: of the input the layer really multiplies), _qat (the
weight through fake_quantize). quant.convert carries _smooth into the int8 layer. ]]
local function smoothed(m, x)
  local inv = rawget(m, '_smooth')
  return inv and x * inv:to(x:dtype()) or x
end

local function install_forward(m)
  local nn = require 'nn'
  local conv = is_a(m, nn.Conv2d)
  local cls_forward = class_forward(m)
  local F = lm.nn.functional
  rawset(m, 'forward', function(self, x)
    if rawget(self, '_record') then
      local a = lm.no_grad(function() return x:detach():abs():reshape(-1, self.in_features):amax(1):float() end)
      local prev = rawget(self, '_act_max')
      rawset(self, '_act_max', prev and lm.maximum(prev, a) or a)
    end
    x = smoothed(self, x)
    local obs = rawget(self, '_observer')
    if obs then obs:observe(x) end
    local qat = rawget(self, '_qat')
    if not qat then return cls_forward(self, x) end
    local w = self.weight
    local fq = M.fake_quantize(w:reshape(w:size(1), -1), qat):reshape(w:shape())
    if conv then return self:_call(F.conv2d, x, fq, self.bias, self._opts) end
    return self:_call(F.linear, x, fq, self.bias)
  end)
end

-- ---------------------------------------------------------------- quantization-aware training

--- quant.prepare_qat(model [, opts]) -> model: each Linear and Conv2d computes with
--- fake_quantize(weight, opts) (its weights stay float and train; the gradient passes straight
--- through), so that training learns weights that survive quantization. quant.unprepare(model)
--- undoes it.
function M.prepare_qat(model, opts)
  local fname = 'quant.prepare_qat'
  if not is_module(model) then raise(fname .. ': expected a module, got ' .. type(model)) end
  scheme(opts, fname)
  each_layer(model, function(_, _, m)
    rawset(m, '_qat', opts or {})
    install_forward(m)
  end)
  return model
end

--- quant.unprepare(model) -> model: removes what prepare and prepare_qat installed (a smoothed
--- layer keeps its smoothing: its weights carry s).
function M.unprepare(model)
  each_layer(model, function(_, _, m)
    rawset(m, '_qat', nil)
    rawset(m, '_observer', nil)
    if rawget(m, '_smooth') then install_forward(m) else rawset(m, 'forward', nil) end
  end)
  return model
end

-- ---------------------------------------------------------------- calibration (static PTQ)

--- quant.prepare(model [, {observer='minmax'|'moving_average'|'histogram', percentile=, bits=8}])
--- -> model: each Linear and Conv2d observes its input (asymmetric, per tensor) as batches go
--- through; then quant.convert(model) gives the int8 layers those static activation ranges.
function M.prepare(model, opts)
  local fname = 'quant.prepare'
  if not is_module(model) then raise(fname .. ': expected a module, got ' .. type(model)) end
  opts = opts or {}
  local make = ({ minmax = M.MinMaxObserver, moving_average = M.MovingAverageMinMaxObserver,
    histogram = M.HistogramObserver })[opts.observer or 'minmax']
  if not make then
    raise(fname .. ": observer must be 'minmax', 'moving_average' or 'histogram', got " .. tostring(opts.observer))
  end
  each_layer(model, function(_, _, m)
    rawset(m, '_observer', make({ bits = 8, symmetric = false, percentile = opts.percentile }))
    install_forward(m)
  end)
  return model
end

-- ---------------------------------------------------------------- int8 layers (nn.quantized)

local function int8_weights(w2) -- w2 (out, in): per output channel symmetric int8 codes, transposed
  local qt = M.quantize(w2, { bits = 8, symmetric = true, granularity = 'channel', axis = 1 })
  local wq = qt.q:t():contiguous() -- (in, out) int8, as int_mm takes it
  local colsum = wq:long():sum(1):float() -- (out): sum over k of the codes, for the zero point
  return wq, qt.scale:reshape(-1), colsum
end

-- The activations' uint8 codes (M, K) with their scale and zero point (per tensor).
local function quantize_act(x2, static)
  local scale, zp
  if static then
    scale, zp = static.scale, static.zero_point
  else
    local lo, hi = x2:amin():item(), x2:amax():item()
    lo, hi = math.min(lo, 0), math.max(hi, 0)
    scale = math.max((hi - lo) / 255, EPS)
    zp = math.max(0, math.min(255, math.floor(-lo / scale + 0.5)))
  end
  local xq = (x2 / scale):round():add(zp):clamp(0, 255):byte()
  return xq, scale, zp
end

-- y (M, N) = s_x s_w (acc - z_x colsum) + b: the int32 accumulator back to float, as
-- acc s + (b - z_x colsum s) with s = s_x s_w per column. shape: the per-column vectors' shape
-- against acc's (a convolution gives acc as (N, out, L) so that each broadcast row is long).
local function requantize(acc, scale, zp, wscale, colsum, bias, shape)
  local s = wscale * scale
  local shift = -(colsum * zp) * s
  if bias then shift = shift + bias end
  if shape then s, shift = s:reshape(shape), shift:reshape(shape) end
  return acc:float() * s + shift
end

local quantized = {}
M.nn = quantized

local function make_layers()
  local nn = require 'nn'
  local Module = nn.Module
  local QLinear = Module:extend('quantized.Linear')
  function QLinear:__init(lin, static)
    self.in_features, self.out_features = lin.in_features, lin.out_features
    local wq, ws, cs = lm.no_grad(function() return int8_weights(lin.weight:detach():float()) end)
    self:register_buffer('weight_codes', wq)
    self:register_buffer('weight_scale', ws)
    self:register_buffer('code_sums', cs)
    if lin.bias then self:register_buffer('bias', lin.bias:detach():float()) end
    self._static = static
  end
  function QLinear:forward(x)
    if not lm.is_tensor(x) or x:dim() < 1 or x:size(-1) ~= self.in_features then
      error(string.format('%s: input must be a tensor of shape [..., %d]', self:_label(), self.in_features), 2)
    end
    return lm.no_grad(function()
      local shape = x:shape()
      local x2 = smoothed(self, x:float()):reshape(-1, self.in_features)
      local xq, s, z = quantize_act(x2, self._static)
      local acc = lm._int_mm(xq, self.weight_codes)
      local y = requantize(acc, s, z, self.weight_scale, self.code_sums, rawget(self, '_buffers').bias)
      shape[#shape] = self.out_features
      return y:reshape(shape)
    end)
  end
  function QLinear:extra_repr()
    return string.format('in_features=%d, out_features=%d, int8 weights per channel, %s uint8 activations',
      self.in_features, self.out_features, self._static and 'static' or 'dynamic')
  end
  --- nn.quantized.Linear.from_float(linear [, {scale=, zero_point=}]): int8 weights (per output
  --- channel, symmetric) and uint8 activations (per tensor: the given static range, else each
  --- batch's own), multiplied exactly in int32 by the CPU's u8 x s8 kernel.
  QLinear.from_float = function(lin, static) return QLinear(lin, static) end

  local QConv2d = Module:extend('quantized.Conv2d')
  function QConv2d:__init(conv, static)
    if conv.groups ~= 1 then
      error('nn.quantized.Conv2d: groups must be 1 (grouped int8 convolution is not built), got ' .. conv.groups, 3)
    end
    self.in_channels, self.out_channels = conv.in_channels, conv.out_channels
    self.kernel_size, self.stride, self.padding, self.dilation = conv.kernel_size, conv.stride, conv.padding, conv.dilation
    -- the weights in (kh, kw, C) order per output channel: the rows the forward gathers
    local w = conv.weight:detach():float():permute(1, 3, 4, 2):contiguous()
    local wq, ws, cs = lm.no_grad(function() return int8_weights(w:reshape(w:size(1), -1)) end)
    self:register_buffer('weight_codes', wq)
    self:register_buffer('weight_scale', ws)
    self:register_buffer('code_sums', cs)
    if conv.bias then self:register_buffer('bias', conv.bias:detach():float()) end
    self._static = static
  end
  function QConv2d:forward(x)
    if not lm.is_tensor(x) or x:dim() ~= 4 or x:size(2) ~= self.in_channels then
      error(string.format('%s: input must be [N, %d, H, W]', self:_label(), self.in_channels), 2)
    end
    return lm.no_grad(function()
      local F = lm.nn.functional
      local N, H, W = x:size(1), x:size(3), x:size(4)
      local k, st, pd, dl = self.kernel_size, self.stride, self.padding, self.dilation
      local oh = (H + 2 * pd[1] - dl[1] * (k[1] - 1) - 1) // st[1] + 1
      local ow = (W + 2 * pd[2] - dl[2] * (k[2] - 1) - 1) // st[2] + 1
      -- the image quantized first (9 times fewer values than its windows), channels last, padded
      -- with the zero point (the code of 0.0); each output position's window is then one row
      -- (kh, kw, C) of a strided view of the bytes, gathered by one copy into (N L, kh kw C)
      local xq, s, z = quantize_act(x:float(), self._static)
      local xh = xq:permute(1, 3, 4, 2):contiguous()
      if pd[1] > 0 or pd[2] > 0 then xh = F.pad(xh, { 0, 0, pd[2], pd[2], pd[1], pd[1] }, z) end
      local Hp, Wp, C = xh:size(2), xh:size(3), xh:size(4)
      local rows = xh:as_strided({ N, oh, ow, k[1], k[2], C },
        { Hp * Wp * C, st[1] * Wp * C, st[2] * C, dl[1] * Wp * C, dl[2] * C, 1 }):contiguous():reshape(N * oh * ow, -1)
      local acc = lm._int_mm(rows, self.weight_codes) -- (N L, out)
      -- seen as (N, out, L): converting it to float makes it channels first in the same pass
      local acc_t = acc:reshape(N, oh * ow, self.out_channels):permute(1, 3, 2)
      local y = requantize(acc_t, s, z, self.weight_scale, self.code_sums, rawget(self, '_buffers').bias,
        { 1, self.out_channels, 1 })
      return y:reshape(N, self.out_channels, oh, ow)
    end)
  end
  function QConv2d:extra_repr()
    return string.format('%d, %d, kernel_size=%d, int8 weights per channel, %s uint8 activations', self.in_channels,
      self.out_channels, self.kernel_size[1], self._static and 'static' or 'dynamic')
  end
  QConv2d.from_float = function(conv, static) return QConv2d(conv, static) end
  quantized.Linear, quantized.Conv2d = QLinear, QConv2d
end

setmetatable(quantized, { __index = function(t, k)
  if k == 'Linear' or k == 'Conv2d' then make_layers(); return rawget(t, k) end
end })

--- quant.convert(model) -> model: every Linear and Conv2d replaced, in place, by its
--- nn.quantized layer (int8 weights; the activation range from quant.prepare's observer when
--- there is one, else each batch's).
function M.convert(model)
  local fname = 'quant.convert'
  if not is_module(model) then raise(fname .. ': expected a module, got ' .. type(model)) end
  local nn = require 'nn'
  each_layer(model, function(parent, name, m)
    local obs, static = rawget(m, '_observer'), nil
    if obs and obs.count > 0 then
      local s, z = obs:qparams()
      static = { scale = s:item(), zero_point = z:item() }
    end
    local q = is_a(m, nn.Conv2d) and quantized.Conv2d.from_float(m, static) or quantized.Linear.from_float(m, static)
    if obs then rawset(q, '_observer', obs) end
    if rawget(m, '_smooth') then rawset(q, '_smooth', rawget(m, '_smooth')) end -- SmoothQuant's 1/s
    parent[name] = q
  end)
  return model
end

-- ---------------------------------------------------------------- SmoothQuant

--- quant.smooth(model, batches [, {alpha=0.5}]) -> stats: SmoothQuant's migration for every
--- Linear: with a_j = max|X_j| over the calibration batches (a list of inputs to the model, or a
--- function returning the next one or nil) and w_j = max|W[:, j]|, s_j = a_j^alpha / w_j^(1-alpha);
--- the layer's weight columns become W[:, j] s_j and its input is divided by s_j (the product is
--- unchanged), so outlier channels of the activations shrink and the weights take them.
--- stats[name] = {act_max_before=, act_max_after=, weight_max_before=, weight_max_after=, s=}.
function M.smooth(model, batches, opts)
  local fname = 'quant.smooth'
  if not is_module(model) then raise(fname .. ': expected a module, got ' .. type(model)) end
  opts = opts or {}
  local alpha = opts.alpha or 0.5
  if type(alpha) ~= 'number' or alpha < 0 or alpha > 1 then
    raise(fname .. ': alpha must be a number in [0, 1], got ' .. tostring(opts.alpha))
  end
  local nn = require 'nn'
  local layers, names = {}, {}
  for name, m in pairs(model:named_modules()) do
    if is_a(m, nn.Linear) then
      layers[#layers + 1] = m
      names[m] = name
      rawset(m, '_record', true)
      install_forward(m)
    end
  end
  if #layers == 0 then raise(fname .. ': the model has no Linear layer') end
  local was = model.training
  model:eval()
  local n = 0
  if type(batches) == 'function' then
    for b in batches do model(b); n = n + 1 end
  elseif type(batches) == 'table' then
    for _, b in ipairs(batches) do model(b); n = n + 1 end
  else
    raise(fname .. ': batches must be a list of inputs or an iterator, got ' .. type(batches))
  end
  if was then model:train() end
  for _, m in ipairs(layers) do rawset(m, '_record', nil) end
  if n == 0 then raise(fname .. ': no calibration batch') end
  local stats = {}
  for _, m in ipairs(layers) do
    local a = rawget(m, '_act_max')
    rawset(m, '_act_max', nil)
    -- a layer smoothed before: a was recorded before its division by s0, so the weight (already
    -- W s0) sees a / s0, and the new s composes with the old
    local inv0 = rawget(m, '_smooth')
    if inv0 then a = a * inv0 end
    local st = lm.no_grad(function()
      local w = m.weight
      local wmax = w:detach():abs():amax(1):float():clamp(EPS, math.huge)
      local s = (a:clamp(EPS, math.huge):pow(alpha) / wmax:pow(1 - alpha)):clamp(EPS, math.huge)
      w:copy_((w:float() * s):to(w:dtype()))
      return { act_max_before = a, act_max_after = a / s, weight_max_before = wmax,
        weight_max_after = w:detach():abs():amax(1):float(), s = s }
    end)
    rawset(m, '_smooth', inv0 and inv0 / st.s or 1 / st.s)
    install_forward(m)
    stats[names[m]] = st
  end
  return stats
end

-- ---------------------------------------------------------------- mixed precision

local AUTOCAST_LOW = { linear = true, conv2d = true } -- F's ops in the low precision (PyTorch's CPU list)
local AUTOCAST_F32 = { softmax = true, log_softmax = true, cross_entropy = true, nll_loss = true,
  mse_loss = true, binary_cross_entropy = true, layer_norm = true, batch_norm = true }

--- lm.autocast(dtype, fn, ...) -> fn(...): runs fn with F.linear, F.conv2d and lm.matmul computing
--- in dtype ('bfloat16' or 'float16': their inputs cast, float32 accumulation inside) and the
--- losses, softmax and norms in float32, as PyTorch's CPU autocast; parameters stay float32 (the
--- master weights) and get float32 gradients through the casts.
function M.autocast(dtype, fn, ...)
  if dtype ~= 'bfloat16' and dtype ~= 'float16' then
    raise("lm.autocast: dtype must be 'bfloat16' or 'float16', got " .. tostring(dtype))
  end
  if type(fn) ~= 'function' then raise('lm.autocast: expected a function to run, got ' .. type(fn)) end
  local F = lm.nn.functional
  local saved, saved_mm = {}, lm.matmul
  local function low(t) return lm.is_tensor(t) and t:dtype():match('float') and t:to(dtype) or t end
  local function high(t) return lm.is_tensor(t) and (t:dtype() == 'float16' or t:dtype() == 'bfloat16') and t:float() or t end
  for k in pairs(AUTOCAST_LOW) do
    saved[k] = F[k]
    F[k] = function(x, w, b, ...) return saved[k](low(x), low(w), low(b), ...) end
  end
  for k in pairs(AUTOCAST_F32) do
    saved[k] = F[k]
    F[k] = function(a, b, c, ...) return saved[k](high(a), high(b), high(c), ...) end
  end
  lm.matmul = function(a, b) return saved_mm(low(a), low(b)) end
  local r = table.pack(pcall(fn, ...))
  for k, f in pairs(saved) do F[k] = f end
  lm.matmul = saved_mm
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

local GradScaler = {}
GradScaler.__index = GradScaler

--- quant.GradScaler({init_scale=2^16, growth_factor=2, backoff_factor=0.5, growth_interval=2000}):
--- dynamic loss scaling for float16 training: scaler:scale(loss) before backward;
--- scaler:step(optimizer) unscales the gradients and steps only when all are finite (else skips
--- and halves the scale); scaler:update() grows the scale after growth_interval good steps.
function M.GradScaler(opts)
  opts = opts or {}
  return setmetatable({ scale_value = opts.init_scale or 65536.0, growth_factor = opts.growth_factor or 2.0,
    backoff_factor = opts.backoff_factor or 0.5, growth_interval = opts.growth_interval or 2000,
    good = 0, skipped = 0, found_inf = false }, GradScaler)
end

function GradScaler:scale(loss) return loss * self.scale_value end

function GradScaler:step(opt)
  local params = {}
  for _, group in ipairs(opt.param_groups or { { params = opt.params } }) do
    for _, p in ipairs(group.params or {}) do params[#params + 1] = p end
  end
  local inf = false
  lm.no_grad(function()
    for _, p in ipairs(params) do
      local g = p.grad
      if g then
        g:mul_(1 / self.scale_value)
        if g:ne(g):sum():item() > 0 or g:abs():eq(math.huge):sum():item() > 0 then inf = true end
      end
    end
  end)
  self.found_inf = inf
  if inf then
    self.skipped = self.skipped + 1
    return false
  end
  opt:step()
  return true
end

function GradScaler:update()
  if self.found_inf then
    self.scale_value = self.scale_value * self.backoff_factor
    self.good = 0
  else
    self.good = self.good + 1
    if self.good >= self.growth_interval then
      self.scale_value = self.scale_value * self.growth_factor
      self.good = 0
    end
  end
  self.found_inf = false
end

--- quant.int_mm(a uint8 (M, K), b int8 (K, N)) -> int32 (M, N): the exact product (src/ops/quant.c).
M.int_mm = function(a, b) return lm._int_mm(a, b) end

return M
