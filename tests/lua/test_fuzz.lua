-- The fast, deterministic part of the Lua API fuzzer (tests/lua/fuzz/fuzz.lua): a few fixed seeds
-- of random calls to every function and method, each of which must return or raise an error that
-- names a function, with usable results and no tensor memory left behind, plus random results
-- checked against plain Lua (oracle.lua). Long runs: tests/lua/fuzz/run.lua (see docs/lua.md).
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local fuzz = dofile(here .. 'fuzz/fuzz.lua')

for _, seed in ipairs({ 1, 2, 3, 4, 5, 6 }) do
  test.case('fuzz seed ' .. seed, function()
    local failures, stats = fuzz.run(seed, { episodes = 40, calls = 60, oracle = 8 })
    local lines = {}
    for i = 1, math.min(#failures, 5) do
      lines[i] = (failures[i].text or '?') .. ': ' .. failures[i].what
    end
    test.eq(#failures, 0, table.concat(lines, '\n'))
    test.eq(stats.calls, 40 * 60)
  end)
end
