-- optim: SGD (momentum, dampening, nesterov, weight decay, maximize), Adam (bias correction,
-- weight decay, amsgrad), AdamW (decoupled decay), RMSprop (momentum, centered) and the
-- schedulers against PyTorch 1.13 (tests/nn/torch_modules.py -> torch_modules_values.lua),
-- gradient clipping, param_groups, state_dict round trips, bad input, and a tiny task trained to
-- near-zero loss.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local T = dofile(here .. '../nn/torch_modules_values.lua')

local function wave(n, a, b, s, dtype)
  return ((lm.arange(0, n, { dtype = 'float64' }) * a + b):sin() * s):to(dtype or 'float64')
end

-- the script's grad_at(t)
local function grad_at(t, dtype)
  return ((lm.arange(0, 6, { dtype = 'float64' }) * 0.7 + t):cos() * ((t + 1) * 0.3)):view(2, 3):to(dtype or 'float64')
end

local function run(make, dtype)
  local p = wave(6, 1.0, 0.0, 1.0, dtype):view(2, 3):requires_grad_()
  local opt = make({ p })
  local hist = {}
  for t = 0, 4 do
    p.grad = grad_at(t, dtype)
    opt:step()
    for _, v in ipairs(p:detach():view(-1):tolist()) do hist[#hist + 1] = v end
  end
  return hist
end

local function near_list(a, b, tol, what)
  test.eq(#a, #b, what .. ': length')
  for i = 1, #b do test.near(a[i], b[i], tol, string.format('%s[%d]', what, i)) end
end

-- torch's keyword options as Lumen's (betas as a table)
local function opts_of(o)
  local r = {}
  for k, v in pairs(o) do r[k] = v end
  return r
end

test.case('each optimizer step matches torch.optim (float64, 5 steps)', function()
  local classes = { sgd = optim.SGD, adam = optim.Adam, adamw = optim.AdamW, rmsprop = optim.RMSprop }
  local n = 0
  for name, ref in pairs(T) do
    local kind = name:match('^optim_(%a+)')
    if kind and not name:match('_f32$') then
      local cls = classes[kind]
      test.ok(cls, name)
      local got = run(function(ps) return cls(ps, opts_of(ref.opts)) end)
      near_list(got, ref.p, 1e-12, name)
      n = n + 1
    end
  end
  test.eq(n, 14)
end)

test.case('float32 steps (the fused C path) match torch.optim to float32 rounding', function()
  near_list(run(function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.9 }) end, 'float32'),
    T.optim_sgd_momentum_f32.p, 1e-6, 'sgd momentum float32')
  near_list(run(function(ps) return optim.Adam(ps, { lr = 0.01 }) end, 'float32'),
    T.optim_adam_f32.p, 1e-6, 'adam float32')
end)

test.case('a non-contiguous parameter and a parameter without a gradient', function()
  local base = wave(6, 1.0, 0.0, 1.0):view(2, 3):t():contiguous() -- (3, 2)
  local p = base:t():requires_grad_() -- a transposed leaf holding the values of the script's p
  test.ok(not p:is_contiguous())
  local q = lm.zeros(3, { dtype = 'float64', requires_grad = true })
  local opt = optim.SGD({ p, q }, { lr = 0.1, momentum = 0.9 })
  local hist = {}
  for t = 0, 4 do
    p.grad = grad_at(t)
    opt:step()
    for _, v in ipairs(p:detach():contiguous():view(-1):tolist()) do hist[#hist + 1] = v end
  end
  near_list(hist, T.optim_sgd_momentum.p, 1e-12, 'transposed parameter')
  test.eq(q:tolist(), { 0, 0, 0 }, 'no grad: not updated')
  test.eq(opt.state[q], {}, 'no grad: no state')
end)

local function sched_run(make, groups)
  local p = lm.zeros(1, { requires_grad = true })
  local opt = optim.SGD(groups and groups(p) or { p }, { lr = 0.1 })
  local sch = make(opt)
  local hist = { sch:get_last_lr() }
  for _ = 1, 12 do
    opt:step()
    sch:step()
    hist[#hist + 1] = sch:get_last_lr()
  end
  return hist
end

test.case('schedulers match torch.optim.lr_scheduler over 12 epochs', function()
  local S = optim.lr_scheduler
  local cases = {
    sched_step = function(o) return S.StepLR(o, { step_size = 3, gamma = 0.5 }) end,
    sched_multistep = function(o) return S.MultiStepLR(o, { milestones = { 2, 5, 5, 9 }, gamma = 0.3 }) end,
    sched_exponential = function(o) return S.ExponentialLR(o, { gamma = 0.9 }) end,
    sched_cosine = function(o) return S.CosineAnnealingLR(o, { T_max = 5, eta_min = 0.01 }) end,
    sched_lambda = function(o) return S.LambdaLR(o, function(e) return 1 / (e + 1) end) end,
  }
  for name, make in pairs(cases) do
    local got, want = sched_run(make), T[name].lr
    test.eq(#got, #want, name)
    for i = 1, #want do test.near(got[i][1], want[i][1], 1e-12, name .. ' epoch ' .. (i - 1)) end
  end
  local q = lm.zeros(1, { requires_grad = true })
  local got = sched_run(function(o) return S.StepLR(o, { step_size = 2, gamma = 0.1 }) end,
    function(p) return { { params = { p } }, { params = { q }, lr = 0.5 } } end)
  for i, lrs in ipairs(T.sched_step_groups.lr) do
    test.near(got[i][1], lrs[1], 1e-12, 'group 1, epoch ' .. (i - 1))
    test.near(got[i][2], lrs[2], 1e-12, 'group 2 (its own lr), epoch ' .. (i - 1))
  end
end)

test.case('clip_grad_norm_ matches torch.nn.utils (2, inf and 1 norms)', function()
  for _, case in ipairs({ { 2, 'clip_l2' }, { math.huge, 'clip_inf' }, { 1, 'clip_l1' } }) do
    local a = lm.zeros(2, 3, { dtype = 'float64', requires_grad = true })
    local b = lm.zeros(4, { dtype = 'float64', requires_grad = true })
    a.grad = wave(6, 0.37, 0.1, 1.5):view(2, 3)
    b.grad = wave(4, 0.41, 0.2, 2.0)
    local total = optim.clip_grad_norm_({ a, b }, 1.0, case[1])
    local ref = T[case[2]]
    test.near(total, ref.total[1], 1e-12, case[2] .. ' total')
    near_list(a.grad:view(-1):tolist(), ref.ga, 1e-12, case[2] .. ' a')
    near_list(b.grad:view(-1):tolist(), ref.gb, 1e-12, case[2] .. ' b')
  end
  local m = nn.Linear(3, 2)
  test.eq(nn.utils.clip_grad_norm_(m, 1.0), 0, 'no grads: norm 0')
end)

test.case('param_groups: each group its own lr; zero_grad; the state_dict round trip', function()
  local a = lm.ones(3, { requires_grad = true })
  local b = lm.ones(2, { requires_grad = true })
  local opt = optim.SGD({ { params = { a } }, { params = { b }, lr = 1.0 } }, { lr = 0.1, momentum = 0.5 })
  test.eq(#opt.param_groups, 2)
  test.eq(opt.param_groups[1].lr, 0.1)
  test.eq(opt.param_groups[2].lr, 1.0)
  test.eq(opt.param_groups[2].momentum, 0.5, 'defaults fill the groups')
  a.grad, b.grad = lm.ones(3), lm.ones(2)
  opt:step()
  test.tensor_near(a, { 0.9, 0.9, 0.9 })
  test.tensor_near(b, { 0, 0 })
  opt:zero_grad()
  test.eq(a.grad, nil)
  -- state_dict -> a fresh optimizer continues exactly where this one is
  local sd = opt:state_dict()
  test.eq(sd.param_groups[2].params, { 2 })
  local a2, b2 = a:detach():clone():requires_grad_(), b:detach():clone():requires_grad_()
  local opt2 = optim.SGD({ { params = { a2 } }, { params = { b2 } } }, { lr = 0.3 })
  opt2:load_state_dict(sd)
  test.eq(opt2.param_groups[2].lr, 1.0)
  for _, pair in ipairs({ { a, a2 }, { b, b2 } }) do pair[1].grad = lm.full(pair[1]:shape(), 0.25); pair[2].grad = lm.full(pair[2]:shape(), 0.25) end
  opt:step()
  opt2:step()
  test.ok(lm.equal(a, a2) and lm.equal(b, b2), 'the same step after load_state_dict')
  -- Adam's step counter and moments travel too
  local p = lm.ones(4, { requires_grad = true })
  local adam = optim.Adam({ p }, { lr = 0.1, amsgrad = true })
  p.grad = lm.ones(4)
  adam:step()
  local sd2 = adam:state_dict()
  test.eq(sd2.state[1].step, 1)
  test.ok(lm.is_tensor(sd2.state[1].exp_avg) and lm.is_tensor(sd2.state[1].max_exp_avg_sq))
  test.raises(function() optim.SGD({ lm.ones(2, { requires_grad = true }) }, { lr = 1 }):load_state_dict(sd) end,
    'the state has 2 parameter groups, the optimizer 1')
end)

test.case('bad input: no parameters, non-tensors, negative or NaN learning rates', function()
  test.raises(function() optim.SGD({}, { lr = 0.1 }) end, 'optim.SGD: got an empty parameter list')
  test.raises(function() optim.Adam('weights') end, "optim.Adam: params must be a table of tensors")
  test.raises(function() optim.SGD({ lm.ones(2, { requires_grad = true }), 'x' }, { lr = 0.1 }) end,
    "optim.SGD: parameter 2 is 'x', expected a tensor")
  test.raises(function() optim.SGD({ lm.ones(2, { dtype = 'int64' }) }, { lr = 0.1 }) end, 'only float32 and float64')
  local w = lm.ones(2, { requires_grad = true })
  test.raises(function() optim.SGD({ w * 2 }, { lr = 0.1 }) end, "can't optimize a non-leaf tensor")
  test.raises(function() optim.SGD({ w, w }, { lr = 0.1 }) end, 'appear more than once')
  test.raises(function() optim.SGD({ w }) end, 'optim.SGD: lr is required')
  test.raises(function() optim.SGD({ w }, { lr = -0.1 }) end, 'optim.SGD: invalid learning rate -0.1')
  test.raises(function() optim.Adam({ w }, { lr = 0 / 0 }) end, 'optim.Adam: invalid learning rate nan')
  test.raises(function() optim.Adam({ w }, { betas = { 0.9, 1.5 } }) end, 'invalid betas')
  test.raises(function() optim.SGD({ w }, { lr = 0.1, nesterov = true }) end, 'nesterov momentum needs momentum > 0')
  test.raises(function() optim.SGD({ w }, { lr = 0.1, mometum = 0.9 }) end, "unknown option 'mometum'")
  local opt = optim.RMSprop({ w })
  opt.param_groups[1].lr = -1
  w.grad = lm.ones(2)
  test.raises(function() opt:step() end, 'optim.RMSprop: invalid learning rate -1')
  test.tensor_near(w, { 1, 1 }, 0, 'nothing was updated')
  test.raises(function() optim.clip_grad_norm_({ w }, -1) end, 'max_norm must be a number >= 0')
  test.raises(function() optim.lr_scheduler.StepLR({}, { step_size = 1 }) end, 'argument 1 must be an optimizer')
  test.raises(function() optim.lr_scheduler.StepLR(opt, { step_size = 0 }) end, 'step_size must be a positive integer')
end)

test.case('a tiny synthetic task trains to near-zero loss (each optimizer)', function()
  lm.manual_seed(7)
  local x = lm.randn(64, 4)
  local y = x:matmul(lm.tensor({ { 1.5 }, { -2 }, { 0.5 }, { 3 } })) + 0.25
  for name, make in pairs({
    sgd = function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.9 }) end,
    adam = function(ps) return optim.Adam(ps, { lr = 0.05 }) end,
    adamw = function(ps) return optim.AdamW(ps, { lr = 0.05, weight_decay = 0 }) end,
    rmsprop = function(ps) return optim.RMSprop(ps, { lr = 0.002, momentum = 0.9 }) end,
  }) do
    local model = nn.Linear(4, 1)
    local opt, lossf = make(model:parameters()), nn.MSELoss()
    local loss
    for _ = 1, 400 do
      opt:zero_grad()
      loss = lossf(model(x), y)
      loss:backward()
      opt:step()
    end
    test.ok(loss:item() < 1e-4, name .. ': final loss ' .. loss:item())
  end
end)
