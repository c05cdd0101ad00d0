--[[
lumen — `require 'lumen'` (preloaded as the global `lm` in scripts and the REPL).

The tensor type and its functions are C bindings (src/lua/, loaded here as 'lumen.core'); this
file adds the parts that read better in Lua. Names follow docs/API.md. Read next: lumen/test.lua.
]]
local lm = require 'lumen.core'

--- lm.allclose(a, b [, rtol [, atol]]): |a - b| <= atol + rtol * |b| everywhere (broadcasting);
--- NaNs are never close. Defaults as PyTorch: rtol 1e-5, atol 1e-8.
function lm.allclose(a, b, rtol, atol)
  rtol, atol = rtol or 1e-5, atol or 1e-8
  local ok = (a - b):abs():le(lm.abs(b) * rtol + atol)
  return ok:numel() == 0 or ok:min():item() == 1
end

--- lm.equal(a, b): same shape and the same values.
function lm.equal(a, b)
  local sa, sb = a:shape(), b:shape()
  if #sa ~= #sb then return false end
  for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
  return a:numel() == 0 or a:eq(b):min():item() == 1
end

return lm
