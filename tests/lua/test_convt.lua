-- F.conv_transpose2d and nn.ConvTranspose2d: values and gradients against PyTorch 1.13 (numbers
-- printed by tests/nn/torch_convt.py into tests/nn/torch_convt_values.lua, float64), against a
-- direct loop over the definition (every input pixel scatters its weighted kernel into the output)
-- on random shapes and layouts in float32 and float64, the adjoint identity with conv2d, gradcheck,
-- the module's initialisation and output_size, and bad input.
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/lua/'
local CASES = dofile(here .. '../nn/torch_convt_values.lua')
local D = { dtype = 'float64' }

local function wave(shape, a, b, s)
  local n = 1
  for _, k in ipairs(shape) do n = n * k end
  return ((lm.arange(0, n, D) * a + b):sin() * s):view(shape)
end

test.case('conv_transpose2d against PyTorch: values and the three gradients', function()
  for i, c in ipairs(CASES) do
    local what = string.format('case %d (x %s, w %s, stride %s, padding %s, output_padding %s, dilation %s, groups %d)', i,
      table.concat(c.x, 'x'), table.concat(c.w, 'x'), table.concat(c.stride, ','), table.concat(c.padding, ','),
      table.concat(c.output_padding, ','), table.concat(c.dilation, ','), c.groups)
    local x = wave(c.x, 0.37, 0.1, 1.5):requires_grad_()
    local w = wave(c.w, 0.53, 0.3, 0.8):requires_grad_()
    local b = c.bias and wave({ c.w[2] * c.groups }, 0.71, 0.5, 0.5):requires_grad_() or nil
    local y = F.conv_transpose2d(x, w, b, { stride = c.stride, padding = c.padding, output_padding = c.output_padding,
      dilation = c.dilation, groups = c.groups })
    test.eq(y:shape(), c.out_shape, what .. ': shape')
    test.tensor_near(y:reshape(-1), lm.tensor(c.out, D), 1e-12, what .. ': values')
    ;(y * wave(c.out_shape, 0.41, 0.2, 1)):sum():backward()
    test.tensor_near(x.grad:reshape(-1), lm.tensor(c.gx, D), 1e-12, what .. ': d/dx')
    test.tensor_near(w.grad:reshape(-1), lm.tensor(c.gw, D), 1e-12, what .. ': d/dw')
    if b then test.tensor_near(b.grad, lm.tensor(c.gb, D), 1e-12, what .. ': d/db') end
  end
end)

-- the definition: out[n, g*Kg + k, i*s - p + a*d, j*s - p + e*d] += x[n, g*Cg + c, i, j] * w[g*Cg + c, k, a, e]
local function naive(x, w, b, o)
  local N, C, H, W = table.unpack(x:shape())
  local _, Kg, R, S = table.unpack(w:shape())
  local g = o.groups
  local K, Cg = Kg * g, C // g
  local OH = (H - 1) * o.stride[1] - 2 * o.padding[1] + o.dilation[1] * (R - 1) + o.output_padding[1] + 1
  local OW = (W - 1) * o.stride[2] - 2 * o.padding[2] + o.dilation[2] * (S - 1) + o.output_padding[2] + 1
  local xs, ws = x:double():contiguous():view(-1):tolist(), w:double():contiguous():view(-1):tolist()
  local out = {}
  for q = 1, N * K * OH * OW do out[q] = 0 end
  for n = 0, N - 1 do
    for ci = 0, C - 1 do
      local grp = ci // Cg
      for i = 0, H - 1 do
        for j = 0, W - 1 do
          local xv = xs[((n * C + ci) * H + i) * W + j + 1]
          for k = 0, Kg - 1 do
            for a = 0, R - 1 do
              local oi = i * o.stride[1] - o.padding[1] + a * o.dilation[1]
              if oi >= 0 and oi < OH then
                for e = 0, S - 1 do
                  local oj = j * o.stride[2] - o.padding[2] + e * o.dilation[2]
                  if oj >= 0 and oj < OW then
                    local ko = grp * Kg + k
                    local q = ((n * K + ko) * OH + oi) * OW + oj + 1
                    out[q] = out[q] + xv * ws[((ci * Kg + k) * R + a) * S + e + 1]
                  end
                end
              end
            end
          end
        end
      end
    end
  end
  local t = lm.tensor(out, D):view(N, K, OH, OW)
  if b then t = t + b:double():view(1, K, 1, 1) end
  return t
end

test.case('conv_transpose2d against the definition: random shapes, layouts, float32 and float64', function()
  local seed = 7
  local function r(lo, hi) seed = (seed * 1103515245 + 12345) % 2147483648 return lo + seed % (hi - lo + 1) end
  for t = 1, 30 do
    local g = ({ 1, 1, 2, 3 })[r(1, 4)]
    local Cg, Kg = r(1, 3), r(1, 3)
    local o = { stride = { r(1, 3), r(1, 3) }, padding = { r(0, 1), r(0, 1) }, dilation = { r(1, 2), r(1, 2) }, groups = g }
    local R, S = r(1, 4), r(1, 3)
    o.output_padding = { r(0, math.max(o.stride[1], o.dilation[1]) - 1), r(0, math.max(o.stride[2], o.dilation[2]) - 1) }
    local N, H, W = r(1, 2), r(1, 5), r(1, 4)
    local dt = t % 2 == 0 and 'float32' or 'float64'
    local base = (H - 1) * o.stride[1] - 2 * o.padding[1] + o.dilation[1] * (R - 1) + 1
    if base >= 1 and (W - 1) * o.stride[2] - 2 * o.padding[2] + o.dilation[2] * (S - 1) + 1 >= 1 then
      local x = lm.randn(N, g * Cg, W, H, { dtype = dt }):transpose(3, 4) -- a non-contiguous view
      local w = lm.randn(g * Cg, Kg, R, S, { dtype = dt })
      local b = t % 3 == 0 and lm.randn(g * Kg, { dtype = dt }) or nil
      local y = F.conv_transpose2d(x, w, b, o)
      local what = string.format('trial %d (%s): x %s, w %s, stride %s, padding %s, output_padding %s, dilation %s, groups %d',
        t, dt, table.concat(x:shape(), 'x'), table.concat(w:shape(), 'x'), table.concat(o.stride, ','),
        table.concat(o.padding, ','), table.concat(o.output_padding, ','), table.concat(o.dilation, ','), g)
      test.tensor_near(y:double(), naive(x, w, b, o), dt == 'float32' and 1e-4 or 1e-12, what)
    end
  end
end)

test.case('the adjoint of conv2d: <conv2d(y, w), x> = <y, conv_transpose2d(x, w)>', function()
  lm.manual_seed(3)
  for _, c in ipairs({ { 2, 3, 4, 7, 6, 3, 3, 2, 1, 1, 1 }, { 1, 4, 6, 5, 5, 2, 3, 1, 0, 2, 2 }, { 3, 2, 2, 9, 8, 3, 1, 3, 2, 1, 1 } }) do
    local N, Cin, Cout, H, W, R, S, st, pad, dil, g = table.unpack(c)
    local o = { stride = { st, st }, padding = { pad, pad }, dilation = { dil, dil }, groups = g }
    local wt = lm.randn(Cout, Cin // g, R, S, D) -- conv2d's weight (out, in/g): conv_transpose2d's (in, out/g) of conv2d's output
    local y = lm.randn(N, Cin, H, W, D)
    local cy = F.conv2d(y, wt, nil, o)
    local x = lm.randn(cy:shape(), D)
    local tx = F.conv_transpose2d(x, wt, nil, { stride = o.stride, padding = o.padding, dilation = o.dilation, groups = g,
      output_padding = { H - ((cy:size(3) - 1) * st - 2 * pad + dil * (R - 1) + 1), W - ((cy:size(4) - 1) * st - 2 * pad + dil * (S - 1) + 1) } })
    test.eq(tx:shape(), y:shape())
    test.near((cy * x):sum():item(), (y * tx):sum():item(), 1e-9, 'adjoint ' .. table.concat(c, ','))
  end
end)

test.case('gradcheck (float64)', function()
  local x = lm.randn(1, 2, 3, 2, D):requires_grad_()
  local w = lm.randn(2, 3, 3, 2, D):requires_grad_()
  local b = lm.randn(3, D):requires_grad_()
  local ok, rep = lm.autograd.gradcheck(function(a, c, e)
    return F.conv_transpose2d(a, c, e, { stride = { 2, 1 }, padding = { 1, 0 }, output_padding = { 1, 0 } })
  end, { x, w, b })
  test.ok(ok, tostring(rep))
end)

test.case('nn.ConvTranspose2d: PyTorch shapes and initialisation, output_size, repr', function()
  lm.manual_seed(1)
  local m = nn.ConvTranspose2d(8, 6, 4, { stride = 2, padding = 1, groups = 2 })
  test.eq(m.weight:shape(), { 8, 3, 4, 4 })
  test.eq(m.bias:shape(), { 6 })
  local bound = 1 / math.sqrt(3 * 16) -- fan_in = out/groups * kh * kw, as PyTorch computes it
  test.ok(m.weight:abs():max():item() <= bound + 1e-7 and m.weight:abs():max():item() > bound * 0.8, 'weight within U(-b, b)')
  test.ok(m.bias:abs():max():item() <= bound + 1e-7)
  local x = lm.randn(2, 8, 5, 5)
  test.eq(m(x):shape(), { 2, 6, 10, 10 }, 'DCGAN\'s doubling: (5 - 1) 2 - 2 + 3 + 1')
  test.eq(m(x, { 11, 11 }):shape(), { 2, 6, 11, 11 }, 'output_size picks output_padding 1')
  test.raises(function() m(x, { 12, 12 }) end, 'output_size {12, 12} is not reachable from input [2, 8, 5, 5]: sizes 10..11 along dim 3')
  test.eq(tostring(m):match('ConvTranspose2d%b()'), 'ConvTranspose2d(8, 6, kernel_size=4, stride=2, padding=1, groups=2)')
  local loss = m(x):pow(2):mean()
  loss:backward()
  test.eq(m.weight.grad:shape(), { 8, 3, 4, 4 })
  test.raises(function() nn.ConvTranspose2d(3, 4, 3, { groups = 2 }) end, 'in_channels 3 and out_channels 4 must both be divisible by groups 2')
  test.raises(function() nn.ConvTranspose2d(2, 2, 3, { stride = 2, output_padding = 2 }) end,
    'output_padding 2 must be smaller than the stride 2 or the dilation 1')
  test.raises(function() m(lm.randn(2, 7, 5, 5)) end, 'does not fit in_channels=8')
end)

test.case('bad input is named', function()
  local x, w = lm.randn(1, 2, 3, 3), lm.randn(2, 3, 3, 3)
  test.raises(function() F.conv_transpose2d(x, lm.randn(3, 3, 3, 3)) end,
    'conv_transpose2d: weight [3, 3, 3, 3] expects 3 input channels, the input [1, 2, 3, 3] has 2')
  test.raises(function() F.conv_transpose2d(x, w, lm.randn(4)) end, 'conv_transpose2d: bias of shape [4] for 3 output channels')
  test.raises(function() F.conv_transpose2d(x, w, nil, { stride = 0 }) end, 'option stride must be at least 1')
  test.raises(function() F.conv_transpose2d(x, w, nil, { output_padding = 1 }) end,
    'conv_transpose2d: output_padding 1 must be smaller than the stride 1 or the dilation 1')
  test.raises(function() F.conv_transpose2d(x, w, nil, { padding = 3 }) end, 'give an output of')
  test.raises(function() F.conv_transpose2d(x:long(), w) end, 'conv_transpose2d')
  test.raises(function() F.conv_transpose2d(x, w:double()) end, 'must have one dtype')
  test.raises(function() F.conv_transpose2d(lm.randn(2, 3, 3), w) end, 'expects input (N, C, H, W)')
end)
