--[[
tests/dist/ddp_check.lua — run by tests/dist/run.sh under mpirun: nn.DistributedDataParallel
against one process with the same global batch, computed on every rank alone (each rank can
compute every shard's gradient): 3 SGD steps of an MLP on Fashion-MNIST, each rank taking its
share of every batch. With algo 'tree' the shards' gradients are summed here in the tree's own
order, so the weights must equal bit for bit; with 'mpi' and 'ring' within rounding. Also: rank
0's initial weights reach every rank; no_sync accumulates locally and the next backward averages
the sum; one all-reduce per step with the default bucket size, one per bucket with small ones;
DistributedSampler's shares are disjoint and cover the data. Prints "rank R: N checks ...".
]]
local dist = require 'lumen.dist'
local rank, n = dist.init()
local checks, failed = 0, 0
local function ok(cond, what)
  checks = checks + 1
  if not cond then
    failed = failed + 1
    io.stderr:write(string.format('rank %d: FAIL: %s\n', rank, what))
  end
end

local train = data.FashionMNIST { split = 'train', limit = 256 }
local X, Y = train.data:view(256, 784), train.targets
local b = 8 -- per rank
local function make_net(seed)
  lm.manual_seed(seed)
  return nn.Sequential(nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
end
local function batch(step, r) -- rank r's share of step's global batch
  local first = ((step - 1) * n * b + r * b) % 256
  return X:narrow(1, first + 1, b), Y:narrow(1, first + 1, b)
end

-- the shards' gradients combined as the tree does (rank r adds what r + mask sends, mask = 1, 2, ...)
local function tree_sum(gs)
  local acc = {}
  for r = 0, n - 1 do acc[r] = gs[r] end
  local mask = 1
  while mask < n do
    for r = 0, n - 1, 2 * mask do
      if r + mask < n then acc[r] = acc[r] + acc[r + mask] end
    end
    mask = mask * 2
  end
  return acc[0]
end

local function grads_of(net, micro) -- every shard's (summed over micro-batches) gradient, per parameter
  local per = {}
  for r = 0, n - 1 do
    for _, p in ipairs(net:parameters()) do p.grad = nil end
    for _, step in ipairs(micro) do
      local x, y = batch(step, r)
      F.cross_entropy(net(x), y):backward()
    end
    per[r] = {}
    for i, p in ipairs(net:parameters()) do per[r][i] = p.grad:clone() end
  end
  return per
end

for _, algo in ipairs({ 'tree', 'mpi', 'ring' }) do
  local net = make_net(10 + rank) -- a different start on every rank: DDP takes rank 0's
  local ddp = nn.DistributedDataParallel(net, { algo = algo })
  local ref = make_net(10) -- rank 0's start
  for i, p in ipairs(net:parameters()) do ok(lm.equal(p, ref:parameters()[i]), algo .. ': rank 0\'s weights everywhere') end
  local opt = optim.SGD(net:parameters(), { lr = 0.1 })
  local ropt = optim.SGD(ref:parameters(), { lr = 0.1 })
  for step = 1, 3 do
    opt:zero_grad()
    local micro = step == 3 and { 3, 4 } or { step }
    if #micro == 2 then -- gradient accumulation: the first micro-batch without communication
      ddp:no_sync(function()
        local x, y = batch(micro[1], rank)
        F.cross_entropy(ddp(x), y):backward()
      end)
    end
    local calls = ddp.stats.calls
    local x, y = batch(micro[#micro], rank)
    F.cross_entropy(ddp(x), y):backward()
    ok(ddp.stats.calls - calls == 1, algo .. ': one all-reduce per step with the default bucket')
    opt:step()
    local per = grads_of(ref, micro)
    for i, p in ipairs(ref:parameters()) do
      local gs = {}
      for r = 0, n - 1 do gs[r] = per[r][i] end
      p.grad = tree_sum(gs) / n
    end
    ropt:step()
  end
  for i, p in ipairs(net:parameters()) do
    local q = ref:parameters()[i]
    if algo == 'tree' then
      ok(lm.equal(p, q), string.format('tree: parameter %d bit for bit (max diff %.3g)', i, (p - q):abs():max():item()))
    else
      ok(lm.allclose(p, q, 1e-5, 1e-6), string.format('%s: parameter %d within rounding (max diff %.3g)', algo, i,
        (p - q):abs():max():item()))
    end
  end
  -- every rank the same weights
  local w = dist.all_gather(net[1].weight)
  ok(lm.equal(w[1], w[n]), algo .. ': the same weights on every rank')
end

-- small buckets: one all-reduce per bucket, and the same result
do
  local net = make_net(3)
  local ddp = nn.DistributedDataParallel(net, { bucket_cap_mb = 0.001, first_bucket_mb = 0.0001, algo = 'tree' })
  ok(ddp.stats.buckets == 4, 'four buckets for four parameters, got ' .. ddp.stats.buckets)
  local x, y = batch(1, rank)
  F.cross_entropy(ddp(x), y):backward()
  ok(ddp.stats.calls == 4, 'an all-reduce per bucket: ' .. ddp.stats.calls)
  ok(#ddp.timeline == 4 and ddp.timeline[1].launch <= ddp.timeline[4].launch, 'the timeline of the buckets')
  ok(type(ddp.timeline.backward_end) == 'number' and ddp.timeline[4].done >= ddp.timeline.backward_end,
    'the timeline ends after backward\'s own work')
  if rank == 0 then -- the DDP timeline scene from this real run (offscreen)
    viz.show('ddp', ddp)
    ok(viz.state().scene == 'ddp' and viz.state().steps == 5, 'the ddp scene of the run')
    viz.close()
  end
end

-- an unused parameter is named
do
  local net = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
  local ddp = nn.DistributedDataParallel(net)
  local okc, err = pcall(function() ddp.module[1](lm.randn(2, 4)):sum():backward() end)
  -- forward went around ddp: no hooks armed, nothing to check; through ddp:
  ddp:_arm()
  okc, err = pcall(function() net[1](lm.randn(2, 4)):sum():backward() end)
  ok(not okc and tostring(err):find('got no gradient in this backward', 1, true), 'an unused parameter: ' .. tostring(err))
  lm.autograd._set_hooks(nil, nil)
end

-- the sampler: disjoint shares covering the data
do
  local s = dist.DistributedSampler(37, { seed = 4 })
  local all = dist.all_gather(s:indices())
  local seen, count = {}, 0
  for _, v in ipairs(all:view(-1):tolist()) do
    if not seen[v] then count = count + 1 end
    seen[v] = true
  end
  ok(count == 37, 'the sampler covers all 37 samples: ' .. count)
  ok(#s == (37 + n - 1) // n, 'each rank takes ceil(37 / n)')
  s:set_epoch(1)
  local other = s:indices()
  ok(not lm.equal(other, all[rank + 1]), 'another epoch, another order')
  -- through data.DataLoader: this rank's batches hold exactly its share
  local data = require 'lumen.data'
  local ds = data.TensorDataset(lm.arange(1, 38):view(37, 1), lm.arange(1, 38))
  local loader = data.DataLoader(ds, { batch_size = 5, sampler = s })
  local got = {}
  for _, y in loader:iter() do for _, v in ipairs(y:tolist()) do got[#got + 1] = v end end
  ok(#loader == (#s + 4) // 5 and lm.equal(lm.tensor(got, { dtype = 'int64' }), other),
    'DataLoader with the sampler yields this rank\'s share in its order')
end

-- checkpoints: written by rank 0 alone, readable by every rank after; a failure is every rank's error
do
  local net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
  local ddp = nn.DistributedDataParallel(net)
  local path = ''
  if rank == 0 then
    local base = os.tmpname()
    os.remove(base)
    path = base .. '.safetensors'
  end
  -- one path for every rank: rank 0's
  local name = lm.zeros(200, { dtype = 'uint8' })
  if rank == 0 then for i = 1, #path do name[i] = path:byte(i) end end
  dist.broadcast(name, 0)
  local chars = {}
  for _, b in ipairs(name:tolist()) do if b == 0 then break end chars[#chars + 1] = string.char(b) end
  path = table.concat(chars)
  ok(dist.save(path, net:state_dict()) == true, 'dist.save returns true on every rank')
  local back = lm.load(path)
  local same = true
  for k, v in pairs(net:state_dict()) do same = same and back[k] ~= nil and lm.equal(back[k], v) end
  ok(same, 'every rank reads rank 0\'s checkpoint, equal to its own (DDP broadcast the weights)')
  dist.barrier()
  if rank == 0 then os.remove(path) end
  local okc, err = pcall(dist.save, '/nonexistent-dir/x.safetensors', net:state_dict())
  ok(not okc and tostring(err):find("dist.save: rank 0 could not write '/nonexistent-dir/x.safetensors'", 1, true),
    'a failed write is every rank\'s error: ' .. tostring(err))
  ok(ddp ~= nil)
end

print(string.format('rank %d of %d: %d checks, %d failed (DDP)', rank, n, checks, failed))
if failed > 0 then os.exit(1) end
