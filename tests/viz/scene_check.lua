--[[
scene_check.lua — what the scene tests share (not a test file itself: the runner takes test_*.lua):
cells of the last frame by their fields, the colour inside a cell, ink in the counters panel and the
numbers of one of its rows, PNG
bytes of a snapshot, and the checks every scene must pass (lit and unlit cells at a step have the
colours they claim, the panel has text, viz.pick returns the cell with a hover text, a step changes
the frame, the same state renders the same bytes).
  local check = dofile(here .. 'scene_check.lua')
]]
local test = require 'lumen.test'

local M = {}

M.tmp = os.tmpname()
os.remove(M.tmp)
os.execute('mkdir -p ' .. M.tmp)

M.C = viz.colors()

function M.read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end

--- The colour inside a cell, away from its border and its text.
function M.inside(cell)
  -- near the bottom left corner: clear of centred text, of borders and of a tile's outline
  local x = cell.w >= 10 and cell.x + 4 or cell.w >= 6 and cell.x + 2 or cell.x + cell.w / 2
  local y = cell.h >= 10 and cell.y + cell.h - 4 or cell.h >= 6 and cell.y + 2 or cell.y + cell.h / 2
  local r, g, b = viz.pixel(math.floor(x), math.floor(y))
  return { r, g, b }
end

--- The cells of the last frame whose fields equal those of `where`.
function M.cells(where)
  local out = {}
  for _, c in ipairs(viz.layout()) do
    local ok = true
    for k, v in pairs(where) do if c[k] ~= v then ok = false end end
    if ok then out[#out + 1] = c end
  end
  return out
end

--- Pixels of the panel that are not its background (text).
function M.panel_ink()
  local p = viz.state().panel
  local bg = viz.pixel(math.floor(p.x + 1), math.floor(p.y + p.h - 2))
  local n = 0
  for y = math.floor(p.y + 4), math.floor(p.y + p.h - 4), 2 do
    for x = math.floor(p.x + 4), math.floor(p.x + p.w * 0.6), 3 do
      if viz.pixel(x, y) ~= bg then n = n + 1 end
    end
  end
  return n
end

function M.snap(name)
  local path = M.tmp .. '/' .. name .. '.png'
  viz.snapshot(path)
  return M.read(path)
end

--- The checks of a scene at `step`: cells matching `lit` (there must be some) show `color`
--- (default: the active colour), cells matching `unlit` (some) do not; the panel, pick, a step
--- and byte-identical renders as above.
function M.check(label, show, step, lit, unlit, color)
  show()
  viz.seek(step)
  local act, idle = M.cells(lit), M.cells(unlit)
  test.ok(#act > 0, label .. ': lit cells at step ' .. step)
  test.ok(#idle > 0, label .. ': unlit cells at step ' .. step)
  color = color or M.C.active
  for _, c in ipairs({ act[1], act[#act] }) do test.eq(M.inside(c), color, label .. ': a lit cell has its colour') end
  for _, c in ipairs({ idle[1], idle[#idle] }) do
    local px = M.inside(c)
    test.ok(px[1] ~= color[1] or px[2] ~= color[2] or px[3] ~= color[3], label .. ': an unlit cell is not lit')
  end
  test.ok(M.panel_ink() > 50, label .. ': the counters panel has text')
  local c = act[1]
  local p = viz.pick(c.x + c.w / 2, c.y + c.h / 2)
  test.ok(p, label .. ': pick finds the cell')
  test.eq({ p.kind, p.state, p.index, p.group }, { c.kind, c.state, c.index, c.group }, label)
  test.ok(type(p.text) == 'string' and #p.text > 10, label .. ': the hover text')
  local a = M.snap(label .. '-a')
  viz.step()
  local b = M.snap(label .. '-b')
  test.ok(a ~= b, label .. ': stepping changes the frame')
  show()
  viz.seek(step)
  test.ok(M.snap(label .. '-c') == a, label .. ': the same state renders byte-identical twice')
end

--- Visualizer I's form: active and idle cells of `kind` in picture `group` at `step`.
function M.check_scene(label, show, step, kind, group)
  M.check(label, show, step, { kind = kind, state = 'active', group = group, step = step },
    { kind = kind, state = 'idle', group = group, step = step })
end

--- The numbers of a row of the counters panel, left to right (blank cells left out).
function M.panel_row(name)
  local p = viz.state().panel
  local texts, at = {}, nil
  for _, t in ipairs(viz.layout('text')) do
    if t.y >= p.y and t.y < p.y + p.h then
      texts[#texts + 1] = t
      if t.text == name then at = t end
    end
  end
  assert(at, 'no panel row ' .. name)
  local same = {}
  for _, t in ipairs(texts) do if math.abs(t.y - at.y) < 2 and t.x > at.x then same[#same + 1] = t end end
  table.sort(same, function(a, b) return a.x < b.x end)
  local out = {}
  for _, t in ipairs(same) do
    local v = tonumber(t.text)
    if not v then break end
    out[#out + 1] = v
  end
  return out
end

return M
