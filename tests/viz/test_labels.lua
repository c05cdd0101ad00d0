--[[
test_labels.lua — the scenes' labels in English and in Chinese (issue 28), offscreen at 1280 x 720:
every scene of viz.scenes(), each variant at its first, middle and last step, with the key help (?)
and the hover box of a few cells, drawn in both languages; from viz.layout('text') (each text's box:
its drawn columns, first to last non-blank, one line tall; the region it was drawn in; its layer):
  - no text leaves the window, nor the region it was drawn in (the scene's area, the title bar, the
    counters panel, the key line, an overlay's box): nothing is clipped;
  - no two texts of one layer overlap (a box over another by more than a pixel each way: glyphs are
    placed on whole pixels); a later layer (the hover box, the key help) covers what is under it;
  - in Chinese the title, the step line and the key line are Chinese; in English nothing is.
A scene shown in one language follows a switch at its next frame; without a CJK font the labels
stay English and the program says so once. Read next: scene_check.lua, src/viz/text.c.
]]
local test = require 'lumen.test'

local W, H = 1280, 720
local exe = lm.sys.executable()
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function cjk(s) return s:find('[\228-\233][\128-\191][\128-\191]') ~= nil end

-- GPU-Puzzles' pooling through shared memory (the threads scene draws a student's launch)
local function pool(t, out, a, size)
  local cache = t.shared.cache
  local i = t.threadIdx.x
  if i < size then cache[i] = a[i] end
  t:sync()
  if i < size then
    local acc = cache[i]
    if i >= 1 then acc = acc + cache[i - 1] end
    if i >= 2 then acc = acc + cache[i - 2] end
    out[i] = acc
  end
end

-- kernels.bang: BLOCK kernels and a UNION2 one in two queues on 2 cards x 2 chips x 2 clusters
local function bang_run()
  local dev = kernels.bang.device { cards = 2, chips = 2, clusters = 2 }
  local q1, q2 = dev:queue(), dev:queue()
  local function w(k, c) local a = k:nram('float32', 64 * c * (k.taskId % 3 + 1)); k:__bang_add(a, a, a, 64 * c) end
  dev:launch(w, { name = 'block_kernel', dim = 40, type = 'BLOCK', queue = q1, args = { 50 } })
  dev:launch(w, { name = 'union_kernel', dim = 16, type = 'UNION2', queue = q2, args = { 30 } })
  dev:launch(w, { name = 'block_kernel', dim = 10, type = 'BLOCK', queue = q1, args = { 20 } })
  dev:sync()
  return dev:info()
end

-- How each scene is opened: its defaults, and the larger pictures the lessons show. A scene added
-- to viz.scenes() needs a line here (the first case checks).
local size = { width = W, height = H }
local function with(t)
  local o = { width = W, height = H }
  for k, v in pairs(t) do o[k] = v end
  return o
end
local openers = {
  scan = {
    { 'defaults', function() viz.scene('scan', size) end },
    { 'hierarchical', function() viz.scene('scan', with { n = 64, block = 16 }) end },
    { '1024 elements', function()
      viz.show(select(2, kernels.scan(lm.arange(1, 1025):float(), { backend = 'emu' })), size) end },
  },
  reduce = {
    { 'defaults', function() viz.scene('reduce', size) end },
    { 'four blocks', function() viz.scene('reduce', with { n = 256, block = 64, block_shown = 1 }) end },
  },
  histogram = {
    { 'defaults', function() viz.scene('histogram', size) end },
    { 'text', function() viz.scene('histogram', with { input = 'text', text = 'programming massively parallel processors' }) end },
  },
  divergence = {
    { 'defaults', function() viz.scene('divergence', size) end },
    { '32 warps', function() viz.scene('divergence', with { warps = 32 }) end },
  },
  conv = { { 'defaults', function() viz.scene('conv', size) end } },
  matmul = { { 'defaults', function() viz.scene('matmul', size) end } },
  spmv = { { 'defaults', function() viz.scene('spmv', size) end } },
  timeline = { { 'defaults', function() viz.scene('timeline', size) end } },
  curves = {
    { 'two charts', function()
      viz.clear()
      for i = 1, 60 do
        viz.plot('train/loss', i, 2 / i)
        viz.plot('test/loss', i, 2.2 / i)
        viz.plot('train/accuracy', i, 1 - 1 / i)
      end
      viz.scene('curves', size)
    end },
  },
  graph = {
    { 'defaults', function() viz.scene('graph', size) end },
    { 'mlp', function() viz.scene('graph', with { expr = 'mlp' }) end },
    { 'compiled (lm.graph)', function() viz.scene('graph', with { expr = 'compiled' }) end },
  },
  tensor = {
    { 'defaults', function() viz.scene('tensor', size) end },
    { 'expand', function() viz.scene('tensor', with { view = 'expand' }) end },
  },
  model = {
    { 'a CNN', function()
      local m = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 26 * 26, 10))
      viz.show(m, size)
    end },
  },
  quant = {
    { 'defaults', function() viz.scene('quant', size) end },
    { 'a 256 x 1024 W, int8 asymmetric', function()
      viz.scene('quant', with { rows = 256, cols = 1024, tokens = 64, bits = 8, symmetric = false, group_size = 128 })
    end },
  },
  attention = {
    { 'defaults', function() viz.scene('attention', size) end },
    { '4 layers x 8 heads over 64 tokens', function() viz.scene('attention', with { layers = 4, heads = 8, tokens = 64 }) end },
  },
  rnn = {
    { 'defaults', function() viz.scene('rnn', size) end },
    { '200 steps, relu, gain 3', function() viz.scene('rnn', with { length = 200, nonlinearity = 'relu', gain = 3 }) end },
  },
  detection = {
    { 'defaults', function() viz.scene('detection', size) end },
    { '16 images of 64 x 64, 12 boxes each, long class names', function()
      lm.manual_seed(2)
      local truth, pred = {}, {}
      for i = 1, 16 do
        local xy = lm.rand(12, 2) * 40
        local b = lm.cat({ xy, xy + lm.rand(12, 2) * 20 + 2 }, 2)
        truth[i] = { boxes = b:narrow(1, 1, 4), classes = { 1, 2, 3, 1 } }
        pred[i] = { boxes = b, scores = lm.rand(12), classes = { 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3 } }
      end
      viz.show('detection', { images = lm.rand(16, 64, 64), truth = truth, pred = pred,
        classes = { 'ankle boot', 'trouser', 'pullover' }, source = 'random boxes (test)' }, size)
    end },
  },
  features = {
    { 'defaults', function() viz.scene('features', size) end },
    { 'a CNN on a 28 x 28 image, ten long class names', function()
      lm.manual_seed(4)
      local m = nn.Sequential(nn.Conv2d(1, 16, 5, { padding = 2 }), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3),
        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 6 * 6, 10))
      local o = { input = lm.rand(1, 28, 28), classes = { 'T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal',
        'Shirt', 'Sneaker', 'Bag', 'Ankle boot' } }
      for k, v in pairs(size) do o[k] = v end
      viz.show(m, o)
    end },
  },
  allreduce = {
    { 'defaults', function() viz.scene('allreduce', size) end },
    { '8 ranks, 64 MB', function() viz.scene('allreduce', with { ranks = 8, bytes = 64 * 2 ^ 20 }) end },
  },
  pipeline = {
    { 'defaults', function() viz.scene('pipeline', size) end },
    { '8 stages, 32 micro-batches, 1F1B', function() viz.scene('pipeline', with { stages = 8, micro = 32, schedule = '1f1b' }) end },
  },
  ddp = {
    { 'defaults', function() viz.scene('ddp', size) end },
  },
  gan2d = {
    { 'defaults', function() viz.scene('gan2d', size) end },
  },
  diffusion = {
    { 'defaults', function() viz.scene('diffusion', size) end },
  },
  samples = {
    { 'defaults', function() viz.scene('samples', size) end },
  },
  queues = {
    { 'defaults', function() viz.scene('queues', size) end },
    { 'BLOCK and UNION2 kernels in two queues on 2 cards x 2 chips', function() viz.show('queues', bang_run(), size) end },
  },
  mlu = {
    { 'defaults', function() viz.scene('mlu', size) end },
    { '2 cards x 2 chips x 2 clusters', function() viz.show('mlu', bang_run(), size) end },
  },
  pingpong = {
    { 'defaults', function() viz.scene('pingpong', size) end },
  },
  systolic = {
    { 'defaults', function() viz.scene('systolic', size) end },
    { 'a 32 x 32 WS array on a convolution', function()
      local dlp = require 'lumen.dlp'
      viz.show('systolic', dlp.array { dataflow = 'ws' }, dlp.conv { h = 14, w = 14, fh = 3, fw = 3, c = 8, k = 48, name = 'conv3x3' }, size)
    end },
    { 'a 7 x 13 IS array, one fold of a long GEMM', function()
      local dlp = require 'lumen.dlp'
      viz.show('systolic', dlp.array { rows = 7, cols = 13, dataflow = 'is' }, dlp.gemm { m = 300, n = 900, k = 250, name = 'a long gemm' },
        with { fold = 5 })
    end },
  },
  dma = {
    { 'defaults', function() viz.scene('dma', size) end },
    { 'three runs, CALC mode among them', function()
      local dlp = require 'lumen.dlp'
      local l = dlp.conv { h = 32, w = 32, fh = 3, fw = 3, c = 8, k = 32, name = 'conv' }
      viz.show('dma', { dlp.array { dataflow = 'os' }:run(l, { events = 4096 }), dlp.array { dataflow = 'is', bandwidth = 2 }:run(l, { events = 4096 }),
        dlp.array { dataflow = 'ws', mode = 'calc' }:run(l, { events = 4096 }) }, size)
    end },
  },
  energy = {
    { 'defaults', function() viz.scene('energy', size) end },
    { 'six runs', function()
      local dlp = require 'lumen.dlp'
      local l = dlp.conv { h = 12, w = 12, fh = 3, fw = 3, c = 8, k = 16, name = 'conv' }
      local rs = {}
      for _, df in ipairs { 'os', 'ws', 'is' } do
        for _, n in ipairs { 8, 16 } do rs[#rs + 1] = dlp.array { rows = n, cols = n, dataflow = df }:run(l) end
      end
      viz.show('energy', rs, size)
    end },
  },
  threads = {
    { 'a puzzle', function()
      local a = lm.tensor({ 0, 1, 2, 3, 4, 5 }):float()
      viz.show(kernels.launch(pool, { block = 8, args = { lm.zeros(6), a, 6 }, shared = { cache = 8 } }), size)
    end },
  },
}

local function inside(b, r, slack)
  return b.x >= r.x - slack and b.y >= r.y - slack and b.x + b.w <= r.x + r.w + slack and
      b.y + b.h <= r.y + r.h + slack
end

local function overlap(a, b)
  local w = math.min(a.x + a.w, b.x + b.w) - math.max(a.x, b.x)
  local h = math.min(a.y + a.h, b.y + b.h) - math.max(a.y, b.y)
  return w > 1 and h > 1
end

local function box(t) return string.format('%q at (%g, %g) %gx%g', t.text, t.x, t.y, t.w, t.h) end

--- What is wrong with the text of the frame shown (a list of sentences; empty when nothing).
local function problems(where)
  local out = {}
  local texts = viz.layout('text')
  local win = { x = 0, y = 0, w = W, h = H }
  for i, t in ipairs(texts) do
    if not inside(t, win, 0) then
      out[#out + 1] = where .. ': ' .. box(t) .. ' leaves the window'
    elseif not inside(t, t.clip, 0.5) then
      out[#out + 1] = string.format('%s: %s is clipped by its region (%g, %g) %gx%g', where, box(t), t.clip.x,
        t.clip.y, t.clip.w, t.clip.h)
    end
    for j = i + 1, #texts do
      local u = texts[j]
      if t.layer == u.layer and overlap(t, u) then
        out[#out + 1] = where .. ': ' .. box(t) .. ' overlaps ' .. box(u)
      end
    end
  end
  return out, texts
end

--- Checks the frames of the scene shown: each variant at its first, middle and last step; the
--- hover box of a few cells; the key help. Appends to bad.
local function check_scene(label, lang, bad)
  local function add(list) for _, p in ipairs(list) do bad[#bad + 1] = p end end
  local st = viz.state()
  for v = 1, st.variants do
    if v > 1 then viz.variant() end
    st = viz.state()
    local seen = {}
    for _, step in ipairs({ 0, st.steps // 2, st.steps - 1 }) do
      if not seen[step] then
        seen[step] = true
        viz.seek(step)
        local where = string.format('%s %s (%s, step %d)', label, lang, st.variant or '', step)
        local p, texts = problems(where)
        add(p)
        local s = viz.state()
        if lang == 'zh' then
          if not cjk(s.title) then bad[#bad + 1] = where .. ': the title is not Chinese: ' .. s.title end
          if not cjk(s.step_label) then bad[#bad + 1] = where .. ': the step line is not Chinese: ' .. s.step_label end
        else
          for _, t in ipairs(texts) do
            -- the attention scene's tokens are the prompt's (the demonstration's is a Tang poem line)
            local token = s.scene == 'attention' and (t.text:find('^%d* ?[\xE3-\xEF][\x80-\xBF][\x80-\xBF]$') or
              t.text:find("'[\xE3-\xEF][\x80-\xBF][\x80-\xBF]'"))
            if cjk(t.text) and not token then bad[#bad + 1] = where .. ': Chinese in English: ' .. t.text end
          end
        end
      end
    end
  end
  -- the hover box over the first, a middle and the last cell (the pointer over them)
  local cells = viz.layout()
  for _, i in ipairs({ 1, (#cells + 1) // 2, #cells }) do
    local c = cells[i]
    if c then
      viz.pointer(c.x + c.w / 2, c.y + c.h / 2)
      add(problems(string.format('%s %s (hover over a %s)', label, lang, c.kind)))
    end
  end
  viz.pointer(-1, -1)
  viz.key('?')
  add(problems(label .. ' ' .. lang .. ' (the key help)'))
  viz.key('?')
end

test.case('every scene is opened by this test', function()
  for _, s in ipairs(viz.scenes()) do test.ok(openers[s.name], 'no opener for the scene ' .. s.name) end
end)

for _, lang in ipairs({ 'en', 'zh' }) do
  test.case('labels in ' .. lang .. ': nothing clipped, nothing overlaps, at 1280 x 720', function()
    lm.sys.lang(lang)
    local bad = {}
    for _, s in ipairs(viz.scenes()) do
      for _, o in ipairs(openers[s.name] or {}) do
        o[2]()
        local st = viz.state()
        test.eq({ st.width, st.height }, { W, H })
        check_scene(s.name .. ' ' .. o[1], lang, bad)
      end
    end
    lm.sys.lang(false)
    -- one line per problem (the first frame it was seen in, and in how many)
    local order, count = {}, {}
    for _, p in ipairs(bad) do
      local what = p:gsub('^[^:]*: ', '')
      if not count[what] then
        order[#order + 1] = { what, p }
        count[what] = 0
      end
      count[what] = count[what] + 1
    end
    local shown = {}
    for i = 1, math.min(#order, 40) do
      shown[i] = order[i][2] .. (count[order[i][1]] > 1 and ' (x' .. count[order[i][1]] .. ')' or '')
    end
    test.eq(#bad, 0, #order .. ' problems:\n' .. table.concat(shown, '\n'))
  end)
end

test.case('a scene follows a switch of language at its next frame', function()
  lm.sys.lang('en')
  viz.scene('scan', size)
  local en = viz.state().title
  test.ok(not cjk(en), en)
  lm.sys.lang('zh')
  local zh = viz.state()
  test.ok(cjk(zh.title) and cjk(zh.step_label), zh.title)
  local hint
  for _, t in ipairs(viz.layout('text')) do
    if t.y > H - 30 then hint = t.text end
  end
  test.ok(hint and cjk(hint), 'the key line follows: ' .. tostring(hint))
  viz.seek(1)
  local c = viz.layout()[1]
  test.ok(cjk(viz.pick(c.x + 1, c.y + 1).text), 'the hover text follows')
  lm.sys.lang('en')
  test.eq(viz.state().title, en)
  lm.sys.lang(false)
end)

test.case('Chinese glyphs render, and a new one is drawn the frame it is first needed', function()
  lm.sys.lang('zh')
  viz.scene('scan', size)
  local path = os.tmpname()
  viz.snapshot(path)
  -- the title's first Chinese character has ink: dark pixels in its box
  local t
  for _, x in ipairs(viz.layout('text')) do
    if x.font == 'title' then t = x end
  end
  local dark = 0
  for y = math.floor(t.y), math.floor(t.y + t.h) - 1 do
    for x = math.floor(t.x), math.floor(t.x + t.w) - 1, 2 do
      local r = viz.pixel(x, y)
      if r < 128 then dark = dark + 1 end
    end
  end
  test.ok(dark > 50, 'the Chinese title has ink: ' .. dark)
  os.remove(path)
  lm.sys.lang(false)
end)

test.case('without a CJK font the labels stay English, said once', function()
  local p = io.popen('SDL_VIDEODRIVER=offscreen LUMEN_LANG=zh LUMEN_CJK_FONT=/nonexistent.ttc ' .. q(exe) ..
    [[ -e "viz.scene('scan'); print(viz.state().title); viz.snapshot(os.tmpname()); viz.scene('reduce'); print('ok')" 2>&1]])
  local out = p:read('a')
  p:close()
  test.ok(out:find('scan: Kogge%-Stone'), out)
  test.ok(out:find('ok\n'), out)
  local _, n = out:gsub("LUMEN_CJK_FONT%) cannot be read: the scenes' labels stay in English", '')
  test.eq(n, 1, out)
end)
