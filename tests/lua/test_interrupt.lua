-- One Ctrl-C stops any loop, wherever it runs (issue 29.2): the SIGINT handler arms the hook of
-- the main state and of the coroutine running now (Lua hooks are per thread), so a loop inside
-- coroutine.wrap, inside coroutine.resume, or inside a kernel thread that cleared its own hook
-- ends with "interrupted!" at the first Ctrl-C, not only at the second (which kills the process).
local test = require 'lumen.test'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs lumen -e code, sends one SIGINT after 0.7 s (and a KILL 5 s later if it is still alive):
-- the exit status, stderr and the seconds it took.
local function interrupted(code)
  local err = os.tmpname()
  local t0 = lm.sys.clock()
  local ok, how, status = os.execute(string.format('timeout --foreground --preserve-status -k 5 -s INT 0.7 %s -e %s 2> %s > /dev/null',
    q(exe), q(code), q(err)))
  local dt = lm.sys.clock() - t0
  local f = io.open(err)
  local msg = f and f:read('a') or ''
  if f then f:close() end
  os.remove(err)
  return status, msg, dt
end

for _, case in ipairs({
  { 'a loop in coroutine.wrap', 'coroutine.wrap(function() while true do end end)()' },
  { 'a loop in coroutine.resume', 'local co = coroutine.create(function() while true do end end) print(coroutine.resume(co)) error("resume returned") ' },
  { 'a loop in a coroutine that swallows errors with pcall',
    'coroutine.wrap(function() while true do pcall(function() while true do end end) end end)()' },
  { 'a kernel thread that cleared its hook', 'kernels.launch(function(t) debug.sethook() while true do end end, {block = 1})' },
  { 'a loop in the main chunk', 'while true do end' },
}) do
  test.case('one Ctrl-C stops ' .. case[1], function()
    local status, msg, dt = interrupted(case[2])
    test.ok(msg:find('interrupted!', 1, true), case[1] .. ': ' .. msg)
    test.ok(status ~= 0 and status ~= 137, 'exit status ' .. tostring(status) .. ' (137: it had to be killed)')
    test.ok(dt < 4, string.format('%.1f s', dt))
  end)
end
