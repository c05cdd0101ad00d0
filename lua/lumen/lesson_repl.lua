--[[
lumen.lesson_repl — the lesson runner's side of the REPL: how a step is shown (header, wrapped
text, code, its output, the scene, the exercise) and the ':' commands (:lessons, :lesson, :next,
:prev, :step, :run, :edit, :check, :hint, :solution, :where, :lang), reached through
lesson.command(name, arg). Every message exists in English and Chinese and is wrapped to the
terminal like the lessons' text. State and running code are lumen/lesson.lua's (M._internal).
Read next: lumen/lesson.lua, docs/lessons.md.
]]
local lm = require 'lumen'
local T = require 'lumen.lesson_text'
local M = require 'lumen.lesson'

local I = M._internal
local S = I.S
local run_code, run_step_code, prerequisites, chunkname = I.run_code, I.run_step_code, I.prerequisites, I.chunkname
local lesson_progress, save_progress, get_progress = I.lesson_progress, I.save_progress, I.get_progress
local count_exercises, answer_value = M._count_exercises, I.answer_value

local R = {}
local show_check_trace -- defined below (the scene after :check)

local function paint(code, s) return T.paint(code, s) end
local function tr(en, zh) return T.pick({ en = en, zh = zh }) end
local function out(s) io.stdout:write(s, '\n') end
local function current_step() return S.lesson.steps[S.index] end

--- Prints a message wrapped to the terminal (indent before every line), painted with code.
local function note(s, code, indent)
  for _, l in ipairs(T.layout(s, T.columns(), indent or '')) do out(code and paint(code, l) or l) end
end

--- Prints head (painted with code) and the message after it, wrapped together.
local function lead(head, msg, code)
  local sep = (msg == '' or T.cp_width(utf8.codepoint(head, utf8.offset(head, -1))) == 2) and '' or ' '
  local lines = T.layout(head .. sep .. msg, T.columns(), '')
  if lines[1] and lines[1]:sub(1, #head) == head then lines[1] = paint(code, head) .. lines[1]:sub(#head + 1) end
  for _, l in ipairs(lines) do out(l) end
end

-- ---------------------------------------------------------------- showing a step

-- s cut to at most cols columns, with '…' in place of what is cut.
local function cut(s, cols)
  if T.width(s) <= cols then return s end
  local kept, used = {}, 0
  for _, ch in ipairs(T.chars(s)) do
    local cw = T.cp_width(ch[2])
    if used + cw > cols - 1 then break end
    kept[#kept + 1] = ch[1]
    used = used + cw
  end
  return table.concat(kept) .. '…'
end

-- The header line of a step, `── lesson title · i/n · step title ───`, within the width: the
-- step title is cut first, then the lesson title, so the position always shows.
local function rule(title, pos, step_title)
  local w = T.columns()
  local room = w - 3 - 1 - 3 -- '── ', ' ' and at least '───'
  local head = title .. pos
  local s
  if T.width(head .. step_title) <= room then
    s = head .. step_title
  elseif T.width(head) <= room then
    s = room - T.width(head) >= 8 and cut(head .. step_title, room) or head
  else
    s = cut(title, math.max(1, room - T.width(pos))) .. pos
  end
  s = '── ' .. s .. ' '
  return s .. string.rep('─', math.max(3, w - T.width(s)))
end

local function print_text(text, indent)
  for _, l in ipairs(T.layout(T.pick(text), T.columns(), indent or '')) do out(T.paint_code(l)) end
end

local function print_code(code, label)
  out(paint('2', label))
  for l in (code:gsub('\n+$', '') .. '\n'):gmatch('(.-)\n') do
    out(paint('2', '  │ ') .. l)
  end
end

local function show_scene(step, i)
  local sc = step.scene
  if sc == nil then return end
  local ok, viz = pcall(require, 'viz')
  if not ok or type(viz) ~= 'table' or viz.built == false then
    note(tr('scene: this build has no visualizer (viz), so the picture is not shown',
      '画面：这个版本没有可视化模块（viz），看不到图'), '33')
    return
  end
  local shown, err
  if type(sc) == 'function' then
    local fok, info, vopts = M.try(sc, S.env)
    if not fok then
      shown, err = false, T.pick(info)
    else
      shown, err = pcall(viz.show, info, vopts)
    end
  else
    local name, opts = sc, {}
    if type(sc) == 'table' then
      name = sc[1]
      for k, v in pairs(sc) do if k ~= 1 then opts[k] = v end end
    end
    shown, err = pcall(viz.scene, name, opts)
  end
  if not shown then
    if tostring(err):find('interrupted!', 1, true) then error(err, 0) end
    note(tr('scene: could not be shown: ', '画面：无法显示：') .. tostring(err), '31')
    return false
  end
  local st = viz.state()
  local kernel = package.loaded['lumen.kernel']
  if kernel and kernel.serving then return true end -- a notebook shows the picture itself
  if st.offscreen then
    note(tr(string.format("scene: %s, drawn offscreen (no display): viz.snapshot('step%d.png') saves it",
      st.scene, i), string.format("画面：%s，在后台绘制（没有显示器）：viz.snapshot('step%d.png') 可保存成图片",
      st.scene, i)), '2')
  else
    note(tr(string.format('scene: %s in the window (space plays, arrows step, Tab switches, ? keys)', st.scene),
      string.format('画面：%s 在窗口里（空格播放，方向键单步，Tab 切换，? 看按键）', st.scene)), '2')
  end
  return true
end

-- After :check, the step's scene draws the student's own kernel as the check last ran it
-- (lesson.try saw it launched, or the check named it: lesson.trace), not the step's stub.
show_check_trace = function(step)
  local info = S.trace
  if step.scene == nil or info == nil then return end
  local ok, viz = pcall(require, 'viz')
  if not ok or type(viz) ~= 'table' or viz.built == false then return end
  local shown, err = pcall(viz.show, info)
  if not shown then
    if tostring(err):find('interrupted!', 1, true) then error(err, 0) end
    return
  end
  local c = info.counters or {}
  note(tr(string.format('scene: your kernel as the check last ran it (%s threads, %s)', tostring(c.threads), info.provenance),
    string.format('画面：检查最后一次运行你的内核的情形（%s 个线程，%s）', tostring(c.threads), info.provenance)), '2')
end

local function print_exercise(ex)
  out('')
  note(tr('Exercise', '练习'), '1;33')
  print_text(ex.prompt, '  ')
  local nh = ex.hints and #ex.hints or 0
  note(tr(string.format('  :check when done · :hint (%d) · :solution · :edit puts the code in the input line', nh),
    string.format('  完成后 :check · :hint 提示（%d 条）· :solution 看答案 · :edit 把代码放进输入行', nh)), '2')
end

-- Runs step i's code (after its prerequisites) showing its output; compares expect. The names the
-- student redefined since the code defined them stay the student's (unless fresh), and it says so.
local function run_step(i, echo, fresh)
  local failed = prerequisites(i)
  for _, f in ipairs(failed) do
    note(tr(string.format('(the code of step %d failed: %s)', f[1], f[2]),
      string.format('（第 %d 步的代码出错：%s）', f[1], f[2])), '31')
  end
  local step = S.lesson.steps[i]
  S.before_output = function() note(tr('output:', '输出：'), '2') end
  S.ran[i] = true -- before it runs: a Ctrl-C in an endless step must not run it again later
  local ok, o, _, kept = run_step_code(i, echo, fresh)
  S.before_output = nil
  if kept and #kept > 0 then
    local names = table.concat(kept, ', ')
    note(tr(string.format('(kept what you defined: %s; the step\'s code used yours instead of replacing it. :run! runs the code as written)', names),
      string.format('（保留了你定义的 %s：这一步的代码用的是你的版本，没有覆盖它。:run! 按原样运行代码）', names)), '2')
  end
  if not ok then
    if tostring(o):find('interrupted!', 1, true) then error(o, 0) end
    note(o, '31')
    return false
  end
  if step.expect and M._normalize(o) ~= M._normalize(step.expect) then
    note(tr('(this is not what the lesson expected; it expected:)', '（和课程预期的输出不同；预期是：）'), '33')
    out(step.expect)
  end
  return true
end

local function show_step(i, opts)
  opts = opts or {}
  local step = S.lesson.steps[i]
  local title = T.pick(S.lesson.title)
  out('')
  out(paint('1', rule(title, string.format(' · %d/%d', i, #S.lesson.steps),
    step.title and (' · ' .. T.pick(step.title)) or '')))
  print_text(step.text)
  out('')
  print_code(S.drafts[i] and S.drafts[i] or step.code,
    tr('code (:run runs it again, :edit changes it):', '代码（:run 再运行一次，:edit 修改）：'))
  -- an exercise step's code runs the first time only: again, it would undo the student's answer
  if opts.run ~= false and not (step.exercise and S.ran[i]) then
    if run_step(i, true) then show_scene(step, i) end
  elseif opts.run ~= false then
    note(tr('(this code ran when you first came here; :run runs it again and keeps what you defined, :run! replaces it)',
      '（这段代码在你第一次来到这一步时已经运行过；:run 会再运行一次并保留你定义的东西，:run! 会覆盖它）'), '2')
  end
  if step.exercise then
    print_exercise(step.exercise)
    if lesson_progress(S.name).solved[i] then
      note(tr('  (you solved this one before)', '  （这道题你之前已经做对了）'), '32')
    end
  end
end

-- ---------------------------------------------------------------- commands

local function no_lesson()
  note(tr('No lesson is open: :lessons lists them, :lesson NAME opens one.',
    '还没有打开课程：:lessons 列出所有课程，:lesson 名字 打开一课。'))
end

local function cmd_lessons()
  local cat = M.catalog()
  if #cat == 0 then
    note(tr('No lessons found (looked in ', '没有找到课程（查找了 ') .. table.concat(M.dirs(), ', ') .. ')')
    return
  end
  local course
  local p = get_progress()
  for k, e in ipairs(cat) do
    if e.course ~= course then
      course = e.course
      out(paint('1', course))
    end
    local lesson, err = M.load(e.path)
    local title, state
    if lesson then
      title = T.pick(lesson.title)
      local pr = p.lessons[e.name]
      local nex = count_exercises(lesson)
      local solved = 0
      if pr then for i in pairs(pr.solved) do if lesson.steps[i] and lesson.steps[i].exercise then solved = solved + 1 end end end
      if pr and pr.at then
        state = tr(string.format('step %d/%d, %d/%d solved', pr.at, #lesson.steps, solved, nex),
          string.format('第 %d/%d 步，做对 %d/%d 题', pr.at, #lesson.steps, solved, nex))
      else
        state = tr(string.format('%d steps, %d exercise%s', #lesson.steps, nex, nex == 1 and '' or 's'),
          string.format('%d 步，%d 道练习', #lesson.steps, nex))
      end
    else
      title = paint('31', tr('(cannot be opened: ', '（无法打开：') .. (err:match('^[^\n]*')) .. ')')
      state = ''
    end
    local left = string.format('  %2d  %-22s %s', k, e.name, title)
    local pad = math.max(1, 64 - T.width(left))
    out(left .. string.rep(' ', pad) .. paint('2', state))
  end
  note(tr(':lesson NAME or :lesson N opens one where you stopped.',
    ':lesson 名字 或 :lesson 编号 从上次停下的地方打开。'), '2')
end

local function cmd_lesson(arg)
  local spec = arg ~= '' and arg or get_progress().last
  if not spec then
    note(tr('Which lesson? :lessons lists them; :lesson NAME opens one.', '打开哪一课？:lessons 列出课程；:lesson 名字 打开。'))
    return
  end
  local entry, err = M.find(spec)
  if not entry then note((err:gsub('^lesson%.open: ', '')), '31') return end
  local saved = lesson_progress(entry.name).at
  local ok, e = pcall(M.open, entry, { step = saved })
  if not ok then
    if tostring(e):find('interrupted!', 1, true) then error(e, 0) end
    note(tostring(e), '31')
    return
  end
  out(paint('1', T.pick(S.lesson.title)) .. paint('2', tr('  (' .. S.name .. ', ' .. T.pick(S.lesson.lecture) .. ')',
    '（' .. S.name .. '，' .. T.pick(S.lesson.lecture) .. '）')))
  print_text(S.lesson.summary)
  if S.index > 1 then
    note(tr(string.format('Resuming at step %d of %d (:step 1 starts over).', S.index, #S.lesson.steps),
      string.format('从第 %d 步（共 %d 步）继续（:step 1 从头开始）。', S.index, #S.lesson.steps)), '2')
  end
  show_step(S.index)
end

local function cmd_move(dir)
  if not S.lesson then return no_lesson() end
  local moved = dir > 0 and M.next() or (dir < 0 and M.prev())
  if not moved then
    if dir > 0 then
      local cat, nextname = M.catalog(), nil
      for k, e in ipairs(cat) do if e.name == S.name and cat[k + 1] then nextname = cat[k + 1].name end end
      note(tr(string.format('This was the last step of %s (%d/%d).', S.name, S.index, #S.lesson.steps),
        string.format('这已经是 %s 的最后一步（%d/%d）。', S.name, S.index, #S.lesson.steps))
        .. (nextname and tr(' Next lesson: :lesson ' .. nextname, '下一课：:lesson ' .. nextname) or ''))
    else
      note(tr('This is the first step (:next goes on).', '这已经是第一步（:next 继续）。'))
    end
    return
  end
  show_step(S.index)
end

local function cmd_step(arg)
  if not S.lesson then return no_lesson() end
  if arg == '' then return show_step(S.index, { run = false }) end
  local n = tonumber(arg)
  if not n or n ~= math.floor(n) or n < 1 or n > #S.lesson.steps then
    note(tr(string.format(':step N: N is a step of %s, 1..%d (got %s)', S.name, #S.lesson.steps, arg),
      string.format(':step N：N 是 %s 的步号，1..%d（收到的是 %s）', S.name, #S.lesson.steps, arg)), '31')
    return
  end
  M.step(math.floor(n))
  show_step(S.index)
end

local function cmd_run(arg)
  if not S.lesson then return no_lesson() end
  local step = current_step()
  local code = S.drafts[S.index]
  local fresh = arg == '!'
  if arg and arg ~= '' and not fresh then
    note(tr(':run takes nothing, or ! (:run! runs the step\'s code as written, replacing what you defined)',
      ':run 不带参数，或者带 !（:run! 按原样运行这一步的代码，覆盖你定义的东西）'), '31')
    return
  end
  if code and not fresh then
    note(tr('(running your edited code; :edit ! to change it again)', '（运行你修改过的代码；:edit ! 再改）'), '2')
    local ok, o = M.run(code, { echo = true })
    if not ok then note(o, '31') else show_scene(step, S.index) end
    return
  end
  if run_step(S.index, true, fresh) then show_scene(step, S.index) end
end

local function cmd_check(arg)
  if not S.lesson then return no_lesson() end
  local step = current_step()
  if not step.exercise then
    local nexti
    for j = S.index + 1, #S.lesson.steps do
      if S.lesson.steps[j].exercise then nexti = j break end
    end
    note(tr(string.format('Step %d has no exercise to check.', S.index), string.format('第 %d 步没有要检查的练习。', S.index))
      .. (nexti and tr(string.format(' The next exercise is at step %d (:step %d).', nexti, nexti),
        string.format('下一道练习在第 %d 步（:step %d）。', nexti, nexti)) or ''))
    return
  end
  local ok, msg = M.check(answer_value(arg))
  if ok then
    lead(tr('✓ Correct.', '✓ 正确。'), msg, '1;32')
    if S.index < #S.lesson.steps then note(tr(':next goes on.', ':next 继续。'), '2') end
  else
    lead(tr('✗ Not yet:', '✗ 还不对：'), msg, '1;31')
    local nh = step.exercise.hints and #step.exercise.hints or 0
    if (S.hints[S.index] or 0) < nh then note(tr(':hint gives a hint.', ':hint 给一条提示。'), '2') end
  end
  show_check_trace(step)
end

local function cmd_hint()
  if not S.lesson then return no_lesson() end
  local ex = current_step().exercise
  if not ex then
    note(tr(string.format('Step %d has no exercise, so no hints.', S.index), string.format('第 %d 步没有练习，也就没有提示。', S.index)))
    return
  end
  local hints = ex.hints or {}
  local k = (S.hints[S.index] or 0) + 1
  if k > #hints then
    note(tr(string.format('No more hints (%d of %d shown); :solution shows the solution.', #hints, #hints),
      string.format('没有更多提示了（%d 条都看过了）；:solution 可以看答案。', #hints)))
    return
  end
  S.hints[S.index] = k
  note(tr(string.format('Hint %d/%d:', k, #hints), string.format('提示 %d/%d：', k, #hints)), '33')
  print_text(hints[k], '  ')
end

--- Reads the confirmation of :solution from standard input (M._confirm may be replaced by tests).
function R.confirm(question)
  io.stdout:write(question)
  io.stdout:flush()
  local line = io.stdin:read('l')
  if not line then out('') return false end
  if not lm._data.isatty(io.stdin) then out(line) end -- piped: the answer was not echoed
  line = line:lower():gsub('^%s+', ''):gsub('%s+$', '')
  return line == 'y' or line == 'yes' or line == '是' or line == '好' or line == '要'
end

local function cmd_solution()
  if not S.lesson then return no_lesson() end
  local ex = current_step().exercise
  if not ex then
    note(tr(string.format('Step %d has no exercise, so no solution.', S.index), string.format('第 %d 步没有练习，也就没有答案。', S.index)))
    return
  end
  if not R.confirm(tr('Show the solution? Trying once more often teaches more. [y/N] ',
    '要看答案吗？再试一次往往学到更多。[y/N] ')) then
    note(tr('Not shown.', '没有显示。'))
    return
  end
  print_code(ex.solution, tr('solution (:edit puts it in the input line, :check checks it once it ran):',
    '答案（:edit 放进输入行，运行后 :check 检查）：'))
  S.drafts[S.index] = ex.solution
  if S.record then
    lesson_progress(S.name).seen[S.index] = true
    save_progress()
  end
end

-- the lines :edit puts into the input line, taken by the REPL one per prompt (lumen.repl)
local function prefill(lines)
  local repl = package.loaded['lumen.repl']
  if not (repl and repl.queue_input) then return false end
  return repl.queue_input(lines)
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function edit_in_editor(code)
  local editor = os.getenv('VISUAL')
  if not editor or editor == '' then editor = os.getenv('EDITOR') end
  if not editor or editor == '' then editor = 'vi' end
  local path = os.tmpname() .. '.lua'
  local f = assert(io.open(path, 'w'))
  f:write(code)
  f:close()
  local ok = os.execute(editor .. ' ' .. shell_quote(path))
  local g = io.open(path, 'r')
  local edited = g and g:read('a')
  if g then g:close() end
  os.remove(path)
  if not ok or not edited then
    note(tr('the editor (' .. editor .. ') failed; nothing changed', '编辑器（' .. editor .. '）出错；没有改动'), '31')
    return
  end
  S.drafts[S.index] = edited
  note(tr('running what you saved:', '运行你保存的代码：'), '2')
  local rok, o = M.run(edited, { echo = true })
  if not rok then note(o, '31') return end
  if current_step().exercise then note(tr(':check checks it.', ':check 检查。'), '2') end
end

local function cmd_edit(arg)
  if not S.lesson then return no_lesson() end
  local code = S.drafts[S.index] or current_step().code
  if arg == '!' or arg == 'editor' then return edit_in_editor(code) end
  local lines = {}
  for l in (code:gsub('\n+$', '') .. '\n'):gmatch('(.-)\n') do
    if l:match('%S') then lines[#lines + 1] = l end
  end
  if prefill(lines) then
    note(tr(string.format('The code is in the input line, %d line%s, one per prompt: edit, then Enter; '
      .. 'Ctrl-C drops the rest. (:edit ! opens $EDITOR.)', #lines, #lines == 1 and '' or 's'),
      string.format('代码已放进输入行，共 %d 行，每个提示符一行：修改后回车；Ctrl-C 放弃剩下的。'
        .. '（:edit ! 用 $EDITOR 打开。）', #lines)), '2')
  else
    print_code(code, tr('No line editing here (standard input is not a terminal); the code to type or paste:',
      '这里没有行编辑（标准输入不是终端）；要输入或粘贴的代码：'))
    note(tr(':edit ! opens it in $EDITOR.', ':edit ! 用 $EDITOR 打开。'), '2')
  end
end

local function cmd_where()
  if not S.lesson then return no_lesson() end
  local pr = lesson_progress(S.name)
  local nex, solved = count_exercises(S.lesson), 0
  for i in pairs(pr.solved) do if S.lesson.steps[i] and S.lesson.steps[i].exercise then solved = solved + 1 end end
  local step = current_step()
  note(tr(string.format('%s (%s), step %d of %d%s; exercises solved: %d of %d.', S.name, T.pick(S.lesson.title),
    S.index, #S.lesson.steps, step.title and (': ' .. T.pick(step.title)) or '', solved, nex),
    string.format('%s（%s），第 %d 步，共 %d 步%s；做对的练习：%d/%d。', S.name, T.pick(S.lesson.title),
      S.index, #S.lesson.steps, step.title and ('：' .. T.pick(step.title)) or '', solved, nex)))
  local path = M.progress_path()
  note(tr('Progress is saved in ', '进度保存在 ') .. (path or tr('(nowhere: no HOME)', '（无处：没有 HOME）'))
    .. tr('; the lesson file: ', '；课程文件：') .. S.path, '2')
end

local function cmd_lang(arg)
  if arg == '' then
    local l, why = T.lang()
    note(tr(string.format('The lessons are in English (from %s); :lang zh switches to Chinese.', why),
      string.format('课程用中文显示（来自 %s）；:lang en 切换到英文。', why)))
    return
  end
  local ok, e = pcall(T.set_lang, arg)
  if not ok then
    note(':lang: ' .. tostring(e):gsub('^.-lesson: ', ''), '31')
    return
  end
  note(tr('Language: English.', '语言：中文。'))
  if S.lesson then show_step(S.index, { run = false }) end
end


local commands = {
  lessons = cmd_lessons, lesson = cmd_lesson,
  next = function() return cmd_move(1) end, prev = function() return cmd_move(-1) end,
  step = cmd_step, run = cmd_run, edit = cmd_edit, check = cmd_check, hint = cmd_hint,
  solution = cmd_solution, where = cmd_where, lang = cmd_lang,
}

--- Runs the command name with the text after it (lesson.command).
function R.command(name, arg)
  local fn = commands[name]
  if not fn then error('lesson.command: no lesson command ' .. tostring(name), 3) end
  return fn(arg or '')
end

-- lesson.scene(i) and lesson.verdict(i) (notebooks): the step's scene as entering it shows it;
-- the check as :check prints it, and when wrong the next hint as :hint does.
function R._show_scene(i) return show_scene(S.lesson.steps[i], i) end

function R._verdict()
  local step = current_step()
  if not step.exercise then return cmd_check('') end
  local ok, msg = M.check()
  if ok then
    lead(tr('✓ Correct.', '✓ 正确。'), msg, '1;32')
  else
    lead(tr('✗ Not yet:', '✗ 还不对：'), msg, '1;31')
    local nh = step.exercise.hints and #step.exercise.hints or 0
    if (S.hints[S.index] or 0) < nh then cmd_hint() end
  end
  show_check_trace(step)
  return ok
end

return R
