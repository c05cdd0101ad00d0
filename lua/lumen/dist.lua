--[[
lumen.dist — distributed training's communication over Open MPI (`local dist = require 'lumen.dist'`;
run with `mpirun -np N lumen script.lua`; as root add --allow-run-as-root, past the cores
--oversubscribe).

  dist.init()                      joins the world (without mpirun: a world of one, no MPI)
  dist.rank(), dist.world_size()   0-based rank, number of ranks
  dist.barrier()
  dist.all_reduce(t [, {op = 'sum'|'mean'|'max'|'min', algo = 'mpi'|'ring'|'tree'}]) -> t (in place)
  dist.broadcast(t, src) -> t      (in place: every rank gets src's values)
  dist.all_gather(t) -> T          (world, ...): every rank's t stacked in rank order
  dist.reduce_scatter(t [, {op=}]) -> chunk   rank r gets the reduction of rows r * n/world ..
  dist.send(t, dst), dist.recv(t, src), dist.sendrecv(t, dst, into, src), dist.isend(t, dst)
  dist.save(path, tensors)         a checkpoint written by rank 0 alone, the others waiting

Every collective first checks that the ranks agree on the call, the shape and the dtype (one
small all-gather): a disagreement is an error on every rank naming each rank's tensor, not a hang.
Tensors go as whole contiguous CPU buffers (a copy when they are not). algo 'mpi' is Open MPI's
own MPI_Allreduce; 'ring' (in C, dist_mpi.c) and 'tree' (here) are Lumen's own, written on
point-to-point messages: the algorithms the lesson animates:
  ring  reduce-scatter then all-gather around the ring: the tensor in n chunks (sizes differ by at
        most one element); in step s rank r sends chunk (r - s) mod n to r + 1 and adds the chunk
        (r - s - 1) mod n from r - 1; after n - 1 steps rank r holds the sum of chunk (r + 1) mod n,
        summed in the fixed order starting at rank (r + 2) mod n; n - 1 more steps pass the
        finished chunks on. Every rank ends with the same bits. 2 (n - 1) / n of the data cross
        each link.
  tree  a binomial tree: rank r adds what r + 2^k sends for each k below its lowest set bit, then
        sends its sum to r - 2^k; rank 0 broadcasts the total down the same tree.
Integer data give the bits of MPI_Allreduce; floats differ by rounding only (the orders differ).
'mean' divides the sum by the world size.
An error on one rank ends the job: at the program's end (lm._at_exit) a rank that failed calls
MPI_Abort, so the others stop instead of waiting in a collective; a rank that ends well finalizes.
Read next: src/dist/dist_mpi.c.
]]
local lm = require 'lumen'

local M = {}
local mpi -- the module's functions (liblumen_dist.so), once initialised
local world = nil -- {rank =, size =, mpi = bool}

local function fail(fname, fmt, ...) error(fname .. ': ' .. string.format(fmt, ...), 3) end

--- Whether this build can run on MPI (liblumen_dist.so was built).
function M.is_available() return lm._dist_built == true end

--- Whether dist.init() ran.
function M.is_initialized() return world ~= nil end

local function under_mpirun()
  return os.getenv('OMPI_COMM_WORLD_SIZE') ~= nil or os.getenv('PMIX_RANK') ~= nil or os.getenv('PMI_RANK') ~= nil
end

--- dist.init(): joins the MPI world (under mpirun); without mpirun, a world of one rank where every
--- collective is the identity. Returns rank, world size. Called twice: the same world.
function M.init()
  if world then return world.rank, world.size end
  if under_mpirun() then
    if not M.is_available() then lm._dist_open() end -- raises: why there is no MPI here
    mpi = lm._dist_open()
    local rank, size = mpi.init()
    world = { rank = rank, size = size, mpi = true }
    -- the program's end: finalize, or stop the others after an error (src/app/main.c calls it)
    lm._at_exit = function(status)
      if status ~= 0 then
        io.stderr:write(string.format('dist: rank %d of %d failed; stopping the other ranks\n', world.rank, world.size))
        io.stderr:flush()
        mpi.abort(1)
      else
        mpi.finalize()
      end
    end
  else
    world = { rank = 0, size = 1, mpi = false }
  end
  return world.rank, world.size
end

local function need(fname)
  if not world then fail(fname, 'call dist.init() first (and run the script with mpirun -np N lumen script.lua)') end
end

function M.rank()
  need('dist.rank')
  return world.rank
end

function M.world_size()
  need('dist.world_size')
  return world.size
end

function M.barrier()
  need('dist.barrier')
  if world.mpi then mpi.barrier() end
end

--- MPI's clock (seconds), or lm.sys.clock without MPI.
function M.wtime() return world and world.mpi and mpi.wtime() or lm.sys.clock() end

local function shape_str(t) return '[' .. table.concat(t:shape(), ', ') .. ']' end

local function check_tensor(fname, t, what)
  if not lm.is_tensor(t) then fail(fname, '%s must be a tensor, got %s', what or 'the argument', type(t)) end
  if t:device() ~= 'cpu' then fail(fname, '%s must be on the CPU (got %s)', what or 'the tensor', tostring(t:device())) end
end

-- Every rank must make the same call on the same shape and dtype: one all-gather of a line each.
local function agree(fname, text)
  if not world.mpi then return end
  local all = mpi.agree(text)
  if all then
    local parts = {}
    for r, s in ipairs(all) do parts[#parts + 1] = string.format('rank %d: %s', r - 1, s) end
    error(string.format('%s: the ranks disagree (%s)', fname, table.concat(parts, '; ')), 3)
  end
end

-- A contiguous tensor holding t's values (t itself when it is contiguous), to send or reduce into.
local function dense(t)
  if t:is_contiguous() then return t end
  return t:contiguous()
end

-- f(d) on a contiguous d holding t's values, outside autograd; what f wrote lands back in t.
local function in_place(t, f)
  local d = dense(t)
  lm.no_grad(function()
    f(d)
    if d ~= t then t:copy_(d) end
  end)
  return t
end

local OPS = { sum = true, mean = true, max = true, min = true }
local ALGOS = { mpi = true, ring = true, tree = true }

local function add_into(dst, src, op)
  if op == 'max' then dst:copy_(lm.maximum(dst, src))
  elseif op == 'min' then dst:copy_(lm.minimum(dst, src))
  else dst:add_(src) end
end

-- the ring: in C on MPI's point-to-point calls (dist_mpi.c: ring_allreduce), segmented so that
-- the reduction overlaps the transfer; the algorithm is the one described above
local function ring(flat, op) mpi.ring_allreduce(flat, op) end

local function tree(flat, op)
  local n, r = world.size, world.rank
  local buf = lm.empty(flat:numel(), { dtype = flat:dtype() })
  local mask = 1
  while mask < n do -- reduce towards rank 0
    if r & mask ~= 0 then
      mpi.send(flat, r - mask, 3)
      break
    elseif r + mask < n then
      mpi.recv(buf, r + mask, 3)
      add_into(flat, buf, op)
    end
    mask = mask << 1
  end
  -- broadcast down the same tree: each rank receives from the parent it sent to, then serves
  -- its own children, largest subtree first
  local top = 1
  while top < n do top = top << 1 end
  if r ~= 0 then
    local low = r & -r
    mpi.recv(flat, r - low, 4)
    top = low
  end
  local m = top >> 1
  while m >= 1 do
    if r + m < n and (r % (m << 1)) == 0 then mpi.send(flat, r + m, 4) end
    m = m >> 1
  end
end

--- dist.all_reduce(t [, {op = 'sum', algo = 'mpi'}]) -> t: t becomes the reduction over the ranks.
function M.all_reduce(t, opts)
  local fname = 'dist.all_reduce'
  need(fname)
  check_tensor(fname, t)
  opts = opts or {}
  local op, algo = opts.op or 'sum', opts.algo or 'mpi'
  if not OPS[op] then fail(fname, "op '%s' is not one of sum, mean, max, min", tostring(op)) end
  if not ALGOS[algo] then fail(fname, "algo '%s' is not one of mpi, ring, tree", tostring(algo)) end
  agree(fname, string.format('all_reduce %s %s %s %s', op, algo, t:dtype(), shape_str(t)))
  if not world.mpi or world.size == 1 then return t end
  if op == 'mean' and not t:dtype():match('float') then fail(fname, "op 'mean' needs a float tensor, got %s", t:dtype()) end
  local mop = op == 'mean' and 'sum' or op
  if op ~= 'mean' and algo ~= 'tree' and t:is_contiguous() then -- the common case, without a closure
    if algo == 'mpi' then mpi.allreduce(t, mop) else ring(t, mop) end
    return t
  end
  return in_place(t, function(d)
    local flat = d:view(-1)
    if algo == 'mpi' then mpi.allreduce(flat, mop)
    elseif algo == 'ring' then ring(flat, mop)
    else tree(flat, mop) end
    if op == 'mean' then flat:div_(world.size) end
  end)
end

--- dist.broadcast(t, src) -> t: every rank's t takes rank src's values.
function M.broadcast(t, src)
  local fname = 'dist.broadcast'
  need(fname)
  check_tensor(fname, t)
  if math.type(src) ~= 'integer' or src < 0 or src >= world.size then
    fail(fname, 'src must be a rank 0..%d, got %s', world.size - 1, tostring(src))
  end
  agree(fname, string.format('broadcast %d %s %s', src, t:dtype(), shape_str(t)))
  if not world.mpi then return t end
  return in_place(t, function(d) mpi.bcast(d, src) end)
end

--- dist.all_gather(t) -> (world, ...) every rank's t in rank order.
function M.all_gather(t)
  local fname = 'dist.all_gather'
  need(fname)
  check_tensor(fname, t)
  agree(fname, string.format('all_gather %s %s', t:dtype(), shape_str(t)))
  local shape = t:shape()
  table.insert(shape, 1, world.size)
  if not world.mpi then return t:detach():unsqueeze(1):clone() end
  local out = lm.empty(shape, { dtype = t:dtype() })
  lm.no_grad(function() mpi.allgather(dense(t), out) end)
  return out
end

--- dist.reduce_scatter(t [, {op = 'sum'}]) -> rank r's share of the reduction: t's first dim split
--- into world_size equal parts, part r reduced over the ranks.
function M.reduce_scatter(t, opts)
  local fname = 'dist.reduce_scatter'
  need(fname)
  check_tensor(fname, t)
  local op = (opts or {}).op or 'sum'
  if op ~= 'sum' and op ~= 'max' and op ~= 'min' and op ~= 'mean' then
    fail(fname, "op '%s' is not one of sum, mean, max, min", tostring(op))
  end
  if t:dim() < 1 or t:size(1) % world.size ~= 0 then
    fail(fname, 'the first dim of %s must be a multiple of the world size %d', shape_str(t), world.size)
  end
  agree(fname, string.format('reduce_scatter %s %s %s', op, t:dtype(), shape_str(t)))
  local shape = t:shape()
  shape[1] = shape[1] // world.size
  if not world.mpi then return t:detach():clone() end
  local out = lm.empty(shape, { dtype = t:dtype() })
  lm.no_grad(function()
    mpi.reduce_scatter(dense(t), out, op == 'mean' and 'sum' or op)
    if op == 'mean' then out:div_(world.size) end
  end)
  return out
end

local function check_peer(fname, r, what)
  if math.type(r) ~= 'integer' or r < 0 or r >= world.size then
    fail(fname, '%s must be a rank 0..%d, got %s', what, world.size - 1, tostring(r))
  end
  if r == world.rank then fail(fname, '%s %d is this rank', what, r) end
end

--- dist.send(t, dst): t's values to rank dst (which calls dist.recv with a tensor of t's size).
function M.send(t, dst, tag)
  local fname = 'dist.send'
  need(fname)
  check_tensor(fname, t)
  check_peer(fname, dst, 'dst')
  mpi.send(dense(t), dst, tag or 0)
end

--- dist.recv(t, src) -> t: fills t with what rank src sends.
function M.recv(t, src, tag)
  local fname = 'dist.recv'
  need(fname)
  check_tensor(fname, t)
  check_peer(fname, src, 'src')
  return in_place(t, function(d) mpi.recv(d, src, tag or 0) end)
end

--- dist.isend(t, dst [, tag]) -> handle: starts sending t's values to dst and returns at once;
--- handle:wait() ends it. Until then t must stay unchanged (a non-contiguous t is copied first;
--- the handle keeps what it sends alive). The pipeline's sends (a blocking send of a large tensor
--- waits for its receive: two stages sending to each other at once would wait for ever).
local Handle = {}
Handle.__index = Handle
function Handle:wait()
  if self._req then
    mpi.wait(self._req)
    self._req, self._t = nil, nil
  end
end

function M.isend(t, dst, tag)
  local fname = 'dist.isend'
  need(fname)
  check_tensor(fname, t)
  check_peer(fname, dst, 'dst')
  if tag ~= nil and (math.type(tag) ~= 'integer' or tag < 0 or tag > 32767) then
    fail(fname, 'tag must be an integer 0..32767, got %s', tostring(tag))
  end
  local d = dense(t)
  return setmetatable({ _req = mpi.isend(d, dst, tag or 0), _t = d }, Handle)
end

--- dist.sendrecv(t, dst, into, src) -> into: sends t to dst while receiving into from src (the
--- step of a ring: every rank sends and receives at once, so no rank waits on another's send).
function M.sendrecv(t, dst, into, src, tag)
  local fname = 'dist.sendrecv'
  need(fname)
  check_tensor(fname, t)
  check_tensor(fname, into, 'into')
  if math.type(dst) ~= 'integer' or dst < 0 or dst >= world.size then fail(fname, 'dst must be a rank 0..%d', world.size - 1) end
  if math.type(src) ~= 'integer' or src < 0 or src >= world.size then fail(fname, 'src must be a rank 0..%d', world.size - 1) end
  if not world.mpi then into:copy_(t) return into end
  return in_place(into, function(d) mpi.sendrecv(dense(t), dst, d, src, tag or 0) end)
end

-- ---------------------------------------------------------------- DistributedDataParallel

--[[
nn.DistributedDataParallel(module [, {bucket_cap_mb = 25, first_bucket_mb = 1, algo = 'mpi'}])
(also dist.DistributedDataParallel): every rank holds the same module (rank 0's parameters are
broadcast when it is made); each rank runs forward and backward on its own share of the batch and
the gradients are averaged over the ranks, so the optimiser steps on every rank the same way.
The parameters go into buckets in reverse order (backward produces the last layers' gradients
first): the first bucket up to first_bucket_mb, the others up to bucket_cap_mb, a bucket per
dtype. During backward the engine reports each parameter's finished gradient
(lm.autograd._set_hooks); when a bucket is full it is all-reduced at once — with algo 'mpi'
started without waiting (MPI_Iallreduce), so the communication overlaps the rest of backward —
and at the end of backward the averages replace the .grad of every parameter. What is reduced
is each .grad as backward leaves it (what no_sync accumulated plus this backward's part), so
ddp:no_sync(fn) (backward passes without communication, gradients accumulating locally) works as
PyTorch's. Every parameter must take part in the loss (an unused one is an error naming it).
ddp.stats: all_reduce calls and seconds of the last backward; ddp.timeline: each bucket's
launch and end and the end of backward's own work (backward_end), seconds from the forward —
viz.show('ddp', ddp) draws them.
]]
local DDP

local function build_ddp()
  local nn = require 'lumen.nn'
  DDP = nn.Module:extend('DistributedDataParallel')

  function DDP:__init(module, opts)
    local fname = 'nn.DistributedDataParallel'
    if not world then fail(fname, 'call dist.init() first (and run with mpirun -np N lumen script.lua)') end
    if not nn.is_module(module) then fail(fname, 'the module must be an nn module, got %s', type(module)) end
    opts = opts or {}
    self.module = module
    local cap = opts.bucket_cap_mb or 25
    local first = opts.first_bucket_mb or 1
    if type(cap) ~= 'number' or cap <= 0 or type(first) ~= 'number' or first <= 0 then
      fail(fname, 'bucket_cap_mb and first_bucket_mb must be positive numbers')
    end
    local algo = opts.algo or 'mpi'
    if not ALGOS[algo] then fail(fname, "algo '%s' is not one of mpi, ring, tree", tostring(algo)) end
    rawset(self, '_algo', algo)
    local params, names = {}, {}
    local named = module:named_parameters()
    local keys = {}
    for k in pairs(named) do keys[#keys + 1] = k end
    table.sort(keys)
    -- the module's order (parameters() is registration order); names for messages
    local byid = {}
    for _, k in ipairs(keys) do byid[lm.autograd._id(named[k])] = k end
    for _, p in ipairs(module:parameters()) do
      if p.requires_grad then
        params[#params + 1] = p
        names[#params] = byid[lm.autograd._id(p)] or ('#' .. #params)
      end
    end
    local sig = {}
    for i, p in ipairs(params) do sig[i] = p:dtype() .. shape_str(p) end
    agree(fname, 'DDP ' .. #params .. ' ' .. table.concat(sig, ' '):sub(1, 200))
    lm.no_grad(function()
      for _, p in ipairs(params) do M.broadcast(p, 0) end
    end)
    -- buckets, last parameters first
    local buckets, cur, bytes, limit = {}, nil, 0, first * (1 << 20)
    for i = #params, 1, -1 do
      local p = params[i]
      local b = p:nbytes()
      if not cur or cur.dtype ~= p:dtype() or (bytes + b > limit and #cur.params > 0) then
        if cur then limit = cap * (1 << 20) end
        cur = { params = {}, dtype = p:dtype(), numel = 0 }
        buckets[#buckets + 1] = cur
        bytes = 0
      end
      cur.params[#cur.params + 1] = i
      cur.numel = cur.numel + p:numel()
      bytes = bytes + b
    end
    local where = {}
    for bi, bk in ipairs(buckets) do
      bk.buffer = lm.zeros(bk.numel, { dtype = bk.dtype })
      local off = 0
      bk.offset = {}
      for _, i in ipairs(bk.params) do
        bk.offset[i] = off
        off = off + params[i]:numel()
        where[lm.autograd._id(params[i])] = { bucket = bi, index = i }
      end
    end
    rawset(self, '_params', params)
    rawset(self, '_names', names)
    rawset(self, '_buckets', buckets)
    rawset(self, '_where', where)
    rawset(self, '_sync', true)
    rawset(self, 'stats', { calls = 0, seconds = 0, buckets = #buckets })
    rawset(self, 'timeline', {})
    for _, p in ipairs(params) do lm.autograd._watch(p, true) end
  end

  -- the engine's hooks for the next backward: this DDP's
  function DDP:_arm()
    local state = { ready = {}, got = {}, reqs = {}, t0 = M.wtime(), timeline = {} }
    for bi = 1, #self._buckets do state.ready[bi] = 0 end
    local me = self
    local function launch(bi)
      local bk = me._buckets[bi]
      local t = M.wtime()
      me.stats.calls = me.stats.calls + 1
      if world.mpi and world.size > 1 then
        if me._algo == 'mpi' then state.reqs[bi] = mpi.iallreduce(bk.buffer, 'sum')
        else M.all_reduce(bk.buffer, { algo = me._algo }) end
      end
      state.timeline[bi] = { launch = t - state.t0 }
    end
    local function ready(id, g)
      local w = me._where[id]
      if not w or not me._sync then return end
      local bk = me._buckets[w.bucket]
      local p = me._params[w.index]
      local total = p.grad and (p.grad + g) or g
      bk.buffer:narrow(1, bk.offset[w.index] + 1, p:numel()):copy_(total:reshape(-1))
      state.got[w.index] = true
      state.ready[w.bucket] = state.ready[w.bucket] + 1
      if state.ready[w.bucket] == #bk.params then launch(w.bucket) end
    end
    local function done()
      lm.autograd._set_hooks(nil, nil)
      if not me._sync then return end
      state.timeline.backward_end = M.wtime() - state.t0 -- before waiting for the buckets
      for i = 1, #me._params do
        if not state.got[i] then
          error(string.format('nn.DistributedDataParallel: parameter %s got no gradient in this backward (every parameter must take part in the loss)',
            me._names[i]), 0)
        end
      end
      local n = world.size
      for bi, bk in ipairs(me._buckets) do
        if state.reqs[bi] then mpi.wait(state.reqs[bi]) end
        state.timeline[bi].done = M.wtime() - state.t0
        if n > 1 then bk.buffer:div_(n) end
        for _, i in ipairs(bk.params) do
          local p = me._params[i]
          p.grad:copy_(bk.buffer:narrow(1, bk.offset[i] + 1, p:numel()):view(p:shape()))
        end
      end
      me.stats.seconds = M.wtime() - state.t0
      rawset(me, 'timeline', state.timeline)
    end
    lm.autograd._set_hooks(ready, done)
  end

  function DDP:forward(...)
    self:_arm()
    return self.module(...)
  end

  --- ddp:no_sync(fn, ...): runs fn (forward and backward passes) without communication; the
  --- gradients accumulate locally and the next synchronised backward averages their sum.
  function DDP:no_sync(fn, ...)
    rawset(self, '_sync', false)
    local r = table.pack(pcall(fn, ...))
    rawset(self, '_sync', true)
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end

  function DDP:extra_repr()
    return string.format('world_size=%d, buckets=%d, algo=%s', world.size, #self._buckets, self._algo)
  end
  return DDP
end

M.DistributedDataParallel = setmetatable({}, {
  __call = function(_, ...) return (DDP or build_ddp())(...) end,
  __index = function(_, k) return (DDP or build_ddp())[k] end,
})

--- dist.DistributedSampler(n [, {shuffle = true, seed = 0, drop_last = false}]): the indices of a
--- data set of n samples this rank takes, as PyTorch's: a permutation (seeded, the same on every
--- rank, from a seeded generator of its own; call sampler:set_epoch(e) each epoch) padded by
--- repeating its start to a multiple of the
--- world size (or cut, drop_last), then every world_size-th from this rank's offset.
--- sampler:indices() -> int64 tensor (1-based); #sampler.
function M.DistributedSampler(n, opts)
  local fname = 'dist.DistributedSampler'
  need(fname)
  if math.type(n) ~= 'integer' or n < 1 then fail(fname, 'the data set size must be a positive integer, got %s', tostring(n)) end
  opts = opts or {}
  local s = { n = n, shuffle = opts.shuffle ~= false, seed = opts.seed or 0, drop_last = opts.drop_last or false,
    epoch = 0 }
  local size, rank = world.size, world.rank
  if s.drop_last then s.per = n // size else s.per = (n + size - 1) // size end
  if s.per == 0 then fail(fname, 'a data set of %d samples gives nothing to each of %d ranks with drop_last', n, size) end
  function s:set_epoch(e) self.epoch = e end
  function s:indices()
    local perm
    if self.shuffle then -- Fisher-Yates from a seeded LCG: the same permutation on every rank
      local t, x = {}, (self.seed * 1000003 + self.epoch * 7919 + 12345) % 2147483648
      for i = 1, n do t[i] = i end
      for i = n, 2, -1 do
        x = (x * 1103515245 + 12345) % 2147483648
        local j = x % i + 1
        t[i], t[j] = t[j], t[i]
      end
      perm = lm.tensor(t, { dtype = 'int64' })
    else
      perm = lm.arange(1, n + 1)
    end
    perm = perm:long()
    local total = self.per * size
    if total > n then perm = lm.cat({ perm, perm:narrow(1, 1, total - n) }, 1) end
    perm = perm:narrow(1, 1, total)
    return perm:view(self.per, size):select(2, rank + 1):contiguous()
  end
  return setmetatable(s, { __len = function(self) return self.per end })
end

--- dist.save(path, tensors [, opts]) -> true: a checkpoint written once, by rank 0 (lm.save: a
--- temporary file renamed over path, so a crash never leaves half a file), while the others wait;
--- then every rank can read it. A failure on rank 0 is an error on every rank, with rank 0's reason.
function M.save(path, tensors, opts)
  local fname = 'dist.save'
  need(fname)
  if type(path) ~= 'string' then fail(fname, 'argument 1 must be a path, got %s', type(path)) end
  local ok, err = true, nil
  if world.rank == 0 then ok, err = pcall(lm.save, path, tensors, opts) end
  if world.mpi and world.size > 1 then
    -- rank 0's outcome and reason to every rank (a fixed-size message: 1 + 400 bytes)
    local msg = lm.zeros(401, { dtype = 'uint8' })
    if world.rank == 0 then
      msg[1] = ok and 1 or 0
      local text = ok and '' or tostring(err):sub(1, 400)
      for i = 1, #text do msg[i + 1] = text:byte(i) end
    end
    mpi.bcast(msg, 0)
    local bytes = msg:tolist()
    ok = bytes[1] == 1
    if not ok and world.rank ~= 0 then
      local chars = {}
      for i = 2, 401 do if bytes[i] == 0 then break end chars[#chars + 1] = string.char(bytes[i]) end
      err = table.concat(chars)
    end
  end
  if not ok then
    error(string.format("%s: rank 0 could not write '%s': %s", fname, path, (tostring(err):gsub('^[^:]*:%d+: ', ''))), 2)
  end
  return true
end

-- model parallelism (lumen/dist_parallel.lua), loaded on first use
for _, k in ipairs({ 'ColumnParallelLinear', 'RowParallelLinear', 'Pipeline', 'ZeroRedundancyOptimizer',
  'copy_to_parallel', 'reduce_from_parallel', 'gather_from_parallel', 'scatter_to_parallel' }) do
  M[k] = function(...) return require('lumen.dist_parallel')[k](...) end
end

--- The MPI library's name and version ("Open MPI v4.1.4"), or nil without MPI.
function M.mpi_version()
  if not M.is_available() then return nil end
  return lm._dist_open().version()
end

return M
