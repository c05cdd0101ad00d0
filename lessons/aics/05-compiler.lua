--[[
AI Computing Systems, chapter 5: how a programming framework works inside, following the notes —
graph execution (devices, tensors, operators: the front end's Lua call, the back end's device
loop, binding and dispatch; a small frozen model captured with lm.graph.capture, step 1), then the
deep-learning compiler's graph-level passes, each run alone on that model with its rewrites and
its cost before and after: dead-code elimination (step 2), constant folding (step 3), common-
subexpression elimination (step 4), algebraic simplification / subgraph substitution (x * 1,
x + 0, a copy into the same layout; x - x kept on floats, step 5). The student writes constant
folding (step 6) and CSE (step 7) as Lua passes over lm.graph; the checks run them on random
elementwise graphs (inputs, constants, random draws, parameters, in-place writes, seeded) against
the built-in passes: the same removed nodes and the same results of g:run on new inputs (a random
draw folded, a node reading an input folded, a result folded, nodes with different parameters or
an in-place write between them merged, a forgotten g:resolve, a skipped node: each refused and
named). Operator fusion with its byte counts, broadcasts and the expensive-producer rule, then a
reduction's prologue and epilogue and a product's epilogue (the anchor pass), and the student's
prediction of a function's kernels after fusion (step 8); layout (NCHW / NHWC: the layout pass
turning a batch's im2col convolutions channels last, its transposes and bytes, off and on) and
conv + BN folding, which the student derives and checks on random convolutions (step 9);
operator-level auto-tuning with lm.tune on the emulator (step 10).
Scenes: graph (steps 2-5 and 8: the passes' rewrites, one at a time, viz.show('graph', g)), matmul
(step 10: the winner's tiled matmul on the emulator).
Format: docs/lessons.md. The passes: lua/lumen/graph.lua.
]]
local say = lesson.say

local function G() return require('lumen').graph end

-- ---------------------------------------------------------------- the random graphs of steps 6-7

-- A program: statements over slots (1 = x, 2 = y: inputs 3x4; 3 = K4 (4), 4 = K34 (3x4): constants
-- from before the capture). Shapes: 1 = {4}, 2 = {3, 4}.
local SHAPE = { { 4 }, { 3, 4 } }
local FILLS = { 0.5, 2.0, 3.0 }
local BIN = { 'add', 'sub', 'mul', 'maximum' }
local UN = { 'neg', 'abs', 'relu', 'tanh', 'sigmoid' }

local function gen_program(seed, n)
  local rnd = lesson.lcg(seed)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  local shape = { 2, 2, 1, 2 }
  local prog, temps, again = {}, {}, {}
  local function new(st, sh)
    prog[#prog + 1] = st
    shape[#shape + 1] = sh
    st.out = #shape
    temps[#temps + 1] = st.out
  end
  local function pick() return ri(1, #shape) end
  new({ 'bin', op = 'mul', a = 1, b = ri(2, 4) }, 2)
  for _ = 2, n do
    local r = rnd()
    if r < 0.14 then
      local sh = ri(1, 2)
      new({ 'fill', shape = sh, v = FILLS[ri(1, 3)] }, sh)
    elseif r < 0.22 then
      local sh = ri(1, 2)
      new({ 'rand', shape = sh }, sh)
    elseif r < 0.44 then
      local a, b = pick(), pick()
      local st = { 'bin', op = BIN[ri(1, 4)], a = a, b = b }
      new(st, math.max(shape[a], shape[b]))
      again[#again + 1] = st
    elseif r < 0.52 then
      local a = pick()
      local st = { 'scalar', op = BIN[ri(1, 3)], a = a, v = FILLS[ri(1, 3)] }
      new(st, shape[a])
      again[#again + 1] = st
    elseif r < 0.64 then
      local a = pick()
      local st = { 'un', op = UN[ri(1, #UN)], a = a }
      new(st, shape[a])
      again[#again + 1] = st
    elseif r < 0.74 then
      local a = pick()
      local st = ri(1, 2) == 1 and { 'pow', a = a, p = ri(2, 3) } or { 'clamp', a = a, hi = ri(1, 2) + 0.0 }
      new(st, shape[a])
      again[#again + 1] = st
    elseif r < 0.84 then
      local t = temps[ri(1, #temps)]
      local a = pick()
      if shape[a] > shape[t] then a = 3 end
      prog[#prog + 1] = { 'inplace', t = t, a = a, mul = rnd() < 0.4 }
    elseif #again > 0 then -- the same statement again, on the same slots: a common subexpression
      local st = again[ri(1, #again)]
      local c = {}
      for k, v in pairs(st) do c[k] = v end
      new(c, shape[st.out])
    else
      local a = pick()
      new({ 'un', op = 'neg', a = a }, shape[a])
    end
  end
  -- the results: the last slot made, and sometimes one made from constants only
  local const = { false, false, true, true }
  for _, st in ipairs(prog) do
    if st.out then
      if st[1] == 'fill' then const[st.out] = true
      elseif st[1] == 'rand' then const[st.out] = false
      elseif st[1] == 'bin' then const[st.out] = const[st.a] and const[st.b]
      else const[st.out] = const[st.a] end
    elseif st[1] == 'inplace' then const[st.t] = const[st.t] and const[st.a] end
  end
  local results = { #shape }
  if rnd() < 0.6 then
    for s = #shape - 1, 5, -1 do
      if const[s] then results[2] = s break end
    end
  end
  prog.results = results
  return prog
end

-- The function a program stands for, over the constants K (K[3], K[4]).
local function program_fn(prog, K)
  return function(x, y)
    local s = { x, y, K[3], K[4] }
    for _, st in ipairs(prog) do
      local k = st[1]
      if k == 'fill' then s[st.out] = lm.full(SHAPE[st.shape], st.v)
      elseif k == 'rand' then s[st.out] = lm.rand(SHAPE[st.shape])
      elseif k == 'bin' then
        local a, b = s[st.a], s[st.b]
        if st.op == 'add' then s[st.out] = a + b
        elseif st.op == 'sub' then s[st.out] = a - b
        elseif st.op == 'mul' then s[st.out] = a * b
        else s[st.out] = lm.maximum(a, b) end
      elseif k == 'scalar' then
        local a = s[st.a]
        if st.op == 'add' then s[st.out] = a + st.v
        elseif st.op == 'sub' then s[st.out] = a - st.v
        else s[st.out] = a * st.v end
      elseif k == 'un' then s[st.out] = s[st.a][st.op](s[st.a])
      elseif k == 'pow' then s[st.out] = s[st.a]:pow(st.p)
      elseif k == 'clamp' then s[st.out] = s[st.a]:clamp(-1.0, st.hi)
      elseif k == 'inplace' then
        if st.mul then s[st.t]:mul_(0.5) else s[st.t]:add_(s[st.a]) end
      end
    end
    local out = {}
    for i, r in ipairs(prog.results) do out[i] = s[r] end
    return table.unpack(out)
  end
end

local function K_tensors()
  return { [3] = lm.randn(4), [4] = lm.randn(3, 4) }
end

-- Hand-made cases first: each holds a mistake the random ones might miss.
local FIXED = {
  fold = {
    function(K) -- a chain of constants, a random draw, a constant result
      return function(x, y)
        local c = lm.full({ 4 }, 2.0) * K[3]
        local r = lm.rand(4) * 2.0
        return x * c + r * y, c * 3.0
      end
    end,
    function(K) -- a constant written in place; a dead constant product at the very end
      return function(x, y)
        local t = K[3] + 1.0
        t:add_(K[3])
        local out = (x + t) * y
        local _ = K[4] * K[4]
        return out
      end
    end,
  },
  cse = {
    function() -- the same ops on the same input with different parameters
      return function(x, y)
        return x:pow(2) + x:pow(3) + x:clamp(-1.0, 1.0) * x:clamp(-1.0, 2.0) + y
      end
    end,
    function() -- in-place writes between equal products
      return function(x, y)
        local t = x + y
        local u = t * 2.0
        t:add_(1.0)
        local w = t * 2.0
        local z = t * y
        t:add_(1.0)
        local v = t * y
        t:mul_(0.5)
        local q = t * y
        return u + w + z + v + q
      end
    end,
    function(K) -- a chain (the second product reads a merged node's result), two random draws,
      return function(x, y) -- a result equal to another node, a dead duplicate at the very end
        local a, b = x + y, x + y
        local out = a * K[4] + b * K[4] + lm.rand(3, 4) + lm.rand(3, 4)
        local again = x - y
        local same = x - y
        local res = out + again
        local _ = x * y
        local _ = x * y
        return res, same
      end
    end,
  },
}

local function cases(which)
  local list = {}
  for _, mk in ipairs(FIXED[which]) do list[#list + 1] = { make = mk } end
  for k = 1, 8 do
    local prog = gen_program((which == 'fold' and 5100 or 5200) + k, 12 + k % 5)
    list[#list + 1] = { make = function(K) return program_fn(prog, K) end }
  end
  return list
end

-- Node ids of the captured graph that g no longer runs.
local function removed(g)
  local live = {}
  for _, e in ipairs(g.live) do
    for _, m in ipairs(e.fused or { e }) do live[m.id] = true end
  end
  local out = {}
  for id = 1, #g.nodes do if not live[id] then out[#out + 1] = id end end
  return out
end

local function set_of(list)
  local t = {}
  for _, v in ipairs(list) do t[v] = true end
  return t
end

local function node_name(g, id)
  local n = g.nodes[id]
  return string.format('%s #%d', n.op, id)
end

local function storage(g, v) return g.values[g:resolve(v)].storage end

local function is_inplace(g, n)
  for _, o in ipairs(n.outputs) do
    for _, v in ipairs(n.inputs) do
      if o and v and g.values[o].storage == g.values[v].storage then return true end
    end
  end
  return false
end

local function ser(p)
  local keys, parts = {}, {}
  for k in pairs(p or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. '=' .. lesson.show(p[k]) end
  return table.concat(parts, ' ')
end

-- Why the built-in pass (whose graph is ref, after the pass) may not remove node id: a text.
local function why_kept(ref, id, what)
  local n = ref.nodes[id]
  local name = node_name(ref, id)
  if n.kind == 'random' then
    return say(name .. ' is a random draw: every run must draw new numbers (and advance the generator), so it is never '
        .. what .. '; g:foldable(e) says no',
      name .. ' 是一次随机抽样：每次运行都要抽新的数（并推进随机数生成器），所以它永远不能被' .. (what == 'folded' and '折叠' or '合并')
        .. '；g:foldable(e) 会说不行')
  end
  if is_inplace(ref, n) then
    return say(name .. ' writes its input in place: removing it would lose the update (g:foldable(e) says no)',
      name .. ' 原地改写它的输入：删掉它就丢了这次更新（g:foldable(e) 会说不行）')
  end
  for _, o in ipairs(n.outputs) do
    if o and ref:is_result(o) then
      return say(name .. ' makes a result of the function: its node stays, so that every run returns a tensor of its own (g:is_result, inside g:foldable)',
        name .. ' 产生的是函数的结果：它的节点要留下，每次运行才返回一个属于这次运行的张量（g:is_result，g:foldable 里已经检查）')
    end
    if o and ref:writers(o) ~= 1 then
      return say(name .. '\'s result is written again later (an in-place update of the same memory): its value is not fixed (g:writers(v) > 1, inside g:foldable)',
        name .. ' 的结果之后还会被改写（同一块内存上的原地更新）：它的值不是固定的（g:writers(v) > 1，g:foldable 里已经检查）')
    end
  end
  if what == 'folded' then
    for _, v in ipairs(n.inputs) do
      if v and not ref:is_constant(v) then
        local st = ref.storages[storage(ref, v)]
        local from = st.kind == 'input' and say('an input of the function', '函数的输入')
          or say('computed at every run from an input or a random draw', '每次运行都要由输入或随机抽样算出来')
        return say(string.format('%s reads v%d, which is not a constant (%s): g:is_constant(v) is false', name, v, from.en),
          string.format('%s 读取 v%d，它不是常量（%s）：g:is_constant(v) 为 false', name, v, from.zh))
      end
    end
  end
  return nil
end

local function same_results(a, b)
  for i = 1, math.max(#a, #b) do
    if not a[i] or not b[i] then return false, i end
    local x, y = a[i]:reshape(-1):tolist(), b[i]:reshape(-1):tolist()
    if #x ~= #y then return false, i end
    for k = 1, #x do
      if x[k] ~= y[k] and not (x[k] ~= x[k] and y[k] ~= y[k]) then return false, i, k, x[k], y[k] end
    end
  end
  return true
end

local function run_pack(g, seed, ...)
  lm.manual_seed(seed)
  local r = table.pack(g:run(...))
  local out = {}
  for i = 1, r.n - 1 do out[i] = r[i] end
  return out
end

-- The explanation when the student's pass and the built-in one remove different nodes.
local function explain(which, ref, mine, only_ref, only_mine)
  if #only_mine > 0 then
    local id = only_mine[1]
    local what = which == 'fold' and 'folded' or 'merged'
    local why = why_kept(ref, id, what)
    if not why and which == 'cse' then
      -- what the student merged it into
      local n = ref.nodes[id]
      local into
      local o = n.outputs[1]
      local to = o and mine.subst[o]
      if to then
        for j, m in ipairs(ref.nodes) do
          for _, w in ipairs(m.outputs) do if w == mine:resolve(to) then into = j end end
        end
      end
      if into then
        local m = ref.nodes[into]
        local a, b = ser(n.params), ser(m.params)
        if m.op ~= n.op or a ~= b or tostring(n.value) ~= tostring(m.value) then
          why = say(string.format('%s and %s are not the same computation: their parameters differ (%s / %s); g:signature(e) holds the parameters',
              node_name(ref, id), node_name(ref, into), b ~= '' and b or m.op, a ~= '' and a or n.op),
            string.format('%s 和 %s 不是同一个计算：它们的参数不同（%s / %s）；g:signature(e) 里有参数',
              node_name(ref, id), node_name(ref, into), b ~= '' and b or m.op, a ~= '' and a or n.op))
        else
          for k = into + 1, id - 1 do
            local w = ref.nodes[k]
            for _, ov in ipairs(w.outputs) do
              for _, iv in ipairs(n.inputs) do
                if ov and iv and ref.values[ov].storage == storage(ref, iv) then
                  why = say(string.format('%s writes v%d in place between %s and %s: the second reads other numbers than the first',
                      node_name(ref, k), iv, node_name(ref, into), node_name(ref, id)),
                    string.format('%s 在 %s 和 %s 之间原地改写了 v%d：第二个读到的数和第一个不同',
                      node_name(ref, k), node_name(ref, into), node_name(ref, id), iv))
                end
              end
            end
            if why then break end
          end
        end
        if not why then
          why = say(string.format('it does not compute what %s does (compare g:signature of the two)', node_name(ref, into)),
            string.format('它算的和 %s 不一样（比较两者的 g:signature）', node_name(ref, into)))
        end
      end
    end
    why = why or say('the built-in pass keeps it', '内置的 pass 保留了它')
    return say(string.format('your pass removed %s, the built-in %s pass keeps it: %s', node_name(ref, id), which, why.en),
      string.format('你的 pass 删掉了 %s，内置的 %s pass 保留了它：%s', node_name(ref, id), which, why.zh))
  end
  local id = only_ref[1]
  local hint
  local done = set_of(removed(mine))
  if id == #ref.nodes then
    hint = say(' It is the last node: does your loop reach #g.live?', '它是最后一个节点：你的循环走到 #g.live 了吗？')
  elseif done[id - 1] then
    hint = say(string.format(' The node before it (#%d) was removed: g:%s(i) takes entry i out of g.live, so the next one moves to position i — did your loop step over it?',
        id - 1, which == 'fold' and 'fold' or 'merge'),
      string.format('它前面的节点（#%d）被删掉了：g:%s(i) 把第 i 项从 g.live 里拿走，下一项就挪到了位置 i——你的循环是不是跳过了它？',
        id - 1, which == 'fold' and 'fold' or 'merge'))
  end
  if which == 'fold' then
    hint = hint or say(' Its inputs are all constants (g:is_constant), counting the results of nodes folded before it.',
      '它的输入全是常量（g:is_constant），包括之前被折叠的节点的结果。')
    return say(string.format('%s reads only constants and the built-in fold folds it; your pass kept it.%s', node_name(ref, id), hint.en),
      string.format('%s 只读常量，内置的 fold 把它折叠了；你的 pass 留下了它。%s', node_name(ref, id), hint.zh))
  end
  local n = ref.nodes[id]
  local resolved
  for _, v in ipairs(n.inputs) do
    if v and ref.subst[v] then resolved = v end
  end
  if resolved and not hint then
    hint = say(string.format(' It reads v%d, the result of a node merged before it: v%d now stands for v%d. Compare inputs after g:resolve(v) (g:signature does).',
        resolved, resolved, ref:resolve(resolved)),
      string.format('它读取 v%d，是之前被合并的节点的结果：v%d 现在代表 v%d。比较输入要先 g:resolve(v)（g:signature 会做）。',
        resolved, resolved, ref:resolve(resolved)))
  end
  hint = hint or say(' Same g:signature, no write to its inputs in between, and g:foldable(e).', '同样的 g:signature，中间没有写它的输入，而且 g:foldable(e)。')
  return say(string.format('%s computes what an earlier node computes and the built-in cse merges it; your pass kept it.%s', node_name(ref, id), hint.en),
    string.format('%s 算的和前面一个节点一样，内置的 cse 合并了它；你的 pass 留下了它。%s', node_name(ref, id), hint.zh))
end

local function check_pass(which, fname)
  return function(env)
    local ok, fn = lesson.need(env, fname)
    if not ok then return false, fn end
    local state = table.pack(lm.rng_state())
    local function done(...)
      lm.set_rng_state(table.unpack(state, 1, state.n))
      return ...
    end
    lm.manual_seed(505)
    local K = K_tensors()
    local list = cases(which)
    for k, c in ipairs(list) do
      local f = c.make(K)
      lm.manual_seed(600 + k)
      local x0, y0 = lm.randn(3, 4), lm.randn(3, 4)
      local ref = G().capture(f, x0, y0)
      local mine = G().capture(f, x0, y0)
      G().passes[which](ref)
      local where = say(string.format('graph %d of %d (%d nodes)', k, #list, #ref.nodes),
        string.format('第 %d 个图（共 %d 个，%d 个节点）', k, #list, #ref.nodes))
      local rok, err = lesson.try(mine.pass, mine, fn)
      if not rok then
        local id = tonumber(tostring(err.en):match('lm%.graph: %S+ #(%d+).-cannot be folded') or '')
        local why = id and ref.nodes[id] and why_kept(ref, id, 'folded')
        why = why and say(' (' .. why.en .. ')', '（' .. why.zh .. '）') or say('', '')
        return done(false, say(string.format('on %s, your pass raised: %s%s', where.en, err.en, why.en),
          string.format('在%s上，你的 pass 出错了：%s%s', where.zh, err.zh or err.en, why.zh)))
      end
      local gone_ok, gone = pcall(removed, mine)
      if not gone_ok then
        return done(false, say('on ' .. where.en .. ' g.live is no longer a list of entries: change it only with g:fold, g:merge, g:remove',
          '在' .. where.zh .. '上 g.live 不再是由条目组成的列表了：只用 g:fold、g:merge、g:remove 来改它'))
      end
      local want = removed(ref)
      local ws, gs = set_of(want), set_of(gone)
      local only_ref, only_mine = {}, {}
      for _, id in ipairs(want) do if not gs[id] then only_ref[#only_ref + 1] = id end end
      for _, id in ipairs(gone) do if not ws[id] then only_mine[#only_mine + 1] = id end end
      if #only_ref > 0 or #only_mine > 0 then
        local why = explain(which, ref, mine, only_ref, only_mine)
        return done(false, say(string.format('on %s: %s', where.en, why.en), string.format('在%s上：%s', where.zh, why.zh)))
      end
      lm.manual_seed(700 + k)
      local x1, y1 = lm.randn(3, 4), lm.randn(3, 4)
      local rok2, a = lesson.try(run_pack, ref, 800 + k, x1, y1)
      local rok3, b = lesson.try(run_pack, mine, 800 + k, x1, y1)
      if not rok2 or not rok3 then
        local e = (not rok3) and b or a
        return done(false, say(string.format('on %s your pass removes the right nodes, but g:run fails: %s', where.en, e.en),
          string.format('在%s上你的 pass 删对了节点，但 g:run 出错：%s', where.zh, e.zh or e.en)))
      end
      local same, i, el, gv, wv = same_results(b, a)
      if not same then
        return done(false, say(string.format('on %s your pass removes the right nodes, but g:run on new inputs gives result %d element %s = %s, the built-in pass %s: are the substitutions right (g:merge / g:fold, not g.live by hand)?',
            where.en, i, tostring(el), tostring(gv), tostring(wv)),
          string.format('在%s上你的 pass 删对了节点，但在新输入上 g:run 的结果 %d 的第 %s 个元素是 %s，内置 pass 是 %s：替换做对了吗（用 g:merge / g:fold，不要手改 g.live）？',
            where.zh, i, tostring(el), tostring(gv), tostring(wv))))
      end
    end
    return done(true, say(string.format('right: on %d graphs (random draws, results, in-place writes, parameters and chains among them) your pass removes exactly the nodes the built-in %s removes, and g:run gives the same results on new inputs',
        #list, which),
      string.format('对：在 %d 个图上（其中有随机抽样、函数结果、原地写、参数和链），你的 pass 删掉的节点和内置的 %s 完全一样，g:run 在新输入上的结果也一样',
        #list, which)))
  end
end

-- ---------------------------------------------------------------- step 8: counting kernels

local function mystery_fn(a, b, w)
  local t = (a - b):abs()
  local s = w:sqrt()
  local m = t:matmul(b)
  return (m * s + t):relu(), t:sum()
end

local MISCOUNT = {
  [8] = say('that is every node as captured: elementwise nodes that feed each other fuse (sub with abs; mul with add and relu), and the matmul then takes (mul, add, relu) as its epilogue',
    '这是捕获时的全部节点数：彼此相连的逐元素节点会融合（sub 和 abs；mul、add 和 relu），然后 matmul 还把 (mul, add, relu) 当作尾声一起运行'),
  [7] = say('only one merge? sub and abs make one kernel that writes t; the matmul runs mul, add and relu as its epilogue in another',
    '只合并了一处？sub 和 abs 组成一个写出 t 的 kernel；matmul 把 mul、add、relu 当作尾声，在另一个 kernel 里一起运行'),
  [6] = say('t has three readers (the matmul, the add, the sum), but one kernel can write t once and still be fused: sub and abs are one kernel that writes t; and the matmul takes mul, add and relu as its epilogue: one kernel for the four, not two',
    't 有三个读者（matmul、add、sum），但一个 kernel 可以把 t 写一次并照样融合：sub 和 abs 是一个写出 t 的 kernel；而且 matmul 把 mul、add、relu 当作尾声：这四个是一个 kernel，不是两个'),
  [5] = say('that is the count after fuse alone: (sub, abs), sqrt, matmul, (mul, add, relu), sum. The anchor pass runs after fuse: (mul, add, relu) is an elementwise kernel over the matmul\'s 64 x 64 result, so the matmul takes it as its epilogue — one kernel, and m never goes to memory',
    '这是只做 fuse 时的数目：(sub, abs)、sqrt、matmul、(mul, add, relu)、sum。anchor pass 在 fuse 之后运行：(mul, add, relu) 是作用在 matmul 的 64 x 64 结果上的逐元素 kernel，所以 matmul 把它当作尾声——合成一个 kernel，m 根本不写回内存'),
  [3] = say('one kernel too few. The sum cannot take (sub, abs) as its prologue: the matmul, which runs between them, reads t, so t must be in memory before the matmul runs, and the sum comes after it. Nor does sqrt join the matmul\'s epilogue: it is expensive and read through a broadcast (64 x 1), so it is not recomputed for each of the 64 x 64 elements',
    '少了一个。sum 不能把 (sub, abs) 当作前奏：夹在它们之间的 matmul 要读 t，所以 t 必须在 matmul 运行之前就写进内存，而 sum 在 matmul 之后。sqrt 也不会并进 matmul 的尾声：它昂贵，又是通过广播（64 x 1）被读取的，不会为 64 x 64 的每个元素重算一遍'),
  [2] = say('that would need (sub, abs) as the sum\'s prologue and sqrt inside the matmul\'s epilogue: the matmul between (sub, abs) and the sum reads t, so t is written to memory before it runs; and sqrt, expensive and broadcast (64 x 1), stays a kernel of its own',
    '那需要 sum 把 (sub, abs) 当作前奏，还要把 sqrt 放进 matmul 的尾声：夹在 (sub, abs) 和 sum 之间的 matmul 要读 t，所以 t 在它运行之前就写进内存；而 sqrt 昂贵又被广播（64 x 1），单独一个 kernel'),
  [1] = say('one kernel for everything? A product takes an epilogue, never a prologue: each element of t is read by a whole row of the matmul\'s result, so (sub, abs) runs first and writes t; sqrt (expensive, broadcast) and the sum, which reads t after the matmul, are kernels of their own too',
    '所有东西一个 kernel？乘积只接尾声，不接前奏：t 的每个元素要被 matmul 结果的一整行读取，所以 (sub, abs) 先运行、写出 t；sqrt（昂贵且被广播）和在 matmul 之后读 t 的 sum 也各自是一个 kernel'),
}

local function check_count(env, answer)
  local v = answer
  if v == nil then v = env.kernels_after end
  local n = lesson.number(v)
  if not n then
    return false, say('set kernels_after = your prediction (a number), or :check N', '设置 kernels_after = 你的预测（一个数），或者 :check N')
  end
  local state = table.pack(lm.rng_state())
  lm.manual_seed(808)
  local a, b, w = lm.randn(64, 64), lm.randn(64, 64), lm.rand(64, 1) + 0.1
  local g = G().capture(mystery_fn, a, b, w)
  lm.set_rng_state(table.unpack(state, 1, state.n))
  local captured = #g.nodes
  g:optimize()
  local want = g:cost().kernels
  if n ~= want then
    local why = MISCOUNT[n] or say(string.format('count the kernels: %d nodes captured; fuse joins elementwise neighbours unless something between them reads what they write, or a cheap-only rule stops them; then a product takes the elementwise kernel over its result as its epilogue, and a reduction over its last dims the kernel that makes its input (its prologue, if nothing between them reads what that kernel writes) and the one that reads its result (its epilogue)', captured),
      string.format('数一数 kernel：捕获了 %d 个节点；fuse 把相邻的逐元素节点合并，除非中间有节点读它们写的东西，或者“只重算便宜的”规则阻止了它；然后乘积把作用在其结果上的逐元素 kernel 当作尾声，沿最后几维的归约则接上产生其输入的 kernel（前奏，前提是两者之间没有节点读这个 kernel 写的东西）和读其结果的 kernel（尾声）', captured))
    return false, say(string.format('%s kernel%s? Not so: %s', lesson.show(n), n == 1 and '' or 's', why.en),
      string.format('%s 个 kernel？不对：%s', lesson.show(n), why.zh))
  end
  return true, say(string.format('right: %d nodes captured, %d kernels after the passes — (sub, abs) writing t; sqrt alone (expensive, broadcast); the matmul with its epilogue (mul, add, relu), writing only the result; the sum alone: the matmul between it and (sub, abs) reads t, so (sub, abs) cannot be its prologue', captured, want),
    string.format('对：捕获了 %d 个节点，优化后 %d 个 kernel——(sub, abs) 写出 t；sqrt 单独（昂贵且被广播）；matmul 带着尾声 (mul, add, relu)，只写出结果；sum 单独：夹在它和 (sub, abs) 之间的 matmul 要读 t，所以 (sub, abs) 不能当它的前奏', captured, want))
end

-- ---------------------------------------------------------------- step 9: conv + BN folding

local BN_CASES = {
  { cin = 3, cout = 4, k = 3, pad = 1, eps = 1e-5 },
  { cin = 4, cout = 4, k = 3, pad = 0, eps = 1e-3 },
  { cin = 2, cout = 5, k = 1, pad = 0, eps = 0.5 },
  { cin = 5, cout = 3, k = 3, pad = 1, eps = 0.1 },
}

local function check_bn(env)
  local ok, fn = lesson.need(env, 'fold_bn')
  if not ok then return false, fn end
  local state = table.pack(lm.rng_state())
  local function done(...)
    lm.set_rng_state(table.unpack(state, 1, state.n))
    return ...
  end
  for k, c in ipairs(BN_CASES) do
    lm.manual_seed(900 + k)
    local conv = nn.Conv2d(c.cin, c.cout, c.k, { padding = c.pad })
    local bn = nn.BatchNorm2d(c.cout)
    lm.no_grad(function()
      bn.running_mean:copy_(lm.randn(c.cout))
      bn.running_var:copy_(lm.rand(c.cout) * 0.2 + 0.01)
      bn.weight:copy_(lm.randn(c.cout))
      bn.bias:copy_(lm.randn(c.cout))
    end)
    bn.eps = c.eps
    bn:eval()
    local x = lm.randn(2, c.cin, 5, 6)
    local want = lm.no_grad(function() return bn(conv(x)) end)
    local desc = string.format('Conv2d(%d, %d, %d, padding %d) + BatchNorm2d(%d, eps %s)', c.cin, c.cout, c.k, c.pad, c.cout, lesson.show(c.eps))
    local rok, w2, b2 = lesson.try(function() return lm.no_grad(function() return fn(conv.weight, conv.bias, bn) end) end)
    if not rok then return done(false, say(desc .. ': ' .. w2.en, desc .. '：' .. (w2.zh or w2.en))) end
    if not lm.is_tensor(w2) or not lm.is_tensor(b2) then
      return done(false, say(desc .. ': fold_bn must return two tensors, the new weight and the new bias',
        desc .. '：fold_bn 要返回两个张量：新的权重和新的偏置'))
    end
    local ws, bs = table.concat(w2:shape(), 'x'), table.concat(b2:shape(), 'x')
    local wt, bt = table.concat(conv.weight:shape(), 'x'), tostring(c.cout)
    if ws ~= wt or bs ~= bt then
      return done(false, say(string.format('%s: the weight must stay %s and the bias %s; yours are %s and %s', desc, wt, bt, ws, bs),
        string.format('%s：权重应保持 %s、偏置 %s；你的是 %s 和 %s', desc, wt, bt, ws, bs)))
    end
    local got = lm.no_grad(function() return F.conv2d(x, w2:float(), b2:float(), { padding = c.pad }) end)
    local d = (got - want):abs():max():item()
    local scale = want:abs():max():item()
    if not (d <= 1e-4 * (1 + scale)) then
      -- which mistake: compare with the usual ones
      local why = say('W\' = W * gamma / sqrt(var + eps) per output channel (dim 1 of W), b\' = (b - mean) * gamma / sqrt(var + eps) + beta',
        'W\' = W * gamma / sqrt(var + eps)，按输出通道（W 的第 1 维），b\' = (b - mean) * gamma / sqrt(var + eps) + beta')
      local function off(a, b_) return lm.no_grad(function() return (a - b_):abs():max():item() end) end
      local function scaled(s) return lm.no_grad(function() return conv.weight * s:reshape(-1, 1, 1, 1) end) end
      local werr, berr = lm.no_grad(function()
        local s = bn.weight / (bn.running_var + bn.eps):sqrt()
        return off(w2, scaled(s)), off(b2, (conv.bias - bn.running_mean) * s + bn.bias)
      end)
      local no_sqrt = lm.no_grad(function() return off(w2, scaled(bn.weight / (bn.running_var + bn.eps))) end)
      local no_eps = lm.no_grad(function() return off(w2, scaled(bn.weight / bn.running_var:sqrt())) end)
      if off(w2, conv.weight) == 0 and off(b2, conv.bias) == 0 then
        why = say('fold_bn returns the conv as it is: BN\'s scale gamma / sqrt(var + eps) goes into W, its shift into b',
          'fold_bn 原样返回了卷积：BN 的缩放 gamma / sqrt(var + eps) 要放进 W，平移要放进 b')
      elseif no_sqrt <= 1e-5 then
        why = say('the weight is divided by var + eps; BN divides by the standard deviation, sqrt(var + eps)',
          '权重除的是 var + eps；BN 除的是标准差 sqrt(var + eps)')
      elseif no_eps <= 1e-5 then
        why = say(string.format('eps is missing: BN divides by sqrt(var + eps), and here bn.eps = %s', lesson.show(bn.eps)),
          string.format('少了 eps：BN 除以 sqrt(var + eps)，这里 bn.eps = %s', lesson.show(bn.eps)))
      elseif werr <= 1e-5 and berr > 1e-5 then
        why = say('the weight is right; the bias is not: b\' = (b - mean) * gamma / sqrt(var + eps) + beta — the conv\'s bias goes through BN too',
          '权重对了；偏置不对：b\' = (b - mean) * gamma / sqrt(var + eps) + beta——卷积的偏置也要经过 BN')
      elseif werr > 1e-5 then
        why = say('the weight is not W * gamma / sqrt(var + eps) scaled per output channel: one factor per filter, reshaped (-1, 1, 1, 1); with eps (bn.eps) and the square root',
          '权重不是按输出通道缩放的 W * gamma / sqrt(var + eps)：每个滤波器一个因子，reshape 成 (-1, 1, 1, 1)；要加 eps（bn.eps）并开平方')
      end
      return done(false, say(string.format('%s: the folded conv differs from conv + BN by up to %.3g: %s', desc, d, why.en),
        string.format('%s：折叠后的卷积与卷积 + BN 最多相差 %.3g：%s', desc, d, why.zh)))
    end
  end
  return done(true, say('right: on four convolutions (1x1 and 3x3, with and without padding, eps from 1e-5 to 0.5) the folded conv gives what conv + BN gives',
    '对：在四个卷积上（1x1 和 3x3，有无填充，eps 从 1e-5 到 0.5）折叠后的卷积与卷积 + BN 结果一样'))
end

-- ---------------------------------------------------------------- the scenes

-- The graph scene stepping through a Graph's rewrites (viz.show('graph', g)); when the student's
-- code left no graph with rewrites in env[name], a small one of the lesson's own.
local function passes_scene(name)
  return function(env)
    local g = env[name]
    if type(g) == 'table' and getmetatable(g) == G().Graph and type(g.log) == 'table' and #g.log > 0 then
      return 'graph', g
    end
    local d = G().capture(function(a, w) return (a * (1 - w) + a * w):relu() end, lm.ones(4, 4), lm.ones(4, 1))
    d:optimize()
    return 'graph', d
  end
end

local function tune_scene(env)
  if type(env.tuned_info) == 'table' and env.tuned_info.trace then return env.tuned_info end
  return 'matmul'
end

-- ---------------------------------------------------------------- the steps' code

local EXEC_CODE = [==[
lm.manual_seed(5)
W1, b1 = lm.randn(4, 8) * 0.5, lm.zeros(8)   -- a small frozen model: weights read only
W2 = lm.randn(8, 3) * 0.5
function model(x)
  local h = (x:matmul(W1) + b1):relu()
  local probe = h:exp():sum()                -- a leftover from debugging: nothing reads it
  local scale = lm.full({3}, 0.5) * 2        -- only constants
  local z = h:matmul(W2)
  local s = z:sigmoid() + z:sigmoid()        -- the same computation twice
  return (s:clone() * scale):softmax(2)      -- a defensive copy, a product by ones
end
x = lm.randn(2, 4)
print(string.format('x: a %s tensor on the %s, shape %s, strides %s (GPU here: %s)', x:dtype(),
  x:device(), table.concat(x:shape(), 'x'), table.concat(x:stride(), ','), tostring(lm.cuda.is_available())))
g = lm.graph.capture(model, x)               -- runs model(x) once, recording every kernel
for _, line in ipairs(g:lines()) do print(line) end          -- what g:print() shows
local c = g:cost()
print(string.format('%d kernels, %d bytes read, %d written', c.kernels, c.bytes_read, c.bytes_written))
local op = {}
for _, o in ipairs(lm.ops()) do op[o.name] = o end
print('node          device loop   devices with a kernel for float32')
for _, n in ipairs(g.nodes) do
  local devs = {}
  for _, d in ipairs{'cpu', 'cuda', 'opencl'} do
    for _, t in ipairs(op[n.op] and op[n.op].devices[d] or {}) do
      if t == 'float32' then devs[#devs + 1] = d end
    end
  end
  print(string.format('%-12s  %-12s  %s', n.op .. ' #' .. n.id, n.loop, table.concat(devs, ' ')))
end
]==]

local DCE_CODE = [==[
-- a fresh capture of your model, one pass alone, its rewrites and the cost of one run
function try_pass(name, g)
  g = g or lm.graph.capture(model, x)
  local before = g:cost()
  for _, r in ipairs(g:pass(name)) do print('  ' .. r.text) end
  local after = g:cost()
  print(string.format('%-8s %2d -> %2d kernels, %4d -> %4d bytes read, %4d -> %4d written', name,
    before.kernels, after.kernels, before.bytes_read, after.bytes_read, before.bytes_written, after.bytes_written))
  print('         same results as model(x): ' .. tostring(lm.equal((g:run(x)), model(x))))
  return g
end
g_dce = try_pass('dce')                      -- the picture: its rewrites, one at a time
]==]

local FOLD_CODE = [==[
g_fold = try_pass('fold')
]==]

local CSE_CODE = [==[
g_cse = try_pass('cse')
]==]

local SIMPLIFY_CODE = [==[
print('simplify alone:')
try_pass('simplify')
print('fold, then simplify:')
g_simple = try_pass('simplify', try_pass('fold'))
-- x - x on floats: inf - inf is not 0
local d = (lm.tensor({math.huge}) - lm.tensor({math.huge})):item()
print('inf - inf is NaN: ' .. tostring(d ~= d))
local gf = lm.graph.capture(function(v) return (v - v) + v end, lm.tensor({1.5, 2}))
local gi = lm.graph.capture(function(v) return (v - v) + v end, lm.tensor({1, 2}))
print('x - x on float32:', #gf:pass('simplify'), 'rewrite;  on int64:', #gi:pass('simplify'), 'rewrite')
]==]

local MY_FOLD_CODE = [==[
-- Your turn: constant folding as a pass of your own (see the helpers above)
function my_fold(g)
end
function removed_ids(g)                      -- captured nodes no longer in g.live
  local live, out = {}, {}
  for _, e in ipairs(g.live) do for _, m in ipairs(e.fused or {e}) do live[m.id] = true end end
  for id = 1, #g.nodes do if not live[id] then out[#out + 1] = '#' .. id end end
  return table.concat(out, ' ')
end
local mine, ref = lm.graph.capture(model, x), lm.graph.capture(model, x)
mine:pass(my_fold)
ref:pass('fold')
print('your fold removes:     ' .. removed_ids(mine))
print('the built-in removes:  ' .. removed_ids(ref))
]==]

local MY_CSE_CODE = [==[
-- Your turn: common-subexpression elimination as a pass of your own
function my_cse(g)
end
local mine, ref = lm.graph.capture(model, x), lm.graph.capture(model, x)
mine:pass(my_cse)
ref:pass('cse')
print('your cse removes:      ' .. removed_ids(mine))
print('the built-in removes:  ' .. removed_ids(ref))
]==]

local FUSE_CODE = [==[
function show(g)                             -- g's kernels, without where they came from
  for _, l in ipairs(g:lines()) do print((l:gsub('%s*%-%-.*$', ''))) end
end
local X, Y = lm.randn(256, 256), lm.randn(256, 256)
function chain(x, y) return (x * y + y):relu():sigmoid() end      -- 4 elementwise ops
local gc = lm.graph.capture(chain, X, Y)
local _, before = gc:run(X, Y)
gc:pass('fuse')
local _, after = gc:run(X, Y)
print(string.format('chain: %d kernels, %d bytes read, %d written -> %d kernel, %d read, %d written',
  before.kernels, before.bytes_read, before.bytes_written, after.kernels, after.bytes_read, after.bytes_written))
-- broadcasts: w is 64 x 1, one number per row
local A, B, Wt = lm.randn(64, 64), lm.randn(64, 64), lm.rand(64, 1)
local lerp = lm.graph.capture(function(a, b, w) return a * (1 - w) + b * w end, A, B, Wt)
lerp:optimize()
print('a * (1 - w) + b * w:')
show(lerp)
g_lerp = lerp                                -- the picture: its rewrites, one at a time
local ew = lm.graph.capture(function(a, b, w) return a * w:exp() + b end, A, B, Wt)
ew:optimize()
print('a * exp(w) + b:')
show(ew)
-- anchor (after fuse): a reduction takes the kernels before and after it, a product the one after
local function anchored(name, f, ...)
  local g = lm.graph.capture(f, ...)
  local _, before = g:run(...)
  g:optimize()
  local _, after = g:run(...)
  print(string.format('%s: %d kernels, %d bytes read, %d written -> %d kernel, %d read, %d written', name,
    before.kernels, before.bytes_read, before.bytes_written, after.kernels, after.bytes_read, after.bytes_written))
  show(g)
end
anchored('(a * b):sum(2):relu()', function(a, b) return (a * b):sum(2):relu() end, A, B)
anchored('(a:matmul(b) + w):relu()', function(a, b, w) return (a:matmul(b) + w):relu() end, A, B, Wt)
-- Your turn: how many kernels does mystery(a, b, w) launch after g:optimize()?
function mystery(a, b, w)                    -- a, b: 64 x 64, w: 64 x 1
  local t = (a - b):abs()
  local s = w:sqrt()
  local m = t:matmul(b)
  return (m * s + t):relu(), t:sum()
end
kernels_after = nil
]==]

local BN_CODE = [==[
local t = lm.arange(0, 24):reshape(1, 2, 3, 4)              -- N = 1, C = 2, H = 3, W = 4
local nhwc = t:permute(1, 3, 4, 2):contiguous()             -- the same tensor stored N, H, W, C
local as_nchw = nhwc:permute(1, 4, 2, 3)                    -- and seen again as N, C, H, W
print('strides (N, C, H, W): NCHW ' .. table.concat(t:stride(), ',') .. ';  NHWC ' .. table.concat(as_nchw:stride(), ','))
print('equal: ' .. tostring(lm.equal(t, as_nchw)) .. '; memory order NCHW ' .. table.concat(t:reshape(-1):narrow(1, 1, 6):tolist(), ' ')
  .. ' ...;  NHWC ' .. table.concat(nhwc:reshape(-1):narrow(1, 1, 6):tolist(), ' ') .. ' ...')
-- the layout pass: a small CNN in eval mode (its BN is folded into the first conv by affine) on 8 images
lm.manual_seed(4)
local cnn = nn.Sequential(nn.Conv2d(3, 8, 5, {padding = 2}), nn.BatchNorm2d(8), nn.ReLU(),
  nn.Conv2d(8, 8, 5, {padding = 2}), nn.ReLU(), nn.Conv2d(8, 16, 3, {stride = 2, padding = 1}), nn.ReLU())
cnn:eval()
local xb = lm.randn(8, 3, 12, 12)
local function compiled(m, opts)          -- captured under no_grad: the weights are constants
  local g = lm.no_grad(function() return lm.graph.capture(function(v) return m(v) end, xb) end)
  return g, g:optimize(opts)
end
local off = compiled(cnn, {disable = {layout = true}})
local on, log = compiled(cnn)
for _, r in ipairs(log) do
  if r.pass == 'layout' then print('layout: ' .. r.text) end
end
local a, b = off:lines(), on:lines()
print(string.format('%-30s %s', 'layout off (NCHW)', 'layout on (NHWC)'))
local function kernel(l) return ((l or ''):sub(1, 45):gsub('%s+$', '')) end   -- a line without its values
for i = 1, math.max(#a, #b) do
  print((string.format('%-30s %s', kernel(a[i]), kernel(b[i])):gsub('%s+$', '')))
end
local c0, c1 = off:cost(), on:cost()
local nt = on.layout.transposes
print(string.format('off: %d kernels, %d bytes moved;  on: %d kernels, %d bytes moved; %d convolutions converted, %d transpose%s inserted',
  c0.kernels, c0.bytes_read + c0.bytes_written, c1.kernels, c1.bytes_read + c1.bytes_written, on.layout.convs,
  nt, nt == 1 and '' or 's'))
local want = lm.no_grad(function() return cnn(xb) end)
print('both as cnn(x) within rounding: ' .. tostring(lm.allclose((on:run(xb)), want, 1e-4, 1e-4)
  and lm.allclose((off:run(xb)), want, 1e-4, 1e-4)))
local pool = compiled(nn.Sequential(nn.Conv2d(3, 8, 5, {padding = 2, bias = false}), nn.MaxPool2d(2)):eval())
local one = compiled(nn.Conv2d(3, 8, 1):eval())
print(string.format('conv 5x5 without bias, then max pooling: %d converted, %d transposes inserted;  conv 1x1 of the input: %d converted',
  pool.layout.convs, pool.layout.transposes, one.layout.convs))
-- a conv and a batch norm with running statistics, in eval mode
lm.manual_seed(9)
conv, bn = nn.Conv2d(3, 4, 3, {padding = 1}), nn.BatchNorm2d(4)
lm.no_grad(function()
  bn.running_mean:copy_(lm.randn(4)); bn.running_var:copy_(lm.rand(4) + 0.5)
  bn.weight:copy_(lm.randn(4)); bn.bias:copy_(lm.randn(4))
end)
bn:eval()
-- Your turn: the folded conv's weight and bias
function fold_bn(w, b, bn)
  return w, b
end
local xi = lm.randn(2, 3, 6, 6)
lm.no_grad(function()
  local w2, b2 = fold_bn(conv.weight, conv.bias, bn)
  local d = (F.conv2d(xi, w2, b2, {padding = 1}) - bn(conv(xi))):abs():max():item()
  print(string.format('folded conv against conv + BN: max |difference| = %.3g', d))
  local g1 = lm.graph.capture(function(v) return lm.no_grad(function() return bn(conv(v)) end) end, xi)
  local n1 = g1:cost().kernels
  g1:optimize()
  local g2 = lm.graph.capture(function(v) return F.conv2d(v, w2, b2, {padding = 1}) end, xi)
  g2:optimize()
  print(string.format('kernels: conv + BN %d captured, %d after the passes (%d bytes); the folded conv %d (%d bytes)',
    n1, g1:cost().kernels, g1:cost().bytes_read + g1:cost().bytes_written, g2:cost().kernels,
    g2:cost().bytes_read + g2:cost().bytes_written))
end)
]==]

local TUNE_CODE = [==[
local a, b = lm.randn(40, 40), lm.randn(40, 40)
best, list = lm.tune('matmul', a, b, {backend = 'emu', cache = false})
print(string.format('lm.tune matmul 40x40x40 on the emulator (%s): %d candidates', list[1].label, #list))
for i, c in ipairs(list) do
  print(string.format('%2d  tile %2d  %8d cycles  %5.2fx the default%s', i, c.point.tile, c.value,
    list.default.value / c.value, c.default and '  (default)' or ''))
end
local c, info = kernels.matmul(a, b, best)
tuned_info = info
print(string.format('winner: tile %d, %d modelled cycles; same product as lm.matmul: %s', best.tile or 16,
  info.counters.modelled_cycles, tostring(lm.allclose(c, a:matmul(b), 1e-4, 1e-4))))
]==]

-- ---------------------------------------------------------------- the lesson

return {
  title = say('Inside a framework: graph execution and the compiler', '编程框架机理：计算图执行与深度学习编译'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 5: how a programming framework works',
    '智能计算系统 第 5 章：编程框架机理'),
  summary = say([[How a framework runs a graph (devices, tensors, operators: front end, back end,
binding, dispatch) and how its compiler rewrites it: dead code, constant folding, common
subexpressions, algebraic simplification, each on your own model; your own folding and CSE passes
checked against the built-in ones; fusion and its bytes; layout and conv + BN folding; auto-tuning.]],
    [[框架怎样执行计算图（设备、张量、算子：前端、后端、绑定、分派），它的编译器又怎样改写计算图：
死代码消除、常量折叠、公共子表达式删除、代数化简，每一个都在你自己的模型上运行；你自己写的
常量折叠和 CSE pass 与内置的对照检查；算子融合与它省下的字节；布局优化与卷积 + BN 折叠；自动调优。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Executing a graph: devices, tensors, operators', '计算图执行：设备、张量、算子'),
      text = say([[
Chapter 4 used a framework; chapter 5 opens it. The notes split it into four modules: graph
construction (the user's program becomes the framework's graph), distributed training, the
deep-learning compiler (graph-level and operator-level optimizations), and graph execution, which
maps the graph's tensors and operations — here called operators — onto a device and runs them.
Execution has three parts:

- device management: which devices exist, where each tensor lives (x:device());
- tensor implementation: a tensor is a block of memory (a storage) and a geometry on it — shape, strides, offset; views launch no kernel;
- operator execution: get the sequence of operators to run; implement each operator — a front-end definition (the Lua call x + y), a back-end implementation (the device's loop: binary, unary, matmul...), and the binding between them; then look up and call the operator (dispatch: by the tensors' device and dtype).

The code defines a small frozen model (its weights are constants) and captures one call with
lm.graph.capture: it runs model(x) once and records every kernel it launches — the execution
sequence. g:lines() (what g:print() prints) lists them with the Lua line that launched each (the
front end) and what one run costs; the table
after it names the back-end loop each ran, and the devices that have a float32 kernel for it (the
op table, lm.ops()). Note what is there: 15 kernels, for a model whose answer needs far fewer.
The next steps are the compiler's passes that remove them.]],
        [[
第 4 章使用编程框架；第 5 章打开它看机理。笔记把框架分成四大模块：计算图构建（把用户程序转换成
框架内部的原始计算图）、分布式训练、深度学习编译（图层级和算子层级的编译优化），以及计算图执行：
把计算图中的张量和操作（本节又称算子）映射到给定设备上具体执行。计算图执行分三部分：

- 设备管理：有哪些设备，每个张量在哪里（x:device()）；
- 张量实现：张量是一块内存（存储）加上其上的几何描述——形状、步长、偏移；视图不启动任何 kernel；
- 算子执行：获取算子执行序列；实现算子——前端定义（Lua 调用 x + y）、后端实现（设备上的循环：binary、unary、matmul……）、前后端绑定；然后查找并调用算子（分派：按张量的设备和数据类型）。

代码定义了一个冻结的小模型（它的权重是常量），并用 lm.graph.capture 捕获一次调用：它把
model(x) 运行一遍，记录下启动的每个 kernel——也就是算子执行序列。g:lines()（即 g:print() 打印
的内容）列出它们、启动每个 kernel 的那行 Lua 代码（前端），以及一次运行的开销；后面的表给出每个 kernel 运行的后端循环，以及哪些设备有它
的 float32 kernel（算子表 lm.ops()）。看看有什么：15 个 kernel，而这个模型的答案其实用不了
这么多。接下来几步就是编译器用来去掉它们的 pass。]]),
      code = EXEC_CODE,
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('The compiler, pass 1: dead-code elimination', '编译器的第一个 pass：死代码消除'),
      text = say([[
The notes: a deep-learning compiler takes a task expressed as a computation graph and generates
high-performance code for a given hardware platform, through several levels of intermediate
representation and several levels of optimization. At the graph level: subgraph substitution,
constant folding, common-subexpression elimination, layout optimization and operator fusion; at
the operator level: auto-tuning (search-based, or polyhedral). TVM, Tensor Comprehensions, XLA
and MLIR are such compilers; Lumen's is lua/lumen/graph.lua, a list of passes over the captured
graph.

The simplest pass removes what nothing needs: walking from the end, a node is dead when no later
node reads its result and it is no result of the function (random draws stay: they advance the
generator). Your model's `probe` is dead: exp and sum go. try_pass (defined here) runs one pass
alone on a fresh capture, prints its rewrites and the cost of one run before and after — 15 to
13 kernels, and 676 bytes read instead of 804 — and checks the program still gives model(x). The picture steps through the rewrites one at a
time (the graph scene), here and in the next steps.]],
        [[
笔记：深度学习编译器接收以计算图形式表示的深度学习任务，并在指定硬件平台上生成高性能代码，
其中有多个层级的中间表示和多个层级的优化。图层级优化：子图替换、常量折叠、公共子表达式删除、
布局优化以及算子融合等；算子层级优化：自动调优，基于搜索的方法和基于多面体模型的方法。TVM、
TC（Tensor Comprehensions）、XLA、MLIR 都是这样的编译器；Lumen 的是 lua/lumen/graph.lua，
一串作用在捕获图上的 pass。

最简单的 pass 删掉没人需要的东西：从后往前走，一个节点如果它的结果没有后面的节点读取，也不是
函数的结果，它就是死的（随机抽样要留下：它会推进随机数生成器）。你的模型里的 `probe` 就是死
代码：exp 和 sum 被删掉。这里定义的 try_pass 在一次新的捕获上单独运行一个 pass，打印它做的
改写，以及一次运行前后的开销——15 个 kernel 变成 13 个，读 676 字节而不是 804——并检查程序
仍然给出 model(x) 的结果。画面一次一个地展示这些改写（graph 场景），后面几步也一样。]]),
      code = DCE_CODE,
      scene = passes_scene('g_dce'),
      expect = [[
  sum #5 -> (): nothing reads its result
  exp #4 -> 2x8: nothing reads its result
dce      15 -> 13 kernels,  804 ->  676 bytes read,  456 ->  388 written
         same results as model(x): true]],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Constant folding', '常量折叠'),
      text = say([[
A node whose inputs are all constants computes the same thing at every run: compute it once, at
the capture, and keep its result as a constant. Constants here are the weights of the frozen
model (storages of kind 'const': made before the capture, never written) and the results of nodes
already folded — so folding walks forward, and `lm.full({3}, 0.5) * 2` folds whole: the fill of
0.5, the fill of the number 2 (Lua numbers in tensor arithmetic become 0-d tensors), and their
product. Three kernels fewer.

What is never folded: a random draw (each run draws new numbers), a node that writes in place or
whose memory another node writes, and a node whose result is a result of the function (every run
must return a tensor of its own). In step 6 you write this pass.]],
        [[
一个节点如果输入全是常量，它每次运行算的都一样：在捕获时算一次，把结果当作常量保存下来。这里
的常量是冻结模型的权重（类型为 'const' 的存储：在捕获之前就有、从不被写）以及已经被折叠的节点
的结果——所以折叠从前往后走，`lm.full({3}, 0.5) * 2` 整个被折叠：填 0.5 的 fill、填数字 2 的
fill（张量运算里的 Lua 数字会变成 0 维张量），以及它们的乘积。少了三个 kernel。

永远不折叠的：随机抽样（每次运行都要抽新的数）、原地写的节点或者其内存还被别的节点写的节点，
以及结果就是函数结果的节点（每次运行都要返回属于自己的张量）。第 6 步由你来写这个 pass。]]),
      code = FOLD_CODE,
      scene = passes_scene('g_fold'),
      expect = [[
  fill #6 -> 3: reads only constants; computed once, at the capture
  fill #7 -> (): reads only constants; computed once, at the capture
  mul #8 -> 3: reads only constants; computed once, at the capture
fold     15 -> 12 kernels,  804 ->  788 bytes read,  456 ->  428 written
         same results as model(x): true]],
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Common-subexpression elimination', '公共子表达式删除'),
      text = say([[
`z:sigmoid() + z:sigmoid()` computes the same sigmoid twice. CSE finds a node equal to an earlier
one — the same op, the same parameters, the same inputs (after earlier merges: what a merged
node's result now stands for), the same result layout — and lets its readers read the earlier
result. Two conditions keep it correct: nothing may write the inputs between the two nodes (an
in-place update would make the second read other numbers), and random draws are never merged (two
draws are two different tensors). Here sigmoid #11 goes: one kernel fewer, 24 bytes fewer
written and 48 fewer read. You write this pass in step 7.]],
        [[
`z:sigmoid() + z:sigmoid()` 把同一个 sigmoid 算了两遍。CSE 找出与前面某个节点相同的节点——
同样的算子、同样的参数、同样的输入（考虑之前的合并：被合并节点的结果现在代表什么）、同样的结果
布局——让读它的节点改读前面那个结果。有两个条件保证正确：两个节点之间不能有谁改写它们的输入
（原地更新会让第二个读到不同的数），随机抽样永远不合并（两次抽样是两个不同的张量）。这里
sigmoid #11 被删掉：少一个 kernel，少写 24 字节，少读 48 字节。第 7 步由你来写这个 pass。]]),
      code = CSE_CODE,
      scene = passes_scene('g_cse'),
      expect = [[
  sigmoid #11 -> 2x3 computes what sigmoid #10 -> 2x3 did: its result is reused
cse      15 -> 14 kernels,  804 ->  756 bytes read,  456 ->  432 written
         same results as model(x): true]],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Subgraph substitution: algebraic simplification', '子图替换：代数化简'),
      text = say([[
Subgraph substitution replaces a pattern of nodes by a cheaper equivalent one. Lumen's simplify
pass knows a few algebraic ones: x * 1, x / 1, x + 0, x - 0 (against a constant of ones or
zeros), -(-x), x ^ 1, and a copy into the same layout (what clone, or transposing twice and
copying, leave): the node goes, its readers read x.

Alone, simplify finds two in your model: the bias b1 is all zeros (a constant of this frozen
model: x + 0), and the defensive clone. It does not see `* scale` yet: scale is computed by
nodes, not a constant — until fold has run. After fold, scale is a constant of ones, and x * 1
goes too. That is why a compiler runs its passes in an order, some more than once: each creates
work for the others (Lumen's default: dce, fold, cse, simplify, affine, dce, layout, forward, transpose,
fuse, anchor).

And x - x? On integers it is 0, and simplify folds it. On floats it is not: inf - inf is NaN, and
NaN - NaN is NaN, so replacing x - x by 0 would change the answer whenever x holds an inf or a
NaN. A compiler may only rewrite what is equal for every input (-ffast-math is the promise that
none of these occur).]],
        [[
子图替换把若干节点构成的一个模式换成一个更便宜的等价模式。Lumen 的 simplify pass 认得几个
代数恒等式：x * 1、x / 1、x + 0、x - 0（对一个全 1 或全 0 的常量）、-(-x)、x ^ 1，以及按同一
布局的复制（clone，或两次转置再复制留下的东西）：这个节点被删掉，读它的节点改读 x。

单独运行时，simplify 在你的模型里找到两个：偏置 b1 全是 0（这个冻结模型的常量：x + 0），以及
那个防御性的 clone。它还看不到 `* scale`：scale 是由节点算出来的，不是常量——要等 fold 运行之后。
fold 之后，scale 是一个全 1 的常量，x * 1 也被删掉。这就是编译器按顺序、有时多次运行各个 pass
的原因：每个 pass 都会给别的 pass 创造机会（Lumen 的默认顺序：dce、fold、cse、simplify、affine、dce、layout、forward、transpose、fuse、anchor）。

那 x - x 呢？对整数它是 0，simplify 会把它折叠。对浮点数不是：inf - inf 是 NaN，NaN - NaN 也是
NaN，所以把 x - x 换成 0 会在 x 含有 inf 或 NaN 时改变答案。编译器只能改写对任何输入都相等的
东西（-ffast-math 就是承诺这些情况不会出现）。]]),
      code = SIMPLIFY_CODE,
      scene = passes_scene('g_simple'),
      expect = [[
simplify alone:
  add #2 -> 2x8: x + 0 = x
  copy #13 -> 2x3: a copy into the same layout (what transpose(transpose(x)) or reshape chains leave)
simplify 15 -> 13 kernels,  804 ->  684 bytes read,  456 ->  368 written
         same results as model(x): true
fold, then simplify:
  fill #6 -> 3: reads only constants; computed once, at the capture
  fill #7 -> (): reads only constants; computed once, at the capture
  mul #8 -> 3: reads only constants; computed once, at the capture
fold     15 -> 12 kernels,  804 ->  788 bytes read,  456 ->  428 written
         same results as model(x): true
  add #2 -> 2x8: x + 0 = x
  copy #13 -> 2x3: a copy into the same layout (what transpose(transpose(x)) or reshape chains leave)
  mul #14 -> 2x3: x * 1 = x
simplify 12 ->  9 kernels,  788 ->  632 bytes read,  428 ->  316 written
         same results as model(x): true
inf - inf is NaN: true
x - x on float32:	0	rewrite;  on int64:	1	rewrite]],
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Your pass: constant folding', '你的 pass：常量折叠'),
      text = say([[
A pass is a Lua function(g) that rewrites g.live, the current program: a list of entries
{id, node, inputs, outputs}, in order (e.node is the captured node: e.node.op, e.node.kind,
e.node.params). The helpers a pass uses:

  g:is_constant(v)  v holds the same data at every run (const, or folded)
  g:foldable(e)     e may be removed: not a random draw, not in place, its
                    results temps that only it writes, none a result of the
                    function
  g:fold(i, why)    folds entry i: computed at the capture, its results
                    constants from now on; entry i leaves g.live (the next
                    entry moves to position i)
  g:is_result(v), g:writers(v), g:resolve(v): what g:foldable uses

Write my_fold(g): fold every entry that g:foldable allows and whose inputs (skip the false ones:
absent optional inputs) are all constants. The code runs yours and the built-in fold on your
model and prints the nodes each removed.]],
        [[
一个 pass 就是一个 Lua 函数 function(g)，它改写 g.live，即当前的程序：一串按顺序排列的条目
{id, node, inputs, outputs}（e.node 是捕获到的节点：e.node.op、e.node.kind、e.node.params）。
pass 可用的辅助函数：

  g:is_constant(v)  值 v 每次运行都是同样的数据（const 存储，或已折叠）
  g:foldable(e)     e 可以被删掉：不是随机抽样，不是原地写，它的结果是
                    只有它写的临时存储，并且不是函数的结果
  g:fold(i, why)    折叠第 i 项：在捕获时算好，它的结果从此是常量；
                    第 i 项离开 g.live（下一项挪到位置 i）
  g:is_result(v)、g:writers(v)、g:resolve(v)：g:foldable 用到的部件

写出 my_fold(g)：折叠每一个 g:foldable 允许、并且输入（跳过 false，即缺省的可选输入）全是常量
的条目。代码在你的模型上运行你的和内置的 fold，并打印各自删掉的节点。]]),
      code = MY_FOLD_CODE,
      expect = [[
your fold removes:     
the built-in removes:  #6 #7 #8]],
      exercise = {
        prompt = say([[
Write `my_fold(g)`, constant folding over g.live with g:foldable, g:is_constant and g:fold. The
check captures random elementwise functions (inputs, constants, random draws, in-place updates,
constant results) twice, runs yours on one and the built-in fold on the other: the same nodes
must go, and g:run on new inputs must give the same results.]],
          [[
写出 `my_fold(g)`：用 g:foldable、g:is_constant 和 g:fold 在 g.live 上做常量折叠。检查把随机
生成的逐元素函数（含输入、常量、随机抽样、原地更新、常量结果）各捕获两次，一个跑你的 pass，
一个跑内置的 fold：删掉的节点必须相同，并且 g:run 在新输入上的结果也要相同。]]),
        hints = {
          say('Walk with a while loop: local i = 1; while i <= #g.live do ... end — after g:fold(i) do not advance i: the next entry is now at i.',
            '用 while 循环遍历：local i = 1; while i <= #g.live do ... end——g:fold(i) 之后不要增加 i：下一项已经挪到了 i。'),
          say('local e = g.live[i]; local ok = g:foldable(e); for _, v in ipairs(e.inputs) do if v and not g:is_constant(v) then ok = false end end',
            'local e = g.live[i]; local ok = g:foldable(e); for _, v in ipairs(e.inputs) do if v and not g:is_constant(v) then ok = false end end'),
        },
        check = check_pass('fold', 'my_fold'),
        solution = [[
function my_fold(g)
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local ok = g:foldable(e)
    for _, v in ipairs(e.inputs) do
      if v and not g:is_constant(v) then ok = false end
    end
    if ok then g:fold(i, 'reads only constants') else i = i + 1 end
  end
end
]],
        wrong = {
          [[
function my_fold(g)                    -- a for loop: the entry after each fold is skipped
  for i = 1, #g.live do
    local e = g.live[i]
    if not e then break end
    local ok = g:foldable(e)
    for _, v in ipairs(e.inputs) do
      if v and not g:is_constant(v) then ok = false end
    end
    if ok then g:fold(i) end
  end
end
]],
          [[
function my_fold(g)                    -- inputs not looked at: folds what reads x
  local i = 1
  while i <= #g.live do
    if g:foldable(g.live[i]) then g:fold(i) else i = i + 1 end
  end
end
]],
          [[
function my_fold(g)                    -- no g:foldable: a random draw has no inputs either
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local ok = true
    for _, v in ipairs(e.inputs) do
      if v and not g:is_constant(v) then ok = false end
    end
    if ok then g:fold(i) else i = i + 1 end
  end
end
]],
          [[
function my_fold(g)                    -- by hand: results and in-place nodes folded too
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local ok = e.node.kind ~= 'random'
    for _, v in ipairs(e.inputs) do
      if v and not g:is_constant(v) then ok = false end
    end
    if ok then
      for _, v in ipairs(e.outputs) do g.folded[g.values[v].storage] = true end
      table.remove(g.live, i)
    else
      i = i + 1
    end
  end
end
]],
          [[
function my_fold(g)                    -- backwards: a chain folds only its first node
  for i = #g.live, 1, -1 do
    local e = g.live[i]
    local ok = g:foldable(e)
    for _, v in ipairs(e.inputs) do
      if v and not g:is_constant(v) then ok = false end
    end
    if ok then g:fold(i) end
  end
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Your pass: common-subexpression elimination', '你的 pass：公共子表达式删除'),
      text = say([[
CSE as a pass of your own, with two more helpers:

  g:signature(e)      a string: kind, op, dtype, parameters, inputs after
                      g:resolve (small constants by their contents), the
                      results' layouts: equal signatures, equal computations
  g:merge(j, i, why)  entry i (j < i, live positions) computes what entry j
                      computes: i leaves g.live, its results now stand for
                      j's (g:resolve follows that)

Walk forward keeping, for each signature, the position of the first entry that had it; an entry
whose signature was seen is merged into it — if g:foldable(e) (the same test: removable, no
random draw, no result, not in place) and if nothing wrote its inputs in between. For that last
condition, count the writes to each storage as you go (a value's storage:
g.values[g:resolve(v)].storage; an entry writes the storages of its e.outputs) and put the counts
of the inputs' storages into the key: a write in between changes the key. Merging removes only
entry i, so the positions you stored (all before i) stay right.]],
        [[
把 CSE 写成你自己的 pass，再加两个辅助函数：

  g:signature(e)      一个字符串：类型、算子、数据类型、参数、g:resolve
                      之后的输入（小常量按内容）、结果的布局：签名相等，
                      计算就相同
  g:merge(j, i, why)  第 i 项（j < i，g.live 中的位置）算的和第 j 项一样：
                      i 离开 g.live，它的结果从此代表 j 的结果
                      （g:resolve 会跟着走）

从前往后走，为每个签名记下第一个具有该签名的条目的位置；签名已经出现过的条目就合并进去——前提
是 g:foldable(e)（同一个判断：可删除、不是随机抽样、不是结果、不是原地写），并且两者之间没有谁
写过它的输入。对于最后这个条件，边走边数每个存储被写了几次（值所在的存储：
g.values[g:resolve(v)].storage；一个条目写的是它 e.outputs 的存储），把输入所在存储的计数放进
键里：中间有写，键就变了。合并只删掉第 i 项，所以你记下的位置（都在 i 之前）仍然正确。]]),
      code = MY_CSE_CODE,
      expect = [[
your cse removes:      
the built-in removes:  #11]],
      exercise = {
        prompt = say([[
Write `my_cse(g)` with g:signature, g:foldable, g:merge and g:resolve. The check captures random
elementwise functions (repeated expressions, the same op with other parameters, in-place writes
between equal nodes, random draws, chains of duplicates) twice, runs yours on one and the
built-in cse on the other: the same nodes must go, and g:run on new inputs must agree.]],
          [[
用 g:signature、g:foldable、g:merge 和 g:resolve 写出 `my_cse(g)`。检查把随机生成的逐元素函数
（含重复的表达式、参数不同的同一算子、相同节点之间的原地写、随机抽样、重复的链）各捕获两次，
一个跑你的 pass，一个跑内置的 cse：删掉的节点必须相同，g:run 在新输入上的结果也必须一致。]]),
        hints = {
          say('local first, writes = {}, {}; local function st(v) return g.values[g:resolve(v)].storage end; then a while loop over i, as in my_fold.',
            'local first, writes = {}, {}; local function st(v) return g.values[g:resolve(v)].storage end；然后像 my_fold 那样用 while 循环遍历 i。'),
          say('key = g:signature(e) .. one count per input: (writes[st(v)] or 0). If g:foldable(e) and first[key]: g:merge(first[key], i). Else: remember first[key] = i if foldable, add 1 to writes of each output\'s storage, and i = i + 1.',
            'key = g:signature(e) .. 每个输入一个计数：(writes[st(v)] or 0)。如果 g:foldable(e) 且 first[key] 存在：g:merge(first[key], i)。否则：若可删除就记下 first[key] = i，给每个输出的存储的 writes 加 1，然后 i = i + 1。'),
        },
        check = check_pass('cse', 'my_cse'),
        solution = [[
function my_cse(g)
  local first, writes = {}, {}               -- key -> live position; storage -> writes so far
  local function st(v) return g.values[g:resolve(v)].storage end
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local key = g:signature(e)
    for _, v in ipairs(e.inputs) do
      if v then key = key .. ' w' .. (writes[st(v)] or 0) end
    end
    local ok = g:foldable(e)
    if ok and first[key] then
      g:merge(first[key], i, 'computed before')
    else
      if ok then first[key] = i end
      for _, v in ipairs(e.outputs) do writes[st(v)] = (writes[st(v)] or 0) + 1 end
      i = i + 1
    end
  end
end
]],
        wrong = {
          [[
function my_cse(g)                     -- a key of my own: op and inputs, no parameters
  local first = {}
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local key = e.node.op
    for _, v in ipairs(e.inputs) do key = key .. ' ' .. tostring(v and g:resolve(v)) end
    if g:foldable(e) and first[key] then g:merge(first[key], i) else
      if g:foldable(e) then first[key] = i end
      i = i + 1
    end
  end
end
]],
          [[
function my_cse(g)                     -- no look at writes in between
  local first = {}
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local key = g:signature(e)
    if g:foldable(e) and first[key] then g:merge(first[key], i) else
      if g:foldable(e) then first[key] = i end
      i = i + 1
    end
  end
end
]],
          [[
function my_cse(g)                     -- g:foldable forgotten: random draws and results merged
  local first, writes = {}, {}
  local function st(v) return g.values[g:resolve(v)].storage end
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local key = g:signature(e)
    for _, v in ipairs(e.inputs) do
      if v then key = key .. ' w' .. (writes[st(v)] or 0) end
    end
    if first[key] and e.node.kind ~= 'random' then g:merge(first[key], i) else
      first[key] = first[key] or i
      for _, v in ipairs(e.outputs) do writes[st(v)] = (writes[st(v)] or 0) + 1 end
      i = i + 1
    end
  end
end
]],
          [[
function my_cse(g)                     -- inputs compared as captured, without g:resolve
  local first, writes = {}, {}
  local function st(v) return g.values[v].storage end
  local i = 1
  while i <= #g.live do
    local e = g.live[i]
    local key = e.node.op .. ' ' .. tostring(e.node.value)
    for k, v in pairs(e.node.params) do key = key .. ' ' .. k .. '=' .. tostring(v) end
    for _, v in ipairs(e.inputs) do
      if v then key = key .. ' v' .. v .. ' w' .. (writes[st(v)] or 0) end
    end
    local ok = g:foldable(e)
    if ok and first[key] then g:merge(first[key], i) else
      if ok then first[key] = i end
      for _, v in ipairs(e.outputs) do writes[st(v)] = (writes[st(v)] or 0) + 1 end
      i = i + 1
    end
  end
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Operator fusion', '算子融合'),
      text = say([[
Each kernel of an elementwise chain reads its inputs from memory and writes its result back; the
next kernel reads it again. For chain(x, y) = sigmoid(relu(x * y + y)) on 256 x 256 float32 (256
KiB a tensor), four kernels read 6 tensors and write 4: 1572864 bytes read, 1048576 written.
Fused into one kernel that keeps the intermediates in registers, it reads x and y once and writes
one result: 524288 and 262144, a third and a quarter. Elementwise kernels are limited by memory,
not arithmetic, so the bytes are the time.

Lumen's fuse pass joins chains and trees of elementwise nodes (unary, binary, where...) as long as
nothing between them reads what they write, and writes once each result that something outside
the kernel needs. It is broadcast-aware: in a * (1 - w) + b * w with w of 64 x 1, the 64 x 1
node `1 - w` is recomputed inside the 64 x 64 kernel for every element — cheap — so the whole
expression is one kernel. An expensive producer is not recomputed: in a * exp(w) + b, exp of the
64 x 1 w would run 64 times for each value; it stays a kernel of its own, and the rest fuses (XLA's
rule: never duplicate an expensive producer). matmul, sum, softmax are not elementwise: fuse stops
at them.

Fusion does not stop at elementwise kernels: a reduction or a product can be the anchor of a
kernel that takes elementwise work in. Lumen's anchor pass runs after fuse. A reduction (sum,
mean, amax, amin) over the last dims of a contiguous float value takes the elementwise kernel
that makes its input as its prologue — each element goes into the sum (or the max) as soon as
it is computed, never stored — and the elementwise kernel that reads its result, over the
result's elements, as its epilogue: (a * b):sum(2):relu() on 64 x 64 becomes one kernel that
reads a and b and writes 64 numbers, 256 bytes, where three kernels wrote 16896. A product
(matmul, a Winograd convolution) takes the elementwise kernel over its result as its epilogue — a
bias, an activation, a residual add — run on panels of rows while they are still in the cache: a
layer with its ReLU is one kernel. A product takes no prologue: each element of its input is read
by a whole row or column of the result, so it is computed once, into memory. A prologue joins
only if nothing between it and the reduction reads what it writes: such a reader needs the value
in memory before the reduction runs. A sum over a dim that is not the last (dim 1 of a 64 x 64
value) and softmax take nothing in: they still end a group. A reduction gives eager's results bit
for bit; a product's panels agree with one large matmul to about 1e-5 (the BLAS may split a
smaller product's sums differently), bit for bit where one panel covers the result.

Predict before you run anything: after g:optimize(), how many kernels does mystery launch?]],
        [[
逐元素运算链的每个 kernel 都从内存读入输入、把结果写回去；下一个 kernel 再把它读回来。对于
256 x 256 float32（每个张量 256 KiB）上的 chain(x, y) = sigmoid(relu(x * y + y))，四个 kernel
读 6 个张量、写 4 个：读 1572864 字节，写 1048576 字节。融合成一个 kernel 后，中间结果留在
寄存器里，只读一次 x 和 y、写一个结果：524288 和 262144，是原来的三分之一和四分之一。逐元素
kernel 受限于访存而不是算术，所以字节数就是时间。

Lumen 的 fuse pass 把逐元素节点（unary、binary、where……）连成的链和树合并起来，条件是它们之间
没有别的节点读它们写的东西；kernel 外面需要的每个结果写一次。它能处理广播：在 a * (1 - w) + b * w
中，w 是 64 x 1，64 x 1 的节点 `1 - w` 在 64 x 64 的 kernel 里对每个元素重算一遍——很便宜——所以
整个表达式是一个 kernel。昂贵的生产者不重算：在 a * exp(w) + b 中，对 64 x 1 的 w 求 exp 会让每个
值算 64 遍；它单独成为一个 kernel，其余的融合（XLA 的规则：绝不复制昂贵的生产者）。matmul、sum、
softmax 不是逐元素运算：fuse 到它们那里就停下。

融合并不止于逐元素 kernel：归约或乘积可以作为一个 kernel 的核心（anchor），把逐元素的工作收进来。
Lumen 的 anchor pass 在 fuse 之后运行。对连续存储的浮点值沿最后几维做的归约（sum、mean、amax、
amin），把产生它输入的逐元素 kernel 当作前奏（prologue）——每个元素一算出来就进入求和（或取
最大值），从不写回内存——再把按结果的元素读取它结果的逐元素 kernel 当作尾声（epilogue）：
64 x 64 上的 (a * b):sum(2):relu() 成为一个 kernel，读 a 和 b，只写 64 个数，256 字节，而三个
kernel 要写 16896 字节。乘积（matmul、Winograd 卷积）把作用在其结果上的逐元素 kernel 当作尾声——偏置、激活、
残差加——按行分块（panel），趁数据还在缓存里就运行：一层连同它的 ReLU 就是一个 kernel。乘积不接
前奏：它输入的每个元素要被结果的一整行或一整列读取，所以要先算好一次、写进内存。前奏只有在它和
归约之间没有别的节点读它写的东西时才能并进去：那样的读者需要这个值在归约运行之前就在内存里。
不沿最后一维的 sum（64 x 64 的值的第 1 维）和 softmax 什么也不收：它们仍然结束一个融合组。归约的
结果与急切执行逐位相同；乘积按行分块后与一次大的矩阵乘相差约 1e-5（BLAS 对较小的乘积可能换一种
方式拆分求和），一个分块就覆盖整个结果时逐位相同。

先预测，别运行：g:optimize() 之后，mystery 会启动几个 kernel？]]),
      code = FUSE_CODE,
      scene = passes_scene('g_lerp'),
      expect = [[
chain: 4 kernels, 1572864 bytes read, 1048576 written -> 1 kernel, 524288 read, 262144 written
a * (1 - w) + b * w:
  1  fused(sub,mul,mul,add)                   v4 v3 v1 v2 -> v8
a * exp(w) + b:
  1  exp #1 -> 64x1                           v3 -> v4
  2  fused(mul,add)                           v1 v4 v2 -> v6
(a * b):sum(2):relu(): 3 kernels, 49408 bytes read, 16896 written -> 1 kernel, 32768 read, 256 written
  1  fused(mul,sum,relu)                      v1 v2 -> v5
(a:matmul(b) + w):relu(): 3 kernels, 65792 bytes read, 49152 written -> 1 kernel, 33024 read, 16384 written
  1  fused(matmul,add,relu)                   v1 v2 v3 -> v6]],
      exercise = {
        prompt = say([[
Set `kernels_after` to the number of kernels mystery(a, b, w) launches after g:optimize() (a, b:
64 x 64, w: 64 x 1), or :check N. Count first: which nodes are not elementwise, which elementwise
nodes can share a kernel, which producer is not recomputed, and which elementwise kernels a product
or a reduction takes in.]],
          [[
把 `kernels_after` 设为 g:optimize() 之后 mystery(a, b, w) 启动的 kernel 数（a、b：64 x 64，
w：64 x 1），或者 :check N。先数：哪些节点不是逐元素的，哪些逐元素节点可以共用一个 kernel，
哪个生产者不会被重算，以及乘积或归约会把哪些逐元素 kernel 收进来。]]),
        hints = {
          say('Captured: sub, abs, sqrt, matmul, mul, add, relu, sum — 8 kernels. fuse joins elementwise neighbours; then anchor gives the matmul the elementwise kernel over its result as its epilogue, and offers the sum (over all of t\'s dims: its last dims) the kernel that makes t as its prologue.',
            '捕获到的：sub、abs、sqrt、matmul、mul、add、relu、sum——8 个 kernel。fuse 合并相邻的逐元素节点；然后 anchor 把作用在 matmul 结果上的逐元素 kernel 交给 matmul 当尾声，也让 sum（对 t 的所有维求和，也就是沿最后几维）试着把产生 t 的 kernel 当作前奏。'),
          say('t = abs(a - b) is read by the matmul, which runs between (sub, abs) and the sum: t must be in memory before the matmul. sqrt(w) is 64 x 1 and expensive.',
            't = abs(a - b) 被 matmul 读取，而 matmul 在 (sub, abs) 和 sum 之间运行：t 必须在 matmul 之前写进内存。sqrt(w) 是 64 x 1 的，而且昂贵。'),
        },
        check = check_count,
        solution = [[kernels_after = 4]],
        wrong = { [[kernels_after = 8]], [[kernels_after = 5]], [[kernels_after = 3]], [[kernels_after = 6]], [[kernels_after = 2]] },
      },
    },
    -- 9 ------------------------------------------------------------------------------------
    {
      title = say('Layout optimization, and folding BN into the conv', '布局优化，以及把 BN 折进卷积'),
      text = say([[
Layout optimization chooses how each tensor is laid out in memory. A batch of images can be stored
NCHW (each channel a plane: what Lumen and PyTorch use by default) or NHWC (the channels of a
pixel side by side: what tensor cores and many accelerators want, since a pixel's C values are one
contiguous vector). The strides say which: the code stores the same 1 x 2 x 3 x 4 tensor both
ways. A compiler picks the layout per operator and inserts the transposes between operators that
disagree — or better, propagates one layout through the graph so that few are needed.

Lumen's `layout` pass (after affine and dce, before forward, transpose and fuse) stores activations
channels last where the device prefers it. The CPU prefers NHWC for the im2col convolutions that
multiply a batch of small images at once (more than one image, fewer than 256 output positions
L = OH * OW). In NCHW such a convolution is im2col, columns (N, C*R*S, L); a copy of the columns
to (C*R*S, N, L); one matmul by the weights (K, C*R*S) for the whole batch, (K, N*L), which is the
result (N, K, L) only after a copy back (the transpose pass lets the elementwise kernel that
follows read it in place, instead of that copy). The column copy is a full pass over the largest
tensor of the layer. In NHWC the pass writes two nodes instead: im2col_nhwc, x (N, H, W, C) ->
(N, L, R*S*C), one row per output pixel (F.unfold(x, k, {layout = 'nhwc'}) is the same op), and
a matmul (N*L, R*S*C) x (R*S*C, K), whose product (N*L, K) is the result, in NHWC. The weights
are permuted to (K, R, S, C) once, at the capture, so they must be constants: eval mode, under
lm.no_grad. In a training step the weights are state and the columns are saved for backward:
nothing changes. (A 3x3 convolution of stride 1 with 8 or more input channels runs Winograd on
float32, not im2col, and is left as it is: the code's model uses 5x5 kernels and a stride of 2.)

The result stays NHWC when its readers are all elementwise (they walk any layout) or convolutions
the pass converts; an elementwise node whose result such a convolution reads (the ReLU between
two convolutions) writes it in NHWC. Where a value must change layout — the function's input or
result, a value read by anything else (max pooling straight after a conv without bias) — the pass
inserts a transpose, a copy node, and counts it. A bias add or a ReLU after the conv reads NHWC
and writes NCHW at no cost (the elementwise kernel transposes as it goes), so often only the
input needs one. The cost rule: a convolution is converted only when the column copy it saves
(2 x the columns' bytes, read and written) moves more bytes than the transposes it needs (2 x
the input's bytes, unless the input is NHWC already); for a 1x1 convolution of the input the two
are equal, and it is refused. Devices without the channels-last loop (CUDA, OpenCL) keep NCHW:
the pass asks g:supports('im2col_nhwc', v).

The code compiles a small eval CNN on 8 images of 3 x 12 x 12 twice: with the pass off
(g:optimize({disable = {layout = true}})) and on. Each rewrite is a record of g:optimize()'s
result (and of g.log) with pass 'layout', a sentence (printed) and `transposes`; g.layout sums
them (convs, transposes, bytes saved and added). Side by side, from g:lines(): im2col, copy,
matmul before each elementwise kernel, against im2col_nhwc and the product fused with its bias
and ReLU, and one transpose of the input for the three. In NHWC each row of the product (N*L, K)
is one output pixel, so a panel of rows is a set of whole images, and the anchor pass (step 8)
can run the epilogue on each panel while it is in the cache; in NCHW the elementwise kernel reads
the product (K, N*L) transposed, so its rows are not the product's and it stays a kernel of its
own. Then the kernels and bytes of both, from g:cost(), and two small cases: a conv without bias
before max pooling, and a 1x1 conv. bench/compile (section 4) times a larger CNN both ways.

A substitution every inference compiler makes: a convolution followed by batch norm in eval mode
is one convolution. BN in eval mode is per channel y = (z - mu) * gamma / sqrt(var + eps) + beta
with fixed running statistics, and z = W * x + b is linear in W and b, so

  W' = W * gamma / sqrt(var + eps)     (one factor per output channel)
  b' = (b - mu) * gamma / sqrt(var + eps) + beta

Lumen's `affine` pass makes this substitution on the captured kernels: it looks for a product with
constant weights (the conv's im2col matmul, a Winograd conv, a linear layer) whose result then goes
through additions, subtractions, multiplications and divisions by per-channel constants — the bias,
then BN in eval — computes each channel's y * s + t, scales the weights by s and leaves one
addition of t. It recognises the arithmetic, not the word BatchNorm (BN in training mode is not
folded: its statistics are state the step writes). The last line of the code counts the kernels
and bytes of conv + BN after the passes and of your folded conv: they should be equal. Write
fold_bn, the same algebra by hand; the code prints how far your folded conv is from conv + BN.]],
        [[
布局优化决定每个张量在内存中怎样排布。一批图像可以按 NCHW 存（每个通道一个平面：Lumen 和
PyTorch 的默认方式），也可以按 NHWC 存（一个像素的各通道挨在一起：张量核心和许多加速器喜欢这样，
因为一个像素的 C 个值就是一个连续的向量）。步长说明是哪一种：代码把同一个 1 x 2 x 3 x 4 的张量
按两种方式存储。编译器为每个算子选择布局，并在意见不合的算子之间插入转置——更好的做法是让一种
布局在图中传播下去，少插转置。

Lumen 的 `layout` pass（在 affine 和 dce 之后，forward、transpose 和 fuse 之前）在设备偏好通道在后
的地方把激活值按 NHWC 存。CPU 对一次乘一批小图像的 im2col 卷积（多于一张图像，输出位置
L = OH * OW 少于 256 个）偏好 NHWC。按 NCHW，这样的卷积是：im2col，得到列 (N, C*R*S, L)；把列
复制成 (C*R*S, N, L)；用权重 (K, C*R*S) 对整批做一次 matmul，得到 (K, N*L)，它要再复制回去才是
结果 (N, K, L)（transpose pass 让后面的逐元素 kernel 直接按原样读它，省掉这次复制）。列的那次
复制是对这一层最大的张量的完整一遍读写。按 NHWC，这个 pass 改写成两个节点：im2col_nhwc，
x (N, H, W, C) -> (N, L, R*S*C)，每个输出像素一行（F.unfold(x, k, {layout = 'nhwc'}) 是同一个
算子），以及一个 matmul (N*L, R*S*C) x (R*S*C, K)，它的乘积 (N*L, K) 就是按 NHWC 存的结果。权重在
捕获时一次性重排成 (K, R, S, C)，所以它们必须是常量：推理模式，在 lm.no_grad 之下。在训练步里
权重是状态，列要留给反向传播：什么都不改。（步长为 1、输入通道不少于 8 的 3x3 卷积在 float32 上
走 Winograd 而不是 im2col，这个 pass 不动它：代码里的模型用的是 5x5 卷积核和步长 2。）

当结果的读者全是逐元素节点（它们能按任何布局遍历）或同样被这个 pass 转换的卷积时，结果保持
NHWC；如果一个逐元素节点的结果被这样的卷积读取（两个卷积之间的 ReLU），它就按 NHWC 写这个结果。
一个值必须换布局的地方——函数的输入或结果，被其他节点读取的值（紧跟在无偏置卷积后面的最大池化）
——这个 pass 插入一次转置（一个 copy 节点），并计数。卷积后面的加偏置或 ReLU 读 NHWC、写 NCHW，
不花额外代价（逐元素 kernel 边算边转置），所以常常只有输入需要转置。代价规则：只有当一个卷积省下
的列复制（列的字节数的 2 倍，读加写）搬动的字节多于它需要的转置（输入字节数的 2 倍，除非输入已经
是 NHWC）时，才转换它；对输入做的 1x1 卷积两者相等，于是不转换。没有通道在后循环的设备（CUDA、
OpenCL）保持 NCHW：这个 pass 会问 g:supports('im2col_nhwc', v)。

代码把一个推理模式的小 CNN 在 8 张 3 x 12 x 12 的图像上编译两次：关掉这个 pass
（g:optimize({disable = {layout = true}})）和打开它。每次改写都是 g:optimize() 返回值（以及
g.log）中的一条记录，pass 为 'layout'，带一句说明（代码打印它）和 `transposes`；g.layout 是它们的
合计（convs、transposes、省下和增加的字节数）。并排列出的是 g:lines()：每个逐元素 kernel 之前
是 im2col、copy、matmul，对比 im2col_nhwc 和与偏置、ReLU 融合在一起的乘积，三个卷积加起来只有输入的
一次转置。按 NHWC，乘积 (N*L, K) 的每一行是一个输出像素，所以一段连续的行就是若干张完整的图像，
anchor pass（第 8 步）可以趁这段行还在缓存里时对它运行尾声（epilogue）；按 NCHW，逐元素 kernel
是转置着读乘积 (K, N*L) 的，它的行不是乘积的行，只能单独作为一个 kernel。然后是两者由 g:cost()
给出的 kernel 数和字节数，以及两个小例子：无偏置卷积后接最大池化，和一个 1x1 卷积。
bench/compile（第 4 部分）对一个更大的 CNN 两种方式都计时。

每个推理编译器都会做的一个子图替换：卷积后面跟一个推理模式（eval）的批归一化，就等于一个卷积。
推理模式的 BN 按通道计算 y = (z - mu) * gamma / sqrt(var + eps) + beta，统计量是固定的滑动平均；
而 z = W * x + b 对 W 和 b 是线性的，所以

  W' = W * gamma / sqrt(var + eps)     （每个输出通道一个因子）
  b' = (b - mu) * gamma / sqrt(var + eps) + beta

Lumen 的 `affine` pass 在捕获到的 kernel 上做这个替换：它寻找权重为常量的乘积（卷积的 im2col
矩阵乘、Winograd 卷积、全连接层），其结果随后依次经过按通道常量的加、减、乘、除——先是偏置，再是
推理模式的 BN——算出每个通道的 y * s + t，把权重乘以 s，只留下一次加 t。它识别的是这段算术，而不是
BatchNorm 这个名字（训练模式的 BN 不会被折叠：它的统计量是训练步会写的状态）。代码最后一行数出经过
各个 pass 之后的卷积 + BN 与你折叠后的卷积各自的 kernel 数和字节数：两者应当相等。写出 fold_bn，
也就是手工做同样的代数；代码会打印你折叠后的卷积与卷积 + BN 相差多少。]]),
      code = BN_CODE,
      exercise = {
        prompt = say([[
Write `fold_bn(w, b, bn)`: for a conv's weight w (K x C x R x S) and bias b (K), and a
BatchNorm2d bn in eval mode (bn.running_mean, bn.running_var, bn.weight = gamma, bn.bias = beta,
bn.eps), return the folded conv's weight and bias. The check compares F.conv2d with yours against
bn(conv(x)) on four random convolutions.]],
          [[
写出 `fold_bn(w, b, bn)`：对卷积的权重 w（K x C x R x S）和偏置 b（K），以及推理模式的
BatchNorm2d bn（bn.running_mean、bn.running_var、bn.weight = gamma、bn.bias = beta、bn.eps），
返回折叠后卷积的权重和偏置。检查在四个随机卷积上用你的结果调用 F.conv2d，与 bn(conv(x)) 比较。]]),
        hints = {
          say('local s = bn.weight / (bn.running_var + bn.eps):sqrt() — a vector of K factors.',
            'local s = bn.weight / (bn.running_var + bn.eps):sqrt()——K 个因子组成的向量。'),
          say('w * s:reshape(-1, 1, 1, 1) scales each filter (the output channel is dim 1 of w); the bias: (b - bn.running_mean) * s + bn.bias.',
            'w * s:reshape(-1, 1, 1, 1) 缩放每个滤波器（输出通道是 w 的第 1 维）；偏置：(b - bn.running_mean) * s + bn.bias。'),
        },
        check = check_bn,
        solution = [[
function fold_bn(w, b, bn)
  local s = bn.weight / (bn.running_var + bn.eps):sqrt()
  return w * s:reshape(-1, 1, 1, 1), (b - bn.running_mean) * s + bn.bias
end
]],
        wrong = {
          [[
function fold_bn(w, b, bn)             -- divided by the variance, not the standard deviation
  local s = bn.weight / (bn.running_var + bn.eps)
  return w * s:reshape(-1, 1, 1, 1), (b - bn.running_mean) * s + bn.bias
end
]],
          [[
function fold_bn(w, b, bn)             -- eps forgotten
  local s = bn.weight / bn.running_var:sqrt()
  return w * s:reshape(-1, 1, 1, 1), (b - bn.running_mean) * s + bn.bias
end
]],
          [[
function fold_bn(w, b, bn)             -- the bias not scaled
  local s = bn.weight / (bn.running_var + bn.eps):sqrt()
  return w * s:reshape(-1, 1, 1, 1), b - bn.running_mean + bn.bias
end
]],
          [[
function fold_bn(w, b, bn)             -- scaled along the input channels
  local s = bn.weight / (bn.running_var + bn.eps):sqrt()
  return w * s:reshape(1, -1, 1, 1), (b - bn.running_mean) * s + bn.bias
end
]],
          [[
function fold_bn(w, b, bn)             -- the conv's own bias dropped
  local s = bn.weight / (bn.running_var + bn.eps):sqrt()
  return w * s:reshape(-1, 1, 1, 1), (lm.zeros(b:shape()) - bn.running_mean) * s + bn.bias
end
]],
        },
      },
    },
    -- 10 -----------------------------------------------------------------------------------
    {
      title = say('Operator level: auto-tuning', '算子层级：自动调优'),
      text = say([[
Below the graph, each operator is a loop nest with knobs — tile sizes, loop orders, unrolling —
and the best values depend on the shape and the machine. The notes name two ways to choose them:
search (TVM's AutoTVM and Ansor, Triton's autotune: run candidates, keep the fastest) and the
polyhedral model (Tensor Comprehensions, Pluto: reason about the loop nest's dependences and
derive a schedule).

lm.tune searches. On the emulator (backend 'emu') its value is the tiled GPU matmul's modelled
cycles — deterministic, so the ranking is the same on every machine; each candidate is checked
against the default's result before it may win (docs/tune.md). For 40 x 40 x 40 the default tile
of 16 leaves the last tiles of each dimension half empty (40 = 16 + 16 + 8): tile 8 divides 40
and wins, by the factor the code prints. On the CPU (backend 'cpu', the default) the knobs are
the tile sizes and loop order of the CPU loop, and the value is measured time. The picture is the
winner's run on the emulator.]],
        [[
在图之下，每个算子都是一个带旋钮的循环嵌套——分块大小、循环顺序、展开——最好的取值取决于形状
和机器。笔记给出两类选择方法：基于搜索的方法（TVM 的 AutoTVM 和 Ansor、Triton 的 autotune：
运行候选、保留最快的）和基于多面体模型的方法（Tensor Comprehensions、Pluto：分析循环嵌套的依赖，
推导出调度）。

lm.tune 做的是搜索。在模拟器上（backend 'emu'）它的指标是分块 GPU 矩阵乘的建模周期数——确定的，
所以在每台机器上排名都一样；每个候选在可能胜出之前都要与默认方案的结果核对（docs/tune.md）。
对 40 x 40 x 40，默认的分块 16 让每一维的最后一块空了一半（40 = 16 + 16 + 8）：分块 8 能整除 40，
于是胜出，快多少见代码的输出。在 CPU 上（backend 'cpu'，默认），旋钮是 CPU 循环的分块大小和循环
顺序，指标是实测时间。画面是胜出者在模拟器上的运行。]]),
      code = TUNE_CODE,
      scene = tune_scene,
      expect = [[
lm.tune matmul 40x40x40 on the emulator (emulated, modelled cycles): 6 candidates
 1  tile  8      8700 cycles   1.74x the default
 2  tile 16     15166 cycles   1.00x the default  (default)
 3  tile 32     25638 cycles   0.59x the default
 4  tile  4     40992 cycles   0.37x the default
 5  tile  2    242372 cycles   0.06x the default
 6  tile  1   1772100 cycles   0.01x the default
winner: tile 8, 8700 modelled cycles; same product as lm.matmul: true]],
    },
  },
}
