--[[
examples/gan_2d.lua — a GAN on 2-D points, GAN Lab's experiment: a generator of 2-D noise and a
discriminator (MLPs, lumen/generative.lua's gen.GAN2D) trained in turns on a ring of Gaussians, two
moons, a line or a grid, with the yardstick printed as it trains: the Jensen-Shannon divergence
between real and generated points on a 40 x 40 grid (log base 2: 0 = the same histogram, 1 =
disjoint). --viz draws the gan2d scene live (real and generated points, the discriminator's surface,
the generator's grid, the losses).

  lumen examples/gan_2d.lua                        (ring, 4000 steps)
  lumen examples/gan_2d.lua --data moons --steps 6000 --viz
  lumen examples/gan_2d.lua --loss minimax --lr-d 4e-3      (the game as written: watch it stall)

Options: --data ring|moons|line|grid  --steps N  --hidden N  --layers N  --batch N  --lr-g X  --lr-d X
         --d-steps N  --loss nonsaturating|minimax  --seed N  --every N (report and redraw)  --viz
         --quiet
]]
local gen = require 'lumen.generative'
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local args = dofile(here .. 'args.lua')

local o = args.parse(arg, {
  ['--data'] = { 'data', 'str' }, ['--steps'] = { 'steps', 'int' }, ['--hidden'] = { 'hidden', 'int' },
  ['--layers'] = { 'layers', 'int' }, ['--batch'] = { 'batch', 'int' }, ['--lr-g'] = { 'lr_g', 'num' },
  ['--lr-d'] = { 'lr_d', 'num' }, ['--d-steps'] = { 'd_steps', 'int' }, ['--loss'] = { 'loss', 'str' },
  ['--seed'] = { 'seed', 'int' }, ['--every'] = { 'every', 'int' }, ['--viz'] = { 'viz', 'flag' },
  ['--quiet'] = { 'quiet', 'flag' },
}, { data = 'ring', steps = 4000, every = 500 },
  'usage: lumen examples/gan_2d.lua [--data ring|moons|line|grid] [--steps N] [--hidden N] [--layers N]\n'
  .. '         [--batch N] [--lr-g X] [--lr-d X] [--d-steps N] [--loss nonsaturating|minimax] [--seed N]\n'
  .. '         [--every N] [--viz] [--quiet]')
if o.every < 1 then o.every = 1 end
local gan = gen.GAN2D { data = o.data, hidden = o.hidden, layers = o.layers, batch = o.batch, lr_g = o.lr_g,
  lr_d = o.lr_d, d_steps = o.d_steps, loss = o.loss, seed = o.seed }
if not o.quiet then
  print(string.format('GAN on %s: G and D of %d layers x %d, batch %d, %s loss; JS divergence of 5,000 points each, 40 x 40 bins',
    gan.data, gan.layers, gan.hidden, gan.batch, gan.loss))
end
local t0 = os.clock()
local js
for s = 1, o.steps do
  local d, g = gan:step()
  if s % o.every == 0 or s == o.steps then
    js = gan:js(5000)
    if not o.quiet then
      print(string.format('step %5d  D loss %.4f  G loss %.4f  JS %.4f bits  (%.1f s)', s, d, g, js, os.clock() - t0))
    end
    if o.viz then viz.show('gan2d', gan) viz.pump() end
  end
end
return { gan = gan, js = js }
