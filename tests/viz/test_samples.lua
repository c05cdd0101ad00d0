--[[
test_samples.lua — the samples scene, offscreen: images given by hand (each a known grey level) are
drawn a row per class asked for, in the order given within a row, each image's cell reading back
its class and the classifier's verdict; step 1 frames them and the step label gives the share the
classifier recognised; the demonstration is labelled as one; bad input is named.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

test.case('samples: images given by hand', function()
  -- 6 images of 4 x 4: classes 3, 1, 3, 2, 1, 3 (1-based); the classifier misreads the second class 3
  local imgs = lm.zeros(6, 1, 4, 4, { dtype = 'float64' })
  for i = 1, 6 do imgs[i]:fill_(i / 6) end
  viz.show('samples', { images = imgs, labels = { 3, 1, 3, 2, 1, 3 }, predicted = { 3, 1, 1, 2, 1, 3 },
    classes = { 'zero', 'one', 'two' }, step = 42, source = 'a test' })
  local st = viz.state()
  test.eq(st.scene, 'samples')
  test.ok(st.title:find('6 generated images, a row per class asked for', 1, true), st.title)
  test.ok(st.step_label:find('at training step 42', 1, true), st.step_label)
  local c = cells { kind = 'sample' }
  test.eq(#c, 6)
  local by = {}
  for _, x in ipairs(c) do by[x.index + 1] = x end
  test.eq({ by[2].row, by[5].row, by[4].row, by[1].row, by[3].row, by[6].row }, { 0, 0, 1, 2, 2, 2 }, 'a row per class, in class order')
  test.eq({ by[1].col, by[3].col, by[6].col }, { 0, 1, 2 }, 'the order given within a row')
  test.eq(by[3].state, 'misread')
  local p = viz.pick(by[3].x + by[3].w / 2, by[3].y + by[3].h / 2)
  test.ok(p and p.text:find('sample 3, asked for two; the classifier reads zero', 1, true), p and p.text)
  viz.seek(1)
  test.ok(viz.state().step_label:find('recognises the class asked for in 83.3% of them (step 42)', 1, true), viz.state().step_label)
  test.ok(check.panel_ink() > 50)
  -- without labels: a square grid
  viz.show('samples', { images = lm.rand(5, 3, 8, 8) })
  test.eq(#cells { kind = 'sample' }, 5)
  test.ok(viz.state().title:find('5 generated images;', 1, true), viz.state().title)
  viz.scene('samples')
  test.ok(viz.state().title:find('a demonstration', 1, true))
  test.raises(function() viz.show('samples', { images = lm.rand(2, 2, 4, 4) }) end, '1 or 3 channels')
  test.raises(function() viz.show('samples', { images = lm.rand(2, 1, 4, 4), labels = { 1 } }) end, '1 labels for 2 images')
  test.raises(function() viz.show('samples', { images = 3 }) end, 'the samples scene takes {images =')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
