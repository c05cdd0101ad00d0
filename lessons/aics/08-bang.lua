--[[
AI Computing Systems, chapter 8: the intelligent programming language (BANG C on Cambricon's MLUs),
following the notes, on Lumen's emulated MLU (kernels.bang, lua/lumen/bang.lua) — the recursive
abstract machine (storage, control and compute at every level, accelerators at the leaves) and the
five levels of a multi-card server mapped to BANG's memory spaces (the student's recursive
`total`, checked on irregular random machines); the heterogeneous flow of host and device
(malloc, copy in, launch on a queue, sync, copy out, free: the student's host code, checked for
values, the returned info and the memory given back); the built-in variables and a task's part of
n elements (the student's `slice`, checked on random taskDim and n for gaps, overlaps, the
remainder and balance); BLOCK and UNIONx scheduling (the student's `starts` predicts when each
kernel of one queue starts — the notes' Kernel1/2/3 and random queues — against the emulator's
own schedule, run in the check); queues and SyncQueue (the starts with a sync after Kernel1,
checked against the emulator); a vector add written by the student in NRAM (slices and chunks,
checked for values and for bytes moved on random sizes and task counts that do not divide n); and
a tiled matrix multiply streamed through NRAM with ping-pong buffers (__memcpy_async,
__sync_io), checked for values on odd shapes and for the cycles the overlap saves against the
single-buffered kernel; a missing __sync_io is an emulator error.
Steps 1, 4 and 7 show the mlu scene (the demonstration; the built-ins run; the vector add),
steps 5 and 6 the queues scene of their runs, step 8 the pingpong scene (single against the
student's double buffering, core 0).
Format: docs/lessons.md.
]]
local say = lesson.say

local SAN = lm.build_info().sanitize -- Lumen's sanitizer build walks this lesson too: smaller runs
local function bang() return kernels.bang end

-- ---------------------------------------------------------------- step 2: the abstract machine

local KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024

-- The reference: bytes of `space` in the subtree of node (node.storage[space] at every level).
local function total_ref(node, space)
  local s = (node.storage or {})[space] or 0
  for _, c in ipairs(node.compute or {}) do s = s + total_ref(c, space) end
  return s
end
local function own_only(node, space) return (node.storage or {})[space] or 0 end
local function first_child_times(node, space)
  local s = (node.storage or {})[space] or 0
  local kids = node.compute or {}
  if #kids > 0 then s = s + #kids * first_child_times(kids[1], space) end
  return s
end
local function children_only(node, space)
  local s = 0
  for _, c in ipairs(node.compute or {}) do s = s + total_ref(c, space) end
  return #(node.compute or {}) > 0 and s or ((node.storage or {})[space] or 0)
end
local function leaves_only(node, space)
  local kids = node.compute or {}
  if #kids == 0 then return (node.storage or {})[space] or 0 end
  local s = 0
  for _, c in ipairs(kids) do s = s + leaves_only(c, space) end
  return s
end

-- Irregular machines: a server of cards, each of chips, each of clusters of cores, with counts
-- drawn per node (so that one child times the count is not the total).
local function random_machine(seed)
  local rnd = lesson.lcg(seed)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  local function node(level, storage, kids)
    return { level = level, control = level .. ' control', storage = storage, compute = kids }
  end
  local cards = {}
  for c = 1, ri(1, 3) do
    local chips = {}
    for h = 1, ri(1, 2) do
      local clusters = {}
      for l = 1, ri(1, 4) do
        local cores = {}
        for _ = 1, ri(1, 4) do
          cores[#cores + 1] = node('core', { NRAM = 512 * KiB * ri(1, 2), WRAM = MiB }, {})
        end
        clusters[#clusters + 1] = node('cluster', { SRAM = 2 * MiB * ri(1, 2) }, cores)
      end
      chips[#chips + 1] = node('chip', {}, clusters)
    end
    cards[#cards + 1] = node('card', { GDRAM = 8 * GiB * ri(1, 2) }, chips)
  end
  return node('server', { DDR = 64 * GiB * ri(1, 4) }, cards)
end

local TOTAL_MISTAKES = {
  { own_only, say("it matches the node's own storage only: the subtree's compute units (node.compute) hold the rest; call total on each of them and add",
      '它和只算本节点自己的存储的结果一样：其余的在子树的计算单元（node.compute）里；对每一个调用 total 并相加') },
  { first_child_times, say('it matches the first child times the number of children: the machines here are not regular (clusters with 1 to 4 cores), so visit every child',
      '它和“第一个子节点乘以子节点个数”的结果一样：这里的机器并不规则（每个处理器簇有 1 到 4 个核），所以每个子节点都要访问') },
  { children_only, say("it matches the children's storage without the node's own: add node.storage[space] at every level (the cluster's SRAM sits in the cluster, not in its cores)",
      '它和只加子节点、不加本节点自己的存储的结果一样：每一层都要加上 node.storage[space]（处理器簇的 SRAM 在簇里，不在它的核里）') },
  { leaves_only, say('it matches counting the leaves only: storage sits at every level (GDRAM on the card, SRAM in the cluster), not only in the cores',
      '它和只数叶节点的结果一样：每一层都有存储（GDRAM 在板卡上，SRAM 在处理器簇里），不只在核里') },
}

local function check_total(env)
  local ok, fn = lesson.need(env, 'total')
  if not ok then return false, fn end
  for seed = 1, 6 do
    local m = random_machine(40 + seed)
    for _, space in ipairs({ 'NRAM', 'SRAM', 'GDRAM', 'WRAM', 'DDR', 'LDRAM' }) do
      local want = total_ref(m, space)
      local rok, got = lesson.try(fn, m, space)
      local call = string.format("total(machine, '%s') on random machine %d", space, seed)
      local call_zh = string.format("在第 %d 台随机机器上 total(machine, '%s')", seed, space)
      if not rok then return false, say(call .. ': ' .. got.en, call_zh .. '：' .. (got.zh or got.en)) end
      local g = lesson.number(got)
      if g == nil then
        return false, say(string.format('%s returns %s; return a number of bytes (0 where there is none)', call, type(got)),
          string.format('%s 返回的是 %s；应返回字节数（没有这种存储时返回 0）', call_zh, type(got)))
      end
      if g ~= want then
        for _, mk in ipairs(TOTAL_MISTAKES) do
          if mk[1](m, space) == g then
            return false, say(string.format('%s is %s, expected %s: %s', call, lesson.show(g), lesson.show(want), mk[2].en),
              string.format('%s 是 %s，应为 %s：%s', call_zh, lesson.show(g), lesson.show(want), mk[2].zh))
          end
        end
        return false, say(string.format('%s is %s, expected %s: add node.storage[space] (nil counts 0) and total(child, space) for every child in node.compute',
            call, lesson.show(g), lesson.show(want)),
          string.format('%s 是 %s，应为 %s：把 node.storage[space]（nil 算 0）和 node.compute 中每个子节点的 total(child, space) 加起来',
            call_zh, lesson.show(g), lesson.show(want)))
      end
    end
  end
  return true, say('right: on six irregular machines, every space (and 0 for one nobody has)',
    '对：在六台不规则的机器上，每种存储空间都对（谁都没有的空间得 0）')
end

-- ---------------------------------------------------------------- step 3: host and device

-- The check's kernel: task 0 adds the whole arrays in NRAM (the sizes here fit), the others idle.
local function vadd_whole(k, x, y, z, n)
  if k.taskId ~= 0 or n == 0 then return end
  local a, b = k:nram('float32', n, 'a'), k:nram('float32', n, 'b')
  k:__memcpy(a, x, n * 4, 'GDRAM2NRAM')
  k:__memcpy(b, y, n * 4, 'GDRAM2NRAM')
  k:__bang_add(a, a, b, n)
  k:__memcpy(z, a, n * 4, 'NRAM2GDRAM')
end

local function check_host(env)
  local ok, fn = lesson.need(env, 'host_vadd')
  if not ok then return false, fn end
  for ci, c in ipairs({ { 1000, 4 }, { 37, 1 }, { 1, 2 }, { 513, 8 } }) do
    local n, clusters = c[1], c[2]
    local dev = bang().device { clusters = clusters }
    local rnd = lesson.lcg(300 + ci)
    local xs, ys = {}, {}
    for i = 1, n do xs[i], ys[i] = math.floor(rnd() * 200) - 100, math.floor(rnd() * 200) - 100 end
    local hx, hy = lm.tensor(xs), lm.tensor(ys)
    local want = hx + hy
    local call = string.format('host_vadd(dev, kernel, hx, hy) with %d elements on %d cluster(s)', n, clusters)
    local call_zh = string.format('host_vadd(dev, kernel, hx, hy)（%d 个元素，%d 个处理器簇）', n, clusters)
    local used0 = dev:memory().gdram_used
    local rok, hz, info = lesson.try(fn, dev, vadd_whole, hx, hy)
    if not rok then
      local why = { en = '', zh = '' }
      if tostring(hz.en):find('must be array pointers', 1, true) or tostring(hz.en):find('expected an array pointer', 1, true) then
        why = say(' (the kernel gets device pointers: the x, y, z dev:malloc returned, not the host tensors)',
          '（核函数拿到的是设备指针：dev:malloc 返回的 x、y、z，而不是主机端的张量）')
      end
      return false, say(call .. ': ' .. hz.en .. why.en, call_zh .. '：' .. (hz.zh or hz.en) .. why.zh)
    end
    if not lm.is_tensor(hz) then
      return false, say(call .. ' returns ' .. type(hz) .. ' first; return the host tensor z copied back with dev:memcpy(hz, z, \'DEV2HOST\'), then the info',
        call_zh .. ' 返回的第一个值是 ' .. type(hz) .. '；应先返回用 dev:memcpy(hz, z, \'DEV2HOST\') 拷回的主机张量，再返回 info')
    end
    if hz:numel() ~= n then
      return false, say(string.format('%s returns %d elements, expected %d: make the host tensor with lm.zeros(n), n = hx:numel()', call, hz:numel(), n),
        string.format('%s 返回了 %d 个元素，应为 %d：用 lm.zeros(n) 建主机张量，n = hx:numel()', call_zh, hz:numel(), n))
    end
    local got = hz:contiguous():view(n):double()
    if not lm.equal(got, want:double()) then
      local why
      if lm.equal(got, hx:double()) then
        why = say('it equals hx: was hy copied in (HOST2DEV) into the y the kernel reads?', '它等于 hx：hy 有没有拷入（HOST2DEV）到核函数读的 y 里？')
      elseif lm.equal(got, hy:double()) then
        why = say('it equals hy: was hx copied in (HOST2DEV) into the x the kernel reads?', '它等于 hy：hx 有没有拷入（HOST2DEV）到核函数读的 x 里？')
      elseif got:abs():max():item() == 0 then
        why = say('it is all zeros: was the kernel launched with args = {x, y, z, n}, and z copied back (DEV2HOST) into the tensor you return?',
          '它全是 0：核函数是不是用 args = {x, y, z, n} 启动的？z 有没有拷回（DEV2HOST）到你返回的张量里？')
      else
        why = say('look at the order of the arguments: the kernel is kernel(k, x, y, z, n)', '检查参数的顺序：核函数是 kernel(k, x, y, z, n)')
      end
      local _, m = lesson.compare(got, want, { what = 'z' })
      return false, say(call .. ': ' .. m.en .. '; ' .. why.en, call_zh .. '：' .. (m.zh or m.en) .. '；' .. why.zh)
    end
    if type(info) ~= 'table' or type(info.kernels) ~= 'table' or #info.kernels == 0 then
      return false, say(call .. ': z is right, but the second value is ' .. type(info) .. ': return the info q:sync() gives (cnrtSyncQueue: the host waits there for the queue, and the info says when each kernel ran)',
        call_zh .. '：z 是对的，但第二个返回值是 ' .. type(info) .. '：应返回 q:sync() 给出的 info（cnrtSyncQueue：主机在这里等队列做完，info 记录每个核函数何时运行）')
    end
    local kl = info.kernels[#info.kernels]
    if not kl.stop then
      return false, say(call .. ': the info you return was taken before the kernel ran: return what q:sync() returns, after the launch',
        call_zh .. '：你返回的 info 是在核函数运行之前取的：应返回启动之后 q:sync() 的返回值')
    end
    if dev:memory().gdram_used ~= used0 then
      return false, say(string.format('%s: z is right, but %d bytes of GDRAM are still allocated when it returns: dev:free(x), dev:free(y), dev:free(z) (cnrtFree) once z is copied back',
          call, dev:memory().gdram_used - used0),
        string.format('%s：z 是对的，但返回时还有 %d 字节的 GDRAM 没有释放：z 拷回之后 dev:free(x)、dev:free(y)、dev:free(z)（cnrtFree）', call_zh, dev:memory().gdram_used - used0))
    end
  end
  return true, say('right: malloc, copy in, launch, sync, copy out, free — the values, the info and GDRAM given back, on 1 to 1000 elements',
    '对：分配、拷入、启动、同步、拷出、释放——在 1 到 1000 个元素上，结果、info 和归还的 GDRAM 都对')
end

-- ---------------------------------------------------------------- step 4: a task's slice

local function check_slice(env)
  local ok, fn = lesson.need(env, 'slice')
  if not ok then return false, fn end
  local cases = { { 4, 10 }, { 16, 3 }, { 5, 5 }, { 1, 7 }, { 8, 0 }, { 3, 1 }, { 12, 12 * 7 } }
  local rnd = lesson.lcg(404)
  for _ = 1, 20 do cases[#cases + 1] = { 1 + math.floor(rnd() * 40), math.floor(rnd() * 300) } end
  for _, c in ipairs(cases) do
    local dim, n = c[1], c[2]
    local owner, counts = {}, {}
    local base, extra = n // dim, n % dim
    for id = 0, dim - 1 do
      local call = string.format('slice(%d, %d, %d)', id, dim, n)
      local rok, first, count = lesson.try(fn, id, dim, n)
      if not rok then return false, say(call .. ': ' .. first.en, call .. '：' .. (first.zh or first.en)) end
      if math.type(first) ~= 'integer' or math.type(count) ~= 'integer' then
        return false, say(string.format('%s returns %s, %s; return two integers, first (0-based) and count (use //, not /: 7 / 2 is 3.5 in Lua)',
            call, tostring(first), tostring(count)),
          string.format('%s 返回 %s, %s；应返回两个整数：first（从 0 开始）和 count（用 //，不要用 /：Lua 中 7 / 2 是 3.5）',
            call, tostring(first), tostring(count)))
      end
      if count < 0 then
        return false, say(string.format('%s gives count %d: a task with nothing to do has count 0', call, count),
          string.format('%s 给出 count %d：没有活干的任务 count 是 0', call, count))
      end
      counts[id] = count
      for i = first, first + count - 1 do
        if i < 0 or i >= n then
          local one_based = first == base * id + math.min(id, extra) + 1
          return false, say(string.format('%s = %d, %d reaches element %d, outside 0 .. %d%s', call, first, count, i, n - 1,
              one_based and ': first is 0-based, as taskId is (task 0 starts at element 0)' or ''),
            string.format('%s = %d, %d 用到了元素 %d，超出了 0 .. %d%s', call, first, count, i, n - 1,
              one_based and '：first 从 0 开始，和 taskId 一样（任务 0 从元素 0 开始）' or ''))
        end
        if owner[i] then
          return false, say(string.format('on taskDim = %d, n = %d, element %d belongs to task %d and to task %d: the slices overlap (task t starts where task t - 1 ends: first = t * (n // taskDim) + min(t, n %% taskDim))',
              dim, n, i, owner[i], id),
            string.format('taskDim = %d、n = %d 时，元素 %d 既属于任务 %d 又属于任务 %d：切片重叠了（任务 t 从任务 t - 1 结束的地方开始：first = t * (n // taskDim) + min(t, n %% taskDim)）',
              dim, n, i, owner[i], id))
        end
        owner[i] = id
      end
    end
    for i = 0, n - 1 do
      if not owner[i] then
        local dropped = true
        for id = 0, dim - 1 do dropped = dropped and counts[id] == base end
        return false, say(string.format('on taskDim = %d, n = %d, element %d belongs to no task%s', dim, n, i,
            dropped and extra > 0 and string.format(': every task takes n // taskDim = %d, and the remainder, n %% taskDim = %d elements, is dropped; give the first %d tasks one more each', base, extra, extra)
            or ': the slices must cover 0 .. n - 1, each task starting where the one before ends'),
          string.format('taskDim = %d、n = %d 时，元素 %d 不属于任何任务%s', dim, n, i,
            dropped and extra > 0 and string.format('：每个任务都取 n // taskDim = %d 个，余下的 n %% taskDim = %d 个元素被丢掉了；让前 %d 个任务各多取一个', base, extra, extra)
            or '：切片要覆盖 0 .. n - 1，每个任务从前一个结束的地方开始'))
      end
    end
    for id = 0, dim - 1 do
      if counts[id] ~= base and counts[id] ~= base + 1 then
        return false, say(string.format('on taskDim = %d, n = %d the slices cover every element once, but task %d does %d of them, where the balanced split gives %d or %d: a kernel lasts as long as its slowest task, so spread the remainder, one element each to the first n %% taskDim tasks',
            dim, n, id, counts[id], base, base + 1),
          string.format('taskDim = %d、n = %d 时，切片正好覆盖每个元素一次，但任务 %d 做了 %d 个，均衡的划分应是 %d 或 %d 个：核函数的时间由最慢的任务决定，所以要把余数分散开，前 n %% taskDim 个任务各多一个',
            dim, n, id, counts[id], base, base + 1))
      end
    end
  end
  return true, say('right: every element in exactly one slice, balanced, on 27 (taskDim, n) pairs, n < taskDim and n = 0 among them',
    '对：在 27 组 (taskDim, n) 上（包括 n < taskDim 和 n = 0），每个元素恰好属于一个切片，而且均衡')
end

-- ---------------------------------------------------------------- step 5: scheduling

local UNION_X = { BLOCK = 0, UNION1 = 1, UNION2 = 2, UNION4 = 4, UNION8 = 8 }

-- A kernel that keeps every core of its unit busy for `cycles` modelled cycles: one vector add of
-- (cycles - issue) * lanes elements.
local function busy(k, cycles)
  local m = k.dev.model
  local n = (cycles - m.issue) * m.lanes
  local a = k:nram('float32', n, 'a')
  k:__bang_add(a, a, a, n)
end

-- What the emulator says: the kernels of `list` launched in one queue of a fresh device; returns
-- the info. (`sync_after`: q:sync() after that kernel's launch.)
local function run_queue(clusters, list, sync_after)
  local dev = bang().device { clusters = clusters }
  local q = dev:queue()
  for i, kl in ipairs(list) do
    dev:launch(busy, { name = 'Kernel' .. i, dim = kl.dim, type = kl.type, queue = q, args = { kl.cycles } })
    if sync_after == i then q:sync() end
  end
  return q:sync()
end

-- The scheduler's mistakes, simulated: 'serial' (a kernel waits for the one before to end),
-- 'any_order' (a kernel places units whenever they fit, not after the one before has placed all),
-- 'union_as_block' (a UNIONx unit takes any free cores, not whole clusters).
local function simulate_starts(clusters, list, how)
  local free = {}
  for c = 0, 4 * clusters - 1 do free[c] = 0 end
  local function fits(x, t)
    local per = x == 0 and 1 or 4 * x
    local cores = {}
    if x == 0 or how == 'union_as_block' then
      for c = 0, 4 * clusters - 1 do
        if #cores < per and free[c] <= t then cores[#cores + 1] = c end
      end
    else
      for cl = 0, clusters - 1 do
        local all = true
        for c = 4 * cl, 4 * cl + 3 do all = all and free[c] <= t end
        if all and #cores < per then for c = 4 * cl, 4 * cl + 3 do cores[#cores + 1] = c end end
      end
    end
    return #cores == per and cores or nil
  end
  local function next_after(t)
    local nxt = math.huge
    for c = 0, 4 * clusters - 1 do if free[c] > t then nxt = math.min(nxt, free[c]) end end
    return nxt
  end
  local starts, t, last_end = {}, 0, 0
  for i, kl in ipairs(list) do
    local x = UNION_X[kl.type]
    local per = x == 0 and 1 or 4 * x
    if how == 'serial' then t = math.max(t, last_end) end
    local tt = how == 'any_order' and 0 or t
    for _ = 1, kl.dim // per do
      local cores = fits(x, tt)
      while not cores do
        tt = next_after(tt)
        if tt == math.huge then return nil end
        cores = fits(x, tt)
      end
      for _, c in ipairs(cores) do free[c] = tt + kl.cycles end
      starts[i] = starts[i] or tt
      last_end = math.max(last_end, tt + kl.cycles)
    end
    if how ~= 'any_order' then t = tt end
  end
  return starts
end

local SCHED_MISTAKES = {
  { 'serial', say('it matches a queue that runs one kernel at a time: a kernel may start placing its units as soon as the kernel before it in the queue has placed all of its own (the notes: Kernel2 starts at Time1, beside Kernel1), not when it ends',
      '它和队列一次只运行一个核函数的结果一样：只要队列里前一个核函数的调度单位都已放下，下一个就可以开始放自己的（笔记：Kernel2 也在 Time1 开始，与 Kernel1 并行），不必等它结束') },
  { 'any_order', say('it matches kernels placed whenever they fit, in any order: a queue issues in order — a kernel starts placing units only after the kernel before it in the same queue has placed all of its own',
      '它和核函数只要放得下就放、不管顺序的结果一样：队列是按顺序发射的——同一队列里，前一个核函数的调度单位全部放下之后，后一个才开始放') },
  { 'union_as_block', say('it matches a UNIONx unit taking any 4x free cores: it needs x whole clusters free (all 4 cores of each), as the notes say (UNION2: when 2 clusters are idle)',
      '它和 UNIONx 的调度单位占用任意 4x 个空闲核的结果一样：它需要 x 个完整的空闲处理器簇（每个簇 4 个核都空闲），正如笔记所说（UNION2：有 2 个 cluster 空闲时）') },
}

local SLIDE = { { type = 'UNION2', dim = 8, cycles = 100 }, { type = 'UNION1', dim = 4, cycles = 60 },
  { type = 'UNION4', dim = 16, cycles = 50 } }

local function sched_cases()
  local cases = { { clusters = 4, list = SLIDE, what = say("the notes' example", '笔记中的例子') },
    -- Kernel3 may not take the cores Kernel2 leaves idle before Kernel2 has placed its second unit
    { clusters = 2, list = { { type = 'BLOCK', dim = 1, cycles = 200 }, { type = 'UNION1', dim = 8, cycles = 50 },
        { type = 'BLOCK', dim = 1, cycles = 10 } }, what = say('a hand-made queue', '一个手工构造的队列') },
    -- at cycle 100 four cores are idle, but no whole cluster
    { clusters = 2, list = { { type = 'BLOCK', dim = 2, cycles = 100 }, { type = 'BLOCK', dim = 4, cycles = 200 },
        { type = 'UNION1', dim = 4, cycles = 50 } }, what = say('a hand-made queue', '一个手工构造的队列') },
    { clusters = 4, list = { { type = 'UNION4', dim = 16, cycles = 80 }, { type = 'UNION1', dim = 8, cycles = 40 },
        { type = 'BLOCK', dim = 3, cycles = 30 } }, what = say('a hand-made queue', '一个手工构造的队列') } }
  -- which cores a unit may take and when the next one frees: the first and the last core matter
  local hand = {
    { { 'BLOCK', 8, 100 }, { 'UNION2', 8, 10 } },                                      -- every core a BLOCK task
    { { 'BLOCK', 1, 100 }, { 'UNION2', 8, 10 } },                                      -- core 0 busy
    { { 'BLOCK', 3, 50 }, { 'BLOCK', 1, 100 }, { 'UNION2', 8, 10 } },                  -- core 3 busy longest
    { { 'BLOCK', 1, 50 }, { 'UNION1', 4, 100 }, { 'UNION1', 4, 10 } },                 -- core 0 frees first
    { { 'UNION1', 4, 100 }, { 'BLOCK', 3, 200 }, { 'BLOCK', 1, 30 }, { 'BLOCK', 1, 10 } }, -- core 7 frees first
  }
  for _, h in ipairs(hand) do
    local list = {}
    for i, kl in ipairs(h) do list[i] = { type = kl[1], dim = kl[2], cycles = kl[3] } end
    cases[#cases + 1] = { clusters = 2, list = list, what = say('a hand-made queue', '一个手工构造的队列') }
  end
  local rnd = lesson.lcg(505)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  local types = { 'BLOCK', 'UNION1', 'UNION2', 'UNION4', 'UNION8' }
  for _ = 1, 7 do
    local clusters = ({ 2, 4, 8 })[ri(1, 3)]
    local list = {}
    for i = 1, ri(3, 6) do
      local ty
      repeat ty = types[ri(1, 5)] until UNION_X[ty] <= clusters
      local x = UNION_X[ty]
      local per = x == 0 and 1 or 4 * x
      list[i] = { type = ty, dim = x == 0 and ri(1, 4 * clusters + 5) or per * ri(1, 3), cycles = 10 * ri(2, 15) }
    end
    cases[#cases + 1] = { clusters = clusters, list = list, what = say('a random queue', '一个随机队列') }
  end
  return cases
end

local function describe_list(list, zh)
  local s = {}
  for i, kl in ipairs(list) do
    s[i] = string.format(zh and 'Kernel%d %s，dim %d，%d 个周期' or 'Kernel%d %s dim %d, %d cycles', i, kl.type, kl.dim, kl.cycles)
  end
  return table.concat(s, zh and '；' or '; ')
end

local function copy_list(list)
  local c = {}
  for i, kl in ipairs(list) do c[i] = { type = kl.type, dim = kl.dim, cycles = kl.cycles } end
  return c
end

local function check_starts(env)
  local ok, fn = lesson.need(env, 'starts')
  if not ok then return false, fn end
  for _, c in ipairs(sched_cases()) do
    local info = run_queue(c.clusters, c.list)
    local head_en = string.format('%s on %d clusters (%s)', c.what.en, c.clusters, describe_list(c.list))
    local head_zh = string.format('%s，%d 个处理器簇（%s）', c.what.zh, c.clusters, describe_list(c.list, true))
    local rok, got = lesson.try(fn, c.clusters, copy_list(c.list))
    if not rok then return false, say(head_en .. ': ' .. got.en, head_zh .. '：' .. (got.zh or got.en)) end
    if type(got) ~= 'table' then
      return false, say(head_en .. ': starts returns ' .. type(got) .. '; return an array, the start cycle of each kernel',
        head_zh .. '：starts 返回的是 ' .. type(got) .. '；应返回一个数组：每个核函数开始的周期')
    end
    for i, kl in ipairs(info.kernels) do
      local g = lesson.number(got[i])
      if g ~= kl.start then
        local why
        for _, m in ipairs(SCHED_MISTAKES) do
          local alt = simulate_starts(c.clusters, c.list, m[1])
          local same = alt ~= nil
          for j = 1, #c.list do same = same and lesson.number(got[j]) == alt[j] end
          if same then why = m[2] break end
        end
        local units, units_zh = {}, {}
        for _, u in ipairs(info.timeline) do
          units[#units + 1] = string.format('%s unit %d on cluster(s) %s at %s..%s', u.kernel, u.unit,
            table.concat(u.clusters, ','), lesson.show(u.start), lesson.show(u.stop))
          units_zh[#units_zh + 1] = string.format('%s 第 %d 个单位在 cluster %s 上，%s..%s', u.kernel, u.unit,
            table.concat(u.clusters, '、'), lesson.show(u.start), lesson.show(u.stop))
        end
        why = why or say('the emulator placed: ' .. table.concat(units, '; '), '模拟器的安排：' .. table.concat(units_zh, '；'))
        return false, say(string.format('%s: Kernel%d starts at %s by your starts, at %s on the emulator; %s',
            head_en, i, tostring(got[i]), lesson.show(kl.start), why.en),
          string.format('%s：按你的 starts，Kernel%d 在 %s 开始，模拟器上是 %s；%s',
            head_zh, i, tostring(got[i]), lesson.show(kl.start), why.zh))
      end
    end
  end
  return true, say("right: the notes' example (0, 0, 100) and 15 other queues, as the emulator schedules them",
    '对：笔记中的例子（0, 0, 100）和另外 15 个队列，都与模拟器的调度一致')
end

-- ---------------------------------------------------------------- step 6: SyncQueue

local function check_synced(env, answer)
  local v = answer
  if v == nil then v = env.synced_starts end
  if type(v) ~= 'table' then
    return false, say('set synced_starts = {s1, s2, s3} (or :check {s1, s2, s3}): the start cycles of Kernel1, Kernel2 and Kernel3 with q:sync() after Kernel1\'s launch',
      '设置 synced_starts = {s1, s2, s3}（或者 :check {s1, s2, s3}）：在 Kernel1 启动之后调用 q:sync() 时，Kernel1、Kernel2、Kernel3 开始的周期')
  end
  local info = run_queue(4, SLIDE, 1)
  local want = {}
  for i, k in ipairs(info.kernels) do want[i] = k.start end
  for i = 1, 3 do
    local g = lesson.number(v[i])
    if g ~= want[i] then
      local why
      if i == 2 then
        why = say('the host waits at q:sync() until Kernel1 has ended (cycle 100), and only then launches Kernel2',
          '主机在 q:sync() 处一直等到 Kernel1 结束（第 100 个周期），然后才启动 Kernel2')
      elseif g == want[2] then
        why = say('Kernel3 is launched at cycle 100 too (no sync after Kernel2), but it is UNION4: it needs all 4 clusters, and Kernel2 holds one of them until it ends',
          'Kernel3 也是在第 100 个周期启动的（Kernel2 之后没有同步），但它是 UNION4：需要全部 4 个处理器簇，而 Kernel2 在结束之前一直占着其中一个')
      else
        why = say('Kernel2 runs 60 cycles on one cluster; Kernel3 needs the four', 'Kernel2 在一个处理器簇上运行 60 个周期；Kernel3 需要全部四个')
      end
      return false, say(string.format('Kernel%d starts at %s on the emulator, you say %s: %s', i, lesson.show(want[i]), tostring(v[i]), why.en),
        string.format('模拟器上 Kernel%d 在 %s 开始，你给的是 %s：%s', i, lesson.show(want[i]), tostring(v[i]), why.zh))
    end
  end
  return true, say('right: 0, 100 and 160 — the sync costs Kernel2 its place beside Kernel1, and Kernel3 waits for Kernel2',
    '对：0、100 和 160——同步让 Kernel2 失去了与 Kernel1 并行的机会，而 Kernel3 要等 Kernel2')
end

-- ---------------------------------------------------------------- step 7: the vector add

local NRAM_SMALL = 16 * KiB -- the cores' NRAM in step 7's code and check

-- Runs a vector-add kernel fn(k, x, y, z, n) on its own device; returns ok, z (host), the
-- kernel's info, or false and the error.
local function run_vadd(fn, n, dim, ty, clusters, seed)
  local dev = bang().device { clusters = clusters, nram = NRAM_SMALL }
  local rnd = lesson.lcg(seed)
  local xs, ys = {}, {}
  for i = 1, n do xs[i], ys[i] = math.floor(rnd() * 2000) - 1000, math.floor(rnd() * 2000) - 1000 end
  local hx, hy = lm.tensor(xs), lm.tensor(ys)
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  if n > 0 then dev:memcpy(x, hx, 'HOST2DEV'); dev:memcpy(y, hy, 'HOST2DEV') end
  local q = dev:queue()
  local rok, err = lesson.try(function()
    dev:launch(fn, { dim = dim, type = ty, queue = q, args = { x, y, z, n }, name = 'vadd' })
    return q:sync()
  end)
  if not rok then return false, err end
  local hz = lm.zeros(n)
  if n > 0 then dev:memcpy(hz, z, 'DEV2HOST') end
  return true, hz, err.kernels[1], hx + hy
end

local function check_vadd(env)
  local ok, fn = lesson.need(env, 'vadd')
  if not ok then return false, fn end
  local cases = { { 10007, 16, 'UNION1', 4 }, { 5003, 7, 'BLOCK', 2 }, { 3, 16, 'UNION1', 4 },
    { 40000, 12, 'UNION1', 4 }, { 1, 1, 'BLOCK', 1 }, { 999, 8, 'UNION2', 2 } }
  for ci, c in ipairs(cases) do
    local n, dim, ty, clusters = c[1], c[2], c[3], c[4]
    local on = string.format('vadd on n = %d, %d tasks (%s, %d cluster(s), %d KiB of NRAM per core)', n, dim, ty, clusters, NRAM_SMALL // KiB)
    local on_zh = string.format('vadd（n = %d，%d 个任务，%s，%d 个处理器簇，每核 %d KiB NRAM）', n, dim, ty, clusters, NRAM_SMALL // KiB)
    local rok, hz, kl, want = run_vadd(fn, n, dim, ty, clusters, 700 + ci)
    if not rok then
      local e = hz.en or tostring(hz)
      local why = { en = '', zh = '' }
      if e:find('NRAM overflow', 1, true) then
        why = say(' — NRAM holds 16 KiB per core here: copy the slice in chunks (two arrays of 1024 floats take 8 KiB)',
          '——这里每个核只有 16 KiB 的 NRAM：要把切片分块拷入（两个 1024 个浮点数的数组占 8 KiB）')
      elseif e:find('out of bounds', 1, true) then
        why = say(' — the last chunk of a slice is shorter: m = math.min(CHUNK, count - off)',
          '——切片的最后一块比较短：m = math.min(CHUNK, count - off)')
      end
      return false, say(on .. ': ' .. e .. why.en, on_zh .. '：' .. (hz.zh or e) .. why.zh)
    end
    if not lm.equal(hz, want) then
      local bad
      local g, w = hz:tolist(), want:tolist()
      for i = 1, n do if g[i] ~= w[i] then bad = i - 1 break end end
      local q, r = n // dim, n % dim
      local tail = bad >= n - r and r > 0 and q > 0
      return false, say(string.format('%s: z[%d] is %s, expected %s%s', on, bad, lesson.show(g[bad + 1]), lesson.show(w[bad + 1]),
          tail and string.format(' (one of the last n %% taskDim = %d elements: is the remainder given to some task?)', r)
          or ' (does every task copy, add and store all of its slice, chunk after chunk?)'),
        string.format('%s：z[%d] 是 %s，应为 %s%s', on_zh, bad, lesson.show(g[bad + 1]), lesson.show(w[bad + 1]),
          tail and string.format('（它是最后 n %% taskDim = %d 个元素之一：余数有没有分给某个任务？）', r)
          or '（每个任务是不是一块接一块地把自己的整个切片都拷入、相加、写回了？）'))
    end
    local loaded, stored = kl.bytes.GDRAM2NRAM or 0, kl.bytes.NRAM2GDRAM or 0
    if stored ~= 4 * n or loaded ~= 8 * n then
      return false, say(string.format('%s: z is right, but the kernel loaded %d bytes into NRAM and stored %d, where each element is loaded once from x and y and stored once: %d and %d. Do the slices overlap, or do two tasks do the same chunk?',
          on, loaded, stored, 8 * n, 4 * n),
        string.format('%s：z 是对的，但核函数拷入 NRAM %d 字节、写回 %d 字节，而每个元素只需从 x、y 各拷入一次、写回一次：%d 和 %d。切片是不是重叠了，或者两个任务做了同一块？',
          on_zh, loaded, stored, 8 * n, 4 * n))
    end
  end
  return true, say('right: the sums on six sizes and task counts (BLOCK, UNION1, UNION2; n from 1 to 40000, n < taskDim once), each element loaded and stored once',
    '对：在六组大小和任务数上（BLOCK、UNION1、UNION2；n 从 1 到 40000，有一次 n < taskDim），和都对，每个元素只拷入、写回一次')
end

-- ---------------------------------------------------------------- step 8: ping-pong

-- The single-buffered tiled matmul (the check's own copy of step 8's mm_single).
local function mm_single_ref(k, a, b, c, M, K, N, T)
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local tile = k:nram('float32', T * K, 'tile')
  local out = k:nram('float32', T * N, 'out')
  for t = 0, (count + T - 1) // T - 1 do
    local rows = math.min(T, count - t * T)
    k:__memcpy(tile, a + (first + t * T) * K, rows * K * 4, 'GDRAM2NRAM')
    k:__bang_matmul(out, tile, w, rows, K, N)
    k:__memcpy(c + (first + t * T) * N, out, rows * N * 4, 'NRAM2GDRAM')
  end
end

-- The ping-pong of the notes (the check's own copy of the solution).
local function mm_pingpong_ref(k, a, b, c, M, K, N, T)
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local buf = { k:nram('float32', T * K, 'ping'), k:nram('float32', T * K, 'pong') }
  local out = k:nram('float32', T * N, 'out')
  local tiles = (count + T - 1) // T
  local function rows(t) return math.min(T, count - t * T) end
  k:__memcpy_async(buf[1], a + first * K, rows(0) * K * 4, 'GDRAM2NRAM')
  for t = 0, tiles - 1 do
    k:__sync_io()
    if t + 1 < tiles then
      k:__memcpy_async(buf[(t + 1) % 2 + 1], a + (first + (t + 1) * T) * K, rows(t + 1) * K * 4, 'GDRAM2NRAM')
    end
    k:__bang_matmul(out, buf[t % 2 + 1], w, rows(t), K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, rows(t) * N * 4, 'NRAM2GDRAM')
  end
  k:__sync_io()
end

-- Runs mm(k, a, b, c, M, K, N, T) on its own device (UNION1, dim tasks); returns ok, C (host),
-- the kernel's info, A @ B (float64) — or false and the error.
local function run_mm(fn, M, K, N, T, dim, clusters, seed)
  local dev = bang().device { clusters = clusters }
  local A, B
  if seed then
    A, B = lesson.rand(seed, 1, M, K):float(), lesson.rand(seed + 1, 1, K, N):float()
  else -- the timing run: values that cost nothing to make (lesson.rand draws in Lua)
    A, B = lm.ones(M, K), lm.ones(K, N)
  end
  local a, b, c = dev:malloc(M * K), dev:malloc(K * N), dev:malloc(M * N)
  dev:memcpy(a, A, 'HOST2DEV'); dev:memcpy(b, B, 'HOST2DEV')
  local q = dev:queue()
  local rok, info = lesson.try(function()
    dev:launch(fn, { dim = dim, type = 'UNION1', queue = q, args = { a, b, c, M, K, N, T }, name = 'mm' })
    return q:sync()
  end)
  if not rok then return false, info end
  local C = lm.zeros(M, N)
  dev:memcpy(C, c, 'DEV2HOST')
  return true, C, info.kernels[1], seed and A:double():matmul(B:double()) or lm.full({ M, N }, K):double()
end

local MM_BIG = { M = 16 * 16 * (SAN and 4 or 8), K = 256, N = 256, T = 16, dim = 16, clusters = 4 }

local function check_pingpong(env)
  local ok, fn = lesson.need(env, 'mm_pingpong')
  if not ok then return false, fn end
  local cases = { { 301, 37, 23, 7, 12, 4 }, { 5, 16, 8, 4, 16, 4 }, { 64, 32, 16, 16, 4, 1 }, { 97, 20, 30, 8, 8, 2 } }
  for ci, c in ipairs(cases) do
    local M, K, N, T, dim, clusters = table.unpack(c)
    local on = string.format('mm_pingpong on A %dx%d, B %dx%d, tiles of T = %d rows, %d tasks', M, K, K, N, T, dim)
    local on_zh = string.format('mm_pingpong（A %dx%d，B %dx%d，每块 T = %d 行，%d 个任务）', M, K, K, N, T, dim)
    local rok, C, kl, want = run_mm(fn, M, K, N, T, dim, clusters, 800 + 2 * ci)
    if not rok then
      local e = C.en or tostring(C)
      local why = { en = '', zh = '' }
      if e:find('__sync_io', 1, true) then
        why = say(' — an asynchronous copy is still on its way into (or out of) that NRAM: k:__sync_io() makes compute wait for the copies issued so far',
          '——还有异步拷贝正在写入（或读出）那块 NRAM：k:__sync_io() 让计算等待此前发出的所有拷贝')
      end
      return false, say(on .. ': ' .. e .. why.en, on_zh .. '：' .. (C.zh or e) .. why.zh)
    end
    local cok, msg = lesson.compare(C:double(), want, { what = 'C', tol = 1e-4 })
    if not cok then
      return false, say(on .. ': ' .. msg.en .. ' (does each tile go through the buffer it was loaded into, and is the last, shorter tile done?)',
        on_zh .. '：' .. (msg.zh or msg.en) .. '（每一块是不是用它被拷入的那个缓冲区计算的？最后那块较短的做了吗？）')
    end
    local loaded, stored = kl.bytes.GDRAM2NRAM or 0, kl.bytes.NRAM2GDRAM or 0
    if stored ~= 4 * M * N or loaded ~= 4 * M * K then
      return false, say(string.format('%s: C is right, but the kernel loaded %d bytes of A into NRAM and stored %d of C, where each row is loaded once and stored once: %d and %d',
          on, loaded, stored, 4 * M * K, 4 * M * N),
        string.format('%s：C 是对的，但核函数拷入 A 的 %d 字节、写回 C 的 %d 字节，而每一行只需拷入一次、写回一次：%d 和 %d',
          on_zh, loaded, stored, 4 * M * K, 4 * M * N))
    end
  end
  local g = MM_BIG
  local on = string.format('on A %dx%d, B %dx%d, T = %d, %d tasks', g.M, g.K, g.K, g.N, g.T, g.dim)
  local on_zh = string.format('在 A %dx%d、B %dx%d、T = %d、%d 个任务上', g.M, g.K, g.K, g.N, g.T, g.dim)
  local rok, C, kl, want = run_mm(fn, g.M, g.K, g.N, g.T, g.dim, g.clusters)
  if not rok then return false, say(on .. ': ' .. (C.en or tostring(C)), on_zh .. '：' .. (C.zh or C.en or tostring(C))) end
  if not lm.equal(C:double(), want) then -- (exact: sums of ones; lesson.compare only to name the element)
    local _, msg = lesson.compare(C:double(), want, { what = 'C (A and B all ones)' })
    return false, say(on .. ': ' .. msg.en, on_zh .. '：' .. (msg.zh or msg.en))
  end
  local _, _, ks = run_mm(mm_single_ref, g.M, g.K, g.N, g.T, g.dim, g.clusters)
  local _, _, kp = run_mm(mm_pingpong_ref, g.M, g.K, g.N, g.T, g.dim, g.clusters)
  local single, pp, yours = ks.cycles, kp.cycles, kl.cycles
  if yours > pp + 0.1 * (single - pp) then
    local none = yours >= single - 0.02 * (single - pp)
    return false, say(string.format('%s the values are right, but your kernel takes %s modelled cycles, the single-buffered one %s and the notes\' ping-pong %s: %s',
        on, lesson.show(yours), lesson.show(single), lesson.show(pp),
        none and 'nothing overlaps. Issue the copy of tile t + 1 with __memcpy_async before computing tile t, and call __sync_io() only when the next tile is needed (at the top of the loop): the DMA then runs while the matmul does'
        or 'some, not all, of the loads hide behind the matmuls. Is __sync_io() called only once per tile, at the top of the loop, after which the next tile\'s copy is issued before the matmul?'),
      string.format('%s结果是对的，但你的核函数用了 %s 个模拟周期，单缓冲的是 %s，笔记中的乒乓是 %s：%s',
        on_zh, lesson.show(yours), lesson.show(single), lesson.show(pp),
        none and '什么都没有重叠。先用 __memcpy_async 发出第 t + 1 块的拷贝，再计算第 t 块；只在需要下一块时（循环开头）才调用 __sync_io()：这样 DMA 和矩阵乘就同时进行'
        or '只有一部分拷入藏在了矩阵乘后面。__sync_io() 是不是每块只在循环开头调用一次，之后先发出下一块的拷贝，再做矩阵乘？'))
  end
  return true, say(string.format('right: C on four odd shapes, and %s %s cycles against %s single-buffered: %s saved (%.0f%%)',
      on, lesson.show(yours), lesson.show(single), lesson.show(single - yours), 100 * (single - yours) / single),
    string.format('对：四种奇特形状上 C 都对；%s用了 %s 个周期，单缓冲是 %s：省下 %s（%.0f%%）',
      on_zh, lesson.show(yours), lesson.show(single), lesson.show(single - yours), 100 * (single - yours) / single))
end

-- ---------------------------------------------------------------- the scenes

-- The bang scene `name` of the info the step's code left in env[field] (a kernels.bang run), or
-- the scene's demonstration when there is none yet.
local function bang_scene(name, field)
  return function(env)
    local info = env[field]
    if type(info) == 'table' and rawget(info, 'source') == 'bang-emu' and type(info.timeline) == 'table'
        and #info.timeline > 0 then
      return info, { scene = name }
    end
    return name
  end
end

local function pingpong_scene(env)
  local s, d = env.single_info, env.pingpong_info
  if type(s) == 'table' and type(d) == 'table' and rawget(s, 'source') == 'bang-emu' and rawget(d, 'source') == 'bang-emu' then
    return 'pingpong', { single = s, double = d }
  end
  return 'pingpong'
end

-- ---------------------------------------------------------------- the steps' code

local MACHINE_CODE = [==[
bang = kernels.bang
KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024
-- machine(cards, chips, clusters, cores): the notes' abstract machine as a tree. Every node has
-- storage (bytes per space), control and compute: its compute units are the nodes one level
-- down, and the leaves (the cores) are the accelerators. Sizes: the MLU270's.
function machine(cards, chips, clusters, cores)
  local function node(level, storage, control, n, child)
    local kids = {}
    for i = 1, n do kids[i] = child() end
    return {level = level, storage = storage, control = control, compute = kids}
  end
  local function core() return node('core', {NRAM = 512 * KiB, WRAM = 1024 * KiB}, 'decode, scalar unit', 0) end
  local function cluster() return node('cluster', {SRAM = 2 * MiB}, 'cluster control', cores, core) end
  local function chip() return node('chip', {}, 'task scheduler', clusters, cluster) end
  local function card() return node('card', {GDRAM = 16 * GiB}, 'PCIe, DMA', chips, chip) end
  return node('server', {DDR = 128 * GiB}, 'host CPUs', cards, card)
end
-- show(node): a line a level; children alike are shown once, with their count
local function size(b) return b >= GiB and b // GiB .. ' GiB' or b >= MiB and b // MiB .. ' MiB' or b // KiB .. ' KiB' end
function show(node, indent)
  indent = indent or ''
  local st = {}
  for space, bytes in pairs(node.storage) do st[#st + 1] = space .. ' ' .. size(bytes) end
  table.sort(st)
  print(string.format('%s%-8s storage: %-26s control: %s', indent, node.level,
    #st > 0 and table.concat(st, ', ') or '(on-chip)', node.control))
  if #node.compute > 0 then
    print(string.format('%s  compute: %d x', indent, #node.compute))
    show(node.compute[1], indent .. '    ')
  end
end
server = machine(2, 1, 4, 4)
show(server)
dev = bang.device{cards = 2, chips = 1, clusters = 4}     -- the emulated device: the same shape
print(dev)
]==]

local TOTAL_STUB = [==[
-- total(node, space): the bytes of memory space `space` ('NRAM', 'SRAM', 'GDRAM', ...) in the
-- whole subtree of node. To correct: it looks at the node alone.
function total(node, space)
  return node.storage[space] or 0
end
for _, space in ipairs({'NRAM', 'WRAM', 'SRAM', 'GDRAM', 'DDR'}) do
  print(string.format('%-6s %14d bytes in the server (your total)', space, total(server, space)))
end
]==]

local HOST_CODE = [==[
-- A kernel (BANG C's __mlu_global__ function, here a Lua function of k and its arguments): task 0
-- adds the whole arrays in its NRAM (small arrays; step 7 splits the work), the others idle.
function vadd_small(k, x, y, z, n)
  if k.taskId ~= 0 then return end
  local a, b = k:nram('float32', n, 'a'), k:nram('float32', n, 'b')
  k:__memcpy(a, x, n * 4, 'GDRAM2NRAM')
  k:__memcpy(b, y, n * 4, 'GDRAM2NRAM')
  k:__bang_add(a, a, b, n)
  k:__memcpy(z, a, n * 4, 'NRAM2GDRAM')
end

-- host_vadd(dev, kernel, hx, hy) -> hz, info: the host's side. To complete: it only allocates x.
function host_vadd(dev, kernel, hx, hy)
  local n = hx:numel()
  local x = dev:malloc(n)                        -- cnrtMalloc
  -- copy hx and hy in, launch kernel on a queue with args {x, y, z, n}, sync, copy z out, free
  return lm.zeros(n), nil
end

dev = bang.device{clusters = 4}
hx, hy = lm.arange(1, 9):float(), lm.full({8}, 10):float()
hz, info = host_vadd(dev, vadd_small, hx, hy)
print('hx + hy on the device:', hz)
if info then
  print(string.format('the kernel ran from cycle %s to %s (%s)', info.kernels[1].start, info.kernels[1].stop, info.label))
end
]==]

local BUILTINS_CODE = [==[
-- Every task writes down its built-in variables (a kernel may write host tables here, as printf
-- would); taskDim = 4 x 2 x 2 = 16 tasks, UNION2: units of 8 tasks on 2 clusters
dev = bang.device{clusters = 4}
local q = dev:queue()
seen = {}
dev:launch(function(k)
  seen[#seen + 1] = string.format('%6d %6d %6d %6d %9d %6d %10d %7d', k.taskId, k.taskIdX, k.taskIdY, k.taskIdZ,
    k.clusterId, k.coreId, k.clusterDim, k.coreDim)
  dims = string.format('taskDim = %d (taskDimX, Y, Z = %d, %d, %d)', k.taskDim, k.taskDimX, k.taskDimY, k.taskDimZ)
  local a = k:nram('float32', 64, 'a')               -- a little work, so that the units spread
  k:__bang_add(a, a, a, 64)
end, {dim = {4, 2, 2}, type = 'UNION2', queue = q, name = 'who'})
who_info = q:sync()
print(dims)
print('taskId  idX    idY    idZ    clusterId coreId clusterDim coreDim')
for _, line in ipairs(seen) do print(line) end
for _, u in ipairs(who_info.timeline) do
  print(string.format('unit %d (tasks %d..%d) ran on the clusters %s of the chip', u.unit, 8 * u.unit, 8 * u.unit + 7,
    table.concat(u.clusters, ' and ')))
end

-- slice(taskId, taskDim, n) -> first, count: task taskId's part of n elements (first 0-based).
-- To correct: it drops the remainder.
function slice(taskId, taskDim, n)
  local per = n // taskDim
  return taskId * per, per
end
for id = 0, 3 do print(string.format('slice(%d, 4, 10) = %d, %d', id, slice(id, 4, 10))) end
]==]

local SCHED_CODE = [==[
-- busy(k, cycles): keeps each core of its unit busy for `cycles` modelled cycles (one vector add
-- of (cycles - 8) * 64 elements: 8 to issue, 64 lanes a cycle)
function busy(k, cycles)
  local n = (cycles - 8) * 64
  local a = k:nram('float32', n, 'a')
  k:__bang_add(a, a, a, n)
end
-- The notes' example: 4 clusters (16 cores), three kernels launched into one queue, then SyncQueue
dev = bang.device{clusters = 4}
q = dev:queue()
dev:launch(busy, {name = 'Kernel1', dim = 8, type = 'UNION2', queue = q, args = {100}})
dev:launch(busy, {name = 'Kernel2', dim = 4, type = 'UNION1', queue = q, args = {60}})
dev:launch(busy, {name = 'Kernel3', dim = 16, type = 'UNION4', queue = q, args = {50}})
sched_info = q:sync()                             -- cnrtSyncQueue: the host waits here
for _, k in ipairs(sched_info.kernels) do
  print(string.format('%s %-6s taskDim %2d  runs %3d .. %3d', k.name, k.type, k.taskDim, k.start, k.stop))
end
for _, u in ipairs(sched_info.timeline) do
  print(string.format('  %s unit %d on cluster(s) %s', u.kernel, u.unit, table.concat(u.clusters, ', ')))
end
print(sched_info.label)

-- starts(clusters, kernels) -> the start cycle of each kernel of one queue on a fresh device;
-- kernels = {{type = 'UNION2', dim = 8, cycles = 100}, ...}. To correct: all start at 0.
function starts(clusters, kernels)
  local s = {}
  for i = 1, #kernels do s[i] = 0 end
  return s
end
local mine = starts(4, {{type = 'UNION2', dim = 8, cycles = 100}, {type = 'UNION1', dim = 4, cycles = 60},
  {type = 'UNION4', dim = 16, cycles = 50}})
print('your starts:', table.concat(mine, ', '))
]==]

local QUEUE_CODE = [==[
local function show_run(title, info)
  print(title)
  for _, k in ipairs(info.kernels) do
    print(string.format('  %s (queue %d) %-6s runs %3d .. %3d', k.name, k.queue, k.type, k.start, k.stop))
  end
end
-- 1. One queue; Kernel4 (BLOCK, 4 tasks) is launched after Kernel3: it waits behind it
dev = bang.device{clusters = 4}
local q = dev:queue()
dev:launch(busy, {name = 'Kernel1', dim = 8, type = 'UNION2', queue = q, args = {100}})
dev:launch(busy, {name = 'Kernel2', dim = 4, type = 'UNION1', queue = q, args = {60}})
dev:launch(busy, {name = 'Kernel3', dim = 16, type = 'UNION4', queue = q, args = {50}})
dev:launch(busy, {name = 'Kernel4', dim = 4, type = 'BLOCK', queue = q, args = {30}})
show_run('one queue:', q:sync())
-- 2. Kernel4 in a queue of its own: it takes the idle cluster at once
dev = bang.device{clusters = 4}
local q1, q2 = dev:queue(), dev:queue()
dev:launch(busy, {name = 'Kernel1', dim = 8, type = 'UNION2', queue = q1, args = {100}})
dev:launch(busy, {name = 'Kernel2', dim = 4, type = 'UNION1', queue = q1, args = {60}})
dev:launch(busy, {name = 'Kernel3', dim = 16, type = 'UNION4', queue = q1, args = {50}})
dev:launch(busy, {name = 'Kernel4', dim = 4, type = 'BLOCK', queue = q2, args = {30}})
q2:sync()                                          -- the host waits for q2 only...
queues_info = q1:sync()                            -- ...then for q1
show_run('two queues:', queues_info)
-- 3. The notes' three kernels with SyncQueue between Kernel1 and Kernel2: when do they start?
synced_starts = nil                                -- your answer: {s1, s2, s3}
]==]

local VADD_CODE = [==[
vadd_info = nil                                    -- the last run that worked (the picture)
-- vadd(k, x, y, z, n): z = x + y on the device, every task on its slice, through NRAM.
-- To correct: each task copies n // taskDim elements at once (the remainder is dropped, and a
-- large slice does not fit the 16 KiB of NRAM given to each core here).
function vadd(k, x, y, z, n)
  local per = n // k.taskDim
  local first = k.taskId * per
  if per == 0 then return end
  local a = k:nram('float32', per, 'a')
  local b = k:nram('float32', per, 'b')
  k:__memcpy(a, x + first, per * 4, 'GDRAM2NRAM')
  k:__memcpy(b, y + first, per * 4, 'GDRAM2NRAM')
  k:__bang_add(a, a, b, per)
  k:__memcpy(z + first, a, per * 4, 'NRAM2GDRAM')
end

local function try_vadd(n, dim, ty)
  local dev = bang.device{clusters = 4, nram = 16 * KiB}      -- 16 KiB of NRAM per core
  local hx, hy = lm.arange(0, n):float(), lm.full({n}, 1):float()
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV'); dev:memcpy(y, hy, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(vadd, {dim = dim, type = ty, queue = q, args = {x, y, z, n}, name = 'vadd'})
  local ok, info = pcall(q.sync, q)
  if not ok then print(string.format('n = %5d, %2d tasks: %s', n, dim, info)) return end
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  vadd_info = info
  local k = info.kernels[1]
  print(string.format('n = %5d, %2d tasks: %5d of %5d right; %d cycles, %d bytes in, %d out (%s)', n, dim,
    hz:eq(hx + hy):sum():item(), n, k.cycles, k.bytes.GDRAM2NRAM or 0, k.bytes.NRAM2GDRAM or 0, info.source))
end
try_vadd(1000, 16, 'UNION1')
try_vadd(1003, 16, 'UNION1')
try_vadd(40000, 12, 'UNION1')
]==]

local PINGPONG_CODE = [==[
print('the model (bang.model()):')
local m = bang.model()
print(string.format('  copies GDRAM<->NRAM: %d cycles + bytes / %d; matmul: %d + m*k*n / %d cycles; vector ops: %d + n / %d',
  m.paths.GDRAM2NRAM.latency, m.paths.GDRAM2NRAM.bw, m.issue, m.macs, m.issue, m.lanes))
T = 16
-- mm_single(k, a, b, c, M, K, N, T): C (M x N) = A (M x K) B (K x N); each task takes a slice of the
-- rows of A, keeps B in WRAM and streams its rows through NRAM T at a time: load, compute, store
function mm_single(k, a, b, c, M, K, N, T)
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local tile = k:nram('float32', T * K, 'tile')
  local out = k:nram('float32', T * N, 'out')
  for t = 0, (count + T - 1) // T - 1 do
    local rows = math.min(T, count - t * T)
    k:__memcpy(tile, a + (first + t * T) * K, rows * K * 4, 'GDRAM2NRAM')
    k:__bang_matmul(out, tile, w, rows, K, N)
    k:__memcpy(c + (first + t * T) * N, out, rows * N * 4, 'NRAM2GDRAM')
  end
end
-- mm_pingpong: to correct — for now the same as mm_single (nothing overlaps)
mm_pingpong = mm_single

local function run(fn, name, M, K, N)
  local dev = bang.device{clusters = 4}
  dev:record(true)                                  -- keep the DMA and compute spans
  local A, B = lm.randn(M, K), lm.randn(K, N)
  local a, b, c = dev:malloc(M * K), dev:malloc(K * N), dev:malloc(M * N)
  dev:memcpy(a, A, 'HOST2DEV'); dev:memcpy(b, B, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(fn, {dim = 16, type = 'UNION1', queue = q, args = {a, b, c, M, K, N, T}, name = name})
  local ok, info = pcall(q.sync, q)
  if not ok then print(info) return nil end
  local C = lm.zeros(M, N)
  dev:memcpy(C, c, 'DEV2HOST')
  return info, (C - A:matmul(B)):abs():max():item()
end
local most = lm.build_info().sanitize and 4 or 8
single_info, pingpong_info = nil, nil
print('tiles per task   single   yours   saved   (modelled cycles; 16 tasks, K = N = 256, T = 16)')
for tiles = 1, most do                              -- M = 16 tasks x tiles x T rows
  local M = 16 * T * tiles
  local s = run(mm_single, 'mm_single', M, 256, 256)
  local p, err = run(mm_pingpong, 'mm_pingpong', M, 256, 256)
  if not (s and p) then break end
  print(string.format('%14d %8d %7d %7d   (max error %.1e)', tiles, s.kernels[1].cycles, p.kernels[1].cycles,
    s.kernels[1].cycles - p.kernels[1].cycles, err))
  single_info, pingpong_info = s, p                 -- the picture: the last run, core 0
end
]==]

return {
  title = say('The intelligent programming language: BANG on an emulated MLU', '智能编程语言：在模拟的 MLU 上写 BANG'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 8: the intelligent programming language',
    '智能计算系统 第 8 章：智能编程语言'),
  summary = say([[The abstract machine, recursive from the server down to the cores, and its memory
spaces; the host and the device; the built-in variables and a task's slice; BLOCK and UNION
scheduling in queues and SyncQueue, predicted and checked on the emulator; a vector add through
NRAM; a tiled matrix multiply with ping-pong buffers that hides the copies behind the compute.]],
    [[抽象硬件架构：从服务器一直递归到处理器核，以及各层的存储空间；主机端与设备端；内建变量和
任务的切分；BLOCK 与 UNION 调度、队列和 SyncQueue——先预测，再在模拟器上检验；经过 NRAM 的
向量加法；用乒乓缓冲把访存藏到计算后面的分块矩阵乘法。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('One abstract machine, the same at every level', '抽象硬件架构：每一层都一样'),
      text = say([[
Chapter 7 built the deep learning processor; chapter 8 programs it. A programming language for
such a machine must let the programmer say where data lives and which unit computes, without
tying the program to one chip. The notes start from an abstract hardware architecture:

- every level of an intelligent computing system has a storage unit, a control unit and several compute units;
- each compute unit is itself split into a control unit, compute units and a storage unit one level down, so the whole system is built recursively;
- at the bottom, each leaf is a concrete accelerator that does the basic computations.

Because every level looks the same, a system grows by making some level larger (more cards, more
clusters, more cores), and a program written for the abstract machine runs on any of them.

The code builds that tree for a server of 2 cards (the MLU270's sizes) and prints one branch of
it (children alike are shown once, with their count). It also makes the emulated device the rest
of the lesson runs on: kernels.bang, BANG C's model in Lua (lua/lumen/bang.lua), with cards,
chips, clusters of 4 cores, and the memory spaces of each level. The picture is its mlu scene:
the device as nested boxes (cards, chips, clusters, cores), each cluster with its SRAM and each
core with its NRAM and WRAM, here running the notes' example of step 5 on 4 clusters.]],
        [[
第 7 章造出了深度学习处理器，第 8 章为它编程。这样一台机器的编程语言，要让程序员说清楚数据
放在哪里、由哪个单元来算，同时又不把程序绑死在某一款芯片上。笔记从一个抽象硬件架构讲起：

- 智能计算系统的每一层都包含存储单元、控制单元和若干个计算单元；
- 每个计算单元又进一步分解为子控制单元、子计算单元和子存储单元三部分，整个系统以这样的方式递归构成；
- 在最底层，每个叶节点都是具体的加速器，用于完成最基本的计算任务。

因为每一层长得都一样，只要把某一层做大（更多板卡、更多处理器簇、更多核）就能提升整个系统的
算力；而面向抽象机器写的程序，在哪一种规模上都能运行。

代码为一台有 2 块板卡的服务器（按 MLU270 的规格）建出这棵树，并打印其中一支（相同的子节点
只显示一次，并注明个数）。代码还创建了本课其余部分使用的模拟设备：kernels.bang，用 Lua 实现的
BANG C 模型（lua/lumen/bang.lua），有板卡、芯片、每簇 4 个核的处理器簇，以及每一层的存储空间。
画面是它的 mlu 场景：把设备画成嵌套的方框（板卡、芯片、处理器簇、核），每个簇标出它的 SRAM，
每个核标出它的 NRAM 和 WRAM；这里运行的是第 5 步中笔记的例子，用 4 个处理器簇。]]),
      code = MACHINE_CODE,
      scene = 'mlu',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Five levels and their memory spaces', '五个层次与它们的存储空间'),
      text = say([[
A multi-card DLP server is abstracted into five levels: the server, the card, the chip, the
processor cluster and the processor core. Each level's storage is a memory space BANG C names,
and who can see it follows from where it sits:

  level    storage                          seen by
  server   host memory (DDR)                the host's code only
  card     GDRAM: the card's DDR (global)   every core of the card, and
                                            the host through cnrtMemcpy
  chip     on-chip (no name in BANG C)      the chip's clusters
  cluster  SRAM: __mlu_shared__, 2 MiB      the 4 cores of the cluster
  core     NRAM (neurons), 512 KiB          the core alone: its vector
           WRAM (weights), 1 MiB            and matrix units compute there

The nearer a space is to the compute, the smaller and faster it is. The vector and matrix units
read NRAM and WRAM, not GDRAM, so every kernel moves its data in (__memcpy GDRAM2NRAM, GDRAM2WRAM,
through SRAM when a cluster shares it) and its results out (NRAM2GDRAM): the copies are part of the
program, and steps 7 and 8 are about them.

The code prints, with your `total`, how many bytes of each space the server holds. As given it
looks at the server node alone. Correct it.]],
        [[
多卡的 DLP 服务器抽象为五个层次：服务器级（Server）、板卡级（Card）、芯片级（Chip）、处理器簇级
（Cluster）和处理器核级（Core）。每一层的存储单元就是 BANG C 里的一种存储空间，谁能看到它，
由它所在的位置决定：

  层次      存储                             谁能访问
  服务器    主机内存（DDR）                  只有主机端代码
  板卡      GDRAM：板卡上的 DDR（全局）      板卡上所有的核，以及
                                             通过 cnrtMemcpy 的主机
  芯片      片上存储（BANG C 中没有名字）    芯片上的处理器簇
  处理器簇  SRAM：__mlu_shared__，2 MiB      该簇的 4 个核
  处理器核  NRAM（神经元），512 KiB          只有这个核：它的向量和
            WRAM（权值），1 MiB              矩阵单元就在这里计算

离计算越近的存储越小、越快。向量和矩阵运算单元读的是 NRAM 和 WRAM，而不是 GDRAM，所以每个
核函数都要把数据搬进来（__memcpy GDRAM2NRAM、GDRAM2WRAM；一个簇共享的数据经过 SRAM），再把
结果搬出去（NRAM2GDRAM）：拷贝是程序的一部分，第 7、8 步讲的就是它。

代码用你的 `total` 打印服务器上每种存储空间共有多少字节。给出的版本只看服务器这一个节点。
请改正它。]]),
      code = TOTAL_STUB,
      exercise = {
        prompt = say([[
Correct `total(node, space)`: the bytes of memory space `space` in the whole subtree of `node` —
its own node.storage[space] (nil counts 0) and, recursively, that of every node in node.compute.
The check calls it on random machines whose nodes have different numbers of children, for
NRAM, WRAM, SRAM, GDRAM, DDR and a space none of them has.]],
          [[
改正 `total(node, space)`：`node` 整棵子树中存储空间 `space` 的字节数——它自己的
node.storage[space]（nil 算 0），再递归地加上 node.compute 中每个节点的。检查会在随机的机器上
调用它（各节点的子节点个数不同），空间有 NRAM、WRAM、SRAM、GDRAM、DDR，以及一种谁都没有的。]]),
        hints = {
          say('The abstract machine is recursive, so is total: s = node.storage[space] or 0, then for _, child in ipairs(node.compute) do s = s + total(child, space) end.',
            '抽象机器是递归的，total 也是：s = node.storage[space] or 0，然后 for _, child in ipairs(node.compute) do s = s + total(child, space) end。'),
          say('A core has no compute units (node.compute is empty): the recursion stops there by itself.',
            '处理器核没有计算单元（node.compute 是空的）：递归自然在那里停下。'),
        },
        check = check_total,
        solution = [[
function total(node, space)
  local s = node.storage[space] or 0
  for _, child in ipairs(node.compute) do s = s + total(child, space) end
  return s
end
]],
        wrong = {
          [[
function total(node, space)   -- the first child times the count
  local s = node.storage[space] or 0
  if #node.compute > 0 then s = s + #node.compute * total(node.compute[1], space) end
  return s
end
]],
          [[
function total(node, space)   -- the leaves only
  if #node.compute == 0 then return node.storage[space] or 0 end
  local s = 0
  for _, child in ipairs(node.compute) do s = s + total(child, space) end
  return s
end
]],
          [[
function total(node, space)   -- the children, not the node
  local s = 0
  for _, child in ipairs(node.compute) do s = s + (child.storage[space] or 0) + total(child, space) end
  return s
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Host and device', '主机端与设备端'),
      text = say([[
A heterogeneous system has a general-purpose processor, the host, which controls and schedules,
and a domain processor, the device, which does the large parallel computations; they finish a
task together. Programs are written apart: host code (C/C++ with CNRT, the runtime) and device
code (BANG C kernels, compiled by CNCC); the compiler and the runtime support task partitioning,
data distribution, communication and synchronization. The serial, controlling part runs on the
host; the parallel computing part on the device.

The host's side of every kernel is the same flow (CNRT's names, then the emulator's):

  cnrtMalloc(&x, bytes)               x = dev:malloc(n)     (GDRAM)
  cnrtMemcpy(x, hx, bytes, HOST2DEV)  dev:memcpy(x, hx, 'HOST2DEV')
  cnrtCreateQueue(&q)                 q = dev:queue()
  cnrtInvokeKernel(f, dim, args,      dev:launch(f, {dim = 16, type = 'UNION1',
                   type, q)             queue = q, args = {x, y, z, n}})
  cnrtSyncQueue(q)                    info = q:sync()       (the host waits)
  cnrtMemcpy(hz, z, bytes, DEV2HOST)  dev:memcpy(hz, z, 'DEV2HOST')
  cnrtFree(x)                         dev:free(x)

A launch only puts the kernel in the queue and returns at once (the host goes on); q:sync() is
where the host waits for it, and here it returns the info of what ran: each kernel's start and
stop in modelled cycles. The kernel gets GDRAM pointers (x + i is the pointer i elements on, as
in C), never host tensors.

The code defines a kernel (task 0 adds small arrays in its NRAM) and a host function that does
not do its job yet.]],
        [[
异构计算系统由通用处理器和领域处理器组成：通用处理器是控制设备，简称主机端，负责控制和调度；
领域处理器是从设备，简称设备端，负责大规模的并行计算或领域专用计算；二者协同完成完整的计算
任务。程序采用分离式编程：主机端代码（C/C++ 加运行时库 CNRT）和设备端代码（BANG C 核函数，由
CNCC 编译）；编译器和运行时负责任务划分、数据分布、数据通信和并行同步。控制部分和串行任务在
主机端执行，计算部分和并行任务在设备端执行。

每个核函数在主机端的流程都一样（左边是 CNRT 的名字，右边是模拟器的）：

  cnrtMalloc(&x, bytes)               x = dev:malloc(n)     （GDRAM）
  cnrtMemcpy(x, hx, bytes, HOST2DEV)  dev:memcpy(x, hx, 'HOST2DEV')
  cnrtCreateQueue(&q)                 q = dev:queue()
  cnrtInvokeKernel(f, dim, args,      dev:launch(f, {dim = 16, type = 'UNION1',
                   type, q)             queue = q, args = {x, y, z, n}})
  cnrtSyncQueue(q)                    info = q:sync()       （主机在此等待）
  cnrtMemcpy(hz, z, bytes, DEV2HOST)  dev:memcpy(hz, z, 'DEV2HOST')
  cnrtFree(x)                         dev:free(x)

启动只是把核函数放进队列就立即返回（主机继续往下走）；主机在 q:sync() 处等待它完成，这里
q:sync() 还返回运行情况的 info：每个核函数开始和结束的模拟周期。核函数拿到的是 GDRAM 指针
（x + i 是往后 i 个元素的指针，和 C 一样），而不是主机上的张量。

代码定义了一个核函数（任务 0 在自己的 NRAM 里把小数组相加），以及一个还没完成任务的主机端函数。]]),
      code = HOST_CODE,
      exercise = {
        prompt = say([[
Complete `host_vadd(dev, kernel, hx, hy)`: allocate x, y and z (n = hx:numel() elements each),
copy hx and hy in, launch `kernel` on a new queue (dim = 16, type = 'UNION1', args = {x, y, z, n}),
sync the queue, copy z out into a new host tensor, free the three arrays, and return that tensor
and the info q:sync() returned. The check calls it with a kernel of its own on devices of 1 to 4
clusters and 1 to 1000 elements, and looks at the sums, the info and the GDRAM given back.]],
          [[
补全 `host_vadd(dev, kernel, hx, hy)`：分配 x、y、z（每个 n = hx:numel() 个元素），拷入 hx 和
hy，在一个新队列上启动 `kernel`（dim = 16，type = 'UNION1'，args = {x, y, z, n}），同步队列，
把 z 拷回到一个新的主机张量，释放这三个数组，返回这个张量和 q:sync() 返回的 info。检查会用它
自己的核函数，在 1 到 4 个处理器簇、1 到 1000 个元素上调用它，检查和、info 以及归还的 GDRAM。]]),
        hints = {
          say('Seven lines, one a call of the table above: malloc (three), memcpy HOST2DEV (two), queue, launch, sync, memcpy DEV2HOST, free (three).',
            '按上表每行一个调用：malloc（三次）、memcpy HOST2DEV（两次）、queue、launch、sync、memcpy DEV2HOST、free（三次）。'),
          say("The copy out needs a host tensor to copy into: local hz = lm.zeros(n); dev:memcpy(hz, z, 'DEV2HOST'); and return hz, info.",
            "拷回需要一个主机张量来接收：local hz = lm.zeros(n); dev:memcpy(hz, z, 'DEV2HOST')；最后 return hz, info。"),
        },
        check = check_host,
        solution = [[
function host_vadd(dev, kernel, hx, hy)
  local n = hx:numel()
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV')
  dev:memcpy(y, hy, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(kernel, {dim = 16, type = 'UNION1', queue = q, args = {x, y, z, n}})
  local info = q:sync()
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  dev:free(x); dev:free(y); dev:free(z)
  return hz, info
end
]],
        wrong = {
          [[
function host_vadd(dev, kernel, hx, hy)   -- y never copied in
  local n = hx:numel()
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(kernel, {dim = 16, type = 'UNION1', queue = q, args = {x, y, z, n}})
  local info = q:sync()
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  dev:free(x); dev:free(y); dev:free(z)
  return hz, info
end
]],
          [[
function host_vadd(dev, kernel, hx, hy)   -- the host tensors given to the kernel
  local n = hx:numel()
  local hz = lm.zeros(n)
  local q = dev:queue()
  dev:launch(kernel, {dim = 16, type = 'UNION1', queue = q, args = {hx, hy, hz, n}})
  return hz, q:sync()
end
]],
          [[
function host_vadd(dev, kernel, hx, hy)   -- no sync: the info is not there
  local n = hx:numel()
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV')
  dev:memcpy(y, hy, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(kernel, {dim = 16, type = 'UNION1', queue = q, args = {x, y, z, n}})
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  dev:free(x); dev:free(y); dev:free(z)
  return hz
end
]],
          [[
function host_vadd(dev, kernel, hx, hy)   -- nothing freed
  local n = hx:numel()
  local x, y, z = dev:malloc(n), dev:malloc(n), dev:malloc(n)
  dev:memcpy(x, hx, 'HOST2DEV')
  dev:memcpy(y, hy, 'HOST2DEV')
  local q = dev:queue()
  dev:launch(kernel, {dim = 16, type = 'UNION1', queue = q, args = {x, y, z, n}})
  local info = q:sync()
  local hz = lm.zeros(n)
  dev:memcpy(hz, z, 'DEV2HOST')
  return hz, info
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Built-in variables: who am I, and what is my part?', '内建变量：我是谁，我做哪一份？'),
      text = say([[
A kernel is launched as taskDim tasks, and every task runs the same function; the built-in
variables tell them apart (the notes' list):

- the hardware: clusterDim (how many clusters the task's unit spans), clusterId (which of them), coreDim (cores per cluster, 4), coreId (which core);
- the tasks: taskDimX, taskDimY, taskDimZ, the launch's three dimensions, chosen by the user, and taskIdX, taskIdY, taskIdZ; taskDim = taskDimX * taskDimY * taskDimZ and taskId = taskIdX + taskIdY * taskDimX + taskIdZ * taskDimX * taskDimY.

The scheduling type says what hardware one unit of the kernel needs: BLOCK, a single-core task,
scheduled one core at a time (clusterDim = coreDim = 1 in the emulator); UNIONx, a multi-core
task, scheduled x clusters (4x cores) at a time (x = 1, 2, 4, 8 here; the notes name 1, 2 and 4).
The code launches 16 tasks as {4, 2, 2}, UNION2, and prints what each task sees: within a unit
clusterId is 0 or 1 and coreId 0 to 3, whichever physical clusters the unit got.

A task's first job is to find its part of the data. With n elements and taskDim tasks, each gets
n // taskDim, and the remainder, n % taskDim, must go somewhere: one more element each to the
first n % taskDim tasks keeps the split balanced (a kernel lasts as long as its slowest task).
Task t then starts at t * (n // taskDim) + min(t, n % taskDim). The given `slice` drops the
remainder. The picture (the mlu scene) is the run above: each core with the task it ran, its
taskId and the kernel's type, one moment after another.]],
        [[
核函数以 taskDim 个任务启动，每个任务运行同一个函数；靠内建变量把它们区分开（笔记中的列表）：

- 硬件：clusterDim（任务所在的调度单位跨几个处理器簇），clusterId（是其中第几个），coreDim（每簇的核数，4），coreId（第几个核）；
- 任务：taskDimX、taskDimY、taskDimZ 是启动时的三个维度，由用户根据需求指定；taskIdX、taskIdY、taskIdZ 是任务在各维的序号。taskDim = taskDimX * taskDimY * taskDimZ，taskId = taskIdX + taskIdY * taskDimX + taskIdZ * taskDimX * taskDimY。

任务调度类型表示核函数的一个调度单位需要什么硬件：BLOCK 是单核任务，按单核调度（模拟器中
clusterDim = coreDim = 1）；UNIONx 是多核并行任务，每次调度 x 个处理器簇（4x 个核）（这里
x = 1、2、4、8；笔记列出了 1、2、4）。代码以 {4, 2, 2}、UNION2 启动 16 个任务，打印每个任务
看到的变量：在一个调度单位里，不管分到的是哪两个物理处理器簇，clusterId 都是 0 或 1，coreId
是 0 到 3。

任务要做的第一件事是找到属于自己的那部分数据。n 个元素、taskDim 个任务时，每个任务分到
n // taskDim 个，余下的 n % taskDim 个必须有人做：让前 n % taskDim 个任务各多做一个，划分就是
均衡的（核函数的时间由最慢的任务决定）。于是任务 t 从 t * (n // taskDim) + min(t, n % taskDim)
开始。给出的 `slice` 把余数丢掉了。画面（mlu 场景）是上面那次运行：每个核上运行的任务、它的
taskId 和核函数的类型，一个时刻接一个时刻。]]),
      code = BUILTINS_CODE,
      scene = bang_scene('mlu', 'who_info'),
      exercise = {
        prompt = say([[
Correct `slice(taskId, taskDim, n)`: return first (0-based) and count, task taskId's part of n
elements, so that the slices of tasks 0 .. taskDim - 1 cover every element exactly once and each
has n // taskDim or n // taskDim + 1 elements. The check calls it for every task on random taskDim
and n — n smaller than taskDim, n = 0 and n divisible among them.]],
          [[
改正 `slice(taskId, taskDim, n)`：返回 first（从 0 开始）和 count，即任务 taskId 在 n 个元素中
分到的部分，使任务 0 .. taskDim - 1 的切片恰好覆盖每个元素一次，且每个切片有 n // taskDim 或
n // taskDim + 1 个元素。检查会在随机的 taskDim 和 n 上对每个任务调用它——包括 n 小于 taskDim、
n = 0 和能整除的情况。]]),
        hints = {
          say('q, r = n // taskDim, n % taskDim: tasks 0 .. r - 1 take q + 1 elements, the others q.',
            'q, r = n // taskDim, n % taskDim：任务 0 .. r - 1 各取 q + 1 个元素，其余的取 q 个。'),
          say('Before task t come t tasks of q elements and min(t, r) extra ones: first = t * q + math.min(t, r); count = q + (t < r and 1 or 0).',
            '任务 t 之前有 t 个任务各 q 个元素，再加 min(t, r) 个多出来的：first = t * q + math.min(t, r)；count = q + (t < r and 1 or 0)。'),
        },
        check = check_slice,
        solution = [[
function slice(taskId, taskDim, n)
  local q, r = n // taskDim, n % taskDim
  local first = taskId * q + math.min(taskId, r)
  local count = q + (taskId < r and 1 or 0)
  return first, count
end
]],
        wrong = {
          [[
function slice(taskId, taskDim, n)   -- the last task takes the remainder
  local q, r = n // taskDim, n % taskDim
  if taskId == taskDim - 1 then return taskId * q, q + r end
  return taskId * q, q
end
]],
          [[
function slice(taskId, taskDim, n)   -- ceil(n / taskDim) each: the slices overlap the end
  local per = (n + taskDim - 1) // taskDim
  return taskId * per, per
end
]],
          [[
function slice(taskId, taskDim, n)   -- the extra element, but first not moved on
  local q, r = n // taskDim, n % taskDim
  return taskId * q, q + (taskId < r and 1 or 0)
end
]],
          [[
function slice(taskId, taskDim, n)   -- one too many get an extra element
  local q, r = n // taskDim, n % taskDim
  local first = taskId * q + math.min(taskId, r)
  return first, q + (taskId <= r and 1 or 0)
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('BLOCK and UNION: how the runtime schedules a kernel', 'BLOCK 与 UNION：运行时如何调度核函数'),
      text = say([[
The runtime maps tasks to hardware and orders them, in units of the scheduling type, spread over
time or space:

- BLOCK: one core; when one core is idle, one task is scheduled on it;
- UNION1: one cluster; when 1 cluster is idle, a unit of 4 tasks is scheduled;
- UNION2: two clusters; when 2 clusters are idle, a unit of 8 tasks, and so on.

A kernel is scheduled only when enough hardware is idle for one of its units. Queues hold the
kernels to run: the host keeps putting kernels into them, and whenever hardware is idle a kernel
is taken out and run. The notes' example, on a device of 4 clusters (16 cores):

- the host launches 3 kernels into one queue asynchronously and calls SyncQueue after the third, so it waits until all of them are done;
- Kernel1 (UNION2) enters the queue at Time1; every core is idle, so it runs at once, on 2 clusters;
- the host did not sync, so it launched Kernel2 (UNION1) right after; the scheduler finds it in the queue and starts it at almost Time1 too, on 1 cluster;
- Kernel3 (UNION4) needs all 4 clusters: it waits until Kernel1 and Kernel2 are both done.

The emulator's rules, exactly: a kernel's units are placed in taskId order, a BLOCK task on the
lowest-numbered idle core, a UNIONx unit on the x lowest-numbered clusters whose 4 cores are all
idle; a kernel starts placing its units only once the kernel before it in the same queue has
placed all of its own (so they may run side by side, as Kernel1 and Kernel2 do); a unit holds
all its cores until its slowest core ends. Here every unit of a
kernel takes the same time (a `busy` kernel of a given number of cycles). The code runs the notes'
example with Kernel1, 2 and 3 taking 100, 60 and 50 cycles: Kernel3 starts at 100. The picture
is its queues scene: a row per cluster against the cycles, each unit a bar across the clusters it
took; below, the queue, with each kernel's wait and run.]],
        [[
运行时完成任务的映射和调度：按调度单位，把核函数的任务在时间或空间维度上展开：

- BLOCK：单核调度，当有一个核空闲时，调度一个任务执行；
- UNION1：调度时需要 1 个 cluster，当有 1 个 cluster 空闲时，调度一个单位（4 个任务）执行；
- UNION2：调度时需要 2 个 cluster，当有 2 个 cluster 空闲时，调度一个单位（8 个任务），依此类推。

只有当空闲的硬件资源够一个调度单位时，核函数才会被调度。队列（Queue）管理需要执行的任务：
主机不断把核函数放进队列，一旦硬件有空闲，就从队列中取出一个执行。笔记中的例子，设备有 4 个
cluster、16 个 core：

- 主机端异步发射 3 个 Kernel 到 Queue 中，在第三次发射之后调用 SyncQueue，于是等待队列中的任务全部完成；
- Kernel1（UNION2）在 Time1 进入队列，设备端发现全部核心空闲，立即在 2 个 cluster 上执行；
- 主机没有同步，发射 Kernel1 后立即发射了 Kernel2（UNION1），调度器发现队列中有了 Kernel2，也几乎在 Time1 开始在 1 个 cluster 上执行；
- Kernel3（UNION4）需要全部 4 个 cluster：要等 Kernel1 和 Kernel2 都完成。

模拟器的规则，准确地说：一个核函数的调度单位按 taskId 顺序放下，BLOCK 任务放在编号最小的
空闲核上，UNIONx 单位放在编号最小的、4 个核都空闲的 x 个 cluster 上；同一队列里，前一个核函数
的调度单位全部放下之后，后一个才开始放（所以它们可以并行，就像 Kernel1 和 Kernel2）；一个单位
占着它所有的核，直到其中最慢的核结束。这里一个核函数的每个单位用时相同（一个
运行给定周期数的 `busy` 核函数）。代码运行笔记的例子，Kernel1、2、3 分别用 100、60、50 个周期：
Kernel3 在第 100 个周期开始。画面是这次运行的 queues 场景：每个处理器簇一行，横轴是周期，每个
调度单位是横跨它所占处理器簇的一条；下方是队列，画出每个核函数的等待和运行。]]),
      code = SCHED_CODE,
      scene = bang_scene('queues', 'sched_info'),
      exercise = {
        prompt = say([[
Correct `starts(clusters, kernels)`: the cycle at which each kernel of one queue starts (its first
unit) on a fresh device of `clusters` clusters, all launched at cycle 0; kernels[i] = {type =
'BLOCK' | 'UNION1' | 'UNION2' | 'UNION4' | 'UNION8', dim = taskDim, cycles = how long each of its
units runs}. Follow the rules above. The check runs the notes' example and 15 other queues on
the emulator and compares.]],
          [[
改正 `starts(clusters, kernels)`：在一台有 `clusters` 个处理器簇的新设备上，同一队列里的各个
核函数（都在第 0 个周期发射）从哪个周期开始（它的第一个调度单位）；kernels[i] = {type =
'BLOCK' | 'UNION1' | 'UNION2' | 'UNION4' | 'UNION8', dim = taskDim, cycles = 它每个单位运行的周期数}。
按上面的规则来。检查会在模拟器上运行笔记的例子和另外 15 个队列，并与你的结果比较。]]),
        hints = {
          say('Simulate: free[c] = the cycle core c is free (0 .. 4 * clusters - 1), a time t that only grows. For each kernel in order, for each of its dim // per units (per = 1 for BLOCK, 4x for UNIONx): find the cores at t (free[c] <= t); if there are not enough, move t to the next free[c] > t and try again.',
            '模拟：free[c] 是核 c 空闲的周期（0 .. 4 * clusters - 1），时间 t 只增不减。按顺序处理每个核函数的 dim // per 个单位（BLOCK 的 per = 1，UNIONx 的 per = 4x）：在 t 时刻找空闲的核（free[c] <= t）；不够就把 t 推到下一个 free[c] > t 的时刻再试。'),
          say('A UNIONx unit takes x clusters whose 4 cores are all free; placing a unit sets free[c] = t + cycles for its cores; the kernel starts at the t of its first unit, and the next kernel begins from the t of this one\'s last unit.',
            'UNIONx 单位要占 x 个 4 个核都空闲的 cluster；放下一个单位就把它的核设为 free[c] = t + cycles；核函数从第一个单位的 t 开始，下一个核函数从这个核函数最后一个单位的 t 开始找。'),
        },
        check = check_starts,
        solution = [[
function starts(clusters, kernels)
  local free = {}                          -- free[c]: the cycle core c is free (nil: from the start)
  local t, out = 0, {}
  for i, kl in ipairs(kernels) do
    local x = kl.type == 'BLOCK' and 0 or tonumber(kl.type:sub(6))
    local per = x == 0 and 1 or 4 * x
    for _ = 1, kl.dim // per do
      while true do
        local cores = {}
        if x == 0 then
          for c = 0, 4 * clusters - 1 do
            if #cores == 0 and (free[c] or 0) <= t then cores[1] = c end
          end
        else
          for cl = 0, clusters - 1 do
            local idle = true
            for c = 4 * cl, 4 * cl + 3 do idle = idle and (free[c] or 0) <= t end
            if idle and #cores < per then
              for c = 4 * cl, 4 * cl + 3 do cores[#cores + 1] = c end
            end
          end
        end
        if #cores == per then
          for _, c in ipairs(cores) do free[c] = t + kl.cycles end
          out[i] = out[i] or t
          break
        end
        local nxt = math.huge                -- the next cycle a core frees
        for _, f in pairs(free) do
          if f > t then nxt = math.min(nxt, f) end
        end
        t = nxt
      end
    end
  end
  return out
end
]],
        wrong = {
          [[
function starts(clusters, kernels)   -- one kernel at a time: each waits for the one before to end
  local t, out = 0, {}
  for i, kl in ipairs(kernels) do
    local x = kl.type == 'BLOCK' and 0 or tonumber(kl.type:sub(6))
    local per = x == 0 and 1 or 4 * x
    local slots = x == 0 and 4 * clusters or clusters // x     -- units that run at once
    out[i] = t
    t = t + math.ceil((kl.dim // per) / slots) * kl.cycles
  end
  return out
end
]],
          [[
function starts(clusters, kernels)   -- a UNION unit on any free cores, as BLOCK tasks
  local free = {}
  for c = 0, 4 * clusters - 1 do free[c] = 0 end
  local t, out = 0, {}
  for i, kl in ipairs(kernels) do
    local x = kl.type == 'BLOCK' and 0 or tonumber(kl.type:sub(6))
    local per = x == 0 and 1 or 4 * x
    for _ = 1, kl.dim // per do
      while true do
        local cores = {}
        for c = 0, 4 * clusters - 1 do
          if #cores < per and free[c] <= t then cores[#cores + 1] = c end
        end
        if #cores == per then
          for _, c in ipairs(cores) do free[c] = t + kl.cycles end
          out[i] = out[i] or t
          break
        end
        local nxt = math.huge
        for c = 0, 4 * clusters - 1 do if free[c] > t then nxt = math.min(nxt, free[c]) end end
        t = nxt
      end
    end
  end
  return out
end
]],
          [[
function starts(clusters, kernels)   -- every kernel from cycle 0, whatever is before it in the queue
  local free = {}
  for c = 0, 4 * clusters - 1 do free[c] = 0 end
  local out = {}
  for i, kl in ipairs(kernels) do
    local x = kl.type == 'BLOCK' and 0 or tonumber(kl.type:sub(6))
    local per = x == 0 and 1 or 4 * x
    local t = 0
    for _ = 1, kl.dim // per do
      while true do
        local cores = {}
        if x == 0 then
          for c = 0, 4 * clusters - 1 do if #cores == 0 and free[c] <= t then cores[1] = c end end
        else
          for cl = 0, clusters - 1 do
            local idle = true
            for c = 4 * cl, 4 * cl + 3 do idle = idle and free[c] <= t end
            if idle and #cores < per then for c = 4 * cl, 4 * cl + 3 do cores[#cores + 1] = c end end
          end
        end
        if #cores == per then
          for _, c in ipairs(cores) do free[c] = t + kl.cycles end
          out[i] = out[i] or t
          break
        end
        local nxt = math.huge
        for c = 0, 4 * clusters - 1 do if free[c] > t then nxt = math.min(nxt, free[c]) end end
        t = nxt
      end
    end
  end
  return out
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Queues and SyncQueue', '队列与 SyncQueue'),
      text = say([[
Queues can work alone or together. Kernels of one queue are issued in order; kernels of
different queues do not wait for each other, only for idle hardware. The code runs the notes'
three kernels and a fourth, Kernel4 (BLOCK, 4 tasks of 30 cycles): launched after Kernel3 in the
same queue, it waits behind Kernel3, which waits for 4 idle clusters: cluster 3 stays idle until
cycle 100 (cluster 2 from cycle 60), and Kernel4 starts at 150. In a second queue it takes cluster
3 at once.

SyncQueue (q:sync(), cnrtSyncQueue) makes the host wait until every kernel of that queue is done.
The user may call it between launches or after them, as synchronization and communication need:
kernels of one queue may run side by side here (Kernel1 and Kernel2 do), so a kernel that reads
what another kernel writes must be launched after a sync on that kernel's queue; a sync costs the
time the host waits, and the hardware left idle meanwhile.

The picture is the run with two queues. Question (answered by the emulator, not run yet): the
notes' three kernels (100, 60 and 50 cycles) launched into one queue, with q:sync() right after
Kernel1's launch — when does each start?]],
        [[
队列既可以单独工作，也可以协同工作。同一队列里的核函数按顺序发射；不同队列的核函数互不等待，
只等空闲的硬件。代码运行笔记中的三个核函数，再加上第四个 Kernel4（BLOCK，4 个任务，每个 30 个
周期）：它在同一队列里排在 Kernel3 之后，就要等 Kernel3，而 Kernel3 在等 4 个空闲的 cluster：cluster 3
一直空到第 100 个周期（cluster 2 从第 60 个周期起也空着），Kernel4 在第 150 个周期才开始。放在
第二个队列里，它立刻就能占用 cluster 3。

SyncQueue（q:sync()，即 cnrtSyncQueue）让主机等待该队列的所有核函数完成。用户可以根据同步和
通信的需要，在发射之间或之后的任意位置调用它：在这里同一队列的核函数可能并行执行（Kernel1 和
Kernel2 就是），所以一个核函数如果要读另一个核函数写的结果，就必须在对那个核函数所在的队列
同步之后再发射；同步的代价是主机等待的时间，以及这段时间里闲置的硬件。

画面是用两个队列的那次运行。问题（由模拟器回答，代码里还没有运行）：笔记中的三个核函数（100、60、50 个周期）发射到同一
队列，在 Kernel1 发射之后紧接着调用 q:sync()——它们各自在什么时候开始？]]),
      code = QUEUE_CODE,
      scene = bang_scene('queues', 'queues_info'),
      exercise = {
        prompt = say([[
Set `synced_starts = {s1, s2, s3}` (or type :check {s1, s2, s3}): the cycles at which Kernel1,
Kernel2 and Kernel3 start when the host calls q:sync() right after launching Kernel1 (Kernel1:
UNION2, 100 cycles; Kernel2: UNION1, 60; Kernel3: UNION4, 50; 4 clusters; no other sync until
the end). The check runs it on the emulator.]],
          [[
设置 `synced_starts = {s1, s2, s3}`（或输入 :check {s1, s2, s3}）：主机在发射 Kernel1 之后紧接着
调用 q:sync() 时，Kernel1、Kernel2、Kernel3 开始的周期（Kernel1：UNION2，100 个周期；Kernel2：
UNION1，60；Kernel3：UNION4，50；4 个 cluster；此后直到最后都没有别的同步）。检查会在模拟器上
运行它。]]),
        hints = {
          say('The host is blocked in q:sync() until Kernel1 ends; only then does it launch Kernel2, and right after it Kernel3.',
            '主机在 q:sync() 里一直阻塞到 Kernel1 结束；之后才发射 Kernel2，紧接着发射 Kernel3。'),
          say('Kernel3 (UNION4) needs all four clusters; Kernel2 holds one of them for 60 cycles.',
            'Kernel3（UNION4）需要全部四个 cluster；Kernel2 要占用其中一个 60 个周期。'),
        },
        check = check_synced,
        solution = [[synced_starts = {0, 100, 160}]],
        wrong = { [[synced_starts = {0, 0, 100}]], [[synced_starts = {0, 100, 100}]], [[synced_starts = {0, 100, 210}]] },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('A vector add through NRAM', '经过 NRAM 的向量加法'),
      text = say([[
Now a kernel that uses every task. Each task takes its slice of the n elements (step 4), and
since the vector unit computes on NRAM only, moves it through NRAM in chunks that fit:

  for each chunk of its slice, m elements (the last chunk shorter):
    __memcpy(a, x + first + off, m * 4, GDRAM2NRAM)   -- bytes
    __memcpy(b, y + first + off, m * 4, GDRAM2NRAM)
    __bang_add(a, a, b, m)                             -- elements
    __memcpy(z + first + off, a, m * 4, NRAM2GDRAM)

NRAM is allocated in the kernel: k:nram('float32', 1024, 'a') is BANG C's
__nram__ float a[1024]. The cores here get 16 KiB of NRAM each (the MLU270 has 512 KiB, and a
slice of millions of elements needs chunks there just the same), so two arrays of 1024 floats
fit, and a slice of a few thousand elements takes several chunks. The emulator stops a kernel
that asks for more NRAM than the core has, or that copies past an array's end, and names the
task and the line.

The given `vadd` copies each task's n // taskDim elements at once. The code runs it on three sizes
and prints how many sums are right, the cycles and the bytes moved. The picture (the mlu scene) is
the last run that worked: each core's NRAM in use against its 16 KiB.]],
        [[
现在写一个用上所有任务的核函数。每个任务取 n 个元素中属于自己的切片（第 4 步）；由于向量单元
只在 NRAM 上计算，要把切片分成放得下的块，一块一块地经过 NRAM：

  对切片的每一块，m 个元素（最后一块较短）：
    __memcpy(a, x + first + off, m * 4, GDRAM2NRAM)   -- 字节数
    __memcpy(b, y + first + off, m * 4, GDRAM2NRAM)
    __bang_add(a, a, b, m)                             -- 元素个数
    __memcpy(z + first + off, a, m * 4, NRAM2GDRAM)

NRAM 在核函数里分配：k:nram('float32', 1024, 'a') 就是 BANG C 的 __nram__ float a[1024]。这里
每个核只有 16 KiB 的 NRAM（MLU270 有 512 KiB，但几百万个元素的切片在那里同样要分块），放得下
两个 1024 个浮点数的数组，于是几千个元素的切片要分好几块。核函数申请的 NRAM 超过核的容量，
或者拷贝越过了数组的末尾，模拟器都会叫停它，并指出是哪个任务、哪一行。

给出的 `vadd` 让每个任务一次拷贝 n // taskDim 个元素。代码在三种大小上运行它，打印有多少个和
是对的、周期数和搬运的字节数。画面（mlu 场景）是最后一次成功的运行：每个核用掉的 NRAM，与它的
16 KiB 相比。]]),
      code = VADD_CODE,
      scene = bang_scene('mlu', 'vadd_info'),
      exercise = {
        prompt = say([[
Correct `vadd(k, x, y, z, n)`: z = x + y, each task on its balanced slice (the remainder spread as
in step 4), through NRAM in chunks of at most 1024 floats (the cores have 16 KiB of NRAM). The
check runs it on six sizes and task counts (BLOCK, UNION1, UNION2; n from 1 to 40000, task counts
that do not divide n, n < taskDim) and looks at z and at the bytes moved: each element loaded
once from x and from y, stored once.]],
          [[
改正 `vadd(k, x, y, z, n)`：z = x + y，每个任务处理自己那份均衡的切片（余数像第 4 步那样分散），
按每块最多 1024 个浮点数经过 NRAM（每个核只有 16 KiB NRAM）。检查会在六组大小和任务数上运行
它（BLOCK、UNION1、UNION2；n 从 1 到 40000，任务数不整除 n，以及 n < taskDim），检查 z 和搬运的
字节数：每个元素从 x、y 各拷入一次，写回一次。]]),
        hints = {
          say('The slice: local q, r = n // k.taskDim, n % k.taskDim; first = k.taskId * q + math.min(k.taskId, r); count = q + (k.taskId < r and 1 or 0).',
            '切片：local q, r = n // k.taskDim, n % k.taskDim；first = k.taskId * q + math.min(k.taskId, r)；count = q + (k.taskId < r and 1 or 0)。'),
          say('Allocate a and b of 1024 floats once, then for off = 0, count - 1, 1024 do local m = math.min(1024, count - off) ... end, with x + first + off (pointer arithmetic in elements) and m * 4 bytes.',
            '先分配一次 a 和 b（各 1024 个浮点数），然后 for off = 0, count - 1, 1024 do local m = math.min(1024, count - off) ... end，指针用 x + first + off（按元素计），大小用 m * 4 字节。'),
        },
        check = check_vadd,
        equivalent = {
          ['for ... = 0, (count - 1) + 1 at line 7'] = 'an extra pass only when count is a multiple of CHUNK, at off = count: m = 0, so it copies 0 bytes and adds 0 elements',
        },
        solution = [[
function vadd(k, x, y, z, n)
  local CHUNK = 1024
  local q, r = n // k.taskDim, n % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  local a, b = k:nram('float32', CHUNK, 'a'), k:nram('float32', CHUNK, 'b')
  for off = 0, count - 1, CHUNK do
    local m = math.min(CHUNK, count - off)
    k:__memcpy(a, x + first + off, m * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + first + off, m * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, m)
    k:__memcpy(z + first + off, a, m * 4, 'NRAM2GDRAM')
  end
end
]],
        wrong = {
          [[
function vadd(k, x, y, z, n)   -- chunks, but the remainder dropped
  local CHUNK = 1024
  local per = n // k.taskDim
  local first = k.taskId * per
  local a, b = k:nram('float32', CHUNK, 'a'), k:nram('float32', CHUNK, 'b')
  for off = 0, per - 1, CHUNK do
    local m = math.min(CHUNK, per - off)
    k:__memcpy(a, x + first + off, m * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + first + off, m * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, m)
    k:__memcpy(z + first + off, a, m * 4, 'NRAM2GDRAM')
  end
end
]],
          [[
function vadd(k, x, y, z, n)   -- every chunk full: the last one runs past the slice
  local CHUNK = 1024
  local q, r = n // k.taskDim, n % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  local a, b = k:nram('float32', CHUNK, 'a'), k:nram('float32', CHUNK, 'b')
  for off = 0, count - 1, CHUNK do
    k:__memcpy(a, x + first + off, CHUNK * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + first + off, CHUNK * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, CHUNK)
    k:__memcpy(z + first + off, a, CHUNK * 4, 'NRAM2GDRAM')
  end
end
]],
          [[
function vadd(k, x, y, z, n)   -- one chunk per task
  local CHUNK = 1024
  local q, r = n // k.taskDim, n % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = math.min(CHUNK, q + (k.taskId < r and 1 or 0))
  if count == 0 then return end
  local a, b = k:nram('float32', CHUNK, 'a'), k:nram('float32', CHUNK, 'b')
  k:__memcpy(a, x + first, count * 4, 'GDRAM2NRAM')
  k:__memcpy(b, y + first, count * 4, 'GDRAM2NRAM')
  k:__bang_add(a, a, b, count)
  k:__memcpy(z + first, a, count * 4, 'NRAM2GDRAM')
end
]],
          [[
function vadd(k, x, y, z, n)   -- ceil(n / taskDim) per task, clamped: the slices overlap
  local CHUNK = 1024
  local per = (n + k.taskDim - 1) // k.taskDim
  local first = math.min(k.taskId * per, math.max(n - per, 0))
  local count = math.min(per, n)
  local a, b = k:nram('float32', CHUNK, 'a'), k:nram('float32', CHUNK, 'b')
  for off = 0, count - 1, CHUNK do
    local m = math.min(CHUNK, count - off)
    k:__memcpy(a, x + first + off, m * 4, 'GDRAM2NRAM')
    k:__memcpy(b, y + first + off, m * 4, 'GDRAM2NRAM')
    k:__bang_add(a, a, b, m)
    k:__memcpy(z + first + off, a, m * 4, 'NRAM2GDRAM')
  end
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Ping-pong: hiding the copies behind the compute', '乒乓缓冲：把拷贝藏在计算后面'),
      text = say([[
The DLP of chapter 7 has no out-of-order hardware to overlap memory access with compute: the
notes' answer is a software pipeline — the program reorders its instructions and synchronizes
explicitly. In BANG C a core has a DMA engine beside its compute units: __memcpy_async starts a
copy and returns at once, and __sync_io() makes compute wait for the copies issued so far. With
two NRAM buffers (ping and pong) the next tile is loaded into one while the other is computed.

The kernel is a tiled matrix multiply, C (M x N) = A (M x K) B (K x N): each task takes a slice of
A's rows (step 4), copies B once into WRAM, and streams its rows through NRAM T = 16 at a time —
load the tile, __bang_matmul(out, tile, w, rows, K, N) (lhs in NRAM, rhs in WRAM), store the
result. The emulator's model, bang.model() (modelled cycles at 1 GHz, not measured): a copy
GDRAM<->NRAM or GDRAM->WRAM costs 200 cycles + bytes / 32; a matmul 8 + m·k·n / 1024; a vector
op 8 + n / 64. The compute waits for a synchronous copy; an asynchronous one runs on the DMA's
own clock (one copy at a time) until __sync_io(). For K = N = 256, T = 16:

  load a tile      L = 200 + 16·256·4 / 32   =  712
  matmul           C = 8 + 16·256·256 / 1024 = 1032
  store            S = 200 + 16·256·4 / 32   =  712
  B, once a task       200 + 256·256·4 / 32  = 8392
  single buffer    L + C + S                 = 2456 a tile
  ping-pong        max(L, C) + S             = 1744 a tile

so ping-pong saves min(L, C) = 712 cycles a tile (the store still waits: the DMA does one copy at a
time, and __sync_io waits for all of them). The pattern of the notes:

  __memcpy_async(ping, tile 0)
  for t = 0, tiles - 1:
    __sync_io()                  -- tile t is in, the store of t - 1 done
    if t + 1 < tiles: __memcpy_async(the other buffer, tile t + 1)
    __bang_matmul(out, the buffer of tile t, w, ...)  -- while t + 1 comes
    __memcpy_async(C's rows of tile t, out)
  __sync_io()

Reading a buffer before __sync_io() has made its copy land is a race the emulator reports (it
names both lines). The code prints the model, then runs mm_single and your mm_pingpong (as given,
the same kernel) for 1 to 8 tiles per task and prints their cycles; dev:record(true) keeps every
DMA and compute span of every core in info.timeline[i].spans. The picture (the pingpong scene) is
core 0 in the last run, single-buffered above and yours below: its DMA lane and its compute lane
on one time axis, the overlap beneath them, the idle time hatched.]],
        [[
第 7 章的深度学习处理器没有乱序执行的硬件来让访存和计算重叠：笔记给出的办法是软件流水线——
由程序重新排列指令、显式控制同步，而不需要依赖检查。在 BANG C 中，每个核在计算单元旁边还有
DMA：__memcpy_async 发起一次拷贝后立即返回，__sync_io() 让计算等待此前发出的所有拷贝完成。
用两个 NRAM 缓冲区（乒和乓），一个在计算时，另一个同时拷入下一块。

核函数是分块矩阵乘法 C (M x N) = A (M x K) B (K x N)：每个任务取 A 的一部分行（第 4 步），把 B
拷进 WRAM 一次，再把自己的行每次 T = 16 行地经过 NRAM——拷入这一块，__bang_matmul(out, tile,
w, rows, K, N)（左矩阵在 NRAM，右矩阵在 WRAM），写回结果。模拟器的模型 bang.model()（按 1 GHz
计的模拟周期，不是实测）：一次 GDRAM<->NRAM 或 GDRAM->WRAM 拷贝耗时 200 个周期 + 字节数 / 32；
一次矩阵乘 8 + m·k·n / 1024；一次向量运算 8 + n / 64。同步拷贝时计算要等它；异步拷贝在 DMA
自己的时钟上进行（一次一个拷贝），直到 __sync_io()。K = N = 256、T = 16 时：

  拷入一块         L = 200 + 16·256·4 / 32   =  712
  矩阵乘           C = 8 + 16·256·256 / 1024 = 1032
  写回             S = 200 + 16·256·4 / 32   =  712
  B，每任务一次        200 + 256·256·4 / 32  = 8392
  单缓冲           L + C + S                 = 2456（每块）
  乒乓             max(L, C) + S             = 1744（每块）

所以乒乓缓冲每块省下 min(L, C) = 712 个周期（写回仍要等：DMA 一次只做一个拷贝，而 __sync_io
等待所有拷贝）。笔记中的模式：

  __memcpy_async(乒, 第 0 块)
  for t = 0, tiles - 1:
    __sync_io()                  -- 第 t 块已拷入，第 t - 1 块已写回
    if t + 1 < tiles: __memcpy_async(另一个缓冲区, 第 t + 1 块)
    __bang_matmul(out, 第 t 块所在的缓冲区, w, ...)  -- 同时拷入 t + 1
    __memcpy_async(C 中第 t 块的行, out)
  __sync_io()

在 __sync_io() 让拷贝落地之前就读缓冲区，是模拟器会报告的竞争（它会指出两处代码行）。代码打印
模型，然后在每个任务 1 到 8 块上运行 mm_single 和你的 mm_pingpong（给出的版本和前者相同），
打印它们的周期数；dev:record(true) 把每个核的每段 DMA 和计算都记录在 info.timeline[i].spans 里。
画面（pingpong 场景）是最后一次运行中的 0 号核：上面是单缓冲，下面是你的版本；DMA 和计算各占
一条，共用一条时间轴，下方标出两者重叠的时间，空闲时间画成斜线。]]),
      code = PINGPONG_CODE,
      scene = pingpong_scene,
      exercise = {
        prompt = say([[
Write `mm_pingpong(k, a, b, c, M, K, N, T)`: the same product as mm_single (the same slices of
rows, B in WRAM, tiles of T rows), with two NRAM buffers, __memcpy_async and __sync_io, so that
each tile's load overlaps the matmul before it. The check runs it on four odd shapes (M not a
multiple of T or of the task count, M smaller than the task count) for C and the bytes moved, then
on A 2048 x 256 (1024 in Lumen's sanitizer build), B 256 x 256, T = 16, 16 tasks, where it must
save at least 90% of what the notes' ping-pong saves over mm_single.]],
          [[
写出 `mm_pingpong(k, a, b, c, M, K, N, T)`：与 mm_single 计算同样的乘积（同样的行切片，B 放在
WRAM，每块 T 行），但用两个 NRAM 缓冲区、__memcpy_async 和 __sync_io，让每一块的拷入与前一块
的矩阵乘重叠。检查先在四种奇特的形状上运行它（M 不是 T 或任务数的倍数，M 小于任务数），检查 C
和搬运的字节数；再在 A 2048 x 256（Lumen 的 sanitizer 构建中是 1024）、B 256 x 256、T = 16、16 个
任务上运行，它节省的周期至少要达到笔记中的乒乓比 mm_single 节省的 90%。]]),
        hints = {
          say('Keep the slice, the WRAM copy of B and an out buffer of T * N; make buf = {k:nram(...ping), k:nram(...pong)} of T * K each, and rows(t) = math.min(T, count - t * T).',
            '保留切片、B 拷到 WRAM 和 T * N 的 out 缓冲区；建 buf = {k:nram(...ping), k:nram(...pong)}，各 T * K 个元素，并令 rows(t) = math.min(T, count - t * T)。'),
          say('Before the loop: __memcpy_async(buf[1], a + first * K, ...). In the loop over t: __sync_io(); if t + 1 < tiles, __memcpy_async into buf[(t + 1) % 2 + 1]; __bang_matmul from buf[t % 2 + 1]; __memcpy_async the result out. After the loop: __sync_io().',
            '循环之前：__memcpy_async(buf[1], a + first * K, ...)。对 t 循环：__sync_io()；若 t + 1 < tiles，用 __memcpy_async 拷入 buf[(t + 1) % 2 + 1]；用 buf[t % 2 + 1] 做 __bang_matmul；用 __memcpy_async 写回结果。循环之后：__sync_io()。'),
        },
        check = check_pingpong,
        solution = [[
function mm_pingpong(k, a, b, c, M, K, N, T)
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local buf = {k:nram('float32', T * K, 'ping'), k:nram('float32', T * K, 'pong')}
  local out = k:nram('float32', T * N, 'out')
  local tiles = (count + T - 1) // T
  local function rows(t) return math.min(T, count - t * T) end
  k:__memcpy_async(buf[1], a + first * K, rows(0) * K * 4, 'GDRAM2NRAM')
  for t = 0, tiles - 1 do
    k:__sync_io()                          -- tile t is in NRAM, the store of tile t - 1 is done
    if t + 1 < tiles then                  -- tile t + 1 comes in while tile t is computed
      k:__memcpy_async(buf[(t + 1) % 2 + 1], a + (first + (t + 1) * T) * K, rows(t + 1) * K * 4, 'GDRAM2NRAM')
    end
    k:__bang_matmul(out, buf[t % 2 + 1], w, rows(t), K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, rows(t) * N * 4, 'NRAM2GDRAM')
  end
  k:__sync_io()
end
]],
        wrong = {
          [[
function mm_pingpong(k, a, b, c, M, K, N, T)   -- no __sync_io: the matmul reads a tile still on its way
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local buf = {k:nram('float32', T * K, 'ping'), k:nram('float32', T * K, 'pong')}
  local out = k:nram('float32', T * N, 'out')
  local tiles = (count + T - 1) // T
  local function rows(t) return math.min(T, count - t * T) end
  k:__memcpy_async(buf[1], a + first * K, rows(0) * K * 4, 'GDRAM2NRAM')
  for t = 0, tiles - 1 do
    if t + 1 < tiles then
      k:__memcpy_async(buf[(t + 1) % 2 + 1], a + (first + (t + 1) * T) * K, rows(t + 1) * K * 4, 'GDRAM2NRAM')
    end
    k:__bang_matmul(out, buf[t % 2 + 1], w, rows(t), K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, rows(t) * N * 4, 'NRAM2GDRAM')
  end
end
]],
          [[
function mm_pingpong(k, a, b, c, M, K, N, T)   -- two buffers, but a sync right after each load
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local buf = {k:nram('float32', T * K, 'ping'), k:nram('float32', T * K, 'pong')}
  local out = k:nram('float32', T * N, 'out')
  local tiles = (count + T - 1) // T
  for t = 0, tiles - 1 do
    local rows = math.min(T, count - t * T)
    k:__memcpy_async(buf[t % 2 + 1], a + (first + t * T) * K, rows * K * 4, 'GDRAM2NRAM')
    k:__sync_io()
    k:__bang_matmul(out, buf[t % 2 + 1], w, rows, K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, rows * N * 4, 'NRAM2GDRAM')
    k:__sync_io()
  end
end
]],
          [[
function mm_pingpong(k, a, b, c, M, K, N, T)   -- one buffer: the next tile overwrites the one computed
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local tile = k:nram('float32', T * K, 'tile')
  local out = k:nram('float32', T * N, 'out')
  local tiles = (count + T - 1) // T
  local function rows(t) return math.min(T, count - t * T) end
  k:__memcpy_async(tile, a + first * K, rows(0) * K * 4, 'GDRAM2NRAM')
  for t = 0, tiles - 1 do
    k:__sync_io()
    if t + 1 < tiles then
      k:__memcpy_async(tile, a + (first + (t + 1) * T) * K, rows(t + 1) * K * 4, 'GDRAM2NRAM')
    end
    k:__bang_matmul(out, tile, w, rows(t), K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, rows(t) * N * 4, 'NRAM2GDRAM')
  end
  k:__sync_io()
end
]],
          [[
function mm_pingpong(k, a, b, c, M, K, N, T)   -- the last, shorter tile forgotten
  local q, r = M // k.taskDim, M % k.taskDim
  local first = k.taskId * q + math.min(k.taskId, r)
  local count = q + (k.taskId < r and 1 or 0)
  if count == 0 then return end
  local w = k:wram('float32', K * N, 'w')
  k:__memcpy(w, b, K * N * 4, 'GDRAM2WRAM')
  local buf = {k:nram('float32', T * K, 'ping'), k:nram('float32', T * K, 'pong')}
  local out = k:nram('float32', T * N, 'out')
  local tiles = count // T
  if tiles == 0 then return end
  k:__memcpy_async(buf[1], a + first * K, T * K * 4, 'GDRAM2NRAM')
  for t = 0, tiles - 1 do
    k:__sync_io()
    if t + 1 < tiles then
      k:__memcpy_async(buf[(t + 1) % 2 + 1], a + (first + (t + 1) * T) * K, T * K * 4, 'GDRAM2NRAM')
    end
    k:__bang_matmul(out, buf[t % 2 + 1], w, T, K, N)
    k:__memcpy_async(c + (first + t * T) * N, out, T * N * 4, 'NRAM2GDRAM')
  end
  k:__sync_io()
end
]],
        },
      },
    },
  },
}
