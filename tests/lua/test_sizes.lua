-- Sizes at the edges of the integers (issue 29.6): every binding that takes a size, a shape, a
-- count or launch dimensions, given 2^31, 2^32, 2^62, 2^63 (as a float: past int64) and 2^63 - 1,
-- alone and in products that pass 2^63 or 2^64. Each call ends in a clear error that names the
-- function, or (a size-0 tensor) succeeds; never a signed overflow (UBSan stops the sanitizer
-- build at the first one), a wrapped count accepted in release (2^31 x 2^31 x 4 threads wrapped to
-- 0 and launched nothing), a crash or a huge allocation (a 64 MiB memory limit holds while it runs).
-- tools/lint_sizes.lua (ctest tools/sizes) checks the source side: every product in the bindings
-- goes through lml_mul_overflows or says why it is bounded.
local test = require 'lumen.test'

local EDGES = { 2 ^ 31, 2 ^ 32, 2 ^ 62, 2 ^ 63, math.maxinteger, -2 ^ 63 }
local INT_EDGES = { 2147483648, 4294967296, 4611686018427387904, math.maxinteger }
local function name(v)
  if v == math.maxinteger then return '2^63-1' end
  if v == 2 ^ 63 then return '2^63' end
  if v == -2 ^ 63 then return '-2^63' end
  if v >= 2 ^ 20 then return string.format('2^%d', math.floor(math.log(v, 2) + 0.5)) end
  return tostring(v)
end

-- Calls f(...) expecting a clear error naming fname (or an allowed success); returns the message.
local function refused(fname, f, ...)
  local args = table.pack(...)
  local ok, err = pcall(f, ...)
  local shown = {}
  for i = 1, args.n do shown[i] = type(args[i]) == 'number' and name(args[i]) or tostring(args[i]) end
  local what = fname .. '(' .. table.concat(shown, ', ') .. ')'
  test.eq(ok, false, what .. ' must be refused')
  test.ok(type(err) == 'string' and err:find(fname, 1, true), what .. ': the message names ' .. fname .. ': ' .. tostring(err))
  test.ok(not err:find('traceback') and not err:find('internal error', 1, true), what .. ': ' .. err)
  return err
end

local limit
test.case('(a memory limit of 64 MiB while sizes are tried)', function()
  limit = lm.memory().limit
  lm.set_memory_limit(64 << 20)
end)

test.case('creators: one size, two sizes whose product overflows, three', function()
  local creators = {
    { 'lm.zeros', lm.zeros }, { 'lm.ones', lm.ones }, { 'lm.empty', lm.empty }, { 'lm.rand', lm.rand },
    { 'lm.randn', lm.randn },
  }
  local n = 0
  for _, c in ipairs(creators) do
    for _, v in ipairs(EDGES) do
      refused(c[1], c[2], v)
      refused(c[1], c[2], v, v)
      refused(c[1], c[2], 4, v, v)
      refused(c[1], c[2], { v, 3 })
      n = n + 4
    end
    -- products that pass 2^63 by a little, and 2^64 exactly (a wrap to 0 would be accepted)
    refused(c[1], c[2], 2 ^ 32, 2 ^ 31)
    refused(c[1], c[2], 2 ^ 31, 2 ^ 31, 4)
    refused(c[1], c[2], 4611686018427387905, 4)
    refused(c[1], c[2], 2 ^ 21, 2 ^ 21, 2 ^ 21)
    -- a size-0 tensor of any other sizes is no memory: allowed
    test.eq(c[2](0, math.maxinteger):shape(), { 0, math.maxinteger })
    n = n + 4
  end
  for _, v in ipairs(EDGES) do
    refused('lm.full', lm.full, { v, v }, 1)
    refused('lm.eye', lm.eye, v)
    refused('lm.eye', lm.eye, v, v)
    refused('lm.randint', lm.randint, 0, 10, { v, v })
    if v > 0 then -- arange(0, -2^63) is empty, as numpy's
      refused('lm.arange', lm.arange, 0, v)
      refused('lm.linspace', lm.linspace, 0, 1, v)
    end
  end
  refused('lm.eye', lm.eye, 2 ^ 32, 2 ^ 32)
  test.ok(n > 100)
end)

test.case('views and shapes: reshape, view, expand, repeat, tile, unsqueeze', function()
  local x = lm.zeros(2, 3)
  for _, v in ipairs(EDGES) do
    refused('reshape', x.reshape, x, v, v)
    refused('view', x.view, x, v, -1)
    refused('expand', x.expand, x, v, v, 3)
    refused('repeat', x['repeat'], x, v, v)
    refused('tile', lm.tile, x, { v, v })
    refused('narrow', x.narrow, x, 1, v, 1)
    refused('select', x.select, x, 1, v)
  end
  refused('expand', x.expand, x, 2 ^ 31, 2 ^ 31, 2, 3) -- 2^62 x 6: past 2^63
  refused('repeat', x['repeat'], x, 2 ^ 61, 2) -- 2^62 x 6
  test.eq(x:expand(0, 2, 3):shape(), { 0, 2, 3 })
end)

test.case('layers and losses: sizes of nn modules and functions', function()
  for _, v in ipairs(INT_EDGES) do
    refused('nn.Linear', nn.Linear, v, v)
    refused('nn.Linear', nn.Linear, 4, v)
    refused('nn.Embedding', nn.Embedding, v, 4)
    refused('nn.Conv2d', nn.Conv2d, 3, v, 3)
    refused('nn.Conv2d', nn.Conv2d, 3, 4, v)
    refused('one_hot', lm.one_hot, lm.tensor({ 1, 2 }, { dtype = 'int64' }), v)
  end
end)

test.case('kernels.launch: grid and block products past 2^32 and 2^64, shared arrays', function()
  local f = function() end
  -- 2^31 x 2^31 x 4 = 2^64: wrapped to 0 threads it was accepted and ran nothing
  refused('kernels.launch', kernels.launch, f, { block = { 2 ^ 31, 2 ^ 31, 4 } })
  refused('kernels.launch', kernels.launch, f, { block = 1, grid = { 2 ^ 31, 2 ^ 31, 4 } })
  refused('kernels.launch', kernels.launch, f, { block = 1, grid = { 2 ^ 16, 2 ^ 16 } })
  refused('kernels.launch', kernels.launch, f, { block = 1, grid = { 65536, 65536, 65536 } })
  for _, v in ipairs(EDGES) do
    refused('kernels.launch', kernels.launch, f, { block = v })
    refused('kernels.launch', kernels.launch, f, { block = 1, grid = v })
    refused('kernels.launch', kernels.launch, f, { block = 1, shared = { a = v } })
    refused('kernels.launch', kernels.launch, f, { block = 1, shared = { a = { rows = v, cols = v } } })
    refused('kernels.launch', kernels.launch, f, { block = 1, shared = { a = { rows = v, cols = 4 } } })
  end
  refused('kernels.launch', kernels.launch, f, { block = 1, shared = { a = { rows = 4611686018427387905, cols = 4 } } })
  local e = refused('kernels.launch', kernels.launch, f, { block = { 2 ^ 31, 2 ^ 31, 4 } })
  test.ok(e:find('2147483648 x 2147483648 x 4 (past 2^63) threads exceeds the limit of 1024', 1, true), e)
end)

test.case('kernels and data: sizes of the shipped kernels and the loader', function()
  for _, v in ipairs(EDGES) do
    refused('kernels.scan', kernels.scan, lm.ones(8), { block = v })
    refused('kernels.reduce', kernels.reduce, lm.ones(8), { block = v })
    refused('kernels.histogram', kernels.histogram, lm.ones(8, { dtype = 'int32' }), v)
  end
  -- a batch_size past the data set is one batch (as PyTorch); 2^63 - 1 once wrapped the count
  local ds = data.TensorDataset(lm.zeros(5, 2), lm.zeros(5))
  for _, v in ipairs(INT_EDGES) do
    local loader = data.DataLoader(ds, { batch_size = v })
    test.eq(#loader, 1, name(v))
    local batches = 0
    for x in loader:iter() do batches = batches + 1 test.eq(x:shape(), { 5, 2 }) end
    test.eq(batches, 1)
  end
  refused('data.DataLoader', data.DataLoader, ds, { batch_size = 2 ^ 63 })
  refused('data.DataLoader', data.DataLoader, ds, { batch_size = -2 ^ 63 })
end)

test.case('(the memory limit restored)', function()
  lm.set_memory_limit(limit or 0)
end)
