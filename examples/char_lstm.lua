--[[
examples/char_lstm.lua — a character-level LSTM language model: an embedding, nn.LSTM (--layers 2 of
--width 256, batch_first; dropout between the layers with --dropout) and a Linear head to the
vocabulary; trained on the 300 Tang poems by default, then sampled. The same task, loop and options
as char_gpt.lua (without --heads): compare the two.

  ./run.sh examples/char_lstm.lua                    (or: lumen examples/char_lstm.lua)
  lumen examples/char_lstm.lua --corpus fortunes --iters 3000 --log lstm.csv --viz
  lumen -i examples/char_lstm.lua  (then: print(sample('《春', 200)), model, history)

Training runs on windows of --block characters from a zero state; sampling feeds the last --block
characters each step, as training saw them. The loop is in examples/text_train.lua; options: --help.
]]
local here = (arg and arg[0] or ''):match('^(.*/)') or 'examples/'
local train = dofile(here .. 'text_train.lua')

local CharLSTM = nn.Module:extend('CharLSTM')
function CharLSTM:__init(vocab, width, layers, dropout)
  self.embed = nn.Embedding(vocab, width)
  self.lstm = nn.LSTM(width, width, { num_layers = layers, batch_first = true, dropout = dropout })
  self.drop = nn.Dropout(dropout)
  self.head = nn.Linear(width, vocab)
end

function CharLSTM:forward(idx)
  local B, T = idx:size(1), idx:size(2)
  local out = self.lstm(self.embed(idx)) -- (B, T, width); the final states are not needed here
  local W = out:size(3)
  return self.head(self.drop(out):reshape(B * T, W)):view(B, T, self.head.out_features)
end

return train.run {
  name = 'char_lstm',
  args = arg,
  defaults = { corpus = 'tang', iters = 1500, batch = 12, block = 64, lr = 2e-3, min_lr = 1e-4, warmup = 100,
    dropout = 0, seed = 1, layers = 2, width = 256, eval_every = 250, eval_iters = 20, length = 300,
    temperature = 0.8, top_k = 0 },
  make_model = function(o, vocab)
    return CharLSTM(vocab, o.width, o.layers, o.dropout)
  end,
}
