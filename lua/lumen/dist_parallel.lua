--[[
lumen.dist_parallel — model parallelism over lumen.dist (reached as dist.<name>; run under
`mpirun -np N lumen script.lua`; without mpirun every rank's share is the whole model).

Tensor parallelism, as Megatron-LM splits a transformer's MLP:
  dist.ColumnParallelLinear(in, out [, {bias=true, gather_output=true, dtype=, from=}])
      rank r keeps rows r*out/N .. of W (out/N outputs); forward: x -> f(x) -> x W_r^T + b_r, and
      with gather_output the N pieces concatenated on the last dim.
  dist.RowParallelLinear(in, out [, {bias=true, input_is_parallel=false, dtype=, from=}])
      rank r keeps columns r*in/N .. of W; forward: its slice of x (or x as given, when the
      column layer before left it split) -> x_r W_r^T -> g(.) summed over the ranks -> + b.
  The collectives are lm.autograd.Functions (lumen/autograd.lua), each the other's transpose:
    dist.copy_to_parallel(x)      f: forward the identity, backward all-reduces the gradient
    dist.reduce_from_parallel(x)  g: forward all-reduces, backward the identity
    dist.gather_from_parallel(x)  forward all-gathers the last dim, backward keeps this rank's part
    dist.scatter_to_parallel(x)   forward keeps this rank's part, backward all-gathers
  Column then row (gather_output=false, input_is_parallel=true) costs one all-reduce forward and
  one backward for the pair: the MLP's hidden layer never leaves its rank. A layer is made from
  the same initialisation as nn.Linear (on rank 0, broadcast, then split) or from an existing
  nn.Linear (from = lin, split as it is): the split model computes what the whole one does.

Pipeline parallelism:
  dist.Pipeline(stages, {micro_batches = M, schedule = 'gpipe' | '1f1b' | fn, checkpoint = false})
      stages: a list of N modules (or a function k -> module, 1-based, called for this rank's
      stage only); rank r runs stage r + 1. pipe:train_step(x, target, loss_fn) -> loss splits
      the batch (dim 1) into M micro-batches, runs the schedule, and leaves in this stage's
      parameters the gradients of the mean of the micro-batches' losses (what one process gets
      from loss_fn(model(x), target) with a mean loss); it returns that loss on every rank. x is
      needed on rank 0 only, target on the last rank only. pipe:forward(x) -> the output on the
      last rank (nil elsewhere). Activations go forward and gradients back as isend/recv messages
      (a header with the shape and dtype, then the data), tagged by micro-batch.
      A schedule of one's own is fn(K, k, M) -> stage k's ops in order ({'F', m} and {'B', m}, k and
      m 1-based), checked for every stage before anything runs (each op once, B after its F, and no
      stage waiting on another for ever).
      GPipe runs every forward, then the backwards in reverse; 1F1B runs N - r - 1 forwards, then
      one forward and one backward in turn, so stage r keeps at most N - r micro-batches'
      activations (GPipe: M). checkpoint = true keeps only each micro-batch's input and recomputes
      the stage's forward in its backward (re-materialisation: less memory, one more forward).
      After a step pipe.timeline holds every stage's ops (F or B, micro-batch, start and end from
      dist.wtime, in seconds from a barrier all stages left together) and pipe.stats the bubble: counted in slots from the order the stages really ran
      their ops (each op one slot, as soon as this stage is free and its input has come), measured
      from the times (idle time over span x stages), and (N-1)/(M+N-1).

ZeRO stage 1:
  dist.ZeroRedundancyOptimizer(params, optim.Adam, {lr=, ...}): the parameters split over the
      ranks (whole tensors, each to the rank holding the fewest elements so far, in order); each
      rank keeps the optimiser state of its own part only; step() updates its part and broadcasts
      it from its owner, so every rank ends with the same parameters. Gradients must already be
      the same on every rank (after DistributedDataParallel's backward). zero:state_bytes() is
      this rank's state; zero.owner[i] the rank of parameter i.
Read next: lumen/dist.lua (the collectives), docs/dist.md.
]]
local lm = require 'lumen'
local dist = require 'lumen.dist'
local nn = require 'lumen.nn'
local F = nn.functional

local M = {}

local function fail(fname, fmt, ...) error(fname .. ': ' .. string.format(fmt, ...), 3) end

local function world()
  if not dist.is_initialized() then dist.init() end
  return dist.rank(), dist.world_size()
end

local function shape_str(t) return '[' .. table.concat(t:shape(), ', ') .. ']' end

-- ---------------------------------------------------------------- Megatron's f and g

local Copy = lm.autograd.Function('CopyToParallel')
function Copy.forward(_, x) return x end
function Copy.backward(_, g)
  return dist.all_reduce(g:clone())
end

local Reduce = lm.autograd.Function('ReduceFromParallel')
function Reduce.forward(_, x) return dist.all_reduce(x:clone()) end
function Reduce.backward(_, g) return g end

-- the last dim of each rank's part, concatenated in rank order
local function gather_last(x)
  local rank, size = world()
  if size == 1 then return x:clone() end
  local all = dist.all_gather(x:contiguous())
  local parts = {}
  for r = 1, size do parts[r] = all[r] end
  return lm.cat(parts, x:dim())
end

local function my_part(fname, x)
  local rank, size = world()
  local n = x:size(-1)
  if n % size ~= 0 then
    fail(fname, 'the last dim of %s is not a multiple of the world size %d', shape_str(x), size)
  end
  local w = n // size
  return x:narrow(x:dim(), rank * w + 1, w):contiguous()
end

local Gather = lm.autograd.Function('GatherFromParallel')
function Gather.forward(_, x) return gather_last(x) end
function Gather.backward(_, g) return my_part('dist.gather_from_parallel', g) end

local Scatter = lm.autograd.Function('ScatterToParallel')
function Scatter.forward(_, x) return my_part('dist.scatter_to_parallel', x) end
function Scatter.backward(_, g) return gather_last(g) end

local function tensor_arg(fname, x)
  if not lm.is_tensor(x) then fail(fname, 'argument 1 must be a tensor, got %s', type(x)) end
  if x:dim() < 1 then fail(fname, 'the tensor needs at least one dim') end
end

function M.copy_to_parallel(x) tensor_arg('dist.copy_to_parallel', x) world() return Copy:apply(x) end
function M.reduce_from_parallel(x) tensor_arg('dist.reduce_from_parallel', x) world() return Reduce:apply(x) end
function M.gather_from_parallel(x) tensor_arg('dist.gather_from_parallel', x) world() return Gather:apply(x) end
function M.scatter_to_parallel(x) tensor_arg('dist.scatter_to_parallel', x) world() return Scatter:apply(x) end

-- ---------------------------------------------------------------- the split Linear layers

local function posint(fname, v, what)
  if math.type(v) ~= 'integer' or v < 1 then fail(fname, '%s must be a positive integer, got %s', what, tostring(v)) end
  return v
end

local function check_opts(fname, opts, allowed)
  opts = opts or {}
  if type(opts) ~= 'table' then fail(fname, 'options must be a table, got %s', type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then fail(fname, "unknown option '%s'", tostring(k)) end
  end
  return opts
end

-- The whole layer this one is a part of: opts.from (an nn.Linear of these sizes), else a new
-- nn.Linear made on every rank and set to rank 0's values (one initialisation for the world).
local function whole(fname, inf, outf, opts)
  local lin = opts.from
  if lin ~= nil then
    if not nn.is_module(lin) or lin.in_features ~= inf or lin.out_features ~= outf then
      fail(fname, 'from must be an nn.Linear(%d, %d)', inf, outf)
    end
    return lin
  end
  lin = nn.Linear(inf, outf, { bias = opts.bias ~= false, dtype = opts.dtype })
  lm.no_grad(function()
    dist.broadcast(lin.weight, 0)
    if lin.bias then dist.broadcast(lin.bias, 0) end
  end)
  return lin
end

local function piece(t, dim, start, len)
  return t:detach():narrow(dim, start, len):clone():requires_grad_(true)
end

local Column = nn.Module:extend('ColumnParallelLinear')
M.ColumnParallelLinear = Column

function Column:__init(inf, outf, opts)
  local fname = 'dist.ColumnParallelLinear'
  posint(fname, inf, 'in_features')
  posint(fname, outf, 'out_features')
  opts = check_opts(fname, opts, { bias = true, gather_output = true, dtype = true, from = true })
  local rank, size = world()
  if outf % size ~= 0 then fail(fname, 'out_features %d is not a multiple of the world size %d', outf, size) end
  local lin = whole(fname, inf, outf, opts)
  local part = outf // size
  self.in_features, self.out_features, self.out_per_rank = inf, outf, part
  self.gather_output = opts.gather_output ~= false
  self.weight = piece(lin.weight, 1, rank * part + 1, part)
  if lin.bias and opts.bias ~= false then
    self.bias = piece(lin.bias, 1, rank * part + 1, part)
  else
    self:register_parameter('bias', nil)
  end
end

function Column:forward(x)
  if not lm.is_tensor(x) or x:dim() < 1 or x:size(-1) ~= self.in_features then
    fail(self:_label(), 'the input must be a tensor [..., %d], got %s', self.in_features,
      lm.is_tensor(x) and shape_str(x) or type(x))
  end
  local y = F.linear(Copy:apply(x), self.weight, self.bias)
  if self.gather_output then y = Gather:apply(y) end
  return y
end

function Column:extra_repr()
  local rank, size = world()
  return string.format('in_features=%d, out_features=%d (rows %d..%d of %d ranks), bias=%s, gather_output=%s',
    self.in_features, self.out_features, rank * self.out_per_rank + 1, (rank + 1) * self.out_per_rank, size,
    tostring(self.bias ~= nil), tostring(self.gather_output))
end

local Row = nn.Module:extend('RowParallelLinear')
M.RowParallelLinear = Row

function Row:__init(inf, outf, opts)
  local fname = 'dist.RowParallelLinear'
  posint(fname, inf, 'in_features')
  posint(fname, outf, 'out_features')
  opts = check_opts(fname, opts, { bias = true, input_is_parallel = true, dtype = true, from = true })
  local rank, size = world()
  if inf % size ~= 0 then fail(fname, 'in_features %d is not a multiple of the world size %d', inf, size) end
  local lin = whole(fname, inf, outf, opts)
  local part = inf // size
  self.in_features, self.out_features, self.in_per_rank = inf, outf, part
  self.input_is_parallel = opts.input_is_parallel == true
  self.weight = piece(lin.weight, 2, rank * part + 1, part)
  if lin.bias and opts.bias ~= false then
    self.bias = lin.bias:detach():clone():requires_grad_(true)
  else
    self:register_parameter('bias', nil)
  end
end

function Row:forward(x)
  local want = self.input_is_parallel and self.in_per_rank or self.in_features
  if not lm.is_tensor(x) or x:dim() < 1 or x:size(-1) ~= want then
    fail(self:_label(), 'the input must be a tensor [..., %d]%s, got %s', want,
      self.input_is_parallel and " (this rank's part: input_is_parallel)" or '', lm.is_tensor(x) and shape_str(x) or type(x))
  end
  if not self.input_is_parallel then x = Scatter:apply(x) end
  local y = Reduce:apply(F.linear(x, self.weight))
  if self.bias then y = y + self.bias end
  return y
end

function Row:extra_repr()
  local rank, size = world()
  return string.format('in_features=%d (columns %d..%d of %d ranks), out_features=%d, bias=%s, input_is_parallel=%s',
    self.in_features, rank * self.in_per_rank + 1, (rank + 1) * self.in_per_rank, size, self.out_features,
    tostring(self.bias ~= nil), tostring(self.input_is_parallel))
end

-- ---------------------------------------------------------------- the pipeline

local DTYPES = { 'float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'uint8', 'int8' }
local DTYPE_CODE = {}
for i, d in ipairs(DTYPES) do DTYPE_CODE[d] = i end
local HEADER = 2 + 8 -- ndim, dtype, up to 8 sizes

-- tags: 4 per micro-batch (activation header, activation, gradient)
local function tag(m, kind) return m * 4 + kind end

local Pipeline = nn.Module:extend('Pipeline')
M.Pipeline = Pipeline

function Pipeline:__init(stages, opts)
  local fname = 'dist.Pipeline'
  opts = check_opts(fname, opts, { micro_batches = true, schedule = true, checkpoint = true })
  local rank, size = world()
  local mb = opts.micro_batches or 1
  if math.type(mb) ~= 'integer' or mb < 1 or mb > 8000 then
    fail(fname, 'micro_batches must be an integer 1..8000, got %s', tostring(mb))
  end
  local schedule = opts.schedule or 'gpipe'
  if type(schedule) == 'function' then
    -- every stage's order, checked here on every rank before any message: a wrong order is an
    -- error naming it, not a pipeline waiting for ever
    local orders = {}
    for k = 1, size do
      local ok, ops = pcall(schedule, size, k, mb)
      if not ok then fail(fname, 'the schedule function failed for stage %d: %s', k, tostring(ops)) end
      local why = M.check_order(ops, mb)
      if why then fail(fname, 'the schedule for stage %d of %d, %d micro-batches: %s', k, size, mb, why) end
      orders[k] = ops
    end
    local ok, why = pcall(M.count_slots, orders)
    if not ok then fail(fname, 'the schedule deadlocks: %s', (tostring(why):gsub('^.-dist.Pipeline: ', ''))) end
    rawset(self, '_order', orders[rank + 1])
    schedule = 'custom'
  elseif schedule ~= 'gpipe' and schedule ~= '1f1b' then
    fail(fname, "schedule '%s' is not one of gpipe, 1f1b (or a function (K, k, M) -> ops)", tostring(schedule))
  end
  local stage
  if type(stages) == 'function' then
    stage = stages(rank + 1)
  elseif type(stages) == 'table' and not nn.is_module(stages) then
    if #stages ~= size then
      fail(fname, '%d stages for %d ranks: a pipeline runs one stage per rank', #stages, size)
    end
    stage = stages[rank + 1]
  else
    fail(fname, 'stages must be a list of modules (one per rank) or a function k -> module, got %s', type(stages))
  end
  if not nn.is_module(stage) then fail(fname, 'stage %d is not an nn module (got %s)', rank + 1, type(stage)) end
  self.stage = stage
  self.stage_index = rank + 1
  self.stages = size
  self.micro_batches = mb
  self.schedule = schedule
  self.checkpoint = opts.checkpoint == true
  rawset(self, 'timeline', {})
  rawset(self, 'stats', {})
end

function Pipeline:extra_repr()
  return string.format('stage %d of %d, micro_batches=%d, schedule=%s, checkpoint=%s', self.stage_index,
    self.stages, self.micro_batches, self.schedule, tostring(self.checkpoint))
end

-- The order this stage runs its ops in: {'F', m} and {'B', m}.
function M.schedule_order(kind, K, k, Mb)
  local ops = {}
  if kind == 'gpipe' then
    for m = 1, Mb do ops[#ops + 1] = { 'F', m } end
    for m = Mb, 1, -1 do ops[#ops + 1] = { 'B', m } end
  else
    local warm = math.min(K - k - 1, Mb)
    for m = 1, warm do ops[#ops + 1] = { 'F', m } end
    for i = 1, Mb - warm do
      ops[#ops + 1] = { 'F', warm + i }
      ops[#ops + 1] = { 'B', i }
    end
    for m = Mb - warm + 1, Mb do ops[#ops + 1] = { 'B', m } end
  end
  return ops
end

-- Why ops is not one stage's order of M micro-batches (every {'F', m} and {'B', m} once, each B
-- after its F), or nil.
function M.check_order(ops, Mb)
  if type(ops) ~= 'table' then return 'it is ' .. type(ops) .. ', not a list of ops' end
  local f, b = {}, {}
  for i, op in ipairs(ops) do
    local kind, m = type(op) == 'table' and op[1], type(op) == 'table' and op[2]
    if (kind ~= 'F' and kind ~= 'B') or math.type(m) ~= 'integer' or m < 1 or m > Mb then
      return string.format("op %d is not {'F', m} or {'B', m} with m in 1..%d", i, Mb)
    end
    local seen = kind == 'F' and f or b
    if seen[m] then return string.format('op %d runs %s%d a second time', i, kind, m) end
    if kind == 'B' and not f[m] then return string.format('op %d runs B%d before F%d', i, m, m) end
    seen[m] = true
  end
  for m = 1, Mb do
    if not f[m] then return string.format('F%d is missing', m) end
    if not b[m] then return string.format('B%d is missing', m) end
  end
  if #ops ~= 2 * Mb then return string.format('%d ops; a stage runs 2M = %d', #ops, 2 * Mb) end
end

-- The slots of the ops as the stages ran them: each op takes one slot and starts when its stage is
-- free and its input is there (F m on stage k after F m on k - 1; B m after B m on k + 1, or on
-- the last stage after its own F m). orders[k] = the ops stage k ran, in order. Returns the span
-- and each op's start slot, starts[k][i].
function M.count_slots(orders)
  local K = #orders
  local done, starts = {}, {}
  for k = 1, K do done[k], starts[k] = {}, {} end
  local pos, free, left = {}, {}, 0
  for k = 1, K do pos[k], free[k] = 1, 0 left = left + #orders[k] end
  local span = 0
  while left > 0 do
    local moved = false
    for k = 1, K do
      local op = orders[k][pos[k]]
      if op then
        local kind, m = op[1], op[2]
        local dep
        if kind == 'F' then dep = k > 1 and done[k - 1]['F' .. m] or (k == 1 and 0) or nil
        else dep = k < K and done[k + 1]['B' .. m] or (k == K and done[k]['F' .. m]) or nil end
        if dep then
          local s = math.max(free[k], dep)
          starts[k][pos[k]] = s
          done[k][kind .. m] = s + 1
          free[k] = s + 1
          span = math.max(span, s + 1)
          pos[k] = pos[k] + 1
          left = left - 1
          moved = true
        end
      end
    end
    if not moved then error('dist.Pipeline: the stages\' orders wait on each other (no op can run)', 2) end
  end
  return span, starts
end

local function send_tensor(pending, t, dst, m)
  local shape = t:shape()
  if #shape > 8 then error('dist.Pipeline: a stage output of more than 8 dims', 3) end
  local code = DTYPE_CODE[t:dtype()]
  if not code then error('dist.Pipeline: a stage output of dtype ' .. t:dtype() .. ' cannot be sent', 3) end
  local h = { #shape, code }
  for i = 1, 8 do h[2 + i] = shape[i] or 0 end
  pending[#pending + 1] = dist.isend(lm.tensor(h, { dtype = 'int64' }), dst, tag(m, 1))
  pending[#pending + 1] = dist.isend(t:detach():contiguous(), dst, tag(m, 2))
end

local function recv_tensor(src, m)
  local h = dist.recv(lm.zeros(HEADER, { dtype = 'int64' }), src, tag(m, 1)):tolist()
  local shape = {}
  for i = 1, h[1] do shape[i] = h[2 + i] end
  return dist.recv(lm.empty(shape, { dtype = DTYPES[h[2]] }), src, tag(m, 2))
end

local function micro(fname, t, Mb, what)
  if not lm.is_tensor(t) then fail(fname, '%s must be a tensor, got %s', what, type(t)) end
  if t:dim() < 1 or t:size(1) % Mb ~= 0 then
    fail(fname, '%s of shape %s: its batch (dim 1) is not a multiple of micro_batches = %d', what, shape_str(t), Mb)
  end
  local n = t:size(1) // Mb
  local parts = {}
  for m = 1, Mb do parts[m] = t:narrow(1, (m - 1) * n + 1, n) end
  return parts
end

-- Runs the schedule (train: forward and backward; else forwards only); returns the last stage's
-- per-micro-batch outputs (or losses).
function Pipeline:_run(fname, x, target, loss_fn, train)
  local rank, size = world()
  local K, k, Mb = size, rank, self.micro_batches
  local first, last = k == 0, k == K - 1
  local xs = first and micro(fname, x, Mb, 'x') or nil
  local ys = (last and train) and micro(fname, target, Mb, 'target') or nil
  if train and type(loss_fn) ~= 'function' and not (type(loss_fn) == 'table' and getmetatable(loss_fn) and getmetatable(loss_fn).__call) then
    fail(fname, 'loss_fn must be callable (out, target) -> scalar, got %s', type(loss_fn))
  end
  local stage, ckpt = self.stage, self.checkpoint and train
  local inputs, outputs, results, pending, timeline = {}, {}, {}, {}, {}
  local order
  if train then
    order = self._order or M.schedule_order(self.schedule, K, k, Mb)
  else
    order = {}
    for m = 1, Mb do order[m] = { 'F', m } end
  end
  local live, peak = 0, 0
  -- one time origin for every stage: MPI_Wtime's is each process's own (Open MPI counts from the
  -- process's start), so the stages leave a barrier together and count from there
  if train and size > 1 then dist.barrier() end
  local origin = dist.wtime()
  for _, op in ipairs(order) do
    local kind, m = op[1], op[2]
    if kind == 'F' then
      local a = first and xs[m] or recv_tensor(k - 1, m)
      local t0 = dist.wtime()
      if not first and train then a:requires_grad_(true) end
      local out
      if ckpt or not train then out = lm.no_grad(function() return stage(a) end)
      else out = stage(a) end
      if last then
        if train then
          local l = loss_fn(out, ys[m])
          if not lm.is_tensor(l) or l:numel() ~= 1 then fail(fname, 'loss_fn must return a one-element tensor') end
          results[m] = l
        else
          results[m] = out
        end
      else
        send_tensor(pending, out, k + 1, m)
      end
      inputs[m], outputs[m] = a, (not ckpt) and out or nil
      live = live + 1
      peak = math.max(peak, live)
      timeline[#timeline + 1] = { op = 'F', micro = m, t0 = t0 - origin, t1 = dist.wtime() - origin }
    elseif kind == 'B' then
      local g = (not last) and recv_tensor(k + 1, m) or nil
      local t0 = dist.wtime()
      local a, out = inputs[m], outputs[m]
      if ckpt then -- re-materialise: this stage's forward again, now recorded
        out = stage(a)
      end
      if last then
        local l = ckpt and loss_fn(out, ys[m]) or results[m]
        ;(l / Mb):backward()
      else
        out:backward(g)
      end
      if not first then
        if not a.grad then fail(fname, 'stage %d: its input got no gradient (does the stage use it?)', k + 1) end
        send_tensor(pending, a.grad, k - 1, m)
      end
      inputs[m], outputs[m] = nil, nil
      live = live - 1
      timeline[#timeline + 1] = { op = 'B', micro = m, t0 = t0 - origin, t1 = dist.wtime() - origin }
    end
  end
  for _, h in ipairs(pending) do h:wait() end
  rawset(self, '_peak', peak)
  return results, timeline
end

--- pipe:train_step(x, target, loss_fn) -> loss: one step of the schedule; gradients accumulate
--- into this stage's parameters (zero them before, as for any step).
function Pipeline:train_step(x, target, loss_fn)
  local fname = 'dist.Pipeline:train_step'
  local rank, size = world()
  local t0 = dist.wtime()
  local results, timeline = self:_run(fname, x, target, loss_fn, true)
  local t1 = dist.wtime()
  local Mb = self.micro_batches
  -- the loss: mean over micro-batches, from the last stage to all
  local loss = lm.zeros(1, { dtype = 'float64' })
  if rank == size - 1 then
    local s = 0
    for m = 1, Mb do s = s + results[m]:item() end
    loss[1] = s / Mb
  end
  if size > 1 then dist.broadcast(loss, size - 1) end
  self:_account(timeline, t0, t1)
  return loss[1]:item()
end

-- pipe.timeline and pipe.stats from every stage's ops
function Pipeline:_account(timeline, t0, t1)
  local rank, size = world()
  local n = #timeline
  local mine = lm.zeros(n, 4, { dtype = 'float64' })
  for i, e in ipairs(timeline) do
    mine[i][1], mine[i][2], mine[i][3], mine[i][4] = e.op == 'F' and 1 or 2, e.micro, e.t0, e.t1
  end
  local all = size > 1 and dist.all_gather(mine) or mine:unsqueeze(1)
  local stages, orders = {}, {}
  local lo, hi, busy = math.huge, -math.huge, 0
  for k = 1, size do
    local rows = all[k]:tolist()
    stages[k], orders[k] = {}, {}
    for i, r in ipairs(rows) do
      local e = { op = r[1] == 1 and 'F' or 'B', micro = math.tointeger(r[2]), t0 = r[3], t1 = r[4] }
      stages[k][i] = e
      orders[k][i] = { e.op, e.micro }
      lo, hi, busy = math.min(lo, e.t0), math.max(hi, e.t1), busy + (e.t1 - e.t0)
    end
  end
  local span = M.count_slots(orders)
  local Mb = self.micro_batches
  rawset(self, 'timeline', stages)
  rawset(self, 'stats', {
    stages = size, micro_batches = Mb, schedule = self.schedule,
    slots = span,
    bubble_slots = 1 - (2 * Mb) / span,
    bubble_formula = (size - 1) / (Mb + size - 1),
    bubble_measured = hi > lo and 1 - busy / (size * (hi - lo)) or 0,
    seconds = t1 - t0,
    peak_activations = self._peak,
  })
end

--- pipe:forward(x) -> the last stage's output for the batch (micro-batches concatenated) on the
--- last rank, nil on the others. No graph is kept.
function Pipeline:forward(x)
  local rank, size = world()
  local results = self:_run('dist.Pipeline:forward', x, nil, nil, false)
  if rank ~= size - 1 then return nil end
  return lm.cat(results, 1)
end

-- ---------------------------------------------------------------- ZeRO-1

local Zero = {}
Zero.__index = Zero
Zero.__name = 'ZeroRedundancyOptimizer'

function M.ZeroRedundancyOptimizer(params, cls, opts)
  local fname = 'dist.ZeroRedundancyOptimizer'
  local rank, size = world()
  if type(params) ~= 'table' or lm.is_tensor(params) then fail(fname, 'argument 1 must be a list of parameters') end
  if type(cls) ~= 'table' and type(cls) ~= 'function' then
    fail(fname, 'argument 2 must be an optimiser class (optim.Adam), got %s', type(cls))
  end
  local list = {}
  for i, p in ipairs(params) do
    if not lm.is_tensor(p) then fail(fname, 'parameter %d is not a tensor', i) end
    list[i] = p
  end
  if #list == 0 then fail(fname, 'no parameters') end
  -- each parameter, in order, to the rank with the fewest elements so far (ties: the lowest rank)
  local load, owner, mine = {}, {}, {}
  for r = 0, size - 1 do load[r] = 0 end
  for i, p in ipairs(list) do
    local best = 0
    for r = 1, size - 1 do if load[r] < load[best] then best = r end end
    owner[i] = best
    load[best] = load[best] + p:numel()
    if best == rank then mine[#mine + 1] = p end
  end
  local self = setmetatable({ params = list, owner = owner, load = load, rank = rank, world = size }, Zero)
  if #mine > 0 then self.optimizer = cls(mine, opts) end
  return self
end

function Zero:zero_grad(o)
  for _, p in ipairs(self.params) do
    if p.grad then
      if o and o.set_to_none == false then p.grad:zero_() else p.grad = nil end
    end
  end
end

--- zero:step(): this rank's part updated by its optimiser, then every part broadcast from its owner.
function Zero:step()
  if self.optimizer then self.optimizer:step() end
  if self.world > 1 then
    lm.no_grad(function()
      for i, p in ipairs(self.params) do dist.broadcast(p, self.owner[i]) end
    end)
  end
end

--- zero:state_bytes() -> bytes of optimiser state this rank keeps (its parameters' moments).
function Zero:state_bytes()
  local n = 0
  if self.optimizer then
    for _, st in pairs(self.optimizer.state) do
      for _, v in pairs(st) do if lm.is_tensor(v) then n = n + v:nbytes() end end
    end
  end
  return n
end

function Zero:__tostring()
  return string.format('ZeroRedundancyOptimizer(rank %d of %d: %d of %d parameters, %d elements)', self.rank,
    self.world, self.optimizer and #self.optimizer.param_groups[1].params or 0, #self.params, self.load[self.rank])
end

return M
