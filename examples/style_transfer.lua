--[[
examples/style_transfer.lua — image style transfer with a feature network that needs no download
(lumen/generative.lua's gen.StyleNet: random, fixed 3 x 3 convolutions at five scales — why that
works is written there). Two ways, as the notes teach them:
  Gatys et al. (2016): the image itself is optimised (optim.LBFGS by default, or Adam) so that its
    deep features match the content image's and its features' statistics (centred Gram matrices and
    means) match the style image's at every scale;
  --realtime (Johnson et al. 2016): a transformation network (gen.TransformNet) is trained on crops
    of the content images for one style, then stylises an image in one forward pass.
The images are Debian's python3-skimage data (chelsea, astronaut, coffee as contents; brick, grass,
gravel as styles) read with lm.load_image; the result (content, style, result side by side) is
written with lm.save_image.

  lumen examples/style_transfer.lua                                 (chelsea in gravel -> style.png)
  lumen examples/style_transfer.lua --content astronaut --style brick --style-weight 30 --out a.png
  lumen examples/style_transfer.lua --realtime --steps 300 --style grass

Options: --content NAME|FILE  --style NAME|FILE  --size N  --steps N  --optimizer lbfgs|adam
         --style-weight X  --content-weight X  --realtime  --out FILE  --quiet
]]
local gen = require 'lumen.generative'
local SK = '/usr/lib/python3/dist-packages/skimage/data/'

local o = { content = 'chelsea', style = 'gravel', size = 128, out = 'style.png', optimizer = 'lbfgs',
  style_weight = 10, content_weight = 1 }
local i = 1
local function usage()
  return 'usage: lumen examples/style_transfer.lua [--content NAME|FILE] [--style NAME|FILE] [--size N] [--steps N]\n'
    .. '         [--optimizer lbfgs|adam] [--style-weight X] [--content-weight X] [--realtime] [--out FILE] [--quiet]'
end
while arg and arg[i] do
  local a, v = arg[i], arg[i + 1]
  if a == '--content' or a == '--style' or a == '--out' or a == '--optimizer' then
    if not v then error(a .. ' needs a value\n' .. usage(), 0) end
    o[a:sub(3)] = v
    i = i + 2
  elseif a == '--size' or a == '--steps' then
    o[a:sub(3)] = math.tointeger(tonumber(v)) or error(a .. ' needs an integer\n' .. usage(), 0)
    i = i + 2
  elseif a == '--style-weight' or a == '--content-weight' then
    o[a:sub(3):gsub('-', '_')] = tonumber(v) or error(a .. ' needs a number\n' .. usage(), 0)
    i = i + 2
  elseif a == '--realtime' then o.realtime, i = true, i + 1
  elseif a == '--quiet' then o.quiet, i = true, i + 1
  elseif a == '--help' or a == '-h' then print(usage()) os.exit(0)
  else error('unknown option ' .. a .. '\n' .. usage(), 0) end
end

local function image(name)
  local path = name:find('/') and name or (SK .. name .. '.png')
  local f = io.open(path, 'rb')
  if not f then
    error(string.format("no image '%s': give a file, or install Debian's python3-skimage for its data (%s)", path, SK), 0)
  end
  f:close()
  return lm.load_image(path, { mode = 'rgb' })
end

local content, style = image(o.content), image(o.style)
local function side(img) return F.interpolate(img:unsqueeze(1), { size = { o.size, o.size }, mode = 'bilinear' })[1] end
local t0 = os.clock()
local result
if not o.realtime then
  if not o.quiet then
    print(string.format('Gatys: %s in the style of %s, %d x %d, %s, style weight %g', o.content, o.style, o.size, o.size,
      o.optimizer, o.style_weight))
  end
  result = gen.style_transfer(content, style, { size = o.size, steps = o.steps or (o.optimizer == 'lbfgs' and 10 or 200),
    optimizer = o.optimizer, style_weight = o.style_weight, content_weight = o.content_weight,
    callback = function(step, _, l)
      if not o.quiet and (o.optimizer == 'lbfgs' or step % 20 == 0) then
        print(string.format('step %4d  loss %.5f  (content %.5f, style %.6f)  %.1f s', step, l.total, l.content, l.style, os.clock() - t0))
      end
    end })
else
  local contents = { image('chelsea'), image('astronaut'), image('coffee') }
  local net = gen.TransformNet {}
  if not o.quiet then print(string.format('real-time: a TransformNet trained on crops of 3 images for %s', o.style)) end
  gen.train_transform(net, contents, style, { steps = o.steps or 200, size = 64, style_weight = o.style_weight,
    content_weight = o.content_weight, callback = function(step, l)
      if not o.quiet and step % 25 == 0 then print(string.format('step %4d  loss %.5f  %.1f s', step, l, os.clock() - t0)) end
    end })
  net:eval()
  local t1 = os.clock()
  result = lm.no_grad(function() return net(side(content):unsqueeze(1))[1] end)
  if not o.quiet then print(string.format('one forward pass stylises a %d x %d image in %.3f s', o.size, o.size, os.clock() - t1)) end
end
lm.save_image(o.out, lm.stack({ side(content), side(style), result }, 1), { nrow = 3 })
if not o.quiet then print('content, style, result -> ' .. o.out) end
return { result = result }
