-- optim.LBFGS against torch.optim.LBFGS 1.13 (tests/nn/torch_lbfgs.py -> torch_lbfgs_values.lua):
-- the Rosenbrock function in 2 and 10 dimensions, least squares over three parameters (one the
-- loss never uses) and logistic regression with a 0-dim parameter; with and without the strong-
-- Wolfe line search, history sizes 3 to 100, several step() calls carrying the state over. After
-- each step: the returned loss, the parameters, the state's n_iter, func_evals and t (float64, to
-- 1e-10 relative). Then the line search's parts, state_dict round trips, grad mode, and bad input.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local T = dofile(here .. '../nn/torch_lbfgs_values.lua')

local TOL = 1e-10

local function tensor(flat, shape)
  return lm.tensor(flat, { dtype = 'float64' }):view(shape)
end

local data = {}
for name, v in pairs(T.data) do
  data[name] = {}
  for k, x in pairs(v) do
    if not k:match('_shape$') then data[name][k] = tensor(x, v[k .. '_shape']) end
  end
end

-- the script's problems, the same formulas
local problems = {
  rosen = function(ps)
    local x = ps[1]
    local n = x:numel()
    local a, b = x:narrow(1, 1, n - 1), x:narrow(1, 2, n - 1)
    local r1 = 1 - a
    local r2 = b - a * a
    return (r1 * r1):sum() + 100 * (r2 * r2):sum()
  end,
  lsq = function(ps)
    local r = data.lsq.X:matmul(ps[1]) + ps[2] - data.lsq.Y
    return (r * r):mean()
  end,
  logreg = function(ps)
    local z = data.logreg.X:matmul(ps[1]) + ps[2]
    return ((z:exp() + 1):log() - data.logreg.y * z):mean()
  end,
}

local function params_of(case)
  local ps = {}
  for i, flat in ipairs(case.x0) do
    local shape = case.shapes[i]
    ps[i] = (#shape == 0 and lm.tensor(flat[1], { dtype = 'float64' }) or tensor(flat, shape)):requires_grad_()
  end
  return ps
end

local function flat_params(ps)
  local out = {}
  for _, p in ipairs(ps) do
    for _, v in ipairs(p:detach():reshape(-1):tolist()) do out[#out + 1] = v end
  end
  return out
end

local function closure_of(opt, f, ps)
  return function()
    opt:zero_grad()
    local loss = f(ps)
    loss:backward()
    return loss
  end
end

local function check_step(opt, ps, loss, want, what)
  test.near(loss:item(), want.loss, TOL, what .. ' loss')
  local x = flat_params(ps)
  test.eq(#x, #want.x, what .. ' number of parameters')
  for i = 1, #x do test.near(x[i], want.x[i], TOL, string.format('%s x[%d]', what, i)) end
  local st = opt.state[ps[1]]
  test.eq(st.n_iter, want.n_iter, what .. ' n_iter')
  test.eq(st.func_evals, want.func_evals, what .. ' func_evals')
  -- t comes from loss differences near rounding when a search ends close to the minimum (where
  -- the parameters, the steps t d, still agree to TOL)
  test.near(st.t or -1, want.t, 1e-8, what .. ' t')
end

local function find(name)
  for _, c in ipairs(T.cases) do if c.name == name then return c end end
  error('no case ' .. name)
end

test.case('every case matches torch.optim.LBFGS step by step (float64)', function()
  local n = 0
  for _, case in ipairs(T.cases) do
    local ps = params_of(case)
    local opt = optim.LBFGS(ps, case.opts)
    local closure = closure_of(opt, problems[case.problem], ps)
    for s, want in ipairs(case.steps) do
      local loss = opt:step(closure)
      check_step(opt, ps, loss, want, string.format('%s step %d', case.name, s))
    end
    n = n + 1
  end
  test.eq(n, 25)
end)

test.case('the cases cover the stopping rules and the history limit', function()
  -- max_eval stops the strong-Wolfe search's iterations (19 iterations, 25 evaluations)
  test.eq(find('rosen2_wolfe').steps[1].func_evals, 25)
  -- at the optimum: one evaluation, no iteration
  test.eq(find('rosen_at_optimum').steps[2].n_iter, 0)
  -- with history_size = 3 the lists hold 3 pairs
  local case = find('rosen10_wolfe_h3')
  local ps = params_of(case)
  local opt = optim.LBFGS(ps, case.opts)
  opt:step(closure_of(opt, problems.rosen, ps))
  local st = opt.state[ps[1]]
  test.eq(#st.old_dirs, 3)
  test.eq(#st.old_stps, 3)
  test.eq(#st.ro, 3)
  test.eq(st.d:shape(), { 10 })
  test.eq(st.prev_flat_grad:shape(), { 10 })
  test.ok(type(st.H_diag) == 'number' and st.H_diag > 0)
end)

test.case('a closure returning a number, and the loss it first returned', function()
  local case = find('lsq')
  local ps = params_of(case)
  local opt = optim.LBFGS(ps, case.opts)
  local first
  local loss = opt:step(function()
    opt:zero_grad()
    local l = problems.lsq(ps)
    l:backward()
    first = first or l:item()
    return l:item()
  end)
  test.eq(type(loss), 'number')
  test.eq(loss, first)
  check_step(opt, ps, lm.tensor(loss, { dtype = 'float64' }), case.steps[1], 'lsq, number loss')
end)

test.case('the closure runs with grad mode on when step is called under no_grad', function()
  local case = find('logreg')
  local ps = params_of(case)
  local opt = optim.LBFGS(ps, case.opts)
  local closure = closure_of(opt, problems.logreg, ps)
  local loss = lm.no_grad(function() return opt:step(closure) end)
  check_step(opt, ps, loss, case.steps[1], 'logreg under no_grad')
  test.eq(lm.is_grad_enabled(), true)
  -- and the mode is restored after an error in the closure
  lm.no_grad(function()
    test.raises(function() opt:step(function() error('boom') end) end, 'boom')
    test.eq(lm.is_grad_enabled(), false)
  end)
end)

test.case('state_dict / load_state_dict carry the history to a new optimizer', function()
  local case = find('rosen2_wolfe_h3')
  local ps = params_of(case)
  local opt = optim.LBFGS(ps, case.opts)
  opt:step(closure_of(opt, problems.rosen, ps))
  local sd = opt:state_dict()
  test.eq(sd.state[1].n_iter, case.steps[1].n_iter)
  test.ok(sd.state[1].old_dirs[1] ~= opt.state[ps[1]].old_dirs[1], 'the history is copied')
  -- a second optimizer over a copy of the parameters continues as the first would
  local ps2 = { ps[1]:detach():clone():requires_grad_() }
  local opt2 = optim.LBFGS(ps2, case.opts)
  opt2:load_state_dict(sd)
  for s = 2, 3 do
    local loss = opt2:step(closure_of(opt2, problems.rosen, ps2))
    check_step(opt2, ps2, loss, case.steps[s], 'reloaded step ' .. s)
  end
  -- a state over a different number of elements
  local opt3 = optim.LBFGS({ lm.zeros(3, { dtype = 'float64', requires_grad = true }) })
  test.raises(function() opt3:load_state_dict(sd) end, "optim.LBFGS:load_state_dict: state '[%w_]+' has 2 elements, the parameters 3")
end)

local function horner(c, v)
  local r = lm.zeros_like(v) + c[#c]
  for k = #c - 1, 1, -1 do r = r * v + c[k] end
  return r
end

test.case('the strong-Wolfe line search matches torch (polynomials along a line)', function()
  local sw = optim.LBFGS._strong_wolfe
  test.eq(#T.line_search, 8)
  for i, case in ipairs(T.line_search) do
    local what = 'line search ' .. i
    local ts = {}
    local function obj(x, t, d)
      local v = x[1] + d * t
      ts[#ts + 1] = t
      return horner(case.c, v):sum():item(), horner(case.dc, v)
    end
    local x = { lm.tensor({ case.x }, { dtype = 'float64' }) }
    local d = lm.tensor(case.d, { dtype = 'float64' })
    local f0, g0 = obj(x, 0, d)
    ts = {}
    local f, g, t, n = sw(obj, x, case.t0, d, f0, g0, (g0 * d):sum():item())
    test.near(f, case.f, TOL, what .. ' f')
    test.near(g:item(), case.g[1], TOL, what .. ' g')
    test.near(t, case.t, TOL, what .. ' t')
    test.eq(n, case.evals, what .. ' evaluations')
    test.eq(#ts, #case.ts, what .. ' number of trial steps')
    for k = 1, #ts do test.near(ts[k], case.ts[k], TOL, string.format('%s trial step %d', what, k)) end
  end
end)

test.case('cubic interpolation matches torch', function()
  local ci = optim.LBFGS._cubic_interpolate
  for i, case in ipairs(T.cubic) do
    local a = case.args
    local lo, hi
    if case.bounds then lo, hi = case.bounds[1], case.bounds[2] end
    test.near(ci(a[1], a[2], a[3], a[4], a[5], a[6], lo, hi), case.r, 1e-14, 'cubic ' .. i)
  end
  -- f(x) = (x - 0.3)^2 from its values and slopes at 0 and 1: the parabola's minimum
  test.near(ci(0, 0.09, -0.6, 1, 0.49, 1.4), 0.3, 1e-15)
end)

test.case('bad input names optim.LBFGS and the value', function()
  local w = lm.zeros(2, { dtype = 'float64', requires_grad = true })
  local opt = optim.LBFGS({ w })
  test.raises(function() opt:step() end, 'optim.LBFGS:step: a closure is required')
  test.raises(function() opt:step() end, 'got nil')
  test.raises(function() opt:step(3) end, 'optim.LBFGS:step: a closure is required .* got 3')
  test.raises(function() opt:step(function() return 'x' end) end,
    "optim.LBFGS:step: the closure must return the loss (a tensor of one element or a number), got 'x'")
  test.raises(function() opt:step(function() return w * 2 end) end, 'got a tensor of shape [2]')
  local v = lm.zeros(2, { dtype = 'float64', requires_grad = true })
  test.raises(function() optim.LBFGS({ { params = { w } }, { params = { v } } }) end,
    "optim.LBFGS: LBFGS doesn't support per-parameter options (parameter groups): got 2 groups")
  test.raises(function() opt:add_param_group({ params = { v } }) end,
    "optim.LBFGS:add_param_group: LBFGS doesn't support per-parameter options")
  test.raises(function() optim.LBFGS({ w }, { line_search_fn = 'wolfe' }) end,
    "optim.LBFGS: invalid line_search_fn 'wolfe': it must be nil or 'strong_wolfe'")
  test.raises(function() optim.LBFGS({ w }, { lr = -1 }) end, 'optim.LBFGS: invalid learning rate -1')
  test.raises(function() optim.LBFGS({ w }, { lr = 0 / 0 }) end, 'optim.LBFGS: invalid learning rate nan')
  test.raises(function() optim.LBFGS({ w }, { max_iter = 0 }) end,
    'optim.LBFGS: invalid max_iter 0: it must be an integer >= 1')
  test.raises(function() optim.LBFGS({ w }, { max_iter = 2.5 }) end, 'optim.LBFGS: invalid max_iter 2.5')
  test.raises(function() optim.LBFGS({ w }, { max_eval = -3 }) end, 'optim.LBFGS: invalid max_eval -3')
  test.raises(function() optim.LBFGS({ w }, { history_size = 0 }) end, 'optim.LBFGS: invalid history_size 0')
  test.raises(function() optim.LBFGS({ w }, { tolerance_grad = -1e-5 }) end,
    'optim.LBFGS: invalid tolerance_grad %-1e%-05')
  test.raises(function() optim.LBFGS({ w }, { tolerance_change = 'small' }) end,
    "optim.LBFGS: invalid tolerance_change 'small'")
  test.raises(function() optim.LBFGS({ w }, { histroy_size = 3 }) end, "optim.LBFGS: unknown option 'histroy_size'")
  test.raises(function() optim.LBFGS({}) end, 'optim.LBFGS: got an empty parameter list')
  -- a hyperparameter made bad after construction is caught at the step
  opt.param_groups[1].lr = -0.5
  test.raises(function() opt:step(function() return w:sum() end) end, 'optim.LBFGS: invalid learning rate -0.5')
end)

test.case('defaults as PyTorch: max_eval = max_iter * 5 // 4', function()
  local w = lm.zeros(2, { dtype = 'float64', requires_grad = true })
  local g = optim.LBFGS({ w }).param_groups[1]
  test.eq({ g.lr, g.max_iter, g.max_eval, g.tolerance_grad, g.tolerance_change, g.history_size, g.line_search_fn },
    { 1, 20, 25, 1e-7, 1e-9, 100, nil })
  test.eq(optim.LBFGS({ w }, { max_iter = 7 }).param_groups[1].max_eval, 8)
  test.eq(optim.LBFGS({ w }, { max_iter = 7, max_eval = 3 }).param_groups[1].max_eval, 3)
  test.eq(tostring(optim.LBFGS), 'class optim.LBFGS')
end)

test.case('float32 parameters and a module fitted to near-zero loss', function()
  local m = nn.Linear(3, 1)
  local X = lm.tensor({ { 1, 2, 3 }, { -1, 0.5, 2 }, { 0, -1, 1 }, { 2, 2, -1 }, { 0.5, 0, 0 } })
  local y = X:matmul(lm.tensor({ { 0.5 }, { -1 }, { 2 } })) + 0.25
  local opt = optim.LBFGS(m, { line_search_fn = 'strong_wolfe' })
  local function closure()
    opt:zero_grad()
    local loss = F.mse_loss(m(X), y)
    loss:backward()
    return loss
  end
  opt:step(closure)
  test.ok(closure():item() < 1e-8, 'fitted')
  test.tensor_near(m.weight, { { 0.5, -1, 2 } }, 1e-3)
end)
