--[[
dlp — a deep-learning processor a student can step through (AICS chapters 6–7).

  local dlp = require 'lumen.dlp'
  local a = dlp.array{rows = 32, cols = 32, dataflow = 'ws',          -- os | ws | is
                      ifmap_sram_kb = 64, filter_sram_kb = 64, ofmap_sram_kb = 64,
                      bandwidth = 10, mode = 'user'}                  -- user: stalls; calc: estimate
  local r = a:run(dlp.conv{h = 224, w = 224, fh = 11, fw = 11, c = 3, k = 96, stride = 4})
  print(r.total_cycles, r.stall_cycles, r.compute_util, r.ifmap_dram_reads)
  print(r:energy().total_pj)                -- where the picojoules go, per level
  a:run(dlp.gemm{m = 256, n = 128, k = 256}, {events = 4096}).events   -- DMA / stall timeline

The simulator is C (src/dlp/dlp.c) and counts as SCALE-Sim does (v2's model in the scalesim 3.0.0
release): a report's cycles, stalls, utilizations, SRAM and DRAM accesses with their first and
last cycles and average bandwidths equal SCALE-Sim's for the same configuration and layer
(tests/lua/test_dlp.lua, fixture tests/data/dlp_scalesim.csv). Beside the array: banked SRAM
(banks, ports: conflicts counted apart), an energy table per access level, a DianNao NFU
(dlp.nfu) and a matrix-vector unit (dlp.mvu) for the notes' comparison of matrix units, and a
loop-nest mapping a student writes (dlp.mapping, a:evaluate, a:search) — Timeloop's idea in Lua.
Read next: docs/dlp.md.
]]
local dlp = {}

local C = require('lumen')._dlp

local function fail(fn, fmt, ...) error('dlp.' .. fn .. ': ' .. string.format(fmt, ...), 3) end

local function int_field(fn, t, k, lo, hi, def)
  local v = t[k]
  if v == nil then v = def end
  if v == nil then fail(fn, "'%s' is missing", k) end
  if math.type(v) ~= 'integer' then
    if type(v) == 'number' and v == math.floor(v) and v == v then v = math.tointeger(v)
    else fail(fn, "'%s' must be an integer, got %s", k, tostring(v)) end
  end
  if v < lo or (hi and v > hi) then
    if hi then fail(fn, "'%s' = %d: must be between %d and %d", k, v, lo, hi) end
    fail(fn, "'%s' = %d: must be at least %d", k, v, lo)
  end
  return v
end

local function check_keys(fn, t, allowed)
  if type(t) ~= 'table' then fail(fn, 'expects a table, got %s', type(t)) end
  for k in pairs(t) do
    if not allowed[k] then
      local names = {}
      for n in pairs(allowed) do names[#names + 1] = n end
      table.sort(names)
      fail(fn, "unknown field '%s' (it takes %s)", tostring(k), table.concat(names, ', '))
    end
  end
end

local function set(list) local s = {} for _, k in ipairs(list) do s[k] = true end return s end

-- ---------------------------------------------------------------- layers

local Layer = {}
Layer.__index = Layer

--- dlp.conv{h=, w=, fh=, fw=, c=, k=, stride=1, name=}: a convolution layer as SCALE-Sim's
--- topology files describe one (input h x w x c, k filters of fh x fw, one stride; no padding).
function dlp.conv(t)
  check_keys('conv', t, set{'h', 'w', 'fh', 'fw', 'c', 'k', 'stride', 'name'})
  local l = setmetatable({kind = 'conv', name = t.name or 'conv'}, Layer)
  l.ifmap_h = int_field('conv', t, 'h', 1, 1 << 24)
  l.ifmap_w = int_field('conv', t, 'w', 1, 1 << 24)
  l.filter_h = int_field('conv', t, 'fh', 1, 1 << 24)
  l.filter_w = int_field('conv', t, 'fw', 1, 1 << 24)
  l.channels = int_field('conv', t, 'c', 1, 1 << 24)
  l.filters = int_field('conv', t, 'k', 1, 1 << 24)
  l.stride = int_field('conv', t, 'stride', 1, 1024, 1)
  if l.filter_h > l.ifmap_h or l.filter_w > l.ifmap_w then
    fail('conv', 'the filter (%dx%d) is larger than its input (%dx%d)', l.filter_h, l.filter_w, l.ifmap_h, l.ifmap_w)
  end
  return l
end

--- dlp.gemm{m=, n=, k=, name=}: an M x K by K x N product, as SCALE-Sim maps one (a 1 x K filter
--- sliding over an M x K input: M output pixels, N filters, a window of K).
function dlp.gemm(t)
  check_keys('gemm', t, set{'m', 'n', 'k', 'name'})
  local m, n, k = int_field('gemm', t, 'm', 1, 1 << 24), int_field('gemm', t, 'n', 1, 1 << 24), int_field('gemm', t, 'k', 1, 1 << 24)
  return setmetatable({kind = 'gemm', name = t.name or 'gemm', ifmap_h = m, ifmap_w = k, filter_h = 1, filter_w = k,
                       channels = 1, filters = n, stride = 1}, Layer)
end

--- The GEMM view: M output pixels, N filters, K = window; SCALE-Sim rounds the output size up.
function Layer:dims()
  local oh = (self.ifmap_h - self.filter_h + self.stride + self.stride - 1) // self.stride
  local ow = (self.ifmap_w - self.filter_w + self.stride + self.stride - 1) // self.stride
  return {M = oh * ow, N = self.filters, K = self.filter_h * self.filter_w * self.channels, ofmap_h = oh, ofmap_w = ow}
end

function Layer:macs() local d = self:dims() return d.M * d.N * d.K end

function Layer:__tostring()
  if self.kind == 'gemm' then
    return string.format('%s: GEMM %d x %d x %d', self.name, self.ifmap_h, self.filters, self.ifmap_w)
  end
  return string.format('%s: conv %dx%dx%d, %d filters %dx%d, stride %d', self.name, self.ifmap_h, self.ifmap_w,
    self.channels, self.filters, self.filter_h, self.filter_w, self.stride)
end

local function c_layer(l)
  return {ifmap_h = l.ifmap_h, ifmap_w = l.ifmap_w, filter_h = l.filter_h, filter_w = l.filter_w,
          channels = l.channels, filters = l.filters, stride = l.stride}
end

--- dlp.topology(path [, {gemm = true}]): the layers of a SCALE-Sim topology CSV (conv columns:
--- name, ifmap h, w, filter h, w, channels, filters, stride; gemm: name, M, N, K).
function dlp.topology(path, opts)
  local f, err = io.open(path, 'r')
  if not f then fail('topology', 'cannot open %s: %s', tostring(path), tostring(err)) end
  local layers, first, line_no = {}, true, 0
  for line in f:lines() do
    line_no = line_no + 1
    if not first and line:match('%S') then
      local cols = {}
      for x in (line .. ','):gmatch('([^,]*),') do cols[#cols + 1] = x:match('^%s*(.-)%s*$') end
      local function num(i, what)
        local v = math.tointeger(tonumber(cols[i]))
        if not v then f:close() fail('topology', '%s line %d: %s is %q, not an integer', path, line_no, what, tostring(cols[i])) end
        return v
      end
      if opts and opts.gemm then
        layers[#layers + 1] = dlp.gemm{name = cols[1], m = num(2, 'M'), n = num(3, 'N'), k = num(4, 'K')}
      else
        layers[#layers + 1] = dlp.conv{name = cols[1], h = num(2, 'IFMAP Height'), w = num(3, 'IFMAP Width'),
          fh = num(4, 'Filter Height'), fw = num(5, 'Filter Width'), c = num(6, 'Channels'), k = num(7, 'Num Filter'),
          stride = num(8, 'Strides')}
      end
    end
    first = false
  end
  f:close()
  return layers
end

--- dlp.alexnet(): AlexNet's five convolutions (SCALE-Sim's topologies/conv_nets/alexnet.csv).
function dlp.alexnet()
  return {
    dlp.conv{name = 'Conv1', h = 224, w = 224, fh = 11, fw = 11, c = 3, k = 96, stride = 4},
    dlp.conv{name = 'Conv2', h = 27, w = 27, fh = 5, fw = 5, c = 96, k = 256},
    dlp.conv{name = 'Conv3', h = 13, w = 13, fh = 3, fw = 3, c = 256, k = 384},
    dlp.conv{name = 'Conv4', h = 13, w = 13, fh = 3, fw = 3, c = 384, k = 384},
    dlp.conv{name = 'Conv5', h = 13, w = 13, fh = 3, fw = 3, c = 384, k = 256},
  }
end

-- ---------------------------------------------------------------- energy

--- The energy of one access per level, picojoules for an 8-bit word at 45 nm (the C table,
--- include/lumen/dlp.h: Eyeriss's normalized costs — Chen, Emer, Sze, ISCA 2016: a MAC 1x, a
--- register-file access 1x, a hop between PEs 2x, the global buffer 6x, DRAM 200x — scaled by
--- Horowitz's 8-bit multiply (0.2 pJ) plus add (0.03 pJ) at 45 nm, ISSCC 2014). Accelergy's
--- style: action counts x energy per action.
dlp.energy_table = C.energy_table()

local Report = {}
Report.__index = Report

--- r:energy([table]): picojoules per level: {mac=, register=, pe_hop=, sram=, dram=, total_pj=,
--- counts = {...}} — counts: MACs; 3 register accesses per MAC (two operands, the accumulator);
--- 2 PE-to-PE hops per MAC (each MAC gets one operand, and passes one on, from a neighbour);
--- SRAM: the array's reads and writes plus the DMA's fills and drains; DRAM: the DMA's words.
function Report:energy(tbl)
  tbl = tbl or dlp.energy_table
  if type(tbl) ~= 'table' then fail('energy', 'the table must be a table of pJ per access, got %s', type(tbl)) end
  local ok, e = pcall(C.energy, self, tbl)
  if not ok then fail('energy', '%s', (tostring(e):gsub('^[^:]*: ', ''))) end
  return e
end

function Report:__tostring()
  return string.format('%s on %dx%d %s (%s): %d cycles (%d stalled), compute util %.2f%%, DRAM %d/%d/%d words',
    self.layer_name, self.rows, self.cols, self.dataflow, self.mode, self.total_cycles, self.stall_cycles,
    self.compute_util, self.ifmap_dram_reads, self.filter_dram_reads, self.ofmap_dram_writes)
end

-- ---------------------------------------------------------------- the array

local Array = {}
Array.__index = Array

local array_keys = set{'rows', 'cols', 'dataflow', 'ifmap_sram_kb', 'filter_sram_kb', 'ofmap_sram_kb', 'bandwidth',
                       'mode', 'banks', 'ports', 'ifmap_offset', 'filter_offset', 'ofmap_offset'}

--- dlp.array{...}: an R x C systolic array with three double-buffered scratchpads. Defaults are
--- SCALE-Sim's example (32 x 32, 64 KiB each, bandwidth 10 words per cycle), mode 'user'.
function dlp.array(t)
  t = t or {}
  check_keys('array', t, array_keys)
  local a = setmetatable({}, Array)
  a.rows = int_field('array', t, 'rows', 1, 4096, 32)
  a.cols = int_field('array', t, 'cols', 1, 4096, 32)
  a.dataflow = t.dataflow or 'os'
  if a.dataflow ~= 'os' and a.dataflow ~= 'ws' and a.dataflow ~= 'is' then
    fail('array', "dataflow must be 'os', 'ws' or 'is', got %s", tostring(t.dataflow))
  end
  a.mode = t.mode or 'user'
  if a.mode ~= 'user' and a.mode ~= 'calc' then fail('array', "mode must be 'user' or 'calc', got %s", tostring(t.mode)) end
  a.ifmap_sram_kb = int_field('array', t, 'ifmap_sram_kb', 1, 1 << 30, 64)
  a.filter_sram_kb = int_field('array', t, 'filter_sram_kb', 1, 1 << 30, 64)
  a.ofmap_sram_kb = int_field('array', t, 'ofmap_sram_kb', 1, 1 << 30, 64)
  a.bandwidth = int_field('array', t, 'bandwidth', 1, 1 << 20, 10)
  a.banks = int_field('array', t, 'banks', 0, 4096, 0)
  a.ports = int_field('array', t, 'ports', 1, 64, 1)
  a.ifmap_offset = int_field('array', t, 'ifmap_offset', 0, 1 << 40, 0)
  a.filter_offset = int_field('array', t, 'filter_offset', 0, 1 << 40, 10000000)
  a.ofmap_offset = int_field('array', t, 'ofmap_offset', 0, 1 << 40, 20000000)
  return a
end

function Array:config()
  return {rows = self.rows, cols = self.cols, dataflow = self.dataflow, mode = self.mode, ifmap_kb = self.ifmap_sram_kb,
          filter_kb = self.filter_sram_kb, ofmap_kb = self.ofmap_sram_kb, bandwidth = self.bandwidth,
          ifmap_offset = self.ifmap_offset, filter_offset = self.filter_offset, ofmap_offset = self.ofmap_offset,
          banks = self.banks, ports = self.ports}
end

--- a:with{field = value, ...}: a copy with some fields changed.
function Array:with(t)
  local c = {}
  for k in pairs(array_keys) do c[k] = self[k] end
  for k, v in pairs(t) do c[k] = v end
  return dlp.array(c)
end

local function check_layer(fn, l)
  if getmetatable(l) ~= Layer then fail(fn, 'expects a layer (dlp.conv{...} or dlp.gemm{...}), got %s', type(l)) end
end

--- a:run(layer [, {events = N}]): the report (fields in docs/dlp.md); events = N keeps the first
--- N DMA transfers, stalls and fold starts as r.events ({kind=, start=, stop= | cycles=, words=}).
function Array:run(layer, opts)
  check_layer('run', layer)
  local ev = opts and opts.events
  if ev == true then ev = 65536 end
  local r = C.run(self:config(), c_layer(layer), ev or 0)
  r.rows, r.cols, r.dataflow, r.mode, r.layer_name = self.rows, self.cols, self.dataflow, self.mode, layer.name
  r.bandwidth = self.bandwidth
  r.source = 'emulated: lumen.dlp (SCALE-Sim v2 counting, scalesim 3.0.0)'
  return setmetatable(r, Report)
end

--- a:fold_cycles(layer): the cycles one fold takes without stalls — OS: T + R + C - 2, WS and IS:
--- 2R + C + T - 2 (SCALE-Sim's demand rows per fold; T the streamed dimension).
function Array:fold_cycles(layer)
  check_layer('fold_cycles', layer)
  local d = layer:dims()
  local T = self.dataflow == 'os' and d.K or self.dataflow == 'ws' and d.M or d.N
  if self.dataflow == 'os' then return T + self.rows + self.cols - 2 end
  return 2 * self.rows + self.cols + T - 2
end

--- a:pe_state(layer, fold_row, fold_col, cycle): what each PE does at that cycle of that fold
--- (1-based fold and PE indices, cycle from 0): list of rows, each a list of {mac=, p=, k=, n=}
--- (GEMM indices from 1, nil where unused).
function Array:pe_state(layer, fr, fc, t)
  check_layer('pe_state', layer)
  local flat = C.pe_state(self:config(), c_layer(layer), fr - 1, fc - 1, t)
  local out = {}
  for r = 1, self.rows do
    local row = {}
    for c = 1, self.cols do
      local e = flat[(r - 1) * self.cols + c]
      row[c] = {mac = e.mac, p = e.p >= 0 and e.p + 1 or nil, k = e.k >= 0 and e.k + 1 or nil, n = e.n >= 0 and e.n + 1 or nil}
    end
    out[r] = row
  end
  return out
end

function Array:__tostring()
  return string.format('dlp.array %dx%d %s, SRAM %d/%d/%d KiB, %d words/cycle (%s)%s', self.rows, self.cols,
    self.dataflow, self.ifmap_sram_kb, self.filter_sram_kb, self.ofmap_sram_kb, self.bandwidth, self.mode,
    self.banks > 0 and string.format(', %d banks x %d ports', self.banks, self.ports) or '')
end

dlp.Array, dlp.Layer, dlp.Report = Array, Layer, Report
require('lumen.dlp_design')(dlp) -- mappings, the NFU and the matrix-vector unit, the general core

return dlp
