-- F.group_norm and nn.GroupNorm: values and gradients against PyTorch 1.13 (numbers printed by
-- tests/nn/torch_norm.py into tests/nn/torch_norm_values.lua, float64), against the definition
-- computed here group by group, gradcheck, the module's defaults, and bad input.
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/lua/'
local CASES = dofile(here .. '../nn/torch_norm_values.lua')
local D = { dtype = 'float64' }

local function wave(n, a, b, s) return (lm.arange(0, n, D) * a + b):sin() * s end

test.case('group_norm against PyTorch: values and gradients', function()
  for i, c in ipairs(CASES) do
    local n = 1
    for _, k in ipairs(c.shape) do n = n * k end
    local C = c.shape[2]
    local what = string.format('case %d (shape %s, %d groups, affine %s)', i, table.concat(c.shape, 'x'), c.groups, tostring(c.affine))
    local x = (wave(n, 0.37, 0.1, 1.5) + 0.3):view(c.shape):requires_grad_()
    local w = c.affine and (wave(C, 0.53, 0.3, 0.8) + 1):requires_grad_() or nil
    local b = c.affine and wave(C, 0.71, 0.5, 0.5):requires_grad_() or nil
    local y = F.group_norm(x, c.groups, w, b, c.eps)
    test.eq(y:shape(), c.shape)
    test.tensor_near(y:reshape(-1), lm.tensor(c.out, D), 1e-12, what .. ': values')
    ;(y * wave(n, 0.41, 0.2, 1):view(c.shape)):sum():backward()
    test.tensor_near(x.grad:reshape(-1), lm.tensor(c.gx, D), 1e-11, what .. ': d/dx')
    if c.affine then
      test.tensor_near(w.grad, lm.tensor(c.gw, D), 1e-11, what .. ': d/dw')
      test.tensor_near(b.grad, lm.tensor(c.gb, D), 1e-11, what .. ': d/db')
    end
  end
end)

test.case('group_norm against the definition, group by group, float32 and a transposed input', function()
  lm.manual_seed(4)
  for _, dt in ipairs({ 'float64', 'float32' }) do
    local x = lm.randn(3, 6, 4, 5, { dtype = dt }):transpose(3, 4) -- (3, 6, 5, 4), non-contiguous
    local w, b = lm.randn(6, { dtype = dt }), lm.randn(6, { dtype = dt })
    local y = F.group_norm(x, 3, w, b, 1e-5):double()
    local xd = x:double()
    for s = 1, 3 do
      for g = 1, 3 do
        local part = xd[s]:narrow(1, (g - 1) * 2 + 1, 2)
        local mean = part:mean():item()
        local var = ((part - mean):pow(2)):mean():item()
        for c = 1, 2 do
          local ch = (g - 1) * 2 + c
          local want = (xd[s][ch] - mean) / math.sqrt(var + 1e-5) * w[ch]:item() + b[ch]:item()
          test.tensor_near(y[s][ch], want, dt == 'float32' and 1e-4 or 1e-12, string.format('%s sample %d channel %d', dt, s, ch))
        end
      end
    end
  end
end)

test.case('gradcheck (float64)', function()
  local x = lm.randn(2, 4, 3, D):requires_grad_()
  local w, b = lm.randn(4, D):requires_grad_(), lm.randn(4, D):requires_grad_()
  local ok, rep = lm.autograd.gradcheck(function(a, c, e) return F.group_norm(a, 2, c, e) end, { x, w, b })
  test.ok(ok, tostring(rep))
end)

test.case('nn.GroupNorm: defaults, repr, errors', function()
  local g = nn.GroupNorm(2, 6)
  test.tensor_near(g.weight, lm.ones(6), 0)
  test.tensor_near(g.bias, lm.zeros(6), 0)
  test.eq(g.eps, 1e-5)
  test.ok(tostring(g):find('GroupNorm(2, 6, eps=1e-05, affine=true)', 1, true), tostring(g))
  local y = g(lm.randn(4, 6, 3, 3) * 5 + 2)
  test.near(y:mean():item(), 0, 1e-5)
  test.eq(#nn.GroupNorm(3, 6, { affine = false }):parameters(), 0)
  test.raises(function() nn.GroupNorm(4, 6) end, 'nn.GroupNorm: num_channels 6 must be divisible by num_groups 4')
  test.raises(function() g(lm.randn(2, 5, 3)) end, 'does not fit num_channels=6')
  test.raises(function() F.group_norm(lm.randn(2, 6), 4) end, 'F.group_norm: num_groups must be a positive integer dividing the 6 channels, got 4')
  test.raises(function() F.group_norm(lm.randn(2, 6), 3, lm.ones(5)) end, 'F.group_norm: weight must be a tensor of shape [6]')
  test.raises(function() F.group_norm(lm.randn(6), 3) end, 'must be [N, C, ...]')
  test.raises(function() F.group_norm(lm.randn(2, 3, 1, 1), 3) end, 'has one value per group')
  test.raises(function() nn.GroupNorm(2, 6, { eps = 0 }) end, 'option eps must be a positive number')
end)
