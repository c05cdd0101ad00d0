--[[
test_forward_hooks.lua — Module:register_forward_hook (lua/lumen/nn/module.lua), what viz.watch
records activations with: the hook sees the module, its inputs and its output after each forward, on
leaf modules inside containers too; a result other than nil replaces the output; handles remove
their own hook only; a bad hook is a clear error; a module without hooks keeps no hook table.
]]
local test = require 'lumen.test'

test.case('forward hooks: called after forward with the inputs and the output', function()
  local lin = nn.Linear(3, 2)
  local seen = {}
  local h = lin:register_forward_hook(function(m, inputs, out)
    seen[#seen + 1] = { m, inputs.n, inputs[1], out }
  end)
  local x = lm.randn(4, 3)
  local y = lin(x)
  test.eq(#seen, 1)
  test.ok(seen[1][1] == lin and seen[1][2] == 1 and seen[1][3] == x and seen[1][4] == y)
  local model = nn.Sequential(lin, nn.ReLU())
  model(x)
  test.eq(#seen, 2, 'a leaf inside a container')
  h:remove()
  model(x)
  test.eq(#seen, 2, 'removed')
  test.eq(rawget(lin, '_forward_hooks'), nil, 'no table left without hooks')
end)

test.case('forward hooks: replacing the output, two hooks, bad input', function()
  local relu = nn.ReLU()
  local a = relu:register_forward_hook(function(_, _, out) return out * 2 end)
  local seen = {}
  local b = relu:register_forward_hook(function(_, _, out) seen[#seen + 1] = out:tolist() end)
  test.eq(relu(lm.tensor({ -1, 2 })):tolist(), { 0, 4 })
  test.eq(seen, { { 0, 4 } }, 'the second hook sees the first one\'s result')
  a:remove()
  test.eq(relu(lm.tensor({ -1, 2 })):tolist(), { 0, 2 })
  test.eq(seen[2], { 0, 2 })
  b:remove()
  test.raises(function() relu:register_forward_hook(3) end, 'register_forward_hook: expected a function, got number')
end)
