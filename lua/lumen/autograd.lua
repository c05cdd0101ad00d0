--[[
lumen.autograd — lm.autograd.Function: a differentiable op whose forward and backward are Lua
functions, as PyTorch's torch.autograd.Function.

    local Scale = lm.autograd.Function('Scale')
    function Scale.forward(ctx, x, k) ctx.k = k return x * k end
    function Scale.backward(ctx, g) return g * ctx.k, nil end   -- one value per forward argument
    local y = Scale:apply(x, 3)                                  -- or Scale(x, 3)

forward(ctx, ...) runs with grad mode off on the arguments as given and returns one tensor (a
Function with several results returns them packed in one tensor, or is two Functions). When grad
mode is on and a tensor argument requires grad, the result gets a grad_fn named <name>Backward
(src/ops/custom.c) whose rule calls backward(ctx, grad_output): one gradient per argument of
forward, in order — a tensor of that argument's shape, or nil (no gradient; nil for every
argument that is not a tensor); trailing nils may be left out. ctx carries what backward needs:
ctx:save_for_backward(...) keeps tensors (checked for in-place changes when backward reads
ctx.saved_tensors), ctx.needs_input_grad[i] says whether argument i wants a gradient, and any
other field is the Function's own. The collectives of lumen.dist's tensor-parallel layers are
Functions (forward all-reduces, backward passes through, or the reverse).
Read next: src/lua/autograd.c (lm.autograd._custom), src/ops/custom.c.
]]
local lm = require 'lumen.core'

local M = {}

local function describe(v)
  if lm.is_tensor(v) then return 'a tensor of shape [' .. table.concat(v:shape(), ', ') .. ']' end
  if type(v) == 'string' then return "'" .. v .. "'" end
  if type(v) == 'number' or type(v) == 'boolean' then return tostring(v) end
  return 'a ' .. type(v)
end

-- ---------------------------------------------------------------- ctx

local Ctx = {}

--- ctx:save_for_backward(...): keeps tensors (or nils) for backward, as detached aliases with the
--- version each had: backward reading ctx.saved_tensors fails if one was changed in place since.
function Ctx:save_for_backward(...)
  local n = select('#', ...)
  local saved = { n = n }
  for i = 1, n do
    local t = select(i, ...)
    if t ~= nil and not lm.is_tensor(t) then
      error(string.format('%s: save_for_backward: argument %d is %s; only tensors (or nil) are saved',
        rawget(self, '_name'), i, describe(t)), 2)
    end
    if t ~= nil then saved[i] = { t:detach(), t:version() } end
  end
  rawset(self, '_saved', saved)
end

local function saved_tensors(self)
  local saved = rawget(self, '_saved')
  if not saved then return {} end
  local out = {}
  for i = 1, saved.n do
    local s = saved[i]
    if s then
      if s[1]:version() ~= s[2] then
        error(string.format('%s: the tensor saved for backward as number %d was changed in place after '
          .. 'it was saved (version %d, saved at %d): save a copy (x:clone()) or change it after backward',
          rawget(self, '_name'), i, s[1]:version(), s[2]), 3)
      end
      out[i] = s[1]
    end
  end
  return out
end

local ctx_mt = {
  __index = function(self, k)
    if k == 'saved_tensors' then return saved_tensors(self) end
    return Ctx[k]
  end,
  __tostring = function(self) return 'ctx of ' .. rawget(self, '_name') end,
}

-- ---------------------------------------------------------------- Function

local Function = {}
Function.__index = Function

local function call_results(name, ...)
  local n = select('#', ...)
  local out = ...
  if n ~= 1 or not lm.is_tensor(out) then
    local got = n == 0 and 'nothing' or n > 1 and (n .. ' values') or describe(out)
    error(string.format('%s.forward must return one tensor, got %s (a Function with several results '
      .. 'returns them packed in one tensor)', name, got), 3)
  end
  return out
end

--- Function:apply(...) -> the forward's tensor, with a grad_fn <name>Backward where a tensor
--- argument requires grad and grad mode is on.
function Function:apply(...)
  local name = self.name
  if type(self.forward) ~= 'function' then error(name .. ': forward is not defined (function ' .. name .. '.forward(ctx, ...))', 2) end
  if type(self.backward) ~= 'function' then error(name .. ': backward is not defined (function ' .. name .. '.backward(ctx, grad))', 2) end
  local args = table.pack(...)
  local recording = lm.is_grad_enabled()
  local tensors, pos, needs = {}, {}, {}
  local wanted = false
  for i = 1, args.n do
    local a = args[i]
    needs[i] = false
    if lm.is_tensor(a) then
      if a:is_closed() then error(string.format('%s: argument %d: tensor is closed', name, i), 2) end
      tensors[#tensors + 1], pos[#pos + 1] = a, i
      needs[i] = recording and a.requires_grad
      wanted = wanted or needs[i]
    end
  end
  local ctx = setmetatable({ _name = name, needs_input_grad = needs }, ctx_mt)
  local out = call_results(name, lm.no_grad(self.forward, ctx, ...))
  -- the node goes on a tensor of its own: an argument returned as it is (identity) or a result with
  -- a history of its own becomes a fresh alias
  local fresh = not out.requires_grad
  for _, t in ipairs(tensors) do
    if lm.autograd._id(t) == lm.autograd._id(out) then fresh = false end
  end
  if not fresh then out = out:detach() end
  if not wanted then return out end
  local backward, nargs = self.backward, args.n
  local function rule(g, need)
    local grads = table.pack(backward(ctx, g))
    if grads.n > nargs then
      error(string.format('%s.backward returned %d gradients; forward took %d arguments (one gradient or nil '
        .. 'each)', name, grads.n, nargs), 0)
    end
    local list = {}
    for i = 1, nargs do
      local gi = grads[i]
      if gi ~= nil and not lm.is_tensor(gi) then
        error(string.format('%s.backward returned %s as the gradient of argument %d; a gradient is a tensor or nil',
          name, describe(gi), i), 0)
      end
      if gi ~= nil and not lm.is_tensor(args[i]) then
        error(string.format('%s.backward returned a gradient for argument %d, which is %s, not a tensor (return nil for it)',
          name, i, describe(args[i])), 0)
      end
    end
    for j, i in ipairs(pos) do
      local gi = grads[i]
      if gi ~= nil and need[j] then
        local want = args[i]:shape()
        local got = gi:shape()
        local same = #want == #got
        for d = 1, #want do same = same and want[d] == got[d] end
        if not same then
          error(string.format('%s.backward returned a gradient of shape [%s] for argument %d, whose shape is [%s]',
            name, table.concat(got, ', '), i, table.concat(want, ', ')), 0)
        end
      end
      list[j] = gi
    end
    return list
  end
  return lm.autograd._custom(out, name .. 'Backward', tensors, rule)
end

Function.__call = function(self, ...) return self:apply(...) end
Function.__tostring = function(self) return 'lm.autograd.Function ' .. self.name end

--- lm.autograd.Function(name) or lm.autograd.Function{name=, forward=, backward=}: a new Function;
--- define F.forward(ctx, ...) and F.backward(ctx, grad) on it, then call F:apply(...) or F(...).
function M.Function(spec)
  local f
  if type(spec) == 'string' then
    f = { name = spec }
  elseif type(spec) == 'table' and not lm.is_tensor(spec) then
    f = { name = spec.name or 'Function', forward = spec.forward, backward = spec.backward }
    for k in pairs(spec) do
      if k ~= 'name' and k ~= 'forward' and k ~= 'backward' then
        error(string.format("lm.autograd.Function: unknown field '%s' (name, forward, backward)", tostring(k)), 2)
      end
    end
  else
    error('lm.autograd.Function: argument 1 must be a name or {name=, forward=, backward=}, got ' .. describe(spec), 2)
  end
  if type(f.name) ~= 'string' or not f.name:match('^[%a_][%w_]*$') or #f.name > 50 then
    error('lm.autograd.Function: the name must be an identifier of at most 50 characters, got ' .. describe(f.name), 2)
  end
  for _, k in ipairs({ 'forward', 'backward' }) do
    if f[k] ~= nil and type(f[k]) ~= 'function' then
      error(string.format('lm.autograd.Function: %s must be a function, got %s', k, describe(f[k])), 2)
    end
  end
  return setmetatable(f, Function)
end

return M
