--[[
test_features.lua — the features scene (issue 41 Must 2: CNN Explainer's view, viz.show(model,
{input = x})), offscreen: one column per layer in the order the layers ran; for every Conv2d
(padding, stride, dilation and groups among them) the arithmetic drawn at its step equals the
model's own value at that cell and the hover of any cell gives the model's value; the softmax step
shows softmax(model(x)) with the class names; the demonstration draws every step; bad input is
named. Read next: src/viz/scenes/features.c.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

local function texts()
  local out = {}
  for _, t in ipairs(viz.layout('text')) do out[#out + 1] = t.text end
  return out
end

local function find(pattern)
  for _, t in ipairs(texts()) do
    local a, b, c = t:match(pattern)
    if a then return a, b, c end
  end
end

local NAMES = { 'a', 'b', 'c', 'd', 'e', 'f', 'g' }

local function net()
  lm.manual_seed(7)
  return nn.Sequential(nn.Conv2d(2, 4, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(4, 6, 3, { stride = 2, dilation = 1, groups = 2 }), nn.ReLU(),
    nn.Conv2d(6, 6, 2, { dilation = 2, bias = false }), nn.Flatten(), nn.Linear(6, 7))
end

test.case('features: the columns, the arithmetic of each Conv2d, the hover, the softmax', function()
  local m = net()
  local x = lm.randn(2, 17, 17)
  viz.show(m, { input = x, classes = NAMES })
  local st = viz.state()
  test.eq(st.scene, 'features')
  test.eq(st.steps, 1 + 8 + 1, 'the overview, a step per layer, the softmax')
  test.ok(st.title:find('feature maps of Sequential on one 2 x 17 x 17 input', 1, true), st.title)
  -- every layer's output, as the model computes it
  local outs, h = {}, x:unsqueeze(1)
  lm.no_grad(function()
    for i = 1, 8 do
      h = m[i](h)
      outs[i] = h[1]
    end
  end)
  viz.seek(0)
  for i, kind in ipairs({ 'Conv2d', 'ReLU', 'MaxPool2d', 'Conv2d', 'ReLU', 'Conv2d', 'Flatten', 'Linear' }) do
    local found = false
    for _, t in ipairs(texts()) do if t == i .. ' ' .. kind then found = true end end
    test.ok(found, 'column ' .. i .. ' ' .. kind)
  end
  for _, i in ipairs({ 1, 4, 6 }) do -- the convolutions: step i explains a cell
    viz.seek(i)
    local c, r, col = find('^map (%d+), row (%d+), column (%d+)')
    test.ok(c, 'the arithmetic of layer ' .. i)
    local v, got = find('^= (%S+) %(.-%), the model gave (%S+)$')
    test.ok(v and got, 'the sum line of layer ' .. i)
    local want = outs[i][tonumber(c)][tonumber(r)][tonumber(col)]:item()
    test.near(tonumber(got), want, 1e-5, 'the model\'s value drawn, layer ' .. i)
    test.near(tonumber(v), want, 1e-5, 'bias + the products drawn = the model\'s value, layer ' .. i)
    -- and it is the largest of map 1
    test.near(want, outs[i][1]:max():item(), 1e-6, 'the largest of map 1')
    -- hover a map cell: its value and arithmetic
    local maps = cells { kind = 'map', group = 'zoom' }
    test.ok(#maps >= 1)
    local mc = maps[#maps]
    local p = viz.pick(mc.x + mc.w - 1, mc.y + mc.h - 1)
    test.ok(p and p.text:find('= bias', 1, true), p and p.text)
    local mapi, ri, ci, val = p.text:match('map (%d+), row (%d+), column (%d+): (%S+)')
    test.near(tonumber(val), outs[i][tonumber(mapi)][tonumber(ri)][tonumber(ci)]:item(), 1e-4, 'hover value')
    local recomputed = p.text:match('= (%S+)$')
    test.near(tonumber(recomputed), tonumber(val), 1e-4, 'hover arithmetic = value')
  end
  viz.seek(9)
  local probs = cells { kind = 'prob', group = 'softmax' }
  test.eq(#probs, 7)
  local p = outs[8]:softmax(1)
  for _, c in ipairs(probs) do test.near(c.value, p[c.index + 1]:item(), 1e-6, 'softmax ' .. c.index) end
  test.ok(viz.state().step_label:find('softmax of the last layer: ' .. NAMES[p:argmax():item()], 1, true), viz.state().step_label)
  test.ok(check.panel_ink() > 50)
end)

test.case('features: the demonstration draws every step; --snapshot', function()
  viz.scene('features')
  test.ok(viz.state().title:find('a demonstration', 1, true))
  for s = 0, viz.state().steps - 1 do
    viz.seek(s)
    test.ok(#viz.layout() > 0)
    test.ok(check.panel_ink() > 50)
  end
  local exe, tmp = lm.sys.executable(), check.tmp
  local out = tmp .. '/features-1.png'
  local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot features '%s' --step 1 2>&1", exe, out))
  test.ok(ok and #check.read(out) > 1000)
end)

test.case('features: bad input is named', function()
  local m = net()
  test.raises(function() viz.show(m, { input = lm.randn(2, 2, 17, 17) }) end, 'the features scene shows one input; got a batch of 2')
  test.raises(function() viz.show(m, { input = lm.randn(3, 17, 17) }) end, 'viz.show: the model did not run on the input of shape [3, 17, 17]')
  test.raises(function() viz.show(m, { input = 'x' }) end, 'the features scene needs input = a tensor')
  test.raises(function() viz.show(m, { input = lm.randn(5) }) end, 'the features scene takes one image (C, H, W) or (H, W)')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
