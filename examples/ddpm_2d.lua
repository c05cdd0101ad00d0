--[[
examples/ddpm_2d.lua — a denoising diffusion model (DDPM, Ho et al. 2020) on 2-D points: the data
noised in closed form q(x_t | x_0) = N(sqrt(abar_t) x_0, (1 - abar_t) I) at a random step, an MLP
eps(x_t, t) (lumen/generative.lua's gen.DDPM2D: [x_t, a sinusoidal embedding of t] -> the noise)
trained to predict the noise, then points sampled back from pure noise by the reverse chain
(ancestral sampling, T steps) or by DDIM (Song et al. 2021) with fewer steps. The yardstick as for
examples/gan_2d.lua: the JS divergence between real and sampled points on a 40 x 40 grid. --viz
draws the diffusion scene: the forward chain of the data and the reverse chain of the samples.

  lumen examples/ddpm_2d.lua                       (ring, T = 200, 3000 steps)
  lumen examples/ddpm_2d.lua --data moons --schedule cosine --ddim 20 --viz

Options: --data ring|moons|line|grid  --steps N  --T N  --schedule linear|cosine  --hidden N
         --layers N  --batch N  --lr X  --ddim N (also sample with N DDIM steps)  --seed N
         --every N  --viz  --quiet
]]
local gen = require 'lumen.generative'
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local args = dofile(here .. 'args.lua')

local o = args.parse(arg, {
  ['--data'] = { 'data', 'str' }, ['--steps'] = { 'steps', 'int' }, ['--T'] = { 'T', 'int' },
  ['--schedule'] = { 'schedule', 'str' }, ['--hidden'] = { 'hidden', 'int' }, ['--layers'] = { 'layers', 'int' },
  ['--batch'] = { 'batch', 'int' }, ['--lr'] = { 'lr', 'num' }, ['--ddim'] = { 'ddim', 'int' },
  ['--seed'] = { 'seed', 'int' }, ['--every'] = { 'every', 'int' }, ['--viz'] = { 'viz', 'flag' },
  ['--quiet'] = { 'quiet', 'flag' },
}, { data = 'ring', steps = 3000, every = 1000 },
  'usage: lumen examples/ddpm_2d.lua [--data ring|moons|line|grid] [--steps N] [--T N] [--schedule linear|cosine]\n'
  .. '         [--hidden N] [--layers N] [--batch N] [--lr X] [--ddim N] [--seed N] [--every N] [--viz] [--quiet]')
if o.every < 1 then o.every = 1 end
local model = gen.DDPM2D { data = o.data, T = o.T, schedule = o.schedule, hidden = o.hidden, layers = o.layers,
  batch = o.batch, lr = o.lr, seed = o.seed }
if not o.quiet then
  print(string.format('DDPM on %s: T = %d, %s schedule (abar_T = %.4f), batch %d; JS divergence of 5,000 points each, 40 x 40 bins',
    model.data, model.T, model.sched.kind, model.sched.alpha_bars[model.T]:item(), model.batch))
end
local t0 = os.clock()
local js, js_ddim
for s = 1, o.steps do
  local l = model:step()
  if s % o.every == 0 or s == o.steps then
    js = model:js(5000)
    js_ddim = o.ddim and model:js(5000, { ddim = o.ddim }) or nil
    if not o.quiet then
      print(string.format('step %5d  loss %.4f  JS %.4f bits (ancestral, %d steps)%s  (%.1f s)', s, l, js, model.T,
        js_ddim and string.format(', %.4f (DDIM, %d steps)', js_ddim, o.ddim) or '', os.clock() - t0))
    end
  end
end
if o.viz then viz.show('diffusion', model) end
return { model = model, js = js, js_ddim = js_ddim }
