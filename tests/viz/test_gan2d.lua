--[[
test_gan2d.lua — the gan2d scene, offscreen: a state given by hand (points, a surface whose value
is known in every bin, a generator grid, losses) is drawn with one surface cell per bin holding
that bin's value, its hover text naming the point and the probability, the panel's counters from
the data, the layers switched by Tab; a gen.GAN2D trained a few steps shows through viz.show; the
demonstration is labelled as one; bad input is named.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells
local D = { dtype = 'float64' }

test.case('gan2d: a state given by hand', function()
  local bins = 8
  local surface = lm.zeros(bins, bins, D)
  for i = 1, bins do for j = 1, bins do surface[i][j] = (i - 1) / 10 + (j - 1) / 100 end end
  local real = lm.tensor({ { 0, 0 }, { 1, 1 }, { -1, 0.5 } }, D)
  local fake = lm.tensor({ { 0.5, 0.5 }, { -0.5, -0.5 } }, D)
  local warp = lm.zeros(9, 2, D)
  viz._show_gan2d(real, fake, surface, warp, lm.tensor({ 1.3, 1.2, 1.1 }, D), lm.tensor({ 0.7, 0.8, 0.9 }, D),
    { js = 0.25, lo = -2, hi = 2, steps = 3, loss = 'minimax' }, 'a test state')
  local st = viz.state()
  test.eq(st.scene, 'gan2d')
  test.eq(st.steps, 4, 'the layers, one a step')
  test.ok(st.step_label:find('the real points', 1, true), st.step_label)
  viz.seek(3)
  st = viz.state()
  test.ok(st.step_label:find('+ G\'s grid', 1, true), st.step_label)
  test.ok(st.title:find('step 3, minimax loss', 1, true), st.title)
  test.ok(st.step_label:find('JS divergence 0.2500 bits', 1, true), st.step_label)
  local sc = cells { kind = 'surface' }
  test.eq(#sc, bins * bins, 'one cell per bin')
  for _, c in ipairs(sc) do
    test.near(c.value, c.row / 10 + c.col / 100, 1e-12, 'bin ' .. c.row .. ',' .. c.col)
  end
  -- row 0 is the bottom of the plot (y up): its cells lie below row 7's
  local bottom = cells { kind = 'surface', row = 0, col = 0 }[1]
  local top = cells { kind = 'surface', row = 7, col = 0 }[1]
  test.ok(bottom.y > top.y, 'y grows upwards')
  local p = viz.pick(bottom.x + bottom.w / 2, bottom.y + bottom.h / 2)
  test.ok(p and p.text:find('D(-1.75, -1.75) = 0.000', 1, true), p and p.text)
  test.ok(check.panel_ink() > 50)
  for _, v in ipairs({ 'points', 'discriminator', 'generator', 'all' }) do
    viz.variant(v)
    test.ok(viz.state().step_label:find('showing', 1, true))
  end
  viz.variant('points')
  test.eq(#cells { kind = 'surface', group = 'hidden' }, bins * bins, 'the points view hides the surface')
end)

test.case('gan2d: a gen.GAN2D, the demonstration, bad input', function()
  local gen = require 'lumen.generative'
  local gan = gen.GAN2D{ data = 'moons', hidden = 16, batch = 64 }
  for _ = 1, 5 do gan:step() end
  viz.show('gan2d', gan)
  local st = viz.state()
  test.ok(st.title:find('step 5, nonsaturating loss', 1, true), st.title)
  test.eq(#cells { kind = 'surface' }, 32 * 32)
  viz.scene('gan2d')
  test.ok(viz.state().title:find('a demonstration (no GAN trained)', 1, true), viz.state().title)
  viz.show('gan2d') -- no GAN: the demonstration too
  test.ok(viz.state().title:find('a demonstration (no GAN trained)', 1, true), viz.state().title)
  test.raises(function() viz.show('gan2d', {}) end, 'the gan2d scene takes a gen.GAN2D')
  test.raises(function()
    viz._show_gan2d(lm.zeros(3, 2, D), lm.zeros(3, 2, D), lm.zeros(4, 4, D), lm.zeros(8, 2, D), lm.zeros(1, D), lm.zeros(1, D),
      { lo = 0, hi = 1 }, 'x')
  end, 'warp holds 8 points, not a k x k grid')
  test.raises(function()
    viz._show_gan2d(lm.zeros(3, 2, D), lm.zeros(3, 2, D), lm.zeros(4, 4, D), lm.zeros(9, 2, D), lm.zeros(1, D), lm.zeros(1, D),
      { lo = 1, hi = 0 }, 'x')
  end, 'a range lo < hi')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
