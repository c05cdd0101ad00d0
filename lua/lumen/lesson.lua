--[[
lesson — the lesson runner (docs/lessons.md; API.md "lesson"): lectures as steps of text, code, a
scene and a checked exercise, stepped through in the REPL (:lessons, :lesson, :next, :prev,
:step, :run, :edit, :check, :hint, :solution, :where, :lang) or from Lua.

Design: one open lesson at a time, with its environment (the REPL's globals by default, so what
the step's code defines the student can change at the prompt and the checks see what the student
typed). A step's code runs through a proxy of that environment whose print and io.write are
captured as well as shown (the output lesson.run returns and `expect` is compared with); the
steps before the current one run quietly first, once per environment. Entering a step in the
REPL shows its text, its code, runs it and shows its scene. Progress (step reached, exercises
solved) lives in $XDG_STATE_HOME/lumen/lessons, a small line-based text file. Loading this module
is cheap: lessons are found and read when first asked for.
Files: lumen/lesson_text.lua (languages, widths, wrapping), lumen/lesson_format.lua (loading,
validation). Read next: docs/lessons.md, lessons/README.md.
]]
local lm = require 'lumen'
local T = require 'lumen.lesson_text'

local M = {}

local F -- lumen.lesson_format, loaded on first use
local function format()
  F = F or require 'lumen.lesson_format'
  return F
end

-- The open lesson and what the runner knows about it.
local S = {
  lesson = nil, name = nil, path = nil,
  index = 0,
  env = nil, proxy = nil,
  ran = {},     -- steps whose code ran in this environment
  hints = {},   -- hints shown, per step
  drafts = {},  -- code the student edited, per step
  record = true, -- write the progress file
  capture = nil, echo = true, -- the output of the code running now
  defined = {},  -- per step: the names its code assigned, and the values it gave them
  assigned = nil, -- while a step's code runs: the names it assigns
  keep = nil,    -- while a step's code runs again: names it must not replace (the student's)
  trace = nil,   -- the last kernel run of the student's code in a check (lesson.try), to draw
}

local function say(en, zh) return { en = en, zh = zh } end
M.say = say
M.text = function(t) return T.pick(t) end
--- lesson.lang([l]): the lessons' language ('en' or 'zh'); with l, sets it first (as :lang l).
M.lang = function(l)
  if l ~= nil then T.set_lang(l) end
  return (T.lang())
end

local function out(s) io.stdout:write(s, '\n') end
local function paint(code, s) return T.paint(code, s) end
local function tr(en, zh) return T.pick({ en = en, zh = zh }) end

-- ---------------------------------------------------------------- finding lessons

--- The directories lessons are looked for in: Lumen's lessons/ (next to its Lua library), then
--- those of LUMEN_LESSON_PATH.
function M.dirs()
  local base = lm.lua_dir:match('^(.*)/lua/?$')
  local dirs = { (base or (lm.lua_dir .. '/..')) .. '/lessons' }
  for d in (os.getenv('LUMEN_LESSON_PATH') or ''):gmatch('[^:]+') do dirs[#dirs + 1] = d end
  return dirs
end

--- The lessons found: an array of {name=, path=, course=, nn=, slug=}, by course then number.
function M.catalog()
  local list, seen = {}, {}
  for _, dir in ipairs(M.dirs()) do
    for _, course in ipairs(lm.sys.listdir(dir) or {}) do
      local cdir = dir .. '/' .. course
      if course:sub(1, 1) ~= '.' and lm.sys.isdir(cdir) then
        for _, file in ipairs(lm.sys.listdir(cdir) or {}) do
          local nn, slug = file:match('^(%d+)%-([%w_%-]+)%.lua$')
          local name = nn and course .. '/' .. nn .. '-' .. slug
          if name and not seen[name] then
            seen[name] = true
            list[#list + 1] = { name = name, path = cdir .. '/' .. file, course = course,
                                nn = tonumber(nn), slug = slug }
          end
        end
      end
    end
  end
  table.sort(list, function(a, b)
    if a.course ~= b.course then return a.course < b.course end
    if a.nn ~= b.nn then return a.nn < b.nn end
    return a.name < b.name
  end)
  return list
end

--- lesson.list(): the lessons' names ('ece408/16-scan', ...).
function M.list()
  local names = {}
  for _, e in ipairs(M.catalog()) do names[#names + 1] = e.name end
  return names
end

-- Edit distance (for "did you mean").
local function distance(a, b)
  local prev, cur = {}, {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    cur[0] = i
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[#b]
end

--- The catalog entry a name means: the full name, 'NN-slug', the slug, a number of :lessons or a
--- file path. Returns the entry, or nil and a message with the nearest names.
function M.find(spec)
  if type(spec) ~= 'string' and math.type(spec) ~= 'integer' then
    return nil, 'lesson.open: the lesson must be a name (a string) or a number, got ' .. type(spec)
  end
  local cat = M.catalog()
  local n = math.type(spec) == 'integer' and spec or (spec:match('^%s*%d+%s*$') and tonumber(spec))
  if n then
    if cat[n] then return cat[n] end
    return nil, string.format('lesson.open: there is no lesson %d (there are %d; :lessons lists them)', n, #cat)
  end
  spec = spec:gsub('^%s+', ''):gsub('%s+$', ''):gsub('%.lua$', '')
  if spec:find('/', 1, true) and not spec:match('^[%w_-]+/[%w_-]+$') or spec:match('^[./]') then
    local function exists(p) local ok, what = lm.sys.isfile(p) return ok or what ~= 'missing' end
    if exists(spec .. '.lua') or exists(spec) then
      local path = exists(spec .. '.lua') and spec .. '.lua' or spec
      local course, nn, slug = path:match('([^/]+)/(%d+)%-([%w_%-]+)%.lua$')
      return { name = course and (course .. '/' .. nn .. '-' .. slug) or path, path = path,
               course = course or '?', nn = tonumber(nn) or 0, slug = slug or path }
    end
  end
  local matches = {}
  -- 'dlsys/07' and 'dlsys/7': the course and the lecture number without the slug
  local course, nn = spec:match('^([%w_-]+)/(%d+)$')
  nn = tonumber(nn)
  for _, e in ipairs(cat) do
    local short = e.name:match('/(.*)$')
    if e.name == spec then return e end
    if short == spec or e.slug == spec or (course and e.course == course and e.nn == nn) then
      matches[#matches + 1] = e
    end
  end
  if #matches == 1 then return matches[1] end
  local cands = {}
  if #matches > 1 then
    for _, e in ipairs(matches) do cands[#cands + 1] = e.name end
    return nil, string.format("lesson.open: '%s' names several lessons: %s", spec, table.concat(cands, ', '))
  end
  for _, e in ipairs(cat) do
    local short = e.name:match('/(.*)$')
    local d = math.min(distance(spec, e.name), distance(spec, short), distance(spec, e.slug))
    if e.name:find(spec, 1, true) then d = math.min(d, 1) end
    cands[#cands + 1] = { e.name, d }
  end
  table.sort(cands, function(a, b) if a[2] ~= b[2] then return a[2] < b[2] end return a[1] < b[1] end)
  local near = {}
  for i = 1, math.min(3, #cands) do near[i] = cands[i][1] end
  return nil, string.format("lesson.open: there is no lesson '%s'%s", spec,
    #near > 0 and ('; the nearest: ' .. table.concat(near, ', ') .. ' (:lessons lists them all)')
      or ' (no lessons were found in ' .. table.concat(M.dirs(), ', ') .. ')')
end

--- Reads and validates a lesson file: the table, or nil and the problems (a string).
function M.load(path)
  local Fm = format()
  local lesson, err = Fm.load(path)
  if not lesson then return nil, err end
  local problems = Fm.validate(lesson, path)
  if #problems > 0 then return nil, table.concat(problems, '\n') end
  return lesson
end

-- ---------------------------------------------------------------- progress

local progress -- {last=, lessons = {name = {at=, solved={[i]=true}, seen={[i]=true}}}}
local warned_write = false

--- The progress file: $XDG_STATE_HOME/lumen/lessons (default ~/.local/state/lumen/lessons).
function M.progress_path()
  local state = os.getenv('XDG_STATE_HOME')
  if not state or state == '' or state:sub(1, 1) ~= '/' then
    local home = os.getenv('HOME')
    if not home or home == '' then return nil end
    state = home .. '/.local/state'
  end
  return state .. '/lumen/lessons'
end

local HEADER = 'lumen lessons progress 1'

local function read_progress()
  local p = { lessons = {} }
  local path = M.progress_path()
  if not path then return p end
  -- a regular file only: a FIFO or a link to /dev/zero would block or never end (issue 29.2)
  local data, why, what = lm.sys.read_file(path)
  if not data then
    if what ~= 'missing' then
      io.stderr:write('lesson: warning: cannot read the progress file (' .. why .. '); progress is kept '
        .. 'for this session only\n')
      p.unusable = true
    end
    return p
  end
  local n, bad = 0, {}
  for line in (data .. '\n'):gmatch('([^\n]*)\n') do
    n = n + 1
    if n == 1 then
      if line ~= HEADER then
        io.stderr:write(string.format('lesson: warning: %s is not a progress file Lumen wrote (its first '
          .. 'line is not "%s"); it is ignored and will be rewritten\n', path, HEADER))
        return p
      end
    elseif line ~= '' then
      local key, name, num = line:match('^(%a+) ([%w_%-%./]+) ?(%d*)$')
      num = tonumber(num)
      local entry = name and (p.lessons[name] or { solved = {}, seen = {} })
      if key == 'last' and name then
        p.last = name
      elseif (key == 'at' or key == 'solved' or key == 'seen') and name and num and num >= 1 then
        p.lessons[name] = entry
        if key == 'at' then entry.at = num else entry[key][num] = true end
      else
        bad[#bad + 1] = n
      end
    end
  end
  if #bad > 0 then
    io.stderr:write(string.format('lesson: warning: ignored line%s %s of %s (not a progress line)\n',
      #bad > 1 and 's' or '', table.concat(bad, ', ', 1, math.min(#bad, 10)), path))
  end
  return p
end

local function get_progress()
  progress = progress or read_progress()
  return progress
end

--- Forgets the progress read (the tests point XDG_STATE_HOME elsewhere and read again).
function M._reset_progress() progress = nil warned_write = false end

local function sorted_keys(t)
  local k = {}
  for i in pairs(t) do k[#k + 1] = i end
  table.sort(k)
  return k
end

local function save_progress()
  if not S.record then return end
  local p = get_progress()
  if p.unusable then return end -- said once, when it was read
  local path = M.progress_path()
  if not path then return end
  local lines = { HEADER }
  if p.last then lines[#lines + 1] = 'last ' .. p.last end
  for _, name in ipairs(sorted_keys(p.lessons)) do
    local e = p.lessons[name]
    if e.at then lines[#lines + 1] = 'at ' .. name .. ' ' .. e.at end
    for _, i in ipairs(sorted_keys(e.solved)) do lines[#lines + 1] = 'solved ' .. name .. ' ' .. i end
    for _, i in ipairs(sorted_keys(e.seen)) do lines[#lines + 1] = 'seen ' .. name .. ' ' .. i end
  end
  local dir = path:match('^(.*)/[^/]*$')
  if not lm.sys.isdir(dir) then
    os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
  end
  -- written whole and safely: never half-written, a device or FIFO at the path refused
  local ok, err = pcall(lm.sys.write_file, path, table.concat(lines, '\n') .. '\n')
  if not ok and not warned_write then
    warned_write = true
    io.stderr:write('lesson: warning: cannot write the progress file ' .. path .. ' (progress is kept '
      .. 'for this session only): ' .. tostring(err):gsub('^lm%.sys%.write_file: ', '') .. '\n')
  end
end

local function lesson_progress(name)
  local p = get_progress()
  p.lessons[name] = p.lessons[name] or { solved = {}, seen = {} }
  return p.lessons[name]
end

-- ---------------------------------------------------------------- running code

local function fmt_values(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  return table.concat(t, '\t', 1, t.n)
end

-- The proxy an environment's code runs in: print and io.write are captured while a step runs
-- (and shown unless quiet); assignments go to the environment itself.
local function make_proxy(env)
  local function emit(s)
    -- printing inside lm.compile's capture: a side effect a replay would not repeat (lumen/graph.lua)
    if lm._graph.capturing() then lm._graph.broken('print (a side effect a replay would not repeat)') end
    local c = S.capture
    if c then c[#c + 1] = s end
    if not c or S.echo then
      local first = S.before_output
      if first and c then
        S.before_output = nil
        first()
      end
      io.stdout:write(s)
    end
  end
  local io_proxy = setmetatable({
    write = function(...)
      local t = table.pack(...)
      for i = 1, t.n do
        if type(t[i]) ~= 'string' and type(t[i]) ~= 'number' then
          error(string.format("bad argument #%d to 'write' (string expected, got %s)", i, type(t[i])), 2)
        end
        emit(tostring(t[i]))
      end
      return io.stdout
    end,
  }, { __index = io })
  return setmetatable({
    print = function(...) emit(fmt_values(...) .. '\n') end,
    io = io_proxy,
  }, {
    __index = env,
    -- a step's code: note what it defines; run again, leave alone what the student redefined
    __newindex = function(_, k, v)
      if S.assigned then S.assigned[k] = true end
      if S.keep and S.keep[k] then return end
      env[k] = v
    end,
  })
end

local function need_open(fname)
  if not S.lesson then
    error(fname .. ': no lesson is open (lesson.open(name) opens one; lesson.list() names them)', 3)
  end
end

--- Runs code in the lesson's environment; returns ok, output (the error message when not ok).
local function run_code(code, chunkname, echo)
  local chunk, err = load(code, '=' .. chunkname, 't', S.proxy)
  if not chunk then return false, err end
  local buf = {}
  S.capture, S.echo = buf, echo
  local ok, e = pcall(chunk)
  S.capture, S.echo = nil, true
  local text = table.concat(buf)
  if not ok then return false, tostring(e), text end
  return true, text
end

--- Runs step i's code (echo: show its output), keeping every name the student redefined since
--- the code last defined it (unless fresh): those stay the student's, and the code's later lines
--- use them. Returns ok, output (or the error), partial output, and the sorted names kept.
local function run_step_code(i, echo, fresh)
  local defined, kept, keep = S.defined[i], {}, {}
  if defined and not fresh then
    for k, v in pairs(defined) do
      if S.env[k] ~= nil and not rawequal(S.env[k], v) then keep[k] = true; kept[#kept + 1] = k end
    end
  end
  table.sort(kept)
  S.assigned, S.keep = {}, keep
  local ok, o, partial = run_code(S.lesson.steps[i].code, string.format('%s step %d', S.name:match('[^/]*$'), i), echo)
  local assigned = S.assigned
  S.assigned, S.keep = nil, nil
  local d = {}
  for k in pairs(assigned) do
    if keep[k] then d[k] = defined[k] else d[k] = S.env[k] end
  end
  S.defined[i] = d
  return ok, o, partial, kept
end
M._run_step_code = function(...) return run_step_code(...) end

local function chunkname(i, what)
  return string.format('%s step %d%s', S.name:match('[^/]*$'), i, what and (' ' .. what) or '')
end

-- Runs the code of the steps before i that have not run in this environment, quietly. Returns
-- the steps whose code failed (their numbers and messages).
local function prerequisites(i)
  local failed = {}
  for j = 1, i - 1 do
    if not S.ran[j] then
      S.ran[j] = true -- before it runs: a Ctrl-C in an endless step must not bring it back
      local ok, e = run_step_code(j, false)
      if not ok then failed[#failed + 1] = { j, e } end
    end
  end
  return failed
end

--- lesson.run([code]): without code, runs the current step's code (after the steps before it,
--- quietly, when they have not run); with code, runs it in the lesson's environment (an answer,
--- or an exercise's solution). Returns ok, output (the error message after the output when not ok).
function M.run(code, opts)
  need_open('lesson.run')
  S.capture, S.echo = nil, true
  if code ~= nil and type(code) ~= 'string' then
    error('lesson.run: code must be a string, got ' .. type(code), 2)
  end
  opts = opts or {}
  local echo = opts.echo or false
  if code == nil then
    local i = S.index
    prerequisites(i)
    S.ran[i] = true
    local ok, o, partial, kept = run_step_code(i, echo, opts.fresh)
    if not ok then return false, (partial or '') .. o, kept end
    return true, o, kept
  end
  local ok, o, partial = run_code(code, opts.name or chunkname(S.index, 'your code'), echo)
  if not ok then return false, (partial or '') .. o end
  return true, o
end

-- ---------------------------------------------------------------- helpers for checks

--- lesson.lcg(seed) -> next: a generator of values in [0, 1) from a linear congruential sequence
--- (s = (1103515245 s + 12345) mod 2^31): checks draw their cases from it and leave lm's and
--- math's random states alone, so a student's seeded code sees the same numbers with or without
--- a check in between.
function M.lcg(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  end
end

--- lesson.rand(seed, scale, d1, d2, ...) -> a float64 tensor of the shape, uniform in [-scale,
--- scale] from lesson.lcg(seed) in C order.
function M.rand(seed, scale, ...)
  local shape = { ... }
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local t, next = {}, M.lcg(seed)
  for i = 1, n do t[i] = (next() * 2 - 1) * scale end
  return lm.tensor(t, { dtype = 'float64' }):reshape(table.unpack(shape))
end

local function num_text(v)
  if type(v) ~= 'number' then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format('%d', v) end
  return string.format('%.6g', v)
end
M._num_text = num_text

--- lesson.show(v): a value as a message shows it (100, not 100.0; 0.692308, not 0.69230769230769).
M.show = num_text

--- lesson.number(v): v as a number (a number, a 0-d or one-element tensor, a numeric string).
function M.number(v)
  if type(v) == 'number' then return v end
  if type(v) == 'string' then return tonumber(v) end
  if lm.is_tensor(v) and not v:is_closed() and v:numel() == 1 then return v:reshape(1)[1]:item() end
  return nil
end

-- A message without the traceback a Lua error may carry, and without the name of the function
-- that raised it ("kernels.launch: "): the report names the line, the rest is the runner's.
local function first_part(e)
  local cut = e:find('\nstack traceback:', 1, true)
  if cut then e = e:sub(1, cut - 1) end
  return (e:gsub('^kernels%.launch: ', ''))
end
M._first_part = first_part

-- What a check may spend in the student's code: Lua instructions, counted by a hook every
-- BUDGET_STEP (kernels.launch passes the hook to every thread of a kernel). An endless loop in a
-- mutant or a student's code stops there, reported as such, instead of hanging :check. The
-- checks of the shipped solutions spend at most ~0.2 million (the puzzles' matmul, im2col); an
-- endless kernel loop with a barrier in it runs ~10 million instructions a second on the emulator.
M.budget = 20000000
local BUDGET_STEP = 100000
local BUDGET_MARK = 'lesson: stopped after'

-- What kernels.last_fault() names, as lesson.try's kinds.
local FAULT_KIND = {
  race = 'race', bounds = 'memcheck', uninit = 'initcheck', deadlock = 'deadlock', barrier = 'deadlock',
  error = 'kernel',
}

--- lesson.try(fn, ...): calls the student's fn protected: true, results... or false, a text, the
--- kind of failure and, for a kernel the emulator stopped, what stopped it (kernels.last_fault()):
--- 'race', 'memcheck' (an index out of bounds), 'initcheck' (a read of memory nothing wrote),
--- 'deadlock' (a barrier some threads never reach, or two different ones), 'kernel' (another
--- error inside a kernel), 'budget' (an endless loop: it ran past the check's budget), 'error'.
--- The text is the checker's report (or the error) without a traceback.
function M.try(fn, ...)
  if type(fn) ~= 'function' and not (type(fn) == 'table' and getmetatable(fn) and getmetatable(fn).__call) then
    return false, say('expected a function here, got ' .. type(fn), '这里需要一个函数，拿到的是 ' .. type(fn)), 'error'
  end
  -- the kernels the student's code launches: the last run is what :check draws afterwards
  local K = package.loaded.kernels
  local before = K and K.last_run()
  local r = table.pack(pcall(fn, ...))
  local after = K and K.last_run()
  if after ~= nil and not rawequal(after, before) then S.trace = after end
  if not r[1] then
    local e = tostring(r[2])
    if e:find('interrupted!', 1, true) then error(r[2], 0) end
    local report = first_part(e)
    if e:find(BUDGET_MARK, 1, true) then
      return false, say(report, report), 'budget'
    end
    local fault = e:find('kernels.launch: ', 1, true) and require('kernels').last_fault() or nil
    local kind = fault and FAULT_KIND[fault.kind]
    if kind == 'race' then
      return false, say('the race checker stopped your kernel: ' .. report, '竞争检查器叫停了你的内核：' .. report), kind, fault
    elseif kind == 'memcheck' then
      return false, say('the memory checker stopped your kernel: ' .. report, '内存检查器叫停了你的内核：' .. report), kind, fault
    elseif kind == 'initcheck' then
      return false, say('the initcheck stopped your kernel: ' .. report, '初始化检查叫停了你的内核：' .. report), kind, fault
    elseif kind then
      return false, say('your kernel stopped: ' .. report, '你的内核出错停下了：' .. report), kind, fault
    end
    return false, say('your code raised an error: ' .. report, '你的代码出错了：' .. report), 'error'
  end
  return table.unpack(r, 1, r.n)
end

-- Calls fn(...) with the budget: ok, results... as pcall; past the budget every instruction
-- raises (a pcall in the student's code cannot swallow it), so the whole call ends.
local budgeted
budgeted = function(fn, ...)
  local old_fn, old_mask, old_count = debug.gethook()
  local spent, limit, stop = 0, M.budget, nil
  local function hook()
    spent = spent + BUDGET_STEP
    if spent > limit then
      -- back in budgeted itself (the pcall has returned): let it put the old hook back
      local running = debug.getinfo(2, 'f')
      if running and running.func == budgeted then return end
      if not stop then -- the first stop names where the loop was; the later ones repeat it
        debug.sethook(hook, '', 1)
        local where = debug.getinfo(2, 'Sl')
        local at = where and where.currentline and where.currentline > 0
          and string.format(' (last at %s:%d)', where.short_src, where.currentline) or ''
        stop = string.format('%s %d million Lua instructions without finishing%s: an endless loop? (a loop whose condition never turns false: a stride that stays 0, an index that never grows)',
          BUDGET_MARK, limit // 1000000, at)
      end
      error(stop, 0)
    end
  end
  debug.sethook(hook, '', BUDGET_STEP)
  local r = table.pack(pcall(fn, ...))
  debug.sethook(old_fn, old_mask or '', old_count or 0)
  return r, spent
end
M._budgeted = budgeted

--- lesson.trace(info): names the run (a kernels call's info) that :check draws in the step's
--- scene after the check, when lesson.try did not see the student's kernel launched (a check
--- that runs it another way, as kernels.puzzles.check does). lesson.trace() returns the run of
--- the last check, or nil.
function M.trace(info)
  if info == nil then return S.trace end
  S.trace = info
end

--- lesson.need(env, name [, kind]): env[name] when it is of type kind (default 'function'): true,
--- value; else false, a text saying what to define.
function M.need(env, name, kind)
  kind = kind or 'function'
  local v = env[name]
  if v == nil then
    return false, say(string.format('%s is not defined yet: define %s %s', name,
      kind == 'function' and 'the function' or 'the variable', name),
      string.format('还没有定义 %s：请定义%s %s', name, kind == 'function' and '函数' or '变量', name))
  end
  if kind ~= 'any' and type(v) ~= kind and not (kind == 'tensor' and lm.is_tensor(v)) then
    return false, say(string.format('%s is a %s; it should be a %s', name, type(v), kind),
      string.format('%s 是 %s，应该是 %s', name, type(v), kind))
  end
  return true, v
end

-- a .. b in Chinese text: a space between a Latin (or digit) end and a Chinese start, as the
-- lessons write `用 Lua 写`.
local function zh_join(a, b)
  if a:match('[%w%)%]\'`_]$') and b:byte(1) and b:byte(1) >= 0xE0 then return a .. ' ' .. b end
  return a .. b
end
M._zh_join = zh_join

local function as_array(v)
  if lm.is_tensor(v) then
    if v:is_closed() then return nil end
    return v:dim() == 0 and { v:item() } or v:contiguous():view(-1):tolist()
  end
  if type(v) == 'table' then return v end
  return nil
end

--- lesson.compare(got, want [, opts]): ok, message. got/want: tensors or arrays of numbers.
--- opts: what (text naming the result), tol (relative, default 1e-4), zero_based (also name the
--- 0-based index), why(i, got_i, want_i) -> text (what to look at).
function M.compare(got, want, opts)
  opts = opts or {}
  local what = opts.what or say('your result', '你的结果')
  local whats = { en = T.pick(what, 'en'), zh = T.pick(what, 'zh') }
  local g, w = as_array(got), as_array(want)
  assert(w, 'lesson.compare: want must be a tensor or an array')
  if g == nil then
    return false, say(string.format('%s is %s; expected %d numbers (a tensor or a table)', whats.en,
      got == nil and 'nil (nothing was returned)' or 'a ' .. type(got), #w),
      string.format('%s；应该是 %d 个数（张量或表）', zh_join(whats.zh, '是 ' ..
        (got == nil and 'nil（什么也没有返回）' or type(got))), #w))
  end
  if #g ~= #w then
    return false, say(string.format('%s has %d element%s, expected %d', whats.en, #g, #g == 1 and '' or 's', #w),
      zh_join(whats.zh, string.format('有 %d 个元素，应该有 %d 个', #g, #w)))
  end
  local tol = opts.tol or 1e-4
  for i = 1, #w do
    local a, b = tonumber(g[i]), w[i]
    if a == nil or a ~= a or math.abs(a - b) > tol * math.max(1, math.abs(b)) then
      local idx_en = opts.zero_based and string.format(' (index %d from 0)', i - 1) or ''
      local idx_zh = opts.zero_based and string.format('（从 0 数的下标 %d）', i - 1) or ''
      local en = string.format('element %d%s of %s is %s, expected %s', i, idx_en, whats.en,
        a == nil and tostring(g[i]) or num_text(a), num_text(b))
      local zh = zh_join(whats.zh, string.format('中第 %d 个元素%s是 %s，应为 %s', i, idx_zh,
        a == nil and tostring(g[i]) or num_text(a), num_text(b)))
      local why = opts.why and opts.why(i, a, b)
      if why then
        en = en .. ': ' .. T.pick(why, 'en')
        zh = zh .. '：' .. T.pick(why, 'zh')
      end
      return false, say(en, zh)
    end
  end
  return true
end

--- lesson.scan_why(x, got, asked): a text naming the scan mistake that got shows for the input x
--- (arrays of numbers or tensors; asked: 'inclusive' or 'exclusive', the scan that was asked
--- for), or nil: the other scan (exclusive for inclusive, inclusive for exclusive), the other scan
--- shifted, the input unchanged. Compare with the input as it was before the student's code ran.
function M.scan_why(x, got, asked)
  x, got = as_array(x), as_array(got)
  if not x or not got or #got ~= #x then return nil end
  local inc, exc, s = {}, {}, 0
  for i = 1, #x do exc[i] = s; s = s + x[i]; inc[i] = s end
  local function same(a, b)
    for i = 1, #b do
      local v = tonumber(a[i])
      if not v or math.abs(v - b[i]) > 1e-4 * math.max(1, math.abs(b[i])) then return false end
    end
    return true
  end
  if #x > 0 and asked == 'exclusive' and same(got, inc) then
    return say('that is the inclusive scan: output i of an exclusive scan leaves input i out (start from 0; store, then add)',
      '这是包含扫描：排他扫描的第 i 个输出不含第 i 个输入（从 0 开始；先存，再加）')
  end
  if #x > 0 and asked == 'inclusive' and same(got, exc) then
    return say('that is the exclusive scan: output i of an inclusive scan includes input i (add, then store)',
      '这是排他扫描：包含扫描的第 i 个输出要包含第 i 个输入（先加，再存）')
  end
  if #x > 1 and same(got, x) then
    return say('that is the input unchanged: the scan was not applied', '这就是原样的输入：扫描没有做')
  end
  return nil
end

-- ---------------------------------------------------------------- opening and moving

local function current_step() return S.lesson.steps[S.index] end

local function note_step()
  if not S.record then return end
  local p = get_progress()
  if p.unusable then return end -- said once, when it was read
  p.last = S.name
  lesson_progress(S.name).at = S.index
  save_progress()
end

--- lesson.open(name [, {env=, step=, quiet=, record=}]): opens a lesson (at step 1, or opts.step)
--- and returns its table. env: the environment its code runs in (default the globals).
function M.open(name, opts)
  if opts ~= nil and type(opts) ~= 'table' then
    error('lesson.open: options must be a table {env=, step=, record=}, got ' .. type(opts), 2)
  end
  opts = opts or {}
  local entry, err = name, nil
  if type(name) ~= 'table' then entry, err = M.find(name) end
  if not entry then error(err, 2) end
  local lesson, lerr = M.load(entry.path)
  if not lesson then error('lesson.open: ' .. lerr, 2) end
  local env = opts.env or _G
  if type(env) ~= 'table' then error('lesson.open: env must be a table, got ' .. type(env), 2) end
  S.lesson, S.name, S.path = lesson, entry.name, entry.path
  S.env, S.proxy = env, make_proxy(env)
  S.ran, S.hints, S.drafts, S.defined = {}, {}, {}, {}
  S.record = opts.record ~= false
  local step = opts.step or 1
  if math.type(step) ~= 'integer' or step < 1 or step > #lesson.steps then step = 1 end
  S.index = step
  note_step()
  return lesson
end

--- Opens a lesson from a table (the tests, lesson.verify): like lesson.open.
function M._open_table(lesson, name, opts)
  opts = opts or {}
  S.lesson, S.name, S.path = lesson, name or 'lesson', opts.path
  S.env = opts.env or setmetatable({}, { __index = _G })
  S.proxy = make_proxy(S.env)
  S.ran, S.hints, S.drafts, S.defined = {}, {}, {}, {}
  S.record = opts.record ~= false
  S.index = 1
  return lesson
end

--- lesson.current(): the open lesson's table and name, or nil.
function M.current() return S.lesson, S.name end

--- lesson.step([n]): the current step's index; with n, goes to step n first.
function M.step(n)
  need_open('lesson.step')
  if n ~= nil then
    if math.type(n) ~= 'integer' and not (type(n) == 'number' and n == math.floor(n)) then
      error('lesson.step: n must be an integer, got ' .. (type(n) == 'number' and tostring(n) or type(n)), 2)
    end
    n = math.floor(n)
    if n < 1 or n > #S.lesson.steps then
      error(string.format('lesson.step: %s has steps 1..%d, not %d', S.name, #S.lesson.steps, n), 2)
    end
    S.index = n
    note_step()
  end
  return S.index
end

--- lesson.next() / lesson.prev(): move one step; false at either end.
function M.next()
  need_open('lesson.next')
  if S.index >= #S.lesson.steps then return false end
  S.index = S.index + 1
  note_step()
  return true
end

function M.prev()
  need_open('lesson.prev')
  if S.index <= 1 then return false end
  S.index = S.index - 1
  note_step()
  return true
end

-- ---------------------------------------------------------------- checking

-- Evaluates the text after :check in the lesson's environment: its value, or the text itself.
local function answer_value(text)
  if text == nil or text == '' then return nil end
  local fn = load('return ' .. text, '=:check', 't', S.proxy)
  if not fn then return text end
  local ok, v = pcall(fn)
  if not ok then
    if tostring(v):find('interrupted!', 1, true) then error(v, 0) end
    return text
  end
  return v
end

--- Calls the exercise's check (within the budget of Lua instructions); returns ok and the message
--- as a text (not yet picked), and whether the check itself raised.
local function call_check(ex, answer)
  S.capture, S.echo = {}, false -- a check's own prints stay out of the way
  S.trace = nil
  local r = budgeted(ex.check, S.env, answer)
  S.capture, S.echo = nil, true
  if not r[1] then
    local e = tostring(r[2])
    if e:find('interrupted!', 1, true) then error(r[2], 0) end
    local part = first_part(e)
    if e:find(BUDGET_MARK, 1, true) then
      return false, say('your code ' .. part:gsub('^' .. BUDGET_MARK, 'was stopped after'),
        '你的代码运行了 ' .. (M.budget // 1000000) .. ' 百万条 Lua 指令仍未结束，被叫停了：是不是死循环？（循环条件永远不会变假：步长一直是 0，或下标从不增长）'), false
    end
    return false, say('the check stopped with an error: ' .. part, '检查时出错：' .. part), true
  end
  return r[2] == true, r[3]
end
M._call_check = function(ex, answer) return call_check(ex, answer) end

--- lesson.check([answer]): checks the current step's exercise (answer: a value, passed to the
--- check). Returns ok, message (in the current language).
function M.check(answer)
  need_open('lesson.check')
  local step = current_step()
  local ex = step.exercise
  if not ex then
    return false, tr(string.format('step %d has no exercise to check', S.index),
      string.format('第 %d 步没有要检查的练习', S.index))
  end
  local ok, msg = call_check(ex, answer)
  if ok and S.record then
    lesson_progress(S.name).solved[S.index] = true
    save_progress()
  end
  local text = msg ~= nil and T.pick(msg) or nil
  if type(text) ~= 'string' then
    text = ok and '' or tr('the check gave no reason', '检查没有给出原因')
  end
  return ok, text
end

--- lesson.scene([i]): goes to step i (default: the current one) and shows its scene as entering
--- the step does (in a notebook, an inline picture). Returns whether a scene was shown.
function M.scene(i)
  need_open('lesson.scene')
  if i ~= nil then M.step(i) end
  return require('lumen.lesson_repl')._show_scene(S.index) == true
end

--- lesson.verdict([i]): goes to step i (default: the current one) and checks its exercise as
--- :check does, printing the verdict, and when it is not right yet the next hint. Returns ok.
--- What a lesson notebook's check cells call.
function M.verdict(i)
  need_open('lesson.verdict')
  if i ~= nil then M.step(i) end
  S.capture, S.echo, S.before_output = nil, true, nil
  return require('lumen.lesson_repl')._verdict() == true
end

-- ---------------------------------------------------------------- texts and output

function M._count_exercises(lesson)
  local n = 0
  for _, s in ipairs(lesson.steps) do if s.exercise then n = n + 1 end end
  return n
end

--- The lines of a step as the REPL shows them (text and exercise prompt), for the tests: an
--- array of strings in language lang at width columns.
function M._render(i, lang, width)
  need_open('lesson.render')
  local step = S.lesson.steps[i]
  local lines, verbatim = {}, {}
  local function add(t, indent)
    local ls, v = T.layout(T.pick(t, lang), width, indent or '')
    for k, l in ipairs(ls) do
      lines[#lines + 1] = l
      verbatim[#lines] = v[k]
    end
  end
  if step.title then add(step.title) end
  add(step.text)
  if step.exercise then
    add(step.exercise.prompt, '  ')
    for _, h in ipairs(step.exercise.hints or {}) do add(h, '  ') end
  end
  return lines, verbatim
end

--- Output normalised for comparison with expect: trailing blanks of lines and final newlines cut.
function M._normalize(s)
  return (s:gsub('[ \t]+\n', '\n'):gsub('[ \t]+$', ''):gsub('\n+$', ''))
end

-- ---------------------------------------------------------------- the REPL's commands

-- What lumen/lesson_repl.lua (the display and the : commands) needs from here.
M._internal = {
  S = S, run_code = function(...) return run_code(...) end, run_step_code = function(...) return run_step_code(...) end, prerequisites = function(i) return prerequisites(i) end,
  chunkname = function(...) return chunkname(...) end, lesson_progress = function(n) return lesson_progress(n) end,
  save_progress = function() return save_progress() end, get_progress = function() return get_progress() end,
  answer_value = function(t) return answer_value(t) end,
}

--- lesson.command(name, arg): a REPL command (:next, :check 17, ...), printing what it does.
function M.command(name, arg)
  S.capture, S.echo, S.before_output = nil, true, nil -- after a Ctrl-C, whatever ran before is over
  return require('lumen.lesson_repl').command(name, arg)
end

--- lumen --lesson NAME: checks the name now (0, or 1 after saying why, with the nearest names)
--- and opens the lesson as :lesson does when the REPL starts (lumen.repl.startup).
function M._cli_lesson(name)
  local entry, err = M.find(name)
  if not entry then
    io.stderr:write((err:gsub('^lesson.open: ', 'lumen --lesson: ')), '\n')
    return 1
  end
  local repl = require 'lumen.repl'
  repl.startup = function()
    repl.startup = nil
    M.command('lesson', name)
  end
  return 0
end

-- ---------------------------------------------------------------- verifying a lesson file

--- lesson.verify(path [, {quiet=}]): what `lumen --check-lesson FILE` runs: the file's fields
--- (lesson.validate), then every step in a fresh environment: its code runs (and prints its
--- expect), its scene renders offscreen, its exercise refuses the untouched state and each wrong
--- answer and accepts its solution; texts lay out in every language. Returns ok, problems
--- (array of strings "FILE: step N: field: ..."), warnings.
-- The process-wide state a lesson's code can change (kernels.racecheck, the latency model, the
-- language): the walk of a lesson restores it after every step, so one step cannot change how the
-- next is checked.
local function process_state()
  local K = require 'kernels'
  local lang, why = lm.sys.lang()
  return { racecheck = K and K.racecheck(), latency = K and K.latency(), lang = why == ':lang' and lang or false }
end
local function restore_state(st)
  local K = require 'kernels'
  if K and st.racecheck ~= nil then K.racecheck(st.racecheck) end
  if K and st.latency then K.latency(st.latency) end
  lm.sys.lang(st.lang)
end
M._process_state, M._restore_state = process_state, restore_state

-- While a lesson file is checked, os.exit is an error naming the caller (the lesson would end
-- the check, and --check-lesson would report nothing).
local function guard_exit()
  local real = os.exit
  os.exit = function(code)
    error(string.format('the lesson called os.exit(%s): a lesson must not end the program', tostring(code)), 2)
  end
  return function() os.exit = real end
end

function M.verify(path, opts)
  opts = opts or {}
  local Fm = format()
  local unguard = guard_exit()
  local lesson, err = Fm.load(path)
  if not lesson then unguard() return false, { err }, {} end
  local problems, warnings = Fm.validate(lesson, path)
  if #problems > 0 then unguard() return false, problems, warnings end
  local saved = { S.lesson, S.name, S.path, S.index, S.env, S.proxy, S.ran, S.hints, S.drafts, S.record }
  local langs = Fm.languages(lesson)
  local state = process_state()
  local ok, e = pcall(M._walk, lesson, path, langs, problems, opts)
  restore_state(state)
  unguard()
  S.lesson, S.name, S.path, S.index, S.env, S.proxy, S.ran, S.hints, S.drafts, S.record = table.unpack(saved, 1, 10)
  if not ok then
    if tostring(e):find('interrupted!', 1, true) then error(e, 0) end
    problems[#problems + 1] = path .. ': the walk stopped: ' .. tostring(e)
  end
  return #problems == 0, problems, warnings
end

local function both_langs(msg, langs)
  if #langs < 2 then return true end
  return type(msg) == 'table' and type(msg.en) == 'string' and type(msg.zh) == 'string'
end

local function render_scene(step, where, problems, viz)
  local sc, ok, e = step.scene, nil, nil
  if type(sc) == 'function' then
    local fok, info, vopts = M.try(sc, S.env)
    if not fok then
      problems[#problems + 1] = where .. 'scene: the function failed: ' .. T.pick(info, 'en')
      return
    end
    ok, e = pcall(viz.show, info, vopts)
  else
    local name, vopts = sc, {}
    if type(sc) == 'table' then
      name = sc[1]
      for k, v in pairs(sc) do if k ~= 1 then vopts[k] = v end end
    end
    ok, e = pcall(viz.scene, name, vopts)
  end
  if not ok then
    problems[#problems + 1] = where .. 'scene: ' .. tostring(e)
    return
  end
  viz.redraw()
  if #viz.layout() == 0 then problems[#problems + 1] = where .. 'scene: the frame has nothing in it' end
end

-- The walk of lesson.verify (in a protected call; S is restored by the caller).
function M._walk(lesson, path, langs, problems, opts)
  M._open_table(lesson, (path:match('([^/]+/[^/]+)%.lua$') or path), { record = false, path = path })
  local viz = format().scenes() and require('viz') or nil
  local start = process_state()
  for i, step in ipairs(lesson.steps) do
    local where = path .. ': step ' .. i .. ': '
    S.index = i
    restore_state(start) -- what an earlier step's code changed process-wide does not carry over
    -- wrapped lines fit any width; lines kept as they are (indented) fit 80 columns
    for _, l in ipairs(langs) do
      for _, width in ipairs({ 80, opts.width or 44 }) do
        local lines, verbatim = M._render(i, l, width)
        for k, line in ipairs(lines) do
          local limit = verbatim[k] and 80 or width
          if T.width(line) > limit then
            problems[#problems + 1] = string.format('%stext: a line is wider than %d columns in %s: %s', where,
              limit, l, line)
            break
          end
        end
      end
    end
    local ok, o = M.run()
    if not ok then
      problems[#problems + 1] = where .. 'code: raised an error: ' .. o
    elseif step.expect and M._normalize(o) ~= M._normalize(step.expect) then
      problems[#problems + 1] = where .. 'expect: the code printed\n' .. o .. '\ninstead of\n' .. step.expect
    end
    if step.scene ~= nil and viz then render_scene(step, where, problems, viz) end
    local ex = step.exercise
    if ex then
      local w = where .. 'exercise.'
      local cok, msg, raised = call_check(ex, nil)
      if cok then problems[#problems + 1] = w .. 'check: accepts the untouched state (before any answer)'
      elseif raised then problems[#problems + 1] = w .. 'check: raised on the untouched state: ' .. T.pick(msg, 'en')
      elseif not both_langs(msg, langs) then
        problems[#problems + 1] = w .. 'check: its message is not a text in every language ({en=, zh=}): ' .. tostring(T.pick(msg, 'en'))
      end
      local wrongs = type(ex.wrong) == 'string' and { ex.wrong } or ex.wrong or {}
      for k, code in ipairs(wrongs) do
        local rok, ro = M.run(code, { name = chunkname(i, 'wrong ' .. k) })
        if not rok then
          problems[#problems + 1] = w .. 'wrong[' .. k .. ']: raised an error when run: ' .. ro
        else
          local wok, wmsg, wraised = call_check(ex, nil)
          if wok then problems[#problems + 1] = w .. 'wrong[' .. k .. ']: the check accepts it'
          elseif wraised then problems[#problems + 1] = w .. 'wrong[' .. k .. ']: the check raised: ' .. T.pick(wmsg, 'en')
          elseif not both_langs(wmsg, langs) then
            problems[#problems + 1] = w .. 'wrong[' .. k .. ']: the message is not a text in every language'
          elseif opts.messages then
            opts.messages[#opts.messages + 1] = { step = i, wrong = k, msg = wmsg }
          end
        end
      end
      local sok, so = M.run(ex.solution, { name = chunkname(i, 'solution') })
      if not sok then
        problems[#problems + 1] = w .. 'solution: raised an error when run: ' .. so
      else
        local aok, amsg = call_check(ex, nil)
        if not aok then
          problems[#problems + 1] = w .. 'solution: the check refuses it: ' .. tostring(T.pick(amsg, 'en'))
        end
      end
    end
  end
end

-- ---------------------------------------------------------------- the mutation corpus

--- lesson.mutants(path [, {ops=, sample=, on_mutant=}]): every exercise whose solution defines a function
--- is checked against the mutants of that function (lumen.mutants: a dropped t:sync() or atomic,
--- a guard's < for <=, an index or a loop bound off by one, a dropped zero-fill, a stride loop run
--- once), each run in the lesson's environment at its step and then checked as a student's answer
--- would be. Returns a report: {lesson =, exercises = {{step =, generated =, refused =, equivalent
--- =, survivors = {mutant...}}}}. An exercise may list mutants that are right answers
--- (exercise.equivalent = {[what] = why}): they are counted apart and must be accepted.
function M.mutants(path, opts)
  opts = opts or {}
  local Fm = format()
  local Mu = require 'lumen.mutants'
  local lesson = assert(Fm.load(path))
  local saved = { S.lesson, S.name, S.path, S.index, S.env, S.proxy, S.ran, S.hints, S.drafts, S.record }
  local report = { lesson = (path:match('([^/]+/[^/]+)%.lua$') or path), exercises = {} }
  local ok, e = pcall(function()
    M._open_table(lesson, report.lesson, { record = false, path = path })
    -- the steps after the last exercise with a function to mutate set up nothing it needs: not run
    local last = 0
    for i, step in ipairs(lesson.steps) do
      if step.exercise and step.exercise.solution:find('function', 1, true) then last = i end
    end
    for i, step in ipairs(lesson.steps) do
      if i > last then break end
      S.index = i
      M.run()
      local ex = step.exercise
      if ex and ex.solution:find('function', 1, true) then
        local r = { step = i, generated = 0, refused = 0, equivalent = 0, survivors = {}, wrongly_refused = {} }
        local equivalent = ex.equivalent or {}
        for _, m in ipairs(Mu.generate(ex.solution, { ops = opts.ops })) do
          if opts.sample and not opts.sample(m) then goto next_mutant end
          r.generated = r.generated + 1
          M.run(m.code, { name = chunkname(i, 'mutant') }) -- a run that fails still defines the function
          local cok, msg = call_check(ex, nil)
          if opts.on_mutant then opts.on_mutant(i, m, cok, msg) end
          if equivalent[m.what] then
            r.equivalent = r.equivalent + 1
            if not cok then r.wrongly_refused[#r.wrongly_refused + 1] = m end
          elseif cok then
            r.survivors[#r.survivors + 1] = m
          else
            r.refused = r.refused + 1
          end
          ::next_mutant::
        end
        M.run(ex.solution, { name = chunkname(i, 'solution') })
        report.exercises[#report.exercises + 1] = r
      end
    end
  end)
  S.lesson, S.name, S.path, S.index, S.env, S.proxy, S.ran, S.hints, S.drafts, S.record = table.unpack(saved, 1, 10)
  if not ok then
    if tostring(e):find('interrupted!', 1, true) then error(e, 0) end
    report.error = tostring(e)
  end
  return report
end

--- lesson.validate(path): ok, problems, warnings (the fields only; lesson.verify runs it too).
function M.validate(path)
  local Fm = format()
  local lesson, err = Fm.load(path)
  if not lesson then return false, { err }, {} end
  local problems, warnings = Fm.validate(lesson, path)
  return #problems == 0, problems, warnings
end

--- lumen --check-lesson FILE: prints what is wrong (or a summary) and returns the exit status.
function M._check_file(path)
  if type(path) ~= 'string' then
    io.stderr:write('lumen --check-lesson: give the lesson file (lessons/<course>/<NN>-<slug>.lua)\n')
    return 1
  end
  local ok, problems, warnings = M.verify(path)
  for _, w in ipairs(warnings or {}) do io.stderr:write('warning: ', w, '\n') end
  if not ok then
    for _, p in ipairs(problems) do io.stderr:write(p, '\n') end
    io.stderr:write(string.format('%s: %d problem%s\n', path, #problems, #problems == 1 and '' or 's'))
    return 1
  end
  local lesson = format().load(path)
  local nex = M._count_exercises(lesson)
  io.stdout:write(string.format('%s: ok (%d steps, %d exercise%s, languages: %s)\n', path, #lesson.steps,
    nex, nex == 1 and '' or 's', table.concat(format().languages(lesson), ', ')))
  return 0
end

return M
