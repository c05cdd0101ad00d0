-- kernels.bang (lua/lumen/bang.lua): BANG C on a simulated MLU. Values against the CPU, the
-- built-ins on random task dimensions, the scheduler on the AICS slide's example and on random
-- launches (against a reference written here from the rules), the cost model's arithmetic, the
-- overlap of a ping-pong kernel, and every check and bad-input error.
local test = require 'lumen.test'
local bang = require('lumen.kernels').bang

local function vadd(k, x, y, z, n)
  -- the task's slice, the remainder spread over the first tasks
  local per, rem = n // k.taskDim, n % k.taskDim
  local first = k.taskId * per + math.min(k.taskId, rem)
  local count = per + (k.taskId < rem and 1 or 0)
  local chunk = 1024
  local a, b = k:nram('float32', chunk, 'a'), k:nram('float32', chunk, 'b')
  for off = 0, count - 1, chunk do
    local m = math.min(chunk, count - off)
    k:__memcpy(a, x + first + off, m * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + first + off, m * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, m)
    k:__memcpy(z + first + off, a, m * 4, 'NRAM2GDRAM')
  end
end

local function run_vadd(dev, n, dim, ty)
  local hx, hy = lm.randn(n), lm.randn(n)
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV')
  dev:memcpy(y, hy, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(vadd, {dim = dim, type = ty, queue = q, args = {x, y, z, n}})
  local info = q:sync()
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  return (hz - (hx + hy)):abs():max():item(), info
end

test.case('a vector add over every function type and odd sizes equals the CPU', function()
  lm.manual_seed(1)
  for _, c in ipairs{{n = 1, dim = 4, ty = 'UNION1'}, {n = 1000, dim = 3, ty = 'BLOCK'},
                     {n = 5003, dim = 8, ty = 'UNION2'}, {n = 4096, dim = 16, ty = 'UNION4'},
                     {n = 777, dim = {4, 2, 1}, ty = 'UNION2'}} do
    local dev = bang.device{clusters = 4}
    local err, info = run_vadd(dev, c.n, c.dim, c.ty)
    test.eq(err, 0)
    test.eq(info.source, 'bang-emu')
    test.ok(info.label:find('modelled cycles', 1, true))
    test.ok(info.kernels[1].cycles > 0)
  end
end)

test.case('the built-ins on random task dimensions', function()
  for trial = 1, 20 do
    local X, Y, Z = math.random(1, 4), math.random(1, 3), math.random(1, 2)
    local ty = ({'BLOCK', 'UNION1', 'UNION2'})[math.random(1, 3)]
    local unit = ty == 'BLOCK' and 1 or 4 * tonumber(ty:match('%d+'))
    X = X * unit -- a whole number of units
    local dev = bang.device{clusters = 4}
    local seen = {}
    local out = dev:malloc(X * Y * Z * 4, 'int32')
    local q = dev:queue()
    dev:launch(function(k, out)
      test.eq(k.taskDim, k.taskDimX * k.taskDimY * k.taskDimZ)
      test.eq(k.taskId, k.taskIdX + k.taskIdY * k.taskDimX + k.taskIdZ * k.taskDimX * k.taskDimY)
      if ty == 'BLOCK' then test.eq(k.coreDim, 1) else
        test.eq(k.coreDim, 4)
        test.eq(k.clusterDim, unit // 4)
        test.eq(k.taskId % unit, k.clusterId * 4 + k.coreId)
      end
      seen[k.taskId] = (seen[k.taskId] or 0) + 1
      local v = k:nram('int32', 4)
      k:__memcpy(out + k.taskId * 4, v, 16, 'NRAM2GDRAM')
    end, {dim = {X, Y, Z}, type = ty, queue = q, args = {out}})
    q:sync()
    for id = 0, X * Y * Z - 1 do test.eq(seen[id], 1) end
  end
end)

-- the reference scheduler, written from the rules: units in order, each at the earliest time
-- when enough cores (BLOCK) or whole clusters (UNIONx) are free, and not before the previous
-- kernel of the queue placed its last unit
local function reference(nclusters, kernels)
  local free = {}
  for c = 0, nclusters * 4 - 1 do free[c] = 0 end
  local starts, prev_last_place = {}, 0
  for i, kspec in ipairs(kernels) do
    local x = kspec.x
    local units = kspec.units
    local first
    for u = 1, units do
      local t = prev_last_place
      while true do
        local ok = false
        if x == 0 then
          for c = 0, nclusters * 4 - 1 do if free[c] <= t then free[c] = t + kspec.d; ok = true; break end end
        else
          local got = {}
          for cl = 0, nclusters - 1 do
            local all = true
            for c = cl * 4, cl * 4 + 3 do all = all and free[c] <= t end
            if all then got[#got + 1] = cl end
            if #got == x then break end
          end
          if #got == x then
            for _, cl in ipairs(got) do for c = cl * 4, cl * 4 + 3 do free[c] = t + kspec.d end end
            ok = true
          end
        end
        if ok then break end
        local nxt = math.huge
        for c = 0, nclusters * 4 - 1 do if free[c] > t then nxt = math.min(nxt, free[c]) end end
        t = nxt
      end
      first = first or t
      prev_last_place = t
    end
    starts[i] = first
  end
  return starts
end

-- a kernel that takes exactly c modelled cycles per task: an add of (c - issue) * lanes elements
local function busy(k, elems) local a = k:nram('float32', elems); k:__bang_add(a, a, a, elems) end

test.case("the scheduler: the AICS slide's example and random launches against the rules", function()
  local dev = bang.device{clusters = 4}
  local m = dev.model
  local q = dev:queue()
  local function cyc(c) return (c - m.issue) * m.lanes end
  dev:launch(busy, {name = 'Kernel1', dim = 8, type = 'UNION2', queue = q, args = {cyc(100)}})
  dev:launch(busy, {name = 'Kernel2', dim = 4, type = 'UNION1', queue = q, args = {cyc(60)}})
  dev:launch(busy, {name = 'Kernel3', dim = 16, type = 'UNION4', queue = q, args = {cyc(50)}})
  local info = q:sync()
  test.eq(info.kernels[1].start, 0)
  test.eq(info.kernels[2].start, 0) -- Kernel1 and Kernel2 start together (the slide)
  test.eq(info.kernels[3].start, 100) -- Kernel3 needs all four clusters: after both
  test.eq(info.kernels[3].stop, 150)
  test.eq(#info.timeline, 3)
  for trial = 1, 30 do
    local nclusters = math.random(1, 4)
    local dev2 = bang.device{clusters = nclusters}
    local q2 = dev2:queue()
    local specs = {}
    for i = 1, math.random(1, 5) do
      local choices = {0, 1, 2, 4}
      local x
      repeat x = choices[math.random(1, 4)] until x <= nclusters
      local units = math.random(1, 3)
      local d = math.random(20, 200)
      specs[i] = {x = x, units = units, d = d}
      dev2:launch(busy, {name = 'k' .. i, dim = units * (x == 0 and 1 or 4 * x),
        type = x == 0 and 'BLOCK' or 'UNION' .. x, queue = q2, args = {cyc(d)}})
    end
    local want = reference(nclusters, specs)
    local got = q2:sync()
    for i = 1, #specs do test.eq(got.kernels[i].start, want[i], 'kernel ' .. i .. ' of trial ' .. trial) end
  end
end)

test.case('two queues overlap; one queue issues in order; the host waits at q:sync()', function()
  local dev = bang.device{clusters = 2}
  local m = dev.model
  local function cyc(c) return (c - m.issue) * m.lanes end
  local q1, q2 = dev:queue(), dev:queue()
  dev:launch(busy, {name = 'a', dim = 4, type = 'UNION1', queue = q1, args = {cyc(100)}})
  dev:launch(busy, {name = 'b', dim = 8, type = 'UNION2', queue = q1, args = {cyc(10)}})
  dev:launch(busy, {name = 'c', dim = 4, type = 'UNION1', queue = q2, args = {cyc(30)}})
  local info = q1:sync()
  test.eq(info.kernels[1].start, 0)
  test.eq(info.kernels[3].start, 0)  -- another queue: runs beside 'a'
  test.eq(info.kernels[2].start, 100) -- needs both clusters
  test.eq(info.host_time, 110)
end)

test.case('the cost model: a copy, an intrinsic, a matmul, a barrier', function()
  local dev = bang.device{clusters = 1}
  local m = dev.model
  local x = dev:malloc(4096)
  local q = dev:queue()
  local kl = dev:launch(function(k, x)
    local a = k:nram('float32', 4096)
    k:__memcpy(a, x, 4096 * 4, 'GDRAM2NRAM')
    k:__bang_mul(a, a, a, 4096)
    local w = k:wram('float32', 64 * 32)
    local c = k:nram('float32', 16 * 32)
    k:__bang_matmul(c, a, w, 16, 64, 32)
  end, {dim = 1, type = 'BLOCK', queue = q, args = {x}})
  q:sync()
  local p = m.paths.GDRAM2NRAM
  local want = (p.latency + math.ceil(4096 * 4 / p.bw)) + (m.issue + math.ceil(4096 / m.lanes)) +
               (m.issue + math.ceil(16 * 64 * 32 / m.macs))
  test.eq(kl.stop - kl.start, want)
  -- matmul values
  local dev2 = bang.device{clusters = 1}
  local A, B = lm.randn(5, 7), lm.randn(7, 3)
  local ga, gb, gc = dev2:malloc(35), dev2:malloc(21), dev2:malloc(15)
  dev2:memcpy(ga, A, 'HOST2DEV'); dev2:memcpy(gb, B, 'HOST2DEV')
  local q2 = dev2:queue()
  dev2:launch(function(k, ga, gb, gc)
    local a, c = k:nram('float32', 35), k:nram('float32', 15)
    local w = k:wram('float32', 21)
    k:__memcpy(a, ga, 140, 'GDRAM2NRAM')
    k:__memcpy(w, gb, 84, 'GDRAM2WRAM')
    k:__bang_matmul(c, a, w, 5, 7, 3)
    k:__memcpy(gc, c, 60, 'NRAM2GDRAM')
  end, {dim = 1, type = 'BLOCK', queue = q2, args = {ga, gb, gc}})
  q2:sync()
  local hc = lm.zeros(5, 3)
  dev2:memcpy(hc, gc, 'DEV2HOST')
  test.near((hc - A:matmul(B)):abs():max():item(), 0, 1e-5)
end)

test.case('ping-pong buffering overlaps DMA and compute: fewer cycles, the same values', function()
  local n, chunk = 1 << 15, 2048
  local function heavy(k, a) -- compute comparable to the copies
    for _ = 1, 20 do k:__bang_active_sigmoid(a, a, chunk) end
  end
  local function single(k, x, z)
    local per = n // k.taskDim
    local a = k:nram('float32', chunk, 'a')
    for off = 0, per - 1, chunk do
      k:__memcpy(a, x + k.taskId * per + off, chunk * 4, 'GDRAM2NRAM')
      heavy(k, a)
      k:__memcpy(z + k.taskId * per + off, a, chunk * 4, 'NRAM2GDRAM')
    end
  end
  local function double(k, x, z)
    local per = n // k.taskDim
    local buf = {k:nram('float32', chunk, 'ping'), k:nram('float32', chunk, 'pong')}
    local steps, base = per // chunk, k.taskId * per
    k:__memcpy_async(buf[1], x + base, chunk * 4, 'GDRAM2NRAM')
    for s = 0, steps - 1 do
      k:__sync_io()
      local cur = buf[s % 2 + 1]
      if s + 1 < steps then k:__memcpy_async(buf[(s + 1) % 2 + 1], x + base + (s + 1) * chunk, chunk * 4, 'GDRAM2NRAM') end
      heavy(k, cur)
      k:__memcpy_async(z + base + s * chunk, cur, chunk * 4, 'NRAM2GDRAM')
    end
    k:__sync_io()
  end
  local hx = lm.randn(n)
  local cycles, outs = {}, {}
  for i, f in ipairs{single, double} do
    local dev = bang.device{clusters = 1}
    dev:record(true)
    local x, z = dev:malloc(n), dev:malloc(n)
    dev:memcpy(x, hx, 'HOST2DEV')
    local q = dev:queue()
    local kl = dev:launch(f, {dim = 4, type = 'UNION1', queue = q, args = {x, z}})
    local info = q:sync()
    cycles[i] = kl.stop - kl.start
    outs[i] = lm.zeros(n)
    dev:memcpy(outs[i], z, 'DEV2HOST')
    local dma, comp = 0, 0
    for _, s in ipairs(info.timeline[1].spans) do
      if s.kind == 'dma' then dma = dma + 1 else comp = comp + 1 end
    end
    test.ok(dma > 0 and comp > 0, 'spans recorded')
  end
  local want = hx
  for _ = 1, 20 do want = want:sigmoid() end
  test.near((outs[1] - want):abs():max():item(), 0, 1e-6)
  test.near((outs[2] - want):abs():max():item(), 0, 1e-6)
  -- per chunk: single = in + compute + out; ping-pong hides the next load under the compute (the
  -- one DMA queue still runs the store after it, and __sync_io waits for both)
  local m = bang.model()
  local copy = m.paths.GDRAM2NRAM.latency + chunk * 4 // m.paths.GDRAM2NRAM.bw
  local comp = 20 * (m.issue + chunk // m.lanes)
  local steps = n // 4 // chunk
  test.eq(cycles[1], steps * (2 * copy + comp))
  test.eq(cycles[2], copy + steps * (comp + copy))
  test.ok(cycles[2] < 0.85 * cycles[1], string.format('ping-pong %d cycles against %d', cycles[2], cycles[1]))
end)

local function launch1(kfn, o)
  local dev = bang.device(o and o.device or {clusters = 1})
  local x = dev:malloc(64)
  local q = dev:queue()
  dev:launch(kfn, {dim = o and o.dim or 4, type = o and o.type or 'UNION1', queue = q, args = {x}, name = 'bad'})
  return function() q:sync() end
end

test.case('the checks name the kernel, task, cluster, core and line', function()
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(a, x + 60, 64, 'GDRAM2NRAM') end),
    "kernel 'bad' task 0 %(cluster 0, core 0%), line %d+: __memcpy %(src%): gdram%d+%[60%.%.75%] is out of bounds %(gdram%d+ holds 64 elements%)")
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__bang_add(a, a, a, 17) end),
    '__bang_add: nram%d*%[0%.%.16%] is out of bounds')
  test.raises(launch1(function(k, x) k:nram('float32', 200000) end), 'NRAM overflow: %(array%) needs 800000 bytes, 0 of 524288 are taken on this core')
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(a, x, 64, 'NRAM2GDRAM') end),
    '__memcpy NRAM2GDRAM: copies NRAM to GDRAM, but src gdram%d+ is in GDRAM and dst nram%d* in NRAM')
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(a, x, 64, 'GDRAM2XRAM') end), "unknown direction 'GDRAM2XRAM'")
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(a, x, 6, 'GDRAM2NRAM') end),
    'size 6 is not a whole number of 4%-byte elements')
  -- SRAM race: core 0 writes, core 1 reads the same elements with no __sync_cluster
  test.raises(launch1(function(k, x)
    local s = k:sram('float32', 64, 'shared')
    if k.coreId == 0 then k:__memcpy(s, x, 256, 'GDRAM2SRAM') end
    if k.coreId == 1 then local a = k:nram('float32', 64); k:__memcpy(a, s, 256, 'SRAM2NRAM') end
  end), 'race on SRAM shared%[0%.%.63%]: core 0 writes it')
  -- ... fixed by the barrier
  launch1(function(k, x)
    local s = k:sram('float32', 64, 'shared')
    if k.coreId == 0 then k:__memcpy(s, x, 256, 'GDRAM2SRAM') end
    k:__sync_cluster()
    if k.coreId == 1 then local a = k:nram('float32', 64); k:__memcpy(a, s, 256, 'SRAM2NRAM') end
  end)()
  -- missing __sync_io
  test.raises(launch1(function(k, x)
    local a = k:nram('float32', 64)
    k:__memcpy_async(a, x, 256, 'GDRAM2NRAM')
    k:__bang_active_relu(a, a, 64)
  end), '__bang_active_relu reads nram%d*%[0%.%.63%] while the __memcpy_async at line %d+ still writes it: call __sync_io%(%) first')
  test.raises(launch1(function(k, x)
    local a = k:nram('float32', 64)
    k:__memcpy_async(x, a, 256, 'NRAM2GDRAM')
    k:__bang_active_relu(a, a, 64)
  end), 'writes nram%d*%[0%.%.63%] while the __memcpy_async at line %d+ still reads it')
  test.raises(launch1(function(k, x)
    local a = k:nram('float32', 64)
    k:__memcpy_async(a, x, 256, 'GDRAM2NRAM')
  end), 'ends with a __memcpy_async still running')
  -- a barrier only some cores reach
  test.raises(launch1(function(k, x) if k.coreId < 2 then k:__sync_cluster() end end),
    "kernel 'bad': deadlock: __sync_cluster%(%) is reached by 2 of the 4 cores of cluster 0: the others finished")
  test.raises(launch1(function(k, x) k:__sync_cluster() end, {type = 'BLOCK', dim = 1}), 'a BLOCK task has no cluster to sync with')
  test.raises(launch1(function(k, x) error('my own bug') end), "kernel 'bad' task 0 %(cluster 0, core 0%): .*my own bug")
  -- two tasks writing the same GDRAM elements (tasks are never ordered)
  test.raises(launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(x + k.taskId * 8, a, 64, 'NRAM2GDRAM') end),
    'race on GDRAM gdram%d+%[8%.%.15%]: task 0 writes it')
  -- ... and disjoint slices are fine
  launch1(function(k, x) local a = k:nram('float32', 16); k:__memcpy(x + k.taskId * 16, a, 64, 'NRAM2GDRAM') end)()
end)

test.case('scalar intrinsics, write_value and the GDRAM in use', function()
  local dev = bang.device{clusters = 1}
  test.eq(dev:memory().gdram_used, 0)
  local x = dev:malloc(10)
  test.eq(dev:memory().gdram_used, 40)
  local hx = lm.randn(10)
  dev:memcpy(x, hx, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(function(k, x)
    local a, b = k:nram('float32', 10), k:nram('float32', 10)
    k:__memcpy(a, x, 40, 'GDRAM2NRAM')
    k:__bang_mul_scalar(a, a, 3, 10)
    k:__bang_add_scalar(a, a, -1, 10)
    k:__bang_write_value(b, 10, 0.5)
    k:__bang_mul(a, a, b, 10)
    k:__memcpy(x, a, 40, 'NRAM2GDRAM')
  end, {dim = 1, type = 'BLOCK', queue = q, args = {x}})
  q:sync()
  local hz = lm.zeros(10)
  dev:memcpy(hz, x, 'DEV2HOST')
  test.near((hz - (hx * 3 - 1) * 0.5):abs():max():item(), 0, 1e-6)
  dev:free(x)
  test.eq(dev:memory().gdram_used, 0)
end)

test.case('bad launches and devices: clear errors', function()
  local dev = bang.device{clusters = 2}
  local q = dev:queue()
  local f = function() end
  test.raises(function() dev:launch(f, {dim = 6, type = 'UNION1', queue = q}) end,
    'a UNION1 kernel runs in units of 4 tasks %(1 clusters of 4 cores%): taskDim 6 %(6x1x1%) is not a multiple of 4')
  test.raises(function() dev:launch(f, {dim = 16, type = 'UNION4', queue = q}) end, 'UNION4 needs 4 clusters of one chip at once; a chip of this device has 2')
  -- two chips of 2 clusters: a UNION2 unit takes one chip, never a cluster of each
  local two = bang.device{chips = 2, clusters = 2}
  local q2 = two:queue()
  two:launch(busy, {dim = 8, type = 'UNION1', queue = q2, args = {64}, name = 'one'}) -- 2 units: clusters 0, 1
  two:launch(busy, {dim = 8, type = 'UNION2', queue = q2, args = {64}, name = 'two'})
  local info = q2:sync()
  test.eq(info.timeline[3].clusters[1], 2)
  test.eq(info.timeline[3].clusters[2], 3)
  test.raises(function() two:launch(f, {dim = 16, type = 'UNION4', queue = q2}) end, 'a chip of this device has 2')
  test.raises(function() dev:launch(f, {dim = 4, type = 'UNION3', queue = q}) end, "type must be 'BLOCK', 'UNION1'")
  test.raises(function() dev:launch(f, {dim = 0, queue = q}) end, 'taskDimX must be a positive integer')
  test.raises(function() dev:launch(f, {dim = 4}) end, 'queue must be a queue of this device')
  test.raises(function() dev:launch(f, {dim = 4, queue = q, grid = 3}) end, "unknown option 'grid'")
  test.raises(function() bang.device{clusters = 0} end, 'clusters must be a positive integer, got 0')
  test.raises(function() bang.device{cores = 8} end, 'a cluster has 4 cores')
  test.raises(function() bang.device{nram = -1} end, 'nram must be a positive integer')
  test.raises(function() bang.device{gdram = 1024}:malloc(1000) end, 'malloc: 4000 bytes more GDRAM than the device has')
  local x = dev:malloc(4)
  test.raises(function() dev:memcpy(x, lm.ones(5), 'HOST2DEV') end, '5 elements into gdram%d+, which holds 4')
  test.raises(function() dev:memcpy(x, lm.ones(4), 'H2D') end, "direction must be 'HOST2DEV', 'DEV2HOST' or 'DEV2DEV'")
end)

test.case('emulation speed: a vector add of 2^20 floats over 16 cores in well under a second', function()
  local n = lm.build_info().sanitize and (1 << 18) or (1 << 20)
  local t0 = lm.sys.clock()
  local err, info = run_vadd(bang.device{clusters = 4}, n, 16, 'UNION1')
  local s = lm.sys.clock() - t0
  test.eq(err, 0)
  print(string.format('  (2^%d floats over 16 cores: %.3f s wall, %d events)', math.floor(math.log(n, 2) + 0.5), s, info.events))
  test.ok(info.events > 0)
end)
