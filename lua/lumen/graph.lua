--[[
lumen.graph — lm.compile and lm.graph (AICS ch. 4-5): a function's kernels captured as a graph,
rewritten by graph-level passes, and run again as a program.

  g = lm.graph.capture(fn, ...)      runs fn(...) once, recording every kernel it launches (the
                                     forward ops, the backward rules autograd runs, the optimizers'
                                     updates, copies, fills, random draws): the graph, unoptimized
  g:optimize([opts]) -> log          runs the passes (g.order, default M.order) and lists each
                                     rewrite: {pass=, action=, nodes=, text=}
  g:run(...) -> results..., info     runs the program (info.kernels, bytes_read, bytes_written)
  g:cost() -> info                   what a run launches, without running
  g:print(), g:dot()                 the graph as text, as Graphviz
  f = lm.compile(fn [, example_inputs] [, opts])
  f(...)                             the first call (and a call with new dtypes, shapes, devices
                                     or other Lua values) runs fn eagerly under a capture and keeps
                                     the optimized program; later calls run the program.
                                     f.info: the last call's kernels and bytes; f.stats: calls,
                                     captures, retraces (with why), breaks

What a capture is (include/lumen/graph.h): nodes over values (a storage and a geometry); views
launch nothing and appear as the geometry a node reads. Storages: input (rebound at each run),
temp (made by a node; reused by every run, except a result's, which is fresh each run), state
(from before the capture and written: parameters, gradients, optimizer states: updated in place
as the function did), const (read only: weights of a frozen model, tensors the host filled).

What breaks a capture (the function then runs eagerly, with a message naming the place): a
value read on the host (x:item(), x:tolist(), printing a tensor, lm.equal), print / io.write,
an input changed in place, an input that requires grad, a result that requires grad (compiled
calls return plain tensors: put backward and the optimizer step in the function, or run under
lm.no_grad), a tensor the host filled during the capture that a kernel later changes in place,
clip_grad_norm_, count_correct. Lua numbers the function uses are baked into the program, as in
any trace (torch.jit.trace): a number passed as an argument is part of the guard (another value
re-traces); the optimizers' step count and learning rate are re-read at every run.

The passes (each a function M.passes.NAME(g, opts) -> rewrites; the order is g.order, a list the
user may change; each can be switched off: opts.disable = {fuse = true}, or the environment
LUMEN_DISABLE_FUSION=1 and LUMEN_DISABLE_PASSES=cse,fold):
  dce       dead-code elimination: nodes whose results nothing needs (random draws stay: they
            advance the generator)
  fold      constant folding: nodes that read only constants run once, at the capture; their
            results are constants (never a random draw, never a result of the function)
  cse       common-subexpression elimination: a node equal to an earlier one (op, parameters,
            inputs, result layout) with no write to its inputs between them (never random draws
            or in-place nodes)
  simplify  algebraic simplification: x*1, x/1, x+0, x-0 (a constant of ones or zeros), x-x on
            integers (on floats inf-inf is NaN: kept), neg(neg(x)), pow(x, 1), a copy into the
            same layout (what transpose(transpose(x)) or reshape(reshape(x)) leave)
  affine    conv/linear + BatchNorm in eval: a product with constant weights followed by per-
            channel additions and multiplications by constants (a bias, then BN) is y * s + t
            per channel: the weights are scaled by s (new constants), the last add takes t
  layout    channels last where the device prefers it: the CPU's im2col convolutions of a batch of
            small images (whose NCHW columns are copied before the GEMM) become im2col_nhwc + one
            GEMM whose product is the NHWC result; readers keep NHWC, transposes inserted where a
            value must change layout are counted (g.layout); only when the bytes saved exceed them
  forward   a copy of a value nothing else reads: its producer writes the destination itself
            (autograd's copies of gradients into .grad), bit for bit
  fuse      elementwise fusion: chains and trees of elementwise nodes (unary, binary, where,
            add_scaled) into one kernel that reads its inputs and writes its needed results once;
            broadcast-aware (a producer of a smaller shape is recomputed per element when cheap:
            `a*(1-w)+b*w` fuses whole); an expensive producer (exp, log, sqrt, div, pow...) read
            through a broadcast is not recomputed: it stays its own kernel (XLA's rule)
Read next: docs/graph.md, include/lumen/graph.h, src/ops/program.c, src/backend/cpu/fused.c.
]]
local lm = require 'lumen'
local G = lm._graph

local M = {}
M.passes = {}
M.order = { 'dce', 'fold', 'cse', 'simplify', 'affine', 'dce', 'layout', 'forward', 'transpose', 'fuse', 'anchor' } -- the default order of g:optimize

local MAX_INSTR, MAX_REGS, MAX_IN, MAX_OUT, MAX_OPS = 48, 24, 7, 4, 8 -- exec.h, iter (lmi.h)

-- ---------------------------------------------------------------- small helpers

local function shape_s(s)
  if #s == 0 then return '()' end
  return table.concat(s, 'x')
end

local function numel(s)
  local n = 1
  for _, d in ipairs(s) do n = n * d end
  return n
end

local function same_list(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- whether shape a broadcasts to shape b (right-aligned)
local function broadcasts(a, b)
  if #a > #b then return false end
  for i = 0, #a - 1 do
    local x, y = a[#a - i], b[#b - i]
    if x ~= y and x ~= 1 then return false end
  end
  return true
end

local function env_list(name)
  local s, t = os.getenv(name), {}
  if s then for w in s:gmatch('[%w_]+') do t[w] = true end end
  return t
end

-- Whether value x (of g.values) is C-contiguous.
local function contiguous(x)
  local st = 1
  for i = #x.shape, 1, -1 do
    if x.shape[i] > 1 and x.stride[i] ~= st then return false end
    st = st * x.shape[i]
  end
  return true
end

-- The strides at which `shape` shows x's elements in x's order (a reshape that is a view: an NHWC
-- value's (N, C, H*W) as (N, C, H, W)), or nil (program.c's restride, the same rule).
local function restride(x, shape)
  local n = numel(shape)
  if n ~= numel(x.shape) then return nil end
  local out = {}
  if n == 0 or #x.shape == 0 then
    local st = 1
    for d = #shape, 1, -1 do out[d] = st; st = st * shape[d] end
    return out
  end
  local d, base, run = #shape, x.stride[#x.shape], 1
  for i = #x.shape, 1, -1 do
    run = run * x.shape[i]
    if i == 1 or (x.shape[i - 1] ~= 1 and x.stride[i - 1] ~= run * base) then
      local got = 1
      while d >= 1 and (got < run or shape[d] == 1) do
        out[d] = got * base
        got = got * shape[d]
        d = d - 1
      end
      if got ~= run then return nil end
      if i > 1 then base, run = x.stride[i - 1], 1 end
    end
  end
  return d == 0 and out or nil
end

-- Two views of the same memory holding the same elements in the same order (a reshape).
local function alias(a, b)
  if a.storage ~= b.storage or a.offset ~= b.offset or a.dtype ~= b.dtype then return false end
  local st = restride(a, b.shape)
  if not st then return false end
  for i, d in ipairs(b.shape) do if d > 1 and st[i] ~= b.stride[i] then return false end end
  return true
end

-- ---------------------------------------------------------------- the graph

local Graph = {}
Graph.__index = Graph
M.Graph = Graph

--- The graph of a capture (an lm._graph capture object).
function M.from_capture(cap)
  local k = cap:counts()
  local g = setmetatable({ cap = cap, nodes = {}, values = {}, storages = {}, inputs = k.inputs,
    outputs = {}, subst = {}, log = {}, folded = {}, bindings = {}, order = {} }, Graph)
  for i, p in ipairs(M.order) do g.order[i] = p end
  for v = 1, k.values do g.values[v] = cap:value(v) end
  for s = 1, k.storages do g.storages[s] = cap:storage(s) end
  for i = 1, k.nodes do
    local n = cap:node(i)
    n.id = i
    g.nodes[i] = n
  end
  for i, v in ipairs(k.outputs) do g.outputs[i] = v end
  g:reset()
  return g
end

--- Back to the captured graph: every node, no rewrite.
function Graph:reset()
  self.live, self.subst, self.folded, self.log, self._program = {}, {}, {}, {}, nil
  self.layout, self._nhwc = nil, nil
  for i, n in ipairs(self.nodes) do
    local ins, outs = {}, {}
    for k, v in ipairs(n.inputs) do ins[k] = v end
    for _, v in ipairs(n.outputs) do if v then outs[#outs + 1] = v end end -- absent optional outputs dropped
    if not n.added then self.live[#self.live + 1] = { id = i, node = n, inputs = ins, outputs = outs } end
  end
  return self
end

--- The value v stands for after the substitutions the passes made.
function Graph:resolve(v)
  if not v then return v end
  local seen = 0
  while self.subst[v] do
    v = self.subst[v]
    seen = seen + 1
    if seen > #self.values then error('lm.graph: a cycle of substitutions at value ' .. v, 2) end
  end
  return v
end

function Graph:storage_of(v) return self.storages[self.values[v].storage] end
function Graph:tensor(v) return self.cap:tensor(v) end

-- storage index -> true for the storages the results live on
local function output_storages(g)
  local t = {}
  for _, v in ipairs(g.outputs) do t[g.values[g:resolve(v)].storage] = true end
  return t
end

-- storage index -> how many live entries write it
local function write_counts(g)
  local w = {}
  for _, e in ipairs(g.live) do
    for _, v in ipairs(e.outputs) do
      local s = g.values[v].storage
      w[s] = (w[s] or 0) + 1
    end
  end
  return w
end

local function entry_members(e) return e.fused or { e } end

local function inplace(g, e)
  for _, v in ipairs(e.outputs) do
    for _, u in ipairs(e.inputs) do
      if u and g.values[g:resolve(u)].storage == g.values[v].storage then return true end
    end
  end
  return false
end

local function describe(g, e)
  if e.fused then
    local ops = {}
    for _, m in ipairs(e.fused) do ops[#ops + 1] = m.node.op end
    return 'fused(' .. table.concat(ops, ',') .. ')'
  end
  local n = e.node
  local outs = {}
  for _, v in ipairs(e.outputs) do outs[#outs + 1] = shape_s(g.values[v].shape) end
  return string.format('%s #%d -> %s', n.op, n.id, table.concat(outs, ','))
end

-- One rewrite, as the log keeps it: what changed (extra: remove = node ids no longer run, subst =
-- {{from, to}} values replaced, folded = storages made constants, group = {members =, outputs =}
-- a fused group), so that any prefix of the log can be replayed (Graph:snapshot).
local function record(g, pass, action, ids, text, extra)
  local r = { pass = pass, action = action, nodes = ids, text = text }
  for k, v in pairs(extra or {}) do r[k] = v end
  g.log[#g.log + 1] = r
  g._program = nil
end

local function member_ids(e)
  local ids = {}
  for _, m in ipairs(entry_members(e)) do ids[#ids + 1] = m.id end
  return ids
end

local function out_storages(g, e)
  local t = {}
  for _, v in ipairs(e.outputs) do t[#t + 1] = g.values[v].storage end
  return t
end

local function remove_entries(g, drop)
  local keep = {}
  for i, e in ipairs(g.live) do if not drop[i] then keep[#keep + 1] = e end end
  g.live = keep
end

-- Whether value v is the only view of its storage that live entries and the results read: a
-- rewrite that makes v's readers read another value cannot reach readers of other views (a
-- reshape of v is another value over the same memory).
local function sole_view(g, v)
  local s = g.values[v].storage
  for _, e in ipairs(g.live) do
    for _, m in ipairs(entry_members(e)) do
      for _, u in ipairs(m.inputs) do
        if u then
          u = g:resolve(u)
          if u ~= v and g.values[u].storage == s then return false end
        end
      end
    end
  end
  for _, u in ipairs(g.outputs) do
    u = g:resolve(u)
    if u ~= v and g.values[u].storage == s then return false end
  end
  return true
end

-- ---------------------------------------------------------------- dce

function M.passes.dce(g)
  local live_st = output_storages(g)
  for s, st in ipairs(g.storages) do
    if st.kind == 'state' or st.kind == 'input' or st.escapes then live_st[s] = true end
  end
  local drop, n = {}, 0
  for i = #g.live, 1, -1 do
    local e = g.live[i]
    local alive = false
    for _, m in ipairs(entry_members(e)) do if m.node.kind == 'random' then alive = true end end
    for _, v in ipairs(e.outputs) do if live_st[g.values[v].storage] then alive = true end end
    if alive then
      for _, m in ipairs(entry_members(e)) do
        for _, v in ipairs(m.inputs) do if v then live_st[g.values[g:resolve(v)].storage] = true end end
      end
    else
      drop[i] = true
      n = n + 1
      record(g, 'dce', 'remove', member_ids(e), describe(g, e) .. ': nothing reads its result',
        { remove = member_ids(e) })
    end
  end
  remove_entries(g, drop)
  return n
end

-- ---------------------------------------------------------------- fold

function M.passes.fold(g)
  local const = {}
  for s, st in ipairs(g.storages) do if st.kind == 'const' or g.folded[s] then const[s] = true end end
  local outs, w = output_storages(g), write_counts(g)
  local drop, n = {}, 0
  for i, e in ipairs(g.live) do
    local ok = not e.fused and e.node.kind ~= 'random' and not inplace(g, e)
    for _, v in ipairs(ok and e.inputs or {}) do
      if v and not const[g.values[g:resolve(v)].storage] then ok = false end
    end
    for _, v in ipairs(ok and e.outputs or {}) do
      local s = g.values[v].storage
      if g.storages[s].kind ~= 'temp' or w[s] ~= 1 or outs[s] then ok = false end
    end
    if ok then
      for _, v in ipairs(e.outputs) do
        const[g.values[v].storage] = true
        g.folded[g.values[v].storage] = true
      end
      drop[i] = true
      n = n + 1
      record(g, 'fold', 'fold', { e.id }, describe(g, e) .. ': reads only constants; computed once, at the capture',
        { remove = { e.id }, folded = out_storages(g, e) })
    end
  end
  remove_entries(g, drop)
  return n
end

-- ---------------------------------------------------------------- cse

local function ser(x)
  if type(x) == 'table' then
    local keys = {}
    for k in pairs(x) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. '=' .. ser(x[k] ~= nil and x[k] or x[tonumber(k)]) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  if type(x) == 'number' then return string.format('%.17g', x) end
  return tostring(x)
end

local function geometry(g, v)
  local x = g.values[v]
  return x.dtype .. ':' .. shape_s(x.shape) .. ':' .. table.concat(x.stride, ',') .. ':' .. x.offset
end

function M.passes.cse(g)
  local outs, w = output_storages(g), write_counts(g)
  local seen, drop, n = {}, {}, 0
  local writes_at = {} -- storage -> list of live positions writing it
  for i, e in ipairs(g.live) do
    for _, v in ipairs(e.outputs) do
      local s = g.values[v].storage
      writes_at[s] = writes_at[s] or {}
      table.insert(writes_at[s], i)
    end
  end
  local function written_between(s, a, b)
    for _, p in ipairs(writes_at[s] or {}) do if p > a and p < b then return true end end
    return false
  end
  for i, e in ipairs(g.live) do
    local ok = not e.fused and e.node.kind ~= 'random' and not inplace(g, e)
    for _, v in ipairs(ok and e.outputs or {}) do
      local s = g.values[v].storage
      if g.storages[s].kind ~= 'temp' or w[s] ~= 1 or outs[s] or g.storages[s].escapes then ok = false end
    end
    if ok then
      local sig = g:signature(e)
      local j = seen[sig]
      local clean = j ~= nil
      for _, v in ipairs(clean and e.outputs or {}) do
        if not sole_view(g, v) then clean = false end
      end
      for _, v in ipairs(clean and e.inputs or {}) do
        if v and written_between(g.values[g:resolve(v)].storage, j, i) then clean = false end
      end
      if clean then
        local first = g.live[j]
        local pairs_ = {}
        for k, v in ipairs(e.outputs) do
          g.subst[v] = first.outputs[k]
          pairs_[k] = { v, first.outputs[k] }
        end
        drop[i] = true
        n = n + 1
        record(g, 'cse', 'merge', { first.id, e.id }, string.format('%s computes what %s did: its result is reused',
          describe(g, e), describe(g, first)), { remove = { e.id }, subst = pairs_ })
      else
        seen[sig] = i
      end
    end
  end
  remove_entries(g, drop)
  return n
end

-- ---------------------------------------------------------------- simplify

-- Whether constant value v holds `c` in every element (small constants only).
local function const_all(g, v, c)
  local st = g:storage_of(v)
  if not (st.kind == 'const' or g.folded[g.values[v].storage]) then return false end
  if numel(g.values[v].shape) > 65536 then return false end
  local t = g:tensor(v)
  local ok = t:numel() > 0 and lm.equal(t, lm.full_like(t, c))
  return ok
end

function M.passes.simplify(g)
  local outs, w = output_storages(g), write_counts(g)
  local producer = {} -- value -> live entry
  for _, e in ipairs(g.live) do for _, v in ipairs(e.outputs) do producer[v] = e end end
  local last_write = {}
  for i, e in ipairs(g.live) do for _, v in ipairs(e.outputs) do last_write[g.values[v].storage] = i end end
  local drop, n = {}, 0
  for i, e in ipairs(g.live) do
    local n_ = e.node
    local out = e.outputs[1]
    local ok = not e.fused and n_.kind ~= 'random' and #e.outputs == 1 and not inplace(g, e)
    local s = ok and g.values[out].storage
    if ok and (g.storages[s].kind ~= 'temp' or w[s] ~= 1 or outs[s] or g.storages[s].escapes) then ok = false end
    local replace, why, zero
    if ok then
      local a, b = g:resolve(e.inputs[1]), g:resolve(e.inputs[2])
      local ov = g.values[out]
      local function fits(v)
        local x = g.values[v]
        return x.dtype == ov.dtype and same_list(x.shape, ov.shape) and x.device == ov.device
      end
      local op = n_.op
      if op == 'mul' and b and fits(a) and const_all(g, b, 1) then replace, why = a, 'x * 1 = x'
      elseif op == 'mul' and b and fits(b) and const_all(g, a, 1) then replace, why = b, '1 * x = x'
      elseif op == 'div' and b and fits(a) and const_all(g, b, 1) then replace, why = a, 'x / 1 = x'
      elseif op == 'add' and b and fits(a) and const_all(g, b, 0) then replace, why = a, 'x + 0 = x'
      elseif op == 'add' and b and fits(b) and const_all(g, a, 0) then replace, why = b, '0 + x = x'
      elseif op == 'sub' and b and fits(a) and const_all(g, b, 0) then replace, why = a, 'x - 0 = x'
      elseif op == 'sub' and a == b and not ov.dtype:find('float') then zero, why = true, 'x - x = 0 (integers)'
      elseif op == 'pow_scalar' and n_.params.exponent == 1 and fits(a) then replace, why = a, 'x ^ 1 = x'
      elseif op == 'neg' and producer[a] and not producer[a].fused and producer[a].node.op == 'neg' then
        local x = g:resolve(producer[a].inputs[1])
        if fits(x) and (last_write[g.values[x].storage] or 0) < i then replace, why = x, '-(-x) = x' end
      elseif n_.kind == 'copy' and a and g.values[a].dtype == ov.dtype and same_list(g.values[a].shape, ov.shape)
        and same_list(g.values[a].stride, ov.stride) and (last_write[g.values[a].storage] or 0) < i then
        replace, why = a, 'a copy into the same layout (what transpose(transpose(x)) or reshape chains leave)'
      end
    end
    if replace and (not sole_view(g, out) or (last_write[g.values[replace].storage] or 0) > i) then
      replace, why = nil, nil -- another view of the result is read, or the replacement changes later
    end
    if replace then
      g.subst[out] = replace
      drop[i] = true
      n = n + 1
      record(g, 'simplify', 'replace', { e.id }, describe(g, e) .. ': ' .. why,
        { remove = { e.id }, subst = { { out, replace } } })
    elseif zero then
      g.folded[s] = true -- the capture computed x - x = 0 there: a constant from now on
      drop[i] = true
      n = n + 1
      record(g, 'simplify', 'fold', { e.id }, describe(g, e) .. ': ' .. why, { remove = { e.id }, folded = { s } })
    end
  end
  remove_entries(g, drop)
  return n
end

-- ---------------------------------------------------------------- forward (copies)

-- Offers each plain copy of the live list to try(i, e, S, D, outs): e the entry at position i, S its
-- source (after the substitutions), D its destination, outs the results' storages. A try that
-- rewrote the copy away returns true and the copy leaves g.live. Returns how many went.
local function each_copy(g, try)
  local n, outs, i = 0, output_storages(g), 1
  while i <= #g.live do
    local e = g.live[i]
    if not e.fused and e.node.kind == 'copy' and #e.outputs == 1 and e.inputs[1]
      and try(i, e, g:resolve(e.inputs[1]), e.outputs[1], outs) then
      table.remove(g.live, i)
      n = n + 1
    else
      i = i + 1
    end
  end
  return n
end

--[[
A copy of a value that nothing else reads, into memory of the same layout that nothing touches
between the value's producer and the copy: the producer writes the destination itself, and the
copy goes (the gradients autograd copies into .grad: a matmul's result copied whole). Bit for bit
the same numbers, one pass over memory fewer.
]]
function M.passes.forward(g)
  return each_copy(g, function(i, e, S, D, outs)
    local sv, dv = g.values[S], g.values[D]
    local ss, ds = sv.storage, dv.storage
    local ok = ss ~= ds and sv.dtype == dv.dtype and same_list(sv.shape, dv.shape) and same_list(sv.stride, dv.stride)
      and contiguous(sv) and g.storages[ss].kind == 'temp' and not g.storages[ss].escapes and not outs[ss]
      and g:writers(S) == 1 and g:writers(D) == 1 and g.storages[ds].kind ~= 'input'
    -- the producer: the one live entry writing S, as its whole result
    local pj, pk
    for j = 1, ok and i - 1 or 0 do
      local f = g.live[j]
      for k, v in ipairs(f.outputs) do
        if g.values[v].storage == ss then
          if v == S and not f.fused and #f.node.outputs == 1 and not inplace(g, f) then pj, pk = j, k else ok = false end
        end
      end
    end
    ok = ok and pj ~= nil
    -- nothing else reads S; nothing between the producer and the copy reads or writes D's memory
    for j = 1, ok and #g.live or 0 do
      local f = g.live[j]
      for _, m in ipairs(entry_members(f)) do
        for _, u in ipairs(m.inputs) do
          u = u and g:resolve(u)
          if u and g.values[u].storage == ss and j ~= i then ok = false end
          if u and g.values[u].storage == ds and j >= pj and j < i then ok = false end
        end
      end
      if j > pj and j < i then
        for _, v in ipairs(f.outputs) do if g.values[v].storage == ds then ok = false end end
      end
    end
    if not ok then return false end
    local f = g.live[pj]
    f.outputs[pk] = D
    record(g, 'forward', 'forward', { f.id, e.id }, string.format('%s writes %s where %s copied it: the copy goes',
      describe(g, f), shape_s(dv.shape), describe(g, e)),
      { remove = { e.id }, outputs = { { f.id, pk, D } } })
    return true
  end)
end

-- ---------------------------------------------------------------- transpose (layout copies)

--- transpose: a copy that changes only the layout (a transpose or permutation made contiguous:
--- im2col's product back to N, C, H*W) and whose result only elementwise nodes read, as that very
--- value, goes: they read its source through the strided view, which the fused kernel walks as it
--- walks any layout. One pass over memory (a read and a write) fewer per copy; each one logged.
function M.passes.transpose(g)
  return each_copy(g, function(i, e, S, D, outs)
    local sv, dv = g.values[S], g.values[D]
    local ds = dv.storage
    local ok = sv.storage ~= ds and sv.dtype == dv.dtype and same_list(sv.shape, dv.shape)
      and not same_list(sv.stride, dv.stride) and g.storages[ds].kind == 'temp' and not g.storages[ds].escapes
      and not outs[ds] and g:writers(D) == 1
    -- every reader of D's memory: a fusable elementwise node reading D itself, after the copy
    local readers = 0
    for j = 1, ok and #g.live or 0 do
      local f = g.live[j]
      for _, m in ipairs(entry_members(f)) do
        for _, u in ipairs(m.inputs) do
          u = u and g:resolve(u)
          if u and g.values[u].storage == ds then
            if u ~= D or j < i or f.anchor or not (f.fused or (m.node.fusable and not inplace(g, m))) then
              ok = false
            else
              readers = readers + 1
            end
          end
        end
      end
    end
    -- nothing after the copy writes the source's memory while a reader still needs it
    local last = i
    for j = i + 1, ok and #g.live or 0 do
      for _, m in ipairs(entry_members(g.live[j])) do
        for _, u in ipairs(m.inputs) do if u and g:resolve(u) == D then last = j end end
      end
    end
    for j = i + 1, ok and last or 0 do
      for _, v in ipairs(g.live[j].outputs) do
        if g.values[v].storage == sv.storage and j < last then ok = false end
      end
    end
    if not (ok and readers > 0) then return false end
    g.subst[D] = S
    record(g, 'transpose', 'remove', { e.id }, string.format('%s changes only the layout (strides %s -> %s): '
      .. 'its %d reader%s read the source in place', describe(g, e), table.concat(sv.stride, ','),
      table.concat(dv.stride, ','), readers, readers == 1 and '' or 's'), { remove = { e.id }, subst = { { D, S } } })
    return true
  end)
end

-- ---------------------------------------------------------------- affine (conv/linear + BatchNorm)

-- The per-channel vector (float64, n entries) constant value v holds, broadcast along dim `ch` of
-- a result of shape `shape`; nil when v varies along another dim.
local function channel_vector(g, v, shape, ch, n)
  local x = g.values[v]
  if numel(x.shape) == 1 then return lm.full({ n }, g:tensor(v):double():item(), { dtype = 'float64' }) end
  local off = #shape - #x.shape
  for i, d in ipairs(x.shape) do
    if d ~= 1 and i + off ~= ch then return nil end
  end
  if numel(x.shape) ~= n then return nil end
  return g:tensor(v):double():reshape(n)
end

--[[
A matmul with constant weights (a convolution's im2col product, or a linear layer's) followed by a
chain of elementwise nodes that each add, subtract, multiply or divide by a per-channel constant —
a bias, then BatchNorm in eval: (y + b - mean) * rsqrt(var + eps) * gamma + beta — is one affine map
per channel, y * s + t. The weights are scaled (W' = W * s per output channel: for BatchNorm
W * gamma / sqrt(var + eps)), the chain's last add takes t (for BatchNorm (b - mean) * gamma /
sqrt(var + eps) + beta), and the nodes before it go. Results agree with the unfolded graph to
rounding (the products are rounded once, in another order).
]]
function M.passes.affine(g)
  local n = 0
  local i = 1
  while i <= #g.live do
    local mm = g.live[i]
    local done = false
    local y, Y, wk, ch, W
    if not mm.fused and (mm.node.op == 'matmul' or mm.node.op == 'mm') and #mm.outputs == 1 then
      local A, B = g:resolve(mm.inputs[1]), g:resolve(mm.inputs[2])
      y = mm.outputs[1]
      Y = g.values[y]
      if g:is_constant(A) and #g.values[A].shape == 2 and #Y.shape >= 2 then wk, ch, W = 1, #Y.shape - 1, A
      elseif g:is_constant(B) and #g.values[B].shape == 2 and #Y.shape >= 1 then wk, ch, W = 2, #Y.shape, B end
    elseif not mm.fused and mm.node.op == 'conv2d_winograd' and #mm.outputs == 1 then
      -- the Winograd convolution: (x, W (Cout, Cin, 3, 3) [, bias]) -> (N, Cout, H, W)
      local Wv = g:resolve(mm.inputs[2])
      y = mm.outputs[1]
      Y = g.values[y]
      local bv = mm.inputs[3] and g:resolve(mm.inputs[3])
      if Wv and g:is_constant(Wv) and #g.values[Wv].shape == 4 and #Y.shape == 4 and (not bv or g:is_constant(bv)) then
        wk, ch, W = 2, 2, Wv
      end
    end
    if wk then
      local C = wk and Y.shape[ch]
      -- the chain: each node the one reader of the previous result, x op constant. Before the
      -- first, the product may be read under another view (a convolution's (N, C, H, W) as (N, C,
      -- H*W)) and copied into another layout (the im2col product (C, N*L) into (N, C, L)): the
      -- channel dim is followed by its size and stride.
      local chain, cur, yin = {}, y, nil
      local chd, chs = ch, Y.stride[ch]
      while wk do
        if g:is_result(cur) or g:writers(cur) ~= 1 then break end
        local nxt, pos, via
        local st = g.values[cur].storage
        local others = 0
        for j = i + 1, #g.live do
          local e = g.live[j]
          for _, m in ipairs(entry_members(e)) do
            for _, u in ipairs(m.inputs) do
              u = u and g:resolve(u)
              if u and g.values[u].storage == st then
                if not nxt then nxt, pos, via = e, j, u elseif e ~= nxt or u ~= via then others = others + 1 end
              end
            end
          end
        end
        for _, u in ipairs(g.outputs) do if g.values[g:resolve(u)].storage == st then others = others + 1 end end
        if not nxt or others > 0 or nxt.fused or #nxt.outputs ~= 1 or inplace(g, nxt) then break end
        local V, cx = g.values[via], g.values[cur]
        local d = chd
        if via ~= cur then -- another view of the same elements: where is the channel dim in it?
          if #chain > 0 or numel(V.shape) ~= numel(cx.shape) or V.offset ~= cx.offset then break end
          d = nil
          for dd = 1, #V.shape do
            if V.stride[dd] == 0 and V.shape[dd] > 1 then d = nil break end
            if V.shape[dd] == C and V.stride[dd] == chs then d = dd end
          end
          if not d then break end
        end
        local out = nxt.outputs[1]
        local O = g.values[out]
        if nxt.node.kind == 'copy' then -- a layout copy before the affine nodes
          if #chain > 0 or O.dtype ~= V.dtype or not contiguous(O) or not same_list(O.shape, V.shape) then break end
          cur, chd, chs = out, d, O.stride[d]
        else
          local op = nxt.node.op
          if op ~= 'add' and op ~= 'sub' and op ~= 'mul' and op ~= 'div' then break end
          local a, b = g:resolve(nxt.inputs[1]), g:resolve(nxt.inputs[2])
          local k = (a == via and b ~= via) and 2 or (b == via and a ~= via) and 1 or nil
          if not k or (k == 1 and (op == 'sub' or op == 'div')) then break end -- c - x, c / x: not y * s + t
          if #chain == 0 then yin = via elseif via ~= cur then break end
          local cv = k == 2 and b or a
          if not g:is_constant(cv) or not same_list(O.shape, g.values[yin].shape) then break end
          local vec = channel_vector(g, cv, O.shape, d, C)
          if not vec then break end
          chain[#chain + 1] = { e = nxt, pos = pos, op = op, k = k, vec = vec }
          cur, chd, chs = out, d, O.stride[d]
        end
      end
      -- the last node must be an add or a subtraction of a constant: it takes t
      while #chain > 0 and chain[#chain].op ~= 'add' and chain[#chain].op ~= 'sub' do chain[#chain] = nil end
      if #chain >= 2 then
        local sv = lm.ones(C, { dtype = 'float64' })
        local tv = lm.zeros(C, { dtype = 'float64' })
        for _, c in ipairs(chain) do
          if c.op == 'add' then tv = tv + c.vec
          elseif c.op == 'sub' then tv = tv - c.vec
          elseif c.op == 'mul' then sv, tv = sv * c.vec, tv * c.vec
          else sv, tv = sv / c.vec, tv / c.vec end
        end
        local last = chain[#chain]
        local Wt = g:tensor(W):double()
        local per = #g.values[W].shape == 4 and sv:reshape(C, 1, 1, 1) or wk == 1 and sv:reshape(C, 1) or sv:reshape(1, C)
        local scaled = (Wt * per):to(g.values[W].dtype):contiguous()
        local cv = last.k == 2 and g:resolve(last.e.inputs[2]) or g:resolve(last.e.inputs[1])
        local cshape = g.values[cv].shape
        local tnew = (last.op == 'sub' and -tv or tv)
        if numel(cshape) ~= C then
          -- the last add's constant is one number (or another shape): t cannot be per channel there
        else
          tnew = tnew:reshape(table.unpack(cshape)):to(g.values[cv].dtype):contiguous()
          local vW = g.cap:add_const(scaled)
          local vt = g.cap:add_const(tnew)
          -- a convolution's own bias is scaled with its weights: (x * W + b) * s = x * (W s) + b s
          local bv = mm.node.op == 'conv2d_winograd' and mm.inputs[3] and g:resolve(mm.inputs[3])
          local vb = bv and g.cap:add_const((g:tensor(bv):double() * sv:reshape(g:tensor(bv):shape()))
            :to(g.values[bv].dtype):contiguous())
          for _, v in ipairs({ vW, vt, vb or nil }) do
            g.values[v] = g.cap:value(v)
            g.storages[g.values[v].storage] = g.cap:storage(g.values[v].storage)
          end
          mm.inputs[wk] = vW
          if vb then mm.inputs[3] = vb end
          last.e.inputs[3 - last.k] = yin
          last.e.inputs[last.k] = vt
          local drop, ids = {}, {}
          for c = 1, #chain - 1 do
            drop[chain[c].pos] = true
            ids[#ids + 1] = chain[c].e.id
          end
          remove_entries(g, drop)
          local ops = {}
          for _, c in ipairs(chain) do ops[#ops + 1] = c.op end
          n = n + 1
          record(g, 'affine', 'fold', ids, string.format('%s -> %s then %s by per-channel constants: one affine map '
            .. 'y * s + t per channel; W\' = W * s, the last %s takes t, %d nodes go', mm.node.op,
            shape_s(Y.shape), table.concat(ops, ', '), last.op, #ids),
            { remove = ids, inputs = { { mm.id, wk, vW }, { last.e.id, last.k, vt }, { last.e.id, 3 - last.k, yin },
              vb and { mm.id, 3, vb } or nil } })
          done = true
        end
      end
    end
    if not done then i = i + 1 end
  end
  return n
end

-- ---------------------------------------------------------------- layout (NCHW -> NHWC)

-- A value the capture made for a pass (a temp, a view, a constant): known to the graph.
local function known_value(g, v)
  if not g.values[v] then g.values[v] = g.cap:value(v) end
  local s = g.values[v].storage
  if not g.storages[s] then g.storages[s] = g.cap:storage(s) end
  return v
end

--- Whether the device value v lives on has a loop for op (a name of lm.ops()) in v's dtype: what
--- a device "prefers" (the layout pass asks for im2col_nhwc).
function Graph:supports(op, v) return self.cap:supports(op, v) end

--- A new temp of the given shape and dtype (static memory of the program): its value.
function Graph:new_temp(shape, dtype)
  local t = lm.empty(shape, { dtype = dtype })
  return known_value(self, self.cap:add_temp(t))
end

--- Value v's memory seen with another geometry (shape, strides, offset in elements): its value.
function Graph:view(v, shape, stride, offset)
  local t = self:tensor(v):as_strided(shape, stride, offset or 0)
  return known_value(self, self.cap:value_of(t))
end

--- Inserts a node a pass made before live position pos: op (a name of the op list, or 'copy'),
--- its parameters and loop dtype from node `like` (an id, or nil), reading and writing value ids.
--- Returns the new live entry (record the rewrite with extra.insert = {{id, before}} so that
--- g:snapshot replays it).
function Graph:insert(pos, op, like, inputs, outputs)
  local id = self.cap:add_node(op, like, inputs, outputs)
  local n = self.cap:node(id)
  n.id = id
  self.nodes[id] = n
  local ins, outs = {}, {}
  for k, v in ipairs(inputs) do ins[k] = v end
  for k, v in ipairs(outputs) do outs[k] = v end
  local e = { id = id, node = n, inputs = ins, outputs = outs }
  table.insert(self.live, pos, e)
  return e
end

-- The channels-last geometry of value u over a contiguous (N, C, ...) buffer of `total` elements:
-- its shape and the strides the same elements have when the buffer is stored (N, ..., C); nil when
-- u is not the whole buffer seen as (N, C, ...).
local function nhwc_strides(g, u, N, C, total)
  local x = g.values[u]
  if x.offset ~= 0 or not contiguous(x) or numel(x.shape) ~= total or #x.shape < 3 or x.shape[1] ~= N
    or x.shape[2] ~= C then return nil end
  local st, inner = {}, 1
  for d = #x.shape, 3, -1 do
    st[d] = inner * C
    inner = inner * x.shape[d]
  end
  st[1], st[2] = inner * C, 1
  return x.shape, st
end

-- Every read of storage s by a live entry: {pos, entry, member, value}.
local function reads_of(g, s)
  local r = {}
  for j, e in ipairs(g.live) do
    for _, m in ipairs(entry_members(e)) do
      for _, u in ipairs(m.inputs) do
        u = u and g:resolve(u)
        if u and g.values[u].storage == s then r[#r + 1] = { pos = j, e = e, m = m, v = u } end
      end
    end
  end
  return r
end

-- Live positions writing storage s.
local function writes_of(g, s)
  local w = {}
  for j, e in ipairs(g.live) do
    for _, v in ipairs(e.outputs) do if g.values[v].storage == s then w[#w + 1] = j end end
  end
  return w
end

local function private_temp(g, v, outs)
  local s = g.values[v].storage
  local st = g.storages[s]
  return st.kind == 'temp' and not st.escapes and not outs[s] and #writes_of(g, s) == 1
end

local function bytes_of(g, v) return g:tensor(v):nbytes() end

-- An im2col convolution as the CPU's NCHW path captured it for a batch of small images (one GEMM
-- over the batch, conv.c): im2col (N, C*R*S, L) -> copy to (C*R*S, N, L) -> matmul by constant
-- weights (K, C*R*S) -> (K, N*L) -> copy to (N, K, L). Returns its parts, or nil.
local function nchw_conv(g, i, outs)
  local I = g.live[i]
  if I.fused or I.node.op ~= 'im2col' or #I.outputs ~= 1 then return nil end
  local X = g:resolve(I.inputs[1])
  local XV = g.values[X]
  if #XV.shape ~= 4 or (XV.dtype ~= 'float32' and XV.dtype ~= 'float64') then return nil end
  local N, C, H, W = XV.shape[1], XV.shape[2], XV.shape[3], XV.shape[4]
  local cols = I.outputs[1]
  local function sole_reader(v, kind)
    if not private_temp(g, v, outs) then return nil end
    local r = reads_of(g, g.values[v].storage)
    if #r ~= 1 or r[1].e.fused or r[1].e.node.op ~= kind or r[1].pos <= i then return nil end
    return r[1]
  end
  local rp = sole_reader(cols, 'copy')
  local P = rp and rp.e
  if not P or not contiguous(g.values[P.outputs[1]]) then return nil end
  local rm = sole_reader(P.outputs[1], 'matmul')
  local M = rm and rm.e
  if not M or #M.inputs ~= 2 or g:resolve(M.inputs[2]) ~= rm.v then return nil end
  local Wv = g:resolve(M.inputs[1])
  local WV, YK = g.values[Wv], g.values[M.outputs[1]]
  local p = I.node.params
  local CRS = C * p.kh * p.kw
  if not g:is_constant(Wv) or #WV.shape ~= 2 or WV.shape[2] ~= CRS or #YK.shape ~= 2 then return nil end
  local K, NL = WV.shape[1], YK.shape[2]
  local rq = sole_reader(M.outputs[1], 'copy')
  local Q = rq and rq.e
  if not Q then return nil end
  local y = Q.outputs[1]
  local Y = g.values[y]
  if not contiguous(Y) or #Y.shape ~= 3 or Y.shape[1] ~= N or Y.shape[2] ~= K or N * Y.shape[3] ~= NL
    or g.values[rq.v].stride[1] ~= Y.shape[3] then return nil end
  return { I = I, P = P, M = M, Q = Q, X = X, W = Wv, y = y, N = N, C = C, H = H, Wd = W, K = K, L = Y.shape[3],
    R = p.kh, S = p.kw, dtype = XV.dtype, cols = cols }
end

--[[
layout: where a device prefers channels last (NHWC) for a convolution, its activations are stored
so. The CPU prefers it for the im2col convolutions that multiply a batch of small images at once:
in NCHW their columns (N, C*R*S, L) must be copied to (C*R*S, N, L) before the GEMM — a pass over
the largest tensor of the layer; in NHWC im2col_nhwc writes one row per output pixel, the GEMM
(N*L, R*S*C) x (R*S*C, K) reads them as they are and its product (N*L, K) is the result in NHWC
already. Each such convolution becomes im2col_nhwc + matmul (weights permuted to (K, R, S, C) once,
at the capture); its result keeps the NHWC layout for its readers when they are all elementwise (they
walk any layout) or convolutions the pass converts; an elementwise node whose result such a
convolution reads writes it in NHWC. Where a value must change layout (an input, a result, a reader
that is neither), a transpose (a copy) is inserted, and counted: g.layout.transposes. A convolution
is converted only when the copy it saves moves more bytes than the transposes it needs; devices
without the channels-last loop (CUDA, OpenCL) keep NCHW. Results within rounding of eager (the
GEMM sums in another order).
]]
function M.passes.layout(g)
  g.layout = g.layout or { convs = 0, transposes = 0, saved = 0, added = 0 }
  local outs = output_storages(g)
  g._nhwc = g._nhwc or {}
  -- the convertible convolutions, first (a convolution's result read by the next is kept NHWC)
  local convs = {}
  for i = 1, #g.live do
    local c = nchw_conv(g, i, outs)
    if c and g:supports('im2col_nhwc', c.X) then convs[c.I] = c end
  end
  local n, i = 0, 1
  while i <= #g.live do
    local c = convs[g.live[i]]
    if not c then i = i + 1 else
      local N, C, H, Wd, K, L = c.N, c.C, c.H, c.Wd, c.K, c.L
      c.X = g:resolve(c.I.inputs[1]) -- an earlier conversion may have moved it to NHWC
      local sx = g.values[c.X].storage
      -- the input, channels last: already (a converted convolution's or relaid result), relaid here
      -- (the one elementwise node writing it writes NHWC), or a transpose
      local xin, relay, trans = g._nhwc[sx], nil, 0
      if not xin then
        local total = N * C * H * Wd
        local w = writes_of(g, sx)
        local ok = private_temp(g, c.X, outs) and #w == 1 and w[1] < i
        local E = ok and g.live[w[1]]
        ok = ok and not E.fused and E.node.fusable and #E.outputs == 1 and not inplace(g, E)
          and nhwc_strides(g, E.outputs[1], N, C, total) ~= nil
        for _, r in ipairs(ok and reads_of(g, sx) or {}) do
          local conv = r.e == c.I or convs[r.e]
          if not (conv or (not r.e.fused and r.m.node.fusable and not inplace(g, r.e)))
            or not nhwc_strides(g, r.v, N, C, total) then ok = false end
        end
        relay = ok and E or nil
        if not relay then trans = 1 end
      end
      local saved, added = 2 * bytes_of(g, c.cols), trans * 2 * bytes_of(g, c.X)
      if saved <= added then i = i + 1 else
        local ins = {}
        local pos = i
        local rec = { remove = { c.I.id, c.P.id, c.M.id, c.Q.id }, subst = {}, outputs = {}, insert = {} }
        local function add(op, like, a, b)
          local nxt = g.live[pos]
          local e = g:insert(pos, op, like, a, b)
          pos = pos + 1
          rec.insert[#rec.insert + 1] = { e.id, nxt and nxt.id or false }
          ins[#ins + 1] = e.id
          return e
        end
        if relay then
          local total = N * C * H * Wd
          local xh = g:new_temp({ N, H, Wd, C }, c.dtype)
          local map, order = {}, {} -- each value read, in program order, and its NHWC view
          for _, r in ipairs(reads_of(g, sx)) do
            if not map[r.v] then
              local shape, st = nhwc_strides(g, r.v, N, C, total)
              map[r.v] = g:view(xh, shape, st, 0)
              order[#order + 1] = r.v
            end
          end
          local old = relay.outputs[1]
          local shape, st = nhwc_strides(g, old, N, C, total)
          local nv = map[old] or g:view(xh, shape, st, 0)
          relay.outputs[1] = nv
          rec.outputs[#rec.outputs + 1] = { relay.id, 1, nv }
          for _, u in ipairs(order) do
            g.subst[u] = map[u]
            rec.subst[#rec.subst + 1] = { u, map[u] }
          end
          g._nhwc[g.values[xh].storage] = xh
          xin = xh
        elseif not xin then
          local xh = g:new_temp({ N, H, Wd, C }, c.dtype)
          add('copy', c.I.id, { c.X }, { g:view(xh, { N, C, H, Wd }, { H * Wd * C, 1, Wd * C, C }, 0) })
          xin = xh
        end
        -- the weights (K, C*R*S) as (K, R*S*C), once; the product (N*L, K): the result in NHWC
        local RSC = c.R * c.S * C
        local wt = g:tensor(c.W):reshape(K, C, c.R, c.S):permute(1, 3, 4, 2):contiguous():reshape(K, RSC)
        local vwt = known_value(g, g.cap:add_const(wt))
        local colsh = g:new_temp({ N, L, RSC }, c.dtype)
        add('im2col_nhwc', c.I.id, { xin }, { colsh })
        local yh = g:new_temp({ N * L, K }, c.dtype)
        add('matmul', c.M.id, { g:view(colsh, { N * L, RSC }, { RSC, 1 }, 0), g:view(vwt, { RSC, K }, { 1, RSC }, 0) },
          { yh })
        local sy = g.values[c.y].storage
        local yshape = { N, K, L }
        local keep = not outs[sy] and not g.storages[sy].escapes
        for _, r in ipairs(reads_of(g, sy)) do
          if r.e == c.Q then
          elseif not (convs[r.e] or (not r.e.fused and r.m.node.fusable and not inplace(g, r.e)))
            or not nhwc_strides(g, r.v, N, K, N * K * L) then keep = false end
        end
        local back = 0
        if keep then
          local Y4 = nil -- the next convolution reads it as (N, OH, OW, K)
          for _, r in ipairs(reads_of(g, sy)) do
            if convs[r.e] then Y4 = r.v end
            if r.e ~= c.Q and not g.subst[r.v] then
              local shape, st = nhwc_strides(g, r.v, N, K, N * K * L)
              local w = g:view(yh, shape, st, 0)
              g.subst[r.v] = w
              rec.subst[#rec.subst + 1] = { r.v, w }
            end
          end
          if Y4 then
            local s4 = g.values[Y4].shape
            g._nhwc[g.values[yh].storage] = g:view(yh, { s4[1], s4[3], s4[4], s4[2] },
              { s4[3] * s4[4] * s4[2], s4[4] * s4[2], s4[2], 1 }, 0)
          end
        else -- a reader wants NCHW: one transpose back, where the NCHW path wrote it
          for j, e in ipairs(g.live) do if e == c.Q then pos = j + 1 end end
          add('copy', c.Q.id, { g:view(yh, yshape, { L * K, 1, K }, 0) }, { c.y })
          back = 1
        end
        local drop = {}
        for j, e in ipairs(g.live) do
          if e == c.I or e == c.P or e == c.M or e == c.Q then drop[j] = true end
        end
        remove_entries(g, drop)
        local t = trans + back
        g.layout.convs = g.layout.convs + 1
        g.layout.transposes = g.layout.transposes + t
        g.layout.saved = g.layout.saved + saved
        g.layout.added = g.layout.added + added
        n = n + 1
        rec.transposes = t
        record(g, 'layout', 'layout', ins, string.format('conv %dx%d (%d -> %d channels, %d images of %d outputs) to NHWC: '
          .. 'im2col_nhwc + matmul instead of im2col, copy, matmul, copy; the columns\' copy (%d bytes each way) '
          .. 'goes; %s; %d transpose%s inserted', c.R, c.S, C, K, N, L, bytes_of(g, c.cols),
          relay and ('its input written in NHWC by ' .. describe(g, relay)) or (trans == 0 and 'its input is NHWC already')
          or 'its input transposed', t, t == 1 and '' or 's'), rec)
        i = 1 -- positions moved: scan again (converted convolutions are gone from the list)
      end
    end
  end
  return n
end

-- ---------------------------------------------------------------- fuse

local CHEAP = { add = true, sub = true, mul = true, neg = true, abs = true, relu = true, maximum = true,
  minimum = true, where = true, add_scaled = true, eq = true, ne = true, lt = true, le = true, gt = true,
  ge = true, clamp = true, square = true, sign = true, floor = true, ceil = true, round = true,
  leaky_relu = true }

function M.passes.fuse(g, opts)
  opts = opts or {}
  if os.getenv('LUMEN_DISABLE_FUSION') == '1' or opts.fusion == false then return 0 end
  local outs = output_storages(g)
  local live = g.live
  -- who reads each storage (live positions), who writes it
  local readers, writers = {}, {}
  for i, e in ipairs(live) do
    for _, m in ipairs(entry_members(e)) do
      for _, v in ipairs(m.inputs) do
        if v then
          local s = g.values[g:resolve(v)].storage
          readers[s] = readers[s] or {}
          readers[s][i] = true
        end
      end
    end
    for _, v in ipairs(e.outputs) do
      local s = g.values[v].storage
      writers[s] = writers[s] or {}
      writers[s][i] = true
    end
  end
  local group_of, groups = {}, {}
  local producer_pos = {} -- value -> live position of its (fusable) producer
  -- a trial group: members (positions, sorted) -> its plan, or nil and why not
  local function plan(members)
    table.sort(members)
    local inset = {}
    for _, p in ipairs(members) do inset[p] = true end
    local made, mats, regs, ext, nin = {}, {}, 0, {}, 0
    local shape = live[members[1]] and g.values[live[members[1]].outputs[1]].shape
    for _, p in ipairs(members) do
      local sh = g.values[live[p].outputs[1]].shape
      if numel(sh) > numel(shape) then shape = sh end
    end
    local N = numel(shape)
    local lo, hi = members[1], members[#members]
    -- nothing between the members may read what they write, or write what they read or write
    local touched = {}
    for _, p in ipairs(members) do
      local e = live[p]
      touched[g.values[e.outputs[1]].storage] = true
      for _, v in ipairs(e.inputs) do touched[g.values[g:resolve(v)].storage] = true end
    end
    for q = lo + 1, hi - 1 do
      if not inset[q] then
        for _, m in ipairs(entry_members(live[q])) do
          for _, v in ipairs(m.inputs) do
            if v then
              local s = g.values[g:resolve(v)].storage
              for _, p in ipairs(members) do
                if g.values[live[p].outputs[1]].storage == s then return nil end
              end
            end
          end
        end
        for _, v in ipairs(live[q].outputs) do if touched[g.values[v].storage] then return nil end end
      end
    end
    -- what a member reads that the group made (by value, or the same elements under another shape)
    local function internal(r)
      if made[r] then return true end
      for w in pairs(made) do
        if numel(g.values[w].shape) == N and alias(g.values[w], g.values[r]) then return true end
      end
      return false
    end
    for _, p in ipairs(members) do
      local e = live[p]
      local v = e.outputs[1]
      local vx = g.values[v]
      local reshaped = not broadcasts(vx.shape, shape)
      if reshaped and not restride(vx, shape) then return nil end
      for _, u in ipairs(e.inputs) do
        local r = g:resolve(u)
        local rx = g.values[r]
        if internal(r) then
          if reshaped and numel(rx.shape) ~= N then return nil end
        else
          local s = rx.storage
          for _, q in ipairs(members) do -- read from memory a member writes: not in one kernel
            if g.values[live[q].outputs[1]].storage == s then return nil end
          end
          local direct = broadcasts(rx.shape, shape) and not reshaped
          local full = restride(rx, shape) ~= nil
          if not (direct or full or numel(rx.shape) == 1) then return nil end
          if not ext[r] then
            ext[r] = true
            nin = nin + 1
          end
        end
      end
      local s = vx.storage
      local need = outs[s] or g.storages[s].kind ~= 'temp' or g.storages[s].escapes
      for q in pairs(readers[s] or {}) do if not inset[q] then need = true end end
      local full = same_list(vx.shape, shape) or restride(vx, shape) ~= nil
      if need then
        if not full then return nil end
        if same_list(vx.shape, shape) then table.insert(mats, 1, v) else mats[#mats + 1] = v end
      else
        if not full and not CHEAP[e.node.op] then return nil end -- an expensive producer: not recomputed
        regs = regs + 1
      end
      made[v] = true
    end
    if #members > MAX_INSTR or regs > MAX_REGS or nin > MAX_IN or #mats > MAX_OUT or #mats < 1
      or nin + #mats > MAX_OPS then return nil end
    return { members = members, mats = mats, shape = shape }
  end
  for i, e in ipairs(live) do
    if not e.fused and e.node.fusable and not inplace(g, e) and #e.outputs == 1 then
      local cands, seen = {}, {}
      for _, v in ipairs(e.inputs) do
        local r = g:resolve(v)
        local p = producer_pos[r]
        if not p then -- the same elements under another shape (a reshape of a producer's result)
          for w, q in pairs(producer_pos) do
            if alias(g.values[w], g.values[r]) then p = q end
          end
        end
        local gi = p and group_of[p]
        if gi and not seen[gi] then
          seen[gi] = true
          cands[#cands + 1] = gi
        end
      end
      local joined = false
      if #cands > 0 then
        local members = { i }
        for _, gi in ipairs(cands) do for _, p in ipairs(groups[gi].members) do members[#members + 1] = p end end
        local pl = plan(members)
        if not pl and #cands > 1 then -- all of them would not fit: the most recent alone
          table.sort(cands)
          members = { i }
          for _, p in ipairs(groups[cands[#cands]].members) do members[#members + 1] = p end
          pl = plan(members)
          cands = { cands[#cands] }
        end
        if pl then
          local gi = cands[1]
          for k = 2, #cands do groups[cands[k]] = false end
          groups[gi] = pl
          for _, p in ipairs(pl.members) do group_of[p] = gi end
          joined = true
        end
      end
      if not joined then
        groups[#groups + 1] = { members = { i } }
        group_of[i] = #groups
      end
      producer_pos[e.outputs[1]] = i
    end
  end
  -- the groups of two or more become fused entries at their last member's place
  local drop, place, n = {}, {}, 0
  for _, gr in ipairs(groups) do
    if gr and #gr.members >= 2 then
      local pl = plan(gr.members)
      if pl then
        local fused, ids = {}, {}
        for _, p in ipairs(pl.members) do
          fused[#fused + 1] = live[p]
          ids[#ids + 1] = live[p].id
          drop[p] = true
        end
        local last = pl.members[#pl.members]
        place[last] = { fused = fused, outputs = pl.mats, id = live[last].id, shape = pl.shape }
        drop[last] = nil
        n = n + 1
        local ops = {}
        for _, m in ipairs(fused) do ops[#ops + 1] = m.node.op end
        record(g, 'fuse', 'fuse', ids, string.format('%d elementwise nodes (%s) over %s run as one kernel, writing %d '
          .. 'result%s', #fused, table.concat(ops, ', '), shape_s(pl.shape), #pl.mats, #pl.mats == 1 and '' or 's'),
          { group = { members = ids, outputs = pl.mats, shape = pl.shape } })
      end
    end
  end
  local keep = {}
  for i, e in ipairs(live) do
    if place[i] then keep[#keep + 1] = place[i] elseif not drop[i] then keep[#keep + 1] = e end
  end
  g.live = keep
  g._program = nil
  return n
end

-- ---------------------------------------------------------------- anchor

-- An elementwise kernel of the live list: a fused group, or one fusable node.
local function ew_entry(g, e)
  if e.anchor then return false end
  if e.fused then return true end
  return e.node.fusable and not inplace(g, e) and #e.outputs == 1
end

local function entry_shape(g, e) return e.shape or g.values[e.outputs[1]].shape end

-- The storages an entry's members read and write.
local function rw_sets(g, e)
  local r, w = {}, {}
  for _, m in ipairs(entry_members(e)) do
    for _, v in ipairs(m.inputs) do if v then r[g.values[g:resolve(v)].storage] = true end end
    for _, v in ipairs(m.outputs) do w[g.values[v].storage] = true end
  end
  return r, w
end

-- Whether an entry with reads r and writes w may run anywhere between live positions lo and hi:
-- nothing strictly between reads what it writes or writes what it reads or writes.
local function movable(g, lo, hi, r, w)
  for q = lo + 1, hi - 1 do
    local qr, qw = rw_sets(g, g.live[q])
    for st in pairs(qr) do if w[st] then return false end end
    for st in pairs(qw) do if r[st] or w[st] then return false end end
  end
  return true
end

-- Whether value v is needed outside the members of inset (by id): read by another entry, a
-- result, or memory that outlives the call.
local function needed(g, v, inset, outs)
  local s = g.values[v].storage
  local st = g.storages[s]
  if outs[s] or st.kind ~= 'temp' or st.escapes then return true end
  for _, e in ipairs(g.live) do
    for _, m in ipairs(entry_members(e)) do
      if not inset[m.id] then
        for _, u in ipairs(m.inputs) do
          if u and g.values[g:resolve(u)].storage == s then return true end
        end
      end
    end
  end
  return false
end

-- Whether the program can run members as one kernel writing mats (the C side decides).
-- The arguments of program:add_fused for members: node ids, their inputs after the substitutions,
-- the values they write (forward may have moved them).
local function fused_args(g, members)
  local nodes, ins, outs = {}, {}, {}
  for k, m in ipairs(members) do
    nodes[k] = m.id
    local r = {}
    for j, v in ipairs(m.inputs) do r[j] = v and g:resolve(v) or false end
    ins[k] = r
    outs[k] = m.outputs[1]
  end
  return nodes, ins, outs
end

local function group_ok(g, members, mats)
  local p = G.program(g.cap)
  local nodes, ins, outs = fused_args(g, members)
  return (pcall(p.add_fused, p, nodes, ins, mats, outs))
end

--- anchor: a reduction (sum, mean, amax, amin over the last dims of a float value) takes the
--- elementwise kernel that makes its input as its prologue and the one that reads its result as its
--- epilogue; a product (matmul, mm, the Winograd convolution) takes the elementwise kernel over its
--- result as its epilogue (bias, activation, a residual add: run on panels of rows that stay in
--- the cache). Each is then one kernel: the values between never go to memory.
function M.passes.anchor(g, opts)
  opts = opts or {}
  if os.getenv('LUMEN_DISABLE_FUSION') == '1' or opts.fusion == false then return 0 end
  local outs = output_storages(g)
  local n, i = 0, 1
  while i <= #g.live do
    local e = g.live[i]
    local kind = not e.fused and e.node.anchor
    if kind and #e.outputs == 1 and e.outputs[1] == e.node.outputs[1] and not inplace(g, e) then
      local res = e.outputs[1]
      local pre, post, post_at = nil, nil, nil
      if kind == 'reduce' then -- the prologue: the kernel that made the input, at its shape
        local vin = g:resolve(e.inputs[1])
        for p = i - 1, 1, -1 do
          local q = g.live[p]
          local made = false
          for _, m in ipairs(entry_members(q)) do if m.outputs[1] == vin then made = true end end
          if made then
            local r, w = rw_sets(g, q)
            if ew_entry(g, q) and same_list(entry_shape(g, q), g.values[vin].shape) and contiguous(g.values[vin])
              and movable(g, p, i, r, w) then pre = q end
            break
          end
        end
      end
      -- the epilogue: the first kernel after that reads the result, over the result's elements
      for q = i + 1, #g.live do
        local c = g.live[q]
        local reads, views = false, {}
        local rst = g.values[res].storage
        for _, m in ipairs(entry_members(c)) do
          for _, u in ipairs(m.inputs) do
            local r = u and g:resolve(u)
            if r and (r == res or g.values[r].storage == rst) then
              reads = true
              views[#views + 1] = g.values[r]
            end
          end
        end
        if reads then
          local sh, rs = entry_shape(g, c), g.values[res].shape
          local R = g.values[res]
          -- a product's epilogue over its result, maybe reshaped (BatchNorm's (N, C, H*W)), rows first;
          -- or over whole rows of it: a channels-last product (N*H*W, K) read as (N, K, H*W), each
          -- row of the epilogue H*W of the product's (the layout pass's convolutions)
          local rows_of = kind ~= 'reduce' and #sh > 0 and #rs > 0 and sh[1] > 0 and rs[1] % sh[1] == 0
            and contiguous(R)
          for _, V in ipairs(rows_of and views or {}) do
            if not (#V.shape == #sh and V.offset == R.offset and V.stride[1] == (rs[1] // sh[1]) * R.stride[1]) then
              rows_of = false
            end
          end
          local ordered = true -- every view read is the result's elements in its order (not transposed)
          for _, V in ipairs(views) do if not alias(R, V) then ordered = false end end
          local fits = numel(sh) == numel(rs) and (kind == 'reduce'
            or (ordered and (same_list(sh, rs) or (#sh > 0 and #rs > 0 and sh[1] == rs[1] and contiguous(R)))) or rows_of)
          if ew_entry(g, c) and fits then
            local ar, aw = rw_sets(g, e)
            if pre then
              local pr, pw = rw_sets(g, pre)
              for k in pairs(pr) do ar[k] = true end
              for k in pairs(pw) do aw[k] = true end
            end
            local cr, cw = rw_sets(g, c)
            -- the anchor (and its prologue) move down to the epilogue, or the epilogue up to them
            if movable(g, i, q, ar, aw) then post, post_at = c, q
            elseif movable(g, i, q, cr, cw) then post, post_at = c, i end
          end
          break
        end
      end
      if pre or post then
        local members, inset = {}, {}
        for _, m in ipairs(pre and entry_members(pre) or {}) do members[#members + 1] = m end
        members[#members + 1] = e
        for _, m in ipairs(post and entry_members(post) or {}) do members[#members + 1] = m end
        for _, m in ipairs(members) do inset[m.id] = true end
        local mats = {}
        for _, m in ipairs(pre and entry_members(pre) or {}) do
          if needed(g, m.outputs[1], inset, outs) then mats[#mats + 1] = m.outputs[1] end
        end
        if needed(g, res, inset, outs) then mats[#mats + 1] = res end
        for _, v in ipairs(post and post.outputs or {}) do mats[#mats + 1] = v end
        if post and group_ok(g, members, mats) then
          -- with both; else the prologue alone below
        elseif pre then
          post, members, mats = nil, {}, {}
          for _, m in ipairs(entry_members(pre)) do members[#members + 1] = m end
          members[#members + 1] = e
          inset = {}
          for _, m in ipairs(members) do inset[m.id] = true end
          for _, m in ipairs(entry_members(pre)) do
            if needed(g, m.outputs[1], inset, outs) then mats[#mats + 1] = m.outputs[1] end
          end
          mats[#mats + 1] = res
          if not group_ok(g, members, mats) then members = nil end
        else
          members = nil
        end
        if members then
          local ids, ops = {}, {}
          for _, m in ipairs(members) do
            ids[#ids + 1] = m.id
            ops[#ops + 1] = m.node.op
          end
          local at = post and post_at or i -- the live position the group takes
          local entry = { fused = members, outputs = mats, id = g.live[at].id, shape = g.values[res].shape,
            anchor = kind }
          local keep = {}
          for q, c in ipairs(g.live) do
            if q == at then keep[#keep + 1] = entry
            elseif c ~= pre and c ~= post and c ~= e then keep[#keep + 1] = c end
          end
          g.live = keep
          n = n + 1
          local what = kind == 'reduce' and string.format('%s%s%s', pre and 'its prologue' or '',
            pre and post and ' and ' or '', post and 'its epilogue' or '') or 'its epilogue'
          record(g, 'anchor', 'fuse', ids, string.format('%s #%d runs with %s as one kernel (%s), writing %d value%s',
            e.node.op, e.id, what, table.concat(ops, ', '), #mats, #mats == 1 and '' or 's'),
            { group = { members = ids, outputs = mats, shape = entry.shape, at = entry.id, anchor = kind } })
          i = 0 -- positions moved: from the start (each anchor merges once: its entry is fused now)
        end
      end
    end
    i = i + 1
  end
  g._program = nil
  return n
end

-- ---------------------------------------------------------------- running the passes

--- Runs the passes in order (opts.order, else g.order) and returns the rewrites they made.
function Graph:optimize(opts)
  opts = opts or {}
  local off = env_list('LUMEN_DISABLE_PASSES')
  for k, v in pairs(opts.disable or {}) do if v then off[k] = true end end
  local from = #self.log + 1
  for _, name in ipairs(opts.order or self.order) do
    local pass = M.passes[name]
    if not pass then
      local known = {}
      for k in pairs(M.passes) do known[#known + 1] = k end
      table.sort(known)
      error(string.format("lm.graph: no pass named '%s' (passes: %s)", tostring(name), table.concat(known, ', ')), 2)
    end
    if not off[name] then pass(self, opts) end
  end
  local made = {}
  for i = from, #self.log do made[#made + 1] = self.log[i] end
  return made
end

--- Runs one pass by name (or a function(g) of the user's); returns its rewrites.
function Graph:pass(p, opts)
  local from = #self.log + 1
  if type(p) == 'function' then p(self, opts) else
    if not M.passes[p] then error("lm.graph: no pass named '" .. tostring(p) .. "'", 2) end
    M.passes[p](self, opts)
  end
  self._program = nil
  local made = {}
  for i = from, #self.log do made[#made + 1] = self.log[i] end
  return made
end

-- ---------------------------------------------------------------- for passes written in Lua

--- Whether value v holds the same data at every run: a const storage, or one a pass folded.
function Graph:is_constant(v)
  v = self:resolve(v)
  local s = self.values[v].storage
  return self.storages[s].kind == 'const' or self.folded[s] == true
end

--- Whether value v lives where a result of the function lives (a pass must keep its node).
function Graph:is_result(v)
  return output_storages(self)[self.values[self:resolve(v)].storage] == true
end

--- How many live entries write value v's storage.
function Graph:writers(v)
  return write_counts(self)[self.values[self:resolve(v)].storage] or 0
end

--- Whether entry e may be removed by folding: not random, not in place, its results temps that
--- only it writes and that are no result of the function.
function Graph:foldable(e)
  if e.fused or e.node.kind == 'random' or inplace(self, e) then return false end
  for _, v in ipairs(e.outputs) do
    local s = self.values[v].storage
    if self.storages[s].kind ~= 'temp' or self:writers(v) ~= 1 or self:is_result(v) then return false end
  end
  return true
end

--- Folds live entry i (a user's constant folding): it runs no more; its results, computed at the
--- capture, are constants from now on.
function Graph:fold(i, why, pass)
  local e = self.live[i]
  if not e then error('lm.graph: no live node at position ' .. tostring(i), 2) end
  if not self:foldable(e) then error('lm.graph: ' .. describe(self, e) .. ' cannot be folded', 2) end
  for _, v in ipairs(e.outputs) do self.folded[self.values[v].storage] = true end
  table.remove(self.live, i)
  record(self, pass or 'user', 'fold', { e.id }, describe(self, e) .. (why and (': ' .. why) or ''),
    { remove = { e.id }, folded = out_storages(self, e) })
end

--- Replaces live entry i by live entry j < i that computes the same (a user's CSE): readers of
--- i's results read j's.
function Graph:merge(j, i, why, pass)
  local a, e = self.live[j], self.live[i]
  if not a or not e or j >= i then error('lm.graph: merge(j, i) needs two live positions j < i', 2) end
  if #a.outputs ~= #e.outputs then error('lm.graph: the two nodes have different results', 2) end
  if not self:foldable(e) then
    error('lm.graph: ' .. describe(self, e) .. ' cannot be merged away (a random draw, in place, a result of the '
      .. 'function, or memory written twice)', 2)
  end
  for _, v in ipairs(e.outputs) do
    if not sole_view(self, v) then
      error('lm.graph: ' .. describe(self, e) .. ' cannot be merged away: another view of its result is read', 2)
    end
  end
  if a.fused or a.node.kind == 'random' or inplace(self, a) then
    error('lm.graph: ' .. describe(self, a) .. ' cannot stand for another node (a random draw or in place)', 2)
  end
  local pairs_ = {}
  for k, v in ipairs(e.outputs) do
    self.subst[v] = a.outputs[k]
    pairs_[k] = { v, a.outputs[k] }
  end
  table.remove(self.live, i)
  record(self, pass or 'user', 'merge', { a.id, e.id }, describe(self, e) .. (why and (': ' .. why) or ''),
    { remove = { e.id }, subst = pairs_ })
end

-- How a signature names input v: its value after substitution, or a small constant by its
-- contents (two fills of 2 are the same input).
local function input_key(g, v)
  if not v then return '-' end
  v = g:resolve(v)
  local x = g.values[v]
  if g:is_constant(v) and numel(x.shape) <= 64 then
    local t = g:tensor(v)
    local c = t:dim() == 0 and { t:item() } or t:reshape(t:numel()):tolist()
    return 'c:' .. x.dtype .. ':' .. shape_s(x.shape) .. ':' .. ser(c)
  end
  return tostring(v)
end

--- A live entry's signature for CSE: kind, op, dtype, parameters, inputs after substitution
--- (small constants by their contents), the results' layouts.
function Graph:signature(e)
  local parts = { e.node.kind, e.node.op, e.node.dtype, ser(e.node.params), tostring(e.node.value) }
  for _, v in ipairs(e.inputs) do parts[#parts + 1] = input_key(self, v) end
  for _, v in ipairs(e.outputs) do parts[#parts + 1] = geometry(self, v) end
  return table.concat(parts, '|')
end

--- Removes a live node (a user's pass): dst values keep their captured contents.
function Graph:remove(entry_index, why, pass)
  local e = self.live[entry_index]
  if not e then error('lm.graph: no live node at position ' .. tostring(entry_index), 2) end
  table.remove(self.live, entry_index)
  record(self, pass or 'user', 'remove', member_ids(e), describe(self, e) .. (why and (': ' .. why) or ''),
    { remove = member_ids(e) })
end

--- The graph after the first k rewrites of its log (k = 0: as captured): a graph of its own
--- (sharing the capture), with its live entries, substitutions and constants then, for drawing
--- the passes one rewrite at a time (its :lines(), :cost(), :run() as any graph's).
function Graph:snapshot(k)
  if type(k) ~= 'number' or k < 0 or k > #self.log or k ~= math.floor(k) then
    error(string.format('lm.graph: snapshot(k) takes 0 <= k <= %d (the rewrites in the log), got %s', #self.log,
      tostring(k)), 2)
  end
  local s = setmetatable({ cap = self.cap, nodes = self.nodes, values = self.values, storages = self.storages,
    inputs = self.inputs, outputs = self.outputs, bindings = self.bindings, order = self.order }, Graph)
  s:reset()
  for i = 1, k do
    local r = self.log[i]
    s.log[#s.log + 1] = r
    for _, c in ipairs(r.insert or {}) do -- a node a pass made, before the entry it was put before
      local n = self.nodes[c[1]]
      local e = { id = c[1], node = n, inputs = {}, outputs = {} }
      for k, v in ipairs(n.inputs) do e.inputs[k] = v end
      for k, v in ipairs(n.outputs) do e.outputs[k] = v end
      local at = #s.live + 1
      for j, f in ipairs(s.live) do if f.id == c[2] then at = j end end
      table.insert(s.live, at, e)
    end
    for _, p in ipairs(r.subst or {}) do s.subst[p[1]] = p[2] end
    for _, c in ipairs(r.outputs or {}) do -- an entry writes another value (forward)
      for _, e in ipairs(s.live) do
        if e.id == c[1] then e.outputs[c[2]] = c[3] end
      end
    end
    for _, c in ipairs(r.inputs or {}) do -- an entry reads another value (a pass's new constant)
      for _, e in ipairs(s.live) do
        if not e.fused and e.id == c[1] then e.inputs[c[2]] = c[3] end
      end
    end
    for _, st in ipairs(r.folded or {}) do s.folded[st] = true end
    if r.remove then
      local gone = {}
      for _, id in ipairs(r.remove) do gone[id] = true end
      local keep = {}
      for _, e in ipairs(s.live) do
        local hit = false
        for _, id in ipairs(member_ids(e)) do if gone[id] then hit = true end end
        if not hit then keep[#keep + 1] = e end
      end
      s.live = keep
    end
    if r.group then -- members (plain entries or members of fused ones) become one entry at `at`
      local inset, byid, keep = {}, {}, {}
      local at = r.group.at or r.group.members[#r.group.members]
      for _, id in ipairs(r.group.members) do inset[id] = true end
      for _, e in ipairs(s.live) do
        for _, m in ipairs(entry_members(e)) do if inset[m.id] then byid[m.id] = m end end
      end
      local members = {}
      for _, id in ipairs(r.group.members) do members[#members + 1] = byid[id] end
      for _, e in ipairs(s.live) do
        local hit = false
        for _, m in ipairs(entry_members(e)) do if inset[m.id] then hit = true end end
        if not hit then keep[#keep + 1] = e
        elseif e.id == at then keep[#keep + 1] = { fused = members, outputs = r.group.outputs, id = at,
          shape = r.group.shape, anchor = r.group.anchor } end
      end
      s.live = keep
    end
  end
  return s
end

--- The program of the live entries (cached until a pass changes the graph).
function Graph:program()
  if self._program then return self._program end
  local p = G.program(self.cap)
  for _, e in ipairs(self.live) do
    if e.fused then
      local nodes, ins, outs = fused_args(self, e.fused)
      p:add_fused(nodes, ins, e.outputs, outs)
    else
      local r = {}
      for j, v in ipairs(e.inputs) do r[j] = v and self:resolve(v) or false end
      p:add_node(e.id, r, #e.node.outputs == 1 and e.outputs or nil)
    end
  end
  for k, v in ipairs(self.outputs) do p:set_output(k, self:resolve(v)) end
  self._program = p
  return p
end

--- Step k of the program (line k of g:print), a fused elementwise group, run once more as one of
--- the course's kernels on the values it reads as the last run left them: opts.backend 'emu' (the
--- default: the SIMT emulator, info.trace for viz.show(info)), 'cpu' (the engine's kernel, timed)
--- or 'cuda'; block, repeats, trace_cap as the kernels take them. Returns {results...}, info.
function Graph:kernel(k, opts)
  if type(k) ~= 'number' or k ~= math.floor(k) then
    error(string.format('g:kernel(k): k is a step of the program (1..%d), got %s', #self.live, tostring(k)), 2)
  end
  return self:program():kernel(k, opts)
end

--- What one run launches: {kernels, bytes_read, bytes_written}.
function Graph:cost()
  local info = self:program():cost()
  return info
end

--- Runs the program on new inputs (tensors, as many as the capture had): results..., info.
function Graph:run(...)
  local args = table.pack(...)
  for _, b in ipairs(self.bindings) do
    for name, val in pairs(b.fn()) do self.cap:set(b.node, name, val) end
  end
  local res, info = self:program():run(args, #self.outputs)
  res[#res + 1] = info
  return table.unpack(res, 1, #self.outputs + 1)
end

--- The live graph as lines of text (one per kernel).
function Graph:lines()
  local out = {}
  for i, e in ipairs(self.live) do
    local ins, inside, seen = {}, {}, {}
    for _, m in ipairs(entry_members(e)) do
      for _, v in ipairs(m.inputs) do
        v = v and self:resolve(v)
        local made_here = v and inside[v]
        for w in pairs(inside) do
          if v and not made_here and alias(self.values[w], self.values[v]) then made_here = true end
        end
        if v and not made_here and not seen[v] then
          seen[v] = true
          ins[#ins + 1] = 'v' .. v
        end
      end
      for _, v in ipairs(m.outputs) do inside[v] = true end
    end
    local outs = {}
    for _, v in ipairs(e.outputs) do outs[#outs + 1] = 'v' .. v end
    local where = (not e.fused and e.node.where ~= '') and ('  -- ' .. e.node.where) or ''
    out[i] = string.format('%3d  %-40s %s -> %s%s', i, describe(self, e), table.concat(ins, ' '),
      table.concat(outs, ' '), where)
  end
  return out
end

function Graph:print()
  for _, l in ipairs(self:lines()) do print(l) end
  local c = self:cost()
  print(string.format('%d kernels, %d bytes read, %d written', c.kernels, c.bytes_read, c.bytes_written))
end

--- Graphviz text of the live graph: kernels as boxes, storages read from outside as ellipses.
function Graph:dot()
  local L = { 'digraph lumen {', '  rankdir=LR; node [fontname="monospace"];' }
  local made = {}
  for i, e in ipairs(self.live) do
    L[#L + 1] = string.format('  k%d [shape=box, label="%s"];', i, describe(self, e):gsub('"', "'"))
    for _, v in ipairs(e.outputs) do made[v] = i end
  end
  local seen = {}
  for i, e in ipairs(self.live) do
    for _, m in ipairs(entry_members(e)) do
      for _, v in ipairs(m.inputs) do
        if v then
          v = self:resolve(v)
          if made[v] and made[v] ~= i then
            L[#L + 1] = string.format('  k%d -> k%d;', made[v], i)
          elseif not made[v] and not seen[v] then
            seen[v] = true
            local st = self:storage_of(v)
            L[#L + 1] = string.format('  v%d [shape=ellipse, label="%s %s"];', v, st.kind,
              shape_s(self.values[v].shape))
          end
          if not made[v] then L[#L + 1] = string.format('  v%d -> k%d;', v, i) end
        end
      end
    end
  end
  L[#L + 1] = '}'
  return table.concat(L, '\n')
end

-- ---------------------------------------------------------------- capturing

-- What a capture may not do, with the place: Lua-side reads of values and output.
local function install_guards()
  local saved = {}
  local T = lm.Tensor
  local function wrap(tbl, key, why)
    local f = rawget(tbl, key)
    if type(f) ~= 'function' then return end
    saved[#saved + 1] = { tbl, key, f }
    rawset(tbl, key, function(...)
      G.broken(why)
      return f(...)
    end)
  end
  wrap(T, 'item', 'x:item() reads a value on the host (data-dependent Lua code cannot be replayed)')
  wrap(T, 'tolist', 'x:tolist() reads the values on the host (data-dependent Lua code cannot be replayed)')
  wrap(lm, 'equal', 'lm.equal reads values on the host (data-dependent Lua code cannot be replayed)')
  wrap(lm, 'allclose', 'lm.allclose reads values on the host (data-dependent Lua code cannot be replayed)')
  wrap(lm, 'save', 'lm.save writes a file (a side effect a replay would not repeat)')
  wrap(_G, 'print', 'print (a side effect a replay would not repeat)')
  wrap(io, 'write', 'io.write (a side effect a replay would not repeat)')
  local mt = getmetatable(lm.zeros(0))
  local ts = rawget(mt, '__tostring')
  saved[#saved + 1] = { mt, '__tostring', ts }
  rawset(mt, '__tostring', function(x)
    G.broken('printing a tensor reads its values on the host')
    return ts(x)
  end)
  local idx = rawget(mt, '__index')
  saved[#saved + 1] = { mt, '__index', idx }
  rawset(mt, '__index', function(x, k)
    local r = idx(x, k)
    if type(r) == 'number' then G.broken('x[' .. tostring(k) .. '] reads a value on the host (data-dependent Lua code cannot be replayed)') end
    return r
  end)
  return saved
end

local function remove_guards(saved)
  for i = #saved, 1, -1 do rawset(saved[i][1], saved[i][2], saved[i][3]) end
end

local pending -- the optimizers' bindings of the running capture: {mark, fn}

--- For the optimizers: the number of kernels recorded so far, when a capture runs (else nil).
function M._mark()
  if not G.capturing() then return nil end
  return G.count()
end

--- For the optimizers: the next update node after `mark` takes the numbers fn() returns
--- ({step=, lr=, first=}) at every later run; fn also advances the optimizer's own state.
function M._bind(mark, fn)
  if mark and pending then pending[#pending + 1] = { mark = mark, fn = fn } end
end

local UPDATES = { sgd_step = true, adam_step = true, rmsprop_step = true }

-- Flattens a Lua value into tensors (list) and a signature (string); tables without a metatable
-- are walked, other tables and userdata stand for themselves.
local function flatten(x, ts, sig, path)
  if lm.is_tensor(x) then
    for k, t in ipairs(ts) do -- the same tensor twice: one input
      if rawequal(t, x) then
        sig[#sig + 1] = 'T=' .. k
        return { tensor = k }
      end
    end
    ts[#ts + 1] = x
    sig[#sig + 1] = string.format('T(%s %s %s %s%s)', x:dtype(), x:device(), shape_s(x:shape()),
      table.concat(x:stride(), ','), x.requires_grad and ' grad' or '')
    return { tensor = #ts }
  end
  local ty = type(x)
  if ty == 'table' and getmetatable(x) == nil then
    local keys = {}
    for k in pairs(x) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if type(a) == type(b) and (type(a) == 'number' or type(a) == 'string') then return a < b end
      return type(a) < type(b)
    end)
    sig[#sig + 1] = '{'
    local tpl = { table = {} }
    for _, k in ipairs(keys) do
      sig[#sig + 1] = tostring(k) .. '='
      tpl.table[#tpl.table + 1] = { k, flatten(x[k], ts, sig, path .. '.' .. tostring(k)) }
    end
    sig[#sig + 1] = '}'
    return tpl
  end
  if ty == 'number' then sig[#sig + 1] = string.format('n%.17g', x)
  elseif ty == 'string' or ty == 'boolean' or ty == 'nil' then sig[#sig + 1] = ty:sub(1, 1) .. tostring(x)
  else sig[#sig + 1] = ty .. '@' .. tostring(x) end
  return { value = x }
end

local function rebuild(tpl, ts)
  if tpl.tensor then return ts[tpl.tensor] end
  if tpl.table then
    local t = {}
    for _, kv in ipairs(tpl.table) do t[kv[1]] = rebuild(kv[2], ts) end
    return t
  end
  return tpl.value
end

-- Runs fn(args) under a capture: ok, graph (or the break's message), results (eager), templates.
local function capture_call(fn, args)
  local ts, sig = {}, {}
  local arg_tpl = {}
  for i = 1, args.n do arg_tpl[i] = flatten(args[i], ts, sig, 'arg' .. i) end
  for k, t in ipairs(ts) do
    if t.requires_grad then
      return false, string.format('input %d requires grad: a compiled call cannot give it a gradient; put the '
        .. 'parameters in the function (captured as state) and pass data only', k), nil
    end
  end
  if G.capturing() then return false, 'a capture is already running (lm.compile inside lm.compile runs eagerly)', nil end
  local began, why = pcall(G.begin, ts)
  if not began then return false, tostring(why):gsub('^graph%.begin: ', ''), nil end
  pending = {}
  local saved = install_guards()
  local res = table.pack(pcall(fn, table.unpack(args, 1, args.n)))
  remove_guards(saved)
  local binds = pending
  pending = nil
  if not res[1] then
    G.cancel()
    error(res[2], 0)
  end
  local results = table.pack(table.unpack(res, 2, res.n))
  local outs, osig = {}, {}
  local tpls = {}
  for i = 1, results.n do tpls[i] = flatten(results[i], outs, osig, 'result' .. i) end
  if #outs == 0 then
    G.cancel()
    return false, 'the function returned no tensor: a compiled function must return what it computes', results, tpls
  end
  for k, t in ipairs(outs) do
    if t.requires_grad then
      G.broken(string.format('result %d requires grad: compiled calls return tensors without a graph; run the '
        .. 'function under lm.no_grad (inference), or put backward and the optimizer step in it (a training step)', k))
      break
    end
  end
  collectgarbage('collect') -- tensors the function dropped must not look held by the caller
  local ok, cap = pcall(G.finish, outs)
  if not ok then return false, tostring(cap):gsub('^graph%.finish: ', ''), results, tpls end
  local g = M.from_capture(cap)
  for _, b in ipairs(binds) do
    for i = b.mark + 1, #g.nodes do
      if UPDATES[g.nodes[i].op] then
        g.bindings[#g.bindings + 1] = { node = i, fn = b.fn }
        break
      end
    end
  end
  g.arg_templates, g.result_templates, g.nresults = arg_tpl, tpls, results.n
  return true, g, results, tpls, table.concat(sig, ' ')
end

--- lm.graph.capture(fn, ...): runs fn(...) once under a capture and returns the graph (raises
--- with the reason when the capture breaks). The first results are g.results.
function M.capture(fn, ...)
  if type(fn) ~= 'function' and not (getmetatable(fn) or {}).__call then
    error('lm.graph.capture: fn must be a function, got ' .. type(fn), 2)
  end
  local ok, g, results = capture_call(fn, table.pack(...))
  if not ok then error('lm.graph.capture: ' .. g, 2) end
  g.results = results
  return g
end

-- ---------------------------------------------------------------- lm.compile

local Compiled = {}
Compiled.__index = Compiled

local function warn(self, msg)
  self.messages[#self.messages + 1] = msg
  if not self.opts.quiet then io.stderr:write('lm.compile: ', msg, '\n') end
end

-- Why a call re-traces: what differs from the most similar capture kept (up to three things).
local function why_retrace(keys, new)
  local function words(k)
    local t = {}
    for w in k:gmatch('%S+') do t[#t + 1] = w end
    return t
  end
  local b, best = words(new), nil
  for _, old in ipairs(keys) do
    local a, diffs = words(old), {}
    for i = 1, math.max(#a, #b) do
      if a[i] ~= b[i] then diffs[#diffs + 1] = string.format('%s became %s', a[i] or '(nothing)', b[i] or '(nothing)') end
    end
    if not best or #diffs < #best then best = diffs end
  end
  if not best or #best == 0 then return 'the arguments changed' end
  local shown = {}
  for i = 1, math.min(3, #best) do shown[i] = best[i] end
  return table.concat(shown, '; ') .. (#best > 3 and '; ...' or '')
end

function Compiled:__call(...)
  local args = table.pack(...)
  self.stats.calls = self.stats.calls + 1
  if self.broken then
    self.stats.eager = self.stats.eager + 1
    self.info = { kernels = nil, compiled = false, why = self.broken }
    return self.fn(...)
  end
  local ts, sig = {}, {}
  local tpl = {}
  for i = 1, args.n do tpl[i] = flatten(args[i], ts, sig, 'arg' .. i) end
  local key = table.concat(sig, ' ')
  local entry = self.cache[key]
  if entry then
    local g = entry.graph
    for _, b in ipairs(g.bindings) do
      for name, val in pairs(b.fn()) do g.cap:set(b.node, name, val) end
    end
    local res, info = g:program():run(ts, #g.outputs)
    info.compiled = true
    self.info = info
    local out = {}
    for i = 1, g.nresults do out[i] = rebuild(g.result_templates[i], res) end
    return table.unpack(out, 1, g.nresults)
  end
  if self.last_key then
    self.stats.retraces = self.stats.retraces + 1
    local why = why_retrace(self.keys, key)
    self.stats.why[#self.stats.why + 1] = why
    if self.ncache >= self.opts.max_cache then
      self.broken = string.format('%d captures for different arguments (the last: %s); running eagerly from now on',
        self.ncache, why)
      warn(self, self.broken)
      self.stats.eager = self.stats.eager + 1
      return self.fn(...)
    end
  end
  self.stats.captures = self.stats.captures + 1
  local ok, g, results = capture_call(self.fn, args)
  if not ok then
    self.stats.breaks = self.stats.breaks + 1
    self.broken = g
    warn(self, 'graph break: ' .. g .. '; the function runs eagerly')
    self.info = { compiled = false, why = g }
    if results then return table.unpack(results, 1, results.n) end
    return self.fn(...)
  end
  g.log_all = g:optimize(self.opts)
  local cost = g:cost()
  self.cache[key], self.ncache, self.last_key = { graph = g }, self.ncache + 1, key
  self.keys[#self.keys + 1] = key
  self.graph = g
  self.info = { kernels = #g.nodes, compiled = false, captured = true, optimized_kernels = cost.kernels }
  return table.unpack(results, 1, results.n)
end

function Compiled:__tostring()
  return string.format('compiled function (%d calls, %d captures, %d retraces%s)', self.stats.calls,
    self.stats.captures, self.stats.retraces, self.broken and ', eager: ' .. self.broken or '')
end

--- lm.compile(fn [, example_inputs] [, opts]) -> a callable (see the header).
function M.compile(fn, a, b)
  if type(fn) ~= 'function' and not (type(fn) == 'table' and (getmetatable(fn) or {}).__call) then
    error('lm.compile: fn must be a function (or a callable table), got ' .. type(fn), 2)
  end
  local example, opts = nil, {}
  -- a list (of tensors and values) is the example inputs; a table with names, the options
  if type(a) == 'table' and not lm.is_tensor(a) and a[1] ~= nil then example = a else opts = a or {} end
  if b ~= nil then opts = b end
  if type(opts) ~= 'table' then error('lm.compile: opts must be a table, got ' .. type(opts), 2) end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.max_cache = o.max_cache or 8
  local self = setmetatable({ fn = fn, opts = o, cache = {}, keys = {}, ncache = 0, messages = {},
    stats = { calls = 0, captures = 0, retraces = 0, breaks = 0, eager = 0, why = {} } }, Compiled)
  if example then self(table.unpack(example)) end
  return self
end

return M
