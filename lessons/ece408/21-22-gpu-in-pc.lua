--[[
ECE408 Lectures 21 and 22: the GPU as part of the PC and task parallelism with streams — the
canonical host program (copy in, kernel, copy back) and what the copies cost, the feeds and speeds
of PCI and PCIe, pinned vs pageable host memory, a vector cut into segments whose copies and
kernels overlap across streams (kernels.streams and the timeline scene: the model of the emulated
run without a GPU, CUDA events with one), the pipeline's time for n segments, the general
recurrence, one copy engine, and how many segments pay. Format: docs/lessons.md.
]]
local say = lesson.say

local OPS = { 'h2d', 'kernel', 'd2h' }

-- One segment's durations (ms) from the serial schedule of a streams info: {h2d=, kernel=, d2h=}
-- per segment (the serial schedule runs every operation alone, so a span is its duration).
local function durations(info)
  local segs = {}
  for _, s in ipairs(info.timeline) do
    if s.schedule == 'serial' then
      local d = segs[s.segment + 1] or {}
      d[s.op] = s.end_ms - s.start_ms
      segs[s.segment + 1] = d
    end
  end
  return segs
end

-- The check's own pipeline: three engines (copy in, compute, copy out), each running its
-- operations one at a time in segment order; an operation starts when its engine is free and its
-- segment's previous operation has finished. The time the last copy back ends.
local function flow_shop(segs)
  local free = { 0, 0, 0 }
  for _, d in ipairs(segs) do
    local ready = 0
    for m, op in ipairs(OPS) do
      local start = math.max(free[m], ready)
      free[m] = start + d[op]
      ready = free[m]
    end
  end
  return free[3]
end

local function us(ms) return string.format('%.3f us', ms * 1000) end

local function close(a, b) return math.abs(a - b) <= 1e-9 + 1e-6 * math.abs(b) end

-- A model run of the emulator (never a GPU: the checks compare with the model's timeline).
local function model_run(opts)
  opts.backend, opts.trace = 'emu', false
  local _, info = kernels.streams(opts)
  return info
end

-- The model's overlapped time must be the pipeline the check computes; a failure here is a bug
-- of the model (or of this lesson), said as such.
local function model_agrees(info)
  local want = flow_shop(durations(info))
  if not close(want, info.counters.overlapped_ms) then
    error(string.format('21-gpu-in-pc: the model\'s overlapped time %.9g ms differs from the '
      .. 'pipeline recurrence %.9g ms (segments %d): report this', info.counters.overlapped_ms,
      want, info.counters.segments), 0)
  end
  return want
end

-- A pipeline whose kernels do not wait for each other (a plausible mistake, recognised to say so).
local function kernels_together(segs)
  local h, out = 0, 0
  for _, d in ipairs(segs) do
    h = h + d.h2d
    out = math.max(out, h + d.kernel) + d.d2h
  end
  return out
end

-- The student's pipeline_ms on segs (a copy: the student may change it) against flow_shop.
local function try_pipeline(f, segs, where)
  local copy = {}
  for i, d in ipairs(segs) do copy[i] = { h2d = d.h2d, kernel = d.kernel, d2h = d.d2h } end
  local r = table.pack(lesson.try(f, copy))
  if not r[1] then return false, r[2] end
  local want, got = flow_shop(segs), lesson.number(r[2])
  if got ~= nil and close(got, want) then return true end
  local rows = {}
  for i, d in ipairs(segs) do
    rows[i] = string.format('%d: %.4g/%.4g/%.4g', i, d.h2d, d.kernel, d.d2h)
  end
  local list, gave, ends = table.concat(rows, ', '), tostring(r[2]), string.format('%.6g', want)
  local why_en, why_zh = '', ''
  local alone = kernels_together(segs)
  if got ~= nil and close(got, alone) and not close(alone, want) then
    why_en = ': your kernels run at the same time; here a kernel waits for the kernel before it'
    why_zh = '：你的内核同时在跑；这里一个内核要等前一个内核结束'
  end
  return false, say(string.format('%s (h2d/kernel/d2h ms per segment: %s): pipeline_ms gives %s, '
    .. 'the pipeline ends at %s ms%s', where.en, list, gave, ends, why_en),
    string.format('%s（每段 h2d/kernel/d2h 毫秒：%s）：pipeline_ms 给出 %s，流水线在 %s ms 结束%s',
      where.zh, list, gave, ends, why_zh))
end

-- Fresh segments: one where kernels must queue, then 30 random ones of 1 to 7 segments.
local function random_segments()
  local list = { { { h2d = 1, kernel = 5, d2h = 1 }, { h2d = 1, kernel = 5, d2h = 1 } } }
  local function t() return math.random(1, 40) / 10 end
  for _ = 1, 30 do
    local segs = {}
    for i = 1, math.random(1, 7) do segs[i] = { h2d = t(), kernel = t(), d2h = t() } end
    list[#list + 1] = segs
  end
  return list
end

local CANDIDATES = { 1, 2, 4, 8, 16, 32, 64, 128 }

-- {overlapped_ms, kernel_ms} of the default vector for each of CANDIDATES, from the model's runs;
-- kept while the latency model (kernels.latency, which the student may change) stays the same.
local candidates_memo = {}
local function candidate_times()
  local lat, key = kernels.latency(), {}
  for k, v in pairs(lat) do key[#key + 1] = k .. '=' .. tostring(v) end
  table.sort(key)
  key = table.concat(key, ',')
  if not candidates_memo[key] then
    local times = {}
    for _, s in ipairs(CANDIDATES) do
      local c = model_run{ segments = s }.counters
      times[s] = { c.overlapped_ms, c.kernel_ms }
    end
    candidates_memo[key] = times
  end
  return candidates_memo[key]
end

-- The segment count of CANDIDATES with the shortest overlapped time for the default vector,
-- from the model's runs, against v (the student's answer).
local function best_check(v)
  local n = lesson.number(v)
  if n == nil then
    return false, say('best_segments is not a number yet: set it to a segment count, such as '
      .. 'best_segments = 4',
      'best_segments 还不是一个数：把它设成一个段数，例如 best_segments = 4')
  end
  local times, best = candidate_times(), nil
  for _, s in ipairs(CANDIDATES) do
    if not best or times[s][1] < times[best][1] then best = s end
  end
  if not times[n] then
    return false, say(string.format('%s is not one of 1, 2, 4, 8, 16, 32, 64, 128', tostring(v)),
      string.format('%s 不在 1、2、4、8、16、32、64、128 之中', tostring(v)))
  end
  local t, b = times[n], times[best]
  if n > best then
    return false, say(string.format('with %d segments the overlapped time is %s (kernels %s in '
      .. 'all); fewer segments do better: each launch has too few blocks to fill 8 SMs, so the kernels '
      .. 'take longer', n, us(t[1]), us(t[2])),
      string.format('%d 段时重叠时间是 %s（内核合计 %s）；段少一些更好：每次启动的块太少，'
        .. '填不满 8 个 SM，内核变慢了', n, us(t[1]), us(t[2])))
  elseif n < best then
    return false, say(string.format('with %d segments the overlapped time is %s (kernels %s in '
      .. 'all); more segments do better: the pipeline\'s fill and drain still cost more than what the '
      .. 'launches lose', n, us(t[1]), us(t[2])),
      string.format('%d 段时重叠时间是 %s（内核合计 %s）；段多一些更好：流水线填充和排空的代价'
        .. '仍然大于多次启动的损失', n, us(t[1]), us(t[2])))
  end
  return true, say(string.format('Right: %d segments, %s; beyond that the launches have too few '
    .. 'blocks for 8 SMs.', best, us(b[1])),
    string.format('对：%d 段，%s；再多的话，每次启动的块就不够 8 个 SM 用了。', best, us(b[1])))
end

return {
  title = say('The GPU in the PC: copies, streams and overlap', 'PC 中的 GPU：数据传输、流与重叠'),
  course = 'ece408',
  lecture = say('ECE408 Lectures 21-22: the GPU as part of the PC architecture; task parallelism '
    .. 'and streams', 'ECE408 第 21-22 讲：作为 PC 架构一部分的 GPU；任务并发与流'),
  summary = say([[What copying data to a coprocessor costs (PCIe's feeds and speeds, pinned and
pageable memory), and how cutting a vector into segments lets copies and kernels of different
streams overlap: the pipeline's time, its limits, and how many segments pay.]],
    [[把数据送到协处理器要付出什么代价（PCIe 的带宽、锁页内存与可分页内存），以及把向量分段后，
不同流里的传输和内核如何重叠：流水线的时间、它的上限，以及分多少段才划算。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('The GPU as a coprocessor', 'GPU 是协处理器'),
      text = say([[
The canonical CUDA program runs on the host and treats the GPU as a coprocessor: allocate device
memory (cudaMalloc), copy the inputs from host to device (cudaMemcpy), launch the kernel, copy the
result back, free. The kernel only sees data that crossed the PCIe bus first.

The code runs that program for one vector add C = A + B of 65,536 floats, on the emulator with
Lumen's stated model (docs/trace.md): copies at 25 GB/s, the kernel's modelled cycles on 8 SMs at
1.5 GHz. Look at the share of the time spent copying: for a kernel that does one add per 12 bytes
moved, the bus, not the GPU, sets the pace. The picture is the timeline: one box per operation.]],
        [[
标准的 CUDA 程序运行在主机上，把 GPU 当作协处理器来用：分配设备内存（cudaMalloc），把输入从
主机复制到设备（cudaMemcpy），启动内核，把结果复制回来，最后释放。内核能用到的数据，都得先
经过 PCIe 总线。

下面的代码对 65,536 个 float 做一次向量加法 C = A + B，在模拟器上按 Lumen 写明的模型运行
（见 docs/trace.md）：传输速度 25 GB/s，内核用模拟出的周期数，8 个 SM，1.5 GHz。请注意传输
占了多少时间：一个每搬 12 字节才做一次加法的内核，节奏是由总线而不是 GPU 决定的。画面是时间线，
每个操作一个方块。]]),
      code = [[
-- cudaMalloc, cudaMemcpy A and B in, vecAdd<<<...>>>, cudaMemcpy C back: one stream, one segment
C, info = kernels.streams{segments = 1, backend = 'emu'}
local c = info.counters
print(string.format('C = A + B over %d floats: C[1..4] = %g %g %g %g', c.vector_bytes // 4,
  C[1]:item(), C[2]:item(), C[3]:item(), C[4]:item()))
for _, s in ipairs(info.timeline) do
  if s.schedule == 'serial' then
    local us = (s.end_ms - s.start_ms) * 1000
    print(string.format('  %-6s %7.3f us  %4d KiB', s.op, us, s.bytes // 1024))
  end
end
local copies = c.h2d_ms + c.d2h_ms
print(string.format('copies: %.0f%% of %.3f us (%s)', 100 * copies / c.serial_ms,
  c.serial_ms * 1000, info.provenance))
]],
      expect = [[
C = A + B over 65536 floats: C[1..4] = -3 -1 1 3
  h2d     20.972 us   512 KiB
  kernel   4.096 us   768 KiB
  d2h     10.486 us   256 KiB
copies: 88% of 35.553 us (emulated, modelled cycles)
]],
      scene = function(env) return env.info end,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Feeds and speeds: PCI and PCIe', '带宽：PCI 与 PCIe'),
      text = say([[
Bandwidth is the gravity of a computer system: buffering and caching can defy it for a while, but
in the end performance falls back to what the speeds and feeds dictate. The lecture follows the
GPU's link to the host. The original PCI bus was shared, 33 MHz and 32 bits wide: 132 MB/s peak
for every device on it (later 66 MHz and 64 bits: 528 MB/s). PCI Express gives each card its own
point-to-point link made of lanes; a lane sends 2.5 gigatransfers per second each way, coded 8b/10b
(10 bits on the wire for 8 of data), so 250 MB/s per lane each way, and an x16 link 4 GB/s each
way. Generation 2 doubled the rate; generation 3 (8 GT/s) moved to 128b/130b coding; each later
one doubled again.

The code computes the table, and what a vector add could reach if the bus fed it alone: it moves
12 bytes per add (A and B in, C out; in and out travel at the same time).]],
        [[
带宽是计算机系统的“万有引力”：缓冲、缓存等技巧可以暂时违抗它，但最终性能还是落回到带宽
（speeds and feeds）所规定的水平。这一讲顺着 GPU 到主机的连接看下去。最初的 PCI 总线是共享的，
33 MHz、32 位宽：挂在上面的所有设备加起来峰值 132 MB/s（后来的 66 MHz、64 位：528 MB/s）。
PCI Express 给每块卡一条独占的点对点链路，由若干通道（lane）组成；每个通道每个方向每秒传输
2.5 G 次，采用 8b/10b 编码（线上 10 位只承载 8 位数据），所以每通道每个方向 250 MB/s，x16
链路每个方向 4 GB/s。第 2 代把速率翻了一倍；第 3 代（8 GT/s）改用 128b/130b 编码；之后每一代
再翻一倍。

代码算出这张表，以及如果只靠总线供数，向量加法最多能跑多快：每次加法要搬 12 字节（A、B 进，
C 出；进和出可以同时进行）。]]),
      code = [[
-- PCIe per lane and direction: transfers/s x (data bits / coded bits) / 8 bits per byte
pcie = {
  {gen = 1, gts = 2.5, data = 8, coded = 10},
  {gen = 2, gts = 5, data = 8, coded = 10},
  {gen = 3, gts = 8, data = 128, coded = 130},
  {gen = 4, gts = 16, data = 128, coded = 130},
  {gen = 5, gts = 32, data = 128, coded = 130},
}
print(string.format('PCI: 33 MHz x 4 bytes = %d MB/s; 66 MHz x 8 bytes = %d MB/s (shared)',
  33 * 4, 66 * 8))
for _, p in ipairs(pcie) do
  local lane = p.gts * 1e9 * p.data / p.coded / 8 / 1e6          -- MB/s per lane, each way
  local x16 = 16 * lane / 1e3                                     -- GB/s each way
  local adds = x16 * 1e9 / 8 / 1e9                                -- G adds/s: 8 bytes in per add
  print(string.format('PCIe %d: %5.0f MB/s per lane, x16 %5.2f GB/s each way: %5.2f G adds/s',
    p.gen, lane, x16, adds))
end
]],
      expect = [[
PCI: 33 MHz x 4 bytes = 132 MB/s; 66 MHz x 8 bytes = 528 MB/s (shared)
PCIe 1:   250 MB/s per lane, x16  4.00 GB/s each way:  0.50 G adds/s
PCIe 2:   500 MB/s per lane, x16  8.00 GB/s each way:  1.00 G adds/s
PCIe 3:   985 MB/s per lane, x16 15.75 GB/s each way:  1.97 G adds/s
PCIe 4:  1969 MB/s per lane, x16 31.51 GB/s each way:  3.94 G adds/s
PCIe 5:  3938 MB/s per lane, x16 63.02 GB/s each way:  7.88 G adds/s
]],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Pinned and pageable host memory', '锁页内存与可分页内存'),
      text = say([[
The copy engine is a DMA engine: it reads host memory by physical address, without the CPU. The
operating system, meanwhile, may page a virtual page out and put another in the same physical
place — under a running DMA that would read the wrong data. So DMA needs pinned (page-locked)
memory, which cannot be paged out. A cudaMemcpy from ordinary pageable memory is done in two
steps: the driver copies the data into a pinned staging buffer with the CPU, then DMAs it. That
extra copy costs time, and it makes cudaMemcpyAsync from pageable memory wait for the CPU: no
overlap. cudaHostAlloc (or cudaMallocHost) allocates pinned memory, cudaFreeHost frees it; too
much of it leaves the rest of the system short of pageable memory. (The driver stages a large copy
in chunks, so on a real machine the two copies partly overlap; the model below adds them up.)

The code measures how fast this CPU copies memory (the staging copy) and models one 64 MiB copy
both ways. With a GPU, kernels.streams copies from pinned buffers (its info says pinned = 1).]],
        [[
复制引擎是一个 DMA 引擎：它按物理地址读主机内存，不需要 CPU 参与。而操作系统随时可能把一个
虚拟页换出，再把另一页换进同一块物理内存——如果此时 DMA 正在读，读到的就是错的数据。所以 DMA
需要锁页内存（pinned memory），这种内存不会被换出。从普通的可分页内存做 cudaMemcpy 要分两步：
驱动先用 CPU 把数据复制到一块锁页的中转缓冲区，再用 DMA 传过去。多出来的这次复制要花时间，
而且让可分页内存上的 cudaMemcpyAsync 必须等 CPU 做完：无法重叠。cudaHostAlloc（或
cudaMallocHost）分配锁页内存，cudaFreeHost 释放；锁页内存用得太多，系统其余部分可用的可分页
内存就少了，整体性能反而下降。（驱动会把大的复制分块中转，所以在真实机器上两次复制会部分重叠；
下面的模型把两者直接相加。）

代码测出这台机器的 CPU 复制内存有多快（也就是中转那一次复制），并用模型估计一次 64 MiB 的复制
在两种内存上各要多久。有 GPU 时，kernels.streams 从锁页缓冲区复制（info 里 pinned = 1）。]]),
      code = [[
-- the staging copy: host memory to host memory, timed on this CPU (the median of 5 copies)
local n = 1 << 22                                   -- 16 MiB of float32
local src, dst = lm.rand(n), lm.zeros(n)
dst:copy_(src)                                      -- once untimed: every page touched
local times = {}
for r = 1, 5 do
  local t0 = lm.sys.clock()
  dst:copy_(src)
  times[r] = lm.sys.clock() - t0
end
table.sort(times)
memcpy_gbps = 4 * n / times[3] / 1e9
pcie_gbps = 25                                      -- the model's bus (PCIe 4 x16 in practice)
local bytes = 64 * 2^20
local dma = bytes / (pcie_gbps * 1e9) * 1e3         -- ms
local staging = bytes / (memcpy_gbps * 1e9) * 1e3
print(string.format('host copy: %.1f GB/s (CPU, measured: x:copy_ of 16 MiB, median of 5)',
  memcpy_gbps))
print(string.format('64 MiB, pinned:   %.2f ms (DMA at %d GB/s, modelled)', dma, pcie_gbps))
print(string.format('64 MiB, pageable: %.2f ms (the staging copy, then the DMA; no overlap)',
  staging + dma))
]],
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Segments and streams: serial vs overlapped', '分段与流：串行与重叠'),
      text = say([[
Lecture 22: most CUDA devices can copy between host and device while a kernel runs (the
deviceOverlap property). To use it, divide the large vectors into segments and overlap the
transfer of one segment with the computation of another. A stream is a queue of operations
(copies and kernel launches) that run in order; operations of different streams may run at the
same time: task parallelism. The textbook's host code:

  for (int i = 0; i < n; i += SegSize * 2) {
    cudaMemcpyAsync(d_A0, h_A + i, SegSize * sizeof(float),
                    cudaMemcpyHostToDevice, stream0);
    ... B0, then vecAdd<<<SegSize / 256, 256, 0, stream0>>>(...);
    cudaMemcpyAsync(h_C + i, d_C0, ..., cudaMemcpyDeviceToHost, stream0);
    ... the same for segment i + SegSize in stream1
  }

kernels.streams runs both schedules: serial (one stream) and overlapped (a stream per segment).
In the picture, the top half is serial, the bottom overlapped; Tab shows 2, 3 and 4 streams.]],
        [[
第 22 讲：大多数 CUDA 设备能在内核运行的同时，在主机和设备之间复制数据（设备属性
deviceOverlap）。要用上这一点，就把大向量分成若干段，让一段的传输和另一段的计算重叠。流是一个
操作队列（复制和内核启动），队列里的操作按顺序执行；不同流里的操作可以同时进行：这就是任务
并行。教材里的主机代码：

  for (int i = 0; i < n; i += SegSize * 2) {
    cudaMemcpyAsync(d_A0, h_A + i, SegSize * sizeof(float),
                    cudaMemcpyHostToDevice, stream0);
    ... B0，然后 vecAdd<<<SegSize / 256, 256, 0, stream0>>>(...);
    cudaMemcpyAsync(h_C + i, d_C0, ..., cudaMemcpyDeviceToHost, stream0);
    ... 段 i + SegSize 在 stream1 里做同样的事
  }

kernels.streams 把两种调度都跑一遍：串行（一个流）和重叠（每段一个流）。画面上半部分是串行，
下半部分是重叠；按 Tab 可以看 2、3、4 个流。]]),
      code = [[
C, info = kernels.streams{segments = 4, backend = 'emu'}
local c = info.counters
print(string.format('serial %.3f us, overlapped %.3f us: %.2fx (%s)', c.serial_ms * 1000,
  c.overlapped_ms * 1000, c.speedup, info.provenance))
for _, s in ipairs(info.timeline) do
  if s.schedule == 'overlapped' then
    print(string.format('  stream %d %-6s on %-7s %7.3f .. %7.3f us', s.stream, s.op, s.track,
      s.start_ms * 1000, s.end_ms * 1000))
  end
end
]],
      expect = [[
serial 35.553 us, overlapped 24.617 us: 1.44x (emulated, modelled cycles)
  stream 0 h2d    on h2d       0.000 ..   5.243 us
  stream 0 kernel on compute   5.243 ..   6.267 us
  stream 0 d2h    on d2h       6.267 ..   8.888 us
  stream 1 h2d    on h2d       5.243 ..  10.486 us
  stream 1 kernel on compute  10.486 ..  11.510 us
  stream 1 d2h    on d2h      11.510 ..  14.131 us
  stream 2 h2d    on h2d      10.486 ..  15.729 us
  stream 2 kernel on compute  15.729 ..  16.753 us
  stream 2 d2h    on d2h      16.753 ..  19.374 us
  stream 3 h2d    on h2d      15.729 ..  20.972 us
  stream 3 kernel on compute  20.972 ..  21.996 us
  stream 3 d2h    on d2h      21.996 ..  24.617 us
]],
      scene = function(env) return env.info end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('The pipeline\'s time for n segments', 'n 段流水线的时间'),
      text = say([[
With two copy engines (one each way) and a compute engine, the overlapped schedule is a
three-stage pipeline, like the lecture's picture: while segment 1's kernel runs, segment 2's
inputs come in and segment 0's result goes out. When the segments are equal, the first segment
goes through all three stages, and after that one segment leaves per period of the busiest
engine.

The code prints one segment's three durations for n = 4 and the model's overlapped time.
`seg_times(info)` gives them for any run.]],
        [[
有两个复制引擎（每个方向一个）和一个计算引擎时，重叠调度就是一条三级流水线，和课上的图一样：
第 1 段的内核在跑的时候，第 2 段的输入正在传进来，第 0 段的结果正在传回去。各段一样大时，
第一段要完整走过三级，此后每隔“最忙的那个引擎”处理一段所需的时间，就有一段完成。

代码打印 n = 4 时一段的三个时长，以及模型给出的重叠时间。`seg_times(info)` 对任何一次运行都能
取出这些时长。]]),
      code = [[
-- one segment's durations (ms): the serial schedule runs each operation alone
function seg_times(info)
  local d = {}
  for _, s in ipairs(info.timeline) do
    if s.schedule == 'serial' and s.segment == 0 then d[s.op] = s.end_ms - s.start_ms end
  end
  return d.h2d, d.kernel, d.d2h
end
local _, info4 = kernels.streams{segments = 4, backend = 'emu'}
local h2d, k, d2h = seg_times(info4)
print(string.format('one of 4 segments: h2d %.3f us, kernel %.3f us, d2h %.3f us', h2d * 1e3,
  k * 1e3, d2h * 1e3))
print(string.format('overlapped (the model): %.3f us', info4.counters.overlapped_ms * 1e3))
]],
      expect = [[
one of 4 segments: h2d 5.243 us, kernel 1.024 us, d2h 2.621 us
overlapped (the model): 24.617 us
]],
      exercise = {
        prompt = say([[
Write overlapped_ms(n, h2d, k, d2h): the overlapped time of n equal segments, given one segment's
copy-in, kernel and copy-back times (two copy engines, one compute engine). It is checked against
the model's timeline for several n, with a bus fast and slow enough that each engine takes its
turn as the busiest.]],
          [[
写出 overlapped_ms(n, h2d, k, d2h)：n 个等长段的重叠时间，参数是一段的传入、内核、传回时间
（两个复制引擎，一个计算引擎）。检查会用好几个 n 和模型的时间线对照，总线时快时慢，让每个
引擎都轮流当一次最忙的那个。]]),
        hints = {
          say('The first segment takes h2d + k + d2h. How often does a later segment finish?',
            '第一段要 h2d + k + d2h。之后每隔多久完成一段？'),
          say('The busiest engine works without a pause: math.max(h2d, k, d2h) per segment.',
            '最忙的引擎一刻不停：每段 math.max(h2d, k, d2h)。'),
        },
        check = function(env)
          local ok, f = lesson.need(env, 'overlapped_ms')
          if not ok then return false, f end
          local cases = { { 1, 25 }, { 2, 25 }, { 3, 400 }, { 5, 25 }, { 8, 400 }, { 13, 6 } }
          for _, case in ipairs(cases) do
            local n, gbps = case[1], case[2]
            local info = model_run{ segments = n, bytes = 4 * 4096 * n, pcie_gbps = gbps }
            local want = model_agrees(info)
            local d = durations(info)[1]
            local r = table.pack(lesson.try(f, n, d.h2d, d.kernel, d.d2h))
            if not r[1] then return false, r[2] end
            local got = lesson.number(r[2])
            if got == nil or not close(got, want) then
              local busiest = d.h2d >= d.kernel and d.h2d >= d.d2h and 'h2d'
                or d.kernel >= d.d2h and 'kernel' or 'd2h'
              local gave = got and us(got) or tostring(r[2])
              local en = string.format('with n = %d (one segment: h2d %s, kernel %s, d2h %s; PCIe '
                .. '%g GB/s) overlapped_ms gives %s, the model\'s timeline ends at %s: the busiest '
                .. 'engine is %s', n, us(d.h2d), us(d.kernel), us(d.d2h), gbps, gave, us(want),
                busiest)
              local zh = string.format('n = %d 时（一段：h2d %s，kernel %s，d2h %s；PCIe %g GB/s）'
                .. 'overlapped_ms 给出 %s，而模型的时间线在 %s 结束：最忙的引擎是 %s', n,
                us(d.h2d), us(d.kernel), us(d.d2h), gbps, gave, us(want), busiest)
              if n == 1 then
                en = en .. '; one segment cannot overlap with anything'
                zh = zh .. '；只有一段时没有东西可以重叠'
              end
              return false, say(en, zh)
            end
          end
          return true, say('Right: fill the pipeline once (h2d + k + d2h), then one segment per '
            .. 'period of the busiest engine.', '对：先把流水线填满一次（h2d + k + d2h），之后每个'
            .. '“最忙引擎周期”完成一段。')
        end,
        solution = [[
function overlapped_ms(n, h2d, k, d2h)
  return h2d + k + d2h + (n - 1) * math.max(h2d, k, d2h)
end]],
        wrong = {
          [[function overlapped_ms(n, h2d, k, d2h) return n * math.max(h2d, k, d2h) end]],
          [[function overlapped_ms(n, h2d, k, d2h) return h2d + k + d2h + (n - 1) * k end]],
          [[function overlapped_ms(n, h2d, k, d2h) return n * (h2d + k + d2h) end]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Segments of any length: the engines\' recurrence', '任意长度的段：引擎的递推'),
      text = say([[
The formula needs equal segments. In general each engine is a queue: it runs one operation at a
time, in the order the segments were issued, and an operation starts when both its engine is free
and its stream's previous operation is done (a kernel needs its inputs, a copy back needs the
kernel). In the model the compute engine runs one kernel at a time (each fills the GPU), so a
kernel may wait for the one before it even when its inputs have arrived.

The code builds three segments of different lengths by hand from three runs, so you can try your
function on them. Notice that the kernel takes as long for 1,024 floats as for 8,192: so few
blocks leave most SMs idle, and the time is the latency of one wave of loads and stores.]],
        [[
上面的公式要求各段等长。一般情况下，每个引擎都是一个队列：一次只执行一个操作，按各段发出的
顺序执行；一个操作要等到“它的引擎空闲”且“它所在流的前一个操作已完成”两个条件都满足才开始
（内核要等输入到齐，传回要等内核算完）。模型里计算引擎一次只跑一个内核（每个内核都占满整个
GPU），所以即使输入已经到了，一个内核也可能还得等前一个内核结束。

代码从三次运行里手工拼出三段长度不同的段，你可以用它们来试你的函数。注意 1,024 个 float 和
8,192 个 float 的内核用时一样：块这么少，大部分 SM 都闲着，时间只是一轮访存的延迟。]]),
      code = [[
-- three segments of 1024, 8192 and 2048 floats: one segment's durations from each run
segs = {}
for i, floats in ipairs({1024, 8192, 2048}) do
  local _, one = kernels.streams{segments = 1, bytes = 4 * floats, backend = 'emu'}
  local h2d, k, d2h = seg_times(one)
  segs[i] = {h2d = h2d, kernel = k, d2h = d2h}
  print(string.format('segment %d: %5d floats, h2d %.3f us, kernel %.3f us, d2h %.3f us', i, floats,
    h2d * 1e3, k * 1e3, d2h * 1e3))
end
]],
      expect = [[
segment 1:  1024 floats, h2d 0.328 us, kernel 0.537 us, d2h 0.164 us
segment 2:  8192 floats, h2d 2.621 us, kernel 0.537 us, d2h 1.311 us
segment 3:  2048 floats, h2d 0.655 us, kernel 0.537 us, d2h 0.328 us
]],
      exercise = {
        prompt = say([[
Write pipeline_ms(segs): segs is an array of {h2d=, kernel=, d2h=} (ms), one per segment in
issue order; return when the last copy back ends, with one copy engine each way and one compute
engine. It is checked on random segments (1 to 7 of them) against a pipeline computed in the
check, and on the model's own timelines.]],
          [[
写出 pipeline_ms(segs)：segs 是按发出顺序排列的数组，每段一个 {h2d=, kernel=, d2h=}（毫秒）；
返回最后一次传回结束的时刻，每个方向一个复制引擎，一个计算引擎。检查会用随机的段（1 到 7 段）
与检查自己算出的流水线对照，也会与模型自己的时间线对照。]]),
        hints = {
          say('Keep, for each engine, the time it becomes free; walk the segments in order.',
            '为每个引擎记下它空闲下来的时刻；按顺序处理各段。'),
          say('start = math.max(engine free, previous operation of this segment done); '
            .. 'free = start + duration.',
            'start = math.max(引擎空闲时刻, 本段前一个操作完成时刻)；free = start + 时长。'),
        },
        check = function(env)
          local ok, f = lesson.need(env, 'pipeline_ms')
          if not ok then return false, f end
          for _, segs in ipairs(random_segments()) do
            local good, msg = try_pipeline(f, segs, say('for these segments', '对这些段'))
            if not good then return false, msg end
          end
          local runs = { { segments = 5, bytes = 4 * 5003 },
                         { segments = 7, bytes = 4 * 7 * 3000, pcie_gbps = 300 } }
          for _, run in ipairs(runs) do
            local info = model_run(run)
            model_agrees(info)
            local where = say(string.format('for the model\'s %d segments', run.segments),
              string.format('对模型的 %d 段', run.segments))
            local good, msg = try_pipeline(f, durations(info), where)
            if not good then return false, msg end
          end
          return true, say('Right: each engine is a queue, and an operation starts when both its '
            .. 'engine and its stream are ready.',
            '对：每个引擎是一个队列，操作要等引擎和它所在的流都就绪才开始。')
        end,
        solution = [[
function pipeline_ms(segs)
  local free_in, free_k, free_out = 0, 0, 0
  for _, s in ipairs(segs) do
    free_in = free_in + s.h2d
    free_k = math.max(free_k, free_in) + s.kernel
    free_out = math.max(free_out, free_k) + s.d2h
  end
  return free_out
end]],
        wrong = {
          [[
function pipeline_ms(segs)
  local h, out = 0, 0
  for _, s in ipairs(segs) do
    h = h + s.h2d
    out = math.max(out, h + s.kernel) + s.d2h
  end
  return out
end]],
          [[
function pipeline_ms(segs)
  local n, first, most = #segs, segs[1], 0
  for _, s in ipairs(segs) do most = math.max(most, s.h2d, s.kernel, s.d2h) end
  return first.h2d + first.kernel + first.d2h + (n - 1) * most
end]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('One copy engine and the order of issue', '只有一个复制引擎时：发出的顺序'),
      text = say([[
The lecture's "view closer to reality": on earlier GPUs one copy engine served both directions,
and the driver fed it in the order the host issued the copies. With the textbook's depth-first
loop (A.0, B.0, kernel 0, C.0, then A.1, B.1, ...), C.0 waits for kernel 0 and blocks A.1 and B.1
behind it in the copy engine's queue: the next segment's inputs cannot come in while the engine
waits. Issuing breadth-first (all the inputs first, then the kernels, then the results) or
hardware with several queues per engine (Hyper-Q) avoids it.

Lumen's model lets a free engine start the ready operation issued first, as breadth-first issue
does. With one copy engine, copies in and out take turns on it: the overlapped time is the copies'
alone, the engine never rests, and only the kernels hide behind the copies. The picture: the
engine rows under each schedule.]],
        [[
课上“更接近实际的视角”：早期的 GPU 只有一个复制引擎，两个方向共用，驱动按主机发出复制的顺序
喂给它。按教材里深度优先的循环（A.0、B.0、内核 0、C.0，然后 A.1、B.1……）发出时，C.0 要等
内核 0 算完，而它在复制引擎的队列里挡在 A.1、B.1 前面：引擎在等，下一段的输入就进不来。改成
广度优先发出（先发所有输入，再发所有内核，最后发所有结果），或者用每个引擎有多个队列的硬件
（Hyper-Q），就能避免。

Lumen 的模型让空闲的引擎先执行“已就绪且最先发出”的操作，效果和广度优先发出相同。只有一个复制
引擎时，传入和传回轮流使用它：重叠时间就等于光是传输所需的时间，引擎一刻不停，能藏到传输
后面的只有内核。画面：每种调度下面那几行是引擎。]]),
      code = [[
for _, engines in ipairs({2, 1}) do
  local _, i = kernels.streams{segments = 4, copy_engines = engines, backend = 'emu'}
  print(string.format('%d copy engine%s: serial %.3f us, overlapped %.3f us, %.2fx', engines,
    engines == 1 and ' ' or 's', i.counters.serial_ms * 1e3, i.counters.overlapped_ms * 1e3,
    i.counters.speedup))
  info = i
end
local c = info.counters
print(string.format('copies alone on one engine: %.3f us', (c.h2d_ms + c.d2h_ms) * 1e3))
]],
      expect = [[
2 copy engines: serial 35.553 us, overlapped 24.617 us, 1.44x
1 copy engine : serial 35.553 us, overlapped 31.457 us, 1.13x
copies alone on one engine: 31.457 us
]],
      scene = function(env) return env.info end,
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('How many segments pay?', '分多少段才划算？'),
      text = say([[
More segments shorten the pipeline's fill and drain, so the overlapped time approaches the busiest
engine's total. But a segment is also a kernel launch, and a launch of few blocks cannot fill the
GPU: with 8 SMs, a segment of 2 blocks leaves 6 idle and still takes the latency of one wave of
loads and stores. The model counts that (its kernel time is the emulated kernel's modelled
cycles), so at some point splitting further makes the kernels, and then the whole, slower. On a
real GPU every call also has an overhead, which the model leaves out (docs/trace.md).]],
        [[
段越多，流水线填充和排空的时间就越短，重叠时间就越接近最忙引擎的总时间。但每一段也是一次
内核启动，而块数太少的启动填不满 GPU：8 个 SM 时，只有 2 个块的段让 6 个 SM 闲着，却仍然要付出
一轮访存的延迟。模型把这一点算进去了（内核时间就是模拟出的内核周期数），所以分到某个程度后，
再分下去会让内核、进而让整体变慢。真实的 GPU 上每次调用还有固定开销，模型没有计入
（见 docs/trace.md）。]]),
      code = [[
for _, n in ipairs({1, 2, 4, 8}) do
  local _, i = kernels.streams{segments = n, backend = 'emu', trace = false}
  print(string.format('%3d segments: kernels %.3f us in all, overlapped %.3f us, %.2fx', n,
    i.counters.kernel_ms * 1e3, i.counters.overlapped_ms * 1e3, i.counters.speedup))
end
]],
      expect = [[
  1 segments: kernels 4.096 us in all, overlapped 35.553 us, 1.00x
  2 segments: kernels 4.096 us in all, overlapped 28.262 us, 1.26x
  4 segments: kernels 4.096 us in all, overlapped 24.617 us, 1.44x
  8 segments: kernels 4.293 us in all, overlapped 22.819 us, 1.57x
]],
      exercise = {
        prompt = say([[
For this vector (65,536 floats, the model's defaults: 25 GB/s, 2 copy engines, 8 SMs), which of
1, 2, 4, 8, 16, 32, 64, 128 segments gives the shortest overlapped time? Set best_segments to it
(or :check N). Run kernels.streams for the counts the code did not try.]],
          [[
对这个向量（65,536 个 float，模型的默认值：25 GB/s、2 个复制引擎、8 个 SM），在 1、2、4、8、
16、32、64、128 段里，哪个段数的重叠时间最短？把 best_segments 设为它（或者 :check N）。
代码没试过的段数，请自己用 kernels.streams 跑一跑。]]),
        hints = {
          say('Extend the loop of the code to 16, 32, 64 and 128.',
            '把代码里的循环扩展到 16、32、64、128。'),
          say('Watch kernel_ms: when it starts to grow, the launches have too few blocks.',
            '盯住 kernel_ms：它开始变大时，每次启动的块就太少了。'),
        },
        check = function(env, answer)
          local v = answer
          if v == nil then v = env.best_segments end
          return best_check(v)
        end,
        solution = [[best_segments = 32]],
        wrong = { [[best_segments = 128]], [[best_segments = 4]], [[best_segments = 16]] },
      },
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('On a real GPU: measured with CUDA events', '真实 GPU 上：用 CUDA 事件测量'),
      text = say([[
Without backend = 'emu', kernels.streams runs on a GPU when there is one: pinned host buffers,
cudaMemcpyAsync and the vector add in real streams, and CUDA events recorded around every
segment's copies and kernel, so the timeline shows what the GPU did (a copy that waited for its
engine shows as a longer copy). Without a GPU it is the model, and the output says which: every
time below names where it came from. To wait for the work of one stream the host calls
cudaStreamSynchronize(stream); cudaDeviceSynchronize() waits for all of them.

To explore further: lumen -e "viz.scene('timeline', {segments = 3, copy_engines = 1})" shows the
scene alone, and kernels.streams{segments = 8, bytes = 2^26} runs the GPU's default size.]],
        [[
不写 backend = 'emu' 时，只要有 GPU，kernels.streams 就在 GPU 上运行：锁页的主机缓冲区、
cudaMemcpyAsync 和放在真实流里的向量加法，并在每段的复制和内核前后记录 CUDA 事件，所以时间线
显示的是 GPU 真正做了什么（等待引擎的复制会显得更长）。没有 GPU 时用的是模型，输出会说明是
哪一种：下面每个时间都注明了来源。主机要等一个流的工作做完，调用 cudaStreamSynchronize(stream)；
cudaDeviceSynchronize() 等所有流。

想继续探索：lumen -e "viz.scene('timeline', {segments = 3, copy_engines = 1})" 单独显示这个场景，
kernels.streams{segments = 8, bytes = 2^26} 用 GPU 上的默认大小运行。]]),
      code = [[
C, info = kernels.streams{segments = 4}        -- backend 'auto': CUDA with a GPU, else the emulator
print(info.label)
local c = info.counters
print(string.format('%d KiB per vector: serial %.4f ms, overlapped %.4f ms, speedup %.2fx',
  c.vector_bytes >> 10, c.serial_ms, c.overlapped_ms, c.speedup))
if info.source == 'cuda' then
  print(string.format('measured with CUDA events; pinned host memory: %s; %.1f GB/s overlapped',
    c.pinned == 1 and 'yes' or 'no', c.gbps))
else
  print('no GPU here: the modelled timeline (' .. info.provenance .. ');'
    .. ' with a GPU, CUDA events measure it')
end
]],
      scene = function(env) return env.info end,
    },
  },
}
