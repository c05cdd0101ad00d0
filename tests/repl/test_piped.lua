-- The REPL without a terminal: lines piped to `lumen` are evaluated as typed (results printed,
-- `..` continuations, ';', `_`, commands), with no banner and no prompt; errors go to stderr and
-- the REPL goes on; `lumen -i FILE` runs the file first. Runs the program through io.popen.
local test = require 'lumen.test'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local tmp = os.tmpname()

-- Runs `printf input | lumen args`; returns stdout, stderr, exit code.
local function repl(input, args)
  local f = assert(io.open(tmp, 'w'))
  f:write(input)
  f:close()
  local p = io.popen(q(exe) .. ' ' .. (args or '') .. ' < ' .. q(tmp) .. ' 2>' .. q(tmp .. '.err'))
  local out = p:read('a')
  local _, _, code = p:close()
  local e = assert(io.open(tmp .. '.err'))
  local err = e:read('a')
  e:close()
  return out, err, code
end

test.case("printf '1+1\\n' | lumen prints 2", function()
  local p = io.popen("printf '1+1\\n' | " .. q(exe))
  local out = p:read('a')
  local _, _, code = p:close()
  test.eq(out, '2\n')
  test.eq(code, 0)
end)

test.case('expressions print, statements do not, several results are tab-separated', function()
  local out, err, code = repl('x = 20\nx + 22\n1, "a", nil, true\nlocal y = 3\nprint("hi")\n')
  test.eq(out, '42\n1\ta\tnil\ttrue\nhi\n')
  test.eq(err, '')
  test.eq(code, 0)
end)

test.case('incomplete chunks continue; a trailing ; prints nothing; _ is the last result', function()
  local out = repl('function sq(x)\n  return x * x\nend\nsq(7)\n_ + 1\nsq(2);\n_\nlm.tensor({1,\n2})\n1 +\n2\n')
  test.eq(out, '49\n50\n4\n[1, 2]\n[int64 tensor of shape [2] on cpu]\n3\n')
end)

test.case('tables print on one line, tensors in full', function()
  local out = repl('{1, 2, x = "a", {3}}\nlm.ones(2, 2)\n{lm.zeros(3)}\n')
  test.eq(out, '{1, 2, {3}, x = "a"}\n[[1., 1.],\n [1., 1.]]\n[float32 tensor of shape [2, 2] on cpu]\n'
    .. '{tensor(float32 [3])}\n')
end)

test.case('errors go to stderr and the REPL goes on with its state', function()
  local out, err, code = repl('a = 5\nlm.zeros(-1)\nerror("boom")\n1 +\n)\na\nerror({})\n')
  test.eq(out, '5\n')
  test.ok(err:find('stdin:1: lm.zeros: size 1 must be a non-negative integer, got -1\n', 1, true), err)
  test.ok(err:find('stdin:1: boom\n', 1, true), err)
  test.ok(err:find("stdin:2: unexpected symbol near ')'", 1, true), err) -- '1 +' continued
  test.ok(err:find('(error object is a table value)', 1, true), err)
  test.ok(not err:find('stack traceback', 1, true), 'no traceback when it says nothing more: ' .. err)
  test.eq(code, 0)
end)

test.case('input that ends inside a statement: what is unfinished, and exit status 1', function()
  local out, err, code = repl('print("first")\nfor i = 1, 3 do\nprint(i)\n')
  test.eq(out, 'first\n', 'the unfinished loop never ran')
  test.eq(err, "stdin:2: 'end' expected (to close 'for' at line 1) near <eof>\n")
  test.eq(code, 1)
  out, err, code = repl('x = 1 +\n')
  test.eq(err, 'stdin:1: unexpected symbol near <eof>\n', 'an unfinished expression')
  test.eq(code, 1)
  _, err, code = repl('t = {1,\n2') -- no newline at the end either
  test.eq(err, "stdin:2: '}' expected (to close '{' at line 1) near <eof>\n")
  test.eq(code, 1)
  _, err, code = repl('for i = 1, 2 do\nend\n')
  test.eq(err, '')
  test.eq(code, 0, 'a finished one')
end)

test.case("an error inside nn points at the REPL's line, as a tensor error does", function()
  local _, err = repl('m = nn.Linear(4, 3)\ny = m(lm.zeros(2, 5))\nz = nn.Linear(4, "a")\n')
  test.ok(err:find('stdin:1: nn.Linear: input of shape [2, 5] does not fit in_features=4', 1, true), err)
  test.ok(err:find("stdin:1: nn.Linear: out_features must be a positive integer, got 'a'", 1, true), err)
end)

test.case('a traceback is shown when the error comes from deeper frames', function()
  local _, err = repl('function f() error("deep") end\nfunction g() f() end\ng()\n')
  test.ok(err:find('stdin:1: deep', 1, true), err)
  test.ok(err:find('stack traceback:', 1, true), err)
  test.ok(err:find("in function 'f'", 1, true) or err:find("in global 'f'", 1, true), err)
  test.ok(not err:find('[C]: in ?', 1, true), 'the REPL\'s own frame is cut: ' .. err)
end)

test.case('commands work without a terminal', function()
  local out = repl(':help lm.ones\n:time 1 + 1\n:mem\n:who\n:lessons\n:nope\n:quit\n1 + 1\n')
  test.ok(out:find('lm.ones(d1, d2', 1, true), out)
  test.ok(out:find('\n2\nwall ', 1, true), out)
  test.ok(out:find('GPU not timed: nothing has run on the GPU (x:cuda() moves a tensor there)', 1, true), out)
  test.ok(out:find('tensor memory: ', 1, true), out)
  test.ok(out:find('No globals of yours yet', 1, true), out)
  test.ok(out:find(':lesson NAME or :lesson N opens one', 1, true), out) -- :lessons lists them
  test.ok(out:find("unknown command ':nope'", 1, true), out)
  test.ok(not out:find('\n2\n$'), ':quit stops reading: ' .. out)
end)

test.case('a command that runs over a second reports its time', function()
  local out = repl('local t = lm.sys.clock() while lm.sys.clock() - t < 1.1 do end\n')
  test.ok(out:match('^%(took 1%.%d%d s, CPU [%d.]+ m?s%)\n$'), out)
end)

test.case('-i FILE runs the file, then the REPL with its globals; an error does not stop it', function()
  local f = assert(io.open(tmp .. '.lua', 'w'))
  f:write('y = 6 * 7\n')
  f:close()
  local out, _, code = repl('y\n', '-i ' .. q(tmp .. '.lua'))
  test.eq(out, '42\n')
  test.eq(code, 0)
  f = assert(io.open(tmp .. '.lua', 'w'))
  f:write('z = 1\nerror("in the script")\n')
  f:close()
  local err
  out, err, code = repl('z\n', '-i ' .. q(tmp .. '.lua'))
  test.eq(out, '1\n')
  test.ok(err:find('in the script', 1, true), err)
  out = repl(':who\n', "-e 'w = lm.zeros(2)' -i")
  test.ok(out:find('w%s+tensor%s+float32 %[2%]%s+8 B'), out)
  os.remove(tmp .. '.lua')
end)

test.case('empty input, Ctrl-D equivalents and no history file without a terminal', function()
  local out, err, code = repl('')
  test.eq(out, '')
  test.eq(err, '')
  test.eq(code, 0)
  out = repl('-- a comment\n\n   \n')
  test.eq(out, '')
end)

test.case('cleanup', function()
  os.remove(tmp)
  os.remove(tmp .. '.err')
end)

test.case('garbage piped in (random bytes, unfinished strings, a huge line, deep nesting) is survived', function()
  local bytes, state = {}, 12345
  for i = 1, 20000 do -- a fixed pseudo-random byte stream, without the openers of long strings
    state = (state * 1103515245 + 12345) % 2 ^ 31
    local b = state >> 16 & 0xff
    if b == 91 or b == 34 or b == 39 then b = 32 end -- [ " '
    bytes[i] = string.char(b)
  end
  local input = table.concat(bytes) .. '\nx = "unfinished\n' .. 'y = [[ a\nb ]]\n'
    .. 'z = ' .. string.rep('1+', 200000) .. '1\n' .. 'print(' .. string.rep('(', 10000) .. ')\n'
    .. ':help ' .. string.rep('x', 10000) .. '\n:time (((\n:bogus\n\0\nprint("alive", z)\n'
  local out, err, code = repl(input)
  test.eq(code, 0)
  test.ok(out:find('alive\t200001', 1, true), out:sub(-200))
  test.ok(err:find('unfinished string', 1, true), err:sub(1, 200))
end)
