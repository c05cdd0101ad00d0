--[[
ECE408 Lecture 23: CUDA's alternatives — the history of accelerated computing as a timeline (the
lecture's dates, vendors and frameworks), one kernel in five models (vector add, then tiled
matmul, in CUDA, OpenCL C, OpenACC, SYCL and HIP; OpenCL run on PoCL, OpenACC with gcc when there
is one), the names of CUDA in OpenCL C and in Cambricon's BANG C (checked), the student's OpenCL C
vector add and tiled matmul run for real with kernels.opencl and compared with the emulator and
the CPU (checked on sizes that are not multiples of the group, with guarded memory around the
buffers), the same matmul measured on PoCL, on the CPU and modelled on the emulator, and the
vendors' views of Lecture 26. Format: docs/lessons.md.
]]
local say = lesson.say

-- ---------------------------------------------------------------- OpenCL here?

local function opencl_here()
  return lm.opencl ~= nil and lm.opencl.is_available() == true
end

local function no_opencl()
  local why = lm.opencl and lm.opencl.unavailable_reason() or 'this lumen has no lm.opencl'
  return say('OpenCL is not available here (' .. tostring(why) .. '); this exercise runs your kernel '
    .. 'on a real OpenCL device, so its kernel cannot be checked on this machine (the launch above was)',
    '这里没有可用的 OpenCL（' .. tostring(why) .. '）；这个练习要在真实的 OpenCL 设备上运行你的内核，'
    .. '所以在这台机器上无法检查内核（上面的启动大小已经检查过了）')
end

-- The first lines of an error (a build log can be long): at most `lines` of them.
local function head(msg, lines)
  local out, k = {}, 0
  for line in (tostring(msg) .. '\n'):gmatch('([^\n]*)\n') do
    k = k + 1
    if k > lines then out[#out + 1] = '...' break end
    out[#out + 1] = line
  end
  return table.concat(out, '\n')
end

-- Runs an OpenCL C source with kernels.opencl, protected: true, info or false, a text.
local function run_cl(src, opts)
  local r = table.pack(pcall(kernels.opencl, src, opts))
  if r[1] then return true, r[2] end
  local e = head(tostring(r[2]), 10)
  return false, say(e, e)
end

-- A float32 tensor: the values, then `pad` copies of `fill` (memory after the buffer, which a
-- kernel that reads or writes past the end reaches first).
local function padded(values, pad, fill)
  local t = {}
  for i = 1, #values do t[i] = values[i] end
  for i = 1, pad do t[#values + i] = fill end
  return lm.tensor(t, { dtype = 'float32' })
end

local NAN = 0 / 0
local SENTINEL = -7777 -- what the check writes in C before the kernel runs

local function need_source(env, name)
  local v = env[name]
  if type(v) ~= 'string' then
    return false, say(string.format('%s should be a string holding OpenCL C source, got %s', name, type(v)),
      string.format('%s 应该是一个装着 OpenCL C 源码的字符串，现在是 %s', name, type(v)))
  end
  return true, v
end

-- ---------------------------------------------------------------- the names exercise

local function squeeze(s) return (s:gsub('%s+', '')) end

-- A row of the table: the CUDA name, what OpenCL C and BANG C call it (the accepted spellings,
-- compared without blanks; false: no single name, not asked), how an answer is read (`call`: the
-- function's name only; `exact`: the whole expression; `barrier`: the fence flags as a set), the
-- mistakes a student makes with what to say about each, and a question for any other wrong
-- answer.
local NAME_ROWS = {
  {
    cuda = 'threadIdx.x', read = 'exact',
    opencl = { 'get_local_id(0)' }, bang = { 'coreId' },
    why_opencl = {
      ['get_global_id(0)'] = say('get_global_id(0) numbers the work-item in the whole NDRange (CUDA\'s blockIdx.x * blockDim.x + threadIdx.x); threadIdx.x counts within the block: get_local_id(0)',
        'get_global_id(0) 是工作项在整个 NDRange 中的编号（CUDA 的 blockIdx.x * blockDim.x + threadIdx.x）；threadIdx.x 只在块内计数：get_local_id(0)'),
      ['get_local_id'] = say('which dimension? x is dimension 0: get_local_id(0)', '哪一维？x 是第 0 维：get_local_id(0)'),
      ['get_local_id(1)'] = say('dimension 1 is y (threadIdx.y); x is dimension 0', '第 1 维是 y（threadIdx.y）；x 是第 0 维'),
    },
    why_bang = {
      taskId = say('taskId numbers the task (one per core) over the whole launch, as blockIdx.x * blockDim.x + threadIdx.x does; within its cluster a core is coreId',
        'taskId 是任务（每个核一个）在整个启动里的编号，相当于 blockIdx.x * blockDim.x + threadIdx.x；核在自己 cluster 里的编号是 coreId'),
      taskIdX = say('taskIdX is the task\'s x coordinate in the launch\'s dim; the core\'s index within its cluster (a group of a UNION launch) is coreId',
        'taskIdX 是任务在启动维度 dim 中的 x 坐标；核在自己 cluster（UNION 启动中的一组）里的编号是 coreId'),
    },
    hint_opencl = say('the work-item\'s index within its work-group', '工作项在工作组内的编号'),
    hint_bang = say('a task is one core; a UNION1 launch groups the 4 cores of a cluster', '一个任务就是一个核；UNION1 启动把一个 cluster 的 4 个核编成一组'),
  },
  {
    cuda = 'blockIdx.x', read = 'exact',
    opencl = { 'get_group_id(0)' }, bang = false, -- BANG: taskId / coreDim in a UNION1 launch
    why_opencl = {
      ['get_num_groups(0)'] = say('get_num_groups(0) is how many groups there are (gridDim.x); blockIdx.x is which one: get_group_id(0)',
        'get_num_groups(0) 是一共有多少个组（gridDim.x）；blockIdx.x 是第几个组：get_group_id(0)'),
      ['get_local_id(0)'] = say('get_local_id(0) is the work-item within its group (threadIdx.x); the group\'s own index is get_group_id(0)',
        'get_local_id(0) 是组内的工作项编号（threadIdx.x）；组本身的编号是 get_group_id(0)'),
    },
    hint_opencl = say('the index of the work-group', '工作组的编号'),
  },
  {
    cuda = 'blockDim.x', read = 'exact',
    opencl = { 'get_local_size(0)' }, bang = { 'coreDim' },
    why_opencl = {
      ['get_global_size(0)'] = say('get_global_size(0) counts the work-items of the whole NDRange (gridDim.x * blockDim.x); one group\'s size is get_local_size(0)',
        'get_global_size(0) 数的是整个 NDRange 的工作项（gridDim.x * blockDim.x）；一个组的大小是 get_local_size(0)'),
      ['get_num_groups(0)'] = say('get_num_groups(0) is gridDim.x; the group\'s size is get_local_size(0)', 'get_num_groups(0) 是 gridDim.x；组的大小是 get_local_size(0)'),
    },
    why_bang = {
      taskDim = say('taskDim counts all the tasks of the launch (gridDim.x * blockDim.x); the cores of one cluster: coreDim', 'taskDim 数的是整个启动的所有任务（gridDim.x * blockDim.x）；一个 cluster 的核数：coreDim'),
    },
    hint_opencl = say('how many work-items one group has', '一个组有多少个工作项'),
    hint_bang = say('how many cores one cluster has', '一个 cluster 有多少个核'),
  },
  {
    cuda = 'gridDim.x', read = 'exact',
    opencl = { 'get_num_groups(0)' }, bang = false, -- BANG: taskDim / coreDim in a UNION1 launch
    why_opencl = {
      ['get_global_size(0)'] = say('get_global_size(0) counts work-items (gridDim.x * blockDim.x), not groups: get_num_groups(0)',
        'get_global_size(0) 数的是工作项（gridDim.x * blockDim.x），不是组：get_num_groups(0)'),
    },
    hint_opencl = say('how many work-groups there are', '一共有多少个工作组'),
  },
  {
    cuda = 'blockIdx.x * blockDim.x + threadIdx.x', read = 'exact',
    opencl = { 'get_global_id(0)' }, bang = { 'taskId' },
    why_opencl = {
      ['get_local_id(0)'] = say('get_local_id(0) restarts at 0 in every group (threadIdx.x); the index in the whole NDRange is get_global_id(0)',
        'get_local_id(0) 在每个组里都从 0 开始（threadIdx.x）；在整个 NDRange 里的编号是 get_global_id(0)'),
      ['get_global_size(0)'] = say('get_global_size(0) is the number of work-items, the same for all; the index of this one is get_global_id(0)',
        'get_global_size(0) 是工作项的总数，对谁都一样；这一个工作项的编号是 get_global_id(0)'),
    },
    why_bang = {
      coreId = say('coreId restarts at 0 in every cluster (threadIdx.x); the task\'s index over the launch is taskId', 'coreId 在每个 cluster 里都从 0 开始（threadIdx.x）；任务在整个启动里的编号是 taskId'),
    },
    hint_opencl = say('one call gives it', '一个函数调用就能得到'),
    hint_bang = say('the task\'s number over the whole launch', '任务在整个启动里的编号'),
  },
  {
    cuda = '__shared__', read = 'exact',
    opencl = { '__local', 'local' }, bang = { '__mlu_shared__' },
    why_opencl = {
      __global = say('__global in OpenCL C is the address space of global memory (what cudaMalloc returns); memory shared by a work-group is __local',
        'OpenCL C 的 __global 是全局内存的地址空间（cudaMalloc 返回的那种）；工作组共享的内存是 __local'),
      __private = say('__private is each work-item\'s own memory (registers, CUDA\'s locals); the group\'s shared memory is __local',
        '__private 是每个工作项自己的内存（寄存器，CUDA 的局部变量）；组内共享的内存是 __local'),
      __constant = say('__constant is read-only memory for all (CUDA\'s __constant__); shared memory is __local', '__constant 是大家只读的内存（CUDA 的 __constant__）；共享内存是 __local'),
    },
    why_bang = {
      __nram__ = say('__nram__ is each core\'s own scratchpad; with a task as a work-item that is private memory. The memory the cores of a cluster share is the SRAM: __mlu_shared__',
        '__nram__ 是每个核自己的便笺存储；把任务看作工作项时，它相当于私有内存。一个 cluster 的核共享的是 SRAM：__mlu_shared__'),
      __wram__ = say('__wram__ holds one core\'s weights for its matrix unit; shared by a cluster: __mlu_shared__', '__wram__ 放的是一个核的矩阵单元用的权值；一个 cluster 共享的是 __mlu_shared__'),
      __mlu_device__ = say('__mlu_device__ is global memory (GDRAM) for the whole launch; a cluster\'s shared SRAM is __mlu_shared__', '__mlu_device__ 是整个启动共用的全局内存（GDRAM）；cluster 共享的 SRAM 是 __mlu_shared__'),
    },
    hint_opencl = say('the address space of a work-group\'s memory', '工作组内存的地址空间'),
    hint_bang = say('the SRAM the 4 cores of a cluster share', '一个 cluster 的 4 个核共享的 SRAM'),
  },
  {
    cuda = '__global__', read = 'exact',
    opencl = { '__kernel', 'kernel' }, bang = { '__mlu_global__', '__mlu_entry__' },
    why_opencl = {
      __global = say('in OpenCL C __global is an address space (global memory), not a kernel: a function the host launches is __kernel',
        '在 OpenCL C 里 __global 是地址空间（全局内存），不是内核：主机启动的函数用 __kernel'),
    },
    why_bang = {
      __mlu_func__ = say('__mlu_func__ is a device function called from a kernel (CUDA\'s __device__); the kernel is __mlu_global__', '__mlu_func__ 是在内核里调用的设备函数（CUDA 的 __device__）；内核是 __mlu_global__'),
      __mlu_device__ = say('__mlu_device__ places a variable in global memory; the kernel is __mlu_global__', '__mlu_device__ 把变量放在全局内存里；内核是 __mlu_global__'),
    },
    hint_opencl = say('the qualifier of a function the host launches', '主机启动的函数的限定符'),
    hint_bang = say('the qualifier of an MLU kernel', 'MLU 内核的限定符'),
  },
  {
    cuda = '__syncthreads()', read = 'barrier',
    bang = { '__sync_cluster' },
    why_bang = {
      __sync_all = say('__sync_all() waits for every core of the unit, all x clusters of a UNIONx launch, which do not share SRAM (with UNION1 it happens to be one cluster); the barrier of the cores that share __mlu_shared__ memory is __sync_cluster()',
        '__sync_all() 等的是整个单元的所有核，即 UNIONx 启动中的全部 x 个 cluster，它们并不共享 SRAM（UNION1 时恰好只有一个 cluster）；共享 __mlu_shared__ 内存的那些核之间的屏障是 __sync_cluster()'),
      __sync = say('__sync() orders one core\'s own instruction streams; the barrier of a cluster\'s cores is __sync_cluster()', '__sync() 只同步一个核自己的指令流；cluster 内各核之间的屏障是 __sync_cluster()'),
    },
    hint_opencl = say('barrier(...) with the fence of the memory the group shares', 'barrier(...)，带上组内共享内存的那个 fence'),
    hint_bang = say('the barrier of the cores of one cluster', '一个 cluster 内各核的屏障'),
  },
  {
    cuda = 'atomicAdd', read = 'call',
    opencl = { 'atomic_add', 'atomic_fetch_add', 'atom_add' }, bang = { '__bang_atomic_add' },
    why_opencl = {
      atomic_inc = say('atomic_inc adds 1 only; atomicAdd adds any value: atomic_add', 'atomic_inc 只能加 1；atomicAdd 能加任意值：atomic_add'),
      atomic_xchg = say('atomic_xchg swaps (atomicExch); atomicAdd is atomic_add', 'atomic_xchg 是交换（atomicExch）；atomicAdd 是 atomic_add'),
    },
    why_bang = {},
    hint_opencl = say('OpenCL C 1.1\'s built-in atomic for int and uint', 'OpenCL C 1.1 给 int 和 uint 的内建原子函数'),
    hint_bang = say('BANG\'s intrinsics start with __bang_', 'BANG 的内建函数以 __bang_ 开头'),
  },
  {
    cuda = 'cudaMalloc', read = 'call',
    opencl = { 'clCreateBuffer' }, bang = { 'cnrtMalloc' },
    why_opencl = {
      clSVMAlloc = say('clSVMAlloc (OpenCL 2.0) makes memory the host and the device share, closer to cudaMallocManaged; a device buffer is clCreateBuffer',
        'clSVMAlloc（OpenCL 2.0）分配主机和设备共享的内存，更接近 cudaMallocManaged；设备缓冲区用 clCreateBuffer'),
      malloc = say('malloc allocates host memory; memory on the device is a buffer: clCreateBuffer', 'malloc 分配的是主机内存；设备上的内存是缓冲区：clCreateBuffer'),
    },
    why_bang = {},
    hint_opencl = say('OpenCL\'s device memory is a buffer object', 'OpenCL 的设备内存是缓冲区对象'),
    hint_bang = say('CNRT is BANG\'s runtime', 'CNRT 是 BANG 的运行时'),
  },
  {
    cuda = 'cudaMemcpy(HostToDevice)', read = 'call',
    opencl = { 'clEnqueueWriteBuffer' }, bang = { 'cnrtMemcpy' },
    why_opencl = {
      clEnqueueReadBuffer = say('read and write are said from the host\'s side: to send data to the device the host writes the buffer: clEnqueueWriteBuffer',
        '读和写是从主机这边说的：把数据送到设备，是主机写缓冲区：clEnqueueWriteBuffer'),
      clCreateBuffer = say('clCreateBuffer makes the buffer (cudaMalloc); the copy into it is clEnqueueWriteBuffer', 'clCreateBuffer 创建缓冲区（cudaMalloc）；往里复制用 clEnqueueWriteBuffer'),
    },
    why_bang = {},
    hint_opencl = say('a command enqueued on the queue that fills a buffer', '放进命令队列、填充缓冲区的命令'),
    hint_bang = say('one copy function with a direction argument', '一个复制函数，方向由参数给出'),
  },
  {
    cuda = 'cudaMemcpy(DeviceToHost)', read = 'call',
    opencl = { 'clEnqueueReadBuffer' }, bang = { 'cnrtMemcpy' },
    why_opencl = {
      clEnqueueWriteBuffer = say('to bring results back the host reads the buffer: clEnqueueReadBuffer', '把结果取回来，是主机读缓冲区：clEnqueueReadBuffer'),
    },
    why_bang = {},
    hint_opencl = say('a command enqueued on the queue that copies a buffer to the host', '放进命令队列、把缓冲区复制回主机的命令'),
    hint_bang = say('the same copy function, the other direction', '同一个复制函数，方向反过来'),
  },
}

-- How an answer is read: the function's name for `call` rows, the whole text (without blanks,
-- without a trailing ();) otherwise.
local function read_answer(row, s)
  s = squeeze(s):gsub(';$', '')
  if row.read == 'call' then return s:match('^[%w_]+') or s end
  return (s:gsub('%(%)$', ''))
end

-- The OpenCL side of __syncthreads(): barrier or work_group_barrier with CLK_LOCAL_MEM_FENCE
-- (CUDA's barrier also orders the block's global accesses, so adding CLK_GLOBAL_MEM_FENCE is
-- right too); CLK_GLOBAL_MEM_FENCE alone orders no shared data.
local function barrier_verdict(s)
  local bare = squeeze(s):gsub(';$', '')
  if bare == 'barrier' or bare == 'work_group_barrier' then bare = bare .. '()' end
  local name, flags = bare:match('^([%w_]+)%((.*)%)$')
  if name == 'mem_fence' or name == 'read_mem_fence' or name == 'write_mem_fence' then
    return false, say(name .. ' orders this work-item\'s own accesses but waits for nobody: the group meets at barrier(...)',
      name .. ' 只给本工作项自己的访存排序，不等任何人：全组要在 barrier(...) 会合')
  end
  if name ~= 'barrier' and name ~= 'work_group_barrier' then return nil end
  local set, n = {}, 0
  for f in flags:gmatch('[^|]+') do set[f] = true; n = n + 1 end
  if set.CLK_LOCAL_MEM_FENCE and n == (set.CLK_GLOBAL_MEM_FENCE and 2 or 1) then return true end
  if set.CLK_GLOBAL_MEM_FENCE and n == 1 then
    return false, say('CLK_GLOBAL_MEM_FENCE orders global memory only; __syncthreads() is there for the shared (__local) data the group just wrote: CLK_LOCAL_MEM_FENCE',
      'CLK_GLOBAL_MEM_FENCE 只保证全局内存的顺序；__syncthreads() 是为了组内刚写下的共享（__local）数据：CLK_LOCAL_MEM_FENCE')
  end
  if n == 0 then
    return false, say('barrier needs its fence flags: which memory must the group see in order?', 'barrier 需要 fence 标志：全组要按顺序看到哪种内存？')
  end
  return nil
end

local function row_verdict(row, side, answer)
  local label = side == 'opencl' and 'OpenCL C' or 'BANG C'
  if type(answer) ~= 'string' or squeeze(answer) == '' then
    return false, say(string.format("names['%s'].%s is not filled in yet (%s: %s)", row.cuda, side, label,
      row['hint_' .. side].en), string.format("names['%s'].%s 还没有填（%s：%s）", row.cuda, side, label,
      row['hint_' .. side].zh))
  end
  if side == 'opencl' and row.read == 'barrier' then
    local ok, why = barrier_verdict(answer)
    if ok then return true end
    if why then
      return false, say(string.format("names['%s'].opencl = '%s': %s", row.cuda, answer, why.en),
        string.format("names['%s'].opencl = '%s'：%s", row.cuda, answer, why.zh))
    end
  else
    local got = read_answer(row, answer)
    for _, right in ipairs(row[side]) do
      if got == read_answer(row, right) then return true end
    end
    local why = row['why_' .. side] and row['why_' .. side][got]
    if why then
      return false, say(string.format("names['%s'].%s = '%s': %s", row.cuda, side, answer, why.en),
        string.format("names['%s'].%s = '%s'：%s", row.cuda, side, answer, why.zh))
    end
  end
  return false, say(string.format("names['%s'].%s = '%s' is not %s's name for %s (look for: %s)", row.cuda, side,
    answer, label, row.cuda, row['hint_' .. side].en), string.format("names['%s'].%s = '%s' 不是 %s 里 %s 的名字（要找的是：%s）",
    row.cuda, side, answer, label, row.cuda, row['hint_' .. side].zh))
end

-- CUDA's <<<grid, block>>> as OpenCL's (global, local): the student's ndrange on fresh launches.
local function ndrange_verdict(f)
  for _, case in ipairs({ { 4, 64 }, { 37, 128 }, { 1000, 32 }, { 1, 256 }, { 3, 1 } }) do
    local grid, block = case[1], case[2]
    local r = table.pack(lesson.try(f, grid, block))
    if not r[1] then return false, r[2] end
    local g, l = lesson.number(r[2]), lesson.number(r[3])
    local call = { en = string.format('ndrange(%d, %d) returns %s, %s', grid, block, tostring(r[2]), tostring(r[3])),
      zh = string.format('ndrange(%d, %d) 返回 %s, %s', grid, block, tostring(r[2]), tostring(r[3])) }
    if g ~= grid * block or l ~= block then
      local why
      if g == grid and l == block then
        why = say(string.format('the global size counts work-items, not groups: %d groups of %d are %d work-items (the classic off-by-a-block of a CUDA program moved to OpenCL)',
          grid, block, grid * block), string.format('全局大小数的是工作项，不是组：%d 个组、每组 %d 个，共 %d 个工作项（CUDA 程序搬到 OpenCL 时经典的“差一个块”错误）',
          grid, block, grid * block))
      elseif g == grid * block and l == grid then
        why = say('the local size is one group\'s size, CUDA\'s block, not the number of groups', '局部大小是一个组的大小，即 CUDA 的块大小，不是组的个数')
      elseif g == block and l == grid then
        why = say('both are swapped, and global still counts groups: global = grid * block, local = block', '两个都弄反了，而且全局大小仍是按组数算的：global = grid * block，local = block')
      else
        why = say(string.format('for <<<%d, %d>>> OpenCL wants global = %d work-items and local = %d', grid, block, grid * block, block),
          string.format('对 <<<%d, %d>>>，OpenCL 要的是 global = %d 个工作项、local = %d', grid, block, grid * block, block))
      end
      return false, say(call.en .. ': ' .. why.en, call.zh .. '：' .. why.zh)
    end
  end
  return true
end

local function names_check(env)
  local ok, names = lesson.need(env, 'names', 'table')
  if not ok then return false, names end
  local by_key = {}
  for k, v in pairs(names) do
    if type(k) == 'string' then by_key[squeeze(k)] = v end
  end
  for _, side in ipairs({ 'opencl', 'bang' }) do
    for _, row in ipairs(NAME_ROWS) do
      local entry = by_key[squeeze(row.cuda)]
      if type(entry) ~= 'table' then
        return false, say(string.format("names['%s'] is missing: give it {opencl = ..., bang = ...}", row.cuda),
          string.format("缺少 names['%s']：给它一个 {opencl = ..., bang = ...}", row.cuda))
      end
      if row[side] ~= false then -- (BANG has no single name for blockIdx.x and gridDim.x: not asked)
        local rok, msg = row_verdict(row, side, entry[side])
        if not rok then return false, msg end
      end
    end
    if side == 'opencl' then
      local fok, f = lesson.need(env, 'ndrange')
      if not fok then return false, f end
      local nok, nmsg = ndrange_verdict(f)
      if not nok then return false, nmsg end
    end
  end
  return true, say('Right: the same model under three sets of names. One group (a block, a work-group, a cluster) shares memory and meets at barriers; OpenCL\'s global size and BANG\'s dim count work-items and tasks, CUDA\'s grid counts blocks.',
    '对：同一个模型，三套名字。一组（块、工作组、cluster）共享内存、在屏障处会合；OpenCL 的全局大小和 BANG 的 dim 数的是工作项和任务，CUDA 的 grid 数的是块。')
end

-- ---------------------------------------------------------------- the vector add exercise

-- (local size, n): sizes above, below and at one group, 1, odd, and many groups with a tail. The
-- launches are checked in this order (the first tells the number of groups, n and the right size
-- apart), the kernel runs in the order of VADD_RUNS (the first, many groups, tells a kernel that
-- uses the index within the group from one that misses the last element).
local VADD_CASES = { { 64, 65 }, { 64, 1 }, { 64, 63 }, { 64, 64 }, { 16, 17 }, { 64, 1000 }, { 16, 250 }, { 64, 4099 } }
local VADD_RUNS = { { 64, 1000 }, { 64, 65 }, { 64, 1 }, { 64, 63 }, { 64, 64 }, { 16, 17 }, { 16, 250 }, { 64, 4099 } }

-- What vadd_global(n, L) gives against the smallest multiple of L covering n: nil when right,
-- else a text.
local function vadd_geometry(n, L, g, want)
  local call = say(string.format('vadd_global(%d, %d) gives %s', n, L, lesson.show(g)),
    string.format('vadd_global(%d, %d) 给出 %s', n, L, lesson.show(g)))
  local why
  if g == (n + L - 1) // L and g ~= want then
    why = say(string.format('that is the number of groups (CUDA\'s grid); OpenCL\'s global size counts work-items: %d group%s of %d %s %d',
      g, g == 1 and '' or 's', L, g == 1 and 'is' or 'are', g * L), string.format('这是组的个数（CUDA 的 grid）；OpenCL 的全局大小数的是工作项：%d 个组、每组 %d 个，共 %d 个', g, L, g * L))
  elseif g % L ~= 0 then
    why = say(string.format('OpenCL 1.2 needs the global size to be a multiple of the local size %d: round n up to %d; the work-items past n then do nothing (if (i < n))',
      L, want), string.format('OpenCL 1.2 要求全局大小是局部大小 %d 的倍数：把 n 向上取整到 %d；超出 n 的工作项什么也不做（if (i < n)）', L, want))
  elseif g < n then
    why = say(string.format('%s work-items cannot cover %d elements (one each): round n up to a multiple of %d', lesson.show(g), n, L),
      string.format('%s 个工作项（每个一个元素）盖不住 %d 个元素：把 n 向上取整到 %d 的倍数', lesson.show(g), n, L))
  else
    why = say(string.format('the smallest multiple of %d that covers %d is %d: the extra groups have nothing to do', L, n, want),
      string.format('盖住 %d 的最小的 %d 的倍数是 %d：多出来的组无事可做', n, L, want))
  end
  return say(call.en .. ': ' .. why.en, call.zh .. '：' .. why.zh)
end

-- What c shows after a run (got: c with its padding, as a list; want: a + b): nil when right, else
-- a text naming the first wrong element or the first write past n, and what to look at.
local function vadd_verdict(got, want, n, L, g)
  for i = 1, n do
    if got[i] ~= want[i] then
      local why
      local written = 0
      for j = 1, n do if got[j] ~= SENTINEL then written = written + 1 end end
      local first_group = true
      for j = 1, math.min(L, n) do if got[j] ~= want[j] then first_group = false break end end
      if written == 0 then
        why = say('nothing in c was written: does the kernel store c[i]?', 'c 里什么也没被写：内核存了 c[i] 吗？')
      elseif got[i] == SENTINEL and i == n and written == n - 1 then
        why = say('only the last element is missing: the guard must let i = n - 1 through: if (i < n)', '只少了最后一个元素：守卫条件要放 i = n - 1 通过：if (i < n)')
      elseif i > L and first_group and written == L then
        why = say('only the first group\'s elements are right: get_local_id(0) restarts at 0 in every group; the element of a work-item is get_global_id(0)',
          '只有第一个组的元素是对的：get_local_id(0) 在每个组里都从 0 开始；工作项对应的元素是 get_global_id(0)')
      elseif got[i] == SENTINEL then
        why = say('the work-item for it wrote nothing', '负责它的工作项什么也没写')
      else
        why = say('is it a[i] + b[i] for i = get_global_id(0)?', '它是 i = get_global_id(0) 时的 a[i] + b[i] 吗？')
      end
      return say(string.format('c[%d] is %s, expected %s: %s', i - 1, lesson.show(got[i]), lesson.show(want[i]), why.en),
        string.format('c[%d] 是 %s，应为 %s：%s', i - 1, lesson.show(got[i]), lesson.show(want[i]), why.zh))
    end
  end
  local past, first = 0, nil
  for i = n + 1, #got do
    if got[i] ~= SENTINEL then past = past + 1; first = first or i - 1 end
  end
  if past == 0 then return nil end
  local en = string.format('the kernel wrote c[%d], past the end of c (n = %d): ', first, n)
  local zh = string.format('内核写了 c[%d]，越过了 c 的末尾（n = %d）：', first, n)
  if first == n and past == 1 then
    return say(en .. 'the guard lets i = n through: i < n, not i <= n', zh .. '守卫条件放过了 i = n：应是 i < n，不是 i <= n')
  end
  return say(en .. string.format('the global size is rounded up to %d, so the last group has %d work-items past n: each must check if (i < n) before it touches memory',
    g, g - n), zh .. string.format('全局大小向上取整到 %d，最后一组里有 %d 个工作项超出了 n：每个工作项在访问内存之前都要检查 if (i < n)', g, g - n))
end

local function vadd_check(env)
  local sok, src = need_source(env, 'vadd_src')
  if not sok then return false, src end
  local fok, f = lesson.need(env, 'vadd_global')
  if not fok then return false, f end
  local sizes = {}
  for _, case in ipairs(VADD_CASES) do
    local L, n = case[1], case[2]
    local r = table.pack(lesson.try(f, n, L))
    if not r[1] then return false, r[2] end
    local g, want = lesson.number(r[2]), (n + L - 1) // L * L
    if g == nil or g ~= math.floor(g) or g < 1 then
      return false, say(string.format('vadd_global(%d, %d) gives %s: it should be a whole number of work-items', n, L, tostring(r[2])),
        string.format('vadd_global(%d, %d) 给出 %s：应该是工作项的个数（整数）', n, L, tostring(r[2])))
    end
    if g ~= want then return false, vadd_geometry(n, L, g, want) end
    sizes[L .. ':' .. n] = g
  end
  if not opencl_here() then return false, no_opencl() end
  local rnd = lesson.lcg(408)
  for _, case in ipairs(VADD_RUNS) do
    local L, n = case[1], case[2]
    local g = sizes[L .. ':' .. n]
    -- a and b are followed by NaN, c by SENTINEL: reads past n give NaN, writes past n show
    local av, bv, want = {}, {}, {}
    for i = 1, n do
      av[i], bv[i] = math.floor(rnd() * 200 - 100) / 8, math.floor(rnd() * 200 - 100) / 8
      want[i] = av[i] + bv[i]
    end
    local pad = L + 8
    local a, b, c = padded(av, pad, NAN), padded(bv, pad, NAN), padded({}, n + pad, SENTINEL)
    local where = say(string.format('n = %d, local size %d, global %d: ', n, L, g), string.format('n = %d，局部大小 %d，全局大小 %d：', n, L, g))
    local rok, info = run_cl(src, { global = g, ['local'] = L, args = { a, b, c, n } })
    if not rok then return false, say(where.en .. info.en, where.zh .. info.zh) end
    local why = vadd_verdict(c:tolist(), want, n, L, g)
    if why then return false, say(where.en .. why.en, where.zh .. why.zh) end
  end
  return true, say('Right on every size, 1 and those that are not multiples of the group included: global counts work-items, rounded up to a multiple of the local size, and every work-item past n does nothing.',
    '每种大小都对，包括 1 和不是组大小倍数的那些：全局大小数工作项，向上取整到局部大小的倍数，超出 n 的工作项什么也不做。')
end

-- ---------------------------------------------------------------- the tiled matmul exercise

local TILE = 16
-- (m, k, n): whole tiles (first: a mistake of the edges then shows as one), one element, partial
-- tiles in every dimension, k whole and m, n not.
local MM_CASES = { { 16, 16, 16 }, { 1, 1, 1 }, { 17, 33, 5 }, { 40, 100, 23 }, { 33, 16, 47 } }

local function up(x) return (x + TILE - 1) // TILE * TILE end

local function mm_geometry(m, n, g)
  local shown = type(g) == 'table' and string.format('{%s, %s}', tostring(g[1]), tostring(g[2])) or tostring(g)
  local call = { en = string.format('matmul_global(%d, %d) gives %s', m, n, shown),
    zh = string.format('matmul_global(%d, %d) 给出 %s', m, n, shown) }
  local x, y = type(g) == 'table' and lesson.number(g[1]), type(g) == 'table' and lesson.number(g[2])
  local function refuse(en, zh) return false, say(call.en .. ': ' .. en, call.zh .. '：' .. zh) end
  if not x or not y or x ~= math.floor(x) or y ~= math.floor(y) or x < 1 or y < 1 then
    return refuse('it should be a table of two whole numbers {x, y} (work-items along x: columns, along y: rows)',
      '应该是两个整数组成的表 {x, y}（x 方向的工作项数：列；y 方向：行）')
  end
  if x == (n + TILE - 1) // TILE and y == (m + TILE - 1) // TILE and not (x == up(n) and y == up(m)) then
    return refuse(string.format('those are the numbers of groups (CUDA\'s grid); OpenCL\'s global size counts work-items: {%d, %d}', up(n), up(m)),
      string.format('这是组的个数（CUDA 的 grid）；OpenCL 的全局大小数的是工作项：{%d, %d}', up(n), up(m)))
  end
  if x % TILE ~= 0 or y % TILE ~= 0 then
    return refuse(string.format('each must be a multiple of the local size %d: round the columns and the rows up', TILE),
      string.format('两个数都必须是局部大小 %d 的倍数：把列数和行数向上取整', TILE))
  end
  if x * y > up(m) * up(n) then
    return refuse(string.format('{%d, %d} work-items cover the %d x %d result: whole groups have nothing to do', up(n), up(m), m, n),
      string.format('{%d, %d} 个工作项就能盖住 %d x %d 的结果：多出的整组无事可做', up(n), up(m), m, n))
  end
  return true, x, y
end

local function matmul_check(env)
  local sok, src = need_source(env, 'matmul_src')
  if not sok then return false, src end
  local fok, f = lesson.need(env, 'matmul_global')
  if not fok then return false, f end
  local sizes = {}
  for _, case in ipairs(MM_CASES) do
    local m, n = case[1], case[3]
    local r = table.pack(lesson.try(f, m, n))
    if not r[1] then return false, r[2] end
    local gok, x, y = mm_geometry(m, n, r[2])
    if not gok then return false, x end
    sizes[m .. ':' .. n] = { x, y }
  end
  if not opencl_here() then return false, no_opencl() end
  local rnd = lesson.lcg(2323)
  local whole_right = false
  for _, case in ipairs(MM_CASES) do
    local m, k, n = case[1], case[2], case[3]
    local x, y = sizes[m .. ':' .. n][1], sizes[m .. ':' .. n][2]
    -- small integers: every sum is exact in float32
    local av, bv = {}, {}
    for i = 1, m * k do av[i] = math.floor(rnd() * 7) - 3 end
    for i = 1, k * n do bv[i] = math.floor(rnd() * 7) - 3 end
    local pad = TILE * (k + n + 2) + 64
    local A, B, C = padded(av, pad, NAN), padded(bv, pad, NAN), padded({}, m * n + pad, SENTINEL)
    local where = say(string.format('%d x %d times %d x %d (global {%d, %d}, local {%d, %d}): ', m, k, k, n, x, y, TILE, TILE),
      string.format('%d x %d 乘 %d x %d（全局 {%d, %d}，局部 {%d, %d}）：', m, k, k, n, x, y, TILE, TILE))
    local rok, info = run_cl(src, { global = { x, y }, ['local'] = { TILE, TILE }, args = { A, B, C, m, k, n } })
    if not rok then return false, say(where.en .. info.en, where.zh .. info.zh) end
    local want = lm.tensor(av, { dtype = 'float32' }):reshape(m, k):matmul(lm.tensor(bv, { dtype = 'float32' }):reshape(k, n))
    local wl = want:reshape(m * n):tolist()
    local got = C:tolist()
    local zeros = true
    for i = 1, m * n do if got[i] ~= 0 then zeros = false break end end
    for i = 1, m * n do
      if got[i] ~= wl[i] then
        local row, col = (i - 1) // n, (i - 1) % n
        local why
        if got[i] ~= got[i] then
          why = say('it is nan: your kernel read past the end of A or B (the check puts NaN there; load 0.0f for the parts of a tile outside the matrices), or sum did not start at 0.0f',
            '它是 nan：你的内核读过了 A 或 B 的末尾（检查在那里放了 NaN；瓦片中落在矩阵之外的部分要装入 0.0f），或者 sum 没有从 0.0f 开始')
        elseif got[i] == SENTINEL and x == up(m) and y == up(n) and m ~= n then
          why = say('nothing wrote it: x counts columns (get_global_id(0) is col), y rows: {x, y} = {columns, rows} rounded up',
            '没有任何工作项写它：x 数的是列（get_global_id(0) 是 col），y 数的是行：{x, y} = 向上取整后的 {列数, 行数}')
        elseif got[i] == SENTINEL then
          why = say('nothing wrote it, though the global size covers it: which work-item should have? get_local_id restarts at 0 in every group; row and col come from get_global_id',
            '全局大小盖住了它，却没有工作项写它：本该由哪个工作项来写？get_local_id 在每个组里都从 0 开始；row 和 col 要用 get_global_id')
        elseif zeros and whole_right then
          why = say('right on whole tiles, and here every element is 0: does the tile loop run for a partial tile too, (k + TILE - 1) / TILE times?',
            '满瓦片时是对的，这里却每个元素都是 0：不满的瓦片也要循环一次吗？循环次数是 (k + TILE - 1) / TILE 吗？')
        elseif zeros then
          why = say('every element of C is 0: the tile loop adds nothing yet (load the tiles, wait, add their products, wait)',
            'C 的每个元素都是 0：瓦片循环还什么都没加（装入瓦片，等待，累加乘积，再等待）')
        elseif m % TILE == 0 and k % TILE == 0 and n % TILE == 0 then
          why = say('the tiles are whole here, so look at the order: does every work-item wait at barrier(CLK_LOCAL_MEM_FENCE) after the tiles are loaded and again before they are overwritten, and does sum read row ty of As and column tx of Bs?',
            '这里瓦片都是满的，所以看顺序：每个工作项在装完瓦片之后、以及在瓦片被覆盖之前，都在 barrier(CLK_LOCAL_MEM_FENCE) 等了吗？sum 读的是 As 的第 ty 行和 Bs 的第 tx 列吗？')
        elseif whole_right then
          why = say('right on whole tiles, wrong on partial ones: does the tile loop run (k + TILE - 1) / TILE times, and do the loads put 0.0f outside the matrices (row < m, t*TILE + tx < k; t*TILE + ty < k, col < n)?',
            '满瓦片时对，不满时错：瓦片循环跑了 (k + TILE - 1) / TILE 次吗？装入时落在矩阵外的部分是 0.0f 吗（row < m, t*TILE + tx < k；t*TILE + ty < k, col < n）？')
        else
          why = say('is row get_global_id(1) and col get_global_id(0) (get_local_id restarts in every group)?', 'row 是 get_global_id(1)、col 是 get_global_id(0) 吗（get_local_id 在每个组里都从头数）？')
        end
        return false, say(string.format('%sC[%d][%d] is %s, expected %s: %s', where.en, row, col, lesson.show(got[i]), lesson.show(wl[i]), why.en),
          string.format('%sC[%d][%d] 是 %s，应为 %s：%s', where.zh, row, col, lesson.show(got[i]), lesson.show(wl[i]), why.zh))
      end
    end
    for i = m * n + 1, #got do
      if got[i] ~= SENTINEL then
        return false, say(string.format('%sthe kernel wrote C[%d], past the end of the %d x %d result: the work-items of the last groups outside the result must not store: if (row < m && col < n)',
          where.en, i - 1, m, n), string.format('%s内核写了 C[%d]，越过了 %d x %d 结果的末尾：最后几个组里落在结果之外的工作项不能存：if (row < m && col < n)',
          where.zh, i - 1, m, n))
      end
    end
    if m % TILE == 0 and k % TILE == 0 and n % TILE == 0 then whole_right = true end
  end
  -- PoCL runs a work-group's work-items as loops between barriers, so a kernel that drops one of
  -- the two still computes the right C here; a GPU would race. Count them in the source.
  local code = src:gsub('/%*.-%*/', ''):gsub('//[^\n]*', '')
  local barriers = 0
  for _ in code:gmatch('barrier%s*%(') do barriers = barriers + 1 end
  if barriers < 2 then
    return false, say(string.format('C is right on this CPU OpenCL, but the source has %d barrier%s: a GPU runs the work-items of a group at once, and without a barrier after the loads some read tile elements not loaded yet, without one after the products some overwrite a tile others still read. PoCL hides it (it runs the work-items one after another between barriers); keep both: barrier(CLK_LOCAL_MEM_FENCE) after loading the tiles and again after adding their products',
      barriers, barriers == 1 and '' or 's'),
      string.format('在这个 CPU 上的 OpenCL 里 C 是对的，但源码里只有 %d 道屏障：GPU 上一个组的工作项同时运行，装入之后没有屏障，有的会读到还没装好的瓦片元素；累加之后没有屏障，有的会覆盖别人还在读的瓦片。PoCL 把它掩盖了（它在两道屏障之间把工作项一个接一个地跑）；两道都要留：装完瓦片后一道 barrier(CLK_LOCAL_MEM_FENCE)，累加完乘积后再一道',
      barriers))
  end
  return true, say('Right on whole and partial tiles, one element included: the tiles through __local memory, two barriers per tile, the global size in work-items. The same kernel runs on any OpenCL device.',
    '满瓦片、不满的瓦片、只有一个元素的情形都对：瓦片经过 __local 内存，每个瓦片两道屏障，全局大小按工作项数。同一个内核能在任何 OpenCL 设备上运行。')
end

-- ---------------------------------------------------------------- steps' code

local HISTORY_CODE = [===[
-- the lecture's history of accelerated computing: year, model, who and what
history = {
  {1992, 'OpenGL', 'graphics API; SGI, then Khronos'},
  {1995, 'DirectX', 'graphics API; Microsoft'},
  {2002, 'GPGPU', 'computing written as shaders'},
  {2007, 'CUDA', 'NVIDIA: C kernels for its GPUs'},
  {2008, 'OpenCL', 'Khronos: kernels for any device'},
  {2012, 'OpenACC', 'directives on loops; open standard'},
  {2013, 'C++ AMP', 'Microsoft: C++ on DirectX 11'},
  {2013, 'RenderScript', 'Google: compute on Android'},
  {2014, 'Metal', 'Apple: graphics and compute'},
  {2014, 'SYCL', 'Khronos: single-source C++'},
  {2016, 'Vulkan', 'Khronos: graphics and compute'},
  {2016, 'ROCm HIP', 'AMD: CUDA-like C++, AMD and NVIDIA'},
}
print('     1992    2000    2008    2016')
for _, h in ipairs(history) do
  local axis = ('.'):rep(h[1] - 1992) .. 'o' .. ('.'):rep(2016 - h[1])
  print(string.format('%d %s %-12s %s', h[1], axis, h[2], h[3]))
end
vendors = {'NVIDIA', 'AMD', 'Intel', 'Samsung', 'Apple', 'Qualcomm', 'ARM'}
print('\nGPU vendors: ' .. table.concat(vendors, ', '))
adapted = {
  {'MPI', 'CUDA-aware MPI sends straight from GPU memory'},
  {'TBB', 'flow graphs with OpenCL nodes'},
  {'OpenCV', 'the cv::cuda module; OpenCL behind UMat'},
  {'Caffe, TensorFlow', 'layers on cuDNN; OpenCL and ROCm versions'},
}
print('frameworks that adapted:')
for _, f in ipairs(adapted) do print(string.format('  %-18s %s', f[1], f[2])) end
]===]

local VADD_CODE = [===[
-- one kernel, five models: c = a + b over n floats
vadd = {}
vadd.cuda = [==[
__global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
// host: cudaMalloc, cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice), ...
vadd<<<(n + 255) / 256, 256>>>(d_a, d_b, d_c, n);      // the grid in blocks]==]
vadd.opencl = [==[
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}]==]
vadd.opencl_host = [==[
// host: clCreateBuffer, clEnqueueWriteBuffer, clSetKernelArg (4 times), then
size_t local = 256, global = (n + 255) / 256 * 256;    // work-items, not groups
clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);]==]
vadd.openacc = [==[
void vadd(const float *restrict a, const float *restrict b, float *restrict c,
          int n) {
  #pragma acc parallel loop copyin(a[0:n], b[0:n]) copyout(c[0:n])
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
// no kernel, no launch: the compiler makes both from the loop (nvc -acc,
// gcc -fopenacc), and the clauses say what to copy]==]
vadd.sycl = [==[
sycl::queue q;                                   // a device the runtime picks
float *a = sycl::malloc_device<float>(n, q);     // b and c too; q.memcpy(a, ...)
size_t local = 256, global = (n + 255) / 256 * 256;
q.parallel_for(sycl::nd_range<1>(global, local), [=](sycl::nd_item<1> it) {
  int i = it.get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}).wait();]==]
vadd.hip = [==[
__global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
// host: hipMalloc, hipMemcpy(d_a, a, bytes, hipMemcpyHostToDevice), ...
vadd<<<(n + 255) / 256, 256>>>(d_a, d_b, d_c, n);      // hipcc compiles it]==]
for _, v in ipairs({
  {'CUDA (NVIDIA, 2007), nvcc', vadd.cuda},
  {'OpenCL C (Khronos, 2008), compiled at run time by the driver', vadd.opencl .. '\n' .. vadd.opencl_host},
  {'OpenACC (2012), C with directives', vadd.openacc},
  {'SYCL (Khronos, 2014), C++ with a lambda as the kernel', vadd.sycl},
  {'HIP (AMD ROCm, 2016), hipcc', vadd.hip},
}) do
  print('== ' .. v[1])
  print(v[2])
end
print([[
== side by side
           the index i of a thread       a launch over n elements counts
CUDA, HIP  blockIdx.x * blockDim.x       blocks:     <<<(n + 255) / 256, 256>>>
             + threadIdx.x
OpenCL     get_global_id(0)              work-items: global (n + 255) / 256 * 256
SYCL       it.get_global_id(0)           work-items: nd_range(global, local)
OpenACC    the loop's i                  (the compiler chooses)]])
]===]

local RUN_CODE = [===[
-- OpenCL: step 2's vector add, compiled by the OpenCL driver here and run on its device
n = 1 << 20
a, b = lm.randn(n), lm.randn(n)
if lm.opencl.is_available() then
  for _, d in ipairs(lm.opencl.devices()) do
    print(string.format('OpenCL device: %s (%s; %s): %d compute units, %d KiB of local memory',
      d.name, d.platform, d.version, d.compute_units, d.local_mem // 1024))
  end
  c = lm.zeros(n)
  local info = kernels.opencl(vadd.opencl, {global = n, ['local'] = 256, args = {a, b, c, n}, repeats = 5})
  print(string.format('vadd on %s: max |c - (a + b)| = %g', info.device, (c - (a + b)):abs():max():item()))
  print(string.format('  kernel %.3f ms (OpenCL events, median of 5); compiled in %.0f ms%s', info.time_ms,
    info.compile_ms, info.cached and ' (the program came from the cache)' or ''))
else
  print('OpenCL is not available here (' .. lm.opencl.unavailable_reason() .. '): vadd.opencl is shown, not run')
end

-- OpenACC: step 2's loop with its directive, compiled by gcc -fopenacc when there is a gcc
function run_openacc(source, count)
  if not os.execute('command -v gcc >/dev/null 2>&1') then return nil, 'gcc is not installed here' end
  local base = os.tmpname()
  local f = assert(io.open(base .. '.c', 'w'))
  f:write('#include <stdio.h>\n#include <stdlib.h>\n#include <openacc.h>\n', source, string.format([[

int main(void) {
  int n = %d, bad = 0;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (int i = 0; i < n; i++) { a[i] = i; b[i] = 2.0f * i; }
  vadd(a, b, c, n);
  for (int i = 0; i < n; i++) bad += c[i] != 3.0f * i;
  printf("%%d %%d %%d\n", bad, acc_get_device_type() == acc_device_host,
         acc_get_num_devices(acc_device_not_host));
  return 0;
}
]], count))
  f:close()
  local cc = io.popen(string.format('gcc -fopenacc -O2 -o %s.out %s.c 2>&1', base, base))
  local log = cc:read('a')
  local built = cc:close()
  local out = ''
  if built then
    local limit = os.execute('command -v timeout >/dev/null 2>&1') and 'timeout 20 ' or ''
    local p = io.popen(string.format('%s%s.out 2>&1', limit, base))
    out = p:read('a')
    p:close()
  end
  os.remove(base .. '.c'); os.remove(base .. '.out'); os.remove(base)
  if not built then return nil, 'gcc -fopenacc failed: ' .. log:sub(1, 300) end
  local bad, host, devices = out:match('(%d+) (%d+) (%d+)')
  if not bad then return nil, 'the program printed: ' .. out:sub(1, 300) end
  return {bad = tonumber(bad), host = host == '1', devices = tonumber(devices)}
end
local r, why = run_openacc(vadd.openacc, n)
if r then
  print(string.format('OpenACC (gcc -fopenacc): %d of %d elements wrong; the loop ran on %s', r.bad, n,
    r.host and 'the host: the fallback, no offload device (acc_get_num_devices(acc_device_not_host) = '
      .. r.devices .. ')' or 'an offload device'))
else
  print('OpenACC: ' .. why .. '; vadd.openacc is shown, not run')
end
print('SYCL and HIP: shown, not run (the lesson compiles only OpenCL C, through the driver, and OpenACC with gcc)')
]===]

local NAMES_CODE = [===[
-- CUDA's names in OpenCL C and in BANG C (Cambricon's MLUs): fill in every ''. cudaMalloc's row
-- shows the form; BANG has no single name for blockIdx.x and gridDim.x in a UNION1 launch, so
-- those two are given (the text says why)
names = {
  ['threadIdx.x']                           = {opencl = '', bang = ''},
  ['blockIdx.x']                            = {opencl = '', bang = 'taskId / coreDim'},
  ['blockDim.x']                            = {opencl = '', bang = ''},
  ['gridDim.x']                             = {opencl = '', bang = 'taskDim / coreDim'},
  ['blockIdx.x * blockDim.x + threadIdx.x'] = {opencl = '', bang = ''},
  ['__shared__']                            = {opencl = '', bang = ''},
  ['__global__']                            = {opencl = '', bang = ''},
  ['__syncthreads()']                       = {opencl = '', bang = ''},
  ['atomicAdd']                             = {opencl = '', bang = ''},
  ['cudaMalloc']                            = {opencl = 'clCreateBuffer', bang = 'cnrtMalloc'},
  ['cudaMemcpy(HostToDevice)']              = {opencl = '', bang = ''},
  ['cudaMemcpy(DeviceToHost)']              = {opencl = '', bang = ''},
}
-- CUDA's 1-D launch <<<grid, block>>> as OpenCL's sizes: return global, local
function ndrange(grid, block)
  return grid, block
end
-- the vector add in BANG C, to read its names (simplified: the alignment that __bang_add
-- wants, the cluster's memory core and the error checks are left out)
bang_vadd = [==[
#define CHUNK 4096
__nram__ float x[CHUNK], y[CHUNK];            // this core's own scratchpad (NRAM)
__mlu_global__ void vadd(float *a, float *b, float *c, int n) {
  int per = (n + taskDim - 1) / taskDim;      // a contiguous share for each task
  int start = taskId * per;
  int end = start + per < n ? start + per : n;
  for (int s = start; s < end; s += CHUNK) {
    int len = end - s < CHUNK ? end - s : CHUNK;
    __memcpy(x, a + s, len * sizeof(float), GDRAM2NRAM);
    __memcpy(y, b + s, len * sizeof(float), GDRAM2NRAM);
    __bang_add(x, x, y, len);                 // one vector instruction, len floats
    __memcpy(c + s, x, len * sizeof(float), NRAM2GDRAM);
  }
}
// host: cnrtMalloc, cnrtMemcpy(d_a, a, bytes, CNRT_MEM_TRANS_DIR_HOST2DEV), ...
cnrtDim3_t dim = {4, 8, 1};                   // 32 tasks, in units of a cluster (4 cores)
vadd<<<dim, CNRT_FUNC_TYPE_UNION1, queue>>>(d_a, d_b, d_c, n);]==]
print(bang_vadd)
]===]

local NAMES_SOLUTION = [===[
names = {
  ['threadIdx.x']                           = {opencl = 'get_local_id(0)', bang = 'coreId'},
  ['blockIdx.x']                            = {opencl = 'get_group_id(0)', bang = 'taskId / coreDim'},
  ['blockDim.x']                            = {opencl = 'get_local_size(0)', bang = 'coreDim'},
  ['gridDim.x']                             = {opencl = 'get_num_groups(0)', bang = 'taskDim / coreDim'},
  ['blockIdx.x * blockDim.x + threadIdx.x'] = {opencl = 'get_global_id(0)', bang = 'taskId'},
  ['__shared__']                            = {opencl = '__local', bang = '__mlu_shared__'},
  ['__global__']                            = {opencl = '__kernel', bang = '__mlu_global__'},
  ['__syncthreads()']                       = {opencl = 'barrier(CLK_LOCAL_MEM_FENCE)', bang = '__sync_cluster()'},
  ['atomicAdd']                             = {opencl = 'atomic_add', bang = '__bang_atomic_add'},
  ['cudaMalloc']                            = {opencl = 'clCreateBuffer', bang = 'cnrtMalloc'},
  ['cudaMemcpy(HostToDevice)']              = {opencl = 'clEnqueueWriteBuffer', bang = 'cnrtMemcpy'},
  ['cudaMemcpy(DeviceToHost)']              = {opencl = 'clEnqueueReadBuffer', bang = 'cnrtMemcpy'},
}
function ndrange(grid, block)
  return grid * block, block
end
]===]

-- The solution with one or more replacements (each must happen exactly once): a wrong answer.
local function mutate(text, ...)
  for _, pair in ipairs({ ... }) do
    local from, to = pair[1], pair[2]
    local a, b = text:find(from, 1, true)
    assert(a and not text:find(from, b + 1, true), '23-alternatives: the replacement of ' .. from .. ' is not unique')
    text = text:sub(1, a - 1) .. to .. text:sub(b + 1)
  end
  return text
end

local NAMES_WRONG = {
  -- the global and the local index swapped
  mutate(NAMES_SOLUTION, { "{opencl = 'get_local_id(0)'", "{opencl = 'GLOBAL'" },
    { "{opencl = 'get_global_id(0)'", "{opencl = 'get_local_id(0)'" }, { 'GLOBAL', 'get_global_id(0)' }),
  -- the launch: the global size given in groups
  mutate(NAMES_SOLUTION, { 'return grid * block, block', 'return grid, block' }),
  -- the barrier that orders global memory only
  mutate(NAMES_SOLUTION, { 'CLK_LOCAL_MEM_FENCE', 'CLK_GLOBAL_MEM_FENCE' }),
  -- OpenCL's __global (an address space) for CUDA's __global__ (a kernel)
  mutate(NAMES_SOLUTION, { "opencl = '__kernel'", "opencl = '__global'" }),
  -- the number of work-items for the number of groups
  mutate(NAMES_SOLUTION, { "'get_num_groups(0)'", "'get_global_size(0)'" }),
  -- read and write seen from the device
  mutate(NAMES_SOLUTION, { "'clEnqueueWriteBuffer'", "'clEnqueueReadBuffer'" }, { "opencl = 'clEnqueueReadBuffer', bang = 'cnrtMemcpy'},\n}",
    "opencl = 'clEnqueueWriteBuffer', bang = 'cnrtMemcpy'},\n}" }),
  -- BANG: taskId for the index within the group, NRAM for the group's shared memory
  mutate(NAMES_SOLUTION, { "bang = 'coreId'", "bang = 'taskId'" }),
  mutate(NAMES_SOLUTION, { "'__mlu_shared__'", "'__nram__'" }),
  mutate(NAMES_SOLUTION, { "'__sync_cluster()'", "'__sync_all()'" }),
}

local VADD_EX_CODE = [===[
LOCAL = 64                                       -- work-items per group (CUDA's block)
vadd_src = [==[
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, int n) {
  /* c[i] = a[i] + b[i]: one element for each work-item */
}
]==]
-- the global size for n elements in groups of local_size work-items
function vadd_global(n, local_size)
  return (n + local_size - 1) // local_size      -- as CUDA counts its grid: blocks
end
function run_vadd(a, b)                          -- a, b: float32 tensors of n elements
  local n = a:numel()
  local c = lm.zeros(n)
  local info = kernels.opencl(vadd_src, {global = vadd_global(n, LOCAL), ['local'] = LOCAL,
    args = {a, b, c, n}})
  return c, info
end
-- the same kernel in Lua on Lumen's emulator, launched as CUDA launches it: blocks of threads
function vadd_emu(t, a, b, c, n)
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if i < n then c[i] = a[i] + b[i] end
end
local n = 1000
local a, b = lm.randn(n), lm.randn(n)
local c_emu = lm.zeros(n)
local emu = kernels.launch(vadd_emu, {grid = (n + LOCAL - 1) // LOCAL, block = LOCAL, args = {a, b, c_emu, n}})
print(string.format('emulator: <<<%d, %d>>> for n = %d: max |c - (a + b)| = %g (%s)', (n + LOCAL - 1) // LOCAL,
  LOCAL, n, (c_emu - (a + b)):abs():max():item(), emu.provenance))
if lm.opencl.is_available() then
  local ok, c, info = pcall(run_vadd, a, b)
  if ok then
    print(string.format('OpenCL: global %d, local %d on %s: max |c - (a + b)| = %g, max |c - emulator| = %g',
      vadd_global(n, LOCAL), LOCAL, info.device, (c - (a + b)):abs():max():item(), (c - c_emu):abs():max():item()))
  else
    print('OpenCL: ' .. tostring(c))
  end
else
  print('OpenCL is not available here (' .. lm.opencl.unavailable_reason() .. '): only the emulator ran')
end
]===]

local VADD_KERNEL = [==[
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
]==]

local VADD_SOLUTION = 'vadd_src = [==[\n' .. VADD_KERNEL .. [===[]==]
function vadd_global(n, local_size)
  return (n + local_size - 1) // local_size * local_size
end
]===]

local VADD_WRONG = {
  -- no guard: the rounded-up global size writes past n
  mutate(VADD_SOLUTION, { 'if (i < n) c[i]', 'c[i]' }),
  -- the index within the group for the index in the NDRange
  mutate(VADD_SOLUTION, { 'get_global_id(0)', 'get_local_id(0)' }),
  -- the global size in groups, as CUDA's grid
  mutate(VADD_SOLUTION, { ' // local_size * local_size', ' // local_size' }),
  -- the guard one too far
  mutate(VADD_SOLUTION, { 'i < n', 'i <= n' }),
  -- the global size not rounded up
  mutate(VADD_SOLUTION, { 'return (n + local_size - 1) // local_size * local_size', 'return n' }),
}

local MATMUL_SOURCES_CODE = [===[
-- tiled matrix multiplication C (m x n) = A (m x k) B (k x n), tiles of 16 x 16
matmul_sources = {}
matmul_sources.cuda = [==[
#define TILE 16
__global__ void matmul(const float *A, const float *B, float *C,
                       int m, int k, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
    int ka = t * TILE + tx, kb = t * TILE + ty;
    As[ty][tx] = row < m && ka < k ? A[row * k + ka] : 0.0f;
    Bs[ty][tx] = kb < k && col < n ? B[kb * n + col] : 0.0f;
    __syncthreads();                           // the tiles are loaded
    for (int j = 0; j < TILE; j++) sum += As[ty][j] * Bs[j][tx];
    __syncthreads();                           // everyone is done with them
  }
  if (row < m && col < n) C[row * n + col] = sum;
}
// host: dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
matmul<<<grid, block>>>(d_A, d_B, d_C, m, k, n);]==]
matmul_sources.hip = [==[
// the CUDA kernel above, unchanged: hipcc takes __shared__, __syncthreads() and
// threadIdx; hipify-perl renames the host's calls: cudaMalloc -> hipMalloc,
// cudaMemcpy -> hipMemcpy, and the launch stays matmul<<<grid, block>>>(...)]==]
matmul_sources.openacc = [==[
void matmul(const float *restrict A, const float *restrict B,
            float *restrict C, int m, int k, int n) {
  #pragma acc parallel loop tile(16, 16) copyin(A[0:m*k], B[0:k*n]) \
                                         copyout(C[0:m*n])
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float sum = 0.0f;
      #pragma acc loop seq
      for (int t = 0; t < k; t++) sum += A[i * k + t] * B[t * n + j];
      C[i * n + j] = sum;
    }
}
// tile(16, 16) cuts the i and j loops into 16 x 16 tiles; no shared memory and
// no barrier in the source: staging the tiles is the compiler's choice]==]
matmul_sources.sycl = [==[
q.submit([&](sycl::handler &h) {
  sycl::range<2> tile(TILE, TILE);
  sycl::local_accessor<float, 2> As(tile, h), Bs(tile, h);
  sycl::range<2> global((m + TILE - 1) / TILE * TILE,    // rows, then columns:
                        (n + TILE - 1) / TILE * TILE);   // the last varies fastest
  h.parallel_for(sycl::nd_range<2>(global, tile), [=](sycl::nd_item<2> it) {
    int ty = it.get_local_id(0), tx = it.get_local_id(1);
    int row = it.get_global_id(0), col = it.get_global_id(1);
    float sum = 0.0f;
    for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
      int ka = t * TILE + tx, kb = t * TILE + ty;
      As[ty][tx] = row < m && ka < k ? A[row * k + ka] : 0.0f;
      Bs[ty][tx] = kb < k && col < n ? B[kb * n + col] : 0.0f;
      sycl::group_barrier(it.get_group());
      for (int j = 0; j < TILE; j++) sum += As[ty][j] * Bs[j][tx];
      sycl::group_barrier(it.get_group());
    }
    if (row < m && col < n) C[row * n + col] = sum;
  });
}).wait();]==]
for _, v in ipairs({
  {'CUDA', matmul_sources.cuda}, {'HIP', matmul_sources.hip},
  {'OpenACC', matmul_sources.openacc}, {'SYCL 2020', matmul_sources.sycl},
}) do
  print('== ' .. v[1])
  print(v[2])
end
print('== OpenCL C: yours, in the next step')
-- the emulator runs the same tiled kernel (its body is the CUDA one) and counts its work
A, B = lm.randn(40, 100), lm.randn(100, 23)
C_emu, emu_info = kernels.matmul(A, B, {backend = 'emu', algo = 'tiled', tile = 16})
local _, naive = kernels.matmul(A, B, {backend = 'emu', algo = 'naive'})
print(string.format('\nemulator, 40 x 100 times 100 x 23 (%s):', emu_info.provenance))
print(string.format('  tiled: %d global loads, %d barriers; naive: %d global loads',
  emu_info.counters.global_loads, emu_info.counters.barriers, naive.counters.global_loads))
]===]

local MATMUL_EX_CODE = [===[
TILE = 16
matmul_src = [==[
#define TILE 16
__kernel void matmul(__global const float *A, __global const float *B,
                     __global float *C, int m, int k, int n) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float sum = 0.0f;
  for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
    /* load one element of A's tile and one of B's (0.0f outside the matrices),
       wait for the group, add this tile's products to sum, wait again */
  }
  if (row < m && col < n) C[row * n + col] = sum;
}
]==]
-- the global size {x, y} for an m x n result: x counts columns, y rows
function matmul_global(m, n)
  return {(n + TILE - 1) // TILE, (m + TILE - 1) // TILE}   -- as CUDA's grid: blocks
end
function run_matmul(A, B)                        -- A: m x k, B: k x n, float32
  local m, k, n = A:size(1), A:size(2), B:size(2)
  local C = lm.zeros(m, n)
  local info = kernels.opencl(matmul_src, {global = matmul_global(m, n), ['local'] = {TILE, TILE},
    args = {A, B, C, m, k, n}})
  return C, info
end
A, B = lm.randn(40, 100), lm.randn(100, 23)
C_emu, emu_info = kernels.matmul(A, B, {backend = 'emu', algo = 'tiled', tile = TILE})
print(string.format('emulator (tiled, %s): max |C - A:matmul(B)| = %.2g', emu_info.provenance,
  (C_emu - A:matmul(B)):abs():max():item()))
if lm.opencl.is_available() then
  local ok, C, info = pcall(run_matmul, A, B)
  if ok then
    print(string.format('your kernel on %s: max |C - A:matmul(B)| = %.2g, max |C - emulator| = %.2g',
      info.device, (C - A:matmul(B)):abs():max():item(), (C - C_emu):abs():max():item()))
  else
    print('your kernel: ' .. tostring(C))
  end
else
  print('OpenCL is not available here (' .. lm.opencl.unavailable_reason() .. '): only the emulator ran')
end
]===]

local MATMUL_KERNEL = [==[
#define TILE 16
__kernel void matmul(__global const float *A, __global const float *B,
                     __global float *C, int m, int k, int n) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float sum = 0.0f;
  for (int t = 0; t < (k + TILE - 1) / TILE; t++) {
    int ka = t * TILE + tx, kb = t * TILE + ty;
    As[ty][tx] = row < m && ka < k ? A[row * k + ka] : 0.0f;
    Bs[ty][tx] = kb < k && col < n ? B[kb * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < TILE; j++) sum += As[ty][j] * Bs[j][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < m && col < n) C[row * n + col] = sum;
}
]==]

local MATMUL_SOLUTION = 'matmul_src = [==[\n' .. MATMUL_KERNEL .. [===[]==]
function matmul_global(m, n)
  return {(n + TILE - 1) // TILE * TILE, (m + TILE - 1) // TILE * TILE}
end
]===]

local MATMUL_WRONG = {
  -- no barrier at all: a work-item reads tile elements the others have not loaded yet
  mutate(MATMUL_SOLUTION, { '    barrier(CLK_LOCAL_MEM_FENCE);\n    for', '    for' },
    { '    barrier(CLK_LOCAL_MEM_FENCE);\n  }', '  }' }),
  -- the barrier after the loads dropped (PoCL computes C right anyway: the check counts them)
  mutate(MATMUL_SOLUTION, { '    barrier(CLK_LOCAL_MEM_FENCE);\n    for', '    for' }),
  -- the barrier before the tiles are overwritten dropped
  mutate(MATMUL_SOLUTION, { '    barrier(CLK_LOCAL_MEM_FENCE);\n  }', '  }' }),
  -- the global size in groups
  mutate(MATMUL_SOLUTION, { 'return {(n + TILE - 1) // TILE * TILE, (m + TILE - 1) // TILE * TILE}',
    'return {(n + TILE - 1) // TILE, (m + TILE - 1) // TILE}' }),
  -- the loads without their guards
  mutate(MATMUL_SOLUTION, { 'row < m && ka < k ? A[row * k + ka] : 0.0f', 'A[row * k + ka]' },
    { 'kb < k && col < n ? B[kb * n + col] : 0.0f', 'B[kb * n + col]' }),
  -- the store without its guard
  mutate(MATMUL_SOLUTION, { 'if (row < m && col < n) C[', 'C[' }),
  -- the partial last tile forgotten
  mutate(MATMUL_SOLUTION, { 't < (k + TILE - 1) / TILE', 't < k / TILE' }),
  -- the indices within the group for the indices in the NDRange
  mutate(MATMUL_SOLUTION, { 'int col = get_global_id(0), row = get_global_id(1);', 'int col = get_local_id(0), row = get_local_id(1);' }),
  -- x and y swapped in the launch
  mutate(MATMUL_SOLUTION, { 'return {(n + TILE - 1) // TILE * TILE, (m + TILE - 1) // TILE * TILE}',
    'return {(m + TILE - 1) // TILE * TILE, (n + TILE - 1) // TILE * TILE}' }),
}

local MEASURE_CODE = [===[
-- the same C = A B measured where it runs here; every number says where it came from
local N = lm.build_info().sanitize and 64 or 256       -- smaller under a sanitizer build
local A, B = lm.randn(N, N), lm.randn(N, N)
local flops = 2 * N * N * N
local function row(what, ms, source)
  print(string.format('  %-32s %8.3f ms %7.2f GFLOP/s  %s', what, ms, flops / ms / 1e6, source))
end
print(string.format('C = A B, %d x %d float32; CPU: %s', N, N, lm.build_info().blas))
if lm.opencl.is_available() then
  print('OpenCL device: ' .. lm.opencl.devices()[1].name)
  for _, algo in ipairs({'naive', 'tiled'}) do
    local _, info = kernels.matmul(A, B, {backend = 'opencl', algo = algo, repeats = 5})
    row('OpenCL, Lumen\'s ' .. algo .. ' kernel', info.counters.time_ms, info.provenance .. ', median of 5')
  end
  local C = lm.zeros(N, N)
  local ok, info = pcall(kernels.opencl, matmul_src, {global = matmul_global(N, N),
    ['local'] = {TILE, TILE}, args = {A, B, C, N, N, N}, repeats = 5})
  if ok and (C - A:matmul(B)):abs():max():item() < 1e-3 * N then
    row('OpenCL, your matmul_src', info.time_ms, info.provenance .. ', median of 5')
  else
    print('  (your matmul_src is not right yet: step 7 first, then it is timed here too)')
  end
else
  print('  OpenCL is not available here (' .. lm.opencl.unavailable_reason() .. '): no OpenCL rows')
end
local _, cpu = kernels.matmul(A, B, {backend = 'cpu', algo = 'tiled', repeats = 5})
row('CPU, Lumen\'s tiled C kernel', cpu.counters.time_ms, cpu.provenance .. ', median of 5')
local _ = A:matmul(B)                                   -- once untimed: the library loads
local times = {}
for r = 1, 5 do
  local t0 = lm.sys.clock()
  local _ = A:matmul(B)
  times[r] = (lm.sys.clock() - t0) * 1e3
end
table.sort(times)
row('CPU, A:matmul(B)', times[3], 'CPU, measured: median of 5 lm.sys.clock() spans')
local M = 64
local _, emu = kernels.matmul(lm.randn(M, M), lm.randn(M, M), {backend = 'emu', algo = 'tiled'})
print(string.format('  emulator, tiled, %d x %d: %d modelled cycles (%s: a count, not a time here)',
  M, M, emu.counters.modelled_cycles, emu.provenance))
]===]

local ECOSYSTEM_CODE = [===[
-- who stands behind each model, and where it runs (as of 2024)
models = {
  {'CUDA', 'NVIDIA', 'NVIDIA GPUs'},
  {'HIP', 'AMD', 'AMD GPUs; NVIDIA GPUs through CUDA'},
  {'OpenCL', 'Khronos', 'NVIDIA, AMD, Intel, Arm, Qualcomm GPUs; CPUs'},
  {'SYCL', 'Khronos', 'Intel (oneAPI); NVIDIA, AMD, CPUs via DPC++, AdaptiveCpp'},
  {'OpenACC', 'OpenACC.org', 'NVIDIA (nvc); AMD (gcc, Cray); the host'},
  {'Metal', 'Apple', 'Apple GPUs'},
  {'Vulkan', 'Khronos', 'NVIDIA, AMD, Intel, Arm, Qualcomm; Apple via MoltenVK'},
  {'BANG C', 'Cambricon', 'Cambricon MLUs'},
}
for _, m in ipairs(models) do print(string.format('%-8s %-12s %s', m[1], m[2], m[3])) end
-- the vendors' stacks: what the GPU companies now write for you
stacks = {
  {'NVIDIA', 'CUDA, OpenACC', 'cuBLAS, cuDNN, cuFFT, NCCL, TensorRT'},
  {'AMD', 'HIP (hipify), OpenMP', 'rocBLAS, MIOpen, rocFFT, RCCL'},
  {'Intel', 'SYCL (DPC++), OpenMP', 'oneMKL, oneDNN, oneCCL'},
  {'Cambricon', 'BANG C', 'CNNL, CNCL'},
}
print()
for _, s in ipairs(stacks) do print(string.format('%-10s %-22s %s', s[1], s[2], s[3])) end
print('and on top of all of them: PyTorch, TensorFlow, ... (and Lumen)')
]===]

return {
  title = say("CUDA's alternatives: OpenCL, OpenACC, SYCL, HIP, BANG C", 'CUDA 的替代者：OpenCL、OpenACC、SYCL、HIP、BANG C'),
  course = 'ece408',
  lecture = say("ECE408 Lecture 23: CUDA's alternatives", 'ECE408 第 23 讲：CUDA 的替代者'),
  summary = say([[Where CUDA stands among the ways of programming accelerators: the history, one
kernel in five models, CUDA's names in OpenCL C and BANG C, your own OpenCL vector add and tiled
matmul run on a real OpenCL device, and what portability does and does not promise, measured.]],
    [[CUDA 在加速器编程方式中的位置：发展历史，同一个内核的五种写法，CUDA 的名字在 OpenCL C 和
BANG C 里叫什么，你自己写的 OpenCL 向量加法和分块矩阵乘法在真实的 OpenCL 设备上运行，以及可移植性
保证什么、不保证什么（用测量来回答）。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Accelerated computing is no longer a problem', '加速计算已不再是难题'),
      text = say([[
GPUs now come from NVIDIA, AMD, Intel, Samsung, Apple, Qualcomm and ARM, and CUDA is only one
model of programming them. The lecture's history: graphics APIs came first (OpenGL 1992,
DirectX 1995); around 2002 GPGPU wrote general computations as graphics shaders, arrays stored
as textures and results drawn as pixels; CUDA (2007) made the GPU programmable in C with
kernels, threads and blocks; then came the alternatives: OpenCL (2008), OpenACC (2012), C++ AMP
and RenderScript (2013), Metal and SYCL (2014), Vulkan and ROCm HIP (2016). Existing frameworks
adapted (MPI, TBB, OpenCV), and the deep-learning frameworks (Caffe, TensorFlow, ...) were built
on these models.

Look at who stands behind each model: one vendor (CUDA, C++ AMP, RenderScript, Metal, HIP) or a
standard that many vendors implement (OpenCL, SYCL and Vulkan from Khronos, OpenACC from its own
organisation). That decides where a program can run.]],
        [[
如今 GPU 的供应商有 NVIDIA、AMD、Intel、Samsung、Apple、Qualcomm 和 ARM，CUDA 只是给它们编程的
一种模型。课上讲的历史：先有图形 API（OpenGL 1992，DirectX 1995）；2002 年前后的 GPGPU 把通用计算
写成图形着色器，数组存成纹理，结果画成像素；CUDA（2007）让人可以用 C 语言、以内核、线程和块的
方式给 GPU 编程；随后各种替代者出现：OpenCL（2008）、OpenACC（2012）、C++ AMP 和
RenderScript（2013）、Metal 和 SYCL（2014）、Vulkan 和 ROCm HIP（2016）。已有的框架纷纷适配
（MPI、TBB、OpenCV），深度学习框架（Caffe、TensorFlow……）也建立在这些模型之上。

留意每个模型背后是谁：一家厂商（CUDA、C++ AMP、RenderScript、Metal、HIP），还是许多厂商共同
实现的标准（Khronos 的 OpenCL、SYCL、Vulkan，以及有自己组织的 OpenACC）。这决定了程序能在哪里
运行。]]),
      code = HISTORY_CODE,
      expect = [[
     1992    2000    2008    2016
1992 o........................ OpenGL       graphics API; SGI, then Khronos
1995 ...o..................... DirectX      graphics API; Microsoft
2002 ..........o.............. GPGPU        computing written as shaders
2007 ...............o......... CUDA         NVIDIA: C kernels for its GPUs
2008 ................o........ OpenCL       Khronos: kernels for any device
2012 ....................o.... OpenACC      directives on loops; open standard
2013 .....................o... C++ AMP      Microsoft: C++ on DirectX 11
2013 .....................o... RenderScript Google: compute on Android
2014 ......................o.. Metal        Apple: graphics and compute
2014 ......................o.. SYCL         Khronos: single-source C++
2016 ........................o Vulkan       Khronos: graphics and compute
2016 ........................o ROCm HIP     AMD: CUDA-like C++, AMD and NVIDIA

GPU vendors: NVIDIA, AMD, Intel, Samsung, Apple, Qualcomm, ARM
frameworks that adapted:
  MPI                CUDA-aware MPI sends straight from GPU memory
  TBB                flow graphs with OpenCL nodes
  OpenCV             the cv::cuda module; OpenCL behind UMat
  Caffe, TensorFlow  layers on cuDNN; OpenCL and ROCm versions
]],
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('One kernel in five models: vector add', '同一个内核的五种写法：向量加法'),
      text = say([[
The vector add c = a + b, the "hello world" of the course, in five models. Read them for what
stays the same: in CUDA, HIP, OpenCL and SYCL a kernel is the body of the loop, run once per
thread (a work-item), which computes its own index i and checks that i < n. HIP is CUDA with the
host's cuda* calls renamed hip*. OpenCL C is compiled at run time by the device's driver, from a
string; the host sets each argument and enqueues the kernel on a queue. SYCL puts the kernel in
a C++ lambda, in the same source as the host code. OpenACC keeps the sequential loop and adds a
directive: the compiler makes the kernel, the launch and the copies (the clauses copyin and
copyout say what to copy).

The launches differ in one way that bites: CUDA's grid counts blocks, OpenCL's and SYCL's global
size counts work-items. The table at the end sets them side by side.]],
        [[
课程里的“hello world”——向量加法 c = a + b，用五种模型来写。读的时候看看什么没变：在 CUDA、HIP、
OpenCL 和 SYCL 里，内核都是循环体，每个线程（工作项）运行一次，算出自己的下标 i 并检查 i < n。
HIP 就是 CUDA，只是主机端的 cuda* 调用改名成了 hip*。OpenCL C 在运行时由设备驱动从一个字符串
编译；主机逐个设置参数，再把内核放进命令队列。SYCL 把内核写成 C++ 的 lambda，和主机代码在同一个
源文件里。OpenACC 保留顺序循环，只加一条指令：内核、启动和数据复制都由编译器生成（copyin、
copyout 子句说明要复制什么）。

启动方式有一处差别很容易出错：CUDA 的 grid 数的是块，OpenCL 和 SYCL 的全局大小数的是工作项。
最后的表把它们并排列出。]]),
      code = VADD_CODE,
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('What runs here: OpenCL on PoCL, OpenACC with gcc', '在这里能跑的：PoCL 上的 OpenCL，gcc 编译的 OpenACC'),
      text = say([[
Two of the five run on this machine without a GPU. OpenCL is a standard API, so a CPU can be an
OpenCL device: PoCL (Portable Computing Language) compiles OpenCL C with LLVM for the CPU, and
Lumen's kernels.opencl(source, {global =, local =, args =}) runs a kernel on it: it builds the
program (compile_ms; a program built before comes from the cache), copies the tensors in, runs,
copies back every tensor whose parameter is not const, and times the kernel with OpenCL events
(time_ms). GCC understands OpenACC (-fopenacc); with no offload compiler or GPU it runs the loop
on the host, the fallback the standard allows, and the program can ask where it ran.

The code runs step 2's OpenCL vector add on the OpenCL device, and step 2's OpenACC function
with gcc when there is one, and says what ran where. It launches 2^20 work-items in groups of 256,
a multiple: step 5 takes any n.]],
        [[
五种写法里有两种在这台没有 GPU 的机器上就能跑。OpenCL 是标准 API，所以 CPU 也可以是 OpenCL
设备：PoCL（Portable Computing Language）用 LLVM 把 OpenCL C 编译成 CPU 代码，Lumen 的
kernels.opencl(source, {global =, local =, args =}) 就在它上面运行内核：构建程序（compile_ms；
以前构建过的程序直接从缓存取），把张量复制进去，运行，再把参数不是 const 的张量复制回来，并用
OpenCL 事件给内核计时（time_ms）。GCC 认识 OpenACC（-fopenacc）；没有卸载编译器或 GPU 时，它在
主机上运行这个循环，这是标准允许的回退方式，程序也可以查询自己在哪里运行。

代码在 OpenCL 设备上运行第 2 步的 OpenCL 向量加法，有 gcc 时再用 gcc 编译运行第 2 步的 OpenACC
函数，并说明什么在哪里运行。它启动 2^20 个工作项，每组 256 个，正好是倍数：第 5 步要处理任意的 n。]]),
      code = RUN_CODE,
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say("CUDA's names in OpenCL C and BANG C", 'CUDA 的名字在 OpenCL C 和 BANG C 里叫什么'),
      text = say([[
The models share one abstraction: many threads, grouped; a group shares fast memory and meets
at barriers; groups do not wait for each other. Only the names differ. OpenCL says work-item for
thread, work-group for block, NDRange for grid, local memory for shared memory (and private
memory for a thread's own), and asks the built-in functions get_local_id, get_group_id,
get_local_size, get_num_groups and get_global_id for a dimension (0 is x).

Cambricon's MLUs (the processors of the AI Computing Systems course) are programmed in BANG C. A
kernel runs as tasks, one per core: taskId numbers them over the whole launch, taskDim counts
them. The launch <<<dim, type, queue>>> gives dim in tasks, like OpenCL's global size, and the
function type says how they run: BLOCK, each task alone on a core; UNION1, in units of one
cluster, whose 4 cores (coreId 0 to 3; coreDim is 4) share the cluster's SRAM and meet at
__sync_cluster(). clusterId and clusterDim number and count the clusters of one unit (x of them
in a UNIONx launch, which can all meet at __sync_all()), so with UNION1 they are 0 and 1, and a
group's number is taskId / coreDim: BANG has no single name for blockIdx.x and gridDim.x. Each
core has its own NRAM and works on whole slices with vector instructions, as the code's vector
add shows.]],
        [[
这些模型共享同一个抽象：大量线程，分成组；组内共享快速内存，在屏障处会合；组与组之间互不等待。
不同的只是名字。OpenCL 把线程叫工作项（work-item），块叫工作组（work-group），网格叫
NDRange，共享内存叫局部内存（local memory；线程自己的叫私有内存 private memory），并通过内建
函数 get_local_id、get_group_id、get_local_size、get_num_groups 和 get_global_id 按维度
（0 是 x）来查询。

寒武纪的 MLU（“智能计算系统”课程里的处理器）用 BANG C 编程。内核以任务（task）的形式运行，每个
核一个任务：taskId 是任务在整个启动中的编号，taskDim 是任务总数。启动 <<<dim, type, queue>>>
中的 dim 以任务为单位，和 OpenCL 的全局大小一样；函数类型说明任务怎样运行：BLOCK，每个任务独自
占一个核；UNION1，以一个 cluster 为单元运行，它的 4 个核（coreId 为 0 到 3；coreDim 是 4）共享
这个 cluster 的 SRAM，并在 __sync_cluster() 处会合。clusterId 和 clusterDim 是一个单元内
cluster 的编号和个数（UNIONx 启动中有 x 个，它们都可以在 __sync_all() 处会合），所以 UNION1 时
它们是 0 和 1，而一组的编号是 taskId / coreDim：BANG 没有与 blockIdx.x、gridDim.x 对应的单个
名字。每个核有自己的 NRAM，用向量指令一次处理整段数据，正如代码里的向量加法所示。]]),
      code = NAMES_CODE,
      exercise = {
        prompt = say([[
Fill in `names`: for each CUDA name, its OpenCL C name (opencl) and its BANG C name (bang), one
string each, as you would write it in a kernel (get_local_id(0), not get_local_id). Then make
`ndrange(grid, block)` return OpenCL's global and local sizes for CUDA's 1-D launch
<<<grid, block>>>.]],
          [[
填好 `names`：对每个 CUDA 名字，给出它在 OpenCL C 中的名字（opencl）和在 BANG C 中的名字
（bang），各一个字符串，写法和在内核里一样（写 get_local_id(0)，不是 get_local_id）。再让
`ndrange(grid, block)` 对 CUDA 的一维启动 <<<grid, block>>> 返回 OpenCL 的全局大小和局部大小。]]),
        hints = {
          say('The vector adds of step 2 and the BANG C source printed here name half of them; the text of this step names the rest.',
            '第 2 步的向量加法和这里打印的 BANG C 源码给出了一半的名字；其余的在这一步的正文里。'),
          say("Read and write are said from the host's side; a barrier's flag names the memory it orders; in a UNION1 launch a group is a cluster, and its cores share SRAM.",
            '读和写是从主机这边说的；屏障的标志指明它保证哪种内存的顺序；UNION1 启动中的一组就是一个 cluster，它的核共享 SRAM。'),
          say('OpenCL counts the NDRange in work-items: a grid of 37 blocks of 128 is a global size of 4736.',
            'OpenCL 的 NDRange 按工作项计数：37 个块、每块 128 个线程的网格，全局大小是 4736。'),
        },
        check = names_check,
        solution = NAMES_SOLUTION,
        wrong = NAMES_WRONG,
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Your OpenCL kernel: vector add on any n', '你的 OpenCL 内核：任意 n 的向量加法'),
      text = say([[
Now write it and run it for real. `vadd_src` below is the OpenCL C kernel with an empty body,
`vadd_global(n, local_size)` the global size for n elements, and run_vadd launches it with
kernels.opencl in groups of LOCAL = 64. The launch still counts as CUDA does, in blocks, and
OpenCL 1.2 (the OpenCL C that PoCL compiles here) wants a global size that is a multiple of the
local size: round n up, and let the work-items past n do nothing. The emulator runs the same
kernel in Lua, launched the CUDA way, <<<blocks, threads>>>, for comparison.

The check runs your kernel on n = 1, 63, 64, 65, 17, 250, 1000 and 4099 with groups of 64 and
16. It puts NaN after a and b and a marker after c, so a write past the end shows, and so does
a value read from past the end that reaches c. (On a CPU device the kernel runs inside Lumen's
own process: a write far past a buffer can end the whole session, where a GPU would report an
illegal address. The guard is not optional.)]],
        [[
现在自己来写，并真正运行。下面的 `vadd_src` 是函数体为空的 OpenCL C 内核，
`vadd_global(n, local_size)` 给出 n 个元素的全局大小，run_vadd 用 kernels.opencl 以每组
LOCAL = 64 个工作项启动它。这个启动仍然按 CUDA 的方式数块，而 OpenCL 1.2（PoCL 在这里编译的
OpenCL C 版本）要求全局大小是局部大小的倍数：把 n 向上取整，让超出 n 的工作项什么也不做。
作为对照，模拟器用 Lua 运行同一个内核，按 CUDA 的方式启动：<<<块数, 线程数>>>。

检查会在 n = 1、63、64、65、17、250、1000 和 4099 上运行你的内核，每组 64 个和 16 个各试一遍。
它在 a 和 b 的后面放 NaN，在 c 的后面放一个标记，所以越界的写会现形，越界读到的值只要进了 c
也会现形。（在 CPU 设备上，内核就在 Lumen 自己的进程里运行：写到缓冲区外很远的地方可能让整个
会话结束，而 GPU 会报告非法地址。守卫条件不是可有可无的。）]]),
      code = VADD_EX_CODE,
      exercise = {
        prompt = say([[
Write the body of the kernel in `vadd_src` (c[i] = a[i] + b[i] for the work-item's i) and make
`vadd_global(n, local_size)` return the global size: a multiple of local_size that covers n,
the smallest one.]],
          [[
写出 `vadd_src` 中内核的函数体（对工作项自己的 i 计算 c[i] = a[i] + b[i]），并让
`vadd_global(n, local_size)` 返回全局大小：覆盖 n 的、local_size 的最小倍数。]]),
        hints = {
          say('int i = get_global_id(0); then guard: the last group may have work-items past n.',
            'int i = get_global_id(0)；然后加上守卫：最后一组可能有超出 n 的工作项。'),
          say('The number of groups is (n + local_size - 1) // local_size; OpenCL wants work-items: times local_size.',
            '组数是 (n + local_size - 1) // local_size；OpenCL 要的是工作项数：再乘以 local_size。'),
        },
        check = vadd_check,
        solution = VADD_SOLUTION,
        wrong = VADD_WRONG,
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Tiled matmul in five models', '五种模型下的分块矩阵乘法'),
      text = say([[
The tiled matrix multiplication of Lectures 4-5: a group of 16 x 16 threads computes a 16 x 16
tile of C; for each tile of k it loads one element of A's tile and one of B's into shared
memory, waits at a barrier, adds the tile's 16 products, and waits again before the tiles are
overwritten. Partial tiles at the edges load 0, and only threads inside C store.

CUDA and HIP are the same kernel. SYCL writes it with a local_accessor and group_barrier, and
orders its dimensions the other way: the last one varies fastest, so a range is (rows, columns),
where OpenCL's dimension 0 (x) is the columns. OpenACC has no shared memory and no barrier to
write: the tile clause asks the compiler to tile the loops, and how it stages the tiles is its
choice (performance is then the compiler's). The OpenCL C version is yours, in the next step.

The emulator runs the tiled kernel (its body is the CUDA one) and counts its global loads against
the naive kernel's. The picture shows its tiles moving through shared memory, phase by phase:
the two barriers of the source separate these phases in every model.]],
        [[
第 4-5 讲的分块矩阵乘法：一组 16 x 16 个线程计算 C 的一个 16 x 16 瓦片；沿 k 方向每个瓦片，各线程
把 A 的瓦片和 B 的瓦片中的一个元素装进共享内存，在屏障处等待，累加这个瓦片的 16 个乘积，在瓦片
被覆盖之前再等一次。边上不满的瓦片装入 0，只有落在 C 之内的线程才存结果。

CUDA 和 HIP 是同一个内核。SYCL 用 local_accessor 和 group_barrier 来写，并且维度的顺序反过来：
最后一维变化最快，所以范围写作（行, 列），而 OpenCL 的第 0 维（x）是列。OpenACC 没有共享内存，
也不用写屏障：tile 子句请编译器对循环分块，至于瓦片怎样暂存由编译器决定（性能也就交给了
编译器）。OpenCL C 版本由你来写，在下一步。

模拟器运行分块内核（内核体就是 CUDA 那个），并把它的全局内存读取次数和朴素内核比较。画面显示
瓦片一段一段地经过共享内存：源码里的两道屏障在每种模型中都分隔出这些阶段。]]),
      code = MATMUL_SOURCES_CODE,
      scene = function(env) return env.emu_info end,
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Your tiled matmul in OpenCL C', '你的 OpenCL C 分块矩阵乘法'),
      text = say([[
Translate the CUDA kernel of step 6 into OpenCL C with the names of step 4. `matmul_src` has
the kernel's frame: the __local tiles, the indices (col from dimension 0, row from dimension 1),
the loop over the tiles of k and the guarded store; write the loop's body. `matmul_global(m, n)`
gives the global size {x, y} for an m x n result, with groups of {TILE, TILE}, and still counts
as CUDA's grid does.

run_matmul runs your kernel on a 40 x 100 times 100 x 23 product (no size is a multiple of 16)
and compares it with A:matmul(B) on the CPU and with the emulator's tiled kernel. The check runs
it on 1 x 1 x 1, whole tiles and partial tiles in every dimension, with NaN after A and B and a
marker after C (a value read from past the end shows once it reaches C; a read whose value is
thrown away does not, and is still a bug on a GPU).

One thing PoCL cannot show. It compiles a work-group into loops over its work-items that run
from barrier to barrier, and adds barriers of its own around a loop that holds one. So a kernel
that keeps only one of the two barriers (either one: we tried) still computes the right C here,
and races on a GPU. A race is undefined behaviour: one device getting it right proves nothing.
So the check, after running your kernel, also counts the barriers in its source: keep both.]],
        [[
用第 4 步的名字把第 6 步的 CUDA 内核翻译成 OpenCL C。`matmul_src` 里已经有内核的框架：__local
瓦片、下标（col 取自第 0 维，row 取自第 1 维）、沿 k 的瓦片循环和带守卫的存储；你来写循环体。
`matmul_global(m, n)` 给出 m x n 结果的全局大小 {x, y}，每组 {TILE, TILE}，它现在还是按 CUDA 的
grid 来数的。

run_matmul 在 40 x 100 乘 100 x 23 的矩阵上（没有一个尺寸是 16 的倍数）运行你的内核，并和 CPU
上的 A:matmul(B) 以及模拟器的分块内核比较。检查会在 1 x 1 x 1、满瓦片以及各维都不满的瓦片上
运行它，并在 A 和 B 的后面放 NaN，在 C 的后面放一个标记（越界读到的值一旦进了 C 就会现形；读了
又丢掉的值看不出来，但在 GPU 上它照样是错误）。

有一件事 PoCL 显示不出来。它把一个工作组编译成若干个遍历工作项的循环，每个循环从一道屏障跑到
下一道屏障，并且会在含有屏障的循环周围自己加上屏障。所以只保留两道屏障中的一道的内核（哪一道都
一样：我们试过），在这里仍然能算出正确的 C，在 GPU 上却会发生竞争。竞争是未定义行为：某个设备算对了
并不能证明什么。所以检查在运行你的内核之后，还会数一数源码里的屏障：两道都要留着。]]),
      code = MATMUL_EX_CODE,
      scene = function(env) return env.emu_info end,
      exercise = {
        prompt = say([[
Write the body of the tile loop in `matmul_src` (load the two tiles with 0.0f outside the
matrices, barrier, add the products, barrier) and make `matmul_global(m, n)` return the global
size {x, y} in work-items.]],
          [[
写出 `matmul_src` 中瓦片循环的循环体（装入两个瓦片，矩阵之外装 0.0f；屏障；累加乘积；屏障），
并让 `matmul_global(m, n)` 以工作项为单位返回全局大小 {x, y}。]]),
        hints = {
          say('int ka = t * TILE + tx, kb = t * TILE + ty; As[ty][tx] = row < m && ka < k ? A[row * k + ka] : 0.0f; and Bs[ty][tx] from B[kb * n + col].',
            'int ka = t * TILE + tx, kb = t * TILE + ty; As[ty][tx] = row < m && ka < k ? A[row * k + ka] : 0.0f; Bs[ty][tx] 取自 B[kb * n + col]。'),
          say('__syncthreads() is barrier(CLK_LOCAL_MEM_FENCE); then for (int j = 0; j < TILE; j++) sum += As[ty][j] * Bs[j][tx];',
            '__syncthreads() 就是 barrier(CLK_LOCAL_MEM_FENCE)；然后 for (int j = 0; j < TILE; j++) sum += As[ty][j] * Bs[j][tx];'),
          say('x covers the n columns, y the m rows, each rounded up to a multiple of TILE.', 'x 覆盖 n 列，y 覆盖 m 行，各自向上取整到 TILE 的倍数。'),
        },
        check = matmul_check,
        solution = MATMUL_SOLUTION,
        wrong = MATMUL_WRONG,
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Portable is not performance-portable: measured', '可移植不等于性能可移植：测出来看'),
      text = say([[
OpenCL's promise is functional portability: the kernel of step 7 runs, unchanged, on a GPU, a
CPU or an FPGA. It does not promise that it runs well. The tiling was written for a GPU, where
shared memory is a scratchpad next to the cores and global memory is far; on a CPU __local
memory is ordinary memory behind the same caches, each barrier makes the compiled code finish
every work-item's phase before the next begins, and a library tuned for the CPU's vector units
and caches is another league.

The code times the same product C = A B where it runs here: Lumen's naive and tiled OpenCL
kernels and your matmul_src on the OpenCL device (OpenCL events), Lumen's tiled C kernel and
A:matmul(B) on the CPU (measured), and the emulator's tiled kernel (modelled cycles of a model
GPU: a count, not a time on this machine). Which of naive and tiled wins on this device is a
measurement, not a rule: try it with N = 512.]],
        [[
OpenCL 承诺的是功能上的可移植：第 7 步的内核不加修改就能在 GPU、CPU 或 FPGA 上运行。它并不承诺
跑得好。分块是为 GPU 写的：在 GPU 上共享内存是紧挨着计算核心的便笺存储，全局内存很远；在 CPU
上，__local 内存就是普通内存，走的是同一套缓存，每道屏障都让编译出的代码先把所有工作项的这一段
做完再开始下一段，而为 CPU 的向量单元和缓存调优过的数学库又是另一个量级。

代码在这里能跑的地方给同一个乘法 C = A B 计时：OpenCL 设备上 Lumen 的朴素内核和分块内核以及你
的 matmul_src（OpenCL 事件计时），CPU 上 Lumen 的分块 C 内核和 A:matmul(B)（CPU 实测），以及
模拟器上的分块内核（一个模型 GPU 的模型周期：是计数，不是这台机器上的时间）。在这个设备上朴素
和分块谁更快，是测出来的，不是规律：把 N 改成 512 再试试。]]),
      code = MEASURE_CODE,
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say("The vendors' views (Lecture 26)", '厂商的视角（第 26 讲）'),
      text = say([[
Lecture 26 looks back at the GPU computing ecosystem of 2021: since 2007 the level at which
developers work has risen steadily, and more of the heavy GPU work is done by the companies that
make the GPUs. Each vendor now offers a stack: a kernel language, the libraries that hold the
hard kernels (dense and sparse linear algebra, convolutions, FFTs, collective communication), and
the frameworks on top. NVIDIA's view starts from CUDA and its libraries; AMD's starts from ROCm,
with HIP and hipify to bring CUDA code over and libraries that mirror NVIDIA's (hipBLAS for
cuBLAS, MIOpen for cuDNN, RCCL for NCCL).

What carries over between all of them is what this course taught: the bulk-synchronous model
(groups that share memory and meet at barriers, independent groups), tiling, coalescing, the
cost of moving data. The names change; the patterns do not.]],
        [[
第 26 讲回顾了 2021 年的 GPU 计算生态：自 2007 年以来，开发者工作的抽象层次一直在稳步上升，越来
越多繁重的 GPU 工作由生产 GPU 的公司来完成。如今每家厂商都提供一整套软件栈：一种内核语言，一批
装着难写内核的库（稠密和稀疏线性代数、卷积、FFT、集合通信），以及建在上面的框架。NVIDIA 的视角
从 CUDA 和它的库出发；AMD 的视角从 ROCm 出发，用 HIP 和 hipify 把 CUDA 代码搬过来，并提供与
NVIDIA 一一对应的库（hipBLAS 对 cuBLAS，MIOpen 对 cuDNN，RCCL 对 NCCL）。

在它们之间通用的，正是这门课教的东西：批量同步模型（共享内存、在屏障处会合的组，组与组相互
独立）、分块、访存合并、数据搬运的代价。名字会变，模式不变。]]),
      code = ECOSYSTEM_CODE,
      expect = [[
CUDA     NVIDIA       NVIDIA GPUs
HIP      AMD          AMD GPUs; NVIDIA GPUs through CUDA
OpenCL   Khronos      NVIDIA, AMD, Intel, Arm, Qualcomm GPUs; CPUs
SYCL     Khronos      Intel (oneAPI); NVIDIA, AMD, CPUs via DPC++, AdaptiveCpp
OpenACC  OpenACC.org  NVIDIA (nvc); AMD (gcc, Cray); the host
Metal    Apple        Apple GPUs
Vulkan   Khronos      NVIDIA, AMD, Intel, Arm, Qualcomm; Apple via MoltenVK
BANG C   Cambricon    Cambricon MLUs

NVIDIA     CUDA, OpenACC          cuBLAS, cuDNN, cuFFT, NCCL, TensorRT
AMD        HIP (hipify), OpenMP   rocBLAS, MIOpen, rocFFT, RCCL
Intel      SYCL (DPC++), OpenMP   oneMKL, oneDNN, oneCCL
Cambricon  BANG C                 CNNL, CNCL
and on top of all of them: PyTorch, TensorFlow, ... (and Lumen)
]],
    },
  },
}
