-- kernels: the course's patterns from Lua (scan, reduce, latency, info, info.trace), bad input.
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
  test.eq(type(kernels.scan), 'function')
  test.raises(function() return kernels.histogram end, 'kernels.histogram is not built yet')
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
  test.eq(m, {global = 400, shared = 20, constant = 4, arith = 1, barrier = 20, sms = 1})
  local _, slow = kernels.scan(lm.ones(32), {backend = 'emu'})
  test.eq(kernels.latency{global = 0, shared = 0}.global, 0)
  local _, fast = kernels.scan(lm.ones(32), {backend = 'emu'})
  test.eq(fast.counters.modelled_cycles, 5 * 2 + 10 * 20)
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
  test.raises(function() kernels.scan(x, {block = 0}) end, 'option block must be a power of two')
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
