--[[
AI Computing Systems, chapter 3: image style transfer, following the notes — a content image p and
a style image a through a CNN, content features kept by position, style features as Gram matrices
(which channels fire together, wherever), and an image x optimised until it has both; then the
real-time variant, an image transformation network trained for one style. Lumen's feature network
is gen.StyleNet (lumen/generative.lua): fixed random convolutions at five scales, since no trained
VGG can be downloaded; the lesson says what that keeps and what it cannot.
Steps: the images and the idea (skimage's chelsea and gravel, 64 x 64; synthetic stand-ins when
python3-skimage is missing); the Gram matrix written by the student (checked against loops in
float64 on random shapes, each classic mistake named) and shown not to change when positions are
shuffled while the maps do; Gatys' optimisation with L-BFGS against Adam on the same budget; the
content weight against the style weight (two weights, the heavier being step 3's run, and the
student's pick_weight checked on made-up result lists); Johnson's real-time network trained briefly by gen.train_transform, one
forward pass timed against the optimisation, and the student's break-even count of images.
Steps 1, 3, 4 and 5 show the samples scene (inputs and results side by side), step 2 the features
scene of gen.StyleNet on the content image.
Format: docs/lessons.md.
]]
local say = lesson.say

-- ---------------------------------------------------------------- scenes

-- The samples scene with rows of images: rows = {{name_en, name_zh, image, image, ...}, ...}
-- (images (3, H, W) in [0, 1]; anything else, a missing one included, is left out). One row is
-- drawn without labels (side by side); with no image at all, the scene's own demonstration.
local function picture_rows(rows, source_en, source_zh)
  local zh = lesson.lang() == 'zh'
  local images, labels, classes = {}, {}, {}
  for _, r in ipairs(rows) do
    local k
    for i = 3, 8 do
      local im = r[i]
      if lm.is_tensor(im) and im:dim() == 3 and im:size(1) == 3 then
        if not k then
          classes[#classes + 1] = zh and r[2] or r[1]
          k = #classes
        end
        images[#images + 1] = im:float():clamp(0, 1)
        labels[#labels + 1] = k
      end
    end
  end
  if #images == 0 then return 'samples' end
  local t = { images = lm.stack(images, 1), source = zh and source_zh or source_en }
  if #classes > 1 then t.labels, t.classes = labels, classes end
  return 'samples', t
end

local function from(env)
  if env.found_images == false then return 'synthetic stand-ins', '合成的替代图像' end
  return 'skimage: chelsea, gravel', 'skimage：chelsea、gravel'
end

-- ---------------------------------------------------------------- the Gram matrix (step 2)

local function shape_text(t)
  if lm.is_tensor(t) then t = t:shape() end
  local parts = {}
  for i, v in ipairs(t) do parts[i] = tostring(v) end
  return '(' .. table.concat(parts, ', ') .. ')'
end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- The reference: G[n][i][j] = sum_k F[n][i][k] F[n][j][k] / (C H W), by loops over Lua numbers
-- (float64), flat in the order (n, i, j).
local function gram_loops(f)
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local v = f:reshape(N, C, H * W):tolist()
  local out = {}
  for n = 1, N do
    for i = 1, C do
      for j = 1, C do
        local s = 0
        for k = 1, H * W do s = s + v[n][i][k] * v[n][j][k] end
        out[#out + 1] = s / (C * H * W)
      end
    end
  end
  return out
end

local function flat(t) return t:double():reshape(-1):tolist() end

local function close(got, want, tol)
  if #got ~= #want then return false end
  local scale = 0
  for _, w in ipairs(want) do scale = math.max(scale, math.abs(w)) end
  for i = 1, #want do
    local g = got[i]
    if g ~= g or math.abs(g - want[i]) > tol * math.max(scale, 1e-300) then return false end
  end
  return true
end

local function scaled(list, k)
  local out = {}
  for i, v in ipairs(list) do out[i] = v * k end
  return out
end

-- Checks the student's gram on one feature tensor f (float64); returns nil when right, else the
-- message naming the mistake.
local function check_gram_case(gram, f)
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local HW, CHW = H * W, C * H * W
  local sh = shape_text(f)
  local before = f:clone()
  local ok, g = lesson.try(gram, f)
  if not ok then
    return say(string.format('gram(f) raised an error for f of shape %s: %s', sh, lesson.text(g)),
      string.format('对形状为 %s 的 f，gram(f) 出错：%s', sh, lesson.text(g)))
  end
  if not lm.is_tensor(g) then
    return say(string.format('gram(f) returned a %s for f of shape %s, not a tensor of shape (N, C, C)', type(g), sh),
      string.format('对形状为 %s 的 f，gram(f) 返回的是 %s，而不是形状为 (N, C, C) 的张量', sh, type(g)))
  end
  if not same_shape(f:shape(), before:shape()) or (f - before):abs():max():item() ~= 0 then
    return say(string.format('gram(f) changed f (shape %s): work on a reshaped copy (reshape and matmul leave their input alone)', sh),
      string.format('gram(f) 改动了 f（形状 %s）：在 reshape 出来的副本上计算（reshape 和 matmul 不会改动输入）', sh))
  end
  local want = gram_loops(f)
  local gs = g:shape()
  local first = gram_loops(f:narrow(1, 1, 1))
  if not same_shape(gs, { N, C, C }) then
    if same_shape(gs, { N, HW, HW }) and HW ~= C then
      return say(string.format('gram(f) for f of shape %s has shape %s: that is F^T F, a matrix over the %d positions. The Gram matrix is over the channels: F F^T, (N, C, C) = %s',
          sh, shape_text(g), HW, shape_text({ N, C, C })),
        string.format('对形状为 %s 的 f，gram(f) 的形状是 %s：这是 F^T F，一个关于 %d 个位置的矩阵。Gram 矩阵是关于通道的：F F^T，(N, C, C) = %s',
          sh, shape_text(g), HW, shape_text({ N, C, C })))
    end
    if (same_shape(gs, { C, C }) or same_shape(gs, { 1, C, C })) and N > 1 then
      if close(flat(g), first, 1e-6) then
        return say(string.format('gram(f) for a batch f of shape %s returns %s, the Gram matrix of the first image only (f[1]). Each of the %d images needs its own: (N, C, C) = %s',
            sh, shape_text(g), N, shape_text({ N, C, C })),
          string.format('对一批形状为 %s 的 f，gram(f) 返回 %s，只是第一张图（f[1]）的 Gram 矩阵。这 %d 张图每张都要有自己的：(N, C, C) = %s',
            sh, shape_text(g), N, shape_text({ N, C, C })))
      end
      return say(string.format('gram(f) for a batch f of shape %s returns %s: one Gram matrix per image is asked, (N, C, C) = %s; the images of a batch are not pooled',
          sh, shape_text(g), shape_text({ N, C, C })),
        string.format('对一批形状为 %s 的 f，gram(f) 返回 %s：要的是每张图一个 Gram 矩阵，(N, C, C) = %s；一批里的图不能合在一起算',
          sh, shape_text(g), shape_text({ N, C, C })))
    end
    if same_shape(gs, { N * C, N * C }) and N > 1 then
      return say(string.format('gram(f) for f of shape %s has shape %s: the channels of different images were multiplied together. Reshape to (N, C, H*W), not (N*C, H*W): the product is taken within each image',
          sh, shape_text(g)),
        string.format('对形状为 %s 的 f，gram(f) 的形状是 %s：不同图像的通道被乘到了一起。应 reshape 成 (N, C, H*W)，而不是 (N*C, H*W)：乘积只在每张图内部做',
          sh, shape_text(g)))
    end
    return say(string.format('gram(f) for f of shape %s has shape %s; expected (N, C, C) = %s', sh, shape_text(g), shape_text({ N, C, C })),
      string.format('对形状为 %s 的 f，gram(f) 的形状是 %s；应为 (N, C, C) = %s', sh, shape_text(g), shape_text({ N, C, C })))
  end
  local got = flat(g)
  if close(got, want, 1e-6) then return nil end
  -- what the common mistakes give for this f
  local fd = f:double()
  local centred = fd:reshape(N, C, HW)
  centred = centred - centred:mean(3, true)
  local mixed = fd:reshape(N, HW, C):transpose(2, 3)
  local firsts = {}
  for _ = 1, N do for _, v in ipairs(first) do firsts[#firsts + 1] = v end end
  local named = {
    { scaled(want, CHW), say(string.format('not normalised: divide F F^T by C*H*W (%d here), so that layers of different sizes are comparable', CHW),
      string.format('没有归一化：F F^T 要除以 C*H*W（这里是 %d），这样不同大小的层才能相互比较', CHW)) },
    { scaled(want, C), say(string.format('divided by H*W (%d) only; the Gram matrix of the notes divides by C*H*W (%d): the channels count too', HW, CHW),
      string.format('只除了 H*W（%d）；讲义中的 Gram 矩阵除以 C*H*W（%d）：通道数也要算进去', HW, CHW)) },
    { scaled(want, HW), say(string.format('divided by C (%d) only; divide by C*H*W (%d): the sum runs over the H*W positions', C, CHW),
      string.format('只除了 C（%d）；应除以 C*H*W（%d）：求和是对 H*W 个位置做的', C, CHW)) },
    { scaled(want, 1 / N), say(string.format('divided by N*C*H*W: each image\'s Gram matrix is divided by its own C*H*W (%d); the batch size does not enter', CHW),
      string.format('除以了 N*C*H*W：每张图的 Gram 矩阵只除以它自己的 C*H*W（%d）；批大小不参与', CHW)) },
    { flat(mixed:matmul(mixed:transpose(2, 3)) / CHW), say(
      'channels and positions mixed: f:reshape(N, H*W, C) (or view) cuts each image\'s memory, which holds channel after channel, into rows of C consecutive numbers, which are pieces of one channel, not one value of each channel. Reshape to (N, C, H*W): one row per channel',
      '通道和位置混在了一起：f:reshape(N, H*W, C)（或 view）把每张图的内存——一个通道接一个通道地存放——切成每行 C 个相邻的数，它们是同一个通道里的一段，而不是每个通道各一个值。应 reshape 成 (N, C, H*W)：每个通道一行') },
    { flat(centred:matmul(centred:transpose(2, 3)) / CHW), say(
      'you subtracted each channel\'s mean first: that is the centred Gram matrix (gen.gram(f, true)), which gen.style_transfer uses with random features; this exercise asks for the plain one, F F^T / (C H W)',
      '你先减去了每个通道的均值：这是中心化的 Gram 矩阵（gen.gram(f, true)），gen.style_transfer 在随机特征上用的是它；这个练习要的是普通的 F F^T / (C H W)') },
    { firsts, say(string.format('every image of the batch got the first image\'s Gram matrix; each of the %d images needs its own', N),
      string.format('这一批里每张图得到的都是第一张图的 Gram 矩阵；这 %d 张图每张都要有自己的', N)) },
  }
  for _, m in ipairs(named) do
    if close(got, m[1], 1e-6) then
      return say(string.format('gram(f) for f of shape %s: %s', sh, m[2].en), string.format('对形状为 %s 的 f，gram(f)：%s', sh, m[2].zh))
    end
  end
  local _, msg = lesson.compare(got, want, { what = 'gram(f)' })
  return say(string.format('for f of shape %s: %s', sh, lesson.text(msg)), string.format('对形状为 %s 的 f：%s', sh, lesson.text(msg)))
end

local function check_gram_cases(gram)
  local shapes = { { 2, 3, 5, 7 }, { 3, 1, 4, 5 }, { 1, 4, 3, 3 }, { 2, 5, 1, 9 }, { 4, 2, 3, 1 } }
  local rnd = lesson.lcg(77)
  for _ = 1, 3 do
    shapes[#shapes + 1] = { 1 + math.floor(rnd() * 4), 1 + math.floor(rnd() * 6), 1 + math.floor(rnd() * 7), 1 + math.floor(rnd() * 7) }
  end
  for k, s in ipairs(shapes) do
    -- non-negative like ReLU features, float64
    local f = lesson.rand(100 + k, 1, s[1], s[2], s[3], s[4]):abs()
    local msg = check_gram_case(gram, f)
    if msg then return false, msg end
  end
  return true
end

local function check_gram(env)
  local ok, gram = lesson.need(env, 'gram')
  if not ok then return false, gram end
  -- gen.gram watched while the cases run (put back after): the exercise is to write it
  local G = require 'lumen.generative'
  local real, called = G.gram, false
  G.gram = function(...)
    called = true
    return real(...)
  end
  local right, msg = check_gram_cases(gram)
  G.gram = real
  if not right then return false, msg end
  if called then
    return false, say('gram(f) gives the right numbers by calling gen.gram: write it yourself, from reshape, transpose and matmul',
      'gram(f) 是调用 gen.gram 得到正确结果的：请自己用 reshape、transpose 和 matmul 写出来')
  end
  return true, say('right: one C x C matrix per image, F F^T / (C H W), equal to the loops in float64 on every shape (N up to 4, C = 1, H or W of 1)',
    '对：每张图一个 C x C 矩阵 F F^T / (C H W)，在每种形状上（N 最大到 4、C = 1、H 或 W 为 1）都与 float64 的循环结果一致')
end

-- ---------------------------------------------------------------- the weights (step 4)

local function pw_show(results, bound)
  local parts = {}
  for _, r in ipairs(results) do
    parts[#parts + 1] = string.format('{weight = %s, content = %s, style = %s}', lesson.show(r.weight), lesson.show(r.content), lesson.show(r.style))
  end
  return string.format('results = {%s}, max_content_loss = %s', table.concat(parts, ', '), lesson.show(bound))
end

-- The answers a right solution and each mistake give.
local function pw_answers(results, bound)
  local a = { right = 0, strict = 0, style = 0 }
  local smallest
  for _, r in ipairs(results) do
    if r.content <= bound then
      a.right = math.max(a.right, r.weight)
      smallest = math.min(smallest or math.huge, r.weight)
      a.last = r.weight
      a.first = a.first or r.weight
    end
    if r.content < bound then a.strict = math.max(a.strict, r.weight) end
    if r.style <= bound then a.style = math.max(a.style, r.weight) end
  end
  a.smallest = smallest or 0
  return a
end

local function copy_results(results)
  local out = {}
  for i, r in ipairs(results) do out[i] = { weight = r.weight, content = r.content, style = r.style } end
  return out
end

-- Made-up result lists: the content loss grows and the style loss falls with the weight, as in
-- the runs; the order is shuffled; a bound equal to one entry's content loss half the time.
local function random_results(rnd)
  local pool = { 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300 }
  local n = 2 + math.floor(rnd() * 5)
  local start = 1 + math.floor(rnd() * (#pool - n + 1))
  local list, c, s = {}, 0.005 + 0.02 * rnd(), 0.1 + 0.2 * rnd()
  for i = 1, n do
    list[i] = { weight = pool[start + i - 1], content = c, style = s }
    c, s = c + 0.003 + 0.03 * rnd(), s * (0.1 + 0.4 * rnd())
  end
  for i = n, 2, -1 do
    local j = 1 + math.floor(rnd() * i)
    list[i], list[j] = list[j], list[i]
  end
  local pick = list[1 + math.floor(rnd() * n)]
  local bound = rnd() < 0.5 and pick.content or pick.content * (0.8 + 0.4 * rnd())
  return list, bound
end

local PW_CASES = {
  { { { weight = 0.3, content = 0.03, style = 0.07 }, { weight = 10, content = 0.073, style = 0.0022 },
    { weight = 0.1, content = 0.016, style = 0.16 }, { weight = 1, content = 0.053, style = 0.011 } }, 0.06 },
  { { { weight = 3, content = 0.05, style = 0.012 }, { weight = 1, content = 0.035, style = 0.03 },
    { weight = 30, content = 0.09, style = 0.002 }, { weight = 0.3, content = 0.02, style = 0.12 },
    { weight = 10, content = 0.07, style = 0.004 } }, 0.05 },
  { { { weight = 1, content = 0.04, style = 0.006 }, { weight = 0.1, content = 0.015, style = 0.009 } }, 0.01 },
  { { { weight = 100, content = 0.08, style = 0.002 }, { weight = 1, content = 0.04, style = 0.01 } }, 0.5 },
  { { { weight = 5, content = 0.04, style = 0.01 } }, 0.04 },
}

local function check_pick_weight(env)
  local ok, pick = lesson.need(env, 'pick_weight')
  if not ok then return false, pick end
  local cases = {}
  for i, c in ipairs(PW_CASES) do cases[i] = c end
  local rnd = lesson.lcg(31)
  for _ = 1, 6 do
    local list, bound = random_results(rnd)
    cases[#cases + 1] = { list, bound }
  end
  -- last, the runs of the step (when they are there): a bound between the two largest content losses
  local run_bound
  if type(env.results) == 'table' and #env.results >= 2 then
    local cs = {}
    for _, r in ipairs(env.results) do
      if type(r) ~= 'table' or type(r.weight) ~= 'number' or type(r.content) ~= 'number' or type(r.style) ~= 'number' then
        cs = nil
        break
      end
      cs[#cs + 1] = r.content
    end
    if cs then
      table.sort(cs)
      run_bound = math.floor((cs[#cs - 1] + cs[#cs]) / 2 * 1000 + 0.5) / 1000
      cases[#cases + 1] = { copy_results(env.results), run_bound }
    end
  end
  for _, case in ipairs(cases) do
    local results, bound = case[1], case[2]
    local a = pw_answers(results, bound)
    local where = pw_show(results, bound)
    local tok, got = lesson.try(pick, copy_results(results), bound)
    if not tok then
      return false, say('pick_weight raised an error for ' .. where .. ': ' .. lesson.text(got),
        '对 ' .. where .. '，pick_weight 出错：' .. lesson.text(got))
    end
    local g = lesson.number(got)
    if g == a.right then goto next_case end
    if got == nil and a.right == 0 then
      return false, say('pick_weight returned nil for ' .. where .. ', where no weight keeps the content loss within the bound: return 0, as asked (style weight 0 keeps the content image, content loss 0)',
        '对 ' .. where .. '，没有哪个权重能让内容损失不超过上限，pick_weight 却返回了 nil：按要求应返回 0（风格权重为 0 时就是内容图本身，内容损失为 0）')
    end
    if type(got) == 'table' then
      return false, say('pick_weight returned a table for ' .. where .. ': return the weight itself (entry.weight), a number',
        '对 ' .. where .. '，pick_weight 返回了一个表：应返回权重本身（entry.weight），一个数')
    end
    if g == nil then
      return false, say(string.format('pick_weight returned %s for %s; expected the number %s', tostring(got), where, lesson.show(a.right)),
        string.format('对 %s，pick_weight 返回了 %s；应为数 %s', where, tostring(got), lesson.show(a.right)))
    end
    local named = {
      { a.strict, say(string.format('a content loss exactly equal to the bound is within it: "at most" is <= (the weight %s has content loss %s = max_content_loss)', lesson.show(a.right), lesson.show(bound)),
        string.format('内容损失恰好等于上限也算在内：“不超过”是 <=（权重 %s 的内容损失 %s 正好等于 max_content_loss）', lesson.show(a.right), lesson.show(bound))) },
      { a.style, say('that weight has its style loss within the bound; the bound is on the content loss (entry.content): how much of the content\'s layout may be lost',
        '这是风格损失不超过上限的权重；上限是给内容损失（entry.content）的：内容的布局最多能丢多少') },
      { a.last, say('that is the last entry of the list within the bound, but the list is not sorted by weight: compare the weights themselves',
        '这是列表中最后一个不超过上限的条目，但列表并没有按权重排序：要比较权重本身') },
      { a.first, say('that is the first entry of the list within the bound, but the list is not sorted by weight: compare the weights themselves',
        '这是列表中第一个不超过上限的条目，但列表并没有按权重排序：要比较权重本身') },
      { a.smallest, say('that is the smallest weight within the bound; the largest is asked: the most style the content bound allows',
        '这是不超过上限的最小权重；要的是最大的那个：内容上限允许的最多的风格') },
    }
    for _, m in ipairs(named) do
      if g == m[1] and m[1] ~= a.right then
        return false, say(string.format('pick_weight returned %s for %s, expected %s: %s', lesson.show(g), where, lesson.show(a.right), m[2].en),
          string.format('对 %s，pick_weight 返回 %s，应为 %s：%s', where, lesson.show(g), lesson.show(a.right), m[2].zh))
      end
    end
    for _, r in ipairs(results) do
      if g == r.content then
        return false, say(string.format('pick_weight returned %s for %s: that is a content loss; return its weight', lesson.show(g), where),
          string.format('对 %s，pick_weight 返回 %s：这是一个内容损失；应返回它对应的权重', where, lesson.show(g)))
      end
    end
    do
      return false, say(string.format('pick_weight returned %s for %s, expected %s (the largest weight whose content loss is <= max_content_loss, else 0)', lesson.show(g), where, lesson.show(a.right)),
        string.format('对 %s，pick_weight 返回 %s，应为 %s（内容损失 <= max_content_loss 的最大权重，没有则为 0）', where, lesson.show(g), lesson.show(a.right)))
    end
    ::next_case::
  end
  -- last, the runs of the step (when they are there): a bound between the two largest content losses
  local run_bound
  if type(env.results) == 'table' and #env.results >= 2 then
    local cs = {}
    for _, r in ipairs(env.results) do
      if type(r) ~= 'table' or type(r.weight) ~= 'number' or type(r.content) ~= 'number' or type(r.style) ~= 'number' then
        cs = nil
        break
      end
      cs[#cs + 1] = r.content
    end
    if cs then
      table.sort(cs)
      run_bound = math.floor((cs[#cs - 1] + cs[#cs]) / 2 * 1000 + 0.5) / 1000
      cases[#cases + 1] = { copy_results(env.results), run_bound }
    end
  end
  local extra_en, extra_zh = '', ''
  if run_bound then
    local w = pw_answers(env.results, run_bound).right
    extra_en = string.format('; on the runs above, pick_weight(results, %s) = %s', lesson.show(run_bound), lesson.show(w))
    extra_zh = string.format('；在上面几次运行的结果上，pick_weight(results, %s) = %s', lesson.show(run_bound), lesson.show(w))
  end
  return true, say('right: the largest weight whose content loss is within the bound (<=), in any order, 0 when none is' .. extra_en,
    '对：内容损失不超过上限（<=）的最大权重，与顺序无关，没有时为 0' .. extra_zh)
end

-- ---------------------------------------------------------------- the break-even count (step 5)

local BE_CASES = {
  { 10, 3, 0 }, { 30, 2.5, 0.5 }, { 3.2, 2.1, 0.01 }, { 0.5, 2, 0.1 }, { 12, 3, 1 },
  { 5, 0.01, 0.02 }, { 5, 0.3, 0.3 }, { 40, 1.5, 0.25 },
}

local function be_want(t, g, f)
  if g <= f then return math.huge end
  return math.floor(t / (g - f)) + 1
end

local function check_break_even(env)
  local ok, fn = lesson.need(env, 'break_even')
  if not ok then return false, fn end
  local cases = {}
  for i, c in ipairs(BE_CASES) do cases[i] = c end
  local rnd = lesson.lcg(5)
  for _ = 1, 6 do   -- times in 1/16 s: exact in binary, so a loop over n and the formula agree
    cases[#cases + 1] = { math.floor(1 + rnd() * 60), 0.5 + math.floor(rnd() * 32) / 8, math.floor(rnd() * 8) / 16 }
  end
  -- last, this run's times (when the step's code ran)
  local ts, gs, fs = lesson.number(env.train_seconds), lesson.number(env.gatys_seconds), lesson.number(env.forward_seconds)
  local run = ts and gs and fs and fs < math.huge
  if run then cases[#cases + 1] = { ts, gs, fs } end
  for _, c in ipairs(cases) do
    local t, g, f = c[1], c[2], c[3]
    local want = be_want(t, g, f)
    local args = string.format('break_even(%s, %s, %s)', lesson.show(t), lesson.show(g), lesson.show(f))
    local tok, got = lesson.try(fn, t, g, f)
    if not tok then
      return false, say(args .. ' raised an error: ' .. lesson.text(got), args .. ' 出错：' .. lesson.text(got))
    end
    local n = lesson.number(got)
    if n == want then goto next_case end
    if want == math.huge then
      return false, say(string.format('%s returned %s: a forward pass of %s s is not faster than an optimisation of %s s, so training never pays off: return math.huge',
          args, tostring(got), lesson.show(f), lesson.show(g)),
        string.format('%s 返回了 %s：一次 %s 秒的前向并不比一次 %s 秒的优化快，训练永远不会划算：应返回 math.huge',
          args, tostring(got), lesson.show(f), lesson.show(g)))
    end
    if n == nil then
      return false, say(string.format('%s returned %s; expected the number %d', args, tostring(got), want),
        string.format('%s 返回了 %s；应为数 %d', args, tostring(got), want))
    end
    if n ~= math.floor(n) then
      return false, say(string.format('%s returned %s: a number of images is a whole number; the smallest n with %s + n x %s < n x %s is %d',
          args, lesson.show(n), lesson.show(t), lesson.show(f), lesson.show(g), want),
        string.format('%s 返回了 %s：图像的张数是整数；满足 %s + n x %s < n x %s 的最小 n 是 %d',
          args, lesson.show(n), lesson.show(t), lesson.show(f), lesson.show(g), want))
    end
    if n == want - 1 and t / (g - f) == n then
      return false, say(string.format('%s returned %d: at n = %d both ways take exactly the same time (%s s); "less time" needs one image more',
          args, n, n, lesson.show(t + n * f)),
        string.format('%s 返回了 %d：n = %d 时两种做法用的时间正好相等（%s 秒）；“更少的时间”还要再多一张图',
          args, n, n, lesson.show(t + n * f)))
    end
    if n == math.floor(t / g) + 1 or n == math.ceil(t / g) then
      return false, say(string.format('%s returned %d, expected %d: the network\'s forward pass costs time too; n images cost %s + n x %s with the network, n x %s with Gatys',
          args, n, want, lesson.show(t), lesson.show(f), lesson.show(g)),
        string.format('%s 返回了 %d，应为 %d：网络的前向也要花时间；用网络处理 n 张图要 %s + n x %s，用 Gatys 要 n x %s',
          args, n, want, lesson.show(t), lesson.show(f), lesson.show(g)))
    end
    do
      return false, say(string.format('%s returned %s, expected %d: the smallest n with %s + n x %s < n x %s',
          args, lesson.show(n), want, lesson.show(t), lesson.show(f), lesson.show(g)),
        string.format('%s 返回了 %s，应为 %d：满足 %s + n x %s < n x %s 的最小 n',
          args, lesson.show(n), want, lesson.show(t), lesson.show(f), lesson.show(g)))
    end
    ::next_case::
  end
  local extra_en, extra_zh = '', ''
  if run then
    local n = be_want(ts, gs, fs)
    if n == math.huge then
      extra_en = string.format('; with this run\'s times (%.1f s, %.2f s, %.4f s) it never pays off', ts, gs, fs)
      extra_zh = string.format('；按这次运行测得的时间（%.1f 秒、%.2f 秒、%.4f 秒），训练永远不划算', ts, gs, fs)
    else
      extra_en = string.format('; with this run\'s times (%.1f s, %.2f s, %.4f s) training pays off from image %d on', ts, gs, fs, n)
      extra_zh = string.format('；按这次运行测得的时间（%.1f 秒、%.2f 秒、%.4f 秒），从第 %d 张图起训练就划算了', ts, gs, fs, n)
    end
  end
  return true, say('right: floor(train / (gatys - forward)) + 1 images, never when the forward pass is not faster' .. extra_en,
    '对：floor(train / (gatys - forward)) + 1 张图；前向不比优化快时永远不划算' .. extra_zh)
end

-- ---------------------------------------------------------------- the lesson

return {
  title = say('Image style transfer: Gram matrices, Gatys and the real-time network',
    '图像风格迁移：Gram 矩阵、Gatys 方法与实时网络'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (image style transfer)',
    '智能计算系统 第 3 章：深度学习（图像风格迁移）'),
  summary = say([[Content as a deep layer's feature maps, style as their Gram matrices (written by
you), Gatys' optimisation of the image with L-BFGS and Adam, the content weight against the style
weight, and Johnson's real-time transformation network timed against the optimisation.]],
    [[内容是深层的特征图，风格是特征图的 Gram 矩阵（由你来写）；Gatys 用 L-BFGS 或 Adam 直接优化
图像；内容权重与风格权重的取舍；以及 Johnson 的实时图像转换网络，与优化方法比一比速度。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('What style transfer is', '什么是风格迁移'),
      text = say([[
The notes' problem: given a content image p and a style image a, make an image x that keeps the
content of p and has the style of a. Both images go through a CNN. The feature maps of p form the
content features P, those of a the style features A; the image x, which the notes start from
random noise, gives its own features F and their statistics G. A loss computed from A, P, F and
G says how far x is from both goals, and an optimiser adjusts x (not the network) until it looks
like p made in the manner of a.

Which features carry what:
- content: a deep layer's feature maps. Each map is a grid, each of its positions says what the filters found there, so comparing maps position by position keeps the layout (where the eyes and the nose are) while the pixels may change.
- style: the correlations between the feature maps of each layer, the Gram matrix: which channels fire together, summed over all positions. It keeps textures, colours and strokes and forgets where they are.

Gatys, Ecker and Bethge (2016) took these features from VGG-19 trained on ImageNet. Lumen cannot
download one, so gen.StyleNet is five levels of fixed random 3x3 convolutions (3 -> 32 -> 64 ->
128 -> 256 -> 256 channels, ReLU, a 2x2 average pooling between levels), never trained. That is
known to work for style: the statistics of many random filters at several scales describe
colours, edges and how they occur together (He, Wang and Hopcroft 2016; Ustyuzhaninov et al.
2017). What it lacks is meaning: a trained VGG has units for "eye" and "fur", random filters only
respond to local shapes, so the results below are closer to texture transfer than to painting.

The code loads the content (chelsea, a cat) and the style (gravel) from Debian's python3-skimage
and takes a centre square of each, resized to 64 x 64 so that every run in this lesson takes
seconds; the style's square is the centre 0.3 of the picture, so its stones stay big enough to
see at 64 pixels. Without skimage it says so and uses synthetic stand-ins. The picture: the two
side by side.]],
        [[
讲义中的问题：给定一张内容图像 p 和一张风格图像 a，生成一张图像 x，它既保持 p 的内容，又有 a
的风格。两张图都送进一个 CNN：p 的特征图组成内容特征集 P，a 的特征图组成风格特征集 A；图像 x
（讲义里从一张随机噪声图像开始）也经过 CNN，得到它自己的特征 F 和统计量 G。由 A、P、F、G 算出
的目标损失函数衡量 x 离两个目标有多远，优化器调整的是图像 x（不是网络），直到它看起来既保持
p 的内容，又有 a 的风格。

哪些特征承载什么：
- 内容：深层的特征图。每张特征图是一个网格，每个位置说明滤波器在那里找到了什么，所以逐个位置比较特征图，就能保持布局（眼睛、鼻子在哪里），而像素本身可以改变。
- 风格：每一层各特征图之间的相关性，即 Gram 矩阵：哪些通道在同一处一起被激活，再对所有位置求和。它保留纹理、颜色和笔触，而忘掉它们出现在哪里。

Gatys、Ecker 和 Bethge（2016）用的是在 ImageNet 上训练好的 VGG-19 的特征。Lumen 无法下载这样的
网络，所以 gen.StyleNet 用的是五级固定的随机 3x3 卷积（通道数 3 -> 32 -> 64 -> 128 -> 256 ->
256，ReLU，级与级之间一个 2x2 平均池化），从不训练。这对风格是行得通的，已有研究表明：许多随机
滤波器在多个尺度上的响应统计量，描述了颜色、边缘以及它们怎样共同出现（He、Wang、Hopcroft 2016；
Ustyuzhaninov 等 2017）。它缺的是语义：训练好的 VGG 里有对应“眼睛”“毛发”的单元，随机滤波器
只对局部形状有反应，所以下面的结果更像纹理迁移，而不是绘画。

代码从 Debian 的 python3-skimage 读入内容图（chelsea，一只猫）和风格图（gravel，碎石），各取
中间的一个正方形并缩放到 64 x 64，这样本课的每次运行都只要几秒；风格图取的是画面中间 0.3 的
部分，这样石子在 64 像素下仍然看得清。没有 skimage 时代码会说明，并改用合成的替代图像。画面：
两张图并排。]]),
      code = [[
gen = require 'lumen.generative'
SK = '/usr/lib/python3/dist-packages/skimage/data/'
-- square(img, n [, part]): the centre square of img (part of its shorter side), resized to n x n
function square(img, n, part)
  local H, W = img:size(2), img:size(3)
  local s = math.floor(math.min(H, W) * (part or 1))
  local c = img:narrow(2, (H - s) // 2 + 1, s):narrow(3, (W - s) // 2 + 1, s)
  return F.interpolate(c:unsqueeze(1), {size = {n, n}, mode = 'bilinear'})[1]:clamp(0, 1)
end
-- synthetic(kind, seed): a 64 x 64 stand-in, 'disc' (a disc on a colour gradient) or 'stripes'
function synthetic(kind, seed)
  local n = 64
  local x = (lm.arange(0, n):double() / (n - 1)):view(1, n):expand(n, n)
  local y = (lm.arange(0, n):double() / (n - 1)):view(n, 1):expand(n, n)
  lm.manual_seed(seed)
  if kind == 'stripes' then
    local g = (((x + y) * 30):sin() + 1) * 0.35 + lm.rand(n, n, {dtype = 'float64'}) * 0.3
    return lm.stack({g, g, g}, 1):float()
  end
  local cx, cy = 0.3 + 0.4 * lm.rand(1):item(), 0.3 + 0.4 * lm.rand(1):item()
  local disc = ((x - cx):pow(2) + (y - cy):pow(2)):lt(0.05):double()
  local keep = 1 - disc
  return lm.stack({keep * (0.2 + 0.6 * x) + disc * 0.95, keep * (0.3 + 0.4 * y) + disc * 0.8,
    keep * (0.8 - 0.5 * x) + disc * 0.2}, 1):float()
end
-- picture(name, part, stand_in): skimage's image as a 64 x 64 square, or the stand-in
function picture(name, part, stand_in)
  local file = io.open(SK .. name .. '.png', 'rb')
  if not file then return stand_in, false end
  file:close()
  local img = lm.load_image(SK .. name .. '.png', {mode = 'rgb'})
  print(string.format('%-13s %3d x %3d, centre %3d%% -> 64 x 64', name .. '.png', img:size(2),
    img:size(3), math.floor(100 * part + 0.5)))
  return square(img, 64, part), true
end
content, found_images = picture('chelsea', 1, synthetic('disc', 1))
style = (picture('gravel', 0.3, synthetic('stripes', 2)))
if not found_images then
  print("skimage's images are not in " .. SK .. " (Debian's python3-skimage): using synthetic " ..
    'stand-ins, a disc on a colour gradient and noisy stripes')
end
print('content', table.concat(content:shape(), ' x '), 'style', table.concat(style:shape(), ' x '))
]],
      scene = function(env)
        local en, zh = from(env)
        return picture_rows({ { 'inputs', '输入', env.content, env.style } },
          'content and style, 64 x 64 (' .. en .. ')', '内容图与风格图，64 x 64（' .. zh .. '）')
      end,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The Gram matrix', 'Gram 矩阵'),
      text = say([[
For one image, a layer's features are C maps of H x W. Reshape them to a matrix F of C rows, one
row per channel holding its H*W values. The Gram matrix is

  G = F F^T / (C H W),      G[i][j] = sum over k of F[i][k] F[j][k] / (C H W)

a C x C matrix: G[i][j] is large when channels i and j are large at the same positions. The sum
over k runs over all the positions, so where something happens is gone; what happens together
stays. Dividing by C H W makes layers of different sizes comparable. A batch f of shape
(N, C, H, W) has one Gram matrix per image: (N, C, C).

The code shows it with gen.gram, Lumen's own. It shuffles the positions of the pixels and of two
levels' feature maps (the same permutation for every channel) and prints the relative difference
|A-B|/|B| of the Gram matrices, and of the maps themselves compared position by position,
which is what the content loss does. The Gram matrices stay the same (differences near 1e-7 are
float32 rounding: the sum runs in another order); the maps differ by about 0.4 to 0.6.

The last line is the other half: shuffle the image's pixels and then run the network, and level
1's Gram matrix does change, because a 3x3 convolution sees neighbourhoods and the shuffle broke
them. A style is what the neighbourhoods look like, wherever they are. The same line shows why
gen.style_transfer matches the centred Gram matrix (each channel's mean over the positions
subtracted first: gen.gram(f, true)) together with the channels' means: the plain Gram matrix of
random ReLU features is dominated by those means, alike for every image, and moves a few percent
where the centred one moves by more than half.

The picture is the features scene: the cat through gen.StyleNet's five levels, each
convolution's and ReLU's maps (blue negative, orange positive). The first level's maps are still
the cat, filtered; by level 4 (columns 10 and 11: 256 maps of 8 x 8) each map is coarse, but where it
fires still follows the eyes and the nose: that layout is what the content loss compares.]],
        [[
对一张图像，一层的特征是 C 张 H x W 的特征图。把它们变形成一个 C 行的矩阵 F，每个通道一行，
放着它的 H*W 个值。Gram 矩阵是

  G = F F^T / (C H W),      G[i][j] = 对 k 求和 F[i][k] F[j][k] / (C H W)

一个 C x C 的矩阵：通道 i 和通道 j 在同样的位置上都大时，G[i][j] 就大。对 k 的求和遍历所有
位置，所以“在哪里发生”没有了，留下的是“哪些一起发生”。除以 C H W 让大小不同的层可以相互比较。
形状为 (N, C, H, W) 的一批特征 f，每张图有一个 Gram 矩阵：(N, C, C)。

代码用 Lumen 自己的 gen.gram 来演示。它把像素的位置、以及两级特征图的位置打乱（每个通道用同一个
排列），打印 Gram 矩阵的相对差 |A-B|/|B|，以及特征图本身逐个位置比较的相对差——内容损失比较的
正是这个。Gram 矩阵没有变（1e-7 左右的差别是 float32 的舍入：求和的顺序变了）；特征图本身差了
大约 0.4 到 0.6。

最后一行是另一半：先打乱图像的像素，再送进网络，第 1 级的 Gram 矩阵就变了，因为 3x3 卷积看的
是邻域，而打乱把邻域破坏了。风格就是“邻域长什么样”，不管它在哪里。这一行也说明了为什么
gen.style_transfer 匹配的是中心化的 Gram 矩阵（先减去每个通道在各位置上的均值：
gen.gram(f, true)）再加上各通道的均值：随机 ReLU 特征的普通 Gram 矩阵被这些均值主导，对每张图
都差不多，它只变了百分之几，而中心化的那个变了一半以上。

画面是特征图场景：猫经过 gen.StyleNet 的五级，每个卷积和 ReLU 的特征图（蓝为负，橙为正）。第 1
级的特征图还是那只猫，只是滤过了；到第 4 级（第 10、11 列：256 张 8 x 8 的图）每张图都很粗，
但它在哪里被激活仍然跟着眼睛和鼻子：内容损失比较的就是这种布局。]]),
      code = [[
net = gen.StyleNet()                    -- five levels of fixed random 3x3 convolutions
levels = nn.Sequential(net.convs[1], nn.ReLU(), nn.AvgPool2d(2), net.convs[2], nn.ReLU(),
  nn.AvgPool2d(2), net.convs[3], nn.ReLU(), nn.AvgPool2d(2), net.convs[4], nn.ReLU(),
  nn.AvgPool2d(2), net.convs[5], nn.ReLU())     -- the same levels, for the features scene
-- rel(a, b): the relative difference |a - b| / |b| (over all elements)
function rel(a, b) return ((a - b):pow(2):sum() / b:pow(2):sum()):sqrt():item() end
-- shuffle(f): f (N, C, H, W) with its positions permuted, the same permutation for every channel
function shuffle(f)
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local _, perm = lm.rand(H * W):sort()
  return f:reshape(N, C, H * W):index_select(3, perm):reshape(N, C, H, W)
end
lm.manual_seed(3)
local x = content:unsqueeze(1)                                  -- (1, 3, 64, 64)
local feats = lm.no_grad(function() return net:features(x) end)
print('shuffled positions               Gram matrix   the maps, position by position')
for _, case in ipairs({{'the pixels (3 x 64 x 64)', x}, {'level 1 (32 x 64 x 64)', feats[1]},
    {'level 4 (256 x 8 x 8)', feats[4]}}) do
  local f = case[2]
  local s = shuffle(f)
  print(string.format('%-30s %12.1e %14.2f', case[1], rel(gen.gram(s), gen.gram(f)), rel(s, f)))
end
local moved = lm.no_grad(function() return net:features(shuffle(x)) end)[1]
print(string.format('pixels shuffled, then level 1:   plain Gram %.3f, centred Gram %.3f',
  rel(gen.gram(moved), gen.gram(feats[1])), rel(gen.gram(moved, true), gen.gram(feats[1], true))))
]],
      scene = function(env)
        if type(env.levels) == 'table' and lm.is_tensor(env.content) then
          return env.levels, { input = env.content, source = 'gen.StyleNet (random fixed 3x3 convolutions)' }
        end
        return picture_rows({ { 'inputs', '输入', env.content, env.style } }, 'content and style', '内容图与风格图')
      end,
      exercise = {
        prompt = say([[
Write `gram(f)`: for features f of shape (N, C, H, W) it returns the (N, C, C) tensor of each
image's Gram matrix, with F = f reshaped to (N, C, H*W):

  G = F F^T / (C H W)

Do not call gen.gram. The check compares it with loops in float64 on random features of several shapes:
batches of 1 to 4, C = 1, odd sizes, H or W of 1.]],
          [[
写出 `gram(f)`：对形状为 (N, C, H, W) 的特征 f，返回 (N, C, C) 的张量，即每张图的 Gram 矩阵，
其中 F 是把 f 变形成 (N, C, H*W) 的结果：

  G = F F^T / (C H W)

不要调用 gen.gram。检查时会在几种
形状的随机特征上与 float64 的循环结果比较：批大小 1 到 4、C = 1、奇数尺寸、H 或 W 为 1。]]),
        hints = {
          say('f:size(1), ..., f:size(4) are N, C, H, W; f:reshape(N, C, H * W) keeps each channel\'s H*W values together in one row.',
            'f:size(1) 到 f:size(4) 是 N、C、H、W；f:reshape(N, C, H * W) 把每个通道的 H*W 个值放在同一行。'),
          say('m:transpose(2, 3) turns (N, C, H*W) into (N, H*W, C); m:matmul(that) multiplies image by image: (N, C, C).',
            'm:transpose(2, 3) 把 (N, C, H*W) 变成 (N, H*W, C)；m:matmul(它) 逐张图相乘，得到 (N, C, C)。'),
          say('Then divide by C * H * W.', '最后除以 C * H * W。'),
        },
        check = check_gram,
        solution = [[
function gram(f)
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  return m:matmul(m:transpose(2, 3)) / (C * H * W)
end
]],
        wrong = {
          [[
function gram(f)   -- F^T F: a matrix over the positions
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  return m:transpose(2, 3):matmul(m) / (C * H * W)
end
]],
          [[
function gram(f)   -- not normalised
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  return m:matmul(m:transpose(2, 3))
end
]],
          [[
function gram(f)   -- divided by H*W only
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  return m:matmul(m:transpose(2, 3)) / (H * W)
end
]],
          [[
function gram(f)   -- divided by C only
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  return m:matmul(m:transpose(2, 3)) / C
end
]],
          [[
function gram(f)   -- the wrong reshape: channels and positions mixed
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, H * W, C)
  return m:transpose(2, 3):matmul(m) / (C * H * W)
end
]],
          [[
function gram(f)   -- the batch forgotten: the first image only
  local C, H, W = f:size(2), f:size(3), f:size(4)
  local m = f[1]:reshape(C, H * W)
  return m:matmul(m:t()) / (C * H * W)
end
]],
          [[
function gram(f)   -- centred: each channel's mean subtracted first
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local m = f:reshape(N, C, H * W)
  m = m - m:mean(3, true)
  return m:matmul(m:transpose(2, 3)) / (C * H * W)
end
]],
          [[
function gram(f)   -- Lumen's own, not written
  return gen.gram(f)
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Gatys: optimising the image', 'Gatys：优化图像本身'),
      text = say([[
The loss of the notes, as gen.style_transfer computes it:

  L(x) = content_weight * Lc + style_weight * Ls          (weights 1 and 10)
  Lc = mse(F4(x), F4(p)) / mean(F4(p)^2)                  level 4: 8 x 8 here
  Ls = sum over the 5 levels of  mse(G(x), G(a)) / mean(G(a)^2)
                               + mse(mu(x), mu(a)) / mean(mu(a)^2)

with G the centred Gram matrix and mu the channels' means. Each term is divided by its target's
size, so the weights do not depend on the scale of random features. The network is fixed: the
gradient of L flows back through it to the pixels of x, and the optimiser changes only x (clamped
to [0, 1] after each step). gen.style_transfer starts x from the content image (init =
'content'), which needs far fewer steps than the notes' random noise (init = 'noise').

L-BFGS is the optimiser of the paper: a quasi-Newton method that estimates the curvature from
the last gradients; one of its steps runs up to 20 evaluations of the loss and its gradient.
Adam (optimizer = 'adam') takes one evaluation per step. The code gives both about the same
budget, some 20 forward and backward passes: 1 step of L-BFGS, 20 of Adam, printing the losses
and the time. On this machine L-BFGS ended at a total loss near 0.14 (content 0.07, style
0.007), Adam near 0.59 with a style loss seven times higher, in about the same time: on a smooth
problem with one tensor to fit, the curvature pays. The picture: the inputs, then the L-BFGS
result and the Adam one. The cat's eyes and nose stay where they were; its fur is now grain,
and its orange has mostly turned grey (with the coloured speckles of a short run): the style
image is grey, and colour is part of the style.]],
        [[
讲义中的损失函数，按 gen.style_transfer 的算法：

  L(x) = content_weight * Lc + style_weight * Ls          （权重为 1 和 10）
  Lc = mse(F4(x), F4(p)) / mean(F4(p)^2)                  第 4 级：这里是 8 x 8
  Ls = 对 5 级求和  mse(G(x), G(a)) / mean(G(a)^2)
                  + mse(mu(x), mu(a)) / mean(mu(a)^2)

其中 G 是中心化的 Gram 矩阵，mu 是各通道的均值。每一项都除以它的目标的大小，这样权重就与随机
特征的尺度无关。网络是固定的：L 的梯度穿过网络传回 x 的像素，优化器只改 x（每步之后截断到
[0, 1]）。gen.style_transfer 从内容图像开始优化 x（init = 'content'），比讲义中从随机噪声开始
（init = 'noise'）需要的步数少得多。

L-BFGS 是论文用的优化器：一种拟牛顿法，用最近的若干梯度估计曲率；它的一步最多计算 20 次损失和
梯度。Adam（optimizer = 'adam'）每步只算一次。代码给两者差不多的预算，约 20 次前向加反向：
L-BFGS 1 步，Adam 20 步，并打印损失和时间。在这台机器上，L-BFGS 最后的总损失约 0.14（内容
0.07，风格 0.007），Adam 约 0.59，风格损失高了七倍，用时差不多：在只拟合一个张量的光滑问题上，
曲率信息是值得的。画面：输入图像，然后是 L-BFGS 的结果和 Adam 的结果。猫的眼睛和鼻子还在原处；
它的毛变成了颗粒，橙色大多变成了灰色（还带着短时间优化留下的彩色斑点）：风格图是灰的，而颜色
也是风格的一部分。]]),
      code = [[
local t0 = lm.sys.clock()
result, history = gen.style_transfer(content, style, {size = 64, steps = 1, optimizer = 'lbfgs',
  callback = function(step, _, l)
    print(string.format('L-BFGS step %2d  loss %.4f = content %.4f + 10 x style %.5f', step,
      l.total, l.content, l.style))
  end})
gatys_seconds = lm.sys.clock() - t0
print(string.format('L-BFGS: 1 step (up to 20 evaluations) in %.1f s', gatys_seconds))
t0 = lm.sys.clock()
result_adam = gen.style_transfer(content, style, {size = 64, steps = 20, optimizer = 'adam',
  callback = function(step, _, l)
    if step % 5 == 0 then
      print(string.format('Adam step %4d  loss %.4f = content %.4f + 10 x style %.5f', step,
        l.total, l.content, l.style))
    end
  end})
print(string.format('Adam: 20 steps (one evaluation each) in %.1f s', lm.sys.clock() - t0))
]],
      scene = function(env)
        local en, zh = from(env)
        return picture_rows({ { 'inputs', '输入', env.content, env.style },
            { 'L-BFGS, Adam', 'L-BFGS、Adam', env.result, env.result_adam } },
          'gen.style_transfer, 64 x 64: 1 L-BFGS step, 20 Adam steps (' .. en .. ')',
          'gen.style_transfer，64 x 64：L-BFGS 1 步，Adam 20 步（' .. zh .. '）')
      end,
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Content weight against style weight', '内容权重与风格权重的取舍'),
      text = say([[
style_weight says how much the style loss counts against the content loss. The code runs the
same optimisation (1 L-BFGS step) with style weight 0.1, takes weight 10 from step 3 (its L-BFGS
run is that very optimisation: `result` and `history`), and keeps each run's final losses in
`results`. Read the numbers: the heavier style weight has the lower style loss (on this machine
0.16 at 0.1, 0.007 at 10) and the higher content loss (0.017 against 0.067); weight 1 lands in
between (content 0.054, style 0.013: add it to the list to see). Neither loss can reach 0 without
the other growing: the gravel's statistics and the cat's layout pull the same pixels different
ways, and the weight chooses the point between them. In the picture, at 0.1 the cat keeps some
of its orange under coloured grain; at 10 it has turned grey and grainy. Its eyes and nose stay:
the layout is what the content loss holds. Past 10 little changes in one step (at 100: content
0.069, style 0.007); more steps go further (two steps at 100: content 0.079, style 0.002).

Choosing the weight is choosing on this trade-off: the most style you can have while the content
stays recognisable, say a content loss of at most some bound.]],
        [[
style_weight 决定风格损失相对于内容损失有多重要。代码用风格权重 0.1 运行一次同样的优化（L-BFGS
1 步），权重 10 直接取第 3 步的结果（那次 L-BFGS 运行正是这个优化：`result` 和 `history`），把
每次最后的损失存进 `results`。看这些数：风格权重大的那次，风格损失更低（在这台机器上 0.1 时是
0.16，10 时是 0.007），内容损失更高（0.017 对 0.067）；权重 1 落在两者之间（内容 0.054，风格
0.013：把它加进列表就能看到）。两个损失不可能一个降到 0 而另一个不涨：碎石的统计量和猫的布局把
同一批像素往不同方向拉，权重选的就是两者之间的那个点。画面中，0.1 时猫在彩色颗粒下还留着一些
橙色；10 时它已经变灰，满是颗粒。它的眼睛和鼻子都还在：内容损失守住的就是布局。权重超过 10
以后，一步之内变化不大（100 时：内容 0.069，风格 0.007）；多走几步会走得更远（100 时走两步：内容
0.079，风格 0.002）。

选权重就是在这个取舍上做选择：在内容仍然认得出来的前提下，要尽可能多的风格，比如要求内容损失
不超过某个上限。]]),
      code = [[
results = {}
for _, w in ipairs({0.1, 10}) do
  local img, h = result, history         -- style weight 10: step 3's L-BFGS run, this very optimisation
  if w ~= 10 or type(h) ~= 'table' then
    img, h = gen.style_transfer(content, style, {size = 64, steps = 1, style_weight = w})
  end
  results[#results + 1] = {weight = w, content = h.content[#h.content], style = h.style[#h.style],
    image = img}
  print(string.format('style weight %-4g  content loss %.4f  style loss %.5f', w,
    results[#results].content, results[#results].style))
end
]],
      scene = function(env)
        local r = type(env.results) == 'table' and env.results or {}
        local function im(i) return type(r[i]) == 'table' and r[i].image or nil end
        local en, zh = from(env)
        return picture_rows({ { 'inputs', '输入', env.content, env.style },
            { 'w 0.1/10', '权重 0.1/10', im(1), im(2) } },
          'gen.style_transfer, 64 x 64, 1 L-BFGS step, style weights 0.1 and 10 (' .. en .. ')',
          'gen.style_transfer，64 x 64，L-BFGS 1 步，风格权重 0.1 和 10（' .. zh .. '）')
      end,
      exercise = {
        prompt = say([[
Write `pick_weight(results, max_content_loss)`: results is a list like the one above, entries
{weight =, content =, style =} in any order; return the largest weight whose content loss is at
most max_content_loss (<=), or 0 when none is (style weight 0 leaves the content image as it is,
content loss 0). The check calls it on result lists it makes up, and then on the runs above.]],
          [[
写出 `pick_weight(results, max_content_loss)`：results 是像上面那样的列表，条目为 {weight =,
content =, style =}，顺序任意；返回内容损失不超过 max_content_loss（<=）的最大权重，一个都没有
时返回 0（风格权重为 0 时内容图保持原样，内容损失为 0）。检查时会在它自己编的结果列表上调用，
最后再用上面几次运行的结果。]]),
        hints = {
          say('Start from best = 0 and look at every entry: for _, r in ipairs(results) do ... end.',
            '从 best = 0 开始，逐个查看条目：for _, r in ipairs(results) do ... end。'),
          say('An entry counts when r.content <= max_content_loss; then keep math.max(best, r.weight). The list is not sorted.',
            '当 r.content <= max_content_loss 时这个条目才算数；然后保留 math.max(best, r.weight)。列表没有排序。'),
        },
        check = check_pick_weight,
        solution = [[
function pick_weight(results, max_content_loss)
  local best = 0
  for _, r in ipairs(results) do
    if r.content <= max_content_loss then best = math.max(best, r.weight) end
  end
  return best
end
]],
        wrong = {
          [[
function pick_weight(results, max_content_loss)   -- the smallest weight
  local best
  for _, r in ipairs(results) do
    if r.content <= max_content_loss then best = math.min(best or math.huge, r.weight) end
  end
  return best or 0
end
]],
          [[
function pick_weight(results, max_content_loss)   -- the style loss compared with the bound
  local best = 0
  for _, r in ipairs(results) do
    if r.style <= max_content_loss then best = math.max(best, r.weight) end
  end
  return best
end
]],
          [[
function pick_weight(results, max_content_loss)   -- < instead of <=
  local best = 0
  for _, r in ipairs(results) do
    if r.content < max_content_loss then best = math.max(best, r.weight) end
  end
  return best
end
]],
          [[
function pick_weight(results, max_content_loss)   -- nil when none qualifies
  local best
  for _, r in ipairs(results) do
    if r.content <= max_content_loss then best = math.max(best or 0, r.weight) end
  end
  return best
end
]],
          [[
function pick_weight(results, max_content_loss)   -- the last one in the list, as if sorted
  local best = 0
  for _, r in ipairs(results) do
    if r.content <= max_content_loss then best = r.weight end
  end
  return best
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Real-time style transfer: one forward pass', '实时风格迁移：一次前向'),
      text = say([[
Gatys' method optimises every new image from scratch, tens to hundreds of forward and backward
passes per image. The notes' real-time variant (Johnson, Alahi and Fei-Fei 2016) splits the work:
- training: an image transformation network (to be trained) maps a content image x to an image y; the feature network (pretrained in the paper, here the same random StyleNet, fixed) gives y's content features against x's and y's style features against the one style image's, the same loss as before, and its gradient now trains the transformation network's weights.
- real-time conversion: the trained network stylises any image in one forward pass.

One network per style. gen.TransformNet has Johnson's shape: a 9x9 convolution, two stride-2
convolutions, residual blocks, two x2 upsamplings each followed by a convolution, a 9x9
convolution and a sigmoid, each layer normalised per image (GroupNorm with a group per channel,
that is instance norm).

This is a short run: a narrow network (width 8) trained for 12 Adam steps on batches of 4 random
32 x 32 crops of two other images (astronaut and coffee), about a second. Two settings differ
from step 3, for the small budget: the content loss at level 2 (16 x 16 positions on a 32-pixel
crop; level 4 would have 4 x 4, too coarse to hold an outline) and style weight 1. Then the
network stylises the cat, which it never saw, in one forward pass, timed against step 3's
optimisation of the same image. Expect a rough result: the loss has only begun to fall (from
0.60 to about 0.47 here), and the picture is a grey-purple grain with barely a shadow of the cat,
and a frame at the borders from the zero padding. Longer training helps: 300 steps of the same
(about 25 s here) brought the training loss from 0.60 to 0.25 and the outlines came out
clearer. Johnson et al. trained 40,000 steps on 80,000 COCO images with a trained VGG;
`lumen examples/style_transfer.lua --realtime --steps 300` trains the full-width network on
64 x 64 crops.]],
        [[
Gatys 的方法对每张新图像都从头优化，每张图要几十到几百次前向和反向。讲义中的实时风格迁移
（Johnson、Alahi、Fei-Fei 2016）把工作分成两部分：
- 训练过程：图像转换网络（待训练）把内容图像 x 变成图像 y；特征提取网络（论文里是预训练的，这里是同一个随机的 StyleNet，固定不变）给出 y 的内容特征表示（与 x 的比较）和风格特征表示（与那一张风格图的比较），损失函数和前面一样，只是它的梯度现在用来训练图像转换网络的权重。
- 实时转换过程：训练完成的网络只要一次前向，就能给任何图像换上这种风格。

一个网络对应一种风格。gen.TransformNet 的结构与 Johnson 的相同：一个 9x9 卷积，两个步长为 2 的
卷积，若干残差块，两次 2 倍上采样（各接一个卷积），一个 9x9 卷积和 sigmoid；每层按单张图归一化
（每个通道一组的 GroupNorm，也就是 instance norm）。

这只是一次很短的训练：一个很窄的网络（宽度 8），用 Adam 训练 12 步，每批是另外两张图
（astronaut 和 coffee）上随机截取的 4 块 32 x 32，约一秒钟。为了这点预算，有两个设置与第 3 步
不同：内容损失放在第 2 级（在 32 像素的小块上有 16 x 16 个位置；第 4 级只有 4 x 4，粗得装不下
轮廓），风格权重为 1。然后网络用一次前向给它从没见过的猫换上风格，并与第 3 步对同一张图的优化
比较时间。结果会很粗糙：损失才刚开始下降（这里从 0.60 降到约 0.47），画面是一片灰紫色的颗粒，
几乎看不出猫的影子，边上还有一圈补零造成的框。训练得更久会更好：同样的设置训练 300 步（这里约 25 秒），训练损失从 0.60 降到 0.25，轮廓也更清楚。Johnson
等人用训练好的 VGG、在 80,000 张 COCO 图像上训练了 40,000 步；
`lumen examples/style_transfer.lua --realtime --steps 300` 会在 64 x 64 的小块上训练全宽度的网络。]]),
      code = [[
train_images = {(picture('astronaut', 1, synthetic('disc', 3))),
  (picture('coffee', 1, synthetic('disc', 4)))}
lm.manual_seed(1)
transform = gen.TransformNet{width = 8}
local t0 = lm.sys.clock()
local losses = gen.train_transform(transform, train_images, style, {steps = 12, size = 32,
  batch = 4, style_weight = 1, content_layer = 2})
train_seconds = lm.sys.clock() - t0
local last = 0
for i = #losses - 4, #losses do last = last + losses[i] / 5 end
print(string.format('trained %d steps in %.1f s: loss %.3f at the first step, %.3f over the last 5',
  #losses, train_seconds, losses[1], last))
transform:eval()
forward_seconds = math.huge
for _ = 1, 3 do                          -- the fastest of 3 passes
  local t1 = lm.sys.clock()
  stylised = lm.no_grad(function() return transform(content:unsqueeze(1))[1] end)
  forward_seconds = math.min(forward_seconds, lm.sys.clock() - t1)
end
print(string.format('one forward pass stylises the 64 x 64 content image in %.1f ms',
  1000 * forward_seconds))
if gatys_seconds then
  print(string.format("Gatys' optimisation of the same image (step 3): %.2f s, %.0f times as long",
    gatys_seconds, gatys_seconds / forward_seconds))
end
]],
      scene = function(env)
        local en, zh = from(env)
        return picture_rows({ { 'inputs', '输入', env.content, env.style },
            { 'Gatys, net', 'Gatys、网络', env.result, env.stylised } },
          'Gatys (1 L-BFGS step) and gen.TransformNet after 12 training steps, 64 x 64 (' .. en .. ')',
          'Gatys（L-BFGS 1 步）与训练 12 步后的 gen.TransformNet，64 x 64（' .. zh .. '）')
      end,
      exercise = {
        prompt = say([[
Training costs time once; after it each image costs a forward pass instead of an optimisation.
Write `break_even(train_s, gatys_s, forward_s)`: the smallest number of images n for which
training plus n forward passes takes less time than n optimisations (train_s + n * forward_s <
n * gatys_s), or math.huge when that never happens. The check tries made-up times, then this
run's (train_seconds, gatys_seconds, forward_seconds).]],
          [[
训练的时间只花一次；之后每张图花的是一次前向，而不是一次优化。写出
`break_even(train_s, gatys_s, forward_s)`：使“训练加 n 次前向”比“n 次优化”用时更少
（train_s + n * forward_s < n * gatys_s）的最小图像张数 n；永远做不到时返回 math.huge。检查时先
用编出来的时间，最后用这次运行测得的（train_seconds、gatys_seconds、forward_seconds）。]]),
        hints = {
          say('n * (gatys_s - forward_s) > train_s: only possible when gatys_s > forward_s.',
            'n * (gatys_s - forward_s) > train_s：只有 gatys_s > forward_s 时才可能。'),
          say('The smallest integer strictly above train_s / (gatys_s - forward_s) is math.floor(of it) + 1, also when the division is exact.',
            '严格大于 train_s / (gatys_s - forward_s) 的最小整数是 math.floor(它) + 1，除得尽时也一样。'),
        },
        check = check_break_even,
        solution = [[
function break_even(train_s, gatys_s, forward_s)
  if gatys_s <= forward_s then return math.huge end
  return math.floor(train_s / (gatys_s - forward_s)) + 1
end
]],
        equivalent = {
          ['< instead of <= at line 2'] = 'when gatys_s == forward_s the division gives train_s / 0 = inf, and math.floor(inf) + 1 is math.huge too',
        },
        wrong = {
          [[
function break_even(train_s, gatys_s, forward_s)   -- ceil: equal time is not less time
  if gatys_s <= forward_s then return math.huge end
  return math.ceil(train_s / (gatys_s - forward_s))
end
]],
          [[
function break_even(train_s, gatys_s, forward_s)   -- the forward pass taken as free
  return math.floor(train_s / gatys_s) + 1
end
]],
          [[
function break_even(train_s, gatys_s, forward_s)   -- nil when it never pays off
  if gatys_s <= forward_s then return nil end
  return math.floor(train_s / (gatys_s - forward_s)) + 1
end
]],
          [[
function break_even(train_s, gatys_s, forward_s)   -- not a whole number
  if gatys_s <= forward_s then return math.huge end
  return train_s / (gatys_s - forward_s)
end
]],
        },
      },
    },
  },
}
