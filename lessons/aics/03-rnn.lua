--[[
AI Computing Systems, chapter 3: recurrent networks, following the notes' order — the unfolded RNN
and its forward computation (the student's loop against nn.RNN, the unrolled autograd graph),
BPTT written by hand (the student's gradient of the loss w.r.t. W, checked against autograd on
several seeds, lengths, batches and widths), vanishing and exploding gradients measured on the
lesson's own RNN (the gradient reaching each step back: curves, then the rnn scene), gradient clipping by
the global norm written by the student (checked against optim.clip_grad_norm_), the LSTM's gates
by hand against nn.LSTMCell and the gradient reaching back through an LSTM, GRU, and a small
Seq2Seq (encoder, semantic code, decoder) trained live to reverse digits.
Step 3 plots the gradient reaching back in the curves scene; step 5 shows the `rnn` scene (RNN
against LSTM, with and without clipping).
Format: docs/lessons.md.
]]
local say = lesson.say

-- Random float64 values from a seeded LCG (the checks do not touch lm's random state).
local rand = lesson.rand

-- ---------------------------------------------------------------- BPTT

-- dL/dW of L = sum_t sum(h_t * g_t), h_t = tanh(x_t U^T + h_{t-1} W^T + b), by hand, with a
-- mistake switched on (v): the check names the mistake a wrong answer matches.
local function bptt_variant(W, h0, hs, gs, v)
  local T = #hs
  local dW = W * 0
  local carry = h0 * 0
  for t = T, 1, -1 do
    local dh = gs[t]
    if not v.nocarry then dh = dh + carry end
    local da = v.noderiv and dh or dh * (1 - hs[t] * hs[t])
    local prev = t > 1 and hs[t - 1] or h0
    if not v.last or t == T then
      dW = dW + (v.trans and prev:t():mm(da) or da:t():mm(prev))
    end
    carry = da:mm(W)
  end
  return dW
end

local BPTT_MISTAKES = {
  { { noderiv = true }, say("it matches the gradient without tanh's derivative: da_t = dh_t * (1 - h_t^2) before going through W",
    "它和漏掉 tanh 导数的梯度一样：经过 W 之前要先乘 tanh 的导数，da_t = dh_t * (1 - h_t^2)") },
  { { last = true }, say('it matches the last step alone: dL/dW is a sum over every time step t = 1..T (W is shared by all of them)',
    '它和只算最后一步的结果一样：dL/dW 要对每个时刻 t = 1..T 求和（所有时刻共用同一个 W）') },
  { { trans = true }, say('it is the transpose of the right gradient: with a_t = h_{t-1} W^T, dL/dW = sum_t da_t^T h_{t-1}, not h_{t-1}^T da_t',
    '它是正确梯度的转置：a_t = h_{t-1} W^T 时，dL/dW = sum_t da_t^T h_{t-1}，而不是 h_{t-1}^T da_t') },
  { { nocarry = true }, say('it matches the gradient that stops at each step: h_t also feeds h_{t+1}, so dh_t = g_t + da_{t+1} W must carry back',
    '它和每一步都截断的梯度一样：h_t 还影响 h_{t+1}，所以 dh_t = g_t + da_{t+1} W 要一直往回传') },
}

local function check_bptt(env)
  local ok, fn = lesson.need(env, 'bptt_W')
  if not ok then return false, fn end
  local cases = { { 1, 1, 2, 3 }, { 2, 3, 1, 4 }, { 5, 2, 3, 5 }, { 13, 1, 2, 1 }, { 7, 4, 3, 6 } }
  for n, c in ipairs(cases) do
    local T, B, I, H = c[1], c[2], c[3], c[4]
    local seed = 17 * n
    local U, W, b = rand(seed, 0.8, H, I), rand(seed + 1, 0.9, H, H), rand(seed + 2, 0.3, H)
    local h0 = rand(seed + 3, 0.5, B, H)
    local Wl = W:clone():requires_grad_()
    local xs, gs, hs = {}, {}, {}
    local h = h0
    local loss = nil
    for t = 1, T do
      xs[t], gs[t] = rand(seed + 10 + t, 1, B, I), rand(seed + 50 + t, 1, B, H)
      h = (xs[t]:mm(U:t()) + h:mm(Wl:t()) + b):tanh()
      hs[t] = h:detach()
      local lt = (h * gs[t]):sum()
      loss = loss and loss + lt or lt
    end
    loss:backward()
    local want = Wl.grad
    local what = string.format('bptt_W on T = %d steps, batch %d, hidden %d', T, B, H)
    local what_zh = string.format('bptt_W 在 T = %d 步、batch %d、hidden %d 上', T, B, H)
    local hs_in = {}
    for t = 1, T do hs_in[t] = hs[t]:clone() end
    local rok, got = lesson.try(fn, W:clone(), h0:clone(), hs_in, gs)
    if not rok then return false, got end
    if not lm.is_tensor(got) or got:dim() ~= 2 or got:size(1) ~= H or got:size(2) ~= H then
      return false, say(string.format('%s returns %s; return dL/dW, a %dx%d tensor like W', what,
          lm.is_tensor(got) and ('a tensor of shape [' .. table.concat(got:shape(), ', ') .. ']') or type(got), H, H),
        string.format('%s返回的是%s；应返回 dL/dW，和 W 一样是 %dx%d 的张量', what_zh,
          lm.is_tensor(got) and ('形状为 [' .. table.concat(got:shape(), ', ') .. '] 的张量') or type(got), H, H))
    end
    got = got:double()
    if not lm.allclose(got, want, 1e-6, 1e-9) then
      local why
      for _, m in ipairs(BPTT_MISTAKES) do
        if lm.allclose(got, bptt_variant(W, h0, hs, gs, m[1]), 1e-6, 1e-9) then why = m[2] break end
      end
      local _, msg = lesson.compare(got, want, { what = what, tol = 1e-6 })
      if why then
        return false, say(msg.en .. ': ' .. why.en, (msg.zh or msg.en) .. '：' .. why.zh)
      end
      return false, msg
    end
  end
  return true, say('right: your BPTT gives autograd\'s dL/dW on every length (1 to 13 steps), batch and width',
    '对：在各种长度（1 到 13 步）、batch 和宽度上，你的 BPTT 都得到了与自动微分相同的 dL/dW')
end

-- ---------------------------------------------------------------- clipping

local function grads_case(n)
  -- {shapes, scales, max_norm, what}
  local cases = {
    { { { 3, 4 }, { 4 }, { 2, 5 } }, { 2, 1, 3 }, 1.5, say('three gradients, total norm over max_norm', '三个梯度，总范数超过 max_norm') },
    { { { 6, 2 }, { 7 } }, { 0.01, 0.02 }, 5, say('two small gradients, total norm under max_norm', '两个很小的梯度，总范数小于 max_norm') },
    { { { 5 }, { 3, 3 } }, { 0, 0 }, 1, say('all-zero gradients', '全零的梯度') },
    { { { 8, 3 }, { 2 }, { 4 } }, { 10, 0.05, 0.05 }, 2, say('one large gradient and two small ones', '一个大梯度和两个小梯度') },
    { { { 3 }, { 3 } }, { 0.6, 0.6 }, 1, say('two gradients each under max_norm whose total norm is over it', '两个各自都小于 max_norm、但总范数超过它的梯度') },
  }
  return cases[n]
end

local function make_params(c, seed)
  local ps = {}
  for i, shape in ipairs(c[1]) do
    local p = lm.zeros(table.unpack(shape)):requires_grad_()
    p.grad = rand(seed + i, c[2][i], table.unpack(shape)):float()
    ps[i] = p
  end
  return ps
end

local function check_clip(env)
  local ok, fn = lesson.need(env, 'clip_grad_norm')
  if not ok then return false, fn end
  for n = 1, 5 do
    local c = grads_case(n)
    local mine, ref = make_params(c, 100 * n), make_params(c, 100 * n)
    local before = {}
    for i, p in ipairs(mine) do before[i] = p.grad:clone() end
    local want_norm = optim.clip_grad_norm_(ref, c[3])
    local rok, got = lesson.try(fn, mine, c[3])
    if not rok then return false, got end
    local on_en = string.format('clip_grad_norm(params, %s) on %s', lesson.show(c[3]), c[4].en)
    local on_zh = string.format('clip_grad_norm(params, %s) 在%s上', lesson.show(c[3]), c[4].zh)
    for i, p in ipairs(mine) do
      local g = p.grad
      if not lm.is_tensor(g) or not lm.allclose(g, ref[i].grad, 1e-5, 1e-7) then
        local why
        local bad = lm.is_tensor(g) and g:sum():item() ~= g:sum():item()
        local total = lm.tensor(want_norm):item()
        if bad then
          why = say('it has NaN: with a total norm of 0, max_norm / norm divides by zero; PyTorch divides by (norm + 1e-6) and never scales up (min(1, ...))',
            '出现了 NaN：总范数为 0 时 max_norm / norm 除以了 0；PyTorch 除以 (norm + 1e-6)，而且从不放大（min(1, ...)）')
        elseif lm.is_tensor(g) and total < c[3] and not lm.allclose(g, before[i], 1e-6, 1e-9) then
          why = say(string.format('the total norm is %s, under max_norm: the gradients must stay as they are (the coefficient is min(1, max_norm / (norm + 1e-6)), never more than 1)', lesson.show(total)),
            string.format('总范数是 %s，小于 max_norm：梯度应保持不变（系数是 min(1, max_norm / (norm + 1e-6))，不会大于 1）', lesson.show(total)))
        elseif lm.is_tensor(g) and lm.allclose(g, before[i]:clamp(-c[3], c[3]), 1e-6, 1e-9) then
          why = say('that clips each value to [-max_norm, max_norm]: clipping by norm scales every gradient by one coefficient, so the direction is kept',
            '这是把每个值截到 [-max_norm, max_norm]：按范数截断是所有梯度乘同一个系数，方向保持不变')
        else
          local own = before[i]:norm():item()
          local per = before[i] * math.min(1, c[3] / (own + 1e-6))
          if lm.is_tensor(g) and lm.allclose(g, per, 1e-5, 1e-7) then
            why = say('that clips each tensor by its own norm: the norm is the global one, sqrt of the sum of the squares of all gradients together, and one coefficient scales them all',
              '这是每个张量按自己的范数截断：范数是全局的，即所有梯度的平方和再开方，并用同一个系数缩放它们')
          end
        end
        local _, msg = lesson.compare(lm.is_tensor(g) and g or lm.zeros(1), ref[i].grad,
          { what = string.format('gradient %d', i), tol = 1e-5 })
        return false, say(string.format('%s: %s%s', on_en, msg.en, why and ('; ' .. why.en) or ''),
          string.format('%s：%s%s', on_zh, msg.zh or msg.en, why and ('；' .. why.zh) or ''))
      end
    end
    local gn = lesson.number(got)
    local wn = lm.tensor(want_norm):item()
    if gn == nil or math.abs(gn - wn) > 1e-5 * math.max(1, wn) then
      return false, say(string.format('%s returns %s; return the total norm before clipping, %s', on_en,
          gn and lesson.show(gn) or type(got), lesson.show(wn)),
        string.format('%s返回 %s；应返回截断之前的总范数 %s', on_zh, gn and lesson.show(gn) or type(got), lesson.show(wn)))
    end
  end
  return true, say('right: the same gradients and total norm as optim.clip_grad_norm_ in every case, zeros and small norms included',
    '对：在所有情况下（包括全零和范数很小的情况）梯度和总范数都与 optim.clip_grad_norm_ 相同')
end

return {
  title = say('Recurrent networks: BPTT, vanishing gradients, LSTM and Seq2Seq',
    '循环神经网络：BPTT、梯度消失、LSTM 与 Seq2Seq'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (recurrent neural networks)',
    '智能计算系统 第 3 章：深度学习（循环神经网络）'),
  summary = say([[The RNN unfolded in time, backpropagation through time written by hand against
autograd, vanishing and exploding gradients measured, gradient clipping, the LSTM's gates and GRU,
and a small Seq2Seq model trained live.]],
    [[按时间展开的循环神经网络；亲手写出随时间反向传播（BPTT）并与自动微分对照；实测梯度消失与
梯度爆炸；梯度截断；LSTM 的门与 GRU；现场训练一个小的 Seq2Seq 模型。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('The RNN, unfolded', '循环神经网络结构：按时间展开'),
      text = say([[
Sequence data is not independent from one input to the next: a word depends on the words before
it. The network must store information, and a recurrent neural network does that with a hidden
layer that feeds itself, the memory unit. Unfolded in time it is one layer per time step, all
sharing the same weights. With the notes' names, U for the input weights, W for the recurrent
weights and V for the output:

  h_t = tanh(U x_t + W h_{t-1} + b)       the hidden state (memory)
  o_t = V h_t,   y_t = softmax(o_t)        the output at step t

In code with a batch in rows (PyTorch's layout) U x_t is x_t U^T. `rnn_step` and `rnn_forward`
below are the lesson's RNN, the loop written out; they are compared with nn.RNN using its own
weights (weight_ih_l0 is U, weight_hh_l0 is W; nn.RNN has two biases, b_ih + b_hh). The picture is
the autograd graph of three unfolded steps: the same W enters every step.]],
        [[
序列数据前后并不相互独立：一个词和它前面的词有关。网络要有"存储"信息的能力，循环神经网络
靠一个连回自身的隐层（记忆单元）做到这一点。按时间展开（unfold）后，它是每个时刻一层，各层
共享同一组权重。按讲义的记号，U 是输入权重，W 是循环权重，V 是输出权重：

  h_t = tanh(U x_t + W h_{t-1} + b)       隐层状态（记忆）
  o_t = V h_t,   y_t = softmax(o_t)        t 时刻的输出

代码里一行是一个样本（PyTorch 的布局），所以 U x_t 写成 x_t U^T。下面的 `rnn_step` 和
`rnn_forward` 是本课的 RNN，把循环明明白白写出来；再用 nn.RNN 自己的权重与它比较
（weight_ih_l0 就是 U，weight_hh_l0 就是 W；nn.RNN 有两个偏置，b_ih + b_hh）。画面是展开
三步后的自动微分计算图：每一步用的都是同一个 W。]]),
      code = [[
function rnn_step(U, W, b, x, h)          -- one time step: tanh(x U^T + h W^T + b)
  return (x:mm(U:t()) + h:mm(W:t()) + b):tanh()
end
function rnn_forward(U, W, b, xs, h0)     -- xs: a table of (batch, input); returns h_1..h_T
  local hs, h = {}, h0
  for t = 1, #xs do
    h = rnn_step(U, W, b, xs[t], h)
    hs[t] = h
  end
  return hs
end
lm.manual_seed(1)
local rnn = nn.RNN(3, 4)                  -- input 3, hidden 4
local x = lm.randn(5, 2, 3)               -- 5 time steps, batch 2
local out = rnn(x)
local xs = {}
for t = 1, 5 do xs[t] = x[t] end
local hs = lm.no_grad(rnn_forward, rnn.weight_ih_l0, rnn.weight_hh_l0,
  rnn.bias_ih_l0 + rnn.bias_hh_l0, xs, lm.zeros(2, 4))
print('the loop = nn.RNN at every step:', (lm.allclose(lm.stack(hs), out, 1e-5, 1e-6)))
print('parameters: U 4x3, W 4x4, two biases of 4 =', #rnn:parameters() == 4 and 12 + 16 + 8)
local three = rnn_forward(rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, {xs[1], xs[2], xs[3]},
  lm.zeros(2, 4))
unrolled = three[3]:sum()                 -- the graph shown: three steps, one W
]],
      expect = 'the loop = nn.RNN at every step:\ttrue\nparameters: U 4x3, W 4x4, two biases of 4 =\t36\n',
      scene = function(env) return env.unrolled end,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('BPTT by hand', '随时间反向传播（BPTT）'),
      text = say([[
The loss of the sequence is the sum of the losses of the time steps, L = sum_t L_t. Backpropagation
through time (BPTT) is backpropagation on the unfolded network: go from t = T back to 1, and since
every step uses the same W, add up its gradient from every step. With a_t = x_t U^T + h_{t-1} W^T + b
and h_t = tanh(a_t):

  dh_t  = dL_t/dh_t + da_{t+1} W     the loss at t, and what comes back
  da_t  = dh_t * (1 - h_t^2)          through tanh
  dL/dW = sum_t da_t^T h_{t-1}        one term per time step
  (and the next step back gets da_t W)

Here L = sum_t sum(h_t * g_t) with fixed random g_t, so dL_t/dh_t = g_t. The first `bptt_W` below
is wrong; the code compares it with autograd's W.grad.]],
        [[
整个序列的损失是各个时刻损失之和，L = sum_t L_t。随时间反向传播（BPTT）就是在展开后的网络上做
反向传播：从 t = T 一直回到 1；因为每一步用的都是同一个 W，它的梯度要把每一步的贡献加起来。设
a_t = x_t U^T + h_{t-1} W^T + b，h_t = tanh(a_t)：

  dh_t = dL_t/dh_t + da_{t+1} W          t 时刻自己的损失，加上从 t + 1 传回来的
  da_t = dh_t * (1 - h_t^2)              经过 tanh
  dL/dW = sum_t da_t^T h_{t-1}           每个时刻一项
  （再往前一步得到 da_t W）

这里 L = sum_t sum(h_t * g_t)，g_t 是固定的随机张量，所以 dL_t/dh_t = g_t。下面第一版的
`bptt_W` 是错的；代码把它和自动微分得到的 W.grad 比较。]]),
      code = [[
function bptt_W(W, h0, hs, gs)  -- to correct: hs[t] = h_t, gs[t] = dL_t/dh_t; returns dL/dW
  local T = #hs
  local da = gs[T] * (1 - hs[T] * hs[T])
  local h_prev = T > 1 and hs[T - 1] or h0
  return da:t():mm(h_prev)
end
lm.manual_seed(2)
local U, b, h0 = lm.randn(4, 3) * 0.5, lm.randn(4) * 0.1, lm.randn(2, 4) * 0.5
local W = (lm.randn(4, 4) * 0.5):requires_grad_()
local xs, gs = {}, {}
for t = 1, 6 do xs[t], gs[t] = lm.randn(2, 3), lm.randn(2, 4) end
local hs = rnn_forward(U, W, b, xs, h0)
local loss = 0
for t = 1, 6 do loss = loss + (hs[t] * gs[t]):sum() end
loss:backward()
local mine = {}
for t = 1, 6 do mine[t] = hs[t]:detach() end
local d = (bptt_W(W:detach(), h0, mine, gs) - W.grad):abs():max():item()
print(string.format('max |bptt_W - autograd| = %.3g', d))
]],
      exercise = {
        prompt = say([[
Correct `bptt_W(W, h0, hs, gs)`: hs[t] is h_t (t = 1..T), gs[t] is dL_t/dh_t, h0 the initial state;
return dL/dW over the whole sequence. The check compares it with autograd on lengths 1 to 13,
batches 1 to 4, hidden sizes 1 to 6.]],
          [[
改正 `bptt_W(W, h0, hs, gs)`：hs[t] 是 h_t（t = 1..T），gs[t] 是 dL_t/dh_t，h0 是初始状态；
返回整个序列的 dL/dW。检查时会在长度 1 到 13、batch 1 到 4、hidden 1 到 6 上与自动微分比较。]]),
        hints = {
          say('Loop t = #hs, 1, -1 keeping dh, the gradient coming back from t + 1 (zeros at the start: h0 * 0).',
            '循环 t = #hs, 1, -1，并保存 dh：从 t + 1 传回来的梯度（开始时为 0：h0 * 0）。'),
          say('In the loop: dh = dh + gs[t]; da = dh * (1 - hs[t]^2); dW = dW + da:t():mm(h_{t-1}); dh = da:mm(W).',
            '循环里：dh = dh + gs[t]；da = dh * (1 - hs[t]^2)；dW = dW + da:t():mm(h_{t-1})；dh = da:mm(W)。'),
        },
        check = check_bptt,
        solution = [[
function bptt_W(W, h0, hs, gs)
  local dW, dh = W * 0, h0 * 0
  for t = #hs, 1, -1 do
    dh = dh + gs[t]                          -- the loss at t and what came back from t + 1
    local da = dh * (1 - hs[t] * hs[t])      -- through tanh
    local h_prev = hs[t - 1] or h0           -- h_0 at t = 1
    dW = dW + da:t():mm(h_prev)              -- a_t = x_t U^T + h_{t-1} W^T + b
    dh = da:mm(W)                            -- back to h_{t-1}
  end
  return dW
end
]],
        wrong = {
          [[
function bptt_W(W, h0, hs, gs)   -- forgets tanh's derivative
  local dW, dh = W * 0, h0 * 0
  for t = #hs, 1, -1 do
    dh = dh + gs[t]
    local h_prev = t > 1 and hs[t - 1] or h0
    dW = dW + dh:t():mm(h_prev)
    dh = dh:mm(W)
  end
  return dW
end
]],
          [[
function bptt_W(W, h0, hs, gs)   -- the last step only
  local T = #hs
  local da = gs[T] * (1 - hs[T] * hs[T])
  local h_prev = T > 1 and hs[T - 1] or h0
  return da:t():mm(h_prev)
end
]],
          [[
function bptt_W(W, h0, hs, gs)   -- the wrong transpose
  local dW, dh = W * 0, h0 * 0
  for t = #hs, 1, -1 do
    dh = dh + gs[t]
    local da = dh * (1 - hs[t] * hs[t])
    local h_prev = t > 1 and hs[t - 1] or h0
    dW = dW + h_prev:t():mm(da)
    dh = da:mm(W)
  end
  return dW
end
]],
          [[
function bptt_W(W, h0, hs, gs)   -- does not carry the gradient through h_{t-1}
  local dW = W * 0
  for t = #hs, 1, -1 do
    local da = gs[t] * (1 - hs[t] * hs[t])
    local h_prev = t > 1 and hs[t - 1] or h0
    dW = dW + da:t():mm(h_prev)
  end
  return dW
end
]],
          [[
function bptt_W(W, h0, hs, gs)   -- carries back through W^T instead of W
  local dW, dh = W * 0, h0 * 0
  for t = #hs, 1, -1 do
    dh = dh + gs[t]
    local da = dh * (1 - hs[t] * hs[t])
    local h_prev = t > 1 and hs[t - 1] or h0
    dW = dW + da:t():mm(h_prev)
    dh = da:mm(W:t())
  end
  return dW
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Vanishing and exploding gradients, measured', '实测梯度消失与梯度爆炸'),
      text = say([[
Unroll dh_t back k steps and the gradient is multiplied k times by diag(1 - h^2) W: a product of
k matrices. When they shrink vectors (W's largest singular values below 1, or tanh saturated) the
gradient reaching far steps vanishes like 0.5^k; when they stretch them it explodes. The notes:
the recursive structure of the RNN makes vanishing and exploding gradients more pronounced, and
because of them an RNN in practice only learns short-term dependencies.

The code measures it on the lesson's RNN (`rnn_step`, yours if you changed it): 40 steps,
hidden 16, W random with gain 0.5, 1, 1.5 and 3 (W = gain * randn / sqrt(16)), and the norm of the
gradient of sum(h_40) reaching h_t, k = 40 - t steps back. To read dL/dh_t, a zero tensor that
requires grad is added to each h_t: its .grad is the gradient there. The curves show log10 of the
norm against k.]],
        [[
把 dh_t 往回展开 k 步，梯度就被 diag(1 - h^2) W 连乘了 k 次：k 个矩阵的乘积。如果它们把向量
缩短（W 的最大奇异值小于 1，或 tanh 已经饱和），传到远处的梯度就像 0.5^k 一样消失；如果把
向量拉长，梯度就爆炸。讲义说：循环神经网络的递归结构使梯度消失 / 梯度爆炸现象更明显；由于
它们的存在，循环神经网络实际上只能学习到短期的依赖关系。

代码在本课的 RNN（`rnn_step`，如果你改过就是你的）上实测：40 步，hidden 16，W 随机、增益为
0.5、1、1.5 和 3（W = gain * randn / sqrt(16)），量 sum(h_40) 的梯度传到 h_t（往回 k = 40 - t
步）时的范数。为了读出 dL/dh_t，在每个 h_t 上加一个需要梯度的零张量：它的 .grad 就是那里的
梯度。曲线画的是范数的 log10 随 k 的变化。]]),
      code = [[
function grad_reach(gain, T)   -- the norm of d sum(h_T) / d h_t for k = T - t = 0..T-1
  lm.manual_seed(3)
  local U, b = lm.randn(16, 4) * 0.3, lm.zeros(16)
  local W = lm.randn(16, 16) * (gain / 4)
  local h, taps = lm.zeros(1, 16), {}
  for t = 1, T do
    h = rnn_step(U, W, b, lm.randn(1, 4), h)
    taps[t] = lm.zeros(1, 16):requires_grad_()
    h = h + taps[t]                          -- a zero tap: its .grad is dL/dh_t
  end
  h:sum():backward()
  local norms = {}
  for k = 0, T - 1 do norms[k + 1] = taps[T - k].grad:norm():item() end
  return norms
end
viz.clear()
print('gain   k = 0      k = 10     k = 20     k = 39')
for _, gain in ipairs({0.5, 1, 1.5, 3}) do
  local n = grad_reach(gain, 40)
  for k = 0, 39 do
    viz.plot('log10 |dL/dh_t|/gain ' .. gain, k, math.log(n[k + 1], 10), {x = 'steps back'})
  end
  print(string.format('%-5g  %.2e   %.2e   %.2e   %.2e', gain, n[1], n[11], n[21], n[40]))
end
]],
      scene = 'curves',
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Gradient clipping', '梯度截断'),
      text = say([[
For exploding gradients the notes give gradient clipping (Pascanu, Mikolov and Bengio, "On the
difficulty of training recurrent neural networks", ICML 2013); for vanishing gradients, changes to
the model: LSTM and GRU. Clipping by the global norm treats all the gradients as one vector g:

  norm = sqrt(sum over every parameter of sum(grad^2))
  coef = min(1, max_norm / (norm + 1e-6))
  every grad = grad * coef

One coefficient for all, so the direction of the step is kept and only its length is bounded;
below max_norm nothing changes; the 1e-6 keeps an all-zero gradient from dividing by zero. This is
optim.clip_grad_norm_ (PyTorch's), which returns the norm before clipping. The code shows it on an
RNN with gain 3 whose gradient explodes. The picture is the rnn scene for a ReLU RNN whose W_hh is
tripled: unclipped, the gradient reaching h_t grows to about 4e9 forty steps back; clipped to norm
1 at every step it stays at 1. The LSTM's curve is only shifted down, by the first clip (the norm
4 of dL/dh_T = 1 becomes 1): below 1 nothing is clipped.]],
        [[
对梯度爆炸问题，讲义给出的办法是梯度截断（Pascanu、Mikolov、Bengio，《On the difficulty of
training recurrent neural networks》，ICML 2013）；对梯度消失问题，则是模型上的改进：LSTM、
GRU。按全局范数截断把所有梯度看成一个向量 g：

  norm = sqrt(所有参数的 sum(grad^2) 之和)
  coef = min(1, max_norm / (norm + 1e-6))
  每个 grad = grad * coef

所有梯度乘同一个系数，所以更新的方向不变，只限制它的长度；范数小于 max_norm 时什么都不变；
1e-6 使全零的梯度不会除以 0。这就是 optim.clip_grad_norm_（与 PyTorch 的相同），它返回截断
之前的范数。代码在一个增益为 3、梯度爆炸的 RNN 上演示。画面是 rnn 场景：一个 W_hh 乘以 3 的
ReLU RNN，不截断时，传到 40 步之前 h_t 的梯度长到约 4e9；每一步都截断到范数 1 时，它一直是 1；
LSTM 的曲线只是整体下移，来自第一次截断（dL/dh_T = 1 的范数 4 变成 1）：低于 1 的不会被截断。]]),
      code = [[
function clip_grad_norm(params, max_norm)   -- to correct: clips each value
  for _, p in ipairs(params) do p.grad:clamp_(-max_norm, max_norm) end
  return 0
end
lm.manual_seed(4)
local U, W = (lm.randn(16, 4) * 0.3):requires_grad_(), (lm.randn(16, 16) * 0.75):requires_grad_()
local h = lm.zeros(1, 16)
for t = 1, 30 do h = rnn_step(U, W, lm.zeros(16), lm.randn(1, 4), h) end
h:sum():backward()
local before = optim.clip_grad_norm_({U, W}, math.huge)
print(string.format('gradient norm of U and W together: %.1f', before))
optim.clip_grad_norm_({U, W}, 1)
print(string.format('after optim.clip_grad_norm_(..., 1): %.4f', math.sqrt(U.grad:pow(2):sum():item()
  + W.grad:pow(2):sum():item())))
]],
      -- the rnn scene for an exploding ReLU RNN (W_hh x 3), with and without clipping at norm 1
      scene = function() return 'rnn', viz.rnn_gradients { length = 40, hidden = 16, nonlinearity = 'relu', gain = 3 } end,
      exercise = {
        prompt = say([[
Correct `clip_grad_norm(params, max_norm)`: scale the .grad of every tensor in params in place by
one coefficient so that their global norm is at most max_norm (as above, with the 1e-6), and
return the total norm before clipping. The check compares it with optim.clip_grad_norm_ on large,
small and all-zero gradients.]],
          [[
改正 `clip_grad_norm(params, max_norm)`：把 params 里每个张量的 .grad 原地乘上同一个系数，使它们
的全局范数不超过 max_norm（如上，带 1e-6），并返回截断之前的总范数。检查时会在大的、小的和全零的
梯度上与 optim.clip_grad_norm_ 比较。]]),
        hints = {
          say('First the total: add (p.grad * p.grad):sum():item() over the params, then math.sqrt.',
            '先求总范数：对所有参数累加 (p.grad * p.grad):sum():item()，再 math.sqrt。'),
          say('coef = math.min(1, max_norm / (total + 1e-6)); then p.grad:mul_(coef) for each p.',
            'coef = math.min(1, max_norm / (total + 1e-6))；再对每个 p 做 p.grad:mul_(coef)。'),
        },
        check = check_clip,
        solution = [[
function clip_grad_norm(params, max_norm)
  local total = 0
  for _, p in ipairs(params) do total = total + (p.grad * p.grad):sum():item() end
  total = math.sqrt(total)
  local coef = math.min(1, max_norm / (total + 1e-6))
  for _, p in ipairs(params) do p.grad:mul_(coef) end
  return total
end
]],
        wrong = {
          [[
function clip_grad_norm(params, max_norm)   -- each tensor by its own norm
  local total = 0
  for _, p in ipairs(params) do
    local n = p.grad:norm():item()
    total = total + n * n
    p.grad:mul_(math.min(1, max_norm / (n + 1e-6)))
  end
  return math.sqrt(total)
end
]],
          [[
function clip_grad_norm(params, max_norm)   -- clips the values, not the norm
  local total = 0
  for _, p in ipairs(params) do total = total + (p.grad * p.grad):sum():item() end
  for _, p in ipairs(params) do p.grad:clamp_(-max_norm, max_norm) end
  return math.sqrt(total)
end
]],
          [[
function clip_grad_norm(params, max_norm)   -- always scales (no min(1, ...), no eps)
  local total = 0
  for _, p in ipairs(params) do total = total + (p.grad * p.grad):sum():item() end
  total = math.sqrt(total)
  for _, p in ipairs(params) do p.grad:mul_(max_norm / total) end
  return total
end
]],
          [[
function clip_grad_norm(params, max_norm)   -- the norm as the sum of the tensors' norms
  local total = 0
  for _, p in ipairs(params) do total = total + p.grad:norm():item() end
  local coef = math.min(1, max_norm / (total + 1e-6))
  for _, p in ipairs(params) do p.grad:mul_(coef) end
  return total
end
]],
          [[
function clip_grad_norm(params, max_norm)   -- returns the norm after clipping
  local total = 0
  for _, p in ipairs(params) do total = total + (p.grad * p.grad):sum():item() end
  total = math.sqrt(total)
  local coef = math.min(1, max_norm / (total + 1e-6))
  for _, p in ipairs(params) do p.grad:mul_(coef) end
  return total * coef
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say("The LSTM's gates, and GRU", 'LSTM 的门，以及 GRU'),
      text = say([[
The LSTM (Hochreiter and Schmidhuber, 1997) adds a cell state c_t that is changed only by
multiplying and adding, under three gates in (0, 1) and a candidate g:

  i = sigmoid(.)  input gate       f = sigmoid(.)  forget gate
  g = tanh(.)     candidate        o = sigmoid(.)  output gate
  each . is x_t W_i*^T + h_{t-1} W_h*^T + b; the 4H block is i, f, g, o
  c_t = f * c_{t-1} + i * g,       h_t = o * tanh(c_t)

Back through c the gradient is multiplied by f, not by W and tanh': with f near 1 it travels far.
The code computes one step by hand from nn.LSTMCell's weights, then measures the gradient of
sum(h_40) reaching the input x_t k steps back, for the RNN and for the LSTM with its forget gate's
bias at 0 (the default: f about 0.5) and at 3 (f about 0.95). GRU (Cho et al. 2014) merges the
gates into two, update z and reset r, and has no separate cell: 3 blocks of weights to the LSTM's 4.]],
        [[
LSTM（Hochreiter 与 Schmidhuber，1997）增加了一个细胞状态 c_t，它只被乘法和加法改变，受三个取值在
(0, 1) 的门和一个候选值 g 控制：

  i = sigmoid(.)  输入门           f = sigmoid(.)  遗忘门
  g = tanh(.)     候选值           o = sigmoid(.)  输出门
  每个 . 都是 x_t W_i*^T + h_{t-1} W_h*^T + b；4H 的块按 i、f、g、o 排列
  c_t = f * c_{t-1} + i * g,       h_t = o * tanh(c_t)

沿着 c 往回传时梯度乘的是 f，而不是 W 和 tanh'：f 接近 1 时梯度能传得很远。代码先用 nn.LSTMCell
的权重亲手算一步，再测 sum(h_40) 的梯度传到 k 步之前的输入 x_t 时的大小：RNN，以及遗忘门偏置为
0（默认：f 约 0.5）和为 3（f 约 0.95）的 LSTM。GRU（Cho 等，2014）把门合并成两个，更新门 z 和
重置门 r，也没有单独的细胞状态：3 块权重，LSTM 是 4 块。]]),
      code = [[
lm.manual_seed(5)
local cell = nn.LSTMCell(3, 4)
local x, h, c = lm.randn(2, 3), lm.randn(2, 4), lm.randn(2, 4)
local z = x:mm(cell.weight_ih:t()) + cell.bias_ih + h:mm(cell.weight_hh:t()) + cell.bias_hh
local i, f = z:narrow(2, 1, 4):sigmoid(), z:narrow(2, 5, 4):sigmoid()
local g, o = z:narrow(2, 9, 4):tanh(), z:narrow(2, 13, 4):sigmoid()
local c2 = f * c + i * g
local h2 = o * c2:tanh()
local h_ref, c_ref = cell(x, {h, c})
print('gates by hand = nn.LSTMCell:', lm.allclose(h2, h_ref, 1e-5, 1e-6) and lm.allclose(c2, c_ref, 1e-5, 1e-6))
local function count(m) local n = 0 for _, p in ipairs(m:parameters()) do n = n + p:numel() end return n end
print('parameters, input 3, hidden 4: RNN', count(nn.RNN(3, 4)), 'GRU', count(nn.GRU(3, 4)),
  'LSTM', count(nn.LSTM(3, 4)))
function reach_input(make_step, T)   -- |d sum(h_T) / d x_t| for k = T - t = 0..T-1
  lm.manual_seed(6)
  local step = make_step()
  local xs, h, c = {}, lm.zeros(1, 16), lm.zeros(1, 16)
  for t = 1, T do
    xs[t] = lm.randn(1, 4):requires_grad_()
    h, c = step(xs[t], h, c)
  end
  h:sum():backward()
  local norms = {}
  for k = 0, T - 1 do norms[k + 1] = xs[T - k].grad:norm():item() end
  return norms
end
local function lstm(bias)
  return function()
    local m = nn.LSTMCell(4, 16)
    lm.no_grad(function() m.bias_hh:narrow(1, 17, 16):add_(bias) end)   -- the forget gate's bias
    return function(x, h, c) return m(x, {h, c}) end
  end
end
viz.clear()
for _, net in ipairs({{'RNN', function() local m = nn.RNNCell(4, 16)
                        return function(x, h) return m(x, h) end end},
                      {'LSTM, forget bias 0', lstm(0)}, {'LSTM, forget bias 3', lstm(3)}}) do
  local n = reach_input(net[2], 40)
  for k = 0, 39 do viz.plot('log10 |dL/dx_t|/' .. net[1], k, math.log(n[k + 1], 10), {x = 'steps back'}) end
  print(string.format('%-20s k = 0: %.1e   k = 20: %.1e   k = 39: %.1e', net[1], n[1], n[21], n[40]))
end
]],
      -- the rnn scene: the gradient reaching each step back, RNN against LSTM, with and without
      -- clipping (viz.rnn_gradients measures it with autograd; the curves above are this step's own)
      scene = function() return 'rnn', viz.rnn_gradients { length = 40, hidden = 16 } end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Seq2Seq: encoder and decoder', 'Seq2Seq：编码器与解码器'),
      text = say([[
A Seq2Seq model has two parts: an encoder that turns the input sequence into a semantic code, and
a decoder that writes the output from that code. It fits tasks whose input and output sequences
have different lengths (translation). Here the encoder is an LSTM whose final state {h, c} is the
code; the decoder is another LSTM that starts from it, reads a start token then its own previous
output (during training the right previous token: teacher forcing), and writes digits until an end
token. The task: read 3 to 6 digits, write them reversed.

300 steps of 32 sequences take a few seconds; the curve is the training loss, and the printed
reversals are decoded greedily by `reverse` (try your own digits; `train_seq2seq(300)` trains
further). Longer inputs need more: the code is a fixed size. Seq2Seq compresses the whole
input into one fixed-size code; attention (next lesson, aics/03-transformer) lets the decoder
look back at every input step instead.]],
        [[
Seq2Seq 模型由编码器（encoder）和解码器（decoder）两部分组成：编码器根据输入数据生成语义编码，
解码器根据该语义编码输出处理结果。它适用于输入序列和输出序列不等长的情况（例如翻译）。这里的
编码器是一个 LSTM，它最后的状态 {h, c} 就是语义编码；解码器是另一个从这个状态出发的 LSTM，先
读一个开始符，再读自己前一步的输出（训练时读正确的前一个符号：teacher forcing），一直写到结束
符。任务是：读入 3 到 6 个数字，倒序写出来。

300 步、每步 32 个序列，几秒钟；曲线是训练损失，打印的倒序结果由 `reverse` 贪心解码得到
（可以试试你自己的数字；`train_seq2seq(300)` 会接着训练）。输入越长越难：语义编码的大小是
固定的。Seq2Seq 把整个输入压缩成一个固定大小的编码；注意力机制（下一课
aics/03-transformer）则让解码器可以回头看输入的每一步。]]),
      code = [[
local V, START, STOP = 12, 11, 12            -- tokens 1..10 are the digits 0..9
lm.manual_seed(7)
embed, encoder = nn.Embedding(V, 16), nn.LSTM(16, 32, {batch_first = true})
decoder, head = nn.LSTM(16, 32, {batch_first = true}), nn.Linear(32, V)
local params = {}
for _, m in ipairs({embed, encoder, decoder, head}) do
  for _, p in ipairs(m:parameters()) do params[#params + 1] = p end
end
local opt = optim.Adam(params, {lr = 1e-2})
local function pairs_of(B, n)                 -- source digits, decoder input, decoder target
  local src = lm.randint(1, 11, {B, n})
  local rev = src:flip(2)
  local start = lm.full({B, 1}, START, {dtype = 'int64'})
  local stop = lm.full({B, 1}, STOP, {dtype = 'int64'})
  return src, lm.cat({start, rev}, 2), lm.cat({rev, stop}, 2)
end
function train_seq2seq(steps)
  for s = 1, steps do
    local src, din, dout = pairs_of(32, 3 + s % 4)
    local _, code = encoder(embed(src))       -- the semantic code: the final {h, c}
    local out = decoder(embed(din), code)
    local loss = F.cross_entropy(head(out):reshape(-1, V), dout:reshape(-1))
    opt:zero_grad(); loss:backward(); optim.clip_grad_norm_(params, 1); opt:step()
    viz.plot('seq2seq/loss', s, loss:item())
  end
end
function reverse(digits)                      -- greedy decoding of one sequence
  local src = lm.tensor({digits}, {dtype = 'int64'}) + 1
  local _, state = encoder(embed(src))
  local tok, out = START, {}
  for _ = 1, #digits + 2 do
    local y
    y, state = decoder(embed(lm.tensor({{tok}}, {dtype = 'int64'})), state)
    tok = head(y):argmax(3):item()
    if tok == STOP then break end
    out[#out + 1] = tok - 1
  end
  return table.concat(out, ' ')
end
viz.clear()
local t0 = lm.sys.clock()
train_seq2seq(300)
print(string.format('300 steps in %.1f s (CPU, measured)', lm.sys.clock() - t0))
for _, d in ipairs({{3, 1, 4, 1, 5}, {2, 7, 1, 8}, {9, 0, 6}, {6, 0, 2, 2, 1, 4}}) do
  print(table.concat(d, ' ') .. '  ->  ' .. lm.no_grad(reverse, d))
end
]],
      scene = 'curves',
    },
  },
}
