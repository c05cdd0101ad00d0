--[[
viz_passes — what the graph scene draws of an lm.graph Graph (lua/lumen/graph.lua): one step per
rewrite of g.log (step 0: the graph as captured), each step g:snapshot(k) with the rewrite log[k]
marked on it. The scene (src/viz/scenes/graph_passes.c) gets flat arrays from here and knows
nothing of Lua.

Design: every node keeps the grid cell it had in the captured graph (column: the longest path from
the values read from outside, row: program order within the column), so a step changes only what
its rewrite changed: a removed node stays where it was, faded (removed) or as the constant it became
(folded); a merge links the node dropped to the one kept; a replacement links it to what its readers
read now; a fused kernel is drawn around its members' ops. Values read from outside the program
(inputs, constants, state) sit in column 0; a folded node's result sits where the node was.
Read next: lua/lumen/graph.lua (Graph:snapshot, the log), src/viz/scenes/graph_passes.c.
]]
local lm = require 'lumen'

local M = {}

-- what the panel and the picture say the numbers are
M.SOURCE = 'counted from the program (lm.graph)'

local KIND = { kernel = 0, fused = 1, op = 2, value = 3 }
local STATE = { live = 0, rewritten = 1, removed = 2, folded = 3 }
local EDGE = { data = 0, old = 1, link = 2 }

local function shape_s(s)
  if #s == 0 then return '()' end
  return table.concat(s, 'x')
end

local function members(e) return e.fused or { e } end

-- float32 -> f32, as the autograd view writes dtypes
local SHORT = { float32 = 'f32', float64 = 'f64', float16 = 'f16', bfloat16 = 'bf16', int64 = 'i64', int32 = 'i32',
  int8 = 'i8', uint8 = 'u8', bool = 'bool' }
local function dt(d) return SHORT[d] or d end

local function set_of(list)
  local t = {}
  for _, x in ipairs(list or {}) do t[x] = true end
  return t
end

--- Whether x is an lm.graph Graph (a captured graph or a snapshot of one).
function M.is_graph(x)
  local G = package.loaded['lumen.graph']
  return type(x) == 'table' and G ~= nil and getmetatable(x) == G.Graph
end

-- The grid cell of every node id and of every value read from outside, from the captured graph
-- (g:snapshot(0)): columns by the longest path from outside, rows in program order.
local function grid(g)
  local s0 = g:snapshot(0)
  local col, row, count = {}, {}, {}
  local vcell, nvalues = {}, 0 -- value id -> {col, row} (values read from outside)
  local writer = {}            -- value id -> node id that last wrote it so far
  for _, e in ipairs(s0.live) do
    local c = 1
    for _, v in ipairs(e.inputs) do
      if v then
        local w = writer[v]
        if w then c = math.max(c, col[w] + 1)
        elseif not vcell[v] then
          vcell[v] = { 0, nvalues }
          nvalues = nvalues + 1
        end
      end
    end
    col[e.id] = c
    row[e.id] = count[c] or 0
    count[c] = (count[c] or 0) + 1
    for _, v in ipairs(e.outputs) do writer[v] = e.id end
  end
  -- nodes a pass made (layout): in the column of the node they were put before, on new rows
  local maxc = 1
  for _, c in pairs(col) do maxc = math.max(maxc, c) end
  for _, r in ipairs(g.log) do
    for _, ins in ipairs(r.insert or {}) do
      local c = ins[2] and col[ins[2]] or maxc
      col[ins[1]] = c
      row[ins[1]] = count[c] or 0
      count[c] = (count[c] or 0) + 1
    end
  end
  -- a value's producer in the captured graph (where a folded result is drawn)
  local producer = {}
  for _, n in ipairs(g.nodes) do
    for _, v in ipairs(n.outputs) do if v then producer[v] = n.id end end
  end
  return { col = col, row = row, vcell = vcell, nvalues = nvalues, producer = producer }
end

-- The out-of-program value's label: its storage's kind (a folded temp: "folded") and shape.
local function value_label(s, v)
  local x = s.values[v]
  local st = s.storages[x.storage]
  local kind = st.kind
  if s.folded[x.storage] then kind = 'folded' end
  return kind, shape_s(x.shape) .. ' ' .. dt(x.dtype)
end

local function entry_label(e)
  if e.fused then
    local ops = {}
    for _, m in ipairs(e.fused) do ops[#ops + 1] = m.node.op end
    return 'fused kernel', table.concat(ops, '+')
  end
  return string.format('%s #%d', e.node.op, e.id), nil
end

--- The description of g's steps for viz._show_passes: {name, source, steps, nodes (float64 (n, 8)),
--- labels, details, edges (float64 (m, 4))}.
function M.describe(g, name)
  if not M.is_graph(g) then
    local what = lm.is_tensor(g) and 'a tensor' or type(g) == 'table' and 'a table that is not an lm.graph Graph'
      or type(g)
    error('viz.show: the graph scene draws an lm.graph Graph (g = lm.graph.capture(fn, ...); g:optimize()), got ' .. what, 3)
  end
  if type(g.log) ~= 'table' or #g.log == 0 then
    error('viz.show: the graph has no rewrites to step through (g.log is empty): run g:optimize() first', 3)
  end
  local cells = grid(g)
  local rows, labels, details, edges, steps = {}, {}, {}, {}, {}
  local function add(step, kind, state, id, c, r, parent, label, detail)
    rows[#rows + 1] = { step, KIND[kind], STATE[state], id, c, r, parent or -1, 0 }
    labels[#rows], details[#rows] = label, detail or ''
    return #rows - 1 -- 0-based
  end
  local prev
  for k = 0, #g.log do
    local s = g:snapshot(k)
    local r = k > 0 and g.log[k] or nil
    local hot = set_of(r and r.nodes)
    local gone = set_of(r and r.remove)
    local cost = s:cost()
    steps[k + 1] = { pass = r and r.pass, action = r and r.action, text = r and r.text, kernels = cost.kernels,
      bytes_read = cost.bytes_read, bytes_written = cost.bytes_written }
    -- the entries drawn: the live ones and, at a rewrite's step, those it removed (where they were)
    local list = {}
    for _, e in ipairs(s.live) do list[#list + 1] = { e = e, g = s } end
    if r and prev then
      for _, e in ipairs(prev.live) do
        local hit = false
        for _, m in ipairs(members(e)) do if gone[m.id] then hit = true end end
        if hit then list[#list + 1] = { e = e, g = prev, ghost = true } end
      end
    end
    local folded_now = r and r.action == 'fold'
    local made = {}  -- value id -> node index producing it at this step
    local index = {} -- node id -> node index at this step
    local entry_of = {}
    for _, it in ipairs(list) do
      local e = it.e
      local state = it.ghost and (folded_now and 'folded' or 'removed') or 'live'
      local any = false
      for _, m in ipairs(members(e)) do if hot[m.id] then any = true end end
      if not it.ghost and any then state = 'rewritten' end
      local label, detail = entry_label(e)
      if e.fused then
        local last = e.fused[#e.fused]
        local fi = add(k, 'fused', state, e.id, cells.col[last.id], cells.row[last.id], -1, label,
          detail .. ' ' .. shape_s(e.shape or {}))
        entry_of[fi] = it
        for _, m in ipairs(e.fused) do
          local ms = state
          if state == 'rewritten' and not hot[m.id] then ms = 'live' end
          local mi = add(k, 'op', ms, m.id, cells.col[m.id], cells.row[m.id], fi, string.format('%s #%d', m.node.op, m.id))
          index[m.id] = mi
          entry_of[mi] = { e = m, g = it.g, ghost = it.ghost }
          if not it.ghost then for _, v in ipairs(m.outputs) do made[v] = mi end end
        end
      else
        local out = e.outputs[1] and s.values[e.outputs[1]]
        detail = out and (shape_s(out.shape) .. ' ' .. dt(out.dtype)) or ''
        local ni = add(k, 'kernel', state, e.id, cells.col[e.id], cells.row[e.id], -1, label, detail)
        index[e.id] = ni
        entry_of[ni] = it
        if it.ghost and state == 'folded' then for _, v in ipairs(e.outputs) do made[v] = ni end end
        if not it.ghost then for _, v in ipairs(e.outputs) do made[v] = ni end end
      end
    end
    -- values read from outside, and the edges: the live entries read values resolved in s, the
    -- removed ones (faded) what they read before
    local outside = {}
    local function source_of(v, gr)
      if made[v] then return made[v] end
      if outside[v] then return outside[v] end
      local kind, detail = value_label(gr, v)
      local c = cells.vcell[v]
      local p = cells.producer[v]
      local col, row
      if c then col, row = c[1], c[2]
      elseif p and cells.col[p] then col, row = cells.col[p], cells.row[p]
      else
        col, row = 0, cells.nvalues
        cells.nvalues = cells.nvalues + 1
        cells.vcell[v] = { col, row }
      end
      outside[v] = add(k, 'value', 'live', v, col, row, -1, kind, detail)
      return outside[v]
    end
    local order = {}
    for ni in pairs(entry_of) do order[#order + 1] = ni end
    table.sort(order)
    for _, ni in ipairs(order) do
      local it = entry_of[ni]
      if rows[ni + 1][2] ~= KIND.fused then
        local seen = {}
        for _, v in ipairs(it.e.inputs) do
          if v then
            local rv = it.g:resolve(v)
            local from = (made[rv] ~= ni) and source_of(rv, it.g) or nil
            if from and not seen[from] then
              seen[from] = true
              edges[#edges + 1] = { k, from, ni, it.ghost and EDGE.old or EDGE.data }
            end
          end
        end
      end
    end
    -- the rewrite's own link: a merge to the node kept, a replacement to what its readers read now
    if r and r.subst then
      for _, p in ipairs(r.subst) do
        local from_node
        for _, ni in ipairs(order) do
          local it = entry_of[ni]
          if it.ghost then for _, v in ipairs(it.e.outputs) do if v == p[1] then from_node = ni end end end
        end
        if from_node then
          edges[#edges + 1] = { k, from_node, source_of(s:resolve(p[2]), s), EDGE.link }
        end
      end
    end
    prev = s
  end
  local function f64(t, cols)
    if #t == 0 then return lm.zeros(0, cols, { dtype = 'float64' }) end
    return lm.tensor(t, { dtype = 'float64' })
  end
  return { name = name, source = M.SOURCE, steps = steps, nodes = f64(rows, 8), labels = labels, details = details,
    edges = f64(edges, 4) }
end

--- The demonstration: a two-layer perceptron's forward pass with the redundancies each pass
--- removes (an unused product: dce; a weight scaled by a constant: fold; relu computed twice: cse;
--- + 0 and * 1: simplify; relu and the add after it: fuse; each product with the kernel after it: anchor),
--- captured and optimized.
function M.demo()
  local G = require 'lumen.graph'
  -- fixed numbers (no random draw: opening the scene leaves the generator as it was)
  local function fixed(r, c, m) return ((lm.arange(r * c) % m) - (m - 1) / 2):reshape(r, c) * 0.1 end
  local W1, b1, W2, x = fixed(8, 16, 7), lm.zeros(16), fixed(16, 4, 5), fixed(2, 8, 3)
  local function forward(x_)
    local w = W1 * 0.5              -- reads only constants: folded
    local h = x_:matmul(w) + b1     -- b1 is zeros: + 0 goes
    local a = h:relu()
    local a2 = h:relu()             -- the same again: merged
    local unused = x_ * 3           -- nothing reads it: removed
    local z = (a + a2) * lm.ones(16) -- * 1 goes
    local y = z:matmul(W2)
    return (y * y):mean()
  end
  local g = G.capture(forward, x)
  g:optimize()
  return g, 'demo: a two-layer perceptron forward, (relu(x W1 + b1) W2)^2 mean'
end

return M
