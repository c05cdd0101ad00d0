--[[
test_dlp_scenes.lua — the scenes of lumen.dlp (AICS chapters 6-7), offscreen: systolic (every PE's
state at every cycle against a:pe_state for OS, WS and IS — MAC or not, the operands in its hover —
the MACs per cycle summing to M N K, the panel against a:run, the unused PEs of a partial fold, the
weights shifting in, the operands at the edges, one fold by option, an array too large), dma (the
lanes against the report's events: one bar per fold, transfer and stall, the stall cycles by operand
summing to stall_cycles, the panel against the reports, two runs on one axis, the reveal order),
energy (the panel against r:energy() for OS, WS and IS, the levels revealed one by one, the verdict
computed from the numbers: data movement dominates with dlp.energy_table, compute dominates with a
table where the MAC is dear); each demonstration equals lumen.dlp's run of the same layer; stepping
changes the frame, the same state renders the same bytes; bad input is named with viz.show.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, cells, inside, snap = check.C, check.cells, check.inside, check.snap
local dlp = require 'lumen.dlp'

local SOURCE = 'emulated: lumen.dlp (SCALE-Sim v2 counting)'

local panel_row = check.panel_row -- the numbers of a row of the counters panel

local function hover(c) return viz.pick(c.x + c.w / 2, c.y + c.h - 3) end

-- ---------------------------------------------------------------- systolic

-- Every step of the scene against a:pe_state: the PEs that MAC, their operands, the MACs per cycle.
local function check_systolic(a, l, label)
  local r = a:run(l)
  viz.show('systolic', a, l)
  local st = viz.state()
  local F, T = r.row_folds * r.col_folds, a:fold_cycles(l)
  test.eq(st.steps, F * T + 1, label .. ': a step per compute cycle, and the one before')
  test.ok(st.title:find(SOURCE, 1, true), st.title)
  test.eq(panel_row('macs'), { r.macs }, label)
  test.eq(panel_row('total_cycles'), { r.total_cycles }, label)
  test.eq(panel_row('fold_cycles'), { T }, label)
  test.near(panel_row('compute_util')[1], r.compute_util, 1e-3, label)
  test.near(panel_row('mapping_efficiency')[1], r.mapping_efficiency, 1e-3, label)
  local total, hovered = 0, 0
  for step = 1, st.steps - 1 do
    viz.seek(step)
    local g = step - 1
    local f = g // T -- SCALE-Sim's order: column folds outside
    local fr, fc, t = f % r.row_folds + 1, f // r.row_folds + 1, g % T
    local want = a:pe_state(l, fr, fc, t)
    local pes = cells { kind = 'pe' }
    test.eq(#pes, a.rows * a.cols)
    local n = 0
    for _, c in ipairs(pes) do
      local e = want[c.row + 1][c.col + 1]
      test.eq(c.state == 'mac', e.mac, string.format('%s: PE(%d,%d) at fold %d, cycle %d', label, c.row + 1, c.col + 1, f + 1, t))
      if e.mac then
        n = n + 1
        if hovered < 40 then -- the operands, as a:pe_state gives them
          hovered = hovered + 1
          local p = hover(c)
          local s = string.format('PE(%d,%d): a[p=%d,k=%d] x w[k=%d,n=%d]', c.row + 1, c.col + 1, e.p, e.k, e.k, e.n)
          test.ok(p and p.text:find(s, 1, true), (p and p.text or 'nothing') .. ' should say ' .. s)
        end
      end
    end
    total = total + n
    if t >= (a.dataflow == 'os' and 0 or a.rows) then
      test.ok(viz.state().step_label:find(string.format('%d of %d PEs MAC', n, a.rows * a.cols), 1, true), viz.state().step_label)
    end
  end
  test.eq(total, r.macs, label .. ': every MAC of M N K, once')
  test.ok(viz.state().step_label:find(string.format('%d of %d MACs done', r.macs, r.macs), 1, true), viz.state().step_label)
  return r
end

test.case('systolic: every PE at every cycle is what a:pe_state says, for OS, WS and IS', function()
  local l = dlp.gemm { m = 6, n = 5, k = 4 }
  for _, df in ipairs { 'os', 'ws', 'is' } do
    check_systolic(dlp.array { rows = 4, cols = 4, dataflow = df }, l, df .. ' gemm')
  end
  check_systolic(dlp.array { rows = 3, cols = 5, dataflow = 'ws' }, dlp.conv { h = 5, w = 5, fh = 2, fw = 2, c = 2, k = 4 }, 'ws conv')
  check_systolic(dlp.array { rows = 4, cols = 2, dataflow = 'is' }, dlp.conv { h = 4, w = 5, fh = 3, fw = 2, c = 1, k = 3, stride = 2 },
    'is conv, stride 2')
end)

test.case('systolic: the picture: MACs lit, partial folds hatched, weights shifting in, the edges', function()
  local a, l = dlp.array { rows = 4, cols = 4 }, dlp.gemm { m = 6, n = 5, k = 4 }
  viz.show('systolic', a, l)
  viz.seek(4) -- cycle 3 of fold 1: the anti-diagonals r + c = 0..3 MAC
  local macs = cells { kind = 'pe', state = 'mac' }
  test.eq(#macs, 10)
  for _, c in ipairs(macs) do
    test.ok(c.row + c.col <= 3, 'the wavefront has reached r + c = 3')
    if c.row + c.col < 3 then test.eq(inside(c), C.active, 'a MAC is orange (behind the wavefront\'s dashed line)') end
  end
  test.eq(cells { kind = 'pe', row = 0, col = 0 }[1].value, 4, 'PE(1,1) has its 4 MACs')
  local left = cells { kind = 'operand', group = 'left' }
  test.eq(#left, 4, 'a[p, k] enters each row')
  local p = hover(cells { kind = 'operand', group = 'left', row = 3 }[1])
  test.ok(p and p.text:find('cycle 3: a[4,1] enters row 4 from the left', 1, true), p and p.text)
  p = hover(cells { kind = 'operand', group = 'top', col = 1 }[1])
  test.ok(p and p.text:find('cycle 3: w[3,2] enters column 2 from the top', 1, true), p and p.text)
  -- the last fold maps rows 5-6 and column 5: 2 x 1 of 16 PEs
  viz.seek(31)
  test.eq(#cells { kind = 'pe', state = 'unused' }, 14)
  test.ok(viz.state().step_label:find('fold 4 of 4, cycle 0 of 10', 1, true), viz.state().step_label)
  local folds = cells { kind = 'fold' }
  test.eq(#folds, 4)
  local u = cells { kind = 'pe', state = 'unused' }[1]
  local px = inside(u)
  test.ok((px[1] == C.idle[1] and px[2] == C.idle[2]) or (px[1] == C.hatch[1] and px[2] == C.hatch[2]), 'an unused PE is hatched')
  test.ok(hover(u).text:find('unused in fold 4', 1, true))
  -- WS: the weights shift in from the top, last row first, in the first R cycles
  viz.show('systolic', a:with { dataflow = 'ws' }, l)
  viz.seek(2) -- cycle 1
  test.eq(#cells { kind = 'pe', state = 'loading' }, 8, 'rows 1 and 2 hold weights on their way down')
  test.eq(#cells { kind = 'pe', state = 'pending' }, 8)
  test.ok(viz.state().step_label:find('loading the stationary weights, row 3 of 4 enters at the top', 1, true), viz.state().step_label)
  p = hover(cells { kind = 'pe', state = 'loading', row = 0, col = 0 }[1])
  test.ok(p and p.text:find('w[3,1] passes through, on its way down to PE row 3', 1, true), p and p.text)
  viz.seek(5) -- cycle 4: the weights sit; PE(1,1) multiplies a[1,1]
  test.eq(#cells { kind = 'pe', state = 'loading' }, 0)
  p = hover(cells { kind = 'pe', row = 0, col = 0 }[1])
  test.ok(p and p.text:find('PE(1,1): a[p=1,k=1] x w[k=1,n=1] + the psum from above -> psum(1,1), passed down; w stays', 1, true),
    p and p.text)
  viz.seek(12) -- cycle 11: o[1,1] leaves the bottom of column 1 (2R - 1 + c + p after the fold starts)
  p = hover(cells { kind = 'operand', group = 'bottom', col = 0 }[1])
  test.ok(p and p.text:find('the finished partial sum o[5,1] leaves column 1', 1, true), p and p.text)
  -- steps change the frame; the same state renders the same bytes
  local s1 = snap('sy-a')
  viz.step()
  test.ok(snap('sy-b') ~= s1, 'a step changes the frame')
  viz.step(-1)
  test.ok(snap('sy-c') == s1, 'the same step renders byte-identical')
end)

test.case('systolic: one fold, a 32 x 32 array, the demonstration, bad input', function()
  local a, l = dlp.array { rows = 4, cols = 4 }, dlp.gemm { m = 6, n = 5, k = 4 }
  viz.show('systolic', a, l, { fold = 3 })
  test.eq(viz.state().steps, a:fold_cycles(l) + 1)
  viz.seek(1)
  test.ok(viz.state().step_label:find('fold 3 of 4, cycle 0 of 10', 1, true), viz.state().step_label)
  viz.seek(10)
  test.ok(viz.state().step_label:find('112 of 120 MACs done', 1, true), 'folds 1 and 2 counted done, and fold 3: '
    .. viz.state().step_label)
  local big = dlp.array {}
  viz.show('systolic', big, dlp.conv { h = 12, w = 12, fh = 3, fw = 3, c = 4, k = 40 })
  test.eq(#cells { kind = 'pe' }, 1024)
  test.ok(viz.state().steps <= 4097)
  -- the demonstration is the same run
  viz.show('systolic', a, l)
  viz.seek(9)
  local given = { panel_row('macs'), panel_row('total_cycles'), panel_row('compute_util'), #cells { kind = 'pe', state = 'mac' },
    viz.state().step_label, viz.state().steps }
  viz.scene('systolic')
  viz.seek(9)
  test.eq({ panel_row('macs'), panel_row('total_cycles'), panel_row('compute_util'), #cells { kind = 'pe', state = 'mac' },
    viz.state().step_label, viz.state().steps }, given, 'the demonstration: a 4 x 4 OS array on a GEMM 6 x 5 x 4')
  test.ok(viz.state().title:find('a demonstration', 1, true))
  viz.show('systolic')
  test.eq(viz.state().scene, 'systolic')
  viz.show(a, l)
  test.eq(viz.state().scene, 'systolic', 'viz.show(array, layer)')
  test.raises(function() viz.show('systolic', dlp.array { rows = 64, cols = 64 }, l) end,
    'viz.show: the systolic scene: draws arrays of up to 32 x 32 PEs cell by cell; this one is 64 x 64')
  test.raises(function() viz.show('systolic', {}, l) end, 'viz.show: the systolic scene: the array must be a dlp.array{...}')
  test.raises(function() viz.show('systolic', a, a) end, 'the layer must be a dlp.conv{...} or dlp.gemm{...} '
    .. "(viz.show('systolic', array, layer)), got a dlp array")
  test.raises(function() viz.show('systolic', a, l, { rows = 3 }) end, "option rows is the demonstration's")
  test.raises(function() viz.show('systolic', a, l, { fold = 9 }) end, 'option fold = 9, but the layer has 4 folds (2 x 2)')
  test.raises(function() viz.scene('systolic', { rows = 40 }) end, "option rows of scene 'systolic' must lie in")
end)

-- ---------------------------------------------------------------- dma

-- the dma scene's demonstration: 32 x 32 WS on a 16 x 16 x 8 convolution with 128 filters of 5 x 5
local DMA_LAYER = dlp.conv { h = 16, w = 16, fh = 5, fw = 5, c = 8, k = 128 }
local function dma_run(bw) return dlp.array { bandwidth = bw, dataflow = 'ws' }:run(DMA_LAYER, { events = 4096 }) end

local function by_kind(r)
  local n, stall = {}, { ifmap = 0, filter = 0, ofmap = 0 }
  for _, e in ipairs(r.events) do
    n[e.kind] = (n[e.kind] or 0) + 1
    if e.kind == 'stall' then stall[e.operand] = stall[e.operand] + e.cycles end
  end
  return n, stall
end

test.case('dma: the lanes are the report\'s events; stalls by operand; two bandwidths on one axis', function()
  local r1, r2 = dma_run(10), dma_run(2)
  viz.show('dma', { a = r1, b = r2 })
  local st = viz.state()
  test.eq(st.scene, 'dma')
  test.ok(st.title:find('a (bandwidth 10): 6663 cycles, 0 stalled; b (bandwidth 2): 19682 cycles, 13019 stalled', 1, true), st.title)
  test.ok(st.title:find(SOURCE, 1, true))
  test.eq(panel_row('total_cycles'), { r1.total_cycles, r2.total_cycles })
  test.eq(panel_row('stall_cycles'), { r1.stall_cycles, r2.stall_cycles })
  test.eq(panel_row('bandwidth'), { 10, 2 })
  test.eq(panel_row('ifmap_dram_reads'), { r1.ifmap_dram_reads, r2.ifmap_dram_reads })
  test.eq(panel_row('ofmap_dram_writes'), { r1.ofmap_dram_writes, r2.ofmap_dram_writes })
  local n1, s1 = by_kind(r1)
  local n2, s2 = by_kind(r2)
  test.eq(panel_row('stall_ofmap'), { s1.ofmap, s2.ofmap })
  test.eq(panel_row('stall_ifmap'), { s1.ifmap, s2.ifmap })
  test.eq(s2.ifmap + s2.filter + s2.ofmap, r2.stall_cycles, 'the stall events add up to stall_cycles')
  test.ok(s2.ofmap > 0, 'at 2 words a cycle the outputs cannot drain: ofmap stalls')
  test.eq(panel_row('events'), { #r1.events, #r2.events })
  -- the last step: every event drawn
  viz.seek(st.steps - 1)
  test.eq(#cells { kind = 'fold', group = 'a' }, n1.fold)
  test.eq(#cells { kind = 'fold', group = 'b' }, n2.fold)
  test.eq(#cells { kind = 'transfer', group = 'b' }, n2.ifmap + n2.filter + n2.drain)
  local stall = cells { kind = 'stall', group = 'b' }
  test.eq(#stall, n2.stall)
  test.eq(stall[1].state, 'ofmap')
  test.eq(stall[1].value, s2.ofmap)
  test.eq(inside(stall[1]), C.highlight, 'a stall is vermillion')
  local p = hover(stall[1])
  test.ok(p and p.text:find('b (bandwidth 2): a stall of 13019 cycles after cycle 5124: ofmap (the ofmap buffer was full until its drain)',
    1, true), p and p.text)
  local ifm = cells { kind = 'transfer', group = 'b', state = 'ifmap' }[1]
  test.eq(inside(ifm), C.path_a, 'an ifmap prefetch is blue')
  p = hover(ifm)
  test.ok(p and p.text:find('ifmap DMA, cycles -16128 to -1 (16128 cycles): 32256 words, 2.00 words/cycle', 1, true), p and p.text)
  -- the two runs on one axis: the same cycle at the same x
  local f1 = cells { kind = 'fold', group = 'a' }[1]
  local f2 = cells { kind = 'fold', group = 'b' }[1]
  test.near(f1.x, f2.x, 1e-6, 'fold 1 starts at cycle 0 in both')
  test.ok(cells { kind = 'fold', group = 'b' }[n2.fold].x > cells { kind = 'fold', group = 'a' }[n1.fold].x + 100,
    'the starved run ends far later')
  -- the reveal: step 0 shows the first prefetch of the starved run only (it starts first)
  viz.seek(0)
  test.eq(#cells { kind = 'transfer' }, 1)
  test.ok(viz.state().step_label:find('cycle -16128: a (bandwidth 10): nothing starts; b (bandwidth 2): ifmap DMA of 32256 words to -1', 1, true),
    viz.state().step_label)
  local a = snap('dma-a')
  viz.step()
  test.ok(snap('dma-b') ~= a, 'a step changes the frame')
  viz.seek(0)
  test.ok(snap('dma-c') == a, 'the same step renders byte-identical')
  -- the demonstration is the same pair of runs
  local given = { panel_row('total_cycles'), panel_row('stall_ofmap'), panel_row('events'), st.steps }
  viz.scene('dma')
  test.eq({ panel_row('total_cycles'), panel_row('stall_ofmap'), panel_row('events'), viz.state().steps }, given,
    'the demonstration: bandwidth 10 against 2 on the same layer')
  test.ok(viz.state().title:find('a demonstration', 1, true))
  test.ok(viz.state().title:find('bandwidth 10: 6663 cycles, 0 stalled; bandwidth 2: 19682 cycles', 1, true), viz.state().title)
  -- one report, a list (named by what differs), viz.show(report)
  viz.show('dma', r2)
  test.eq(panel_row('total_cycles'), { r2.total_cycles })
  test.ok(viz.state().title:find(': bandwidth 2: 19682 cycles', 1, true), viz.state().title)
  local r3 = dlp.array { bandwidth = 5, dataflow = 'os' }:run(DMA_LAYER, { events = 4096 })
  viz.show('dma', { r1, r2, r3 })
  test.eq(panel_row('bandwidth'), { 10, 2, 5 })
  test.ok(viz.state().title:find('bandwidth 2, WS: 19682 cycles, 13019 stalled; bandwidth 5, OS: ', 1, true), viz.state().title)
  viz.show('dma', { slow = r2, fast = r1 })
  test.ok(viz.state().title:find('fast (bandwidth 10): 6663 cycles, 0 stalled; slow (bandwidth 2)', 1, true), viz.state().title)
  lm.sys.lang('zh')
  test.ok(viz.state().title:find('fast（带宽 10）', 1, true) or viz.state().title:find('fast (带宽 10)', 1, true), viz.state().title)
  lm.sys.lang(false)
  viz.show(r1)
  test.eq(viz.state().scene, 'dma', 'a report with events: the dma scene')
end)

test.case('dma: bad input is named', function()
  local r = dma_run(10)
  test.raises(function() viz.show('dma', dlp.array {}:run(DMA_LAYER)) end,
    'viz.show: the dma scene: the report (run 1) has no events: keep them with a:run(layer, {events = 4096})')
  test.raises(function() viz.show('dma', { fast = r, slow = dlp.array {}:run(DMA_LAYER) }) end, 'the report (slow) has no events')
  test.raises(function() viz.show('dma', 5) end, 'viz.show: the dma scene: draws a report of a dlp array (a:run(layer)) or a table of them, got the number 5')
  test.raises(function() viz.show('dma', { a = r, b = dlp.array {} }) end, 'viz.show: the dma scene: b is a dlp array, not a report')
  test.raises(function() viz.show('dma', { r, r, r, r }) end, 'viz.show: the dma scene: draws 1 to 3 reports, got 4')
  test.raises(function() viz.show('dma', r, { bandwidth = 3 }) end, "option bandwidth is the demonstration's")
  local bad = dma_run(10)
  bad.events[2].kind = 'sleep'
  test.raises(function() viz.show('dma', bad) end, "event 2 has kind sleep, not 'ifmap', 'filter', 'drain', 'stall' or 'fold'")
end)

-- ---------------------------------------------------------------- energy

local ENERGY_LAYER = dlp.conv { h = 16, w = 16, fh = 3, fw = 3, c = 16, k = 32 }
local LEVELS = { 'mac', 'register', 'pe_hop', 'sram', 'dram' }

test.case('energy: the levels are r:energy()\'s; revealed one by one; the verdict from the numbers', function()
  local rs = {}
  for i, df in ipairs { 'os', 'ws', 'is' } do rs[i] = dlp.array { rows = 16, cols = 16, dataflow = df }:run(ENERGY_LAYER) end
  viz.show('energy', rs)
  local st = viz.state()
  test.eq(st.steps, 7, 'what is counted, five levels, the verdict')
  test.ok(st.title:find('energy per level: OS ', 1, true) and st.title:find(SOURCE, 1, true), st.title)
  local function check_panel(es)
    local tot = panel_row('total_pj')
    for i, e in ipairs(es) do
      test.near(tot[i], e.total_pj, 1e-3)
      for _, k in ipairs(LEVELS) do test.near(panel_row(k .. '_pj')[i], e[k], 1e-3, k) end
      test.near(panel_row('movement_share')[i], 100 * (1 - e.mac / e.total_pj), 1e-3)
      test.eq(panel_row('dram_words')[i], e.counts.dram)
      test.eq(panel_row('sram_accesses')[i], e.counts.sram)
    end
  end
  local es = {}
  for i, r in ipairs(rs) do es[i] = r:energy() end
  check_panel(es)
  -- the levels, one a step
  for step = 0, 6 do
    viz.seek(step)
    for k, level in ipairs(LEVELS) do
      local cs = cells { kind = 'level', col = k - 1 }
      test.eq(#cs, 3)
      for _, c in ipairs(cs) do test.eq(c.state, step >= k and level or 'hidden', string.format('step %d, %s', step, level)) end
    end
  end
  local p = hover(cells { kind = 'level', group = 'a', col = 4 }[1])
  test.ok(p and p.text:find(string.format('OS, DRAM: %d accesses x 46 pJ', es[1].counts.dram), 1, true), p and p.text)
  test.ok(p.text:find(dlp.energy_table.source, 1, true), 'the table\'s source in the hover')
  -- the verdict: here moving data takes more than half in every run
  viz.seek(6)
  local label = viz.state().step_label
  test.ok(label:find('data movement dominates', 1, true), label)
  local lo, hi = 1, 0
  for _, e in ipairs(es) do
    local m = 1 - e.mac / e.total_pj
    lo, hi = math.min(lo, m), math.max(hi, m)
    test.ok(m > 0.5)
  end
  test.ok(label:find(string.format('takes %.1f%% - %.1f%% of the energy', 100 * lo, 100 * hi), 1, true), label)
  test.eq(#cells { kind = 'share', group = 'a' }, 5)
  test.eq(inside(cells { kind = 'share', group = 'a', col = 0 }[1]), cells { kind = 'share', group = 'a', col = 0 }[1].color)
  -- a table where the MAC is dear: compute dominates, and the scene says so
  local dear = { source = 'a test table: the MAC at 1000 pJ', mac = 1000, register = 0.01, pe_hop = 0.01, sram = 0.01, dram = 0.01 }
  viz.show('energy', rs, { table = dear })
  viz.seek(6)
  label = viz.state().step_label
  test.ok(not label:find('data movement dominates', 1, true) and label:find('not data movement, dominates', 1, true), label)
  local des = {}
  for i, r in ipairs(rs) do des[i] = r:energy(dear) end
  check_panel(des)
  -- the demonstration is the same three runs
  viz.show('energy', rs)
  viz.seek(6)
  local given = { panel_row('total_pj'), panel_row('dram_pj'), panel_row('movement_share'), viz.state().step_label }
  viz.scene('energy')
  viz.seek(6)
  test.eq({ panel_row('total_pj'), panel_row('dram_pj'), panel_row('movement_share'), viz.state().step_label }, given,
    'the demonstration: OS, WS and IS on the same layer, priced by dlp.energy_table')
  test.ok(viz.state().title:find('a demonstration', 1, true))
  -- one report; viz.show(report) without events
  viz.show('energy', rs[2])
  test.near(panel_row('total_pj')[1], es[2].total_pj, 1e-3)
  viz.show(rs[3])
  test.eq(viz.state().scene, 'energy', 'a report without events: the energy scene')
end)

test.case('energy: data movement dominates in one run and not in the other: the verdict says which', function()
  local os_, ws = dlp.array { rows = 16, cols = 16 }:run(ENERGY_LAYER), dlp.array { rows = 16, cols = 16, dataflow = 'ws' }:run(ENERGY_LAYER)
  local t = { source = 'a test table', mac = 0, register = 0.23, pe_hop = 0.46, sram = 1.38, dram = 46 }
  local rest_os, rest_ws = os_:energy(t).total_pj, ws:energy(t).total_pj
  test.ok(rest_os < rest_ws, 'WS moves more data here')
  t.mac = (rest_os + rest_ws) / 2 / os_.macs -- the MACs between the two: more than OS moves, less than WS
  viz.show('energy', { os_, ws }, { table = t })
  viz.seek(6)
  local label = viz.state().step_label
  test.ok(label:find('more than half in WS, not in OS', 1, true), label)
  test.ok(not label:find('dominates', 1, true), label)
  test.ok(viz.state().title:find('OS ', 1, true))
end)

test.case('energy: bad input is named', function()
  local r = dlp.array {}:run(ENERGY_LAYER)
  test.raises(function() viz.show('energy', { r, r, r, r, r, r, r }) end, 'viz.show: the energy scene: draws 1 to 6 reports, got 7')
  test.raises(function() viz.show('energy', lm.zeros(3)) end, 'viz.show: the energy scene: draws a report of a dlp array (a:run(layer)) '
    .. 'or a table of them, got a tensor')
  test.raises(function() viz.show('energy', { r, 'x' }) end, 'run 2 is the string "x", not a report of a dlp array')
  test.raises(function() viz.show('energy', r, { table = { mac = -1 } }) end, "table field 'mac' must be a non-negative number")
end)

test.case('--snapshot draws each scene at its steps', function()
  local exe = lm.sys.executable()
  for _, s in ipairs { { 'systolic', 0 }, { 'systolic', 25 }, { 'dma', 3 }, { 'dma', 46 }, { 'energy', 0 }, { 'energy', 6 } } do
    local out = check.tmp .. '/' .. s[1] .. s[2] .. '.png'
    local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot %s '%s' --step %d 2>/dev/null", exe, s[1], out, s[2]))
    test.ok(ok and #check.read(out) > 1000, '--snapshot ' .. s[1] .. ' --step ' .. s[2])
  end
end)

test.case('(the window closed for the next file)', function() viz.close() end)
