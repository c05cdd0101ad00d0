--[[
ECE408 Lecture 17: parallel scan, part two — work efficiency, Brent-Kung's balanced tree (the
up-sweep, then the down-sweep), on the SIMT emulator with its 2·log2 n - 1 steps, the
hierarchical scan of an array longer than a block, and modelled cycles beside measured CPU time.
Format: docs/lessons.md.
]]
local say = lesson.say

local function random_ints(n)
  local t = {}
  for i = 1, n do t[i] = math.random(0, 9) end
  return t
end

-- The up-sweep of docs' Brent-Kung, 1-based: for stride 1, 2, 4, ...: a[i] += a[i - stride]
-- for every i that is a multiple of 2·stride.
local function upsweep_ref(x)
  local a = { table.unpack(x) }
  local stride = 1
  while stride < #a do
    for i = 2 * stride, #a, 2 * stride do a[i] = a[i] + a[i - stride] end
    stride = stride * 2
  end
  return a
end

local function log2(n) return math.floor(math.log(n, 2) + 0.5) end

return {
  title = say('Parallel scan: Brent-Kung and the hierarchical scan', '并行扫描：Brent-Kung 与分层扫描'),
  course = 'ece408',
  lecture = say('ECE408 Lecture 17: Parallel scan, part 2', 'ECE408 第 17 讲：并行扫描（第二部分）'),
  summary = say([[Work efficiency against latency: Brent-Kung's balanced tree does about 2n adds in
2·log2 n - 1 steps, and the hierarchical scan takes any scan past the size of one block.]],
    [[工作效率与延迟的取舍：Brent-Kung 用一棵平衡树，在 2·log2 n - 1 步内只做约 2n 次加法；
分层扫描则让任何扫描都能处理超过一个线程块的数组。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Work efficiency', '工作效率'),
      text = say([[
Lecture 16 ended with Kogge-Stone: log2 n steps, but n·log2 n - (n - 1) adds, where one thread
needs n - 1. A parallel algorithm is work-efficient when it does asymptotically the same work as
the best sequential one. At n = 1024 Kogge-Stone is about nine times over; the code asks the
emulator for both counts.

The fix is a pattern that comes back often in parallel programming: a balanced tree. Build a
binary tree over the input, walk it from the leaves to the root (partial sums at the inner
nodes, the total at the root), then back down. The tree is not a data structure in memory, only
the order in which the threads combine elements.]],
        [[
第 16 讲最后看到的 Kogge-Stone 只要 log2 n 步，却要做 n·log2 n - (n - 1) 次加法，而一个线程只要
n - 1 次。如果一个并行算法做的工作在渐近意义上和最好的顺序算法一样多，就说它是工作高效的
（work-efficient）。n = 1024 时 Kogge-Stone 多做了大约八倍；下面的代码向模拟器要这两个计数。

解决办法是并行编程里反复出现的一个模式：平衡树。在输入上建一棵二叉树，从叶子往根走一遍
（内部结点上得到部分和，根上是总和），再从根往下走回来。这棵树并不是内存里的数据结构，
只是线程合并元素的先后次序。]]),
      code = [[
x = lm.rand(1024)
local _, ks = kernels.scan(x, {algo = 'kogge-stone', backend = 'emu'})
print(string.format('sequential:  %5d adds', 1023))
print(string.format('Kogge-Stone: %5d adds (%s), %.1f times the sequential work',
  ks.counters.adds, ks.provenance, ks.counters.adds / 1023))
]],
      expect = 'sequential:   1023 adds\nKogge-Stone:  9217 adds (emulated, modelled cycles), 9.0 times the sequential work\n',
      scene = { 'scan', n = 16, input = 'pmpp' },
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Up the tree: the reduction step', '沿树向上：归约步'),
      text = say([[
Brent-Kung's first phase is a reduction tree. With stride 1, every second element adds its left
neighbour; with stride 2, every fourth element adds the element 2 to its left; and so on. The
elements that add are those whose position (counting from 1) is a multiple of 2·stride. After
log2 n levels the last element holds the total, 25 for the lecture's [3,1,7,0,4,1,6,3], and the
others hold the partial sums the second phase needs. Only n - 1 adds in all: 4 + 2 + 1 here.]],
        [[
Brent-Kung 的第一阶段是一棵归约树。步长为 1 时，每隔一个元素加上它左边的邻居；步长为 2 时，每
隔三个元素（即每第四个）加上它左边第 2 个元素；依此类推。做加法的元素，是位置（从 1 数）为
2·步长 的倍数的那些。经过 log2 n 层，最后一个元素存着总和，课上的 [3,1,7,0,4,1,6,3] 就是 25；
其余元素里留下第二阶段要用的部分和。总共只做了 n - 1 次加法：这里是 4 + 2 + 1。]]),
      code = [[
a = {3, 1, 7, 0, 4, 1, 6, 3}
local stride = 1
while stride < #a do
  for i = 2 * stride, #a, 2 * stride do a[i] = a[i] + a[i - stride] end
  print(string.format('stride %d: %s', stride, table.concat(a, ' ')))
  stride = stride * 2
end
-- write upsweep(x): a new array after the up-sweep (#x is a power of two)
function upsweep(x)
  return {table.unpack(x)}  -- TODO
end
]],
      expect = 'stride 1: 3 4 7 7 4 5 6 9\nstride 2: 3 4 7 11 4 5 6 14\nstride 4: 3 4 7 11 4 5 6 25\n',
      exercise = {
        prompt = say([[
Write `upsweep(x)`: it returns a new array holding x after Brent-Kung's up-sweep (for
{3,1,7,0,4,1,6,3}: {3,4,7,11,4,5,6,25}). #x is a power of two, 1 to 64. It is checked on fresh
random arrays.]],
          [[
写出 `upsweep(x)`：返回一个新数组，内容是 x 经过 Brent-Kung 向上归约之后的样子（对
{3,1,7,0,4,1,6,3} 返回 {3,4,7,11,4,5,6,25}）。#x 是 1 到 64 之间的 2 的幂。检查时用新的随机数组。]]),
        hints = {
          say('Copy x first ({table.unpack(x)}), then loop over stride = 1, 2, 4, ... while stride < #a.',
              '先复制 x（{table.unpack(x)}），然后让 stride = 1, 2, 4, ...，只要 stride < #a 就继续。'),
          say('At each level only positions 2·stride, 4·stride, ... change: a[i] = a[i] + a[i - stride].',
              '每一层只有位置 2·stride、4·stride…… 会变：a[i] = a[i] + a[i - stride]。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'upsweep')
          if not ok then return false, fn end
          for _, n in ipairs({ 1, 2, 8, 32, 64 }) do
            local x = random_ints(n)
            local copy = { table.unpack(x) }
            local rok, got = lesson.try(fn, x)
            if not rok then return false, got end
            local want = upsweep_ref(x)
            local cok, msg = lesson.compare(got, want, {
              what = say(string.format('upsweep({%s})', table.concat(x, ',')), string.format('upsweep({%s}) 的结果', table.concat(x, ','))),
              why = function(i, g, w)
                if i == n then
                  return say(string.format('the last element must hold the sum of all %d inputs: does the stride double until it reaches n?', n),
                             string.format('最后一个元素应该是全部 %d 个输入之和：步长有没有一直翻倍到 n？', n))
                end
                if i % 2 == 1 then
                  return say('elements at odd positions are never written in the up-sweep',
                             '奇数位置上的元素在向上归约中从不改写')
                end
                return say(string.format('position %d adds the element stride places to its left at every level where %d is a multiple of 2·stride', i, i),
                           string.format('在 %d 是 2·stride 倍数的每一层，位置 %d 都要加上它左边第 stride 个元素', i, i))
              end })
            if not cok then return false, msg end
            for k = 1, n do
              if x[k] ~= copy[k] then
                return false, say('upsweep changed its argument x: return a new array and leave x as it was',
                                  'upsweep 改动了参数 x：应该返回新数组，让 x 保持原样')
              end
            end
          end
          return true, say('right on fresh arrays of 1 to 64 elements', '在 1 到 64 个元素的新数组上都对')
        end,
        equivalent = { -- mutants of the solution that are right answers on the sizes asked (powers of two)
          ['<= instead of < at line 4'] = say('one more pass with stride #a, whose loop runs no iteration',
            '多一轮步长为 #a 的循环，而这一轮的内层循环一次也不执行'),
          ['for ... = 2 * stride, (#a) + 1 at line 5'] = say('#a + 1 is odd, never a multiple of 2 * stride: the loop stops where it did',
            '#a + 1 是奇数，不可能是 2 * stride 的倍数：循环停在原来的地方'),
        },
        solution = [[
function upsweep(x)
  local a = {table.unpack(x)}
  local stride = 1
  while stride < #a do
    for i = 2 * stride, #a, 2 * stride do
      a[i] = a[i] + a[i - stride]
    end
    stride = stride * 2
  end
  return a
end
]],
        wrong = {
          [[
function upsweep(x)
  local a = {table.unpack(x)}
  local stride = 1
  while stride < #a / 2 do
    for i = 2 * stride, #a, 2 * stride do
      a[i] = a[i] + a[i - stride]
    end
    stride = stride * 2
  end
  return a
end
]],
          [[
function upsweep(x)
  local a = x
  local stride = 1
  while stride < #a do
    for i = 2 * stride, #a, 2 * stride do
      a[i] = a[i] + a[i - stride]
    end
    stride = stride * 2
  end
  return a
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Down the tree: the post-scan step', '沿树向下：后扫描步'),
      text = say([[
After the up-sweep, the elements at positions 2, 4 and 8 already hold their prefix sums (4, 11
and 25), but 3, 5, 6 and 7 do not. The second phase walks the tree back down with strides n/4,
..., 2, 1: a position that is a multiple of 2·stride gives its sum to the position stride places
to its right. For 8 elements: stride 2 sends 11 from position 4 to 6; stride 1 sends from 2, 4
and 6 to 3, 5 and 7. That is (n - 1) - (log2 n - 1) more adds: 2(n - 1) - log2 n in all, 11 for
n = 8, against Kogge-Stone's 17.]],
        [[
向上归约之后，位置 2、4、8 上已经是它们的前缀和（4、11、25），但 3、5、6、7 还不是。第二阶段
沿树往下走，步长依次是 n/4、……、2、1：位置为 2·步长 倍数的元素，把自己的和加给右边第 步长 个
位置。对 8 个元素：步长 2 时把位置 4 的 11 加到位置 6；步长 1 时从 2、4、6 加到 3、5、7。这又多了
(n - 1) - (log2 n - 1) 次加法，总共 2(n - 1) - log2 n 次：n = 8 时是 11 次，而 Kogge-Stone 要 17 次。]]),
      code = [[
b = {3, 4, 7, 11, 4, 5, 6, 25}  -- after the up-sweep
local stride = #b // 4
while stride >= 1 do
  for i = 2 * stride, #b - stride, 2 * stride do b[i + stride] = b[i + stride] + b[i] end
  print(string.format('stride %d: %s', stride, table.concat(b, ' ')))
  stride = stride // 2
end
]],
      expect = 'stride 2: 3 4 7 11 4 16 6 25\nstride 1: 3 4 11 11 15 16 22 25\n',
      scene = { 'scan', n = 8, input = 'pmpp', variant = 'brent-kung' },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Brent-Kung on the SIMT emulator', '在 SIMT 模拟器上跑 Brent-Kung'),
      text = say([[
In the lecture's kernel every thread owns two elements, so a block of 4 threads scans a section
of 8. In the up-sweep the thread t with (t + 1)·2·stride - 1 < n adds; in the down-sweep the
index runs the other way. Fewer threads work at every level (4, 2, 1, then 1, 3): most lanes of
a warp sit idle, which the emulator's SIMD efficiency shows. The step count is log2 n up plus
log2 n - 1 down: 2·log2 n - 1 = 5 for 8 elements. Play the picture: the tree goes up and comes
back down.]],
        [[
课上的内核让每个线程负责两个元素，所以 4 个线程的块扫描一段 8 个元素。向上归约时，满足
(t + 1)·2·stride - 1 < n 的线程 t 做加法；向下时下标方向反过来。每一层干活的线程都更少（4、2、1，
然后 1、3）：一个 warp 的大部分通道都闲着，模拟器的 SIMD 效率会显示出来。步数是向上 log2 n、
向下 log2 n - 1：8 个元素共 2·log2 n - 1 = 5 步。播放画面：树先往上长，再往下回。]]),
      code = [[
y, info = kernels.scan(lm.tensor({3, 1, 7, 0, 4, 1, 6, 3}):float(), {algo = 'brent-kung', backend = 'emu'})
print('y               ' .. table.concat(y:int():tolist(), ' '))
print('threads         ' .. info.counters.threads)
print('steps           ' .. info.counters.steps)
print('adds            ' .. info.counters.adds)
print(string.format('SIMD efficiency %.2f (%s)', info.counters.simd_efficiency, info.provenance))
]],
      scene = function(env) return env.info end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Counting the steps', '数一数步数'),
      text = say([[
Brent-Kung trades latency for work: about twice Kogge-Stone's log2 n steps, for about 2n adds
instead of n·log2 n. The code runs both on the emulator for a few sizes. Write the step count as
a function of n and compare it with what the emulator counts (a step is an iteration of the
main loop in which at least one thread adds).]],
        [[
Brent-Kung 用延迟换工作量：步数约是 Kogge-Stone 的 log2 n 的两倍，加法次数却是约 2n，而不是
n·log2 n。下面的代码在几个规模上用模拟器跑两种算法。把步数写成 n 的函数，并和模拟器数出来的
比较（一步是主循环的一次迭代，其中至少有一个线程做了加法）。]]),
      code = [[
print(string.format('%6s %12s %12s %12s %12s', 'n', 'KS steps', 'KS adds', 'BK steps', 'BK adds'))
for _, n in ipairs({8, 64, 512}) do
  local x = lm.rand(n)
  local _, ks = kernels.scan(x, {algo = 'kogge-stone', backend = 'emu'})
  local _, bk = kernels.scan(x, {algo = 'brent-kung', backend = 'emu'})
  print(string.format('%6d %12d %12d %12d %12d', n, ks.counters.steps, ks.counters.adds,
    bk.counters.steps, bk.counters.adds))
end
-- write bk_steps(n): Brent-Kung's steps on n elements (n a power of two)
function bk_steps(n)
  return 0  -- TODO
end
]],
      expect = '     n     KS steps      KS adds     BK steps      BK adds\n'
        .. '     8            3           17            5           11\n'
        .. '    64            6          321           11          120\n'
        .. '   512            9         4097           17         1013\n',
      exercise = {
        prompt = say([[
Write `bk_steps(n)` returning the number of steps Brent-Kung takes on n elements (n a power of
two, 2 to 2048). It is compared with the emulator's count for several n.]],
          [[
写出 `bk_steps(n)`，返回 Brent-Kung 在 n 个元素上走的步数（n 是 2 到 2048 之间的 2 的幂）。
检查时会和模拟器在若干个 n 上数出来的步数比较。]]),
        hints = {
          say('Up the tree: one step per level, log2 n levels. Down: one level fewer.',
              '向上：每层一步，共 log2 n 层。向下：少一层。'),
          say('math.log(n, 2) gives log2 n (round it: math.floor(math.log(n, 2) + 0.5)).',
              'math.log(n, 2) 就是 log2 n（取整：math.floor(math.log(n, 2) + 0.5)）。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'bk_steps')
          if not ok then return false, fn end
          local sizes = { 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048 }
          local pick = { sizes[math.random(1, 4)], sizes[math.random(5, 8)], sizes[math.random(9, 11)] }
          for _, n in ipairs(pick) do
            local _, run = kernels.scan(lm.rand(n), { algo = 'brent-kung', backend = 'emu' })
            local want = run.counters.steps
            local rok, got = lesson.try(fn, n)
            if not rok then return false, got end
            got = lesson.number(got)
            if got ~= want then
              local l = log2(n)
              local why = got == 2 * l
                and say('the down-sweep has one level fewer than the up-sweep: its last level would send from the root to nothing',
                        '向下比向上少一层：否则最后一层会从根出发、却没有可加的目标')
                or got == l and say('that counts the up-sweep only; the down-sweep adds log2 n - 1 more',
                                    '这只算了向上归约；向下还有 log2 n - 1 步')
                or say('count one step per level: up log2 n, down log2 n - 1', '每层算一步：向上 log2 n，向下 log2 n - 1')
              return false, say(string.format('for n = %d the emulator counted %d steps, bk_steps(%d) gives %s: %s', n,
                want, n, lesson.show(got), why.en),
                string.format('n = %d 时模拟器数出 %d 步，bk_steps(%d) 给出 %s：%s', n, want, n, lesson.show(got), why.zh))
            end
          end
          return true, say(string.format('it matches the emulator at n = %d, %d and %d', pick[1], pick[2], pick[3]),
                           string.format('在 n = %d、%d、%d 时都和模拟器一致', pick[1], pick[2], pick[3]))
        end,
        solution = [[
function bk_steps(n)
  local levels = math.floor(math.log(n, 2) + 0.5)
  return 2 * levels - 1
end
]],
        wrong = {
          [[
function bk_steps(n)
  return 2 * math.floor(math.log(n, 2) + 0.5)
end
]],
          [[
function bk_steps(n)
  return math.floor(math.log(n, 2) + 0.5)
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('The hierarchical scan of a long array', '长数组的分层扫描'),
      text = say([[
One block scans one section in shared memory, and a block has at most 1024 threads. For a longer
array the lecture uses three kernels:

- launch 1: every block scans its section and writes the section's total into an array S;
- launch 2: one block scans S;
- launch 3: every block but the first adds S[b - 1] to each element of its section.

Lumen's hierarchical kernel also coarsens: each thread first scans 4 elements of its own, so a
block of 64 threads covers a section of 256. For 2048 elements that is 8 sections: 8 blocks
in the first launch, one in the second, 7 in the third. The picture shows a smaller case.]],
        [[
一个线程块在共享内存里扫描一段数据，而一个块最多 1024 个线程。数组更长时，课上用三个内核：

- 第 1 次启动：每个块扫描自己的那段，并把这段的总和写进数组 S；
- 第 2 次启动：用一个块扫描 S；
- 第 3 次启动：除第一个块外，每个块把 S[b - 1] 加到自己那段的每个元素上。

Lumen 的分层内核还做了线程粗化（coarsening）：每个线程先自己扫描 4 个元素，所以 64 个线程的块
能覆盖 256 个元素的一段。2048 个元素就是 8 段：第一次启动 8 个块，第二次 1 个，第三次 7 个。
画面里是一个小一些的例子。]]),
      code = [[
long = lm.rand(2048)
y, info = kernels.scan(long, {algo = 'hierarchical', block = 64, backend = 'emu'})
for i, l in ipairs(info.trace:launches()) do
  print(string.format('launch %d: %-16s %d block%s of %d threads', i, l.kernel, l.grid[1],
    l.grid[1] == 1 and '' or 's', l.block[1]))
end
print('equal to cumsum: ' .. tostring(lm.allclose(y, long:cumsum(1), 1e-4, 1e-3)))
-- write hier_blocks(n, block): the blocks of the first launch (coarsening 4 elements per thread)
function hier_blocks(n, block)
  return 0  -- TODO
end
]],
      expect = 'launch 1: scan_coarsened   8 blocks of 64 threads\nlaunch 2: scan_coarsened   1 block of 64 threads\n'
        .. 'launch 3: scan_add_sums    7 blocks of 64 threads\nequal to cumsum: true\n',
      scene = { 'scan', n = 64, block = 8, input = 'random' },
      exercise = {
        prompt = say([[
Write `hier_blocks(n, block)`: how many blocks the first launch of the hierarchical scan runs on
n elements with `block` threads per block, each thread taking 4 elements (n need not be a
multiple of the section). It is compared with the launches the emulator records.]],
          [[
写出 `hier_blocks(n, block)`：对 n 个元素、每块 `block` 个线程、每个线程处理 4 个元素时，分层
扫描的第一次启动要用多少个块（n 不一定是一段长度的整数倍）。检查时会和模拟器记录下的启动比较。]]),
        hints = {
          say('A block covers a section of 4·block elements.', '一个块覆盖 4·block 个元素的一段。'),
          say('The last section may be partial: round up ((n + s - 1) // s for a section of s).',
              '最后一段可能不满：要向上取整（段长为 s 时是 (n + s - 1) // s）。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'hier_blocks')
          if not ok then return false, fn end
          local cases = { { 2048, 64 }, { 1000 + math.random(0, 99), 32 }, { 300 + math.random(0, 50), 16 } }
          for _, c in ipairs(cases) do
            local n, block = c[1], c[2]
            local _, run = kernels.scan(lm.rand(n), { algo = 'hierarchical', block = block, backend = 'emu' })
            local want = run.trace:launches()[1].grid[1]
            local rok, got = lesson.try(fn, n, block)
            if not rok then return false, got end
            got = lesson.number(got)
            if got ~= want then
              local why = got == math.floor(n / (4 * block)) and say('the last, partial section needs a block too: round up',
                                                                  '最后那段不满的也要一个块：向上取整')
                or got == math.ceil(n / block) and say('each thread takes 4 elements, so a block covers 4·block of them',
                                                      '每个线程处理 4 个元素，所以一个块覆盖 4·block 个')
                or say('a block covers a section of 4·block elements', '一个块覆盖 4·block 个元素的一段')
              return false, say(string.format('for n = %d and block = %d the emulator launched %d blocks, hier_blocks gives %s: %s',
                n, block, want, lesson.show(got), why.en),
                string.format('n = %d、block = %d 时模拟器启动了 %d 个块，hier_blocks 给出 %s：%s', n, block, want,
                  lesson.show(got), why.zh))
            end
          end
          return true, say('it matches the launches the emulator made', '和模拟器实际的启动一致')
        end,
        solution = [[
function hier_blocks(n, block)
  local section = 4 * block
  return (n + section - 1) // section
end
]],
        wrong = {
          [[
function hier_blocks(n, block)
  return n // (4 * block)
end
]],
          [[
function hier_blocks(n, block)
  return (n + block - 1) // block
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Modelled cycles and measured time', '模型周期与实测时间'),
      text = say([[
Two kinds of numbers, never mixed. The emulator's modelled cycles come from a stated latency
model (docs/trace.md) that charges every step its memory latency and every barrier its wait,
while idle lanes cost nothing: on one block of 1024 elements, see which of Kogge-Stone's 10
steps and Brent-Kung's 19 the model favours. Measured CPU time is what this machine did: below, each algorithm's
adds done by one Lua thread on 2^16 elements (work is time when there is one worker), and
Lumen's native CPU scan, labelled with the implementation that ran. On a GPU the balance depends
on how many threads are really idle: the reason both algorithms are taught.]],
        [[
两种数字，绝不混用。模拟器的模型周期来自一个明确写出来的延迟模型（docs/trace.md）：它给每一步
计内存延迟、给每道屏障计等待，而闲着的通道不花钱。在一个 1024 元素的块上，看看模型更偏向
Kogge-Stone 的 10 步还是 Brent-Kung 的 19 步。实测的 CPU 时间则是这台机器真正花的时间：下面是用
一个 Lua 线程在 2^16 个元素上做完每种算法的全部加法（只有一个工人时，工作量就是时间），以及
Lumen 原生的 CPU 扫描，并注明实际运行的实现。在 GPU 上孰优孰劣，取决于有多少线程真的闲着：
这正是两种算法都要学的原因。]]),
      code = [[
local x = lm.rand(1024)
local _, ks = kernels.scan(x, {algo = 'kogge-stone', backend = 'emu'})
local _, bk = kernels.scan(x, {algo = 'brent-kung', backend = 'emu'})
print(string.format('1024 elements, %s:', ks.provenance))
print(string.format('  Kogge-Stone %6d cycles, %2d steps, %5d adds', ks.counters.modelled_cycles, ks.counters.steps, ks.counters.adds))
print(string.format('  Brent-Kung  %6d cycles, %2d steps, %5d adds', bk.counters.modelled_cycles, bk.counters.steps, bk.counters.adds))
-- the adds of each algorithm done by one Lua thread (CPU measured)
local function timed(f, a) local t0 = lm.sys.clock(); f(a); return (lm.sys.clock() - t0) * 1000 end
local function ks_lua(a)
  local s = 1
  while s < #a do
    local b = {}
    for i = 1, #a do b[i] = i > s and a[i] + a[i - s] or a[i] end
    a, s = b, s * 2
  end
end
local function bk_lua(a)
  local s = 1
  while s < #a do for i = 2 * s, #a, 2 * s do a[i] = a[i] + a[i - s] end s = s * 2 end
  s = #a // 4
  while s >= 1 do for i = 2 * s, #a - s, 2 * s do a[i + s] = a[i + s] + a[i] end s = s // 2 end
end
local big = lm.rand(1 << 16):tolist()
print('65536 elements, CPU measured, one Lua thread:')
print(string.format('  Kogge-Stone adds %7.2f ms', timed(ks_lua, big)))
print(string.format('  Brent-Kung adds  %7.2f ms', timed(bk_lua, {table.unpack(big)})))
local x22 = lm.rand(1 << 22)
for _, algo in ipairs({'kogge-stone', 'brent-kung'}) do
  local _, cpu = kernels.scan(x22, {algo = algo, backend = 'cpu'})
  print(string.format("kernels.scan{algo='%s'}, 2^22 elements: %.2f ms (%s)", algo, cpu.counters.time_ms, cpu.provenance))
  print('  which ran: ' .. (cpu.impl or cpu.algo))
end
]],
      scene = { 'scan', n = 32, input = 'random' },
    },
  },
}
