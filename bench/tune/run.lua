-- bench/tune/run.lua — what lm.tune buys (issue 31, Must 5): for each shape, the course's tiled
-- kernel on the cpu at its defaults against the same kernel with the options lm.tune found, in the
-- same run, with OpenBLAS (x:matmul) and F.conv2d (im2col + OpenBLAS) as the anchors.
-- Kernel times: info.counters.time_ms (the kernel's own timer: the median of --repeats runs after a
-- warm-up, the operands flushed from the caches before each run). Anchors: the wall clock of the
-- Lua call (median of --repeats calls after a warm-up, operands warm: favours the anchor slightly).
-- The search itself runs with --search-repeats repeats per candidate and no cache file.
-- Usage: lumen bench/tune/run.lua [--repeats 5] [--search-repeats 3] [--quick] [--dtype float32]
local F = lm.nn.functional

local repeats, search_repeats, quick, dtype = 5, 3, false, 'float32'
local i = 1
while arg[i] do
  local a = arg[i]
  if a == '--repeats' then repeats = math.tointeger(tonumber(arg[i + 1])); i = i + 2
  elseif a == '--search-repeats' then search_repeats = math.tointeger(tonumber(arg[i + 1])); i = i + 2
  elseif a == '--dtype' then dtype = arg[i + 1]; i = i + 2
  elseif a == '--quick' then quick = true; i = i + 1
  else error('bench/tune/run.lua: unknown argument ' .. a .. ' (--repeats N, --search-repeats N, --quick, --dtype D)') end
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

-- Wall-clock milliseconds of fn(), median of `repeats` calls after one warm-up.
local function wall_ms(fn)
  fn()
  local t = {}
  for r = 1, repeats do
    local t0 = lm.sys.clock()
    local y = fn()
    t[r] = (lm.sys.clock() - t0) * 1e3
    y:close()
  end
  return median(t)
end

local function show(o)
  local keys, parts = {}, {}
  for k in pairs(o) do if k ~= 'backend' then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. '=' .. tostring(o[k]) end
  return #parts > 0 and table.concat(parts, ' ') or '(the default)'
end

local ci = kernels.cpu_info()
print(string.format('lm.tune on %s, %d threads, SIMD path %s, %s; kernel times: info time_ms, median of %d '
  .. '(operands flushed); anchors: wall clock, median of %d', ci.cpu, ci.threads, ci.isa, dtype, repeats, repeats))

-- ---------------------------------------------------------------- matmul

local mm_shapes = quick and { { 256, 256, 256 }, { 257, 129, 263 } }
    or { { 512, 512, 512 }, { 1024, 256, 1024 }, { 769, 513, 1031 } }
print()
print(string.format('%-16s %10s %10s %10s %8s %8s %8s  %s', 'matmul m x k x n', 'default', 'tuned', 'OpenBLAS',
  'speedup', 'GFLOP/s', 'search', 'winner'))
for _, s in ipairs(mm_shapes) do
  local m, k, n = s[1], s[2], s[3]
  local a, b = lm.randn(m, k, { dtype = dtype }), lm.randn(k, n, { dtype = dtype })
  local t0 = lm.sys.clock()
  local w, list = lm.tune('matmul', a, b, { repeats = search_repeats, cache = false })
  local search_s = lm.sys.clock() - t0
  local yd, d = kernels.matmul(a, b, { backend = 'cpu', repeats = repeats })
  local yt, t = kernels.matmul(a, b, (function() local o = {}; for kk, v in pairs(w) do o[kk] = v end; o.repeats = repeats; return o end)())
  assert(lm.equal(yd, yt), 'the tuned run differs from the default run')
  local blas = wall_ms(function() return a:matmul(b) end)
  local dt, tt = d.counters.time_ms, t.counters.time_ms
  print(string.format('%-16s %8.2fms %8.2fms %8.2fms %7.2fx %8.1f %6.1fs  %s (%d candidates)',
    string.format('%dx%dx%d', m, k, n), dt, tt, blas, dt / tt, 2 * m * k * n / (tt * 1e6), search_s, show(w), #list))
end

-- ---------------------------------------------------------------- conv2d

local conv_shapes = quick and { { 256, 256, 5, 5 }, { 255, 129, 7, 3 } }
    or { { 2048, 2048, 5, 5 }, { 1024, 1024, 9, 9 }, { 1023, 769, 7, 3 } }
print()
print(string.format('%-22s %10s %10s %10s %8s %8s  %s', 'conv2d h x w, mask', 'default', 'tuned', 'F.conv2d',
  'speedup', 'search', 'winner'))
for _, s in ipairs(conv_shapes) do
  local h, w_, mh, mw = s[1], s[2], s[3], s[4]
  local img, mask = lm.randn(h, w_, { dtype = dtype }), lm.randn(mh, mw, { dtype = dtype })
  local t0 = lm.sys.clock()
  local w, list = lm.tune('conv2d', img, mask, { repeats = search_repeats, cache = false })
  local search_s = lm.sys.clock() - t0
  local base = { backend = 'cpu', repeats = repeats }
  local yd, d = kernels.conv2d(img, mask, base)
  local o = { repeats = repeats }
  for kk, v in pairs(w) do o[kk] = v end
  local yt, t = kernels.conv2d(img, mask, o)
  assert(lm.equal(yd, yt), 'the tuned run differs from the default run')
  local x4, w4 = img:reshape(1, 1, h, w_), mask:reshape(1, 1, mh, mw)
  local anchor = wall_ms(function() return F.conv2d(x4, w4, nil, { padding = { (mh - 1) // 2, (mw - 1) // 2 } }) end)
  local dt, tt = d.counters.time_ms, t.counters.time_ms
  print(string.format('%-22s %8.2fms %8.2fms %8.2fms %7.2fx %6.1fs  %s (%d candidates)',
    string.format('%dx%d, %dx%d', h, w_, mh, mw), dt, tt, anchor, dt / tt, search_s, show(w), #list))
end
