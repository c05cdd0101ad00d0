-- bench/opencl/run.lua — what portability costs, measured in one run (ECE408 L23's question):
--   1. SGEMM 1024^3 in float32: the course's tiled kernel (body/matmul.h) built as OpenCL C on
--      PoCL, the OpenCL device's own tiled matmul (tensor.cl, x:to('opencl'):matmul), a tiled
--      kernel written as a student would (kernels.opencl), against Lumen's CPU runs: the course's
--      native tiled matmul (kernels.matmul backend='cpu', OpenMP) and x:matmul (OpenBLAS's sgemm);
--   2. an elementwise add of 2^24 float32 on PoCL in GB/s against a memcpy of the same bytes;
--   3. kernel compile time: a source PoCL has never seen, the same source in a new process (PoCL's
--      own disk cache) and again in this process (Lumen's program cache).
-- Usage: lumen bench/opencl/run.lua [--quick]   (or bench/opencl/run.sh: pins the thread count)
-- Every figure says what produced it and how it was timed. PoCL runs on the same cores as the
-- CPU runs, with its own threads (one per core); nothing else should run meanwhile.
local kernels = require 'lumen.kernels'

local quick = arg and arg[1] == '--quick'
if not lm.opencl.is_available() then
  print('bench/opencl: no OpenCL device: ' .. lm.opencl.unavailable_reason())
  os.exit(0)
end
local dev
for _, d in ipairs(lm.opencl.devices()) do if d.in_use then dev = d end end
print(string.format('OpenCL device: %s (%s, %s, %d compute units); Lumen threads: %d; BLAS: %s',
  dev.name, dev.platform, dev.version, dev.compute_units, lm.get_num_threads(), lm.build_info().blas or '?'))

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or 0.5 * (t[n // 2] + t[n // 2 + 1])
end

-- wall-clock median of fn over reps runs after a warm-up
local function wall(fn, reps)
  fn()
  local ts = {}
  for i = 1, reps do
    local t0 = lm.sys.clock()
    fn()
    ts[i] = (lm.sys.clock() - t0) * 1e3
  end
  return median(ts)
end

local N = quick and 256 or 1024
local reps = quick and 3 or 5
lm.manual_seed(1)
local A, B = lm.randn(N, N), lm.randn(N, N)
local ref = A:matmul(B)
local flop = 2.0 * N * N * N
local rows = {}
local function row(what, how, ms, err)
  rows[#rows + 1] = {what, how, ms, flop / (ms * 1e6), err}
end

-- the course's tiled kernel on PoCL (events: kernel time only)
local C, info = kernels.matmul(A, B, {backend = 'opencl', algo = 'tiled', tile = 16, repeats = reps})
row('course tiled kernel (body/matmul.h) as OpenCL C, PoCL', 'OpenCL events', info.counters.time_ms,
  (C - ref):abs():max():item())
C, info = kernels.matmul(A, B, {backend = 'opencl', algo = 'naive', repeats = reps})
row('course naive kernel (body/matmul.h) as OpenCL C, PoCL', 'OpenCL events', info.counters.time_ms,
  (C - ref):abs():max():item())

-- the OpenCL device's matmul (tensor.cl), operands already on the device
local dA, dB = A:to('opencl'), B:to('opencl')
local ms = wall(function() local c = dA:matmul(dB); lm.opencl.synchronize(); return c end, reps)
row("OpenCL device's matmul (tensor.cl, tiled 16x16), PoCL", 'wall, synchronized', ms,
  (dA:matmul(dB):cpu() - ref):abs():max():item())

-- a student's tiled kernel
local TILED = [[
#define TILE 16
__kernel void mm(__global const float *A, __global const float *B, __global float *C, int n)
{
  __local float As[TILE][TILE], Bs[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_group_id(0) * TILE + tx, row = get_group_id(1) * TILE + ty;
  float acc = 0;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    As[ty][tx] = A[row * n + k0 + tx];
    Bs[ty][tx] = B[(k0 + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * n + col] = acc;
}]]
local Cs = lm.zeros(N, N)
info = kernels.opencl(TILED, {global = {N, N}, ['local'] = {16, 16}, args = {A, B, Cs, N}, repeats = reps})
row('a student tiled kernel (kernels.opencl), PoCL', 'OpenCL events', info.time_ms, (Cs - ref):abs():max():item())

-- the CPU anchors
C, info = kernels.matmul(A, B, {backend = 'cpu', repeats = reps})
row('course CPU matmul (kernels.matmul cpu: ' .. info.impl:gsub('^cpu: ', '') .. ')', 'wall, caches flushed',
  info.counters.time_ms, (C - ref):abs():max():item())
ms = wall(function() return A:matmul(B) end, reps)
row('Lumen x:matmul (OpenBLAS sgemm)', 'wall', ms, 0)

print(string.format('\n1. SGEMM %d^3 float32 (median of %d)', N, reps))
print(string.format('%-72s %-22s %10s %9s %10s', 'implementation', 'timed by', 'ms', 'GFLOP/s', 'max |err|'))
for _, r in ipairs(rows) do
  print(string.format('%-72s %-22s %10.2f %9.2f %10.2e', r[1], r[2], r[3], r[4], r[5]))
end

-- 2. bandwidth
local M = quick and (1 << 20) or (1 << 24)
local x, y, z = lm.randn(M), lm.randn(M), lm.zeros(M)
local VADD = [[__kernel void vadd(__global const float *a, __global const float *b, __global float *c)
{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }]]
info = kernels.opencl(VADD, {global = M, ['local'] = 256, args = {x, y, z}, repeats = reps})
local add_bytes = 3.0 * 4 * M
local dx, dy = x:to('opencl'), y:to('opencl')
local dev_ms = wall(function() local r = dx + dy; lm.opencl.synchronize(); return r end, reps)
local w = lm.empty(M)
local copy_ms = wall(function() return w:copy_(x) end, reps)
print(string.format('\n2. elementwise add of 2^%d float32 (3 x %d MiB moved; median of %d)',
  math.floor(math.log(M, 2) + 0.5), 4 * M >> 20, reps))
print(string.format('%-60s %-22s %9s %8s', 'implementation', 'timed by', 'ms', 'GB/s'))
print(string.format('%-60s %-22s %9.2f %8.2f', 'kernels.opencl vadd, PoCL', 'OpenCL events', info.time_ms,
  add_bytes / (info.time_ms * 1e6)))
print(string.format('%-60s %-22s %9.2f %8.2f', 'OpenCL device a + b (tensor.cl binary_dense; a new output each)',
  'wall, synchronized', dev_ms, add_bytes / (dev_ms * 1e6)))
print(string.format('%-60s %-22s %9.2f %8.2f', 'memcpy of one operand (w:copy_(x), 2 x 4 bytes each)', 'wall',
  copy_ms, 2.0 * 4 * M / (copy_ms * 1e6)))

-- 3. compile time: a source nobody has built, in a fresh process (PoCL's and LLVM's start-up
-- included) and in this warm one; the same source in a fresh process (PoCL's disk cache); and
-- again here (Lumen's program cache)
local exe = lm.sys.executable()
local function child_compile(src)
  local script = os.tmpname()
  local f = io.open(script, 'w')
  f:write('local k = require("lumen.kernels")\nlocal t0 = lm.sys.clock()\nlocal s = ', string.format('%q', src), '\n',
    'local i = k.opencl(s, {global = 1, args = {lm.zeros(1), lm.zeros(1), lm.zeros(1)}})\n',
    'print(string.format("%.3f %.3f", i.compile_ms, (lm.sys.clock() - t0) * 1e3))\n')
  f:close()
  local p = io.popen("'" .. exe .. "' " .. script .. ' 2>/dev/null')
  local build, total = p:read('n', 'n')
  p:close()
  os.remove(script)
  return build or -1, total or -1
end
local function unique() return string.format('/* %d %.6f %d */\n', os.time(), lm.sys.clock(), math.random(1 << 30)) end
local fresh_src = unique() .. VADD
local cold_build, cold_total = child_compile(fresh_src)
local disk_build = child_compile(fresh_src)
local src = unique() .. VADD
local a1 = kernels.opencl(src, {global = 1, args = {lm.zeros(1), lm.zeros(1), lm.zeros(1)}})
local a3 = kernels.opencl(src, {global = 1, args = {lm.zeros(1), lm.zeros(1), lm.zeros(1)}})
print('\n3. building the vadd kernel (clBuildProgram, wall)')
print(string.format('  a new source, first in a fresh process:           %8.1f ms (%.1f ms to the first result, runtime start-up included)', cold_build, cold_total))
print(string.format("  the same source in another fresh process (PoCL's disk cache): %8.1f ms", disk_build))
print(string.format('  another new source in this warm process:          %8.1f ms', a1.compile_ms))
print(string.format("  the same again in this process (Lumen's cache):    %8.3f ms (cached = %s)", a3.compile_ms, tostring(a3.cached)))
