--[[
AI Computing Systems, chapter 3: convolutional networks as the chapter builds them — why a fully
connected layer does not scale to images (its 32x32x3 example), the convolution layer on a 6x6x3
input with one and two filters (by hand against F.conv2d), padding, stride and the output size
(the PMPP convolution kernel on the emulator, whose ghost cells are the padding), pooling on the
chapter's 4x4 example, the layer pattern conv+relu / pool / FC+relu / FC with the student's shape
calculator (checked against real layers on random stacks), a VGG-style block stack trained on a
Fashion-MNIST subset (the model scene), ResNet's residual block with BatchNorm written by the
student (checked: shape, the identity path, the gradient through it, the block's output), and the
degradation problem: plain and residual networks of the same depth, curves side by side.
Format: docs/lessons.md.
]]
local say = lesson.say

local function shape_text(t)
  if type(t) ~= 'table' then return tostring(t) end
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  return '{' .. table.concat(parts, ', ') .. '}'
end

-- A random stack of layer specs on a random input shape {c, h, w}, kept valid (every size >= 1).
local function random_stack()
  local c, h, w = math.random(1, 4), math.random(5, 33), math.random(5, 33)
  local specs, hh, ww = {}, h, w
  for _ = 1, math.random(2, 5) do
    if math.random() < 0.6 then
      local k = ({ 1, 3, 5 })[math.random(1, 3)]
      local p, s = math.random(0, (k - 1) // 2 + 1), math.random(1, 3)
      if hh + 2 * p >= k and ww + 2 * p >= k then
        specs[#specs + 1] = { 'conv', math.random(1, 6), k, p, s }
        hh, ww = (hh + 2 * p - k) // s + 1, (ww + 2 * p - k) // s + 1
        specs[#specs + 1] = { 'relu' }
      end
    else
      local k = math.random(2, 3)
      local s = math.random(1, k)
      if hh >= k and ww >= k then
        specs[#specs + 1] = { 'pool', k, s }
        hh, ww = (hh - k) // s + 1, (ww - k) // s + 1
      end
    end
  end
  if math.random() < 0.6 then specs[#specs + 1] = { 'flatten' } end
  if specs[#specs][1] == 'flatten' and math.random() < 0.5 then specs[#specs + 1] = { 'fc', math.random(1, 12) } end
  return specs, { c, h, w }
end

-- The shape after a stack of specs (see step 5) from the functional ops themselves: the check's
-- reference, independent of the lesson's build() and of the student's formula.
local function actual_shape(specs, shape)
  local x = lm.zeros(1, table.unpack(shape))
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then
      x = F.conv2d(x, lm.zeros(s[2], x:size(2), s[3], s[3]), nil, { padding = s[4], stride = s[5] })
    elseif s[1] == 'relu' then x = F.relu(x)
    elseif s[1] == 'pool' then x = F.max_pool2d(x, s[2], { stride = s[3] })
    elseif s[1] == 'flatten' then x = x:flatten(2)
    elseif s[1] == 'fc' then x = F.linear(x, lm.zeros(s[2], x:size(2)))
    end
  end
  local t = x:shape()
  table.remove(t, 1)
  return t
end

-- The class name of a module ('Conv2d', 'BatchNorm2d', ...).
local function kind(m) return rawget(getmetatable(m) or {}, '__name') end

-- The leaf modules of m of a given class, in registration order.
local function leaves_of(m, name)
  local out = {}
  for _, sub in ipairs(m:modules()) do
    if kind(sub) == name then out[#out + 1] = sub end
  end
  return out
end

local function max_diff(a, b) return (a - b):abs():max():item() end

-- Checks the student's ResBlock class on random inputs; returns ok, message.
local function check_resblock(cls)
  for _, case in ipairs({ { 4, 3, 5, 7 }, { 2, 8, 8, 8 }, { 3, 1, 4, 3 } }) do
    local N, C, H, W = case[1], case[2], case[3], case[4]
    local size = string.format('ResBlock(%d) on an input of shape [%d, %d, %d, %d]', C, N, C, H, W)
    local size_zh = string.format('ResBlock(%d) 在形状为 [%d, %d, %d, %d] 的输入上', C, N, C, H, W)
    local mok, block = lesson.try(cls, C)
    if not mok then return false, block end
    if type(block) ~= 'table' or type(block.modules) ~= 'function' then
      return false, say('ResBlock(c) should make an nn module (ResBlock = nn.Module:extend(\'ResBlock\'))',
                        'ResBlock(c) 应该生成一个 nn 模块（ResBlock = nn.Module:extend(\'ResBlock\')）')
    end
    local convs, bns = leaves_of(block, 'Conv2d'), leaves_of(block, 'BatchNorm2d')
    if #convs ~= 2 or #bns ~= 2 then
      return false, say(string.format('%s has %d Conv2d and %d BatchNorm2d layers; the block has two of each (conv, BN, ReLU, conv, BN)', size, #convs, #bns),
                        string.format('%s有 %d 个 Conv2d 和 %d 个 BatchNorm2d 层；残差块里这两种各有两个（卷积、BN、ReLU、卷积、BN）', size_zh, #convs, #bns))
    end
    block:train()
    local x = lm.randn(N, C, H, W)
    local ok, y = lesson.try(block, x)
    if not ok then return false, y end
    if not lm.is_tensor(y) or shape_text(y:shape()) ~= shape_text(x:shape()) then
      local got = lm.is_tensor(y) and ('a tensor of shape [' .. table.concat(y:shape(), ', ') .. ']') or type(y)
      local got_zh = lm.is_tensor(y) and ('形状为 [' .. table.concat(y:shape(), ', ') .. '] 的张量') or type(y)
      return false, say(string.format('%s returns %s; a residual block keeps the shape (padding 1 on the 3x3 convolutions)', size, got),
                        string.format('%s返回%s；残差块要保持形状不变（3x3 卷积加 padding 1）', size_zh, got_zh))
    end
    -- the block's output against relu(x + bn2(conv2(relu(bn1(conv1(x)))))) from its own layers
    local branch = lm.no_grad(function() return bns[2](convs[2](F.relu(bns[1](convs[1](x))))) end)
    local d = max_diff(y:detach(), F.relu(x + branch))
    if d > 1e-4 then
      if max_diff(y:detach(), F.relu(branch)) < 1e-4 then
        return false, say(string.format('%s returns relu(bn2(conv2(...))) without x: the shortcut is missing, so this is a plain block', size),
                          string.format('%s返回的是不含 x 的 relu(bn2(conv2(...)))：少了捷径，这还是一个普通块', size_zh))
      elseif max_diff(y:detach(), x + F.relu(branch)) < 1e-4 then
        return false, say(string.format('%s returns x + relu(F(x)): ResNet adds x before the last ReLU, relu(x + F(x))', size),
                          string.format('%s返回的是 x + relu(F(x))：ResNet 是在最后一个 ReLU 之前加上 x，即 relu(x + F(x))', size_zh))
      end
      return false, say(string.format('%s differs from relu(x + bn2(conv2(relu(bn1(conv1(x)))))) by %.3g (computed with your own layers)', size, d),
                        string.format('%s与 relu(x + bn2(conv2(relu(bn1(conv1(x)))))) 相差 %.3g（用你自己的层算出来的）', size_zh, d))
    end
    -- the identity path: with the convolutions' weights at 0 the branch gives 0
    lm.no_grad(function()
      for _, cv in ipairs(convs) do
        cv.weight:zero_()
        if cv.bias then cv.bias:zero_() end
      end
    end)
    local xg = x:clone():requires_grad_()
    local ok2, y0 = lesson.try(block, xg)
    if not ok2 then return false, y0 end
    if max_diff(y0:detach(), F.relu(x)) > 1e-5 then
      return false, say(string.format('with its convolutions\' weights at 0, %s should give relu(x), the identity path; it gives something else', size),
                        string.format('把卷积权重都置 0 后，%s应该得到 relu(x)，即恒等路径；它得到的不是', size_zh))
    end
    y0:sum():backward()
    local want_g = x:gt(0):float()
    if not xg.grad or max_diff(xg.grad, want_g) > 1e-5 then
      return false, say(string.format('with its convolutions at 0, the gradient of sum(%s) reaching x should be 1 where x > 0 (through the identity); it is %s', size, xg.grad and 'something else' or 'missing'),
                        string.format('卷积权重为 0 时，sum(%s的输出) 传到 x 的梯度应在 x > 0 处为 1（经过恒等路径）；现在它%s', size_zh, xg.grad and '不是这样' or '不存在'))
    end
  end
  return true, say('right: shape kept, the identity path and its gradient there, the same output as the block of the paper',
                   '对：形状不变，恒等路径和经过它的梯度都在，输出与论文中的残差块一致')
end

return {
  title = say('Convolutional networks: from layers to VGG and ResNet', '卷积神经网络：从各层到 VGG 和 ResNet'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (CNNs)',
    '智能计算系统 第 3 章：深度学习（卷积神经网络）'),
  summary = say([[Why images need convolution, the convolution, pooling and fully connected layers
and how they stack, a VGG-style network trained on Fashion-MNIST, and ResNet's residual block
against the degradation of deep plain networks.]],
    [[图像为什么需要卷积；卷积层、池化层、全连接层以及它们怎样堆叠；在 Fashion-MNIST 上训练一个
VGG 风格的网络；以及 ResNet 的残差块如何解决深层普通网络的退化问题。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Why not fully connected?', '为什么不用全连接？'),
      text = say([[
Computer vision starts with a size problem. The chapter's input is a 32x32 colour image:
32 x 32 x 3 = 3072 numbers. A fully connected first layer of 100 hidden neurons needs
3072 x 100 = 307,200 weights, every neuron connected to every pixel with a weight of its own.

A convolutional layer changes two things. Local connection: each output looks only at a small
window (3x3 here) of the input. Weight sharing: all outputs of one feature map use the same
weights, the filter, slid over the image. 100 filters of 3x3x3 need 2,700 weights (2,800 with a
bias each), whatever the size of the image.]],
        [[
计算机视觉首先遇到的是规模问题。讲义里的输入是一张 32x32 的彩色图像：32 x 32 x 3 = 3072 个
数。第一层若是 100 个隐层神经元的全连接层，权值数量就是 3072 x 100 = 307200：每个神经元和
每个像素之间的连接都用不同的权重。

卷积层改了两件事。局部连接：每个输出只看输入的一个小窗口（这里是 3x3）。权重共享：同一张
特征图的所有输出神经元共用同一组权重，也就是在图像上滑动的滤波器（卷积核）。100 个 3x3x3 的
滤波器只要 2700 个权重（每个再加一个偏置是 2800 个），和图像多大无关。]]),
      code = [[
local function count(m)
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end
print(string.format('fully connected 3072 -> 100:     %7d parameters', count(nn.Linear(3072, 100))))
print(string.format('convolution, 100 filters 3x3x3: %7d parameters', count(nn.Conv2d(3, 100, 3))))
]],
      expect = 'fully connected 3072 -> 100:      307300 parameters\n'
        .. 'convolution, 100 filters 3x3x3:    2800 parameters\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The convolution layer', '卷积层'),
      text = say([[
The chapter's example: an input of 6x6x3 (three input feature maps, C = 0, 1, 2) convolved with
one 3x3x3 filter gives one 4x4 output feature map. Each output is the sum over all three
channels of the window times the filter, plus the bias:

  out[i][j] = sum_c sum_u sum_v x[c][i+u][j+v] * w[c][u][v] + b

The code computes the first output by hand with three nested loops and compares it with
F.conv2d. With two filters (2x3x3x3) the output has two feature maps, 4x4x2: different weights
detect different features.]],
        [[
讲义的例子：6x6x3 的输入（三张输入特征图，C = 0、1、2）与一个 3x3x3 的滤波器做卷积，得到一张
4x4 的输出特征图。每个输出等于窗口与滤波器在三个通道上逐元素相乘再全部相加，最后加上偏置：

  out[i][j] = sum_c sum_u sum_v x[c][i+u][j+v] * w[c][u][v] + b

代码用三重循环亲手算出第一个输出，再与 F.conv2d 比较。用两个滤波器（2x3x3x3）时输出有两张
特征图，即 4x4x2：不同的权重可以检测不同的特征。]]),
      code = [[
lm.manual_seed(5)
image = lm.randint(0, 3, {1, 3, 6, 6}):float()   -- one image: 3 channels of 6x6, values 0..2
filter = lm.randint(-1, 2, {1, 3, 3, 3}):float() -- one filter of 3x3x3, values -1..1
local out = F.conv2d(image, filter)
local sum = 0
for c = 1, 3 do
  for u = 1, 3 do
    for v = 1, 3 do sum = sum + image[{1, c, u, v}]:item() * filter[{1, c, u, v}]:item() end
  end
end
print('one filter: output shape', table.concat(out:shape(), 'x'))
print(string.format('out[1][1] by hand = %g, F.conv2d = %g', sum, out[{1, 1, 1, 1}]:item()))
local two = lm.randint(-1, 2, {2, 3, 3, 3}):float()
print('two filters: output shape', table.concat(F.conv2d(image, two):shape(), 'x'))
]],
      expect = 'one filter: output shape\t1x1x4x4\nout[1][1] by hand = -9, F.conv2d = -9\n'
        .. 'two filters: output shape\t1x2x4x4\n',
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Padding, stride and the output size', '边界扩充、步长与输出尺寸'),
      text = say([[
Padding enlarges the input by a border of zeros: it keeps a deep network from shrinking the
image at every layer and gives the edge pixels as much weight as the others. The stride is how
many pixels the filter moves each time. Together they fix the output size: for an input of n,
a filter of k, padding p and stride s,

  out = floor((n + 2p - k) / s) + 1

The picture is the same convolution run by the tiled GPU kernel of PMPP chapter 7 (output tiles of
4x4) on the SIMT emulator, on channel 1 of the image with channel 1 of the filter: its ghost cells
(hatched, outside the image) are loaded as 0, which is padding 1, so the 6x6 image gives a 6x6
output, equal to F.conv2d with padding = 1. Step through it to see each block load its tile.]],
        [[
边界扩充（padding）在输入四周补上一圈 0：它防止深度网络里图像一层层被动地变小，也让边缘的
像素和其他像素一样受到重视。卷积步长（stride）是滑动滤波器时每次移动的像素数。两者一起决定
输出尺寸：输入为 n，滤波器为 k，padding 为 p，步长为 s 时，

  out = floor((n + 2p - k) / s) + 1

画面是同一个卷积，由 PMPP 第 7 章的分块 GPU 内核（输出块为 4x4）在 SIMT 模拟器上运行：用的是
图像的第 1 个通道和滤波器的第 1 个通道。它的 ghost cell（图像外面、画成斜线的格子）按 0 读入，
这正是 padding 1，所以 6x6 的图像得到 6x6 的输出，与 padding = 1 的 F.conv2d 相同。单步执行，
看每个块怎样读入它的那一块。]]),
      code = [[
for _, o in ipairs({{0, 1}, {1, 1}, {1, 2}, {0, 2}}) do
  local y = F.conv2d(image, filter, nil, {padding = o[1], stride = o[2]})
  print(string.format('padding %d, stride %d: %dx%d', o[1], o[2], y:size(3), y:size(4)))
end
local channel, mask = image[1][1]:contiguous(), filter[1][1]:contiguous()
emu_out, conv_info = kernels.conv2d(channel, mask, {algo = 'tiled', tile = 4, backend = 'emu'})
local ref = F.conv2d(channel:view(1, 1, 6, 6), mask:view(1, 1, 3, 3), nil, {padding = 1})
print('emulated kernel = F.conv2d with padding 1:', (lm.allclose(emu_out, ref:view(6, 6))))
print(conv_info.provenance)
]],
      expect = 'padding 0, stride 1: 4x4\npadding 1, stride 1: 6x6\npadding 1, stride 2: 3x3\n'
        .. 'padding 0, stride 2: 2x2\nemulated kernel = F.conv2d with padding 1:\ttrue\n'
        .. 'emulated, modelled cycles\n',
      scene = function(env) return env.conv_info end,
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Pooling', '池化层'),
      text = say([[
A pooling layer shrinks the feature maps on purpose: fewer numbers for the next layers, so fewer
parameters and less computation, and some control of over-fitting. It has no parameters of its
own. Max pooling keeps the largest value of each window, which makes the extracted features more
robust to small shifts; average pooling keeps the mean (L2 pooling, the root of the mean square,
is a third kind). The chapter's 4x4 example with 2x2 windows and stride 2:]],
        [[
池化层主动减小特征图的尺寸：后面各层要处理的数少了，参数的数量和计算量也就少了，还能在一定
程度上控制过拟合；它不引入额外参数。最大池化（max pooling）保留每个窗口里的最大值，能提高提取
特征的鲁棒性；平均池化（avg pooling）保留平均值（L2 pooling 取均方根，是第三种）。讲义中 4x4
的例子，窗口 2x2、步长 2：]]),
      code = [[
local x = lm.tensor({{2, 3, 1, 5}, {2, 3, 7, 4}, {5, 2, 3, 1}, {3, 9, 6, 0}}):float()
x = x:view(1, 1, 4, 4)
local function rows(t)   -- the rows of a 1x1xHxW tensor, separated by |
  local out = {}
  for _, r in ipairs(t:view(t:size(3), t:size(4)):tolist()) do
    for i, v in ipairs(r) do r[i] = string.format('%g', v) end
    out[#out + 1] = table.concat(r, ' ')
  end
  return table.concat(out, ' | ')
end
print('input:          ' .. rows(x))
print('max pooling:    ' .. rows(F.max_pool2d(x, 2)))
print('avg pooling:    ' .. rows(F.avg_pool2d(x, 2)))
print('parameters of nn.MaxPool2d(2):', #nn.MaxPool2d(2):parameters())
]],
      expect = 'input:          2 3 1 5 | 2 3 7 4 | 5 2 3 1 | 3 9 6 0\n'
        .. 'max pooling:    3 7 | 9 6\navg pooling:    2.5 4.25 | 4.75 2.5\n'
        .. 'parameters of nn.MaxPool2d(2):\t0\n',
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Fully connected layers and the layer pattern', '全连接层与层的排列规律'),
      text = say([[
Convolution and pooling layers form the feature extractor; the fully connected layers are the
classifier. The last feature maps are flattened into one vector holding all the features, and
fully connected layers map it to one score per class, which softmax turns into probabilities.
Shallow layers learn local features, deep layers global ones. The usual arrangement, with N, M,
K repeat counts:

  [[conv + relu] x N -> pool] x M -> [FC + relu] x K -> FC (softmax)

`build(specs)` below turns a list of layer specs into an nn.Sequential. The one shown is the
pattern with N = 3, M = 1, K = 2 on a 3x32x32 image, and `out_shape(specs, shape)` is meant to
predict the shape after the stack without running it. Its first version ignores padding and
stride, and the predictions are wrong.]],
        [[
卷积层和池化层构成特征提取器，全连接层则是分类器：把最后的高维特征图展平成一个包含所有特征
信息的一维向量，再由全连接层映射成每个类别一个分数，经 softmax 转化为各个类别的概率。浅层学习
局部特征，深层学习整体特征。常见的排列方式如下，其中 N、M、K 为重复次数：

  [[conv + relu] x N -> pool] x M -> [FC + relu] x K -> FC (softmax)

下面的 `build(specs)` 把一串层的描述变成 nn.Sequential。这里给出的是 N = 3、M = 1、K = 2 的
结构，输入为 3x32x32 的图像；`out_shape(specs, shape)` 应该不运行网络就预测出输出的形状。它的
第一版忽略了 padding 和步长，所以预测是错的。]]),
      code = [[
-- a spec: {'conv', out_channels, k, padding, stride}, {'relu'}, {'pool', k, stride},
--         {'flatten'}, {'fc', out_features}; shapes have no batch dim: {c, h, w} or {features}
function build(specs, shape)
  local layers = {}
  local function current()   -- the shape so far: a zero image run through the layers built
    local x = lm.zeros(1, table.unpack(shape))
    for _, l in ipairs(layers) do x = l(x) end
    return x:shape()
  end
  for _, s in ipairs(specs) do
    local l
    if s[1] == 'conv' then l = nn.Conv2d(current()[2], s[2], s[3], {padding = s[4], stride = s[5]})
    elseif s[1] == 'relu' then l = nn.ReLU()
    elseif s[1] == 'pool' then l = nn.MaxPool2d(s[2], s[3])
    elseif s[1] == 'flatten' then l = nn.Flatten()
    elseif s[1] == 'fc' then l = nn.Linear(current()[2], s[2])
    end
    layers[#layers + 1] = l
  end
  return nn.Sequential(table.unpack(layers))
end
features = {{'conv', 16, 3, 1, 1}, {'relu'}, {'conv', 16, 3, 1, 1}, {'relu'},
  {'conv', 32, 3, 1, 2}, {'relu'}, {'pool', 2, 2}}
pattern = {table.unpack(features)}
for _, s in ipairs({{'flatten'}, {'fc', 64}, {'relu'}, {'fc', 32}, {'relu'}, {'fc', 10}}) do
  pattern[#pattern + 1] = s
end
function out_shape(specs, shape)   -- to correct: padding and stride are ignored
  local t = {table.unpack(shape)}
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then t = {s[2], t[2] - s[3] + 1, t[3] - s[3] + 1}
    elseif s[1] == 'pool' then t = {t[1], t[2] - s[2] + 1, t[3] - s[2] + 1}
    elseif s[1] == 'flatten' then t = {t[1] * t[2] * t[3]}
    elseif s[1] == 'fc' then t = {s[2]}
    end
  end
  return t
end
local net = build(pattern, {3, 32, 32})
local feature_shape = build(features, {3, 32, 32})(lm.zeros(1, 3, 32, 32)):shape()
print('features: out_shape says ' .. table.concat(out_shape(features, {3, 32, 32}), 'x')
  .. ', the layers give ' .. table.concat(feature_shape, 'x', 2))
print('the whole stack gives ' .. table.concat(net(lm.zeros(1, 3, 32, 32)):shape(), 'x', 2)
  .. ' (10 class scores), with ' .. #net .. ' layers')
]],
      expect = 'features: out_shape says 32x25x25, the layers give 32x8x8\n'
        .. 'the whole stack gives 10 (10 class scores), with 13 layers\n',
      exercise = {
        prompt = say([[
Correct `out_shape(specs, shape)` so it predicts the shape after any stack of these specs without
running it: convolutions with their padding and stride, pooling with its stride, flatten and fc.
The check compares it with real layers on random stacks and input shapes.]],
          [[
改正 `out_shape(specs, shape)`，让它不运行网络就能预测任意一串这种层之后的形状：卷积要算上
padding 和步长，池化要算上步长，还有 flatten 和 fc。检查时会在随机的层序列和输入形状上与真实的
层比较。]]),
        hints = {
          say('conv: {s[2], (t[2] + 2 * s[4] - s[3]) // s[5] + 1, (t[3] + 2 * s[4] - s[3]) // s[5] + 1}',
              'conv：{s[2], (t[2] + 2 * s[4] - s[3]) // s[5] + 1, (t[3] + 2 * s[4] - s[3]) // s[5] + 1}'),
          say('pool: the same formula with k = s[2], stride s[3] and no padding; // is the floor.',
              'pool：同一个公式，k = s[2]，步长 s[3]，没有 padding；// 就是向下取整。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'out_shape')
          if not ok then return false, fn end
          for _ = 1, 40 do
            local specs, shape = random_stack()
            local before = shape
            for i = 1, #specs do   -- the shape after every layer of the stack
              local prefix = { table.unpack(specs, 1, i) }
              local want = actual_shape(prefix, shape)
              local rok, got = lesson.try(fn, prefix, { table.unpack(shape) })
              if not rok then return false, got end
              if shape_text(got) ~= shape_text(want) then
                local layer = shape_text(specs[i]):gsub('^{(%a+)', "{'%1'")
                return false, say(string.format('on the input %s, after layer %d, %s on %s, out_shape gives %s and the layers %s',
                    shape_text(shape), i, layer, shape_text(before), shape_text(got), shape_text(want)),
                  string.format('在输入 %s 上，第 %d 层 %s 作用在 %s 上之后，out_shape 给出 %s，真实的层给出 %s',
                    shape_text(shape), i, layer, shape_text(before), shape_text(got), shape_text(want)))
              end
              before = want
            end
          end
          return true, say('right on 40 random stacks of convolutions, pooling, flatten and fc',
                           '在 40 个随机的卷积、池化、flatten、fc 层序列上都对')
        end,
        solution = [[
function out_shape(specs, shape)
  local t = {table.unpack(shape)}
  local function size(n, k, p, s) return (n + 2 * p - k) // s + 1 end
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then t = {s[2], size(t[2], s[3], s[4], s[5]), size(t[3], s[3], s[4], s[5])}
    elseif s[1] == 'pool' then t = {t[1], size(t[2], s[2], 0, s[3]), size(t[3], s[2], 0, s[3])}
    elseif s[1] == 'flatten' then t = {t[1] * t[2] * t[3]}
    elseif s[1] == 'fc' then t = {s[2]}
    end
  end
  return t
end
]],
        wrong = {
          [[
function out_shape(specs, shape)   -- divides without taking the floor
  local t = {table.unpack(shape)}
  local function size(n, k, p, s) return (n + 2 * p - k) / s + 1 end
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then t = {s[2], size(t[2], s[3], s[4], s[5]), size(t[3], s[3], s[4], s[5])}
    elseif s[1] == 'pool' then t = {t[1], size(t[2], s[2], 0, s[3]), size(t[3], s[2], 0, s[3])}
    elseif s[1] == 'flatten' then t = {t[1] * t[2] * t[3]}
    elseif s[1] == 'fc' then t = {s[2]}
    end
  end
  return t
end
]],
          [[
function out_shape(specs, shape)   -- pooling always with stride k
  local t = {table.unpack(shape)}
  local function size(n, k, p, s) return (n + 2 * p - k) // s + 1 end
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then t = {s[2], size(t[2], s[3], s[4], s[5]), size(t[3], s[3], s[4], s[5])}
    elseif s[1] == 'pool' then t = {t[1], size(t[2], s[2], 0, s[2]), size(t[3], s[2], 0, s[2])}
    elseif s[1] == 'flatten' then t = {t[1] * t[2] * t[3]}
    elseif s[1] == 'fc' then t = {s[2]}
    end
  end
  return t
end
]],
          [[
function out_shape(specs, shape)   -- flatten forgets the channels
  local t = {table.unpack(shape)}
  local function size(n, k, p, s) return (n + 2 * p - k) // s + 1 end
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then t = {s[2], size(t[2], s[3], s[4], s[5]), size(t[3], s[3], s[4], s[5])}
    elseif s[1] == 'pool' then t = {t[1], size(t[2], s[2], 0, s[3]), size(t[3], s[2], 0, s[3])}
    elseif s[1] == 'flatten' then t = {t[2] * t[3]}
    elseif s[1] == 'fc' then t = {s[2]}
    end
  end
  return t
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('VGG: blocks of 3x3 convolutions', 'VGG：由 3x3 卷积组成的块'),
      text = say([[
VGG (Simonyan and Zisserman, "Very deep convolutional networks for large-scale image
recognition", 2014) builds the whole network from one idea: blocks of 3x3 convolutions with
padding 1, each block ending in a 2x2 max pooling that halves the feature maps while the next
block doubles the channels. Two stacked 3x3 convolutions see a 5x5 window with 2 x 9 = 18 C^2
weights instead of 25 C^2, and add one more non-linearity. VGG16 has 13 convolutional and 3
fully connected layers; on ImageNet its error rate was 24.7% top-1 and 7.5% top-5.

The copy below has two blocks of two convolutions (1 -> 8 -> 16 channels) for 28x28 Fashion-MNIST
images, and a BatchNorm after each convolution: BatchNorm appeared a year after VGG, and it lets
this small network learn in a few steps. It trains for 40 steps of 32 images (a little more than
one pass over 1024 images, under a second) and is tested on 1000 test images. The picture is the
model scene: each layer with its parameter count, the first convolution's 8 filters as images. The
full version is `lumen examples/cnn_fashion.lua --epochs 3` (a smaller CNN, all 60,000 images).]],
        [[
VGG（Simonyan 与 Zisserman，《Very deep convolutional networks for large-scale image
recognition》，2014）用一个想法搭起整个网络：由带 padding 1 的 3x3 卷积组成的块，每块最后接一个
2x2 的最大池化，把特征图缩小一半，下一块再把通道数加倍。两个叠起来的 3x3 卷积看到的是 5x5 的
窗口，权重却只有 2 x 9 = 18 C^2 个，而不是 25 C^2 个，还多了一次非线性。VGG16 有 13 个卷积层
和 3 个全连接层；在 ImageNet 上它的错误率是 top-1 24.7%、top-5 7.5%。

下面的小号 VGG 有两个块，每块两个卷积（通道数 1 -> 8 -> 16），处理 28x28 的 Fashion-MNIST
图像，每个卷积后面加了 BatchNorm：BatchNorm 比 VGG 晚一年出现，它让这个小网络几步之内就能学
起来。训练 40 步、每步 32 张图（在 1024 张图上略多于一遍，不到一秒），再在 1000 张测试图像上测试。
画面是模型场景：每一层和它的参数个数，第一个卷积层的 8 个滤波器画成小图。完整的版本是
`lumen examples/cnn_fashion.lua --epochs 3`（一个更小的 CNN，用全部 60,000 张图像）。]]),
      code = [[
function vgg_block(layers, cin, cout, nconv)   -- appends [conv 3x3 + BN + ReLU] x nconv, pool
  for i = 1, nconv do
    layers[#layers + 1] = nn.Conv2d(i == 1 and cin or cout, cout, 3, {padding = 1})
    layers[#layers + 1] = nn.BatchNorm2d(cout)
    layers[#layers + 1] = nn.ReLU()
  end
  layers[#layers + 1] = nn.MaxPool2d(2)
  return layers
end
train_set = data.FashionMNIST{split = 'train', limit = 1024}
test_set = data.FashionMNIST{split = 'test', limit = 1000}
-- train(model, steps [, name]): SGD on batches of 32 of the 1024 images; curves when named.
-- Returns the test accuracy and the mean training loss of the last 20 steps.
function train(model, steps, name)
  local opt = optim.SGD(model:parameters(), {lr = 0.05, momentum = 0.9})
  local recent = {}
  model:train()
  for s = 1, steps do
    local first = ((s - 1) * 32) % 1024 + 1
    local x, y = train_set.data:narrow(1, first, 32), train_set.targets:narrow(1, first, 32)
    local out = model(x)
    local loss = F.cross_entropy(out, y)
    opt:zero_grad(); loss:backward(); opt:step()
    recent[(s - 1) % 20 + 1] = loss:item()
    if name then
      viz.plot('loss/' .. name, s, loss:item())
      viz.plot('accuracy/' .. name, s, out:argmax(2):eq(y):float():mean():item())
    end
  end
  model:eval()
  local mean = 0
  for _, v in ipairs(recent) do mean = mean + v / #recent end
  local right = lm.no_grad(function() return model(test_set.data):argmax(2):eq(test_set.targets) end)
  return right:float():mean():item(), mean
end
lm.manual_seed(1)
local layers = vgg_block({}, 1, 8, 2)                   -- 28x28 -> 14x14
vgg_block(layers, 8, 16, 2)                             -- 14x14 -> 7x7
for _, l in ipairs({nn.Flatten(), nn.Linear(16 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10)}) do
  layers[#layers + 1] = l
end
vgg = nn.Sequential(table.unpack(layers))
local acc = train(vgg, lm.build_info().sanitize and 15 or 40) -- fewer in Lumen's sanitizer-build tests
local params = 0
for _, p in ipairs(vgg:parameters()) do params = params + p:numel() end
print(string.format('small VGG: %d parameters, test accuracy %.1f%% after 40 steps', params,
  100 * acc))
]],
      scene = function(env) return env.vgg end,
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('ResNet: the residual block', 'ResNet：残差块'),
      text = say([[
Does stacking more convolution layers keep improving classification? He, Zhang, Ren and Sun
("Deep residual learning for image recognition", 2015) trained networks of 20 and 56 layers on
CIFAR-10: the deeper one had the higher error, on ImageNet too. Vanishing gradients? No,
BatchNorm largely removes them. Over-fitting? No, the deeper network's error is higher on the
training set as well. The network degrades: it converges to a poor point instead of the best
one, although the deeper network could in principle copy the shallower one and make its extra
layers the identity.

A plain network fits the output directly. A residual network, built on BatchNorm, fits the
difference (output - input) and adds the input back through a shortcut:

  out = relu(x + F(x)),   F(x) = bn2(conv2(relu(bn1(conv1(x)))))

Near a good solution the layers only have to learn a small correction, and F(x) = 0 gives the
identity at once: the weights respond more sensitively there and the best solution is easier to
learn. `PlainBlock` below is the same two layers without the shortcut.]],
        [[
卷积层堆得越多，图像分类就越准吗？He、Zhang、Ren、Sun（《Deep residual learning for image
recognition》，2015）在 CIFAR-10 上分别训练了 20 层和 56 层的卷积神经网络，发现更深的网络错误
率更高，在 ImageNet 上也一样。原因是梯度消失吗？不是，BatchNorm 可以有效缓解梯度消失。是过拟合
吗？也不是，更深的网络在训练集上的误差同样更高。这是神经网络退化：收敛到了极值点而不是最值点，
误差大；尽管更深的网络原则上可以照搬浅的网络，再把多出来的层变成恒等映射。

普通网络（plain network）直接拟合输出。残差网络（residual network）建立在 BN 之上，拟合的是
差值（output - input），再通过一条捷径把输入加回来：

  out = relu(x + F(x)),   F(x) = bn2(conv2(relu(bn1(conv1(x)))))

在解附近，各层只需学习一个小的修正，F(x) = 0 就直接得到恒等映射：这时权重的反应更灵敏，更容易
学到最优解。下面的 `PlainBlock` 是同样的两层，只是没有捷径。]]),
      code = [[
PlainBlock = nn.Module:extend('PlainBlock')
function PlainBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(c)
end
function PlainBlock:forward(x)
  return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
end
lm.manual_seed(6)
local x = lm.randn(2, 4, 6, 6)
print('PlainBlock(4) keeps the shape:', table.concat(PlainBlock(4)(x):shape(), 'x'))
]],
      expect = 'PlainBlock(4) keeps the shape:\t2x4x6x6\n',
      exercise = {
        prompt = say([[
Write `ResBlock`, an nn module made by `ResBlock(c)`: two 3x3 convolutions of c channels with
padding 1, each followed by a BatchNorm2d, and out = relu(x + bn2(conv2(relu(bn1(conv1(x)))))).
The check builds blocks of several sizes and checks the shape, the output against the formula
computed from your own layers, the identity path (your convolutions set to 0 must give relu(x))
and the gradient that reaches x through it.]],
          [[
写出 `ResBlock`，一个由 `ResBlock(c)` 生成的 nn 模块：两个 c 通道、padding 1 的 3x3 卷积，每个
后面接一个 BatchNorm2d，并且 out = relu(x + bn2(conv2(relu(bn1(conv1(x))))))。检查时会生成几种
大小的块，检查形状、用你自己的层按公式算出的输出、恒等路径（把你的卷积置 0 后必须得到
relu(x)），以及经过恒等路径到达 x 的梯度。]]),
        hints = {
          say("Start from PlainBlock: ResBlock = nn.Module:extend('ResBlock') with the same __init.",
              "从 PlainBlock 出发：ResBlock = nn.Module:extend('ResBlock')，__init 与它相同。"),
          say('In forward, add x before the last ReLU: F.relu(x + self.bn2(self.conv2(...))).',
              '在 forward 里，x 要在最后一个 ReLU 之前加上：F.relu(x + self.bn2(self.conv2(...)))。'),
        },
        check = function(env)
          local ok, cls = lesson.need(env, 'ResBlock', 'table')
          if not ok then return false, cls end
          return check_resblock(cls)
        end,
        solution = [[
ResBlock = nn.Module:extend('ResBlock')
function ResBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(c)
end
function ResBlock:forward(x)
  return F.relu(x + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
end
]],
        wrong = {
          [[
ResBlock = nn.Module:extend('ResBlock')   -- no shortcut: a plain block
function ResBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(c)
end
function ResBlock:forward(x)
  return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
end
]],
          [[
ResBlock = nn.Module:extend('ResBlock')   -- x added after the last ReLU
function ResBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(c)
end
function ResBlock:forward(x)
  return x + F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
end
]],
          [[
ResBlock = nn.Module:extend('ResBlock')   -- no BatchNorm
function ResBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1})
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1})
end
function ResBlock:forward(x)
  return F.relu(x + self.conv2(F.relu(self.conv1(x))))
end
]],
          [[
ResBlock = nn.Module:extend('ResBlock')   -- convolutions without padding
function ResBlock:__init(c)
  self.conv1 = nn.Conv2d(c, c, 3, {bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {bias = false})
  self.bn2 = nn.BatchNorm2d(c)
end
function ResBlock:forward(x)
  return F.relu(self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x))))))
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('The degradation problem, measured', '亲手测一测网络退化'),
      text = say([[
The chapter's experiment in miniature: three networks with the same stem (a 3x3 convolution
with stride 2 and a max pooling: 28x28 -> 7x7, 8 channels) and the same head (average pooling
and one fully connected layer), trained with the same batches and seed:

- plain 6: 2 plain blocks, 6 weight layers;
- plain 18: 8 plain blocks, 18 weight layers;
- residual 18: 8 residual blocks, 18 weight layers.

The two charts side by side are the training loss and the training accuracy per batch of each
(smoothed). After 60 steps the deep plain network trails the shallow one on the training set
itself, which over-fitting cannot explain, while the residual network of the same depth trains
best. This is only the start of training, 60 steps of 32 images in about a second, and in
places the gaps between the curves are no larger than their noise: read the trend of the
smoothed lines and the printed means, not single points. The paper trained to the end (64,000
steps on CIFAR-10). To look further, call `degradation(1000)` (about 10 seconds): on this machine
the order stayed the same after 1000 steps (training losses 0.26, 0.51 and 0.17).]],
        [[
讲义中那个实验的缩小版：三个网络有相同的开头（一个步长 2 的 3x3 卷积加一个最大池化：28x28 ->
7x7，8 个通道）和相同的结尾（平均池化加一个全连接层），用同样的批次和随机种子训练：

- plain 6：2 个普通块，6 个带权重的层；
- plain 18：8 个普通块，18 个带权重的层；
- residual 18：8 个残差块，18 个带权重的层。

并排的两张图是各自每个批次的训练损失和训练准确率（平滑后）。60 步之后，深的普通网络连在训练集
上都落后于浅的那个，这不是过拟合能解释的；而同样深度的残差网络训练得最好。这只是训练的开头：
60 步、每步 32 张图，一秒左右；有些地方曲线之间的差距并不比它们本身的噪声大，所以要看平滑后
曲线的走势和打印出来的平均值，而不是单个点。论文是一直训练到最后的（在 CIFAR-10 上 64,000
步）。想看得更远，就调用 `degradation(1000)`（大约 10 秒）：在这台机器上，1000 步之后顺序仍然
没变（训练损失分别是 0.26、0.51 和 0.17）。]]),
      code = [[
DemoBlock = nn.Module:extend('DemoBlock')     -- the lesson's own block, plain or residual
function DemoBlock:__init(c, residual)
  self.conv1 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn1 = nn.BatchNorm2d(c)
  self.conv2 = nn.Conv2d(c, c, 3, {padding = 1, bias = false})
  self.bn2 = nn.BatchNorm2d(c)
  self.residual = residual
end
function DemoBlock:forward(x)
  local y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
  return F.relu(self.residual and x + y or y)
end
function deep_net(blocks, residual)
  local layers = {nn.Conv2d(1, 8, 3, {padding = 1, stride = 2}), nn.BatchNorm2d(8), nn.ReLU(),
    nn.MaxPool2d(2)}
  for _ = 1, blocks do layers[#layers + 1] = DemoBlock(8, residual) end
  for _, l in ipairs({nn.AvgPool2d(7), nn.Flatten(), nn.Linear(8, 10)}) do
    layers[#layers + 1] = l
  end
  return nn.Sequential(table.unpack(layers))
end
function degradation(steps)
  viz.clear()
  for _, net in ipairs({{'plain 6', 2, false}, {'plain 18', 8, false}, {'residual 18', 8, true}}) do
    lm.manual_seed(1)
    local _, loss = train(deep_net(net[2], net[3]), steps, net[1])
    print(string.format('%-12s after %d steps: training loss %.3f (mean of the last 20 steps)',
      net[1], steps, loss))
  end
end
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
degradation(lm.build_info().sanitize and 20 or 60)
]],
      scene = 'curves',
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('What each layer sees: feature maps', '每一层看到了什么：特征图'),
      text = say([[
The notes: each convolution layer turns its input into feature maps, one per filter, and deeper
layers combine the earlier ones into coarser, more abstract features. The picture is the features
scene (CNN Explainer's view) for the small VGG of step 6 on one test image: a column per layer in
the order they ran, each channel's map blue where it is negative and orange where positive (one
scale per layer), the vectors after Flatten and the Linear layers as cells, and last the softmax
of the output with the class names. The first convolution's maps are the image filtered by its 8
kernels (edges of the garment light up); after each MaxPool the maps halve; ReLU blanks the blue.
Step through the layers: a convolution's step writes out how its strongest cell was made, the
3x3 window of each input channel times the kernel, plus the bias, and compares the sum with the
value the model produced; hover any cell for its own sum. The softmax's top class is the
prediction the code prints.]],
        [[
讲义：每个卷积层把输入变成特征图，每个滤波器一张；更深的层把前面的特征组合成更粗、更抽象的特征。
画面是特征图场景（CNN Explainer 的视图），显示第 6 步的小号 VGG 在一张测试图像上的情况：各层按运行
顺序各占一列，每个通道的图负值为蓝、正值为橙（每层一个比例尺），Flatten 和全连接层之后的向量画成
格子，最后是输出的 softmax 和类别名。第一个卷积层的图就是图像经过它 8 个卷积核滤波的结果（衣物的
边缘会亮起来）；每次 MaxPool 之后图缩小一半；ReLU 把蓝色抹掉。逐层往下看：卷积层那一步会写出它
最强的那个格子是怎么算出来的——每个输入通道的 3x3 窗口乘以卷积核，再加偏置——并把和与模型给出的
值相比；把鼠标放在任何格子上，可以看到它自己的和。softmax 的最高类别就是代码打印的预测。]]),
      code = [[
vgg:eval()                                    -- BatchNorm with its running statistics
CLASSES = {'T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker',
  'Bag', 'Ankle boot'}
image = test_set.data[1]                      -- (1, 28, 28): the first test image
local p = lm.no_grad(function() return vgg(image:unsqueeze(1))[1]:softmax(1) end)
local k = p:argmax():item()
print(string.format('test image 1 is a %s; the small VGG says %s with p = %.2f',
  CLASSES[test_set.targets[1]:item()], CLASSES[k], p[k]:item()))
]],
      -- the features scene: every layer's maps for the image, a cell's arithmetic, the softmax
      scene = function(env) return env.vgg, { input = env.image, classes = env.CLASSES } end,
    },
  },
}
