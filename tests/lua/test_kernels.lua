-- kernels: the course's patterns from Lua (scan, reduce, histogram, matmul, conv2d, sparse and
-- spmv, divergence, streams, latency, info, info.trace, info.timeline), bad input.
local test = require 'lumen.test'
local kernels = require 'kernels'

local function prefix(t, inclusive)
  local out, s = {}, 0
  for i = 1, #t do
    if inclusive then s = s + t[i]; out[i] = s else out[i] = s; s = s + t[i] end
  end
  return out
end

test.case('the module under both names', function()
  test.eq(require 'lumen.kernels', kernels)
  for _, f in ipairs{'scan', 'reduce', 'histogram', 'matmul', 'conv2d', 'sparse', 'spmv', 'divergence',
                     'streams', 'latency'} do
    test.eq(type(kernels[f]), 'function')
  end
end)

test.case('scan: every algorithm, emulated and on the CPU, inclusive and exclusive', function()
  local v = {}
  for i = 1, 300 do v[i] = (i * 7) % 5 - 2 end
  for _, dtype in ipairs{'float32', 'float64'} do
    local x = lm.tensor(v, {dtype = dtype})
    for _, algo in ipairs{'kogge-stone', 'brent-kung', 'hierarchical'} do
      for _, backend in ipairs{'emu', 'cpu'} do
        for _, inclusive in ipairs{true, false} do
          local y, info = kernels.scan(x, {algo = algo, backend = backend, block = 32,
                                           inclusive = inclusive})
          test.eq(y:tolist(), prefix(v, inclusive))
          test.eq(y:dtype(), dtype)
          test.eq(info.source, backend)
          test.eq(info.algo, algo)
        end
      end
    end
  end
end)

test.case('reduce: every algorithm', function()
  local x = lm.arange(1, 1001):float()
  for _, algo in ipairs{'naive', 'convergent', 'shared', 'coarsened'} do
    for _, backend in ipairs{'emu', 'cpu'} do
      local s, info = kernels.reduce(x, {algo = algo, backend = backend})
      test.eq(s:item(), 500500)
      test.eq(s:dim(), 0)
      test.eq(info.pattern, 'reduce')
    end
  end
end)

test.case('info: provenance and counters in order; the textbook counts', function()
  local _, info = kernels.scan(lm.ones(1024), {backend = 'emu'})
  test.eq(info.provenance, 'emulated, modelled cycles')
  test.eq(info.counters.adds, 1024 * 10 - 1023)
  test.eq(info.counters.steps, 10)
  test.eq(info.counter_names[1], 'modelled_cycles')
  test.ok(info.device:find('SIMT emulator', 1, true))
  test.ok(tostring(info):find('adds%s+9217'))
  local _, bk = kernels.scan(lm.ones(1024), {backend = 'emu', algo = 'brent-kung', block = 512})
  test.eq(bk.counters.adds, 2 * 1024 - 2 - 10)
  test.eq(bk.counters.steps, 19)
  local _, cpu = kernels.scan(lm.ones(1000), {backend = 'cpu'})
  test.eq(cpu.provenance, 'CPU, measured')
  test.ok(cpu.counters.time_ms > 0 and cpu.counters.gbps > 0)
  test.eq(cpu.trace, nil)
  local _, auto = kernels.scan(lm.ones(10))
  test.eq(auto.source, lm.cuda.is_available() and 'cuda' or 'cpu')
  local _, traced = kernels.scan(lm.ones(10), {trace = true})
  test.eq(traced.source, 'emu')
end)

test.case('the trace userdata', function()
  local _, info = kernels.scan(lm.arange(1, 17):float(), {backend = 'emu'})
  local t = info.trace
  test.eq(#t, 452)
  test.eq(t.truncated, false)
  local e = t[1]
  test.eq(e.kind, 'load')
  test.eq(e.space, 'global')
  test.eq(e.array, 'X')
  test.eq(e.index, 0)
  test.eq(e.value, 1.0)
  test.eq(e.lane, 0)
  test.eq(t[0], nil)
  test.eq(t[#t + 1], nil)
  test.eq(#t:filter{kind = 'add'}, 49)
  test.eq(#t:filter{kind = 'add', step = 1}, 15)
  test.eq(#t:filter{kind = 'barrier', lane = 0}, 8)
  local steps = t:steps()
  test.eq(#steps, 9)
  test.eq(steps[1].first, 1)
  test.eq(steps[2].adds, 15)
  test.eq(t:launches()[1].kernel, 'scan_kogge_stone')
  test.eq(t:arrays()[3].name, 'XY')
  local _, cut = kernels.scan(lm.ones(64), {backend = 'emu', trace_cap = 10})
  test.eq(#cut.trace, 10)
  test.eq(cut.trace.truncated, true)
  test.ok(tostring(cut.trace):find('truncated at 10 events', 1, true))
  test.raises(function() t:filter{colour = 'red'} end, 'unknown filter key')
  test.raises(function() t:filter{kind = 'fetch'} end, "unknown event kind 'fetch'")
end)

test.case('latency model', function()
  local m = kernels.latency()
  test.eq(m, {global = 400, shared = 20, constant = 4, arith = 4, barrier = 20, sms = 1, issue = 1,
    sector = 2, warps_per_sm = 64, blocks_per_sm = 32, shared_per_sm = 65536})
  local _, slow = kernels.scan(lm.ones(32), {backend = 'emu'})
  test.eq(kernels.latency{global = 0, shared = 0, issue = 0, sector = 0}.global, 0)
  local _, fast = kernels.scan(lm.ones(32), {backend = 'emu'})
  -- 5 steps of a branch and an add (4 cycles each), 10 barriers; memory and issue free
  test.eq(fast.counters.modelled_cycles, 5 * (4 + 4) + 10 * 20)
  test.ok(fast.model:find('global 0, shared 0', 1, true), fast.model)
  test.ok(slow.counters.modelled_cycles > fast.counters.modelled_cycles)
  test.eq(kernels.latency('default'), m)
  test.raises(function() kernels.latency{global = -1} end, 'global = -1 must be a whole number')
  test.raises(function() kernels.latency{sms = 0} end, 'sms = 0 must be an integer in 1..65536')
  test.raises(function() kernels.latency{speed = 1} end, 'unknown latency')
  test.eq(kernels.latency(), m)
end)

test.case('bad input', function()
  local x = lm.ones(100)
  test.raises(function() kernels.scan(x, {block = 2048}) end,
              'kernels.scan: block 2048 exceeds the limit of 1024 threads per block')
  test.raises(function() kernels.scan(x, {block = 100}) end, 'block 100 is not a power of two')
  test.raises(function() kernels.scan(x, {block = 0}) end, 'kernels.scan: option block must be at least 1, got 0')
  test.raises(function() kernels.scan(x:double(), {algo = 'hierarchical', block = 1024, coarsen = 8}) end,
              'over the limit of 48 KiB (49152 bytes) per block')
  test.raises(function() kernels.scan(lm.zeros(0)) end, 'kernels.scan: the input is empty')
  test.raises(function() kernels.scan(x, {algo = 'sklansky'}) end, "unknown algo 'sklansky'")
  test.raises(function() kernels.reduce(x, {backend = 'tpu'}) end, "unknown backend 'tpu'")
  test.raises(function() kernels.scan(lm.arange(10)) end, 'the input has dtype int64')
  test.raises(function() kernels.scan(x, {backend = 'cpu', trace = true}) end,
              "trace=true needs backend='emu'")
  test.raises(function() kernels.scan(x, {inclusive = 'yes'}) end, 'option inclusive must be a boolean')
  test.raises(function() kernels.scan(x, 5) end, 'options must be a table')
  test.raises(function() kernels.scan({1, 2}) end, 'argument 1 must be a tensor')
  if not lm.cuda.is_available() then
    test.raises(function() kernels.scan(x, {backend = 'cuda'}) end,
                "kernels.scan: backend 'cuda' is not available")
  end
end)

-- kernels II ------------------------------------------------------------------------------------

local function counts(values, bins, f)
  local c = {}
  for b = 1, bins do c[b] = 0 end
  for _, v in ipairs(values) do local b = f(v) + 1; c[b] = c[b] + 1 end
  return c
end

test.case('histogram: text, uint8 and int32 bin indices, every algorithm and run', function()
  local text = 'the quick brown fox jumps over the lazy dog, again and again'
  local bytes = {text:byte(1, -1)}
  for _, algo in ipairs{'global-atomic', 'privatized', 'aggregated'} do
    for _, backend in ipairs{'emu', 'cpu'} do
      local h, info = kernels.histogram(text, 7, {algo = algo, backend = backend})
      test.eq(h:tolist(), counts(bytes, 7, function(b) return b * 7 // 256 end))
      test.eq(h:dtype(), 'int64')
      test.eq(info.pattern, 'histogram')
      test.eq(info.algo, algo)
    end
  end
  local idx = lm.tensor({0, 1, 1, 3, 3, 3}, {dtype = 'uint8'})
  test.eq(kernels.histogram(idx, 4):tolist(), {1, 2, 0, 3})
  local i32 = lm.tensor({4095, 0, 4095}, {dtype = 'int32'})
  local h4096 = kernels.histogram(i32, 4096, {backend = 'emu'})
  test.eq(h4096[1]:item(), 1)
  test.eq(h4096[4096]:item(), 2)
  test.eq(kernels.histogram(lm.zeros(100):int(), 1):tolist(), {100})
  local _, naive = kernels.histogram(text, 7, {algo = 'global-atomic', backend = 'emu'})
  test.eq(naive.counters.atomics, #text) -- one global atomic per element
  local _, priv = kernels.histogram(text, 7, {algo = 'privatized', backend = 'emu', block = 16})
  test.ok(priv.counters.atomics <= 7 * 4) -- bins x blocks
  test.eq(priv.counters.shared_atomics, #text)
  local _, agg = kernels.histogram(string.rep('a', 64), 4, {algo = 'aggregated', backend = 'emu'})
  test.eq(agg.counters.shared_atomics, 64 // 8) -- a run per thread: one atomic each
  test.eq(#agg.trace:filter{kind = 'atomic', space = 'shared'}, 8)
end)

test.case('matmul and conv2d against Lua references', function()
  local a = lm.tensor({{1, 2, 3}, {4, 5, 6}}):float()
  local b = lm.tensor({{1, 0}, {2, -1}, {0, 3}}):float()
  local want = {{5, 7}, {14, 13}}
  for _, algo in ipairs{'naive', 'tiled'} do
    for _, backend in ipairs{'emu', 'cpu'} do
      local c, info = kernels.matmul(a, b, {algo = algo, backend = backend, tile = 2})
      test.eq(c:tolist(), want)
      test.eq(info.pattern, 'matmul')
    end
  end
  local _, naive = kernels.matmul(lm.ones(8, 8), lm.ones(8, 8), {algo = 'naive', tile = 4, backend = 'emu'})
  local _, tiled = kernels.matmul(lm.ones(8, 8), lm.ones(8, 8), {algo = 'tiled', tile = 4, backend = 'emu'})
  test.eq(naive.counters.global_loads, 4 * tiled.counters.global_loads)

  local img = lm.tensor({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}):float()
  local mask = lm.tensor({{0, 1, 0}, {1, 1, 1}, {0, 1, 0}}):float() -- a plus: centre and 4 neighbours
  local function plus(r, c)
    local g = function(i, j) return (i >= 1 and i <= 3 and j >= 1 and j <= 4) and img[{i, j}]:item() or 0 end
    return g(r, c) + g(r - 1, c) + g(r + 1, c) + g(r, c - 1) + g(r, c + 1)
  end
  local ref = {}
  for r = 1, 3 do ref[r] = {} for c = 1, 4 do ref[r][c] = plus(r, c) end end
  for _, algo in ipairs{'naive', 'constant', 'tiled', 'tiled-input', 'tiled-output'} do
    for _, backend in ipairs{'emu', 'cpu'} do
      local out, info = kernels.conv2d(img, mask, {algo = algo, backend = backend, tile = 2})
      test.eq(out:tolist(), ref)
      if backend == 'emu' then test.ok(info.counters.global_loads_per_output > 0) end
    end
  end
end)

test.case('sparse matrices and spmv in every format', function()
  local d = lm.tensor({{1, 0, 2}, {0, 0, 0}, {3, 4, 5}, {0, 6, 0}}):float()
  local A = kernels.sparse(d)
  test.eq(A.nnz, 6)
  test.eq(A.shape, {4, 3})
  test.eq(A.dtype, 'float32')
  test.eq(A.ell_width, 3)
  test.eq(A.padding, 4 * 3 - 6)
  test.eq(A:dense():tolist(), d:tolist())
  test.eq(A:row_nnz():tolist(), {2, 0, 3, 1})
  test.ok(tostring(A):find('4 x 3 float32, 6 nonzeros', 1, true))
  local jds = A:arrays('jds')
  test.eq(jds.perm:tolist(), {2, 0, 3, 1}) -- 0-based, as the kernels read them
  test.eq(A:arrays('csr').row_ptr:tolist(), {0, 2, 2, 5, 6})
  local x = lm.tensor({1, 2, 3}):float()
  for _, format in ipairs{'coo', 'csr', 'ell', 'jds'} do
    for _, backend in ipairs{'emu', 'cpu'} do
      local y, info = kernels.spmv(A, x, {format = format, backend = backend})
      test.eq(y:tolist(), {7, 0, 26, 12})
      test.eq(info.counters.nnz, 6)
      test.eq(info.counters.padding, format == 'ell' and 6 or 0)
      test.eq(info.algo, format)
    end
  end
  local B = kernels.sparse{rows = {3, 1, 3}, cols = {2, 1, 2}, vals = {5, 6, 1}, shape = {3, 2}}
  test.eq(B:dense():tolist(), {{6, 0}, {0, 0}, {0, 6}}) -- duplicates add
  local C = kernels.sparse{rows = lm.tensor({1}, {dtype = 'int64'}), cols = {1}, vals = {2},
                           shape = {1, 1}, dtype = 'float64'}
  test.eq(C.dtype, 'float64')
  test.eq(kernels.spmv(C, lm.tensor({3}, {dtype = 'float64'})):tolist(), {6})
end)

test.case('divergence: SIMD efficiency over the divergent region, masks in the trace', function()
  local _, eo = kernels.divergence{pattern = 'even-odd', warps = 2}
  test.eq(eo.source, lm.cuda.is_available() and 'cuda' or 'emu')
  if eo.source == 'emu' then
    test.eq(eo.counters.simd_efficiency, 0.5)
    test.eq(eo.counters.divergent_branches, 2)
    local branch = eo.trace:filter{kind = 'branch'}[1]
    test.eq(branch.aux, 0x55555555)
  end
  local _, none = kernels.divergence{pattern = 'none', backend = 'emu'}
  test.eq(none.counters.simd_efficiency, 1)
  local _, warp = kernels.divergence{pattern = 'warp', backend = 'emu'}
  test.eq(warp.counters.simd_efficiency, 1)
  local _, half = kernels.divergence{pattern = 'half-warp', backend = 'emu'}
  test.eq(half.counters.simd_efficiency, 0.5)
  local y = kernels.divergence{pattern = 'data', backend = 'emu', warps = 1}
  test.eq(#y, 32)
  local _, naive = kernels.reduce(lm.ones(2048), {algo = 'naive', backend = 'emu', block = 1024})
  local _, conv = kernels.reduce(lm.ones(2048), {algo = 'convergent', backend = 'emu', block = 1024})
  test.ok(naive.counters.simd_efficiency < conv.counters.simd_efficiency)
  test.ok(naive.counters.divergent_branches > conv.counters.divergent_branches)
end)

test.case('streams: a modelled timeline where overlap beats serial', function()
  local c, info = kernels.streams{segments = 4, backend = 'emu'}
  test.eq(c[1]:item(), -3) -- A[0] + B[0] = 0 + (0 - 3)
  test.ok(info.counters.overlapped_ms < info.counters.serial_ms)
  test.ok(info.counters.speedup > 1)
  test.eq(#info.timeline, 24)
  local first = info.timeline[1]
  test.eq(first.schedule, 'serial')
  test.eq(first.op, 'h2d')
  test.eq(first.start_ms, 0)
  test.eq(info.timeline[13].schedule, 'overlapped')
  test.ok(tostring(info):find('timeline: 24 spans', 1, true))
  local _, one = kernels.streams{segments = 4, copy_engines = 1, pcie_gbps = 12.5, clock_ghz = 2,
                                 sms = 4, bytes = 4096, backend = 'emu'}
  test.eq(one.counters.copy_engines, 1)
  test.eq(one.counters.pcie_gbps, 12.5)
end)

test.case('bad input of kernels II', function()
  test.raises(function() kernels.histogram('abc', 0) end, 'kernels.histogram: bins 0 must be in 1..4096')
  test.raises(function() kernels.histogram('abc', 4097) end, 'bins 4097 must be in 1..4096')
  test.raises(function() kernels.histogram(lm.tensor({0, 9}, {dtype = 'uint8'}), 4) end,
              'kernels.histogram: element [2] is 9, not a bin index in 0..3 (bins 4)')
  test.raises(function() kernels.histogram(lm.ones(3), 4) end, 'the input has dtype float32')
  test.raises(function() kernels.histogram({1, 2}, 4) end, 'argument 1 must be a string or a tensor')
  test.raises(function() kernels.histogram('', 4) end, 'the input is empty')
  local img = lm.ones(5, 5)
  test.raises(function() kernels.conv2d(img, lm.ones(6, 3)) end,
              'kernels.conv2d: the mask [6, 3] is larger than the image [5, 5]')
  test.raises(function() kernels.conv2d(img, lm.ones(2, 2), {algo = 'tiled'}) end,
              "algo 'tiled' needs odd mask sides")
  test.raises(function() kernels.conv2d(img, lm.ones(3, 3), {tile = 0}) end, 'option tile must be at least 1, got 0')
  test.raises(function() kernels.matmul(lm.ones(2, 3), lm.ones(2, 3)) end, 'do not chain')
  test.raises(function() kernels.matmul(lm.ones(2, 2), lm.ones(2, 2), {format = 'csr'}) end,
              "kernels.matmul: unknown option 'format' (kernels.matmul takes algo, tile, tile_m, tile_n, "
              .. "tile_k, order, backend, trace, trace_cap or repeats)")
  test.raises(function() kernels.sparse{rows = {1, 4}, cols = {1, 1}, vals = {1, 2}, shape = {3, 3}} end,
              'kernels.sparse: rows[2] = 4 is out of range 1..3')
  test.raises(function() kernels.sparse{rows = {0}, cols = {1}, vals = {1}, shape = {3, 3}} end,
              'rows[1] = 0 is out of range 1..3')
  test.raises(function() kernels.sparse{rows = {1, 2}, cols = {1}, vals = {1, 2}, shape = {3, 3}} end,
              'cols [1] must be 1-D with one entry per value (2)')
  test.raises(function() kernels.sparse{rows = {1}, cols = {1}, vals = {1}, shape = {3}} end,
              'shape must be a table {m, n}')
  test.raises(function() kernels.sparse(lm.ones(3)) end, 'must be 2-D')
  local A = kernels.sparse(lm.eye(3))
  test.raises(function() kernels.spmv(A, lm.ones(4)) end,
              "kernels.spmv: the vector [4] does not match the matrix's 3 columns")
  test.raises(function() kernels.spmv(A, lm.ones(3), {format = 'dia'}) end, "unknown format 'dia'")
  test.raises(function() kernels.spmv(lm.ones(3, 3), lm.ones(3)) end, 'argument 1 must be a sparse matrix')
  test.raises(function() kernels.streams{segments = 0} end, 'option segments must be at least 1, got 0')
  test.raises(function() kernels.streams{segments = -2} end, 'option segments must be at least 1, got -2')
  test.raises(function() kernels.streams{segments = 300, backend = 'emu'} end, 'segments 300 must be in 1..255')
  test.raises(function() kernels.streams{pcie_gbps = 0} end, 'option pcie_gbps must be greater than 0')
  test.raises(function() kernels.divergence{backend = 'cpu'} end, 'there is no cpu run of this pattern')
  test.raises(function() kernels.divergence{pattern = 'spiral'} end, "unknown pattern 'spiral'")
end)
