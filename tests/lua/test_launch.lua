-- kernels.launch: a Lua function per thread on the SIMT emulator. Lua kernels written like the C
-- bodies (Kogge-Stone, the shared-memory reduction) give the same outputs, counters and trace
-- events; the sanitizer's checks (bounds, deadlocks, races, errors in a thread, a kernel that
-- never returns) with their messages; bad input.
local test = require 'lumen.test'
local kernels = require 'kernels'

local function randn_list(n, seed)
  lm.manual_seed(seed)
  return lm.rand(n)
end

-- ---------------------------------------------------------------- the kernels of the tests

-- body/scan.h's scan_kogge_stone, line for line (one element per thread, inclusive, one block)
local function kogge_stone(t, X, Y, n)
  local XY = t.shared.XY
  local tid = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + tid
  local v = 0
  if i < n then v = X[i] end
  XY[tid] = v
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp = 0
    local adds = t:branch(tid >= stride)
    if adds then
      local mine = XY[tid]
      local left = XY[tid - stride]
      temp = t:add(mine, left, i >= n)
    end
    t:sync()
    if adds then XY[tid] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[tid] end
end

-- the same without the barrier between reading and writing: a race
local function kogge_stone_racy(t, X, Y, n)
  local XY = t.shared.XY
  local tid = t.threadIdx.x
  XY[tid] = X[tid]
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp = 0
    if tid >= stride then temp = t:add(XY[tid], XY[tid - stride]) end
    if tid >= stride then XY[tid] = temp end
    stride = stride * 2
  end
  Y[tid] = XY[tid]
end

-- body/reduce.h's reduce_shared
local function reduce_shared(t, input, output, n)
  local input_s = t.shared.input_s
  local bd = t.blockDim.x
  local segment = 2 * bd * t.blockIdx.x
  local tid = t.threadIdx.x
  local i = segment + tid
  local a = 0
  if i < n then a = input[i] end
  local b = 0
  if i + bd < n then b = input[i + bd] end
  input_s[tid] = t:add(a, b, i + bd >= n)
  local stride = bd // 2
  while stride >= 1 do
    t:sync()
    if t:branch(tid < stride) then
      local mine = input_s[tid]
      local right = input_s[tid + stride]
      input_s[tid] = t:add(mine, right, i + stride >= n)
    end
    stride = stride // 2
  end
  if tid == 0 then t:atomic_add(output, 0, input_s[0]) end
end

-- Every counter of the C run equals the Lua run's, and every trace event (arrays by name; the
-- source lines differ: a C header's against a Lua chunk's).
local function same_run(c, l, what)
  test.eq(l.source, 'emu', what)
  test.eq(l.pattern, 'launch', what)
  for _, name in ipairs(c.counter_names) do
    test.eq(l.counters[name], c.counters[name], what .. ': counter ' .. name)
  end
  local tc, tl = c.trace, l.trace
  test.eq(#tl, #tc, what .. ': events')
  test.eq(#tl:steps(), #tc:steps(), what .. ': barrier phases')
  for i = 1, #tc do
    local a, b = tc[i], tl[i]
    for k, v in pairs(a) do
      if k ~= 'line' and b[k] ~= v then
        test.eq(b[k], v, string.format('%s: event %d field %s', what, i, k))
      end
    end
  end
end

-- ---------------------------------------------------------------- cases

test.case('a map kernel: positional and named arguments, guards, blocks, 2-D indices', function()
  for _, n in ipairs{1, 5, 33, 100} do
    local a, out = randn_list(n, n), lm.zeros(n)
    local block = 32
    local info = kernels.launch(function(t, out, a, n)
      local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
      if i < n then out[i] = a[i] + 10 end
    end, {grid = (n + block - 1) // block, block = block, args = {out, a, n}})
    test.tensor_near(out, a + 10)
    test.eq(info.counters.global_loads, n)
    test.eq(info.counters.global_stores, n)
    test.eq(info.counters.threads, ((n + block - 1) // block) * block)
  end
  -- by parameter name, a 2-D block, and arrays that are views: read and written through
  local a = lm.arange(0, 12):float():view(3, 4)
  local out = lm.zeros(3, 4)
  kernels.launch(function(t, out, a, rows, cols)
    local r, c = t.threadIdx.y, t.threadIdx.x
    if r < rows and c < cols then out[r * cols + c] = a[r * cols + c] * 2 end
  end, {block = {3, 4}, args = {a = a:t(), out = out:t(), rows = 4, cols = 3}})
  test.tensor_near(out, a * 2)
  -- integer arrays give integers; #a is the length
  local h = lm.tensor({5, 6, 7}, {dtype = 'int32'})
  local got = lm.zeros(3, {dtype = 'int64'})
  kernels.launch(function(t, got, h)
    local i = t.threadIdx.x
    got[i] = math.type(h[i]) == 'integer' and h[i] * #h or -1
  end, {block = 3, args = {got, h}})
  test.eq(got:tolist(), {15, 18, 21})
end)

test.case('info: like every kernels call, with the trace the scenes draw', function()
  local x = lm.ones(8)
  function lua_map_kernel(t, x) x[t.threadIdx.x] = x[t.threadIdx.x] + 1 end
  local info = kernels.launch(lua_map_kernel, {block = 8, args = {x}})
  lua_map_kernel = nil
  test.eq(info.source, 'emu')
  test.eq(info.provenance, 'emulated, modelled cycles')
  test.eq(info.pattern, 'launch')
  test.eq(info.algo, 'lua_map_kernel')
  test.ok(info.impl:find('emu: lua_map_kernel (Lua, ', 1, true), info.impl)
  test.ok(info.counters.modelled_cycles > 0)
  test.eq(info.counter_names[1], 'modelled_cycles')
  test.eq(info.trace.name, 'launch lua_map_kernel')
  test.eq(#info.trace, 16)
  test.eq(info.trace:arrays()[1].name, 'x')
  test.ok(tostring(info):find('launch lua_map_kernel: emulated', 1, true))
  test.eq(x:sum():item(), 16)
  test.eq(kernels.launch(function() end, {block = 1, name = 'empty'}).algo, 'empty')
end)

test.case('Kogge-Stone in Lua: the outputs, counters and trace events of body/scan.h', function()
  for _, c in ipairs{{16, 16, 'float32'}, {37, 64, 'float32'}, {64, 64, 'float64'}, {5, 8, 'float64'}} do
    local n, block, dtype = c[1], c[2], c[3]
    local x = randn_list(n, n):to(dtype)
    local yc, ic = kernels.scan(x, {backend = 'emu', algo = 'kogge-stone', block = block})
    local y = lm.zeros(n, {dtype = dtype})
    local il = kernels.launch(kogge_stone, {block = block, args = {x, y, n}, shared = {XY = block}})
    test.eq(y:tolist(), yc:tolist(), 'outputs n=' .. n)
    same_run(ic, il, 'kogge-stone n=' .. n .. ' ' .. dtype)
  end
end)

test.case('the shared-memory reduction in Lua: outputs, counters and trace events of body/reduce.h', function()
  for _, c in ipairs{{100, 64}, {1000, 64}, {37, 32}, {1, 1}} do
    local n, block = c[1], c[2]
    local x = randn_list(n, 7 * n)
    local sc, ic = kernels.reduce(x, {backend = 'emu', algo = 'shared', block = block})
    local out = lm.zeros(1)
    local grid = (n + 2 * block - 1) // (2 * block)
    local il = kernels.launch(reduce_shared, {grid = grid, block = block, args = {x, out, n},
                                              shared = {input_s = block}})
    test.eq(out[1]:item(), sc:item(), 'sum n=' .. n)
    same_run(ic, il, 'reduce shared n=' .. n)
  end
end)

test.case('atomics: a privatized histogram in Lua counts what kernels.histogram counts', function()
  local n, bins = 300, 8
  local v = {}
  for i = 1, n do v[i] = (i * i + 3 * i) % bins end
  local x = lm.tensor(v, {dtype = 'int32'})
  local want = kernels.histogram(x, bins, {backend = 'cpu'})
  local h = lm.zeros(bins, {dtype = 'int32'})
  local info = kernels.launch(function(t, x, h, n, bins)
    local hs = t.shared.hs
    local tid = t.threadIdx.x
    if tid < bins then hs[tid] = 0 end
    t:sync()
    local i = t.blockIdx.x * t.blockDim.x + tid
    if i < n then t:atomic_add(hs, x[i], 1) end
    t:sync()
    if tid < bins then
      local c = hs[tid]
      if c > 0 then t:atomic_add(h, tid, c) end
    end
  end, {grid = 5, block = 64, args = {x, h, n, bins}, shared = {hs = {bins, 'int32'}}})
  test.eq(h:tolist(), want:tolist())
  test.eq(info.counters.shared_atomics, n)
  local merged = 0 -- the blocks' nonzero bins: one global atomic each
  for b = 0, 4 do
    local seen = {}
    for i = b * 64 + 1, math.min(n, b * 64 + 64) do
      if not seen[v[i]] then seen[v[i]] = true; merged = merged + 1 end
    end
  end
  test.eq(info.counters.atomics, merged)
  test.ok(info.counters.shared_conflicts > 0)
end)

test.case('memcheck: out-of-bounds accesses and read-only arrays name thread, block, array and index', function()
  local a = lm.zeros(8)
  local msg = test.raises(function()
    kernels.launch(function(t, a) local v = a[t.threadIdx.x + 1] end, {block = 8, args = {a}})
  end, "out-of-bounds load of global array 'a' at index 8 (length 8; arrays are indexed from 0, as in "
    .. "CUDA C) at line")
  test.ok(msg:find('at line %d+ by thread %(7,0,0%) in block %(0,0,0%) %(kernel anonymous%)'), msg)
  test.raises(function()
    kernels.launch(function(t, a) a[-1] = 1 end, {grid = {1, 2}, block = 2, args = {a}})
  end, "out%-of%-bounds store of global array 'a' at index %-1 .- by thread %(0,0,0%) in block %(0,0,0%)")
  test.raises(function()
    kernels.launch(function(t) t.shared.s[t.threadIdx.x * 2] = 1 end, {block = 4, shared = {s = 4}})
  end, "out%-of%-bounds store of shared array 's' at index 4 .- by thread %(2,0,0%)")
  test.raises(function()
    kernels.launch(function(t) t.const.m[0] = 1 end, {block = 1, const = {m = lm.ones(3)}})
  end, "store to read-only constant array 'm' at index 0")
  -- the traceback of the thread follows the message
  msg = test.raises(function()
    kernels.launch(function(t, a) local v = a[100] end, {block = 1, args = {a}})
  end, 'index 100')
  test.ok(msg:find('stack traceback', 1, true), msg)
  -- a pcall inside the kernel cannot hide a failed check
  test.raises(function()
    kernels.launch(function(t, a) pcall(function() return a[99] end); a[0] = 1 end, {block = 1, args = {a}})
  end, 'index 99')
  test.eq(a:sum():item(), 0)
end)

test.case('deadlocks: a barrier not every thread of a block reaches', function()
  test.raises(function()
    kernels.launch(function(t) if t.threadIdx.x < 8 then t:sync() end end, {block = 40})
  end, 'deadlock in block %(0,0,0%) %(kernel [%w_]+%): warp 0 lanes 0%-7 wait at __syncthreads on '
    .. 'line %d+, which warp 0 lanes 8%-31, warp 1 lanes 0%-7 never reach')
  test.raises(function()
    kernels.launch(function(t)
      if t.threadIdx.x % 2 == 0 then
        t:sync()
      else
        t:sync()
      end
    end, {block = 4, grid = 3})
  end, 'deadlock in block %(0,0,0%) .-: warp 0 lanes 0,2 wait at __syncthreads on line %d+, warp 0 '
    .. 'lanes 1,3 at the one on line %d+')
end)

test.case('racecheck: the missing barrier of Kogge-Stone is found, and the barrier restored passes', function()
  local n = 16
  local x, y = lm.ones(n), lm.zeros(n)
  local msg = test.raises(function()
    kernels.launch(kogge_stone_racy, {block = n, args = {x, y, n}, shared = {XY = n}})
  end, "read%-after%-write race on shared array 'XY' at index 1 %(0%-based%) in block %(0,0,0%) "
    .. "%(kernel kogge_stone_racy%): thread %(1,0,0%) wrote it at line %d+ and thread %(2,0,0%) read it at line "
    .. "%d+ in the same barrier phase %(phase 1 of the block, counted from 0%)")
  test.ok(msg:find('t:sync()', 1, true))
  kernels.launch(kogge_stone, {block = n, args = {x, y, n}, shared = {XY = n}})
  test.eq(y:tolist(), lm.arange(1, n + 1):float():tolist())
  -- without the check the racy kernel runs, and its result is wrong in this emulated order
  kernels.launch(kogge_stone_racy, {block = n, args = {x, y, n}, shared = {XY = n}, racecheck = false})
  test.ok(y[n]:item() ~= n, 'the racy scan gave the right sum')
  local was = kernels.racecheck(false)
  test.eq(was, true)
  kernels.launch(kogge_stone_racy, {block = n, args = {x, y, n}, shared = {XY = n}})
  test.eq(kernels.racecheck(was), false)
  test.eq(kernels.racecheck(), true)
end)

test.case('racecheck: global memory, write-after-read, atomics, and no race across phases', function()
  local a = lm.zeros(4)
  test.raises(function()
    kernels.launch(function(t, a) local v = a[(t.threadIdx.x + 1) % 4]; a[t.threadIdx.x] = v end,
      {block = 4, args = {a}})
  end, "write%-after%-read race on global array 'a' at index 1 .-thread %(0,0,0%) read it at line "
    .. "%d+ and thread %(1,0,0%) wrote it")
  test.raises(function()
    kernels.launch(function(t, a) a[0] = t.threadIdx.x end, {block = 2, args = {a}})
  end, 'write%-after%-write race on global array')
  test.raises(function()
    kernels.launch(function(t, a) if t.threadIdx.x == 0 then a[1] = 5 else t:atomic_add(a, 1, 1) end end,
      {block = 2, args = {a}})
  end, "atomic and plain race on global array 'a' at index 1")
  -- atomics among themselves, the same thread, and phases apart do not race; nor do blocks
  -- that touch the same element only atomically, or only read it
  a:zero_()
  kernels.launch(function(t, a)
    t:atomic_add(a, 0, 1)
    a[t.threadIdx.x + 1] = 1
    local v = a[t.threadIdx.x + 1]
    t:sync()
    if t.threadIdx.x == 0 then a[1] = a[2] + a[3] end
  end, {block = 2, args = {a}})
  test.eq(a:tolist(), {2, 1, 1, 0})
  local b = lm.zeros(8)
  kernels.launch(function(t, a, b)
    t:atomic_add(a, 0, 1)
    b[t.blockIdx.x * 2 + t.threadIdx.x] = a[3] + 1
  end, {block = 2, grid = 4, args = {a, b}})
  test.eq(a:tolist(), {10, 1, 1, 0})
  test.eq(b:tolist(), {1, 1, 1, 1, 1, 1, 1, 1})
end)

-- Blocks are never ordered on a GPU (and run at the same time): plain accesses of two blocks to
-- one global element, at least one a write, race whatever their phases; the fix named depends on
-- what the blocks did (the race checker's advice), and kernels.last_fault() describes it.
test.case('racecheck across blocks: read-modify-write, two writers, a read of another block\'s write', function()
  local h = lm.zeros(4, {dtype = 'int32'})
  local msg = test.raises(function()
    kernels.launch(function(t, h) local i = t.threadIdx.x; h[i] = h[i] + 1 end,
      {block = 4, grid = 3, args = {h}})
  end, "read%-after%-write race across blocks on global array 'h' at index 0 %(0%-based%)")
  test.ok(msg:find('thread %(0,0,0%) of block %(0,0,0%) wrote it at line %d+ and thread %(0,0,0%) of block %(1,0,0%) read it'), msg)
  test.ok(msg:find('make the update atomic', 1, true), msg)
  local f = kernels.last_fault()
  test.eq({f.kind, f.hazard, f.across_blocks, f.rmw, f.array, f.index}, {'race', 'read-after-write', true, true, 'h', 0})
  test.eq({f.first.block.x, f.second.block.x, f.first.access, f.second.access}, {0, 1, 'store', 'load'})
  -- the same with atomics: no race, the right counts
  h:zero_()
  kernels.launch(function(t, h) t:atomic_add(h, t.threadIdx.x, 1) end, {block = 4, grid = 3, args = {h}})
  test.eq(h:tolist(), {3, 3, 3, 3})
  -- two blocks store to one element (the index forgot the block)
  local out = lm.zeros(8)
  msg = test.raises(function()
    kernels.launch(function(t, out) out[t.threadIdx.x] = t.blockIdx.x end, {block = 4, grid = 2, args = {out}})
  end, "write%-after%-write race across blocks on global array 'out' at index 0")
  test.ok(msg:find('does the index include the block', 1, true), msg)
  test.eq(kernels.last_fault().rmw, false)
  -- a block reads what another wrote, phases apart: still a race (no barrier spans blocks)
  msg = test.raises(function()
    kernels.launch(function(t, out)
      if t.blockIdx.x == 0 then out[5] = 1 end
      t:sync()
      if t.blockIdx.x == 1 then local v = out[5] end
    end, {block = 1, grid = 2, args = {out}})
  end, "read%-after%-write race across blocks on global array 'out' at index 5")
  test.ok(msg:find('split the work into two launches', 1, true), msg)
  -- an atomic in one block, a plain read in another
  test.raises(function()
    kernels.launch(function(t, out)
      if t.blockIdx.x == 0 then t:atomic_add(out, 2, 1) else local v = out[2] end
    end, {block = 1, grid = 2, args = {out}})
  end, "atomic and plain race across blocks on global array 'out' at index 2")
  -- racecheck = false: the emulator's order, no report; the fault is forgotten after a success
  kernels.launch(function(t, h) local i = t.threadIdx.x; h[i] = h[i] + 1 end,
    {block = 4, grid = 3, args = {h}, racecheck = false})
  test.eq(kernels.last_fault(), nil)
  -- a 2-D guard on one coordinate only: the advice says to guard each
  local m = lm.zeros(5, 5)
  msg = test.raises(function()
    kernels.launch(function(t, m, size)
      local col = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
      local row = t.blockIdx.y * t.blockDim.y + t.threadIdx.y
      if row < size and col < size + 1 then m[row * size + col] = 1 end
    end, {block = {3, 3}, grid = {2, 2}, args = {m, 5}})
  end, 'is each coordinate guarded on its own')
end)

-- In a race within a block the advice follows the race: a read-modify-write needs an atomic, many
-- threads storing one element need one writer, two 2-D threads colliding need both guards.
test.case('racecheck within a block: the advice names the fix', function()
  local h = lm.zeros(4, {dtype = 'int32'})
  local msg = test.raises(function()
    kernels.launch(function(t, h) local v = t.threadIdx.x % 4; h[v] = h[v] + 1 end, {block = 8, args = {h}})
  end, "race on global array 'h' at index 0")
  test.ok(msg:find('a barrier cannot order such updates, an atomic can', 1, true), msg)
  test.ok(not msg:find('a barrier between them', 1, true), msg)
  test.eq(kernels.last_fault().rmw, true)
  local out = lm.zeros(1)
  msg = test.raises(function()
    kernels.launch(function(t, out) out[0] = t.threadIdx.x end, {block = 8, args = {out}})
  end, 'write%-after%-write race')
  test.ok(msg:find('let one thread write it', 1, true), msg)
  test.eq(kernels.last_fault().writers, 8)
  -- a plain read after another thread's write in the same phase: the barrier
  msg = test.raises(function()
    kernels.launch(function(t, out, x)
      x[t.threadIdx.x] = 1
      out[0] = x[(t.threadIdx.x + 1) % 2]
    end, {block = 2, args = {lm.zeros(1), lm.zeros(2)}})
  end, 'race')
  test.ok(msg:find('a barrier between them', 1, true), msg)
end)

-- compute-sanitizer's initcheck: shared memory is not zeroed on a GPU, and lm.empty's elements
-- hold whatever the memory held; a read (or an atomicAdd) before any write is an error naming the
-- block, the thread, the array and the index; initcheck = false turns it off for one launch.
test.case('initcheck: shared memory and lm.empty read before any write', function()
  local out = lm.zeros(4)
  local msg = test.raises(function()
    kernels.launch(function(t, out)
      local s = t.shared.s
      if t.threadIdx.x > 0 then s[t.threadIdx.x] = 1 end
      t:sync()
      out[t.threadIdx.x] = s[t.threadIdx.x]
    end, {block = 4, shared = {s = 4}, args = {out}})
  end, "uninitialized load of shared array 's' at index 0 %(0%-based%) at line %d+ by thread %(0,0,0%) in block %(0,0,0%)")
  test.ok(msg:find('shared memory starts with whatever the last block left there', 1, true), msg)
  local f = kernels.last_fault()
  test.eq({f.kind, f.array, f.space, f.index, f.first.thread.x}, {'uninit', 's', 'shared', 0, 0})
  -- an atomicAdd into a private histogram nobody cleared
  test.raises(function()
    kernels.launch(function(t, out) t:atomic_add(t.shared.h, 0, 1) end,
      {block = 2, shared = {h = {2, 'int32'}}, args = {out}})
  end, "uninitialized atomicAdd of shared array 'h' at index 0")
  -- every block starts undefined again: block 1 reads what only block 0 wrote
  test.raises(function()
    kernels.launch(function(t, out)
      if t.blockIdx.x == 0 then t.shared.s[0] = 1 end
      out[t.blockIdx.x] = t.shared.s[0]
    end, {block = 1, grid = 2, shared = {s = 1}, args = {out}})
  end, "uninitialized load of shared array 's' at index 0 %(0%-based%) at line %d+ by thread %(0,0,0%) in block %(1,0,0%)")
  -- off for one launch: the emulator's zeros
  kernels.launch(function(t, out) out[t.threadIdx.x] = t.shared.s[t.threadIdx.x] + 7 end,
    {block = 4, shared = {s = 4}, args = {out}, initcheck = false})
  test.eq(out:tolist(), {7, 7, 7, 7})
  -- lm.empty: the elements a kernel reads before anything wrote them
  local e = lm.empty(6)
  msg = test.raises(function()
    kernels.launch(function(t, e) e[t.threadIdx.x] = e[t.threadIdx.x] + 1 end, {block = 6, args = {e}})
  end, "uninitialized load of global array 'e' at index 0 %(0%-based%)")
  test.ok(msg:find('made by lm.empty', 1, true), msg)
  -- a first launch writes half; a second reads that half fine and fails on the rest (the failed
  -- launch above wrote every element, as it would on a GPU: a fresh buffer)
  e = lm.empty(6)
  kernels.launch(function(t, e) if t.threadIdx.x < 3 then e[t.threadIdx.x] = 1 end end, {block = 6, args = {e}})
  kernels.launch(function(t, e) if t.threadIdx.x < 3 then e[t.threadIdx.x] = e[t.threadIdx.x] + 1 end end, {block = 6, args = {e}})
  test.raises(function()
    kernels.launch(function(t, e) local v = e[t.threadIdx.x] end, {block = 6, args = {e}})
  end, "uninitialized load of global array 'e' at index 3")
  -- a view of a fresh buffer: the marks follow the view's elements
  local m = lm.empty(4, 4)
  local col = m:select(2, 2) -- elements 1, 5, 9, 13 of the storage
  kernels.launch(function(t, c) c[t.threadIdx.x] = 2 end, {block = 4, args = {col}})
  kernels.launch(function(t, c) c[t.threadIdx.x] = c[t.threadIdx.x] * 3 end, {block = 4, args = {col}})
  test.eq(col:tolist(), {6, 6, 6, 6})
  test.raises(function()
    kernels.launch(function(t, r) local v = r[t.threadIdx.x] end, {block = 4, args = {m:select(1, 1)}})
  end, "uninitialized load of global array 'r' at index 0")
  -- written through the tensor API: every element holds a value
  e:fill_(0)
  kernels.launch(function(t, e) e[t.threadIdx.x] = e[t.threadIdx.x] + 1 end, {block = 6, args = {e}})
  test.eq(e:tolist(), {1, 1, 1, 1, 1, 1})
  -- lm.zeros and lm.empty_like(x):zero_() are initialized; lm.empty_like is not
  test.raises(function()
    kernels.launch(function(t, e) local v = e[0] end, {block = 1, args = {lm.empty_like(out)}})
  end, 'uninitialized load')
end)

-- __syncthreads() in a branch that the threads of a block take differently is undefined
-- behaviour in CUDA: threads waiting at two different barriers are reported, also when the two
-- are one t:sync() inside a helper called from two branches.
test.case('barriers in divergent branches are reported', function()
  local x = lm.zeros(64)
  local function helper(t) t:sync() end
  local msg = test.raises(function()
    kernels.launch(function(t, x)
      local i = t.threadIdx.x
      if i < 16 then
        helper(t)
      else
        helper(t)
      end
      x[i] = 1
    end, {block = 64, args = {x}})
  end, 'warp 0 lanes 0%-15 wait at __syncthreads on line %d+ %(called from line %d+%), warp 0 lanes 16%-31, warp 1 lanes 0%-31 at the one on line %d+ %(called from line %d+%)')
  test.ok(msg:find('undefined behaviour in CUDA', 1, true), msg)
  test.eq(kernels.last_fault().kind, 'barrier')
  test.raises(function()
    kernels.launch(function(t, x)
      if t.threadIdx.x % 2 == 0 then
        t:sync()
      else
        t:sync()
      end
    end, {block = 4, args = {x}})
  end, 'wait at __syncthreads on line %d+, warp 0 lanes 1,3 at the one on line %d+')
  -- one helper reached from one line by every thread is one barrier
  kernels.launch(function(t, x) helper(t); x[t.threadIdx.x] = 2 end, {block = 64, args = {x}})
  test.eq(x:sum():item(), 128)
end)

test.case('a Lua error in a thread: its message, thread, block and traceback; the state lives on', function()
  local msg = test.raises(function()
    kernels.launch(function(t)
      if t.blockIdx.x == 1 and t.threadIdx.x == 3 then error('boom') end
    end, {grid = 2, block = 4})
  end, 'kernels.launch: .-boom by thread %(3,0,0%) in block %(1,0,0%) %(kernel anonymous%)')
  test.ok(msg:find('stack traceback:', 1, true) and msg:find('in function', 1, true), msg)
  test.raises(function()
    kernels.launch(function(t) local q; q.x = 1 end, {block = 1})
  end, "attempt to index a nil value %(local 'q'%) by thread %(0,0,0%)")
  test.raises(function()
    kernels.launch(function(t) error({}) end, {block = 1})
  end, 'an error object that is not a string')
  test.raises(function()
    kernels.launch(function(t) local v = t.shared.nothing end, {block = 1})
  end, "t.shared.nothing is not declared: give it in the launch's options, shared = {nothing = size}")
  test.raises(function()
    kernels.launch(function(t) coroutine.yield() end, {block = 2})
  end, 'the kernel yielded without t:sync%(%)')
  -- the next launch works
  local x = lm.zeros(2)
  kernels.launch(function(t, x) x[t.threadIdx.x] = 1 end, {block = 2, args = {x}})
  test.eq(x:tolist(), {1, 1})
end)

test.case('a kernel that never returns: a count hook stops it, naming the thread', function()
  debug.sethook(function() error('budget exhausted') end, '', 200000)
  local ok, msg = pcall(kernels.launch, function(t) while true do end end, {block = 4, grid = 2})
  debug.sethook()
  test.eq(ok, false)
  test.ok(msg:find('budget exhausted by thread (0,0,0) in block (0,0,0)', 1, true), msg)
end)

test.case('bad input: clear errors, no crash', function()
  local x = lm.zeros(4)
  local f = function(t) end
  test.raises(function() kernels.launch(f, {block = 1025}) end,
    'kernels.launch: a block of 1025 x 1 x 1 = 1025 threads exceeds the limit of 1024 threads per block')
  test.raises(function() kernels.launch(f, {block = {32, 64}}) end, '32 x 64 x 1 = 2048 threads')
  test.raises(function() kernels.launch(f, {block = 4, shared = {s = 12289}}) end,
    "shared memory: 's' %(12289 x float32 = 49156 bytes%) brings the block's shared arrays to 49156 "
    .. "bytes, over the limit of 48 KiB %(49152 bytes%) per block")
  test.raises(function() kernels.launch(f, {block = 4, shared = {a = {4096, 'float64'}, b = 8192}}) end,
    'over the limit of 48 KiB')
  test.raises(function() kernels.launch(42, {block = 1}) end,
    'kernels.launch: argument 1 %(the kernel%) must be a function fn%(t, ...%), got 42')
  test.raises(function() kernels.launch(f) end, 'argument 2 must be the launch')
  test.raises(function() kernels.launch(f, {}) end, 'option block is required')
  test.raises(function() kernels.launch(f, {block = 0}) end, 'option block must be 1 to 2^32 %- 1, got 0')
  test.raises(function() kernels.launch(f, {block = 2.5}) end, 'option block')
  test.raises(function() kernels.launch(f, {block = 1, grid = {1, 0}}) end, 'option grid%[2%] must be 1 to 2^32 %- 1, got 0')
  test.raises(function() kernels.launch(f, {block = 1, colour = 1}) end, "unknown option 'colour'")
  test.raises(function() kernels.launch(f, {block = 1, args = {{}}}) end,
    "args%[1%] %('arg1'%) is a table; a kernel takes tensors")
  test.raises(function() kernels.launch(function(t, a) end, {block = 1, args = {print}}) end,
    "args%[1%] %('a'%) is a function")
  local closed = lm.ones(2)
  closed:close()
  test.raises(function() kernels.launch(function(t, a) end, {block = 1, args = {closed}}) end, 'closed tensor')
  test.raises(function() kernels.launch(function(t, a) end, {block = 1, args = {b = x}}) end,
    "args.b: the kernel has no parameter 'b' after t")
  test.raises(function() kernels.launch(function(t, a) end, {block = 1, args = {x, a = x}}) end, 'not both')
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = 0}}) end, "shared array 's' has 0 elements")
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {4, 'float8'}}}) end, 'unknown dtype')
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {4, 'float16'}}}) end, "array 's' has dtype float16; a kernel takes")
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {size = 4, rows = 3, cols = 2}}}) end,
    'rows 3 x cols 2 must be its 4 elements')
  -- a shared array's declaration: no key is ignored
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {rows = 2, colls = 2}}}) end,
    "kernels.launch: unknown key of a shared array 'colls' %(kernels.launch takes size, dtype, rows or cols%)")
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {4, 'float32', rows = 2}}}) end,
    "shared array 's': {size, dtype} takes nothing more, got key 'rows'")
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {4, 'float32', 8}}}) end,
    "{size, dtype} takes nothing more, got key 3")
  test.raises(function() kernels.launch(f, {block = 1, shared = {s = {rows = 2.5, cols = 2}}}) end,
    'option rows must be an integer')
  local sh = kernels.launch(function(t) t.shared.m[5] = 1 end, {block = 1, shared = {m = {rows = 2, cols = 3, dtype = 'float64'}}})
  test.eq(sh.trace:arrays()[1].length, 6)
  test.eq(sh.trace:arrays()[1].dtype, 'float64')
  test.raises(function() kernels.launch(f, {block = 1, const = {m = 3}}) end, 'must be a tensor')
  test.raises(function() kernels.launch(f, {block = 1, dtype = 'int32'}) end, 'option dtype must be float32 or float64')
  test.raises(function() kernels.launch(f, {block = 1, name = 'two words'}) end, 'must be one word')
  test.raises(function()
    kernels.launch(function(t, a) a[0] = 'x' end, {block = 1, args = {x}})
  end, 'the value stored at line %d+ must be a number, got string')
  test.raises(function()
    kernels.launch(function(t, a) a[0] = 300 end, {block = 1, args = {lm.zeros(1, {dtype = 'uint8'})}})
  end, "store of 300 to global array 'a' at index 0 at line %d+: the value does not fit in uint8")
  test.raises(function()
    kernels.launch(function(t, a) local v = a['k'] end, {block = 1, args = {x}})
  end, "index of global array 'a' at line %d+ must be an integer, got string 'k' %(arrays are indexed from 0")
  test.raises(function()
    kernels.launch(function(t, a) if t.threadIdx.x == 3 then a[t.threadIdx.x / 2] = 1 end end,
      {block = 4, args = {x}}) -- 3 / 2 = 1.5: Lua's / is not C's integer division (use //)
  end, "index of global array 'a' at line %d+ must be an integer, got 1.5 %(arrays are indexed from 0, as in "
    .. "CUDA C%) by thread %(3,0,0%) in block %(0,0,0%)")
  test.raises(function()
    kernels.launch(function(t, a) t.atomic_add(a, 0, 1) end, {block = 1, args = {x}})
  end, 'expected an array of the kernel')
  test.raises(function()
    kernels.launch(function(t) kernels.launch(f, {block = 1}) end, {block = 1})
  end, 'a kernel cannot launch a kernel')
  test.raises(function()
    kernels.launch(function(t) kernels.scan(lm.ones(4), {backend = 'emu'}) end, {block = 1})
  end, 'cannot be entered from a kernel')
  -- a thread object and an array used outside their launch
  local kept_t, kept_a
  kernels.launch(function(t, a) kept_t, kept_a = t, a end, {block = 1, args = {x}})
  test.raises(function() kept_t:sync() end, 't:sync%(%) is only valid inside a running kernel')
  test.raises(function() return kept_a[0] end, 'only valid inside a running kernel')
  test.raises(function()
    kernels.launch(function(t) local v = kept_a[0] end, {block = 1})
  end, "array 'a' belongs to another kernel launch")
  test.raises(function() kernels.racecheck('yes') end, 'argument 1 must be a boolean')
end)

test.case("the kernel's name: option name=, the caller's local or upvalue, a global, else 'anonymous'", function()
  local function add_one(t, a) a[t.threadIdx.x] = a[t.threadIdx.x] + 1 end
  local a = lm.zeros(4)
  test.eq(kernels.launch(add_one, {block = 4, args = {a}}).algo, 'add_one', 'a local of the caller')
  test.eq((function() return kernels.launch(add_one, {block = 4, args = {a}}).algo end)(), 'add_one',
    'an upvalue of the caller')
  test.eq(kernels.launch(add_one, {block = 4, args = {a}, name = 'inc'}).algo, 'inc')
  test.eq(kernels.launch(function(t, x) end, {block = 4, args = {a}}).algo, 'anonymous')
  test.eq(a:tolist(), {3, 3, 3, 3})
  local msg = test.raises(function()
    kernels.launch(function(t) local s = nil .. 'x' end, {block = 2})
  end, 'by thread %(0,0,0%) in block %(0,0,0%) %(kernel anonymous%)')
  test.ok(not msg:find('kernel kernel', 1, true), msg)
end)

-- The sanitizer's reports follow the language (lm.sys.lang: the lessons' :lang); what stopped the
-- launch (kernels.last_fault) does not change with it.
test.case('the checkers report in Chinese under lm.sys.lang("zh")', function()
  local before = lm.sys.lang()
  lm.sys.lang('zh')
  local h = lm.zeros(4, {dtype = 'int32'})
  local ok, msg = pcall(kernels.launch, function(t, h) local v = t.threadIdx.x % 4; h[v] = h[v] + 1 end,
    {block = 8, args = {h}})
  local f = kernels.last_fault()
  local ok2, msg2 = pcall(kernels.launch, function(t, a) local v = a[t.threadIdx.x + 4] end, {block = 1, args = {lm.zeros(4)}})
  local ok3, msg3 = pcall(kernels.launch, function(t, o) o[0] = t.shared.s[0] end,
    {block = 1, shared = {s = 1}, args = {lm.zeros(1)}})
  lm.sys.lang(false)
  test.eq(before, lm.sys.lang())
  test.eq(ok, false)
  test.ok(msg:find('竞争', 1, true) and msg:find('原子操作', 1, true) and msg:find("全局数组 'h'", 1, true), msg)
  test.eq({f.kind, f.rmw, f.array}, {'race', true, 'h'})
  test.ok(not ok2 and msg2:find("越界的读：全局数组 'a' 的下标 4", 1, true), msg2)
  test.ok(not ok3 and msg3:find('未初始化的读', 1, true), msg3)
end)

-- Arguments that share storage: the same elements in the same layout are one array (writes
-- through one reach the other; the race check sees both); views that share some elements in
-- different layouts are refused; disjoint views of one storage are separate arrays.
test.case('aliased arguments: one array, or refused; disjoint views fine', function()
  local y = lm.zeros(4, 4)
  kernels.launch(function(t, a, b)
    local i = t.threadIdx.x
    a[i] = i + 1
    b[i] = b[i] * 2 -- the same thread, the same element: it sees its own write
  end, {block = 16, args = {y:t(), y:t()}})
  test.eq(y:sum():item(), 2 * 136)
  -- a race through the two names of one array is seen
  test.raises(function()
    kernels.launch(function(t, a, b) a[t.threadIdx.x] = 1; local v = b[(t.threadIdx.x + 1) % 4] end,
      {block = 4, args = {y:view(-1):narrow(1, 1, 4), y:view(-1):narrow(1, 1, 4)}})
  end, "race on global array 'a'")
  test.raises(function()
    kernels.launch(function(t, a, b) a[t.threadIdx.x] = 1 end, {block = 16, args = {y, y:t()}})
  end, "'a' and 'b' are views of one tensor that share elements in different layouts")
  test.raises(function()
    kernels.launch(function(t, a, b) a[t.threadIdx.x] = 1 end, {block = 4, args = {y:view(-1):narrow(1, 1, 6), y:view(-1):narrow(1, 5, 6)}})
  end, 'share elements')
  local x = lm.zeros(8)
  kernels.launch(function(t, a, b) a[t.threadIdx.x] = 1; b[t.threadIdx.x] = 2 end,
    {block = 4, args = {x:narrow(1, 1, 4), x:narrow(1, 5, 4)}})
  test.eq(x:tolist(), {1, 1, 1, 1, 2, 2, 2, 2})
  -- every other element and the ones between: one storage, no shared element
  x:zero_()
  local v = x:view(4, 2)
  kernels.launch(function(t, a, b) a[t.threadIdx.x] = 3; b[t.threadIdx.x] = 4 end,
    {block = 4, args = {v:select(2, 1), v:select(2, 2)}})
  test.eq(x:tolist(), {3, 4, 3, 4, 3, 4, 3, 4})
end)

-- int64 in a kernel is exact over the whole range (a double holds integers only up to 2^53);
-- int32 and uint8 stores that do not fit are errors, as before.
test.case('integers in kernels are exact: int64 past 2^53, the extremes, atomics', function()
  local x = lm.tensor({0, math.maxinteger, math.mininteger, 5}, {dtype = 'int64'})
  x[1] = 9007199254740993 -- 2^53 + 1
  local y = lm.zeros(4, {dtype = 'int64'})
  kernels.launch(function(t, x, y) local i = t.threadIdx.x; y[i] = x[i] end, {block = 4, args = {x, y}})
  test.eq(y[1]:item(), 9007199254740993)
  test.eq(y[2]:item(), math.maxinteger)
  test.eq(y[3]:item(), math.mininteger)
  local old
  kernels.launch(function(t, y) old = t:atomic_add(y, 3, math.maxinteger - 5) end, {block = 1, args = {y}})
  test.eq(old, 5)
  test.eq(y[4]:item(), math.maxinteger)
  kernels.launch(function(t, y) t:atomic_add(y, 3, 1) end, {block = 1, args = {y}})
  test.eq(y[4]:item(), math.mininteger, 'wraps around, as on the GPU')
  test.raises(function()
    kernels.launch(function(t, y) y[0] = 2147483648 end, {block = 1, args = {lm.zeros(1, {dtype = 'int32'})}})
  end, 'store of 2147483648 .- the value does not fit in int32')
  test.raises(function()
    kernels.launch(function(t, y) y[0] = 256 end, {block = 1, args = {lm.zeros(1, {dtype = 'uint8'})}})
  end, 'does not fit in uint8')
end)

-- Sizes from the user are checked before any multiplication (UBSan found rows x cols overflowing).
test.case('shared arrays: rows x cols past any size is an error, not an overflow', function()
  for _, rc in ipairs({ {2^31, 2^31}, {2^32, 2^32}, {4611686018427387905, 4}, {2^62, 2^62}, {math.maxinteger, 2} }) do
    test.raises(function()
      kernels.launch(function(t) end, {block = 1, shared = {a = {rows = rc[1], cols = rc[2]}}})
    end, "shared array 'a'")
  end
end)
