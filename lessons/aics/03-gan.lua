--[[
AI Computing Systems, chapter 3: generative adversarial networks, following the notes — the two
players (the generator, the forger; the discriminator, the police) and their minimax game V(D, G),
the optimal discriminator and the JS divergence the game minimises (checked numerically on two
Gaussians), the losses written by the student from logits (D's, G's minimax and non-saturating
ones: checked against float64 formulas on random logits, large ones included, and by their
gradients; the saturating minimax gradient shown numerically), a GAN trained on the ring of 8
Gaussians (lumen/generative.lua's gen.GAN2D, the JS divergence printed as it trains), mode collapse
made to happen (a generator ten times faster than its discriminator hops from mode to mode) with
the student's count of the modes covered (checked on point sets built to catch each mistake), the
same generator kept from collapsing by a discriminator that keeps up, and DCGAN's transposed
convolutions (a generator for 28 x 28 images built and traced layer by layer, the student's output
size formula checked against nn.ConvTranspose2d), the family of GANs and their problems, which lead
to diffusion models.
Step 1 shows the gan2d scene's demonstration; steps 3 to 5 the gan2d scene of the GAN the step
trained; step 6 the features scene of the untrained DCGAN generator.
Format: docs/lessons.md.
]]
local say = lesson.say

-- ---------------------------------------------------------------- the losses (step 2)

-- float64 references: log D = log sigmoid(x) and log(1 - D) = log sigmoid(-x), without overflow
local function log_d(x) return math.min(x, 0) - math.log(1 + math.exp(-math.abs(x))) end
local function log_1md(x) return log_d(-x) end
local function sig(x) return 1 / (1 + math.exp(-x)) end
local function avg(f, xs) local s = 0 for _, x in ipairs(xs) do s = s + f(x) end return s / #xs end
local function total(f, xs) local s = 0 for _, x in ipairs(xs) do s = s + f(x) end return s end
local function plog(x) return math.log(x) end          -- the logits taken as probabilities
local function plog1(x) return math.log(1 - x) end
local function twice(f) return function(x) return f(sig(x)) end end -- a sigmoid, then a loss of logits

local function close(got, want)
  return got == got and want == want and math.abs(want) < math.huge
    and math.abs(got - want) <= 1e-4 * math.max(1, math.abs(want))
end

local function d_ref(r, f) return -(avg(log_d, r) + avg(log_1md, f)) end
local G_REF = {
  minimax = function(f) return avg(log_1md, f) end,
  nonsaturating = function(f) return -avg(log_d, f) end,
}

local D_MISTAKES = {
  { function(r, f) return avg(log_d, r) + avg(log_1md, f) end,
    say('it is minus the right loss: V(D, G) = mean log D(x) + mean log(1 - D(G(z))) is what D maximises, so the loss D minimises is -V',
      '它正好是正确损失的相反数：D 要最大化 V(D, G) = mean log D(x) + mean log(1 - D(G(z)))，所以 D 要最小化的损失是 -V') },
  { function(r, f) return -(avg(log_d, r) + avg(log_d, f)) end,
    say('it matches the fake term with label 1, -mean log D(G(z)): D must call the generated points fake, so its fake term is log(1 - D(G(z))) = log sigmoid(-logit) (label 0)',
      '它和把生成样本那一项的标签写成 1（-mean log D(G(z))）的结果一样：D 要把生成的点判为假，所以这一项是 log(1 - D(G(z))) = log sigmoid(-logit)（标签 0）') },
  { function(r, f) return -(avg(log_1md, r) + avg(log_d, f)) end,
    say('it matches the labels swapped: real points get label 1 (log D(x)), generated ones label 0 (log(1 - D(G(z))))',
      '它和把标签对调的结果一样：真实样本的标签是 1（log D(x)），生成样本的标签是 0（log(1 - D(G(z)))）') },
  { function(r, f) return -(total(log_d, r) + total(log_1md, f)) end,
    say('it matches sums instead of means: E[...] is a mean over the batch, so the loss does not grow with the batch size (and the learning rate keeps its meaning)',
      '它和用求和代替平均的结果一样：E[...] 是对一个 batch 求平均，损失不应随 batch 大小而变（学习率的含义也才不变）') },
  { function(r, f) return -(total(log_d, r) + total(log_1md, f)) / (#r + #f) end,
    say('it matches one mean over the real and fake logits together: V has two expectations, one over the data and one over z; take each mean apart (the batches may differ in size)',
      '它和把真假 logits 放在一起求一个平均的结果一样：V 里有两个期望，一个对真实数据，一个对 z；要分别求平均（两个 batch 的大小可以不同）') },
  { function(r, f) return -(avg(log_d, r) + avg(log_1md, f)) / 2 end,
    say('it is half the right loss: V is the sum of the two expectations, not their average',
      '它是正确损失的一半：V 是两个期望之和，不是它们的平均') },
  { function(r, f) return -(avg(plog, r) + avg(plog1, f)) end,
    say('it matches taking the logits as probabilities (log(x), log(1 - x), or F.binary_cross_entropy on them): the functions get logits, D\'s output before the sigmoid; D(x) = sigmoid(logit)',
      '它和把 logits 当成概率的结果一样（log(x)、log(1 - x)，或对它们用 F.binary_cross_entropy）：函数拿到的是 logits，即 sigmoid 之前的 D 的输出；D(x) = sigmoid(logit)') },
  { function(r, f) return -(avg(twice(log_d), r) + avg(twice(log_1md), f)) end,
    say('it matches applying the sigmoid and then a loss that takes logits (F.binary_cross_entropy_with_logits(x:sigmoid(), ...)): the sigmoid is applied twice',
      '它和先做 sigmoid、再用一个接收 logits 的损失（F.binary_cross_entropy_with_logits(x:sigmoid(), ...)）的结果一样：sigmoid 被用了两次') },
}

local function g_mistakes(kind)
  local other = kind == 'minimax' and 'nonsaturating' or 'minimax'
  local sign = kind == 'minimax' and -1 or 1
  return {
    { G_REF[other],
      say(string.format("it is the %s loss: 'minimax' is mean log(1 - D(G(z))) (the game as written, to minimise), 'nonsaturating' is -mean log D(G(z))", other),
        string.format("它是 %s 损失：'minimax' 是 mean log(1 - D(G(z)))（按博弈原式，要最小化），'nonsaturating' 是 -mean log D(G(z))", other)) },
    { function(f) return -G_REF[kind](f) end,
      say(kind == 'minimax'
          and 'it is minus the right loss: under minimax G minimises V, whose only term G changes is mean log(1 - D(G(z)))'
          or 'it is minus the right loss: the non-saturating G maximises mean log D(G(z)), so the loss it minimises is -mean log D(G(z))',
        kind == 'minimax'
          and '它正好是正确损失的相反数：minimax 下 G 最小化 V，而 V 中只有 mean log(1 - D(G(z))) 这一项与 G 有关'
          or '它正好是正确损失的相反数：非饱和的 G 要最大化 mean log D(G(z))，所以它最小化的损失是 -mean log D(G(z))') },
    { kind == 'minimax' and function(f) return total(log_1md, f) end or function(f) return -total(log_d, f) end,
      say('it matches a sum instead of a mean over the batch', '它和对 batch 求和（而不是求平均）的结果一样') },
    { kind == 'minimax' and function(f) return avg(plog1, f) end or function(f) return -avg(plog, f) end,
      say('it matches taking the logits as probabilities: D(G(z)) = sigmoid(logit)',
        '它和把 logits 当成概率的结果一样：D(G(z)) = sigmoid(logit)') },
    { kind == 'minimax' and function(f) return avg(twice(log_1md), f) end or function(f) return -avg(twice(log_d), f) end,
      say('it matches applying the sigmoid twice (a sigmoid, then a loss that takes logits)',
        '它和 sigmoid 用了两次的结果一样（先 sigmoid，再用一个接收 logits 的损失）') },
    { function(f) return sign * avg(log_d, f) end,
      say(kind == 'minimax'
          and 'it matches mean log D(G(z)): the minimax G minimises log(1 - D(G(z))), the term of V with the generated points'
          or 'it matches -mean log(1 - D(G(z))), which is D\'s fake term: the non-saturating G minimises -log D(G(z))',
        kind == 'minimax'
          and '它和 mean log D(G(z)) 的结果一样：minimax 下 G 最小化的是 log(1 - D(G(z)))，即 V 中生成样本的那一项'
          or '它和 -mean log(1 - D(G(z))) 的结果一样，那是 D 的假样本项：非饱和的 G 最小化的是 -log D(G(z))') },
  }
end

-- The cases: real and fake logits as Lua arrays (float64), and whether D's outputs are columns.
local function loss_cases()
  local rnd = lesson.lcg(33)
  local function some(n, lo, hi)
    local v = {}
    for i = 1, n do
      local x = lo + (hi - lo) * rnd()
      if math.abs(x) < 0.01 then x = 0.37 end -- never exactly 0 (|x| has a kink there)
      v[i] = x
    end
    return v
  end
  return {
    { r = some(6, 0.1, 0.9), f = some(4, 0.1, 0.9),
      what = say('6 real and 4 fake logits between 0.1 and 0.9', '6 个真实、4 个生成样本的 logits，在 0.1 与 0.9 之间'),
      gwhat = say('4 logits between 0.1 and 0.9', '4 个在 0.1 与 0.9 之间的 logits') },
    { r = some(9, -4, 4), f = some(5, -4, 4), col = true,
      what = say("D's outputs as columns (9, 1) and (5, 1), logits in [-4, 4]", 'D 输出的列向量 (9, 1) 与 (5, 1)，logits 在 [-4, 4]'),
      gwhat = say("D's outputs as a column (5, 1), logits in [-4, 4]", 'D 输出的列向量 (5, 1)，logits 在 [-4, 4]') },
    { r = { -1000, -100, 30, -40, 2.5, 100 }, f = { 1000, 100, -100, 25, -3, 60, -30 }, large = true,
      what = say('large logits, D very sure (rightly or not): -1000 to 1000', '很大的 logits，D 非常确定（对或错）：-1000 到 1000'),
      gwhat = say('7 large logits, D very sure (rightly or not): -100 to 1000', '7 个很大的 logits，D 非常确定（对或错）：-100 到 1000') },
    { r = some(1, -2, 2), f = some(1, -2, 2),
      what = say('one real and one fake logit', '一个真实、一个生成样本的 logit'),
      gwhat = say('a single logit', '只有一个 logit') },
  }
end

local function leaf(vals, col)
  local rows = {}
  for i, v in ipairs(vals) do rows[i] = col and { v } or v end
  return lm.tensor(rows, { dtype = 'float32' }):requires_grad_()
end

local function fmt(x) return lesson.show(x) end

-- Calls fn(...) on fresh leaves; returns value, {leaves}, or nil and a message.
local function run_loss(fn, call_en, call_zh, c, vals_list, want, mistakes, want_grads)
  local leaves = {}
  for i, vals in ipairs(vals_list) do leaves[i] = leaf(vals, c.col) end
  local args = {}
  for i, t in ipairs(leaves) do args[i] = t end
  args[#args + 1] = c.kind
  local what = c.kind and c.gwhat or c.what
  local on_en, on_zh = call_en .. ' on ' .. what.en, call_zh .. '（' .. what.zh .. '）'
  local ok, res = lesson.try(fn, table.unpack(args, 1, #leaves + (c.kind and 1 or 0)))
  if not ok then
    local why = { en = '', zh = '' }
    local function runs(list, col) -- does fn run on other inputs?
      local a = {}
      for i, vals in ipairs(list) do a[i] = leaf(vals, col) end
      a[#a + 1] = c.kind
      return (pcall(fn, table.unpack(a, 1, #list + (c.kind and 1 or 0))))
    end
    if c.col and runs(vals_list, false) then
      why = say(' (the logits come here as columns (n, 1), as D\'s last Linear(..., 1) gives them: make the targets with lm.ones_like(logits), or take :view(-1) first)',
        '（这里 logits 是 (n, 1) 的列，D 最后的 Linear(..., 1) 就是这样输出的：用 lm.ones_like(logits) 生成目标，或者先 :view(-1)）')
    elseif #vals_list == 2 and #vals_list[1] ~= #vals_list[2] and runs({ vals_list[1], vals_list[1] }, c.col) then
      why = say(' (the real and fake batches differ in size here: take each mean on its own)',
        '（这里真假两个 batch 的大小不同：要分别求平均）')
    end
    return false, say(on_en .. ': ' .. (res.en or tostring(res)) .. why.en,
      on_zh .. '：' .. (res.zh or res.en or tostring(res)) .. why.zh)
  end
  if type(res) == 'number' then
    return false, say(on_en .. ' returns a Lua number: return the loss as a tensor (no :item()), so that loss:backward() reaches D and G',
      on_zh .. '返回的是 Lua 数：损失要以张量返回（不要 :item()），这样 loss:backward() 才能传到 D 和 G')
  end
  if not lm.is_tensor(res) then
    return false, say(on_en .. ' returns ' .. type(res) .. '; return the loss, a tensor of one element',
      on_zh .. '返回的是 ' .. type(res) .. '；应返回损失，一个只有一个元素的张量')
  end
  if res:numel() ~= 1 then
    return false, say(on_en .. ' returns a tensor of shape [' .. table.concat(res:shape(), ', ') .. ']: the loss is one number, the mean over the batch (:mean())',
      on_zh .. '返回的是形状为 [' .. table.concat(res:shape(), ', ') .. '] 的张量：损失是一个数，即对 batch 的平均（:mean()）')
  end
  local got = res:detach():double():view(-1)[1]:item()
  if not close(got, want) then
    local head_en = string.format('%s gives %s, expected %s', on_en, fmt(got), fmt(want))
    local head_zh = string.format('%s得到 %s，应为 %s', on_zh, fmt(got), fmt(want))
    if got ~= got or math.abs(got) == math.huge then
      if c.large then
        return false, say(head_en .. ': log(sigmoid(x)) overflows. In float32 sigmoid(-100) = 1 / (1 + exp(100)) is 0 (exp(100) is inf) and log 0 = -inf; 1 - sigmoid(20) is 0 too. Compute log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|)) (and log(1 - sigmoid(x)) = log sigmoid(-x)), or use F.binary_cross_entropy_with_logits, which does that',
          head_zh .. '：log(sigmoid(x)) 溢出了。float32 中 sigmoid(-100) = 1 / (1 + exp(100)) 是 0（exp(100) 是 inf），log 0 = -inf；1 - sigmoid(20) 也是 0。要这样算：log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|))（而 log(1 - sigmoid(x)) = log sigmoid(-x)），或者用 F.binary_cross_entropy_with_logits，它就是这样算的')
      end
    end
    for _, m in ipairs(mistakes) do
      if close(got, m[1](table.unpack(vals_list))) then
        return false, say(head_en .. ': ' .. m[2].en, head_zh .. '：' .. m[2].zh)
      end
    end
    if c.large then
      return false, say(head_en .. ': right on moderate logits, wrong on large ones: an epsilon (log(sigmoid(x) + 1e-8)) or a clamp caps the loss; compute log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|)), or use F.binary_cross_entropy_with_logits',
        head_zh .. '：在中等大小的 logits 上对，在很大的 logits 上错：加一个 epsilon（log(sigmoid(x) + 1e-8)）或截断会限制损失的大小；要用 log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|))，或 F.binary_cross_entropy_with_logits')
    end
    return false, say(head_en .. ': look at the formula above (log D = log sigmoid(logit), log(1 - D) = log sigmoid(-logit), means over the batch)',
      head_zh .. '：对照上面的公式检查（log D = log sigmoid(logit)，log(1 - D) = log sigmoid(-logit)，对 batch 求平均）')
  end
  -- the gradient: the loss must stay in the graph, and its gradient must be the formula's
  local bok, berr = lesson.try(function() res:sum():backward() end)
  if not bok or not lm.is_tensor(leaves[1].grad) then
    return false, say(on_en .. ': the value is right, but the loss is not connected to the logits (a :detach(), :item(), lm.no_grad or a new lm.tensor cuts the graph): D and G learn from its gradient',
      on_zh .. '：值是对的，但损失和 logits 之间没有连上（:detach()、:item()、lm.no_grad 或新建的 lm.tensor 会切断计算图）：D 和 G 要靠它的梯度学习')
  end
  for i, t in ipairs(leaves) do
    local g = t.grad
    local gok, msg = lesson.compare(lm.is_tensor(g) and g:double():view(-1) or lm.zeros(1), want_grads[i],
      { what = 'the gradient of ' .. call_en .. ' on argument ' .. i, tol = 1e-3 })
    if not gok then
      return false, say(on_en .. ': the value is right, but ' .. msg.en, on_zh .. '：值是对的，但 ' .. (msg.zh or msg.en))
    end
  end
  return true
end

local function check_losses(env)
  local ok, dl = lesson.need(env, 'd_loss')
  if not ok then return false, dl end
  local gok, gl = lesson.need(env, 'g_loss')
  if not gok then return false, gl end
  local cases = loss_cases()
  for _, c in ipairs(cases) do
    local gr, gf = {}, {}
    for i, x in ipairs(c.r) do gr[i] = -(1 - sig(x)) / #c.r end
    for i, x in ipairs(c.f) do gf[i] = sig(x) / #c.f end
    local rok, msg = run_loss(dl, 'd_loss(real_logits, fake_logits)', 'd_loss(real_logits, fake_logits)', c, { c.r, c.f },
      d_ref(c.r, c.f), D_MISTAKES, { lm.tensor(gr, { dtype = 'float64' }), lm.tensor(gf, { dtype = 'float64' }) })
    if not rok then return false, msg end
  end
  for _, kind in ipairs({ 'minimax', 'nonsaturating' }) do
    for _, c0 in ipairs(cases) do
      local c = setmetatable({ kind = kind }, { __index = c0 })
      local g = {}
      for i, x in ipairs(c.f) do
        g[i] = (kind == 'minimax' and -sig(x) or -(1 - sig(x))) / #c.f
      end
      local call = "g_loss(fake_logits, '" .. kind .. "')"
      local rok, msg = run_loss(gl, call, call, c, { c.f }, G_REF[kind](c.f), g_mistakes(kind),
        { lm.tensor(g, { dtype = 'float64' }) })
      if not rok then return false, msg end
    end
  end
  return true, say('right: D\'s loss and both of G\'s losses match the float64 formulas on every case, logits of ±1000 included, and their gradients are the formulas\' (so -sigmoid(logit) / n for the minimax G: it vanishes when D rejects)',
    '对：D 的损失和 G 的两种损失在所有情况下（包括 ±1000 的 logits）都与 float64 公式一致，梯度也与公式一致（minimax 下 G 的梯度是 -sigmoid(logit) / n：D 坚决拒绝时它就消失了）')
end

-- ---------------------------------------------------------------- the modes (step 4)

local function centre(k, radius) return (radius or 2) * math.cos(k * math.pi / 4), (radius or 2) * math.sin(k * math.pi / 4) end

-- The count on a Lua array of points, with one mistake switched on (v).
local function count_modes(pts, v)
  v = v or {}
  local n, covered, near_all, counts = #pts, 0, 0, {}
  local lim = v.squared and 0.5 or 0.25
  for k = v.from or 0, v.to or 7 do
    local cx, cy = centre(k, v.ring)
    local near = 0
    for _, p in ipairs(pts) do
      local d = math.sqrt((p[1] - cx) ^ 2 + (p[2] - cy) ^ 2)
      if d < lim then near = near + 1 end
    end
    counts[#counts + 1], near_all = near, near_all + near
  end
  if v.points then return near_all end
  for _, c in ipairs(counts) do
    local yes
    if v.any then yes = c >= 1
    elseif v.strict then yes = c * 50 > n
    elseif v.of_near then yes = near_all > 0 and c * 50 >= near_all
    else yes = c * 50 >= n end
    if yes then covered = covered + 1 end
  end
  if v.fraction then return covered / 8 end
  return covered
end

local MODE_MISTAKES = {
  { { any = true }, say('it matches counting a mode as soon as one point is near it: a few stray points do not make a mode covered; it needs at least 2% of all the points',
    '它和只要有一个点靠近就算覆盖的结果一样：几个零星的点不算覆盖了一个模式；至少要有全部点的 2%') },
  { { strict = true }, say('it matches "more than 2%": a mode with exactly 2% of the points (2 of 100) is covered; use >=',
    '它和“多于 2%”的结果一样：正好有 2% 的点（100 个中的 2 个）的模式也算覆盖；要用 >=') },
  { { squared = true }, say('it matches comparing the squared distance with 0.25 (that is a distance under 0.5): points 0.4 from a mode are not on it; compare the distance sqrt(dx^2 + dy^2) with 0.25',
    '它和把距离的平方与 0.25 比较的结果一样（那等于距离小于 0.5）：离模式 0.4 的点不在模式上；要用距离 sqrt(dx^2 + dy^2) 与 0.25 比较') },
  { { of_near = true }, say('it matches 2% of the points near some mode: the share is of all n points (3 points near a mode out of 200, the rest elsewhere, is 1.5%)',
    '它和按“靠近某个模式的点”算 2% 的结果一样：比例要按全部 n 个点算（200 个点中只有 3 个靠近某个模式，其余在别处，那是 1.5%）') },
  { { ring = 1 }, say('it matches modes on a circle of radius 1: the ring\'s modes are at radius 2, (2 cos(k pi/4), 2 sin(k pi/4))',
    '它和把模式放在半径 1 的圆上的结果一样：环的模式在半径 2 处，(2 cos(k pi/4), 2 sin(k pi/4))') },
  { { points = true }, say('it counts points near the modes, not modes: return how many of the 8 modes are covered (0 to 8)',
    '它数的是靠近模式的点，而不是模式：应返回 8 个模式中被覆盖的个数（0 到 8）') },
  { { fraction = true }, say('it returns the fraction of the modes covered: return their number, 0 to 8',
    '它返回的是被覆盖模式的比例：应返回个数，0 到 8') },
}
for _, r in ipairs({ { 1, 7 }, { 0, 6 }, { 0, 8 }, { -1, 7 } }) do
  MODE_MISTAKES[#MODE_MISTAKES + 1] = { { from = r[1], to = r[2] },
    say(string.format('it matches a loop over k = %d..%d: the ring has 8 modes, k = 0..7 (k = 8 is mode 0 again, k = -1 is mode 7)', r[1], r[2]),
      string.format('它和 k = %d..%d 的循环结果一样：环有 8 个模式，k = 0..7（k = 8 又是模式 0，k = -1 是模式 7）', r[1], r[2])) }
end

-- The point sets: {pts = Lua array, what = text}.
local function mode_cases()
  local rnd = lesson.lcg(77)
  local function cluster(pts, cx, cy, count, rmin, rmax)
    for _ = 1, count do
      local a, r = rnd() * 2 * math.pi, rmin + (rmax - rmin) * rnd()
      pts[#pts + 1] = { cx + r * math.cos(a), cy + r * math.sin(a) }
    end
  end
  local function at(k, count, rmin, rmax, pts)
    pts = pts or {}
    local cx, cy = centre(k)
    cluster(pts, cx, cy, count, rmin or 0, rmax or 0.15)
    return pts
  end
  local cases = {}
  local function add(pts, en, zh) cases[#cases + 1] = { pts = pts, what = say(en, zh) } end
  local all = {}
  for k = 0, 7 do at(k, 25, 0, 0.15, all) end
  add(all, 'all 8 modes, 25 points on each', '全部 8 个模式，每个 25 个点')
  add(at(3, 300), 'one mode (k = 3) only, 300 points: a collapsed generator', '只有一个模式（k = 3），300 个点：崩溃了的生成器')
  local ends = at(0, 40)
  at(7, 60, 0, 0.15, ends)
  add(ends, 'modes k = 0 and k = 7 only', '只有 k = 0 和 k = 7 两个模式')
  local between = {}
  for k = 0, 7 do
    local a = (k + 0.5) * math.pi / 4
    cluster(between, 2 * math.cos(a), 2 * math.sin(a), 20, 0, 0.1)
  end
  add(between, 'points on the ring between the modes (angles (k + 1/2) 45 degrees)', '环上位于模式之间的点（角度 (k + 1/2) 45 度）')
  local thr = at(0, 50)
  at(3, 2, 0, 0.1, thr)
  at(5, 1, 0, 0.1, thr)
  cluster(thr, 0, 0, 47, 0, 0.3)
  add(thr, '100 points: 50 on mode 0, 2 on mode 3 (2%: covered), 1 on mode 5 (1%: not), 47 at the centre',
    '100 个点：50 个在模式 0，2 个在模式 3（2%：算覆盖），1 个在模式 5（1%：不算），47 个在圆心')
  local far = {}
  for k = 0, 7 do
    local a = k * math.pi / 4
    cluster(far, 2.4 * math.cos(a), 2.4 * math.sin(a), 10, 0, 0.05)
  end
  add(far, 'points 0.4 from every mode (radius 2.4)', '离每个模式 0.4 的点（半径 2.4）')
  local inner = {}
  for k = 0, 7 do
    local a = k * math.pi / 4
    cluster(inner, math.cos(a), math.sin(a), 10, 0, 0.05)
  end
  add(inner, 'points on a circle of radius 1 at the modes\' angles', '半径 1 的圆上、与模式同角度的点')
  local rim = at(1, 30, 0.15, 0.2)
  at(2, 30, 0.15, 0.2, rim)
  at(6, 30, 0.15, 0.2, rim)
  add(rim, 'modes 1, 2 and 6 with every point 0.15 to 0.2 from the centre', '模式 1、2、6，每个点离中心 0.15 到 0.2')
  local stray = at(2, 3, 0, 0.1)
  cluster(stray, 0, 0, 197, 0, 0.5)
  add(stray, '200 points: 3 on mode 2, 197 around the centre', '200 个点：3 个在模式 2，197 个在圆心附近')
  return cases
end

local function check_modes(env)
  local ok, fn = lesson.need(env, 'modes_covered')
  if not ok then return false, fn end
  local cases = mode_cases()
  local got = {}
  for i, c in ipairs(cases) do
    local rok, r = lesson.try(fn, lm.tensor(c.pts, { dtype = 'float32' }))
    if not rok then
      return false, say('modes_covered on ' .. c.what.en .. ': ' .. (r.en or tostring(r)),
        'modes_covered（' .. c.what.zh .. '）：' .. (r.zh or r.en or tostring(r)))
    end
    got[i] = lesson.number(r)
    if got[i] == nil then
      return false, say('modes_covered on ' .. c.what.en .. ' returns ' .. type(r) .. '; return a number, how many modes are covered (0 to 8)',
        'modes_covered（' .. c.what.zh .. '）返回的是 ' .. type(r) .. '；应返回一个数：被覆盖的模式个数（0 到 8）')
    end
  end
  for i, c in ipairs(cases) do
    local want = count_modes(c.pts)
    if got[i] ~= want then
      local why
      for _, m in ipairs(MODE_MISTAKES) do
        local same = true
        for j, cj in ipairs(cases) do
          if count_modes(cj.pts, m[1]) ~= got[j] then same = false break end
        end
        if same then why = m[2] break end
      end
      if not why then -- a mistake that shows on this case, if not on all
        for _, m in ipairs(MODE_MISTAKES) do
          if count_modes(c.pts, m[1]) == got[i] then why = m[2] break end
        end
      end
      why = why or say('a mode k = 0..7 is at (2 cos(k pi/4), 2 sin(k pi/4)); it is covered when at least 2% of all n points are closer than 0.25 to it (count * 50 >= n); return how many of the 8 are covered',
        '模式 k = 0..7 在 (2 cos(k pi/4), 2 sin(k pi/4))；当全部 n 个点中至少 2% 离它小于 0.25 时它算被覆盖（个数 * 50 >= n）；返回 8 个模式中被覆盖的个数')
      return false, say(string.format('modes_covered on %s returns %s, expected %d: %s', c.what.en, fmt(got[i]), want, why.en),
        string.format('modes_covered（%s）返回 %s，应为 %d：%s', c.what.zh, fmt(got[i]), want, why.zh))
    end
  end
  return true, say('right: 8, 1, 2 and 0 modes where they are, the 2% threshold exactly, points 0.4 away or on the wrong circle not counted, stray points not enough',
    '对：8 个、1 个、2 个、0 个模式都数对了，2% 的界限也正好，离开 0.4 或在错误圆上的点不算，零星的点也不够')
end

-- ---------------------------------------------------------------- transposed convolutions (step 6)

local CONVT_CASES = { { 1, 4, 1, 0 }, { 4, 4, 2, 1 }, { 7, 4, 2, 1 }, { 1, 7, 1, 0 }, { 5, 3, 2, 1 }, { 3, 5, 3, 2 }, { 6, 3, 1, 1 }, { 2, 2, 2, 0 } }

local CONVT_MISTAKES = {
  { function(n, k, s, p) return (n + 2 * p - k) // s + 1 end,
    say("it is a convolution's output size, (n + 2p - k) // s + 1: the transposed convolution goes the other way, (n - 1) s - 2p + k",
      '这是普通卷积的输出大小 (n + 2p - k) // s + 1：转置卷积方向相反，是 (n - 1) s - 2p + k') },
  { function(n, k, s, p) return (n - 1) * s + 2 * p + k end,
    say('the padding is added: in a transposed convolution padding p removes p rows at each border, (n - 1) s - 2p + k',
      '这里把 padding 加上了：转置卷积的 padding p 是在每条边上去掉 p 行，(n - 1) s - 2p + k') },
  { function(n, k, s, p) return n * s end,
    say('n * stride holds for kernel 4, stride 2, padding 1 only: in general (n - 1) s - 2p + k',
      'n * stride 只在 kernel 4、stride 2、padding 1 时成立：一般是 (n - 1) s - 2p + k') },
  { function(n, k, s, p) return n * s - 2 * p + k end,
    say('each of the n inputs shifts the kernel by s, so the last one starts at (n - 1) s, not n s: (n - 1) s - 2p + k',
      '每个输入把卷积核移动 s，最后一个从 (n - 1) s 开始，而不是 n s：(n - 1) s - 2p + k') },
}

local function check_convt(env)
  local ok, fn = lesson.need(env, 'convt_size')
  if not ok then return false, fn end
  for _, c in ipairs(CONVT_CASES) do
    local n, k, s, p = table.unpack(c)
    local layer = nn.ConvTranspose2d(1, 1, k, { stride = s, padding = p })
    local want = lm.no_grad(function() return layer(lm.zeros(1, 1, n, n)) end):size(3)
    local rok, r = lesson.try(fn, n, k, s, p)
    if not rok then return false, r end
    local got = lesson.number(r)
    local call = string.format('convt_size(%d, %d, %d, %d)', n, k, s, p)
    if got ~= want then
      local why
      for _, m in ipairs(CONVT_MISTAKES) do
        if got == m[1](n, k, s, p) then why = m[2] break end
      end
      why = why or say('each input pixel spreads a k x k kernel, the next one s further; then p is cut at each border: (n - 1) s - 2p + k',
        '每个输入像素铺开一个 k x k 的核，下一个相隔 s；最后每条边去掉 p：(n - 1) s - 2p + k')
      return false, say(string.format('%s returns %s; nn.ConvTranspose2d(1, 1, %d, {stride = %d, padding = %d}) turns %d x %d into %d x %d: %s',
          call, got and fmt(got) or type(r), k, s, p, n, n, want, want, why.en),
        string.format('%s 返回 %s；nn.ConvTranspose2d(1, 1, %d, {stride = %d, padding = %d}) 把 %d x %d 变成 %d x %d：%s',
          call, got and fmt(got) or type(r), k, s, p, n, n, want, want, why.zh))
    end
  end
  return true, say('right: the same sizes as nn.ConvTranspose2d for every kernel, stride and padding tried',
    '对：在所有试过的 kernel、stride 和 padding 上都与 nn.ConvTranspose2d 的输出大小相同')
end

-- An untrained GAN, for a gan2d scene asked for before the step's code made one.
local blank_gan
local function gan_or_blank(g)
  if type(g) == 'table' and type(g.surface) == 'function' and type(g.sample) == 'function' then return g end
  blank_gan = blank_gan or require('lumen.generative').GAN2D { data = 'ring' }
  return blank_gan
end

return {
  title = say('Generative adversarial networks: the game, mode collapse and DCGAN',
    '生成对抗网络：博弈、模式崩溃与 DCGAN'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (generative adversarial networks)',
    '智能计算系统 第 3 章：深度学习（生成对抗网络）'),
  summary = say([[The forger and the police: the minimax game and the JS divergence it minimises, the
losses written from logits, a GAN trained on a ring of 8 Gaussians, mode collapse made to happen
and avoided, and DCGAN's transposed convolutions.]],
    [[伪装者与警察：极小极大博弈及它所最小化的 JS 散度；从 logits 写出损失；在 8 个高斯组成的环上
训练 GAN；让模式崩溃发生，再避免它；DCGAN 的转置卷积。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Two players: the forger and the police', '两个玩家：伪装者与警察'),
      text = say([[
In 2014 Ian Goodfellow proposed the generative adversarial network (GAN): learn from training
samples to make new ones — "the coolest idea in machine learning in the last twenty years" (Yann
LeCun). Two networks play against each other:

- the generator G (the forger) turns random noise z into a sample G(z), and tries to make samples the discriminator cannot tell from real ones: D's output near 0.5;
- the discriminator D (the police) says whether its input comes from the real samples (output near 1) or from the generator (output near 0).

They play a minimax game on one value function:

  V(D, G) = E_x~p_data[log D(x)] + E_z~p_z[log(1 - D(G(z)))]
  min over G of max over D of V(D, G)

For a fixed G the best D at each point x is

  D*(x) = p_data(x) / (p_data(x) + p_g(x))

and with it V(D*, G) = -log 4 + 2 JS(p_data || p_g): the game is G minimising the Jensen-Shannon
divergence between the data and what it makes. Its minimum, -log 4, is reached only when p_g =
p_data, where D* = 1/2 everywhere: the police can only guess. The code checks this on two 1-D
Gaussians, the data N(0, 1) and the generator's N(mu, 1), by sums over a fine grid.

The picture is the gan2d scene's demonstration (the scene of steps 3 to 5): real points (green) on
a ring of 8 Gaussians, generated ones (purple), D's surface under them (orange where D says real,
blue where it says generated) and G's grid — here a generator caught on two of the 8 modes, the
problem of step 4.]],
        [[
2014 年 Ian Goodfellow 提出了生成式对抗网络（GAN）。它解决的问题是：从训练样本中学习出新样本——
Yann LeCun 称之为“20 年来机器学习领域最酷的想法”。两个网络互相对抗：

- 生成器 G（伪装者）把随机噪声 z 变成样本 G(z)，尽可能生成能够以假乱真的样本，使判别网络的输出接近 0.5，难以区分真假；
- 判别器 D（警察）判断输入来自真实样本集（输出接近 1）还是生成样本集（输出接近 0）。

它们在同一个价值函数上进行极小极大博弈：

  V(D, G) = E_x~p_data[log D(x)] + E_z~p_z[log(1 - D(G(z)))]
  min over G of max over D of V(D, G)

G 固定时，每一点 x 上最好的 D 是

  D*(x) = p_data(x) / (p_data(x) + p_g(x))

代入得 V(D*, G) = -log 4 + 2 JS(p_data || p_g)：这个博弈就是 G 在最小化真实分布与生成分布之间的
Jensen-Shannon 散度。最小值 -log 4 只在 p_g = p_data 时达到，那时处处 D* = 1/2：警察只能瞎猜。
代码在两个一维高斯上验证这一点：真实数据 N(0, 1)，生成器的 N(mu, 1)，在细网格上求和。

画面是 gan2d 场景的演示（第 3 到 5 步也用这个场景）：真实点（绿色）组成 8 个高斯的环，生成点
（紫色），它们下面是 D 的曲面（橙色处 D 判为真，蓝色处判为生成），以及 G 的网格——这里是一个被困
在 8 个模式中两个上的生成器，即第 4 步的问题。]]),
      code = [[
local function normal(x, mu) return math.exp(-0.5 * (x - mu) ^ 2) / math.sqrt(2 * math.pi) end
function game_at_optimum(mu)   -- V(D*, G) and -log 4 + 2 JS for p_data = N(0, 1), p_g = N(mu, 1)
  local V, JS, dx = 0, 0, 1e-3
  for i = -12000, 16000 do
    local x = i * dx
    local p, q = normal(x, 0), normal(x, mu)
    local m = (p + q) / 2
    -- D*(x) = p / (p + q); log(1 - D*) written as log(q / (p + q))
    V = V + (p * math.log(p / (p + q)) + q * math.log(q / (p + q))) * dx
    JS = JS + (p * math.log(p / m) + q * math.log(q / m)) / 2 * dx
  end
  return V, -math.log(4) + 2 * JS, JS / math.log(2)
end
print('  mu   V(D*, G)   -log 4 + 2 JS   JS (bits)   D*(0)')
for _, mu in ipairs({0, 0.5, 1, 2, 4}) do
  local V, rhs, bits = game_at_optimum(mu)
  local d0 = normal(0, 0) / (normal(0, 0) + normal(0, mu))
  print(string.format('%4g   %8.4f   %13.4f   %9.4f   %.4f', mu, V, rhs, bits, d0))
end
]],
      expect = [[
  mu   V(D*, G)   -log 4 + 2 JS   JS (bits)   D*(0)
   0    -1.3863         -1.3863      0.0000   0.5000
 0.5    -1.3257         -1.3257      0.0437   0.5312
   1    -1.1635         -1.1635      0.1607   0.6225
   2    -0.7126         -0.7126      0.4859   0.8808
   4    -0.1209         -0.1209      0.9128   0.9997
]],
      scene = 'gan2d',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The losses, from logits', '从 logits 写出损失'),
      text = say([[
In code D ends with a Linear layer: it outputs a logit, and D(x) = sigmoid(logit). D maximises V,
so it minimises

  d_loss = -( mean log D(x) + mean log(1 - D(G(z))) )
         = BCE(real logits, label 1) + BCE(fake logits, label 0)

G only changes the second term of V. Minimising it as written, the 'minimax' loss

  g_loss = mean log(1 - D(G(z)))

has a flaw: early in training D rejects G's samples easily (D(G(z)) near 0), where log(1 - D) is
flat — its gradient with respect to the logit is -sigmoid(logit), next to nothing. Goodfellow's fix
is to maximise log D(G(z)) instead, the 'nonsaturating' loss

  g_loss = -mean log D(G(z))

with the same fixed point and a gradient -(1 - sigmoid(logit)), close to -1 just where D rejects.
The code shows both gradients for logits -5 to 5.

Numbers: log(sigmoid(x)) computed as written breaks. In float32 sigmoid(-100) = 1 / (1 + exp(100))
is 0 (exp(100) overflows) and log 0 = -inf; 1 - sigmoid(20) is already 0. A D that is very sure
(rightly or not) gives such logits. The stable form:

  log sigmoid(x)      = min(x, 0) - log(1 + exp(-|x|))    (exp(-|x|) <= 1)
  log(1 - sigmoid(x)) = log sigmoid(-x)

F.binary_cross_entropy_with_logits(x, target) computes -mean [target log sigmoid(x) + (1 - target)
log(1 - sigmoid(x))] this way (with {reduction = 'none'} per element), with log(1 + e) taken as
log1p(e), which keeps a tiny e: at x = 20 the stable row reads -2.061e-09, the naive one 0.
gen.GAN2D, used from step 3, writes its losses with it.]],
        [[
代码里 D 的最后一层是 Linear：它输出一个 logit，D(x) = sigmoid(logit)。D 要最大化 V，也就是最小化

  d_loss = -( mean log D(x) + mean log(1 - D(G(z))) )
         = BCE(真实样本的 logits, 标签 1) + BCE(生成样本的 logits, 标签 0)

G 只能改变 V 的第二项。按原式最小化它，就是 'minimax' 损失

  g_loss = mean log(1 - D(G(z)))

它有一个缺陷：训练初期 D 很容易拒绝 G 的样本（D(G(z)) 接近 0），而那里 log(1 - D) 很平——它对
logit 的梯度是 -sigmoid(logit)，几乎为零。Goodfellow 的办法是改为最大化 log D(G(z))，即
'nonsaturating'（非饱和）损失

  g_loss = -mean log D(G(z))

它的不动点相同，梯度是 -(1 - sigmoid(logit))，恰好在 D 拒绝的地方接近 -1。代码打印 logit 从 -5
到 5 时两种梯度的值。

数值问题：照字面计算 log(sigmoid(x)) 会出错。float32 中 sigmoid(-100) = 1 / (1 + exp(100)) 是 0
（exp(100) 溢出），log 0 = -inf；1 - sigmoid(20) 就已经是 0 了。一个非常确定（不论对错）的 D
就会给出这样的 logits。稳定的写法：

  log sigmoid(x)      = min(x, 0) - log(1 + exp(-|x|))    （exp(-|x|) <= 1）
  log(1 - sigmoid(x)) = log sigmoid(-x)

F.binary_cross_entropy_with_logits(x, target) 就是这样计算 -mean [target log sigmoid(x) +
(1 - target) log(1 - sigmoid(x))] 的（用 {reduction = 'none'} 得到逐元素的值），其中 log(1 + e)
按 log1p(e) 计算，很小的 e 也不会丢：x = 20 时稳定的一行是 -2.061e-09，照字面算的是 0。从第 3 步起
用到的 gen.GAN2D 就用它写损失。]]),
      code = [[
local function row(t)             -- a tensor's values in one line
  local s = {}
  for i = 1, t:numel() do s[i] = string.format('%11.4g', t[i]:item() + 0.0) end   -- + 0.0: no -0
  return table.concat(s)
end
local x = lm.tensor({-100, -20, -5, 0, 5, 20, 100}, {dtype = 'float32'})
local none = {reduction = 'none'}
print('x                         ' .. row(x))
print('log sigmoid(x), naive     ' .. row(x:sigmoid():log()))
print('log sigmoid(x), stable    ' .. row(-F.binary_cross_entropy_with_logits(x, lm.ones(7), none)))
print('log(1 - sigmoid(x)), naive' .. row((1 - x:sigmoid()):log()))
print('log(1 - sigmoid(x)), stab.' .. row(-F.binary_cross_entropy_with_logits(x, lm.zeros(7), none)))
-- G's two losses and their gradient on the logit of a generated point
local f = lm.tensor({-5, -2, 0, 2, 5}, {dtype = 'float32'}):requires_grad_()
F.binary_cross_entropy_with_logits(f, lm.zeros(5), {reduction = 'sum'}):neg():backward()
local g_minimax = f.grad:clone()
f.grad = nil
F.binary_cross_entropy_with_logits(f, lm.ones(5), {reduction = 'sum'}):backward()
print()
print('logit of G(z)             ' .. row(f))
print('D(G(z))                   ' .. row(f:detach():sigmoid()))
print('d/dlogit, minimax         ' .. row(g_minimax))
print('d/dlogit, non-saturating  ' .. row(f.grad))

function d_loss(real_logits, fake_logits)   -- to correct
  local d_real, d_fake = real_logits:sigmoid(), fake_logits:sigmoid()
  return -(d_real:log():mean() + d_fake:log():mean())
end
function g_loss(fake_logits, kind)          -- to correct: kind is 'minimax' or 'nonsaturating'
  return (1 - fake_logits:sigmoid()):log():mean()
end
]],
      expect = [[
x                                -100        -20         -5          0          5         20        100
log sigmoid(x), naive            -inf        -20     -5.007    -0.6931  -0.006715          0          0
log sigmoid(x), stable           -100        -20     -5.007    -0.6931  -0.006715 -2.061e-09 -3.784e-44
log(1 - sigmoid(x)), naive          0          0  -0.006715    -0.6931     -5.007       -inf       -inf
log(1 - sigmoid(x)), stab.          0          0  -0.006715    -0.6931     -5.007        -20       -100

logit of G(z)                      -5         -2          0          2          5
D(G(z))                      0.006693     0.1192        0.5     0.8808     0.9933
d/dlogit, minimax           -0.006693    -0.1192       -0.5    -0.8808    -0.9933
d/dlogit, non-saturating      -0.9933    -0.8808       -0.5    -0.1192  -0.006693
]],
      exercise = {
        prompt = say([[
Correct `d_loss(real_logits, fake_logits)` (D's loss: -(mean log D(x) + mean log(1 - D(G(z))))) and
write `g_loss(fake_logits, kind)` for kind 'minimax' (mean log(1 - D(G(z)))) and 'nonsaturating'
(-mean log D(G(z))). Both take logits (D's outputs before the sigmoid, any shape; the real and fake
batches may differ in size) and return the loss as a one-element tensor that backward goes through.
The check compares them with float64 formulas on random logits, logits of ±1000 among them, and
compares their gradients with the formulas' too.]],
          [[
改正 `d_loss(real_logits, fake_logits)`（D 的损失：-(mean log D(x) + mean log(1 - D(G(z))))），
并写出 `g_loss(fake_logits, kind)`：kind 为 'minimax' 时是 mean log(1 - D(G(z)))，为
'nonsaturating' 时是 -mean log D(G(z))。两个函数接收的都是 logits（sigmoid 之前的 D 的输出，形状
任意；真假两个 batch 的大小可以不同），返回损失：一个只有一个元素、能做 backward 的张量。检查时
会在随机 logits（其中有 ±1000）上与 float64 公式比较，并比较它们的梯度。]]),
        hints = {
          say('Write a stable log_sigmoid(x) = x:clamp(nil, 0) - ((-x:abs()):exp() + 1):log(); then log D = log_sigmoid(logit) and log(1 - D) = log_sigmoid(-logit).',
            '先写一个稳定的 log_sigmoid(x) = x:clamp(nil, 0) - ((-x:abs()):exp() + 1):log()；于是 log D = log_sigmoid(logit)，log(1 - D) = log_sigmoid(-logit)。'),
          say('Or with the library: -mean log D(x) is F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits)); the fake term has label 0 (lm.zeros_like).',
            '或者用库函数：-mean log D(x) 就是 F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits))；生成样本那一项的标签是 0（lm.zeros_like）。'),
          say("g_loss: if kind == 'minimax' return mean log(1 - D) = log_sigmoid(-fake_logits):mean(); else -log_sigmoid(fake_logits):mean().",
            "g_loss：kind == 'minimax' 时返回 mean log(1 - D) = log_sigmoid(-fake_logits):mean()；否则返回 -log_sigmoid(fake_logits):mean()。"),
        },
        check = check_losses,
        solution = [[
function log_sigmoid(x)   -- log sigmoid(x) = min(x, 0) - log(1 + exp(-|x|)): no overflow
  return x:clamp(nil, 0) - ((-x:abs()):exp() + 1):log()
end
function d_loss(real_logits, fake_logits)
  return -(log_sigmoid(real_logits):mean() + log_sigmoid(-fake_logits):mean())
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return log_sigmoid(-fake_logits):mean() end   -- log(1 - D(G(z)))
  return -log_sigmoid(fake_logits):mean()                                 -- -log D(G(z))
end
]],
        wrong = {
          [[
function d_loss(real_logits, fake_logits)   -- the sign flipped
  return F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits)):neg()
    - F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits))
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return -F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
]],
          [[
function d_loss(real_logits, fake_logits)
  return F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits))
    + F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits))
end
function g_loss(fake_logits, kind)   -- minimax and non-saturating swapped
  if kind == 'nonsaturating' then return -F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
]],
          [[
function d_loss(real_logits, fake_logits)   -- sums, not means
  local sum = {reduction = 'sum'}
  return F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits), sum)
    + F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits), sum)
end
function g_loss(fake_logits, kind)
  local sum = {reduction = 'sum'}
  if kind == 'minimax' then return -F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits), sum) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits), sum)
end
]],
          [[
function d_loss(real_logits, fake_logits)   -- the logits taken as probabilities
  return F.binary_cross_entropy(real_logits, lm.ones_like(real_logits))
    + F.binary_cross_entropy(fake_logits, lm.zeros_like(fake_logits))
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return -F.binary_cross_entropy(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy(fake_logits, lm.ones_like(fake_logits))
end
]],
          [[
function d_loss(real_logits, fake_logits)   -- the fake term's label is 1
  return F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits))
    + F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return -F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
]],
          [[
function d_loss(real_logits, fake_logits)   -- log(sigmoid(x)) as written: overflows
  return -(real_logits:sigmoid():log():mean() + (1 - fake_logits:sigmoid()):log():mean())
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return (1 - fake_logits:sigmoid()):log():mean() end
  return -fake_logits:sigmoid():log():mean()
end
]],
          [[
function d_loss(real_logits, fake_logits)   -- a new tensor: cut from the graph
  local l = F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits))
    + F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits))
  return lm.tensor(l:item())
end
function g_loss(fake_logits, kind)
  if kind == 'minimax' then return -F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
]],
          [[
function d_loss(real_logits, fake_logits)
  return F.binary_cross_entropy_with_logits(real_logits, lm.ones_like(real_logits))
    + F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits))
end
function g_loss(fake_logits, kind)   -- minimax as D's fake term (the sign flipped)
  if kind == 'minimax' then return F.binary_cross_entropy_with_logits(fake_logits, lm.zeros_like(fake_logits)) end
  return F.binary_cross_entropy_with_logits(fake_logits, lm.ones_like(fake_logits))
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Training on the ring', '在环上训练'),
      text = say([[
gen.GAN2D (lua/lumen/generative.lua) is a GAN on 2-D points, GAN Lab's experiment: G maps a 2-D
Gaussian z to a point (an MLP of 3 Linear layers, 64 wide, ReLU), D maps a point to a logit (the
same, LeakyReLU 0.2). Each gan:step() is one round of the game, as in Goodfellow's algorithm: D
takes an Adam step on d_loss (a batch of 256 real points, label 1, and 256 of G's, label 0), then G
one on the non-saturating g_loss — the two losses of step 2. The data: a ring of 8 Gaussians,
radius 2, standard deviation 0.05.

The yardstick is the Jensen-Shannon divergence of step 1, measured: 2,000 real and 2,000 generated
points counted on a 40 x 40 grid of cells, in bits (0: the same histogram, 1: nowhere in common).
Two sets of real points already give about 0.02, and the modes are narrow (0.05 against cells
0.11 wide), so any blur costs: expect 0.5 to 0.6 after the 600 steps here (about 0.2 after 1,500),
not 0. At the equilibrium D says 1/2 everywhere: its loss is then 2 log 2 = 1.386 and G's
log 2 = 0.693.

The picture is the gan2d scene of this GAN: real points (green), generated ones (purple), D's
probability of "real" under them (orange: real, blue: generated), and G's grid — a 15 x 15 grid of
z over [-2.5, 2.5]^2 mapped by G, neighbours joined: it shows how G bends the noise plane onto the
ring (the lines stretched across the gaps between modes carry few points). The losses are on the
right; Tab chooses which layers are shown. `train_gan(opts, steps, every)` is yours to try other
options with (data = 'moons' or 'grid', hidden, lr_g, lr_d, loss, d_steps, seed), and more steps on
this one: `for i = 1, 1000 do gan:step() end print(gan:js(2000))`.]],
        [[
gen.GAN2D（lua/lumen/generative.lua）是一个二维点上的 GAN，也就是 GAN Lab 的实验：G 把二维高斯
噪声 z 映射成一个点（3 个 Linear 层、宽 64、ReLU 的 MLP），D 把一个点映射成一个 logit（同样的结构，
LeakyReLU 0.2）。每次 gan:step() 是博弈的一轮，和 Goodfellow 的算法一样：D 在 d_loss 上走一步
Adam（256 个真实点，标签 1；256 个 G 生成的点，标签 0），然后 G 在非饱和的 g_loss 上走一步——也就是
第 2 步的两个损失。数据：8 个高斯组成的环，半径 2，标准差 0.05。

衡量标准是第 1 步的 Jensen-Shannon 散度，这里是实测的：2,000 个真实点和 2,000 个生成点，在 40 x 40
的格子里计数，单位是比特（0：直方图相同，1：毫无重叠）。两组真实点之间就有约 0.02；而且模式很窄
（标准差 0.05，格子宽 0.11），一点点模糊都要付出代价：这里训练 600 步之后大约是 0.5 到 0.6
（1,500 步之后约 0.2），而不是 0。在均衡点 D 处处输出 1/2：那时它的损失是 2 log 2 = 1.386，G 的损失是 log 2 = 0.693。

画面是这个 GAN 的 gan2d 场景：真实点（绿色）、生成点（紫色）、它们下面 D 判为“真”的概率（橙色：
真，蓝色：生成），以及 G 的网格——z 在 [-2.5, 2.5]^2 上的 15 x 15 网格经 G 映射后的样子，相邻点
连线：它显示 G 如何把噪声平面弯折到环上（横跨模式之间空隙的那些线上点很少）。右边是两个损失；
按 Tab 选择显示哪些图层。`train_gan(opts, steps, every)` 留给你试别的选项（data = 'moons' 或
'grid'、hidden、lr_g、lr_d、loss、d_steps、seed）；也可以让这个 GAN 多训练一会儿：
`for i = 1, 1000 do gan:step() end print(gan:js(2000))`。]]),
      code = [[
gen = require 'lumen.generative'
function train_gan(opts, steps, every, report)   -- report(g): more to print, optional
  -- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
  if lm.build_info().sanitize then steps, every = math.min(steps, 300), math.min(every, 100) end
  local g = gen.GAN2D(opts)
  local threads, t0 = lm.get_num_threads(), lm.sys.clock()
  lm.set_num_threads(1)          -- networks this small run faster on one thread than on a pool
  local ok, err = pcall(function()
    for s = 1, steps do
      local d, gl = g:step()
      if s % every == 0 then
        print(string.format('step %4d  D loss %.3f  G loss %.3f  JS %.3f bits%s', s, d, gl, g:js(2000),
          report and report(g) or ''))
      end
    end
  end)
  lm.set_num_threads(threads)
  if not ok then error(err, 0) end
  print(string.format('%d steps in %.1f s (CPU, one thread, measured)', steps, lm.sys.clock() - t0))
  return g
end
print(string.format('two sets of 2,000 real points: JS %.3f bits',
  gen.js_divergence(gen.toy2d('ring', 2000, {seed = 7}), gen.toy2d('ring', 2000))))
gan = train_gan({data = 'ring', lr_g = 3e-3, lr_d = 3e-3, seed = 1}, 600, 150)
]],
      scene = function(env) return 'gan2d', gan_or_blank(env.gan) end,
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Mode collapse', '模式崩溃'),
      text = say([[
The notes list GAN's problems: the generated samples lack diversity, mode collapse, and training
that is hard because of the adversarial game. Mode collapse is G putting all its samples on one
mode (or a few) of a data set that has many: each sample looks real, but the variety is gone.

Here it is made to happen: the same GAN, but G learns ten times faster than D (lr_g = 5e-3, lr_d =
5e-4). D is slow to change its mind, so at each moment there is one region it rates "most real",
and a fast G moves all its points there — every z to the same place, since nothing in G's loss
rewards spreading out. D then learns that region is fake, and G jumps to the next: the centre of
the samples moves around the ring while their spread stays small, against 1.4 for the ring itself
(mode hopping). The JS stays near
1 bit.

To measure it, count the modes covered: the ring's mode k (k = 0..7) is at (2 cos(k pi/4),
2 sin(k pi/4)), and a mode is covered when at least 2% of the samples lie within 0.25 of it (five
standard deviations; 2% is a sixth of a fair share, 1/8). `modes_covered` below counts a mode as
soon as one point is near it: correct it, then `:run` the step (600 steps, about a second) to see
your count as it trains. The picture: G's grid crushed into one narrow patch.]],
        [[
讲义列出了生成对抗网络存在的问题：生成的样本缺乏多样性，模式崩溃，以及由对抗性带来的难以训练。
模式崩溃就是：数据有很多模式，G 却把所有样本都放在一个（或少数几个）模式上——每个样本看起来都
像真的，但多样性没有了。

这里让它发生：同一个 GAN，但 G 学得比 D 快十倍（lr_g = 5e-3，lr_d = 5e-4）。D 改变看法很慢，所以
每一时刻总有一个区域被它评为“最真”，而快速的 G 把所有点都移到那里——所有的 z 都映到同一个地方，
因为 G 的损失里没有任何东西奖励分散。随后 D 学会了那个区域是假的，G 又跳到下一个：样本的中心绕着
环移动，而它们的散布一直很小（环本身的散布是 1.4）：这就是模式跳跃。JS 一直接近 1 比特。

为了度量它，数一数被覆盖的模式：环的第 k 个模式（k = 0..7）在 (2 cos(k pi/4), 2 sin(k pi/4))；
如果至少 2% 的样本离它小于 0.25（5 个标准差；2% 是平均份额 1/8 的六分之一），这个模式就算被
覆盖。下面的 `modes_covered` 只要有一个点靠近就算覆盖：改正它，然后 `:run` 这一步（600 步，
约一秒钟），看训练过程中你数出的结果。画面：G 的网格被压成窄窄的一小片。]]),
      code = [[
function modes_covered(points)   -- to correct: a mode counts as soon as one point is near it
  local covered = 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near >= 1 then covered = covered + 1 end
  end
  return covered
end
local function where(g)          -- the samples' centre and spread, and your count of the modes
  local p = g:sample(2000)
  local m, sd = p:mean(1), p:std(1)
  return string.format('  modes %d  centre (%5.2f, %5.2f) spread %.2f', modes_covered(p),
    m[1]:item(), m[2]:item(), (sd[1]:item() + sd[2]:item()) / 2)
end
collapsed = train_gan({data = 'ring', lr_g = 5e-3, lr_d = 5e-4, seed = 1}, 600, 100, where)
]],
      scene = function(env) return 'gan2d', gan_or_blank(env.collapsed) end,
      exercise = {
        prompt = say([[
Correct `modes_covered(points)`: points is an (n, 2) tensor; return how many of the ring's 8 modes
are covered (0 to 8), a mode k = 0..7 being at (2 cos(k pi/4), 2 sin(k pi/4)) and covered when at
least 2% of all n points are closer than 0.25 to it. The check counts on point sets built for it:
every mode, one, two, none (points between the modes, too far from them, on a smaller circle), a
mode with exactly 2% of the points.]],
          [[
改正 `modes_covered(points)`：points 是一个 (n, 2) 的张量；返回环的 8 个模式中被覆盖的个数（0 到
8）。第 k 个模式（k = 0..7）在 (2 cos(k pi/4), 2 sin(k pi/4))，当全部 n 个点中至少 2% 离它小于
0.25 时算被覆盖。检查时会在专门构造的点集上数：所有模式、一个、两个、一个也没有（点在模式之间、
离得太远、在更小的圆上），以及正好有 2% 的点的模式。]]),
        hints = {
          say('The loop over k and the distances are right; what changes is the test: a count of near points, compared with 2% of n = points:size(1).',
            '对 k 的循环和距离的计算都是对的；要改的是判断：靠近的点数，与 n = points:size(1) 的 2% 比较。'),
          say('if near * 50 >= points:size(1) then covered = covered + 1 end (at least 2%: >=, and of all the points).',
            'if near * 50 >= points:size(1) then covered = covered + 1 end（至少 2%：用 >=，而且是全部点的 2%）。'),
        },
        check = check_modes,
        solution = [[
function modes_covered(points)
  local n, covered = points:size(1), 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near * 50 >= n then covered = covered + 1 end   -- at least 2% of all the points
  end
  return covered
end
]],
        wrong = {
          [[
function modes_covered(points)   -- more than 2%, not at least
  local n, covered = points:size(1), 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near / n > 0.02 then covered = covered + 1 end
  end
  return covered
end
]],
          [[
function modes_covered(points)   -- the squared distance compared with 0.25
  local n, covered = points:size(1), 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):lt(0.25):sum():item()
    if near * 50 >= n then covered = covered + 1 end
  end
  return covered
end
]],
          [[
function modes_covered(points)   -- 2% of the points near some mode
  local counts, all = {}, 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    counts[k + 1] = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    all = all + counts[k + 1]
  end
  local covered = 0
  for k = 1, 8 do
    if all > 0 and counts[k] * 50 >= all then covered = covered + 1 end
  end
  return covered
end
]],
          [[
function modes_covered(points)   -- counts the points near the modes
  local covered = 0
  for k = 0, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    covered = covered + near
  end
  return covered
end
]],
          [[
function modes_covered(points)   -- modes on the unit circle
  local n, covered = points:size(1), 0
  for k = 0, 7 do
    local centre = lm.tensor({math.cos(k * math.pi / 4), math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near * 50 >= n then covered = covered + 1 end
  end
  return covered
end
]],
          [[
function modes_covered(points)   -- only 7 modes looked at
  local n, covered = points:size(1), 0
  for k = 1, 7 do
    local centre = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - centre):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near * 50 >= n then covered = covered + 1 end
  end
  return covered
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Mode collapse avoided', '避免模式崩溃'),
      text = say([[
The same fast generator (lr_g = 5e-3, same seed) with a discriminator that keeps up, lr_d = 5e-3
too. Now when G piles its points on one mode, D notices within a few steps and the pile is pushed
back apart before it has formed: G has to spread over every mode to keep D unsure. The code counts
the modes with the lesson's own rule of step 4 (`ring_modes`), then compares the three GANs: the
balanced one of step 3, the collapsed one and this one.

Other ways to keep D up with G: several D steps per G step (d_steps = 5 with lr_d = 5e-4 covers 6
of the 8 modes here in the same 600 steps, 8 with seeds 2 and 3, at about 4 times the cost: try it
with train_gan). The literature adds remedies that change the game itself: minibatch
discrimination (D sees a whole batch, so a batch without variety looks fake; Salimans et al.
2016), unrolled GANs (G's step looks ahead at how D will answer; Metz
et al. 2017), the Wasserstein GAN (a critic whose gradient does not vanish; Arjovsky et al. 2017).
Each is a patch on the adversarial game: the notes' conclusion, further on, is the diffusion model,
which trains without an adversary.]],
        [[
同样快的生成器（lr_g = 5e-3，同一个种子），配一个跟得上的判别器：lr_d 也是 5e-3。这样当 G 把点
堆到一个模式上时，D 几步之内就发现了，点堆还没形成就被推散：G 只有分散到所有模式上，才能让 D
一直拿不准。代码用第 4 步的规则（本课自己的 `ring_modes`）数模式，再比较三个 GAN：第 3 步那个
平衡的、崩溃的、以及这一个。

让 D 跟上 G 的其他办法：G 每走一步，D 走几步（d_steps = 5 配 lr_d = 5e-4，在这里同样训练 600 步能覆盖
8 个模式中的 6 个，种子 2 和 3 时是 8 个，代价是约 4 倍的时间：用 train_gan 试试）。文献里还有一些改变博弈本身的办法：小批量判别（D 一次
看整个 batch，没有多样性的 batch 就显得假；Salimans 等，2016），展开的 GAN（G 的一步会往前看 D 会
如何应对；Metz 等，2017），Wasserstein GAN（一个梯度不会消失的评判器；Arjovsky 等，2017）。它们
都是给对抗博弈打的补丁：讲义再往后的结论是扩散模型，它的训练中没有对抗。]]),
      code = [[
function ring_modes(points)      -- the rule of step 4: at least 2% of the points within 0.25
  local n, covered = points:size(1), 0
  for k = 0, 7 do
    local c = lm.tensor({2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)})
    local near = (points - c):pow(2):sum(2):sqrt():lt(0.25):sum():item()
    if near * 50 >= n then covered = covered + 1 end
  end
  return covered
end
local function modes(g) return string.format('  modes %d', ring_modes(g:sample(2000))) end
fixed = train_gan({data = 'ring', lr_g = 5e-3, lr_d = 5e-3, seed = 1}, 600, 100, modes)
print()
print('GAN                            lr_g    lr_d    modes  JS (bits)')
for _, r in ipairs({{'balanced (step 3)', gan, 3e-3, 3e-3}, {'G 10x faster (step 4)', collapsed, 5e-3, 5e-4},
                    {'G fast, D as fast (this step)', fixed, 5e-3, 5e-3}}) do
  local g = r[2]
  if type(g) == 'table' and g.sample then
    print(string.format('%-30s %-7g %-7g %5d  %9.3f', r[1], r[3], r[4], ring_modes(g:sample(2000)), g:js(2000)))
  end
end
]],
      scene = function(env) return 'gan2d', gan_or_blank(env.fixed) end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('DCGAN, the family, and what came next', 'DCGAN、GAN 家族，以及之后'),
      text = say([[
The notes' convolutional GANs start with DCGAN (Radford, Metz and Chintala, 2016), which takes the
GAN from fully connected networks to convolutional ones. Its rules: no pooling — D downsamples by
strided convolutions, G upsamples by transposed ("fractionally strided") convolutions; BatchNorm in
both (except G's output and D's input); ReLU in G with Tanh at the output, LeakyReLU in D; no
fully connected hidden layers. A transposed convolution spreads each input pixel over a k x k patch
of the output, the next pixel's patch s further; padding p then cuts p at each border:

  out = (n - 1) * stride - 2 * padding + kernel
  1 x 1 -(k 7, s 1, p 0)-> 7 x 7 -(k 4, s 2, p 1)-> 14 x 14 -(same)-> 28 x 28

The code builds such a generator for 28 x 28 images (Fashion-MNIST's size) from nn.ConvTranspose2d
and its mirror, a discriminator of strided nn.Conv2d, and traces one batch through them. They are
untrained here (training takes minutes: `lumen examples/dcgan_fashion.lua --viz` trains a conditional
DCGAN of this shape on Fashion-MNIST and shows its samples, a row per class, with the share a trained
classifier reads as the class asked for), so the picture (the features scene: every layer's maps for
one z) shows random weights spreading one 1 x 1 x 100 noise into 7 x 7, 14 x 14 and 28 x 28 maps, not
clothes.

The family, as the notes list it: ResGAN (image restoration) and SRGAN (super-resolution), both
with ResNet blocks; CycleGAN (image-to-image translation between two unpaired sets); conditional
GANs — CGAN (G and D both get a label, so one asks for a class) and InfoGAN; BiGAN, a GAN with an
inference model (an encoder from x back to z); VAE-GAN, an adversarial autoencoder.

And the problems of GANs: samples lacking diversity, mode collapse, training made hard by the
adversarial game. Diffusion models answer them (Ho, Jain and Abbeel, "Denoising diffusion
probabilistic models", NeurIPS 2020: DDPM beat GANs at image synthesis): training has no adversary,
so it is easier, it is not subject to mode collapse, and the images are diverse.
examples/ddpm_2d.lua trains one (gen.DDPM2D) on this same ring.]],
        [[
讲义中的卷积 GAN 从 DCGAN（Radford、Metz、Chintala，2016）开始：它把 GAN 中的全连接神经网络扩展到
卷积神经网络。它的规则：不用池化——D 用带步长的卷积下采样，G 用转置卷积（“分数步长”卷积）上采样；
两者都用 BatchNorm（G 的输出层和 D 的输入层除外）；G 用 ReLU、输出层用 Tanh，D 用 LeakyReLU；没有
全连接的隐层。转置卷积把每个输入像素铺到输出的一个 k x k 区域上，下一个像素的区域相隔 s；然后
padding p 在每条边上去掉 p：

  out = (n - 1) * stride - 2 * padding + kernel
  1 x 1 -(k 7, s 1, p 0)-> 7 x 7 -(k 4, s 2, p 1)-> 14 x 14 -(same)-> 28 x 28

代码用 nn.ConvTranspose2d 搭出这样一个生成 28 x 28 图像（Fashion-MNIST 的大小）的生成器，以及
与它镜像的判别器（带步长的 nn.Conv2d），并让一个 batch 走一遍。它们在这里没有训练（训练要几分钟：
`lumen examples/dcgan_fashion.lua --viz` 在 Fashion-MNIST 上训练一个这种结构的条件 DCGAN，并按类
逐行显示它的样本，以及训练好的分类器认出所要类别的比例），所以画面（features 场景：一个 z 经过每一
层的特征图）显示的是随机权重把一个 1 x 1 x 100 的噪声铺成 7 x 7、14 x 14、28 x 28 的特征图，而不是
衣服。

讲义列出的 GAN 家族：ResGAN（图像恢复）和 SRGAN（超分辨率），都用 ResNet 结构；CycleGAN（两组不
成对图像之间的图像转换）；条件 GAN——CGAN（G 和 D 都拿到一个标签，于是可以指定类别）和 InfoGAN；
集成推断模型的 GAN：BiGAN（多一个从 x 回到 z 的编码器）；对抗自编码器：VAE-GAN。

以及生成对抗网络存在的问题：生成的图像缺乏多样性、模式崩溃、由对抗性带来的难以训练。扩散模型回答
了这些问题（Ho、Jain、Abbeel，《Denoising diffusion probabilistic models》，NeurIPS 2020：DDPM
在图像合成方面击败了 GAN）：训练过程中没有对抗，训练更容易，不会受到模式崩溃的影响，能够产生多样化
的图像。examples/ddpm_2d.lua 在同一个环上训练了一个（gen.DDPM2D）。]]),
      code = [[
function convt_size(n, kernel, stride, padding)   -- to correct: a convolution's size
  return (n + 2 * padding - kernel) // stride + 1
end
lm.manual_seed(6)
local layers_G = {
  nn.ConvTranspose2d(100, 128, 7), nn.BatchNorm2d(128), nn.ReLU(),             -- 1 -> 7
  nn.ConvTranspose2d(128, 64, 4, {stride = 2, padding = 1}), nn.BatchNorm2d(64), nn.ReLU(), -- 14
  nn.ConvTranspose2d(64, 1, 4, {stride = 2, padding = 1}), nn.Tanh(),          -- 28, in [-1, 1]
}
local layers_D = {
  nn.Conv2d(1, 64, 4, {stride = 2, padding = 1}), nn.LeakyReLU(0.2),           -- 28 -> 14
  nn.Conv2d(64, 128, 4, {stride = 2, padding = 1}), nn.BatchNorm2d(128), nn.LeakyReLU(0.2), -- 7
  nn.Conv2d(128, 1, 7),                                                        -- 1 x 1: a logit
}
local function trace(name, layers, x)
  print(name .. ': ' .. table.concat(x:shape(), ' x '))
  for _, m in ipairs(layers) do
    x = m(x)
    if m.weight and m.weight:dim() == 4 then
      print(string.format('  %-16s -> %s', tostring(m):match('^[%w.]+') or '?', table.concat(x:shape(), ' x ')))
    end
  end
  return x
end
local z = lm.randn(16, 100, 1, 1)
local images = lm.no_grad(trace, 'G', layers_G, z)
local logits = lm.no_grad(trace, 'D', layers_D, images)
dcgan_G = nn.Sequential(table.unpack(layers_G))
dcgan_G:eval()
z1 = z[1]
local count = 0
for _, p in ipairs(dcgan_G:parameters()) do count = count + p:numel() end
print(string.format('G has %d parameters; its images are in [%.2f, %.2f]; D gives %d logits',
  count, images:min():item(), images:max():item(), logits:numel()))
print('your convt_size(1, 7, 1, 0), (7, 4, 2, 1), (14, 4, 2, 1):',
  convt_size(1, 7, 1, 0), convt_size(7, 4, 2, 1), convt_size(14, 4, 2, 1))
]],
      scene = function(env)
        if type(env.dcgan_G) == 'table' and lm.is_tensor(env.z1) then return env.dcgan_G, { input = env.z1 } end
        return 'gan2d', gan_or_blank(env.fixed)
      end,
      exercise = {
        prompt = say([[
Correct `convt_size(n, kernel, stride, padding)`: the height (and width) of the output of
nn.ConvTranspose2d(..., kernel, {stride = stride, padding = padding}) on an n x n input. The check
compares it with what nn.ConvTranspose2d gives on kernels 2 to 7, strides 1 to 3, paddings 0 to 2.]],
          [[
改正 `convt_size(n, kernel, stride, padding)`：nn.ConvTranspose2d(..., kernel, {stride = stride,
padding = padding}) 作用在 n x n 输入上时输出的高（和宽）。检查时会在 kernel 2 到 7、stride 1 到 3、
padding 0 到 2 上与 nn.ConvTranspose2d 的实际输出比较。]]),
        hints = {
          say('Place the n input pixels s apart: the last one\'s k x k patch ends at (n - 1) s + k. Padding removes p from each side.',
            '把 n 个输入像素每隔 s 放一个：最后一个的 k x k 区域结束于 (n - 1) s + k。padding 再从每一边去掉 p。'),
        },
        check = check_convt,
        solution = [[
function convt_size(n, kernel, stride, padding)
  return (n - 1) * stride - 2 * padding + kernel
end
]],
        wrong = {
          [[
function convt_size(n, kernel, stride, padding)   -- padding added
  return (n - 1) * stride + 2 * padding + kernel
end
]],
          [[
function convt_size(n, kernel, stride, padding)   -- doubles, as in DCGAN's middle layers
  return n * stride
end
]],
          [[
function convt_size(n, kernel, stride, padding)   -- n strides, not n - 1
  return n * stride - 2 * padding + kernel
end
]],
        },
      },
    },
  },
}
