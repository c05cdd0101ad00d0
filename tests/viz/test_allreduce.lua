--[[
test_allreduce.lua — the allreduce scene, offscreen: for 2 to 8 ranks the ring's chunks and the
tree's vectors are what lumen.dist's algorithms hold after each step (after the reduce-scatter
rank r holds exactly chunk (r + 1) mod n complete; at the end every chunk and every vector sums
all n ranks; nothing is complete earlier than the algorithm makes it), the step counts are
2 (n - 1) and 2 ceil(log2 n), the hover names rank and chunk; --snapshot of every step.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

test.case('allreduce: the ring and the tree hold what the algorithms hold, step by step', function()
  for n = 2, 8 do
    viz.scene('allreduce', { ranks = n })
    local levels = math.ceil(math.log(n, 2) - 1e-9)
    test.eq(viz.state().steps, 1 + math.max(2 * (n - 1), 2 * levels), 'steps for ' .. n)
    -- after the reduce-scatter: one complete chunk per rank, chunk (r + 1) mod n
    viz.seek(n - 1)
    local complete = cells { kind = 'chunk', state = 'complete' }
    test.eq(#complete, n, n .. ' ranks: one complete chunk each after the reduce-scatter')
    for _, c in ipairs(complete) do test.eq(c.index, (c.row + 1) % n, 'rank ' .. c.row .. ' holds chunk r + 1') end
    -- before: none complete
    if n > 2 then
      viz.seek(n - 2)
      test.eq(#cells { kind = 'chunk', state = 'complete' }, 0, 'nothing complete before the last reduce-scatter step')
    end
    -- the end: everything complete, ring and tree
    viz.seek(viz.state().steps - 1)
    test.eq(#cells { kind = 'chunk', state = 'complete' }, n * n)
    test.eq(#cells { kind = 'vector', group = 'tree', state = 'complete' }, n)
    -- the tree after its reduce: only rank 0 complete
    viz.seek(levels)
    local tv = cells { kind = 'vector', group = 'tree', state = 'complete' }
    test.eq(#tv, 1)
    test.eq(tv[1].row, 0, 'rank 0 holds the sum after the reduce')
  end
  viz.scene('allreduce', { ranks = 4 })
  viz.seek(2)
  local c = cells { kind = 'chunk' }[1]
  local p = viz.pick(c.x + c.w / 2, c.y + c.h / 2)
  test.ok(p and p.text:find('rank %d, chunk %d: the sum of %d of the 4 ranks'), p and p.text)
  test.ok(check.panel_ink() > 50)
  test.ok(viz.state().step_label:find('ring step 3: reduce-scatter, 4 messages', 1, true), viz.state().step_label)
  local exe, tmp = lm.sys.executable(), check.tmp
  for s = 0, 6 do
    local out = string.format('%s/ar-%d.png', tmp, s)
    local okr = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot allreduce '%s' --step %d 2>&1", exe, out, s))
    test.ok(okr and #check.read(out) > 1000, '--snapshot allreduce --step ' .. s)
  end
  test.raises(function() viz.scene('allreduce', { ranks = 9 }) end, 'ranks')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
