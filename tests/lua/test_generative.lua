-- lumen.generative: the toy distributions' shapes, the JS divergence against a count done here by
-- hand, the schedules against their formulas, q_sample against the chain of single noising steps
-- (moments over many samples), the samplers against a known answer (data from a Gaussian, where
-- the best noise predictor has a closed form: both DDPM and DDIM must bring back its mean and
-- spread), the time embedding's formula, the GAN and DDPM trainers a few steps, and bad input.
local test = require 'lumen.test'
local gen = require 'lumen.generative'
local D = { dtype = 'float64' }

test.case('toy distributions', function()
  local ring = gen.toy2d('ring', 4000, { seed = 3 })
  test.eq(ring:shape(), { 4000, 2 })
  local r = ring:pow(2):sum(2):sqrt()
  test.near(r:mean():item(), 2, 0.01, 'the ring has radius 2')
  -- 8 modes: the angles fall in 8 clusters 45 degrees apart
  local counts = { 0, 0, 0, 0, 0, 0, 0, 0 }
  for _, pt in ipairs(ring:tolist()) do
    local k = math.floor(math.atan(pt[2], pt[1]) / (2 * math.pi / 8) + 0.5) % 8
    counts[k + 1] = counts[k + 1] + 1
  end
  for k = 1, 8 do test.ok(counts[k] > 400, 'mode ' .. k .. ' holds about an eighth: ' .. counts[k]) end
  local line = gen.toy2d('line', 2000)
  test.near((line:select(2, 2) - line:select(2, 1) * 0.5):std():item(), 0.02 * math.sqrt(1.25), 0.005, 'the line y = x / 2')
  local grid = gen.toy2d('grid', 2000)
  test.near(grid:round():abs():max():item(), 2, 0, 'the grid spans -2..2')
  test.eq(gen.toy2d('moons', 10):shape(), { 10, 2 })
  test.raises(function() gen.toy2d('spiral', 10) end, 'gen.toy2d: unknown distribution spiral (ring, moons, line, grid)')
  test.raises(function() gen.toy2d('ring', 0) end, 'n must be a positive integer')
end)

test.case('the JS divergence against a count by hand', function()
  -- 2 x 2 bins over [0, 2]^2: a = 3 points in cell (0, 0), 1 in (1, 1); b = 2 in (0, 0), 2 in (0, 1)
  local a = lm.tensor({ { 0.5, 0.5 }, { 0.2, 0.7 }, { 0.9, 0.1 }, { 1.5, 1.5 } }, D)
  local b = lm.tensor({ { 0.5, 0.5 }, { 0.3, 0.3 }, { 0.5, 1.5 }, { 0.2, 1.9 } }, D)
  local p = { 0.75, 0, 0, 0.25 }
  local q = { 0.5, 0.5, 0, 0 }
  local js = 0
  for i = 1, 4 do
    local m = (p[i] + q[i]) / 2
    if p[i] > 0 then js = js + 0.5 * p[i] * math.log(p[i] / m, 2) end
    if q[i] > 0 then js = js + 0.5 * q[i] * math.log(q[i] / m, 2) end
  end
  local got, hp, hq = gen.js_divergence(a, b, { bins = 2, range = { 0, 2 } })
  test.near(got, js, 1e-12)
  test.tensor_near(hp, lm.tensor({ { 0.75, 0 }, { 0, 0.25 } }, D), 0, 'cell (i, j): x bin i, y bin j')
  test.near(gen.js_divergence(a, a), 0, 1e-15, 'the same cloud: 0')
  test.near(gen.js_divergence(lm.zeros(5, 2, D), lm.ones(5, 2, D) * 3), 1, 1e-12, 'disjoint: 1 bit')
  -- points outside the range count in the edge cells
  test.near(gen.js_divergence(lm.tensor({ { -5, -5 } }, D), lm.tensor({ { 0.1, 0.1 } }, D), { bins = 2, range = { 0, 2 } }), 0, 1e-15)
  test.raises(function() gen.js_divergence(lm.zeros(3, 3), lm.zeros(3, 2)) end, 'argument 1 must be a non-empty (n, 2) tensor')
  test.raises(function() gen.js_divergence(lm.zeros(3, 2), lm.zeros(3, 2), { bins = 0 }) end, 'bins must be an integer 1..1000')
end)

test.case('the schedules and their formulas', function()
  local s = gen.schedule('linear', 10, { beta_start = 0.01, beta_end = 0.1 })
  test.near(s.betas[1]:item(), 0.01, 1e-15)
  test.near(s.betas[10]:item(), 0.1, 1e-15)
  local prod = 1
  for t = 1, 10 do
    prod = prod * (1 - (0.01 + 0.01 * (t - 1)))
    test.near(s.alpha_bars[t]:item(), prod, 1e-13, 'abar_' .. t)
  end
  local c = gen.schedule('cosine', 50)
  local function f(t) return math.cos(((t / 50) + 0.008) / 1.008 * math.pi / 2) ^ 2 end
  for _, t in ipairs({ 1, 10, 25, 49 }) do test.near(c.alpha_bars[t]:item(), f(t) / f(0), 1e-12, 'cosine abar_' .. t) end
  test.ok(c.betas:max():item() <= 0.999)
  test.raises(function() gen.schedule('linear', 10, { beta_end = 1.5 }) end, 'gen.schedule: betas must be in (0, 1), got 1.5')
  test.raises(function() gen.schedule('sigmoid', 10) end, 'unknown schedule sigmoid (linear, cosine)')
  test.raises(function() gen.schedule('linear', 0) end, 'T must be a positive integer')
end)

test.case('q_sample: the closed form has the moments of T single noising steps', function()
  lm.manual_seed(5)
  local s = gen.schedule('linear', 30, { beta_end = 0.08 })
  local n = 20000
  local x0 = lm.full({ n, 2 }, 1.5, D)
  local x = x0:clone()
  for t = 1, 30 do
    local b = s.betas[t]:item()
    x = x * math.sqrt(1 - b) + lm.randn(n, 2, D) * math.sqrt(b)
  end
  local closed = gen.q_sample(x0, 30, lm.randn(n, 2, D), s)
  local ab = s.alpha_bars[30]:item()
  for _, v in ipairs({ x, closed }) do
    test.near(v:mean():item(), 1.5 * math.sqrt(ab), 0.02)
    test.near(v:std():item(), math.sqrt(1 - ab), 0.02)
  end
  -- per-row steps
  local t = lm.tensor({ 1, 30 }, { dtype = 'int64' })
  local q = gen.q_sample(lm.ones(2, 2, D), t, lm.zeros(2, 2, D), s)
  test.near(q[1][1]:item(), math.sqrt(s.alpha_bars[1]:item()), 1e-12)
  test.near(q[2][1]:item(), math.sqrt(ab), 1e-12)
  test.raises(function() gen.q_sample(x0, 31, x0, s) end, 'gen.q_sample: step 31 is not in 1..30')
end)

test.case('the samplers bring back a Gaussian from its exact noise predictor', function()
  -- data N(mu, sigma^2 I): x_t ~ N(sqrt(ab) mu, (ab sigma^2 + 1 - ab) I), and the best predictor of
  -- the noise is eps*(x_t, t) = sqrt(1 - ab) (x_t - sqrt(ab) mu) / (ab sigma^2 + 1 - ab)
  local mu, sigma = 1.2, 0.4
  for _, kind in ipairs({ 'linear', 'cosine' }) do
    -- enough noise that x_T is N(0, I): abar_T = e^-10 (linear to 0.1 over 200 steps), ~0 (cosine)
    local s = kind == 'linear' and gen.schedule(kind, 200, { beta_end = 0.1 }) or gen.schedule(kind, 100)
    local function eps(x, t)
      local ab = s.alpha_bars:index_select(1, t):view(-1, 1):float()
      return (x - ab:sqrt() * mu) * (1 - ab):sqrt() / (ab * sigma * sigma + 1 - ab)
    end
    local a = gen.ddpm_sample(eps, { 20000, 2 }, s, { seed = 1 })
    test.near(a:mean():item(), mu, 0.02, kind .. ' DDPM: the mean')
    test.near(a:std():item(), sigma, 0.02, kind .. ' DDPM: the spread')
    -- DDIM (eta = 0) follows the probability-flow ODE: the mean at once, the spread as the steps
    -- shrink (its discretisation narrows the distribution at few steps)
    local b = gen.ddim_sample(eps, { 20000, 2 }, s, 25, { seed = 1 })
    test.near(b:mean():item(), mu, 0.02, kind .. ' DDIM, 25 steps: the mean')
    local full = gen.ddim_sample(eps, { 20000, 2 }, s, s.T, { seed = 1 })
    test.near(full:std():item(), sigma, 0.02, kind .. ' DDIM, T steps: the spread')
    local few = gen.ddim_sample(eps, { 20000, 2 }, s, 10, { seed = 1 })
    test.ok(few:std():item() < b:std():item() and b:std():item() < full:std():item(), kind .. ' DDIM: closer as the steps grow')
    local trace = {}
    gen.ddpm_sample(eps, { 4, 2 }, s, { trace = trace })
    test.eq(#trace, s.T + 1, 'the trace holds x_T .. x_0')
  end
  test.raises(function() gen.ddim_sample(function(x) return x end, { 2, 2 }, gen.schedule('linear', 10), 11) end,
    "steps must be an integer 1..10 (the schedule's T), got 11")
end)

test.case('the time embedding', function()
  local e = gen.time_embedding(lm.tensor({ 0, 3, 17 }), 6, { max_period = 100 })
  test.eq(e:shape(), { 3, 6 })
  for i, t in ipairs({ 0, 3, 17 }) do
    for k = 0, 2 do
      local f = 100 ^ (-k / 3)
      test.near(e[i][k + 1]:item(), math.cos(t * f), 1e-6)
      test.near(e[i][k + 4]:item(), math.sin(t * f), 1e-6)
    end
  end
  test.raises(function() gen.time_embedding(lm.tensor({ 1 }), 5) end, 'dim must be an even integer')
end)

test.case('the GAN and DDPM trainers take steps and name bad options', function()
  local gan = gen.GAN2D { data = 'grid', hidden = 16, batch = 32, loss = 'minimax', seed = 2 }
  for _ = 1, 3 do
    local d, g = gan:step()
    test.ok(d == d and g == g and d > 0, 'finite losses')
  end
  test.eq(#gan.history.d, 3)
  test.eq(gan:sample(7):shape(), { 7, 2 })
  test.eq(gan:surface(5, -1, 1):shape(), { 5, 5 })
  test.eq(gan:warp(4, -1, 1):shape(), { 16, 2 })
  test.ok(gan:js(500) >= 0)
  local m = gen.DDPM2D { data = 'moons', T = 10, hidden = 16, batch = 32, schedule = 'cosine' }
  test.ok(m:step() > 0)
  test.eq(m:sample(9):shape(), { 9, 2 })
  test.eq(m:sample(9, { ddim = 5 }):shape(), { 9, 2 })
  test.raises(function() gen.GAN2D { loss = 'wasserstein' } end, "loss must be 'nonsaturating' or 'minimax'")
  test.raises(function() gen.GAN2D { hidden = 0 } end, 'gen.GAN2D: hidden must be an integer >= 1, got 0')
  test.raises(function() gen.DDPM2D { t_dim = 3 } end, 't_dim must be even')
  test.raises(function() gen.DDPM2D { lr = -1 } end, 'gen.DDPM2D: lr must be a positive number, got -1')
end)

test.case('the classifier yardstick: accuracy per class and diversity, against a model whose answers are known', function()
  -- a "classifier" whose features are the image itself (N, 1, 1, 3) and whose logits are the features
  local model = { eval = function() end, features = function(_, x) return x:flatten(2) end, fc = function(f) return f end }
  local imgs = lm.tensor({ { 1, 0, 0 }, { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 }, { 0, 3, 0 } }, D):view(5, 1, 1, 3)
  local y = lm.tensor({ 1, 1, 1, 3, 2 }, { dtype = 'int64' })
  local r = gen.classifier_yardstick(model, imgs, y)
  test.near(r.accuracy, 4 / 5, 1e-12)
  test.near(r.per_class[1], 2 / 3, 1e-12)
  test.near(r.per_class[2], 1, 0)
  test.near(r.per_class[3], 1, 0)
  -- class 1: images (1,0,0), (0,1,0), (1,0,0): pairwise distances sqrt2, 0, sqrt2 (each twice) over 3 * 2
  test.near(r.diversity[1], (4 * math.sqrt(2)) / 6, 1e-6)
  test.eq(r.diversity[2], nil, 'one image: no pairs')
  test.raises(function() gen.classifier_yardstick(model, imgs, lm.tensor({ 1 })) end, 'y must hold one class per image')
end)

test.case('the DCGAN takes steps on a batch and samples the classes asked for', function()
  local dc = gen.DCGAN { width = 8, z_dim = 8, seed = 3 }
  local x = lm.rand(4, 1, 28, 28) * 2 - 1
  local y = lm.tensor({ 1, 5, 10, 2 }, { dtype = 'int64' })
  local d, g = dc:step(x, y)
  test.ok(d > 0 and g > 0, 'finite losses')
  local s = dc:sample(lm.tensor({ 3, 3, 7 }, { dtype = 'int64' }))
  test.eq(s:shape(), { 3, 1, 28, 28 })
  test.ok(s:min():item() >= 0 and s:max():item() <= 1, 'images in [0, 1]')
  test.raises(function() dc:step(lm.rand(4, 1, 27, 28), y) end, 'gen.DCGAN:step: x must be a batch of images (N, 1, 28, 28), got [4, 1, 27, 28]')
end)

test.case('the U-Net: shapes, the class and time change its output, a DDPM step, SiLU', function()
  lm.manual_seed(4)
  local u = gen.UNet { width = 8, t_dim = 8 }
  local x = lm.randn(2, 1, 28, 28)
  local t = lm.tensor({ 1, 300 }, { dtype = 'int64' })
  local y = lm.tensor({ 3, 3 }, { dtype = 'int64' })
  local out = u(x, t, y)
  test.eq(out:shape(), { 2, 1, 28, 28 })
  local other = u(x, t, lm.tensor({ 4, 4 }, { dtype = 'int64' }))
  test.ok((out - other):abs():max():item() > 0, 'the class reaches the output')
  local later = u(x, lm.tensor({ 2, 301 }, { dtype = 'int64' }), y)
  test.ok((out - later):abs():max():item() > 0, 'the step reaches the output')
  -- each sample's output depends on its own image only (GroupNorm, not BatchNorm)
  local x2 = x:clone()
  x2[2]:mul_(3)
  test.tensor_near(u(x2, t, y)[1], out[1], 1e-5, 'sample 1 ignores sample 2')
  local m = gen.ImageDDPM { T = 20, width = 8, t_dim = 8 }
  test.ok(m:step(lm.rand(3, 1, 28, 28) * 2 - 1, lm.tensor({ 1, 2, 3 }, { dtype = 'int64' })) > 0)
  local s = m:sample(lm.tensor({ 5, 6 }, { dtype = 'int64' }), { ddim = 3 })
  test.eq(s:shape(), { 2, 1, 28, 28 })
  test.ok(s:min():item() >= 0 and s:max():item() <= 1)
  test.raises(function() gen.UNet { width = 12 } end, 'width must be a multiple of 8')
  local z = lm.tensor({ -3, -0.5, 0, 2 }, D)
  test.tensor_near(F.silu(z), z / ((-z):exp() + 1), 1e-15, 'F.silu(x) = x sigmoid(x)')
  test.tensor_near(nn.SiLU()(z), F.silu(z), 0)
end)
