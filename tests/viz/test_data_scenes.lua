--[[
test_data_scenes.lua — the scenes drawn from data, offscreen: curves (a known series at the right
pixel heights on linear and log axes, NaN and Inf as counted gaps, a CSV log followed while it
grows, is truncated, has bad lines or does not exist yet), graph (its node count equals the graph's,
gradients arriving as backward would compute them without touching .grad, the per-node gradcheck,
a 100,000-node graph summarised, a graph freed by backward), tensor (exactly the storage cells a
view reaches, checked against the strides; the copy contiguous() makes; no elements; 8 dims),
model (layers, parameter counts, filters, live histograms from viz.watch); and the checks every
scene passes (scene_check.lua). Read next: test_kernel_scenes.lua.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local C, cells, inside = check.C, check.cells, check.inside

local function count(where) return #cells(where) end

local function centre(c) return c.y + c.h / 2 end

-- ---------------------------------------------------------------- curves

test.case('curves: a known series at the right pixel heights, linear and log', function()
  viz.clear()
  local v = { 0.5, 2.0, 1.0, 1.5, 0.75, 1.25, 1.75, 0.6, 1.9, 1.1 }
  for i, y in ipairs(v) do viz.plot('train/loss', i, y) end
  local st = viz.state()
  test.eq(st.scene, 'curves')
  test.eq(st.steps, 10)
  test.eq(st.step, 9, 'a live scene shows its newest point')
  local plot = cells { kind = 'plot', group = 'loss' }[1]
  local pts = {}
  for _, c in ipairs(cells { kind = 'point', group = 'train/loss' }) do pts[c.index + 1] = c end
  test.eq(#pts, 10)
  -- the axis runs from 0.5 to 2 (ticks every 0.25): the lowest point on the plot's bottom edge, the
  -- highest on its top, the others linearly between
  local top, bottom = plot.y, plot.y + plot.h
  for i, y in ipairs(v) do
    test.near(centre(pts[i]), bottom - (y - 0.5) / 1.5 * (bottom - top), 1.0, 'point ' .. i)
    test.eq(pts[i].value, y)
  end
  local mid = pts[3]
  test.eq(inside { x = mid.x + mid.w / 2 - 1, y = mid.y + mid.h / 2 - 1, w = 2, h = 2 }, mid.color, 'the dot is drawn there')
  -- log axis: heights linear in log10 (the decade 0.1 .. 10)
  viz.variant('log')
  pts = {}
  for _, c in ipairs(cells { kind = 'point', group = 'train/loss' }) do pts[c.index + 1] = c end
  plot = cells { kind = 'plot', group = 'loss' }[1]
  for i, y in ipairs(v) do
    test.near(centre(pts[i]), plot.y + plot.h - (math.log(y, 10) + 1) / 2 * plot.h, 1.0, 'log point ' .. i)
  end
  viz.variant('linear')
  -- stepping replays the run: at step 3 only the first four points are drawn
  viz.seek(3)
  test.eq(count { kind = 'point', group = 'train/loss' }, 4)
  check.check('curves', function() end, 3, { kind = 'point', group = 'train/loss' }, { kind = 'plot' }, mid.color)
  local p = viz.pick(mid.x + mid.w / 2, mid.y + mid.h / 2)
  test.ok(p.text:find('train/loss at step 3: 1'), p.text)
  -- a second chart and series: train and test share their colours across charts
  viz.plot('test/loss', 10, 1.2)
  viz.plot('train/accuracy', 10, 0.8)
  test.eq(viz.state().step, 3, 'a cursor moved back stays where it was')
  viz.seek(viz.state().steps - 1)
  test.eq(count { kind = 'plot' }, 2)
  test.eq(cells { kind = 'point', group = 'train/accuracy' }[1].color, cells { kind = 'point', group = 'train/loss' }[1].color)
end)

test.case('curves: the smoothed line where the formula puts it; [ and ] change it', function()
  viz.clear()
  local n, a = 30, 0.6 -- 30 points (smoothed from 20 on): 1, 2, 1, 2, ...
  for i = 1, n do viz.plot('train/loss', i, i % 2 == 1 and 1 or 2) end
  local function smoothed(alpha, upto) -- the scene's: acc = a acc + (1 - a) y, divided by the weights so far
    local acc, w = 0, 0
    for i = 1, upto do acc, w = alpha * acc + (1 - alpha) * (i % 2 == 1 and 1 or 2), alpha * w + (1 - alpha) end
    return acc / w
  end
  local function line_at_last(alpha) -- the solid line 2 px before the last point, between the last two
    local plot = cells { kind = 'plot', group = 'loss' }[1]
    local p1 = cells { kind = 'point', group = 'train/loss', index = n - 2 }[1]
    local p2 = cells { kind = 'point', group = 'train/loss', index = n - 1 }[1]
    local x1, x2 = p1.x + p1.w / 2, p2.x + p2.w / 2
    local x = math.floor(x2) - 2
    local v = smoothed(alpha, n - 1) + (smoothed(alpha, n) - smoothed(alpha, n - 1)) * (x + 0.5 - x1) / (x2 - x1)
    local c1, c2 = centre(p1), centre(p2) -- the raw dots at 1 and 2 give the axis
    if p1.value == 2 then c1, c2 = c2, c1 end
    local y = c1 + (v - 1) * (c2 - c1)
    local best -- the pixel of the column in the series' full colour nearest y (the raw line is faded)
    for yy = math.floor(plot.y), math.floor(plot.y + plot.h) do
      local r, g, b = viz.pixel(x, yy)
      if r == p2.color[1] and g == p2.color[2] and b == p2.color[3] and (not best or math.abs(yy + 0.5 - y) < math.abs(best + 0.5 - y)) then best = yy end
    end
    return best and math.abs(best + 0.5 - y) or math.huge, y
  end
  local d = line_at_last(a)
  test.ok(d <= 2.5, 'the solid line passes through the smoothed value, in the series colour: ' .. d .. ' px off')
  local _, y6 = line_at_last(a)
  viz.key(']') -- more smoothing: 0.7
  local d7, y7 = line_at_last(0.7)
  test.ok(d7 <= 2.5 and math.abs(y7 - y6) > 5, 'after ]: the line of smoothing 0.7, elsewhere: ' .. d7 .. ' px off, ' .. math.abs(y7 - y6) .. ' px away')
  viz.key('[')
  viz.key('[')
  test.ok(line_at_last(0.5) <= 2.5, 'after [ [: smoothing 0.5')
  viz.clear()
end)

test.case('curves: NaN and Inf are gaps, counted; 10,000 points drawn by columns', function()
  viz.clear()
  for i = 1, 30 do viz.plot('loss', i, i == 10 and 0 / 0 or i == 20 and 1 / 0 or 1 / i) end
  local plot = cells { kind = 'plot', group = 'loss' }[1]
  test.eq(plot.value, 2, 'two gaps')
  test.eq(count { kind = 'point', group = 'loss' }, 28)
  test.eq(viz.state().steps, 30)
  viz.clear()
  for i = 1, 10000 do viz.plot('train/loss', i, math.exp(-i / 3000) + 0.01 * math.sin(i)) end
  test.ok(count { kind = 'points' } > 100 and count { kind = 'points' } < 2000, 'one bar per pixel column')
  test.raises(function() viz.plot('loss', 0 / 0, 1) end, "viz.plot: the step of series 'loss' must be a finite number")
  test.raises(function() viz.plot(3, 1, 1) end, 'viz.plot: the series name must be a string')
  test.raises(function() viz.plot('loss', 1, 'x') end, 'viz.plot: value must be a number')
  test.raises(function() viz.plot('loss', 1, lm.ones(2)) end, 'a one-element tensor, got 2 elements')
  viz.plot('loss', 1, lm.tensor(0.5)) -- a 0-d tensor is its value
  viz.clear()
end)

test.case('curves: following a CSV log that grows, is truncated, has bad lines, is missing', function()
  viz.clear()
  local path = check.tmp .. '/run.csv'
  os.remove(path)
  viz.follow(path)
  test.ok(viz.follow():find('waiting for .*run.csv %(No such file or directory%)'), viz.follow())
  test.eq(viz.state().scene, 'curves')
  local f = assert(io.open(path, 'w'))
  f:write('step,epoch,loss,accuracy,lr,seconds,split\n10,1,2.0,0.3,0.1,0.5,train\n20,1,1.5,0.5,0.1,1.0,train\n')
  f:flush()
  test.eq(viz.state().steps, 2)
  test.ok(viz.follow():find('2 rows'), viz.follow())
  f:write('30,1,1.2,0.6,0.1,1.5,train\n40,1,1.1,0.6') -- a line still being written
  f:flush()
  test.eq(viz.state().steps, 3, 'a partial line waits for its newline')
  f:write(',0.1,2.0,train\n30,1,1.3,0.55,0.1,2.1,test\nthis,is,not,a,row\n50,1,abc,0.7,0.1,2.5,train\n')
  f:close()
  test.eq(viz.state().steps, 4)
  local st = viz.follow()
  test.ok(st:find('6 rows') == nil and st:find('5 rows'), st)
  test.ok(st:find("2 malformed lines skipped %(first: line 7: 5 fields, the header has 7%)"), st)
  test.eq(count { kind = 'plot' }, 3, 'loss, accuracy, lr')
  test.eq(count { kind = 'point', group = 'test/loss' }, 1)
  test.ok(viz.state().title:find("the log's seconds column"), viz.state().title)
  -- rewritten shorter (a new run): the series start again
  f = assert(io.open(path, 'w'))
  f:write('step,loss,split\n1,3.0,train\n')
  f:close()
  test.eq(viz.state().steps, 1)
  test.ok(viz.follow():find('restarted 1 time'), viz.follow())
  test.eq(count { kind = 'point', group = 'train/loss' }, 1)
  viz.clear()
  test.eq(viz.follow(), nil)
end)

test.case('curves: any number of columns and series, any line length; only regular files followed', function()
  -- issue 29.8: 40 columns were every row "33 fields, the header has 32", series past 32 were
  -- dropped silently, a line past 1,023 bytes was cut and parsed (2,000...0007 plotted as 0)
  viz.clear()
  local path = check.tmp .. '/wide.csv'
  local f = assert(io.open(path, 'w'))
  local head = { 'step' }
  for k = 1, 6 do for j = 1, 15 do head[#head + 1] = 'c' .. k .. '/m' .. j end end -- 6 charts of 15: drawn
  for i = 1, 10 do head[#head + 1] = 'extra' .. i end -- 10 more charts: not drawn, said so
  f:write(table.concat(head, ','), '\n')
  for step = 1, 3 do
    local row = { step }
    for i = 1, 100 do row[#row + 1] = step * 1000 + i end
    f:write(table.concat(row, ','), '\n')
  end
  f:close()
  viz.follow(path)
  test.ok(viz.follow():find('3 rows') and not viz.follow():find('malformed'), viz.follow())
  local title = viz.state().title
  test.ok(title:find('curves: 100 series in 6 charts (10 not drawn)', 1, true), title)
  local texts = {}
  for _, t in ipairs(viz.layout('text')) do texts[#texts + 1] = t.text end
  local notes = table.concat(texts, '\n')
  test.ok(notes:find('10 series not drawn', 1, true), 'the panel says what is not drawn: ' .. notes)
  test.ok(notes:find('94 series not in this panel', 1, true), 'and what the panel leaves out: ' .. notes)
  -- 15 series a chart: each legend is one line that ends in "+N more", no text over another
  local L = viz.layout('text')
  local mores = 0
  for _, t in ipairs(L) do if t.text:match('^%+%d+ more$') then mores = mores + 1 end end
  test.eq(mores, 6, 'every chart says how many legend entries it leaves out')
  for i = 1, #L do
    for j = i + 1, #L do
      local a, b = L[i], L[j]
      local apart = a.x + a.w <= b.x + 0.5 or b.x + b.w <= a.x + 0.5 or a.y + a.h <= b.y + 0.5 or b.y + b.h <= a.y + 0.5
      test.ok(apart, string.format("'%s' and '%s' overlap", a.text, b.text))
    end
  end
  local last = cells { kind = 'point', group = 'c6/m15' }
  test.eq(#last, 3, 'the 90th column is drawn')
  test.ok(viz.pick(last[3].x + last[3].w / 2, last[3].y + last[3].h / 2).text:find(': 3090', 1, true), 'with its values')
  -- a line of 200,010 bytes is one number, read whole (cut anywhere, it would read 0)
  f = assert(io.open(path, 'w'))
  f:write('step,loss\n1,0.5\n2,0.', string.rep('0', 199999), '2e200000\n3,0.25\n')
  f:close()
  viz.clear()
  viz.follow(path)
  test.ok(viz.follow():find('3 rows') and not viz.follow():find('malformed'), viz.follow())
  test.ok(viz.state().step_label:find('loss 0.25'), viz.state().step_label)
  local pts = cells { kind = 'point', group = 'loss' }
  test.eq(#pts, 3)
  local two = viz.pick(pts[2].x + pts[2].w / 2, pts[2].y + pts[2].h / 2).text
  test.ok(two:find('loss at step 2: 2$'), 'the long number is 0.000...2e200000 = 2, not 0: ' .. two)
  -- viz.plot takes more than 32 series too
  viz.clear()
  for i = 1, 50 do viz.plot('s' .. i, 1, i) end
  test.ok(viz.state().title:find('curves: 50 series', 1, true), viz.state().title)
  viz.clear()
  -- a FIFO, /dev/zero (or a symlink to it), a directory: refused up front, nothing blocks
  local fifo, link = check.tmp .. '/log.fifo', check.tmp .. '/zero.csv'
  os.remove(fifo); os.remove(link)
  os.execute("mkfifo '" .. fifo .. "' && ln -s /dev/zero '" .. link .. "'")
  for _, t in ipairs { { fifo, 'a FIFO %(named pipe%)' }, { link, 'a character device' }, { '/dev/zero', 'a character device' },
    { check.tmp, 'a directory' } } do
    test.raises(function() viz.follow(t[1]) end, "viz.follow: cannot follow '.*': it is " .. t[2] .. ', and only regular files are followed')
  end
  -- a log replaced by a FIFO while followed: waited out, said so, never blocks
  f = assert(io.open(path, 'w'))
  f:write('step,loss\n1,0.5\n')
  f:close()
  viz.follow(path)
  os.remove(path)
  os.execute("mkfifo '" .. path .. "'")
  test.ok(viz.follow():find('waiting for .*wide.csv %(it is a FIFO %(named pipe%), and only regular files are followed%)'), viz.follow())
  os.remove(path)
  os.remove(fifo); os.remove(link)
  viz.clear()
end)

-- The x axis label of every chart (one per chart), the first one's text.
local function xaxis()
  local ax = cells { kind = 'xaxis' }
  test.eq(#ax, count { kind = 'plot' }, 'one x axis label per chart')
  return ax[1] and ax[1].group
end

test.case('curves: points whose x are not step counts: x on the axis, no steps/s, no smoothing', function()
  viz.clear()
  for i = 1, 25 do
    local x = -1.25 + i * 0.1
    viz.plot('parabola', x, x * x)
  end
  test.ok(not viz.state().title:find('/s', 1, true), viz.state().title)
  test.ok(viz.state().step_label:find('^x 1.25: parabola'), viz.state().step_label)
  test.eq(xaxis(), 'x')
  local pt = cells { kind = 'point', group = 'parabola', index = 12 }[1]
  test.eq(inside { x = pt.x + pt.w / 2 - 1, y = pt.y + pt.h / 2 - 1, w = 2, h = 2 }, pt.color,
    'a curve y(x) is not smoothed (it would shift): its dots are not faded')
  test.ok(viz.pick(pt.x + pt.w / 2, pt.y + pt.h / 2).text:find('parabola at x 0.05'), 'hover names x')
  viz.clear()
  for i = 1, 3 do viz.plot('train/loss', i, 1 / i) end
  test.eq(xaxis(), 'step', 'viz.plot of whole steps that grow: steps')
  viz.clear()
end)

test.case("curves: a followed CSV whose first column is not step: x is that column, named by its header", function()
  local path = check.tmp .. '/sweep.csv'
  local f = assert(io.open(path, 'w'))
  f:write('lr,loss,seconds\n0.001,2.3,1\n0.01,1.9,2\n0.1,1.2,3\n1,3.5,4\n')
  f:close()
  viz.clear()
  viz.follow(path)
  test.eq(count { kind = 'plot' }, 1, 'loss against lr (seconds is the clock)')
  test.eq(xaxis(), 'lr')
  test.ok(not viz.state().title:find('/s', 1, true), viz.state().title)
  test.ok(viz.state().step_label:find('^lr 1: loss 3.5'), viz.state().step_label)
  -- a run's log still counts steps, with its rate
  f = assert(io.open(path, 'w'))
  f:write('step,loss,seconds\n1,2.0,0.5\n2,1.5,1.0\n3,1.2,1.5\n')
  f:close()
  viz.follow(path)
  test.eq(xaxis(), 'step')
  test.ok(viz.state().title:find('2 steps/s', 1, true), viz.state().title)
  viz.clear()
  os.remove(path)
end)

test.case('curves: a curve y(x) given at once (tables, tensors); the option x names x', function()
  viz.clear()
  viz.plot('loss', { 0.5, 1, 2, 4 }, { 3, 2, 1.5, 1.8 })
  test.eq(xaxis(), 'x')
  test.ok(not viz.state().title:find('/s', 1, true), viz.state().title)
  test.ok(viz.state().step_label:find('^x 4: loss 1.8'), viz.state().step_label)
  viz.plot('lr/loss', lm.tensor({ 1e-3, 1e-2, 1e-1 }), lm.tensor({ 2.3, 1.9, 1.2 }), { x = 'lr' })
  test.eq(cells { kind = 'xaxis', index = 1 }[1].group, 'lr', 'the option x names it')
  test.ok(viz.state().step_label:find('^x '), 'two names of x: the cursor says x')
  test.raises(function() viz.plot('loss', { 1, 2 }, { 1 }) end, 'viz.plot: x and y must hold as many values, got 2 and 1')
  test.raises(function() viz.plot('loss', { 1, 0 / 0 }, { 1, 2 }) end, "viz.plot: x 2 of series 'loss' must be a finite number")
  test.raises(function() viz.plot('loss', { 1, 'a' }, { 1, 2 }) end, 'viz.plot: x[2] must be a number, got')
  test.raises(function() viz.plot('loss', { 1 }, { 1 }, { x = '' }) end, 'viz.plot: the name of x must be 1..23 characters')
  viz.clear()
end)

-- ---------------------------------------------------------------- graph

local function neuron_inputs()
  local x = lm.tensor({ 1, 2, 3 }, { dtype = 'float64', requires_grad = true })
  local w = lm.tensor({ 0.5, -0.3, 0.2 }, { dtype = 'float64', requires_grad = true })
  local b = lm.tensor(0.1, { dtype = 'float64', requires_grad = true })
  return x, w, b
end
local function neuron(x, w, b) return ((x * w):sum() + b):tanh() end

test.case('graph: nodes, leaves, gradients arriving node by node, no .grad touched', function()
  local x, w, b = neuron_inputs()
  local y = neuron(x, w, b)
  local function show() viz.show(y) end
  show()
  local st = viz.state()
  test.eq(st.scene, 'graph')
  test.eq(count { kind = 'node' }, 4, 'Mul, Sum, Add, Tanh: the graph has four nodes')
  test.eq(count { kind = 'leaf' }, 3)
  test.eq(st.steps, 5)
  test.ok(st.title:find('4 nodes, 3 leaves'), st.title)
  test.eq(cells { kind = 'node', index = 0 }[1].group, 'TanhBackward', 'the root runs first')
  viz.seek(1)
  test.eq(cells { kind = 'node', index = 0 }[1].state, 'active')
  test.eq(count { kind = 'node', state = 'pending' }, 3)
  viz.seek(4)
  test.eq(count { kind = 'node', state = 'done' }, 3)
  test.eq(x.grad, nil, 'the scene ran the rules on its own copies')
  -- what arrived at the leaves is what backward computes
  local got = {}
  for _, c in ipairs(cells { kind = 'leaf' }) do got[#got + 1] = c.value end
  y:backward(nil, { retain_graph = true })
  local want = { x.grad:norm():item(), w.grad:norm():item(), b.grad:norm():item() }
  table.sort(got)
  table.sort(want)
  for i = 1, 3 do test.near(got[i], want[i], 1e-12) end
  check.check('graph', show, 2, { kind = 'node', state = 'active' }, { kind = 'node', state = 'pending' })
  local p = viz.pick(cells { kind = 'leaf' }[1].x + 3, cells { kind = 'leaf' }[1].y + 3)
  test.ok(p.text:find('gradient arrived'), p.text)
end)

test.case('graph: a gradcheck per node; another graph, float32 inputs are errors', function()
  local x, w, b = neuron_inputs()
  local y = neuron(x, w, b)
  viz.show(y, { gradcheck = neuron, inputs = { x, w, b } })
  test.ok(viz.state().title:find('gradcheck per node'), viz.state().title)
  viz.seek(4)
  for _, c in ipairs(cells { kind = 'node' }) do
    local e = viz.pick(c.x + 3, c.y + 3).text:match('relative error ([%d%.e%+%-]+)')
    test.ok(e and tonumber(e) < 1e-6, c.group .. ': ' .. tostring(e))
  end
  test.raises(function() viz.show(y, { gradcheck = function(a) return a:sum() end, inputs = { x, w, b } }) end,
    'builds another graph')
  test.raises(function() viz.show(y, { gradcheck = neuron }) end, 'option gradcheck needs inputs')
  test.raises(function() viz.show(y, { gradcheck = 3, inputs = { x } }) end, 'option gradcheck must be a function')
  local xf = lm.tensor({ 1, 2, 3 }, { requires_grad = true })
  test.raises(function() viz.show((xf * 2):sum(), { gradcheck = function(a) return (a * 2):sum() end, inputs = { xf } }) end,
    'finite differences need float64')
  test.raises(function() viz.show(y, { gradcheck = function() error('boom') end, inputs = { x, w, b } }) end, 'boom')
end)

test.case('graph: 100,000 nodes summarised, not frozen; a graph freed by backward', function()
  local z = lm.tensor(0.5, { requires_grad = true })
  local t0 = lm.sys.clock()
  for _ = 1, 100000 do z = z:tanh() end
  viz.show(z)
  test.ok(viz.state().title:find('100000 nodes'), viz.state().title)
  test.eq(count { kind = 'summary' }, 1)
  test.ok(count { kind = 'node' } <= 240, 'a few hundred drawn')
  viz.seek(viz.state().steps - 1)
  local p = viz.pick(cells { kind = 'summary' }[1].x + 3, cells { kind = 'summary' }[1].y + 3)
  test.ok(p.text:find('TanhBackward x100000'), p.text)
  print(string.format('    (the 100,000-node graph: built and shown in %.2f s)', lm.sys.clock() - t0))
  local x, w, b = neuron_inputs()
  local y = neuron(x, w, b)
  y:backward()
  viz.show(y) -- drawn; its gradients cannot be recomputed, and it says so
  test.eq(count { kind = 'node' }, 4)
  viz.seek(2)
  test.ok(viz.state().step_label:find('not computed'), viz.state().step_label)
end)

-- ---------------------------------------------------------------- tensor

-- The storage offsets of v's elements, in C order, from its shape and strides.
local function offsets(v, offset)
  local shape, stride, out = v:shape(), v:stride(), {}
  local idx = {}
  for d = 1, #shape do idx[d] = 0 end
  for _ = 1, v:numel() do
    local o = offset
    for d = 1, #shape do o = o + idx[d] * stride[d] end
    out[#out + 1] = o
    for d = #shape, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < shape[d] then break end
      idx[d] = 0
    end
  end
  return out
end

test.case('tensor: exactly the storage cells a view reaches, checked against the strides', function()
  local base = lm.arange(0, 12):float():view(3, 4) -- storage cell i holds i
  local views = {
    { 'base', base, 0 }, { 't()', base:t(), 0 }, { 'narrow', base:narrow(2, 2, 2), 1 }, { 'select', base:select(2, 3), 2 },
    { 'expand', base[2]:view(1, 4):expand(3, 4), 4 }, { 'permute', lm.arange(0, 24):float():view(2, 3, 4):permute(3, 1, 2), 0 },
  }
  for _, c in ipairs(views) do
    local name, v, off = c[1], c[2], c[3]
    viz.show(v)
    test.eq(viz.state().scene, 'tensor', name)
    local want, set = {}, {}
    for _, o in ipairs(offsets(v, off)) do set[o] = true end
    for o in pairs(set) do want[#want + 1] = o end
    table.sort(want)
    local got = {}
    for _, cell in ipairs(cells { kind = 'storage', state = 'reached' }) do got[#got + 1] = cell.index end
    table.sort(got)
    test.eq(got, want, name .. ': the cells reached are offset + sum i_d stride_d')
    -- and, the storage holding its offsets, the values of the elements say the same
    local vals = {}
    for _, x in ipairs(v:contiguous():view(-1):tolist()) do vals[math.tointeger(x)] = true end
    for o in pairs(set) do test.ok(vals[o], name .. ': element value ' .. o) end
    test.eq(count { kind = 'storage' }, name == 'permute' and 24 or 12)
    test.eq(count { kind = 'element' }, v:numel())
    -- step k lights element k's cell (C order)
    local offs = offsets(v, off)
    viz.seek(math.min(3, #offs))
    test.eq(cells { kind = 'storage', state = 'active' }[1].index, offs[math.min(3, #offs)], name .. ': step 3')
  end
  local function show() viz.show(base:t()) end
  check.check('tensor', show, 2, { kind = 'storage', state = 'active' }, { kind = 'storage', state = 'reached' })
  -- contiguous(): a new storage in C order
  show()
  viz.variant('contiguous()')
  viz.seek(viz.state().steps - 1)
  local copy = {}
  for _, c in ipairs(cells { kind = 'copy' }) do copy[c.index + 1] = c.value end
  test.eq(copy, base:t():contiguous():view(-1):tolist())
  viz.show(base)
  viz.variant('contiguous()')
  test.eq(count { kind = 'copy' }, 0, 'a contiguous tensor is not copied')
  local p = viz.pick(cells { kind = 'element' }[6].x + 3, cells { kind = 'element' }[6].y + 3)
  test.ok(p.text:find('x%[{2, 2}%] = 5') and p.text:find('0 %+ %(2%-1%)%*4 %+ %(2%-1%)%*1 = 5'), p.text)
end)

test.case('tensor: no elements, 8 dims, a leaf that requires grad', function()
  viz.show(lm.zeros(0, 3))
  test.eq(viz.state().steps, 1)
  test.ok(viz.state().title:find('0 elements'), viz.state().title)
  test.eq(count { kind = 'element' }, 0)
  local e8 = lm.arange(0, 16):float():view(2, 1, 2, 1, 2, 1, 2, 1)
  viz.show(e8:permute(8, 7, 6, 5, 4, 3, 2, 1))
  test.eq(count { kind = 'element' }, 16)
  test.eq(count { kind = 'storage', state = 'reached' }, 16)
  viz.show(lm.ones(2, 2, { requires_grad = true }))
  test.eq(viz.state().scene, 'tensor', 'a leaf has no graph')
  test.raises(function() viz.show(lm.ones(3), { scene = 'graph' }) end, 'this tensor has no grad_fn')
end)

-- ---------------------------------------------------------------- model

test.case('model: layers and parameter counts, filters, live histograms from viz.watch', function()
  local m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
  local function show() viz.show(m) end
  show()
  local st = viz.state()
  test.eq(st.scene, 'model')
  test.eq(count { kind = 'layer' }, 4)
  local params = {}
  for _, c in ipairs(cells { kind = 'layer' }) do params[c.index + 1] = c.value end
  test.eq(params, { 4 * 9 + 4, 0, 0, 144 * 3 + 3 })
  test.ok(st.title:find('475 parameters'), st.title)
  test.eq(count { kind = 'filters' }, 1)
  test.eq(count { kind = 'activations', state = 'no data' }, 4)
  local w = viz.watch(m)
  local x, y = lm.randn(2, 1, 8, 8), lm.tensor({ 1, 3 })
  local crit = nn.CrossEntropyLoss()
  for _ = 1, 2 do
    local loss = crit(m(x), y)
    m:zero_grad()
    loss:backward()
    w:gradients()
  end
  test.eq(count { kind = 'activations', state = 'live' }, 4)
  test.eq(count { kind = 'gradients', state = 'live' }, 2, 'the layers with parameters')
  local relu = cells { kind = 'activations', index = 1 }[1]
  local p = viz.pick(relu.x + 3, relu.y + 3)
  test.ok(p.text:find('range 0 ') or p.text:find('range 0%.'), 'a ReLU never goes below 0: ' .. p.text)
  show() -- the same model shown again keeps its histograms
  test.eq(count { kind = 'activations', state = 'live' }, 4, 'viz.show(model) again')
  test.eq(count { kind = 'gradients', state = 'live' }, 2)
  local twin = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
  viz.show(twin) -- another model of the same layers has none of them
  test.eq(count { kind = 'activations', state = 'no data' }, 4, 'another model')
  show()
  test.eq(count { kind = 'activations', state = 'no data' }, 4, 'the first model after another: recorded afresh')
  check.check('model', show, 1, { kind = 'layer', state = 'active' }, { kind = 'layer', state = 'no parameters' })
  w:close()
  local before = count { kind = 'activations', state = 'live' }
  m(x)
  test.eq(count { kind = 'activations', state = 'live' }, before)
  -- opts.always: every forward is recorded (not paced by the clock), so three in a row are three updates
  local wa = viz.watch(m, { always = true })
  for _ = 1, 3 do m(x) end
  local conv = cells { kind = 'activations', index = 0 }[1]
  local pa = viz.pick(conv.x + 3, conv.y + 3)
  test.ok(pa.text:find('update 3%)'), 'three forwards, three updates: ' .. pa.text)
  wa:close()
  test.raises(function() viz.watch({}) end, 'viz.watch: expected an nn module')
  test.raises(function() viz._record(99, 'activations', lm.ones(2)) end, 'layer 99 is not in the model shown')
end)

test.case('model: an MLP has no filters column; the histograms take its width', function()
  local function columns()
    local out = {}
    for _, c in ipairs(cells { kind = 'column' }) do out[c.group] = c end
    return out
  end
  viz.show(nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3)))
  local layer, hist = cells { kind = 'layer', index = 0 }[1], cells { kind = 'activations', index = 0 }[1]
  local width = viz.state().width
  test.ok(hist.x - (layer.x + layer.w) < 0.05 * width,
    'the activations follow the layers, no empty column between: ' .. hist.x - (layer.x + layer.w) .. ' px')
  test.ok(hist.w > 0.3 * width, 'the histograms are wider: ' .. hist.w .. ' px')
  local col = columns()
  test.eq(col.filters, nil, 'no Conv2d: no filters heading')
  test.eq(count { kind = 'filters' }, 0)
  local act, grad = col.activations, col.gradients
  test.ok(act and grad, 'the histogram columns are headed')
  test.near(hist.x, act.x, 1.0, 'the histograms sit under their heading')
  test.ok(viz.pick(act.x + 2, act.y + act.h / 2).text:find('histogram', 1, true), 'a heading says what its column shows')
  -- a CNN keeps its filters column, between the layers and the histograms
  viz.show(nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3)))
  col = columns()
  test.ok(col.filters, 'a Conv2d: the filters column')
  test.ok(col.filters.x < col.activations.x and col.filters.x + col.filters.w <= col.activations.x + 1, 'in order')
  test.eq(count { kind = 'filters' }, 1)
end)

-- ---------------------------------------------------------------- the examples' --viz

test.case('examples take --viz: curves while mlp_fashion trains; --viz=model the layers, live', function()
  local f = io.open('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz', 'rb')
  if not f then
    print('  skipped: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)')
    return
  end
  f:close()
  local example = here .. '../../examples/mlp_fashion.lua'
  local function run(...)
    local saved = _G.arg -- the example reads the global arg (the test runs in an environment of its own)
    _G.arg = { [0] = example, '--limit', '512', '--batch', '64', '--log-every', '2', '--quiet', '--threads', '1', ... }
    dofile(example)
    _G.arg = saved
  end
  viz.close()
  run('--viz')
  local st = viz.state()
  test.eq(st.scene, 'curves', 'the window opened on the curves')
  test.eq(#cells { kind = 'point', group = 'train/loss' }, 512 / 64 / 2, 'a train/loss point per log row (8 steps, every 2)')
  test.eq(#cells { kind = 'point', group = 'test/accuracy' }, 1, 'the epoch ends with the test accuracy')
  local acc = cells { kind = 'point', group = 'test/accuracy' }[1]
  test.near(acc.value, _G.history[1].accuracy, 1e-9, 'the point is the accuracy the example printed')
  run('--viz=model') -- the watcher records the first forward, then when viz.due() says so
  st = viz.state()
  test.eq(st.scene, 'model')
  test.eq(count { kind = 'layer' }, 4) -- Flatten, Linear, ReLU, Linear
  test.ok(count { kind = 'activations', state = 'live' } >= 1, 'histograms recorded while it trained')
  viz.close()
end)
