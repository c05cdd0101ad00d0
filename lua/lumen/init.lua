--[[
lumen — `require 'lumen'` (preloaded as the global `lm` in scripts and the REPL).

The tensor type and its functions are C bindings (src/lua/, loaded here as 'lumen.core'); this
file adds the parts that read better in Lua. Names follow docs/API.md. Read next: lumen/test.lua.
]]
local lm = require 'lumen.core'

-- Raises "<fname>: <what> must be a tensor, got X" unless v is an open tensor.
local function check_tensor(fname, v, what)
  if not lm.is_tensor(v) then
    error(string.format('%s: %s must be a tensor, got %s', fname, what, type(v)), 3)
  elseif v:is_closed() then
    error(string.format('%s: %s: tensor is closed', fname, what), 3)
  end
end

--- lm.allclose(a, b [, rtol [, atol]]): |a - b| <= atol + rtol * |b| everywhere (broadcasting);
--- NaNs are never close. Defaults as PyTorch: rtol 1e-5, atol 1e-8.
function lm.allclose(a, b, rtol, atol)
  check_tensor('lm.allclose', a, 'argument 1')
  check_tensor('lm.allclose', b, 'argument 2')
  rtol, atol = rtol or 1e-5, atol or 1e-8
  if math.type(rtol) == nil or math.type(atol) == nil then
    error(string.format('lm.allclose: rtol and atol must be numbers, got %s and %s', type(rtol),
      type(atol)), 2)
  end
  local ok = (a - b):abs():le(lm.abs(b) * rtol + atol)
  return ok:numel() == 0 or ok:min():item() == 1
end

--- lm.equal(a, b): same shape and the same values.
function lm.equal(a, b)
  check_tensor('lm.equal', a, 'argument 1')
  check_tensor('lm.equal', b, 'argument 2')
  local sa, sb = a:shape(), b:shape()
  if #sa ~= #sb then return false end
  for i = 1, #sa do if sa[i] ~= sb[i] then return false end end
  return a:numel() == 0 or a:eq(b):min():item() == 1
end

return lm
