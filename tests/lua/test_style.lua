-- Style transfer (lumen/generative.lua): the Gram matrix against a loop over its definition, plain
-- and centred; the optimisation lowering the losses with L-BFGS and Adam on small images; the
-- style weight moving the result towards the style; the real-time network's shapes and training
-- steps; bad input named.
local test = require 'lumen.test'
local gen = require 'lumen.generative'
local D = { dtype = 'float64' }

test.case('the Gram matrix against its definition', function()
  lm.manual_seed(2)
  local f = lm.randn(2, 3, 4, 5, D)
  for _, centered in ipairs({ false, true }) do
    local g = gen.gram(f, centered)
    test.eq(g:shape(), { 2, 3, 3 })
    local v = f:reshape(2, 3, 20):tolist()
    for n = 1, 2 do
      local mean = {}
      for c = 1, 3 do
        local s = 0
        for k = 1, 20 do s = s + v[n][c][k] end
        mean[c] = centered and s / 20 or 0
      end
      for a = 1, 3 do
        for b = 1, 3 do
          local s = 0
          for k = 1, 20 do s = s + (v[n][a][k] - mean[a]) * (v[n][b][k] - mean[b]) end
          test.near(g[n][a][b]:item(), s / (3 * 20), 1e-12, string.format('centred %s: G[%d][%d][%d]', tostring(centered), n, a, b))
        end
      end
    end
  end
  test.raises(function() gen.gram(lm.zeros(3, 4)) end, 'gen.gram: features must be (N, C, H, W), got [3, 4]')
end)

local function stripes(n, period)
  local x = lm.arange(0, n):double()
  local row = ((x * (2 * math.pi / period)):sin() + 1) / 2
  return lm.stack({ row:view(1, n):expand(n, n), row:view(n, 1):expand(n, n), lm.full({ n, n }, 0.5, D) }, 1):float()
end

test.case('Gatys: the losses fall; the style weight moves the result towards the style', function()
  -- the sanitizer build walks lesson aics/03-style-transfer, which runs the same optimisations
  if lm.build_info().sanitize then return test.skip('the sanitizer build covers these paths in the lesson walk') end
  local content = lm.rand(3, 40, 48)
  local style = stripes(32, 6)
  for _, kind in ipairs({ 'lbfgs', 'adam' }) do
    local img, h = gen.style_transfer(content, style, { size = 32, steps = kind == 'lbfgs' and 3 or 30, optimizer = kind })
    test.eq(img:shape(), { 3, 32, 32 })
    test.ok(img:min():item() >= 0 and img:max():item() <= 1, 'an image in [0, 1]')
    test.ok(h.total[#h.total] < h.total[1], kind .. ': the loss falls ' .. h.total[1] .. ' -> ' .. h.total[#h.total])
  end
  local _, light = gen.style_transfer(content, style, { size = 32, steps = 3, style_weight = 1 })
  local _, heavy = gen.style_transfer(content, style, { size = 32, steps = 3, style_weight = 1000 })
  test.ok(heavy.style[3] < light.style[3], 'more style weight, less style loss')
  test.ok(heavy.content[3] > light.content[3], 'and more content loss')
end)

test.case('the real-time network', function()
  local net = gen.TransformNet { width = 8, blocks = 1 }
  test.eq(net(lm.rand(2, 3, 32, 32)):shape(), { 2, 3, 32, 32 })
  local h = gen.train_transform(net, { lm.rand(3, 40, 40), lm.rand(3, 50, 36) }, stripes(32, 6), { steps = 3, size = 32, batch = 2 })
  test.eq(#h, 3)
  test.ok(h[1] == h[1] and h[1] > 0, 'a finite loss')
end)

test.case('bad input is named', function()
  local img = lm.rand(3, 32, 32)
  test.raises(function() gen.style_transfer(lm.rand(1, 32, 32), img) end,
    "gen.style_transfer: the content image must be an RGB image (3, H, W) in [0, 1] (lm.load_image(path, {mode = 'rgb'})), got [1, 32, 32]")
  test.raises(function() gen.style_transfer(img, lm.rand(3, 8, 40)) end, 'the style image of 8 x 40 pixels is smaller than the 16 x 16')
  test.raises(function() gen.style_transfer(img, img, { optimizer = 'sgd' }) end, "optimizer must be 'lbfgs' or 'adam', got sgd")
  test.raises(function() gen.style_transfer(img, img, { content_layer = 6 }) end, 'content_layer must be 1..5')
  test.raises(function() gen.train_transform(gen.TransformNet {}, {}, img) end, 'contents must be a list of RGB images')
end)
