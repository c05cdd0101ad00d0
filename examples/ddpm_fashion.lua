--[[
examples/ddpm_fashion.lua — a class-conditional DDPM on Fashion-MNIST: a small U-Net
(lumen/generative.lua's gen.UNet: residual blocks with GroupNorm and SiLU, the sinusoidal time
embedding and the class's embedding added in every block, skip connections, nearest upsampling)
trained to predict the noise of images noised in closed form at a random step (gen.ImageDDPM, T =
400, linear schedule); every --every steps it samples 10 images of each class with DDIM (--ddim
steps) and scores them with the yardstick: the CNN of gen.fashion_classifier reads their class, and
the features' spread within a class measures diversity — the same numbers as
examples/dcgan_fashion.lua, so the two can be compared. --viz shows the samples scene.

  lumen examples/ddpm_fashion.lua                    (3000 steps of 64 images)
  lumen examples/ddpm_fashion.lua --steps 8000 --viz --save ddpm.safetensors

Options: --steps N  --batch N  --width N  --T N  --lr X  --ddim N  --seed N  --every N  --limit N
         --yardstick-limit N (a quick yardstick trained on N images, not cached)
         --save FILE (the U-Net's weights at the end)  --load FILE (start from them)  --viz  --quiet
]]
local gen = require 'lumen.generative'
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local args = dofile(here .. 'args.lua')

local o = args.parse(arg, {
  ['--steps'] = { 'steps', 'int' }, ['--batch'] = { 'batch', 'int' }, ['--width'] = { 'width', 'int' },
  ['--T'] = { 'T', 'int' }, ['--lr'] = { 'lr', 'num' }, ['--ddim'] = { 'ddim', 'int' }, ['--seed'] = { 'seed', 'int' },
  ['--every'] = { 'every', 'int' }, ['--limit'] = { 'limit', 'int' }, ['--yardstick-limit'] = { 'yardstick_limit', 'int' }, ['--save'] = { 'save', 'str' },
  ['--load'] = { 'load', 'str' }, ['--viz'] = { 'viz', 'flag' }, ['--quiet'] = { 'quiet', 'flag' },
}, { steps = 3000, batch = 64, every = 1000, limit = 60000, seed = 1, ddim = 50 },
  'usage: lumen examples/ddpm_fashion.lua [--steps N] [--batch N] [--width N] [--T N] [--lr X] [--ddim N] [--seed N]\n'
  .. '         [--every N] [--limit N] [--yardstick-limit N] [--save FILE] [--load FILE] [--viz] [--quiet]')
if o.every < 1 then o.every = 1 end

local train = data.FashionMNIST { split = 'train', limit = o.limit }
local X, Y = train.data * 2 - 1, train.targets
local classifier, test_acc = gen.fashion_classifier { quiet = o.quiet, limit = o.yardstick_limit }
local model = gen.ImageDDPM { T = o.T, width = o.width, batch = o.batch, lr = o.lr, seed = o.seed }
if o.load then model.net:load_state_dict(lm.load(o.load)) end
if not o.quiet then
  print(string.format('conditional U-Net DDPM on %d Fashion-MNIST images: T = %d, batch %d; samples by DDIM with %d steps; '
    .. 'the yardstick: a CNN of test accuracy %.4f', X:size(1), model.T, model.batch, o.ddim, test_acc))
end
local asked = lm.arange(1, 11):long():view(10, 1):expand(10, 10):reshape(-1)
local loader = data.DataLoader(data.TensorDataset(X, Y), { batch_size = model.batch, shuffle = true, seed = o.seed, drop_last = true })
local it = loader:iter()
local t0, last, loss_sum, n = os.clock(), nil, 0, 0
for s = 1, o.steps do
  local x, y = it()
  if not x then it = loader:iter() x, y = it() end
  loss_sum, n = loss_sum + model:step(x, y), n + 1
  if s % o.every == 0 or s == o.steps then
    local imgs = model:sample(asked, { ddim = o.ddim, seed = 7 })
    last = gen.classifier_yardstick(classifier, imgs, asked)
    if not o.quiet then
      local div = 0
      for c = 1, 10 do div = div + (last.diversity[c] or 0) / 10 end
      print(string.format('step %5d  loss %.4f  samples read as their class %.0f%%  diversity %.2f  (%.0f s)', s, loss_sum / n,
        100 * last.accuracy, div, os.clock() - t0))
    end
    loss_sum, n = 0, 0
    if o.viz then
      viz.show('samples', { images = imgs, labels = asked, predicted = last.predicted, classes = train.classes, step = s,
        source = string.format('computed in this process: gen.ImageDDPM at step %d, DDIM %d steps; verdicts: gen.fashion_classifier (test accuracy %.3f)',
          s, o.ddim, test_acc) })
      viz.pump()
    end
  end
end
if o.save then lm.save(o.save, model.net:state_dict()) end
return { model = model, yardstick = last }
