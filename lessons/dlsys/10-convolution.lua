--[[
dlsys Lecture 10: convolutional networks — the parameter count of a fully connected layer against
a 3x3 convolution on a 256x256 image, convolution with channels (and what a shift does to it),
padding, stride, groups and dilation, the output size (the student's formula, checked against
F.conv2d's shapes), dilation (the student's dilated filter, checked against F.conv2d's dilation),
groups (the student's grouped convolution by slicing, checked against F.conv2d's groups),
im2col (the student writes it; checked against the check's own loops), convolution as a matrix
multiply, differentiating convolution (the adjoints by hand, gradcheck, the graph scene with a
per-node gradcheck), and a small CNN on a Fashion-MNIST subset with live curves and its filters
in the model scene. Format: docs/lessons.md.
]]
local say = lesson.say

-- The checks' own im2col: loops over every output position and window entry, zeros outside.
local function im2col_ref(x, k, p, s)
  local N, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
  local X = x:double():contiguous():tolist()
  local rows = {}
  for n = 1, N do
    for i = 1, Ho do
      for j = 1, Wo do
        local row = {}
        for c = 1, C do
          for a = 1, k do
            for b = 1, k do
              local r, q = (i - 1) * s + a - p, (j - 1) * s + b - p
              row[#row + 1] = (r >= 1 and r <= H and q >= 1 and q <= W) and X[n][c][r][q] or 0
            end
          end
        end
        rows[#rows + 1] = row
      end
    end
  end
  return lm.tensor(rows, { dtype = 'float64' }), Ho, Wo
end

return {
  title = say('Convolutional networks', '卷积网络'),
  course = 'dlsys',
  lecture = say('CMU Deep Learning Systems, Lecture 10: convolutional networks', 'CMU 深度学习系统 第 10 讲：卷积网络'),
  summary = say([[Why images need convolutions (the parameter count), padding, stride and the output
size, im2col and convolution as a matrix multiply, how convolution is differentiated, and a small
CNN trained on Fashion-MNIST with its filters.]],
    [[图像为什么需要卷积（参数量），填充、步长与输出尺寸，im2col 与把卷积当作矩阵乘法，卷积如何
求导，以及在 Fashion-MNIST 上训练的一个小 CNN 和它的卷积核。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('The trouble with fully connected networks', '全连接网络的问题'),
      text = say([[
So far we have treated an input image as a vector. That becomes a practical problem as images
grow: a 256x256 RGB image is a ~200K-dimensional input, and mapping it to a 1000-dimensional
hidden vector takes 200M parameters, for one layer. Nor does a fully connected layer capture the
invariances we expect in images: shifting the image by one pixel gives a completely different
next layer.

Convolutions combine two ideas that suit images: activations between layers interact only
locally, with the hidden layer itself an image, and the same weights are shared at every spatial
position. For a 256x256 grayscale image mapped to a 256x256 single-channel hidden layer, that
goes from 4 billion parameters (fully connected) to 9 (a 3x3 convolution).]],
        [[
到目前为止，我们一直把输入图像当成一个向量。图像一大，这就成了实际问题：一张 256x256 的 RGB
图像是约 200K 维的输入，映射到 1000 维的隐藏向量就需要 200M 个参数，而这只是一层。全连接层也
抓不住我们期望图像具有的不变性：把图像平移一个像素，下一层就会变得完全不同。

卷积结合了两个很适合处理图像的想法：层与层之间的激活只在“局部”发生作用，并把隐藏层本身也看成
一幅图像；在所有空间位置共享同一组权重。对一张 256x256 的灰度图像，映射到 256x256 的单通道
隐藏层，参数从全连接网络的 40 亿个降到 3x3 卷积的 9 个。]]),
      code = [[
local rgb_in, hidden = 256 * 256 * 3, 1000
print(string.format('256x256 RGB image: %d inputs; fully connected to %d hidden units: %d weights',
  rgb_in, hidden, rgb_in * hidden))
local gray = 256 * 256
print(string.format('256x256 grayscale -> 256x256 hidden, fully connected: %d weights',
  gray * gray))
local conv = nn.Conv2d(1, 1, 3, {bias = false})
print(string.format('the same map as a 3x3 convolution: %d weights (nn.Conv2d(1, 1, 3))',
  conv.weight:numel()))
]],
      expect = '256x256 RGB image: 196608 inputs; fully connected to 1000 hidden units: 196608000 weights\n'
        .. '256x256 grayscale -> 256x256 hidden, fully connected: 4294967296 weights\n'
        .. 'the same map as a 3x3 convolution: 9 weights (nn.Conv2d(1, 1, 3))\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Convolution with channels', '多通道卷积'),
      text = say([[
In practice both the input and the hidden layers have several channels: x has C_in channels,
z has C_out, and the filter W is a (C_out, C_in, k, k) tensor, one k x k filter per pair of
channels:

  z[s] = sum over r of x[r] * W[s, r]     (*: slide the k x k window over x[r])

What deep learning calls convolution is a cross-correlation: the window is not flipped. Below,
the formula as plain loops against F.conv2d, then the invariance a fully connected layer lacks:
shift the input one pixel to the right and the output shifts with it (away from the border,
where the new column of zeros enters).]],
        [[
实际中，输入和隐藏层都有多个通道：x 有 C_in 个通道，z 有 C_out 个，卷积核 W 是一个
(C_out, C_in, k, k) 的张量，每对通道一个 k x k 的卷积核：

  z[s] = 对 r 求和 x[r] * W[s, r]     （*：让 k x k 的窗口在 x[r] 上滑动）

深度学习里所说的卷积其实是互相关：窗口不翻转。下面先用普通的循环写出这个公式，并与 F.conv2d
对比；再看全连接层所没有的不变性：把输入往右平移一个像素，输出也跟着平移（边界处除外，那里
移进来的是一列零）。]]),
      code = [[
-- x (C_in, H, W), w (C_out, C_in, k, k): no padding, stride 1
function conv_loops(x, w)
  local X, Wt = x:tolist(), w:tolist()
  local cin, h, wd, cout, k = x:size(1), x:size(2), x:size(3), w:size(1), w:size(3)
  local out = {}
  for s = 1, cout do
    out[s] = {}
    for i = 1, h - k + 1 do
      out[s][i] = {}
      for j = 1, wd - k + 1 do
        local acc = 0
        for r = 1, cin do
          for a = 1, k do
            for b = 1, k do acc = acc + X[r][i + a - 1][j + b - 1] * Wt[s][r][a][b] end
          end
        end
        out[s][i][j] = acc
      end
    end
  end
  return lm.tensor(out)
end
lm.manual_seed(10)
local x, w = lm.randn(3, 6, 7), lm.randn(4, 3, 3, 3)
local z = conv_loops(x, w)
print(string.format('z: %s, max |loops - F.conv2d| %.2g', table.concat(z:shape(), ' x '),
  (z - F.conv2d(x:unsqueeze(1), w)[1]):abs():max():item()))
local shifted = lm.cat({lm.zeros(3, 6, 1), x:narrow(3, 1, 6)}, 3)     -- one pixel to the right
local zs = F.conv2d(shifted:unsqueeze(1), w)[1]
print(string.format('shifted input: max |z_shifted columns 2-5 - z columns 1-4| %.2g',
  (zs:narrow(3, 2, 4) - z:narrow(3, 1, 4)):abs():max():item()))
]],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Padding, stride and the output size', '填充、步长与输出尺寸'),
      text = say([[
A k x k filter fits n - k + 1 times across n pixels, so each convolution shrinks the image.
Padding adds p zeros on every side (p = (k - 1)/2 for an odd k keeps the size: "same"); stride
s moves the window s pixels at a time, downsampling by s (pooling layers downsample too, with a
max or a mean over each window). Together, along each dimension:

  out = floor((n + 2p - k) / s) + 1

Two more elements of practical convolutions: grouped convolutions (groups = g) connect each
output channel to only C_in/g input channels, dividing the weights by g (depthwise when
g = C_in); dilation d spreads the window's entries d pixels apart, so a 3x3 filter spans 5x5
pixels at d = 2 and k in the formula becomes d(k - 1) + 1.

The picture is the same-size convolution of ECE408's kernels with a 3x3 mask: the hatched ghost
cells around the image are exactly the zero padding, never loaded. Step through it to see a
block's window reach past the border.]],
        [[
一个 k x k 的卷积核在 n 个像素上能放 n - k + 1 次，所以每做一次卷积图像就变小一点。填充（padding）
在每一边补上 p 个零（对奇数 k，p = (k - 1)/2 能保持尺寸不变，即 "same"）；步长（stride）s 让窗口
每次移动 s 个像素，相当于按 s 下采样（池化层也做下采样，对每个窗口取最大值或平均值）。合起来，
每个维度上：

  out = floor((n + 2p - k) / s) + 1

实用卷积还有两个要素：分组卷积（groups = g）让每个输出通道只连接 C_in/g 个输入通道，权重数
变为原来的 1/g（g = C_in 时就是逐通道卷积，depthwise）；空洞卷积（dilation d）让窗口里的元素
彼此相隔 d 个像素，于是 d = 2 时一个 3x3 卷积核覆盖 5x5 个像素，公式里的 k 要换成
d(k - 1) + 1。

画面是 ECE408 内核里保持尺寸的 3x3 卷积：图像周围画斜线的幽灵单元（ghost cells）正是补的零，它们
从不被加载。单步看看，一个块的窗口是怎样伸出边界的。]]),
      code = [[
-- {n, k, p, s}: an n x n image, a k x k filter, padding p, stride s
for _, c in ipairs({{28, 3, 0, 1}, {28, 3, 1, 1}, {28, 5, 2, 1}, {28, 3, 1, 2}, {7, 3, 0, 2},
                    {256, 3, 1, 1}}) do
  local n, k, p, s = table.unpack(c)
  local y = F.conv2d(lm.zeros(1, 1, n, n), lm.zeros(1, 1, k, k), nil, {padding = p, stride = s})
  print(string.format('n = %3d, k = %d, padding %d, stride %d: output %d x %d', n, k, p, s,
    y:size(3), y:size(4)))
end
local full = nn.Conv2d(16, 16, 3, {bias = false})
local depthwise = nn.Conv2d(16, 16, 3, {groups = 16, bias = false})
print(string.format('16 -> 16 channels, 3x3: %d weights; groups = 16 (depthwise): %d',
  full.weight:numel(), depthwise.weight:numel()))
local dilated = F.conv2d(lm.zeros(1, 1, 28, 28), lm.zeros(1, 1, 3, 3), nil, {dilation = 2})
print(string.format('n = 28, k = 3, dilation 2: output %d x %d (the window spans 5 pixels)',
  dilated:size(3), dilated:size(4)))
function conv_out(n, k, p, s)
  return n - k + 1     -- TODO: padding and stride
end
]],
      expect = 'n =  28, k = 3, padding 0, stride 1: output 26 x 26\nn =  28, k = 3, padding 1, stride 1: output 28 x 28\n'
        .. 'n =  28, k = 5, padding 2, stride 1: output 28 x 28\nn =  28, k = 3, padding 1, stride 2: output 14 x 14\n'
        .. 'n =   7, k = 3, padding 0, stride 2: output 3 x 3\nn = 256, k = 3, padding 1, stride 1: output 256 x 256\n'
        .. '16 -> 16 channels, 3x3: 2304 weights; groups = 16 (depthwise): 144\n'
        .. 'n = 28, k = 3, dilation 2: output 24 x 24 (the window spans 5 pixels)\n',
      scene = { 'conv', h = 10, w = 10, mask = 3, tile = 4, algo = 'tiled-input' },
      exercise = {
        prompt = say([[
Complete `conv_out(n, k, p, s)`: the output size along one dimension of n pixels for a k x k
filter with padding p and stride s.]],
          [[
把 `conv_out(n, k, p, s)` 补完整：n 个像素的一个维度上，k x k 卷积核、填充 p、步长 s 时的输出尺寸。]]),
        hints = {
          say('With padding the image has n + 2p pixels; the window fits (n + 2p - k) + 1 times at stride 1.',
            '加了填充，图像有 n + 2p 个像素；步长为 1 时窗口能放 (n + 2p - k) + 1 次。'),
          say('With stride s the window starts at 0, s, 2s, ... as long as it fits: floor((n + 2p - k) / s) + 1. Lua: //',
            '步长为 s 时，窗口从 0、s、2s……开始，只要放得下：floor((n + 2p - k) / s) + 1。Lua 里用 //'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'conv_out')
          if not ok then return false, fn end
          local cases = { { 28, 3, 1, 2 }, { 7, 3, 0, 2 }, { 5, 5, 0, 1 }, { 1, 1, 0, 1 }, { 10, 4, 1, 3 } }
          for _ = 1, 30 do
            local n, k, p, s = math.random(1, 40), ({ 1, 2, 3, 5, 7 })[math.random(5)], math.random(0, 3), math.random(1, 4)
            if k <= n + 2 * p and p < k then cases[#cases + 1] = { n, k, p, s } end
          end
          for _, c in ipairs(cases) do
            local n, k, p, s = table.unpack(c)
            local want = F.conv2d(lm.zeros(1, 1, n, 1), lm.zeros(1, 1, k, 1), nil, { padding = { p, 0 }, stride = { s, 1 } }):size(3)
            local rok, got = lesson.try(fn, n, k, p, s)
            if not rok then return false, got end
            local g = lesson.number(got)
            if g ~= want then
              return false, say(string.format('conv_out(%d, %d, %d, %d) is %s, but F.conv2d gives %d: %s', n, k, p, s, tostring(got), want,
                  (g and g ~= math.floor(g)) and 'a size is a whole number of window positions (floor, //)'
                    or 'count the window positions 0, s, 2s, ... that fit in n + 2p pixels'),
                string.format('conv_out(%d, %d, %d, %d) 是 %s，但 F.conv2d 得到 %d：%s', n, k, p, s, tostring(got), want,
                  (g and g ~= math.floor(g)) and '尺寸是窗口位置的个数，必须是整数（floor，//）'
                    or '数一数在 n + 2p 个像素里放得下的窗口位置 0、s、2s……'))
            end
          end
          return true, say(string.format('right on %d cases, each against the shape F.conv2d produces', #cases),
            string.format('在 %d 个例子上都对，每个都和 F.conv2d 得到的形状对比过', #cases))
        end,
        solution = [[
function conv_out(n, k, p, s)
  return (n + 2 * p - k) // s + 1
end
]],
        wrong = {
          [[
function conv_out(n, k, p, s)
  return (n + 2 * p - k) / s + 1
end
]],
          [[
function conv_out(n, k, p, s)
  return (n + 2 * p - k + 1) // s
end
]],
          [[
function conv_out(n, k, p, s)
  return (n + p - k) // s + 1
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Dilation: a wider window, the same weights', '空洞卷积：更宽的窗口，同样的权重'),
      text = say([[
Dilation d spreads a filter's k entries d pixels apart, so that a 3x3 filter sees a 5x5
neighbourhood at d = 2 with 9 weights: the receptive field grows without more parameters or a
lower resolution. A dilated filter is the same as an ordinary filter with d - 1 zeros put between
its entries, of size

  d(k - 1) + 1      (not k·d: there is no gap after the last entry)

and that size is the k of the output formula: out = floor((n + 2p - d(k - 1) - 1) / s) + 1.
Below, the sizes F.conv2d gives for d = 1, 2, 3; the picture is a 3x3 filter dilated by 2, the
zeros between its weights.]],
        [[
空洞（dilation）d 让卷积核的 k 个元素彼此相隔 d 个像素，于是 d = 2 时一个 3x3 卷积核用 9 个
权重看到 5x5 的邻域：感受野变大了，参数没有变多，分辨率也没有降低。空洞卷积核等价于在普通卷积核
的元素之间插入 d - 1 个零，尺寸是

  d(k - 1) + 1      （不是 k·d：最后一个元素后面没有空隙）

输出尺寸公式里的 k 就是这个尺寸：out = floor((n + 2p - d(k - 1) - 1) / s) + 1。下面是 F.conv2d
在 d = 1、2、3 时给出的尺寸；画面是一个膨胀 2 倍的 3x3 卷积核，权重之间都是零。]]),
      code = [[
for _, d in ipairs({1, 2, 3}) do
  local y = F.conv2d(lm.zeros(1, 1, 28, 28), lm.zeros(1, 1, 3, 3), nil, {dilation = d, padding = 1})
  print(string.format('n = 28, k = 3, padding 1, dilation %d: window spans %d pixels, output %d x %d', d,
    d * 2 + 1, y:size(3), y:size(4)))
end
dilated_w = lm.tensor({{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}})
-- dilate(w, d): w (C_out, C_in, kh, kw) -> the filter with d - 1 zeros between its entries
function dilate(w, d)
  return w      -- TODO
end
]],
      expect = 'n = 28, k = 3, padding 1, dilation 1: window spans 3 pixels, output 28 x 28\n'
        .. 'n = 28, k = 3, padding 1, dilation 2: window spans 5 pixels, output 26 x 26\n'
        .. 'n = 28, k = 3, padding 1, dilation 3: window spans 7 pixels, output 24 x 24\n',
      scene = function(env)
        local ok, t = pcall(env.dilate, lm.arange(1, 10):float():reshape(1, 1, 3, 3), 2)
        if ok and lm.is_tensor(t) and t:dim() == 4 then return t[1][1] end
        return env.dilated_w
      end,
      exercise = {
        prompt = say([[
Complete `dilate(w, d)`: w a (C_out, C_in, kh, kw) filter, d >= 1; return the filter with d - 1
zeros between neighbouring entries, (C_out, C_in, d(kh - 1) + 1, d(kw - 1) + 1), so that
F.conv2d(x, dilate(w, d)) equals F.conv2d(x, w, nil, {dilation = d}). Checked on random filters
(non-square, k = 1, d = 1 to 3) against F.conv2d's own dilation.]],
          [[
把 `dilate(w, d)` 补完整：w 是 (C_out, C_in, kh, kw) 的卷积核，d >= 1；返回在相邻元素之间插入
d - 1 个零之后的卷积核，形状为 (C_out, C_in, d(kh - 1) + 1, d(kw - 1) + 1)，使
F.conv2d(x, dilate(w, d)) 等于 F.conv2d(x, w, nil, {dilation = d})。检查时用随机卷积核（非正方形、
k = 1、d 从 1 到 3），与 F.conv2d 自己的 dilation 对比。]]),
        hints = {
          say('Entry (a, b) (1-based) of the filter goes to row (a - 1)·d + 1, column (b - 1)·d + 1 of the dilated one.',
            '卷积核的第 (a, b) 个元素（从 1 数）放到膨胀后卷积核的第 (a - 1)·d + 1 行、第 (b - 1)·d + 1 列。'),
          say('Build nested Lua tables of zeros from w:tolist(), place the entries, and return lm.tensor(...).',
            '从 w:tolist() 出发建一个全零的嵌套 Lua 表，把元素放进去，再 return lm.tensor(...)。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'dilate')
          if not ok then return false, fn end
          local cases = { { 2, 3, 3, 3, 2 }, { 1, 2, 2, 3, 3 }, { 3, 1, 3, 2, 2 }, { 2, 2, 1, 1, 3 }, { 1, 1, 3, 3, 1 }, { 2, 3, 2, 2, 2 } }
          for _, c in ipairs(cases) do
            local co, ci, kh, kw, d = table.unpack(c)
            local w = lm.randn(co, ci, kh, kw)
            local x = lm.randn(1, ci, 9, 8)
            local rok, got = lesson.try(fn, w:clone(), d)
            if not rok then return false, got end
            local what = string.format('a %d x %d filter (%d -> %d channels), d = %d', kh, kw, ci, co, d)
            local what_zh = string.format('%d x %d 的卷积核（%d -> %d 个通道），d = %d', kh, kw, ci, co, d)
            if not lm.is_tensor(got) then return false, say('dilate should return a tensor', 'dilate 应该返回一个张量') end
            local eh, ew = d * (kh - 1) + 1, d * (kw - 1) + 1
            local shape, want_shape = table.concat(got:shape(), ', '), table.concat({ co, ci, eh, ew }, ', ')
            if shape ~= want_shape then
              local why = (got:dim() == 4 and got:size(3) == kh * d and kh > 1)
                and say('that is k·d; the dilated filter ends at its last entry: d(k - 1) + 1', '那是 k·d；膨胀后的卷积核在最后一个元素处结束：d(k - 1) + 1')
                or say('d - 1 zeros between neighbouring entries: d(k - 1) + 1 along each side', '相邻元素之间 d - 1 个零：每一边 d(k - 1) + 1')
              return false, say(string.format('for %s your dilate has shape [%s], expected [%s]: %s', what, shape, want_shape, why.en),
                string.format('对 %s，你的 dilate 形状是 [%s]，应为 [%s]：%s', what_zh, shape, want_shape, why.zh))
            end
            local want = F.conv2d(x, w, nil, { dilation = d, padding = 1 })
            local cok, msg = lesson.compare(F.conv2d(x, got:float(), nil, { padding = 1 }), want, {
              what = say('F.conv2d with your dilate for ' .. what, '用你的 dilate 对 ' .. what_zh .. ' 做的 F.conv2d'),
              why = function()
                return say('entry (a, b) belongs at ((a - 1)·d + 1, (b - 1)·d + 1), zeros everywhere else',
                  '第 (a, b) 个元素应在 ((a - 1)·d + 1, (b - 1)·d + 1)，其余位置都是零')
              end })
            if not cok then return false, msg end
          end
          return true, say('right: on six filters your dilated filter gives what F.conv2d\'s dilation gives',
            '对：在六个卷积核上，你膨胀后的卷积核和 F.conv2d 的 dilation 结果一样')
        end,
        equivalent = {
          ['for ... = 1, (kw) + 1 at line 14'] = say('W[o][c][a][kw + 1] is nil, and storing nil past the end of a Lua table stores nothing: the same filter',
            'W[o][c][a][kw + 1] 是 nil，在 Lua 表末尾之后存 nil 什么也不存：得到的是同一个卷积核'),
        },
        solution = [[
function dilate(w, d)
  local co, ci, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
  local W = w:tolist()
  local out = {}
  for o = 1, co do
    out[o] = {}
    for c = 1, ci do
      local rows = {}
      for i = 1, d * (kh - 1) + 1 do
        rows[i] = {}
        for j = 1, d * (kw - 1) + 1 do rows[i][j] = 0 end
      end
      for a = 1, kh do
        for b = 1, kw do rows[(a - 1) * d + 1][(b - 1) * d + 1] = W[o][c][a][b] end
      end
      out[o][c] = rows
    end
  end
  return lm.tensor(out)
end
]],
        wrong = {
          [[
function dilate(w, d)                -- k·d: a gap after the last entry too
  local co, ci, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
  local W, out = w:tolist(), {}
  for o = 1, co do
    out[o] = {}
    for c = 1, ci do
      local rows = {}
      for i = 1, kh * d do
        rows[i] = {}
        for j = 1, kw * d do rows[i][j] = 0 end
      end
      for a = 1, kh do
        for b = 1, kw do rows[(a - 1) * d + 1][(b - 1) * d + 1] = W[o][c][a][b] end
      end
      out[o][c] = rows
    end
  end
  return lm.tensor(out)
end
]],
          [[
function dilate(w, d)                -- d zeros between entries: dilation d + 1
  local co, ci, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
  local W, out = w:tolist(), {}
  for o = 1, co do
    out[o] = {}
    for c = 1, ci do
      local rows = {}
      for i = 1, (d + 1) * (kh - 1) + 1 do
        rows[i] = {}
        for j = 1, (d + 1) * (kw - 1) + 1 do rows[i][j] = 0 end
      end
      for a = 1, kh do
        for b = 1, kw do rows[(a - 1) * (d + 1) + 1][(b - 1) * (d + 1) + 1] = W[o][c][a][b] end
      end
      out[o][c] = rows
    end
  end
  return lm.tensor(out)
end
]],
          [[
function dilate(w, d)                -- rows and columns swapped
  local co, ci, kh, kw = w:size(1), w:size(2), w:size(3), w:size(4)
  local W, out = w:tolist(), {}
  for o = 1, co do
    out[o] = {}
    for c = 1, ci do
      local rows = {}
      for i = 1, d * (kh - 1) + 1 do
        rows[i] = {}
        for j = 1, d * (kw - 1) + 1 do rows[i][j] = 0 end
      end
      for a = 1, math.min(kh, kw) do
        for b = 1, math.min(kh, kw) do rows[(a - 1) * d + 1][(b - 1) * d + 1] = W[o][c][b][a] end
      end
      out[o][c] = rows
    end
  end
  return lm.tensor(out)
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Groups: convolutions side by side', '分组卷积：并排的几个卷积'),
      text = say([[
With groups = g the C_in input channels and the C_out filters are cut into g groups of C_in/g
and C_out/g; group j's filters see only group j's input channels. That is g ordinary
convolutions side by side, their outputs concatenated along the channels, and the weight is
(C_out, C_in/g, k, k): g times fewer weights and multiplies. g = C_in is the depthwise
convolution of MobileNet-style networks (one filter per channel), usually followed by a 1x1
convolution that mixes the channels again.

The picture is which input channel each output channel sees (1) for 12 -> 12 channels in 3
groups: blocks on the diagonal, nothing across. The counts below are computed from the weights'
shapes.]],
        [[
groups = g 时，C_in 个输入通道和 C_out 个卷积核各被分成 g 组，每组 C_in/g 和 C_out/g 个；第 j 组的
卷积核只看第 j 组的输入通道。这就是并排的 g 个普通卷积，输出沿通道拼接起来，权重形状是
(C_out, C_in/g, k, k)：权重和乘法都少了 g 倍。g = C_in 就是 MobileNet 一类网络里的逐通道卷积
（depthwise，每个通道一个卷积核），后面通常再接一个 1x1 卷积把通道重新混合起来。

画面是 12 -> 12 个通道、分 3 组时每个输出通道能看到哪些输入通道（1）：对角线上的块，块与块之间
什么也没有。下面的数字是根据权重的形状算出来的。]]),
      code = [[
for _, g in ipairs({1, 2, 4, 16}) do
  local conv = nn.Conv2d(16, 32, 3, {groups = g, bias = false})
  print(string.format('16 -> 32 channels, 3x3, groups = %2d: weight %s, %d weights', g,
    table.concat(conv.weight:shape(), ' x '), conv.weight:numel()))
end
local rows = {}
for o = 0, 11 do
  rows[o + 1] = {}
  for c = 0, 11 do rows[o + 1][c + 1] = (o // 4 == c // 4) and 1 or 0 end
end
connections = lm.tensor(rows)          -- output channel o sees input channel c: 3 groups of 4
-- conv_groups(x, w, g, opts): groups = g by slicing and F.conv2d without groups
function conv_groups(x, w, g, opts)
  return F.conv2d(x, w, nil, opts)     -- TODO: one F.conv2d per group
end
]],
      expect = '16 -> 32 channels, 3x3, groups =  1: weight 32 x 16 x 3 x 3, 4608 weights\n'
        .. '16 -> 32 channels, 3x3, groups =  2: weight 32 x 8 x 3 x 3, 2304 weights\n'
        .. '16 -> 32 channels, 3x3, groups =  4: weight 32 x 4 x 3 x 3, 1152 weights\n'
        .. '16 -> 32 channels, 3x3, groups = 16: weight 32 x 1 x 3 x 3, 288 weights\n',
      scene = function(env) return env.connections end,
      exercise = {
        prompt = say([[
Complete `conv_groups(x, w, g, opts)` without F.conv2d's groups: x (N, C_in, H, W), w
(C_out, C_in/g, kh, kw); cut x's channels and w's filters into g groups (x:narrow(2, ...),
w:narrow(1, ...)), run F.conv2d(x_j, w_j, nil, opts) for each (opts holds padding, stride,
dilation) and concatenate along the channels (lm.cat(list, 2)). Checked against
F.conv2d(x, w, nil, {groups = g, ...}) on random shapes, odd sizes, C_in ~= C_out, dilation 2.]],
          [[
不用 F.conv2d 的 groups，把 `conv_groups(x, w, g, opts)` 补完整：x 是 (N, C_in, H, W)，w 是
(C_out, C_in/g, kh, kw)；把 x 的通道和 w 的卷积核都切成 g 组（x:narrow(2, ...)、w:narrow(1, ...)），
每组做一次 F.conv2d(x_j, w_j, nil, opts)（opts 里是 padding、stride、dilation），再沿通道拼接
（lm.cat(list, 2)）。检查时与 F.conv2d(x, w, nil, {groups = g, ...}) 对比，形状随机、尺寸为奇数、
C_in ~= C_out、dilation 为 2。]]),
        hints = {
          say('Group j (0-based) has input channels j·C_in/g + 1 .. (j + 1)·C_in/g and filters j·C_out/g + 1 .. (j + 1)·C_out/g.',
            '第 j 组（从 0 数）的输入通道是 j·C_in/g + 1 .. (j + 1)·C_in/g，卷积核是 j·C_out/g + 1 .. (j + 1)·C_out/g。'),
          say('C_in/g is w:size(2); C_out/g is w:size(1) // g.', 'C_in/g 就是 w:size(2)；C_out/g 是 w:size(1) // g。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'conv_groups')
          if not ok then return false, fn end
          local cases = {
            { { 2, 4, 7, 9 }, { 6, 2, 3, 3 }, 2, { padding = 1, dilation = 2 }, '(2, 4, 7, 9), 4 -> 6 channels, g = 2, padding 1, dilation 2', '(2, 4, 7, 9)，4 -> 6 个通道，g = 2，填充 1，空洞 2' },
            { { 1, 6, 8, 5 }, { 3, 2, 2, 3 }, 3, { stride = 2 }, '(1, 6, 8, 5), 6 -> 3 channels, g = 3, a 2 x 3 filter, stride 2', '(1, 6, 8, 5)，6 -> 3 个通道，g = 3，2 x 3 的卷积核，步长 2' },
            { { 1, 3, 7, 7 }, { 3, 1, 3, 3 }, 3, { padding = 2, dilation = 2 }, '(1, 3, 7, 7), depthwise (g = 3), padding 2, dilation 2', '(1, 3, 7, 7)，逐通道（g = 3），填充 2，空洞 2' },
            { { 1, 8, 5, 6 }, { 12, 2, 3, 3 }, 4, { padding = 1 }, '(1, 8, 5, 6), 8 -> 12 channels, g = 4, padding 1', '(1, 8, 5, 6)，8 -> 12 个通道，g = 4，填充 1' },
            { { 2, 2, 5, 5 }, { 4, 2, 3, 3 }, 1, { padding = 1 }, '(2, 2, 5, 5), g = 1', '(2, 2, 5, 5)，g = 1' },
          }
          for _, c in ipairs(cases) do
            local x, w, g, opts, what, what_zh = lm.randn(table.unpack(c[1])), lm.randn(table.unpack(c[2])), c[3], c[4], c[5], c[6]
            local all = { groups = g }
            for k, v in pairs(opts) do all[k] = v end
            local want = F.conv2d(x, w, nil, all)
            local given = {}
            for k, v in pairs(opts) do given[k] = v end
            local rok, got = lesson.try(fn, x:clone(), w:clone(), g, given)
            if not rok then return false, got end
            if not lm.is_tensor(got) then return false, say('conv_groups should return a tensor', 'conv_groups 应该返回一个张量') end
            local shape, want_shape = table.concat(got:shape(), ', '), table.concat(want:shape(), ', ')
            if shape ~= want_shape then
              return false, say(string.format('on %s your output has shape [%s], expected [%s]: g groups of C_out/g channels each, and opts passed to every F.conv2d',
                  what, shape, want_shape),
                string.format('在 %s 上你的输出形状是 [%s]，应为 [%s]：g 组、每组 C_out/g 个通道，并且每次 F.conv2d 都要传入 opts',
                  what_zh, shape, want_shape))
            end
            local per = want:size(2) // g
            local cok, msg = lesson.compare(got, want, {
              what = say('your output on ' .. what, '你在 ' .. what_zh .. ' 上的输出'),
              why = function(i)
                local ch = ((i - 1) // (want:size(3) * want:size(4))) % want:size(2)
                local j = ch // per
                return say(string.format('that is output channel %d (0-based), of group %d: its filters are w[%d .. %d] and it sees only input channels %d .. %d',
                    ch, j, j * per, (j + 1) * per - 1, j * w:size(2), (j + 1) * w:size(2) - 1),
                  string.format('那是第 %d 个输出通道（从 0 数），属于第 %d 组：它的卷积核是 w[%d .. %d]，只看输入通道 %d .. %d',
                    ch, j, j * per, (j + 1) * per - 1, j * w:size(2), (j + 1) * w:size(2) - 1))
              end })
            if not cok then return false, msg end
          end
          return true, say('right: five grouped convolutions, each equal to F.conv2d\'s groups',
            '对：五个分组卷积，每个都和 F.conv2d 的 groups 结果相同')
        end,
        solution = [[
function conv_groups(x, w, g, opts)
  local cin, cout = w:size(2), w:size(1) // g
  local outs = {}
  for j = 0, g - 1 do
    outs[#outs + 1] = F.conv2d(x:narrow(2, j * cin + 1, cin), w:narrow(1, j * cout + 1, cout), nil, opts)
  end
  return lm.cat(outs, 2)
end
]],
        wrong = {
          [[
function conv_groups(x, w, g, opts)     -- input channels dealt round-robin: channel c to group c % g
  local cin, cout = w:size(2), w:size(1) // g
  local outs = {}
  for j = 0, g - 1 do
    local chans = lm.arange(j + 1, x:size(2) + 1, g)
    outs[#outs + 1] = F.conv2d(x:index_select(2, chans), w:narrow(1, j * cout + 1, cout), nil, opts)
  end
  return lm.cat(outs, 2)
end
]],
          [[
function conv_groups(x, w, g, opts)     -- filters sliced with the input's group size
  local cin = w:size(2)
  local outs = {}
  for j = 0, g - 1 do
    outs[#outs + 1] = F.conv2d(x:narrow(2, j * cin + 1, cin), w:narrow(1, j * cin + 1, w:size(1) // g), nil, opts)
  end
  return lm.cat(outs, 2)
end
]],
          [[
function conv_groups(x, w, g, opts)     -- opts left out: no padding, stride or dilation
  local cin, cout = w:size(2), w:size(1) // g
  local outs = {}
  for j = 0, g - 1 do
    outs[#outs + 1] = F.conv2d(x:narrow(2, j * cin + 1, cin), w:narrow(1, j * cout + 1, cout))
  end
  return lm.cat(outs, 2)
end
]],
          [[
function conv_groups(x, w, g, opts)     -- every group added into one output
  local cin, cout = w:size(2), w:size(1) // g
  local sum = nil
  for j = 0, g - 1 do
    local y = F.conv2d(x:narrow(2, j * cin + 1, cin), w, nil, opts)
    sum = sum and sum + y or y
  end
  return sum
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('im2col: every window as a row', 'im2col：把每个窗口变成一行'),
      text = say([[
To run convolutions fast, turn them into the operation hardware does best, a matrix multiply.
im2col ("image to columns") lays out every k x k x C_in window of the (padded) image as one row
of a matrix: one row per output position (n, i, j), one column per window entry (c, a, b), in
that order. The filters reshaped to (C_out, C_in k k) then multiply it.

The lecture builds the matrix from a strided view: each (a, b) entry of every window is a view
of the image that starts at (a, b) and steps s pixels at a time; no data is copied until the
final reshape, which copies k^2 times the image. The picture shows such a view for a = b = 2 on
a 5x5 image: the cells of the storage it reaches. Lumen's Lua has no as_strided, but narrow and
index_select make the same views. The starting point below handles p = 0 and s = 1 only.]],
        [[
要让卷积跑得快，就把它变成硬件最擅长的运算：矩阵乘法。im2col（"image to columns"）把（填充后的）
图像里每个 k x k x C_in 的窗口排成矩阵的一行：每个输出位置 (n, i, j) 一行，窗口里的每个元素
(c, a, b) 一列，按这个顺序。再把卷积核变形成 (C_out, C_in k k)，和它相乘。

课上用跨步视图来构造这个矩阵：所有窗口的第 (a, b) 个元素，合起来就是图像的一个视图，它从 (a, b)
开始，每次跨 s 个像素；直到最后的 reshape 之前都不复制数据，而那次 reshape 复制的数据量是图像的
k^2 倍。画面展示了 5x5 图像上 a = b = 2 时的这个视图：它能访问到的那些存储单元。Lumen 的 Lua
里没有 as_strided，不过 narrow 和 index_select 能得到同样的视图。下面的起点只处理 p = 0、s = 1
的情况。]]),
      code = [[
-- x (N, C, H, W) -> (N * Ho * Wo, C * k * k): rows (n, i, j), columns (c, a, b)
function im2col(x, k, p, s)
  local N, C, H, W = table.unpack(x:shape())
  local Ho, Wo = H - k + 1, W - k + 1                   -- TODO: padding p and stride s
  local cols = {}
  for a = 1, k do
    for b = 1, k do
      -- entry (a, b) of every window: a (N, C, Ho, Wo) view
      cols[#cols + 1] = x:narrow(3, a, Ho):narrow(4, b, Wo)
    end
  end
  return lm.stack(cols, 3):permute(1, 4, 5, 2, 3):reshape(N * Ho * Wo, C * k * k)
end
image = lm.arange(0, 25):float():reshape(1, 1, 5, 5)
window_view = image:narrow(3, 2, 3):narrow(4, 2, 3)[1][1]    -- entry (2, 2) of the 3x3 windows
print('entry (2, 2) of each window: strides ' .. table.concat(window_view:stride(), ', ') ..
  ', contiguous: ' .. tostring(window_view:is_contiguous()))
print('im2col(image, 3, 0, 1): ' .. table.concat(im2col(image, 3, 0, 1):shape(), ' x '))
]],
      scene = function(env) return env.window_view end,
      exercise = {
        prompt = say([[
Complete `im2col(x, k, p, s)` for any padding p and stride s: x of shape (N, C, H, W), the result
(N * Ho * Wo, C * k * k) with rows in the order (n, i, j) and columns (c, a, b).]],
          [[
把 `im2col(x, k, p, s)` 补完整，支持任意填充 p 和步长 s：x 的形状是 (N, C, H, W)，结果是
(N * Ho * Wo, C * k * k)，行按 (n, i, j) 排列，列按 (c, a, b) 排列。]]),
        hints = {
          say('Pad first: F.pad(x, {p, p, p, p}) adds p zeros on each side of the last two dims.',
            '先填充：F.pad(x, {p, p, p, p}) 在最后两维的每一边各补 p 个零。'),
          say('With stride s, entry (a, b) of the windows is at rows a, a + s, ..., a + s (Ho - 1): '
            .. 'x:index_select(3, lm.arange(a, a + s * (Ho - 1) + 1, s)), the same along dim 4.',
            '步长为 s 时，各窗口的第 (a, b) 个元素在第 a、a + s、……、a + s (Ho - 1) 行：'
            .. 'x:index_select(3, lm.arange(a, a + s * (Ho - 1) + 1, s))，第 4 维同理。'),
          say('Ho = (H + 2p - k) // s + 1, as in step 3.', 'Ho = (H + 2p - k) // s + 1，和第 3 步一样。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'im2col')
          if not ok then return false, fn end
          local cases = {
            { lm.randn(1, 1, 5, 5), 3, 0, 1, '(1, 1, 5, 5), k = 3' },
            { lm.randn(2, 3, 6, 7), 3, 1, 1, '(2, 3, 6, 7), k = 3, padding 1' },
            { lm.randn(1, 2, 7, 6), 3, 1, 2, '(1, 2, 7, 6), k = 3, padding 1, stride 2' },
            { lm.randn(2, 1, 5, 5), 5, 2, 1, '(2, 1, 5, 5), k = 5, padding 2' },
            { lm.randn(1, 3, 8, 8), 2, 0, 3, '(1, 3, 8, 8), k = 2, stride 3' },
            { lm.randn(1, 2, 4, 4), 1, 0, 1, '(1, 2, 4, 4), k = 1' },
            { lm.randn(1, 2, 6, 5):transpose(3, 4), 3, 1, 2, 'a transposed view (1, 2, 5, 6), k = 3, padding 1, stride 2' },
          }
          for _, c in ipairs(cases) do
            local x, k, p, s, what = c[1], c[2], c[3], c[4], c[5]
            local want, Ho, Wo = im2col_ref(x, k, p, s)
            local rok, got = lesson.try(fn, x, k, p, s)
            if not rok then return false, got end
            if not lm.is_tensor(got) then return false, say('im2col should return a tensor', 'im2col 应该返回一个张量') end
            local shape = table.concat(got:shape(), ', ')
            local wshape = table.concat(want:shape(), ', ')
            if shape ~= wshape then
              return false, say(string.format('on %s your im2col has shape [%s], expected [%s]: %d x %d output positions per image, C k k = %d columns',
                  what, shape, wshape, Ho, Wo, want:size(2)),
                string.format('在 %s 上你的 im2col 形状是 [%s]，应为 [%s]：每张图 %d x %d 个输出位置，C k k = %d 列',
                  what, shape, wshape, Ho, Wo, want:size(2)))
            end
            local cok, msg = lesson.compare(got:double(), want, { what = say('your im2col on ' .. what, '你的 im2col 在 ' .. what .. ' 上的结果'),
              why = function(i)
                local row, col = (i - 1) // want:size(2) + 1, (i - 1) % want:size(2) + 1
                return say(string.format('that is row %d (an output position), column %d: columns go (c, a, b), channel slowest; padding is p zeros on every side, windows start s apart',
                    row, col),
                  string.format('那是第 %d 行（一个输出位置）、第 %d 列：列按 (c, a, b) 排列，通道变化最慢；填充是每边 p 个零，窗口之间相隔 s',
                    row, col))
              end })
            if not cok then return false, msg end
          end
          return true, say('right: every window of every case, including stride 2 on a transposed view',
            '对：每个例子的每个窗口都对，包括转置视图上步长为 2 的情况')
        end,
        equivalent = { -- a mutant of the solution that is a right answer
          ['>= instead of > at line 4'] = say('F.pad with a padding of 0 returns the same values: padding nothing is no padding',
            'F.pad 填充 0 个元素，返回的值不变：不填充就是没有填充'),
        },
        solution = [[
function im2col(x, k, p, s)
  local N, C, H, W = table.unpack(x:shape())
  local Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
  local xp = p > 0 and F.pad(x, {p, p, p, p}) or x
  local cols = {}
  for a = 1, k do
    for b = 1, k do
      local rows = lm.arange(a, a + s * (Ho - 1) + 1, s)
      local columns = lm.arange(b, b + s * (Wo - 1) + 1, s)
      cols[#cols + 1] = xp:index_select(3, rows):index_select(4, columns)
    end
  end
  return lm.stack(cols, 3):permute(1, 4, 5, 2, 3):reshape(N * Ho * Wo, C * k * k)
end
]],
        wrong = {
          [[
function im2col(x, k, p, s)
  local N, C, H, W = table.unpack(x:shape())
  local Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
  local xp = p > 0 and F.pad(x, {p, p, p, p}) or x
  local cols = {}
  for a = 1, k do
    for b = 1, k do
      cols[#cols + 1] = xp:narrow(3, a, Ho):narrow(4, b, Wo)
    end
  end
  return lm.stack(cols, 3):permute(1, 4, 5, 2, 3):reshape(N * Ho * Wo, C * k * k)
end
]],
          [[
function im2col(x, k, p, s)
  local N, C, H, W = table.unpack(x:shape())
  local Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
  local xp = p > 0 and F.pad(x, {p, p, p, p}) or x
  local cols = {}
  for a = 1, k do
    for b = 1, k do
      local rows = lm.arange(a, a + s * (Ho - 1) + 1, s)
      local columns = lm.arange(b, b + s * (Wo - 1) + 1, s)
      cols[#cols + 1] = xp:index_select(3, rows):index_select(4, columns)
    end
  end
  return lm.stack(cols, 2):permute(1, 4, 5, 2, 3):reshape(N * Ho * Wo, C * k * k)
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Convolution as a matrix multiply', '把卷积当作矩阵乘法'),
      text = say([[
With the windows as rows, a convolution is one matrix product:

  Z = im2col(x) W^T
  (W reshaped to (C_out, C_in k k), Z to (N, Ho, Wo, C_out))

This step has its own `patches(x, k, p, s)` (what the exercise asked for), so it runs whether or
not you solved it. The product agrees with F.conv2d; Lumen's F.conv2d itself runs im2col and a
matrix multiply (algo = 'im2col', or Winograd for 3x3 kernels with enough channels). The times
are CPU, measured on this machine, on a batch of 16 3-channel 32x32 images and 16 filters.]],
        [[
把窗口排成行之后，卷积就是一次矩阵乘法：

  Z = im2col(x) W^T
  （W 变形为 (C_out, C_in k k)，Z 变形为 (N, Ho, Wo, C_out)）

这一步有它自己的 `patches(x, k, p, s)`（就是练习要你写的那个），所以不管你有没有做出练习，它都能
运行。乘出来的结果与 F.conv2d 一致；Lumen 的 F.conv2d 本身就是先做 im2col 再做矩阵乘法
（algo = 'im2col'，或者对通道够多的 3x3 卷积核用 Winograd）。时间是在这台机器的 CPU 上实测的，
输入是一批 16 张 3 通道的 32x32 图像，16 个卷积核。]]),
      code = [[
function patches(x, k, p, s)
  local N, C, H, W = table.unpack(x:shape())
  local Ho, Wo = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
  local xp = p > 0 and F.pad(x, {p, p, p, p}) or x
  local cols = {}
  for a = 1, k do
    for b = 1, k do
      cols[#cols + 1] = xp:index_select(3, lm.arange(a, a + s * (Ho - 1) + 1, s))
                          :index_select(4, lm.arange(b, b + s * (Wo - 1) + 1, s))
    end
  end
  return lm.stack(cols, 3):permute(1, 4, 5, 2, 3):reshape(N * Ho * Wo, C * k * k), Ho, Wo
end
function conv_matmul(x, w, p, s)
  local cols, Ho, Wo = patches(x, w:size(3), p, s)
  local z = cols:matmul(w:reshape(w:size(1), -1):t())             -- (N Ho Wo, C_out)
  return z:reshape(x:size(1), Ho, Wo, w:size(1)):permute(1, 4, 2, 3)
end
lm.manual_seed(12)
local x, w = lm.randn(16, 3, 32, 32), lm.randn(16, 3, 3, 3)
local function ms(f)                        -- the mean wall time of 5 calls, in ms
  local t0 = lm.sys.clock()
  for _ = 1, 5 do f() end
  return (lm.sys.clock() - t0) / 5 * 1e3
end
local ours = conv_matmul(x, w, 1, 1)
print(string.format('max |patches @ W^T - F.conv2d| %.2g',
  (ours - F.conv2d(x, w, nil, {padding = 1})):abs():max():item()))
local t_ours = ms(function() conv_matmul(x, w, 1, 1) end)
local t_lumen = ms(function() F.conv2d(x, w, nil, {padding = 1, algo = 'im2col'}) end)
print(string.format('patches + matmul (this step, Lua): %.2f ms; F.conv2d (Lumen, im2col): %.2f ms'
  .. ' (CPU, measured)', t_ours, t_lumen))
print(string.format('the im2col matrix holds %d numbers, the image %d: k^2 = 9 times as many',
  patches(x, 3, 1, 1):numel(), x:numel()))
]],
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Differentiating convolution', '卷积的求导'),
      text = say([[
To put convolution into an automatic differentiation library we need its two adjoint products,
of the incoming gradient G with d conv / d x and with d conv / d W. Write the convolution as a
matrix product with x: z = What x, What a banded matrix holding the filter's weights. Then
G What^T is again a convolution: of G with the flipped filters, input and output channels
swapped, padding k - 1 - p (a "transposed convolution"). Written as a product with W instead,
z = Xhat w with Xhat the im2col matrix, so the gradient for W is Xhat^T G: the im2col matrix
once more, which is why libraries keep it from the forward pass.

Below, both adjoints by hand against autograd, then lm.autograd.gradcheck in float64. The
picture is this convolution's autograd graph with each node's backward rule checked against
float64 central differences as you step (Lumen's conv2d is an Im2col node and a Matmul node).]],
        [[
要把卷积放进自动微分库，需要它的两个伴随乘积：传进来的梯度 G 分别乘上 d conv / d x 和
d conv / d W。把卷积写成对 x 的矩阵乘法：z = What x，What 是一个装着卷积核权重的带状矩阵。那么
G What^T 仍然是一个卷积：G 与翻转后的卷积核做卷积，输入、输出通道互换，填充为 k - 1 - p
（即“转置卷积”）。如果改写成对 W 的乘积，z = Xhat w，Xhat 就是 im2col 矩阵，于是 W 的梯度是
Xhat^T G：又用到了 im2col 矩阵，这就是为什么库会把它从前向计算中保留下来。

下面用手算的两个伴随与自动微分对比，再用 float64 做 lm.autograd.gradcheck。画面是这个卷积的自动
微分计算图：单步时，每个节点的反向规则都会和 float64 中心差分比较（Lumen 的 conv2d 由一个 Im2col
节点和一个 Matmul 节点组成）。]]),
      code = [[
lm.manual_seed(11)
local x = lm.randn(2, 3, 6, 6, {requires_grad = true})
local w = lm.randn(4, 3, 3, 3, {requires_grad = true})
local g = lm.randn(2, 4, 6, 6)                        -- the gradient arriving from above
F.conv2d(x, w, nil, {padding = 1}):mul(g):sum():backward()
-- d/dx: g convolved with the flipped filters, channels swapped, padding k - 1 - p = 1
local dx = F.conv2d(g, w:detach():flip({3, 4}):transpose(1, 2), nil, {padding = 1})
-- d/dW: the im2col matrix, transposed, times g
local g_rows = g:permute(1, 3, 4, 2):reshape(-1, 4)                 -- (N Ho Wo, C_out), as Z
local dw = g_rows:t():matmul(patches(x:detach(), 3, 1, 1)):reshape(4, 3, 3, 3)
print(string.format('max |dx by hand - x.grad| %.2g, max |dW by hand - w.grad| %.2g',
  (dx - x.grad):abs():max():item(), (dw - w.grad):abs():max():item()))
conv_f = function(a, b) return F.conv2d(a, b, nil, {stride = 2, padding = 1}):relu():sum() end
conv_x = lm.randn(1, 2, 5, 5, {dtype = 'float64', requires_grad = true})
conv_w = lm.randn(3, 2, 3, 3, {dtype = 'float64', requires_grad = true})
print(select(2, lm.autograd.gradcheck(conv_f, {conv_x, conv_w})))
]],
      scene = function(env)
        return env.conv_f(env.conv_x, env.conv_w), { gradcheck = env.conv_f, inputs = { env.conv_x, env.conv_w } }
      end,
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('A small CNN on Fashion-MNIST', '在 Fashion-MNIST 上训练一个小 CNN'),
      text = say([[
A convolutional network stacks convolutions, nonlinearities and pooling, then a fully connected
head: here conv 3x3 (8 filters), ReLU, max-pool 2, conv 3x3 (16), ReLU, max-pool 2, linear to
10 classes. It has 9,098 parameters, fewer than one 784 -> 12 fully connected layer would need,
and sees 28x28 images as images. It trains for two epochs on 2,000 images (80 steps, seconds);
the picture is the live loss and the test accuracy on 500 images after each epoch. The full
run on all 60,000 images is `lumen examples/cnn_fashion.lua --epochs 3 --viz`.]],
        [[
卷积网络把卷积、非线性和池化叠起来，最后接一个全连接的输出层：这里是 3x3 卷积（8 个卷积核）、
ReLU、2 倍最大池化、3x3 卷积（16 个）、ReLU、2 倍最大池化，再线性映射到 10 个类别。它只有 9,098 个
参数，比一个 784 -> 12 的全连接层还少，而且把 28x28 的图像当作图像来看。它在 2,000 张图像上训练
两个 epoch（80 步，几秒钟）；画面是实时的损失曲线，以及每个 epoch 之后在 500 张测试图像上的
准确率。在全部 60,000 张图像上的完整版本是 `lumen examples/cnn_fashion.lua --epochs 3 --viz`。]]),
      code = [[
function make_cnn()
  return nn.Sequential(nn.Conv2d(1, 8, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
end
lm.manual_seed(5)
cnn = make_cnn()
local n_params = 0
for _, p in ipairs(cnn:parameters()) do n_params = n_params + p:numel() end
print(n_params .. ' parameters')
local train = data.FashionMNIST{split = 'train', limit = 2000}
local test = data.FashionMNIST{split = 'test', limit = 500}
local loader = data.DataLoader(train, {batch_size = 50, shuffle = true})
local opt = optim.SGD(cnn:parameters(), {lr = 0.05, momentum = 0.9})
viz.clear()
local step = 0
for epoch = 1, 2 do
  cnn:train()
  for xb, yb in loader:iter() do
    local loss = F.cross_entropy(cnn(xb), yb)
    opt:zero_grad()
    loss:backward()
    opt:step()
    step = step + 1
    viz.plot('train/loss', step, loss)
  end
  cnn:eval()
  local acc = lm.no_grad(function()
    return cnn(test.tensors[1]):argmax(2):eq(test.tensors[2]):float():mean():item()
  end)
  viz.plot('test/accuracy', step, acc)
  print(string.format('epoch %d, %d steps: test accuracy %.1f%% on %d images (CPU)', epoch, step,
    100 * acc, #test))
end
]],
      scene = 'curves',
    },
    -- 10 -----------------------------------------------------------------------------------
    {
      title = say('What the filters look like', '卷积核长什么样'),
      text = say([[
The model scene draws the network's layers with their parameter counts and each Conv2d's
filters as small images (blue negative, orange positive, one colour scale per layer): the 8
first-layer 3x3 filters, and the 16 x 8 of the second. The code watches the model
(viz.watch) through one batch of test images, so each layer's activations and gradients appear
as histograms beside it, and prints how far each layer's weights moved from their
initialization: more than their own size, in 80 steps. Some first-layer filters already show
an orientation (a light row or column beside a dark one); train longer (the full example, with
--viz=model) and they sharpen into edge detectors.]],
        [[
模型画面画出网络的各层和它们的参数量，并把每个 Conv2d 的卷积核画成小图（蓝色为负，橙色为正，
每层一个色标）：第一层的 8 个 3x3 卷积核，以及第二层的 16 x 8 个。代码用 viz.watch 观察模型处理
一批测试图像的过程，于是每层的激活值和梯度都以直方图的形式出现在旁边；代码还打印出每层权重离
初始化走了多远：80 步里走过的距离比权重本身还大。有些第一层的卷积核已经显出方向（一行或一列
亮的挨着一行或一列暗的）；训练得更久（完整的例子，加 --viz=model），它们会变得更清晰，成为边缘
检测器。]]),
      code = [[
lm.manual_seed(5)
local init = make_cnn()                           -- the same seed: the weights cnn started from
for _, i in ipairs({1, 4, 8}) do
  local w, w0 = cnn[i].weight:detach(), init[i].weight:detach()
  local moved = ((w - w0):norm() / w0:norm()):item()
  print(string.format('layer %d (%s): weight %s, moved %.0f%% from its initialization', i,
    getmetatable(cnn[i]).__name, table.concat(w:shape(), ' x '), 100 * moved))
end
local watch = viz.watch(cnn, {always = true})      -- the model scene, with live histograms
local test = data.FashionMNIST{split = 'test', limit = 100}
F.cross_entropy(cnn(test.tensors[1]), test.tensors[2]):backward()
watch:gradients()
watch:close()
cnn:zero_grad()
]],
    },
  },
}
