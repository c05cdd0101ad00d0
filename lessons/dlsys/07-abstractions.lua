--[[
dlsys Lecture 7: neural network library abstractions — one two-layer network written three ways:
Caffe 1.0's layers with forward and backward by hand, TensorFlow 1.0's static graph (define, then
run with feeds; gradients as more nodes of the graph), PyTorch's dynamic autograd (the graph
scene stepping backward); then the high-level components: the student's nn.Module and SGD step
(checked against optim.SGD on the same numbers), and module + loss + optimizer + data loader
together on a Fashion-MNIST subset with live curves. Format: docs/lessons.md.
]]
local say = lesson.say

-- The checks' own reference: relu(x W1) W2 with Lua loops over plain numbers.
local function two_layer_ref(x, w1, w2)
  local X, A, B = x:double():tolist(), w1:double():tolist(), w2:double():tolist()
  local out = {}
  for i = 1, #X do
    local h = {}
    for j = 1, #A[1] do
      local s = 0
      for k = 1, #A do s = s + X[i][k] * A[k][j] end
      h[j] = s > 0 and s or 0
    end
    out[i] = {}
    for j = 1, #B[1] do
      local s = 0
      for k = 1, #B do s = s + h[k] * B[k][j] end
      out[i][j] = s
    end
  end
  return lm.tensor(out, { dtype = 'float64' })
end

local function shape_str(t) return '[' .. table.concat(t:shape(), ', ') .. ']' end

return {
  title = say('Neural network library abstractions', '神经网络库的抽象'),
  course = 'dlsys',
  lecture = say('CMU Deep Learning Systems, Lecture 7: neural network library abstractions',
    'CMU 深度学习系统 第 7 讲：神经网络库的抽象'),
  summary = say([[The same two-layer network in the styles of Caffe 1.0 (layers with forward and
backward), TensorFlow 1.0 (a static graph, then run) and PyTorch (dynamic autograd), then the
modules, the optimizer and the data loader that libraries build on top.]],
    [[同一个两层网络，分别用 Caffe 1.0（手写前向和反向的层）、TensorFlow 1.0（先定义静态图再运行）
和 PyTorch（动态自动微分）的方式写一遍，再看库在此之上搭起来的模块、优化器和数据加载器。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('One network, three frameworks', '一个网络，三种框架'),
      text = say([[
A framework's programming abstractions are the common way it lets you define, extend and run a
model. After the fact the choices look obvious; it pays to follow the thinking, to learn why an
abstraction is built the way it is and how to design a new one. The lecture compares three:
Caffe 1.0, TensorFlow 1.0 and PyTorch.

To compare them on equal terms we write the same network each time: 8 examples with 4 features,
a hidden layer of 6 ReLU units, 3 classes and softmax cross-entropy,

  loss = cross_entropy(relu(X W1) W2, y)

Here it is in plain tensor operations, with no gradients yet. The seed fixes the numbers, so all
three versions start from the same W1 and W2.]],
        [[
框架的编程抽象，就是它让你定义、扩展和执行模型计算的通用方式。事后看，这些设计选择似乎
理所当然；但弄清楚当初的思考过程很有用：既能明白抽象为什么这样设计，也能学会怎样设计
新的抽象。这一讲对比三个框架：Caffe 1.0、TensorFlow 1.0 和 PyTorch。

为了公平比较，三次都写同一个网络：8 个样本、每个 4 个特征，一个有 6 个 ReLU 单元的隐藏层，
3 个类别，用 softmax 交叉熵作损失：

  loss = cross_entropy(relu(X W1) W2, y)

下面先用普通的张量运算把它写出来，暂时不求梯度。随机种子固定了数值，所以三个版本都从同样的
W1 和 W2 出发。]]),
      code = [[
lm.manual_seed(7)
X = lm.randn(8, 4)                          -- 8 examples, 4 features
y = lm.tensor({1, 3, 2, 2, 1, 3, 3, 1})     -- their classes, 1-based
W1 = lm.randn(4, 6) * 0.5
W2 = lm.randn(6, 3) * 0.5
local logits = X:matmul(W1):relu():matmul(W2)
print('logits', table.concat(logits:shape(), ' x '))
print(string.format('loss %.4f', F.cross_entropy(logits, y):item()))
]],
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Caffe 1.0: layers with forward and backward', 'Caffe 1.0：带前向和反向的层'),
      text = say([[
Caffe 1.0 (like cuda-convnet, the framework of AlexNet) is built from layers. Each layer
defines its forward computation and its backward (gradient) computation:

  class Layer:
    def forward(bottom, top): pass
    def backward(top, propagate_down, bottom): pass

Data flows through blobs: a blob holds `data` (the values) and `diff` (the gradient of the loss
with respect to them). forward reads the bottom blob and writes the top one; backward reads
top.diff and writes bottom.diff and the gradients of the layer's own parameters. Nothing is
automatic: whoever writes a layer writes its derivative by hand, here the three rules

  InnerProduct  top = bottom W         dW = bottom^T dtop, dbottom = dtop W^T
  ReLU          top = max(bottom, 0)   dbottom = dtop * (bottom > 0)
  SoftmaxLoss   loss = mean(-log p_y)  dlogits = (p - onehot(y)) / N

The network is a list of layers run in order, then backward in reverse order.]],
        [[
Caffe 1.0（和 AlexNet 所用的框架 cuda-convnet 一样）由层构成。每一层都要定义前向计算和反向
（梯度）计算：

  class Layer:
    def forward(bottom, top): pass
    def backward(top, propagate_down, bottom): pass

数据放在 blob 里流动：blob 有 `data`（数值）和 `diff`（损失对这些数值的梯度）。forward 读底部
的 blob、写顶部的 blob；backward 读 top.diff，写出 bottom.diff 以及本层参数的梯度。这里没有任何
自动的东西：谁写一个层，谁就要亲手写出它的导数，这里就是三条规则：

  InnerProduct  top = bottom W         dW = bottom^T dtop, dbottom = dtop W^T
  ReLU          top = max(bottom, 0)   dbottom = dtop * (bottom > 0)
  SoftmaxLoss   loss = mean(-log p_y)  dlogits = (p - onehot(y)) / N

网络就是一串层：先按顺序做前向，再按相反的顺序做反向。]]),
      code = [[
-- Layer{new=, forward=, backward=}: a class; calling it makes a layer
local function Layer(methods)
  return function(...) return setmetatable(methods.new(...), {__index = methods}) end
end
InnerProduct = Layer{
  new = function(W) return {W = {data = W}} end,
  forward = function(self, bottom, top) top.data = bottom.data:matmul(self.W.data) end,
  backward = function(self, top, propagate_down, bottom)
    self.W.diff = bottom.data:t():matmul(top.diff)
    if propagate_down then bottom.diff = top.diff:matmul(self.W.data:t()) end
  end }
ReLU = Layer{
  new = function() return {} end,
  forward = function(self, bottom, top) top.data = bottom.data:relu() end,
  backward = function(self, top, _, bottom) bottom.diff = top.diff * bottom.data:gt(0):float() end }
SoftmaxLoss = Layer{
  new = function(labels) return {y = labels} end,
  forward = function(self, bottom, top)
    self.p = F.softmax(bottom.data, 2)
    top.data = F.cross_entropy(bottom.data, self.y)
  end,
  backward = function(self, _, _, bottom)
    bottom.diff = (self.p - F.one_hot(self.y, 3):float()) / self.y:numel()
  end }
-- blobs x -> h -> a -> logits -> loss, and the layers between them
blobs = {x = {data = X}, h = {}, a = {}, logits = {}, loss = {}}
net = {{layer = InnerProduct(W1), bottom = 'x', top = 'h'},
       {layer = ReLU(), bottom = 'h', top = 'a'},
       {layer = InnerProduct(W2), bottom = 'a', top = 'logits'},
       {layer = SoftmaxLoss(y), bottom = 'logits', top = 'loss'}}
for _, l in ipairs(net) do l.layer:forward(blobs[l.bottom], blobs[l.top]) end
for i = #net, 1, -1 do local l = net[i]; l.layer:backward(blobs[l.top], i > 1, blobs[l.bottom]) end
caffe = {loss = blobs.loss.data:item(), dW1 = net[1].layer.W.diff, dW2 = net[3].layer.W.diff}
print(string.format('Caffe: loss %.4f, |dW1| %.4f, |dW2| %.4f', caffe.loss, caffe.dW1:norm():item(),
  caffe.dW2:norm():item()))
]],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('TensorFlow 1.0: define the graph, then run it', 'TensorFlow 1.0：先定义计算图，再运行'),
      text = say([[
TensorFlow 1.0 separates describing a computation from doing it. You first build a static
computational graph: placeholders for the inputs, variables for the parameters, ops between
them. Nothing is computed yet. Then a session runs the graph: you ask for the values you want
(fetches) and give the placeholders their values (feeds):

  v1 = tf.Variable(); v2 = tf.exp(v1); v3 = v2 + 1; v4 = v2 * v3
  sess = tf.Session()
  value4 = sess.run(v4, feed_dict={v1: numpy.array([1])})

Because the whole graph is known before it runs, the framework can optimise it (fuse ops, plan
memory) and run only the part the fetches need. The price: the program you debug is not the
program that runs, and an `if` on a value must be written as a graph op. Below, a small graph
library of our own: `node` appends to the graph, `run(fetches, feeds)` evaluates what the fetches
need, in the order the graph was built. Note how the ops are values (tables), not calls that
compute.]],
        [[
TensorFlow 1.0 把“描述计算”和“执行计算”分开。先构建一张静态计算图：输入用占位符，参数用变量，
中间是各种运算。这时什么都没有算。然后由会话（session）来运行这张图：你说出想要的值
（fetches），并给占位符喂入数据（feeds）：

  v1 = tf.Variable(); v2 = tf.exp(v1); v3 = v2 + 1; v4 = v2 * v3
  sess = tf.Session()
  value4 = sess.run(v4, feed_dict={v1: numpy.array([1])})

因为运行之前整张图都已知，框架可以对它做优化（融合算子、规划内存），也可以只运行 fetches
需要的那一部分。代价是：你调试的程序并不是真正运行的程序，而且依赖数值的 `if` 也得写成图里的
运算。下面是我们自己写的一个小小的计算图库：`node` 往图里追加节点，`run(fetches, feeds)` 按建图
的顺序求出 fetches 需要的那些节点。注意，这里的运算是值（表），而不是立刻计算的调用。]]),
      code = [[
graph = {}
function node(op, ...)
  local n = {op = op, inputs = {...}, id = #graph + 1}
  graph[n.id] = n
  return n
end
function placeholder(name) local n = node('placeholder'); n.name = name; return n end
function variable(value) local n = node('variable'); n.value = value; return n end
ops = {   -- how each op computes, given its inputs' values
  matmul = function(a, b) return a:matmul(b) end,
  relu = function(a) return a:relu() end,
  softmax_loss = function(logits, labels) return F.cross_entropy(logits, labels) end,
}
function run(fetches, feeds)
  local need, values = {}, {}
  local function mark(n)
    if need[n.id] then return end
    need[n.id] = true
    for _, i in ipairs(n.inputs) do mark(i) end
  end
  for _, f in ipairs(fetches) do mark(f) end
  for id, n in ipairs(graph) do           -- the build order is a topological order
    if need[id] then
      if n.op == 'placeholder' then values[id] = assert(feeds[n.name], 'no feed for ' .. n.name)
      elseif n.op == 'variable' then values[id] = n.value
      else
        local args = {}
        for k, i in ipairs(n.inputs) do args[k] = values[i.id] end
        values[id] = ops[n.op](table.unpack(args))
      end
    end
  end
  local out = {}
  for k, f in ipairs(fetches) do out[k] = values[f.id] end
  return table.unpack(out)
end
-- define ...
x, labels = placeholder('x'), placeholder('labels')
w1, w2 = variable(W1), variable(W2)
logits = node('matmul', node('relu', node('matmul', x, w1)), w2)
loss = node('softmax_loss', logits, labels)
print(#graph .. ' nodes defined, nothing computed yet')
-- ... then run, with feeds
print(string.format('TF-style: loss %.4f', run({loss}, {x = X, labels = y}):item()))
]],
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Gradients as more nodes of the graph', '梯度也是图里的节点'),
      text = say([[
In TensorFlow 1.0 the gradient is not computed by running something backward: tf.gradients
extends the graph with new nodes that compute it, the backward rules applied symbolically, node
by node in reverse order. The gradient is then one more fetch of the same run, and the graph of
gradients can itself be optimised (or differentiated again). `gradients(loss, {w1, w2})` below
walks the graph from the loss down, adds a gradient node for each input of each node, and sums
the contributions where a value is used twice. One `run` then gives the loss and both gradients;
they agree with Caffe's hand-written backward to rounding.]],
        [[
在 TensorFlow 1.0 里，梯度不是靠“反向运行一遍”算出来的：tf.gradients 会给图添上新的节点来计算
梯度，也就是把反向规则以符号的方式、按相反的顺序逐个节点地套用。于是梯度只是同一次运行里
多取的一个值，而梯度构成的图本身也可以被优化（甚至再求一次导）。下面的
`gradients(loss, {w1, w2})` 从损失出发往下走，为每个节点的每个输入添一个梯度节点；一个值被用了
两次的地方，就把两份贡献加起来。然后一次 `run` 同时给出损失和两个梯度；它们和 Caffe 手写的
反向结果只差舍入误差。]]),
      code = [[
-- for each op: the gradient nodes of its inputs, given the gradient node g of its output
local grad_rules = {
  matmul = function(n, g) local a, b = n.inputs[1], n.inputs[2]
    return {node('matmul', g, node('transpose', b)), node('matmul', node('transpose', a), g)} end,
  relu = function(n, g) return {node('relu_grad', g, n.inputs[1])} end,
  softmax_loss = function(n) return {node('softmax_loss_grad', n.inputs[1], n.inputs[2])} end,
}
local more_ops = {
  transpose = function(a) return a:t() end,
  add = function(a, b) return a + b end,
  relu_grad = function(g, a) return g * a:gt(0):float() end,
  softmax_loss_grad = function(z, labels)
    return (F.softmax(z, 2) - F.one_hot(labels, z:size(2)):float()) / labels:numel() end,
}
for name, f in pairs(more_ops) do ops[name] = f end
function gradients(root, wrt)
  local grads, order, seen = {}, {}, {}
  local function visit(n)           -- inputs before the nodes that use them
    if seen[n.id] then return end
    seen[n.id] = true
    for _, i in ipairs(n.inputs) do visit(i) end
    order[#order + 1] = n
  end
  visit(root)
  for k = #order, 1, -1 do          -- from the loss down: each node's gradient is complete here
    local n = order[k]
    local rule = grad_rules[n.op]
    if rule and (n == root or grads[n.id]) then
      for j, gi in ipairs(rule(n, grads[n.id])) do
        local input = n.inputs[j]
        grads[input.id] = grads[input.id] and node('add', grads[input.id], gi) or gi
      end
    end
  end
  local out = {}
  for k, w in ipairs(wrt) do out[k] = grads[w.id] end
  return out
end
local before = #graph
dw = gradients(loss, {w1, w2})
print(string.format('gradients() added %d nodes (the graph has %d)', #graph - before, #graph))
local l, g1, g2 = run({loss, dw[1], dw[2]}, {x = X, labels = y})
tf = {loss = l:item(), dW1 = g1, dW2 = g2}
print(string.format('TF-style vs Caffe: loss %.4f, max |dW1 diff| %.1e, max |dW2 diff| %.1e',
  tf.loss, (tf.dW1 - caffe.dW1):abs():max():item(), (tf.dW2 - caffe.dW2):abs():max():item()))
]],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('PyTorch: the graph is built as the code runs', 'PyTorch：计算图在代码运行时建成'),
      text = say([[
PyTorch (and Chainer before it) runs each operation at once, as ordinary code, and records on
the way what it did: each result remembers the op that made it (`grad_fn`) and that op's inputs.
The graph is built dynamically, by running the forward pass, so a Lua `if` or loop on a value is
just an `if`, and what you debug is what runs. `loss:backward()` then walks the recorded graph in
reverse, applying each op's backward rule: the same rules Caffe asks you to write, now written
once inside the library. This is Lumen's way too: W1 and W2 require grad, the forward is plain
tensor code, backward fills W1.grad and W2.grad, and they match the other two.

The picture is the autograd graph of this loss. Step through it (arrows): each step runs one
node's backward rule in the order `backward` runs them, and the gradients travel back along the
edges until they reach W1 and W2.]],
        [[
PyTorch（以及在它之前的 Chainer）每个运算都立即执行，就是普通的代码，同时把做过的事记录下来：
每个结果都记得是哪个运算得到了它（`grad_fn`），以及这个运算的输入。计算图是在运行前向的过程中
动态建成的，所以对数值的 Lua `if` 或循环就只是普通的 `if`，你调试的就是实际运行的程序。
`loss:backward()` 随后沿着记录下来的图反向走，逐个套用每个运算的反向规则：这些规则和 Caffe
要你手写的是同一套，只不过现在在库里写一次就够了。Lumen 也是这样：W1 和 W2 需要梯度，前向就是
普通的张量代码，backward 填好 W1.grad 和 W2.grad，结果和前两种写法一致。

画面是这个损失的自动微分计算图。用方向键单步：每一步按 `backward` 的顺序执行一个节点的反向
规则，梯度沿着边往回传，直到到达 W1 和 W2。]]),
      code = [[
W1p = W1:clone():requires_grad_()
W2p = W2:clone():requires_grad_()
function forward_pt() return F.cross_entropy(X:matmul(W1p):relu():matmul(W2p), y) end
local l = forward_pt()
print('the loss was made by ' .. l.grad_fn)
l:backward()
print(string.format('PyTorch-style vs Caffe: loss %.4f, max |dW1 diff| %.1e, max |dW2 diff| %.1e',
  l:item(), (W1p.grad - caffe.dW1):abs():max():item(), (W2p.grad - caffe.dW2):abs():max():item()))
]],
      scene = function(env) return env.forward_pt() end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('High-level components: nn.Module', '高层组件：nn.Module'),
      text = say([[
On top of automatic differentiation a library offers modular components, each a reusable piece
of a model or of its training: the module (a piece of the hypothesis with its parameters), the
loss function, the optimizer, the initialization, the data loader. A module holds its
parameters, and `model:parameters()` finds them all, recursively, so that an optimizer can
update them without knowing the model. In Lumen, as in PyTorch, a tensor that requires grad
assigned to a field of a module is registered as a parameter; any other tensor is a plain field,
which the optimizer never sees.

The class below is a start: it makes W1 and W2, but as plain tensors. Run
`print(#TwoLayer(4, 6, 3):parameters())` to see what the optimizer would get.]],
        [[
在自动微分之上，库还提供模块化的组件，每一个都是模型或训练过程中可以复用的一块：模块
（假设函数的一部分，连同它的参数）、损失函数、优化器、初始化、数据加载器。模块持有自己的参数，
`model:parameters()` 会递归地把它们全部找出来，这样优化器不需要了解模型就能更新参数。在 Lumen
里，和 PyTorch 一样，把一个需要梯度的张量赋给模块的字段，它就被登记为参数；其他张量只是普通
字段，优化器永远看不到。

下面的类只是个开头：它生成了 W1 和 W2，可它们只是普通张量。运行
`print(#TwoLayer(4, 6, 3):parameters())` 看看优化器会拿到什么。]]),
      code = [[
TwoLayer = nn.Module:extend('TwoLayer')
function TwoLayer:__init(n_in, n_hidden, n_out)
  self.W1 = lm.randn(n_in, n_hidden) / math.sqrt(n_in)     -- TODO: parameters require grad
  self.W2 = lm.randn(n_hidden, n_out) / math.sqrt(n_hidden)
end
function TwoLayer:forward(x)
  return x:matmul(self.W1):matmul(self.W2)                  -- TODO: the ReLU
end
print(TwoLayer(4, 6, 3))
]],
      exercise = {
        prompt = say([[
Finish `TwoLayer`: `TwoLayer(n_in, n_hidden, n_out)` has two parameters, W1 (n_in x n_hidden) and
W2 (n_hidden x n_out), each N(0, 1) / sqrt(fan in), and `forward(x)` returns relu(x W1) W2 for x
of shape (N, n_in).]],
          [[
把 `TwoLayer` 写完：`TwoLayer(n_in, n_hidden, n_out)` 有两个参数，W1（n_in x n_hidden）和
W2（n_hidden x n_out），各自取 N(0, 1) / sqrt(扇入)；`forward(x)` 对形状为 (N, n_in) 的 x 返回
relu(x W1) W2。]]),
        hints = {
          say('lm.randn(n_in, n_hidden):div(math.sqrt(n_in)):requires_grad_() makes a tensor that is registered.',
            'lm.randn(n_in, n_hidden):div(math.sqrt(n_in)):requires_grad_() 得到的张量会被登记为参数。'),
          say('forward: x:matmul(self.W1):relu():matmul(self.W2)', 'forward：x:matmul(self.W1):relu():matmul(self.W2)'),
        },
        check = function(env)
          local ok, cls = lesson.need(env, 'TwoLayer', 'table')
          if not ok then return false, cls end
          for _, c in ipairs({ { 4, 6, 3, 8 }, { 1, 1, 1, 1 }, { 7, 5, 2, 3 }, { 3, 9, 4, 5 } }) do
            local n_in, n_h, n_out, n = c[1], c[2], c[3], c[4]
            local mok, m = lesson.try(cls, n_in, n_h, n_out)
            if not mok then return false, m end
            if not nn.is_module(m) then
              return false, say('TwoLayer(...) should give a module (TwoLayer = nn.Module:extend(\'TwoLayer\'))',
                'TwoLayer(...) 应该得到一个模块（TwoLayer = nn.Module:extend(\'TwoLayer\')）')
            end
            local ps = m:parameters()
            if #ps ~= 2 then
              return false, say(string.format('TwoLayer(%d, %d, %d):parameters() has %d tensors, expected 2 (W1 and W2): a tensor is a parameter only when it requires grad',
                  n_in, n_h, n_out, #ps),
                string.format('TwoLayer(%d, %d, %d):parameters() 里有 %d 个张量，应该是 2 个（W1 和 W2）：只有需要梯度的张量才是参数',
                  n_in, n_h, n_out, #ps))
            end
            local w1, w2 = m.W1, m.W2
            if not (lm.is_tensor(w1) and lm.is_tensor(w2)) or shape_str(w1) ~= string.format('[%d, %d]', n_in, n_h)
                or shape_str(w2) ~= string.format('[%d, %d]', n_h, n_out) then
              return false, say(string.format('for TwoLayer(%d, %d, %d), W1 should be [%d, %d] and W2 [%d, %d]', n_in, n_h, n_out,
                  n_in, n_h, n_h, n_out),
                string.format('对 TwoLayer(%d, %d, %d)，W1 应该是 [%d, %d]，W2 应该是 [%d, %d]', n_in, n_h, n_out, n_in, n_h, n_h, n_out))
            end
            local x = lm.randn(n, n_in)
            local fok, out = lesson.try(function() return m(x) end)
            if not fok then return false, out end
            if not lm.is_tensor(out) then
              return false, say('forward(x) should return a tensor', 'forward(x) 应该返回一个张量')
            end
            if shape_str(out) ~= string.format('[%d, %d]', n, n_out) then
              return false, say(string.format('forward on a [%d, %d] input returned shape %s, expected [%d, %d]: one row of %d scores per example',
                  n, n_in, shape_str(out), n, n_out, n_out),
                string.format('在 [%d, %d] 输入上 forward 返回的形状是 %s，应为 [%d, %d]：每个样本一行，共 %d 个分数',
                  n, n_in, shape_str(out), n, n_out, n_out))
            end
            local want = two_layer_ref(x, w1, w2)
            local cok, msg = lesson.compare(out, want, { what = say(string.format('your forward on a [%d, %d] input', n, n_in),
                string.format('你的 forward 在 [%d, %d] 输入上的结果', n, n_in)),
              why = function() return say('is there a ReLU between the two matrix products, and only there?',
                '两次矩阵乘法之间有 ReLU 吗？而且只有那里有？') end })
            if not cok then return false, msg end
            local bok, berr = lesson.try(function() out:sum():backward() end)
            if not bok then return false, berr end
            if not (w1.grad and w2.grad) then
              return false, say('after backward W1.grad or W2.grad is nil: does forward use self.W1 and self.W2?',
                'backward 之后 W1.grad 或 W2.grad 是 nil：forward 用的是 self.W1 和 self.W2 吗？')
            end
            local s1 = w1:detach():std():item() * math.sqrt(n_in)
            if n_in * n_h >= 20 and (s1 < 0.4 or s1 > 2.5) then
              return false, say(string.format('W1\'s entries have std %.3g; N(0, 1) / sqrt(%d) has std %.3g', s1 / math.sqrt(n_in),
                  n_in, 1 / math.sqrt(n_in)),
                string.format('W1 的元素标准差是 %.3g；N(0, 1) / sqrt(%d) 的标准差是 %.3g', s1 / math.sqrt(n_in), n_in, 1 / math.sqrt(n_in)))
            end
          end
          return true, say('right: two registered parameters, and the forward of step 1',
            '对：两个登记好的参数，前向和第 1 步一样')
        end,
        solution = [[
TwoLayer = nn.Module:extend('TwoLayer')
function TwoLayer:__init(n_in, n_hidden, n_out)
  self.W1 = lm.randn(n_in, n_hidden):div(math.sqrt(n_in)):requires_grad_()
  self.W2 = lm.randn(n_hidden, n_out):div(math.sqrt(n_hidden)):requires_grad_()
end
function TwoLayer:forward(x)
  return x:matmul(self.W1):relu():matmul(self.W2)
end
]],
        wrong = {
          [[
TwoLayer = nn.Module:extend('TwoLayer')
function TwoLayer:__init(n_in, n_hidden, n_out)
  self.W1 = lm.randn(n_in, n_hidden):div(math.sqrt(n_in)):requires_grad_()
  self.W2 = lm.randn(n_hidden, n_out):div(math.sqrt(n_hidden)):requires_grad_()
end
function TwoLayer:forward(x)
  return x:matmul(self.W1):matmul(self.W2)
end
]],
          [[
TwoLayer = nn.Module:extend('TwoLayer')
function TwoLayer:__init(n_in, n_hidden, n_out)
  self.W1 = lm.randn(n_in, n_hidden):div(math.sqrt(n_in)):requires_grad_()
  self.W2 = lm.randn(n_hidden, n_out):div(math.sqrt(n_hidden)):requires_grad_()
end
function TwoLayer:forward(x)
  return x:matmul(self.W1):relu():matmul(self.W2):relu()
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('The optimizer: an SGD step by hand', '优化器：亲手写一步 SGD'),
      text = say([[
An optimizer takes the list of parameters and, after each backward, updates them from their
gradients. It keeps its own state per parameter: for SGD with momentum a buffer, the running
velocity. PyTorch's rule (optim.SGD, dampening 0):

  buf = grad                      on the first step
  buf = momentum * buf + grad     after that
  p   = p - lr * buf

Write it with Lumen's primitives. Two things matter besides the formula: the update must change
the parameter tensors in place (the module and the optimizer share them; a new tensor in your
list would leave the model untouched), and it must not be recorded by autograd, so it runs
inside lm.no_grad. The check runs your step and optim.SGD side by side on copies of the same
parameters with the same gradients, for four steps.]],
        [[
优化器拿到参数列表，每次反向之后根据梯度更新参数。它为每个参数保存自己的状态：带动量的 SGD
保存一个缓冲区，即累积的“速度”。PyTorch 的规则（optim.SGD，dampening 为 0）是：

  buf = grad                      第一步
  buf = momentum * buf + grad     之后每一步
  p   = p - lr * buf

用 Lumen 的基本运算把它写出来。除了公式，还有两点要紧：更新必须原地修改参数张量（模块和优化器
共享这些张量；往你的列表里放一个新张量，模型本身不会变）；更新不能被自动微分记录下来，所以要
放在 lm.no_grad 里做。检查时会拿同样的参数副本、同样的梯度，让你的更新和 optim.SGD 并排跑
四步。]]),
      code = [[
-- sgd_step(params, lr, momentum, state): one SGD step on each p of params that has a gradient;
-- state[i] keeps the momentum buffer of params[i] from one call to the next
function sgd_step(params, lr, momentum, state)
  lm.no_grad(function()
    for i, p in ipairs(params) do
      if p.grad then p:sub_(p.grad * lr) end   -- TODO: the momentum buffer in state[i]
    end
  end)
end
local m = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
local state = {}
for it = 1, 3 do
  m:zero_grad()
  local loss = F.cross_entropy(m(X), y)
  loss:backward()
  sgd_step(m:parameters(), 0.5, 0.9, state)
  print(string.format('step %d: loss %.4f', it, loss:item()))
end
]],
      exercise = {
        prompt = say([[
Complete `sgd_step(params, lr, momentum, state)` so that calling it after each backward gives the
same parameters as optim.SGD(params, {lr = lr, momentum = momentum}).]],
          [[
把 `sgd_step(params, lr, momentum, state)` 补完整，使得每次反向之后调用它，得到的参数和
optim.SGD(params, {lr = lr, momentum = momentum}) 一样。]]),
        hints = {
          say('First call: state[i] = p.grad:clone(). Later: state[i]:mul_(momentum):add_(p.grad). Then p:sub_(state[i] * lr).',
            '第一次调用：state[i] = p.grad:clone()。之后：state[i]:mul_(momentum):add_(p.grad)。然后 p:sub_(state[i] * lr)。'),
          say('momentum = 0 is plain SGD: no buffer needed.', 'momentum = 0 就是普通 SGD：不需要缓冲区。'),
        },
        check = function(env)
          local ok, step = lesson.need(env, 'sgd_step')
          if not ok then return false, step end
          for _, c in ipairs({ { 0.1, 0.9 }, { 0.05, 0 }, { 0.3, 0.5 } }) do
            local lr, mom = c[1], c[2]
            local shapes = { { 3, 4 }, { 5 }, { 1, 1 } }
            local mine, ref = {}, {}
            for k, s in ipairs(shapes) do
              local t = lm.randn(s, { dtype = 'float64' })
              mine[k] = t:clone():requires_grad_()
              ref[k] = t:clone():requires_grad_()
            end
            local keep = { table.unpack(mine) }
            local opt = optim.SGD(ref, { lr = lr, momentum = mom })
            local state, before = {}, {}
            for it = 1, 4 do
              for k, s in ipairs(shapes) do
                local g = lm.randn(s, { dtype = 'float64' })
                mine[k].grad = g:clone()
                ref[k].grad = g:clone()
                before[k] = mine[k]:detach():clone()
              end
              local sok, serr = lesson.try(step, mine, lr, mom, state)
              if not sok then return false, serr end
              opt:step()
              for k = 1, #shapes do
                if mine[k] ~= keep[k] or (keep[k]:detach() - before[k]):abs():max():item() == 0 then
                  return false, say('the parameter tensors you were given did not change: update each p in place (p:sub_(...)) inside lm.no_grad',
                    '传给你的参数张量没有变：要在 lm.no_grad 里原地更新每个 p（p:sub_(...)）')
                end
                local cok, msg = lesson.compare(keep[k]:detach(), ref[k]:detach(), { tol = 1e-9,
                  what = say(string.format('parameter %d after step %d (lr %g, momentum %g)', k, it, lr, mom),
                    string.format('第 %d 步之后的参数 %d（lr %g，momentum %g）', it, k, lr, mom)),
                  why = function(i, got)
                    if it == 1 then return say('on the first step buf is the gradient itself: is the update p - lr * grad?',
                      '第一步 buf 就是梯度本身：更新是 p - lr * grad 吗？') end
                    local plain = (before[k] - keep[k].grad * lr):reshape(-1)[i]:item()
                    if math.abs(got - plain) <= 1e-9 * math.max(1, math.abs(plain)) then
                      return say('that is p - lr * grad: your step ignores the momentum buffer (state[i], carried from call to call)',
                        '那正是 p - lr * grad：你的更新没有用上动量缓冲区（state[i]，要在多次调用之间保留）')
                    end
                    return say('from the second step: buf = momentum * buf + grad (no (1 - momentum) factor), kept in state[i]',
                      '从第二步起：buf = momentum * buf + grad（没有 (1 - momentum) 这个因子），保存在 state[i] 里')
                  end })
                if not cok then return false, msg end
              end
            end
          end
          return true, say('right: your step and optim.SGD agree on every parameter for four steps',
            '对：四步里你的更新和 optim.SGD 在每个参数上都一致')
        end,
        solution = [[
function sgd_step(params, lr, momentum, state)
  lm.no_grad(function()
    for i, p in ipairs(params) do
      if p.grad then
        local d = p.grad
        if momentum ~= 0 then
          if state[i] then state[i]:mul_(momentum):add_(d) else state[i] = d:clone() end
          d = state[i]
        end
        p:sub_(d * lr)
      end
    end
  end)
end
]],
        wrong = {
          [[
function sgd_step(params, lr, momentum, state)
  lm.no_grad(function()
    for i, p in ipairs(params) do
      if p.grad then
        state[i] = state[i] and state[i] * momentum + p.grad * (1 - momentum) or p.grad:clone()
        p:sub_(state[i] * lr)
      end
    end
  end)
end
]],
          [[
function sgd_step(params, lr, momentum, state)
  for i, p in ipairs(params) do
    if p.grad then
      state[i] = state[i] and state[i] * momentum + p.grad or p.grad:clone()
      params[i] = (p - state[i] * lr):detach():requires_grad_()
    end
  end
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Putting the components together', '把组件拼起来'),
      text = say([[
With the components in place a training loop reads the same in every model: a data loader
gives batches (shuffled, and preprocessed: here normalized to mean 0 and std 1 with the data
set's statistics), the module computes the logits, the loss function the loss, backward the
gradients, the optimizer the update. Here they train a two-layer network on 1,000 Fashion-MNIST images for
three epochs (30 steps, a few seconds); the picture is the live loss curve, drawn by viz.plot as
the loop runs, and the accuracy on 500 test images after each epoch. The full run, 60,000
images and ten epochs, is `lumen examples/mlp_fashion.lua --epochs 10 --viz` (--viz: the curves).]],
        [[
组件齐了之后，不管什么模型，训练循环读起来都一样：数据加载器给出一个个批次（打乱顺序并做
预处理：这里用数据集的统计量归一化到均值 0、标准差 1），模块算出 logits，损失函数算出损失，
backward 算出梯度，优化器完成更新。这里用它们在 1,000 张 Fashion-MNIST 图像上训练一个两层
网络，跑三个 epoch（30 步，几秒钟）；画面是训练时由 viz.plot 实时画出的损失
曲线，以及每个 epoch 之后在 500 张测试图像上的准确率。完整版本（60,000 张图像，十个 epoch）
是 `lumen examples/mlp_fashion.lua --epochs 10 --viz`（--viz 显示曲线）。]]),
      code = [[
lm.manual_seed(1)
local train = data.FashionMNIST{split = 'train', limit = 1000}
local test = data.FashionMNIST{split = 'test', limit = 500}
-- the loader shuffles, batches and preprocesses (here: Fashion-MNIST's mean and std)
local normalize = data.Normalize(0.2860, 0.3530)
local loader = data.DataLoader(train, {batch_size = 100, shuffle = true, transform = normalize})
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
local loss_fn = nn.CrossEntropyLoss()
local opt = optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})
viz.clear()
local step = 0
for epoch = 1, 3 do
  for xb, yb in loader:iter() do
    local loss = loss_fn(model(xb), yb)
    opt:zero_grad()
    loss:backward()
    opt:step()
    step = step + 1
    viz.plot('train/loss', step, loss)
  end
  local tx, ty = normalize(test.tensors[1]), test.tensors[2]
  local acc = lm.no_grad(function() return model(tx):argmax(2):eq(ty):float():mean():item() end)
  viz.plot('test/accuracy', step, acc)
  print(string.format('epoch %d, %d steps: test accuracy %.1f%% on %d images (CPU)', epoch,
    step, 100 * acc, #test))
end
]],
      scene = 'curves',
    },
  },
}
