--[[
AI Computing Systems, chapter 4: the programming framework, following the notes in their order —
why a framework (NumPy's arrays are easy and fast but CPU-only; a framework packages deep
learning's basic operations as components that run on many devices, step 1); tensors of rank 0 to
n, their dtype, device, shape and strides, and views that share storage (a transpose launches no
kernel, a contiguous() copy does: seen with lm.graph.capture, step 2); operations, the op table
(lm.ops(), `lumen --ops`) and the dispatch from a Lua call to a device's loop (the student
predicts the loops one expression launches, checked against a capture's nodes: a counted view, a
forgotten fill of a scalar, op names for loops each refused and named, step 3); the computational
graph of y = w*x, as autograd records it (step 4, the graph scene); dynamic against static: one
model run eagerly and compiled with lm.compile (captured once, replayed, re-traced when a shape or
a Lua value changes, step 5); graph breaks (print, x:item()) and re-traces (the student rewrites a
function that reads a value on the host so that it compiles without a break, equals the reference
on new inputs, and re-traces exactly once for a new batch size, step 6); the notes' training flow
on a Fashion-MNIST subset, then saving and loading the state dict (the student's roundtrip,
checked against not loading, returning the same model, a model of other shapes, saving another
model, sharing tensors, step 7); PyTorch's four modules mapped to Lumen's parts (step 8).
Scenes: tensor (step 2), graph (step 4), curves (step 7).
Format: docs/lessons.md.
]]
local say = lesson.say
local show = lesson.show

-- ---------------------------------------------------------------- step 3: which loops run

-- The function the exercise asks about (the check captures its own copy, so a student who
-- redefines `head` does not change the answer).
local function head_ref(a, b) return (a:t() * 2 + b):relu():sum(2) end

local function true_loops()
  local a, b = lesson.rand(31, 1, 3, 4):float(), lesson.rand(32, 1, 4, 3):float()
  local g = lm.graph.capture(head_ref, a, b)
  local t = {}
  for i, n in ipairs(g.nodes) do t[i] = n.loop end
  return t, g
end

local function list_s(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = "'" .. tostring(v) .. "'" end
  return '{' .. table.concat(s, ', ') .. '}'
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function without(t, drop)
  local r = {}
  for _, v in ipairs(t) do if not drop[v] then r[#r + 1] = v end end
  return r
end

local OP_NAMES = { fill = true, mul = true, add = true, relu = true, sum = true, transpose = true, t = true }

local function check_loops(env, answer)
  local got = answer ~= nil and answer or env.loops
  if type(got) ~= 'table' or #got == 0 then
    return false, say('set loops to the list of loop families head(a, b) launches, in order, e.g. loops = {\'binary\', ...}',
      '把 loops 设为 head(a, b) 依次启动的循环族列表，例如 loops = {\'binary\', ...}')
  end
  for i, v in ipairs(got) do
    if type(v) ~= 'string' then
      return false, say(string.format('loops[%d] is a %s; each entry is a loop family\'s name, a string', i, type(v)),
        string.format('loops[%d] 是 %s；每一项都应是循环族的名字（字符串）', i, type(v)))
    end
  end
  local want = true_loops()
  if same(got, want) then
    return true, say(string.format('right: %d kernels, %s — what lm.graph.capture(head, a, b) records: the transpose is a view (no kernel), the Lua number 2 becomes a tensor by a fill, and each op\'s node runs its device\'s loop',
        #want, list_s(want)),
      string.format('对：%d 个内核，%s——正是 lm.graph.capture(head, a, b) 记录的：转置是视图（没有内核），Lua 数 2 先由 fill 变成张量，每个算子的节点运行设备上的一个循环',
        #want, list_s(want)))
  end
  local why
  local lower = {}
  for i, v in ipairs(got) do lower[i] = v:lower() end
  local named_ops = 0
  for _, v in ipairs(lower) do if OP_NAMES[v] and v ~= 'fill' then named_ops = named_ops + 1 end end
  local has = {}
  for _, v in ipairs(lower) do has[v] = true end
  if has.view or has.transpose or has.t then
    why = say('a transpose is a view: it changes the strides the next kernel reads and launches nothing (step 2: capturing x:t() records no node). Its loop in lm.ops() is \'view\': geometry only',
      '转置是视图：它只改变下一个内核读取时用的步长，不启动任何内核（第 2 步：捕获 x:t() 没有记录节点）。它在 lm.ops() 中的循环是 \'view\'：只有几何信息')
  elseif has.copy then
    why = say('nothing is copied: the mul reads a:t() through its strides (a binary loop takes any strides); a copy happens only where you ask for contiguous() or clone()',
      '没有复制：mul 通过步长直接读取 a:t()（二元循环接受任意步长）；只有调用 contiguous() 或 clone() 时才复制')
  elseif named_ops >= 2 then
    why = say('those are op names; give each node\'s loop family (the loop column of lm.ops(): unary, binary, reduce_dims, ...; a constant is made by the device\'s fill)',
      '这些是算子名；要写的是每个节点的循环族（lm.ops() 的 loop 列：unary、binary、reduce_dims……；常数由设备的 fill 生成）')
  elseif not has.fill and same(got, without(want, { fill = true })) then
    why = say('one kernel is missing before the mul: `* 2` multiplies by a tensor, and the Lua number 2 must first be written into one, by the device\'s fill loop',
      'mul 之前少了一个内核：`* 2` 乘的是一个张量，Lua 数 2 要先由设备的 fill 循环写进一个张量')
  elseif #got == #want then
    local i = 1
    while got[i] == want[i] do i = i + 1 end
    why = say(string.format('kernel %d is %s in your list; which op runs there, and what is its loop in lm.ops() (relu is elementwise on one input, add and mul on two, sum(2) reduces a dim)?',
        i, "'" .. got[i] .. "'"),
      string.format('你的列表中第 %d 个内核是 %s；那里运行的是哪个算子，它在 lm.ops() 中的循环是什么（relu 对一个输入逐元素，add 和 mul 对两个输入，sum(2) 沿一维归约）？',
        i, "'" .. got[i] .. "'"))
  else
    why = say('count the kernels one op at a time: t, * 2, + b, relu, sum(2) — which of them launch one, and does the number 2 need one of its own?',
      '一个算子一个算子地数：t、* 2、+ b、relu、sum(2)——哪些会启动内核，数 2 是否也需要一个自己的内核？')
  end
  return false, say(string.format('%s is not what runs (%d entries): %s', list_s(got), #got, why.en),
    string.format('%s 不是实际运行的（%d 项）：%s', list_s(got), #got, why.zh))
end

-- ---------------------------------------------------------------- step 6: compile without a break

local function scaled_ref(x, W) return (x / x:abs():max()):matmul(W):relu() end

-- inputs of 8 columns in [-1, 1] with one planted element that is the largest |value|: negative in
-- three of the four batches (so x:max() is not max |x|), of another size in each (so no constant
-- scale fits), in one row and one column (so a per-row or per-column scale differs)
local PLANTED = { { 2, 3, -3.5 }, { 4, 7, -2.25 }, { 6, 1, 4.0 }, { 9, 5, -1.75 } }
local function scaled_input(seed, rows, k)
  local x = lesson.rand(seed, 1, rows, 8):float()
  local p = PLANTED[k]
  x[{ p[1], p[2] }] = p[3]
  return x
end

local function check_scaled(env)
  local ok, fn = lesson.need(env, 'scaled')
  if not ok then return false, fn end
  local W = env.W
  if not lm.is_tensor(W) or W:dim() ~= 2 or W:size(1) ~= 8 then
    return false, say('W is no longer the 8 x 4 weight of the step\'s code: run the step again (:run!)',
      'W 已不再是本步代码中 8 x 4 的权值：请重新运行本步（:run!）')
  end
  local f = lm.compile(fn, nil, { quiet = true })
  local cases = { { 601, 5 }, { 602, 5 }, { 603, 9 }, { 604, 9 } }
  for k, c in ipairs(cases) do
    local x = scaled_input(c[1], c[2], k)
    local rok, got = lesson.try(f, x:clone())
    if not rok then
      return false, say('the compiled scaled(x) on a ' .. c[2] .. 'x8 batch: ' .. got.en,
        '编译后的 scaled(x) 在 ' .. c[2] .. 'x8 的批上：' .. (got.zh or got.en))
    end
    if f.broken then
      return false, say('lm.compile(scaled) broke the capture: ' .. tostring(f.broken) .. '. What Lua reads of a tensor\'s values (:item(), :tolist(), print) cannot be replayed: keep the scale a tensor (x:abs():max() is a 0-d tensor, and it broadcasts)',
        'lm.compile(scaled) 的捕获中断了：' .. tostring(f.broken) .. '。Lua 读出的张量数值（:item()、:tolist()、print）无法重放：让缩放因子保持为张量（x:abs():max() 是 0 维张量，可以广播）')
    end
    local want = scaled_ref(x, W)
    local what = say(string.format('compiled scaled(x) on batch %d (%dx8, call %d)', k, c[2], k),
      string.format('编译后的 scaled(x)，第 %d 批（%dx8，第 %d 次调用）', k, c[2], k))
    local cok, msg = lesson.compare(got, want, {
      what = what, tol = 1e-5,
      why = function()
        local function is(t) return lm.is_tensor(got) and same(got:shape(), t:shape()) and (got - t):abs():max():item() <= 1e-5 end
        local m = x:abs():max():item()
        if is((x / x:abs():max()):matmul(W)) then
          return say('that is the layer without its ReLU: (x / m):matmul(W):relu()', '这是少了 ReLU 的一层：(x / m):matmul(W):relu()')
        end
        local sign = PLANTED[k][3] < 0
        return say(string.format('every element of x is divided by one number, the largest |x| of the whole batch (%s here%s): not x:max(), not a maximum per row or column, not a constant',
            show(m), sign and ', the absolute value of a negative element' or ''),
          string.format('x 的每个元素都除以同一个数：整批中最大的 |x|（这里是 %s%s）；不是 x:max()，不是每行或每列的最大值，也不是常数',
            show(m), sign and '，一个负元素的绝对值' or ''))
      end })
    if not cok then return false, msg end
    local eok, eager = lesson.try(fn, x:clone())
    if eok and lm.is_tensor(eager) and same(eager:shape(), got:shape())
        and (eager - got):abs():max():item() > 1e-5 * (1 + got:abs():max():item()) then
      return false, say('the compiled result differs from scaled(x) run eagerly on the same batch: does scaled read something that changes between calls?',
        '编译后的结果与急切执行 scaled(x) 的结果不同：scaled 是否读了每次调用都会变的东西？')
    end
    if k == 2 or k == 4 then
      if not f.info.compiled then
        return false, say('call ' .. k .. ' has the shape of the call before it, yet it was not replayed (f.info.compiled is false): what changes between calls?',
          '第 ' .. k .. ' 次调用的形状与上一次相同，却没有重放（f.info.compiled 为 false）：两次调用之间有什么变了？')
      end
    end
  end
  local st = f.stats
  if st.retraces ~= 1 or st.captures ~= 2 then
    return false, say(string.format('four calls, two batch sizes (5 and 9): f.stats.captures = %d, retraces = %d; expected 2 and 1 (one re-trace, when 5x8 became 9x8)',
        st.captures, st.retraces),
      string.format('四次调用、两种批大小（5 和 9）：f.stats.captures = %d，retraces = %d；应为 2 和 1（5x8 变成 9x8 时重新追踪一次）',
        st.captures, st.retraces))
  end
  return true, say(string.format('right: no break, the replays equal the reference on new batches, and f.stats says %d captures, %d re-trace (%s); the scale stayed on the device, a 0-d tensor',
      st.captures, st.retraces, tostring(st.why[1])),
    string.format('对：没有中断，重放的结果在新批次上与参考一致，f.stats 显示 %d 次捕获、%d 次重新追踪（%s）；缩放因子留在设备上，是一个 0 维张量',
      st.captures, st.retraces, tostring(st.why[1])))
end

-- ---------------------------------------------------------------- step 7: save and load

local function check_model()
  local m = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
  local i = 700
  lm.no_grad(function()
    for _, p in ipairs(m:parameters()) do
      i = i + 1
      p:copy_(lesson.rand(i, 0.2, table.unpack(p:shape())):float())
    end
  end)
  return m
end

local function is_module(m)
  return type(m) == 'table' and type(m.state_dict) == 'function' and type(m.forward) == 'function'
end

local function check_roundtrip(env)
  local ok, fn = lesson.need(env, 'roundtrip')
  if not ok then return false, fn end
  local model = check_model()
  local path = os.tmpname()
  os.remove(path)
  local function done(...)
    os.remove(path)
    return ...
  end
  local x = lesson.rand(710, 1, 6, 1, 28, 28):float()
  local want = lm.no_grad(function() return model(x) end)
  local rok, m2 = lesson.try(fn, model, path)
  if not rok then
    local why = say('', '')
    if tostring(m2.en):find('size mismatch', 1, true) then
      why = say(' — the file was saved from a model of another architecture than the one it is loaded into: load it into make_model(), the architecture it came from',
        '——文件来自的模型与载入它的模型结构不同：应载入 make_model()，即文件来自的那种结构')
    end
    return done(false, say('roundtrip(model, path): ' .. m2.en .. why.en, 'roundtrip(model, path)：' .. (m2.zh or m2.en) .. why.zh))
  end
  if not is_module(m2) then
    return done(false, say('roundtrip(model, path) returns ' .. type(m2) .. '; return the new model, loaded from the file',
      'roundtrip(model, path) 返回的是 ' .. type(m2) .. '；应返回从文件加载的新模型'))
  end
  if rawequal(m2, model) then
    return done(false, say('roundtrip returns the model it was given: a reload makes a new model (make_model()) and loads the file into it, as a program that starts again would',
      'roundtrip 返回的是传进来的那个模型：重新加载要新建一个模型（make_model()），再把文件载入其中，就像程序重新启动时那样'))
  end
  local fh = io.open(path, 'rb')
  if not fh then
    return done(false, say('nothing was written at path: save the state dict there, lm.save(path, model:state_dict())',
      'path 处没有写入任何文件：应把状态字典存到那里，lm.save(path, model:state_dict())'))
  end
  fh:close()
  local lok, saved = pcall(lm.load, path)
  if not lok or type(saved) ~= 'table' or lm.is_tensor(saved) then
    return done(false, say('the file at path is not a state dict (a table of named tensors): save model:state_dict()',
      'path 处的文件不是状态字典（带名字的张量表）：应保存 model:state_dict()'))
  end
  for k, v in pairs(model:state_dict()) do
    local s = rawget(saved, k)
    if not lm.is_tensor(s) then
      return done(false, say(string.format('the file has no tensor \'%s\': save model:state_dict(), whose keys load_state_dict expects', k),
        string.format('文件里没有张量 \'%s\'：应保存 model:state_dict()，load_state_dict 要的就是它的键', k)))
    end
    if not same(s:shape(), v:shape()) or not lm.equal(s, v) then
      return done(false, say(string.format('the file\'s \'%s\' is not model\'s: did you save another model (a fresh one) instead of the one passed in?', k),
        string.format('文件中的 \'%s\' 不是 model 的：是不是保存了另一个模型（新建的），而不是传进来的那个？', k)))
    end
  end
  local gok, got = lesson.try(function() return lm.no_grad(function() return m2(x) end) end)
  if not gok then
    return done(false, say('the reloaded model on a batch of 6 images: ' .. got.en, '重新加载的模型处理 6 张图像的批：' .. (got.zh or got.en)))
  end
  if not lm.is_tensor(got) or not same(got:shape(), want:shape()) or not lm.equal(got, want) then
    return done(false, say('the file is right, but the model roundtrip returns gives other outputs than model on the same images: was the file loaded into it (m:load_state_dict(lm.load(path)))?',
      '文件是对的，但 roundtrip 返回的模型在同样的图像上输出与 model 不同：文件真的载入它了吗（m:load_state_dict(lm.load(path))）？'))
  end
  -- a reloaded model owns its tensors: changing the original must not change it
  lm.no_grad(function() model:parameters()[1]:add_(1) end)
  local after = lm.no_grad(function() return m2(x) end)
  if not lm.equal(after, want) then
    return done(false, say('the new model shares its tensors with model (changing model changed it): load_state_dict copies the values in; do not assign model\'s tensors',
      '新模型与 model 共享张量（改动 model 它也跟着变了）：load_state_dict 会把数值复制进去；不要直接把 model 的张量赋给它'))
  end
  return done(true, say('right: the file holds model\'s state dict, and a new model loaded from it gives the same outputs, bit for bit, with tensors of its own',
    '对：文件里是 model 的状态字典，从中加载的新模型输出逐位相同，而且张量是它自己的'))
end

-- ---------------------------------------------------------------- the steps' code

local WHY_CODE = [==[
-- One matrix product two ways: loops over Lua's own arrays, and one operation of the framework.
lm.manual_seed(1)
local n = 96
A, B = lm.randn(n, n), lm.randn(n, n)
local a, b = A:tolist(), B:tolist()
local t0 = lm.sys.clock()
local c = {}
for i = 1, n do
  c[i] = {}
  for j = 1, n do
    local s = 0
    for k = 1, n do s = s + a[i][k] * b[k][j] end
    c[i][j] = s
  end
end
local t_loops = lm.sys.clock() - t0
C = A:matmul(B)                        -- once to warm up, then timed over 20 calls
t0 = lm.sys.clock()
for _ = 1, 20 do C = A:matmul(B) end
local t_op = (lm.sys.clock() - t0) / 20
print(string.format('%dx%d matmul: Lua loops %.1f ms, A:matmul(B) %.3f ms (x%.0f)', n, n,
  1e3 * t_loops, 1e3 * t_op, t_loops / t_op))
print('the same numbers: ' .. tostring((lm.allclose(C, lm.tensor(c), 1e-4, 1e-4))))
-- the components: every operation is a row of one table, with a backward rule or not
local ops, with_grad = lm.ops(), 0
for _, r in ipairs(ops) do if r.backward then with_grad = with_grad + 1 end end
print(#ops .. ' operations, ' .. with_grad .. ' of them with a backward rule')
-- and where they run: the devices of this build
print('devices: cpu', lm.cuda.is_available() and 'cuda' or '(no cuda here)',
  lm.opencl.is_available() and 'opencl' or '(no opencl here)')
]==]

local TENSOR_CODE = [==[
s = lm.tensor(3.5)                     -- rank 0: a scalar
v = lm.tensor({1, 2, 3}, {dtype = 'float64'})   -- rank 1: a vector, of doubles
m = lm.arange(0, 6):view(2, 3)         -- rank 2: a matrix (integers: int64)
img = lm.zeros(2, 3, 4, 5)             -- rank 4: a batch of 2 images, 3 channels, 4x5 pixels
local function brace(t) return '{' .. table.concat(t, ', ') .. '}' end
for _, p in ipairs({{'s', s}, {'v', v}, {'m', m}, {'img', img}}) do
  local t = p[2]
  print(string.format('%-4s rank %d  shape %-14s stride %-14s %-8s %s', p[1], t:dim(), brace(t:shape()),
    brace(t:stride()), t:dtype(), t:device()))
end
mt = m:t()                             -- a view: the same storage, read with the strides swapped
print(string.format('m:t()  shape %s stride %s contiguous %s', brace(mt:shape()), brace(mt:stride()),
  tostring(mt:is_contiguous())))
mt[{1, 2}] = 100                       -- written through the view ...
print('m[2][1] is now ' .. m[{2, 1}]:item())     -- ... it is m's element
-- what runs: a transpose records no kernel; a contiguous copy records one
local g_view = lm.graph.capture(function(x) return x:t() end, m)
local g_copy = lm.graph.capture(function(x) return x:t():contiguous() end, m)
print(string.format('x:t() launches %d kernels; x:t():contiguous() launches %d (%s)', #g_view.nodes,
  #g_copy.nodes, g_copy.nodes[1].kind))
]==]

local OPS_CODE = [==[
-- some of the notes' operations, as rows of Lumen's op table
local want = {add = 1, sub = 1, mul = 1, div = 1, sin = 1, cos = 1, tanh = 1, where = 1, sort = 1,
  round = 1, ceil = 1, floor = 1, transpose = 1}
print(string.format('%-10s %-18s %s', 'op', 'backward', 'loop'))
for _, r in ipairs(lm.ops()) do
  if want[r.name] then print(string.format('%-10s %-18s %s', r.name, r.backward or '-', r.loop)) end
end
-- one Lua expression, as the nodes it hands to the device
a, b = lm.randn(4, 3), lm.randn(4, 3)
local g = lm.graph.capture(function(a, b) return (a + b):relu():sum() end, a, b)
print('(a + b):relu():sum() launches ' .. #g.nodes .. ' kernels:')
for i, n in ipairs(g.nodes) do print(string.format('  %d  %-5s %-6s loop %s', i, n.kind, n.op, n.loop)) end

-- Your turn: which loops does head(a, b) launch, in order? (a is 3x4, b is 4x3)
function head(a, b) return (a:t() * 2 + b):relu():sum(2) end
loops = {}                             -- your prediction, e.g. {'binary', ...}
]==]

local GRAPH_CODE = [==[
lm.manual_seed(4)
w = lm.randn(3, 4, {requires_grad = true})
x = lm.randn(4, 2)
y = w:matmul(x)                        -- the notes' y = w * x: one node, matmul, from w and x
loss = y:sum()
print('loss.grad_fn = ' .. loss.grad_fn:name() .. ', y.grad_fn = ' .. y.grad_fn:name())
local nf = y.grad_fn.next_functions
print('y.grad_fn.next_functions: w -> ' .. tostring(nf[1][1]) .. ', x -> ' .. tostring(nf[2][1]))
loss:backward()
print('w.grad == ones(3, 2) @ x^T: ' .. tostring((lm.allclose(w.grad, lm.ones(3, 2):matmul(x:t())))))
-- the kernels of one forward and backward, as a capture records them
w.grad = nil
local g = lm.graph.capture(function(x)
  local l = w:matmul(x):sum()
  l:backward()
  return l:detach()
end, x)
for i, n in ipairs(g.nodes) do print(string.format('  %d  %-5s %-7s loop %s', i, n.kind, n.op, n.loop)) end
]==]

local STATIC_CODE = [==[
lm.manual_seed(5)
W1, b1 = lm.randn(8, 16) * 0.4, lm.randn(16) * 0.1
Wh = lm.randn(16, 16) * 0.25
W2, b2 = lm.randn(16, 4) * 0.4, lm.randn(4) * 0.1
function net(x, depth)                 -- Lua decides, at every call, what runs
  local h = (x:matmul(W1) + b1):relu()
  for _ = 2, depth do h = (h:matmul(Wh) + b1):relu() end
  return h:matmul(W2) + b2
end
x5 = lm.randn(5, 8)
-- dynamic: each call runs its ops at once; another depth is simply other kernels
for _, d in ipairs({1, 3}) do
  print(string.format('eager net(x, %d): %d kernels', d, #lm.graph.capture(net, x5, d).nodes))
end
-- static: captured once, optimized, then replayed
f = lm.compile(net, nil, {quiet = true})
local y = f(x5, 2)
print(string.format('f(x, 2), call 1: captured %d kernels, %d after the passes', f.info.kernels,
  f.info.optimized_kernels))
local x5b = lm.randn(5, 8)
local y2 = f(x5b, 2)
print(string.format('f(x, 2), call 2: replayed (compiled = %s), %d kernels', tostring(f.info.compiled), f.info.kernels))
print('the replay equals eager: ' .. tostring((y2 - net(x5b, 2)):abs():max():item() == 0))
f(x5b, 3)                              -- another Lua value: a re-trace
f(lm.randn(9, 8), 3)                   -- another shape: a re-trace
print(string.format('calls %d, captures %d, re-traces %d: %s; %s', f.stats.calls, f.stats.captures,
  f.stats.retraces, f.stats.why[1], f.stats.why[2]))
]==]

local BREAK_CODE = [==[
-- a debugging print inside: eager prints at every call; a replay would not, so the capture stops
local fp = lm.compile(function(x)
  local h = (x:matmul(W1) + b1):relu()
  print('the mean of h:', h:mean())
  return h
end, nil, {quiet = true})
fp(x5)
print('broken: ' .. tostring(fp.broken))

W = lm.randn(8, 4) * 0.5
-- Your turn: scale the batch so that its largest |value| is 1, then a ReLU layer.
function scaled(x)
  local m = x:abs():max():item()       -- a Lua number: the host reads the tensor
  return (x / m):matmul(W):relu()
end
fs = lm.compile(scaled, nil, {quiet = true})
fs(lm.randn(5, 8))
print('broken: ' .. tostring(fs.broken))
]==]

local TRAIN_CODE = [==[
lm.manual_seed(7)
train_set = data.FashionMNIST{split = 'train', limit = 512}              -- 1. load the data
loader = data.DataLoader(train_set, {batch_size = 64, shuffle = true})
function make_model()                                                    -- 2. build the model
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
end
model = make_model()
local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
local step, first, last = 0, nil, nil
for epoch = 1, 3 do
  for x, y in loader:iter() do
    batch = x
    local loss = F.cross_entropy(model(x), y)                            -- 3. the loss
    opt:zero_grad()
    loss:backward()                                                      -- 4. the gradients
    opt:step()                                                           --    and the update
    step = step + 1
    first, last = first or loss:item(), loss:item()
    viz.plot('loss', step, last)
  end
end
print(string.format('%d steps: loss %.2f -> %.2f', step, first, last))
local path = os.tmpname()
lm.save(path, model:state_dict())                                        -- 5. save the model
local copy = make_model()
copy:load_state_dict(lm.load(path))
local keys = {}
for name in pairs(model:state_dict()) do keys[#keys + 1] = name end
print('saved: ' .. table.concat(keys, ', '))
print('the reloaded model gives the same outputs: ' .. tostring(lm.equal(copy(batch), model(batch))))
os.remove(path)

-- Your turn: save `model` to `path`, and return a new model loaded from that file.
function roundtrip(model, path)
  local fresh = make_model()
  return fresh
end
]==]

local MODULES_CODE = [==[
-- the notes' example, output = matmul(data, weight), as a layer: a bias, a scale left at 1, a ReLU
lm.manual_seed(8)
local data_t, weight, bias = lm.randn(4, 3), lm.randn(3, 2), lm.randn(2)
local function user_program(data, weight, bias)
  local output = lm.matmul(data, weight)
  return (output * 1 + bias):relu()
end
-- 1. graph construction: the user's program becomes the framework's graph
local g = lm.graph.capture(user_program, data_t, weight, bias)
local function show_graph(what)
  print(what .. ', ' .. #g.live .. (#g.live == 1 and ' kernel:' or ' kernels:'))
  for _, l in ipairs(g:lines()) do print('  ' .. l:gsub('%s*%-%-.*$', '')) end   -- without file:line
end
show_graph('the graph as built')
-- 3. deep-learning compilation: graph-level passes rewrite it
for _, r in ipairs(g:optimize()) do print('  ' .. r.pass .. ': ' .. r.text) end
show_graph('the graph optimized')
-- 4. graph execution: the program runs its kernels on the tensors' device
local out, info = g:run(data_t, weight, bias)
print(string.format('run on %s: %d kernel%s, equal to eager: %s', out:device(), info.kernels,
  info.kernels == 1 and '' or 's', tostring(lm.equal(out, user_program(data_t, weight, bias)))))
-- 2. distributed training: the same program on many devices, one process each (lumen.dist)
local dist = require 'lumen.dist'
print('lumen.dist initialized in this process: ' .. tostring(dist.is_initialized()) ..
  ' (mpirun -np N starts the ranks: lesson aics/05-distributed)')
]==]

return {
  title = say('The programming framework: tensors, operations, graphs', '编程框架：张量、操作与计算图'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 4: the programming framework',
    '智能计算系统 第 4 章：编程框架使用'),
  summary = say([[Why a framework; tensors and their views; operations and the dispatch from a Lua
call to a device's loop (the student predicts the kernels); the computational graph of y = w*x;
dynamic against static graphs, with lm.compile, graph breaks and re-traces (the student writes a
function that compiles without a break); the training flow, saving and loading a model (checked);
PyTorch's four modules in Lumen.]],
    [[为什么需要编程框架；张量及其视图；操作，以及从一次 Lua 调用到设备循环的分派（由你预测启动
哪些内核）；y = w*x 的计算图；动态图与静态图：lm.compile、图中断与重新追踪（由你写一个不中断的
函数）；训练流程，模型的保存与加载（有检查）；PyTorch 的四大模块在 Lumen 中的对应。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Why a programming framework', '为什么需要编程框架'),
      text = say([[
As deep-learning algorithms grew more complex, researchers spent more and more of their time
implementing them. A deep-learning programming framework packages the basic operations of deep
learning as a set of components: the algorithm developer builds existing models and new ones from
them, and the hardware programmer knows which few operations to optimize for a machine.

Before frameworks there were efficient libraries: NumPy for Python (its ndarray), Eigen, Torch.
NumPy is easy to use (operate on whole arrays, many built-in functions) and fast (its loops are
in C), but it runs on the CPU only; CuPy, Numba, PyCUDA and PyTorch came to run on GPUs.
PyTorch = Py + Torch: Facebook AI Research opened it in 2017, a Python library built on Torch with
GPU-accelerated tensors like NumPy's. Lumen is Torch's other way: a C engine scripted in Lua.

The code multiplies two 96 x 96 matrices twice: with three Lua loops over Lua's own arrays, and
with one operation of the framework. Then it counts the operations Lumen packages, and lists the
devices they can run on in this build.]],
        [[
随着深度学习研究的深入，深度学习算法变得愈加复杂，研究人员需要花更多的时间和精力在算法的实现
上。深度学习编程框架把深度学习算法中的基本操作封装成一系列组件：算法开发人员用它们更简单地实现
已有算法、设计新的算法；硬件程序员也能更有针对性地优化关键操作，充分发挥硬件的效率。

在编程框架之前，已有面向深度学习的高效编程库：Python 的 NumPy（数组类 ndarray）、Eigen、Torch。
NumPy 易用（直接对数组操作，提供大量内嵌函数）、高性能（大部分代码用 C 实现），但原生的 NumPy
只能在 CPU 上运行；为了在 GPU 上高效运行，出现了 CuPy、Numba、PyCUDA、PyTorch 等。PyTorch =
Py + Torch：2017 年由 Facebook AI Research 开源，是基于 Torch 的 Python 库，具有像 NumPy 一样、
又有 GPU 加速的张量计算能力。Lumen 走的是 Torch 的另一条路：用 C 写引擎，用 Lua 编写脚本。

代码把两个 96 x 96 的矩阵乘两次：一次用三重 Lua 循环遍历 Lua 自己的数组，一次用框架的一个操作。
然后数一数 Lumen 封装了多少个操作，并列出本机构建中它们能运行的设备。]]),
      code = WHY_CODE,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Tensors', '张量'),
      text = say([[
A tensor is the data carrier of the computational graph: every piece of data is a tensor, and
tensors flow along the graph's edges between its nodes. A tensor is an n-dimensional array; the
number of dimensions is its rank:

  rank   0        1        2        n
         scalar   vector   matrix   n-dimensional array

Unlike NumPy's ndarray, a framework's tensor also says where it lives (x:device(): the CPU, a GPU,
a deep-learning processor) and its element type (x:dtype()). Its shape says how many elements
along each dimension; its strides say how far apart, in the storage, two neighbours along each
dimension are.

A view is a tensor that shares another's storage and reads it with other strides: x:t() swaps
the strides and copies nothing, so writing through the view changes the original. lm.graph.capture
records every kernel a function launches; the last line of the code captures x:t() and
x:t():contiguous(): the view launches nothing, the contiguous copy launches a copy kernel. The
picture is the tensor scene of m:t(): its elements, its storage, its strides.]],
        [[
张量是计算图上的数据载体：所有数据都用张量表示，张量在计算图的节点之间传递、流动。张量可以看作
n 维数组，数组的维数即张量的阶数：

  阶数   0        1        2        n
         标量     向量     矩阵     n 维数组

与 NumPy 的 ndarray 不同，框架的张量还说明它在哪里（x:device()：CPU、GPU 或深度学习处理器）以及
元素类型（x:dtype()）。形状（shape）说明每一维有多少个元素；步长（stride）说明沿每一维相邻的两个
元素在存储中相隔多远。

视图是与另一个张量共享存储、用不同步长读取它的张量：x:t() 交换步长，什么也不复制，所以通过视图
写入会改变原张量。lm.graph.capture 记录一个函数启动的每个内核；代码最后一行捕获 x:t() 和
x:t():contiguous()：视图什么也不启动，contiguous 的复制启动一个 copy 内核。画面是 m:t() 的
tensor 场景：它的元素、存储和步长。]]),
      code = TENSOR_CODE,
      expect = [[
s    rank 0  shape {}             stride {}             float32  cpu
v    rank 1  shape {3}            stride {1}            float64  cpu
m    rank 2  shape {2, 3}         stride {3, 1}         int64    cpu
img  rank 4  shape {2, 3, 4, 5}   stride {60, 20, 5, 1} float32  cpu
m:t()  shape {3, 2} stride {1, 3} contiguous false
m[2][1] is now 100
x:t() launches 0 kernels; x:t():contiguous() launches 1 (copy)]],
      scene = function(env) return env.mt end,
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Operations, and what a call becomes', '操作，以及一次调用变成了什么'),
      text = say([[
A framework computes by operations on tensors: each takes some tensors as inputs and either
updates a tensor in place or makes new tensors as outputs. The notes' table lists common ones:
new_tensor, new_zeros / new_ones, grad, add / subtract / multiply / divide, bitwise and / or /
not, sin / cos / tanh, where(condition, x, y), to (dtype or device), sort, round / ceil / floor,
transpose. In Lumen every operation is one row of one list, src/ops/oplist.h: its name, its
backward rule, its parameters and the device loop it runs. lm.ops() returns the table; in a shell,
`lumen --ops` prints it with the dtypes each device runs.

What happens to one call, say a + b (docs/architecture.md, "The node and the device interface"):

- the Lua binding (src/lua/math.c: `+` is the __add metamethod) checks the arguments and calls the op, lm_binary(LM_ADD, a, b);
- the op (src/ops/binary.c) checks shapes and dtypes, allocates the result, and fills a node, an lmi_exec: the op, its parameters, the dtype, the inputs and outputs;
- lmi_compute (src/ops/common.c) asks the tensors' device supports_node(node), then runs compute(node);
- the device (src/backend/cpu/backend_cpu.c) picks the loop of the op's family — binary here — and src/backend/loops.c unpacks the node into that loop's call: the loop runs over the elements, whatever their strides.

A view has no loop (its family is 'view'); a Lua number in an expression becomes a tensor by the
device's fill (a buffer loop, beside copy and the random draws). The code prints some of the
notes' operations from lm.ops(), then the nodes of (a + b):relu():sum().]],
        [[
框架基于张量进行各种计算操作：每个操作接收若干个张量作为输入，完成后更新原张量，或生成新张量
作为输出。笔记中的常用操作表：new_tensor、new_zeros / new_ones、grad、add / subtract / multiply /
divide、bitwise_and / or / not、sin / cos / tanh、where(condition, x, y)、to（数据类型、设备类型
转换）、sort、round / ceil / floor、transpose。在 Lumen 中，每个操作是一张表 src/ops/oplist.h
中的一行：名字、反向规则、参数，以及它在设备上运行的循环。lm.ops() 返回这张表；在命令行中，
`lumen --ops` 把它连同各设备支持的数据类型一起打印出来。

一次调用（比如 a + b）经历了什么（docs/architecture.md，"The node and the device interface"）：

- Lua 绑定（src/lua/math.c：`+` 是元方法 __add）检查参数，调用操作 lm_binary(LM_ADD, a, b)；
- 操作（src/ops/binary.c）检查形状和数据类型，分配结果，填好一个节点 lmi_exec：操作、参数、数据类型、输入和输出；
- lmi_compute（src/ops/common.c）问张量所在的设备 supports_node(node)，然后运行 compute(node)；
- 设备（src/backend/cpu/backend_cpu.c）选出该操作所属族的循环——这里是 binary——由 src/backend/loops.c 把节点拆成这个循环的调用：循环按元素运行，不管步长如何。

视图没有循环（它的族是 'view'）；表达式中的 Lua 数由设备的 fill 变成张量（一个缓冲区循环，与
copy 和随机数生成并列）。代码从 lm.ops() 中打印笔记里的一些操作，再打印 (a + b):relu():sum()
的节点。]]),
      code = OPS_CODE,
      expect = [[
op         backward           loop
sin        SinBackward        unary
cos        CosBackward        unary
tanh       TanhBackward       unary
floor      FloorBackward      unary
ceil       CeilBackward       unary
round      RoundBackward      unary
add        AddBackward        binary
sub        SubBackward        binary
mul        MulBackward        binary
div        DivBackward        binary
where      WhereBackward      where
sort       SortBackward       sort
transpose  TransposeBackward  view
(a + b):relu():sum() launches 3 kernels:
  1  op    add    loop binary
  2  op    relu   loop unary
  3  op    sum    loop reduce_dims]],
      exercise = {
        prompt = say([[
Predict the kernels `head(a, b)` launches, in order: set `loops` to the list of their loop
families (the loop column of lm.ops(), or 'fill' / 'copy' for the device's buffer loops), e.g.
loops = {'binary', 'unary'}. The check captures head on fresh inputs and compares your list with
its nodes. Predict first; lm.graph.capture(head, a:t():contiguous(), b) tells you after.]],
          [[
预测 `head(a, b)` 依次启动的内核：把 `loops` 设为它们所属循环族的列表（lm.ops() 的 loop 列；
设备的缓冲区循环写 'fill' 或 'copy'），例如 loops = {'binary', 'unary'}。检查会在新的输入上捕获
head，把你的列表与它的节点比较。先预测；之后 lm.graph.capture(head, a:t():contiguous(), b) 会
告诉你答案。]]),
        hints = {
          say('Go op by op: a:t(), * 2, + b, :relu(), :sum(2). Which of them is a view?', '一个算子一个算子地看：a:t()、* 2、+ b、:relu()、:sum(2)。其中哪个是视图？'),
          say('The number 2 is not a tensor yet: the device fills one with it before the mul. Then mul and add are binary, relu unary, sum(2) reduce_dims.',
            '数 2 还不是张量：mul 之前设备先用它 fill 一个张量。然后 mul 和 add 是 binary，relu 是 unary，sum(2) 是 reduce_dims。'),
        },
        check = check_loops,
        solution = [[loops = {'fill', 'binary', 'binary', 'unary', 'reduce_dims'}]],
        wrong = {
          [[loops = {'binary', 'binary', 'unary', 'reduce_dims'}   -- the fill of 2 forgotten]],
          [[loops = {'view', 'fill', 'binary', 'binary', 'unary', 'reduce_dims'}   -- the transpose counted]],
          [[loops = {'copy', 'fill', 'binary', 'binary', 'unary', 'reduce_dims'}   -- the transpose copied]],
          [[loops = {'fill', 'mul', 'add', 'relu', 'sum'}   -- op names]],
          [[loops = {'fill', 'binary', 'binary', 'unary', 'unary'}]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('The computational graph: y = w * x', '计算图：y = w * x'),
      text = say([[
A framework describes a computation as a directed graph: a set of nodes (the operations) and
edges (the tensors between them), built from a high-level language (C++, Python; Lua here). The
graph is the structure of the neural network. The notes' example is y = w * x: one matmul node
whose edges come from w and x and lead to y.

Autograd records that graph while the code runs: a tensor made by an operation remembers it in
y.grad_fn (MatmulBackward), and grad_fn.next_functions leads to the nodes of its inputs — w, which
requires a gradient, ends in AccumulateGrad; x, which does not, in nothing. loss:backward() walks
the graph from the end and runs each node's backward rule: d loss / d w = ones(3, 2) @ x^T.

The backward rules are operations too: the capture of one forward and backward lists the forward
matmul and sum, then the backward's kernels — a fill (the gradient of a sum is ones), a matmul,
and a copy into w.grad. The picture is the graph scene of loss.]],
        [[
编程框架用有向图描述计算过程：一组节点（操作）和边（在它们之间传递的张量），可以用多种高级语言
构建（C++、Python；这里是 Lua）。计算图对应了神经网络的结构。笔记的例子是 y = w * x：一个
matmul 节点，边从 w 和 x 进来，通向 y。

自动微分在代码运行时记录这张图：由操作产生的张量在 y.grad_fn 中记住它（MatmulBackward），
grad_fn.next_functions 通向输入的节点——需要梯度的 w 终止于 AccumulateGrad，不需要梯度的 x 则
什么也没有。loss:backward() 从终点反向遍历这张图，运行每个节点的反向规则：d loss / d w =
ones(3, 2) @ x^T。

反向规则本身也是操作：捕获一次正向和反向，先列出正向的 matmul 和 sum，再列出反向的内核——一个
fill（求和的梯度是全 1）、一个 matmul，以及一个复制到 w.grad 的 copy。画面是 loss 的 graph 场景。]]),
      code = GRAPH_CODE,
      expect = [[
loss.grad_fn = SumBackward, y.grad_fn = MatmulBackward
y.grad_fn.next_functions: w -> AccumulateGrad, x -> nil
w.grad == ones(3, 2) @ x^T: true
  1  op    matmul  loop matmul
  2  op    sum     loop reduce_dims
  3  fill  fill    loop fill
  4  op    matmul  loop matmul
  5  copy  copy    loop copy]],
      scene = function(env) return env.loss end,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Static graphs and dynamic graphs', '静态图与动态图'),
      text = say([[
The notes compare two ways to run the graph:

  static graph                      dynamic graph
  define the whole graph, then run  run at once; the model may change
  optimized globally: faster        flexible, results at once, easy to debug
  hard to debug                     hard to optimize

Lumen runs dynamically by default: each Lua call launches its kernels at once, and Lua's own if
and for decide, call by call, what runs. net(x, depth) stacks `depth` hidden layers; the code
counts the kernels of depth 1 and depth 3: other Lua values, other kernels, nothing to declare.

lm.compile(net) makes it static. Its first call runs net eagerly under a capture, optimizes the
graph (the passes fuse each add with the relu after it, and each matmul takes the elementwise
kernel after it as its epilogue: one kernel per layer) and keeps the program; a later call with
the same shapes and Lua values replays the program without running net's Lua at all (f.info:
compiled = true), and gives the same numbers as eager. A call with another depth or another batch
size is a re-trace: net runs again under a capture and a new program is kept. f.stats counts the
calls, the captures and the re-traces, and says why each re-trace happened. Lesson aics/05
(the compiler) shows what the passes do.]],
        [[
笔记比较了运行计算图的两种方式：

  静态图                               动态图
  先定义整张图，再运行                 即时运行，网络模型可在运行时修改
  可以进行全局优化，运算更快           代码编写灵活，可立即获得结果，调试方便
  调试不方便                           优化不方便

Lumen 默认是动态的：每次 Lua 调用立刻启动它的内核，Lua 自己的 if 和 for 每次调用都决定运行什么。
net(x, depth) 堆叠 `depth` 个隐藏层；代码数一数 depth 为 1 和 3 时的内核：Lua 值不同，内核就不同，
什么都不用预先声明。

lm.compile(net) 把它变成静态的。第一次调用时在捕获下急切地运行 net，优化计算图（各个 pass 把每个
add 和其后的 relu 融合，再让每个 matmul 把其后的逐元素内核当作自己的尾声（epilogue）一起运行：
每层一个内核），保存程序；之后形状和 Lua 值都相同的调用直接重放程序，完全不运行 net 的
Lua 代码（f.info：compiled = true），结果与急切执行相同。换了深度或批大小的调用要重新追踪：
net 在捕获下再运行一次，保存新的程序。f.stats 统计调用、捕获和重新追踪的次数，并说明每次重新追踪
的原因。第 5 章的课（aics/05，编译器）讲这些 pass 做了什么。]]),
      code = STATIC_CODE,
      expect = [[
eager net(x, 1): 5 kernels
eager net(x, 3): 11 kernels
f(x, 2), call 1: captured 8 kernels, 3 after the passes
f(x, 2), call 2: replayed (compiled = true), 3 kernels
the replay equals eager: true
calls 4, captures 3, re-traces 2: n2 became n3; 5x8 became 9x8]],
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Graph breaks and re-traces', '图中断与重新追踪'),
      text = say([[
A capture records kernels, not Lua. So whatever Lua does with a value that only exists while the
function runs cannot be replayed, and the capture stops there, naming the place (a graph break);
the compiled function then runs eagerly, as the dynamic graph would:

- print and io.write inside the function (a replay would print nothing);
- a value read on the host: x:item(), x:tolist(), printing a tensor — Lua code that depends on the data (an if on it, a number computed from it) would be replayed with the first call's value.

The code first prints a value inside a compiled function, as one does to debug: the tensor is
printed, and f.broken names the line where the capture stopped. Then scaled(x) divides the batch
by its largest |value|, read with :item(): f.broken again says where. The fix keeps the value on the device: x:abs():max() is a 0-d tensor, and
dividing by it broadcasts. Shapes, dtypes and Lua arguments are different: they are the guard of
the program, so a change re-traces (step 5) instead of breaking.]],
        [[
捕获记录的是内核，而不是 Lua。所以 Lua 对一个只在函数运行时才存在的值所做的事情都无法重放，
捕获就在那里停下，并指出位置（图中断）；编译后的函数从此急切执行，就像动态图一样：

- 函数中的 print 和 io.write（重放时什么也不会打印）；
- 在主机上读取的值：x:item()、x:tolist()、打印张量——依赖数据的 Lua 代码（以它为条件的 if、由它算出的数）在重放时会用第一次调用时的值。

代码先像调试时那样，在编译的函数里打印一个值：张量被打印出来，f.broken 指出捕获停在哪一行。
然后 scaled(x) 把一批数据除以其中最大的 |值|，用 :item() 读出：f.broken 同样指出在哪里中断。改法是让这个值留在设备上：x:abs():max() 是 0 维张量，除以它会自动广播。形状、数据类型和 Lua
参数则不同：它们是程序的守卫条件，变了就重新追踪（第 5 步），而不会中断。]]),
      code = BREAK_CODE,
      exercise = {
        prompt = say([[
Rewrite `scaled(x)` (x: a batch of rows of 8; W: the step's 8 x 4 weight) so that lm.compile(scaled)
captures it without a break. The check compiles your scaled and calls it on batches of 5, 5, 9 and
9 rows: each result must equal (x / max |x|) @ W then ReLU, the second and fourth calls must be
replays, and f.stats must show 2 captures and 1 re-trace.]],
          [[
改写 `scaled(x)`（x：每行 8 个数的一批；W：本步的 8 x 4 权值），使 lm.compile(scaled) 能够无中断地
捕获它。检查编译你的 scaled，并在 5、5、9、9 行的批上调用：每次结果都要等于 (x / max |x|) @ W 再
ReLU，第二和第四次调用必须是重放，f.stats 必须显示 2 次捕获、1 次重新追踪。]]),
        hints = {
          say('Drop the :item(): what does x:abs():max() return without it?', '去掉 :item()：没有它，x:abs():max() 返回的是什么？'),
          say('A 0-d tensor divides a whole batch: local m = x:abs():max(); return (x / m):matmul(W):relu()',
            '0 维张量可以除整批数据：local m = x:abs():max(); return (x / m):matmul(W):relu()'),
        },
        check = check_scaled,
        solution = [[
function scaled(x)
  local m = x:abs():max()
  return (x / m):matmul(W):relu()
end
]],
        wrong = {
          [[
function scaled(x)   -- the largest value, not the largest |value|
  local m = x:max()
  return (x / m):matmul(W):relu()
end
]],
          [[
function scaled(x)   -- one scale per row
  local m = x:abs():max(2, true)
  return (x / m):matmul(W):relu()
end
]],
          [[
function scaled(x)   -- the number made a tensor again
  local m = lm.tensor(x:abs():max():item())
  return (x / m):matmul(W):relu()
end
]],
          [[
function scaled(x)   -- read as a table
  local m = 0
  for _, row in ipairs(x:abs():tolist()) do for _, v in ipairs(row) do m = math.max(m, v) end end
  return (x / m):matmul(W):relu()
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Training a model, saving it, loading it', '训练模型、保存与加载'),
      text = say([[
The notes' flow of training with a framework: load the training data, build the model, define the
loss function, compute the gradients and optimize, save the model; to predict, build the network
again, instantiate it, load the saved parameters and read new inputs.

The code follows it on 512 images of Fashion-MNIST: a DataLoader of batches of 64, a
784-32-10 MLP, cross_entropy, SGD with momentum for three epochs (the picture: the loss, step by
step). Then it saves the model: model:state_dict() is a table of named tensors ('2.weight',
'2.bias', ... — the positions in the Sequential), and lm.save writes it as a safetensors file.
Loading is the other way: a new model of the same architecture, lm.load(path), and
load_state_dict copies the values in, checking every name and shape. The reloaded model gives the
same outputs, bit for bit.]],
        [[
笔记中用框架训练的流程：加载训练数据集，构建模型，定义损失函数，梯度计算与优化，保存模型；预测
时再构建神经网络、实例化、载入保存的参数、读取新的输入。

代码在 Fashion-MNIST 的 512 张图像上走一遍：每批 64 张的 DataLoader，784-32-10 的 MLP，
cross_entropy，带动量的 SGD 训练三轮（画面：每一步的损失）。然后保存模型：model:state_dict() 是
一张带名字的张量表（'2.weight'、'2.bias'……——即在 Sequential 中的位置），lm.save 把它写成
safetensors 文件。加载则反过来：新建一个同样结构的模型，lm.load(path)，load_state_dict 把数值复制
进去，并检查每个名字和形状。重新加载的模型输出逐位相同。]]),
      code = TRAIN_CODE,
      scene = { 'curves', smoothing = 0 },
      exercise = {
        prompt = say([[
Complete `roundtrip(model, path)`: save model's state dict at path, then return a new model (from
make_model()) loaded from that file. The check passes a model of its own and a fresh path, reads
the file, and compares the returned model's outputs with model's on new images.]],
          [[
补全 `roundtrip(model, path)`：把 model 的状态字典保存到 path，再返回一个从该文件加载的新模型
（用 make_model() 新建）。检查会传入它自己的模型和一个新的路径，读取文件，并在新的图像上比较返回
的模型与 model 的输出。]]),
        hints = {
          say('Saving is one line: lm.save(path, model:state_dict()).', '保存只要一行：lm.save(path, model:state_dict())。'),
          say('Then: local m = make_model(); m:load_state_dict(lm.load(path)); return m', '然后：local m = make_model(); m:load_state_dict(lm.load(path)); return m'),
        },
        check = check_roundtrip,
        solution = [[
function roundtrip(model, path)
  lm.save(path, model:state_dict())
  local m = make_model()
  m:load_state_dict(lm.load(path))
  return m
end
]],
        wrong = {
          [[
function roundtrip(model, path)   -- saved, never loaded
  lm.save(path, model:state_dict())
  return make_model()
end
]],
          [[
function roundtrip(model, path)   -- loaded back into the same model
  lm.save(path, model:state_dict())
  model:load_state_dict(lm.load(path))
  return model
end
]],
          [[
function roundtrip(model, path)   -- a fresh model of other shapes
  lm.save(path, model:state_dict())
  local m = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
  m:load_state_dict(lm.load(path))
  return m
end
]],
          [[
function roundtrip(model, path)   -- the wrong model saved
  local m = make_model()
  lm.save(path, m:state_dict())
  m:load_state_dict(lm.load(path))
  return m
end
]],
          [[
function roundtrip(model, path)   -- the tensors shared, not loaded
  lm.save(path, model:state_dict())
  local m = make_model()
  m[2].weight, m[2].bias, m[4].weight, m[4].bias = model[2].weight, model[2].bias, model[4].weight, model[4].bias
  return m
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('PyTorch\'s four modules, in Lumen', 'PyTorch 的四大模块在 Lumen 中'),
      text = say([[
The notes divide PyTorch into four modules:

- graph construction: turns the user's program into the framework's raw computational graph, the framework's entry — in Lumen, autograd's recording and lm.graph.capture;
- distributed training: scales training and inference from one device to many, for larger networks — lumen.dist (all_reduce, DistributedDataParallel, pipelines; lesson aics/05-distributed);
- deep-learning compilation: optimizes the graph at the graph level and at the operator level, for speed on one device — the passes of g:optimize() (dead code, constant folding, common subexpressions, simplification, fusion) and lm.tune for the operators (lesson aics/05-compiler);
- graph execution: maps the optimized graph's tensors and operations onto a device and runs them, giving the framework's output — the program g:run() replays (src/ops/program.c), each node through its device's compute (step 3).

The notes' example is data and weight tensors and output = matmul(data, weight); the code makes it a
layer with a bias, a scale left at 1 and a relu, captures it, optimizes it and runs the program. The log lines
say which pass did what: constant folding computes the fill of the 1 once, at the capture;
simplification removes the `* 1`; fusion runs the add and the relu as one kernel, and anchor makes
that kernel the matmul's epilogue: the whole layer is one kernel, fused(matmul,add,relu), and the
product never goes to memory. (The notes' optimized graph, likewise, has an OptMatmul where the
raw graph had a Matmul.)]],
        [[
笔记把 PyTorch 分为四大模块：

- 计算图构建模块：完成从用户程序到编程框架内部原始计算图的转换，是编程框架的入口——在 Lumen 中是自动微分的记录和 lm.graph.capture；
- 分布式训练模块：应对更大规模的神经网络，把训练、推理任务从一台设备扩展到多台设备——lumen.dist（all_reduce、DistributedDataParallel、流水线；课程 aics/05-distributed）；
- 深度学习编译模块：对计算图分别进行图层级和算子层级的编译优化，提升单设备上的执行效率——g:optimize() 的各个 pass（死代码消除、常量折叠、公共子表达式消除、代数化简、融合），以及面向算子的 lm.tune（课程 aics/05-compiler）；
- 计算图执行模块：把优化后的计算图中的张量和操作映射到指定设备上具体执行，并给出编程框架的输出——g:run() 重放的程序（src/ops/program.c），每个节点都经过其设备的 compute（第 3 步）。

笔记的例子是张量 data 和 weight，以及 output = matmul(data, weight)；代码把它写成一层：加上
偏置、一个保持为 1 的缩放和一个 relu，捕获它、优化它，然后运行程序。日志的每一行说明哪个 pass 做了
什么：常量折叠在捕获时就把 1 的 fill 算好；代数化简去掉 `* 1`；融合把 add 和 relu 合成一个内核运行，
anchor 再把这个内核作为 matmul 的尾声（epilogue）：整层只有一个内核 fused(matmul,add,relu)，乘积
根本不写回内存。（笔记中优化后的计算图也一样：原始图中的 Matmul 换成了 OptMatmul。）]]),
      code = MODULES_CODE,
      expect = [[
the graph as built, 5 kernels:
    1  matmul #1 -> 4x2                         v1 v2 -> v4
    2  fill #2 -> ()                             -> v5
    3  mul #3 -> 4x2                            v4 v5 -> v6
    4  add #4 -> 4x2                            v6 v3 -> v7
    5  relu #5 -> 4x2                           v7 -> v8
  fold: fill #2 -> (): reads only constants; computed once, at the capture
  simplify: mul #3 -> 4x2: x * 1 = x
  fuse: 2 elementwise nodes (add, relu) over 4x2 run as one kernel, writing 1 result
  anchor: matmul #1 runs with its epilogue as one kernel (matmul, add, relu), writing 1 value
the graph optimized, 1 kernel:
    1  fused(matmul,add,relu)                   v1 v2 v3 -> v8
run on cpu: 1 kernel, equal to eager: true
lumen.dist initialized in this process: false (mpirun -np N starts the ranks: lesson aics/05-distributed)]],
    },
  },
}
