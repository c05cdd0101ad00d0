--[[
ECE408 Lecture 26: the course review — the basic patterns once more on the emulator, tiled 2-D
convolution with its halo and constant-memory mask (global loads per output, naive against
tiled, the halo exercise), tiled matrix multiplication, control divergence and SIMD efficiency
(the divergence scene, the branch exercise). Format: docs/lessons.md.
]]
local say = lesson.say

local function efficiency(k, a, b)
  if k <= 0 or k >= 32 or a == 0 or b == 0 then return 1 end
  return (k * a + (32 - k) * b) / (32 * (a + b))
end

return {
  title = say('Review: the basic parallel patterns', '课程回顾：基本并行模式'),
  course = 'ece408',
  lecture = say('ECE408 Lecture 26: Course review', 'ECE408 第 26 讲：课程回顾'),
  summary = say([[The course's patterns side by side, then three that every GPU programmer meets
again: tiled convolution with halo cells and a constant mask, tiled matrix multiplication, and
control divergence measured as SIMD efficiency.]],
    [[把课程里的模式放在一起再看一遍，然后重温每个 GPU 程序员都会反复遇到的三个：带光环单元和
常量掩码的分块卷积、分块矩阵乘法，以及用 SIMD 效率来衡量的控制发散。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('What the course built', '这门课做了什么'),
      text = say([[
The basic patterns: matrix multiplication, convolution, reduction, scan, histogram, sparse
representations. The optimisations applied to them: threads, memory (shared, constant,
registers), coalescing, divergence, task management, profiling. The programming systems: CUDA,
OpenACC, and OpenCL, DPC++, HIP, OpenMP alongside.

What made it work is the bulk synchronous model: barriers split the code into phases, and threads
share data only through what a phase wrote before the barrier. The code runs each pattern once
on the SIMT emulator and prints its phases (barriers per block) and its modelled time.]],
        [[
基本计算模式：矩阵乘法、卷积、归约、扫描、直方图、稀疏表示。对它们做的并行优化：线程、内存
（共享内存、常量内存、寄存器）、访存合并、线程发散、任务管理、性能分析。编程系统：CUDA、
OpenACC，以及 OpenCL、DPC++、HIP、OpenMP。

让这一切行得通的是批量同步（bulk synchronous）模型：屏障把代码分成一个个时间区段（phase），
线程之间只通过上一个区段在屏障前写下的数据来共享。下面的代码在 SIMT 模拟器上把每个模式各跑
一次，打印它的区段数（每块的屏障数）和模型时间。]]),
      code = [[
local runs = {
  {'reduction', function() return kernels.reduce(lm.rand(1024), {algo = 'convergent', backend = 'emu'}) end},
  {'scan', function() return kernels.scan(lm.rand(1024), {algo = 'brent-kung', backend = 'emu'}) end},
  {'histogram', function() return kernels.histogram('programming massively parallel processors', 7, {backend = 'emu'}) end},
  {'matmul', function() return kernels.matmul(lm.rand(32, 32), lm.rand(32, 32), {algo = 'tiled', tile = 8, backend = 'emu'}) end},
  {'convolution', function() return kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), {algo = 'tiled', tile = 8, backend = 'emu'}) end},
  {'spmv', function() return kernels.spmv(kernels.sparse(lm.eye(64)), lm.rand(64), {format = 'csr', backend = 'emu'}) end},
}
print(string.format('%-12s %9s %9s %16s', 'pattern', 'threads', 'barriers', 'modelled cycles'))
for _, r in ipairs(runs) do
  local _, info = r[2]()
  print(string.format('%-12s %9d %9d %16d', r[1], info.counters.threads, info.counters.barriers,
    info.counters.modelled_cycles))
end
print('(' .. select(2, kernels.reduce(lm.rand(8), {backend = 'emu'})).provenance .. ')')
]],
      scene = { 'reduce', n = 64 },
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Tiled 2-D convolution: halo cells and a constant mask', '分块二维卷积：光环单元与常量掩码'),
      text = say([[
Each output pixel of a convolution with an M x M mask (M = 2r + 1) reads the M x M input pixels
around it, so neighbouring outputs read mostly the same inputs. The tiled kernel lets a block
compute a T x T output tile after loading, once, the input tile it needs into shared memory:
T x T cells plus a border r cells wide on every side, the halo cells, (T + M - 1)^2 in all. The
mask is the same for every thread and never changes, so it lives in constant memory, whose cache
broadcasts one address to a whole warp.

Global loads per output pixel drop from about M^2 (naive) to (T + M - 1)^2 / T^2 (tiled, the
textbook's count; fewer at the image's border, where ghost cells are not loaded). The picture is
one tiled run, 16 x 16 with a 5 x 5 mask and T = 8: step through a block loading its input tile.]],
        [[
用 M x M 掩码（M = 2r + 1）做卷积时，每个输出像素要读它周围 M x M 个输入像素，所以相邻输出读的
输入大部分相同。分块内核让一个块先把它需要的输入分块一次性载入共享内存，再计算 T x T 的输出
分块：输入分块是 T x T 个单元，外加四周 r 个单元宽的一圈，即光环单元（halo cells），一共
(T + M - 1)^2 个。掩码对每个线程都一样、也从不改变，所以放在常量内存里，它的缓存能把同一个
地址广播给整个 warp。

每个输出像素的全局内存读取次数，从大约 M^2 次（朴素版本）降到 (T + M - 1)^2 / T^2 次（分块版本，
教科书的算法；图像边缘处更少，因为那里的幽灵单元不用读）。画面是一次分块运行：16 x 16 的图像、5 x 5
的掩码、T = 8，单步看一个块如何载入它的输入分块。]]),
      code = [[
img = lm.rand(32, 32)
print(string.format('%-6s %4s %16s %22s', 'algo', 'M', 'loads per output', 'textbook (T + M - 1)^2/T^2'))
for _, m in ipairs({3, 5, 7}) do
  for _, algo in ipairs({'naive', 'tiled'}) do
    local _, run = kernels.conv2d(img, lm.rand(m, m), {algo = algo, tile = 8, backend = 'emu'})
    local textbook = algo == 'tiled' and string.format('%.2f', (8 + m - 1)^2 / 64) or string.format('~%d', m * m)
    print(string.format('%-6s %4d %16.2f %22s', algo, m, run.counters.global_loads_per_output, textbook))
  end
end
print('(emulated; T = 8; the naive kernel also reads the mask from global memory)')
]],
      scene = function()
        return select(2, kernels.conv2d(lm.rand(16, 16), lm.rand(5, 5), { algo = 'tiled', tile = 8, backend = 'emu' }))
      end,
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('How big is the halo?', '光环有多大？'),
      text = say([[
In Lumen's tiled kernel (the lecture's strategy that loads the whole input tile) a block has one
thread per input-tile cell: (T + M - 1)^2 threads, of which the T^2 in the middle also compute
an output. The other threads only load halo cells. How many are they? The emulator's
`info.counters.block` (threads per block) lets you check your formula.]],
        [[
在 Lumen 的分块内核里（课上那种把整个输入分块都载入的做法），一个块里每个输入分块单元对应
一个线程：一共 (T + M - 1)^2 个线程，中间的 T^2 个还要计算一个输出，其余线程只负责载入光环单元。
它们有多少个？模拟器的 `info.counters.block`（每块线程数）可以用来验证你的公式。]]),
      code = [[
local _, run = kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), {algo = 'tiled', tile = 8, backend = 'emu'})
print(string.format('T = 8, M = 5: %d threads per block, %d of them compute an output', run.counters.block, 8 * 8))
-- write halo_cells(T, M): the halo cells of the input tile for a T x T output tile, M x M mask
function halo_cells(T, M)
  return 0  -- TODO
end
]],
      expect = 'T = 8, M = 5: 144 threads per block, 64 of them compute an output\n',
      exercise = {
        prompt = say([[
Write `halo_cells(T, M)`: the number of halo cells in the input tile of a T x T output tile with
an M x M mask (M odd). It is compared with the emulator's tiles for several T and M.]],
          [[
写出 `halo_cells(T, M)`：输出分块为 T x T、掩码为 M x M（M 为奇数）时，输入分块里光环单元的个数。
检查时会和模拟器在若干个 T、M 下的分块比较。]]),
        hints = {
          say('The input tile is the output tile grown by r = (M - 1) / 2 cells on each side.',
              '输入分块就是把输出分块的每一边都向外扩 r = (M - 1) / 2 个单元。'),
          say('halo = input tile - output tile; do not forget the four corners.', '光环 = 输入分块 - 输出分块；别忘了四个角。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'halo_cells')
          if not ok then return false, fn end
          local cases = { { 8, 3 }, { 4, 5 }, { ({ 4, 8, 16 })[math.random(1, 3)], ({ 3, 5, 7 })[math.random(1, 3)] } }
          for _, c in ipairs(cases) do
            local T, M = c[1], c[2]
            local _, run = kernels.conv2d(lm.rand(2 * T, 2 * T), lm.rand(M, M), { algo = 'tiled', tile = T, backend = 'emu' })
            local want = run.counters.block - T * T
            local rok, got = lesson.try(fn, T, M)
            if not rok then return false, got end
            got = lesson.number(got)
            if got ~= want then
              local r = (M - 1) // 2
              local why = got == 4 * T * r and say('that is the four sides; the corners add 4·r^2 more',
                                                   '这只是四条边；四个角还要再加 4·r^2')
                or got == run.counters.block and say('that is the whole input tile; the T x T middle is not halo',
                                                      '这是整个输入分块；中间的 T x T 不算光环')
                or say(string.format('the input tile is %d x %d', T + M - 1, T + M - 1),
                       string.format('输入分块是 %d x %d', T + M - 1, T + M - 1))
              return false, say(string.format('for T = %d, M = %d the emulator runs %d threads per block, so %d halo cells; halo_cells gives %s: %s',
                  T, M, run.counters.block, want, lesson.show(got), why.en),
                string.format('T = %d、M = %d 时模拟器每块 %d 个线程，所以光环单元有 %d 个；halo_cells 给出 %s：%s',
                  T, M, run.counters.block, want, lesson.show(got), why.zh))
            end
          end
          return true, say('it matches the emulator\'s tiles', '和模拟器的分块一致')
        end,
        solution = [[
function halo_cells(T, M)
  local side = T + M - 1
  return side * side - T * T
end
]],
        wrong = {
          [[
function halo_cells(T, M)
  local r = (M - 1) // 2
  return 4 * T * r
end
]],
          [[
function halo_cells(T, M)
  return (T + M - 1) ^ 2
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Tiled matrix multiplication', '分块矩阵乘法'),
      text = say([[
The first tiling of the course: to compute C = A·B, a block loads a T x T tile of A and one of B
into shared memory, every thread of the block multiplies and adds from there, the block moves to
the next pair of tiles after a barrier, and so on across the shared dimension. Each element of A
and B loaded from global memory is then used T times instead of once: the global loads fall from
2n^3 (naive, n x n matrices) to 2n^3 / T. The code counts them on the emulator for T = 2, 4, 8;
the picture follows the tiles of a 16 x 16 product with T = 4 phase by phase.]],
        [[
课程里的第一种分块：计算 C = A·B 时，一个块把 A 的一个 T x T 分块和 B 的一个分块载入共享内存，
块内每个线程都从共享内存里取数做乘加，过一道屏障后块再换下一对分块，沿着公共维度一直做下去。
这样从全局内存读进来的 A、B 的每个元素都被用了 T 次，而不是一次：全局读取从 2n^3 次（朴素版本，
n x n 矩阵）降到 2n^3 / T 次。下面的代码在模拟器上对 T = 2、4、8 数一数；画面按阶段跟踪一个
16 x 16、T = 4 的乘法里分块的移动。]]),
      code = [[
local a, b = lm.rand(32, 32), lm.rand(32, 32)
local _, naive = kernels.matmul(a, b, {algo = 'naive', backend = 'emu'})
print(string.format('naive   : %6d global loads (2n^3 = %d)', naive.counters.global_loads, 2 * 32^3))
for _, t in ipairs({2, 4, 8}) do
  local c, run = kernels.matmul(a, b, {algo = 'tiled', tile = t, backend = 'emu'})
  print(string.format('tile %d  : %6d global loads (2n^3/T = %d), right: %s', t, run.counters.global_loads,
    2 * 32^3 // t, tostring(lm.allclose(c, a:matmul(b), 1e-4, 1e-4))))
end
]],
      expect = 'naive   :  65536 global loads (2n^3 = 65536)\n'
        .. 'tile 2  :  32768 global loads (2n^3/T = 32768), right: true\n'
        .. 'tile 4  :  16384 global loads (2n^3/T = 16384), right: true\n'
        .. 'tile 8  :   8192 global loads (2n^3/T = 8192), right: true\n',
      scene = function()
        return select(2, kernels.matmul(lm.rand(16, 16), lm.rand(16, 16), { algo = 'tiled', tile = 4, backend = 'emu' }))
      end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Control divergence', '控制发散'),
      text = say([[
A warp's 32 threads issue one instruction at a time. When a branch sends some lanes one way and
the others the other way, the warp runs both paths one after the other, each with only its lanes
active; the others idle until the paths reconverge. SIMD efficiency measures it: active lanes /
issued lanes over the divergent region. A branch that splits even and odd lanes, or the two
halves of a warp, halves it; a branch that all lanes of a warp take the same way (a condition on
the warp index) costs nothing. The picture draws each warp as a row of 32 lanes over time.]],
        [[
一个 warp 的 32 个线程一次发射同一条指令。当一个分支让一部分通道走这边、另一部分走那边时，warp
会把两条路径一前一后都执行一遍，每次只有走这条路径的通道是活跃的，其余的闲着，直到两条路径
重新汇合。SIMD 效率衡量的就是这一点：在发散区间里，活跃通道数 / 发射的通道数。按奇偶通道、或按
warp 的前后两半来分的分支，会让效率减半；而一个 warp 里所有通道都走同一边的分支（条件只依赖
warp 编号）则没有代价。画面把每个 warp 画成一行 32 个通道，横轴是时间。]]),
      code = [[
for _, pattern in ipairs({'even-odd', 'half-warp', 'warp', 'none'}) do
  local _, run = kernels.divergence{pattern = pattern, backend = 'emu'}
  print(string.format('%-10s SIMD efficiency %.2f over the divergent region (%s)', pattern,
    run.counters.simd_efficiency, run.provenance))
end
]],
      expect = 'even-odd   SIMD efficiency 0.50 over the divergent region (emulated, modelled cycles)\n'
        .. 'half-warp  SIMD efficiency 0.50 over the divergent region (emulated, modelled cycles)\n'
        .. 'warp       SIMD efficiency 1.00 over the divergent region (emulated, modelled cycles)\n'
        .. 'none       SIMD efficiency 1.00 over the divergent region (emulated, modelled cycles)\n',
      scene = { 'divergence', pattern = 'even-odd' },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('The efficiency of a branch', '一个分支的效率'),
      text = say([[
Take one warp, its lanes numbered lane = threadIdx.x % 32, and the branch

  if (lane < k) { path A: a instructions } else { path B: b instructions }

For 0 < k < 32 the warp issues a + b instructions of 32 lanes each; k lanes are active on A's,
32 - k on B's. For k = 0 or 32 there is only one path, and nothing is wasted. The even-odd split
of the previous step is k = 16 in effect, with paths of equal length: (16a + 16a) / (32·2a) =
0.5.]],
        [[
取一个 warp，它的通道编号为 lane = threadIdx.x % 32，再取这样一个分支

  if (lane < k) { 路径 A：a 条指令 } else { 路径 B：b 条指令 }

当 0 < k < 32 时，warp 要发射 a + b 条指令，每条 32 个通道；A 的指令上有 k 个通道活跃，B 的指令上
有 32 - k 个。k = 0 或 32 时只有一条路径，没有浪费。上一步按奇偶划分的情形相当于 k = 16、两条
路径一样长：(16a + 16a) / (32·2a) = 0.5。]]),
      code = [[
-- write branch_efficiency(k, a, b): the SIMD efficiency of that branch over the divergent region
function branch_efficiency(k, a, b)
  return 1  -- TODO
end
print('even-odd, paths of 3: ' .. branch_efficiency(16, 3, 3))
]],
      exercise = {
        prompt = say([[
Write `branch_efficiency(k, a, b)`: the SIMD efficiency (0 to 1) of the branch above for 0 <= k
<= 32 lanes taking path A of a instructions and the others path B of b instructions (a, b >= 1).]],
          [[
写出 `branch_efficiency(k, a, b)`：上面这个分支的 SIMD 效率（0 到 1），其中 0 <= k <= 32 个通道走
a 条指令的路径 A，其余通道走 b 条指令的路径 B（a、b >= 1）。]]),
        hints = {
          say('Count lane-instructions: active ones k·a + (32 - k)·b, issued ones 32·(a + b).',
              '按“通道·指令”来数：活跃的是 k·a + (32 - k)·b，发射的是 32·(a + b)。'),
          say('When k is 0 or 32 only one path is issued.', 'k 为 0 或 32 时只发射一条路径。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'branch_efficiency')
          if not ok then return false, fn end
          local cases = { { 16, 3, 3 }, { 0, 4, 9 }, { 32, 5, 2 }, { 8, 10, 10 } }
          for _ = 1, 4 do cases[#cases + 1] = { math.random(1, 31), math.random(1, 12), math.random(1, 12) } end
          for _, c in ipairs(cases) do
            local k, a, b = c[1], c[2], c[3]
            local rok, got = lesson.try(fn, k, a, b)
            if not rok then return false, got end
            got = lesson.number(got)
            local want = efficiency(k, a, b)
            if got == nil or math.abs(got - want) > 1e-9 then
              local why = (k == 0 or k == 32) and say('all lanes take one path: nothing is idle', '所有通道都走同一条路径：没有通道闲着')
                or (got and math.abs(got - k / 32) < 1e-9) and say('both paths are issued, each to all 32 lanes', '两条路径都会发射，每次都占满 32 个通道')
                or say('active lane-instructions k·a + (32 - k)·b over issued 32·(a + b)',
                       '活跃的“通道·指令” k·a + (32 - k)·b，除以发射的 32·(a + b)')
              return false, say(string.format('branch_efficiency(%d, %d, %d) gives %s, expected %s: %s', k, a, b,
                  lesson.show(got), lesson.show(want), why.en),
                string.format('branch_efficiency(%d, %d, %d) 给出 %s，应为 %s：%s', k, a, b, lesson.show(got), lesson.show(want), why.zh))
            end
          end
          return true, say('right, including the branches that do not diverge', '对，包括不发散的分支')
        end,
        solution = [[
function branch_efficiency(k, a, b)
  if k == 0 or k == 32 then return 1 end
  return (k * a + (32 - k) * b) / (32 * (a + b))
end
]],
        wrong = {
          [[
function branch_efficiency(k, a, b)
  return (k * a + (32 - k) * b) / (32 * (a + b))
end
]],
          [[
function branch_efficiency(k, a, b)
  if k == 0 or k == 32 then return 1 end
  return 0.5
end
]],
        },
      },
    },
  },
}
