-- The lectures' claims against the latency model (issue 28): every comparison a lesson or a scene
-- makes, as "variant A beats variant B" in modelled cycles (or in the counter the text points
-- at), on the inputs that lesson or scene uses. If a change of the model, a kernel body or an
-- input flips one, this fails and names the claim, so a lesson never tells students to compare
-- numbers that say the opposite. The table is printed (the issue's measure).
-- Where the model cannot show a claim honestly, the lesson says so (docs/trace.md, "What the
-- model cannot show") instead of appearing here.
-- ctest runs this file with the program (CMakeLists.txt, label kernels).
local test = require 'lumen.test'

local function emu(opts) opts.backend = 'emu'; return opts end
local function cycles(info) return info.counters.modelled_cycles end

-- ece408/18-histogram step 4: 4096 values in 16 bins, uniform and in runs of 256
local function hist_input(kind, n)
  local t = {}
  for i = 1, n do t[i] = kind == 'runs' and ((i - 1) // 256) % 16 or math.random(0, 15) end
  return lm.tensor(t, { dtype = 'uint8' })
end
local function hist(kind, algo)
  math.randomseed(28)
  return select(2, kernels.histogram(hist_input(kind, 4096), 16, emu { algo = algo }))
end

-- ece408/19-sparse step 8: 4096 x 256, about 8 nonzeros a row; every 128th row 30 times longer
local sparse_cache = {}
local function sparse(kind)
  if not sparse_cache[kind] then
    lm.manual_seed(19)
    local p = lm.full({ 4096, 1 }, 0.03)
    if kind == 'long' then for r = 128, 4096, 128 do p[r][1] = 0.9 end end
    sparse_cache[kind] = kernels.sparse(lm.rand(4096, 256):lt(p):float())
  end
  return sparse_cache[kind]
end
local function spmv(kind, format)
  lm.manual_seed(20)
  return select(2, kernels.spmv(sparse(kind), lm.rand(256), emu { format = format }))
end

local function scan(algo)
  lm.manual_seed(16)
  return select(2, kernels.scan(lm.rand(1024), emu { algo = algo }))
end

-- Each claim: where it is made, what it says, and a function returning (value of the variant
-- that should be smaller, value of the other, the counter compared).
local claims = {
  { 'reduce scene; docs/trace.md', 'the convergent reduction beats the naive one by the lanes it keeps busy (4096 elements, blocks of 64)',
    function()
      local _, n = kernels.reduce(lm.rand(4096), emu { algo = 'naive', block = 64 })
      local _, c = kernels.reduce(lm.rand(4096), emu { algo = 'convergent', block = 64 })
      test.ok(c.counters.simd_efficiency > n.counters.simd_efficiency, 'convergent keeps more lanes busy')
      return cycles(c), cycles(n), 'modelled_cycles'
    end },
  { 'ece408/18-histogram step 4', 'contention: the same global-atomic kernel is slower on runs (a whole block on one bin)',
    function() return cycles(hist('uniform', 'global-atomic')), cycles(hist('runs', 'global-atomic')), 'modelled_cycles' end },
  { 'ece408/18-histogram step 4', 'contention: the longest queue on one address is a block long on runs',
    function() return hist('uniform', 'global-atomic').counters.atomic_queue, hist('runs', 'global-atomic').counters.atomic_queue, 'atomic_queue' end },
  { 'ece408/18-histogram step 5', 'privatization beats global atomics (uniform input)',
    function() return cycles(hist('uniform', 'privatized')), cycles(hist('uniform', 'global-atomic')), 'modelled_cycles' end },
  { 'ece408/18-histogram step 5', 'privatization beats global atomics under contention (runs of 256)',
    function() return cycles(hist('runs', 'privatized')), cycles(hist('runs', 'global-atomic')), 'modelled_cycles' end },
  { 'ece408/18-histogram step 7', 'aggregation beats privatization on runs',
    function() return cycles(hist('runs', 'aggregated')), cycles(hist('runs', 'privatized')), 'modelled_cycles' end },
  { 'ece408/18-histogram step 7', 'on a uniform input aggregation only adds the longer loop: privatization is faster',
    function() return cycles(hist('uniform', 'privatized')), cycles(hist('uniform', 'aggregated')), 'modelled_cycles' end },
  { 'ece408/19-sparse step 8', 'regular rows: ELL\'s column-major slots coalesce, CSR\'s rows do not',
    function() return cycles(spmv('regular', 'ell')), cycles(spmv('regular', 'csr')), 'modelled_cycles' end },
  { 'ece408/19-sparse step 8', 'regular rows: JDS coalesces too',
    function() return cycles(spmv('regular', 'jds')), cycles(spmv('regular', 'csr')), 'modelled_cycles' end },
  { 'ece408/19-sparse step 8', 'long rows: JDS beats CSR (sorted rows: one long wave, not every wave waiting for its long row)',
    function() return cycles(spmv('long', 'jds')), cycles(spmv('long', 'csr')), 'modelled_cycles' end },
  { 'ece408/19-sparse step 8', 'long rows: JDS beats ELL',
    function() return cycles(spmv('long', 'jds')), cycles(spmv('long', 'ell')), 'modelled_cycles' end },
  { 'ece408/19-sparse step 8', 'long rows: ELL pads more slots than the matrix has nonzeros',
    function() return sparse('long').nnz, spmv('long', 'ell').counters.padding, 'padding vs nnz' end },
  { 'ece408/19-sparse step 8', 'long rows: COO\'s atomics on one y[row] queue (slower than on regular rows)',
    function() return cycles(spmv('regular', 'coo')), cycles(spmv('long', 'coo')), 'modelled_cycles' end },
  { 'ece408/16-scan step 9, 17-brent-kung step 7', 'Kogge-Stone takes fewer steps than Brent-Kung (1024 elements)',
    function() return scan('kogge-stone').counters.steps, scan('brent-kung').counters.steps, 'steps' end },
  { 'ece408/16-scan step 9, 17-brent-kung step 7', 'Brent-Kung does fewer adds (work-efficient)',
    function() return scan('brent-kung').counters.adds, scan('kogge-stone').counters.adds, 'adds' end },
  { 'ece408/16-scan step 9, 17-brent-kung step 7', 'on one idle block the model favours Kogge-Stone\'s fewer steps',
    function() return cycles(scan('kogge-stone')), cycles(scan('brent-kung')), 'modelled_cycles' end },
  { 'ece408/26-patterns step 2; conv scene', 'the tiled convolution loads far less from global memory than the naive one',
    function()
      local _, n = kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), emu { algo = 'naive', tile = 8 })
      local _, t = kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), emu { algo = 'tiled', tile = 8 })
      test.ok(cycles(t) < cycles(n), 'and takes fewer cycles')
      return t.counters.global_loads, n.counters.global_loads, 'global_loads'
    end },
  { 'ece408/26-patterns step 2', 'the mask in constant memory halves the naive kernel\'s global loads',
    function()
      local _, n = kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), emu { algo = 'naive' })
      local _, c = kernels.conv2d(lm.rand(32, 32), lm.rand(5, 5), emu { algo = 'constant' })
      return cycles(c), cycles(n), 'modelled_cycles'
    end },
  { 'ece408/26-patterns step 4; matmul scene', 'tiling cuts the matmul\'s global loads by the tile (T = 8) and its cycles',
    function()
      local _, n = kernels.matmul(lm.rand(32, 32), lm.rand(32, 32), emu { algo = 'naive' })
      local _, t = kernels.matmul(lm.rand(32, 32), lm.rand(32, 32), emu { algo = 'tiled', tile = 8 })
      test.eq(n.counters.global_loads, 8 * t.counters.global_loads)
      return cycles(t), cycles(n), 'modelled_cycles'
    end },
  { 'ece408/26-patterns step 6; divergence scene', 'a branch split within warps runs both paths: warp-aligned is faster',
    function()
      local _, eo = kernels.divergence { pattern = 'even-odd' }
      local _, w = kernels.divergence { pattern = 'warp' }
      return cycles(w), cycles(eo), 'modelled_cycles'
    end },
  { 'ece408/21-22-gpu-in-pc steps 4-8; timeline scene', 'streams overlap copies and kernels: faster than serial',
    function()
      local _, s = kernels.streams { segments = 4 }
      return s.counters.overlapped_ms, s.counters.serial_ms, 'time (modelled)'
    end },
  { 'docs/trace.md', 'coalesced column sums beat strided row sums',
    function()
      local x = lm.rand(256, 256)
      local _, c = kernels.coalescing(x, emu { algo = 'coalesced' })
      local _, s = kernels.coalescing(x, emu { algo = 'strided' })
      return cycles(c), cycles(s), 'modelled_cycles'
    end },
  { 'docs/trace.md', 'a padding column removes the shared tile\'s bank conflicts',
    function()
      local x = lm.rand(64, 96)
      local _, sh = kernels.transpose(x, emu { algo = 'shared' })
      local _, pd = kernels.transpose(x, emu { algo = 'padded' })
      return cycles(pd), cycles(sh), 'modelled_cycles'
    end },
}

-- The scenes' own counters, read from the panel they draw (viz.layout('text')): the row of a
-- counter, its values left to right (one per variant).
local function panel_row(name)
  local L = viz.layout('text')
  local y
  for _, c in ipairs(L) do if c.text == name then y = c.y end end
  local row = {}
  for _, c in ipairs(L) do
    if y and math.abs(c.y - y) < 1 and c.text ~= name then row[#row + 1] = { c.x, tonumber(c.text) } end
  end
  table.sort(row, function(a, b) return a[1] < b[1] end)
  local out = {}
  for i, r in ipairs(row) do out[i] = r[2] end
  return out
end
local have_viz = require('lumen.lesson_format').scenes() ~= nil
if have_viz then
  claims[#claims + 1] = { 'histogram scene (input = runs)', 'aggregation beats privatization on runs (the scene\'s 1024 values in runs of 32-127)',
    function()
      viz.scene('histogram', { input = 'runs' })
      local c = panel_row('modelled_cycles') -- global-atomic, privatized, aggregated
      test.ok(c[2] < c[1], 'privatized beats global atomics there too')
      return c[3], c[2], 'modelled_cycles'
    end }
  claims[#claims + 1] = { 'reduce scene (defaults)', 'the convergent tree beats the naive one (the launch of 32 blocks the scene shows)',
    function()
      viz.scene('reduce')
      local c = panel_row('modelled_cycles') -- naive, convergent
      return c[2], c[1], 'modelled_cycles'
    end }
end

local rows = {}
for _, c in ipairs(claims) do
  test.case(c[1] .. ': ' .. c[2], function()
    local better, worse, what = c[3]()
    rows[#rows + 1] = { c[1], c[2], better, worse, what, better < worse }
    test.ok(better < worse, string.format('the claim flipped: %s (%s: %s, not below %s)', c[2], what,
      tostring(better), tostring(worse)))
  end)
end

test.case('the claims table', function()
  local out = { '\n| where | lecture claim | counter | better | worse | holds |', '|---|---|---|---|---|---|' }
  for _, r in ipairs(rows) do
    out[#out + 1] = string.format('| %s | %s | %s | %s | %s | %s |', r[1], r[2], r[5], tostring(r[3]), tostring(r[4]),
      r[6] and 'yes' or 'NO')
  end
  io.stderr:write(table.concat(out, '\n'), '\n')
  test.eq(#rows, #claims)
end)
