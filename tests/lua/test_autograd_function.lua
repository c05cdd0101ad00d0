-- lm.autograd.Function: a differentiable op whose forward and backward are Lua functions
-- (lua/lumen/autograd.lua, src/autograd/custom.c). Values and gradients against the same maths
-- written with built-in ops, float64 gradcheck, the ctx (saved tensors, needs_input_grad, in-place
-- changes), identity forwards, graphs freed by a backward, and every misuse with its message.
local test = require 'lumen.test'

local function exp_fn()
  local Exp = lm.autograd.Function('MyExp')
  function Exp.forward(ctx, x)
    local y = x:exp()
    ctx:save_for_backward(y)
    return y
  end
  function Exp.backward(ctx, g)
    local y = table.unpack(ctx.saved_tensors)
    return g * y
  end
  return Exp
end

test.case('a Function: values and gradients as the built-in ops give them', function()
  local Exp = exp_fn()
  lm.manual_seed(1)
  for _, shape in ipairs({ { 0 }, { 1 }, { 7 }, { 3, 5 }, { 2, 1, 4 } }) do
    local x = lm.randn(shape, { dtype = 'float64' }):requires_grad_()
    local w = lm.randn(shape, { dtype = 'float64' })
    local y = Exp:apply(x)
    test.eq(y.grad_fn:name(), 'MyExpBackward')
    test.tensor_near(y, x:detach():exp(), 0)
    ;(y * w):sum():backward()
    test.tensor_near(x.grad, x:detach():exp() * w, 1e-15, 'd/dx exp(x) . w')
  end
  -- a transposed (non-contiguous) input, a Function inside a larger graph, used twice
  local a = lm.randn(4, 3, { dtype = 'float64' }):requires_grad_()
  local z = (Exp(a:t()) + Exp(a:t() * 2)):sum()
  z:backward()
  test.tensor_near(a.grad, a:detach():exp() + a:detach():mul(2):exp() * 2, 1e-12)
end)

test.case('gradcheck in float64 over several arguments, a number among them', function()
  local Lin = lm.autograd.Function{
    name = 'Affine',
    forward = function(ctx, x, w, k)
      ctx:save_for_backward(x, w)
      ctx.k = k
      return x:matmul(w) * k
    end,
    backward = function(ctx, g)
      local x, w = table.unpack(ctx.saved_tensors)
      local gx = ctx.needs_input_grad[1] and g:matmul(w:t()) * ctx.k or nil
      local gw = ctx.needs_input_grad[2] and x:t():matmul(g) * ctx.k or nil
      return gx, gw, nil
    end,
  }
  local x = lm.randn(5, 3, { dtype = 'float64' }):requires_grad_()
  local w = lm.randn(3, 4, { dtype = 'float64' }):requires_grad_()
  local ok, rep = lm.autograd.gradcheck(function(a, b) return Lin:apply(a, b, 2.5) end, { x, w })
  test.ok(ok, tostring(rep))
  -- needs_input_grad follows requires_grad: a constant weight gets no gradient asked of it
  local seen
  local Probe = lm.autograd.Function('Probe')
  function Probe.forward(ctx, p, q) seen = { ctx.needs_input_grad[1], ctx.needs_input_grad[2], ctx.needs_input_grad[3] } return p + q end
  function Probe.backward(_, g) return g, g end
  Probe(x, lm.ones(5, 3, { dtype = 'float64' }), 'label')
  test.eq(seen, { true, false, false })
  lm.no_grad(function() Probe(x, x, 1) end)
  test.eq(seen, { false, false, false }, 'under no_grad nothing wants a gradient')
end)

test.case('identity forwards, no_grad and inputs without grad record no node', function()
  -- Megatron's f: the identity forward, its gradient changed in backward
  local Twice = lm.autograd.Function('TwiceGrad')
  function Twice.forward(_, x) return x end
  function Twice.backward(_, g) return g * 2 end
  local x = lm.randn(6):requires_grad_()
  local y = Twice(x)
  test.ok(lm.autograd._id(y) ~= lm.autograd._id(x), 'an input returned as it is becomes an alias')
  test.ok(y:shares_storage(x))
  test.eq(y.grad_fn:name(), 'TwiceGradBackward')
  test.eq(x.grad_fn, nil, 'the input keeps its own history')
  y:sum():backward()
  test.tensor_near(x.grad, lm.full({ 6 }, 2), 0)
  local c = Twice(lm.randn(6))
  test.eq(c.grad_fn, nil)
  test.eq(c.requires_grad, false)
  test.eq(lm.no_grad(function() return Twice(x) end).grad_fn, nil)
  -- a non-leaf argument: the gradient flows on through its own grad_fn
  local h = x * 3
  Twice(h):sum():backward()
  test.tensor_near(x.grad, lm.full({ 6 }, 2 + 6), 0)
end)

test.case('a graph through a Function is freed by backward unless retain_graph', function()
  local Exp = exp_fn()
  local x = lm.randn(3):requires_grad_()
  local y = Exp(x):sum()
  y:backward(nil, { retain_graph = true })
  y:backward()
  test.tensor_near(x.grad, x:detach():exp() * 2, 1e-6)
  test.raises(function() y:backward() end, 'the graph was freed by an earlier backward')
  -- many applications, dropped without backward: their states are swept, memory stays flat
  collectgarbage()
  local before = lm.memory().live_tensors
  for _ = 1, 200 do local _ = Exp(lm.randn(1000):requires_grad_()) end
  collectgarbage()
  collectgarbage()
  Exp(x) -- sweeps the released states
  collectgarbage()
  collectgarbage()
  local after = lm.memory().live_tensors
  test.ok(after - before < 10, string.format('states of dropped graphs are freed (%d tensors more)', after - before))
end)

test.case('saved tensors changed in place are refused at backward', function()
  local Exp = exp_fn()
  local x = lm.randn(4):requires_grad_()
  local y = Exp(x)
  y:detach():add_(1) -- the same memory, changed where autograd does not see it
  test.raises(function() y:sum():backward() end,
    'MyExp: the tensor saved for backward as number 1 was changed in place after it was saved')
end)

test.case('misuse: clear errors naming the Function', function()
  local F = lm.autograd.Function('Bad')
  local x = lm.randn(2, 3):requires_grad_()
  test.raises(function() F(x) end, 'Bad: forward is not defined')
  function F.forward(_, a) return a:sum(), a end
  function F.backward(_, g) return g end
  test.raises(function() F(x) end, 'Bad.forward must return one tensor, got 2 values')
  function F.forward(_, a) return 3 end
  test.raises(function() F(x) end, 'Bad.forward must return one tensor, got 3')
  function F.forward(_, a) return a * 1 end
  function F.backward(_, g) return g:t() end
  test.raises(function() F(x):sum():backward() end,
    'Bad.backward returned a gradient of shape [3, 2] for argument 1, whose shape is [2, 3]')
  function F.backward(_, g) return g, g end
  test.raises(function() F(x):sum():backward() end, 'Bad.backward returned 2 gradients; forward took 1 arguments')
  function F.backward(_, g) return 'g' end
  test.raises(function() F(x):sum():backward() end, "Bad.backward returned 'g' as the gradient of argument 1")
  local G = lm.autograd.Function('Scaled')
  function G.forward(_, a, k) return a * k end
  function G.backward(_, g) return g, g end
  test.raises(function() G(x, 2):sum():backward() end,
    'Scaled.backward returned a gradient for argument 2, which is 2, not a tensor')
  function G.backward(_, g) error('my own failure') end
  test.raises(function() G(x, 2):sum():backward() end, 'my own failure')
  -- after a failed backward nothing was accumulated
  test.eq(x.grad, nil)
  test.raises(function() lm.autograd.Function(3) end, 'lm.autograd.Function: argument 1 must be a name')
  test.raises(function() lm.autograd.Function('no spaces') end, 'the name must be an identifier')
  test.raises(function() lm.autograd.Function{ name = 'A', forwrd = print } end, "unknown field 'forwrd'")
  test.raises(function() lm.autograd._custom(x * 1, 'X', { 3 }, print) end, 'input 1 must be a tensor')
  test.raises(function() lm.autograd._custom(x * 1, 'X', {}, print) end, 'already has a grad_fn')
end)

test.case('a Function on integer inputs and inside a coroutine', function()
  local Sq = lm.autograd.Function('Sq')
  function Sq.forward(ctx, a) ctx:save_for_backward(a) return a * a end
  function Sq.backward(ctx, g) return g * 2 * ctx.saved_tensors[1] end
  test.eq(Sq(lm.tensor({ 1, 2, 3 }, { dtype = 'int64' })):tolist(), { 1, 4, 9 })
  local x = lm.tensor({ 1.5, -2 }, { dtype = 'float64' }):requires_grad_()
  local co = coroutine.wrap(function()
    local y = Sq(x):sum()
    coroutine.yield()
    y:backward()
  end)
  co()
  co()
  test.tensor_near(x.grad, lm.tensor({ 3, -4 }, { dtype = 'float64' }), 0)
end)
