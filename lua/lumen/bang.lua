--[[
bang — BANG on a simulated MLU (AICS chapter 8): kernels written in Lua in the style of Cambricon's
BANG C, run on an emulated device of cards x chips x clusters x cores, with CNRT-style host code.

  local bang = kernels.bang
  local dev = bang.device{clusters = 4}                      -- 4 clusters of 4 cores (16 cores)
  local x = dev:malloc(n, 'float32')                         -- cnrtMalloc: GDRAM
  dev:memcpy(x, host_x, 'HOST2DEV')                          -- cnrtMemcpy
  local q = dev:queue()                                      -- cnrtCreateQueue
  dev:launch(vadd, {dim = {16, 1, 1}, type = 'UNION1', queue = q, args = {x, y, z, n}})
  q:sync()                                                   -- cnrtSyncQueue
  dev:memcpy(host_z, z, 'DEV2HOST')

A kernel is function(k, ...) run once per task; k holds the built-ins (k.taskId, k.taskIdX/Y/Z,
k.taskDim, k.taskDimX/Y/Z, k.clusterId, k.clusterDim, k.coreId, k.coreDim) and BANG's calls:
k:nram(dtype, n [, name]) / k:wram(...) (per core, __nram__ / __wram__), k:sram(dtype, n, name)
(__mlu_shared__: one array per cluster, shared by its cores), k:__memcpy(dst, src, bytes, dir),
k:__memcpy_async(...) then k:__sync_io(), the vector intrinsics k:__bang_add(dst, a, b, n),
__bang_sub, __bang_mul, __bang_maximum, __bang_active_relu(dst, src, n),
__bang_active_sigmoid, __bang_add_scalar / __bang_mul_scalar(dst, src, value, n),
__bang_write_value(dst, n, value), __bang_reduce_sum(dst, src, n), __bang_matmul(dst, lhs, rhs, m, k, n)
(lhs in NRAM, rhs in WRAM), k:__sync_cluster() and k:__sync_all(). Arrays are pointers: p + i is
the pointer i elements on, as in C; sizes of copies are bytes, of intrinsics elements.

The model (bang.model(), stated in every info): a core has a compute clock and an IO (DMA) clock.
A copy costs latency + bytes / bandwidth of its path (GDRAM2NRAM ...); a vector intrinsic
n / lanes cycles plus an issue cost; a matmul m*k*n / MACs per cycle. A synchronous copy waits for
both clocks and moves both; an asynchronous one runs on the IO clock from when it is issued, and
k:__sync_io() makes compute wait for it: double buffering overlaps the two. Barriers
(__sync_cluster, __sync_all) bring their cores to the latest clock. GDRAM bandwidth is not shared
between cores (each path's bandwidth is per core): stated, not modelled.

Scheduling (the notes): a launch gives taskDim = X*Y*Z and a function type. BLOCK: every task is
a unit of one core, started when a core is free; UNIONx (x = 1, 2, 4, 8): tasks go in units of
4x (x clusters of 4 cores of one chip), started when x whole clusters of a chip are free. A queue issues its kernels in
order: a kernel starts placing units only once the kernel before it in the same queue has placed
all of its own, so consecutive kernels of one queue may run side by side when there is room (the
notes' Kernel1 and Kernel2); queues are independent. The timeline records every unit: kernel,
queue, clusters, cores, start and end, in modelled cycles.

The checks, as the SIMT emulator's: an access past an array's end (per space), NRAM / WRAM / SRAM /
GDRAM capacity, a copy whose direction does not name its spaces, a race on SRAM (two cores of a
cluster touching overlapping elements between barriers, one writing), a race on GDRAM (two tasks
of one kernel touching overlapping elements, one writing: tasks are never ordered), reading NRAM an asynchronous
copy still writes (a missing __sync_io), a barrier only some cores reach (deadlock). Each error
names the kernel, the task, cluster and core and the kernel's line.
Read next: docs/bang.md.
]]
local lm = require 'lumen'

local bang = {}

-- ---------------------------------------------------------------- the model

local KiB, MiB = 1024, 1024 * 1024

-- bang.model(): the cost model's parameters (cycles at clock_ghz; bandwidths in bytes per cycle)
local function default_model()
  return {
    clock_ghz = 1.0,
    paths = { -- latency (cycles), bytes per cycle
      GDRAM2NRAM = {latency = 200, bw = 32}, NRAM2GDRAM = {latency = 200, bw = 32},
      GDRAM2SRAM = {latency = 200, bw = 64}, SRAM2GDRAM = {latency = 200, bw = 64},
      SRAM2NRAM = {latency = 40, bw = 128}, NRAM2SRAM = {latency = 40, bw = 128},
      NRAM2NRAM = {latency = 10, bw = 256}, GDRAM2WRAM = {latency = 200, bw = 32},
      SRAM2WRAM = {latency = 40, bw = 128}, NRAM2WRAM = {latency = 10, bw = 256},
      GDRAM2GDRAM = {latency = 200, bw = 32},
    },
    lanes = 64,      -- vector elements per cycle (add, sub, mul, maximum, active, reduce)
    issue = 8,       -- cycles to issue any intrinsic
    macs = 1024,     -- matmul multiply-adds per cycle
    sync = 20,       -- a barrier's cost
  }
end
bang.model = default_model

-- the spaces each direction joins
local DIRS = {
  GDRAM2NRAM = {'GDRAM', 'NRAM'}, NRAM2GDRAM = {'NRAM', 'GDRAM'}, GDRAM2SRAM = {'GDRAM', 'SRAM'},
  SRAM2GDRAM = {'SRAM', 'GDRAM'}, SRAM2NRAM = {'SRAM', 'NRAM'}, NRAM2SRAM = {'NRAM', 'SRAM'},
  NRAM2NRAM = {'NRAM', 'NRAM'}, GDRAM2WRAM = {'GDRAM', 'WRAM'}, SRAM2WRAM = {'SRAM', 'WRAM'},
  NRAM2WRAM = {'NRAM', 'WRAM'}, GDRAM2GDRAM = {'GDRAM', 'GDRAM'},
}
local TYPES = {BLOCK = 0, UNION1 = 1, UNION2 = 2, UNION4 = 4, UNION8 = 8}
local ESIZE = {float32 = 4, float64 = 8, int32 = 4, int64 = 8, uint8 = 1, int8 = 1, float16 = 2}

local function fail(fmt, ...) error('kernels.bang: ' .. string.format(fmt, ...), 0) end

-- ---------------------------------------------------------------- pointers

local Ptr = {}
Ptr.__index = Ptr

local function ptr(space, buf, off, name, owner)
  return setmetatable({space = space, buf = buf, off = off, name = name, owner = owner}, Ptr)
end

Ptr.__add = function(p, i)
  if getmetatable(p) ~= Ptr then p, i = i, p end
  if math.type(i) ~= 'integer' then fail('pointer + %s: an integer number of elements, as in C', tostring(i)) end
  return ptr(p.space, p.buf, p.off + i, p.name, p.owner)
end
Ptr.__sub = function(p, i) return Ptr.__add(p, -i) end
Ptr.__tostring = function(p)
  return string.format('%s %s + %d (%d %s)', p.space, p.name, p.off, p.buf:numel(), p.buf:dtype())
end
function Ptr:numel() return self.buf:numel() - self.off end
function Ptr:dtype() return self.buf:dtype() end
-- the host's view of a GDRAM array's values (a copy)
function Ptr:tensor() return self.buf:narrow(1, self.off + 1, self.buf:numel() - self.off):clone() end

-- ---------------------------------------------------------------- the device

local Device, Queue = {}, {}
Device.__index, Queue.__index = Device, Queue

local function positive(o, k, def)
  local v = o[k]
  if v == nil then return def end
  if math.type(v) ~= 'integer' or v < 1 then fail('device: %s must be a positive integer, got %s', k, tostring(v)) end
  return v
end

--- bang.device{cards=1, chips=1, clusters=4, cores=4 (per cluster), nram=512 KiB, wram=1 MiB,
--- sram=2 MiB (per cluster), gdram=1 GiB, model=} -> Device (the MLU270's layout by default)
function bang.device(o)
  o = o or {}
  if type(o) ~= 'table' then fail('device: options must be a table, got %s', type(o)) end
  local known = {cards = 1, chips = 1, clusters = 1, cores = 1, nram = 1, wram = 1, sram = 1, gdram = 1, model = 1}
  for k in pairs(o) do if not known[k] then fail("device: unknown option '%s'", tostring(k)) end end
  local d = setmetatable({}, Device)
  d.cards, d.chips = positive(o, 'cards', 1), positive(o, 'chips', 1)
  d.clusters_per_chip = positive(o, 'clusters', 4)
  d.cores_per_cluster = positive(o, 'cores', 4)
  if d.cores_per_cluster ~= 4 then
    fail('device: a cluster has 4 cores in BANG\'s model (UNIONx takes x clusters of 4), got cores = %d', d.cores_per_cluster)
  end
  d.nclusters = d.cards * d.chips * d.clusters_per_chip
  d.ncores = d.nclusters * d.cores_per_cluster
  d.cap = {NRAM = positive(o, 'nram', 512 * KiB), WRAM = positive(o, 'wram', 1024 * KiB),
           SRAM = positive(o, 'sram', 2 * MiB), GDRAM = positive(o, 'gdram', 1024 * MiB)}
  d.model = default_model()
  for k, v in pairs(o.model or {}) do
    if d.model[k] == nil then fail("device: unknown model parameter '%s'", tostring(k)) end
    if k == 'paths' then for p, c in pairs(v) do d.model.paths[p] = c end else d.model[k] = v end
  end
  d.gdram_used = 0
  d.host_time = 0
  d.queues = {}
  d.timeline = {}
  d.kernels = {}
  d.events = 0
  d.busy_until = {} -- per core: when its current unit ends (for the scheduler)
  return d
end

function Device:__tostring()
  return string.format('MLU (emulated): %d card(s) x %d chip(s) x %d clusters x %d cores = %d cores; NRAM %d KiB, WRAM %d KiB per core, SRAM %d KiB per cluster',
    self.cards, self.chips, self.clusters_per_chip, self.cores_per_cluster, self.ncores,
    self.cap.NRAM // KiB, self.cap.WRAM // KiB, self.cap.SRAM // KiB)
end

--- dev:malloc(n, dtype='float32') -> a GDRAM pointer of n elements (cnrtMalloc)
function Device:malloc(n, dtype)
  dtype = dtype or 'float32'
  if math.type(n) ~= 'integer' or n < 0 then fail('malloc: n must be a count of elements, got %s', tostring(n)) end
  if not ESIZE[dtype] then fail("malloc: unknown dtype '%s'", tostring(dtype)) end
  local bytes = n * ESIZE[dtype]
  if self.gdram_used + bytes > self.cap.GDRAM then
    fail('malloc: %d bytes more GDRAM than the device has (%d of %d used)', bytes, self.gdram_used, self.cap.GDRAM)
  end
  self.gdram_used = self.gdram_used + bytes
  self.nbuf = (self.nbuf or 0) + 1
  return ptr('GDRAM', lm.zeros(math.max(n, 0), {dtype = dtype}), 0, 'gdram' .. self.nbuf)
end

--- dev:free(p) (cnrtFree)
function Device:free(p)
  if getmetatable(p) ~= Ptr or p.space ~= 'GDRAM' or p.off ~= 0 then fail('free: expected a pointer from dev:malloc') end
  self.gdram_used = self.gdram_used - p.buf:numel() * ESIZE[p.buf:dtype()]
end

--- dev:memcpy(dst, src, 'HOST2DEV' | 'DEV2HOST' | 'DEV2DEV') (cnrtMemcpy): a host tensor and a
--- GDRAM pointer; waits for every queue first (as a synchronous copy does)
function Device:memcpy(dst, src, dir)
  self:sync()
  local function check_dev(p, what)
    if getmetatable(p) ~= Ptr or p.space ~= 'GDRAM' then fail('memcpy %s: the %s must be a GDRAM pointer (dev:malloc)', dir, what) end
  end
  if dir == 'HOST2DEV' then
    check_dev(dst, 'destination')
    local n = src:numel()
    if n > dst:numel() then fail('memcpy HOST2DEV: %d elements into %s, which holds %d', n, dst.name, dst:numel()) end
    dst.buf:narrow(1, dst.off + 1, n):copy_(src:contiguous():view(n))
    self.host_time = self.host_time + n * ESIZE[dst.buf:dtype()] / 16 -- PCIe: 16 bytes a cycle
  elseif dir == 'DEV2HOST' then
    check_dev(src, 'source')
    local n = dst:numel()
    if n > src:numel() then fail('memcpy DEV2HOST: %d elements from %s, which holds %d', n, src.name, src:numel()) end
    dst:copy_(src.buf:narrow(1, src.off + 1, n):view(dst:size()))
    self.host_time = self.host_time + n * ESIZE[src.buf:dtype()] / 16
  elseif dir == 'DEV2DEV' then
    check_dev(dst, 'destination'); check_dev(src, 'source')
    local n = math.min(dst:numel(), src:numel())
    dst.buf:narrow(1, dst.off + 1, n):copy_(src.buf:narrow(1, src.off + 1, n))
  else
    fail("memcpy: direction must be 'HOST2DEV', 'DEV2HOST' or 'DEV2DEV', got %s", tostring(dir))
  end
end

--- dev:memory() -> {gdram_used = bytes, gdram = capacity} (what cnrtGetMemInfo tells)
function Device:memory() return {gdram_used = self.gdram_used, gdram = self.cap.GDRAM} end

--- dev:queue() -> Queue (cnrtCreateQueue)
function Device:queue()
  local q = setmetatable({dev = self, id = #self.queues + 1, pending = {}, done = {}}, Queue)
  self.queues[#self.queues + 1] = q
  return q
end

-- ---------------------------------------------------------------- a task's context

local K = {}
K.__index = K

local function where(level)
  local info = debug.getinfo(level, 'Sl')
  if info and info.currentline and info.currentline > 0 then
    return string.format('%s:%d', info.short_src, info.currentline)
  end
  return '?'
end

-- the kernel's line: the first frame outside this file
local function kernel_line()
  for level = 3, 12 do
    local info = debug.getinfo(level, 'Sl')
    if not info then break end
    if info.source ~= debug.getinfo(1, 'S').source then
      return info.currentline and info.currentline > 0 and ('line ' .. info.currentline) or '?'
    end
  end
  return '?'
end

function K:err(fmt, ...)
  fail("kernel '%s' task %d (cluster %d, core %d), %s: %s", self.kname, self.taskId, self.clusterId,
    self.coreId, kernel_line(), string.format(fmt, ...))
end

local function alloc(k, space, dtype, n, name)
  if not ESIZE[dtype] then k:err("%s: unknown dtype '%s'", space, tostring(dtype)) end
  if math.type(n) ~= 'integer' or n < 1 then k:err('%s: n must be a positive integer, got %s', space, tostring(n)) end
  local bytes = n * ESIZE[dtype]
  local pool = space == 'SRAM' and k.cluster or k.core
  local used = pool.used[space] or 0
  if used + bytes > k.dev.cap[space] then
    k:err('%s overflow: %s needs %d bytes, %d of %d are taken%s', space, name or '(array)', bytes, used,
      k.dev.cap[space], space == 'SRAM' and ' in this cluster' or ' on this core')
  end
  pool.used[space] = used + bytes
  local p = ptr(space, lm.zeros(n, {dtype = dtype}), 0, name or (space:lower() .. (used // 1)),
    space == 'SRAM' and k.cluster or k.core)
  pool.peak[space] = math.max(pool.peak[space] or 0, pool.used[space])
  return p
end

--- k:nram(dtype, n [, name]) -> an NRAM array of this core (__nram__ T name[n])
function K:nram(dtype, n, name) return alloc(self, 'NRAM', dtype, n, name) end
--- k:wram(dtype, n [, name]) -> a WRAM array of this core (__wram__)
function K:wram(dtype, n, name) return alloc(self, 'WRAM', dtype, n, name) end
--- k:sram(dtype, n, name) -> the cluster's SRAM array `name` (__mlu_shared__): every core of the
--- cluster that declares it gets the same array
function K:sram(dtype, n, name)
  if type(name) ~= 'string' then self:err('sram: give the shared array a name (every core of the cluster declares it)') end
  if self.type == 0 then self:err('sram: a BLOCK task has no cluster to share SRAM with; launch a UNIONx kernel') end
  local c = self.cluster
  local s = c.shared[name]
  if s then
    if s.buf:numel() ~= n or s.buf:dtype() ~= dtype then
      self:err("sram '%s': declared as %d %s by another core, here as %d %s", name, s.buf:numel(), s.buf:dtype(), n, tostring(dtype))
    end
    return s
  end
  s = alloc(self, 'SRAM', dtype, n, name)
  c.shared[name] = s
  return s
end

-- checks a range of n elements at p for the kernel's call `what`; returns the view
local function span(k, what, p, n, want_space)
  if getmetatable(p) ~= Ptr then k:err('%s: expected an array pointer, got %s', what, type(p)) end
  if want_space and p.space ~= want_space then
    k:err('%s: %s is in %s, the call takes %s', what, p.name, p.space, want_space)
  end
  if (p.space == 'NRAM' or p.space == 'WRAM') and p.owner ~= k.core then
    k:err('%s: %s is another core\'s %s', what, p.name, p.space)
  end
  if p.space == 'SRAM' and p.owner ~= k.cluster then k:err('%s: %s is another cluster\'s SRAM', what, p.name) end
  if n < 0 or p.off < 0 or p.off + n > p.buf:numel() then
    k:err('%s: %s[%d..%d] is out of bounds (%s holds %d elements)', what, p.name, p.off, p.off + n - 1,
      p.name, p.buf:numel())
  end
  return p.buf:narrow(1, p.off + 1, n)
end

-- SRAM accesses between barriers, per cluster: a race when two cores touch overlapping elements
-- and one writes
local function note_sram(k, p, n, write, what)
  if p.space ~= 'SRAM' or n == 0 then return end
  local log = k.cluster.sram_log
  local lo, hi = p.off, p.off + n - 1
  for _, a in ipairs(log) do
    if a.core ~= k.coreId and a.buf == p.buf and a.lo <= hi and lo <= a.hi and (a.write or write) then
      k:err("race on SRAM %s[%d..%d]: core %d %s it (%s) and core %d %s it here with no __sync_cluster() between",
        p.name, math.max(lo, a.lo), math.min(hi, a.hi), a.core, a.write and 'writes' or 'reads', a.what,
        k.coreId, write and 'writes' or 'reads')
    end
  end
  log[#log + 1] = {core = k.coreId, buf = p.buf, lo = lo, hi = hi, write = write, what = what .. ' at ' .. kernel_line()}
end

-- GDRAM accesses of a kernel's tasks: tasks are never ordered (no barrier joins two units, and
-- BANG gives none across them), so two tasks touching overlapping elements, one writing, race
local function note_gdram(k, p, n, write, what)
  if p.space ~= 'GDRAM' or n == 0 then return end
  local logs = k.gdram_log
  local log = logs[p.buf]
  if not log then log = {}; logs[p.buf] = log end
  local lo, hi = p.off, p.off + n - 1
  for i = 1, #log do
    local a = log[i]
    if a.task ~= k.taskId and a.lo <= hi and lo <= a.hi and (a.write or write) then
      k:err('race on GDRAM %s[%d..%d]: task %d %s it (%s) and task %d %s it here; tasks are never ordered: give each task its own elements',
        p.name, math.max(lo, a.lo), math.min(hi, a.hi), a.task, a.write and 'writes' or 'reads', a.what, k.taskId,
        write and 'writes' or 'reads')
    end
  end
  if write or #log < 4096 then
    log[#log + 1] = {task = k.taskId, lo = lo, hi = hi, write = write, what = what .. ' at ' .. kernel_line()}
  end
end

-- NRAM / WRAM ranges an asynchronous copy still uses: touching what it writes, or writing what it
-- reads, before __sync_io() is a hazard (a missing sync)
local function check_pending(k, p, n, what, writing)
  if p.space ~= 'NRAM' and p.space ~= 'WRAM' then return end
  for _, c in ipairs(k.pending) do
    if c.buf == p.buf and c.lo <= p.off + n - 1 and p.off <= c.hi and (c.write or writing) then
      k:err('%s %s %s[%d..%d] while the __memcpy_async at %s still %s it: call __sync_io() first',
        what, writing and 'writes' or 'reads', p.name, math.max(p.off, c.lo), math.min(p.off + n - 1, c.hi),
        c.line, c.write and 'writes' or 'reads')
    end
  end
end

local function copy_cost(k, dir, bytes)
  local path = k.dev.model.paths[dir]
  return path.latency + math.ceil(bytes / path.bw)
end

local function do_copy(k, dst, src, bytes, dir, what)
  local d = DIRS[dir]
  if not d then k:err("%s: unknown direction '%s' (GDRAM2NRAM, NRAM2GDRAM, GDRAM2SRAM, SRAM2GDRAM, SRAM2NRAM, NRAM2SRAM, NRAM2NRAM, GDRAM2WRAM, SRAM2WRAM, NRAM2WRAM, GDRAM2GDRAM)", what, tostring(dir)) end
  if getmetatable(dst) ~= Ptr or getmetatable(src) ~= Ptr then k:err('%s: dst and src must be array pointers', what) end
  if src.space ~= d[1] or dst.space ~= d[2] then
    k:err('%s %s: copies %s to %s, but src %s is in %s and dst %s in %s', what, dir, d[1], d[2], src.name,
      src.space, dst.name, dst.space)
  end
  if src.buf:dtype() ~= dst.buf:dtype() then k:err('%s: src is %s, dst %s (a copy moves bytes of one type)', what, src.buf:dtype(), dst.buf:dtype()) end
  local es = ESIZE[src.buf:dtype()]
  if math.type(bytes) ~= 'integer' or bytes < 0 or bytes % es ~= 0 then
    k:err('%s: size %s is not a whole number of %d-byte elements (sizes are bytes, as in BANG C)', what, tostring(bytes), es)
  end
  local n = bytes // es
  local sv = span(k, what .. ' (src)', src, n)
  local dv = span(k, what .. ' (dst)', dst, n)
  check_pending(k, src, n, what, false)
  check_pending(k, dst, n, what, true)
  note_sram(k, src, n, false, what)
  note_sram(k, dst, n, true, what)
  note_gdram(k, src, n, false, what)
  note_gdram(k, dst, n, true, what)
  if n > 0 then dv:copy_(sv) end
  k.stats.copies = k.stats.copies + 1
  k.stats.bytes[dir] = (k.stats.bytes[dir] or 0) + bytes
  return copy_cost(k, dir, bytes), n
end

--- k:__memcpy(dst, src, bytes, dir): a synchronous copy (both clocks wait for it)
function K:__memcpy(dst, src, bytes, dir)
  local cost = do_copy(self, dst, src, bytes, dir, '__memcpy')
  local t0 = math.max(self.t_compute, self.t_io)
  self:span_record('dma', t0, t0 + cost, dir)
  self.t_compute, self.t_io = t0 + cost, t0 + cost
  self.dev.events = self.dev.events + 1
end

--- k:__memcpy_async(dst, src, bytes, dir): a copy on the DMA (IO) clock, from now; k:__sync_io()
--- makes compute wait for it
function K:__memcpy_async(dst, src, bytes, dir)
  local cost, n = do_copy(self, dst, src, bytes, dir, '__memcpy_async')
  local t0 = math.max(self.t_io, self.t_compute)
  self:span_record('dma', t0, t0 + cost, dir)
  self.t_io = t0 + cost
  local line = kernel_line()
  if dst.space == 'NRAM' or dst.space == 'WRAM' then
    self.pending[#self.pending + 1] = {buf = dst.buf, lo = dst.off, hi = dst.off + n - 1, line = line, write = true}
  end
  if src.space == 'NRAM' or src.space == 'WRAM' then
    self.pending[#self.pending + 1] = {buf = src.buf, lo = src.off, hi = src.off + n - 1, line = line, write = false}
  end
  self.dev.events = self.dev.events + 1
end

--- k:__sync_io(): compute waits for this core's asynchronous copies
function K:__sync_io()
  self.t_compute = math.max(self.t_compute, self.t_io)
  self.pending = {}
  self.dev.events = self.dev.events + 1
end

local function compute(k, cycles, what)
  local t0 = k.t_compute
  k.t_compute = t0 + cycles
  k:span_record('compute', t0, k.t_compute, what)
  k.stats.compute_cycles = k.stats.compute_cycles + cycles
  k.dev.events = k.dev.events + 1
end

local function vector_cost(k, n) return k.dev.model.issue + math.ceil(n / k.dev.model.lanes) end

local function binary(name, f)
  K[name] = function(k, dst, a, b, n)
    if math.type(n) ~= 'integer' or n < 0 then k:err('%s: n must be a count of elements, got %s', name, tostring(n)) end
    local av = span(k, name, a, n, 'NRAM')
    local bv = span(k, name, b, n, 'NRAM')
    local dv = span(k, name, dst, n, 'NRAM')
    check_pending(k, a, n, name, false); check_pending(k, b, n, name, false); check_pending(k, dst, n, name, true)
    if n > 0 then dv:copy_(f(av, bv)) end
    compute(k, vector_cost(k, n), name)
  end
end
binary('__bang_add', function(a, b) return a + b end)
binary('__bang_sub', function(a, b) return a - b end)
binary('__bang_mul', function(a, b) return a * b end)
binary('__bang_maximum', function(a, b) return lm.maximum(a, b) end)

local function unary(name, f)
  K[name] = function(k, dst, src, n)
    if math.type(n) ~= 'integer' or n < 0 then k:err('%s: n must be a count of elements, got %s', name, tostring(n)) end
    local sv = span(k, name, src, n, 'NRAM')
    local dv = span(k, name, dst, n, 'NRAM')
    check_pending(k, src, n, name, false); check_pending(k, dst, n, name, true)
    if n > 0 then dv:copy_(f(sv)) end
    compute(k, vector_cost(k, n), name)
  end
end
unary('__bang_active_relu', function(x) return x:relu() end)
unary('__bang_active_sigmoid', function(x) return x:sigmoid() end)

local function scalar(name, f)
  K[name] = function(k, dst, src, value, n)
    if math.type(n) ~= 'integer' or n < 0 then k:err('%s: n must be a count of elements, got %s', name, tostring(n)) end
    if type(value) ~= 'number' then k:err('%s: the scalar must be a number, got %s', name, type(value)) end
    local sv = span(k, name, src, n, 'NRAM')
    local dv = span(k, name, dst, n, 'NRAM')
    check_pending(k, src, n, name, false); check_pending(k, dst, n, name, true)
    if n > 0 then dv:copy_(f(sv, value)) end
    compute(k, vector_cost(k, n), name)
  end
end
--- k:__bang_add_scalar(dst, src, value, n), k:__bang_mul_scalar(dst, src, value, n)
scalar('__bang_add_scalar', function(x, v) return x + v end)
scalar('__bang_mul_scalar', function(x, v) return x * v end)

--- k:__bang_write_value(dst, n, value): dst[0..n) = value
function K:__bang_write_value(dst, n, value)
  local name = '__bang_write_value'
  if math.type(n) ~= 'integer' or n < 0 then self:err('%s: n must be a count of elements, got %s', name, tostring(n)) end
  if type(value) ~= 'number' then self:err('%s: the value must be a number, got %s', name, type(value)) end
  local dv = span(self, name, dst, n, 'NRAM')
  check_pending(self, dst, n, name, true)
  if n > 0 then dv:fill_(value) end
  compute(self, vector_cost(self, n), name)
end

--- k:__bang_reduce_sum(dst, src, n): dst[0] = the sum of src[0..n)
function K:__bang_reduce_sum(dst, src, n)
  local name = '__bang_reduce_sum'
  if math.type(n) ~= 'integer' or n < 1 then self:err('%s: n must be a positive count, got %s', name, tostring(n)) end
  local sv = span(self, name, src, n, 'NRAM')
  local dv = span(self, name, dst, 1, 'NRAM')
  check_pending(self, src, n, name, false); check_pending(self, dst, 1, name, true)
  dv:fill_(sv:sum():item())
  compute(self, vector_cost(self, n) + math.ceil(math.log(math.max(n, 2), 2)), name)
end

--- k:__bang_matmul(dst, lhs, rhs, m, kk, n): dst (m x n, NRAM) = lhs (m x kk, NRAM) rhs (kk x n,
--- WRAM), row-major
function K:__bang_matmul(dst, lhs, rhs, m, kk, n)
  local name = '__bang_matmul'
  for _, v in ipairs{m, kk, n} do
    if math.type(v) ~= 'integer' or v < 1 then self:err('%s: m, k and n must be positive integers', name) end
  end
  local a = span(self, name, lhs, m * kk, 'NRAM')
  local b = span(self, name, rhs, kk * n, 'WRAM')
  local c = span(self, name, dst, m * n, 'NRAM')
  check_pending(self, lhs, m * kk, name, false); check_pending(self, rhs, kk * n, name, false)
  check_pending(self, dst, m * n, name, true)
  c:copy_(a:view(m, kk):matmul(b:view(kk, n)):view(m * n))
  compute(self, self.dev.model.issue + math.ceil(m * kk * n / self.dev.model.macs), name)
end

function K:span_record(kind, t0, t1, what)
  if self.dev.record_spans and t1 > t0 then
    local s = self.unit.spans
    s[#s + 1] = {kind = kind, core = self.global_core, task = self.taskId, t0 = t0, t1 = t1, what = what}
  end
end

--- k:__sync_cluster(): a barrier for the cores of this cluster
function K:__sync_cluster()
  if self.type == 0 then self:err('__sync_cluster: a BLOCK task has no cluster to sync with; launch a UNIONx kernel') end
  coroutine.yield('cluster', kernel_line())
end

--- k:__sync_all(): a barrier for every core of this kernel's unit (x clusters of a UNIONx)
function K:__sync_all()
  if self.type == 0 then self:err('__sync_all: a BLOCK task runs alone; launch a UNIONx kernel') end
  coroutine.yield('all', kernel_line())
end

-- ---------------------------------------------------------------- running one unit

-- Runs the tasks of one unit (a BLOCK task, or the 4x tasks of a UNIONx unit on x clusters) from
-- time t0 as coroutines, barrier phase by barrier phase; returns the unit's end time.
local function run_unit(dev, kl, unit, t0)
  local tasks = {}
  local clusters = {}
  for ci = 1, #unit.clusters do
    clusters[ci] = {used = {}, peak = {}, shared = {}, sram_log = {}, id = unit.clusters[ci]}
  end
  for i, spec in ipairs(unit.tasks) do
    local c = clusters[spec.cluster + 1]
    local k = setmetatable({
      dev = dev, kname = kl.name, type = kl.utype, unit = unit,
      taskId = spec.taskId, taskDim = kl.taskDim,
      taskIdX = spec.taskId % kl.dim[1], taskIdY = (spec.taskId // kl.dim[1]) % kl.dim[2],
      taskIdZ = spec.taskId // (kl.dim[1] * kl.dim[2]),
      taskDimX = kl.dim[1], taskDimY = kl.dim[2], taskDimZ = kl.dim[3],
      clusterId = spec.cluster, clusterDim = kl.utype == 0 and 1 or kl.utype,
      coreId = spec.core, coreDim = kl.utype == 0 and 1 or 4,
      global_core = spec.global_core,
      cluster = c, core = {used = {}, peak = {}},
      t_compute = t0, t_io = t0, pending = {},
      stats = kl.stats, gdram_log = kl.gdram_log,
    }, K)
    if kl.utype == 0 then k.clusterId = spec.global_cluster; k.coreId = spec.core end
    local co = coroutine.create(function() return kl.fn(k, table.unpack(kl.args, 1, kl.nargs)) end)
    tasks[i] = {k = k, co = co, done = false}
  end
  local alive = #tasks
  while alive > 0 do
    local waiting = {}
    for _, t in ipairs(tasks) do
      if not t.done then
        local ok, kind, line = coroutine.resume(t.co)
        if not ok then
          local msg = tostring(kind)
          if not msg:find('^kernels%.bang:') then
            msg = string.format("kernels.bang: kernel '%s' task %d (cluster %d, core %d): %s", kl.name,
              t.k.taskId, t.k.clusterId, t.k.coreId, msg)
          end
          error(msg, 0)
        end
        if coroutine.status(t.co) == 'dead' then
          t.done = true
          alive = alive - 1
        else
          waiting[#waiting + 1] = {t = t, kind = kind, line = line}
        end
      end
    end
    if #waiting > 0 then
      -- every live task must wait at the same kind of barrier; cluster barriers per cluster
      local kinds = {}
      for _, w in ipairs(waiting) do kinds[w.kind] = (kinds[w.kind] or 0) + 1 end
      local function deadlock(why)
        local w = waiting[1]
        fail("kernel '%s': deadlock: %s (task %d, cluster %d, core %d waits at %s)", kl.name, why,
          w.t.k.taskId, w.t.k.clusterId, w.t.k.coreId, w.line)
      end
      if kinds.all and kinds.cluster then deadlock('some cores wait at __sync_all(), others at __sync_cluster()') end
      if #waiting < alive then deadlock('not every live core reached the barrier') end
      if kinds.all then
        if #waiting < #tasks then deadlock('__sync_all() is reached by ' .. #waiting .. ' of ' .. #tasks .. ' cores: the others finished') end
        local tmax = 0
        for _, w in ipairs(waiting) do tmax = math.max(tmax, w.t.k.t_compute, w.t.k.t_io) end
        for _, w in ipairs(waiting) do w.t.k.t_compute, w.t.k.t_io = tmax + dev.model.sync, tmax + dev.model.sync end
        for _, c in ipairs(clusters) do c.sram_log = {} end
      else
        local per = {}
        for _, w in ipairs(waiting) do
          local c = w.t.k.cluster
          per[c] = per[c] or {}
          table.insert(per[c], w)
        end
        for c, ws in pairs(per) do
          local members = 0
          for _, t in ipairs(tasks) do if t.k.cluster == c then members = members + 1 end end
          if #ws < members then
            deadlock(string.format('__sync_cluster() is reached by %d of the %d cores of cluster %d: the others finished', #ws, members, ws[1].t.k.clusterId))
          end
          local tmax = 0
          for _, w in ipairs(ws) do tmax = math.max(tmax, w.t.k.t_compute, w.t.k.t_io) end
          for _, w in ipairs(ws) do w.t.k.t_compute, w.t.k.t_io = tmax + dev.model.sync, tmax + dev.model.sync end
          c.sram_log = {}
        end
      end
      dev.events = dev.events + #waiting
    end
  end
  local t1 = t0
  unit.usage, unit.sram, unit.task_of = {}, {}, {}
  for _, t in ipairs(tasks) do
    if #t.k.pending > 0 then
      t.k:err('the task ends with a __memcpy_async still running (from %s): call __sync_io() before returning', t.k.pending[1].line)
    end
    t1 = math.max(t1, t.k.t_compute, t.k.t_io)
    for s, v in pairs(t.k.core.peak) do kl.peak[s] = math.max(kl.peak[s] or 0, v) end
    unit.usage[t.k.global_core] = {NRAM = t.k.core.peak.NRAM or 0, WRAM = t.k.core.peak.WRAM or 0}
    unit.task_of[t.k.global_core] = t.k.taskId
  end
  for i, c in ipairs(clusters) do
    for s, v in pairs(c.peak) do kl.peak[s] = math.max(kl.peak[s] or 0, v) end
    unit.sram[unit.clusters[i]] = c.peak.SRAM or 0
  end
  return t1
end

-- ---------------------------------------------------------------- launching and scheduling

local function kernel_name(fn, given)
  if given then return given end
  local info = debug.getinfo(fn, 'S')
  return string.format('kernel@%s:%d', info.short_src:match('[^/]*$'), info.linedefined)
end

--- dev:launch(fn, {dim = n | {x, y, z}, type = 'BLOCK' | 'UNION1' | 'UNION2' | 'UNION4' | 'UNION8',
--- queue = q, args = {...}, name = }) (cnrtInvokeKernel): queued; runs at q:sync() / dev:sync()
function Device:launch(fn, o)
  if type(fn) ~= 'function' then fail('launch: the kernel must be a function(k, ...), got %s', type(fn)) end
  if type(o) ~= 'table' then fail('launch: options must be a table {dim=, type=, queue=, args=}') end
  local known = {dim = 1, type = 1, queue = 1, args = 1, name = 1}
  for key in pairs(o) do if not known[key] then fail("launch: unknown option '%s'", tostring(key)) end end
  local dim = o.dim
  if math.type(dim) == 'integer' then dim = {dim, 1, 1} end
  if type(dim) ~= 'table' then fail('launch: dim must be a task count or {x, y, z}, got %s', tostring(o.dim)) end
  dim = {dim[1] or dim.x or 1, dim[2] or dim.y or 1, dim[3] or dim.z or 1}
  for i = 1, 3 do
    if math.type(dim[i]) ~= 'integer' or dim[i] < 1 then fail('launch: taskDim%s must be a positive integer, got %s', ('XYZ'):sub(i, i), tostring(dim[i])) end
  end
  local tname = o.type or 'BLOCK'
  local utype = TYPES[tname]
  if not utype then fail("launch: type must be 'BLOCK', 'UNION1', 'UNION2', 'UNION4' or 'UNION8', got %s", tostring(tname)) end
  local taskDim = dim[1] * dim[2] * dim[3]
  if utype > 0 then
    if utype > self.clusters_per_chip then
      fail('launch: %s needs %d clusters of one chip at once; a chip of this device has %d', tname, utype,
        self.clusters_per_chip)
    end
    if taskDim % (4 * utype) ~= 0 then
      fail('launch: a %s kernel runs in units of %d tasks (%d clusters of 4 cores): taskDim %d (%dx%dx%d) is not a multiple of %d',
        tname, 4 * utype, utype, taskDim, dim[1], dim[2], dim[3], 4 * utype)
    end
  end
  local q = o.queue
  if getmetatable(q) ~= Queue or q.dev ~= self then fail('launch: queue must be a queue of this device (dev:queue())') end
  local args = o.args or {}
  local kl = {
    fn = fn, name = kernel_name(fn, o.name), dim = dim, taskDim = taskDim, type = tname, utype = utype,
    queue = q, args = args, nargs = #args, issued = self.host_time, units = {}, placed = 0,
    finished = 0, stats = {copies = 0, bytes = {}, compute_cycles = 0}, peak = {},
    gdram_log = setmetatable({}, {__mode = 'k'}),
  }
  local per = utype == 0 and 1 or 4 * utype
  kl.nunits = taskDim // per
  self.kernels[#self.kernels + 1] = kl
  kl.index = #self.kernels
  q.pending[#q.pending + 1] = kl
  return kl
end

-- Places and runs everything queued (a discrete-event simulation over the clusters and cores).
function Device:sync()
  local queued = {}
  for _, q in ipairs(self.queues) do if #q.pending > 0 then queued[#queued + 1] = q end end
  if #queued == 0 then return end
  local free_core = {}   -- [global core] = time it is free
  local holders = {}
  for c = 0, self.ncores - 1 do free_core[c] = self.now_free and self.now_free[c] or self.host_time end
  local running = {}     -- units in flight: {t1, cores}
  local t = self.host_time
  for c = 0, self.ncores - 1 do free_core[c] = math.max(free_core[c], 0) end
  local function is_free(c, at) return free_core[c] <= at end
  local function place_unit(kl, at)
    local per = kl.utype == 0 and 1 or 4 * kl.utype
    local u = kl.placed
    local unit = {kernel = kl, index = u, tasks = {}, clusters = {}, spans = {}}
    if kl.utype == 0 then
      local core
      for c = 0, self.ncores - 1 do if is_free(c, at) then core = c; break end end
      if not core then return false end
      unit.clusters[1] = core // 4
      unit.tasks[1] = {taskId = u, cluster = 0, core = core % 4, global_core = core, global_cluster = core // 4}
    else
      -- x whole free clusters of one chip (a UNION unit does not span chips)
      local picked
      for chip = 0, self.cards * self.chips - 1 do
        local got = {}
        for cl = chip * self.clusters_per_chip, (chip + 1) * self.clusters_per_chip - 1 do
          local all = true
          for c = cl * 4, cl * 4 + 3 do all = all and is_free(c, at) end
          if all then got[#got + 1] = cl end
          if #got == kl.utype then break end
        end
        if #got == kl.utype then picked = got; break end
      end
      if not picked then return false end
      for i, cl in ipairs(picked) do unit.clusters[i] = cl end
      for j = 0, per - 1 do
        local ci, core = j // 4, j % 4
        unit.tasks[j + 1] = {taskId = u * per + j, cluster = ci, core = core, global_core = picked[ci + 1] * 4 + core,
          global_cluster = picked[ci + 1]}
      end
    end
    unit.t0 = at
    unit.t1 = run_unit(self, kl, unit, at)
    for _, s in ipairs(unit.tasks) do free_core[s.global_core] = unit.t1 end
    kl.placed = kl.placed + 1
    kl.units[#kl.units + 1] = unit
    kl.start = kl.start and math.min(kl.start, at) or at
    kl.stop = kl.stop and math.max(kl.stop, unit.t1) or unit.t1
    local cores = {}
    for _, s in ipairs(unit.tasks) do cores[#cores + 1] = s.global_core end
    self.timeline[#self.timeline + 1] = {kernel = kl.name, kernel_index = kl.index, queue = kl.queue.id, unit = unit.index,
      type = kl.type, clusters = unit.clusters, cores = cores, start = at, stop = unit.t1, spans = unit.spans,
      tasks = unit.task_of, usage = unit.usage, sram = unit.sram}
    return true
  end
  -- event loop: at time t, let each queue's head place what fits (queues in order of their
  -- head's issue time); then advance t to the next time a core frees
  local guard = 0
  while true do
    local any_left = false
    local order = {}
    for _, q in ipairs(queued) do
      if #q.pending > 0 then any_left = true; order[#order + 1] = q end
    end
    if not any_left then break end
    table.sort(order, function(a, b) return a.pending[1].issued < b.pending[1].issued or
      (a.pending[1].issued == b.pending[1].issued and a.id < b.id) end)
    local progress = false
    for _, q in ipairs(order) do
      -- the head kernel places units; once it has placed all, the next one may start
      while #q.pending > 0 do
        local kl = q.pending[1]
        local at = math.max(t, kl.issued)
        if at > t then break end
        while kl.placed < kl.nunits and place_unit(kl, t) do progress = true end
        if kl.placed < kl.nunits then break end
        table.remove(q.pending, 1)
        q.done[#q.done + 1] = kl
        progress = true
      end
    end
    -- next event: the earliest core release or kernel issue after t
    local nxt = math.huge
    for c = 0, self.ncores - 1 do if free_core[c] > t then nxt = math.min(nxt, free_core[c]) end end
    for _, q in ipairs(queued) do if #q.pending > 0 and q.pending[1].issued > t then nxt = math.min(nxt, q.pending[1].issued) end end
    if not progress and nxt == math.huge then
      fail('internal: the scheduler is stuck at t = %g', t)
    end
    if nxt ~= math.huge then t = nxt end
    guard = guard + 1
    if guard > 10000000 then fail('internal: the scheduler did not finish') end
  end
  local last = self.host_time
  for c = 0, self.ncores - 1 do last = math.max(last, free_core[c]) end
  self.now_free = free_core
  self.device_time = last
end

--- q:sync() (cnrtSyncQueue): runs what is queued; the host waits until this queue's kernels are
--- done. Returns the info of the kernels it ran.
function Queue:sync()
  self.dev:sync()
  local last = self.dev.host_time
  for _, kl in ipairs(self.done) do last = math.max(last, kl.stop or last) end
  self.dev.host_time = last
  return self.dev:info()
end

--- dev:info() -> {kernels = {{name, type, queue, dim, taskDim, issued, start, stop, cycles,
--- units, copies, bytes, compute_cycles, peak}, ...}, timeline = {{kernel, kernel_index (into
--- kernels), queue, unit, type,
--- clusters (0-based ids), cores (0-based global ids), start, stop, tasks = {[core] = taskId},
--- usage = {[core] = {NRAM=, WRAM=}} (peak bytes), sram = {[cluster] = peak bytes}, spans =
--- {{kind = 'dma' | 'compute', core, task, t0, t1, what}, ...} (with dev:record())}, ...},
--- events, model, device, cards, chips, clusters_per_chip, clusters, cores, capacity = {NRAM=,
--- WRAM=, SRAM=, GDRAM=}, source = 'bang-emu', label}
function Device:info()
  local ks = {}
  for _, kl in ipairs(self.kernels) do
    ks[#ks + 1] = {name = kl.name, type = kl.type, queue = kl.queue.id, dim = kl.dim, taskDim = kl.taskDim,
      issued = kl.issued, start = kl.start, stop = kl.stop, cycles = kl.stop and kl.start and (kl.stop - kl.start),
      units = kl.nunits, copies = kl.stats.copies, bytes = kl.stats.bytes,
      compute_cycles = kl.stats.compute_cycles, peak = kl.peak}
  end
  local tl = {}
  for i, u in ipairs(self.timeline) do tl[i] = u end -- what ran so far (later units are not added)
  return {kernels = ks, timeline = tl, events = self.events, model = self.model, device = tostring(self),
    cards = self.cards, chips = self.chips, clusters_per_chip = self.clusters_per_chip,
    clusters = self.nclusters, cores = self.ncores, source = 'bang-emu',
    capacity = {NRAM = self.cap.NRAM, WRAM = self.cap.WRAM, SRAM = self.cap.SRAM, GDRAM = self.cap.GDRAM},
    label = 'MLU emulated (kernels.bang): modelled cycles at ' .. self.model.clock_ghz .. ' GHz, not measured',
    host_time = self.host_time}
end

--- dev:record(on): keep every DMA and compute span of every core in the timeline (for the
--- ping-pong scene); off by default (a long run keeps many)
function Device:record(on) self.record_spans = on ~= false end

bang.Device, bang.Queue, bang.Ptr = Device, Queue, Ptr
bang.directions = DIRS
bang.types = TYPES
return bang
