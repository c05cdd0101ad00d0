--[[
bench/viz/frames.lua — frame time at 1280 x 720 (offscreen, Mesa llvmpipe) for the largest scene
of each kind (Visualizer I's and II's: a 64 x 64 tiled convolution, a 128 x 128 tiled matmul, a
10,000-point curve, a 200-node graph), and the time from viz.show(info) to the first frame, against
an empty frame (the window's title and key hint only) measured in the same run. The kernel's run
behind info is made before the clock starts; what a scene runs itself is in (the matmul scene
emulates the naive kernel and up to four tile sizes for its variants and counters: ~0.6 s at
128 x 128 x 128; conv's variants likewise). Run by bench/viz/run.sh (lumen --headless
bench/viz/frames.lua); prints one table.
]]
local N = tonumber(os.getenv('N') or '25')

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local function frames()
  viz.redraw()
  local t = {}
  for i = 1, N do t[i] = viz.redraw() end
  return median(t)
end

-- the English labels, whatever LANG says: the graph's node count below is read from its title
-- (LUMEN_BENCH_LANG=zh measures the Chinese ones, that line then saying less)
lm.sys.lang(os.getenv('LUMEN_BENCH_LANG') or 'en')
viz.open { width = 1280, height = 720 }
local st = viz.state()
assert(st.width == 1280 and st.height == 720, 'the frame is not 1280 x 720')
local empty = frames()

local cases = {
  { 'scan: 1,024 elements, both algorithms', function()
      return select(2, kernels.scan(lm.arange(1, 1025):float(), { backend = 'emu' })) end, 5 },
  { 'reduce: 2,048 elements, both kernels', function()
      return select(2, kernels.reduce(lm.arange(1, 2049):float(), { backend = 'emu', algo = 'naive' })) end, 5 },
  { 'histogram: 64K values, 256 bins', function()
      lm.manual_seed(1)
      return select(2, kernels.histogram(lm.randint(0, 256, { 65536 }):int(), 256, { backend = 'emu' })) end, 100 },
  { 'divergence: 32 warps', function()
      return select(2, kernels.divergence { warps = 32 }) end, 8 },
}

print(string.format('bench/viz frames (1280 x 720 offscreen, LP_NUM_THREADS=%s, median of %d)',
  os.getenv('LP_NUM_THREADS') or '?', N))
print(string.format('%-40s %9s %9s %9s %12s', 'scene', 'frame ms', '< 8 ms', 'x empty', 'show->frame'))
print(string.format('%-40s %9.2f %9s %9s %12s', 'empty frame (anchor)', empty, '', '1.0', ''))
for _, c in ipairs(cases) do
  local info = c[2]()
  local shows = {}
  for i = 1, 5 do
    local t0 = lm.sys.clock()
    viz.show(info)
    viz.redraw()
    shows[i] = (lm.sys.clock() - t0) * 1e3
  end
  viz.seek(c[3])
  local ms = frames()
  print(string.format('%-40s %9.2f %9s %9.1f %9.1f ms', c[1], ms, ms < 8 and 'yes' or 'NO', ms / empty, median(shows)))
end
-- visualizer II (issue 19): the largest picture of each new kind; shows built in Lua
local function curve10k()
  viz.clear()
  for i = 1, 10000 do viz.plot('train/loss', i, math.exp(-i / 3000) + 0.02 * math.sin(i * 0.7)) end
end
local function graph200()
  viz.scene('graph', { expr = 'wide', n = 50 }) -- 50 neurons tanh(x w + b) summed pairwise: 199 nodes
end
-- { label, what to show (timed from here to the first frame), step to seek, the emulated run
-- behind it (made before the clock starts: show->frame is the scene's time, not the kernel's) }
local function conv_run()
  lm.manual_seed(2)
  return select(2, kernels.conv2d(lm.rand(64, 64), lm.rand(3, 3), { algo = 'tiled', tile = 8, backend = 'emu' }))
end
local function matmul_run()
  lm.manual_seed(2)
  return select(2, kernels.matmul(lm.rand(128, 128), lm.rand(128, 128), { tile = 16, backend = 'emu' }))
end
local cases2 = {
  { 'conv: 64 x 64, tiled with halo (tile 8)', viz.show, 21, conv_run },
  { 'matmul: 128 x 128, tiled (tile 16)', viz.show, 5, matmul_run },
  { 'curves: 10,000 points', curve10k, nil },
  { 'graph: 200 nodes', graph200, 100 },
}
for _, c in ipairs(cases2) do
  local shows = {}
  local info = c[4] and c[4]()
  for i = 1, 3 do
    local t0 = lm.sys.clock()
    c[2](info)
    viz.redraw()
    shows[i] = (lm.sys.clock() - t0) * 1e3
  end
  if c[3] then viz.seek(math.min(c[3], viz.state().steps - 1)) end
  local ms = frames()
  local label = c[1]
  if viz.state().scene == 'graph' then label = label .. ' (' .. (viz.state().title:match('(%d+ nodes)') or '?') .. ')' end
  print(string.format('%-40s %9.2f %9s %9.1f %9.1f ms', label, ms, ms < 8 and 'yes' or 'NO', ms / empty, median(shows)))
end
-- a small, typical one: the 16-element scan of the lecture, from viz.show to its first frame
local _, small = kernels.scan(lm.arange(1, 17):float(), { backend = 'emu' })
local t = {}
for i = 1, 5 do
  local t0 = lm.sys.clock()
  viz.show(small)
  viz.redraw()
  t[i] = (lm.sys.clock() - t0) * 1e3
end
print(string.format('%-40s %9.2f %9s %9s %9.1f ms', 'scan: 16 elements (the lecture\'s)', frames(), '', '', median(t)))
viz.close()
local t0 = lm.sys.clock()
viz.show(small)
viz.redraw()
print(string.format('%-40s %9s %9s %9s %9.1f ms', 'the same, the window opening too', '', '', '', (lm.sys.clock() - t0) * 1e3))
