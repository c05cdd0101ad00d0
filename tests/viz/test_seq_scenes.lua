--[[
test_seq_scenes.lua — the attention and rnn scenes (issue 32), offscreen: the weights drawn are
those given (rows sum to 1, masked cells 0), for nn.MultiheadAttention's per-head weights and for
the demonstration; the gradient norms of viz.rnn_gradients against the same norms measured here
another way (one backward through the whole sequence with a zero probe added to each h_t: its
gradient is dL/dh_t), the clipped ones capped; every step rendered and --snapshot; bad input named
by the scene. Read next: src/viz/scenes/attention.c, rnn.c.
]]
local test = require 'lumen.test'
local nn = require 'lumen.nn'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

-- ---------------------------------------------------------------- attention

-- Two layers of nn.MultiheadAttention on a prompt: their per-head weights, (layers, heads, T, T).
local function mha_weights(T, causal)
  lm.manual_seed(3)
  local x = lm.randn(1, T, 16):double()
  local mask = causal and lm.ones(T, T):triu(1):eq(1) or nil
  local ws = {}
  for l = 1, 2 do
    local mha = nn.MultiheadAttention(16, 4, { batch_first = true }):double()
    local y, w = mha(x, x, x, { attn_mask = mask, need_weights = true, average_attn_weights = false })
    ws[l] = w[1]:detach()
    x = y:detach()
  end
  return lm.stack(ws)
end

test.case('attention: the weights drawn are those given; rows sum to 1, masked cells are 0', function()
  local T, toks = 7, { '床', '前', '明', '月', '光', '，', '疑' }
  local w = mha_weights(T, true)
  viz.show('attention', { weights = w, tokens = toks, source = 'nn.MultiheadAttention, test' })
  test.eq(viz.state().scene, 'attention')
  test.eq(viz.state().steps, 1 + 2 * 4)
  test.ok(viz.state().title:find('2 layers x 4 heads over 7 tokens, causal', 1, true), viz.state().title)
  for step = 1, 8 do
    viz.seek(step)
    local l, h = (step - 1) // 4 + 1, (step - 1) % 4 + 1
    local got = cells { kind = 'weight' }
    test.eq(#got, T * T, 'a cell per weight')
    local sums = {}
    for _, c in ipairs(got) do
      local i, j = c.row + 1, c.col + 1
      test.ok(math.abs(c.value - w[{ l, h, i, j }]:item()) < 1e-12, 'the weight drawn is the one given')
      if j > i then
        test.eq(c.state, 'masked')
        test.eq(c.value, 0)
      end
      sums[i] = (sums[i] or 0) + c.value
    end
    for i = 1, T do test.ok(math.abs(sums[i] - 1) < 1e-9, 'row ' .. i .. ' sums to 1') end
    -- the query's bars: the last token's row
    local bars = cells { kind = 'bar' }
    test.eq(#bars, T)
    for _, b in ipairs(bars) do test.ok(math.abs(b.value - w[{ l, h, T, b.index + 1 }]:item()) < 1e-12) end
  end
  -- hover a query token: its top keys
  viz.seek(1)
  local q = cells { kind = 'token', group = 'query', index = 3 }[1]
  local info = viz.pick(q.x + q.w / 2, q.y + q.h / 2)
  test.ok(info and info.text:find("query 4 '月'", 1, true), info and info.text)
  -- a list of (1, heads, T, T) per layer, as nn.MultiheadAttention returns it
  viz.show('attention', { weights = { w[1]:unsqueeze(1), w[2]:unsqueeze(1) }, tokens = toks })
  test.eq(viz.state().steps, 9)
  -- shown again (live), it stays on the step being looked at
  viz.seek(5)
  viz.show('attention', { weights = w, tokens = toks })
  test.eq(viz.state().step, 5)
end)

-- examples/char_gpt.lua --viz=attention: the scene is redrawn while the GPT trains, with the
-- weights the model's attention really uses (weights @ v equals F.scaled_dot_product_attention's
-- output for layer 1) and the step in its label; the LSTM has none to show.
test.case('attention: live from examples/char_gpt.lua --viz=attention', function()
  local root = here .. '../../'
  local path = os.tmpname()
  local f = assert(io.open(path, 'wb'))
  for i = 1, 40 do f:write(i % 2 == 1 and '床前明月光，疑是地上霜。\n' or '举头望明月，低头思故乡。\n') end
  f:close()
  local function run(name, extra)
    local saved = _G.arg
    _G.arg = { [0] = root .. 'examples/' .. name .. '.lua', '--text', path, '--block', '16', '--batch', '4',
      '--iters', '20', '--log-every', '10', '--eval-every', '20', '--eval-iters', '1', '--length', '0', '--quiet',
      '--layers', '2', '--width', '16', table.unpack(extra) }
    local ok, err = pcall(dofile, root .. 'examples/' .. name .. '.lua')
    _G.arg = saved
    if not ok then error(err, 0) end
  end
  local shown = {}
  local real = viz.show
  viz.show = function(what, data, ...) -- every redraw, with the step the label names
    if what == 'attention' then shown[#shown + 1] = data.source end
    return real(what, data, ...)
  end
  local ok, err = pcall(run, 'char_gpt', { '--heads', '2', '--viz=attention' })
  viz.show = real
  test.ok(ok, err)
  test.eq(#shown, 3, 'drawn at step 0, 10 and 20')
  test.ok(shown[3]:find("computed by Lumen (CPU): char_gpt's weights after step 20 of 20", 1, true), shown[3])
  test.eq(viz.state().scene, 'attention')
  test.ok(viz.state().title:find('2 layers x 2 heads over 12 tokens, causal', 1, true), viz.state().title)
  -- the weights are the model's: layer 1's weights times its v give what its attention computes
  local model, ds = _G.model, _G.train_set
  local idx = ds:encode('床前明月光，疑是地上霜。'):view(1, -1)
  local w = lm.no_grad(model.attention_weights, model, idx)
  test.eq(w:shape(), { 2, 2, 12, 12 })
  lm.no_grad(function()
    local b = model.blocks[1]
    local x = model.tok(idx) + model.pos(lm.arange(1, 13):view(1, 12))
    local qkv = b.attn.qkv(b.ln1(x)):view(1, 12, 3, 2, 8)
    local q, k, v = qkv:select(3, 1):transpose(2, 3), qkv:select(3, 2):transpose(2, 3), qkv:select(3, 3):transpose(2, 3)
    local want = lm.nn.functional.scaled_dot_product_attention(q, k, v, { is_causal = true })[1]:double()
    local got = w[1]:matmul(v[1]:double())
    test.ok((got - want):abs():max():item() < 1e-5, 'weights @ v = F.scaled_dot_product_attention')
    test.ok((w:sum(-1) - 1):abs():max():item() < 1e-6, 'rows sum to 1 (float32 softmax)')
    test.eq((w * lm.ones(12, 12):triu(1):double()):abs():max():item(), 0, 'no weight on a later character')
  end)
  test.raises(function() run('char_lstm', { '--viz=attention' }) end, '--viz=attention: this model has no attention to show')
  test.raises(function() run('char_gpt', { '--viz=heatmap' }) end, "--viz shows 'curves' (the default) or 'attention', got 'heatmap'")
  os.remove(path)
end)

test.case('attention: the demonstration: rows sum to 1, the mask, every step, --snapshot', function()
  viz.scene('attention')
  local n = viz.state().steps
  test.eq(n, 9)
  for step = 0, n - 1 do
    viz.seek(step)
    local sums, masked = {}, 0
    for _, c in ipairs(cells { kind = 'weight' }) do
      if c.row then
        local k = c.index // 12 -- index: the weight's place in (layers, heads, T, T), 0-based
        sums[k] = (sums[k] or 0) + c.value
        if c.col > c.row then
          masked = masked + 1
          test.eq(c.value, 0)
        end
      end
    end
    for _, s in pairs(sums) do test.ok(math.abs(s - 1) < 1e-9, 'a row sums to 1') end
    test.ok(masked > 0, 'masked cells at step ' .. step)
    test.ok(check.panel_ink() > 50, 'the panel has text')
  end
  local exe, tmp = lm.sys.executable(), check.tmp
  for _, s in ipairs({ 0, 8 }) do
    local out = string.format('%s/att-%d.png', tmp, s)
    local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot attention '%s' --step %d 2>&1", exe, out, s))
    test.ok(ok and #check.read(out) > 1000, '--snapshot attention --step ' .. s)
  end
end)

test.case('attention: bad input is named by the scene', function()
  local w = mha_weights(5, true)
  local toks = { 'a', 'b', 'c', 'd', 'e' }
  test.raises(function() viz.show('attention', { weights = w, tokens = { 'a', 'b' } }) end,
    'the attention scene has 2 tokens for weights over 5 (shape [2, 4, 5, 5])')
  test.raises(function() viz.show('attention', { weights = lm.ones(2, 3, 4, 5), tokens = toks }) end,
    'the attention scene takes weights of shape (layers, heads, T, T), got [2, 3, 4, 5]')
  test.raises(function() viz.show('attention', { weights = lm.ones(5) }) end, 'the attention scene takes weights of shape')
  local bad = w:clone()
  bad[{ 1, 2, 3, 1 }] = 0 / 0
  test.raises(function() viz.show('attention', { weights = bad, tokens = toks }) end,
    'the attention scene: the weight of query 3, key 1 is')
  test.raises(function() viz.show('attention', { weights = w * 2, tokens = toks }) end,
    'the attention scene: a row of weights sums to 2')
  test.raises(function() viz.show('attention', { weights = mha_weights(5, false), tokens = toks, causal = true }) end,
    "viz.show: the attention scene's weights are not causal: query ")
  test.raises(function() viz.show('attention', w) end, 'the attention scene takes {weights = W, tokens = {...}}, got a tensor')
  test.raises(function() viz.show('attention', { weights = w, tokens = toks }, { query = 9 }) end,
    "the attention scene's query 9 is past the 5 tokens")
end)

-- ---------------------------------------------------------------- rnn

-- ||dL/dh_t|| for t = 1..T measured with one backward: a zero probe z_t (a leaf) added to each h_t.
local function probe_norms(o, lstm)
  local H, T, I = o.hidden, o.length, o.inputs
  lm.manual_seed(o.seed)
  local rnn = nn.RNNCell(I, H):double()
  local cell = nn.LSTMCell(I, H):double()
  lm.no_grad(function() rnn.weight_hh:mul_(o.gain) end)
  local x = lm.randn(T, 1, I):double()
  local m = lstm and cell or rnn
  local h, c = lm.zeros(1, H):double(), lm.zeros(1, H):double()
  local z = {}
  for t = 1, T do
    if lstm then h, c = m(x[t], { h, c }) else h = m(x[t], h) end
    z[t] = lm.zeros(1, H):double():requires_grad_(true)
    h = h + z[t]
  end
  h:sum():backward()
  local out = {}
  for t = 1, T do out[t] = z[t].grad:norm():item() end
  return out
end

test.case('rnn: the norms of viz.rnn_gradients are dL/dh_t measured another way; clipping caps them', function()
  local o = { hidden = 8, length = 20, inputs = 3, gain = 1.5, seed = 7, clip = 0.5 }
  local d = viz.rnn_gradients(o)
  for _, k in ipairs({ 'rnn', 'lstm' }) do
    local ref = probe_norms(o, k == 'lstm')
    for t = 1, o.length do
      test.ok(math.abs(d[k][t]:item() - ref[t]) <= 1e-10 * ref[t] + 1e-300,
        string.format('%s t=%d: %.17g against %.17g', k, t, d[k][t]:item(), ref[t]))
    end
    local cl = d[k .. '_clipped']
    test.ok(math.abs(cl[o.length]:item() - math.min(ref[o.length], o.clip)) < 1e-12, 'the last step clipped')
    for t = 1, o.length do test.ok(cl[t]:item() <= o.clip + 1e-12, 'clipped: at most the threshold') end
  end
  test.ok(d.rnn[1]:item() < d.rnn[o.length]:item(), 'the RNN gradient vanishes going back')
  viz.show('rnn', d, { step = 1 })
  test.eq(viz.state().scene, 'rnn')
  test.eq(viz.state().steps, 3)
  for _, k in ipairs({ 'rnn', 'lstm' }) do
    local bars = cells { kind = 'bar', group = k }
    test.eq(#bars, o.length)
    for _, b in ipairs(bars) do test.ok(math.abs(b.value - d[k][b.index + 1]:item()) <= 1e-15 * b.value, 'the bar drawn') end
  end
  viz.seek(2)
  local clipped = cells { kind = 'bar', group = 'rnn_clipped' }
  test.eq(#clipped, o.length)
  test.ok(#cells { kind = 'bar', group = 'rnn_clipped', state = 'clipped' } > 0, 'some bars clipped')
  local info = viz.pick(clipped[1].x + clipped[1].w / 2, clipped[1].y + clipped[1].h / 2)
  test.ok(info and info.text:find('rnn_clipped, t = 1', 1, true), info and info.text)
end)

test.case('rnn: the demonstration draws every step; --snapshot; the counters are the bars', function()
  viz.scene('rnn')
  test.eq(viz.state().steps, 3)
  for step = 0, 2 do
    viz.seek(step)
    test.eq(#cells { kind = 'cell', group = 'rnn' }, 50)
    test.ok(check.panel_ink() > 50)
  end
  viz.seek(2)
  for _, b in ipairs(cells { kind = 'bar', group = 'lstm_clipped' }) do test.ok(b.value <= 1 + 1e-12) end
  local r = cells { kind = 'bar', group = 'rnn' }
  table.sort(r, function(a, b) return a.index < b.index end)
  test.ok(r[1].value < r[#r].value * 1e-6, 'the RNN: vanishing over 50 steps')
  local l = cells { kind = 'bar', group = 'lstm' }
  table.sort(l, function(a, b) return a.index < b.index end)
  test.ok(l[1].value / l[#l].value > r[1].value / r[#r].value, 'the LSTM keeps more of it')
  local exe, tmp = lm.sys.executable(), check.tmp
  for s = 0, 2 do
    local out = string.format('%s/rnn-%d.png', tmp, s)
    local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot rnn '%s' --step %d 2>&1", exe, out, s))
    test.ok(ok and #check.read(out) > 1000, '--snapshot rnn --step ' .. s)
  end
end)

test.case('rnn: bad input is named by the scene', function()
  test.raises(function() viz.show('rnn', { rnn = lm.ones(5), lstm = lm.ones(4) }) end,
    'the rnn scene: lstm has 4 time steps but rnn has 5')
  test.raises(function() viz.show('rnn', { rnn = { 1, 0 / 0, 3 } }) end, 'the rnn scene: rnn[2] is')
  test.raises(function() viz.show('rnn', { rnn = { 1, -1 } }) end, 'the rnn scene: rnn[2] is -1')
  test.raises(function() viz.show('rnn', {}) end, 'the rnn scene needs rnn or lstm')
  test.raises(function() viz.show('rnn', lm.ones(3)) end, 'the rnn scene takes {rnn = norms, lstm = norms, ...}, got a tensor')
  test.raises(function() viz.show('rnn', { rnn = { 1, 2 }, clip = -1 }) end, 'the rnn scene: clip must be a number >= 0')
  test.raises(function() viz.scene('rnn', { nonlinearity = 'sigmoid' }) end, "option nonlinearity of scene 'rnn' must be one of")
end)
