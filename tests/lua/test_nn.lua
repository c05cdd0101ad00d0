-- nn: the Module contract (parameters in a stable order, 1-based dotted names, children, modes,
-- zero_grad, state_dict / load_state_dict with every bad key listed, to, tostring, fields, the
-- extend idiom), each module's output shape, parameter count and values against the functional
-- ops, initialisation, BatchNorm and Dropout in training vs evaluation, state_dict round trips
-- through lm.save / lm.load, and errors that name the module and the shapes.
local test = require 'lumen.test'

local tmp = os.tmpname()

local function count(m)
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end

local function keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  return out
end

local function mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
end

test.case('Sequential: children, 1-based names, parameters in order, fields, #', function()
  local m = mlp()
  test.eq(#m, 4)
  test.eq(getmetatable(m[2]).__name, 'Linear')
  test.eq(m[2].weight:shape(), { 8, 12 }, 'parameters read as fields')
  test.eq(keys(m:named_parameters()), { '2.weight', '2.bias', '4.weight', '4.bias' })
  local ps = m:parameters()
  test.eq(#ps, 4)
  test.ok(ps[1] == m[2].weight and ps[2] == m[2].bias and ps[3] == m[4].weight, 'stable order')
  test.eq(#m:children(), 4)
  test.eq(#m:modules(), 5, 'itself and its children')
  test.eq(keys(m:named_modules()), { '', '1', '2', '3', '4' })
  test.eq(count(m), 12 * 8 + 8 + 8 * 3 + 3)
  m:append(nn.LogSoftmax(2))
  test.eq(#m, 5)
  test.eq(m(lm.randn(2, 3, 4)):shape(), { 2, 3 })
end)

test.case('a new module with extend: fields register parameters, buffers and children', function()
  local Net = nn.Module:extend('Net')
  function Net:__init(hidden)
    self.body = nn.Sequential(nn.Linear(4, hidden), nn.Tanh())
    self.head = nn.Linear(hidden, 2, { bias = false })
    self.scale = lm.ones(2, { requires_grad = true })
    self:register_buffer('calls', lm.zeros(1))
    self.hidden = hidden -- a plain field
  end
  function Net:forward(x)
    self.calls:add_(1)
    return self.head(self.body(x)) * self.scale
  end
  local net = Net(5)
  test.eq(net.hidden, 5)
  test.eq(keys(net:named_parameters()), { 'scale', 'body.1.weight', 'body.1.bias', 'head.weight' })
  test.eq(net.head.bias, nil, 'bias=false: no bias')
  test.eq(keys(net:state_dict()), { 'scale', 'calls', 'body.1.weight', 'body.1.bias', 'head.weight' })
  test.eq(net(lm.randn(3, 4)):shape(), { 3, 2 })
  test.eq(net.calls:item(), 1)
  -- replacing a parameter keeps its place; assigning nil removes a child
  net.scale = lm.full({ 2 }, 2.0):requires_grad_()
  test.eq(net:parameters()[1]:tolist(), { 2, 2 })
  test.raises(function() net.scale = lm.ones(2) end, "Net: cannot assign a tensor that does not require grad to parameter 'scale'")
  local Sub = Net:extend('Sub')
  function Sub:forward(x) return Net.forward(self, x) + 1 end
  test.eq(Sub(3)(lm.zeros(1, 4)):shape(), { 1, 2 }, 'a subclass of a user module')
  local Bare = nn.Module:extend('Bare')
  test.raises(function() Bare()(lm.ones(1)) end, 'Bare has no forward method')
  test.raises(function() nn.Module:extend() end, 'the class needs a name')
  local MyLinear = nn.Linear:extend('MyLinear')
  function MyLinear:forward(x) return nn.Linear.forward(self, x):relu() end
  local ml = MyLinear(3, 2)
  test.eq(#ml:parameters(), 2, 'a subclass of a built-in layer keeps its __init')
  test.ok(ml(lm.randn(4, 3)):min():item() >= 0)
end)

test.case('train / eval reach every child; zero_grad', function()
  local m = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(3)))
  m:eval()
  for _, mod in ipairs(m:modules()) do test.eq(mod.training, false) end
  m:train()
  for _, mod in ipairs(m:modules()) do test.eq(mod.training, true) end
  local y = m(lm.randn(4, 3)):sum()
  y:backward()
  test.ok(m[1].weight.grad ~= nil)
  m:zero_grad()
  test.eq(m[1].weight.grad, nil)
  y = m(lm.randn(4, 3)):sum()
  y:backward()
  m:zero_grad({ set_to_none = false })
  test.eq(m[1].weight.grad:abs():sum():item(), 0, 'zeroed in place')
end)

test.case('state_dict: PyTorch keys (1-based in Sequential), buffers included, round trips', function()
  lm.manual_seed(3)
  local function make()
    return nn.Sequential(nn.Conv2d(1, 4, 3, { padding = 1 }), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
  end
  local a = make()
  test.eq(keys(a:state_dict()), { '1.weight', '1.bias', '2.weight', '2.bias', '2.running_mean', '2.running_var',
    '2.num_batches_tracked', '6.weight', '6.bias' })
  local x = lm.randn(3, 1, 8, 8)
  a(x) -- updates the running statistics
  a:eval()
  local want = a(x)
  lm.save(tmp, a:state_dict())
  local b = make()
  b:eval()
  test.ok(not lm.allclose(b(x), want), 'a fresh model differs')
  local res = b:load_state_dict(lm.load(tmp))
  test.eq(res.missing_keys, {})
  test.ok(lm.equal(b(x), want), 'identical outputs after the round trip through a file')
  test.eq(b[2].num_batches_tracked:item(), 1)
  -- the optimizer keeps working on the loaded (in-place) parameters
  local opt = optim.SGD(b:parameters(), { lr = 0.1 })
  b:load_state_dict(a:state_dict())
  test.ok(opt.param_groups[1].params[1] == b[1].weight)
  os.remove(tmp)
end)

test.case('load_state_dict: missing, unexpected and misshaped keys are listed, all of them', function()
  local m = mlp()
  local sd = m:state_dict()
  local bad = { ['2.weight'] = lm.zeros(8, 12), ['2.bias'] = lm.zeros(7), ['9.weight'] = lm.zeros(1), extra = lm.zeros(1) }
  local msg = test.raises(function() m:load_state_dict(bad) end, 'Sequential:load_state_dict')
  test.ok(msg:find("missing keys: '4.weight', '4.bias'", 1, true), msg)
  test.ok(msg:find("unexpected keys: '9.weight', 'extra'", 1, true), msg)
  test.ok(msg:find("size mismatch for '2.bias': the given tensor has shape [7], the model [8]", 1, true), msg)
  test.ok(lm.equal(m[2].weight, sd['2.weight']), 'nothing was copied')
  local r = m:load_state_dict({ ['2.weight'] = lm.zeros(8, 12), zzz = lm.ones(1) }, { strict = false })
  test.eq(r.missing_keys, { '2.bias', '4.weight', '4.bias' })
  test.eq(r.unexpected_keys, { 'zzz' })
  test.eq(m[2].weight:abs():sum():item(), 0)
  test.raises(function() m:load_state_dict({ ['2.bias'] = lm.zeros(3) }, { strict = false }) end, 'size mismatch')
  test.raises(function() m:load_state_dict('x') end, 'expected a table of tensors')
  test.raises(function() m:load_state_dict({}, { strictly = false }) end, "unknown option 'strictly'")
end)

test.case('to(dtype), to(device), tostring as a tree with shapes and counts', function()
  local m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
  m:to('float64')
  test.eq(m[1].weight:dtype(), 'float64')
  test.eq(m[2].running_mean:dtype(), 'float64')
  test.eq(m[2].num_batches_tracked:dtype(), 'int64', 'integer buffers keep their dtype')
  test.ok(m[1].weight.requires_grad)
  test.eq(m(lm.randn(5, 3, { dtype = 'float64' })):dtype(), 'float64')
  test.eq(m:to('cpu'), m)
  test.raises(function() m:to('cuda') end, "Sequential:to: device 'cuda' is not available")
  test.raises(function() m:to('int8') end, "expected 'float32', 'float64', 'float16', 'bfloat16', 'cpu', 'cuda' or 'opencl'")
  local mh = mlp():half()
  for _, p in ipairs(mh:parameters()) do
    test.eq(p:dtype(), 'float16')
    test.ok(p.requires_grad)
  end
  test.eq(mh(lm.randn(5, 12):half()):dtype(), 'float16')
  local s = tostring(mlp())
  test.ok(s:find('Sequential(', 1, true), s)
  test.ok(s:find('  (2): Linear(in_features=12, out_features=8, bias=true)', 1, true), s)
  test.ok(s:find('weight [8, 12], bias [8]: 104 params', 1, true), s)
  test.ok(s:find('Sequential: 131 parameters', 1, true), s)
  local Net = nn.Module:extend('Tree')
  function Net:__init() self.block = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()) end
  s = tostring(Net())
  test.ok(s:find('  (block): Sequential(', 1, true) and s:find('    (1): Conv2d(1, 2, kernel_size=3, stride=1)', 1, true), s)
end)

test.case('each module against the functional op: shape, parameter count, values', function()
  lm.manual_seed(11)
  local x4 = lm.randn(2, 3, 9, 9)
  local x2 = lm.randn(5, 6)
  local function same(y, z, what) test.ok(lm.allclose(y, z, 1e-6, 1e-6), what) end
  local lin = nn.Linear(6, 4)
  test.eq(count(lin), 28)
  same(lin(x2), F.linear(x2, lin.weight, lin.bias), 'Linear')
  local conv = nn.Conv2d(3, 5, { 3, 2 }, { stride = 2, padding = 1, dilation = { 1, 2 } })
  test.eq(count(conv), 5 * 3 * 3 * 2 + 5)
  same(conv(x4), F.conv2d(x4, conv.weight, conv.bias, { stride = 2, padding = 1, dilation = { 1, 2 } }), 'Conv2d')
  local g = nn.Conv2d(4, 6, 3, { groups = 2, padding = 'same', bias = false })
  test.eq(g.weight:shape(), { 6, 2, 3, 3 })
  test.eq(g(lm.randn(1, 4, 7, 7)):shape(), { 1, 6, 7, 7 }, "padding='same'")
  same(nn.MaxPool2d(3, 2)(x4), F.max_pool2d(x4, 3, { stride = 2 }), 'MaxPool2d')
  same(nn.AvgPool2d(2, { padding = 1 })(x4), F.avg_pool2d(x4, 2, { padding = 1 }), 'AvgPool2d')
  same(nn.ReLU()(x2), F.relu(x2), 'ReLU')
  same(nn.LeakyReLU(0.3)(x2), F.leaky_relu(x2, 0.3), 'LeakyReLU')
  same(nn.Sigmoid()(x2), F.sigmoid(x2), 'Sigmoid')
  same(nn.Tanh()(x2), F.tanh(x2), 'Tanh')
  same(nn.GELU()(x2), F.gelu(x2), 'GELU')
  same(nn.Softmax(1)(x2), F.softmax(x2, 1), 'Softmax')
  same(nn.LogSoftmax()(x2), F.log_softmax(x2, -1), 'LogSoftmax')
  test.eq(nn.Flatten()(x4):shape(), { 2, 243 })
  test.eq(nn.Flatten(3)(x4):shape(), { 2, 3, 81 })
  same(nn.Identity()(x2), x2, 'Identity')
  local res = nn.Residual(nn.Linear(6, 6))
  same(res(x2), x2 + res.fn(x2), 'Residual')
  local ln = nn.LayerNorm(6)
  test.eq(count(ln), 12)
  same(ln(x2), F.layer_norm(x2, { 6 }, ln.weight, ln.bias, 1e-5), 'LayerNorm')
  local emb = nn.Embedding(10, 3)
  local idx = lm.tensor({ { 1, 10 }, { 4, 4 } })
  test.eq(count(emb), 30)
  same(emb(idx), F.embedding(idx, emb.weight), 'Embedding')
  local bn = nn.BatchNorm2d(3)
  test.eq(count(bn), 6)
  local rm, rv = lm.zeros(3), lm.ones(3)
  same(bn(x4), F.batch_norm(x4, rm, rv, bn.weight, bn.bias, true, 0.1, 1e-5), 'BatchNorm2d training')
  same(bn.running_mean, rm, 'BatchNorm2d running_mean')
  local ce = nn.CrossEntropyLoss({ reduction = 'sum', label_smoothing = 0.1 })
  local t = lm.tensor({ 1, 6, 2, 3, 6 })
  same(ce(x2, t), F.cross_entropy(x2, t, { reduction = 'sum', label_smoothing = 0.1 }), 'CrossEntropyLoss')
  same(nn.NLLLoss()(F.log_softmax(x2, 2), t), F.nll_loss(F.log_softmax(x2, 2), t), 'NLLLoss')
  same(nn.MSELoss()(x2, x2 * 0.5), F.mse_loss(x2, x2 * 0.5), 'MSELoss')
  local p = F.sigmoid(x2)
  same(nn.BCELoss()(p, p:round()), F.binary_cross_entropy(p, p:round()), 'BCELoss')
  same(nn.BCEWithLogitsLoss()(x2, p:round()), F.binary_cross_entropy(p, p:round()), 'BCEWithLogitsLoss = sigmoid + BCE')
end)

test.case('initialisation: PyTorch default bounds (kaiming_uniform a = sqrt(5)) and nn.init', function()
  lm.manual_seed(5)
  local lin = nn.Linear(400, 300)
  local b = 1 / math.sqrt(400)
  test.ok(lin.weight:abs():max():item() <= b and lin.weight:abs():max():item() > 0.95 * b, 'weight in U(-1/sqrt(in), ..)')
  test.ok(lin.bias:abs():max():item() <= b)
  test.near(lin.weight:std():item(), b / math.sqrt(3), 0.02, 'the std of U(-b, b)')
  local conv = nn.Conv2d(8, 16, 3)
  local bc = 1 / math.sqrt(8 * 9)
  test.ok(conv.weight:abs():max():item() <= bc and conv.bias:abs():max():item() <= bc)
  local w = lm.empty(200, 100)
  nn.init.kaiming_uniform_(w, { nonlinearity = 'relu' })
  test.ok(w:abs():max():item() <= math.sqrt(2) * math.sqrt(3 / 100))
  nn.init.kaiming_normal_(w, 0, 'fan_out', 'relu')
  test.near(w:std():item(), math.sqrt(2) / math.sqrt(200), 0.03)
  nn.init.xavier_uniform_(w)
  test.ok(w:abs():max():item() <= math.sqrt(6 / 300))
  nn.init.xavier_normal_(w, 2)
  test.near(w:std():item(), 2 * math.sqrt(2 / 300), 0.03)
  test.eq(nn.init.zeros_(w):abs():sum():item(), 0)
  test.eq(nn.init.ones_(w):sum():item(), 20000)
  test.eq(nn.init.constant_(w, 3):mean():item(), 3)
  nn.init.normal_(w, 1, 0.5)
  test.near(w:mean():item(), 1, 0.02)
  test.near(nn.init.calculate_gain('leaky_relu', 0.2), math.sqrt(2 / 1.04), 1e-12)
  test.eq(nn.init.calculate_gain('tanh'), 5 / 3)
  local p = lm.ones(3, 3, { requires_grad = true })
  nn.init.eye_(p)
  test.eq(p:sum():item(), 3, 'works on a parameter that requires grad')
  test.raises(function() nn.init.xavier_uniform_(lm.ones(3)) end, 'fan in and fan out need at least 2 dims')
  test.raises(function() nn.init.kaiming_uniform_(w, { mode = 'fan_middle' }) end, "mode must be 'fan_in' or 'fan_out'")
end)

test.case('BatchNorm: batch statistics in training, running ones in evaluation', function()
  lm.manual_seed(2)
  local bn = nn.BatchNorm1d(3, { momentum = 0.5 })
  local x = lm.randn(50, 3) * 2 + 4
  local y = bn(x)
  test.tensor_near(y:mean(1), { 0, 0, 0 }, 1e-5, 'normalised by the batch mean')
  test.tensor_near(bn.running_mean, (x:mean(1) * 0.5):tolist(), 1e-5, 'running mean moved halfway')
  test.tensor_near(bn.running_var, (x:var(1) * 0.5 + 0.5):tolist(), 1e-4, 'running var (unbiased) moved halfway')
  bn:eval()
  local before = bn.running_mean:clone()
  local z = bn(x)
  test.ok(lm.equal(bn.running_mean, before), 'evaluation leaves the statistics alone')
  local want = (x - bn.running_mean) / (bn.running_var + 1e-5):sqrt()
  test.tensor_near(z, want, 1e-5, 'eval uses the running statistics')
  test.raises(function() nn.BatchNorm2d(3)(lm.randn(2, 4, 5, 5)) end,
    'nn.BatchNorm2d: input of shape [2, 4, 5, 5] does not fit num_features=3')
  local nostats = nn.BatchNorm1d(3, { track_running_stats = false, affine = false })
  test.eq(#nostats:parameters(), 0)
  nostats:eval()
  test.tensor_near(nostats(x):mean(1), { 0, 0, 0 }, 1e-5, 'without running statistics: batch statistics always')
end)

test.case('Dropout: random zeros scaled by 1/(1-p) in training, the identity in evaluation', function()
  lm.manual_seed(4)
  local d = nn.Dropout(0.25)
  local x = lm.ones(200, 100)
  local y = d(x)
  local kept = y:ne(0):sum():item() / x:numel()
  test.near(kept, 0.75, 0.02, 'the share kept')
  test.near(y:max():item(), 1 / 0.75, 1e-6, 'kept values scaled')
  d:eval()
  test.ok(lm.equal(d(x), x), 'evaluation: identity')
  test.ok(lm.equal(nn.Dropout(0)(x), x))
  test.raises(function() nn.Dropout(1.5) end, 'nn.Dropout: option p must be a number in [0, 1], got 1.5')
end)

test.case('bad input: wrong batch shapes name the module, where it sits and both shapes', function()
  local model = mlp()
  test.raises(function() model(lm.randn(4, 10)) end,
    "nn.Linear at '2': input of shape [4, 10] does not fit in_features=12 (expected [..., 12])")
  local Net = nn.Module:extend('Net')
  function Net:__init() self.features = nn.Sequential(nn.Conv2d(1, 4, 3)) end
  function Net:forward(x) return self.features(x) end
  test.raises(function() Net()(lm.randn(2, 3, 8, 8)) end,
    "nn.Conv2d at 'features.1': input of shape [2, 3, 8, 8] does not fit in_channels=1 (expected [N, 1, H, W])")
  test.raises(function() nn.Conv2d(1, 2, 3)(lm.randn(8, 8)) end, 'input of shape [8, 8] does not fit in_channels=1')
  test.raises(function() nn.MaxPool2d(2)(lm.randn(3, 8)) end, 'nn.MaxPool2d: input of shape [3, 8] must be [N, C, H, W]')
  test.raises(function() nn.LayerNorm({ 3, 4 })(lm.randn(2, 4, 3)) end, 'does not end in normalized_shape [3, 4]')
  test.raises(function() nn.Linear(3, 2)('x') end, 'nn.Linear: input must be a tensor')
  test.raises(function() nn.Embedding(4, 2)(lm.tensor({ 1.0, 2.0 })) end, 'indices must be an int64 or int32 tensor')
  test.raises(function() nn.Embedding(4, 2)(lm.tensor({ 1, 5 })) end, 'nn.Embedding: F.embedding: indices: index 5 is out of range 1..4')
  test.raises(function() nn.Residual(nn.Linear(3, 2))(lm.randn(1, 3)) end, 'maps shape [1, 3] to [1, 2]')
  test.raises(function() nn.Sequential(nn.Linear(2, 2), 'relu') end, 'nn.Sequential: argument 2 must be a module, got string')
  test.raises(function() nn.Linear(0, 3) end, 'nn.Linear: in_features must be a positive integer, got 0')
  test.raises(function() nn.Linear(2.5, 3) end, 'in_features must be a positive integer, got 2.5')
  test.raises(function() nn.Linear(2, 3, { bais = true }) end, "nn.Linear: unknown option 'bais' (expected bias, dtype)")
  test.raises(function() nn.Conv2d(3, 4, 3, { groups = 2 }) end, 'must both be divisible by groups 2')
  test.raises(function() nn.Conv2d(3, 4, 2, { padding = 'same' }) end, "padding='same' with kernel 2")
  test.raises(function() nn.MaxPool2d(2, { padding = 3 }) end, 'padding 3 must be at most half the kernel size 2')
end)

test.case("errors point at the user's line: in a file, in the REPL's and -e's chunks, in load()", function()
  local function where(f, ...)
    local ok, err = pcall(f, ...)
    test.ok(not ok, 'raises')
    return err:match('^(.-:%d+): '), err
  end
  local file = debug.getinfo(1, 'S').short_src
  local Net = nn.Module:extend('Net')
  local line
  function Net:__init() self.fc = nn.Linear(4, 3) end
  function Net:forward(x)
    line = debug.getinfo(1, 'l').currentline + 1
    local y = self.fc(x) -- the user's line, not nn.Linear's inside lua/lumen
    return y
  end
  test.eq(where(Net(), lm.zeros(2, 5)), file .. ':' .. line)
  -- The chunks typed at the REPL ('=stdin'), given to -e ('=(command line)') or to load() have no
  -- file, and they are the user's code all the same.
  local at, err = where(load('local m = nn.Linear(4, 3)\nlocal y = m(lm.zeros(2, 5))', '=stdin'))
  test.eq(at, 'stdin:2', err)
  test.ok(err:find('nn.Linear: input of shape [2, 5] does not fit in_features=4', 1, true), err)
  at, err = where(load("local m = nn.Linear(4, 'a')", '=(command line)'))
  test.eq(at, '(command line):1', err)
  test.ok(err:find("nn.Linear: out_features must be a positive integer, got 'a'", 1, true), err)
  at = where(load('local N = nn.Module:extend("N")\nfunction N:__init() self.fc = nn.Linear(4, 3) end\n' ..
    'function N:forward(x)\n  local y = self.fc(x)\n  return y\nend\nlocal y = N()(lm.zeros(2, 5))', '=stdin'))
  test.eq(at, 'stdin:4', "a forward typed at the REPL: its line, not the model's call")
  at = where(load('local y = nn.Sequential(nn.Linear(4, 3), nn.Linear(4, 2))(lm.zeros(1, 4))'))
  test.ok(at and at:find('^%[string "local y = nn.Sequential.*"%]:1$'), at)
  at = where(load('local o = optim.SGD({}, {lr = 0.1})', '=stdin'))
  test.eq(at, 'stdin:1', 'optim raises the same way')
end)

test.case('bad input: labels out of range, float labels, mismatched targets', function()
  local ce = nn.CrossEntropyLoss()
  local logits = lm.randn(4, 10)
  test.raises(function() ce(logits, lm.tensor({ 1, 2, 11, 3 })) end,
    'nn.CrossEntropyLoss: F.cross_entropy: target: index 11 is out of range 1..10 (indices are 1-based)')
  test.raises(function() ce(logits, lm.tensor({ 0, 2, 1, 3 })) end, 'index 0 is out of range 1..10')
  test.raises(function() ce(logits, lm.tensor({ 1.0, 2.0, 1.0, 3.0 })) end,
    'nn.CrossEntropyLoss: target must hold class indices (int64, 1-based), got a float32 tensor')
  test.raises(function() ce(logits, lm.tensor({ 1, 2 })) end, 'nn.CrossEntropyLoss:')
  test.raises(function() nn.CrossEntropyLoss({ label_smoothing = 2 }) end, 'label_smoothing must be a number in [0, 1]')
  test.raises(function() nn.MSELoss({ reduction = 'avg' }) end, "option reduction must be 'mean', 'sum' or 'none', got avg")
  test.raises(function() nn.MSELoss()(lm.randn(3), lm.randn(4)) end, 'nn.MSELoss: F.mse_loss:')
  test.raises(function() nn.BCELoss()(lm.tensor({ 1.5 }), lm.tensor({ 1.0 })) end, 'must lie in [0, 1]')
  test.raises(function() nn.BCEWithLogitsLoss({ pos_weight = lm.ones(3) })(lm.randn(2, 4), lm.rand(2, 4)) end,
    'pos_weight of shape [3] does not broadcast')
end)
