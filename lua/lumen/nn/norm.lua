--[[
lumen.nn.norm — group normalisation as torch.nn has it: F.group_norm and nn.GroupNorm (Wu & He
2018; the U-Net of a diffusion model normalises with it, since its batches are small).

The C channels are split into G groups of C/G consecutive channels; each sample's group (its C/G
channels over every position) is normalised to mean 0 and variance 1 (the biased variance, as
PyTorch), then each channel gets its own affine weight and bias. Computed with the engine's fused
layer_norm over the view (N, G, C/G * spatial), which normalises exactly those elements, then the
per-channel affine: values and gradients are those ops'.
Read next: lumen/nn/layers.lua (LayerNorm, BatchNorm2d).
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local check = require 'lumen.nn.check'

local M = {}
local builtin, raise, shape_str, describe = base.builtin, base.raise, base.shape_str, check.describe

--- F.group_norm(x, num_groups [, weight [, bias [, eps = 1e-5]]]): x (N, C, ...) normalised per
--- sample over each group of C / num_groups channels; weight and bias (C) per channel.
function M.group_norm(x, groups, w, b, eps)
  local fname = 'F.group_norm'
  if not lm.is_tensor(x) then raise(fname .. ': input must be a tensor, got ' .. describe(x)) end
  if x:dim() < 2 then raise(string.format('%s: input of shape %s must be [N, C, ...]', fname, shape_str(x))) end
  local C = x:size(2)
  if math.type(groups) ~= 'integer' or groups < 1 or C % groups ~= 0 then
    raise(string.format('%s: num_groups must be a positive integer dividing the %d channels, got %s', fname, C, describe(groups)))
  end
  eps = eps or 1e-5
  if type(eps) ~= 'number' or not (eps > 0) then raise(fname .. ': eps must be a positive number, got ' .. describe(eps)) end
  for i, t in ipairs({ w or false, b or false }) do
    if t and (not lm.is_tensor(t) or t:dim() ~= 1 or t:size(1) ~= C) then
      raise(string.format('%s: %s must be a tensor of shape [%d], got %s', fname, i == 1 and 'weight' or 'bias', C, describe(t)))
    end
  end
  local shape = x:shape()
  local N = shape[1]
  local per = x:numel() // math.max(N * groups, 1)
  if per == 1 then
    raise(string.format('%s: input of shape %s in %d groups has one value per group: nothing to normalise (as PyTorch, refused)',
      fname, shape_str(x), groups))
  end
  local y
  if x:numel() == 0 then
    y = x * 1
  else
    y = F.layer_norm(x:reshape(N, groups, per), { per }, nil, nil, eps):reshape(shape)
  end
  if w or b then
    local bshape = { 1, C }
    for _ = 3, #shape do bshape[#bshape + 1] = 1 end
    if w then y = y * w:view(bshape) end
    if b then y = y + b:view(bshape) end
  end
  return y
end

local GroupNorm = builtin('GroupNorm')
M.GroupNorm = GroupNorm

--- nn.GroupNorm(num_groups, num_channels [, {eps = 1e-5, affine = true, dtype=}]): weight ones,
--- bias zeros, as PyTorch.
function GroupNorm:__init(groups, channels, opts)
  local fname = 'nn.GroupNorm'
  if math.type(groups) ~= 'integer' or groups < 1 then raise(fname .. ': num_groups must be a positive integer, got ' .. describe(groups)) end
  if math.type(channels) ~= 'integer' or channels < 1 then raise(fname .. ': num_channels must be a positive integer, got ' .. describe(channels)) end
  if channels % groups ~= 0 then
    raise(string.format('%s: num_channels %d must be divisible by num_groups %d', fname, channels, groups))
  end
  opts = check.options(opts, { eps = true, affine = true, dtype = true }, fname)
  self.num_groups, self.num_channels = groups, channels
  self.eps = opts.eps or 1e-5
  if type(self.eps) ~= 'number' or not (self.eps > 0) then raise(fname .. ': option eps must be a positive number, got ' .. describe(opts.eps)) end
  self.affine = opts.affine ~= false
  local dt = opts.dtype or 'float32'
  if self.affine then
    self.weight = lm.ones(channels, { dtype = dt }):requires_grad_()
    self.bias = lm.zeros(channels, { dtype = dt }):requires_grad_()
  else
    self:register_parameter('weight', nil)
    self:register_parameter('bias', nil)
  end
end

function GroupNorm:forward(x)
  if lm.is_tensor(x) and (x:dim() < 2 or x:size(2) ~= self.num_channels) then
    raise(string.format('%s: input of shape %s does not fit num_channels=%d (expected [N, %d, ...])', self:_label(),
      shape_str(x), self.num_channels, self.num_channels))
  end
  return M.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
end

function GroupNorm:extra_repr()
  return string.format('%d, %d, eps=%g, affine=%s', self.num_groups, self.num_channels, self.eps, tostring(self.affine))
end

return M
