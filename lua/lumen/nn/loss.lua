--[[
lumen.nn.loss — the loss modules: CrossEntropyLoss (with label_smoothing), NLLLoss, MSELoss,
BCELoss, BCEWithLogitsLoss (with pos_weight), each the module form of its F function with the
options of PyTorch ({reduction='mean'|'sum'|'none'}). Class targets are 1-based int64 indices;
a target out of range, of a float dtype, or of the wrong shape is an error naming the loss.
Read next: lumen/nn/initializers.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local layers = require 'lumen.nn.layers'

local M = {}
local builtin, raise, options = base.builtin, base.raise, layers.options

local REDUCTIONS = { mean = true, sum = true, none = true }

local function reduction(opts, fname)
  local r = opts.reduction or 'mean'
  if not REDUCTIONS[r] then
    raise(string.format("%s: option reduction must be 'mean', 'sum' or 'none', got %s", fname, tostring(r)))
  end
  return r
end

local function check_pair(self, input, target)
  if not lm.is_tensor(input) then raise(self:_label() .. ': input must be a tensor, got ' .. type(input)) end
  if not lm.is_tensor(target) then raise(self:_label() .. ': target must be a tensor, got ' .. type(target)) end
end

--- Class-index losses: the target must hold 1-based int64/int32 indices.
local function check_classes(self, input, target)
  check_pair(self, input, target)
  if target:dtype():match('^float') then
    raise(string.format('%s: target must hold class indices (int64, 1-based), got a %s tensor (for ' ..
      'probabilities use BCELoss or BCEWithLogitsLoss)', self:_label(), target:dtype()))
  end
end

local CrossEntropyLoss = builtin('CrossEntropyLoss')
M.CrossEntropyLoss = CrossEntropyLoss
--- nn.CrossEntropyLoss([{reduction='mean', label_smoothing=0}]): log_softmax + NLL on logits
--- (N, C) and 1-based class indices (N).
function CrossEntropyLoss:__init(opts)
  local fname = 'nn.CrossEntropyLoss'
  opts = options(opts, { reduction = true, label_smoothing = true }, fname)
  self.reduction = reduction(opts, fname)
  local s = opts.label_smoothing or 0
  if type(s) ~= 'number' or not (s >= 0 and s <= 1) then
    raise(fname .. ': option label_smoothing must be a number in [0, 1], got ' .. tostring(s))
  end
  self.label_smoothing = s
  self._opts = { reduction = self.reduction, label_smoothing = s }
end
function CrossEntropyLoss:forward(input, target)
  check_classes(self, input, target)
  return self:_call(F.cross_entropy, input, target, self._opts)
end
function CrossEntropyLoss:extra_repr()
  return string.format("reduction='%s', label_smoothing=%g", self.reduction, self.label_smoothing)
end

local NLLLoss = builtin('NLLLoss')
M.NLLLoss = NLLLoss
--- nn.NLLLoss([{reduction='mean'}]): -logp[target] for log-probabilities (N, C).
function NLLLoss:__init(opts)
  opts = options(opts, { reduction = true }, 'nn.NLLLoss')
  self.reduction = reduction(opts, 'nn.NLLLoss')
  self._opts = { reduction = self.reduction }
end
function NLLLoss:forward(input, target)
  check_classes(self, input, target)
  return self:_call(F.nll_loss, input, target, self._opts)
end
function NLLLoss:extra_repr() return "reduction='" .. self.reduction .. "'" end

local function pair_loss(name, f, extra)
  local C = builtin(name)
  C.__init = function(self, opts)
    local allowed = { reduction = true }
    for k in next, extra or {} do allowed[k] = true end
    opts = options(opts, allowed, 'nn.' .. name)
    self.reduction = reduction(opts, 'nn.' .. name)
    self._opts = { reduction = self.reduction }
    if extra then extra.init(self, opts) end
  end
  C.forward = function(self, input, target)
    check_pair(self, input, target)
    return self:_call(f, input, target, self._opts)
  end
  C.extra_repr = function(self) return "reduction='" .. self.reduction .. "'" end
  return C
end

--- nn.MSELoss([{reduction='mean'}])
M.MSELoss = pair_loss('MSELoss', F.mse_loss)
--- nn.BCELoss([{reduction='mean'}]): probabilities in [0, 1] against targets in [0, 1]
M.BCELoss = pair_loss('BCELoss', F.binary_cross_entropy)
--- nn.BCEWithLogitsLoss([{reduction='mean', pos_weight=}]): sigmoid + BCE in one stable op
M.BCEWithLogitsLoss = pair_loss('BCEWithLogitsLoss', F.binary_cross_entropy_with_logits, {
  pos_weight = true,
  init = function(self, opts)
    if opts.pos_weight ~= nil and not lm.is_tensor(opts.pos_weight) then
      raise('nn.BCEWithLogitsLoss: option pos_weight must be a tensor, got ' .. type(opts.pos_weight))
    end
    self:register_buffer('pos_weight', opts.pos_weight)
    self._opts.pos_weight = opts.pos_weight
  end,
})

return M
