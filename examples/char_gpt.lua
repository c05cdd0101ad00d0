--[[
examples/char_gpt.lua — a character-level GPT (as GPT-2, small): token and position embeddings, pre-LN
blocks (LayerNorm -> causal multi-head self-attention -> residual; LayerNorm -> MLP 4x with GELU ->
residual), a final LayerNorm and a head tied to the token embedding; trained on the 300 Tang poems
by default, then sampled.

  ./run.sh examples/char_gpt.lua                     (or: lumen examples/char_gpt.lua)
  lumen examples/char_gpt.lua --corpus fortunes --iters 3000 --log gpt.csv --viz
  lumen examples/char_gpt.lua --viz=attention        (the heads' weights over a line, live)
  lumen examples/char_gpt.lua --prompt '《静夜思》' --temperature 0.8 --top-k 10
  lumen -i examples/char_gpt.lua   (then: print(sample('《春', 200)), model, history)

Needs Debian's fortunes-zh (the Tang poems) or fortunes (English); ./run.sh installs them. Ctrl-C
stops training between two steps and still samples. The loop is in examples/text_train.lua;
options: --help.
]]
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local train = dofile(here .. 'text_train.lua')

-- ---------------------------------------------------------------- the model

-- Causal self-attention, all heads at once: one Linear gives q, k and v (B, T, 3C), split into
-- heads (B, H, T, hd); F.scaled_dot_product_attention with is_causal takes the fused kernel
-- (an online softmax in blocks, as FlashAttention) when there is no dropout.
local CausalSelfAttention = nn.Module:extend('CausalSelfAttention')
function CausalSelfAttention:__init(width, heads, dropout)
  if width % heads ~= 0 then
    error(string.format('char_gpt: --width %d is not a multiple of --heads %d', width, heads), 0)
  end
  self.heads = heads
  self.qkv = nn.Linear(width, 3 * width)
  self.proj = nn.Linear(width, width)
  self.dropout_p = dropout
  self.drop = nn.Dropout(dropout)
end

function CausalSelfAttention:forward(x)
  local B, T, C = x:size(1), x:size(2), x:size(3)
  local H = self.heads
  local hd = C // H
  local qkv = self.qkv(x):view(B, T, 3, H, hd)
  local q = qkv:select(3, 1):transpose(2, 3) -- (B, H, T, hd)
  local k = qkv:select(3, 2):transpose(2, 3)
  local v = qkv:select(3, 3):transpose(2, 3)
  local y = F.scaled_dot_product_attention(q, k, v, { is_causal = true,
    dropout_p = self.training and self.dropout_p or 0 })
  y = y:transpose(2, 3):reshape(B, T, C) -- the heads side by side again
  return self.drop(self.proj(y))
end

local Block = nn.Module:extend('Block')
function Block:__init(width, heads, dropout)
  self.ln1 = nn.LayerNorm(width)
  self.attn = CausalSelfAttention(width, heads, dropout)
  self.ln2 = nn.LayerNorm(width)
  self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.Dropout(dropout))
end

function Block:forward(x)
  x = x + self.attn(self.ln1(x))
  return x + self.mlp(self.ln2(x))
end

local GPT = nn.Module:extend('GPT')
function GPT:__init(vocab, block, width, heads, layers, dropout)
  self.block_size = block
  self.tok = nn.Embedding(vocab, width)
  self.pos = nn.Embedding(block, width)
  self.drop = nn.Dropout(dropout)
  self.blocks = nn.ModuleList()
  for _ = 1, layers do self.blocks:append(Block(width, heads, dropout)) end
  self.ln_f = nn.LayerNorm(width)
  -- GPT-2's initialisation: N(0, 0.02) for the embeddings and the Linear weights, zero biases, the
  -- projections into the residual stream scaled by 1/sqrt(2 * layers)
  for name, p in pairs(self:named_parameters()) do
    if name:match('bias$') then nn.init.zeros_(p)
    elseif p:dim() >= 2 then
      local std = (name:match('attn%.proj%.weight$') or name:match('mlp%.3%.weight$')) and 0.02 / math.sqrt(2 * layers)
        or 0.02
      nn.init.normal_(p, 0, std)
    end
  end
end

function GPT:forward(idx)
  local B, T = idx:size(1), idx:size(2)
  if T > self.block_size then
    error(string.format('GPT: a sequence of %d tokens (input %s) is longer than the position table (block_size %d)',
      T, table.concat(idx:shape(), 'x'), self.block_size), 2)
  end
  local pos = lm.arange(1, T + 1):view(1, T)
  local x = self.drop(self.tok(idx) + self.pos(pos))
  for _, b in ipairs(self.blocks) do x = b(x) end
  x = self.ln_f(x)
  -- the head shares the token embedding's weight (weight tying): logits = x E^T, as one (B*T, C) matmul
  local C = x:size(3)
  return F.linear(x:view(B * T, C), self.tok.weight):view(B, T, self.tok.num_embeddings)
end

-- The attention weights for idx (1, T): (layers, heads, T, T), row i where character i looks among
-- 1..i; what --viz=attention shows while the model trains. The same q and k as forward, the softmax
-- written out (the fused kernel keeps no T x T weights).
function GPT:attention_weights(idx)
  local T = idx:size(2)
  local future = lm.ones(T, T, { dtype = 'uint8' }):triu(1)
  local x = self.tok(idx) + self.pos(lm.arange(1, T + 1):view(1, T))
  local out = {}
  for l, b in ipairs(self.blocks) do
    local C, H = x:size(3), b.attn.heads
    local qkv = b.attn.qkv(b.ln1(x)):view(1, T, 3, H, C // H)
    local q, k = qkv:select(3, 1):transpose(2, 3), qkv:select(3, 2):transpose(2, 3)
    local s = q:matmul(k:transpose(-2, -1)) / math.sqrt(C // H)
    out[l] = s:masked_fill(future, -math.huge):softmax(-1)[1]
    x = b(x)
  end
  return lm.stack(out):double()
end

function GPT:extra_repr() return 'block_size=' .. self.block_size .. ', head tied to tok.weight' end

return train.run {
  name = 'char_gpt',
  args = arg,
  defaults = { corpus = 'tang', iters = 1500, batch = 12, block = 64, lr = 1e-3, min_lr = 1e-4, warmup = 100,
    dropout = 0, seed = 1, layers = 4, heads = 4, width = 128, eval_every = 250, eval_iters = 20, length = 300,
    temperature = 0.8, top_k = 0 },
  make_model = function(o, vocab)
    return GPT(vocab, o.block, o.width, o.heads, o.layers, o.dropout)
  end,
  attention = function(model, idx) return model:attention_weights(idx) end,
}
