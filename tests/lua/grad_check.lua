--[[
grad_check.lua — what the module tests' gradchecks share (not a test file: the runner takes
test_*.lua): gc(name, fn, inputs [, opts]) raises naming the case when lm.autograd.gradcheck
fails; flat(...) concatenates tensors flattened (a module's several outputs as one); with_params(m,
...) the inputs followed by m's parameters.
  local G = dofile(here .. 'grad_check.lua')
]]
local M = {}

function M.gc(name, fn, inputs, opts)
  local ok, rep = lm.autograd.gradcheck(fn, inputs, opts)
  if not ok then error(name .. ': ' .. tostring(rep), 2) end
end

function M.flat(...)
  local parts = {}
  for i, t in ipairs({ ... }) do parts[i] = t:reshape(-1) end
  return lm.cat(parts, 1)
end

function M.with_params(m, ...)
  local inputs = { ... }
  for _, p in ipairs(m:parameters()) do inputs[#inputs + 1] = p end
  return inputs
end

return M
