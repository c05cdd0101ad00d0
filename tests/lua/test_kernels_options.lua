-- Help tells the truth about the kernels' options (issue 13, item 8). The binding checks each
-- call's options against one table (src/lua/kernel_opts.c, kernels.options), and :help
-- kernels.<call> prints that table; here every documented option and value is run through the
-- binding and the core (so a value the core refuses cannot stay documented), every default that a
-- run reports is compared with the documented one, keys that are not documented are refused, and
-- the help text is checked to name exactly the documented options.
local test = require 'lumen.test'
local H = require 'lumen.help'

local OPTIONS = kernels.options

-- Runs kernels.<name> on its sample with opts added; returns ok, out, info (or the error).
local function run(name, opts)
  local args = table.pack(kernels.samples[name]())
  local o = args[args.n]
  for k, v in pairs(opts) do o[k] = v end
  return pcall(kernels[name], table.unpack(args, 1, args.n))
end

local function gpu_missing(err) return tostring(err):find('not available', 1, true) or
    tostring(err):find('no GPU', 1, true) or tostring(err):find('CUDA', 1, true) end

-- A valid value of each numeric option for each call, with what it needs alongside.
local SAMPLE = {
  block = { reduce = 8, scan = 8, histogram = 7, spmv = 7, divergence = 64, streams = 64, coalescing = 7 },
  coarsen = { reduce = { 2, { algo = 'coarsened' } }, scan = { 2, { algo = 'hierarchical' } }, histogram = 2 },
  tile = 4, trace_cap = { 100, { backend = 'emu' } }, repeats = 2, warps = 2,
  segments = 2, bytes = 8192, copy_engines = 1, sms = 4, pcie_gbps = 16, clock_ghz = 1,
  tile_m = 4, tile_n = 2, tile_k = 3, tile_h = 3, tile_w = 5, -- the cpu runs' tiles (lm.tune's knobs)
}
local function sample(key, call)
  local s = SAMPLE[key]
  if type(s) == 'table' and s[call] ~= nil then s = s[call] end
  if type(s) == 'table' then return s[1], s[2] or {} end
  return s, {}
end

test.case('every documented option and value runs', function()
  local n = 0
  for name, spec in pairs(OPTIONS) do
    test.ok(kernels.samples[name], 'a sample input for kernels.' .. name)
    for _, o in ipairs(spec) do
      local tries = {}
      if o.values then
        for _, v in ipairs(o.values) do tries[#tries + 1] = { v, {} } end
      elseif o.kind == 'boolean' then
        tries = { { true, {} }, { false, {} } }
      else
        local v, extra = sample(o.key, name)
        test.ok(v ~= nil, 'no sample value for ' .. name .. ' ' .. o.key)
        tries = { { v, extra } }
      end
      for _, t in ipairs(tries) do
        local opts = {}
        for k, v in pairs(t[2]) do opts[k] = v end
        opts[o.key] = t[1]
        local ok, _, info = run(name, opts)
        n = n + 1
        if o.key == 'backend' and t[1] == 'cuda' and not lm.cuda.is_available() then
          test.ok(not ok and gpu_missing(_), name .. ": backend 'cuda' without a GPU: " .. tostring(_))
        else
          test.ok(ok, string.format('kernels.%s{%s = %s}: %s', name, o.key, tostring(t[1]), tostring(_)))
          if ok and o.key == 'backend' and t[1] ~= 'auto' then test.eq(info.source, t[1], name) end
        end
      end
    end
  end
  test.ok(n > 80, n .. ' runs')
end)

test.case('backends that are not documented for a call are refused', function()
  for name, spec in pairs(OPTIONS) do
    local listed = {}
    for _, o in ipairs(spec) do
      if o.key == 'backend' then for _, v in ipairs(o.values) do listed[v] = true end end
    end
    for _, b in ipairs({ 'emu', 'cpu', 'cuda', 'opencl', 'auto' }) do
      if not listed[b] then
        local ok, err = run(name, { backend = b })
        test.ok(not ok, string.format("kernels.%s{backend='%s'} ran but help does not list it", name, b))
        test.ok(tostring(err):find('kernels.' .. name, 1, true), tostring(err))
      end
    end
  end
end)

test.case('undocumented options and values are refused, naming what the call takes', function()
  for name, spec in pairs(OPTIONS) do
    local keys = {}
    for _, o in ipairs(spec) do keys[o.key] = true end
    for _, k in ipairs({ 'algo', 'block', 'coarsen', 'tile', 'inclusive', 'format', 'pattern', 'warps',
                         'segments', 'bytes', 'sms', 'bogus' }) do
      if not keys[k] then
        local ok, err = run(name, { [k] = 1 })
        test.ok(not ok, name .. ' took ' .. k)
        test.ok(tostring(err):find("unknown option '" .. k .. "' (kernels." .. name .. ' takes', 1, true),
          tostring(err))
      end
    end
    for _, o in ipairs(spec) do
      if o.values and o.key ~= 'backend' then
        local ok, err = run(name, { [o.key] = 'sklansky' })
        test.ok(not ok and tostring(err):find("unknown " .. o.key .. " 'sklansky' (expected '" .. o.values[1], 1, true),
          tostring(err))
      end
    end
  end
  -- the two mismatches the issue found are gone: divergence's patterns, matmul's block
  local div = {}
  for _, o in ipairs(OPTIONS.divergence) do if o.key == 'pattern' then div = o.values end end
  test.eq(div, { 'even-odd', 'half-warp', 'data', 'warp', 'none' })
  local ok = run('matmul', { block = 16 })
  test.ok(not ok)
end)

-- The defaults that a run reports: the variant's name, and counters named after options.
local COUNTER = { tile = 'tile', warps = 'warps', segments = 'segments', copy_engines = 'copy_engines',
  pcie_gbps = 'pcie_gbps', clock_ghz = 'clock_ghz', sms = 'sms', bytes = 'vector_bytes', block = 'block' }

test.case('documented defaults are what a run without the option does', function()
  local checked = 0
  for name, spec in pairs(OPTIONS) do
    local ok, out, info = run(name, { backend = 'emu' })
    test.ok(ok, name .. ': ' .. tostring(out))
    local given = table.pack(kernels.samples[name]())
    given = given[given.n] -- the options the sample itself sets are not defaults
    for _, o in ipairs(spec) do
      local d = o.default:match('^%S+')
      if given[o.key] ~= nil then
        -- (set by the sample)
      elseif o.values and o.key ~= 'backend' and o.key ~= 'order' then -- order: the cpu run's, below
        test.eq(info.algo, o.default, name .. ' ' .. o.key .. ' default')
        checked = checked + 1
      elseif COUNTER[o.key] and tonumber(d) and info.counters[COUNTER[o.key]] then
        test.eq(info.counters[COUNTER[o.key]], tonumber(d), name .. ' ' .. o.key .. ' default')
        checked = checked + 1
      elseif o.key == 'order' then -- the cpu run's loops: the default order gives the default run
        local _, dflt = run(name, { backend = 'cpu' })
        local _, ord = run(name, { backend = 'cpu', order = o.default })
        test.eq(ord:tolist(), dflt:tolist(), name .. ' order default')
        checked = checked + 1
      elseif o.key == 'trace_cap' then
        test.eq(info.trace.cap, tonumber(d), name .. ' trace_cap default')
        checked = checked + 1
      elseif o.key == 'inclusive' then
        local _, inc = run(name, { backend = 'emu', inclusive = o.default == 'true' })
        test.eq(out:tolist(), inc:tolist(), name .. ' inclusive default')
        checked = checked + 1
      elseif o.key == 'trace' then
        local _, _, i2 = run(name, { backend = 'cpu' })
        if i2 then test.eq(i2.trace, nil, name .. ': no trace by default off the emulator') end
      end
    end
  end
  test.ok(checked >= 20, checked .. ' defaults checked')
end)

-- Captures what fn prints.
local function printed(fn, ...)
  local out, old = {}, _G.print
  _G.print = function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    out[#out + 1] = table.concat(t, '\t')
  end
  local ok, err = pcall(fn, ...)
  _G.print = old
  if not ok then error(err, 0) end
  return table.concat(out, '\n')
end

test.case(':help kernels.<call> names exactly the options the binding takes, with values, defaults, counters', function()
  for name, spec in pairs(OPTIONS) do
    local text = printed(H.show, 'kernels.' .. name):gsub('%s+', ' ')
    local keys = {}
    for _, o in ipairs(spec) do
      keys[o.key] = true
      test.ok(text:find(o.key .. ' = ', 1, true), name .. ': ' .. o.key .. ' missing from help')
      test.ok(text:find('(default ' .. o.default, 1, true), name .. ': the default of ' .. o.key)
      for _, v in ipairs(o.values or {}) do
        test.ok(text:find("'" .. v .. "'", 1, true), name .. ': value ' .. v .. ' missing from help')
      end
    end
    -- the signature and the paragraph name no option the binding refuses
    local e = H.entries['kernels.' .. name]
    for k in (e.sig .. ' ' .. e.doc):gmatch('([%a_]+)=') do
      test.ok(keys[k], name .. ': help names ' .. k .. '= which the binding refuses')
    end
    test.ok(text:find('counters in info.counters', 1, true), text)
    test.ok(text:find('emu: modelled_cycles', 1, true), name .. ': the emulated run\'s counters\n' .. text)
  end
  local scan = printed(H.show, 'kernels.scan')
  test.ok(scan:find('cpu: time_ms', 1, true), scan)
  test.ok(scan:find("inclusive = true | false (default true)", 1, true), scan)
end)
