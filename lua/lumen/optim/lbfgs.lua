--[[
lumen.optim.lbfgs — optim.LBFGS, torch.optim.LBFGS (1.13) in Lua: limited-memory BFGS over the
flat vector of all the parameters, with an optional strong-Wolfe line search.

opt:step(closure) runs up to max_iter iterations; closure() must zero the grads, compute the loss,
call loss:backward() and return the loss, and may be called many times per step (max_eval bounds
it). Each iteration: the direction d = -H g from the two-loop recursion over the last history_size
pairs (y = g - g_prev, s = t d_prev, ro = 1 / y.s, kept only when y.s > 1e-10) with the initial
Hessian H_diag = y.s / y.y; the step t (min(1, 1/|g|_1) lr the very first time, lr after); then
either a plain move by t d (and one closure call), or the strong-Wolfe search for t (cubic
interpolation; c1 = 1e-4, c2 = 0.9, at most 25 evaluations, as PyTorch's). It stops on max |g| <=
tolerance_grad, g.d > -tolerance_change, max |t d| <= tolerance_change, a loss change below
tolerance_change, max_iter or max_eval. Like PyTorch, the state (d, t, old_dirs, old_stps, ro,
H_diag, al, prev_flat_grad, prev_loss, n_iter, func_evals) is global and kept in
opt.state[<first parameter>], and carries over from one step() to the next. One parameter group
only. The scalar arithmetic is done in Lua numbers in PyTorch's order, so that float64 runs follow
the same path. Read next: lumen/optim/lr_scheduler.lua.
]]
local lm = require 'lumen'
local check = require 'lumen.nn.check'
local raise, describe = check.raise, check.describe

-- Python's max(a, b) and min(a, b): the first argument unless the second is strictly beyond it.
local function pymax(a, b) if b > a then return b end return a end
local function pymin(a, b) if b < a then return b end return a end

local function dot(a, b) return (a * b):sum():item() end
local function max_abs(v) return v:abs():max():item() end

-- ---------------------------------------------------------------- the line search

--- The minimum of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to
--- [lo, hi] (default: the interval between x1 and x2); the middle when the cubic has none.
local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
  local xmin_bound, xmax_bound
  if lo ~= nil then
    xmin_bound, xmax_bound = lo, hi
  elseif x1 <= x2 then
    xmin_bound, xmax_bound = x1, x2
  else
    xmin_bound, xmax_bound = x2, x1
  end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2_square = d1 * d1 - g1 * g2
  if d2_square >= 0 then
    local d2 = math.sqrt(d2_square)
    local min_pos
    if x1 <= x2 then
      min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else
      min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    end
    return pymin(pymax(min_pos, xmin_bound), xmax_bound)
  end
  return (xmin_bound + xmax_bound) / 2
end

--- Searches t along d from the parameters x (loss f, gradient g, slope gtd = g.d) for a point
--- meeting the strong Wolfe conditions: obj(x, t, d) -> loss, flat gradient at x + t d. Returns
--- the loss, the gradient and t of the point found, and the number of evaluations.
local function strong_wolfe(obj, x, t, d, f, g, gtd, c1, c2, tolerance_change, max_ls)
  c1, c2 = c1 or 1e-4, c2 or 0.9
  tolerance_change, max_ls = tolerance_change or 1e-9, max_ls or 25
  t = t + 0.0 -- a float: an integer t (lr = 1) would wrap around when extrapolated far
  local d_norm = max_abs(d)
  g = g:clone()
  local f_new, g_new = obj(x, t, d)
  local ls_func_evals = 1
  local gtd_new = dot(g_new, d)

  -- bracket an interval holding a point that meets the conditions
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local done = false
  local ls_iter = 0
  local bracket, bracket_f, bracket_g, bracket_gtd
  while ls_iter < max_ls do
    if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev) then
      bracket, bracket_f = { t_prev, t }, { f_prev, f_new }
      bracket_g, bracket_gtd = { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    if math.abs(gtd_new) <= -c2 * gtd then
      bracket, bracket_f, bracket_g = { t }, { f_new }, { g_new }
      done = true
      break
    end
    if gtd_new >= 0 then
      bracket, bracket_f = { t_prev, t }, { f_prev, f_new }
      bracket_g, bracket_gtd = { g_prev, g_new:clone() }, { gtd_prev, gtd_new }
      break
    end
    -- extrapolate, between a little beyond t and 10 t
    local min_step = t + 0.01 * (t - t_prev)
    local max_step = t * 10
    local tmp = t
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
    t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
    f_new, g_new = obj(x, t, d)
    ls_func_evals = ls_func_evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
  end
  if ls_iter == max_ls then
    bracket, bracket_f, bracket_g = { 0, t }, { f, f_new }, { g, g_new }
  end

  -- zoom: shrink the bracket until a point meets the conditions
  local insuf_progress = false
  local low_pos, high_pos = 1, 2
  if not (bracket_f[1] <= bracket_f[#bracket_f]) then low_pos, high_pos = 2, 1 end
  while not done and ls_iter < max_ls do
    if math.abs(bracket[2] - bracket[1]) * d_norm < tolerance_change then break end
    t = cubic_interpolate(bracket[1], bracket_f[1], bracket_gtd[1], bracket[2], bracket_f[2], bracket_gtd[2])
    -- too near an end of the bracket (twice running, or at or beyond it): 0.1 of its length inside
    local hi, lo = pymax(bracket[1], bracket[2]), pymin(bracket[1], bracket[2])
    local eps = 0.1 * (hi - lo)
    if pymin(hi - t, t - lo) < eps then
      if insuf_progress or t >= hi or t <= lo then
        if math.abs(t - hi) < math.abs(t - lo) then t = hi - eps else t = lo + eps end
        insuf_progress = false
      else
        insuf_progress = true
      end
    else
      insuf_progress = false
    end
    f_new, g_new = obj(x, t, d)
    ls_func_evals = ls_func_evals + 1
    gtd_new = dot(g_new, d)
    ls_iter = ls_iter + 1
    if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos] then
      -- no sufficient decrease, or not below the low end: the new high end
      bracket[high_pos], bracket_f[high_pos] = t, f_new
      bracket_g[high_pos], bracket_gtd[high_pos] = g_new:clone(), gtd_new
      if bracket_f[1] <= bracket_f[2] then low_pos, high_pos = 1, 2 else low_pos, high_pos = 2, 1 end
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0 then
        -- the old low end becomes the high end
        bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
        bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
      end
      bracket[low_pos], bracket_f[low_pos] = t, f_new
      bracket_g[low_pos], bracket_gtd[low_pos] = g_new:clone(), gtd_new
    end
  end
  return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
end

-- ---------------------------------------------------------------- the class

return function(optim)
  local Optimizer = optim.Optimizer
  local NAME = 'optim.LBFGS'

  local defaults = { lr = 1, max_iter = 20, max_eval = nil, tolerance_grad = 1e-7, tolerance_change = 1e-9,
    history_size = 100, line_search_fn = nil }
  local spec = { lr = 'nonneg', max_iter = 'count', max_eval = 'count', tolerance_grad = 'nonneg',
    tolerance_change = 'nonneg', history_size = 'count', line_search_fn = 'line_search' }
  local order = { 'lr', 'max_iter', 'max_eval', 'tolerance_grad', 'tolerance_change', 'history_size',
    'line_search_fn' }

  local function is_count(v) return type(v) == 'number' and v >= 1 and v < math.huge and v == math.floor(v) end

  local function check_group(g)
    for _, k in ipairs(order) do
      local v, kind, what = g[k], spec[k], nil
      if kind == 'nonneg' then
        if type(v) ~= 'number' or not (v >= 0) or v == math.huge then what = 'a finite number >= 0' end
      elseif kind == 'count' then
        if not is_count(v) then what = 'an integer >= 1' end
      elseif v ~= nil and v ~= 'strong_wolfe' then
        what = "nil or 'strong_wolfe'"
      end
      if what then
        raise(string.format('%s: invalid %s %s: it must be %s', NAME, k == 'lr' and 'learning rate' or k,
          v == nil and 'nil' or describe(v), what))
      end
    end
  end

  local function one_group(self, where)
    if #self.param_groups ~= 1 then
      raise(string.format("%s%s: LBFGS doesn't support per-parameter options (parameter groups): got %d " ..
        'groups, it takes one (a list of tensors)', NAME, where or '', #self.param_groups))
    end
  end

  local function validate(self)
    one_group(self)
    local g = self.param_groups[1]
    -- max_eval defaults to max_iter * 5 // 4 (of the options' max_iter, as PyTorch)
    if self.defaults.max_eval == nil and is_count(self.defaults.max_iter) then
      self.defaults.max_eval = self.defaults.max_iter * 5 // 4
    end
    if g.max_eval == nil then g.max_eval = self.defaults.max_eval end
    check_group(g)
  end

  local LBFGS = setmetatable({ __name = 'LBFGS', _validate = validate }, { __index = Optimizer,
    __call = function(c, params, opts) return Optimizer._new(c, params, opts, defaults, spec) end,
    __tostring = function() return 'class optim.LBFGS' end })
  LBFGS.__index = LBFGS
  LBFGS.__tostring = Optimizer.__tostring

  function LBFGS:add_param_group()
    raise(NAME .. ":add_param_group: LBFGS doesn't support per-parameter options (parameter groups): it " ..
      'takes one group')
  end

  -- ---------------------------------------------------------------- the parameters as one vector

  local function numel(params)
    local n = 0
    for _, p in ipairs(params) do n = n + p:numel() end
    return n
  end

  --- The gradients of all the parameters as one new vector (zeros for a parameter without one).
  local function gather_flat_grad(params)
    local views = {}
    for i, p in ipairs(params) do
      local gr = p.grad
      views[i] = gr and gr:reshape(-1) or lm.zeros_like(p):reshape(-1)
    end
    return lm.cat(views, 1)
  end

  --- p += t * (p's part of the flat vector d), for every parameter.
  local function add_grad(params, t, d)
    lm.no_grad(function()
      local offset = 0
      for _, p in ipairs(params) do
        local n = p:numel()
        if n > 0 then p:add_(d:narrow(1, offset + 1, n):view(p:shape()), { alpha = t }) end
        offset = offset + n
      end
    end)
  end

  local function clone_params(params)
    local x = {}
    for i, p in ipairs(params) do x[i] = p:detach():clone() end
    return x
  end

  local function set_params(params, x)
    lm.no_grad(function() for i, p in ipairs(params) do p:copy_(x[i]) end end)
  end

  -- ---------------------------------------------------------------- step

  --- closure() with grad mode on (as PyTorch's step, which runs the closure under enable_grad).
  local function call(closure)
    if lm.is_grad_enabled() then return closure() end
    lm.set_grad_enabled(true)
    local ok, r = pcall(closure)
    lm.set_grad_enabled(false)
    if not ok then error(r, 0) end
    return r
  end

  local function loss_value(v)
    if type(v) == 'number' then return v end
    if lm.is_tensor(v) and v:numel() == 1 then return v:item() end
    raise(string.format('%s:step: the closure must return the loss (a tensor of one element or a number), ' ..
      'got %s', NAME, v == nil and 'nil' or describe(v)))
  end

  --- One optimization step: up to max_iter L-BFGS iterations. Returns what closure() first returned.
  function LBFGS:step(closure)
    if type(closure) ~= 'function' then
      raise(string.format('%s:step: a closure is required (a function that zeroes the grads, computes the ' ..
        'loss, calls loss:backward() and returns the loss), got %s', NAME,
        closure == nil and 'nil' or describe(closure)))
    end
    one_group(self, ':step')
    local group = self.param_groups[1]
    check_group(group)
    local params = group.params
    local lr, max_iter, max_eval = group.lr, group.max_iter, group.max_eval
    local tolerance_grad, tolerance_change = group.tolerance_grad, group.tolerance_change
    local line_search_fn, history_size = group.line_search_fn, group.history_size

    -- the state is global, kept under the first parameter (as PyTorch)
    local state = self.state[params[1]]
    if not state then
      state = {}
      self.state[params[1]] = state
    end
    state.func_evals = state.func_evals or 0
    state.n_iter = state.n_iter or 0

    -- the loss and the gradient where we start
    local orig_loss = call(closure)
    local loss = loss_value(orig_loss)
    local current_evals = 1
    state.func_evals = state.func_evals + 1
    local flat_grad = gather_flat_grad(params)
    local opt_cond = max_abs(flat_grad) <= tolerance_grad
    if opt_cond then return orig_loss end

    local d, t = state.d, state.t
    local old_dirs, old_stps, ro, H_diag = state.old_dirs, state.old_stps, state.ro, state.H_diag
    local prev_flat_grad, prev_loss = state.prev_flat_grad, state.prev_loss

    local n_iter = 0
    while n_iter < max_iter do
      n_iter = n_iter + 1
      state.n_iter = state.n_iter + 1

      -- the direction
      if state.n_iter == 1 then
        d = flat_grad:neg()
        old_dirs, old_stps, ro = {}, {}, {}
        H_diag = 1
      else
        local y = flat_grad:sub(prev_flat_grad)
        local s = d:mul(t)
        local ys = dot(y, s)
        if ys > 1e-10 then
          if #old_dirs == history_size then
            table.remove(old_dirs, 1)
            table.remove(old_stps, 1)
            table.remove(ro, 1)
          end
          old_dirs[#old_dirs + 1] = y
          old_stps[#old_stps + 1] = s
          ro[#ro + 1] = 1 / ys
          H_diag = ys / dot(y, y)
        end
        -- the two-loop recursion: d = -H g
        local num_old = #old_dirs
        state.al = state.al or {}
        local al = state.al
        local q = flat_grad:neg()
        for i = num_old, 1, -1 do
          al[i] = dot(old_stps[i], q) * ro[i]
          q:add_(old_dirs[i], { alpha = -al[i] })
        end
        d = q:mul(H_diag)
        for i = 1, num_old do
          local be_i = dot(old_dirs[i], d) * ro[i]
          d:add_(old_stps[i], { alpha = al[i] - be_i })
        end
      end
      prev_flat_grad = flat_grad:clone()
      prev_loss = loss

      -- the step length
      if state.n_iter == 1 then
        t = pymin(1.0, 1 / flat_grad:abs():sum():item()) * lr
      else
        t = lr + 0.0
      end
      local gtd = dot(flat_grad, d)
      if gtd > -tolerance_change then break end -- not a descent direction any more

      local ls_func_evals = 0
      if line_search_fn ~= nil then
        local x_init = clone_params(params)
        local function obj_func(x, step, dir)
          add_grad(params, step, dir)
          local f = loss_value(call(closure))
          local fg = gather_flat_grad(params)
          set_params(params, x)
          return f, fg
        end
        loss, flat_grad, t, ls_func_evals = strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd)
        add_grad(params, t, d)
        opt_cond = max_abs(flat_grad) <= tolerance_grad
      else
        add_grad(params, t, d)
        if n_iter ~= max_iter then
          -- re-evaluate, except after the last iteration (a stochastic loss would only change)
          loss = loss_value(call(closure))
          flat_grad = gather_flat_grad(params)
          opt_cond = max_abs(flat_grad) <= tolerance_grad
          ls_func_evals = 1
        end
      end
      current_evals = current_evals + ls_func_evals
      state.func_evals = state.func_evals + ls_func_evals

      -- stop?
      if n_iter == max_iter then break end
      if current_evals >= max_eval then break end
      if opt_cond then break end
      if max_abs(d:mul(t)) <= tolerance_change then break end -- no progress in the parameters
      if math.abs(loss - prev_loss) < tolerance_change then break end -- nor in the loss
    end

    state.d, state.t = d, t
    state.old_dirs, state.old_stps, state.ro, state.H_diag = old_dirs, old_stps, ro, H_diag
    state.prev_flat_grad, state.prev_loss = prev_flat_grad, prev_loss
    return orig_loss
  end

  -- ---------------------------------------------------------------- state_dict

  local function deep_copy(v, dtype)
    if lm.is_tensor(v) then return (dtype and v:to(dtype) or v):clone() end
    if type(v) ~= 'table' then return v end
    local c = {}
    for k, x in pairs(v) do c[k] = deep_copy(x, dtype) end
    return c
  end

  --- As Optimizer:state_dict, with the history lists (old_dirs, old_stps, ...) copied too.
  function LBFGS:state_dict()
    local sd = Optimizer.state_dict(self)
    for _, st in pairs(sd.state) do
      for k, v in pairs(st) do st[k] = deep_copy(v) end
    end
    return sd
  end

  --- As Optimizer:load_state_dict; the state's vectors span all the parameters (not the shape of
  --- the first one, under which the state is kept).
  function LBFGS:load_state_dict(sd)
    if type(sd) ~= 'table' or type(sd.state) ~= 'table' then return Optimizer.load_state_dict(self, sd) end
    local n = numel(self.param_groups[1].params)
    local light, saved = {}, {}
    for i, st in pairs(sd.state) do
      light[i], saved[i] = {}, {}
      for k, v in pairs(type(st) == 'table' and st or {}) do
        if lm.is_tensor(v) or type(v) == 'table' then
          for _, x in ipairs(lm.is_tensor(v) and { v } or v) do
            if lm.is_tensor(x) and x:numel() ~= n then
              raise(string.format("%s:load_state_dict: state '%s' has %d elements, the parameters %d", NAME, k,
                x:numel(), n))
            end
          end
          saved[i][k] = v
        else
          light[i][k] = v
        end
      end
    end
    Optimizer.load_state_dict(self, { state = light, param_groups = sd.param_groups })
    local index = 0
    for _, p in ipairs(self.param_groups[1].params) do
      index = index + 1
      if saved[index] then
        for k, v in pairs(saved[index]) do self.state[p][k] = deep_copy(v, p:dtype()) end
      end
    end
  end

  -- exposed for tests and for other line searches
  LBFGS._cubic_interpolate = cubic_interpolate
  LBFGS._strong_wolfe = strong_wolfe
  return LBFGS
end
