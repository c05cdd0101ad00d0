-- F.conv2d's algo option: 'im2col', 'winograd' (Winograd F(2x2, 3x3): 3x3, stride 1) and 'auto',
-- the same numbers (within float32 rounding) and the same gradients, and clear errors for a
-- layer Winograd cannot compute or an unknown name. The algorithms themselves are tested in C
-- (tests/nn/test_conv_winograd.c) on every SIMD path.
local test = require 'lumen.test'

test.case('conv2d algo: winograd and im2col agree, forward and backward', function()
  lm.manual_seed(5)
  local x = lm.randn(2, 9, 7, 6)
  local w = lm.randn(5, 9, 3, 3)
  local b = lm.randn(5)
  local yi = F.conv2d(x, w, b, {padding = 1, algo = 'im2col'})
  local yw = F.conv2d(x, w, b, {padding = 1, algo = 'winograd'})
  test.eq(yw:shape(), {2, 5, 7, 6})
  test.tensor_near(yw, yi, 1e-4)
  local ya = F.conv2d(x, w, b, {padding = 1})
  test.tensor_near(ya, yi, 1e-4, 'auto')
  local xg, wg = x:clone():requires_grad_(), w:clone():requires_grad_()
  local yg = F.conv2d(xg, wg, nil, {padding = 1, algo = 'winograd'})
  test.eq(yg.grad_fn:name(), 'ConvolutionWinogradBackward')
  yg:sum():backward()
  local xi, wi = x:clone():requires_grad_(), w:clone():requires_grad_()
  F.conv2d(xi, wi, nil, {padding = 1, algo = 'im2col'}):sum():backward()
  test.tensor_near(xg.grad, xi.grad, 1e-4)
  test.tensor_near(wg.grad, wi.grad, 1e-3)
end)

test.case('conv2d algo: errors', function()
  local x, w = lm.randn(1, 2, 5, 5), lm.randn(3, 2, 3, 3)
  test.raises(function() F.conv2d(x, w, nil, {algo = 'fft'}) end, "option algo must be 'auto', 'im2col' or 'winograd'")
  test.raises(function() F.conv2d(x, w, nil, {algo = 'winograd', stride = 2}) end, "algo 'winograd' computes 3x3 kernels with stride 1")
  test.raises(function() F.conv2d(x, lm.randn(3, 2, 5, 5), nil, {algo = 'winograd'}) end, 'kernel 5x5')
  test.eq(F.conv2d(x, w, nil, {algo = 'im2col', stride = 2}):shape(), {1, 3, 2, 2})
end)
