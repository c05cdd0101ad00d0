--[[
test_quant.lua — the quant scene (issue 34), offscreen: its numbers against a reference written
here with plain tensor ops (symmetric and asymmetric codes, per tensor, per row, per group of
columns, round half to even, the float32 epsilon for a zero range; SmoothQuant's s_j and the
errors of X, W and X W^T before and after), the grid drawn over the histogram, the error of an
element under the pointer, every step and variant rendered, the checks every scene passes
(scene_check.lua), and bad input named by the scene. Read next: src/viz/scenes/quant.c.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

local EPS = 2 ^ -23 -- float32's epsilon: the smallest scale

-- ---------------------------------------------------------------- the reference

local function code_range(bits, sym)
  if sym then return -(2 ^ (bits - 1) - 1), 2 ^ (bits - 1) - 1 end
  return 0, 2 ^ bits - 1
end

--- w (rows x cols, float32) fake-quantized at a granularity: the dequantized tensor (w's shape),
--- and the scales and zero points, one row per granule (G x 1).
local function ref_quant(w, bits, sym, gran, gsize)
  local rows, cols = w:shape()[1], w:shape()[2]
  local g = gran == 'tensor' and w:reshape(1, rows * cols) or gran == 'channel' and w or
      w:reshape(rows * cols // gsize, gsize)
  local qmin, qmax = code_range(bits, sym)
  local s, z
  if sym then
    s = g:abs():max(2, true) / math.tointeger(qmax)
    s = s:clamp(EPS, math.huge)
    z = lm.zeros(s:shape()):float()
  else
    local lo, hi = (g:min(2, true)):clamp(-math.huge, 0), (g:max(2, true)):clamp(0, math.huge)
    s = ((hi - lo) / math.tointeger(qmax - qmin)):clamp(EPS, math.huge)
    z = ((-lo) / s):round():clamp(qmin, qmax)
  end
  local q = ((g / s):round() + z):clamp(qmin, qmax)
  return ((q - z) * s):reshape(rows, cols), s, z
end

local function mse(a, b) return ((a - b):double() ^ 2):mean():item() end

local function rel(a, b, tol, msg)
  test.ok(math.abs(a - b) <= tol * math.abs(b), string.format('%s: %.17g against %.17g', msg, a, b))
end

--- SmoothQuant as its authors' smooth_ln_fcs, then X int8 per tensor and W at (bits, sym, gran).
local function ref_smooth(w, x, alpha, bits, sym, gran, gsize)
  local xmax, wmax = x:abs():max(1), w:abs():max(1)
  local sj = (xmax:pow(alpha) / wmax:clamp(1e-5, math.huge):pow(1 - alpha)):clamp(1e-5, math.huge)
  local xs, ws = x / sj, w * sj
  local xq = ref_quant(x:reshape(1, -1), 8, true, 'tensor'):reshape(x:shape())
  local xsq = ref_quant(xs:reshape(1, -1), 8, true, 'tensor'):reshape(x:shape())
  local wq = ref_quant(w, bits, sym, gran, gsize)
  local wsq = ref_quant(ws, bits, sym, gran, gsize)
  local y = x:double():matmul(w:double():t())
  local function ymse(a, b) return ((y - a:double():matmul(b:double():t())) ^ 2):mean():item() end
  return {
    x = { mse(x, xq), mse(x, xsq * sj) },
    w = { mse(w, wq), mse(w, wsq / sj) },
    y = { ymse(xq, wq), ymse(xsq, wsq) },
    xmax_after = xs:abs():max(1),
  }
end

-- W: rows x cols of N(0, 1), input channels 3 and 10 times 20; X: tokens x cols, two channels of the second half times 20
local function inputs(rows, cols, tokens)
  lm.manual_seed(34)
  local w, x = lm.randn(rows, cols), lm.randn(tokens, cols)
  local wm, xm = lm.ones(cols), lm.ones(cols)
  wm[{3}], wm[{10}], xm[{cols // 2 + 4}], xm[{cols}] = 20, 20, 20, 20
  return w * wm, x * xm
end

local function value_of(where)
  local c = cells(where)
  test.eq(#c, 1, 'one cell ' .. tostring(where.kind) .. ' ' .. tostring(where.group))
  return c[1].value
end

-- ---------------------------------------------------------------- the numbers

test.case('quant: the MSE of each granularity and of SmoothQuant equal the reference, symmetric and not', function()
  local w, x = inputs(8, 32, 16)
  for _, o in ipairs({
    { bits = 4, symmetric = true, group_size = 8, granularity = 'channel', alpha = 0.5 },
    { bits = 3, symmetric = false, group_size = 16, granularity = 'group', alpha = 0.75 },
    { bits = 8, symmetric = true, group_size = 4, granularity = 'tensor', alpha = 0.5 },
    { bits = 2, symmetric = false, group_size = 32, granularity = 'channel', alpha = 0.25 },
  }) do
    local name = string.format('int%d %s groups of %d', o.bits, o.symmetric and 'symmetric' or 'asymmetric', o.group_size)
    viz.show('quant', w, { bits = o.bits, symmetric = o.symmetric, group_size = o.group_size,
      granularity = o.granularity, alpha = o.alpha, activations = x })
    local st = viz.state()
    test.eq(st.scene, 'quant', name)
    test.eq(st.steps, 7, name)
    test.eq(st.variant, o.granularity, name .. ': the granularity option is the variant')
    viz.seek(4)
    for _, g in ipairs({ 'tensor', 'channel', 'group' }) do
      rel(value_of { kind = 'mse', group = g }, mse(w, ref_quant(w, o.bits, o.symmetric, g, o.group_size)), 1e-9,
        name .. ' ' .. g)
      -- and what lm.quant, the library the lesson teaches, computes (the same rules: issue 34)
      local lib = lm.quant.quantize(w, { bits = o.bits, symmetric = o.symmetric, granularity = g,
        group_size = o.group_size }):dequantize()
      rel(value_of { kind = 'mse', group = g }, mse(w, lib), 1e-9, name .. ' ' .. g .. ' against lm.quant')
    end
    viz.seek(6)
    local r = ref_smooth(w, x, o.alpha, o.bits, o.symmetric, o.granularity, o.group_size)
    for _, k in ipairs({ 'x', 'w', 'y' }) do
      rel(value_of { kind = 'sq', group = k, state = 'before' }, r[k][1], 1e-9, name .. ' ' .. k .. ' before')
      rel(value_of { kind = 'sq', group = k, state = 'after' }, r[k][2], 1e-9, name .. ' ' .. k .. ' after')
    end
    -- max|X_j / s_j| per input channel: the bars after
    local bars = cells { kind = 'bar', group = 'x', state = 'after' }
    test.eq(#bars, 32)
    for _, b in ipairs(bars) do test.eq(b.value, r.xmax_after[{b.index + 1}]:item(), name .. ' bar ' .. b.index) end
  end
  -- the variant is the granularity SmoothQuant quantizes W with
  viz.show('quant', w, { activations = x, group_size = 8 })
  viz.variant('group')
  viz.seek(6)
  local r = ref_smooth(w, x, 0.5, 4, true, 'group', 8)
  rel(value_of { kind = 'sq', group = 'w', state = 'after' }, r.w[2], 1e-9, 'Tab: per group')
  rel(value_of { kind = 'sq', group = 'y', state = 'before' }, r.y[1], 1e-9, 'Tab: per group, Y')
end)

test.case('quant: the grid over the histogram is the row\'s and the group\'s own, the error under the pointer exact', function()
  local w, x = inputs(8, 32, 16)
  viz.show('quant', w, { activations = x, row = 3, group = 2, group_size = 8, bits = 4 })
  local function levels(step, gran, qmin) -- code -> level (a cell's index is its place, from qmin)
    viz.seek(step)
    local out = {}
    for _, c in ipairs(cells { kind = 'level', group = gran }) do out[c.index + (qmin or -7)] = c.value end
    return out
  end
  local cases = { { 1, 'tensor', 1 }, { 2, 'channel', 3 }, { 3, 'group', (3 - 1) * 4 + 2 } }
  for _, c in ipairs(cases) do
    local step, gran, k = c[1], c[2], c[3]
    local _, s = ref_quant(w, 4, true, gran, 8)
    local got, n = levels(step, gran), 0
    for q = -7, 7 do
      local want = (lm.tensor(q):float() * s[{k, 1}]):item() -- s (q - z), z = 0, in float32
      test.eq(got[q], want, gran .. ' level ' .. q)
      n = n + 1
    end
    test.eq(n, 15)
    test.ok(viz.state().step_label:find(gran == 'group' and 'group 2 of row 3' or gran == 'channel' and 'row 3' or 'all of W',
      1, true), viz.state().step_label)
  end
  -- asymmetric: 2^b levels, 0 among them
  viz.show('quant', w, { activations = x, row = 3, group_size = 8, bits = 3, symmetric = false })
  local lv = levels(2, 'channel', 0)
  local _, s, z = ref_quant(w, 3, false, 'channel', 8)
  for q = 0, 7 do test.eq(lv[q], (lm.tensor(q):float() - z[{3, 1}]):mul(s[{3, 1}]):item(), 'asymmetric level ' .. q) end
  test.eq(lv[math.tointeger(z[{3, 1}]:item())], 0.0, 'the zero point is the level 0')
  -- the error of element {row, col} under the pointer, per group
  viz.show('quant', w, { activations = x, group_size = 8 })
  viz.seek(3)
  local map = cells { kind = 'error', group = 'group' }[1]
  local deq = ref_quant(w, 4, true, 'group', 8)
  local err = (w - deq):abs()
  for _, rc in ipairs({ { 1, 1 }, { 3, 10 }, { 8, 32 }, { 5, 17 } }) do
    local r, c = rc[1], rc[2]
    local p = viz.pick(map.x + (c - 0.5) * map.w / 32, map.y + (r - 0.5) * map.h / 8)
    test.eq({ p.kind, p.row, p.col }, { 'error', r - 1, c - 1 })
    test.eq(p.value, err[{r, c}]:item(), 'element ' .. r .. ', ' .. c)
    test.ok(p.text:find(string.format('W[{%d, %d}]', r, c), 1, true) and p.text:find('per group', 1, true), p.text)
  end
end)

test.case('quant: a zero range divides by float32\'s epsilon, not by 0', function()
  local w = lm.tensor({ { 0, 0, 0, 0, 0, 0, 0, 0 }, { 1, -2, 3, 0.5, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0, 0, 0, 0 },
    { 0, 0, 0, 0, 0, 0, 0, 0 } }):float()
  viz.show('quant', w, { group_size = 4, bits = 4 })
  viz.seek(4)
  for _, g in ipairs({ 'tensor', 'channel', 'group' }) do
    local want = mse(w, ref_quant(w, 4, true, g, 4))
    test.ok(value_of { kind = 'mse', group = g } == value_of { kind = 'mse', group = g }, g .. ': not NaN')
    rel(value_of { kind = 'mse', group = g }, want, 1e-9, 'zeros ' .. g)
  end
  viz.show('quant', lm.zeros(2, 4), { group_size = 2, symmetric = false })
  viz.seek(4)
  test.eq(value_of { kind = 'mse', group = 'group' }, 0.0)
  viz.seek(1)
  test.eq(cells { kind = 'level', index = 1 }[1].value, EPS, 'level 1 of an all-zero tensor is eps')
end)

test.case('quant: a tie rounds to the even code, as torch.round', function()
  -- max|w| = 7 at int4: s = 1, so w / s = 0.5, 1.5, 2.5, ... are ties
  local w = lm.tensor({ { 7, 0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -7 } }):float()
  viz.show('quant', w, { group_size = 8, bits = 4 })
  viz.seek(1)
  local map = cells { kind = 'error', group = 'tensor' }[1]
  local want = { 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0 } -- 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, 3.5 -> 4: |w - w'| = 0.5
  for c = 1, 8 do
    local p = viz.pick(map.x + (c - 0.5) * map.w / 8, map.y + map.h / 2)
    test.eq(p.value, want[c], 'element ' .. c)
  end
  local p = viz.pick(map.x + 3.5 * map.w / 8, map.y + map.h / 2)
  test.ok(p.text:find('= 2, w\' = s (q - z) = 2', 1, true), p.text) -- 2.5 -> 2, not 3
  rel(value_of { kind = 'mse', group = 'tensor' }, mse(w, ref_quant(w, 4, true, 'tensor')), 1e-12, 'ties')
  test.eq(value_of { kind = 'mse', group = 'tensor' }, 6 * 0.25 / 8)
end)

-- ---------------------------------------------------------------- from options

test.case('quant: from options, every step and variant rendered; the checks every scene passes', function()
  viz.scene('quant')
  local st = viz.state()
  test.eq(st.scene, 'quant')
  test.eq({ st.steps, st.variants, st.variant }, { 7, 3, 'channel' })
  test.ok(st.title:find('W 16 x 64 (a demonstration)', 1, true) and st.title:find('int4 symmetric', 1, true), st.title)
  local seen = {}
  for v = 1, 3 do
    if v > 1 then viz.variant() end
    for s = 0, 6 do
      viz.seek(s)
      local png = check.snap('quant-' .. v .. '-' .. s)
      test.ok(#png > 1000 and not seen[png], 'step ' .. s .. ' of variant ' .. v .. ' is a picture of its own')
      seen[png] = true
    end
  end
  viz.scene('quant', { variant = 'channel' })
  viz.seek(4)
  local t, c, g = value_of { kind = 'mse', group = 'tensor' }, value_of { kind = 'mse', group = 'channel' },
      value_of { kind = 'mse', group = 'group' }
  test.ok(t > c and c > g, string.format('finer granules, smaller errors: %g > %g > %g', t, c, g))
  viz.seek(5)
  test.ok(#cells { kind = 'bar', group = 'x', state = 'outlier' } == 3, 'three outlier channels of X')
  test.ok(#cells { kind = 'bar', group = 'w', state = 'outlier' } == 3, 'and of W')
  -- bits and symmetric: the number of levels
  viz.scene('quant', { bits = 3, step = 1 })
  test.eq(#cells { kind = 'level', group = 'tensor' }, 7)
  viz.scene('quant', { bits = 3, symmetric = false, step = 1 })
  test.eq(#cells { kind = 'level', group = 'tensor' }, 8)
  viz.scene('quant', { bits = 8, step = 1 })
  test.ok(#cells { kind = 'level', group = 'tensor' } < 255, 'int8: the lines thinned to what the pixels hold')
  test.ok(#cells { kind = 'level', group = 'tensor' } > 20)
  local function show() viz.scene('quant') end
  check.check('quant', show, 2, { kind = 'mse', state = 'active' }, { kind = 'mse', state = 'idle' })
end)

test.case('quant: viz.show takes W first or names the scene; --snapshot draws each step', function()
  local w, x = inputs(4, 16, 8)
  viz.show(w, { scene = 'quant', activations = x, group_size = 4 })
  test.eq(viz.state().scene, 'quant')
  test.ok(viz.state().title:find('W 4 x 16, ', 1, true), viz.state().title)
  viz.show('quant', w) -- X: the demonstration's, on W's columns
  test.ok(viz.state().title:find('X 32 x 16 (a demonstration)', 1, true), viz.state().title)
  viz.show('quant', w:double(), { group_size = 16 }) -- read as float32
  test.eq(viz.state().scene, 'quant')
  viz.show('tensor', w)
  test.eq(viz.state().scene, 'tensor')
  local exe, tmp = lm.sys.executable(), check.tmp
  for s = 0, 6 do
    local out = string.format('%s/snap-%d.png', tmp, s)
    local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot quant '%s' --step %d --opts bits=4,group_size=16 2>&1",
      exe, out, s))
    test.ok(ok and #check.read(out) > 1000, '--snapshot quant --step ' .. s)
  end
end)

-- ---------------------------------------------------------------- bad input

test.case('quant: bad input is named by the scene', function()
  local w, x = inputs(4, 16, 8)
  test.raises(function() viz.show('quant', lm.ones(16)) end,
    "viz.show: the quant scene takes W as a 2-D matrix (output channels x input channels); this one has 1 dim, shape [16]")
  test.raises(function() viz.show('quant', lm.ones(2, 4, 16)) end, 'the quant scene takes W as a 2-D matrix')
  test.raises(function() viz.show('quant', w, { bits = 9 }) end, "option bits of scene 'quant' must lie in 2..8, got 9")
  test.raises(function() viz.show('quant', w, { bits = 1 }) end, "option bits of scene 'quant' must lie in 2..8, got 1")
  test.raises(function() viz.scene('quant', { bits = 12 }) end, "viz.scene: option bits of scene 'quant' must lie in 2..8")
  test.raises(function() viz.show('quant', w, { group_size = 5 }) end,
    "the quant scene's group_size 5 does not divide W's 16 columns (input channels)")
  test.raises(function() viz.scene('quant', { cols = 48, group_size = 20 }) end, "group_size 20 does not divide W's 48 columns")
  local bad = w:clone()
  bad[{2, 3}] = 0 / 0
  test.raises(function() viz.show('quant', bad) end, 'the quant scene cannot quantize W: element {2, 3} is NaN')
  bad[{2, 3}] = math.huge
  test.raises(function() viz.show('quant', bad) end, 'element {2, 3} is infinite')
  local xb = x:clone()
  xb[{1, 1}] = 0 / 0
  test.raises(function() viz.show('quant', w, { activations = xb }) end,
    'the quant scene cannot quantize the activations X: element {1, 1} is NaN')
  test.raises(function() viz.show('quant', w, { activations = lm.ones(8, 15) }) end,
    "the quant scene's activations X have 15 columns; W has 16 input channels")
  test.raises(function() viz.show('quant', w, { activations = lm.ones(8) }) end,
    'the quant scene takes the activations X as a 2-D matrix (tokens x input channels)')
  test.raises(function() viz.show('quant', w, { activations = 3 }) end,
    "option activations of scene 'quant' must be a tensor (tokens x input channels), got")
  test.raises(function() viz.show('quant', lm.ones(4, 16):long()) end, 'the quant scene quantizes float values; W is int64')
  test.raises(function() viz.show('quant', lm.zeros(0, 16)) end, 'the quant scene needs values; W has none')
  test.raises(function() viz.show('quant', w, { row = 5 }) end, "the quant scene's row 5 is past W's 4 rows")
  test.raises(function() viz.show('quant', w, { group = 3, group_size = 8 }) end, "the quant scene's group 3 is past the 2 groups")
  test.raises(function() viz.show('quant', w, { granularity = 'block' }) end,
    "option granularity of scene 'quant' must be one of tensor|channel|group, got 'block'")
  test.raises(function() viz.show('quant', w, { alpha = 2 }) end, "option alpha of scene 'quant' must lie in 0..1")
  test.raises(function() viz.show('quant') end, "viz.show('quant', x [, opts]) draws the tensor x, got no value")
  test.raises(function() viz.show('quant', w, { scene = 'tensor' }) end, "the scene is named twice: 'quant' and scene = 'tensor'")
  test.raises(function() viz.show('scan', w) end, "a tensor is drawn by the scene 'graph' (with a grad_fn), 'tensor' or 'quant'")
  local _, info = kernels.reduce(lm.ones(64), { backend = 'emu' })
  test.raises(function() viz.show(info, { scene = 'quant' }) end, "scene 'quant' is not drawn from kernel results")
end)
