-- The generative examples run from their command lines with tiny budgets (each must finish, print
-- what it promises and return its results), and refuse a bad option with the usage. Training to a
-- good result takes minutes: that is for the benchmarks, not here.
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/lua/'
local root = here .. '../../'

local function run(name, args)
  local saved = _G.arg
  _G.arg = { [0] = root .. 'examples/' .. name }
  for i, a in ipairs(args) do _G.arg[i] = a end
  local ok, r = pcall(dofile, root .. 'examples/' .. name)
  _G.arg = saved
  if not ok then error(r, 0) end
  return r
end

test.case('gan_2d and ddpm_2d', function()
  local r = run('gan_2d.lua', { '--steps', '4', '--every', '2', '--hidden', '8', '--batch', '16', '--quiet' })
  test.ok(r.gan.steps == 4 and r.js >= 0 and r.js <= 1, 'gan_2d: 4 steps and a JS divergence')
  r = run('ddpm_2d.lua', { '--steps', '3', '--every', '3', '--T', '10', '--hidden', '8', '--ddim', '4', '--quiet' })
  test.ok(r.model.steps == 3 and r.js >= 0 and r.js_ddim >= 0, 'ddpm_2d: 3 steps, ancestral and DDIM yardsticks')
  test.raises(function() run('gan_2d.lua', { '--stepz', '4' }) end, 'unknown option --stepz')
  test.raises(function() run('ddpm_2d.lua', { '--T', 'ten' }) end, '--T needs a non-negative integer, got ten')
end)

test.case('dcgan_fashion and ddpm_fashion (a quick yardstick)', function()
  -- the sanitizer build walks lessons aics/03-gan, aics/03-diffusion and aics/03-cnn (a DCGAN's and a U-Net's layers, the classifier)
  if lm.build_info().sanitize then return test.skip('the sanitizer build covers these paths in the lesson walk') end
  if not io.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz', 'rb') then
    print('  skipped: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)')
    return
  end
  local r = run('dcgan_fashion.lua', { '--steps', '2', '--every', '2', '--limit', '128', '--width', '8', '--batch', '16',
    '--yardstick-limit', '256', '--quiet' })
  test.ok(r.gan.steps == 2 and r.yardstick.accuracy >= 0 and #r.yardstick.per_class == 10, 'dcgan_fashion: a yardstick per class')
  r = run('ddpm_fashion.lua', { '--steps', '2', '--every', '2', '--limit', '128', '--width', '8', '--batch', '8', '--T', '10',
    '--ddim', '2', '--yardstick-limit', '256', '--quiet' })
  test.ok(r.model.steps == 2 and r.yardstick.accuracy >= 0, 'ddpm_fashion: a yardstick')
end)

test.case('style_transfer, both ways', function()
  -- the sanitizer build walks lesson aics/03-style-transfer, which runs the same optimisations
  if lm.build_info().sanitize then return test.skip('the sanitizer build covers these paths in the lesson walk') end
  local sk = '/usr/lib/python3/dist-packages/skimage/data/'
  if not io.open(sk .. 'chelsea.png', 'rb') then
    print("  skipped: python3-skimage's images are not installed (./test.sh installs python3-skimage)")
    return
  end
  local out = os.tmpname() .. '.png'
  local r = run('style_transfer.lua', { '--size', '32', '--steps', '2', '--out', out, '--quiet' })
  test.eq(r.result:shape(), { 3, 32, 32 })
  local back = lm.load_image(out)
  test.eq(back:shape(), { 3, 32 + 4, 3 * 32 + 4 * 2 }, 'content, style and result side by side (padding 2)')
  os.remove(out)
  r = run('style_transfer.lua', { '--realtime', '--size', '32', '--steps', '2', '--out', out, '--quiet' })
  test.eq(r.result:shape(), { 3, 32, 32 })
  os.remove(out)
end)
