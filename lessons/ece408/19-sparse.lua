--[[
ECE408 Lectures 19 and 20: parallel sparse methods — SpMV, COO, CSR (by hand, then the student's
CSR kernel with kernels.launch), ELL and its padding, JDS and its sorted rows, and how the
longest row decides a block's time. Format: docs/lessons.md.
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
  },
}
