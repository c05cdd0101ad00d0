--[[
AI Computing Systems, chapter 6: the deep-learning processor (DLP), following the notes — from a
simplified general core to a DLP one change at a time, each change measured on one GEMM by
lumen.dlp (lua/lumen/dlp.lua; its array is src/dlp/dlp.c, counted as SCALE-Sim counts): no branch
predictor and counted loops, a scratchpad instead of the data cache, a DMA engine between the
scratchpad and DRAM, a matrix unit (cycles, DRAM words, energy, step 2); the matrix units side by
side (a matrix-vector unit, DianNao's NFU, a systolic array; the student's `nfu_cycles`, checked
against the NFU model on random shapes and Tn, step 3); the systolic array's three dataflows
(step 4); the cycles of one fold (the student's `fold_cycles`, checked on random non-square
arrays, layers and dataflows against a:fold_cycles: off by one, WS/IS without the weights'
preload, R and C swapped, the wrong streamed dimension are each refused and named, step 5) and of
a whole layer without stalls (the student's `layer_cycles` = folds x fold cycles, checked against
the simulator's folds on random layers: a forgotten fold count, R and C swapped in the folds,
rounding down, packing folds, the report's last-cycle number each refused, step 6); scratchpads
and the DMA at falling DRAM bandwidths (step 7); where the energy goes (the student's `energy`,
checked level by level against r:energy() on random layers and random energy tables, step 8).
Scenes: systolic (steps 4-6), dma (step 7), energy (step 8).
Format: docs/lessons.md.
]]
local say = lesson.say
local show = lesson.show

local function D() return require 'lumen.dlp' end
local DFS = { 'os', 'ws', 'is' }

local function cdiv(a, b) return (a + b - 1) // b end

-- The GEMM view of a layer under a dataflow: Sr (on the rows), Sc (on the columns), T (streamed).
local function view(df, L)
  local d = L:dims()
  if df == 'os' then return d.M, d.N, d.K end
  if df == 'ws' then return d.K, d.N, d.M end
  return d.K, d.M, d.N
end

local function describe(a, L, zh)
  local d = L:dims()
  if zh then
    return string.format('%dx%d 阵列、%s，层 M = %d、N = %d、K = %d', a.rows, a.cols, a.dataflow:upper(), d.M, d.N, d.K)
  end
  return string.format('a %dx%d array, %s, on a layer with M = %d, N = %d, K = %d', a.rows, a.cols,
    a.dataflow:upper(), d.M, d.N, d.K)
end

-- Random arrays (mostly not square) and small layers (conv and GEMM, dims not multiples of the
-- array), with fixed cases first that tell the classic mistakes apart.
local function fold_cases(seed, n)
  local dlp = D()
  local cases = {
    { dlp.array { rows = 4, cols = 8, dataflow = 'ws' }, dlp.conv { h = 6, w = 7, fh = 3, fw = 2, c = 3, k = 5 } },
    { dlp.array { rows = 8, cols = 4, dataflow = 'is' }, dlp.gemm { m = 13, n = 9, k = 21 } },
    { dlp.array { rows = 6, cols = 3, dataflow = 'os' }, dlp.gemm { m = 20, n = 7, k = 11 } },
    { dlp.array { rows = 3, cols = 5, dataflow = 'ws' }, dlp.gemm { m = 9, n = 17, k = 7 } },
    { dlp.array { rows = 5, cols = 2, dataflow = 'os' }, dlp.conv { h = 8, w = 8, fh = 3, fw = 3, c = 2, k = 3, stride = 2 } },
  }
  local rnd = lesson.lcg(seed)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  for i = 1, n do
    local R, C = ri(2, 12), ri(2, 12)
    if R == C then C = C + ri(1, 3) end
    local L
    if rnd() < 0.5 then
      L = dlp.gemm { m = ri(1, 40), n = ri(1, 30), k = ri(1, 40) }
    else
      local h = ri(3, 10)
      local f = ri(1, math.min(h, 3))
      L = dlp.conv { h = h, w = ri(f, 10), fh = f, fw = ri(1, f), c = ri(1, 4), k = ri(1, 20), stride = ri(1, 2) }
    end
    cases[#cases + 1] = { dlp.array { rows = R, cols = C, dataflow = DFS[1 + (i - 1) % 3] }, L }
  end
  return cases
end

local function need_integer(call, call_zh, got)
  local g = lesson.number(got)
  if g == nil then
    return nil, say(string.format('%s returns %s; return a number of cycles', call, type(got)),
      string.format('%s 返回的是 %s；应返回周期数', call_zh, type(got)))
  end
  return g
end

-- ---------------------------------------------------------------- step 3: the NFU

local function nfu_ref(tn, M, N, K) return D().nfu { tn = tn }:run(D().gemm { m = M, n = N, k = K }).cycles end

local function check_nfu(env)
  local ok, fn = lesson.need(env, 'nfu_cycles')
  if not ok then return false, fn end
  local cases = { { 16, 64, 32, 48 }, { 16, 5, 20, 17 }, { 4, 7, 9, 10 }, { 8, 1, 8, 8 }, { 16, 3, 1, 1 } }
  local rnd = lesson.lcg(603)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  for _ = 1, 12 do cases[#cases + 1] = { ({ 2, 4, 8, 16, 3 })[ri(1, 5)], ri(1, 40), ri(1, 50), ri(1, 50) } end
  for _, c in ipairs(cases) do
    local tn, M, N, K = table.unpack(c)
    local want = nfu_ref(tn, M, N, K)
    local call = string.format('nfu_cycles(%d, %d, %d, %d)', tn, M, N, K)
    local rok, got = lesson.try(fn, tn, M, N, K)
    if not rok then return false, say(call .. ': ' .. got.en, call .. '：' .. (got.zh or got.en)) end
    local g, msg = need_integer(call, call, got)
    if not g then return false, msg end
    if g ~= want then
      local steps = M * cdiv(N, tn) * cdiv(K, tn)
      local why
      if g == steps then
        why = say('that is the cycles in which a block of weights enters NFU-1; the three stages are a pipeline, and the last block still needs NFU-2 and NFU-3: 2 more cycles',
          '这是权值块进入 NFU-1 的周期数；三级是流水线，最后一块还要经过 NFU-2 和 NFU-3：再加 2 个周期')
      elseif g == steps + 3 then
        why = say('a pipeline of 3 stages adds 2 cycles, not 3: the first result leaves NFU-3 two cycles after its block entered NFU-1, and one more leaves every cycle after it',
          '3 级流水线多出 2 个周期，而不是 3 个：第一个结果在它的块进入 NFU-1 两个周期之后离开 NFU-3，此后每个周期出来一个')
      elseif g == (M * N * K) // (tn * tn) + 2 or g == cdiv(M * N * K, tn * tn) + 2 or g == (M * N * K) // (tn * tn)
          or g == cdiv(M * N * K, tn * tn) then
        why = say(string.format('that is the MACs over the %d multipliers, as if every multiplier were busy every cycle; with N = %d or K = %d not a multiple of Tn = %d the last block of outputs or inputs is partly empty, and it still takes its cycle: round up each of N / Tn and K / Tn',
            tn * tn, N, K, tn),
          string.format('这是乘加次数除以 %d 个乘法器，仿佛每个乘法器每个周期都在忙；N = %d 或 K = %d 不是 Tn = %d 的倍数时，最后一块输出或输入只填了一部分，照样要占一个周期：N / Tn 和 K / Tn 都要向上取整',
            tn * tn, N, K, tn))
      elseif g == cdiv(N, tn) * cdiv(K, tn) + 2 then
        why = say('that is one input vector; the layer has M of them (M = ' .. M .. '), each through all the weight blocks',
          '这只是一个输入向量；这一层有 M 个（M = ' .. M .. '），每个都要走遍所有的权值块')
      else
        why = say('each of the M input vectors takes ceil(N / Tn) x ceil(K / Tn) cycles (one Tn x Tn block of weights a cycle), and the 3-stage pipeline adds 2 to the whole',
          'M 个输入向量，每个占 ceil(N / Tn) x ceil(K / Tn) 个周期（每周期一个 Tn x Tn 的权值块），3 级流水线在总数上再加 2')
      end
      return false, say(string.format('%s is %s, the NFU model counts %s: %s', call, show(g), show(want), why.en),
        string.format('%s 得 %s，NFU 模型是 %s：%s', call, show(g), show(want), why.zh))
    end
  end
  return true, say('right: on 17 shapes and Tn from 2 to 16, as dlp.nfu counts — partial blocks cost whole cycles, and the pipeline 2 more',
    '对：17 种形状、Tn 从 2 到 16，都与 dlp.nfu 的计数一致——不满的块也占整个周期，流水线再多 2 个')
end

-- ---------------------------------------------------------------- step 5: one fold

local function fold_mistakes(a, L)
  local Sr, Sc, T = view(a.dataflow, L)
  local R, C = a.rows, a.cols
  local d = L:dims()
  local want = a:fold_cycles(L)
  local m = {}
  local function add(v, en, zh) if v ~= want then m[#m + 1] = { v, say(en, zh) } end end
  add(want + 1, 'one cycle too many: the last MAC happens at cycle ' .. (want - 1) .. ' (cycles are numbered from 0), so the fold has ' .. want .. ' cycles, 0 .. ' .. (want - 1),
    '多了一个周期：最后一次乘加发生在第 ' .. (want - 1) .. ' 个周期（周期从 0 开始编号），所以这一折有 ' .. want .. ' 个周期：0 .. ' .. (want - 1))
  add(want - 1, 'one cycle short: that is the number of the last cycle (counted from 0), not how many cycles there are',
    '少了一个周期：这是最后一个周期的编号（从 0 数起），而不是周期的个数')
  if a.dataflow ~= 'os' then
    add(T + R + C - 2, 'T + R + C - 2 is the OS fold; in ' .. a.dataflow:upper() .. ' the stationary operand first shifts into the array, one row a cycle: R more cycles before the first ' .. (a.dataflow == 'ws' and 'input' or 'filter') .. ' enters',
      'T + R + C - 2 是 OS 的一折；在 ' .. a.dataflow:upper() .. ' 中，驻留的操作数要先一行一行地移入阵列：在第一个' .. (a.dataflow == 'ws' and '输入' or '滤波器') .. '进入之前还有 R 个周期')
    add(2 * C + R + T - 2, 'R and C swapped: the preload takes one cycle per ROW (R = ' .. R .. '), and the skew across the columns C - 1 = ' .. (C - 1),
      'R 和 C 弄反了：预载每一行（R = ' .. R .. '）要一个周期，横跨各列的倾斜是 C - 1 = ' .. (C - 1))
  else
    add(2 * R + C + T - 2, 'in OS nothing is preloaded: the outputs stay in the PEs and both operands stream from the first cycle; the fold is T + R + C - 2',
      'OS 不需要预载：输出留在 PE 里，两个操作数从第一个周期起就流进来；一折是 T + R + C - 2')
  end
  local names = { M = d.M, N = d.N, K = d.K }
  local right = a.dataflow == 'os' and 'K' or a.dataflow == 'ws' and 'M' or 'N'
  for _, x in ipairs({ 'M', 'N', 'K' }) do
    if x ~= right then
      local v = a.dataflow == 'os' and names[x] + R + C - 2 or 2 * R + C + names[x] - 2
      add(v, string.format('that streams %s = %d; in %s the dimension streamed through the array is %s = %d (%s)', x, names[x],
          a.dataflow:upper(), right, names[right],
          a.dataflow == 'os' and 'the window: each output accumulates K products' or a.dataflow == 'ws' and 'the output pixels: the weights stay, one input row per pixel goes by' or 'the filters: the inputs stay, one filter goes by after another'),
        string.format('这流过的是 %s = %d；在 %s 中流过阵列的维度是 %s = %d（%s）', x, names[x], a.dataflow:upper(), right, names[right],
          a.dataflow == 'os' and '窗口：每个输出累加 K 个乘积' or a.dataflow == 'ws' and '输出像素：权值不动，每个像素的一行输入依次流过' or '滤波器：输入不动，滤波器一个接一个流过'))
    end
  end
  return want, m
end

local function check_fold(env)
  local ok, fn = lesson.need(env, 'fold_cycles')
  if not ok then return false, fn end
  for _, c in ipairs(fold_cases(605, 24)) do
    local a, L = c[1], c[2]
    local want, mistakes = fold_mistakes(a, L)
    local call = 'fold_cycles(a, L) for ' .. describe(a, L)
    local call_zh = 'fold_cycles(a, L)，' .. describe(a, L, true)
    local rok, got = lesson.try(fn, a, L)
    if not rok then return false, say(call .. ': ' .. got.en, call_zh .. '：' .. (got.zh or got.en)) end
    local g, msg = need_integer(call, call_zh, got)
    if not g then return false, msg end
    if g ~= want then
      local why
      for _, mk in ipairs(mistakes) do if mk[1] == g then why = mk[2] break end end
      why = why or say('OS: T + R + C - 2; WS and IS: 2R + C + T - 2, with T = K (OS), M (WS), N (IS)',
        'OS：T + R + C - 2；WS 和 IS：2R + C + T - 2，其中 T = K（OS）、M（WS）、N（IS）')
      return false, say(string.format('%s is %s, the simulator\'s fold takes %s: %s', call, show(g), show(want), why.en),
        string.format('%s 得 %s，模拟器的一折是 %s：%s', call_zh, show(g), show(want), why.zh))
    end
  end
  return true, say('right: 29 arrays (square and not) and layers, in the three dataflows, fold by fold as the simulator counts',
    '对：29 个阵列（方的和不方的）和层、三种数据流，每一折都和模拟器的计数一致')
end

-- ---------------------------------------------------------------- step 6: a whole layer

-- the simulator's report, without stalls (a bandwidth no layer here can outrun)
local function run_free(a, L) return a:with { bandwidth = 1 << 16 }:run(L) end

local function check_layer(env)
  local ok, fn = lesson.need(env, 'layer_cycles')
  if not ok then return false, fn end
  for _, c in ipairs(fold_cases(606, 20)) do
    local a, L = c[1], c[2]
    local r = run_free(a, L)
    local want = r.row_folds * r.col_folds * r.fold_cycles
    local call = 'layer_cycles(a, L) for ' .. describe(a, L)
    local call_zh = 'layer_cycles(a, L)，' .. describe(a, L, true)
    local rok, got = lesson.try(fn, a, L)
    if not rok then return false, say(call .. ': ' .. got.en, call_zh .. '：' .. (got.zh or got.en)) end
    local g, msg = need_integer(call, call_zh, got)
    if not g then return false, msg end
    if g ~= want then
      local Sr, Sc = r.Sr, r.Sc
      local R, C, f = a.rows, a.cols, r.fold_cycles
      local folds = string.format('%d x %d folds (ceil(%d / %d) x ceil(%d / %d))', r.row_folds, r.col_folds, Sr, R, Sc, C)
      local folds_zh = string.format('%d x %d 折（ceil(%d / %d) x ceil(%d / %d)）', r.row_folds, r.col_folds, Sr, R, Sc, C)
      local why
      if g == f then
        why = say('that is one fold; the layer is ' .. folds .. ', one after the other', '这只是一折；这一层有 ' .. folds_zh .. '，一折接一折')
      elseif g == r.compute_cycles then
        why = say('that is r.compute_cycles, which is the number of the last cycle (SCALE-Sim numbers cycles from 0): the cycles themselves are one more',
          '这是 r.compute_cycles，它是最后一个周期的编号（SCALE-Sim 从 0 开始数周期）：周期的个数还要多一个')
      elseif g == cdiv(Sr, C) * cdiv(Sc, R) * f then
        why = say(string.format('the folds with R and C swapped: Sr = %d goes on the %d rows, Sc = %d on the %d columns', Sr, R, Sc, C),
          string.format('折数里 R 和 C 弄反了：Sr = %d 放在 %d 行上，Sc = %d 放在 %d 列上', Sr, R, Sc, C))
      elseif g == (Sr // R) * (Sc // C) * f or g == math.max(1, Sr // R) * math.max(1, Sc // C) * f then
        why = say('the folds rounded down: a last fold that is only partly filled still takes a whole fold of cycles; ' .. folds,
          '折数向下取整了：只填了一部分的最后一折也要花整整一折的周期；' .. folds_zh)
      elseif g == cdiv(Sr * Sc, R * C) * f then
        why = say('the folds packed as if the pieces of partial folds could share one: a fold is a block of ' .. R .. ' x ' .. C .. ' of the Sr x Sc grid; ' .. folds,
          '这样算相当于把几个不满的折拼成一折：一折是 Sr x Sc 网格中 ' .. R .. ' x ' .. C .. ' 的一块；' .. folds_zh)
      elseif g == cdiv(L:macs(), R * C) then
        why = say('that is the MACs over the PEs, as if every PE multiplied every cycle; the fill and drain of each fold, and the empty PEs of partial folds, cost cycles too',
          '这是乘加次数除以 PE 数，仿佛每个 PE 每个周期都在乘；每一折的填充和排空，以及不满的折里空着的 PE，也都要花周期')
      else
        why = say(string.format('the simulator has %s of %d cycles (a:fold_cycles(L) = %d)', folds, f, a:fold_cycles(L)),
          string.format('模拟器是 %s，每折 %d 个周期（a:fold_cycles(L) = %d）', folds_zh, f, a:fold_cycles(L)))
      end
      return false, say(string.format('%s is %s, the simulator computes %s cycles without stalls: %s', call, show(g), show(want), why.en),
        string.format('%s 得 %s，模拟器在没有停顿时计算了 %s 个周期：%s', call_zh, show(g), show(want), why.zh))
    end
  end
  return true, say('right: on 25 arrays and layers, folds x fold cycles is what the simulator computes when the DRAM never makes it wait',
    '对：在 25 个阵列和层上，折数 x 每折周期正是 DRAM 从不让阵列等待时模拟器算出的周期数')
end

-- ---------------------------------------------------------------- step 8: energy

local LEVELS = { 'mac', 'register', 'pe_hop', 'sram', 'dram' }

local function energy_cases()
  local dlp = D()
  local cases = {}
  local rnd = lesson.lcg(608)
  local function ri(a, b) return a + math.floor(rnd() * (b - a + 1)) end
  local layers = {
    dlp.conv { h = 10, w = 10, fh = 3, fw = 3, c = 4, k = 12 },
    dlp.gemm { m = 30, n = 17, k = 25 },
    dlp.conv { h = 9, w = 7, fh = 2, fw = 3, c = 3, k = 7, stride = 2 },
  }
  for i, L in ipairs(layers) do
    local a = dlp.array { rows = ri(4, 9), cols = ri(4, 9), dataflow = DFS[i], ifmap_sram_kb = 1, filter_sram_kb = 1,
      ofmap_sram_kb = 1, bandwidth = ri(2, 8) }
    local tbl = { source = 'a random table' }
    for _, k in ipairs(LEVELS) do tbl[k] = math.floor((0.05 + rnd() * 3) * 100) / 100 end
    tbl.dram = tbl.dram * 20
    cases[#cases + 1] = { a, L, a:run(L), tbl }
  end
  local a = dlp.array { rows = 8, cols = 8, dataflow = 'ws' }
  cases[#cases + 1] = { a, layers[1], a:run(layers[1]), dlp.energy_table }
  return cases
end

local function close(x, y) return type(x) == 'number' and math.abs(x - y) <= 1e-9 * math.max(1, math.abs(y)) end

local function check_energy(env)
  local ok, fn = lesson.need(env, 'energy')
  if not ok then return false, fn end
  for ci, c in ipairs(energy_cases()) do
    local a, L, r, tbl = table.unpack(c)
    local want = r:energy(tbl)
    local on = string.format('energy(r, tbl) for %s (case %d)', describe(a, L), ci)
    local on_zh = string.format('energy(r, tbl)，%s（第 %d 例）', describe(a, L, true), ci)
    local rok, got = lesson.try(fn, r, tbl)
    if not rok then return false, say(on .. ': ' .. got.en, on_zh .. '：' .. (got.zh or got.en)) end
    if type(got) ~= 'table' then
      return false, say(on .. ' returns ' .. type(got) .. '; return a table {mac =, register =, pe_hop =, sram =, dram =, total_pj =}',
        on_zh .. ' 返回的是 ' .. type(got) .. '；应返回表 {mac =, register =, pe_hop =, sram =, dram =, total_pj =}')
    end
    local dram_words = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes
    local sram_array = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes
    for _, k in ipairs({ 'mac', 'register', 'pe_hop', 'dram', 'sram' }) do -- DRAM first: the SRAM count holds its words
      local g = lesson.number(got[k])
      if got[k] == nil then
        return false, say(string.format('%s: the table has no %s; return {mac =, register =, pe_hop =, sram =, dram =, total_pj =}, picojoules each', on, k),
          string.format('%s：表里没有 %s；应返回 {mac =, register =, pe_hop =, sram =, dram =, total_pj =}，每一项都是皮焦数', on_zh, k))
      end
      if not close(g, want[k]) then
        local why
        local def = D().energy_table
        if g and tbl ~= def and close(g, want.counts[k] * def[k]) then
          why = say('that uses dlp.energy_table; use tbl, the table passed in (the check passes its own)', '这用的是 dlp.energy_table；应该用传进来的 tbl（检查会传入它自己的表）')
        elseif k == 'register' and g and close(g, r.macs * tbl.register) then
          why = say('each MAC touches its registers 3 times: two operands read, the accumulator updated', '每次乘加访问寄存器 3 次：读两个操作数，更新累加器')
        elseif k == 'pe_hop' and g and close(g, r.macs * tbl.pe_hop) then
          why = say('each MAC takes one operand from a neighbour and passes one on: 2 hops per MAC', '每次乘加从邻居接过一个操作数，并把一个传下去：每次乘加 2 跳')
        elseif k == 'sram' and g and close(g, sram_array * tbl.sram) then
          why = say(string.format('that is the array\'s reads and writes (%d); every word the DMA moves is written into (or read out of) a scratchpad too: + %d DRAM words', sram_array, dram_words),
            string.format('这是阵列的读写（%d 次）；DMA 搬运的每个字也要写入（或读出）便笺存储器一次：再加 %d 个 DRAM 字', sram_array, dram_words))
        elseif k == 'sram' and g and close(g, (r.ifmap_sram_reads + r.filter_sram_reads) * tbl.sram) then
          why = say('reads only: the ofmap writes (r.ofmap_sram_writes) and the DMA\'s words are SRAM accesses too', '只算了读：ofmap 的写（r.ofmap_sram_writes）和 DMA 搬运的字也都是 SRAM 访问')
        elseif k == 'dram' and g and close(g, (r.ifmap_dram_reads + r.filter_dram_reads) * tbl.dram) then
          why = say('reads only: the outputs go back to DRAM too (r.ofmap_dram_writes)', '只算了读：输出也要写回 DRAM（r.ofmap_dram_writes）')
        else
          why = say(string.format('%s: %d accesses x tbl.%s (%s pJ)', k, want.counts[k], k, show(tbl[k])),
            string.format('%s：%d 次访问 x tbl.%s（%s pJ）', k, want.counts[k], k, show(tbl[k])))
        end
        return false, say(string.format('%s: %s is %s pJ, r:energy(tbl) gives %s: %s', on, k, tostring(got[k]), show(want[k]), why.en),
          string.format('%s：%s 得 %s pJ，r:energy(tbl) 是 %s：%s', on_zh, k, tostring(got[k]), show(want[k]), why.zh))
      end
    end
    if not close(lesson.number(got.total_pj), want.total_pj) then
      return false, say(string.format('%s: every level is right, but total_pj is %s, their sum %s', on, tostring(got.total_pj), show(want.total_pj)),
        string.format('%s：每一级都对，但 total_pj 是 %s，它们的和是 %s', on_zh, tostring(got.total_pj), show(want.total_pj)))
    end
  end
  return true, say('right: level by level, as r:energy() counts, on four layers and four energy tables',
    '对：在四个层、四张能耗表上，每一级都与 r:energy() 一致')
end

-- ---------------------------------------------------------------- the scenes

-- What a step's code left in the environment, drawn by the dlp scenes (viz.show: an array and its
-- layer for systolic, reports for dma and energy); the scene's demonstration when the student
-- removed it.
local function is(x, what) return type(x) == 'table' and getmetatable(x) == D()[what] end

local function systolic_scene(array_field, layer_field)
  return function(env)
    local a, L = env[array_field], env[layer_field]
    if is(a, 'Array') and is(L, 'Layer') and a.rows <= 32 and a.cols <= 32 then return a, L end
    return 'systolic'
  end
end

local function dma_scene(env)
  local runs = env.dma_runs
  if type(runs) == 'table' and #runs > 0 and #runs <= 3 then
    for _, r in ipairs(runs) do
      if not is(r, 'Report') or type(rawget(r, 'events')) ~= 'table' then return 'dma' end
    end
    return 'dma', runs
  end
  return 'dma'
end

local function energy_scene(env)
  if is(env.report, 'Report') then return 'energy', env.report end
  return 'energy'
end

-- ---------------------------------------------------------------- the steps' code

local INTRO_CODE = [==[
dlp = require 'lumen.dlp'
layer = dlp.conv{name = 'conv', h = 12, w = 12, fh = 3, fw = 3, c = 8, k = 16}
local d = layer:dims()
print(layer)
print(string.format('as a matrix product (im2col): M = %d output pixels (%dx%d), N = %d filters,',
  d.M, d.ofmap_h, d.ofmap_w, d.N))
print(string.format('  K = %d = %dx%dx%d, the window each output sums over', d.K, layer.filter_h, layer.filter_w, layer.channels))
print(string.format('multiply-accumulates: M x N x K = %d', layer:macs()))
]==]

local STAGES_CODE = [==[
gemm = dlp.gemm{name = 'gemm', m = 32, n = 32, k = 32}
stages = dlp.stages(gemm)             -- four machines, one GEMM (docs/dlp.md: the models)
print(string.format('%-46s %8s %9s %11s %10s', 'machine', 'cycles', 'speed-up', 'DRAM words', 'energy nJ'))
for i, s in ipairs(stages) do
  local up = i == 1 and '' or string.format('x%.1f', stages[i - 1].cycles / s.cycles)
  print(string.format('%-46s %8d %9s %11d %10.1f', s.name, s.cycles, up, s.dram_words, s.energy_pj / 1000))
end
local first, last = stages[1], stages[#stages]
print(string.format('from first to last: cycles / %.0f, energy / %.2f', first.cycles / last.cycles, first.energy_pj / last.energy_pj))
]==]

local UNITS_CODE = [==[
fc = dlp.gemm{name = 'fc', m = 64, n = 32, k = 48}    -- 64 input vectors of 48, 32 outputs each
local mvu = dlp.mvu{rows = 16, cols = 16}:run(fc)
local nfu = dlp.nfu{tn = 16}:run(fc)
local sys = dlp.array{rows = 16, cols = 16, dataflow = 'ws', bandwidth = 1 << 16}:run(fc)
print('256 multipliers each; M = 64, N = 32, K = 48: ' .. fc:macs() .. ' MACs')
print(string.format('%-34s %7s %12s %14s', 'unit', 'cycles', 'utilization', 'MACs per weight read'))
print(string.format('%-34s %7d %11.0f%% %14.1f', mvu.unit, mvu.cycles, 100 * mvu.utilization, mvu.reuse.weights))
print(string.format('%-34s %7d %11.0f%% %14.1f', nfu.unit, nfu.cycles, 100 * nfu.utilization, nfu.reuse.sb))
local cycles = sys.row_folds * sys.col_folds * sys.fold_cycles       -- folds x fold cycles (step 6)
print(string.format('%-34s %7d %11.0f%% %14.1f', 'systolic array 16x16, WS', cycles,
  100 * fc:macs() / (cycles * 256), fc:macs() / sys.filter_sram_reads))

-- Your turn: DianNao's NFU takes one Tn x Tn block of weights a cycle.
function nfu_cycles(tn, M, N, K)
  return M * N * K // (tn * tn)        -- every multiplier busy every cycle?
end
print('nfu_cycles(16, 64, 32, 48) = ' .. nfu_cycles(16, 64, 32, 48) .. ', the NFU model: ' .. nfu.cycles)
]==]

local DATAFLOW_CODE = [==[
small = dlp.conv{name = 'small', h = 6, w = 6, fh = 3, fw = 3, c = 2, k = 6}  -- M = 16, N = 6, K = 18
print(small, '  M, N, K =', small:dims().M, small:dims().N, small:dims().K)
local row = '%-8s  %-16s %8s %8s %10s %6s %12s'
print(string.format(row, 'dataflow', 'stays in the PEs', 'rows Sr', 'cols Sc', 'streams T', 'folds', 'fold cycles'))
for _, df in ipairs{'os', 'ws', 'is'} do
  local a = dlp.array{rows = 4, cols = 4, dataflow = df, bandwidth = 1 << 16}
  local r = a:run(small)
  local stays = ({os = 'outputs', ws = 'weights', is = 'inputs'})[df]
  print(string.format(row, df:upper(), stays, r.Sr, r.Sc, r.T, r.row_folds .. 'x' .. r.col_folds, r.fold_cycles))
end
-- cycle 5 of the first WS fold: which PEs multiply (*), hold a weight but wait (.), or are unused
array = dlp.array{rows = 4, cols = 4, dataflow = 'ws', bandwidth = 1 << 16}
for _, row in ipairs(array:pe_state(small, 1, 1, 5)) do
  local s = {}
  for c, pe in ipairs(row) do s[c] = pe.mac and '*' or pe.k and '.' or ' ' end
  print('  ' .. table.concat(s, ' '))
end
report = array:run(small)
]==]

local FOLD_CODE = [==[
a = dlp.array{rows = 4, cols = 8, dataflow = 'ws'}
L = dlp.gemm{name = 'g', m = 10, n = 8, k = 4}
-- The given fold_cycles knows OS only. Complete it for WS and IS.
function fold_cycles(a, L)
  local d = L:dims()
  local R, C = a.rows, a.cols
  local T = d.K                        -- OS streams the window K
  return T + R + C - 2
end
print('fold_cycles(a, L) = ' .. fold_cycles(a, L) .. ', the simulator: ' .. a:fold_cycles(L))
-- the PEs of that fold, cycle by cycle: when does the last one multiply?
for t = 0, a:fold_cycles(L) - 1 do
  local busy = 0
  for _, row in ipairs(a:pe_state(L, 1, 1, t)) do for _, pe in ipairs(row) do if pe.mac then busy = busy + 1 end end end
  io.write(busy > 0 and string.format('%d:%d ', t, busy) or '.')
end
print()
report = a:run(L)
]==]

local LAYER_CODE = [==[
a = dlp.array{rows = 4, cols = 8, dataflow = 'os', bandwidth = 1 << 16}
L = dlp.conv{name = 'conv', h = 8, w = 8, fh = 3, fw = 3, c = 3, k = 10}  -- M = 36, N = 10, K = 27
-- The given layer_cycles counts one fold. A layer is many.
function layer_cycles(a, L)
  return a:fold_cycles(L)
end
report = a:run(L)
print(string.format('Sr = %d on %d rows, Sc = %d on %d columns: %d x %d folds of %d cycles',
  report.Sr, a.rows, report.Sc, a.cols, report.row_folds, report.col_folds, report.fold_cycles))
print('layer_cycles(a, L) = ' .. layer_cycles(a, L))
print('the simulator: r.compute_cycles = ' .. report.compute_cycles .. ', r.stall_cycles = ' .. report.stall_cycles)
]==]

local DMA_CODE = [==[
a = dlp.array{rows = 8, cols = 8, dataflow = 'ws', ifmap_sram_kb = 1, filter_sram_kb = 1, ofmap_sram_kb = 1}
print(layer, 'on', a)
print('words/cycle  compute  stalled    total   DRAM words (ifmap/filter/ofmap)')
for _, bw in ipairs{16, 8, 4, 2, 1} do
  local r = a:with{bandwidth = bw}:run(layer)
  print(string.format('%11d %8d %8d %8d   %d/%d/%d', bw, r.compute_cycles, r.stall_cycles, r.total_cycles,
    r.ifmap_dram_reads, r.filter_dram_reads, r.ofmap_dram_writes))
end
dma_runs = {}                          -- the picture: 8 and 2 words a cycle, with their DMA events
for i, bw in ipairs{8, 2} do dma_runs[i] = a:with{bandwidth = bw}:run(layer, {events = 4096}) end
print('at 2 words a cycle, the first transfers and stalls:')
for i = 1, 8 do
  local e = dma_runs[2].events[i]
  if e.kind == 'stall' then print(string.format('  stall     at %6d for %d cycles (%s)', e.start, e.cycles, e.operand))
  elseif e.kind == 'fold' then print(string.format('  fold %-4d %6d .. %d', e.fold, e.start, e.stop))
  else print(string.format('  %-9s %6d .. %-6d %d words', e.kind, e.start, e.stop, e.words)) end
end
]==]

local ENERGY_CODE = [==[
a = dlp.array{rows = 8, cols = 8, dataflow = 'ws'}
report = a:run(layer)
local e = report:energy()
print(report)
print(string.format('%-9s %12s %7s', 'level', 'pJ', 'share'))
for _, k in ipairs{'mac', 'register', 'pe_hop', 'sram', 'dram'} do
  print(string.format('%-9s %12.1f %6.1f%%', k, e[k], 100 * e[k] / e.total_pj))
end
print(string.format('%-9s %12.1f   (%s)', 'total', e.total_pj, e.source))
-- Your turn: the same, from the report's counts and a table of pJ per access.
function energy(r, tbl)
  local e = {mac = r.macs * tbl.mac}
  e.total_pj = e.mac
  return e
end
]==]

return {
  title = say('The deep-learning processor, one change at a time', '深度学习处理器：一步一步改出来'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 6: the deep-learning processor',
    '智能计算系统 第 6 章：深度学习处理器原理'),
  summary = say([[From a general core to a DLP — no branch predictor, scratchpads, DMA, a matrix
unit — each change measured; the matrix units side by side; the systolic array's dataflows, the
cycles of a fold and of a layer computed and checked against the simulator; scratchpads, DMA and
stalls; where the energy goes.]],
    [[从通用处理器核到 DLP——去掉分支预测器、便笺存储器、DMA、矩阵运算单元——每一步都量一量；
几种矩阵运算单元的比较；脉动阵列的数据流，一折和一层的周期数，由你计算、由模拟器检验；便笺
存储器、DMA 与停顿；能耗花在哪里。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('Why a deep-learning processor', '为什么要深度学习处理器'),
      text = say([[
The processor of an intelligent computing system can be a CPU, a GPU, an FPGA — or a processor
made for deep learning, a DLP. The notes' timeline: DianNao (2014), the first deep-learning
processor architecture; DaDianNao, the first multi-core one; the first DLP chip and the first
deep-learning instruction set (2016, Cambricon); Google's first TPU (2016); tensor cores in
Nvidia's V100 (2017); Cambricon's MLU100 (2018) and MLU270 (2019, four times faster).

What makes a DLP possible is what deep learning asks of a machine:

- compute: matrix and convolution operations above all, with scalar and vector operations beside them;
- control: counted loops above all, with conditional branches beside them;
- storage: scratchpad memories above all, with registers beside them;
- scale: grown fractally — the same structure repeated at every level (chapter 7).

This lesson builds a DLP from a general core one change at a time, and measures every change on
lumen.dlp, a simulator that counts a systolic array cycle by cycle as SCALE-Sim does
(`require 'lumen.dlp'`; docs/dlp.md). Its unit of work is a layer seen as a matrix product: a
convolution is the product of its im2col matrices (dlsys lecture 10), with M output pixels, N
filters and a window of K = fh x fw x c. The code makes a small convolution and prints that view.]],
        [[
智能计算系统中处理智能任务的处理器可以是 CPU、GPU、FPGA，也可以是专用的深度学习处理器
（DLP）。笔记中的发展历程：DianNao（2014），国际首个深度学习处理器架构；DaDianNao，国际首个
多核深度学习处理器架构；国际首个深度学习处理器芯片和首个深度学习指令集（2016，寒武纪）；
Google 公布第一代 TPU（2016）；Nvidia 在 V100 中加入张量核（2017）；寒武纪 MLU100（2018）和
MLU270（2019，性能提升 4 倍）。

DLP 之所以可行，是因为深度学习对机器的要求很有特点：

- 计算：以矩阵、卷积运算为主，辅以标量、向量运算；
- 控制：以计数循环为主，辅以条件分支指令；
- 存储：以便笺存储器为主，辅以寄存器；
- 规模：采用分形方式进行扩展——每一层重复同样的结构（第 7 章）。

本课从一个通用处理器核出发，一次改一处，把它改成 DLP，每一处改动都在 lumen.dlp 上量一量。
lumen.dlp 是一个按 SCALE-Sim 的方式逐周期计数的脉动阵列模拟器（`require 'lumen.dlp'`；见
docs/dlp.md）。它处理的单位是一层，看成一次矩阵乘：卷积就是它的 im2col 矩阵之积（dlsys 第 10
讲），M 个输出像素、N 个滤波器、窗口 K = fh x fw x c。代码建一个小卷积层，打印这种看法。]]),
      code = INTRO_CODE,
      expect = [[
conv: conv 12x12x8, 16 filters 3x3, stride 1
as a matrix product (im2col): M = 100 output pixels (10x10), N = 16 filters,
  K = 72 = 3x3x8, the window each output sums over
multiply-accumulates: M x N x K = 115200]],
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('From a general core to a DLP', '从通用处理器核到 DLP'),
      text = say([[
The notes' DLP starts from a simplified general-purpose core and changes it five times:

- the branch predictor is left out: a DLP's loops are counted, so the hardware knows how many times each runs (here the plain core pays bubbles for every taken branch, and the later machines run counted loops with no branch at all);
- the data cache is replaced by a scratchpad memory: software decides what is in it, so there are no tags, no misses that come by surprise — the program moves whole tiles in and out;
- a DMA engine is added to move data between the scratchpad and main memory while the core computes (double-buffered: one tile computed while the next comes in);
- a matrix unit is added — here a 16 x 16 systolic array —
- with a control unit for its matrix instructions: one instruction starts a whole tile's work.

The code measures each machine on one 32 x 32 x 32 GEMM with dlp.stages: the first three are
models of a scalar core (access by access for the cache), the last is the systolic-array
simulator. Read the columns one change at a time: which one moves, and by how much? The speed-up
comes mostly from the last change. The DMA hardly helps the scalar core, which spends three cycles
on every MAC (two loads and the MAC itself), so its loads were few already; it matters once a
matrix unit computes fast (step 7). The matrix unit even moves more DRAM words: it writes each
output once per row fold (the partial sums of K = 32 on 16 rows, step 6). And the energy barely
moves at all — step 8 says why.]],
        [[
笔记中的 DLP 以精简的通用处理器结构为基础，改了五处：

- 省去了分支预测器：DLP 的循环是计数循环，硬件知道每个循环要跑多少次（这里的简单核每遇到一次跳转都要付出气泡，后面的机器用计数循环，根本没有分支）；
- 数据缓存被便笺存储器取代：里面放什么由软件决定，所以没有标签，也没有意料之外的缺失——程序把整块数据搬进搬出；
- 添加直接访存模块（DMA），负责便笺存储器与主存之间的数据搬运，同时核在计算（双缓冲：算一块的同时搬下一块）；
- 添加矩阵运算单元——这里是 16 x 16 的脉动阵列——
- 以及矩阵指令的控制单元：一条指令启动一整块的计算。

代码用 dlp.stages 在一个 32 x 32 x 32 的 GEMM 上测量每一台机器：前三台是标量核的模型（缓存
那一台逐次访问地模拟），最后一台是脉动阵列模拟器。一次看一处改动：哪一列变了，变了多少？加速
几乎全来自最后一步。DMA 对标量核几乎没有帮助：它每次乘加要花三个周期（两次取数和乘加本身），
取数本来就只占一小部分；等矩阵运算单元算得快了，DMA 才要紧（第 7 步）。矩阵运算单元搬的 DRAM
字甚至更多：每个行折都要把每个输出写一次（K = 32 在 16 行上的部分和，第 6 步）。而能耗几乎没动
——第 8 步会说明原因。]]),
      code = STAGES_CODE,
      expect = [==[
machine                                          cycles  speed-up  DRAM words  energy nJ
general core + data cache                        236736                  3072      277.0
+ scratchpad instead of cache, counted loops      98712      x2.4        3072      266.1
+ DMA, double-buffered                            98559      x1.0        3072      266.1
+ matrix unit (16x16 systolic array, ws)            311    x316.9        4108      262.0
from first to last: cycles / 761, energy / 1.06]==],
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Matrix units', '矩阵运算单元'),
      text = say([[
The matrix unit can be designed as a matrix-vector unit, a matrix-matrix unit, or a systolic
array. The notes weigh them:

- a matrix-vector unit suits inference: one input vector at a time (a batch of one), every weight used once per vector;
- a matrix-matrix unit suits high-performance training: large batches, each weight reused by many inputs;
- a systolic array brings several advantages as the design grows: each PE talks only to its neighbours (short wires, a regular layout), and every operand read from the scratchpad is passed along a whole row or column of PEs.

DianNao's neural functional unit (NFU) is a matrix-vector unit in three pipeline stages: NFU-1,
Tn x Tn multipliers (Tn = 16); NFU-2, Tn adder trees that sum each row of Tn products; NFU-3, the
activation. Each cycle it takes Tn inputs of one vector from NBin and a Tn x Tn block of weights
from SB, and adds Tn partial sums in NBout. A vector of K inputs to N outputs takes
ceil(N / Tn) x ceil(K / Tn) cycles; the layer has M vectors; and the first result leaves NFU-3 two
cycles after its block entered NFU-1.

The code runs one layer on the three units, 256 multipliers each: the cycles, the utilization, and
how many MACs each weight read from the scratchpad feeds. The systolic array reuses each weight
over the whole fold but pays to fill and drain every fold (steps 5-6): on this small layer it is
the slowest.]],
        [[
矩阵运算单元可设计为矩阵乘向量单元、矩阵乘法单元、脉动阵列机等。笔记的比较：

- 矩阵乘向量单元适用于深度学习模型的推理场景：一次一个输入向量（批大小为 1），每个权值对每个向量只用一次；
- 矩阵乘法单元适用于高性能的深度学习训练场景：批很大，每个权值被许多输入重复使用；
- 脉动阵列机在设计规模更大时能够带来多种优势：每个 PE 只和邻居通信（连线短、布局规整），从便笺存储器读出的每个操作数都沿着一整行或一整列 PE 传下去。

DianNao 的神经功能单元（NFU）是一个三级流水的矩阵乘向量单元：NFU-1 是 Tn x Tn 个乘法器
（Tn = 16）；NFU-2 是 Tn 棵加法树，把每行 Tn 个乘积加起来；NFU-3 做激活函数。每个周期它从
NBin 取一个向量的 Tn 个输入，从 SB 取一个 Tn x Tn 的权值块，在 NBout 中累加 Tn 个部分和。
K 个输入到 N 个输出的一个向量要 ceil(N / Tn) x ceil(K / Tn) 个周期；这一层有 M 个向量；第一个
结果在它的块进入 NFU-1 两个周期后离开 NFU-3。

代码在三种单元（各 256 个乘法器）上运行同一层：周期数、利用率，以及从便笺存储器读出的每个
权值能支撑多少次乘加。脉动阵列在整整一折里重复使用每个权值，但每一折都要付出填充和排空的
代价（第 5、6 步）：在这个小层上它最慢。]]),
      code = UNITS_CODE,
      expect = [==[
256 multipliers each; M = 64, N = 32, K = 48: 98304 MACs
unit                                cycles  utilization MACs per weight read
matrix-vector unit 16x16               385         100%            1.0
DianNao NFU, Tn = 16                   386          99%            1.0
systolic array 16x16, WS               660          58%           64.0
nfu_cycles(16, 64, 32, 48) = 384, the NFU model: 386]==],
      exercise = {
        prompt = say([[
Correct `nfu_cycles(tn, M, N, K)`: the cycles DianNao's NFU (Tn x Tn multipliers, a 3-stage
pipeline) takes for M vectors of K inputs to N outputs. The check compares it with
dlp.nfu{tn = tn}:run(dlp.gemm{m = M, n = N, k = K}).cycles on shapes where N and K are not
multiples of Tn, and Tn from 2 to 16.]],
          [[
改正 `nfu_cycles(tn, M, N, K)`：DianNao 的 NFU（Tn x Tn 个乘法器，3 级流水线）处理 M 个向量
（每个 K 个输入、N 个输出）所需的周期数。检查把它与 dlp.nfu{tn = tn}:run(dlp.gemm{m = M, n = N,
k = K}).cycles 比较，形状中 N 和 K 不是 Tn 的倍数，Tn 从 2 到 16。]]),
        hints = {
          say('One block of Tn x Tn weights a cycle: a vector needs ceil(N / Tn) blocks of outputs times ceil(K / Tn) blocks of inputs. In Lua, ceil(a / b) for integers is (a + b - 1) // b.',
            '每周期一个 Tn x Tn 的权值块：一个向量需要 ceil(N / Tn) 个输出块乘以 ceil(K / Tn) 个输入块。Lua 中整数的 ceil(a / b) 可写成 (a + b - 1) // b。'),
          say('M vectors of those, then + 2: the last block still goes through NFU-2 and NFU-3.', '共 M 个向量，最后再加 2：最后一块还要经过 NFU-2 和 NFU-3。'),
        },
        check = check_nfu,
        solution = [[
function nfu_cycles(tn, M, N, K)
  local blocks = ((N + tn - 1) // tn) * ((K + tn - 1) // tn)
  return M * blocks + 2
end
]],
        wrong = {
          [[
function nfu_cycles(tn, M, N, K)   -- no pipeline fill
  return M * ((N + tn - 1) // tn) * ((K + tn - 1) // tn)
end
]],
          [[
function nfu_cycles(tn, M, N, K)   -- rounded once, over all the MACs
  return (M * N * K + tn * tn - 1) // (tn * tn) + 2
end
]],
          [[
function nfu_cycles(tn, M, N, K)   -- the pipeline's depth added whole
  return M * ((N + tn - 1) // tn) * ((K + tn - 1) // tn) + 3
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('The systolic array and its dataflows', '脉动阵列与数据流'),
      text = say([[
A systolic array is R x C processing elements (PEs), each a multiplier and an adder, each passing
what it received to its right or lower neighbour one cycle later. One of the three operands of a
layer stays in the PEs while the other two flow by; the dataflow says which (SCALE-Sim's names):

  dataflow                stays            rows Sr   columns Sc   streams T
  OS, output stationary   the outputs      M         N            K
  WS, weight stationary   the weights      K         N            M
  IS, input stationary    the inputs       K         M            N

The stationary operand is an Sr x Sc grid; the array holds an R x C block of it at a time, a fold,
and streams T through it; then the next fold: ceil(Sr / R) x ceil(Sc / C) folds in all.

The code prints this for a small layer on a 4 x 4 array, and which PEs multiply at cycle 5 of the
first WS fold (* multiplies, . holds a weight and waits): the wave of work enters at the top-left
corner and spreads one PE a cycle. The picture is the systolic scene of that run.]],
        [[
脉动阵列由 R x C 个处理单元（PE）组成，每个 PE 有一个乘法器和一个加法器，把收到的数据在一个
周期后传给右边或下边的邻居。一层的三个操作数中，有一个留在 PE 里不动，另外两个流过；数据流
说的就是哪一个不动（用 SCALE-Sim 的名字）：

  数据流                  不动的           行 Sr     列 Sc        流过 T
  OS，输出驻留            输出             M         N            K
  WS，权值驻留            权值             K         N            M
  IS，输入驻留            输入             K         M            N

驻留的操作数是一张 Sr x Sc 的网格；阵列一次放它的一块 R x C，称为一折（fold），让 T 流过它；
然后换下一折：一共 ceil(Sr / R) x ceil(Sc / C) 折。

代码为一个小层在 4 x 4 阵列上打印这些，并打印第一个 WS 折的第 5 个周期哪些 PE 在乘（* 在乘，
. 放着权值在等）：计算的波从左上角进入，每个周期向外扩展一个 PE。画面是这次运行的 systolic
场景。]]),
      code = DATAFLOW_CODE,
      scene = systolic_scene('array', 'small'),
      expect = [[
small: conv 6x6x2, 6 filters 3x3, stride 1	  M, N, K =	16	6	18
dataflow  stays in the PEs  rows Sr  cols Sc  streams T  folds  fold cycles
OS        outputs                16        6         18    4x2           24
WS        weights                18        6         16    5x2           26
IS        inputs                 18       16          6    5x4           16
  * * . .
  * . . .
  . . . .
  . . . .]],
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('One fold, cycle by cycle', '一折，一个周期一个周期地看'),
      text = say([[
Count the cycles of one fold from when its operands meet.

OS: PE (i, j) keeps output (pixel i, filter j). Row i of the inputs enters the left edge skewed by
i cycles, column j of the filters enters the top skewed by j: their k-th elements meet at PE (i, j)
at cycle k + i + j. The last PE, (R - 1, C - 1), does its last MAC (k = T - 1) at cycle
T - 1 + R - 1 + C - 1. Cycles are numbered from 0, so the fold has T + R + C - 2 of them.

WS: first the weights shift in from the top, one row a cycle: cycles 0 .. R - 1. Then the inputs
stream in, pixel p reaching PE (i, j) at cycle R + p + i + j; the last MAC is at
R + (T - 1) + (R - 1) + (C - 1): the fold has 2R + C + T - 2 cycles. IS is the same with the
inputs preloaded and the filters streaming (T = N).

The code runs a fold on a 4 x 8 WS array and prints, for each cycle, how many PEs multiply
(cycle:count; a dot where none does): the preload, the wave's rise, its plateau, its fall. Those
are the cycles a:fold_cycles(L) gives. The given fold_cycles knows OS only.]],
        [[
从操作数相遇的时刻开始数一折的周期。

OS：PE (i, j) 保存输出（像素 i，滤波器 j）。输入的第 i 行从左边进入，倾斜 i 个周期；滤波器的
第 j 列从上边进入，倾斜 j 个周期：它们的第 k 个元素在第 k + i + j 个周期于 PE (i, j) 相遇。
最后一个 PE (R - 1, C - 1) 的最后一次乘加（k = T - 1）在第 T - 1 + R - 1 + C - 1 个周期。周期
从 0 开始编号，所以一折有 T + R + C - 2 个周期。

WS：先把权值从上边移入，每周期一行：第 0 .. R - 1 个周期。然后输入流进来，像素 p 在第
R + p + i + j 个周期到达 PE (i, j)；最后一次乘加在 R + (T - 1) + (R - 1) + (C - 1)：一折有
2R + C + T - 2 个周期。IS 完全一样，只是预载的是输入，流过的是滤波器（T = N）。

代码在一个 4 x 8 的 WS 阵列上运行一折，逐周期打印有多少个 PE 在乘（周期:个数；没有 PE 在乘时
打一个点）：预载、波的上升、平台、下降。这正是 a:fold_cycles(L) 给出的周期数。给出的
fold_cycles 只认识 OS。]]),
      code = FOLD_CODE,
      expect = [==[
fold_cycles(a, L) = 14, the simulator: 24
....4:1 5:3 6:6 7:10 8:14 9:18 10:22 11:26 12:29 13:31 14:31 15:29 16:26 17:22 18:18 19:14 20:10 21:6 22:3 23:1]==],
      scene = systolic_scene('a', 'L'),
      exercise = {
        prompt = say([[
Complete `fold_cycles(a, L)`: the cycles of one fold of layer L on array a (a.rows, a.cols,
a.dataflow: 'os', 'ws' or 'is'; L:dims() gives M, N, K), without stalls. The check calls it on
random arrays (most of them not square) and layers in the three dataflows, against
a:fold_cycles(L).]],
          [[
补全 `fold_cycles(a, L)`：层 L 在阵列 a 上一折的周期数（a.rows、a.cols、a.dataflow：'os'、'ws'
或 'is'；L:dims() 给出 M、N、K），不计停顿。检查在随机的阵列（多数不是方的）和层上、三种数据流
下调用它，与 a:fold_cycles(L) 比较。]]),
        hints = {
          say('T depends on the dataflow: d.K for OS, d.M for WS, d.N for IS.', 'T 取决于数据流：OS 是 d.K，WS 是 d.M，IS 是 d.N。'),
          say('OS: T + R + C - 2. WS and IS add the R cycles of the preload: 2 * R + C + T - 2.', 'OS：T + R + C - 2。WS 和 IS 再加上预载的 R 个周期：2 * R + C + T - 2。'),
        },
        check = check_fold,
        solution = [[
function fold_cycles(a, L)
  local d = L:dims()
  local R, C = a.rows, a.cols
  if a.dataflow == 'os' then return d.K + R + C - 2 end
  local T = a.dataflow == 'ws' and d.M or d.N
  return 2 * R + C + T - 2
end
]],
        wrong = {
          [[
function fold_cycles(a, L)   -- the last cycle's number + 1, once too often
  local d = L:dims()
  local R, C = a.rows, a.cols
  if a.dataflow == 'os' then return d.K + R + C - 1 end
  local T = a.dataflow == 'ws' and d.M or d.N
  return 2 * R + C + T - 1
end
]],
          [[
function fold_cycles(a, L)   -- no preload in WS and IS
  local d = L:dims()
  local R, C = a.rows, a.cols
  local T = a.dataflow == 'os' and d.K or a.dataflow == 'ws' and d.M or d.N
  return T + R + C - 2
end
]],
          [[
function fold_cycles(a, L)   -- R and C swapped
  local d = L:dims()
  local R, C = a.cols, a.rows
  if a.dataflow == 'os' then return d.K + R + C - 2 end
  local T = a.dataflow == 'ws' and d.M or d.N
  return 2 * R + C + T - 2
end
]],
          [[
function fold_cycles(a, L)   -- WS streams the filters
  local d = L:dims()
  local R, C = a.rows, a.cols
  if a.dataflow == 'os' then return d.K + R + C - 2 end
  local T = a.dataflow == 'ws' and d.N or d.M
  return 2 * R + C + T - 2
end
]],
        },
      },
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('A whole layer: folds', '一整层：折'),
      text = say([[
A layer whose Sr x Sc grid is larger than the array runs fold after fold: ceil(Sr / R) row folds
times ceil(Sc / C) column folds, each taking the cycles of step 5 (the last fold of a row or a
column is partly empty, and takes as long as a full one). When the DRAM never makes the array wait
(no stalls), the layer's compute cycles are

  folds x fold cycles = ceil(Sr / R) x ceil(Sc / C) x fold cycles.

The simulator reports them as r.compute_cycles (its r.total_cycles less r.stall_cycles), in
SCALE-Sim's way: the number of the last cycle, counted from 0 — one less than the count. The code
shows both for a 4 x 8 OS array; the given layer_cycles counts one fold.]],
        [[
Sr x Sc 的网格比阵列大时，一层就要一折接一折地算：ceil(Sr / R) 个行折乘以 ceil(Sc / C) 个列折，
每折都是第 5 步的周期数（一行或一列的最后一折只填了一部分，花的时间和满的一样）。当 DRAM 从不
让阵列等待（没有停顿）时，这一层的计算周期数是

  折数 x 每折周期 = ceil(Sr / R) x ceil(Sc / C) x 每折周期。

模拟器把它报告为 r.compute_cycles（即 r.total_cycles 减去 r.stall_cycles），用的是 SCALE-Sim
的方式：最后一个周期的编号，从 0 数起——比个数少一。代码在一个 4 x 8 的 OS 阵列上把两者都
打出来；给出的 layer_cycles 只算了一折。]]),
      code = LAYER_CODE,
      expect = [==[
Sr = 36 on 4 rows, Sc = 10 on 8 columns: 9 x 2 folds of 37 cycles
layer_cycles(a, L) = 37
the simulator: r.compute_cycles = 665, r.stall_cycles = 0]==],
      scene = systolic_scene('a', 'L'),
      exercise = {
        prompt = say([[
Correct `layer_cycles(a, L)`: the cycles layer L takes on array a without stalls, folds x fold
cycles (you may call a:fold_cycles(L), or your fold_cycles). The check compares it with the
simulator's folds and fold cycles on random arrays and layers in the three dataflows.]],
          [[
改正 `layer_cycles(a, L)`：层 L 在阵列 a 上不计停顿的周期数，折数 x 每折周期（可以调用
a:fold_cycles(L)，或你自己的 fold_cycles）。检查在随机的阵列和层上、三种数据流下，把它与
模拟器的折数和每折周期比较。]]),
        hints = {
          say('Sr and Sc by dataflow: OS M, N; WS K, N; IS K, M (L:dims()).', '按数据流取 Sr 和 Sc：OS 是 M、N；WS 是 K、N；IS 是 K、M（L:dims()）。'),
          say('Row folds: (Sr + a.rows - 1) // a.rows; column folds: (Sc + a.cols - 1) // a.cols; multiply both by a:fold_cycles(L).',
            '行折数：(Sr + a.rows - 1) // a.rows；列折数：(Sc + a.cols - 1) // a.cols；两者相乘，再乘以 a:fold_cycles(L)。'),
        },
        check = check_layer,
        solution = [[
function layer_cycles(a, L)
  local d = L:dims()
  local Sr, Sc = d.M, d.N
  if a.dataflow == 'ws' then Sr, Sc = d.K, d.N elseif a.dataflow == 'is' then Sr, Sc = d.K, d.M end
  local folds = ((Sr + a.rows - 1) // a.rows) * ((Sc + a.cols - 1) // a.cols)
  return folds * a:fold_cycles(L)
end
]],
        wrong = {
          [[
function layer_cycles(a, L)   -- R and C swapped in the folds
  local d = L:dims()
  local Sr, Sc = d.M, d.N
  if a.dataflow == 'ws' then Sr, Sc = d.K, d.N elseif a.dataflow == 'is' then Sr, Sc = d.K, d.M end
  local folds = ((Sr + a.cols - 1) // a.cols) * ((Sc + a.rows - 1) // a.rows)
  return folds * a:fold_cycles(L)
end
]],
          [[
function layer_cycles(a, L)   -- the folds rounded down
  local d = L:dims()
  local Sr, Sc = d.M, d.N
  if a.dataflow == 'ws' then Sr, Sc = d.K, d.N elseif a.dataflow == 'is' then Sr, Sc = d.K, d.M end
  local folds = math.max(1, Sr // a.rows) * math.max(1, Sc // a.cols)
  return folds * a:fold_cycles(L)
end
]],
          [[
function layer_cycles(a, L)   -- partial folds packed together
  local d = L:dims()
  local Sr, Sc = d.M, d.N
  if a.dataflow == 'ws' then Sr, Sc = d.K, d.N elseif a.dataflow == 'is' then Sr, Sc = d.K, d.M end
  local folds = (Sr * Sc + a.rows * a.cols - 1) // (a.rows * a.cols)
  return folds * a:fold_cycles(L)
end
]],
          [[
function layer_cycles(a, L)   -- the report's number of the last cycle
  return a:run(L).compute_cycles
end
]],
        },
      },
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('Scratchpads and the DMA', '便笺存储器与 DMA'),
      text = say([[
The array reads its operands from three scratchpads (ifmap, filter, ofmap), never from DRAM. Each
is double-buffered: the array reads the active half while the DMA fills the other half with what
comes next, and the halves swap. When a word the array needs is not in the active half yet, the
array stalls until the DMA has brought it; the ofmap scratchpad drains to DRAM and stalls the
array when it is full.

With scratchpads of 1 KiB each (too small to hold this layer), the code runs step 1's layer at
falling DRAM bandwidths (words per cycle, for each scratchpad's DMA channel): the compute cycles stay, the stalls grow, and below some
bandwidth the array spends most of its time waiting. The DRAM words hardly change: the same data
comes in, only later. Then it lists the first DMA transfers and stalls at 2 words a cycle (cycles
as SCALE-Sim counts them: the first fill happens before cycle 0). The picture is the dma scene of
the runs at 8 and 2 words a cycle: each one's transfers and stalls on one time line.]],
        [[
阵列从三个便笺存储器（ifmap、filter、ofmap）读操作数，从不直接读 DRAM。每个便笺存储器都是
双缓冲的：阵列读工作的那一半，DMA 同时把接下来要用的数据填进另一半，然后两半互换。阵列要的
字还不在工作的一半里时，阵列就停下来，等 DMA 把它搬来；ofmap 便笺存储器向 DRAM 排空，满了也
会让阵列停下。

代码让每个便笺存储器只有 1 KiB（放不下这一层），在不断降低的 DRAM 带宽（每个便笺存储器的 DMA
通道每周期的字数）下运行
第 1 步的层：计算周期不变，停顿越来越多，带宽低于某个值后阵列大部分时间都在等。DRAM 字数几乎
不变：进来的还是同样的数据，只是晚了。然后列出带宽为每周期 2 个字时最初的几次 DMA 传输和停顿
（周期按 SCALE-Sim 的算法：第一次填充发生在第 0 个周期之前）。画面是每周期 8 个字和 2 个字这两次
运行的 dma 场景：各自的传输和停顿画在同一条时间轴上。]]),
      code = DMA_CODE,
      expect = [==[
conv: conv 12x12x8, 16 filters 3x3, stride 1	on	dlp.array 8x8 ws, SRAM 1/1/1 KiB, 10 words/cycle (user)
words/cycle  compute  stalled    total   DRAM words (ifmap/filter/ofmap)
         16     2195        0     2195   21504/3584/14415
          8     2195      719     2914   21504/3584/14407
          4     2195     3164     5359   21504/3584/14411
          2     2195     8517    10712   21504/3584/14401
          1     2195    19269    21464   21504/3584/14400
at 2 words a cycle, the first transfers and stalls:
  fold 1         0 .. 121
  ifmap       -256 .. -1     512 words
  filter      -256 .. -1     512 words
  ifmap          1 .. 256    512 words
  stall     at     76 for 358 cycles (ifmap)
  drain        440 .. 695    512 words
  fold 2       480 .. 601
  ifmap        258 .. 513    512 words]==],
      scene = dma_scene,
    },
    -- 8 ------------------------------------------------------------------------------------
    {
      title = say('Where the energy goes', '能耗花在哪里'),
      text = say([[
Energy is counted as Accelergy does: how many times each level is accessed, times the energy of
one access (dlp.energy_table, picojoules for an 8-bit word at 45 nm: Eyeriss's relative costs —
a MAC 1x, a register 1x, a hop between PEs 2x, an on-chip buffer 6x, DRAM 200x — scaled by
Horowitz's 8-bit multiply-add). The counts, from a report r:

  mac        r.macs
  register   3 per MAC: two operands read, the accumulator updated
  pe_hop     2 per MAC: one operand taken from a neighbour, one passed on
  sram       the array's r.ifmap_sram_reads + r.filter_sram_reads
             + r.ofmap_sram_writes, and every DRAM word once more
             (the DMA writes it into a scratchpad, or reads it out)
  dram       r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes

r:energy() gives each level's picojoules and their sum. The code prints the shares for step 1's
layer on an 8 x 8 array: the multiplications are a sliver, moving data is the rest — most of it to
and from DRAM. That is why step 2's matrix unit made the GEMM hundreds of times faster and hardly
cheaper, and why the next lesson is about traffic. The picture is the energy scene of that run.]],
        [[
能耗按 Accelergy 的方式计算：每一级被访问的次数，乘以一次访问的能耗（dlp.energy_table，
45 nm 下一个 8 位字的皮焦数：Eyeriss 的相对代价——乘加 1x、寄存器 1x、PE 之间一跳 2x、片上
缓冲 6x、DRAM 200x——再按 Horowitz 的 8 位乘加能耗换算）。由报告 r 得到的次数：

  mac        r.macs
  register   每次乘加 3 次：读两个操作数，更新累加器
  pe_hop     每次乘加 2 跳：从邻居接过一个操作数，再传一个下去
  sram       阵列的读写 r.ifmap_sram_reads + r.filter_sram_reads
             + r.ofmap_sram_writes，再加每个 DRAM 字一次
             （DMA 把它写入便笺存储器，或从中读出）
  dram       r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes

r:energy() 给出每一级的皮焦数和总和。代码打印第 1 步的层在 8 x 8 阵列上各级所占的份额：乘法
只占一小片，其余都花在搬数据上——大部分是进出 DRAM。这就是第 2 步中矩阵运算单元让 GEMM 快了
几百倍、却几乎没有省电的原因，也是下一课讨论数据流量的原因。画面是这次运行的 energy 场景。]]),
      code = ENERGY_CODE,
      expect = [==[
conv on 8x8 ws (user): 2195 cycles (0 stalled), compute util 77.52%, DRAM 7200/1160/14400 words
level               pJ   share
mac            26496.0    2.0%
register       79488.0    6.0%
pe_hop        105984.0    8.0%
sram           72742.6    5.5%
dram         1046960.0   78.6%
total        1331670.6   (Eyeriss (ISCA 2016) relative costs x Horowitz (ISSCC 2014) 8-bit MAC at 45 nm)]==],
      scene = energy_scene,
      exercise = {
        prompt = say([[
Complete `energy(r, tbl)`: from report r and a table tbl of picojoules per access (fields mac,
register, pe_hop, sram, dram), return {mac =, register =, pe_hop =, sram =, dram =, total_pj =},
each level's picojoules and their sum. The check compares each level with r:energy(tbl) on
layers run on random arrays with small scratchpads, with random tables and with dlp.energy_table.]],
          [[
补全 `energy(r, tbl)`：由报告 r 和每次访问的皮焦数表 tbl（字段 mac、register、pe_hop、sram、
dram），返回 {mac =, register =, pe_hop =, sram =, dram =, total_pj =}：每一级的皮焦数及其总和。
检查在小便笺存储器的随机阵列上运行几个层，用随机的表和 dlp.energy_table，把每一级与
r:energy(tbl) 比较。]]),
        hints = {
          say('register = 3 * r.macs * tbl.register and pe_hop = 2 * r.macs * tbl.pe_hop.', 'register = 3 * r.macs * tbl.register，pe_hop = 2 * r.macs * tbl.pe_hop。'),
          say('Add up the DRAM words first (three fields); the SRAM count is the array\'s three counts plus those words.',
            '先把 DRAM 字数（三个字段）加起来；SRAM 的次数是阵列的三个计数再加上这些字。'),
        },
        check = check_energy,
        solution = [[
function energy(r, tbl)
  local dram = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes
  local sram = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes + dram
  local e = {
    mac = r.macs * tbl.mac,
    register = 3 * r.macs * tbl.register,
    pe_hop = 2 * r.macs * tbl.pe_hop,
    sram = sram * tbl.sram,
    dram = dram * tbl.dram,
  }
  e.total_pj = e.mac + e.register + e.pe_hop + e.sram + e.dram
  return e
end
]],
        wrong = {
          [[
function energy(r, tbl)   -- the DMA's words left out of the SRAM
  local dram = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes
  local sram = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes
  local e = {mac = r.macs * tbl.mac, register = 3 * r.macs * tbl.register, pe_hop = 2 * r.macs * tbl.pe_hop,
             sram = sram * tbl.sram, dram = dram * tbl.dram}
  e.total_pj = e.mac + e.register + e.pe_hop + e.sram + e.dram
  return e
end
]],
          [[
function energy(r, tbl)   -- one register access and one hop per MAC
  local dram = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes
  local sram = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes + dram
  local e = {mac = r.macs * tbl.mac, register = r.macs * tbl.register, pe_hop = r.macs * tbl.pe_hop,
             sram = sram * tbl.sram, dram = dram * tbl.dram}
  e.total_pj = e.mac + e.register + e.pe_hop + e.sram + e.dram
  return e
end
]],
          [[
function energy(r, tbl)   -- the outputs never written back
  local dram = r.ifmap_dram_reads + r.filter_dram_reads
  local sram = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes + dram
  local e = {mac = r.macs * tbl.mac, register = 3 * r.macs * tbl.register, pe_hop = 2 * r.macs * tbl.pe_hop,
             sram = sram * tbl.sram, dram = dram * tbl.dram}
  e.total_pj = e.mac + e.register + e.pe_hop + e.sram + e.dram
  return e
end
]],
          [[
function energy(r, tbl)   -- Lumen's table, whatever the caller passes
  tbl = dlp.energy_table
  local dram = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes
  local sram = r.ifmap_sram_reads + r.filter_sram_reads + r.ofmap_sram_writes + dram
  local e = {mac = r.macs * tbl.mac, register = 3 * r.macs * tbl.register, pe_hop = 2 * r.macs * tbl.pe_hop,
             sram = sram * tbl.sram, dram = dram * tbl.dram}
  e.total_pj = e.mac + e.register + e.pe_hop + e.sram + e.dram
  return e
end
]],
        },
      },
    },
  },
}
