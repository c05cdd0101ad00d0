--[[
lumen.nn.rnn — the recurrent layers of torch.nn: RNN (tanh or relu), LSTM and GRU over whole
sequences, and their one-step cells RNNCell, LSTMCell and GRUCell.

Parameter names, shapes, gate order and initialisation are PyTorch's: weight_ih (G*H, I),
weight_hh (G*H, H), bias_ih and bias_hh (G*H) with G = 1 (RNN), 4 (LSTM: i, f, g, o) or 3 (GRU:
r, z, n), all drawn from U(-1/sqrt(H), 1/sqrt(H)); the layers name them weight_ih_l0, ...,
bias_hh_l1_reverse. The equations are PyTorch's, GRU's n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
included. Everything is composed from tensor ops, so autograd gives the gradients (backpropagation
through time). The time loop computes the input projection x W_ih^T + b for all time steps of a
layer and direction at once (one matmul), then per step one matmul h W_hh^T and the gates on the
(batch, G*H) block with a few ops (narrow, sigmoid, tanh).

Shapes (as PyTorch): input (seq, batch, I), or (batch, seq, I) with batch_first, or unbatched
(seq, I); h0 (num_layers * D, batch, H) (D = 2 when bidirectional), (num_layers * D, H)
unbatched, even with batch_first. forward returns output (seq, batch, D * H) and h_n; the LSTM takes
and returns its states as a table {h, c}. A cell's forward(x [, h]) returns h' (LSTMCell:
forward(x [, {h, c}]) returns h', c').
Read next: lumen/nn/loss.lua.
]]
local lm = require 'lumen'
local F = lm.nn.functional
local base = require 'lumen.nn.module'
local check = require 'lumen.nn.check'
local layers = require 'lumen.nn.layers'
local init = require 'lumen.nn.initializers'

local M = {}
local builtin, raise, shape_str, describe = base.builtin, base.raise, base.shape_str, check.describe
local U = layers._util

local GATES = { RNN_TANH = 1, RNN_RELU = 1, LSTM = 4, GRU = 3 }

local function nonlinearity_opt(v, fname)
  if v == nil then return 'tanh' end
  if v ~= 'tanh' and v ~= 'relu' then
    raise(string.format("%s: option nonlinearity must be 'tanh' or 'relu', got %s", fname, describe(v)))
  end
  return v
end

-- A parameter of shape `shape` drawn from U(-bound, bound) (PyTorch's reset_parameters).
local function uniform_param(fname, shape, dt, bound)
  return U.param(fname, shape, dt, function(t) init.uniform_(t, -bound, bound) end)
end

local function check_input(self, x, what)
  if not lm.is_tensor(x) then
    raise(string.format('%s: %s must be a tensor, got %s', self:_label(), what, describe(x)))
  end
end

-- The input's dtype must be the parameters' (PyTorch refuses to mix them too).
local function check_dtype(self, x, what)
  local dt = self.weight_ih and self.weight_ih:dtype() or self.weight_ih_l0:dtype()
  if x:dtype() ~= dt then
    raise(string.format("%s: %s is %s but the parameters are %s (convert one: x:to('%s') or m:to('%s'))",
      self:_label(), what, x:dtype(), dt, dt, x:dtype()))
  end
end

-- ---------------------------------------------------------------- the steps

-- One step of each mode. xg: the input's part of the gates (batch, G*H), with b_ih and (RNN,
-- LSTM) b_hh already added; h (batch, H); whh_t: W_hh^T (H, G*H); bhh: b_hh (GRU only, may be nil).

local function step_rnn_tanh(xg, h, whh_t) return (xg + h:mm(whh_t)):tanh() end
local function step_rnn_relu(xg, h, whh_t) return (xg + h:mm(whh_t)):relu() end

-- the gates' nonlinearities and the new state in one fused op (F.lstm_cell: one loop forward,
-- one backward) instead of eight elementwise ones
local function step_lstm(xg, h, whh_t, _, c, H)
  local hc = F.lstm_cell(xg + h:mm(whh_t), c)
  return hc:narrow(2, 1, H), hc:narrow(2, H + 1, H)
end

-- the gates in one fused op (F.gru_cell: one loop forward, one backward)
local function step_gru(xg, h, whh_t, bhh)
  local hg = h:mm(whh_t)
  if bhh then hg = hg + bhh end
  return F.gru_cell(xg, hg, h)
end

local STEP = { RNN_TANH = step_rnn_tanh, RNN_RELU = step_rnn_relu, LSTM = step_lstm, GRU = step_gru }

-- The input's part of the gates for x (..., I): x W_ih^T + b_ih (+ b_hh, except for the GRU whose
-- b_hn sits inside r * (...)).
local function input_gates(mode, x, wih, bih, bhh)
  local xg = F.linear(x, wih, bih)
  if bhh and mode ~= 'GRU' then xg = xg + bhh end
  return xg
end

-- ---------------------------------------------------------------- cells

local function cell_class(name, mode)
  local C = builtin(name)
  local fname = 'nn.' .. name

  --- nn.RNNCell(input_size, hidden_size [, {bias=true, nonlinearity='tanh'|'relu', dtype=}]),
  --- nn.LSTMCell / nn.GRUCell(input_size, hidden_size [, {bias=true, dtype=}])
  C.__init = function(self, isz, hsz, opts)
    self.input_size = U.posint(isz, 'input_size', fname)
    self.hidden_size = U.posint(hsz, 'hidden_size', fname)
    local allowed = { bias = true, dtype = true }
    if mode == 'RNN' then allowed.nonlinearity = true end
    opts = layers.options(opts, allowed, fname)
    self.mode = mode
    if mode == 'RNN' then
      self.nonlinearity = nonlinearity_opt(opts.nonlinearity, fname)
      self.mode = self.nonlinearity == 'tanh' and 'RNN_TANH' or 'RNN_RELU'
    end
    local bias = U.bool_opt(opts.bias, true, 'bias', fname)
    local dt = U.dtype_opt(opts.dtype, fname)
    local G, H, I = GATES[self.mode], self.hidden_size, self.input_size
    local bound = 1 / math.sqrt(H)
    self.weight_ih = uniform_param(fname, { G * H, I }, dt, bound)
    self.weight_hh = uniform_param(fname, { G * H, H }, dt, bound)
    if bias then
      self.bias_ih = uniform_param(fname, { G * H }, dt, bound)
      self.bias_hh = uniform_param(fname, { G * H }, dt, bound)
    else
      self:register_parameter('bias_ih', nil)
      self:register_parameter('bias_hh', nil)
    end
    self.bias = bias
  end

  C.forward = function(self, x, hx)
    local I, H = self.input_size, self.hidden_size
    check_input(self, x, 'input')
    if (x:dim() ~= 1 and x:dim() ~= 2) or x:size(-1) ~= I then
      raise(string.format('%s: input of shape %s does not fit input_size=%d (expected [batch, %d] or [%d])',
        self:_label(), shape_str(x), I, I, I))
    end
    check_dtype(self, x, 'the input')
    local unbatched = x:dim() == 1
    if unbatched then x = x:unsqueeze(1) end
    local B = x:size(1)
    local want = unbatched and string.format('[%d]', H) or string.format('[%d, %d]', B, H)
    local function state(t, what)
      if t == nil then return lm.zeros(B, H, { dtype = x:dtype() }) end
      check_input(self, t, what)
      if shape_str(t) ~= want then
        raise(string.format('%s: %s of shape %s does not fit the input of shape %s (expected %s)',
          self:_label(), what, shape_str(t), shape_str(unbatched and x[1] or x), want))
      end
      check_dtype(self, t, what)
      return unbatched and t:unsqueeze(1) or t
    end
    local h, c
    if self.mode == 'LSTM' then
      if hx ~= nil and (type(hx) ~= 'table' or lm.is_tensor(hx)) then
        raise(string.format('%s: the state must be a table {h, c} of tensors, got %s', self:_label(), describe(hx)))
      end
      h, c = state(hx and hx[1], 'h'), state(hx and hx[2], 'c')
    else
      h = state(hx, 'h')
    end
    local xg = input_gates(self.mode, x, self.weight_ih, self.bias_ih, self.bias_hh)
    local h2, c2 = STEP[self.mode](xg, h, self.weight_hh:t(), self.bias_hh, c, H)
    if unbatched then
      h2 = h2:squeeze(1)
      if c2 then c2 = c2:squeeze(1) end
    end
    if self.mode == 'LSTM' then return h2, c2 end
    return h2
  end

  C.extra_repr = function(self)
    local s = string.format('%d, %d', self.input_size, self.hidden_size)
    if not self.bias then s = s .. ', bias=false' end
    if self.nonlinearity and self.nonlinearity ~= 'tanh' then s = s .. ", nonlinearity='" .. self.nonlinearity .. "'" end
    return s
  end
  return C
end

M.RNNCell = cell_class('RNNCell', 'RNN')
M.LSTMCell = cell_class('LSTMCell', 'LSTM')
M.GRUCell = cell_class('GRUCell', 'GRU')

-- ---------------------------------------------------------------- RNN, LSTM, GRU

local function layer_class(name, mode)
  local C = builtin(name)
  local fname = 'nn.' .. name

  --- nn.RNN / nn.LSTM / nn.GRU(input_size, hidden_size [, {num_layers=1, bias=true,
  --- batch_first=false, dropout=0, bidirectional=false, dtype=}]) (nn.RNN also nonlinearity=)
  C.__init = function(self, isz, hsz, opts)
    self.input_size = U.posint(isz, 'input_size', fname)
    self.hidden_size = U.posint(hsz, 'hidden_size', fname)
    local allowed = { num_layers = true, bias = true, batch_first = true, dropout = true, bidirectional = true,
      dtype = true }
    if mode == 'RNN' then allowed.nonlinearity = true end
    opts = layers.options(opts, allowed, fname)
    self.num_layers = U.posint(opts.num_layers or 1, 'option num_layers', fname)
    self.bias = U.bool_opt(opts.bias, true, 'bias', fname)
    self.batch_first = U.bool_opt(opts.batch_first, false, 'batch_first', fname)
    self.dropout = U.number_opt(opts.dropout, 0, 'dropout', fname, 0, 1)
    self.bidirectional = U.bool_opt(opts.bidirectional, false, 'bidirectional', fname)
    self.mode = mode
    if mode == 'RNN' then
      self.nonlinearity = nonlinearity_opt(opts.nonlinearity, fname)
      self.mode = self.nonlinearity == 'tanh' and 'RNN_TANH' or 'RNN_RELU'
    end
    local dt = U.dtype_opt(opts.dtype, fname)
    local G, H = GATES[self.mode], self.hidden_size
    local D = self.bidirectional and 2 or 1
    local bound = 1 / math.sqrt(H)
    local names = {}
    for l = 0, self.num_layers - 1 do
      local I = l == 0 and self.input_size or D * H
      for d = 1, D do
        local sfx = l .. (d == 2 and '_reverse' or '')
        local n = { 'weight_ih_l' .. sfx, 'weight_hh_l' .. sfx, 'bias_ih_l' .. sfx, 'bias_hh_l' .. sfx }
        self[n[1]] = uniform_param(fname, { G * H, I }, dt, bound)
        self[n[2]] = uniform_param(fname, { G * H, H }, dt, bound)
        if self.bias then
          self[n[3]] = uniform_param(fname, { G * H }, dt, bound)
          self[n[4]] = uniform_param(fname, { G * H }, dt, bound)
        end
        names[#names + 1] = n
      end
    end
    self._names = names
  end

  -- The expected shape of h0 / c0 for a batch of B (nil: unbatched).
  local function state_shape(self, B)
    local LD = self.num_layers * (self.bidirectional and 2 or 1)
    return B and { LD, B, self.hidden_size } or { LD, self.hidden_size }
  end

  C.forward = function(self, input, hx)
    local I, H, L = self.input_size, self.hidden_size, self.num_layers
    local D = self.bidirectional and 2 or 1
    check_input(self, input, 'input')
    if (input:dim() ~= 2 and input:dim() ~= 3) or input:size(-1) ~= I then
      raise(string.format('%s: input of shape %s does not fit input_size=%d (expected %s or [seq, %d])',
        self:_label(), shape_str(input), I, self.batch_first and string.format('[batch, seq, %d]', I)
        or string.format('[seq, batch, %d]', I), I))
    end
    check_dtype(self, input, 'the input')
    local unbatched = input:dim() == 2
    local x = input
    if unbatched then x = x:unsqueeze(2)
    elseif self.batch_first then x = x:transpose(1, 2) end
    local T, B = x:size(1), x:size(2)
    if T == 0 then
      raise(string.format('%s: input of shape %s has an empty sequence', self:_label(), shape_str(input)))
    end
    local want = state_shape(self, not unbatched and B or nil)
    local want_s = '[' .. table.concat(want, ', ') .. ']'
    local lstm = self.mode == 'LSTM'
    local function state(t, what)
      if t == nil then return nil end
      check_input(self, t, what)
      if shape_str(t) ~= want_s then
        raise(string.format('%s: %s of shape %s does not fit the input of shape %s '
          .. '(expected %s: num_layers%s, %shidden_size)', self:_label(), what, shape_str(t), shape_str(input), want_s, D == 2 and ' * 2' or '',
          unbatched and '' or 'batch, '))
      end
      check_dtype(self, t, what)
      return unbatched and t:unsqueeze(2) or t
    end
    local h0, c0
    if lstm then
      if hx ~= nil and (type(hx) ~= 'table' or lm.is_tensor(hx)) then
        raise(string.format('%s: the initial state must be a table {h0, c0} of tensors, got %s', self:_label(),
          describe(hx)))
      end
      if hx ~= nil then
        h0, c0 = state(hx[1], 'h0'), state(hx[2], 'c0')
        if h0 == nil or c0 == nil then raise(self:_label() .. ': the initial state {h0, c0} needs both tensors') end
      end
    else
      h0 = state(hx, 'h0')
    end
    local zeros
    if h0 == nil or (lstm and c0 == nil) then zeros = lm.zeros(B, H, { dtype = x:dtype() }) end
    local step = STEP[self.mode]
    local hn, cn = {}, {}
    local layer_in = x
    for l = 1, L do
      if l > 1 and self.dropout > 0 and self.training then layer_in = F.dropout(layer_in, self.dropout, true) end
      local outs = {}
      for d = 1, D do
        local k = (l - 1) * D + d
        local n = self._names[k]
        local wih, whh, bih, bhh = self[n[1]], self[n[2]], self[n[3]], self[n[4]]
        local xg = input_gates(self.mode, layer_in, wih, bih, bhh) -- (T, B, G*H): one matmul
        local whh_t = whh:t()
        local h = h0 and h0[k] or zeros
        local c = lstm and (c0 and c0[k] or zeros) or nil
        local hs = {}
        local t0, t1, dt = 1, T, 1
        if d == 2 then t0, t1, dt = T, 1, -1 end
        for t = t0, t1, dt do
          h, c = step(xg[t], h, whh_t, bhh, c, H)
          hs[t] = h
        end
        outs[d] = lm.stack(hs, 1)
        hn[k], cn[k] = h, c
      end
      layer_in = D == 2 and lm.cat(outs, 3) or outs[1]
    end
    local out, h_n = layer_in, lm.stack(hn, 1)
    local c_n = lstm and lm.stack(cn, 1) or nil
    if unbatched then
      out, h_n = out:squeeze(2), h_n:squeeze(2)
      if c_n then c_n = c_n:squeeze(2) end
    elseif self.batch_first then
      out = out:transpose(1, 2)
    end
    if lstm then return out, { h_n, c_n } end
    return out, h_n
  end

  --- PyTorch's cuDNN weight packing; nothing to do here.
  C.flatten_parameters = function() end

  C.extra_repr = function(self)
    local s = string.format('%d, %d', self.input_size, self.hidden_size)
    if self.num_layers ~= 1 then s = s .. ', num_layers=' .. self.num_layers end
    if self.nonlinearity and self.nonlinearity ~= 'tanh' then s = s .. ", nonlinearity='" .. self.nonlinearity .. "'" end
    if not self.bias then s = s .. ', bias=false' end
    if self.batch_first then s = s .. ', batch_first=true' end
    if self.dropout ~= 0 then s = s .. ', dropout=' .. self.dropout end
    if self.bidirectional then s = s .. ', bidirectional=true' end
    return s
  end
  return C
end

M.RNN = layer_class('RNN', 'RNN')
M.LSTM = layer_class('LSTM', 'LSTM')
M.GRU = layer_class('GRU', 'GRU')

return M
