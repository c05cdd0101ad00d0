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

local OPTS = {
  ['--data'] = { 'data', 'str' }, ['--steps'] = { 'steps', 'int' }, ['--hidden'] = { 'hidden', 'int' },
  ['--layers'] = { 'layers', 'int' }, ['--batch'] = { 'batch', 'int' }, ['--lr-g'] = { 'lr_g', 'num' },
  ['--lr-d'] = { 'lr_d', 'num' }, ['--d-steps'] = { 'd_steps', 'int' }, ['--loss'] = { 'loss', 'str' },
  ['--seed'] = { 'seed', 'int' }, ['--every'] = { 'every', 'int' },
}

local function usage()
  return 'usage: lumen examples/gan_2d.lua [--data ring|moons|line|grid] [--steps N] [--hidden N] [--layers N]\n'
    .. '         [--batch N] [--lr-g X] [--lr-d X] [--d-steps N] [--loss nonsaturating|minimax] [--seed N]\n'
    .. '         [--every N] [--viz] [--quiet]'
end

local function parse(args)
  local o = { data = 'ring', steps = 4000, every = 500 }
  local i = 1
  while args and args[i] do
    local a = args[i]
    local spec = OPTS[a]
    if spec then
      local v = args[i + 1]
      if v == nil then error(a .. ' needs a value\n' .. usage(), 0) end
      if spec[2] == 'int' then
        v = math.tointeger(tonumber(v))
        if not v or v < 0 then error(a .. ' needs a non-negative integer, got ' .. tostring(args[i + 1]) .. '\n' .. usage(), 0) end
      elseif spec[2] == 'num' then
        v = tonumber(v)
        if not v then error(a .. ' needs a number, got ' .. tostring(args[i + 1]) .. '\n' .. usage(), 0) end
      end
      o[spec[1]] = v
      i = i + 2
    elseif a == '--viz' then o.viz, i = true, i + 1
    elseif a == '--quiet' then o.quiet, i = true, i + 1
    elseif a == '--help' or a == '-h' then print(usage()) os.exit(0)
    else error('unknown option ' .. a .. '\n' .. usage(), 0) end
  end
  if o.every < 1 then o.every = 1 end
  return o
end

local o = parse(arg)
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
