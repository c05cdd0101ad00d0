--[[
test_diffusion.lua — the diffusion scene, offscreen: chains given by hand (points whose spread is
known at each snapshot, a schedule) are stepped forward then backward, each step's label naming the
step t and its signal and noise factors sqrt(abar_t) and sqrt(1 - abar_t) and the spread measured
on the snapshot drawn; the thumbnails fill as the steps go; a gen.DDPM2D shows through viz.show;
the demonstration is labelled as one; bad input is named.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells
local D = { dtype = 'float64' }

test.case('diffusion: chains given by hand', function()
  -- 3 snapshots of 4 points at (+-a, +-a): spread a; forward a = 1, 2, 3; reverse a = 3, 2, 1
  local function snap(a) return lm.tensor({ { a, a }, { -a, a }, { a, -a }, { -a, -a } }, D) end
  local fwd = lm.stack({ snap(1), snap(2), snap(3) }, 1)
  local rev = lm.stack({ snap(3), snap(2), snap(1) }, 1)
  local ab = lm.tensor({ 0.81, 0.64, 0.49, 0.36 }, D)
  viz._show_diffusion(fwd, rev, { 0, 2, 4 }, { 4, 2, 0 }, ab, 'linear', 'a test chain')
  local st = viz.state()
  test.eq(st.scene, 'diffusion')
  test.eq(st.steps, 6)
  test.ok(st.title:find('4 points, T = 4, linear schedule', 1, true), st.title)
  test.ok(st.step_label:find('forward, t = 0: x_t = 1.000 x_0 + 0.000 noise; the points\' spread 1.000', 1, true), st.step_label)
  viz.seek(1)
  test.ok(viz.state().step_label:find('forward, t = 2: x_t = 0.800 x_0 + 0.600 noise; the points\' spread 2.000', 1, true),
    viz.state().step_label)
  test.eq(#cells { kind = 'snapshot', group = 'thumbnail', row = 0, state = 'forward' }, 2, 'two forward snapshots seen')
  test.eq(#cells { kind = 'snapshot', group = 'thumbnail', row = 1, state = 'later' }, 3, 'the reverse still to come')
  viz.seek(3)
  test.ok(viz.state().step_label:find('reverse, t = 4: the model\'s denoising starts from N(0, I); the points\' spread 3.000', 1, true),
    viz.state().step_label)
  viz.seek(5)
  test.ok(viz.state().step_label:find('reverse, t = 0: the model\'s denoising has made the samples x_0; the points\' spread 1.000', 1, true),
    viz.state().step_label)
  local sc = cells { kind = 'schedule' }[1]
  local p = viz.pick(sc.x + sc.w / 2, sc.y + sc.h / 2)
  test.ok(p and p.text:find('t = 0: abar_t = 1.0000', 1, true), p and p.text)
  test.ok(check.panel_ink() > 50)
end)

test.case('diffusion: a gen.DDPM2D, the demonstration, bad input', function()
  local gen = require 'lumen.generative'
  local m = gen.DDPM2D{ data = 'line', T = 20, hidden = 16, batch = 32 }
  for _ = 1, 3 do m:step() end
  viz.show('diffusion', m, { points = 50, snapshots = 5 })
  test.eq(viz.state().steps, 10)
  test.ok(viz.state().title:find('50 points, T = 20', 1, true), viz.state().title)
  viz.scene('diffusion')
  test.ok(viz.state().title:find('a demonstration', 1, true), viz.state().title)
  test.raises(function() viz.show('diffusion', {}) end, 'the diffusion scene takes a gen.DDPM2D')
  test.raises(function() viz.show('diffusion', m, { snapshots = 1 }) end, 'draws 2..32 snapshots')
  test.raises(function()
    viz._show_diffusion(lm.zeros(2, 3, 2, D), lm.zeros(2, 3, 2, D), { 0, 9 }, { 9, 0 }, lm.ones(4, D), 'linear', 'x')
  end, 'snapshot 1 is at a step outside 0..4')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
