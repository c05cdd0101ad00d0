-- lm.tune (issue 31, Must 5): the cpu runs' knobs it searches (matmul tile_m, tile_n, tile_k and
-- the six loop orders; conv2d tile_h, tile_w and three orders) each equal the naive loop on random
-- shapes (odd, not powers of two, size-1 dims; float32 and float64); the tuner's winner is the
-- minimum of its own list and gives the default's result; the cache is written, reused without a
-- run, keyed by shape, survives a corrupt or foreign file; the emulated search is deterministic;
-- bad input. Timing never decides a result here (small shapes, one repeat).
local test = require 'lumen.test'
local kernels = require 'lumen.kernels'
local tune = require 'lumen.tune'

local MM_ORDERS = { 'ijk', 'ikj', 'jik', 'jki', 'kij', 'kji' }
local CONV_ORDERS = { 'tile-row-mask', 'tile-mask-row', 'mask-tile-row' }

-- Integer-valued random matrices (sums of products stay exact in float32): any order of addition
-- gives the same numbers, so "equals" is exact.
local function ints(r, c, dtype) return lm.randint(-3, 4, { r, c }, { dtype = dtype }) end

-- The textbook loops in Lua (float64, exact on integer data).
local function naive_mm(a, b)
  local A, B = a:tolist(), b:tolist()
  local m, k, n = #A, #B, #B[1]
  local C = {}
  for i = 1, m do
    C[i] = {}
    for j = 1, n do
      local s = 0
      for p = 1, k do s = s + A[i][p] * B[p][j] end
      C[i][j] = s
    end
  end
  return C
end

local function naive_conv(img, mask)
  local I, F = img:tolist(), mask:tolist()
  local h, w, mh, mw = #I, #I[1], #F, #F[1]
  local ry, rx = (mh - 1) // 2, (mw - 1) // 2
  local O = {}
  for y = 1, h do
    O[y] = {}
    for x = 1, w do
      local s = 0
      for i = 1, mh do
        for j = 1, mw do
          local yy, xx = y + i - 1 - ry, x + j - 1 - rx
          if yy >= 1 and yy <= h and xx >= 1 and xx <= w then s = s + F[i][j] * I[yy][xx] end
        end
      end
      O[y][x] = s
    end
  end
  return O
end

local MM_SHAPES = { { 1, 1, 1 }, { 1, 7, 5 }, { 9, 1, 4 }, { 6, 5, 1 }, { 17, 13, 11 }, { 33, 20, 7 }, { 40, 37, 45 } }
local MM_TILES = { { 1, 1, 1 }, { 3, 5, 2 }, { 8, 16, 4 }, { 16, 16, 16 }, { 7, 64, 33 }, { 64, 3, 128 } }

test.case('matmul: every order and tile equals the naive loop (float32, float64; odd and size-1 dims)', function()
  local runs = 0
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    for _, s in ipairs(MM_SHAPES) do
      local a, b = ints(s[1], s[2], dtype), ints(s[2], s[3], dtype)
      local want = naive_mm(a, b)
      for _, order in ipairs(MM_ORDERS) do
        for _, t in ipairs(MM_TILES) do
          local y, info = kernels.matmul(a, b, { backend = 'cpu', tile_m = t[1], tile_n = t[2], tile_k = t[3],
            order = order, repeats = 1 })
          test.eq(y:tolist(), want, string.format('%s %dx%dx%d %s tiles %d,%d,%d', dtype, s[1], s[2], s[3],
            order, t[1], t[2], t[3]))
          test.eq(y:dtype(), dtype)
          test.ok(info.impl:find('order ' .. order, 1, true), info.impl)
          runs = runs + 1
        end
      end
    end
  end
  test.ok(runs == 2 * #MM_SHAPES * #MM_ORDERS * #MM_TILES)
end)

test.case('matmul: on random floats every tiling gives the default run\'s bits and the naive loop\'s', function()
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    local a, b = lm.randn(29, 41, { dtype = dtype }), lm.randn(41, 23, { dtype = dtype })
    local dflt = kernels.matmul(a, b, { backend = 'cpu', repeats = 1 })
    local naive = kernels.matmul(a, b, { backend = 'cpu', algo = 'naive', repeats = 1 })
    test.ok(lm.equal(dflt, naive), dtype .. ': the default tiled run adds in the naive loop\'s order')
    for _, order in ipairs(MM_ORDERS) do
      for _, t in ipairs({ { 5, 9, 3 }, { 32, 8, 64 }, { 29, 23, 41 } }) do
        local y = kernels.matmul(a, b, { tile_m = t[1], tile_n = t[2], tile_k = t[3], order = order, repeats = 1 })
        test.ok(lm.equal(y, dflt), string.format('%s %s %d,%d,%d', dtype, order, t[1], t[2], t[3]))
      end
    end
    -- `tile` alone still sets all three (today's default is tile 16)
    local t8 = kernels.matmul(a, b, { backend = 'cpu', tile = 8, repeats = 1 })
    local t8b = kernels.matmul(a, b, { tile_m = 8, tile_n = 8, tile_k = 8, repeats = 1 })
    test.ok(lm.equal(t8, t8b))
  end
end)

test.case('conv2d: every order and tile equals the naive loop (float32, float64; odd and size-1 dims)', function()
  local shapes = { { 1, 1, 1, 1 }, { 1, 9, 1, 3 }, { 7, 1, 3, 1 }, { 5, 5, 5, 5 }, { 13, 17, 3, 5 }, { 20, 11, 4, 2 },
    { 31, 40, 7, 3 } }
  local tiles = { { 1, 1 }, { 2, 3 }, { 4, 16 }, { 7, 5 }, { 64, 64 } }
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    for _, s in ipairs(shapes) do
      local img, mask = ints(s[1], s[2], dtype), ints(s[3], s[4], dtype)
      local want = naive_conv(img, mask)
      -- the default run (the cpu ignores algo; an even mask needs a variant that takes it)
      local algo = (s[3] % 2 == 0 or s[4] % 2 == 0) and 'naive' or nil
      local dflt = kernels.conv2d(img, mask, { backend = 'cpu', algo = algo, repeats = 1 })
      test.eq(dflt:tolist(), want, 'default ' .. table.concat(s, 'x'))
      for _, order in ipairs(CONV_ORDERS) do
        for _, t in ipairs(tiles) do
          local y, info = kernels.conv2d(img, mask, { algo = algo, tile_h = t[1], tile_w = t[2], order = order,
            repeats = 1 })
          test.eq(y:tolist(), want, string.format('%s %s %s tiles %dx%d', dtype, table.concat(s, 'x'), order,
            t[1], t[2]))
          test.eq(info.source, 'cpu')
        end
      end
    end
    -- random floats: the same bits as the default run
    local img, mask = lm.randn(23, 35, { dtype = dtype }), lm.randn(5, 3, { dtype = dtype })
    local dflt = kernels.conv2d(img, mask, { backend = 'cpu', repeats = 1 })
    for _, order in ipairs(CONV_ORDERS) do
      local y = kernels.conv2d(img, mask, { tile_h = 3, tile_w = 8, order = order, repeats = 1 })
      test.ok(lm.equal(y, dflt), dtype .. ' ' .. order)
    end
  end
end)

test.case('the new options: checked, named, refused where they do not apply', function()
  local a = lm.ones(4, 4)
  test.raises(function() kernels.matmul(a, a, { tile_m = 0 }) end, 'kernels.matmul: tile_m = 0: must be between 1 and 4096')
  test.raises(function() kernels.matmul(a, a, { tile_k = 4097 }) end, 'tile_k = 4097: must be between 1 and 4096')
  test.raises(function() kernels.matmul(a, a, { tile_n = 2.5 }) end, 'tile_n')
  test.raises(function() kernels.matmul(a, a, { order = 'ijj' }) end,
    "unknown order 'ijj' (expected 'ijk', 'ikj', 'jik', 'jki', 'kij' or 'kji')")
  test.raises(function() kernels.matmul(a, a, { tile_m = 8, backend = 'emu' }) end,
    'option tile_m is not used by the emu run')
  test.raises(function() kernels.matmul(a, a, { order = 'ikj', algo = 'naive' }) end, 'the naive loop has no tiles')
  test.raises(function() kernels.conv2d(a, lm.ones(3, 3), { tile_w = 0 }) end, 'kernels.conv2d: tile_w = 0: must be between 1 and 4096')
  test.raises(function() kernels.conv2d(a, lm.ones(3, 3), { order = 'ijk' }) end,
    "unknown order 'ijk' (expected 'tile-row-mask', 'tile-mask-row' or 'mask-tile-row')")
  test.raises(function() kernels.conv2d(a, lm.ones(3, 3), { tile_h = 2, trace = true }) end, 'not used by the emu run')
  -- backend 'auto' with a cpu knob runs on the cpu
  local _, info = kernels.matmul(a, a, { tile_m = 2, repeats = 1 })
  test.eq(info.source, 'cpu')
  local _, info2 = kernels.conv2d(a, lm.ones(3, 3), { tile_h = 2, repeats = 1 })
  test.eq(info2.source, 'cpu')
  -- the default run says what it always said
  local _, d = kernels.matmul(a, a, { backend = 'cpu', repeats = 1 })
  test.ok(d.impl:find('tiled: 16 x 16 blocks of C, k in slices of 16, held in L1', 1, true), d.impl)
  test.ok(kernels.cpu_info().isa and kernels.cpu_info().threads >= 1)
end)

-- A fresh cache file for one test.
local function cache_path()
  local p = os.tmpname()
  os.remove(p)
  return p .. '.json'
end

-- Runs fn with kernels[op] counting its calls; returns the count and fn's results.
local function counting(op, fn)
  local real, n = kernels[op], 0
  kernels[op] = function(...) n = n + 1; return real(...) end
  local ok, w, list = pcall(fn)
  kernels[op] = real
  if not ok then error(w, 0) end
  return n, w, list
end

test.case('lm.tune: the winner is the minimum of its list and gives the default\'s result', function()
  test.eq(lm.tune, tune.tune)
  for _, dtype in ipairs({ 'float32', 'float64' }) do
    local a, b = lm.randn(37, 19, { dtype = dtype }), lm.randn(19, 26, { dtype = dtype })
    local w, list = lm.tune('matmul', a, b, { repeats = 1, cache = false })
    test.ok(#list >= 10, #list .. ' candidates')
    test.eq(list.from_cache, false)
    -- every candidate once, the default and the leaders a second time (each at most once more)
    test.ok(list.ran >= #list + #list.rejected + 1 and list.ran <= 2 * #list + #list.rejected + 1, list.ran)
    test.ok(list[1].confirmed and list.default.confirmed, 'the winner and the default timed twice')
    test.eq(list.metric, 'time_ms')
    for _, c in ipairs(list) do
      test.ok(c.value >= list[1].value)
      test.eq(c.label, 'CPU measured')
      test.eq(c.time_ms, c.value)
      test.ok(lm.equal(kernels.matmul(a, b, c.options), kernels.matmul(a, b, { backend = 'cpu' })), c.options)
    end
    test.eq(w, list[1].options)
    test.eq(w.backend, 'cpu')
    test.ok(list.default and list.default.default)
    test.eq(list.default.options, { backend = 'cpu' })
    test.ok(lm.equal(kernels.matmul(a, b, w), kernels.matmul(a, b)), 'the winner gives the default result')

    local img, mask = lm.randn(21, 30, { dtype = dtype }), lm.randn(3, 5, { dtype = dtype })
    local cw, clist = lm.tune('conv2d', img, mask, { repeats = 1, cache = false })
    for _, c in ipairs(clist) do test.ok(c.value >= clist[1].value) end
    test.ok(lm.equal(kernels.conv2d(img, mask, cw), kernels.conv2d(img, mask, { backend = 'cpu' })))
  end
  -- an even mask: the default on the cpu is then the naive variant (the cpu ignores algo)
  local img, mask = lm.randn(12, 10), lm.randn(4, 2)
  local w, list = lm.tune('conv2d', img, mask, { repeats = 1, cache = false, search = 'grid', tiles = { 2, 8 } })
  test.eq(w.algo, 'naive')
  test.eq(list.default.options, { backend = 'cpu', algo = 'naive' })
  test.eq(#list, 3 * 3 * 3 + 1) -- every order x tile_h {2, 8, 12} x tile_w {2, 8, 10}, and the default
end)

test.case('lm.tune on the emulator: modelled cycles, deterministic, never a wrong path', function()
  local a, b = lm.randn(20, 33), lm.randn(33, 17)
  local w1, l1 = lm.tune('matmul', a, b, { backend = 'emu', cache = false })
  local w2, l2 = lm.tune('matmul', a, b, { backend = 'emu', cache = false })
  test.eq(l1.metric, 'modelled_cycles')
  test.eq(l1[1].label, 'emulated, modelled cycles')
  test.eq(w1, w2)
  test.eq(#l1, #l2)
  for i = 1, #l1 do
    test.eq(l1[i].options, l2[i].options)
    test.eq(l1[i].value, l2[i].value)
    test.eq(l1[i].modelled_cycles, l1[i].value)
    test.ok(l1[i].value >= l1[1].value)
  end
  test.ok(lm.equal(kernels.matmul(a, b, w1), kernels.matmul(a, b, { backend = 'emu', trace = false })))
  local img, mask = lm.randn(18, 21), lm.randn(3, 5)
  local cw, cl = lm.tune('conv2d', img, mask, { backend = 'emu', cache = false })
  local cw2, cl2 = lm.tune('conv2d', img, mask, { backend = 'emu', cache = false })
  test.eq(cw, cw2)
  for i = 1, #cl do test.eq(cl[i].value, cl2[i].value) end
  test.ok(cw.algo == 'tiled-input' or cw.algo == 'tiled-output')
  -- a tile the variant refuses (tiled-input, tile 32: a 34 x 36 block) is listed as rejected, not run twice
  test.ok(#cl.rejected >= 1, 'rejected')
end)

test.case('the cache: written, reused without a run, keyed by shape, survives a corrupt file', function()
  local file = cache_path()
  local a, b = lm.randn(24, 9), lm.randn(9, 31)
  local n1, w1, l1 = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
  test.eq(l1.from_cache, false)
  test.ok(n1 > 10 and n1 == l1.ran, n1 .. ' runs')
  test.ok(lm.sys.isfile(file), 'written')
  test.eq(l1.file, file)
  test.ok(l1.key:find('matmul cpu float32 24x9x31 threads=', 1, true), l1.key)
  test.ok(l1.key:find('isa=' .. kernels.cpu_info().isa, 1, true), l1.key)
  -- the same key: the winner from the file, no run at all
  local n2, w2, l2 = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
  test.eq(n2, 0)
  test.eq(l2.ran, 0)
  test.eq(l2.from_cache, true)
  test.eq(w2, w1)
  test.eq(#l2, #l1)
  test.ok(l2.summary:find('from the cache', 1, true), l2.summary)
  -- another shape, another dtype, another op, another backend: searched (and kept beside it)
  local n3, _, l3 = counting('matmul', function() return lm.tune('matmul', a:t(), a, { repeats = 1, cache = file }) end)
  test.ok(n3 > 0 and not l3.from_cache)
  local n4 = counting('matmul', function()
    return lm.tune('matmul', a:double(), b:double(), { repeats = 1, cache = file }) end)
  test.ok(n4 > 0)
  local n5 = counting('matmul', function() return lm.tune('matmul', a, b, { backend = 'emu', cache = file }) end)
  test.ok(n5 > 0)
  local nt = lm.get_num_threads()
  lm.set_num_threads(nt == 1 and 2 or 1) -- another thread count: another key
  local okt, nthr = pcall(counting, 'matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
  lm.set_num_threads(nt)
  test.ok(okt and nthr > 0, 'searched again with other threads')
  local n6 = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
  test.eq(n6, 0, 'the first entry is still there')
  -- refresh: searched again; cache = false: no file touched
  local n7 = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file, refresh = true }) end)
  test.ok(n7 > 0)
  local other = cache_path()
  lm.tune('matmul', a, b, { repeats = 1, cache = false })
  test.ok(not lm.sys.isfile(other))

  -- a corrupt file: a warning, a search, the file rewritten (and then read again)
  for _, junk in ipairs({ '{"format": "lumen-tune", "version": 1, "entries": {', 'not json at all\n',
    '{"format": "something-else", "version": 1, "entries": {}}', '{"format": "lumen-tune", "version": 99, "entries": {}}',
    '[1, 2, 3]', '' }) do
    lm.sys.write_file(file, junk)
    local n, w, l = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
    test.ok(n > 0, 'searched after ' .. junk)
    if junk ~= '' then
      test.ok(#l.warnings >= 1 and l.warnings[1]:find('ignoring the cache file', 1, true), junk)
    end
    test.ok(w.backend == 'cpu')
    local n2b, _, l2b = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
    test.eq(n2b, 0, 'rewritten after ' .. junk)
    test.eq(#l2b.warnings, 0)
  end
  -- a malformed entry in a good file: ignored with a warning, searched again
  local text = lm.sys.read_file(file)
  local data = tune._json_decode(text)
  for _, e in pairs(data.entries) do e.candidates[1].options.tile_m = 'x' end
  lm.sys.write_file(file, tune._json_encode(data))
  local n8, _, l8 = counting('matmul', function() return lm.tune('matmul', a, b, { repeats = 1, cache = file }) end)
  test.ok(n8 > 0)
  test.ok(l8.warnings[1]:find('malformed', 1, true), l8.warnings[1])
  os.remove(file)
  -- the default file
  test.ok(tune.cache_file():find('/lumen/tune/cache.json', 1, true))
  test.eq(tune.cache_file('/x/y.json'), '/x/y.json')
end)

test.case('budget_s stops the search; verbose shows it', function()
  local a, b = lm.randn(30, 30), lm.randn(30, 30)
  local w, list = lm.tune('matmul', a, b, { repeats = 1, cache = false, budget_s = 1e-9 })
  test.eq(list.truncated, true)
  test.ok(#list >= 1)
  test.eq(w, list[1].options)
  local lines, old = {}, _G.print
  _G.print = function(...) lines[#lines + 1] = table.concat({ ... }, '\t') end
  local ok, err = pcall(lm.tune, 'matmul', a, b, { repeats = 1, cache = false, verbose = true, tiles = { 8 } })
  _G.print = old
  test.ok(ok, err)
  local text = table.concat(lines, '\n')
  test.ok(text:find('lm.tune matmul 30x30x30 float32, backend cpu (CPU measured', 1, true), text)
  test.ok(text:find('order%s+tile_m%s+tile_n%s+tile_k%s+time_ms'), text)
  test.ok(text:find('  1*', 1, true), text)
  test.ok(text:find('(default)', 1, true), text)
  test.ok(text:find('searched %d+ candidates'), text)
end)

test.case('bad input: clear messages naming lm.tune and the value', function()
  local a = lm.ones(4, 4)
  test.raises(function() lm.tune('conv3d', a, a) end, "lm.tune: unknown op 'conv3d' (expected 'matmul' or 'conv2d')")
  test.raises(function() lm.tune(nil, a, a) end, 'lm.tune: unknown op nil')
  test.raises(function() lm.tune('matmul', 3, a) end, 'lm.tune: a (argument 2) must be a tensor, got number')
  test.raises(function() lm.tune('matmul', a, lm.ones(4, 4, { dtype = 'int32' })) end,
    'lm.tune: b (argument 3) has dtype int32; the kernels take float32 or float64')
  test.raises(function() lm.tune('matmul', lm.ones(2, 2, 2), a) end, 'lm.tune: a (argument 2) must be 2-D, got shape [2, 2, 2]')
  test.raises(function() lm.tune('matmul', a, lm.ones(3, 4)) end, 'do not chain')
  test.raises(function() lm.tune('matmul', a, a:double()) end, 'a is float32 and b float64')
  test.raises(function() lm.tune('conv2d', a, lm.ones(5, 3)) end, 'lm.tune: the mask [5, 3] is larger than the image [4, 4]')
  test.raises(function() lm.tune('conv2d', a, lm.ones(2, 2), { backend = 'emu' }) end, 'need odd mask sides')
  test.raises(function() lm.tune('matmul', a, a, { repeats = 0 }) end, 'lm.tune: repeats = 0: must be an integer between 1 and 100')
  test.raises(function() lm.tune('matmul', a, a, { repeats = 101 }) end, 'repeats = 101')
  test.raises(function() lm.tune('matmul', a, a, { repeats = 2.5 }) end, 'repeats = 2.5')
  test.raises(function() lm.tune('matmul', a, a, { budget_s = 0 }) end, 'lm.tune: budget_s = 0: must be a number')
  test.raises(function() lm.tune('matmul', a, a, { budget_s = -1 }) end, 'budget_s = -1')
  test.raises(function() lm.tune('matmul', a, a, { budget_s = 'x' }) end, 'budget_s = x')
  test.raises(function() lm.tune('matmul', a, a, { backend = 'cuda' }) end,
    "lm.tune: backend = cuda: must be 'cpu' (measured) or 'emu' (modelled cycles)")
  test.raises(function() lm.tune('matmul', a, a, { bogus = 1 }) end, "lm.tune: unknown option 'bogus' (lm.tune takes backend")
  test.raises(function() lm.tune('matmul', a, a, { cache = 3 }) end, 'cache = 3: must be a file path or false')
  test.raises(function() lm.tune('matmul', a, a, { search = 'random' }) end, "search = random: must be 'staged' or 'grid'")
  test.raises(function() lm.tune('matmul', a, a, { tiles = { 0 } }) end, 'tiles[1] = 0: must be an integer between 1 and 4096')
  test.raises(function() lm.tune('matmul', a, a, 'fast') end, 'lm.tune: the options must be a table, got string')
  test.raises(function() lm.tune('matmul', lm.ones(200, 200), lm.ones(200, 200), { backend = 'emu' }) end,
    "lm.tune: backend 'emu' emulates every thread: 200x200x200")
  local closed = lm.ones(2, 2)
  closed:close()
  test.raises(function() lm.tune('matmul', closed, a) end, 'lm.tune: a (argument 2) is closed')
end)
