--[[
examples/cnn_fashion.lua — a small convolutional network on Fashion-MNIST: conv 3x3 (16) - ReLU -
max-pool 2, conv 3x3 (32) - ReLU - max-pool 2, a linear head; SGD lr 0.1, batch 128.

  ./run.sh examples/cnn_fashion.lua --epochs 3    (or: lumen examples/cnn_fashion.lua ...)
  lumen -i examples/cnn_fashion.lua                (then: model, optimizer, history at the prompt)

The model is written as a new module, the plain Lua idiom for one (docs/nn.md):
  local Net = nn.Module:extend('Net'); function Net:__init() ... end; function Net:forward(x) ... end
The loop is in examples/fashion_train.lua; options: --help.
]]
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local train = dofile(here .. 'fashion_train.lua')

local FashionCNN = nn.Module:extend('FashionCNN')

function FashionCNN:__init()
  self.conv1 = nn.Conv2d(1, 16, 3, { padding = 1 })   -- (N, 1, 28, 28) -> (N, 16, 28, 28)
  self.conv2 = nn.Conv2d(16, 32, 3, { padding = 1 })  -- (N, 16, 14, 14) -> (N, 32, 14, 14)
  self.pool = nn.MaxPool2d(2)                         -- halves H and W
  self.fc = nn.Linear(32 * 7 * 7, 10)
end

function FashionCNN:forward(x)
  x = self.pool(F.relu(self.conv1(x)))
  x = self.pool(F.relu(self.conv2(x)))
  return self.fc(x:flatten(2))                        -- (N, 32, 7, 7) -> (N, 1568) -> (N, 10)
end

train.run {
  name = 'cnn_fashion',
  args = arg,
  defaults = { epochs = 1, lr = 0.1, adam_lr = 1e-3, batch = 128, seed = 5 },
  make_model = function() return FashionCNN() end,
}
