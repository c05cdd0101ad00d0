--[[
bench/quant/cnn_int8.lua — Lumen's side of bench/quant/cnn.sh: examples/cnn_fashion.lua's CNN at
inference on a batch of 256 28x28 images, float32 against int8 (lm.quant.prepare + convert:
nn.quantized.Conv2d / Linear, per-channel int8 weights, uint8 activations calibrated on the batch,
the exact u8 x s8 int_mm), median of ROUNDS calls after a warm-up, and the MLP (784-256-10) the
same way. One JSON line per model.
    lumen bench/quant/cnn_int8.lua THREADS [ROUNDS]
]]
local threads, rounds = tonumber(arg[1] or '1'), tonumber(arg[2] or '15')
lm.set_num_threads(threads)
lm.manual_seed(5)
local quant = lm.quant

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

local function median_ms(fn)
  fn()
  local ts = {}
  for r = 1, rounds do
    local t0 = lm.sys.clock()
    fn()
    ts[r] = lm.sys.clock() - t0
  end
  table.sort(ts)
  return 1e3 * ts[(rounds + 1) // 2]
end

for _, spec in ipairs({ { 'cnn', CNN, { 256, 1, 28, 28 } },
  { 'mlp', function() return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)) end,
    { 256, 1, 28, 28 } } }) do
  local model = spec[2]():eval()
  local x = lm.rand(table.unpack(spec[3]))
  local tf = median_ms(function() lm.no_grad(function() return model(x) end) end)
  quant.prepare(model)
  lm.no_grad(function() model(x) end)
  quant.convert(model)
  local ti = median_ms(function() return model(x) end)
  print(string.format('{"impl": "Lumen", "model": "%s", "threads": %d, "batch": 256, "float32_ms": %.3f, "int8_ms": %.3f}',
    spec[1], threads, tf, ti))
end
