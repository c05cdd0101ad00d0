--[[
ECE408 Lecture 16: parallel scan (prefix sum) — the definition with the lecture's example, the
sandwich, a sequential scan, Kogge-Stone step by step, on the SIMT emulator, the student's own
Kogge-Stone kernel (kernels.launch), the race when a barrier goes, and counting the adds.
Format: docs/lessons.md.
]]
local say = lesson.say

-- A random array of n small integers (exact sums in float32 too).
local function random_ints(n)
  local t = {}
  for i = 1, n do t[i] = math.random(0, 9) end
  return t
end

local function inclusive(t)
  local y, s = {}, 0
  for i = 1, #t do s = s + t[i]; y[i] = s end
  return y
end

local function exclusive(t)
  local y, s = {}, 0
  for i = 1, #t do y[i] = s; s = s + t[i] end
  return y
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Checks a scan function (Lua arrays in, a Lua array out) on fresh random inputs. The student's
-- function gets a copy: the expected values, the messages and the diagnosis come from the input as
-- it was (a scan done in place would otherwise be compared with its own result).
local function check_scan_fn(env, name, reference, why)
  local ok, fn = lesson.need(env, name)
  if not ok then return false, fn end
  for _, n in ipairs({ 1, 8, 13, 33, 0 }) do
    local x = random_ints(n)
    local arg = { table.unpack(x) }
    local rok, got = lesson.try(fn, arg)
    if not rok then return false, got end
    local want = reference(x)
    local cok, msg = lesson.compare(got, want, {
      what = say(string.format('%s({%s})', name, table.concat(x, ',')),
                 string.format('%s({%s}) 的结果', name, table.concat(x, ','))),
      why = function(i, g, w) return why(x, got, i, g, w) end })
    if not cok then return false, msg end
  end
  return true, say('right on five fresh inputs, from 0 to 33 elements',
                   '在五组新的随机输入上（0 到 33 个元素）都对')
end

-- A Kogge-Stone kernel as the lecture writes it (the solution of step 6), for the counts a
-- student's kernel is compared with.
local function ks_reference(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    t:sync()
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end

-- The same without the barrier between the read and the write (the solution of step 7).
local function ks_racy_reference(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end

-- A kernel's failure in a check on n elements: the checker's report (it names the fix).
local function kernel_failure(n, y)
  return say(string.format('on %d elements, %s', n, y.en), string.format('在 %d 个元素上，%s', n, y.zh))
end

return {
  title = say('Parallel scan: Kogge-Stone', '并行扫描：Kogge-Stone'),
  course = 'ece408',
  lecture = say('ECE408 Lecture 16: Parallel scan (prefix sum)', 'ECE408 第 16 讲：并行扫描（前缀和）'),
  summary = say([[What a scan computes, why it is everywhere, how Kogge-Stone does it in log2 n steps
with one thread per element, what a missing barrier breaks, and what the speed costs in adds.]],
    [[扫描算的是什么、为什么到处都用得上；Kogge-Stone 如何让每个线程负责一个元素、在 log2 n
步内完成；少了一道屏障会坏在哪里；以及这份速度要多付出多少次加法。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('What a scan computes', '扫描算的是什么'),
      text = say([[
A scan takes an associative operator ⊕ and an array [x0, x1, ..., x(n-1)] and returns every
prefix combined: [x0, x0⊕x1, ..., x0⊕x1⊕...⊕x(n-1)]. With ⊕ = + it is the prefix sum. This is
the inclusive scan: output i includes input i.

The lecture's example: the scan of [3,1,7,0,4,1,6,3] is [3,4,11,11,15,16,22,25]. Read it as a
running total: 3, then 3+1, then 3+1+7, and so on. The code below computes it with Lumen's
`cumsum` (a CPU loop); the picture shows the same eight numbers as the parallel scans of this
lecture and the next see them.]],
        [[
扫描（scan）接受一个满足结合律的运算 ⊕ 和一个数组 [x0, x1, ..., x(n-1)]，返回它的每一个前缀
合并后的结果：[x0, x0⊕x1, ..., x0⊕x1⊕...⊕x(n-1)]。⊕ 取加法时就是前缀和。这里定义的是
包含扫描（inclusive scan）：第 i 个输出把第 i 个输入也算了进去。

课上的例子：[3,1,7,0,4,1,6,3] 的扫描结果是 [3,4,11,11,15,16,22,25]。把它看成累计和就好：
先是 3，然后 3+1，再然后 3+1+7，依此类推。下面的代码用 Lumen 的 `cumsum`（CPU 上的循环）
算出它；画面里是同样这八个数，本讲和下一讲的并行扫描都从它出发。]]),
      code = [[
x = lm.tensor({3, 1, 7, 0, 4, 1, 6, 3})
print('x       ' .. table.concat(x:tolist(), ' '))
print('scan(x) ' .. table.concat(x:cumsum(1):tolist(), ' '))
]],
      expect = 'x       3 1 7 0 4 1 6 3\nscan(x) 3 4 11 11 15 16 22 25\n',
      scene = { 'scan', n = 8, input = 'pmpp' },
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Inclusive and exclusive: cutting the sandwich', '包含与排他：切三明治'),
      text = say([[
The lecture's use case: a 100-inch sandwich feeds 10 people, who want 3, 5, 2, 7, 28, 4, 3, 0, 8
and 1 inches. Where are the cuts? The inclusive scan gives the end of every piece: 3, 8, 10, ...,
61, so 39 inches are left. The exclusive scan gives where every piece starts: 0, 3, 8, ...; its
output i leaves input i out and starts from the identity (0 for +):

  exclusive([3,1,7,0,4,1,6,3]) = [0,3,4,11,11,15,16,22]

One is the other shifted by one place, so a kernel that computes one gives the other almost for
free.]],
        [[
课上的应用例子：一块 100 英寸长的三明治要分给 10 个人，他们各要 3、5、2、7、28、4、3、0、8、
1 英寸。刀该切在哪里？包含扫描给出每一块的终点：3, 8, 10, ..., 61，所以还剩 39 英寸。排他扫描
（exclusive scan）给出每一块的起点：0, 3, 8, ...；它的第 i 个输出不含第 i 个输入，并从单位元
（加法是 0）开始：

  exclusive([3,1,7,0,4,1,6,3]) = [0,3,4,11,11,15,16,22]

两者只差一个位置的平移，所以算出其中一个，另一个几乎不用再花代价。]]),
      code = [[
wants = {3, 5, 2, 7, 28, 4, 3, 0, 8, 1}
ends = lm.tensor(wants):cumsum(1):tolist()
print('cuts at   ' .. table.concat(ends, ' '))
print('left over ' .. 100 - ends[#ends])
-- write exclusive_scan(t) below: a Lua array in, a Lua array out
function exclusive_scan(t)
  return t  -- TODO
end
]],
      expect = 'cuts at   3 8 10 17 45 49 52 52 60 61\nleft over 39\n',
      exercise = {
        prompt = say([[
Write `exclusive_scan(t)`: it takes a Lua array of numbers and returns a new array, the exclusive
scan (for {3,1,7,0,4,1,6,3}: {0,3,4,11,11,15,16,22}; for {} an empty array). It is checked on
fresh random arrays.]],
          [[
写出 `exclusive_scan(t)`：参数是一个 Lua 数组，返回一个新数组，即排他扫描的结果（对
{3,1,7,0,4,1,6,3} 返回 {0,3,4,11,11,15,16,22}；对 {} 返回空数组）。检查时会用新的随机数组来调用它。]]),
        hints = {
          say('Keep a running sum s, starting at 0. For each element: first store s, then add the element.',
              '维护一个从 0 开始的累加和 s。对每个元素：先把 s 存进结果，再把这个元素加进 s。'),
          say('The order matters: storing after adding gives the inclusive scan.',
              '顺序很要紧：先加再存，得到的就是包含扫描。'),
        },
        check = function(env)
          return check_scan_fn(env, 'exclusive_scan', exclusive, function(x, got, i, g, w)
            local why = lesson.scan_why(x, got, 'exclusive')
            if why then return why end
            if i == 1 then
              return say('an exclusive scan starts with the identity, 0', '排他扫描的第一个元素是单位元 0')
            end
          end)
        end,
        solution = [[
function exclusive_scan(t)
  local y, s = {}, 0
  for i = 1, #t do
    y[i] = s
    s = s + t[i]
  end
  return y
end
]],
        wrong = {
          [[
function exclusive_scan(t)
  local y, s = {}, 0
  for i = 1, #t do
    s = s + t[i]
    y[i] = s
  end
  return y
end
]],
          [[
function exclusive_scan(t)
  local y, s = {}, 0
  for i = 2, #t do
    s = s + t[i - 1]
    y[i] = s
  end
  return y
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('The sequential scan', '顺序扫描'),
      text = say([[
On one thread a scan is one loop: y[1] = x[1], then y[i] = y[i-1] + x[i]. That is n - 1 adds,
the least any scan can do, and each add waits for the one before it: a chain of n - 1 steps.
The parallel scans of this lecture shorten the chain; the question is how many extra adds they
pay for it.

The code times the Lua loop on 2^20 elements and Lumen's native CPU scan on the same tensor.
Both numbers are CPU measured on this machine; the labels say which implementation ran.]],
        [[
在一个线程上，扫描就是一个循环：y[1] = x[1]，然后 y[i] = y[i-1] + x[i]。一共 n - 1 次加法，
这是任何扫描算法所能做到的最少次数；但每次加法都要等上一次做完，形成一条 n - 1 步的依赖链。
本讲的并行扫描要做的就是缩短这条链，问题在于要为此多付出多少次加法。

下面的代码在 2^20 个元素上给 Lua 循环计时，并在同一个张量上给 Lumen 原生的 CPU 扫描计时。
两个数字都是在这台机器的 CPU 上实测的，标签写明了是哪个实现跑出来的。]]),
      code = [[
function scan_seq(x)
  local y, s = {}, 0
  for i = 1, #x do
    s = s + x[i]
    y[i] = s
  end
  return y
end
big = lm.rand(1 << 20)
local t = big:tolist()
local t0 = lm.sys.clock()
local y = scan_seq(t)
local lua_ms = (lm.sys.clock() - t0) * 1000
local _, cpu = kernels.scan(big, {backend = 'cpu'})
print(string.format('Lua loop (%d adds): %7.2f ms, CPU measured', #t - 1, lua_ms))
print(string.format('kernels.scan, cpu:         %7.2f ms, %s', cpu.counters.time_ms, cpu.provenance))
print('  which ran: ' .. (cpu.impl or cpu.algo))
]],
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Kogge-Stone, step by step', 'Kogge-Stone，一步一步来'),
      text = say([[
Kogge-Stone gives every element its own thread. In the step with stride s (1, 2, 4, ...), every
element i with i > s adds the element s places to its left. After the step with stride s, element
i holds the sum of the 2s inputs ending at i (or of all of them, near the start). After log2 n
steps every element holds its whole prefix: 3 steps for the lecture's 8 numbers.

The code plays the steps with plain Lua, one line per step. Each step reads the old values and
writes new ones: on a GPU that is what the barrier between the read and the write guarantees.]],
        [[
Kogge-Stone 给每个元素分配一个线程。在步长为 s（1、2、4……）的那一步里，所有满足 i > s 的元素
都加上它左边第 s 个元素。步长为 s 的这一步结束后，元素 i 里存的是以 i 结尾的 2s 个输入之和
（靠近开头的元素则是全部输入之和）。经过 log2 n 步，每个元素都得到了完整的前缀和：课上的
8 个数只要 3 步。

下面的代码用普通的 Lua 把这几步演一遍，每一步打印一行。每一步都读旧值、写新值：在 GPU 上，
读和写之间的那道屏障保证的正是这一点。]]),
      code = [[
function kogge_stone_steps(x)
  local xy, stride = {table.unpack(x)}, 1
  while stride < #xy do
    local new = {}
    for i = 1, #xy do
      new[i] = i > stride and xy[i] + xy[i - stride] or xy[i]
    end
    xy = new
    print(string.format('stride %d: %s', stride, table.concat(xy, ' ')))
    stride = stride * 2
  end
  return xy
end
kogge_stone_steps({3, 1, 7, 0, 4, 1, 6, 3})
]],
      expect = 'stride 1: 3 4 8 7 4 5 7 9\nstride 2: 3 4 11 11 12 12 11 14\nstride 4: 3 4 11 11 15 16 22 25\n',
      scene = { 'scan', n = 8, input = 'pmpp', variant = 'kogge-stone' },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Kogge-Stone on the SIMT emulator', '在 SIMT 模拟器上跑 Kogge-Stone'),
      text = say([[
Lumen ships the lecture's kernel, one thread per element and the section in shared memory:

  int t = threadIdx.x;
  XY[t] = X[i];
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    __syncthreads();
    if (t >= stride) temp = XY[t] + XY[t - stride];
    __syncthreads();
    if (t >= stride) XY[t] = temp;
  }
  Y[i] = XY[t];

With backend='emu' it runs on the SIMT emulator, which records every load, store, add and barrier
of every thread. Its counters say log2 8 = 3 steps and 17 adds, and the picture is drawn from that
trace: press space to play it, the arrows to step.]],
        [[
Lumen 自带课上的这个内核：每个线程负责一个元素，整段数据放在共享内存里：

  int t = threadIdx.x;
  XY[t] = X[i];
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    __syncthreads();
    if (t >= stride) temp = XY[t] + XY[t - stride];
    __syncthreads();
    if (t >= stride) XY[t] = temp;
  }
  Y[i] = XY[t];

用 backend='emu' 时它在 SIMT 模拟器上运行，模拟器记录下每个线程的每一次读、写、加法和屏障。
计数器给出 log2 8 = 3 步、17 次加法；画面就是根据这份记录画出来的：按空格播放，方向键单步。]]),
      code = [[
y, info = kernels.scan(lm.tensor({3, 1, 7, 0, 4, 1, 6, 3}):float(), {algo = 'kogge-stone', backend = 'emu'})
print('y        ' .. table.concat(y:int():tolist(), ' '))
print('source   ' .. info.provenance)
print('steps    ' .. info.counters.steps)
print('adds     ' .. info.counters.adds)
print('barriers ' .. info.counters.barriers)
]],
      expect = 'y        3 4 11 11 15 16 22 25\nsource   emulated, modelled cycles\nsteps    3\nadds     17\nbarriers 6\n',
      scene = function(env) return env.info end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Your Kogge-Stone kernel', '你自己的 Kogge-Stone 内核'),
      text = say([[
Now write the kernel yourself, in Lua, and run it on the same emulator with kernels.launch. The
kernel is a function ks_kernel(t, X, Y, n) that every thread runs: t.threadIdx.x is the thread's
index, t.shared.XY the block's shared array, t:sync() is __syncthreads(), and t:add(a, b) is an
add the counters count (a plain + works too, but is not counted). X and Y are the tensors,
indexed from 0 inside a kernel, as in CUDA C.

The starting point below loads X into XY and writes XY back to Y: it copies instead of scanning.
Add the loop of step 5: strides 1, 2, 4, ... below blockDim.x, a barrier before reading
XY[i - stride] and another before writing XY[i]. `run_ks(kernel, x)` launches one block sized to
x; the picture is your kernel's own trace.]],
        [[
现在自己写这个内核：用 Lua 写，再用 kernels.launch 在同一个模拟器上运行。内核是一个每个线程都
要执行的函数 ks_kernel(t, X, Y, n)：t.threadIdx.x 是线程的下标，t.shared.XY 是块的共享数组，
t:sync() 就是 __syncthreads()，t:add(a, b) 是一次会被计数器数到的加法（直接写 + 也能算，
只是不计数）。X 和 Y 是张量，在内核里和 CUDA C 一样从 0 开始编号。

下面的起点代码把 X 载入 XY，再把 XY 写回 Y：它只是复制，没有扫描。把第 5 步的循环加进去：
步长 1、2、4……直到小于 blockDim.x，读 XY[i - stride] 之前一道屏障，写 XY[i] 之前再一道。
`run_ks(kernel, x)` 用一个和 x 一样大的块来启动；画面是你自己的内核留下的记录。]]),
      code = [[
-- launches kernel on one block with one thread per element of x (at most 1024)
function run_ks(kernel, x)
  local n = x:numel()
  local block = 1
  while block < n do block = block * 2 end
  local y = lm.zeros(n)
  local info = kernels.launch(kernel, {grid = 1, block = block, shared = {XY = block}, args = {x, y, n}})
  return y, info
end
function ks_kernel(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  -- TODO: the Kogge-Stone loop
  if i < n then Y[i] = XY[i] end
end
y, ks_info = run_ks(ks_kernel, lm.tensor({3, 1, 7, 0, 4, 1, 6, 3}):float())
print('your kernel: ' .. table.concat(y:int():tolist(), ' '))
]],
      scene = function(env) return env.ks_info end,
      exercise = {
        prompt = say([[
Complete `ks_kernel(t, X, Y, n)` so that `run_ks(ks_kernel, x)` returns the inclusive scan of x.
It is run on fresh random inputs of 8 to 1000 elements and compared with a sequential scan.]],
          [[
把 `ks_kernel(t, X, Y, n)` 补完整，使 `run_ks(ks_kernel, x)` 返回 x 的包含扫描。检查时会在 8 到
1000 个元素的新随机输入上运行它，并和顺序扫描比较。]]),
        hints = {
          say('local stride = 1; while stride < t.blockDim.x do ... stride = stride * 2 end',
              'local stride = 1; while stride < t.blockDim.x do ... stride = stride * 2 end'),
          say('Inside: t:sync(); read temp = t:add(XY[i], XY[i - stride]) when i >= stride; t:sync(); then write XY[i] = temp.',
              '循环里：t:sync()；当 i >= stride 时读 temp = t:add(XY[i], XY[i - stride])；t:sync()；再写 XY[i] = temp。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'ks_kernel')
          if not ok then return false, fn end
          local run = env.run_ks
          if type(run) ~= 'function' then
            return false, say('run_ks is gone: run the step again (:run)', 'run_ks 不见了：请重新运行这一步（:run）')
          end
          -- sizes over one warp, odd and not powers of two (the block is the next power of two)
          for _, n in ipairs({ 8, 13, 33, 64, math.random(200, 1000) }) do
            local x = lm.randint(0, 10, { n }):float()
            local rok, y, info = lesson.try(run, fn, x)
            if not rok then return false, kernel_failure(n, y) end
            local cok, msg = lesson.compare(y, x:cumsum(1), {
              what = say(string.format('your scan of %d elements', n), string.format('你对 %d 个元素的扫描', n)),
              zero_based = true,
              why = function(i, g, w)
                local why = lesson.scan_why(x, y, 'inclusive')
                if why then return why end
                return say('did every thread wait at the barrier, and does the stride double up to blockDim.x?',
                           '每个线程都在屏障处等了吗？步长有没有一直翻倍到 blockDim.x？')
              end })
            if not cok then return false, msg end
            -- as many steps as the lecture's kernel: log2(blockDim.x), a barrier before the reads
            -- and one before the writes of each
            local _, ref = run(ks_reference, x)
            if info.counters.barriers > ref.counters.barriers then
              return false, say(string.format('your scan of %d elements is right, but your kernel waits at %d barriers where %d do (two for each of the log2 %d steps): does the loop run a step with stride >= blockDim.x, in which no thread adds?',
                  n, info.counters.barriers, ref.counters.barriers, info.counters.block),
                string.format('你对 %d 个元素的扫描是对的，但你的内核在 %d 道屏障处等待，其实 %d 道就够了（log2 %d 步，每步两道）：循环是不是多跑了一步步长 >= blockDim.x 的、没有线程做加法的空步？',
                  n, info.counters.barriers, ref.counters.barriers, info.counters.block))
            end
          end
          return true, say('your kernel scans every input right on the emulator, in log2 n steps; to watch it: y, ks_info = run_ks(ks_kernel, x) viz.show(ks_info)',
                           '你的内核在模拟器上对每组输入都扫描正确，只用 log2 n 步；想看它怎么跑：y, ks_info = run_ks(ks_kernel, x) viz.show(ks_info)')
        end,
        solution = [[
function ks_kernel(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    t:sync()
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end
y, ks_info = run_ks(ks_kernel, lm.tensor({3, 1, 7, 0, 4, 1, 6, 3}):float())
]],
        wrong = {
          [[
function ks_kernel(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    if i >= stride then XY[i] = t:add(XY[i], XY[i - stride]) end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end
]],
          [[
function ks_kernel(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x // 2 do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    t:sync()
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Remove a barrier, meet the race', '去掉一道屏障，看看数据竞争'),
      text = say([[
Why two barriers? Between them every thread only reads XY, after the second only writes. Remove
the one before the write and, in the same phase, thread i + stride may read XY[i] while thread i
overwrites it: on a GPU either may come first, and the answer changes from run to run. The
emulator runs threads in a fixed order, so the wrong answer could even look right; its race
checker (as compute-sanitizer's racecheck does) looks at every phase instead and stops the kernel,
naming the array, the index, the two threads and their lines.

Make a copy of a working kernel called ks_racy, delete that barrier and run it: the code below
shows how to catch the report instead of stopping.]],
        [[
为什么要两道屏障？两道之间，每个线程都只读 XY；第二道之后都只写。把写之前的那道去掉，在同一个
区段里，线程 i + stride 可能正在读 XY[i]，而线程 i 同时在改写它：在 GPU 上谁先谁后都有可能，
答案每次运行都可能不一样。模拟器按固定顺序运行线程，所以错的结果甚至可能看起来是对的；它的
竞争检查器（和 compute-sanitizer 的 racecheck 一样）则检查每一个区段，并叫停内核，报出数组、
下标、两个线程以及它们所在的行。

复制一份能正常工作的内核，取名 ks_racy，删掉那道屏障再运行：下面的代码演示如何把报告接住，
而不是让程序停下来。]]),
      code = [[
-- a working kernel to start from (the solution of step 6)
function ks_good(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    t:sync()
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end
local ok, err = pcall(run_ks, ks_good, lm.rand(16))
print('ks_good ran: ' .. tostring(ok))
-- define ks_racy: ks_good without the t:sync() before XY[i] = temp; then
--   print(pcall(run_ks, ks_racy, lm.rand(16)))
]],
      expect = 'ks_good ran: true\n',
      exercise = {
        prompt = say([[
Define `ks_racy`: ks_good without the barrier between reading XY[i - stride] and writing XY[i].
The check runs it and expects the race checker to stop it.]],
          [[
定义 `ks_racy`：就是去掉了“读 XY[i - stride]”和“写 XY[i]”之间那道屏障的 ks_good。检查时会
运行它，并期望竞争检查器把它叫停。]]),
        hints = {
          say('Copy ks_good under the name ks_racy and delete the second t:sync() inside the loop.',
              '把 ks_good 复制一份，改名为 ks_racy，再删掉循环里的第二个 t:sync()。'),
        },
        -- It asks for one fault: the race the missing barrier lets happen, and nothing else. So
        -- the kernel must stop on a race in XY (not on an index out of bounds or another array),
        -- and, run without the race check (the emulator's fixed order), behave exactly as ks_good
        -- without that barrier: the same output and the same number of barriers.
        check = function(env)
          local ok, fn = lesson.need(env, 'ks_racy')
          if not ok then return false, fn end
          for _, n in ipairs({ 16, 37 }) do
            local x = lm.randint(0, 10, { n }):float()
            local rok, y, kind, fault = lesson.try(env.run_ks, fn, x)
            if rok then
              return false, say(string.format('ks_racy ran %d elements without a race: remove the t:sync() between reading XY[i - stride] and writing XY[i]', n),
                string.format('ks_racy 在 %d 个元素上运行时没有发生竞争：请删掉“读 XY[i - stride]”和“写 XY[i]”之间的那个 t:sync()', n))
            end
            if kind ~= 'race' then
              return false, say('ks_racy stopped, but not on a race: ' .. y.en .. '. Start from ks_good and delete only the barrier.',
                'ks_racy 停下了，但不是因为竞争：' .. y.zh .. '。从 ks_good 出发，只删掉那一道屏障。')
            end
            if fault.array ~= 'XY' then
              return false, say(string.format("ks_racy races on '%s', not on XY: %s", fault.array, y.en),
                string.format("ks_racy 的竞争发生在 '%s' 上，而不是 XY：%s", fault.array, y.zh))
            end
            local block = 1
            while block < n do block = block * 2 end
            local function order(kernel)
              local out = lm.zeros(n)
              local info = kernels.launch(kernel, { grid = 1, block = block, shared = { XY = block }, args = { x, out, n },
                racecheck = false })
              return out, info
            end
            local rok2, mine, info = lesson.try(order, fn)
            local want, ref = order(ks_racy_reference)
            if not rok2 or info.counters.barriers ~= ref.counters.barriers or not lesson.compare(mine, want) then
              return false, say(string.format('ks_racy has a race in XY, but it is not only ks_good without the barrier before XY[i] = temp: run in the emulator\'s fixed order it %s. Copy ks_good and delete that one t:sync().',
                  not rok2 and ('fails: ' .. mine.en) or info.counters.barriers ~= ref.counters.barriers
                    and string.format('waits at %d barrier%s, not %d', info.counters.barriers,
                      info.counters.barriers == 1 and '' or 's', ref.counters.barriers)
                    or 'computes something else'),
                string.format('ks_racy 在 XY 上有竞争，但它不只是去掉了 XY[i] = temp 之前那道屏障的 ks_good：按模拟器的固定顺序运行，它%s。复制 ks_good，只删掉那一个 t:sync()。',
                  not rok2 and ('会出错：' .. mine.zh) or info.counters.barriers ~= ref.counters.barriers
                    and string.format('在 %d 道屏障处等待，而不是 %d 道', info.counters.barriers, ref.counters.barriers)
                    or '算出了别的结果'))
            end
            if n == 37 then
              return true, say('the race checker caught what the missing barrier lets happen: ' .. y.en,
                '竞争检查器抓住了少掉的那道屏障所放任的事情：' .. y.zh)
            end
          end
        end,
        solution = [[
function ks_racy(t, X, Y, n)
  local i = t.threadIdx.x
  local XY = t.shared.XY
  XY[i] = i < n and X[i] or 0
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local temp
    if i >= stride then temp = t:add(XY[i], XY[i - stride]) end
    if i >= stride then XY[i] = temp end
    stride = stride * 2
  end
  if i < n then Y[i] = XY[i] end
end
]],
        wrong = { [[ks_racy = ks_good]] },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Counting the adds', '数一数加法'),
      text = say([[
In the step with stride s, the threads i >= s add (counting i from 0): n - s of them. Over the
steps s = 1, 2, 4, ..., n/2 that is n·log2 n - (1 + 2 + ... + n/2) = n·log2 n - (n - 1) adds.
For the 8 numbers: 8·3 - 7 = 17, what the emulator counted.

The code runs the emulator for a few sizes and prints its count. Compare it with the sequential
scan's n - 1: at n = 1024 Kogge-Stone does about nine times the work.]],
        [[
在步长为 s 的那一步里，下标 i >= s 的线程（下标从 0 数）做加法：一共 n - s 个。把 s = 1, 2, 4,
..., n/2 各步加起来，就是 n·log2 n - (1 + 2 + ... + n/2) = n·log2 n - (n - 1) 次加法。对那
8 个数：8·3 - 7 = 17，正是模拟器数出来的。

下面的代码在几个规模上跑模拟器并打印它的计数。和顺序扫描的 n - 1 比一比：n = 1024 时，
Kogge-Stone 做的工作大约是它的九倍。]]),
      code = [[
for _, n in ipairs({8, 16, 64}) do
  local _, run = kernels.scan(lm.rand(n), {algo = 'kogge-stone', backend = 'emu'})
  print(string.format('n = %4d: %5d adds (emulated), sequential %4d', n, run.counters.adds, n - 1))
end
-- write ks_adds(n): the number of adds Kogge-Stone does on n elements (n a power of two)
function ks_adds(n)
  return 0  -- TODO
end
]],
      expect = 'n =    8:    17 adds (emulated), sequential    7\nn =   16:    49 adds (emulated), sequential   15\n'
        .. 'n =   64:   321 adds (emulated), sequential   63\n',
      exercise = {
        prompt = say([[
Write `ks_adds(n)` returning how many adds Kogge-Stone does on n elements (n a power of two,
2 to 1024). It is compared with what the emulator counts for several n.]],
          [[
写出 `ks_adds(n)`，返回 Kogge-Stone 在 n 个元素上做的加法次数（n 是 2 到 1024 之间的 2 的幂）。
检查时会和模拟器在若干个 n 上数出来的次数比较。]]),
        hints = {
          say('A step with stride s has n - s threads that add. Sum that over s = 1, 2, 4, ..., n/2.',
              '步长为 s 的一步里有 n - s 个线程做加法。把它对 s = 1, 2, 4, ..., n/2 求和。'),
          say('1 + 2 + 4 + ... + n/2 = n - 1, and there are log2 n steps (math.log(n, 2)).',
              '1 + 2 + 4 + ... + n/2 = n - 1，一共有 log2 n 步（math.log(n, 2)）。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'ks_adds')
          if not ok then return false, fn end
          local sizes = { 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 }
          local pick = { sizes[math.random(1, 3)], sizes[math.random(4, 7)], sizes[math.random(8, 10)] }
          for _, n in ipairs(pick) do
            local _, run = kernels.scan(lm.rand(n), { algo = 'kogge-stone', backend = 'emu' })
            local want = run.counters.adds
            local rok, got = lesson.try(fn, n)
            if not rok then return false, got end
            got = lesson.number(got)
            if got ~= want then
              local extra = (got == n * math.floor(math.log(n, 2) + 0.5))
                and say('n·log2 n counts every thread in every step, but the threads with index < stride do not add',
                        'n·log2 n 把每一步的每个线程都算上了，但下标小于步长的线程并不做加法')
                or say('the step with stride s has n - s threads that add', '步长为 s 的一步有 n - s 个线程做加法')
              return false, say(string.format('for n = %d the emulator counted %d add%s, ks_adds(%d) gives %s: %s', n,
                  want, want == 1 and '' or 's', n, lesson.show(got), extra.en),
                string.format('n = %d 时模拟器数出 %d 次加法，ks_adds(%d) 给出 %s：%s', n, want, n, lesson.show(got), extra.zh))
            end
          end
          return true, say(string.format('it matches the emulator at n = %d, %d and %d', pick[1], pick[2], pick[3]),
                           string.format('在 n = %d、%d、%d 时都和模拟器一致', pick[1], pick[2], pick[3]))
        end,
        solution = [[
function ks_adds(n)
  local steps = math.floor(math.log(n, 2) + 0.5)
  return n * steps - (n - 1)
end
]],
        wrong = {
          [[
function ks_adds(n)
  return n * math.floor(math.log(n, 2) + 0.5)
end
]],
          [[
function ks_adds(n)
  return n - 1
end
]],
        },
      },
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Fast, but not work-efficient', '快，但不省工作量'),
      text = say([[
Kogge-Stone takes log2 n steps instead of n - 1, but does n·log2 n - (n - 1) adds instead of
n - 1: it is not work-efficient. With enough idle hardware the extra adds are free; when the
threads have other work, or power matters, they are not. Below, both sides at n = 1024 from the
emulator: the adds, the steps and the modelled cycles (a stated latency model, docs/trace.md, not
a measurement).

The next lecture builds Brent-Kung, a scan that keeps the adds near 2n with 2·log2 n - 1 steps:
the picture already shows it beside Kogge-Stone on 16 numbers (Tab switches the view).]],
        [[
Kogge-Stone 用 log2 n 步代替了 n - 1 步，却要做 n·log2 n - (n - 1) 次加法，而不是 n - 1 次：它在
工作量上不高效（not work-efficient）。硬件有大量空闲时，多出来的加法不花什么；但线程还有别的
活要干、或者功耗要紧时，就不是这样了。下面是 n = 1024 时模拟器给出的两边的数据：加法次数、
步数和模型周期数（按照明确给出的延迟模型算出，见 docs/trace.md，不是实测值）。

下一讲会构造 Brent-Kung：加法次数保持在 2n 左右，步数是 2·log2 n - 1。画面里已经把它和
Kogge-Stone 放在一起，输入是 16 个数（按 Tab 切换视图）。]]),
      code = [[
x = lm.rand(1024)
local _, ks = kernels.scan(x, {algo = 'kogge-stone', backend = 'emu'})
local _, bk = kernels.scan(x, {algo = 'brent-kung', backend = 'emu'})
print(string.format('%-12s %6s %6s %16s', '', 'adds', 'steps', 'modelled cycles'))
print(string.format('%-12s %6d %6d %16s', 'sequential', 1023, 1023, '(not emulated)'))
print(string.format('%-12s %6d %6d %16d', 'Kogge-Stone', ks.counters.adds, ks.counters.steps, ks.counters.modelled_cycles))
print(string.format('%-12s %6d %6d %16d', 'Brent-Kung', bk.counters.adds, bk.counters.steps, bk.counters.modelled_cycles))
print('(the cycles are ' .. ks.provenance .. ': one block of the emulator)')
]],
      scene = { 'scan', n = 16, input = 'pmpp' },
    },
  },
}
