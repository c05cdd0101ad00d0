--[[
bench/kernels/launch.lua — student kernels (kernels.launch: a Lua coroutine per emulated thread)
against anchors measured in the same run, and what the race check costs every emulated run.
Run under the CPU lock from the source tree:
  flock /tmp/lumen-cpu.lock build/lumen bench/kernels/launch.lua

  phases     a 1,024-thread block through 10 barrier phases (each thread stores to shared memory
             and waits, ten times; then one global store): issue 16's target is under 100 ms;
             anchors: the same statements as a plain Lua loop (no emulator), and the C emulator's
             Kogge-Stone scan of 1,024 elements (one block, 20 barrier phases; kernels.scan)
  map        2^16 threads of out[i] = a[i] + 10 in 256 blocks of 256: target under 2 s; anchor:
             the C emulator's events per second on a scan of 2^16 (kernels.scan, hierarchical)
  compute    1,024 threads each looping 300 times over arithmetic (no memory events): what the
             per-coroutine count hook (Ctrl-C, the visualizer's pump) costs against plain Lua
  racecheck  the shipped kernels and a Lua kernel with the race check on and off

Times are the median of 5 runs (wall clock, lm.sys.clock), after a warm-up; the phases and map
kernels' outputs are checked (a fast wrong run would not count).
]]
local kernels = require 'kernels'
local clock = lm.sys.clock

local function median_ms(fn, runs)
  runs = runs or 5
  fn()
  local t = {}
  for i = 1, runs do
    collectgarbage()
    local t0 = clock()
    fn()
    t[i] = (clock() - t0) * 1e3
  end
  table.sort(t)
  return t[(runs + 1) // 2]
end

local function row(name, ms, note)
  print(string.format('  %-54s %10.2f ms  %s', name, ms, note or ''))
end

print(string.format('bench/kernels/launch (%s; the emulator runs on one core)', lm.build_info().version))

-- ---------------------------------------------------------------- 10 barrier phases
print('phases: a 1,024-thread block, 10 barrier phases')
local function phases(t, out)
  local s = t.shared.buf
  local tid = t.threadIdx.x
  for k = 1, 10 do
    s[tid] = tid + k
    t:sync()
  end
  out[tid] = s[(tid + 1) % 1024]
end
local out = lm.zeros(1024)
local info
local lua_ms = median_ms(function()
  info = kernels.launch(phases, { block = 1024, args = { out }, shared = { buf = 1024 } })
end)
-- the figures count only if the kernel did its work: out[tid] = the neighbour's last store
for tid = 0, 1023 do assert(out[tid + 1]:item() == (tid + 1) % 1024 + 10, 'phases: wrong output') end
row('kernels.launch (Lua kernel)', lua_ms, string.format('%d barriers, %d events; target < 100 ms',
  info.counters.barriers, info.counters.events))
local plain_ms = median_ms(function()
  local s, o = {}, {}
  for tid = 0, 1023 do
    for k = 1, 10 do s[tid] = tid + k end
    o[tid] = s[(tid + 1) % 1024]
  end
end)
row('anchor: the same statements, plain Lua, no emulator', plain_ms,
  string.format('launch / plain: %.0fx', lua_ms / plain_ms))
local x = lm.rand(1024)
local c_ms = median_ms(function() _, info = kernels.scan(x, { backend = 'emu', block = 1024 }) end)
row('anchor: C Kogge-Stone scan of 1,024 (kernels.scan emu)', c_ms,
  string.format('%d barriers, %d events; launch / C: %.2fx', info.counters.barriers, info.counters.events,
    lua_ms / c_ms))

-- ---------------------------------------------------------------- 2^16 threads
print('map: 2^16 threads, out[i] = a[i] + 10')
local n = 65536
local a, o = lm.rand(n), lm.zeros(n)
local function map(t, out, a, n)
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if i < n then out[i] = a[i] + 10 end
end
local map_ms = median_ms(function()
  info = kernels.launch(map, { grid = n // 256, block = 256, args = { o, a, n } })
end)
local map_events = info.counters.events
assert(info.counters.threads == n and info.counters.global_stores == n, 'map: not every thread ran')
assert((o - a - 10):abs():max():item() < 1e-5, 'map: wrong output')
row('kernels.launch, 256 blocks of 256 threads', map_ms, string.format('%d events, %.1f M events/s; target < 2000 ms',
  map_events, map_events / map_ms / 1e3))
local big = lm.rand(n)
local scan_ms = median_ms(function() _, info = kernels.scan(big, { backend = 'emu', block = 256 }) end)
row('anchor: C scan of 2^16 (kernels.scan emu, hierarchical)', scan_ms,
  string.format('%d events, %.1f M events/s', info.counters.events, info.counters.events / scan_ms / 1e3))

-- ---------------------------------------------------------------- the hook
print('compute: 1,024 threads, 300 iterations of arithmetic each')
local function busy(t, out)
  local v = t.threadIdx.x
  for k = 1, 300 do v = (v * 3 + k) % 1000003 end
  out[t.threadIdx.x] = v
end
local busy_ms = median_ms(function() kernels.launch(busy, { block = 1024, args = { out } }) end)
local busy_plain = median_ms(function()
  local r = {}
  for tid = 0, 1023 do
    local v = tid
    for k = 1, 300 do v = (v * 3 + k) % 1000003 end
    r[tid] = v
  end
end)
row('kernels.launch (the count hook on every coroutine)', busy_ms, string.format('launch / plain: %.2fx', busy_ms / busy_plain))
row('anchor: the same loop in plain Lua', busy_plain)

-- ---------------------------------------------------------------- the race check
print('racecheck: on / off (median of 5)')
local function both(name, fn)
  kernels.racecheck(true)
  local on = median_ms(fn)
  kernels.racecheck(false)
  local off = median_ms(fn)
  kernels.racecheck(true)
  row(name, on, string.format('off %.2f ms: the check costs %+.0f%%', off, (on / off - 1) * 100))
end
both('kernels.scan kogge-stone, 1,024 (emu)', function() kernels.scan(x, { backend = 'emu', block = 1024 }) end)
both('kernels.scan hierarchical, 2^16 (emu)', function() kernels.scan(big, { backend = 'emu', block = 256 }) end)
both('kernels.reduce shared, 2^16 (emu)', function() kernels.reduce(big, { backend = 'emu', algo = 'shared' }) end)
local bins = lm.randint(0, 64, { 16384 }):int()
both('kernels.histogram privatized, 16,384 into 64 bins (emu)',
  function() kernels.histogram(bins, 64, { backend = 'emu', algo = 'privatized' }) end)
local m = lm.rand(64, 64)
both('kernels.matmul tiled, 64 x 64 (emu)', function() kernels.matmul(m, m, { backend = 'emu' }) end)
both('kernels.launch 10 phases (above)', function()
  kernels.launch(phases, { block = 1024, args = { out }, shared = { buf = 1024 } })
end)
both('kernels.launch map 2^16 (above)', function()
  kernels.launch(map, { grid = n // 256, block = 256, args = { o, a, n } })
end)
