--[[
lumen.nn.attention — attention as torch.nn has it: F.scaled_dot_product_attention (PyTorch 2.x's),
nn.MultiheadAttention, nn.TransformerEncoderLayer and nn.TransformerDecoderLayer.

Everything is composed from tensor ops (matmul, softmax, masked_fill, dropout, linear, layer_norm),
so autograd gives the gradients. Names, shapes, options, child modules and initialisation are
PyTorch's, so a state_dict lines up with PyTorch's keys: MultiheadAttention has in_proj_weight
(3E, E) and in_proj_bias (3E) (q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim is not
E), xavier_uniform_ weights, zero biases and out_proj (an nn.Linear); the layers have self_attn,
(multihead_attn,) linear1, dropout, linear2, norm1.., dropout1...

Two mask conventions, both PyTorch's: in F.scaled_dot_product_attention a boolean (uint8) attn_mask
says where a query MAY attend (1 = take part); in nn.MultiheadAttention (and the Transformer
layers) a boolean attn_mask or key_padding_mask says what is NOT allowed (1 = masked out). A float
mask is added to the scores in both.
Read next: lumen/nn/loss.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local check = require 'lumen.nn.check'
local layers = require 'lumen.nn.layers'
local init = require 'lumen.nn.initializers'

local M = {}
local builtin, raise, shape_str, describe = base.builtin, base.raise, base.shape_str, check.describe
local U = layers._util
local NEG_INF = -math.huge

local FLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local function shape_of(dims) return '[' .. table.concat(dims, ', ') .. ']' end

-- The broadcast of the dim lists a and b, or nil when they do not broadcast.
local function broadcast(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    out[i] = x == 1 and y or x
  end
  return out
end

-- The lower-triangular "may attend" pattern as its complement: a uint8 (L, S) with 1 above the
-- diagonal (the future), top-left aligned as PyTorch's is_causal.
local function causal_block(L, S) return lm.ones(L, S, { dtype = 'uint8' }):triu(1) end

-- softmax(scores) (already scaled and masked), dropout with probability p when p > 0, times v.
local function attend(scores, v, p)
  local w = scores:softmax(-1)
  if p > 0 then w = F.dropout(w, p, true) end
  return w:matmul(v), w
end

-- ---------------------------------------------------------------- F.scaled_dot_product_attention

--- F.scaled_dot_product_attention(q, k, v [, {attn_mask=, dropout_p=0, is_causal=false, scale=}]):
--- softmax(q k^T * scale + mask) v, q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev).
function M.scaled_dot_product_attention(q, k, v, opts)
  local fname = 'F.scaled_dot_product_attention'
  local names = { 'query', 'key', 'value' }
  local qkv = { q, k, v }
  for i = 1, 3 do
    local t = qkv[i]
    if not lm.is_tensor(t) then raise(string.format('%s: %s must be a tensor, got %s', fname, names[i], describe(t))) end
    if t:dim() < 2 then
      raise(string.format('%s: %s of shape %s needs at least 2 dims (..., %s, %s)', fname, names[i], shape_str(t),
        i == 1 and 'L' or 'S', i == 3 and 'Ev' or 'E'))
    end
    if not FLOAT[t:dtype()] then
      raise(string.format('%s: %s must be a floating tensor, got %s', fname, names[i], t:dtype()))
    end
    if t:dtype() ~= q:dtype() then
      raise(string.format('%s: %s is %s but the query is %s', fname, names[i], t:dtype(), q:dtype()))
    end
  end
  opts = check.options(opts, { attn_mask = true, dropout_p = true, is_causal = true, scale = true }, fname)
  local E, L, S = q:size(-1), q:size(-2), k:size(-2)
  if k:size(-1) ~= E then
    raise(string.format('%s: key of shape %s does not fit the query of shape %s (the last dims, E, must be equal)',
      fname, shape_str(k), shape_str(q)))
  end
  if v:size(-2) ~= S then
    raise(string.format('%s: value of shape %s does not fit the key of shape %s (the sequence dims, S, must be equal)',
      fname, shape_str(v), shape_str(k)))
  end
  local qs, ks, vs = q:shape(), k:shape(), v:shape()
  local batch = broadcast({ table.unpack(qs, 1, #qs - 2) }, { table.unpack(ks, 1, #ks - 2) })
  batch = batch and broadcast(batch, { table.unpack(vs, 1, #vs - 2) })
  if not batch then
    raise(string.format('%s: the batch dims of query %s, key %s and value %s do not broadcast', fname,
      shape_str(q), shape_str(k), shape_str(v)))
  end
  local p = U.number_opt(opts.dropout_p, 0, 'dropout_p', fname, 0, 1)
  local causal = U.bool_opt(opts.is_causal, false, 'is_causal', fname)
  local scale = U.number_opt(opts.scale, 1 / math.sqrt(E), 'scale', fname)
  local mask = opts.attn_mask
  if causal and mask ~= nil then
    raise(fname .. ': is_causal=true and attn_mask are both given; pass one of them (is_causal is the lower-triangular mask)')
  end
  -- no mask, no dropout, one batch shape: the fused kernel (F.flash_attention: an online softmax in
  -- blocks, memory linear in the sequence, its backward recomputing the weights)
  if mask == nil and p == 0 and scale > 0 and S > 0 and shape_of(batch) == shape_of({ table.unpack(qs, 1, #qs - 2) })
      and shape_of(batch) == shape_of({ table.unpack(ks, 1, #ks - 2) })
      and shape_of(batch) == shape_of({ table.unpack(vs, 1, #vs - 2) }) then
    return F.flash_attention(q, k, v, { is_causal = causal, scale = scale })
  end
  local scores = q:matmul(k:transpose(-2, -1)) * scale
  if causal then
    scores = scores:masked_fill(causal_block(L, S), NEG_INF)
  elseif mask ~= nil then
    if not lm.is_tensor(mask) then raise(string.format('%s: attn_mask must be a tensor, got %s', fname, describe(mask))) end
    local want = { table.unpack(batch) }
    want[#want + 1], want[#want + 2] = L, S
    local b = broadcast(want, mask:shape())
    if not b or #b ~= #want or shape_of(b) ~= shape_of(want) then
      raise(string.format('%s: attn_mask of shape %s does not broadcast to the scores %s (..., L, S)', fname,
        shape_str(mask), shape_of(want)))
    end
    if mask:dtype() == 'uint8' then
      scores = scores:masked_fill(mask:eq(0), NEG_INF) -- 1 = may attend
    elseif mask:dtype() == q:dtype() then
      scores = scores + mask
    else
      raise(string.format('%s: attn_mask must be uint8 (boolean: 1 = may attend) or %s (added), got %s', fname,
        q:dtype(), mask:dtype()))
    end
  end
  return (attend(scores, v, p))
end

-- ---------------------------------------------------------------- nn.MultiheadAttention

local MHA = builtin('MultiheadAttention')
M.MultiheadAttention = MHA

--- nn.MultiheadAttention(embed_dim, num_heads [, {dropout=0, bias=true, batch_first=false, kdim=,
--- vdim=, dtype=}])
function MHA:__init(embed_dim, num_heads, opts)
  local fname = 'nn.MultiheadAttention'
  local E = U.posint(embed_dim, 'embed_dim', fname)
  local H = U.posint(num_heads, 'num_heads', fname)
  if E % H ~= 0 then
    raise(string.format('%s: embed_dim %d is not divisible by num_heads %d (each head gets embed_dim / num_heads)',
      fname, E, H))
  end
  opts = layers.options(opts, { dropout = true, bias = true, batch_first = true, kdim = true, vdim = true,
    dtype = true }, fname)
  self.embed_dim, self.num_heads, self.head_dim = E, H, E // H
  self.dropout = U.number_opt(opts.dropout, 0, 'dropout', fname, 0, 1)
  self.batch_first = U.bool_opt(opts.batch_first, false, 'batch_first', fname)
  self.kdim = opts.kdim ~= nil and U.posint(opts.kdim, 'option kdim', fname) or E
  self.vdim = opts.vdim ~= nil and U.posint(opts.vdim, 'option vdim', fname) or E
  self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
  local bias = U.bool_opt(opts.bias, true, 'bias', fname)
  local dt = U.dtype_opt(opts.dtype, fname)
  local xavier = function(t) init.xavier_uniform_(t) end
  if self._qkv_same_embed_dim then
    self.in_proj_weight = U.param(fname, { 3 * E, E }, dt, xavier)
  else
    self.q_proj_weight = U.param(fname, { E, E }, dt, xavier)
    self.k_proj_weight = U.param(fname, { E, self.kdim }, dt, xavier)
    self.v_proj_weight = U.param(fname, { E, self.vdim }, dt, xavier)
  end
  if bias then
    self.in_proj_bias = U.param(fname, { 3 * E }, dt, function(t) t:zero_() end)
  else
    self:register_parameter('in_proj_bias', nil)
  end
  self.out_proj = layers.Linear(E, E, { bias = bias, dtype = dt })
  if bias then lm.no_grad(function() self.out_proj.bias:zero_() end) end
end

-- The projection weights and biases of q, k and v.
function MHA:_proj()
  local E = self.embed_dim
  local b = self.in_proj_bias
  local bq, bk, bv
  if b then bq, bk, bv = b:narrow(1, 1, E), b:narrow(1, E + 1, E), b:narrow(1, 2 * E + 1, E) end
  if self._qkv_same_embed_dim then
    local w = self.in_proj_weight
    return w:narrow(1, 1, E), w:narrow(1, E + 1, E), w:narrow(1, 2 * E + 1, E), bq, bk, bv
  end
  return self.q_proj_weight, self.k_proj_weight, self.v_proj_weight, bq, bk, bv
end

-- A mask checked against its shapes and dtype: returns it as a uint8 "masked out" tensor or as a
-- float tensor to add, in the shape views[i] of the wants[i] it has (broadcastable to the scores (N, H, L, S)).
local function mha_mask(self, m, what, wants, views, dt)
  if not lm.is_tensor(m) then
    raise(string.format('%s: %s must be a tensor, got %s', self:_label(), what, describe(m)))
  end
  local view
  for i, w in ipairs(wants) do
    if not view and shape_str(m) == shape_of(w) then view = views[i] end
  end
  if not view then
    local list = {}
    for i, w in ipairs(wants) do list[i] = shape_of(w) end
    raise(string.format('%s: %s of shape %s does not fit (expected %s)', self:_label(), what, shape_str(m),
      table.concat(list, ' or ')))
  end
  if m:dtype() ~= 'uint8' and m:dtype() ~= dt then
    raise(string.format('%s: %s must be uint8 (boolean: 1 = masked out) or %s (added to the scores), got %s',
      self:_label(), what, dt, m:dtype()))
  end
  return m:reshape(view)
end

local MHA_OPTS = { key_padding_mask = true, need_weights = true, attn_mask = true, average_attn_weights = true,
  is_causal = true }

--- mha(query, key, value [, {key_padding_mask=, need_weights=true, attn_mask=,
--- average_attn_weights=true, is_causal=false}]) -> attn_output, attn_weights (nil unless need_weights)
function MHA:forward(query, key, value, opts)
  local label = self:_label()
  local E, H, D = self.embed_dim, self.num_heads, self.head_dim
  opts = check.options(opts, MHA_OPTS, label)
  local names, dims = { 'query', 'key', 'value' }, { E, self.kdim, self.vdim }
  local dt = (self.in_proj_weight or self.q_proj_weight):dtype()
  local qkv = { query, key, value }
  for i = 1, 3 do
    local t = qkv[i]
    if not lm.is_tensor(t) then raise(string.format('%s: %s must be a tensor, got %s', label, names[i], describe(t))) end
    if (t:dim() ~= 2 and t:dim() ~= 3) or t:size(-1) ~= dims[i] then
      local what = i == 1 and 'embed_dim' or (i == 2 and 'kdim' or 'vdim')
      local seq = i == 1 and 'L' or 'S'
      raise(string.format('%s: %s of shape %s does not fit %s=%d (expected %s or [%s, %d])', label, names[i],
        shape_str(t), what, dims[i], self.batch_first and string.format('[N, %s, %d]', seq, dims[i])
        or string.format('[%s, N, %d]', seq, dims[i]), seq, dims[i]))
    end
    if t:dtype() ~= dt then
      raise(string.format("%s: the %s is %s but the parameters are %s (convert one: x:to('%s') or m:to('%s'))",
        label, names[i], t:dtype(), dt, dt, t:dtype()))
    end
  end
  local unbatched = query:dim() == 2
  if key:dim() ~= query:dim() or value:dim() ~= query:dim() then
    raise(string.format('%s: query %s, key %s and value %s must all be batched (3-D) or all unbatched (2-D)', label,
      shape_str(query), shape_str(key), shape_str(value)))
  end
  -- to (N, L, E)
  local q, k, v = query, key, value
  if unbatched then q, k, v = q:unsqueeze(1), k:unsqueeze(1), v:unsqueeze(1)
  elseif not self.batch_first then q, k, v = q:transpose(1, 2), k:transpose(1, 2), v:transpose(1, 2) end
  local N, L, S = q:size(1), q:size(2), k:size(2)
  if k:size(1) ~= N or v:size(1) ~= N or v:size(2) ~= S then
    raise(string.format('%s: query %s, key %s and value %s do not fit (the same batch; key and value the same '
      .. 'sequence length)%s', label, shape_str(query), shape_str(key), shape_str(value),
      self.batch_first and ' with batch_first' or ''))
  end
  local need = U.bool_opt(opts.need_weights, true, 'need_weights', label)
  local average = U.bool_opt(opts.average_attn_weights, true, 'average_attn_weights', label)
  local causal = U.bool_opt(opts.is_causal, false, 'is_causal', label)

  local wq, wk, wv, bq, bk, bv = self:_proj()
  q = F.linear(q, wq, bq):view(N, L, H, D):transpose(2, 3) -- (N, H, L, D)
  k = F.linear(k, wk, bk):view(N, S, H, D):transpose(2, 3)
  v = F.linear(v, wv, bv):view(N, S, H, D):transpose(2, 3)
  local scores = q:matmul(k:transpose(3, 4)) * (1 / math.sqrt(D)) -- (N, H, L, S)

  local am = opts.attn_mask
  if am == nil and causal then am = causal_block(L, S) end
  if am ~= nil then
    local wants = unbatched and { { L, S }, { H, L, S } } or { { L, S }, { N * H, L, S } }
    am = mha_mask(self, am, 'attn_mask', wants, { { 1, 1, L, S }, { N, H, L, S } }, dt)
    if am:dtype() == 'uint8' then scores = scores:masked_fill(am, NEG_INF) else scores = scores + am end
  end
  local kpm = opts.key_padding_mask
  if kpm ~= nil then
    kpm = mha_mask(self, kpm, 'key_padding_mask', { unbatched and { S } or { N, S } }, { { N, 1, 1, S } }, dt)
    if kpm:dtype() == 'uint8' then scores = scores:masked_fill(kpm, NEG_INF) else scores = scores + kpm end
  end

  local out, w = attend(scores, v, self.training and self.dropout or 0)
  out = self.out_proj(out:transpose(2, 3):reshape(N, L, E))
  if unbatched then out = out:squeeze(1)
  elseif not self.batch_first then out = out:transpose(1, 2) end
  if not need then return out, nil end
  if average then w = w:mean(2) end -- (N, L, S)
  if unbatched then w = w:squeeze(1) end
  return out, w
end

function MHA:extra_repr()
  local s = string.format('embed_dim=%d, num_heads=%d', self.embed_dim, self.num_heads)
  if self.dropout ~= 0 then s = s .. ', dropout=' .. self.dropout end
  if self.in_proj_bias == nil then s = s .. ', bias=false' end
  if self.batch_first then s = s .. ', batch_first=true' end
  if not self._qkv_same_embed_dim then s = s .. string.format(', kdim=%d, vdim=%d', self.kdim, self.vdim) end
  return s
end

-- ---------------------------------------------------------------- the Transformer layers

local function activation_opt(a, fname)
  if a == nil or a == 'relu' then return 'relu', F.relu end
  if a == 'gelu' then return 'gelu', F.gelu end
  if type(a) == 'function' or base.is_module(a) then return 'custom', a end
  raise(string.format("%s: option activation must be 'relu', 'gelu' or a function, got %s", fname, describe(a)))
end

local LAYER_OPTS = { dim_feedforward = true, dropout = true, activation = true, layer_norm_eps = true,
  batch_first = true, norm_first = true, bias = true, dtype = true }

-- The parts both layers share, in PyTorch's order: self_attn, [multihead_attn,] linear1, dropout,
-- linear2, norm1, norm2, [norm3,] dropout1, dropout2, [dropout3].
local function build_layer(self, fname, d_model, nhead, opts, decoder)
  local d = U.posint(d_model, 'd_model', fname)
  local h = U.posint(nhead, 'nhead', fname)
  opts = layers.options(opts, LAYER_OPTS, fname)
  local ff = U.posint(opts.dim_feedforward or 2048, 'option dim_feedforward', fname)
  local p = U.number_opt(opts.dropout, 0.1, 'dropout', fname, 0, 1)
  local eps = U.number_opt(opts.layer_norm_eps, 1e-5, 'layer_norm_eps', fname, 0)
  local bf = U.bool_opt(opts.batch_first, false, 'batch_first', fname)
  local bias = U.bool_opt(opts.bias, true, 'bias', fname)
  local dt = U.dtype_opt(opts.dtype, fname)
  if d % h ~= 0 then
    raise(string.format('%s: d_model %d is not divisible by nhead %d (each head gets d_model / nhead)', fname, d, h))
  end
  local mopts = { dropout = p, bias = bias, batch_first = bf, dtype = dt }
  self.self_attn = MHA(d, h, mopts)
  if decoder then self.multihead_attn = MHA(d, h, mopts) end
  self.linear1 = layers.Linear(d, ff, { bias = bias, dtype = dt })
  self.dropout = layers.Dropout(p)
  self.linear2 = layers.Linear(ff, d, { bias = bias, dtype = dt })
  self.norm_first = U.bool_opt(opts.norm_first, false, 'norm_first', fname)
  local nopts = { eps = eps, bias = bias, dtype = dt }
  self.norm1 = layers.LayerNorm(d, nopts)
  self.norm2 = layers.LayerNorm(d, nopts)
  if decoder then self.norm3 = layers.LayerNorm(d, nopts) end
  self.dropout1 = layers.Dropout(p)
  self.dropout2 = layers.Dropout(p)
  if decoder then self.dropout3 = layers.Dropout(p) end
  local name, fn = activation_opt(opts.activation, fname)
  self.activation_name = name
  if base.is_module(fn) then self.activation = fn else rawset(self, '_act', fn) end
  self.d_model, self.nhead, self.dim_feedforward, self.batch_first = d, h, ff, bf
end

local function check_src(self, x, what)
  if not lm.is_tensor(x) then raise(string.format('%s: %s must be a tensor, got %s', self:_label(), what, describe(x))) end
  if (x:dim() ~= 2 and x:dim() ~= 3) or x:size(-1) ~= self.d_model then
    raise(string.format('%s: %s of shape %s does not fit d_model=%d (expected %s or [seq, %d])', self:_label(), what,
      shape_str(x), self.d_model, self.batch_first and string.format('[batch, seq, %d]', self.d_model)
      or string.format('[seq, batch, %d]', self.d_model), self.d_model))
  end
end

local function ff_block(self, x, drop)
  local act = rawget(self, '_act') or self.activation
  return drop(self.linear2(self.dropout(act(self.linear1(x)))))
end

local function layer_repr(self)
  local s = string.format('d_model=%d, nhead=%d, dim_feedforward=%d', self.d_model, self.nhead, self.dim_feedforward)
  if self.activation_name ~= 'relu' then s = s .. ", activation='" .. self.activation_name .. "'" end
  if self.norm_first then s = s .. ', norm_first=true' end
  if self.batch_first then s = s .. ', batch_first=true' end
  return s
end

local Enc = builtin('TransformerEncoderLayer')
M.TransformerEncoderLayer = Enc

--- nn.TransformerEncoderLayer(d_model, nhead [, {dim_feedforward=2048, dropout=0.1,
--- activation='relu'|'gelu', layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true, dtype=}])
function Enc:__init(d_model, nhead, opts)
  build_layer(self, 'nn.TransformerEncoderLayer', d_model, nhead, opts, false)
end

--- layer(src [, {src_mask=, src_key_padding_mask=, is_causal=false}]) -> output (src's shape)
function Enc:forward(src, opts)
  opts = check.options(opts, { src_mask = true, src_key_padding_mask = true, is_causal = true }, self:_label())
  check_src(self, src, 'src')
  local function sa(x)
    return self.dropout1((self.self_attn(x, x, x, { attn_mask = opts.src_mask, key_padding_mask =
      opts.src_key_padding_mask, is_causal = opts.is_causal, need_weights = false })))
  end
  local x = src
  if self.norm_first then
    x = x + sa(self.norm1(x))
    x = x + ff_block(self, self.norm2(x), self.dropout2)
  else
    x = self.norm1(x + sa(x))
    x = self.norm2(x + ff_block(self, x, self.dropout2))
  end
  return x
end
Enc.extra_repr = layer_repr

local Dec = builtin('TransformerDecoderLayer')
M.TransformerDecoderLayer = Dec

--- nn.TransformerDecoderLayer(d_model, nhead [, options as TransformerEncoderLayer])
function Dec:__init(d_model, nhead, opts)
  build_layer(self, 'nn.TransformerDecoderLayer', d_model, nhead, opts, true)
end

--- layer(tgt, memory [, {tgt_mask=, memory_mask=, tgt_key_padding_mask=, memory_key_padding_mask=,
--- tgt_is_causal=false, memory_is_causal=false}]) -> output (tgt's shape)
function Dec:forward(tgt, memory, opts)
  opts = check.options(opts, { tgt_mask = true, memory_mask = true, tgt_key_padding_mask = true,
    memory_key_padding_mask = true, tgt_is_causal = true, memory_is_causal = true }, self:_label())
  check_src(self, tgt, 'tgt')
  check_src(self, memory, 'memory')
  local function sa(x)
    return self.dropout1((self.self_attn(x, x, x, { attn_mask = opts.tgt_mask, key_padding_mask =
      opts.tgt_key_padding_mask, is_causal = opts.tgt_is_causal, need_weights = false })))
  end
  local function mha(x)
    return self.dropout2((self.multihead_attn(x, memory, memory, { attn_mask = opts.memory_mask, key_padding_mask =
      opts.memory_key_padding_mask, is_causal = opts.memory_is_causal, need_weights = false })))
  end
  local x = tgt
  if self.norm_first then
    x = x + sa(self.norm1(x))
    x = x + mha(self.norm2(x))
    x = x + ff_block(self, self.norm3(x), self.dropout3)
  else
    x = self.norm1(x + sa(x))
    x = self.norm2(x + mha(x))
    x = self.norm3(x + ff_block(self, x, self.dropout3))
  end
  return x
end
Dec.extra_repr = layer_repr

return M
