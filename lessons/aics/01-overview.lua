--[[
AI Computing Systems, chapter 1: what an AI computing system is (the material carrier of
intelligence: a heterogeneous system of CPUs and intelligent chips with a programming environment),
its forms (data centre, smartphone, embedded device, supercomputer), the processors it uses (CPU,
GPU, FPGA, the deep-learning processor DLP and the Cambricon line in the notes), and why AI needs
hardware of its own — measured on this machine: a network's forward pass and matmuls timed on the
CPU with lm, the same work on a modelled accelerator (Lumen's SIMT emulator, 8 SMs at 1.5 GHz, its
modelled cycles, and PCIe copies at 25 GB/s). The student writes the roofline (attainable), the time
of an offloaded operation (offload_ms) and Amdahl's law (speedup). Format: docs/lessons.md.
]]
local say = lesson.say

-- The modelled accelerator of this lesson: Lumen's latency model with 8 SMs at 1.5 GHz (the
-- streams model's defaults). Issue: one warp instruction (32 lanes) per cycle per SM, a
-- multiply-add counted as 2 FLOPs: 2 x 32 x 8 x 1.5 = 768 GFLOP/s. Memory: 2 cycles per 32-byte
-- sector per SM, so 16 B per cycle per SM: 16 x 8 x 1.5 = 192 GB/s.
local function close(a, b, tol)
  tol = tol or 1e-6
  return math.abs(a - b) <= 1e-12 + tol * math.abs(b)
end

local function g(x) return string.format('%.4g', x) end

-- Fresh random cases for attainable: (flops, bytes, peak_gflops, gbps), some on each side of the
-- ridge, with intensities below and above 1 so that an inverted intensity shows.
local function roof_cases()
  local cases = {
    { 65536, 786432, 768, 192 },          -- the vector add of 65,536 floats: memory-bound
    { 2 * 128 ^ 3, 12 * 128 ^ 2, 768, 192 }, -- a 128 x 128 matmul, each operand moved once
  }
  for _ = 1, 24 do
    local peak = math.random(50, 20000)
    local bw = math.random(10, 3000)
    local ridge = peak / bw
    local intensity = ridge * (math.random() < 0.5 and (0.05 + 0.9 * math.random())
      or (1.1 + 20 * math.random()))
    local bytes = math.random(1000, 1e8)
    cases[#cases + 1] = { intensity * bytes, bytes, peak, bw }
  end
  return cases
end

local function roof_check(env)
  local ok, f = lesson.need(env, 'attainable')
  if not ok then return false, f end
  for _, c in ipairs(roof_cases()) do
    local flops, bytes, peak, bw = c[1], c[2], c[3], c[4]
    local r = table.pack(lesson.try(f, flops, bytes, peak, bw))
    if not r[1] then return false, r[2] end
    local got = lesson.number(r[2])
    local I = flops / bytes
    local want = math.min(peak, I * bw)
    if got == nil or not close(got, want) then
      local bound_en = I * bw < peak and 'memory-bound' or 'compute-bound'
      local bound_zh = I * bw < peak and '受访存限制' or '受计算限制'
      local en = string.format('attainable(%s, %s, %s, %s) gives %s; the kernel does %s FLOPs per '
        .. 'byte, so it reaches %s GFLOP/s (%s)', g(flops), g(bytes), g(peak), g(bw),
        got and g(got) or tostring(r[2]), g(I), g(want), bound_en)
      local zh = string.format('attainable(%s, %s, %s, %s) 给出 %s；这个内核每字节做 %s 次浮点运算，'
        .. '所以它能达到 %s GFLOP/s（%s）', g(flops), g(bytes), g(peak), g(bw),
        got and g(got) or tostring(r[2]), g(I), g(want), bound_zh)
      if got then
        if close(got, math.max(peak, I * bw)) then
          en = en .. ': you took the higher roof; a kernel is held by the lower one'
          zh = zh .. '：你取了较高的那条屋顶线；内核受较低的那条限制'
        elseif close(got, math.min(peak, bw * bytes / flops)) or close(got, bw * bytes / flops) then
          en = en .. ': the intensity is FLOPs per byte (flops / bytes), not bytes per FLOP'
          zh = zh .. '：计算强度是每字节的浮点运算数（flops / bytes），不是每次运算的字节数'
        elseif close(got, math.min(peak, I)) or close(got, I) then
          en = en .. ': memory gives intensity x bandwidth FLOPs per second; the bandwidth is missing'
          zh = zh .. '：访存能支撑的是“计算强度 x 带宽”次每秒；你漏了带宽'
        elseif close(got, I * bw) then
          en = en .. ': no kernel runs faster than the processor\'s peak'
          zh = zh .. '：任何内核都快不过处理器的峰值'
        elseif close(got, peak) then
          en = en .. ': a kernel that moves many bytes per FLOP waits for memory, whatever the peak'
          zh = zh .. '：每次运算要搬很多字节的内核在等内存，峰值再高也没用'
        end
      end
      return false, say(en, zh)
    end
  end
  return true, say('Right: the lower of the two roofs, the peak and intensity x bandwidth.',
    '对：取两条屋顶线中较低的一条：峰值，或者计算强度 x 带宽。')
end

-- offload_ms: the reference, in milliseconds.
local function offload_ref(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps)
  return (bytes_in + bytes_out) / (pcie_gbps * 1e6) + flops / (acc_gflops * 1e6)
end

local function offload_check(env)
  local ok, f = lesson.need(env, 'offload_ms')
  if not ok then return false, f end
  local cases = { { 2 * 128 ^ 3, 2 * 4 * 128 ^ 2, 4 * 128 ^ 2, 227, 25 } }
  for _ = 1, 24 do
    cases[#cases + 1] = { math.random(1, 2e4) * 1e5, math.random(1, 5e4) * 1e3,
      math.random(1, 5e4) * 1e3, math.random(20, 50000), math.random(4, 64) }
  end
  for _, c in ipairs(cases) do
    local flops, bin, bout, acc, bw = c[1], c[2], c[3], c[4], c[5]
    local r = table.pack(lesson.try(f, flops, bin, bout, acc, bw))
    if not r[1] then return false, r[2] end
    local got = lesson.number(r[2])
    local want = offload_ref(flops, bin, bout, acc, bw)
    if got == nil or not close(got, want) then
      local tin, tk, tout = bin / (bw * 1e6), flops / (acc * 1e6), bout / (bw * 1e6)
      local en = string.format('offload_ms(%s, %s, %s, %s, %s) gives %s; copy in %s ms + kernel %s '
        .. 'ms + copy back %s ms = %s ms', g(flops), g(bin), g(bout), g(acc), g(bw),
        got and g(got) or tostring(r[2]), g(tin), g(tk), g(tout), g(want))
      local zh = string.format('offload_ms(%s, %s, %s, %s, %s) 给出 %s；传入 %s ms + 内核 %s ms + '
        .. '传回 %s ms = %s ms', g(flops), g(bin), g(bout), g(acc), g(bw),
        got and g(got) or tostring(r[2]), g(tin), g(tk), g(tout), g(want))
      if got then
        if close(got, tin + tk) then
          en = en .. ': the result must come back to the host too (bytes_out)'
          zh = zh .. '：结果还得传回主机（bytes_out）'
        elseif close(got, tk + tout) then
          en = en .. ': the inputs must cross the bus before the kernel starts (bytes_in)'
          zh = zh .. '：输入要先经过总线，内核才能开始（bytes_in）'
        elseif close(got, tk) then
          en = en .. ': the copies over PCIe are part of the cost'
          zh = zh .. '：PCIe 上的传输也是代价的一部分'
        elseif close(got, math.max(tin, tk, tout)) or close(got, math.max(tin + tout, tk)) then
          en = en .. ': with one stream nothing overlaps: the kernel waits for its inputs, the copy '
            .. 'back for the kernel'
          zh = zh .. '：只有一个流时什么都不重叠：内核等输入，传回等内核'
        elseif close(got, want / 1e3) or close(got, want * 1e3) then
          en = en .. ': check the units: bytes / (GB/s x 1e6) and FLOPs / (GFLOP/s x 1e6) are ms'
          zh = zh .. '：检查单位：bytes / (GB/s x 1e6) 和 FLOPs / (GFLOP/s x 1e6) 的单位是毫秒'
        end
      end
      return false, say(en, zh)
    end
  end
  return true, say('Right: copy in, compute, copy back, one after the other.',
    '对：传入、计算、传回，一个接一个。')
end

local function amdahl_check(env)
  local ok, f = lesson.need(env, 'speedup')
  if not ok then return false, f end
  local cases = { { 0.9, 10 }, { 0.5, 1000 }, { 0.99, 100 }, { 0, 8 }, { 1, 8 } }
  for _ = 1, 20 do cases[#cases + 1] = { math.random(1, 99) / 100, math.random(2, 500) } end
  for _, c in ipairs(cases) do
    local p, s = c[1], c[2]
    local r = table.pack(lesson.try(f, p, s))
    if not r[1] then return false, r[2] end
    local got = lesson.number(r[2])
    local want = 1 / ((1 - p) + p / s)
    if got == nil or not close(got, want) then
      local en = string.format('speedup(%s, %s) gives %s; with %s of the time sped up %s times the '
        .. 'run takes %s of its time: %s x', g(p), g(s), got and g(got) or tostring(r[2]), g(p),
        g(s), g((1 - p) + p / s), g(want))
      local zh = string.format('speedup(%s, %s) 给出 %s；%s 的时间加速 %s 倍后，运行时间是原来的 %s：'
        .. '%s 倍', g(p), g(s), got and g(got) or tostring(r[2]), g(p), g(s), g((1 - p) + p / s),
        g(want))
      if got then
        if close(got, 1 / (p + (1 - p) / s)) then
          en = en .. ': p is the part that is sped up; 1 - p stays as it was'
          zh = zh .. '：p 是被加速的部分；1 - p 保持原样'
        elseif close(got, s) or close(got, p * s) or close(got, p * s + (1 - p)) then
          en = en .. ': the part left on the host still takes all of its time'
          zh = zh .. '：留在主机上的那部分一点也没变快'
        elseif close(got, 1 / ((1 - p) + p * s)) then
          en = en .. ': the sped-up part takes p / s of the time, not p x s'
          zh = zh .. '：被加速的部分占 p / s 的时间，不是 p x s'
        elseif close(got, (1 - p) + p / s) then
          en = en .. ': that is the new time as a fraction; the speedup is its inverse'
          zh = zh .. '：这是新的时间占原来的比例；加速比是它的倒数'
        end
      end
      return false, say(en, zh)
    end
  end
  return true, say('Right: the part that stays on the host bounds the speedup by 1 / (1 - p).',
    '对：留在主机上的部分把加速比限制在 1 / (1 - p) 以内。')
end

return {
  title = say('What an AI computing system is, measured', '智能计算系统概述：在这台机器上量一量'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 1: overview', '智能计算系统 第 1 章：概述'),
  summary = say([[What an AI computing system is and the forms it takes, the heterogeneous model
of a host CPU and a deep-learning processor, and why AI needs hardware of its own: the same work
timed on this CPU and on a modelled accelerator, the roofline, the cost of copies, and Amdahl's
law.]],
    [[什么是智能计算系统、它有哪些形态，主机 CPU 加深度学习处理器的异构模型，以及为什么智能
计算需要专门的硬件：同样的计算在这台机器的 CPU 上实测、在模型化的加速器上估算，再看屋顶线
模型、数据传输的代价和 Amdahl 定律。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('The material carrier of intelligence', '智能的物质载体'),
      text = say([[
The notes define it in one line: an AI computing system is the material carrier of intelligence.
Today it is usually a heterogeneous system that joins CPUs with intelligent chips (deep-learning
processors), and on the software side it comes with a programming environment for developers: a
programming framework and a programming language.

It takes many forms: the data centre, the smartphone, the embedded device, the supercomputer; and
it runs speech recognition, automatic translation, drug discovery, image analysis, business
analytics, advertisement recommendation, robots and self-driving cars. The course follows one
path through it: input, modelling, implementation, running, output.

The code builds the small network this lesson uses throughout, an MLP of 784 inputs, two hidden
layers of 512 and 10 outputs (the parameters are counted on its tensors), and runs its forward
pass on a batch of 64 images on this machine's CPU. The time is CPU measured (the fastest of
5 runs, lm's own float32 matmul; it differs from machine to machine and from run to run). The
picture is the model scene: the layers and their parameter counts.]],
        [[
讲义用一句话下了定义：智能计算系统是智能的物质载体。现阶段的智能计算系统通常是集成 CPU 和
智能芯片（深度学习处理器）的异构系统，软件上通常包括一套面向开发者的智能计算编程环境（包括
编程框架和编程语言）。

它的形态多种多样：数据中心、智能手机、嵌入式设备、超级计算机；上面跑着语音识别、自动翻译、
药物研制、图像分析、商业分析、广告推荐，还有机器人和自动驾驶。整门课沿着一条处理过程展开：
输入、建模、实现、运行、输出。

代码搭出本课一直要用的小网络：一个多层感知机，784 个输入，两个 512 的隐层，10 个输出（参数
个数是在它的张量上数出来的），然后在这台机器的 CPU 上对一批 64 张图做一次正向传播。时间是
CPU 实测的（5 次取最快的一次，用的是 lm 自己的 float32 矩阵乘；不同机器、不同次运行都会不同）。
画面是模型场景：各层和它们的参数个数。]]),
      code = [[
lm.manual_seed(1)
mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
  nn.Linear(512, 10))
local params = 0
for _, p in ipairs(mlp:parameters()) do params = params + p:numel() end
batch = lm.rand(64, 784)
local times = {}
lm.no_grad(function()
  mlp(batch)                                       -- once untimed
  for r = 1, 5 do
    local t0 = lm.sys.clock()
    mlp(batch)
    times[r] = lm.sys.clock() - t0
  end
end)
table.sort(times)
mlp_cpu_ms = times[1] * 1e3
mlp_flops = 2 * 64 * (784 * 512 + 512 * 512 + 512 * 10)   -- a multiply-add is 2 FLOPs
print(string.format('MLP 784-512-512-10: %d parameters, %.1f MFLOPs for a batch of 64', params,
  mlp_flops / 1e6))
print(string.format('forward on this CPU: %.3f ms, %.1f GFLOP/s (CPU measured, lm float32)',
  mlp_cpu_ms, mlp_flops / (mlp_cpu_ms * 1e6)))
]],
      scene = function(env) return env.mlp end,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Why AI needs hardware of its own', '为什么需要专门的硬件'),
      text = say([[
Deep learning is mostly matrix multiplication, and it needs a lot of it. The notes recall the
milestones: in 2012 Google Brain's network that learned to recognise cats trained for days on
16,000 CPU cores; AlphaGo beat Lee Sedol with 1,202 CPUs and 176 GPUs. General-purpose processors
spend much of their chip on what a network does not need (branch prediction, out-of-order
execution, caches that guess what comes next); a network needs multiply-adds, and data brought to
them.

The code times a square matmul on this CPU for a few sizes (CPU measured, lm's float32 matmul, the
fastest of 3) and plots the GFLOP/s: small products cannot keep the cores busy, larger ones
approach what these cores can do (when other programs share the cores, the numbers drop: run it
again). Then it estimates, at the best rate measured, how long one
training epoch of ImageNet with AlexNet would take: about 0.72 billion multiply-adds per image
forward (the figure usually quoted), about three times that with the backward pass, 1.28 million
images.]],
        [[
深度学习的计算大部分是矩阵乘法，而且量非常大。讲义回顾了几个里程碑：2012 年 Google Brain
的“猫脸识别”网络用 1.6 万个 CPU 核训练了好几天；AlphaGo 用 1202 个 CPU 加 176 个 GPU 战胜了
李世石。通用处理器把大量芯片面积花在神经网络用不上的地方（分支预测、乱序执行、猜测下一步要
什么的缓存）；而神经网络需要的是乘加运算，以及把数据送到乘加单元跟前。

代码在这台机器的 CPU 上对几个大小的方阵乘法计时（CPU 实测，lm 的 float32 矩阵乘，3 次取最快
的一次），并画出 GFLOP/s：小矩阵喂不饱这些核，大矩阵才接近它们的能力（有别的程序在抢这些核时数字会掉下来：再跑一次）。然后按测到的最快速度估算，
用 AlexNet 在 ImageNet 上训练一个 epoch 要多久：每张图正向约 7.2 亿次乘加（通常引用的数字），
加上反向传播约为三倍，共 128 万张图。]]),
      code = [[
local best, points = 0, {}
for _, n in ipairs({32, 64, 96, 128, 192, 256, 384}) do
  local a, b = lm.rand(n, n), lm.rand(n, n)
  a:matmul(b)                                  -- once untimed
  local t = {}
  for r = 1, 3 do
    local t0 = lm.sys.clock()
    a:matmul(b)
    t[r] = lm.sys.clock() - t0
  end
  table.sort(t)
  local gflops = 2 * n ^ 3 / t[1] / 1e9
  best = math.max(best, gflops)
  points[#points + 1] = {n, gflops}
  print(string.format('n = %3d: %8.1f us, %6.1f GFLOP/s (CPU measured)', n, t[1] * 1e6, gflops))
end
cpu_gflops = best
viz.clear()                                    -- plotted after the timing: drawing takes CPU too
for _, p in ipairs(points) do viz.plot('CPU matmul (lm, measured)/GFLOP per s', p[1], p[2], {x = 'n'}) end
local epoch = 3 * 2 * 0.72e9 * 1.28e6          -- FLOPs: forward + backward, every image once
print(string.format('AlexNet, one ImageNet epoch: %.2g FLOPs, %.1f hours at %.0f GFLOP/s',
  epoch, epoch / (best * 1e9) / 3600, best))
]],
      scene = { 'curves', smoothing = 0 },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Processors for AI: CPU, GPU, FPGA, DLP', '智能计算系统中的处理器'),
      text = say([[
The processor that runs intelligent tasks can be a CPU, a GPU, an FPGA, or a dedicated
deep-learning processor (DLP). The notes trace the DLP line: DianNao, the first deep-learning
processor architecture; DaDianNao, the first multi-core one; the first deep-learning processor
chip and the first deep-learning instruction set, the base of the Cambricon ecosystem; close to a
hundred million phones and servers integrating Cambricon processors; MLU100, the intelligent chip
with the highest peak speed of its time, and MLU270, four times faster. Around them: Google's first
TPU, NVIDIA's Pascal (the first GPU architecture aimed at deep learning) and the deep-learning
units added to the V100.

A DLP starts from a lean general-purpose core and removes what a network does not need: no branch
predictor; the data cache replaced by a scratchpad that software fills; a DMA engine that moves
data between the scratchpad and main memory; a matrix unit and the control for matrix
instructions. The scratchpad is the data hub of the core and can become the bottleneck, which is
why computation and memory access are overlapped by a software pipeline.

Whether a kernel is held by the multipliers or by memory is what the roofline shows. This
lesson's modelled accelerator is Lumen's emulator model with 8 SMs at 1.5 GHz (docs/trace.md):
one warp instruction of 32 lanes per cycle per SM, a multiply-add counted as 2 FLOPs, gives a peak
of 2 x 32 x 8 x 1.5 = 768 GFLOP/s; 16 bytes per cycle per SM from memory gives 192 GB/s. A kernel
that does I FLOPs per byte it moves (its arithmetic intensity) can get at most I x 192 GFLOP/s out
of memory. The chart draws the two roofs against I; they cross at the ridge, 768 / 192 = 4
FLOPs per byte.]],
        [[
用来处理智能任务的处理器可以是 CPU、GPU、FPGA 等，也可以是专用的深度学习处理器（DLP）。讲义
梳理了 DLP 这条线：国际首个深度学习处理器架构 DianNao；国际首个多核深度学习处理器架构
DaDianNao；国际首个深度学习处理器芯片和首个深度学习指令集，奠定了寒武纪生态的基础；近亿台
手机和服务器开始集成寒武纪处理器；MLU100 是国际上同期峰值速度最高的智能芯片，MLU270 性能再
提升 4 倍。同一时期还有 Google 第一代深度学习处理器 TPU、NVIDIA 首个面向深度学习的 GPU 架构
Pascal，以及 V100 里加入的深度学习加速单元。

DLP 以精简的通用处理器结构为基础，去掉神经网络用不上的部分：省去分支预测器；数据缓存被便笺
存储器取代，由软件来填；加入直接访存模块（DMA），负责便笺存储器与主存之间的数据搬运；加入
矩阵运算单元和矩阵指令的控制单元。便笺存储器是 DLP 核心的数据枢纽，访问它可能成为瓶颈，所以
要靠软件流水线让计算和访存并行起来。

一个内核到底是被乘法器卡住还是被内存卡住，屋顶线模型（roofline）一看便知。本课的“模型化
加速器”就是 Lumen 模拟器的模型，8 个 SM、1.5 GHz（见 docs/trace.md）：每个 SM 每周期发射
一条 32 通道的 warp 指令，一次乘加算 2 次浮点运算，峰值为 2 x 32 x 8 x 1.5 = 768 GFLOP/s；每个
SM 每周期从内存取 16 字节，带宽为 192 GB/s。一个内核每搬一个字节做 I 次浮点运算（它的计算强度），
内存最多只能支撑它 I x 192 GFLOP/s。图里画出两条屋顶线随 I 的变化；它们在“脊点”相交，
768 / 192 = 4 FLOP/字节。]]),
      code = [[
acc = {peak_gflops = 768, gbps = 192, pcie_gbps = 25, clock_ghz = 1.5, sms = 8}  -- modelled
viz.clear()
for k = 1, 64 do
  local I = k / 4                                 -- FLOPs per byte
  viz.plot('roofs/compute: peak', I, acc.peak_gflops, {x = 'FLOPs per byte'})
  viz.plot('roofs/memory: I x bandwidth', I, I * acc.gbps, {x = 'FLOPs per byte'})
end
local vadd = 1 / 12                               -- C = A + B: 1 add per 12 bytes
local mm = 2 * 128 ^ 3 / (3 * 4 * 128 ^ 2)        -- 128 x 128 matmul, each operand once
print(string.format('vector add: %.3f FLOPs per byte; 128 x 128 matmul: %.1f FLOPs per byte', vadd,
  mm))
print(string.format('ridge of the modelled accelerator: %g FLOPs per byte', acc.peak_gflops /
  acc.gbps))
]],
      expect = [[
vector add: 0.083 FLOPs per byte; 128 x 128 matmul: 21.3 FLOPs per byte
ridge of the modelled accelerator: 4 FLOPs per byte
]],
      scene = { 'curves', smoothing = 0 },
      exercise = {
        prompt = say([[
Write attainable(flops, bytes, peak_gflops, gbps): the GFLOP/s a kernel that does flops FLOPs and
moves bytes bytes can reach on a processor of peak peak_gflops GFLOP/s and memory bandwidth gbps
GB/s (the roofline). It is checked on random kernels on both sides of the ridge, and on the vector
add and the matmul above.]],
          [[
写出 attainable(flops, bytes, peak_gflops, gbps)：一个做 flops 次浮点运算、搬 bytes 字节的内核，
在峰值为 peak_gflops GFLOP/s、内存带宽为 gbps GB/s 的处理器上最多能达到多少 GFLOP/s（屋顶线）。
检查会用脊点两侧的随机内核，以及上面的向量加法和矩阵乘。]]),
        hints = {
          say('The arithmetic intensity is flops / bytes; memory alone allows intensity x gbps.',
            '计算强度是 flops / bytes；光看内存，能达到的是 计算强度 x gbps。'),
          say('The kernel gets the lower of the two roofs: math.min.',
            '内核只能得到两条屋顶线中较低的那条：math.min。'),
        },
        check = roof_check,
        solution = [[
function attainable(flops, bytes, peak_gflops, gbps)
  return math.min(peak_gflops, flops / bytes * gbps)
end]],
        wrong = {
          [[function attainable(flops, bytes, peak_gflops, gbps) return math.max(peak_gflops, flops / bytes * gbps) end]],
          [[function attainable(flops, bytes, peak_gflops, gbps) return math.min(peak_gflops, bytes / flops * gbps) end]],
          [[function attainable(flops, bytes, peak_gflops, gbps) return math.min(peak_gflops, flops / bytes) end]],
          [[function attainable(flops, bytes, peak_gflops, gbps) return flops / bytes * gbps end]],
          [[function attainable(flops, bytes, peak_gflops, gbps) return peak_gflops end]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('The heterogeneous model: host and device', '异构编程模型：主机端与设备端'),
      text = say([[
A heterogeneous computing system has two kinds of processor. The general-purpose processor is the
controlling device (the host): it controls and schedules. The domain processor is the slave device
(the device): it does the large-scale parallel or domain-specific computation. Together they
complete the task: the control part and the serial tasks run on the host, the compute part and the
parallel tasks on the device. The notes draw four such systems, with a GPU, an FPGA, a TPU or a DLP
at the core; the program is written in two parts, host code and device code.

The device has its own memory, so the data must cross to it first (over PCIe, by DMA) and the
results come back. The code runs the simplest offload there is, C = A + B over 65,536 floats, on
the modelled accelerator: copies at 25 GB/s and the kernel's modelled cycles on 8 SMs at 1.5 GHz
(kernels.streams, emulated: the model, not a GPU). Beside it, the same add on this CPU with lm (CPU
measured). The picture is the timeline: copy in, kernel, copy back. A kernel of 0.083 FLOPs per
byte finishes in a few microseconds; the bus takes most of the time.]],
        [[
异构计算系统由两类处理器组成。通用处理器是控制设备（简称主机端），负责控制和调度等工作；领域
处理器是从设备（简称设备端），负责大规模的并行计算或领域专用计算任务；二者协同完成整个计算
任务：控制部分和串行任务在主机端执行，计算部分和并行任务在设备端执行。讲义画了四种典型的
异构计算系统，分别以 GPU、FPGA、TPU、DLP 为核心；程序采用分离式编程：主机端代码和设备端代码。

设备有自己的内存，所以数据得先传过去（经过 PCIe，由 DMA 搬运），结果再传回来。代码在模型化
加速器上跑最简单的一次卸载：对 65,536 个 float 做 C = A + B，传输按 25 GB/s，内核用 8 个 SM、
1.5 GHz 下模拟出的周期数（kernels.streams，模拟运行：是模型，不是 GPU）。旁边是同样的加法在
这台机器的 CPU 上用 lm 做的结果（CPU 实测）。画面是时间线：传入、内核、传回。每字节 0.083 次
运算的内核几微秒就算完了；大部分时间花在总线上。]]),
      code = [[
C, info = kernels.streams{segments = 1, backend = 'emu'}
local c = info.counters
print(string.format('offloaded (%s): copy in %.3f us, kernel %.3f us, copy back %.3f us: %.3f us',
  info.provenance, c.h2d_ms * 1e3, c.kernel_ms * 1e3, c.d2h_ms * 1e3, c.serial_ms * 1e3))
local a, b = lm.rand(65536), lm.rand(65536)
local t = {}
for r = 1, 5 do
  local t0 = lm.sys.clock()
  local _ = a + b
  t[r] = lm.sys.clock() - t0
end
table.sort(t)
print(string.format('on this CPU (CPU measured, lm): %.3f us', t[1] * 1e6))
]],
      scene = function(env) return env.info end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('The same matmul on the CPU and on the accelerator', '同一个矩阵乘：CPU 与加速器'),
      text = say([[
A matmul of 128 x 128 does 21 FLOPs per byte: it is worth the trip. The code runs it three times:
lm's matmul on this CPU (CPU measured, the fastest of 3); Lumen's tiled matmul kernel emulated on the
modelled accelerator (its modelled cycles with 8 SMs, at 1.5 GHz; emulated, modelled cycles); and
the copies of A and B in and C back at 25 GB/s (modelled, no per-call overhead). The kernel reaches
well under the 768 GFLOP/s roof: for every multiply-add the tiled kernel also issues two loads from
shared memory, three instructions where the roof counts one.

The time of an offload in this model is what the timeline showed: copy in, then the kernel, then
copy back, one after the other (one stream, nothing to overlap with). The picture is the emulated
kernel: tiles of A and B through shared memory into a tile of C. Its table's "tiled 16" column is
this run on 8 SMs; the scene runs the other columns (naive, other tiles) itself on Lumen's default
model of one SM, so compare those among themselves, not with this run.]],
        [[
128 x 128 的矩阵乘每字节做 21 次运算：值得走这一趟。代码把它跑三遍：lm 的矩阵乘在这台机器的
CPU 上（CPU 实测，3 次取最快的一次）；Lumen 的分块矩阵乘内核在模型化加速器上模拟运行（8 个 SM、
1.5 GHz 下的模拟周期数；emulated, modelled cycles）；以及 A、B 传入和 C 传回，按 25 GB/s 计算
（模型，不计每次调用的固定开销）。内核离 768 GFLOP/s 的屋顶还差得远：分块内核每做一次乘加，
还要发两条共享内存的读指令，屋顶线只算一条的地方它发了三条。

在这个模型里，一次卸载的时间就是时间线上看到的：先传入，再算，再传回，一个接一个（只有一个流，
没有可以重叠的东西）。画面是模拟运行的内核：A 和 B 的分块经过共享内存汇成 C 的一块。表格里
“tiled 16”一列就是这次在 8 个 SM 上的运行；其余几列（naive、其他分块大小）是场景自己在 Lumen
默认的单 SM 模型上跑的，只能互相比较，不要拿来和这次运行比。]]),
      code = [[
local n = 128
local a, b = lm.rand(n, n), lm.rand(n, n)
local t = {}
for r = 1, 3 do
  local t0 = lm.sys.clock()
  a:matmul(b)
  t[r] = lm.sys.clock() - t0
end
table.sort(t)
mm_cpu_us = t[1] * 1e6
local saved = kernels.latency()
kernels.latency{sms = 8}
local _, emu = kernels.matmul(a, b, {backend = 'emu'})
kernels.latency(saved)
mm_info = emu
local kernel_us = emu.counters.modelled_cycles / 1.5e3       -- cycles at 1.5 GHz, in us
acc_gflops = 2 * n ^ 3 / (kernel_us * 1e3)                  -- the emulated kernel's rate
local in_us, out_us = 2 * 4 * n * n / 25e3, 4 * n * n / 25e3 -- bytes at 25 GB/s, in us
print(string.format('CPU (CPU measured, lm):           %8.1f us', mm_cpu_us))
print(string.format('accelerator (%s): kernel %.1f us = %.0f GFLOP/s', emu.provenance,
  kernel_us, acc_gflops))
print(string.format('  + copies (modelled, 25 GB/s): in %.1f us, back %.1f us: %.1f us in all',
  in_us, out_us, in_us + kernel_us + out_us))
]],
      scene = function(env) return env.mm_info end,
      exercise = {
        prompt = say([[
Write offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps): the time in milliseconds of
an operation offloaded to an accelerator that computes at acc_gflops GFLOP/s behind a bus of
pcie_gbps GB/s, one stream, no per-call overhead. It is checked on random operations.]],
          [[
写出 offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps)：把一个操作卸载到加速器上
所需的毫秒数，加速器算力为 acc_gflops GFLOP/s，总线带宽为 pcie_gbps GB/s，只有一个流，不计
每次调用的固定开销。检查会用随机的操作。]]),
        hints = {
          say('Three parts: bytes_in over the bus, the kernel, bytes_out over the bus.',
            '三部分：bytes_in 过总线、内核、bytes_out 过总线。'),
          say('1 GB/s moves 1e6 bytes per millisecond; 1 GFLOP/s does 1e6 FLOPs per millisecond.',
            '1 GB/s 每毫秒搬 1e6 字节；1 GFLOP/s 每毫秒做 1e6 次运算。'),
        },
        check = offload_check,
        solution = [[
function offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps)
  return bytes_in / (pcie_gbps * 1e6) + flops / (acc_gflops * 1e6) + bytes_out / (pcie_gbps * 1e6)
end]],
        wrong = {
          [[function offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps) return bytes_in / (pcie_gbps * 1e6) + flops / (acc_gflops * 1e6) end]],
          [[function offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps) return flops / (acc_gflops * 1e6) end]],
          [[function offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps) return math.max(bytes_in / (pcie_gbps * 1e6), flops / (acc_gflops * 1e6), bytes_out / (pcie_gbps * 1e6)) end]],
          [[function offload_ms(flops, bytes_in, bytes_out, acc_gflops, pcie_gbps) return (bytes_in + bytes_out) / pcie_gbps / 1e9 + flops / acc_gflops / 1e9 end]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('What stays on the host: Amdahl\'s law', '留在主机上的部分：Amdahl 定律'),
      text = say([[
The host keeps the control and the serial tasks; only the compute part goes to the device. If a
fraction p of the original time is sped up s times and the rest, 1 - p, is not, the new time is
(1 - p) + p / s of the old one, and the speedup its inverse. However fast the device, the speedup
stays below 1 / (1 - p): with 10% left on the host, at most 10 times.

The chart plots the speedup against s (1 to 200) for p = 0.5, 0.9 and 0.99, from the formula (a
model, not a measurement): each curve flattens at its ceiling.]],
        [[
控制部分和串行任务留在主机端，只有计算部分交给设备端。如果原来时间里有比例 p 的部分被加速了
s 倍，其余 1 - p 不变，那么新的时间是原来的 (1 - p) + p / s，加速比是它的倒数。设备再快，加速比
也到不了 1 / (1 - p)：主机上留下 10%，最多只能快 10 倍。

图里画出 p = 0.5、0.9、0.99 时加速比随 s（1 到 200）的变化，按公式算出（是模型，不是实测）：
每条曲线都在自己的上限处变平。]]),
      code = [[
viz.clear()
for _, p in ipairs({0.5, 0.9, 0.99}) do
  for s = 1, 200 do
    viz.plot('speedup/p=' .. p, s, 1 / ((1 - p) + p / s), {x = 's'})
  end
  print(string.format('p = %.2f: s = 10 gives %.2fx, s = 200 gives %.2fx, the ceiling is %.0fx', p,
    1 / ((1 - p) + p / 10), 1 / ((1 - p) + p / 200), 1 / (1 - p)))
end
]],
      expect = [[
p = 0.50: s = 10 gives 1.82x, s = 200 gives 1.99x, the ceiling is 2x
p = 0.90: s = 10 gives 5.26x, s = 200 gives 9.57x, the ceiling is 10x
p = 0.99: s = 10 gives 9.17x, s = 200 gives 66.89x, the ceiling is 100x
]],
      scene = { 'curves', smoothing = 0 },
      exercise = {
        prompt = say([[
Write speedup(p, s): the speedup of a program when the fraction p of its time (0 <= p <= 1) is
made s times faster and the rest stays as it was. It is checked on random p and s, and on p = 0
and p = 1.]],
          [[
写出 speedup(p, s)：程序中比例为 p（0 <= p <= 1）的时间被加速 s 倍、其余不变时，整个程序的
加速比。检查会用随机的 p 和 s，以及 p = 0 和 p = 1。]]),
        hints = {
          say('The new time, as a fraction of the old one: (1 - p) + p / s.',
            '新的时间占原来的比例：(1 - p) + p / s。'),
          say('The speedup is the old time over the new one.', '加速比 = 原来的时间 / 新的时间。'),
        },
        check = amdahl_check,
        solution = [[
function speedup(p, s)
  return 1 / ((1 - p) + p / s)
end]],
        wrong = {
          [[function speedup(p, s) return 1 / (p + (1 - p) / s) end]],
          [[function speedup(p, s) return p * s + (1 - p) end]],
          [[function speedup(p, s) return (1 - p) + p / s end]],
          [[function speedup(p, s) return 1 / ((1 - p) + p * s) end]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Which layers to offload', '哪些层值得卸载'),
      text = say([[
Now the MLP of step 1, layer by layer. Each layer's CPU time is measured on this machine with lm
(the fastest of 5). Offloaded, a layer pays the copies of its input and weights in and of its
output back at 25 GB/s, and its kernel at the lower roof: the emulated matmul's rate of step 5 for
a matmul, intensity x bandwidth for a ReLU, which moves more bytes than it computes. Two modelled
accelerators: the 8 SMs of step 5, and the same model scaled to 132 SMs (an H100's count; rate and
device bandwidth 16.5 times, the bus unchanged). The model assumes nothing stays on the device
between layers and nothing overlaps: offloaded time = copies + kernel.

Read the columns. A ReLU sent alone is nearly all copy: its kernel takes a microsecond or two. A
matmul layer's copies are mostly its weights. On 132 SMs every layer's kernel is far shorter than
its copies: a faster device only makes the bus matter more. Compare each row's copies + kernel
with the CPU column to see which layers pay on this machine (it changes with the CPU and from run
to run).

The last lines keep the whole network resident on the device, weights already there: only the
batch goes in and 10 numbers per image come back. This is why a framework places a whole graph on
the DLP and keeps the data there, rather than sending it one layer at a time.]],
        [[
现在把第 1 步的多层感知机逐层看一遍。每层在 CPU 上的时间是用 lm 在这台机器上实测的（5 次取
最快的一次）。卸载到设备上，一层要付出：输入和权重按 25 GB/s 传入、输出传回，再加上内核按较低
屋顶线算出的时间：矩阵乘用第 5 步模拟出的矩阵乘速率，ReLU 搬的字节比算的次数还多，用“计算强度
x 带宽”。两个模型化加速器：第 5 步的 8 个 SM，以及把同一模型放大到 132 个 SM（H100 的 SM 数；
算力和设备内存带宽都乘 16.5，总线不变）。模型假设层与层之间没有数据留在设备上，也没有任何重叠：
卸载时间 = 传输 + 内核。

看各列。单独送过去的 ReLU 几乎全是传输：它的内核只要一两微秒。矩阵乘层的传输主要是它的权重。
在 132 个 SM 上，每层内核的时间都远比它的传输短：设备越快，总线越要紧。把每行的“传输 + 内核”
和 CPU 那一列比一比，就知道在这台机器上哪些层值得卸载（这随 CPU 而变，每次运行也会有出入）。

最后几行让整个网络常驻在设备上，权重已经在那里：只传入这一批输入，每张图只传回 10 个数。这就是
为什么编程框架要把整张计算图放到 DLP 上、让数据留在那里，而不是一层一层地来回送。]]),
      code = [[
-- modelled accelerators: the emulated matmul rate of step 5 on 8 SMs, and the same model scaled
-- to 132 SMs (rate and device bandwidth x 16.5; the same 25 GB/s bus)
local rate = acc_gflops or 227
accs = {{sms = 8, gflops = rate, gbps = 192}, {sms = 132, gflops = rate * 16.5, gbps = 192 * 16.5}}
pcie_gbps = 25
local function kernel_ms(a, flops, bytes)     -- the lower roof, in ms
  return flops / (math.min(a.gflops, flops / bytes * a.gbps) * 1e6)
end
local function cpu_ms(f)                      -- CPU measured: the fastest of 5, in ms
  local t = {}
  for r = 1, 5 do
    local t0 = lm.sys.clock()
    f()
    t[r] = lm.sys.clock() - t0
  end
  table.sort(t)
  return t[1] * 1e3
end
local x, dev = batch, {0, 0}
print('                  CPU ms      copies ms    kernel ms    kernel ms')
print('layer             (measured)  (modelled)   8 SMs        132 SMs')
lm.no_grad(function()
  for i = 1, #mlp do
    local layer = mlp[i]
    local y = layer(x)
    local flops, bytes_in = x:numel(), 4 * x:numel()
    if layer.weight then
      flops = 2 * x:size(1) * layer.weight:numel()
      bytes_in = bytes_in + 4 * (layer.weight:numel() + layer.bias:numel())
    end
    local bytes_out = 4 * y:numel()
    local k8 = kernel_ms(accs[1], flops, bytes_in + bytes_out)
    local k132 = kernel_ms(accs[2], flops, bytes_in + bytes_out)
    dev[1], dev[2] = dev[1] + k8, dev[2] + k132
    print(string.format('%d %-14s %10.4f %12.4f %12.4f %12.4f', i, layer.weight and
      string.format('Linear %dx%d', layer.weight:size(2), layer.weight:size(1)) or 'ReLU',
      cpu_ms(function() layer(x) end), (bytes_in + bytes_out) / (pcie_gbps * 1e6), k8, k132))
    x = y
  end
end)
local io_ms = (4 * batch:numel() + 4 * 64 * 10) / (pcie_gbps * 1e6)
local whole_cpu = lm.no_grad(function() return cpu_ms(function() mlp(batch) end) end)
print(string.format('whole network on this CPU: %.4f ms (CPU measured)', whole_cpu))
for j, a in ipairs(accs) do
  print(string.format('whole network resident on %3d SMs: %.4f ms (modelled): %.1fx', a.sms,
    io_ms + dev[j], whole_cpu / (io_ms + dev[j])))
end
]],
      scene = function(env) return env.mlp end,
    },
  },
}
