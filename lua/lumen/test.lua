--[[
lumen.test — a small test library and the runner behind `lumen --test PATH...`.

A test file registers cases with test.case(name, fn); the runner loads each test_*.lua file in
its own environment (globals it sets stay in it), then runs its cases, each in a protected call.
A failing case prints one line, "file:line: [case] message", where line is the line of the test
file that failed (the assertion, or the call that raised); the last line is "N passed, N failed".
Read next: tests/lua/.
]]
local lm = require 'lumen'
local M = {}

local Fail = {} -- metatable of assertion failures (tables carrying a message)
Fail.__tostring = function(f) return f.msg end

local function fail(msg) error(setmetatable({ msg = msg }, Fail), 0) end

local function show(v)
  if type(v) == 'string' then return string.format('%q', v) end
  if lm and lm.is_tensor and lm.is_tensor(v) then
    local ok, s = pcall(tostring, v)
    return ok and ('tensor ' .. s:gsub('\n', ' ')) or 'a tensor'
  end
  if type(v) == 'table' then
    local parts, n = {}, 0
    for i, x in ipairs(v) do
      n = n + 1
      if n > 12 then parts[#parts + 1] = '...'; break end
      parts[#parts + 1] = show(x)
    end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  return tostring(v)
end

local function label(msg) return msg and (msg .. ': ') or '' end

--- Registers a case of the current file.
local current -- the list of cases of the file being loaded
function M.case(name, fn)
  assert(type(name) == 'string', 'test.case: name must be a string')
  assert(type(fn) == 'function', 'test.case: fn must be a function')
  if not current then error('test.case: called outside a test file', 2) end
  current[#current + 1] = { name = name, fn = fn }
end

local function deep_eq(a, b, seen)
  if a == b then return true end
  if type(a) ~= 'table' or type(b) ~= 'table' then return false end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do if not deep_eq(v, b[k], seen) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

--- Values are equal (tables compared deeply; 1 == 1.0).
function M.eq(actual, expected, msg)
  if not deep_eq(actual, expected) then
    fail(label(msg) .. 'expected ' .. show(expected) .. ', got ' .. show(actual))
  end
end

--- Says why the rest of a case is not run here (return test.skip('why') from the case): a
--- line "(skipped: why)" in the output, the case counted as passed.
function M.skip(why)
  print('  (skipped: ' .. tostring(why) .. ')')
end

--- Truthy value.
function M.ok(v, msg)
  if not v then fail(label(msg) .. 'expected a true value, got ' .. show(v)) end
  return v
end

--- |actual - expected| <= tol * max(1, |expected|) (tol 1e-6); NaN only matches NaN.
function M.near(actual, expected, tol, msg)
  tol = tol or 1e-6
  if type(actual) ~= 'number' or type(expected) ~= 'number' then
    fail(label(msg) .. 'expected numbers, got ' .. show(actual) .. ' and ' .. show(expected))
  end
  if actual ~= actual and expected ~= expected then return end
  if actual == expected then return end
  if not (math.abs(actual - expected) <= tol * math.max(1, math.abs(expected))) then
    fail(string.format('%sexpected %.10g (tolerance %g), got %.10g', label(msg), expected, tol,
      actual))
  end
end

local function flatten(v, out)
  if type(v) == 'table' then for _, x in ipairs(v) do flatten(x, out) end
  else out[#out + 1] = v end
  return out
end

local function shape_of(v)
  local s = {}
  while type(v) == 'table' do s[#s + 1] = #v; v = v[1] end
  return s
end

--- A tensor close to expected (a tensor, a nested table or a number): same shape, each element
--- within tol * max(1, |expected|) (tol 1e-5).
function M.tensor_near(actual, expected, tol, msg)
  tol = tol or 1e-5
  if not lm.is_tensor(actual) then fail(label(msg) .. 'expected a tensor, got ' .. show(actual)) end
  local es, ev
  if lm.is_tensor(expected) then
    es, ev = expected:shape(), flatten(expected:tolist(), {})
  else
    es, ev = shape_of(expected), flatten(expected, {})
  end
  local as = actual:shape()
  if not deep_eq(as, es) then
    fail(label(msg) .. 'expected shape ' .. show(es) .. ', got ' .. show(as))
  end
  local av = flatten(actual:tolist(), {})
  for i = 1, #ev do
    local a, e = av[i], ev[i]
    local nan = a ~= a and e ~= e
    if not nan and not (a == e or math.abs(a - e) <= tol * math.max(1, math.abs(e))) then
      fail(string.format('%selement %d: expected %.10g (tolerance %g), got %.10g', label(msg), i, e,
        tol, a))
    end
  end
end

local function matches(s, pattern)
  local ok, found = pcall(string.find, s, pattern)
  return (ok and found) or s:find(pattern, 1, true)
end

--- fn() must raise; its message must match pattern (a Lua pattern, or else a plain substring),
--- as raised or without the "file:line: " position Lua puts in front. Returns the message.
function M.raises(fn, pattern, msg)
  local ok, err = pcall(fn)
  if ok then
    fail(label(msg) .. 'expected an error' .. (pattern and (" matching '" .. pattern .. "'") or '')
      .. ', got none')
  end
  local s = type(err) == 'string' and err or (getmetatable(err) == Fail and err.msg) or show(err)
  if pattern and not matches(s, pattern) and not matches((s:gsub('^[^:\n]*:%d+: ', '')), pattern) then
    fail(label(msg) .. "expected an error matching '" .. pattern .. "', got: " .. s)
  end
  return s
end

-- ------------------------------------------------------------------ the runner

local function is_test_file(name) return name:match('^test_.*%.lua$') ~= nil end

local function collect(path, files)
  if lm.sys.isdir(path) then
    local names = assert(lm.sys.listdir(path))
    table.sort(names)
    for _, n in ipairs(names) do
      if is_test_file(n) then files[#files + 1] = path:gsub('/$', '') .. '/' .. n end
    end
  else
    files[#files + 1] = path
  end
  return files
end

-- The line of `file` nearest the error in the stack, and the message without a location prefix.
local function where(file, err)
  local line
  for level = 2, 60 do
    local info = debug.getinfo(level, 'Sl')
    if not info then break end
    if info.source == '@' .. file and info.currentline > 0 then line = info.currentline; break end
  end
  local msg
  if getmetatable(err) == Fail then msg = err.msg
  elseif type(err) == 'string' then msg = err
  else
    local ok, s = pcall(tostring, err)
    msg = ok and type(s) == 'string' and s or ('(error object is a ' .. type(err) .. ' value)')
  end
  local short = file:gsub('%p', '%%%0')
  msg = msg:gsub('^' .. short .. ':%d+: ', '')
  return line, msg
end

local function run_file(file, out)
  local cases = {}
  current = cases
  local env = setmetatable({}, { __index = _G })
  local chunk, err = loadfile(file, 't', env)
  if chunk then
    local ok, e = xpcall(chunk, function(e) return { where(file, e) } end)
    if not ok then err = string.format('%s:%s: (loading) %s', file, e[1] or '?', e[2]) end
  else
    err = err
  end
  current = nil
  if err then out.failed = out.failed + 1; print(err); return end
  for _, c in ipairs(cases) do
    lm.set_grad_enabled(true)
    local ok, e = xpcall(c.fn, function(e) return { where(file, e) } end)
    if ok then
      out.passed = out.passed + 1
    else
      out.failed = out.failed + 1
      print(string.format('%s:%s: [%s] %s', file, e[1] or '?', c.name, e[2]))
    end
  end
  collectgarbage()
end

--- Runs every test file under paths; prints failures and "N passed, N failed"; returns the
--- number of failures.
function M.main(paths)
  local files = {}
  for _, p in ipairs(paths) do collect(p, files) end
  local out = { passed = 0, failed = 0 }
  if #files == 0 then
    print('no test_*.lua files in ' .. table.concat(paths, ' '))
    out.failed = 1
  end
  for _, f in ipairs(files) do run_file(f, out) end
  print(string.format('%d passed, %d failed', out.passed, out.failed))
  io.stdout:flush()
  return out.failed
end

return M
