--[[
AI Computing Systems, chapter 3: neural network quantization, following the notes' taxonomy
(symmetry, uniformity, granularity, goal; mixed precision and SmoothQuant for large models). The
student writes symmetric and asymmetric quantization (checked against lm.quant.quantize on edge
cases: exact halves, an outlier, all-negative and all-zero inputs, rows of different ranges),
compares per-tensor, per-channel and per-group scales on a weight with an outlier channel, trains
a small MLP and CNN on Fashion-MNIST subsets and measures their accuracy with 8, 4, 3 and 2-bit
weights (the student's ptq_accuracy, checked to measure and restore), recovers 2-bit weights by
quantization-aware training, times float32 against int8 layers (CPU measured; no check depends on
a time), trains with bfloat16 autocast and float16 with a loss scaler, and moves activation
outliers into the weights with SmoothQuant. Full size: examples/quant_lab.lua.
Format: docs/lessons.md.
]]
local say = lesson.say
local EPS = 1.1920928955078125e-07 -- float32's epsilon: lm.quant's scale of an all-zero range

-- Deterministic values in [-scale, scale] (an LCG: the checks do not touch lm's random state).
local function values(n, seed, scale) return lesson.rand(seed, scale or 1, n):tolist() end

local function round_even(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end

-- The inputs both quantizer checks use: {what =, x =, bits =, zero = all-zero}.
local function quant_cases(asym)
  local outlier = values(40, 2)
  outlier[7] = 25
  local rows = lm.tensor(values(24, 5)):reshape(3, 8) * lm.tensor({ { 1 }, { 10 }, { 0.1 } })
  local c = {
    { what = say('a 5x7 matrix', '一个 5x7 的矩阵'), x = lm.tensor(values(35, 1, 2)):reshape(5, 7), bits = 8 },
    { what = say('40 values with one outlier (25)', '含一个离群值（25）的 40 个数'), x = lm.tensor(outlier), bits = 4 },
    { what = say('all-negative values', '全是负数的一组值'), x = -(lm.tensor(values(13, 3)):abs() + 0.1), bits = 3 },
    { what = say('a 3x8 matrix whose rows have ranges 1, 10 and 0.1', '一个 3x8 的矩阵，三行的范围分别是 1、10 和 0.1'),
      x = rows, bits = 4 },
    { what = say('17 values at 2 bits', '2 位下的 17 个数'), x = lm.tensor(values(17, 4)), bits = 2 },
    { what = say('an all-zero 2x3 tensor', '一个全零的 2x3 张量'), x = lm.zeros(2, 3), bits = 8, zero = true },
  }
  if asym then
    table.insert(c, 2, { what = say('values at exact halves of a step (s = 1, z = 0)', '恰好落在半个步长上的值（s = 1，z = 0）'),
      x = lm.tensor({ 0, 0.5, 1.5, 2.5, 3.5, 255 }), bits = 8 })
    table.insert(c, 3, { what = say('{-1.5, 253.5, 0, 100, -1} (s = 1, z = 2)', '{-1.5, 253.5, 0, 100, -1}（s = 1，z = 2）'),
      x = lm.tensor({ -1.5, 253.5, 0, 100, -1 }), bits = 8 })
    table.insert(c, 4, { what = say('all-positive values', '全是正数的一组值'), x = lm.tensor(values(11, 6)):abs() + 0.5, bits = 4 })
  else
    table.insert(c, 2, { what = say('values at exact halves of a step (s = 1)', '恰好落在半个步长上的值（s = 1）'),
      x = lm.tensor({ 127, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5 }), bits = 8 })
  end
  return c
end

-- What a wrong quantizer's codes would be, to name the mistake: {name = fn(v, s, z, qmin, qmax)}.
local CODE_MISTAKES = {
  { say('rounds down (floor) instead of to the nearest', '向下取整（floor）了，应该四舍五入到最近的整数'),
    function(v, s, z) return math.floor(v / s) + z end },
  { say('rounds halves up (floor(v + 0.5)); x:round() rounds half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2',
      '把 .5 一律进位了（floor(v + 0.5)）；x:round() 是四舍六入五成双：0.5 -> 0，1.5 -> 2，2.5 -> 2'),
    function(v, s, z) return math.floor(v / s + 0.5) + z end },
  { say('truncates toward zero instead of rounding', '向零截断了，应该四舍五入'),
    function(v, s, z) local r = v / s; return (r >= 0 and math.floor(r) or math.ceil(r)) + z end },
}

local function fmt(v) return lesson.show(v) end

-- The check of quantize_sym (asym = false) or quantize_asym (asym = true).
local function check_quantizer(env, asym)
  local name = asym and 'quantize_asym' or 'quantize_sym'
  local ok, fn = lesson.need(env, name)
  if not ok then return false, fn end
  for _, c in ipairs(quant_cases(asym)) do
    local x, bits = c.x, c.bits
    local call = string.format('%s(x, %d)', name, bits)
    local on_en, on_zh = call .. ' on ' .. c.what.en, call .. ' 在' .. c.what.zh .. '上'
    local rok, codes, scale, zp = lesson.try(fn, x:clone(), bits)
    if not rok then return false, codes end
    local want = lm.quant.quantize(x, { bits = bits, symmetric = not asym })
    local ws, wz = want.scale:item(), math.tointeger(want.zero_point:item())
    local wq = want.q:double():reshape(-1):tolist()
    local qmin, qmax = want.symmetric and -(2 ^ (bits - 1) - 1) or 0, want.symmetric and 2 ^ (bits - 1) - 1 or 2 ^ bits - 1
    if not lm.is_tensor(codes) or codes:numel() ~= x:numel() then
      return false, say(string.format('%s: the codes should be a tensor of %d values, one per element of x; got %s',
          on_en, x:numel(), lm.is_tensor(codes) and (codes:numel() .. ' values') or type(codes)),
        string.format('%s：编码应该是一个有 %d 个值的张量，x 的每个元素一个；得到的是%s', on_zh, x:numel(),
          lm.is_tensor(codes) and (codes:numel() .. ' 个值') or type(codes)))
    end
    if lm.is_tensor(scale) and scale:numel() > 1 then
      return false, say(string.format('%s: the scale has %d values; per tensor means one scale for the whole tensor (max over all its elements, not per row)',
          on_en, scale:numel()),
        string.format('%s：scale 有 %d 个值；按张量量化（分层量化）的意思是整个张量只有一个 scale（在所有元素上取最大，而不是每行一个）',
          on_zh, scale:numel()))
    end
    local s = lesson.number(scale)
    if s == nil then
      return false, say(string.format('%s: return the scale as the second value (a number); got %s', on_en, type(scale)),
        string.format('%s：第二个返回值应该是 scale（一个数）；得到的是 %s', on_zh, type(scale)))
    end
    local got = codes:double():reshape(-1):tolist()
    local nan = false
    for _, v in ipairs(got) do if v ~= v then nan = true end end
    if nan or s ~= s or s <= 0 or s == math.huge then
      if c.zero then
        return false, say(string.format('%s gives the scale %s and %s codes: with max|x| = 0 the scale is 0 and x / s divides by it. lm.quant takes s = float32\'s epsilon (%g) for a zero range: math.max(s, %g)',
            on_en, fmt(s), nan and 'NaN' or 'these', EPS, EPS),
          string.format('%s得到的 scale 是 %s，编码%s：max|x| = 0 时 scale 为 0，x / s 就除以了 0。lm.quant 对零范围取 s = float32 的 epsilon（%g）：math.max(s, %g)',
            on_zh, fmt(s), nan and '是 NaN' or '也不对', EPS, EPS))
      end
      return false, say(string.format('%s: the scale is %s and %s; a scale must be positive and finite', on_en, fmt(s),
          nan and 'some codes are NaN' or 'the codes are off'),
        string.format('%s：scale 是 %s，%s；scale 必须是有限的正数', on_zh, fmt(s), nan and '有的编码是 NaN' or '编码也不对'))
    end
    local xl = x:double():reshape(-1):tolist()
    local lo, hi, m = 0, 0, 0
    local xmin, xmax = math.huge, -math.huge
    for _, v in ipairs(xl) do
      lo, hi = math.min(lo, v), math.max(hi, v)
      xmin, xmax = math.min(xmin, v), math.max(xmax, v)
    end
    m = math.max(-lo, hi)
    local function near(a, b) return math.abs(a - b) <= 1e-6 * math.abs(b) + 1e-12 end
    if c.zero then
      -- any positive finite scale is right for zeros; the codes must give 0 back
      for i, v in ipairs(got) do
        if v ~= (asym and (lesson.number(zp) or 0) or 0) then
          return false, say(string.format('%s: code %d is %s; zeros must quantize to the zero point', on_en, i, fmt(v)),
            string.format('%s：第 %d 个编码是 %s；0 必须量化成零点', on_zh, i, fmt(v)))
        end
      end
    elseif not near(s, ws) then
      local why
      if asym then
        if near(s, (hi - lo) / 2 ^ bits) then
          why = say(string.format('you divided by 2^%d = %d: 2^b codes 0..2^b - 1 make 2^b - 1 = %d steps', bits, 2 ^ bits // 1, 2 ^ bits // 1 - 1),
            string.format('你除以了 2^%d = %d：2^b 个编码 0..2^b - 1 之间只有 2^b - 1 = %d 个步长', bits, 2 ^ bits // 1, 2 ^ bits // 1 - 1))
        elseif near(s, (xmax - xmin) / (2 ^ bits - 1)) then
          why = say('the range [min(x), max(x)] leaves 0 out: take [min(x, 0), max(x, 0)] so that 0 is exact (zero padding, ReLU zeros)',
            '范围 [min(x), max(x)] 没有包含 0：应取 [min(x, 0), max(x, 0)]，这样 0 能被精确表示（补零、ReLU 输出的 0）')
        end
      else
        if near(s, m / 2 ^ (bits - 1)) then
          why = say(string.format('you divided by 2^%d = %d: the symmetric range is the narrow one, -%d..%d, so s = max|x| / (2^(b-1) - 1)',
              bits - 1, 2 ^ (bits - 1) // 1, qmax // 1, qmax // 1),
            string.format('你除以了 2^%d = %d：对称量化用的是窄范围 -%d..%d，所以 s = max|x| / (2^(b-1) - 1)',
              bits - 1, 2 ^ (bits - 1) // 1, qmax // 1, qmax // 1))
        elseif near(s, m / (2 ^ bits - 1)) or near(s, m / 2 ^ bits) then
          why = say('that is the asymmetric count of levels: symmetric codes lose one bit to the sign, s = max|x| / (2^(b-1) - 1)',
            '这是非对称量化的级数：对称量化要用一位表示符号，s = max|x| / (2^(b-1) - 1)')
        elseif xmax ~= m and (near(math.abs(s), math.abs(xmax) / qmax) or (xmax <= 0 and near(s, EPS))) then
          why = say('that comes from max(x): the symmetric scale uses max|x|, the largest magnitude, which here is a negative value',
            '这是由 max(x) 算出来的：对称量化的 scale 用 max|x|，即绝对值最大的那个，这里它是负数')
        end
      end
      return false, say(string.format('%s: the scale is %s, expected %s%s', on_en, fmt(s), fmt(ws), why and ('; ' .. why.en) or ''),
        string.format('%s：scale 是 %s，应为 %s%s', on_zh, fmt(s), fmt(ws), why and ('；' .. why.zh) or ''))
    end
    if asym and not c.zero then
      local z = lesson.number(zp)
      if z == nil then
        return false, say(string.format('%s: return the zero point as the third value (a number); got %s', on_en, type(zp)),
          string.format('%s：第三个返回值应该是零点（一个数）；得到的是 %s', on_zh, type(zp)))
      end
      if z ~= wz then
        local why
        if z == -wz then
          why = say('its sign is flipped: z = round(-min / s), so that the code z stands for 0.0',
            '符号反了：z = round(-min / s)，这样编码 z 代表的才是 0.0')
        elseif z ~= math.floor(z) then
          why = say('it is not an integer: round it (round_half_even(-lo / s)) so that 0.0 has an exact code',
            '它不是整数：要取整（round_half_even(-lo / s)），这样 0.0 才有一个精确的编码')
        end
        return false, say(string.format('%s: the zero point is %s, expected %d%s', on_en, fmt(z), wz, why and ('; ' .. why.en) or ''),
          string.format('%s：零点是 %s，应为 %d%s', on_zh, fmt(z), wz, why and ('；' .. why.zh) or ''))
      end
    end
    if not c.zero then
      for i, v in ipairs(got) do
        if v ~= wq[i] then
          local why
          if v < qmin or v > qmax then
            why = say(string.format('it lies outside the codes %d..%d: clamp after rounding', qmin // 1, qmax // 1),
              string.format('它超出了编码范围 %d..%d：取整之后要截断（clamp）', qmin // 1, qmax // 1))
          else
            local all = true
            for _, mk in ipairs(CODE_MISTAKES) do
              all = true
              for k, xv in ipairs(xl) do
                local q = math.max(qmin, math.min(qmax, mk[2](xv, ws, wz)))
                if q ~= got[k] then all = false break end
              end
              if all then why = mk[1] break end
            end
          end
          return false, say(string.format('%s: element %d (x = %s) has the code %s, expected %s%s', on_en, i, fmt(xl[i]), fmt(v),
              fmt(wq[i]), why and (': ' .. why.en) or ''),
            string.format('%s：第 %d 个元素（x = %s）的编码是 %s，应为 %s%s', on_zh, i, fmt(xl[i]), fmt(v), fmt(wq[i]),
              why and ('：' .. why.zh) or ''))
        end
      end
    end
  end
  return true, say(string.format('right: the same codes%s as lm.quant.quantize on every input, halves, outliers and zeros included',
      asym and ', scale and zero point' or ' and scale'),
    string.format('对：在所有输入上（包括 .5、离群值和全零）编码、scale%s都与 lm.quant.quantize 相同', asym and '和零点' or ''))
end

-- The quant scene drawing the weight w (viz.show(w, {scene = 'quant', ...})); the tensor scene
-- where this build has no quant scene.
local function quant_scene(w, opts)
  for _, sc in ipairs(viz.scenes()) do
    if sc.name == 'quant' then
      opts.scene = 'quant'
      return w, opts
    end
  end
  return w
end

-- A fresh 784-256-10 MLP (the lesson's and examples/mlp_fashion.lua's), for the table's check.
local function fresh_mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
end

local function test_accuracy(model, set)
  return lm.no_grad(function() return model(set.data):argmax(2):eq(set.targets):float():mean():item() end)
end

local function check_ptq(env)
  local ok, fn = lesson.need(env, 'ptq_accuracy')
  if not ok then return false, fn end
  local trained, set = env.mlp_trained, env.test_set
  if type(trained) ~= 'table' or type(set) ~= 'table' then
    return false, say('mlp_trained or test_set is missing: run step 5 again (:step 5)', 'mlp_trained 或 test_set 不见了：重新运行第 5 步（:step 5）')
  end
  local model = fresh_mlp()
  model:load_state_dict(trained)
  model:eval()
  local float_acc = test_accuracy(model, set)
  for _, c in ipairs({ { 8, 'tensor' }, { 2, 'tensor' }, { 2, 'group' }, { 3, 'channel' } }) do
    local bits, g = c[1], c[2]
    local call = string.format("ptq_accuracy(mlp, %d, '%s')", bits, g)
    local rok, got = lesson.try(fn, model, bits, g)
    if not rok then return false, got end
    -- the model must be as it was
    local now = model:state_dict()
    for k, v in pairs(trained) do
      if not lm.equal(now[k], v) then
        return false, say(string.format('after %s the weights of the model are not the trained ones any more (%s differs): the function must leave the model as it found it. Note that state_dict\'s tensors share the parameters\' storage: clone them before quantizing, then load_state_dict the copy',
            call, k),
          string.format('调用 %s 之后模型的权重已经不是训练好的那些了（%s 变了）：函数必须让模型恢复原样。注意 state_dict 里的张量和参数共用存储：量化之前先 clone，再用 load_state_dict 装回副本',
            call, k))
      end
    end
    local v = lesson.number(got)
    local q = fresh_mlp()
    q:load_state_dict(trained)
    q:eval()
    lm.quant.quantize_weights(q, { bits = bits, granularity = g, group_size = 32, ragged = true })
    local want = test_accuracy(q, set)
    if v == nil or math.abs(v - want) > 1e-6 then
      local why
      if v and math.abs(v - float_acc) <= 1e-6 then
        why = say('that is the float32 accuracy: measure before restoring the weights', '这是 float32 的准确率：要在恢复权重之前测')
      end
      return false, say(string.format('%s returns %s; the accuracy with %d-bit weights %s is %s%s', call, v and fmt(v) or type(got),
          bits, ({ tensor = 'per tensor', channel = 'per channel', group = 'in groups of 32' })[g], fmt(want),
          why and ('; ' .. why.en) or ''),
        string.format('%s 返回 %s；权重为 %d 位、%s时准确率是 %s%s', call, v and fmt(v) or type(got), bits,
          ({ tensor = '按张量量化', channel = '按通道量化', group = '每 32 个一组量化' })[g], fmt(want),
          why and ('；' .. why.zh) or ''))
    end
  end
  return true, say('right: each accuracy measured on the quantized weights, and the model restored after each',
    '对：每个准确率都是在量化后的权重上测的，而且每次之后模型都恢复了原样')
end

return {
  title = say('Quantization: fewer bits for weights and activations', '神经网络量化：用更少的位表示权重和激活'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (neural network quantization)',
    '智能计算系统 第 3 章：深度学习（神经网络量化）'),
  summary = say([[The notes' taxonomy of quantization: symmetric and asymmetric quantization written
by hand, per-tensor, per-channel and per-group scales, 8 to 2-bit weights on a trained MLP and
CNN, quantization-aware training, int8 inference measured, mixed-precision training and
SmoothQuant.]],
    [[按讲义对量化方法的分类：亲手写出对称量化和非对称量化；分层、分通道和分组的 scale；在训练好
的 MLP 和 CNN 上试 8 位到 2 位的权重；量化感知训练；实测 int8 推理；混合精度训练与
SmoothQuant。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('A map of quantization', '神经网络量化方法分类'),
      text = say([[
Quantization stores and computes a network's numbers with fewer bits: a float32 weight becomes an
8-bit (or 4, 3, 2-bit) integer code q and a scale s shared by many codes, x ~ s (q - z). The
model gets 4 to 16 times smaller, and integer arithmetic can be faster and cheaper in energy.
The notes classify the methods four ways:

- symmetry: symmetric quantization (the range [-max|x|, max|x|], zero point z = 0) or
asymmetric quantization (the range [min, max], a zero point z so that 0.0 stays exact);
- uniformity: uniform quantization (equal steps: what int8 hardware computes with, and all of
this lesson) or non-uniform quantization (steps that follow the values' distribution:
logarithmic grids, k-means codebooks);
- granularity: per-layer quantization (one scale per tensor) or per-channel quantization (one
per output channel); large language models go finer still, one scale per group of 32 or 128;
- goal: inference acceleration, by post-training quantization (PTQ: quantize a trained model,
with a little calibration data at most) or quantization-aware training (QAT: train with the
rounding in the forward pass); or training acceleration (low-precision training).

For large models the notes add mixed-precision training (FP16 or BF16 in place of part of the
FP32 storage and compute, in pre-training and fine-tuning) and mixed-precision inference, with
SmoothQuant (ICML 2023). The code prints what the weights of this lesson's MLP (784-256-10) take
in each format, scales not counted.]],
        [[
量化就是用更少的位来存储和计算网络里的数：一个 float32 的权重变成一个 8 位（或 4、3、2 位）
的整数编码 q，加上许多编码共用的一个缩放因子 s，x ~ s (q - z)。模型因此小了 4 到 16 倍，整数
运算也可能更快、更省电。讲义从四个方面对神经网络量化方法分类：

- 量化对称性：对称量化（范围 [-max|x|, max|x|]，零点 z = 0）和非对称量化（范围 [min, max]，
用零点 z 保证 0.0 能被精确表示）；
- 量化均匀性：均匀量化（步长相等：int8 硬件就是这样算的，本课全部用它）和非均匀量化（步长
随数值的分布变化：对数网格、k-means 码本）；
- 量化粒度：分层量化（每个张量一个 scale）和分通道量化（每个输出通道一个）；大语言模型还要
更细，每 32 或 128 个数一组，每组一个 scale；
- 优化目标：推理加速，包括训练后量化（PTQ：直接量化训练好的模型，最多用一点校准数据）和
量化感知训练（QAT：训练时在前向传播里就做取整）；以及训练加速（低精度训练）。

对大模型，讲义还列出了混合精度训练（预训练和微调时，用 FP16 或 BF16 替代部分 FP32 进行数据
存储和计算）和混合精度推理，以及 SmoothQuant（ICML 2023）。代码打印本课的 MLP（784-256-10）
的权重在各种格式下占多少空间（不计 scale）。]]),
      code = [[
quant = lm.quant
local weights = 784 * 256 + 256 * 10          -- the MLP's two weight matrices
for _, f in ipairs({{'float32', 32}, {'float16, bfloat16', 16}, {'int8', 8}, {'int4', 4},
                    {'int2', 2}}) do
  print(string.format('%-18s %2d bits: %6.1f KiB', f[1], f[2], weights * f[2] / 8 / 1024))
end
]],
      expect = 'float32            32 bits:  794.0 KiB\nfloat16, bfloat16  16 bits:  397.0 KiB\n'
        .. 'int8                8 bits:  198.5 KiB\nint4                4 bits:   99.2 KiB\n'
        .. 'int2                2 bits:   49.6 KiB\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Symmetric quantization', '对称量化'),
      text = say([[
Symmetric quantization maps [-max|x|, max|x|] onto the codes -(2^(b-1) - 1) .. 2^(b-1) - 1 with
zero point 0. With b bits:

  qmax = 2^(b-1) - 1              (int8: 127; 2 bits: 1, the codes -1, 0, 1)
  s    = max|x| / qmax
  q    = clamp(round(x / s), -qmax, qmax),    x' = s q

This is the narrow range (-127..127, not -128..127): the grid is symmetric around 0 (ggml's q8_0
and TensorRT's int8 use it too). round is half to even, x:round() (0.5 -> 0, 1.5 -> 2, 2.5 -> 2): rounding
every half up would shift values upward on average. An all-zero x has max|x| = 0; lm.quant then
takes s = float32's epsilon, so nothing divides by zero and the zeros stay exact.

`quantize_sym` below is a first try: it returns the codes and the scale, but the codes are not
right. The code compares it with lm.quant.quantize on 4 bits.]],
        [[
对称量化把 [-max|x|, max|x|] 映射到编码 -(2^(b-1) - 1) .. 2^(b-1) - 1，零点为 0。b 位时：

  qmax = 2^(b-1) - 1              （int8：127；2 位：1，编码为 -1、0、1）
  s    = max|x| / qmax
  q    = clamp(round(x / s), -qmax, qmax),    x' = s q

这是窄范围（-127..127，而不是 -128..127）：网格关于 0 对称（ggml 的 q8_0 和 TensorRT 的 int8
也这样做）。
round 是四舍六入五成双，即 x:round()（0.5 -> 0，1.5 -> 2，2.5 -> 2）：如果 .5 一律进位，量化后
的值平均会偏大。全零的 x 的 max|x| = 0；这时 lm.quant 取 s = float32 的 epsilon，不会除以 0，
0 也能精确保留。

下面的 `quantize_sym` 是第一版：它返回编码和 scale，但编码不对。代码在 4 位下把它和
lm.quant.quantize 比较。]]),
      code = [[
function quantize_sym(x, bits)     -- to correct: returns codes, scale
  local qmax = 2 ^ (bits - 1) - 1
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  return (x / s):floor():clamp(-qmax, qmax), s
end
local x = lm.tensor({-2.0, -0.7, 0, 0.4, 1.1, 3.0})
function show(t)                   -- a tensor's values in one line
  local s = {}
  for i, v in ipairs(t:reshape(-1):tolist()) do s[i] = string.format('%.3g', v) end
  return table.concat(s, ' ')
end
local codes, s = quantize_sym(x, 4)
local ref = quant.quantize(x, {bits = 4, symmetric = true})
print(string.format('yours:     %-22s s = %.4f', show(codes), s))
print(string.format('lm.quant:  %-22s s = %.4f', show(ref.q), ref.scale:item()))
print('x back:    ' .. show(ref:dequantize()))
]],
      exercise = {
        prompt = say([[
Correct `quantize_sym(x, bits)` so it returns the codes (a tensor of x's shape) and the scale (one
number for the whole tensor) of symmetric quantization as defined above. The check compares with
lm.quant.quantize on matrices, exact halves, an outlier, all-negative and all-zero inputs, at 8, 4,
3 and 2 bits.]],
          [[
改正 `quantize_sym(x, bits)`，让它按上面的定义返回对称量化的编码（与 x 形状相同的张量）和
scale（整个张量一个数）。检查时会在矩阵、恰好是 .5 的值、含离群值的、全负的和全零的输入上，
用 8、4、3、2 位与 lm.quant.quantize 比较。]]),
        hints = {
          say('round, not floor: (x / s):round() rounds half to even.', '用 round，不要用 floor：(x / s):round() 就是四舍六入五成双。'),
          say('s = max|x| over the whole tensor (x:abs():max():item()) divided by 2^(b-1) - 1, at least float32\'s epsilon.',
            's = 整个张量上的 max|x|（x:abs():max():item()）除以 2^(b-1) - 1，且不小于 float32 的 epsilon。'),
        },
        check = function(env) return check_quantizer(env, false) end,
        solution = [[
function quantize_sym(x, bits)
  local qmax = 2 ^ (bits - 1) - 1
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  return (x / s):round():clamp(-qmax, qmax), s
end
]],
        wrong = {
          [[
function quantize_sym(x, bits)   -- rounds halves up
  local qmax = 2 ^ (bits - 1) - 1
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  return (x / s + 0.5):floor():clamp(-qmax, qmax), s
end
]],
          [[
function quantize_sym(x, bits)   -- truncates toward zero
  local qmax = 2 ^ (bits - 1) - 1
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  local r = x / s
  return (r:abs():floor() * r:sign()):clamp(-qmax, qmax), s
end
]],
          [[
function quantize_sym(x, bits)   -- the full range -128..127: s = max|x| / 128
  local qmax = 2 ^ (bits - 1)
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  return (x / s):round():clamp(-qmax, qmax - 1), s
end
]],
          [[
function quantize_sym(x, bits)   -- 2^b - 1 levels, as if unsigned
  local qmax = 2 ^ bits - 1
  local s = math.max(x:abs():max():item() / qmax, 1.1920928955078125e-07)
  return (x / s):round():clamp(-qmax, qmax), s
end
]],
          [[
function quantize_sym(x, bits)   -- max instead of max|x|
  local qmax = 2 ^ (bits - 1) - 1
  local s = math.max(x:max():item() / qmax, 1.1920928955078125e-07)
  return (x / s):round():clamp(-qmax, qmax), s
end
]],
          [[
function quantize_sym(x, bits)   -- max|x| per row, when one scale per tensor was asked
  local qmax = 2 ^ (bits - 1) - 1
  local m = x:dim() > 1 and x:abs():amax(-1, true) or x:abs():max()
  local s = (m / qmax):clamp(1.1920928955078125e-07, math.huge)
  return (x / s):round():clamp(-qmax, qmax), s
end
]],
          [[
function quantize_sym(x, bits)   -- no guard: an all-zero x divides by 0
  local qmax = 2 ^ (bits - 1) - 1
  local s = x:abs():max():item() / qmax
  return (x / s):round():clamp(-qmax, qmax), s
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Asymmetric quantization', '非对称量化'),
      text = say([[
Values after a ReLU are never negative: a symmetric grid would waste half its codes. Asymmetric
quantization maps the range [lo, hi] onto the codes 0 .. 2^b - 1 and shifts by a zero point z,
the code of 0.0:

  lo = min(x, 0),  hi = max(x, 0)   (0 always inside the range)
  s  = (hi - lo) / (2^b - 1)        (2^b codes, 2^b - 1 steps)
  z  = round(-lo / s)
  q  = clamp(round(x / s) + z, 0, 2^b - 1),    x' = s (q - z)

0 must be in the range so that it has an exact code (the zeros of padding and of ReLU cost
nothing), and z is rounded so that 0.0 maps to an integer. The clamp is needed here: with
lo = -1.5 and hi = 253.5, s = 1, z = round(1.5) = 2 and round(253.5) + 2 = 256, one past 255.
uint8 activations in int8 inference use this scheme. round_half_even(v) rounds a number as
x:round() does. The first version below forgets one of these rules.]],
        [[
ReLU 之后的值从来不是负数：对称的网格会浪费一半编码。非对称量化把范围 [lo, hi] 映射到编码
0 .. 2^b - 1，再平移一个零点 z，也就是 0.0 的编码：

  lo = min(x, 0),  hi = max(x, 0)   （0 总在范围里）
  s  = (hi - lo) / (2^b - 1)        （2^b 个编码，2^b - 1 个步长）
  z  = round(-lo / s)
  q  = clamp(round(x / s) + z, 0, 2^b - 1),    x' = s (q - z)

范围必须包含 0，这样 0 才有精确的编码（补零和 ReLU 输出的 0 不带误差）；z 要取整，这样 0.0
对应一个整数。这里截断（clamp）是必需的：lo = -1.5、hi = 253.5 时 s = 1，
z = round(1.5) = 2，round(253.5) + 2 = 256，比 255 多一。int8 推理中 uint8 的激活就用这种方案。
round_half_even(v) 对一个数的取整方式与 x:round() 相同。下面的第一版漏掉了其中一条规则。]]),
      code = [[
function round_half_even(v) return lm.tensor({v}):double():round()[1]:item() end
function quantize_asym(x, bits)    -- to correct: returns codes, scale, zero point
  local qmax = 2 ^ bits - 1
  local lo, hi = x:min():item(), x:max():item()
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = round_half_even(-lo / s)
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
local x = lm.tensor({0.2, 0.5, 1.3, 2.9, 4.0})   -- after a ReLU: nothing negative
local codes, s, z = quantize_asym(x, 4)
local ref = quant.quantize(x, {bits = 4, symmetric = false})
print(string.format('yours:     %-16s s = %.4f, z = %g', show(codes), s, z))
print(string.format('lm.quant:  %-16s s = %.4f, z = %g', show(ref.q), ref.scale:item(),
  ref.zero_point:item()))
]],
      exercise = {
        prompt = say([[
Correct `quantize_asym(x, bits)` so it returns the codes, the scale and the zero point (numbers)
of asymmetric quantization per tensor, as defined above. The check compares with
lm.quant.quantize(x, {bits = b, symmetric = false}) on matrices, exact halves, the case that needs
the clamp, all-positive, all-negative and all-zero inputs, at 8, 4, 3 and 2 bits.]],
          [[
改正 `quantize_asym(x, bits)`，让它按上面的定义返回按张量非对称量化的编码、scale 和零点（数）。
检查时会在矩阵、恰好是 .5 的值、需要截断的例子、全正、全负和全零的输入上，用 8、4、3、2 位
与 lm.quant.quantize(x, {bits = b, symmetric = false}) 比较。]]),
        hints = {
          say('lo = math.min(x:min():item(), 0), hi = math.max(x:max():item(), 0): 0 must be in the range.',
            'lo = math.min(x:min():item(), 0)，hi = math.max(x:max():item(), 0)：范围必须包含 0。'),
          say('z = round_half_even(-lo / s), then clamp(round(x / s) + z, 0, 2^b - 1).',
            'z = round_half_even(-lo / s)，然后 clamp(round(x / s) + z, 0, 2^b - 1)。'),
        },
        check = function(env) return check_quantizer(env, true) end,
        solution = [[
function quantize_asym(x, bits)
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = round_half_even(-lo / s)
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
        wrong = {
          [[
function quantize_asym(x, bits)   -- floor instead of round
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = round_half_even(-lo / s)
  return ((x / s):floor() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- rounds halves up
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = math.floor(-lo / s + 0.5)
  return ((x / s + 0.5):floor() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- no clamp
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = round_half_even(-lo / s)
  return (x / s):round() + z, s, z
end
]],
          [[
function quantize_asym(x, bits)   -- 2^b steps instead of 2^b - 1
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / 2 ^ bits, 1.1920928955078125e-07)
  local z = round_half_even(-lo / s)
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- the zero point's sign flipped
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = round_half_even(lo / s)
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- the zero point not rounded
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = math.max((hi - lo) / qmax, 1.1920928955078125e-07)
  local z = -lo / s
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- a range per row, when one per tensor was asked
  local qmax = 2 ^ bits - 1
  local d = x:dim() > 1 and x:dim() or 1
  local lo, hi = x:amin(d, true):clamp(-math.huge, 0), x:amax(d, true):clamp(0, math.huge)
  local s = ((hi - lo) / qmax):clamp(1.1920928955078125e-07, math.huge)
  local z = (-lo / s):round()
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
          [[
function quantize_asym(x, bits)   -- no guard: an all-zero x divides by 0
  local qmax = 2 ^ bits - 1
  local lo, hi = math.min(x:min():item(), 0), math.max(x:max():item(), 0)
  local s = (hi - lo) / qmax
  local z = round_half_even(-lo / s)
  return ((x / s):round() + z):clamp(0, qmax), s, z
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Granularity: per tensor, per channel, per group', '量化粒度：分层、分通道、分组'),
      text = say([[
One scale for a whole weight matrix (per-layer quantization) is set by its largest value. A
weight usually has output channels of very different sizes, and a few outlier weights: then most
values fall into the few codes around 0. W below is a layer's weight, 16 output channels (rows)
of 64 inputs: channel 3 is 20 times larger than the others, and row 7 holds one outlier weight.

- per tensor: 1 scale, set by channel 3; at 4 bits the other channels all round to the code 0;
- per channel (per-channel quantization): 16 scales, one per row; only row 7 still suffers from
its outlier;
- per group of 32: 32 scales, one per 32 consecutive weights of a row; the outlier spoils only
its own group.

The scales cost memory too (a float16 scale per 32 4-bit codes adds half a bit per weight). The
code prints the relative error |w - w'| / |w| of an ordinary row (1), of the outlier channel (3)
and of the row with the outlier weight (7). The picture is the quant scene on W at 4 bits: step
through it (the right arrow) for the histogram of W with the grid of each granularity over it and
the error of every weight; Tab changes the granularity of the last steps.]],
        [[
整个权重矩阵只用一个 scale（分层量化）时，scale 由最大的那个数决定。权重的各个输出通道往往
大小相差很多，还有少数离群的权重：这时大部分数都挤在 0 附近的几个编码里。下面的 W 是一层的
权重，16 个输出通道（行），每行 64 个输入：第 3 个通道比其余的大 20 倍，第 7 行有一个离群的
权重。

- 按张量（分层量化）：1 个 scale，由第 3 个通道决定；4 位时其余通道全都取整成编码 0；
- 按通道（分通道量化）：16 个 scale，每行一个；只有第 7 行还受它的离群值影响；
- 每 32 个一组：32 个 scale，一行中每 32 个相邻的权重一个；离群值只影响它所在的那一组。

scale 本身也占空间（每 32 个 4 位编码配一个 float16 的 scale，每个权重多出半位）。代码打印
普通的一行（第 1 行）、离群通道（第 3 行）和含离群权重的那一行（第 7 行）的相对误差
|w - w'| / |w|。画面是 4 位下 W 的 quant 场景：单步执行（右方向键），可以看到 W 的直方图和
每种粒度的网格，以及每个权重的误差 |w - w'|；Tab 切换最后几步所用的粒度。]]),
      code = [[
lm.manual_seed(4)
W = lm.randn(16, 64) * 0.05                -- 16 output channels x 64 inputs
W[3] = W[3] * 20                           -- an outlier channel
W[{7, 40}] = 0.6                           -- one outlier weight in row 7
print('symmetric          scales   relative error of row 1   row 3   row 7')
for _, bits in ipairs({4, 2}) do
  for _, g in ipairs({'tensor', 'channel', 'group'}) do
    local q = quant.quantize(W, {bits = bits, granularity = g, group_size = 32})
    local d = q:dequantize() - W
    local err = (d ^ 2):sum(2):sqrt() / (W ^ 2):sum(2):sqrt()   -- |w - w'| / |w| per row
    print(string.format('%d bits, per %-7s %4d %22.3f %7.3f %7.3f', bits, g, q.scale:numel(),
      err[1]:item(), err[3]:item(), err[7]:item()))
  end
end
]],
      scene = function(env) return quant_scene(env.W, {bits = 4, granularity = 'channel', group_size = 32}) end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Two models to quantize', '两个要量化的模型'),
      text = say([[
The table of the next step is measured on the two networks of the Fashion-MNIST examples:
examples/mlp_fashion.lua's MLP (784-256-10) and examples/cnn_fashion.lua's CNN (conv 3x3 16,
pool, conv 3x3 32, pool, a linear head). To stay within seconds they train on 4096 training
images (the MLP 4 passes, the CNN one and a half) and are tested on 1000 test images, so they
reach about 80% instead of the 85-90% of full training, and every accuracy below moves by a
point or two with the seed. The full size is `lumen examples/quant_lab.lua` (all 60,000
images, minutes on two cores).

`snapshot(model)` keeps a copy of the trained weights: state_dict's tensors are the parameters
themselves (they share storage), so the copy clones them. Every later step starts from
mlp_trained and cnn_trained. The picture is the CNN.]],
        [[
下一步的表格在 Fashion-MNIST 示例里的两个网络上测：examples/mlp_fashion.lua 的 MLP
（784-256-10）和 examples/cnn_fashion.lua 的 CNN（3x3 卷积 16 个通道、池化、3x3 卷积 32 个
通道、池化、一个线性层）。为了在几秒内完成，它们只在 4096 张训练图像上训练（MLP 4 遍，CNN 1.5
遍），在 1000 张测试图像上测试，所以准确率在 80% 左右，而不是完整训练的 85-90%；
下面每个准确率都会随随机种子变动一两个百分点。完整规模的版本是
`lumen examples/quant_lab.lua`（全部 60,000 张图像，两个核上要几分钟）。

`snapshot(model)` 保存训练好的权重的副本：state_dict 里的张量就是参数本身（共用存储），所以
副本要 clone。后面每一步都从 mlp_trained 和 cnn_trained 开始。画面是这个 CNN。]]),
      code = [[
train_set = data.FashionMNIST{split = 'train', limit = 4096}
-- (1000 test images; fewer in Lumen's own sanitizer-build tests, several times slower)
test_set = data.FashionMNIST{split = 'test', limit = lm.build_info().sanitize and 300 or 1000}
function make_mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
end
FashionCNN = nn.Module:extend('FashionCNN')
function FashionCNN:__init()
  self.conv1 = nn.Conv2d(1, 16, 3, {padding = 1})
  self.conv2 = nn.Conv2d(16, 32, 3, {padding = 1})
  self.pool = nn.MaxPool2d(2)
  self.fc = nn.Linear(32 * 7 * 7, 10)
end
function FashionCNN:forward(x)
  x = self.pool(F.relu(self.conv1(x)))
  x = self.pool(F.relu(self.conv2(x)))
  return self.fc(x:flatten(2))
end
-- train(model, steps, lr [, momentum, plot]): SGD on batches of 32 of the 4096 images
function train(model, steps, lr, momentum, plot)
  local opt = optim.SGD(model:parameters(), {lr = lr, momentum = momentum or 0})
  model:train()
  for s = 1, steps do
    local first = ((s - 1) * 32) % 4096 + 1
    local x, y = train_set.data:narrow(1, first, 32), train_set.targets:narrow(1, first, 32)
    local loss = F.cross_entropy(model(x), y)
    opt:zero_grad(); loss:backward(); opt:step()
    if plot then viz.plot(plot, s, loss:item()) end
  end
  model:eval()
end
function accuracy(model)                   -- on the 1000 test images
  return lm.no_grad(function()
    return model(test_set.data):argmax(2):eq(test_set.targets):float():mean():item()
  end)
end
function snapshot(model)                   -- the weights, cloned
  local saved = {}
  for k, v in pairs(model:state_dict()) do saved[k] = v:clone() end
  return saved
end
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
local SAN = lm.build_info().sanitize
lm.manual_seed(1)
mlp = make_mlp()
train(mlp, SAN and 128 or 512, 0.1)
lm.manual_seed(1)
cnn = FashionCNN()
train(cnn, SAN and 48 or 192, 0.02, 0.9)
mlp_trained, cnn_trained = snapshot(mlp), snapshot(cnn)
print(string.format('MLP float32: %.1f%%, CNN float32: %.1f%% (1000 test images)',
  100 * accuracy(mlp), 100 * accuracy(cnn)))
]],
      scene = function(env) return env.cnn end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('The table: 8, 4, 3, 2 bits', '表格：8、4、3、2 位'),
      text = say([[
Weight-only post-training quantization: each Linear and Conv2d weight is quantized and
dequantized in place (quant.quantize_weights, symmetric), the model runs as before, and the test
accuracy says what the rounding cost. ragged = true lets the last group of a row be shorter where
32 does not divide it (784 inputs, or the 9 and 144 of the convolutions). With PyTorch on the
full Fashion-MNIST (examples/quant_lab.lua prints the same table from Lumen):

- 8 bits cost nothing, 4 bits almost nothing, at any granularity;
- at 2 bits granularity decides everything: per tensor the MLP collapses to chance (10%), in
groups of 32 it keeps 82%.

`ptq_accuracy` below quantizes and measures, but it never puts the trained weights back: each
call starts from the weights the previous one left, and the float32 accuracy printed after the
table is not the trained model's any more. The charts show accuracy against bits.]],
        [[
只量化权重的训练后量化：把每个 Linear 和 Conv2d 的权重就地量化再反量化
（quant.quantize_weights，对称量化），模型照常运行，测试准确率就说明了取整的代价。
ragged = true 让一行最后一组在 32 除不尽的地方短一些（784 个输入，卷积的 9 和 144）。用
PyTorch 在完整的 Fashion-MNIST 上测得（examples/quant_lab.lua 用 Lumen 打印同样的表）：

- 8 位没有损失，4 位几乎没有损失，无论什么粒度；
- 2 位时一切取决于粒度：按张量量化时 MLP 跌到随机猜测（10%），每 32 个一组时还保持 82%。

下面的 `ptq_accuracy` 会量化并测量，但从不把训练好的权重放回去：每次调用都从上一次留下的权重
开始，表格之后打印的 float32 准确率也已经不是训练好的模型的了。图中是准确率随位数的变化。]]),
      code = [[
function ptq_accuracy(model, bits, granularity)   -- to correct: the model stays quantized
  quant.quantize_weights(model, {bits = bits, granularity = granularity, group_size = 32,
    ragged = true})
  return accuracy(model)
end
mlp:load_state_dict(mlp_trained)
cnn:load_state_dict(cnn_trained)
viz.clear()
print('test accuracy (1000 images), weights quantized, symmetric')
print('        W   per tensor  per channel  group 32')
for _, net in ipairs({{'MLP', mlp}, {'CNN', cnn}}) do
  local curves = {tensor = {}, channel = {}, group = {}}
  for _, bits in ipairs({8, 4, 3, 2}) do
    local row = {}
    for _, g in ipairs({'tensor', 'channel', 'group'}) do
      local a = ptq_accuracy(net[2], bits, g)
      row[#row + 1] = string.format('%10.1f%%', 100 * a)
      table.insert(curves[g], 1, 100 * a)        -- the charts run from 2 bits up
    end
    print(string.format('  %s  W%d %s', net[1], bits, table.concat(row, ' ')))
  end
  for _, g in ipairs({'tensor', 'channel', 'group'}) do
    viz.plot(net[1] .. ' accuracy %/' .. g, {2, 3, 4, 8}, curves[g])
  end
end
print(string.format('float32 after the table: MLP %.1f%%, CNN %.1f%%', 100 * accuracy(mlp),
  100 * accuracy(cnn)))
]],
      scene = 'curves',
      exercise = {
        prompt = say([[
Correct `ptq_accuracy(model, bits, granularity)`: it returns the test accuracy with the weights
quantized, and leaves the model exactly as it found it. Then `:run` the step: find the facts
above in your own table. The check calls it on the trained MLP with several bits and
granularities and compares the weights after each call.]],
          [[
改正 `ptq_accuracy(model, bits, granularity)`：它返回权重量化后的测试准确率，并让模型完全恢复
原样。然后 `:run` 这一步：在你自己的表格里找到上面那些结论。检查时会在训练好的 MLP 上用几种
位数和粒度调用它，并在每次调用之后比较权重。]]),
        hints = {
          say('Keep a copy first: local saved = snapshot(model) (state_dict cloned); measure; then model:load_state_dict(saved).',
            '先保存一份副本：local saved = snapshot(model)（clone 过的 state_dict）；测量；再 model:load_state_dict(saved)。'),
          say('model:state_dict() alone is not a copy: its tensors change when the weights are quantized in place.',
            '只用 model:state_dict() 不算副本：权重被就地量化时，它里面的张量也跟着变。'),
        },
        check = check_ptq,
        solution = [[
function ptq_accuracy(model, bits, granularity)
  local saved = snapshot(model)
  quant.quantize_weights(model, {bits = bits, granularity = granularity, group_size = 32,
    ragged = true})
  local a = accuracy(model)
  model:load_state_dict(saved)
  return a
end
]],
        wrong = {
          [[
function ptq_accuracy(model, bits, granularity)   -- state_dict kept without a clone
  local saved = model:state_dict()
  quant.quantize_weights(model, {bits = bits, granularity = granularity, group_size = 32,
    ragged = true})
  local a = accuracy(model)
  model:load_state_dict(saved)
  return a
end
]],
          [[
function ptq_accuracy(model, bits, granularity)   -- restored before measuring
  local saved = snapshot(model)
  quant.quantize_weights(model, {bits = bits, granularity = granularity, group_size = 32,
    ragged = true})
  model:load_state_dict(saved)
  return accuracy(model)
end
]],
          [[
function ptq_accuracy(model, bits, granularity)   -- the granularity ignored
  local saved = snapshot(model)
  quant.quantize_weights(model, {bits = bits})
  local a = accuracy(model)
  model:load_state_dict(saved)
  return a
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Quantization-aware training recovers 2 bits', '量化感知训练救回 2 位'),
      text = say([[
Post-training quantization rounds weights that were never trained to be rounded.
Quantization-aware training puts the rounding into the forward pass while the weights stay float32 and keep
learning: quant.prepare_qat makes each layer compute with fake_quantize(W), W quantized and
dequantized. round has a zero gradient almost everywhere, so the backward pass uses the
straight-through estimator: the gradient passes through the rounding unchanged (and is 0 where
W was clipped). The network learns weights whose 2-bit versions work.

Here the MLP at 2 bits per tensor, the setting where post-training quantization collapsed, is
fine-tuned for 128 steps of 32 images (one pass over the 4096). With PyTorch on the full data
(and with Lumen in examples/quant_lab.lua) one epoch of QAT recovers most of the loss. The chart is the training
loss during QAT.]],
        [[
训练后量化取整的是从来没有为取整而训练过的权重。量化感知训练把取整放进前向传播，而权重仍是
float32、继续学习：quant.prepare_qat 让每一层用 fake_quantize(W) 计算，即把 W 量化再反量化。
round 的梯度几乎处处为 0，所以反向传播用直通估计器（straight-through estimator）：梯度原样穿过
取整（在 W 被截断的地方为 0）。网络学到的是量化成 2 位之后也能用的权重。

这里对按张量 2 位量化的 MLP（训练后量化在这个设置下崩溃了）微调 128 步、每步 32 张图（在 4096
张图上一遍）。用 PyTorch 在完整数据上测得（用 Lumen 跑 examples/quant_lab.lua 也一样）：一个 epoch 的 QAT 就能挽回大部分
损失。图中是 QAT 过程中的训练损失。]]),
      code = [[
local w2 = {bits = 2, granularity = 'tensor'}
mlp:load_state_dict(mlp_trained)
local float = accuracy(mlp)
quant.quantize_weights(mlp, w2)
local ptq = accuracy(mlp)
mlp:load_state_dict(mlp_trained)
quant.prepare_qat(mlp, w2)                 -- forward with fake_quantize(W): the 2-bit grid
viz.clear()
lm.manual_seed(2)
train(mlp, lm.build_info().sanitize and 32 or 128, 0.01, 0.9, 'QAT loss') -- fewer in Lumen's sanitizer-build tests
quant.unprepare(mlp)
quant.quantize_weights(mlp, w2)            -- the trained weights, really quantized
print(string.format('MLP, 2-bit weights per tensor: %.1f%% after PTQ, %.1f%% after QAT ' ..
  '(float32 %.1f%%)', 100 * ptq, 100 * accuracy(mlp), 100 * float))
mlp:load_state_dict(mlp_trained)
]],
      scene = 'curves',
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Is int8 faster? Measure it', 'int8 更快吗？测一测'),
      text = say([[
Weight-only quantization saves memory; speed needs the arithmetic itself in integers.
nn.quantized.Linear and Conv2d (quant.prepare, a calibration batch, quant.convert; or
from_float on one layer) keep int8 weights per output channel, quantize the activations to
uint8 per tensor, multiply exactly in int32 (u8 x s8) and scale the result back to float32.
Around the multiply that is extra work the float32 layer does not do: int8 can only pay where
the multiply dominates. Measured with PyTorch (Fashion-MNIST, batch 256, onednn's int8), the
CNN's convolutions ran 2.4x faster in int8 and the small MLP's GEMMs slower; in PyTorch's static
int8 model the activations also stay uint8 from layer to layer, while Lumen's int8 layers take
and return float32.

The code times each layer at batch 256, float32 against int8, with its multiply-accumulates
(MACs); then bare products, float32 matmul against the integer kernel alone (quant.int_mm): one
of conv2's shape (its im2col form: 50176 x 144 times 144 x 32) and one of 1024 x 1024 x 1024,
where compute dominates. Read it as a measurement of your CPU: where int8 gains, where it loses,
and whether the integer product itself is faster. If int_mm wins and the layer loses, the
quantizing, unfolding and rescaling around it ate the gain (and Lumen's float32 convolution runs
Winograd's algorithm, with fewer multiplies than the im2col product); if int_mm loses too, the
integer kernel is no faster than the float one at that size. Times are noisy (`:run` again
on a quiet machine): nothing here checks them. The last lines are the accuracy of the int8
models (weights and activations in 8 bits).]],
        [[
只量化权重省的是内存；要更快，计算本身就得用整数。nn.quantized.Linear 和 Conv2d
（quant.prepare、一批校准数据、quant.convert；或对单个层用 from_float）保存按输出通道量化的
int8 权重，把激活按张量量化成 uint8，在 int32 里精确相乘（u8 x s8），再把结果缩放回 float32。
乘法前后的这些工作是 float32 层不用做的：只有乘法占主导的地方 int8 才可能划算。用 PyTorch
测得（Fashion-MNIST，batch 256，onednn 的 int8）：CNN 的卷积用 int8 快了 2.4 倍，小 MLP 的
GEMM 反而变慢；而且 PyTorch 的静态 int8 模型里激活在层与层之间一直是 uint8，Lumen 的 int8 层
则是输入输出都是 float32。

代码在 batch 256 下给每一层计时，float32 对 int8，并列出它的乘加次数（MACs）；然后单独比较
乘法本身：float32 的 matmul 对整数内核（quant.int_mm），一个是 conv2 的形状（它的 im2col 形式：
50176 x 144 乘 144 x 32），一个是计算占主导的 1024 x 1024 x 1024。把它当作对你的 CPU 的一次测量
来读：int8 在哪里赚、在哪里亏，以及整数乘法本身是否更快。如果 int_mm 快而整层慢，是前后的量化、
展开和缩放吃掉了收益（而且 Lumen 的 float32 卷积用的是 Winograd 算法，乘法比 im2col 的乘积
少）；如果 int_mm 也慢，说明在这个尺寸上整数内核并不比浮点内核快。计时有噪声（机器空闲时再 `:run` 一次）：这里没有任何检查依赖它。
最后几行是 int8 模型（权重和激活都是 8 位）的准确率。]]),
      code = [[
function median_ms(fn, rounds)             -- once untimed, then the median of rounds runs
  fn()
  local t = {}
  for r = 1, rounds do
    local t0 = lm.sys.clock()
    fn()
    t[r] = (lm.sys.clock() - t0) * 1e3
  end
  table.sort(t)
  return t[(rounds + 1) // 2]
end
mlp:load_state_dict(mlp_trained)
cnn:load_state_dict(cnn_trained)
local x = test_set.data:narrow(1, 1, 256)
local h1, c1, c2 = lm.no_grad(function()
  local a = cnn.pool(F.relu(cnn.conv1(x)))
  return F.relu(mlp[2](x:flatten(2))), a, cnn.pool(F.relu(cnn.conv2(a))):flatten(2)
end)
print('batch 256         MACs   float32 ms   int8 ms   float32/int8')
local total = {}
for _, l in ipairs({{'MLP', 'fc1', mlp[2], x:flatten(2)}, {'MLP', 'fc2', mlp[4], h1},
                    {'CNN', 'conv1', cnn.conv1, x}, {'CNN', 'conv2', cnn.conv2, c1},
                    {'CNN', 'fc', cnn.fc, c2}}) do
  local net, layer, input = l[1], l[3], l[4]
  local conv = layer.in_channels ~= nil
  local q = (conv and nn.quantized.Conv2d or nn.quantized.Linear).from_float(layer)
  local out = lm.no_grad(function() return layer(input) end)
  local k = conv and layer.in_channels * 9 or layer.in_features
  local tf = median_ms(function() lm.no_grad(function() return layer(input) end) end, 5)
  local ti = median_ms(function() return q(input) end, 5)
  print(string.format('%s %-7s %8.1fM %10.2f %9.2f %10.2fx', net, l[2], out:numel() * k / 1e6,
    tf, ti, tf / ti))
  total[net] = total[net] or {0, 0}
  total[net] = {total[net][1] + tf, total[net][2] + ti}
end
for _, net in ipairs({'MLP', 'CNN'}) do
  print(string.format('%s layers  %9s %10.2f %9.2f %10.2fx', net, '', total[net][1],
    total[net][2], total[net][1] / total[net][2]))
end
print('bare products  M x K x N          float32 matmul ms   u8 x s8 int_mm ms')
for _, p in ipairs({{'conv2 (im2col)', 256 * 14 * 14, 144, 32}, {'square', 1024, 1024, 1024}}) do
  local M, K, N = p[2], p[3], p[4]
  local a8 = lm.randint(0, 256, {M, K}, {dtype = 'uint8'})
  local b8 = lm.randint(-127, 128, {K, N}, {dtype = 'int8'})
  local af, bf = lm.randn(M, K), lm.randn(K, N)
  print(string.format('%-14s %-16s %12.2f %19.2f', p[1], M .. 'x' .. K .. 'x' .. N,
    median_ms(function() return af:matmul(bf) end, 5),
    median_ms(function() return quant.int_mm(a8, b8) end, 5)))
end
print('(CPU measured, this machine, ' .. lm.get_num_threads() .. ' threads, median of 5 runs ' ..
  'after one warm-up; int8: nn.quantized, dynamic activation range)')
local calib = train_set.data:narrow(1, 1, 256)
for _, net in ipairs({{'MLP', make_mlp, mlp_trained}, {'CNN', FashionCNN, cnn_trained}}) do
  local m = net[2]()
  m:load_state_dict(net[3])
  m:eval()
  quant.prepare(m)                         -- observers on each layer's input
  lm.no_grad(function() return m(calib) end)
  quant.convert(m)                         -- int8 layers with the calibrated ranges
  print(string.format('%s int8 (W8A8, calibrated on 256 training images): %.1f%%', net[1],
    100 * accuracy(m)))
end
]],
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Mixed-precision training: FP16 and BF16', '混合精度训练：FP16 与 BF16'),
      text = say([[
Training does not go down to 8 bits, but it does go to 16: mixed-precision training runs the
matrix products in FP16 or BF16 (half the memory traffic, and tensor cores where there are
some) and keeps FP32 where precision matters: the master weights, the optimizer step, the
losses, softmax and normalization. The two 16-bit formats split their bits differently:

  float16   1 sign, 5 exponent, 10 mantissa bits: largest 65504, finer steps
  bfloat16  1 sign, 8 exponent,  7 mantissa bits: float32's range, coarser steps

lm.autocast(dtype, fn) runs fn with F.linear, F.conv2d and matmul in dtype and the losses in
float32; parameters and their gradients stay float32. With float16, small gradients underflow to
0, so the loss is multiplied by a large scale before backward and the gradients divided by it
before the step (quant.GradScaler); a step whose gradients overflow to inf is skipped and the
scale halved. The code shows the three formats on three numbers, one bfloat16 step, and float16
steps starting from a scale too large.]],
        [[
训练降不到 8 位，但能降到 16 位：混合精度训练用 FP16 或 BF16 做矩阵乘法（内存流量减半，有
tensor core 时还能用上它），在精度要紧的地方保留 FP32：主权重、优化器的更新、损失、softmax
和归一化。两种 16 位格式分配位数的方式不同：

  float16   1 位符号、5 位指数、10 位尾数：最大 65504，步长更细
  bfloat16  1 位符号、8 位指数、 7 位尾数：范围和 float32 一样，步长更粗

lm.autocast(dtype, fn) 运行 fn 时，F.linear、F.conv2d 和 matmul 用 dtype 计算，损失用 float32；
参数和它们的梯度仍是 float32。用 float16 时，小的梯度会下溢成 0，所以反向传播之前先把损失乘上
一个大的缩放因子，更新之前再把梯度除回去（quant.GradScaler）；梯度溢出成 inf 的那一步跳过，
缩放因子减半。代码用三个数展示这三种格式，做一步 bfloat16 训练，再从一个过大的缩放因子开始做
几步 float16 训练。]]),
      code = [[
local v = lm.tensor({257, 1e-8, 70000})
for _, dt in ipairs({'float32', 'float16', 'bfloat16'}) do
  local r = v:to(dt):float():tolist()
  print(string.format('%-8s  257 -> %-4g  1e-8 -> %-11g  70000 -> %g', dt, r[1], r[2], r[3]))
end
mlp:load_state_dict(mlp_trained)
local x, y = train_set.data:narrow(1, 1, 32), train_set.targets:narrow(1, 1, 32)
local out, loss = lm.autocast('bfloat16', function()
  local o = mlp(x)
  return o, F.cross_entropy(o, y)
end)
loss:backward()
print(string.format('bfloat16 step: output %s, loss %s (%.4f; float32 %.4f), weight grad %s',
  out:dtype(), loss:dtype(), loss:item(), F.cross_entropy(mlp(x), y):item(),
  mlp[2].weight.grad:dtype()))
local opt = optim.SGD(mlp:parameters(), {lr = 0.01})
local scaler = quant.GradScaler({init_scale = 2 ^ 24, growth_interval = 4})
for s = 1, 8 do
  local first = s * 32 + 1
  local xb, yb = train_set.data:narrow(1, first, 32), train_set.targets:narrow(1, first, 32)
  opt:zero_grad()
  local l = lm.autocast('float16', function() return F.cross_entropy(mlp(xb), yb) end)
  scaler:scale(l):backward()
  local stepped = scaler:step(opt)
  scaler:update()
  print(string.format('float16 step %d: loss %.4f, %-7s next scale 2^%d', s, l:item(),
    stepped and 'stepped' or 'skipped', math.floor(math.log(scaler.scale_value, 2) + 0.5)))
end
mlp:load_state_dict(mlp_trained)
]],
    },
    -- 10 -----------------------------------------------------------------------------------
    {
      title = say('SmoothQuant: moving outliers into the weights', 'SmoothQuant：把离群值搬进权重'),
      text = say([[
Large language models quantize their weights well, but their activations have a few channels
tens of times larger than the rest, in every token. One int8 scale per tensor is then set by
those channels, and the others are left a handful of codes. Mixed-precision inference can keep
such outliers in 16 bits (LLM.int8() does); SmoothQuant (Xiao et al., ICML 2023) removes them
instead. A linear layer computes Y = X W^T; for any positive s_j per input channel j,

  Y = (X diag(1/s)) (W diag(s))^T
  s_j = max|X_j|^alpha / max|W_j|^(1 - alpha)

so dividing channel j of X by s_j and multiplying column j of W by s_j changes nothing in float.
With alpha = 0.5 the difficulty is split between the two: the activations become easy to
quantize, the weights a little harder. quant.smooth(model, batches) measures max|X_j| on
calibration batches and moves the scales into each Linear.

The code builds a layer whose input X has three outlier channels and quantizes X and the whole
layer (W8A8) to int8 before and after smoothing. The picture is the quant scene on the layer's W
and X: its last two steps are SmoothQuant before and after, with max|X_j| and max|W_j| per
channel and the errors of X, W and Y = X W^T.]],
        [[
大语言模型的权重很好量化，但它们的激活里有少数几个通道比其余的大几十倍，而且每个 token 都这样。
按张量只用一个 int8 的 scale 时，scale 就由这几个通道决定，其余通道只剩几个编码。混合精度推理
可以把这些离群值留在 16 位（LLM.int8() 就是这样做的）；SmoothQuant（Xiao 等，ICML 2023）则是
把它们消掉。线性层计算 Y = X W^T；对每个输入通道 j 任取正数 s_j，

  Y = (X diag(1/s)) (W diag(s))^T
  s_j = max|X_j|^alpha / max|W_j|^(1 - alpha)

所以把 X 的第 j 个通道除以 s_j、把 W 的第 j 列乘以 s_j，在浮点运算里什么都没变。alpha = 0.5
时难度由两边分担：激活变得容易量化，权重稍难一些。quant.smooth(model, batches) 在校准批次上
测出 max|X_j|，再把缩放因子移进每个 Linear。

代码构造一个输入 X 有三个离群通道的层，在平滑之前和之后把 X 以及整个层（W8A8）量化成 int8。
画面是这个层的 W 和 X 的 quant 场景：最后两步是 SmoothQuant 之前和之后，有每个通道的
max|X_j| 和 max|W_j|，以及 X、W 和 Y = X W^T 的误差。]]),
      code = [[
lm.manual_seed(10)
local X = lm.randn(256, 64)                -- 256 tokens x 64 channels
for _, j in ipairs({5, 23, 41}) do X[{{}, j}] = X[{{}, j}] * 40 end
local layer = nn.Sequential(nn.Linear(64, 32))
sq_X, sq_W = X, layer[1].weight:detach():clone()   -- for the picture
local Y = lm.no_grad(function() return layer(X) end)
local function norm(t) return (t ^ 2):sum():sqrt():item() end
local function rel(a, b) return norm(a - b) / norm(b) end   -- relative error of a against b
local function int8(t) return quant.quantize(t, {bits = 8, symmetric = false}):dequantize() end
local function report(when, Xin)
  local w8a8 = nn.quantized.Linear.from_float(layer[1])(Xin)    -- int8 weights and activations
  local m = Xin:abs():amax(1)
  print(string.format('%-7s max|X_j| largest %6.2f, median %5.2f; int8 error of X %.4f, ' ..
    'of Y (W8A8) %.4f', when, m:max():item(), m:sort()[32]:item(), rel(int8(Xin), Xin),
    rel(w8a8, Y)))
end
report('before', X)
local stats = quant.smooth(layer, {X}, {alpha = 0.5})
local st = stats['1']                      -- the statistics of layer 1
report('after', X / st.s)
print(string.format('the float product is unchanged: %.2e', rel(layer(X):detach(), Y)))
]],
      scene = function(env)
        return quant_scene(env.sq_W, {activations = env.sq_X, bits = 8, granularity = 'channel'})
      end,
    },
  },
}
