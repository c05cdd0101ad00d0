--[[
bench/train/lumen_train.lua — the Lumen side of bench/train: runs the training loop of
examples/fashion_train.lua (the examples' own code) on the example's model and prints JSON lines
like torch_train.py: each epoch's training seconds and test accuracy, and the peak RSS; with
--dataloader-only, the data loading and two DataLoader-only epochs (batches gathered with
shuffle, no training) instead.

  lumen bench/train/lumen_train.lua --model mlp|cnn --threads N --epochs N [--optim sgd|adam]
  lumen bench/train/lumen_train.lua --dataloader-only --threads N
]]
local here = (arg and arg[0] or ''):match('^(.*/)') or 'bench/train/'
local root = here .. '../../'
local train = dofile(root .. 'examples/fashion_train.lua')

local model_name, rest, loader_only = 'mlp', {}, false
local i = 1
while arg[i] do
  if arg[i] == '--model' then model_name = arg[i + 1]; i = i + 2
  elseif arg[i] == '--dataloader-only' then loader_only = true; i = i + 1
  else rest[#rest + 1] = arg[i]; i = i + 1 end
end

local function mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
end
local CNN = nn.Module:extend('FashionCNN') -- as examples/cnn_fashion.lua
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

local function json(t)
  local parts = {}
  for k, v in pairs(t) do
    parts[#parts + 1] = string.format('"%s": %s', k, type(v) == 'string' and ('"' .. v .. '"') or string.format('%.6g', v))
  end
  print('{' .. table.concat(parts, ', ') .. '}')
  io.stdout:flush()
end

local o = train.parse(rest, 'lumen_train', { epochs = 1, lr = 0.1, adam_lr = 1e-3, batch = 128, seed = 1 })
if o.threads then lm.set_num_threads(o.threads) end
-- --dataloader-only: one epoch of shuffled batches of 128, twice (cold, then warm), and nothing else
-- (a separate process, so the training run's peak RSS is the example's own)
local function dataloader_only()
  local t0 = lm.sys.clock()
  local ds = data.FashionMNIST({ split = 'train' })
  json({ load_s = lm.sys.clock() - t0, threads = lm.get_num_threads() })
  local loader = data.DataLoader(ds, { batch_size = o.batch, shuffle = true, seed = 1 })
  for pass = 1, 2 do
    local t = lm.sys.clock()
    local n = 0
    for x in loader:iter() do n = n + x:size(1) end
    json({ dataloader_epoch_s = lm.sys.clock() - t, pass = pass, samples = n })
  end
end

local function training()
  rest[#rest + 1] = '--quiet'
  local history = train.run({ name = 'lumen_train', args = rest,
    defaults = { epochs = 1, lr = 0.1, adam_lr = 1e-3, batch = 128, seed = 1 },
    make_model = model_name == 'cnn' and function() return CNN() end or mlp })
  for e, h in ipairs(history) do json({ epoch = e, seconds = h.seconds, accuracy = h.accuracy, train_loss = h.train_loss }) end
  json({ peak_rss_mb = lm._data.peak_rss() / 2 ^ 20 })
end

if loader_only then dataloader_only() else training() end
