--[[
kernels.puzzles — GPU-Puzzles (Sasha Rush's set, in its order: map, zip, guards, 2-D map, broadcast,
blocks, 2-D blocks, shared memory, pooling, dot product, 1-D convolution, prefix sum, axis sum,
matmul) as Lua kernels on Lumen's SIMT emulator (kernels.launch): each puzzle fixes the grid, the
block and the shared arrays, checks a kernel on its standard input and on fresh random ones
against a reference computed on the CPU, and scores it as GPU-Puzzles does — the most global
reads and writes and shared reads and writes of one thread — plus the modelled cycles, each
against a stated target. The lesson lessons/ece408/00-puzzles.lua walks through them.

  kernels.puzzles.list()               -> {{n=, name=, title=}, ...}
  kernels.puzzles.describe(n [, lang]) -> the task, sizes, launch, targets and a skeleton
  kernels.puzzles.check(n, fn [, {lang=, trials=}]) -> ok, message, score
  kernels.puzzles.run(n, fn)           -> info, out, expected, inputs (the standard input)
  kernels.puzzles.show(n, fn [, lang]) -> info, a report of out against expected and the score
  kernels.puzzles.solution(n [, name]) -> the reference kernel's code ("name = function ..." with name)
  kernels.puzzles.wrong(n [, name])    -> a plausible mistake's code, which check refuses

Arrays are 0-based inside kernels, as in CUDA C; 2-D arrays are stored row after row (a[row * size
+ col]), and threadIdx.x runs along a row (the column), threadIdx.y down the rows. Inputs are small
integers in float32, so every sum is exact and outputs are compared exactly.
Read next: docs/student-kernels.md, src/lua/launch.c.
]]
local M = {}

local function K() return require 'kernels' end

local function lang_of(opts)
  local l = opts and opts.lang or os.getenv('LUMEN_LANG')
  if not l then
    local ok, lesson = pcall(require, 'lumen.lesson')
    if ok and type(lesson) == 'table' and type(lesson.lang) == 'function' then
      local okl, v = pcall(lesson.lang)
      if okl then l = v end
    end
  end
  return l == 'zh' and 'zh' or 'en'
end

local function say(text, lang)
  if type(text) == 'table' then return text[lang] or text.en end
  return text
end

-- ---------------------------------------------------------------- the puzzles

local P = {}

P[1] = {
  name = 'map',
  title = { en = 'Map', zh = '映射' },
  task = {
    en = 'Add 10 to every element of a and store it in out: out[i] = a[i] + 10. There is one thread per element.',
    zh = '把 a 的每个元素加 10 存进 out：out[i] = a[i] + 10。每个元素正好对应一个线程。',
  },
  params = 't, out, a',
  cases = function(r) return { { size = 4 }, { size = r(1, 32) }, { size = r(33, 100) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { block = c.size } end,
  args = function(c, out, x) return { out, x.a } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 0, 0 },
  why = { en = 'does thread i write out[i] = a[i] + 10, with i = t.threadIdx.x?',
          zh = '第 i 个线程写的是 out[i] = a[i] + 10 吗？i 应当取 t.threadIdx.x。' },
  solution = [[
function(t, out, a)
  local i = t.threadIdx.x
  out[i] = a[i] + 10
end]],
  wrong = [[
function(t, out, a)
  local i = t.threadIdx.x
  out[i] = a[i + 1] + 10 -- Lua habit: arrays in a kernel start at 0
end]],
}

P[2] = {
  name = 'zip',
  title = { en = 'Zip', zh = '逐元素相加' },
  task = {
    en = 'Add a and b element by element: out[i] = a[i] + b[i]. One thread per element.',
    zh = '把 a 和 b 逐元素相加：out[i] = a[i] + b[i]。每个元素一个线程。',
  },
  params = 't, out, a, b',
  cases = function(r) return { { size = 4 }, { size = r(1, 32) }, { size = r(33, 100) } } end,
  inputs = { a = function(c) return c.size end, b = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { block = c.size } end,
  args = function(c, out, x) return { out, x.a, x.b } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do o[i] = x.a[i] + x.b[i] end
    return o
  end,
  target = { 2, 1, 0, 0 },
  why = { en = 'does thread i read a[i] and b[i], both at its own index?',
          zh = '第 i 个线程读的是不是 a[i] 和 b[i]？两个下标都应当是它自己的 i。' },
  solution = [[
function(t, out, a, b)
  local i = t.threadIdx.x
  out[i] = a[i] + b[i]
end]],
  wrong = [[
function(t, out, a, b)
  local i = t.threadIdx.x
  out[i] = a[i] + b[0]
end]],
}

P[3] = {
  name = 'guards',
  title = { en = 'Guards', zh = '边界保护' },
  task = {
    en = 'out[i] = a[i] + 10 again, but the block has more threads (8) than a has elements: threads past the end must do nothing.',
    zh = '还是 out[i] = a[i] + 10，但线程块里的线程（8 个）比 a 的元素多：越过末尾的线程什么都不该做。',
  },
  params = 't, out, a, size',
  cases = function(r) return { { size = 4 }, { size = r(1, 8) }, { size = r(1, 7) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { block = 8 } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 0, 0 },
  why = { en = 'is every access guarded by i < size?', zh = '每一次访问都有 i < size 的保护吗？' },
  solution = [[
function(t, out, a, size)
  local i = t.threadIdx.x
  if i < size then out[i] = a[i] + 10 end
end]],
  wrong = [[
function(t, out, a, size)
  local i = t.threadIdx.x
  out[i] = a[i] + 10
end]],
}

P[4] = {
  name = 'map-2d',
  title = { en = 'Map 2-D', zh = '二维映射' },
  task = {
    en = 'a and out are size x size matrices stored row by row (a[row * size + col]); add 10 to each element. The block is 3 x 3 threads, more than the matrix: t.threadIdx.x is the column, t.threadIdx.y the row.',
    zh = 'a 和 out 是 size x size 的矩阵，按行存放（a[row * size + col]），把每个元素加 10。线程块是 3 x 3，比矩阵大：t.threadIdx.x 是列，t.threadIdx.y 是行。',
  },
  params = 't, out, a, size',
  cases = function(r) return { { size = 2 }, { size = 3 }, { size = r(1, 3) } } end,
  shapes = function(c) return { a = { c.size, c.size }, out = { c.size, c.size } } end,
  inputs = { a = function(c) return c.size * c.size end },
  out = function(c) return c.size * c.size end,
  launch = function(c) return { block = { 3, 3 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size * c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 0, 0 },
  why = { en = 'is the element of (row, col) at row * size + col, with row = t.threadIdx.y and col = t.threadIdx.x, and both guarded?',
          zh = '(row, col) 处的元素是不是 row * size + col？其中 row = t.threadIdx.y，col = t.threadIdx.x，两者都要有边界保护。' },
  solution = [[
function(t, out, a, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  if row < size and col < size then out[row * size + col] = a[row * size + col] + 10 end
end]],
  wrong = [[
function(t, out, a, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  if row < size and col < size then out[col * size + row] = a[row * size + col] + 10 end
end]],
}

P[5] = {
  name = 'broadcast',
  title = { en = 'Broadcast', zh = '广播' },
  task = {
    en = 'a is a column (size x 1) and b a row (1 x size); out (size x size) is their broadcast sum: out[row * size + col] = a[row] + b[col]. The block is 3 x 3 threads.',
    zh = 'a 是一列（size x 1），b 是一行（1 x size）；out（size x size）是二者广播相加：out[row * size + col] = a[row] + b[col]。线程块是 3 x 3。',
  },
  params = 't, out, a, b, size',
  cases = function(r) return { { size = 2 }, { size = 3 }, { size = r(1, 3) } } end,
  shapes = function(c) return { out = { c.size, c.size } } end,
  inputs = { a = function(c) return c.size end, b = function(c) return c.size end },
  out = function(c) return c.size * c.size end,
  launch = function(c) return { block = { 3, 3 } } end,
  args = function(c, out, x) return { out, x.a, x.b, c.size } end,
  spec = function(c, x)
    local o = {}
    for row = 0, c.size - 1 do
      for col = 0, c.size - 1 do o[row * c.size + col] = x.a[row] + x.b[col] end
    end
    return o
  end,
  target = { 2, 1, 0, 0 },
  why = { en = 'does the row index a and the column index b?', zh = '是用行号去索引 a、用列号去索引 b 吗？' },
  solution = [[
function(t, out, a, b, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  if row < size and col < size then out[row * size + col] = a[row] + b[col] end
end]],
  wrong = [[
function(t, out, a, b, size)
  local row, col = t.threadIdx.y, t.threadIdx.x
  if row < size and col < size then out[row * size + col] = a[col] + b[row] end
end]],
}

P[6] = {
  name = 'blocks',
  title = { en = 'Blocks', zh = '多个线程块' },
  task = {
    en = 'out[i] = a[i] + 10 with blocks of 4 threads, fewer than the elements: the grid has enough blocks to cover a, and a thread\'s element is i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x.',
    zh = '还是 out[i] = a[i] + 10，但每个线程块只有 4 个线程，比元素少：网格里有足够多的块来覆盖 a，一个线程负责的元素是 i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x。',
  },
  params = 't, out, a, size',
  cases = function(r) return { { size = 9 }, { size = r(1, 20) }, { size = r(33, 90) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { grid = (c.size + 3) // 4, block = 4 } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 0, 0 },
  why = { en = 'does the index include the block: t.blockIdx.x * t.blockDim.x + t.threadIdx.x?',
          zh = '下标里算上线程块了吗？应当是 t.blockIdx.x * t.blockDim.x + t.threadIdx.x。' },
  solution = [[
function(t, out, a, size)
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if i < size then out[i] = a[i] + 10 end
end]],
  wrong = [[
function(t, out, a, size)
  local i = t.threadIdx.x
  if i < size then out[i] = a[i] + 10 end
end]],
}

P[7] = {
  name = 'blocks-2d',
  title = { en = 'Blocks 2-D', zh = '二维线程块' },
  task = {
    en = 'The 2-D map again, on a size x size matrix bigger than one 3 x 3 block: the grid is 2-D too, and a thread\'s column is t.blockIdx.x * t.blockDim.x + t.threadIdx.x (its row likewise with y).',
    zh = '又是二维映射，但矩阵（size x size）比一个 3 x 3 的线程块大：网格也是二维的，线程的列号是 t.blockIdx.x * t.blockDim.x + t.threadIdx.x，行号同理用 y。',
  },
  params = 't, out, a, size',
  cases = function(r) return { { size = 5 }, { size = r(1, 7) }, { size = r(9, 13) } } end,
  shapes = function(c) return { a = { c.size, c.size }, out = { c.size, c.size } } end,
  inputs = { a = function(c) return c.size * c.size end },
  out = function(c) return c.size * c.size end,
  launch = function(c) return { grid = { (c.size + 2) // 3, (c.size + 2) // 3 }, block = { 3, 3 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size * c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 0, 0 },
  why = { en = 'are both the row and the column inside the matrix (row < size and col < size)?',
          zh = '行和列都在矩阵之内吗（row < size 并且 col < size）？' },
  solution = [[
function(t, out, a, size)
  local col = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local row = t.blockIdx.y * t.blockDim.y + t.threadIdx.y
  if row < size and col < size then out[row * size + col] = a[row * size + col] + 10 end
end]],
  wrong = [[
function(t, out, a, size)
  local col = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local row = t.blockIdx.y * t.blockDim.y + t.threadIdx.y
  if row < size or col < size then out[row * size + col] = a[row * size + col] + 10 end
end]],
}

P[8] = {
  name = 'shared',
  title = { en = 'Shared memory', zh = '共享内存' },
  task = {
    en = 'out[i] = a[i] + 10 through shared memory: each thread copies its element of a into t.shared.cache (4 elements, one block\'s), waits at t:sync(), and computes out[i] from the cache.',
    zh = '通过共享内存完成 out[i] = a[i] + 10：每个线程把自己那个 a 的元素拷进 t.shared.cache（4 个元素，属于本线程块），在 t:sync() 处等待，再从 cache 里算出 out[i]。',
  },
  params = 't, out, a, size',
  -- the last size is never a multiple of the block: the last block has threads past the end
  cases = function(r) return { { size = 8 }, { size = r(1, 16) }, { size = 4 * r(8, 16) + r(1, 3) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { grid = (c.size + 3) // 4, block = 4, shared = { cache = 4 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do o[i] = x.a[i] + 10 end
    return o
  end,
  target = { 1, 1, 1, 1 },
  needs_shared = true,
  -- mutants of the solution that are right answers (lumen.mutants; the lesson's test runs them)
  equivalent = {
    ['no t:sync() at line 6'] = { en = 'each thread reads back only the element it wrote itself: no other thread\'s write to wait for',
      zh = '每个线程只读回它自己写的那个元素：不需要等别的线程写' },
  },
  why = { en = 'is the load from a guarded by i < size, and does each thread use its place t.threadIdx.x in the cache?',
          zh = '从 a 读数时有 i < size 的保护吗？每个线程用的是不是自己在 cache 里的位置 t.threadIdx.x？' },
  solution = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local li = t.threadIdx.x
  if i < size then cache[li] = a[i] end
  t:sync()
  if i < size then out[i] = cache[li] + 10 end
end]],
  wrong = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local li = t.threadIdx.x
  cache[li] = a[i]
  t:sync()
  if i < size then out[i] = cache[li] + 10 end
end]],
}

P[9] = {
  name = 'pooling',
  title = { en = 'Pooling', zh = '池化' },
  task = {
    en = 'out[i] = a[i] + a[i-1] + a[i-2] (the last three elements; fewer at the start), reading a from global memory only once per thread: load it into t.shared.cache (8 elements), t:sync(), then read the neighbours from the cache.',
    zh = 'out[i] = a[i] + a[i-1] + a[i-2]（最近的三个元素，开头处不足三个就少加几个），每个线程只从全局内存读一次 a：先读进 t.shared.cache（8 个元素），t:sync()，再从 cache 里读邻居。',
  },
  params = 't, out, a, size',
  -- one case always smaller than the block: a guard i <= size must read past a (with r(1, 8) and
  -- r(3, 8) alone, all three cases were 8 one check in 48, and such a guard passed)
  cases = function(r) return { { size = 8 }, { size = r(3, 7) }, { size = r(1, 8) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { block = 8, shared = { cache = 8 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do
      o[i] = x.a[i] + (i >= 1 and x.a[i - 1] or 0) + (i >= 2 and x.a[i - 2] or 0)
    end
    return o
  end,
  target = { 1, 1, 3, 1 },
  needs_shared = true,
  why = { en = 'does every thread wait at t:sync() before it reads its neighbours\' places in the cache?',
          zh = '每个线程在读 cache 里邻居的位置之前，都在 t:sync() 处等过了吗？' },
  solution = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  if i < size then cache[i] = a[i] end
  t:sync()
  if i < size then
    local s = cache[i]
    if i >= 1 then s = s + cache[i - 1] end
    if i >= 2 then s = s + cache[i - 2] end
    out[i] = s
  end
end]],
  wrong = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  if i < size then cache[i] = a[i] end
  -- no t:sync(): a neighbour's place may not be written yet
  if i < size then
    local s = cache[i]
    if i >= 1 then s = s + cache[i - 1] end
    if i >= 2 then s = s + cache[i - 2] end
    out[i] = s
  end
end]],
}

P[10] = {
  name = 'dot',
  title = { en = 'Dot product', zh = '点积' },
  task = {
    en = 'out[0] = a[0] * b[0] + ... + a[size-1] * b[size-1], one thread per element: each thread puts its product in t.shared.cache (8 elements), the block adds them up in shared memory (a tree: log2 8 = 3 steps, or thread 0 alone), and one thread writes out[0].',
    zh = 'out[0] = a[0] * b[0] + ... + a[size-1] * b[size-1]，每个元素一个线程：每个线程把自己的乘积放进 t.shared.cache（8 个元素），整个线程块在共享内存里把它们加起来（用树形归约要 log2 8 = 3 步，也可以让 0 号线程一个人加），最后由一个线程写 out[0]。',
  },
  params = 't, out, a, b, size',
  -- every size from 1 to 8: a mutant of the tree (a bound off by one, >= for >) can hold on some
  -- sizes and fail on others, so a random pick of sizes let one through now and then
  cases = function() local c = {} for n = 8, 1, -1 do c[#c + 1] = { size = n } end return c end,
  inputs = { a = function(c) return c.size end, b = function(c) return c.size end },
  out = function(c) return 1 end,
  launch = function(c) return { block = 8, shared = { cache = 8 } } end,
  args = function(c, out, x) return { out, x.a, x.b, c.size } end,
  spec = function(c, x)
    local s = 0
    for i = 0, c.size - 1 do s = s + x.a[i] * x.b[i] end
    return { [0] = s }
  end,
  target = { 2, 1, 8, 4 },
  needs_shared = true,
  why = { en = 'does one thread alone write out[0], after a barrier that every thread reaches?',
          zh = 'out[0] 是不是只由一个线程来写？写之前，所有线程是否都到过同一道屏障？' },
  solution = [[
function(t, out, a, b, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  local v = 0
  if i < size then v = a[i] * b[i] end
  cache[i] = v
  local stride = t.blockDim.x // 2
  while stride > 0 do
    t:sync()
    if i < stride then cache[i] = cache[i] + cache[i + stride] end
    stride = stride // 2
  end
  if i == 0 then out[0] = cache[0] end
end]],
  wrong = [[
function(t, out, a, b, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  local v = 0
  if i < size then v = a[i] * b[i] end
  cache[i] = v
  local stride = t.blockDim.x // 2
  while stride > 0 do
    if i < stride then cache[i] = cache[i] + cache[i + stride] end -- no t:sync() in the loop
    stride = stride // 2
  end
  if i == 0 then out[0] = cache[0] end
end]],
}

P[11] = {
  name = 'conv1d',
  title = { en = '1-D convolution', zh = '一维卷积' },
  task = {
    en = 'out[i] = a[i] * b[0] + a[i+1] * b[1] + ... (b_size terms, skipping those past the end of a), with blocks of 8 threads. Each block stages its 8 elements of a plus the b_size - 1 after them (the halo) in t.shared.sa (12 elements) and b in t.shared.sb (4): two global reads per thread at most.',
    zh = 'out[i] = a[i] * b[0] + a[i+1] * b[1] + ...（共 b_size 项，越过 a 末尾的项跳过），每个线程块 8 个线程。每个块把自己负责的 8 个 a 元素，加上其后的 b_size - 1 个（光环，halo），放进 t.shared.sa（12 个元素），把 b 放进 t.shared.sb（4 个）：每个线程最多读两次全局内存。',
  },
  params = 't, out, a, b, a_size, b_size',
  cases = function(r)
    return { { size = 6, b_size = 3 }, { size = r(9, 15), b_size = r(2, 4) }, { size = r(1, 15), b_size = r(1, 4) },
             { size = 16 + r(0, 2), b_size = 4 }, { size = r(33, 60), b_size = r(1, 4) } }
  end,
  inputs = { a = function(c) return c.size end, b = function(c) return c.b_size end },
  out = function(c) return c.size end,
  launch = function(c) return { grid = (c.size + 7) // 8, block = 8, shared = { sa = 12, sb = 4 } } end,
  args = function(c, out, x) return { out, x.a, x.b, c.size, c.b_size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do
      local s = 0
      for j = 0, c.b_size - 1 do
        if i + j < c.size then s = s + x.a[i + j] * x.b[j] end
      end
      o[i] = s
    end
    return o
  end,
  target = { 2, 1, 8, 2 },
  needs_shared = true,
  equivalent = {
    ['<= instead of < at line 9'] = { en = 'one more halo element, past the last one a window reads: loaded, never used',
      zh = '多装入一个光环元素，它在所有窗口读到的范围之外：装了，但从来不用' },
  },
  why = { en = 'near the end of a block, do its last threads find the halo elements (past its 8) in the shared tile?',
          zh = '在线程块的末尾，最后几个线程能在共享内存的数据块里找到光环元素（本块 8 个之后的那几个）吗？' },
  solution = [[
function(t, out, a, b, a_size, b_size)
  local sa, sb = t.shared.sa, t.shared.sb
  local li = t.threadIdx.x
  local tpb = t.blockDim.x
  local i = t.blockIdx.x * tpb + li
  if i < a_size then sa[li] = a[i] end
  if li < b_size then
    sb[li] = b[li]
  elseif li - b_size < b_size - 1 and i - b_size + tpb < a_size then
    sa[tpb + li - b_size] = a[i - b_size + tpb] -- the halo, by threads that load no b
  end
  t:sync()
  if i < a_size then
    local acc = 0
    for j = 0, b_size - 1 do
      if i + j < a_size then acc = acc + sa[li + j] * sb[j] end
    end
    out[i] = acc
  end
end]],
  wrong = [[
function(t, out, a, b, a_size, b_size)
  local sb = t.shared.sb
  local li = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + li
  if li < b_size then sb[li] = b[li] end
  t:sync()
  if i < a_size then
    local acc = 0
    for j = 0, b_size - 1 do
      if i + j < a_size then acc = acc + a[i + j] * sb[j] end -- a from global memory, b_size times
    end
    out[i] = acc
  end
end]],
}

P[12] = {
  name = 'prefix-sum',
  title = { en = 'Prefix sum', zh = '前缀和' },
  task = {
    en = 'The inclusive prefix sum of each block\'s 8 elements (out[i] = a[start] + ... + a[i], start the block\'s first element), Kogge-Stone in t.shared.cache: log2 8 = 3 steps, each reading the element stride places to the left. GPU-Puzzles\' version keeps only each block\'s total; here the whole scan of the lecture.',
    zh = '对每个线程块的 8 个元素求包含式前缀和（out[i] = a[start] + ... + a[i]，start 是本块第一个元素），在 t.shared.cache 里用 Kogge-Stone 算法：共 log2 8 = 3 步，每一步读左边相隔 stride 的元素。GPU-Puzzles 原题只保留每块的总和；这里做课上讲的完整扫描。',
  },
  params = 't, out, a, size',
  -- r(9, 15): a partial last block in every check, whatever the other draws
  cases = function(r) return { { size = 8 }, { size = r(9, 15) }, { size = r(1, 20) }, { size = r(33, 70) } } end,
  inputs = { a = function(c) return c.size end },
  out = function(c) return c.size end,
  launch = function(c) return { grid = (c.size + 7) // 8, block = 8, shared = { cache = 8 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for i = 0, c.size - 1 do
      o[i] = (i % 8 == 0 and 0 or o[i - 1]) + x.a[i]
    end
    return o
  end,
  target = { 1, 1, 7, 4 },
  needs_shared = true,
  -- an exclusive scan where the inclusive one is due (each block's, from 0)
  diagnose = function(c, x, got)
    local s = 0
    for i = 0, c.size - 1 do
      if i % 8 == 0 then s = 0 end
      if got[i] ~= s then return nil end
      s = s + x.a[i]
    end
    return { en = 'that is the exclusive scan of each block: out[i] must include a[i] (add, then store)',
             zh = '这是每个块的排他扫描：out[i] 要包含 a[i]（先加，再存）' }
  end,
  equivalent = {
    ['<= instead of < at line 7'] = { en = 'one more step, with stride 8, in which no thread adds: right, only slower',
      zh = '多跑一步（步长 8），这一步没有线程做加法：结果对，只是慢一点' },
  },
  why = { en = 'between reading the left element and writing your own, does every thread wait at a t:sync()?',
          zh = '在读左边的元素和写自己的元素之间，每个线程都在 t:sync() 处等过了吗？' },
  solution = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + li
  if i < size then cache[li] = a[i] else cache[li] = 0 end -- shared memory starts undefined
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    local left = 0
    if li >= stride then left = cache[li - stride] end
    t:sync()
    if li >= stride then cache[li] = cache[li] + left end
    stride = stride * 2
  end
  if i < size then out[i] = cache[li] end
end]],
  wrong = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local i = t.blockIdx.x * t.blockDim.x + li
  if i < size then cache[li] = a[i] end
  local stride = 1
  while stride < t.blockDim.x do
    t:sync()
    if li >= stride then cache[li] = cache[li] + cache[li - stride] end -- read and write, no barrier between
    stride = stride * 2
  end
  if i < size then out[i] = cache[li] end
end]],
}

P[13] = {
  name = 'axis-sum',
  title = { en = 'Axis sum', zh = '按轴求和' },
  task = {
    en = 'a is a batch x size matrix (row by row); out[row] is the sum of row `row`. The grid has one block per row (t.blockIdx.y is the row), each of 8 threads reducing its row in t.shared.cache.',
    zh = 'a 是 batch x size 的矩阵（按行存放）；out[row] 是第 row 行的和。网格里每一行对应一个线程块（t.blockIdx.y 就是行号），每块 8 个线程在 t.shared.cache 里把这一行归约成一个数。',
  },
  params = 't, out, a, size',
  cases = function(r) return { { size = 6, batch = 4 }, { size = r(1, 8), batch = r(1, 5) }, { size = r(2, 8), batch = r(2, 5) } } end,
  shapes = function(c) return { a = { c.batch, c.size } } end,
  inputs = { a = function(c) return c.batch * c.size end },
  out = function(c) return c.batch end,
  launch = function(c) return { grid = { 1, c.batch }, block = 8, shared = { cache = 8 } } end,
  args = function(c, out, x) return { out, x.a, c.size } end,
  spec = function(c, x)
    local o = {}
    for row = 0, c.batch - 1 do
      local s = 0
      for col = 0, c.size - 1 do s = s + x.a[row * c.size + col] end
      o[row] = s
    end
    return o
  end,
  target = { 1, 1, 7, 4 },
  needs_shared = true,
  why = { en = 'is the row t.blockIdx.y (the grid is 1 x batch blocks)?', zh = '行号取的是 t.blockIdx.y 吗（网格是 1 x batch 个块）？' },
  solution = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local row = t.blockIdx.y
  local v = 0
  if li < size then v = a[row * size + li] end
  cache[li] = v
  local stride = t.blockDim.x // 2
  while stride > 0 do
    t:sync()
    if li < stride then cache[li] = cache[li] + cache[li + stride] end
    stride = stride // 2
  end
  if li == 0 then out[row] = cache[0] end
end]],
  wrong = [[
function(t, out, a, size)
  local cache = t.shared.cache
  local li = t.threadIdx.x
  local row = t.blockIdx.x
  local v = 0
  if li < size then v = a[row * size + li] end
  cache[li] = v
  local stride = t.blockDim.x // 2
  while stride > 0 do
    t:sync()
    if li < stride then cache[li] = cache[li] + cache[li + stride] end
    stride = stride // 2
  end
  if li == 0 then out[row] = cache[0] end
end]],
}

P[14] = {
  name = 'matmul',
  title = { en = 'Matrix multiply', zh = '矩阵乘法' },
  task = {
    en = 'out = a b for size x size matrices (row by row), with tiles: blocks of 3 x 3 threads, each computing a 3 x 3 tile of out; for each 3-wide strip of the shared dimension the block stages a tile of a in t.shared.a_s and one of b in t.shared.b_s (3 x 3 each; zeros past the edge), waits, adds the products, and waits again before the next tiles overwrite them.',
    zh = 'out = a b，a、b 都是 size x size 的矩阵（按行存放），用分块（tiling）来算：线程块是 3 x 3 个线程，每块算 out 的一个 3 x 3 小块；沿着公共维度每次取 3 列（行）宽的一条，块内先把 a 的一个小块放进 t.shared.a_s、b 的一个小块放进 t.shared.b_s（各 3 x 3，越界处填 0），等待，累加乘积，并在下一批小块覆盖它们之前再等一次。',
  },
  params = 't, out, a, b, size',
  cases = function(r) return { { size = 8 }, { size = r(1, 3) }, { size = 3 * r(1, 3) + 1 }, { size = r(10, 13) } } end,
  shapes = function(c) return { a = { c.size, c.size }, b = { c.size, c.size }, out = { c.size, c.size } } end,
  inputs = { a = function(c) return c.size * c.size end, b = function(c) return c.size * c.size end },
  out = function(c) return c.size * c.size end,
  launch = function(c)
    local g = (c.size + 2) // 3
    return { grid = { g, g }, block = { 3, 3 }, shared = { a_s = { rows = 3, cols = 3 }, b_s = { rows = 3, cols = 3 } } }
  end,
  args = function(c, out, x) return { out, x.a, x.b, c.size } end,
  spec = function(c, x)
    local o, n = {}, c.size
    for row = 0, n - 1 do
      for col = 0, n - 1 do
        local s = 0
        for k = 0, n - 1 do s = s + x.a[row * n + k] * x.b[k * n + col] end
        o[row * n + col] = s
      end
    end
    return o
  end,
  target = { 6, 1, 18, 6 }, -- size 8: 3 strips, each a load of a and b and 3 products' operands
  needs_shared = true,
  equivalent = {
    ['for ... = 0, (size - 1) + 1 at line 8'] = { en = 'a strip starting at size holds only the zeros past the edge: it adds nothing',
      zh = '从 size 开始的那一条只含越界补的 0：什么也不会加上' },
  },
  why = { en = "are the tiles' elements past the edge of the matrices zero, and does the block wait both before computing and before loading the next tiles?",
          zh = '小块里越过矩阵边界的元素是 0 吗？线程块在计算之前、以及在装入下一批小块之前，都等待了吗？' },
  solution = [[
function(t, out, a, b, size)
  local a_s, b_s = t.shared.a_s, t.shared.b_s
  local tpb = t.blockDim.x
  local tx, ty = t.threadIdx.x, t.threadIdx.y
  local col = t.blockIdx.x * tpb + tx
  local row = t.blockIdx.y * tpb + ty
  local acc = 0
  for k0 = 0, size - 1, tpb do
    t:sync() -- the previous tiles are no longer read
    local av, bv = 0, 0
    if row < size and k0 + tx < size then av = a[row * size + k0 + tx] end
    if col < size and k0 + ty < size then bv = b[(k0 + ty) * size + col] end
    a_s[ty * tpb + tx] = av
    b_s[ty * tpb + tx] = bv
    t:sync() -- the tiles are complete
    for k = 0, tpb - 1 do acc = acc + a_s[ty * tpb + k] * b_s[k * tpb + tx] end
  end
  if row < size and col < size then out[row * size + col] = acc end
end]],
  wrong = [[
function(t, out, a, b, size)
  local a_s, b_s = t.shared.a_s, t.shared.b_s
  local tpb = t.blockDim.x
  local tx, ty = t.threadIdx.x, t.threadIdx.y
  local col = t.blockIdx.x * tpb + tx
  local row = t.blockIdx.y * tpb + ty
  local acc = 0
  for k0 = 0, size - 1, tpb do
    local av, bv = 0, 0
    if row < size and k0 + tx < size then av = a[row * size + k0 + tx] end
    if col < size and k0 + ty < size then bv = b[(k0 + ty) * size + col] end
    a_s[ty * tpb + tx] = av -- overwrites tiles other threads may still be reading
    b_s[ty * tpb + tx] = bv
    t:sync()
    for k = 0, tpb - 1 do acc = acc + a_s[ty * tpb + k] * b_s[k * tpb + tx] end
  end
  if row < size and col < size then out[row * size + col] = acc end
end]],
}

M.count = #P
-- The puzzle's record (cases, launch, spec...), for the tests that check the checks.
function M._record(n) return P[n] end

-- ---------------------------------------------------------------- running one

local function puzzle(n, fname)
  local p = math.type(n) == 'integer' and P[n] or nil
  if not p and type(n) == 'string' then
    for i, q in ipairs(P) do if q.name == n then p, n = q, i end end
  end
  if not p then
    error(string.format('kernels.puzzles.%s: puzzle %s does not exist (1..%d or a name such as %q)',
      fname, tostring(n), #P, P[1].name), 3)
  end
  return p, n
end

-- Random integers in [lo, hi]: a generator of its own, so the user's math.random is left alone;
-- a fresh seed per check (fresh inputs), and the inputs of a failure are shown.
local seed_counter = 0
local function rng()
  seed_counter = seed_counter + 1
  local s = (os.time() * 2654435761 + seed_counter * 40503 + math.floor(os.clock() * 1e6)) % 2147483647
  if s == 0 then s = 1 end
  return function(lo, hi)
    s = (s * 48271) % 2147483647
    return lo + s % (hi - lo + 1)
  end
end

-- Inputs are 1-D tensors of p.inputs[k](c) elements, or matrices where p.shapes(c) gives
-- {rows, cols} (the kernel indexes them row after row all the same; the threads scene draws them
-- as grids).
local function make_inputs(p, c, r)
  local lists, tensors = {}, {}
  local shapes = p.shapes and p.shapes(c) or {}
  local names = {}
  for k in pairs(p.inputs) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local len, v = p.inputs[k](c), {}
    for i = 0, len - 1 do v[i] = r(0, 9) end
    local l = {}
    for i = 0, len - 1 do l[i + 1] = v[i] end
    lists[k] = v
    tensors[k] = lm.tensor(#l > 0 and l or { 0 }):float()
    if #l == 0 then tensors[k] = lm.zeros(0) end
    local shape = shapes[k]
    if shape and shape[1] * shape[2] == len then tensors[k] = tensors[k]:view(shape[1], shape[2]) end
  end
  return lists, tensors
end

-- The output tensor of case c (a matrix where the puzzle says so) and its values as a 0-based list.
local function make_out(p, c)
  local len, shape = p.out(c), p.shapes and p.shapes(c).out
  if shape and shape[1] * shape[2] == len then return lm.zeros(shape[1], shape[2]) end
  return lm.zeros(len)
end

local function out_list(out)
  local got = {}
  for i, v in ipairs(out:view(out:numel()):tolist()) do got[i - 1] = v end
  return got
end

-- One launch of fn on case c: info (or nil, the error), the output as a 0-based list, the
-- expected one, and the inputs.
local function launch(p, fn, c, r)
  local lists, x = make_inputs(p, c, r)
  local out = make_out(p, c)
  local cfg = p.launch(c)
  cfg.args = p.args(c, out, x)
  cfg.name = p.name:gsub('-', '_')
  local ok, info = pcall(K().launch, fn, cfg)
  local got = out_list(out)
  return ok and info or nil, got, p.spec(c, lists), lists, not ok and info or nil, out
end

-- GPU-Puzzles' score of a run: the most global reads, global writes, shared reads and shared
-- writes of one thread (an atomic both reads and writes), from the trace.
local function score_of(info)
  local per, best = {}, { 0, 0, 0, 0 }
  local tr = info.trace
  local threads = info.counters.block
  for k = 1, #tr do
    local e = tr[k]
    local base = e.space == 'global' and 0 or e.space == 'shared' and 2 or nil
    if base and (e.kind == 'load' or e.kind == 'store' or e.kind == 'atomic') then
      local th = e.block * threads + e.warp * 32 + e.lane
      local c = per[th]
      if not c then c = { 0, 0, 0, 0 }; per[th] = c end
      if e.kind ~= 'store' then c[base + 1] = c[base + 1] + 1 end
      if e.kind ~= 'load' then c[base + 2] = c[base + 2] + 1 end
      for j = 1, 4 do if c[j] > best[j] then best[j] = c[j] end end
    end
  end
  return {
    global_reads = best[1], global_writes = best[2], shared_reads = best[3], shared_writes = best[4],
    cycles = info.counters.modelled_cycles,
  }
end

-- "1 global read", "2 global reads"
local function times(k, word) return string.format('%d %s%s', k, word, k == 1 and '' or 's') end

local SCORE = { 'global_reads', 'global_writes', 'shared_reads', 'shared_writes' }
local SCORE_TEXT = {
  en = { 'global reads', 'global writes', 'shared reads', 'shared writes' },
  zh = { '次全局内存读', '次全局内存写', '次共享内存读', '次共享内存写' },
}

local function list_text(v, len)
  local parts = {}
  for i = 0, math.min(len, 16) - 1 do parts[#parts + 1] = tostring(math.tointeger(v[i]) or v[i]) end
  if len > 16 then parts[#parts + 1] = '...' end
  return '{' .. table.concat(parts, ', ') .. '}'
end

local function case_text(c)
  local parts = {}
  for _, k in ipairs { 'size', 'b_size', 'batch' } do
    if c[k] then parts[#parts + 1] = k .. ' = ' .. c[k] end
  end
  return table.concat(parts, ', ')
end

local function first_line(msg)
  msg = tostring(msg)
  local cut = msg:find('\nstack traceback', 1, true)
  return cut and msg:sub(1, cut - 1) or msg
end

--- Checks fn against puzzle n: the standard input and fresh random ones; then the score of the
--- standard run against the targets. Returns ok, message, score ({global_reads=, global_writes=,
--- shared_reads=, shared_writes=, cycles=, reference_cycles=}). The message is in opts.lang,
--- LUMEN_LANG or the lesson's language; with opts.text, a text {en=, zh=} (what lessons return).
function M.check(n, fn, opts)
  local p
  p, n = puzzle(n, 'check')
  if opts ~= nil and type(opts) ~= 'table' then
    error('kernels.puzzles.check: argument 3 must be an options table {lang=, text=, trials=}, got ' .. type(opts), 2)
  end
  local lang = lang_of(opts)
  local function result(ok, en, zh, sc)
    local msg = { en = en, zh = zh }
    return ok, opts and opts.text and msg or msg[lang], sc
  end
  if type(fn) ~= 'function' then
    return result(false, string.format('puzzle %d needs a kernel function(%s), got %s', n, p.params, type(fn)),
      string.format('谜题 %d 需要一个核函数 function(%s)，现在得到的是 %s。', n, p.params, type(fn)))
  end
  local r = rng()
  local cases = p.cases(r)
  local trials = opts and opts.trials or #cases
  local standard
  for k = 1, math.min(trials, #cases) do
    local c = cases[k]
    local info, got, want, lists, err = launch(p, fn, c, r)
    local inputs = {}
    local names = {}
    for name in pairs(lists) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do inputs[#inputs + 1] = name .. ' = ' .. list_text(lists[name], p.inputs[name](c)) end
    local where = case_text(c) .. (#inputs > 0 and '; ' .. table.concat(inputs, ', ') or '')
    if not info then
      return result(false, string.format('your kernel failed on %s: %s', where, first_line(err)),
        string.format('核函数在 %s 上失败了：%s', where, first_line(err)))
    end
    for i = 0, p.out(c) - 1 do
      if got[i] ~= want[i] then
        local g, w = math.tointeger(got[i]) or got[i], math.tointeger(want[i]) or want[i]
        local why = p.diagnose and p.diagnose(c, lists, got) or p.why
        return result(false, string.format('out[%d] is %s, expected %s (%s): %s', i, g, w, where, why.en),
          string.format('out[%d] 是 %s，应为 %s（%s）：%s', i, g, w, where, why.zh))
      end
    end
    if k == 1 then standard = info end
  end
  local sc = score_of(standard)
  sc.info = standard -- the student's kernel on the standard input: what a lesson draws after :check
  local ref = launch(p, M.reference(n), cases[1], r)
  sc.reference_cycles = ref and ref.counters.modelled_cycles or nil
  if p.needs_shared and sc.shared_reads + sc.shared_writes == 0 then
    return result(false, 'the output is right, but this puzzle is about shared memory: go through the arrays of t.shared.',
      '结果是对的，但这道题要用共享内存来做：数据要经过 t.shared 里的数组。', sc)
  end
  for j, key in ipairs(SCORE) do
    if sc[key] > p.target[j] then
      return result(false, string.format('the output is right, but one thread makes %s (target: at most %d)',
          times(sc[key], SCORE_TEXT.en[j]:sub(1, -2)), p.target[j]),
        string.format('结果是对的，但有一个线程做了 %d %s（目标：至多 %d 次）。', sc[key], SCORE_TEXT.zh[j], p.target[j]), sc)
    end
  end
  local ref_cycles = sc.reference_cycles
  if ref_cycles and sc.cycles > 1.5 * ref_cycles then
    return result(false, string.format('the output is right, but it takes %d modelled cycles, more than 1.5 x the '
        .. "reference solution's %d: where does it wait more (barriers, reads one after another)?", sc.cycles, ref_cycles),
      string.format('结果是对的，但要 %d 个模拟周期，超过参考解（%d）的 1.5 倍：多出来的等待（屏障、串行的读）在哪里？',
        sc.cycles, ref_cycles), sc)
  end
  local cyc_en = ref_cycles and string.format('; %d modelled cycles (the reference solution: %d)', sc.cycles, ref_cycles) or ''
  local cyc_zh = ref_cycles and string.format('；模拟周期 %d（参考解 %d）', sc.cycles, ref_cycles) or ''
  return result(true, string.format('puzzle %d (%s) solved: at most %s, %s, %s and %s per thread%s', n,
      p.title.en:lower(), times(sc.global_reads, 'global read'), times(sc.global_writes, 'global write'),
      times(sc.shared_reads, 'shared read'), times(sc.shared_writes, 'shared write'), cyc_en),
    string.format('谜题 %d（%s）通过：每个线程至多 %d 次全局读、%d 次全局写、%d 次共享读、%d 次共享写%s。',
      n, p.title.zh, sc.global_reads, sc.global_writes, sc.shared_reads, sc.shared_writes, cyc_zh), sc)
end

--- Runs fn on puzzle n's standard input (fresh random values): info (viz.show(info) draws it), the
--- output tensor, the expected values and the inputs (0-based lists by name). Raises the kernel's
--- error.
function M.run(n, fn)
  local p
  p, n = puzzle(n, 'run')
  if type(fn) ~= 'function' then
    error(string.format('kernels.puzzles.run: argument 2 must be a kernel function(%s), got %s', p.params, type(fn)), 2)
  end
  local r = rng()
  local info, _, want, inputs, err, out = launch(p, fn, p.cases(r)[1], r)
  if not info then error(err, 2) end
  return info, out, want, inputs
end

--- Runs fn on puzzle n's standard input and reports what it computed beside what it should, with
--- GPU-Puzzles' score (emulated): returns the info and the report (a text to print). When the
--- visualizer's window is open it draws the run there (the threads scene), so the picture follows
--- the kernel just shown, not an earlier one. Raises the kernel's error.
function M.show(n, fn, lang)
  local p
  p, n = puzzle(n, 'show')
  lang = lang or lang_of()
  local info, out, want, inputs = M.run(n, fn)
  local viz = package.loaded.viz
  if type(viz) == 'table' and type(viz.is_open) == 'function' and viz.is_open() then viz.show(info) end
  local c = p.cases(function(lo) return lo end)[1]
  local got = out_list(out)
  local len = p.out(c)
  local sc = score_of(info)
  local zh = lang == 'zh'
  local lines = { string.format(zh and '谜题 %d（%s），%s：' or 'puzzle %d (%s), %s:', n, say(p.title, lang), case_text(c)) }
  local names = {}
  for name in pairs(inputs) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    lines[#lines + 1] = string.format('  %-8s = %s', name, list_text(inputs[name], p.inputs[name](c)))
  end
  lines[#lines + 1] = '  out      = ' .. list_text(got, len)
  lines[#lines + 1] = (zh and '  应为     = ' or '  expected = ') .. list_text(want, len)
  if zh then
    lines[#lines + 1] = string.format('  每个线程至多：全局读 %d、全局写 %d、共享读 %d、共享写 %d；模拟周期 %d（模拟器）',
      sc.global_reads, sc.global_writes, sc.shared_reads, sc.shared_writes, sc.cycles)
  else
    lines[#lines + 1] = string.format('  most per thread: %s, %s, %s, %s; %d modelled cycles (emulated)',
      times(sc.global_reads, 'global read'), times(sc.global_writes, 'global write'),
      times(sc.shared_reads, 'shared read'), times(sc.shared_writes, 'shared write'), sc.cycles)
  end
  return info, table.concat(lines, '\n')
end

--- The reference kernel of puzzle n.
function M.reference(n)
  local p = puzzle(n, 'reference')
  if not p.ref then p.ref = assert(load('return ' .. p.solution, '=puzzle ' .. p.name, 't', _G))() end
  return p.ref
end

--- The reference's code; with name, as an assignment "name = function ...".
function M.solution(n, name)
  local p = puzzle(n, 'solution')
  return name and (name .. ' = ' .. p.solution) or p.solution
end

--- The mutants of puzzle n's solution (lumen.mutants) that are right answers: {[what] = why}.
function M.equivalent(n)
  return puzzle(n, 'equivalent').equivalent or {}
end

--- A plausible mistake's code (check refuses it); with name, as an assignment.
function M.wrong(n, name)
  local p = puzzle(n, 'wrong')
  return name and (name .. ' = ' .. p.wrong) or p.wrong
end

function M.list()
  local out = {}
  for i, p in ipairs(P) do out[i] = { n = i, name = p.name, title = p.title } end
  return out
end

--- The task of puzzle n, its launch, its targets and a skeleton to start from.
function M.describe(n, lang)
  local p
  p, n = puzzle(n, 'describe')
  lang = lang or lang_of()
  local zh = lang == 'zh'
  local c = p.cases(function(lo) return lo end)[1]
  local cfg = p.launch(c)
  local function dims(d)
    if type(d) == 'table' then return table.concat(d, ' x ') end
    return tostring(d or 1)
  end
  local shared = {}
  for k, v in pairs(cfg.shared or {}) do
    local size = type(v) ~= 'table' and v or v.size or v[1] or v.rows * v.cols
    shared[#shared + 1] = string.format('t.shared.%s[%d]', k, size)
  end
  table.sort(shared)
  local t = p.target
  local nblocks, nthreads = 1, 1
  for _, v in ipairs(type(cfg.grid) == 'table' and cfg.grid or { cfg.grid or 1 }) do nblocks = nblocks * v end
  for _, v in ipairs(type(cfg.block) == 'table' and cfg.block or { cfg.block }) do nthreads = nthreads * v end
  local lines = {
    string.format(zh and '谜题 %d：%s' or 'Puzzle %d: %s', n, say(p.title, lang)),
    say(p.task, lang),
    zh and string.format('标准输入：%s；网格 %s 个块，每块 %s 个线程%s。', case_text(c), dims(cfg.grid),
      dims(cfg.block), #shared > 0 and '，共享内存 ' .. table.concat(shared, ', ') or '')
      or string.format('Standard input: %s; a grid of %s %s, each of %s %s%s.', case_text(c), dims(cfg.grid),
        nblocks == 1 and 'block' or 'blocks', dims(cfg.block), nthreads == 1 and 'thread' or 'threads',
        #shared > 0 and '; shared memory ' .. table.concat(shared, ', ') or ''),
    zh and string.format('目标（每个线程至多）：全局读 %d、全局写 %d、共享读 %d、共享写 %d；模拟周期不超过参考解的 1.5 倍。',
      t[1], t[2], t[3], t[4])
      or string.format('Targets (the most any one thread may make): %s, %s, %s and %s; modelled cycles at most '
        .. "1.5 x the reference solution's.", times(t[1], 'global read'), times(t[2], 'global write'),
        times(t[3], 'shared read'), times(t[4], 'shared write')),
    zh and '数组在核函数里从 0 开始编号，和 CUDA C 一样。' or 'Arrays are indexed from 0 inside a kernel, as in CUDA C.',
    string.format('function(%s)\n  -- %s\nend', p.params, zh and '在这里写代码' or 'FILL ME IN'),
  }
  return table.concat(lines, '\n')
end

return M
