--[[
lumen.nn.initializers — nn.init: PyTorch's initialisation schemes, in place (under no_grad) on a
tensor, each returning it.

fan_in = size(2) * receptive field, fan_out = size(1) * receptive field (receptive field = the
product of the dims after the second), as torch.nn.init computes them. kaiming_* take a, mode and
nonlinearity positionally (as in PyTorch) or as an options table {a=, mode=, nonlinearity=}.
Random numbers come from Lumen's generator (lm.manual_seed), so values differ from PyTorch's while
the distributions are the same. Read next: lumen/nn/layers.lua.
]]
local lm = require 'lumen'
local base = require 'lumen.nn.module'

local M = {}
local raise = base.raise

local function check(t, fname)
  if not lm.is_tensor(t) then raise('nn.init.' .. fname .. ': expected a tensor, got ' .. type(t)) end
  if not t:dtype():match('^float') then
    raise('nn.init.' .. fname .. ': the tensor must be float32 or float64, got ' .. t:dtype())
  end
end

--- Runs fill(t) with grad mode off (parameters require grad; in-place writes need no_grad).
local function fill(t, f)
  local prev = lm.set_grad_enabled(false)
  local ok, err = pcall(f, t)
  lm.set_grad_enabled(prev)
  if not ok then error(err, 0) end
  return t
end

function M._calculate_fan_in_and_fan_out(t, fname)
  if t:dim() < 2 then
    raise(string.format('nn.init.%s: fan in and fan out need at least 2 dims, got shape %s', fname or '?',
      base.shape_str(t)))
  end
  local receptive = 1
  for d = 3, t:dim() do receptive = receptive * t:size(d) end
  return t:size(2) * receptive, t:size(1) * receptive
end

--- The recommended gain of a nonlinearity (torch.nn.init.calculate_gain).
function M.calculate_gain(nonlinearity, param)
  local linear = { linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
    conv_transpose2d = true, conv_transpose3d = true, sigmoid = true }
  if linear[nonlinearity] then return 1 end
  if nonlinearity == 'tanh' then return 5 / 3 end
  if nonlinearity == 'relu' then return math.sqrt(2) end
  if nonlinearity == 'leaky_relu' then
    local slope = param == nil and 0.01 or param
    if type(slope) ~= 'number' then raise('nn.init.calculate_gain: negative_slope must be a number, got ' .. type(slope)) end
    return math.sqrt(2 / (1 + slope * slope))
  end
  if nonlinearity == 'selu' then return 3 / 4 end
  raise("nn.init.calculate_gain: unsupported nonlinearity '" .. tostring(nonlinearity) .. "'")
end

function M.uniform_(t, a, b)
  check(t, 'uniform_')
  return fill(t, function(x) x:uniform_(a or 0, b or 1) end)
end

function M.normal_(t, mean, std)
  check(t, 'normal_')
  return fill(t, function(x) x:normal_(mean or 0, std or 1) end)
end

function M.constant_(t, v)
  check(t, 'constant_')
  if type(v) ~= 'number' then raise('nn.init.constant_: value must be a number, got ' .. type(v)) end
  return fill(t, function(x) x:fill_(v) end)
end

function M.zeros_(t)
  check(t, 'zeros_')
  return fill(t, function(x) x:zero_() end)
end

function M.ones_(t)
  check(t, 'ones_')
  return fill(t, function(x) x:fill_(1) end)
end

--- The identity matrix for a 2-D tensor.
function M.eye_(t)
  check(t, 'eye_')
  if t:dim() ~= 2 then raise('nn.init.eye_: expected a 2-D tensor, got shape ' .. base.shape_str(t)) end
  return fill(t, function(x) x:copy_(lm.eye(x:size(1), x:size(2), { dtype = x:dtype() })) end)
end

function M.xavier_uniform_(t, gain)
  check(t, 'xavier_uniform_')
  local fi, fo = M._calculate_fan_in_and_fan_out(t, 'xavier_uniform_')
  local a = (gain or 1) * math.sqrt(6 / (fi + fo))
  return fill(t, function(x) x:uniform_(-a, a) end)
end

function M.xavier_normal_(t, gain)
  check(t, 'xavier_normal_')
  local fi, fo = M._calculate_fan_in_and_fan_out(t, 'xavier_normal_')
  local std = (gain or 1) * math.sqrt(2 / (fi + fo))
  return fill(t, function(x) x:normal_(0, std) end)
end

local function kaiming_args(fname, a, mode, nonlinearity)
  if type(a) == 'table' then
    local o = a
    for k in next, o do
      if k ~= 'a' and k ~= 'mode' and k ~= 'nonlinearity' then
        raise(string.format("nn.init.%s: unknown option '%s' (expected a, mode, nonlinearity)", fname, tostring(k)))
      end
    end
    a, mode, nonlinearity = o.a, o.mode, o.nonlinearity
  end
  a, mode, nonlinearity = a or 0, mode or 'fan_in', nonlinearity or 'leaky_relu'
  if mode ~= 'fan_in' and mode ~= 'fan_out' then
    raise(string.format("nn.init.%s: mode must be 'fan_in' or 'fan_out', got %s", fname, tostring(mode)))
  end
  return a, mode, nonlinearity
end

--- U(-bound, bound), bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).
function M.kaiming_uniform_(t, a, mode, nonlinearity)
  check(t, 'kaiming_uniform_')
  a, mode, nonlinearity = kaiming_args('kaiming_uniform_', a, mode, nonlinearity)
  local fi, fo = M._calculate_fan_in_and_fan_out(t, 'kaiming_uniform_')
  local fan = mode == 'fan_in' and fi or fo
  local bound = M.calculate_gain(nonlinearity, a) * math.sqrt(3 / fan)
  return fill(t, function(x) x:uniform_(-bound, bound) end)
end

--- N(0, std^2), std = gain / sqrt(fan).
function M.kaiming_normal_(t, a, mode, nonlinearity)
  check(t, 'kaiming_normal_')
  a, mode, nonlinearity = kaiming_args('kaiming_normal_', a, mode, nonlinearity)
  local fi, fo = M._calculate_fan_in_and_fan_out(t, 'kaiming_normal_')
  local fan = mode == 'fan_in' and fi or fo
  local std = M.calculate_gain(nonlinearity, a) / math.sqrt(fan)
  return fill(t, function(x) x:normal_(0, std) end)
end

return M
