--[[
test_bang_scenes.lua — the scenes of kernels.bang (issue 37), offscreen: queues (the AICS slide's
three kernels in one queue: Kernel1 UNION2 and Kernel2 UNION1 start together, Kernel3 UNION4 when all
four clusters are free; the bars' places, the idle cores hatched, the panel's start/stop against the
info), mlu (cores running and idle at each moment, their task, NRAM and cluster SRAM against the
timeline), pingpong (relu + sigmoid single- and double-buffered: totals, DMA and compute busy and
their overlap against unions of the info's spans, the cycles saved); each scene's demonstration
equals what kernels.bang gives for the same kernels; stepping changes the frame; bad input is named.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, cells, inside, snap = check.C, check.cells, check.inside, check.snap

local bang = kernels.bang

-- The slide's kernels, as queues.c's demonstration runs them.
local function work(k, c)
  local a = k:nram('float32', 1024 * c, 'a')
  k:wram('float32', 512 * c, 'w')
  k:sram('float32', 2048 * c, 'tile')
  k:__bang_add(a, a, a, 64 * c)
end

local function slide()
  local dev = bang.device { clusters = 4 }
  local q = dev:queue()
  dev:launch(work, { name = 'Kernel1', dim = 8, type = 'UNION2', queue = q, args = { 100 } })
  dev:launch(work, { name = 'Kernel2', dim = 4, type = 'UNION1', queue = q, args = { 60 } })
  dev:launch(work, { name = 'Kernel3', dim = 16, type = 'UNION4', queue = q, args = { 50 } })
  return q:sync()
end

-- relu + sigmoid of 2^16 floats by 4 tasks on one cluster, chunks of 4096 (pingpong's demonstration)
local CHUNK = 4096
local function single(k, x, z, n)
  local per = n // k.taskDim
  local a = k:nram('float32', CHUNK, 'a')
  for off = 0, per - 1, CHUNK do
    k:__memcpy(a, x + k.taskId * per + off, CHUNK * 4, 'GDRAM2NRAM')
    k:__bang_active_relu(a, a, CHUNK)
    k:__bang_active_sigmoid(a, a, CHUNK)
    k:__memcpy(z + k.taskId * per + off, a, CHUNK * 4, 'NRAM2GDRAM')
  end
end
local function pingpong(k, x, z, n)
  local per = n // k.taskDim
  local buf = { k:nram('float32', CHUNK, 'ping'), k:nram('float32', CHUNK, 'pong') }
  local steps, base = per // CHUNK, k.taskId * per
  k:__memcpy_async(buf[1], x + base, CHUNK * 4, 'GDRAM2NRAM')
  for s = 0, steps - 1 do
    k:__sync_io()
    local cur = buf[s % 2 + 1]
    if s + 1 < steps then k:__memcpy_async(buf[(s + 1) % 2 + 1], x + base + (s + 1) * CHUNK, CHUNK * 4, 'GDRAM2NRAM') end
    k:__bang_active_relu(cur, cur, CHUNK)
    k:__bang_active_sigmoid(cur, cur, CHUNK)
    k:__memcpy_async(z + base + s * CHUNK, cur, CHUNK * 4, 'NRAM2GDRAM')
  end
  k:__sync_io()
end

-- both runs on one device (their infos share its timeline: each is its last kernel); record: keep the spans
local function runs(record)
  local dev = bang.device { clusters = 1 }
  if record ~= false then dev:record(true) end
  local n = 1 << 16
  local x, z = dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, lm.randn(n), 'HOST2DEV')
  local out = {}
  for i, f in ipairs { single, pingpong } do
    local q = dev:queue()
    dev:launch(f, { dim = 4, type = 'UNION1', queue = q, args = { x, z, n } })
    out[i] = q:sync()
  end
  return { single = out[1], double = out[2] }
end

local panel_row = check.panel_row

local function idle_pixel(c)
  local px = inside(c)
  return (px[1] == C.idle[1] and px[2] == C.idle[2] and px[3] == C.idle[3]) or
      (px[1] == C.hatch[1] and px[2] == C.hatch[2] and px[3] == C.hatch[3])
end

-- What the cells of a kind show: their state, index and kernel, and where they lie in time (x, w: the
-- panel's height, which differs with its source text, changes only the heights)
local function geometry(kind)
  local out = {}
  for _, c in ipairs(cells { kind = kind }) do
    out[#out + 1] = string.format('%s %s %d %d %.1f %.1f', c.state, c.group, c.index or -1, c.col or -1, c.x, c.w)
  end
  return out
end

test.case('queues: the slide: Kernel1 and Kernel2 start together, Kernel3 after both', function()
  local info = slide()
  viz.show('queues', info)
  local st = viz.state()
  test.eq(st.scene, 'queues')
  test.eq(st.steps, 4, 'a step per unit, then the end')
  test.ok(st.title:find('emulated, modelled cycles (kernels.bang)', 1, true), st.title)
  viz.seek(2)
  local u = {}
  for _, c in ipairs(cells { kind = 'unit' }) do u[c.col + 1] = c end
  test.eq(#cells { kind = 'unit' }, 3)
  local row = {}
  for _, c in ipairs(cells { kind = 'cluster' }) do row[c.index] = c end
  -- Kernel1 on clusters 0-1, Kernel2 on cluster 2, Kernel3 on 0-3; K1 and K2 at x = 0, K3 where K1 ends
  test.near(u[1].y, row[0].y, 1.5)
  test.near(u[1].y + u[1].h, row[1].y + row[1].h, 3)
  test.near(u[2].y, row[2].y, 1.5)
  test.near(u[3].y, row[0].y, 1.5)
  test.near(u[3].y + u[3].h, row[3].y + row[3].h, 3)
  test.near(u[1].x, u[2].x, 0.5, 'K1 and K2 start together')
  test.near(u[3].x, u[1].x + u[1].w, 1.5, 'K3 starts when K1 ends')
  test.ok(u[2].x + u[2].w < u[3].x, 'K2 ends before K3 starts')
  test.near(u[1].w / u[3].w, 108 / 58, 0.02, 'bars as long as their cycles')
  for i = 1, 3 do test.eq(inside(u[i]), u[i].color, 'a bar has its kernel colour') end
  test.ok(u[1].color[1] ~= u[2].color[1] or u[1].color[3] ~= u[2].color[3], 'kernels differ in colour')
  -- before cycle 108: cluster 3 idle from 0, cluster 2 from 68 (hatched)
  local idle = cells { kind = 'idle' }
  test.eq(#idle, 8, 'the 4 cores of cluster 2 and of cluster 3')
  for _, c in ipairs(idle) do
    test.ok(c.index >= 8, 'an idle core of cluster 2 or 3')
    test.ok(idle_pixel(c), 'an idle cell is hatched')
    test.near(c.value, c.index >= 12 and 108 or 40, 1e-9)
  end
  test.ok(viz.state().step_label:find('Kernel3 UNION4 unit 1 of 1 starts at cycle 108 on clusters 0-3, ends at 166; idle clusters then: none',
    1, true), viz.state().step_label)
  viz.seek(3)
  test.ok(viz.state().step_label:find('the end, cycle 166: every unit placed; the 16 cores were busy 78% of the 166 cycles', 1, true),
    viz.state().step_label)
  test.eq(#cells { kind = 'idle' }, 8, 'nothing idle after 108: Kernel3 runs on all four clusters to the end')
  test.eq(#cells { kind = 'unit', state = 'placed now' }, 0)
  viz.seek(1)
  test.ok(viz.state().step_label:find('Kernel2 UNION1 unit 1 of 1 starts at cycle 0 on cluster 2, ends at 68; idle clusters then: 3',
    1, true), viz.state().step_label)
  test.eq(#cells { kind = 'unit' }, 2, 'Kernel3 not placed yet')
  local k3 = cells { kind = 'kernel', index = 2 }[1]
  test.eq(k3.state, 'waiting', 'Kernel3 issued, waiting in its queue')
  -- the panel: a column per kernel, its numbers the info's
  local starts, stops, cycles = panel_row('start'), panel_row('stop'), panel_row('cycles')
  for i, k in ipairs(info.kernels) do
    test.eq(starts[i], k.start, k.name .. ' start')
    test.eq(stops[i], k.stop, k.name .. ' stop')
    test.eq(cycles[i], k.cycles, k.name .. ' cycles')
  end
  test.eq(panel_row('waited'), { 0, 0, 108 })
  test.ok(check.panel_ink() > 50)
  local p = viz.pick(u[1].x + 4, u[1].y + u[1].h - 4)
  test.ok(p and p.text:find('Kernel1 (UNION2), unit 1 of 1, queue 1', 1, true) and p.text:find('clusters 0-1, cores 0-7', 1, true),
    p and p.text)
  -- steps change the frame; the same state renders the same bytes
  viz.seek(0)
  local a = snap('queues-a')
  viz.step()
  test.ok(snap('queues-b') ~= a, 'a step changes the frame')
  viz.seek(0)
  test.ok(snap('queues-c') == a, 'the same step renders byte-identical')
  -- the demonstration is the same run
  viz.seek(2)
  local given = { geometry('unit'), geometry('idle'), geometry('kernel'), panel_row('start'), panel_row('stop') }
  viz.scene('queues')
  viz.seek(2)
  test.eq({ geometry('unit'), geometry('idle'), geometry('kernel'), panel_row('start'), panel_row('stop') }, given,
    'the demonstration: the same kernels on kernels.bang')
  test.ok(viz.state().title:find('demonstration', 1, true), viz.state().title)
  for _, name in ipairs { 'queues', 'mlu', 'pingpong' } do -- viz.show without data: the demonstration
    viz.show(name)
    test.eq(viz.state().scene, name)
    test.ok(viz.state().title:find('a demonstration', 1, true), viz.state().title)
  end
  -- viz.show of a bang info without a scene: its queues; {scene = 'mlu'}: the device
  viz.show(info)
  test.eq(viz.state().scene, 'queues')
  viz.show(info, { scene = 'mlu' })
  test.eq(viz.state().scene, 'mlu')
end)

test.case('queues: BLOCK units on cores, two queues, a second launch of one kernel', function()
  local dev = bang.device { cards = 2, chips = 1, clusters = 2 }
  local q1, q2 = dev:queue(), dev:queue()
  local function w(k, c) local a = k:nram('float32', 64 * c); k:__bang_add(a, a, a, 64 * c) end
  dev:launch(w, { name = 'blk', dim = 20, type = 'BLOCK', queue = q1, args = { 50 } })
  dev:launch(w, { name = 'uni', dim = 8, type = 'UNION2', queue = q2, args = { 30 } })
  dev:launch(w, { name = 'blk', dim = 4, type = 'BLOCK', queue = q1, args = { 20 } })
  dev:sync()
  local info = dev:info()
  viz.show('queues', info)
  local st = viz.state()
  test.eq(st.steps, #info.timeline + 1)
  viz.seek(st.steps - 1)
  local units, seen, n = cells { kind = 'unit' }, {}, 0
  for _, c in ipairs(units) do if not seen[c.index] then seen[c.index], n = true, n + 1 end end
  test.eq(n, 20 + 1 + 4, 'every unit drawn: 20 and 4 BLOCK units, one UNION2 unit')
  local lanes = {}
  for _, c in ipairs(cells { kind = 'core' }) do lanes[c.index] = c end
  for _, c in ipairs(units) do
    if c.col ~= 1 then test.ok(c.h < lanes[0].h * 1.5, 'a BLOCK unit takes one core\'s lane') end
  end
  test.eq(panel_row('units'), { 20, 1, 4 })
  test.eq(panel_row('queue'), { 1, 2, 1 })
  local k = {}
  for _, c in ipairs(cells { kind = 'kernel' }) do k[c.index + 1] = c end
  test.ok(k[3].y > k[1].y and k[2].y > k[3].y, 'queue 1\'s kernels, then queue 2\'s')
end)

test.case('mlu: cores running and idle at each moment, their tasks and memories', function()
  local info = slide()
  viz.show('mlu', info)
  local st = viz.state()
  test.eq(st.steps, 4, 'the moments 0, 68, 108, 166')
  test.ok(#viz.layout() > 10)
  local run, idle = cells { kind = 'core', state = 'running' }, cells { kind = 'core', state = 'idle' }
  test.eq({ #run, #idle }, { 12, 4 }, 'cycle 0: Kernel1 on 8 cores, Kernel2 on 4, cluster 3 idle')
  for _, c in ipairs(run) do
    test.eq(c.col, c.index < 8 and 0 or 1)
    test.eq(inside(c), c.color, 'a running core has its fill')
  end
  for _, c in ipairs(idle) do
    test.ok(c.index >= 12)
    test.ok(idle_pixel(c), 'an idle core is hatched')
  end
  local core5 = cells { kind = 'core', index = 5 }[1]
  test.eq(core5.value, 4096 * 100, 'NRAM in use: the unit\'s peak on core 5')
  local p = viz.pick(core5.x + core5.w / 2, core5.y + core5.h - 3)
  test.ok(p and p.text:find('Kernel1 UNION2, unit 1, task 5, cycles 0 to 108', 1, true) and
    p.text:find('NRAM 409600 of 524288 bytes (78.1%)', 1, true), p and p.text)
  local cl = {}
  for _, c in ipairs(cells { kind = 'cluster' }) do cl[c.index] = c.value end
  test.eq({ cl[0], cl[1], cl[2], cl[3] }, { 819200, 819200, 491520, 0 }, 'SRAM: 8192 c bytes on each cluster of a unit')
  -- the info's own numbers
  local e = info.timeline[1]
  test.eq(e.usage[5].NRAM, core5.value)
  test.eq(e.sram[0], cl[0])
  viz.seek(1)
  test.eq(#cells { kind = 'core', state = 'running' }, 8, 'cycle 68: Kernel2 ended')
  viz.seek(2)
  test.ok(viz.state().step_label:find('cycle 108 (moment 3 of 4): 1 unit of Kernel1 ends; Kernel3 UNION4 starts on clusters 0-3; 16 of 16 cores busy', 1, true),
    viz.state().step_label)
  for _, c in ipairs(cells { kind = 'core' }) do test.eq(c.col, 2) end
  viz.seek(3)
  test.eq(#cells { kind = 'core', state = 'idle' }, 16, 'cycle 166: every unit ended')
  test.eq(panel_row('peak_nram_bytes'), { 409600 })
  test.eq(panel_row('peak_sram_bytes'), { 819200 })
  test.eq(panel_row('cycles'), { 166 })
  test.eq(panel_row('cores'), { 16 })
  test.ok(check.panel_ink() > 50)
  viz.seek(0)
  local a = snap('mlu-a')
  viz.step()
  test.ok(snap('mlu-b') ~= a, 'a step changes the frame')
  local given = { geometry('core'), geometry('cluster') }
  viz.scene('mlu')
  viz.seek(1)
  test.eq({ geometry('core'), geometry('cluster') }, given, 'the demonstration: the same kernels on kernels.bang')
  -- a device of 2 cards x 2 chips x 2 clusters: nested boxes
  local dev = bang.device { cards = 2, chips = 2, clusters = 2 }
  local q = dev:queue()
  dev:launch(work, { name = 'K', dim = 8, type = 'UNION2', queue = q, args = { 10 } })
  viz.show('mlu', q:sync())
  test.eq(#cells { kind = 'card' }, 2)
  test.eq(#cells { kind = 'chip' }, 4)
  test.eq(#cells { kind = 'cluster' }, 8)
  test.eq(#cells { kind = 'core', state = 'running' }, 8)
end)

-- The union of an info's spans of one kind on core 0 of its last kernel, and their intersection.
local function busy(info)
  local k = info.kernels[#info.kernels]
  local iv = { dma = {}, compute = {} }
  for _, e in ipairs(info.timeline) do
    if e.kernel == k.name then
      for _, s in ipairs(e.spans) do if s.core == 0 then table.insert(iv[s.kind], { s.t0, s.t1 }) end end
    end
  end
  local function union(l)
    table.sort(l, function(a, b) return a[1] < b[1] end)
    local out = {}
    for _, x in ipairs(l) do
      if #out > 0 and x[1] <= out[#out][2] then out[#out][2] = math.max(out[#out][2], x[2]) else out[#out + 1] = { x[1], x[2] } end
    end
    return out
  end
  local d, c = union(iv.dma), union(iv.compute)
  local function total(l) local t = 0 for _, x in ipairs(l) do t = t + x[2] - x[1] end return t end
  local ov = 0
  for _, a in ipairs(d) do
    for _, b in ipairs(c) do ov = ov + math.max(0, math.min(a[2], b[2]) - math.max(a[1], b[1])) end
  end
  return k.stop - k.start, total(d), total(c), ov
end

test.case('pingpong: totals, DMA and compute busy, the overlap and the cycles saved', function()
  local r = runs()
  viz.show('pingpong', r)
  local st = viz.state()
  test.eq(st.scene, 'pingpong')
  local t1, d1, c1, o1 = busy(r.single)
  local t2, d2, c2, o2 = busy(r.double)
  test.eq({ t1, t2 }, { 6272, 5840 })
  test.eq(panel_row('total_cycles'), { t1, t2 })
  test.eq(panel_row('dma_busy'), { d1, d2 })
  test.eq(panel_row('compute_busy'), { c1, c2 })
  test.eq(panel_row('overlap'), { o1, o2 })
  test.eq(o1, 0, 'single-buffered: nothing overlaps')
  test.ok(o2 > 0, 'ping-pong: copies run under compute')
  test.eq(panel_row('cycles_saved'), { t1 - t2 })
  test.ok(st.title:find('saved 432 cycles', 1, true), st.title)
  viz.seek(st.steps - 1)
  local spans = cells { kind = 'span' }
  test.eq(#spans, 32, '16 spans a run on core 0')
  local dma, comp = cells { kind = 'span', state = 'dma' }[1], cells { kind = 'span', state = 'compute' }[1]
  test.eq(inside(dma), C.path_a, 'a DMA span is blue')
  test.eq(dma.color, C.path_a)
  test.eq(comp.color, C.active)
  local idle = cells { kind = 'idle', group = 'single', state = 'compute' }
  test.ok(#idle >= 4 and idle_pixel(idle[1]), 'the single-buffered compute lane waits for its copies')
  local ov = cells { kind = 'overlap', group = 'double' }
  local sum = 0
  for _, c in ipairs(ov) do sum = sum + c.value end
  test.eq(sum, o2, 'the overlap strip: where both are busy')
  test.eq(#cells { kind = 'overlap', group = 'single' }, 0)
  local saved = cells { kind = 'saved' }[1]
  test.eq(saved.value, t1 - t2)
  local p = viz.pick(dma.x + dma.w / 2, dma.y + dma.h / 2)
  test.ok(p and p.text:find('single-buffered, core 0, task 0: GDRAM2NRAM (DMA copy) from 0 to 712', 1, true), p and p.text)
  -- the spans appear in the order they start
  viz.seek(0)
  test.eq(#cells { kind = 'span' }, 2, 'step 0: both runs\' first copies')
  local a = snap('pp-a')
  viz.step()
  test.ok(#cells { kind = 'span' } > 2)
  test.ok(snap('pp-b') ~= a, 'a step changes the frame')
  test.ok(viz.state().step_label:find('cycle 712: single-buffered: relu (compute) to 784', 1, true), viz.state().step_label)
  -- another core: the same here (every task does the same)
  viz.show('pingpong', r, { core = 3 })
  test.eq(panel_row('total_cycles'), { t1, t2 })
  test.ok(viz.state().title:find('core 3', 1, true))
  -- the demonstration is the same run
  viz.scene('pingpong')
  test.eq({ panel_row('total_cycles'), panel_row('dma_busy'), panel_row('compute_busy'), panel_row('overlap') },
    { { t1, t2 }, { d1, d2 }, { c1, c2 }, { o1, o2 } }, 'the demonstration: the same kernels on kernels.bang')
  test.eq(viz.state().steps, st.steps)
end)

test.case('bad input is named', function()
  test.raises(function() viz.show('queues', {}) end, 'the queues scene: the info must be a kernels.bang info')
  test.raises(function() viz.show('mlu', lm.zeros(3)) end, 'must be a kernels.bang info (q:sync() or dev:info()), got a tensor')
  test.raises(function() viz.show('queues', bang.device():info()) end, 'has an empty timeline: nothing ran yet')
  test.raises(function() viz.show('pingpong', slide()) end, 'the pingpong scene takes {single = info, double = info}')
  test.raises(function() viz.show('pingpong', runs(false)) end,
    'the single-buffered (single) run has no DMA or compute spans: call dev:record(true) before its launch')
  test.raises(function() viz.show('pingpong', runs(), { core = 9 }) end, 'has no spans on core 9 (option core; it ran on cores 0-3)')
  test.raises(function() viz.show('pingpong', nil, { core = 4000 }) end, 'option core of scene \'pingpong\' must lie in')
  test.raises(function() viz.show('queues', slide(), { color = 1 }) end, "unknown option 'color' for scene 'queues'")
  test.raises(function() viz.show(slide(), { scene = 'scan' }) end, "drawn by the scenes queues, mlu and pingpong, not 'scan'")
  local info = slide()
  info.timeline[1].stop = -1
  test.raises(function() viz.show('queues', info) end, 'unit 1 (Kernel1) runs from 0 to -1: not start <= stop')
  info = slide()
  info.timeline[3].start = 50 -- Kernel3 on cores Kernel1 still runs on
  test.raises(function() viz.show('mlu', info) end, "while an earlier unit runs until 108: not one device's timeline")
  info = slide()
  info.timeline[2].cores[1] = 99
  test.raises(function() viz.show('queues', info) end, 'lists core 99, which is not on its clusters')
  info = slide()
  info.timeline[1].usage[0].NRAM = 1e9
  test.raises(function() viz.show('mlu', info) end, 'core 0 uses 1e+09 bytes of NRAM and 204800 of WRAM; a core has 524288')
  local r = runs()
  r.single.timeline[1].spans[1].kind = 'io'
  test.raises(function() viz.show('pingpong', r) end, "the pingpong scene: single: a span of timeline entry 1 has kind io, not 'dma' or 'compute'")
  info = slide()
  info.capacity = nil
  test.raises(function() viz.show('queues', info) end, 'lacks the device')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
