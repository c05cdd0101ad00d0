-- Attention (F.scaled_dot_product_attention, nn.MultiheadAttention, nn.TransformerEncoderLayer and
-- nn.TransformerDecoderLayer): values and gradients against PyTorch (numbers printed by
-- tests/nn/torch_attention.py into tests/nn/torch_attention_values.lua, float64; modules, inputs
-- and masks rebuilt here by the same formulas), gradcheck in float64, dropout in training and
-- evaluation, and the errors on bad input.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local CASES = dofile(here .. '../nn/torch_attention_values.lua')

-- s * sin(a * i + b), i = 0..n-1, float64, in shape (as the script's wave / shaped)
local function shaped(shape, a, b, s)
  local n = 1
  for _, k in ipairs(shape) do n = n * k end
  return ((lm.arange(0, n, { dtype = 'float64' }) * a + b):sin() * s):view(shape)
end

local INPUTS = { q = { 0.37, 0.1 }, k = { 0.31, 0.7 }, v = { 0.29, 0.5 }, tgt = { 0.37, 0.1 }, memory = { 0.31, 0.7 } }
local function input(name, shape)
  local ab = INPUTS[name]
  return shaped(shape, ab[1], ab[2], 1.5):requires_grad_()
end

-- the script's make_mask: a float mask, or a boolean (uint8) one whose first key is forced to
-- "may attend" (convention 'allow': 1 there; 'block': 0 there)
local function make_mask(spec, convention)
  if spec.float then return shaped(spec.shape, spec.a, spec.b, 0.7) end
  local m = shaped(spec.shape, spec.a, spec.b, 1):gt(spec.thr)
  m:narrow(m:dim(), 1, 1):fill_(convention == 'allow' and 1 or 0)
  return m
end

-- the script's set_params: parameter k (0-based) = wave(numel, 0.23 + 0.1 k, 0.3, 0.4)
local function set_params(m)
  local names = {}
  lm.no_grad(function()
    local k = 0
    for n, p in pairs(m:named_parameters()) do
      p:copy_(shaped(p:shape(), 0.23 + 0.1 * k, 0.3, 0.4))
      names[#names + 1] = n
      k = k + 1
    end
  end)
  return names
end

local TOL = 1e-10

-- t against {sum =, v = every stride-th element}
local function near(t, ref, stride, what)
  test.ok(t ~= nil, what .. ': missing')
  local a = t:contiguous():view(-1):tolist()
  test.eq(#ref.v, (#a + stride - 1) // stride, what .. ': element count')
  for j, e in ipairs(ref.v) do
    local i = 1 + (j - 1) * stride
    test.near(a[i], e, TOL, string.format('%s[%d]', what, i))
  end
  test.near(t:sum():item(), ref.sum, TOL * #a, what .. ': sum')
end

local function loss_of(o, w)
  local loss = (o * shaped(o:shape(), 0.41, 0.2, 1.0)):sum()
  if w then loss = loss + (w * shaped(w:shape(), 0.43, 0.6, 1.0)):sum() end
  return loss
end

local function options_of(c, prefix)
  local o = {}
  for k, v in pairs(c) do
    local n = k:match('^' .. prefix .. '(.*)')
    if n then o[n] = v end
  end
  return o
end

local function check_params(c, m)
  local st = c.stride
  local names = set_params(m)
  test.eq(names, c.params, c.name .. ": parameter names and order (PyTorch's)")
  return function()
    for n, p in pairs(m:named_parameters()) do near(p.grad, c['g_' .. n], st, c.name .. ' d/d' .. n) end
  end
end

local RUN = {}

function RUN.sdpa(c)
  local q, k, v = input('q', c.qshape), input('k', c.kshape), input('v', c.vshape)
  local o = F.scaled_dot_product_attention(q, k, v, { attn_mask = c.mask and make_mask(c.mask, 'allow'),
    is_causal = c.is_causal, scale = c.scale })
  test.eq(o:shape(), c.out_shape, c.name .. ': output shape')
  loss_of(o):backward()
  local st = c.stride
  near(o, c.out, st, c.name .. ' output')
  near(q.grad, c.g_q, st, c.name .. ' d/dq')
  near(k.grad, c.g_k, st, c.name .. ' d/dk')
  near(v.grad, c.g_v, st, c.name .. ' d/dv')
end

function RUN.MultiheadAttention(c)
  local opts = options_of(c, 'opt_')
  opts.dtype = 'float64'
  local m = nn.MultiheadAttention(c.args[1], c.args[2], opts)
  local grads = check_params(c, m)
  local q, k, v = input('q', c.qshape), input('k', c.kshape), input('v', c.vshape)
  local fwd = options_of(c, 'fwd_')
  if fwd.attn_mask then fwd.attn_mask = make_mask(fwd.attn_mask, 'block') end
  if fwd.key_padding_mask then fwd.key_padding_mask = make_mask(fwd.key_padding_mask, 'block') end
  local o, w = m(q, k, v, fwd)
  test.eq(o:shape(), c.out_shape, c.name .. ': output shape')
  test.eq(w == nil, c.w == nil, c.name .. ': weights returned as PyTorch')
  if w then test.eq(w:shape(), c.w_shape, c.name .. ': weights shape') end
  loss_of(o, w):backward()
  local st = c.stride
  near(o, c.out, st, c.name .. ' output')
  if w then near(w, c.w, st, c.name .. ' weights') end
  near(q.grad, c.g_q, st, c.name .. ' d/dquery')
  near(k.grad, c.g_k, st, c.name .. ' d/dkey')
  near(v.grad, c.g_v, st, c.name .. ' d/dvalue')
  grads()
end

local function run_layer(c)
  local opts = options_of(c, 'opt_')
  opts.dtype, opts.dropout = 'float64', 0
  local m = nn[c.kind](c.args[1], c.args[2], opts)
  local grads = check_params(c, m)
  local x = input('tgt', c.shapes[1])
  local mem = c.shapes[2] and input('memory', c.shapes[2])
  local fwd = options_of(c, 'fwd_')
  for key, spec in pairs(fwd) do
    if type(spec) == 'table' then fwd[key] = make_mask(spec, 'block') end
  end
  local o
  if mem then o = m(x, mem, fwd) else o = m(x, fwd) end
  test.eq(o:shape(), c.out_shape, c.name .. ': output shape')
  loss_of(o):backward()
  local st = c.stride
  near(o, c.out, st, c.name .. ' output')
  near(x.grad, c.g_x, st, c.name .. ' d/dx')
  if mem then near(mem.grad, c.g_memory, st, c.name .. ' d/dmemory') end
  grads()
end
RUN.TransformerEncoderLayer = run_layer
RUN.TransformerDecoderLayer = run_layer

local function run_kind(kind, min)
  local n = 0
  for _, c in ipairs(CASES) do
    if c.kind == kind then RUN[kind](c); n = n + 1 end
  end
  test.ok(n >= min, kind .. ' cases')
end

test.case('F.scaled_dot_product_attention against PyTorch: masks, is_causal, scale, broadcasting', function()
  run_kind('sdpa', 6)
end)

test.case('nn.MultiheadAttention against PyTorch: heads, masks, batch_first, kdim/vdim, unbatched, weights', function()
  run_kind('MultiheadAttention', 6)
end)

test.case('nn.TransformerEncoderLayer against PyTorch: norm_first, gelu/relu, masks, no bias', function()
  run_kind('TransformerEncoderLayer', 4)
end)

test.case('nn.TransformerDecoderLayer against PyTorch: norm_first, gelu/relu, masks, no bias', function()
  run_kind('TransformerDecoderLayer', 4)
end)

test.case("PyTorch's parameters, initialisation and state_dict keys", function()
  lm.manual_seed(11)
  local m = nn.MultiheadAttention(8, 2)
  local names = {}
  for n in pairs(m:named_parameters()) do names[#names + 1] = n end
  test.eq(names, { 'in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias' })
  test.eq(m.in_proj_weight:shape(), { 24, 8 })
  local bound = math.sqrt(6 / (8 + 24)) -- xavier_uniform_ on (3E, E)
  test.ok(m.in_proj_weight:abs():max():item() <= bound, 'in_proj_weight within the xavier bound')
  test.ok(m.in_proj_weight:abs():max():item() > bound / 2, 'in_proj_weight spread')
  test.eq(m.in_proj_bias:abs():sum():item(), 0)
  test.eq(m.out_proj.bias:abs():sum():item(), 0)
  test.ok(m.out_proj.weight:abs():max():item() <= 1 / math.sqrt(8), 'out_proj as nn.Linear')
  local kv = nn.MultiheadAttention(6, 3, { kdim = 4, vdim = 5, bias = false })
  names = {}
  for n, p in pairs(kv:named_parameters()) do names[#names + 1] = n .. ' ' .. table.concat(p:shape(), 'x') end
  test.eq(names, { 'q_proj_weight 6x6', 'k_proj_weight 6x4', 'v_proj_weight 6x5', 'out_proj.weight 6x6' })
  test.eq(kv.in_proj_weight, nil)

  local enc = nn.TransformerEncoderLayer(8, 2, { dim_feedforward = 16 })
  local keys = {}
  for k in pairs(enc:state_dict()) do keys[#keys + 1] = k end
  test.eq(keys, { 'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight',
    'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias', 'norm1.weight',
    'norm1.bias', 'norm2.weight', 'norm2.bias' })
  test.eq(enc.self_attn.dropout, 0.1)
  test.eq(enc.dropout.p, 0.1)
  local dec = nn.TransformerDecoderLayer(8, 2, { dim_feedforward = 16, bias = false })
  keys = {}
  for k in pairs(dec:state_dict()) do keys[#keys + 1] = k end
  test.eq(keys, { 'self_attn.in_proj_weight', 'self_attn.out_proj.weight', 'multihead_attn.in_proj_weight',
    'multihead_attn.out_proj.weight', 'linear1.weight', 'linear2.weight', 'norm1.weight', 'norm2.weight',
    'norm3.weight' })
  test.ok(dec.dropout3 ~= nil and dec.norm3 ~= nil, 'norm3 and dropout3')
  -- float32 by default, and the default dim_feedforward of 2048
  local e2 = nn.TransformerEncoderLayer(4, 2)
  test.eq(e2.linear1.weight:shape(), { 2048, 4 })
  test.eq(e2(lm.randn(3, 2, 4)):dtype(), 'float32')
  test.eq(tostring(m):match('^MultiheadAttention%(([^\n]-)%s*%-%-'), 'embed_dim=8, num_heads=2')
end)

local G = dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'grad_check.lua')
local gc, flat, with_params = G.gc, G.flat, G.with_params

local function r64(...)
  local args = { ... }
  args[#args + 1] = { dtype = 'float64', requires_grad = true }
  return lm.randn(table.unpack(args))
end

test.case('gradcheck in float64: F.scaled_dot_product_attention', function()
  lm.manual_seed(21)
  local q, k, v = r64(2, 2, 3), r64(2, 3, 3), r64(2, 3, 2)
  gc('sdpa', function(a, b, c) return F.scaled_dot_product_attention(a, b, c) end, { q, k, v })
  gc('sdpa causal', function(a, b, c) return F.scaled_dot_product_attention(a, b, c, { is_causal = true }) end,
    { q, k, v })
  local bm = lm.tensor({ { 1, 0, 1 }, { 0, 1, 1 } }, { dtype = 'uint8' })
  local fm = r64(2, 1, 3)
  gc('sdpa boolean mask', function(a, b, c)
    return F.scaled_dot_product_attention(a, b, c, { attn_mask = bm, scale = 0.7 })
  end, { q, k, v })
  gc('sdpa float mask (its gradient too)', function(a, b, c, f)
    return F.scaled_dot_product_attention(a, b, c, { attn_mask = f })
  end, { q, k, v, fm })
end)

test.case('gradcheck in float64: nn.MultiheadAttention', function()
  lm.manual_seed(22)
  local m = nn.MultiheadAttention(4, 2, { dtype = 'float64' })
  local q, k, v = r64(2, 1, 4), r64(3, 1, 4), r64(3, 1, 4)
  local kpm = lm.tensor({ { 0, 1, 0 } }, { dtype = 'uint8' })
  gc('MultiheadAttention', function(a, b, c)
    return flat(m(a, b, c, { key_padding_mask = kpm, average_attn_weights = false }))
  end, with_params(m, q, k, v))
  local kv = nn.MultiheadAttention(4, 2, { kdim = 3, vdim = 2, batch_first = true, dtype = 'float64' })
  gc('MultiheadAttention kdim/vdim batch_first causal', function(a, b, c)
    return flat(kv(a, b, c, { is_causal = true }))
  end, with_params(kv, r64(1, 2, 4), r64(1, 3, 3), r64(1, 3, 2)))
end)

test.case('gradcheck in float64: the Transformer layers', function()
  lm.manual_seed(23)
  local o = { dim_feedforward = 3, dropout = 0, dtype = 'float64' }
  local enc = nn.TransformerEncoderLayer(4, 2, o)
  gc('TransformerEncoderLayer', function(x) return enc(x, { is_causal = true }) end, with_params(enc, r64(2, 1, 4)))
  local enc2 = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 3, dropout = 0, dtype = 'float64',
    norm_first = true, activation = 'gelu' })
  gc('TransformerEncoderLayer norm_first gelu', function(x) return enc2(x) end, with_params(enc2, r64(2, 4)))
  local dec = nn.TransformerDecoderLayer(4, 2, o)
  gc('TransformerDecoderLayer', function(x, mem) return dec(x, mem, { tgt_is_causal = true }) end,
    with_params(dec, r64(2, 1, 4), r64(3, 1, 4)))
end)

test.case('dropout: on the attention weights in training, off in eval; SDPA applies dropout_p', function()
  lm.manual_seed(31)
  local q = lm.randn(2, 5, 4, { dtype = 'float64' })
  local m = nn.MultiheadAttention(4, 2, { dropout = 0.5, batch_first = true, dtype = 'float64' })
  m:eval()
  local o1, w1 = m(q, q, q, { average_attn_weights = false })
  local o2 = m(q, q, q)
  test.tensor_near(o1, o2, 1e-12, 'eval: deterministic')
  test.tensor_near(w1:sum(-1), lm.ones(2, 2, 5, { dtype = 'float64' }), 1e-12, 'eval: weights sum to 1')
  m:train()
  local _, wt = m(q, q, q, { average_attn_weights = false })
  local zeros = wt:eq(0):sum():item()
  test.ok(zeros > 0 and zeros < wt:numel(), 'training: some weights dropped, not all')
  -- kept weights are scaled by 1 / (1 - p)
  local kept = lm.where(wt:eq(0), w1 * 2, wt)
  test.tensor_near(kept, w1 * 2, 1e-12, 'training: kept weights scaled by 2')
  -- p = 1 drops everything: the output is out_proj's bias (zero)
  local all = nn.MultiheadAttention(4, 2, { dropout = 1, dtype = 'float64' })
  test.eq(all(q, q, q):abs():sum():item(), 0)
  test.ok(all:eval()(q, q, q):abs():sum():item() > 0, 'eval: no dropout')
  -- F.scaled_dot_product_attention has no training flag: dropout_p > 0 always drops (as PyTorch)
  local v = lm.randn(2, 5, 3, { dtype = 'float64' })
  test.eq(F.scaled_dot_product_attention(q, q, v, { dropout_p = 1 }):abs():sum():item(), 0)
  local a = F.scaled_dot_product_attention(q, q, v, { dropout_p = 0.5 })
  local b = F.scaled_dot_product_attention(q, q, v)
  test.ok((a - b):abs():max():item() > 1e-6, 'dropout_p = 0.5 changes the output')
  -- a Transformer layer: train differs, eval is deterministic
  local enc = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 8, dtype = 'float64' })
  local x = lm.randn(3, 2, 4, { dtype = 'float64' })
  test.ok((enc(x) - enc(x)):abs():max():item() > 0, 'training: dropout (0.1 by default) is random')
  enc:eval()
  test.tensor_near(enc(x), enc(x), 0, 'eval: deterministic')
end)

test.case('masks: conventions, is_causal, broadcasting', function()
  lm.manual_seed(41)
  local q, k, v = lm.randn(2, 4, 3, { dtype = 'float64' }), lm.randn(2, 4, 3, { dtype = 'float64' }),
    lm.randn(2, 4, 5, { dtype = 'float64' })
  local allow = lm.ones(4, 4, { dtype = 'uint8' }):tril()
  local causal = F.scaled_dot_product_attention(q, k, v, { is_causal = true })
  test.tensor_near(F.scaled_dot_product_attention(q, k, v, { attn_mask = allow }), causal, 1e-12,
    'SDPA: boolean mask 1 = may attend')
  local add = lm.zeros(4, 4, { dtype = 'float64' }):masked_fill(allow:eq(0), -math.huge)
  test.tensor_near(F.scaled_dot_product_attention(q, k, v, { attn_mask = add }), causal, 1e-12, 'SDPA: float mask added')
  -- the first query sees only the first key
  test.tensor_near(causal[{ {}, 1 }], v[{ {}, 1 }], 1e-12, 'causal: row 1 = value 1')
  -- MultiheadAttention: 1 = masked out; is_causal without a mask is the causal mask
  local m = nn.MultiheadAttention(3, 1, { batch_first = true, dtype = 'float64' })
  local o1, w1 = m(q, k, k, { attn_mask = allow:eq(0) })
  local o2, w2 = m(q, k, k, { is_causal = true })
  test.tensor_near(o1, o2, 1e-12, 'MHA: is_causal is the causal mask')
  test.tensor_near(w1, w2, 1e-12)
  test.eq(w1[{ 1, 1, 2 }]:item(), 0)
  -- key_padding_mask: a padded key gets no weight
  local kpm = lm.tensor({ { 0, 0, 0, 1 }, { 0, 1, 0, 0 } }, { dtype = 'uint8' })
  local _, w = m(q, k, k, { key_padding_mask = kpm })
  test.eq(w[{ {}, {}, 4 }][1]:abs():sum():item(), 0)
  test.eq(w[{ {}, {}, 2 }][2]:abs():sum():item(), 0)
  -- need_weights = false: no weights
  local o3, w3 = m(q, k, k, { need_weights = false })
  test.eq(w3, nil)
  test.eq(o3:shape(), { 2, 4, 3 })
end)

test.case('bad input: clear errors naming the module and the shapes', function()
  test.raises(function() nn.MultiheadAttention(10, 3) end,
    'nn.MultiheadAttention: embed_dim 10 is not divisible by num_heads 3')
  test.raises(function() nn.MultiheadAttention(0, 1) end, 'nn.MultiheadAttention: embed_dim must be a positive integer, got 0')
  test.raises(function() nn.MultiheadAttention(4, 2, { dropout = 2 }) end,
    'nn.MultiheadAttention: option dropout must be a number in [0, 1], got 2')
  test.raises(function() nn.MultiheadAttention(4, 2, { add_bias_kv = true }) end,
    "nn.MultiheadAttention: unknown option 'add_bias_kv'")
  test.raises(function() nn.TransformerEncoderLayer(10, 4) end,
    'nn.TransformerEncoderLayer: d_model 10 is not divisible by nhead 4')
  test.raises(function() nn.TransformerDecoderLayer(8, 2, { activation = 'tanh' }) end,
    "nn.TransformerDecoderLayer: option activation must be 'relu', 'gelu' or a function, got 'tanh'")
  test.raises(function() nn.TransformerEncoderLayer(8, 2, { norm_first = 1 }) end,
    'nn.TransformerEncoderLayer: option norm_first must be a boolean, got 1')

  local m = nn.MultiheadAttention(4, 2)
  local q, kv = lm.zeros(3, 2, 4), lm.zeros(5, 2, 4)
  test.raises(function() m(lm.zeros(3, 2, 6), kv, kv) end,
    'nn.MultiheadAttention: query of shape [3, 2, 6] does not fit embed_dim=4 (expected [L, N, 4] or [L, 4])')
  test.raises(function() m(q, lm.zeros(5, 2, 3), kv) end,
    'nn.MultiheadAttention: key of shape [5, 2, 3] does not fit kdim=4 (expected [S, N, 4] or [S, 4])')
  test.raises(function() m(q, kv, lm.zeros(6, 2, 4)) end,
    'nn.MultiheadAttention: query [3, 2, 4], key [5, 2, 4] and value [6, 2, 4] do not fit')
  test.raises(function() m(q, lm.zeros(5, 3, 4), lm.zeros(5, 3, 4)) end, 'do not fit (the same batch')
  test.raises(function() m(q, lm.zeros(5, 4), lm.zeros(5, 4)) end, 'must all be batched (3-D) or all unbatched (2-D)')
  test.raises(function() m(q:double(), kv, kv) end, 'nn.MultiheadAttention: the query is float64 but the parameters are float32')
  test.raises(function() m(q, kv, kv, { attn_mask = lm.zeros(3, 4, { dtype = 'uint8' }) }) end,
    'nn.MultiheadAttention: attn_mask of shape [3, 4] does not fit (expected [3, 5] or [4, 3, 5])')
  test.raises(function() m(q, kv, kv, { key_padding_mask = lm.zeros(5, 2, { dtype = 'uint8' }) }) end,
    'nn.MultiheadAttention: key_padding_mask of shape [5, 2] does not fit (expected [2, 5])')
  test.raises(function() m(q, kv, kv, { attn_mask = lm.zeros(3, 5, { dtype = 'int64' }) }) end,
    'nn.MultiheadAttention: attn_mask must be uint8 (boolean: 1 = masked out) or float32 (added to the scores), got int64')
  test.raises(function() m(q, kv, kv, { attn_mask = lm.zeros(3, 5, { dtype = 'float64' }) }) end, 'got float64')
  test.raises(function() m(q, kv, kv, { need_weight = false }) end, "nn.MultiheadAttention: unknown option 'need_weight'")
  test.raises(function() m(q, kv, kv, { key_padding_mask = 'x' }) end,
    "nn.MultiheadAttention: key_padding_mask must be a tensor, got 'x'")

  local S = 'F.scaled_dot_product_attention'
  local a, b = lm.zeros(2, 3, 4), lm.zeros(2, 5, 4)
  test.raises(function() F.scaled_dot_product_attention(a, lm.zeros(2, 5, 3), b) end,
    S .. ': key of shape [2, 5, 3] does not fit the query of shape [2, 3, 4] (the last dims, E, must be equal)')
  test.raises(function() F.scaled_dot_product_attention(a, b, lm.zeros(2, 6, 4)) end,
    S .. ': value of shape [2, 6, 4] does not fit the key of shape [2, 5, 4] (the sequence dims, S, must be equal)')
  test.raises(function() F.scaled_dot_product_attention(a, lm.zeros(3, 5, 4), lm.zeros(3, 5, 4)) end,
    S .. ': the batch dims of query [2, 3, 4], key [3, 5, 4] and value [3, 5, 4] do not broadcast')
  test.raises(function() F.scaled_dot_product_attention(lm.zeros(4), b, b) end, S .. ': query of shape [4] needs at least 2 dims')
  test.raises(function() F.scaled_dot_product_attention(a, b, b, { is_causal = true, attn_mask = lm.zeros(3, 5) }) end,
    S .. ': is_causal=true and attn_mask are both given')
  test.raises(function() F.scaled_dot_product_attention(a, b, b, { attn_mask = lm.zeros(3, 4) }) end,
    S .. ': attn_mask of shape [3, 4] does not broadcast to the scores [2, 3, 5] (..., L, S)')
  test.raises(function() F.scaled_dot_product_attention(a, b, b, { attn_mask = lm.zeros(3, 5, { dtype = 'int32' }) }) end,
    S .. ': attn_mask must be uint8 (boolean: 1 = may attend) or float32 (added), got int32')
  test.raises(function() F.scaled_dot_product_attention(a, b:double(), b) end, S .. ': key is float64 but the query is float32')
  test.raises(function() F.scaled_dot_product_attention(a, b, b, { dropout_p = -1 }) end,
    S .. ': option dropout_p must be a number in [0, 1], got -1')
  test.raises(function() F.scaled_dot_product_attention(a, b, b, { causal = true }) end, S .. ": unknown option 'causal'")

  local enc = nn.TransformerEncoderLayer(4, 2, { dim_feedforward = 8 })
  test.raises(function() enc(lm.zeros(3, 2, 5)) end,
    'nn.TransformerEncoderLayer: src of shape [3, 2, 5] does not fit d_model=4 (expected [seq, batch, 4] or [seq, 4])')
  test.raises(function() enc(lm.zeros(3, 2, 4), { src_mask = lm.zeros(2, 2, { dtype = 'uint8' }) }) end,
    "nn.MultiheadAttention at 'self_attn': attn_mask of shape [2, 2] does not fit (expected [3, 3] or [4, 3, 3])")
  local dec = nn.TransformerDecoderLayer(4, 2, { dim_feedforward = 8, batch_first = true })
  test.raises(function() dec(lm.zeros(2, 3, 4), lm.zeros(2, 5, 3)) end,
    'nn.TransformerDecoderLayer: memory of shape [2, 5, 3] does not fit d_model=4 (expected [batch, seq, 4] or [seq, 4])')
  test.raises(function() dec(lm.zeros(2, 3, 4), lm.zeros(2, 5, 4), { memory_mask = lm.zeros(3, 3) }) end,
    "nn.MultiheadAttention at 'multihead_attn': attn_mask of shape [3, 3] does not fit (expected [3, 5] or [4, 3, 5])")
  test.raises(function() dec(lm.zeros(2, 3, 4), lm.zeros(2, 5, 4), { tgt_causal = true }) end,
    "nn.TransformerDecoderLayer: unknown option 'tgt_causal'")

  -- named where it sits in a model, at the user's line
  local Net = nn.Module:extend('AttnNet')
  function Net:__init() self.attn = nn.MultiheadAttention(4, 2) end
  function Net:forward(x) return self.attn(x, x, x) end
  local msg = test.raises(function() Net()(lm.zeros(3, 2, 5)) end, "nn.MultiheadAttention at 'attn': query of shape [3, 2, 5]")
  test.ok(msg:find('test_attention.lua:%d+:') ~= nil, "at the user's line: " .. msg)
  msg = test.raises(function() F.scaled_dot_product_attention(a, b, lm.zeros(2, 6, 4)) end, S)
  test.ok(msg:find('test_attention.lua:%d+:') ~= nil, "at the user's line: " .. msg)
end)
