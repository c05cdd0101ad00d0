--[[
AI Computing Systems, chapter 3: diffusion models, following the notes — from the GAN's problems
(little diversity, mode collapse, hard adversarial training) to the diffusion model's answer (no
adversary, no mode collapse, diverse samples; DDPM, Ho, Jain and Abbeel 2020), its forward and
reverse processes: the forward process in closed form written by the student (q_sample, with
abar_t computed from the betas) and checked against t single noising steps run on 20,000 copies of
a point (their mean and spread) and against the formula on given noise (linear, cosine and random
schedules), the epsilon-prediction loss written by the student (ddpm_loss, checked with a noise
predictor that records the x_t and t it is given: x_t must be sqrt(abar_t) x_0 + sqrt(1 - abar_t)
eps for the very eps of the loss, t one step per row uniform in 1..T), gen.DDPM2D trained on the
ring, sampling (ancestral and DDIM) tested on a Gaussian whose best noise predictor is known in
closed form, with one reverse step written by the student (p_step, checked against the formula),
and a GAN against a DDPM on the same data (the ring, 3 seeds, the same number of steps; the grid on
request) with
the yardstick (the JS divergence) and the modes covered, measured in the run.
Step 1 shows the diffusion scene's demonstration; step 2 plots the schedules (curves); step 3 the
diffusion scene of the DDPM it trained; step 4 the samples' spread against DDIM's steps (curves);
step 5 the gan2d scene of the GAN that covered the fewest modes of the ring.
Format: docs/lessons.md.
]]
local say = lesson.say
local D = { dtype = 'float64' }

local function gen() return require 'lumen.generative' end

-- A check that draws from lm's random generator (seeded, so that it is repeatable) and gives the
-- student's state back afterwards.
local function keeping_rng(check)
  return function(env, answer)
    local seed, offset = lm.rng_state()
    local r = table.pack(pcall(check, env, answer))
    lm.set_rng_state(seed, offset)
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
end

local function shape_text(v)
  if lm.is_tensor(v) then return 'a tensor of shape [' .. table.concat(v:shape(), ', ') .. ']' end
  return type(v)
end
local function shape_text_zh(v)
  if lm.is_tensor(v) then return '形状为 [' .. table.concat(v:shape(), ', ') .. '] 的张量' end
  return type(v)
end

local function same(a, b, tol)
  return lm.is_tensor(a) and a:numel() == b:numel() and lm.allclose(a:double():reshape(table.unpack(b:shape())), b, tol or 1e-6, 1e-9)
end

-- ---------------------------------------------------------------- the forward process (step 2)

local function abar_at(b, t) -- b: the betas as a Lua array; (1 - b_1) ... (1 - b_t), 1 at t = 0
  local a = 1
  for s = 1, t do a = a * (1 - b[s]) end
  return a
end

-- x_t from x0 and noise at step t with the mistake v (nil: the right one); nil where it has no value
local function q_variant(x0, noise, t, b, v)
  local ab = abar_at(b, t)
  local sum = 0
  for s = 1, t do sum = sum + b[s] end
  local sa, sn = math.sqrt(ab), math.sqrt(1 - ab)
  if v == 'beta' then sa, sn = math.sqrt(1 - b[t]), math.sqrt(b[t])
  elseif v == 'nosqrt' then sa, sn = ab, 1 - ab
  elseif v == 'nosqrt_signal' then sa = ab
  elseif v == 'var' then sn = 1 - ab
  elseif v == 'prev' then
    local p = abar_at(b, t - 1)
    sa, sn = math.sqrt(p), math.sqrt(1 - p)
  elseif v == 'next' then
    if t >= #b then return nil end
    local p = abar_at(b, t + 1)
    sa, sn = math.sqrt(p), math.sqrt(1 - p)
  elseif v == 'sum' then
    if sum > 1 then return nil end
    sa, sn = math.sqrt(1 - sum), math.sqrt(sum)
  elseif v == 'sumvar' then sn = math.sqrt(sum)
  elseif v == 'swap' then sa, sn = math.sqrt(1 - ab), math.sqrt(ab)
  end
  return x0 * sa + noise * sn
end

local Q_MISTAKES = {
  { 'beta', say('it matches one noising step taken from x0, with beta_t: sqrt(1 - beta_t) x0 + sqrt(beta_t) noise is q(x_t | x_{t-1}), one step; the jump from x0 takes abar_t = (1 - beta_1)(1 - beta_2)...(1 - beta_t)',
    '它和从 x0 只走一步（用 beta_t）的结果一样：sqrt(1 - beta_t) x0 + sqrt(beta_t) noise 是 q(x_t | x_{t-1})，只是一步；从 x0 一步跳到 x_t 要用 abar_t = (1 - beta_1)(1 - beta_2)...(1 - beta_t)') },
  { 'nosqrt', say('it matches abar_t x0 + (1 - abar_t) noise: a step multiplies x by sqrt(1 - beta), not by 1 - beta, so after t steps the data is scaled by sqrt(abar_t) and the noise has standard deviation sqrt(1 - abar_t)',
    '它和 abar_t x0 + (1 - abar_t) noise 一样：每一步把 x 乘以 sqrt(1 - beta)，而不是 1 - beta；所以 t 步之后数据乘的是 sqrt(abar_t)，噪声的标准差是 sqrt(1 - abar_t)') },
  { 'nosqrt_signal', say('it matches abar_t x0 + sqrt(1 - abar_t) noise: each step scales the data by sqrt(1 - beta_s), and the product of these factors is sqrt(abar_t), not abar_t',
    '它和 abar_t x0 + sqrt(1 - abar_t) noise 一样：每一步把数据乘以 sqrt(1 - beta_s)，这些因子的乘积是 sqrt(abar_t)，不是 abar_t') },
  { 'var', say('it matches sqrt(abar_t) x0 + (1 - abar_t) noise: 1 - abar_t is the variance of the noise; the standard normal noise is multiplied by its standard deviation, sqrt(1 - abar_t)',
    '它和 sqrt(abar_t) x0 + (1 - abar_t) noise 一样：1 - abar_t 是噪声的方差；标准正态噪声要乘的是标准差 sqrt(1 - abar_t)') },
  { 'prev', say('it matches abar_{t-1}, a product of t - 1 factors: x_t has been through the steps s = 1..t, t of them (x_1 is already noised once)',
    '它和 abar_{t-1}（t - 1 个因子的乘积）一样：x_t 经过了 s = 1..t 共 t 步（x_1 已经加过一次噪声）') },
  { 'next', say('it matches abar_{t+1}, a product of t + 1 factors: x_t has been through the steps s = 1..t only',
    '它和 abar_{t+1}（t + 1 个因子的乘积）一样：x_t 只经过了 s = 1..t 这几步') },
  { 'sum', say('it matches abar_t = 1 - (beta_1 + ... + beta_t): the factors multiply, abar_t = (1 - beta_1)...(1 - beta_t); the sum is only their first-order approximation, and goes below 0 on a long schedule',
    '它和 abar_t = 1 - (beta_1 + ... + beta_t) 一样：各步的因子是相乘的，abar_t = (1 - beta_1)...(1 - beta_t)；求和只是它的一阶近似，步数多了还会小于 0') },
  { 'sumvar', say('it matches noise of variance beta_1 + ... + beta_t: the variances do not simply add, because every later step also shrinks the noise already there by sqrt(1 - beta_s); what is left is 1 - abar_t',
    '它和方差为 beta_1 + ... + beta_t 的噪声一样：方差不是简单相加，因为后面每一步还会把已有的噪声乘以 sqrt(1 - beta_s)；最后剩下的方差是 1 - abar_t') },
  { 'swap', say('it matches x0 and noise swapped: sqrt(abar_t), near 1 at the start, multiplies the data; sqrt(1 - abar_t) the noise',
    '它和把 x0 与 noise 对调的结果一样：开始时接近 1 的 sqrt(abar_t) 乘的是数据，sqrt(1 - abar_t) 乘的是噪声') },
}

local function q_why(x0, noise, t, b, got)
  for _, m in ipairs(Q_MISTAKES) do
    local v = q_variant(x0, noise, t, b, m[1])
    if v and same(got, v) then return m[2] end
  end
end

local function check_q_sample(env)
  local ok, fn = lesson.need(env, 'q_sample')
  if not ok then return false, fn end
  local G = gen()
  -- 1. the closed form against t single noising steps, on 20,000 copies of the point (1.5, -1)
  local s = G.schedule('linear', 20, { beta_start = 0.01, beta_end = 0.15 })
  local b = s.betas:tolist()
  local n = 20000
  lm.manual_seed(2024)
  local x0 = lm.tensor({ 1.5, -1 }, D):view(1, 2):expand(n, 2):contiguous()
  for _, t in ipairs({ 8, 20 }) do
    local x = x0:clone()
    for k = 1, t do x = x * math.sqrt(1 - b[k]) + lm.randn(n, 2, D) * math.sqrt(b[k]) end
    local noise = lm.randn(n, 2, D)
    local rok, got = lesson.try(fn, x0:clone(), t, noise:clone(), s.betas:clone())
    if not rok then return false, got end
    if not lm.is_tensor(got) or got:numel() ~= 2 * n then
      return false, say(string.format('q_sample(x0, %d, noise, betas) with x0 of shape [%d, 2] returns %s; return x_t, a tensor of x0\'s shape', t, n, shape_text(got)),
        string.format('q_sample(x0, %d, noise, betas)（x0 的形状为 [%d, 2]）返回的是%s；应返回 x_t，形状与 x0 相同的张量', t, n, shape_text_zh(got)))
    end
    got = got:double():reshape(n, 2)
    local cm, cs = x:mean(1), x:std(1)
    local gm, gs = got:mean(1), got:std(1)
    local bad = (cm - gm):abs():max():item() > 0.03 or (cs - gs):abs():max():item() > 0.03
    if bad or gm:ne(gm):sum():item() > 0 or gs:ne(gs):sum():item() > 0 then
      local why = q_why(x0, noise, t, b, got) or say('write x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise with abar_t = (1 - beta_1)...(1 - beta_t), betas[s]:item() being beta_s',
        '写成 x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise，其中 abar_t = (1 - beta_1)...(1 - beta_t)，beta_s 是 betas[s]:item()')
      local f = '(%.3f, %.3f)'
      return false, say(string.format('from x0 = (1.5, -1), %d single noising steps on 20,000 copies give the mean %s and the spread (std) %s; your q_sample(x0, %d, noise, betas) gives the mean %s and the spread %s: %s',
          t, string.format(f, cm[1]:item(), cm[2]:item()), string.format(f, cs[1]:item(), cs[2]:item()), t,
          string.format(f, gm[1]:item(), gm[2]:item()), string.format(f, gs[1]:item(), gs[2]:item()), why.en),
        string.format('从 x0 = (1.5, -1) 出发，对 20,000 个副本各走 %d 个单步加噪，得到均值 %s、标准差 %s；你的 q_sample(x0, %d, noise, betas) 得到均值 %s、标准差 %s：%s',
          t, string.format(f, cm[1]:item(), cm[2]:item()), string.format(f, cs[1]:item(), cs[2]:item()), t,
          string.format(f, gm[1]:item(), gm[2]:item()), string.format(f, gs[1]:item(), gs[2]:item()), why.zh))
    end
  end
  -- 2. the formula on given noise: a linear, a random and a cosine schedule, t = 1, in between, T
  local rnd = lesson.lcg(31)
  local rb = {}
  for i = 1, 7 do rb[i] = 0.02 + 0.38 * rnd() end
  local cases = {
    { G.schedule('linear', 10, { beta_start = 0.02, beta_end = 0.2 }).betas, { 1, 4, 10 }, say('a linear schedule of 10 steps', '线性调度（10 步）') },
    { lm.tensor(rb, D), { 3, 7, 6, 1 }, say('a schedule of 7 random betas', '随机调度（7 个随机的 beta）') },
    { G.schedule('cosine', 20).betas, { 5, 20, 13 }, say('a cosine schedule of 20 steps', '余弦调度（20 步）') },
  }
  for ci, c in ipairs(cases) do
    local bl = c[1]:tolist()
    for k, t in ipairs(c[2]) do
      local xa = lesson.rand(100 * ci + k, 2, 5, 3)
      local na = lesson.rand(100 * ci + k + 50, 1.5, 5, 3)
      local want = q_variant(xa, na, t, bl)
      local rok, got = lesson.try(fn, xa:clone(), t, na:clone(), c[1]:clone())
      if not rok then return false, got end
      if not same(got, want) then
        local why = q_why(xa, na, t, bl, got)
        local _, msg = lesson.compare(lm.is_tensor(got) and got:double():reshape(-1) or lm.zeros(15, D), want:reshape(-1),
          { what = 'x_t', tol = 1e-6 })
        return false, say(string.format('q_sample on %s at t = %d, with given x0 (5 x 3) and noise: %s%s', c[3].en, t, msg.en,
            why and ('; ' .. why.en) or '; x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise, abar_t = (1 - beta_1)...(1 - beta_t)'),
          string.format('q_sample 在%s上，t = %d，给定 x0（5 x 3）和 noise：%s%s', c[3].zh, t, msg.zh or msg.en,
            why and ('；' .. why.zh) or '；x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise，abar_t = (1 - beta_1)...(1 - beta_t)'))
      end
    end
  end
  return true, say('right: your one jump has the mean and spread of t single noising steps, and equals the formula on linear, cosine and random schedules from t = 1 to T',
    '对：你的一步跳跃与 t 个单步加噪有相同的均值和标准差，并且在线性、余弦和随机调度上、从 t = 1 到 T 都与公式一致')
end

-- ---------------------------------------------------------------- the loss (step 3)

local LOSS_SCHED
local function loss_sched()
  LOSS_SCHED = LOSS_SCHED or gen().schedule('linear', 8, { beta_start = 0.05, beta_end = 0.3 })
  return LOSS_SCHED
end

-- per-row values of a schedule vector v at steps tv (a Lua array), as a (B, 1) float64 tensor
local function rows(v, tv, f)
  local out = {}
  for i, t in ipairs(tv) do out[i] = { f and f(v, t) or v[t] } end
  return lm.tensor(out, D)
end

-- a noise predictor that records what it is given; it answers x * w (w a parameter)
local function recorder(w)
  local calls = {}
  local f = function(x, t)
    calls[#calls + 1] = { x = lm.is_tensor(x) and x:detach():clone() or x, t = lm.is_tensor(t) and t:clone() or t }
    return x * w
  end
  return f, calls
end

local function xt_variant(x0, noise, tv, s, v)
  local ab, bl = s.alpha_bars:tolist(), s.betas:tolist()
  local a = rows(ab, tv)
  if v == 'beta' then return x0 * (1 - rows(bl, tv)):sqrt() + noise * rows(bl, tv):sqrt() end
  if v == 'var' then return x0 * a:sqrt() + noise * (1 - a) end
  if v == 'nosqrt' then return x0 * a + noise * (1 - a) end
  if v == 'prev' then
    local p = rows(ab, tv, function(x, t) return t > 1 and x[t - 1] or 1 end)
    return x0 * p:sqrt() + noise * (1 - p):sqrt()
  end
  if v == 'swap' then return x0 * (1 - a):sqrt() + noise * a:sqrt() end
  if v == 'nonoise' then return x0 * a:sqrt() end
  return x0 * a:sqrt() + noise * (1 - a):sqrt()
end

local XT_MISTAKES = {
  { 'beta', say('it matches sqrt(1 - beta_t) x0 + sqrt(beta_t) eps, one noising step: the jump from x0 to x_t uses abar_t (sched.alpha_bars), not beta_t',
    '它和 sqrt(1 - beta_t) x0 + sqrt(beta_t) eps（只加噪一步）一样：从 x0 跳到 x_t 用的是 abar_t（sched.alpha_bars），不是 beta_t') },
  { 'var', say('it matches sqrt(abar_t) x0 + (1 - abar_t) eps: the noise is multiplied by its standard deviation, sqrt(1 - abar_t)',
    '它和 sqrt(abar_t) x0 + (1 - abar_t) eps 一样：噪声要乘的是标准差 sqrt(1 - abar_t)') },
  { 'nosqrt', say('it matches abar_t x0 + (1 - abar_t) eps: both factors need their square roots',
    '它和 abar_t x0 + (1 - abar_t) eps 一样：两个系数都要开方') },
  { 'prev', say('it matches abar_{t-1}: with 1-based steps, sched.alpha_bars[t] is abar_t (index_select(1, t), no - 1)',
    '它和用 abar_{t-1} 一样：步数从 1 开始，sched.alpha_bars[t] 就是 abar_t（index_select(1, t)，不要减 1）') },
  { 'swap', say('it matches x0 and eps swapped: sqrt(abar_t) multiplies the data, sqrt(1 - abar_t) the noise',
    '它和把 x0 与 eps 对调一样：sqrt(abar_t) 乘数据，sqrt(1 - abar_t) 乘噪声') },
  { 'nonoise', say('it matches sqrt(abar_t) x0 without the noise: the network can only learn to find the noise if x_t contains it',
    '它和不加噪声的 sqrt(abar_t) x0 一样：x_t 里要有噪声，网络才能学着把它找出来') },
}

local function check_ddpm_loss(env)
  local ok, fn = lesson.need(env, 'ddpm_loss')
  if not ok then return false, fn end
  local s = loss_sched()
  local T = s.T
  -- A. t and noise given: the x_t handed to the predictor and the loss, exactly
  local B = 7
  local tv = { 1, 8, 3, 5, 2, 8, 6 }
  local t = lm.tensor(tv, { dtype = 'int64' })
  local x0 = lesson.rand(501, 2, B, 2)
  local noise = lesson.rand(502, 1.7, B, 2)
  local w = lm.tensor({ 0.7 }, D):requires_grad_()
  local f, calls = recorder(w)
  local on_en, on_zh = 'ddpm_loss(eps_model, x0, sched, t, noise) with t and noise given (7 rows)', 'ddpm_loss(eps_model, x0, sched, t, noise)，给定 t 和 noise（7 行）'
  local rok, loss = lesson.try(fn, f, x0:clone(), s, t:clone(), noise:clone())
  if not rok then return false, say(on_en .. ': ' .. loss.en, on_zh .. '：' .. (loss.zh or loss.en)) end
  if #calls == 0 then
    return false, say(on_en .. ': eps_model was never called; the loss compares eps_model(x_t, t) with the noise',
      on_zh .. '：从没调用过 eps_model；损失要比较的是 eps_model(x_t, t) 和噪声')
  end
  local c = calls[#calls]
  if not lm.is_tensor(c.t) or c.t:numel() ~= B or not lm.equal(c.t:long():reshape(B), t) then
    if lm.is_tensor(c.t) and c.t:numel() == B and lm.equal(c.t:long():reshape(B) + 1, t) then
      return false, say(on_en .. ': eps_model got t - 1; the steps are 1-based (1..T) and the network is given t as it is',
        on_zh .. '：eps_model 收到的是 t - 1；步数从 1 开始（1..T），直接把 t 交给网络')
    end
    return false, say(on_en .. ': eps_model was given the steps ' .. (lm.is_tensor(c.t) and table.concat(c.t:reshape(-1):tolist(), ', ') or type(c.t)) .. ', not the t given (1, 8, 3, 5, 2, 8, 6): draw t only when it is nil (t = t or lm.randint(...)), and pass it to eps_model',
      on_zh .. '：eps_model 收到的步数是 ' .. (lm.is_tensor(c.t) and table.concat(c.t:reshape(-1):tolist(), ', ') or type(c.t)) .. '，不是给定的 t（1, 8, 3, 5, 2, 8, 6）：只在 t 为 nil 时才抽取（t = t or lm.randint(...)），并把它交给 eps_model')
  end
  local want_x = xt_variant(x0, noise, tv, s)
  if not same(c.x, want_x, 1e-5) then
    local why
    if lm.is_tensor(c.x) and c.x:numel() == B * 2 then
      for _, m in ipairs(XT_MISTAKES) do
        if same(c.x, xt_variant(x0, noise, tv, s, m[1]), 1e-5) then why = m[2] break end
      end
    end
    local _, msg = lesson.compare(lm.is_tensor(c.x) and c.x:double():reshape(-1) or lm.zeros(B * 2, D), want_x:reshape(-1),
      { what = say('the x_t given to eps_model', '交给 eps_model 的 x_t'), tol = 1e-5 })
    why = why or say('x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise, with the noise given (draw it only when it is nil) and abar_t of each row\'s own t (sched.alpha_bars:index_select(1, t), viewed as (B, 1))',
      'x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise，噪声用给定的那份（只在它为 nil 时才抽取），每一行用它自己那个 t 的 abar_t（sched.alpha_bars:index_select(1, t)，变成 (B, 1)）')
    return false, say(on_en .. ': ' .. msg.en .. '; ' .. why.en, on_zh .. '：' .. (msg.zh or msg.en) .. '；' .. why.zh)
  end
  local pred = want_x * 0.7
  local want = (pred - noise):pow(2):mean():item()
  local got = lesson.number(loss)
  if not lm.is_tensor(loss) or got == nil then
    if type(loss) == 'number' then
      return false, say(on_en .. ': it returns a number; return the loss as a tensor (no :item()): training calls loss:backward() on it',
        on_zh .. '：它返回的是一个数；要把损失作为张量返回（不要 :item()）：训练时要对它调用 loss:backward()')
    end
    return false, say(on_en .. ' returns ' .. shape_text(loss) .. '; return the mean squared error, a one-element tensor',
      on_zh .. '返回的是' .. shape_text_zh(loss) .. '；应返回均方误差，一个只有一个元素的张量')
  end
  if math.abs(got - want) > 1e-5 * math.max(1, want) then
    local d2 = (pred - noise):pow(2)
    local alts = {
      { (pred - x0):pow(2):mean():item(), say('it matches the error against x0: the network predicts the noise, so the target is the noise (eps), not the data',
        '它和与 x0 比较的误差一样：网络预测的是噪声，所以目标是噪声 eps，不是数据') },
      { (pred - want_x):pow(2):mean():item(), say('it matches the error against x_t: the target is the noise that was added, eps',
        '它和与 x_t 比较的误差一样：目标是加进去的那份噪声 eps') },
      { d2:sum():item(), say('it matches the sum of the squares: take their mean (as F.mse_loss), so the loss does not grow with the batch',
        '它和平方和一样：要取平均（与 F.mse_loss 相同），损失才不会随 batch 变大') },
      { d2:sum(2):mean():item(), say('it matches the mean over the rows of the squared norm, |eps - eps_theta|^2, which is 2 (the points\' dimension) times the mean over every element; take the mean over every element, as F.mse_loss and gen.DDPM2D do',
        '它和各行平方范数 |eps - eps_theta|^2 的平均一样，是对所有元素求平均的 2 倍（点的维数）；要对所有元素求平均，和 F.mse_loss、gen.DDPM2D 一样') },
      { (pred - noise):abs():mean():item(), say('it matches the mean absolute error: the loss is the mean of the squares',
        '它和平均绝对误差一样：损失是平方的平均') },
      { math.sqrt(want), say('it matches the square root of the mean square (RMSE): return the mean square itself',
        '它和均方根误差（RMSE）一样：直接返回均方误差本身') },
    }
    local why = say('return ((eps_model(x_t, t) - noise)^2):mean()', '返回 ((eps_model(x_t, t) - noise)^2):mean()')
    for _, a in ipairs(alts) do
      if math.abs(got - a[1]) <= 1e-5 * math.max(1, math.abs(a[1])) then why = a[2] break end
    end
    return false, say(string.format('%s: the loss is %s, expected %s (eps_model answered 0.7 x_t): %s', on_en, lesson.show(got), lesson.show(want), why.en),
      string.format('%s：损失是 %s，应为 %s（eps_model 的回答是 0.7 x_t）：%s', on_zh, lesson.show(got), lesson.show(want), why.zh))
  end
  local bok = pcall(function() loss:backward() end)
  if not bok or not lm.is_tensor(w.grad) or w.grad:abs():sum():item() == 0 then
    return false, say(on_en .. ': the loss does not reach the network\'s parameters (loss:backward() leaves no gradient): do not compute it under lm.no_grad or detach it',
      on_zh .. '：损失传不到网络的参数（loss:backward() 之后没有梯度）：不要在 lm.no_grad 里计算它，也不要 detach')
  end
  -- B. t and noise drawn by the function: 4,000 rows, T = 8
  B = 4000
  lm.manual_seed(77)
  x0 = lm.randn(B, 2, D) * 0.5 + 1
  w = lm.tensor({ 0.3 }, D):requires_grad_()
  f, calls = recorder(w)
  on_en, on_zh = 'ddpm_loss(eps_model, x0, sched) drawing t and noise itself (4,000 rows, T = 8)', 'ddpm_loss(eps_model, x0, sched) 自己抽取 t 和 noise（4,000 行，T = 8）'
  rok, loss = lesson.try(fn, f, x0:clone(), s)
  if not rok then
    return false, say(on_en .. ': ' .. loss.en .. ' (t is drawn in 1..T: lm.randint(1, sched.T + 1, {B}), randint\'s upper bound excluded)',
      on_zh .. '：' .. (loss.zh or loss.en) .. '（t 在 1..T 中抽取：lm.randint(1, sched.T + 1, {B})，randint 不含上界）')
  end
  if #calls == 0 then
    return false, say(on_en .. ': eps_model was never called', on_zh .. '：从没调用过 eps_model')
  end
  c = calls[#calls]
  if not lm.is_tensor(c.t) or c.t:numel() ~= B then
    return false, say(on_en .. ': eps_model was given ' .. shape_text(c.t) .. ' as t; draw one step per row, lm.randint(1, sched.T + 1, {B}): each x0 gets its own t, as in Algorithm 1 of Ho et al., so one batch trains every level of noise',
      on_zh .. '：eps_model 收到的 t 是' .. shape_text_zh(c.t) .. '；要每行抽一个步数，lm.randint(1, sched.T + 1, {B})：和 Ho 等人的算法 1 一样，每个 x0 有自己的 t，一个 batch 就能训练各种噪声强度')
  end
  local tl = c.t:double():reshape(B)
  local lo, hi = tl:min():item(), tl:max():item()
  if lo == hi then
    return false, say(string.format('%s: every row got the same step t = %s; draw one step per row, lm.randint(1, sched.T + 1, {B}): each x0 gets its own t, as in Algorithm 1 of Ho et al., so one batch trains every level of noise', on_en, lesson.show(lo)),
      string.format('%s：每一行得到的都是同一个步数 t = %s；要每行抽一个步数，lm.randint(1, sched.T + 1, {B})：和 Ho 等人的算法 1 一样，每个 x0 有自己的 t，一个 batch 就能训练各种噪声强度', on_zh, lesson.show(lo)))
  end
  if lo < 1 or hi > T or tl:ne(tl:round()):sum():item() > 0 then
    return false, say(string.format('%s: t ranges over %s..%s; the steps are the integers 1..T = 1..%d: lm.randint(1, sched.T + 1, {B})%s', on_en, lesson.show(lo), lesson.show(hi), T,
        lo == 0 and ' (0-based steps 0..T-1 would ask for abar_0, the data itself)' or ''),
      string.format('%s：t 的范围是 %s..%s；步数是整数 1..T = 1..%d：lm.randint(1, sched.T + 1, {B})%s', on_zh, lesson.show(lo), lesson.show(hi), T,
        lo == 0 and '（从 0 开始的 0..T-1 会用到 abar_0，那就是数据本身）' or ''))
  end
  if hi < T then
    return false, say(string.format('%s: t never reaches T = %d (it ranges over %s..%s): randint\'s upper bound is excluded, so draw lm.randint(1, sched.T + 1, {B})', on_en, T, lesson.show(lo), lesson.show(hi)),
      string.format('%s：t 从来取不到 T = %d（范围是 %s..%s）：randint 不含上界，所以要写 lm.randint(1, sched.T + 1, {B})', on_zh, T, lesson.show(lo), lesson.show(hi)))
  end
  local counts = {}
  for k = 1, T do counts[k] = 0 end
  for _, v in ipairs(tl:tolist()) do counts[v] = counts[v] + 1 end
  for k = 1, T do
    if counts[k] < 0.8 * B / T or counts[k] > 1.2 * B / T then
      return false, say(string.format('%s: step %d was drawn %d times out of 4,000, expected about %d: t must be uniform over 1..T', on_en, k, counts[k], B // T),
        string.format('%s：在 4,000 次中第 %d 步被抽到 %d 次，应约为 %d 次：t 要在 1..T 上均匀分布', on_zh, k, counts[k], B // T))
    end
  end
  local ab = s.alpha_bars:index_select(1, c.t:long():reshape(B)):view(B, 1)
  local x = lm.is_tensor(c.x) and c.x:numel() == 2 * B and c.x:double():reshape(B, 2) or nil
  if not x then
    return false, say(on_en .. ': eps_model was given ' .. shape_text(c.x) .. ' as x_t; give it x_t of x0\'s shape',
      on_zh .. '：eps_model 收到的 x_t 是' .. shape_text_zh(c.x) .. '；x_t 的形状应与 x0 相同')
  end
  local eps = (x - x0 * ab:sqrt()) / (1 - ab):sqrt() -- the noise the function drew, recovered
  local m, sd = eps:mean():item(), eps:std():item()
  if math.abs(m) > 0.1 or math.abs(sd - 1) > 0.1 or eps:ne(eps):sum():item() > 0 then
    return false, say(string.format('%s: the noise in x_t has mean %.3f and standard deviation %.3f; it must be standard normal, N(0, I): lm.randn_like(x0) (lm.rand is uniform on [0, 1))', on_en, m, sd),
      string.format('%s：x_t 里的噪声均值为 %.3f、标准差为 %.3f；它必须是标准正态 N(0, I)：lm.randn_like(x0)（lm.rand 是 [0, 1) 上的均匀分布）', on_zh, m, sd))
  end
  if (eps:select(2, 1) - eps:select(2, 2)):abs():max():item() < 1e-6 then
    return false, say(on_en .. ': both coordinates of a row got the same noise; draw noise of x0\'s shape (B, 2), lm.randn_like(x0)',
      on_zh .. '：同一行的两个坐标用了同一个噪声值；要抽取与 x0 形状相同 (B, 2) 的噪声，lm.randn_like(x0)')
  end
  want = (x * 0.3 - eps):pow(2):mean():item()
  got = lesson.number(loss)
  if got == nil or math.abs(got - want) > 1e-5 * math.max(1, want) then
    return false, say(string.format('%s: the loss is %s, but the error of eps_model\'s answer (0.3 x_t) against the noise inside x_t is %s: the noise in the target must be the very noise in x_t; draw it once and use it twice', on_en, got and lesson.show(got) or type(loss), lesson.show(want)),
      string.format('%s：损失是 %s，但 eps_model 的回答（0.3 x_t）与 x_t 中那份噪声的误差是 %s：作为目标的噪声必须正是加进 x_t 的那份；只抽一次，用两次', on_zh, got and lesson.show(got) or type(loss), lesson.show(want)))
  end
  return true, say('right: x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps for the very eps the loss compares with, t uniform over 1..T one per row, and the mean squared error as a tensor that trains',
    '对：x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps，而损失比较的正是这份 eps；t 每行一个、在 1..T 上均匀；均方误差是一个能反向传播的张量')
end

-- ---------------------------------------------------------------- the reverse step (step 4)

local function p_variant(x, e, z, t, s, v)
  local b, a, ab = s.betas[t]:item(), s.alphas[t]:item(), s.alpha_bars[t]:item()
  local abp = t > 1 and s.alpha_bars[t - 1]:item() or 1
  local coef, div, sig, noise = b / math.sqrt(1 - ab), math.sqrt(a), math.sqrt(b), t > 1
  if v == 'noalpha' then div = 1
  elseif v == 'abar' then div = math.sqrt(ab)
  elseif v == 'coef_nosqrt' then coef = b / (1 - ab)
  elseif v == 'coef_abar' then coef = math.sqrt(1 - ab)
  elseif v == 'sign' then coef = -coef
  elseif v == 'lastnoise' then noise = true
  elseif v == 'nonoise' then noise = false
  elseif v == 'sigma2' then sig = b
  elseif v == 'tilde' then sig = math.sqrt((1 - abp) / (1 - ab) * b)
  elseif v == 'shifted' then -- the schedule read at t - 1 throughout
    if t < 2 then return nil end
    b, a = s.betas[t - 1]:item(), s.alphas[t - 1]:item()
    coef, div, sig = b / math.sqrt(1 - abp), math.sqrt(a), math.sqrt(b)
  end
  local m = (x - e * coef) / div
  if noise then m = m + z * sig end
  return m
end

local P_MISTAKES = {
  { 'noalpha', say('it matches the mean without 1/sqrt(alpha_t): after taking the noise\'s share out, divide by sqrt(alpha_t) = sqrt(1 - beta_t), the factor the forward step multiplied by',
    '它和少了 1/sqrt(alpha_t) 的均值一样：减去噪声那一份之后，还要除以 sqrt(alpha_t) = sqrt(1 - beta_t)，也就是正向那一步乘上的因子') },
  { 'abar', say('it divides by sqrt(abar_t): that undoes the shrinking of all t steps at once; one reverse step undoes one forward step, so divide by sqrt(alpha_t)',
    '它除以的是 sqrt(abar_t)：那是一下子撤销全部 t 步的缩放；反向一步只撤销正向的一步，所以要除以 sqrt(alpha_t)') },
  { 'coef_nosqrt', say('the noise\'s coefficient is beta_t / sqrt(1 - abar_t): the noise in x_t has standard deviation sqrt(1 - abar_t)',
    '噪声的系数是 beta_t / sqrt(1 - abar_t)：x_t 里噪声的标准差是 sqrt(1 - abar_t)') },
  { 'coef_abar', say('it takes out sqrt(1 - abar_t) eps, all the noise in x_t (that is the step to x_0\'s estimate); one reverse step takes out beta_t / sqrt(1 - abar_t) eps, the share of step t',
    '它减去的是 sqrt(1 - abar_t) eps，即 x_t 中全部的噪声（那是估计 x_0 的一步）；反向一步只减去 beta_t / sqrt(1 - abar_t) eps，第 t 步的那一份') },
  { 'sign', say('subtract the predicted noise: x_t - beta_t / sqrt(1 - abar_t) eps',
    '要减去预测的噪声：x_t - beta_t / sqrt(1 - abar_t) eps') },
  { 'lastnoise', say('at t = 1 the result is x_0, the sample itself: no noise is added at the last step (z = 0)',
    '在 t = 1 时得到的是 x_0，即样本本身：最后一步不加噪声（z = 0）') },
  { 'nonoise', say('that is the mean alone: ancestral sampling adds sigma_t z, sigma_t = sqrt(beta_t), at every step but the last; without it the samples shrink towards the modes',
    '这只是均值：祖先采样在除最后一步之外的每一步都要加上 sigma_t z，sigma_t = sqrt(beta_t)；不加的话样本会向各个模式收缩') },
  { 'sigma2', say('z is multiplied by the standard deviation sigma_t = sqrt(beta_t); beta_t is the variance',
    'z 要乘的是标准差 sigma_t = sqrt(beta_t)；beta_t 是方差') },
  { 'shifted', say('it matches the schedule read at t - 1: the steps are 1-based and so are the tensors, so sched.betas[t] is beta_t',
    '它和在 t - 1 处读取调度的结果一样：步数从 1 开始，张量的下标也从 1 开始，所以 sched.betas[t] 就是 beta_t') },
  { 'tilde', say('that is sigma_t^2 = (1 - abar_{t-1}) / (1 - abar_t) beta_t, the other choice in Ho et al. (a little less noise); here use sigma_t^2 = beta_t, as gen.ddpm_sample does',
    '这是 sigma_t^2 = (1 - abar_{t-1}) / (1 - abar_t) beta_t，Ho 等人给出的另一种选择（噪声稍少）；这里用 sigma_t^2 = beta_t，和 gen.ddpm_sample 一样') },
}

local function check_p_step(env)
  local ok, fn = lesson.need(env, 'p_step')
  if not ok then return false, fn end
  local G = gen()
  local cases = {
    { G.schedule('linear', 10, { beta_start = 0.02, beta_end = 0.2 }), { 10, 1, 2, 6 }, say('a linear schedule of 10 steps', '线性调度（10 步）') },
    { G.schedule('cosine', 12), { 12, 7, 1, 2 }, say('a cosine schedule of 12 steps', '余弦调度（12 步）') },
  }
  for ci, c in ipairs(cases) do
    for k, t in ipairs(c[2]) do
      local seed = 300 * ci + 10 * k
      local x, e, z = lesson.rand(seed, 2, 5, 3), lesson.rand(seed + 1, 1.5, 5, 3), lesson.rand(seed + 2, 1.2, 5, 3)
      local want = p_variant(x, e, z, t, c[1])
      local rok, got = lesson.try(fn, x:clone(), e:clone(), t, c[1], z:clone())
      if not rok then return false, got end
      if not same(got, want) then
        local why
        if lm.is_tensor(got) and got:numel() == 15 then
          for _, m in ipairs(P_MISTAKES) do
            local v = p_variant(x, e, z, t, c[1], m[1])
            if v and same(got, v) then why = m[2] break end
          end
        end
        why = why or say('x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sqrt(beta_t) z, without the z term at t = 1',
          'x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sqrt(beta_t) z，t = 1 时没有 z 这一项')
        local _, msg = lesson.compare(lm.is_tensor(got) and got:double():reshape(-1) or lm.zeros(15, D), want:reshape(-1),
          { what = 'x_{t-1}', tol = 1e-6 })
        return false, say(string.format('p_step on %s at t = %d (x_t, eps and z given, 5 x 3): %s; %s', c[3].en, t, msg.en, why.en),
          string.format('p_step 在%s上，t = %d（给定 x_t、eps 和 z，5 x 3）：%s；%s', c[3].zh, t, msg.zh or msg.en, why.zh))
      end
    end
  end
  return true, say('right: your reverse step is x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sigma_t z on linear and cosine schedules, and adds no noise at t = 1',
    '对：你的反向一步在线性和余弦调度上都是 x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sigma_t z，并且在 t = 1 时不加噪声')
end

-- ---------------------------------------------------------------- scenes

-- An untrained DDPM, for a diffusion scene asked for before the step's code made one.
local blank_ddpm
local function ddpm_or_blank(m)
  if type(m) == 'table' and type(m.sched) == 'table' and type(m.eps) == 'function' and type(m.sample) == 'function' then return m end
  blank_ddpm = blank_ddpm or gen().DDPM2D { data = 'ring' }
  return blank_ddpm
end

local blank_gan
local function gan_or_blank(g)
  if type(g) == 'table' and type(g.surface) == 'function' and type(g.sample) == 'function' then return g end
  blank_gan = blank_gan or gen().GAN2D { data = 'ring' }
  return blank_gan
end

return {
  title = say('Diffusion models: the forward process, the noise-prediction loss, sampling, and GAN against DDPM',
    '扩散模型：正向过程、预测噪声的损失、采样，以及 GAN 与 DDPM 的对比'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (GANs against diffusion models)',
    '智能计算系统 第 3 章：深度学习（生成对抗网络与扩散模型）'),
  summary = say([[Why diffusion after GANs; the forward process in closed form, written and checked
against many single noising steps; the noise-prediction loss and a DDPM trained on a ring; ancestral
and DDIM sampling on a Gaussian whose answer is known; a GAN and a DDPM compared on the same data
with the yardstick.]],
    [[为什么在 GAN 之后有扩散模型；亲手写出正向过程的闭式解，并与许多次单步加噪对照；预测噪声的
损失，在圆环上训练一个 DDPM；在答案已知的高斯分布上检验祖先采样和 DDIM；用同一把尺子在同样的
数据上比较 GAN 和 DDPM。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('From GANs to diffusion', '从 GAN 到扩散模型'),
      text = say([[
The notes set GANs against diffusion models. A GAN's problems: its images lack diversity; mode
collapse (the generator makes a few kinds of sample well and leaves the other modes of the data
out); and training made hard by the adversarial game (two networks that must stay balanced). A
diffusion model's advantages: there is no adversary in its training, which is easier; it does not
suffer mode collapse; it produces diverse images. DDPM (Ho, Jain and Abbeel, "Denoising diffusion
probabilistic models", NeurIPS 2020) is the one the notes credit with beating GANs at image
synthesis (on CIFAR-10 its FID, 3.17, was better than the GANs of the time; Dhariwal and Nichol's
2021 "Diffusion models beat GANs on image synthesis" did it on ImageNet).

The idea is two processes:

  forward   x_0 -> x_1 -> ... -> x_T    add a little Gaussian noise at every
                                        step, until x_T is pure noise N(0, I)
  reverse   x_T -> ... -> x_1 -> x_0    a network learns to undo ONE step

The forward process is fixed: nothing in it is learned. The reverse process is the model: a network
that, given a noisy x_t and the step t, tells the noise in it. To generate, start from pure noise
and undo the steps one by one.

The code destroys the ring of 8 Gaussians (the data of the GAN lesson) with gen.DDPM2D's schedule,
200 steps, and prints at a few steps how far the points are from the centre and how many are still
on one of the 8 modes (within 0.25 of its centre). Watch the structure go while the cloud keeps
about the same size: each step shrinks the points a little as it adds noise. The picture is the
diffusion scene's demonstration: the forward chain on the left, the reverse chain on the right, and
the schedule.]],
        [[
讲义把 GAN 和扩散模型放在一起比较。GAN 存在的问题：生成图像缺乏多样性；模式崩溃（生成器只把
少数几类样本做好，数据的其他模式都丢掉了）；对抗带来的训练困难（两个网络必须保持平衡）。扩散
模型的优势：训练过程中没有对抗，训练更容易；不会受到模式崩溃的影响；能够产生多样化的图像。
讲义说 DDPM（去噪扩散概率模型，Ho、Jain、Abbeel，NeurIPS 2020）在图像合成方面击败了 GAN
（它在 CIFAR-10 上的 FID 为 3.17，好于当时的 GAN；Dhariwal 与 Nichol 2021 年的《Diffusion
models beat GANs on image synthesis》在 ImageNet 上做到了这一点）。

基本原理是两个过程：

  正向过程   x_0 -> x_1 -> ... -> x_T    每一步加一点高斯噪声，
                                         直到 x_T 成为纯噪声 N(0, I)
  反向过程   x_T -> ... -> x_1 -> x_0    网络学习撤销"一步"

正向过程是固定的，里面没有要学的东西。反向过程才是模型：一个网络，给它带噪声的 x_t 和步数 t，
它说出其中的噪声。生成时从纯噪声出发，一步一步撤销回去。

代码用 gen.DDPM2D 的调度（200 步）破坏由 8 个高斯组成的圆环（GAN 那一课的数据），在几个步数上
打印点离中心多远、还有多少点留在 8 个模式之一上（离模式中心 0.25 以内）。注意：结构消失了，点云
的大小却差不多不变——每一步在加噪声的同时把点稍稍缩小。画面是扩散场景的演示：左边是正向链，
右边是反向链，还有调度曲线。]]),
      code = [[
local gen = require 'lumen.generative'
local sched = gen.schedule('linear', 200, {beta_start = 1e-4, beta_end = 0.04})  -- gen.DDPM2D's
local x0 = gen.toy2d('ring', 2000, {seed = 1})               -- 8 Gaussians on a circle of radius 2
local noise = lm.randn(2000, 2, {dtype = 'float64'})
local angles = lm.arange(0, 8, {dtype = 'float64'}) * (math.pi / 4)
local centres = lm.stack({angles:cos(), angles:sin()}, 2) * 2 -- the 8 modes
local function on_modes(x)                                   -- the share within 0.25 of a mode
  local d = (x:view(-1, 1, 2) - centres:view(1, 8, 2)):pow(2):sum(3):sqrt():min(2)
  return d:lt(0.25):double():mean():item()
end
print('    t   sqrt(abar_t)   mean distance from 0   on a mode')
for _, t in ipairs({0, 10, 25, 50, 100, 200}) do
  local x = t == 0 and x0 or gen.q_sample(x0, t, noise, sched)
  local ab = t == 0 and 1 or sched.alpha_bars[t]:item()
  print(string.format('%5d   %10.3f   %18.3f   %8.1f%%', t, math.sqrt(ab),
    x:pow(2):sum(2):sqrt():mean():item(), 100 * on_modes(x)))
end
]],
      scene = 'diffusion',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The forward process, in one jump', '正向过程：一步跳到 x_t'),
      text = say([[
One forward step:

  q(x_t | x_{t-1}) = N( sqrt(1 - beta_t) x_{t-1}, beta_t I )
  that is  x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) z,   z ~ N(0, I)

beta_1 < beta_2 < ... < beta_T is the schedule, small numbers. The factor sqrt(1 - beta_t) keeps
the variance bounded: if x_{t-1} has variance 1, so does x_t (1 - beta_t + beta_t). Two steps
compose into one: with alpha_t = 1 - beta_t, x_t = sqrt(alpha_t alpha_{t-1}) x_{t-2} plus two
independent noises of variances alpha_t (1 - alpha_{t-1}) and 1 - alpha_t, which add up to
1 - alpha_t alpha_{t-1}. So t steps make one Gaussian jump from the data:

  q(x_t | x_0) = N( sqrt(abar_t) x_0, (1 - abar_t) I )
  abar_t = (1 - beta_1)(1 - beta_2) ... (1 - beta_t)
  x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps,   eps ~ N(0, I)

That is what makes training cheap: any x_t in one line, no chain to run. Schedules: linear (Ho et
al.: beta from 1e-4 to 0.02 over T = 1000) and cosine (Nichol and Dhariwal 2021: abar_t =
cos^2(((t/T + s)/(1 + s)) pi/2), normalised, s = 0.008), which destroys the data more evenly; the
linear one has made x_t almost pure noise long before T. The code prints abar_t for both and plots
the signal's factor sqrt(abar_t) and the noise's sqrt(1 - abar_t) (the picture). Then it runs t
single steps on 5,000 copies of the ring's point (2, 0) and compares their mean and spread with
`q_sample`, which you will correct: the given one takes a single step, with beta_t.]],
        [[
正向的一步：

  q(x_t | x_{t-1}) = N( sqrt(1 - beta_t) x_{t-1}, beta_t I )
  即  x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) z,   z ~ N(0, I)

beta_1 < beta_2 < ... < beta_T 是调度，都是很小的数。因子 sqrt(1 - beta_t) 让方差保持有界：
x_{t-1} 的方差为 1 时，x_t 的方差也是 1（1 - beta_t + beta_t）。两步可以合成一步：记
alpha_t = 1 - beta_t，x_t = sqrt(alpha_t alpha_{t-1}) x_{t-2} 再加上两份独立的噪声，方差分别
是 alpha_t (1 - alpha_{t-1}) 和 1 - alpha_t，加起来是 1 - alpha_t alpha_{t-1}。所以 t 步合起来
就是从数据出发的一次高斯跳跃：

  q(x_t | x_0) = N( sqrt(abar_t) x_0, (1 - abar_t) I )
  abar_t = (1 - beta_1)(1 - beta_2) ... (1 - beta_t)
  x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps,   eps ~ N(0, I)

正因为如此训练才便宜：任何一个 x_t 一行就能算出，不用跑整条链。调度有线性的（Ho 等人：
T = 1000 步，beta 从 1e-4 到 0.02）和余弦的（Nichol 与 Dhariwal 2021：abar_t =
cos^2(((t/T + s)/(1 + s)) pi/2) 再归一化，s = 0.008），后者对数据的破坏更均匀；线性调度远在
T 之前就已经让 x_t 几乎全是噪声。代码打印两种调度的 abar_t，并画出信号的系数 sqrt(abar_t) 和
噪声的系数 sqrt(1 - abar_t)（画面）。然后在圆环上的点 (2, 0) 的 5,000 个副本上跑 t 个单步，
把它们的均值和标准差与 `q_sample` 比较——你要改正它：给出的版本只走了一步，用的是 beta_t。]]),
      code = [[
local gen = require 'lumen.generative'
local D = {dtype = 'float64'}
function q_sample(x0, t, noise, betas)   -- to correct: one noising step, with beta_t
  local b = betas[t]:item()
  return x0 * math.sqrt(1 - b) + noise * math.sqrt(b)
end
local lin, cos = gen.schedule('linear', 1000), gen.schedule('cosine', 1000)
print('     t   abar_t linear   abar_t cosine      (T = 1000)')
for _, t in ipairs({1, 100, 250, 500, 750, 1000}) do
  print(string.format('%6d   %13.5f   %13.5f', t, lin.alpha_bars[t]:item(), cos.alpha_bars[t]:item()))
end
viz.clear()
local ts, curves = {}, {{}, {}, {}, {}}
for t = 1, 1000, 9 do
  ts[#ts + 1] = t
  local a, c = lin.alpha_bars[t]:item(), cos.alpha_bars[t]:item()
  for k, v in ipairs({math.sqrt(a), math.sqrt(1 - a), math.sqrt(c), math.sqrt(1 - c)}) do curves[k][#ts] = v end
end
viz.plot('linear schedule/signal sqrt(abar_t)', ts, curves[1], {x = 't'})
viz.plot('linear schedule/noise sqrt(1 - abar_t)', ts, curves[2], {x = 't'})
viz.plot('cosine schedule/signal sqrt(abar_t)', ts, curves[3], {x = 't'})
viz.plot('cosine schedule/noise sqrt(1 - abar_t)', ts, curves[4], {x = 't'})
-- t single steps against your q_sample, on 5,000 copies of (2, 0); gen.DDPM2D's schedule
local s, n = gen.schedule('linear', 200, {beta_end = 0.04}), 5000
local x0 = lm.tensor({2, 0}, D):view(1, 2):expand(n, 2):contiguous()
print('\n    t   t single steps: mean x  spread   your q_sample: mean x  spread')
for _, t in ipairs({1, 10, 50, 200}) do
  local x = x0:clone()
  for k = 1, t do
    local b = s.betas[k]:item()
    x = x * math.sqrt(1 - b) + lm.randn(n, 2, D) * math.sqrt(b)
  end
  local y = q_sample(x0, t, lm.randn(n, 2, D), s.betas)
  print(string.format('%5d   %21.3f  %6.3f   %20.3f  %6.3f', t, x:select(2, 1):mean():item(),
    x:std():item(), y:select(2, 1):mean():item(), y:std():item()))
end
]],
      scene = 'curves',
      exercise = {
        prompt = say([[
Correct `q_sample(x0, t, noise, betas)`: x0 and noise are tensors of the same shape, t a step 1..T
(1-based), betas the float64 tensor of beta_1..beta_T; return x_t = sqrt(abar_t) x0 +
sqrt(1 - abar_t) noise, computing abar_t from the betas yourself (betas[s]:item() is beta_s). The
check runs t single noising steps on 20,000 copies of a point and compares their mean and spread
with your q_sample's on fresh noise, then compares your x_t with the formula on given x0 and noise
on a linear, a cosine and a random schedule, at t = 1, in between and T.]],
          [[
改正 `q_sample(x0, t, noise, betas)`：x0 和 noise 是形状相同的张量，t 是步数 1..T（从 1 开始），
betas 是 beta_1..beta_T 组成的 float64 张量；返回 x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise，
abar_t 要你自己由 betas 算出（betas[s]:item() 就是 beta_s）。检查会在一个点的 20,000 个副本上
跑 t 个单步加噪，把它们的均值和标准差与你的 q_sample 在新噪声上的结果比较；然后在线性、余弦和
随机调度上，在 t = 1、中间和 T，用给定的 x0 和 noise 把你的 x_t 与公式比较。]]),
        hints = {
          say('abar_t is a product: start from 1 and multiply by (1 - betas[s]:item()) for s = 1, t.',
            'abar_t 是一个乘积：从 1 开始，对 s = 1, t 依次乘以 (1 - betas[s]:item())。'),
          say('Then return x0 * math.sqrt(abar) + noise * math.sqrt(1 - abar): square roots on both, the standard deviations.',
            '然后返回 x0 * math.sqrt(abar) + noise * math.sqrt(1 - abar)：两个系数都开方，它们是标准差。'),
        },
        check = keeping_rng(check_q_sample),
        solution = [[
function q_sample(x0, t, noise, betas)
  local abar = 1
  for s = 1, t do                        -- abar_t = (1 - beta_1) ... (1 - beta_t)
    abar = abar * (1 - betas[s]:item())
  end
  return x0 * math.sqrt(abar) + noise * math.sqrt(1 - abar)
end
]],
        wrong = {
          [[
function q_sample(x0, t, noise, betas)   -- beta_t instead of abar_t
  local b = betas[t]:item()
  return x0 * math.sqrt(1 - b) + noise * math.sqrt(b)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- no square roots
  local abar = 1
  for s = 1, t do abar = abar * (1 - betas[s]:item()) end
  return x0 * abar + noise * (1 - abar)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- abar over t - 1 steps
  local abar = 1
  for s = 1, t - 1 do abar = abar * (1 - betas[s]:item()) end
  return x0 * math.sqrt(abar) + noise * math.sqrt(1 - abar)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- abar over t + 1 steps
  local abar = 1
  for s = 1, math.min(t + 1, betas:numel()) do abar = abar * (1 - betas[s]:item()) end
  return x0 * math.sqrt(abar) + noise * math.sqrt(1 - abar)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- the variance where the standard deviation goes
  local abar = 1
  for s = 1, t do abar = abar * (1 - betas[s]:item()) end
  return x0 * math.sqrt(abar) + noise * (1 - abar)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- the betas summed, not the product
  local sum = 0
  for s = 1, t do sum = sum + betas[s]:item() end
  return x0 * math.sqrt(1 - sum) + noise * math.sqrt(sum)
end
]],
          [[
function q_sample(x0, t, noise, betas)   -- the noises' variances added up
  local abar, var = 1, 0
  for s = 1, t do
    abar = abar * (1 - betas[s]:item())
    var = var + betas[s]:item()
  end
  return x0 * math.sqrt(abar) + noise * math.sqrt(var)
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Training: predict the noise', '训练：预测噪声'),
      text = say([[
The reverse step needs to know the noise in x_t, so the network eps_theta(x_t, t) is trained to
predict it (Ho et al.'s Algorithm 1):

  repeat
    x_0 ~ the data;  t ~ Uniform{1, ..., T};  eps ~ N(0, I)
    x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps
    take a gradient step on  | eps - eps_theta(x_t, t) |^2

This is the "simplified" loss: the variational bound on the likelihood with its weights per step
dropped, which Ho et al. found samples better. Predicting the noise is one of equivalent choices
(the data x_0, or the mean of the reverse step, can be computed from it), and its targets have
variance 1 at every t. Look at what is missing: a second network. Training is regression, one loss
that goes down, the notes' "no adversary, easier to train".

`ddpm_loss(eps_model, x0, sched [, t, noise])` below is that loss for one batch, t and noise drawn
when not given; the given one asks the network for the data instead of the noise: correct it. The
code then trains gen.DDPM2D on the ring (its eps_theta: an MLP of 4 layers on [x_t, a sinusoidal
embedding of t], gen.time_embedding, as a transformer embeds positions; T = 200, Adam; here 64 wide,
half the default, and at lr = 5e-3 to learn in a short run), 600 steps, prints the loss and the
yardstick (the JS divergence, in bits, between 1,000 samples and 1,000 real points on a 40 x 40
grid: 0 for the same histogram, 1 for disjoint ones; about 0.5 after these 600 steps, 0.87 for the
untrained model), and compares your ddpm_loss with the reference on the trained network. The loss
does not fall to 0: at small t the noise is a tiny part of x_t, and only knowing where the data
lie lets the network tell it apart. The picture is this DDPM's diffusion scene: the ring noised by
the forward chain, and the reverse chain bringing samples back from pure noise (an untrained
model's until the code ran).]],
        [[
反向的一步需要知道 x_t 里的噪声，所以训练网络 eps_theta(x_t, t) 去预测它（Ho 等人的算法 1）：

  重复
    x_0 ~ 数据；  t ~ Uniform{1, ..., T}；  eps ~ N(0, I)
    x_t = sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps
    对  | eps - eps_theta(x_t, t) |^2  做一步梯度下降

这是"简化"的损失：似然的变分下界去掉了每一步的权重，Ho 等人发现这样采样效果更好。预测噪声是
几种等价选择之一（由它可以算出数据 x_0，或反向一步的均值），而且它的目标在每个 t 上方差都是 1。
注意少了什么：第二个网络。训练就是回归，一个损失一路下降——这就是讲义说的"没有对抗，训练更
容易"。

下面的 `ddpm_loss(eps_model, x0, sched [, t, noise])` 就是一个 batch 的这个损失，没给 t 和
noise 时自己抽取；给出的版本让网络去预测数据而不是噪声：改正它。然后代码在圆环上训练
gen.DDPM2D（它的 eps_theta：4 层的 MLP，输入是 [x_t, t 的正弦嵌入]，即 gen.time_embedding，和
Transformer 嵌入位置的方法一样；T = 200，Adam；这里每层宽 64，是默认值的一半，学习率 5e-3，好在
短时间里学会）600 步，打印损失和那把尺子（1,000 个样本与 1,000 个真实点在 40 x 40 网格上的 JS
散度，单位是比特：直方图相同为 0，完全不相交为 1；训练这 600 步之后约 0.5，未训练的模型是
0.87），并在训练好的网络上把你的 ddpm_loss 与参考实现比较。损失不会降到 0：t 很小时
噪声只占 x_t 的很小一部分，网络只有知道数据在哪里才能把它分辨出来。画面是这个 DDPM 的扩散场景：
正向链把圆环加噪，反向链从纯噪声把样本带回来（代码运行之前是未训练模型的画面）。]]),
      code = [[
local gen = require 'lumen.generative'
function ddpm_loss(eps_model, x0, sched, t, noise)   -- to correct: asks the network for the data
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})           -- one step per row, uniform in 1..T
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - x0):pow(2):mean()
end
-- T = 200, linear betas 1e-4 .. 0.04; an MLP of 4 layers of 64 (the default is 128), Adam at 5e-3
ddpm = gen.DDPM2D {data = 'ring', seed = 1, hidden = 64, lr = 5e-3}
local t0, sum = lm.sys.clock(), 0
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
local SAN = lm.build_info().sanitize
local threads = lm.get_num_threads()
lm.set_num_threads(1)                                -- networks this small run faster on one thread
local ok, err = pcall(function()
  for s = 1, SAN and 200 or 600 do
    sum = sum + ddpm:step()
    if s % 200 == 0 then
      print(string.format('step %4d   loss (mean of the last 200) %.4f   %.1f s', s, sum / 200, lm.sys.clock() - t0))
      sum = 0
    end
  end
  print(string.format('JS divergence, %d samples (ancestral, 200 steps) against as many real points: %.3f bits',
    SAN and 500 or 1000, ddpm:js(SAN and 500 or 1000)))
end)
lm.set_num_threads(threads)
if not ok then error(err, 0) end
-- your loss against the reference, on the trained network, one batch with the same t and noise
local x0 = gen.toy2d('ring', 2000):float()
local t, noise = lm.randint(1, ddpm.T + 1, {2000}), lm.randn(2000, 2)
local net = function(x, tt) return ddpm:eps(x, tt) end
local ref = lm.no_grad(function()
  return F.mse_loss(net(gen.q_sample(x0, t, noise, ddpm.sched), t), noise):item()
end)
local ok, mine = pcall(lm.no_grad, function() return ddpm_loss(net, x0, ddpm.sched, t, noise) end)
print(string.format('on the trained network: the reference loss %.4f, your ddpm_loss %s', ref,
  ok and lesson.show(lesson.number(mine) or 0 / 0) or ('failed: ' .. tostring(mine))))
]],
      scene = function(env) return 'diffusion', ddpm_or_blank(env.ddpm) end,
      exercise = {
        prompt = say([[
Correct `ddpm_loss(eps_model, x0, sched, t, noise)`: x0 is a batch (B, d), sched a gen.schedule,
eps_model(x_t, t) the network (t an int64 tensor of B steps). When t is nil draw one step per row,
uniform in 1..T; when noise is nil draw it standard normal, x0's shape. Return the mean squared
error between eps_model(x_t, t) and the noise over every element, as a tensor (training calls
:backward() on it). The check gives your function a predictor that records the x_t and t it is
called with: with t and noise given, x_t must be the formula's; without them, the noise recovered
from x_t must be the one in the loss, and t uniform over 1..T.]],
          [[
改正 `ddpm_loss(eps_model, x0, sched, t, noise)`：x0 是一个 batch (B, d)，sched 是 gen.schedule
的结果，eps_model(x_t, t) 是网络（t 是 B 个步数组成的 int64 张量）。t 为 nil 时每行抽一个步数，
在 1..T 上均匀；noise 为 nil 时抽取与 x0 形状相同的标准正态噪声。返回 eps_model(x_t, t) 与噪声
在所有元素上的均方误差，并且是张量（训练时要对它调用 :backward()）。检查会给你的函数一个记录
自己收到的 x_t 和 t 的预测器：给定 t 和 noise 时，x_t 必须等于公式的结果；不给时，从 x_t 反推
出的噪声必须就是损失里的那份，t 必须在 1..T 上均匀。]]),
        hints = {
          say('Only the last line is wrong: what should eps_model(x_t, t) be compared with?',
            '只有最后一行错了：eps_model(x_t, t) 应该和什么比较？'),
          say('return (eps_model(xt, t) - noise):pow(2):mean() — the same noise that went into xt.',
            'return (eps_model(xt, t) - noise):pow(2):mean()——就是加进 xt 的那份噪声。'),
        },
        check = keeping_rng(check_ddpm_loss),
        solution = [[
function ddpm_loss(eps_model, x0, sched, t, noise)
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})           -- one step per row, uniform in 1..T
  noise = noise or lm.randn_like(x0)                 -- drawn once: in x_t and in the target
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - noise):pow(2):mean()
end
]],
        wrong = {
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- the network asked for the data
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - x0):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- beta_t instead of abar_t
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  noise = noise or lm.randn_like(x0)
  local b = sched.betas:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * (1 - b):sqrt() + noise * b:sqrt()
  return (eps_model(xt, t) - noise):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- t never reaches T
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T, {B})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - noise):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- one t for the whole batch
  local B = x0:size(1)
  t = t or lm.full({B}, math.random(1, sched.T), {dtype = 'int64'})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - noise):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- the noise drawn twice
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + (noise or lm.randn_like(x0)) * (1 - ab):sqrt()
  return (eps_model(xt, t) - (noise or lm.randn_like(x0))):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- the variance where the std goes
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab)
  return (eps_model(xt, t) - noise):pow(2):mean()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- returns a number
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - noise):pow(2):mean():item()
end
]],
          [[
function ddpm_loss(eps_model, x0, sched, t, noise)   -- the sum of the squares
  local B = x0:size(1)
  t = t or lm.randint(1, sched.T + 1, {B})
  noise = noise or lm.randn_like(x0)
  local ab = sched.alpha_bars:index_select(1, t):view(B, 1):to(x0:dtype())
  local xt = x0 * ab:sqrt() + noise * (1 - ab):sqrt()
  return (eps_model(xt, t) - noise):pow(2):sum()
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Sampling: ancestral and DDIM, on a known answer', '采样：祖先采样与 DDIM，在已知答案上检验'),
      text = say([[
The reverse step of DDPM is a Gaussian whose mean takes the predicted noise's share out of x_t:

  x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps_theta(x_t, t)) / sqrt(alpha_t)
            + sigma_t z

with z ~ N(0, I), sigma_t^2 = beta_t (Ho et al. also tried (1 - abar_{t-1})/(1 - abar_t) beta_t:
about the same samples), and z = 0 at the last step, t = 1. Ancestral sampling starts from
x_T ~ N(0, I) and takes T such steps: T network evaluations for one batch of samples, where a GAN
takes one. DDIM (Song, Meng and Ermon 2021) uses the same trained network with a deterministic
update that can skip steps: estimate x_0 = (x_t - sqrt(1 - abar_t) eps) / sqrt(abar_t), then jump
to x_{t'} = sqrt(abar_{t'}) x_0 + sqrt(1 - abar_{t'}) eps, with 10 to 50 steps instead of T.

To test samplers, take data whose best noise predictor is known in closed form: a Gaussian,
x_0 ~ N(mu, s^2 I). Then x_t ~ N(sqrt(abar_t) mu, (abar_t s^2 + 1 - abar_t) I), and the best
prediction of eps given x_t is

  eps*(x_t, t) = sqrt(1 - abar_t) (x_t - sqrt(abar_t) mu) / v_t
  v_t = abar_t s^2 + 1 - abar_t                  (the variance of x_t)

No network, no training error: what comes out is what the sampler does. The code (mu = (1, -0.5),
s = 0.3; linear schedule, T = 200, beta up to 0.1, so that x_T is N(0, I) to 3e-5) samples 3,000
points with gen.ddpm_sample, with a loop over your `p_step` (correct it: it forgets to divide by
sqrt(alpha_t)), and with gen.ddim_sample at 5, 10, 20, 50 and 200 steps, and prints their mean and
spread (std). Ancestral sampling and DDIM at T steps bring back mu and s; DDIM keeps the mean at
every number of steps but narrows the spread as the steps grow few (its big steps follow the curved
path of the probability-flow ODE only approximately): the picture plots the spread against DDIM's
steps. (gen.DDPM2D's own schedule stops at beta = 0.04, abar_T = 0.017: x_T is not quite N(0, I);
try it, and watch DDIM's mean move while ancestral sampling's fresh noise forgets the start.)]],
        [[
DDPM 的反向一步是一个高斯分布，它的均值从 x_t 中减去预测噪声的那一份：

  x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps_theta(x_t, t)) / sqrt(alpha_t)
            + sigma_t z

其中 z ~ N(0, I)，sigma_t^2 = beta_t（Ho 等人也试过 (1 - abar_{t-1})/(1 - abar_t) beta_t：样本
差不多），最后一步 t = 1 时 z = 0。祖先采样从 x_T ~ N(0, I) 出发走 T 步：一批样本要算 T 次
网络，而 GAN 只要一次。DDIM（Song、Meng、Ermon 2021）用同一个训练好的网络，换成可以跳步的
确定性更新：先估计 x_0 = (x_t - sqrt(1 - abar_t) eps) / sqrt(abar_t)，再跳到
x_{t'} = sqrt(abar_{t'}) x_0 + sqrt(1 - abar_{t'}) eps，用 10 到 50 步代替 T 步。

要检验采样器，就取最佳噪声预测器有闭式解的数据：高斯分布 x_0 ~ N(mu, s^2 I)。这时
x_t ~ N(sqrt(abar_t) mu, (abar_t s^2 + 1 - abar_t) I)，给定 x_t 时对 eps 的最佳预测是

  eps*(x_t, t) = sqrt(1 - abar_t) (x_t - sqrt(abar_t) mu) / v_t
  v_t = abar_t s^2 + 1 - abar_t                  （x_t 的方差）

没有网络，也就没有训练误差：采出来的结果完全反映采样器本身。代码（mu = (1, -0.5)，s = 0.3；
线性调度，T = 200，beta 最大到 0.1，使 x_T 在 3e-5 的精度内就是 N(0, I)）用 gen.ddpm_sample、
用循环调用你的 `p_step`（改正它：它忘了除以 sqrt(alpha_t)）、以及用 gen.ddim_sample 在
5、10、20、50、200 步下各采 3,000 个点，打印它们的均值和标准差。祖先采样和 T 步的 DDIM 都能
还原 mu 和 s；DDIM 在任何步数下都保持均值，但步数越少标准差越窄（它的大步只能近似地沿着概率流
ODE 的弯曲路径走）：画面画出标准差随 DDIM 步数的变化。（gen.DDPM2D 自己的调度 beta 只到 0.04，
abar_T = 0.017：x_T 并不完全是 N(0, I)；试试看，DDIM 的均值会偏移，而祖先采样每步加入的新噪声
会"忘掉"起点。）]]),
      code = [[
local gen = require 'lumen.generative'
function p_step(x_t, eps, t, sched, z)   -- to correct: forgets to divide by sqrt(alpha_t)
  local beta, abar = sched.betas[t]:item(), sched.alpha_bars[t]:item()
  local mean = x_t - eps * (beta / math.sqrt(1 - abar))
  if t > 1 then return mean + z * math.sqrt(beta) end
  return mean
end
local mu, s = lm.tensor({1, -0.5}), 0.3
local sched = gen.schedule('linear', 200, {beta_end = 0.1})
local function eps_exact(x, t)           -- the best noise predictor for x_0 ~ N(mu, s^2 I)
  local ab = sched.alpha_bars:index_select(1, t):view(-1, 1):float()
  return (x - ab:sqrt() * mu) * (1 - ab):sqrt() / (ab * s * s + 1 - ab)
end
local n = 3000
local function report(name, x)
  local m, sd = x:mean(1), x:std(1)
  print(string.format('%-26s mean (%6.3f, %6.3f)   spread (%.3f, %.3f)', name, m[1]:item(), m[2]:item(),
    sd[1]:item(), sd[2]:item()))
  return (sd[1]:item() + sd[2]:item()) / 2
end
print(string.format('%-26s mean (%6.3f, %6.3f)   spread (%.3f, %.3f)', 'the data N(mu, s^2 I)', 1, -0.5, s, s))
local ancestral = report('ancestral, 200 steps', gen.ddpm_sample(eps_exact, {n, 2}, sched, {seed = 1}))
lm.manual_seed(1)
local x = lm.randn(n, 2)
for t = sched.T, 1, -1 do
  x = p_step(x, eps_exact(x, lm.full({n}, t, {dtype = 'int64'})), t, sched, lm.randn(n, 2))
end
report('your p_step, 200 steps', x)
viz.clear()
for _, k in ipairs({5, 10, 20, 50, 200}) do
  local sd = report(string.format('DDIM, %d steps', k), gen.ddim_sample(eps_exact, {n, 2}, sched, k, {seed = 1}))
  viz.plot('sample spread (std)/DDIM', k, sd, {x = 'DDIM steps'})
  viz.plot('sample spread (std)/ancestral, 200 steps', k, ancestral, {x = 'DDIM steps'})
  viz.plot('sample spread (std)/the data', k, s, {x = 'DDIM steps'})
end
]],
      scene = 'curves',
      exercise = {
        prompt = say([[
Correct `p_step(x_t, eps, t, sched, z)`: one step of ancestral sampling, x_{t-1} = (x_t - beta_t /
sqrt(1 - abar_t) eps) / sqrt(alpha_t) + sigma_t z with sigma_t = sqrt(beta_t), and no z term at
t = 1; eps is the predicted noise, z the standard normal noise (both given), sched a gen.schedule
(sched.betas[t], sched.alphas[t], sched.alpha_bars[t]). The check compares your x_{t-1} with the
formula on linear and cosine schedules at t = T, in between, 2 and 1.]],
          [[
改正 `p_step(x_t, eps, t, sched, z)`：祖先采样的一步，x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t)
eps) / sqrt(alpha_t) + sigma_t z，其中 sigma_t = sqrt(beta_t)，t = 1 时没有 z 这一项；eps 是预测的
噪声，z 是标准正态噪声（都已给出），sched 是 gen.schedule 的结果（sched.betas[t]、
sched.alphas[t]、sched.alpha_bars[t]）。检查会在线性和余弦调度上，在 t = T、中间、2 和 1 处把你的
x_{t-1} 与公式比较。]]),
        hints = {
          say('The mean is (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(alpha), alpha = sched.alphas[t]:item().',
            '均值是 (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(alpha)，alpha = sched.alphas[t]:item()。'),
          say('Add z * math.sqrt(beta) only when t > 1: at t = 1 the result is the sample.',
            '只在 t > 1 时加上 z * math.sqrt(beta)：t = 1 时得到的就是样本。'),
        },
        check = check_p_step,
        solution = [[
function p_step(x_t, eps, t, sched, z)
  local beta, alpha, abar = sched.betas[t]:item(), sched.alphas[t]:item(), sched.alpha_bars[t]:item()
  local mean = (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(alpha)
  if t > 1 then return mean + z * math.sqrt(beta) end   -- sigma_t = sqrt(beta_t); none at the last step
  return mean
end
]],
        wrong = {
          [[
function p_step(x_t, eps, t, sched, z)   -- no 1/sqrt(alpha_t)
  local beta, abar = sched.betas[t]:item(), sched.alpha_bars[t]:item()
  local mean = x_t - eps * (beta / math.sqrt(1 - abar))
  if t > 1 then return mean + z * math.sqrt(beta) end
  return mean
end
]],
          [[
function p_step(x_t, eps, t, sched, z)   -- abar_t where alpha_t goes
  local beta, abar = sched.betas[t]:item(), sched.alpha_bars[t]:item()
  local mean = (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(abar)
  if t > 1 then return mean + z * math.sqrt(beta) end
  return mean
end
]],
          [[
function p_step(x_t, eps, t, sched, z)   -- noise added at the last step too
  local beta, alpha, abar = sched.betas[t]:item(), sched.alphas[t]:item(), sched.alpha_bars[t]:item()
  local mean = (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(alpha)
  return mean + z * math.sqrt(beta)
end
]],
          [[
function p_step(x_t, eps, t, sched, z)   -- sigma^2 where sigma goes
  local beta, alpha, abar = sched.betas[t]:item(), sched.alphas[t]:item(), sched.alpha_bars[t]:item()
  local mean = (x_t - eps * (beta / math.sqrt(1 - abar))) / math.sqrt(alpha)
  if t > 1 then return mean + z * beta end
  return mean
end
]],
          [[
function p_step(x_t, eps, t, sched, z)   -- the noise's coefficient without its square root
  local beta, alpha, abar = sched.betas[t]:item(), sched.alphas[t]:item(), sched.alpha_bars[t]:item()
  local mean = (x_t - eps * (beta / (1 - abar))) / math.sqrt(alpha)
  if t > 1 then return mean + z * math.sqrt(beta) end
  return mean
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('GAN against diffusion, with the yardstick', 'GAN 对比扩散模型：用同一把尺子'),
      text = say([[
Now the notes' claims, measured. The code trains gen.GAN2D (G and D: MLPs of 3 layers of 32, the
non-saturating loss, Adam at 3e-3) and gen.DDPM2D (as in step 3) on the ring of 8 Gaussians, with
seeds 1, 2 and 3, each for the same 300 steps of batches of 256 (short, so that the step takes a
few seconds: STEPS and DATA at the top of the code ask for more). For each it samples 1,000
points (the DDPM with DDIM, 50 steps, as in step 4) and prints:

- the yardstick: the JS divergence (bits) between them and 1,000 real points, on one fixed 40 x 40
grid over [-3, 3]^2 for every model; two real samples of 1,000 points are not at 0 either, so the
code prints that floor;
- the modes covered: a mode counts when at least a sixth of its fair share of the samples (n / 6K
for K modes: 2% on the ring, as in the GAN lesson) lies within 0.25 of its centre; and the share
of all samples on some mode, how sharp they are;
- the seconds spent training and sampling.

Then it sums up, per data set, what the numbers say about the notes' claims: mode collapse (a run
that misses modes), diversity (the modes covered), ease of training (how much the result depends
on the seed). The numbers are this run's, computed in this process, and change with the seeds and
the number of steps; read them, not the text. What to look for: the GANs' results depend on the
seed (after 300 steps one generator has found several of the modes while the others sit on one or
none), where the DDPMs come out alike from seed to seed and cover more of the modes, though their
samples are still blurry (about a third of them on a mode); and sampling them costs 50 network
evaluations with DDIM (T = 200 ancestral) where the GAN needs one. With STEPS = 700 (about twice
the time) both do better: here the GANs covered 5, 8 and 8 of the modes and the DDPMs all 8 each time, more
than half of their samples on a mode. With DATA = {'ring', 'grid'} the 5 x 5 grid runs too: at
300 steps the GANs covered 5 to 13 of its 25 modes, the DDPMs 17 to 20. The picture is the GAN
that covered the fewest of the ring's modes (viz.show('diffusion', ddpms.ring[1]) draws a DDPM;
viz.show('gan2d', gans.ring[2]) another GAN).

Next, the same comparison on images, with the yardstick of the lecture's experiments: a CNN trained
on Fashion-MNIST (gen.fashion_classifier) reads the class of each generated image (is it the class
asked for?) and measures the spread of its features within a class (diversity: a collapsed
generator makes them alike). They take minutes, so run them from the shell:

  lumen examples/dcgan_fashion.lua --viz     a conditional DCGAN, 1,500 steps
  lumen examples/ddpm_fashion.lua --viz      a U-Net DDPM, 3,000 steps, DDIM 50

Both print the yardstick as they train and show the samples scene (a row per class, each image
framed by the classifier's verdict).]],
        [[
现在来实测讲义的说法。代码在 8 个高斯组成的圆环上，分别用种子 1、2、3 训练 gen.GAN2D（G 和 D：
3 层、每层 32 的 MLP，非饱和损失，Adam，学习率 3e-3）和 gen.DDPM2D（同第 3 步），每个都训练同样
的 300 步，batch 为 256（训练很短，整步只要几秒：代码开头的 STEPS 和 DATA 可以要求更多）。每个
模型采 1,000 个点（DDPM 用 DDIM 50 步采样，同第 4 步），打印：

- 那把尺子：它们与 1,000 个真实点之间的 JS 散度（比特），所有模型都用 [-3, 3]^2 上同一个
40 x 40 的网格；两份各 1,000 个点的真实样本之间也不是 0，代码把这个下限也打印出来；
- 覆盖的模式数：一个模式离中心 0.25 以内的样本至少占它应得份额的六分之一（K 个模式时为
n / 6K：圆环上是 2%，和 GAN 那一课相同）才算被覆盖；以及落在某个模式上的样本所占比例，表示
样本有多"清晰"；
- 训练和采样花的秒数。

然后按数据集总结这些数字对讲义说法的意义：模式崩溃（漏掉模式的运行）、多样性（覆盖的模式
数）、训练的难易（结果有多依赖种子）。这些数字来自这一次运行、在本进程中算出，会随种子和步数
变化；请看数字，不要只看这段文字。要留意的是：GAN 的结果取决于种子（训练 300 步后，有一个生成器
找到了好几个模式，其余的只停在一个模式上或一个也没有），而 DDPM 各次结果相近，覆盖的模式也更多，
只是样本仍然模糊（约三分之一落在模式上）；而且用 DDIM 采样要算 50 次网络（祖先采样要 T = 200
次），GAN 只要一次。把 STEPS 设为 700（时间约翻一倍）两者都会更好：这里 GAN 覆盖了 5、8、8 个模式，
DDPM 每次都覆盖全部 8 个，一半以上的样本落在模式上。把 DATA 设为 {'ring', 'grid'} 还会在 5 x 5
的网格上运行：300 步时 GAN 覆盖了 25 个模式中的 5 到 13 个，DDPM 是 17 到 20 个。画面是覆盖圆环
模式最少的那个 GAN（viz.show('diffusion', ddpms.ring[1]) 画一个 DDPM；
viz.show('gan2d', gans.ring[2]) 画另一个 GAN）。

下一步，在图像上做同样的比较，用的是讲义实验那样的尺子：一个在 Fashion-MNIST 上训练好的 CNN
（gen.fashion_classifier）读出每张生成图像的类别（是不是要求的那一类？），并测量同一类中特征的
分散程度（多样性：塌缩的生成器画出的图彼此相像）。它们要跑几分钟，所以请在命令行里运行：

  lumen examples/dcgan_fashion.lua --viz     条件 DCGAN，1,500 步
  lumen examples/ddpm_fashion.lua --viz      U-Net DDPM，3,000 步，DDIM 50 步

两者都会一边训练一边打印尺子的读数，并显示 samples 场景（每类一行，每张图的边框表示分类器的
判断）。]]),
      code = [[
local gen = require 'lumen.generative'
local STEPS, N = 300, 1000                      -- training steps for every model; points measured
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
if lm.build_info().sanitize then STEPS, N = 60, 300 end
local DATA = {'ring'}                           -- add 'grid' (the 5 x 5 grid) for a second data set
local GRID = {bins = 40, range = {-3, 3}}       -- the yardstick's grid, the same for every model
local function centres(data)
  local c = {}
  if data == 'ring' then
    for k = 0, 7 do c[#c + 1] = {2 * math.cos(k * math.pi / 4), 2 * math.sin(k * math.pi / 4)} end
  else
    for i = -2, 2 do for j = -2, 2 do c[#c + 1] = {i, j} end end
  end
  return lm.tensor(c, {dtype = 'float64'})
end
function count_modes(points, data)    -- modes covered, K, the share of the points on a mode
  local c = centres(data)
  local K, n = c:size(1), points:size(1)
  local d = (points:double():view(n, 1, 2) - c:view(1, K, 2)):pow(2):sum(3):sqrt()
  local dmin, nearest = d:min(2)
  local near = dmin:view(-1):lt(0.25):double()
  local per = lm.zeros(K, {dtype = 'float64'}):scatter_add(1, nearest:view(-1), near)
  return per:ge(n / (6 * K)):sum():item(), K, near:mean():item()
end
local function train(kind, data, seed)          -- one model: STEPS steps of batches of 256, Adam
  local threads = lm.get_num_threads()
  lm.set_num_threads(1)                         -- networks this small run faster on one thread
  local ok, m, pts, train_s, sample_s = pcall(function()
    local t0 = lm.sys.clock()
    local m = kind == 'GAN' and gen.GAN2D {data = data, seed = seed, hidden = 32, lr_g = 3e-3, lr_d = 3e-3}
      or gen.DDPM2D {data = data, seed = seed, hidden = 64, lr = 5e-3}          -- as in step 3
    for _ = 1, STEPS do m:step() end
    local t1 = lm.sys.clock()
    local pts = (kind == 'GAN' and m:sample(N) or m:sample(N, {ddim = 50})):double()   -- DDIM: step 4
    return m, pts, t1 - t0, lm.sys.clock() - t1
  end)
  lm.set_num_threads(threads)
  if not ok then error(m, 0) end
  return m, pts, train_s, sample_s
end
gans, ddpms, results = {ring = {}, grid = {}}, {ring = {}, grid = {}}, {}
print(string.format('%-5s %4s  %-5s %8s %7s %8s %8s %9s', 'data', 'seed', 'model', 'JS bits', 'modes',
  'on mode', 'train s', 'sample s'))
for _, data in ipairs(DATA) do
  local floor = gen.js_divergence(gen.toy2d(data, N, {seed = 50}), gen.toy2d(data, N, {seed = 51}), GRID)
  for seed = 1, 3 do
    local real = gen.toy2d(data, N, {seed = 100 + seed})
    for _, kind in ipairs({'GAN', 'DDPM'}) do
      local m, pts, train_s, sample_s = train(kind, data, seed)
      local cov, K, on = count_modes(pts, data)
      local r = {data = data, seed = seed, kind = kind, js = gen.js_divergence(real, pts, GRID), modes = cov,
        K = K, on = on, train = train_s, sample = sample_s, model = m}
      results[#results + 1] = r
      if kind == 'GAN' then gans[data][seed] = m else ddpms[data][seed] = m end
      print(string.format('%-5s %4d  %-5s %8.3f %4d/%-2d %7.0f%% %8.1f %9.2f', data, seed, kind, r.js, cov, K,
        100 * on, r.train, r.sample))
    end
  end
  print(string.format('      the floor: two real samples of %d points are %.3f bits apart on this grid', N, floor))
end
print('\nWhat this run says (computed from the table above):')
for _, data in ipairs(DATA) do
  for _, kind in ipairs({'GAN', 'DDPM'}) do
    local lo, hi, mlo, mhi, missed, K, sum = 1, 0, math.huge, 0, 0, 0, 0
    for _, r in ipairs(results) do
      if r.data == data and r.kind == kind then
        lo, hi, sum = math.min(lo, r.js), math.max(hi, r.js), sum + r.js
        mlo, mhi, K = math.min(mlo, r.modes), math.max(mhi, r.modes), r.K
        if r.modes < r.K then missed = missed + 1 end
      end
    end
    print(string.format('  %s, %-4s  JS %.3f .. %.3f (mean %.3f, spread over the seeds %.3f); modes %d .. %d of %d; missed modes in %d of 3 runs',
      data, kind, lo, hi, sum / 3, hi - lo, mlo, mhi, K, missed))
  end
end
worst_gan = nil
for _, r in ipairs(results) do
  if r.data == 'ring' and r.kind == 'GAN' and (not worst_gan or r.modes < worst_gan.modes
      or (r.modes == worst_gan.modes and r.js > worst_gan.js)) then
    worst_gan = r
  end
end
worst_gan = worst_gan.model
]],
      scene = function(env) return 'gan2d', gan_or_blank(env.worst_gan) end,
    },
  },
}
