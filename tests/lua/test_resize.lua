-- F.adaptive_avg_pool2d, F.interpolate (nearest, bilinear, align_corners), nn.AdaptiveAvgPool2d,
-- nn.Upsample: values and input gradients against PyTorch (tests/nn/torch_resize.py prints them
-- into tests/nn/torch_resize_values.lua, float64), gradcheck, float32 and 3-D inputs, the errors;
-- lm.vision.box_iou and nms against reference values computed in plain Python by the same script,
-- random boxes against a loop here, degenerate and empty boxes, bad boxes named.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local REF = dofile(here .. '../nn/torch_resize_values.lua')

local function wave(shape, a, b, s)
  local n = 1
  for _, k in ipairs(shape) do n = n * k end
  return ((lm.arange(0, n, { dtype = 'float64' }) * a + b):sin() * s):view(shape)
end

local function run(c, x)
  if c.fn == 'adaptive' then return F.adaptive_avg_pool2d(x, c.output_size) end
  return F.interpolate(x, { size = c.size, scale_factor = c.scale_factor, mode = c.mode, align_corners = c.align_corners })
end

local function same(t, ref, tol, what)
  local a = t:contiguous():view(-1):tolist()
  test.eq(#a, #ref, what .. ': element count')
  for i = 1, #ref do test.near(a[i], ref[i], tol, string.format('%s[%d]', what, i)) end
end

test.case('values and input gradients equal PyTorch 1.13 (' .. #REF.resize .. ' cases)', function()
  for _, c in ipairs(REF.resize) do
    local x = wave(c.shape, 0.37, 0.1, 1.5):requires_grad_()
    local y = run(c, x)
    test.eq(y:shape(), c.out_shape, c.name .. ': shape')
    same(y, c.out, 1e-12, c.name)
    local w = wave(c.out_shape, 0.41, 0.2, 1);
    (y * w):sum():backward()
    same(x.grad, c.grad, 1e-12, c.name .. ' grad')
  end
end)

test.case('gradcheck in float64; float32 and a 3-D input; the modules', function()
  lm.manual_seed(3)
  for _, f in ipairs({
    function(x) return F.adaptive_avg_pool2d(x, { 2, 3 }) end,
    function(x) return F.interpolate(x, { size = { 5, 4 }, mode = 'bilinear' }) end,
    function(x) return F.interpolate(x, { scale_factor = 1.5, mode = 'bilinear', align_corners = true }) end,
    function(x) return F.interpolate(x, { scale_factor = 2 }) end,
  }) do
    local ok, why = lm.autograd.gradcheck(f, { lm.randn(2, 2, 3, 5, { dtype = 'float64' }):requires_grad_() })
    test.ok(ok, tostring(why))
  end
  local x = lm.randn(2, 3, 9, 7)
  local y = F.adaptive_avg_pool2d(x, 4)
  test.eq(y:dtype(), 'float32')
  test.ok((y:double() - F.adaptive_avg_pool2d(x:double(), 4)):abs():max():item() < 1e-6)
  -- a window by hand: output (2, 3) of 4 x 4 over 9 x 7 rows [4, 7) (floor(2*9/4) .. ceil(3*9/4)) cols [5, 7)
  test.near(y[1][2][3][4]:item(), x[1][2]:narrow(1, 5, 3):narrow(2, 6, 2):mean():item(), 1e-6, 'one window')
  local x3 = lm.randn(3, 4, 4)
  test.eq(F.interpolate(x3, { scale_factor = 2 }):shape(), { 3, 8, 8 })
  test.ok((F.interpolate(x3, { scale_factor = 2 })[2][3][5] - x3[2][2][3]):abs():item() < 1e-7, 'nearest copies')
  -- global average pooling = mean over H, W
  test.ok((nn.AdaptiveAvgPool2d(1)(x):view(2, 3) - x:mean({ 3, 4 })):abs():max():item() < 1e-6)
  local up = nn.Upsample { scale_factor = 2, mode = 'bilinear' }
  test.eq(up(x):shape(), { 2, 3, 18, 14 })
  test.eq(tostring(up):match('^[^\n]*'), 'Upsample(scale_factor=2, mode=bilinear)')
  test.eq(#nn.AdaptiveAvgPool2d({ 2, 3 }):parameters(), 0)
  test.eq(F.adaptive_avg_pool2d(x:half(), 2):dtype(), 'float16')
end)

test.case('bad input is named', function()
  local x = lm.randn(1, 2, 4, 4)
  test.raises(function() F.adaptive_avg_pool2d(x, 0) end, 'F.adaptive_avg_pool2d: output_size must be at least 1, got 0')
  test.raises(function() F.adaptive_avg_pool2d(lm.randn(4, 4), 2) end, 'must be [N, C, H, W] or [C, H, W]')
  test.raises(function() F.adaptive_avg_pool2d(lm.ones(1, 1, 2, 2, { dtype = 'int64' }), 1) end, 'must be a float tensor, got int64')
  test.raises(function() F.adaptive_avg_pool2d(lm.randn(1, 1, 0, 3), 1) end, 'has an empty spatial dim')
  test.raises(function() F.interpolate(x, { size = 3, scale_factor = 2 }) end, 'give exactly one of size and scale_factor')
  test.raises(function() F.interpolate(x, {}) end, 'give exactly one of size and scale_factor')
  test.raises(function() F.interpolate(x, { size = 3, mode = 'bicubic' }) end, "mode 'bicubic' is not one of nearest, bilinear")
  test.raises(function() F.interpolate(x, { size = 3, align_corners = true }) end, "align_corners only goes with mode 'bilinear'")
  test.raises(function() F.interpolate(x, { scale_factor = -1 }) end, 'scale_factor must be a positive number')
  test.raises(function() F.interpolate(x, { scale_factor = 0.1 }) end, 'gives an empty output from 4x4')
  test.raises(function() F.interpolate(x, { size = 2.5 }) end, 'size must hold integers, got 2.5')
  test.raises(function() F.interpolate(x, { sizes = 2 }) end, "unknown option 'sizes'")
  test.raises(function() nn.Upsample { size = 0 } end, 'size must be at least 1')
  test.raises(function() F.adaptive_avg_pool2d(x, 4294967296) end, 'F.adaptive_avg_pool2d: output size 4294967296 from 4 is too large')
  test.raises(function() F.interpolate(x, { scale_factor = 1e9 }) end, 'F.interpolate: output size 4000000000 from 4 is too large')
  test.raises(function() nn.AdaptiveAvgPool2d(2)(lm.randn(3)) end, 'nn.AdaptiveAvgPool2d: F.adaptive_avg_pool2d: input of shape [3]')
end)

-- ---------------------------------------------------------------- boxes

test.case('lm.vision.box_iou equals the reference, and a loop on random boxes', function()
  for k, c in ipairs(REF.iou) do
    local got = lm.vision.box_iou(lm.tensor(c.a, { dtype = 'float64' }), lm.tensor(c.b, { dtype = 'float64' }))
    test.eq(got:shape(), { #c.a, #c.b })
    for i = 1, #c.a do for j = 1, #c.b do test.near(got[i][j]:item(), c.iou[i][j], 1e-12, 'iou case ' .. k) end end
  end
  lm.manual_seed(5)
  local a = lm.rand(9, 2) * 10
  local A = lm.cat({ a, a + lm.rand(9, 2) * 5 }, 2)
  local b = lm.rand(6, 2) * 10
  local B = lm.cat({ b, b + lm.rand(6, 2) * 5 }, 2)
  local got, at, bt = lm.vision.box_iou(A, B), A:double():tolist(), B:double():tolist()
  for i = 1, 9 do
    for j = 1, 6 do
      local p, q = at[i], bt[j]
      local iw = math.max(0, math.min(p[3], q[3]) - math.max(p[1], q[1]))
      local ih = math.max(0, math.min(p[4], q[4]) - math.max(p[2], q[2]))
      local inter = iw * ih
      local want = inter / ((p[3] - p[1]) * (p[4] - p[2]) + (q[3] - q[1]) * (q[4] - q[2]) - inter)
      test.near(got[i][j]:item(), want, 1e-5, 'random iou')
    end
  end
  test.ok((lm.vision.box_area(A) - (A:select(2, 3) - A:select(2, 1)) * (A:select(2, 4) - A:select(2, 2))):abs():max():item() == 0)
  -- differentiable: gradcheck through the overlaps (boxes that overlap strictly)
  local boxes = lm.tensor({ { 0, 0, 2, 2 }, { 1, 0.5, 3, 2.5 } }, { dtype = 'float64' }):requires_grad_()
  local other = lm.tensor({ { 0.5, 0.2, 1.7, 2.9 } }, { dtype = 'float64' })
  local ok, why = lm.autograd.gradcheck(function(bx) return lm.vision.box_iou(bx, other) end, { boxes })
  test.ok(ok, tostring(why))
end)

test.case('box_iou: degenerate, empty and bad boxes', function()
  local pt = lm.tensor({ { 1, 1, 1, 1 } })
  test.eq(lm.vision.box_iou(pt, pt):item(), 0, 'two boxes of no area: IoU 0 (not NaN)')
  local line = lm.tensor({ { 0, 0, 4, 0 } })
  test.eq(lm.vision.box_iou(line, lm.tensor({ { 0, 0, 2, 2 } })):item(), 0)
  test.eq(lm.vision.box_iou(lm.zeros(0, 4), lm.tensor({ { 0, 0, 1, 1 } })):shape(), { 0, 1 })
  test.eq(lm.vision.nms(lm.zeros(0, 4), lm.zeros(0), 0.5):shape(), { 0 })
  test.raises(function() lm.vision.box_iou(lm.tensor({ { 0, 0, 1, 1 }, { 3, 0, 2, 1 } }), pt) end,
    'lm.vision.box_iou: boxes1 box 2 is (3, 0, 2, 1): corners must be x1 <= x2 and y1 <= y2')
  test.raises(function() lm.vision.box_iou(pt, lm.tensor({ { 0, 5, 1, 4 } })) end, 'boxes2 box 1 is (0, 5, 1, 4)')
  test.raises(function() lm.vision.box_iou(lm.tensor({ 0, 0, 1, 1 }), pt) end, 'boxes1 of shape [4] must be (N, 4)')
  test.eq(lm.vision.box_iou(lm.tensor({ { 0, 0, 2, 2 } }, { dtype = 'int64' }), lm.tensor({ { 1, 0, 3, 2 } })):dtype(), 'float32',
    'integer boxes are taken as float32')
  test.raises(function() lm.vision.box_iou(lm.tensor({ { 0, 0, 1, 1 } }, { dtype = 'float64' }), lm.tensor({ { 0, 0, 1, 1.5 } })) end,
    'boxes1 is float64 and boxes2 float32')
  test.raises(function() lm.vision.box_iou(lm.tensor({ { 0, 0, 0 / 0, 1 } }), pt) end, 'and not NaN')
  test.raises(function() lm.vision.nms(pt, lm.ones(2), 0.5) end, 'lm.vision.nms: scores must be a 1-D tensor of 1 scores')
  test.raises(function() lm.vision.nms(pt, lm.ones(1)) end, 'iou_threshold must be a number')
end)

test.case('lm.vision.nms keeps what the greedy reference keeps', function()
  for k, c in ipairs(REF.nms) do
    local keep = lm.vision.nms(lm.tensor(c.boxes, { dtype = 'float64' }), lm.tensor(c.scores, { dtype = 'float64' }), c.threshold)
    test.eq(keep:dtype(), 'int64')
    test.eq(keep:tolist(), c.keep, 'nms case ' .. k)
  end
  -- equal scores: the lower index first; a threshold of 1 keeps all, of -1 only the best
  local b = lm.tensor({ { 0, 0, 2, 2 }, { 0, 0, 2, 2 }, { 5, 5, 6, 6 } })
  test.eq(lm.vision.nms(b, lm.tensor({ 0.5, 0.5, 0.9 }), 0.5):tolist(), { 3, 1 })
  test.eq(lm.vision.nms(b, lm.tensor({ 0.5, 0.5, 0.9 }), 1):tolist(), { 3, 1, 2 })
  test.eq(lm.vision.nms(b, lm.tensor({ 0.5, 0.6, 0.9 }), -1):tolist(), { 3 })
end)
