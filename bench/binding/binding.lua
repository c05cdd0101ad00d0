--[[
bench/binding — ns per call through the bindings, 1e6 calls each (arg[1] changes the count).

The headline is x:add_(1) on a 1-element tensor (a method lookup through __index, argument
checks, and the core's in-place add with a number). The other rows separate the costs: an empty
Lua loop, a method that only reads (x:dim()), a cheap in-place call (x:fill_(1)), and calls that
create a tensor (x + 1, lm.zeros(1)) and so also pay for allocation and garbage collection.
]]
local n = math.tointeger(tonumber(arg[1] or 1e6)) or 1000000
local clock = lm.sys.clock
local x = lm.zeros(1)

local function time(body)
  collectgarbage()
  local best = math.huge
  for _ = 1, 3 do -- best of 3
    local t0 = clock()
    body(n)
    best = math.min(best, clock() - t0)
  end
  return best * 1e9 / n
end

local rows = {
  { 'x:add_(1)  (headline)', function(k) for _ = 1, k do x:add_(1) end end },
  { 'empty Lua loop', function(k) for _ = 1, k do end end },
  { 'x:dim()', function(k) for _ = 1, k do x:dim() end end },
  { 'x:fill_(1)', function(k) for _ = 1, k do x:fill_(1) end end },
  { 'lm.add(x, 1)  (new tensor)', function(k) for _ = 1, k do lm.add(x, 1) end end },
  { 'x + 1  (new tensor)', function(k) for _ = 1, k do local _ = x + 1 end end },
  { 'lm.zeros(1)  (new tensor)', function(k) for _ = 1, k do lm.zeros(1) end end },
}

print(string.format('bench/binding: %d calls each, best of 3 (%s, %s threads)', n, lm.build_info().blas,
  lm.get_num_threads()))
print(string.format('%-30s %12s', 'call', 'ns per call'))
for _, r in ipairs(rows) do
  print(string.format('%-30s %12.1f', r[1], time(r[2])))
end
