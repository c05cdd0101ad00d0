--[[
AI Computing Systems, chapter 7: designing a deep-learning processor, following the notes, on
lumen.dlp (lua/lumen/dlp.lua; the array's C is src/dlp/dlp.c, counted as SCALE-Sim counts) —
OS, WS and IS on one layer, compute cycles alone (step 1) and with DRAM stalls at falling
bandwidths, where the ranking flips (the student's `ranking` at 2 words a cycle, checked against
the simulator, step 2); the scratchpad as the hub: widening the road with banks and ports (the
student's `conflict_cycles` of one cycle's requests, checked on random requests and then summed
over every cycle of a layer against the simulator's ifmap_bank_conflict_cycles, step 3) and
planning the traffic with separate buffers (step 4); software pipelining with explicit
synchronization (the student's `pipelined_cycles` of a double-buffered schedule, checked on
random tiles against the schedule's reference: single buffering, the load paired with its own
tile, no prologue, rounding down each refused, step 5); rings and fractal scaling (step 6) and
transform, compress, approximate (step 7) as short text with small computations; and the
student's own loop-nest mapping (tiles and loop order) evaluated by a:evaluate for cycles, DRAM
traffic and energy, which must beat dlp.default_mapping on all three (step 8).
Scenes: energy (step 1), dma (steps 2 and 5).
Format: docs/lessons.md.
]]
local say = lesson.say
local show = lesson.show

local function D() return require 'lumen.dlp' end
local DFS = { 'os', 'ws', 'is' }

local function cdiv(a, b) return (a + b - 1) // b end

-- Steps 1-3's layer and array (the check builds its own from these, whatever the student changed).
local CONV = { name = 'conv', h = 16, w = 16, fh = 3, fw = 3, c = 4, k = 8 }
local ARRAY = { rows = 8, cols = 8, ifmap_sram_kb = 1, filter_sram_kb = 1, ofmap_sram_kb = 1 }
local SLOW = 2 -- words a cycle in step 2's question

local function conv_layer() return D().conv(CONV) end
local function array(df, extra)
  local t = { dataflow = df }
  for k, v in pairs(ARRAY) do t[k] = v end
  for k, v in pairs(extra or {}) do t[k] = v end
  return D().array(t)
end

-- ---------------------------------------------------------------- step 2: the ranking

local function order_of(bw)
  local L = conv_layer()
  local runs = {}
  for _, df in ipairs(DFS) do runs[#runs + 1] = { df = df, r = array(df, { bandwidth = bw }):run(L) } end
  return runs
end

local function sorted(runs, key)
  local c = {}
  for i, x in ipairs(runs) do c[i] = x end
  table.sort(c, function(a, b) return key(a) < key(b) end)
  local names = {}
  for i, x in ipairs(c) do names[i] = x.df end
  return names
end

local function as_order(v)
  if type(v) ~= 'table' then return nil end
  local out, seen = {}, {}
  for i = 1, 3 do
    local s = type(v[i]) == 'string' and v[i]:lower() or nil
    if not s or (s ~= 'os' and s ~= 'ws' and s ~= 'is') or seen[s] then return nil end
    seen[s] = true
    out[i] = s
  end
  if v[4] ~= nil then return nil end
  return out
end

local function same(a, b) for i = 1, 3 do if a[i] ~= b[i] then return false end end return true end
local function up(list) local u = {} for i, x in ipairs(list) do u[i] = x:upper() end return table.concat(u, ', ') end

local function check_ranking(env, answer)
  local v = answer
  if v == nil then v = env.ranking end
  local fmt_en = "set ranking = {compute = {...}, slow = {...}} (or :check {compute = ..., slow = ...}): each a list of 'os', 'ws', 'is', fastest first"
  local fmt_zh = "设置 ranking = {compute = {...}, slow = {...}}（或 :check {compute = ..., slow = ...}）：每个都是 'os'、'ws'、'is' 的列表，最快的在前"
  if type(v) ~= 'table' then return false, say(fmt_en, fmt_zh) end
  local comp, slow = as_order(v.compute), as_order(v.slow)
  if not comp or not slow then
    return false, say(fmt_en .. ' — each of the three once', fmt_zh .. '——三个各出现一次')
  end
  local runs = order_of(SLOW)
  local want_c = sorted(runs, function(x) return x.r.compute_cycles end)
  local want_s = sorted(runs, function(x) return x.r.total_cycles end)
  local cyc, cyc_zh = {}, {}
  for _, x in ipairs(runs) do
    cyc[#cyc + 1] = string.format('%s %d compute, %d in all', x.df:upper(), x.r.compute_cycles, x.r.total_cycles)
    cyc_zh[#cyc_zh + 1] = string.format('%s 计算 %d，共 %d', x.df:upper(), x.r.compute_cycles, x.r.total_cycles)
  end
  if not same(comp, want_c) then
    local msg
    if same(comp, want_s) then
      msg = say('that is the order with the stalls; compute alone is the folds x fold cycles of step 1 (r.compute_cycles), which the bandwidth does not change',
        '这是算上停顿的顺序；只看计算是第 1 步的折数 x 每折周期（r.compute_cycles），它与带宽无关')
    else
      msg = say('compare r.compute_cycles of the three runs in step 1: folds x fold cycles', '比较第 1 步三次运行的 r.compute_cycles：折数 x 每折周期')
    end
    return false, say(string.format('compute = {%s}, but without stalls the order is another: %s', up(comp), msg.en),
      string.format('compute = {%s}，但不计停顿时顺序不是这样：%s', up(comp), msg.zh))
  end
  if not same(slow, want_s) then
    local msg
    if same(slow, want_c) then
      msg = say('that is the compute order: at ' .. SLOW .. ' words a cycle the DMA cannot keep up, and the dataflow that moves the most words over its busiest channel waits the longest',
        '这是只看计算的顺序：每周期 ' .. SLOW .. ' 个字时 DMA 跟不上，哪种数据流在它最忙的通道上要搬的字最多，它就等得最久')
    else
      msg = say('for each dataflow, divide the words of its busiest channel (step 1\'s DRAM words, ifmap, filter or ofmap) by ' .. SLOW .. ', and compare with its compute cycles: the larger decides',
        '对每种数据流，用它最忙通道的字数（第 1 步的 DRAM 字数：ifmap、filter 或 ofmap）除以 ' .. SLOW .. '，再与它的计算周期比较：大的那个说了算')
    end
    return false, say(string.format('compute is right; slow = {%s}, but at %d words a cycle the simulator ranks them %s: %s',
        up(slow), SLOW, up(want_s), msg.en),
      string.format('compute 对了；slow = {%s}，但每周期 %d 个字时模拟器的顺序是 %s：%s', up(slow), SLOW, up(want_s), msg.zh))
  end
  return true, say(string.format('right (%s): the fastest without stalls (%s) moves more words than the fastest when the DRAM is slow (%s)', table.concat(cyc, '; '), want_c[1]:upper(), want_s[1]:upper()),
    string.format('对（%s）：不计停顿时最快的（%s）要搬的字比 DRAM 慢时最快的（%s）多', table.concat(cyc_zh, '；'), want_c[1]:upper(), want_s[1]:upper()))
end

-- ---------------------------------------------------------------- step 3: banks

local function conflicts_ref(addrs, banks, ports)
  local count, most = {}, 0
  for _, a in ipairs(addrs) do
    local b = a % banks
    count[b] = (count[b] or 0) + 1
    if count[b] > most then most = count[b] end
  end
  if most == 0 then return 0 end
  return cdiv(most, ports) - 1
end

-- Every cycle's ifmap requests of a layer on an OS or WS array, rebuilt from the PEs of the first
-- column (the left edge, where the inputs enter): what the simulator's banks see, addresses from 0.
local function ifmap_rows(a, L)
  local d = L:dims()
  local W, C, s, fwc = L.ifmap_w, L.channels, L.stride, L.filter_w * L.channels
  local function addr(p, k)
    local y, x = p // d.ofmap_w * s, p % d.ofmap_w * s
    local ky, rem = k // fwc, k % fwc
    local kx, ch = rem // C, rem % C
    if y + ky >= L.ifmap_h or x + kx >= W then return nil end
    return ((y + ky) * W + (x + kx)) * C + ch
  end
  local r = a:with { bandwidth = 1 << 16 }:run(L)
  local rows = {}
  for fc = 1, r.col_folds do
    for fr = 1, r.row_folds do
      for t = 0, r.fold_cycles - 1 do
        local row = {}
        for _, pes in ipairs(a:pe_state(L, fr, fc, t)) do
          local pe = pes[1]
          if pe.mac then
            local ad = addr(pe.p - 1, pe.k - 1)
            if ad then row[#row + 1] = ad end
          end
        end
        rows[#rows + 1] = row
      end
    end
  end
  return rows
end

local function bank_cases()
  local cases = {
    { {}, 4, 1 }, { { 0, 4, 8, 12 }, 4, 1 }, { { 0, 1, 2, 3 }, 4, 1 }, { { 0, 4, 8, 12, 16 }, 4, 2 },
    { { 5, 5, 5 }, 8, 1 }, { { 0, 3, 6, 9, 12, 15 }, 3, 2 }, { { 7 }, 1, 1 }, { { 1, 2, 3, 4, 5, 6, 7 }, 1, 3 },
    { { 0, 2, 4, 6, 8, 10, 12, 14 }, 4, 3 }, { { 0, 1, 16, 17, 32, 33 }, 16, 2 },
  }
  local rnd = lesson.lcg(703)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  for _ = 1, 30 do
    local n, stride, base = ri(0, 16), ({ 1, 2, 3, 4, 8, 16 })[ri(1, 6)], ri(0, 50)
    local row = {}
    for i = 1, n do row[i] = rnd() < 0.7 and base + (i - 1) * stride or ri(0, 200) end
    cases[#cases + 1] = { row, ({ 1, 2, 3, 4, 8, 16 })[ri(1, 6)], ri(1, 4) }
  end
  return cases
end

local function check_banks(env)
  local ok, fn = lesson.need(env, 'conflict_cycles')
  if not ok then return false, fn end
  for _, c in ipairs(bank_cases()) do
    local addrs, banks, ports = c[1], c[2], c[3]
    local want = conflicts_ref(addrs, banks, ports)
    local copy = {}
    for i, x in ipairs(addrs) do copy[i] = x end
    local call = string.format('conflict_cycles({%s}, %d, %d)', table.concat(addrs, ', '), banks, ports)
    local rok, got = lesson.try(fn, copy, banks, ports)
    if not rok then return false, say(call .. ': ' .. got.en, call .. '：' .. (got.zh or got.en)) end
    local g = lesson.number(got)
    if g ~= want then
      local count, most = {}, 0
      for _, a in ipairs(addrs) do
        local b = a % banks
        count[b] = (count[b] or 0) + 1
        if count[b] > most then most = count[b] end
      end
      local distinct_most, dseen, dcount = 0, {}, {}
      for _, a in ipairs(addrs) do
        if not dseen[a] then
          dseen[a] = true
          local b = a % banks
          dcount[b] = (dcount[b] or 0) + 1
          if dcount[b] > distinct_most then distinct_most = dcount[b] end
        end
      end
      local why
      if g == 0 and want > 0 then
        why = say(string.format('0 holds only while no bank gets more requests than its %d port(s); here bank %d gets %d', ports, (function()
            for b, n in pairs(count) do if n == most then return b end end end)(), most),
          string.format('只有当每个存储体收到的请求都不超过它的 %d 个端口时才是 0；这里存储体 %d 收到了 %d 个', ports, (function()
            for b, n in pairs(count) do if n == most then return b end end end)(), most))
      elseif distinct_most < most and g == (distinct_most == 0 and 0 or cdiv(distinct_most, ports) - 1) then
        why = say('requests for the same word are counted once there; the scratchpad serves each request (no broadcast): two for one word take two of the bank\'s slots',
          '这里把对同一个字的请求只算了一次；便笺存储器要服务每一个请求（没有广播）：对同一个字的两个请求占用该存储体的两个名额')
      elseif #addrs == 0 then
        why = say('no requests, no extra cycle', '没有请求，就没有额外的周期')
      elseif g == cdiv(most, ports) then
        why = say(string.format('that is the cycles the busiest bank needs (%d requests, %d a cycle); the extra cycles are one fewer: the first is the cycle the array has anyway', most, ports),
          string.format('这是最忙的存储体需要的周期数（%d 个请求，每周期 %d 个）；额外的周期要少一个：第一个周期本来就有', most, ports))
      elseif g == most // ports - 1 or g == most // ports then
        why = say(string.format('%d requests at %d a cycle take ceil(%d / %d) = %d cycles: round up', most, ports, most, ports, cdiv(most, ports)),
          string.format('%d 个请求、每周期 %d 个，需要 ceil(%d / %d) = %d 个周期：要向上取整', most, ports, most, ports, cdiv(most, ports)))
      elseif g == most - 1 and ports > 1 then
        why = say('each bank serves ' .. ports .. ' requests a cycle (its ports)', '每个存储体每周期能服务 ' .. ports .. ' 个请求（它的端口数）')
      elseif g == cdiv(#addrs, banks * ports) - 1 or g == cdiv(#addrs, banks) - 1 then
        why = say(string.format('that spreads the %d requests evenly over the banks; they are not even: word a is in bank a %% %d, and here one bank gets %d of them', #addrs, banks, most),
          string.format('这是把 %d 个请求平均分到各个存储体；实际并不平均：字 a 在存储体 a %% %d 里，这里有一个存储体收到了 %d 个', #addrs, banks, most))
      else
        why = say(string.format('bank of a word: a %% %d; the busiest bank gets %d requests, served %d a cycle: ceil(%d / %d) - 1 extra cycles', banks, most, ports, most, ports),
          string.format('字 a 所在的存储体：a %% %d；最忙的存储体收到 %d 个请求，每周期服务 %d 个：额外 ceil(%d / %d) - 1 个周期', banks, most, ports, most, ports))
      end
      return false, say(string.format('%s is %s, expected %d: %s', call, tostring(got), want, why.en),
        string.format('%s 得 %s，应为 %d：%s', call, tostring(got), want, why.zh))
    end
  end
  -- the whole layer, cycle by cycle, against the simulator's count
  local L = conv_layer()
  for _, df in ipairs({ 'os', 'ws' }) do
    local rows = ifmap_rows(array(df), L)
    for _, bp in ipairs({ { 2, 1 }, { 3, 1 }, { 8, 1 }, { 4, 2 } }) do
      local banks, ports = bp[1], bp[2]
      local sum = 0
      for _, row in ipairs(rows) do
        local rok, got = lesson.try(fn, row, banks, ports)
        if not rok then return false, say('on a row of the layer: ' .. got.en, '在这一层的某一行请求上：' .. (got.zh or got.en)) end
        sum = sum + (lesson.number(got) or 0)
      end
      local want = array(df, { banks = banks, ports = ports }):run(L).ifmap_bank_conflict_cycles
      if sum ~= want then
        return false, say(string.format('summed over the %d cycles of step 1\'s layer on the %s array with %d banks of %d ports, your conflict_cycles gives %d, the simulator %d', #rows, df:upper(), banks, ports, sum, want),
          string.format('在第 1 步的层、%s 阵列、%d 个存储体各 %d 个端口上，把你的 conflict_cycles 对 %d 个周期求和得 %d，模拟器是 %d', df:upper(), banks, ports, #rows, sum, want))
      end
    end
  end
  return true, say('right: on 40 rows of requests, and summed over every cycle of the layer (OS and WS, 2, 3, 4 and 8 banks) it is exactly the simulator\'s ifmap_bank_conflict_cycles',
    '对：40 行请求都对；对这一层的每个周期求和（OS 和 WS，2、3、4、8 个存储体）也正好等于模拟器的 ifmap_bank_conflict_cycles')
end

-- ---------------------------------------------------------------- step 5: the pipeline

local function load_cycles(t, bw) return t and cdiv(t.words, bw) or 0 end

local function pipe_ref(tiles, bw)
  local total, busy = load_cycles(tiles[1], bw), 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load_cycles(tiles[i + 1], bw))
    busy = busy + tiles[i].compute
  end
  return total, total - busy
end

local function pipe_cases()
  local cases = {
    { { { words = 64, compute = 20 }, { words = 64, compute = 20 }, { words = 64, compute = 20 } }, 4 },
    { { { words = 30, compute = 50 } }, 3 },
    { { { words = 10, compute = 40 }, { words = 200, compute = 10 }, { words = 7, compute = 30 } }, 4 },
    { { { words = 100, compute = 5 }, { words = 10, compute = 60 }, { words = 90, compute = 5 }, { words = 12, compute = 1 } }, 7 },
  }
  local rnd = lesson.lcg(705)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  for _ = 1, 16 do
    local t = {}
    for i = 1, ri(1, 8) do t[i] = { words = ri(1, 200), compute = ri(1, 80) } end
    cases[#cases + 1] = { t, ri(1, 8) }
  end
  return cases
end

local function describe_tiles(tiles)
  local s = {}
  for i, t in ipairs(tiles) do s[i] = string.format('{%d, %d}', t.words, t.compute) end
  return '{' .. table.concat(s, ', ') .. '}'
end

-- The mistakes a pipelined_cycles makes, as whole schedules (total cycles), each with its text:
-- the student's answers are compared with each on every case, so the one named fits them all.
local PIPE_MISTAKES = {
  { function(tiles, bw)
      local t = 0
      for i = 1, #tiles do t = t + load_cycles(tiles[i], bw) + tiles[i].compute end
      return t
    end, say('it matches the single-buffered schedule, each load then its compute; with two buffers the load of tile i + 1 runs while tile i is computed',
      '它和单缓冲的调度一致：每块先搬再算；有两个缓冲区时，第 i + 1 块的搬运与第 i 块的计算同时进行') },
  { function(tiles, bw)
      local t = 0
      for i = 1, #tiles do t = t + math.max(tiles[i].compute, load_cycles(tiles[i + 1], bw)) end
      return t
    end, say('it matches the schedule without the first load: tile 1\'s load has nothing to hide behind, the array waits for it',
      '它和少了第一次搬运的调度一致：第 1 块的搬运没有计算可以遮挡，阵列要等它') },
  { function(tiles, bw)
      local t = 0
      for i = 1, #tiles do t = t + math.max(tiles[i].compute, load_cycles(tiles[i], bw)) end
      return t
    end, say('it matches each tile computed beside its own load; it cannot be: a tile needs its data first. Tile i\'s compute overlaps the load of tile i + 1',
      '它和“每块的计算与它自己的搬运并行”一致；这不可能：一块要先有数据。与第 i 块计算重叠的是第 i + 1 块的搬运') },
  { function(tiles, bw)
      local function ld(t) return t and t.words // bw or 0 end
      local t = ld(tiles[1])
      for i = 1, #tiles do t = t + math.max(tiles[i].compute, ld(tiles[i + 1])) end
      return t
    end, say('it matches loads rounded down: w words at bw a cycle take ceil(w / bw) cycles, a last partial transfer is a cycle too',
      '它和搬运周期向下取整一致：每周期 bw 个字，搬 w 个字要 ceil(w / bw) 个周期，最后不满的一次传输也占一个周期') },
}

local function check_pipe(env)
  local ok, fn = lesson.need(env, 'pipelined_cycles')
  if not ok then return false, fn end
  local cases, got = pipe_cases(), {}
  for k, c in ipairs(cases) do
    local tiles, bw = c[1], c[2]
    local copy = {}
    for i, t in ipairs(tiles) do copy[i] = { words = t.words, compute = t.compute } end
    local rok, total, stall = lesson.try(fn, copy, bw)
    local call = string.format('pipelined_cycles(tiles, %d) with tiles {words, compute} = %s', bw, describe_tiles(tiles))
    local call_zh = string.format('pipelined_cycles(tiles, %d)，tiles {words, compute} = %s', bw, describe_tiles(tiles))
    if not rok then return false, say(call .. ': ' .. total.en, call_zh .. '：' .. (total.zh or total.en)) end
    got[k] = { lesson.number(total), lesson.number(stall), call, call_zh }
  end
  for k, c in ipairs(cases) do
    local tiles, bw = c[1], c[2]
    local want, want_stall = pipe_ref(tiles, bw)
    local g, gs, call, call_zh = table.unpack(got[k])
    if g ~= want then
      local why = say('the load of tile 1, then for each tile i the longer of its compute and the load of tile i + 1 (0 after the last)',
        '先是第 1 块的搬运，然后对每块 i，取它的计算与第 i + 1 块的搬运中较长的那个（最后一块之后为 0）')
      for _, m in ipairs(PIPE_MISTAKES) do
        local all = true
        for q, cq in ipairs(cases) do all = all and got[q][1] == m[1](cq[1], cq[2]) end
        if all then why = m[2] break end
      end
      return false, say(string.format('%s gives %s cycles, the double-buffered schedule takes %d: %s', call, tostring(g), want, why.en),
        string.format('%s 得 %s 个周期，双缓冲的调度是 %d：%s', call_zh, tostring(g), want, why.zh))
    end
    if gs ~= want_stall then
      return false, say(string.format('%s: the total is right (%d), but the stalls are %s: the array computes %d of those cycles and waits in the rest, the first load included: %d',
          call, want, tostring(gs), want - want_stall, want_stall),
        string.format('%s：总数对了（%d），但停顿得 %s：阵列在其中 %d 个周期里计算，其余都在等待，包括第一次搬运：%d',
          call_zh, want, tostring(gs), want - want_stall, want_stall))
    end
  end
  return true, say('right: on 20 schedules, from one tile to eight, the total and the stalls of double buffering',
    '对：在 20 个调度上（从一块到八块），双缓冲的总周期和停顿都对')
end

-- ---------------------------------------------------------------- step 8: the mapping

local MAP_LAYER = { name = 'conv2', h = 14, w = 14, fh = 3, fw = 3, c = 16, k = 32 }
local MAP_ARRAY = { rows = 8, cols = 8, dataflow = 'ws', bandwidth = 4, ifmap_sram_kb = 2, filter_sram_kb = 2, ofmap_sram_kb = 2 }

local function check_mapping(env, answer)
  local dlp = D()
  local m = answer
  if m == nil then m = env.my_mapping end
  if getmetatable(m) ~= dlp.Mapping then
    return false, say('set my_mapping = dlp.mapping{layer = L, tiles = {...}, order = {...}} (it is ' .. type(m) .. ')',
      '设置 my_mapping = dlp.mapping{layer = L, tiles = {...}, order = {...}}（现在它是 ' .. type(m) .. '）')
  end
  local L = dlp.conv(MAP_LAYER)
  local ml = m.layer
  for _, k in ipairs({ 'ifmap_h', 'ifmap_w', 'filter_h', 'filter_w', 'channels', 'filters', 'stride' }) do
    if ml[k] ~= L[k] then
      return false, say('my_mapping is for ' .. tostring(ml) .. '; map step 8\'s layer L (' .. tostring(L) .. ')',
        'my_mapping 映射的是 ' .. tostring(ml) .. '；要映射的是第 8 步的层 L（' .. tostring(L) .. '）')
    end
  end
  local a = dlp.array(MAP_ARRAY)
  local tm = dlp.mapping { layer = L, tiles = m.tiles, order = m.order }
  local ok, e = pcall(a.evaluate, a, tm)
  if not ok then
    return false, say(tostring(e):gsub('^.-dlp%.', 'dlp.') .. ' (scratchpads of 2 KiB each, double-buffered: each tile gets 1 KiB)',
      tostring(e):gsub('^.-dlp%.', 'dlp.') .. '（便笺存储器各 2 KiB，双缓冲：每个 tile 只有 1 KiB）')
  end
  local d = a:evaluate(dlp.default_mapping(a, L))
  local function line(x) return string.format('%d cycles, %d DRAM words, %.2f uJ', x.cycles, x.dram.total, x.energy_pj / 1e6) end
  local function line_zh(x) return string.format('%d 个周期、%d 个 DRAM 字、%.2f uJ', x.cycles, x.dram.total, x.energy_pj / 1e6) end
  local worse = {}
  if e.cycles >= d.cycles then worse[#worse + 1] = { 'cycles', '周期' } end
  if e.dram.total >= d.dram.total then worse[#worse + 1] = { 'DRAM words', 'DRAM 字数' } end
  if e.energy_pj >= d.energy_pj then worse[#worse + 1] = { 'energy', '能耗' } end
  if #worse > 0 then
    local en, zh = {}, {}
    for i, w in ipairs(worse) do en[i], zh[i] = w[1], w[2] end
    local why
    if tm.tiles.K < a.cols and e.cycles >= d.cycles then
      why = say(string.format(' The array is %.0f%% busy: tiles.K = %d below the array\'s %d columns leaves columns idle (WS puts the filters on the columns).', 100 * e.utilization, tm.tiles.K, a.cols),
        string.format('阵列只有 %.0f%% 的时间在忙：tiles.K = %d 小于阵列的 %d 列，就有列空着（WS 把滤波器放在列上）。', 100 * e.utilization, tm.tiles.K, a.cols))
    elseif (e.refetch.ofmap or 1) > 1 then
      why = say(string.format(' The partial sums go out and back %d times (refetch.ofmap): keep the whole reduction (C, R, S) in the tile, or put its loops inside the output loops.', e.refetch.ofmap),
        string.format('部分和要写出再读回 %d 次（refetch.ofmap）：把整个归约（C、R、S）放进 tile，或者把它们的循环放到输出循环里面。', e.refetch.ofmap))
    else
      why = say(string.format(' Refetches: ifmap %d, filter %d, ofmap %d (e.refetch): an operand is fetched again for each iteration of a loop outside it that does not index it.',
          e.refetch.ifmap, e.refetch.filter, e.refetch.ofmap),
        string.format('重取次数：ifmap %d、filter %d、ofmap %d（e.refetch）：一个操作数外面每有一个不索引它的循环，它就要在每次迭代时重新取一遍。',
          e.refetch.ifmap, e.refetch.filter, e.refetch.ofmap))
    end
    return false, say(string.format('yours: %s; the default: %s — not better in %s.%s', line(e), line(d), table.concat(en, ', '), why.en),
      string.format('你的：%s；默认的：%s——%s没有更好。%s', line_zh(e), line_zh(d), table.concat(zh, '、'), why.zh))
  end
  local _, best = a:search(L, { objective = 'edp' })
  local vs_en, vs_zh
  if e.cycles * e.energy_pj <= best.cycles * best.energy_pj then
    vs_en, vs_zh = 'and at least as good (cycles x energy) as the best a:search finds', '而且（周期 x 能耗）不比 a:search 找到的最好的差'
  else
    vs_en = string.format('a:search finds %s', line(best))
    vs_zh = string.format('a:search 找到的是 %s', line_zh(best))
  end
  return true, say(string.format('right: yours %s against the default\'s %s — %s', line(e), line(d), vs_en),
    string.format('对：你的 %s，默认的 %s——%s', line_zh(e), line_zh(d), vs_zh))
end

-- ---------------------------------------------------------------- the scenes

-- The reports a step's code left in the environment, drawn by the dlp scenes (dma: reports with
-- their events; energy: reports); the scene's demonstration when the student removed them.
local function reports(t, events)
  if type(t) ~= 'table' then return false end
  local n = 0
  for _, r in pairs(t) do
    n = n + 1
    if type(r) ~= 'table' or getmetatable(r) ~= D().Report then return false end
    if events and type(rawget(r, 'events')) ~= 'table' then return false end
  end
  return n > 0 and n <= 3
end

local function dma_scene(env)
  if reports(env.dma_runs, true) then return 'dma', env.dma_runs end
  return 'dma'
end

local function energy_scene(env)
  if reports(env.runs) then return 'energy', env.runs end
  return 'energy'
end

-- ---------------------------------------------------------------- the steps' code

local DATAFLOW_CODE = [==[
dlp = require 'lumen.dlp'
conv = dlp.conv{name = 'conv', h = 16, w = 16, fh = 3, fw = 3, c = 4, k = 8}
local d = conv:dims()
print(conv, string.format('  M = %d, N = %d, K = %d', d.M, d.N, d.K))
print('8x8 array, scratchpads of 1 KiB each, DRAM at 16 words a cycle per channel')
print('dataflow   folds  fold cycles  compute   DRAM words: ifmap  filter  ofmap')
runs = {}
for _, df in ipairs{'os', 'ws', 'is'} do
  local a = dlp.array{rows = 8, cols = 8, dataflow = df, bandwidth = 16,
                      ifmap_sram_kb = 1, filter_sram_kb = 1, ofmap_sram_kb = 1}
  local r = a:run(conv)
  runs[df] = r
  print(string.format('%-8s %7s %12d %8d %18d %7d %6d', df:upper(), r.row_folds .. 'x' .. r.col_folds,
    r.fold_cycles, r.compute_cycles, r.ifmap_dram_reads, r.filter_dram_reads, r.ofmap_dram_writes))
end
]==]

local SLOW_CODE = [==[
print('total cycles (stalls included) as the DRAM slows down; compute alone: OS ' .. runs.os.compute_cycles ..
  ', WS ' .. runs.ws.compute_cycles .. ', IS ' .. runs.is.compute_cycles)
print('words/cycle        OS        WS        IS')
for _, bw in ipairs{16, 8, 4} do
  local t = {}
  for i, df in ipairs{'os', 'ws', 'is'} do
    local a = dlp.array{rows = 8, cols = 8, dataflow = df, bandwidth = bw,
                        ifmap_sram_kb = 1, filter_sram_kb = 1, ofmap_sram_kb = 1}
    t[i] = a:run(conv).total_cycles
  end
  print(string.format('%11d %9d %9d %9d', bw, t[1], t[2], t[3]))
end
-- what each dataflow asks of its busiest DMA channel, in words per compute cycle
for _, df in ipairs{'os', 'ws', 'is'} do
  local r = runs[df]
  local busiest = math.max(r.ifmap_dram_reads, r.filter_dram_reads, r.ofmap_dram_writes)
  print(string.format('%s: busiest channel %d words over %d compute cycles = %.1f words a cycle',
    df:upper(), busiest, r.compute_cycles, busiest / r.compute_cycles))
end
dma_runs = {}                          -- the picture: the three at 4 words a cycle, with their DMA events
for i, df in ipairs{'os', 'ws', 'is'} do
  dma_runs[i] = dlp.array{rows = 8, cols = 8, dataflow = df, bandwidth = 4, ifmap_sram_kb = 1, filter_sram_kb = 1,
                          ofmap_sram_kb = 1}:run(conv, {events = 4096})
end
-- Your turn: the order at 2 words a cycle, predicted before you run it.
ranking = {compute = {'os', 'ws', 'is'}, slow = {'os', 'ws', 'is'}}
]==]

local BANK_CODE = [==[
-- Your turn: the extra cycles one cycle's requests cost a banked scratchpad.
function conflict_cycles(addrs, banks, ports)
  return 0                             -- as if every bank had ports for everyone
end
print('OS on conv: extra cycles the ifmap scratchpad needs (the simulator / your conflict_cycles on one row)')
print('banks  ports   ifmap   filter   most requests in one bank')
for _, bp in ipairs{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {8, 1}, {16, 1}, {4, 2}, {8, 2}} do
  local a = dlp.array{rows = 8, cols = 8, dataflow = 'os', banks = bp[1], ports = bp[2]}
  local r = a:run(conv)
  print(string.format('%5d %6d %7d %8d %8d', bp[1], bp[2], r.ifmap_bank_conflict_cycles, r.filter_bank_conflict_cycles,
    r.ifmap_bank_max_requests))
end
-- cycle 10 of the first fold: row c of the array reads pixel c at window position 10 - c
row = {10, 13, 16, 19, 22, 25, 28, 31}
for _, banks in ipairs{2, 3, 4} do
  print(string.format('conflict_cycles(row, %d, 1) = %d', banks, conflict_cycles(row, banks, 1)))
end
]==]

local TRAFFIC_CODE = [==[
print('words each scratchpad serves per cycle, on average (r.avg_*_sram_bw), and their sum')
print('dataflow    ifmap   filter    ofmap      sum')
for _, df in ipairs{'os', 'ws', 'is'} do
  local r = dlp.array{rows = 8, cols = 8, dataflow = df}:run(conv)
  print(string.format('%-8s %8.2f %8.2f %8.2f %8.2f', df:upper(), r.avg_ifmap_sram_bw, r.avg_filter_sram_bw,
    r.avg_ofmap_sram_bw, r.avg_ifmap_sram_bw + r.avg_filter_sram_bw + r.avg_ofmap_sram_bw))
end
print('at full speed an 8x8 array takes up to 8 + 8 words in and gives 8 out each cycle')
]==]

local PIPE_CODE = [==[
-- tiles: the words each tile brings in, and the cycles the array computes on it
tiles = {{words = 64, compute = 20}, {words = 64, compute = 20}, {words = 64, compute = 20}}
function single_cycles(tiles, bw)      -- one buffer: load, then compute, tile after tile
  local total = 0
  for i = 1, #tiles do total = total + (tiles[i].words + bw - 1) // bw + tiles[i].compute end
  return total
end
-- Your turn: two buffers, the load of tile i + 1 beside the compute of tile i.
function pipelined_cycles(tiles, bw)
  return single_cycles(tiles, bw), 0   -- total cycles, and how many of them the array waits
end
for _, bw in ipairs{1, 2, 4, 8} do
  local t, s = pipelined_cycles(tiles, bw)
  print(string.format('%d words a cycle: single-buffered %d cycles, yours %d (%d stalled)', bw,
    single_cycles(tiles, bw), t, s))
end
dma_runs = {}                          -- the picture: WS at 16 and 4 words a cycle
for i, bw in ipairs{16, 4} do
  dma_runs[i] = dlp.array{rows = 8, cols = 8, dataflow = 'ws', bandwidth = bw, ifmap_sram_kb = 1, filter_sram_kb = 1,
                          ofmap_sram_kb = 1}:run(conv, {events = 4096})
end
]==]

local RING_CODE = [==[
-- all-reduce of n words over p cores on a ring: reduce-scatter then all-gather,
-- 2(p - 1) steps, each core sending n / p words to its neighbour in each step
local n = 1 << 20
print('cores  steps  words per link   words per link / n')
for _, p in ipairs{2, 4, 8, 16, 32} do
  local per = 2 * (p - 1) * (n // p)
  print(string.format('%5d %6d %15d %20.3f', p, 2 * (p - 1), per, per / n))
end
]==]

local OPT_CODE = [==[
-- transform: Winograd F(2x2, 3x3) computes a 2x2 output tile of a 3x3 convolution
-- with 16 multiplications instead of 2 * 2 * 3 * 3 = 36 (additions go up)
print(string.format('Winograd F(2x2, 3x3): %d multiplications instead of %d, / %.2f', 16, 36, 36 / 16))
-- compress: prune half of the filters (structured pruning) and run both on the array
local a = dlp.array{rows = 8, cols = 8, dataflow = 'ws'}
local full = a:run(conv)
local pruned = a:run(dlp.conv{name = 'pruned', h = 16, w = 16, fh = 3, fw = 3, c = 4, k = 4})
print(string.format('pruned to %d of %d filters: MACs %d -> %d, cycles %d -> %d, energy %.1f -> %.1f nJ',
  4, 8, full.macs, pruned.macs, full.total_cycles, pruned.total_cycles,
  full:energy().total_pj / 1000, pruned:energy().total_pj / 1000))
]==]

local MAP_CODE = [==[
L = dlp.conv{name = 'conv2', h = 14, w = 14, fh = 3, fw = 3, c = 16, k = 32}
a = dlp.array{rows = 8, cols = 8, dataflow = 'ws', bandwidth = 4,
              ifmap_sram_kb = 2, filter_sram_kb = 2, ofmap_sram_kb = 2}
local function line(name, m)
  local e = a:evaluate(m)
  print(string.format('%-8s %-48s %7d %6d %6d %7.2f', name, tostring(m), e.cycles, e.stall_cycles, e.dram.total,
    e.energy_pj / 1e6))
  return e
end
print(L, ' P, Q (output) =', L:dims().ofmap_h, L:dims().ofmap_w)
print(string.format('%-8s %-48s %7s %6s %6s %7s', '', 'mapping', 'cycles', 'stall', 'DRAM', 'uJ'))
default = dlp.default_mapping(a, L)
local d = line('default', default)
print(string.format('the default fetches each operand again: ifmap x%d, filter x%d, ofmap x%d (e.refetch)',
  d.refetch.ifmap, d.refetch.filter, d.refetch.ofmap))
-- Your turn: a mapping of your own that beats the default in cycles, DRAM words and energy.
my_mapping = dlp.mapping{layer = L, tiles = {K = 8, C = 1, P = 6, Q = 12, R = 3, S = 3},
                         order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
result = line('yours', my_mapping)
]==]

return {
  title = say('Designing a deep-learning processor', '设计深度学习处理器'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 7: the architecture of a deep-learning processor',
    '智能计算系统 第 7 章：深度学习处理器架构'),
  summary = say([[OS, WS and IS on one layer, with and without DRAM stalls, where the ranking flips;
the scratchpad as the hub: banks and ports against separate buffers; software pipelining with
explicit synchronization; rings, fractals, and transform, compress, approximate; a loop-nest
mapping of your own against the default.]],
    [[同一层上的 OS、WS 和 IS，算不算 DRAM 停顿，排名怎样翻转；便笺存储器是数据枢纽：分组与端口
对比分离式设计；软件流水线与显式同步；环状互连、分形扩展，以及变换、压缩、近似；你自己的
循环嵌套映射与默认映射的较量。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Three dataflows, one layer', '三种数据流，同一层'),
      text = say([[
Lesson 06 built a DLP around a systolic array and counted its cycles; this one designs it. First
choice: the dataflow (06, step 4), what stays in the PEs — the outputs (OS), the weights (WS) or
the inputs (IS). The choice decides the compute cycles (folds x fold cycles) and, as much, what
has to come from DRAM and go back.

The code runs one convolution on an 8 x 8 array with scratchpads of 1 KiB each — too small for the
layer, as a real DLP's scratchpads are for a real layer — and DRAM at 16 words a cycle for each
scratchpad's DMA channel. Look at the two halves of the table. Compute: WS needs the fewest
cycles, IS by far the most (it streams only N = 8 filters through each of its many folds, and pays
fill and drain every time). DRAM words: the DMA fetches the ifmap as its im2col matrix (M x K =
7056 words: the overlapping windows repeat each input word up to 9 times), and with scratchpads
this small, how often it comes again depends on the dataflow — IS fetches the fewest ifmap words,
OS four times as many. OS writes each output once; WS and IS write it once per row fold (the
partial sums of K = 36 on 8 rows: 5 x 196 x 8). The picture is the energy scene of the three
runs: where each dataflow's picojoules go, level by level.]],
        [[
第 06 课围绕脉动阵列搭起了一个 DLP，并数清了它的周期；这一课来设计它。第一个选择是数据流
（第 06 课第 4 步），即什么留在 PE 里——输出（OS）、权值（WS）还是输入（IS）。这个选择决定了
计算周期（折数 x 每折周期），也同样决定了有多少数据要从 DRAM 搬进来、再写回去。

代码在 8 x 8 阵列上运行一个卷积层，每个便笺存储器只有 1 KiB——放不下这一层，就像真实 DLP 的
便笺存储器放不下真实的层一样——每个便笺存储器的 DMA 通道的 DRAM 带宽是每周期 16 个字。分两半
看这张表。计算：WS 用的周期最少，IS 最多（它在许多折中每折只流过 N = 8 个滤波器，每次都要付出
填充和排空的代价）。DRAM 字数：DMA 按 im2col 矩阵取 ifmap（M x K = 7056 个字：相互重叠的窗口让
每个输入字最多重复 9 次）；便笺存储器这么小，它要被重取多少次取决于数据流——IS 取的 ifmap 字
最少，OS 是它的四倍。OS 每个输出只写一次；WS 和 IS 每个行折都要写一次（K = 36 在 8 行上的部分
和：5 x 196 x 8）。画面是这三次运行的 energy 场景：每种数据流的皮焦逐级花在哪里。]]),
      code = DATAFLOW_CODE,
      scene = energy_scene,
      expect = [[
conv: conv 16x16x4, 8 filters 3x3, stride 1	  M = 196, N = 8, K = 36
8x8 array, scratchpads of 1 KiB each, DRAM at 16 words a cycle per channel
dataflow   folds  fold cycles  compute   DRAM words: ifmap  filter  ofmap
OS          25x1           50     1249              28160     288   1583
WS           5x1          218     1089              14336     288   7855
IS          5x25           30     3749               7168     320   7855]],
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('When the DRAM is slow, the ranking flips', 'DRAM 慢下来，排名就翻转'),
      text = say([[
With stalls, a dataflow's time is roughly the longer of two: its compute cycles, and the words of
its busiest DMA channel over the bandwidth (each scratchpad has its own channel). When the DRAM
is fast the first decides, and the ranking is step 1's compute column; as the DRAM slows, the
second takes over, and the dataflow that moves the fewest words wins — even the one that computes
slowest.

The code prints the total cycles (mode 'user': stalls included) at 16, 8 and 4 words a cycle, and
what each dataflow asks of its busiest channel per compute cycle. Watch OS fall behind first, then
WS approach IS. The picture is the dma scene of the three at 4 words a cycle: their transfers, and
the stalls where the array waits for them.

Predict before you run it: the order at 2 words a cycle.]],
        [[
有停顿时，一种数据流的时间大致取两者中较长的：它的计算周期，以及它最忙的 DMA 通道上的字数除以
带宽（每个便笺存储器有自己的通道）。DRAM 快时前者说了算，排名就是第 1 步计算那一列；DRAM 变慢，
后者接管，搬的字最少的数据流获胜——哪怕它算得最慢。

代码打印每周期 16、8、4 个字时的总周期（'user' 模式：包含停顿），以及每种数据流在每个计算周期
对它最忙的通道的要求。看 OS 先落后，然后 WS 向 IS 逼近。画面是三者在每周期 4 个字时的 dma 场景：
它们的传输，以及阵列等待它们时的停顿。

先预测，再运行：每周期 2 个字时的顺序。]]),
      code = SLOW_CODE,
      scene = dma_scene,
      expect = [[
total cycles (stalls included) as the DRAM slows down; compute alone: OS 1249, WS 1089, IS 3749
words/cycle        OS        WS        IS
         16      1939      1422      3749
          8      3667      1979      3749
          4      7075      3671      3749
OS: busiest channel 28160 words over 1249 compute cycles = 22.5 words a cycle
WS: busiest channel 14336 words over 1089 compute cycles = 13.2 words a cycle
IS: busiest channel 7855 words over 3749 compute cycles = 2.1 words a cycle]],
      exercise = {
        prompt = say([[
Set `ranking = {compute = {...}, slow = {...}}` (or :check {compute = {...}, slow = {...}}):
the three dataflows ('os', 'ws', 'is'), fastest first, by compute cycles alone, and by total
cycles at 2 words a cycle (the same array and layer). The check runs the simulator.]],
          [[
设置 `ranking = {compute = {...}, slow = {...}}`（或 :check {compute = {...}, slow = {...}}）：
三种数据流（'os'、'ws'、'is'），最快的在前，一个按只算计算的周期排，一个按每周期 2 个字时的
总周期排（同一个阵列、同一层）。检查会运行模拟器。]]),
        hints = {
          say('compute: step 1\'s compute column, smallest first.', 'compute：第 1 步的 compute 一列，从小到大。'),
          say('slow: for each dataflow take the larger of its compute cycles and its busiest channel\'s words / 2.',
            'slow：对每种数据流，取它的计算周期和它最忙通道的字数 / 2 中较大的那个。'),
        },
        check = check_ranking,
        solution = [[ranking = {compute = {'ws', 'os', 'is'}, slow = {'is', 'ws', 'os'}}]],
        wrong = {
          [[ranking = {compute = {'ws', 'os', 'is'}, slow = {'ws', 'os', 'is'}}]],
          [[ranking = {compute = {'ws', 'os', 'is'}, slow = {'ws', 'is', 'os'}}]],
          [[ranking = {compute = {'is', 'ws', 'os'}, slow = {'is', 'ws', 'os'}}]],
          [[ranking = {compute = {'os', 'ws', 'is'}, slow = {'is', 'ws', 'os'}}]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('The scratchpad is the hub: widening the road', '便笺存储器是数据枢纽：拓宽道路'),
      text = say([[
The scratchpad is the DLP core's data hub, and its accesses can become the bottleneck: in every
cycle an R x C array reads up to R words of inputs and C of weights and writes outputs. The notes
give two remedies. The first, "widening the road": more ports, or a banked SRAM — word a lives in
bank a % banks, and each bank serves `ports` requests a cycle. The cost is hardware: more
ports, more banks, and a crossbar between them and the array.

A cycle's requests are served as fast as their busiest bank allows: if one bank gets `most` of
them, the cycle takes ceil(most / ports) cycles instead of one, so ceil(most / ports) - 1 extra
cycles (every request counts, two for the same word included; no requests, no extra cycle). The
simulator counts these per scratchpad (reported apart: they do not change SCALE-Sim's cycles).

The code prints them for OS on step 1's layer: more banks help, but not always — for the ifmap, 3
banks do worse than 2. In OS, row c of the array reads pixel p + c at window position k - c: the
next pixel is 4 words on (4 channels), the previous window position 1 word back, so a cycle's
requests are 3 words apart — and words 3 apart all fall in one bank of 3. Then one cycle's
requests (cycle 10 of the first fold) through your conflict_cycles, which answers one cycle.]],
        [[
便笺存储器是 DLP 核心的数据枢纽，访问便笺可能成为瓶颈：R x C 的阵列每个周期要读最多 R 个输入
字、C 个权值字，还要写输出。笔记给了两种办法。第一种是“拓宽道路”：增加端口，或设计为分组
SRAM——字 a 放在第 a % banks 个存储体中，每个存储体每周期服务 `ports` 个请求。代价是硬件开销
增加：更多的端口、更多的存储体，以及它们与阵列之间的交叉开关。

一个周期的请求，能多快被服务完取决于最忙的存储体：如果一个存储体收到其中的 `most` 个，这个周期
就要 ceil(most / ports) 个周期而不是一个，即多出 ceil(most / ports) - 1 个周期（每个请求都算，
对同一个字的两个请求也算两个；没有请求，就没有额外的周期）。模拟器为每个便笺存储器分别计数
（单独报告：它们不改变 SCALE-Sim 的周期数）。

代码为第 1 步的层在 OS 下打印这些数：存储体多了有帮助，但并不总是——对 ifmap 来说，3 个存储体比
2 个还差。在 OS 中，阵列的第 c 行读像素 p + c 在窗口位置 k - c 的字：下一个像素往后 4 个字（4 个
通道），前一个窗口位置往前 1 个字，所以一个周期的请求相隔 3 个字——而相隔 3 的字在 3 个存储体
中全落在同一个里。然后把一个周期的请求（第一折的第 10 个周期）交给你的 conflict_cycles，它回答
一个周期的情形。]]),
      code = BANK_CODE,
      expect = [[
OS on conv: extra cycles the ifmap scratchpad needs (the simulator / your conflict_cycles on one row)
banks  ports   ifmap   filter   most requests in one bank
    1      1    5985     6125        8
    2      1    2555     2625        4
    3      1    4543     1700        8
    4      1     840      875        2
    8      1     336        0        2
   16      1     112        0        2
    4      2       0        0        2
    8      2       0        0        2
conflict_cycles(row, 2, 1) = 0
conflict_cycles(row, 3, 1) = 0
conflict_cycles(row, 4, 1) = 0]],
      exercise = {
        prompt = say([[
Correct `conflict_cycles(addrs, banks, ports)`: the extra cycles one cycle's requests (addrs, a
list of word addresses from 0, maybe empty, maybe repeated) cost a scratchpad of `banks`
word-interleaved banks with `ports` ports each. The check calls it on random requests, then sums it
over every cycle of step 1's layer (OS and WS) and compares with the simulator's
ifmap_bank_conflict_cycles.]],
          [[
改正 `conflict_cycles(addrs, banks, ports)`：一个周期的请求（addrs，从 0 开始的字地址列表，可能
为空，可能重复）在 `banks` 个按字交叉编址、每个有 `ports` 个端口的存储体上多花的周期数。检查先在
随机的请求上调用它，再对第 1 步那一层（OS 和 WS）的每个周期求和，与模拟器的
ifmap_bank_conflict_cycles 比较。]]),
        hints = {
          say('Count the requests per bank (count[a % banks]); keep the largest, most.', '按存储体计数（count[a % banks]）；记下最大的 most。'),
          say('No requests: 0. Otherwise (most + ports - 1) // ports - 1.', '没有请求：0。否则 (most + ports - 1) // ports - 1。'),
        },
        check = check_banks,
        equivalent = {
          ['>= instead of > at line 6'] = 'when count[b] equals most, most = count[b] sets it to the value it has',
        },
        solution = [[
function conflict_cycles(addrs, banks, ports)
  local count, most = {}, 0
  for i = 1, #addrs do
    local b = addrs[i] % banks
    count[b] = (count[b] or 0) + 1
    if count[b] > most then most = count[b] end
  end
  if most == 0 then return 0 end
  return (most + ports - 1) // ports - 1
end
]],
        wrong = {
          [[
function conflict_cycles(addrs, banks, ports)   -- the cycles, not the extra ones
  local count, most = {}, 0
  for i = 1, #addrs do
    local b = addrs[i] % banks
    count[b] = (count[b] or 0) + 1
    if count[b] > most then most = count[b] end
  end
  return (most + ports - 1) // ports
end
]],
          [[
function conflict_cycles(addrs, banks, ports)   -- the requests spread evenly
  if #addrs == 0 then return 0 end
  return (#addrs + banks * ports - 1) // (banks * ports) - 1
end
]],
          [[
function conflict_cycles(addrs, banks, ports)   -- rounded down
  local count, most = {}, 0
  for i = 1, #addrs do
    local b = addrs[i] % banks
    count[b] = (count[b] or 0) + 1
    if count[b] > most then most = count[b] end
  end
  if most == 0 then return 0 end
  return math.max(0, most // ports - 1)
end
]],
          [==[
function conflict_cycles(addrs, banks, ports)   -- two requests for one word counted once
  local count, seen, most = {}, {}, 0
  for i = 1, #addrs do
    local a = addrs[i]
    if not seen[a] then
      seen[a] = true
      local b = a % banks
      count[b] = (count[b] or 0) + 1
      if count[b] > most then most = count[b] end
    end
  end
  if most == 0 then return 0 end
  return (most + ports - 1) // ports - 1
end
]==],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Planning the traffic: separate buffers', '规划车流：分离式设计'),
      text = say([[
The second remedy, "planning the traffic": design the storage after the algorithm's features —
separate buffers for the inputs, the weights and the outputs (DianNao's NBin, SB and NBout), each
sized and ported for its own stream, so that the three never compete for one bank. The cost is
generality: a layer whose weights outgrow the weight buffer cannot borrow the input buffer's
space.

lumen.dlp's array has three separate scratchpads, as SCALE-Sim's does. The code prints how many
words each serves per cycle on average, per dataflow (SRAM of 64 KiB each, SCALE-Sim's default):
each stream has its own rate, and the three together are what one shared scratchpad would have to
serve every cycle — at full speed, up to 8 + 8 words in and 8 out on an 8 x 8 array.]],
        [[
第二种办法是“规划车流”：根据算法特征设计存储——输入、权值、输出采用分离式设计（DianNao 的
NBin、SB 和 NBout），每个都按自己那股数据流来定容量和端口，三者就不会争抢同一个存储体。代价是
降低通用性：权值超过权值缓冲的层，无法借用输入缓冲的空间。

lumen.dlp 的阵列和 SCALE-Sim 一样有三个分离的便笺存储器。代码按数据流打印每个便笺存储器平均每
周期服务多少个字（SRAM 各 64 KiB，SCALE-Sim 的默认值）：每股数据流有自己的速率，三者之和就是
一个共享的便笺存储器每个周期都得服务的量——满速时，8 x 8 的阵列每周期最多要读入 8 + 8 个字、
写出 8 个。]]),
      code = TRAFFIC_CODE,
      expect = [==[
words each scratchpad serves per cycle, on average (r.avg_*_sram_bw), and their sum
dataflow    ifmap   filter    ofmap      sum
OS           5.65     5.76     1.58    12.99
WS           6.48     0.26     7.20    13.94
IS           1.88     1.92     2.09     5.89
at full speed an 8x8 array takes up to 8 + 8 words in and gives 8 out each cycle]==],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('Software pipelining, explicit synchronization', '软件流水线与显式同步'),
      text = say([[
The notes: computation and memory access are made parallel by a software pipeline, not by
hardware. The compiler reorders the instructions — the DMA load of tile i + 1 is issued before the
computation of tile i — so no out-of-order execution is needed; and the program synchronizes
explicitly — before computing tile i + 1 it waits for its load — so no hardware checks the
dependences. With two buffers (double buffering):

  load tile 1, wait
  for each tile i:
    issue the load of tile i + 1 into the other buffer (DMA, asynchronous)
    compute tile i
    wait for the load of tile i + 1 (the explicit sync)

A load of w words at bw words a cycle takes ceil(w / bw) cycles. Each round takes the longer of
tile i's compute and tile i + 1's load: when the load is longer, the array stalls for the
difference. The first load has nothing to hide behind. (a:evaluate in step 8 counts a mapping's
stalls this way at every level of its loop nest; the array of step 2 stalls the same way, word by
word.)

The code compares one buffer with yours on three equal tiles at 1 to 8 words a cycle; the given
pipelined_cycles is the single-buffered one. The picture is the dma scene of step 1's WS run at 16
and at 4 words a cycle: the array's own double buffering, transfer by transfer.]],
        [[
笔记：通过软件流水线（而不再是硬件）使计算和访存并行起来。编译器对指令重新排序——第 i + 1 块的
DMA 搬运在第 i 块的计算之前发出——所以不需要乱序执行；程序显式控制同步——计算第 i + 1 块之前
等待它的搬运完成——所以不需要硬件做依赖检查。用两个缓冲区（双缓冲）：

  搬运第 1 块，等待
  对每一块 i：
    把第 i + 1 块搬进另一个缓冲区（DMA，异步）
    计算第 i 块
    等待第 i + 1 块搬完（显式同步）

每周期 bw 个字时，搬 w 个字要 ceil(w / bw) 个周期。每一轮取第 i 块的计算与第 i + 1 块的搬运中
较长的那个：搬运更长时，阵列就停顿两者之差。第一次搬运没有计算可以遮挡。（第 8 步的 a:evaluate
在映射的循环嵌套的每一层都这样计算停顿；第 2 步的阵列也以同样的方式停顿，只是逐字计算。）

代码在三块相同的数据上、每周期 1 到 8 个字时，比较单缓冲和你的版本；给出的 pipelined_cycles
就是单缓冲的。画面是第 1 步的 WS 在每周期 16 个字和 4 个字时的 dma 场景：阵列自己的双缓冲，一次
传输一次传输地看。]]),
      code = PIPE_CODE,
      expect = [==[
1 words a cycle: single-buffered 252 cycles, yours 252 (0 stalled)
2 words a cycle: single-buffered 156 cycles, yours 156 (0 stalled)
4 words a cycle: single-buffered 108 cycles, yours 108 (0 stalled)
8 words a cycle: single-buffered 84 cycles, yours 84 (0 stalled)]==],
      scene = dma_scene,
      exercise = {
        prompt = say([[
Correct `pipelined_cycles(tiles, bw)`: for tiles = {{words =, compute =}, ...} (at least one) and
bw words a cycle, return the total cycles of the double-buffered schedule above and how many of
them the array waits (total less the compute). The check runs it on schedules of one to eight
tiles with random words, compute cycles and bandwidths.]],
          [[
改正 `pipelined_cycles(tiles, bw)`：对 tiles = {{words =, compute =}, ...}（至少一块）和每周期
bw 个字，返回上面那个双缓冲调度的总周期数，以及阵列在其中等待的周期数（总数减去计算）。检查在
一到八块、字数、计算周期和带宽都随机的调度上运行它。]]),
        hints = {
          say('local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end — load(#tiles + 1) is 0.',
            'local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end——load(#tiles + 1) 为 0。'),
          say('total = load(1) + the sum over i of math.max(tiles[i].compute, load(i + 1)); stalls = total - the sum of the computes.',
            'total = load(1) + 对 i 求和 math.max(tiles[i].compute, load(i + 1))；stalls = total - 计算周期之和。'),
        },
        check = check_pipe,
        solution = [[
function pipelined_cycles(tiles, bw)
  local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end
  local total, busy = load(1), 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load(i + 1))
    busy = busy + tiles[i].compute
  end
  return total, total - busy
end
]],
        wrong = {
          [[
function pipelined_cycles(tiles, bw)   -- each tile beside its own load
  local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end
  local total, busy = 0, 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load(i))
    busy = busy + tiles[i].compute
  end
  return total, total - busy
end
]],
          [[
function pipelined_cycles(tiles, bw)   -- the first load hidden too
  local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end
  local total, busy = 0, 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load(i + 1))
    busy = busy + tiles[i].compute
  end
  return total, total - busy
end
]],
          [[
function pipelined_cycles(tiles, bw)   -- loads rounded down
  local function load(i) return tiles[i] and tiles[i].words // bw or 0 end
  local total, busy = load(1), 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load(i + 1))
    busy = busy + tiles[i].compute
  end
  return total, total - busy
end
]],
          [[
function pipelined_cycles(tiles, bw)   -- the stalls without the first load
  local function load(i) return tiles[i] and (tiles[i].words + bw - 1) // bw or 0 end
  local total, stall = load(1), 0
  for i = 1, #tiles do
    total = total + math.max(tiles[i].compute, load(i + 1))
    stall = stall + math.max(0, load(i + 1) - tiles[i].compute)
  end
  return total, stall
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('Communication and scale: rings and fractals', '通信与扩展：环与分形'),
      text = say([[
A DLP of many cores must move data between them. The notes' principles for the interconnect:
logically, a ring is enough to communicate efficiently; physically, give the links some
redundancy and configure them into rings as needed; and weigh performance against cost. A ring
suffices because deep learning's collective operations are regular: an all-reduce of n words over
p cores on a ring is a reduce-scatter and an all-gather, 2(p - 1) steps in which every core sends
n / p words to its neighbour. The code counts the words each link carries: about 2n whatever p,
so adding cores does not add traffic per link (the allreduce scene of lesson aics/05 draws it).

And the whole machine grows fractally (chapter 6's list): a chip is cores around a shared memory,
a card is chips, a server is cards — the same structure, storage, control and compute, at every
level, so a program written for one level runs at any scale (Cambricon-F; lesson aics/08 programs
that machine in BANG C).]],
        [[
多核的 DLP 要在核之间搬数据。笔记中通信结构的设计原则：逻辑上，环状链路足以高效完成通信；物理
上，链路设计适当增加冗余，按需配成环路；综合考虑性能和成本约束做出选择。环之所以够用，是因为
深度学习的集合通信很规整：p 个核上 n 个字的 all-reduce 在环上就是 reduce-scatter 加 all-gather，
共 2(p - 1) 步，每一步每个核向邻居发送 n / p 个字。代码算出每条链路传输的字数：约为 2n，与 p
无关，所以增加核数不会增加每条链路的流量（第 aics/05 课的 allreduce 场景画出了这个过程）。

整台机器则以分形方式扩展（第 6 章列出的特点）：芯片是围着共享存储的若干核，板卡是若干芯片，
服务器是若干板卡——每一层都是同样的结构：存储、控制、计算，所以为某一层写的程序在任何规模上
都能运行（Cambricon-F；第 aics/08 课用 BANG C 为这样的机器编程）。]]),
      code = RING_CODE,
      expect = [[
cores  steps  words per link   words per link / n
    2      2         1048576                1.000
    4      6         1572864                1.500
    8     14         1835008                1.750
   16     30         1966080                1.875
   32     62         2031616                1.938]],
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Transform, compress, approximate', '变换、压缩、近似'),
      text = say([[
The notes list optimizations that change the algorithm the DLP runs rather than the DLP:

- transform: rewrite the algorithm to cut its computational intensity (Winograd's convolution trades multiplications for additions);
- compress: shrink the algorithm, directly reducing its parameters and computation (pruning, quantization to fewer bits);
- approximate: replace parts of the algorithm by cheaper approximations (a piecewise-linear activation, a low-rank factorization);
- unconventional structures and devices: technologies beyond CMOS digital circuits that rewrite the computing paradigm (in-memory and analog computing).

The code counts Winograd's multiplications for a 3 x 3 convolution, and runs step 1's layer
pruned to half of its filters on the WS array: half the MACs, fewer picojoules — and not one cycle
fewer. WS puts the filters on the array's columns: 4 filters leave 4 of the 8 columns idle. What
the algorithm drops, the hardware (or the mapping) must be able to use. Quantizing from 16 to 8
bits would halve every word moved — and step 8 of lesson 06 showed where the energy goes.]],
        [[
笔记列出了一些常用的和前沿的优化设计，它们改的是 DLP 所运行的算法，而不是 DLP 本身：

- 变换：对算法进行变换，削减计算强度（Winograd 卷积用加法换乘法）；
- 压缩：对算法进行压缩，直接减少算法的参数量和计算量（剪枝、量化到更少的位数）；
- 近似：对算法进行近似替代，降低计算成本（分段线性的激活函数、低秩分解）；
- 非传统结构和器件：探索采用 CMOS 数字电路以外的技术，改写计算范式（存内计算、模拟计算）。

代码数出 3 x 3 卷积用 Winograd 时的乘法次数，并在 WS 阵列上运行剪掉一半滤波器的第 1 步的层：
乘加减半，皮焦少了——周期却一个也没少。WS 把滤波器放在阵列的列上：4 个滤波器让 8 列中的 4 列
空着。算法省下的，要硬件（或映射）用得上才算数。从 16 位量化到 8 位会让搬运的每个字减半——第 06
课第 8 步已经说明了能耗花在哪里。]]),
      code = OPT_CODE,
      expect = [==[
Winograd F(2x2, 3x3): 16 multiplications instead of 36, / 2.25
pruned to 4 of 8 filters: MACs 56448 -> 28224, cycles 1089 -> 1089, energy 881.5 -> 638.2 nJ]==],
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('A mapping of your own', '你自己的映射'),
      text = say([[
How a layer's loops are cut into tiles and ordered is the mapping; the same DLP runs a layer well
or badly by its mapping alone (Timeloop's idea, in Lua here). A layer is six loops: K filters, C
channels, P x Q outputs, R x S filter taps. A mapping gives each a tile size — the part held in
the scratchpads at once — and the order of the loops over the tiles at the DRAM level, outermost
first:

  m = dlp.mapping{layer = L, tiles = {K =, C =, P =, Q =, R =, S =},
                  order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
  e = a:evaluate(m)   -- e.cycles, e.stall_cycles, e.dram.total, e.energy_pj

Two rules decide the numbers. Capacity: each tile is double-buffered, so 2 x its words must fit
its scratchpad (ifmap C x (P + R - 1) x (Q + S - 1) at stride 1, filter K x C x R x S, ofmap
K x P x Q); a mapping that does not fit is an error naming the buffer. Reuse: an operand is fetched
again for every iteration of a loop outside it that does not index it (e.refetch) — the partial
sums of a reduction (C, R, S) cut into tiles go out to DRAM and come back.

The default mapping keeps one channel per tile (C = 1), so the partial sums travel 16 times (the
code prints e.refetch). Find better; dlp.default_mapping(a, L) is what you must beat, a:search(L) what a brute-force search
finds.]],
        [[
一层的循环怎样切成块（tile）、按什么顺序执行，叫做映射；同一个 DLP 跑同一层，快慢可以只取决于
映射（Timeloop 的思想，这里用 Lua 实现）。一层有六重循环：K 个滤波器、C 个通道、P x Q 个输出、
R x S 个滤波器抽头。映射为每一重给出块的大小——一次放在便笺存储器里的部分——以及在 DRAM 这一级
各块循环的顺序，最外层在前：

  m = dlp.mapping{layer = L, tiles = {K =, C =, P =, Q =, R =, S =},
                  order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
  e = a:evaluate(m)   -- e.cycles、e.stall_cycles、e.dram.total、e.energy_pj

两条规则决定这些数。容量：每块都是双缓冲的，所以它的字数的 2 倍要放得进它的便笺存储器（步长为 1
时 ifmap 是 C x (P + R - 1) x (Q + S - 1)，filter 是 K x C x R x S，ofmap 是 K x P x Q）；放不下
的映射会报错并指出是哪个缓冲区。重用：一个操作数外面每有一个不索引它的循环，它就要在该循环的
每次迭代时重新取一遍（e.refetch）——归约（C、R、S）被切成块时，部分和要写回 DRAM 再读回来。

默认映射每块只放一个通道（C = 1），所以部分和要往返 16 次（代码打印了 e.refetch）。找一个更好的；dlp.default_mapping(a, L)
是你要打败的，a:search(L) 是穷举搜索找到的。]]),
      code = MAP_CODE,
      expect = [==[
conv2: conv 14x14x16, 32 filters 3x3, stride 1	 P, Q (output) =	12	12
         mapping                                           cycles  stall   DRAM      uJ
default  tiles {K=8 C=1 P=6 Q=12 R=3 S=3}, order K C P Q R S   41644  17580 161792    9.22
the default fetches each operand again: ifmap x4, filter x1, ofmap x16 (e.refetch)
yours    tiles {K=8 C=1 P=6 Q=12 R=3 S=3}, order K C P Q R S   41644  17580 161792    9.22]==],
      exercise = {
        prompt = say([[
Set `my_mapping` to a dlp.mapping of step 8's layer L (on the array a: 8 x 8, WS, scratchpads of
2 KiB, 4 words a cycle) that beats dlp.default_mapping(a, L) in cycles, in DRAM words and in
energy, as a:evaluate counts them. (:check m also works.)]],
          [[
把 `my_mapping` 设为第 8 步的层 L 的一个 dlp.mapping（阵列 a：8 x 8，WS，便笺存储器各 2 KiB，每
周期 4 个字），它在 a:evaluate 计算的周期、DRAM 字数和能耗上都要胜过 dlp.default_mapping(a, L)。
（也可以 :check m。）]]),
        hints = {
          say('Keep more channels in a tile: the filter tile K x C x 3 x 3 must fit twice in 2048 words, so with K = 8, C can be 8.',
            '让一块里放更多的通道：filter 块 K x C x 3 x 3 的两倍要放进 2048 个字，所以 K = 8 时 C 可以是 8。'),
          say('Then shrink P and Q until the ifmap tile 8 x (P + 2) x (Q + 2) fits twice in 2048 words; tiles that divide 12 evenly waste nothing.',
            '再缩小 P 和 Q，直到 ifmap 块 8 x (P + 2) x (Q + 2) 的两倍放得进 2048 个字；能整除 12 的块不浪费。'),
        },
        check = check_mapping,
        solution = [[
my_mapping = dlp.mapping{layer = L, tiles = {K = 8, C = 8, P = 6, Q = 6, R = 3, S = 3},
                         order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
]],
        wrong = {
          [[my_mapping = dlp.default_mapping(a, L)]],
          [[
my_mapping = dlp.mapping{layer = L, tiles = {K = 8, C = 16, P = 6, Q = 6, R = 3, S = 3},   -- the filter tile does not fit
                         order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
]],
          [[
my_mapping = dlp.mapping{layer = L, tiles = {K = 1, C = 1, P = 12, Q = 12, R = 3, S = 3},  -- cheaper, but one column busy
                         order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
]],
        },
      },
    },
  },
}
