-- lm.graph and lm.compile (issue 31): capture (nodes, values, storage kinds; views launch nothing),
-- replay against eager on new inputs (broadcasts, transposed inputs, odd, size-1 and empty dims),
-- each pass (dce, fold, cse, simplify, fuse: what it removes and what it must never touch), the
-- fused kernel against the nodes one by one (bit for bit without exp/log/sin/cos/tanh, within
-- 2 ulp with them), kernel and byte counts in the style of tinygrad's test_schedule, compiled
-- training steps against eager (SGD with momentum, Adam with a changing learning rate), guards
-- and re-traces, graph breaks naming the line, bad input.
local test = require 'lumen.test'
local graph = require 'lumen.graph'
local nn, optim = require 'lumen.nn', require 'lumen.optim'
local F = lm.nn.functional

local function quiet(fn, opts)
  opts = opts or {}
  opts.quiet = true
  return lm.compile(fn, opts)
end

-- Runs f on args twice (capture, then the program): the compiled call's results and info.
local function compiled(fn, ...)
  local f = quiet(fn)
  f(...)
  local r = table.pack(f(...))
  test.ok(f.info.compiled, 'the second call ran the program')
  return f, table.unpack(r, 1, r.n)
end

local function kernels(fn, ...)
  local f = compiled(fn, ...)
  return f.info.kernels, f
end

-- ---------------------------------------------------------------- capture

test.case('capture: nodes, values and storage kinds; views launch nothing', function()
  local w = lm.randn(5, 3)
  local x = lm.randn(4, 5)
  local g = graph.capture(function(x) return (x:matmul(w) + 1):t():relu() end, x)
  local ops = {}
  for i, n in ipairs(g.nodes) do ops[i] = n.op end
  test.eq(table.concat(ops, ' '), 'matmul fill add relu')
  test.eq(g.nodes[1].kind, 'op')
  test.eq(g.nodes[2].kind, 'fill')
  test.ok(g.nodes[1].where:find('test_graph.lua:%d+$'), 'the node names the line: ' .. g.nodes[1].where)
  -- the transpose is the geometry relu reads: a value over add's storage with swapped strides
  local r = g.values[g.nodes[4].inputs[1]]
  test.eq(table.concat(r.shape, 'x'), '3x4')
  test.eq(table.concat(r.stride, ','), '1,3')
  test.eq(g:storage_of(g.inputs[1]).kind, 'input')
  test.eq(g:storage_of(g.nodes[1].inputs[2]).kind, 'const')
  test.eq(g:storage_of(g.nodes[3].outputs[1]).kind, 'temp')
  test.ok(lm.equal(g.results[1], (x:matmul(w) + 1):t():relu()))
  local p = lm.zeros(3)
  local g2 = graph.capture(function(x) p:add_(x:sum(1)); return p * 2 end, lm.ones(4, 3))
  test.eq(g2:storage_of(g2.nodes[2].outputs[1]).kind, 'state', 'a tensor from before written in place')
  local none = graph.capture(function(x) return x:t():t() end, x)
  test.eq(#none.nodes, 0, 'transpose(transpose(x)) launches nothing')
end)

-- ---------------------------------------------------------------- replay

-- A random elementwise expression over inputs a (r x c), b (r x c or broadcast), w (r x 1),
-- with constants: the op list decides, from seed.
local BIN = { '+', '-', '*' }
local UN = { 'relu', 'abs', 'neg', 'square', 'clamp' }
local function random_fn(seed, transc)
  local rng = seed
  local function rnd(n)
    rng = (rng * 1103515245 + 12345) % 2147483648
    return rng % n + 1
  end
  local steps = {}
  for i = 1, 4 + rnd(6) do
    local k = rnd(transc and 4 or 3)
    if k == 1 then steps[i] = { 'bin', BIN[rnd(#BIN)], rnd(i + 2), rnd(i + 2) }
    elseif k == 2 then steps[i] = { 'un', UN[rnd(#UN)], rnd(i + 2) }
    elseif k == 3 then steps[i] = { 'const', BIN[rnd(#BIN)], rnd(i + 2), rnd(5) - 3 }
    else steps[i] = { 'un', ({ 'exp', 'tanh', 'sigmoid' })[rnd(3)], rnd(i + 2) } end
  end
  return function(a, b, w)
    local vals = { a, b, w }
    for i, s in ipairs(steps) do
      local x = vals[s[3]]
      local v
      if s[1] == 'bin' then
        local y = vals[s[4]]
        v = s[2] == '+' and x + y or s[2] == '-' and x - y or x * y
      elseif s[1] == 'const' then
        v = s[2] == '+' and x + s[4] or s[2] == '-' and x - s[4] or x * s[4]
      elseif s[2] == 'clamp' then v = x:clamp(-1, 1)
      else v = x[s[2]](x) end
      vals[i + 3] = v
    end
    return vals[#vals] + a, vals[#vals - 1] * 2
  end
end

local function inputs(r, c, layout)
  local a, b, w = lm.randn(r, c), lm.randn(r, c), lm.randn(r, 1)
  if layout == 'broadcast' then b = lm.randn(c) end
  if layout == 'transposed' then a = lm.randn(c, r):t() end
  return a, b, w
end

test.case('replay: every pass, against eager on new inputs (bit for bit)', function()
  local shapes = { { 4, 5 }, { 1, 7 }, { 33, 17 }, { 3, 1 }, { 0, 4 }, { 65, 129 } }
  for seed = 1, 24 do
    local sh = shapes[seed % #shapes + 1]
    local layout = ({ 'plain', 'broadcast', 'transposed' })[seed % 3 + 1]
    local fn = random_fn(seed, false)
    local g = graph.capture(fn, inputs(sh[1], sh[2], layout))
    local plain = g:snapshot(0)
    g:optimize()
    for trial = 1, 2 do
      local a, b, w = inputs(sh[1], sh[2], layout)
      local e1, e2 = fn(a, b, w)
      for _, gg in ipairs({ plain, g }) do
        local r1, r2, info = gg:run(a, b, w)
        test.ok(lm.equal(r1, e1) and lm.equal(r2, e2),
          string.format('seed %d, %s %s: the program equals eager', seed, table.concat(sh, 'x'), layout))
        test.eq(info.kernels, gg:cost().kernels)
      end
    end
    test.ok(g:cost().kernels <= plain:cost().kernels)
  end
end)

test.case('fused kernels with exp / tanh / sigmoid: within 2 ulp of eager', function()
  for seed = 1, 12 do
    local fn = random_fn(seed * 7, true)
    local a, b, w = inputs(19, 23, 'plain')
    local g = graph.capture(fn, a, b, w)
    g:optimize()
    local a2, b2, w2 = inputs(19, 23, 'plain')
    local e1, e2 = fn(a2, b2, w2)
    local r1, r2 = g:run(a2, b2, w2)
    for _, p in ipairs({ { r1, e1 }, { r2, e2 } }) do
      local d = (p[1]:double() - p[2]:double()):abs()
      local scale = p[2]:double():abs() + 1e-30
      local rel = (d / scale):max():item()
      test.ok(rel <= 2.5e-7 or d:max():item() <= 1e-30, string.format('seed %d: relative %g', seed, rel))
    end
  end
end)

test.case('models in eval and views between elementwise ops: every pass, against eager', function()
  local conv, bn = nn.Conv2d(3, 8, 3, { padding = 1 }), nn.BatchNorm2d(8)
  -- running statistics and affine parameters of their own (not 0 and 1: nothing to simplify away)
  lm.no_grad(function()
    bn.running_mean:copy_(lm.randn(8))
    bn.running_var:copy_(lm.rand(8) + 0.5)
    bn.weight:copy_(lm.randn(8))
    bn.bias:copy_(lm.randn(8))
  end)
  conv:eval(); bn:eval()
  local conv2 = nn.Conv2d(8, 8, 3, { padding = 1 })
  conv2:eval()
  local fresh_bn = nn.BatchNorm2d(8) -- mean 0, var 1, weight 1, bias 0: x - 0, x * 1, x + 0 everywhere
  fresh_bn:eval()
  local fns = {
    function(x) return bn(conv(x)):relu() end,
    function(x) return fresh_bn(conv(x)):relu() end,
    function(x) local h = bn(conv(x)):relu(); return (fresh_bn(conv2(h)) + h):relu() end, -- a residual block
    function(x) return ((x * 1 + 0):reshape(6, 256):t():relu() * 2):contiguous():view(-1) end,
    function(x) local y = x:flatten(2) + 0; return y:sum(2) + y:amax(2) end,
  }
  lm.no_grad(function()
    for i, fn in ipairs(fns) do
      local x = lm.randn(2, 3, 16, 16)
      local g = graph.capture(fn, x)
      g:optimize()
      local x2 = lm.randn(2, 3, 16, 16)
      local r, e = g:run(x2), fn(x2)
      local d = (r - e):abs():max():item()
      test.ok(d <= 1e-5 * (e:abs():max():item() + 1), string.format('model %d: %g from eager', i, d))
      test.ok(g:cost().kernels < g:snapshot(0):cost().kernels, 'model ' .. i .. ': fewer kernels')
    end
  end)
end)

-- a conv (bias or not) and a BatchNorm with statistics of their own, both in eval
local function conv_bn(cin, cout, bias)
  local c, b = nn.Conv2d(cin, cout, 3, { padding = 1, bias = bias }), nn.BatchNorm2d(cout)
  lm.no_grad(function()
    b.running_mean:copy_(lm.randn(cout))
    b.running_var:copy_(lm.rand(cout) + 0.5)
    b.weight:copy_(lm.randn(cout))
    b.bias:copy_(lm.randn(cout))
  end)
  c:eval(); b:eval()
  return function(x) return b(c(x)) end, c, b
end

test.case('affine: BatchNorm in eval folds into the weights (im2col and Winograd convolutions)', function()
  lm.no_grad(function()
    -- 3 -> 8 on 12x12: an im2col convolution, channels last (the layout pass): the input's
    -- transpose, im2col_nhwc, the product with its epilogue (bias, ReLU) in panels of whole images;
    -- 8 -> 8: the Winograd convolution with its epilogue (bias, ReLU) as one kernel
    for _, cfg in ipairs({ { 3, 8, true, 3 }, { 8, 8, false, 1 }, { 8, 8, true, 1 } }) do
      local f = conv_bn(cfg[1], cfg[2], cfg[3])
      local fn = function(x) return f(x):relu() end
      local x = lm.randn(2, cfg[1], 12, 12)
      local g = graph.capture(fn, x)
      local rw = g:optimize()
      local folded = 0
      for _, r in ipairs(rw) do if r.pass == 'affine' then folded = folded + 1 end end
      test.eq(folded, 1, 'one conv + BN folded')
      test.eq(g:cost().kernels, cfg[4], string.format('conv %d->%d + BN + ReLU', cfg[1], cfg[2]))
      local x2 = lm.randn(2, cfg[1], 12, 12)
      local e = fn(x2)
      for k = 0, #g.log do
        local d = (g:snapshot(k):run(x2) - e):abs():max():item()
        test.ok(d <= 2e-5 * (e:abs():max():item() + 1), string.format('after %d rewrites: %g from eager', k, d))
      end
    end
    -- in training mode the statistics are state (written): nothing folds
    local f, c, b = conv_bn(3, 4, true)
    c:train(); b:train()
    local g = graph.capture(function(x) return f(x) end, lm.randn(2, 3, 8, 8))
    test.eq(#g:pass('affine'), 0, 'BatchNorm in training is not folded')
  end)
end)

-- ---------------------------------------------------------------- the passes one by one

test.case('dce removes what nothing reads; random draws stay', function()
  local x = lm.randn(6, 6)
  local g = graph.capture(function(x) local _ = x:exp(); local _r = lm.rand(6, 6); return x + 1 end, x)
  local rw = g:pass('dce')
  test.eq(#rw, 1)
  test.eq(g.nodes[rw[1].nodes[1]].op, 'exp')
  local kinds = {}
  for _, e in ipairs(g.live) do kinds[#kinds + 1] = e.node.kind end
  test.ok(table.concat(kinds, ' '):find('random'), 'the draw stays (it advances the generator)')
end)

test.case('fold: constants only; never a random draw, an input or a result', function()
  local x = lm.randn(5)
  local g = graph.capture(function(x)
    local c = lm.ones(5) * 3 + 1      -- fill, mul, add: constants
    local r = lm.rand(5) * 2          -- random: not folded, nor what reads it
    return x * c + r, c * 2           -- the second result reads only constants: kept (a result)
  end, x)
  g:pass('fold')
  for _, e in ipairs(g.live) do
    if e.node.kind == 'random' then test.ok(true) end
  end
  local ops = {}
  for _, e in ipairs(g.live) do ops[#ops + 1] = e.node.op end
  test.eq(table.concat(ops, ' '), 'random mul mul add mul', 'fill/mul/add of the constant folded, the rest kept')
  local x2 = lm.randn(5)
  lm.manual_seed(3)
  local r1, r2 = g:run(x2)
  lm.manual_seed(3)
  local e = x2 * 4 + lm.rand(5) * 2
  test.ok(lm.equal(r1, e), 'the draw is replayed from the generator as eager draws it')
  test.ok(lm.equal(r2, lm.full({ 5 }, 8)))
end)

test.case('cse merges equal nodes; not across an in-place write, not random draws', function()
  local x = lm.randn(4, 4)
  local g = graph.capture(function(x) return (x + 1) * (x + 1) end, x)
  local rw = g:pass('fold')
  rw = g:pass('cse')
  test.eq(#rw, 1, 'the second x + 1 is the first')
  test.eq(rw[1].action, 'merge')
  local s = lm.zeros(4, 4)
  local g2 = graph.capture(function(x) local a = s + x; s:add_(x); local b = s + x; return a * b end, x)
  test.eq(#g2:pass('cse'), 0, 's changes between the two s + x')
  local g3 = graph.capture(function(x) return x + lm.rand(4, 4) - lm.rand(4, 4) end, x)
  test.eq(#g3:pass('cse'), 0, 'two draws are two draws')
  local x2 = lm.randn(4, 4)
  test.ok(lm.equal(g:run(x2), (x2 + 1) * (x2 + 1)))
end)

test.case('simplify: x*1, x+0, x/1, x-0, -(-x), x^1, same-layout copies; x-x only on integers', function()
  local x = lm.randn(3, 4)
  local cases = {
    { function(x) return (x * 1):relu() end, 1 },
    { function(x) return (1 * x):relu() end, 1 },
    { function(x) return (x + 0):relu() end, 1 },
    { function(x) return (x / 1):relu() end, 1 },
    { function(x) return (x - 0):relu() end, 1 },
    { function(x) return (-(-x)):relu() end, 1 },
    { function(x) return x:pow(1):relu() end, 1 },
    { function(x) return (x - x):relu() end, 0 },
  }
  for i, c in ipairs(cases) do
    local g = graph.capture(c[1], x)
    g:pass('fold')
    local rw = g:pass('simplify')
    test.eq(#rw, c[2], 'case ' .. i)
    local x2 = lm.randn(3, 4)
    test.ok(lm.equal(g:run(x2), c[1](x2)), 'case ' .. i .. ' equals eager')
  end
  local xi = lm.randint(-5, 5, { 3, 4 })
  local gi = graph.capture(function(x) return (x - x) + x end, xi)
  gi:pass('fold')
  test.eq(#gi:pass('simplify'), 1, 'x - x = 0 on integers')
  local x3 = lm.randint(-5, 5, { 3, 4 })
  test.ok(lm.equal(gi:run(x3), x3))
  local inf = lm.tensor({ math.huge, 1 })
  local gf = graph.capture(function(x) return (x - x) + 1 end, inf)
  gf:optimize()
  test.ok(gf:run(inf):tolist()[1] ~= gf:run(inf):tolist()[1], 'inf - inf stays NaN on floats')
end)

test.case('forward: a copy nothing else reads is written by its producer; not across a read', function()
  local w = lm.randn(6, 5)
  local dst = lm.zeros(4, 5)
  local x = lm.randn(4, 6)
  local g = graph.capture(function(x) local y = x:matmul(w); dst:copy_(y); return dst * 2 end, x)
  local rw = g:pass('forward')
  test.eq(#rw, 1)
  test.eq(g.nodes[rw[1].nodes[2]].op, 'copy')
  local x2 = lm.randn(4, 6)
  local r = g:run(x2)
  test.ok(lm.equal(r, x2:matmul(w) * 2), 'bit for bit')
  test.ok(lm.equal(dst, x2:matmul(w)), 'the destination holds the product')
  local g2 = graph.capture(function(x) local y = x:matmul(w); local z = dst + 1; dst:copy_(y); return z + y end, x)
  test.eq(#g2:pass('forward'), 0, 'the destination is read before the copy; the product after it')
end)

test.case('fuse: one pass over memory, results bit for bit', function()
  local n = 1000
  local a, b, c, d = lm.randn(n), lm.randn(n), lm.randn(n), lm.randn(n)
  local fn = function(a, b, c, d) return ((a + b) * c - d):relu() end
  local g = graph.capture(fn, a, b, c, d)
  local before = g:snapshot(0):cost()
  test.eq(before.kernels, 4)
  test.eq(before.bytes_read, 4 * n * 7, 'unfused: each node reads its operands')
  test.eq(before.bytes_written, 4 * n * 4)
  g:optimize()
  local after = g:cost()
  test.eq(after.kernels, 1)
  test.eq(after.bytes_read, 4 * n * 4, 'fused: four inputs read once')
  test.eq(after.bytes_written, 4 * n, 'one result written')
  local r, info = g:run(a, b, c, d)
  test.ok(lm.equal(r, fn(a, b, c, d)))
  test.eq(info.bytes_read, after.bytes_read)
  local off = graph.capture(fn, a, b, c, d)
  off:optimize({ disable = { fuse = true } })
  test.eq(off:cost().kernels, 4, 'opts.disable.fuse')
end)

-- ---------------------------------------------------------------- kernel counts (tinygrad's test_schedule style)

test.case('kernel counts', function()
  local n = 257
  local a, b, c = lm.randn(n, 9), lm.randn(n, 9), lm.randn(n, 9)
  local w = lm.rand(n, 1)
  local W, bias = lm.randn(9, 5), lm.randn(5)
  local cases = {
    { 'a + b + c', function(a, b, c) return a + b + c end, 1 },
    { '(a + b):relu()', function(a, b) return (a + b):relu() end, 1 },
    { '(a * b):sum():relu(): prologue, reduction, epilogue', function(a, b) return (a * b):sum():relu() end, 1 },
    { 'a sum over a kept inner dim ends a group', function(a, b) return (a * b):sum(1):relu() end, 3 },
    { 'a * (ones * 2 + 1): the constant folded', function(a) return a * (lm.ones(n, 9) * 2 + 1) end, 1 },
    { 'a recomputed a + b: no new kernel', function(a, b) return (a + b) * (a + b) end, 1 },
    { 'x * 1 + 0', function(a) return a * 1 + 0 end, 1 },
    { 'dead code', function(a, b) local _ = a:exp() * b; return a - b end, 1 },
    { 'a * (1 - w) + b * w (w broadcast)', function(a, b, w) return a * (1 - w) + b * w end, 1 },
    { 'a + (b - a) * w', function(a, b, w) return a + (b - a) * w end, 1 },
    { 'an expensive broadcast producer does not fuse', function(a, w) return w:exp() + a end, 2 },
    { 'a cheap broadcast producer fuses', function(a, w) return (w * 2 + 1) + a end, 1 },
    { 'where(a > 0, a, a * 0.1)', function(a) return lm.where(a:gt(0), a, a * 0.1) end, 1 },
    { 'linear + relu: the product and its epilogue', function(a) return F.linear(a, W:t(), bias):relu() end, 1 },
    { 'softmax by hand', function(a)
      local e = (a - a:amax(2, true)):exp()
      return e / e:sum(2, true)
    end, 3 }, -- amax; sub, exp and the sum (e written on the way); the division
    { 'a dtype conversion is a copy', function(a) return a:double() + 1 end, 2 },
    { 'a draw and its use', function(a) return lm.rand_like(a) * a end, 2 },
    { 'transpose(transpose(a)):contiguous()', function(a) return a:t():t():contiguous() end, 0 },
    { 'a transposed copy read by an elementwise node: it reads the transpose', function(a) return a:t():contiguous() + 1 end, 1 },
    { 'a transposed copy that is a result stays', function(a) return a:t():contiguous() end, 1 },
  }
  -- a training step with Adam: each parameter's update is one kernel (the optimizers' fused
  -- updates, in eager too); the step 38 captured, 19 run (the four gradient copies forwarded; the
  -- forward products with their bias (+ ReLU) epilogues, the backward's product with ReLU's gradient)
  lm.manual_seed(1)
  local mlp_ = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 10))
  local adam = optim.Adam(mlp_:parameters(), { lr = 1e-3 })
  local k, f = kernels(function(x, y)
    adam:zero_grad()
    local l = F.cross_entropy(mlp_(x), y)
    l:backward()
    adam:step()
    return l:detach()
  end, lm.randn(16, 20), lm.randint(1, 11, { 16 }))
  local updates = 0
  for _, e in ipairs(f.graph.live) do if not e.fused and e.node.op == 'adam_step' then updates = updates + 1 end end
  test.eq(#f.graph.nodes, 38, 'the Adam step captured')
  test.eq(k, 19, 'the Adam step run')
  test.eq(updates, 4, 'one update kernel per parameter')
  -- models in eval (Winograd convolutions with their epilogues: one kernel each)
  local cb1, cb2 = conv_bn(8, 8, false), conv_bn(8, 8, false)
  local img = lm.randn(2, 8, 8, 8)
  lm.no_grad(function()
    test.eq(kernels(function(x) return cb1(x):relu() end, img), 1, 'conv + BN (eval) + ReLU: one kernel')
    test.eq(kernels(function(x) return (cb2(cb1(x):relu()) + x):relu() end, img), 2, 'a residual block in eval')
  end)
  local args = { a = { a, b, c }, w = { a, b, w } }
  for _, cs in ipairs(cases) do
    local k
    if cs[1]:find('w') and cs[1]:find('broadcast') and not cs[1]:find('producer') then k = kernels(cs[2], a, b, w)
    elseif cs[1]:find('producer') then k = kernels(cs[2], a, w)
    else k = kernels(cs[2], table.unpack(args.a)) end
    test.eq(k, cs[3], cs[1])
  end
end)

test.case('transpose: a layout copy read only by elementwise nodes goes', function()
  local a = lm.randn(33, 17)
  local cases = {
    -- name, fn, transposes removed, kernels after
    { 'read by one node', function(a) return a:t():contiguous():relu() end, 1, 1 },
    { 'read by two nodes (two kernels: siblings do not fuse)', function(a) local t = a:permute(2, 1):contiguous(); return t * 2, t + 1 end, 1, 2 },
    { 'a dtype change is not a layout change', function(a) return a:t():double() + 1 end, 0, 2 },
    { 'read by a reduction: stays', function(a) local t = a:t():contiguous(); return t:sum(2) + t:amax() end, 0, 3 },
    { 'read through a reshape: stays', function(a) return a:t():contiguous():reshape(-1) + 1 end, 0, 2 },
    { 'a result: stays', function(a) local t = a:t():contiguous(); return t, t + 1 end, 0, 2 },
  }
  for _, cs in ipairs(cases) do
    local g = graph.capture(cs[2], a)
    local rw = g:optimize()
    local k = 0
    for _, r in ipairs(rw) do if r.pass == 'transpose' then k = k + 1 end end
    test.eq(k, cs[3], cs[1] .. ': transposes removed')
    test.eq(g:cost().kernels, cs[4], cs[1] .. ': kernels')
    local a2 = lm.randn(33, 17)
    local r, e = table.pack(g:run(a2)), table.pack(cs[2](a2))
    for i = 1, e.n do test.ok(lm.equal(r[i], e[i]), cs[1] .. ': result ' .. i .. ' bit for bit') end
  end
  -- the source overwritten after the copy, before a reader: the copy stays
  local S = lm.randn(6, 4)
  local fn = function(x) local t = S:t():contiguous(); S:add_(1); return t + x end
  local g = graph.capture(fn, lm.zeros(4, 6))
  g:optimize()
  local start = lm.randn(6, 4)
  S:copy_(start)
  local e = fn(lm.zeros(4, 6))
  S:copy_(start)
  test.ok(lm.equal(g:run(lm.zeros(4, 6)), e), 'the copy kept when its source is written before the read')
  local off = graph.capture(function(a) return a:t():contiguous():relu() end, a)
  off:optimize({ disable = { transpose = true } })
  test.eq(off:cost().kernels, 2, 'opts.disable.transpose')
end)

-- ---------------------------------------------------------------- layout (NCHW -> NHWC)

test.case('layout: im2col convolutions of a batch run channels last where the CPU prefers it', function()
  lm.no_grad(function()
    local function model(...)
      local m = nn.Sequential(...)
      for _, mod in ipairs({ ... }) do
        if mod.running_mean then
          mod.running_mean:copy_(lm.randn(mod.running_mean:numel()) * 0.1)
          mod.running_var:copy_(lm.rand(mod.running_var:numel()) + 0.5)
          mod.weight:copy_(lm.rand(mod.weight:numel()) + 0.5)
        end
      end
      m:eval()
      return m
    end
    local function layout_of(g)
      local convs, t = 0, 0
      for _, r in ipairs(g.log) do
        if r.pass == 'layout' then convs, t = convs + 1, t + r.transposes end
      end
      return convs, t
    end
    -- each: name, model, input shape, convolutions converted, transposes inserted, kernels
    local cases = {
      { 'conv+BN+ReLU twice: the input transposed once, the ReLU writes NHWC for the next',
        model(nn.Conv2d(3, 8, 5, { padding = 2 }), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, { padding = 1, stride = 2 }),
          nn.ReLU()), { 4, 3, 12, 12 }, 2, 1, 5 },
      { 'a convolution\'s result as the function\'s result: a transpose back (NCHW, contiguous)',
        model(nn.Conv2d(5, 6, 3, { padding = 1, bias = false })), { 3, 5, 9, 7 }, 1, 2, 4 },
      { 'the bias add writes NCHW for a reader that wants it (max pooling): no transpose back',
        model(nn.Conv2d(4, 6, 5, { padding = 2 }), nn.MaxPool2d(2)), { 2, 4, 10, 10 }, 1, 1, 4 },
      { 'max pooling straight after a convolution: a transpose back before it',
        model(nn.Conv2d(4, 6, 5, { padding = 2, bias = false }), nn.MaxPool2d(2)), { 2, 4, 10, 10 }, 1, 2, 5 },
      { 'convolution straight into convolution: no transpose between',
        model(nn.Conv2d(3, 6, 3, { stride = 2, bias = false }), nn.Conv2d(6, 5, 3, { padding = 2, dilation = 2 }), nn.Tanh()),
        { 5, 3, 13, 11 }, 2, 1, 5 },
      { 'the epilogue (BN folded, ReLU) in panels of whole images of the product (N*H*W, K)',
        model(nn.Conv2d(8, 32, 5, { padding = 2 }), nn.BatchNorm2d(32), nn.ReLU()), { 64, 8, 14, 14 }, 1, 1, 3 },
      { 'a 1x1 convolution of the input: the transpose would cost what it saves (refused)',
        model(nn.Conv2d(6, 4, 1), nn.ReLU()), { 4, 6, 8, 8 }, 0, 0, 4 },
      { 'a grouped convolution: not the pattern (refused)',
        model(nn.Conv2d(4, 4, 3, { groups = 2 }), nn.ReLU()), { 2, 4, 9, 9 }, 0, 0, nil },
      { 'large images: one GEMM per image, no copy to save (refused)',
        model(nn.Conv2d(3, 4, 5), nn.ReLU()), { 2, 3, 24, 24 }, 0, 0, nil },
      { 'float64', model(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU(), nn.Conv2d(4, 4, 5, { padding = 2 })):double(),
        { 3, 3, 7, 9, 'float64' }, 2, 1, nil },
    }
    for _, cs in ipairs(cases) do
      local m, shp = cs[2], cs[3]
      local dt = shp[5] or 'float32'
      local x = lm.randn(shp[1], shp[2], shp[3], shp[4], { dtype = dt })
      local fn = function(x) return m(x) end
      local g = graph.capture(fn, x)
      g:optimize()
      local convs, t = layout_of(g)
      test.eq(convs, cs[4], cs[1] .. ': convolutions to NHWC')
      test.eq(t, cs[5], cs[1] .. ': transposes inserted')
      test.eq(g.layout and g.layout.transposes or 0, cs[5], cs[1] .. ': g.layout.transposes')
      if cs[6] then test.eq(g:cost().kernels, cs[6], cs[1] .. ': kernels') end
      local x2 = lm.randn(shp[1], shp[2], shp[3], shp[4], { dtype = dt })
      local e = m(x2)
      local tol = dt == 'float64' and 1e-12 or 1e-5
      for k = 0, #g.log do -- every rewrite, replayed
        local r = g:snapshot(k):run(x2)
        local d = (r - e):abs():max():item()
        test.ok(d <= tol * (e:abs():max():item() + 1), string.format('%s: after %d rewrites %g from eager', cs[1], k, d))
      end
      local r = g:run(x2)
      test.eq(r:shape(), e:shape(), cs[1] .. ': shape')
      test.ok(r:is_contiguous(), cs[1] .. ': the result is NCHW, contiguous')
    end
    -- a convolution's result read twice: by an elementwise node and by the next convolution
    local c1, c2 = nn.Conv2d(3, 4, 3, { padding = 1 }), nn.Conv2d(4, 4, 3, { padding = 1 })
    c1:eval(); c2:eval()
    local fn = function(x) local y = c1(x); return c2(y) + y:sigmoid() end
    local x = lm.randn(3, 3, 6, 6)
    local g = graph.capture(fn, x)
    g:optimize()
    test.eq({ layout_of(g) }, { 2, 1 }, 'read twice: both converted, one transpose (the input); the bias add writes NHWC for both readers')
    local x2 = lm.randn(3, 3, 6, 6)
    test.ok((g:run(x2) - fn(x2)):abs():max():item() < 1e-5, 'residual: as eager')
    -- a device without the channels-last loop keeps NCHW (the CUDA and OpenCL devices have none)
    local m = model(nn.Conv2d(3, 8, 5, { padding = 2 }), nn.ReLU())
    g = graph.capture(function(x) return m(x) end, lm.randn(4, 3, 12, 12))
    test.ok(g:supports('im2col_nhwc', 1), 'the CPU has the loop')
    g.supports = function() return false end
    g:optimize()
    test.eq({ layout_of(g) }, { 0, 0 }, 'a device that does not prefer NHWC')
    -- switched off; and in training (weights written by the step): NCHW
    g = graph.capture(function(x) return m(x) end, lm.randn(4, 3, 12, 12))
    g:optimize({ disable = { layout = true } })
    test.eq({ layout_of(g) }, { 0, 0 }, 'opts.disable.layout')
  end)
  local m = nn.Sequential(nn.Conv2d(3, 4, 3, { padding = 1 }), nn.ReLU())
  local opt = optim.SGD(m:parameters(), { lr = 0.1 })
  local g = graph.capture(function(x)
    opt:zero_grad()
    local l = m(x):sum()
    l:backward()
    opt:step()
    return l:detach()
  end, lm.randn(4, 3, 8, 8))
  g:optimize()
  local n = 0
  for _, r in ipairs(g.log) do if r.pass == 'layout' then n = n + 1 end end
  test.eq(n, 0, 'a training step keeps NCHW (the weights are state, the columns saved for backward)')
end)

-- ---------------------------------------------------------------- anchors: prologues and epilogues

test.case('anchor: a reduction with its prologue and epilogue, bit for bit', function()
  local function nan_equal(x, y)
    if lm.equal(x, y) then return true end
    local nx, ny = x:ne(x), y:ne(y)
    return lm.equal(nx, ny) and lm.equal(lm.where(nx, lm.zeros_like(x), x), lm.where(ny, lm.zeros_like(y), y))
  end
  -- odd sizes, size-1 dims, one long line split over the threads (131075 >= 4 x the grain), a
  -- transposed and a broadcast input to the prologue
  for _, sh in ipairs({ { 5, 7 }, { 3, 1, 2049 }, { 1, 131075 }, { 4097 }, { 17, 300 }, { 7, 1, 3 }, { 2, 2 } }) do
    local nd = #sh
    local a = lm.randn(sh)
    local rev = {}
    for i = nd, 1, -1 do rev[#rev + 1] = sh[i] end
    local b = nd == 2 and lm.randn(rev):t() or lm.randn(sh) -- transposed where 2-D
    local c = lm.randn(sh[nd])                                -- broadcast along the rows
    local cases = {
      { 'sum():relu()', function(a, b, c) return (a * b):sum():relu() end },
      { 'sum(last):exp()', function(a, b, c) return (a * b + c):sum(nd):exp() end },
      { 'mean(last, keepdim)', function(a, b, c) return (a - b):mean(nd, true) end },
      { 'amax(last) * 2', function(a, b, c) return (a * c):amax(nd) * 2 end },
      { 'amin()', function(a, b, c) return (a + b):amin() end },
      { 'float64 sum', function(a, b, c) return (a:double() * 3):sum(nd) end },
    }
    for _, cs in ipairs(cases) do
      local g = graph.capture(cs[2], a, b, c)
      g:optimize()
      local name = string.format('%s on %s', cs[1], table.concat(sh, 'x'))
      local anchored = 0
      for _, r in ipairs(g.log) do if r.pass == 'anchor' then anchored = anchored + 1 end end
      test.eq(anchored, 1, name .. ': anchored')
      local a2, b2 = lm.randn(sh), nd == 2 and lm.randn(rev):t() or lm.randn(sh)
      test.ok(lm.equal(g:run(a2, b2, c), cs[2](a2, b2, c)), name .. ': bit for bit eager')
    end
  end
  -- NaN wins a max as in eager; -0 and 0: the first
  local x = lm.randn(3, 50)
  x[2][17] = 0 / 0
  local g = graph.capture(function(x) return (x * 1.5):amax(2):neg() end, x)
  g:optimize()
  test.ok(nan_equal(g:run(x), (x * 1.5):amax(2):neg()), 'NaN in a max')
  -- not anchored: a kept dim inside the reduced ones, an integer sum, an empty input, a consumer
  -- over the input's shape (softmax's x - max), an argmax
  local function anchors(fn, ...)
    local g2 = graph.capture(fn, ...)
    g2:optimize()
    local k = 0
    for _, r in ipairs(g2.log) do if r.pass == 'anchor' then k = k + 1 end end
    return k, g2
  end
  local m = lm.randn(6, 5)
  test.eq(anchors(function(m) return (m * 2):sum(1) end, m), 0, 'a sum over dim 1 of 6x5 keeps dim 2 inside')
  test.eq(anchors(function(m) return (m:int() + 1):sum() end, m), 0, 'an integer sum')
  test.eq(anchors(function(m) return (m * 2):sum() end, lm.randn(0, 5)), 0, 'an empty input')
  test.eq(anchors(function(m) return m - m:amax(2, true) end, m), 0, 'x - max: over the input, not the result')
  test.eq(anchors(function(m) return (m * 2):argmax(2) end, m), 0, 'argmax')
  -- the rewrite replays: snapshot(k) of the log, and the switch
  local k, g3 = anchors(function(a, b) return (a * b):sum():relu() end, m, m)
  test.eq(k, 1)
  test.eq(g3:snapshot(#g3.log):cost().kernels, 1, 'the snapshot replays the anchor')
  test.eq(g3:snapshot(#g3.log - 1):cost().kernels, 3, 'before it: mul, sum, relu')
  local off = graph.capture(function(a, b) return (a * b):sum():relu() end, m, m)
  off:optimize({ disable = { anchor = true } })
  test.eq(off:cost().kernels, 3, 'opts.disable.anchor')
end)

test.case('anchor: a product with its epilogue, in panels of rows', function()
  local W, bias = lm.randn(300, 77), lm.randn(77)
  local fn = function(x) return F.linear(x, W:t(), bias):relu() end
  for _, rows in ipairs({ 1, 4, 851, 1000, 3001 }) do -- 851 rows of 77 floats: one 256 KiB panel
    local x = lm.randn(rows, 300)
    local g = graph.capture(fn, x)
    g:optimize()
    test.eq(g:cost().kernels, 1, rows .. ' rows: one kernel')
    local x2 = lm.randn(rows, 300)
    local r, e = g:run(x2), fn(x2)
    local d = (r - e):abs():max():item()
    test.ok(d <= 1e-5 * (e:abs():max():item() + 1), string.format('%d rows: %g from eager', rows, d))
    if rows <= 851 then test.ok(lm.equal(r, e), rows .. ' rows, one panel: bit for bit') end
  end
  -- an epilogue reading the product transposed (a square one: the shapes agree, the rows do not)
  -- is not cut with its rows: it stays a kernel of its own
  local P, Q, Cc = lm.randn(600, 40), lm.randn(40, 600), lm.randn(600, 600)
  local tf = function(p, q, c) return (p:matmul(q):t() + c):relu() end
  local gt = graph.capture(tf, P, Q, Cc)
  gt:optimize()
  test.eq(gt:cost().kernels, 2, 'a transposed read: product, then the elementwise kernel')
  test.ok((gt:run(P, Q, Cc) - tf(P, Q, Cc)):abs():max():item() <= 1e-4, 'a transposed read: as eager')
  -- a batched product: the batch dim cut with both operands
  local A, B = lm.randn(40, 33, 20), lm.randn(40, 20, 70)
  local bf = function(a, b) return (a:matmul(b) + 1):tanh() end
  local g = graph.capture(bf, A, B)
  g:optimize()
  test.eq(g:cost().kernels, 1, 'batched matmul + epilogue')
  local d = (g:run(A, B) - bf(A, B)):abs():max():item()
  test.ok(d <= 1e-5, 'batched: ' .. d)
  -- the Winograd convolution cut by images: the same bits as without the anchor pass
  lm.no_grad(function()
    local cb = conv_bn(8, 16, true)
    local img = lm.randn(37, 8, 16, 16)
    local f2 = function(x) return (cb(x) + 0.5):relu() end
    local g1, g2 = graph.capture(f2, img), graph.capture(f2, img)
    g1:optimize()
    g2:optimize({ disable = { anchor = true } })
    test.eq(g1:cost().kernels, 1)
    test.eq(g2:cost().kernels, 2)
    test.ok(lm.equal(g1:run(img), g2:run(img)), 'conv panels: bit for bit')
    test.eq(g1:cost().bytes_written, 37 * 16 * 16 * 16 * 4, 'the convolution result stays in the cache: one result written')
  end)
  -- an epilogue writing what a later panel reads (S = relu(X S): 512 KiB, two panels, S read
  -- whole by each): the product whole first, then the epilogue — eager's bits
  local X, S = lm.randn(512, 512) * 0.05, lm.randn(512, 256)
  local fn4 = function(x) S:copy_((X:matmul(S) + x):relu()); return S:sum(2) end
  local g4 = graph.capture(fn4, lm.zeros(256))
  g4:optimize()
  test.eq(g4:cost().kernels, 2, 'product + epilogue writing S, then the sum')
  local start, z = lm.randn(512, 256), lm.zeros(256)
  S:copy_(start)
  local e = fn4(z)
  local se = S:clone()
  S:copy_(start)
  local r = g4:run(z)
  test.ok(lm.equal(S, se) and lm.equal(r, e), 'an epilogue writing the product\'s input: eager\'s bits')
  -- the product's input written between it and its epilogue: the epilogue moves up, not the
  -- product down
  local S2, W2 = lm.randn(300, 64), lm.randn(64, 64)
  local fn5 = function(x) local y = S2:matmul(W2); S2:add_(1); return (y + x):relu() end
  local g5 = graph.capture(fn5, lm.zeros(64))
  g5:optimize()
  test.eq(g5:cost().kernels, 2, 'the product with its epilogue, then the write')
  local start5 = lm.randn(300, 64)
  S2:copy_(start5)
  local e5 = fn5(lm.zeros(64))
  S2:copy_(start5)
  test.ok(lm.equal(g5:run(lm.zeros(64)), e5), 'the product read its input before the write')
  -- bad input: a product takes no prologue; two anchors in one group
  local cap = graph.capture(function(a, b) return a:exp():matmul(b):sum() end, lm.randn(4, 4), lm.randn(4, 4)).cap
  local p = lm._graph.program(cap)
  test.raises(function() p:add_fused({ 1, 2 }, nil, { 2 }) end, 'takes an epilogue, not a prologue')
  test.raises(function() p:add_fused({ 2, 3 }, nil, { 3 }) end, 'one reduction or product')
end)

-- ---------------------------------------------------------------- generated code

test.case('codegen: generated C for a fused group gives the interpreter\'s bits', function()
  local cg = lm._graph.codegen
  local function same(x, y) -- equal, NaN where NaN
    if x:dtype() ~= y:dtype() or not lm.equal(x:ne(x), y:ne(y)) then return false end
    local z = lm.zeros_like(x)
    return lm.equal(lm.where(x:ne(x), z, x), lm.where(y:ne(y), z, y))
  end
  local has_cc = os.execute('command -v cc > /dev/null 2>&1')
  local n, m = 257, 9
  local a, b = lm.randn(n, m), lm.randn(m, n):t()        -- b transposed
  a[3][4], a[5][1], b[7][2] = 0 / 0, 1 / 0, -0.0        -- NaN, inf, -0
  local w, c = lm.rand(n, 1), lm.randn(m)                -- a column and a row broadcast
  local cases = {
    { 'lerp', function(a, b, w, c) return a * (1 - w) + b * w end },
    { 'where', function(a, b, w, c) return lm.where(a:gt(0), a, a * 0.1) + c end },
    { 'clamp abs sqrt', function(a, b, w, c) return (a:clamp(-0.5, 0.5) - b):abs():sqrt() * 3 end },
    { 'max min div', function(a, b, w, c) return (a / b):maximum(b):minimum(a * 2) - w end },
    { 'sign floor ceil', function(a, b, w, c) return a:sign() * b:floor() + a:ceil() / 2 end },
    { 'comparisons', function(a, b, w, c) return lm.where(a:le(b), a:square(), b:reciprocal()) + a:eq(b):float() end },
    { 'relu leaky pow', function(a, b, w, c) return F.leaky_relu((a * 2):relu() - b ^ 2, 0.2) + a:abs() ^ 0.5 end },
    { 'float64', function(a, b, w, c) return (a:double() * 2 + 1):relu() * b:double() end },
  }
  for _, cs in ipairs(cases) do
    local got = {}
    for k, on in ipairs({ false, true }) do
      cg({ enabled = on, min = 0 })
      local g = graph.capture(cs[2], a, b, w, c)
      g:optimize()
      got[k] = g:run(a, b, w, c)
    end
    test.ok(same(got[1], got[2]), cs[1] .. ': generated = interpreted, bit for bit')
  end
  local st = cg()
  if has_cc then
    test.ok(st.loaded >= #cases, 'a kernel generated and loaded for each case: ' .. st.status)
  else
    print('codegen: no C compiler here; the interpreter ran every case (' .. st.status .. ')')
  end
  -- a group with exp stays with the interpreter; the chain of the benchmark is generated
  test.raises(function() cg({ min = -1 }) end, 'min must be >= 0')
  cg({ enabled = true, min = 262144 })
end)

test.case('g:kernel: a fused group as one of the course\'s kernels (emu traced, cpu timed, cuda)', function()
  local a, b, w = lm.randn(37, 9), lm.randn(9, 37):t(), lm.rand(37, 1)
  a[2][3], a[4][5], b[6][7], a[8][1] = 0 / 0, 1 / 0, -0.0, -1 / 0 -- NaN, inf, -0 through max, min, relu
  local exact = {
    { 'lerp, relu', function(a, b, w) return (a * (1 - w) + b * w):relu() end, 4 },
    { 'clamp, where, comparisons', function(a, b, w) return lm.where(a:gt(b), a:clamp(-0.3, 0.3), b * w) end, 3 },
    { 'abs, sqrt, max, min, div', function(a, b, w) return (a:abs():sqrt() / (w + 1)):maximum(b):minimum(a) end, 4 },
    { 'float64', function(a, b, w) return ((a:double() - 1) * b:double()):neg() end, 3 },
  }
  for _, cs in ipairs(exact) do
    local g = graph.capture(cs[2], a, b, w)
    g:optimize()
    local k
    for i, e in ipairs(g.live) do if e.fused then k = i end end
    test.ok(k, cs[1] .. ': a fused group')
    local want = g:run(a, b, w)
    local r, info = g:kernel(k, { trace = true })
    test.eq(info.source, 'emu')
    test.eq(info.pattern, 'fused')
    local function same(x, y)
      local z = lm.zeros_like(x)
      return lm.equal(x:ne(x), y:ne(y)) and lm.equal(lm.where(x:ne(x), z, x), lm.where(y:ne(y), z, y))
    end
    test.ok(same(r[1], want), cs[1] .. ': emulated = the program, bit for bit (NaN where NaN)')
    local n = want:numel()
    -- each thread loads each input once and stores its result once: what fusion saves
    test.eq(info.counters.global_loads, n * info.counters.inputs, cs[1] .. ': one load per input per element')
    test.eq(info.counters.global_stores, n * info.counters.outputs, cs[1] .. ': one store per result per element')
    test.ok(info.trace, 'the trace the threads scene draws')
    local rc, ic = g:kernel(k, { backend = 'cpu', repeats = 2 })
    test.ok(same(rc[1], want), cs[1] .. ': cpu = the program')
    test.ok(ic.impl:find("engine's fused kernel"), ic.impl)
    local ok, err = pcall(g.kernel, g, k, { backend = 'cuda' })
    if lm.cuda.is_available() then
      test.ok(ok and same(err[1]:to('cpu'), want), cs[1] .. ': cuda = the program')
    else
      test.ok(not ok and tostring(err):find("backend 'cuda' is not available"), tostring(err))
    end
  end
  -- transcendental functions: libm's here, glibc's vector or scalar ones in the engine
  local ca, cb = lm.randn(37, 9), lm.randn(37, 9)
  local g = graph.capture(function(a, b) return (a:exp() * b):tanh() + a:sigmoid() end, ca, cb)
  g:optimize()
  local r = g:kernel(1)
  local want = g:run(ca, cb)
  test.ok((r[1] - want):abs():max():item() <= 1e-6, 'exp, tanh, sigmoid within 1e-6')
  -- two results
  local g2 = graph.capture(function(a, b) local t = (a - b):abs(); return t, t * 2 + a end, ca, cb)
  g2:optimize()
  local r2, i2 = g2:kernel(1)
  local w1, w2 = g2:run(ca, cb)
  test.eq(#r2, 2, 'both results')
  test.ok(lm.equal(r2[1], w1) and lm.equal(r2[2], w2) or lm.equal(r2[1], w2) and lm.equal(r2[2], w1))
  test.eq(i2.counters.outputs, 2)
  -- what it refuses, naming the step
  local g3 = graph.capture(function(a, b) return (a:matmul(b:t()) + 1):sum() end, a, b)
  g3:optimize({ disable = { anchor = true } })
  test.raises(function() g3:kernel(1) end, 'not a fused elementwise group')
  test.raises(function() g3:kernel(99) end, 'step 99 of')
  local g4 = graph.capture(function(a) return (a * 3 + 1):sum():relu() end, a)
  g4:optimize()
  test.raises(function() g4:kernel(1) end, 'a reduction or a product')
  local g5 = graph.capture(function(x) return (x * 3 + 1):abs() end, lm.randint(0, 9, { 4, 4 }))
  g5:optimize()
  test.raises(function() g5:kernel(1) end, 'float32 or float64')
  test.raises(function() g:kernel(1, { backend = 'tpu' }) end, 'backend')
end)

-- ---------------------------------------------------------------- compiled training steps

local function mlp(seed)
  lm.manual_seed(seed)
  return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 10))
end

local function train_pair(make_opt, steps, opts)
  local m1, m2 = mlp(1), mlp(1)
  local o1, o2 = make_opt(m1), make_opt(m2)
  local function step(m, o, x, y)
    o:zero_grad()
    local loss = F.cross_entropy(m(x), y)
    loss:backward()
    o:step()
    return loss:detach()
  end
  local f = quiet(function(x, y) return step(m2, o2, x, y) end, opts)
  lm.manual_seed(7)
  local worst = 0
  for i = 1, steps do
    if i == 4 then
      o1.param_groups[1].lr = o1.param_groups[1].lr / 2
      o2.param_groups[1].lr = o2.param_groups[1].lr / 2
    end
    local x, y = lm.randn(16, 20), lm.randint(1, 11, { 16 })
    local l1, l2 = step(m1, o1, x, y), f(x, y)
    worst = math.max(worst, math.abs(l1:item() - l2:item()))
  end
  local pd = 0
  for i, p in ipairs(m1:parameters()) do pd = math.max(pd, (p - m2:parameters()[i]):abs():max():item()) end
  return worst, pd, f, o1, o2
end

test.case('a compiled training step equals the eager one (SGD with momentum, Adam, lr changed)', function()
  for _, mk in ipairs({
    function(m) return optim.SGD(m:parameters(), { lr = 0.1, momentum = 0.9 }) end,
    function(m) return optim.Adam(m:parameters(), { lr = 1e-2 }) end,
    function(m) return optim.RMSprop(m:parameters(), { lr = 1e-2 }) end,
  }) do
    local worst, pd, f, o1, o2 = train_pair(mk, 8, { disable = { fuse = true } })
    test.eq(worst, 0, 'losses bit for bit without fusion')
    test.eq(pd, 0, 'parameters bit for bit without fusion')
    test.eq(f.stats.captures, 1)
    test.eq(f.stats.breaks, 0)
    local s1, s2 = o1.state[o1.param_groups[1].params[1]], o2.state[o2.param_groups[1].params[1]]
    test.eq(s1 and s1.step, s2 and s2.step, 'the optimizer state advanced alike')
    worst, pd, f = train_pair(mk, 8)
    test.ok(worst < 1e-5 and pd < 1e-5, string.format('fused: loss %g, parameters %g apart', worst, pd))
    test.ok(f.info.kernels < #f.graph.nodes, 'fewer kernels than captured')
  end
end)

-- ---------------------------------------------------------------- guards, re-traces, breaks

test.case('guards: new shapes, dtypes, strides and Lua values re-trace; the cache is bounded', function()
  local f = quiet(function(x, k) return x * k + 1 end)
  local x = lm.randn(3, 4)
  f(x, 2)
  f(x, 2)
  test.eq(f.stats.captures, 1)
  test.ok(f.info.compiled)
  f(lm.randn(5, 4), 2)
  test.eq(f.stats.retraces, 1)
  test.ok(f.stats.why[1]:find('3x4') and f.stats.why[1]:find('5x4'), f.stats.why[1])
  local r = f(x, 3)
  test.eq(f.stats.retraces, 2, 'another number re-traces')
  test.ok(f.stats.why[2]:find('n2') and f.stats.why[2]:find('n3'), f.stats.why[2])
  test.ok(lm.equal(r, x * 3 + 1))
  f(x:double(), 2)
  test.ok(f.stats.why[3]:find('float64'), f.stats.why[3])
  f(lm.randn(4, 3):t(), 2)
  test.eq(f.stats.retraces, 4, 'other strides re-trace')
  local t = quiet(function(p) return p.a + p.b end)
  t({ a = x, b = x })
  t({ a = x, b = x, c = 1 })
  test.eq(t.stats.retraces, 1, 'a table of another shape')
  local lim = quiet(function(x) return x + 1 end, { max_cache = 2 })
  lim(lm.ones(1)); lim(lm.ones(2)); lim(lm.ones(3))
  test.ok(lim.broken and lim.broken:find('2 captures'), tostring(lim.broken))
  test.ok(lm.equal(lim(lm.ones(4)), lm.full({ 4 }, 2)), 'then eager')
end)

test.case('graph breaks name the line and fall back to eager', function()
  local x = lm.randn(4)
  local function check(fn, pattern, ...)
    local f = quiet(fn)
    local r = f(...)
    test.ok(f.broken and f.broken:find(pattern), tostring(f.broken))
    test.ok(f.broken:find('test_graph.lua:%d+'), 'names the line: ' .. f.broken)
    local r2 = f(...)
    test.ok(not f.info.compiled)
    return r, r2
  end
  local r1, r2 = check(function(x) if x:sum():item() > 0 then return x * 2 end return x * 3 end, 'item', x)
  test.ok(lm.equal(r1, r2), 'the eager results')
  local saved = _G.print
  _G.print = function() end -- the break is what is tested, not the output
  check(function(x) _G.print('hello'); return x + 1 end, 'print', x)
  _G.print = saved
  check(function(x) local _ = tostring(x); return x + 1 end, 'printing a tensor', x)
  check(function(x) local _ = x:tolist(); return x + 1 end, 'tolist', x)
  check(function(x) x:add_(1); return x * 2 end, 'changes input 1 in place', lm.randn(3))
  local p = { lm.randn(3) }
  check(function(x) return x * lm.tensor({ 1, 2, 3 }):add_(1) end, 'host filled', lm.randn(3))
  local wgrad = lm.randn(3, { requires_grad = true })
  check(function(x) return x * wgrad end, 'result 1 requires grad', lm.randn(3))
  local f = quiet(function(x) return x * 2 end)
  f(lm.randn(3, { requires_grad = true }))
  test.ok(f.broken and f.broken:find('input 1 requires grad'), tostring(f.broken))
  local nt = quiet(function(x) return 3 end)
  test.eq(nt(x), 3)
  test.ok(nt.broken and nt.broken:find('returned no tensor'), tostring(nt.broken))
  local clip = quiet(function(x)
    local ps = { lm.randn(3) }
    ps[1].grad = x:clone()
    optim.clip_grad_norm_(ps, 1)
    return ps[1].grad
  end)
  clip(lm.randn(3))
  test.ok(clip.broken and clip.broken:find('clip_grad_norm_'), tostring(clip.broken))
  test.ok(p)
end)

test.case('lm.compile with example inputs; a compiled function inside another runs its program', function()
  local inner = quiet(function(x) return x * 2 + 1 end)
  local outer = quiet(function(x) return inner(x):relu() end)
  local x = lm.randn(8)
  inner(x)
  outer(x)
  local r = outer(x)
  test.ok(lm.equal(r, (x * 2 + 1):relu()))
  local ex = lm.compile(function(x) return x + 1 end, { lm.randn(2) }, { quiet = true })
  test.eq(ex.stats.captures, 1, 'captured at lm.compile')
  ex(lm.randn(2))
  test.ok(ex.info.compiled)
end)

test.case('bad input', function()
  test.raises(function() lm.compile(3) end, 'lm.compile: fn must be a function')
  test.raises(function() lm.compile(function() end, 'fast') end, 'lm.compile: opts must be a table')
  test.raises(function() graph.capture(nil) end, 'lm.graph.capture: fn must be a function')
  local x = lm.randn(3)
  local g = graph.capture(function(x) return x + 1 end, x)
  test.raises(function() g:snapshot(5) end, 'snapshot%(k%) takes 0 <= k <= 0')
  test.raises(function() g:optimize({ order = { 'nope' } }) end, "no pass named 'nope'")
  test.raises(function() g:run(lm.randn(4)) end, 'input 1 has shape %[4%]; the capture had %[3%]')
  test.raises(function() g:run(lm.randn(3):double()) end, 'input 1 is float64 on cpu; the capture had float32')
  test.raises(function() g:run() end, '0 inputs given, the capture had 1')
  test.raises(function() graph.capture(function(x) error('boom') end, x) end, 'boom')
  test.eq(lm._graph.capturing(), false, 'an error inside the function ends the capture')
  test.raises(function() graph.capture(function(a, b) return a + b end, x, x:view(3)) end, 'share memory')
  test.eq(lm._graph.capturing(), false)
  -- passes that add nodes: what the capture refuses
  local n0 = #g.nodes
  test.raises(function() g:insert(1, 'no_such_op', nil, { 1 }, { 2 }) end, "add_node: no op named 'no_such_op'")
  test.raises(function() g:insert(1, 'relu', nil, { 1, 1 }, { 2 }) end, 'add_node: relu with 2 inputs and 1 outputs')
  test.raises(function() g:insert(1, 'relu', nil, { 99 }, { 2 }) end, 'add_node: input 1 is no value')
  test.raises(function() g:insert(1, 'copy', nil, { 1 }, { g:new_temp({ 4 }, 'float32') }) end, 'copy of %[3%] into %[4%]')
  test.raises(function() g:insert(1, 'im2col_nhwc', 1, { 1 }, { 2 }) end, 'takes parameters of another kind than node 1')
  test.eq(#g.live, 2, 'nothing inserted')
  test.eq(#g.nodes, n0)
  test.raises(function() g.cap:add_temp(g:tensor(1)) end, 'must have memory of its own')
  test.raises(function() g.cap:value_of(lm.zeros(3)) end, 'not in the capture')
  test.raises(function() F.unfold(lm.zeros(1, 4, 4, 2), 2, { layout = 'chw' }) end, "layout must be 'nchw' or 'nhwc', got 'chw'")
  test.raises(function() F.unfold(lm.zeros(1, 4, 4, 2, { requires_grad = true }), 2, { layout = 'nhwc' }) end,
    'F.unfold: has no backward rule and the input requires grad')
  test.raises(function() F.unfold(lm.zeros(4, 4), 2, { layout = 'nhwc' }) end, 'F.unfold: expects %(N, H, W, C%) or %(H, W, C%), got shape %[4, 4%]')
end)
