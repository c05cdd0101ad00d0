--[[
kernels — the course's parallel patterns (docs/API.md, "kernels"): each runs on the SIMT emulator
('emu', traced, modelled cycles), natively on the CPU ('cpu', measured), on a GPU ('cuda',
measured with CUDA events) or on an OpenCL device ('opencl': the same bodies built as OpenCL C,
measured with OpenCL events). Every call returns `out, info`; info.source and info.provenance say
where the numbers came from.

The calls are C bindings (src/lua/kernels.c over include/lumen/kernels.h); this file makes them the
module and prints an info readably.
Read next: docs/trace.md (info.trace, info.timeline).
]]
local lm = require 'lumen'
local K = lm._kernels

local kernels = {
  reduce = K.reduce,   -- kernels.reduce(x [, {algo='naive'|'convergent'|'shared'|'coarsened', ...}])
  scan = K.scan,       -- kernels.scan(x [, {algo='kogge-stone'|'brent-kung'|'hierarchical', inclusive=}])
  -- kernels.histogram(string_or_tensor, bins [, {algo='global-atomic'|'privatized'|'aggregated', coarsen=}])
  histogram = K.histogram,
  -- kernels.matmul(a, b [, {algo='naive'|'tiled', tile=, tile_m=, tile_n=, tile_k=, order=}])
  -- (tile_m, tile_n, tile_k and order: the cpu run's cache tiles and loop order, lm.tune's knobs)
  matmul = K.matmul,
  -- kernels.conv2d(img, mask [, {algo='naive'|'constant'|'tiled'|'tiled-input'|'tiled-output', tile=,
  --                             tile_h=, tile_w=, order=}]) (tile_h, tile_w, order: the cpu run's)
  conv2d = K.conv2d,
  sparse = K.sparse,   -- kernels.sparse(dense) or kernels.sparse{rows=, cols=, vals=, shape={m, n}}
  spmv = K.spmv,       -- kernels.spmv(A, x [, {format='coo'|'csr'|'ell'|'jds'}])
  -- kernels.divergence{pattern='even-odd'|'half-warp'|'data'|'warp'|'none', warps=}
  divergence = K.divergence,
  -- kernels.streams{segments=, bytes=, copy_engines=, pcie_gbps=, clock_ghz=, sms=}
  streams = K.streams,
  -- the memory-access demos: kernels.coalescing(x [, {algo='coalesced'|'strided'}]) (column or row
  -- sums) and kernels.transpose(x [, {algo='naive'|'shared'|'padded'}])
  coalescing = K.coalescing,
  transpose = K.transpose,
  -- kernels.latency{global=, shared=, constant=, arith=, barrier=, sms=, issue=, sector=,
  --                 warps_per_sm=, blocks_per_sm=, shared_per_sm=}
  latency = K.latency,
  -- kernels.cpu_info() -> {isa=, cpu=, threads=}: what the cpu runs' measured times depend on (the
  -- SIMD path, the CPU, the threads); lm.tune keys its cache by them
  cpu_info = K.cpu_info,
  -- An OpenCL C kernel of the student's, run for real on the OpenCL device (PoCL on the CPU):
  -- kernels.opencl(source, {global=, local=, args={tensor | number | {local_bytes=N}, ...},
  -- kernel=, repeats=}) -> info (time_ms by events, compile_ms, cached); non-const tensors get
  -- the results in place. docs/opencl.md.
  opencl = K.opencl,
  -- BANG on a simulated MLU (AICS ch. 8): kernels.bang.device{clusters=4}, dev:malloc/memcpy/
  -- queue/launch, q:sync(); kernels in Lua in BANG C's names (lua/lumen/bang.lua, docs/bang.md)
  bang = require 'lumen.bang',
  -- What each call takes: {call = {args=, {key=, kind=, values=, default=, doc=}, ...}}, the table
  -- the binding checks options against (src/lua/kernel_opts.c); :help kernels.<call> prints it.
  options = K.options,
  -- Student kernels (docs/student-kernels.md): kernels.launch(fn, {grid=, block=, shared=, args=,
  -- const=}) runs fn(t, ...) once per thread on the emulator and returns info; arrays are 0-based.
  launch = K.launch,
  racecheck = K.racecheck, -- kernels.racecheck([on]): the race check of every emulated run
  -- kernels.last_fault(): what stopped the last emulated launch that failed, as a table (kind,
  -- array, index, hazard, the threads, ...; nil after a launch that succeeded)
  last_fault = K.last_fault,
  -- kernels.last_run(): the info of the last kernels.launch that succeeded
  last_run = K.last_run,
  -- GPU-Puzzles on the emulator: kernels.puzzles.list/describe/check/run (lua/lumen/puzzles.lua)
  puzzles = require 'lumen.puzzles',
}

--- Small inputs of each call, for :help (which counters a run gives) and the tests: returns the
--- positional arguments and an options table to add to.
kernels.samples = {
  reduce = function() return lm.arange(1, 65):float(), {} end,
  scan = function() return lm.arange(1, 17):float(), {} end,
  histogram = function() return 'the course of parallel patterns', 8, {} end,
  matmul = function() return lm.ones(8, 8), lm.ones(8, 8), {} end,
  conv2d = function() return lm.ones(8, 8), lm.ones(3, 3), {} end,
  spmv = function() return kernels.sparse(lm.eye(8)), lm.ones(8), {} end,
  divergence = function() return {} end,
  streams = function() return { bytes = 4096 } end,
  coalescing = function() return lm.ones(8, 8), {} end,
  transpose = function() return lm.ones(8, 8), {} end,
}

--- tostring(info): what ran where (the label: the variant left out where it did not run; impl: the
--- implementation that ran), then the counters in their order.
K.Info.__tostring = function(info)
  if getmetatable(info) ~= K.Info or type(rawget(info, 'counter_names')) ~= 'table'
      or type(rawget(info, 'counters')) ~= 'table' then
    error('kernels.Info.__tostring: expected the info table of a kernels call, got ' .. type(info), 2)
  end
  local label, impl = rawget(info, 'label'), rawget(info, 'impl')
  local lines = {type(label) == 'string' and label or
                 string.format('%s %s: %s (%s)', info.pattern, info.algo, info.provenance, info.device)}
  if type(impl) == 'string' then lines[2] = '  impl: ' .. impl end
  if type(rawget(info, 'model')) == 'string' then lines[#lines + 1] = '  model: info.model' end
  local names, counters = rawget(info, 'counter_names'), rawget(info, 'counters')
  for i = 1, rawlen(names) do -- raw: a table made to look like an info must not loop forever
    local name = rawget(names, i)
    local v = rawget(counters, name)
    lines[#lines + 1] = string.format('  %-24s %s', name,
      math.type(v) == 'float' and string.format('%.4g', v) or tostring(v))
  end
  if info.trace then lines[#lines + 1] = '  ' .. tostring(info.trace) end
  if info.timeline then
    lines[#lines + 1] = string.format('  timeline: %d spans (info.timeline)', #info.timeline)
  end
  return table.concat(lines, '\n')
end

return kernels
