--[[
lumen.repl — the Lua side of the REPL (src/app/repl.c): how results print, the ':' commands
(:help, :who, :mem, the lesson commands), and Tab completion.

The C loop reads lines, evaluates them and times them; it calls M.show with the results, M.command
for ':name rest', M.complete for Tab. Completion reads values without running user code: table
fields through rawget and __index tables only (a tensor's own __index is Lumen's C code).
Help texts live in lumen/help.lua, loaded on the first :help. Read next: lumen/help.lua.
]]
local lm = require 'lumen'

local M = { colour = false }

local function paint(code, s)
  if M.colour then return '\27[' .. code .. 'm' .. s .. '\27[0m' end
  return s
end
M.paint = paint

local keywords = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or repeat
  return then true until while]]):gmatch('%a+') do keywords[w] = true end

local function is_name(s) return type(s) == 'string' and s:match('^[%a_][%w_]*$') ~= nil and not keywords[s] end

--- Bytes for people: 512 B, 1.5 KiB, 3.0 MiB, 1.2 GiB.
function M.bytes(n)
  if n < 1024 then return string.format('%d B', n) end
  local units = { 'KiB', 'MiB', 'GiB', 'TiB' }
  local i = 0
  repeat n = n / 1024; i = i + 1 until n < 1024 or i == #units
  return string.format('%.1f %s', n, units[i])
end

-- ---------------------------------------------------------------- start-up

local baseline = {} -- the globals that exist before the user types anything

--- Notes the globals of a fresh state (called once, before -e chunks and scripts run).
function M.init()
  for k in pairs(_G) do baseline[k] = true end
  for k in pairs(lm._lazy) do baseline[k] = true end -- the modules, globals once first read
  baseline.arg = true -- set by the program after this call
end

-- ---------------------------------------------------------------- printing results

local function has_tostring(v)
  local mt = getmetatable(v)
  return type(mt) == 'table' and rawget(mt, '__tostring') ~= nil
end

local function safe_tostring(v)
  local ok, s = pcall(tostring, v)
  if ok and type(s) == 'string' then return s end
  return '(' .. type(v) .. ': __tostring failed)'
end

local function shape_text(x)
  if x:is_closed() then return 'closed' end
  return x:dtype() .. ' [' .. table.concat(x:shape(), ', ') .. ']'
end

--- One line for a value inside a table: strings quoted, tensors summarised, tables abbreviated.
local function brief(v, depth, seen)
  local t = type(v)
  if t == 'string' then return (string.format('%q', v):gsub('\\\n', '\\n')) end
  if lm.is_tensor(v) then return 'tensor(' .. shape_text(v) .. ')' end
  if t ~= 'table' or has_tostring(v) then return safe_tostring(v) end
  if seen[v] then return '{...}' end
  if depth > 3 then return '{...}' end
  seen[v] = true
  local parts, n, limit = {}, 0, 16
  local len = rawlen(v)
  for i = 1, len do
    n = n + 1
    if n > limit then break end
    parts[n] = brief(rawget(v, i), depth + 1, seen)
  end
  local keys = {}
  for k in next, v do
    if not (math.type(k) == 'integer' and k >= 1 and k <= len) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == 'string' or ta == 'number' then return a < b end
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(keys) do
    n = n + 1
    if n > limit then break end
    local key = is_name(k) and k or ('[' .. brief(k, depth + 1, seen) .. ']')
    parts[n] = key .. ' = ' .. brief(rawget(v, k), depth + 1, seen)
  end
  seen[v] = nil
  if n > limit then parts[limit + 1] = '...' end
  return '{' .. table.concat(parts, ', ', 1, math.min(n, limit + 1)) .. '}'
end

--- The text of a result: tensors through their tostring (the footer coloured), plain tables
--- abbreviated on one line, anything else as print shows it.
function M.format(v)
  if lm.is_tensor(v) then
    local s = safe_tostring(v)
    local cut = s:match('^.*()\n')
    if cut then return s:sub(1, cut) .. paint('36', s:sub(cut + 1)) end
    return paint('36', s)
  end
  if type(v) == 'table' and not has_tostring(v) then return brief(v, 1, {}) end
  return safe_tostring(v)
end

--- Prints results through M.format, separated by tabs as print would, or by newlines when one
--- of them takes several lines (a tensor, a kernel's info).
function M.show(...)
  local n = select('#', ...)
  local parts, sep = {}, '\t'
  for i = 1, n do
    parts[i] = M.format((select(i, ...)))
    if parts[i]:find('\n', 1, true) then sep = '\n' end
  end
  io.write(table.concat(parts, sep, 1, n), '\n')
  io.flush()
end

-- ---------------------------------------------------------------- :who and :mem

local function describe(v)
  local t = type(v)
  if lm.is_tensor(v) then
    if v:is_closed() then return 'tensor', 'closed', 0 end
    local extra = v.requires_grad and ', requires_grad' or ''
    return 'tensor', shape_text(v) .. extra, v:nbytes()
  end
  if t == 'table' then
    local n, bytes, held = 0, 0, {}
    for _, x in next, v do
      n = n + 1
      if lm.is_tensor(x) and not x:is_closed() then
        held[#held + 1] = x
        bytes = bytes + x:nbytes()
      end
      if n >= 100000 then break end
    end
    local info = n .. (n == 1 and ' entry' or ' entries')
    if #held > 0 then info = info .. ', ' .. #held .. ' tensors' end
    return 'table', info, bytes, held
  end
  if t == 'function' then
    local d = debug.getinfo(v, 'S')
    if d.what == 'C' then return 'function', 'C', nil end
    return 'function', d.short_src .. ':' .. d.linedefined, nil
  end
  if t == 'string' then return 'string', #v .. ' bytes: ' .. brief(#v > 40 and v:sub(1, 37) .. '...' or v, 1, {}), #v end
  if t == 'number' then return math.type(v) == 'integer' and 'integer' or 'float', tostring(v), nil end
  return t, safe_tostring(v), nil
end

local function who()
  local names = {}
  for k in pairs(_G) do
    if type(k) == 'string' and not baseline[k] and k ~= '_' then names[#names + 1] = k end
  end
  table.sort(names)
  if #names == 0 then
    print('No globals of yours yet (x = lm.randn(3, 4) makes one; locals are not listed).')
    return
  end
  local rows, w = {}, { 4, 4, 4 }
  -- a tensor held in several places (y = x, a table of them) counts once in the totals: `first`
  -- names where it was seen first
  local total, ntensors, first = 0, 0, {}
  local function count(x, where)
    if first[x] then return false end
    first[x] = where
    ntensors = ntensors + 1
    total = total + x:nbytes()
    return true
  end
  for _, k in ipairs(names) do
    local v = rawget(_G, k)
    local t, info, bytes, held = describe(v)
    local mem = (bytes and (t == 'tensor' or t == 'table')) and M.bytes(bytes) or ''
    if t == 'tensor' and not v:is_closed() and not count(v, k) then
      mem = mem .. ' (counted under ' .. first[v] .. ')'
    end
    for _, x in ipairs(held or {}) do count(x, k) end
    rows[#rows + 1] = { k, t, info, mem }
    w[1], w[2], w[3] = math.max(w[1], #k), math.max(w[2], #t), math.max(w[3], math.min(#info, 48))
  end
  local fmt = '%-' .. w[1] .. 's  %-' .. w[2] .. 's  %-' .. w[3] .. 's  %s'
  print(paint('1', string.format(fmt, 'name', 'type', 'what', 'memory')))
  for _, r in ipairs(rows) do print(string.format(fmt, r[1], r[2], r[3], r[4])) end
  print(paint('2', string.format('%d globals, %d tensors, %s in the tensors they hold (a tensor held '
    .. 'twice counts once; views count their own elements); :mem for the whole process', #names,
    ntensors, M.bytes(total))))
end

local function mem()
  local m = lm.memory()
  print(string.format('tensor memory: %s live in %d tensors, peak %s', M.bytes(m.live_bytes),
    m.live_tensors, M.bytes(m.peak_bytes)))
  print(string.format('allocator cache: %s kept for reuse%s; limit %s', M.bytes(m.cached_bytes),
    m.caching and '' or ' (caching off in this build)', M.bytes(m.limit_bytes)))
  print(string.format('Lua heap: %s', M.bytes(math.floor(collectgarbage('count') * 1024))))
  print(paint('2', 'Unreferenced tensors are freed by the garbage collector (collectgarbage() runs it '
    .. 'now); lm.reset_peak_memory() restarts the peak.'))
end

-- ---------------------------------------------------------------- commands

M.commands = {
  { 'help', '[NAME]', 'this list; with NAME, the signature and doc of a function or what a table holds (:help lm.zeros, :help x:matmul, :help nn); a misspelled NAME gets the nearest names' },
  { 'time', 'EXPR', 'run EXPR (or statements) and print wall and CPU time' },
  { 'who', '', 'your globals with their types, shapes and memory' },
  { 'mem', '', 'live and peak tensor memory, the allocator cache, the Lua heap' },
  { 'lessons', '', 'list the lessons by course, with your progress' },
  { 'lesson', 'NAME|N', 'open a lesson where you stopped (:lessons numbers them)' },
  { 'next', '', 'the next step of the lesson' },
  { 'prev', '', 'the previous step' },
  { 'step', '[N]', 'go to step N; without N, show the current step again' },
  { 'run', '[!]', "run the current step's code again, keeping what you redefined (! replaces it)" },
  { 'edit', '[!]', "the step's code into the input line (one line per prompt); ! opens $EDITOR" },
  { 'check', '[ANSWER]', "check the current step's exercise (:check 9217 checks a value)" },
  { 'hint', '', 'one more hint for the exercise' },
  { 'solution', '', "the exercise's solution, after a confirmation" },
  { 'where', '', 'the lesson, the step and the exercises solved' },
  { 'lang', '[en|zh]', 'the language of the lessons' },
  { 'quit', '', 'leave the REPL (also :q, :exit, Ctrl-D)' },
}

local function command_help()
  print('Commands:')
  for _, c in ipairs(M.commands) do
    print(string.format('  %-16s %s', ':' .. c[1] .. (c[2] ~= '' and ' ' .. c[2] or ''), c[3]))
  end
  print([[
Lua: type an expression to print it (several results are separated by tabs; `_` holds the first),
a statement to run it; an unfinished one continues on the `..` prompt; a trailing `;` prints
nothing. Tab completes names, fields (lm.ze), methods (x:ma), commands (:he) and file names inside
strings. Ctrl-C stops what runs (twice within a second quits); at the prompt it clears the line.
Globals: lm (Lumen), F (lm.nn.functional)]] .. ((rawget(_G, 'nn') or lm._lazy.nn) and ', nn' or '') ..
    '. Topics: :help lm, :help Tensor, :help F, :help nn, :help optim, :help data, :help kernels, ' ..
    ':help viz, :help lesson.')
end

local function lesson_command(name)
  return function(arg)
    local lesson = lm._global('lesson') or package.loaded['lumen.lesson']
    if type(lesson) == 'table' and type(lesson.command) == 'function' then
      return lesson.command(name, arg)
    end
    print(paint('33', 'Lessons are not available yet') .. ": the lesson runner (the 'lesson' module, :"
      .. name .. ' and lumen --lesson) comes with a later version of Lumen; :help lesson says what '
      .. 'it will do.')
  end
end

local handlers = {
  help = function(arg)
    if arg == '' then return command_help() end
    require('lumen.help').show(arg, M)
  end,
  who = who,
  mem = mem,
  quit = function() return 'quit' end,
}
for _, n in ipairs({ 'lessons', 'lesson', 'next', 'prev', 'step', 'run', 'edit', 'check', 'hint',
                     'solution', 'where', 'lang' }) do
  handlers[n] = lesson_command(n)
end

-- Lines queued for the input line (:edit): the C loop takes one before each prompt and puts it
-- there to be edited (src/app/edit.c); Ctrl-C at a prompt drops the rest.
local queued = {}

--- Queues lines for the next prompts; false when lines cannot be edited (no terminal).
function M.queue_input(lines)
  if not M.editing then return false end
  queued = {}
  for i, l in ipairs(lines) do queued[i] = l end
  return true
end

--- The next queued line (nil: none); interrupted (Ctrl-C at the prompt) drops them all.
function M.take_input(interrupted)
  if interrupted then queued = {} return nil end
  return table.remove(queued, 1)
end

--- Runs ':name arg' (the C loop handles :time and :quit itself). Returns 'quit' to leave.
function M.command(name, arg)
  local h = handlers[name]
  if not h then
    print(paint('31', "unknown command ':" .. name .. "'") .. '; :help lists the commands')
    return
  end
  return h(arg or '')
end

-- ---------------------------------------------------------------- completion

--- The quote that is open at the end of s (a Lua source prefix), or nil.
local function open_quote(s)
  local i, n, q = 1, #s, nil
  while i <= n do
    local c = s:sub(i, i)
    if q then
      if c == '\\' then i = i + 1 elseif c == q then q = nil end
    elseif c == '"' or c == "'" then
      q = c
    elseif c == '-' and s:sub(i + 1, i + 1) == '-' then
      return nil -- a comment runs to the end
    end
    i = i + 1
  end
  return q
end

local function sorted_unique(list)
  table.sort(list)
  local out = {}
  for i, s in ipairs(list) do
    if s ~= list[i - 1] then out[#out + 1] = s end
  end
  return out
end

local function starts(s, prefix) return s:sub(1, #prefix) == prefix end

--- The keys of t (strings that are names), with those of its __index tables (classes).
local function keys_of(t, only_functions, out)
  out = out or {}
  local seen, depth = {}, 0
  while type(t) == 'table' and not seen[t] and depth < 8 do
    seen[t] = true
    for k, v in next, t do
      if is_name(k) and (not only_functions or type(v) == 'function') then out[#out + 1] = k end
    end
    local mt = getmetatable(t)
    t = type(mt) == 'table' and rawget(mt, '__index') or nil
    depth = depth + 1
  end
  return out
end

local tensor_fields = { 'grad', 'grad_fn', 'requires_grad', 'is_leaf' }

--- The value a dotted path of names denotes, without running user code, or nil.
local function resolve(path)
  local v = _G
  for name in path:gmatch('[^.]+') do
    if not is_name(name) then return nil end
    if v == _G then
      v = lm._global(name) -- a module global not read yet is loaded (Lumen's code, not the user's)
    elseif type(v) == 'table' then
      local t, x, hops = v, nil, 0
      while type(t) == 'table' and hops < 8 do
        x = rawget(t, name)
        if x ~= nil then break end
        local mt = getmetatable(t)
        t = type(mt) == 'table' and rawget(mt, '__index') or nil
        hops = hops + 1
      end
      v = x
    elseif lm.is_tensor(v) then
      local ok, x = pcall(function() return v[name] end)
      v = ok and x or nil
    else
      return nil
    end
    if v == nil then return nil end
  end
  return v
end

--- Names that may follow `obj.` (sep '.') or `obj:` (sep ':').
local function members(v, sep)
  if lm.is_tensor(v) then
    if sep == ':' then return keys_of(lm.Tensor, true) end
    return tensor_fields
  end
  if type(v) == 'string' then return sep == ':' and keys_of(string, true) or {} end
  if type(v) == 'table' then return keys_of(v, sep == ':') end
  local mt = getmetatable(v)
  if type(mt) ~= 'table' then return {} end
  if type(rawget(mt, '__index')) == 'table' then return keys_of(rawget(mt, '__index'), sep == ':') end
  -- a userdata whose __index is a function (a kernel's trace, a sparse matrix) lists its methods
  -- and fields in its metatable (src/lua/kernels.c)
  local out = {}
  if type(rawget(mt, 'methods')) == 'table' then keys_of(rawget(mt, 'methods'), true, out) end
  if sep == '.' and type(rawget(mt, 'fields')) == 'table' then
    for _, f in ipairs(rawget(mt, 'fields')) do out[#out + 1] = f end
  end
  return out
end

local function complete_files(word)
  local quote = word:match('^["\']') or ''
  local w = word:sub(#quote + 1)
  local dir, base = w:match('^(.*/)([^/]*)$')
  if not dir then dir, base = '', w end
  local names = lm.sys.listdir(dir == '' and '.' or dir)
  local out = {}
  for _, name in ipairs(names or {}) do
    if starts(name, base) and (base:sub(1, 1) == '.' or name:sub(1, 1) ~= '.') then
      local path = dir .. name
      out[#out + 1] = quote .. path .. (lm.sys.isdir(path) and '/' or '')
    end
  end
  return sorted_unique(out)
end

--- Candidates that replace line:sub(start + 1, stop) (start and stop as libedit counts them:
--- 0-based start, stop the cursor). Returns an array of strings.
function M.complete(line, start, stop)
  local before, word = line:sub(1, start), line:sub(start + 1, stop)
  if open_quote(before) or word:match('^["\']') then return complete_files(word) end
  if before:match('^%s*$') and starts(word, ':') then
    local out = {}
    for _, c in ipairs(M.commands) do
      if starts(':' .. c[1], word) then out[#out + 1] = ':' .. c[1] end
    end
    return sorted_unique(out)
  end
  local obj, sep, partial = word:match('^(.-)([.:])([%w_]*)$')
  local out = {}
  if not obj then
    if not word:match('^[%a_][%w_]*$') and word ~= '' then return out end
    for _, k in ipairs(keys_of(_G, false)) do
      if starts(k, word) then out[#out + 1] = k end
    end
    for k in pairs(lm._lazy) do
      if starts(k, word) then out[#out + 1] = k end
    end
    for k in pairs(keywords) do
      if starts(k, word) then out[#out + 1] = k end
    end
    return sorted_unique(out)
  end
  if obj == '' or obj:find(':', 1, true) then return out end
  local v = resolve(obj)
  if v == nil then return out end
  for _, k in ipairs(members(v, sep)) do
    if starts(k, partial) and not starts(k, '__') then out[#out + 1] = obj .. sep .. k end
  end
  return sorted_unique(out)
end

return M
