-- tostring(x): aligned columns, fitting precision, integers without decimals, summaries beyond
-- 1,000 elements, a footer with shape, dtype, device and grad_fn; 0-d tensors print their value.
local test = require 'lumen.test'

local function body(x) return (tostring(x):match('^(.*)\n%[[^\n]*%]$')) end
local function footer(x) return (tostring(x):match('\n(%[[^\n]*%])$')) end

test.case('small float tensors: aligned, 4 decimals', function()
  local x = lm.tensor({{1.5, -2, 3}, {4, 5.25, -60}})
  test.eq(body(x), '[[  1.5000,  -2.0000,   3.0000],\n [  4.0000,   5.2500, -60.0000]]')
  test.eq(footer(x), '[float32 tensor of shape [2, 3] on cpu]')
end)

test.case('floats with integral values print as "3."', function()
  test.eq(body(lm.tensor({1.0, -20, 3})), '[  1., -20.,   3.]')
end)

test.case('integer tensors print without decimals', function()
  local x = lm.tensor({{1, 200}, {-3, 4}})
  test.eq(body(x), '[[  1, 200],\n [ -3,   4]]')
  test.eq(footer(x), '[int64 tensor of shape [2, 2] on cpu]')
  test.eq(body(lm.tensor({255, 0}, {dtype = 'uint8'})), '[255,   0]')
  test.eq(footer(lm.ones(1, {dtype = 'int32'})), '[int32 tensor of shape [1] on cpu]')
end)

test.case('scientific notation when magnitudes span widely', function()
  test.eq(body(lm.tensor({1e-5, 1.0, 1000})), '[1.0000e-05, 1.0000e+00, 1.0000e+03]')
  test.eq(body(lm.tensor({1e10, 1.5})), '[1.0000e+10, 1.5000e+00]')
  test.eq(body(lm.tensor({0.0 / 0.0, 1 / 0, -1 / 0, 2.5})), '[   nan,    inf,   -inf, 2.5000]')
end)

test.case('0-d tensors print their value', function()
  test.eq(body(lm.tensor(3.25)), '3.2500')
  test.eq(body(lm.tensor(7)), '7')
  test.eq(footer(lm.tensor(7)), '[int64 tensor of shape [] on cpu]')
end)

test.case('empty tensors', function()
  test.eq(body(lm.zeros(0)), '[]')
  test.eq(footer(lm.zeros(2, 0)), '[float32 tensor of shape [2, 0] on cpu]')
end)

test.case('3-d tensors separate blocks with a blank line', function()
  test.eq(body(lm.arange(8):view(2, 2, 2)), '[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]')
end)

test.case('large tensors are summarized with ...', function()
  local x = lm.arange(2000):view(40, 50)
  local s = body(x)
  test.eq(select(2, s:gsub('\n', '')), 6, 'first and last 3 rows and a ... row')
  test.ok(s:find('[[   0,    1,    2, ...,   47,   48,   49],', 1, true), s)
  test.ok(s:find(' ...,\n', 1, true), 'a ... row')
  test.ok(s:find('[1950, 1951, 1952, ..., 1997, 1998, 1999]]', 1, true))
  test.ok(#tostring(lm.zeros(1000)) > 3900, '1,000 elements are shown in full')
  test.ok(#tostring(lm.zeros(1001)) < 200, 'beyond 1,000 they are summarized')
  test.ok(#tostring(lm.zeros(20, 20, 20)) < 2000, 'every dim summarized')
end)

test.case('long rows wrap at 80 columns', function()
  local s = body(lm.arange(30.0) / 7)
  for line in s:gmatch('[^\n]+') do test.ok(#line <= 80, line) end
  test.ok(select(2, s:gsub('\n', '')) >= 2)
end)

test.case('the footer names grad_fn or requires_grad', function()
  local x = lm.ones(2, {requires_grad = true})
  test.eq(footer(x), '[float32 tensor of shape [2] on cpu, requires_grad]')
  test.eq(footer(x * 2), '[float32 tensor of shape [2] on cpu, grad_fn=MulBackward]')
  test.ok(footer(x:double()):match('^%[float64 tensor of shape %[2%] on cpu, grad_fn=%a+Backward%]$'))
end)

test.case('views and non-contiguous tensors print their own elements', function()
  local x = lm.arange(6):view(2, 3)
  test.eq(body(x:t()), '[[0, 3],\n [1, 4],\n [2, 5]]')
  test.eq(body(x[{{}, 2}]), '[1, 4]')
  test.eq(body(lm.tensor({{1}}):expand(2, 3)), '[[1, 1, 1],\n [1, 1, 1]]')
end)
