--[[
dlsys Lecture 9: normalization and regularization — the scale c of W ~ N(0, c/n) on a deep ReLU
MLP (activation norms per layer as curves, training with several c, the model scene's live
histograms), the student's choice of c, LayerNorm (the student writes its forward) and BatchNorm
by hand against F, normalization rescuing a badly initialized net, weight decay as L2 and how it
interacts with SGD, Adam and AdamW, dropout, and train/test curves of a small overfitting run.
Format: docs/lessons.md.
]]
local say = lesson.say

-- The checks' own measure: the activations' norm at layer 50 over layer 1 of a width-256 ReLU
-- MLP with W ~ N(0, c/n), as a geometric mean over three draws of the weights (drawn once, with
-- unit variance, and scaled by sqrt(c/n) at each call: every answer meets the same network).
local draws
local function growth(c)
  if not draws then
    draws = {}
    for d = 1, 3 do
      draws[d] = { x = lm.randn(16, 256, { dtype = 'float64' }), W = {} }
      for l = 1, 50 do draws[d].W[l] = lm.randn(256, 256, { dtype = 'float64' }) end
    end
  end
  local logs = 0
  for _, d in ipairs(draws) do
    local x, first = d.x, nil
    for l = 1, 50 do
      x = x:matmul(d.W[l] * math.sqrt(c / 256)):relu()
      if l == 1 then first = x:norm():item() end
    end
    logs = logs + math.log(math.max(x:norm():item(), 1e-300) / first)
  end
  return math.exp(logs / #draws)
end

-- The checks' own layer norm: Lua loops in double precision over the last dim.
local function layer_norm_ref(z, eps)
  local d = z:size(z:dim())
  local flat = z:double():contiguous():reshape(-1):tolist()
  local out = {}
  for r = 0, #flat // d - 1 do
    local mean, var = 0, 0
    for k = 1, d do mean = mean + flat[r * d + k] end
    mean = mean / d
    for k = 1, d do var = var + (flat[r * d + k] - mean) ^ 2 end
    var = var / d
    for k = 1, d do out[r * d + k] = (flat[r * d + k] - mean) / math.sqrt(var + eps) end
  end
  return lm.tensor(out, { dtype = 'float64' }):reshape(z:shape())
end

return {
  title = say('Normalization and regularization', '归一化与正则化'),
  course = 'dlsys',
  lecture = say('CMU Deep Learning Systems, Lecture 9: normalization and regularization',
    'CMU 深度学习系统 第 9 讲：归一化与正则化'),
  summary = say([[How the scale of the initial weights decides whether a deep network trains, the
layers that fix the activations' scale (LayerNorm, BatchNorm), and the regularizers (weight decay,
dropout), with how all of them interact with the optimizer.]],
    [[初始权重的尺度如何决定一个深层网络能否训练，修正激活尺度的层（LayerNorm、BatchNorm），
以及正则化方法（权重衰减、dropout），还有它们与优化器之间的相互作用。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Initialization: W ~ N(0, c/n)', '初始化：W ~ N(0, c/n)'),
      text = say([[
Suppose we initialize a ReLU network with W_i ~ N(0, c/n), n the layer's input width. Each
output of a layer sums n products, so its variance is n * (c/n) * E[x^2] = c E[x^2]; the ReLU
then keeps half of that square on average. Layer after layer the squared norm of the
activations is multiplied by about c/2:

  c < 2: the activations shrink geometrically
  c = 2: they keep their scale (Kaiming He's initialization)
  c > 2: they grow geometrically

Below, a 50-layer ReLU MLP of width 100 and a batch of 64 random inputs, for c = 1, 2 and 3:
the norm of the activations after each layer (per example). In the picture the x axis is the
layer and the y axis is on a log scale (Tab switches to linear). The gradients behave the same
way on the way back, which is what decides training.]],
        [[
假设我们用 W_i ~ N(0, c/n) 来初始化一个 ReLU 网络，n 是该层输入的宽度。每个输出都是 n 个乘积
之和，所以它的方差是 n * (c/n) * E[x^2] = c E[x^2]；ReLU 平均又只保留这个平方的一半。于是每过
一层，激活值范数的平方大约乘上 c/2：

  c < 2：激活值按几何级数缩小
  c = 2：激活值保持原来的尺度（Kaiming He 初始化）
  c > 2：激活值按几何级数增长

下面是一个 50 层、宽度 100 的 ReLU MLP，输入是 64 个随机样本，分别取 c = 1、2、3：看每一层之后
激活值的范数（按样本平均）。画面里横轴是层数，纵轴是对数刻度（按 Tab 切换成线性刻度）。梯度在
反向传播时也是同样的规律，而这正是决定能否训练的关键。]]),
      code = [[
-- the norm of the activations (per example) after each layer of a depth x width ReLU MLP
function activation_norms(c, depth, width)
  local x = lm.randn(64, width)
  local norms = {}
  for l = 1, depth do
    x = x:matmul(lm.randn(width, width) * math.sqrt(c / width)):relu()
    norms[l] = x:norm():item() / math.sqrt(x:size(1))
  end
  return norms
end
lm.manual_seed(0)
viz.clear()
for _, c in ipairs({1, 2, 3}) do
  local norms = activation_norms(c, 50, 100)
  for l, v in ipairs(norms) do viz.plot('activation norm/c=' .. c, l, v) end
  print(string.format('c = %d: layer 1 %.3g, layer 10 %.3g, layer 50 %.3g', c, norms[1], norms[10],
    norms[50]))
end
]],
      scene = { 'curves', scale = 'log' },
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Pick the c that keeps activations stable', '选出让激活值保持稳定的 c'),
      text = say([[
`growth(c)` runs the same experiment at width 256 and returns how many times larger the
activations are at layer 50 than at layer 1. A stable network keeps that near 1; at 50 layers
even a small error in c compounds: the norm changes by about (c/2)^25. Try a few values.]],
        [[
`growth(c)` 在宽度 256 上做同样的实验，返回第 50 层的激活值是第 1 层的多少倍。稳定的网络让这个
倍数接近 1；而在 50 层里，c 哪怕差一点也会累积起来：范数大约变为 (c/2)^25 倍。试几个值看看。]]),
      code = [[
function growth(c)
  local norms = activation_norms(c, 50, 256)
  return norms[50] / norms[1]
end
for _, c in ipairs({1.5, 2.5}) do
  print(string.format('c = %.1f: layer 50 / layer 1 = %.3g', c, growth(c)))
end
c_stable = nil   -- your choice
]],
      exercise = {
        prompt = say([[
Set `c_stable` to the c for which the activations of a deep ReLU MLP with W ~ N(0, c/n) neither
shrink nor grow with depth (or give it with :check).]],
          [[
把 `c_stable` 设为这样一个 c：用 W ~ N(0, c/n) 初始化的深层 ReLU MLP，激活值随深度既不缩小
也不增长（也可以用 :check 直接给出）。]]),
        hints = {
          say('Each layer multiplies the squared norm by c/2 on average.', '每一层平均把范数的平方乘上 c/2。'),
          say('growth(c) near 1 is the goal: try growth(1.8), growth(2), growth(2.2).',
            '目标是 growth(c) 接近 1：试试 growth(1.8)、growth(2)、growth(2.2)。'),
        },
        check = function(env, answer)
          local given = answer ~= nil and answer or env.c_stable
          local c = lesson.number(given)
          if given == nil then
            return false, say('c_stable is not set: give a number, e.g. c_stable = 1.7', 'c_stable 还没有设：给一个数，例如 c_stable = 1.7')
          elseif c == nil then
            return false, say(string.format('c_stable is %s, not a number', tostring(given)),
              string.format('c_stable 是 %s，不是一个数', tostring(given)))
          end
          if not (c > 0 and c < 100) then
            local shown = c == c and string.format('%g', c) or 'NaN'
            return false, say(string.format('c = %s: the variance c/n must be positive (and not huge)', shown),
              string.format('c = %s：方差 c/n 必须是正数（而且不能太大）', shown))
          end
          local g = growth(c)
          if g < 0.5 then
            return false, say(string.format('with c = %g the activations at layer 50 are %.3g times those at layer 1: they shrink, each layer multiplies their square by c/2 < 1',
                c, g),
              string.format('c = %g 时，第 50 层的激活值只有第 1 层的 %.3g 倍：在缩小，每一层把它的平方乘上 c/2 < 1', c, g))
          elseif g > 2 then
            return false, say(string.format('with c = %g the activations at layer 50 are %.3g times those at layer 1: they grow, each layer multiplies their square by c/2 > 1',
                c, g),
              string.format('c = %g 时，第 50 层的激活值是第 1 层的 %.3g 倍：在增长，每一层把它的平方乘上 c/2 > 1', c, g))
          end
          return true, say(string.format('right: c = %g keeps the activations stable (layer 50 / layer 1 = %.2f); c = 2 is Kaiming He\'s initialization for ReLU',
              c, g),
            string.format('对：c = %g 让激活值保持稳定（第 50 层 / 第 1 层 = %.2f）；c = 2 正是针对 ReLU 的 Kaiming He 初始化', c, g))
        end,
        solution = [[c_stable = 2]],
        wrong = { [[c_stable = 1]], [[c_stable = 3]], [[c_stable = 2.3]] },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('The scale set at initialization persists through training', '初始化定下的尺度贯穿整个训练'),
      text = say([[
The lecture's point goes further than "bad c, no training". Below, a 20-layer ReLU MLP of
width 64 trains for 40 SGD steps (batches of 50 of 1,000 Fashion-MNIST images) with c = 1, 2
and 3. With c = 1
the gradients vanish and the loss stays at log(10) = 2.30; with c = 3 the activations explode:
the loss starts near 40, overflows and becomes NaN (its own chart in the picture, the vermillion
ticks mark the gaps); c = 2 trains. And even
where training works, the weights barely move: the printed relative change ||W - W0|| / ||W0||
stays a few percent, so the scale chosen at initialization is still the scale of the trained
network. The full data set takes longer but tells the same story.]],
        [[
这一讲的要点不只是“c 不对就训练不起来”。下面一个 20 层、宽度 64 的 ReLU MLP 用 SGD 训练
40 步（每批 50 张，取自 1,000 张 Fashion-MNIST 图像），c 分别取 1、2、3。c = 1 时梯度消失，
损失停在 log(10) = 2.30；c = 3 时激活值爆炸：损失从 40 左右开始，随即溢出变成 NaN（画面里它
单独一张图，朱红色的刻度标出了这些断点）；c = 2 能训练。而且即使训练成功，权重也几乎没动：
打印出的相对变化 ||W - W0|| / ||W0|| 只有百分之几，所以初始化时选定的尺度，仍然是训练好的网络
的尺度。换成完整数据集要训练更久，但结论一样。]]),
      code = [[
-- a depth x width ReLU MLP on 784 inputs, every weight W ~ N(0, c/n); norm: nil, 'batch', 'layer'
function deep_mlp(c, depth, width, norm)
  local layers, n_in = {}, 784
  local function linear(n, m)
    local lin = nn.Linear(n, m, {bias = false})
    lm.no_grad(function() lin.weight:normal_(0, math.sqrt(c / n)) end)
    return lin
  end
  for _ = 1, depth do
    layers[#layers + 1] = linear(n_in, width)
    if norm == 'batch' then layers[#layers + 1] = nn.BatchNorm1d(width) end
    if norm == 'layer' then layers[#layers + 1] = nn.LayerNorm(width) end
    layers[#layers + 1] = nn.ReLU()
    n_in = width
  end
  layers[#layers + 1] = linear(width, 10)
  return nn.Sequential(table.unpack(layers))
end
local fashion = data.FashionMNIST{split = 'train', limit = 1000}
fashion_x, fashion_y = fashion.tensors[1]:reshape(1000, 784), fashion.tensors[2]
-- steps of SGD on batches of 50, the loss plotted as `series` ('chart/label')
function fit(model, steps, series, lr)
  local opt = optim.SGD(model:parameters(), {lr = lr or 0.01})
  local loss
  for s = 1, steps do
    local i = ((s - 1) % 20) * 50 + 1
    loss = F.cross_entropy(model(fashion_x:narrow(1, i, 50)), fashion_y:narrow(1, i, 50))
    opt:zero_grad()
    loss:backward()
    opt:step()
    viz.plot(series, s, loss)
  end
  return loss:item()
end
viz.clear()
for _, c in ipairs({1, 2, 3}) do
  lm.manual_seed(3)
  local model = deep_mlp(c, 20, 64)
  local w0 = model[1].weight:detach():clone()
  local last = fit(model, 40, (c == 3 and 'loss, c = 3/c=' or 'loss/c=') .. c)
  local moved = ((model[1].weight:detach() - w0):norm() / w0:norm()):item()
  print(string.format('c = %d: loss after 40 steps %.3f, first layer moved by %s', c, last,
    moved == moved and string.format('%.1f%%', 100 * moved) or 'NaN'))
end
]],
      scene = 'curves',
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Looking inside: the layers\' histograms', '看看里面：各层的直方图'),
      text = say([[
The model scene shows a network's layers and, while `viz.watch(model)` records them, each
layer's activations (blue) and its weights' gradients (vermillion) as histograms, with their
range and std above. The code below draws a 6-layer version of the MLP with c = 1, runs one
batch forward and backward and prints the std of the activations after each ReLU. Look at the
ranges shrinking from layer to layer. Then set c_hist = 2 and type :run, and c_hist = 3: the
window updates each time (in a training loop it updates live, at most 10 times a second; run
`lumen examples/mlp_fashion.lua --viz=model` for that).]],
        [[
模型画面显示网络的各层；当 `viz.watch(model)` 在记录时，还会把每层的激活值（蓝色）和权重的
梯度（朱红色）画成直方图，上方标出范围和标准差。下面的代码画出这个 MLP 的 6 层版本（c = 1），
让一个批次做一次前向和反向，并打印每个 ReLU 之后激活值的标准差。注意范围一层比一层小。然后把
c_hist 设为 2 并输入 :run，再试 c_hist = 3：窗口每次都会更新（在训练循环里它会实时更新，每秒
最多 10 次；想看这种效果就运行 `lumen examples/mlp_fashion.lua --viz=model`）。]]),
      code = [[
c_hist = c_hist or 1
lm.manual_seed(4)
hist_model = deep_mlp(c_hist, 6, 100)
local watch = viz.watch(hist_model, {always = true})     -- shows the model scene and records
local xb, yb = fashion_x:narrow(1, 1, 100), fashion_y:narrow(1, 1, 100)
F.cross_entropy(hist_model(xb), yb):backward()
watch:gradients()
watch:close()
local h, stds = xb, {}
for i = 1, #hist_model - 1 do
  h = hist_model[i](h)
  if i % 2 == 0 then stds[#stds + 1] = string.format('%.3g', h:std():item()) end
end
print('c = ' .. c_hist .. ', std after each ReLU: ' .. table.concat(stds, ' '))
]],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Layer normalization', '层归一化'),
      text = say([[
Initialization matters so much, and the scale drifts during training and is no longer
"consistent" across layers. But a layer in a deep network can be any computation. So add layers
that fix the normalization of the activations to whatever we want. The first idea, layer
normalization, standardizes (mean zero, variance one) the activations of each example at each
layer:

  zhat_{i+1} = sigma_i(W_i^T z_i + b_i)
  z_{i+1}    = (zhat_{i+1} - E[zhat_{i+1}]) / sqrt(Var[zhat_{i+1}] + eps)

E and Var are over the features of one example (the last dim), Var the biased variance (divide
by n), eps (1e-5 by default) keeps a constant row finite. F.layer_norm(z, {n}) computes it
(nn.LayerNorm adds a learned scale and shift). Write it yourself.]],
        [[
初始化如此重要，而训练过程中激活值的尺度还会漂移，各层之间不再“一致”。但别忘了，深度网络里
的一层可以是任何计算。那就加一些层，把激活值的归一化修正成我们想要的样子！第一个想法叫层归一化
（Layer normalization）：在每一层，把每个样本的激活值标准化（均值为零、方差为一）：

  zhat_{i+1} = sigma_i(W_i^T z_i + b_i)
  z_{i+1}    = (zhat_{i+1} - E[zhat_{i+1}]) / sqrt(Var[zhat_{i+1}] + eps)

E 和 Var 是在一个样本的各个特征上（最后一维）求的，Var 是有偏方差（除以 n），eps（默认 1e-5）
让常数行也能得到有限值。F.layer_norm(z, {n}) 算的就是它（nn.LayerNorm 还多了可学习的缩放和
平移）。请你自己写一个。]]),
      code = [[
function layer_norm(z, eps)
  local mean = z:mean(-1, true)
  return z - mean                  -- TODO: divide by sqrt(variance + eps)
end
local z = lm.randn(4, 10) * 3 + 5
local want = F.layer_norm(z, {10})
print(string.format('max |layer_norm(z) - F.layer_norm(z)| = %.3g',
  (layer_norm(z, 1e-5) - want):abs():max():item()))
print(string.format('F.layer_norm: row means %.2g, row stds (biased) %.4f',
  want:mean(2):abs():max():item(),
  want:var(2, {unbiased = false}):sqrt():mean():item()))
]],
      exercise = {
        prompt = say([[
Complete `layer_norm(z, eps)`: z of any shape, normalized over its last dim, (z - mean) /
sqrt(var + eps) with the biased variance, no learned scale or shift.]],
          [[
把 `layer_norm(z, eps)` 补完整：z 可以是任意形状，在最后一维上归一化，即
(z - mean) / sqrt(var + eps)，用有偏方差，不带可学习的缩放和平移。]]),
        hints = {
          say('local var = ((z - mean) ^ 2):mean(-1, true) is the biased variance, kept as a dim of size 1.',
            'local var = ((z - mean) ^ 2):mean(-1, true) 是有偏方差，并保留一个大小为 1 的维度。'),
          say('z:var(-1) divides by n - 1 (unbiased): not what layer norm uses.',
            'z:var(-1) 除的是 n - 1（无偏）：层归一化用的不是它。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'layer_norm')
          if not ok then return false, fn end
          local cases = {
            { lm.randn(4, 10) * 3 + 5, 1e-5, '[4, 10]' },
            { lm.randn(3, 4, 9), 1e-5, '[3, 4, 9]' },
            { lm.randn(1, 7), 0.1, '[1, 7] with eps = 0.1' },
            { lm.randn(5, 1), 1e-5, '[5, 1] (one feature: every row is constant)' },
            { lm.randn(10, 6):t(), 1e-5, 'a transposed [6, 10] view' },
            { lm.randn(2, 33) * 0.01 + 100, 1e-5, '[2, 33] around 100' },
          }
          for _, c in ipairs(cases) do
            local z, eps, what = c[1], c[2], c[3]
            local rok, out = lesson.try(fn, z, eps)
            if not rok then return false, out end
            if not lm.is_tensor(out) then return false, say('layer_norm should return a tensor', 'layer_norm 应该返回一个张量') end
            local want = layer_norm_ref(z, eps)
            if table.concat(out:shape(), ',') ~= table.concat(z:shape(), ',') then
              return false, say(string.format('on %s layer_norm returned shape [%s]: it should keep z\'s shape', what,
                table.concat(out:shape(), ', ')), string.format('在 %s 上 layer_norm 返回的形状是 [%s]：应该保持 z 的形状', what,
                table.concat(out:shape(), ', ')))
            end
            -- the same function in float64: right there and wrong in float32 means a formula that
            -- loses digits (E[z^2] - E[z]^2 on values near 100: two numbers near 10000 whose
            -- difference is 0.0001), not a wrong formula
            local function exact()
              local dok, dout = lesson.try(fn, z:double(), eps)
              return dok and lm.is_tensor(dout) and lesson.compare(dout:double(), want, { tol = 2e-3 })
            end
            local cok, msg = lesson.compare(out:double(), want, { tol = 2e-3,
              what = say('your layer_norm on ' .. what, '你的 layer_norm 在 ' .. what .. ' 上的结果'),
              why = function()
                if exact() then
                  return say('your formula is right, but float32 loses it: in float64 it gives the right values. Computing the variance as mean(z^2) - mean(z)^2 subtracts two large, nearly equal numbers (cancellation); subtract the mean first: ((z - mean)^2):mean(-1, true)',
                    '你的公式本身是对的，但在 float32 下丢了精度：换成 float64 就能得到正确的值。用 mean(z^2) - mean(z)^2 算方差，是两个很大又几乎相等的数相减（相消，cancellation）；先减去均值：((z - mean)^2):mean(-1, true)')
                end
                return say('mean and variance over the last dim of each row, the variance divided by n (not n - 1), eps inside the square root',
                  '均值和方差都在每行的最后一维上求，方差除以 n（不是 n - 1），eps 在平方根里面')
              end })
            if not cok then return false, msg end
          end
          return true, say('right: equal to the reference on every shape, including one feature and a transposed view',
            '对：在每种形状上都和参考结果一致，包括只有一个特征和转置视图的情况')
        end,
        solution = [[
function layer_norm(z, eps)
  local mean = z:mean(-1, true)
  local var = ((z - mean) ^ 2):mean(-1, true)
  return (z - mean) / (var + eps):sqrt()
end
]],
        wrong = {
          [[
function layer_norm(z, eps)
  local mean = z:mean(-1, true)
  return (z - mean) / (z:var(-1, true) + eps):sqrt()
end
]],
          [[
function layer_norm(z, eps)
  local mean = z:mean(-1, true)
  local var = ((z - mean) ^ 2):mean(-1, true)
  return (z - mean) / (var:sqrt() + eps)
end
]],
          [[
function layer_norm(z, eps)
  local mean = z:mean(1, true)
  local var = ((z - mean) ^ 2):mean(1, true)
  return (z - mean) / (var + eps):sqrt()
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Batch normalization', '批归一化'),
      text = say([[
Layer norm forces every example's activations to mean 0 and variance 1, which can hide
differences between examples that the classifier needs. Batch normalization normalizes each
feature over the examples of the minibatch instead: the same formula along the other axis.
That makes one example's prediction depend on the rest of its batch, so at test time the
statistics are replaced by running averages collected during training:

  mu_run  = (1 - momentum) mu_run  + momentum mean_batch
  var_run = (1 - momentum) var_run + momentum var_batch * n / (n - 1)

(PyTorch's convention, momentum 0.1: the running variance takes the unbiased batch variance,
the normalization the biased one). Below, both modes by hand against F.batch_norm.]],
        [[
层归一化强迫每个样本的激活值都变成均值 0、方差 1，这可能抹掉分类器需要的样本之间的差别。批归一化
（Batch normalization）换个方向：对每个特征，在小批量的各个样本上做归一化，还是同一个公式，只是
沿另一个轴。这样一来，一个样本的预测会依赖于同一批里的其他样本，所以测试时要把批统计量换成训练中
累积的滑动平均：

  mu_run  = (1 - momentum) mu_run  + momentum mean_batch
  var_run = (1 - momentum) var_run + momentum var_batch * n / (n - 1)

（这是 PyTorch 的约定，momentum 为 0.1：滑动方差用的是批的无偏方差，归一化本身用的是有偏方差。）
下面手写两种模式，并与 F.batch_norm 对比。]]),
      code = [[
function batch_norm(z, running_mean, running_var, training, momentum, eps)
  if not training then return (z - running_mean) / (running_var + eps):sqrt() end
  local n = z:size(1)
  local mean = z:mean(1, true)
  local var = ((z - mean) ^ 2):mean(1, true)
  running_mean:mul_(1 - momentum):add_(mean:reshape(-1) * momentum)
  running_var:mul_(1 - momentum):add_(var:reshape(-1) * (momentum * n / (n - 1)))
  return (z - mean) / (var + eps):sqrt()
end
local z = lm.randn(16, 5) * 2 + 3
local rm, rv, rm_F, rv_F = lm.zeros(5), lm.ones(5), lm.zeros(5), lm.ones(5)
local mine = batch_norm(z, rm, rv, true, 0.1, 1e-5)
local theirs = F.batch_norm(z, rm_F, rv_F, nil, nil, true, 0.1, 1e-5)
print(string.format('training: max |diff| %.2g, running mean %.2g, running var %.2g',
  (mine - theirs):abs():max():item(), (rm - rm_F):abs():max():item(),
  (rv - rv_F):abs():max():item()))
local eval_mine = batch_norm(z, rm, rv, false, 0.1, 1e-5)
local eval_F = F.batch_norm(z, rm_F, rv_F, nil, nil, false, 0.1, 1e-5)
print(string.format('eval:     max |diff| %.2g (normalized with the running statistics)',
  (eval_mine - eval_F):abs():max():item()))
]],
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Normalization rescues a bad initialization', '归一化挽救糟糕的初始化'),
      text = say([[
Back to the 20-layer MLP with c = 1, which did not train at all. With a BatchNorm1d or a
LayerNorm after every linear layer, the activations are rescaled at each layer whatever the
weights' scale: the printed std of the last hidden layer at initialization is 0.58 (a ReLU
of a unit Gaussian) instead of 1e-4. With BatchNorm the same net, same c, same 40 SGD steps
trains (the learning rate is larger, 0.1, which normalization also makes safe). LayerNorm fixes
the scale too, but it trains much more slowly here: it makes every example's activations alike,
which is the weakness the previous step pointed out. The curves compare the three.]],
        [[
回到那个 c = 1、完全训练不动的 20 层 MLP。在每个线性层之后加上 BatchNorm1d 或 LayerNorm，
不管权重是什么尺度，激活值在每一层都会被重新缩放：打印出的初始化时最后一个隐藏层的标准差
约为 0.58（单位高斯经过 ReLU 后的标准差），而不是 1e-4。有了 BatchNorm，同样的网络、同样的
c、同样 40 步 SGD 就能训练起来（学习率调大到 0.1，归一化也让这样做变得安全）。LayerNorm 同样
修正了尺度，但在这里训练得慢得多：它让每个样本的激活值都变得相似，这正是上一步指出的弱点。
曲线比较这三种情况。]]),
      code = [[
viz.clear()
for _, norm in ipairs({'none', 'batch', 'layer'}) do
  lm.manual_seed(3)
  local model = deep_mlp(1, 20, 64, norm ~= 'none' and norm or nil)
  local hidden = lm.no_grad(function()
    local h = fashion_x:narrow(1, 1, 50)
    for i = 1, #model - 1 do h = model[i](h) end
    return h
  end)
  local last = fit(model, 40, 'loss/c=1, ' .. norm, 0.1)
  print(string.format('c = 1, norm %-5s: last hidden std at init %.3g, loss after 40 steps %.3f',
    norm, hidden:std():item(), last))
end
]],
      scene = 'curves',
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Weight decay, and how it meets the optimizer', '权重衰减，以及它与优化器的相遇'),
      text = say([[
Regularization limits the complexity of the function a network can represent, so that it
generalizes. The most common form is L2 regularization, minimizing loss + lambda/2 ||W||^2. For
plain SGD its gradient step is

  W = W - lr (grad + lambda W) = (1 - lr lambda) W - lr grad

the weights shrink by a constant factor each step: "weight decay", the weight_decay option.
Normalization layers change what it means (after a BatchNorm the output no longer depends on
the scale of the W before it, so shrinking W changes the effective step size, not the
function), and so does the optimizer: Adam divides the gradient, L2 term included, by a running
RMS, so a weight with large gradients is hardly decayed and a weight with none is pulled to 0
at full speed. AdamW decouples the decay (W = (1 - lr lambda) W after the Adam step), the same
factor for every weight. Below: SGD's weight_decay against L2 in the loss, then Adam against
AdamW on a weight with large gradients and one with none.]],
        [[
正则化限制网络能表示的函数的复杂度，让它能够泛化。最常见的是 L2 正则化，即最小化
loss + lambda/2 ||W||^2。对普通 SGD，它的梯度步是

  W = W - lr (grad + lambda W) = (1 - lr lambda) W - lr grad

每一步权重都按一个固定的比例缩小：这就是“权重衰减”，也就是 weight_decay 选项。归一化层会改变
它的含义（经过 BatchNorm 之后，输出不再依赖它前面那个 W 的尺度，所以缩小 W 改变的是等效步长，
而不是函数本身），优化器也会：Adam 把梯度（连同 L2 项）除以一个滑动的均方根，所以梯度大的
权重几乎不衰减，而没有梯度的权重会被全速拉向 0。AdamW 把衰减解耦出来（在 Adam 的一步之后做
W = (1 - lr lambda) W），对每个权重都是同一个比例。下面先比较 SGD 的 weight_decay 和损失里的
L2 项，再在一个梯度很大的权重和一个没有梯度的权重上比较 Adam 和 AdamW。]]),
      code = [[
local lambda, lr = 0.1, 0.5
local g = lm.tensor({0.5, 0.1, -0.3})
local w1 = lm.tensor({1.0, -2.0, 3.0}, {requires_grad = true})
local w2 = w1:detach():clone():requires_grad_()
w1.grad = g:clone()
optim.SGD({w1}, {lr = lr, weight_decay = lambda}):step()          -- weight decay
;((w2 * g):sum() + (w2 * w2):sum() * (lambda / 2)):backward()      -- L2 in the loss
optim.SGD({w2}, {lr = lr}):step()
print(string.format('SGD: weight_decay vs L2 in the loss, max |diff| %.2g',
  (w1 - w2):abs():max():item()))
for _, name in ipairs({'Adam', 'AdamW'}) do
  local w = lm.tensor({1.0, 1.0}, {requires_grad = true})
  local opt = optim[name]({w}, {lr = 0.01, weight_decay = 0.1})
  for s = 1, 100 do
    -- weight 1: large gradients (alternating in sign); weight 2: none
    w.grad = lm.tensor({s % 2 == 0 and 10.0 or -10.0, 0.0})
    opt:step()
  end
  print(string.format('%-5s after 100 steps: weight with large gradients %.3f, weight without %.3f',
    name, w[1]:item(), w[2]:item()))
end
]],
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Dropout, and regularizers against overfitting', 'Dropout，以及对抗过拟合的正则化'),
      text = say([[
Dropout randomly sets a fraction p of the activations to zero during training and scales the
rest by 1/(1 - p), so that their expected value is unchanged: zhat = z * mask / (1 - p). At
test time it does nothing (model:eval()). It can be seen as a stochastic approximation, like
SGD's minibatches: each step trains a random sub-network.

To see regularizers work we need a network that overfits: 200 training images, a 128-unit MLP,
Adam on the full 200 for 80 steps. The curves show train and test loss (500 test images) for
no regularization, dropout 0.5, and weight decay (Adam's L2, 0.01), the test loss every 4
steps. Without either the test
loss turns up while the training loss goes to 0: overfitting. For the real thing run
`lumen examples/mlp_fashion.lua --epochs 10 --viz` on all 60,000 images.]],
        [[
Dropout 在训练时随机把比例为 p 的激活值置零，并把其余的乘上 1/(1 - p)，使期望值不变：
zhat = z * mask / (1 - p)。测试时它什么也不做（model:eval()）。可以把它看成一种随机近似，就像
SGD 的小批量一样：每一步训练的是一个随机的子网络。

要看到正则化起作用，需要一个会过拟合的网络：200 张训练图像，一个 128 个单元的 MLP，用 Adam 在
这 200 张上全量训练 80 步。曲线给出三种情况下的训练损失和测试损失（500 张测试图像，每 4 步测
一次）：不加正则化、
dropout 0.5、权重衰减（Adam 的 L2，0.01）。两者都不加时，训练损失降到 0，测试损失却掉头向上：这就是
过拟合。想看真正的规模，就在全部 60,000 张图像上运行
`lumen examples/mlp_fashion.lua --epochs 10 --viz`。]]),
      code = [[
local d = F.dropout(lm.ones(10000), 0.5, true)
print(string.format('dropout(p = 0.5): %d of 10000 kept, mean %.3f (expected 1)',
  d:gt(0):sum():item(), d:mean():item()))
local train = data.FashionMNIST{split = 'train', limit = 200}
local test = data.FashionMNIST{split = 'test', limit = 500}
local x, y = train.tensors[1]:reshape(200, 784), train.tensors[2]
local tx, ty = test.tensors[1]:reshape(500, 784), test.tensors[2]
viz.clear()
for _, cfg in ipairs({{'plain', 0, 0}, {'dropout', 0.5, 0}, {'weight decay', 0, 0.01}}) do
  lm.manual_seed(2)
  local model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Dropout(cfg[2]),
    nn.Linear(128, 10))
  local opt = optim.Adam(model:parameters(), {lr = 3e-3, weight_decay = cfg[3]})
  local test_loss
  for s = 1, 80 do
    model:train()
    local loss = F.cross_entropy(model(x), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    viz.plot('train loss/' .. cfg[1], s, loss)
    if s % 4 == 0 then             -- the test loss every 4 steps
      model:eval()
      test_loss = lm.no_grad(function() return F.cross_entropy(model(tx), ty):item() end)
      viz.plot('test loss/' .. cfg[1], s, test_loss)
    end
  end
  print(string.format('%-12s test loss after 80 steps %.3f (CPU)', cfg[1], test_loss))
end
]],
      scene = 'curves',
    },
  },
}
