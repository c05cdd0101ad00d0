--[[
ECE408 puzzles: GPU-Puzzles (Sasha Rush) in their order — map, zip, guards, 2-D map, broadcast,
blocks, 2-D blocks, shared memory, pooling, dot product, 1-D convolution, prefix sum, axis sum,
matmul — as kernels written in Lua and run on Lumen's SIMT emulator (kernels.launch), each checked
on random inputs against a CPU reference and scored like GPU-Puzzles (the most global and shared
reads and writes of one thread) plus modelled cycles. The puzzles themselves (tasks, launches,
targets, reference solutions, the mistakes the checks refuse) are lua/lumen/puzzles.lua; this
file is the teaching around them. Format: docs/lessons.md.
]]
local say = lesson.say
local P = kernels.puzzles

-- The exercise of puzzle n: the student's kernel is the global `name`.
local function exercise(n, name, prompt, hints)
  return {
    prompt = prompt,
    hints = hints,
    check = function(env)
      local ok, fn = lesson.need(env, name)
      if not ok then return false, fn end
      local solved, msg, score = P.check(n, fn, { text = true })
      if score and score.info then lesson.trace(score.info) end -- :check draws the student's run
      return solved, msg
    end,
    solution = P.solution(n, name),
    wrong = P.wrong(n, name),
    equivalent = P.equivalent(n),
  }
end

local function show_info(env) return env.info end

return {
  title = say('GPU puzzles: from map to matmul', 'GPU 谜题：从映射到矩阵乘法'),
  course = 'ece408',
  lecture = say('ECE408, before the patterns: CUDA threads, blocks and shared memory (after GPU-Puzzles)',
    'ECE408 各种并行模式之前：CUDA 的线程、线程块与共享内存（改编自 GPU-Puzzles）'),
  summary = say([[Fourteen small kernels, one idea each: a thread per element, guards, blocks and
grids in one and two dimensions, shared memory and barriers, then the patterns of the course in
miniature. Each is run on the SIMT emulator, checked on random inputs and scored by its memory
accesses per thread and its modelled cycles.]],
    [[十四个小核函数，每个只讲一个概念：一个线程对应一个元素、边界保护、一维和二维的线程块与
网格、共享内存和屏障，然后是本课程几种并行模式的缩影。每一个都在 SIMT 模拟器上运行，用随机
输入检查，并按每个线程的访存次数和模拟周期打分。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('A kernel in Lua, one thread at a time', '用 Lua 写核函数：每个线程跑一遍'),
      text = say([[
A CUDA kernel is one function that every thread of a grid runs. The threads are alike except for
their indices, so each uses them to pick its part of the work. Lumen runs kernels written in Lua
on its SIMT emulator: kernels.launch(fn, {grid = ..., block = ..., args = {...}}) calls fn(t, ...)
once for each thread, and t holds what CUDA C calls threadIdx, blockIdx, blockDim and gridDim
(t.threadIdx.x, ...).

Tensors given in args reach the kernel as device arrays. Inside a kernel they are indexed from 0,
as in CUDA C, and not from 1 as everywhere else in Lua: a[0] is the first element. Every read and
write goes through the emulator, which checks it, counts it, models its cycles and draws it.

The code runs one block of 8 threads, each writing its own index. In the picture the threads are
a row of cells, the array below them, and each arrow is one write. In the puzzles that follow, the
arrays a kernel only reads (its inputs) are drawn above the threads, with an arrow into a thread
for each read; shared arrays and outputs below.]],
        [[
CUDA 的核函数（kernel）是一个由网格里所有线程共同执行的函数。线程之间除了编号之外没有区别，
所以每个线程都靠自己的编号来挑出属于自己的那份工作。Lumen 可以在 SIMT 模拟器上运行用 Lua
写的核函数：kernels.launch(fn, {grid = ..., block = ..., args = {...}}) 会对每个线程调用一次
fn(t, ...)，t 里装着 CUDA C 中的 threadIdx、blockIdx、blockDim 和 gridDim（写作
t.threadIdx.x 等）。

args 里传入的张量，在核函数里就是设备上的数组。在核函数内部，数组和 CUDA C 一样从 0 开始
编号，而不是像 Lua 其他地方那样从 1 开始：a[0] 是第一个元素。每一次读写都经过模拟器，它会
检查、计数、估算周期，并把它画出来。

下面的代码启动一个 8 线程的线程块，每个线程写下自己的编号。图中上面一排格子是线程，下面是
数组，每个箭头就是一次写入。后面的谜题里，核函数只读不写的数组（输入）画在线程上方，每读一次
就有一个箭头指向线程；共享内存数组和输出数组画在下方。]]),
      code = [[
ids = lm.zeros(8)
info = kernels.launch(function(t, out)
  local i = t.threadIdx.x
  out[i] = i
end, { block = 8, args = { ids } })
print(ids)
print(info.counters.global_stores .. ' global stores (' .. info.provenance .. ')')
]],
      scene = show_info,
    },
    -- 2: map ---------------------------------------------------------------------------------
    {
      title = say('Puzzle 1: map', '谜题 1：映射'),
      text = say([[
The simplest kernel there is: one thread per element, each doing the same small job on its own
element. Here: out[i] = a[i] + 10. Thread i finds its element at i = t.threadIdx.x.

Each puzzle step prints the task, defines a kernel that does nothing yet, and runs it on the
puzzle's input (kernels.puzzles.show): out stays 0 until the kernel writes it. Complete the
kernel at the prompt (or with :edit), then :check. The check runs it on fresh random inputs and
scores it like GPU-Puzzles: the most global reads and writes, and shared reads and writes, that
one thread makes, and the modelled cycles against the reference solution.]],
        [[
最简单的核函数：一个线程负责一个元素，每个线程对自己的元素做同一件小事。这里是
out[i] = a[i] + 10。第 i 个线程用 i = t.threadIdx.x 找到自己的元素。

每道谜题的这一步都会打印题目、定义一个还什么都不做的核函数，并在题目给定的输入上运行它
（kernels.puzzles.show）：核函数写入之前，out 一直是 0。请在提示符下（或用 :edit）补全核函数，
然后 :check。检查会用新的随机输入运行它，并像 GPU-Puzzles 那样打分：单个线程最多做了几次
全局内存读写、几次共享内存读写，以及与参考解相比的模拟周期。]]),
      code = [[
print(kernels.puzzles.describe(1))
map_kernel = function(t, out, a)
  local i = t.threadIdx.x
  -- FILL ME IN (one line)
end
info, report = kernels.puzzles.show(1, map_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(1, 'map_kernel',
        say('Complete map_kernel(t, out, a) so that out[i] = a[i] + 10.',
          '补全 map_kernel(t, out, a)，使得 out[i] = a[i] + 10。'),
        { say('Thread i reads a[i] and writes out[i]; i is t.threadIdx.x.',
            '第 i 个线程读 a[i]、写 out[i]；i 就是 t.threadIdx.x。'),
          say('Indices start at 0 in a kernel: a[i], not a[i + 1].', '核函数里下标从 0 开始：写 a[i]，不是 a[i + 1]。') }),
    },
    -- 3: zip ---------------------------------------------------------------------------------
    {
      title = say('Puzzle 2: zip', '谜题 2：逐元素相加'),
      text = say([[
Two inputs now, still one thread per element: out[i] = a[i] + b[i]. A thread reads one element
of each array at its own index, so two global reads per thread are the target.]],
        [[
现在有两个输入，仍然是一个元素一个线程：out[i] = a[i] + b[i]。每个线程在自己的下标处各读
一个元素，所以目标是每个线程两次全局读。]]),
      code = [[
print(kernels.puzzles.describe(2))
zip_kernel = function(t, out, a, b)
  local i = t.threadIdx.x
  -- FILL ME IN (one line)
end
info, report = kernels.puzzles.show(2, zip_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(2, 'zip_kernel',
        say('Complete zip_kernel(t, out, a, b) so that out[i] = a[i] + b[i].',
          '补全 zip_kernel(t, out, a, b)，使得 out[i] = a[i] + b[i]。'),
        { say('Both reads use the same index i = t.threadIdx.x.', '两次读用的是同一个下标 i = t.threadIdx.x。') }),
    },
    -- 4: guards ------------------------------------------------------------------------------
    {
      title = say('Puzzle 3: guards', '谜题 3：边界保护'),
      text = say([[
Blocks come in fixed sizes (a multiple of 32 on a real GPU), data does not: a launch usually has
a few threads more than elements. Those threads must not touch memory past the end. The usual
guard is `if i < size then ... end` around the work. Without it the emulator stops the kernel
as compute-sanitizer would: an out-of-bounds load, naming the thread, the array and the index.]],
        [[
线程块的大小是固定的（在真正的 GPU 上通常是 32 的倍数），数据的长度却不是：一次启动里往往
会多出几个线程。这些线程绝不能访问数组末尾之外的内存。常见的做法是把工作包在
`if i < size then ... end` 里。如果不加保护，模拟器会像 compute-sanitizer 一样停下这个
核函数：报告一次越界读，并指出是哪个线程、哪个数组、哪个下标。]]),
      code = [[
print(kernels.puzzles.describe(3))
guard_kernel = function(t, out, a, size)
  local i = t.threadIdx.x
  -- FILL ME IN (roughly one line)
end
info, report = kernels.puzzles.show(3, guard_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(3, 'guard_kernel',
        say('Complete guard_kernel(t, out, a, size): out[i] = a[i] + 10 for i < size; the other threads do nothing.',
          '补全 guard_kernel(t, out, a, size)：当 i < size 时 out[i] = a[i] + 10，其余线程什么都不做。'),
        { say('The block has 8 threads; size can be anything from 1 to 8.', '线程块有 8 个线程，size 可以是 1 到 8 之间的任何数。'),
          say('Put the whole statement inside if i < size then ... end.', '把整条语句放进 if i < size then ... end 里。') }),
    },
    -- 5: map 2-D -----------------------------------------------------------------------------
    {
      title = say('Puzzle 4: map in 2-D', '谜题 4：二维映射'),
      text = say([[
Blocks can be 2-D (and 3-D): block = {3, 3} gives threads with t.threadIdx.x and t.threadIdx.y,
each from 0 to 2. Matrices are stored row after row, so element (row, col) of a size x size
matrix is a[row * size + col]. By convention x runs along a row, so it is the column, and y is
the row. The block is bigger than the matrix: guard both.]],
        [[
线程块可以是二维的（也可以是三维的）：block = {3, 3} 给出的线程有 t.threadIdx.x 和
t.threadIdx.y，取值都是 0 到 2。矩阵按行依次存放，所以 size x size 矩阵的 (row, col) 元素
是 a[row * size + col]。按照惯例，x 沿着一行变化，所以它是列号，y 是行号。线程块比矩阵大：
两个方向都要做边界保护。]]),
      code = [[
print(kernels.puzzles.describe(4))
map2d_kernel = function(t, out, a, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  -- FILL ME IN (roughly one line)
end
info, report = kernels.puzzles.show(4, map2d_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(4, 'map2d_kernel',
        say('Complete map2d_kernel(t, out, a, size): out = a + 10 for a size x size matrix.',
          '补全 map2d_kernel(t, out, a, size)：对 size x size 矩阵求 out = a + 10。'),
        { say('The element of (row, col) is at row * size + col.', '(row, col) 处的元素在 row * size + col。'),
          say('Guard with row < size and col < size.', '用 row < size 并且 col < size 做保护。') }),
    },
    -- 6: broadcast ---------------------------------------------------------------------------
    {
      title = say('Puzzle 5: broadcast', '谜题 5：广播'),
      text = say([[
Broadcasting, as in NumPy and PyTorch: a column a (size x 1) plus a row b (1 x size) is a
size x size matrix, out[row][col] = a[row] + b[col]. Each thread reads one element of each input:
the row decides which element of a, the column which element of b.]],
        [[
和 NumPy、PyTorch 里一样的广播：一列 a（size x 1）加上一行 b（1 x size）得到一个
size x size 的矩阵，out[row][col] = a[row] + b[col]。每个线程从两个输入里各读一个元素：
行号决定读 a 的哪个元素，列号决定读 b 的哪个元素。]]),
      code = [[
print(kernels.puzzles.describe(5))
broadcast_kernel = function(t, out, a, b, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  -- FILL ME IN (roughly one line)
end
info, report = kernels.puzzles.show(5, broadcast_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(5, 'broadcast_kernel',
        say('Complete broadcast_kernel(t, out, a, b, size): out[row * size + col] = a[row] + b[col].',
          '补全 broadcast_kernel(t, out, a, b, size)：out[row * size + col] = a[row] + b[col]。'),
        { say('a is indexed by the row, b by the column.', 'a 用行号索引，b 用列号索引。') }),
    },
    -- 7: blocks ------------------------------------------------------------------------------
    {
      title = say('Puzzle 6: blocks', '谜题 6：多个线程块'),
      text = say([[
A block holds at most 1,024 threads, and real arrays are longer: a grid of several blocks covers
them. Every block runs the same kernel; t.blockIdx.x says which block a thread is in, t.blockDim.x
how many threads a block has. The element of a thread is
  i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
Here blocks of 4 threads cover arrays of up to 20 elements, so the last block is partly idle:
guard it.]],
        [[
一个线程块最多有 1,024 个线程，而实际的数组更长：要用由多个线程块组成的网格来覆盖。所有块
运行同一个核函数；t.blockIdx.x 表示线程在第几个块，t.blockDim.x 表示每块有多少个线程。
一个线程负责的元素是
  i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
这里每块 4 个线程，数组最长 20 个元素，所以最后一块往往有一部分线程闲着：记得加边界保护。]]),
      code = [[
print(kernels.puzzles.describe(6))
blocks_kernel = function(t, out, a, size)
  -- FILL ME IN (roughly two lines)
end
info, report = kernels.puzzles.show(6, blocks_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(6, 'blocks_kernel',
        say('Complete blocks_kernel(t, out, a, size): out[i] = a[i] + 10 over a grid of 4-thread blocks.',
          '补全 blocks_kernel(t, out, a, size)：用 4 线程一块的网格计算 out[i] = a[i] + 10。'),
        { say('In the scene, Tab shows the next block: its threads and the elements they touch.',
            '在图中按 Tab 可以看下一个线程块：它的线程和它们访问的元素。'),
          say('i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x, then guard with i < size.',
            'i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x，再用 i < size 做保护。') }),
    },
    -- 8: blocks 2-D --------------------------------------------------------------------------
    {
      title = say('Puzzle 7: blocks in 2-D', '谜题 7：二维线程块'),
      text = say([[
The same in two dimensions: a 2-D grid of 3 x 3 blocks covers a matrix larger than one block.
A thread's column is t.blockIdx.x * t.blockDim.x + t.threadIdx.x and its row the same with y.
This is how the course's matrix and image kernels (matmul, convolution) find their element.]],
        [[
同样的事情放到二维：由 3 x 3 线程块组成的二维网格，覆盖一个比单个线程块更大的矩阵。线程的
列号是 t.blockIdx.x * t.blockDim.x + t.threadIdx.x，行号同理用 y。本课程里处理矩阵和图像的
核函数（矩阵乘法、卷积）都是这样找到自己的元素的。]]),
      code = [[
print(kernels.puzzles.describe(7))
blocks2d_kernel = function(t, out, a, size)
  -- FILL ME IN (roughly three lines)
end
info, report = kernels.puzzles.show(7, blocks2d_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(7, 'blocks2d_kernel',
        say('Complete blocks2d_kernel(t, out, a, size): out = a + 10 for a size x size matrix, over a 2-D grid.',
          '补全 blocks2d_kernel(t, out, a, size)：用二维网格对 size x size 矩阵求 out = a + 10。'),
        { say('Both the row and the column must be inside the matrix: and, not or.',
            '行和列都必须在矩阵之内：用 and，而不是 or。') }),
    },
    -- 9: shared ------------------------------------------------------------------------------
    {
      title = say('Puzzle 8: shared memory', '谜题 8：共享内存'),
      text = say([[
Global memory is large and slow (hundreds of cycles a load); each block also has a small, fast
shared memory (about 20 cycles), visible to its threads only and gone when the block ends. A
launch declares it: shared = {cache = 4} gives each block its own t.shared.cache of 4 elements,
zeroed.

Threads of a block run in no fixed order. A thread that reads what another wrote must wait until
that write is done: t:sync() is __syncthreads(), a barrier every thread of the block must reach.
This puzzle only copies through the cache, but the pattern is the one every later puzzle uses:
load into shared memory, t:sync(), compute from shared memory.]],
        [[
全局内存容量大但很慢（一次读要几百个周期）；每个线程块还有一块小而快的共享内存（大约 20 个
周期），只有本块的线程能看到，线程块结束时它也就消失了。共享内存由启动参数声明：
shared = {cache = 4} 让每个线程块都拥有自己的一份 t.shared.cache，共 4 个元素，初始为 0。

同一个线程块里的线程没有固定的执行顺序。一个线程要读另一个线程写的数据，就得等那次写完成：
t:sync() 就是 __syncthreads()，是块内每个线程都必须到达的屏障。这道题只是经共享内存转一手，
但它的套路是后面每道题都要用的：先读进共享内存，t:sync()，再用共享内存里的数据计算。]]),
      code = [[
print(kernels.puzzles.describe(8))
shared_kernel = function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local li = t.threadIdx.x
  -- FILL ME IN (roughly three lines)
end
info, report = kernels.puzzles.show(8, shared_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(8, 'shared_kernel',
        say('Complete shared_kernel(t, out, a, size): copy a[i] into cache[li], t:sync(), then out[i] = cache[li] + 10.',
          '补全 shared_kernel(t, out, a, size)：把 a[i] 拷进 cache[li]，t:sync()，然后 out[i] = cache[li] + 10。'),
        { say('The cache is per block: index it with li = t.threadIdx.x, not with i.',
            'cache 是每个块各有一份：用 li = t.threadIdx.x 来索引，而不是用 i。'),
          say('The read of a[i] needs its guard too; t:sync() must not be inside an if that some threads skip.',
            '读 a[i] 同样需要边界保护；t:sync() 不能放在有些线程会跳过的 if 里。') }),
    },
    -- 10: pooling ----------------------------------------------------------------------------
    {
      title = say('Puzzle 9: pooling', '谜题 9：池化'),
      text = say([[
Now threads need each other's data: out[i] is the sum of a[i], a[i-1] and a[i-2]. Reading all
three from global memory would cost three slow loads per thread, and each element would be loaded
three times. Instead every thread loads its own element once into shared memory, and after a
barrier reads its neighbours from there: one global read per thread.

Leave out the t:sync() and the emulator's race check reports it (as compute-sanitizer's racecheck
does): thread 0 wrote cache[0] and thread 1 read it in the same barrier phase, so on a GPU either
could come first.]],
        [[
现在线程之间需要彼此的数据了：out[i] 是 a[i]、a[i-1]、a[i-2] 三者之和。三个都从全局内存读，
每个线程要做三次慢速读取，而且每个元素都被读了三次。更好的办法是：每个线程只把自己的那个
元素读进共享内存一次，过了屏障之后，再从共享内存里读邻居的值：每个线程只需一次全局读。

如果漏掉 t:sync()，模拟器的竞争检查会报出来（就像 compute-sanitizer 的 racecheck 那样）：
0 号线程写了 cache[0]，1 号线程在同一个屏障阶段里读了它，在 GPU 上谁先谁后是说不定的。]]),
      code = [[
print(kernels.puzzles.describe(9))
pool_kernel = function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  -- FILL ME IN (roughly eight lines)
end
info, report = kernels.puzzles.show(9, pool_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(9, 'pool_kernel',
        say('Complete pool_kernel(t, out, a, size): out[i] = a[i] + a[i-1] + a[i-2] (the terms that exist), with one global read per thread.',
          '补全 pool_kernel(t, out, a, size)：out[i] = a[i] + a[i-1] + a[i-2]（只加存在的项），每个线程只读一次全局内存。'),
        { say('Load cache[i] = a[i] (guarded), then t:sync() for every thread.',
            '先（加保护地）执行 cache[i] = a[i]，然后所有线程都执行 t:sync()。'),
          say('After the barrier: s = cache[i], plus cache[i-1] when i >= 1, plus cache[i-2] when i >= 2.',
            '屏障之后：s = cache[i]，i >= 1 时再加 cache[i-1]，i >= 2 时再加 cache[i-2]。') }),
    },
    -- 11: dot --------------------------------------------------------------------------------
    {
      title = say('Puzzle 10: dot product', '谜题 10：点积'),
      text = say([[
All threads now contribute to one number, out[0] = sum of a[i] * b[i]. Each thread puts its
product in shared memory; then the block adds them up. A tree does it in log2(8) = 3 steps: in
the step with stride s, thread i < s adds cache[i + s] into cache[i], with a barrier before each
step (the reduction of lecture 10, in miniature). Only one thread writes out[0]: if every thread
wrote it, the emulator would report the writes as a race.]],
        [[
现在所有线程一起算出一个数：out[0] = a[i] * b[i] 的总和。每个线程先把自己的乘积放进共享内存，
然后整个线程块把它们加起来。用树形归约只要 log2(8) = 3 步：在步长为 s 的那一步，编号 i < s
的线程把 cache[i + s] 加到 cache[i] 上，每一步之前都要过一道屏障（这就是第 10 讲归约的缩影）。
只能由一个线程写 out[0]：如果每个线程都写，模拟器会把这些写入报告为竞争。]]),
      code = [[
print(kernels.puzzles.describe(10))
dot_kernel = function(t, out, a, b, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  -- FILL ME IN (roughly ten lines)
end
info, report = kernels.puzzles.show(10, dot_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(10, 'dot_kernel',
        say('Complete dot_kernel(t, out, a, b, size): out[0] = a[0] * b[0] + ... + a[size-1] * b[size-1].',
          '补全 dot_kernel(t, out, a, b, size)：out[0] = a[0] * b[0] + ... + a[size-1] * b[size-1]。'),
        { say('Threads past size put 0 in the cache, so the tree can add all 8 places.',
            'size 之外的线程往 cache 里放 0，这样树形归约可以把 8 个位置全部加起来。'),
          say('stride = t.blockDim.x // 2, then halve it; t:sync() at the start of each step.',
            'stride 从 t.blockDim.x // 2 开始，每步减半；每一步开始时执行 t:sync()。'),
          say('if i == 0 then out[0] = cache[0] end, after the loop.', '循环结束后：if i == 0 then out[0] = cache[0] end。') }),
    },
    -- 12: conv1d -----------------------------------------------------------------------------
    {
      title = say('Puzzle 11: 1-D convolution', '谜题 11：一维卷积'),
      text = say([[
out[i] = a[i] * b[0] + a[i+1] * b[1] + ... : each output needs b_size neighbouring inputs, and
neighbours near the end of a block belong to the next block. So a block stages its 8 elements of
a plus the b_size - 1 after them (the halo) in shared memory, and b as well. That is more loads
than threads, yet each thread may load at most twice: the threads that do not load b load a halo
element. This is lecture 7's tiled convolution with its halo, in one dimension.]],
        [[
out[i] = a[i] * b[0] + a[i+1] * b[1] + ...：每个输出需要 b_size 个相邻的输入，而靠近线程块
末尾的那些邻居属于下一个块。所以每个块要把自己负责的 8 个 a 元素，连同其后的 b_size - 1 个
（光环元素，halo），一起放进共享内存，b 也一样。要读的元素比线程多，可每个线程最多只能读两次：
不读 b 的那些线程，正好去读光环元素。这就是第 7 讲带光环的分块卷积，只不过是一维的。]]),
      code = [[
print(kernels.puzzles.describe(11))
conv_kernel = function(t, out, a, b, a_size, b_size)
  local sa, sb = t.shared.sa, t.shared.sb
  local li = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + li
  -- FILL ME IN (roughly fifteen lines)
end
info, report = kernels.puzzles.show(11, conv_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(11, 'conv_kernel',
        say('Complete conv_kernel(t, out, a, b, a_size, b_size): the 1-D convolution, at most two global reads per thread.',
          '补全 conv_kernel(t, out, a, b, a_size, b_size)：一维卷积，每个线程至多读两次全局内存。'),
        { say('Every thread loads sa[li] = a[i] when i < a_size.', '每个线程在 i < a_size 时执行 sa[li] = a[i]。'),
          say('Threads li < b_size load sb[li] = b[li]; thread li = b_size + k (k < b_size - 1) loads the halo element a[block start + 8 + k] into sa[8 + k].',
            'li < b_size 的线程执行 sb[li] = b[li]；编号为 li = b_size + k（k < b_size - 1）的线程把光环元素 a[块起点 + 8 + k] 读进 sa[8 + k]。'),
          say('After t:sync(), out[i] = the sum over j < b_size (with i + j < a_size) of sa[li + j] * sb[j].',
            't:sync() 之后，out[i] 等于对 j < b_size（且 i + j < a_size）求 sa[li + j] * sb[j] 之和。') }),
    },
    -- 13: prefix sum -------------------------------------------------------------------------
    {
      title = say('Puzzle 12: prefix sum', '谜题 12：前缀和'),
      text = say([[
Lecture 16's scan, one block of 8 at a time: out[i] is the sum of the block's elements up to i.
Kogge-Stone does it in log2(8) = 3 steps; in the step with stride s every thread li >= s adds the
element s places to its left. The order matters: each thread must read its left neighbour before
that neighbour overwrites it. So a step has two barriers, one before reading and one between
reading and writing. (GPU-Puzzles' puzzle 12 keeps only each block's total; here the whole scan.)]],
        [[
第 16 讲的扫描，每次处理一个 8 元素的线程块：out[i] 是本块从头到 i 的元素之和。Kogge-Stone
算法用 log2(8) = 3 步完成；在步长为 s 的那一步，每个 li >= s 的线程把它左边相隔 s 的元素加到
自己身上。顺序很要紧：每个线程都必须在左边的邻居覆盖旧值之前读到它。所以每一步有两道屏障：
一道在读之前，一道在读和写之间。（GPU-Puzzles 的第 12 题只保留每块的总和；这里做完整的扫描。）]]),
      code = [[
print(kernels.puzzles.describe(12))
scan_kernel = function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + li
  -- FILL ME IN (roughly twelve lines)
end
info, report = kernels.puzzles.show(12, scan_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(12, 'scan_kernel',
        say('Complete scan_kernel(t, out, a, size): the inclusive prefix sum of each 8-element block, Kogge-Stone in shared memory.',
          '补全 scan_kernel(t, out, a, size)：在共享内存里用 Kogge-Stone 求每个 8 元素块的包含式前缀和。'),
        { say('Delete one of the two barriers of a step and :check: the race check names the threads and the element.',
            '删掉某一步里两道屏障中的一道再 :check：竞争检查会指出是哪两个线程、哪个元素。'),
          say('local left = 0; if li >= stride then left = cache[li - stride] end; t:sync(); then add it.',
            'local left = 0; if li >= stride then left = cache[li - stride] end; t:sync()；然后再加上去。') }),
    },
    -- 14: axis sum ---------------------------------------------------------------------------
    {
      title = say('Puzzle 13: axis sum', '谜题 13：按轴求和'),
      text = say([[
A batch of rows, each summed on its own: out[row] = sum of a[row][col]. One block per row, the
row given by t.blockIdx.y (the grid is 1 x batch), and the tree of the dot product within each
block. This is what PyTorch's x:sum(2) does on a GPU: many independent reductions, one per block.]],
        [[
一批行，每一行各自求和：out[row] = a[row][col] 的总和。每一行对应一个线程块，行号由
t.blockIdx.y 给出（网格是 1 x batch），块内用点积那道题的树形归约。PyTorch 在 GPU 上执行
x:sum(2) 就是这样：许多互不相干的归约，每块一个。]]),
      code = [[
print(kernels.puzzles.describe(13))
axis_kernel = function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local row = t.blockIdx.y
  -- FILL ME IN (roughly ten lines)
end
info, report = kernels.puzzles.show(13, axis_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(13, 'axis_kernel',
        say('Complete axis_kernel(t, out, a, size): out[row] is the sum of row row of the batch x size matrix a.',
          '补全 axis_kernel(t, out, a, size)：out[row] 是 batch x size 矩阵 a 第 row 行的和。'),
        { say('Element (row, li) is a[row * size + li]; threads li >= size put 0 in the cache.',
            '(row, li) 处的元素是 a[row * size + li]；li >= size 的线程往 cache 里放 0。') }),
    },
    -- 15: matmul -----------------------------------------------------------------------------
    {
      title = say('Puzzle 14: matrix multiply', '谜题 14：矩阵乘法'),
      text = say([[
out = a b, with lecture 5's tiles. A naive kernel reads a row of a and a column of b per output:
2 x size global reads per thread, each element read size times by the grid. With tiles, a 3 x 3
block loads a 3 x 3 tile of a and one of b into shared memory (one element of each per thread),
waits, adds the 3 products each thread needs from them, and moves to the next strip. For size 8
that is 3 strips: 6 global reads per thread instead of 16.

Two barriers per strip: one after loading (the tiles are complete) and one before the next load
(nobody still reads the old tiles). Forget the second and the race check finds the threads that
overwrite a tile another thread is still reading.]],
        [[
out = a b，用第 5 讲的分块方法。朴素的核函数每算一个输出，就要读 a 的一整行和 b 的一整列：
每个线程 2 x size 次全局读，每个元素被整个网格读了 size 遍。分块之后，一个 3 x 3 的线程块把
a 的一个 3 x 3 小块和 b 的一个小块读进共享内存（每个线程各读一个元素），等待，再用它们算出
每个线程需要的 3 个乘积之和，然后进入下一条。size 为 8 时共有 3 条：每个线程 6 次全局读，
而不是 16 次。

每一条需要两道屏障：一道在读完之后（小块已经完整），一道在下一次读之前（没有线程还在用旧的
小块）。如果漏掉第二道，竞争检查会找出那些改写了别的线程还在读的小块的线程。]]),
      code = [[
print(kernels.puzzles.describe(14))
matmul_kernel = function(t, out, a, b, size)
  local a_s, b_s = t.shared.a_s, t.shared.b_s
  local tpb = t.blockDim.x
  local tx, ty = t.threadIdx.x, t.threadIdx.y
  local col = t.blockIdx.x * tpb + tx
  local row = t.blockIdx.y * tpb + ty
  -- FILL ME IN (roughly fifteen lines)
end
info, report = kernels.puzzles.show(14, matmul_kernel)
print(report)
]],
      scene = show_info,
      exercise = exercise(14, 'matmul_kernel',
        say('Complete matmul_kernel(t, out, a, b, size): out = a b with 3 x 3 tiles in shared memory.',
          '补全 matmul_kernel(t, out, a, b, size)：用共享内存中的 3 x 3 小块计算 out = a b。'),
        { say('for k0 = 0, size - 1, tpb do ... end walks the strips; a_s[ty * tpb + tx] = a[row * size + k0 + tx] (or 0 past the edge).',
            'for k0 = 0, size - 1, tpb do ... end 逐条处理；a_s[ty * tpb + tx] = a[row * size + k0 + tx]（越界处放 0）。'),
          say('b_s[ty * tpb + tx] = b[(k0 + ty) * size + col] (or 0); then acc = acc + a_s[ty * tpb + k] * b_s[k * tpb + tx] for k < tpb.',
            'b_s[ty * tpb + tx] = b[(k0 + ty) * size + col]（或 0）；然后对 k < tpb 累加 acc = acc + a_s[ty * tpb + k] * b_s[k * tpb + tx]。'),
          say('t:sync() before loading a strip and after loading it.', '读入每一条之前和之后都要 t:sync()。') }),
    },
    -- 16: the score card ---------------------------------------------------------------------
    {
      title = say('Your score card', '你的成绩单'),
      text = say([[
The table checks every kernel you wrote in this lesson again, on fresh random inputs, and shows
its score: the most global and shared reads and writes of one thread, and modelled cycles
against the reference solution. Lower is better, but only a correct kernel gets a score. The
lectures that follow take these ideas to full size: the reduction trees (lecture 10), scans
(16 and 17), histograms with atomics (18), sparse matrices (19) and tiled convolution (7).]],
        [[
下面的表格把你在这一课写的每个核函数都用新的随机输入重新检查一遍，并给出得分：单个线程最多
做了几次全局内存和共享内存的读写，以及与参考解相比的模拟周期。数字越小越好，但只有正确的核
函数才有分数。接下来的几讲会把这些想法放大到真实的规模：归约树（第 10 讲）、扫描（第 16、17
讲）、用原子操作的直方图（第 18 讲）、稀疏矩阵（第 19 讲）和分块卷积（第 7 讲）。]]),
      code = [[
local names = { 'map_kernel', 'zip_kernel', 'guard_kernel', 'map2d_kernel', 'broadcast_kernel',
  'blocks_kernel', 'blocks2d_kernel', 'shared_kernel', 'pool_kernel', 'dot_kernel',
  'conv_kernel', 'scan_kernel', 'axis_kernel', 'matmul_kernel' }
for n, name in ipairs(names) do
  local ok, _, s = kernels.puzzles.check(n, _ENV[name])
  local title = kernels.puzzles.list()[n].name
  if ok then
    print(string.format('%2d %-11s solved  reads %d/%d  writes %d/%d  %d cycles (ref %d)', n,
      title, s.global_reads, s.shared_reads, s.global_writes, s.shared_writes, s.cycles,
      s.reference_cycles))
  else
    print(string.format('%2d %-11s not yet', n, title))
  end
end
]],
    },
  },
}
