--[[
AI Computing Systems, chapter 2: from linear regression to the MLP — a line fitted by least squares,
the loss surface as curves, gradient descent and its learning rate, many variables through the
normal equations (the student's least_squares, checked against a QR reference), the perceptron and
the sigmoid neuron, the two-layer MLP's forward and backward passes written out and checked
against autograd (the student writes the hidden layer's backward), under- and over-fitting on a
Fashion-MNIST subset with train/test curves, and regularization. Format: docs/lessons.md.
]]
local say = lesson.say
local f64 = { dtype = 'float64' }

-- Least squares by QR (modified Gram-Schmidt on the design matrix [X, 1]), in plain Lua: the
-- reference the exercise's check compares with, computed another way than the normal equations.
local function qr_lstsq(X, y)
  local m, n = X:size(1), X:size(2)
  local rows, yv = X:tolist(), y:tolist()
  local cols = {}
  for j = 1, n + 1 do
    cols[j] = {}
    for i = 1, m do cols[j][i] = j <= n and rows[i][j] or 1 end
  end
  local R = {}
  for j = 1, n + 1 do
    R[j] = {}
    for k = 1, j - 1 do
      local d = 0
      for i = 1, m do d = d + cols[k][i] * cols[j][i] end
      R[k][j] = d
      for i = 1, m do cols[j][i] = cols[j][i] - d * cols[k][i] end
    end
    local s = 0
    for i = 1, m do s = s + cols[j][i] ^ 2 end
    s = math.sqrt(s)
    R[j][j] = s
    for i = 1, m do cols[j][i] = cols[j][i] / s end
  end
  local qty = {}
  for j = 1, n + 1 do
    local d = 0
    for i = 1, m do d = d + cols[j][i] * yv[i] end
    qty[j] = d
  end
  local w = {}
  for j = n + 1, 1, -1 do
    local s = qty[j]
    for k = j + 1, n + 1 do s = s - R[j][k] * w[k] end
    w[j] = s / R[j][j]
  end
  local b = table.remove(w)
  return w, b
end

-- The gradient of J(w, b) = 1/(2m) sum (X w + b - y)^2 at (w, b): the largest component of
-- dJ/dw, and dJ/db (the mean residual).
local function gradient(X, y, w, b)
  local r = X:matmul(w) + b - y
  local gw = X:t():matmul(r) / X:size(1)
  return gw:abs():max():item(), r:mean():item()
end

-- Random features for the check: m points of n features, and targets with noise.
local function regression_case(m, n)
  local X = lm.randn(m, n, f64)
  local wt = lm.randn(n, f64) * 2
  local y = X:matmul(wt) + 1.5 + lm.randn(m, f64) * 0.3
  return X, y
end

-- The reference gradients of the two-layer MLP by autograd (float64).
local function mlp_reference(x, y, W1, b1, W2, b2)
  local p = {}
  for i, t in ipairs({ W1, b1, W2, b2 }) do p[i] = t:detach():clone():requires_grad_() end
  local h = lm.sigmoid(x:matmul(p[1]:t()) + p[2])
  local yhat = h:matmul(p[3]:t()) + p[4]
  local loss = ((yhat - y) ^ 2):sum() / (2 * x:size(1))
  loss:backward()
  return p[1].grad, p[2].grad, p[3].grad, p[4].grad
end

local function shape_text(t)
  if not lm.is_tensor(t) then return type(t) end
  return '[' .. table.concat(t:shape(), ', ') .. ']'
end

return {
  title = say('From linear regression to the multilayer perceptron', '从线性回归到多层感知机'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 2: neural network basics',
    '智能计算系统 第 2 章：神经网络基础'),
  summary = say([[A line fitted by least squares and by gradient descent, many variables, the
perceptron and the MLP, forward and backward propagation written by hand and checked against
autograd, and under- and over-fitting seen in train and test curves.]],
    [[用最小二乘和梯度下降拟合一条直线，推广到多变量，再到感知机和多层感知机；亲手写出正向
传播和反向传播并与自动求导核对；最后从训练集和测试集的曲线上看欠拟合与过拟合。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('A line through the points: least squares', '用直线拟合点集：最小二乘'),
      text = say([[
The chapter starts from the simplest model there is. Regression studies how one dependent
variable y follows a set of independent variables; in linear regression the relation is a line.
With one variable (the single-variable linear model):

  H(x) = w x + b

Eight points lie roughly on a line. Which w and b fit them best? The chapter measures "best" with
a loss function, the mean squared error over the m points:

  J(w, b) = 1/(2m) * sum_i (w x_i + b - y_i)^2

Setting the two partial derivatives of J to zero gives the least-squares solution in closed form:
w = sum (x - mean x)(y - mean y) / sum (x - mean x)^2 and b = mean y - w * mean x. The line it
finds is the rule behind the points.]],
        [[
这一章从最简单的模型讲起。回归是用统计方法分析一个因变量 y 与一组自变量之间关系的方法；
线性回归里这个关系是线性的。只有一个自变量时就是单变量线性模型（一元回归模型）：

  H(x) = w x + b

下面八个点大致排成一条直线。哪一组 w、b 拟合得最好？这一章用损失函数来衡量“好”，即 m 个点上的
均方误差：

  J(w, b) = 1/(2m) * sum_i (w x_i + b - y_i)^2

令 J 的两个偏导数为零，就得到最小二乘解的闭式公式：
w = sum (x - mean x)(y - mean y) / sum (x - mean x)^2，b = mean y - w * mean x。拟合出来的这条
直线的参数，就是线性回归找到的点集背后的规律。]]),
      code = [[
x = lm.tensor({0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5}, {dtype = 'float64'})
y = lm.tensor({1.3, 1.8, 3.2, 3.8, 5.3, 5.9, 6.8, 8.2}, {dtype = 'float64'})
function J(w, b) return ((x * w + b - y) ^ 2):mean():item() / 2 end
local dx, dy = x - x:mean(), y - y:mean()
w_ls = (dx * dy):sum():item() / (dx ^ 2):sum():item()
b_ls = y:mean():item() - w_ls * x:mean():item()
print(string.format('least squares: w = %.4f, b = %.4f, J = %.5f', w_ls, b_ls, J(w_ls, b_ls)))
print(string.format('a line by eye, w = 2, b = 1:   J = %.5f', J(2, 1)))
]],
      expect = 'least squares: w = 1.9738, b = 1.0833, J = 0.02322\n'
        .. 'a line by eye, w = 2, b = 1:   J = 0.02437\n',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The loss landscape', '损失函数的形状'),
      text = say([[
J is a function of the parameters (w, b), not of the data: the data are fixed, and every choice
of w and b gets one number. Drawn over w for three values of b, each slice is a parabola; together
they are cuts through a bowl whose lowest point is the least-squares solution. The chart shows
the slices, J on the vertical axis and w along the horizontal one (the curves scene's axis that
usually counts steps counts w here). Try `:run` after changing the values of b.

The notes list what makes a good loss function: it is a scalar, it is a function of (w, b), it
is differentiable in them, and the smaller it is the better the model fits the training samples.
The same algorithm can use more than one loss (it is also called the cost or objective
function).]],
        [[
J 是参数 (w, b) 的函数，而不是数据的函数：数据是固定的，每一组 w、b 对应一个数。固定 b 取三个
值，把 J 画成 w 的函数，每一条都是抛物线；合在一起，它们是一个碗的几个截面，碗底就是最小二乘解。
图里纵轴是 J，横轴是 w（曲线场景的横轴平时数训练步数，这里数的是 w）。改一改 b 的取值，
再 `:run` 看看。

讲义列出了损失函数的特性：它是一个标量；它是参数 (w, b) 的函数；要选对 (w, b) 可微的函数；
损失越小，说明模型和参数越符合训练样本。同一个算法的损失函数不是唯一的（损失函数又称代价
函数、目标函数）。]]),
      code = [[
viz.clear()
local bs = {0, 1, 2}
for _, b in ipairs(bs) do
  for k = 0, 40 do
    local w = k * 0.1
    viz.plot('J/b=' .. b, w, J(w, b))
  end
end
for _, b in ipairs(bs) do
  local best, best_w = math.huge, nil
  for k = 0, 40 do
    if J(k * 0.1, b) < best then best, best_w = J(k * 0.1, b), k * 0.1 end
  end
  print(string.format('b = %d: the lowest J on the grid is %.4f at w = %.1f', b, best, best_w))
end
]],
      expect = 'b = 0: the lowest J on the grid is 0.1994 at w = 2.4\n'
        .. 'b = 1: the lowest J on the grid is 0.0244 at w = 2.0\n'
        .. 'b = 2: the lowest J on the grid is 0.1494 at w = 1.6\n',
      scene = { 'curves', smoothing = 0 },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Gradient descent and the learning rate', '梯度下降与学习率'),
      text = say([[
A closed form exists for the line, but not for most models. Gradient descent finds the bottom
of the bowl by walking downhill: start anywhere, compute the gradient, step against it.

  dJ/dw = 1/m * sum_i (w x_i + b - y_i) x_i
  dJ/db = 1/m * sum_i (w x_i + b - y_i)
  w <- w - alpha * dJ/dw,   b <- b - alpha * dJ/db

The step size alpha is the learning rate. The code runs 60 steps from w = b = 0 with three rates
and plots J after each step (on a log axis; Tab switches to a linear one). A small rate creeps
down, a larger one gets close to the least-squares line, and one past the limit makes every step
overshoot further: J grows without bound. For this bowl the limit is 2 / 5.12 = 0.39, where 5.12
is the largest curvature of J (the largest eigenvalue of its Hessian).]],
        [[
直线有闭式解，但大多数模型没有。梯度下降沿着下坡走去找碗底：从任意一点出发，算出梯度，
朝梯度的反方向走一步。

  dJ/dw = 1/m * sum_i (w x_i + b - y_i) x_i
  dJ/db = 1/m * sum_i (w x_i + b - y_i)
  w <- w - alpha * dJ/dw,   b <- b - alpha * dJ/db

步长 alpha 就是学习率。下面的代码从 w = b = 0 出发，用三种学习率各走 60 步，每步之后把 J
画出来（用对数坐标；按 Tab 切换到线性坐标）。学习率小，下降得慢；大一些，就接近最小二乘那条
直线；超过了极限，每一步都越冲越远，J 无限增大。对这个碗来说极限是 2 / 5.12 = 0.39，其中
5.12 是 J 最大的曲率（它的 Hessian 矩阵的最大特征值）。]]),
      code = [[
function descend(alpha, steps)
  local w, b = 0, 0
  for s = 1, steps do
    local r = x * w + b - y                  -- the residuals H(x_i) - y_i
    local dw, db = (r * x):mean():item(), r:mean():item()
    w, b = w - alpha * dw, b - alpha * db
    viz.plot('loss/alpha=' .. alpha, s, J(w, b))
  end
  return w, b
end
viz.clear()
for _, alpha in ipairs({0.05, 0.3, 0.42}) do
  local w, b = descend(alpha, 60)
  print(string.format('alpha = %-4s after 60 steps: w = %10.4f, b = %10.4f, J = %.4g', alpha, w, b,
    J(w, b)))
end
print(string.format('least squares:              w = %10.4f, b = %10.4f', w_ls, b_ls))
]],
      expect = 'alpha = 0.05 after 60 steps: w =     2.0144, b =     0.9878, J = 0.0246\n'
        .. 'alpha = 0.3  after 60 steps: w =     1.9745, b =     1.0816, J = 0.02322\n'
        .. 'alpha = 0.42 after 60 steps: w = -8945.3386, b = -3800.6622, J = 2.419e+08\n'
        .. 'least squares:              w =     1.9738, b =     1.0833\n',
      scene = { 'curves', scale = 'log', smoothing = 0 },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Many variables: the normal equations', '多变量：正规方程'),
      text = say([[
With n features per sample the model is H(x) = w1 x1 + ... + wn xn + b (the multivariable linear
model; the chapter's example has two features). Put the m samples in the rows of a matrix X, add a
column of ones for b, and call it A = [X, 1]. Then all predictions are A times the parameter
vector, and the gradient of J is zero exactly when

  (A^T A) theta = A^T y        theta = (w1, ..., wn, b)

the normal equations: n + 1 linear equations in n + 1 unknowns. `solve(M, v)` below solves M t = v
by Gaussian elimination. The code fits 50 noisy samples of y = 3 x1 - 2 x2 + 0.5 and recovers the
three numbers.]],
        [[
每个样本有 n 个特征时，模型是 H(x) = w1 x1 + ... + wn xn + b（多变量线性模型；讲义的例子有两个
特征）。把 m 个样本放进矩阵 X 的各行，再为 b 补上一列 1，记作 A = [X, 1]。于是所有的预测值
就是 A 乘以参数向量，而 J 的梯度为零当且仅当

  (A^T A) theta = A^T y        theta = (w1, ..., wn, b)

这就是正规方程：n + 1 个未知数、n + 1 个线性方程。下面的 `solve(M, v)` 用高斯消元法解 M t = v。
代码对 y = 3 x1 - 2 x2 + 0.5 的 50 个带噪声的样本做拟合，找回了这三个数。]]),
      code = [[
-- solve(M, v): t with M t = v (Gaussian elimination with partial pivoting; M square)
function solve(M, v)
  local n = M:dim() == 2 and M:size(1) or 0
  if M:dim() ~= 2 or M:size(2) ~= n or v:numel() ~= n then
    error(string.format('solve(M, v): M is %s and v has %d elements; M must be n x n and v have n '
      .. 'elements (the normal equations: A:t():matmul(A) and A:t():matmul(y))',
      table.concat(M:shape(), ' x '), v:numel()), 2)
  end
  local a, r = M:tolist(), v:reshape(n):tolist()
  for k = 1, n do
    local p = k
    for i = k + 1, n do if math.abs(a[i][k]) > math.abs(a[p][k]) then p = i end end
    a[k], a[p], r[k], r[p] = a[p], a[k], r[p], r[k]
    for i = k + 1, n do
      local f = a[i][k] / a[k][k]
      for j = k, n do a[i][j] = a[i][j] - f * a[k][j] end
      r[i] = r[i] - f * r[k]
    end
  end
  local t = {}
  for i = n, 1, -1 do
    local s = r[i]
    for j = i + 1, n do s = s - a[i][j] * t[j] end
    t[i] = s / a[i][i]
  end
  return lm.tensor(t, {dtype = 'float64'})
end
lm.manual_seed(2)
X2 = lm.rand(50, 2, {dtype = 'float64'}) * 4
local noise = lm.randn(50, {dtype = 'float64'}) * 0.1
y2 = X2:matmul(lm.tensor({3, -2}, {dtype = 'float64'})) + 0.5 + noise
local A = lm.cat({X2, lm.ones(50, 1, {dtype = 'float64'})}, 2)
local theta = solve(A:t():matmul(A), A:t():matmul(y2))
print(string.format('w1 = %.2f, w2 = %.2f, b = %.2f', theta[1]:item(), theta[2]:item(),
  theta[3]:item()))
]],
      expect = 'w1 = 2.99, w2 = -2.01, b = 0.52\n',
      exercise = {
        prompt = say([[
Write `least_squares(X, y)`: X is an (m, n) tensor of features (no column of ones), y has m
targets; return w (a tensor of n weights) and b (a number) that minimise J. The check calls it on
fresh random data of several shapes and compares with a least-squares fit computed another way.]],
          [[
写出 `least_squares(X, y)`：X 是 (m, n) 的特征张量（不含那列 1），y 有 m 个目标值；返回使 J
最小的 w（n 个权重的张量）和 b（一个数）。检查时会在几组不同形状的新随机数据上调用它，并与用
另一种方法算出的最小二乘解比较。]]),
        hints = {
          say('A = lm.cat({X, lm.ones(m, 1, {dtype = \'float64\'})}, 2) adds the column of ones.',
              'A = lm.cat({X, lm.ones(m, 1, {dtype = \'float64\'})}, 2) 补上那一列 1。'),
          say('theta = solve(A:t():matmul(A), A:t():matmul(y)); w is theta:narrow(1, 1, n), b is theta[n + 1]:item().',
              'theta = solve(A:t():matmul(A), A:t():matmul(y))；w 是 theta:narrow(1, 1, n)，b 是 theta[n + 1]:item()。'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'least_squares')
          if not ok then return false, fn end
          for _, case in ipairs({ { 20, 1 }, { 7, 3 }, { 50, 5 }, { 6, 5 }, { 33, 2 } }) do
            local m, n = case[1], case[2]
            local X, y = regression_case(m, n)
            local rok, w, b = lesson.try(fn, X, y)
            if not rok then return false, w end
            local want_w, want_b = qr_lstsq(X, y)
            local what = say(string.format('w of least_squares on %d samples with %d feature%s', m, n, n == 1 and '' or 's'),
                             string.format('least_squares 在 %d 个样本、%d 个特征上的 w', m, n))
            local bn = lesson.number(b)
            if bn == nil then
              return false, say(string.format('least_squares returned b = %s; b should be a number', tostring(b)),
                                string.format('least_squares 返回的 b 是 %s；b 应该是一个数', tostring(b)))
            end
            local cok, msg = lesson.compare(w, want_w, { what = what })
            local wt = lm.is_tensor(w) and w:double() or (type(w) == 'table' and lm.tensor(w, f64)) or nil
            if cok and math.abs(bn - want_b) > 1e-4 * math.max(1, math.abs(want_b)) then
              cok = false
              msg = say(string.format('b is %.6g, expected %.6g', bn, want_b),
                        string.format('b 是 %.6g，应为 %.6g', bn, want_b))
            end
            if not cok then
              if wt and wt:numel() == n then
                local gw, gb = gradient(X, y, wt:reshape(n), bn)
                if gw < 1e-6 and math.abs(gb) > 1e-6 then
                  return false, say(msg.en .. string.format(': dJ/dw is 0 at your fit but the residuals average %.4g, not 0: is b fitted (the column of ones)?', gb),
                                    msg.zh .. string.format('：在你的拟合处 dJ/dw 为 0，但残差的平均值是 %.4g，不是 0：b 拟合了吗（那一列 1）？', gb))
                end
                return false, say(msg.en .. string.format(': the gradient of J at your (w, b) is still %.3g; the least-squares fit makes it 0 (the normal equations use every sample)', math.max(gw, math.abs(gb))),
                                  msg.zh .. string.format('：J 在你的 (w, b) 处的梯度还有 %.3g；最小二乘解让它为 0（正规方程用到了每一个样本）', math.max(gw, math.abs(gb))))
              end
              return false, msg
            end
          end
          return true, say('right on five fresh data sets, from 1 to 5 features', '在五组新的数据上（1 到 5 个特征）都对')
        end,
        solution = [[
function least_squares(X, y)
  local m, n = X:size(1), X:size(2)
  local A = lm.cat({X, lm.ones(m, 1, {dtype = 'float64'})}, 2)
  local theta = solve(A:t():matmul(A), A:t():matmul(y))
  return theta:narrow(1, 1, n), theta[n + 1]:item()
end
]],
        wrong = {
          [[
function least_squares(X, y)   -- no column of ones: the line is forced through 0
  return solve(X:t():matmul(X), X:t():matmul(y)), 0
end
]],
          [[
function least_squares(X, y)   -- gradient descent, stopped after 100 steps
  local m, n = X:size(1), X:size(2)
  local w, b = lm.zeros(n, {dtype = 'float64'}), 0
  for _ = 1, 100 do
    local r = X:matmul(w) + b - y
    w = w - X:t():matmul(r) * (0.05 / m)
    b = b - 0.05 * r:mean():item()
  end
  return w, b
end
]],
          [[
function least_squares(X, y)   -- the line through the first n + 1 points only
  local n = X:size(2)
  local A = lm.cat({X, lm.ones(X:size(1), 1, {dtype = 'float64'})}, 2):narrow(1, 1, n + 1)
  local theta = solve(A, y:narrow(1, 1, n + 1))
  return theta:narrow(1, 1, n), theta[n + 1]:item()
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('The perceptron, and a neuron you can differentiate', '感知机，以及可微的神经元'),
      text = say([[
Put an activation function after the linear model and you have a neuron: y = f(w^T x + b). With
f = sign it is the perceptron, a linear classifier. Its learning rule needs no derivative: for each
misclassified point (label t = +1 or -1), w <- w + t x and b <- b + t. On points a line can
separate it stops after finitely many corrections; the code counts them.

The chapter's list of properties for an activation function starts with differentiability,
required as soon as training is gradient-based: sign has no useful derivative, so networks use
smooth functions such as the sigmoid 1 / (1 + e^-z). The activation brings the non-linearity that
lets a network approximate non-linear functions. The picture is the graph autograd records for a
sigmoid neuron on one input: step backward (right arrow) and watch the gradient arrive at w and b.]],
        [[
在线性模型后面接一个激活函数，就得到一个神经元：y = f(w^T x + b)。f 取符号函数 sign 时就是
感知机，一个线性分类器。它的学习规则不需要求导：对每个分错的点（标签 t = +1 或 -1），
w <- w + t x，b <- b + t。对一条直线可以分开的点，它改正有限次之后就停下来；代码数出了次数。

讲义列出的激活函数应具备的性质，第一条就是可微性：只要优化方法基于梯度，这一条就是必须的。
sign 没有可用的导数，所以网络里用平滑的函数，比如 sigmoid 1 / (1 + e^-z)。激活函数给神经元引入
了非线性因素，使神经网络可以逼近非线性函数。画面是自动求导为一个 sigmoid 神经元在一个输入上
记录的计算图：向后单步执行（右方向键），看梯度怎样到达 w 和 b。]]),
      code = [[
lm.manual_seed(3)
local P = lm.rand(40, 2, {dtype = 'float64'}) * 2 - 1
local labels = {}                              -- +1 above the line x1 + 2 x2 = 0.2, else -1
for i = 1, 40 do labels[i] = (P[{i, 1}]:item() + 2 * P[{i, 2}]:item() > 0.2) and 1 or -1 end
local pw, pb, corrections, pass = {0, 0}, 0, 0, 0
repeat
  local changed = false
  pass = pass + 1
  for i = 1, 40 do
    local x1, x2, t = P[{i, 1}]:item(), P[{i, 2}]:item(), labels[i]
    if t * (pw[1] * x1 + pw[2] * x2 + pb) <= 0 then
      pw[1], pw[2], pb = pw[1] + t * x1, pw[2] + t * x2, pb + t
      corrections, changed = corrections + 1, true
    end
  end
until not changed
print(string.format('perceptron: all 40 points right after %d corrections in %d passes',
  corrections, pass))
-- a sigmoid neuron on one input, its graph recorded for backward
nw = lm.tensor({0.5, -1.0}, {dtype = 'float64', requires_grad = true})
nb = lm.tensor(0.1, {dtype = 'float64', requires_grad = true})
local x1 = lm.tensor({1.0, 2.0}, {dtype = 'float64'})
neuron = lm.sigmoid((nw * x1):sum() + nb)
print(string.format('sigmoid neuron: y = %.4f', neuron:item()))
]],
      expect = 'perceptron: all 40 points right after 73 corrections in 25 passes\n'
        .. 'sigmoid neuron: y = 0.1978\n',
      scene = function(env) return env.neuron end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('The MLP: forward propagation, and backward by hand', 'MLP：正向传播，以及手写的反向传播'),
      text = say([[
Many neurons connected in layers make an artificial neural network. A multilayer perceptron
usually means a fully connected two-layer network: input, one hidden layer, output (the +1
nodes in the chapter's picture are the biases). Here D = 4 inputs, H = 5 hidden sigmoid units,
O = 2 outputs, a batch of N = 8 samples, and the squared error:

  z1 = x W1^T + b1,  h = sigmoid(z1),  yhat = h W2^T + b2
  L = 1/(2N) * sum (yhat - y)^2

Forward propagation (inference) computes the hidden layer, then the output. Backward propagation
(training) takes the loss and applies the chain rule from the back of the network to the front.
For the output layer:

  dL/dyhat = (yhat - y) / N          (N, O)
  dL/dW2 = (dL/dyhat)^T h            (O, H)
  dL/db2 = sum over the batch of dL/dyhat

The code does exactly this and compares with what autograd computes from the same forward pass.
The picture is autograd's graph of L; each step backward runs one node's rule.]],
        [[
把大量神经元按层组合、连接起来，就构成了人工神经网络。多层感知机一般指全连接的两层神经网络：
输入、一个隐层、输出层（讲义图里的 +1 节点就是偏置）。这里 D = 4 个输入，H = 5 个 sigmoid
隐层单元，O = 2 个输出，一批 N = 8 个样本，损失取平方误差：

  z1 = x W1^T + b1,  h = sigmoid(z1),  yhat = h W2^T + b2
  L = 1/(2N) * sum (yhat - y)^2

正向传播（推断）根据输入经过权重、激活函数算出隐层，再算出输出。反向传播（训练）根据输出和
期望值算出损失，再通过链式求导，从网络后端往前逐层算出梯度。输出层的梯度是：

  dL/dyhat = (yhat - y) / N          (N, O)
  dL/dW2 = (dL/dyhat)^T h            (O, H)
  dL/db2 = sum over the batch of dL/dyhat

代码正是这样算的，并与自动求导从同一次正向传播得到的结果比较。画面是 L 的计算图；每向后
走一步，就执行一个节点的反向规则。]]),
      code = [[
function mlp_forward(x, W1, b1, W2, b2)
  local h = lm.sigmoid(x:matmul(W1:t()) + b1)   -- (N, H)
  return h:matmul(W2:t()) + b2, h               -- yhat (N, O), h
end
lm.manual_seed(4)
local f = {dtype = 'float64', requires_grad = true}
mx, my = lm.randn(8, 4, {dtype = 'float64'}), lm.randn(8, 2, {dtype = 'float64'})
W1, b1 = lm.randn(5, 4, f), lm.randn(5, f)
W2, b2 = lm.randn(2, 5, f), lm.randn(2, f)
local yhat, h = mlp_forward(mx, W1, b1, W2, b2)
mlp_loss = ((yhat - my) ^ 2):sum() / (2 * 8)
mlp_loss:backward({retain_graph = true})     -- autograd: W1.grad, b1.grad, W2.grad, b2.grad
local dyhat = (yhat - my):detach() / 8
local dW2 = dyhat:t():matmul(h:detach())
local db2 = dyhat:sum(1)
print(string.format('L = %.4f', mlp_loss:item()))
print('dW2 by hand = autograd:', (lm.allclose(dW2, W2.grad)))
print('db2 by hand = autograd:', (lm.allclose(db2, b2.grad)))
]],
      expect = 'L = 1.3426\ndW2 by hand = autograd:\ttrue\ndb2 by hand = autograd:\ttrue\n',
      scene = function(env) return env.mlp_loss end,
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Your backward pass through the hidden layer', '你来写隐层的反向传播'),
      text = say([[
Continue the chain rule into the hidden layer. The gradient reaches h through W2, passes the
sigmoid (whose derivative is sigmoid(z)(1 - sigmoid(z)) = h (1 - h), elementwise), and then
splits into the weights and biases of the first layer:

  dL/dh  = (dL/dyhat) W2                  (N, H)
  dL/dz1 = dL/dh * h * (1 - h)            (N, H), elementwise
  dL/dW1 = (dL/dz1)^T x                   (H, D)
  dL/db1 = sum over the batch of dL/dz1   (H)

`mlp_backward` below already does the output layer and returns zeros for the hidden one. Once the
weights are updated with these gradients the next forward pass begins: training repeats forward
and backward until the error between the output and the target is small.]],
        [[
把链式求导继续推进到隐层。梯度经过 W2 到达 h，穿过 sigmoid（它的导数是
sigmoid(z)(1 - sigmoid(z)) = h (1 - h)，逐元素），再分到第一层的权重和偏置上：

  dL/dh  = (dL/dyhat) W2                  (N, H)
  dL/dz1 = dL/dh * h * (1 - h)            (N, H)，逐元素
  dL/dW1 = (dL/dz1)^T x                   (H, D)
  dL/db1 = sum over the batch of dL/dz1   (H)

下面的 `mlp_backward` 已经算好了输出层，隐层暂时返回零。用这些梯度更新权重之后，网络进入下
一轮正向传播：训练就是这样反复迭代，不断缩小计算值与真实值之间的误差。]]),
      code = [[
function mlp_backward(x, y, W1, b1, W2, b2)
  local yhat, h = mlp_forward(x, W1, b1, W2, b2)
  local N = x:size(1)
  local dyhat = (yhat - y) / N             -- (N, O)
  local dW2 = dyhat:t():matmul(h)          -- (O, H)
  local db2 = dyhat:sum(1)                 -- (O)
  -- the hidden layer: to write
  local dW1 = lm.zeros_like(W1)            -- (H, D)
  local db1 = lm.zeros_like(b1)            -- (H)
  return dW1, db1, dW2, db2
end
local g = {lm.no_grad(mlp_backward, mx, my, W1, b1, W2, b2)}
print('dW1 by hand = autograd:', (lm.allclose(g[1], W1.grad)))
]],
      expect = 'dW1 by hand = autograd:\tfalse\n',
      exercise = {
        prompt = say([[
Complete `mlp_backward(x, y, W1, b1, W2, b2)` so it returns dW1, db1, dW2, db2, the gradients of
L for any sizes N, D, H, O. The check compares them with autograd on fresh random networks.]],
          [[
补全 `mlp_backward(x, y, W1, b1, W2, b2)`，让它对任意的 N、D、H、O 返回 L 的梯度
dW1, db1, dW2, db2。检查时会在新的随机网络上与自动求导的结果比较。]]),
        hints = {
          say('local dz1 = dyhat:matmul(W2) * h * (1 - h)', 'local dz1 = dyhat:matmul(W2) * h * (1 - h)'),
          say('dW1 = dz1:t():matmul(x) and db1 = dz1:sum(1)', 'dW1 = dz1:t():matmul(x)，db1 = dz1:sum(1)'),
        },
        check = function(env)
          local ok, fn = lesson.need(env, 'mlp_backward')
          if not ok then return false, fn end
          local names = { 'dW1', 'db1', 'dW2', 'db2' }
          for _, c in ipairs({ { 8, 4, 5, 2 }, { 1, 3, 1, 1 }, { 13, 7, 9, 3 }, { 5, 1, 4, 2 } }) do
            local N, D, H, O = c[1], c[2], c[3], c[4]
            local x, y = lm.randn(N, D, f64), lm.randn(N, O, f64)
            local W1, b1, W2, b2 = lm.randn(H, D, f64), lm.randn(H, f64), lm.randn(O, H, f64), lm.randn(O, f64)
            local want = { mlp_reference(x, y, W1, b1, W2, b2) }
            local got = { lesson.try(function() return lm.no_grad(fn, x, y, W1, b1, W2, b2) end) }
            if not got[1] then return false, got[2] end
            local size = string.format('N=%d, D=%d, H=%d, O=%d', N, D, H, O)
            for k = 1, 4 do
              local gk, wk = got[k + 1], want[k]
              if not lm.is_tensor(gk) then
                return false, say(string.format('%s is %s; it should be a tensor of shape %s (%s)', names[k], type(gk), shape_text(wk), size),
                                  string.format('%s 是 %s；应该是形状为 %s 的张量（%s）', names[k], type(gk), shape_text(wk), size))
              end
              if shape_text(gk) ~= shape_text(wk) then
                return false, say(string.format('%s has shape %s; the gradient of a parameter has its shape, %s (%s)', names[k], shape_text(gk), shape_text(wk), size),
                                  string.format('%s 的形状是 %s；参数的梯度和参数形状相同，应为 %s（%s）', names[k], shape_text(gk), shape_text(wk), size))
              end
              local cok, msg = lesson.compare(gk, wk, {
                what = say(names[k] .. ' (' .. size .. ')', names[k] .. '（' .. size .. '）'), tol = 1e-6,
                why = function()
                  if k == 2 then return say('is db1 the sum of dL/dz1 over the batch (not the mean)?', 'db1 是 dL/dz1 在整批上的和吗（不是平均）？') end
                  return say('did the gradient pass the sigmoid, dL/dz1 = dL/dh * h * (1 - h)?', '梯度穿过 sigmoid 了吗：dL/dz1 = dL/dh * h * (1 - h)？')
                end })
              if not cok then return false, msg end
            end
          end
          return true, say('right: your four gradients equal autograd\'s on four fresh networks', '对：在四个新的网络上，你的四个梯度都与自动求导一致')
        end,
        solution = [[
function mlp_backward(x, y, W1, b1, W2, b2)
  local yhat, h = mlp_forward(x, W1, b1, W2, b2)
  local N = x:size(1)
  local dyhat = (yhat - y) / N
  local dW2 = dyhat:t():matmul(h)
  local db2 = dyhat:sum(1)
  local dz1 = dyhat:matmul(W2) * h * (1 - h)
  return dz1:t():matmul(x), dz1:sum(1), dW2, db2
end
]],
        wrong = {
          [[
function mlp_backward(x, y, W1, b1, W2, b2)   -- the sigmoid's derivative is missing
  local yhat, h = mlp_forward(x, W1, b1, W2, b2)
  local dyhat = (yhat - y) / x:size(1)
  local dz1 = dyhat:matmul(W2)
  return dz1:t():matmul(x), dz1:sum(1), dyhat:t():matmul(h), dyhat:sum(1)
end
]],
          [[
function mlp_backward(x, y, W1, b1, W2, b2)   -- db1 averaged over the batch
  local yhat, h = mlp_forward(x, W1, b1, W2, b2)
  local dyhat = (yhat - y) / x:size(1)
  local dz1 = dyhat:matmul(W2) * h * (1 - h)
  return dz1:t():matmul(x), dz1:mean(1), dyhat:t():matmul(h), dyhat:sum(1)
end
]],
          [[
function mlp_backward(x, y, W1, b1, W2, b2)   -- dW1 transposed
  local yhat, h = mlp_forward(x, W1, b1, W2, b2)
  local dyhat = (yhat - y) / x:size(1)
  local dz1 = dyhat:matmul(W2) * h * (1 - h)
  return x:t():matmul(dz1), dz1:sum(1), dyhat:t():matmul(h), dyhat:sum(1)
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Under-fitting and over-fitting', '欠拟合与过拟合'),
      text = say([[
The network's shape follows the data: the input layer has as many neurons as there are features
(784 pixels of a Fashion-MNIST image), the output layer as many as there are classes (10); the
hidden layers are the choice. Too small a choice under-fits: the model cannot even fit the
training set, and its error stays high. Too large, trained on too little, over-fits: it fits the
training set almost perfectly and predicts new data badly (it does not generalise).

The code trains two MLPs on only 256 training images for 150 full-batch Adam steps, with 2 and
with 256 hidden units, and plots the loss on the training images and on 1000 test images every
5 steps. Read the two charts: with 2 units both losses stay high (under-fitting); with 256 the
training loss falls to almost 0 while the test loss is lowest after about 25 steps and then
rises (over-fitting: the network memorises the 256 images). This takes a few seconds. The full
version trains on all 60,000 images: `lumen examples/mlp_fashion.lua --epochs 5`; with
`--limit 256 --epochs 100` it over-fits the same way.]],
        [[
网络的结构由数据决定一部分：输入层的神经元个数等于特征维度（Fashion-MNIST 一张图 784 个
像素），输出层的神经元个数等于分类类别数（10）；隐层才是要选的。选得太小就欠拟合：模型连
训练集都拟合不了，误差一直很大。选得太大、训练数据又太少就过拟合：在训练集上几乎完美，对新
数据的预测却很差（泛化能力不足）。

代码只用 256 张训练图像，用 Adam 做 150 步全批量训练，分别训练隐层为 2 个和 256 个单元的两个
MLP，每 5 步把训练图像上的损失和 1000 张测试图像上的损失画出来。看这两张图：2 个单元时两条
损失都降不下去（欠拟合）；256 个单元时训练损失几乎降到 0，测试损失却在大约 25 步时最低，之后
掉头上升（过拟合：网络把这 256 张图背了下来）。这只要几秒钟。完整的版本在全部 60,000 张图像上
训练：`lumen examples/mlp_fashion.lua --epochs 5`；加上 `--limit 256 --epochs 100`，它也会
同样地过拟合。]]),
      code = [[
train_set = data.FashionMNIST{split = 'train', limit = 256}
test_set = data.FashionMNIST{split = 'test', limit = 1000}
xtr, ytr = train_set.data:flatten(2), train_set.targets
xte, yte = test_set.data:flatten(2), test_set.targets
-- fit(model, name, steps, opts): full-batch Adam on the 256 images, curves in chart `name`;
-- returns the last training loss, the last test loss, the lowest test loss and its step
function fit(model, name, steps, opts)
  local decay = opts and opts.weight_decay or 0
  local opt = optim.Adam(model:parameters(), {lr = 3e-3, weight_decay = decay})
  local r = {best = math.huge}
  for s = 1, steps do
    model:train()
    local loss = F.cross_entropy(model(xtr), ytr)
    opt:zero_grad(); loss:backward(); opt:step()
    if s % 5 == 0 then
      model:eval()
      local test_loss = lm.no_grad(function() return F.cross_entropy(model(xte), yte):item() end)
      if test_loss < r.best then r.best, r.best_step = test_loss, s end
      r.train, r.test = loss:item(), test_loss
      viz.plot(name .. '/train', s, r.train)
      viz.plot(name .. '/test', s, test_loss)
    end
  end
  return r
end
function report(what, r)
  print(string.format('%-13s train loss %.3f, test loss %.3f (lowest %.3f, at step %d)', what, r.train,
    r.test, r.best, r.best_step))
end
viz.clear()
for _, hidden in ipairs({2, 256}) do
  lm.manual_seed(1)
  local model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
  report('hidden ' .. hidden .. ':', fit(model, 'hidden ' .. hidden, 150))
end
]],
      scene = 'curves',
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Regularization', '正则化'),
      text = say([[
Learning must do well on the test set too, since a model is deployed where it has not seen the
training data: that is generalisation. The deeper and wider the network, the more parameters and
the more easily it over-fits. The chapter lists the remedies, called regularization: parameter
norm penalties, sparsity, bagging, dropout, early stopping, data augmentation.

Three of them on the over-fitting network of the last step. An L2 penalty (weight decay 0.01 in
the optimizer) keeps the weights small: the training loss no longer reaches 0 and the test loss
no longer climbs back. Dropout switches off half the hidden units at random in every training
step: the test loss still rises, but less. Early stopping keeps the model of the step where the
held-out loss was lowest: about step 25 for the network of the last step. (It must be chosen on
a validation set split off the training data, never on the test set; the test images stand in
for it here to keep the lesson short.) On 256 images none of them makes up for the missing data,
the most effective regularizer of all.]],
        [[
机器学习不仅要求模型在训练集上误差小，在测试集上也要表现好，因为模型最终要部署到没有见过训练
数据的真实场景：这就是泛化。网络越深越宽，参数越多，表示能力越强，也就越容易过拟合。讲义列出
了抑制过拟合的办法，统称正则化：参数范数惩罚、稀疏化、Bagging 集成、Dropout、提前终止、
数据集扩增等。

在上一步过拟合的网络上试其中三种。L2 惩罚（优化器里的 weight decay 0.01）让权重保持较小：
训练损失不再降到 0，测试损失也不再回升。Dropout 在每一步训练里随机关掉一半隐层单元：测试损失
仍会上升，但升得少了。提前终止保留留出数据上损失最低那一步的模型：对上一步的网络来说大约是
第 25 步。（这一步必须在从训练数据中分出来的验证集上选，绝不能在测试集上选；这里为了让课程
简短，用测试图像代替了验证集。）只有 256 张图像时，这些办法都补不上缺少的数据，而更多的数据才是
最有效的正则化。]]),
      code = [[
viz.clear()
lm.manual_seed(1)
local decayed = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
report('weight decay:', fit(decayed, 'weight decay', 150, {weight_decay = 0.01}))
lm.manual_seed(1)
local dropped = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))
report('dropout:', fit(dropped, 'dropout', 150))
]],
      scene = 'curves',
    },
  },
}
