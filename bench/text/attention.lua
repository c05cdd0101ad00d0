--[[
bench/text/attention.lua — attention forward + backward at sequence T (1,024) and head dim 64,
causal, B x H = 4: F.flash_attention (online softmax in blocks, no T x T matrix) against the
composed softmax(q k^T / 8) v, time (median of 5 after a warm-up) and peak tensor memory of each
(lm.memory().peak_bytes above what was live before). One JSON line each.
    lumen bench/text/attention.lua THREADS [T]
]]
local threads, T, E, BH = tonumber(arg[1] or '1'), tonumber(arg[2] or '1024'), 64, 4
lm.set_num_threads(threads)
lm.manual_seed(1)
local q = lm.randn(BH, T, E, { requires_grad = true })
local k = lm.randn(BH, T, E, { requires_grad = true })
local v = lm.randn(BH, T, E, { requires_grad = true })
local mask = lm.ones(T, T):tril():eq(0)
local impls = {
  { 'flash', function() return F.flash_attention(q, k, v, { is_causal = true }) end },
  { 'composed', function()
    return (q:matmul(k:transpose(-2, -1)) / math.sqrt(E)):masked_fill(mask, -math.huge):softmax(-1):matmul(v)
  end },
}
for _, im in ipairs(impls) do
  local function it()
    im[2]():sum():backward()
    q.grad, k.grad, v.grad = nil, nil, nil
  end
  it()
  collectgarbage()
  lm.reset_peak_memory()
  local base = lm.memory().live_bytes
  it()
  local peak = lm.memory().peak_bytes - base
  local t = {}
  for r = 1, 5 do
    local t0 = lm.sys.clock()
    it()
    t[r] = lm.sys.clock() - t0
  end
  table.sort(t)
  print(string.format('{"impl": "Lumen %s", "threads": %d, "T": %d, "ms": %.2f, "peak_mb": %.2f}', im[1], threads, T,
    1e3 * t[3], peak / 2 ^ 20))
end
