-- Reductions: over everything (0-d results) or one 1-based dim; max/min with indices.
local test = require 'lumen.test'

local x = lm.tensor({{1.0, 5, 3}, {4, 2, 6}})

test.case('sum, mean, prod over all and along a dim', function()
  local s = x:sum()
  test.eq(s:dim(), 0)
  test.eq(s:item(), 21)
  test.eq(x:sum(1):tolist(), {5, 7, 9})
  test.eq(x:sum(2):tolist(), {9, 12})
  test.eq(x:sum(-1):tolist(), {9, 12})
  test.eq(x:sum(1, true):shape(), {1, 3})
  test.eq(x:sum(nil, true):shape(), {1, 1})
  test.eq(x:mean():item(), 3.5)
  test.eq(x:mean(2):tolist(), {3, 4})
  test.eq(x:prod():item(), 720)
  test.eq(x:prod(1):tolist(), {4, 10, 18})
  test.eq(lm.sum(x, 1):tolist(), {5, 7, 9})
  test.eq(lm.tensor({1, 2}):sum():dtype(), 'int64')
  test.eq(lm.zeros(0):sum():item(), 0)
  test.eq(lm.tensor(5.0):sum(1):item(), 5, 'a 0-d tensor accepts dim 1')
end)

test.case('var, std (unbiased by default), norm', function()
  local v = lm.tensor({1.0, 2, 3, 4})
  test.near(v:var():item(), 5 / 3, 1e-6)
  test.near(v:var({unbiased = false}):item(), 1.25, 1e-6)
  test.near(v:var(1, false, {correction = 0}):item(), 1.25, 1e-6)
  test.near(v:std():item(), math.sqrt(5 / 3), 1e-6)
  test.tensor_near(x:std(2), {2, 2})
  test.near(lm.tensor({3.0, 4}):norm():item(), 5, 1e-6)
  test.near(lm.tensor({3.0, -4}):norm(1):item(), 7, 1e-6)
  test.near(lm.tensor({3.0, -4}):norm(math.huge):item(), 4, 1e-6)
  test.tensor_near(lm.tensor({{3.0, 4}, {6, 8}}):norm(2, 2), {5, 10})
end)

test.case('max and min: values, or values and 1-based indices along a dim', function()
  test.eq(x:max():item(), 6)
  test.eq(x:min():item(), 1)
  local v, i = x:max(2)
  test.eq(v:tolist(), {5, 6})
  test.eq(i:tolist(), {2, 3})
  test.eq(i:dtype(), 'int64')
  v, i = x:min(1)
  test.eq(v:tolist(), {1, 2, 3})
  test.eq(i:tolist(), {1, 2, 1})
  v, i = x:max(1, true)
  test.eq(v:shape(), {1, 3})
  test.eq(i:shape(), {1, 3})
  v, i = lm.tensor({2, 7, 7}):max(1)
  test.eq(i:item(), 2, 'the first of equal values')
  test.eq(x:max(lm.full({2, 3}, 4.0)):tolist(), {{4, 5, 4}, {4, 4, 6}})
  v, i = lm.max(x, -1)
  test.eq(i:tolist(), {2, 3})
end)

test.case('argmax and argmin are 1-based', function()
  test.eq(x:argmax():item(), 6)
  test.eq(x:argmin():item(), 1)
  test.eq(x:argmax(1):tolist(), {2, 1, 2})
  test.eq(x:argmin(2):tolist(), {1, 2})
  test.eq(x:argmax(2, true):shape(), {2, 1})
  test.eq(lm.argmax(lm.tensor({0.1, 0.9})):item(), 2)
end)

test.case('errors of reductions name the method', function()
  test.raises(function() return lm.zeros(0):max() end, 'Tensor:max: .*empty')
  test.raises(function() return x:sum(3) end, 'Tensor:sum: dim 3 is out of range for a 2%-d tensor')
  test.raises(function() return x:sum(0) end, 'Tensor:sum: dim 0 is out of range')
  test.raises(function() return x:sum(1, 'yes') end, 'Tensor:sum: keepdim must be a boolean')
end)

-- The dense-line path (a float line of stride 1 per output: argmax(2) of logits) against a naive
-- loop and against the general path (the same values through a transposed copy, stride > 1):
-- NaN wins at its first position, ties give the first index, -inf and +inf are ordinary values.
test.case('max/min/argmax/argmin over dense float lines: NaN first, ties to the first', function()
  lm.manual_seed(7)
  local special = { 0 / 0, math.huge, -math.huge, 0.0, 1.0 }
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    for _, R in ipairs({ 1, 2, 3, 10, 17 }) do
      local n = 9
      local vals = {}
      for i = 1, n do
        vals[i] = {}
        for k = 1, R do
          local u = math.random()
          vals[i][k] = u < 0.15 and special[math.random(#special)] or math.floor(u * 4) -- ties
        end
      end
      local x = lm.tensor(vals, { dtype = dtype })
      local strided = x:t():contiguous():t()
      if R > 1 then test.eq(strided:stride(2), n, 'the reference goes the general way') end
      for _, op in ipairs({ 'max', 'min' }) do
        local hi = op == 'max'
        local want_v, want_i = {}, {}
        for i = 1, n do
          local b, bi = vals[i][1], 1
          if b == b then
            for k = 2, R do
              local v = vals[i][k]
              if v ~= v then b, bi = v, k; break end
              if (hi and v > b) or (not hi and v < b) then b, bi = v, k end
            end
          end
          want_v[i], want_i[i] = b, bi
        end
        local v, i = x[op](x, 2)
        local sv, si = strided[op](strided, 2)
        local a = x['arg' .. op](x, 2)
        local ctx = string.format('%s %s R=%d', op, dtype, R)
        test.eq(i:tolist(), want_i, ctx .. ' indices')
        test.eq(a:tolist(), want_i, ctx .. ' arg')
        test.eq(si:tolist(), want_i, ctx .. ' general path')
        local got, sgot = v:tolist(), sv:tolist()
        for r = 1, n do
          local w = want_v[r]
          if w ~= w then
            test.ok(got[r] ~= got[r] and sgot[r] ~= sgot[r], ctx .. ' NaN value at row ' .. r)
          else
            test.eq(got[r], w, ctx .. ' value at row ' .. r)
            test.eq(sgot[r], w, ctx .. ' general value at row ' .. r)
          end
        end
        test.eq(x:amax(2):tolist()[1] == x:amax(2):tolist()[1], want_v[1] == want_v[1], ctx .. ' amax')
      end
    end
  end
end)

-- nn.utils.count_correct(logits, labels): against a naive count (first largest, NaN largest) on
-- random shapes with ties and specials, float32 and float64 (and integer logits), int32, int64
-- and uint8 labels, labels out of range, strided logits (a transposed copy, a narrowed view with a row stride above C, an
-- expanded row), strided labels, N = 0 and C = 1; and its errors.
test.case('nn.utils.count_correct counts rows whose argmax is the label', function()
  lm.manual_seed(11)
  local special = { 0 / 0, math.huge, -math.huge }
  local function naive(vals, labels)
    local n = 0
    for r, row in ipairs(vals) do
      local b, bi = row[1], 1
      if b == b then
        for k = 2, #row do
          local v = row[k]
          if v ~= v then bi = k; break end
          if v > b then b, bi = v, k end
        end
      end
      if bi == labels[r] then n = n + 1 end
    end
    return n
  end
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    for _, shape in ipairs({ { 1, 1 }, { 5, 1 }, { 7, 3 }, { 33, 10 }, { 129, 17 }, { 300, 2 } }) do
      local N, C = shape[1], shape[2]
      local vals, labels = {}, {}
      for r = 1, N do
        vals[r] = {}
        for k = 1, C do
          local u = math.random()
          vals[r][k] = u < 0.05 and special[math.random(#special)] or math.floor(u * 5)
        end
        labels[r] = math.random(0, C + 1) -- 0 and C + 1 are never right
      end
      local want = naive(vals, labels)
      local x = lm.tensor(vals, { dtype = dtype })
      local ctx = string.format('%s [%d, %d]', dtype, N, C)
      for _, ldt in ipairs({ 'int64', 'int32' }) do
        local y = lm.tensor(labels, { dtype = ldt })
        test.eq(nn.utils.count_correct(x, y), want, ctx .. ' ' .. ldt)
        test.eq(nn.utils.count_correct(x, y), x:argmax(2):eq(y):sum():item(), ctx .. ' as argmax:eq:sum')
      end
      local y = lm.tensor(labels, { dtype = 'int64' })
      local strided = x:t():contiguous():t()
      test.eq(nn.utils.count_correct(strided, y), want, ctx .. ' column-major logits')
      local wide = lm.cat({ x, lm.zeros(N, 3, { dtype = dtype }) }, 2):narrow(2, 1, C)
      test.eq(wide:stride(1), C + 3, 'a row stride above C')
      test.eq(nn.utils.count_correct(wide, y), want, ctx .. ' narrowed logits')
      local y2 = lm.stack({ y, y }, 2):select(2, 1)
      test.eq(y2:stride(1), 2, 'labels of stride 2')
      test.eq(nn.utils.count_correct(x, y2), want, ctx .. ' strided labels')
    end
  end
  -- one row expanded: every row the same
  local row = lm.tensor({ { 0.5, 2, 2, -1 } }):expand(6, 4)
  test.eq(nn.utils.count_correct(row, lm.tensor({ 2, 3, 2, 1, 2, 4 })), 3, 'an expanded row: ties to the first')
  test.eq(nn.utils.count_correct(lm.zeros(0, 10), lm.zeros(0, { dtype = 'int64' })), 0, 'no rows')
  test.eq(math.type(nn.utils.count_correct(lm.zeros(2, 3), lm.tensor({ 1, 2 }))), 'integer')
  local x, y = lm.zeros(4, 3), lm.tensor({ 1, 2, 3, 1 })
  test.raises(function() nn.utils.count_correct(x:view(12), y) end,
    'nn.utils.count_correct: logits must be 2-D (batch, classes), got shape [12]')
  test.raises(function() nn.utils.count_correct(x, lm.tensor({ 1, 2, 3 })) end,
    'nn.utils.count_correct: labels must be 1-D with one label per row of the logits (4), got shape [3]')
  test.raises(function() nn.utils.count_correct(x, y:float()) end,
    'nn.utils.count_correct: labels must be an integer dtype (class numbers), got float32')
  -- integer logits (compared as argmax compares them) and uint8 labels
  local xi = lm.tensor({ { 1, 5, 5 }, { 7, 2, 0 }, { -3, -1, -2 }, { 0, 0, 9 } })
  for _, ldt in ipairs({ 'uint8', 'int32', 'int64' }) do
    local yl = lm.tensor({ 2, 1, 2, 1 }, { dtype = ldt })
    test.eq(nn.utils.count_correct(xi, yl), 3, 'int64 logits, ' .. ldt .. ' labels')
    test.eq(nn.utils.count_correct(xi:int(), yl), xi:argmax(2):eq(yl:long()):sum():item())
  end
  test.raises(function() nn.utils.count_correct(lm.zeros(4, 0), y) end,
    'nn.utils.count_correct: logits of shape [4, 0] have no classes to pick from')
  test.raises(function() nn.utils.count_correct(x) end, 'nn.utils.count_correct')
end)

-- Reductions of integer tensors are exact at the extremes (issue 29.4): sum, prod and cumsum wrap
-- as int64 arithmetic does (two's complement, as PyTorch and NumPy); mean, var and std accumulate
-- without wrapping and without rounding an int64 to a double (2^53 + 1 stays itself); max, min,
-- argmax and argmin compare integers as integers.
test.case('integer reductions at the extremes: exact mean, var, std, max; wrapping sum, prod, cumsum', function()
  local big = math.maxinteger
  -- the exact mean of an int64 array, from its high and low 32-bit halves (no wrapping)
  local function exact_mean(t)
    local hi, lo = 0, 0
    for _, v in ipairs(t) do hi = hi + v // 4294967296; lo = lo + v % 4294967296 end
    return (hi * 4294967296.0 + lo) / #t
  end
  local function f32(v) return lm.tensor({v}, {dtype = 'float32'}):item() end -- v rounded to float32
  local cases = {
    {1 << 62, 1 << 62}, {big, big, big}, {math.mininteger, math.mininteger}, {big, math.mininteger},
    {9007199254740993, 9007199254740992, 9007199254740995}, {big, big - 1, big - 2, 1, -5},
  }
  for _, t in ipairs(cases) do
    local x = lm.tensor(t, {dtype = 'int64'})
    local m = exact_mean(t)
    test.eq(x:mean():item(), f32(m), 'mean of ' .. table.concat(t, ', '))
    test.eq(x:mean(1):item(), f32(m), 'mean(1) of ' .. table.concat(t, ', '))
    -- deviations from the first element, from the 32-bit halves (exact where they are small)
    local function dev(v, p) return (v // 4294967296 - p // 4294967296) * 4294967296.0 + (v % 4294967296 - p % 4294967296) end
    local md = 0
    for _, v in ipairs(t) do md = md + dev(v, t[1]) end
    md = md / #t
    local ss = 0
    for _, v in ipairs(t) do ss = ss + (dev(v, t[1]) - md) ^ 2 end
    test.near(x:var():item(), f32(ss / (#t - 1)), 1e-6 * math.max(1, ss / (#t - 1)), 'var of ' .. table.concat(t, ', '))
    test.near(x:std():item(), f32(math.sqrt(ss / (#t - 1))), 1e-6 * math.max(1, math.sqrt(ss / (#t - 1))))
    local mx, mn, imx, imn = t[1], t[1], 1, 1
    for i, v in ipairs(t) do
      if v > mx then mx, imx = v, i end
      if v < mn then mn, imn = v, i end
    end
    test.eq({x:max():item(), x:min():item(), x:argmax():item(), x:argmin():item()}, {mx, mn, imx, imn})
    -- sum, prod, cumsum wrap around as int64 arithmetic does
    local s, p, c = 0, 1, {}
    for i, v in ipairs(t) do s = s + v; p = p * v; c[i] = s end
    test.eq(x:sum():item(), s)
    test.eq(x:prod():item(), p)
    test.eq(x:cumsum(1):tolist(), c)
  end
  -- int32 and uint8 through the same path, and an expanded (stride-0) view counted many times
  test.eq(lm.tensor({2147483647, 2147483647}, {dtype = 'int32'}):mean():item(), f32(2147483647))
  test.eq(lm.tensor({1 << 62}, {dtype = "int64"}):expand(4):mean():item(), f32(2^62))
  test.eq(lm.tensor({255, 255, 0}, {dtype = 'uint8'}):var():item(), f32(21675))
end)
