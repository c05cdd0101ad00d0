--[[
test_ddp.lua — the ddp scene, offscreen: for a timeline whose overlaps are known (two buckets done
during backward, one straddling its end, one after it), the bars' states and the counters in the
step label are those; the demonstration draws every step; bad input is named.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

test.case('ddp: overlapped and waited all-reduces, from a timeline given', function()
  -- backward ends at 10 ms; buckets: 2-4, 5-7 (inside), 8-12 (straddles: 2 of 4 ms overlap), 11-13 (after)
  local tl = { { launch = 0.002, done = 0.004 }, { launch = 0.005, done = 0.007 }, { launch = 0.008, done = 0.012 },
    { launch = 0.011, done = 0.013 }, backward_end = 0.010 }
  viz.show('ddp', { timeline = tl, source = 'test timeline' })
  local st = viz.state()
  test.eq(st.scene, 'ddp')
  test.eq(st.steps, 5)
  viz.seek(4)
  local bars = cells { kind = 'allreduce', group = nil }
  local drawn = {}
  for _, c in ipairs(bars) do if c.group ~= 'label' then drawn[#drawn + 1] = c end end
  bars = drawn
  test.eq(#bars, 4)
  local overl = cells { kind = 'allreduce', state = 'overlapped' }
  test.eq(#overl, 2, 'two all-reduces end inside backward')
  -- overlap 2 + 2 + 2 + 0 = 6 of 2 + 2 + 4 + 2 = 10 ms: 60%
  test.ok(viz.state().step_label:find('60%% of all the all%-reduce time overlaps backward'), viz.state().step_label)
  local p = viz.pick(bars[1].x + bars[1].w / 2, bars[1].y + bars[1].h / 2)
  test.ok(p and p.text:find('all-reduce from', 1, true), p and p.text)
  test.ok(check.panel_ink() > 50)
  viz.scene('ddp')
  test.ok(viz.state().title:find('a demonstration timeline', 1, true))
  test.raises(function() viz.show('ddp', { timeline = { { launch = 2, done = 1 }, backward_end = 1 } }) end,
    'the ddp scene: bucket 1 runs from 2 to 1')
  test.raises(function() viz.show('ddp', { timeline = {} }) end, 'the ddp scene has no timeline yet')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
