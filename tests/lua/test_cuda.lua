-- The GPU from Lua (x:cuda(), x:cpu(), x:to, x:pin_memory, lm.cuda.*, Module:to): without a GPU
-- (this machine) every entry point says why; with one, tensors move and come back with their
-- values, results stay on the GPU and mixed devices are an error naming both.
local test = require 'lumen.test'

local gpu = lm.cuda.is_available()
-- a case that does not apply here says so and returns
local function skip(why) print('  (skipped: ' .. why .. ')') end

test.case('lm.cuda: the answers without a GPU', function()
  if gpu then return skip('a GPU is usable here') end
  test.eq(lm.cuda.device_count(), 0)
  test.eq(lm.cuda.memory_allocated(), 0)
  test.eq(lm.cuda.max_memory_allocated(), 0)
  test.eq(lm.cuda.memory_cached(), 0)
  lm.cuda.empty_cache()
  lm.cuda.reset_peak_memory_stats()
  lm.cuda.synchronize()
  local why = lm.cuda.unavailable_reason()
  test.ok(why:find('no usable CUDA driver', 1, true) or why:find('no CUDA device', 1, true)
    or why:find('no CUDA parts', 1, true) or why:find('not found', 1, true), why)
end)

test.case('moving to the GPU without one says why', function()
  if gpu then return skip('a GPU is usable here') end
  local x = lm.tensor({1, 2, 3})
  local why = lm.cuda.unavailable_reason():gsub('%p', '%%%0')
  test.raises(function() x:cuda() end, "^Tensor:cuda: device 'cuda' is not available %(no GPU%): " .. why)
  test.raises(function() x:to('cuda') end, "^Tensor:to: device 'cuda' is not available")
  test.raises(function() x:to({device = 'cuda'}) end, "^Tensor:to: device 'cuda' is not available")
  test.raises(function() x:pin_memory() end, "^Tensor:pin_memory: device 'cuda' is not available")
  test.raises(function() lm.zeros(3, {device = 'cuda'}) end, "^lm%.zeros: device 'cuda' is not available")
  local m = nn.Linear(3, 2)
  test.raises(function() m:to('cuda') end, "Linear:to: device 'cuda' is not available %(no GPU%)")
  test.eq(m:to('cpu'), m)
  test.eq(m.weight:device(), 'cpu')
end)

test.case('the CPU side of the device API', function()
  local x = lm.tensor({{1, 2}, {3, 4}})
  test.ok(rawequal(x:cpu(), x))
  test.ok(rawequal(x:to('cpu'), x))
  test.ok(rawequal(x:to({device = 'cpu'}), x))
  test.eq(x:to({device = 'cpu', dtype = 'float64'}):dtype(), 'float64')
  test.eq(x:is_pinned(), false)
  test.eq(x:device(), 'cpu')
  test.ok(tostring(x):find('on cpu]', 1, true))
end)

test.case('on a GPU: moves, placement, printing, mixed devices, memory figures', function()
  if not gpu then return skip('no GPU: ' .. lm.cuda.unavailable_reason()) end
  local x = lm.randn(4, 5)
  local d = x:cuda()
  test.eq(d:device(), 'cuda')
  test.ok(lm.cuda.memory_allocated() > 0)
  test.eq(d:cpu():tolist(), x:tolist())
  test.eq((d + d):device(), 'cuda')
  test.eq((d + d):cpu():tolist(), (x + x):tolist())
  test.ok(tostring(d):find('on cuda:0]', 1, true))
  test.raises(function() return d + x end, 'different devices %(cuda and cpu%)')
  local p = x:pin_memory()
  test.eq(p:is_pinned(), true)
  test.eq(p:cuda():cpu():tolist(), x:tolist())
  local m = nn.Linear(5, 3):to('cuda')
  test.eq(m.weight:device(), 'cuda')
  test.eq(m(d):device(), 'cuda')
  d, m = nil, nil
  collectgarbage()
  lm.cuda.empty_cache()
end)

test.case('examples: --device cuda without a GPU says why before loading anything', function()
  if gpu then return skip('a GPU is usable here') end
  local root = (debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. '../../'
  local p = io.popen(string.format("cd '%s' && '%s' examples/mlp_fashion.lua --device cuda 2>&1",
    root, lm.sys.executable()))
  local out = p:read('a')
  p:close()
  test.ok(out:find('mlp_fashion: --device cuda: no GPU can be used: ' .. lm.cuda.unavailable_reason(), 1, true), out)
  p = io.popen(string.format("cd '%s' && '%s' examples/cnn_fashion.lua --device gpu 2>&1", root,
    lm.sys.executable()))
  out = p:read('a')
  p:close()
  test.ok(out:find("--device must be 'cpu' or 'cuda', got 'gpu'", 1, true), out)
end)
