--[[
bench/dist/ddp.lua — DistributedDataParallel on this machine: one epoch over N Fashion-MNIST
training images (default 6,000) of an MLP (784-256-10) and a small CNN, global batch 64, SGD;
under mpirun with 2 ranks (1 thread each) each rank takes half of every batch; run alone (no
mpirun) it is the one-process baseline (give it 2 threads). Prints seconds per epoch, the
all-reduce calls per step with the default buckets and with one bucket per parameter, and the
final training loss.
  bench/dist/run_ddp.sh runs both, same run.
]]
local dist = require 'lumen.dist'
local rank, n = dist.init()
local N = tonumber(os.getenv('N') or 6000)
local train = data.FashionMNIST { split = 'train', limit = N }
local X, Y = train.data, train.targets
local B = 64
local function models()
  lm.manual_seed(1)
  local mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
  local cnn = nn.Sequential(nn.Conv2d(1, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
  return { mlp = mlp, cnn = cnn }
end
local out = {}
for _, name in ipairs({ 'mlp', 'cnn' }) do
  for _, tiny in ipairs({ false, true }) do
    local net = models()[name]
    local model = net
    if n > 1 then
      model = nn.DistributedDataParallel(net, tiny and { bucket_cap_mb = 1e-6, first_bucket_mb = 1e-6 } or nil)
    end
    local opt = optim.SGD(net:parameters(), { lr = 0.05, momentum = 0.9 })
    local per = B // n
    local steps = N // B
    dist.barrier()
    local t0 = dist.wtime()
    local last
    for s = 0, steps - 1 do
      local first = s * B + rank * per
      local x, y = X:narrow(1, first + 1, per), Y:narrow(1, first + 1, per)
      opt:zero_grad()
      local loss = F.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
      last = loss:item()
    end
    dist.barrier()
    local secs = dist.wtime() - t0
    local calls = n > 1 and model.stats.calls / steps or 0
    out[#out + 1] = string.format('%-4s %-22s %8.2f s/epoch  %5.1f all-reduces/step  last loss %.4f (rank 0: its share of the batch)', name,
      n > 1 and (tiny and 'DDP, bucket per param' or 'DDP, default buckets') or 'one process', secs, calls, last)
    if n == 1 then break end
  end
end
if rank == 0 then
  print(string.format('bench/dist/ddp.lua: %d rank(s), %d thread(s) each, %d images, global batch %d', n,
    lm.get_num_threads(), N, B))
  for _, l in ipairs(out) do print(l) end
end
