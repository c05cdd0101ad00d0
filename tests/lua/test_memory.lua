-- Memory: the GC sees tensor memory (docs/lua.md), bindings leak nothing, on success or error.
local test = require 'lumen.test'

local function live()
  collectgarbage()
  collectgarbage()
  local m = lm.memory()
  return m.live_tensors, m.live_bytes
end

test.case('1e6 small tensors created and dropped keep live bytes bounded', function()
  local t0, b0 = live()
  lm.reset_peak_memory()
  local x = lm.ones(1)
  for i = 1, 1000000 do
    local y = x + i -- a new tensor each time, dropped at once
  end
  local peak = lm.memory().peak_bytes - b0
  test.ok(peak < 256 * 2 ^ 20, string.format('peak %.1f MiB above the start', peak / 2 ^ 20))
  local t1 = live()
  test.eq(t1, t0 + 1, 'only x is left')
end)

test.case('large tensors in a loop are collected by the tensor-bytes pacer', function()
  local _, b0 = live()
  lm.reset_peak_memory()
  for i = 1, 40 do
    local y = lm.zeros(1e7) -- 40 MB each; Lua alone would see only a small userdata
  end
  local peak = lm.memory().peak_bytes - b0
  test.ok(peak < 400 * 2 ^ 20, string.format('peak %.1f MiB above the start', peak / 2 ^ 20))
end)

test.case('failing calls leak nothing', function()
  local x = lm.ones(2, 3)
  local t0, b0 = live()
  for i = 1, 200 do
    pcall(function() return x + lm.ones(4) end)
    pcall(function() return x:matmul(lm.ones(4, 2)) end)
    pcall(function() return x:index_select(1, lm.tensor({9})) end)
    pcall(function() return lm.cat({x, lm.ones(5)}) end)
    pcall(function() return x[{1, 7}] end)
    pcall(function() x[1] = lm.ones(5) end)
    pcall(function() return F.cross_entropy(x, lm.tensor({1, 4})) end)
    pcall(function() return lm.autograd.gradcheck(function() error('x') end, {lm.ones(1, {dtype = 'float64', requires_grad = true})}) end)
    pcall(function() return x:max(3) end)
    pcall(function() return lm.tensor({{1, 2}, {3}}) end)
  end
  local t1, b1 = live()
  test.eq(t1, t0, 'live tensors')
  test.eq(b1, b0, 'live bytes')
end)

test.case('every allocation failure in a chain of ops is reported and cleaned up', function()
  local a = lm.randn(4, 5, {requires_grad = true})
  local b = lm.randn(5, 3)
  local t0, b0 = live()
  local failures = 0
  for k = 1, 60 do
    lm.sys.fail_alloc_after(k)
    local ok, err = pcall(function()
      local y = F.relu(a:matmul(b) + 1):sum()
      y:backward()
      return tostring(y)
    end)
    lm.sys.fail_alloc_after(0)
    if not ok then
      failures = failures + 1
      test.ok(type(err) == 'string' and err:find('alloc'), err)
    end
    a.grad = nil
  end
  local t1, b1 = live()
  test.eq(t1, t0, 'live tensors')
  test.eq(b1, b0, 'live bytes')
end)
