--[[
bench/dist/allreduce.lua — all_reduce bus bandwidth, as NCCL-tests report it: busbw = S / t *
2 (n - 1) / n for S bytes in t seconds on n ranks, for float32 tensors of 1 KB to 64 MB: MPI's own
MPI_Allreduce ('mpi', Open MPI's choice of algorithm) against Lumen's ring and tree written in Lua on
sendrecv, in the same run. Median of repeats after a warm-up; rank 0 prints the table.
  mpirun --allow-run-as-root -np 2 lumen bench/dist/allreduce.lua   (bench/dist/run.sh does this)
]]
local dist = require 'lumen.dist'
local rank, n = dist.init()
local sizes = {}
for e = 10, 26, 2 do sizes[#sizes + 1] = 1 << e end -- 1 KB .. 64 MB
local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end
if rank == 0 then
  print(string.format('bench/dist/allreduce.lua: %d ranks, %s, float32, median of repeats', n, dist.mpi_version()))
  print(string.format('%10s %14s %14s %14s %10s %10s', 'bytes', 'mpi GB/s', 'ring GB/s', 'tree GB/s', 'ring/mpi', 'tree/mpi'))
end
for _, bytes in ipairs(sizes) do
  local t = lm.ones(bytes // 4)
  local reps = bytes <= (1 << 16) and 200 or bytes <= (1 << 22) and 20 or 5
  local bw, lat = {}, {}
  for _, algo in ipairs({ 'mpi', 'ring', 'tree' }) do
    dist.all_reduce(t, { algo = algo }) -- warm-up
    local times = {}
    for i = 1, reps do
      dist.barrier()
      local t0 = dist.wtime()
      dist.all_reduce(t, { algo = algo })
      times[i] = dist.wtime() - t0
    end
    local s = median(times)
    lat[algo] = s
    bw[algo] = bytes / s * 2 * (n - 1) / n / 1e9
  end
  if rank == 0 then
    print(string.format('%10d %14.3f %14.3f %14.3f %10.2f %10.2f', bytes, bw.mpi, bw.ring, bw.tree, bw.ring / bw.mpi,
      bw.tree / bw.mpi))
    if bytes == 1024 then
      print(string.format('%10s latency at 1 KB: mpi %.1f us, ring %.1f us, tree %.1f us', '', lat.mpi * 1e6,
        lat.ring * 1e6, lat.tree * 1e6))
    end
  end
end
