--[[
ECE408 Lectures 19 and 20: parallel sparse methods — SpMV, COO, CSR (by hand, then the student's
CSR kernel with kernels.launch), ELL and its padding, JDS and its sorted rows, how the
longest row decides a block's time, the hybrid ELL + COO split (the student's), and conjugate
gradient on a 2-D Poisson matrix built on the student's CSR kernel (the student's CG). Format: docs/lessons.md.
]]
local say = lesson.say

-- The matrix the student converts by hand (4 x 5): not the lecture's, so the answer is not on
-- the screen already.
local HAND = {
  { 0, 5, 0, 0, 1 },
  { 0, 0, 0, 0, 0 },
  { 2, 0, 0, 7, 0 },
  { 0, 3, 0, 0, 0 },
}

local function hand_csr()
  local row_ptr, col_idx, val = { 0 }, {}, {}
  for r = 1, #HAND do
    for c = 1, #HAND[r] do
      if HAND[r][c] ~= 0 then
        col_idx[#col_idx + 1] = c - 1
        val[#val + 1] = HAND[r][c]
      end
    end
    row_ptr[#row_ptr + 1] = #val
  end
  return { row_ptr = row_ptr, col_idx = col_idx, val = val }
end

-- A random m x n matrix with row lengths that vary (some rows empty, one long), as a Lua table.
local function random_rows(m, n)
  local t = {}
  local long = math.random(1, m)
  for r = 1, m do
    t[r] = {}
    local p = r == long and 0.9 or (math.random() < 0.2 and 0 or 0.3)
    for c = 1, n do t[r][c] = math.random() < p and math.random(1, 9) or 0 end
  end
  return t
end

-- The CSR of a Lua matrix as Lua tables with 0-based values (the form of my_csr), and the Sparse.
local function csr_tables(rows)
  local S = kernels.sparse(lm.tensor(rows):float())
  local a = S:arrays('csr')
  return { row_ptr = a.row_ptr:tolist(), col_idx = a.col:tolist(), val = a.val:tolist() }, S
end

-- nil when t is a table with exactly the keys 1..len, each a number; else a text naming the fault.
local function list_fault(t, len, what)
  if type(t) ~= 'table' then
    return say(string.format('%s should be a Lua table, got %s', what, type(t)),
               string.format('%s 应该是一个 Lua 表，得到的是 %s', what, type(t)))
  end
  local keys = 0
  for k in pairs(t) do
    if math.type(k) ~= 'integer' or k < 1 or k > len then
      return say(string.format('%s has an entry at [%s]; it should hold %d entries, at [1] .. [%d] (Lua tables start at 1; the values are 0-based)',
          what, tostring(k), len, len),
        string.format('%s 在 [%s] 处有元素；它应该有 %d 个元素，位于 [1] .. [%d]（Lua 表从 1 开始，存的值从 0 开始）',
          what, tostring(k), len, len))
    end
    keys = keys + 1
  end
  for i = 1, len do
    if type(t[i]) ~= 'number' then
      return say(string.format('%s[%d] is %s, expected a number (%d entries in all)', what, i, tostring(t[i]), len),
                 string.format('%s[%d] 是 %s，应该是一个数（一共 %d 个元素）', what, i, tostring(t[i]), len))
    end
  end
  return nil
end

-- The 2-D Poisson matrix (5-point Laplacian) of a gx x gy grid, as 1-based COO tables.
local function poisson_coo(gx, gy)
  local rows, cols, vals = {}, {}, {}
  for i = 1, gy do
    for j = 1, gx do
      local r = (i - 1) * gx + j
      local function put(c, v) rows[#rows + 1], cols[#cols + 1], vals[#vals + 1] = r, c, v end
      if i > 1 then put(r - gx, -1) end
      if j > 1 then put(r - 1, -1) end
      put(r, 4)
      if j < gx then put(r + 1, -1) end
      if i < gy then put(r + gx, -1) end
    end
  end
  return rows, cols, vals
end

-- The checks' conjugate gradient (float64, the same stopping rule the exercise asks for).
local function cg_ref(A, b, tol, maxit)
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop = tol * math.sqrt(rr)
  local res, k = { math.sqrt(rr) }, 0
  while math.sqrt(rr) > stop and k < maxit do
    local Ap = A:matmul(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    res[k + 1] = math.sqrt(rr)
  end
  return x, k, res
end

return {
  title = say('Sparse matrix-vector multiplication', '稀疏矩阵-向量乘法'),
  course = 'ece408',
  lecture = say('ECE408 Lectures 19-20: Parallel sparse methods', 'ECE408 第 19-20 讲：并行稀疏方法'),
  summary = say([[Storing only the nonzeros (COO, CSR, ELL, JDS), SpMV in each format, and the
trade between compactness and regularity: padding, sorting and the longest row.]],
    [[只存非零元（COO、CSR、ELL、JDS），在每种格式上做 SpMV，以及紧凑与规整之间的取舍：
填充、排序和最长的那一行。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Sparse matrices and SpMV', '稀疏矩阵与 SpMV'),
      text = say([[
Many real systems are sparse: most entries of their matrices are zero (a mesh where each point
touches a few neighbours, a graph, the pruned weights of a network). Iterative solvers such as
conjugate gradient spend their time in sparse matrix-vector multiplication, y = A·x. Compared
with a dense product, SpMV is irregular, gains little from tiling, and is limited by memory
bandwidth; the keys to speed are to drop the zeros (compaction) while keeping the work regular
(less divergence, balanced load, coalesced loads).

The lecture's example is 4 x 4 with 7 nonzeros; a dense product does 16 multiplications, 9 of
them by zero.]],
        [[
许多真实系统都是稀疏的：矩阵的大部分元素是零（每个点只和几个邻居相连的网格、图、剪枝后的
网络权重）。共轭梯度这类迭代求解器的时间都花在稀疏矩阵-向量乘法 y = A·x 上。和稠密乘法相比，
SpMV 不规则，从分块中得益很少，受限于内存带宽；提速的关键是去掉零（压缩），同时保持工作的
规整（更少的分支发散、均衡的负载、合并的访存）。

课上的例子是 4 x 4、7 个非零元；稠密乘法做 16 次乘法，其中 9 次是乘以零。]]),
      code = [[
dense = lm.tensor({{3, 0, 1, 0},
                   {0, 0, 0, 0},
                   {0, 2, 4, 1},
                   {1, 0, 0, 1}}):float()
x = lm.tensor({1, 2, 3, 4}):float()
print('y = A x  = ' .. table.concat(dense:matmul(x):int():tolist(), ' '))
print('nonzeros : ' .. dense:ne(0):sum():item() .. ' of ' .. dense:numel())
]],
      expect = 'y = A x  = 6 0 20 5\nnonzeros : 7 of 16\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('COO: coordinates', 'COO：坐标格式'),
      text = say([=[
The coordinate format keeps three arrays of nnz entries: the row index, the column index and the
value of every nonzero, in any order. SpMV in COO gives each thread one nonzero: it multiplies
val[i]·x[col[i]] and adds it into y[row[i]]. Several nonzeros share a row, so that add is an
atomicAdd (Lecture 18). Indices below are 0-based, as in the kernels.]=],
        [=[
坐标格式（COO）用三个长度为 nnz 的数组：每个非零元的行号、列号和值，顺序随意。COO 上的
SpMV 让每个线程负责一个非零元：算 val[i]·x[col[i]]，再加到 y[row[i]] 上。同一行有好几个非零元，
所以这次加法得用 atomicAdd（第 18 讲）。下面的下标和内核里一样从 0 开始。]=]),
      code = [[
A = kernels.sparse(dense)
local coo = A:arrays('coo')
print('row ' .. table.concat(coo.row:tolist(), ' '))
print('col ' .. table.concat(coo.col:tolist(), ' '))
print('val ' .. table.concat(coo.val:int():tolist(), ' '))
local y, info = kernels.spmv(A, x, {format = 'coo', backend = 'emu'})
print(string.format('y = %s; %d threads, %d atomics (%s)', table.concat(y:int():tolist(), ' '),
  info.counters.nnz, info.counters.atomics, info.provenance))
]],
      expect = 'row 0 0 2 2 2 3 3\ncol 0 2 1 2 3 0 3\nval 3 1 2 4 1 1 1\n'
        .. 'y = 6 0 20 5; 7 threads, 7 atomics (emulated, modelled cycles)\n',
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('CSR: compressed rows', 'CSR：压缩行'),
      text = say([[
CSR sorts the nonzeros by row and replaces the row indices by one array of m + 1 offsets:
row r's nonzeros are at row_ptr[r] .. row_ptr[r+1] - 1 of col_idx and val. For the lecture's
matrix row_ptr = [0, 2, 2, 5, 7]: row 1 is empty because row_ptr[1] = row_ptr[2]. That saves
memory (m + 1 offsets instead of nnz row indices) and, more important, lets one thread own one
row, so no atomics are needed.

Your turn, by hand, with this matrix (4 x 5):

  0 5 0 0 1
  0 0 0 0 0
  2 0 0 7 0
  0 3 0 0 0]],
        [[
CSR 把非零元按行排好，用一个长度为 m + 1 的偏移数组代替行号：第 r 行的非零元位于 col_idx 和
val 的 row_ptr[r] .. row_ptr[r+1] - 1。课上那个矩阵的 row_ptr = [0, 2, 2, 5, 7]：因为
row_ptr[1] = row_ptr[2]，第 1 行是空的。这样省了内存（m + 1 个偏移而不是 nnz 个行号），更重要的是
可以让一个线程负责一整行，于是不再需要原子操作。

轮到你了，用手算下面这个矩阵（4 x 5）：

  0 5 0 0 1
  0 0 0 0 0
  2 0 0 7 0
  0 3 0 0 0]]),
      code = [[
local csr = A:arrays('csr')
print('row_ptr ' .. table.concat(csr.row_ptr:tolist(), ' '))
print('col_idx ' .. table.concat(csr.col:tolist(), ' '))
print('val     ' .. table.concat(csr.val:int():tolist(), ' '))
-- your CSR of the 4 x 5 matrix above, 0-based like the kernels:
my_csr = {row_ptr = {}, col_idx = {}, val = {}}
]],
      expect = 'row_ptr 0 2 2 5 7\ncol_idx 0 2 1 2 3 0 3\nval     3 1 2 4 1 1 1\n',
      exercise = {
        prompt = say([[
Fill `my_csr` with the CSR arrays of the 4 x 5 matrix above, 0-based: my_csr.row_ptr (5
numbers), my_csr.col_idx and my_csr.val (one per nonzero, row by row).]],
          [[
把上面那个 4 x 5 矩阵的 CSR 数组填进 `my_csr`，下标从 0 开始：my_csr.row_ptr（5 个数）、
my_csr.col_idx 和 my_csr.val（每个非零元一个，逐行排列）。]]),
        hints = {
          say('Go row by row, left to right: the nonzeros are 5 and 1 (row 0), none (row 1), 2 and 7 (row 2), 3 (row 3).',
              '逐行、从左到右：非零元是 5 和 1（第 0 行）、没有（第 1 行）、2 和 7（第 2 行）、3（第 3 行）。'),
          say('row_ptr starts at 0 and adds each row\'s count: an empty row repeats the previous offset.',
              'row_ptr 从 0 开始，依次加上每行的非零元个数：空行就重复前一个偏移。'),
        },
        check = function(env)
          local mine = env.my_csr
          if type(mine) ~= 'table' then
            return false, say('my_csr should be a table {row_ptr = ..., col_idx = ..., val = ...}',
                              'my_csr 应该是一个表 {row_ptr = ..., col_idx = ..., val = ...}')
          end
          -- the reference from Lumen's own converter, not from this file's arithmetic
          local ref = kernels.sparse(lm.tensor(HAND):float()):arrays('csr')
          local want = { row_ptr = ref.row_ptr:tolist(), col_idx = ref.col:tolist(), val = ref.val:tolist() }
          local expected_here = hand_csr()
          assert(#expected_here.val == #want.val)
          local why = {
            row_ptr = function(i, g, w)
              local r = i - 1
              if i == 1 then return say('row_ptr starts at 0', 'row_ptr 从 0 开始') end
              return say(string.format('row_ptr[%d] is where row %d starts: the nonzeros of rows 0..%d before it (%d)', r, r, r - 1, w),
                         string.format('row_ptr[%d] 是第 %d 行开始的位置：它前面是第 0..%d 行的非零元（%d 个）', r, r, r - 1, w))
            end,
            col_idx = function(i, g, w)
              return say(string.format('nonzero %d is in column %d, counting columns from 0', i, w),
                         string.format('第 %d 个非零元在第 %d 列（列从 0 数）', i, w))
            end,
            val = function(i, g, w)
              return say('values go row by row, left to right', '值要逐行、从左到右排列')
            end,
          }
          for _, k in ipairs({ 'row_ptr', 'col_idx', 'val' }) do
            local ok, msg = lesson.compare(mine[k], want[k], { what = say('my_csr.' .. k, 'my_csr.' .. k),
              zero_based = true, why = why[k] })
            if not ok then return false, msg end
          end
          return true, say('right: the same arrays kernels.sparse builds', '对：和 kernels.sparse 建出来的数组一样')
        end,
        solution = [[
my_csr = {row_ptr = {0, 2, 2, 4, 5},
          col_idx = {1, 4, 0, 3, 1},
          val     = {5, 1, 2, 7, 3}}
]],
        wrong = {
          [[
my_csr = {row_ptr = {0, 2, 4, 5},
          col_idx = {1, 4, 0, 3, 1},
          val     = {5, 1, 2, 7, 3}}
]],
          [[
my_csr = {row_ptr = {0, 2, 2, 4, 5},
          col_idx = {2, 5, 1, 4, 2},
          val     = {5, 1, 2, 7, 3}}
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('SpMV in CSR: one thread per row', 'CSR 上的 SpMV：每行一个线程'),
      text = say([=[
The lecture's CSR kernel gives each thread one row:

  row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < num_rows) {
    float dot = 0;
    for (int i = row_ptr[row]; i < row_ptr[row + 1]; i++)
      dot += data[i] * x[col_index[i]];
    y[row] = dot;
  }

No atomics, but two problems. The loads of neighbouring threads are not next to each other in
memory (each thread walks its own row), so they do not coalesce; and the threads of a warp loop
as many times as their rows are long, so a warp takes as long as its longest row while the
others wait: control divergence and load imbalance. The counters show both (work per thread,
SIMD efficiency).]=],
        [=[
课上的 CSR 内核让每个线程负责一行：

  row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < num_rows) {
    float dot = 0;
    for (int i = row_ptr[row]; i < row_ptr[row + 1]; i++)
      dot += data[i] * x[col_index[i]];
    y[row] = dot;
  }

不需要原子操作，但有两个问题。相邻线程的访存在内存里并不相邻（每个线程走自己的那一行），
所以不能合并；一个 warp 里的线程循环的次数等于各自那一行的长度，于是整个 warp 的时间由最长的
那一行决定，其余线程都在等：这就是控制发散和负载不均衡。计数器把两者都显示出来（每线程工作量、
SIMD 效率）。]=]),
      code = [[
y, csr_info = kernels.spmv(A, x, {format = 'csr', backend = 'emu'})
print('y = ' .. table.concat(y:int():tolist(), ' '))
print(string.format('work per thread: max %d, mean %.2f; SIMD efficiency %.2f (%s)',
  csr_info.counters.work_per_thread_max, csr_info.counters.work_per_thread_mean,
  csr_info.counters.simd_efficiency, csr_info.provenance))
]],
      scene = function(env) return env.csr_info end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Your CSR kernel', '你自己的 CSR 内核'),
      text = say([=[
Write the CSR kernel of step 4 in Lua: spmv_csr(t, row_ptr, col, val, x, y, m), one thread per
row. The arrays are the tensors of A:arrays('csr') and x, y; inside the kernel they are indexed
from 0, as in CUDA C, so row r's nonzeros are val[row_ptr[r]] .. val[row_ptr[r + 1] - 1]. The
grid may have more threads than rows: guard with row < m. `run_csr(kernel, S, v)` launches blocks
of 32 threads over the m rows of a sparse matrix S and returns y and the info; the picture is your
kernel's trace, one row per warp.]=],
        [=[
用 Lua 写出第 4 步的 CSR 内核：spmv_csr(t, row_ptr, col, val, x, y, m)，每行一个线程。这些数组就是
A:arrays('csr') 的张量以及 x、y；在内核里它们和 CUDA C 一样从 0 开始编号，所以第 r 行的非零元是
val[row_ptr[r]] .. val[row_ptr[r + 1] - 1]。网格里的线程可能比行多：用 row < m 做保护。
`run_csr(kernel, S, v)` 以每块 32 个线程覆盖稀疏矩阵 S 的 m 行来启动，返回 y 和 info；画面是你的内核
的记录，每个 warp 一行。]=]),
      code = [[
function run_csr(kernel, S, v)
  local m = S.shape[1]
  local csr = S:arrays('csr')
  local y = lm.zeros(m)
  local info = kernels.launch(kernel, {grid = (m + 31) // 32, block = 32,
    args = {csr.row_ptr, csr.col, csr.val, v, y, m}})
  return y, info
end
function spmv_csr(t, row_ptr, col, val, x, y, m)
  local row = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  -- TODO: if row < m, y[row] = the dot product of row `row` with x
end
y, csr_run = run_csr(spmv_csr, A, x)
print('your y = ' .. table.concat(y:int():tolist(), ' ') .. '   (expected 6 0 20 5)')
]],
      scene = function(env) return env.csr_run end,
      exercise = {
        prompt = say([[
Complete `spmv_csr(t, row_ptr, col, val, x, y, m)` so that `run_csr(spmv_csr, S, v)` equals Lumen's
CSR SpMV on fresh random sparse matrices (empty rows, long rows, m not a multiple of 32).]],
          [[
把 `spmv_csr(t, row_ptr, col, val, x, y, m)` 补完整，使 `run_csr(spmv_csr, S, v)` 在新的随机稀疏矩阵
上（有空行、有长行、m 不是 32 的倍数）都和 Lumen 的 CSR SpMV 结果相同。]]),
        hints = {
          say('if row < m then local dot = 0; for i = row_ptr[row], row_ptr[row + 1] - 1 do ... end; y[row] = dot end',
              'if row < m then local dot = 0; for i = row_ptr[row], row_ptr[row + 1] - 1 do ... end; y[row] = dot end'),
          say('Inside the loop: dot = dot + val[i] * x[col[i]].', '循环里：dot = dot + val[i] * x[col[i]]。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'spmv_csr')
          if not ok then return false, fn end
          for _, size in ipairs({ { 4, 4 }, { 37, 20 }, { 70, 50 } }) do
            local S = kernels.sparse(lm.tensor(random_rows(size[1], size[2])):float())
            local v = lm.randint(0, 5, { size[2] }):float()
            local rok, y, kind = lesson.try(env.run_csr, fn, S, v)
            if not rok then
              local arr = kind == 'memcheck' and lesson.text(y):match("global array '([%w_]+)'")
              if arr == 'row_ptr' or arr == 'col' or arr == 'val' then
                return false, say(string.format('on a %d x %d matrix, %s. The grid has more threads than rows: does every thread check row < m before it reads row_ptr[row + 1]?', size[1], size[2], y.en),
                  string.format('在 %d x %d 的矩阵上，%s（网格里的线程比行多：每个线程读 row_ptr[row + 1] 之前都检查了 row < m 吗？）', size[1], size[2], y.zh))
              elseif arr == 'x' then
                return false, say(string.format('on a %d x %d matrix, %s. x is indexed by the column of the nonzero, col[i], not by its position i in val', size[1], size[2], y.en),
                  string.format('在 %d x %d 的矩阵上，%s（x 的下标应该是非零元所在的列 col[i]，而不是它在 val 中的位置 i）', size[1], size[2], y.zh))
              end
              return false, y
            end
            local want = kernels.spmv(S, v, { format = 'csr', backend = 'emu' })
            local cok, msg = lesson.compare(y, want, {
              what = say(string.format('your y of a %d x %d matrix', size[1], size[2]),
                         string.format('你对 %d x %d 矩阵算出的 y', size[1], size[2])),
              zero_based = true,
              why = function(i, g, w)
                local n = S:row_nnz():tolist()[i]
                if g == 0 and w ~= 0 then
                  return say(string.format('row %d (0-based) has %d nonzeros: is y[row] written for every row < m?', i - 1, n),
                             string.format('第 %d 行（从 0 数）有 %d 个非零元：每个 row < m 都写了 y[row] 吗？', i - 1, n))
                end
                return say(string.format('row %d (0-based) has %d nonzeros, val[row_ptr[row]] .. val[row_ptr[row + 1] - 1]', i - 1, n),
                           string.format('第 %d 行（从 0 数）有 %d 个非零元，即 val[row_ptr[row]] .. val[row_ptr[row + 1] - 1]', i - 1, n))
              end })
            if not cok then return false, msg end
          end
          return true, say('your kernel matches Lumen\'s CSR SpMV', '你的内核和 Lumen 的 CSR SpMV 结果一致')
        end,
        solution = [==[
function spmv_csr(t, row_ptr, col, val, x, y, m)
  local row = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if row < m then
    local dot = 0
    for i = row_ptr[row], row_ptr[row + 1] - 1 do
      dot = dot + val[i] * x[col[i]]
    end
    y[row] = dot
  end
end
y, csr_run = run_csr(spmv_csr, A, x)
]==],
        wrong = {
          [==[
function spmv_csr(t, row_ptr, col, val, x, y, m)
  local row = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  local dot = 0
  for i = row_ptr[row], row_ptr[row + 1] - 1 do
    dot = dot + val[i] * x[col[i]]
  end
  y[row] = dot
end
]==],
          [==[
function spmv_csr(t, row_ptr, col, val, x, y, m)
  local row = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if row < m then
    local dot = 0
    for i = row_ptr[row], row_ptr[row + 1] - 1 do
      dot = dot + val[i] * x[i]
    end
    y[row] = dot
  end
end
]==],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('ELL: padding for regularity', 'ELL：用填充换规整'),
      text = say([[
ELL pads every row with zeros to the length of the longest row, then stores the padded rows
column by column (transposed): slot k of all rows, then slot k + 1, ... In the SpMV kernel
thread r reads element k of its row at index k·m + r, next to thread r + 1's: the loads coalesce,
and every thread loops the same number of times. The price is the padding: m · (longest row) -
nnz slots that hold zeros and are loaded and multiplied anyway. For the lecture's matrix: 4 rows,
the longest has 3 nonzeros, 7 nonzeros in all: 4·3 - 7 = 5 padded slots. One long row makes
every row that long.]],
        [[
ELL 先用零把每一行补到最长那一行的长度，再按列（转置后）存放这些补齐的行：先放所有行的第 k 个
位置，再放第 k + 1 个……在 SpMV 内核里，线程 r 读它那一行的第 k 个元素时下标是 k·m + r，紧挨着
线程 r + 1 读的那个：访存可以合并，而且每个线程循环的次数都一样。代价是填充：m · （最长行的长度）
- nnz 个存着零的位置，照样要读、要乘。课上的矩阵：4 行，最长的一行有 3 个非零元，总共 7 个：
4·3 - 7 = 5 个填充位置。只要有一行很长，每一行都得跟着那么长。]]),
      code = [[
local ell = A:arrays('ell')
print('ell col (slot by slot) ' .. table.concat(ell.col:tolist(), ' '))
print('padding: ' .. A.padding .. ' slots (ELL width ' .. A.ell_width .. ')')
local _, ell_info = kernels.spmv(A, x, {format = 'ell', backend = 'emu'})
print(string.format('ELL SpMV: %d padded slots loaded, SIMD efficiency %.2f (%s)', ell_info.counters.padding,
  ell_info.counters.simd_efficiency, ell_info.provenance))
ell_run = ell_info
-- write ell_padding(row_lengths): the padded slots of ELL for rows of those lengths
function ell_padding(row_lengths)
  return 0  -- TODO
end
]],
      scene = function(env) return env.ell_run end,
      exercise = {
        prompt = say([[
Write `ell_padding(row_lengths)`: given the number of nonzeros of every row (a Lua array, such as
{2, 0, 3, 2}), return how many padded slots ELL stores (5 for that example). It is compared with
kernels.sparse on fresh random matrices.]],
          [[
写出 `ell_padding(row_lengths)`：参数是每一行的非零元个数（一个 Lua 数组，例如 {2, 0, 3, 2}），
返回 ELL 要存多少个填充位置（这个例子是 5）。检查时会在新的随机矩阵上和 kernels.sparse 比较。]]),
        hints = {
          say('Every row gets as many slots as the longest row has nonzeros.', '每一行分到的位置数，都等于最长那一行的非零元个数。'),
          say('slots in all = #rows · longest; padding = slots - sum of the lengths.', '位置总数 = 行数 · 最长行长度；填充 = 位置总数 - 各行长度之和。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'ell_padding')
          if not ok then return false, fn end
          for _, size in ipairs({ { 4, 4 }, { 7, 9 }, { 12, 20 }, { 1, 5 } }) do
            local rows = random_rows(size[1], size[2])
            local S = kernels.sparse(lm.tensor(rows):float())
            local lengths = S:row_nnz():tolist()
            local rok, got = lesson.try(fn, { table.unpack(lengths) })
            if not rok then return false, got end
            got = lesson.number(got)
            if got ~= S.padding then
              local max, sum = 0, 0
              for _, l in ipairs(lengths) do max = math.max(max, l); sum = sum + l end
              local why = got == #lengths * max and say('that counts every slot; the padding is what the nonzeros do not fill',
                                                         '这是全部位置的数目；填充是非零元没有占满的那部分')
                or say(string.format('%d rows padded to the longest row (%d) hold %d slots', #lengths, max, #lengths * max),
                       string.format('%d 行都补到最长行的长度（%d），共 %d 个位置', #lengths, max, #lengths * max))
              return false, say(string.format('for row lengths {%s} ELL pads %d slots, ell_padding gives %s: %s',
                  table.concat(lengths, ','), S.padding, lesson.show(got), why.en),
                string.format('行长度为 {%s} 时 ELL 填充 %d 个位置，ell_padding 给出 %s：%s',
                  table.concat(lengths, ','), S.padding, lesson.show(got), why.zh))
            end
          end
          return true, say('it matches kernels.sparse on four fresh matrices', '在四个新的随机矩阵上都和 kernels.sparse 一致')
        end,
        solution = [[
function ell_padding(row_lengths)
  local longest, sum = 0, 0
  for _, n in ipairs(row_lengths) do
    longest = math.max(longest, n)
    sum = sum + n
  end
  return #row_lengths * longest - sum
end
]],
        wrong = {
          [[
function ell_padding(row_lengths)
  local longest = 0
  for _, n in ipairs(row_lengths) do longest = math.max(longest, n) end
  return #row_lengths * longest
end
]],
          [[
function ell_padding(row_lengths)
  local longest, sum = 0, 0
  for _, n in ipairs(row_lengths) do longest = math.max(longest, n); sum = sum + n end
  return longest - sum / #row_lengths
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('JDS: sort the rows', 'JDS：给行排序'),
      text = say([[
JDS (jagged diagonal storage) sorts the rows by their number of nonzeros, longest first, and
remembers the permutation so that each result lands in its original row of y. Then it stores the
sorted rows slot by slot, as ELL does, but without padding: slot k holds only the rows that have a
k-th nonzero (iter_ptr says where each slot starts). Neighbouring threads now get rows of similar
length, so a warp's threads loop about as often as each other: balance without padding. The
lecture's matrix sorted: rows 2, 0, 3, 1 with lengths 3, 2, 2, 0.]],
        [[
JDS（jagged diagonal storage，锯齿对角存储）按非零元个数从多到少给行排序，并记下排列，使每个
结果都能写回 y 里原来的那一行。然后像 ELL 一样逐个位置存放排好序的行，但不填充：第 k 个位置只放
那些确实有第 k 个非零元的行（iter_ptr 给出每个位置从哪里开始）。这样相邻线程拿到的行长度相近，
一个 warp 里的线程循环次数也差不多：不用填充也能均衡。课上的矩阵排序之后是第 2、0、3、1 行，
长度分别为 3、2、2、0。]]),
      code = [[
local jds = A:arrays('jds')
print('perm     ' .. table.concat(jds.perm:tolist(), ' '))
print('lengths  ' .. table.concat(jds.row_nnz:tolist(), ' '))
print('iter_ptr ' .. table.concat(jds.iter_ptr:tolist(), ' '))
local y
y, jds_run = kernels.spmv(A, x, {format = 'jds', backend = 'emu'})
print('y = ' .. table.concat(y:int():tolist(), ' ') .. ' (in the original row order)')
]],
      scene = function(env) return env.jds_run end,
      expect = 'perm     2 0 3 1\nlengths  3 2 2 0\niter_ptr 0 3 6 7\ny = 6 0 20 5 (in the original row order)\n',
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('The longest row decides', '最长的行说了算'),
      text = say([[
Lecture 20's point: with one thread per row, a warp's time is set by its longest row. Below, a
4096 x 256 matrix with about 8 nonzeros per row, once regular and once with every 128th row 30
times longer. The emulator runs SpMV in the four formats on both. The SM of its model holds 64
warps at once (8 blocks of 256 threads, 2048 rows), so 4096 rows run in two waves.

What to look for. Regular rows: CSR's threads walk rows far apart, so a warp's loads scatter over
many memory sectors; ELL's and JDS's column-major slots put a warp's loads side by side
(coalesced): they are the fast ones. Long rows: CSR and ELL both wait, in each wave, for the long
rows that fall into it, and ELL pads every row to the longest (the padding column: far more slots
than there are nonzeros); JDS sorts the rows longest first, so all the long rows share the first
warps: one long wave, then short ones. COO balances the threads (one per nonzero), but the
nonzeros of a long row all add into one y[row], and those atomics queue. A real code may also
split the few long rows off into COO (the hybrid format) and the rest into ELL.

The model charges JDS's iter_ptr[t] as a global load in every iteration, where a GPU's cache would
serve all but the first: JDS's lead here is, if anything, too small. The picture is a small skewed
matrix, one wave: there the formats differ in padding and in SIMD efficiency (Tab goes through the
four, each block's longest row marked), not yet in cycles.]],
        [[
第 20 讲的要点：每行一个线程时，一个 warp 的时间由它最长的那一行决定。下面是一个 4096 x 256 的
矩阵，每行约 8 个非零元，一次是规整的，一次是每隔 128 行有一行长出 30 倍。模拟器在两个矩阵上用
四种格式做 SpMV。它的模型里一个 SM 同时容纳 64 个 warp（8 个 256 线程的块，即 2048 行），所以
4096 行要分两波（wave）运行。

要看什么。规整的行：CSR 的线程各自走相距很远的行，一个 warp 的访存分散在许多内存扇区上；ELL 和
JDS 的按列存放让一个 warp 的访存挨在一起（合并访问）：它们是快的。长行：CSR 和 ELL 在每一波里都要
等落在这一波里的长行，而且 ELL 要把每一行都填充到最长的那一行（填充列：槽位远多于非零元）；JDS
按长度从长到短给行排序，所有长行都挤在最前面几个 warp 里：一波长的，后面都是短的。COO 让线程
负载均衡（每个非零元一个线程），但一条长行的所有非零元都往同一个 y[row] 上加，这些原子操作要
排队。实际代码还可以把少数长行拆出来放进 COO（混合格式，hybrid），其余的放进 ELL。

模型把 JDS 每次迭代里的 iter_ptr[t] 都算作一次全局内存读，而 GPU 的缓存除了第一次都能命中：所以
这里 JDS 的领先，如果有偏差，也是被低估了。画面是一个小的偏斜矩阵，只有一波：在那里各格式的
差别在填充和 SIMD 效率上（按 Tab 依次看四种格式，每个块最长的那一行都标了出来），还不在周期上。]]),
      code = [[
lm.manual_seed(19)
local function matrix(long_rows)
  local p = lm.full({4096, 1}, 0.03)            -- each row: about 8 of 256 columns
  if long_rows then
    for r = 128, 4096, 128 do p[r][1] = 0.9 end  -- every 128th row: about 230
  end
  return kernels.sparse(lm.rand(4096, 256):lt(p):float())
end
local v = lm.rand(256)
for _, case in ipairs({{'regular', matrix(false)}, {'every 128th row long', matrix(true)}}) do
  print(case[1] .. string.format(' (%d nonzeros):', case[2].nnz))
  for _, f in ipairs({'coo', 'csr', 'ell', 'jds'}) do
    local _, run = kernels.spmv(case[2], v, {format = f, backend = 'emu'})
    print(string.format('  %-4s %8d cycles %7d padding  SIMD %.2f  longest queue %3d', f,
      run.counters.modelled_cycles, run.counters.padding, run.counters.simd_efficiency, run.counters.atomic_queue))
  end
end
print('(all emulated, modelled cycles)')
]],
      scene = { 'spmv', matrix = 'skewed', format = 'ell' },
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Hybrid ELL + COO: cut the long rows', '混合格式 ELL + COO：把长行剪开'),
      text = say([[
Step 8's remedy for ELL's padding: choose a width K, keep the first K nonzeros of every row in an
ELL part of width K (regular, coalesced, padded only up to K), and put what is left of the few
long rows into a COO part, one thread per nonzero with atomics. The SpMV is then two launches,
ELL then COO, adding into one y. K trades the two: a small K pads little but sends more into
COO (atomics); a large K approaches pure ELL.

Below, a 512 x 128 matrix with about 4 nonzeros a row and every 64th row about 100 long. The
table is computed from the row lengths: slots, padding and COO entries for several K, and the
padding saved against pure ELL (width = the longest row). Then the emulator runs pure ELL, and
the hybrid at K = 8 as its two launches, on the same x.]],
        [[
第 8 步提到的治 ELL 填充的办法：选一个宽度 K，把每一行的前 K 个非零元放进宽度为 K 的 ELL 部分
（规整、合并访存，只填充到 K），把少数长行剩下的部分放进 COO 部分，每个非零元一个线程、用原子
操作。于是 SpMV 变成两次启动：先 ELL，再 COO，加到同一个 y 上。K 在两者之间权衡：K 小，填充少，
但进 COO 的多（原子操作多）；K 大，就接近纯 ELL。

下面是一个 512 x 128 的矩阵，每行约 4 个非零元，每隔 64 行有一行长约 100。表格是根据各行长度
算出来的：不同 K 下的槽位数、填充数、COO 元素数，以及和纯 ELL（宽度 = 最长行）相比省下的填充。
然后模拟器在同一个 x 上运行纯 ELL，以及 K = 8 时混合格式的两次启动。]]),
      code = [[
lm.manual_seed(9)
local p = lm.full({512, 1}, 0.03)               -- about 4 of 128 columns a row
for r = 64, 512, 64 do p[r][1] = 0.8 end          -- every 64th row: about 100
local D = lm.rand(512, 128):lt(p):float()
skewed = kernels.sparse(D)
local lengths = skewed:row_nnz():tolist()
print(string.format('%d nonzeros, longest row %d: pure ELL pads %d slots', skewed.nnz,
  skewed.ell_width, skewed.padding))
print('   K  ELL slots  padding  COO entries  padding saved')
for _, K in ipairs({2, 4, 8, 16, 32}) do
  local in_ell = 0
  for _, l in ipairs(lengths) do in_ell = in_ell + math.min(l, K) end
  print(string.format('%4d %10d %8d %12d %14d', K, 512 * K, 512 * K - in_ell,
    skewed.nnz - in_ell, skewed.padding - (512 * K - in_ell)))
end
print('(computed from the row lengths)')
-- the hybrid at K = 8, split here from the dense rows (1-based, for kernels.sparse)
local e, c, rows = {{}, {}, {}}, {{}, {}, {}}, D:tolist()
for r = 1, 512 do
  local k = 0
  for j = 1, 128 do
    if rows[r][j] ~= 0 then
      k = k + 1
      local part = k <= 8 and e or c
      table.insert(part[1], r); table.insert(part[2], j); table.insert(part[3], rows[r][j])
    end
  end
end
local ell_part = kernels.sparse{rows = e[1], cols = e[2], vals = e[3], shape = {512, 128}}
local coo_part = kernels.sparse{rows = c[1], cols = c[2], vals = c[3], shape = {512, 128}}
local v = lm.rand(128)
local y, pure = kernels.spmv(skewed, v, {format = 'ell', backend = 'emu'})
local y1, run1 = kernels.spmv(ell_part, v, {format = 'ell', backend = 'emu'})
local y2, run2 = kernels.spmv(coo_part, v, {format = 'coo', backend = 'emu'})
print(string.format('pure ELL: %d cycles, %d padded slots', pure.counters.modelled_cycles, pure.counters.padding))
print(string.format('hybrid K = 8: ELL %d + COO %d = %d cycles, %d padded slots, %d atomics',
  run1.counters.modelled_cycles, run2.counters.modelled_cycles,
  run1.counters.modelled_cycles + run2.counters.modelled_cycles, run1.counters.padding, run2.counters.atomics))
print(string.format('max |y_hybrid - y_ELL| %.2g   (%s)', (y1 + y2 - y):abs():max():item(), pure.provenance))
-- write split_hybrid(csr, K): csr as my_csr of step 3 (Lua tables, 0-based values)
function split_hybrid(csr, K)
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}           -- m * K slots, slot by slot: (row r, slot k) at [k * m + r + 1]
  local coo = {row = {}, col = {}, val = {}}
  -- TODO
  return ell, coo
end
]],
      scene = { 'spmv', matrix = 'skewed', format = 'ell' },
      exercise = {
        prompt = say([[
Write `split_hybrid(csr, K)`. csr is a CSR matrix as in step 3 (csr.row_ptr, csr.col_idx, csr.val:
Lua tables holding 0-based values); m = #csr.row_ptr - 1. Return two tables:

ell = {col = ..., val = ...}: m·K slots stored slot by slot, as Lumen's ELL: slot k of row r
(both 0-based) at ell.col[k·m + r + 1], ell.val[k·m + r + 1]. Slot k holds row r's k-th nonzero
when the row has one; else it is padding: value 0, column 0.

coo = {row = ..., col = ..., val = ...}: every nonzero past the first K of its row, 0-based
row and column, in any order.

It is checked on fresh random matrices (empty rows, a long first and last row, K = 1 up to the
longest row): the two parts must hold the matrix, the padding exactly where rows are short.]],
          [[
写出 `split_hybrid(csr, K)`。csr 是第 3 步那样的 CSR 矩阵（csr.row_ptr、csr.col_idx、csr.val：
存着从 0 开始的值的 Lua 表）；m = #csr.row_ptr - 1。返回两个表：

ell = {col = ..., val = ...}：m·K 个槽位，像 Lumen 的 ELL 一样逐个槽位存放：第 r 行的第 k 个槽位
（都从 0 数）在 ell.col[k·m + r + 1]、ell.val[k·m + r + 1]。若该行有第 k 个非零元，槽位就放它；
否则就是填充：值为 0，列为 0。

coo = {row = ..., col = ..., val = ...}：每一行前 K 个之后的所有非零元，行号和列号从 0 开始，
顺序随意。

检查时用新的随机矩阵（有空行，第一行和最后一行都很长，K 从 1 到最长行）：两部分合起来必须就是
原矩阵，填充恰好出现在行不够长的地方。]]),
        hints = {
          say('Fill all m·K slots with 0 first (ell.col[i], ell.val[i] for i = 1 .. m·K): then only the nonzeros remain to place.',
            '先把 m·K 个槽位全部填 0（i = 1 .. m·K 的 ell.col[i]、ell.val[i]）：然后只需放非零元。'),
          say('Row r\'s nonzeros are at positions i = csr.row_ptr[r + 1] .. csr.row_ptr[r + 2] - 1 (0-based), read as csr.val[i + 1]; k = i - csr.row_ptr[r + 1] is its slot.',
            '第 r 行的非零元在位置 i = csr.row_ptr[r + 1] .. csr.row_ptr[r + 2] - 1（从 0 数），用 csr.val[i + 1] 读；k = i - csr.row_ptr[r + 1] 就是它的槽位。'),
          say('if k < K it goes to ell at [k * m + r + 1], else it is appended to coo (row r, col csr.col_idx[i + 1]).',
            'k < K 时放进 ell 的 [k * m + r + 1]，否则追加到 coo（行 r，列 csr.col_idx[i + 1]）。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'split_hybrid')
          if not ok then return false, fn end
          local fixed = { { 1, 2, 0, 3, 0, 4 }, { 0, 0, 0, 0, 0, 0 }, { 5, 0, 0, 0, 0, 0 }, { 0, 6, 7, 8, 9, 1 } }
          local function long_ends(m, n)    -- random rows, the first and the last one long
            local t = random_rows(m, n)
            for c = 1, n do
              if c % 2 == 1 then t[1][c] = math.random(1, 9) end
              if c % 3 ~= 0 then t[m][c] = math.random(1, 9) end
            end
            return t
          end
          local empty_first = { { 0, 0, 0, 0, 0 }, { 1, 2, 3, 0, 4 }, { 0, 5, 0, 0, 0 } }
          local cases = { { fixed, 2 }, { empty_first, 2 }, { long_ends(7, 9), 1 }, { long_ends(37, 20), 3 }, { long_ends(12, 12), 0 }, { long_ends(20, 11), 4 } }
          local total_pad, total_coo = 0, 0
          for _, case in ipairs(cases) do
            local rows = case[1]
            local csr, S = csr_tables(rows)
            local m, n = #rows, #rows[1]
            local lengths = S:row_nnz():tolist()
            local K = case[2] > 0 and case[2] or S.ell_width          -- 0: the longest row, no COO
            local copy = { row_ptr = { table.unpack(csr.row_ptr) }, col_idx = { table.unpack(csr.col_idx) }, val = { table.unpack(csr.val) } }
            local rok, ell, coo = lesson.try(fn, copy, K)
            if not rok then return false, ell end
            local where = string.format('%d x %d, K = %d', m, n, K)
            local where_zh = string.format('%d x %d，K = %d', m, n, K)
            if type(ell) ~= 'table' or type(coo) ~= 'table' then
              return false, say('split_hybrid should return two tables, ell and coo', 'split_hybrid 应该返回两个表：ell 和 coo')
            end
            -- the ELL part: m * K slots
            if type(ell.val) == 'table' then
              local keys = 0
              for _ in pairs(ell.val) do keys = keys + 1 end
              if keys ~= m * K and (keys == m * (K + 1) or keys == m * (K - 1)) then
                return false, say(string.format('on %s: ELL of width K over %d rows has %d slots, your ell.val has %d = %d·%d: is K off by one (slot k counts from 0, k < K)?',
                    where, m, m * K, keys, m, keys // m),
                  string.format('在 %s 上：%d 行、宽度为 K 的 ELL 有 %d 个槽位，你的 ell.val 有 %d = %d·%d 个：K 差了一？（槽位 k 从 0 数，k < K）',
                    where_zh, m, m * K, keys, m, keys // m))
              end
            end
            for _, f in ipairs({ 'col', 'val' }) do
              local fault = list_fault(ell[f], m * K, 'ell.' .. f)
              if fault then
                return false, say(string.format('on %s: %s (padding too: value 0, column 0)', where, fault.en),
                  string.format('在 %s 上：%s（填充也要存：值 0，列 0）', where_zh, fault.zh))
              end
            end
            local pad = 0
            for r = 0, m - 1 do
              local first, len = csr.row_ptr[r + 1], lengths[r + 1]
              for k = 0, K - 1 do
                local at = k * m + r + 1
                local gc, gv = ell.col[at], ell.val[at]
                if k < len then
                  local wc, wv = csr.col_idx[first + k + 1], csr.val[first + k + 1]
                  if gc ~= wc or gv ~= wv then
                    local why
                    if ell.val[r * K + k + 1] == wv and ell.col[r * K + k + 1] == wc then
                      why = say('that is row by row; ELL is stored slot by slot, (row r, slot k) at [k·m + r + 1], so neighbouring threads read neighbouring slots',
                        '这是按行存放；ELL 是逐个槽位存放的，(第 r 行，第 k 个槽位) 在 [k·m + r + 1]，这样相邻线程读相邻的位置')
                    else
                      why = say(string.format('row %d has %d nonzeros; the ELL part keeps its first %d, in order', r, len, math.min(len, K)),
                        string.format('第 %d 行有 %d 个非零元；ELL 部分按顺序保留它的前 %d 个', r, len, math.min(len, K)))
                    end
                    return false, say(string.format('on %s: slot %d of row %d (ell[%d]) holds column %s, value %s; expected column %d, value %s: %s',
                        where, k, r, at, tostring(gc), lesson.show(gv), wc, lesson.show(wv), why.en),
                      string.format('在 %s 上：第 %d 行的第 %d 个槽位（ell[%d]）存的是列 %s、值 %s；应为列 %d、值 %s：%s',
                        where_zh, r, k, at, tostring(gc), lesson.show(gv), wc, lesson.show(wv), why.zh))
                  end
                else
                  pad = pad + 1
                  if gv ~= 0 or gc ~= 0 then
                    return false, say(string.format('on %s: slot %d of row %d (ell[%d]) is padding (the row has %d nonzeros) but holds column %s, value %s: padding is value 0, column 0, so the ELL kernel adds nothing for it',
                        where, k, r, at, len, tostring(gc), lesson.show(gv)),
                      string.format('在 %s 上：第 %d 行的第 %d 个槽位（ell[%d]）是填充（这一行只有 %d 个非零元），却存着列 %s、值 %s：填充的值为 0、列为 0，ELL 内核对它什么也不加',
                        where_zh, r, k, at, len, tostring(gc), lesson.show(gv)))
                  end
                end
              end
            end
            -- the COO part: the rest, in any order
            local want, n_rest = {}, 0
            for r = 0, m - 1 do
              for k = K, lengths[r + 1] - 1 do
                local i = csr.row_ptr[r + 1] + k + 1
                local key = r .. ',' .. csr.col_idx[i]
                want[key] = csr.val[i]
                n_rest = n_rest + 1
              end
            end
            if type(coo.row) == 'table' and next(coo.row) == nil and n_rest > 0 then
              return false, say(string.format('on %s: your COO part is empty, but %d nonzeros lie past the first K of their rows: without them the hybrid SpMV loses those products',
                  where, n_rest),
                string.format('在 %s 上：你的 COO 部分是空的，但有 %d 个非零元位于各自那一行的前 K 个之后：没有它们，混合 SpMV 就少算了这些乘积',
                  where_zh, n_rest))
            end
            for _, f in ipairs({ 'row', 'col', 'val' }) do
              local fault = list_fault(coo[f], n_rest, 'coo.' .. f)
              if fault then
                return false, say(string.format('on %s the COO part should hold the %d nonzeros past the first K of each row: %s', where, n_rest, fault.en),
                  string.format('在 %s 上 COO 部分应存放每行前 K 个之后的 %d 个非零元：%s', where_zh, n_rest, fault.zh))
              end
            end
            for i = 1, n_rest do
              local key = coo.row[i] .. ',' .. coo.col[i]
              if want[key] == nil or want[key] ~= coo.val[i] then
                return false, say(string.format('on %s: COO entry %d (row %s, column %s, value %s) is not a nonzero past the first K of its row: rows and columns are 0-based, like the kernels',
                    where, i, lesson.show(coo.row[i]), lesson.show(coo.col[i]), lesson.show(coo.val[i])),
                  string.format('在 %s 上：COO 的第 %d 个元素（行 %s，列 %s，值 %s）不是某一行前 K 个之后的非零元：行号和列号和内核里一样从 0 开始',
                    where_zh, i, lesson.show(coo.row[i]), lesson.show(coo.col[i]), lesson.show(coo.val[i])))
              end
              want[key] = nil
            end
            total_pad, total_coo = total_pad + pad, total_coo + n_rest
          end
          return true, say(string.format('right on %d matrices: ELL and COO together hold every nonzero once; %d padded slots, %d COO entries in all',
              #cases, total_pad, total_coo),
            string.format('在 %d 个矩阵上都对：ELL 和 COO 合起来恰好包含每个非零元一次；一共 %d 个填充槽位、%d 个 COO 元素',
              #cases, total_pad, total_coo))
        end,
        solution = [[
function split_hybrid(csr, K)
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for i = 1, m * K do
    ell.col[i] = 0
    ell.val[i] = 0
  end
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, last do
      local k = i - first
      if k < K then
        ell.col[k * m + r + 1] = csr.col_idx[i + 1]
        ell.val[k * m + r + 1] = csr.val[i + 1]
      else
        table.insert(coo.row, r)
        table.insert(coo.col, csr.col_idx[i + 1])
        table.insert(coo.val, csr.val[i + 1])
      end
    end
  end
  return ell, coo
end
]],
        wrong = {
          [[
function split_hybrid(csr, K)          -- the long rows cut off: no COO part
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for i = 1, m * K do ell.col[i] = 0; ell.val[i] = 0 end
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, math.min(last, first + K - 1) do
      ell.col[(i - first) * m + r + 1] = csr.col_idx[i + 1]
      ell.val[(i - first) * m + r + 1] = csr.val[i + 1]
    end
  end
  return ell, coo
end
]],
          [[
function split_hybrid(csr, K)          -- K + 1 slots: k <= K
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for i = 1, m * (K + 1) do ell.col[i] = 0; ell.val[i] = 0 end
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, last do
      local k = i - first
      if k <= K then
        ell.col[k * m + r + 1] = csr.col_idx[i + 1]; ell.val[k * m + r + 1] = csr.val[i + 1]
      else
        table.insert(coo.row, r); table.insert(coo.col, csr.col_idx[i + 1]); table.insert(coo.val, csr.val[i + 1])
      end
    end
  end
  return ell, coo
end
]],
          [[
function split_hybrid(csr, K)          -- padding not stored
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, last do
      local k = i - first
      if k < K then
        ell.col[k * m + r + 1] = csr.col_idx[i + 1]; ell.val[k * m + r + 1] = csr.val[i + 1]
      else
        table.insert(coo.row, r); table.insert(coo.col, csr.col_idx[i + 1]); table.insert(coo.val, csr.val[i + 1])
      end
    end
  end
  return ell, coo
end
]],
          [[
function split_hybrid(csr, K)          -- padding repeats the row's last value
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for k = 0, K - 1 do
      local i = math.min(first + k, last)
      ell.col[k * m + r + 1] = last >= first and csr.col_idx[i + 1] or 0
      ell.val[k * m + r + 1] = last >= first and csr.val[i + 1] or 0
    end
    for i = first + K, last do
      table.insert(coo.row, r); table.insert(coo.col, csr.col_idx[i + 1]); table.insert(coo.val, csr.val[i + 1])
    end
  end
  return ell, coo
end
]],
          [[
function split_hybrid(csr, K)          -- row by row, not slot by slot
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for i = 1, m * K do ell.col[i] = 0; ell.val[i] = 0 end
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, last do
      local k = i - first
      if k < K then
        ell.col[r * K + k + 1] = csr.col_idx[i + 1]; ell.val[r * K + k + 1] = csr.val[i + 1]
      else
        table.insert(coo.row, r); table.insert(coo.col, csr.col_idx[i + 1]); table.insert(coo.val, csr.val[i + 1])
      end
    end
  end
  return ell, coo
end
]],
          [[
function split_hybrid(csr, K)          -- COO rows 1-based
  local m = #csr.row_ptr - 1
  local ell = {col = {}, val = {}}
  local coo = {row = {}, col = {}, val = {}}
  for i = 1, m * K do ell.col[i] = 0; ell.val[i] = 0 end
  for r = 0, m - 1 do
    local first, last = csr.row_ptr[r + 1], csr.row_ptr[r + 2] - 1
    for i = first, last do
      local k = i - first
      if k < K then
        ell.col[k * m + r + 1] = csr.col_idx[i + 1]; ell.val[k * m + r + 1] = csr.val[i + 1]
      else
        table.insert(coo.row, r + 1); table.insert(coo.col, csr.col_idx[i + 1]); table.insert(coo.val, csr.val[i + 1])
      end
    end
  end
  return ell, coo
end
]],
        },
      },
    },
    -- 10 -----------------------------------------------------------------------------------
    {
      title = say('Conjugate gradient on your SpMV', '在你的 SpMV 上跑共轭梯度'),
      text = say([=[
Lecture 19 opens with the reason SpMV matters: iterative solvers such as conjugate gradient
(CG) solve A x = b for a sparse symmetric positive definite A, touching A only through y = A·p,
once per iteration. Here A is the 2-D Poisson matrix of a 16 x 16 grid (the 5-point Laplacian:
4 on the diagonal, -1 for each neighbour; 256 unknowns, 1216 nonzeros), and every product runs
your spmv_csr of step 5 on the emulator (the lesson's own kernel while yours is not right yet).

The code starts from steepest descent, which always steps along the residual r:

  x = 0, r = b, rr = r·r
  repeat until |r| <= tol·|b| or maxit iterations:
    p = r
    alpha = rr / (p·A p)
    x = x + alpha p;   r = r - alpha A p;   rr = r·r

CG keeps the direction p from one iteration to the next and makes each new one conjugate to the
old ones (p·A p_old = 0): start with p = r, and after r is updated

  beta = rr_new / rr_old      (the new residual's r·r over the previous one's)
  p = r + beta p

In exact arithmetic CG finishes in at most n iterations; on this matrix it needs a few dozen,
where steepest descent has not got far after 100. The residuals are plotted (log scale); the
arithmetic around the SpMV runs in Lua on the CPU.]=],
        [=[
第 19 讲一开头就说了 SpMV 为什么重要：共轭梯度（CG）这类迭代求解器对稀疏、对称正定的 A 求解
A x = b，只通过 y = A·p 接触 A，每次迭代一次。这里的 A 是 16 x 16 网格上的二维 Poisson 矩阵
（五点拉普拉斯：对角线上是 4，每个邻居是 -1；256 个未知数、1216 个非零元），每次乘法都在模拟器上
运行你在第 5 步写的 spmv_csr（你的还不对时，用本课自己的内核）。

代码从最速下降法开始，它总是沿着残差 r 走一步：

  x = 0, r = b, rr = r·r
  重复，直到 |r| <= tol·|b| 或迭代 maxit 次：
    p = r
    alpha = rr / (p·A p)
    x = x + alpha p;   r = r - alpha A p;   rr = r·r

CG 把方向 p 从一次迭代保留到下一次，并让每个新方向都与旧方向共轭（p·A p_old = 0）：开始时
p = r，在 r 更新之后

  beta = rr_new / rr_old      （新残差的 r·r 除以上一次的）
  p = r + beta p

在精确算术下 CG 至多 n 次迭代就结束；在这个矩阵上它只要几十次，而最速下降法走了 100 次还差得远。
残差画成曲线（对数坐标）；SpMV 之外的运算是在 CPU 上用 Lua 做的。]=]),
      code = [==[
-- the 2-D Poisson matrix of a 16 x 16 grid: 4 on the diagonal, -1 for each of the 4 neighbours
local g, rows, cols, vals = 16, {}, {}, {}
for i = 1, g do
  for j = 1, g do
    local r = (i - 1) * g + j
    for _, nb in ipairs({{i > 1, r - g}, {j > 1, r - 1}, {true, r}, {j < g, r + 1}, {i < g, r + g}}) do
      if nb[1] then rows[#rows + 1], cols[#cols + 1], vals[#vals + 1] = r, nb[2], nb[2] == r and 4 or -1 end
    end
  end
end
poisson = kernels.sparse{rows = rows, cols = cols, vals = vals, shape = {g * g, g * g}}
-- your spmv_csr (step 5) if it gives Lumen's product on this matrix, else the lesson's kernel
local function lesson_csr(t, row_ptr, col, val, x, y, m)
  local row = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if row < m then
    local dot = 0
    for i = row_ptr[row], row_ptr[row + 1] - 1 do dot = dot + val[i] * x[col[i]] end
    y[row] = dot
  end
end
local probe = lm.rand(g * g)
local fine, yours = pcall(run_csr, spmv_csr, poisson, probe)
local kernel = spmv_csr
if not fine or (yours - kernels.spmv(poisson, probe)):abs():max():item() > 1e-4 then
  kernel = lesson_csr
  print('(your spmv_csr does not give the right product yet: the lesson\'s kernel runs instead)')
end
launches = 0
function poisson_spmv(v)
  launches = launches + 1
  return (run_csr(kernel, poisson, v))
end
-- cg(spmv, b, tol, maxit) -> x, iterations, residuals {|r_0|, |r_1|, ...}
function cg(spmv, b, tol, maxit)
  local x = b * 0
  local r = b:clone()
  local rr = (r * r):sum():item()
  local stop = tol * math.sqrt(rr)
  local residuals = {math.sqrt(rr)}
  local k = 0
  while math.sqrt(rr) > stop and k < maxit do
    local p = r                  -- TODO: conjugate directions: keep p, p = r + beta p
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    rr = (r * r):sum():item()
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
local b = poisson_spmv(lm.ones(g * g))          -- so the solution is all ones
launches = 0
local x, iters, res = cg(poisson_spmv, b, 1e-5, 100)
viz.clear()
for k, v in ipairs(res) do viz.plot('poisson 16x16/|r| / |b|', k - 1, v / res[1]) end
local shown = {}
for k = 0, iters, 10 do shown[#shown + 1] = string.format('%d: %.1e', k, res[k + 1] / res[1]) end
print('|r| / |b| at iteration ' .. table.concat(shown, ', '))
print(string.format('%d iterations, %d SpMV launches (emulated); |r|/|b| = %.1e, max |x - 1| = %.1e (CPU, float32)',
  iters, launches, res[#res] / res[1], (x - 1):abs():max():item()))
]==],
      scene = { 'curves', scale = 'log', smoothing = 0 },
      exercise = {
        prompt = say([[
Turn `cg(spmv, b, tol, maxit)` into conjugate gradient: spmv(v) returns A·v, b is the right-hand
side; stop when |r| <= tol·|b| or after maxit iterations; return x, the number of iterations and
the residuals {|r_0|, |r_1|, ...} (one more than the iterations). It is checked on fresh random
symmetric positive definite systems and a small Poisson matrix (float64) against the check's own
CG: the same residuals, the same number of iterations, the same x. Then :run to see it on the
16 x 16 grid.]],
          [[
把 `cg(spmv, b, tol, maxit)` 改成共轭梯度：spmv(v) 返回 A·v，b 是右端项；当 |r| <= tol·|b| 或迭代
maxit 次后停止；返回 x、迭代次数和残差表 {|r_0|, |r_1|, ...}（比迭代次数多一个）。检查时用新的
随机对称正定方程组和一个小的 Poisson 矩阵（float64），与检查自己的 CG 对比：残差相同、迭代次数相同、
x 相同。之后 :run 看它在 16 x 16 网格上的表现。]]),
        hints = {
          say('p must live across iterations: local p = r:clone() before the loop, and no p = r inside it.',
            'p 必须跨迭代保留：在循环之前 local p = r:clone()，循环里不再 p = r。'),
          say('After r = r - alpha·Ap: local rr_new = (r * r):sum():item(); p = r + p * (rr_new / rr); rr = rr_new.',
            '在 r = r - alpha·Ap 之后：local rr_new = (r * r):sum():item(); p = r + p * (rr_new / rr); rr = rr_new。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'cg')
          if not ok then return false, fn end
          local function spd(n)
            local M = lm.randn(n, n, { dtype = 'float64' })
            return M:matmul(M:t()) / n + lm.eye(n):double() * 0.05
          end
          local pr, pc, pv = poisson_coo(5, 4)
          local P = kernels.sparse{ rows = pr, cols = pc, vals = pv, shape = { 20, 20 } }:dense():double()
          local cases = {
            { spd(7), 1e-8, 50, 'a random 7 x 7 SPD system', '一个随机的 7 x 7 对称正定方程组' },
            { P, 1e-8, 100, 'the Poisson matrix of a 5 x 4 grid', '5 x 4 网格的 Poisson 矩阵' },
            { spd(33), 1e-6, 200, 'a random 33 x 33 SPD system', '一个随机的 33 x 33 对称正定方程组' },
            { spd(20), 1e-10, 3, 'a random 20 x 20 SPD system, maxit = 3', '一个随机的 20 x 20 对称正定方程组，maxit = 3' },
          }
          for _, c in ipairs(cases) do
            local A, tol, maxit, what, what_zh = c[1], c[2], c[3], c[4], c[5]
            local n = A:size(1)
            local b = lm.randn(n, { dtype = 'float64' }) * 3
            local calls, too_many = 0, false
            local function spmv(v)
              calls = calls + 1
              if calls > maxit + 2 then too_many = true; error('too many products', 0) end
              return A:matmul(v)
            end
            local want_x, want_k, want_res = cg_ref(A, b, tol, maxit)
            local rok, x, k, res = lesson.try(fn, spmv, b:clone(), tol, maxit)
            if not rok then
              if too_many then
                return false, say(string.format('on %s (maxit = %d) your cg asked for more than %d products A·p and was stopped: does the loop stop after maxit iterations, and does r change (r = r - alpha·A p)?',
                    what, maxit, maxit + 2),
                  string.format('在%s（maxit = %d）上，你的 cg 要了超过 %d 次乘积 A·p，被停下了：循环在 maxit 次迭代后会停吗？r 会变吗（r = r - alpha·A p）？',
                    what_zh, maxit, maxit + 2))
              end
              return false, x
            end
            k = lesson.number(k)
            if not lm.is_tensor(x) or x:numel() ~= n or not k then
              return false, say('cg should return x (a tensor of n numbers), the number of iterations and the residuals',
                'cg 应该返回 x（n 个数的张量）、迭代次数和残差表')
            end
            local fault = list_fault(res, (k or 0) + 1, 'residuals')
            if type(res) == 'table' and not fault then
              for i = 1, #res do res[i] = lesson.number(res[i]) end
            end
            if fault then
              return false, say(string.format('on %s, after %d iterations: %s (|r_0| = |b| first, then one per iteration)', what, k, fault.en),
                string.format('在%s上，%d 次迭代之后：%s（先是 |r_0| = |b|，然后每次迭代一个）', what_zh, k, fault.zh))
            end
            if #res > 2 and res[2] == res[1] and res[#res] == res[1] then
              return false, say(string.format('on %s your residuals never change (%s): is r updated each iteration, r = r - alpha·A p?', what, lesson.show(res[1])),
                string.format('在%s上你的残差从来不变（%s）：每次迭代都更新 r 了吗，r = r - alpha·A p？', what_zh, lesson.show(res[1])))
            end
            local scale = want_res[1]
            for i = 1, math.min(#res, #want_res) do
              if math.abs(res[i] - want_res[i]) > 1e-4 * want_res[i] + 1e-12 * scale then
                local why
                if i == 1 then
                  why = say('|r_0| is |b|: x starts at 0, r at b', '|r_0| 就是 |b|：x 从 0 开始，r 从 b 开始')
                elseif i == 2 then
                  why = say('the first iteration is the same as steepest descent: alpha = r·r / (p·A p) with p = r, then r = r - alpha·A p',
                    '第一次迭代和最速下降法一样：p = r，alpha = r·r / (p·A p)，然后 r = r - alpha·A p')
                else
                  why = say('the first iteration is right, a later one is not: after r is updated, beta = rr_new / rr_old (the new r·r over the previous one) and p = r + beta p, p kept from the last iteration; alpha = r·r / (p·A p)',
                    '第一次迭代对了，后面的不对：在 r 更新之后，beta = rr_new / rr_old（新的 r·r 除以上一次的），p = r + beta p，p 沿用上一次迭代的；alpha = r·r / (p·A p)')
                end
                return false, say(string.format('on %s: |r_%d| is %s, CG gives %s: %s', what, i - 1, lesson.show(res[i]), lesson.show(want_res[i]), why.en),
                  string.format('在%s上：|r_%d| 是 %s，CG 得到 %s：%s', what_zh, i - 1, lesson.show(res[i]), lesson.show(want_res[i]), why.zh))
              end
            end
            if k ~= want_k then
              return false, say(string.format('on %s (tol %g, maxit %d) your cg stops after %d iterations, CG after %d: stop as soon as |r| <= tol·|b| (relative to |b| = %s, not to 1), or after exactly maxit iterations',
                  what, tol, maxit, k, want_k, lesson.show(scale)),
                string.format('在%s（tol %g，maxit %d）上你的 cg 迭代 %d 次后停下，CG 是 %d 次：一旦 |r| <= tol·|b| 就停（相对于 |b| = %s，而不是 1），或者恰好迭代 maxit 次后停',
                  what_zh, tol, maxit, k, want_k, lesson.show(scale)))
            end
            local cok, msg = lesson.compare(x, want_x, { tol = 1e-5,
              what = say('your x on ' .. what, '你在' .. what_zh .. '上的 x'),
              why = function()
                return say('the residuals are right but x is not: x = x + alpha·p, along the direction p',
                  '残差对了，x 却不对：x = x + alpha·p，沿着方向 p 走')
              end })
            if not cok then return false, msg end
          end
          return true, say('right: the same residuals, iterations and x as CG on four systems. :run shows it on the 16 x 16 Poisson grid',
            '对：在四个方程组上残差、迭代次数和 x 都和 CG 一样。:run 看它在 16 x 16 Poisson 网格上的表现')
        end,
        equivalent = {
          ['>= instead of > at line 9'] = say('|r| equal to tol·|b| to the last bit does not happen on random systems; stopping at <= or < is the same solver',
            '随机方程组上 |r| 不会恰好等于 tol·|b|（每一位都相同）；在 <= 还是 < 时停下是同一个求解器'),
        },
        solution = [[
function cg(spmv, b, tol, maxit)
  local x = b * 0
  local r = b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop = tol * math.sqrt(rr)
  local residuals = {math.sqrt(rr)}
  local k = 0
  while math.sqrt(rr) > stop and k < maxit do
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
        wrong = {
          [[
function cg(spmv, b, tol, maxit)        -- beta from the old residual: r·r taken before r moves
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop, residuals, k = tol * math.sqrt(rr), {math.sqrt(rr)}, 0
  while math.sqrt(rr) > stop and k < maxit do
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    local rr_new = (r * r):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    p = r + p * (rr_new / rr)
    rr = (r * r):sum():item()
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
          [[
function cg(spmv, b, tol, maxit)        -- r never updated
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop, residuals, k = tol * math.sqrt(rr), {math.sqrt(rr)}, 0
  while math.sqrt(rr) > stop do
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + p * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
          [[
function cg(spmv, b, tol, maxit)        -- alpha over p·p
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop, residuals, k = tol * math.sqrt(rr), {math.sqrt(rr)}, 0
  while math.sqrt(rr) > stop and k < maxit do
    local Ap = spmv(p)
    local alpha = rr / (p * p):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
          [[
function cg(spmv, b, tol, maxit)        -- an absolute test: |r| <= tol
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local residuals, k = {math.sqrt(rr)}, 0
  while math.sqrt(rr) > tol and k < maxit do
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + p * alpha
    r = r - Ap * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
          [[
function cg(spmv, b, tol, maxit)        -- x moved along r, not p
  local x, r = b * 0, b:clone()
  local p = r:clone()
  local rr = (r * r):sum():item()
  local stop, residuals, k = tol * math.sqrt(rr), {math.sqrt(rr)}, 0
  while math.sqrt(rr) > stop and k < maxit do
    local Ap = spmv(p)
    local alpha = rr / (p * Ap):sum():item()
    x = x + r * alpha
    r = r - Ap * alpha
    local rr_new = (r * r):sum():item()
    p = r + p * (rr_new / rr)
    rr = rr_new
    k = k + 1
    residuals[k + 1] = math.sqrt(rr)
  end
  return x, k, residuals
end
]],
        },
      },
    },
  },
}
