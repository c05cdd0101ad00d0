--[[
lumen.nn.module — nn.Module, the base of every layer, and the containers (Sequential, ModuleList,
Residual, Identity).

A module is a table whose metatable is its class. Its parameters, buffers and children live in
registries (self._parameters, ._buffers, ._modules, each with an order list) and read as fields
(lin.weight), as in PyTorch's __getattr__/__setattr__: assigning a tensor that requires grad to a
new field registers a parameter, assigning a module registers a child, self:register_buffer()
registers a buffer; anything else is a plain field. Names of children of a Sequential are '1',
'2', ... (1-based, like the rest of Lumen), so state_dict keys read '1.weight' where PyTorch says
'0.weight'. A new module is written as

  local Net = nn.Module:extend('Net')
  function Net:__init(n) self.fc = nn.Linear(784, n) end
  function Net:forward(x) return self.fc(x) end
  local model = Net(128)

Errors raised by a module name it and where it sits in the model ("nn.Linear at '1': ...").
Read next: lumen/nn/layers.lua.
]]
local lm = require 'lumen'

local M = {}

-- ---------------------------------------------------------------- helpers

local check = require 'lumen.nn.check'
M.user_level, M.raise, M.shape_str = check.user_level, check.raise, check.shape_str

--- An ordered map: plain keys -> values, iterated by pairs() in the order of keys.
function M.ordered(keys, map)
  return setmetatable(map, {
    __pairs = function(t)
      local i = 0
      return function()
        i = i + 1
        local k = keys[i]
        if k ~= nil then return k, t[k] end
      end, t, nil
    end,
    __keys = keys,
  })
end

--- The keys of an ordered map (or the sorted keys of a plain table).
function M.keys(t)
  local mt = getmetatable(t)
  if mt and mt.__keys then return { table.unpack(mt.__keys) } end
  local ks = {}
  for k in next, t do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

local function commas(n)
  local s = tostring(math.tointeger(n) or n)
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^,', ''))
end
M.commas = commas

-- ---------------------------------------------------------------- classes

local Module = { __name = 'Module', _is_module_class = true }
M.Module = Module

local function is_module(v)
  local mt = type(v) == 'table' and getmetatable(v)
  return mt and type(mt) == 'table' and rawget(mt, '_is_module_class') == true or false
end
M.is_module = is_module

local parents = setmetatable({}, { __mode = 'k' }) -- child -> {parent, name} (weak)

local function instance_index(self, k)
  local reg = rawget(self, '_parameters')
  if reg then
    local v = reg[k]
    if v ~= nil then return v end
    v = rawget(self, '_buffers')[k]
    if v ~= nil then return v end
    local mods = rawget(self, '_modules')
    v = mods[k]
    if v ~= nil then return v end
    if math.type(k) == 'integer' then
      v = mods[tostring(k)]
      if v ~= nil then return v end
    end
  end
  return getmetatable(self)[k]
end

local function add_name(order, k)
  for _, n in ipairs(order) do if n == k then return end end
  order[#order + 1] = k
end

local function remove_name(order, k)
  for i, n in ipairs(order) do
    if n == k then table.remove(order, i); return end
  end
end

local function instance_newindex(self, k, v)
  local params, bufs, mods = rawget(self, '_parameters'), rawget(self, '_buffers'), rawget(self, '_modules')
  if not params then return rawset(self, k, v) end
  if type(k) ~= 'string' then
    if math.type(k) == 'integer' and mods[tostring(k)] ~= nil then k = tostring(k)
    else return rawset(self, k, v) end
  end
  if params[k] ~= nil or rawget(self, '_param_order_set')[k] then
    if v ~= nil and not (lm.is_tensor(v) and v.requires_grad) then
      M.raise(string.format("%s: cannot assign %s to parameter '%s' (a tensor that requires grad, " ..
        'or nil)', self:_label(), lm.is_tensor(v) and 'a tensor that does not require grad' or type(v), k))
    end
    params[k] = v
    return
  end
  if bufs[k] ~= nil or rawget(self, '_buffer_order_set')[k] then
    if v ~= nil and not lm.is_tensor(v) then
      M.raise(string.format("%s: buffer '%s' must be a tensor or nil, got %s", self:_label(), k, type(v)))
    end
    bufs[k] = v
    return
  end
  if is_module(v) then
    mods[k] = v
    add_name(rawget(self, '_module_order'), k)
    parents[v] = { self, k }
    return
  end
  if mods[k] ~= nil then
    if v == nil then
      mods[k] = nil
      remove_name(rawget(self, '_module_order'), k)
      return
    end
    M.raise(string.format("%s: cannot assign a %s to child module '%s'", self:_label(), type(v), k))
  end
  if lm.is_tensor(v) and v.requires_grad then return self:register_parameter(k, v) end
  rawset(self, k, v)
end

local function new_instance(cls)
  return setmetatable({
    _parameters = {}, _param_order = {}, _param_order_set = {},
    _buffers = {}, _buffer_order = {}, _buffer_order_set = {}, _nonpersistent = {},
    _modules = {}, _module_order = {},
    training = true,
  }, cls)
end

local function construct(cls, ...)
  local o = new_instance(cls)
  local init = cls.__init
  if init then init(o, ...) end
  return o
end

local class_mt = { __index = nil, __call = construct,
  __tostring = function(c) return "class nn." .. rawget(c, '__name') end }

local metamethods = { '__index', '__newindex', '__call', '__tostring', '__len', '__close' }

--- A subclass named name: nn.Module:extend('Net'), nn.Linear:extend('MyLinear').
function Module.extend(parent, name)
  if type(name) ~= 'string' or name == '' then
    M.raise('nn.Module:extend: the class needs a name (a string), got ' .. type(name))
  end
  local C = { __name = name, _is_module_class = true, super = parent }
  for _, mm in ipairs(metamethods) do C[mm] = rawget(parent, mm) end
  return setmetatable(C, { __index = parent, __call = construct, __tostring = class_mt.__tostring })
end

Module.__index = instance_index
Module.__newindex = instance_newindex
-- Every result of forward comes back (nn.RNN returns output, h_n); hooks see and may replace the first.
Module.__call = function(self, ...)
  local hooks = rawget(self, '_forward_hooks') -- set only by register_forward_hook: no cost without
  if not hooks then return self:forward(...) end
  local res = table.pack(self:forward(...))
  local out = res[1]
  local args = table.pack(...)
  for _, h in ipairs(hooks) do
    local r = h(self, args, out)
    if r ~= nil then out = r end
  end
  res[1] = out
  return table.unpack(res, 1, math.max(res.n, 1))
end
setmetatable(Module, class_mt)

function Module:__init() end

--- Calls fn(module, inputs, output) after each forward of this module (PyTorch's
--- register_forward_hook; inputs is table.pack of the arguments); a result other than nil replaces
--- the output. Returns a handle: handle:remove() unregisters it.
function Module:register_forward_hook(fn)
  if type(fn) ~= 'function' then
    M.raise(string.format('%s:register_forward_hook: expected a function, got %s', self:_label(), type(fn)))
  end
  local hooks = rawget(self, '_forward_hooks')
  if not hooks then
    hooks = {}
    rawset(self, '_forward_hooks', hooks)
  end
  hooks[#hooks + 1] = fn
  local module = self
  return { remove = function()
    local hs = rawget(module, '_forward_hooks')
    for i, h in ipairs(hs or {}) do
      if h == fn then table.remove(hs, i) break end
    end
    if hs and #hs == 0 then rawset(module, '_forward_hooks', nil) end
  end }
end

function Module:forward()
  M.raise(string.format('%s has no forward method (define function %s:forward(x) ... end)',
    self:_label(), getmetatable(self).__name))
end

--- "nn.Linear at 'fc1'": the class and the path of this module in the model it belongs to.
function Module:_label()
  local cls = getmetatable(self)
  local name = rawget(cls, '__name') or '?'
  local qual = rawget(cls, '_builtin') and ('nn.' .. name) or name
  local path, m, guard = {}, self, 0
  while parents[m] and guard < 64 do
    table.insert(path, 1, parents[m][2])
    m = parents[m][1]
    guard = guard + 1
  end
  if #path == 0 then return qual end
  return qual .. " at '" .. table.concat(path, '.') .. "'"
end

--- Calls f(...) (an F function); an error is raised again naming this module.
function Module:_call(f, ...)
  local ok, r = pcall(f, ...)
  if ok then return r end
  if type(r) == 'string' and not r:find('interrupted!', 1, true) then
    M.raise(self:_label() .. ': ' .. r:gsub('^[^:\n]*:%d+: ', ''))
  end
  error(r, 0)
end

-- ---------------------------------------------------------------- registration

function Module:register_parameter(name, t)
  if type(name) ~= 'string' or name == '' or name:find('.', 1, true) then
    M.raise(self:_label() .. ': a parameter name must be a non-empty string without dots, got ' .. tostring(name))
  end
  if t ~= nil and not (lm.is_tensor(t) and t.requires_grad) then
    M.raise(string.format("%s: parameter '%s' must be a tensor that requires grad (or nil)", self:_label(), name))
  end
  rawset(self, name, nil)
  rawget(self, '_parameters')[name] = t
  add_name(rawget(self, '_param_order'), name)
  rawget(self, '_param_order_set')[name] = true
  return t
end

--- A tensor kept in state_dict (unless persistent == false) but not trained: running statistics.
function Module:register_buffer(name, t, persistent)
  if type(name) ~= 'string' or name == '' or name:find('.', 1, true) then
    M.raise(self:_label() .. ': a buffer name must be a non-empty string without dots, got ' .. tostring(name))
  end
  if t ~= nil and not lm.is_tensor(t) then
    M.raise(string.format("%s: buffer '%s' must be a tensor or nil, got %s", self:_label(), name, type(t)))
  end
  rawset(self, name, nil)
  rawget(self, '_buffers')[name] = t
  add_name(rawget(self, '_buffer_order'), name)
  rawget(self, '_buffer_order_set')[name] = true
  rawget(self, '_nonpersistent')[name] = persistent == false or nil
  return t
end

function Module:add_module(name, m)
  if not is_module(m) then M.raise(self:_label() .. ': add_module needs a module, got ' .. type(m)) end
  instance_newindex(self, tostring(name), m)
  return m
end

-- ---------------------------------------------------------------- traversal

--- Children in registration order: array of {name, module}.
local function each_child(self)
  local out, mods = {}, rawget(self, '_modules')
  for _, k in ipairs(rawget(self, '_module_order')) do
    if mods[k] ~= nil then out[#out + 1] = { k, mods[k] } end
  end
  return out
end

function Module:named_children()
  local keys, map = {}, {}
  for _, c in ipairs(each_child(self)) do keys[#keys + 1] = c[1]; map[c[1]] = c[2] end
  return M.ordered(keys, map)
end

function Module:children()
  local out = {}
  for _, c in ipairs(each_child(self)) do out[#out + 1] = c[2] end
  return out
end

--- Every module of the tree, self first (pre-order), each once: {prefix, module} pairs.
local function walk(self, prefix, out, seen)
  if seen[self] then return out end
  seen[self] = true
  out[#out + 1] = { prefix, self }
  for _, c in ipairs(each_child(self)) do
    walk(c[2], prefix == '' and c[1] or (prefix .. '.' .. c[1]), out, seen)
  end
  return out
end

function Module:modules()
  local out = {}
  for _, e in ipairs(walk(self, '', {}, {})) do out[#out + 1] = e[2] end
  return out
end

function Module:named_modules()
  local keys, map = {}, {}
  for _, e in ipairs(walk(self, '', {}, {})) do keys[#keys + 1] = e[1]; map[e[1]] = e[2] end
  return M.ordered(keys, map)
end

-- (name, tensor) pairs of a registry over the tree, each tensor once
local function named_tensors(self, reg, order, skip_nonpersistent, dedupe)
  local keys, map, seen = {}, {}, {}
  for _, e in ipairs(walk(self, '', {}, {})) do
    local m = e[2]
    local r, np = rawget(m, reg), rawget(m, '_nonpersistent')
    for _, k in ipairs(rawget(m, order)) do
      local t = r[k]
      if t ~= nil and not (skip_nonpersistent and np[k]) and not (dedupe and seen[t]) then
        seen[t] = true
        local name = e[1] == '' and k or (e[1] .. '.' .. k)
        keys[#keys + 1] = name
        map[name] = t
      end
    end
  end
  return keys, map
end

function Module:named_parameters()
  return M.ordered(named_tensors(self, '_parameters', '_param_order', false, true))
end

--- The parameters in a stable order (this module's first, then each child's, recursively).
function Module:parameters()
  local keys, map = named_tensors(self, '_parameters', '_param_order', false, true)
  local out = {}
  for i, k in ipairs(keys) do out[i] = map[k] end
  return out
end

function Module:named_buffers()
  return M.ordered(named_tensors(self, '_buffers', '_buffer_order', false, true))
end

function Module:buffers()
  local keys, map = named_tensors(self, '_buffers', '_buffer_order', false, true)
  local out = {}
  for i, k in ipairs(keys) do out[i] = map[k] end
  return out
end

-- ---------------------------------------------------------------- modes and gradients

function Module:train(mode)
  if mode == nil then mode = true end
  if type(mode) ~= 'boolean' then M.raise(self:_label() .. ':train: mode must be a boolean, got ' .. type(mode)) end
  for _, m in ipairs(self:modules()) do rawset(m, 'training', mode) end
  return self
end

function Module:eval() return self:train(false) end

--- Clears every parameter's gradient (set to nil, as PyTorch 2 does by default; with
--- {set_to_none=false} they are zeroed in place).
function Module:zero_grad(opts)
  local none = not (type(opts) == 'table' and opts.set_to_none == false)
  for _, p in ipairs(self:parameters()) do
    if none then p.grad = nil
    elseif p.grad then p.grad:zero_() end
  end
end

function Module:requires_grad_(flag)
  if flag == nil then flag = true end
  for _, p in ipairs(self:parameters()) do p:requires_grad_(flag) end
  return self
end

function Module:apply(fn)
  for _, m in ipairs(self:modules()) do fn(m) end
  return self
end

-- ---------------------------------------------------------------- state

--- Parameters and persistent buffers by dotted name ('1.weight', 'bn.running_mean'), in order;
--- the tensors are detached aliases (they share storage with the module's).
function Module:state_dict()
  local keys, map = {}, {}
  local function put(prefix, k, t)
    local name = prefix == '' and k or (prefix .. '.' .. k)
    keys[#keys + 1] = name
    map[name] = t:detach()
  end
  for _, e in ipairs(walk(self, '', {}, {})) do
    local m = e[2]
    local p, b, np = rawget(m, '_parameters'), rawget(m, '_buffers'), rawget(m, '_nonpersistent')
    for _, k in ipairs(rawget(m, '_param_order')) do
      if p[k] ~= nil then put(e[1], k, p[k]) end
    end
    for _, k in ipairs(rawget(m, '_buffer_order')) do
      if b[k] ~= nil and not np[k] then put(e[1], k, b[k]) end
    end
  end
  return M.ordered(keys, map)
end

--- Copies the tensors of sd into this module's parameters and buffers (in place: optimizers keep
--- working). strict (default true): missing and unexpected keys are errors. Shapes must match
--- always. Every offending key is listed. Returns {missing_keys=, unexpected_keys=}.
function Module:load_state_dict(sd, opts)
  local label = self:_label() .. ':load_state_dict'
  if type(sd) ~= 'table' or lm.is_tensor(sd) then
    M.raise(label .. ': expected a table of tensors (a state_dict), got ' .. type(sd))
  end
  local strict = true
  if opts ~= nil then
    if type(opts) ~= 'table' then M.raise(label .. ': options must be a table such as {strict=false}') end
    for k in next, opts do
      if k ~= 'strict' then M.raise(label .. ": unknown option '" .. tostring(k) .. "' (expected strict)") end
    end
    if opts.strict ~= nil then strict = opts.strict and true or false end
  end
  local own = self:state_dict()
  local own_keys = M.keys(own)
  local missing, unexpected, bad = {}, {}, {}
  for _, k in ipairs(own_keys) do
    local v = rawget(sd, k)
    if v == nil then
      missing[#missing + 1] = "'" .. k .. "'"
    elseif not lm.is_tensor(v) then
      bad[#bad + 1] = string.format("'%s' is a %s, not a tensor", k, type(v))
    else
      if M.shape_str(own[k]) ~= M.shape_str(v) then
        bad[#bad + 1] = string.format("size mismatch for '%s': the given tensor has shape %s, the " ..
          'model %s', k, M.shape_str(v), M.shape_str(own[k]))
      end
    end
  end
  local sd_keys = {}
  for k in next, sd do sd_keys[#sd_keys + 1] = k end
  table.sort(sd_keys, function(x, y) return tostring(x) < tostring(y) end)
  for _, k in ipairs(sd_keys) do
    if own[k] == nil then unexpected[#unexpected + 1] = "'" .. tostring(k) .. "'" end
  end
  local problems = {}
  if strict and #missing > 0 then problems[#problems + 1] = 'missing keys: ' .. table.concat(missing, ', ') end
  if strict and #unexpected > 0 then problems[#problems + 1] = 'unexpected keys: ' .. table.concat(unexpected, ', ') end
  if #bad > 0 then problems[#problems + 1] = table.concat(bad, '; ') end
  if #problems > 0 then M.raise(label .. ': ' .. table.concat(problems, '; ')) end
  local prev = lm.set_grad_enabled(false)
  local ok, err = pcall(function()
    for _, k in ipairs(own_keys) do
      local v = rawget(sd, k)
      if v ~= nil then own[k]:copy_(v) end
    end
  end)
  lm.set_grad_enabled(prev)
  if not ok then error(err, 0) end
  local strip = function(list)
    local out = {}
    for i, s in ipairs(list) do out[i] = s:sub(2, -2) end
    return out
  end
  return { missing_keys = strip(missing), unexpected_keys = strip(unexpected) }
end

--- Converts floating parameters and buffers to dtype ('float32', 'float64'), or moves every
--- parameter and buffer to a device ('cpu', 'cuda', 'opencl'). Parameters are replaced by converted or
--- moved ones (leaves that require grad): call it before creating the optimizer.
function Module:to(what)
  local device = (what == 'cpu' or what == 'opencl') and what or
    ((what == 'cuda' or (type(what) == 'string' and what:match('^cuda:'))) and 'cuda') or nil
  if device == 'cuda' and not lm.cuda.is_available() then
    M.raise(self:_label() .. ":to: device 'cuda' is not available (no GPU): " .. lm.cuda.unavailable_reason())
  end
  if device == 'opencl' and not lm.opencl.is_available() then
    M.raise(self:_label() .. ":to: device 'opencl' is not available: " .. lm.opencl.unavailable_reason())
  end
  if device then
    for _, m in ipairs(self:modules()) do
      local p, b = rawget(m, '_parameters'), rawget(m, '_buffers')
      for k, t in next, p do
        if t:device() ~= device then p[k] = t:detach():to(device):requires_grad_(true) end
      end
      for k, t in next, b do
        if t:device() ~= device then b[k] = t:to(device) end
      end
    end
    return self
  end
  local floats = { float32 = 1, float64 = 1, float = 1, double = 1, float16 = 1, half = 1, bfloat16 = 1 }
  if not floats[what] then
    M.raise(self:_label() .. ":to: expected 'float32', 'float64', 'float16', 'bfloat16', 'cpu', 'cuda' or 'opencl', got "
      .. tostring(what))
  end
  for _, m in ipairs(self:modules()) do
    local p, b = rawget(m, '_parameters'), rawget(m, '_buffers')
    for k, t in next, p do
      if t:dtype():match('^float') then p[k] = t:detach():to(what):clone():requires_grad_(true) end
    end
    for k, t in next, b do
      if t:dtype():match('^float') then b[k] = t:to(what) end
    end
  end
  return self
end

function Module:float() return self:to('float32') end
function Module:double() return self:to('float64') end
function Module:half() return self:to('float16') end
function Module:bfloat16() return self:to('bfloat16') end

-- ---------------------------------------------------------------- printing

--- PyTorch's extra_repr: what goes inside Name(...).
function Module:extra_repr() return '' end

local function own_params(m)
  local parts, count = {}, 0
  local p = rawget(m, '_parameters')
  for _, k in ipairs(rawget(m, '_param_order')) do
    local t = p[k]
    if t then
      parts[#parts + 1] = k .. ' ' .. M.shape_str(t)
      count = count + t:numel()
    end
  end
  return parts, count
end

local function total_params(m)
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end

local function describe(m, name, indent, out)
  local cls = getmetatable(m)
  local head = indent .. (name and ('(' .. name .. '): ') or '') .. rawget(cls, '__name') .. '('
  local kids = each_child(m)
  local extra = m:extra_repr()
  if #kids == 0 then
    local parts, count = own_params(m)
    local line = head .. extra .. ')'
    if count > 0 then
      out[#out + 1] = { line, table.concat(parts, ', ') .. ': ' .. commas(count) .. ' params' }
    else
      out[#out + 1] = { line, '' }
    end
    return
  end
  local n = total_params(m)
  out[#out + 1] = { head .. extra, n > 0 and (commas(n) .. ' params') or '' }
  for _, c in ipairs(kids) do describe(c[2], c[1], indent .. '  ', out) end
  out[#out + 1] = { indent .. ')', '' }
end

function Module:__tostring()
  local rows = {}
  describe(self, nil, '', rows)
  local width = 0
  for _, r in ipairs(rows) do if r[2] ~= '' and #r[1] > width then width = #r[1] end end
  width = math.min(width, 72)
  local lines = {}
  for _, r in ipairs(rows) do
    if r[2] == '' then lines[#lines + 1] = r[1]
    else lines[#lines + 1] = r[1] .. string.rep(' ', math.max(1, width - #r[1] + 2)) .. '-- ' .. r[2] end
  end
  local n, bytes = 0, 0
  for _, p in ipairs(self:parameters()) do n = n + p:numel(); bytes = bytes + p:nbytes() end
  local trainable = 0
  for _, p in ipairs(self:parameters()) do if p.requires_grad then trainable = trainable + p:numel() end end
  lines[#lines + 1] = string.format('%s: %s parameters (%s trainable, %.1f KiB)', rawget(getmetatable(self), '__name'),
    commas(n), commas(trainable), bytes / 1024)
  return table.concat(lines, '\n')
end

-- ---------------------------------------------------------------- containers

local function builtin(name, parent)
  local C = (parent or Module):extend(name)
  C._builtin = true
  return C
end
M.builtin = builtin

--- nn.Sequential(m1, m2, ...) or nn.Sequential({m1, m2, ...}): children '1', '2', ...
local Sequential = builtin('Sequential')
M.Sequential = Sequential

function Sequential:__init(...)
  local mods = { ... }
  if #mods == 1 and type(mods[1]) == 'table' and not is_module(mods[1]) then mods = mods[1] end
  for i, m in ipairs(mods) do
    if not is_module(m) then
      M.raise(string.format('nn.Sequential: argument %d must be a module, got %s', i,
        lm.is_tensor(m) and 'a tensor' or type(m)))
    end
    instance_newindex(self, tostring(i), m)
  end
end

function Sequential:forward(x)
  local mods = rawget(self, '_modules')
  for _, k in ipairs(rawget(self, '_module_order')) do x = mods[k](x) end
  return x
end

--- Appends a module (named by its position).
function Sequential:append(m)
  if not is_module(m) then M.raise(self:_label() .. ':append: expected a module, got ' .. type(m)) end
  instance_newindex(self, tostring(#rawget(self, '_module_order') + 1), m)
  return self
end
Sequential.add = Sequential.append

function Sequential:__len() return #rawget(self, '_module_order') end

--- nn.ModuleList({m1, m2, ...}): holds modules (registered, so their parameters count) without
--- a forward of its own; ml[i], #ml, ml:append(m).
local ModuleList = builtin('ModuleList')
M.ModuleList = ModuleList
function ModuleList:__init(mods)
  for i, m in ipairs(mods or {}) do
    if not is_module(m) then M.raise(string.format('nn.ModuleList: entry %d must be a module, got %s', i, type(m))) end
    instance_newindex(self, tostring(i), m)
  end
end
ModuleList.append = Sequential.append
ModuleList.__len = Sequential.__len
function ModuleList:forward()
  M.raise(self:_label() .. ' has no forward: call its modules (for i = 1, #list do x = list[i](x) end)')
end

--- nn.Residual(m): x + m(x).
local Residual = builtin('Residual')
M.Residual = Residual
function Residual:__init(m)
  if not is_module(m) then M.raise('nn.Residual: expected a module, got ' .. type(m)) end
  self.fn = m
end
function Residual:forward(x)
  local y = self.fn(x)
  if not lm.is_tensor(y) or M.shape_str(y) ~= M.shape_str(x) then
    M.raise(string.format('%s: the wrapped module maps shape %s to %s; a residual needs the same shape',
      self:_label(), M.shape_str(x), lm.is_tensor(y) and M.shape_str(y) or type(y)))
  end
  return x + y
end

--- nn.Identity(): returns its input.
local Identity = builtin('Identity')
M.Identity = Identity
function Identity:__init() end
function Identity:forward(x) return x end

return M
