--[[
examples/dcgan_fashion.lua — a conditional DCGAN on Fashion-MNIST (lumen/generative.lua's gen.DCGAN:
the generator upsamples with nn.ConvTranspose2d, 7 -> 14 -> 28; the discriminator sees the image and
the class asked for), trained with the non-saturating losses and Adam (2e-4, betas 0.5, 0.999). Every
--every steps it samples 10 images of each class and scores them with the yardstick: a CNN trained
on Fashion-MNIST (gen.fashion_classifier, cached after its first run) reads the class of each —
the accuracy per class says whether the generator makes what was asked, the features' mean
pairwise distance within a class says how diverse its samples are (a collapsed generator makes
them all alike). --viz shows the samples scene, a row per class, as it trains.

  lumen examples/dcgan_fashion.lua                  (1500 steps of 64 images)
  lumen examples/dcgan_fashion.lua --steps 4000 --viz

Options: --steps N  --batch N  --width N  --z N  --lr X  --seed N  --every N  --limit N (training
         images)  --yardstick-limit N (a quick yardstick trained on N images, not cached)  --viz  --quiet
]]
local gen = require 'lumen.generative'
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local args = dofile(here .. 'args.lua')

local o = args.parse(arg, {
  ['--steps'] = { 'steps', 'int' }, ['--batch'] = { 'batch', 'int' }, ['--width'] = { 'width', 'int' },
  ['--z'] = { 'z_dim', 'int' }, ['--lr'] = { 'lr', 'num' }, ['--seed'] = { 'seed', 'int' },
  ['--every'] = { 'every', 'int' }, ['--limit'] = { 'limit', 'int' }, ['--yardstick-limit'] = { 'yardstick_limit', 'int' }, ['--viz'] = { 'viz', 'flag' },
  ['--quiet'] = { 'quiet', 'flag' },
}, { steps = 1500, batch = 64, every = 250, limit = 60000, seed = 1 },
  'usage: lumen examples/dcgan_fashion.lua [--steps N] [--batch N] [--width N] [--z N] [--lr X] [--seed N]\n'
  .. '         [--every N] [--limit N] [--yardstick-limit N] [--viz] [--quiet]')
if o.every < 1 then o.every = 1 end

local train = data.FashionMNIST { split = 'train', limit = o.limit }
local X = train.data * 2 - 1                         -- the generator's tanh range
local Y = train.targets
local classifier, test_acc = gen.fashion_classifier { quiet = o.quiet, limit = o.yardstick_limit }
local gan = gen.DCGAN { z_dim = o.z_dim, width = o.width, batch = o.batch, lr = o.lr, seed = o.seed }
if not o.quiet then
  print(string.format('conditional DCGAN on %d Fashion-MNIST images, batch %d; the yardstick: a CNN of test accuracy %.4f',
    X:size(1), gan.batch, test_acc))
end
local asked = lm.arange(1, 11):long():view(10, 1):expand(10, 10):reshape(-1) -- 1 x10, 2 x10, ...
local loader = data.DataLoader(data.TensorDataset(X, Y), { batch_size = gan.batch, shuffle = true, seed = o.seed, drop_last = true })
local it = loader:iter()
local t0, last = os.clock(), nil
for s = 1, o.steps do
  local x, y = it()
  if not x then it = loader:iter() x, y = it() end
  local d, g = gan:step(x, y)
  if s % o.every == 0 or s == o.steps then
    local imgs = gan:sample(asked, { seed = 7 })
    last = gen.classifier_yardstick(classifier, imgs, asked)
    if not o.quiet then
      local div = 0
      for c = 1, 10 do div = div + (last.diversity[c] or 0) / 10 end
      print(string.format('step %5d  D %.3f  G %.3f  samples read as their class %.0f%%  diversity %.2f  (%.0f s)', s, d, g,
        100 * last.accuracy, div, os.clock() - t0))
    end
    if o.viz then
      viz.show('samples', { images = imgs, labels = asked, predicted = last.predicted, classes = train.classes, step = s,
        source = string.format('computed in this process: gen.DCGAN at step %d, 10 samples a class; verdicts: gen.fashion_classifier (test accuracy %.3f)',
          s, test_acc) })
      viz.pump()
    end
  end
end
return { gan = gan, yardstick = last }
