--[[
ECE408 Lecture 18: atomic operations and histogramming — the seat-booking story, read-modify-write
races and what two (or three) threads can end with, atomicAdd on the lecture's text, contention on
skewed and uniform inputs (the conflict heat map), privatization, the student's privatized kernel
(kernels.launch), aggregation, and choosing a kernel by its counters. Format: docs/lessons.md.
]]
local say = lesson.say

-- Every interleaving of k threads doing Old = Mem; New = Old + 1; Mem = New (three operations
-- each) from Mem = 0: the set of final values of Mem.
local function final_values(k)
  local seen = {}
  local pc, old = {}, {}
  for t = 1, k do pc[t], old[t] = 0, 0 end
  local mem = 0
  local function go(left)
    if left == 0 then seen[mem] = true return end
    for t = 1, k do
      if pc[t] < 2 then
        local saved_mem, saved_old = mem, old[t]
        if pc[t] == 0 then old[t] = mem else mem = old[t] + 1 end
        pc[t] = pc[t] == 0 and 1 or 2
        go(left - 1)
        pc[t] = pc[t] == 2 and 1 or 0
        mem, old[t] = saved_mem, saved_old
      end
    end
  end
  go(2 * k) -- the add and the store are one step here: read, then write Old + 1
  local out = {}
  for v in pairs(seen) do out[#out + 1] = v end
  table.sort(out)
  return out
end

local function as_set(t)
  if type(t) ~= 'table' then return nil end
  local s, list = {}, {}
  for _, v in pairs(t) do
    local n = lesson.number(v)
    if n == nil then return nil end
    if not s[n] then s[n] = true; list[#list + 1] = n end
  end
  table.sort(list)
  return list
end

local ALGOS = { 'global-atomic', 'privatized', 'aggregated' }

return {
  title = say('Atomic operations and histograms', '原子操作与直方图'),
  course = 'ece408',
  lecture = say('ECE408 Lecture 18: Atomic operations and histogramming', 'ECE408 第 18 讲：原子操作与直方图'),
  summary = say([[Read-modify-write races and how atomics fix them, why atomics on one address are
slow, and the two remedies of the lecture: privatization and aggregation, chosen by the counters.]],
    [[读-改-写的数据竞争以及原子操作如何解决它，为什么对同一地址的原子操作很慢，以及课上的两个
对策：私有化和聚合，并根据计数器来选择。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Booking a seat', '订座位'),
      text = say([[
The lecture starts with a common pattern: many customers book seats on a flight. Each one brings
up the seat map, decides on a seat, and updates the map to mark the seat taken. Run two
customers at once and the bad outcome appears: both read the map before either wrote it, both
saw seat 1 free, and both booked it. The second write wins; the first passenger finds someone in
their seat.

Every histogram update is the same read-modify-write, and a GPU runs thousands of them at once.]],
        [[
这一讲从一个常见模式讲起：很多顾客同时订一个航班的座位。每个顾客调出座位图，决定坐哪儿，
再更新座位图，把那个座位标成已占。让两个顾客同时做，坏结果就出现了：两人都在对方写入之前
读了座位图，都看到 1 号座位空着，于是都订了它。后写的那次生效；先订的乘客登机时会发现
有人坐在自己的座位上。

直方图的每一次更新都是同样的读-改-写，而 GPU 会同时执行成千上万次。]]),
      code = [[
seats = {false, false, false}
local function first_free(map)
  for i, who in ipairs(map) do if not who then return i end end
end
local a = first_free(seats)  -- customer A reads the map
local b = first_free(seats)  -- customer B reads it before A has written
seats[a] = 'A'
seats[b] = 'B'
print(string.format('A booked seat %d, B booked seat %d; seat %d now says %s', a, b, a, seats[a]))
]],
      expect = 'A booked seat 1, B booked seat 1; seat 1 now says B\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Read-modify-write: what can the threads end with?', '读-改-写：线程最后会得到什么？'),
      text = say([[
Two threads each run

  Old = Mem[x]; New = Old + 1; Mem[x] = New;

starting from Mem[x] = 0. What is Mem[x] when both are done, and what does each thread hold in
Old? It depends on how the operations interleave: there is a data race. The code below runs one
thread's operations after the other's, then both reads before both writes: `run` takes a
schedule, a string of thread numbers, one per operation (a read, then a write of Old + 1).]],
        [[
两个线程各自执行

  Old = Mem[x]; New = Old + 1; Mem[x] = New;

开始时 Mem[x] = 0。两个线程都做完后 Mem[x] 是多少？每个线程的 Old 里又是什么？答案取决于这些
操作如何交错：这里存在数据竞争。下面的代码先让一个线程的操作全部做完再做另一个，然后让两次
读都发生在两次写之前：`run` 接受一个调度，即一串线程编号，每个编号对应一次操作（先读，
再写回 Old + 1）。]]),
      code = [[
-- run('1122'): thread 1 reads, thread 1 writes, thread 2 reads, thread 2 writes
function run(schedule)
  local mem, old, step = 0, {}, {}
  for c in schedule:gmatch('%d') do
    local t = tonumber(c)
    step[t] = (step[t] or 0) + 1
    if step[t] == 1 then old[t] = mem else mem = old[t] + 1 end
  end
  return mem, old
end
for _, s in ipairs({'1122', '2211', '1212', '1221'}) do
  local mem, old = run(s)
  print(string.format('%s: Mem[x] = %d, Old1 = %d, Old2 = %d', s, mem, old[1], old[2]))
end
]],
      expect = '1122: Mem[x] = 2, Old1 = 0, Old2 = 1\n2211: Mem[x] = 2, Old1 = 1, Old2 = 0\n'
        .. '1212: Mem[x] = 1, Old1 = 0, Old2 = 0\n1221: Mem[x] = 1, Old1 = 0, Old2 = 0\n',
      exercise = {
        prompt = say([[
Now three threads, each adding 1 the same way, from Mem[x] = 0. Set `possible` to the list of
every value Mem[x] can hold when all three are done, over all interleavings (for example
possible = {4, 5}). `run` works for three threads too: run('123123').]],
          [[
现在换成三个线程，都按同样的方式加 1，从 Mem[x] = 0 开始。把 `possible` 设为：在所有可能的
交错下，三个线程都做完时 Mem[x] 可能取到的全部值（例如 possible = {4, 5}）。`run` 对三个线程
也能用：run('123123')。]]),
        hints = {
          say('If every thread reads before any writes, they all write 0 + 1.', '如果每个线程都在任何写之前读，它们写回的都是 0 + 1。'),
          say('Try run on schedules such as 112233, 121233 and 123123.', '试试 run 在 112233、121233、123123 这些调度上的结果。'),
        },
        check = function(env, answer)
          local got = as_set(answer ~= nil and answer or env.possible)
          local want = final_values(3)
          if got == nil then
            return false, say('possible should be a list of numbers, such as {4, 5}', 'possible 应该是一个数的列表，例如 {4, 5}')
          end
          local wants = table.concat(want, ', ')
          for _, v in ipairs(got) do
            local ok = false
            for _, w in ipairs(want) do if w == v then ok = true end end
            if not ok then
              return false, say(string.format('Mem[x] can never end at %s: each of the three threads adds 1 at most once', tostring(v)),
                                string.format('Mem[x] 最后不可能是 %s：三个线程每个最多只加一次 1', tostring(v)))
            end
          end
          for _, w in ipairs(want) do
            local ok = false
            for _, v in ipairs(got) do if w == v then ok = true end end
            if not ok then
              local why = w == 1 and say('what if all three read 0 before any of them writes?', '如果三个线程都在任何一个写之前读到 0 呢？')
                or say(string.format('find a schedule that ends at %d (run tries one)', w), string.format('找一个最后得到 %d 的调度（用 run 试一试）', w))
              return false, say(string.format('%d is missing: %s', w, why.en), string.format('少了 %d：%s', w, why.zh))
            end
          end
          return true, say('{' .. wants .. '}: only 3 is right, and only when no two updates overlap; atomics make every schedule end there',
            '{' .. wants .. '}：只有 3 是对的，而且只在两次更新从不重叠时才得到；原子操作让每种调度都得到 3')
        end,
        solution = [[possible = {1, 2, 3}]],
        wrong = { [[possible = {3}]], [[possible = {1, 3}]], [[possible = {0, 1, 2, 3}]] },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('atomicAdd and the lecture\'s histogram', 'atomicAdd 与课上的直方图'),
      text = say([[
An atomic operation performs the read-modify-write on one address as one indivisible step:
`atomicAdd(&histo[b], 1)` returns the old value and no other thread's update can slip in between.
The lecture's histogram counts the letters of "programming massively parallel processors" in bins
of four letters: a-d, e-h, i-l, m-p, q-t, u-x, y-z. One thread per letter, one atomicAdd each.
The emulator counts the atomics and the conflicts: atomics of the same block on the same bin in
the same step, which the hardware serialises. In the picture each letter flows into its bin.]],
        [[
原子操作把对一个地址的读-改-写作为一个不可分割的步骤完成：`atomicAdd(&histo[b], 1)` 返回旧值，
而其他线程的更新不可能插在中间。课上的直方图统计 "programming massively parallel processors"
里的字母，每四个字母一个桶：a-d、e-h、i-l、m-p、q-t、u-x、y-z。每个线程负责一个字母，各做一次
atomicAdd。模拟器会数出原子操作的次数和冲突次数：同一个块里、同一步中落在同一个桶上的原子
操作，硬件只能一个一个地做。画面里每个字母流进它的桶。]]),
      code = [[
text = 'programming massively parallel processors'
local idx = {}
for c in text:gmatch('%a') do idx[#idx + 1] = (c:byte() - ('a'):byte()) // 4 end
letters = lm.tensor(idx, {dtype = 'uint8'})
histo, info = kernels.histogram(letters, 7, {algo = 'global-atomic', backend = 'emu'})
local names = {'a-d', 'e-h', 'i-l', 'm-p', 'q-t', 'u-x', 'y-z'}
for b, count in ipairs(histo:tolist()) do io.write(names[b], ' ', count, '  ') end
print()
print(string.format('%d letters, %d atomics, %d conflicts (%s)', #idx, info.counters.atomics,
  info.counters.conflicts, info.provenance))
]],
      expect = 'a-d 5  e-h 5  i-l 6  m-p 10  q-t 10  u-x 1  y-z 1  \n38 letters, 38 atomics, 36 conflicts (emulated, modelled cycles)\n',
      scene = { 'histogram', input = 'pmpp', algo = 'global-atomic' },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Contention: skewed and uniform inputs', '争用：偏斜输入与均匀输入'),
      text = say([[
Atomics on different addresses proceed in parallel; atomics on one address queue, each waiting
for the one before it (a global atomic costs a round trip to memory, hundreds of cycles). So the
same kernel is fast or slow depending on the data. Below: 4096 values in 16 bins, once uniform,
once in runs of 256 equal values (skewed: every thread of a block hits the same bin).

Two counters, read them together. `conflicts` counts the atomics that shared their address with
another thread of the block in the same step: with 256 threads and 16 bins that is every one of
them, on both inputs, so it cannot tell the two apart. `atomic_queue` is the longest queue on
one address in one step: about 27 threads on the busiest bin of the uniform input, the whole
block of 256 on the skewed one, and that queue is what the cycles pay for. The picture is the
skewed run: its heat map shows the same-address atomics per bin and step.]],
        [[
落在不同地址上的原子操作可以并行；落在同一地址上的则要排队，每一个都要等前一个做完（全局
原子操作要到内存走一个来回，几百个周期）。所以同一个内核是快是慢，取决于数据。下面是 16 个桶、
4096 个值：一次均匀分布，一次是每 256 个相同的值一段（偏斜：一个块里的所有线程都落在同一个桶）。

有两个计数器，要放在一起看。`conflicts` 数的是：在同一步里，和本块另一个线程落在同一地址上的
原子操作。256 个线程、16 个桶，两种输入下每一个原子操作都算冲突，所以它分不出两者。
`atomic_queue` 是一步之内同一地址上最长的队伍：均匀输入里最忙的桶上大约 27 个线程，偏斜输入
里是整个块的 256 个，周期数付的正是这条队伍的代价。画面是偏斜输入那一次运行：热力图显示每个
桶、每一步里落在同一地址上的原子操作。]]),
      code = [[
function make_input(kind, n)
  local t = {}
  for i = 1, n do
    t[i] = kind == 'runs' and ((i - 1) // 256) % 16 or math.random(0, 15)
  end
  return lm.tensor(t, {dtype = 'uint8'})
end
runs_input, uniform_input = make_input('runs', 4096), make_input('uniform', 4096)
for _, case in ipairs({{'uniform', uniform_input}, {'runs of 256', runs_input}}) do
  local _, run = kernels.histogram(case[2], 16, {algo = 'global-atomic', backend = 'emu'})
  print(string.format('%-12s %5d atomics, %5d conflicts, longest queue %3d, %7d modelled cycles', case[1],
    run.counters.atomics, run.counters.conflicts, run.counters.atomic_queue, run.counters.modelled_cycles))
end
]],
      scene = function(env)
        return select(2, kernels.histogram(env.runs_input, 16, { algo = 'global-atomic', backend = 'emu' }))
      end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Privatization', '私有化'),
      text = say([[
Privatization gives every block its own copy of the histogram in shared memory. The threads of a
block add into the private copy (shared-memory atomics: tens of cycles, and only the block's own
threads contend), then after a barrier the block adds each bin of its copy to the global
histogram: one global atomic per bin per block instead of one per element. It pays when the
histogram is small enough for shared memory, which 16 or 256 bins are. On the runs the queues do
not go away, they move: 256 threads still line up on one bin, but in shared memory, where each
waits tens of cycles instead of hundreds.]],
        [[
私有化让每个块在共享内存里有一份自己的直方图副本。块内的线程往这份私有副本里加（共享内存
原子操作：几十个周期，而且只和本块的线程争用），一道屏障之后，块再把副本里的每个桶加到全局
直方图上：每个块每个桶一次全局原子操作，而不是每个元素一次。直方图小到放得进共享内存时
（16 或 256 个桶都可以）这样做就划算。在成段的输入上，队伍并没有消失，只是换了地方：256 个线程
仍然排在同一个桶上，但那是在共享内存里，每个只等几十个周期，而不是几百个。]]),
      code = [[
for _, case in ipairs({{'uniform', uniform_input}, {'runs of 256', runs_input}}) do
  for _, algo in ipairs({'global-atomic', 'privatized'}) do
    local _, run = kernels.histogram(case[2], 16, {algo = algo, backend = 'emu'})
    print(string.format('%-12s %-14s global atomics %5d (queue %3d), shared %5d (queue %3d), %7d modelled cycles',
      case[1], algo, run.counters.atomics, run.counters.atomic_queue, run.counters.shared_atomics,
      run.counters.shared_atomic_queue, run.counters.modelled_cycles))
  end
end
]],
      scene = { 'histogram', input = 'pmpp', algo = 'privatized' },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Your privatized kernel', '你自己的私有化内核'),
      text = say([[
Write the privatized kernel yourself with kernels.launch. The starting point below is the
global-atomic kernel in Lua: each thread strides over the input (i, i + all the grid's threads,
...) and does t:atomic_add(histo, input[i], 1) on the global histogram. Privatize it:

- clear the block's copy t.shared.h (bins entries; thread b clears b, b + blockDim.x, ...);
- t:sync(), then count into h with t:atomic_add(h, input[i], 1);
- t:sync() again, then add each bin of h into histo, one global atomic per bin.

`run_hist(kernel, input, bins)` launches 4 blocks of 64 threads with h in shared memory and
returns the histogram and the info. The check compares your histogram with Lumen's on fresh
inputs and your global atomics with the privatized kernel's: one per bin per block.]],
        [[
用 kernels.launch 自己写私有化内核。下面的起点是 Lua 写的全局原子操作版本：每个线程以整个网格的
线程数为步长遍历输入（i、i + 网格线程总数……），对全局直方图做 t:atomic_add(histo, input[i], 1)。
把它私有化：

- 先清零本块的副本 t.shared.h（共 bins 项；线程 b 负责 b、b + blockDim.x……）；
- t:sync()，然后用 t:atomic_add(h, input[i], 1) 往 h 里数；
- 再 t:sync()，最后把 h 的每个桶加到 histo 上，每个桶一次全局原子操作。

`run_hist(kernel, input, bins)` 启动 4 个 64 线程的块，h 放在共享内存里，返回直方图和 info。检查时
会在新的输入上把你的直方图和 Lumen 的比较，并把你的全局原子操作次数和私有化内核的比较：每个块
每个桶一次。]]),
      code = [[
function run_hist(kernel, input, bins)
  local histo = lm.zeros(bins, {dtype = 'int32'})
  local info = kernels.launch(kernel, {grid = 4, block = 64, shared = {h = {'int32', bins}},
    args = {input, histo, input:numel(), bins}})
  return histo, info
end
function hist_private(t, input, histo, n, bins)
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  while i < n do
    t:atomic_add(histo, input[i], 1)  -- TODO: into the block's copy t.shared.h instead
    i = i + t.blockDim.x * t.gridDim.x
  end
end
local h, run = run_hist(hist_private, uniform_input, 16)
print(string.format('%d global atomics, %d shared atomics, %d modelled cycles', run.counters.atomics,
  run.counters.shared_atomics, run.counters.modelled_cycles))
]],
      scene = function(env) return select(2, env.run_hist(env.hist_private, env.make_input('runs', 512), 16)) end,
      exercise = {
        prompt = say([[
Privatize `hist_private(t, input, histo, n, bins)`: the same histogram as Lumen's on every input,
with at most one global atomic per bin per block.]],
          [[
把 `hist_private(t, input, histo, n, bins)` 私有化：在每个输入上都得到和 Lumen 一样的直方图，并且
每个块每个桶最多一次全局原子操作。]]),
        hints = {
          say('local h = t.shared.h; local b = t.threadIdx.x; while b < bins do h[b] = 0; b = b + t.blockDim.x end; t:sync()',
              'local h = t.shared.h; local b = t.threadIdx.x; while b < bins do h[b] = 0; b = b + t.blockDim.x end; t:sync()'),
          say('After counting into h: t:sync(), then the same loop over b doing t:atomic_add(histo, b, h[b]).',
              '往 h 里数完以后：t:sync()，再用同样的 b 循环做 t:atomic_add(histo, b, h[b])。'),
          say('Without the second t:sync() a thread may merge a bin another thread is still counting: the race checker says so.',
              '少了第二个 t:sync()，一个线程可能在别的线程还在往某个桶里数的时候就去合并它：竞争检查器会指出来。'),
        },
        -- Inputs larger than the grid (4 x 64 threads: the stride loop), odd sizes, and more bins
        -- than threads in a block (the clearing and merging loops); uniform and in runs.
        check = function(env)
          local ok, fn = lesson.need(env, 'hist_private')
          if not ok then return false, fn end
          if type(env.run_hist) ~= 'function' then
            return false, say('run_hist is gone: run the step again (:run)', 'run_hist 不见了：请重新运行这一步（:run）')
          end
          for _, case in ipairs({ { 'uniform', 1000, 16 }, { 'runs', 2048, 16 }, { 'uniform', 777, 8 }, { 'uniform', 1531, 100 } }) do
            local kind, n, bins = case[1], case[2], case[3]
            local t = {}
            for i = 1, n do t[i] = kind == 'runs' and ((i - 1) // 256) % bins or math.random(0, bins - 1) end
            local input = lm.tensor(t, { dtype = 'uint8' })
            local where = say(string.format('on %d %s values in %d bins, ', n, kind, bins),
              string.format('在 %d 个%s值、%d 个桶上，', n, kind == 'runs' and '成段' or '均匀', bins))
            local rok, histo, info = lesson.try(env.run_hist, fn, input, bins)
            if not rok then return false, say(where.en .. histo.en, where.zh .. histo.zh) end
            local want, ref = kernels.histogram(input, bins, { algo = 'privatized', backend = 'emu' })
            local cok, msg = lesson.compare(histo, want, {
              what = say(string.format('your histogram of %d %s values in %d bins', n, kind, bins),
                string.format('你对 %d 个%s值（%d 个桶）的直方图', n, kind == 'runs' and '成段' or '均匀', bins)),
              zero_based = true,
              why = function(i)
                if bins > 64 and i > 64 then
                  return say('bins past blockDim.x (64): do the clearing and the merging loop step by blockDim.x over all the bins?',
                    '编号超过 blockDim.x（64）的桶：清零和合并的循环是不是以 blockDim.x 为步长走遍了所有的桶？')
                end
                return say('does every thread count all its elements (i, i + all the grid\'s threads, ...), and is every bin merged once per block?',
                  '每个线程都数完了它的所有元素吗（i、i + 网格线程总数……）？每个块的每个桶都合并了一次吗？')
              end })
            if not cok then return false, msg end
            local limit = 4 * bins
            if info.counters.atomics > limit then
              local blocks = ref.trace:launches()[1].grid[1]
              return false, say(string.format('the histogram is right, but your kernel did %d global atomics on %d values; privatized, 4 blocks of %d bins need at most %d (Lumen\'s privatized kernel, on %d block%s, did %d): count into t.shared.h, then merge once per bin',
                  info.counters.atomics, n, bins, limit, blocks, blocks == 1 and '' or 's', ref.counters.atomics),
                string.format('直方图是对的，但你的内核在 %d 个值上做了 %d 次全局原子操作；私有化以后，4 个块、%d 个桶最多只要 %d 次（Lumen 的私有化内核用 %d 个块，做了 %d 次）：先往 t.shared.h 里数，再每个桶合并一次',
                  n, info.counters.atomics, bins, limit, blocks, ref.counters.atomics))
            end
          end
          return true, say('right, with one global atomic per bin per block, also with more bins than threads',
            '对，而且每个块每个桶只有一次全局原子操作，桶比线程多时也对')
        end,
        solution = [[
function hist_private(t, input, histo, n, bins)
  local h = t.shared.h
  local b = t.threadIdx.x
  while b < bins do h[b] = 0; b = b + t.blockDim.x end
  t:sync()
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  while i < n do
    t:atomic_add(h, input[i], 1)
    i = i + t.blockDim.x * t.gridDim.x
  end
  t:sync()
  b = t.threadIdx.x
  while b < bins do
    t:atomic_add(histo, b, h[b])
    b = b + t.blockDim.x
  end
end
]],
        wrong = {
          [[
function hist_private(t, input, histo, n, bins)
  local h = t.shared.h
  local b = t.threadIdx.x
  while b < bins do h[b] = 0; b = b + t.blockDim.x end
  t:sync()
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  while i < n do
    t:atomic_add(h, input[i], 1)
    i = i + t.blockDim.x * t.gridDim.x
  end
  b = t.threadIdx.x
  while b < bins do
    t:atomic_add(histo, b, h[b])
    b = b + t.blockDim.x
  end
end
]],
          [[
function hist_private(t, input, histo, n, bins)
  local h = t.shared.h
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  while i < n do
    t:atomic_add(h, input[i], 1)
    t:atomic_add(histo, input[i], 1)
    i = i + t.blockDim.x * t.gridDim.x
  end
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Aggregation', '聚合'),
      text = say([[
When the input has runs of equal values (an image's sky, a text's spaces), a thread that handles
several consecutive elements can count the run locally and issue one atomic when the value
changes: aggregation. Lumen's aggregated kernel gives each thread 8 consecutive elements
(coarsening) and aggregates within them, on top of privatization. On runs it removes most
atomics; on a uniform input there are no runs, so it only adds the cost of the longer loop.]],
        [[
当输入里有一段段相同的值（图像里的天空、文本里的空格），一个处理若干连续元素的线程可以先在
本地数出这一段，等值变了再发一次原子操作：这就是聚合。Lumen 的聚合内核让每个线程处理 8 个连续
元素（线程粗化），在私有化的基础上再在这 8 个之内聚合。遇到成段的输入，它去掉了大部分原子操作；
均匀输入里没有成段的值，它就只多付出了更长循环的代价。]]),
      code = [[
for _, case in ipairs({{'uniform', uniform_input}, {'runs of 256', runs_input}}) do
  local _, run = kernels.histogram(case[2], 16, {algo = 'aggregated', backend = 'emu'})
  print(string.format('%-12s aggregated: shared atomics %5d, %7d modelled cycles', case[1],
    run.counters.shared_atomics, run.counters.modelled_cycles))
end
]],
      scene = { 'histogram', input = 'runs', algo = 'aggregated' },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Choosing a kernel by its counters', '根据计数器选择内核'),
      text = say([[
No variant wins everywhere: the counters tell which one fits the data. Run the three kernels on
`runs_input` and on `uniform_input` (step 4 made them; `kernels.histogram(x, 16, {algo = ...,
backend = 'emu'})`) and compare `info.counters.modelled_cycles`.]],
        [[
没有哪个变体处处都赢：计数器会告诉你哪个适合这份数据。在 `runs_input` 和 `uniform_input` 上
（第 4 步生成的；`kernels.histogram(x, 16, {algo = ..., backend = 'emu'})`）分别运行三个内核，
比较 `info.counters.modelled_cycles`。]]),
      code = [[
algos = {'global-atomic', 'privatized', 'aggregated'}
-- set choice.runs and choice.uniform to the fastest algorithm on each input
choice = {runs = nil, uniform = nil}
]],
      exercise = {
        prompt = say([[
Set `choice.runs` and `choice.uniform` to the name of the fastest of the three kernels (by
modelled cycles) on `runs_input` and on `uniform_input`.]],
          [[
把 `choice.runs` 和 `choice.uniform` 分别设为在 `runs_input` 和 `uniform_input` 上（按模型周期）
最快的那个内核的名字。]]),
        hints = {
          say("for _, a in ipairs(algos) do local _, i = kernels.histogram(runs_input, 16, {algo = a, backend = 'emu'}) print(a, i.counters.modelled_cycles) end",
              "for _, a in ipairs(algos) do local _, i = kernels.histogram(runs_input, 16, {algo = a, backend = 'emu'}) print(a, i.counters.modelled_cycles) end"),
          say('Long runs favour the kernel that counts a run before it adds.', '长段相同的值有利于先数完一段再加的那个内核。'),
        },
        check = function(env)
          local choice = env.choice
          if type(choice) ~= 'table' then
            return false, say('choice should be a table {runs = ..., uniform = ...}', 'choice 应该是一个表 {runs = ..., uniform = ...}')
          end
          for _, key in ipairs({ 'runs', 'uniform' }) do
            local x = env[key .. '_input']
            if not lm.is_tensor(x) then
              return false, say(key .. '_input is gone: run step 4 again (:step 4)', key .. '_input 不见了：请重新运行第 4 步（:step 4）')
            end
            local cycles, best = {}, nil
            for _, a in ipairs(ALGOS) do
              local _, run = kernels.histogram(x, 16, { algo = a, backend = 'emu' })
              cycles[a] = run.counters.modelled_cycles
              if not best or cycles[a] < cycles[best] then best = a end
            end
            local got = choice[key]
            local table_en = string.format('global-atomic %d, privatized %d, aggregated %d modelled cycles',
              cycles['global-atomic'], cycles.privatized, cycles.aggregated)
            local table_zh = string.format('global-atomic %d、privatized %d、aggregated %d 个模型周期',
              cycles['global-atomic'], cycles.privatized, cycles.aggregated)
            if got == nil then
              return false, say('choice.' .. key .. ' is not set', 'choice.' .. key .. ' 还没有设')
            end
            if cycles[got] == nil then
              return false, say(string.format("choice.%s is '%s': the kernels are global-atomic, privatized and aggregated", key, tostring(got)),
                                string.format("choice.%s 是 '%s'：内核只有 global-atomic、privatized 和 aggregated", key, tostring(got)))
            end
            if got ~= best then
              return false, say(string.format('on %s_input: %s; %s is not the fastest', key, table_en, got),
                                string.format('在 %s_input 上：%s；%s 不是最快的', key, table_zh, got))
            end
          end
          return true, say('right: read the counters, not the name of the algorithm', '对：看计数器，而不是看算法的名字')
        end,
        solution = [[
choice = {}
for _, key in ipairs({'runs', 'uniform'}) do
  local best, best_cycles
  for _, a in ipairs(algos) do
    local _, run = kernels.histogram(_ENV[key .. '_input'], 16, {algo = a, backend = 'emu'})
    if not best or run.counters.modelled_cycles < best_cycles then
      best, best_cycles = a, run.counters.modelled_cycles
    end
  end
  choice[key] = best
end
]],
        wrong = {
          [[choice = {runs = 'global-atomic', uniform = 'global-atomic'}]],
          [[choice = {runs = 'aggregated', uniform = 'aggregated'}]],
        },
      },
    },
  },
}
