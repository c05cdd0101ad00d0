-- The lesson runner (lua/lumen/lesson*.lua, docs/lessons.md): text widths and wrapping, the
-- language, validation of lesson files (each message names the file, step and field), finding
-- lessons, running code in the lesson's environment, checks, the commands through the piped REPL,
-- progress (saved, resumed, corrupt files), --lesson and --check-lesson. Lessons used here are
-- written to a temporary directory; the program runs with a temporary XDG_STATE_HOME. The walk of
-- the real lessons is tests/lessons/; the REPL under a terminal is tests/repl/test_lesson_repl.c.
local test = require 'lumen.test'
local T = require 'lumen.lesson_text'
local F = require 'lumen.lesson_format'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local tmp = os.tmpname()
os.remove(tmp)
local root = tmp .. '-lessons'
local state = tmp .. '-state'
os.execute('mkdir -p ' .. q(root .. '/demo') .. ' ' .. q(root .. '/bad') .. ' ' .. q(state))

local function write(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
  return path
end

local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read('a')
  f:close()
  return s
end

-- Runs lumen with a lesson path and state of the test's own; returns stdout, stderr, status.
local function run(args, input, env)
  local inp = write(tmp .. '.in', input or '')
  local cmd = string.format('env XDG_STATE_HOME=%s LUMEN_LESSON_PATH=%s SDL_VIDEODRIVER=offscreen LP_NUM_THREADS=1 '
    .. 'LUMEN_LANG= LANG=C.UTF-8 COLUMNS=80 %s %s %s < %s 2> %s', q(state), q(root), env or '', q(exe), args, q(inp),
    q(tmp .. '.err'))
  local p = io.popen(cmd)
  local out = p:read('a')
  local _, _, code = p:close()
  return out, read(tmp .. '.err') or '', code
end

-- A small lesson in both languages: two steps, one exercise.
local demo = [[
local say = lesson.say
return {
  title = say('Sums', '求和'), course = 'demo', lecture = say('Demo 1', '示例第 1 讲'),
  summary = say('Adding numbers.', '把数加起来。'),
  steps = {
    { title = say('Numbers', '数字'), text = say('We add numbers.', '我们把数加起来。'),
      code = "x = {3, 1, 7}\nprint('sum ' .. (x[1] + x[2] + x[3]))", expect = 'sum 11' },
    { text = say('Write total(t).', '写出 total(t)。'),
      code = "print('step two')",
      exercise = {
        prompt = say('Define total(t), the sum of an array.', '定义 total(t)，返回数组的和。'),
        hints = { say('A for loop.', '用 for 循环。'), say('s = s + v', 's = s + v') },
        check = function(env)
          local ok, f = lesson.need(env, 'total')
          if not ok then return false, f end
          local t = {}
          for i = 1, 7 do t[i] = math.random(1, 9) end
          local s = 0
          for _, v in ipairs(t) do s = s + v end
          local rok, got = lesson.try(f, t)
          if not rok then return false, got end
          if got ~= s then
            return false, say('total gave ' .. tostring(got) .. ', expected ' .. s, 'total 得到 ' .. tostring(got) .. '，应为 ' .. s)
          end
          return true, say('right', '对')
        end,
        solution = 'function total(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end',
        wrong = 'function total(t) return #t end',
      } },
    { text = say('The end.', '结束。'), code = 'y = x[1] * 2' },
  },
}
]]
local demo_path = write(root .. '/demo/01-sums.lua', demo)
write(root .. '/demo/02-more.lua', (demo:gsub("title = say%('Sums', '求和'%)", "title = say('More', '更多')")))

-- ------------------------------------------------------------------ text

test.case('widths: East Asian wide characters take two columns, marks none, colours none', function()
  test.eq(T.width('abc'), 3)
  test.eq(T.width('中文abc'), 7)
  test.eq(T.width('扫描，'), 6)
  test.eq(T.width('e\u{301}'), 1)
  test.eq(T.width('\27[1;31mred\27[0m'), 3)
  test.eq(T.width('ｆｕｌｌ'), 8)
  test.eq(T.width('\xff\xfe'), 2) -- not UTF-8: a column a byte, no error
end)

local closing = '，。、；：？！）」》'

test.case('wrapping: every line fits, nothing is lost, no line starts with closing punctuation', function()
  local words = { 'scan', 'Kogge-Stone', 'a', '__syncthreads()', '扫描', '线程', '（屏障）', 'x[i]', '前缀和',
                  '是一个很长的中文句子' }
  local marks = { '，', '。', '：', '）', '；' }
  for trial = 1, 200 do
    local parts = {}
    for k = 1, math.random(1, 40) do
      parts[k] = words[math.random(#words)]
      if math.random() < 0.3 then parts[k] = parts[k] .. marks[math.random(#marks)] end
      if math.random() < 0.5 then parts[k] = parts[k] .. ' ' end
    end
    local text = table.concat(parts)
    local width = math.random(12, 70)
    local lines = T.wrap_paragraph(text, width, '', '')
    local joined = {}
    for _, l in ipairs(lines) do
      -- closing punctuation may hang past the width (after a line's only word, or a cut word)
      local body = l
      while true do
        local cs = T.chars(body)
        local last = cs[#cs]
        if not last or not ('，。、；：？！）」』】》〉〕…—”’·％,.;:?!)]}%'):find(last[1], 1, true) then break end
        body = body:sub(1, #body - #last[1])
      end
      test.ok(T.width(body) <= width, string.format('trial %d: line of %d columns > %d: %q', trial, T.width(l), width, l))
      local first = T.chars(l)[1]
      if first and lines[1] ~= l then
        test.ok(not closing:find(first[1], 1, true), string.format('trial %d: a line starts with %s: %q', trial, first[1], l))
      end
      joined[#joined + 1] = l
    end
    test.eq((table.concat(joined):gsub(' ', '')), (text:gsub(' ', '')), 'trial ' .. trial)
  end
end)

test.case('layout: paragraphs, indented lines kept, bullets, Chinese lines joined without spaces', function()
  local lines, verbatim = T.layout([[
    One paragraph that is long enough to be wrapped at twenty columns.

      y[i] = x[0] + ... + x[i]   (kept as it is, however long it is)
    - a bullet that wraps onto a second line

    第一行中文
    接着第二行]], 20, '')
  test.eq(lines[1], 'One paragraph that')
  local kept
  for k, l in ipairs(lines) do if verbatim[k] then kept = l end end
  test.eq(kept, '  y[i] = x[0] + ... + x[i]   (kept as it is, however long it is)')
  local text = table.concat(lines, '\n')
  test.ok(text:find('\n%- a bullet that\n  wraps onto a'), text)
  test.ok(text:find('第一行中文接着第二行', 1, true), text)
  test.ok(text:find('\n\n', 1, true), 'a blank line between paragraphs: ' .. text)
end)

test.case('the language: :lang, else LUMEN_LANG, else LANG (zh_* is Chinese), else English', function()
  local function lang(env) return (run("-e 'print(lesson.lang())'", '', env)) end
  test.eq(lang(''), 'en\n')
  test.eq(lang('LANG=zh_CN.UTF-8'), 'zh\n')
  test.eq(lang('LANG=zh_TW.UTF-8 LUMEN_LANG=en'), 'en\n')
  test.eq(lang('LUMEN_LANG=zh'), 'zh\n')
  test.eq(lang('LUMEN_LANG=klingon LANG=zh_CN'), 'zh\n') -- an unknown LUMEN_LANG falls through
  local out = run('', ':lang zh\nprint(lesson.lang())\n:lang\n:lang fr\n', 'LANG=en_US.UTF-8')
  test.ok(out:find('语言：中文', 1, true), out)
  test.ok(out:find('\nzh\n', 1, true), out)
  test.ok(out:find('来自 :lang', 1, true), out)
  test.ok(out:find("unknown language 'fr'", 1, true), out)
end)

-- ------------------------------------------------------------------ validation

local function problems_of(lesson, path)
  local p = F.validate(lesson, path or 'x.lua')
  return table.concat(p, '\n')
end

local function good()
  return { title = 'T', course = 'demo', lecture = 'L', summary = 'S',
           steps = { { text = 't', code = 'x = 1' } } }
end

test.case('validate: a good lesson has no problems', function()
  test.eq(problems_of(good()), '')
  test.eq(problems_of(assert(F.load(demo_path)), demo_path), '')
end)

test.case('validate: each problem names the file, the step and the field', function()
  local l = good(); l.title = nil
  test.ok(problems_of(l):find('x.lua: title: missing', 1, true), problems_of(l))
  l = good(); l.steps[2] = { text = 'two' }
  test.ok(problems_of(l):find('x.lua: step 2: code: missing (a string of Lua code)', 1, true), problems_of(l))
  l = good(); l.steps[1].txet = 'typo'
  test.ok(problems_of(l):find("x.lua: step 1: txet: not a field here (the fields are text, code", 1, true), problems_of(l))
  l = good(); l.steps[1].code = 'x = = 1'
  test.ok(problems_of(l):find('x.lua: step 1: code: does not compile', 1, true), problems_of(l))
  l = good(); l.steps[1].exercise = { prompt = 'p', check = 'yes', solution = 'x = 2' }
  test.ok(problems_of(l):find('x.lua: step 1: exercise.check must be a function(env, answer) returning ok, message, got the string "yes"', 1, true), problems_of(l))
  l = good(); l.steps[1].exercise = { prompt = 'p', check = function() end, solution = 'x = ', wrong = { 'y = 1', 3 } }
  local p = problems_of(l)
  test.ok(p:find('x.lua: step 1: exercise.solution: does not compile', 1, true), p)
  test.ok(p:find('x.lua: step 1: exercise.wrong must be a string of Lua code or an array of them', 1, true), p)
  l = good(); l.steps[1].scene = 'no-such-scene'
  if F.scenes() then
    test.ok(problems_of(l):find("x.lua: step 1: scene: there is no scene 'no-such-scene' in this build", 1, true), problems_of(l))
  end
  l = good(); l.steps[1].scene = { 42 }
  test.ok(problems_of(l):find("step 1: scene: a table scene starts with the scene's name", 1, true), problems_of(l))
  l = good(); l.steps = {}
  test.ok(problems_of(l):find('x.lua: steps: the lesson has no steps', 1, true), problems_of(l))
  l = good(); l.steps[1].text = { en = 'e', fr = 'f' }
  test.ok(problems_of(l):find('x.lua: step 1: text must be a text', 1, true), problems_of(l))
  l = good()
  test.ok(problems_of(l, '/a/lessons/other/01-x.lua'):find("course: 'demo' but the file is in the directory 'other'", 1, true))
end)

test.case('load: a syntax error, a run-time error or no table names the file and line', function()
  local p = write(root .. '/bad/01-syntax.lua', 'return {\n  title = "x",\n  steps = {{ text = }}\n}\n')
  local l, err = F.load(p)
  test.eq(l, nil)
  test.ok(err:find(p .. ':3:', 1, true) and err:find('syntax error in the lesson file', 1, true), err)
  p = write(root .. '/bad/02-runtime.lua', 'local t = nil\nreturn { title = t.x }\n')
  l, err = F.load(p)
  test.ok(err:find(p .. ':2:', 1, true) and err:find('while running the lesson file', 1, true), err)
  p = write(root .. '/bad/03-nothing.lua', 'x = 1\n')
  l, err = F.load(p)
  test.ok(err:find(p .. ': the file must return the lesson table', 1, true), err)
  l, err = F.load(root .. '/bad/99-missing.lua')
  test.ok(err:find('cannot read the lesson file', 1, true), err)
end)

-- --check-lesson checks each file in a process of its own: a lesson that calls os.exit (at the
-- top level or in a step), loops forever, hands a steps table with a lying __len, or changes
-- process-wide state (kernels.racecheck) is reported, and the files after it are still checked;
-- a directory is refused plainly.
test.case('--check-lesson: each file isolated; os.exit, endless loops, __len and racecheck reported', function()
  local head = "local say = lesson.say\nreturn { title = say('x', 'x'), course = 'bad', lecture = say('x', 'x'), summary = say('x', 'x'), steps = "
  local iso = tmp .. '-isolated'
  os.execute('mkdir -p ' .. q(iso .. '/bad'))
  local files = {
    write(iso .. '/bad/11-exit.lua', head .. "{ { text = say('a', 'a'), code = 'os.exit(0)' } } }"),
    write(iso .. '/bad/12-top.lua', 'os.exit(0)'),
    write(iso .. '/bad/13-loop.lua', 'while true do end'),
    write(iso .. '/bad/14-len.lua', head .. 'setmetatable({}, {__len = function() return 1e9 end}) }'),
    write(iso .. '/bad/15-state.lua', head .. "{ { text = say('a', 'a'), code = 'kernels.racecheck(false)' }, "
      .. "{ text = say('b', 'b'), code = 'print(kernels.racecheck())', expect = 'true' } } }"),
  }
  local args = {}
  for _, f in ipairs(files) do args[#args + 1] = q(f) end
  args[#args + 1] = q(root)
  args[#args + 1] = q(demo_path)
  local out, err, code = run('--check-lesson ' .. table.concat(args, ' '), nil, 'LUMEN_CHECK_LESSON_TIMEOUT=5')
  test.eq(code, 1)
  test.ok(err:find('11-exit.lua: step 1: code: raised an error: ', 1, true) and err:find('the lesson called os.exit(0)', 1, true), err)
  test.ok(err:find('12-top.lua:1: the lesson called os.exit(0)', 1, true), err)
  test.ok(err:find('13-loop.lua: the check was still running after 5 s', 1, true), err)
  test.ok(err:find('14-len.lua: steps: a plain array of steps, but it has a metatable', 1, true), err)
  test.ok(out:find('15-state.lua: ok (2 steps', 1, true), out .. err)
  test.ok(err:find(root .. ': a directory: give a lesson file', 1, true), err)
  test.ok(out:find('01-sums.lua: ok (3 steps', 1, true), 'the file after them was checked: ' .. out)
end)

test.case('--check-lesson: a good file passes; malformed ones fail naming the file, step and field', function()
  local out, err, code = run('--check-lesson ' .. q(demo_path))
  test.eq(code, 0, err)
  test.ok(out:find('01-sums.lua: ok (3 steps, 1 exercise, languages: en, zh)', 1, true), out)
  local bad = write(root .. '/bad/04-fields.lua', [[
return { title = 'T', course = 'bad', lecture = 'L', summary = 'S', steps = {
  { text = 't', code = 'x = 1' },
  { text = 't', code = 'x = 2', exercise = { prompt = 'p', check = 42, solution = 'x = 3' } },
} }
]])
  out, err, code = run('--check-lesson ' .. q(bad))
  test.eq(code, 1)
  test.ok(err:find(bad .. ': step 2: exercise.check must be a function', 1, true), err)
  out, err, code = run('--check-lesson ' .. q(root .. '/bad/01-syntax.lua'))
  test.eq(code, 1)
  test.ok(err:find('01-syntax.lua:3:', 1, true), err)
  -- an exercise whose check accepts a wrong answer, and a solution the check refuses
  local lax = write(root .. '/bad/05-lax.lua', [[
return { title = 'T', course = 'bad', lecture = 'L', summary = 'S', steps = {
  { text = 't', code = 'answer = nil', exercise = { prompt = 'p',
    check = function(env) return env.answer ~= nil, 'define answer' end,
    solution = 'answer = 42', wrong = 'answer = 41' } },
  { text = 't', code = 'print(1)', expect = '2' },
  { text = 't', code = 'v = nil', exercise = { prompt = 'p',
    check = function(env) return env.v == 'yes', lesson.say('no', '不') end,
    solution = 'v = "no"', wrong = 'v = 3' } },
} }
]])
  out, err, code = run('--check-lesson ' .. q(lax))
  test.eq(code, 1)
  test.ok(err:find('step 1: exercise.wrong[1]: the check accepts it', 1, true), err)
  test.ok(err:find('step 1: exercise.check: its message is not a text in every language', 1, true) == nil, err)
  test.ok(err:find('step 2: expect: the code printed', 1, true), err)
  test.ok(err:find('step 3: exercise.solution: the check refuses it: no', 1, true), err)
  -- what only the walk finds: a scene that does not render, a check that accepts anything
  local walk = write(root .. '/bad/06-walk.lua', [[
return { title = 'T', course = 'bad', lecture = 'L', summary = 'S', steps = {
  { text = 't', code = 'x = 1', scene = { 'scan', n = 8, input = 'nosuch' } },
  { text = 't', code = 'info = nil', scene = function(env) return env.info end },
  { text = 't', code = 'y = 1', scene = function(env) error('drawing failed') end },
  { text = 't', code = 'z = nil', exercise = { prompt = 'p', check = function() return true end,
    solution = 'z = 1', wrong = 'z = 2' } },
} }
]])
  out, err, code = run('--check-lesson ' .. q(walk))
  test.eq(code, 1)
  if F.scenes() then
    test.ok(err:find("step 1: scene: viz.scene: option input of scene 'scan' must be one of", 1, true), err)
    test.ok(err:find('step 2: scene: .*viz.show: expected the info of a kernels call'), err)
    test.ok(err:find('step 3: scene: the function failed: .*drawing failed'), err)
  end
  test.ok(err:find('step 4: exercise.check: accepts the untouched state', 1, true), err)
  test.ok(err:find('step 4: exercise.wrong[1]: the check accepts it', 1, true), err)
  out, err, code = run('--check-lesson')
  test.eq(code, 1)
  test.ok(err:find('--check-lesson needs a lesson file', 1, true), err)
end)

-- ------------------------------------------------------------------ finding and running

test.case('find: the full name, NN-slug, the slug, course/NN, a number; unknown names suggest the nearest', function()
  local out = run("-e 'for _, n in ipairs({\"demo/01-sums\", \"01-sums\", \"sums\", \"more\", \"demo/02\", \"demo/1\"}) do "
    .. "print(lesson.find(n).name) end print(select(2, lesson.find(\"demo/01-sun\")))'")
  test.ok(out:find('demo/01-sums\ndemo/01-sums\ndemo/01-sums\ndemo/02-more\ndemo/02-more\ndemo/01-sums\n', 1, true), out)
  test.ok(out:find("there is no lesson 'demo/01-sun'; the nearest: demo/01-sums", 1, true), out)
  local _, err, code = run('--lesson sumz')
  test.eq(code, 1)
  test.ok(err:find("lumen --lesson: there is no lesson 'sumz'; the nearest: demo/01-sums", 1, true), err)
end)

test.case('run: output captured, the environment keeps what the code defined, earlier steps run quietly', function()
  local env = setmetatable({}, { __index = _G })
  lesson.open(demo_path, { env = env, record = false })
  test.eq(lesson.step(), 1)
  local ok, out = lesson.run()
  test.eq(ok, true)
  test.eq(out, 'sum 11\n')
  test.eq(env.x[3], 7)
  test.eq(rawget(_G, 'x'), nil, 'the code did not write the real globals')
  ok, out = lesson.run('print(x[1] + 1) io.write("a", 2, "\\n")')
  test.eq(out, '4\na2\n')
  ok, out = lesson.run('error("boom")')
  test.eq(ok, false)
  test.ok(out:find('boom', 1, true), out)
  ok, out = lesson.run('print("before") local t = nil; t.x = 1')
  test.eq(ok, false)
  test.ok(out:find('^before\n') and out:find('attempt to index', 1, true), out)
  test.eq(lesson.step(), 1, 'an error does not move the lesson')
  -- a fresh environment at step 3: steps 1 and 2 run first, quietly
  local env2 = setmetatable({}, { __index = _G })
  lesson.open(demo_path, { env = env2, record = false, step = 3 })
  ok, out = lesson.run()
  test.eq(ok, true)
  test.eq(out, '')
  test.eq(env2.y, 6)
  test.raises(function() lesson.step(4) end, 'steps 1..3, not 4')
  test.raises(function() lesson.step(1.5) end, 'n must be an integer')
  test.eq(lesson.next(), false)
  test.eq(lesson.step(1), 1)
  test.eq(lesson.prev(), false)
  test.raises(function() lesson.run(42) end, 'code must be a string')
end)

test.case('check: the untouched state and a wrong answer are refused, the solution accepted', function()
  local env = setmetatable({}, { __index = _G })
  lesson.open(demo_path, { env = env, record = false, step = 2 })
  lesson.run()
  local ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('total is not defined yet', 1, true), msg)
  lesson.run('function total(t) return #t end')
  ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('^total gave 7, expected'), msg)
  env.total = function() error('oops') end
  ok, msg = lesson.check()
  test.ok(not ok and msg:find('your code raised an error', 1, true) and msg:find('oops', 1, true), msg)
  lesson.run(lesson.current().steps[2].exercise.solution)
  ok, msg = lesson.check()
  test.eq(ok, true, msg)
  lesson.step(1)
  ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('step 1 has no exercise', 1, true), msg)
  local v = lesson.verify(demo_path)
  test.eq(v, true)
end)

-- An endless loop in the student's code (a mutant's `while stride >= 0`, a kernel whose loop never
-- ends, a pcall that swallows the stop) is stopped by the check's budget of Lua instructions and
-- refused as such; :check never hangs. The budget is lowered here to keep the test fast.
test.case('check: an endless loop, in Lua or in a kernel, is stopped by the budget and refused', function()
  local env = setmetatable({}, { __index = _G })
  lesson.open(demo_path, { env = env, record = false, step = 2 })
  lesson.run()
  local budget = lesson.budget
  lesson.budget = 2000000
  local t0 = lm.sys.clock()
  lesson.run('function total(t) local s = 0 while true do s = s + 1 end end')
  local ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('stopped after 2 million Lua instructions without finishing', 1, true)
    and msg:find('an endless loop', 1, true), msg)
  -- a pcall in the student's code cannot swallow it
  lesson.run('function total(t) while true do pcall(function() while true do end end) end end')
  ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('endless loop', 1, true), msg)
  -- a kernel that never leaves its loop, a barrier in it (the emulator runs phase after phase)
  lesson.run([[function total(t)
    local out = lm.zeros(1)
    kernels.launch(function(th, out)
      local stride = 4
      while stride >= 0 do th:sync(); stride = stride // 2 end
      out[0] = 1
    end, {block = 8, args = {out}})
    return 0
  end]])
  ok, msg = lesson.check()
  test.eq(ok, false)
  test.ok(msg:find('endless loop', 1, true) and msg:find('by thread', 1, true), msg)
  test.ok(lm.sys.clock() - t0 < 30, 'the three took ' .. (lm.sys.clock() - t0) .. ' s')
  -- the hook is gone afterwards, and a right answer still passes within the budget
  test.eq(debug.gethook(), nil)
  lesson.run(lesson.current().steps[2].exercise.solution)
  ok, msg = lesson.check()
  test.eq(ok, true, msg)
  lesson.budget = budget
end)

-- A step whose code defines a stub the student completes, and runs it (the kernels lessons'
-- shape): :run again keeps the student's function (and the code's later lines use it), :run!
-- replaces it; after :check the scene draws the student's kernel as the check ran it.
local kernel_lesson = write(root .. '/demo/03-kernel.lua', [[
local say = lesson.say
return {
  title = say('A kernel', '一个内核'), course = 'demo', lecture = say('Demo 3', '示例第 3 讲'),
  summary = say('Adding one.', '加一。'),
  steps = {
    { text = say('Write add_one.', '写出 add_one。'),
      code = [==[
function run_add(kernel, x)
  local y = lm.zeros(x:numel())
  local info = kernels.launch(kernel, {grid = (x:numel() + 31) // 32, block = 32, args = {x, y, x:numel()}})
  return y, info
end
function add_one(t, x, y, n)
  -- TODO
end
y, add_info = run_add(add_one, lm.ones(5))
print('y[1] = ' .. math.tointeger(y[1]:item()))
]==],
      scene = function(env) return env.add_info end,
      exercise = {
        prompt = say('Complete add_one so that y = x + 1.', '补全 add_one，使 y = x + 1。'),
        check = function(env)
          local ok, fn = lesson.need(env, 'add_one')
          if not ok then return false, fn end
          local x = lm.randn(70)
          local rok, y = lesson.try(env.run_add, fn, x)
          if not rok then return false, y end
          return lesson.compare(y, x + 1)
        end,
        solution = [==[
function add_one(t, x, y, n)
  local i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x
  if i < n then y[i] = x[i] + 1 end
end
]==],
        wrong = [==[
function add_one(t, x, y, n)
  local i = t.threadIdx.x
  if i < n then y[i] = x[i] + 1 end
end
]==],
      } },
  },
}
]])

test.case(':run keeps what the student redefined, :run! replaces it; :check draws the student\'s kernel', function()
  local env = setmetatable({}, { __index = _G })
  lesson.open(kernel_lesson, { env = env, record = false })
  local ok, out = lesson.run()
  test.eq(out, 'y[1] = 0\n')
  local stub = env.add_one
  lesson.run(lesson.current().steps[1].exercise.solution) -- what the student typed at the prompt
  local mine = env.add_one
  local kept
  ok, out, kept = lesson.run()
  test.eq(ok, true, out)
  test.eq(out, 'y[1] = 2\n', 'the step\'s code ran the student\'s kernel')
  test.eq(kept, { 'add_one' })
  test.ok(rawequal(env.add_one, mine), 'the student\'s add_one stays')
  -- the REPL command says so
  local said = {}
  local write = io.stdout.write
  local capture = setmetatable({}, { __index = function(_, k)
    if k == 'write' then return function(_, ...) for _, v in ipairs({ ... }) do said[#said + 1] = tostring(v) end end end
    return io.stdout[k] end })
  local real = io.stdout
  io.stdout = capture
  local cok = pcall(lesson.command, 'run', '')
  io.stdout = real
  test.ok(cok)
  test.ok(table.concat(said):find('kept what you defined: add_one', 1, true), table.concat(said))
  -- :run! runs the code as written
  ok, out, kept = lesson.run(nil, { fresh = true })
  test.eq(out, 'y[1] = 0\n')
  test.eq(kept, {})
  test.ok(rawequal(env.add_one, stub) == false and env.add_one ~= mine, 'the stub is back')
  -- :check: the student's kernel as the check last ran it is what the scene draws
  lesson.run(lesson.current().steps[1].exercise.solution)
  local cok2, msg = lesson.check()
  test.eq(cok2, true, msg)
  local tr = lesson.trace()
  test.ok(tr and tr.algo == 'add_one' and tr.counters.threads == 96, tr and tr.algo)
  said = {}
  io.stdout = capture
  pcall(lesson.command, 'check', '')
  io.stdout = real
  test.ok(table.concat(said):find('your kernel as the check last ran it (96 threads', 1, true), table.concat(said))
  test.eq(viz.state().scene, 'threads')
end)

-- kernels.puzzles.show draws the kernel it ran when a window is open (the step's picture follows
-- what the student just ran, not the stub).
test.case('kernels.puzzles.show draws the run in an open window', function()
  viz.scene('scan')
  test.eq(viz.state().scene, 'scan')
  local info = kernels.puzzles.show(1, function(t, out, a) local i = t.threadIdx.x; out[i] = a[i] + 10 end)
  test.eq(viz.state().scene, 'threads')
  test.eq(info.counters.global_stores, 4)
end)

test.case('compare: the first element that differs, 1-based, and the reason', function()
  local ok, msg = lesson.compare({ 3, 4, 11, 11, 11 }, lm.tensor({ 3, 4, 11, 11, 15 }), {
    what = lesson.say('your scan', '你的扫描'), zero_based = true,
    why = function() return lesson.say('did every thread wait at the barrier?', '每个线程都在屏障处等了吗？') end })
  test.eq(ok, false)
  test.eq(msg.en, 'element 5 (index 4 from 0) of your scan is 11, expected 15: did every thread wait at the barrier?')
  test.eq(msg.zh, '你的扫描中第 5 个元素（从 0 数的下标 4）是 11，应为 15：每个线程都在屏障处等了吗？')
  ok, msg = lesson.compare(nil, { 1, 2 })
  test.ok(msg.en:find('nil (nothing was returned); expected 2 numbers', 1, true), msg.en)
  ok, msg = lesson.compare({ 1 }, { 1, 2 })
  test.ok(msg.en:find('has 1 element, expected 2', 1, true), msg.en)
  ok, msg = lesson.compare({ 1 }, { 1, 2 }, { what = lesson.say('my_csr.row_ptr', 'my_csr.row_ptr') })
  test.eq(msg.zh, 'my_csr.row_ptr 有 1 个元素，应该有 2 个') -- a space between Latin and Chinese
  ok, msg = lesson.compare({ 2 }, { 1 }, { what = lesson.say('upsweep({1})', 'upsweep({1}) 的结果') })
  test.eq(msg.zh, 'upsweep({1}) 的结果中第 1 个元素是 2，应为 1')
  test.eq({ lesson.show(100.0), lesson.show(0.69230769230769), lesson.show(-3), lesson.show('a') },
    { '100', '0.692308', '-3', 'a' })
  test.eq(lesson.compare(lm.tensor({ 1.00001, 2 }), { 1, 2 }), true)
  test.eq(lesson.compare({ 0 / 0 }, { 1 }), false)
  test.eq(lesson.number(lm.tensor(3)), 3)
  test.eq(lesson.number('9217'), 9217)
  test.eq(lesson.number({}), nil)
end)

test.case('try: what stopped a student kernel (race, memory, deadlock, error) and the report', function()
  local x = lm.zeros(4)
  local function racy(t, a)
    local i = t.threadIdx.x
    a[i] = i
    if i > 0 then a[i - 1] = a[i - 1] + a[i] end
  end
  local function oob(t, a) a[t.threadIdx.x + 1] = 1 end
  local function stuck(t) if t.threadIdx.x == 0 then t:sync() end end
  local function launch(k) return kernels.launch(k, { grid = 1, block = 4, args = { x }, name = 'k' }) end
  local ok, msg, kind = lesson.try(launch, racy)
  test.eq({ ok, kind }, { false, 'race' })
  test.ok(msg.en:find('^the race checker stopped your kernel: [%w-]+ race on global array'), msg.en)
  test.ok(msg.zh:find('^竞争检查器叫停了你的内核：'), msg.zh)
  test.ok(not msg.en:find('traceback', 1, true) and not msg.en:find('kernels.launch', 1, true), msg.en)
  ok, msg, kind = lesson.try(launch, oob)
  test.eq({ ok, kind }, { false, 'memcheck' })
  test.ok(msg.en:find("^the memory checker stopped your kernel: out%-of%-bounds store of global array"), msg.en)
  ok, msg, kind = lesson.try(launch, stuck)
  test.eq({ ok, kind }, { false, 'deadlock' })
  test.ok(msg.en:find('^your kernel stopped: deadlock'), msg.en)
  ok, msg, kind = lesson.try(launch, function(t) error('boom') end)
  test.eq({ ok, kind }, { false, 'kernel' })
  test.ok(msg.en:find('boom', 1, true), msg.en)
  ok, msg, kind = lesson.try(function() error('plain') end)
  test.eq({ ok, kind }, { false, 'error' })
  test.ok(msg.en:find('^your code raised an error: .*plain'), msg.en)
  test.eq({ lesson.try(function(a) return a + 1, 'b' end, 1) }, { true, 2, 'b' })
  ok, msg, kind = lesson.try(nil)
  test.eq({ ok, kind }, { false, 'error' })
end)

-- ------------------------------------------------------------------ the commands (piped REPL)

test.case('the commands: list, open, next past the end, prev at the start, check, hint, solution, where', function()
  os.remove(state .. '/lumen/lessons')
  local out = run('', table.concat({ ':lessons', ':lesson sums', ':prev', ':check', ':next', ':check', ':hint',
    ':hint', ':hint', ':solution', 'n', ':solution', 'y', 'function total(t) return 0 end', ':check',
    ':step 9', ':step', ':next', ':next', ':where', ':nosuch' }, '\n') .. '\n')
  local function has(s) test.ok(out:find(s, 1, true), 'missing ' .. s .. ' in:\n' .. out) end
  has('demo\n')
  has('demo/01-sums')
  has('Sums  (demo/01-sums, Demo 1)')
  has('── Sums · 1/3 · Numbers')
  has('sum 11')
  has('This is the first step')
  has('Step 1 has no exercise to check. The next exercise is at step 2 (:step 2).')
  has('Define total(t), the sum of an array.')
  has('✗ Not yet: total is not defined yet')
  has('Hint 1/2:\n  A for loop.')
  has('Hint 2/2:')
  has('No more hints (2 of 2 shown)')
  has('Not shown.')
  has('solution (:edit puts it in the input line')
  has('✗ Not yet: total gave 0')
  has(':step N: N is a step of demo/01-sums, 1..3 (got 9)')
  has('This was the last step of demo/01-sums (3/3). Next lesson: :lesson demo/02-more')
  has('demo/01-sums (Sums), step 3 of 3; exercises solved: 0 of 1.')
  has("unknown command ':nosuch'")
end)

test.case(':run runs the step again; :edit ! runs what the editor saved; :lang zh; colours only on a terminal', function()
  os.remove(state .. '/lumen/lessons')
  -- the "editor": writes the answer into the file it is given
  local ed = write(tmp .. '-editor.sh', "#!/bin/sh\nprintf 'function total(t) local s = 0 for _, v in ipairs(t) "
    .. "do s = s + v end return s end\\nprint(\"saved \" .. total({2, 3}))\\n' > \"$1\"\n")
  os.execute('chmod +x ' .. q(ed))
  local out, err = run('', table.concat({ ':lesson sums', ':run', ':next', ':edit !', ':check', ':lang zh', ':where',
    ':next' }, '\n') .. '\n', 'EDITOR=' .. q(ed) .. ' VISUAL= TERM=xterm')
  local function has(s) test.ok(out:find(s, 1, true), 'missing ' .. s .. ' in:\n' .. out .. err) end
  local _, runs = out:gsub('sum 11', '')
  test.eq(runs, 2, ':run shows the output again:\n' .. out)
  has('running what you saved:')
  has('saved 5')
  has('✓ Correct. right')
  has('语言：中文')
  has('demo/01-sums（求和），第 2 步，共 3 步；做对的练习：1/1。')
  has('── 求和 · 3/3')
  has('结束。')
  test.ok(not out:find('\27[', 1, true), 'no colour escapes when the output is not a terminal')
  -- an editor that fails: nothing changes
  out = run('', ':lesson sums\n:step 2\n:edit !\n:check\n', 'EDITOR=false VISUAL=')
  has('the editor (false) failed; nothing changed')
  has('✗ Not yet: total is not defined yet')
end)

test.case('progress: saved and resumed; a corrupt file is ignored with a warning, never a crash', function()
  local pfile = state .. '/lumen/lessons'
  os.remove(pfile)
  local out, err = run('', ':lesson sums\n:next\nfunction total(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end\n:check\n')
  test.ok(out:find('✓ Correct. right', 1, true), out)
  local saved = read(pfile)
  test.ok(saved, 'the progress file was written')
  test.eq(saved, 'lumen lessons progress 1\nlast demo/01-sums\nat demo/01-sums 2\nsolved demo/01-sums 2\n')
  out = run('', ':lesson\n:lessons\n')
  test.ok(out:find('Resuming at step 2 of 3', 1, true), out)
  test.ok(out:find('(you solved this one before)', 1, true), out)
  test.ok(out:find('step 2/3, 1/1 solved', 1, true), out)
  -- corrupt: garbage lines, binary, a different header
  write(pfile, 'lumen lessons progress 1\nat demo/01-sums two\n\0\1\2 garbage\nsolved demo/01-sums 2\nlast demo/01-sums\n')
  out, err = run('', ':lesson\n:where\n')
  test.ok(err:find('ignored lines 2, 3 of ' .. pfile, 1, true), err)
  test.ok(out:find('exercises solved: 1 of 1', 1, true), out)
  write(pfile, '\137PNG not progress at all')
  out, err = run('', ':lessons\n:lesson sums\n')
  test.ok(err:find(pfile .. ' is not a progress file Lumen wrote', 1, true), err)
  test.ok(out:find('── Sums · 1/3', 1, true), out)
  test.eq(read(pfile):sub(1, 24), 'lumen lessons progress 1', 'rewritten')
  -- a state directory that cannot be written: said once, the lesson goes on
  local ro = tmp .. '-ro'
  write(ro, 'a file, not a directory')
  out, err = run('', ':lesson sums\n:next\n:next\n', 'XDG_STATE_HOME=' .. q(ro))
  local n = select(2, err:gsub('cannot write the progress file', ''))
  test.eq(n, 1, err)
  test.ok(out:find('── Sums · 3/3', 1, true), out)
  -- the progress file a FIFO, or a symlink to /dev/zero: refused at once, said once, no hang
  -- (issue 29.2: lesson.open blocked in open() or read /dev/zero for ever)
  for _, t in ipairs { { 'mkfifo ' .. q(pfile), 'a FIFO %(named pipe%)', 'fifo' },
    { 'ln -s /dev/zero ' .. q(pfile), 'a character device', 'symbolic link' } } do
    os.remove(pfile)
    os.execute(t[1])
    local t0 = lm.sys.clock()
    out, err = run('', ':lesson sums\n:next\n:next\n', 'timeout 60')
    test.ok(lm.sys.clock() - t0 < 30, 'no hang')
    test.eq(select(2, err:gsub('warning', '')), 1, 'said once: ' .. err)
    test.ok(err:find('cannot read the progress file %(.*: it is ' .. t[2] .. ', not a regular file%)'), err)
    test.ok(out:find('── Sums · 3/3', 1, true), out)
    local p = io.popen('stat -c %F ' .. q(pfile))
    test.eq(p:read('l'), t[3], 'left as it was')
    p:close()
  end
  os.remove(pfile)
end)

test.case('lumen --lesson NAME opens the lesson in the REPL; the step code errors leave the REPL alive', function()
  os.remove(state .. '/lumen/lessons')
  local out, err, code = run('--lesson demo/01-sums', ':next\nerror("student error")\n:where\n')
  test.eq(code, 0)
  test.ok(out:find('── Sums · 1/3 · Numbers', 1, true), out)
  test.ok(out:find('── Sums · 2/3', 1, true), out)
  test.ok(err:find('student error', 1, true), err)
  test.ok(out:find('step 2 of 3', 1, true), out)
end)
