-- The nn modules and losses against PyTorch: outputs and gradients for fixed inputs, with the
-- reference numbers printed by tests/nn/torch_modules.py (PyTorch 1.13, float64) and kept in
-- tests/nn/torch_modules_values.lua. Inputs are rebuilt here by the same formula (wave).
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local T = dofile(here .. '../nn/torch_modules_values.lua')

-- s * sin(a * i + b), i = 0..n-1, float64 (as the script's wave)
local function wave(n, a, b, s)
  return (lm.arange(0, n, { dtype = 'float64' }) * a + b):sin() * s
end

local function flat(t) return lm.is_tensor(t) and t:contiguous():view(-1):tolist() or t end

local function near(actual, expected, tol, what)
  local a = flat(actual)
  test.eq(#a, #expected, what .. ': element count')
  for i = 1, #expected do
    test.near(a[i], expected[i], tol or 1e-9, string.format('%s[%d]', what, i))
  end
end

-- the script's set_params: parameter k (0-based) = wave(numel, a + 0.1 k, 0.3, 0.5)
local function set_params(m, a)
  lm.no_grad(function()
    for k, p in ipairs(m:parameters()) do p:copy_(wave(p:numel(), a + 0.1 * (k - 1), 0.3, 0.5):view(p:shape())) end
  end)
end

-- output and gradients of sum(m(x) * r), as the script's grads()
local function check_grads(name, m, x, r, tol)
  local ref = T[name]
  local y = m(x)
  test.eq(y:shape(), ref.shape, name .. ': output shape')
  near(y, ref.out, tol, name .. ' output')
  ;(y * r):sum():backward()
  if ref.gx then near(x.grad, ref.gx, tol, name .. ' d/dx') end
  for pname, p in pairs(m:named_parameters()) do
    local key = 'g_' .. pname:gsub('%.', '_')
    if ref[key] then near(p.grad, ref[key], tol, name .. ' d/d' .. pname) end
  end
  return y
end

test.case('Linear, Conv2d: outputs and gradients', function()
  local lin = nn.Linear(5, 3, { dtype = 'float64' })
  set_params(lin, 0.23)
  check_grads('linear', lin, wave(20, 0.37, 0.1, 1.5):view(4, 5):requires_grad_(), wave(12, 0.41, 0.2, 1.0):view(4, 3))
  local conv = nn.Conv2d(2, 3, 3, { stride = 2, padding = 1, dtype = 'float64' })
  set_params(conv, 0.19)
  check_grads('conv2d', conv, wave(100, 0.37, 0.1, 1.5):view(2, 2, 5, 5):requires_grad_(),
    wave(54, 0.41, 0.2, 1.0):view(2, 3, 3, 3))
end)

test.case('BatchNorm2d and BatchNorm1d: training, running statistics, evaluation', function()
  local bn = nn.BatchNorm2d(3, { dtype = 'float64' })
  set_params(bn, 0.29)
  check_grads('batchnorm2d', bn, wave(24, 0.37, 0.1, 1.5):view(2, 3, 2, 2):requires_grad_(),
    wave(24, 0.41, 0.2, 1.0):view(2, 3, 2, 2))
  bn(wave(24, 0.53, 0.7, 2.0):view(2, 3, 2, 2))
  near(bn.running_mean, T.batchnorm2d.running_mean, 1e-9, 'running_mean')
  near(bn.running_var, T.batchnorm2d.running_var, 1e-9, 'running_var')
  test.eq(bn.num_batches_tracked:item(), T.batchnorm2d.batches)
  bn:eval()
  near(bn(wave(24, 0.61, 0.3, 1.0):view(2, 3, 2, 2)), T.batchnorm2d.eval_out, 1e-9, 'eval output')
  local bn1 = nn.BatchNorm1d(4, { momentum = 0.3, eps = 1e-3, dtype = 'float64' })
  check_grads('batchnorm1d', bn1, wave(24, 0.37, 0.1, 1.5):view(6, 4):requires_grad_(), wave(24, 0.41, 0.2, 1.0):view(6, 4))
  near(bn1.running_mean, T.batchnorm1d.running_mean, 1e-9, 'bn1d running_mean')
  near(bn1.running_var, T.batchnorm1d.running_var, 1e-9, 'bn1d running_var')
  bn1:eval()
  near(bn1(wave(8, 0.61, 0.3, 1.0):view(2, 4)), T.batchnorm1d.eval_out, 1e-9, 'bn1d eval')
end)

test.case('LayerNorm, Embedding, pooling, activations', function()
  local ln = nn.LayerNorm({ 3, 4 }, { dtype = 'float64' })
  set_params(ln, 0.31)
  check_grads('layernorm', ln, wave(24, 0.37, 0.1, 1.5):view(2, 3, 4):requires_grad_(), wave(24, 0.41, 0.2, 1.0):view(2, 3, 4))
  local emb = nn.Embedding(5, 3, { dtype = 'float64' })
  set_params(emb, 0.43)
  check_grads('embedding', emb, lm.tensor(T.embedding.idx):view(2, 3), wave(18, 0.41, 0.2, 1.0):view(2, 3, 3))
  local x = wave(216, 0.37, 0.1, 1.5):view(2, 3, 6, 6)
  check_grads('maxpool', nn.MaxPool2d(2), x:clone():requires_grad_(), wave(54, 0.41, 0.2, 1.0):view(2, 3, 3, 3))
  check_grads('avgpool', nn.AvgPool2d(3, 2, { padding = 1 }), x:clone():requires_grad_(), wave(54, 0.41, 0.2, 1.0):view(2, 3, 3, 3))
  local acts = { leaky_relu = nn.LeakyReLU(0.2), gelu_tanh = nn.GELU({ approximate = 'tanh' }), softmax = nn.Softmax(2),
    log_softmax = nn.LogSoftmax(1), sigmoid = nn.Sigmoid(), tanh = nn.Tanh() }
  for name, m in pairs(acts) do
    check_grads(name, m, wave(12, 0.37, 0.1, 1.5):view(3, 4):requires_grad_(), wave(12, 0.41, 0.2, 1.0):view(3, 4))
  end
end)

test.case('losses: values and input gradients', function()
  local logits = wave(12, 0.37, 0.1, 2.0):view(4, 3):requires_grad_()
  local target = lm.tensor(T.cross_entropy_smooth.target)
  local l = nn.CrossEntropyLoss({ label_smoothing = 0.2 })(logits, target)
  l:backward()
  near(l, { T.cross_entropy_smooth.loss[1] }, 1e-10, 'cross_entropy label_smoothing')
  near(logits.grad, T.cross_entropy_smooth.gx, 1e-10, 'cross_entropy d/dx')
  local logp = F.log_softmax(wave(12, 0.37, 0.1, 2.0):view(4, 3), 2):detach():requires_grad_()
  l = nn.NLLLoss({ reduction = 'sum' })(logp, target)
  l:backward()
  near(l, T.nll_sum.loss, 1e-10, 'nll sum')
  near(logp.grad, T.nll_sum.gx, 1e-10, 'nll d/dx')
  local a = wave(6, 0.37, 0.1, 2.0):requires_grad_()
  l = nn.MSELoss({ reduction = 'none' })(a, wave(6, 0.41, 0.2, 1.0))
  l:sum():backward()
  near(l, T.mse_none.loss, 1e-10, 'mse none')
  near(a.grad, T.mse_none.gx, 1e-10, 'mse d/dx')
  local p = (wave(6, 0.37, 0.1, 0.45) + 0.5):requires_grad_()
  l = nn.BCELoss()(p, wave(6, 0.29, 0.4, 0.5) + 0.5)
  l:backward()
  near(l, T.bce.loss, 1e-10, 'bce')
  near(p.grad, T.bce.gx, 1e-10, 'bce d/dx')
  local z = wave(8, 0.37, 0.1, 3.0):view(2, 4):requires_grad_()
  local pw = lm.tensor({ 1.0, 2.0, 0.5, 3.0 }, { dtype = 'float64' })
  l = nn.BCEWithLogitsLoss({ pos_weight = pw })(z, (wave(8, 0.29, 0.4, 0.5) + 0.5):view(2, 4))
  l:backward()
  near(l, T.bce_logits_pw.loss, 1e-10, 'bce_with_logits pos_weight')
  near(z.grad, T.bce_logits_pw.gx, 1e-10, 'bce_with_logits d/dx')
  z = lm.tensor({ 0, 30, -30, 1e4, -1e4 }, { dtype = 'float64', requires_grad = true })
  l = nn.BCEWithLogitsLoss({ reduction = 'sum' })(z, lm.tensor({ 1, 0, 1, 1, 0 }, { dtype = 'float64' }))
  l:backward()
  near(l, T.bce_logits_extreme.loss, 1e-10, 'bce_with_logits at 0 and +-1e4')
  near(z.grad, T.bce_logits_extreme.gx, 1e-10, 'bce_with_logits d/dx at 0 and +-1e4 (sigmoid(0) - 1 = -0.5 at 0)')
  -- confident logits keep their tiny losses (log1p, not log(1 + e)): log(1 + e^-20) = 2.0611536e-9
  local c = F.binary_cross_entropy_with_logits(lm.tensor({ 20, 40 }, { dtype = 'float32' }), lm.ones(2), { reduction = 'none' })
  test.near(c[1]:item(), 2.0611536e-9, 1e-15, 'float32 loss at x = 20')
  test.near(c[2]:item(), math.exp(-40), 1e-23, 'float32 loss at x = 40 (float32: 7 digits)')
end)
