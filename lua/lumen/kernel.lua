--[[
lumen.kernel — the Lua side of Lumen's Jupyter kernel (`lumen --kernel`, src/app/kernel.c), the
kernel's installation (`lumen --install-jupyter-kernel`) and lessons as notebooks (`lumen
--lesson-notebook`).

The wire protocol belongs to the Python half, lumen/jupyter_kernel.py: a wrapper kernel on
Debian's ipykernel (signed messages, sockets, heartbeat, history) that starts `lumen --kernel`
and forwards its stdout and stderr as streams. This module turns requests into JSON replies:
  execute      a cell is one chunk: an expression (or a list) shows its values; statements run,
               and a last line that is an expression shows its value (as IPython); a trailing ';'
               shows nothing; a cell of ':' lines runs the REPL's commands (:help, :time, :who,
               :lesson ...). Values go out as execute_result: text/plain as the REPL prints them,
               text/html for tensors (a compact table) and models (their tree).
  complete     the REPL's completion (lumen.repl.complete) at the cursor
  inspect      the REPL's :help for the name at the cursor (Shift-Tab)
  is_complete  whether the code compiles, needs more lines (<eof>) or is invalid
Scenes: viz.show, viz.scene and the live curves (viz.plot, viz.follow) are shown as PNGs drawn
offscreen, one output per scene and cell, updated in place (display_id) at most twice a second
while the cell runs and once when it ends.
Read next: src/app/kernel.c, lumen/jupyter_kernel.py, docs/jupyter.md.
]]
local lm = require 'lumen'
local repl = require 'lumen.repl'

local M = {}

-- ---------------------------------------------------------------- JSON (writing only)

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r',
  ['\t'] = '\\t' }

local function json_string(s)
  -- bytes that are not UTF-8 become U+FFFD so the wrapper's decoder accepts every message
  if not utf8.len(s) then
    local out = {}
    local i = 1
    while i <= #s do
      local ok, n = pcall(utf8.len, s, i, i)
      local c = utf8.offset(s, 2, i)
      if ok and n == 1 and c then
        out[#out + 1] = s:sub(i, c - 1)
        i = c
      else
        out[#out + 1] = '\u{FFFD}'
        i = i + 1
      end
    end
    s = table.concat(out)
  end
  return '"' .. s:gsub('[%c"\\]', function(c) return escapes[c] or string.format('\\u%04x', c:byte()) end) .. '"'
end

local NULL = setmetatable({}, { __name = 'null' })
M.null = NULL -- written as null

local function json(v)
  if v == NULL then return 'null' end
  local t = type(v)
  if t == 'string' then return json_string(v) end
  if t == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return 'null' end
    return math.type(v) == 'integer' and tostring(v) or string.format('%.17g', v)
  end
  if t == 'boolean' then return tostring(v) end
  if t == 'nil' then return 'null' end
  if t == 'table' then
    if v[1] ~= nil or next(v) == nil and getmetatable(v) == M.array then
      local parts = {}
      for i = 1, #v do parts[i] = json(v[i]) end
      return '[' .. table.concat(parts, ',') .. ']'
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = json_string(k) .. ':' .. json(v[k]) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  error('kernel.json: cannot write a ' .. t)
end
M.array = {} -- setmetatable({}, M.array): an empty table written as [] (not {})
M.json = json

local function send(msg) M._send(json(msg)) end

-- ---------------------------------------------------------------- rich output

local function html_escape(s)
  return (s:gsub('[&<>"]', { ['&'] = '&amp;', ['<'] = '&lt;', ['>'] = '&gt;', ['"'] = '&quot;' }))
end

local function num_text(v)
  if math.type(v) == 'integer' then return tostring(v) end
  if v ~= v then return 'nan' end
  if v == math.huge then return 'inf' elseif v == -math.huge then return '-inf' end
  return string.format('%.4g', v)
end

-- The indices shown along a dim of size n: all when n <= 8, else the first 4 and the last 3
-- (nil marks the gap).
local function shown(n)
  if n <= 8 then
    local t = {}
    for i = 1, n do t[i] = i end
    return t, n
  end
  return { 1, 2, 3, 4, false, n - 2, n - 1, n }, 8
end

--- A tensor as a compact HTML table: its dtype, shape and device above; 2-D (the last two dims
--- of its first matrix when it has more), at most 8 x 8 cells with an ellipsis in the middle.
function M.tensor_html(x)
  if x:is_closed() then return '<pre>tensor (closed)</pre>' end
  local shape = x:shape()
  local caption = string.format('%s [%s] on %s', x:dtype(), table.concat(shape, ', '), tostring(x:device()))
  local m = x
  local note = ''
  if #shape > 2 then
    local idx = {}
    for i = 1, #shape - 2 do idx[i] = '1' end
    for i = 1, #shape - 2 do m = m:select(1, 1) end
    note = string.format(' (showing x[%s, :, :])', table.concat(idx, ', '))
  end
  if #shape == 0 or x:numel() == 0 or x:dtype():match('^q') then
    return '<div><b>tensor</b> ' .. html_escape(caption) .. '<pre>' .. html_escape(repl.format(x)) .. '</pre></div>'
  end
  if m:dim() == 1 then m = m:view(1, -1) end
  local rows, nr = shown(m:size(1))
  local cols, nc = shown(m:size(2))
  local vals = lm.no_grad(function()
    local v = m
    if v:dtype() ~= 'float64' and v:dtype() ~= 'int64' then
      v = v:dtype():match('float') and v:double() or v:long()
    end
    return v
  end)
  local out = { '<div class="lumen-tensor"><b>tensor</b> ', html_escape(caption .. note),
    '<table style="font-family:monospace;font-size:90%">' }
  for i = 1, nr do
    out[#out + 1] = '<tr>'
    for j = 1, nc do
      local r, c = rows[i], cols[j]
      local cell
      if r == false or c == false then cell = '…'
      else cell = num_text(vals[r][c]:item()) end
      out[#out + 1] = '<td style="text-align:right">' .. cell .. '</td>'
    end
    out[#out + 1] = '</tr>'
  end
  out[#out + 1] = '</table></div>'
  return table.concat(out)
end

local function is_module(v)
  if type(v) ~= 'table' then return false end
  local ok, nn = pcall(require, 'lumen.nn.module')
  return ok and nn.is_module(v)
end

--- The MIME bundle of a cell's values: text/plain as the REPL prints them; text/html when one of
--- them is a tensor or a model.
function M.bundle(...)
  local n = select('#', ...)
  local saved = repl.colour
  repl.colour = false
  local parts, html, rich, sep = {}, {}, false, '\t'
  for i = 1, n do
    local v = (select(i, ...))
    parts[i] = repl.format(v)
    if parts[i]:find('\n', 1, true) then sep = '\n' end
    if lm.is_tensor(v) then
      local ok, h = pcall(M.tensor_html, v)
      html[i], rich = ok and h or '<pre>' .. html_escape(parts[i]) .. '</pre>', true
    elseif is_module(v) then
      html[i], rich = '<pre>' .. html_escape(parts[i]) .. '</pre>', true
    else
      html[i] = '<pre>' .. html_escape(parts[i]) .. '</pre>'
    end
  end
  repl.colour = saved
  local data = { ['text/plain'] = table.concat(parts, sep, 1, n) }
  if rich then data['text/html'] = table.concat(html, '\n', 1, n) end
  return data
end

-- ---------------------------------------------------------------- scenes as pictures

local cell = { count = 0 } -- the running cell: count, quiet, timed, displays
local live = { interval = 0.5 }

local function viz_module()
  local ok, v = pcall(require, 'lumen.viz')
  if ok and type(v) == 'table' and type(v.snapshot) == 'function' then return v end
end

-- Draws the current scene into a PNG and sends it: a new output the first time this cell shows
-- this scene, an update of that output after.
local function send_scene(final)
  local viz = viz_module()
  local st = viz and viz.state()
  if not st or not st.scene then return end
  local now = lm.sys.clock()
  live.dirty = false
  live.last = now
  local path = os.tmpname()
  os.remove(path)
  path = path .. '.png'
  local ok, err = pcall(viz.snapshot, path)
  if not ok then
    io.stderr:write('lumen kernel: the scene could not be drawn: ', tostring(err), '\n')
    return
  end
  local key = st.scene
  cell.displays = cell.displays or {}
  local id = cell.displays[key]
  local update = id ~= nil
  if not id then
    id = string.format('lumen-%d-%s-%d', cell.count, key, os.time())
    cell.displays[key] = id
  end
  send { type = 'display', png_file = path, display_id = id, update = update, final = final or false,
    text = string.format('<scene %s: %s>', key, st.title or '') }
end

-- After a viz call: the picture now (a new scene, or the first time) or when due (live).
local function touched(force)
  live.dirty = true
  if force or not live.last or lm.sys.clock() - live.last >= live.interval then send_scene(false) end
end

local function wrap_viz()
  local viz = viz_module()
  if not viz or viz._kernel_wrapped then return end
  viz._kernel_wrapped = true
  local show, scene, plot, follow = viz.show, viz.scene, viz.plot, viz.follow
  local function scene_changed(before)
    local st = viz.state()
    return st.scene ~= before
  end
  viz.show = function(...)
    local before = viz.state().scene
    local r = table.pack(show(...))
    touched(scene_changed(before) or not (cell.displays or {})[viz.state().scene or ''])
    return table.unpack(r, 1, r.n)
  end
  viz.scene = function(...)
    local r = table.pack(scene(...))
    touched(true)
    return table.unpack(r, 1, r.n)
  end
  -- curves in a cell that shows no other scene: the curves scene (a live attention scene, say,
  -- keeps the window while its loss is plotted)
  local function curves()
    local st = viz.state().scene
    if st ~= 'curves' and not next(cell.displays or {}) then scene('curves') end
    return viz.state().scene == 'curves'
  end
  viz.plot = function(...)
    local r = table.pack(plot(...))
    if curves() then touched(not (cell.displays or {}).curves) end
    return table.unpack(r, 1, r.n)
  end
  viz.follow = function(...)
    local r = table.pack(follow(...))
    if curves() then touched(not (cell.displays or {}).curves) end
    return table.unpack(r, 1, r.n)
  end
end

-- ---------------------------------------------------------------- requests

--- Called once when the kernel starts: the REPL prints without colours, viz is wrapped.
function M.start()
  M.serving = true -- lesson scenes need no "drawn offscreen" note: the picture is in the notebook
  repl.colour = false
  repl.editing = false
  wrap_viz()
end

local function parse_body(body)
  local head, code = body:match('^([^\n]*)\n(.*)$')
  if not head then return {}, body end
  local nums = {}
  for w in head:gmatch('%S+') do nums[#nums + 1] = tonumber(w) end
  return nums, code
end

local function compile(code, name)
  local fn = load('return ' .. code, name, 't')
  if fn then return fn end
  -- the last line an expression: the rest and `return <line>` as one chunk (locals stay visible)
  local body, last = code:match('^(.*\n)([^\n]*%S[^\n]*)%s*$')
  if last and not last:match(';%s*$') then
    fn = load(body .. 'return ' .. last, name, 't')
    if fn then return fn end
  end
  return load(code, name, 't')
end

--- execute: the cell's function, or nil after sending the syntax error.
function M.prepare(body)
  local nums, code = parse_body(body)
  cell = { count = math.tointeger(nums[1]) or cell.count + 1, displays = {} }
  live.last, live.dirty = nil, false
  local stripped = code:gsub('%s+$', '')
  cell.quiet = stripped:sub(-1) == ';'
  local name = '=[' .. cell.count .. ']'
  -- a cell of ':' commands (each line), as the REPL runs them
  local first = code:match('^%s*(%S)')
  if first == ':' and not code:match('^%s*::') then
    local cmds = {}
    for line in code:gmatch('[^\n]+') do
      if line:match('%S') then
        local c, rest = line:match('^%s*:(%a*)%s*(.-)%s*$')
        if not c then
          send { type = 'error', ename = 'SyntaxError', evalue = "a cell of commands has a line that is not one: '" .. line
            .. "' (put Lua in a cell of its own)", traceback = { "a cell of commands has a line that is not one: '" .. line .. "'" } }
          return nil
        end
        cmds[#cmds + 1] = { c, rest }
      end
    end
    if #cmds == 1 and cmds[1][1] == 'time' then
      if cmds[1][2] == '' then
        return function() print('usage: :time EXPR  (or a statement; runs it and prints wall and CPU time)') end
      end
      local fn, err = compile(cmds[1][2], name)
      if not fn then
        send { type = 'error', ename = 'SyntaxError', evalue = err, traceback = { err } }
        return nil
      end
      cell.timed = true
      return fn
    end
    cell.quiet = true
    return function()
      for _, c in ipairs(cmds) do
        if c[1] == 'time' then error(':time takes the whole cell (one line)', 0) end
        if c[1] == 'quit' or c[1] == 'q' or c[1] == 'exit' then
          print('(:quit does nothing in a notebook: the kernel menu restarts or shuts the kernel down)')
        else
          repl.command(c[1], c[2])
        end
      end
    end
  end
  local fn, err = compile(code, name)
  if not fn then
    send { type = 'error', ename = 'SyntaxError', evalue = err, traceback = { err } }
    return nil
  end
  return fn
end

--- The values of a cell that ran: `_` takes the first; shown unless the cell ends in ';'.
function M.results(...)
  local n = select('#', ...)
  if n == 0 then return end
  _G._ = (...)
  if cell.quiet then return end
  send { type = 'result', data = M.bundle(...) }
end

-- Frames of the traceback worth showing: the cells', not the kernel's or Lumen's own.
local function user_frames(msg)
  local head, tb = msg:match('^(.-)\nstack traceback:\n(.*)$')
  if not head then return msg, {} end
  local frames = {}
  for line in tb:gmatch('[^\n]+') do
    local l = line:gsub('^%s+', '')
    if l:match('^%[%d+%]:') then frames[#frames + 1] = '  ' .. l end
  end
  return head, frames
end

--- A cell that raised: the error as Jupyter shows it (ename, evalue, the cells' frames).
function M.error(msg)
  msg = type(msg) == 'string' and msg or tostring(msg)
  local head, frames = user_frames(msg)
  local interrupted = head:find('interrupted', 1, true) ~= nil
  local tb = { head }
  if #frames > 0 then
    tb[2] = 'stack traceback (your cells):'
    for _, f in ipairs(frames) do tb[#tb + 1] = f end
  end
  send { type = 'error', ename = interrupted and 'Interrupted' or 'LuaError', evalue = head, traceback = tb }
end

local function fmt_time(s)
  if s < 1e-3 then return string.format('%.0f us', s * 1e6) end
  if s < 1 then return string.format('%.1f ms', s * 1e3) end
  return string.format('%.2f s', s)
end

--- The cell is over: its time (after :time, or when it took more than a second, as the REPL),
--- the last picture of a live scene, then the reply.
function M.done(ok, wall, cpu)
  if cell.timed then
    print(string.format('wall %s, CPU %s (all threads)', fmt_time(wall), fmt_time(cpu)))
  elseif wall > 1 then
    print(string.format('(took %s, CPU %s)', fmt_time(wall), fmt_time(cpu)))
  end
  if live.dirty then pcall(send_scene, true) end
  send { type = 'done', status = ok and 'ok' or 'error' }
end

-- The name around byte position pos of code (for completion and inspection): its start (0-based)
-- and the text.
local function word_at(code, pos)
  local before = code:sub(1, pos)
  local s = before:find('[%w_%.:]*$')
  local after = code:sub(pos + 1):match('^[%w_]*')
  return s - 1, before:sub(s) .. after, before:sub(s)
end

local requests = {}

function requests.complete(nums, code)
  local pos = math.tointeger(nums[1]) or #code
  -- the line the cursor is on, as the REPL's completion sees it
  local line_start = (code:sub(1, pos):match('.*\n()') or 1)
  local line = code:sub(line_start, pos)
  local start = (line:find('[%w_%.:]*$') or (#line + 1)) - 1
  local s = line:sub(start + 1)
  if s:match('^:') and not line:sub(1, start):match('^%s*$') then start = start + 1 end
  -- inside a string: file names (the REPL's rule: the word begins after the quote)
  local q = line:sub(1, start):match('.*()["\']')
  if q and select(2, line:sub(1, q):gsub('["\']', '')) % 2 == 1 then start = q end
  local ok, matches = pcall(repl.complete, line, start, #line)
  if not ok or type(matches) ~= 'table' then matches = {} end
  send { type = 'complete', matches = setmetatable(matches, M.array), cursor_start = line_start - 1 + start,
    cursor_end = pos }
end

function requests.inspect(nums, code)
  local pos = math.tointeger(nums[1]) or #code
  local _, word = word_at(code, pos)
  word = word:gsub('[%.:]$', '')
  if word == '' then
    send { type = 'inspect', found = false }
    return
  end
  local out = {}
  local saved_print = print
  print = function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    out[#out + 1] = table.concat(t, '\t', 1, t.n)
  end
  local ok, err = pcall(require('lumen.help').show, word, nil)
  print = saved_print
  local text = table.concat(out, '\n')
  if not ok then text = tostring(err) end
  local found = ok and not text:match("^no help for") and not text:match("^no REPL command")
  send { type = 'inspect', found = found, text = text }
end

function requests.is_complete(_, code)
  local status = 'complete'
  if not code:match('^%s*:') and not load('return ' .. code, '=cell', 't') then
    local _, err = load(code, '=cell', 't')
    if err then status = err:match('<eof>$') and 'incomplete' or 'invalid' end
  end
  send { type = 'is_complete', status = status, indent = status == 'incomplete' and '  ' or nil }
end

--- The other requests: complete, inspect, is_complete.
function M.request(kind, body)
  local nums, code = parse_body(body)
  local h = requests[kind]
  if not h then
    send { type = 'error', ename = 'KernelError', evalue = 'unknown request ' .. kind, traceback = { 'unknown request ' .. kind } }
    return
  end
  h(nums, code)
end

-- ---------------------------------------------------------------- installing the kernelspec

local function here()
  return (debug.getinfo(1, 'S').source:match('^@(.*/)') or './')
end

local function mkdir_p(path)
  local ok = os.execute("mkdir -p '" .. path:gsub("'", "'\\''") .. "'")
  return ok
end

local function write_file(path, text)
  local f, err = io.open(path, 'wb')
  if not f then return nil, err end
  f:write(text)
  f:close()
  return true
end

--- lumen --install-jupyter-kernel [--user | --prefix P]: writes the kernelspec 'lumen' (kernel.json
--- and the Python wrapper) into Jupyter's data directory: ~/.local/share/jupyter/kernels/lumen
--- (--user, the default, or $JUPYTER_DATA_DIR/kernels/lumen when set) or P/share/jupyter/kernels/lumen.
function M.install(args)
  local prefix, user = nil, true
  local i = 1
  while args[i] do
    local a = args[i]
    if a == '--user' then user = true
    elseif a == '--prefix' then
      prefix = args[i + 1]
      if not prefix then
        io.stderr:write('lumen --install-jupyter-kernel: --prefix needs a directory\n')
        return 1
      end
      user = false
      i = i + 1
    else
      io.stderr:write("lumen --install-jupyter-kernel: unknown option '" .. a .. "' (--user or --prefix DIR)\n")
      return 1
    end
    i = i + 1
  end
  local dir
  if prefix then
    dir = prefix .. '/share/jupyter/kernels/lumen'
  else
    local data = os.getenv('JUPYTER_DATA_DIR')
    if not data or data == '' then
      local xdg = os.getenv('XDG_DATA_HOME')
      data = (xdg and xdg ~= '' and xdg or ((os.getenv('HOME') or '.') .. '/.local/share')) .. '/jupyter'
    end
    dir = data .. '/kernels/lumen'
  end
  if not mkdir_p(dir) then
    io.stderr:write("lumen --install-jupyter-kernel: cannot create '" .. dir .. "'\n")
    return 1
  end
  local src = here() .. 'jupyter_kernel.py'
  local f = io.open(src, 'rb')
  if not f then
    io.stderr:write("lumen --install-jupyter-kernel: the wrapper '" .. src .. "' is missing\n")
    return 1
  end
  local wrapper = f:read('a')
  f:close()
  local ok, err = write_file(dir .. '/lumen_kernel.py', wrapper)
  if not ok then
    io.stderr:write('lumen --install-jupyter-kernel: ' .. tostring(err) .. '\n')
    return 1
  end
  local exe = lm.sys.executable()
  local spec = {
    argv = { '/usr/bin/python3', dir .. '/lumen_kernel.py', '-f', '{connection_file}', '--lumen', exe },
    display_name = 'Lumen (Lua)',
    language = 'lua',
    interrupt_mode = 'signal',
    -- ipykernel's debugger support otherwise warns about frozen modules on every start
    env = { PYDEVD_DISABLE_FILE_VALIDATION = '1' },
    metadata = { debugger = false },
  }
  ok, err = write_file(dir .. '/kernel.json', json(spec) .. '\n')
  if not ok then
    io.stderr:write('lumen --install-jupyter-kernel: ' .. tostring(err) .. '\n')
    return 1
  end
  print(string.format("installed the Jupyter kernel 'lumen' (Lumen (Lua)) in %s, running %s", dir, exe))
  return 0
end

-- ---------------------------------------------------------------- lessons as notebooks

local ncells = 0
local function cell_id()
  ncells = ncells + 1
  return string.format('lumen-%03d', ncells)
end

local function md_cell(text)
  return { id = cell_id(), cell_type = 'markdown', metadata = {}, source = text }
end

local function code_cell(text)
  return { id = cell_id(), cell_type = 'code', metadata = {}, source = text, outputs = setmetatable({}, M.array),
    execution_count = NULL }
end

--- A lesson as an nbformat 4 notebook (a Lua table): its title and summary, then for each step
--- its text (markdown), its code, a cell that shows its scene, and for an exercise its prompt and
--- a cell that checks it (lesson.verdict prints the verdict and, when wrong, the next hint).
function M.notebook(name, lang)
  local lesson = require 'lesson'
  local T = require 'lumen.lesson_text'
  local entry, err = lesson.find(name)
  if not entry then error(err, 0) end
  local L, lerr = lesson.load(entry.path)
  if not L then error(lerr, 0) end
  local function pick(t) return t and T.pick(t, lang) or nil end
  local cells = {}
  ncells = 0
  cells[#cells + 1] = md_cell('# ' .. (pick(L.title) or entry.name) .. '\n\n' .. (pick(L.summary) or ''))
  cells[#cells + 1] = code_cell(string.format("lesson.open('%s', {record = false})\nlesson.lang('%s');", entry.name,
    lang))
  for i, step in ipairs(L.steps) do
    local text = string.format('## %d. %s\n\n%s', i, pick(step.title) or '', pick(step.text) or '')
    cells[#cells + 1] = md_cell(text)
    if step.code then cells[#cells + 1] = code_cell(step.code) end
    if step.scene then cells[#cells + 1] = code_cell(string.format('lesson.scene(%d);', i)) end
    if step.exercise then
      local ex = step.exercise
      cells[#cells + 1] = md_cell('**' .. (lang == 'zh' and '练习' or 'Exercise') .. '.** ' .. (pick(ex.prompt) or '')
        .. '\n\n' .. (lang == 'zh' and '改好上面的代码，运行它，再运行下面的检查。' or
          'Correct the code above, run it, then run the check below.'))
      cells[#cells + 1] = code_cell(string.format('lesson.verdict(%d);', i))
    end
  end
  return {
    nbformat = 4, nbformat_minor = 5, cells = cells,
    metadata = {
      kernelspec = { name = 'lumen', display_name = 'Lumen (Lua)', language = 'lua' },
      language_info = { name = 'lua', version = _VERSION:match('[%d%.]+'), file_extension = '.lua',
        mimetype = 'text/x-lua', codemirror_mode = 'lua' },
      lumen = { lesson = entry.name, lang = lang },
    },
  }
end

--- lumen --lesson-notebook NAME OUT.ipynb [--lang en|zh]
function M.notebook_cli(args)
  local name, out, lang = nil, nil, nil
  local i = 1
  while args[i] do
    local a = args[i]
    if a == '--lang' then
      lang = args[i + 1]
      i = i + 1
      if lang ~= 'en' and lang ~= 'zh' then
        io.stderr:write("lumen --lesson-notebook: --lang takes en or zh, got '" .. tostring(lang) .. "'\n")
        return 1
      end
    elseif not name then name = a
    elseif not out then out = a
    else
      io.stderr:write("lumen --lesson-notebook: unexpected argument '" .. a .. "'\n")
      return 1
    end
    i = i + 1
  end
  if not name or not out then
    io.stderr:write('usage: lumen --lesson-notebook NAME OUT.ipynb [--lang en|zh]\n')
    return 1
  end
  lang = lang or (require('lumen.lesson_text').lang())
  local ok, nb = pcall(M.notebook, name, lang)
  if not ok then
    io.stderr:write('lumen --lesson-notebook: ' .. tostring(nb):gsub('^lesson%.open: ', '') .. '\n')
    return 1
  end
  local tmp = out .. '.tmp'
  local wrote, err = write_file(tmp, json(nb) .. '\n')
  if not wrote or not os.rename(tmp, out) then
    os.remove(tmp)
    io.stderr:write('lumen --lesson-notebook: cannot write ' .. out .. ': ' .. tostring(err) .. '\n')
    return 1
  end
  print(string.format('wrote %s: %s (%s), %d cells', out, name, lang, #nb.cells))
  return 0
end

return M
