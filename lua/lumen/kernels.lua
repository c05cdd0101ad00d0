--[[
kernels — the course's parallel patterns (docs/API.md, "kernels"): each runs on the SIMT emulator
('emu', traced, modelled cycles), natively on the CPU ('cpu', measured) or on a GPU ('cuda',
measured with CUDA events). Every call returns `out, info`; info.source and info.provenance say
where the numbers came from.

The calls are C bindings (src/lua/kernels.c over include/lumen/kernels.h); this file makes them the
module, prints an info readably, and says which patterns of API.md are not built yet.
Read next: docs/trace.md (info.trace).
]]
local lm = require 'lumen'
local K = lm._kernels

local kernels = {
  reduce = K.reduce,   -- kernels.reduce(x [, {algo='naive'|'convergent'|'shared'|'coarsened', ...}])
  scan = K.scan,       -- kernels.scan(x [, {algo='kogge-stone'|'brent-kung'|'hierarchical', inclusive=}])
  latency = K.latency, -- kernels.latency{global=, shared=, constant=, arith=, barrier=, sms=}
}

--- tostring(info): what ran where, then the counters in their order.
K.Info.__tostring = function(info)
  local lines = {string.format('%s %s: %s (%s)', info.pattern, info.algo, info.provenance,
                               info.device)}
  for _, name in ipairs(info.counter_names) do
    local v = info.counters[name]
    lines[#lines + 1] = string.format('  %-18s %s', name,
      math.type(v) == 'float' and string.format('%.4g', v) or tostring(v))
  end
  if info.trace then lines[#lines + 1] = '  ' .. tostring(info.trace) end
  return table.concat(lines, '\n')
end

-- The patterns of the next issue (histogram, matmul, conv2d, spmv, sparse, divergence, streams)
-- are not built yet: calling one says so instead of "attempt to call a nil value".
local later = {histogram = true, matmul = true, conv2d = true, spmv = true, sparse = true,
               divergence = true, streams = true}
return setmetatable(kernels, {
  __index = function(_, name)
    if later[name] then
      error(string.format('kernels.%s is not built yet (it comes with the second kernels issue)',
                          name), 2)
    end
  end,
})
