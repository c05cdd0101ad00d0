-- The engine's hooks for distributed data parallelism (lm.autograd._set_hooks, _watch, _id): a
-- watched leaf is reported once, when every path into it has been added (its gradient complete,
-- before .grad is written), in backward's order (the last layer first); done comes after .grad
-- is written; the hooks serve one backward; an error in a hook stops backward naming it.
local test = require 'lumen.test'

test.case('ready reports each watched leaf once, complete; done after .grad is written', function()
  local a = lm.randn(3):requires_grad_()
  local b = lm.randn(3):requires_grad_()
  local c = lm.randn(3):requires_grad_() -- not watched
  lm.autograd._watch(a, true)
  lm.autograd._watch(b, true)
  local seen, order = {}, {}
  lm.autograd._set_hooks(function(id, g)
    local name = id == lm.autograd._id(a) and 'a' or id == lm.autograd._id(b) and 'b' or '?'
    order[#order + 1] = name
    seen[name] = { g = g:clone(), grad_then = (name == 'a' and a.grad or b.grad) }
  end, function() order[#order + 1] = 'done:' .. tostring(a.grad ~= nil and b.grad ~= nil) end)
  -- a reaches the loss by two paths, b by one, late in the graph
  local h = (a * 2 + c):tanh()
  local y = (h * b):sum() + (a * 3):sum()
  y:backward()
  test.eq(#order, 3, table.concat(order, ' '))
  test.eq(order[3], 'done:true')
  test.ok(seen.a and seen.b, 'both watched leaves reported')
  test.eq(seen.a.grad_then, nil, '.grad is written after ready')
  test.ok(lm.allclose(seen.a.g, a.grad, 1e-6, 1e-7), 'ready gets the complete gradient of a (both paths)')
  test.ok(lm.allclose(seen.b.g, b.grad, 1e-6, 1e-7), 'and of b')
  -- one backward only: the next one calls nothing
  local n = #order
  a.grad, b.grad = nil, nil
  ;((a * b):sum()):backward()
  test.eq(#order, n, 'the hooks served one backward')
end)

test.case('an error in a hook stops backward with its message; bad arguments are named', function()
  local a = lm.randn(2):requires_grad_()
  lm.autograd._watch(a, true)
  lm.autograd._set_hooks(function() error('bucket full') end, function() end)
  test.raises(function() (a * 2):sum():backward() end, 'backward: the gradient-ready hook failed')
  test.eq(a.grad, nil, 'nothing written')
  lm.autograd._set_hooks(function() end, function() error('no wait') end)
  test.raises(function() (a * 2):sum():backward() end, 'backward: the backward-done hook failed')
  test.raises(function() lm.autograd._set_hooks(1, function() end) end, 'ready must be a function')
  lm.autograd._watch(a, false)
end)
