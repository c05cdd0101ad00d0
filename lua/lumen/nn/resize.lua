--[[
lumen.nn.resize — changing a feature map's spatial size as torch.nn does: F.adaptive_avg_pool2d,
F.interpolate (nearest, bilinear), nn.AdaptiveAvgPool2d, nn.Upsample.

Each is separable and linear in x: out = R_h x R_w^T, with R_h (out_h, H) and R_w (out_w, W) the
row operators built here from PyTorch's index rules, applied as two matmuls (the first over the
last dim, the second broadcast over N and C). So values and gradients are exact compositions of
matmul (autograd differentiates them), any float dtype works, and the cost is O(N C out_h W (H +
out_w)) — the sizes these modules see in teaching models.
  adaptive average: output cell i of O over a dim of size I averages input [floor(iI/O),
                    ceil((i+1)I/O)) (windows overlap when I is not a multiple of O)
  nearest:          src = min(floor(dst * s), I - 1), s = I / O, or 1 / scale_factor when given
  bilinear:         align_corners = false: src = (dst + 0.5) s - 0.5 clamped at 0; true: src =
                    dst (I - 1) / (O - 1); weights 1 - f and f on floor(src) and the next (clamped)
Read next: lumen/nn/layers.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local check = require 'lumen.nn.check'

local M = {}
local builtin, raise, shape_str, describe = base.builtin, base.raise, base.shape_str, check.describe

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function check_input(fname, x)
  if not lm.is_tensor(x) then raise(fname .. ': input must be a tensor, got ' .. describe(x)) end
  if x:dim() ~= 3 and x:dim() ~= 4 then
    raise(string.format('%s: input of shape %s must be [N, C, H, W] or [C, H, W]', fname, shape_str(x)))
  end
  if not FLOAT[x:dtype()] then
    raise(string.format('%s: input must be a float tensor, got %s', fname, x:dtype()))
  end
end

-- A size option: one positive integer or a pair; nil entries (None) keep the input's size.
local function size_pair(v, fname, what, in_h, in_w)
  if type(v) == 'number' then v = { v, v } end
  if type(v) ~= 'table' or lm.is_tensor(v) or (#v ~= 2 and not (v[1] == nil and v[2] ~= nil)) then
    raise(string.format('%s: %s must be an integer or a pair {h, w}, got %s', fname, what, describe(v)))
  end
  local out = { v[1] or in_h, v[2] or in_w }
  for i = 1, 2 do
    if math.type(out[i]) ~= 'integer' and not (type(out[i]) == 'number' and out[i] == math.floor(out[i])) then
      raise(string.format('%s: %s must hold integers, got %s', fname, what, tostring(out[i])))
    end
    out[i] = math.tointeger(out[i])
    if out[i] < 1 then raise(string.format('%s: %s must be at least 1, got %d', fname, what, out[i])) end
  end
  return out
end

-- The operators are (O, I) tables built here: a size past what one could hold is refused first.
local MAX_OPERATOR = 1 << 24

local function check_operator(fname, what, O, I)
  if O * I > MAX_OPERATOR then
    raise(string.format('%s: %s %d from %d is too large (its %d x %d resampling matrix; at most %d entries)', fname, what,
      O, I, O, I, MAX_OPERATOR))
  end
end

-- The (O, I) operator of an adaptive average over a dim of size I.
local function adaptive_rows(O, I, dt)
  local rows = {}
  for i = 0, O - 1 do
    local s, e = (i * I) // O, -((-(i + 1) * I) // O) -- floor, ceil
    local r = {}
    for j = 1, I do r[j] = 0 end
    for j = s + 1, e do r[j] = 1 / (e - s) end
    rows[i + 1] = r
  end
  return lm.tensor(rows, { dtype = dt })
end

-- The (O, I) operator of nearest or bilinear resampling; scale: the source step per output pixel
-- (nil: I / O).
local function resample_rows(O, I, mode, align, scale, dt)
  local rows = {}
  local s = scale or I / O
  for d = 0, O - 1 do
    local r = {}
    for j = 1, I do r[j] = 0 end
    if mode == 'nearest' then
      r[math.min(math.floor(d * s), I - 1) + 1] = 1
    else
      local src
      if align then
        src = O > 1 and d * (I - 1) / (O - 1) or 0
      else
        src = math.max((d + 0.5) * s - 0.5, 0)
      end
      local i0 = math.min(math.floor(src), I - 1)
      local i1 = math.min(i0 + 1, I - 1)
      local f = src - i0
      r[i0 + 1] = r[i0 + 1] + (1 - f)
      r[i1 + 1] = r[i1 + 1] + f
    end
    rows[d + 1] = r
  end
  return lm.tensor(rows, { dtype = dt })
end

-- out = R_h x R_w^T for x (..., H, W).
local function apply(x, rh, rw)
  return rh:matmul(x:matmul(rw:t()))
end

local function compute_dtype(x)
  return (x:dtype() == 'float16' or x:dtype() == 'bfloat16') and 'float32' or x:dtype()
end

--- F.adaptive_avg_pool2d(x, output_size): x (N, C, H, W) or (C, H, W); output_size an integer or
--- {h, w} (nil keeps that dim). Each output cell averages its window of the input (PyTorch's).
function M.adaptive_avg_pool2d(x, output_size)
  local fname = 'F.adaptive_avg_pool2d'
  check_input(fname, x)
  local H, W = x:size(-2), x:size(-1)
  if H == 0 or W == 0 then raise(string.format('%s: input of shape %s has an empty spatial dim', fname, shape_str(x))) end
  local o = size_pair(output_size, fname, 'output_size', H, W)
  check_operator(fname, 'output size', o[1], H)
  check_operator(fname, 'output size', o[2], W)
  local dt = compute_dtype(x)
  local y = apply(dt == x:dtype() and x or x:to(dt), adaptive_rows(o[1], H, dt), adaptive_rows(o[2], W, dt))
  return dt == x:dtype() and y or y:to(x:dtype())
end

local MODES = { nearest = true, bilinear = true }

--- F.interpolate(x, {size=, scale_factor=, mode='nearest'|'bilinear', align_corners=}): x (N, C, H,
--- W) resampled to size (an integer or {h, w}) or by scale_factor (a number or a pair), as
--- PyTorch's (recompute_scale_factor unset: the scale factor itself sets the source step).
function M.interpolate(x, opts)
  local fname = 'F.interpolate'
  check_input(fname, x)
  if type(opts) ~= 'table' or lm.is_tensor(opts) then
    raise(fname .. ': options must be a table {size=, scale_factor=, mode=, align_corners=}, got ' .. describe(opts))
  end
  for k in pairs(opts) do
    if k ~= 'size' and k ~= 'scale_factor' and k ~= 'mode' and k ~= 'align_corners' then
      raise(string.format("%s: unknown option '%s' (size, scale_factor, mode, align_corners)", fname, tostring(k)))
    end
  end
  local mode = opts.mode or 'nearest'
  if not MODES[mode] then
    raise(string.format("%s: mode '%s' is not one of nearest, bilinear", fname, tostring(mode)))
  end
  local align = opts.align_corners
  if align ~= nil and mode == 'nearest' then
    raise(fname .. ": align_corners only goes with mode 'bilinear'")
  end
  local H, W = x:size(-2), x:size(-1)
  if H == 0 or W == 0 then raise(string.format('%s: input of shape %s has an empty spatial dim', fname, shape_str(x))) end
  local o, sh, sw
  if (opts.size == nil) == (opts.scale_factor == nil) then
    raise(fname .. ': give exactly one of size and scale_factor')
  end
  if opts.size ~= nil then
    o = size_pair(opts.size, fname, 'size', H, W)
  else
    local f = opts.scale_factor
    if type(f) == 'number' then f = { f, f } end
    if type(f) ~= 'table' or type(f[1]) ~= 'number' or type(f[2]) ~= 'number' or f[1] <= 0 or f[2] <= 0 then
      raise(fname .. ': scale_factor must be a positive number or a pair of them, got ' .. describe(opts.scale_factor))
    end
    o = { math.floor(H * f[1]), math.floor(W * f[2]) }
    if o[1] < 1 or o[2] < 1 then
      raise(string.format('%s: scale_factor %s gives an empty output from %dx%d', fname, describe(opts.scale_factor), H, W))
    end
    sh, sw = 1 / f[1], 1 / f[2]
  end
  check_operator(fname, 'output size', o[1], H)
  check_operator(fname, 'output size', o[2], W)
  local dt = compute_dtype(x)
  local y = apply(dt == x:dtype() and x or x:to(dt), resample_rows(o[1], H, mode, align, sh, dt),
    resample_rows(o[2], W, mode, align, sw, dt))
  return dt == x:dtype() and y or y:to(x:dtype())
end

-- ---------------------------------------------------------------- modules

M.AdaptiveAvgPool2d = builtin('AdaptiveAvgPool2d')

--- nn.AdaptiveAvgPool2d(output_size): F.adaptive_avg_pool2d as a module.
function M.AdaptiveAvgPool2d:__init(output_size)
  self.output_size = output_size
  size_pair(output_size, 'nn.AdaptiveAvgPool2d', 'output_size', 1, 1) -- checked now
end

function M.AdaptiveAvgPool2d:forward(x) return self:_call(M.adaptive_avg_pool2d, x, self.output_size) end

function M.AdaptiveAvgPool2d:extra_repr()
  local o = self.output_size
  return 'output_size=' .. (type(o) == 'table' and ('(' .. tostring(o[1]) .. ', ' .. tostring(o[2]) .. ')') or tostring(o))
end

M.Upsample = builtin('Upsample')

--- nn.Upsample({size=, scale_factor=, mode='nearest', align_corners=}): F.interpolate as a module.
function M.Upsample:__init(opts)
  if type(opts) ~= 'table' or lm.is_tensor(opts) then
    raise('nn.Upsample: options must be a table {size=, scale_factor=, mode=, align_corners=}, got ' .. describe(opts))
  end
  self.size, self.scale_factor, self.mode, self.align_corners = opts.size, opts.scale_factor, opts.mode or 'nearest',
    opts.align_corners
  M.interpolate(lm.zeros(1, 1, 4, 4), { size = opts.size, scale_factor = opts.scale_factor, mode = self.mode,
    align_corners = opts.align_corners }) -- the options checked now
end

function M.Upsample:forward(x)
  return self:_call(M.interpolate, x, { size = self.size, scale_factor = self.scale_factor, mode = self.mode,
    align_corners = self.align_corners })
end

function M.Upsample:extra_repr()
  local function v(t) return type(t) == 'table' and ('(' .. tostring(t[1]) .. ', ' .. tostring(t[2]) .. ')') or tostring(t) end
  if self.size ~= nil then return 'size=' .. v(self.size) .. ', mode=' .. self.mode end
  return 'scale_factor=' .. v(self.scale_factor) .. ', mode=' .. self.mode
end

F.adaptive_avg_pool2d, F.interpolate = M.adaptive_avg_pool2d, M.interpolate

return M
