--[[
lumen.nn.layers — the layers of torch.nn as modules over F: Linear, Conv2d, MaxPool2d, AvgPool2d,
the activations, Softmax/LogSoftmax, Flatten, Dropout, BatchNorm1d/2d, LayerNorm, Embedding.

Defaults and initialisation are PyTorch's (Linear and Conv2d: kaiming_uniform with a = sqrt(5) for
the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias; BatchNorm: weight 1, bias 0, running
mean 0 and variance 1, momentum 0.1, eps 1e-5; Embedding: N(0, 1)). Dims given to Softmax,
LogSoftmax and Flatten are 1-based (Flatten's default start_dim = 2 keeps the batch dim, as
PyTorch's start_dim = 1). Each forward checks its input's shape against the layer and names the
layer, where it sits in the model and both shapes when they do not fit.
Read next: lumen/nn/loss.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local check = require 'lumen.nn.check'
local init = require 'lumen.nn.initializers'

local M = {}
local builtin, raise, shape_str, describe = base.builtin, base.raise, base.shape_str, check.describe

-- ---------------------------------------------------------------- argument checks

local function posint(v, what, fname)
  if math.type(v) ~= 'integer' and not (type(v) == 'number' and v == math.floor(v)) or v < 1 then
    raise(string.format('%s: %s must be a positive integer, got %s', fname, what, describe(v)))
  end
  return math.tointeger(v)
end

local function options(opts, allowed, fname) return check.options(opts, allowed, fname) end
M.options = options

local function bool_opt(v, def, what, fname)
  if v == nil then return def end
  if type(v) ~= 'boolean' then raise(string.format('%s: option %s must be a boolean, got %s', fname, what, describe(v))) end
  return v
end

local function number_opt(v, def, what, fname, lo, hi)
  if v == nil then return def end
  if type(v) ~= 'number' or v ~= v or (lo and v < lo) or (hi and v > hi) then
    raise(string.format('%s: option %s must be a number%s, got %s', fname, what,
      lo and hi and string.format(' in [%g, %g]', lo, hi) or lo and string.format(' >= %g', lo) or '',
      describe(v)))
  end
  return v
end

--- A pair (number or {h, w}) of integers >= lo.
local function pair(v, def, what, fname, lo)
  if v == nil then v = def end
  local p
  if type(v) == 'number' then p = { v, v }
  elseif type(v) == 'table' and not lm.is_tensor(v) and #v == 2 then p = { v[1], v[2] }
  else raise(string.format('%s: %s must be an integer or a pair {h, w}, got %s', fname, what, describe(v))) end
  for i = 1, 2 do
    if math.type(p[i]) ~= 'integer' and not (type(p[i]) == 'number' and p[i] == math.floor(p[i])) or p[i] < lo then
      raise(string.format('%s: %s must be integers >= %d, got %s', fname, what, lo, describe(p[i])))
    end
    p[i] = math.tointeger(p[i])
  end
  return p
end

local function dtype_opt(v, fname)
  if v == nil then return 'float32' end
  if v ~= 'float32' and v ~= 'float64' then
    raise(string.format("%s: option dtype must be 'float32' or 'float64', got %s", fname, describe(v)))
  end
  return v
end

--- A new parameter (requires grad) of the given shape, filled by fill(t) under no_grad; a shape
--- past memory (nn.Linear(2^31, 2^31)) is the layer's error, at the user's line.
local function param(fname, shape, dtype, fill)
  local ok, t = pcall(lm.empty, shape, { dtype = dtype })
  if not ok then
    raise(string.format('%s: cannot make a parameter of shape [%s]: %s', fname, table.concat(shape, ', '),
      tostring(t):gsub('^.-lm%.empty: ', '')))
  end
  fill(t)
  return t:requires_grad_(true)
end

--- The argument checks and param() for the other layer files (lumen/nn/rnn.lua).
M._util = { posint = posint, bool_opt = bool_opt, number_opt = number_opt, dtype_opt = dtype_opt, param = param }

local function fmt_pair(p) return p[1] == p[2] and tostring(p[1]) or string.format('(%d, %d)', p[1], p[2]) end

-- ---------------------------------------------------------------- Linear

local Linear = builtin('Linear')
M.Linear = Linear

--- nn.Linear(in_features, out_features [, {bias=true, dtype='float32'}])
function Linear:__init(inf, outf, opts)
  local fname = 'nn.Linear'
  self.in_features = posint(inf, 'in_features', fname)
  self.out_features = posint(outf, 'out_features', fname)
  opts = options(opts, { bias = true, dtype = true }, fname)
  local dt = dtype_opt(opts.dtype, fname)
  self.weight = param(fname, { self.out_features, self.in_features }, dt,
    function(t) init.kaiming_uniform_(t, { a = math.sqrt(5) }) end)
  if bool_opt(opts.bias, true, 'bias', fname) then
    local bound = 1 / math.sqrt(self.in_features)
    self.bias = param(fname, { self.out_features }, dt, function(t) t:uniform_(-bound, bound) end)
  else
    self:register_parameter('bias', nil)
  end
end

function Linear:forward(x)
  if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
  if x:dim() < 1 or x:size(-1) ~= self.in_features then
    raise(string.format('%s: input of shape %s does not fit in_features=%d (expected [..., %d])',
      self:_label(), shape_str(x), self.in_features, self.in_features))
  end
  return self:_call(F.linear, x, self.weight, self.bias)
end

function Linear:extra_repr()
  return string.format('in_features=%d, out_features=%d, bias=%s', self.in_features, self.out_features,
    tostring(self.bias ~= nil))
end

-- ---------------------------------------------------------------- Conv2d

-- What Conv2d and ConvTranspose2d read alike: channels, kernel, stride, dilation, groups (dividing
-- both channel counts); extra lists the layer's own options.
local function conv_common(self, fname, cin, cout, k, opts, extra)
  self.in_channels = posint(cin, 'in_channels', fname)
  self.out_channels = posint(cout, 'out_channels', fname)
  self.kernel_size = pair(k, nil, 'kernel_size', fname, 1)
  local allowed = { stride = true, padding = true, dilation = true, groups = true, bias = true, dtype = true }
  for _, key in ipairs(extra or {}) do allowed[key] = true end
  opts = options(opts, allowed, fname)
  self.stride = pair(opts.stride, 1, 'option stride', fname, 1)
  self.dilation = pair(opts.dilation, 1, 'option dilation', fname, 1)
  self.groups = posint(opts.groups or 1, 'option groups', fname)
  if self.in_channels % self.groups ~= 0 or self.out_channels % self.groups ~= 0 then
    raise(string.format('%s: in_channels %d and out_channels %d must both be divisible by groups %d', fname,
      self.in_channels, self.out_channels, self.groups))
  end
  return opts
end

-- "in, out, kernel_size=, stride=[, padding=][, output_padding=][, dilation=][, groups=][, bias=false]"
local function conv_repr(self)
  local s = string.format('%d, %d, kernel_size=%s, stride=%s', self.in_channels, self.out_channels,
    fmt_pair(self.kernel_size), fmt_pair(self.stride))
  if self.padding[1] ~= 0 or self.padding[2] ~= 0 then s = s .. ', padding=' .. fmt_pair(self.padding) end
  local op = self.output_padding
  if op and (op[1] ~= 0 or op[2] ~= 0) then s = s .. ', output_padding=' .. fmt_pair(op) end
  if self.dilation[1] ~= 1 or self.dilation[2] ~= 1 then s = s .. ', dilation=' .. fmt_pair(self.dilation) end
  if self.groups ~= 1 then s = s .. ', groups=' .. self.groups end
  if self.bias == nil then s = s .. ', bias=false' end
  return s
end

local Conv2d = builtin('Conv2d')
M.Conv2d = Conv2d

--- nn.Conv2d(in_channels, out_channels, kernel_size [, {stride=1, padding=0, dilation=1,
--- groups=1, bias=true, dtype=}]); padding may be 'same' (stride 1) or 'valid'.
function Conv2d:__init(cin, cout, k, opts)
  local fname = 'nn.Conv2d'
  opts = conv_common(self, fname, cin, cout, k, opts)
  local pad = opts.padding
  if pad == 'valid' then pad = 0 end
  if pad == 'same' then
    if self.stride[1] ~= 1 or self.stride[2] ~= 1 then raise(fname .. ": padding='same' needs stride 1") end
    local p = {}
    for i = 1, 2 do
      local total = self.dilation[i] * (self.kernel_size[i] - 1)
      if total % 2 ~= 0 then
        raise(string.format("%s: padding='same' with kernel %s and dilation %s would need uneven padding",
          fname, fmt_pair(self.kernel_size), fmt_pair(self.dilation)))
      end
      p[i] = total // 2
    end
    pad = p
  end
  self.padding = pair(pad, 0, 'option padding', fname, 0)
  local dt = dtype_opt(opts.dtype, fname)
  local kh, kw = self.kernel_size[1], self.kernel_size[2]
  self.weight = param(fname, { self.out_channels, self.in_channels // self.groups, kh, kw }, dt,
    function(t) init.kaiming_uniform_(t, { a = math.sqrt(5) }) end)
  if bool_opt(opts.bias, true, 'bias', fname) then
    local bound = 1 / math.sqrt(self.in_channels // self.groups * kh * kw)
    self.bias = param(fname, { self.out_channels }, dt, function(t) t:uniform_(-bound, bound) end)
  else
    self:register_parameter('bias', nil)
  end
  self._opts = { stride = self.stride, padding = self.padding, dilation = self.dilation, groups = self.groups }
end

function Conv2d:forward(x)
  if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
  if x:dim() ~= 4 or x:size(2) ~= self.in_channels then
    raise(string.format('%s: input of shape %s does not fit in_channels=%d (expected [N, %d, H, W])',
      self:_label(), shape_str(x), self.in_channels, self.in_channels))
  end
  return self:_call(F.conv2d, x, self.weight, self.bias, self._opts)
end

Conv2d.extra_repr = conv_repr

-- ---------------------------------------------------------------- ConvTranspose2d

local ConvTranspose2d = builtin('ConvTranspose2d')
M.ConvTranspose2d = ConvTranspose2d

--- nn.ConvTranspose2d(in_channels, out_channels, kernel_size [, {stride=1, padding=0,
--- output_padding=0, groups=1, bias=true, dilation=1, dtype=}]): conv2d's adjoint (upsampling);
--- weight (in, out/groups, kh, kw), initialised as PyTorch's (fan_in = out/groups * kh * kw).
function ConvTranspose2d:__init(cin, cout, k, opts)
  local fname = 'nn.ConvTranspose2d'
  opts = conv_common(self, fname, cin, cout, k, opts, { 'output_padding' })
  self.padding = pair(opts.padding, 0, 'option padding', fname, 0)
  self.output_padding = pair(opts.output_padding, 0, 'option output_padding', fname, 0)
  for i = 1, 2 do
    if self.output_padding[i] >= self.stride[i] and self.output_padding[i] >= self.dilation[i] then
      raise(string.format('%s: output_padding %s must be smaller than the stride %s or the dilation %s', fname,
        fmt_pair(self.output_padding), fmt_pair(self.stride), fmt_pair(self.dilation)))
    end
  end
  local dt = dtype_opt(opts.dtype, fname)
  local kh, kw = self.kernel_size[1], self.kernel_size[2]
  self.weight = param(fname, { self.in_channels, self.out_channels // self.groups, kh, kw }, dt,
    function(t) init.kaiming_uniform_(t, { a = math.sqrt(5) }) end)
  if bool_opt(opts.bias, true, 'bias', fname) then
    local bound = 1 / math.sqrt(self.out_channels // self.groups * kh * kw)
    self.bias = param(fname, { self.out_channels }, dt, function(t) t:uniform_(-bound, bound) end)
  else
    self:register_parameter('bias', nil)
  end
end

--- m(x [, output_size]): output_size {h, w} (or {N, C, h, w}) picks the output_padding that gives it.
function ConvTranspose2d:forward(x, output_size)
  if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
  if x:dim() ~= 4 or x:size(2) ~= self.in_channels then
    raise(string.format('%s: input of shape %s does not fit in_channels=%d (expected [N, %d, H, W])',
      self:_label(), shape_str(x), self.in_channels, self.in_channels))
  end
  local op = self.output_padding
  if output_size ~= nil then
    if type(output_size) ~= 'table' or (#output_size ~= 2 and #output_size ~= 4) then
      raise(self:_label() .. ': output_size must be {h, w} or {N, C, h, w}, got ' .. describe(output_size))
    end
    local want = { output_size[#output_size - 1], output_size[#output_size] }
    op = {}
    for i = 1, 2 do
      local base = (x:size(2 + i) - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
      local extra = math.type(want[i]) == 'integer' and want[i] - base or -1
      if extra < 0 or (extra >= self.stride[i] and extra >= self.dilation[i]) then
        raise(string.format('%s: output_size {%s} is not reachable from input %s: sizes %d..%d along dim %d', self:_label(),
          table.concat(output_size, ', '), shape_str(x), base, base + math.max(self.stride[i], self.dilation[i]) - 1, 2 + i))
      end
      op[i] = extra
    end
  end
  return self:_call(F.conv_transpose2d, x, self.weight, self.bias, { stride = self.stride, padding = self.padding,
    output_padding = op, dilation = self.dilation, groups = self.groups })
end

ConvTranspose2d.extra_repr = conv_repr

-- ---------------------------------------------------------------- pooling

local function pool_class(name, f)
  local C = builtin(name)
  --- nn.MaxPool2d(kernel_size [, stride [, {padding=}]]) or (kernel_size, {stride=, padding=})
  C.__init = function(self, k, stride, opts)
    local fname = 'nn.' .. name
    if type(stride) == 'table' and not lm.is_tensor(stride) and #stride == 0 then opts, stride = stride, nil end
    opts = options(opts, { stride = true, padding = true }, fname)
    if stride ~= nil and opts.stride ~= nil then raise(fname .. ': stride is given twice') end
    self.kernel_size = pair(k, nil, 'kernel_size', fname, 1)
    self.stride = pair(stride or opts.stride or self.kernel_size, nil, 'stride', fname, 1)
    self.padding = pair(opts.padding, 0, 'option padding', fname, 0)
    for i = 1, 2 do
      if self.padding[i] * 2 > self.kernel_size[i] then
        raise(string.format('%s: padding %s must be at most half the kernel size %s', fname,
          fmt_pair(self.padding), fmt_pair(self.kernel_size)))
      end
    end
    self._opts = { stride = self.stride, padding = self.padding }
  end
  C.forward = function(self, x)
    if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
    if x:dim() ~= 4 then
      raise(string.format('%s: input of shape %s must be [N, C, H, W]', self:_label(), shape_str(x)))
    end
    return self:_call(f, x, self.kernel_size, self._opts)
  end
  C.extra_repr = function(self)
    return string.format('kernel_size=%s, stride=%s, padding=%s', fmt_pair(self.kernel_size),
      fmt_pair(self.stride), fmt_pair(self.padding))
  end
  return C
end

M.MaxPool2d = pool_class('MaxPool2d', F.max_pool2d)
M.AvgPool2d = pool_class('AvgPool2d', F.avg_pool2d)

-- ---------------------------------------------------------------- activations

local function activation(name, f, repr)
  local C = builtin(name)
  C.__init = function() end
  C.forward = function(self, x)
    if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
    return f(x)
  end
  if repr then C.extra_repr = repr end
  return C
end

M.ReLU = activation('ReLU', F.relu)
M.Sigmoid = activation('Sigmoid', F.sigmoid)
M.Tanh = activation('Tanh', F.tanh)
M.SiLU = activation('SiLU', function(x) return F.silu(x) end)

local LeakyReLU = builtin('LeakyReLU')
M.LeakyReLU = LeakyReLU
--- nn.LeakyReLU([negative_slope = 0.01])
function LeakyReLU:__init(slope)
  self.negative_slope = number_opt(slope, 0.01, 'negative_slope', 'nn.LeakyReLU')
end
function LeakyReLU:forward(x) return self:_call(F.leaky_relu, x, self.negative_slope) end
function LeakyReLU:extra_repr() return 'negative_slope=' .. self.negative_slope end

local GELU = builtin('GELU')
M.GELU = GELU
--- nn.GELU([{approximate='none'|'tanh'}])
function GELU:__init(opts)
  opts = options(opts, { approximate = true }, 'nn.GELU')
  local a = opts.approximate or 'none'
  if a ~= 'none' and a ~= 'tanh' then raise("nn.GELU: option approximate must be 'none' or 'tanh', got " .. describe(a)) end
  self.approximate = a
  self._opts = { approximate = a }
end
function GELU:forward(x) return self:_call(F.gelu, x, self._opts) end
function GELU:extra_repr() return self.approximate == 'none' and '' or "approximate='tanh'" end

local function softmax_class(name, f)
  local C = builtin(name)
  --- nn.Softmax([dim = -1]) (1-based; negatives from the end)
  C.__init = function(self, dim)
    if dim ~= nil and math.type(dim) ~= 'integer' then
      raise(string.format('nn.%s: dim must be an integer (1-based), got %s', name, describe(dim)))
    end
    self.dim = dim or -1
  end
  C.forward = function(self, x) return self:_call(f, x, self.dim) end
  C.extra_repr = function(self) return 'dim=' .. self.dim end
  return C
end

M.Softmax = softmax_class('Softmax', F.softmax)
M.LogSoftmax = softmax_class('LogSoftmax', F.log_softmax)

-- ---------------------------------------------------------------- shape and regularisation

local Flatten = builtin('Flatten')
M.Flatten = Flatten
--- nn.Flatten([start_dim = 2 [, end_dim = -1]]): 1-based dims (2 keeps the batch dim)
function Flatten:__init(s, e)
  for _, v in ipairs({ s or 2, e or -1 }) do
    if math.type(v) ~= 'integer' or v == 0 then
      raise('nn.Flatten: dims must be non-zero integers (1-based), got ' .. describe(v))
    end
  end
  self.start_dim, self.end_dim = s or 2, e or -1
end
function Flatten:forward(x)
  if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
  return self:_call(x.flatten, x, self.start_dim, self.end_dim)
end
function Flatten:extra_repr() return string.format('start_dim=%d, end_dim=%d', self.start_dim, self.end_dim) end

local Dropout = builtin('Dropout')
M.Dropout = Dropout
--- nn.Dropout([p = 0.5]): zeroes elements with probability p in training mode, scaling the rest by
--- 1 / (1 - p); the identity in evaluation mode.
function Dropout:__init(p)
  self.p = number_opt(p, 0.5, 'p', 'nn.Dropout', 0, 1)
end
function Dropout:forward(x) return self:_call(F.dropout, x, self.p, self.training) end
function Dropout:extra_repr() return 'p=' .. self.p end

-- ---------------------------------------------------------------- normalisation

local function batchnorm_class(name, dims)
  local C = builtin(name)
  --- nn.BatchNorm2d(num_features [, {eps=1e-5, momentum=0.1, affine=true,
  --- track_running_stats=true, dtype=}])
  C.__init = function(self, n, opts)
    local fname = 'nn.' .. name
    self.num_features = posint(n, 'num_features', fname)
    opts = options(opts, { eps = true, momentum = true, affine = true, track_running_stats = true,
      dtype = true }, fname)
    self.eps = number_opt(opts.eps, 1e-5, 'eps', fname, 0)
    self.momentum = number_opt(opts.momentum, 0.1, 'momentum', fname, 0, 1)
    self.affine = bool_opt(opts.affine, true, 'affine', fname)
    self.track_running_stats = bool_opt(opts.track_running_stats, true, 'track_running_stats', fname)
    local dt = dtype_opt(opts.dtype, fname)
    if self.affine then
      self.weight = lm.ones(n, { dtype = dt, requires_grad = true })
      self.bias = lm.zeros(n, { dtype = dt, requires_grad = true })
    else
      self:register_parameter('weight', nil)
      self:register_parameter('bias', nil)
    end
    if self.track_running_stats then
      self:register_buffer('running_mean', lm.zeros(n, { dtype = dt }))
      self:register_buffer('running_var', lm.ones(n, { dtype = dt }))
      self:register_buffer('num_batches_tracked', lm.tensor(0, { dtype = 'int64' }))
    end
  end
  C.forward = function(self, x)
    if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
    local ok_dim = false
    for _, d in ipairs(dims) do ok_dim = ok_dim or x:dim() == d end
    if not ok_dim or x:size(2) ~= self.num_features then
      raise(string.format('%s: input of shape %s does not fit num_features=%d (expected %s)', self:_label(),
        shape_str(x), self.num_features, #dims == 1 and string.format('[N, %d, H, W]', self.num_features)
        or string.format('[N, %d] or [N, %d, L]', self.num_features, self.num_features)))
    end
    local use_batch = self.training or not self.track_running_stats
    if self.training and self.track_running_stats then
      self.num_batches_tracked:add_(1)
    end
    return self:_call(F.batch_norm, x, self.running_mean, self.running_var, self.weight, self.bias,
      use_batch, self.momentum, self.eps)
  end
  C.extra_repr = function(self)
    return string.format('%d, eps=%g, momentum=%g, affine=%s, track_running_stats=%s', self.num_features,
      self.eps, self.momentum, tostring(self.affine), tostring(self.track_running_stats))
  end
  return C
end

M.BatchNorm1d = batchnorm_class('BatchNorm1d', { 2, 3 })
M.BatchNorm2d = batchnorm_class('BatchNorm2d', { 4 })

local LayerNorm = builtin('LayerNorm')
M.LayerNorm = LayerNorm
--- nn.LayerNorm(normalized_shape [, {eps=1e-5, elementwise_affine=true, bias=true, dtype=}]); the
--- shape is a number or a table of the last dims; bias=false keeps the scale only (PyTorch 2.1's).
function LayerNorm:__init(shape, opts)
  local fname = 'nn.LayerNorm'
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' or lm.is_tensor(shape) or #shape == 0 then
    raise(fname .. ': normalized_shape must be a positive integer or a table of them, got ' .. describe(shape))
  end
  local s = {}
  for i, v in ipairs(shape) do s[i] = posint(v, 'normalized_shape', fname) end
  self.normalized_shape = s
  opts = options(opts, { eps = true, elementwise_affine = true, bias = true, dtype = true }, fname)
  self.eps = number_opt(opts.eps, 1e-5, 'eps', fname, 0)
  self.elementwise_affine = bool_opt(opts.elementwise_affine, true, 'elementwise_affine', fname)
  local dt = dtype_opt(opts.dtype, fname)
  if self.elementwise_affine then
    self.weight = lm.ones(s, { dtype = dt, requires_grad = true })
    if bool_opt(opts.bias, true, 'bias', fname) then
      self.bias = lm.zeros(s, { dtype = dt, requires_grad = true })
    else
      self:register_parameter('bias', nil)
    end
  else
    self:register_parameter('weight', nil)
    self:register_parameter('bias', nil)
  end
end

function LayerNorm:forward(x)
  if not lm.is_tensor(x) then raise(self:_label() .. ': input must be a tensor, got ' .. describe(x)) end
  local s, n = self.normalized_shape, #self.normalized_shape
  local fits = x:dim() >= n
  for i = 1, n do fits = fits and x:size(x:dim() - n + i) == s[i] end
  if not fits then
    raise(string.format('%s: input of shape %s does not end in normalized_shape [%s]', self:_label(),
      shape_str(x), table.concat(s, ', ')))
  end
  return self:_call(F.layer_norm, x, s, self.weight, self.bias, self.eps)
end

function LayerNorm:extra_repr()
  return string.format('[%s], eps=%g, elementwise_affine=%s', table.concat(self.normalized_shape, ', '), self.eps,
    tostring(self.elementwise_affine)) .. (self.elementwise_affine and self.bias == nil and ', bias=false' or '')
end

-- ---------------------------------------------------------------- Embedding

local Embedding = builtin('Embedding')
M.Embedding = Embedding
--- nn.Embedding(num_embeddings, embedding_dim [, {dtype=}]): rows looked up by 1-based indices
function Embedding:__init(n, d, opts)
  local fname = 'nn.Embedding'
  self.num_embeddings = posint(n, 'num_embeddings', fname)
  self.embedding_dim = posint(d, 'embedding_dim', fname)
  opts = options(opts, { dtype = true }, fname)
  self.weight = param(fname, { self.num_embeddings, self.embedding_dim }, dtype_opt(opts.dtype, fname),
    function(t) init.normal_(t) end)
end

function Embedding:forward(idx)
  if not lm.is_tensor(idx) or (idx:dtype() ~= 'int64' and idx:dtype() ~= 'int32') then
    raise(string.format('%s: indices must be an int64 or int32 tensor (1-based), got %s', self:_label(),
      lm.is_tensor(idx) and (idx:dtype() .. ' tensor') or describe(idx)))
  end
  return self:_call(F.embedding, idx, self.weight)
end

function Embedding:extra_repr() return string.format('%d, %d', self.num_embeddings, self.embedding_dim) end

return M
