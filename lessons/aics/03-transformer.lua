--[[
AI Computing Systems, chapter 3: from Seq2Seq to the Transformer and the GPT series, following the
notes — scaled dot-product attention written by the student (checked against
F.scaled_dot_product_attention with and without is_causal on several shapes and batch dims), the
causal mask (the weights as a tensor, the future that cannot change the past), positional
encodings (attention alone is blind to order; sinusoidal and learned position tables),
multi-head attention by hand against nn.MultiheadAttention, a small GPT (pre-LN blocks, GELU MLP,
tied head) trained live on the 300 Tang poems, its attention weights for a line of a poem, and the
notes' GPT-1/2/3 table with the parameter counts the student computes from each configuration
(checked on GPT-2 small's 124,439,808 and on the lesson's own model).
Step 6 shows the weights in the `attention` scene (layers x heads over the line's characters, the
causal triangle masked). Full size: examples/char_gpt.lua.
Format: docs/lessons.md.
]]
local say = lesson.say

local function rand(seed, ...) return lesson.rand(seed, 2, ...) end -- uniform in [-2, 2]

-- ---------------------------------------------------------------- attention

local function variant(q, k, v, causal, m)
  local d = q:size(-1)
  local scores = q:matmul(k:transpose(-2, -1))
  if m == 'noscale' then
  elseif m == 'dscale' then scores = scores / d
  else scores = scores / math.sqrt(d) end
  local L, S = q:size(-2), k:size(-2)
  local future = lm.ones(L, S, { dtype = 'uint8' }):triu(1)
  local past = lm.ones(L, S, { dtype = 'uint8' }):tril(-1)
  if causal and m ~= 'after' then scores = scores:masked_fill(m == 'upper' and past or future, -math.huge) end
  local w = scores:softmax(m == 'dim' and -2 or -1)
  if causal and m == 'after' then w = w:masked_fill(future, 0) end
  return w:matmul(v)
end

local ATT_MISTAKES = {
  { 'noscale', say('it matches the scores without the 1/sqrt(d) scale: divide q k^T by math.sqrt(d) before the softmax',
    '它和没有 1/sqrt(d) 缩放的结果一样：softmax 之前要把 q k^T 除以 math.sqrt(d)') },
  { 'dscale', say('it matches scores divided by d: the scale is 1/sqrt(d) (the dot product of d unit-variance terms has variance d)',
    '它和除以 d 的结果一样：缩放是 1/sqrt(d)（d 个方差为 1 的项的点积方差是 d）') },
  { 'dim', say('it matches the softmax over the queries (dim -2): each query\'s weights over the keys must sum to 1, softmax(-1)',
    '它和对 query 维（dim -2）做 softmax 一样：每个 query 对所有 key 的权重之和应为 1，即 softmax(-1)') },
  { 'after', say('it matches the mask applied after the softmax: the weights then no longer sum to 1; put -inf in the scores before the softmax',
    '它和在 softmax 之后再加掩码一样：这样权重之和就不再是 1；要在 softmax 之前把分数置为 -inf') },
  { 'upper', say('it matches the mask of the wrong triangle: query i may attend to keys j <= i (the lower triangle); mask j > i, triu(1)',
    '它和掩错了三角一样：query i 只能看 j <= i 的 key（下三角）；要掩掉 j > i，即 triu(1)') },
}

local function check_attention(env)
  local ok, fn = lesson.need(env, 'attention')
  if not ok then return false, fn end
  local cases = {
    { { 2, 5, 8 }, { 2, 5, 8 }, false }, { { 2, 3, 4, 16 }, { 2, 3, 7, 16 }, false },
    { { 3, 1, 5 }, { 3, 6, 5 }, false }, { { 2, 6, 8 }, { 2, 6, 8 }, true },
    { { 2, 3, 9, 4 }, { 2, 3, 9, 4 }, true }, { { 1, 1, 3 }, { 1, 1, 3 }, true }, { { 4, 7, 5 }, { 4, 7, 5 }, true },
  }
  for n, c in ipairs(cases) do
    local q, k = rand(11 * n, table.unpack(c[1])), rand(11 * n + 1, table.unpack(c[2]))
    local vs = { table.unpack(c[2]) }
    vs[#vs] = vs[#vs] + 1
    local v = rand(11 * n + 2, table.unpack(vs))
    local causal = c[3]
    local want = F.scaled_dot_product_attention(q, k, v, { is_causal = causal })
    local what = string.format('attention(q, k, v, %s) with q [%s], k [%s]', tostring(causal), table.concat(c[1], ', '),
      table.concat(c[2], ', '))
    local rok, got = lesson.try(fn, q:clone(), k:clone(), v:clone(), causal)
    if not rok then return false, got end
    if not lm.is_tensor(got) or table.concat(got:shape(), 'x') ~= table.concat(want:shape(), 'x') then
      return false, say(string.format('%s returns %s; expected a tensor of shape [%s]', what,
          lm.is_tensor(got) and ('shape [' .. table.concat(got:shape(), ', ') .. ']') or type(got), table.concat(want:shape(), ', ')),
        string.format('%s 返回%s；应为形状 [%s] 的张量', what,
          lm.is_tensor(got) and ('形状 [' .. table.concat(got:shape(), ', ') .. ']') or type(got), table.concat(want:shape(), ', ')))
    end
    got = got:double()
    if not lm.allclose(got, want, 1e-6, 1e-9) then
      local why
      for _, m in ipairs(ATT_MISTAKES) do
        if lm.allclose(got, variant(q, k, v, causal, m[1]), 1e-6, 1e-9) then why = m[2] break end
      end
      local _, msg = lesson.compare(got, want, { what = what, tol = 1e-6 })
      if why then return false, say(msg.en .. ': ' .. why.en, (msg.zh or msg.en) .. '：' .. why.zh) end
      return false, msg
    end
  end
  return true, say('right: the same values as F.scaled_dot_product_attention on every shape, causal or not',
    '对：在所有形状上（有无因果掩码）都与 F.scaled_dot_product_attention 的值相同')
end

-- ---------------------------------------------------------------- parameter count

local function count_variant(c, m)
  local L, d, V, T = c.n_layer, c.d_model, c.vocab, c.context
  local layer = 12 * d * d + (m == 'nobias' and 0 or 9 * d) + (m == 'noln' and 0 or 4 * d)
  return L * layer + V * d + (m == 'nopos' and 0 or T * d) + (m == 'noln' and 0 or 2 * d) + (m == 'twice' and V * d or 0)
end

local COUNT_MISTAKES = {
  { 'nopos', say('it matches the count without the position embeddings (context x d_model)', '它和漏掉位置嵌入（context x d_model）的结果一样') },
  { 'twice', say('it matches the count with the output head counted again: the head is tied to the token embedding (the same V x d matrix)',
    '它和把输出层再算一遍的结果一样：输出层与词嵌入共享权重（同一个 V x d 的矩阵）') },
  { 'noln', say('it matches the count without the LayerNorms: 2 per layer and a final one, each a weight and a bias of d_model',
    '它和漏掉 LayerNorm 的结果一样：每层 2 个，最后还有 1 个，每个有 d_model 个权重和 d_model 个偏置') },
  { 'nobias', say('it matches the count without the biases of the four linear layers of a block (3d + d + 4d + d per layer)',
    '它和漏掉每块中四个线性层偏置的结果一样（每层 3d + d + 4d + d）') },
}

local function check_count(env)
  local ok, fn = lesson.need(env, 'gpt_params')
  if not ok then return false, fn end
  local cases = {
    { cfg = { n_layer = 12, d_model = 768, vocab = 50257, context = 1024 }, name = 'GPT-2 small', want = 124439808 },
    { cfg = { n_layer = 12, d_model = 768, vocab = 40478, context = 512 }, name = 'GPT-1' },
    { cfg = { n_layer = 1, d_model = 8, vocab = 5, context = 3 }, name = say('a 1-layer model of width 8', '一个 1 层、宽 8 的模型') },
  }
  local m, cfg = env.gpt, env.gpt_cfg
  if type(m) == 'table' and type(m.parameters) == 'function' and type(cfg) == 'table' then
    local n = 0
    for _, p in ipairs(m:parameters()) do n = n + p:numel() end
    cases[#cases + 1] = { cfg = { n_layer = cfg.n_layer, d_model = cfg.d_model, vocab = cfg.vocab, context = cfg.context },
      name = say('the lesson\'s model gpt (step 5), counted from its parameters', '本课的模型 gpt（第 5 步），由它的参数数出来'), want = n }
  end
  for _, c in ipairs(cases) do
    local want = c.want or count_variant(c.cfg, nil)
    local name = type(c.name) == 'table' and c.name or say(c.name, c.name)
    local q = c.cfg
    local call = string.format('gpt_params{n_layer = %d, d_model = %d, vocab = %d, context = %d}', q.n_layer, q.d_model,
      q.vocab, q.context)
    local rok, got = lesson.try(fn, { n_layer = q.n_layer, d_model = q.d_model, vocab = q.vocab, context = q.context })
    if not rok then return false, got end
    local g = lesson.number(got)
    if g ~= want then
      local why
      for _, mk in ipairs(COUNT_MISTAKES) do
        if g == count_variant(q, mk[1]) then why = mk[2] break end
      end
      return false, say(string.format('%s (%s) gives %s, expected %d%s', call, name.en, g and lesson.show(g) or type(got), want,
          why and ('; ' .. why.en) or ''),
        string.format('%s（%s）得到 %s，应为 %d%s', call, name.zh, g and lesson.show(g) or type(got), want,
          why and ('；' .. why.zh) or ''))
    end
  end
  return true, say('right: 124,439,808 for GPT-2 small, and your formula counts the lesson\'s own model exactly',
    '对：GPT-2 small 是 124,439,808 个参数，你的公式也精确数出了本课自己的模型')
end

return {
  title = say('The Transformer and GPT: attention, from the formula to a small GPT',
    'Transformer 与 GPT：从注意力公式到一个小 GPT'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (Transformer, from Transformer to GPT-4)',
    '智能计算系统 第 3 章：深度学习（Transformer，从 Transformer 到 GPT-4）'),
  summary = say([[Scaled dot-product attention written by hand, the causal mask, positional
encodings, multi-head attention, a small GPT trained live on the Tang poems and its attention, and
the GPT-1/2/3 table with parameter counts computed from each configuration.]],
    [[亲手写出缩放点积注意力；因果掩码；位置编码；多头注意力；在唐诗上现场训练一个小 GPT 并看它
的注意力；以及 GPT-1/2/3 对比表，参数量由各自的配置算出来。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Scaled dot-product attention', '缩放点积注意力'),
      text = say([[
Like Seq2Seq, the Transformer (Vaswani et al., "Attention is all you need", NeurIPS 2017) has an
encoder and a decoder, but no recurrence: every position looks at every other one directly,
through attention. Each position has a query q, a key k and a value v (rows of Q, K, V); its output
is an average of the values weighted by how well its query matches each key:

  Attention(Q, K, V) = softmax(Q K^T / sqrt(d)) V        d = the size of q and k

The softmax runs over the keys (the last dim), so each query's weights sum to 1. Without the
1/sqrt(d) the dot products of d terms grow like sqrt(d) and the softmax saturates. The
`attention` below forgets the scale; the code compares it with F.scaled_dot_product_attention.]],
        [[
和 Seq2Seq 一样，Transformer（Vaswani 等，《Attention is all you need》，NeurIPS 2017）也包括
编码器和解码器两个部分，但它没有循环：每个位置通过注意力机制直接看所有其他位置。每个位置有
一个 query q、一个 key k 和一个 value v（Q、K、V 的行）；它的输出是各个 value 的加权平均，权重
取决于它的 query 与每个 key 有多匹配：

  Attention(Q, K, V) = softmax(Q K^T / sqrt(d)) V        d 是 q 和 k 的长度

softmax 在 key 的那一维（最后一维）上做，所以每个 query 的权重之和为 1。没有 1/sqrt(d) 时，
d 项的点积会像 sqrt(d) 一样增大，softmax 就饱和了。下面的 `attention` 忘了缩放；代码把它和
F.scaled_dot_product_attention 比较。]]),
      code = [[
function attention(q, k, v, causal)   -- to correct: q (..., L, d), k (..., S, d), v (..., S, dv)
  local scores = q:matmul(k:transpose(-2, -1))
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), -math.huge)
  end
  return scores:softmax(-1):matmul(v)
end
lm.manual_seed(1)
local q, k, v = lm.randn(2, 5, 16), lm.randn(2, 5, 16), lm.randn(2, 5, 16)
local ref = F.scaled_dot_product_attention(q, k, v)
print(string.format('max |attention - F.sdpa| = %.3g', (attention(q, k, v) - ref):abs():max():item()))
]],
      exercise = {
        prompt = say([[
Correct `attention(q, k, v, causal)` so that it equals F.scaled_dot_product_attention(q, k, v,
{is_causal = causal}): scaled, the softmax over the keys, and with causal the keys after each query
masked before the softmax. The check uses several shapes, L different from S, extra batch dims.]],
          [[
改正 `attention(q, k, v, causal)`，使它等于 F.scaled_dot_product_attention(q, k, v,
{is_causal = causal})：要缩放，softmax 在 key 上做；causal 时，在 softmax 之前掩掉每个 query 之后
的 key。检查会用多种形状，包括 L 与 S 不等和多出来的 batch 维。]]),
        hints = {
          say('d = q:size(-1); divide the scores by math.sqrt(d).', 'd = q:size(-1)；把分数除以 math.sqrt(d)。'),
          say('The mask is already right: triu(1) marks the keys j > i, filled with -inf before softmax(-1).',
            '掩码已经是对的：triu(1) 标出 j > i 的 key，在 softmax(-1) 之前填成 -inf。'),
        },
        check = check_attention,
        solution = [[
function attention(q, k, v, causal)
  local scores = q:matmul(k:transpose(-2, -1)) / math.sqrt(q:size(-1))
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), -math.huge)
  end
  return scores:softmax(-1):matmul(v)
end
]],
        wrong = {
          [[
function attention(q, k, v, causal)   -- scaled by d, not sqrt(d)
  local scores = q:matmul(k:transpose(-2, -1)) / q:size(-1)
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), -math.huge)
  end
  return scores:softmax(-1):matmul(v)
end
]],
          [[
function attention(q, k, v, causal)   -- softmax over the queries
  local scores = q:matmul(k:transpose(-2, -1)) / math.sqrt(q:size(-1))
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), -math.huge)
  end
  return scores:softmax(-2):matmul(v)
end
]],
          [[
function attention(q, k, v, causal)   -- the mask after the softmax
  local w = (q:matmul(k:transpose(-2, -1)) / math.sqrt(q:size(-1))):softmax(-1)
  if causal then
    local L, S = q:size(-2), k:size(-2)
    w = w:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), 0)
  end
  return w:matmul(v)
end
]],
          [[
function attention(q, k, v, causal)   -- the upper triangle kept instead of the lower
  local scores = q:matmul(k:transpose(-2, -1)) / math.sqrt(q:size(-1))
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):tril(-1), -math.huge)
  end
  return scores:softmax(-1):matmul(v)
end
]],
          [[
function attention(q, k, v, causal)   -- no scale
  local scores = q:matmul(k:transpose(-2, -1))
  if causal then
    local L, S = q:size(-2), k:size(-2)
    scores = scores:masked_fill(lm.ones(L, S, {dtype = 'uint8'}):triu(1), -math.huge)
  end
  return scores:softmax(-1):matmul(v)
end
]],
        },
      },
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The causal mask', '因果掩码'),
      text = say([[
A language model predicts each token from the ones before it, so position i must not see the
positions j > i: their scores are set to -inf before the softmax, and their weights become 0. The
allowed pattern is the lower triangle. The picture is the weights of 8 tokens, query rows against
key columns: zeros above the diagonal, each row summing to 1. The code checks what the mask
promises: changing the last tokens leaves the outputs of the earlier ones exactly as they were.
All 8 positions are trained at once, each predicting its next token, in one pass.]],
        [[
语言模型根据前面的词预测每个词，所以位置 i 不能看到 j > i 的位置：在 softmax 之前把它们的分数置为
-inf，它们的权重就变成 0。允许的部分是下三角。画面是 8 个词的权重，行是 query、列是 key：
对角线以上全是 0，每行之和为 1。代码检验掩码的承诺：改动最后几个词，前面各位置的输出一点也不变。
8 个位置一次同时训练，每个位置预测它的下一个词。]]),
      code = [[
lm.manual_seed(2)
local x = lm.randn(1, 8, 16)
local scores = x:matmul(x:transpose(-2, -1)) / 4
weights = scores:masked_fill(lm.ones(8, 8, {dtype = 'uint8'}):triu(1), -math.huge):softmax(-1)[1]
print('row sums:', table.concat(weights:sum(2):tolist(), ' '))
local y = F.scaled_dot_product_attention(x, x, x, {is_causal = true})
local x2 = x:clone()
x2:narrow(2, 6, 3):copy_(lm.randn(1, 3, 16))       -- change tokens 6..8
local y2 = F.scaled_dot_product_attention(x2, x2, x2, {is_causal = true})
print('outputs 1..5 unchanged:', lm.equal(y:narrow(2, 1, 5), y2:narrow(2, 1, 5)))
]],
      scene = function(env) return env.weights end,
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Positional encodings', '位置编码'),
      text = say([[
Attention by itself does not know the order: permute the tokens and the outputs are permuted the
same way, nothing else changes (the code shows it). A sentence is not a bag of words, so each
position gets a vector added to its token's embedding. The Transformer's sinusoidal encoding:

  PE(pos, 2i)   = sin(pos / 10000^(2i/d))
  PE(pos, 2i+1) = cos(pos / 10000^(2i/d))

one frequency per pair of dims, from fast (i = 0) to very slow, so near positions have similar
vectors and a shift is a rotation. GPT learns its table instead (nn.Embedding(context, d)), which is
why a GPT cannot read past its context. The picture is the sinusoidal table, 32 positions by
16 dims.]],
        [[
注意力本身并不知道顺序：把词的顺序打乱，输出也按同样的方式打乱，别的什么都不变（代码演示了
这一点）。句子不是一袋词，所以每个位置都要在词嵌入上加一个向量。Transformer 的正弦位置编码：

  PE(pos, 2i)   = sin(pos / 10000^(2i/d))
  PE(pos, 2i+1) = cos(pos / 10000^(2i/d))

每两维一个频率，从快（i = 0）到很慢，所以相近的位置向量也相近，平移就是旋转。GPT 则是学习
这张表（nn.Embedding(context, d)），所以 GPT 读不了超过上下文长度的序列。画面是正弦位置编码表，
32 个位置 x 16 维。]]),
      code = [[
lm.manual_seed(3)
local x = lm.randn(1, 6, 8)
local perm = lm.tensor({3, 1, 6, 2, 5, 4}, {dtype = 'int64'})
local y = F.scaled_dot_product_attention(x, x, x)
local xp = x:index_select(2, perm)
local yp = F.scaled_dot_product_attention(xp, xp, xp)
print('permuted input -> the same outputs, permuted:',
  (lm.allclose(yp, y:index_select(2, perm), 1e-5, 1e-6)))
function sinusoidal(T, d)
  local pe = lm.zeros(T, d)
  local pos = lm.arange(0, T):float():view(T, 1)
  local freq = (lm.arange(0, d, 2):float() * (-math.log(10000) / d)):exp()
  pe:narrow(2, 1, d // 2):copy_((pos * freq):sin())      -- the sines, then the cosines
  pe:narrow(2, d // 2 + 1, d // 2):copy_((pos * freq):cos())
  return pe
end
pe = sinusoidal(32, 16)
print(string.format('PE(0) . PE(1) = %.2f,  PE(0) . PE(16) = %.2f  (near positions are alike)',
  (pe[1] * pe[2]):sum():item(), (pe[1] * pe[17]):sum():item()))
]],
      scene = function(env) return env.pe end,
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Multi-head attention', '多头注意力'),
      text = say([[
One attention mixes the values with one set of weights. Multi-head attention runs h of them side
by side on d/h dims each, so different heads can look at different things (the previous token,
the same character earlier, the start of the line), then concatenates them and mixes them with an
output projection:

  Q = X W_q^T, K = X W_k^T, V = X W_v^T    (all three in in_proj_weight)
  head_j = Attention(Q_j, K_j, V_j) on the dims of head j
  out = concat(head_1 .. head_h) W_o^T + b_o

The code does it by hand with the weights of nn.MultiheadAttention(16, 4) and compares; the module
also returns each head's weights (need_weights, average_attn_weights = false).]],
        [[
一个注意力只用一组权重来混合 value。多头注意力并排运行 h 个注意力，每个用 d/h 维，不同的头可以
关注不同的东西（前一个字、前面出现过的同一个字、这一行的开头），再把它们拼接起来，用一个输出
投影混合：

  Q = X W_q^T, K = X W_k^T, V = X W_v^T    （三者都在 in_proj_weight 里）
  head_j = Attention(Q_j, K_j, V_j)，只用第 j 个头的那几维
  out = concat(head_1 .. head_h) W_o^T + b_o

代码用 nn.MultiheadAttention(16, 4) 的权重亲手算一遍再比较；这个模块还能返回每个头的权重
（need_weights、average_attn_weights = false）。]]),
      code = [[
lm.manual_seed(4)
local mha = nn.MultiheadAttention(16, 4, {batch_first = true})
local x = lm.randn(2, 5, 16)
local out, w = mha(x, x, x, {need_weights = true, average_attn_weights = false})
local qkv = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)      -- (2, 5, 48)
local function heads(t) return t:reshape(2, 5, 4, 4):transpose(2, 3) end   -- (2, 4 heads, 5, 4)
local q, k, v = heads(qkv:narrow(3, 1, 16)), heads(qkv:narrow(3, 17, 16)), heads(qkv:narrow(3, 33, 16))
local h = F.scaled_dot_product_attention(q, k, v):transpose(2, 3):reshape(2, 5, 16)
print('by hand = nn.MultiheadAttention:', (lm.allclose(mha.out_proj(h), out, 1e-5, 1e-6)))
print('per-head weights:', table.concat(w:shape(), ' x '))
]],
      expect = 'by hand = nn.MultiheadAttention:\ttrue\nper-head weights:\t2 x 4 x 5 x 5\n',
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('A small GPT on the Tang poems', '在唐诗上训练一个小 GPT'),
      text = say([[
GPT is the Transformer's decoder alone: token and position embeddings, then n_layer blocks, each a
causal multi-head self-attention and an MLP (d -> 4d -> d with GELU), each with a LayerNorm before
it and a residual around it (pre-LN, as GPT-2), a final LayerNorm, and the output head tied to the
token embedding (logits = x E^T: the same V x d matrix reads and writes tokens). Trained to predict
the next character, it learns the text's statistics.

The corpus is the 300 Tang poems (data.Corpus('tang'), Debian's fortunes-zh): a Chinese character
is one token, 2,579 of them. The model here is tiny (2 layers, width 64, 4 heads, context 32) and
trains 30 steps of 8 windows live, a few seconds: the loss falls from ln(2579) = 7.9 and the sample
is still noise with the corpus's punctuation. The full run, `lumen examples/char_gpt.lua`, prints
poems after a few minutes.]],
        [[
GPT 只用 Transformer 的解码器：词嵌入和位置嵌入，然后是 n_layer 个块，每块有一个带因果掩码的
多头自注意力和一个 MLP（d -> 4d -> d，GELU），各自前面一个 LayerNorm、外面一条残差连接（pre-LN，
与 GPT-2 相同），最后一个 LayerNorm，输出层与词嵌入共享权重（logits = x E^T：同一个 V x d 的矩阵
既读词也写词）。训练它预测下一个字，它就学到了文本的统计规律。

语料是唐诗三百首（data.Corpus('tang')，来自 Debian 的 fortunes-zh）：一个汉字就是一个词元，共
2,579 个。这里的模型很小（2 层，宽 64，4 个头，上下文 32），现场训练 30 步、每步 8 个窗口，几秒钟：
损失从 ln(2579) = 7.9 开始下降，采样出来的还只是带着标点的乱字。完整的训练是
`lumen examples/char_gpt.lua`，几分钟后就能写出诗来。]]),
      code = [[
Block = nn.Module:extend('Block')           -- pre-LN: x + attn(ln(x)), x + mlp(ln(x))
function Block:__init(d, n_head)
  self.ln_1, self.c_attn, self.c_proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
  self.ln_2, self.c_fc, self.mlp_proj = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
  self.n_head = n_head
end
function Block:qkv(x)                        -- q, k, v as (B, heads, T, d / heads)
  local B, T, d = x:size(1), x:size(2), x:size(3)
  local qkv = self.c_attn(self.ln_1(x))
  local function heads(t) return t:reshape(B, T, self.n_head, d // self.n_head):transpose(2, 3) end
  return heads(qkv:narrow(3, 1, d)), heads(qkv:narrow(3, d + 1, d)), heads(qkv:narrow(3, 2 * d + 1, d))
end
function Block:forward(x)
  local B, T, d = x:size(1), x:size(2), x:size(3)
  local q, k, v = self:qkv(x)
  local a = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
  x = x + self.c_proj(a:transpose(2, 3):reshape(B, T, d))
  return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))
end
GPT = nn.Module:extend('GPT')
function GPT:__init(cfg)
  self.wte, self.wpe = nn.Embedding(cfg.vocab, cfg.d_model), nn.Embedding(cfg.context, cfg.d_model)
  nn.init.normal_(self.wte.weight, 0, 0.02); nn.init.normal_(self.wpe.weight, 0, 0.02)
  local blocks = {}
  for i = 1, cfg.n_layer do blocks[i] = Block(cfg.d_model, cfg.n_head) end
  self.h, self.ln_f = nn.ModuleList(blocks), nn.LayerNorm(cfg.d_model)
end
function GPT:embed(idx) return self.wte(idx) + self.wpe(lm.arange(1, idx:size(2) + 1)) end
function GPT:forward(idx)
  local x = self:embed(idx)
  for _, b in ipairs(self.h) do x = b(x) end
  return self.ln_f(x):matmul(self.wte.weight:t())        -- the head tied to wte
end
poems = data.CharDataset(data.Corpus('tang'), {block_size = 32})
gpt_cfg = {vocab = poems.vocab_size, d_model = 64, n_layer = 2, n_head = 4, context = 32}
lm.manual_seed(5)
gpt = GPT(gpt_cfg)
local n = 0
for _, p in ipairs(gpt:parameters()) do n = n + p:numel() end
print(string.format('%d characters, vocabulary %d, model %d parameters', #data.Corpus('tang'),
  poems.vocab_size, n))
local opt = optim.AdamW(gpt:parameters(), {lr = 3e-3})
viz.clear()
local t0 = lm.sys.clock()
for s = 1, 30 do
  local x, y = poems:batch(8)
  local loss = F.cross_entropy(gpt(x):reshape(-1, gpt_cfg.vocab), y:reshape(-1))
  opt:zero_grad(); loss:backward(); optim.clip_grad_norm_(gpt:parameters(), 1); opt:step()
  viz.plot('tang/loss', s, loss:item())
end
print(string.format('30 steps in %.1f s (CPU, measured)', lm.sys.clock() - t0))
function sample(prompt, n, temperature)       -- n characters after prompt
  local ids = poems:encode(prompt):tolist()
  for _ = 1, n do
    local ctx = lm.tensor({{table.unpack(ids, math.max(1, #ids - 31))}}, {dtype = 'int64'})
    local p = (gpt(ctx)[1][ctx:size(2)] / (temperature or 1)):softmax(1):tolist()
    local r, acc, next_id = lm.rand(1):item(), 0, #p
    for j, pj in ipairs(p) do                   -- draw from the distribution p
      acc = acc + pj
      if r <= acc then next_id = j break end
    end
    ids[#ids + 1] = next_id
  end
  return poems:decode(lm.tensor(ids, {dtype = 'int64'}))
end
print('sample: ' .. lm.no_grad(sample, '床前明月光，', 16, 0.8):gsub('\n', ' '))
]],
      scene = 'curves',
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Where the GPT looks', 'GPT 在看哪里'),
      text = say([[
The attention weights of the model just trained, for the opening line of Li Bai's "Quiet night
thoughts", one matrix per layer and head: row i is where character i looks among the characters
0..i (the upper triangle is the causal mask). The picture is the attention scene: every layer and
head as a heat map over the characters; step into one and hover a character to see where it looks.
After 30 steps they are still nearly flat averages of the past; in the full run (examples/
char_gpt.lua) heads specialise: one looks at the previous character, another back to the same
place in the previous line of the couplet. Train more (call step 5's loop again) and look again.]],
        [[
刚训练的模型在李白《静夜思》第一句上的注意力权重，每层每个头一个矩阵：第 i 行是第 i 个字在
第 0..i 个字中看向哪里（上三角是因果掩码）。画面是注意力场景：每层每个头一张热力图；进入其中一张，
把鼠标放在某个字上，就能看到它在看哪里。训练 30 步之后，它们
还差不多是对过去的平均；在完整的训练中（examples/char_gpt.lua），各个头会分工：有的看前一个字，
有的回头看上一句对应的位置。多训练一会儿（再运行第 5 步的循环），再来看。]]),
      code = [[
function attention_weights(model, text)   -- {layer = {head = (T, T) weights}}
  local idx = poems:encode(text):view(1, -1)
  local T = idx:size(2)
  local out = {}
  lm.no_grad(function()
    local x = model:embed(idx)
    for l, b in ipairs(model.h) do
      local q, k = b:qkv(x)
      local s = q:matmul(k:transpose(-2, -1)) / math.sqrt(q:size(-1))
      out[l] = s:masked_fill(lm.ones(T, T, {dtype = 'uint8'}):triu(1), -math.huge):softmax(-1)[1]
      x = b(x)
    end
  end)
  return out
end
line = '床前明月光，疑是地上霜。'
att = attention_weights(gpt, line)
local w = att[1]
print(string.format('%d layers, %d heads, %d x %d weights each', #att, w:size(1), w:size(2), w:size(3)))
print(string.format('layer 1, head 1: "%s" (the 6th character) looks at:', utf8.char(utf8.codepoint(line, utf8.offset(line, 6)))))
local row = w[1][6]:tolist()
for j = 1, 6 do io.write(string.format(' %.2f', row[j])) end
print()
heads_side_by_side = lm.cat({w[1], w[2], w[3], w[4]}, 2)   -- 12 x 48
]],
      -- the attention scene: layers x heads of weights over the line's characters, the causal
      -- triangle masked
      scene = function(env)
        local tokens = {}
        for _, cp in utf8.codes(env.line) do tokens[#tokens + 1] = utf8.char(cp) end
        return 'attention', { weights = lm.stack(env.att), tokens = tokens, causal = true,
          source = "computed by Lumen (CPU): the lesson's GPT after its training steps" }
      end,
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('From GPT-1 to GPT-3: counting parameters', '从 GPT-1 到 GPT-3：数一数参数'),
      text = say([[
The notes' table of the GPT series (then Codex 2021.8, InstructGPT 2022.3, ChatGPT 2022.11 and
GPT-4 2023.3):

  model  released  contribution                              parameters  data
  GPT-1  2018.6    one framework: pre-training + fine-tuning     117 M   5 GB
  GPT-2  2019.2    unsupervised pre-training, many NLP tasks     1.5 B  40 GB
  GPT-3  2020.5    no fine-tuning: a few demonstrations          175 B  45 TB

Where do the parameters come from? From the configuration alone, counted as GPT-2 does:

  embeddings   vocab x d (tokens) + context x d (positions)
  each layer   12 d^2 (q, k, v, the projection: 4 d^2; the MLP: 8 d^2)
               + biases 3d + d + 4d + d + 2 LayerNorms of 2d
  at the end   one LayerNorm (2d); the head is tied to the token embedding

GPT-1: 12 layers, d 768, vocab 40,478, context 512. GPT-2 (1.5 B, the largest): 48 layers, d 1600,
vocab 50,257, context 1024; GPT-2 small is 12 layers of 768. GPT-3: 96 layers, d 12,288, context
2048. The code prints the table with the first `gpt_params`, which counts only 12 d^2 per layer.]],
        [[
讲义中的 GPT 系列对比表（之后还有 CodeX 2021.8、InstructGPT 2022.3、ChatGPT 2022.11 和
GPT-4 2023.3）：

  模型    发布时间   主要贡献                                   参数量   数据量
  GPT-1   2018年6月  提出预训练和微调的统一框架                 1.17亿   5GB
  GPT-2   2019年2月  用无监督预训练模型做各种不同 NLP 任务      15亿     40GB
  GPT-3   2020年5月  无需微调，利用少量演示指定任务             1750亿   45TB

这些参数从哪里来？只看配置就能算出来，按 GPT-2 的算法：

  嵌入     vocab x d（词）+ context x d（位置）
  每层     12 d^2（q、k、v 和输出投影：4 d^2；MLP：8 d^2）
           + 偏置 3d + d + 4d + d + 2 个 LayerNorm，各 2d
  最后     一个 LayerNorm（2d）；输出层与词嵌入共享权重

GPT-1：12 层，d 768，词表 40,478，上下文 512。GPT-2（15 亿，最大的那个）：48 层，d 1600，
词表 50,257，上下文 1024；GPT-2 small 是 12 层、768。GPT-3：96 层，d 12,288，上下文 2048。
代码用第一版 `gpt_params` 打印这张表，它每层只算了 12 d^2。]]),
      code = [[
function gpt_params(c)   -- to correct: c = {n_layer=, d_model=, vocab=, context=}
  return 12 * c.n_layer * c.d_model ^ 2
end
gpt_series = {
  {'GPT-1', {n_layer = 12, d_model = 768, vocab = 40478, context = 512}, '1.17亿 = 117 M'},
  {'GPT-2 small', {n_layer = 12, d_model = 768, vocab = 50257, context = 1024}, '124 M'},
  {'GPT-2', {n_layer = 48, d_model = 1600, vocab = 50257, context = 1024}, '15亿 = 1.5 B'},
  {'GPT-3', {n_layer = 96, d_model = 12288, vocab = 50257, context = 2048}, '1750亿 = 175 B'},
  {'this lesson', gpt_cfg, 'counted below'},
}
for _, m in ipairs(gpt_series) do
  print(string.format('%-12s %15.0f   the notes: %s', m[1], gpt_params(m[2]), m[3]))
end
local n = 0
for _, p in ipairs(gpt:parameters()) do n = n + p:numel() end
print(string.format('the lesson\'s gpt has %d parameters', n))
]],
      exercise = {
        prompt = say([[
Correct `gpt_params(c)` to count every parameter of a GPT-2-style model from its configuration
{n_layer, d_model, vocab, context}. The check wants GPT-2 small's 124,439,808 and the exact count
of this lesson's model `gpt` (from its parameters), and two more configurations.]],
          [[
改正 `gpt_params(c)`，由配置 {n_layer, d_model, vocab, context} 算出 GPT-2 式模型的全部参数。
检查要求得到 GPT-2 small 的 124,439,808，和本课模型 `gpt` 的精确参数个数（由它的参数数出来），
以及另外两种配置。]]),
        hints = {
          say('Per layer: 12 d^2 + 13 d (9 d of biases, 4 d of LayerNorms).', '每层：12 d^2 + 13 d（偏置 9 d，LayerNorm 4 d）。'),
          say('Add vocab d + context d + 2 d, and count the tied head once.', '再加上 vocab d + context d + 2 d；共享权重的输出层只算一次。'),
        },
        check = check_count,
        solution = [[
function gpt_params(c)
  local d = c.d_model
  local layer = 12 * d * d + 9 * d + 4 * d     -- weights, biases, two LayerNorms
  return c.n_layer * layer + c.vocab * d + c.context * d + 2 * d
end
]],
        wrong = {
          [[
function gpt_params(c)   -- forgets the position embeddings
  local d = c.d_model
  return c.n_layer * (12 * d * d + 13 * d) + c.vocab * d + 2 * d
end
]],
          [[
function gpt_params(c)   -- counts the tied head twice
  local d = c.d_model
  return c.n_layer * (12 * d * d + 13 * d) + 2 * c.vocab * d + c.context * d + 2 * d
end
]],
          [[
function gpt_params(c)   -- forgets the LayerNorms
  local d = c.d_model
  return c.n_layer * (12 * d * d + 9 * d) + c.vocab * d + c.context * d
end
]],
          [[
function gpt_params(c)   -- forgets the biases
  local d = c.d_model
  return c.n_layer * (12 * d * d + 4 * d) + c.vocab * d + c.context * d + 2 * d
end
]],
        },
      },
    },
  },
}
