-- bench/bang/run.lua — kernels.bang's two figures (issue 37): how fast the emulator runs (a vector
-- add of 2^20 float32 over 16 cores: wall seconds, events per second) and what double buffering
-- saves under its cost model (a compute-heavy elementwise kernel, single- against
-- double-buffered: modelled cycles, with the model's parameters printed).
-- Usage: lumen bench/bang/run.lua
local bang = require('lumen.kernels').bang

local function vadd(k, x, y, z, n)
  local per = n // k.taskDim
  local chunk = 16384
  local a, b = k:nram('float32', chunk, 'a'), k:nram('float32', chunk, 'b')
  local base = k.taskId * per
  for off = 0, per - 1, chunk do
    local m = math.min(chunk, per - off)
    k:__memcpy(a, x + base + off, m * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + base + off, m * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, m)
    k:__memcpy(z + base + off, a, m * 4, 'NRAM2GDRAM')
  end
end

print('1. emulation speed: a vector add over 16 cores (UNION1, 4 clusters), 5 runs')
for _, logn in ipairs{16, 20, 22} do
  local n = 1 << logn
  local hx, hy = lm.randn(n), lm.randn(n)
  local walls, events = {}, 0
  for r = 1, 5 do
    local dev = bang.device{clusters = 4}
    local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
    dev:memcpy(x, hx, 'HOST2DEV'); dev:memcpy(y, hy, 'HOST2DEV')
    local q = dev:queue()
    local t0 = lm.sys.clock()
    dev:launch(vadd, {dim = 16, type = 'UNION1', queue = q, args = {x, y, z, n}})
    local info = q:sync()
    walls[r] = lm.sys.clock() - t0
    events = info.events
  end
  table.sort(walls)
  print(string.format('  2^%d floats: %.3f s wall (median), %d events, %.0f events/s', logn, walls[3], events, events / walls[3]))
end

print('\n2. double buffering under the cost model (modelled cycles, not measured)')
local m = bang.model()
local p = m.paths.GDRAM2NRAM
print(string.format('  model: GDRAM<->NRAM latency %d cycles, %d bytes/cycle; %d lanes, issue %d cycles; one DMA queue per core',
  p.latency, p.bw, m.lanes, m.issue))
local n, chunk = 1 << 16, 2048
for _, ops in ipairs{4, 10, 20, 40} do
  local function heavy(k, a) for _ = 1, ops do k:__bang_active_sigmoid(a, a, chunk) end end
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
  local c = {}
  for i, f in ipairs{single, double} do
    local dev = bang.device{clusters = 1}
    local x, z = dev:malloc(n), dev:malloc(n)
    local q = dev:queue()
    local kl = dev:launch(f, {dim = 4, type = 'UNION1', queue = q, args = {x, z}})
    q:sync()
    c[i] = kl.stop - kl.start
  end
  local copy = p.latency + chunk * 4 // p.bw
  print(string.format('  %2d sigmoids a chunk (compute %4d cycles, a copy %d): single %6d, double %6d cycles: %.0f%% saved',
    ops, ops * (m.issue + chunk // m.lanes), copy, c[1], c[2], 100 * (1 - c[2] / c[1])))
end
