--[[
lumen.tune — lm.tune(op, ...): operator-level autotuning (AICS ch. 5, "auto-tuning by search"): the
knobs of one kernel, searched by running every candidate on the operator's own shape, the fastest
kept per shape in a cache file.

  lm.tune('matmul', a, b [, opts])     the course's tiled matmul (kernels.matmul)
  lm.tune('conv2d', img, mask [, opts]) the 2-D convolution (kernels.conv2d)
  -> winner (options: kernels.matmul(a, b, winner) runs it), list (the candidates, best first)

backend 'cpu' (the default): the cpu runs' cache tiles and loop orders (matmul tile_m, tile_n,
tile_k, order; conv2d tile_h, tile_w, order), each candidate timed by the kernel itself
(info.counters.time_ms: the median of `repeats` runs after a warm-up, the operands flushed from
the caches before each run; not the wall clock of the Lua call). backend 'emu': the GPU kernel's
tile (and for conv2d the tiled variant, input or output tiles) on the SIMT emulator, ranked by
modelled cycles (deterministic: two searches rank alike), on small shapes only.

Every candidate's result is compared with the default run's (every tiling adds each element's
products in the same order: the same bits are expected; a candidate that differs beyond rounding
is rejected and listed in list.rejected, never the winner).

The search: the default, then a seed grid (square tiles of every power of two x every loop order;
on the emulator, every candidate), then sweeps of one knob at a time around the best so far,
until a round of sweeps changes nothing (search = 'grid': the whole cross product). On the cpu the
default and the leader are then timed a second time (their value: the mean of the two medians)
until the leader is one so timed: one lucky measurement does not make a winner. The cache
(docs/tune.md): one JSON file, $XDG_CACHE_HOME/lumen/tune/cache.json (else ~/.cache/...), keyed by
op, backend, dtype, shape and, on the cpu, threads, SIMD path and CPU model (on the emulator, the
latency model); written whole through lm.sys.write_file (a temporary renamed over the file).
Read next: docs/tune.md, src/kernels/cpu_dense.c (the loops searched), lua/lumen/kernels.lua.
]]
local lm = require 'lumen'
local kernels = require 'lumen.kernels'

local M = {}

local FN = 'lm.tune'
local MAX_TILE = 4096        -- LM_KERNEL_MAX_CPU_TILE (include/lumen/kernels.h)
local EMU_MAX_WORK = 1 << 21 -- m*k*n (matmul), h*w*mh*mw (conv2d): a few seconds of emulation
local FORMAT, VERSION = 'lumen-tune', 1

local MM_ORDERS = { 'ijk', 'ikj', 'jik', 'jki', 'kij', 'kji' }
local CONV_ORDERS = { 'tile-row-mask', 'tile-mask-row', 'mask-tile-row' }
local OPTION_NAMES = { 'backend', 'repeats', 'budget_s', 'cache', 'refresh', 'search', 'tiles', 'verbose' }

local function fail(fmt, ...) error(FN .. ': ' .. string.format(fmt, ...), 0) end

local function copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = v end
  return o
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

--- "{backend='cpu', order='ikj', tile_m=32}": an options table as the user would write it.
local function show_options(o)
  local parts = {}
  for _, k in ipairs(sorted_keys(o)) do
    local v = o[k]
    parts[#parts + 1] = k .. '=' .. (type(v) == 'string' and "'" .. v .. "'" or tostring(v))
  end
  return '{' .. table.concat(parts, ', ') .. '}'
end

-- ---------------------------------------------------------------- JSON (the cache file)

local function json_encode(v, out)
  local t = type(v)
  if t == 'string' then
    out[#out + 1] = '"' .. v:gsub('[%c"\\]', function(c)
      return c == '"' and '\\"' or c == '\\' and '\\\\' or string.format('\\u%04x', c:byte())
    end) .. '"'
  elseif t == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then error('cannot write ' .. tostring(v)) end
    out[#out + 1] = math.type(v) == 'integer' and string.format('%d', v) or string.format('%.17g', v)
  elseif t == 'boolean' then
    out[#out + 1] = tostring(v)
  elseif t == 'table' and (v[1] ~= nil or rawget(v, '__array')) then
    out[#out + 1] = '['
    for i = 1, #v do
      if i > 1 then out[#out + 1] = ',' end
      json_encode(v[i], out)
    end
    out[#out + 1] = ']'
  elseif t == 'table' then
    out[#out + 1] = '{'
    for i, k in ipairs(sorted_keys(v)) do
      if i > 1 then out[#out + 1] = ',' end
      json_encode(tostring(k), out)
      out[#out + 1] = ':'
      json_encode(v[k], out)
    end
    out[#out + 1] = '}'
  else
    error('cannot write a ' .. t)
  end
  return out
end

-- A strict reader of what json_encode writes (any JSON of objects, arrays, strings, numbers,
-- booleans and null): raises "at byte N: ..." on anything else.
local function json_decode(s)
  local pos = 1
  local function bad(what) error(string.format('at byte %d: %s', pos, what), 0) end
  local function ws() pos = s:find('[^ \t\r\n]', pos) or #s + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == '' then bad('unterminated string') end
      if c == '"' then pos = pos + 1; return table.concat(out) end
      if c == '\\' then
        local e = s:sub(pos + 1, pos + 1)
        local simple = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }
        if simple[e] then
          out[#out + 1] = simple[e]
          pos = pos + 2
        elseif e == 'u' and s:sub(pos + 2, pos + 5):match('^%x%x%x%x$') then
          out[#out + 1] = utf8.char(tonumber(s:sub(pos + 2, pos + 5), 16))
          pos = pos + 6
        else
          bad('a bad escape in a string')
        end
      elseif c:byte() < 32 then
        bad('a control character in a string')
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
  end
  function value(depth)
    if depth > 32 then bad('nested too deeply') end
    ws()
    local c = s:sub(pos, pos)
    if c == '{' then
      local t = {}
      pos = pos + 1
      ws()
      if s:sub(pos, pos) == '}' then pos = pos + 1; return t end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then bad('expected a key') end
        local k = str()
        ws()
        if s:sub(pos, pos) ~= ':' then bad("expected ':'") end
        pos = pos + 1
        t[k] = value(depth + 1)
        ws()
        c = s:sub(pos, pos)
        pos = pos + 1
        if c == '}' then return t end
        if c ~= ',' then bad("expected ',' or '}'") end
      end
    elseif c == '[' then
      local t = {}
      pos = pos + 1
      ws()
      if s:sub(pos, pos) == ']' then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value(depth + 1)
        ws()
        c = s:sub(pos, pos)
        pos = pos + 1
        if c == ']' then return t end
        if c ~= ',' then bad("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    end
    local num = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', pos)
    if num and #num > 0 then
      pos = pos + #num
      local v = math.tointeger(tonumber(num)) or tonumber(num)
      if not v then bad('a bad number') end
      return v
    end
    for word, v in pairs({ ['true'] = true, ['false'] = false, null = 'null' }) do
      if s:sub(pos, pos + #word - 1) == word then
        pos = pos + #word
        if v == 'null' then return nil end
        return v
      end
    end
    bad(c == '' and 'unexpected end' or 'unexpected ' .. string.format('%q', c))
  end
  local v = value(0)
  ws()
  if pos <= #s then bad('text after the value') end
  return v
end
M._json_decode, M._json_encode = json_decode, function(v) return table.concat(json_encode(v, {})) end

-- ---------------------------------------------------------------- the cache file

--- The cache file: path when given, else $XDG_CACHE_HOME/lumen/tune/cache.json (XDG_CACHE_HOME
--- unset or empty: ~/.cache).
function M.cache_file(path)
  if path then return path end
  local base = os.getenv('XDG_CACHE_HOME')
  if not base or base == '' then base = (os.getenv('HOME') or '/tmp') .. '/.cache' end
  return base .. '/lumen/tune/cache.json'
end

local function warn(list, msg)
  if list.quiet then return end
  list.warnings[#list.warnings + 1] = msg
  io.stderr:write(FN, ': ', msg, '\n')
end

-- The entries of the cache file (key -> entry), or {} when it is missing; a file that is not a
-- lumen-tune cache of this version is ignored with a warning (the next save rewrites it).
local function load_cache(file, list)
  local text, why, what = lm.sys.read_file(file)
  if not text then
    if what ~= 'missing' then warn(list, string.format('ignoring the cache file: %s', why)) end
    return {}
  end
  local ok, data = pcall(json_decode, text)
  local problem = not ok and 'not JSON (' .. tostring(data) .. ')'
      or type(data) ~= 'table' and 'not a JSON object'
      or data.format ~= FORMAT and "not a lumen-tune cache (no format = 'lumen-tune')"
      or data.version ~= VERSION and string.format('version %s, not %d', tostring(data.version), VERSION)
      or type(data.entries) ~= 'table' and 'no entries'
  if problem then
    warn(list, string.format('ignoring the cache file %s: %s; it will be rewritten', file, problem))
    return {}
  end
  return data.entries
end

-- The options keys a cached candidate may hold, and their kinds.
local CACHED_KEYS = { backend = 'string', algo = 'string', order = 'string', tile = 'integer',
  tile_m = 'integer', tile_n = 'integer', tile_k = 'integer', tile_h = 'integer', tile_w = 'integer' }

local function valid_options(o)
  if type(o) ~= 'table' then return false end
  for k, v in pairs(o) do
    local kind = CACHED_KEYS[k]
    if not kind then return false end
    if kind == 'integer' and (math.type(v) ~= 'integer' or v < 1 or v > MAX_TILE) then return false end
    if kind == 'string' and (type(v) ~= 'string' or not v:match('^[%w%-]+$')) then return false end
  end
  return true
end

-- An entry as save_entry wrote it: candidates best first, each with options, point and value.
local function valid_entry(e, backend)
  if type(e) ~= 'table' or type(e.candidates) ~= 'table' or #e.candidates == 0 then return false end
  local last = -math.huge
  for _, c in ipairs(e.candidates) do
    if type(c) ~= 'table' or not valid_options(c.options) or c.options.backend ~= backend
        or type(c.value) ~= 'number' or c.value < last or type(c.point) ~= 'table' then
      return false
    end
    for k, v in pairs(c.point) do
      if type(k) ~= 'string' or (type(v) ~= 'string' and math.type(v) ~= 'integer') then return false end
    end
    last = c.value
  end
  return math.type(e.searched) == 'integer'
end

local function save_entry(file, key, list, entry)
  -- read again (another process may have added entries since); its warnings were given already
  local entries = load_cache(file, { warnings = list.warnings, quiet = true })
  entries[key] = entry
  local dir = file:match('^(.*)/[^/]*$')
  if dir and dir ~= '' and not lm.sys.isdir(dir) then
    os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
  end
  local ok, err = pcall(function()
    local text = table.concat(json_encode({ format = FORMAT, version = VERSION, entries = entries }, {}))
    lm.sys.write_file(file, text .. '\n')
  end)
  if not ok then warn(list, 'could not write the cache: ' .. tostring(err)) end
  return ok
end

-- ---------------------------------------------------------------- arguments

local function check_tensor(v, what)
  if not lm.is_tensor(v) then fail('%s must be a tensor, got %s', what, type(v)) end
  if v:is_closed() then fail('%s is closed', what) end
  local shape = '[' .. table.concat(v:shape(), ', ') .. ']'
  if v:dtype() ~= 'float32' and v:dtype() ~= 'float64' then
    fail('%s has dtype %s; the kernels take float32 or float64', what, v:dtype())
  end
  if v:device() ~= 'cpu' then fail('%s is on %s; pass a CPU tensor', what, v:device()) end
  if v:dim() ~= 2 then fail('%s must be 2-D, got shape %s', what, shape) end
  if v:numel() == 0 then fail('%s is empty (shape %s)', what, shape) end
  return shape
end

local function check_options(opts)
  if opts == nil then return {} end
  if type(opts) ~= 'table' or lm.is_tensor(opts) then
    fail('the options must be a table, got %s', lm.is_tensor(opts) and 'a tensor' or type(opts))
  end
  local known = {}
  for _, k in ipairs(OPTION_NAMES) do known[k] = true end
  for k in pairs(opts) do
    if not known[k] then
      fail("unknown option '%s' (lm.tune takes %s)", tostring(k), table.concat(OPTION_NAMES, ', '))
    end
  end
  local o = copy(opts)
  o.backend = o.backend or 'cpu'
  if o.backend ~= 'cpu' and o.backend ~= 'emu' then
    fail("backend = %s: must be 'cpu' (measured) or 'emu' (modelled cycles)", tostring(o.backend))
  end
  if o.repeats == nil then o.repeats = 5 end
  if math.type(o.repeats) ~= 'integer' or o.repeats < 1 or o.repeats > 100 then
    fail('repeats = %s: must be an integer between 1 and 100', tostring(o.repeats))
  end
  if o.budget_s ~= nil and (type(o.budget_s) ~= 'number' or not (o.budget_s > 0 and o.budget_s <= 86400)) then
    fail('budget_s = %s: must be a number of seconds greater than 0 and at most 86400', tostring(o.budget_s))
  end
  if o.cache ~= nil and o.cache ~= false and (type(o.cache) ~= 'string' or o.cache == '') then
    fail('cache = %s: must be a file path or false (no cache)', tostring(o.cache))
  end
  o.search = o.search or 'staged'
  if o.search ~= 'staged' and o.search ~= 'grid' then
    fail("search = %s: must be 'staged' or 'grid'", tostring(o.search))
  end
  for _, k in ipairs({ 'verbose', 'refresh' }) do
    if o[k] ~= nil and type(o[k]) ~= 'boolean' then fail('%s = %s: must be true or false', k, tostring(o[k])) end
  end
  if o.tiles ~= nil then
    if type(o.tiles) ~= 'table' or #o.tiles == 0 then fail('tiles must be a list of tile sizes') end
    for i, t in ipairs(o.tiles) do
      if math.type(t) ~= 'integer' or t < 1 or t > MAX_TILE then
        fail('tiles[%d] = %s: must be an integer between 1 and %d', i, tostring(t), MAX_TILE)
      end
    end
  end
  return o
end

-- ---------------------------------------------------------------- the search spaces

local function sorted_unique(t)
  table.sort(t)
  local out = {}
  for _, v in ipairs(t) do if out[#out] ~= v then out[#out + 1] = v end end
  return out
end

-- Tile sizes along a dim of `size`: powers of two from lo to hi below the size (or the user's
-- list), then the size itself where it fits; a tile past the size is the size.
local function tiles_for(size, lo, hi, user, limit)
  local out = {}
  if user then
    for _, t in ipairs(user) do if t < size and t <= limit then out[#out + 1] = t end end
  else
    local v = lo
    while v < size and v <= hi do out[#out + 1] = v; v = v * 2 end
  end
  if size <= limit then out[#out + 1] = size end
  if #out == 0 then out[1] = limit end
  return sorted_unique(out)
end

-- A space: knobs {name, values} searched in that order; the default point; the seed points; the
-- options of a point (base plus the knobs, those of the cpu runs left out at their default:
-- the default point runs the untouched default loop); clamp: a knob's value as the kernel uses it.
local function matmul_space(backend, m, k, n, user)
  if backend == 'emu' then
    local t = { 1, 2, 4, 8, 16, 32 }
    for _, d in ipairs({ m, k, n }) do if d < 32 then t[#t + 1] = d end end
    if user then t = {}; for _, v in ipairs(user) do if v <= 32 then t[#t + 1] = v end end end
    return { knobs = { { 'tile', sorted_unique(t) } }, default = { tile = 16 }, grid = true }
  end
  local dims = { tile_m = m, tile_n = n, tile_k = k }
  local s = {
    knobs = { { 'order', MM_ORDERS }, { 'tile_m', tiles_for(m, 8, 512, user, MAX_TILE) },
      { 'tile_n', tiles_for(n, 8, 512, user, MAX_TILE) }, { 'tile_k', tiles_for(k, 8, 512, user, MAX_TILE) } },
    default = { order = 'ijk', tile_m = math.min(16, m), tile_n = math.min(16, n), tile_k = math.min(16, k) },
    clamp = function(name, v) return dims[name] and math.min(v, dims[name]) or v end,
    seed = {},
  }
  for _, t in ipairs(tiles_for(math.max(m, n, k), 8, 512, user, MAX_TILE)) do
    for _, o in ipairs(MM_ORDERS) do
      s.seed[#s.seed + 1] = { order = o, tile_m = math.min(t, m), tile_n = math.min(t, n), tile_k = math.min(t, k) }
    end
  end
  return s
end

local function conv_space(backend, h, w, user)
  if backend == 'emu' then
    local t = { 1, 2, 4, 8, 16, 32 }
    for _, d in ipairs({ h, w }) do if d < 32 then t[#t + 1] = d end end
    if user then t = {}; for _, v in ipairs(user) do if v <= 32 then t[#t + 1] = v end end end
    return { knobs = { { 'algo', { 'tiled-input', 'tiled-output' } }, { 'tile', sorted_unique(t) } },
      default = { algo = 'tiled-input', tile = 16 }, grid = true }
  end
  local dims = { tile_h = h, tile_w = w }
  local s = {
    knobs = { { 'order', CONV_ORDERS }, { 'tile_h', tiles_for(h, 1, 256, user, MAX_TILE) },
      { 'tile_w', tiles_for(w, 16, 2048, user, MAX_TILE) } },
    default = { order = 'tile-row-mask', tile_h = 1, tile_w = w },
    clamp = function(name, v) return dims[name] and math.min(v, dims[name]) or v end,
    seed = {},
  }
  for _, th in ipairs(s.knobs[2][2]) do
    for _, o in ipairs(CONV_ORDERS) do s.seed[#s.seed + 1] = { order = o, tile_h = th, tile_w = w } end
  end
  return s
end

-- ---------------------------------------------------------------- running candidates

local function point_key(space, p)
  local parts = {}
  for i, kn in ipairs(space.knobs) do parts[i] = tostring(p[kn[1]]) end
  return table.concat(parts, ' ')
end

-- The options of point p: base, plus each knob (cpu: only those away from the default).
local function options_of(S, p)
  local o = copy(S.base)
  for _, kn in ipairs(S.space.knobs) do
    local name = kn[1]
    if S.backend == 'emu' or p[name] ~= S.space.default[name] then o[name] = p[name] end
  end
  return o
end

local function is_interrupt(err) return tostring(err):find('interrupted', 1, true) ~= nil end

-- Runs kernels[op] with options o; returns out, value (time_ms or modelled_cycles) or nil, why.
local function run(S, o)
  local call = copy(o)
  if S.backend == 'emu' then call.trace = false else call.repeats = S.repeats end
  local fn = kernels[S.op] -- looked up per call: a test may count the runs
  local ok, y, info = pcall(fn, S.x1, S.x2, call)
  S.list.ran = S.list.ran + 1
  if not ok then
    if is_interrupt(y) then error(y, 0) end
    return nil, tostring(y):gsub('^[^:\n]*:%d+: ', '')
  end
  return y, S.backend == 'emu' and info.counters.modelled_cycles or info.counters.time_ms
end

-- Whether y is the reference result: the same bits, or (else) equal within rounding.
local function same(y, ref)
  if lm.equal(y, ref) then return true, true end
  local tol = y:dtype() == 'float64' and 1e-12 or 1e-5
  local scale = ref:abs():max():item()
  return lm.allclose(y, ref, tol, tol * math.max(scale, 1)), false
end

-- Evaluates point p once (memoized): returns its value, or nil (refused, wrong, or out of budget).
local function eval(S, p)
  local key = point_key(S.space, p)
  if S.memo[key] ~= nil then return S.memo[key] or nil end
  if S.deadline and lm.sys.clock() > S.deadline then
    S.list.truncated = true
    return nil
  end
  local o = options_of(S, p)
  local y, v = run(S, o)
  if not y then
    S.memo[key] = false
    S.list.rejected[#S.list.rejected + 1] = { options = o, point = copy(p), reason = v }
    return nil
  end
  local ok, exact = same(y, S.ref)
  y:close()
  if not ok then
    S.memo[key] = false
    S.list.rejected[#S.list.rejected + 1] = { options = o, point = copy(p),
      reason = 'wrong: its result differs from the default run\'s' }
    return nil
  end
  S.seq = S.seq + 1
  S.entries[#S.entries + 1] = { options = o, point = copy(p), value = v, exact = exact, seq = S.seq }
  S.memo[key] = v
  if not S.best or v < S.best.value then S.best = { point = copy(p), value = v } end
  return v
end

local function grid(S)
  local knobs = S.space.knobs
  local function walk(i, p)
    if i > #knobs then return eval(S, p) end
    for _, v in ipairs(knobs[i][2]) do
      if S.list.truncated then return end
      p[knobs[i][1]] = S.space.clamp and S.space.clamp(knobs[i][1], v) or v
      walk(i + 1, p)
    end
  end
  walk(1, {})
end

-- The seed grid, then sweeps of one knob at a time around the best point until a round of sweeps
-- changes nothing (at most 4 rounds).
local function staged(S)
  for _, p in ipairs(S.space.seed) do
    if S.list.truncated then return end
    eval(S, p)
  end
  for _ = 1, 4 do
    local before = point_key(S.space, S.best.point)
    for _, kn in ipairs(S.space.knobs) do
      local center = copy(S.best.point)
      for _, v in ipairs(kn[2]) do
        if S.list.truncated then return end
        local p = copy(center)
        p[kn[1]] = S.space.clamp(kn[1], v)
        eval(S, p)
      end
    end
    if point_key(S.space, S.best.point) == before then return end
  end
end

-- ---------------------------------------------------------------- showing the search

local function metric_name(backend) return backend == 'emu' and 'modelled_cycles' or 'time_ms' end
local function label_of(backend)
  return backend == 'emu' and 'emulated, modelled cycles' or 'CPU measured'
end

local function fmt_value(backend, v)
  return backend == 'emu' and string.format('%d', math.tointeger(v) or math.floor(v + 0.5))
      or string.format('%.4f', v)
end
local function fmt_unit(backend, v) return fmt_value(backend, v) .. (backend == 'emu' and ' cycles' or ' ms') end

--- Prints the search as a table: each candidate (its knobs), its time or cycles, its speed
--- against the default; the winner marked *.
function M.show(list)
  local knobs = list.knobs
  local head = { string.format('%4s  ', '#') }
  for _, kn in ipairs(knobs) do head[#head + 1] = string.format('%-14s', kn) end
  head[#head + 1] = string.format('%14s  %s', list.metric, 'vs default')
  print(list.title)
  print(table.concat(head))
  local dflt = list.default and list.default.value
  for i, c in ipairs(list) do
    local row = { string.format('%3d%s  ', i, i == 1 and '*' or ' ') }
    for _, kn in ipairs(knobs) do row[#row + 1] = string.format('%-14s', tostring(c.point[kn])) end
    row[#row + 1] = string.format('%14s  %s', fmt_value(list.backend, c.value),
      dflt and string.format('%.2fx', dflt / c.value) or '')
    if c.default then row[#row + 1] = '  (default)' end
    if c.confirmed then row[#row + 1] = '  (timed twice: the mean)' end
    print(table.concat(row))
  end
  for _, r in ipairs(list.rejected) do
    print(string.format('   -  %s: %s', show_options(r.options), r.reason))
  end
  print(list.summary)
end

-- ---------------------------------------------------------------- lm.tune

local function describe_cpu()
  local ci = kernels.cpu_info()
  return ci, string.format('threads=%d isa=%s cpu=%s', ci.threads, ci.isa, ci.cpu)
end

local function describe_model()
  local m, parts = kernels.latency(), {}
  for _, k in ipairs(sorted_keys(m)) do parts[#parts + 1] = k .. '=' .. tostring(m[k]) end
  return 'model ' .. table.concat(parts, ',')
end

-- The operands: their checks, the shape text of the key, the space to search.
local function operands(op, x1, x2, backend, user_tiles)
  if op == 'matmul' then
    local sa, sb = check_tensor(x1, 'a (argument 2)'), check_tensor(x2, 'b (argument 3)')
    local m, k, k2, n = x1:size(1), x1:size(2), x2:size(1), x2:size(2)
    if k ~= k2 then fail("matmul's a %s and b %s do not chain (a's columns %d, b's rows %d)", sa, sb, k, k2) end
    if x1:dtype() ~= x2:dtype() then fail('a is %s and b %s; give both one dtype', x1:dtype(), x2:dtype()) end
    if backend == 'emu' and m * k * n > EMU_MAX_WORK then
      fail("backend 'emu' emulates every thread: %dx%dx%d (m*k*n %d) is over %d; tune a small shape, "
        .. "or use backend 'cpu'", m, k, n, m * k * n, EMU_MAX_WORK)
    end
    return string.format('%dx%dx%d', m, k, n), matmul_space(backend, m, k, n, user_tiles)
  end
  local si, sm = check_tensor(x1, 'img (argument 2)'), check_tensor(x2, 'mask (argument 3)')
  local h, w, mh, mw = x1:size(1), x1:size(2), x2:size(1), x2:size(2)
  if mh > h or mw > w then fail('the mask %s is larger than the image %s', sm, si) end
  if x1:dtype() ~= x2:dtype() then fail('img is %s and mask %s; give both one dtype', x1:dtype(), x2:dtype()) end
  if backend == 'emu' and (mh % 2 == 0 or mw % 2 == 0) then
    fail("backend 'emu' searches conv2d's tiled variants, which need odd mask sides; the mask is %s", sm)
  end
  if backend == 'emu' and h * w * mh * mw > EMU_MAX_WORK then
    fail("backend 'emu' emulates every thread: an image %s and a mask %s (h*w*mh*mw %d) are over %d; tune "
      .. "a small shape, or use backend 'cpu'", si, sm, h * w * mh * mw, EMU_MAX_WORK)
  end
  return string.format('%dx%d mask %dx%d', h, w, mh, mw), conv_space(backend, h, w, user_tiles)
end

-- The default run: the reference result and the time to beat. conv2d's default algo ('tiled')
-- refuses even or large masks; then the naive variant is the default (the cpu run ignores algo).
local function default_run(S)
  local tries = { { backend = S.backend } }
  if S.op == 'conv2d' then tries[2] = { backend = S.backend, algo = 'naive' } end
  local why
  for _, base in ipairs(tries) do
    local y, v = run(S, base)
    if y then return base, y, v end
    why = v
  end
  fail('the default run of %s fails: %s', S.op, tostring(why))
end

local function search(S)
  local base, ref, v = default_run(S)
  S.base, S.ref = base, ref
  local p = copy(S.space.default)
  if S.backend == 'emu' and base.algo == 'naive' then
    p.algo = 'naive' -- the default point is not among the space's (a tiled variant refuses the mask)
  end
  S.seq = 1
  local d = { options = copy(base), point = p, value = v, exact = true, seq = 1, default = true }
  S.entries[1] = d
  S.memo[point_key(S.space, p)] = v
  S.best = { point = copy(p), value = v }
  if S.space.grid or S.opts.search == 'grid' then grid(S) else staged(S) end
  ref:close()
  local function rank()
    table.sort(S.entries, function(a, b)
      if a.value ~= b.value then return a.value < b.value end
      return a.seq < b.seq
    end)
  end
  rank()
  -- measured times are noisy: the default and the leader are timed a second time (the mean of the
  -- two medians), until the leader is one so timed (each candidate at most once more: on a loaded
  -- machine the lead may change hands many times)
  if S.backend == 'cpu' then
    local function confirm(e)
      if S.list.truncated or (S.deadline and lm.sys.clock() > S.deadline) then return false end
      local y, v2 = run(S, e.options)
      if not y then return false end
      y:close()
      e.value, e.confirmed = (e.value + v2) / 2, true
      return true
    end
    confirm(d)
    for _ = 1, #S.entries do
      rank()
      if S.entries[1].confirmed or not confirm(S.entries[1]) then break end
    end
    rank()
  end
end

--- lm.tune(op, x1, x2 [, opts]) -> winner, list (module header; docs/tune.md).
function M.tune(op, x1, x2, opts)
  if op ~= 'matmul' and op ~= 'conv2d' then
    fail("unknown op %s (expected 'matmul' or 'conv2d')", type(op) == 'string' and "'" .. op .. "'" or tostring(op))
  end
  local o = check_options(opts)
  local backend = o.backend
  local shape, space = operands(op, x1, x2, backend, o.tiles)
  local dtype = x1:dtype()
  local env
  if backend == 'cpu' then
    local _, d = describe_cpu()
    env = d
  else
    env = describe_model()
  end
  local key = string.format('%s %s %s %s %s', op, backend, dtype, shape, env)
  local file = o.cache ~= false and M.cache_file(o.cache) or nil
  local knobs = {}
  for i, kn in ipairs(space.knobs) do knobs[i] = kn[1] end
  local list = { op = op, backend = backend, dtype = dtype, shape = shape, key = key, file = file,
    metric = metric_name(backend), label = label_of(backend), knobs = knobs, ran = 0,
    from_cache = false, truncated = false, rejected = {}, warnings = {} }
  local head = string.format('lm.tune %s %s %s, backend %s (%s', op, shape, dtype, backend, list.label)
  list.title = head .. (backend == 'cpu' and string.format(': info time_ms, the median of %d runs; %s)', o.repeats, env)
    or ')')

  -- a cached winner: no run at all
  if file and not o.refresh then
    local e = load_cache(file, list)[key]
    if e ~= nil and not valid_entry(e, backend) then
      warn(list, 'ignoring the cached entry for ' .. key .. ' (malformed); searching again')
      e = nil
    end
    if e then
      for i, c in ipairs(e.candidates) do
        list[i] = { options = copy(c.options), point = copy(c.point), value = c.value, default = c.default == true,
          label = list.label, [list.metric] = c.value }
        if c.default then list.default = list[i] end
      end
      list.from_cache, list.searched, list.truncated = true, e.searched, e.truncated == true
      list.summary = string.format('from the cache (%s): searched earlier, %d candidates%s; winner %s, %s',
        file, e.searched, list.truncated and ' (budget ran out)' or '', show_options(list[1].options),
        fmt_unit(backend, list[1].value))
      if o.verbose then M.show(list) end
      return copy(list[1].options), list
    end
  end

  local S = { op = op, backend = backend, x1 = x1, x2 = x2, space = space, opts = o, repeats = o.repeats,
    list = list, memo = {}, entries = {}, deadline = o.budget_s and lm.sys.clock() + o.budget_s }
  local t0 = lm.sys.clock()
  search(S)
  for i, c in ipairs(S.entries) do
    list[i] = { options = c.options, point = c.point, value = c.value, [list.metric] = c.value,
      label = list.label, default = c.default == true, exact = c.exact, confirmed = c.confirmed }
    if c.default then list.default = list[i] end
  end
  list.searched, list.seconds = #list, lm.sys.clock() - t0
  list.summary = string.format('searched %d candidates (%d runs of the kernel) in %.2f s%s; winner %s, %s '
    .. '(%.2fx the default)', list.searched, list.ran, list.seconds,
    list.truncated and ', stopped by budget_s' or '', show_options(list[1].options),
    fmt_unit(backend, list[1].value), list.default.value / list[1].value)
  if file then
    local cands = {}
    for i, c in ipairs(list) do
      cands[i] = { options = c.options, point = c.point, value = c.value, default = c.default or nil }
    end
    list.cached = save_entry(file, key, list, { op = op, backend = backend, metric = list.metric,
      searched = list.searched, truncated = list.truncated, candidates = cands })
  end
  if o.verbose then M.show(list) end
  return copy(list[1].options), list
end

return M
