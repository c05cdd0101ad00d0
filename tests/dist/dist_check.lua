--[[
tests/dist/dist_check.lua — run by tests/dist/run.sh under `mpirun -np N`: every collective of
lumen.dist against values every rank can compute alone (each rank's data is made from its rank by
a fixed formula, so the expected reduction is known everywhere), for MPI's own algorithm and the
ring (in C) and tree (in Lua) written on point-to-point messages: integer data bit for bit equal to MPI_Allreduce, float data within
rounding of a float64 sum, every rank ending with the same bits; odd, one-element, empty, 2-D and
transposed tensors; broadcast from every root, all_gather, reduce_scatter, send/recv/sendrecv around
the ring; a disagreement (another shape on one rank) is an error on every rank, and the world is
still usable after it. Prints "rank R: N checks passed" and exits 1 on a failure.
]]
local dist = require 'lumen.dist'
local rank, n = dist.init()
local checks, failed = 0, 0

local function ok(cond, what)
  checks = checks + 1
  if not cond then
    failed = failed + 1
    io.stderr:write(string.format('rank %d: FAIL: %s\n', rank, what))
  end
end

-- rank r's data: integers from a fixed formula, or floats with a wide range of magnitudes
local function data(r, k, dtype)
  if k == 0 then return lm.zeros(0, { dtype = dtype }) end
  local i = lm.arange(0, k, { dtype = 'float64' })
  if dtype == 'int64' or dtype == 'int32' then
    return ((i * 7 + r * 13) % 101 - 50):to(dtype)
  end
  return ((i * 0.37 + r * 1.3):sin() * (10 ^ (r % 3)) + r * 0.001):to(dtype)
end

local function expected(k, dtype, op)
  local acc
  for r = 0, n - 1 do
    local x = data(r, k, dtype):double()
    if not acc then acc = x:clone()
    elseif op == 'max' then acc = lm.maximum(acc, x)
    elseif op == 'min' then acc = lm.minimum(acc, x)
    else acc = acc + x end
  end
  if op == 'mean' then acc = acc / n end
  return acc
end

-- the same bits on every rank
local function same_everywhere(t, what)
  local g = dist.all_gather(t)
  local same = true
  for r = 2, n do
    if t:numel() > 0 and not lm.equal(g[r], g[1]) then same = false end
  end
  ok(same, what .. ': every rank holds the same values')
end

-- 100003 elements: the ring's chunks go in several segments of 128 KB (dist_mpi.c's RING_SEG)
for _, k in ipairs({ 0, 1, 7, 1000, 100003 }) do
  for _, dtype in ipairs({ 'int64', 'int32', 'float32', 'float64' }) do
    local ops = dtype:match('float') and { 'sum', 'mean', 'max', 'min' } or { 'sum', 'max', 'min' }
    for _, op in ipairs(ops) do
      local want = expected(k, dtype, op)
      local mpi_result
      for _, algo in ipairs({ 'mpi', 'ring', 'tree' }) do
        local t = data(rank, k, dtype)
        local r = dist.all_reduce(t, { op = op, algo = algo })
        ok(rawequal(r, t), 'all_reduce returns its tensor')
        local what = string.format('all_reduce %s %s of %d (%s)', op, dtype, k, algo)
        if dtype:match('int') then
          ok(k == 0 or lm.equal(t:double(), want), what .. ': exact')
        else
          local tol = dtype == 'float32' and 1e-5 or 1e-12
          local err = k == 0 and 0 or ((t:double() - want):abs() / (want:abs() + 1)):max():item()
          ok(err <= tol, string.format('%s: relative error %.3g', what, err))
        end
        same_everywhere(t, what)
        if algo == 'mpi' then mpi_result = t
        elseif dtype:match('int') then ok(k == 0 or lm.equal(t, mpi_result), what .. ': the bits of MPI_Allreduce') end
      end
    end
  end
end

-- 2-D and transposed (non-contiguous) tensors: reduced in place, their layout kept
do
  local base = data(rank, 12, 'float64'):view(3, 4)
  local t = base:t()
  dist.all_reduce(t, { algo = 'ring' })
  ok(lm.allclose(t, expected(12, 'float64', 'sum'):view(3, 4):t(), 1e-12, 1e-12), 'all_reduce of a transposed view')
  ok(lm.allclose(base, expected(12, 'float64', 'sum'):view(3, 4), 1e-12, 1e-12), 'through the view, its base')
end

-- broadcast from every root
for root = 0, n - 1 do
  local t = data(rank, 5, 'float32')
  dist.broadcast(t, root)
  ok(lm.equal(t, data(root, 5, 'float32')), 'broadcast from rank ' .. root)
end

-- all_gather: rank r's row is rank r's data
do
  local g = dist.all_gather(data(rank, 6, 'int64'):view(2, 3))
  ok(table.concat(g:shape(), 'x') == n .. 'x2x3', 'all_gather shape')
  for r = 0, n - 1 do ok(lm.equal(g[r + 1], data(r, 6, 'int64'):view(2, 3)), 'all_gather row of rank ' .. r) end
end

-- reduce_scatter: rank r gets rows r*2 .. r*2+1 of the sum
do
  local k = 2 * n * 3
  local out = dist.reduce_scatter(data(rank, k, 'int64'):view(2 * n, 3))
  local want = expected(k, 'int64', 'sum'):view(2 * n, 3):narrow(1, rank * 2 + 1, 2)
  ok(lm.equal(out:double(), want), 'reduce_scatter')
end

-- send/recv and sendrecv around the ring
if n > 1 then
  local right, left = (rank + 1) % n, (rank - 1) % n
  local got = lm.zeros(4)
  if rank % 2 == 0 then
    dist.send(data(rank, 4, 'float32'), right)
    dist.recv(got, left)
  else
    dist.recv(got, left)
    dist.send(data(rank, 4, 'float32'), right)
  end
  ok(lm.equal(got, data(left, 4, 'float32')), 'send/recv from the left neighbour')
  local into = lm.zeros(4)
  dist.sendrecv(data(rank, 4, 'float32'), right, into, left)
  ok(lm.equal(into, data(left, 4, 'float32')), 'sendrecv')
end

-- a disagreement is an error on every rank, not a hang; the world goes on
if n > 1 then
  local t = rank == 1 and lm.zeros(3, 2) or lm.zeros(2, 3)
  local okc, err = pcall(dist.all_reduce, t)
  ok(not okc and tostring(err):find('dist.all_reduce: the ranks disagree', 1, true)
    and tostring(err):find('rank 1: all_reduce sum mpi float32 [3, 2]', 1, true), 'a disagreement on every rank: ' .. tostring(err))
  local okd, err2 = pcall(dist.all_reduce, lm.zeros(2), { algo = rank == 0 and 'ring' or 'tree' })
  ok(not okd and tostring(err2):find('the ranks disagree', 1, true), 'another algorithm on one rank')
  dist.barrier()
  local t2 = lm.ones(2)
  dist.all_reduce(t2)
  ok(t2[1]:item() == n, 'the world is usable after the errors')
end

-- bad arguments
ok(not pcall(dist.all_reduce, lm.ones(2), { op = 'prod' }), "op 'prod' refused")
ok(select(2, pcall(dist.broadcast, lm.ones(2), n)):find('src must be a rank 0..' .. (n - 1), 1, true) ~= nil, 'broadcast from a rank past the world')
if n > 1 then
  ok(select(2, pcall(dist.reduce_scatter, lm.ones(n + 1))):find('must be a multiple of the world size', 1, true) ~= nil, 'reduce_scatter of an indivisible size')
  ok(select(2, pcall(dist.send, lm.ones(1), rank)):find('dst ' .. rank .. ' is this rank', 1, true) ~= nil, 'send to oneself')
end

print(string.format('rank %d of %d: %d checks, %d failed (%s)', rank, n, checks, failed, dist.mpi_version()))
if failed > 0 then os.exit(1) end
