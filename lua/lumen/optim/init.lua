--[[
lumen.optim — `require 'optim'` (the global optim): SGD, Adam, AdamW, RMSprop and the
learning-rate schedulers (optim.lr_scheduler), in torch.optim's names and semantics (1.13).

An optimizer holds param_groups (an array of tables: params and the group's hyperparameters, such
as lr, which a scheduler or the user may change between steps) and a state per parameter (its
momentum buffer or moment estimates). opt:step() updates every parameter that has a .grad with one
fused C pass per parameter (lumen/optim.h: no Lua loop over elements); opt:zero_grad() clears the
grads. Hyperparameters are checked when the optimizer is made and at every step (a negative or
NaN lr is an error naming the optimizer and the group). Read next: lumen/optim/lr_scheduler.lua.
]]
local lm = require 'lumen'
local C = lm._optim

local optim = {}

-- ---------------------------------------------------------------- errors

local check = require 'lumen.nn.check'
local raise, describe = check.raise, check.describe
optim._raise = raise

-- ---------------------------------------------------------------- the base class

local Optimizer = { __name = 'Optimizer' }
Optimizer.__index = Optimizer
optim.Optimizer = Optimizer

local function is_module(v)
  local mt = type(v) == 'table' and getmetatable(v)
  return mt and type(mt) == 'table' and rawget(mt, '_is_module_class') == true
end

--- The groups of params: an array of tensors, a module, or an array of group tables {params=, lr=...}.
local function make_groups(name, params)
  if is_module(params) then params = params:parameters() end
  if lm.is_tensor(params) then params = { params } end
  if type(params) ~= 'table' then
    raise(string.format('%s: params must be a table of tensors (model:parameters()) or of parameter ' ..
      'groups, got %s', name, describe(params)))
  end
  if #params == 0 then raise(name .. ': got an empty parameter list') end
  local groups = {}
  if type(params[1]) == 'table' and not lm.is_tensor(params[1]) then
    for i, g in ipairs(params) do
      if type(g) ~= 'table' or lm.is_tensor(g) or g.params == nil then
        raise(string.format('%s: parameter group %d must be a table with params, got %s', name, i, describe(g)))
      end
      local copy = {}
      for k, v in pairs(g) do copy[k] = v end
      if is_module(copy.params) then copy.params = copy.params:parameters() end
      if lm.is_tensor(copy.params) then copy.params = { copy.params } end
      groups[i] = copy
    end
  else
    groups[1] = { params = params }
  end
  return groups
end

local function check_params(name, groups)
  local seen = {}
  for gi, g in ipairs(groups) do
    if type(g.params) ~= 'table' or #g.params == 0 then
      raise(string.format('%s: parameter group %d has no parameters', name, gi))
    end
    local list = {}
    for i, p in ipairs(g.params) do
      if not lm.is_tensor(p) then
        raise(string.format('%s: parameter %d%s is %s, expected a tensor', name, i,
          #groups > 1 and (' of group ' .. gi) or '', describe(p)))
      end
      if not p:dtype():match('^float') then
        raise(string.format('%s: parameter %d is a %s tensor; only float32 and float64 tensors can be ' ..
          'optimized', name, i, p:dtype()))
      end
      if not p.is_leaf then raise(string.format("%s: parameter %d is not a leaf tensor (it has grad_fn %s): " ..
        "can't optimize a non-leaf tensor", name, i, tostring(p.grad_fn))) end
      if seen[p] then raise(name .. ': some parameters appear more than once (in one or several groups)') end
      seen[p] = true
      list[i] = p
    end
    g.params = list
  end
end

--- Checks a group's hyperparameters against the optimizer's spec {name = kind}.
local function check_hyper(self, g, gi)
  local name = self._name
  for k, kind in pairs(self._spec) do
    local v = g[k]
    local bad
    if kind == 'nonneg' then bad = type(v) ~= 'number' or not (v >= 0) or v == math.huge
    elseif kind == 'unit' then bad = type(v) ~= 'number' or not (v >= 0 and v <= 1)
    elseif kind == 'unit_open' then bad = type(v) ~= 'number' or not (v >= 0 and v < 1)
    elseif kind == 'bool' then bad = type(v) ~= 'boolean'
    elseif kind == 'betas' then
      bad = type(v) ~= 'table' or type(v[1]) ~= 'number' or type(v[2]) ~= 'number' or
          not (v[1] >= 0 and v[1] < 1) or not (v[2] >= 0 and v[2] < 1)
    end
    if bad then
      local what = kind == 'nonneg' and 'a finite number >= 0' or kind == 'unit' and 'a number in [0, 1]'
          or kind == 'unit_open' and 'a number in [0, 1)' or kind == 'bool' and 'a boolean'
          or 'a pair {beta1, beta2} in [0, 1)'
      raise(string.format('%s: invalid %s %s%s: it must be %s', name, k == 'lr' and 'learning rate' or k,
        describe(v), #self.param_groups > 1 and (' in parameter group ' .. gi) or '', what))
    end
  end
end

--- A new optimizer of class cls: defaults hold every hyperparameter (lr = nil: required).
function Optimizer._new(cls, params, opts, defaults, spec)
  local name = 'optim.' .. cls.__name
  local groups = make_groups(name, params)
  if opts ~= nil and (type(opts) ~= 'table' or lm.is_tensor(opts)) then
    raise(string.format('%s: options must be a table such as {lr=0.1}, got %s', name, describe(opts)))
  end
  opts = opts or {}
  for k in pairs(opts) do
    if defaults[k] == nil and spec[k] == nil then
      local list = {}
      for d in pairs(spec) do list[#list + 1] = d end
      table.sort(list)
      raise(string.format("%s: unknown option '%s' (expected %s)", name, tostring(k), table.concat(list, ', ')))
    end
  end
  local self = setmetatable({ _name = name, _spec = spec, state = {}, param_groups = groups, defaults = {} }, cls)
  for k in pairs(spec) do
    local v = opts[k]
    if v == nil then v = defaults[k] end
    self.defaults[k] = v
  end
  if self.defaults.lr == nil and groups[1].lr == nil then raise(name .. ': lr is required ({lr=0.1})') end
  check_params(name, groups)
  for gi, g in ipairs(groups) do
    for k, v in pairs(self.defaults) do if g[k] == nil then g[k] = v end end
    if type(g.betas) == 'table' then g.betas = { g.betas[1], g.betas[2] } end
    check_hyper(self, g, gi)
  end
  if cls._validate then cls._validate(self) end
  return self
end

--- Adds a group {params=, lr=...}; missing hyperparameters come from the defaults.
function Optimizer:add_param_group(g)
  if type(g) ~= 'table' or g.params == nil then raise(self._name .. ':add_param_group: expected {params=...}') end
  local groups = make_groups(self._name, { g })
  local all = {}
  for _, old in ipairs(self.param_groups) do all[#all + 1] = old end
  all[#all + 1] = groups[1]
  check_params(self._name, all)
  for k, v in pairs(self.defaults) do if groups[1][k] == nil then groups[1][k] = v end end
  self.param_groups[#self.param_groups + 1] = groups[1]
  check_hyper(self, groups[1], #self.param_groups)
end

--- Clears the .grad of every parameter (to nil, as PyTorch 2; {set_to_none=false} zeroes them).
function Optimizer:zero_grad(opts)
  local none = not (type(opts) == 'table' and opts.set_to_none == false)
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if none then p.grad = nil
      elseif p.grad then p.grad:zero_() end
    end
  end
end

--- One update of every parameter with a gradient. closure (optional) recomputes and returns the
--- loss first, as in PyTorch; its result is returned.
function Optimizer:step(closure)
  local loss
  if closure ~= nil then
    if type(closure) ~= 'function' then raise(self._name .. ':step: closure must be a function, got ' .. describe(closure)) end
    loss = closure()
  end
  for gi, g in ipairs(self.param_groups) do
    check_hyper(self, g, gi)
    for _, p in ipairs(g.params) do
      local st = self.state[p]
      if not st then
        st = {}
        self.state[p] = st
      end
      self:_update(p, g, st)
    end
  end
  return loss
end

--- {state = {[i] = {...}}, param_groups = {{lr=, ..., params = {i, ...}}}}: parameters numbered
--- from 1 across the groups in order (PyTorch numbers them from 0). State tensors are copies.
function Optimizer:state_dict()
  local index, n = {}, 0
  local groups, state = {}, {}
  for gi, g in ipairs(self.param_groups) do
    local out = {}
    for k, v in pairs(g) do
      if k ~= 'params' then out[k] = type(v) == 'table' and { table.unpack(v) } or v end
    end
    out.params = {}
    for _, p in ipairs(g.params) do
      n = n + 1
      index[p] = n
      out.params[#out.params + 1] = n
    end
    groups[gi] = out
  end
  for p, st in pairs(self.state) do
    if index[p] then
      local copy = {}
      for k, v in pairs(st) do copy[k] = lm.is_tensor(v) and v:clone() or v end
      state[index[p]] = copy
    end
  end
  return { state = state, param_groups = groups }
end

--- Restores hyperparameters and states from opt:state_dict() of an optimizer of the same kind
--- over parameters of the same shapes.
function Optimizer:load_state_dict(sd)
  local name = self._name .. ':load_state_dict'
  if type(sd) ~= 'table' or type(sd.param_groups) ~= 'table' or type(sd.state) ~= 'table' then
    raise(name .. ': expected a table with state and param_groups (from opt:state_dict())')
  end
  if #sd.param_groups ~= #self.param_groups then
    raise(string.format('%s: the state has %d parameter groups, the optimizer %d', name, #sd.param_groups,
      #self.param_groups))
  end
  local params = {}
  for gi, g in ipairs(self.param_groups) do
    local sg = sd.param_groups[gi]
    if type(sg.params) ~= 'table' or #sg.params ~= #g.params then
      raise(string.format('%s: group %d has %d parameters in the state, %d in the optimizer', name, gi,
        type(sg.params) == 'table' and #sg.params or 0, #g.params))
    end
    for i, p in ipairs(g.params) do params[sg.params[i]] = p end
  end
  for i, st in pairs(sd.state) do
    local p = params[i]
    if not p then raise(string.format('%s: the state holds parameter %s, which no group lists', name, tostring(i))) end
    for k, v in pairs(st) do
      if lm.is_tensor(v) and k ~= 'step' and table.concat(v:shape(), 'x') ~= table.concat(p:shape(), 'x') then
        raise(string.format("%s: state '%s' of parameter %d has shape [%s], the parameter [%s]", name, k, i,
          table.concat(v:shape(), ', '), table.concat(p:shape(), ', ')))
      end
    end
  end
  self.state = {}
  for i, st in pairs(sd.state) do
    local p, copy = params[i], {}
    for k, v in pairs(st) do copy[k] = lm.is_tensor(v) and v:to(p:dtype()):clone() or v end
    self.state[p] = copy
  end
  for gi, g in ipairs(self.param_groups) do
    for k, v in pairs(sd.param_groups[gi]) do
      if k ~= 'params' then g[k] = type(v) == 'table' and { table.unpack(v) } or v end
    end
    check_hyper(self, g, gi)
  end
end

function Optimizer:__tostring()
  local lines = { self.__name .. ' (' }
  for gi, g in ipairs(self.param_groups) do
    lines[#lines + 1] = string.format('Parameter Group %d', gi)
    local keys = {}
    for k in pairs(g) do if k ~= 'params' then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = g[k]
      if type(v) == 'table' then v = '{' .. table.concat(v, ', ') .. '}' end
      lines[#lines + 1] = string.format('    %s: %s', k, tostring(v))
    end
    local n = 0
    for _, p in ipairs(g.params) do n = n + p:numel() end
    lines[#lines + 1] = string.format('    params: %d tensors, %d elements', #g.params, n)
  end
  lines[#lines + 1] = ')'
  return table.concat(lines, '\n')
end

--- A new optimizer class; instances are made by calling it: optim.SGD(params, opts).
local function class(name, defaults, spec, update, validate)
  local cls = setmetatable({ __name = name, _validate = validate }, { __index = Optimizer,
    __call = function(c, params, opts) return Optimizer._new(c, params, opts, defaults, spec) end,
    __tostring = function() return 'class optim.' .. name end })
  cls.__index = cls
  cls.__tostring = Optimizer.__tostring
  cls._update = update
  optim[name] = cls
  return cls
end

-- ---------------------------------------------------------------- SGD

--- optim.SGD(params, {lr=, momentum=0, dampening=0, weight_decay=0, nesterov=false, maximize=false})
class('SGD', { momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false },
  { lr = 'nonneg', momentum = 'nonneg', dampening = 'unit', weight_decay = 'nonneg', nesterov = 'bool',
    maximize = 'bool' },
  function(self, p, g, st)
    local buf, first = nil, false
    if g.momentum ~= 0 then
      buf = st.momentum_buffer
      if not buf then
        if not p.grad then return end
        buf = lm.zeros_like(p)
        st.momentum_buffer = buf
        first = true
      end
    end
    local mark = lm._graph.capturing() and require('lumen.graph')._mark()
    C.sgd(p, buf, g.lr, g.momentum, g.dampening, g.weight_decay, g.nesterov, g.maximize, first)
    -- a compiled step (lumen/graph.lua) re-reads the learning rate; the buffer is no longer new
    if mark then require('lumen.graph')._bind(mark, function() return { lr = g.lr, first = false } end) end
  end,
  function(self)
    for gi, g in ipairs(self.param_groups) do
      if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
        raise(string.format('%s: nesterov momentum needs momentum > 0 and dampening 0%s', self._name,
          #self.param_groups > 1 and (' (parameter group ' .. gi .. ')') or ''))
      end
    end
  end)

-- ---------------------------------------------------------------- Adam, AdamW

local adam_spec = { lr = 'nonneg', betas = 'betas', eps = 'nonneg', weight_decay = 'nonneg', amsgrad = 'bool',
  maximize = 'bool' }

local function adam_update(decoupled)
  return function(self, p, g, st)
    if not p.grad then return end
    if not st.exp_avg then
      st.step = 0
      st.exp_avg = lm.zeros_like(p)
      st.exp_avg_sq = lm.zeros_like(p)
      if g.amsgrad then st.max_exp_avg_sq = lm.zeros_like(p) end
    end
    if g.amsgrad and not st.max_exp_avg_sq then st.max_exp_avg_sq = lm.zeros_like(p) end
    st.step = st.step + 1
    local mark = lm._graph.capturing() and require('lumen.graph')._mark()
    C.adam(p, st.exp_avg, st.exp_avg_sq, g.amsgrad and st.max_exp_avg_sq or nil, g.lr, g.betas[1], g.betas[2],
      g.eps, g.weight_decay, st.step, g.amsgrad, decoupled, g.maximize)
    -- a compiled step (lumen/graph.lua) takes the next step count and the learning rate at every run
    if mark then
      require('lumen.graph')._bind(mark, function()
        st.step = st.step + 1
        return { step = st.step, lr = g.lr }
      end)
    end
  end
end

--- optim.Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, amsgrad=false})
class('Adam', { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, amsgrad = false, maximize = false },
  adam_spec, adam_update(false))
--- optim.AdamW(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=1e-2, amsgrad=false})
class('AdamW', { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2, amsgrad = false, maximize = false },
  adam_spec, adam_update(true))

-- ---------------------------------------------------------------- RMSprop

--- optim.RMSprop(params, {lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=false})
class('RMSprop', { lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false, maximize = false },
  { lr = 'nonneg', alpha = 'unit', eps = 'nonneg', weight_decay = 'nonneg', momentum = 'nonneg',
    centered = 'bool', maximize = 'bool' },
  function(self, p, g, st)
    if not p.grad then return end
    if not st.square_avg then
      st.step = 0
      st.square_avg = lm.zeros_like(p)
    end
    if g.momentum > 0 and not st.momentum_buffer then st.momentum_buffer = lm.zeros_like(p) end
    if g.centered and not st.grad_avg then st.grad_avg = lm.zeros_like(p) end
    st.step = st.step + 1
    local mark = lm._graph.capturing() and require('lumen.graph')._mark()
    C.rmsprop(p, st.square_avg, g.momentum > 0 and st.momentum_buffer or nil, g.centered and st.grad_avg or nil,
      g.lr, g.alpha, g.eps, g.weight_decay, g.momentum, g.centered, g.maximize)
    if mark then
      require('lumen.graph')._bind(mark, function()
        st.step = st.step + 1
        return { lr = g.lr }
      end)
    end
  end)

-- ---------------------------------------------------------------- LBFGS

--- optim.LBFGS(params, {lr=1, max_iter=20, max_eval=, tolerance_grad=1e-7, tolerance_change=1e-9,
--- history_size=100, line_search_fn=nil|'strong_wolfe'}): lumen/optim/lbfgs.lua
optim.LBFGS = require('lumen.optim.lbfgs')(optim)

-- ---------------------------------------------------------------- the rest

local utils = require 'lumen.nn.utils'
--- optim.clip_grad_norm_(params, max_norm [, norm_type = 2]) -> the total norm (nn.utils's)
optim.clip_grad_norm_ = utils.clip_grad_norm_

optim.lr_scheduler = require 'lumen.optim.lr_scheduler'

return optim
