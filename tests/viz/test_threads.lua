--[[
test_threads.lua — the threads scene (src/viz/scenes/threads.c), offscreen: a student's kernel
(kernels.launch) thread by thread, phase by phase; its cells' states and colours, values recovered
from the trace, the hover history, blocks as variants, a shipped kernel drawn by name, a big block
drawn as images, an empty kernel, bad input.
]]
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, inside, cells, snap = check.C, check.inside, check.cells, check.snap

-- GPU-Puzzles' pooling: out[i] = a[i] + a[i-1] + a[i-2], through shared memory; size < block
local function pool(t, out, a, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  if i < size then cache[i] = a[i] end
  t:sync()
  if i < size then
    local acc = cache[i]
    if i >= 1 then acc = acc + cache[i - 1] end
    if i >= 2 then acc = acc + cache[i - 2] end
    out[i] = acc
  end
end

local function pool_info()
  local a = lm.tensor({ 0, 1, 2, 3, 4, 5 }):float()
  return kernels.launch(pool, { block = 8, args = { lm.zeros(6), a, 6 }, shared = { cache = 8 } })
end

test.case('threads: a launch phase by phase, reads and writes, idle lanes', function()
  local info = pool_info()
  viz.show(info)
  local st = viz.state()
  test.eq(st.scene, 'threads')
  test.eq(st.steps, 3) -- before, and the two barrier phases
  test.ok(st.title:find('8 threads, 2 barrier phases', 1, true), st.title)
  -- phase 0: threads 0..5 load a[i] and store cache[i]; 6 and 7 are idle
  viz.seek(1)
  test.eq(#cells { kind = 'thread', state = 'active' }, 6)
  local idle = cells { kind = 'thread', state = 'idle' }
  test.eq(#idle, 2)
  test.eq(idle[1].thread, 6)
  test.eq(#cells { kind = 'element', group = 'a', state = 'read' }, 6)
  local written = cells { kind = 'element', group = 'cache', state = 'written' }
  test.eq(#written, 6)
  test.eq(inside(written[1]), C.active)
  test.ok(viz.state().step_label:find('ends at the barrier on line', 1, true), viz.state().step_label)
  -- top to bottom: the input it only reads, the threads, its shared array, the output it writes
  -- (each arrow then reaches its array without crossing another)
  local y = {}
  for _, g in ipairs { 'a', 'cache', 'out' } do y[g] = cells { kind = 'element', group = g }[1].y end
  local ty = cells { kind = 'thread', thread = 0 }[1].y
  test.ok(y.a < ty and ty < y.cache and y.cache < y.out, string.format('a %g, threads %g, cache %g, out %g',
    y.a, ty, y.cache, y.out))
  -- phase 1: the sums, known from the stores
  viz.seek(2)
  local out = {}
  for _, c in ipairs(cells { kind = 'element', group = 'out' }) do out[c.index + 1] = c.value end
  test.eq(out, { 0, 1, 3, 6, 9, 12 })
  test.eq(#cells { kind = 'element', group = 'cache', state = 'read' }, 6)
  -- before the block: the input known from its loads, the output not yet
  viz.seek(0)
  local a0 = cells { kind = 'element', group = 'a', index = 4 }
  test.eq(a0[1].value, 4)
  test.eq(cells { kind = 'element', group = 'out', index = 0 }[1].value, nil)
  test.eq(#cells { kind = 'thread', state = 'pending' }, 8)
  -- a thread's whole history
  local t2 = cells { kind = 'thread', thread = 2 }[1]
  local p = viz.pick(t2.x + 2, t2.y + 2)
  test.ok(p.text:find('thread (2,0,0) of block (0,0,0): warp 0, lane 2', 1, true), p.text)
  test.ok(p.text:find('phase 0: ld a[2]=2 st cache[2]=2', 1, true), p.text)
  test.ok(p.text:find('phase 1: ld cache[2]=2 ld cache[1]=1 ld cache[0]=0 st out[2]=3', 1, true), p.text)
  viz.seek(2)
  local e = cells { kind = 'element', group = 'cache', index = 1 }[1]
  p = viz.pick(e.x + 2, e.y + 2)
  test.ok(p.text:find('cache[1] (shared float32, 0-based) = 1 after this phase', 1, true), p.text)
  test.ok(p.text:find('read by thread 1') and p.text:find('read by thread 2') and p.text:find('read by thread 3'), p.text)
  -- GPU-Puzzles' score in the panel, and the same state renders the same bytes
  test.ok(check.panel_ink() > 50)
  local before = snap('threads_a')
  test.eq(snap('threads_b'), before)
  viz.seek(1)
  test.ok(snap('threads_c') ~= before, 'a step changes the frame')
end)

test.case('threads: blocks as variants; global values carried from block to block', function()
  local n = 12
  local a = lm.arange(1, n + 1):float()
  local info = kernels.launch(function(t, a, n)
    local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
    if i < n then a[i] = a[i] * 10 end
  end, { grid = 3, block = 4, args = { a, n } })
  viz.show(info, { block = 1 })
  local st = viz.state()
  test.eq(st.variant, 'block 1')
  test.ok(st.title:find('block (1,0,0) of 3', 1, true), st.title)
  viz.seek(0) -- block 0 has run: its elements hold their new values
  local v = {}
  for _, c in ipairs(cells { kind = 'element', group = 'a' }) do v[c.index + 1] = c.value end
  test.eq(v[1], 10)
  test.eq(v[5], 5)
  viz.seek(1)
  test.eq(#cells { kind = 'element', group = 'a', state = 'read and written' }, 4)
  viz.variant('block 2')
  test.eq(viz.state().variant, 'block 2')
end)

test.case('threads: any traced result by name; the patterns keep their own scenes', function()
  local _, info = kernels.scan(lm.arange(1, 17):float(), { backend = 'emu' })
  viz.show(info)
  test.eq(viz.state().scene, 'scan')
  viz.show(info, { scene = 'threads' })
  test.eq(viz.state().scene, 'threads')
  test.eq(viz.state().steps, 10) -- Kogge-Stone on 16: 9 barrier phases
  viz.seek(2) -- phase 1: every thread decides (BRANCH), 15 add
  test.eq(#cells { kind = 'thread', state = 'active' }, 16)
  viz.seek(3) -- phase 2: thread 0 stores nothing
  test.eq(#cells { kind = 'thread', state = 'idle' }, 1)
  viz.show(info.trace, { scene = 'threads' })
  test.eq(viz.state().scene, 'threads')
end)

test.case('threads: a 1,024-thread block drawn as images, still picked thread by thread', function()
  local _, info = kernels.scan(lm.ones(1024), { backend = 'emu', block = 1024 })
  viz.show(info, { scene = 'threads', step = 3 })
  local grids = cells { kind = 'thread' }
  test.eq(#grids, 1)
  local g = grids[1]
  test.ok(g.w > 20 * g.h / 8, 'a grid of threads, 128 a row')
  local p = viz.pick(g.x + 1, g.y + 1)
  test.eq(p.thread, 0)
  test.ok(p.text:find('thread (0,0,0) of block (0,0,0)', 1, true), p.text)
  test.ok(viz.redraw() >= 0)
end)

test.case('threads: a kernel that touches nothing, and bad input', function()
  local info = kernels.launch(function(t, a) end, { block = 4, args = { lm.zeros(3) } })
  viz.show(info)
  viz.seek(1)
  test.eq(#cells { kind = 'thread', state = 'idle' }, 4)
  test.eq(#cells { kind = 'element', group = 'a' }, 3)
  test.raises(function() viz.scene('threads') end, 'the threads scene draws a traced launch')
  local _, cpu = kernels.scan(lm.ones(8), { backend = 'cpu' })
  test.raises(function() viz.show(cpu, { scene = 'threads' }) end, 'the threads scene needs a trace')
  test.raises(function() viz.show(pool_info(), { launch = 3 }) end, 'option launch 3: the trace has 1 launches')
  test.raises(function() viz.show(pool_info(), { block = -1 }) end, 'option block')
end)

test.case('threads: matrices drawn as grids, arrays side by side, the picture fits the window', function()
  local info = kernels.puzzles.run(14, kernels.puzzles.reference(14)) -- 8 x 8 tiled matmul
  viz.show(info)
  viz.seek(2)
  local function at(g, i) return cells { kind = 'element', group = g, index = i }[1] end
  test.eq(at('a', 8).x, at('a', 0).x, 'a[8] starts the second row of a')
  test.ok(at('a', 8).y > at('a', 0).y)
  test.eq(at('a', 7).y, at('a', 0).y)
  test.eq(at('b', 0).y, at('a', 0).y, 'b beside a')
  test.ok(at('b', 0).x > at('a', 7).x)
  test.eq(at('a_s', 3).x, at('a_s', 0).x, 'a_s is 3 x 3')
  local ty = cells { kind = 'thread', thread = 0 }[1].y
  test.ok(at('a', 63).y < ty and ty < at('a_s', 0).y and at('a_s', 8).y < at('out', 0).y)
  -- it fits the scene's area at full size: the cells are big enough for their numbers
  local area, last = viz.state().area, at('out', 63)
  test.ok(last.y + last.h <= area.y + area.h, string.format('out ends at %g, the area at %g', last.y + last.h,
    area.y + area.h))
  test.ok(last.w >= 12, 'cells of ' .. last.w .. ' pixels')
end)
