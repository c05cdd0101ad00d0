--[[
AI Computing Systems, chapter 3: the image classification networks of the notes' map (AlexNet,
VGG, Inception, ResNet, SENet, MobileNet, ViT) by what each block costs. AlexNet's layers as nn
modules (the model scene), the student's parameter count of a convolution (groups, depthwise, bias:
checked against nn.Conv2d on random configurations) and its multiply-adds at an input size
(stride, padding, groups: checked against the output F.conv2d really produces), AlexNet against
VGG16 computed layer by layer, 1x1 convolutions in Inception and ResNet's bottleneck measured on
the modules, SENet's channel attention written by the student (checked against a reference on
random shapes, the squeeze, the gate and the axis it scales), depthwise-separable against
standard convolution counted and timed (CPU measured, one thread: curves scene), ViT's patchify
written by the student (checked against a reference and against a stride-p convolution; the
tensor scene shows the reordering), and a tiny ViT against a tiny CNN trained for a few seconds
on a Fashion-MNIST subset (curves).
Format: docs/lessons.md.
]]
local say = lesson.say

local function shape_text(t)
  if lm.is_tensor(t) then t = t:shape() end
  if type(t) ~= 'table' then return tostring(t) end
  return '[' .. table.concat(t, ', ') .. ']'
end

local function count(m)
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end

-- ---------------------------------------------------------------- conv_params

-- Mistakes a parameter count can make, each as a formula: the check names the one an answer matches.
local PARAM_MISTAKES = {
  { function(ci, co, k, g, b) return ci * co * k * k + (b and co or 0) end,
    say('it matches the count without groups: with groups g each filter sees only cin/g input channels, so the weight is cout x (cin/g) x k x k',
      '它和不考虑分组的计数一样：分组数为 g 时每个滤波器只看 cin/g 个输入通道，权重是 cout x (cin/g) x k x k') },
  { function(ci, co, k, g, b) return (ci // g) * (co // g) * k * k + (b and co or 0) end,
    say('it matches dividing cout by the groups as well: every one of the cout filters is still there, each with cin/g channels',
      '它和把 cout 也除以 g 一样：cout 个滤波器一个不少，每个有 cin/g 个通道') },
  { function(ci, co, k, g, b) return co * (ci // g) * k * k + (b and ci or 0) end,
    say('it matches a bias per input channel: there is one bias per filter, that is per output channel (cout of them)',
      '它和每个输入通道一个偏置一样：偏置是每个滤波器一个，即每个输出通道一个（共 cout 个）') },
  { function(ci, co, k, g) return co * (ci // g) * k * k + co end,
    say('it matches counting the bias also when bias is false: nn.Conv2d(..., {bias = false}) has no bias at all',
      '它和 bias 为 false 时也算上偏置一样：nn.Conv2d(..., {bias = false}) 根本没有偏置') },
  { function(ci, co, k, g, b) return co * (ci // g) * k + (b and co or 0) end,
    say('it matches a kernel of k weights: a k x k kernel has k * k of them',
      '它和卷积核只有 k 个权重一样：k x k 的卷积核有 k * k 个') },
}

local function check_conv_params(env)
  local ok, fn = lesson.need(env, 'conv_params')
  if not ok then return false, fn end
  local cases = {
    { 6, 4, 3, 2, true }, { 8, 8, 3, 8, false }, { 3, 5, 5, 1, true }, { 4, 6, 1, 2, false },
    { 9, 18, 3, 9, true }, { 1, 1, 1, 1, false }, { 12, 9, 7, 3, true }, { 5, 7, 2, 1, false },
  }
  for _ = 1, 30 do
    local g = ({ 1, 2, 3, 4 })[math.random(1, 4)]
    local ci, co = g * math.random(1, 5), g * math.random(1, 5)
    if math.random() < 0.3 then g, ci = ci, ci; co = ci * math.random(1, 2) end   -- depthwise
    cases[#cases + 1] = { ci, co, ({ 1, 2, 3, 5, 7, 11 })[math.random(1, 6)], g, math.random() < 0.5 }
  end
  for _, c in ipairs(cases) do
    local ci, co, k, g, b = table.unpack(c, 1, 5)
    local want = count(nn.Conv2d(ci, co, k, { groups = g, bias = b }))
    local call = string.format('conv_params(%d, %d, %d, %d, %s)', ci, co, k, g, tostring(b))
    local rok, got = lesson.try(fn, ci, co, k, g, b)
    if not rok then return false, got end
    local n = lesson.number(got)
    if n ~= want then
      local why
      for _, m in ipairs(PARAM_MISTAKES) do
        if n == m[1](ci, co, k, g, b) then why = m[2] break end
      end
      local en = string.format('%s gives %s; nn.Conv2d(%d, %d, %d, {groups = %d, bias = %s}) has %d parameters (counted on the module)',
        call, n and lesson.show(n) or type(got), ci, co, k, g, tostring(b), want)
      local zh = string.format('%s 得到 %s；nn.Conv2d(%d, %d, %d, {groups = %d, bias = %s}) 有 %d 个参数（在模块上数出）',
        call, n and lesson.show(n) or type(got), ci, co, k, g, tostring(b), want)
      if why then return false, say(en .. ': ' .. why.en, zh .. '：' .. why.zh) end
      return false, say(en, zh)
    end
  end
  return true, say(string.format('right on %d configurations, grouped, depthwise (groups = cin) and without bias included, each counted on nn.Conv2d', #cases),
    string.format('在 %d 种配置上都对，包括分组、深度卷积（groups = cin）和无偏置的情况，每种都与 nn.Conv2d 的实际参数数比较过', #cases))
end

-- ---------------------------------------------------------------- conv_macs

local function out_size(n, k, s, p) return (n + 2 * p - k) // s + 1 end

local MAC_MISTAKES = {
  { function(ci, co, k, g, h, w, s, p) return out_size(h, k, s, p) * out_size(w, k, s, p) * co * ci * k * k end,
    say('it matches the count without groups: each output value reads only cin/g input channels',
      '它和不考虑分组的计数一样：每个输出值只读 cin/g 个输入通道') },
  { function(ci, co, k, g, h, w) return h * w * co * (ci // g) * k * k end,
    say('it matches using the input size h x w: count the outputs, floor((h + 2p - k) / s) + 1 by floor((w + 2p - k) / s) + 1',
      '它和用输入尺寸 h x w 计数一样：要数的是输出，floor((h + 2p - k) / s) + 1 乘 floor((w + 2p - k) / s) + 1') },
  { function(ci, co, k, g, h, w, s, p) return ((h + 2 * p - k) // s) * ((w + 2 * p - k) // s) * co * (ci // g) * k * k end,
    say('it matches an output size without the + 1: the first window is at position 0, then one every s, floor((n + 2p - k) / s) + 1 windows',
      '它和输出尺寸少了 + 1 一样：第一个窗口在位置 0，之后每隔 s 一个，共 floor((n + 2p - k) / s) + 1 个窗口') },
  { function(ci, co, k, g, h, w, s, p) return ((h + p - k) // s + 1) * ((w + p - k) // s + 1) * co * (ci // g) * k * k end,
    say('it matches padding on one side only: p zeros are added on each side, so n + 2p',
      '它和只在一边补 padding 一样：每边各补 p 个 0，所以是 n + 2p') },
  { function(ci, co, k, g, h, w, s) return out_size(h, k, s, 0) * out_size(w, k, s, 0) * co * (ci // g) * k * k end,
    say('it matches ignoring the padding: p zeros are added on each side, so n + 2p',
      '它和忽略 padding 一样：每边补 p 个 0，所以是 n + 2p') },
  { function(ci, co, k, g, h, w, s, p) return out_size(h, k, 1, p) * out_size(w, k, 1, p) * co * (ci // g) * k * k end,
    say('it matches ignoring the stride: the window moves s pixels each time, divide by s (and take the floor)',
      '它和忽略步长一样：窗口每次移动 s 个像素，要除以 s（再向下取整）') },
  { function(ci, co, k, g, h, w, s, p) return 2 * out_size(h, k, s, p) * out_size(w, k, s, p) * co * (ci // g) * k * k end,
    say('it is twice the multiply-adds, the FLOPs: return the multiply-adds (one multiply and one add count once)',
      '它是乘加次数的两倍，即 FLOPs：要返回乘加次数（一次乘法加一次加法算一次）') },
  { function(ci, co, k, g, h, w, s, p) return ((h + 2 * p - k) / s + 1) * ((w + 2 * p - k) / s + 1) * co * (ci // g) * k * k end,
    say('it matches an output size without the floor: a window that does not fit whole is not computed, use // (floor division)',
      '它和输出尺寸没有向下取整一样：放不下的窗口不计算，要用 //（向下取整的除法）') },
}

local function check_conv_macs(env)
  local ok, fn = lesson.need(env, 'conv_macs')
  if not ok then return false, fn end
  -- {cin, cout, k, groups, h, w, stride, padding}
  local cases = {
    { 6, 6, 5, 3, 9, 7, 1, 2 }, { 4, 6, 3, 2, 9, 7, 2, 1 }, { 6, 6, 3, 6, 11, 13, 1, 1 }, { 3, 5, 5, 1, 12, 10, 3, 2 },
    { 2, 4, 1, 1, 5, 8, 1, 0 }, { 8, 12, 3, 4, 16, 15, 2, 0 }, { 1, 3, 7, 1, 20, 17, 3, 3 },
  }
  for _ = 1, 25 do
    local g = ({ 1, 2, 3 })[math.random(1, 3)]
    local ci, co = g * math.random(1, 4), g * math.random(1, 4)
    if math.random() < 0.3 then g, ci = ci, ci; co = ci * math.random(1, 2) end
    local k = ({ 1, 2, 3, 5 })[math.random(1, 4)]
    local p = math.random(0, k // 2 + 1)
    cases[#cases + 1] = { ci, co, k, g, math.random(k, 24), math.random(k, 24), math.random(1, 3), p }
  end
  for _, c in ipairs(cases) do
    local ci, co, k, g, h, w, s, p = table.unpack(c, 1, 8)
    local y = F.conv2d(lm.zeros(1, ci, h, w), lm.zeros(co, ci // g, k, k), nil,
      { stride = s, padding = p, groups = g })
    local want = y:numel() * (ci // g) * k * k   -- every output value: one weight row of multiply-adds
    local call = string.format('conv_macs(%d, %d, %d, %d, %d, %d, %d, %d)', ci, co, k, g, h, w, s, p)
    local rok, got = lesson.try(fn, ci, co, k, g, h, w, s, p)
    if not rok then return false, got end
    local n = lesson.number(got)
    if n ~= want then
      local why
      for _, m in ipairs(MAC_MISTAKES) do
        if n == m[1](ci, co, k, g, h, w, s, p) then why = m[2] break end
      end
      local en = string.format('%s gives %s, expected %d (F.conv2d gives an output of %s, %d values of %d multiply-adds each)',
        call, n and lesson.show(n) or type(got), want, shape_text(y), y:numel(), (ci // g) * k * k)
      local zh = string.format('%s 得到 %s，应为 %d（F.conv2d 的输出形状是 %s，共 %d 个值，每个 %d 次乘加）',
        call, n and lesson.show(n) or type(got), want, shape_text(y), y:numel(), (ci // g) * k * k)
      if why then return false, say(en .. ': ' .. why.en, zh .. '：' .. why.zh) end
      return false, say(en, zh)
    end
  end
  return true, say(string.format('right on %d convolutions (strides 1-3, padding, groups, depthwise, sizes that do not divide), each against the output F.conv2d produces', #cases),
    string.format('在 %d 个卷积上都对（步长 1-3、padding、分组、深度卷积、除不尽的尺寸），每个都与 F.conv2d 实际产生的输出比较过', #cases))
end

-- ---------------------------------------------------------------- se_scale

local function se_ref(x, w1, b1, w2, b2, v)
  v = v or {}
  local s = v.max and x:amax({ 3, 4 }) or x:mean({ 3, 4 })             -- (B, C)
  local z = s:matmul(w1:t()) + b1
  if not v.norelu then z = F.relu(z) end
  local e = z:matmul(w2:t()) + b2
  if v.softmax then e = e:softmax(-1) elseif not v.nogate then e = e:sigmoid() end
  if v.add then return x + e:view(x:size(1), x:size(2), 1, 1) end
  return x * e:view(x:size(1), x:size(2), 1, 1)
end

local SE_MISTAKES = {
  { { max = true }, say('it matches squeezing with the maximum: SENet squeezes each channel with its global average, x:mean({3, 4})',
    '它和用最大值做 squeeze 一样：SENet 用每个通道的全局平均，x:mean({3, 4})') },
  { { nogate = true }, say('it matches scaling without the sigmoid: the excitation ends in a sigmoid, one weight in (0, 1) per channel',
    '它和没有 sigmoid 就去缩放一样：excitation 最后是 sigmoid，每个通道一个 (0, 1) 之间的权重') },
  { { softmax = true }, say('it matches a softmax over the channels: SENet gates each channel on its own with a sigmoid, the channels do not compete',
    '它和对通道做 softmax 一样：SENet 用 sigmoid 给每个通道单独打分，通道之间不互相竞争') },
  { { norelu = true }, say('it matches the excitation without the ReLU between its two layers: e = sigmoid(W2 relu(W1 s + b1) + b2)',
    '它和 excitation 的两层之间没有 ReLU 一样：e = sigmoid(W2 relu(W1 s + b1) + b2)') },
  { { add = true }, say('it matches adding the weights: the channel weights multiply the feature maps, x * s',
    '它和把权重加上去一样：通道权重是乘到特征图上的，x * s') },
}

local rand = lesson.rand -- (seed, scale, d1, ...): float64 uniform in [-scale, scale]

local function check_se(env)
  local ok, fn = lesson.need(env, 'se_scale')
  if not ok then return false, fn end
  -- {B, C, H, W, r}: C/r hidden units
  local cases = { { 2, 8, 5, 3, 4 }, { 1, 6, 4, 4, 2 }, { 3, 4, 1, 7, 4 }, { 2, 12, 6, 5, 3 }, { 1, 3, 2, 2, 3 } }
  for n, c in ipairs(cases) do
    local B, C, H, W, r = table.unpack(c, 1, 5)
    local hid = C // r
    local seed = 31 * n
    local x = rand(seed, 2, B, C, H, W) + rand(seed + 1, 1.5, B, C, 1, 1)   -- channels of different means
    local w1, b1 = rand(seed + 2, 1, hid, C), rand(seed + 3, 0.5, hid)
    local w2, b2 = rand(seed + 4, 1.5, C, hid), rand(seed + 5, 0.5, C)
    local want = se_ref(x, w1, b1, w2, b2)
    local what = string.format('se_scale on x of shape [%d, %d, %d, %d] with w1 [%d, %d]', B, C, H, W, hid, C)
    local what_zh = string.format('se_scale 在形状为 [%d, %d, %d, %d] 的 x、[%d, %d] 的 w1 上', B, C, H, W, hid, C)
    local rok, got = lesson.try(fn, x:clone(), w1:clone(), b1:clone(), w2:clone(), b2:clone())
    if not rok then return false, got end
    if not lm.is_tensor(got) or shape_text(got) ~= shape_text(x) then
      return false, say(string.format('%s returns %s; the block keeps the shape of x, %s', what,
          lm.is_tensor(got) and ('a tensor of shape ' .. shape_text(got)) or type(got), shape_text(x)),
        string.format('%s返回%s；SE 块保持 x 的形状 %s', what_zh,
          lm.is_tensor(got) and ('形状为 ' .. shape_text(got) .. ' 的张量') or type(got), shape_text(x)))
    end
    got = got:double()
    if not lm.allclose(got, want, 1e-6, 1e-9) then
      local why
      for _, m in ipairs(SE_MISTAKES) do
        if lm.allclose(got, se_ref(x, w1, b1, w2, b2, m[1]), 1e-6, 1e-9) then why = m[2] break end
      end
      if not why and lm.allclose(got, x, 1e-9, 1e-12) then
        why = say('it returns x unchanged: squeeze (the mean of each map), excite (two layers, the sigmoid), then multiply each channel by its weight',
          '它原样返回了 x：先 squeeze（每张特征图的均值），再 excitation（两层加 sigmoid），最后每个通道乘以它的权重')
      end
      local _, msg = lesson.compare(got, want, { what = say(what, what_zh .. '的结果'), tol = 1e-6 })
      if why then return false, say(msg.en .. ': ' .. why.en, (msg.zh or msg.en) .. '：' .. why.zh) end
      return false, msg
    end
  end
  return true, say('right: squeeze by the global average, two layers and a sigmoid, one weight per channel multiplying its map, on every shape',
    '对：用全局平均做 squeeze，两层加 sigmoid，每个通道一个权重乘到它的特征图上，各种形状都对')
end

-- ---------------------------------------------------------------- patchify

-- (B, C, H, W) -> (B, N, C*p*p) in ViT's order, or a mistake's order.
local function patch_ref(x, p, v)
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local n, m = H // p, W // p
  local t = x:reshape(B, C, n, p, m, p)            -- b, c, i, u, j, v
  if v == 'plain' then return x:reshape(B, n * m, C * p * p) end
  if v == 'grid' then return t:permute(1, 5, 3, 2, 4, 6):reshape(B, n * m, C * p * p) end
  if v == 'last' then return t:permute(1, 3, 5, 4, 6, 2):reshape(B, n * m, C * p * p) end
  if v == 'pixel' then return t:permute(1, 3, 5, 2, 6, 4):reshape(B, n * m, C * p * p) end
  return t:permute(1, 3, 5, 2, 4, 6):reshape(B, n * m, C * p * p)
end

local PATCH_MISTAKES = {
  { 'plain', say('it matches a plain reshape: the values of one patch are not next to each other in memory (a patch spans p rows of the image), so permute the dims before the reshape',
    '它和直接 reshape 一样：一个 patch 的值在内存里并不相邻（它跨越图像的 p 行），reshape 之前要先 permute 维度') },
  { 'grid', say('it matches the patches taken column by column: patch n = i * (W/p) + j, row i of the grid first (row-major, as a conv with stride p lists its outputs)',
    '它和按列取 patch 一样：第 n 个 patch 是 i * (W/p) + j，先按网格的行（行优先，与步长为 p 的卷积列出输出的顺序相同）') },
  { 'last', say('it matches channel-last flattening (p, p, C): ViT flattens a patch as (C, p, p), channel first, like a conv weight of shape (D, C, p, p)',
    '它和按通道在后展平 (p, p, C) 一样：ViT 按 (C, p, p) 展平一个 patch，通道在前，与形状为 (D, C, p, p) 的卷积权重一致') },
  { 'pixel', say('it matches each patch transposed: inside a patch, row u first, then column v',
    '它和把每个 patch 转置一样：patch 内部先按行 u，再按列 v') },
}

local function check_patchify(env)
  local ok, fn = lesson.need(env, 'patchify')
  if not ok then return false, fn end
  -- {B, C, H, W, p}: non-square grids, several channels, p = 1, one patch
  local cases = { { 2, 3, 6, 4, 2 }, { 1, 2, 9, 6, 3 }, { 3, 1, 8, 12, 4 }, { 2, 2, 4, 6, 1 },
    { 1, 3, 5, 5, 5 }, { 2, 4, 14, 7, 7 } }
  for n, c in ipairs(cases) do
    local B, C, H, W, p = table.unpack(c, 1, 5)
    local x = rand(7 * n, 1, B, C, H, W)
    local want = patch_ref(x, p)
    local what = string.format('patchify(x, %d) on x of shape [%d, %d, %d, %d]', p, B, C, H, W)
    local what_zh = string.format('patchify(x, %d) 在形状为 [%d, %d, %d, %d] 的 x 上', p, B, C, H, W)
    local rok, got = lesson.try(fn, x:clone(), p)
    if not rok then return false, got end
    if not lm.is_tensor(got) or shape_text(got) ~= shape_text(want) then
      local swapped = lm.is_tensor(got) and got:dim() == 3 and got:size(2) == want:size(3) and got:size(3) == want:size(2)
      return false, say(string.format('%s returns %s; expected %s: (B, N, C*p*p), one row per patch, N = (H/p) * (W/p)%s', what,
          lm.is_tensor(got) and ('a tensor of shape ' .. shape_text(got)) or type(got), shape_text(want),
          swapped and ' (yours has the last two dims swapped)' or ''),
        string.format('%s返回%s；应为 %s：(B, N, C*p*p)，每个 patch 一行，N = (H/p) * (W/p)%s', what_zh,
          lm.is_tensor(got) and ('形状为 ' .. shape_text(got) .. ' 的张量') or type(got), shape_text(want),
          swapped and '（你的最后两维对调了）' or ''))
    end
    got = got:double()
    if not lm.allclose(got, want, 1e-9, 1e-12) then
      local why
      for _, m in ipairs(PATCH_MISTAKES) do
        if lm.allclose(got, patch_ref(x, p, m[1]), 1e-9, 1e-12) then why = m[2] break end
      end
      local _, msg = lesson.compare(got, want, { what = say(what, what_zh .. '的结果'), tol = 1e-9 })
      if why then return false, say(msg.en .. ': ' .. why.en, (msg.zh or msg.en) .. '：' .. why.zh) end
      return false, msg
    end
    -- the patch embedding: patchify then a linear layer equals a convolution of kernel p, stride p
    local D = 5
    local wconv = rand(7 * n + 3, 1, D, C, p, p)
    local conv = F.conv2d(x, wconv, nil, { stride = p }):flatten(3):transpose(2, 3)
    local lin = got:matmul(wconv:reshape(D, C * p * p):t())
    if not lm.allclose(lin, conv, 1e-6, 1e-9) then
      return false, say(what .. ': its patches times a weight of shape (D, C*p*p) differ from F.conv2d with kernel p and stride p',
        what_zh .. '：它的 patch 乘以形状为 (D, C*p*p) 的权重，与核为 p、步长为 p 的 F.conv2d 结果不同')
    end
  end
  return true, say('right: the patches in ViT\'s order on every shape, and patchify + linear equals a convolution of kernel p and stride p',
    '对：各种形状上 patch 的顺序都与 ViT 相同，而且 patchify 再接线性层等于核为 p、步长为 p 的卷积')
end

return {
  title = say('Classification networks from AlexNet to ViT: what each block costs',
    '从 AlexNet 到 ViT 的图像分类网络：每个模块的代价'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (image classification networks)',
    '智能计算系统 第 3 章：深度学习（图像分类网络）'),
  summary = say([[The notes' map of classification networks, block by block: parameters and
multiply-adds of a convolution (groups, depthwise), AlexNet against VGG16, 1x1 convolutions in
Inception and ResNet, SENet's channel attention, depthwise-separable convolution counted and timed,
and ViT's patches, with a tiny ViT against a tiny CNN on Fashion-MNIST.]],
    [[按讲义里图像分类网络的脉络，一个模块一个模块地看：卷积的参数量与乘加次数（分组、深度卷积），
AlexNet 对 VGG16，Inception 和 ResNet 里的 1x1 卷积，SENet 的通道注意力，深度可分离卷积的计数与
实测时间，以及 ViT 的 patch，最后在 Fashion-MNIST 上比较一个小 ViT 和一个小 CNN。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('The map: from AlexNet to ViT', '脉络：从 AlexNet 到 ViT'),
      text = say([[
The notes sort the image classification networks by the idea each one brought:

- CNN: AlexNet (2012), ZF-Net, VGG (2014): deeper stacks of convolutions;
- a network inside the network: GoogLeNet and Inception v2-v4: parallel branches, 1x1 convolutions;
- connections between layers: ResNet (2015), ResNeXt, DenseNet;
- channel attention: SENet (2017);
- lightweight: separable convolution, MobileNet (2017), EfficientNet;
- Transformer attention: ViT (2020), Swin Transformer, DeiT (and beyond: CLIP, MLP-Mixer).

This lesson reads them by cost: how many parameters a block holds and how many multiply-adds
(MACs) it spends on one image. AlexNet (Krizhevsky, Sutskever, Hinton, 2012) won ImageNet with
five convolutions and three fully connected layers, ReLU, dropout, and two GPUs of 3 GB: conv2,
conv4 and conv5 were split into two groups, one per GPU. Below are its five convolution layers
built as nn modules (groups = 2 where the paper split them) and run on a 227x227 image; the
parameter counts are counted on the modules. The picture is the model scene: the layers and their
counts, conv1's 96 filters of 11x11 (random: untrained).]],
        [[
讲义按每类网络带来的想法给图像分类网络分了类：

- CNN：AlexNet（2012）、ZF-Net、VGG（2014）：更深的卷积堆叠；
- 网络中的网络：GoogLeNet 与 Inception v2-v4：并行的分支、1x1 卷积；
- 层与层的连接：ResNet（2015）、ResNeXt、DenseNet；
- 通道注意力：SENet（2017）；
- 轻量化：可分离卷积，MobileNet（2017）、EfficientNet；
- Transformer 注意力机制：ViT（2020）、Swin Transformer、DeiT（再往后有多模态对齐 CLIP、
  MLP-Mixer）。

本课按代价来读它们：一个模块有多少参数，处理一张图像要做多少次乘加（MACs）。AlexNet
（Krizhevsky、Sutskever、Hinton，2012）凭五个卷积层、三个全连接层、ReLU、dropout 和两块 3 GB
的 GPU 赢得了 ImageNet：conv2、conv4、conv5 被分成两组，每块 GPU 一组。下面把它的五个卷积层搭成
nn 模块（论文分组的地方 groups = 2），在一张 227x227 的图像上运行；参数个数是在模块上数出来的。
画面是模型场景：各层和它们的参数个数，conv1 的 96 个 11x11 滤波器（随机初始化，未训练）。]]),
      code = [[
function count_params(m)      -- the parameters of a module, counted on its tensors
  local n = 0
  for _, p in ipairs(m:parameters()) do n = n + p:numel() end
  return n
end
lm.manual_seed(1)
alexnet = nn.Sequential(
  nn.Conv2d(3, 96, 11, {stride = 4}), nn.ReLU(), nn.MaxPool2d(3, 2),              -- conv1
  nn.Conv2d(96, 256, 5, {padding = 2, groups = 2}), nn.ReLU(), nn.MaxPool2d(3, 2), -- conv2
  nn.Conv2d(256, 384, 3, {padding = 1}), nn.ReLU(),                                 -- conv3
  nn.Conv2d(384, 384, 3, {padding = 1, groups = 2}), nn.ReLU(),                     -- conv4
  nn.Conv2d(384, 256, 3, {padding = 1, groups = 2}), nn.ReLU(), nn.MaxPool2d(3, 2)) -- conv5
local x = lm.zeros(1, 3, 227, 227)
local k = 0
lm.no_grad(function()
  for i = 1, #alexnet do
    x = alexnet[i](x)
    if alexnet[i].in_channels then
      k = k + 1
      print(string.format('conv%d  groups %d  output %3dx%2dx%2d  %7d parameters', k,
        alexnet[i].groups, x:size(2), x:size(3), x:size(4), count_params(alexnet[i])))
    end
  end
end)
print(string.format('features: %d parameters; flattened to %d values for the first FC layer',
  count_params(alexnet), x:numel()))
]],
      expect = [[
conv1  groups 1  output  96x55x55    34944 parameters
conv2  groups 2  output 256x27x27   307456 parameters
conv3  groups 1  output 384x13x13   885120 parameters
conv4  groups 2  output 384x13x13   663936 parameters
conv5  groups 2  output 256x13x13   442624 parameters
features: 2334080 parameters; flattened to 9216 values for the first FC layer
]],
      scene = function(env) return env.alexnet end,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Parameters of a convolution', '卷积层的参数量'),
      text = say([[
A convolution of cin input channels to cout output channels with k x k kernels has cout filters;
each filter holds a k x k kernel for every input channel it sees, plus one bias. With groups = g
the input channels are split into g groups and each filter sees only its group, cin/g channels
(AlexNet's two GPUs: g = 2); g = cin is the depthwise convolution of MobileNet, one k x k kernel
per channel. So

  parameters = cout x (cin / g) x k x k  (+ cout with a bias)

`conv_params` below is a first version that ignores the groups and the bias flag. The code
compares it with the count on each of AlexNet's convolution modules.]],
        [[
一个 cin 个输入通道、cout 个输出通道、k x k 卷积核的卷积层有 cout 个滤波器；每个滤波器在它看到的
每个输入通道上都有一个 k x k 的核，外加一个偏置。groups = g 时输入通道被分成 g 组，每个滤波器只看
自己那一组，即 cin/g 个通道（AlexNet 的两块 GPU：g = 2）；g = cin 就是 MobileNet 的深度卷积
（depthwise），每个通道一个 k x k 的核。所以

  参数量 = cout x (cin / g) x k x k  （有偏置时再加 cout）

下面的 `conv_params` 是第一版，它忽略了分组和 bias 开关。代码把它和 AlexNet 每个卷积模块上数出的
参数个数比较。]]),
      code = [[
function conv_params(cin, cout, k, groups, bias)   -- to correct: groups and bias are ignored
  return cout * cin * k * k
end
for _, m in ipairs(alexnet:modules()) do
  if m.in_channels then
    print(string.format('Conv2d(%3d, %3d, %2d, groups %d): conv_params says %7d, the module has %7d',
      m.in_channels, m.out_channels, m.kernel_size[1], m.groups,
      conv_params(m.in_channels, m.out_channels, m.kernel_size[1], m.groups, m.bias ~= nil),
      count_params(m)))
  end
end
]],
      expect = [[
Conv2d(  3,  96, 11, groups 1): conv_params says   34848, the module has   34944
Conv2d( 96, 256,  5, groups 2): conv_params says  614400, the module has  307456
Conv2d(256, 384,  3, groups 1): conv_params says  884736, the module has  885120
Conv2d(384, 384,  3, groups 2): conv_params says 1327104, the module has  663936
Conv2d(384, 256,  3, groups 2): conv_params says  884736, the module has  442624
]],
      exercise = {
        prompt = say([[
Correct `conv_params(cin, cout, k, groups, bias)` (bias is true or false) so it returns the number
of parameters of nn.Conv2d(cin, cout, k, {groups = groups, bias = bias}). The check counts real
modules on many random configurations: grouped, depthwise (groups = cin), with and without bias,
kernels from 1 to 11.]],
          [[
改正 `conv_params(cin, cout, k, groups, bias)`（bias 为 true 或 false），让它返回
nn.Conv2d(cin, cout, k, {groups = groups, bias = bias}) 的参数个数。检查时会在许多随机配置上数
真实模块的参数：分组、深度卷积（groups = cin）、有无偏置、卷积核从 1 到 11。]]),
        hints = {
          say('Each of the cout filters has (cin // groups) * k * k weights.',
            'cout 个滤波器中每个有 (cin // groups) * k * k 个权重。'),
          say('The bias adds one number per filter: + (bias and cout or 0).',
            '偏置是每个滤波器一个数：+ (bias and cout or 0)。'),
        },
        check = check_conv_params,
        solution = [[
function conv_params(cin, cout, k, groups, bias)
  return cout * (cin // groups) * k * k + (bias and cout or 0)
end
]],
        wrong = {
          [[
function conv_params(cin, cout, k, groups, bias)   -- groups ignored
  return cout * cin * k * k + (bias and cout or 0)
end
]],
          [[
function conv_params(cin, cout, k, groups, bias)   -- a bias per input channel
  return cout * (cin // groups) * k * k + (bias and cin or 0)
end
]],
          [[
function conv_params(cin, cout, k, groups, bias)   -- cout divided by the groups too
  return (cout // groups) * (cin // groups) * k * k + (bias and cout or 0)
end
]],
          [[
function conv_params(cin, cout, k, groups, bias)   -- the bias whatever the flag
  return cout * (cin // groups) * k * k + cout
end
]],
          [[
function conv_params(cin, cout, k, groups, bias)   -- k weights per kernel
  return cout * (cin // groups) * k + (bias and cout or 0)
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Multiply-adds of a convolution', '卷积层的乘加次数'),
      text = say([[
Parameters say how much memory a layer needs; its computation depends on the input size too.
Each output value of a convolution is one filter's window times the input: (cin / g) x k x k
multiply-adds (MACs). The output has cout channels of out_h x out_w values, with the output size
of the CNN lesson:

  out = floor((n + 2p - k) / s) + 1
  MACs = out_h x out_w x cout x (cin / g) x k x k    (one image, no bias)

A FLOP count usually says 2 x MACs (a multiply and an add). `conv_macs` below uses the input size
and forgets the groups; the code compares it with what AlexNet's modules really do, read off each
module: its weight's size times the number of output positions F.conv2d produced.]],
        [[
参数量说的是一层需要多少内存；计算量还和输入尺寸有关。卷积的每个输出值是一个滤波器的窗口与
输入相乘再相加：(cin / g) x k x k 次乘加（MACs）。输出有 cout 个通道，每个 out_h x out_w 个值，
输出尺寸用 CNN 那一课的公式：

  out = floor((n + 2p - k) / s) + 1
  MACs = out_h x out_w x cout x (cin / g) x k x k    （一张图像，不计偏置）

FLOPs 通常记作 2 x MACs（一次乘法加一次加法）。下面的 `conv_macs` 用的是输入尺寸，而且忘了
分组；代码把它和 AlexNet 各模块实际做的乘加次数比较，后者从每个模块上读出：权重的大小乘以
F.conv2d 实际产生的输出位置数。]]),
      code = [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- to correct
  return h * w * cout * cin * k * k
end
-- layer_macs(m, x): the multiply-adds of module m on input x, read off the module and its output
function layer_macs(m, x)
  local y = lm.no_grad(function() return m(x) end)
  if m.in_channels then return m.weight:numel() * y:size(3) * y:size(4), y end
  if m.in_features then return m.weight:numel(), y end
  return 0, y
end
local x, total = lm.zeros(1, 3, 227, 227), 0
for i = 1, #alexnet do
  local m = alexnet[i]
  local h, w = x:size(3), x:size(4)
  local macs
  macs, x = layer_macs(m, x)
  total = total + macs
  if m.in_channels then
    print(string.format('%3dx%-3d -> %2dx%-2d  conv_macs says %10d, the module does %9d', h, w,
      x:size(3), x:size(4), conv_macs(m.in_channels, m.out_channels, m.kernel_size[1], m.groups,
      h, w, m.stride[1], m.padding[1]), macs))
  end
end
print(string.format('AlexNet convolutions: %.1f M MACs per 227x227 image (counted on the modules)',
  total / 1e6))
]],
      expect = [[
227x227 -> 55x55  conv_macs says 1795682592, the module does 105415200
 27x27  -> 27x27  conv_macs says  447897600, the module does 223948800
 13x13  -> 13x13  conv_macs says  149520384, the module does 149520384
 13x13  -> 13x13  conv_macs says  224280576, the module does 112140288
 13x13  -> 13x13  conv_macs says  149520384, the module does  74760192
AlexNet convolutions: 665.8 M MACs per 227x227 image (counted on the modules)
]],
      exercise = {
        prompt = say([[
Correct `conv_macs(cin, cout, k, groups, h, w, stride, padding)` so it returns the multiply-adds
of nn.Conv2d(cin, cout, k, {stride = stride, padding = padding, groups = groups}) on one h x w
image (bias not counted). The check runs F.conv2d on many random sizes, strides, paddings and
groups, and counts the outputs it really produces.]],
          [[
改正 `conv_macs(cin, cout, k, groups, h, w, stride, padding)`，让它返回
nn.Conv2d(cin, cout, k, {stride = stride, padding = padding, groups = groups}) 处理一张 h x w
图像的乘加次数（不计偏置）。检查时会在许多随机的尺寸、步长、padding 和分组上运行 F.conv2d，
数它实际产生的输出。]]),
        hints = {
          say('The output height is (h + 2 * padding - k) // stride + 1, the width likewise with w.',
            '输出的高是 (h + 2 * padding - k) // stride + 1，宽同理用 w。'),
          say('Then out_h * out_w * cout * (cin // groups) * k * k.',
            '然后是 out_h * out_w * cout * (cin // groups) * k * k。'),
        },
        check = check_conv_macs,
        solution = [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)
  local oh = (h + 2 * padding - k) // stride + 1
  local ow = (w + 2 * padding - k) // stride + 1
  return oh * ow * cout * (cin // groups) * k * k
end
]],
        wrong = {
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- groups ignored
  local oh = (h + 2 * padding - k) // stride + 1
  local ow = (w + 2 * padding - k) // stride + 1
  return oh * ow * cout * cin * k * k
end
]],
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- no + 1
  local oh = (h + 2 * padding - k) // stride
  local ow = (w + 2 * padding - k) // stride
  return oh * ow * cout * (cin // groups) * k * k
end
]],
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- padding on one side
  local oh = (h + padding - k) // stride + 1
  local ow = (w + padding - k) // stride + 1
  return oh * ow * cout * (cin // groups) * k * k
end
]],
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- the input size
  return h * w * cout * (cin // groups) * k * k
end
]],
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- FLOPs, not MACs
  local oh = (h + 2 * padding - k) // stride + 1
  local ow = (w + 2 * padding - k) // stride + 1
  return 2 * oh * ow * cout * (cin // groups) * k * k
end
]],
          [[
function conv_macs(cin, cout, k, groups, h, w, stride, padding)   -- no floor
  local oh = (h + 2 * padding - k) / stride + 1
  local ow = (w + 2 * padding - k) / stride + 1
  return oh * ow * cout * (cin // groups) * k * k
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('AlexNet against VGG16, layer by layer', 'AlexNet 对 VGG16，逐层计算'),
      text = say([[
With the two formulas a whole network is a table. `net_cost(specs, c, h, w)` below walks a list of
layers ({'conv', cout, k, stride, padding, groups}, {'pool', k, stride}, {'fc', out}) and adds up
parameters and MACs per kind of layer; a fully connected layer of n inputs and m outputs has
n x m + m parameters and n x m MACs. AlexNet's convolutions are checked against the modules of
step 1 (the same number); VGG16's 138 million parameters are computed, not built (that would be
553 MB of float32).

Look at where the costs sit. In both networks the fully connected layers hold most of the
parameters (AlexNet 96%, VGG16 89%), and the convolutions do almost all the multiply-adds (VGG16:
15.35 G of 15.47 G per 224x224 image, 23 times AlexNet's convolutions). So later networks drop the big
FC layers (GoogLeNet and ResNet end with a global average pooling), and why everything after VGG
works on the convolutions' arithmetic.]],
        [[
有了这两个公式，整个网络就是一张表。下面的 `net_cost(specs, c, h, w)` 沿着一串层
（{'conv', cout, k, stride, padding, groups}、{'pool', k, stride}、{'fc', out}）走一遍，按层的种类
累加参数量和乘加次数；n 个输入、m 个输出的全连接层有 n x m + m 个参数、n x m 次乘加。AlexNet 的
卷积部分与第 1 步的模块对照（数字相同）；VGG16 的 1.38 亿个参数是算出来的，没有真的搭出来（那要
553 MB 的 float32）。

看代价落在哪里。两个网络里全连接层都占了大部分参数（AlexNet 96%，VGG16 89%），而几乎所有的乘加
都在卷积里（VGG16：每张 224x224 图像 15.47 G 次乘加中有 15.35 G，是 AlexNet 卷积部分的 23 倍）。所以后来
的网络去掉了大的全连接层（GoogLeNet 和 ResNet 最后用全局平均池化），VGG 之后的工作也都在卷积的
计算量上下功夫。]]),
      code = [[
function net_cost(specs, c, h, w)   -- parameters and MACs per kind, computed with the formulas
  local cost = {conv = {0, 0}, fc = {0, 0}}
  local n = nil                     -- inputs of an FC layer (after flattening)
  for _, s in ipairs(specs) do
    if s[1] == 'conv' then
      local cout, k, st, p, g = s[2], s[3], s[4], s[5], s[6] or 1
      local oh, ow = (h + 2 * p - k) // st + 1, (w + 2 * p - k) // st + 1
      cost.conv[1] = cost.conv[1] + cout * (c // g) * k * k + cout
      cost.conv[2] = cost.conv[2] + oh * ow * cout * (c // g) * k * k
      c, h, w = cout, oh, ow
    elseif s[1] == 'pool' then
      h, w = (h - s[2]) // s[3] + 1, (w - s[2]) // s[3] + 1
    elseif s[1] == 'fc' then
      n = n or c * h * w
      cost.fc[1], cost.fc[2] = cost.fc[1] + n * s[2] + s[2], cost.fc[2] + n * s[2]
      n = s[2]
    end
  end
  return cost
end
local alex = {{'conv', 96, 11, 4, 0}, {'pool', 3, 2}, {'conv', 256, 5, 1, 2, 2}, {'pool', 3, 2},
  {'conv', 384, 3, 1, 1}, {'conv', 384, 3, 1, 1, 2}, {'conv', 256, 3, 1, 1, 2}, {'pool', 3, 2},
  {'fc', 4096}, {'fc', 4096}, {'fc', 1000}}
local vgg16 = {}
for _, b in ipairs({{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}}) do
  for _ = 1, b[2] do vgg16[#vgg16 + 1] = {'conv', b[1], 3, 1, 1} end
  vgg16[#vgg16 + 1] = {'pool', 2, 2}
end
for _, n in ipairs({4096, 4096, 1000}) do vgg16[#vgg16 + 1] = {'fc', n} end
local a, v = net_cost(alex, 3, 227, 227), net_cost(vgg16, 3, 224, 224)
print(string.format('AlexNet convs: computed %d parameters, counted on the modules %d',
  a.conv[1], count_params(alexnet)))
print('          conv params  FC params  total params  conv MACs  FC MACs')
for _, r in ipairs({{'AlexNet', a}, {'VGG16', v}}) do
  local c = r[2]
  print(string.format('%-9s %10.2fM %9.2fM %12.2fM %9.2fG %7.3fG', r[1], c.conv[1] / 1e6,
    c.fc[1] / 1e6, (c.conv[1] + c.fc[1]) / 1e6, c.conv[2] / 1e9, c.fc[2] / 1e9))
end
print('(computed with the formulas of steps 2 and 3, one image, biases in the parameters)')
]],
      expect = [[
AlexNet convs: computed 2334080 parameters, counted on the modules 2334080
          conv params  FC params  total params  conv MACs  FC MACs
AlexNet         2.33M     58.63M        60.97M      0.67G   0.059G
VGG16          14.71M    123.64M       138.36M     15.35G   0.124G
(computed with the formulas of steps 2 and 3, one image, biases in the parameters)
]],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('1x1 convolutions: Inception and the ResNet bottleneck', '1x1 卷积：Inception 与 ResNet 的瓶颈结构'),
      text = say([[
GoogLeNet (Szegedy et al., 2014) puts a small network inside the network: the Inception module
runs 1x1, 3x3 and 5x5 convolutions and a pooling side by side and concatenates their channels, so
the next layer sees features of several sizes. Run naively on 192 channels that is expensive: the
5x5 branch alone reads all 192 channels 25 times per output. The trick is a 1x1 convolution that
first reduces the channels before the big kernels (192 -> 96 before the 3x3, 192 -> 16 before
the 5x5): a 1x1 convolution mixes the channels at each pixel, cin x cout MACs per pixel.

ResNet-50 and deeper use the same trick in the bottleneck block: 1x1 (256 -> 64), 3x3 (64 -> 64),
1x1 (64 -> 256), instead of two 3x3 convolutions on 256 channels.

The code builds GoogLeNet's inception (3a) on a 192x28x28 input, naive and with the reductions,
and the two ResNet blocks on 256x14x14. Parameters are counted on the modules and MACs read off
them (layer_macs of step 3: each convolution's weight size times the output positions it
produced). The naive module's output is also wider, 416 channels: its pooling branch passes all
192 input channels through, and the 1x1 after the pooling in (3a) brings them down to 32.]],
        [[
GoogLeNet（Szegedy 等，2014）在网络里放了一个小网络：Inception 模块把 1x1、3x3、5x5 卷积和一个
池化并排运行，再把它们的通道拼接起来，让下一层同时看到多种尺度的特征。直接在 192 个通道上这样做
很贵：光是 5x5 的分支，每个输出就要把 192 个通道读 25 遍。诀窍是在大卷积核之前先用 1x1 卷积减少
通道（3x3 之前 192 -> 96，5x5 之前 192 -> 16）：1x1 卷积在每个像素上混合通道，每个像素
cin x cout 次乘加。

ResNet-50 及更深的 ResNet 在瓶颈块（bottleneck）里用了同一个诀窍：1x1（256 -> 64）、3x3
（64 -> 64）、1x1（64 -> 256），代替两个 256 通道的 3x3 卷积。

代码在 192x28x28 的输入上搭出 GoogLeNet 的 inception (3a)，朴素版和带降维的版本各一个，再在
256x14x14 上搭出两种 ResNet 块。参数个数在模块上数，乘加次数从模块上读（第 3 步的 layer_macs：
每个卷积的权重大小乘以它实际产生的输出位置数）。朴素版的输出还更宽，有 416 个通道：它的池化分支
把 192 个输入通道原样传了过去，而 (3a) 在池化之后用 1x1 卷积把它们降到 32 个。]]),
      code = [[
local function conv(cin, cout, k) return nn.Conv2d(cin, cout, k, {padding = k // 2}) end
local function pool() return nn.MaxPool2d(3, 1, {padding = 1}) end
Branches = nn.Module:extend('Branches')      -- parallel branches, outputs concatenated
function Branches:__init(list) self.branches = nn.ModuleList(list) end
function Branches:forward(x)
  local outs = {}
  for i = 1, #self.branches do outs[i] = self.branches[i](x) end
  return lm.cat(outs, 2)
end
local naive = Branches({conv(192, 64, 1), conv(192, 128, 3), conv(192, 32, 5), pool()})
local inception = Branches({conv(192, 64, 1),
  nn.Sequential(conv(192, 96, 1), nn.ReLU(), conv(96, 128, 3)),
  nn.Sequential(conv(192, 16, 1), nn.ReLU(), conv(16, 32, 5)),
  nn.Sequential(pool(), conv(192, 32, 1))})
local basic = nn.Sequential(conv(256, 256, 3), nn.ReLU(), conv(256, 256, 3))
local bottleneck = nn.Sequential(conv(256, 64, 1), nn.ReLU(), conv(64, 64, 3), nn.ReLU(),
  conv(64, 256, 1))
function block_macs(block, x)   -- the MACs of every layer of block, each on the input it gets
  local total = 0
  local function walk(m, x)
    if m.branches then
      local outs = {}
      for i = 1, #m.branches do outs[i] = walk(m.branches[i], x) end
      return lm.cat(outs, 2)
    elseif m.forward == nn.Sequential.forward then
      for i = 1, #m do x = walk(m[i], x) end
      return x
    end
    local macs, y = layer_macs(m, x)
    total = total + macs
    return y
  end
  local y = walk(block, x)
  return total, y
end
print('block              input      output     parameters     MACs')
for _, b in ipairs({{'inception naive', naive, {1, 192, 28, 28}},
    {'inception (3a)', inception, {1, 192, 28, 28}},
    {'resnet 2 x 3x3', basic, {1, 256, 14, 14}}, {'resnet bottleneck', bottleneck, {1, 256, 14, 14}}}) do
  local macs, y = block_macs(b[2], lm.zeros(table.unpack(b[3])))
  print(string.format('%-18s %-10s %-10s %10d %7.1fM', b[1], table.concat(b[3], 'x', 2),
    table.concat(y:shape(), 'x', 2), count_params(b[2]), macs / 1e6))
end
print('(parameters counted on the modules, MACs read off them, one image)')
]],
      expect = [[
block              input      output     parameters     MACs
inception naive    192x28x28  416x28x28      387296   303.5M
inception (3a)     192x28x28  256x28x28      163696   128.0M
resnet 2 x 3x3     256x14x14  256x14x14     1180160   231.2M
resnet bottleneck  256x14x14  256x14x14       70016    13.6M
(parameters counted on the modules, MACs read off them, one image)
]],
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('SENet: attention over the channels', 'SENet：通道注意力'),
      text = say([[
SENet (Hu, Shen, Sun, "Squeeze-and-excitation networks", 2017; it won the last ImageNet
classification challenge, top-5 error 2.25%) lets a block weigh its own channels. For a feature
map x of C channels:

  squeeze:     s = the global average of each channel      (B, C)
  excitation:  e = sigmoid(W2 relu(W1 s + b1) + b2)
               W1: C/r x C, W2: C x C/r
  scale:       out = x * e, each channel times its weight in (0, 1)

r is the reduction ratio (16 in the paper). The block is cheap: about 2 C^2 / r parameters and as
many MACs per image, whatever the spatial size. On the bottleneck of step 5 (C = 256, r = 16) it
adds 8,464 parameters to 70,016 and 8,192 MACs to 13.6 million. `SEBlock` below is the block as a
module; its forward calls `se_scale`, still to be written (it returns x unchanged, so every
channel's scale is 1). The picture is the model scene of step 5's bottleneck with the SE block at
its end (the shortcut left out): its two small Linear layers next to the convolutions.]],
        [[
SENet（Hu、Shen、Sun，《Squeeze-and-excitation networks》，2017；它赢得了最后一届 ImageNet 分类
比赛，top-5 错误率 2.25%）让一个模块给自己的通道加权。对一个有 C 个通道的特征图 x：

  squeeze：    s = 每个通道的全局平均                  (B, C)
  excitation： e = sigmoid(W2 relu(W1 s + b1) + b2)
               W1：C/r x C，W2：C x C/r
  scale：      out = x * e，每个通道乘以它 (0, 1) 之间的权重

r 是压缩比（论文里是 16）。这个模块很便宜：大约 2 C^2 / r 个参数，每张图像的乘加次数也差不多
这么多，和空间尺寸无关。加在第 5 步的瓶颈块上（C = 256，r = 16），参数在 70,016 之外增加 8,464
个，乘加在 1360 万之外增加 8,192 次。下面的 `SEBlock` 是写成模块的 SE 块；它的 forward 调用
`se_scale`，而这个函数还要你来写（现在它原样返回 x，所以每个通道的缩放都是 1）。画面是第 5 步的
瓶颈块末尾接上 SE 块的模型场景（省略了捷径）：两个小小的 Linear 层挨着那几个卷积。]]),
      code = [[
SEBlock = nn.Module:extend('SEBlock')
function SEBlock:__init(c, r)
  self.fc1 = nn.Linear(c, c // r)
  self.fc2 = nn.Linear(c // r, c)
end
function SEBlock:forward(x)
  return se_scale(x, self.fc1.weight, self.fc1.bias, self.fc2.weight, self.fc2.bias)
end
function se_scale(x, w1, b1, w2, b2)   -- to write: squeeze, excitation, scale
  return x
end
lm.manual_seed(2)
se = SEBlock(256, 16)
se_bottleneck = nn.Sequential(nn.Conv2d(256, 64, 1), nn.ReLU(), nn.Conv2d(64, 64, 3, {padding = 1}),
  nn.ReLU(), nn.Conv2d(64, 256, 1), se)   -- step 5's bottleneck with SE at its end (no shortcut)
print('SEBlock(256, 16):', count_params(se), 'parameters; the bottleneck with it:',
  count_params(se_bottleneck), '(counted on the modules)')
local x = lm.rand(1, 256, 14, 14) + 0.5
local y = lm.no_grad(function() return se(x) end)
local scale = (y:sum({3, 4}) / x:sum({3, 4}))[1]
print(string.format('output %s; the first 4 channels scaled by %.3f %.3f %.3f %.3f',
  table.concat(y:shape(), 'x'), scale[1]:item(), scale[2]:item(), scale[3]:item(), scale[4]:item()))
]],
      scene = function(env) return env.se_bottleneck end,
      exercise = {
        prompt = say([[
Write `se_scale(x, w1, b1, w2, b2)`: x is (B, C, H, W), w1 (C/r, C), b1 (C/r), w2 (C, C/r),
b2 (C); return x with each channel of each image multiplied by its excitation weight,
sigmoid(w2 relu(w1 s + b1) + b2), s the channel's global average. The check compares it with a
reference on several shapes (channels of different means, maps of 1 x 7 and 2 x 2), then `:run`
shows the scales of SEBlock.]],
          [[
写出 `se_scale(x, w1, b1, w2, b2)`：x 的形状是 (B, C, H, W)，w1 为 (C/r, C)，b1 为 (C/r)，w2 为
(C, C/r)，b2 为 (C)；返回 x，其中每张图像的每个通道乘以它的 excitation 权重
sigmoid(w2 relu(w1 s + b1) + b2)，s 是该通道的全局平均。检查时会在几种形状上与参考实现比较
（各通道的均值不同，特征图有 1 x 7 和 2 x 2 的）；之后 `:run` 会显示 SEBlock 的各通道缩放。]]),
        hints = {
          say('s = x:mean({3, 4}) is (B, C); with one image per row, W1 s is s:matmul(w1:t()).',
            's = x:mean({3, 4}) 的形状是 (B, C)；一行一张图像时，W1 s 写作 s:matmul(w1:t())。'),
          say('Make e (B, C) broadcast over the maps: x * e:view(B, C, 1, 1).',
            '让 e (B, C) 在特征图上广播：x * e:view(B, C, 1, 1)。'),
        },
        check = check_se,
        solution = [[
function se_scale(x, w1, b1, w2, b2)
  local s = x:mean({3, 4})
  local e = (F.relu(s:matmul(w1:t()) + b1):matmul(w2:t()) + b2):sigmoid()
  return x * e:view(x:size(1), x:size(2), 1, 1)
end
]],
        wrong = {
          [[
function se_scale(x, w1, b1, w2, b2)   -- squeeze by the maximum
  local s = x:amax({3, 4})
  local e = (F.relu(s:matmul(w1:t()) + b1):matmul(w2:t()) + b2):sigmoid()
  return x * e:view(x:size(1), x:size(2), 1, 1)
end
]],
          [[
function se_scale(x, w1, b1, w2, b2)   -- no sigmoid
  local s = x:mean({3, 4})
  local e = F.relu(s:matmul(w1:t()) + b1):matmul(w2:t()) + b2
  return x * e:view(x:size(1), x:size(2), 1, 1)
end
]],
          [[
function se_scale(x, w1, b1, w2, b2)   -- softmax over the channels
  local s = x:mean({3, 4})
  local e = (F.relu(s:matmul(w1:t()) + b1):matmul(w2:t()) + b2):softmax(-1)
  return x * e:view(x:size(1), x:size(2), 1, 1)
end
]],
          [[
function se_scale(x, w1, b1, w2, b2)   -- the weights added
  local s = x:mean({3, 4})
  local e = (F.relu(s:matmul(w1:t()) + b1):matmul(w2:t()) + b2):sigmoid()
  return x + e:view(x:size(1), x:size(2), 1, 1)
end
]],
          [[
function se_scale(x, w1, b1, w2, b2)   -- no ReLU between the two layers
  local s = x:mean({3, 4})
  local e = ((s:matmul(w1:t()) + b1):matmul(w2:t()) + b2):sigmoid()
  return x * e:view(x:size(1), x:size(2), 1, 1)
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('MobileNet: depthwise-separable convolution, counted and timed',
        'MobileNet：深度可分离卷积的计数与计时'),
      text = say([[
MobileNet (Howard et al., 2017) splits a k x k convolution of C to C channels into two:

- depthwise: one k x k kernel per channel (groups = C): C x k x k MACs per pixel;
- pointwise: a 1x1 convolution mixing the channels: C x C MACs per pixel.

Against C x C x k x k for the standard convolution that is a fraction 1/C + 1/k^2 of the work:
with 3x3 kernels 8 to 9 times fewer MACs (and parameters) once C is large.

Fewer MACs is not the same as less time. The code times both on a batch of 8 maps of 28x28, C = 16
to 128: the standard convolution as F.conv2d runs it by default (algo 'auto': Winograd on this CPU
path, for 3x3 stride 1 with 8 or more channels) and forced to im2col + GEMM, and the separable pair
(depthwise through im2col group by group, pointwise as one GEMM). Times are CPU measured on one
thread, the median of 5 runs after a warm-up; they are noisy, and nothing checks them. The charts
(curves scene) show MACs (computed) and milliseconds (measured) against C.

On the machine this lesson was written on (2 shared cores, one thread), at C = 128 the separable
pair took 9-10 ms (two thirds of it depthwise), the standard convolution 10-11 ms with Winograd and
18-21 ms with im2col: 8.4 times fewer MACs bought twice less time than im2col, and against the
best standard kernel at most 1.2 times less, in some runs nothing. The
depthwise convolution does 9 multiply-adds per value it reads: almost no arithmetic per byte
moved, so it is bound by memory, not by the multipliers, and Winograd cuts the standard
convolution's multiplies too. MobileNet is fast only with kernels written for it, on phones and
accelerators alike.]],
        [[
MobileNet（Howard 等，2017）把一个 C 到 C 通道的 k x k 卷积拆成两个：

- 深度卷积（depthwise）：每个通道一个 k x k 的核（groups = C）：每个像素 C x k x k 次乘加；
- 逐点卷积（pointwise）：混合通道的 1x1 卷积：每个像素 C x C 次乘加。

与标准卷积的 C x C x k x k 相比，计算量只占 1/C + 1/k^2：3x3 的核、C 较大时，乘加次数（和参数量）
少 8 到 9 倍。

乘加少不等于时间短。代码在一批 8 张 28x28、C = 16 到 128 的特征图上给两者计时：标准卷积用
F.conv2d 默认的方式（algo 'auto'：在这条 CPU 路径上，对 8 个通道以上、步长 1 的 3x3 卷积用
Winograd），以及强制用 im2col + GEMM；可分离的一对（深度卷积逐组走 im2col，逐点卷积就是一次
GEMM）。时间是 CPU 实测，单线程，预热一次后取 5 次的中位数；有噪声，没有任何检查依赖它。图表
（curves 场景）画出乘加次数（计算所得）和毫秒数（实测）随 C 的变化。

在编写本课的机器上（2 个共享的核，单线程），C = 128 时可分离的一对用了 9-10 ms（其中三分之二是
深度卷积），标准卷积用 Winograd 10-11 ms、用 im2col 18-21 ms：乘加少 8.4 倍，比 im2col 快一倍，
比最好的标准卷积内核至多快 1.2 倍，有几次一点也不快。深度
卷积每读一个值只做 9 次乘加：每搬一个字节几乎没有计算，它受限于内存而不是乘法器；而 Winograd 也
减少了标准卷积的乘法。MobileNet 要真的快，就需要为它专门写的内核，手机上和加速器上都是如此。]]),
      code = [[
function on_one_thread(fn, ...)   -- runs fn on one CPU thread, then restores the setting
  local n = lm.get_num_threads()
  lm.set_num_threads(1)
  local r = table.pack(pcall(fn, ...))
  lm.set_num_threads(n)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end
function median_ms(fn, rounds)    -- once untimed, then the median of rounds runs
  fn()
  local t = {}
  for r = 1, rounds do
    local t0 = lm.sys.clock()
    fn()
    t[r] = (lm.sys.clock() - t0) * 1e3
  end
  table.sort(t)
  return t[(rounds + 1) // 2]
end
viz.clear()
lm.manual_seed(3)
print('   C  std MACs  sep MACs ratio | std auto ms  std im2col ms  depthwise ms  pointwise ms')
on_one_thread(lm.no_grad, function()
  for _, C in ipairs({16, 32, 64, 128}) do
    local x = lm.randn(8, C, 28, 28)
    local ws, wd, wp = lm.randn(C, C, 3, 3), lm.randn(C, 1, 3, 3), lm.randn(C, C, 1, 1)
    local std_macs, sep_macs = 8 * 784 * C * C * 9, 8 * 784 * (C * 9 + C * C)
    local auto = median_ms(function() return F.conv2d(x, ws, nil, {padding = 1}) end, 5)
    local im2col = median_ms(function()
      return F.conv2d(x, ws, nil, {padding = 1, algo = 'im2col'}) end, 5)
    local dw = median_ms(function() return F.conv2d(x, wd, nil, {padding = 1, groups = C}) end, 5)
    local pw = median_ms(function() return F.conv2d(x, wp) end, 5)
    print(string.format('%4d %8.1fM %8.1fM %5.1f | %11.2f %14.2f %13.2f %13.2f', C, std_macs / 1e6,
      sep_macs / 1e6, std_macs / sep_macs, auto, im2col, dw, pw))
    viz.plot('MMACs/standard', C, std_macs / 1e6, {x = 'channels C'})
    viz.plot('MMACs/separable', C, sep_macs / 1e6, {x = 'channels C'})
    viz.plot('ms/standard (auto: Winograd)', C, auto, {x = 'channels C'})
    viz.plot('ms/standard (im2col)', C, im2col, {x = 'channels C'})
    viz.plot('ms/separable (depthwise + pointwise)', C, dw + pw, {x = 'channels C'})
  end
end)
print('(batch 8, 28x28; MACs computed; times CPU measured, 1 thread, median of 5 after a warm-up)')
]],
      scene = { 'curves', smoothing = 0 },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('ViT: an image as a sequence of patches', 'ViT：把图像看成 patch 的序列'),
      text = say([[
The Vision Transformer (Dosovitskiy et al., "An image is worth 16x16 words", 2020) has no
convolution in its body. It cuts the image into p x p patches, flattens each into a vector of
C x p x p values, maps it by one linear layer to a token of d values, adds a learned position
embedding (and a [class] token), and runs a Transformer encoder as on a sentence of words. A
224x224 image with p = 16 is a sequence of 14 x 14 = 196 tokens.

The order is fixed: patches row by row over the grid (patch n is at grid row i, column j with
n = i x (W/p) + j, counting from 0), and inside a patch channel first, then row, then column
(C, p, p), the layout of a conv weight. In that order the patch embedding is exactly a
convolution with kernel p and stride p, which is how it is usually implemented.

`patchify` below only reshapes. The values of one patch are not next to each other in memory (a
patch spans p rows of the image), so its "patches" are whole strips of rows, as the output shows
on a 4x4 image of the numbers 0 to 15 against a convolution whose one-hot filters read the true
patches. The picture is the tensor scene of that image cut the right way: the 6-D view that
reshape + permute make (variant view), and the copy that contiguous() makes (Tab), in which each
patch's four values are adjacent.]],
        [[
Vision Transformer（Dosovitskiy 等，《An image is worth 16x16 words》，2020）主体里没有卷积。
它把图像切成 p x p 的 patch，每个展平成 C x p x p 个值的向量，用一个线性层映射成 d 维的 token，
加上可学习的位置嵌入（以及一个 [class] token），再像处理一句话的词一样送进 Transformer 编码器。
一张 224x224 的图像、p = 16 时就是 14 x 14 = 196 个 token 的序列。

顺序是固定的：patch 在网格上逐行排列（第 n 个 patch 位于网格第 i 行第 j 列，
n = i x (W/p) + j，都从 0 数）；patch 内部先通道、再行、再列 (C, p, p)，与卷积权重的布局相同。
按这个顺序，patch 嵌入恰好就是核为 p、步长为 p 的卷积，实际实现通常也是这么做的。

下面的 `patchify` 只做了 reshape。一个 patch 的值在内存里并不相邻（它跨越图像的 p 行），所以它
得到的 "patch" 是一整条一整条的行：输出在一张写着 0 到 15 的 4x4 图像上把它和一个卷积对比，那个
卷积的 one-hot 滤波器读出的才是真正的 patch。画面是这张图像按正确方式切开的张量场景：reshape 加
permute 得到的 6 维视图（view 变体），以及 contiguous() 做出的副本（按 Tab），副本里每个 patch
的四个值是相邻的。]]),
      code = [[
function patchify(x, p)   -- to correct: a plain reshape scrambles the patches
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  return x:reshape(B, (H // p) * (W // p), C * p * p)
end
local function line(t)    -- numbers as 0 1 2, not 0.0 1.0 2.0
  local out = {}
  for i, v in ipairs(t) do out[i] = string.format('%g', v) end
  return table.concat(out, ' ')
end
local function rows(t)    -- the rows of an (N, D) tensor, separated by |
  local out = {}
  for n, r in ipairs(t:tolist()) do out[n] = line(r) end
  return table.concat(out, ' | ')
end
local img = lm.arange(16):float():view(1, 1, 4, 4)   -- values 0..15, row by row
print('the image, row by row:   ' .. line(img:view(-1):tolist()))
print('patchify(img, 2):        ' .. rows(patchify(img, 2)[1]))
-- a convolution of kernel 2, stride 2 with 4 one-hot filters reads the true patches
local eye = lm.eye(4):view(4, 1, 2, 2)
print('conv, kernel 2 stride 2: '
  .. rows(F.conv2d(img, eye, nil, {stride = 2}):flatten(3):transpose(2, 3)[1]))
patch_view = img:reshape(1, 1, 2, 2, 2, 2):permute(1, 3, 5, 2, 4, 6)   -- b, i, j, c, u, v
]],
      expect = [[
the image, row by row:   0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
patchify(img, 2):        0 1 2 3 | 4 5 6 7 | 8 9 10 11 | 12 13 14 15
conv, kernel 2 stride 2: 0 1 4 5 | 2 3 6 7 | 8 9 12 13 | 10 11 14 15
]],
      scene = function(env) return env.patch_view end,
      exercise = {
        prompt = say([[
Correct `patchify(x, p)`: x is (B, C, H, W) with H and W multiples of p; return (B, N, C*p*p),
N = (H/p) x (W/p), patch n = i x (W/p) + j (grid row i, column j, both from 0), each patch
flattened as (C, p, p). The check compares it with a reference on non-square images, several
channels, p = 1 and a single patch, and checks that your patches times a weight equal a
convolution of kernel p and stride p.]],
          [[
改正 `patchify(x, p)`：x 的形状是 (B, C, H, W)，H 和 W 是 p 的倍数；返回 (B, N, C*p*p)，
N = (H/p) x (W/p)，第 n 个 patch 是 n = i x (W/p) + j（网格第 i 行第 j 列，都从 0 数），每个 patch
按 (C, p, p) 展平。检查时会在非正方形的图像、多个通道、p = 1 和只有一个 patch 的情况下与参考实现
比较，并检查你的 patch 乘以权重等于核为 p、步长为 p 的卷积。]]),
        hints = {
          say('x:reshape(B, C, H // p, p, W // p, p) names the dims b, c, i, u, j, v.',
            'x:reshape(B, C, H // p, p, W // p, p) 的各维依次是 b、c、i、u、j、v。'),
          say('Permute them to b, i, j, c, u, v, then reshape to (B, N, C*p*p). (F.unfold(x, p, {stride = p}):transpose(2, 3) is another way.)',
            '把它们 permute 成 b、i、j、c、u、v，再 reshape 成 (B, N, C*p*p)。（F.unfold(x, p, {stride = p}):transpose(2, 3) 是另一种写法。）'),
        },
        check = check_patchify,
        solution = [[
function patchify(x, p)
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  return x:reshape(B, C, H // p, p, W // p, p):permute(1, 3, 5, 2, 4, 6)
    :reshape(B, (H // p) * (W // p), C * p * p)
end
]],
        wrong = {
          [[
function patchify(x, p)   -- the patches column by column
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  return x:reshape(B, C, H // p, p, W // p, p):permute(1, 5, 3, 2, 4, 6)
    :reshape(B, (H // p) * (W // p), C * p * p)
end
]],
          [[
function patchify(x, p)   -- channel-last flattening (p, p, C)
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  return x:reshape(B, C, H // p, p, W // p, p):permute(1, 3, 5, 4, 6, 2)
    :reshape(B, (H // p) * (W // p), C * p * p)
end
]],
          [[
function patchify(x, p)   -- each patch transposed
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  return x:reshape(B, C, H // p, p, W // p, p):permute(1, 3, 5, 2, 6, 4)
    :reshape(B, (H // p) * (W // p), C * p * p)
end
]],
          [[
function patchify(x, p)   -- (B, C*p*p, N): unfold's layout, not transposed
  return F.unfold(x, p, {stride = p})
end
]],
        },
      },
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('A tiny ViT against a tiny CNN', '小 ViT 对小 CNN'),
      text = say([[
Both models below have about 20,000 parameters. The ViT cuts a 28x28 Fashion-MNIST image into 16
patches of 7x7, embeds each into 32 values, adds a [class] token and position embeddings, and
runs 2 pre-LN Transformer encoder layers (4 heads, GELU); the [class] token's output is
classified. The CNN is two 3x3 convolutions with max pooling and one linear layer. Both train with
Adam on the same 2048 training images (batches of 64, 120 steps: under 4 passes) and are tested
on 1000 test images. Training runs on one thread (on_one_thread of step 7): at these tiny sizes
more threads mostly wait for each other.

The budget is tiny, and that is the point: on this subset the CNN comes out ahead (on the machine
this lesson was written on, about 82% against 74% test accuracy, each model trained in about
1.5 s; your numbers are printed below, CPU measured). A convolution builds in two assumptions, locality and
translation equivariance, that a ViT has to learn from data: the ViT paper matched the best
ResNets only after pre-training on 14 to 300 million images, and trained on ImageNet-1k alone it
did worse. DeiT (Touvron et al., 2021) made ViT train well on ImageNet-1k with strong augmentation
and distillation from a CNN teacher. The curves are the training loss and accuracy per batch of
both; `vit_vs_cnn(600)` trains five times longer (about 20 s; there it gave 84% against 76%).]],
        [[
下面两个模型都有大约 20,000 个参数。ViT 把一张 28x28 的 Fashion-MNIST 图像切成 16 个 7x7 的
patch，每个嵌入成 32 个值，加上 [class] token 和位置嵌入，跑 2 层 pre-LN 的 Transformer 编码器
（4 个头，GELU）；对 [class] token 的输出做分类。CNN 是两个带最大池化的 3x3 卷积加一个线性层。
两者都用 Adam，在同样的 2048 张训练图像上训练（每批 64 张，120 步：不到 4 遍），在 1000 张测试
图像上测试。训练在一个线程上进行（第 7 步的 on_one_thread）：这么小的规模，多线程大多是在互相
等待。

预算很小，而这正是要点：在这个子集上 CNN 领先（在编写本课的机器上，测试准确率大约是 82% 对
74%，每个模型训练约 1.5 秒；你的数字在下面打印出来，是 CPU 实测）。卷积自带两个假设：局部性和平移
等变性，ViT 必须从数据里学到它们：ViT 的论文在 1400 万到 3 亿张图像上预训练之后才追上最好的
ResNet，只用 ImageNet-1k 训练时它更差。DeiT（Touvron 等，2021）靠强数据增强和从 CNN 教师蒸馏，
才让 ViT 只用 ImageNet-1k 就训练得好。曲线是两者每个批次的训练损失和准确率；`vit_vs_cnn(600)`
训练五倍长的时间（大约 20 秒；在那台机器上得到 84% 对 76%）。]]),
      code = [[
local function patches(x, p)      -- the lesson's own patchify (step 8's answer)
  local B, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  if H % p ~= 0 or W % p ~= 0 then
    error(string.format('patches: an image of %d x %d is not a whole number of %d x %d patches', H, W, p, p), 2)
  end
  return x:reshape(B, C, H // p, p, W // p, p):permute(1, 3, 5, 2, 4, 6)
    :reshape(B, (H // p) * (W // p), C * p * p)
end
TinyViT = nn.Module:extend('TinyViT')
function TinyViT:__init(p, d, heads, layers)
  self.p = p
  self.embed = nn.Linear(p * p, d)                               -- the patch embedding
  self.cls = (lm.randn(1, 1, d) * 0.02):requires_grad_()         -- the [class] token
  self.pos = (lm.randn(1, (28 // p) ^ 2 + 1, d) * 0.02):requires_grad_()
  local blocks = {}
  for i = 1, layers do
    blocks[i] = nn.TransformerEncoderLayer(d, heads, {dim_feedforward = 2 * d, dropout = 0,
      batch_first = true, norm_first = true, activation = 'gelu'})
  end
  self.blocks = nn.Sequential(table.unpack(blocks))
  self.norm = nn.LayerNorm(d)
  self.head = nn.Linear(d, 10)
end
function TinyViT:forward(x)
  local z = self.embed(patches(x, self.p))
  z = lm.cat({self.cls:expand(x:size(1), 1, z:size(3)), z}, 2) + self.pos
  z = self.norm(self.blocks(z))
  return self.head(z:select(2, 1))                               -- the [class] token's output
end
function tiny_cnn()
  return nn.Sequential(nn.Conv2d(1, 16, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
end
train_set = data.FashionMNIST{split = 'train', limit = 2048}
test_set = data.FashionMNIST{split = 'test', limit = 1000}
function fit(model, steps, name)  -- Adam, batches of 64; returns test accuracy and seconds
  local opt = optim.Adam(model:parameters(), {lr = 3e-3})
  local t0 = lm.sys.clock()
  model:train()
  for s = 1, steps do
    local first = ((s - 1) * 64) % 2048 + 1
    local x, y = train_set.data:narrow(1, first, 64), train_set.targets:narrow(1, first, 64)
    local out = model(x)
    local loss = F.cross_entropy(out, y)
    opt:zero_grad(); loss:backward(); opt:step()
    viz.plot('loss/' .. name, s, loss:item())
    viz.plot('accuracy/' .. name, s, out:argmax(2):eq(y):float():mean():item())
  end
  local seconds = lm.sys.clock() - t0
  model:eval()
  local right = lm.no_grad(function() return model(test_set.data):argmax(2):eq(test_set.targets) end)
  return right:float():mean():item(), seconds
end
function vit_vs_cnn(steps)
  viz.clear()
  for _, m in ipairs({{'ViT', function() return TinyViT(7, 32, 4, 2) end}, {'CNN', tiny_cnn}}) do
    lm.manual_seed(1)
    local model = m[2]()
    local acc, seconds = on_one_thread(fit, model, steps, m[1])
    print(string.format('%s: %d parameters, test accuracy %.1f%% after %d steps (%.1f s, CPU measured)',
      m[1], count_params(model), 100 * acc, steps, seconds))
  end
end
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
vit_vs_cnn(lm.build_info().sanitize and 30 or 120)
]],
      scene = 'curves',
    },
  },
}
