--[[
test_graph_passes.lua — the graph scene's compiled view (issue 31), offscreen: viz.show(g) of an
lm.graph Graph after g:optimize() has #g.log + 1 steps; at every step the kernels and bytes drawn
(the cost cells, and the panel's captured and optimized columns) are g:snapshot(k):cost(), labelled
as counted by lm.graph; the nodes marked as this step's rewrite are exactly log[k].nodes; a removed
node is drawn faded where it was, a fused kernel encloses its ops; the demonstration (viz.scene and
lumen --snapshot with expr = compiled) has a rewrite of every pass; the autograd view is untouched;
bad input says what the scene takes.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells, inside, snap, panel_row = check.cells, check.inside, check.snap, check.panel_row
local G = require 'lumen.graph'

local SIZE = { width = 1280, height = 720 }

-- a small forward with work for every pass
local function captured()
  local W = ((lm.arange(32) % 5) - 2):reshape(4, 8) * 0.25
  local b = lm.zeros(8)
  local g = G.capture(function(x)
    local w = W * 2               -- fold
    local h = x:matmul(w) + b     -- simplify (+ 0)
    local r1, r2 = h:relu(), h:relu() -- cse
    local _ = x * 5               -- dce
    return (r1 + r2):tanh()       -- fuse
  end, lm.ones(3, 4))
  g:optimize()
  return g
end

-- the cost numbers the strip shows at this step: {kernels, bytes_read, bytes_written} of a row
local function shown_cost(state, step)
  local out = {}
  for i, name in ipairs({ 'kernels', 'bytes_read', 'bytes_written' }) do
    local c = cells({ kind = 'cost', group = name, state = state, step = step })
    test.eq(#c, 1, name .. ' drawn once at step ' .. step)
    out[i] = c[1] and c[1].value
  end
  return out
end

local function marked(k)
  local ids = {}
  for _, c in ipairs(viz.layout()) do
    if (c.kind == 'kernel' or c.kind == 'op') and (c.state == 'rewritten' or c.state == 'removed' or c.state == 'folded') then
      ids[c.index] = true
    end
  end
  return ids
end

-- how many kernels (plain or fused) the frame draws as live
local function live_drawn()
  local n = 0
  for _, cl in ipairs(viz.layout()) do
    if (cl.kind == 'kernel' or cl.kind == 'fused') and cl.state ~= 'removed' and cl.state ~= 'folded' then n = n + 1 end
  end
  return n
end

test.case('steps are the rewrites of g.log; each step draws snapshot(k):cost() and marks log[k].nodes', function()
  local g = captured()
  test.ok(#g.log >= 5, 'the capture gives every pass work')
  viz.show(g, SIZE)
  local st = viz.state()
  test.eq(st.scene, 'graph')
  test.eq(st.steps, #g.log + 1, 'a step per rewrite, and step 0 (as captured)')
  test.ok(st.title:find('compiled graph', 1, true), st.title)
  local c0 = g:snapshot(0):cost()
  local cK = g:snapshot(#g.log):cost()
  test.eq(panel_row('kernels'), { c0.kernels, cK.kernels }, 'the panel: as captured, after the passes')
  test.eq(panel_row('bytes_read'), { c0.bytes_read, cK.bytes_read })
  test.eq(panel_row('bytes_written'), { c0.bytes_written, cK.bytes_written })
  local counted = false
  for _, t in ipairs(viz.layout('text')) do
    if t.text:find('counted from the program (lm.graph)', 1, true) then counted = true end
  end
  test.ok(counted, 'the numbers say where they come from')
  for k = 0, #g.log do
    viz.seek(k)
    local c = g:snapshot(k):cost()
    test.eq(shown_cost('current', k), { c.kernels, c.bytes_read, c.bytes_written }, 'step ' .. k)
    test.eq(shown_cost('captured', 0), { c0.kernels, c0.bytes_read, c0.bytes_written }, 'step 0 beside step ' .. k)
    local want = {}
    for _, id in ipairs(k > 0 and g.log[k].nodes or {}) do want[id] = true end
    test.eq(marked(k), want, 'the marked nodes at step ' .. k .. (k > 0 and (' (' .. g.log[k].text .. ')') or ''))
    if k > 0 then
      test.ok(viz.state().step_label:find(g.log[k].pass, 1, true), viz.state().step_label)
    end
    -- the kernels drawn live are the snapshot's
    test.eq(live_drawn(), #g:snapshot(k).live, 'kernels drawn at step ' .. k)
  end
end)

test.case('the rewrites as drawn: removed where it was, faded; a fold; a merge; a fused kernel around its ops', function()
  local g = captured()
  viz.show('graph', g, SIZE)
  local where = {}
  viz.seek(0)
  for _, c in ipairs(cells({ kind = 'kernel' })) do where[c.index] = { c.x, c.y } end
  local seen = {}
  for k, r in ipairs(g.log) do
    viz.seek(k)
    seen[r.action] = true
    if r.action == 'remove' or r.action == 'replace' or r.action == 'merge' then
      local gone = r.remove[1]
      local c = cells({ kind = 'kernel', index = gone, state = 'removed' })[1]
      test.ok(c, 'the removed node is drawn at step ' .. k)
      test.eq({ c.x, c.y }, where[gone], 'where it was')
      local px = inside(c)
      test.ok(px[1] ~= check.C.active[1] or px[2] ~= check.C.active[2], 'faded, not lit')
    elseif r.action == 'fold' then
      test.ok(cells({ kind = 'kernel', index = r.nodes[1], state = 'folded' })[1], 'the folded node at step ' .. k)
    elseif r.action == 'fuse' then
      local box = cells({ kind = 'fused', state = 'rewritten' })[1]
      test.ok(box, 'the fused kernel at step ' .. k)
      for _, id in ipairs(r.nodes) do
        local op = cells({ kind = 'op', index = id })[1]
        test.ok(op and op.x >= box.x and op.x + op.w <= box.x + box.w and op.y >= box.y and op.y + op.h <= box.y + box.h,
          'op #' .. id .. ' inside its fused kernel')
      end
    end
    if r.action == 'merge' then
      test.eq(cells({ kind = 'kernel', index = r.nodes[1], state = 'rewritten' })[1] ~= nil, true, 'the node kept is marked')
    end
  end
  test.ok(seen.remove and seen.fold and seen.merge and seen.fuse, 'the capture shows removal, fold, merge and fusion')
  -- a step changes the frame; the same state renders the same bytes
  viz.seek(1)
  local a = snap('passes_a')
  viz.seek(2)
  test.ok(snap('passes_b') ~= a, 'a step changes the frame')
  viz.seek(1)
  test.eq(snap('passes_c'), a, 'the same step renders the same bytes')
  local c = cells({ kind = 'cost', group = 'kernels', state = 'current' })[1]
  local p = viz.pick(c.x + c.w / 2, c.y + c.h / 2)
  test.ok(p and p.text and p.text:find('not measured', 1, true), 'the hover of a number names its source')
end)

test.case('the layout pass: the nodes it inserts drawn as its rewrite, the four it replaces faded', function()
  local nn = lm.nn
  lm.manual_seed(3)
  local m = nn.Sequential(nn.Conv2d(3, 8, 5, { padding = 2 }), nn.ReLU(), nn.Conv2d(8, 8, 3, { padding = 1, stride = 2 }))
  m:eval()
  local g = lm.no_grad(function() return G.capture(function(v) return m(v) end, lm.randn(4, 3, 12, 12)) end)
  g:optimize()
  viz.show('graph', g, SIZE)
  local layouts = 0
  for k, r in ipairs(g.log) do
    viz.seek(k)
    local c = g:snapshot(k):cost()
    test.eq(shown_cost('current', k), { c.kernels, c.bytes_read, c.bytes_written }, 'step ' .. k)
    if r.pass == 'layout' then
      layouts = layouts + 1
      local at = {}
      for _, id in ipairs(r.nodes) do
        local cell = cells({ kind = 'kernel', index = id, state = 'rewritten' })[1]
        test.ok(cell, string.format('inserted node #%d drawn as this step\'s rewrite (%s)', id, g.nodes[id].op))
        if cell then
          local key = cell.x .. ',' .. cell.y
          test.ok(not at[key], 'each in a cell of its own')
          at[key] = true
        end
      end
      for _, id in ipairs(r.remove) do
        test.ok(cells({ kind = 'kernel', index = id, state = 'removed' })[1], 'replaced node #' .. id .. ' drawn faded')
      end
      test.eq(live_drawn(), #g:snapshot(k).live, 'kernels drawn at step ' .. k)
    end
  end
  test.eq(layouts, 2, 'two convolutions to NHWC, one rewrite each')
end)

test.case('the demonstration has a rewrite of every pass; --snapshot renders its steps', function()
  viz.scene('graph', { expr = 'compiled', width = 1280, height = 720 })
  local st = viz.state()
  local P = require 'lumen.viz_passes'
  local g = P.demo()
  test.eq(st.steps, #g.log + 1)
  local passes = {}
  for _, r in ipairs(g.log) do passes[r.pass] = true end
  for _, p in ipairs({ 'dce', 'fold', 'cse', 'simplify', 'fuse' }) do test.ok(passes[p], 'a rewrite of ' .. p) end
  local exe = lm.sys.executable()
  local out = check.tmp .. '/passes_snapshot.png'
  local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot graph '%s' --opts expr=compiled --step %d 2>/dev/null",
    exe, out, #g.log))
  test.ok(ok, '--snapshot with expr=compiled')
  test.eq(check.read(out):sub(1, 4), '\137PNG')
  local bad = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot graph '%s' --opts expr=compiled --step %d 2>/dev/null",
    exe, out, #g.log + 1))
  test.ok(not bad, '--step past the end fails')
end)

test.case('the autograd view is unchanged; bad input names what the scene takes', function()
  local x = lm.ones(2):requires_grad_()
  viz.show((x * x):sum(), SIZE)
  test.ok(viz.state().title:find('autograd graph', 1, true), viz.state().title)
  test.raises(function() viz.show('graph', { 1, 2 }) end, 'draws an lm.graph Graph')
  local g = G.capture(function(a) return a + 1 end, lm.ones(2))
  test.raises(function() viz.show(g) end, 'run g:optimize() first')
  test.raises(function() viz.show('graph', g, 3) end, 'options must be a table')
  test.raises(function() viz.scene('graph', { expr = 'nonsense' }) end, 'expr')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
