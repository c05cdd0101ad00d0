--[[
viz — the visualizer (docs/API.md "viz", docs/viz.md): a window (offscreen without a display)
showing the course's pictures drawn from the kernels that really ran, with every number labelled by
where it came from.

  out, info = kernels.scan(lm.arange(1, 17):float(), {backend='emu'})
  viz.show(info)             -- Kogge-Stone and Brent-Kung side by side on that input
  viz.step(); viz.play()     -- or space, arrows, Tab in the window; ? lists the keys
  viz.snapshot('scan.png')
  viz.show(y)                -- y with a grad_fn: its autograd graph, stepped backward node by node
  viz.show(x:t())            -- a tensor without one: its storage, shape, strides and offset
  viz.show(model)            -- an nn module: its layers; viz.watch(model) adds live histograms
  viz.plot('train/loss', step, loss)  or  viz.follow('run.csv')   -- live curves
  viz.show('queues', q:sync())  -- kernels.bang: the timeline ('mlu': the device; 'pingpong': {single =, double =})
  viz.show('systolic', a, layer) -- lumen.dlp: the array cycle by cycle ('dma': a report's DMA and stalls; 'energy': pJ per level)
  viz.show(g)                -- an lm.graph Graph after g:optimize(): the graph before and after each rewrite

The calls are C bindings (src/lua/viz.c, viz_data.c over src/viz/viz.h); this file adds what needs
the nn modules: viz.show of a module and viz.watch. Without SDL2 at build time every call but
viz.is_open says that this build has no window (viz.built is false).
Read next: docs/viz.md.
]]
local lm = require 'lumen'

local viz = lm._viz
local show = viz.show

-- The nn module system, when it is loaded (viz does not load it itself).
local function nn_module(x)
  local ok, nn = pcall(require, 'lumen.nn.module')
  return ok and nn.is_module(x) and nn or nil
end

local function numel_sum(params)
  local n = 0
  for _, p in ipairs(params) do n = n + p:numel() end
  return n
end

-- The leaf modules of m in forward order, with their paths ("1", "features.3").
local function leaves(m)
  local out = {}
  for name, sub in pairs(m:named_modules()) do
    if #sub:children() == 0 and name ~= '' then out[#out + 1] = { name = name, module = sub } end
  end
  if #out == 0 then out[1] = { name = getmetatable(m).__name or 'model', module = m } end
  return out
end

--- The description the model scene draws: layers, their parameters, Conv2d filters.
local function describe(m)
  local layers = {}
  for i, l in ipairs(leaves(m)) do
    local cls = getmetatable(l.module)
    local w = rawget(l.module, '_parameters') and l.module._parameters.weight
    layers[i] = { name = l.name, kind = rawget(cls, '__name') or '?', desc = l.module:extra_repr(),
      params = numel_sum(l.module:parameters()),
      weight = (rawget(cls, '__name') == 'Conv2d' and w) and lm.no_grad(function() return w:detach():float() end) or nil,
      module = l.module }
  end
  -- id: this module (not another of the same layers): shown again, it keeps its live histograms
  return { name = rawget(getmetatable(m), '__name') or 'model', params = numel_sum(m:parameters()), layers = layers,
    id = string.format('%p', m) }
end

--- viz.show(x [, opts]): a kernel result, a trace, a tensor, or an nn module; viz.show(scene, x [, opts])
--- names the scene drawing the tensor x ('quant': a weight matrix); viz.show('attention', {weights =,
--- tokens =}), viz.show('rnn', {rnn =, lstm =}) and viz.show('detection', {images =, truth =, pred =})
--- draw what Lua computed.
function viz.show(x, ...)
  if type(x) == 'table' and nn_module(x) then
    local opts = ...
    if type(opts) == 'table' and opts.input ~= nil then return viz._features(x, opts) end
    return viz._show_model(describe(x), ...)
  end
  -- lm.graph: a captured, optimized Graph stepped through its rewrites (the graph scene's compiled view)
  if (x == 'graph' and type((...)) == 'table' and not lm.is_tensor((...))) or viz._is_graph(x) then
    if x == 'graph' then return viz._passes(...) end
    return viz._passes(x, ...)
  end
  if x == 'attention' then return viz._attention(...) end
  if x == 'rnn' then return viz._rnn(...) end
  if x == 'detection' then return viz._detection(...) end
  if x == 'ddp' then return viz._ddp(...) end
  if x == 'pipeline' and type((...)) == 'table' and rawget((...), 'timeline') then return viz._pipeline(...) end
  -- the generative scenes: their data, or without it (nil) the demonstration
  if x == 'gan2d' then return viz._gan2d(...) end
  if x == 'diffusion' then return viz._diffusion(...) end
  if x == 'samples' then return viz._samples(...) end
  -- BANG on a simulated MLU: a kernels.bang info (its queues, or opts.scene), or without one the demonstration
  if x == 'queues' or x == 'mlu' or x == 'pingpong' then return viz._bang(x, ...) end
  -- lumen.dlp: an array and a layer, reports; without them the demonstration
  if x == 'systolic' or x == 'dma' or x == 'energy' then return viz._dlp(x, ...) end
  local dlp = type(x) == 'table' and package.loaded['lumen.dlp']
  if dlp and getmetatable(x) == dlp.Array then return viz._dlp('systolic', x, ...) end
  if dlp and getmetatable(x) == dlp.Report then return viz._dlp(rawget(x, 'events') and 'dma' or 'energy', x, ...) end
  if type(x) == 'table' and rawget(x, 'source') == 'bang-emu' then
    local opts, o = ..., nil
    if type(opts) == 'table' then
      o = {}
      for k, v in pairs(opts) do if k ~= 'scene' then o[k] = v end end
    end
    return viz._bang(type(opts) == 'table' and opts.scene or 'queues', x, o)
  end
  return show(x, ...)
end

-- ---------------------------------------------------------------- lm.graph's passes

--[[
viz.show(g [, opts]) or viz.show('graph', g [, opts]), g an lm.graph Graph after g:optimize(): the
graph scene's compiled view, step 0 the graph as captured and step k g:snapshot(k), the rewrite
g.log[k] marked (lua/lumen/viz_passes.lua describes the steps; src/viz/scenes/graph_passes.c draws).
viz.scene('graph', {expr = 'compiled'}): the same for a demonstration (a perceptron's forward).
]]
function viz._is_graph(x)
  return type(x) == 'table' and package.loaded['lumen.graph'] ~= nil and require('lumen.viz_passes').is_graph(x)
end

function viz._passes(g, opts, name)
  local P = require 'lumen.viz_passes'
  if opts ~= nil and type(opts) ~= 'table' then error('viz.show: options must be a table, got ' .. type(opts), 3) end
  return viz._show_passes(P.describe(g, name), opts)
end

local scene = viz.scene
--- viz.scene(name [, opts]); the graph scene's compiled demonstration is built here, in Lua.
function viz.scene(name, opts)
  if name == 'graph' and type(opts) == 'table' and opts.expr == 'compiled' then
    local g, what = require('lumen.viz_passes').demo()
    return viz._passes(g, opts, what)
  end
  return scene(name, opts)
end

--- For `lumen --snapshot SCENE OUT.png [--step N] [--opts k=v,...]` of a scene whose demonstration
--- is built in Lua (src/app/app_viz.c): the options as text, the step as text or nil.
function viz._snapshot(name, out, step, opts)
  local o = {}
  for kv in (opts or ''):gmatch('[^,]+') do
    local k, v = kv:match('^%s*([%w_]+)%s*=%s*(.-)%s*$')
    if not k then error('--snapshot: --opts takes k=v,..., not ' .. kv, 0) end
    o[k] = tonumber(v) or (v == 'true' and true) or (v == 'false' and false) or v
  end
  viz.scene(name, o)
  if step then
    local n = math.tointeger(tonumber(step))
    local steps = viz.state().steps
    if not n or n < 0 then error(string.format("--snapshot: --step needs a step number (0 or more), got '%s'", step), 0) end
    if n >= steps then
      error(string.format("--snapshot: --step %s is past the end: scene '%s' has steps 0..%d", step, name, steps - 1), 0)
    end
    viz.seek(n)
  end
  viz.snapshot(out)
end

-- ---------------------------------------------------------------- attention and rnn

local function fail(fmt, ...) error('viz.show: ' .. string.format(fmt, ...), 3) end

local function shape_of(t) return '[' .. table.concat(t:shape(), ', ') .. ']' end

-- The first NaN, Inf or negative element of t (flat, 1-based), or nil.
local function first_bad(t, negative_ok)
  local flat = t:reshape(-1)
  local bad = flat:ne(flat):double() + flat:abs():eq(math.huge):double() -- NaN, Inf
  if not negative_ok then bad = bad + flat:lt(0):double() end
  if bad:max():item() > 0 then return bad:argmax():item(), flat end
end

-- Options the scene reads, without the data's own keys.
local function rest(opts, skip)
  if opts == nil then return nil end
  local o = {}
  for k, v in pairs(opts) do if not skip[k] then o[k] = v end end
  return o
end

-- ---------------------------------------------------------------- DDP timeline

--[[
viz.show('ddp', ddp [, opts]): the last backward of an nn.DistributedDataParallel (its timeline:
each bucket's all-reduce launch and end, the end of backward's own work, seconds from the forward,
measured on this rank), or a table {launch = {...}, done = {...}, backward_end = s}.
]]
function viz._ddp(d, opts)
  local tl = type(d) == 'table' and (rawget(d, 'timeline') or d) or nil
  if type(tl) ~= 'table' or lm.is_tensor(tl) then
    error('viz.show: the ddp scene takes a DistributedDataParallel or {launch =, done =, backward_end =}, got ' .. type(d), 2)
  end
  local launch, done = tl.launch, tl.done
  if launch == nil then
    launch, done = {}, {}
    for i, b in ipairs(tl) do launch[i], done[i] = b.launch, b.done end
  end
  if type(launch) ~= 'table' or #launch == 0 or #launch ~= #(done or {}) then
    error('viz.show: the ddp scene has no timeline yet (run a forward and backward through the DDP first)', 2)
  end
  for i = 1, #launch do
    if type(launch[i]) ~= 'number' or type(done[i]) ~= 'number' or done[i] < launch[i] then
      error(string.format('viz.show: the ddp scene: bucket %d runs from %s to %s', i, tostring(launch[i]), tostring(done[i])), 2)
    end
  end
  local be = tl.backward_end
  if type(be) ~= 'number' then error('viz.show: the ddp scene needs backward_end (seconds)', 2) end
  local src = (type(d) == 'table' and d.source) or 'measured on this rank (dist.wtime): the last backward of the DDP'
  return viz._show_ddp(lm.tensor(launch, { dtype = 'float64' }), lm.tensor(done, { dtype = 'float64' }), be, src, opts)
end

-- ---------------------------------------------------------------- a pipeline step as it ran

--[[
viz.show('pipeline', pipe [, opts]): the last train_step of a dist.Pipeline (pipe.timeline: every
stage's ops in the order it ran them, with their start and end from dist.wtime), drawn at their
measured times and, Tab, in slots. viz.show('pipeline', {stages = K, micro = M}) (no run) draws the
computed schedule.
]]
function viz._pipeline(pipe, opts)
  local tl = rawget(pipe, 'timeline')
  local K = #tl
  if K == 0 then error('viz.show: the pipeline has no timeline yet (run pipe:train_step first)', 2) end
  local M = #tl[1] // 2
  local ops = lm.zeros(K * 2 * M, 4, { dtype = 'float64' })
  for k = 1, K do
    if #tl[k] ~= 2 * M then
      error(string.format('viz.show: the pipeline timeline: stage %d ran %d ops, stage 1 %d', k, #tl[k], 2 * M), 2)
    end
    for i, e in ipairs(tl[k]) do
      local row = ops[(k - 1) * 2 * M + i]
      row[1], row[2], row[3], row[4] = e.op == 'F' and 1 or 2, e.micro, e.t0, e.t1
    end
  end
  local stats = rawget(pipe, 'stats') or {}
  local src = string.format('CPU measured (dist.wtime) on %d MPI ranks: dist.Pipeline, %s', K, stats.schedule or '?')
  return viz._show_pipeline(K, M, ops, stats.schedule or 'gpipe', src, opts)
end

-- ---------------------------------------------------------------- a GAN on 2-D points

--[[
viz.show('gan2d', gan [, opts]): a gen.GAN2D (lumen/generative.lua) as it is now: n = 500 real and
generated points, D's surface on 32 x 32 bins and G's 15 x 15 grid over the box [lo, hi]^2 (opts.range,
default the real points' box widened 20%; the grid: z over [-2.5, 2.5]^2), the losses so far and the
JS divergence of 2,000 points.
Call it again as training goes (examples/gan_2d.lua --viz) and the picture follows.
]]
function viz._gan2d(gan, opts)
  if gan == nil then return viz.scene('gan2d', opts) end
  if type(gan) ~= 'table' or type(gan.surface) ~= 'function' or type(gan.sample) ~= 'function' then
    error('viz.show: the gan2d scene takes a gen.GAN2D (lumen/generative.lua), got ' .. type(gan), 2)
  end
  opts = opts or {}
  local real = gan:real(500):double()
  local lo, hi
  if opts.range then lo, hi = opts.range[1], opts.range[2]
  else
    lo, hi = real:min():item(), real:max():item()
    local pad = (hi - lo) * 0.2
    lo, hi = lo - pad, hi + pad
  end
  local gen = require 'lumen.generative'
  local js = gen.js_divergence(gan:real(2000):double(), gan:sample(2000):double())
  local h = gan.history
  local n = #h.d
  local dl = n > 0 and lm.tensor(h.d, { dtype = 'float64' }) or lm.zeros(0, { dtype = 'float64' })
  local gl = n > 0 and lm.tensor(h.g, { dtype = 'float64' }) or lm.zeros(0, { dtype = 'float64' })
  if n > 4096 then
    dl, gl = dl:narrow(1, n - 4095, 4096):contiguous(), gl:narrow(1, n - 4095, 4096):contiguous()
  end
  local src = string.format('computed in this process: gen.GAN2D on %s, step %d (JS: gen.js_divergence of 2,000 points each, 40 bins, log2)',
    gan.data, gan.steps)
  local rest = {}
  for k, v in pairs(opts) do if k ~= 'range' then rest[k] = v end end
  viz._show_gan2d(real, gan:sample(500):double(), gan:surface(32, lo, hi):double():contiguous(),
    gan:warp(15, -2.5, 2.5):double():contiguous(), dl, gl,
    { js = js, lo = lo, hi = hi, steps = gan.steps, loss = gan.loss }, src, rest)
  viz.seek(viz.state().steps - 1) -- every layer at once: the steps build the picture up
end

-- ---------------------------------------------------------------- a diffusion model's chains

--[[
viz.show('diffusion', model [, {points = 400, snapshots = 11, seed = 1}]): a gen.DDPM2D's forward
chain (its data noised in closed form with one noise per point, at evenly spaced steps) and its
reverse chain (gen.ddpm_sample from N(0, I), the same steps backwards), with the schedule.
]]
function viz._diffusion(model, opts)
  if model == nil then return viz.scene('diffusion', opts) end
  if type(model) ~= 'table' or type(model.sched) ~= 'table' or type(model.eps) ~= 'function' then
    error('viz.show: the diffusion scene takes a gen.DDPM2D (lumen/generative.lua), got ' .. type(model), 2)
  end
  opts = opts or {}
  local gen = require 'lumen.generative'
  local n, S = opts.points or 400, opts.snapshots or 11
  if math.type(n) ~= 'integer' or n < 1 or n > 2048 then error('viz.show: the diffusion scene draws 1..2048 points', 2) end
  if math.type(S) ~= 'integer' or S < 2 or S > 32 then error('viz.show: the diffusion scene draws 2..32 snapshots', 2) end
  local T = model.T
  if opts.seed then lm.manual_seed(opts.seed) end
  local x0 = gen.toy2d(model.data, n):float()
  local eps = lm.randn(n, 2)
  local steps, fwd = {}, {}
  for k = 1, S do
    local t = math.floor((k - 1) * T / (S - 1) + 0.5)
    steps[k] = t
    fwd[k] = t == 0 and x0 or gen.q_sample(x0, t, eps, model.sched)
  end
  local trace = {}
  model:sample(n, { trace = trace }) -- trace[1] = x_T, ..., trace[T + 1] = x_0
  local rev, rsteps = {}, {}
  for k = 1, S do
    local t = steps[S + 1 - k]
    rsteps[k] = t
    rev[k] = trace[T - t + 1]
  end
  local rest = {}
  for k, v in pairs(opts) do if k ~= 'points' and k ~= 'snapshots' and k ~= 'seed' then rest[k] = v end end
  local src = string.format('computed in this process: gen.DDPM2D on %s after %d training steps; forward by q_sample, reverse by ddpm_sample',
    model.data, model.steps)
  return viz._show_diffusion(lm.stack(fwd, 1):double():contiguous(), lm.stack(rev, 1):double():contiguous(), steps, rsteps,
    model.sched.alpha_bars:contiguous(), model.sched.kind, src, rest)
end

-- ---------------------------------------------------------------- generated samples

--[[
viz.show('samples', {images = (N, C, H, W) or (N, H, W) in [0, 1], labels = int tensor or list
(1-based, the class each was asked for), predicted = (the class a classifier read), classes = {names},
step = the training step, source = 'what made them'} [, opts]): the grid scene, a row per class.
]]
function viz._samples(t, opts)
  if t == nil then return viz.scene('samples', opts) end
  if type(t) ~= 'table' then error('viz.show: the samples scene takes {images = (N, C, H, W) tensor, ...}, got ' .. type(t), 2) end
  local im = t.images
  if not lm.is_tensor(im) or (im:dim() ~= 4 and im:dim() ~= 3) then
    error('viz.show: the samples scene takes {images = (N, C, H, W) tensor, ...}', 2)
  end
  if im:dim() == 3 then im = im:unsqueeze(2) end
  local function list(v)
    if v == nil then return nil end
    if lm.is_tensor(v) then return v:long():view(-1):tolist() end
    return v
  end
  return viz._show_samples(im:double():contiguous(), list(t.labels), list(t.predicted), t.classes, t.step or 0,
    t.source or 'given by the caller', opts)
end

-- ---------------------------------------------------------------- BANG on a simulated MLU

--[[
viz.show('queues' | 'mlu', info [, opts]) and viz.show('pingpong', {single = info1, double = info2}
[, {core = 0}]): an info of kernels.bang (lua/lumen/bang.lua: q:sync() or dev:info()) as the tables
viz._show_bang takes (lm_viz_bang, src/viz/viz.h): its kernels that ran, its timeline's units with
their cores (taskId, peak NRAM and WRAM bytes) and clusters (peak SRAM bytes), and the DMA and
compute spans dev:record(true) kept (for pingpong; the others do not draw them). A timeline entry names its kernel and queue; a unit numbered 0
starts the next launch of that name in that queue (a queue places a kernel's units before the next
kernel's). Without data: the scene's demonstration (viz.scene).
]]
local BANG_TYPES = { BLOCK = 0, UNION1 = 1, UNION2 = 2, UNION4 = 4, UNION8 = 8 }

local function bang_run(info, scene, what)
  local function bad(fmt, ...) error(string.format('viz.show: the %s scene: %s', scene, string.format(fmt, ...)), 4) end
  if type(info) ~= 'table' or lm.is_tensor(info) or rawget(info, 'source') ~= 'bang-emu' or type(info.timeline) ~= 'table'
      or type(info.kernels) ~= 'table' then
    bad('%s must be a kernels.bang info (q:sync() or dev:info()), got %s', what,
      lm.is_tensor(info) and 'a tensor' or type(info) == 'table' and 'a table without its fields' or type(info))
  end
  if #info.timeline == 0 then bad('%s has an empty timeline: nothing ran yet (launch a kernel and sync its queue)', what) end
  local function num(v, field, i)
    if type(v) ~= 'number' then bad('%s: timeline entry %d has %s = %s, not a number', what, i, field, tostring(v)) end
    return v
  end
  local names, krows, by = {}, {}, {}
  for _, k in ipairs(info.kernels) do
    if k.start ~= nil then -- launched and run
      local t = BANG_TYPES[k.type]
      if not t then bad('%s: kernel %s has type %s', what, tostring(k.name), tostring(k.type)) end
      names[#names + 1] = tostring(k.name)
      krows[#krows + 1] = { t, k.queue, k.issued, k.start, k.stop }
      local key = tostring(k.name) .. '\0' .. tostring(k.queue)
      by[key] = by[key] or {}
      table.insert(by[key], #names - 1)
    end
  end
  -- info.timeline is the device's own list: an info taken before later launches sees their units too (skipped:
  -- their kernels are not in its info.kernels)
  local seen, units, cores, clusters, spans, whats, wi = {}, {}, {}, {}, {}, {}, {}
  for i, e in ipairs(info.timeline) do
    local key = tostring(e.kernel) .. '\0' .. tostring(e.queue)
    if by[key] and (e.unit == 0 or not seen[key]) then seen[key] = (seen[key] or 0) + 1 end
    local k = by[key] and by[key][seen[key]]
    if k then
      if type(e.cores) ~= 'table' or type(e.clusters) ~= 'table' then bad('%s: timeline entry %d has no cores or clusters', what, i) end
      units[#units + 1] = { k, num(e.unit, 'unit', i), num(e.start, 'start', i), num(e.stop, 'stop', i), #e.cores, #e.clusters }
      for _, c in ipairs(e.cores) do
        local u = type(e.usage) == 'table' and e.usage[c] or {}
        cores[#cores + 1] = { num(c, 'a core', i), type(e.tasks) == 'table' and e.tasks[c] or 0, u.NRAM or 0, u.WRAM or 0 }
      end
      for _, c in ipairs(e.clusters) do
        clusters[#clusters + 1] = { num(c, 'a cluster', i), type(e.sram) == 'table' and e.sram[c] or 0 }
      end
      for _, sp in ipairs(scene == 'pingpong' and type(e.spans) == 'table' and e.spans or {}) do
        if sp.kind ~= 'dma' and sp.kind ~= 'compute' then
          bad("%s: a span of timeline entry %d has kind %s, not 'dma' or 'compute'", what, i, tostring(sp.kind))
        end
        local w = tostring(sp.what)
        if not wi[w] then whats[#whats + 1], wi[w] = w, #whats end
        spans[#spans + 1] = { #units - 1, sp.kind == 'compute' and 1 or 0, num(sp.core, 'a span core', i),
          num(sp.task, 'a span task', i), num(sp.t0, 'a span t0', i), num(sp.t1, 'a span t1', i), wi[w] }
      end
    end
  end
  if #units == 0 then bad('%s: no unit of its timeline belongs to a kernel of info.kernels', what) end
  local function f64(rows, cols)
    if #rows == 0 then return lm.zeros(0, cols, { dtype = 'float64' }) end
    return lm.tensor(rows, { dtype = 'float64' })
  end
  local cap = type(info.capacity) == 'table' and info.capacity or {}
  if type(cap.NRAM) ~= 'number' or type(cap.WRAM) ~= 'number' or type(cap.SRAM) ~= 'number' or math.type(info.cards) ~= 'integer'
      or math.type(info.chips) ~= 'integer' or math.type(info.clusters_per_chip) ~= 'integer' then
    bad('%s lacks the device (cards, chips, clusters_per_chip, capacity = {NRAM=, WRAM=, SRAM=})', what)
  end
  return { cards = info.cards, chips = info.chips, clusters_per_chip = info.clusters_per_chip, nram = cap.NRAM, wram = cap.WRAM,
    sram = cap.SRAM, names = names, kernels = f64(krows, 5), units = f64(units, 6),
    cores = f64(cores, 4), clusters = f64(clusters, 2), spans = f64(spans, 7), whats = whats }
end

function viz._bang(scene, data, opts)
  if data == nil then return viz.scene(scene, opts) end
  if scene == 'pingpong' then
    if type(data) ~= 'table' or lm.is_tensor(data) or data.single == nil or data.double == nil then
      error('viz.show: the pingpong scene takes {single = info, double = info}, each the info of a kernels.bang run with '
        .. 'dev:record(true) before its launch', 3)
    end
    return viz._show_bang(scene, bang_run(data.single, scene, 'single'), bang_run(data.double, scene, 'double'), opts)
  end
  return viz._show_bang(scene, bang_run(data, scene, 'the info'), nil, opts)
end

-- ---------------------------------------------------------------- lumen.dlp's array and reports

--[[
viz.show('systolic', a, layer [, opts]): the array a (dlp.array{...}, at most 32 x 32 PEs) on the layer
(dlp.conv or dlp.gemm), run by the scene itself (the same C as a:run, a:pe_state). viz.show('dma',
r | {a = r1, b = r2} | {r1, r2, r3} [, opts]): reports of a:run(layer, {events = N}), their events
in lm_dlp_event's encoding (src/viz/viz.h). viz.show('energy', r | {r1, r2, ...} [, {table = t}]): each
report's r:energy(t) by level. The keys of {a = r1, b = r2} name the runs; without them a run is
named by what differs between the runs (bandwidth, dataflow, array, layer; src/viz/scenes/systolic.c,
vz_dlp_label). Without data: the scene's demonstration (viz.scene).
]]
local DLP_KINDS = { ifmap = 0, filter = 1, drain = 2, stall = 3, fold = 4 }
local DLP_OPERANDS = { ifmap = 0, filter = 1, ofmap = 2 }
local DLP_LEVELS = { 'mac', 'register', 'pe_hop', 'sram', 'dram' }

local function dlp_fail(scene, fmt, ...) error(string.format('viz.show: the %s scene: %s', scene, string.format(fmt, ...)), 4) end

-- What x is, for an error ("a dlp array", "a tensor", "a table without a report's fields", "number 3").
local function dlp_what(x, dlp)
  if lm.is_tensor(x) then return 'a tensor' end
  local mt = type(x) == 'table' and getmetatable(x)
  if mt and mt == dlp.Array then return 'a dlp array' end
  if mt and mt == dlp.Layer then return 'a dlp layer' end
  if mt and mt == dlp.Report then return 'a dlp report' end
  if type(x) == 'table' then return 'a table that is none of these' end
  if type(x) == 'string' then return string.format('the string %q', x) end
  if x == nil then return 'nil' end
  return 'the ' .. type(x) .. ' ' .. tostring(x)
end

-- The reports given: one, a list, or named ({a = r1, b = r2}: in the keys' order), with their names.
local function dlp_reports(data, scene, most, dlp)
  if getmetatable(data) == dlp.Report then return { data }, { '' } end
  if type(data) ~= 'table' or lm.is_tensor(data) or getmetatable(data) ~= nil then
    dlp_fail(scene, 'draws a report of a dlp array (a:run(layer)) or a table of them, got %s', dlp_what(data, dlp))
  end
  local keys = {}
  for k in pairs(data) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == 'number'
  end)
  local list, names = {}, {}
  for _, k in ipairs(keys) do
    local r = data[k]
    if getmetatable(r) ~= dlp.Report then
      dlp_fail(scene, '%s is %s, not a report of a dlp array (a:run(layer))', type(k) == 'number' and ('run ' .. k) or k,
        dlp_what(r, dlp))
    end
    list[#list + 1], names[#names + 1] = r, type(k) == 'string' and k or ''
  end
  if #list < 1 or #list > most then dlp_fail(scene, 'draws 1 to %d reports, got %d', most, #list) end
  return list, names
end

local function dlp_events(r, label)
  local ev = rawget(r, 'events')
  if type(ev) ~= 'table' or #ev == 0 then
    dlp_fail('dma', 'the report (%s) has no events: keep them with a:run(layer, {events = 4096})', label)
  end
  local rows = {}
  for i, e in ipairs(ev) do
    local k = DLP_KINDS[e.kind]
    local function int(v, what)
      if math.type(v) ~= 'integer' then
        dlp_fail('dma', 'the report (%s): event %d (%s) has %s = %s, not an integer', label, i, tostring(e.kind), what, tostring(v))
      end
      return v
    end
    if not k then
      dlp_fail('dma', "the report (%s): event %d has kind %s, not 'ifmap', 'filter', 'drain', 'stall' or 'fold'", label, i, tostring(e.kind))
    end
    if k == 3 then
      local op = DLP_OPERANDS[e.operand]
      if not op then
        dlp_fail('dma', "the report (%s): stall event %d has operand %s, not 'ifmap', 'filter' or 'ofmap'", label, i, tostring(e.operand))
      end
      rows[i] = { k, int(e.start, 'start'), int(e.cycles, 'cycles'), op }
    elseif k == 4 then
      rows[i] = { k, int(e.start, 'start'), int(e.stop, 'stop'), int(e.fold, 'fold') - 1 }
    else
      rows[i] = { k, int(e.start, 'start'), int(e.stop, 'stop'), int(e.words, 'words') }
    end
  end
  return lm.tensor(rows, { dtype = 'float64' })
end

function viz._dlp(scene, data, ...)
  if data == nil then
    local a, b = ...
    return viz.scene(scene, scene == 'systolic' and (b or a) or a)
  end
  local dlp = require 'lumen.dlp'
  if scene == 'systolic' then
    local layer, opts = ...
    if getmetatable(data) ~= dlp.Array then
      dlp_fail(scene, "the array must be a dlp.array{...} (viz.show('systolic', array, layer)), got %s", dlp_what(data, dlp))
    end
    if getmetatable(layer) ~= dlp.Layer then
      dlp_fail(scene, "the layer must be a dlp.conv{...} or dlp.gemm{...} (viz.show('systolic', array, layer)), got %s",
        dlp_what(layer, dlp))
    end
    if data.rows > 32 or data.cols > 32 then
      dlp_fail(scene, 'draws arrays of up to 32 x 32 PEs cell by cell; this one is %d x %d (a:with{rows = 16, cols = 16} is a smaller one)',
        data.rows, data.cols)
    end
    return viz._show_dlp(scene, { { config = data:config(), layer = layer, name = layer.name } }, opts)
  end
  local opts = ...
  local list, names = dlp_reports(data, scene, scene == 'dma' and 3 or 6, dlp)
  local runs = {}
  if scene == 'dma' then
    for i, r in ipairs(list) do
      runs[i] = { report = r, name = r.layer_name, label = names[i], events = dlp_events(r, names[i] ~= '' and names[i] or ('run ' .. i)),
        dropped = rawget(r, 'events_dropped') or 0 }
    end
    return viz._show_dlp(scene, runs, opts)
  end
  local tbl = type(opts) == 'table' and opts.table or nil
  for i, r in ipairs(list) do
    local e = r:energy(tbl)
    local pj, counts = {}, {}
    for k, level in ipairs(DLP_LEVELS) do pj[k], counts[k] = e[level], e.counts[level] end
    runs[i] = { report = r, name = r.layer_name, label = names[i], pj = pj, counts = counts,
      energy_source = e.source or 'an energy table given without a source' }
  end
  return viz._show_dlp(scene, runs, rest(opts, { table = true }))
end

-- ---------------------------------------------------------------- feature maps

--[[
viz.show(model, {input = x [, classes = {...}] [, source = '...']}): CNN Explainer's view (the
features scene): the model runs once on x ((C, H, W), (H, W) or a batch of one) under no_grad with
a forward hook on every leaf module, and each leaf's output, in the order they ran, becomes a
column of feature maps (a vector output: a column of values); a Conv2d also hands its input,
weight, bias, stride, padding, dilation and groups, so the scene can show (and check) the
arithmetic of any cell; the last output, when it is a vector of 2 to 32 values, is shown as a
softmax with the class names.
]]
function viz._features(model, opts)
  local x = opts.input
  if not lm.is_tensor(x) then fail('the features scene needs input = a tensor (C, H, W), got %s', type(x)) end
  if x:dim() == 2 then x = x:unsqueeze(1) end
  if x:dim() == 4 then
    if x:size(1) ~= 1 then fail('the features scene shows one input; got a batch of %d (shape %s)', x:size(1), shape_of(x)) end
    x = x[1]
  end
  if x:dim() ~= 3 then fail('the features scene takes one image (C, H, W) or (H, W), got shape %s', shape_of(x)) end
  local records, handles = {}, {}
  for _, l in ipairs(leaves(model)) do
    local m = l.module
    handles[#handles + 1] = m:register_forward_hook(function(mod, inputs, out)
      records[#records + 1] = { name = l.name, module = mod, input = inputs[1], out = out }
    end)
  end
  local ok, err = pcall(lm.no_grad, function() return model(x:unsqueeze(1)) end)
  for _, h in ipairs(handles) do h.remove() end
  if not ok then error('viz.show: the model did not run on the input of shape ' .. shape_of(x) .. ': ' .. tostring(err), 2) end
  if #records > 32 then fail('the features scene draws at most 32 layers; this model ran %d', #records) end
  local function f64(t) return lm.no_grad(function() return t:detach():double():contiguous() end) end
  local function as_maps(t) -- (1, C, H, W) -> (C, H, W); (1, n) -> (n, 1, 1)
    if not lm.is_tensor(t) then return nil end
    if t:dim() >= 1 and t:size(1) == 1 then t = t[1] end
    if t:dim() == 3 then return f64(t) end
    return f64(t:reshape(-1, 1, 1))
  end
  local layers = {}
  for i, r in ipairs(records) do
    local cls = rawget(getmetatable(r.module), '__name') or '?'
    local e = { name = r.name, kind = cls, desc = r.module:extra_repr(), out = as_maps(r.out) }
    if not e.out then fail('the features scene: layer %s (%s) returned no tensor', r.name, cls) end
    if cls == 'Conv2d' and lm.is_tensor(r.input) then
      local m = r.module
      e['in'] = as_maps(r.input)
      e.weight = f64(m.weight)
      e.bias = m.bias and f64(m.bias) or nil
      e.stride, e.padding, e.dilation, e.groups = m.stride, m.padding, m.dilation, m.groups
    end
    layers[i] = e
  end
  return viz._show_features({ name = rawget(getmetatable(model), '__name') or 'model', input = f64(x), layers = layers,
    classes = opts.classes, source = opts.source or 'computed by Lumen (CPU): the model on this input' }, (function()
      local o -- the scene's own options (step, ...), without the data's
      for k, v in pairs(opts) do
        if k ~= 'input' and k ~= 'classes' and k ~= 'source' then o = o or {}; o[k] = v end
      end
      return o
    end)())
end

--[[
viz.show('attention', {weights = W, tokens = {...} [, causal = true] [, source = '...']} [, opts]):
W (layers, heads, T, T), or (heads, T, T) for one layer, or a list of those per layer (what
nn.MultiheadAttention returns with need_weights = true and average_attn_weights = false, its
batch dim dropped); rows are queries and sum to 1. Shown again while a model trains, the scene
keeps the step being looked at.
]]
function viz._attention(data, opts)
  if type(data) ~= 'table' or lm.is_tensor(data) then
    fail("the attention scene takes {weights = W, tokens = {...}}, got %s", lm.is_tensor(data) and 'a tensor' or type(data))
  end
  local w = data.weights
  if type(w) == 'table' and not lm.is_tensor(w) then
    local per = {}
    for i, l in ipairs(w) do
      if not lm.is_tensor(l) then fail('the attention scene: weights[%d] must be a tensor, got %s', i, type(l)) end
      per[i] = l:dim() == 4 and l:shape()[1] == 1 and l[1] or l
      if per[i]:dim() ~= 3 then
        fail('the attention scene: weights[%d] must be (heads, T, T), got shape %s', i, shape_of(l))
      end
    end
    if #per == 0 then fail('the attention scene: weights is an empty list') end
    w = lm.stack(per)
  end
  if not lm.is_tensor(w) then fail('the attention scene needs weights = a (layers, heads, T, T) tensor, got %s', type(w)) end
  if w:dim() == 3 then w = w:unsqueeze(1) end
  local sh = w:shape()
  if w:dim() ~= 4 or sh[3] ~= sh[4] then
    fail('the attention scene takes weights of shape (layers, heads, T, T), got %s', shape_of(w))
  end
  local T = sh[3]
  local tokens = data.tokens
  if tokens == nil then
    tokens = {}
    for i = 1, T do tokens[i] = tostring(i) end
  end
  if type(tokens) ~= 'table' then fail('the attention scene takes tokens as a list of strings, got %s', type(tokens)) end
  if #tokens ~= T then fail('the attention scene has %d tokens for weights over %d (shape %s)', #tokens, T, shape_of(w)) end
  local tok = {}
  for i, t in ipairs(tokens) do tok[i] = tostring(t) end
  w = lm.no_grad(function() return w:detach():double():contiguous() end)
  local i, flat = first_bad(w)
  if i then
    local q, k = (i - 1) // T % T + 1, (i - 1) % T + 1
    fail('the attention scene: the weight of query %d, key %d is %s (weights are probabilities)', q, k, tostring(flat[i]:item()))
  end
  local sums = w:sum(4)
  local dev = (sums - 1):abs():max():item()
  if dev > 1e-3 then
    fail('the attention scene: a row of weights sums to %.6g, not 1 (rows are queries: softmax over the keys)',
      1 + (sums - 1):reshape(-1)[(sums - 1):abs():reshape(-1):argmax():item()]:item())
  end
  local causal = data.causal
  local above = w:triu(1)
  if causal == nil then causal = above:abs():sum():item() == 0 end
  if causal and above:abs():max():item() > 0 then
    local at = above:abs():reshape(-1):argmax():item()
    fail("the attention scene's weights are not causal: query %d gives key %d weight %.6g", (at - 1) // T % T + 1,
      (at - 1) % T + 1, above:reshape(-1)[at]:item())
  end
  local src = data.source or 'given by the caller (viz.show)'
  opts = rest(opts, {})
  if opts == nil or opts.step == nil then -- shown again (live): stay on the map being looked at
    local st = viz.is_open() and viz.state()
    if st and st.scene == 'attention' then
      opts = opts or {}
      opts.step = st.step
    end
  end
  return viz._show_attention(w, tok, causal and true or false, src, opts)
end

--[[
viz.show('rnn', {rnn = n, lstm = n [, rnn_clipped = n, lstm_clipped = n] [, clip = c]
[, source = '...']} [, opts]): the norm of the gradient reaching h_t for t = 1..T (tensors or
lists), what viz.rnn_gradients returns.
]]
local SERIES = { 'rnn', 'lstm', 'rnn_clipped', 'lstm_clipped' }
function viz._rnn(data, opts)
  if type(data) ~= 'table' or lm.is_tensor(data) then
    fail('the rnn scene takes {rnn = norms, lstm = norms, ...}, got %s', lm.is_tensor(data) and 'a tensor' or type(data))
  end
  local out, T, first = {}, nil, nil
  for _, k in ipairs(SERIES) do
    local v = data[k]
    if v ~= nil then
      if type(v) == 'table' and not lm.is_tensor(v) then v = lm.tensor(v) end
      if not lm.is_tensor(v) then fail('the rnn scene: %s must be a tensor or a list of norms, got %s', k, type(v)) end
      v = lm.no_grad(function() return v:detach():double():reshape(-1):contiguous() end)
      if T and v:numel() ~= T then
        fail('the rnn scene: %s has %d time steps but %s has %d', k, v:numel(), first, T)
      end
      if v:numel() < 1 then fail('the rnn scene: %s has no time steps', k) end
      local i, flat = first_bad(v)
      if i then fail('the rnn scene: %s[%d] is %s (a norm is finite and >= 0)', k, i, tostring(flat[i]:item())) end
      T, first, out[k] = v:numel(), first or k, v
    end
  end
  if not out.rnn and not out.lstm then fail('the rnn scene needs rnn or lstm (gradient norms per time step)') end
  local clip = data.clip or 0
  if type(clip) ~= 'number' or clip < 0 or clip ~= clip then fail('the rnn scene: clip must be a number >= 0') end
  return viz._show_rnn(out, clip, data.source or 'given by the caller (viz.show)', rest(opts, {}))
end

--[[
viz.show('detection', {images = X, truth = {...}, pred = {...} [, classes = {...}] [, iou = 0.5]
[, nms = 0.5] [, source = '...']} [, opts]): X (N, H, W) or (N, 1, H, W), grey values 0..1 (N <= 16,
H, W <= 256); truth[i] = {boxes = (k, 4) corners in pixels (x1, y1, x2, y2), classes = k class
indices (1-based; default all 1)} for image i; pred[i] the same with scores = k scores and,
optionally, keep = the indices NMS kept (lm.vision.nms's result; without it NMS runs here per
class at IoU `nms`). classes: the class names (default 'object'). iou: what a kept box needs to
count as a true positive.
]]
local function box_rows(fname, list, N, kind, nms)
  if type(list) ~= 'table' or lm.is_tensor(list) then fail('the detection scene: %s must be a list of one table per image, got %s', kind, type(list)) end
  if #list > N then fail('the detection scene: %s has %d entries for %d images', kind, #list, N) end
  local rows = {}
  for i = 1, N do
    local e = list[i]
    if e ~= nil then
      if type(e) ~= 'table' or lm.is_tensor(e) then fail('the detection scene: %s[%d] must be a table {boxes =, classes =%s}, got %s', kind, i, kind == 'pred' and ', scores =' or '', type(e)) end
      local b = e.boxes
      if type(b) == 'table' and not lm.is_tensor(b) then b = #b > 0 and lm.tensor(b, { dtype = 'float64' }) or lm.zeros(0, 4, { dtype = 'float64' }) end
      if not lm.is_tensor(b) or b:dim() ~= 2 or b:size(2) ~= 4 then
        fail('the detection scene: %s[%d].boxes must be (k, 4) corners x1, y1, x2, y2', kind, i)
      end
      b = b:detach():double()
      local k = b:size(1)
      local function list_of(v, name, default)
        if v == nil then
          local t = {}
          for j = 1, k do t[j] = default end
          return t
        end
        if lm.is_tensor(v) then v = v:detach():double():reshape(-1):tolist() end
        if type(v) ~= 'table' or #v ~= k then fail('the detection scene: %s[%d].%s must hold %d values (one per box)', kind, i, name, k) end
        return v
      end
      local cls = list_of(e.classes, 'classes', 1)
      local scores = list_of(e.scores, 'scores', kind == 'truth' and 1 or nil)
      if kind == 'pred' and e.scores == nil then fail('the detection scene: pred[%d].scores is missing', i) end
      local kept = {}
      if kind == 'pred' then
        local keep = e.keep
        if keep == nil then -- NMS per class here
          for j = 1, k do kept[j] = false end
          local by = {}
          for j = 1, k do by[cls[j]] = by[cls[j]] or {}; table.insert(by[cls[j]], j) end
          for _, idx in pairs(by) do
            local sub = b:index_select(1, lm.tensor(idx, { dtype = 'int64' }))
            local sc = lm.tensor((function() local t = {} for q, j in ipairs(idx) do t[q] = scores[j] end return t end)(),
              { dtype = 'float64' })
            for _, q in ipairs(lm.vision.nms(sub, sc, nms):tolist()) do kept[idx[q]] = true end
          end
        else
          if lm.is_tensor(keep) then keep = keep:tolist() end
          if type(keep) ~= 'table' then fail('the detection scene: pred[%d].keep must be a list of box indices', i) end
          for j = 1, k do kept[j] = false end
          for _, q in ipairs(keep) do
            if math.type(q) ~= 'integer' or q < 1 or q > k then fail('the detection scene: pred[%d].keep has index %s of %d boxes', i, tostring(q), k) end
            kept[q] = true
          end
        end
      end
      local bl = k > 0 and b:tolist() or {}
      for j = 1, k do
        local r = bl[j]
        if not (r[1] <= r[3] and r[2] <= r[4]) then
          fail('the detection scene: %s[%d] box %d is (%g, %g, %g, %g): corners must be x1 <= x2 and y1 <= y2', kind, i, j, r[1], r[2], r[3], r[4])
        end
        rows[#rows + 1] = { r[1], r[2], r[3], r[4], scores[j], i, cls[j], kept[j] and 1 or 0 }
      end
    end
  end
  return #rows > 0 and lm.tensor(rows, { dtype = 'float64' }) or lm.zeros(0, 8, { dtype = 'float64' })
end

function viz._detection(data, opts)
  if type(data) ~= 'table' or lm.is_tensor(data) then
    fail('the detection scene takes {images =, truth =, pred =}, got %s', lm.is_tensor(data) and 'a tensor' or type(data))
  end
  local x = data.images
  if not lm.is_tensor(x) then fail('the detection scene needs images = an (N, H, W) tensor, got %s', type(x)) end
  if x:dim() == 4 and x:size(2) == 1 then x = x:select(2, 1) end
  if x:dim() == 2 then x = x:unsqueeze(1) end
  if x:dim() ~= 3 or x:size(1) < 1 or x:size(1) > 16 or x:size(2) > 256 or x:size(3) > 256 or x:numel() == 0 then
    fail('the detection scene takes 1 to 16 grey images (N, H, W) of at most 256 x 256, got shape %s', shape_of(x))
  end
  local N = x:size(1)
  local classes = data.classes or { 'object' }
  if type(classes) ~= 'table' or #classes < 1 or #classes > 32 then fail('the detection scene: classes must be a list of 1 to 32 names') end
  local iou = data.iou or 0.5
  if type(iou) ~= 'number' or not (iou > 0 and iou <= 1) then fail('the detection scene: iou must be in (0, 1], got %s', tostring(iou)) end
  local nms = data.nms or 0.5
  local truth = box_rows('viz.show', data.truth or {}, N, 'truth', nms)
  local pred = box_rows('viz.show', data.pred or {}, N, 'pred', nms)
  for _, t in ipairs({ truth, pred }) do
    if t:size(1) > 0 then
      local c = t:select(2, 7)
      if c:min():item() < 1 or c:max():item() > #classes then
        fail('the detection scene: a box has class %d; classes 1..%d (%s)', math.tointeger(c:min():item() < 1 and c:min():item() or c:max():item()),
          #classes, table.concat(classes, ', '))
      end
    end
  end
  local images = lm.no_grad(function() return x:detach():double():contiguous() end)
  return viz._show_detection(images, truth, pred, classes, iou, data.source or 'given by the caller (viz.show)',
    rest(opts, {}))
end

--[[
viz.rnn_gradients([{hidden = 16, length = 50, inputs = 4, gain = 1, clip = 1, seed = 0,
nonlinearity = 'tanh'}]) -> data for viz.show('rnn', data): an nn.RNNCell and an nn.LSTMCell of
the same size (float64, PyTorch's initialisation from lm.manual_seed(seed); the RNN's weight_hh
times gain) run on the same N(0, 1) inputs from h_0 = c_0 = 0, L = sum(h_T), and the gradient
reaching each h_t measured by backpropagating one step at a time with autograd: h_{t-1} (and
c_{t-1}) a fresh leaf, the step's outputs backward with the gradient that came from t + 1; with
clip > 0 the same again, that gradient scaled to norm <= clip before it goes on.
]]
function viz.rnn_gradients(o)
  o = o or {}
  local nn = require 'lumen.nn'
  local H, T, I = o.hidden or 16, o.length or 50, o.inputs or 4
  local clip = o.clip or 1
  lm.manual_seed(o.seed or 0)
  local rnn = nn.RNNCell(I, H, { nonlinearity = o.nonlinearity or 'tanh' }):double()
  local lstm = nn.LSTMCell(I, H):double()
  lm.no_grad(function() rnn.weight_hh:mul_(o.gain or 1) end)
  local x = lm.randn(T, 1, I):double()
  local function run(cell, is_lstm, c)
    -- the forward states, without a graph
    local hs, cs = { [0] = lm.zeros(1, H):double() }, { [0] = lm.zeros(1, H):double() }
    lm.no_grad(function()
      for t = 1, T do
        if is_lstm then hs[t], cs[t] = cell(x[t], { hs[t - 1], cs[t - 1] }) else hs[t] = cell(x[t], hs[t - 1]) end
      end
    end)
    local norms = lm.zeros(T):double()
    local gh, gc = lm.ones(1, H):double(), lm.zeros(1, H):double()
    for t = T, 1, -1 do
      local n = gh:norm():item()
      if c > 0 and n > c then gh, n = gh * (c / n), c end
      norms[t] = n
      local hp = hs[t - 1]:clone():requires_grad_(true)
      local cp = is_lstm and cs[t - 1]:clone():requires_grad_(true)
      local loss
      if is_lstm then
        local h, cc = cell(x[t], { hp, cp })
        loss = (h * gh):sum() + (cc * gc):sum()
      else
        loss = (cell(x[t], hp) * gh):sum()
      end
      loss:backward()
      gh = hp.grad:detach()
      gc = is_lstm and cp.grad:detach() or gc
    end
    return norms
  end
  local gain, nl = o.gain or 1, o.nonlinearity or 'tanh'
  local src = string.format('Lumen autograd (CPU, float64), RNNCell(%s%s)/LSTMCell %d -> %d', nl,
    gain ~= 1 and string.format(', W_hh x %g', gain) or '', I, H)
  local d = { rnn = run(rnn, false, 0), lstm = run(lstm, true, 0), clip = clip, source = src }
  if clip > 0 then d.rnn_clipped, d.lstm_clipped = run(rnn, false, clip), run(lstm, true, clip) end
  return d
end

--[[
viz.watch(model [, opts]) -> watcher: shows the model and records, at its first forward and then at
most about 10 times a second, each layer's activations (a forward hook on every leaf module) and, when watcher:gradients() is
called after backward, each layer's parameter gradients, as live histograms. watcher:close()
removes the hooks. opts.show = false records without switching the window to the model;
opts.always = true records every forward (scripts, tests: not paced by the clock).
]]
function viz.watch(model, opts)
  local nn = nn_module(model)
  if not nn then error('viz.watch: expected an nn module, got ' .. type(model), 2) end
  local d = describe(model)
  local always = opts and opts.always
  if not (opts and opts.show == false) then viz._show_model(d) end
  local w = { on = false, handles = {}, layers = d.layers }
  local first = true -- the first forward is recorded at once: the histograms appear with it
  for i, l in ipairs(d.layers) do
    w.handles[i] = l.module:register_forward_hook(function(_, _, out)
      if i == 1 then
        w.on = always or first or viz.due()
        first = false
      end
      if w.on and lm.is_tensor(out) and out:dtype():find('float') then viz._record(i, 'activations', out:detach()) end
    end)
  end
  --- Records the parameter gradients of each layer (call after backward; cheap when not due).
  function w:gradients()
    if not self.on then return end
    for i, l in ipairs(self.layers) do
      local gs = {}
      for _, p in ipairs(l.module:parameters()) do
        if p.grad then gs[#gs + 1] = p.grad:reshape(-1) end
      end
      if #gs > 0 then viz._record(i, 'gradients', #gs == 1 and gs[1] or lm.cat(gs)) end
    end
  end
  function w:close()
    for _, h in ipairs(self.handles) do h:remove() end
    self.handles = {}
  end
  return w
end

return viz
