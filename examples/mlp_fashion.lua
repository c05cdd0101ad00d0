--[[
examples/mlp_fashion.lua — a multi-layer perceptron (784-256-10, ReLU) on Fashion-MNIST with SGD
(lr 0.1, batch 128), as the PyTorch tutorials train it.

  ./run.sh examples/mlp_fashion.lua             (or: lumen examples/mlp_fashion.lua)
  lumen examples/mlp_fashion.lua --epochs 5 --optim adam --log run.csv
  lumen -i examples/mlp_fashion.lua             (then, at the prompt: model, optimizer, history)

Needs Debian's dataset-fashion-mnist (./run.sh installs it). Ctrl-C stops between two steps; the
model stays usable. The loop is in examples/fashion_train.lua; options: --help.
]]
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local train = dofile(here .. 'fashion_train.lua')

train.run {
  name = 'mlp_fashion',
  args = arg,
  defaults = { epochs = 1, lr = 0.1, adam_lr = 1e-3, batch = 128, seed = 5 },
  make_model = function()
    return nn.Sequential(
      nn.Flatten(),          -- (N, 1, 28, 28) -> (N, 784)
      nn.Linear(784, 256),
      nn.ReLU(),
      nn.Linear(256, 10))    -- logits of the 10 classes
  end,
}
