--[[
lumen.generative — what the GAN and diffusion examples and lessons share (`local gen = require
'lumen.generative'`): 2-D toy distributions, the yardstick (the Jensen-Shannon divergence between
two point clouds on a grid, as GAN Lab evaluates), DDPM's noise schedules, its closed-form forward
process q(x_t | x_0), ancestral and DDIM sampling, and the sinusoidal time embedding.

  gen.toy2d(name, n [, {seed=}]) -> (n, 2)     'ring' (8 Gaussians, radius 2, std 0.05), 'moons'
                                               (two interleaved half circles, noise 0.05), 'line'
                                               (a segment with noise 0.02), 'grid' (5 x 5
                                               Gaussians, spacing 1, std 0.05)
  gen.js_divergence(a, b [, {bins = 40, range = {lo, hi}}]) -> bits in [0, 1]
      both clouds counted on bins x bins cells over [lo, hi]^2 (default: the bounding box of
      both, widened 5%; points outside are counted in the nearest edge cell), p and q the cells'
      fractions, m = (p + q) / 2, JS = (KL(p || m) + KL(q || m)) / 2 in log base 2, terms with a
      probability below eps = 1e-12 taken as 0 (0 log 0 = 0): 0 for equal histograms, 1 for
      disjoint ones.
  gen.schedule(kind, T [, {beta_start = 1e-4, beta_end = 0.02, s = 0.008}]) -> {betas, alphas,
      alpha_bars, T}   'linear' (Ho et al. 2020) or 'cosine' (Nichol & Dhariwal 2021: alpha_bar(t)
      = cos^2(((t/T) + s)/(1 + s) pi/2) / that at 0, betas clipped to 0.999), float64 tensors of T
  gen.q_sample(x0, t, noise, sched) -> sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise
      (t: 1-based steps, a number or an int64 tensor with one step per row of x0)
  gen.ddpm_sample(eps_model, shape, sched [, {seed=, trace=}]) -> x_0 by ancestral sampling:
      x_{t-1} = (x_t - beta_t / sqrt(1 - alpha_bar_t) eps) / sqrt(alpha_t) + sigma_t z, sigma_t^2 =
      beta_t (z = 0 at the last step); eps_model(x_t, t) with t an int64 tensor of the 1-based
      step; trace = a table that receives x_T, ..., x_0
  gen.ddim_sample(eps_model, shape, sched, steps [, {eta = 0, seed=, trace=}]) -> x_0 with
      `steps` evenly spaced steps (Song et al. 2021), deterministic at eta = 0
  gen.time_embedding(t, dim [, {max_period = 10000}]) -> (#t, dim): [cos(t f_k), sin(t f_k)],
      f_k = max_period^(-k / (dim/2)), as the DDPM/ADM U-Nets (dim even)
Read next: examples/gan_2d.lua, examples/ddpm_2d.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional

local M = {}

local function fail(fname, fmt, ...) error(fname .. ': ' .. string.format(fmt, ...), 3) end
local D = { dtype = 'float64' }

-- ---------------------------------------------------------------- toy distributions

local TOYS = {}

function TOYS.ring(n)
  local k = lm.randint(0, 8, { n }):double()
  local ang = k * (2 * math.pi / 8)
  local c = lm.stack({ ang:cos(), ang:sin() }, 2) * 2
  return c + lm.randn(n, 2, D) * 0.05
end

function TOYS.moons(n)
  local which = lm.randint(0, 2, { n }):double()                -- 0: the upper moon, 1: the lower
  local t = lm.rand(n, D) * math.pi
  local x = t:cos() * (1 - 2 * which) + which                    -- upper: cos t; lower: 1 - cos t
  local y = t:sin() * (1 - 2 * which) + which * 0.5              -- upper: sin t; lower: 0.5 - sin t
  local pts = lm.stack({ x, y }, 2)
  pts = (pts - lm.tensor({ 0.5, 0.25 }, D)) * 1.5                -- centred, about [-2, 2]
  return pts + lm.randn(n, 2, D) * 0.05
end

function TOYS.line(n)
  local t = lm.rand(n, D) * 4 - 2
  local pts = lm.stack({ t, t * 0.5 }, 2)
  return pts + lm.randn(n, 2, D) * 0.02
end

function TOYS.grid(n)
  local i, j = lm.randint(0, 5, { n }):double() - 2, lm.randint(0, 5, { n }):double() - 2
  return lm.stack({ i, j }, 2) + lm.randn(n, 2, D) * 0.05
end

local TOY_NAMES = 'ring, moons, line, grid'

--- gen.toy2d(name, n [, {seed=}]) -> float64 (n, 2)
function M.toy2d(name, n, opts)
  local fname = 'gen.toy2d'
  if not TOYS[name] then fail(fname, "unknown distribution %s (%s)", tostring(name), TOY_NAMES) end
  if math.type(n) ~= 'integer' or n < 1 then fail(fname, 'n must be a positive integer, got %s', tostring(n)) end
  if opts and opts.seed ~= nil then lm.manual_seed(opts.seed) end
  return TOYS[name](n)
end

M.toy_names = { 'ring', 'moons', 'line', 'grid' }

-- ---------------------------------------------------------------- the yardstick

local function check_cloud(fname, t, what)
  if not lm.is_tensor(t) or t:dim() ~= 2 or t:size(2) ~= 2 or t:size(1) < 1 then
    fail(fname, '%s must be a non-empty (n, 2) tensor of points, got %s', what,
      lm.is_tensor(t) and ('shape [' .. table.concat(t:shape(), ', ') .. ']') or type(t))
  end
  return t:double()
end

-- The cells' fractions of a cloud: (bins * bins) float64.
local function histogram(pts, lo, hi, bins)
  local cell = ((pts - lo) / (hi - lo) * bins):floor():clamp(0, bins - 1)
  local idx = (cell:select(2, 1) * bins + cell:select(2, 2)):long()
  local counts = lm.zeros(bins * bins, D):scatter_add(1, idx + 1, lm.ones(pts:size(1), D))
  return counts / pts:size(1)
end

--- gen.js_divergence(a, b [, {bins = 40, range = {lo, hi}}]) -> the JS divergence in bits, and
--- the two histograms (bins x bins fractions) it was computed from
function M.js_divergence(a, b, opts)
  local fname = 'gen.js_divergence'
  a, b = check_cloud(fname, a, 'argument 1'), check_cloud(fname, b, 'argument 2')
  opts = opts or {}
  local bins = opts.bins or 40
  if math.type(bins) ~= 'integer' or bins < 1 or bins > 1000 then fail(fname, 'bins must be an integer 1..1000, got %s', tostring(bins)) end
  local lo, hi
  if opts.range then
    lo, hi = opts.range[1], opts.range[2]
    if type(lo) ~= 'number' or type(hi) ~= 'number' or not (hi > lo) then fail(fname, 'range must be {lo, hi} with lo < hi') end
  else
    local all = lm.cat({ a, b }, 1)
    lo, hi = all:min():item(), all:max():item()
    local pad = (hi - lo) * 0.05
    if pad == 0 then pad = 1 end
    lo, hi = lo - pad, hi + pad
  end
  local p, q = histogram(a, lo, hi, bins), histogram(b, lo, hi, bins)
  local m = (p + q) / 2
  local eps = 1e-12
  local function kl(x)
    local mask = x:gt(eps)
    local safe_x = x:clamp(eps, 1)
    local safe_m = m:clamp(eps, 1)
    return ((safe_x / safe_m):log() * x * mask:double()):sum():item() / math.log(2)
  end
  local js = (kl(p) + kl(q)) / 2
  return math.max(0, math.min(1, js)), p:view(bins, bins), q:view(bins, bins)
end

-- ---------------------------------------------------------------- DDPM

--- gen.schedule(kind, T [, opts]) -> {kind, T, betas, alphas, alpha_bars}
function M.schedule(kind, T, opts)
  local fname = 'gen.schedule'
  if math.type(T) ~= 'integer' or T < 1 then fail(fname, 'T must be a positive integer, got %s', tostring(T)) end
  opts = opts or {}
  local betas
  if kind == 'linear' then
    local b0, b1 = opts.beta_start or 1e-4, opts.beta_end or 0.02
    for _, v in ipairs({ b0, b1 }) do
      if type(v) ~= 'number' or not (v > 0 and v < 1) then fail(fname, 'betas must be in (0, 1), got %s', tostring(v)) end
    end
    betas = T == 1 and lm.tensor({ b0 }, D) or lm.linspace(b0, b1, T, D)
  elseif kind == 'cosine' then
    local s = opts.s or 0.008
    if type(s) ~= 'number' or s < 0 then fail(fname, 's must be a non-negative number, got %s', tostring(s)) end
    local function f(t) return math.cos(((t / T) + s) / (1 + s) * math.pi / 2) ^ 2 end
    local b = {}
    for t = 1, T do b[t] = math.min(1 - f(t) / f(t - 1), 0.999) end
    betas = lm.tensor(b, D)
  else
    fail(fname, "unknown schedule %s (linear, cosine)", tostring(kind))
  end
  local alphas = 1 - betas
  local alpha_bars = alphas:log():cumsum(1):exp()
  return { kind = kind, T = T, betas = betas, alphas = alphas, alpha_bars = alpha_bars }
end

local function check_sched(fname, s)
  if type(s) ~= 'table' or not lm.is_tensor(s.alpha_bars) then fail(fname, 'the schedule must come from gen.schedule') end
end

-- The schedule's values at steps t (1-based; a number or an int64 tensor), shaped to broadcast
-- over x's rows.
local function at(v, t, x)
  if type(t) == 'number' then return v[t]:item() end
  local shape = { t:numel() }
  for _ = 2, x:dim() do shape[#shape + 1] = 1 end
  return v:index_select(1, t:long():view(-1)):to(x:dtype()):view(shape)
end

--- gen.q_sample(x0, t, noise, sched) -> x_t = sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise
function M.q_sample(x0, t, noise, sched)
  local fname = 'gen.q_sample'
  check_sched(fname, sched)
  if not lm.is_tensor(x0) or not lm.is_tensor(noise) then fail(fname, 'x0 and noise must be tensors') end
  if type(t) == 'number' then
    if math.type(t) ~= 'integer' or t < 1 or t > sched.T then fail(fname, 'step %s is not in 1..%d', tostring(t), sched.T) end
  elseif not lm.is_tensor(t) or t:numel() ~= x0:size(1) then
    fail(fname, 't must be a step 1..T or an int64 tensor of one step per row of x0')
  elseif t:numel() > 0 and (t:min():item() < 1 or t:max():item() > sched.T) then
    fail(fname, 'steps must be in 1..%d, got %d..%d', sched.T, t:min():item(), t:max():item())
  end
  local ab = at(sched.alpha_bars, t, x0)
  if type(ab) == 'number' then return x0 * math.sqrt(ab) + noise * math.sqrt(1 - ab) end
  return x0 * ab:sqrt() + noise * (1 - ab):sqrt()
end

local function steps_tensor(t, n) return lm.full({ n }, t, { dtype = 'int64' }) end

--- gen.ddpm_sample(eps_model, shape, sched [, {seed=, trace=}]) -> x_0
function M.ddpm_sample(eps_model, shape, sched, opts)
  local fname = 'gen.ddpm_sample'
  check_sched(fname, sched)
  opts = opts or {}
  if opts.seed ~= nil then lm.manual_seed(opts.seed) end
  return lm.no_grad(function()
    local x = lm.randn(shape)
    local trace = opts.trace
    if trace then trace[#trace + 1] = x:clone() end
    for t = sched.T, 1, -1 do
      local eps = eps_model(x, steps_tensor(t, shape[1]))
      local beta, alpha, ab = sched.betas[t]:item(), sched.alphas[t]:item(), sched.alpha_bars[t]:item()
      x = (x - eps * (beta / math.sqrt(1 - ab))) / math.sqrt(alpha)
      if t > 1 then x = x + lm.randn(shape) * math.sqrt(beta) end
      if trace then trace[#trace + 1] = x:clone() end
    end
    return x
  end)
end

--- gen.ddim_sample(eps_model, shape, sched, steps [, {eta = 0, seed=, trace=}]) -> x_0
function M.ddim_sample(eps_model, shape, sched, steps, opts)
  local fname = 'gen.ddim_sample'
  check_sched(fname, sched)
  if math.type(steps) ~= 'integer' or steps < 1 or steps > sched.T then
    fail(fname, 'steps must be an integer 1..%d (the schedule\'s T), got %s', sched.T, tostring(steps))
  end
  opts = opts or {}
  local eta = opts.eta or 0
  if opts.seed ~= nil then lm.manual_seed(opts.seed) end
  -- evenly spaced steps T = tau_S > ... > tau_1 >= 1
  local tau = {}
  for i = 1, steps do tau[i] = math.max(1, math.floor((i - 1) * sched.T / steps + 0.5) + 1) end
  tau[steps] = sched.T
  return lm.no_grad(function()
    local x = lm.randn(shape)
    local trace = opts.trace
    if trace then trace[#trace + 1] = x:clone() end
    for i = steps, 1, -1 do
      local t = tau[i]
      local ab = sched.alpha_bars[t]:item()
      local ab_prev = i > 1 and sched.alpha_bars[tau[i - 1]]:item() or 1
      local eps = eps_model(x, steps_tensor(t, shape[1]))
      local x0 = (x - eps * math.sqrt(1 - ab)) / math.sqrt(ab)
      local sigma = eta * math.sqrt((1 - ab_prev) / (1 - ab) * (1 - ab / ab_prev))
      x = x0 * math.sqrt(ab_prev) + eps * math.sqrt(math.max(0, 1 - ab_prev - sigma * sigma))
      if sigma > 0 and i > 1 then x = x + lm.randn(shape) * sigma end
      if trace then trace[#trace + 1] = x:clone() end
    end
    return x
  end)
end

--- gen.time_embedding(t, dim [, {max_period = 10000}]) -> (#t, dim)
function M.time_embedding(t, dim, opts)
  local fname = 'gen.time_embedding'
  if math.type(dim) ~= 'integer' or dim < 2 or dim % 2 ~= 0 then fail(fname, 'dim must be an even integer >= 2, got %s', tostring(dim)) end
  if not lm.is_tensor(t) then fail(fname, 't must be a tensor of steps') end
  local maxp = (opts or {}).max_period or 10000
  local half = dim // 2
  local freqs = (lm.arange(0, half, D) * (-math.log(maxp) / half)):exp()
  local args = t:double():view(-1, 1) * freqs:view(1, half)
  return lm.cat({ args:cos(), args:sin() }, 2):float()
end

-- ---------------------------------------------------------------- a GAN on 2-D points

--[[
gen.GAN2D{data = 'ring', hidden = 64, layers = 3, z_dim = 2, batch = 256, lr_g = 1e-3, lr_d = 1e-3,
          loss = 'nonsaturating' | 'minimax', d_steps = 1, seed = 1}
A generator G (z -> point: MLPs of `layers` Linear layers, ReLU) and a discriminator D (point ->
logit, LeakyReLU 0.2), trained by Adam (betas 0.5, 0.999) in turns: D on a real batch (label 1)
and a generated one (label 0), `d_steps` times, then G. The discriminator's loss is the binary
cross-entropy of its logits; G's is log(1 - D(G(z))) to minimise under 'minimax' (the game as
written; its gradient vanishes while D wins) or -log D(G(z)) under 'nonsaturating' (Goodfellow's
fix). gan:step() -> d_loss, g_loss; gan:sample(n) -> (n, 2); gan:surface(bins, lo, hi) -> D's
probability on a bins x bins grid; gan:warp(k, lo, hi) -> G applied to a k x k grid of z;
gan:js(n) -> the yardstick against fresh real points; gan.history = {d = {}, g = {}}.
]]
local GAN = {}
GAN.__index = GAN

local function mlp(nn, n_in, hidden, n_out, layers, act)
  local mods = {}
  local w = n_in
  for _ = 1, layers - 1 do
    mods[#mods + 1] = nn.Linear(w, hidden)
    mods[#mods + 1] = act()
    w = hidden
  end
  mods[#mods + 1] = nn.Linear(w, n_out)
  return nn.Sequential(table.unpack(mods))
end

local function opt_int(fname, o, k, default, lo)
  local v = o[k] == nil and default or o[k]
  if math.type(v) ~= 'integer' or v < (lo or 1) then fail(fname, '%s must be an integer >= %d, got %s', k, lo or 1, tostring(v)) end
  return v
end

local function opt_pos(fname, o, k, default)
  local v = o[k] == nil and default or o[k]
  if type(v) ~= 'number' or not (v > 0) then fail(fname, '%s must be a positive number, got %s', k, tostring(v)) end
  return v
end

function M.GAN2D(o)
  local fname = 'gen.GAN2D'
  o = o or {}
  local nn, optim = require 'lumen.nn', require 'lumen.optim'
  local data = o.data or 'ring'
  if not TOYS[data] then fail(fname, 'unknown distribution %s (%s)', tostring(data), TOY_NAMES) end
  local loss = o.loss or 'nonsaturating'
  if loss ~= 'nonsaturating' and loss ~= 'minimax' then fail(fname, "loss must be 'nonsaturating' or 'minimax', got %s", tostring(loss)) end
  local self = setmetatable({
    data = data, loss = loss,
    hidden = opt_int(fname, o, 'hidden', 64), layers = opt_int(fname, o, 'layers', 3, 2),
    z_dim = opt_int(fname, o, 'z_dim', 2), batch = opt_int(fname, o, 'batch', 256),
    d_steps = opt_int(fname, o, 'd_steps', 1), steps = 0, history = { d = {}, g = {} },
  }, GAN)
  lm.manual_seed(opt_int(fname, o, 'seed', 1, 0))
  self.G = mlp(nn, self.z_dim, self.hidden, 2, self.layers, nn.ReLU)
  self.D = mlp(nn, 2, self.hidden, 1, self.layers, function() return nn.LeakyReLU(0.2) end)
  self.opt_g = optim.Adam(self.G:parameters(), { lr = opt_pos(fname, o, 'lr_g', 1e-3), betas = { 0.5, 0.999 } })
  self.opt_d = optim.Adam(self.D:parameters(), { lr = opt_pos(fname, o, 'lr_d', 1e-3), betas = { 0.5, 0.999 } })
  return self
end

function GAN:real(n) return TOYS[self.data](n):float() end
function GAN:noise(n) return lm.randn(n, self.z_dim) end

--- one round: D (d_steps times), then G; returns D's and G's losses
function GAN:step()
  local F = lm.nn.functional
  local B = self.batch
  local ones, zeros = lm.ones(B, 1), lm.zeros(B, 1)
  local d_loss
  for _ = 1, self.d_steps do
    self.opt_d:zero_grad()
    local fake = lm.no_grad(function() return self.G(self:noise(B)) end)
    local l = F.binary_cross_entropy_with_logits(self.D(self:real(B)), ones)
      + F.binary_cross_entropy_with_logits(self.D(fake), zeros)
    l:backward()
    self.opt_d:step()
    d_loss = l:item()
  end
  self.opt_g:zero_grad()
  local logits = self.D(self.G(self:noise(B)))
  local g
  if self.loss == 'minimax' then -- minimise log(1 - D(G(z))) = -BCE(logits, 0)
    g = -F.binary_cross_entropy_with_logits(logits, zeros)
  else -- minimise -log D(G(z))
    g = F.binary_cross_entropy_with_logits(logits, ones)
  end
  g:backward()
  self.opt_g:step()
  self.steps = self.steps + 1
  local h = self.history
  h.d[#h.d + 1], h.g[#h.g + 1] = d_loss, g:item()
  return d_loss, g:item()
end

function GAN:sample(n) return lm.no_grad(function() return self.G(self:noise(n)) end) end

--- D's probability of "real" on a bins x bins grid over [lo, hi]^2 (row i: y, column j: x)
function GAN:surface(bins, lo, hi)
  local c = lm.linspace(lo, hi, bins)
  local xs = c:view(1, bins):expand(bins, bins):reshape(-1)
  local ys = c:view(bins, 1):expand(bins, bins):reshape(-1)
  return lm.no_grad(function() return self.D(lm.stack({ xs, ys }, 2)):sigmoid():view(bins, bins) end)
end

--- G applied to a k x k grid of z over [lo, hi]^2 (the first two coordinates of z; others 0):
--- (k * k, 2) points, row-major, so neighbours in z are neighbours in the rows
function GAN:warp(k, lo, hi)
  local c = lm.linspace(lo, hi, k)
  local z = lm.zeros(k * k, self.z_dim)
  z:select(2, 1):copy_(c:view(1, k):expand(k, k):reshape(-1))
  if self.z_dim > 1 then z:select(2, 2):copy_(c:view(k, 1):expand(k, k):reshape(-1)) end
  return lm.no_grad(function() return self.G(z) end)
end

function GAN:js(n, opts) return (M.js_divergence(self:real(n):double(), self:sample(n):double(), opts)) end

-- ---------------------------------------------------------------- a DDPM on 2-D points

--[[
gen.DDPM2D{data = 'ring', T = 200, schedule = 'linear' | 'cosine', beta_end = 0.04, hidden = 128,
           layers = 4, t_dim = 32, batch = 256, lr = 1e-3, seed = 1}
The noise predictor eps(x_t, t): an MLP on [x_t, time_embedding(t)] (ReLU), trained by Adam on the
simplified DDPM loss |eps - eps(sqrt(abar_t) x_0 + sqrt(1 - abar_t) eps, t)|^2 with t uniform in
1..T. ddpm:step() -> loss; ddpm:sample(n [, {ddim = steps}]) -> (n, 2); ddpm:js(n) the yardstick.
]]
local DDPM = {}
DDPM.__index = DDPM

function M.DDPM2D(o)
  local fname = 'gen.DDPM2D'
  o = o or {}
  local nn, optim = require 'lumen.nn', require 'lumen.optim'
  local data = o.data or 'ring'
  if not TOYS[data] then fail(fname, 'unknown distribution %s (%s)', tostring(data), TOY_NAMES) end
  local T = opt_int(fname, o, 'T', 200)
  local self = setmetatable({ data = data, T = T, batch = opt_int(fname, o, 'batch', 256),
    t_dim = opt_int(fname, o, 't_dim', 32), steps = 0, history = {} }, DDPM)
  if self.t_dim % 2 ~= 0 then fail(fname, 't_dim must be even, got %d', self.t_dim) end
  self.sched = M.schedule(o.schedule or 'linear', T, { beta_start = o.beta_start or 1e-4, beta_end = o.beta_end or 0.04 })
  lm.manual_seed(opt_int(fname, o, 'seed', 1, 0))
  self.net = mlp(nn, 2 + self.t_dim, opt_int(fname, o, 'hidden', 128), 2, opt_int(fname, o, 'layers', 4, 2), nn.ReLU)
  self.opt = optim.Adam(self.net:parameters(), { lr = opt_pos(fname, o, 'lr', 1e-3) })
  return self
end

--- the noise predictor: eps(x_t, t) with t an int64 tensor of 1-based steps
function DDPM:eps(x, t)
  return self.net(lm.cat({ x, M.time_embedding(t, self.t_dim) }, 2))
end

function DDPM:step()
  local F = lm.nn.functional
  local B = self.batch
  local x0 = TOYS[self.data](B):float()
  local t = lm.randint(1, self.T + 1, { B })
  local noise = lm.randn(B, 2)
  local xt = M.q_sample(x0, t, noise, self.sched)
  self.opt:zero_grad()
  local l = F.mse_loss(self:eps(xt, t), noise)
  l:backward()
  self.opt:step()
  self.steps = self.steps + 1
  self.history[#self.history + 1] = l:item()
  return l:item()
end

function DDPM:sample(n, opts)
  local f = function(x, t) return self:eps(x, t) end
  if opts and opts.ddim then return M.ddim_sample(f, { n, 2 }, self.sched, opts.ddim, opts) end
  return M.ddpm_sample(f, { n, 2 }, self.sched, opts)
end

function DDPM:js(n, opts)
  return (M.js_divergence(TOYS[self.data](n), self:sample(n, opts):double(), opts))
end

-- ---------------------------------------------------------------- a conditional DCGAN on Fashion-MNIST

--[[
gen.DCGAN{z_dim = 64, width = 64, batch = 64, lr = 2e-4, seed = 1, classes = 10}
A conditional DCGAN (Radford et al. 2016, conditioned as Mirza & Osindero's CGAN) for 28 x 28 grey
images in [-1, 1]:
  G(z, y): [z, embed(y)] -> Linear -> (2w, 7, 7) -> BatchNorm, ReLU -> ConvTranspose2d(2w, w, 4,
           stride 2, padding 1) -> (w, 14, 14) -> BatchNorm, ReLU -> ConvTranspose2d(w, 1, 4, 2, 1)
           -> (1, 28, 28) -> tanh
  D(x, y): [x, a 28 x 28 map of embed(y)] -> Conv2d(2, w, 4, 2, 1) -> LeakyReLU 0.2 -> Conv2d(w, 2w,
           4, 2, 1) -> BatchNorm, LeakyReLU -> Linear(2w * 49, 1): a logit
trained with the non-saturating losses and Adam (betas 0.5, 0.999), as the DCGAN paper.
dcgan:step(x, y) (x (N, 1, 28, 28) in [-1, 1], y int64 1-based classes) -> d_loss, g_loss;
dcgan:sample(y [, {seed=}]) -> images (N, 1, 28, 28) in [0, 1] for the classes y.
]]
local DCGAN = {}
DCGAN.__index = DCGAN

function M.DCGAN(o)
  local fname = 'gen.DCGAN'
  o = o or {}
  local nn, optim = require 'lumen.nn', require 'lumen.optim'
  local zd, w, K = opt_int(fname, o, 'z_dim', 64), opt_int(fname, o, 'width', 64), opt_int(fname, o, 'classes', 10)
  local self = setmetatable({ z_dim = zd, width = w, classes = K, batch = opt_int(fname, o, 'batch', 64), steps = 0,
    history = { d = {}, g = {} } }, DCGAN)
  lm.manual_seed(opt_int(fname, o, 'seed', 1, 0))
  local G = nn.Module:extend('DCGANGenerator')
  function G:__init()
    self.embed = nn.Embedding(K, 16)
    self.fc = nn.Linear(zd + 16, 2 * w * 49)
    self.bn0 = nn.BatchNorm2d(2 * w)
    self.up1 = nn.ConvTranspose2d(2 * w, w, 4, { stride = 2, padding = 1 })
    self.bn1 = nn.BatchNorm2d(w)
    self.up2 = nn.ConvTranspose2d(w, 1, 4, { stride = 2, padding = 1 })
  end
  function G:forward(z, y)
    local h = self.fc(lm.cat({ z, self.embed(y) }, 2)):view(-1, 2 * w, 7, 7)
    h = F.relu(self.bn0(h))
    h = F.relu(self.bn1(self.up1(h)))
    return self.up2(h):tanh()
  end
  local Dm = nn.Module:extend('DCGANDiscriminator')
  function Dm:__init()
    self.embed = nn.Embedding(K, 28 * 28)
    self.c1 = nn.Conv2d(2, w, 4, { stride = 2, padding = 1 })
    self.c2 = nn.Conv2d(w, 2 * w, 4, { stride = 2, padding = 1 })
    self.bn2 = nn.BatchNorm2d(2 * w)
    self.fc = nn.Linear(2 * w * 49, 1)
  end
  function Dm:forward(x, y)
    local h = lm.cat({ x, self.embed(y):view(-1, 1, 28, 28) }, 2)
    h = F.leaky_relu(self.c1(h), 0.2)
    h = F.leaky_relu(self.bn2(self.c2(h)), 0.2)
    return self.fc(h:flatten(2))
  end
  self.G, self.D = G(), Dm()
  local lr = opt_pos(fname, o, 'lr', 2e-4)
  self.opt_g = optim.Adam(self.G:parameters(), { lr = lr, betas = { 0.5, 0.999 } })
  self.opt_d = optim.Adam(self.D:parameters(), { lr = lr, betas = { 0.5, 0.999 } })
  return self
end

function DCGAN:step(x, y)
  local fname = 'gen.DCGAN:step'
  if not lm.is_tensor(x) or x:dim() ~= 4 or x:size(2) ~= 1 or x:size(3) ~= 28 or x:size(4) ~= 28 then
    fail(fname, 'x must be a batch of images (N, 1, 28, 28), got %s', lm.is_tensor(x) and ('[' .. table.concat(x:shape(), ', ') .. ']') or type(x))
  end
  if not lm.is_tensor(y) or y:numel() ~= x:size(1) then fail(fname, 'y must hold one class per image') end
  local B = x:size(1)
  local ones, zeros = lm.ones(B, 1), lm.zeros(B, 1)
  self.G:train()
  self.D:train()
  local z = lm.randn(B, self.z_dim)
  local fake = self.G(z, y)
  self.opt_d:zero_grad()
  local d = F.binary_cross_entropy_with_logits(self.D(x, y), ones)
    + F.binary_cross_entropy_with_logits(self.D(fake:detach(), y), zeros)
  d:backward()
  self.opt_d:step()
  self.opt_g:zero_grad()
  local g = F.binary_cross_entropy_with_logits(self.D(fake, y), ones)
  g:backward()
  self.opt_g:step()
  self.steps = self.steps + 1
  local h = self.history
  h.d[#h.d + 1], h.g[#h.g + 1] = d:item(), g:item()
  return d:item(), g:item()
end

function DCGAN:sample(y, opts)
  if opts and opts.seed then lm.manual_seed(opts.seed) end
  self.G:eval()
  local imgs = lm.no_grad(function() return self.G(lm.randn(y:numel(), self.z_dim), y:view(-1)) end)
  self.G:train()
  return (imgs + 1) / 2
end

-- ---------------------------------------------------------------- a conditional U-Net DDPM on images

--[[
gen.UNet{channels = 1, width = 32, classes = 10, t_dim = 64}: the noise predictor of a DDPM on
28 x 28 images, the small U-Net of Ho et al. (2020) without attention:
  in: Conv 3x3 (channels -> w)
  down: ResBlock(w, w) at 28 -> Conv 3x3 stride 2 -> ResBlock(w, 2w) at 14 -> Conv stride 2 ->
  middle: ResBlock(2w, 2w) at 7
  up: nearest x2 -> ResBlock(2w + 2w, 2w) at 14 (the skip concatenated) -> nearest x2 ->
      ResBlock(2w + w, w) at 28
  out: GroupNorm, SiLU, Conv 3x3 (w -> channels)
  ResBlock(a, b): GroupNorm(8), SiLU, Conv 3x3, + a projection of the embedding, GroupNorm, SiLU,
  Conv 3x3, + the input (a 1x1 conv when a ~= b)
  embedding: the sinusoidal time embedding -> Linear, SiLU, Linear; plus the class's nn.Embedding
unet(x, t, y) -> the predicted noise, the shape of x (t int64 1-based steps, y int64 1-based classes).
gen.ImageDDPM{T = 400, schedule = 'linear', width = 32, lr = 2e-4, batch = 64, seed = 1} trains it:
ddpm:step(x, y) with x in [-1, 1] -> loss; ddpm:sample(y [, {ddim = steps, seed=}]) -> images in [0, 1].
]]
function M.UNet(o)
  local fname = 'gen.UNet'
  o = o or {}
  local nn = require 'lumen.nn'
  local C, w, K, td = opt_int(fname, o, 'channels', 1), opt_int(fname, o, 'width', 32), opt_int(fname, o, 'classes', 10),
    opt_int(fname, o, 't_dim', 64)
  if w % 8 ~= 0 then fail(fname, 'width must be a multiple of 8 (GroupNorm of 8 groups), got %d', w) end
  if td % 2 ~= 0 then fail(fname, 't_dim must be even, got %d', td) end
  local E = 4 * w -- the embedding's width
  local Res = nn.Module:extend('UNetResBlock')
  function Res:__init(a, b)
    self.n1, self.c1 = nn.GroupNorm(8, a), nn.Conv2d(a, b, 3, { padding = 1 })
    self.emb = nn.Linear(E, b)
    self.n2, self.c2 = nn.GroupNorm(8, b), nn.Conv2d(b, b, 3, { padding = 1 })
    if a ~= b then self.skip = nn.Conv2d(a, b, 1) end
  end
  function Res:forward(x, e)
    local h = self.c1(F.silu(self.n1(x)))
    h = h + self.emb(e):view(e:size(1), -1, 1, 1)
    h = self.c2(F.silu(self.n2(h)))
    return h + (self.skip and self.skip(x) or x)
  end
  local U = nn.Module:extend('UNet')
  function U:__init()
    self.t1, self.t2 = nn.Linear(td, E), nn.Linear(E, E)
    self.cls = nn.Embedding(K, E)
    self.inc = nn.Conv2d(C, w, 3, { padding = 1 })
    self.d1 = Res(w, w)
    self.down1 = nn.Conv2d(w, w, 3, { stride = 2, padding = 1 })
    self.d2 = Res(w, 2 * w)
    self.down2 = nn.Conv2d(2 * w, 2 * w, 3, { stride = 2, padding = 1 })
    self.mid = Res(2 * w, 2 * w)
    self.u2 = Res(4 * w, 2 * w)
    self.u1 = Res(3 * w, w)
    self.outn, self.outc = nn.GroupNorm(8, w), nn.Conv2d(w, C, 3, { padding = 1 })
  end
  function U:forward(x, t, y)
    local e = self.t2(F.silu(self.t1(M.time_embedding(t, td))))
    if y then e = e + self.cls(y:view(-1)) end
    local h0 = self.inc(x)
    local h1 = self.d1(h0, e)                                      -- 28
    local h2 = self.d2(self.down1(h1), e)                          -- 14
    local m = self.mid(self.down2(h2), e)                          -- 7
    local up2 = F.interpolate(m, { scale_factor = 2, mode = 'nearest' })
    local g2 = self.u2(lm.cat({ up2, h2 }, 2), e)                 -- 14
    local up1 = F.interpolate(g2, { scale_factor = 2, mode = 'nearest' })
    local g1 = self.u1(lm.cat({ up1, h1 }, 2), e)                 -- 28
    return self.outc(F.silu(self.outn(g1)))
  end
  return U()
end

local ImageDDPM = {}
ImageDDPM.__index = ImageDDPM

function M.ImageDDPM(o)
  local fname = 'gen.ImageDDPM'
  o = o or {}
  local optim = require 'lumen.optim'
  local T = opt_int(fname, o, 'T', 400)
  local self = setmetatable({ T = T, steps = 0, history = {}, batch = opt_int(fname, o, 'batch', 64) }, ImageDDPM)
  self.sched = M.schedule(o.schedule or 'linear', T, { beta_start = o.beta_start or 1e-4, beta_end = o.beta_end or 0.02 })
  lm.manual_seed(opt_int(fname, o, 'seed', 1, 0))
  self.net = M.UNet { width = o.width, classes = o.classes, t_dim = o.t_dim }
  self.opt = optim.Adam(self.net:parameters(), { lr = opt_pos(fname, o, 'lr', 2e-4) })
  return self
end

function ImageDDPM:step(x, y)
  if not lm.is_tensor(x) or x:dim() ~= 4 then fail('gen.ImageDDPM:step', 'x must be a batch of images (N, C, H, W)') end
  local B = x:size(1)
  local t = lm.randint(1, self.T + 1, { B })
  local noise = lm.randn(x:shape())
  local xt = M.q_sample(x, t, noise, self.sched)
  self.net:train()
  self.opt:zero_grad()
  local l = F.mse_loss(self.net(xt, t, y), noise)
  l:backward()
  self.opt:step()
  self.steps = self.steps + 1
  self.history[#self.history + 1] = l:item()
  return l:item()
end

function ImageDDPM:sample(y, opts)
  opts = opts or {}
  self.net:eval()
  local n = y:numel()
  local f = function(x, t) return self.net(x, t, y:view(-1)) end
  local x
  if opts.ddim then x = M.ddim_sample(f, { n, 1, 28, 28 }, self.sched, opts.ddim, opts)
  else x = M.ddpm_sample(f, { n, 1, 28, 28 }, self.sched, opts) end
  self.net:train()
  return ((x + 1) / 2):clamp(0, 1)
end

-- ---------------------------------------------------------------- style transfer

--[[
Style transfer as Gatys, Ecker and Bethge (2016) do it: an image x optimised so that a network's
features of x match the content image's at one depth (content loss: their mean squared difference)
and the Gram matrices of its features (G = F F^T / (C H W), which channels fire together, wherever
they are) match the style image's at every depth (style loss).

No pretrained network can be downloaded here, so the features come from gen.StyleNet: five levels of
3 x 3 convolutions with random weights (a fixed seed, He-uniform, never trained), ReLU and 2 x 2
average pooling: 3 -> 32 -> 64 -> 128 -> 256 -> 256 channels. Random convolutions are known to
carry texture statistics well (He, Wang & Hopcroft 2016, "A powerful generative model using random
weights for the deep image representation"; Ustyuzhaninov et al. 2017, "What does it take to
generate natural textures?"): a Gram matrix of many random filters' responses at several scales
describes colours, edges and their co-occurrence — what a style is; content is kept by the spatial
layout of the deeper responses. What a random network lacks is semantics (a trained VGG keeps
"cat" where this keeps shapes), so results look more like texture transfer than painting.

gen.style_transfer(content, style [, {size = 128, steps = 20, optimizer = 'lbfgs' | 'adam', lr,
  content_weight = 1, style_weight = 10, content_layer = 4, seed = 1, init = 'content' | 'noise',
  callback = fn(step, image, losses)}]) -> image (3, H, W) in [0, 1], history {total, content, style}
  content and style: (3, H, W) images in [0, 1] (lm.load_image(path, {mode = 'rgb'})); both resized
  to size x size (bilinear); the image optimised is a free tensor clamped to [0, 1] after each step.
  Each loss is relative to its target's magnitude (content: mse / mean(F_c^2); style: the sum over the
  levels of the centred Gram matrix's mse / mean(G_s^2) and the channel means' mse / mean(mu_s^2)),
  so the weights do not depend on the random features' scale. The centred Gram matrix
  (gen.gram(f, true)) is used because the plain one of random ReLU features is dominated by their
  means, alike for every image (measured here: the plain Gram loss between a cat and gravel is
  already 5e-4 of the Gram's magnitude).
gen.gram(f [, centered]) -> (N, C, C) = f f^T / (C H W) for features f (N, C, H, W) (centred: each
  channel's mean over the positions subtracted first).
gen.TransformNet{width = 16, blocks = 3}: the real-time variant's network (Johnson et al. 2016):
  conv 9x9 -> two stride-2 convs -> residual blocks -> two nearest x2 upsamplings with convs ->
  conv 9x9 -> sigmoid, GroupNorm (as instance norm) between; trained by gen.train_transform(net,
  contents, style, {steps, lr, batch}) on content crops for one style, it then stylises any image
  in one forward pass.
]]
function M.gram(f, centered)
  if not lm.is_tensor(f) or f:dim() ~= 4 then fail('gen.gram', 'features must be (N, C, H, W), got %s', lm.is_tensor(f) and ('[' .. table.concat(f:shape(), ', ') .. ']') or type(f)) end
  local N, C, H, W = f:size(1), f:size(2), f:size(3), f:size(4)
  local v = f:reshape(N, C, H * W)
  if centered then v = v - v:mean(3, true) end
  return v:matmul(v:transpose(2, 3)) / (C * H * W)
end

-- A level's style statistics: the channels' means (N, C) and their centred Gram matrix (N, C, C).
-- With random filters the plain Gram matrix is dominated by the ReLU outputs' means, the same for
-- every image; centring leaves the co-variation that tells textures apart, and the means are
-- matched on their own.
local function style_stats(f)
  return { mean = f:mean({ 3, 4 }), cov = M.gram(f, true) }
end

local function style_loss(fs, targets, norms)
  local total = nil
  for i, f in ipairs(fs) do
    local st = style_stats(f)
    local t = targets[i]
    local l = F.mse_loss(st.cov, t.cov:expand(st.cov:shape())) / norms[i].cov
      + F.mse_loss(st.mean, t.mean:expand(st.mean:shape())) / norms[i].mean
    total = total and total + l or l
  end
  return total
end

local function style_targets(net, img)
  local targets, norms = {}, {}
  lm.no_grad(function()
    for i, f in ipairs(net:features(img)) do
      targets[i] = style_stats(f)
      norms[i] = { cov = targets[i].cov:pow(2):mean():item(), mean = targets[i].mean:pow(2):mean():item() }
    end
  end)
  return targets, norms
end

function M.StyleNet(o)
  o = o or {}
  local nn = require 'lumen.nn'
  local Net = nn.Module:extend('StyleNet')
  local widths = { 32, 64, 128, 256, 256 }
  function Net:__init()
    lm.manual_seed(o.seed or 1)
    self.convs = nn.ModuleList({})
    local cin = 3
    for _, w in ipairs(widths) do
      local c = nn.Conv2d(cin, w, 3, { padding = 1 })
      nn.init.kaiming_uniform_(c.weight, { nonlinearity = 'relu' })
      lm.no_grad(function() c.bias:zero_() end)
      c.weight:requires_grad_(false)
      c.bias:requires_grad_(false)
      self.convs:append(c)
      cin = w
    end
  end
  --- net:features(x) -> the list of the five levels' ReLU outputs
  function Net:features(x)
    local out, h = {}, x
    for i = 1, #widths do
      if i > 1 then h = F.avg_pool2d(h, 2) end
      h = F.relu(self.convs[i](h))
      out[i] = h
    end
    return out
  end
  return Net()
end

local function check_image(fname, img, what)
  if not lm.is_tensor(img) or img:dim() ~= 3 or img:size(1) ~= 3 then
    fail(fname, '%s must be an RGB image (3, H, W) in [0, 1] (lm.load_image(path, {mode = \'rgb\'})), got %s', what,
      lm.is_tensor(img) and ('[' .. table.concat(img:shape(), ', ') .. ']') or type(img))
  end
  if img:size(2) < 16 or img:size(3) < 16 then
    fail(fname, '%s of %d x %d pixels is smaller than the 16 x 16 the five levels need', what, img:size(2), img:size(3))
  end
end

local function resized(img, size)
  return F.interpolate(img:float():unsqueeze(1), { size = { size, size }, mode = 'bilinear', align_corners = false })
end

function M.style_transfer(content, style, o)
  local fname = 'gen.style_transfer'
  check_image(fname, content, 'the content image')
  check_image(fname, style, 'the style image')
  o = o or {}
  local size = opt_int(fname, o, 'size', 128)
  if size < 16 or size > 1024 then fail(fname, 'size must be 16..1024, got %d', size) end
  local steps = opt_int(fname, o, 'steps', 20)
  local kind = o.optimizer or 'lbfgs'
  if kind ~= 'lbfgs' and kind ~= 'adam' then fail(fname, "optimizer must be 'lbfgs' or 'adam', got %s", tostring(kind)) end
  local cw, sw = o.content_weight or 1, o.style_weight or 10
  if type(cw) ~= 'number' or cw < 0 or type(sw) ~= 'number' or sw < 0 then fail(fname, 'the weights must be non-negative numbers') end
  local layer = opt_int(fname, o, 'content_layer', 4)
  if layer > 5 then fail(fname, 'content_layer must be 1..5, got %d', layer) end
  local net = M.StyleNet { seed = o.seed }
  local c, s = resized(content, size), resized(style, size)
  local cf = lm.no_grad(function() return net:features(c)[layer] end)
  local st, sn = style_targets(net, s)
  local x
  if o.init == 'noise' then lm.manual_seed(o.seed or 1) x = lm.rand(1, 3, size, size)
  else x = c:clone() end
  x:requires_grad_(true)
  local optim = require 'lumen.optim'
  local opt = kind == 'lbfgs' and optim.LBFGS({ x }, { lr = o.lr or 1, max_iter = 20, history_size = 20 })
    or optim.Adam({ x }, { lr = o.lr or 0.02 })
  local history = { total = {}, content = {}, style = {} }
  local last = {}
  -- each loss relative to the target's own magnitude, so the weights do not depend on the scale of
  -- the random features: content mse / mean(F_c^2), style sum over levels of mse / mean(G_s^2)
  local cnorm = lm.no_grad(function() return cf:pow(2):mean():item() end)
  local function closure()
    opt:zero_grad()
    local feats = net:features(x)
    local lc = F.mse_loss(feats[layer], cf) / cnorm
    local ls = style_loss(feats, st, sn)
    local total = lc * cw + ls * sw
    total:backward()
    last = { total = total:item(), content = lc:item(), style = ls:item() }
    return total
  end
  for step = 1, steps do
    opt:step(closure)
    lm.no_grad(function() x:clamp_(0, 1) end)
    for k, v in pairs(last) do history[k][step] = v end
    if o.callback then o.callback(step, x:detach()[1], last) end
  end
  return x:detach()[1], history
end

-- the real-time variant: a transformation network
function M.TransformNet(o)
  o = o or {}
  local nn = require 'lumen.nn'
  local w, nb = o.width or 16, o.blocks or 3
  local T = nn.Module:extend('TransformNet')
  local function cb(cin, cout, k, stride)
    return nn.Sequential(nn.Conv2d(cin, cout, k, { stride = stride or 1, padding = k // 2 }), nn.GroupNorm(cout, cout), nn.ReLU())
  end
  function T:__init()
    self.enc = nn.Sequential(cb(3, w, 9), cb(w, 2 * w, 3, 2), cb(2 * w, 4 * w, 3, 2))
    self.res = nn.ModuleList({})
    for _ = 1, nb do self.res:append(nn.Sequential(cb(4 * w, 4 * w, 3), nn.Conv2d(4 * w, 4 * w, 3, { padding = 1 }), nn.GroupNorm(4 * w, 4 * w))) end
    self.dec1 = cb(4 * w, 2 * w, 3)
    self.dec2 = cb(2 * w, w, 3)
    self.out = nn.Conv2d(w, 3, 9, { padding = 4 })
  end
  function T:forward(x)
    local h = self.enc(x)
    for i = 1, #self.res do h = h + self.res[i](h) end
    h = self.dec1(F.interpolate(h, { scale_factor = 2, mode = 'nearest' }))
    h = self.dec2(F.interpolate(h, { scale_factor = 2, mode = 'nearest' }))
    return self.out(h):sigmoid()
  end
  return T()
end

--- gen.train_transform(net, contents, style [, {steps = 200, lr = 1e-3, batch = 4, size = 64,
--- content_weight = 1, style_weight = 10, content_layer = 4, callback = fn(step, loss)}]) -> history:
--- trains net (gen.TransformNet) on random size x size crops of the content images (a list of (3, H, W))
--- to give them the style's Gram matrices while keeping their content features.
function M.train_transform(net, contents, style, o)
  local fname = 'gen.train_transform'
  o = o or {}
  if type(contents) ~= 'table' or #contents == 0 then fail(fname, 'contents must be a list of RGB images') end
  for i, c in ipairs(contents) do check_image(fname, c, 'content image ' .. i) end
  check_image(fname, style, 'the style image')
  local size, steps, B = opt_int(fname, o, 'size', 64), opt_int(fname, o, 'steps', 200), opt_int(fname, o, 'batch', 4)
  local layer = opt_int(fname, o, 'content_layer', 4)
  local cw, sw = o.content_weight or 1, o.style_weight or 10
  local optim = require 'lumen.optim'
  local feat = M.StyleNet { seed = o.seed }
  local st, sn = style_targets(feat, resized(style, size))
  local opt = optim.Adam(net:parameters(), { lr = opt_pos(fname, o, 'lr', 1e-3) })
  local history = {}
  lm.manual_seed(o.seed or 1)
  for step = 1, steps do
    local crops = {}
    for b = 1, B do
      local img = contents[lm.randint(1, #contents + 1, { 1 })[1]:item()]
      local H, W = img:size(2), img:size(3)
      local side = math.min(H, W, math.max(size, math.floor(math.min(H, W) * 0.6)))
      local y0 = lm.randint(0, H - side + 1, { 1 })[1]:item()
      local x0 = lm.randint(0, W - side + 1, { 1 })[1]:item()
      crops[b] = resized(img:narrow(2, y0 + 1, side):narrow(3, x0 + 1, side), size)[1]
    end
    local x = lm.stack(crops, 1)
    opt:zero_grad()
    local y = net(x)
    local fx = lm.no_grad(function() return feat:features(x)[layer] end)
    local fy = feat:features(y)
    local ls = style_loss(fy, st, sn)
    local loss = F.mse_loss(fy[layer], fx) / fx:pow(2):mean():item() * cw + ls * sw
    loss:backward()
    opt:step()
    history[step] = loss:item()
    if o.callback then o.callback(step, loss:item()) end
  end
  return history
end

-- ---------------------------------------------------------------- the yardstick on Fashion-MNIST

--[[
gen.FashionCNN(): examples/cnn_fashion.lua's network (conv 3x3 16, pool, conv 3x3 32, pool, Linear),
with model:features(x) the flattened conv features (N, 1568) the diversity is measured on.
gen.classifier_yardstick(model, images, y) -> {accuracy = overall, per_class = {acc_1..acc_K},
diversity = {mean pairwise feature distance per class}}: images (N, 1, 28, 28) in [0, 1] as the
classifier was trained on, y the classes asked for (1-based).
]]
function M.FashionCNN()
  local nn = require 'lumen.nn'
  local Net = nn.Module:extend('FashionCNN')
  function Net:__init()
    self.conv1 = nn.Conv2d(1, 16, 3, { padding = 1 })
    self.conv2 = nn.Conv2d(16, 32, 3, { padding = 1 })
    self.pool = nn.MaxPool2d(2)
    self.fc = nn.Linear(32 * 7 * 7, 10)
  end
  function Net:features(x)
    x = self.pool(F.relu(self.conv1(x)))
    return self.pool(F.relu(self.conv2(x))):flatten(2)
  end
  function Net:forward(x) return self.fc(self:features(x)) end
  return Net()
end

--- gen.fashion_classifier([{epochs = 1, cache = path | false, limit = n, quiet = false}]) -> model,
--- test accuracy: the yardstick's classifier, trained on Fashion-MNIST's 60,000 training images (Adam
--- 1e-3, batch 128) and scored on the 10,000 test images; kept in cache (default
--- $XDG_CACHE_HOME/lumen/fashion_cnn.safetensors) so the next run loads it. limit: train on the first
--- n images only and cache nothing (a quick, weaker yardstick for smoke runs).
function M.fashion_classifier(o)
  o = o or {}
  local data, optim = require 'lumen.data', require 'lumen.optim'
  local model = M.FashionCNN()
  local path = o.cache
  if o.limit then path = false end
  if path == nil then
    local base = os.getenv('XDG_CACHE_HOME') or ((os.getenv('HOME') or '/tmp') .. '/.cache')
    path = base .. '/lumen/fashion_cnn.safetensors'
  end
  local test = data.FashionMNIST { split = 'test' }
  local function score()
    model:eval()
    local right = 0
    lm.no_grad(function()
      for i = 0, 9 do
        local x = test.data:narrow(1, i * 1000 + 1, 1000)
        right = right + model(x):argmax(2):view(-1):eq(test.targets:narrow(1, i * 1000 + 1, 1000):view(-1)):sum():item()
      end
    end)
    return right / 10000
  end
  if path then
    local f = io.open(path, 'rb')
    if f then
      f:close()
      local ok = pcall(function() model:load_state_dict(lm.load(path)) end)
      if ok then return model, score() end
    end
  end
  lm.manual_seed(5)
  local train = data.FashionMNIST { split = 'train', limit = o.limit }
  local opt = optim.Adam(model:parameters(), { lr = 1e-3 })
  local loader = data.DataLoader(train, { batch_size = 128, shuffle = true, seed = 5 })
  for e = 1, o.epochs or 1 do
    model:train()
    for x, y in loader:iter() do
      opt:zero_grad()
      F.cross_entropy(model(x), y):backward()
      opt:step()
    end
    if not o.quiet then print(string.format('yardstick classifier: epoch %d, test accuracy %.4f', e, score())) end
  end
  if path then
    os.execute("mkdir -p '" .. path:match('^(.*)/') .. "'")
    pcall(lm.save, path, model:state_dict())
  end
  return model, score()
end

function M.classifier_yardstick(model, images, y)
  local fname = 'gen.classifier_yardstick'
  if not lm.is_tensor(images) or images:dim() ~= 4 then fail(fname, 'images must be (N, 1, 28, 28)') end
  if not lm.is_tensor(y) or y:numel() ~= images:size(1) then fail(fname, 'y must hold one class per image') end
  y = y:long():view(-1)
  model:eval()
  local feats, logits = lm.no_grad(function()
    local f = model:features(images)
    return f, model.fc(f)
  end)
  local pred = logits:argmax(2):view(-1)
  local right = pred:eq(y):double()
  local out = { accuracy = right:mean():item(), per_class = {}, diversity = {}, predicted = pred }
  local K = logits:size(2)
  local members = {}
  for i, c in ipairs(y:tolist()) do
    members[c] = members[c] or {}
    table.insert(members[c], i)
  end
  for c = 1, K do
    if members[c] then
      local idx = lm.tensor(members[c], { dtype = 'int64' })
      out.per_class[c] = right:index_select(1, idx):mean():item()
      local fc = feats:index_select(1, idx):double()
      local n = fc:size(1)
      if n > 1 then
        local sq = fc:pow(2):sum(2)
        local d2 = (sq + sq:t() - fc:matmul(fc:t()) * 2):clamp(0, math.huge):sqrt()
        out.diversity[c] = d2:sum():item() / (n * (n - 1))
      end
    end
  end
  return out
end

return M
