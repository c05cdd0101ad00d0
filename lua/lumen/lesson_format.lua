--[[
lumen.lesson_format — reading a lesson file and checking it against the format of docs/lessons.md.

load(path) runs the file (a syntax or run-time error names the file and line) and returns its
table; validate(lesson, path) lists every problem as "FILE: step N: FIELD: what is wrong" (and
warnings: a text in one language only), so a teacher sees all of them at once. The fields are
data (lesson_fields, step_fields, exercise_fields): a typo in a field name is a problem, not a
silently ignored key. What --check-lesson runs beyond this (the steps' code, scenes and checks)
is lesson.verify, in lumen/lesson.lua. Read next: lumen/lesson.lua.
]]
local T = require 'lumen.lesson_text'

local F = {}

-- ---------------------------------------------------------------- the fields

local function is_code(v) return type(v) == 'string' end
local function is_text(v) return T.is_text(v) end

-- name, required, kind (for the message), predicate
F.lesson_fields = {
  { 'title', true, 'a text (a string or {en=, zh=})', is_text },
  { 'course', true, 'a string', function(v) return type(v) == 'string' and v:match('^[%w_-]+$') ~= nil end },
  { 'lecture', true, 'a text', is_text },
  { 'summary', true, 'a text', is_text },
  { 'steps', true, 'an array of steps', function(v) return type(v) == 'table' end },
}
F.step_fields = {
  { 'text', true, 'a text (a string or {en=, zh=})', is_text },
  { 'code', true, 'a string of Lua code', is_code },
  { 'title', false, 'a text', is_text },
  { 'expect', false, 'a string (the output of the code)', function(v) return type(v) == 'string' end },
  { 'scene', false, "a scene name, {'name', option=value, ...} or a function(env) returning a kernel's info",
    function(v) return type(v) == 'string' or type(v) == 'function' or type(v) == 'table' end },
  { 'exercise', false, 'a table {prompt=, check=, solution=, wrong=, hints=}', function(v) return type(v) == 'table' end },
}
F.exercise_fields = {
  { 'prompt', true, 'a text', is_text },
  { 'check', true, 'a function(env, answer) returning ok, message', function(v) return type(v) == 'function' end },
  { 'solution', true, 'a string of Lua code', is_code },
  { 'wrong', false, 'a string of Lua code or an array of them',
    function(v)
      if type(v) == 'string' then return true end
      if type(v) ~= 'table' or #v == 0 then return false end
      for _, s in ipairs(v) do if type(s) ~= 'string' then return false end end
      return true
    end },
  { 'hints', false, 'an array of texts',
    function(v)
      if type(v) ~= 'table' then return false end
      for _, s in ipairs(v) do if not T.is_text(s) then return false end end
      return true
    end },
  { 'equivalent', false, "a table {[a mutant's description] = why it is a right answer (a text)}",
    function(v)
      if type(v) ~= 'table' then return false end
      for k, why in pairs(v) do if type(k) ~= 'string' or not T.is_text(why) then return false end end
      return true
    end },
}

local function describe(v)
  if type(v) == 'string' then return string.format('the string %q', #v > 30 and v:sub(1, 27) .. '...' or v) end
  return 'a ' .. type(v)
end

local function field_names(fields)
  local names = {}
  for _, f in ipairs(fields) do names[#names + 1] = f[1] end
  return table.concat(names, ', ')
end

-- ---------------------------------------------------------------- loading

--- Runs a lesson file. Returns its table, or nil and a message naming the file (and the line of
--- a syntax or run-time error).
function F.load(path)
  local src, err = lm.sys.read_file(path) -- a regular file: a FIFO would block, /dev/zero never end
  if not src then return nil, string.format('%s: cannot read the lesson file (%s)', path, err) end
  local env = setmetatable({}, { __index = _G })
  local chunk, cerr = load(src, '@' .. path, 't', env)
  if not chunk then return nil, cerr .. ' (a syntax error in the lesson file)' end
  local ok, res = pcall(chunk)
  if not ok then return nil, tostring(res) .. ' (while running the lesson file)' end
  if type(res) ~= 'table' then
    return nil, string.format('%s: the file must return the lesson table {title=, course=, lecture=, '
      .. 'summary=, steps=}, got %s', path, res == nil and 'nothing' or describe(res))
  end
  return res
end

-- ---------------------------------------------------------------- validation

local function check_fields(t, fields, where, problems, warnings)
  local known = {}
  for _, f in ipairs(fields) do
    local name, required, kind, ok = f[1], f[2], f[3], f[4]
    known[name] = true
    local v = rawget(t, name)
    if v == nil then
      if required then problems[#problems + 1] = where .. name .. ': missing (' .. kind .. ')' end
    elseif not ok(v) then
      problems[#problems + 1] = where .. name .. ' must be ' .. kind .. ', got ' .. describe(v)
    elseif type(v) == 'table' and is_text(v) and warnings and not (v.en and v.zh) then
      warnings[#warnings + 1] = where .. name .. ': only in ' .. (v.en and 'English' or 'Chinese')
    elseif type(v) == 'string' and kind:find('^a text') and warnings then
      warnings[#warnings + 1] = where .. name .. ': one language only (a string, not {en=, zh=})'
    end
  end
  for k in pairs(t) do
    if not known[k] then
      problems[#problems + 1] = where .. tostring(k) .. ': not a field here (the fields are '
        .. field_names(fields) .. ')'
    end
  end
end

local function compiles(code, where, problems)
  local fn, err = load(code, '=' .. where:gsub(': $', ''), 't', {})
  if not fn then problems[#problems + 1] = where .. 'does not compile: ' .. err end
end

local function check_scene(scene, where, problems, scenes)
  if type(scene) == 'function' then return end
  local name = type(scene) == 'string' and scene or scene[1]
  if type(name) ~= 'string' then
    problems[#problems + 1] = where .. "scene: a table scene starts with the scene's name ({'scan', n = 8}), got "
      .. describe(name)
    return
  end
  if type(scene) == 'table' then
    for k in pairs(scene) do
      if k ~= 1 and type(k) ~= 'string' then
        problems[#problems + 1] = where .. 'scene: options are named (n = 8), got the key ' .. tostring(k)
      end
    end
  end
  if scenes and not scenes[name] then
    local list = {}
    for s in pairs(scenes) do list[#list + 1] = s end
    table.sort(list)
    problems[#problems + 1] = string.format("%sscene: there is no scene '%s' in this build (there are: %s)",
      where, name, table.concat(list, ', '))
  end
end

--- The scenes of this build as a set, or nil when it has no visualizer.
function F.scenes()
  local ok, viz = pcall(require, 'viz')
  if not ok or type(viz) ~= 'table' or viz.built == false or type(viz.scenes) ~= 'function' then return nil end
  local ok2, list = pcall(viz.scenes)
  if not ok2 then return nil end
  local set = {}
  for _, s in ipairs(list) do set[s.name] = true end
  return set
end

local function check_exercise(ex, where, problems, warnings)
  check_fields(ex, F.exercise_fields, where .. 'exercise.', problems, warnings)
  if type(ex.solution) == 'string' then compiles(ex.solution, where .. 'exercise.solution: ', problems) end
  local wrong = type(ex.wrong) == 'string' and { ex.wrong } or (type(ex.wrong) == 'table' and ex.wrong or {})
  for k, w in ipairs(wrong) do
    if type(w) == 'string' then compiles(w, where .. 'exercise.wrong[' .. k .. ']: ', problems) end
  end
  if ex.wrong == nil and warnings then
    warnings[#warnings + 1] = where .. 'exercise.wrong: none given (the tests cannot show that the check refuses a mistake)'
  end
end

--- Every problem of a lesson table (path names the file in messages): an array of strings, and
--- an array of warnings. Empty problems: the lesson is valid.
function F.validate(lesson, path)
  local problems, warnings = {}, {}
  local at = (path or 'lesson') .. ': '
  if type(lesson) ~= 'table' then
    return { at .. 'a lesson is a table, got ' .. describe(lesson) }, warnings
  end
  check_fields(lesson, F.lesson_fields, at, problems, warnings)
  if path and type(lesson.course) == 'string' then
    local dir = path:match('([^/]+)/[^/]+$')
    if dir and path:match('/lessons/') and dir ~= lesson.course then
      problems[#problems + 1] = at .. "course: '" .. lesson.course .. "' but the file is in the directory '" .. dir .. "'"
    end
  end
  local steps = rawget(lesson, 'steps')
  if type(steps) ~= 'table' then return problems, warnings end
  if getmetatable(steps) ~= nil then -- its __len or __index could say anything (1e9 steps)
    problems[#problems + 1] = at .. 'steps: a plain array of steps, but it has a metatable'
    return problems, warnings
  end
  if #steps > 1000 then
    problems[#problems + 1] = string.format('%ssteps: %d steps; a lesson has at most 1000', at, #steps)
    return problems, warnings
  end
  if #steps == 0 then problems[#problems + 1] = at .. 'steps: the lesson has no steps' end
  for k in pairs(steps) do
    if math.type(k) ~= 'integer' or k < 1 or k > #steps then
      problems[#problems + 1] = at .. 'steps: an array of steps, but it has the key ' .. tostring(k)
    end
  end
  local scenes = F.scenes()
  for i, step in ipairs(steps) do
    local where = at .. 'step ' .. i .. ': '
    if type(step) ~= 'table' then
      problems[#problems + 1] = where .. 'a step is a table {text=, code=, ...}, got ' .. describe(step)
    else
      check_fields(step, F.step_fields, where, problems, warnings)
      if type(step.code) == 'string' then compiles(step.code, where .. 'code: ', problems) end
      if step.scene ~= nil then check_scene(step.scene, where, problems, scenes) end
      if type(step.exercise) == 'table' then check_exercise(step.exercise, where, problems, warnings) end
    end
  end
  return problems, warnings
end

--- The languages a lesson is written in (those of its first step's text).
function F.languages(lesson)
  local t = lesson.steps and lesson.steps[1] and lesson.steps[1].text
  if type(t) == 'table' then
    local out = {}
    for _, l in ipairs(T.langs) do if t[l] then out[#out + 1] = l end end
    return out
  end
  return { (T.lang()) }
end

return F
