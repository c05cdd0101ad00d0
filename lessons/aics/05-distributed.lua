--[[
AI Computing Systems, chapter 5: distributed training, one of a framework's four modules, following
the notes — why split (a node with too little compute: data parallelism; too little memory: model
parallelism; both: hybrid), data parallelism and its all-reduce (a parameter server against the
ring), the ring all-reduce written by the student in Lua on sendrecv and checked on a world of 2 to
5 ranks simulated in this process (coroutines, messages in queues) against the sum all_reduce gives
on random integers with odd sizes, then the ring run for real with Open MPI (the lesson starts the
ranks itself with mpirun and times it against lumen.dist's ring and tree, a parameter server and
MPI_Allreduce), DistributedDataParallel's buckets and their overlap with backward measured on 2
ranks, model parallelism and the pipeline bubble of GPipe (the student's formula against the idle
slots counted on a simulated schedule), the student's 1F1B order checked slot by slot and then run
by dist.Pipeline on 2 ranks next to GPipe and the built-in 1F1B (bubble measured and counted,
activations kept; Megatron's split MLP against the whole), and ZeRO's memory arithmetic (per-rank
bytes of mixed-precision Adam for each stage, checked on random model sizes and rank counts; then
dist.ZeroRedundancyOptimizer's state per rank measured).
Steps 4, 5, 7 and 8's run need Open MPI's mpirun: without it they say so and skip.
Step 3 shows the allreduce scene (the ring on 4 ranks beside the tree); step 6 the computed
pipeline scene, step 7 the pipeline as it ran; steps 6 and 8 plot in the curves scene.
Format: docs/lessons.md.
]]
local say = lesson.say

-- ---------------------------------------------------------------- the simulated world

-- The simulator, as step 3 shows it to the student; the check runs its own copy (below), so a
-- student who redefines `simulate` does not change what the check sees.
local SIM_SRC = [==[
-- simulate(fn, inputs): runs fn(t, comm) on a world of #inputs ranks simulated in this process,
-- one coroutine per rank; rank r gets t = inputs[r + 1] and comm = {rank = r, size = n,
-- sendrecv = ...}. comm.sendrecv(t, dst, into, src) sends a copy of t to rank dst and fills into
-- with what rank src sent (both at once, as dist.sendrecv). Returns, per rank (1-based), what fn
-- returned, and stats[r + 1] = {exchanges =, sent = elements}. A rank that raises, two sides of an
-- exchange that disagree on the size or dtype, or ranks waiting forever, are errors naming the rank.
function simulate(fn, inputs)
  local n, box, stats, ranks, results = #inputs, {}, {}, {}, {}
  local moves = 0
  sim_fault = nil
  local hook, mask, count = debug.gethook()  -- a check's budget of instructions reaches the ranks
  for r = 0, n - 1 do
    box[r], stats[r + 1] = {}, { exchanges = 0, sent = 0 }
  end
  for r = 0, n - 1 do
    local comm = { rank = r, size = n }
    function comm.sendrecv(t, dst, into, src)
      for _, p in ipairs({ { dst, 'dst' }, { src, 'src' } }) do
        if math.type(p[1]) ~= 'integer' or p[1] < 0 or p[1] >= n then
          error(string.format('rank %d: sendrecv\'s %s must be a rank 0..%d, got %s', r, p[2], n - 1, tostring(p[1])), 0)
        end
      end
      box[dst][r] = box[dst][r] or {}
      table.insert(box[dst][r], t:clone():view(-1))
      stats[r + 1].exchanges, stats[r + 1].sent = stats[r + 1].exchanges + 1, stats[r + 1].sent + t:numel()
      moves = moves + 1
      while not (box[r][src] and box[r][src][1]) do coroutine.yield(src) end
      local m = table.remove(box[r][src], 1)
      moves = moves + 1
      if m:numel() ~= into:numel() or m:dtype() ~= into:dtype() then
        sim_fault = { kind = 'size', from = src, to = r, sent = m:numel(), into = into:numel() }
        error(string.format('rank %d sent %d elements (%s) to rank %d, which received them into %d (%s)',
          src, m:numel(), m:dtype(), r, into:numel(), into:dtype()), 0)
      end
      into:copy_(m:view(into:shape()))
      return into
    end
    ranks[r] = coroutine.create(function()
      if type(hook) == 'function' then debug.sethook(hook, mask, count) end
      return fn(inputs[r + 1], comm)
    end)
  end
  local waiting, left = {}, n
  while left > 0 do                          -- round robin; a round without a move is a deadlock
    local before, finished = moves, false
    for r = 0, n - 1 do
      if coroutine.status(ranks[r]) == 'suspended' then
        local ok, v = coroutine.resume(ranks[r])
        if not ok then error(string.format('rank %d: %s', r, tostring(v)), 0) end
        if coroutine.status(ranks[r]) == 'dead' then
          results[r + 1], left, finished = v, left - 1, true
        else
          waiting[r] = v
        end
      end
    end
    if left > 0 and moves == before and not finished then
      local who = {}
      for r = 0, n - 1 do
        if coroutine.status(ranks[r]) ~= 'dead' then who[#who + 1] = string.format('rank %d waits for rank %s', r, tostring(waiting[r])) end
      end
      sim_fault = { kind = 'deadlock' }
      error('deadlock: ' .. table.concat(who, ', ') .. ', and no message will come (the others returned)', 0)
    end
  end
  for r = 0, n - 1 do
    for src, q in pairs(box[r]) do
      if #q > 0 then
        sim_fault = { kind = 'unreceived' }
        error(string.format('rank %d sent %d message(s) to rank %d that it never received (the ranks made different numbers of exchanges)', src, #q, r), 0)
      end
    end
  end
  return results, stats
end
]==]

-- The check's own simulator: SIM_SRC loaded into a table of its own (when first needed).
local SIM
local function sim()
  if not SIM then
    SIM = setmetatable({}, { __index = _G })
    assert(load(SIM_SRC, '=simulate', 't', SIM))()
  end
  return SIM
end

-- ---------------------------------------------------------------- the ring

local RING_SOLUTION = [[
function ring_all_reduce(t, comm)
  local n, r, k = comm.size, comm.rank, t:numel()
  local right, left = (r + 1) % n, (r - 1) % n
  local function chunk(c)              -- chunk c (mod n) of t, a view: the first k % n are one longer
    c = c % n
    local base, extra = k // n, k % n
    local first = c * base + math.min(c, extra)
    return t:narrow(1, first + 1, base + (c < extra and 1 or 0))
  end
  for s = 0, n - 2 do                  -- reduce-scatter: add the left neighbour's partial sums
    local into = chunk(r - s - 1)
    local got = lm.empty(into:numel(), {dtype = t:dtype()})
    comm.sendrecv(chunk(r - s), right, got, left)
    into:add_(got)
  end
  for s = 0, n - 2 do                  -- all-gather: pass the finished sums on
    comm.sendrecv(chunk(r + 1 - s), right, chunk(r - s), left)
  end
  return t
end
]]

-- The ring with one mistake switched on (v): the check names the mistake a wrong answer matches.
local function ring_variant(v)
  return function(t, comm)
    local n, r, k = comm.size, comm.rank, t:numel()
    local function chunk(c)
      c = c % n
      if v.floor then return t:narrow(1, c * (k // n) + 1, k // n) end
      local base, extra = k // n, k % n
      return t:narrow(1, c * base + math.min(c, extra) + 1, base + (c < extra and 1 or 0))
    end
    for s = v.rs_late and 1 or 0, v.rs_extra and n - 1 or v.rs_short and n - 3 or n - 2 do
      local into = chunk(r - s - 1)
      local got = lm.empty(into:numel(), { dtype = t:dtype() })
      comm.sendrecv(chunk(v.send_off and r - s - 1 or r - s), (r + 1) % n, got, (r - 1) % n)
      into:add_(got)
    end
    if not v.nogather then
      for s = v.ag_late and 1 or 0, v.ag_short and n - 3 or n - 2 do
        local into = chunk(r - s)
        local got = lm.empty(into:numel(), { dtype = t:dtype() })
        comm.sendrecv(chunk(r + 1 - s), (r + 1) % n, got, (r - 1) % n)
        if v.addgather then into:add_(got) else into:copy_(got) end
      end
    end
    return t
  end
end

local RING_MISTAKES = {
  { { nogather = true }, say('it matches the ring without the all-gather: after the reduce-scatter rank r holds the full sum only in chunk (r + 1) mod n; n - 1 more steps must pass the finished chunks on',
    '它和少了 all-gather 阶段的环一样：reduce-scatter 之后，rank r 只有第 (r + 1) mod n 块是完整的和；还要再走 n - 1 步，把算好的块传下去') },
  { { addgather = true }, say('it matches adding in the all-gather phase: the chunks arriving there are finished sums, so copy them over yours (into:copy_), do not add them',
    '它和在 all-gather 阶段做加法的结果一样：这一阶段收到的块已经是完整的和，要覆盖（copy_）自己的那块，而不是再加上去') },
  { { rs_extra = true }, say('it matches n steps of reduce-scatter: after n - 1 steps a chunk has passed every rank once; one more step adds a finished sum to a partial one',
    '它和做了 n 步 reduce-scatter 的结果一样：n - 1 步后每块已经经过了所有 rank；多走一步会把一个完整的和再加到别的部分和上') },
  { { rs_short = true }, say('it matches n - 2 steps of reduce-scatter: a chunk must pass all n ranks, so n - 1 steps (s = 0 .. n - 2) before its sum is complete',
    '它和只做 n - 2 步 reduce-scatter 的结果一样：一块要经过全部 n 个 rank，需要 n - 1 步（s = 0 .. n - 2）才得到完整的和') },
  { { ag_short = true }, say('it matches n - 2 steps of all-gather: each rank has one finished chunk and needs the n - 1 others, one a step (s = 0 .. n - 2)',
    '它和只做 n - 2 步 all-gather 的结果一样：每个 rank 有一块算好的，还缺另外 n - 1 块，每步得到一块（s = 0 .. n - 2）') },
  { { rs_late = true }, say('it matches a reduce-scatter that starts at s = 1: step s = 0, sending your own chunk r, is where every chunk starts its way round',
    '它和从 s = 1 开始的 reduce-scatter 一样：s = 0 这一步发送自己的第 r 块，每一块都从这里开始绕环') },
  { { ag_late = true }, say('it matches an all-gather that starts at s = 1: step s = 0 sends the chunk finished on this rank, (r + 1)',
    '它和从 s = 1 开始的 all-gather 一样：s = 0 这一步发送本 rank 算好的那块，即第 (r + 1) 块') },
  { { floor = true }, say('it matches chunks of k // n elements each: when n does not divide k the last k % n elements are in no chunk and never summed; give the first k % n chunks one element more',
    '它和每块都取 k // n 个元素的结果一样：n 不整除 k 时，最后 k % n 个元素不属于任何一块，从未被求和；前 k % n 块应各多一个元素') },
  { { send_off = true }, say('it matches sending chunk (r - s - 1), the one you add into: in step s rank r sends chunk (r - s) and adds what comes from r - 1, its chunk (r - 1) - s',
    '它和发送第 (r - s - 1) 块（即自己要累加的那块）的结果一样：第 s 步 rank r 发送第 (r - s) 块，并累加从 r - 1 收到的块，也就是它的第 (r - 1) - s 块') },
}

local RING_CASES = { { 3, 13 }, { 5, 31 }, { 2, 7 }, { 4, 10 }, { 4, 3 } } -- ranks, elements

-- rank r's data for case ci: random integers in [-9, 9] as float64 (the sums are exact in any order)
local function ring_inputs(ci, n, k)
  local rnd = lesson.lcg(1000 + 17 * ci)
  local out = {}
  for r = 1, n do
    local v = {}
    for i = 1, k do v[i] = math.floor(rnd() * 19) - 9 end
    out[r] = lm.tensor(v, { dtype = 'float64' })
  end
  return out
end

local function chunk_of(i, k, n) -- the chunk (0-based) of element i (1-based), with its first and last
  local base, extra = k // n, k % n
  for c = 0, n - 1 do
    local first = c * base + math.min(c, extra)
    local len = base + (c < extra and 1 or 0)
    if i - 1 >= first and i - 1 < first + len then return c, first + 1, first + len end
  end
end

local function check_ring(env)
  local ok, fn = lesson.need(env, 'ring_all_reduce')
  if not ok then return false, fn end
  local S = sim()
  for ci, c in ipairs(RING_CASES) do
    local n, k = c[1], c[2]
    local orig = ring_inputs(ci, n, k)
    local want = orig[1]:clone()
    for r = 2, n do want = want + orig[r] end
    local inputs = {}
    for r = 1, n do inputs[r] = orig[r]:clone() end
    local on_en = string.format('ring_all_reduce on %d ranks, %d elements', n, k)
    local on_zh = string.format('ring_all_reduce 在 %d 个 rank、%d 个元素上', n, k)
    local rok, results, stats = lesson.try(S.simulate, fn, inputs)
    if not rok then
      local why = { en = '', zh = '' }
      if S.sim_fault and S.sim_fault.kind == 'size' then
        why = say('; both sides of an exchange must use the same chunk: in step s rank r sends its chunk (r - s) and rank r + 1 receives it as its chunk (r + 1) - s - 1, the same number, and every chunk has the same bounds on every rank',
          '；一次交换的两端必须是同一块：第 s 步 rank r 发送它的第 (r - s) 块，rank r + 1 把它当作自己的第 (r + 1) - s - 1 块接收，编号相同，而且每块在所有 rank 上的边界都一样')
      elseif S.sim_fault and S.sim_fault.kind == 'deadlock' then
        why = say('; every rank must make the same number of exchanges, each sending right and receiving from the left',
          '；每个 rank 的交换次数必须相同，每次都向右发送、从左接收')
      end
      return false, say(on_en .. ': ' .. results.en .. why.en, on_zh .. '：' .. (results.zh or results.en) .. why.zh)
    end
    for r = 1, n do
      local got = inputs[r]
      if not lm.equal(got, want) then
        local ret = results[r]
        if lm.is_tensor(ret) and not rawequal(ret, got) and ret:numel() == k and lm.equal(ret:double():view(-1), want) then
          return false, say(on_en .. ': you return the sum in a new tensor, but t itself is unchanged on rank ' .. (r - 1) .. ': all-reduce works in place (as dist.all_reduce); add into t\'s chunks (views made with t:narrow)',
            on_zh .. '：你把和放在一个新张量里返回了，但 rank ' .. (r - 1) .. ' 上的 t 本身没变：all-reduce 是原地操作（和 dist.all_reduce 一样）；要加到 t 的块上（用 t:narrow 得到的视图）')
        end
        local why
        for _, m in ipairs(RING_MISTAKES) do
          local vin = {}
          for q = 1, n do vin[q] = orig[q]:clone() end
          if pcall(S.simulate, ring_variant(m[1]), vin) then
            local same = true
            for q = 1, n do if not lm.equal(vin[q], inputs[q]) then same = false end end
            if same then why = m[2] break end
          end
        end
        local bad
        for i = 1, k do
          if got[i]:item() ~= want[i]:item() then bad = i break end
        end
        local ch, a, b = chunk_of(bad, k, n)
        local own = got[bad]:item() == orig[r][bad]:item()
        local msg = say(string.format('%s: on rank %d element %d (in chunk %d, elements %d..%d) is %s, expected %s, the sum over the ranks%s',
            on_en, r - 1, bad, ch, a, b, lesson.show(got[bad]:item()), lesson.show(want[bad]:item()),
            own and ' (it is still rank ' .. (r - 1) .. '\'s own value: nothing was added into it)' or ''),
          string.format('%s：rank %d 的第 %d 个元素（第 %d 块，元素 %d..%d）是 %s，应为 %s，即各 rank 之和%s',
            on_zh, r - 1, bad, ch, a, b, lesson.show(got[bad]:item()), lesson.show(want[bad]:item()),
            own and '（它还是 rank ' .. (r - 1) .. ' 自己的值：没有任何东西加到它上面）' or ''))
        why = why or say('look at the chunk bounds (chunk c: first = c * (k // n) + min(c, k % n), k // n + 1 elements when c < k % n, else k // n; together exactly t) and the steps (reduce-scatter s = 0 .. n - 2: send chunk r - s, add into chunk r - s - 1; all-gather s = 0 .. n - 2: send chunk r + 1 - s, copy into chunk r - s)',
          '检查块的边界（第 c 块：first = c * (k // n) + min(c, k % n)，c < k % n 时有 k // n + 1 个元素，否则 k // n 个；合起来正好是 t）和步骤（reduce-scatter s = 0 .. n - 2：发送第 r - s 块，加到第 r - s - 1 块；all-gather s = 0 .. n - 2：发送第 r + 1 - s 块，覆盖第 r - s 块）')
        return false, say(msg.en .. '; ' .. why.en, msg.zh .. '；' .. why.zh)
      end
    end
    if k >= n then -- (with k < n some chunks are empty: a ring may skip those exchanges)
      for r = 1, n do
        local e = stats[r].exchanges
        if e ~= 2 * (n - 1) then
          local total = 0
          for q = 1, n do total = total + stats[q].sent end
          if n > 2 and e == n - 1 and total == n * (n - 1) * k then
            return false, say(string.format('%s: the sums are right, but each rank sent the whole tensor n - 1 = %d times: %d elements per rank, where the ring sends 2(n - 1)/n * k = %s. Split t into n chunks: n - 1 steps of reduce-scatter, then n - 1 steps of all-gather',
                on_en, n - 1, (n - 1) * k, lesson.show(2 * (n - 1) * k / n)),
              string.format('%s：和是对的，但每个 rank 把整个张量发送了 n - 1 = %d 次：每个 rank 发送 %d 个元素，而环只需 2(n - 1)/n * k = %s 个。把 t 分成 n 块：先 n - 1 步 reduce-scatter，再 n - 1 步 all-gather',
                on_zh, n - 1, (n - 1) * k, lesson.show(2 * (n - 1) * k / n)))
          end
          return false, say(string.format('%s: the sums are right, but rank %d made %d exchanges; the ring makes 2(n - 1) = %d, n - 1 to reduce-scatter and n - 1 to all-gather (an extra step sends a chunk the neighbour already has)',
              on_en, r - 1, e, 2 * (n - 1)),
            string.format('%s：和是对的，但 rank %d 做了 %d 次交换；环只需 2(n - 1) = %d 次：n - 1 次 reduce-scatter，n - 1 次 all-gather（多出的一步发送的是邻居已经有的块）',
              on_zh, r - 1, e, 2 * (n - 1)))
        end
      end
      local total = 0
      for q = 1, n do total = total + stats[q].sent end
      if total ~= 2 * (n - 1) * k then
        return false, say(string.format('%s: the sums are right, but the ranks sent %d elements in all; the ring sends 2(n - 1) * k = %d: every step sends one chunk, and the n chunks split t exactly (their sizes add up to k)',
            on_en, total, 2 * (n - 1) * k),
          string.format('%s：和是对的，但所有 rank 一共发送了 %d 个元素；环一共发送 2(n - 1) * k = %d 个：每步发送一块，n 块正好把 t 分完（大小之和为 k）',
            on_zh, total, 2 * (n - 1) * k))
      end
    end
  end
  return true, say('right: every rank holds the sum on 2 to 5 ranks with odd sizes (and one shorter than the ring), with 2(n - 1) exchanges per rank and 2(n - 1)/n * k elements sent per rank',
    '对：在 2 到 5 个 rank、奇数长度（以及比环还短的张量）上，每个 rank 都得到了总和；每个 rank 交换 2(n - 1) 次，平均发送 2(n - 1)/n * k 个元素')
end

-- ---------------------------------------------------------------- the pipeline bubble

local function check_bubble(env)
  local ok, fn = lesson.need(env, 'bubble')
  if not ok then return false, fn end
  local cases = { { 4, 6 }, { 1, 5 }, { 2, 1 }, { 8, 32 }, { 3, 7 } }
  local rnd = lesson.lcg(55)
  for _ = 1, 6 do cases[#cases + 1] = { 1 + math.floor(rnd() * 16), 1 + math.floor(rnd() * 64) } end
  for _, c in ipairs(cases) do
    local K, M = c[1], c[2]
    local want = (K - 1) / (M + K - 1)
    local rok, got = lesson.try(fn, K, M)
    if not rok then return false, got end
    local g = lesson.number(got)
    local call = string.format('bubble(%d, %d)', K, M)
    if g == nil then
      return false, say(string.format('%s returns %s; return a number, the fraction of the time a stage is idle', call, type(got)),
        string.format('%s 返回的是 %s；应返回一个数：一个阶段空闲时间所占的比例', call, type(got)))
    end
    if math.abs(g - want) > 1e-9 then
      local why
      local variants = {
        { (K - 1) / M, say('that is the idle time over the busy time; the bubble fraction is idle over the whole: K - 1 idle slots of the M + K - 1 a stage spends',
          '这是空闲时间除以忙碌时间；气泡比例是空闲占全部的比例：一个阶段在 M + K - 1 个时隙中有 K - 1 个空闲') },
        { (K - 1) / (M + K), say('the schedule takes M + K - 1 slots, not M + K: the last micro-batch enters the first stage at slot M and leaves the last stage K - 1 slots later',
          '整个调度占 M + K - 1 个时隙，不是 M + K：最后一个微批在第 M 个时隙进入第一级，再过 K - 1 个时隙离开最后一级') },
        { K / (M + K - 1), say('a stage is idle for K - 1 slots, not K: the first stage starts at once and waits only while the last micro-batch goes through the other K - 1',
          '一个阶段空闲 K - 1 个时隙，不是 K 个：第一级立刻开始，只在最后一个微批经过其余 K - 1 级时等待') },
        { M / (M + K - 1), say('that is the busy fraction (M of M + K - 1 slots); the bubble is the rest', '这是忙碌的比例（M + K - 1 个时隙中的 M 个）；气泡是剩下的部分') },
        { M + K - 1, say('that is the length of the schedule in slots; divide the K - 1 idle slots by it', '这是调度的总时隙数；要用空闲的 K - 1 个时隙除以它') },
        { (K - 1) / (M * K), say('the bubble is idle slots over the slots of the schedule: (K - 1) / (M + K - 1)', '气泡比例是空闲时隙除以调度的总时隙：(K - 1) / (M + K - 1)') },
      }
      if K > 1 and g == 0 and want > 0 then
        why = say("that is 0: // is Lua's integer (floor) division; use /", '得到 0：// 是 Lua 的整除（向下取整）；要用 /')
      end
      for _, v in ipairs(variants) do
        if not why and math.abs(g - v[1]) <= 1e-9 * math.max(1, math.abs(v[1])) then why = v[2] end
      end
      local msg = say(string.format('%s returns %s, expected %s (K = %d stages, M = %d micro-batches)', call, lesson.show(g), lesson.show(want), K, M),
        string.format('%s 返回 %s，应为 %s（K = %d 级，M = %d 个微批）', call, lesson.show(g), lesson.show(want), K, M))
      if why then return false, say(msg.en .. ': ' .. why.en, msg.zh .. '：' .. why.zh) end
      return false, msg
    end
  end
  return true, say('right: (K - 1) / (M + K - 1) on every K and M, one stage (no bubble) and one micro-batch (K - 1 of K idle) included',
    '对：在所有 K 和 M 上都是 (K - 1) / (M + K - 1)，包括只有一级（没有气泡）和只有一个微批（K 个时隙空闲 K - 1 个）的情况')
end

-- ---------------------------------------------------------------- 1F1B, by the student

-- Why ops is not one stage's order of M micro-batches, or nil (as dist.Pipeline checks it).
local function order_problem(ops, M)
  if type(ops) ~= 'table' then return say('it returns ' .. type(ops) .. ', not a list of ops', '它返回的是 ' .. type(ops) .. '，不是操作的列表') end
  local f, b = {}, {}
  for i, op in ipairs(ops) do
    local kind, m = type(op) == 'table' and op[1], type(op) == 'table' and op[2]
    if (kind ~= 'F' and kind ~= 'B') or math.type(m) ~= 'integer' or m < 1 or m > M then
      return say(string.format("op %d is not {'F', m} or {'B', m} with an integer m in 1..%d", i, M),
        string.format("第 %d 个操作不是 {'F', m} 或 {'B', m}（m 为 1..%d 的整数）", i, M))
    end
    local seen = kind == 'F' and f or b
    if seen[m] then return say(string.format('op %d runs %s%d a second time', i, kind, m), string.format('第 %d 个操作第二次运行 %s%d', i, kind, m)) end
    if kind == 'B' and not f[m] then
      return say(string.format('op %d runs B%d before F%d: a backward needs its forward\'s activations', i, m, m),
        string.format('第 %d 个操作在 F%d 之前运行 B%d：反向需要它的前向留下的激活', i, m, m))
    end
    seen[m] = true
  end
  for m = 1, M do
    if not f[m] or not b[m] then
      return say(string.format('%s%d is missing: every stage runs each micro-batch\'s forward and backward once', f[m] and 'B' or 'F', m),
        string.format('缺少 %s%d：每一级要对每个微批各做一次前向和反向', f[m] and 'B' or 'F', m))
    end
  end
end

-- The stages' orders placed in slots as soon as each op can run (as the pipeline scene counts
-- them): the number of slots, or nil and the stage that waits for ever; and each stage's peak of
-- micro-batches between their F and B.
local function run_orders(orders)
  local K = #orders
  local done, pos, free, left, span = {}, {}, {}, 0, 0
  for k = 1, K do done[k], pos[k], free[k] = {}, 1, 0 left = left + #orders[k] end
  while left > 0 do
    local moved = false
    for k = 1, K do
      local op = orders[k][pos[k]]
      if op then
        local kind, m = op[1], op[2]
        local dep
        if kind == 'F' then dep = k == 1 and 0 or done[k - 1]['F' .. m]
        else dep = k == K and done[k]['F' .. m] or (k < K and done[k + 1]['B' .. m]) end
        if dep then
          local s = math.max(free[k], dep)
          done[k][kind .. m], free[k], pos[k] = s + 1, s + 1, pos[k] + 1
          span, left, moved = math.max(span, s + 1), left - 1, true
        end
      end
    end
    if not moved then
      for k = 1, K do if orders[k][pos[k]] then return nil, k, orders[k][pos[k]] end end
    end
  end
  local peak = {}
  for k = 1, K do
    local held = 0
    peak[k] = 0
    for _, op in ipairs(orders[k]) do
      held = held + (op[1] == 'F' and 1 or -1)
      peak[k] = math.max(peak[k], held)
    end
  end
  return span, peak
end

local function check_1f1b(env)
  local ok, fn = lesson.need(env, 'one_f_one_b')
  if not ok then return false, fn end
  local cases = { { 4, 6 }, { 1, 3 }, { 3, 1 }, { 2, 2 }, { 4, 4 }, { 5, 3 } }
  local rnd = lesson.lcg(71)
  for _ = 1, 8 do cases[#cases + 1] = { 1 + math.floor(rnd() * 8), 1 + math.floor(rnd() * 12) } end
  for _, c in ipairs(cases) do
    local K, M = c[1], c[2]
    local where_en, where_zh = string.format('K = %d stages, M = %d micro-batches', K, M), string.format('K = %d 级，M = %d 个微批', K, M)
    local orders = {}
    for k = 1, K do
      local rok, ops = lesson.try(fn, K, k, M)
      if not rok then return false, ops end
      local why = order_problem(ops, M)
      if why then
        return false, say(string.format('one_f_one_b(%d, %d, %d): %s', K, k, M, why.en), string.format('one_f_one_b(%d, %d, %d)：%s', K, k, M, why.zh))
      end
      orders[k] = ops
    end
    local span, peak, op = run_orders(orders)
    if not span then
      local k = peak
      return false, say(string.format('%s: the stages wait on each other for ever: stage %d cannot run %s%d (what it needs comes after something that needs it); a real pipeline would hang here',
          where_en, k, op[1], op[2]),
        string.format('%s：各级互相等待，永远等下去：第 %d 级无法运行 %s%d（它需要的东西排在需要它的东西之后）；真正的流水线会在这里卡死', where_zh, k, op[1], op[2]))
    end
    for k = 1, K do
      local most = math.min(K - k + 1, M)
      if peak[k] > most then
        return false, say(string.format('%s: stage %d keeps %d micro-batches\' activations at once; 1F1B keeps at most K - k + 1 = %d: after K - k warm-up forwards, each forward is followed by a backward (that is what frees the memory GPipe holds)',
            where_en, k, peak[k], most),
          string.format('%s：第 %d 级同时保留了 %d 个微批的激活；1F1B 最多保留 K - k + 1 = %d 个：热身做 K - k 个前向，之后每个前向后面紧跟一个反向（这正是它比 GPipe 省内存的地方）',
            where_zh, k, peak[k], most))
      end
    end
    if span ~= 2 * (M + K - 1) then
      return false, say(string.format('%s: the schedule takes %d slots; 1F1B takes 2(M + K - 1) = %d, the bubble GPipe has: a stage that starts its backwards too early waits for the next stage; warm up with K - k forwards',
          where_en, span, 2 * (M + K - 1)),
        string.format('%s：调度占 %d 个时隙；1F1B 占 2(M + K - 1) = %d 个，气泡与 GPipe 相同：一级太早开始反向就会等下一级；热身做 K - k 个前向', where_zh, span, 2 * (M + K - 1)))
    end
  end
  return true, say('right: on every K and M each stage runs every F and B once, nothing waits for ever, the schedule takes 2(M + K - 1) slots (the bubble (K - 1)/(M + K - 1)), and stage k keeps at most K - k + 1 micro-batches\' activations',
    '对：在所有 K 和 M 上，每一级都把每个 F 和 B 各做一次，没有永远的等待，调度占 2(M + K - 1) 个时隙（气泡 (K - 1)/(M + K - 1)），第 k 级最多保留 K - k + 1 个微批的激活')
end

-- ---------------------------------------------------------------- ZeRO

-- per-rank bytes of mixed-precision Adam with one mistake (v): 'stage' shifts the stage
local function zero_variant(P, N, stage, v)
  local params, grads, states = 2 * P, 2 * P, (v == 'states8' and 8 or 12) * P
  if v == 'fp32' then params, grads = 4 * P, 4 * P end
  if v == 'all' and stage >= 1 then return (params + grads + states) / N end
  if stage >= 1 then states = states / N end
  if stage >= 2 then grads = grads / N end
  if stage >= 3 then params = params / N end
  return params + grads + states
end

local ZERO_STAGES = {
  [0] = say('stage 0 (plain data parallelism) shards nothing: 2P + 2P + 12P on every rank', '第 0 级（普通数据并行）什么都不切分：每个 rank 都是 2P + 2P + 12P'),
  say('stage 1 shards only the optimizer states: 2P + 2P + 12P/N', '第 1 级只切分优化器状态：2P + 2P + 12P/N'),
  say('stage 2 shards the optimizer states and the gradients: 2P + 2P/N + 12P/N', '第 2 级切分优化器状态和梯度：2P + 2P/N + 12P/N'),
  say('stage 3 shards the parameters too: (2P + 2P + 12P)/N', '第 3 级把参数也切分了：(2P + 2P + 12P)/N'),
}

local function check_zero(env)
  local ok, fn = lesson.need(env, 'zero_bytes')
  if not ok then return false, fn end
  local cases = { { 7.5e9, 64 }, { 1234567, 3 }, { 350000000, 8 } }
  local rnd = lesson.lcg(71)
  for _ = 1, 3 do cases[#cases + 1] = { math.floor(1e6 + rnd() * 1e10), 2 + math.floor(rnd() * 500) } end
  for _, c in ipairs(cases) do
    local P, N = c[1], c[2]
    for _, stage in ipairs({ 1, 2, 3, 0 }) do
      local want = zero_variant(P, N, stage)
      local rok, got = lesson.try(fn, P, N, stage)
      if not rok then return false, got end
      local g = lesson.number(got)
      local call = string.format('zero_bytes(%s, %d, %d)', lesson.show(P), N, stage)
      if g == nil then
        return false, say(string.format('%s returns %s; return a number of bytes', call, type(got)),
          string.format('%s 返回的是 %s；应返回字节数', call, type(got)))
      end
      if math.abs(g - want) > 1e-9 * want then
        local why
        for _, s in ipairs({ 0, 1, 2, 3 }) do
          if s ~= stage and math.abs(g - zero_variant(P, N, s)) <= 1e-9 * want then
            why = say(string.format('that is what stage %d keeps: %s', s, ZERO_STAGES[stage].en), string.format('这是第 %d 级的占用：%s', s, ZERO_STAGES[stage].zh))
            break
          end
        end
        if not why and math.abs(g - zero_variant(P, N, stage, 'states8')) <= 1e-9 * want then
          why = say("Adam's fp32 states are 12 bytes per parameter: a master copy of the weights (4), the momentum (4) and the variance (4)",
            'Adam 的 fp32 状态是每个参数 12 字节：一份权重的主副本（4），动量（4）和方差（4）')
        elseif not why and math.abs(g - zero_variant(P, N, stage, 'fp32')) <= 1e-9 * want then
          why = say('in mixed precision the weights and gradients used by forward and backward are fp16: 2 bytes each; the fp32 copy of the weights is one of the 12 bytes of optimizer states',
            '混合精度下前向和反向用的权重和梯度是 fp16：各 2 字节；权重的 fp32 副本算在 12 字节的优化器状态里')
        elseif not why and math.abs(g - zero_variant(P, N, stage, 'all')) <= 1e-9 * want then
          why = say(ZERO_STAGES[stage].en .. ' (every stage adds one kind of sharding)', ZERO_STAGES[stage].zh .. '（每一级多切分一种）')
        elseif not why and (math.abs(g * 1e9 - want) <= 1e-6 * want or math.abs(g * 2 ^ 30 - want) <= 1e-6 * want) then
          why = say('return bytes, not gigabytes', '要返回字节数，而不是 GB')
        end
        local msg = say(string.format('%s returns %s, expected %s bytes per rank', call, lesson.show(g), lesson.show(want)),
          string.format('%s 返回 %s，每个 rank 应为 %s 字节', call, lesson.show(g), lesson.show(want)))
        why = why or ZERO_STAGES[stage]
        return false, say(msg.en .. ': ' .. why.en, msg.zh .. '：' .. why.zh)
      end
    end
  end
  return true, say("right: the bytes per rank of every stage on every model size and rank count, the ZeRO paper's 7.5B on 64 ranks included (120, 31.4, 16.6 and 1.9 GB)",
    '对：每一级在各种模型大小和 rank 数下每个 rank 的字节数都对，包括 ZeRO 论文里 7.5B 模型、64 个 rank 的例子（120、31.4、16.6 和 1.9 GB）')
end

-- ---------------------------------------------------------------- steps' code

-- mpirun from a step: the helper step 4 defines (steps 4 and 5 use it)
local RUN_RANKS = [==[
-- run_ranks(np, source): runs the Lua source on np ranks with Open MPI (mpirun starts np lumen
-- processes on this machine); returns what they printed, or nil and why it did not run
function run_ranks(np, source)
  if not os.execute('command -v mpirun >/dev/null 2>&1') then
    return nil, 'mpirun is not installed here (Debian: apt install openmpi-bin)'
  end
  if not lm._dist_built then return nil, 'this lumen was built without its MPI module (libopenmpi-dev)' end
  local path = os.tmpname()
  local f = assert(io.open(path, 'w'))
  f:write(source)
  f:close()
  local quote = function(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local limit = os.execute('command -v timeout >/dev/null 2>&1') and 'timeout 120 ' or ''
  -- (an ASan build's ranks: Open MPI's unloaded components leave allocations LeakSanitizer cannot
  -- name, so the ranks run without leak detection, as tests/dist/run.sh does)
  local p = io.popen(string.format('%senv ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np %d %s %s 2>&1',
    limit, np, quote(lm.sys.executable()), quote(path)))
  local out = p:read('a')
  local ok = p:close()
  os.remove(path)
  if not ok then return nil, 'mpirun failed:\n' .. out:sub(-1500) end
  return out
end
]==]

local MEASURE_RING = [==[
ring_source = [[
]==] .. RING_SOLUTION .. [==[
]]
-- the script every rank runs: ring_source, then the same all-reduce five ways, timed
local script = ring_source .. [[
local dist = require 'lumen.dist'
local rank, n = dist.init()
local comm = {rank = rank, size = n,
  sendrecv = function(t, dst, into, src) return dist.sendrecv(t, dst, into, src) end}
local k = 1000003                                  -- 8 MB of float64, an odd size
local function data() return (lm.arange(0, k, {dtype = 'float64'}) * 0.37 + rank):sin() end
local function server(t)                           -- a parameter server on rank 0
  if rank == 0 then
    local got = lm.empty(k, {dtype = 'float64'})
    for r = 1, n - 1 do dist.recv(got, r); t:add_(got) end
    for r = 1, n - 1 do dist.send(t, r) end
  else
    dist.send(t, 0); dist.recv(t, 0)
  end
  return t
end
local ways = {
  {'ring_source (Lua on sendrecv)', function(t) return ring_all_reduce(t, comm) end},
  {"dist's ring (Lua, the same)", function(t) return dist.all_reduce(t, {algo = 'ring'}) end},
  {"dist's tree (Lua)", function(t) return dist.all_reduce(t, {algo = 'tree'}) end},
  {'parameter server on rank 0', server},
  {'MPI_Allreduce (Open MPI)', function(t) return dist.all_reduce(t) end},
}
local ref = dist.all_reduce(data())
local mine = ring_all_reduce(data(), comm)
local diff = dist.all_gather(lm.tensor({(mine - ref):abs():max():item()}, {dtype = 'float64'})):max():item()
local lines = {}
for _, w in ipairs(ways) do
  local ts = {}
  for i = 1, 5 do
    local t = data()
    dist.barrier()
    local t0 = dist.wtime()
    w[2](t)
    ts[i] = dist.wtime() - t0
  end
  table.sort(ts)
  local slowest = dist.all_gather(lm.tensor({ts[3]}, {dtype = 'float64'})):max():item()
  lines[#lines + 1] = string.format('  %-32s %7.2f ms', w[1], slowest * 1000)
end
if rank == 0 then
  print(string.format('%d ranks: ring_source - MPI_Allreduce, largest difference: %.1e (rounding: another order of additions)', n, diff))
  print(table.concat(lines, '\n'))
end
]]
for i, np in ipairs({2, 3}) do
  local out, why = run_ranks(np, script)
  if not out then print('not measured: ' .. why) break end
  if i == 1 then print('measured with Open MPI on this machine: 1,000,003 float64 (8 MB), the median of 5 runs, the slowest rank') end
  io.write(out)
end
]==]

local MEASURE_DDP = [==[
-- the script: the same MLP trained on 2 ranks with DDP's default buckets and with tiny ones
local script = [[
local dist = require 'lumen.dist'
local rank, n = dist.init()
local train = data.FashionMNIST {split = 'train', limit = 1024}
local X, Y = train.data:view(-1, 784), train.targets
local function run(opts, steps_out)
  lm.manual_seed(1)
  local net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
  local ddp = nn.DistributedDataParallel(net, opts)
  local opt = optim.SGD(net:parameters(), {lr = 0.05})
  local idx = dist.DistributedSampler(X:size(1)):indices()      -- this rank's 512 images
  local times, calls, loss, tl, back = {}, 0, 0, nil, 0
  for s = 0, 15 do                                             -- 16 steps of 32 images per rank
    local i = idx:narrow(1, s * 32 + 1, 32)
    opt:zero_grad()
    local before = ddp.stats.calls
    dist.barrier()
    local t0 = dist.wtime()
    local l = F.cross_entropy(ddp(X:index_select(1, i)), Y:index_select(1, i))
    l:backward()
    times[#times + 1] = dist.wtime() - t0
    back = dist.wtime() - t0
    opt:step()
    calls, loss, tl = ddp.stats.calls - before, l:item(), ddp.timeline
  end
  table.sort(times)
  return ddp.stats.buckets, calls, times[8], loss, tl, back
end
run({})                                                        -- a warm-up (first-touch costs)
local configs = {{'default: 25 MB cap, 1 MB first', {}},
                 {'tiny: 0.05 MB buckets', {bucket_cap_mb = 0.05, first_bucket_mb = 0.05}}}
local out = {}
for rep = 1, 2 do
  for _, c in ipairs(configs) do
    local b, calls, med, loss, tl, back = run(c[2])
    local slowest = dist.all_gather(lm.tensor({med}, {dtype = 'float64'})):max():item()
    if rep == 2 then
      out[#out + 1] = string.format('  %-32s %d bucket(s), %d all-reduce(s) a step, %.2f ms a step, last loss %.4f',
        c[1], b, calls, slowest * 1000, loss)
      if b > 1 then
        local parts = {}
        for bi, e in ipairs(tl) do
          parts[#parts + 1] = string.format('bucket %d launched at %.2f ms, collected at %.2f ms', bi, e.launch * 1000, e.done * 1000)
        end
        out[#out + 1] = string.format('    the last step on rank %d, from the start of its forward (forward + backward: %.2f ms):', rank, back * 1000)
          .. '\n      ' .. table.concat(parts, '\n      ')
      end
    end
  end
end
if rank == 0 then print(table.concat(out, '\n')) end
]]
local out, why = run_ranks(2, script)
if out then
  print('measured with Open MPI on this machine, 2 ranks, an MLP of 235,146 parameters (0.94 MB of float32):')
  print('(the median step of 16, the slower rank; forward + backward including the all-reduces)')
  io.write(out)
else
  print('not measured: ' .. why)
end
]==]

local MEASURE_PIPELINE = [==[
-- 1F1B's order of ops for stage k of K (1-based) with M micro-batches: a list of {'F', m} and
-- {'B', m}. To correct: this is GPipe's order (every forward, then the backwards in reverse).
function one_f_one_b(K, k, M)
  local ops = {}
  for m = 1, M do ops[#ops + 1] = {'F', m} end
  for m = M, 1, -1 do ops[#ops + 1] = {'B', m} end
  return ops
end

-- your orders for K = 2 stages, written into the script the ranks run
local function orders_literal(ms)
  local parts = {}
  for _, M in ipairs(ms) do
    local stages = {}
    for k = 1, 2 do
      local ops = {}
      for i, op in ipairs(one_f_one_b(2, k, M)) do ops[i] = string.format("{'%s', %d}", op[1], op[2]) end
      stages[k] = '{' .. table.concat(ops, ', ') .. '}'
    end
    parts[#parts + 1] = string.format('[%d] = {%s}', M, table.concat(stages, ', '))
  end
  return '{' .. table.concat(parts, ', ') .. '}'
end
local lit_ok, lit = pcall(orders_literal, {1, 2, 4, 8})
local script = 'YOURS = ' .. (lit_ok and lit or 'nil') .. '\n' .. [[
local dist = require 'lumen.dist'
local rank, K = dist.init()
local width, batch = 256, 64
local function stage(k)                -- stage k: 2 x (Linear(256, 256), Tanh), seeded by k
  lm.manual_seed(k)
  return nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh())
end
lm.manual_seed(0)
local x, y = lm.randn(batch, width), lm.randn(batch, width)
local lines, shown = {}, nil
for _, M in ipairs({1, 2, 4, 8}) do
  for _, name in ipairs({'gpipe', '1f1b', 'yours'}) do
    local sched = name
    if name == 'yours' then sched = YOURS and function(_, k, m) return YOURS[m][k] end end
    if sched then
      local ok, pipe = pcall(dist.Pipeline, stage, {micro_batches = M, schedule = sched})
      if not ok then
        lines[#lines + 1] = string.format('  M = %d  %-6s refused: %s', M, name, (tostring(pipe):gsub('^.-dist%.Pipeline: ', '')))
      else
        pipe:train_step(x, y, F.mse_loss)                 -- a warm-up
        local ms, measured = 0, 0
        for _ = 1, 3 do
          pipe:zero_grad()
          pipe:train_step(x, y, F.mse_loss)
          ms, measured = ms + pipe.stats.seconds * 1000 / 3, measured + pipe.stats.bubble_measured / 3
        end
        local s = pipe.stats
        local peaks = dist.all_gather(lm.tensor({s.peak_activations})):view(-1):tolist()
        lines[#lines + 1] = string.format('  M = %d  %-6s %6.2f ms  bubble: measured %.3f, counted %.3f, (K-1)/(M+K-1) %.3f;  activations kept: %d and %d',
          M, name, ms, measured, s.bubble_slots, s.bubble_formula, peaks[1], peaks[2])
        if M == 4 and (name == 'yours' or not shown) then shown = pipe end
      end
    end
  end
end
-- Megatron's split of an MLP over the 2 ranks: W1 by rows, W2 by columns, one all-reduce
lm.manual_seed(7)
local l1, l2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
local col = dist.ColumnParallelLinear(width, 4 * width, {from = l1, gather_output = false})
local row = dist.RowParallelLinear(4 * width, width, {from = l2, input_is_parallel = true})
local diff = (row(F.gelu(col(x))) - l2(F.gelu(l1(x)))):abs():max():item()
if rank == 0 then
  print(table.concat(lines, '\n'))
  print(string.format('tensor parallel: rank 0 holds %d of the MLP\'s %d weights; the split MLP\'s output differs from the whole one\'s by %.1e (float32 rounding)',
    col.weight:numel() + row.weight:numel(), l1.weight:numel() + l2.weight:numel(), diff))
  local rows = {}
  for k, ops in ipairs(shown.timeline) do
    local es = {}
    for i, e in ipairs(ops) do es[i] = string.format("{op = '%s', micro = %d, t0 = %.9g, t1 = %.9g}", e.op, e.micro, e.t0, e.t1) end
    rows[k] = '{' .. table.concat(es, ', ') .. '}'
  end
  print('--timeline--')
  print(string.format("{timeline = {%s}, stats = {schedule = '%s'}}", table.concat(rows, ', '), shown.stats.schedule))
end
]]
if not lit_ok then print('your one_f_one_b failed: ' .. tostring(lit) .. ' (the ranks run GPipe and 1F1B only)') end
pipeline_run = nil
local out, why = run_ranks(2, script)
if out then
  print('measured with Open MPI on this machine: K = 2 stages (ranks), a batch of 64 in M micro-batches,')
  print('the median of 3 steps; "yours" is dist.Pipeline running your one_f_one_b:')
  local text, tl = out:match('^(.-)%-%-timeline%-%-\n(.*)$')
  io.write(text or out)
  local f = tl and load('return ' .. tl)
  pipeline_run = f and f() or nil
else
  print('not measured: ' .. why)
end
]==]

return {
  title = say('Distributed training: all-reduce, DDP, pipelines and ZeRO',
    '分布式训练：all-reduce、DDP、流水线与 ZeRO'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 5: programming framework mechanisms (distributed training)',
    '智能计算系统 第 5 章：编程框架机理（分布式训练）'),
  summary = say([[Why training is split (compute against memory), data parallelism with your own ring
all-reduce (checked on a simulated world, then run with Open MPI), DDP's buckets measured, model
parallelism and the pipeline bubble, and ZeRO's memory arithmetic.]],
    [[为什么要切分训练（算力与内存）；数据并行与你自己写的环形 all-reduce（先在模拟的多 rank 上检查，
再用 Open MPI 真正运行）；实测 DDP 的分桶；模型并行与流水线气泡；ZeRO 的内存算术。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Why split: compute or memory', '为什么要切分：算力还是内存'),
      text = say([[
The notes name four modules in a programming framework: building the computation graph,
executing it, the deep-learning compiler, and distributed training, which takes training (and
inference) from one device to many, to meet ever larger networks. How the work is partitioned
gives the methods:

- data parallelism: partition the input data; the answer when one node has too little compute
- model parallelism: partition the model's parameters; when one node has too little memory
- hybrid parallelism: partition both at once, data and model parallelism in the same training

The code estimates both limits for four transformer sizes from two rules of thumb: training with
mixed-precision Adam keeps 16 bytes per parameter (fp16 weights and gradients, and fp32 master
weights, momentum and variance; activations not counted), and costs about 6 FLOPs per parameter
per token (2 forward, 4 backward), here for 300 billion tokens (GPT-3's count). One device is
assumed to hold 80 GB and sustain 100 TFLOP/s. Every number printed is computed from these
formulas and assumptions, none is measured.]],
        [[
讲义把编程框架分成四大模块：计算图构建、计算图执行、深度学习编译，以及分布式训练——它把训练
（和推理）任务从一台设备扩展到多台设备，以应对更大规模的神经网络。按分布式计算中的分区方式，
可以划分出不同的方法：

- 数据并行：对输入数据进行分区，用于解决单节点算力不足的问题
- 模型并行：对模型参数进行分区，用于解决单节点内存不足的问题
- 混合并行：同时对输入数据和模型参数进行分区，在训练中同时使用数据并行和模型并行

代码用两条经验公式估算四种大小的 Transformer 会碰到哪条限制：用混合精度 Adam 训练时，每个参数
占 16 字节（fp16 的权重和梯度，fp32 的主权重、动量和方差；不算激活值）；每个参数每个 token 约
6 次浮点运算（前向 2 次，反向 4 次），这里按 3000 亿个 token 计（GPT-3 的数量）。假设一台设备有
80 GB 内存、持续 100 TFLOP/s。打印的每个数都是由这些公式和假设算出来的，没有一个是实测的。]]),
      code = [[
local device_gb, device_tflops = 80, 100           -- assumed: one accelerator
local tokens = 300e9                               -- GPT-3's training tokens
print('model          params   training memory   devices for memory   one device, time')
for _, m in ipairs({{'BERT-large', 0.34e9}, {'GPT-2 XL', 1.5e9}, {"ZeRO's 7.5B", 7.5e9},
                    {'GPT-3', 175e9}}) do
  local P = m[2]
  local gb = 16 * P / 1e9                          -- bytes per parameter: 2 + 2 + 12
  local days = 6 * P * tokens / (device_tflops * 1e12) / 86400
  print(string.format('%-12s %6.2fB   %10.0f GB   %12d         %8.0f days',
    m[1], P / 1e9, gb, math.ceil(gb / device_gb), days))
end
print('(computed from 16 bytes and 6 FLOPs per parameter; 80 GB and 100 TFLOP/s assumed)')
]],
      expect = [[
model          params   training memory   devices for memory   one device, time
BERT-large     0.34B            5 GB              1               71 days
GPT-2 XL       1.50B           24 GB              1              312 days
ZeRO's 7.5B    7.50B          120 GB              2             1562 days
GPT-3        175.00B         2800 GB             35            36458 days
(computed from 16 bytes and 6 FLOPs per parameter; 80 GB and 100 TFLOP/s assumed)
]],
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('Data parallelism and all-reduce', '数据并行与 all-reduce'),
      text = say([[
In data parallelism every rank (a process, one per device) holds the whole model and takes 1/n of
each batch. The loss is a mean over the batch, so with equal shares the full batch's gradient is
the mean of the shards' gradients: after backward the ranks average their gradients and every
rank takes the same optimizer step, so the replicas stay equal. The code checks that in this
process: 32 samples in one batch against 4 shards of 8.

Who adds the gradients? A parameter server: every worker sends its gradient to one node, which adds
them and sends the result back. Its link carries n - 1 gradients in and n - 1 out, so it grows with
the number of ranks. An all-reduce without a server leaves the sum on every rank; on a ring, each
rank sends 2(n - 1)/n of the gradient, under 2 gradients whatever n is. The notes (chapter 7, the
processor's communication) say it too: logically, a ring of links is enough for efficient
communication. The table is computed from these formulas for ResNet-50's 25.6 M float32 gradients.]],
        [[
数据并行中每个 rank（一个进程，对应一台设备）都持有完整的模型，各取每个 batch 的 1/n。损失是对
batch 取平均，所以各份大小相等时，整个 batch 的梯度就是各份梯度的平均：反向传播之后，各 rank
对梯度求平均，再做同样的一步优化，于是各副本始终相同。代码在本进程里验证这一点：一个 32 个样本
的 batch，对比分成 4 份、每份 8 个。

由谁来把梯度加起来？参数服务器：每个 worker 把梯度发给一个节点，它求和后再发回去。它的链路要
收 n - 1 份梯度、发 n - 1 份，随 rank 数增长。all-reduce 不需要服务器，和会留在每个 rank 上；
在环上，每个 rank 只发送梯度的 2(n - 1)/n，不管 n 多大都不到 2 份。讲义第 7 章讲处理器的通信时
也说：逻辑上，环状链路足以高效完成通信。下表按这些公式，对 ResNet-50 的 2560 万个 float32 梯度
算出。]]),
      code = [[
lm.manual_seed(1)
local net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
local x, y = lm.randn(32, 8), lm.randint(1, 4, {32})
local function grads(xb, yb)                   -- the gradient of the mean loss on (xb, yb)
  for _, p in ipairs(net:parameters()) do p.grad = nil end
  F.cross_entropy(net(xb), yb):backward()
  local g = {}
  for i, p in ipairs(net:parameters()) do g[i] = p.grad:clone() end
  return g
end
local full, mean = grads(x, y), {}
for r = 0, 3 do                                -- rank r's share: samples 8r+1 .. 8r+8
  local g = grads(x:narrow(1, 8 * r + 1, 8), y:narrow(1, 8 * r + 1, 8))
  for i = 1, #g do mean[i] = (mean[i] or 0) + g[i] / 4 end
end
local d = 0
for i = 1, #full do d = math.max(d, (full[i] - mean[i]):abs():max():item()) end
print(string.format('full batch against the mean of 4 shards: largest difference %.0e (float32 rounding, computed here)', d))
local k = 25.6e6 * 4                           -- bytes of ResNet-50's gradients
print('ranks   parameter server: its link, each way   ring: each rank sends')
for _, n in ipairs({2, 4, 8, 64}) do
  print(string.format('%5d   %14.0f MB                    %10.0f MB', n, (n - 1) * k / 1e6, 2 * (n - 1) / n * k / 1e6))
end
print('(computed from (n - 1) k and 2 (n - 1)/n k)')
]],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('The ring all-reduce, by you', '环形 all-reduce：你来写'),
      text = say([[
n ranks form a ring: rank r sends to r + 1 and receives from r - 1 (mod n), both at once with
comm.sendrecv(t, dst, into, src), so no rank waits for another's send. t (k elements) is split into
n chunks whose sizes differ by at most one: the first k % n chunks have k // n + 1 elements, the
others k // n. Chunks are numbered 0 .. n - 1 and taken mod n.

  reduce-scatter, s = 0 .. n - 2:
    send chunk (r - s); receive chunk (r - s - 1) and add it to yours
  then rank r holds the full sum of chunk (r + 1)
  all-gather, s = 0 .. n - 2:
    send chunk (r + 1 - s); receive chunk (r - s) and copy it over yours

Each rank sends 2(n - 1) chunks, 2(n - 1)/n * k elements: the ring is bandwidth-optimal. To try it
here, `simulate(fn, inputs)` runs fn on a world of #inputs ranks simulated in this process: one
coroutine per rank, messages waiting in queues, a deadlock or a size that the two sides disagree
on reported with the ranks. The `ring_all_reduce` given passes the whole tensor around the ring:
its sums are right (rank r holds (r + 1) * (1..10) of 4 ranks, the sum is 10 * (1..10)), but
each rank sends n - 1 whole tensors. The picture is the allreduce scene: the ring's steps on 4
ranks beside a binomial tree (lumen.dist's 'tree'), with the bytes each sends, counted from the
algorithms, not measured.]],
        [[
n 个 rank 连成一个环：rank r 向 r + 1 发送、从 r - 1 接收（模 n），用 comm.sendrecv(t, dst,
into, src) 同时完成，所以没有哪个 rank 要等别人先发。t（k 个元素）被分成 n 块，大小最多差一：
前 k % n 块有 k // n + 1 个元素，其余的 k // n 个。块的编号是 0 .. n - 1，取模 n。

  reduce-scatter，s = 0 .. n - 2：
    发送第 (r - s) 块；接收第 (r - s - 1) 块，加到自己的那块上
  之后 rank r 持有第 (r + 1) 块的完整和
  all-gather，s = 0 .. n - 2：
    发送第 (r + 1 - s) 块；接收第 (r - s) 块，覆盖自己的那块

每个 rank 发送 2(n - 1) 块，共 2(n - 1)/n * k 个元素：环在带宽上是最优的。为了在这里试，
`simulate(fn, inputs)` 在本进程里模拟一个有 #inputs 个 rank 的世界来运行 fn：每个 rank 一个
协程，消息在队列里等待；死锁，或者收发两端大小不一致，都会报出相关的 rank。给出的
`ring_all_reduce` 把整个张量沿环传一圈：和是对的（4 个 rank 中 rank r 持有
(r + 1) * (1..10)，和为 10 * (1..10)），但每个 rank 要发送 n - 1 个完整的张量。画面是
allreduce 场景：4 个 rank 上环的每一步，旁边是二项树（lumen.dist 的 'tree'），以及各自发送的
字节数——按算法数出来的，不是实测的。]]),
      code = SIM_SRC .. [[

function ring_all_reduce(t, comm)   -- to correct: right sums, but the whole t goes round
  local n, r = comm.size, comm.rank
  local passing = t:clone()
  for s = 1, n - 1 do
    local got = lm.empty(t:numel(), {dtype = t:dtype()})
    comm.sendrecv(passing, (r + 1) % n, got, (r - 1) % n)
    t:add_(got)
    passing = got
  end
  return t
end
local inputs = {}
for r = 0, 3 do inputs[r + 1] = lm.arange(1, 11, {dtype = 'float64'}) * (r + 1) end
local _, stats = simulate(ring_all_reduce, inputs)
for r = 0, 3 do
  local v = {}
  for i, x in ipairs(inputs[r + 1]:tolist()) do v[i] = string.format('%g', x) end
  print(string.format('rank %d: %s   exchanges %d, elements sent %d', r, table.concat(v, ' '),
    stats[r + 1].exchanges, stats[r + 1].sent))
end
print('(simulated in this process; the ring: 2(n - 1) = 6 exchanges and 2(n - 1)/n * k = 15 elements a rank)')
]],
      scene = { 'allreduce', ranks = 4 },
      exercise = {
        prompt = say([[
Correct `ring_all_reduce(t, comm)` into the ring above: t is a 1-D float64 tensor, which every rank
must end holding the sum over the ranks (in place, as dist.all_reduce; return t). Use only
comm.rank, comm.size and comm.sendrecv. The check runs it with its own simulate on 2 to 5 ranks
with odd sizes (and one tensor shorter than the ring) on random integers, compares every rank's t
with the sum all_reduce gives, then counts the exchanges (2(n - 1) a rank) and the elements sent.]],
          [[
把 `ring_all_reduce(t, comm)` 改成上面的环：t 是一维 float64 张量，结束时每个 rank 的 t 都要是
所有 rank 之和（原地修改，和 dist.all_reduce 一样；返回 t）。只用 comm.rank、comm.size 和
comm.sendrecv。检查会用它自己的 simulate，在 2 到 5 个 rank、奇数长度（还有一个比环还短的张量）
的随机整数上运行它，把每个 rank 的 t 与 all_reduce 给出的和比较，再数交换次数（每个 rank
2(n - 1) 次）和发送的元素数。]]),
        hints = {
          say('A chunk as a view of t: c = c % n; first = c * (k // n) + math.min(c, k % n); t:narrow(1, first + 1, k // n + (c < k % n and 1 or 0)). Adding into the view changes t.',
            '把一块取成 t 的视图：c = c % n；first = c * (k // n) + math.min(c, k % n)；t:narrow(1, first + 1, k // n + (c < k % n and 1 or 0))。往视图里加就改了 t。'),
          say('Reduce-scatter: receive into a fresh buffer, lm.empty(len, {dtype = t:dtype()}), then chunk:add_(buffer). All-gather: receive straight into the chunk, which is overwritten.',
            'reduce-scatter：先收到一个新缓冲区 lm.empty(len, {dtype = t:dtype()})，再 chunk:add_(buffer)。all-gather：直接收到那一块里，覆盖它。'),
          say("Lua's % of a negative number is not negative: (0 - 1) % 4 == 3, so chunk (r - s - 1) % n is always a valid chunk.",
            'Lua 中负数取模的结果不是负数：(0 - 1) % 4 == 3，所以 (r - s - 1) % n 总是合法的块号。'),
        },
        check = check_ring,
        solution = RING_SOLUTION,
        wrong = {
          [[
function ring_all_reduce(t, comm)   -- no all-gather phase
  local n, r, k = comm.size, comm.rank, t:numel()
  local function chunk(c)
    c = c % n
    local base, extra = k // n, k % n
    return t:narrow(1, c * base + math.min(c, extra) + 1, base + (c < extra and 1 or 0))
  end
  for s = 0, n - 2 do
    local into = chunk(r - s - 1)
    local got = lm.empty(into:numel(), {dtype = t:dtype()})
    comm.sendrecv(chunk(r - s), (r + 1) % n, got, (r - 1) % n)
    into:add_(got)
  end
  return t
end
]],
          [[
function ring_all_reduce(t, comm)   -- adds in the all-gather phase
  local n, r, k = comm.size, comm.rank, t:numel()
  local function chunk(c)
    c = c % n
    local base, extra = k // n, k % n
    return t:narrow(1, c * base + math.min(c, extra) + 1, base + (c < extra and 1 or 0))
  end
  for phase = 1, 2 do
    for s = 0, n - 2 do
      local into = chunk(phase == 1 and r - s - 1 or r - s)
      local got = lm.empty(into:numel(), {dtype = t:dtype()})
      comm.sendrecv(chunk(phase == 1 and r - s or r + 1 - s), (r + 1) % n, got, (r - 1) % n)
      into:add_(got)
    end
  end
  return t
end
]],
          [[
function ring_all_reduce(t, comm)   -- n steps in each phase
  local n, r, k = comm.size, comm.rank, t:numel()
  local function chunk(c)
    c = c % n
    local base, extra = k // n, k % n
    return t:narrow(1, c * base + math.min(c, extra) + 1, base + (c < extra and 1 or 0))
  end
  for s = 0, n - 1 do
    local into = chunk(r - s - 1)
    local got = lm.empty(into:numel(), {dtype = t:dtype()})
    comm.sendrecv(chunk(r - s), (r + 1) % n, got, (r - 1) % n)
    into:add_(got)
  end
  for s = 0, n - 1 do
    comm.sendrecv(chunk(r + 1 - s), (r + 1) % n, chunk(r - s), (r - 1) % n)
  end
  return t
end
]],
          [[
function ring_all_reduce(t, comm)   -- chunks of k // n: the remainder is in no chunk
  local n, r, k = comm.size, comm.rank, t:numel()
  local size = k // n
  local function chunk(c) return t:narrow(1, (c % n) * size + 1, size) end
  for s = 0, n - 2 do
    local into = chunk(r - s - 1)
    local got = lm.empty(size, {dtype = t:dtype()})
    comm.sendrecv(chunk(r - s), (r + 1) % n, got, (r - 1) % n)
    into:add_(got)
  end
  for s = 0, n - 2 do
    comm.sendrecv(chunk(r + 1 - s), (r + 1) % n, chunk(r - s), (r - 1) % n)
  end
  return t
end
]],
          [[
function ring_all_reduce(t, comm)   -- sends the chunk it adds into (index off by one)
  local n, r, k = comm.size, comm.rank, t:numel()
  local function chunk(c)
    c = c % n
    local base, extra = k // n, k % n
    return t:narrow(1, c * base + math.min(c, extra) + 1, base + (c < extra and 1 or 0))
  end
  for s = 0, n - 2 do
    local into = chunk(r - s - 1)
    local got = lm.empty(into:numel(), {dtype = t:dtype()})
    comm.sendrecv(chunk(r - s - 1), (r + 1) % n, got, (r - 1) % n)
    into:add_(got)
  end
  for s = 0, n - 2 do
    comm.sendrecv(chunk(r + 1 - s), (r + 1) % n, chunk(r - s), (r - 1) % n)
  end
  return t
end
]],
          [[
function ring_all_reduce(t, comm)   -- the sum in a new tensor; t unchanged
  local n, r = comm.size, comm.rank
  local sum, passing = t:clone(), t:clone()
  for s = 1, n - 1 do
    local got = lm.empty(t:numel(), {dtype = t:dtype()})
    comm.sendrecv(passing, (r + 1) % n, got, (r - 1) % n)
    sum = sum + got
    passing = got
  end
  return sum
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('The ring on Open MPI', '在 Open MPI 上运行环'),
      text = say([[
Now the ring runs for real. `run_ranks(np, source)` writes a Lua script to a temporary file and
starts np lumen processes on it with Open MPI's mpirun; in the script `require 'lumen.dist'` joins
the world and comm.sendrecv is dist.sendrecv (MPI_Sendrecv). `ring_source` is the solution's ring:
put yours there (:edit) to run it. On 2 and 3 ranks the script checks it against MPI_Allreduce and
times the same all-reduce of 8 MB five ways: ring_source, lumen.dist's own ring and binomial tree
(Lua on send/receive), a parameter server on rank 0, and Open MPI's MPI_Allreduce.

Read the times for what they are: the ranks are processes on this one machine (2 shared cores:
3 ranks take turns), talking through shared memory, not a network; they show the algorithms'
costs here, not a cluster's. With more ranks than cores, an algorithm of many lock-step exchanges
(the ring's 2(n - 1)) waits each time for a rank that is not running, so expect it to lose here;
its advantage, the fewest bytes on every link, shows on a network with large tensors. Without
mpirun the step says so and skips.]],
        [[
现在让环真正运行起来。`run_ranks(np, source)` 把一段 Lua 脚本写进临时文件，用 Open MPI 的
mpirun 启动 np 个 lumen 进程来运行它；脚本里 `require 'lumen.dist'` 加入这个世界，
comm.sendrecv 就是 dist.sendrecv（MPI_Sendrecv）。`ring_source` 是参考答案的环：把你的换进去
（:edit）就能运行你的。在 2 个和 3 个 rank 上，脚本先把它与 MPI_Allreduce 对照，再把同一个
8 MB 的 all-reduce 用五种方式计时：ring_source、lumen.dist 自己的环和二项树（在收发之上用 Lua
写的）、rank 0 上的参数服务器，以及 Open MPI 的 MPI_Allreduce。

读这些时间时要清楚它们是什么：这些 rank 是本机上的进程（2 个共享的核：3 个 rank 要轮流跑），
经共享内存通信，不是网络；它们反映的是这些算法在这里的开销，而不是集群上的。rank 比核多时，
需要很多次同步交换的算法（环要 2(n - 1) 次）每次都要等一个没在运行的 rank，所以在这里它多半会
输；它的长处——每条链路上的字节最少——要在网络上、张量很大时才显出来。没有 mpirun 时，这一步会
说明并跳过。]]),
      code = RUN_RANKS .. MEASURE_RING,
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say("DDP's buckets: communication during backward", 'DDP 的分桶：在反向传播中通信'),
      text = say([[
nn.DistributedDataParallel (DDP) does the averaging for you, and hides it: backward produces the
last layers' gradients first, so DDP puts the parameters into buckets in reverse order (a first
bucket of up to 1 MB, then up to 25 MB each, as PyTorch), and as soon as every gradient of a bucket
is ready it starts that bucket's all-reduce (MPI_Iallreduce, without waiting) while backward goes
on with the earlier layers. Bigger buckets: fewer, larger messages (less latency per byte). Smaller
buckets: communication starts earlier and overlaps more of backward.

The code trains the same MLP on 1,024 Fashion-MNIST images on 2 ranks (512 each, 32 a step) with
the default buckets (the 0.94 MB of gradients fit the first bucket: one all-reduce at the very end
of backward) and with tiny 0.05 MB buckets (one per parameter tensor: the first is launched while
backward is still running), and prints ddp.stats (buckets and all-reduce calls) and ddp.timeline
(when each bucket was launched, and when the end of backward collected its sum). The loss is the
same: buckets change when the sums are made, not what they are. Expect little or no difference in
time here: on one machine the all-reduce of 1 MB costs little; on a network, where it costs more
than the backward it could hide behind, overlap is what saves it.]],
        [[
nn.DistributedDataParallel（DDP）替你做梯度平均，还把它藏起来：反向传播先产生最后几层的梯度，
所以 DDP 按相反的顺序把参数装进桶里（第一个桶最多 1 MB，之后每个最多 25 MB，与 PyTorch 相同）；
一个桶的梯度一旦全部就绪，就立刻启动这个桶的 all-reduce（MPI_Iallreduce，不等待），而反向传播
继续算前面的层。桶大：消息少而大（每字节的延迟更少）；桶小：通信开始得早，和反向传播重叠得多。

代码在 2 个 rank 上用 1024 张 Fashion-MNIST 图片训练同一个 MLP（每个 rank 512 张，每步 32 张），
分别用默认的桶（0.94 MB 的梯度装得进第一个桶：反向传播最后才做一次 all-reduce）和很小的
0.05 MB 的桶（每个参数张量一个：第一个桶在反向传播还在进行时就启动了），打印 ddp.stats（桶数和
all-reduce 次数）和 ddp.timeline（每个桶何时启动，反向传播结束时何时取回它的和）。损失是一样的：
分桶改变的是何时求和，而不是和是多少。这里的时间差别很小，甚至没有：在一台机器上 1 MB 的
all-reduce 花不了多少时间；在网络上通信的代价更大，重叠正是用来把它藏在反向传播后面的。]]),
      code = MEASURE_DDP,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Model parallelism and the pipeline bubble', '模型并行与流水线气泡'),
      text = say([[
When the model does not fit one device, split the model: its layers in K consecutive stages, one
per device (pipeline model parallelism; splitting each layer's matrices instead is tensor
parallelism). The devices only pass activations forward and gradients back across the cuts. Run
naively, one batch at a time, only one stage works at any moment. GPipe (Huang et al. 2019) splits
the batch into M micro-batches that follow each other through the stages, forward then backward.
Stage k starts k - 1 slots late and ends K - k slots early, so the schedule takes M + K - 1 slots
where each stage works M of them; the idle rest is the pipeline bubble.

The code builds that schedule (each slot a micro-batch's forward F or backward B on a stage, equal
times assumed) and counts its idle slots, and plots the fraction against M for K = 2, 4 and 8.
The picture is the pipeline scene for K = 4, M = 6: the GPipe timeline with the bubble hatched,
its panel counting the idle slots (0.3333 here; Tab shows 1F1B, the same bubble with fewer
activations held). Here the schedule is computed; the next step runs a pipeline on Open MPI and
measures it. Once you have written `bubble`, :run prints your prediction next to the count.]],
        [[
当一台设备放不下模型时，就切分模型：把各层分成 K 个连续的阶段，每台设备一段（流水线模型并行；
改为切分每层的矩阵则是张量并行）。设备之间只在切口处向前传激活值、向后传梯度。最朴素的做法是
一次一个 batch，那么任何时刻只有一个阶段在工作。GPipe（Huang 等，2019）把 batch 分成 M 个微批，
依次流过各个阶段，先前向再反向。第 k 级晚开始 k - 1 个时隙，早结束 K - k 个时隙，所以整个调度
占 M + K - 1 个时隙，而每一级只工作其中的 M 个；其余的空闲就是流水线气泡。

代码构造出这个调度（每个时隙是某个微批在某一级上的前向 F 或反向 B，假设耗时相同），数出其中的
空闲时隙，并画出空闲比例随 M 的变化（K = 2、4、8）。画面是 K = 4、M = 6 的流水线场景：GPipe 的
时间线，气泡画成斜线，面板数出空闲时隙的比例（这里是 0.3333；按 Tab 看 1F1B：气泡相同，但保留的
激活更少）。这里的调度是算出来的；下一步会在 Open MPI 上真正运行流水线并实测它。写好 `bubble`
之后，:run 会把你的预测和数出来的值并排打印。]]),
      code = [[
function gpipe_schedule(K, M)   -- rows[k][t]: what stage k does in slot t; and the idle fraction
  local T, rows, idle = 2 * (M + K - 1), {}, 0
  for k = 1, K do
    rows[k] = {}
    for t = 1, T do
      local f = t - (k - 1)                      -- forward of micro-batch f reaches stage k
      local b = t - (M + K - 1) - (K - k)        -- backward runs the stages in reverse
      if f >= 1 and f <= M then rows[k][t] = 'F' .. f
      elseif b >= 1 and b <= M then rows[k][t] = 'B' .. (M + 1 - b)
      else rows[k][t], idle = '.', idle + 1 end
    end
  end
  return rows, idle / (K * T)
end
local rows, frac = gpipe_schedule(4, 6)
for k, row in ipairs(rows) do
  local cells = {}
  for t, c in ipairs(row) do cells[t] = string.format('%-3s', c) end
  print(string.format('stage %d  %s', k, table.concat(cells)))
end
print(string.format('K = 4 stages, M = 6 micro-batches: idle %.4f of the slots (counted on the simulated schedule)', frac))
viz.clear()
for _, K in ipairs({2, 4, 8}) do
  for M = 1, 32 do
    local _, f = gpipe_schedule(K, M)
    viz.plot('idle fraction (simulated schedule)/K = ' .. K, M, f, {x = 'micro-batches M'})
  end
end
if type(bubble) == 'function' then
  local function show(v) return type(v) == 'number' and string.format('%.4f', v) or tostring(v) end
  print(string.format('your bubble(4, 6) = %s, counted %.4f; your bubble(8, 32) = %s, counted %.4f',
    show(bubble(4, 6)), frac, show(bubble(8, 32)), select(2, gpipe_schedule(8, 32))))
end
]],
      scene = { 'pipeline', stages = 4, micro = 6 },
      exercise = {
        prompt = say([[
Define `bubble(K, M)`: the fraction of the time a stage is idle in GPipe's schedule with K stages
and M micro-batches, as a number from 0 to 1 (predict it from the picture of the schedule, not by
calling gpipe_schedule). The check calls it on random K and M, one stage and one micro-batch
included.]],
          [[
定义 `bubble(K, M)`：在有 K 级、M 个微批的 GPipe 调度中，一个阶段空闲时间所占的比例，是 0 到 1
之间的数（从调度的图里推出来，不要调用 gpipe_schedule）。检查会在随机的 K 和 M 上调用它，
包括只有一级和只有一个微批的情况。]]),
        hints = {
          say('Look at stage 1 in the printed schedule: how many slots does the whole schedule take, and in how many is stage 1 idle?',
            '看打印出来的调度里的第 1 级：整个调度占多少个时隙，第 1 级有多少个时隙空闲？'),
          say('Forward: the last micro-batch enters stage 1 at slot M and leaves stage K at slot M + K - 1; each stage works M of those slots.',
            '前向：最后一个微批在第 M 个时隙进入第 1 级，在第 M + K - 1 个时隙离开第 K 级；每一级在这些时隙中工作 M 个。'),
        },
        check = check_bubble,
        solution = [[
function bubble(K, M)
  return (K - 1) / (M + K - 1)
end
]],
        wrong = {
          [[
function bubble(K, M)
  return (K - 1) / M
end
]],
          [[
function bubble(K, M)
  return (K - 1) / (M + K)
end
]],
          [[
function bubble(K, M)
  return K / (M + K - 1)
end
]],
          [[
function bubble(K, M)
  return (K - 1) // (M + K - 1)
end
]],
          [[
function bubble(K, M)
  return M / (M + K - 1)
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('The pipeline on Open MPI: 1F1B, by you', '在 Open MPI 上运行流水线：1F1B，你来写'),
      text = say([[
GPipe keeps every micro-batch's activations until its backward: stage 1 holds all M of them at
the end of the forwards, and memory is what model parallelism was for. 1F1B (PipeDream-flush,
Narayanan et al. 2021) orders each stage's ops differently: stage k of K first runs K - k forwards
to fill the pipeline (the warm-up), then alternates one forward and one backward (the steady
state), then runs the backwards that remain (the cool-down). Its schedule takes the same
2(M + K - 1) slots, so the bubble is GPipe's, but stage k never holds more than K - k + 1
micro-batches: a backward frees one as soon as the next forward has made one.

lumen.dist runs pipelines for real: dist.Pipeline(stages, {micro_batches = M, schedule = ...})
puts stage k on rank k - 1, sends activations forward and gradients back between the ranks
(dist.isend and dist.recv, tagged by micro-batch), and its gradients equal the unsplit model's
(tests/dist/parallel_check.lua checks that). A schedule may be 'gpipe', '1f1b' or a function
(K, k, M) returning stage k's ops in order, which every rank checks before any message moves (an
order that would wait for ever is an error, not a hang). The code runs 2 stages on 2 ranks for
M = 1, 2, 4 and 8 with GPipe, the built-in 1F1B and yours (`one_f_one_b`, given as GPipe's order:
correct it), and prints each step's time, the bubble measured from the ranks' own clocks (idle
time, waits for messages included, over stages x span), the bubble counted in slots from the order
the stages really ran their ops, (K - 1)/(M + K - 1), and the activations each stage kept at most. It
also splits an MLP Megatron's way (ColumnParallelLinear then RowParallelLinear: W1 by rows, W2 by
columns, one all-reduce) and compares it with the whole MLP. The picture is the run of M = 4 as it
happened (yours when it runs, else 1F1B): each stage's forwards and backwards at their measured
times, the idle time hatched; Tab shows the same ops in slots. Expect the measured bubble above
the counted one: messages take time, and the last stage also computes the loss.]],
        [[
GPipe 要把每个微批的激活一直保留到它的反向：前向全部做完时，第 1 级保留着全部 M 个，而省内存
正是模型并行的初衷。1F1B（PipeDream-flush，Narayanan 等，2021）换了每一级的操作顺序：K 级中的
第 k 级先做 K - k 个前向把流水线填满（热身），然后前向和反向一个接一个交替（稳定阶段），最后
做完剩下的反向（收尾）。它的调度同样占 2(M + K - 1) 个时隙，气泡与 GPipe 相同，但第 k 级
最多只保留 K - k + 1 个微批：下一个前向刚产生一个，反向就释放一个。

lumen.dist 能真正运行流水线：dist.Pipeline(stages, {micro_batches = M, schedule = ...}) 把第 k
级放在第 k - 1 个 rank 上，在 rank 之间向前传激活、向后传梯度（dist.isend 与 dist.recv，按微批
打标签），得到的梯度与不切分的模型相同（tests/dist/parallel_check.lua 检查了这一点）。schedule
可以是 'gpipe'、'1f1b'，或者一个函数 (K, k, M)，按顺序返回第 k 级的操作；每个 rank 在发出任何
消息之前都会检查它（会永远等下去的顺序是一个错误，而不是卡死）。代码在 2 个 rank 上运行 2 级，
M = 1、2、4、8，分别用 GPipe、内置的 1F1B 和你的 `one_f_one_b`（给出的是 GPipe 的顺序：改正
它），打印每一步的时间、由各 rank 自己的时钟测出的气泡（空闲时间——包括等消息——除以
阶段数 × 总时长）、按各级实际运行顺序排入时隙数出来的气泡、公式给出的气泡，以及每一级最多
保留的激活数。代码还按 Megatron 的方式切分一个 MLP（先 ColumnParallelLinear 再
RowParallelLinear：W1 按行、W2 按列切，一次 all-reduce），并与完整的 MLP 对照。画面是 M = 4
的那次实际运行（你的能运行时就是你的，否则是 1F1B）：每一级的前向和反向画在实测的时间上，
空闲时间画成斜线；按 Tab 看同样的操作排入时隙。实测的气泡会比数出来的大：消息要花时间，
最后一级还要算损失。]]),
      code = RUN_RANKS .. MEASURE_PIPELINE,
      scene = function(env)
        if type(env.pipeline_run) == 'table' then return 'pipeline', env.pipeline_run end
        return 'pipeline', { stages = 2, micro = 4, schedule = '1f1b' }
      end,
      exercise = {
        prompt = say([[
Correct `one_f_one_b(K, k, M)`: the ops of stage k (1..K) under 1F1B with M micro-batches, in the
order the stage runs them — {'F', m} for micro-batch m's forward, {'B', m} for its backward. The
check builds every stage's order for random K and M and runs them together slot by slot: each
stage must run every F and B once (B after its F), no stage may wait for ever, the schedule must
take 2(M + K - 1) slots and stage k must keep at most K - k + 1 micro-batches' activations.]],
          [[
改正 `one_f_one_b(K, k, M)`：在有 M 个微批的 1F1B 调度中，第 k 级（1..K）按运行顺序排列的
操作——{'F', m} 是微批 m 的前向，{'B', m} 是它的反向。检查会在随机的 K 和 M 上构造每一级的
顺序，再一个时隙一个时隙地让它们一起运行：每一级要把每个 F 和 B 各运行一次（B 在它的 F 之后），
不能有一级永远等下去，调度要占 2(M + K - 1) 个时隙，第 k 级最多保留 K - k + 1 个微批的激活。]]),
        hints = {
          say('Three parts: warm = math.min(K - k, M) forwards; then for i = 1, M - warm: the forward of micro-batch warm + i, then the backward of micro-batch i; then the backwards that are left.',
            '分三段：先做 warm = math.min(K - k, M) 个前向；然后 i = 1 到 M - warm：做微批 warm + i 的前向，再做微批 i 的反向；最后做剩下的反向。'),
          say('The last stage (k = K) has no warm-up: F1 B1 F2 B2 ...; the backwards go in the order of the micro-batches, as the next stage sends their gradients.',
            '最后一级（k = K）不需要热身：F1 B1 F2 B2 ……；反向按微批的顺序进行，因为下一级也是按这个顺序把梯度传回来的。'),
        },
        check = check_1f1b,
        solution = [[
function one_f_one_b(K, k, M)
  local ops, warm = {}, math.min(K - k, M)
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'F', warm + i}
    ops[#ops + 1] = {'B', i}
  end
  for m = M - warm + 1, M do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
        wrong = {
          [[
function one_f_one_b(K, k, M)   -- GPipe's order
  local ops = {}
  for m = 1, M do ops[#ops + 1] = {'F', m} end
  for m = M, 1, -1 do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- one warm-up forward too many
  local ops, warm = {}, math.min(K - k + 1, M)
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'F', warm + i}
    ops[#ops + 1] = {'B', i}
  end
  for m = M - warm + 1, M do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- no warm-up
  local ops = {}
  for m = 1, M do
    ops[#ops + 1] = {'F', m}
    ops[#ops + 1] = {'B', m}
  end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- the cool-down forgotten
  local ops, warm = {}, math.min(K - k, M)
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'F', warm + i}
    ops[#ops + 1] = {'B', i}
  end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- the cool-down in reverse
  local ops, warm = {}, math.min(K - k, M)
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'F', warm + i}
    ops[#ops + 1] = {'B', i}
  end
  for m = M, M - warm + 1, -1 do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- backward before forward in the steady state
  local ops, warm = {}, math.min(K - k, M)
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'B', i}
    ops[#ops + 1] = {'F', warm + i}
  end
  for m = M - warm + 1, M do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
          [[
function one_f_one_b(K, k, M)   -- stages counted from 0
  local ops, warm = {}, math.min(K - k - 1, M)
  if warm < 0 then warm = 0 end
  for m = 1, warm do ops[#ops + 1] = {'F', m} end
  for i = 1, M - warm do
    ops[#ops + 1] = {'F', warm + i}
    ops[#ops + 1] = {'B', i}
  end
  for m = M - warm + 1, M do ops[#ops + 1] = {'B', m} end
  return ops
end
]],
        },
      },
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say("ZeRO: sharding the training state", 'ZeRO：切分训练状态'),
      text = say([[
Data parallelism copies everything to every rank. With mixed-precision Adam a model of P
parameters keeps 2P bytes of fp16 weights, 2P of fp16 gradients and 12P of fp32 optimizer states
(master weights, momentum, variance): 16P bytes on each of the N ranks. ZeRO (Rajbhandari et al.
2020, DeepSpeed) removes the copies, each rank keeping 1/N of a part and getting the rest when it
needs it:

  stage 0   no sharding                          2P + 2P + 12P
  stage 1   the optimizer states                 2P + 2P + 12P/N
  stage 2   + the gradients                      2P + 2P/N + 12P/N
  stage 3   + the parameters                     (2P + 2P + 12P)/N

Stages 1 and 2 communicate as much as DDP (a reduce-scatter of the gradients, an all-gather of
the weights: an all-reduce in two halves); stage 3 gathers the weights again in forward and
backward, 1.5 times as much. The paper's example, 7.5B parameters on 64 GPUs: 120, 31.4, 16.6 and
1.9 GB per GPU. The code prints that table and plots GB per rank against N with your `zero_bytes`
(the given one shards nothing); activations and buffers are not counted. Combined with pipeline and
tensor model parallelism, this is hybrid parallelism as large models are trained. Then the code
runs stage 1 for real on 2 ranks (dist.ZeroRedundancyOptimizer over float32 Adam, which keeps two
moments, 8 bytes a parameter): each rank's share of the state is measured, and the parameters are
compared with one Adam's. It splits whole tensors, as PyTorch's does, so a model with one big
tensor shares unevenly.]],
        [[
数据并行把所有东西复制到每个 rank。用混合精度 Adam 时，P 个参数的模型要存 2P 字节 fp16 权重、
2P 字节 fp16 梯度和 12P 字节 fp32 优化器状态（主权重、动量、方差）：N 个 rank 上每个都是 16P
字节。ZeRO（Rajbhandari 等，2020，DeepSpeed）去掉这些副本：每个 rank 只保存某部分的 1/N，
需要时再取回其余的：

  第 0 级   不切分                    2P + 2P + 12P
  第 1 级   切分优化器状态            2P + 2P + 12P/N
  第 2 级   再切分梯度                2P + 2P/N + 12P/N
  第 3 级   再切分参数                (2P + 2P + 12P)/N

第 1、2 级的通信量与 DDP 相同（梯度做一次 reduce-scatter，权重做一次 all-gather：把 all-reduce
拆成两半）；第 3 级在前向和反向中还要再收集权重，通信量是 1.5 倍。论文的例子：7.5B 参数、64 块
GPU，每块 GPU 分别为 120、31.4、16.6 和 1.9 GB。代码用你的 `zero_bytes` 打印这张表，并画出每个
rank 的 GB 随 N 的变化（给出的版本什么都不切分）；不计激活值和缓冲区。再结合流水线和张量模型
并行，就是训练大模型时所用的混合并行。随后代码在 2 个 rank 上真正运行第 1 级
（dist.ZeroRedundancyOptimizer，用 float32 的 Adam：两个动量，每个参数 8 字节）：实测每个 rank
分到的状态，并把参数与单个 Adam 的结果对照。它按整个张量切分（与 PyTorch 相同），所以有一个
大张量的模型分得不均。]]),
      code = [==[
function zero_bytes(P, N, stage)   -- to correct: bytes per rank, as if stage 0 at every stage
  return 2 * P + 2 * P + 12 * P
end
print('7.5B parameters on 64 ranks, GB per rank (your zero_bytes, computed):')
for stage = 0, 3 do
  print(string.format('  stage %d  %8.1f GB', stage, zero_bytes(7.5e9, 64, stage) / 1e9))
end
viz.clear()
for stage = 0, 3 do
  for _, N in ipairs({1, 2, 4, 8, 16, 32, 64, 128}) do
    viz.plot('GB per rank, 7.5B (your zero_bytes)/stage ' .. stage, N, zero_bytes(7.5e9, N, stage) / 1e9,
      {x = 'ranks N'})
  end
end
]==] .. RUN_RANKS .. [==[
-- ZeRO stage 1 for real on 2 ranks: dist.ZeroRedundancyOptimizer splits Adam's state (float32 here)
local zscript = [[
local dist = require 'lumen.dist'
local rank, n = dist.init()
local function mlp()
  lm.manual_seed(1)
  return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
end
local net, ref = mlp(), mlp()
local zero = dist.ZeroRedundancyOptimizer(net:parameters(), optim.Adam, {lr = 1e-3})
local adam = optim.Adam(ref:parameters(), {lr = 1e-3})          -- one Adam over everything, to compare
for step = 1, 3 do                                               -- the same batch on both ranks, as after
  lm.manual_seed(10 + step)                                      -- DDP has averaged the gradients
  local x, y = lm.randn(32, 784), lm.randint(1, 11, {32})
  zero:zero_grad(); adam:zero_grad()
  F.cross_entropy(net(x), y):backward(); F.cross_entropy(ref(x), y):backward()
  zero:step(); adam:step()
end
local same, a, b = true, net:parameters(), ref:parameters()
for i = 1, #a do same = same and lm.equal(a[i], b[i]) end
local per = dist.all_gather(lm.tensor({zero:state_bytes()}, {dtype = 'float64'})):view(-1):tolist()
local whole = 0
for _, st in pairs(adam.state) do for _, v in pairs(st) do if lm.is_tensor(v) then whole = whole + v:nbytes() end end end
if rank == 0 then
  print(string.format('ZeRO-1 measured on 2 ranks (float32 Adam, 235,146 parameters): one Adam keeps %.3f MB of state;', whole / 1e6))
  print(string.format('  rank 0 keeps %.3f MB, rank 1 %.3f MB (whole tensors, each to the rank with fewer elements so far:', per[1] / 1e6, per[2] / 1e6))
  print('  the first layer\'s weight, 200,704 of the parameters, is one tensor); after 3 steps the parameters')
  print('  equal one Adam\'s bit for bit: ' .. tostring(same))
end
]]
local out, why = run_ranks(2, zscript)
io.write(out or ('ZeRO-1 not measured: ' .. why .. '\n'))
]==],
      scene = 'curves',
      exercise = {
        prompt = say([[
Correct `zero_bytes(P, N, stage)`: the bytes each of N ranks keeps for a model of P parameters
trained with mixed-precision Adam under ZeRO stage 0, 1, 2 or 3 (the table above; a fraction of a
byte is fine). The check calls it on random P and N at every stage.]],
          [[
改正 `zero_bytes(P, N, stage)`：用混合精度 Adam 训练 P 个参数的模型，在 ZeRO 第 0、1、2、3 级下，
N 个 rank 中每个 rank 保存的字节数（见上表；可以有小数）。检查会在随机的 P 和 N 上对每一级调用它。]]),
        hints = {
          say('Start from the three parts: params = 2 * P, grads = 2 * P, states = 12 * P; divide some of them by N.',
            '从三部分出发：params = 2 * P，grads = 2 * P，states = 12 * P；把其中一些除以 N。'),
          say('Each stage adds one: stage >= 1 divides the states, stage >= 2 also the gradients, stage >= 3 also the parameters.',
            '每一级多切一种：stage >= 1 时状态除以 N，stage >= 2 时梯度也除，stage >= 3 时参数也除。'),
        },
        check = check_zero,
        solution = [[
function zero_bytes(P, N, stage)
  local params, grads, states = 2 * P, 2 * P, 12 * P
  if stage >= 1 then states = states / N end
  if stage >= 2 then grads = grads / N end
  if stage >= 3 then params = params / N end
  return params + grads + states
end
]],
        wrong = {
          [[
function zero_bytes(P, N, stage)   -- stage 1 shards the gradients too
  local params, grads, states = 2 * P, 2 * P, 12 * P
  if stage >= 1 then states, grads = states / N, grads / N end
  if stage >= 3 then params = params / N end
  return params + grads + states
end
]],
          [[
function zero_bytes(P, N, stage)   -- Adam's states as 8 bytes
  local params, grads, states = 2 * P, 2 * P, 8 * P
  if stage >= 1 then states = states / N end
  if stage >= 2 then grads = grads / N end
  if stage >= 3 then params = params / N end
  return params + grads + states
end
]],
          [[
function zero_bytes(P, N, stage)   -- every stage shards everything
  if stage == 0 then return 16 * P end
  return 16 * P / N
end
]],
          [[
function zero_bytes(P, N, stage)   -- fp32 weights and gradients
  local params, grads, states = 4 * P, 4 * P, 12 * P
  if stage >= 1 then states = states / N end
  if stage >= 2 then grads = grads / N end
  if stage >= 3 then params = params / N end
  return params + grads + states
end
]],
          [[
function zero_bytes(P, N, stage)   -- in GB
  local params, grads, states = 2 * P, 2 * P, 12 * P
  if stage >= 1 then states = states / N end
  if stage >= 2 then grads = grads / N end
  if stage >= 3 then params = params / N end
  return (params + grads + states) / 1e9
end
]],
        },
      },
    },
  },
}
