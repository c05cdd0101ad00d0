-- F.flash_attention (issue 32 Must 2): attention by an online softmax in blocks, without the L x S
-- matrix, forward and backward, against the composed formula softmax(q k^T / sqrt(E) [+ causal]) v
-- on shapes that cross the 64 x 64 blocks (L != S, odd head dims, one row), float64 to 1e-13 and
-- float32 to 1e-5, gradcheck, memory linear in the sequence, and the bad inputs.
local test = require 'lumen.test'

local function ref(q, k, v, causal, scale)
  local s = q:matmul(k:transpose(-2, -1)) * (scale or 1 / math.sqrt(q:size(-1)))
  if causal then s = s:masked_fill(lm.ones(q:size(-2), k:size(-2)):tril():eq(0), -math.huge) end
  return s:softmax(-1):matmul(v)
end

test.case('flash_attention: values and gradients equal the composed formula across blocks', function()
  lm.manual_seed(4)
  for _, c in ipairs({ { 150, 200, 33, 17 }, { 200, 130, 64, 64 }, { 65, 65, 8, 8 }, { 1, 129, 4, 3 }, { 7, 1, 5, 2 } }) do
    for _, causal in ipairs({ false, true }) do
      for _, dt in ipairs({ 'float64', 'float32' }) do
        local L, S, E, Ev = table.unpack(c)
        local q = lm.randn(2, 3, L, E, { dtype = dt, requires_grad = true })
        local k = lm.randn(2, 3, S, E, { dtype = dt, requires_grad = true })
        local v = lm.randn(2, 3, S, Ev, { dtype = dt, requires_grad = true })
        local w = lm.randn(2, 3, L, Ev, { dtype = dt })
        local what = string.format('%s %s causal=%s', table.concat(c, 'x'), dt, tostring(causal))
        local o = F.flash_attention(q, k, v, { is_causal = causal })
        test.eq(o.grad_fn:name(), 'FlashAttentionBackward', what)
        ;(o * w):sum():backward()
        local got = { o:detach(), q.grad, k.grad, v.grad }
        q.grad, k.grad, v.grad = nil, nil, nil
        local r = ref(q, k, v, causal)
        ;(r * w):sum():backward()
        local want = { r:detach(), q.grad, k.grad, v.grad }
        local tol = dt == 'float64' and 1e-13 or 2e-5
        for i = 1, 4 do test.tensor_near(got[i], want[i], tol, what .. ' ' .. ({ 'out', 'dq', 'dk', 'dv' })[i]) end
      end
    end
  end
  -- a given scale
  local q, k, v = lm.randn(1, 9, 4), lm.randn(1, 11, 4), lm.randn(1, 11, 6)
  test.tensor_near(F.flash_attention(q, k, v, { scale = 0.3 }), ref(q, k, v, false, 0.3), 1e-5)
end)

test.case('flash_attention: gradcheck in float64', function()
  for _, causal in ipairs({ false, true }) do
    local q = lm.randn(2, 5, 3, { dtype = 'float64', requires_grad = true })
    local k = lm.randn(2, 6, 3, { dtype = 'float64', requires_grad = true })
    local v = lm.randn(2, 6, 2, { dtype = 'float64', requires_grad = true })
    local ok, rep = lm.autograd.gradcheck(function(a, b, c) return F.flash_attention(a, b, c, { is_causal = causal }) end,
      { q, k, v })
    test.ok(ok, tostring(rep))
  end
end)

test.case('flash_attention: memory linear in the sequence (no L x S matrix)', function()
  local T, E = 1024, 64
  local q, k, v = lm.randn(1, T, E), lm.randn(1, T, E), lm.randn(1, T, E)
  lm.reset_peak_memory()
  local base = lm.memory().live_bytes
  local o = F.flash_attention(q, k, v, { is_causal = true })
  local flash = lm.memory().peak_bytes - base
  o = nil
  collectgarbage()
  lm.reset_peak_memory()
  base = lm.memory().live_bytes
  local r = ref(q, k, v, true)
  local full = lm.memory().peak_bytes - base
  r = nil
  test.ok(flash < T * T * 4 / 4, string.format('flash peak %d bytes, a T x T float32 matrix is %d', flash, T * T * 4))
  test.ok(full >= T * T * 4, string.format('the composed version holds T x T: %d bytes', full))
end)

test.case('flash_attention: bad input', function()
  test.raises(function() F.flash_attention(lm.randn(2, 3, 4), lm.randn(2, 5, 3), lm.randn(2, 5, 4)) end,
    'must be (..., L, E), (..., S, E) and (..., S, Ev)')
  test.raises(function() F.flash_attention(lm.randn(2, 3, 4), lm.randn(3, 5, 4), lm.randn(3, 5, 4)) end,
    'the same leading dims')
  test.raises(function() F.flash_attention(lm.randn(3, 4), lm.randn(5, 4, { dtype = 'float64' }), lm.randn(5, 4)) end,
    'dtype')
  test.raises(function() F.flash_attention(lm.randn(3, 4), lm.randn(0, 4), lm.randn(0, 4)) end, 'no key to attend to')
  test.raises(function() F.flash_attention(lm.randn(3, 4), lm.randn(5, 4), lm.randn(5, 4), { scale = -1 }) end,
    'scale must be a positive finite number')
  test.raises(function() F.flash_attention(lm.arange(0, 4):reshape(2, 2), lm.randn(2, 2), lm.randn(2, 2)) end,
    'must be a float tensor')
end)

test.case('F.scaled_dot_product_attention runs the fused kernel when nothing needs the weights', function()
  local q = lm.randn(2, 9, 4, { requires_grad = true })
  local k, v = lm.randn(2, 12, 4), lm.randn(2, 12, 3)
  test.eq(F.scaled_dot_product_attention(q, k, v, { is_causal = true }).grad_fn:name(), 'FlashAttentionBackward')
  test.eq(F.scaled_dot_product_attention(q, k, v).grad_fn:name(), 'FlashAttentionBackward')
  local m = lm.ones(9, 12, { dtype = 'uint8' })
  test.ok(F.scaled_dot_product_attention(q, k, v, { attn_mask = m }).grad_fn:name() ~= 'FlashAttentionBackward',
    'a mask: the composed path')
  test.tensor_near(F.scaled_dot_product_attention(q, k, v, { attn_mask = m }), F.scaled_dot_product_attention(q, k, v),
    1e-5, 'an all-ones mask changes nothing')
end)
