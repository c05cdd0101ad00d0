--[[
dlp_design — the design side of lumen.dlp (AICS chapters 6–7): mappings a student writes (a loop
nest over a layer with tile sizes and a loop order, Timeloop's idea in plain Lua) evaluated for
cycles, DRAM traffic and energy, and a search over them; the matrix units beside the systolic
array (a DianNao NFU, a matrix-vector unit); a general core turned into a DLP one change at a time.
Installed into lumen.dlp by lua/lumen/dlp.lua; every model and its assumptions are in docs/dlp.md.
]]
return function(dlp)
  local Array = dlp.Array

  local function fail(fn, fmt, ...) error('dlp.' .. fn .. ': ' .. string.format(fmt, ...), 3) end
  local function cdiv(a, b) return (a + b - 1) // b end

  local DIMS = {'K', 'C', 'P', 'Q', 'R', 'S'}
  local DIM_DOC = {K = 'filters', C = 'channels', P = 'output rows', Q = 'output columns', R = 'filter rows',
                   S = 'filter columns'}
  -- which loops index each operand (the others reuse its tile)
  local REL = {ifmap = {C = true, P = true, Q = true, R = true, S = true},
               filter = {K = true, C = true, R = true, S = true},
               ofmap = {K = true, P = true, Q = true}}

  local function layer_dims(l)
    local d = l:dims()
    return {K = l.filters, C = l.channels, P = d.ofmap_h, Q = d.ofmap_w, R = l.filter_h, S = l.filter_w}
  end

  -- ---------------------------------------------------------------- mappings

  local Mapping = {}
  Mapping.__index = Mapping

  --- dlp.mapping{layer=, tiles={K=, C=, P=, Q=, R=, S=}, order={...}}: the SRAM-level tile of each
  --- dimension (absent: the whole dimension) and the order of the DRAM-level loops over the tiles,
  --- outermost first (all six dims, each once).
  function dlp.mapping(t)
    if type(t) ~= 'table' then fail('mapping', 'expects a table, got %s', type(t)) end
    for k in pairs(t) do
      if k ~= 'layer' and k ~= 'tiles' and k ~= 'order' then fail('mapping', "unknown field '%s' (it takes layer, tiles, order)", tostring(k)) end
    end
    if getmetatable(t.layer) ~= dlp.Layer then fail('mapping', 'layer must be a dlp.conv or dlp.gemm layer, got %s', type(t.layer)) end
    local full = layer_dims(t.layer)
    local tiles = {}
    if t.tiles ~= nil and type(t.tiles) ~= 'table' then fail('mapping', 'tiles must be a table, got %s', type(t.tiles)) end
    for k in pairs(t.tiles or {}) do
      if not full[k] then fail('mapping', "tiles: unknown dimension '%s' (K, C, P, Q, R, S)", tostring(k)) end
    end
    for _, d in ipairs(DIMS) do
      local v = (t.tiles or {})[d] or full[d]
      if math.type(v) ~= 'integer' then
        if type(v) == 'number' and v == math.floor(v) then v = math.tointeger(v)
        else fail('mapping', 'tiles.%s must be an integer, got %s', d, tostring(v)) end
      end
      if v < 1 or v > full[d] then
        fail('mapping', 'tiles.%s = %d: a tile of the %s must be between 1 and %d', d, v, DIM_DOC[d], full[d])
      end
      tiles[d] = v
    end
    local order = t.order or DIMS
    if type(order) ~= 'table' then fail('mapping', 'order must be a list of the dims, got %s', type(order)) end
    local seen = {}
    for i, d in ipairs(order) do
      if not full[d] then fail('mapping', "order[%d] = %s: not a dimension (K, C, P, Q, R, S)", i, tostring(d)) end
      if seen[d] then fail('mapping', 'order names %s twice', d) end
      seen[d] = true
    end
    for _, d in ipairs(DIMS) do
      if not seen[d] then fail('mapping', 'order must name every dimension once: %s is missing', d) end
    end
    local o = {}
    for i, d in ipairs(order) do o[i] = d end
    return setmetatable({layer = t.layer, tiles = tiles, order = o, dims = full}, Mapping)
  end

  function Mapping:__tostring()
    local parts = {}
    for _, d in ipairs(DIMS) do parts[#parts + 1] = d .. '=' .. self.tiles[d] end
    return 'tiles {' .. table.concat(parts, ' ') .. '}, order ' .. table.concat(self.order, ' ')
  end

  -- the tile's GEMM on the array without stalls, as the simulator counts a fold (M pixels, N
  -- filters, K window)
  local function tile_cycles(a, M, N, K)
    local Sr, Sc, T
    if a.dataflow == 'os' then Sr, Sc, T = M, N, K
    elseif a.dataflow == 'ws' then Sr, Sc, T = K, N, M
    else Sr, Sc, T = K, M, N end
    local fold = a.dataflow == 'os' and T + a.rows + a.cols - 2 or 2 * a.rows + a.cols + T - 2
    local rf, cf = cdiv(Sr, a.rows), cdiv(Sc, a.cols)
    -- what the array reads from and writes to the scratchpads (SCALE-Sim's per-fold counts)
    local sram
    if a.dataflow == 'os' then sram = M * K * cf + K * N * rf + M * N
    elseif a.dataflow == 'ws' then sram = M * K * cf + K * N + M * N * rf
    else sram = K * M + N * K * cf + N * M * rf end
    return rf * cf * fold, sram
  end

  -- the sizes a dimension's tiles take: {size, count} (full tiles and the remainder)
  local function splits(D, t)
    local n = D // t
    local s = {{t, n}}
    if D % t > 0 then s[#s + 1] = {D % t, 1} end
    return s
  end

  --- a:evaluate(mapping): cycles, traffic and energy of the loop nest on this array (model in
  --- docs/dlp.md): {cycles=, compute_cycles=, stall_cycles=, steps=, dram = {ifmap=, filter=,
  --- ofmap=, total=}, sram_accesses=, energy_pj=, utilization=, tile_words = {...}, refetch = {...}}.
  function Array:evaluate(m)
    if getmetatable(m) ~= Mapping then fail('evaluate', 'expects a dlp.mapping{...}, got %s', type(m)) end
    local l, t, D = m.layer, m.tiles, m.dims
    local s = l.stride
    local in_h = math.min((t.P - 1) * s + t.R, l.ifmap_h)
    local in_w = math.min((t.Q - 1) * s + t.S, l.ifmap_w)
    local words = {ifmap = t.C * in_h * in_w, filter = t.K * t.C * t.R * t.S, ofmap = t.K * t.P * t.Q}
    local cap = {ifmap = self.ifmap_sram_kb * 1024, filter = self.filter_sram_kb * 1024, ofmap = self.ofmap_sram_kb * 1024}
    for _, op in ipairs{'ifmap', 'filter', 'ofmap'} do
      if 2 * words[op] > cap[op] then
        fail('evaluate', '%s tile of %d words, double-buffered %d, exceeds %s_sram_kb = %d (%d words): make tiles %s smaller',
          op, words[op], 2 * words[op], op, cap[op] // 1024, cap[op],
          op == 'ifmap' and 'C, P, Q, R or S' or op == 'filter' and 'K, C, R or S' or 'K, P or Q')
      end
    end
    local n = {}
    for _, d in ipairs(DIMS) do n[d] = cdiv(D[d], t[d]) end
    -- compute: every combination of full and remainder tiles, counted
    local compute, macs, array_sram = 0, 0, 0
    local function walk(i, M_, N_, K_, P_, Q_, count)
      if i > #DIMS then
        local M, N, K = P_ * Q_, N_, K_
        local cyc, sr = tile_cycles(self, M, N, K)
        compute = compute + count * cyc
        array_sram = array_sram + count * sr
        macs = macs + count * M * N * K
        return
      end
      local d = DIMS[i]
      for _, sp in ipairs(splits(D[d], t[d])) do
        local size, c = sp[1], sp[2]
        if d == 'K' then walk(i + 1, M_, size, K_, P_, Q_, count * c)
        elseif d == 'C' or d == 'R' or d == 'S' then walk(i + 1, M_, N_, K_ * size, P_, Q_, count * c)
        elseif d == 'P' then walk(i + 1, M_, N_, K_, size, Q_, count * c)
        else walk(i + 1, M_, N_, K_, P_, size, count * c) end
      end
    end
    walk(1, 0, 1, 1, 1, 1, 1)
    -- refetches: irrelevant loops outside an operand's innermost relevant (n > 1) loop
    local refetch, inner = {}, {}
    for op, rel in pairs(REL) do
      local j = 0
      for i, d in ipairs(m.order) do if rel[d] and n[d] > 1 then j = i end end
      inner[op] = j
      local r = 1
      for i = 1, j - 1 do local d = m.order[i] if not rel[d] then r = r * n[d] end end
      refetch[op] = r
    end
    -- words each operand brings in over the whole layer: refetch x (sum of its distinct tiles)
    local function axis(Dout, tout, Dk, tk) -- sum over output tiles and filter tiles of an input extent
      local sum = 0
      for _, a in ipairs(splits(Dout, tout)) do
        for _, b in ipairs(splits(Dk, tk)) do sum = sum + a[2] * b[2] * math.min((a[1] - 1) * s + b[1], math.huge) end
      end
      return sum
    end
    local ifmap_all = D.C * axis(D.P, t.P, D.R, t.R) * axis(D.Q, t.Q, D.S, t.S)
    local filter_all = D.K * D.C * D.R * D.S
    local ofmap_all = D.K * D.P * D.Q
    local dram = {ifmap = refetch.ifmap * ifmap_all, filter = refetch.filter * filter_all}
    dram.ofmap_writes = refetch.ofmap * ofmap_all
    dram.ofmap_reads = (refetch.ofmap - 1) * ofmap_all -- partial sums come back
    dram.ofmap = dram.ofmap_writes + dram.ofmap_reads
    dram.total = dram.ifmap + dram.filter + dram.ofmap
    -- the DMA against compute, double-buffered: at each step the loop that advances decides what
    -- changes; its words over the bandwidth hide behind the step's compute, or stall
    local steps = 1
    for _, d in ipairs(DIMS) do steps = steps * n[d] end
    local per_step = compute / steps
    local stall, outer = 0, 1
    for i, d in ipairs(m.order) do
      local adv = (n[d] - 1) * outer
      outer = outer * n[d]
      if adv > 0 then
        local w = 0
        for op in pairs(REL) do
          if inner[op] >= i then w = w + words[op] * ((op == 'ofmap') and 2 or 1) end
        end
        local dma = cdiv(w, self.bandwidth)
        if dma > per_step then stall = stall + adv * (dma - per_step) end
      end
    end
    local prologue = cdiv(words.ifmap + words.filter, self.bandwidth)
    local epilogue = cdiv(words.ofmap, self.bandwidth)
    stall = math.floor(stall + 0.5) + prologue + epilogue
    local cycles = compute + stall
    -- SRAM: what the array reads and writes, plus every word the DMA moves in or out
    local sram = array_sram + dram.total
    local e = dlp.energy_table
    local energy = macs * (e.mac + 3 * e.register + 2 * e.pe_hop) + sram * e.sram + dram.total * e.dram
    return {cycles = cycles, compute_cycles = compute, stall_cycles = stall, steps = steps, macs = macs,
            dram = dram, sram_accesses = sram, energy_pj = energy, utilization = macs / (cycles * self.rows * self.cols),
            tile_words = words, refetch = refetch, source = 'emulated: lumen.dlp loop-nest model (docs/dlp.md)'}
  end

  --- dlp.default_mapping(a, layer): the first try a student must beat — whole filters and
  --- output rows, as many filters as the array has columns and as many channels as fit, loops
  --- in the order K C P Q R S.
  function dlp.default_mapping(a, l)
    local D = layer_dims(l)
    local t = {K = math.min(D.K, a.cols), C = D.C, P = D.P, Q = D.Q, R = D.R, S = D.S}
    local function fits()
      local ok = pcall(a.evaluate, a, dlp.mapping{layer = l, tiles = t})
      return ok
    end
    -- shrink the largest-footprint dims until every double-buffered tile fits
    local shrink = {'C', 'P', 'Q', 'K', 'R', 'S'}
    local guard = 0
    while not fits() do
      guard = guard + 1
      if guard > 200 then fail('default_mapping', 'no tiling of %s fits these scratchpads', tostring(l)) end
      for _, d in ipairs(shrink) do
        if t[d] > 1 then t[d] = cdiv(t[d], 2) break end
      end
    end
    return dlp.mapping{layer = l, tiles = t, order = {'K', 'C', 'P', 'Q', 'R', 'S'}}
  end

  local GROUP_ORDERS = { -- the six orders of the three loop groups: filters; reduction; outputs
    {'K', 'C', 'R', 'S', 'P', 'Q'}, {'K', 'P', 'Q', 'C', 'R', 'S'}, {'C', 'R', 'S', 'K', 'P', 'Q'},
    {'C', 'R', 'S', 'P', 'Q', 'K'}, {'P', 'Q', 'K', 'C', 'R', 'S'}, {'P', 'Q', 'C', 'R', 'S', 'K'},
  }

  local function candidates(D)
    local c = {}
    local v = 1
    while v < D do c[#c + 1] = v; v = v * 2 end
    c[#c + 1] = D
    return c
  end

  --- a:search(layer [, {objective = 'cycles' | 'energy' | 'edp', keep = 20}]): every tiling of K, C
  --- and P = Q by powers of two (R, S whole) in the six group orders that fits the scratchpads,
  --- evaluated; returns the best mapping, its result, and the candidates ({mapping=, result=},
  --- best first, `keep` of them) with the number evaluated.
  function Array:search(l, opts)
    if getmetatable(l) ~= dlp.Layer then fail('search', 'expects a layer, got %s', type(l)) end
    opts = opts or {}
    local obj = opts.objective or 'cycles'
    if obj ~= 'cycles' and obj ~= 'energy' and obj ~= 'edp' then
      fail('search', "objective must be 'cycles', 'energy' or 'edp', got %s", tostring(obj))
    end
    local function score(r)
      if obj == 'cycles' then return r.cycles elseif obj == 'energy' then return r.energy_pj end
      return r.cycles * r.energy_pj
    end
    local D = layer_dims(l)
    local all, evaluated = {}, 0
    for _, k in ipairs(candidates(D.K)) do
      for _, c in ipairs(candidates(D.C)) do
        for _, p in ipairs(candidates(math.max(D.P, D.Q))) do
          local tiles = {K = k, C = c, P = math.min(p, D.P), Q = math.min(p, D.Q), R = D.R, S = D.S}
          for _, order in ipairs(GROUP_ORDERS) do
            local mp = dlp.mapping{layer = l, tiles = tiles, order = order}
            local ok, r = pcall(self.evaluate, self, mp)
            evaluated = evaluated + 1
            if ok then all[#all + 1] = {mapping = mp, result = r, score = score(r)} end
          end
        end
      end
    end
    if #all == 0 then fail('search', 'no tiling of %s fits these scratchpads', tostring(l)) end
    table.sort(all, function(x, y)
      if x.score ~= y.score then return x.score < y.score end
      return tostring(x.mapping) < tostring(y.mapping)
    end)
    local keep = opts.keep or 20
    local list = {evaluated = evaluated, fitting = #all}
    for i = 1, math.min(keep, #all) do list[i] = all[i] end
    return all[1].mapping, all[1].result, list
  end

  dlp.Mapping = Mapping

  -- ---------------------------------------------------------------- matrix units

  local function gemm_of(l)
    local d = l:dims()
    return d.M, d.N, d.K
  end

  local Unit = {}
  Unit.__index = Unit

  --- dlp.nfu{tn = 16}: DianNao's neural functional unit — NFU-1 Tn x Tn multipliers, NFU-2 Tn
  --- adder trees of Tn inputs (log2 Tn levels), NFU-3 the nonlinearity, a 3-stage pipeline; NBin
  --- feeds Tn inputs a cycle (each used by Tn multipliers), SB Tn x Tn weights a cycle, NBout
  --- keeps Tn partial sums. :run(layer) counts cycles, buffer accesses and reuse.
  function dlp.nfu(t)
    t = t or {}
    local tn = t.tn or 16
    if math.type(tn) ~= 'integer' or tn < 1 or tn > 256 then fail('nfu', 'tn must be an integer 1..256, got %s', tostring(tn)) end
    return setmetatable({kind = 'nfu', tn = tn}, Unit)
  end

  --- dlp.mvu{rows = 32, cols = 32}: a matrix-vector unit: rows x cols MACs computing rows outputs
  --- from cols inputs of one vector a cycle; weights are read for every vector (no reuse across a
  --- batch), inputs reused across its rows.
  function dlp.mvu(t)
    t = t or {}
    local r, c = t.rows or 32, t.cols or 32
    if math.type(r) ~= 'integer' or math.type(c) ~= 'integer' or r < 1 or c < 1 or r > 4096 or c > 4096 then
      fail('mvu', 'rows and cols must be integers 1..4096, got %s x %s', tostring(r), tostring(c))
    end
    return setmetatable({kind = 'mvu', rows = r, cols = c}, Unit)
  end

  function Unit:run(l)
    if getmetatable(l) ~= dlp.Layer then fail(self.kind .. ':run', 'expects a layer, got %s', type(l)) end
    local M, N, K = gemm_of(l)
    local macs = M * N * K
    if self.kind == 'nfu' then
      local tn = self.tn
      local steps = M * cdiv(N, tn) * cdiv(K, tn)      -- one Tn x Tn block of weights a cycle
      local depth = 3
      local r = {unit = 'DianNao NFU, Tn = ' .. tn, multipliers = tn * tn, adders = tn * (tn - 1),
                 adder_tree_levels = math.ceil(math.log(tn, 2) - 1e-9), pipeline_stages = depth,
                 cycles = steps + depth - 1, macs = macs,
                 nbin_reads = steps * tn, sb_reads = steps * tn * tn, nbout_reads = steps * tn,
                 nbout_writes = steps * tn, nonlinearity_ops = M * N}
      r.utilization = macs / (r.cycles * tn * tn)
      r.reuse = {nbin = macs / r.nbin_reads, sb = macs / r.sb_reads, nbout = macs / r.nbout_writes}
      r.source = 'emulated: lumen.dlp NFU model (docs/dlp.md)'
      return r
    end
    local steps = M * cdiv(N, self.rows) * cdiv(K, self.cols)
    local r = {unit = string.format('matrix-vector unit %dx%d', self.rows, self.cols), macs = macs,
               cycles = steps + 1, weight_reads = steps * self.rows * self.cols, input_reads = steps * self.cols,
               output_writes = M * N * cdiv(K, self.cols)}
    r.utilization = macs / (r.cycles * self.rows * self.cols)
    r.reuse = {weights = macs / r.weight_reads, inputs = macs / r.input_reads}
    r.source = 'emulated: lumen.dlp matrix-vector model (docs/dlp.md)'
    return r
  end

  -- ---------------------------------------------------------------- from a general core to a DLP

  local Core = {}
  Core.__index = Core

  --- dlp.general_core{cache_kb = 4, line = 32, ways = 2, miss_latency = 50, branch_penalty = 2,
  --- scratchpad_kb = 8, bandwidth = 10, latency = 50}: a simplified in-order core, one instruction
  --- a cycle, no branch predictor (a taken branch costs branch_penalty bubbles), one-byte words.
  function dlp.general_core(t)
    t = t or {}
    local c = setmetatable({}, Core)
    local function get(k, def, lo)
      local v = t[k] == nil and def or t[k]
      if math.type(v) ~= 'integer' or v < lo then fail('general_core', '%s must be an integer >= %d, got %s', k, lo, tostring(v)) end
      c[k] = v
    end
    get('cache_kb', 4, 1); get('line', 32, 1); get('ways', 2, 1); get('miss_latency', 50, 0)
    get('branch_penalty', 2, 0); get('scratchpad_kb', 8, 1); get('bandwidth', 10, 1); get('latency', 50, 0)
    local sets = c.cache_kb * 1024 // (c.line * c.ways)
    if sets < 1 then fail('general_core', 'a cache of %d KiB cannot hold %d ways of %d-byte lines', c.cache_kb, c.ways, c.line) end
    c.sets = sets
    return c
  end

  -- stage 1: i, j, k loops; per MAC: load a, load b, multiply-add, count, branch back
  function Core:run_cache(M, N, K)
    local sets, ways, line = self.sets, self.ways, self.line
    local tags, age, clock = {}, {}, 0
    for s = 0, sets * ways - 1 do tags[s] = -1; age[s] = 0 end
    local hits, misses = 0, 0
    local function access(addr)
      local ln = addr // line
      local set = ln % sets
      local base = set * ways
      clock = clock + 1
      for w = 0, ways - 1 do
        if tags[base + w] == ln then hits = hits + 1; age[base + w] = clock; return end
      end
      misses = misses + 1
      local victim, oldest = base, math.huge
      for w = 0, ways - 1 do if age[base + w] < oldest then oldest = age[base + w]; victim = base + w end end
      tags[victim] = ln; age[victim] = clock
    end
    local A, B = 0, M * K -- a is M x K row-major, b is K x N row-major, after it
    for i = 0, M - 1 do
      for j = 0, N - 1 do
        for k = 0, K - 1 do access(A + i * K + k); access(B + k * N + j) end
      end
    end
    local macs = M * N * K
    local instr = macs * 5 + M * N * 2             -- 2 loads, MAC, count, branch; a store and reset per output
    local branches = macs + M * N + M               -- taken branches back to each loop's top
    local cycles = instr + branches * self.branch_penalty + misses * self.miss_latency
    return {name = 'general core + data cache', cycles = cycles, instructions = instr, cache_hits = hits,
            cache_misses = misses, dram_words = misses * line + M * N, branch_bubbles = branches * self.branch_penalty,
            macs = macs, sram_accesses = hits + misses}
  end

  -- tiles for the scratchpad stages: square-ish tiles of a, b and c that fit (single or double)
  local function tiling(self, M, N, K, buffers)
    local words = self.scratchpad_kb * 1024 // buffers
    local t = 1
    while (t * 2) * (t * 2) * 3 <= words and t * 2 <= math.max(M, N, K) do t = t * 2 end
    return math.min(t, M), math.min(t, N), math.min(t, K)
  end

  -- stages 2 and 3: the same loops over tiles held in a scratchpad; counted loops (no branches)
  function Core:run_tiles(M, N, K, dma)
    local tm, tn, tk = tiling(self, M, N, K, dma and 2 or 1)
    local compute, load, dram = 0, 0, 0
    local stall = 0
    for i = 0, M - 1, tm do
      local mi = math.min(tm, M - i)
      for j = 0, N - 1, tn do
        local nj = math.min(tn, N - j)
        for k = 0, K - 1, tk do
          local kk = math.min(tk, K - k)
          local w = mi * kk + kk * nj
          local ld = self.latency + cdiv(w, self.bandwidth)
          local c = mi * nj * kk * 3             -- load a, load b from the scratchpad, MAC
          dram = dram + w
          compute = compute + c
          load = load + ld
          if dma then stall = stall + math.max(0, ld - c) else stall = stall + ld end
        end
        dram = dram + mi * nj
        local st = self.latency + cdiv(mi * nj, self.bandwidth)
        if dma then stall = stall + 0 else stall = stall + st end
        load = load + st
      end
    end
    if dma then stall = stall + self.latency + cdiv(math.min(tm, M) * math.min(tk, K) + math.min(tk, K) * math.min(tn, N), self.bandwidth) end
    local macs = M * N * K
    return {name = dma and '+ DMA, double-buffered' or '+ scratchpad instead of cache, counted loops',
            cycles = compute + stall, instructions = compute, stall_cycles = stall, dram_words = dram,
            macs = macs, sram_accesses = 2 * macs + dram, tile = {tm, tn, tk}}
  end

  --- dlp.stages(gemm [, {core = dlp.general_core{...}, array = dlp.array{...}}]): the notes' path
  --- from a general core to a DLP, each change measured on one GEMM: a general core with a data
  --- cache; a scratchpad instead of the cache and counted loops; a DMA engine overlapping loads
  --- with compute; a matrix unit (the systolic array, simulated). A list of {name=, cycles=,
  --- dram_words=, energy_pj=, ...}.
  function dlp.stages(l, opts)
    if getmetatable(l) ~= dlp.Layer then fail('stages', 'expects a layer (dlp.gemm{...}), got %s', type(l)) end
    opts = opts or {}
    local core = opts.core or dlp.general_core{}
    local M, N, K = gemm_of(l)
    if M * N * K > (1 << 22) then fail('stages', 'the general core is simulated access by access: keep M*N*K under 2^22 (got %d)', M * N * K) end
    local e = dlp.energy_table
    local out = {core:run_cache(M, N, K), core:run_tiles(M, N, K, false), core:run_tiles(M, N, K, true)}
    local a = opts.array or dlp.array{rows = 16, cols = 16, dataflow = 'ws', bandwidth = core.bandwidth,
                                      ifmap_sram_kb = core.scratchpad_kb, filter_sram_kb = core.scratchpad_kb,
                                      ofmap_sram_kb = core.scratchpad_kb}
    local r = a:run(l)
    local en = r:energy()
    out[4] = {name = string.format('+ matrix unit (%dx%d systolic array, %s)', a.rows, a.cols, a.dataflow),
              cycles = r.total_cycles, stall_cycles = r.stall_cycles, macs = r.macs,
              dram_words = r.ifmap_dram_reads + r.filter_dram_reads + r.ofmap_dram_writes, energy_pj = en.total_pj,
              report = r}
    for i = 1, 3 do
      local s = out[i]
      -- a cache access is an SRAM read plus a tag compare (charged as a register access)
      local per = i == 1 and (e.sram + e.register) or e.sram
      s.energy_pj = s.macs * (e.mac + 3 * e.register) + s.sram_accesses * per + s.dram_words * e.dram
    end
    for _, s in ipairs(out) do s.source = 'emulated: lumen.dlp (docs/dlp.md, "From a general core to a DLP")' end
    return out
  end
end
