--[[
test_pipeline.lua — the pipeline scene, offscreen: for GPipe and 1F1B over stages 1..8 and
micro-batches 1..12, the schedule drawn respects the dependencies (F of m on stage k after F of m
on stage k - 1; B of m on stage k after B of m on stage k + 1, or after its own F on the last
stage), has every F and B once, and its counted bubble equals (K - 1) / (M + K - 1); 1F1B's first
stage holds at most K micro-batches' activations where GPipe's holds all M. A run given as
dist.Pipeline leaves it (pipe.timeline): bars at their times, the measured bubble (idle over K x span)
and the one counted in slots from the order the stages ran, a stretched stage growing only the
first; runs that are not a schedule are named.
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

test.case('pipeline as it ran: a timeline given, its measured and counted bubbles', function()
  -- 2 stages, 2 micro-batches, GPipe; every op 1 ms; stage 2 starts each F when stage 1's ends
  local function e(op, m, t0) return { op = op, micro = m, t0 = t0 * 1e-3, t1 = (t0 + 1) * 1e-3 } end
  local run = {
    timeline = {
      { e('F', 1, 0), e('F', 2, 1), e('B', 2, 4), e('B', 1, 5) },
      { e('F', 1, 1), e('F', 2, 2), e('B', 2, 3), e('B', 1, 4) },
    },
    stats = { schedule = 'gpipe' },
  }
  viz.show('pipeline', run)
  local st = viz.state()
  test.ok(st.title:find('pipeline as it ran: GPipe, 2 ranks, 2 micro-batches, 6.0 ms', 1, true), st.title)
  viz.seek(st.steps - 1)
  st = viz.state()
  -- busy 8 ms of 2 x 6: measured 1/3; in slots the same order gives 6 slots, 4 idle of 12: 1/3 = (K-1)/(M+K-1)
  test.ok(st.step_label:find('bubble 0.3333 measured, 0.3333 counted in slots, formula (K-1)/(M+K-1) = 0.3333', 1, true),
    st.step_label)
  local ops = cells { kind = 'op', group = 'measured' }
  test.eq(#ops, 8, 'a bar per op')
  local b1 = cells { kind = 'op', state = 'backward', row = 0, index = 0 }[1]
  local p = viz.pick(b1.x + b1.w / 2, b1.y + b1.h / 2)
  test.ok(p and p.text:find('stage 1: the backward of micro-batch 1, 5.000 to 6.000 ms (measured)', 1, true), p and p.text)
  test.ok(b1.x > cells { kind = 'op', state = 'backward', row = 1, index = 0 }[1].x, 'B1 of stage 1 after B1 of stage 2')
  test.ok(check.panel_ink() > 50)
  viz.variant('slots')
  viz.seek(viz.state().steps - 1)
  test.eq(#cells { kind = 'slot', state = 'idle' }, 4, 'the slots view: 2 (K - 1) idle slots per stage')
  -- a stretched stage: stage 2's forwards take 3 ms, the measured bubble grows, the counted does not
  run.timeline[2] = { { op = 'F', micro = 1, t0 = 1e-3, t1 = 4e-3 }, { op = 'F', micro = 2, t0 = 4e-3, t1 = 7e-3 },
    e('B', 2, 7), e('B', 1, 8) }
  run.timeline[1][3], run.timeline[1][4] = e('B', 2, 8), e('B', 1, 9)
  viz.show('pipeline', run)
  viz.seek(viz.state().steps - 1)
  -- busy 4 + 8 = 12 of 2 x 10
  test.ok(viz.state().step_label:find('bubble 0.4000 measured, 0.3333 counted', 1, true), viz.state().step_label)
  -- bad runs are named
  run.timeline[1][3] = e('B', 1, 8)
  test.raises(function() viz.show('pipeline', run) end, "stage 1's op 4 (B1) is not its micro-batch's only backward")
  run.timeline[1] = { e('B', 1, 0), e('F', 1, 1), e('F', 2, 2), e('B', 2, 3) }
  test.raises(function() viz.show('pipeline', run) end, "stage 1's op 1 (B1) is not its micro-batch's only backward after its forward")
  test.raises(function() viz.show('pipeline', { timeline = {} }) end, 'the pipeline has no timeline yet')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
