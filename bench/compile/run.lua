-- bench/compile/run.lua — what lm.compile buys (issue 31, Measure), in one run:
--  1. a 4-op elementwise chain, ((x * 2 + 1):relu() * 3), on 2^24 float32: eager (4 kernels, each
--     a pass over memory) against compiled (fused: one pass) against a copy of the same bytes
--     (x:clone(): reads and writes 64 MiB, what any one-pass kernel must at least move);
--  2. a training step (zero_grad, forward, cross-entropy, backward, SGD lr 0.1) of the examples'
--     MLP (784-256-10) and CNN (examples/cnn_fashion.lua's), batch 128, eager against compiled;
--  3. capture and optimization time of the CNN step's graph (the capture also runs the step once
--     eagerly: shown separately);
--  4. the layout pass: an eval CNN (conv 5x5 16->32 + BN + ReLU, conv 5x5 32->32 + BN + ReLU, conv
--     3x3 stride 2 + ReLU) on a batch of 64 images of 14x14, compiled with its im2col convolutions in
--     NCHW (layout off) against NHWC (the default), and eager; kernels, bytes, transposes.
-- Times: wall clock of the Lua call, median of --repeats calls after --warmup calls; inputs
-- random (the speed does not depend on the values). PyTorch's eager steps: bench/compile/run.sh.
-- Usage: lumen bench/compile/run.lua [--repeats 20] [--warmup 3] [--quick] [--json]
local nn, optim = require 'lumen.nn', require 'lumen.optim'
local F = lm.nn.functional

local repeats, warmup, quick, json = 20, 3, false, false
local i = 1
while arg[i] do
  local a = arg[i]
  if a == '--repeats' then repeats = math.tointeger(tonumber(arg[i + 1])); i = i + 2
  elseif a == '--warmup' then warmup = math.tointeger(tonumber(arg[i + 1])); i = i + 2
  elseif a == '--quick' then quick = true; i = i + 1
  elseif a == '--json' then json = true; i = i + 1
  else error('bench/compile/run.lua: unknown argument ' .. a .. ' (--repeats N, --warmup N, --quick, --json)') end
end
if quick then repeats, warmup = 3, 1 end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local function ms(fn)
  for _ = 1, warmup do fn() end
  local t = {}
  for r = 1, repeats do
    local t0 = lm.sys.clock()
    fn()
    t[r] = (lm.sys.clock() - t0) * 1e3
  end
  return median(t)
end

local out = { threads = lm.get_num_threads and lm.get_num_threads() or nil }

-- ---------------------------------------------------------------- 1. the chain
local n = quick and (1 << 20) or (1 << 24)
local x = lm.randn(n)
local chain = function(x) return ((x * 2 + 1):relu() * 3) end
local cchain = lm.compile(chain)
cchain(x)
local r = cchain(x)
assert(cchain.info.compiled and cchain.info.kernels == 1, 'the chain compiles to one kernel')
assert(lm.equal(r, chain(x)), 'the compiled chain equals eager')
local bytes = cchain.info.bytes_read + cchain.info.bytes_written
-- the fused kernel interpreted (a fresh compile: the program keeps the choice it made)
lm._graph.codegen({ enabled = false })
local ichain = lm.compile(chain)
ichain(x)
local interp_ms = ms(function() return ichain(x) end)
lm._graph.codegen({ enabled = true })
local cg = lm._graph.codegen()
out.chain = {
  n = n,
  eager_ms = ms(function() return chain(x) end),
  compiled_ms = ms(function() return cchain(x) end),
  interpreted_ms = interp_ms,
  copy_ms = ms(function() return x:clone() end),
  kernels_eager = #cchain.graph.nodes, kernels_compiled = cchain.info.kernels, bytes_compiled = bytes,
  codegen = cg.loaded > 0 and cg.status or ('none: ' .. cg.status),
}

-- ---------------------------------------------------------------- 2. training steps
local function mlp() return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)) end
local CNN = nn.Module:extend('BenchCNN')
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

local function step_of(model)
  local opt = optim.SGD(model:parameters(), { lr = 0.1 })
  return function(x, y)
    opt:zero_grad()
    local loss = F.cross_entropy(model(x), y)
    loss:backward()
    opt:step()
    return loss:detach()
  end
end

local B = 128
local xb, yb = lm.randn(B, 1, 28, 28), lm.randint(1, 11, { B })
for _, m in ipairs({ { 'mlp', mlp }, { 'cnn', function() return CNN() end } }) do
  lm.manual_seed(1)
  local eager = step_of(m[2]())
  lm.manual_seed(1)
  local cstep = lm.compile(step_of(m[2]()))
  cstep(xb, yb)
  cstep(xb, yb)
  assert(cstep.info.compiled, m[1] .. ': the step compiles')
  local t_e = ms(function() return eager(xb, yb) end)
  local t_c = ms(function() return cstep(xb, yb) end)
  out[m[1]] = { eager_ms = t_e, compiled_ms = t_c, kernels_captured = #cstep.graph.nodes,
    kernels_compiled = cstep.info.kernels }
  if m[1] == 'cnn' then
    lm.manual_seed(1)
    local s = step_of(m[2]())
    s(xb, yb)
    local t_step = ms(function() return s(xb, yb) end)
    local caps, opts = {}, {}
    for k = 1, math.max(3, repeats // 4) do
      local t0 = lm.sys.clock()
      local g = lm.graph.capture(s, xb, yb)
      local t1 = lm.sys.clock()
      g:optimize()
      g:program()
      local t2 = lm.sys.clock()
      caps[k], opts[k] = (t1 - t0) * 1e3, (t2 - t1) * 1e3
    end
    out.cnn.capture_ms, out.cnn.optimize_ms, out.cnn.step_ms = median(caps), median(opts), t_step
  end
end

-- ---------------------------------------------------------------- 4. layout
do
  lm.manual_seed(1)
  local m = nn.Sequential(nn.Conv2d(16, 32, 5, { padding = 2 }), nn.BatchNorm2d(32), nn.ReLU(),
    nn.Conv2d(32, 32, 5, { padding = 2 }), nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 32, 3, { stride = 2 }), nn.ReLU())
  m:eval()
  local xi = lm.randn(quick and 8 or 64, 16, 14, 14)
  lm.no_grad(function()
    local fn = function(x) return m(x) end
    local nchw = lm.compile(fn, nil, { disable = { layout = true } })
    local nhwc = lm.compile(fn)
    nchw(xi); nhwc(xi)
    local a, b, e = nchw(xi), nhwc(xi), fn(xi)
    local d = (b - e):abs():max():item()
    assert(d <= 1e-4 * (e:abs():max():item() + 1), 'layout: NHWC as eager (' .. d .. ')')
    assert((a - e):abs():max():item() <= 1e-4 * (e:abs():max():item() + 1), 'layout off: as eager')
    out.layout = { batch = xi:size(1), eager_ms = ms(function() return fn(xi) end),
      nchw_ms = ms(function() return nchw(xi) end), nhwc_ms = ms(function() return nhwc(xi) end),
      nchw_kernels = nchw.info.kernels, nhwc_kernels = nhwc.info.kernels,
      nchw_bytes = nchw.info.bytes_read + nchw.info.bytes_written, nhwc_bytes = nhwc.info.bytes_read + nhwc.info.bytes_written,
      transposes = nhwc.graph.layout and nhwc.graph.layout.transposes or 0,
      convs = nhwc.graph.layout and nhwc.graph.layout.convs or 0, maxdiff = d }
  end)
end

if json then
  local parts = {}
  for k, v in pairs(out) do
    if type(v) == 'table' then
      local f = {}
      for a, b in pairs(v) do f[#f + 1] = string.format('"%s": %s', a, tostring(b)) end
      parts[#parts + 1] = string.format('"%s": {%s}', k, table.concat(f, ', '))
    end
  end
  print('{' .. table.concat(parts, ', ') .. '}')
  return
end
local c = out.chain
print(string.format('lm.compile on the cpu, %s threads; wall clock, median of %d calls after %d warm-up calls',
  tostring(out.threads or '?'), repeats, warmup))
print(string.format('\n1. ((x * 2 + 1):relu() * 3) on %d float32 (%d MiB):', c.n, c.n * 4 >> 20))
print(string.format('   eager (%d kernels)          %8.2f ms', c.kernels_eager, c.eager_ms))
print(string.format('   compiled (%d kernel)         %8.2f ms   %.2fx eager   [generated C: %s]', c.kernels_compiled,
  c.compiled_ms, c.eager_ms / c.compiled_ms, c.codegen))
print(string.format('   compiled, interpreted       %8.2f ms   %.2fx eager   [fused.c, LUMEN_JIT=0]', c.interpreted_ms,
  c.eager_ms / c.interpreted_ms))
print(string.format('   copy of the same bytes      %8.2f ms   compiled at %.0f%% of its speed (interpreted: %.0f%%)',
  c.copy_ms, 100 * c.copy_ms / c.compiled_ms, 100 * c.copy_ms / c.interpreted_ms))
print('\n2. a training step, batch 128 (SGD):')
for _, k in ipairs({ 'mlp', 'cnn' }) do
  local s = out[k]
  print(string.format('   %s: eager %7.2f ms (%d kernels), compiled %7.2f ms (%d kernels): %.2fx', k, s.eager_ms,
    s.kernels_captured, s.compiled_ms, s.kernels_compiled, s.eager_ms / s.compiled_ms))
end
print(string.format('\n3. the CNN step: capture %.2f ms (of which the eager step %.2f ms: %.2f ms of recording), '
  .. 'passes + program %.2f ms', out.cnn.capture_ms, out.cnn.step_ms, out.cnn.capture_ms - out.cnn.step_ms,
  out.cnn.optimize_ms))
local L = out.layout
print(string.format('\n4. layout: an eval CNN (3 im2col convolutions) on %d images of 16x14x14:', L.batch))
print(string.format('   eager                       %8.2f ms', L.eager_ms))
print(string.format('   compiled, NCHW (layout off) %8.2f ms   %.2fx eager   %d kernels, %.1f MB moved', L.nchw_ms,
  L.eager_ms / L.nchw_ms, L.nchw_kernels, L.nchw_bytes / 1e6))
print(string.format('   compiled, NHWC              %8.2f ms   %.2fx eager   %d kernels, %.1f MB moved; %d convolutions '
  .. 'converted, %d transpose%s inserted; %.2fx NCHW; max |diff| from eager %.2g', L.nhwc_ms, L.eager_ms / L.nhwc_ms,
  L.nhwc_kernels, L.nhwc_bytes / 1e6, L.convs, L.transposes, L.transposes == 1 and '' or 's', L.nchw_ms / L.nhwc_ms,
  L.maxdiff))
