--[[
test_kernel_scenes.lua — the scenes of kernels II, offscreen, each from a known traced run:
conv (the output tile, its halo and ghost cells as a block loads them, outputs against a naive
reference), matmul (the tiles of A and B in shared memory phase by phase, partial sums, loads per
element naive vs tiled), spmv (the same matrix in COO, CSR, ELL with padding, JDS with its
permutation; the work per thread, y), timeline (serial and overlapped spans, the cursor); the
checks every scene passes (scene_check.lua); and traces a scene cannot draw.
Read next: test_data_scenes.lua, scene_check.lua.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, cells, inside = check.C, check.cells, check.inside

local function count(where) return #cells(where) end

-- "same" convolution with zero ghost cells, the textbook's loops
local function conv_ref(img, mask)
  local h, w, mh, mw = img:size(1), img:size(2), mask:size(1), mask:size(2)
  local ry, rx = (mh - 1) // 2, (mw - 1) // 2
  local out = {}
  for r = 1, h do
    for c = 1, w do
      local s = 0
      for i = 1, mh do
        for j = 1, mw do
          local rr, cc = r + i - 1 - ry, c + j - 1 - rx
          if rr >= 1 and rr <= h and cc >= 1 and cc <= w then s = s + mask[{ i, j }]:item() * img[{ rr, cc }]:item() end
        end
      end
      out[(r - 1) * w + c] = s
    end
  end
  return out
end

test.case('conv: output tile, halo, ghost cells, N_s, outputs against a reference', function()
  local img = lm.arange(1, 65):float():view(8, 8) % 7
  local mask = lm.tensor({ { 1, 2, 1 }, { 2, 4, 2 }, { 1, 2, 1 } }):float()
  local _, info = kernels.conv2d(img, mask, { algo = 'tiled-input', tile = 4, backend = 'emu' })
  local function show() viz.show(info) end
  show()
  local st = viz.state()
  test.eq({ st.scene, st.variant, st.steps }, { 'conv', 'tiled-input', 9 }) -- 4 blocks x (load, compute)
  viz.seek(1) -- block (0, 0) loads: its 4 x 4 output tile, a halo of 1 inside the image, 11 ghost cells
  test.eq(count { kind = 'input', state = 'active' }, 16)
  test.eq(count { kind = 'input', state = 'halo' }, 9)
  test.eq(count { kind = 'ghost' }, 11)
  test.eq(count { kind = 'shared', state = 'ghost' }, 11)
  test.eq(count { kind = 'shared', state = 'halo' }, 9)
  local halo = cells { kind = 'input', state = 'halo' }[1]
  test.eq(inside(halo), halo.color, 'a halo cell shows its colour')
  test.ok(halo.color[1] ~= C.active[1], 'halo cells are not the output tile')
  test.ok(viz.state().step_label:find('25 global loads, 11 ghost cells'), viz.state().step_label)
  check.check('conv', show, 1, { kind = 'input', state = 'active' }, { kind = 'input', state = 'idle' })
  -- loads per output pixel and the reuse beside the mask, against the textbook's formulas
  show()
  viz.seek(1)
  local loads = cells { kind = 'loads' }[1]
  test.near(loads.value, info.counters.global_loads_per_output, 1e-9, 'the run\'s own counter')
  local lt = viz.pick(loads.x + 4, loads.y + 4).text
  test.ok(lt:find('2%.25 textbook: %(T%+2r%)%^2/T%^2', 1) and lt:find('T%^2%(2r%+1%)%^2/%(T%+2r%)%^2') -- 36/16; 16*9/36 = 4
    and lt:find('  4 textbook') and lt:find('this block: 25 loads of N for 16 outputs', 1, true), lt)
  -- the outputs, block by block, against the naive loops
  local ref = conv_ref(img, mask)
  viz.seek(2)
  local outs = cells { kind = 'output', state = 'active' }
  test.eq(#outs, 16)
  for _, c in ipairs(outs) do test.near(c.value, ref[c.index + 1], 1e-4) end
  viz.seek(st.steps - 1)
  test.eq(count { kind = 'output', state = 'done' } + count { kind = 'output', state = 'active' }, 64)
  for _, c in ipairs(cells { kind = 'output' }) do test.near(c.value, ref[c.index + 1], 1e-4) end
  local p = viz.pick(outs[1].x + 2, outs[1].y + 2)
  test.ok(p.text:find('P%['), p.text)
  -- the naive kernel on the same input: a block reads its neighbourhood, halo included, from global memory
  viz.variant('naive')
  test.eq(viz.state().steps, 5)
  viz.seek(1)
  test.eq(count { kind = 'input', state = 'active' }, 25)
  test.eq(count { kind = 'ghost' }, 0)
  local inner = cells { kind = 'input', state = 'active', index = 9 }[1] -- (1, 1): used by 9 of the block's threads
  test.ok(viz.pick(inner.x + 2, inner.y + 2).text:find('loaded 9 times'), 'the naive kernel loads a cell once per use')
  viz.variant('tiled-output')
  viz.seek(1)
  test.eq(count { kind = 'input', state = 'active' }, 16)
end)

test.case('matmul: tiles through shared memory, partial sums, loads per element', function()
  lm.manual_seed(3)
  local a, b = lm.randint(0, 5, { 8, 8 }):float(), lm.randint(0, 5, { 8, 8 }):float()
  local _, info = kernels.matmul(a, b, { algo = 'tiled', tile = 4, backend = 'emu' })
  local function show() viz.show(info) end
  show()
  test.eq({ viz.state().scene, viz.state().variant, viz.state().steps }, { 'matmul', 'tiled 4', 5 })
  viz.seek(1) -- phase 1, load: A[0:4, 0:4] and B[0:4, 0:4] into Mds and Nds
  test.eq(count { kind = 'A', state = 'active' }, 16)
  test.eq(count { kind = 'B', state = 'active' }, 16)
  test.eq(count { kind = 'Mds', state = 'active' }, 16)
  for _, c in ipairs(cells { kind = 'Mds' }) do
    test.eq(c.value, a[{ c.index // 4 + 1, c.index % 4 + 1 }]:item(), 'Mds holds the A tile')
  end
  check.check('matmul', show, 1, { kind = 'A', state = 'active' }, { kind = 'A', state = 'idle' })
  show()
  viz.seek(1)
  local loads = cells { kind = 'loads' }[1]
  test.eq(loads.value, info.counters.global_loads)
  local lt = viz.pick(loads.x + 4, loads.y + 4).text
  test.ok(lt:find('textbook 2mnk/T = 256', 1, true) and lt:find('global loads 32, shared loads 0', 1, true), lt)
  local el = cells { kind = 'A', state = 'active', index = 0 }[1]
  test.ok(viz.pick(el.x + 2, el.y + 2).text:find('loaded 1 time '), 'tiled: once per block')
  viz.seek(2) -- compute: partial sums over k = 0..3
  local part = cells { kind = 'C', state = 'active' }
  test.eq(#part, 16)
  for _, c in ipairs(part) do
    local r, col, s = c.index // 8 + 1, c.index % 8 + 1, 0
    for i = 1, 4 do s = s + a[{ r, i }]:item() * b[{ i, col }]:item() end
    test.eq(c.value, s, 'a partial sum after phase 1')
  end
  viz.seek(4)
  local full = lm.mm(a, b)
  for _, c in ipairs(cells { kind = 'C', state = 'done' }) do
    test.eq(c.value, full[{ c.index // 8 + 1, c.index % 8 + 1 }]:item())
  end
  test.eq(count { kind = 'C', state = 'done' }, 16)
  viz.variant('naive')
  test.eq(viz.state().steps, 3)
  viz.seek(1)
  el = cells { kind = 'A', state = 'active', index = 0 }[1]
  test.ok(viz.pick(el.x + 2, el.y + 2).text:find('loaded 4 times'), 'naive: once per thread of the row')
  viz.variant('tiled 2')
  test.eq(viz.state().steps, 9)
end)

test.case('spmv: COO, CSR, ELL with padding, JDS with perm; work per thread; y', function()
  local dense = lm.tensor({
    { 1, 0, 0, 0, 0, 0 }, { 0, 2, 3, 0, 4, 0 }, { 0, 0, 0, 0, 0, 0 },
    { 5, 0, 0, 6, 0, 0 }, { 0, 0, 7, 0, 0, 0 }, { 8, 9, 0, 1, 2, 3 } }):float()
  local A = kernels.sparse(dense)
  local x = lm.tensor({ 1, 2, 3, 1, 2, 3 }):float()
  local y, info = kernels.spmv(A, x, { format = 'csr', block = 2, backend = 'emu' })
  local function show() viz.show(info) end
  show()
  test.eq({ viz.state().scene, viz.state().variant, viz.state().steps }, { 'spmv', 'csr', 6 }) -- the longest row: 5
  test.eq(count { kind = 'product' }, 12)
  viz.seek(1)
  test.eq(count { kind = 'matrix', state = 'active' }, 5, 'every non-empty row lights its first nonzero')
  check.check('spmv', show, 2, { kind = 'matrix', state = 'active' }, { kind = 'matrix', state = 'done' })
  viz.seek(viz.state().steps - 1)
  for _, c in ipairs(cells { kind = 'y' }) do test.near(c.value, y[c.index + 1]:item(), 1e-5) end
  -- ELL: 6 rows padded to 5 slots; the padding is exactly m x width - nnz
  viz.variant('ell')
  test.eq(count { kind = 'val', state = 'padding' }, 6 * 5 - 12)
  test.eq(count { kind = 'packed', state = 'padding' }, 6 * 5 - 12)
  -- JDS: rows sorted by length; perm says where each came from
  viz.variant('jds')
  local perm = {}
  for _, c in ipairs(cells { kind = 'perm' }) do perm[c.index + 1] = c.value end
  test.eq(perm[1], 5, 'the longest row (row 6, 0-based 5) first')
  test.eq(perm[6], 2, 'the empty row last')
  viz.variant('coo')
  test.eq(viz.state().steps, 2, 'COO: one product per thread')
  -- a trace alone draws too (the matrix comes back from its loads)
  viz.show(info.trace)
  test.eq(viz.state().scene, 'spmv')
  local _, cut = kernels.spmv(A, x, { backend = 'emu', trace_cap = 10 })
  test.raises(function() viz.show(cut) end, 'the SpMV trace was truncated')
end)

test.case('timeline: serial vs overlapped spans, the cursor, the speedup', function()
  local _, info = kernels.streams { segments = 3 }
  local function show() viz.show(info) end
  show()
  local st = viz.state()
  test.eq({ st.scene, st.variant }, { 'timeline', '3 streams' })
  test.ok(st.title:find('emulated'), st.title)
  local function spans(where)
    local n = 0
    for _, k in ipairs { 'h2d', 'kernel', 'd2h' } do
      where.kind = k
      n = n + count(where)
    end
    return n
  end
  test.eq(spans {}, 2 * 3 * 3, 'two schedules x three segments x (copy in, kernel, copy out)')
  test.eq(spans { state = 'pending' }, 18)
  viz.seek(st.steps - 1)
  test.eq(spans { state = 'done' }, 18)
  for _, c in ipairs(cells { kind = 'kernel', group = 'overlapped' }) do test.eq(inside(c), c.color) end
  -- the overlapped schedule ends first: at its end the serial one still runs
  local ends = {}
  for _, s in ipairs(info.timeline) do ends[s.schedule] = math.max(ends[s.schedule] or 0, s.end_ms) end
  test.ok(ends.overlapped < ends.serial)
  viz.seek(2)
  test.ok(spans { state = 'active' } > 0, 'something runs at step 2')
  local h2d = cells { kind = 'h2d', group = 'serial', index = 0 }[1]
  check.check('timeline', show, st.steps // 2, { kind = 'h2d', state = 'done', group = 'serial' },
    { kind = 'h2d', state = 'pending', group = 'serial' }, h2d.color)
  viz.variant('2 streams')
  test.eq(spans {}, 2 * 2 * 3)
end)

test.case('bad input: traces a scene cannot draw', function()
  local _, s = kernels.scan(lm.ones(16), { backend = 'emu' })
  test.raises(function() viz.show(s, { scene = 'conv' }) end, "scene 'conv' draws conv2d results; this is a scan result")
  test.raises(function() viz.show(s, { scene = 'curves' }) end, "scene 'curves' is not drawn from kernel results")
  local fake = { pattern = 'conv2d', algo = 'tiled', source = 'emu', device = 'x', provenance = 'y', counters = {},
                 counter_names = {}, trace = s.trace }
  test.raises(function() viz.show(fake) end, 'not a trace of a 2-D convolution (it has no arrays N and P)')
  fake.pattern = 'matmul'
  test.raises(function() viz.show(fake) end, 'not a trace of a matrix multiplication')
  fake.pattern = 'spmv'
  test.raises(function() viz.show(fake) end, 'not a trace of an SpMV kernel')
  local _, st = kernels.streams { segments = 2 }
  test.raises(function() viz.show(st.trace) end, 'the timeline scene draws the spans of a kernels.streams result')
  test.raises(function() viz.scene('conv', { mask = 9 }) end, 'option mask of scene \'conv\' must lie in 1..7')
  -- an even mask: the tiled kernels cannot run it; the scene says so and shows the others
  viz.scene('conv', { mask = 2, algo = 'naive' })
  test.eq(viz.state().variants, 2)
  test.eq(viz.state().scene, 'conv')
end)
