--[==[
bench/generative/yardstick.lua — the yardstick across seeds: a GAN (gen.GAN2D, non-saturating) and a
DDPM (gen.DDPM2D, ancestral sampling) trained on the same 2-D distribution with the same budget of
steps, for 5 seeds; each scored by the JS divergence of 5,000 generated points against 5,000 real
ones (gen.js_divergence, 40 x 40 bins, log2) and, on the ring, by the number of its 8 modes that hold
at least 2% of the generated points (within 0.5 of the mode's centre).
  lumen bench/generative/yardstick.lua [DATA [STEPS]]      (default: ring 3000)
]==]
local gen = require 'lumen.generative'
local data, steps = arg and arg[1] or 'ring', tonumber(arg and arg[2]) or 3000

local function modes(pts)
  if data ~= 'ring' then return nil end
  local n = pts:size(1)
  local count = 0
  for k = 0, 7 do
    local c = lm.tensor({ 2 * math.cos(2 * math.pi * k / 8), 2 * math.sin(2 * math.pi * k / 8) }, { dtype = 'float64' })
    local near = (pts:double() - c:view(1, 2)):pow(2):sum(2):sqrt():lt(0.5):double():sum():item()
    if near >= 0.02 * n then count = count + 1 end
  end
  return count
end

local rows = {}
for _, kind in ipairs({ 'GAN', 'DDPM' }) do
  local js_all = {}
  for seed = 1, 5 do
    local m = kind == 'GAN' and gen.GAN2D { data = data, seed = seed } or gen.DDPM2D { data = data, seed = seed }
    local t0 = os.clock()
    for _ = 1, steps do m:step() end
    local train_s = os.clock() - t0
    lm.manual_seed(100 + seed)
    local fake = m:sample(5000)
    local js = gen.js_divergence(gen.toy2d(data, 5000), fake:double())
    js_all[#js_all + 1] = js
    local md = modes(fake)
    rows[#rows + 1] = string.format('%-5s seed %d  JS %.4f bits%s  (%.0f s training)', kind, seed, js,
      md and string.format('  modes %d/8', md) or '', train_s)
    print(rows[#rows])
  end
  local mean, sd = 0, 0
  for _, v in ipairs(js_all) do mean = mean + v / #js_all end
  for _, v in ipairs(js_all) do sd = sd + (v - mean) ^ 2 / (#js_all - 1) end
  print(string.format('%-5s %s, %d steps: JS mean %.4f, sd %.4f over 5 seeds', kind, data, steps, mean, math.sqrt(sd)))
end
