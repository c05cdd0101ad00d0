--[[
examples/quant_lab.lua — the quantization lab at full size (the lesson aics/03-quantization runs it
on subsets): trains examples/mlp_fashion.lua's MLP (784-256-10) and cnn_fashion.lua's CNN on all of
Fashion-MNIST, then measures test accuracy with the weights quantized (weight-only, lm.quant's
rules: symmetric, round half to even) at 8, 4, 3 and 2 bits, per tensor, per output channel and in
groups of 32 (a layer whose fan-in 32 does not divide, 784 or 9 or 144, ends each row in a shorter
group); one epoch of quantization-aware training at 2 bits per tensor; and the float32 against
int8 (nn.quantized: exact u8 x s8 products) inference time at batch 256, CPU measured.

  ./run.sh examples/quant_lab.lua [--epochs 3] [--seed 5] [--qat-epochs 1] [--qat-lr 0.01] [--limit N] [--threads N]

Prints one table; every number says where it came from. Long: minutes on two cores.
]]
local quant = lm.quant

local opts = { epochs = 3, seed = 5, qat_epochs = 1, qat_lr = 0.01, limit = nil, threads = nil, lr = 0.1, batch = 128 }
local i = 1
while arg and arg[i] do
  local k, v = arg[i]:match('^%-%-([%w%-]+)$'), arg[i + 1]
  if not k or v == nil then error('quant_lab: options are --epochs N --seed N --qat-epochs N --limit N --threads N', 0) end
  opts[k:gsub('%-', '_')] = tonumber(v)
  i = i + 2
end
if opts.threads then lm.set_num_threads(opts.threads) end

local train_set = data.FashionMNIST { split = 'train', limit = opts.limit }
local test_set = data.FashionMNIST { split = 'test' }

local function mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
end

local CNN = nn.Module:extend('FashionCNN')
function CNN:__init()
  self.conv1 = nn.Conv2d(1, 16, 3, { padding = 1 })
  self.conv2 = nn.Conv2d(16, 32, 3, { padding = 1 })
  self.pool = nn.MaxPool2d(2)
  self.fc = nn.Linear(32 * 7 * 7, 10)
end
function CNN:forward(x)
  x = self.pool(F.relu(self.conv1(x)))
  x = self.pool(F.relu(self.conv2(x)))
  return self.fc(x:flatten(2))
end

local function accuracy(model)
  model:eval()
  local correct, n = 0, 0
  lm.no_grad(function()
    for x, y in data.DataLoader(test_set, { batch_size = 1000 }):iter() do
      correct = correct + nn.utils.count_correct(model(x), y)
      n = n + x:size(1)
    end
  end)
  return correct / n
end

local function train(model, epochs, seed, lr)
  lm.manual_seed(seed)
  local opt = optim.SGD(model:parameters(), { lr = lr or opts.lr })
  local loader = data.DataLoader(train_set, { batch_size = opts.batch, shuffle = true, seed = seed })
  model:train()
  for _ = 1, epochs do
    for x, y in loader:iter() do
      opt:zero_grad()
      F.cross_entropy(model(x), y):backward()
      opt:step()
    end
  end
end

local function median_time(fn, rounds)
  local t = {}
  fn()
  for r = 1, rounds do
    local t0 = lm.sys.clock()
    fn()
    t[r] = lm.sys.clock() - t0
  end
  table.sort(t)
  return t[(rounds + 1) // 2]
end

print(string.format('quant_lab: Fashion-MNIST %d training / %d test images, %d epochs, SGD lr %g, batch %d, seed %d, %d threads',
  #train_set, #test_set, opts.epochs, opts.lr, opts.batch, opts.seed, lm.get_num_threads()))
local rows = {}
for _, spec in ipairs({ { 'MLP', mlp }, { 'CNN', CNN } }) do
  local name, make = spec[1], spec[2]
  lm.manual_seed(opts.seed)
  local model = make()
  train(model, opts.epochs, opts.seed)
  local state = model:state_dict()
  local saved = {}
  for k, v in pairs(state) do saved[k] = v:clone() end
  local function restore() model:load_state_dict(saved) end
  local base = accuracy(model)
  print(string.format('%s float32: %.2f%% (Lumen, CPU)', name, 100 * base))
  for _, bits in ipairs({ 8, 4, 3, 2 }) do
    local row = { name, 'W' .. bits }
    for _, g in ipairs({ 'tensor', 'channel', 'group' }) do
      restore()
      quant.quantize_weights(model, { bits = bits, granularity = g, group_size = 32, ragged = true })
      row[#row + 1] = accuracy(model)
    end
    rows[#rows + 1] = row
  end
  -- QAT: from the trained weights, one epoch with 2-bit per-tensor fake quantization
  restore()
  quant.quantize_weights(model, { bits = 2, granularity = 'tensor' })
  local ptq2 = accuracy(model)
  restore()
  quant.prepare_qat(model, { bits = 2, granularity = 'tensor' })
  train(model, opts.qat_epochs, opts.seed + 1, opts.qat_lr) -- fine-tuning: a tenth of the lr
  quant.unprepare(model)
  quant.quantize_weights(model, { bits = 2, granularity = 'tensor' })
  local qat2 = accuracy(model)
  print(string.format('%s W2 per tensor: %.2f%% after PTQ, %.2f%% after %d epoch%s of QAT (SGD lr %g, seed %d)', name,
    100 * ptq2, 100 * qat2, opts.qat_epochs, opts.qat_epochs == 1 and '' or 's', opts.qat_lr, opts.seed + 1))
  -- int8 inference at batch 256, float32 against nn.quantized
  restore()
  model:eval()
  local xb = data.DataLoader(test_set, { batch_size = 256 }):iter()()
  local tf = median_time(function() lm.no_grad(function() return model(xb) end) end, 15)
  quant.prepare(model)
  lm.no_grad(function() model(xb) end)
  quant.convert(model)
  local ti = median_time(function() return model(xb) end, 15)
  print(string.format('%s inference, batch 256: float32 %.2f ms, int8 %.2f ms (%.2fx), int8 accuracy %.2f%% ' ..
    '(CPU measured, median of 15, Lumen; int8: %s)', name, 1e3 * tf, 1e3 * ti, tf / ti, 100 * accuracy(model),
    'u8 x s8 int_mm'))
end

print('\naccuracy on the 10,000 test images, weights quantized (Lumen, CPU; rows: model and bits)')
print(string.format('%-4s %-4s %12s %12s %12s', 'net', 'W', 'per tensor', 'per channel', 'group 32'))
for _, r in ipairs(rows) do
  print(string.format('%-4s %-4s %11.2f%% %11.2f%% %11.2f%%', r[1], r[2], 100 * r[3], 100 * r[4], 100 * r[5]))
end
