-- Autograd through the bindings: fields, backward, no_grad, detach, and gradcheck of many ops.
local test = require 'lumen.test'

test.case('requires_grad, grad, grad_fn, is_leaf', function()
  local x = lm.tensor({1.0, 2, 3}, {requires_grad = true})
  test.eq(x.requires_grad, true)
  test.eq(x.grad, nil)
  test.eq(x.grad_fn, nil)
  test.eq(x.is_leaf, true)
  local y = x * x
  test.eq(y.requires_grad, true)
  test.eq(y.grad_fn:name(), 'MulBackward')
  test.eq(y.is_leaf, false)
  local z = lm.ones(2)
  test.eq(z:requires_grad_(), z)
  test.eq(z.requires_grad, true)
  z:requires_grad_(false)
  test.eq(z.requires_grad, false)
  test.raises(function() lm.tensor({1, 2}):requires_grad_() end,
    'Tensor:requires_grad_: only float tensors')
end)

-- grad_fn is the node that made a tensor, as PyTorch's: its name, the op it records, its inputs'
-- nodes (next_functions: the input's grad_fn, an AccumulateGrad for a leaf, nil where no gradient
-- flows) and the op's parameters as the op list names them (dims and indices 1-based).
test.case('grad_fn: name, op, next_functions, params', function()
  local x = lm.tensor({{1.0, 2, 3}, {4, 5, 6}}, {requires_grad = true})
  local c = lm.ones(2, 3) -- no gradient flows to it
  local y = (x * c):sum(2, true)
  local f = y.grad_fn
  test.eq({ f:name(), f.op, tostring(f), 'made by ' .. f }, { 'SumBackward', 'sum', 'SumBackward', 'made by SumBackward' })
  test.eq(f.params, { dim = 2, keepdim = true })
  test.ok(y.grad_fn == f and y.grad_fn ~= x:exp().grad_fn, 'one node, one object identity')
  local nf = f.next_functions
  test.eq(#nf, 1)
  local mul = nf[1][1]
  test.eq({ mul:name(), mul.op, nf[1][2] }, { 'MulBackward', 'mul', 1 })
  local ins = mul.next_functions
  test.eq(#ins, 2)
  test.eq(ins[1][1]:name(), 'AccumulateGrad')
  test.eq(tostring(ins[1][1]), 'AccumulateGrad')
  test.eq(ins[1][1].variable:tolist(), x:tolist())
  test.eq(ins[2][1], nil, 'the constant gets no gradient')
  -- parameters of other ops, in their own names
  test.eq(x:permute(2, 1).grad_fn.params, { ndims = 2, dims = { 2, 1 } })
  test.eq(x:narrow(2, 2, 2).grad_fn.params, { dim = 2, start = 2, length = 2 })
  test.eq(x:select(1, 2).grad_fn.params, { dim = 1, index = 2 })
  test.eq(x:transpose(1, 2).grad_fn.params, { dim0 = 1, dim1 = 2 })
  test.eq(x:clamp(0, 4).grad_fn.params, { min = 0, max = 4 })
  test.eq(x:var(1).grad_fn.params, { dim = 1, keepdim = false, correction = 1 })
  test.eq(x:sum().grad_fn.params, { keepdim = false }, 'over every dim: no dim')
  test.eq(x:cumsum(2).grad_fn.params, { dim = 2 })
  test.eq(x:exp().grad_fn.params, {})
  test.eq(lm.tril(x, 1).grad_fn.params, { k = 1 })
  test.eq(x['repeat'](x, 2, 1).grad_fn.params, { ndims = 2, repeats = { 2, 1 } })
  -- a graph walked through next_functions reaches every leaf
  local a, b = lm.ones(2, {requires_grad = true}), lm.ones(2, {requires_grad = true})
  local z = ((a * 2 + b):exp() * a):sum()
  local leaves, seen = 0, {}
  local function walk(fn)
    if fn == nil or seen[tostring(fn) .. tostring(fn.variable)] then return end
    if fn:name() == 'AccumulateGrad' then leaves = leaves + 1 return end
    for _, e in ipairs(fn.next_functions) do walk(e[1]) end
  end
  walk(z.grad_fn)
  test.ok(leaves >= 2, 'the leaves are reached: ' .. leaves)
  test.raises(function() return f.name() end, 'a grad_fn')
end)

-- a // b and a % b between their steps (the op table checks their values): remainder's gradient
-- is (1, -(a // b)), floor_divide's is zero, against float64 central differences.
test.case('gradients of remainder and floor_divide away from their steps', function()
  local av, bv = { 5.5, -5.5, 2.25, 7.1 }, { 2, 2, -1.5, -3 }
  for _, op in ipairs { 'remainder', 'floor_divide' } do
    local a = lm.tensor(av, { dtype = 'float64', requires_grad = true })
    local b = lm.tensor(bv, { dtype = 'float64', requires_grad = true })
    local w = lm.tensor({ 1, -2, 3, 0.5 }, { dtype = 'float64' })
    local f = function(x, y) return ((op == 'remainder' and x % y or x // y) * w):sum() end
    f(a, b):backward()
    for i = 1, #av do
      for k, t in ipairs { a, b } do
        local base = k == 1 and av or bv
        local function at(d)
          local v = { table.unpack(base) }
          v[i] = v[i] + d
          local x = lm.tensor(k == 1 and v or av, { dtype = 'float64' })
          local y = lm.tensor(k == 2 and v or bv, { dtype = 'float64' })
          return f(x, y):item()
        end
        local numeric = (at(1e-6) - at(-1e-6)) / 2e-6
        test.near(t.grad[i]:item(), numeric, 1e-6, string.format('%s: d/d%s[%d]', op, k == 1 and 'a' or 'b', i))
      end
    end
  end
end)

test.case('backward of a scalar and with a gradient', function()
  local x = lm.tensor({1.0, 2, 3}, {requires_grad = true})
  local y = (x * x):sum()
  y:backward()
  test.eq(x.grad:tolist(), {2, 4, 6})
  local w = lm.tensor({{1.0, 2}, {3, 4}}, {requires_grad = true})
  local out = w * 3
  out:backward(lm.ones(2, 2))
  test.eq(w.grad:tolist(), {{3, 3}, {3, 3}})
  -- gradients accumulate; clear with x.grad = nil
  ;(x * 2):sum():backward()
  test.eq(x.grad:tolist(), {4, 6, 8})
  x.grad = nil
  ;(x:sum()):backward()
  test.eq(x.grad:tolist(), {1, 1, 1})
  -- retain_graph lets a graph run twice
  local a = lm.tensor({2.0}, {requires_grad = true})
  local b = (a * a):sum()
  b:backward(nil, {retain_graph = true})
  b:backward()
  test.eq(a.grad:tolist(), {8})
  test.raises(function() out:backward() end, 'Tensor:backward: a gradient is needed')
  test.raises(function() lm.ones(1):backward() end, 'Tensor:backward: the tensor does not require grad')
end)

test.case('no_grad, set_grad_enabled, detach', function()
  local x = lm.ones(2, {requires_grad = true})
  local y, extra = lm.no_grad(function(a, b) return x * a, b end, 2, 'extra')
  test.eq(y.requires_grad, false)
  test.eq(extra, 'extra')
  test.eq(lm.is_grad_enabled(), true)
  test.raises(function() lm.no_grad(function() error('inside') end) end, 'inside')
  test.eq(lm.is_grad_enabled(), true, 'restored after an error')
  test.eq(lm.set_grad_enabled(false), true)
  test.eq((x * 2).requires_grad, false)
  lm.set_grad_enabled(true)
  test.eq(x:detach().requires_grad, false)
end)

local function check(name, fn, inputs, opts)
  local ok, rep = lm.autograd.gradcheck(fn, inputs, opts)
  if not ok then error(name .. ': ' .. tostring(rep), 2) end
end

local function leaf(...)
  return lm.randn({...}, {dtype = 'float64', requires_grad = true})
end

test.case('gradcheck through the bindings: arithmetic, math, views', function()
  lm.manual_seed(1)
  local a, b = leaf(3, 4), leaf(3, 4)
  local pos = (lm.rand(3, 4, {dtype = 'float64'}) + 0.5):requires_grad_()
  check('add/mul/sub/div', function(p, q) return (p + 2 * q) * p - q / (p * p + 1) end, {a, b})
  check('numbers on the left', function(p) return 1 - p, 3 / (p * p + 2) end, {a})
  check('pow', function(p) return p ^ 3 + 2 ^ p end, {a})
  check('unary', function(p) return p:exp() + p:sin() * p:cos() + p:tanh() + p:sigmoid() end, {a})
  check('log/sqrt', function(p) return p:log() + p:sqrt() + p:rsqrt() end, {pos})
  check('abs/neg/square/clamp', function(p) return p:abs() - p:neg() + p:square() + p:clamp(-0.5, 0.5) end, {a})
  check('views', function(p) return p:t():reshape(2, 6):narrow(2, 2, 3) * 2 end, {a})
  check('select/index', function(p) return p[2] * p[{{1, 2}, 3}]:sum() end, {a})
  check('permute/expand', function(p) return p:unsqueeze(1):expand(2, 3, 4):permute(3, 1, 2) end, {a})
  check('broadcast', function(p, q) return p + q[1] end, {a, b})
  check('where/maximum', function(p, q) return lm.where(p:gt(q), p, q) + lm.maximum(p, q) end, {a, b})
end)

test.case('gradcheck through the bindings: reductions, matmul, joins, nn', function()
  lm.manual_seed(2)
  local a, b = leaf(3, 4), leaf(4, 2)
  check('sum/mean', function(p) return p:sum(1) + p:mean() end, {a})
  check('var/std/norm', function(p) return p:var(2) + p:std() + p:norm() end, {a})
  check('max/min', function(p) return p:max(2) + p:min() end, {a})
  check('prod', function(p) return p:prod(1) end, {a})
  check('matmul', function(p, q) return p:matmul(q) end, {a, b})
  check('mm', function(p, q) return lm.mm(p, q) end, {a, b})
  check('cat/stack', function(p) return lm.cat({p, p * 2}, 2):sum(1) + lm.stack({p, p}):sum() end, {a})
  check('index_select/gather', function(p)
    return p:index_select(2, lm.tensor({4, 1})):sum() + p:gather(1, lm.tensor({{3, 1, 2, 1}})):sum()
  end, {a})
  check('sort/topk', function(p) local v = p:sort(2); local t = p:topk(2); return v:sum() + t:sum() end, {a})
  check('cumsum/flip/tile', function(p) return p:cumsum(2):flip(1):tile(2, 1) end, {a})
  check('softmax', function(p) return F.softmax(p, 2) + F.log_softmax(p, 1) end, {a})
  check('linear', function(x, w) return F.linear(x, w:t()) end, {a, b})
  check('cross_entropy', function(p) return F.cross_entropy(p, lm.tensor({1, 4, 2})) end, {a})
  check('mse', function(p, q) return F.mse_loss(p, q) end, {a, leaf(3, 4)})
  check('relu/gelu', function(p) return F.gelu(p) + F.leaky_relu(p, 0.1) end, {a})
  check('nll/bce', function(p, q)
    return F.nll_loss(F.log_softmax(p, 2), lm.tensor({2, 1, 4})) + F.binary_cross_entropy(q:sigmoid(), lm.ones(3, 4, {dtype = 'float64'}))
  end, {a, leaf(3, 4)})
  check('layer_norm', function(p, g, bb) return F.layer_norm(p, 4, g, bb) end, {a, leaf(4), leaf(4)})
  check('batch_norm', function(p) return F.batch_norm(p, nil, nil, nil, nil, true) end, {a})
  check('embedding', function(e) return F.embedding(lm.tensor({{1, 3}, {2, 2}}), e) end, {leaf(3, 2)})
  check('pad', function(p) return F.pad(p, {1, 2}, 0.5) end, {a})
  check('masked_fill/where', function(p) return p:masked_fill(p:gt(0), 0) * 3 end, {a})
  local img, w = leaf(1, 2, 5, 5), leaf(3, 2, 3, 3)
  check('conv2d', function(x, k) return F.conv2d(x, k, nil, {padding = 1}) end, {img, w}, {max_elements = 20})
  check('pools', function(x) return F.avg_pool2d(x, 2):sum() + F.max_pool2d(x, 2):sum() end, {img})
end)

test.case('gradcheck reports a wrong gradient and errors of fn', function()
  local a = leaf(3)
  local ok, rep = lm.autograd.gradcheck(function(p) return p:detach() * p end, {a})
  test.eq(ok, false)
  test.eq(rep.ok, false)
  test.eq(rep.input, 1)
  test.ok(type(rep.message) == 'string' and #tostring(rep) > 0)
  test.raises(function() lm.autograd.gradcheck(function() error('boom') end, {a}) end,
    'lm.autograd.gradcheck: fn failed: .*boom')
  test.raises(function() lm.autograd.gradcheck(function() return 1 end, {a}) end,
    'fn must return a tensor')
  test.raises(function() lm.autograd.gradcheck(function(p) return p end, {a}, {tol = 1}) end,
    'unknown option')
end)
