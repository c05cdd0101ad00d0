--[[
lumen.nn — `require 'nn'` (the global nn): modules, losses and initialisers in PyTorch's names.

The table is lm.nn itself, so nn.functional is F. Parts: lumen/nn/module.lua (nn.Module and the
containers), layers.lua, rnn.lua (RNN, LSTM, GRU and their cells), attention.lua
(F.scaled_dot_product_attention, MultiheadAttention, the Transformer layers), resize.lua
(F.adaptive_avg_pool2d, F.interpolate, nn.AdaptiveAvgPool2d, nn.Upsample), norm.lua (F.group_norm,
nn.GroupNorm), loss.lua,
initializers.lua (nn.init), utils.lua (nn.utils: gradient clipping, the progress bar, the
metrics log, deferred Ctrl-C for training loops).
See docs/nn.md. Read next: lumen/nn/module.lua.
]]
local lm = require 'lumen'
local nn = lm.nn

local base = require 'lumen.nn.module'
local layers = require 'lumen.nn.layers'
local loss = require 'lumen.nn.loss'
local rnn = require 'lumen.nn.rnn'
local attention = require 'lumen.nn.attention'
local resize = require 'lumen.nn.resize'
local norm = require 'lumen.nn.norm'

nn.Module = base.Module
for _, part in ipairs({ base, layers, rnn, attention, resize, norm, loss }) do
  for k, v in pairs(part) do
    if type(v) == 'table' and rawget(v, '_is_module_class') then nn[k] = v end
  end
end
nn.init = require 'lumen.nn.initializers'
nn.utils = require 'lumen.nn.utils'
--- nn.quantized.Linear, nn.quantized.Conv2d: the int8 layers (lumen/quant.lua), loaded on first use.
nn.quantized = setmetatable({}, { __index = function(_, k) return require('lumen.quant').nn[k] end })

--- nn.DistributedDataParallel (lumen/dist.lua), loaded on first use.
nn.DistributedDataParallel = setmetatable({}, {
  __call = function(_, ...) return require('lumen.dist').DistributedDataParallel(...) end,
  __index = function(_, k) return require('lumen.dist').DistributedDataParallel[k] end,
})

--- Whether v is a module (an instance of nn.Module or of a subclass).
nn.is_module = base.is_module

return nn
