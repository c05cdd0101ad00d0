-- The recurrent modules (nn.RNN, nn.LSTM, nn.GRU and their cells): values and gradients against
-- PyTorch (numbers printed by tests/nn/torch_rnn.py into tests/nn/torch_rnn_values.lua, float64;
-- modules, inputs and states rebuilt here by the same formulas), gradcheck in float64, dropout
-- between layers, and the errors on bad input.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local CASES = dofile(here .. '../nn/torch_rnn_values.lua')

-- s * sin(a * i + b), i = 0..n-1, float64, in shape (as the script's wave / shaped)
local function shaped(shape, a, b, s)
  local n = 1
  for _, k in ipairs(shape) do n = n * k end
  return ((lm.arange(0, n, { dtype = 'float64' }) * a + b):sin() * s):view(shape)
end

-- the script's set_params: parameter k (0-based) = wave(numel, 0.23 + 0.1 k, 0.3, 0.4)
local function set_params(m)
  lm.no_grad(function()
    for k, p in ipairs(m:parameters()) do p:copy_(shaped(p:shape(), 0.23 + 0.1 * (k - 1), 0.3, 0.4)) end
  end)
end

local TOL = 1e-10

-- t against {sum =, v = every stride-th element}
local function near(t, ref, stride, what)
  test.ok(t ~= nil, what .. ': missing')
  local a = t:contiguous():view(-1):tolist()
  test.eq(#ref.v, (#a + stride - 1) // stride, what .. ': element count')
  for j, e in ipairs(ref.v) do
    local i = 1 + (j - 1) * stride
    test.near(a[i], e, TOL, string.format('%s[%d]', what, i))
  end
  test.near(t:sum():item(), ref.sum, TOL * #a, what .. ': sum')
end

local CELLS = { RNNCell = true, LSTMCell = true, GRUCell = true }

local function run_case(c)
  local opts = { dtype = 'float64' }
  for k, v in pairs(c) do
    local o = k:match('^opt_(.*)')
    if o then opts[o] = v end
  end
  local m = nn[c.kind](c.args[1], c.args[2], opts)
  set_params(m)
  local lstm = c.kind == 'LSTM' or c.kind == 'LSTMCell'
  local x = shaped(c.xshape, 0.37, 0.1, 1.5):requires_grad_()
  local h0, c0
  if c.state then
    h0 = shaped(c.state, 0.29, 0.5, 0.8):requires_grad_()
    c0 = shaped(c.state, 0.31, 0.7, 0.8):requires_grad_()
  end
  local hx = h0 and (lstm and { h0, c0 } or h0) or nil
  local o, hn, cn
  if CELLS[c.kind] then
    if lstm then o, cn = m(x, hx) else o = m(x, hx) end
  else
    local s
    o, s = m(x, hx)
    if lstm then hn, cn = s[1], s[2] else hn = s end
  end
  test.eq(o:shape(), c.out_shape, c.name .. ': output shape')
  local loss = (o * shaped(o:shape(), 0.41, 0.2, 1.0)):sum()
  if hn then
    test.eq(hn:shape(), c.h_shape, c.name .. ': h_n shape')
    loss = loss + (hn * shaped(hn:shape(), 0.43, 0.6, 1.0)):sum()
  end
  if cn then
    test.eq(cn:shape(), c.c_shape, c.name .. ': c_n shape')
    loss = loss + (cn * shaped(cn:shape(), 0.47, 0.9, 1.0)):sum()
  end
  loss:backward()
  local st = c.stride
  near(o, c.out, st, c.name .. ' output')
  if hn then near(hn, c.h_n, st, c.name .. ' h_n') end
  if cn then near(cn, c.c_n, st, c.name .. ' c_n') end
  near(x.grad, c.g_x, st, c.name .. ' d/dx')
  if h0 then near(h0.grad, c.g_h0, st, c.name .. ' d/dh0') end
  if h0 and lstm then near(c0.grad, c.g_c0, st, c.name .. ' d/dc0') end
  local n = 0
  for pname, p in pairs(m:named_parameters()) do
    n = n + 1
    test.ok(c['g_' .. pname], c.name .. ': PyTorch has no parameter ' .. pname)
    near(p.grad, c['g_' .. pname], st, c.name .. ' d/d' .. pname)
  end
  local want = 0
  for k in pairs(c) do if k:match('^g_[wb]') then want = want + 1 end end
  test.eq(n, want, c.name .. ': parameter count')
end

test.case('cells against PyTorch: outputs and gradients', function()
  local n = 0
  for _, c in ipairs(CASES) do
    if CELLS[c.kind] then run_case(c); n = n + 1 end
  end
  test.ok(n >= 6, 'cell cases')
end)

test.case('RNN, LSTM, GRU against PyTorch: layers, directions, batch_first, unbatched, states', function()
  local n = 0
  for _, c in ipairs(CASES) do
    if not CELLS[c.kind] then run_case(c); n = n + 1 end
  end
  test.ok(n >= 12, 'layer cases')
end)

test.case("PyTorch's parameter names, shapes and initialisation", function()
  lm.manual_seed(3)
  local m = nn.GRU(5, 4, { num_layers = 2, bidirectional = true })
  local names, shapes = {}, {}
  for k, p in pairs(m:named_parameters()) do
    names[#names + 1] = k
    shapes[#shapes + 1] = p:shape()
    test.ok(p:abs():max():item() <= 0.5, k .. ' within 1/sqrt(hidden_size)')
    test.eq(p:dtype(), 'float32')
  end
  test.eq(names, { 'weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0',
    'weight_ih_l0_reverse', 'weight_hh_l0_reverse', 'bias_ih_l0_reverse', 'bias_hh_l0_reverse',
    'weight_ih_l1', 'weight_hh_l1', 'bias_ih_l1', 'bias_hh_l1',
    'weight_ih_l1_reverse', 'weight_hh_l1_reverse', 'bias_ih_l1_reverse', 'bias_hh_l1_reverse' })
  test.eq(shapes[1], { 12, 5 })
  test.eq(shapes[2], { 12, 4 })
  test.eq(shapes[9], { 12, 8 })
  test.eq(nn.LSTMCell(3, 2).weight_ih:shape(), { 8, 3 })
  test.eq(nn.RNNCell(3, 2, { bias = false }).bias_ih, nil)
  test.eq(#nn.LSTM(3, 2, { bias = false }):parameters(), 2)
  test.eq(tostring(nn.LSTM(3, 2, { num_layers = 2, batch_first = true })):match('^LSTM%(([^)]*)%)'),
    '3, 2, num_layers=2, batch_first=true')
  test.eq(tostring(nn.RNNCell(3, 2, { nonlinearity = 'relu' })):match('^RNNCell%(([^)]*)%)'), "3, 2, nonlinearity='relu'")
  -- float32 by default, as PyTorch; the layer runs in float32
  local out, h = nn.RNN(3, 2)(lm.randn(4, 1, 3))
  test.eq(out:dtype(), 'float32')
  test.eq(h:shape(), { 1, 1, 2 })
  -- state_dict keys and a forward hook on a module with two results
  local lstm = nn.LSTM(3, 2)
  test.ok(lstm:state_dict().weight_hh_l0 ~= nil)
  lstm:register_forward_hook(function(_, _, o) return o * 0 end)
  local o2, hc = lstm(lm.randn(2, 3))
  test.eq(o2:abs():sum():item(), 0)
  test.eq(hc[1]:shape(), { 1, 2 })
end)

local G = dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'grad_check.lua')
local gc, flat, with_params = G.gc, G.flat, G.with_params

test.case('gradcheck in float64: the cells', function()
  lm.manual_seed(5)
  local x = lm.randn(2, 3, { dtype = 'float64', requires_grad = true })
  local h = lm.randn(2, 4, { dtype = 'float64', requires_grad = true })
  local c = lm.randn(2, 4, { dtype = 'float64', requires_grad = true })
  for _, nl in ipairs({ 'tanh', 'relu' }) do
    local m = nn.RNNCell(3, 4, { nonlinearity = nl, dtype = 'float64' })
    gc('RNNCell ' .. nl, function(xx, hh) return m(xx, hh) end, with_params(m, x, h))
  end
  local lc = nn.LSTMCell(3, 4, { dtype = 'float64' })
  gc('LSTMCell', function(xx, hh, cc) return flat(lc(xx, { hh, cc })) end, with_params(lc, x, h, c))
  local g = nn.GRUCell(3, 4, { dtype = 'float64' })
  gc('GRUCell', function(xx, hh) return g(xx, hh) end, with_params(g, x, h))
  local gu = nn.GRUCell(3, 4, { dtype = 'float64', bias = false })
  gc('GRUCell unbatched, no bias', function(xx) return gu(xx) end, with_params(gu, x[1]:detach():requires_grad_()))
end)

test.case('gradcheck in float64: two-layer bidirectional RNN, LSTM, GRU', function()
  lm.manual_seed(6)
  local x = lm.randn(3, 2, 3, { dtype = 'float64', requires_grad = true })
  local h0 = lm.randn(4, 2, 2, { dtype = 'float64', requires_grad = true })
  local c0 = lm.randn(4, 2, 2, { dtype = 'float64', requires_grad = true })
  local o = { num_layers = 2, bidirectional = true, dtype = 'float64' }
  local r = nn.RNN(3, 2, o)
  gc('RNN', function(xx, hh) return flat(r(xx, hh)) end, with_params(r, x, h0))
  local l = nn.LSTM(3, 2, o)
  gc('LSTM', function(xx, hh, cc)
    local y, s = l(xx, { hh, cc })
    return flat(y, s[1], s[2])
  end, with_params(l, x, h0, c0))
  local g = nn.GRU(3, 2, { num_layers = 2, bidirectional = true, batch_first = true, dtype = 'float64' })
  local h0b = lm.randn(4, 3, 2, { dtype = 'float64', requires_grad = true }) -- batch 3 when batch_first
  gc('GRU batch_first', function(xx, hh) return flat(g(xx, hh)) end, with_params(g, x, h0b))
end)

test.case('dropout between layers: training only, never after the last layer', function()
  lm.manual_seed(7)
  local x = lm.randn(5, 2, 3, { dtype = 'float64' })
  for _, kind in ipairs({ 'RNN', 'LSTM', 'GRU' }) do
    local m = nn[kind](3, 4, { num_layers = 2, dropout = 1, dtype = 'float64' })
    -- the two layers as separate one-layer modules with the same parameters
    local l0, l1 = nn[kind](3, 4, { dtype = 'float64' }), nn[kind](4, 4, { dtype = 'float64' })
    lm.no_grad(function()
      for _, n in ipairs({ 'weight_ih', 'weight_hh', 'bias_ih', 'bias_hh' }) do
        l0[n .. '_l0']:copy_(m[n .. '_l0'])
        l1[n .. '_l0']:copy_(m[n .. '_l1'])
      end
    end)
    local first = l0(x)
    -- training, dropout = 1: the second layer sees zeros, the first is untouched
    local out, s = m(x)
    local last = kind == 'LSTM' and s[1] or s
    test.tensor_near(out, (l1(lm.zeros(5, 2, 4, { dtype = 'float64' }))), 1e-12, kind .. ' training: second layer on zeros')
    test.tensor_near(last[1], first[5], 1e-12, kind .. ' training: first layer kept')
    -- eval: no dropout, the layers compose
    m:eval()
    test.tensor_near((m(x)), (l1(first)), 1e-12, kind .. ' eval: the layers compose')
  end
  -- one layer: dropout never applies (nothing follows the last layer)
  local one = nn.GRU(3, 4, { dropout = 1, dtype = 'float64' })
  local y = one(x)
  test.ok(y:abs():sum():item() > 0, 'one layer: no dropout on the output')
end)

test.case('bad input: clear errors naming the module and the shapes', function()
  test.raises(function() nn.RNN(0, 4) end, 'nn.RNN: input_size must be a positive integer, got 0')
  test.raises(function() nn.LSTM(3, -2) end, 'nn.LSTM: hidden_size must be a positive integer, got -2')
  test.raises(function() nn.GRUCell(3, 1.5) end, 'nn.GRUCell: hidden_size must be a positive integer, got 1.5')
  test.raises(function() nn.GRU(3, 4, { num_layers = 0 }) end, 'nn.GRU: option num_layers must be a positive integer, got 0')
  test.raises(function() nn.LSTM(3, 4, { dropout = 1.5 }) end, 'nn.LSTM: option dropout must be a number in [0, 1], got 1.5')
  test.raises(function() nn.RNN(3, 4, { dropout = -0.1 }) end, 'nn.RNN: option dropout must be a number in [0, 1], got -0.1')
  test.raises(function() nn.RNN(3, 4, { nonlinearity = 'sigmoid' }) end,
    "nn.RNN: option nonlinearity must be 'tanh' or 'relu', got 'sigmoid'")
  test.raises(function() nn.RNNCell(3, 4, { nonlinearity = 'gelu' }) end,
    "nn.RNNCell: option nonlinearity must be 'tanh' or 'relu', got 'gelu'")
  test.raises(function() nn.LSTM(3, 4, { nonlinearity = 'relu' }) end, "nn.LSTM: unknown option 'nonlinearity'")
  test.raises(function() nn.GRU(3, 4, { bidirectional = 1 }) end, 'nn.GRU: option bidirectional must be a boolean, got 1')

  local lstm = nn.LSTM(3, 4, { num_layers = 2 })
  test.raises(function() lstm(lm.zeros(2, 3, 4, 3)) end,
    'nn.LSTM: input of shape [2, 3, 4, 3] does not fit input_size=3 (expected [seq, batch, 3] or [seq, 3])')
  test.raises(function() lstm(lm.zeros(6, 2, 5)) end, 'nn.LSTM: input of shape [6, 2, 5] does not fit input_size=3')
  test.raises(function() nn.GRU(3, 4, { batch_first = true })(lm.zeros(6, 2, 5)) end,
    'nn.GRU: input of shape [6, 2, 5] does not fit input_size=3 (expected [batch, seq, 3] or [seq, 3])')
  test.raises(function() lstm('x') end, "nn.LSTM: input must be a tensor, got 'x'")
  local x = lm.zeros(6, 2, 3)
  test.raises(function() lstm(x, lm.zeros(2, 2, 4)) end, 'nn.LSTM: the initial state must be a table {h0, c0} of tensors')
  test.raises(function() lstm(x, { lm.zeros(2, 2, 4) }) end, 'needs both tensors')
  test.raises(function() lstm(x, { lm.zeros(2, 2, 4), lm.zeros(2, 3, 4) }) end,
    'nn.LSTM: c0 of shape [2, 3, 4] does not fit the input of shape [6, 2, 3] (expected [2, 2, 4]')
  test.raises(function() lstm(x, { lm.zeros(1, 2, 4), lm.zeros(2, 2, 4) }) end,
    'nn.LSTM: h0 of shape [1, 2, 4] does not fit the input of shape [6, 2, 3] (expected [2, 2, 4]')
  local rnn = nn.RNN(3, 4, { bidirectional = true })
  test.raises(function() rnn(x, lm.zeros(1, 2, 4)) end,
    'nn.RNN: h0 of shape [1, 2, 4] does not fit the input of shape [6, 2, 3] (expected [2, 2, 4]: num_layers * 2, batch, hidden_size)')
  test.raises(function() rnn(lm.zeros(6, 3), lm.zeros(2, 1, 4)) end,
    'nn.RNN: h0 of shape [2, 1, 4] does not fit the input of shape [6, 3] (expected [2, 4]')
  test.raises(function() rnn(lm.zeros(0, 2, 3)) end, 'nn.RNN: input of shape [0, 2, 3] has an empty sequence')
  test.raises(function() rnn(lm.zeros(6, 2, 3, { dtype = 'float64' })) end,
    'nn.RNN: the input is float64 but the parameters are float32')

  local cell = nn.GRUCell(3, 4)
  test.raises(function() cell(lm.zeros(2, 5)) end,
    'nn.GRUCell: input of shape [2, 5] does not fit input_size=3 (expected [batch, 3] or [3])')
  test.raises(function() cell(lm.zeros(2, 3), lm.zeros(3, 4)) end,
    'nn.GRUCell: h of shape [3, 4] does not fit the input of shape [2, 3] (expected [2, 4])')
  test.raises(function() cell(lm.zeros(3), lm.zeros(1, 4)) end,
    'nn.GRUCell: h of shape [1, 4] does not fit the input of shape [3] (expected [4])')
  local lc = nn.LSTMCell(3, 4)
  test.raises(function() lc(lm.zeros(2, 3), lm.zeros(2, 4)) end, 'nn.LSTMCell: the state must be a table {h, c} of tensors')
  test.raises(function() lc(lm.zeros(2, 3), { lm.zeros(2, 4), lm.zeros(2, 5) }) end,
    'nn.LSTMCell: c of shape [2, 5] does not fit the input of shape [2, 3] (expected [2, 4])')

  -- named where it sits in a model, at the user's line
  local Net = nn.Module:extend('RNNNet')
  function Net:__init() self.rnn = nn.LSTM(3, 4) end
  function Net:forward(v) return self.rnn(v) end
  local msg = test.raises(function() Net()(lm.zeros(6, 2, 5)) end, "nn.LSTM at 'rnn': input of shape [6, 2, 5]")
  test.ok(msg:find('test_rnn.lua:%d+:') ~= nil, 'at the user\'s line: ' .. msg)
end)

test.case('F.lstm_cell: the fused gates equal the eight-op formula, and gradcheck', function()
  -- the fused step nn.LSTM runs against the formula written with plain ops, in float64 and float32
  for _, dt in ipairs({ 'float64', 'float32' }) do
    local B, H = 5, 7
    local a = lm.randn(B, 4 * H, { dtype = dt }) * 3
    local c = lm.randn(B, H, { dtype = dt })
    local hc = F.lstm_cell(a, c)
    local i, f = a:narrow(2, 1, H):sigmoid(), a:narrow(2, H + 1, H):sigmoid()
    local g, o = a:narrow(2, 2 * H + 1, H):tanh(), a:narrow(2, 3 * H + 1, H):sigmoid()
    local c2 = f * c + i * g
    test.tensor_near(hc:narrow(2, H + 1, H), c2, dt == 'float64' and 1e-14 or 1e-6, dt .. ' c')
    test.tensor_near(hc:narrow(2, 1, H), o * c2:tanh(), dt == 'float64' and 1e-14 or 1e-6, dt .. ' h')
  end
  local a = lm.randn(3, 8, { dtype = 'float64', requires_grad = true })
  local c = lm.randn(3, 2, { dtype = 'float64', requires_grad = true })
  gc('lstm_cell', function(x, y) return F.lstm_cell(x, y) end, { a, c })
  -- through only one half (h or c'), and a transposed, non-contiguous input
  gc('lstm_cell h only', function(x, y) return F.lstm_cell(x, y):narrow(2, 1, 2) end, { a, c })
  local at = lm.randn(8, 3, { dtype = 'float64', requires_grad = true })
  gc('lstm_cell transposed gates', function(x, y) return F.lstm_cell(x:t(), y) end, { at, c })
  test.raises(function() F.lstm_cell(lm.randn(3, 7), lm.randn(3, 2)) end, 'must be (B, 4H) and (B, H)')
  test.raises(function() F.lstm_cell(lm.randn(3, 8), lm.randn(3, 2, { dtype = 'float64' })) end, 'one dtype')
end)

test.case('F.gru_cell: the fused gates equal the formula, and gradcheck', function()
  for _, dt in ipairs({ 'float64', 'float32' }) do
    local B, H = 4, 6
    local xg, hg, h = lm.randn(B, 3 * H, { dtype = dt }) * 2, lm.randn(B, 3 * H, { dtype = dt }) * 2, lm.randn(B, H, { dtype = dt })
    local r = (xg:narrow(2, 1, H) + hg:narrow(2, 1, H)):sigmoid()
    local z = (xg:narrow(2, H + 1, H) + hg:narrow(2, H + 1, H)):sigmoid()
    local n = (xg:narrow(2, 2 * H + 1, H) + r * hg:narrow(2, 2 * H + 1, H)):tanh()
    test.tensor_near(F.gru_cell(xg, hg, h), (1 - z) * n + z * h, dt == 'float64' and 1e-14 or 1e-6, dt)
  end
  local xg = lm.randn(3, 6, { dtype = 'float64', requires_grad = true })
  local hg = lm.randn(3, 6, { dtype = 'float64', requires_grad = true })
  local h = lm.randn(3, 2, { dtype = 'float64', requires_grad = true })
  gc('gru_cell', function(a, b, c) return F.gru_cell(a, b, c) end, { xg, hg, h })
  local ht = lm.randn(2, 3, { dtype = 'float64', requires_grad = true })
  gc('gru_cell transposed state', function(a, b, c) return F.gru_cell(a, b, c:t()) end, { xg, hg, ht })
  test.raises(function() F.gru_cell(lm.randn(3, 6), lm.randn(3, 5), lm.randn(3, 2)) end, 'must be (B, 3H), (B, 3H) and (B, H)')
end)
