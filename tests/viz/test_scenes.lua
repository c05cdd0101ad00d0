--[[
test_scenes.lua — every scene drawn from a known trace, offscreen (SDL_VIDEODRIVER=offscreen,
Mesa llvmpipe), and checked by properties that a broken scene would fail: the pixel at an active
cell of a step (found through viz.layout()) has the active colour, an idle one the idle colour; the
counters panel holds text; stepping changes the frame; the same trace renders byte-identical twice;
viz.pick at a cell returns that cell. Read next: test_viz.lua (controls, bad input, the program).
]]
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, inside, cells, panel_ink, snap, check_scene = check.C, check.inside, check.cells, check.panel_ink,
  check.snap, check.check_scene

test.case('scan: Kogge-Stone and Brent-Kung side by side from a traced run', function()
  local _, info = kernels.scan(lm.arange(1, 17):float(), { algo = 'kogge-stone', backend = 'emu' })
  local function show() viz.show(info) end
  check_scene('scan', show, 2, 'element', 'kogge-stone')
  show()
  local st = viz.state()
  test.eq(st.scene, 'scan')
  test.eq(st.steps, 8) -- the input, then Brent-Kung's 7 steps (Kogge-Stone's 4 end earlier)
  -- Kogge-Stone's step 2 (stride 2): threads 2..15 write, 0 and 1 are idle, as the textbook draws
  viz.seek(2)
  local act = cells { group = 'kogge-stone', step = 2, state = 'active' }
  test.eq(#act, 14)
  test.eq(#cells { group = 'kogge-stone', step = 2, state = 'idle' }, 2)
  local v = {}
  for _, c in ipairs(cells { group = 'kogge-stone', step = 4 }) do v[c.index + 1] = c.value end
  test.eq(v, {}, 'rows past the current step are not shown yet')
  viz.seek(4)
  for _, c in ipairs(cells { group = 'kogge-stone', step = 4 }) do v[c.index + 1] = c.value end
  test.eq(v[16], 136, 'the inclusive scan of 1..16 ends in 136')
  test.eq(v[5], 15)
  -- Brent-Kung ran on the same input (the trace's loads): its last row is the same scan
  viz.seek(7)
  for _, c in ipairs(cells { group = 'brent-kung', step = 7 }) do v[c.index + 1] = c.value end
  test.eq(v[8], 36)
  local p = viz.pick(act[1].x + 1, act[1].y + 1)
  test.ok(p.text:find('Kogge%-Stone') and p.text:find('thread 2'), p.text)
end)

test.case('scan: a long array as blocks, block sums and the final add', function()
  local _, info = kernels.scan(lm.arange(1, 65):float(), { algo = 'kogge-stone', backend = 'emu', block = 16 })
  viz.show(info)
  local st = viz.state()
  test.eq(st.variant, 'blocks')
  test.eq(st.steps, 4)
  viz.seek(3)
  local last = {}
  for _, c in ipairs(cells { kind = 'element', launch = 2 }) do last[c.index + 1] = c.value end
  test.eq(last[64], 64 * 65 / 2)
  test.eq(last[17], 17 * 18 / 2)
  test.ok(#cells { kind = 'element', state = 'active', launch = 2 } == 64, 'the final add writes every element')
  viz.variant('block 1')
  test.eq(viz.state().steps, 5)
end)

test.case('reduce: the naive and convergent trees and their lanes', function()
  local _, info = kernels.reduce(lm.arange(1, 129):float(), { algo = 'naive', backend = 'emu' })
  local function show() viz.show(info) end
  check_scene('reduce', show, 2, 'element', 'naive')
  show()
  viz.seek(2)
  -- stride 2: naive keeps both warps issuing with half their lanes; convergent runs warp 0 full
  local naive = cells { kind = 'lane', group = 'naive', step = 2, state = 'active' }
  local conv = cells { kind = 'lane', group = 'convergent', step = 2, state = 'active' }
  test.eq(#naive, 32)
  test.eq(#conv, 32)
  local warps = {}
  for _, c in ipairs(naive) do warps[c.warp] = true end
  test.ok(warps[0] and warps[1], 'naive: both warps add')
  for _, c in ipairs(conv) do test.eq(c.warp, 0) end
  test.eq(#cells { kind = 'lane', group = 'convergent', step = 2, state = 'not issued' }, 32)
  test.eq(inside(conv[1]), C.path_a)
  viz.seek(7)
  local sum
  for _, c in ipairs(cells { kind = 'element', group = 'convergent', step = 7, state = 'active' }) do sum = c.value end
  test.eq(sum, 128 * 129 / 2)
end)

test.case('histogram: bins, private copies, conflicts; three kernels side by side', function()
  local x = lm.tensor({ 0, 1, 1, 1, 2, 3, 3, 0, 1, 1, 2, 2, 3, 3, 3, 3 }, { dtype = 'int32' })
  local _, info = kernels.histogram(x, 4, { algo = 'privatized', backend = 'emu', block = 8 })
  viz.show(info)
  local st = viz.state()
  test.eq(st.scene, 'histogram')
  test.eq(st.variant, 'privatized')
  test.eq(st.steps, 7) -- two blocks of three phases, and the start
  viz.seek(2) -- block 0 (elements 1..8: 0 1 1 1 2 3 3 0) counted into its private copy
  local priv = {}
  for _, c in ipairs(cells { kind = 'private bin', block = 0 }) do priv[c.index + 1] = c.value end
  test.eq(priv, { 2, 3, 1, 2 })
  local counted = cells { kind = 'element', state = 'active' }
  test.eq(#counted, 8)
  local heat = cells { kind = 'heat', step = 2 }
  local q = {}
  for _, c in ipairs(heat) do q[c.index + 1] = c.value end
  test.eq(q, { 2, 3, 1, 2 }, 'the longest same-address queue per bin in that step')
  viz.seek(6)
  local bins = {}
  for _, c in ipairs(cells { kind = 'bin' }) do bins[c.index + 1] = c.value end
  test.eq(bins, { 2, 5, 3, 6 })
  for _, c in ipairs(cells { kind = 'bin' }) do test.eq(c.state, 'done') end
  test.ok(panel_ink() > 50)
  local a = snap('hist-a')
  viz.step(-1)
  test.ok(snap('hist-b') ~= a)
  viz.show(info)
  viz.seek(6)
  test.ok(snap('hist-c') == a, 'byte-identical')
  local p = viz.pick(counted[1].x + 2, counted[1].y + 2)
  test.eq(p.kind, 'element')
  test.ok(p.text:find('bin'), p.text)
  viz.variant('global-atomic')
  test.eq(viz.state().steps, 3)
end)

test.case('divergence: lanes by path, idle lanes hatched, reconvergence, efficiency', function()
  local _, info = kernels.divergence { pattern = 'even-odd', warps = 2 }
  viz.show(info)
  local st = viz.state()
  test.eq(st.scene, 'divergence')
  test.eq(st.variant, 'even-odd')
  viz.seek(st.steps - 1)
  -- the first add of path A (slot 2): even lanes active, odd idle
  local a = cells { kind = 'lane', warp = 0, step = 2 }
  test.eq(#a, 32)
  for _, c in ipairs(a) do
    test.eq(c.state, c.lane % 2 == 0 and 'path_a' or 'idle', 'lane ' .. c.lane)
  end
  local b = cells { kind = 'lane', warp = 1, step = 6 }
  for _, c in ipairs(b) do test.eq(c.state, c.lane % 2 == 1 and 'path_b' or 'idle') end
  test.eq(inside(a[1]), C.path_a)
  test.eq(inside(b[2]), C.path_b)
  local idle = inside(a[2])
  test.ok(idle[1] ~= C.path_a[1], 'idle lanes are not lit')
  -- the store after the paths runs with every lane: reconverged
  for _, c in ipairs(cells { kind = 'lane', warp = 0, step = 10 }) do test.eq(c.state, 'active') end
  local p = viz.pick(a[1].x + 1, a[1].y + 1)
  test.ok(p.text:find('path A'), p.text)
  test.ok(panel_ink() > 50)
  -- 'warp' diverges nowhere: every lane of a warp takes the same path
  viz.variant('warp')
  viz.seek(viz.state().steps - 1)
  for _, c in ipairs(cells { kind = 'lane', warp = 1, step = 2 }) do test.eq(c.state, 'path_b') end
  local s1 = snap('div-a')
  viz.step(-1)
  test.ok(snap('div-b') ~= s1)
end)

test.case('the scene viz.show picks for each kernel result', function()
  local x = lm.arange(1, 33):float()
  local cases = {
    { 'scan', select(2, kernels.scan(x, { backend = 'emu' })) },
    { 'reduce', select(2, kernels.reduce(x, { backend = 'emu', algo = 'convergent' })) },
    { 'histogram', select(2, kernels.histogram('hello world', 8, { backend = 'emu' })) },
    { 'divergence', select(2, kernels.divergence { pattern = 'half-warp' }) },
  }
  for _, c in ipairs(cases) do
    viz.show(c[2])
    test.eq(viz.state().scene, c[1])
    viz.show(c[2].trace) -- a trace alone picks the same scene
    test.eq(viz.state().scene, c[1])
  end
  -- the patterns of kernels II (tests/viz/test_kernel_scenes.lua checks their pictures)
  local more = {
    { 'matmul', select(2, kernels.matmul(lm.ones(4, 4), lm.ones(4, 4), { backend = 'emu' })) },
    { 'conv', select(2, kernels.conv2d(lm.ones(6, 6), lm.ones(3, 3), { backend = 'emu' })) },
    { 'spmv', select(2, kernels.spmv(kernels.sparse(lm.eye(4)), lm.ones(4), { backend = 'emu' })) },
    { 'timeline', select(2, kernels.streams { segments = 2 }) },
  }
  for _, c in ipairs(more) do
    viz.show(c[2])
    test.eq(viz.state().scene, c[1])
  end
  -- a run without a trace: its counters, labelled measured, beside an emulated picture
  local _, cpu = kernels.scan(lm.rand(1000), { backend = 'cpu' })
  viz.show(cpu)
  test.eq(viz.state().scene, 'scan')
  test.ok(viz.state().title:find('demonstration'), viz.state().title)
end)

test.case('viz.scene builds every scene from options alone', function()
  -- the curves follow a log written by examples/mlp_fashion.lua; the graph is a small perceptron's
  -- (threads draws traced launches only: tests/viz/test_threads.lua)
  local opts = { curves = { csv = here .. 'data/mlp_run.csv' }, graph = { expr = 'mlp' }, threads = false }
  for _, s in ipairs(viz.scenes()) do
    if opts[s.name] == false then goto next end
    viz.scene(s.name, opts[s.name])
    local st = viz.state()
    test.eq(st.scene, s.name)
    test.ok(st.steps >= 2, s.name)
    test.ok(#viz.layout() > 10, s.name .. ': cells to pick')
    ::next::
  end
  viz.scene('scan', { n = 8, input = 'pmpp' })
  viz.seek(3)
  local v = {}
  for _, c in ipairs(cells { group = 'kogge-stone', step = 3 }) do v[c.index + 1] = c.value end
  test.eq(v, { 3, 4, 11, 11, 15, 16, 22, 25 }, 'the PMPP example')
  viz.close()
end)
