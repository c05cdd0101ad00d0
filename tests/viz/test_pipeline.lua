--[[
test_pipeline.lua — the pipeline scene, offscreen: for GPipe and 1F1B over stages 1..8 and
micro-batches 1..12, the schedule drawn respects the dependencies (F of m on stage k after F of m
on stage k - 1; B of m on stage k after B of m on stage k + 1, or after its own F on the last
stage), has every F and B once, and its counted bubble equals (K - 1) / (M + K - 1); 1F1B's first
stage holds at most K micro-batches' activations where GPipe's holds all M.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

test.case('pipeline: dependencies, every op once, the bubble equals the formula', function()
  for _, sched in ipairs({ 'gpipe', '1f1b' }) do
    for K = 1, 8, 3 do
      for _, M in ipairs({ 1, 2, 5, 12 }) do
        viz.scene('pipeline', { stages = K, micro = M, schedule = sched })
        local st = viz.state()
        viz.seek(st.steps - 1)
        local F, B = {}, {}
        for _, c in ipairs(cells { kind = 'slot', group = 'timeline' }) do
          if c.state == 'forward' then F[c.row .. ':' .. c.index] = c.col end
          if c.state == 'backward' then B[c.row .. ':' .. c.index] = c.col end
        end
        local nf, nb = 0, 0
        for _ in pairs(F) do nf = nf + 1 end
        for _ in pairs(B) do nb = nb + 1 end
        local what = string.format('%s K=%d M=%d', sched, K, M)
        test.eq(nf, K * M, what .. ': every forward once')
        test.eq(nb, K * M, what .. ': every backward once')
        for k = 0, K - 1 do
          for m = 0, M - 1 do
            local f, b = F[k .. ':' .. m], B[k .. ':' .. m]
            if k > 0 then test.ok(f > F[(k - 1) .. ':' .. m], what .. ': F after the previous stage\'s F') end
            if k < K - 1 then test.ok(b > B[(k + 1) .. ':' .. m], what .. ': B after the next stage\'s B')
            else test.ok(b > f, what .. ': the last stage\'s B after its F') end
          end
        end
        local counted = tonumber(st.step_label:match('bubble ([%d.]+) counted'))
        test.near(counted, (K - 1) / (M + K - 1), 1e-4, what .. ': the bubble')
        test.ok(st.title:find(sched == '1f1b' and '1F1B' or 'GPipe', 1, true), st.title)
      end
    end
  end
  viz.scene('pipeline', { stages = 4, micro = 6 })
  local c = cells { kind = 'slot', state = 'idle' }
  test.eq(#c, 0, 'nothing drawn idle at step 0 (slots still to come)')
  viz.seek(viz.state().steps - 1)
  local idle = cells { kind = 'slot', state = 'idle' }
  test.eq(#idle, 2 * 3 * 4, 'GPipe: 2 (K - 1) idle slots per stage')
  local p = viz.pick(idle[1].x + idle[1].w / 2, idle[1].y + idle[1].h / 2)
  test.ok(p and p.text:find('idle (the bubble)', 1, true), p and p.text)
  test.ok(check.panel_ink() > 50)
  viz.variant('1F1B')
  test.ok(viz.state().title:find('1F1B', 1, true))
  test.raises(function() viz.scene('pipeline', { stages = 9 }) end, 'stages')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
