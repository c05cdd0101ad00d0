--[[
lumen.nn.utils — nn.utils: what a training loop needs beside the model.

  clip_grad_norm_(params, max_norm [, norm_type = 2]) -> total norm (torch.nn.utils's), in C.
  count_correct(logits, labels) -> how many rows of logits (N, C) have their argmax at the label
      (labels (N) of an integer dtype, 1-based as argmax's; NaN counts as largest, ties go to the
      first):
      logits:argmax(2):eq(labels):sum():item() in one pass, in C, with no graph recorded.
  Progress{total=, title=}: a progress bar redrawn in place on a terminal (one line: title, batch,
      samples/s, running loss, ETA); plain periodic lines when the stream is not a terminal.
  MetricsLog(path): a CSV log with the header step,epoch,loss,accuracy,lr,seconds,split (split:
      'train' or 'test', what the row measured), flushed per line so a live reader (the
      visualizer's curves scene, `tail -f`) can follow it.
  catch_interrupt(): while the returned guard is open, Ctrl-C only sets guard:requested(), so the
      loop can stop between two steps; a second Ctrl-C interrupts as usual. Close it (or use
      `local guard <close> = ...`) when the loop ends.
Read next: examples/mlp_fashion.lua.
]]
local lm = require 'lumen'
local base = require 'lumen.nn.module'

local M = {}
local raise = base.raise

-- ---------------------------------------------------------------- accuracy

--- The number of rows of logits (N, C) whose argmax is the label (labels: N, integers, 1-based).
M.count_correct = lm._count_correct

-- ---------------------------------------------------------------- clipping

--- The parameters of a module, an array of tensors, or one tensor, as an array.
local function param_list(params, fname)
  if lm.is_tensor(params) then return { params } end
  if base.is_module(params) then return params:parameters() end
  if type(params) ~= 'table' then raise(fname .. ': expected parameters (a table of tensors or a module), got ' .. type(params)) end
  for i, p in ipairs(params) do
    if not lm.is_tensor(p) then raise(string.format('%s: parameter %d is a %s, not a tensor', fname, i, type(p))) end
  end
  return params
end
M.param_list = param_list

--- Scales the gradients of params in place so that their joint norm is at most max_norm;
--- returns the norm before clipping.
function M.clip_grad_norm_(params, max_norm, norm_type)
  local fname = 'clip_grad_norm_'
  local list = param_list(params, fname)
  if type(max_norm) ~= 'number' or not (max_norm >= 0) then
    raise(fname .. ': max_norm must be a number >= 0, got ' .. tostring(max_norm))
  end
  norm_type = norm_type or 2
  if norm_type == 'inf' then norm_type = math.huge end
  if type(norm_type) ~= 'number' or not (norm_type > 0) then
    raise(fname .. ': norm_type must be a number > 0 (or math.huge), got ' .. tostring(norm_type))
  end
  return lm._optim.clip_grad_norm(list, max_norm, norm_type)
end

-- ---------------------------------------------------------------- progress bar

local Progress = {}
Progress.__index = Progress

local function clock_str(s)
  if s ~= s or s == math.huge then return '?' end
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format('%d:%02d:%02d', s // 3600, s // 60 % 60, s % 60) end
  return string.format('%d:%02d', s // 60, s % 60)
end

--- Progress{total=, title='', stream=io.stdout, every=10 (seconds between lines off a terminal),
--- width=24, tty=, silent=false}: tty defaults to whether stream is a terminal; silent counts and
--- averages the loss without printing.
function M.Progress(opts)
  opts = opts or {}
  local stream = opts.stream or io.stdout
  local tty = opts.tty
  if tty == nil then tty = lm._data.isatty(stream) end
  return setmetatable({
    total = opts.total, title = opts.title or '', stream = stream, tty = tty, silent = opts.silent,
    every = opts.every or 10, width = opts.width or 24, start = lm.sys.clock(),
    last_line = -math.huge, last_draw = -math.huge, count = 0, samples = 0, loss_sum = 0, loss_n = 0,
  }, Progress)
end

--- Advances by one batch of n samples with this batch's loss (a number, may be nil).
function Progress:update(n, loss)
  self.count = self.count + 1
  self.samples = self.samples + (n or 0)
  if loss then self.loss_sum, self.loss_n = self.loss_sum + loss, self.loss_n + 1 end
  if self.silent then return end
  local now = lm.sys.clock()
  if self.tty then
    if now - self.last_draw >= 0.1 or self.count == self.total then
      self.last_draw = now
      self.stream:write('\r', self:line(now), '\27[K')
      self.stream:flush()
    end
  elseif now - self.last_line >= self.every or self.count == self.total then
    self.last_line = now
    self.stream:write(self:line(now), '\n')
    self.stream:flush()
  end
end

function Progress:line(now)
  local t = (now or lm.sys.clock()) - self.start
  local rate = t > 0 and self.samples / t or 0
  local parts = { self.title }
  if self.total then
    local frac = math.min(1, self.count / self.total)
    local fill = math.floor(frac * self.width + 0.5)
    if self.tty then
      parts[#parts + 1] = '[' .. string.rep('=', fill) .. string.rep(' ', self.width - fill) .. ']'
    end
    parts[#parts + 1] = string.format('%d/%d', self.count, self.total)
  else
    parts[#parts + 1] = tostring(self.count)
  end
  parts[#parts + 1] = string.format('%.0f samples/s', rate)
  if self.loss_n > 0 then parts[#parts + 1] = string.format('loss %.4f', self.loss_sum / self.loss_n) end
  if self.total and self.count < self.total and self.count > 0 then
    parts[#parts + 1] = 'ETA ' .. clock_str(t / self.count * (self.total - self.count))
  else
    parts[#parts + 1] = clock_str(t)
  end
  return table.concat(parts, '  ')
end

--- Ends the bar (a newline on a terminal); returns the running mean loss and the seconds taken.
function Progress:done()
  if self.tty and not self.silent then self.stream:write('\n'); self.stream:flush() end
  return self.loss_n > 0 and self.loss_sum / self.loss_n or nil, lm.sys.clock() - self.start
end

-- ---------------------------------------------------------------- metrics log

local MetricsLog = {}
MetricsLog.__index = MetricsLog
MetricsLog.columns = { 'step', 'epoch', 'loss', 'accuracy', 'lr', 'seconds', 'split' }

--- MetricsLog(path): a new CSV file with the header line; one row per :write{...}.
function M.MetricsLog(path)
  if type(path) ~= 'string' or path == '' then raise('MetricsLog: path must be a non-empty string, got ' .. tostring(path)) end
  local ok, why = lm.sys.check_write(path) -- a regular file only: not a device, FIFO or directory
  if not ok then raise('MetricsLog: ' .. why:gsub('^lm%.sys%.check_write: ', '')) end
  local f, err = io.open(path, 'w')
  if not f then raise('MetricsLog: cannot write ' .. err) end
  f:setvbuf('line')
  f:write(table.concat(MetricsLog.columns, ','), '\n')
  f:flush()
  return setmetatable({ file = f, path = path, start = lm.sys.clock() }, MetricsLog)
end

local function cell(v)
  if v == nil then return '' end
  if math.type(v) == 'integer' then return tostring(v) end
  if type(v) == 'number' then return string.format('%.6g', v) end
  return tostring(v)
end

--- Writes one row: {step=, epoch=, loss=, accuracy=, lr=, seconds=, split=} (seconds defaults to the time
--- since the log was opened; missing values are empty cells). Flushed at once.
function MetricsLog:write(row)
  if not self.file then raise('MetricsLog: the log ' .. self.path .. ' is closed') end
  local cells = {}
  for i, c in ipairs(MetricsLog.columns) do
    local v = row[c]
    if c == 'seconds' and v == nil then v = lm.sys.clock() - self.start end
    cells[i] = cell(v)
  end
  self.file:write(table.concat(cells, ','), '\n')
  self.file:flush()
end

function MetricsLog:close()
  if self.file then self.file:close() end
  self.file = nil
end
MetricsLog.__close = MetricsLog.close

-- ---------------------------------------------------------------- deferred Ctrl-C

local Guard = {}
Guard.__index = Guard

--- While the guard is open, Ctrl-C sets guard:requested() instead of interrupting the code.
function M.catch_interrupt()
  lm._data.catch_interrupt(true)
  return setmetatable({ open = true }, Guard)
end

function Guard:requested() return self.open and lm._data.interrupt_requested() end

function Guard:close()
  if self.open then lm._data.catch_interrupt(false) end
  self.open = false
end
Guard.__close = Guard.close
Guard.__gc = Guard.close

return M
