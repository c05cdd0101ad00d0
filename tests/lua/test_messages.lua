-- Every message a user reads counts from 1 (issue 13, item 1): a sweep of the bindings' error paths.
-- Every callable the fuzzer knows (lm, F, kernels, lm.autograd, lm.cuda, lm.sys, the Tensor methods
-- and metamethods, traces and sparse matrices) is called with argument lists drawn from a pool made
-- to reach shape, dim, index and list errors: tensors of shapes that do not fit together, lists of
-- them, dims and indices out of range (never 0, so that no message can quote a 0 back), 1-based
-- index tensors, options. Each error message must count from 1 ("dim 0", "tensor 0", "index 0",
-- "position [0", ... are faults) and name only the function the user called (an inner function's
-- name after it, "lm.one_hot: zeros: ...", is a fault). The C side: tests/core/test_messages.c.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local fuzz = dofile(here .. 'fuzz/fuzz.lua')

-- The 0-based phrase in msg, or nil.
local WORDS = { 'dim', 'dims', 'tensor', 'input', 'inputs', 'index', 'element', 'position',
  'argument', 'operand', 'entry', 'pair', 'row', 'column', 'class', 'target' }
local function zero_based(msg)
  if not (msg:find(' 0', 1, true) or msg:find('[0', 1, true)) then return nil end
  for _, w in ipairs(WORDS) do
    for s in msg:gmatch('%f[%w]' .. w .. ' 0[^%d.]') do return s end
    if msg:find('%f[%w]' .. w .. ' 0$') then return w .. ' 0' end
    if (w == 'position' or w == 'element') and msg:find('%f[%w]' .. w .. ' %[0') then return w .. ' [0' end
  end
end

-- Names of functions a message could wrongly name after the called one ("lm.x: zeros: ...").
local INNER = {}
for k, v in pairs(lm) do if type(v) == 'function' then INNER[k] = true end end
for k, v in pairs(lm.Tensor) do if type(v) == 'function' then INNER[k] = true end end
for _, k in ipairs({ 'empty', 'contiguous', 'broadcast', 'reduce', 'binary', 'unary' }) do INNER[k] = true end
local function inner_name(msg)
  local first, second = msg:match('^([%w_.:]+): ([%a_][%w_]*): ')
  if first and INNER[second] and not first:find(second, 1, true) then return second end
end

-- Calls that change process-wide state, or close what the pool holds, are left out.
local SKIP = {
  ['lm.set_memory_limit'] = true, ['lm.set_num_threads'] = true, ['lm.sys.fail_alloc_after'] = true,
  ['lm.set_grad_enabled'] = true, ['kernels.latency'] = true, ['lm.set_rng_state'] = true,
  ['Tensor:close'] = true, ['Tensor.__gc'] = true, ['Tensor.__close'] = true, ['Sparse.__gc'] = true,
  ['Sparse.__close'] = true, ['Trace.__gc'] = true, ['Trace.__close'] = true,
}

-- The pool, fresh for each callable (in-place calls change its tensors).
local function pool()
  local A, B, C = lm.ones(2, 3), lm.ones(4, 3), lm.ones(2, 4)
  local V, T, S = lm.ones(5), lm.ones(2, 3, 4), lm.tensor(2.0)
  local I = lm.tensor({ { 1, 2, 1 }, { 2, 1, 2 } }) -- 1-based indices, int64
  local J = lm.tensor({ 3, 1 })
  local M = lm.ones(2, 3, { dtype = 'uint8' })
  local D = lm.ones(2, 3, { dtype = 'float64' })
  local W = lm.ones(3, 2, 3, 3)                    -- a conv weight that does not fit T
  local tensors = { A, B, C, V, T, S, I, J, M, D, W }
  local values = {
    A, B, C, V, T, S, I, J, M, D, W, { A, C }, { A, B }, { A, V }, { S, S }, { T, A },
    1, 2, 3, -1, 4, -4, 9, 2.5, { 1, 3 }, { 2, 9 }, { { 1, 5 } }, { 1, 1 }, 'sum',
    { dtype = 'int64' },
  }
  return tensors, values
end

local function sweep()
  local api = fuzz.api()
  local stats = { calls = 0, errors = 0, callables = 0 }
  local distinct, first_bad = {}, nil
  local ndistinct = 0
  local seed = 12345
  local function rand(n) -- a fixed stream (LCG), so the sweep is the same on every run
    seed = (seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (seed >> 33) % n + 1
  end
  local limit, threads = lm.memory().limit_bytes, lm.get_num_threads()
  for _, f in ipairs(api) do
    if not SKIP[f.name] and not f.name:match('[.:]_[%w_]*$') then
      stats.callables = stats.callables + 1
      local tensors, values = pool()
      local lists = {}
      -- one argument, then two (the first a tensor or list: self), then 60 random triples
      for _, a in ipairs(values) do lists[#lists + 1] = { a } end
      for i = 1, 16 do for _, b in ipairs(values) do lists[#lists + 1] = { values[i], b } end end
      for _ = 1, 60 do
        lists[#lists + 1] = { tensors[rand(#tensors)], values[rand(#values)], values[rand(#values)] }
      end
      for _, args in ipairs(lists) do
        stats.calls = stats.calls + 1
        local ok, err = pcall(f.fn, table.unpack(args, 1, #args))
        if not ok then
          stats.errors = stats.errors + 1
          local msg = tostring(err):gsub('^[^:\n]*:%d+: ', '')
          local key = msg:gsub('%d', '')
          if not distinct[key] then distinct[key] = true; ndistinct = ndistinct + 1 end
          local z, inner = zero_based(msg), inner_name(msg)
          if (z or inner) and not first_bad then
            first_bad = string.format('%s: "%s" %s', f.name, msg,
              z and ('counts from 0 at "' .. z .. '"') or ('names ' .. inner .. ' after ' .. f.name))
          end
        end
        lm.set_grad_enabled(true)
      end
      lm.set_memory_limit(limit)
      if lm.get_num_threads() ~= threads then lm.set_num_threads(threads) end
    end
  end
  stats.distinct = ndistinct
  return stats, first_bad
end

test.case('every error message of the bindings counts from 1 and names the function called', function()
  local stats, bad = sweep()
  io.stderr:write(string.format('binding sweep: %d callables, %d calls, %d errors, %d distinct '
    .. 'messages\n', stats.callables, stats.calls, stats.errors, stats.distinct))
  test.ok(not bad, bad)
  test.ok(stats.distinct > 500, 'the sweep reaches ' .. stats.distinct .. ' distinct messages')
end)

test.case('the sweep finds 0-based phrases and inner names', function()
  test.ok(zero_based('lm.cat: tensor 0 has shape [2, 4]'))
  test.ok(zero_based('Tensor:__add: shapes [2] and [4] cannot be broadcast together (dim 0: 2 vs 4)'))
  test.ok(zero_based('Tensor:gather: index 5 at position [0, 1] is out of range'))
  test.ok(zero_based('x: index 0'))
  test.ok(not zero_based('lm.cat: tensor 1 has shape [0, 4] (dim 10: 2 vs 3)'))
  test.ok(not zero_based('F.pad: value 0.5 for dim 2 of size 0'))
  test.eq(inner_name('lm.one_hot: zeros: cannot allocate'), 'zeros')
  test.eq(inner_name('Tensor:sum: dim 4 is out of range'), nil)
  test.eq(inner_name('Tensor:index_select: index: index 4 is out of range 1..3'), nil)
end)

-- The issue's examples, as the user meets them.
test.case('the messages the issue quoted count from 1', function()
  test.raises(function() return lm.cat({ lm.ones(2, 3), lm.ones(2, 4) }, 1) end,
    'lm.cat: tensor 2 has shape [2, 4] but tensor 1 has shape [2, 3]: sizes must match except in '
    .. 'dim 1 (dim 2: 4 vs 3)')
  test.raises(function() return lm.zeros(2, 3) + lm.zeros(4, 3) end,
    'Tensor:__add: shapes [2, 3] and [4, 3] cannot be broadcast together (dim 1: 2 vs 4)')
  test.raises(function() return lm.zeros(2, 3)[3] end, 'index 3 is out of range for dim 1 of size 2')
  test.raises(function() return lm.ones(2, 3):expand(4, 3) end, '(dim 1: 2 vs 4)')
  test.raises(function() return lm.stack({ lm.ones(2), lm.ones(3) }) end,
    'lm.stack: tensor 2 has shape [3] but tensor 1 has shape [2]')
  test.raises(function() return lm.where(lm.ones(2, 3), lm.ones(2, 3), lm.ones(4, 3)) end, '(dim 1: 2 vs 4)')
  test.raises(function() return lm.maximum(lm.ones(2, 3), lm.ones(4, 3)) end, '(dim 1: 2 vs 4)')
  test.raises(function() return lm.ones(2, 3):add_(lm.ones(4, 3)) end, '(dim 1: 2 vs 4)')
  test.raises(function() return lm.ones(2, 3):gather(2, lm.ones(3, 3, { dtype = 'int64' })) end,
    'larger than the input [2, 3] at dim 1 (3 > 2)')
  test.raises(function() return lm.matmul(lm.ones(2, 3, 4), lm.ones(5, 4, 2)) end,
    'the batch dims of [2, 3, 4] and [5, 4, 2] cannot be broadcast together (dim 1: 2 vs 5)')
  test.raises(function() return lm.matmul(lm.ones(7, 2, 3, 4), lm.ones(5, 4, 2)) end, '(dim -3: 2 vs 5)')
  test.raises(function() return lm.ones(3) + lm.ones(2, 4) end, '(dim -1: 3 vs 4)')
end)
