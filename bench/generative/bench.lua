--[[
bench/generative/bench.lua — Lumen's side of bench/generative/run.sh: the time of one training step
of the conditional DCGAN (gen.DCGAN), the conditional U-Net DDPM (gen.ImageDDPM) on 28 x 28 images,
batch 64, and one L-BFGS step (20 iterations) of style transfer at 128 x 128, as
bench/generative/torch_models.py times their PyTorch twins (median of 5 after 2 warm-up steps; the
style step: the faster of two). Prints 'name ms' lines.
]]
local gen = require 'lumen.generative'

local function median_ms(step, warm, reps)
  for _ = 1, warm or 2 do step() end
  local ts = {}
  for i = 1, reps or 5 do
    local t0 = lm.sys.clock()
    step()
    ts[i] = (lm.sys.clock() - t0) * 1e3
  end
  table.sort(ts)
  return ts[(#ts + 1) // 2]
end

lm.manual_seed(1)
local x = lm.rand(64, 1, 28, 28) * 2 - 1
local y = lm.randint(1, 11, { 64 })
local dc = gen.DCGAN {}
print(string.format('dcgan_step %.2f', median_ms(function() dc:step(x, y) end)))
local dd = gen.ImageDDPM {}
print(string.format('unet_ddpm_step %.2f', median_ms(function() dd:step(x, y) end)))
-- one L-BFGS step (20 iterations) of Gatys' optimisation at 128 x 128: gen.style_transfer's own step
local content, style = lm.rand(3, 128, 128), lm.rand(3, 128, 128)
local t = {}
gen.style_transfer(content, style, { size = 128, steps = 4, callback = function(i) t[i] = lm.sys.clock() end })
local ds = { t[3] - t[2], t[4] - t[3] }
table.sort(ds)
print(string.format('style_lbfgs_step %.2f', ds[1] * 1e3))
