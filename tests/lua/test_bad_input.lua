-- Bad input: every wrong call below must raise a Lua error whose message names the function
-- that was called (and usually the offending value), and the process must live on. Checked with
-- the sanitizers in CI (LUMEN_SANITIZE=ON).
local test = require 'lumen.test'

local x = lm.arange(6.0):view(2, 3) -- float32 (2, 3)
local closed = lm.ones(3)
closed:close()
local recursive = setmetatable({}, { __tostring = function(s) return tostring(s) end })
local nan = 0 / 0

-- { name of the group, { pattern the message must match, function }, ... }
local groups = {
  { 'wrong types',
    { "^lm%.zeros: size 1 must be a non%-negative integer, got string 'a'", function() return lm.zeros('a') end },
    { '^lm%.ones: size 1 must be a non%-negative integer, got true', function() return lm.ones(true) end },
    { "^lm%.tensor: expected a number or a nested table of numbers, got string", function() return lm.tensor('abc') end },
    { "^lm%.tensor: element %[2%] must be a number, got string 'a'", function() return lm.tensor({ 1, 'a' }) end },
    { '^lm%.tensor: element %[2%] has 1 entries, expected 2', function() return lm.tensor({ { 1, 2 }, { 3 } }) end },
    { '^lm%.full: argument 1 must be a table of sizes', function() return lm.full(2, 3) end },
    { '^lm%.arange: stop must be a number', function() return lm.arange('a') end },
    { '^lm%.linspace: steps must be an integer', function() return lm.linspace(0, 1, 'n') end },
    { "^lm%.eye: n must be an integer, got string '3'", function() return lm.eye('3') end },
    { '^lm%.manual_seed: seed must be an integer', function() return lm.manual_seed('x') end },
    { "^Tensor:add: argument 1 must be a tensor or a number, got string 's'", function() return x:add('s') end },
    { "^Tensor:__add: argument 2 must be a tensor or a number, got string 's'", function() return x + 's' end },
    { '^Tensor:__mul: argument 1 must be a tensor or a number, got a table', function() return {} * x end },
    { '^lm%.zeros: unknown option .dtpye.', function() return lm.zeros(2, { dtpye = 'float64' }) end },
    { "^lm%.zeros: option dtype: unknown dtype string 'float8'", function() return lm.zeros(2, { dtype = 'float8' }) end },
    { "^lm%.zeros: q4_0 is a block type", function() return lm.zeros(2, 32, { dtype = 'q4_0' }) end },
    { '^lm%.ones: option requires_grad must be a boolean', function() return lm.ones(2, { requires_grad = 1 }) end },
    { "^lm%.zeros: device must be 'cpu', 'cuda' or 'opencl'", function() return lm.zeros(2, { device = 'tpu' }) end },
    { '^Tensor:to: unknown dtype or device', function() return x:to('quarter') end },
    { '^Tensor:sum: keepdim must be a boolean', function() return x:sum(1, 1) end },
    { '^lm%.set_grad_enabled: argument 1 must be a boolean', function() return lm.set_grad_enabled(1) end },
  },
  { 'nil',
    { '^lm%.zeros: size 1 must be a non%-negative integer, got nil', function() return lm.zeros(nil) end },
    { '^lm%.tensor: expected a number or a nested table of numbers, got nil', function() return lm.tensor(nil) end },
    { '^Tensor:view: size 1 must be', function() return x:view(nil) end },
    { '^Tensor:add: argument 1 must be a tensor or a number, got no value', function() return x:add() end },
    { '^Tensor:narrow: dim must be an integer, got nil', function() return x:narrow(nil, 1, 1) end },
    { '^lm%.cat: argument 1 must be a table of tensors', function() return lm.cat(nil) end },
    { '^Tensor:index_select: index must be a tensor, got nil', function() return x:index_select(1, nil) end },
    { '^F%.relu: input must be a tensor, got nil', function() return F.relu(nil) end },
    { '^Tensor:matmul: argument 2 must be a tensor, got nil', function() return x:matmul(nil) end },
    { '^lm%.where: condition must be a tensor, got nil', function() return lm.where(nil, x, x) end },
    { '^lm%.no_grad: argument 1 must be a function, got nil', function() return lm.no_grad(nil) end },
  },
  { 'NaN and fractional numbers',
    { '^lm%.zeros: size 1 must be a non%-negative integer, got nan', function() return lm.zeros(nan) end },
    { '^lm%.zeros: size 1 must be a non%-negative integer, got 2%.5', function() return lm.zeros(2.5) end },
    { '^lm%.arange: stop must be finite, got nan', function() return lm.arange(0, nan) end },
    { '^Tensor:size: dim must be an integer, got %-?nan', function() return x:size(nan) end },
    { '^Tensor:__index: an index must be an integer or a table', function() return x[nan] end },
    { '^Tensor:__index: an index must be an integer or a table', function() return x[1.5] end },
    { '^Tensor:clamp: bounds must not be NaN', function() return x:clamp(nan, 1) end },
    { '^Tensor:view: size 1 must be a non%-negative %(or %-1%) integer, got 2%.5', function() return x:view(2.5, 2) end },
    { '^Tensor:size: dim must be an integer, got 1%.5', function() return x:size(1.5) end },
    { '^lm%.eye: n must be an integer, got 2%.5', function() return lm.eye(2.5) end },
    { '^lm%.randint: high must be an integer, got 2%.5', function() return lm.randint(0, 2.5, { 2 }) end },
    { '^Tensor:narrow: length must be an integer, got 1%.5', function() return x:narrow(1, 1, 1.5) end },
    { '^Tensor:topk: k must be an integer, got 1%.5', function() return x:topk(1.5) end },
    { '^Tensor:transpose: dim1 must be an integer, got 1%.5', function() return x:transpose(1.5, 1) end },
    { '^lm%.zeros: size 1 must be a non%-negative integer, got 1e%+300', function() return lm.zeros(1e300) end },
  },
  { 'negative sizes',
    { '^lm%.zeros: size 1 must be a non%-negative integer, got %-1', function() return lm.zeros(-1) end },
    { '^lm%.ones: size 2 must be a non%-negative integer, got %-3', function() return lm.ones(2, -3) end },
    { '^lm%.linspace: steps must be non%-negative', function() return lm.linspace(0, 1, -1) end },
    { '^lm%.eye: sizes must be non%-negative', function() return lm.eye(-2) end },
    { '^Tensor:view: size 1 must be a non%-negative %(or %-1%) integer, got %-2', function() return x:view(-2, 3) end },
    { '^lm%.empty: size 1 must be a non%-negative integer, got %-1', function() return lm.empty(-1) end },
    { '^lm%.randint: the shape must be a table', function() return lm.randint(0, 3, -1) end },
  },
  { 'overflowing products and allocations beyond the cap',
    { '^lm%.zeros: the element count of shape %[1099511627776, 1099511627776%] overflows', function() return lm.zeros(2 ^ 40, 2 ^ 40) end },
    { '^lm%.ones: the element count of shape .* overflows', function() return lm.ones(2 ^ 62, 4) end },
    { '^lm%.zeros: the element count .* overflows', function() return lm.zeros(math.maxinteger, 2) end },
    { '^lm%.empty: .*overflows', function() return lm.empty(2 ^ 62) end },
    { '^lm%.zeros: cannot allocate shape %[1000000000000%] of float32 %(alloc: .*exceed the limit', function() return lm.zeros(1e12) end },
    { '^lm%.eye: .*cannot allocate', function() return lm.eye(1e7) end },
    { '^Tensor:__mul: cannot allocate', function()
        local prev = lm.set_memory_limit(1 << 20)
        local ok, err = pcall(function() return lm.ones(200000) * 2 end)
        lm.set_memory_limit(prev)
        error(err, 0)
      end },
    { '^lm%.zeros: cannot allocate', function()
        local prev = lm.set_memory_limit(1 << 20)
        local ok, err = pcall(lm.zeros, 1e6)
        lm.set_memory_limit(prev)
        error(err, 0)
      end },
  },
  { 'out-of-range indices and dims',
    { '^Tensor:__index: index 5 is out of range for dim 1 of size 2', function() return x[5] end },
    { '^Tensor:__index: index 0 is out of range for dim 1 of size 2', function() return x[0] end },
    { '^Tensor:__index: index %-3 is out of range for dim 1 of size 2', function() return x[-3] end },
    { '^Tensor:__index: index 9 is out of range for dim 2 of size 3', function() return x[{ 1, 9 }] end },
    { '^Tensor:__index: 3 indices for a 2%-d tensor', function() return x[{ 1, 1, 1 }] end },
    { '^Tensor:__index: range 1: end 9 is out of range', function() return x[{ { 1, 9 } }] end },
    { '^Tensor:__newindex: index 3 is out of range', function() x[3] = 1 end },
    { '^Tensor:size: dim 3 is out of range for a 2%-d tensor', function() return x:size(3) end },
    { '^Tensor:sum: dim 5 is out of range', function() return x:sum(5) end },
    { '^Tensor:select: index 4 is out of range for dim 2 of size 3', function() return x:select(2, 4) end },
    { '^Tensor:narrow: length 5 from start 3 does not fit dim 2 of size 3', function() return x:narrow(2, 3, 5) end },
    { '^Tensor:transpose: dim2 3 is out of range', function() return x:transpose(1, 3) end },
    { '^Tensor:permute: dim 1 appears twice', function() return x:permute(1, 1) end },
    { '^Tensor:unsqueeze: dim 4 is out of range for a 2%-d tensor %(expected 1..3', function() return x:unsqueeze(4) end },
    { '^Tensor:squeeze: dim %-3 is out of range', function() return x:squeeze(-3) end },
    { '^Tensor:index_select: index: index 9 is out of range 1..2', function() return x:index_select(1, lm.tensor({ 9 })) end },
    { '^lm%.cat: dim 3 is out of range', function() return lm.cat({ x }, 3) end },
    { '^lm%.stack: dim 4 is out of range', function() return lm.stack({ x }, 4) end },
    { '^F%.softmax: dim 3 is out of range', function() return F.softmax(x, 3) end },
    { '^Tensor:item: the tensor has 6 elements', function() return x:item() end },
    { '^Tensor:__len: a 0%-d tensor has no length', function() return #lm.tensor(1) end },
    { '^Tensor:size: a 0%-d tensor has no dims %(asked for dim a table%)', function() return lm.tensor(1):size({}) end },
  },
  { 'mismatched shapes',
    { '^Tensor:__add: .*%[2, 3%].*%[4%]', function() return x + lm.ones(4) end },
    { '^Tensor:matmul: .*%[2, 3%].*%[4, 2%]', function() return x:matmul(lm.ones(4, 2)) end },
    { '^lm%.cat: .*shape', function() return lm.cat({ x, lm.ones(2, 4) }, 1) end },
    { '^Tensor:view: shape %[7%] is invalid for input of shape %[2, 3%]', function() return x:view(7) end },
    { '^Tensor:copy_: source shape %[4%] cannot be broadcast to %[2, 3%]', function() return x:clone():copy_(lm.ones(4)) end },
    { '^Tensor:expand: cannot expand shape %[2, 3%]', function() return x:expand(5, 5) end },
    { '^lm%.where: ', function() return lm.where(lm.ones(4), x, x) end },
    { '^F%.linear: ', function() return F.linear(x, lm.ones(2, 2)) end },
    { '^F%.mse_loss: ', function() return F.mse_loss(x, lm.ones(4)) end },
    { '^Tensor:__newindex: .*cannot be broadcast', function() x[1] = lm.ones(5) end },
    { '^Tensor:add_: ', function() return lm.ones(3):add_(lm.ones(2, 3)) end },
  },
  { 'methods called with a wrong self',
    { '^Tensor:add: self must be a tensor, got 5', function() return x.add(5, 1) end },
    { "^Tensor:sum: self must be a tensor, got string 'a'", function() return x.sum('a') end },
    { '^Tensor:view: self must be a tensor, got a table', function() return lm.Tensor.view({}, 2) end },
    { '^Tensor:dim: self must be a tensor, got nil', function() return x.dim(nil) end },
    { '^Tensor:item: self must be a tensor, got 3', function() return lm.Tensor.item(3) end },
    { '^Tensor:__tostring: self must be a tensor, got 5', function() return getmetatable(x).__tostring(5) end },
    { '^Tensor:__index: self must be a tensor, got 5', function() return getmetatable(x).__index(5, 'grad') end },
    { '^Tensor:__len: self must be a tensor, got a userdata', function() return getmetatable(x).__len(io.stdout) end },
    { '^Tensor:__add: expected at least one tensor, got two numbers', function() return getmetatable(x).__add(1, 2) end },
    { '^lm%.sum: argument 1 must be a tensor, got 3', function() return lm.sum(3) end },
  },
  { 'closed tensors',
    { '^Tensor:add: tensor is closed', function() return closed:add(1) end },
    { '^Tensor:__add: argument 1: tensor is closed', function() return closed + 1 end },
    { '^lm%.cat: element 1 of the list: tensor is closed', function() return lm.cat({ closed }) end },
    { '^Tensor:view: tensor is closed', function() return closed:view(3) end },
    { '^Tensor:__index: tensor is closed', function() return closed[1] end },
    { '^Tensor:backward: tensor is closed', function() return closed:backward() end },
    { '^Tensor:add: argument 1: tensor is closed', function() return x:add(closed) end },
    { '^lm%.autograd%.gradcheck: input 1: tensor is closed', function() return lm.autograd.gradcheck(function(a) return a end, { closed }) end },
  },
  { 'user tables whose __tostring recurses are never converted',
    { '^lm%.eye: n must be an integer, got a table', function() return lm.eye(recursive) end },
    { '^lm%.zeros: sizes are given either as numbers or as one table', function() return lm.zeros(recursive, 2) end },
    { '^lm%.tensor: element %[2%] must be a number, got a table', function() return lm.tensor({ 1, recursive }) end },
    { '^Tensor:add: argument 1 must be a tensor or a number, got a table', function() return x:add(recursive) end },
    { '^Tensor:__index: range 1: start must be an integer, got a table', function() return x[{ { recursive } }] end },
    { '^lm%.zeros: options must have string keys', function() return lm.zeros(1, { [recursive] = 1 }) end },
  },
}

local total = 0
for _, g in ipairs(groups) do
  test.case(g[1], function()
    for k = 2, #g do
      local pattern, fn = g[k][1], g[k][2]
      local ok, err = pcall(fn)
      if ok then error(string.format('case %d (%s): no error', k - 1, pattern), 0) end
      if type(err) ~= 'string' then error(string.format('case %d: a non-string error', k - 1), 0) end
      local msg = err:gsub('^[^:\n]*:%d+: ', '') -- the caller's position, when Lua adds one
      if not msg:find(pattern) then
        error(string.format('case %d: %q does not match %q', k - 1, msg, pattern), 0)
      end
    end
  end)
  total = total + #g - 1
end

test.case('at least 60 wrong calls, and the process is still healthy', function()
  test.ok(total >= 60, 'only ' .. total .. ' wrong calls')
  test.eq((x + 1):sum():item(), 21)
  test.eq(lm.zeros(3):numel(), 3)
end)

test.case('a recursive __tostring is a Lua error (stack overflow), not a crash', function()
  test.raises(function() return tostring(recursive) end, 'stack overflow')
  test.raises(function() return lm.tensor({ 1 }) + recursive end, '^.*Tensor:__add: argument 2 must be a tensor or a number, got a table')
end)
