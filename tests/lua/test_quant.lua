-- lm.quant (issue 34 Must 3) against references written here in plain Lua loops over numbers
-- (no tensor op of the code under test): the codes and scales of every scheme and granularity,
-- the straight-through gradient, the observers' ranges, the int8 layers' exact integer arithmetic,
-- SmoothQuant's invariance and migration, autocast's dtypes and the loss scaler's skipping rule;
-- with the 16-bit dtypes and block types met from Lua (printing, F.linear with q4_0 weights).
local test = require 'lumen.test'
local quant = lm.quant
local F = lm.nn.functional

local EPS = 1.1920928955078125e-07

-- round half to even, on a number
local function rne(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end

-- The reference: rows of numbers (each a granule), the scheme -> codes, scale, zero point per row.
local function ref_quantize(rows, bits, symmetric)
  local qmin, qmax
  if symmetric then qmin, qmax = -(2 ^ (bits - 1) - 1), 2 ^ (bits - 1) - 1 else qmin, qmax = 0, 2 ^ bits - 1 end
  local out = {}
  for r, row in ipairs(rows) do
    local lo, hi = 0, 0
    for _, v in ipairs(row) do lo = math.min(lo, v); hi = math.max(hi, v) end
    local s, z
    if symmetric then
      s = math.max(math.max(-lo, hi) / qmax, EPS)
      z = 0
    else
      s = math.max((hi - lo) / (qmax - qmin), EPS)
      z = math.max(qmin, math.min(qmax, rne(-lo / s)))
    end
    s = lm.tensor({ s }):item() -- the scale in float32, as the tensors hold it
    local codes = {}
    for i, v in ipairs(row) do codes[i] = math.max(qmin, math.min(qmax, rne(v / s) + z)) end
    out[r] = { codes = codes, scale = s, zero = z }
  end
  return out
end

-- The granules of a 2-D table m as rows of numbers.
local function rows_of(m, granularity, group)
  local rows = {}
  if granularity == 'tensor' then
    local all = {}
    for _, row in ipairs(m) do for _, v in ipairs(row) do all[#all + 1] = v end end
    rows[1] = all
  elseif granularity == 'channel' then
    rows = m
  else
    for _, row in ipairs(m) do
      for g = 1, #row, group do
        local part = {}
        for i = g, g + group - 1 do part[#part + 1] = row[i] end
        rows[#rows + 1] = part
      end
    end
  end
  return rows
end

test.case('quantize: codes, scales and zero points of every scheme and granularity against loops', function()
  lm.manual_seed(7)
  for _, shape in ipairs({ { 3, 64 }, { 5, 32 }, { 1, 96 } }) do
    local x = lm.randn(shape[1], shape[2]) * 2
    x[{ 1, 3 }] = 9.5 -- an outlier
    local m = x:tolist()
    for _, bits in ipairs({ 8, 4, 3, 2 }) do
      for _, g in ipairs({ 'tensor', 'channel', 'group' }) do
        for _, sym in ipairs({ true, false }) do
          local q = quant.quantize(x, { bits = bits, granularity = g, symmetric = sym, group_size = 32 })
          local want = ref_quantize(rows_of(m, g, 32), bits, sym)
          local codes = q.q:reshape(#want, -1):tolist()
          local what = string.format('%s %d-bit %s %s', table.concat(shape, 'x'), bits, g, sym and 'sym' or 'asym')
          test.eq(q.q:dtype(), sym and 'int8' or 'uint8', what)
          test.eq(q.scale:numel(), #want, what .. ': one scale per granule')
          for r, w in ipairs(want) do
            test.near(q.scale:reshape(-1)[r]:item(), w.scale, 1e-7, what .. ' scale')
            test.eq(q.zero_point:reshape(-1)[r]:item(), w.zero, what .. ' zero point')
            test.eq(codes[r], w.codes, what .. ' codes of granule ' .. r)
          end
          -- dequantized: s (q - z), and within half a step of x where x is inside the grid
          local d = q:dequantize():reshape(#want, -1):tolist()
          for r, w in ipairs(want) do
            for i, c in ipairs(w.codes) do test.near(d[r][i], w.scale * (c - w.zero), 1e-6, what .. ' dequantized') end
          end
        end
      end
    end
  end
  -- channel along another axis; a 3-D tensor per tensor
  local x = lm.randn(4, 6, 32)
  local q = quant.quantize(x, { granularity = 'channel', axis = 2 })
  test.eq(q.scale:numel(), 6)
  test.tensor_near(q:dequantize(), x, 0.05)
  test.eq(quant.quantize(x):dequantize():shape(), { 4, 6, 32 })
end)

test.case('quantize: bad input gives clear errors, never a silent NaN', function()
  test.raises(function() quant.quantize(lm.tensor({ 0 / 0, 1 })) end, 'holds 1 NaN or infinite value')
  test.raises(function() quant.quantize(lm.tensor({ math.huge, 1 })) end, 'finite values only')
  test.raises(function() quant.quantize(lm.randn(3, 30), { granularity = 'group' }) end,
    'group_size 32 does not divide the last dim (30)')
  test.raises(function() quant.quantize(lm.randn(3, 32), { scale = 0 }) end, 'a zero scale would divide by zero')
  test.raises(function() quant.quantize(lm.randn(3, 32), { bits = 1 }) end, 'bits must be an integer from 2 to 8')
  test.raises(function() quant.quantize(lm.randn(3, 32), { bits = 9 }) end, 'bits must be an integer from 2 to 8')
  test.raises(function() quant.quantize(lm.randn(3, 32), { granularity = 'row' }) end, "granularity must be")
  test.raises(function() quant.quantize(lm.randn(3, 32), { granularity = 'channel', axis = 3 }) end, 'axis 3 is out of range')
  test.raises(function() quant.quantize(lm.arange(0, 4)) end, 'must be a float tensor')
  -- an all-zero tensor: the epsilon scale (PyTorch's rule), zeros back exactly
  local z = quant.quantize(lm.zeros(2, 32), { symmetric = false })
  test.eq(z.scale:reshape(-1)[1]:item(), lm.tensor({ EPS }):item())
  test.eq(z:dequantize():abs():max():item(), 0)
  -- the block dtypes: NaN, length, mixing
  local nan32 = lm.ones(32)
  nan32[3] = 0 / 0
  test.raises(function() nan32:to('q4_0') end, 'element 3 (1-based, in C order) of shape [32] is nan')
  test.raises(function() lm.randn(2, 40):to('q4_0') end, 'not a multiple of it')
  local a, b = lm.randn(2, 32):to('q8_0'), lm.randn(2, 32):to('q4_0')
  test.raises(function() return a + b end, 'is a block type')
end)

test.case('fake_quantize: forward on the grid, gradient straight through inside the range, 0 where clipped', function()
  local x = lm.tensor({ -3, -1.2, -0.4, 0, 0.3, 0.9, 2.6 }, { requires_grad = true })
  local opts = { bits = 3, scale = 0.5 } -- symmetric 3 bits: codes -3..3, the grid -1.5 .. 1.5
  local y = quant.fake_quantize(x, opts)
  test.tensor_near(y, { -1.5, -1, -0.5, 0, 0.5, 1, 1.5 }, 1e-7)
  y:mul(lm.arange(1, 8):float()):sum():backward()
  test.tensor_near(x.grad, { 0, 2, 3, 4, 5, 6, 0 }, 0)
  -- a trained layer through prepare_qat: the loss goes down, the weights stay float
  lm.manual_seed(3)
  local nn = require 'nn'
  local m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
  quant.prepare_qat(m, { bits = 2, granularity = 'group', group_size = 8 })
  local X, T = lm.randn(64, 8), lm.randint(1, 3, { 64 })
  local opt = require('optim').Adam(m:parameters(), { lr = 0.01 })
  local first, last
  for i = 1, 60 do
    opt:zero_grad()
    local loss = F.cross_entropy(m(X), T)
    loss:backward()
    opt:step()
    if i == 1 then first = loss:item() end
    last = loss:item()
  end
  test.ok(last < first, string.format('QAT loss %g -> %g', first, last))
  test.eq(m[1].weight:dtype(), 'float32')
  -- the forward really runs on the 2-bit grid: 3 values per group of 8 (ternary, symmetric)
  local w = quant.fake_quantize(m[1].weight:detach(), { bits = 2, granularity = 'group', group_size = 8 })
  local row = w[1]:tolist()
  local distinct = {}
  for i = 1, 8 do distinct[row[i]] = true end
  local n = 0
  for _ in pairs(distinct) do n = n + 1 end
  test.ok(n <= 3, n .. ' values in a 2-bit group')
end)

test.case('observers: min-max, moving average and histogram percentile on known data', function()
  local o = quant.MinMaxObserver({ symmetric = false })
  o(lm.tensor({ -1, 0.5, 2 }))
  o(lm.tensor({ -0.5, 4 }))
  local lo, hi = o:range()
  test.eq({ lo:item(), hi:item() }, { -1, 4 })
  local s, z = o:qparams()
  test.near(s:item(), 5 / 255, 1e-7)
  test.eq(z:item(), rne(1 / (5 / 255)))
  local a = quant.MovingAverageMinMaxObserver({ averaging_constant = 0.5 })
  a(lm.tensor({ -2.0, 2.0 }))
  a(lm.tensor({ -4.0, 6.0 }))
  lo, hi = a:range()
  test.eq({ lo:item(), hi:item() }, { -3, 4 }) -- -2 + 0.5 (-4 + 2), 2 + 0.5 (6 - 2)
  -- the histogram: 1000 values 1..1000 / 1000 and one far outlier; the 99.8th percentile clips it
  local v = lm.arange(1, 1001):float() / 1000
  local h = quant.HistogramObserver({ percentile = 99.8, bins = 2048 })
  h(v)
  h(lm.tensor({ 50.0 }))
  lo, hi = h:range()
  test.ok(hi:item() < 1.2 and hi:item() > 0.9, 'the outlier is clipped: hi ' .. hi:item())
  test.eq(lo:item(), 0)
  local mm = quant.MinMaxObserver()
  mm(v); mm(lm.tensor({ 50.0 }))
  test.eq(select(2, mm:range()):item(), 50, 'min-max keeps it')
  test.raises(function() quant.MinMaxObserver():qparams() end, 'has seen no data yet')
  test.raises(function() quant.HistogramObserver({ granularity = 'channel' }) end, 'per tensor')
  -- per channel
  local c = quant.MinMaxObserver({ granularity = 'channel' })
  c(lm.tensor({ { 1, -2 }, { 3, 0.5 } }))
  lo, hi = c:range()
  test.tensor_near(hi:reshape(-1), { 1, 3 }, 0)
end)

test.case('int_mm is exact over the whole range; the int8 layers compute what the integer formula says', function()
  -- the vpmaddubsw saturation case: 255 * 127 + 255 * 127 overflows int16; the sum must be exact
  for _, shape in ipairs({ { 1, 2, 1 }, { 3, 64, 5 }, { 7, 33, 9 }, { 17, 300, 31 }, { 2, 0, 3 }, { 0, 4, 2 } }) do
    local M, K, N = shape[1], shape[2], shape[3]
    local a = lm.full({ M, K }, 255, { dtype = 'uint8' })
    local b = lm.full({ K, N }, 127, { dtype = 'int8' })
    test.eq(quant.int_mm(a, b):tolist(), lm.full({ M, N }, 255 * 127 * K, { dtype = 'int32' }):tolist(),
      'all at the extremes, ' .. table.concat(shape, 'x'))
    local ar = lm.randint(0, 256, { M, K }, { dtype = 'uint8' })
    local br = lm.randint(-128, 128, { K, N }, { dtype = 'int8' })
    test.eq(quant.int_mm(ar, br):long():tolist(), ar:long():matmul(br:long()):tolist(), 'random codes')
  end
  test.raises(function() quant.int_mm(lm.zeros(2, 3), lm.zeros(3, 2)) end, 'takes uint8 (M, K) times int8 (K, N)')
  test.raises(function() quant.int_mm(lm.zeros(2, 3, { dtype = 'uint8' }), lm.zeros(4, 2, { dtype = 'int8' })) end,
    'do not multiply')
  -- nn.quantized.Linear against its formula computed in loops
  lm.manual_seed(11)
  local nn = require 'nn'
  local lin = nn.Linear(5, 3)
  local x = lm.randn(4, 5)
  local q = nn.quantized.Linear.from_float(lin)
  local y = q(x):tolist()
  local xs = x:tolist()
  local lo, hi = 0, 0
  for _, r in ipairs(xs) do for _, v in ipairs(r) do lo = math.min(lo, v); hi = math.max(hi, v) end end
  local sx = math.max((hi - lo) / 255, EPS)
  local zx = math.max(0, math.min(255, math.floor(-lo / sx + 0.5)))
  local W, B = lin.weight:detach():tolist(), lin.bias:detach():tolist()
  local wq = ref_quantize(W, 8, true)
  for i = 1, 4 do
    for j = 1, 3 do
      local acc = 0
      for k = 1, 5 do
        local xc = math.max(0, math.min(255, rne(lm.tensor({ xs[i][k] }):item() / lm.tensor({ sx }):item()) + zx))
        acc = acc + (xc - zx) * wq[j].codes[k]
      end
      local want = acc * lm.tensor({ sx }):item() * wq[j].scale + B[j]
      test.near(y[i][j], want, 1e-5, 'quantized.Linear (' .. i .. ', ' .. j .. ')')
    end
  end
  -- close to the float layer; Conv2d close to the float convolution
  test.tensor_near(q(x), lin(x):detach(), 0.05)
  local conv = nn.Conv2d(3, 6, 3, { padding = 1, stride = 2 })
  local img = lm.randn(2, 3, 9, 8)
  local qc = nn.quantized.Conv2d.from_float(conv)
  local ref = conv(img):detach()
  test.eq(qc(img):shape(), ref:shape())
  test.ok((qc(img) - ref):abs():max():item() < 0.03 * ref:abs():max():item(), 'int8 conv close to float')
  test.raises(function() nn.quantized.Conv2d.from_float(nn.Conv2d(4, 4, 3, { groups = 2 })) end, 'groups must be 1')
  -- F.unfold is the im2col the int8 convolution multiplies
  local cols = F.unfold(img, 3, { padding = 1, stride = 2 })
  local w2 = conv.weight:detach():reshape(6, -1)
  local viamm = w2:matmul(cols):reshape(2, 6, 5, 4) + conv.bias:detach():reshape(1, 6, 1, 1)
  test.tensor_near(viamm, ref, 1e-4)
end)

test.case('post-training quantization: weights on the grid; calibrated static ranges; convert', function()
  lm.manual_seed(5)
  local nn = require 'nn'
  local m = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4))
  local w0 = m[1].weight:detach():clone()
  quant.quantize_weights(m, { bits = 3, granularity = 'channel' })
  local want = quant.quantize(w0, { bits = 3, granularity = 'channel' }):dequantize()
  test.tensor_near(m[1].weight:detach(), want, 0)
  local x = lm.randn(32, 16)
  local ref = m(x):detach()
  quant.prepare(m, { observer = 'minmax' })
  m(x)
  quant.convert(m)
  test.ok(tostring(m):find('quantized.Linear', 1, true), tostring(m))
  test.ok(tostring(m):find('static uint8 activations', 1, true))
  test.tensor_near(m(x), ref, 0.05)
  test.raises(function() quant.prepare(m, { observer = 'kmeans' }) end, "observer must be")
end)

test.case('SmoothQuant: the product is unchanged, the outlier channels move into the weights', function()
  lm.manual_seed(9)
  local nn = require 'nn'
  local m = nn.Sequential(nn.Linear(8, 6))
  local batches = {}
  for i = 1, 3 do
    local b = lm.randn(16, 8)
    b[{ {}, 2 }] = b[{ {}, 2 }] * 40 -- an outlier channel, as LLM activations have
    batches[i] = b
  end
  local before = m(batches[1]):detach()
  local stats = quant.smooth(m, batches, { alpha = 0.5 })
  local st = stats['1']
  test.ok(st, 'stats by the layer name')
  test.tensor_near(m(batches[1]), before, 1e-4)
  -- s_j = a_j^alpha / w_j^(1 - alpha), and the activation maxima divided by it
  local a, w, s = st.act_max_before:tolist(), st.weight_max_before:tolist(), st.s:tolist()
  for j = 1, 8 do
    test.near(s[j], math.sqrt(a[j]) / math.sqrt(w[j]), 1e-5, 's_' .. j)
    test.near(st.act_max_after[j]:item(), a[j] / s[j], 1e-5)
  end
  local function spread(t) -- the largest over the middle value
    local v = t:sort()
    return v[-1]:item() / v[(t:numel() + 1) // 2]:item()
  end
  test.ok(spread(st.act_max_after) < spread(st.act_max_before) / 3,
    string.format('outliers flattened: %g -> %g', spread(st.act_max_before), spread(st.act_max_after)))
  test.raises(function() quant.smooth(m, batches, { alpha = 2 }) end, 'alpha must be a number in [0, 1]')
  -- the smoothing stays through what comes after (a second smooth, calibration, int8, QAT, unprepare)
  quant.smooth(m, batches, { alpha = 0.5 })
  test.tensor_near(m(batches[1]), before, 1e-3, 'smoothed twice')
  quant.prepare_qat(m, { bits = 8, granularity = 'channel' })
  test.tensor_near(m(batches[1]), before, 0.05 * before:abs():max():item(), 'smoothed, then QAT at 8 bits')
  quant.unprepare(m)
  test.tensor_near(m(batches[1]), before, 1e-3, 'unprepare keeps the smoothing (the weights carry s)')
  quant.prepare(m)
  for _, b in ipairs(batches) do m(b) end
  quant.convert(m)
  local err = (m(batches[1]) - before):abs():max():item()
  test.ok(err < 0.02 * before:abs():max():item(), 'smoothed, calibrated, int8: error ' .. err)
end)

test.case('autocast and the loss scaler: 16-bit compute, float32 masters, skipped steps on overflow', function()
  local nn = require 'nn'
  lm.manual_seed(2)
  local lin = nn.Linear(6, 3)
  local x = lm.randn(4, 6)
  local y, loss = lm.autocast('bfloat16', function()
    local out = lin(x)
    return out, F.cross_entropy(out, lm.tensor({ 1, 2, 3, 1 }))
  end)
  test.eq(y:dtype(), 'bfloat16')
  test.eq(loss:dtype(), 'float32', 'the loss in float32, as PyTorch autocast')
  local want = F.linear(x:bfloat16(), lin.weight:bfloat16(), lin.bias:bfloat16())
  test.tensor_near(y:float(), want:float(), 0)
  loss:backward()
  test.eq(lin.weight.grad:dtype(), 'float32', 'float32 gradients for float32 masters')
  test.eq(F.linear == lm.nn.functional.linear, true)
  test.eq(lin(x):dtype(), 'float32', 'autocast ends with the function')
  test.raises(function() lm.autocast('int8', function() end) end, "dtype must be 'bfloat16' or 'float16'")
  -- the scaler: an infinite gradient skips the step and halves the scale; good steps grow it
  local p = lm.ones(2, { requires_grad = true })
  local opt = require('optim').SGD({ p }, { lr = 0.1 })
  local sc = quant.GradScaler({ init_scale = 1024, growth_interval = 2 })
  sc:scale((p * lm.tensor({ math.huge, 1 })):sum()):backward()
  test.eq(sc:step(opt), false)
  sc:update()
  test.eq(sc.scale_value, 512)
  test.eq(p:detach():tolist(), { 1, 1 }, 'no step taken')
  for _ = 1, 2 do
    p.grad = nil
    sc:scale(p:sum()):backward()
    test.eq(sc:step(opt), true)
    sc:update()
  end
  test.eq(sc.scale_value, 1024, 'grown after growth_interval good steps')
  test.near(p:detach()[1]:item(), 1 - 2 * 0.1, 1e-6, 'the unscaled gradient (1) stepped twice')
end)

test.case('16-bit and block tensors from Lua: printing, conversion, F.linear with q4_0 weights', function()
  local h = lm.tensor({ 1.5, 65519, 0.1 }):half()
  local s = tostring(h)
  test.ok(s:find('float16 tensor of shape [3]', 1, true), s)
  test.ok(s:find('6.5504e+04', 1, true), s)
  test.eq(lm.tensor({ 257, 259 }):bfloat16():tolist(), { 256, 260 })
  test.eq(lm.tensor({ 200, -129 }):char():tolist(), { -56, 127 })
  local w = lm.randn(6, 64)
  local q = w:to('q4_0')
  test.ok(tostring(q):find('q4_0 tensor of shape [6, 64] on cpu, shown dequantized', 1, true))
  test.raises(function() return q[1] end, 'q4_0 is a block type')
  local x = lm.randn(3, 64)
  -- ggml's scheme: x quantized to q8_0 (each value within half a step, max|x_block| / 254, of
  -- itself), so y is within sum over blocks of that step times sum |w| of the float product
  local xstep = x:abs():reshape(3, 2, 32):amax(3) / 254
  for _, wq in ipairs({ q, w:to('q8_0') }) do
    local wf = wq:float()
    local bound = xstep:matmul(wf:abs():reshape(6, 2, 32):sum(3):t()) * 1.01 + 1e-4
    local err = (F.linear(x, wq) - F.linear(x, wf)):abs()
    test.eq(err:gt(bound):sum():item(), 0, wq:dtype() .. ': within the bound of q8_0 activations')
    test.ok(err:max():item() > 0, 'the activations really were quantized')
  end
  -- a gradient reaches x through the dequantized weight
  local xg = lm.randn(3, 64, { requires_grad = true })
  F.linear(xg, q):sum():backward()
  test.tensor_near(xg.grad, q:float():sum(1):reshape(1, 64):expand(3, 64), 1e-5)
end)
