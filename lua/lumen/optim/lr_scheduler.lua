--[[
lumen.optim.lr_scheduler — learning-rate schedulers with torch.optim.lr_scheduler's semantics
(1.13): making one records each group's initial_lr and takes step 0; each sch:step() (usually once
per epoch) advances last_epoch and sets every group's lr; sch:get_last_lr() is the array of lrs
now in force. StepLR, MultiStepLR and ExponentialLR multiply the current lr (so a user's change to
group.lr carries on), CosineAnnealingLR uses PyTorch's recursive form, LambdaLR is
base_lr * fn(last_epoch) (last_epoch counts steps from 0, as in PyTorch).
Read next: lumen/optim/init.lua.
]]
local lm = require 'lumen'

local M = {}

local check = require 'lumen.nn.check'
local raise = check.raise

local Scheduler = { __name = 'LRScheduler' }
Scheduler.__index = Scheduler
M.LRScheduler = Scheduler

local function is_optimizer(o)
  local mt = type(o) == 'table' and getmetatable(o)
  return mt and type(o.param_groups) == 'table' and type(o.step) == 'function'
end

local function options(name, opts, allowed) return check.options(opts, allowed, name) end

local function number(name, what, v, def, lo)
  if v == nil then v = def end
  if type(v) ~= 'number' or v ~= v or (lo and v < lo) then
    raise(string.format('%s: %s must be a number%s, got %s', name, what, lo and (' >= ' .. lo) or '', tostring(v)))
  end
  return v
end

local function new(cls, opt, last_epoch)
  local name = 'optim.lr_scheduler.' .. cls.__name
  if not is_optimizer(opt) then raise(name .. ': argument 1 must be an optimizer, got ' .. type(opt)) end
  last_epoch = last_epoch or -1
  if math.type(last_epoch) ~= 'integer' or last_epoch < -1 then
    raise(name .. ': last_epoch must be an integer >= -1, got ' .. tostring(last_epoch))
  end
  for gi, g in ipairs(opt.param_groups) do
    if last_epoch == -1 then
      if g.initial_lr == nil then g.initial_lr = g.lr end
    elseif g.initial_lr == nil then
      raise(string.format("%s: param 'initial_lr' is not set in group %d when resuming (last_epoch %d)", name,
        gi, last_epoch))
    end
  end
  local self = setmetatable({ optimizer = opt, last_epoch = last_epoch, _step_count = 0, _name = name }, cls)
  self.base_lrs = {}
  for i, g in ipairs(opt.param_groups) do self.base_lrs[i] = g.initial_lr end
  return self
end

--- Advances one epoch and sets each group's lr.
function Scheduler:step()
  self._step_count = self._step_count + 1
  self.last_epoch = self.last_epoch + 1
  local lrs = self:get_lr()
  self._last_lr = {}
  for i, g in ipairs(self.optimizer.param_groups) do
    g.lr = lrs[i]
    self._last_lr[i] = lrs[i]
  end
end

--- The learning rates set by the last step, one per group.
function Scheduler:get_last_lr() return { table.unpack(self._last_lr) } end

function Scheduler:state_dict()
  local sd = {}
  for k, v in pairs(self) do
    if k ~= 'optimizer' and k ~= 'lr_lambda' and type(v) ~= 'function' then
      sd[k] = type(v) == 'table' and { table.unpack(v) } or v
    end
  end
  return sd
end

function Scheduler:load_state_dict(sd)
  for k, v in pairs(sd) do self[k] = type(v) == 'table' and { table.unpack(v) } or v end
end

local function current(self)
  local out = {}
  for i, g in ipairs(self.optimizer.param_groups) do out[i] = g.lr end
  return out
end

local function class(name, init, get_lr)
  local cls = setmetatable({ __name = name }, { __index = Scheduler,
    __call = function(c, opt, ...)
      local self = init(c, opt, ...)
      self:step()
      return self
    end,
    __tostring = function() return 'class optim.lr_scheduler.' .. name end })
  cls.__index = cls
  cls.get_lr = get_lr
  M[name] = cls
  return cls
end

--- StepLR(opt, {step_size=, gamma=0.1, last_epoch=-1}): lr * gamma every step_size epochs.
class('StepLR', function(c, opt, o)
  local name = 'optim.lr_scheduler.StepLR'
  o = options(name, o, { step_size = true, gamma = true, last_epoch = true })
  if math.type(o.step_size) ~= 'integer' or o.step_size < 1 then
    raise(name .. ': step_size must be a positive integer, got ' .. tostring(o.step_size))
  end
  local self = new(c, opt, o.last_epoch)
  self.step_size, self.gamma = o.step_size, number(name, 'gamma', o.gamma, 0.1, 0)
  return self
end, function(self)
  local lrs = current(self)
  if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma end
  return lrs
end)

--- MultiStepLR(opt, {milestones={...}, gamma=0.1}): lr * gamma at each milestone epoch.
class('MultiStepLR', function(c, opt, o)
  local name = 'optim.lr_scheduler.MultiStepLR'
  o = options(name, o, { milestones = true, gamma = true, last_epoch = true })
  if type(o.milestones) ~= 'table' then raise(name .. ': milestones must be a table of epochs') end
  local self = new(c, opt, o.last_epoch)
  self.milestones = {}
  for _, m in ipairs(o.milestones) do
    if math.type(m) ~= 'integer' then raise(name .. ': milestones must be integers, got ' .. tostring(m)) end
    self.milestones[m] = (self.milestones[m] or 0) + 1
  end
  self.gamma = number(name, 'gamma', o.gamma, 0.1, 0)
  return self
end, function(self)
  local lrs, k = current(self), self.milestones[self.last_epoch]
  if not k then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma ^ k end
  return lrs
end)

--- ExponentialLR(opt, {gamma=}): lr * gamma every epoch.
class('ExponentialLR', function(c, opt, o)
  local name = 'optim.lr_scheduler.ExponentialLR'
  o = options(name, o, { gamma = true, last_epoch = true })
  local self = new(c, opt, o.last_epoch)
  if o.gamma == nil then raise(name .. ': gamma is required') end
  self.gamma = number(name, 'gamma', o.gamma, nil, 0)
  return self
end, function(self)
  local lrs = current(self)
  if self.last_epoch == 0 then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma end
  return lrs
end)

--- CosineAnnealingLR(opt, {T_max=, eta_min=0}): eta_min + (base - eta_min)(1 + cos(pi t/T_max))/2,
--- computed recursively as PyTorch does.
class('CosineAnnealingLR', function(c, opt, o)
  local name = 'optim.lr_scheduler.CosineAnnealingLR'
  o = options(name, o, { T_max = true, eta_min = true, last_epoch = true })
  if math.type(o.T_max) ~= 'integer' or o.T_max < 1 then
    raise(name .. ': T_max must be a positive integer, got ' .. tostring(o.T_max))
  end
  local self = new(c, opt, o.last_epoch)
  self.T_max, self.eta_min = o.T_max, number(name, 'eta_min', o.eta_min, 0)
  return self
end, function(self)
  local lrs, t, T, e = current(self), self.last_epoch, self.T_max, self.eta_min
  local pi = math.pi
  for i = 1, #lrs do
    local base = self.base_lrs[i]
    if t == 0 then
      lrs[i] = base
    elseif self._step_count == 1 and t > 0 then
      lrs[i] = e + (base - e) * (1 + math.cos(t * pi / T)) / 2
    elseif (t - 1 - T) % (2 * T) == 0 then
      lrs[i] = lrs[i] + (base - e) * (1 - math.cos(pi / T)) / 2
    else
      lrs[i] = (1 + math.cos(pi * t / T)) / (1 + math.cos(pi * (t - 1) / T)) * (lrs[i] - e) + e
    end
  end
  return lrs
end)

--- LambdaLR(opt, fn [, {last_epoch=}]) (fn: one function, or one per group): base_lr * fn(epoch).
class('LambdaLR', function(c, opt, fn, o)
  local name = 'optim.lr_scheduler.LambdaLR'
  o = options(name, o, { last_epoch = true })
  local self = new(c, opt, o.last_epoch)
  local fns = {}
  if type(fn) == 'function' then
    for i = 1, #opt.param_groups do fns[i] = fn end
  elseif type(fn) == 'table' and #fn == #opt.param_groups then
    for i, f in ipairs(fn) do
      if type(f) ~= 'function' then raise(name .. ': lr_lambda ' .. i .. ' is not a function') end
      fns[i] = f
    end
  else
    raise(string.format('%s: lr_lambda must be a function or a table of %d functions, got %s', name,
      #opt.param_groups, type(fn)))
  end
  self.lr_lambda = fns
  return self
end, function(self)
  local lrs = {}
  for i, f in ipairs(self.lr_lambda) do
    local k = f(self.last_epoch)
    if type(k) ~= 'number' then
      raise(string.format('%s: lr_lambda returned %s for epoch %d, expected a number', self._name, type(k),
        self.last_epoch))
    end
    lrs[i] = self.base_lrs[i] * k
  end
  return lrs
end)

return M
