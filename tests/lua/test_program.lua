-- The lumen program: command line, scripts and `arg`, modules found whatever LUA_PATH says, and
-- the test runner itself. Runs the program again through io.popen.
local test = require 'lumen.test'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run(cmd)
  local p = io.popen(cmd .. ' 2>&1')
  local out = p:read('a')
  local _, _, code = p:close()
  return out, code
end
local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. q(tmp))
local function write(name, text)
  local f = assert(io.open(tmp .. '/' .. name, 'w'))
  f:write(text)
  f:close()
  return tmp .. '/' .. name
end

test.case('-e runs code with lm and F preloaded', function()
  local out, code = run(q(exe) .. " -e 'print(1 + 1, lm.zeros(2):numel(), F == lm.nn.functional)'")
  test.eq(out, '2\t2\ttrue\n')
  test.eq(code, 0)
  out = run(q(exe) .. " -e 'io.write(1)' -e 'io.write(2)'")
  test.eq(out, '12')
end)

test.case('a script gets arg as in lua.c and ... ', function()
  local s = write('args.lua', "print(arg[0], arg[1], arg[2], #arg, select('#', ...), ...)\nprint(arg[-1] ~= nil)")
  local out, code = run(q(exe) .. ' ' .. q(s) .. ' a b')
  test.eq(out, s .. '\ta\tb\t2\t2\ta\tb\ntrue\n')
  test.eq(code, 0)
  out = run('echo "print(40 + 2)" | ' .. q(exe) .. ' -')
  test.eq(out, '42\n')
  out, code = run(q(exe) .. " -e 'os.exit(3)'")
  test.eq(code, 3)
end)

test.case('an error prints a traceback and exits with status 1', function()
  local s = write('err.lua', 'local function f() lm.zeros(-1) end\nf()\n')
  local out, code = run(q(exe) .. ' ' .. q(s))
  test.eq(code, 1)
  test.ok(out:find('lm.zeros: size 1 must be a non-negative integer, got -1', 1, true), out)
  test.ok(out:find('stack traceback', 1, true), out)
  test.ok(out:find('err.lua:1', 1, true), out)
  out, code = run(q(exe) .. " -e 'error({})'")
  test.eq(code, 1)
  out, code = run(q(exe) .. ' ' .. q(tmp .. '/missing.lua'))
  test.eq(code, 1)
  test.ok(out:find('cannot open', 1, true), out)
  out, code = run(q(exe) .. ' --no-such-option')
  test.eq(code, 1)
  test.ok(out:find("unknown option '--no-such-option'", 1, true), out)
end)

test.case('--version, --help and the banner', function()
  local out, code = run(q(exe) .. ' --version')
  test.eq(code, 0)
  for _, word in ipairs({ 'Lumen ' .. lm.version, 'BLAS', 'CUDA', 'SDL', 'Lua 5.4' }) do
    test.ok(out:find(word, 1, true), word .. ' in ' .. out)
  end
  out, code = run(q(exe) .. ' --help')
  test.eq(code, 0)
  test.ok(out:find('usage: lumen', 1, true) and out:find('--test', 1, true), out)
  test.ok(out:find('-i ', 1, true), '-i: the REPL after the script')
  out, code = run(q(exe) .. ' </dev/null')
  test.eq(code, 0)
  test.eq(out, '', 'the REPL prints nothing for empty piped input (tests/repl/ tests it further)')
end)

test.case('modules load from any directory whatever LUA_PATH says', function()
  write('lumen.lua', "return 'fake'")
  os.execute('mkdir -p ' .. q(tmp .. '/lumen'))
  write('lumen/init.lua', "return 'fake'")
  write('lumen/test.lua', "return 'fake'")
  local env = 'cd / && LUA_PATH=' .. q(tmp .. '/?.lua;' .. tmp .. '/?/init.lua') .. ' LUA_CPATH=/nonexistent/?.so '
  local out, code = run(env .. q(exe) .. " -e \"print(type(require 'lumen'), require('lumen') == lm, type(require 'lumen.test'))\"")
  test.eq(out, 'table\ttrue\ttable\n')
  test.eq(code, 0)
  out = run('cd / && LUA_PATH=";;;garbage" ' .. q(exe) .. " -e 'print(lm.lua_dir == " .. string.format('%q', lm.lua_dir) .. ")'")
  test.eq(out, 'true\n')
end)

test.case('modules of API.md that are not built yet fail clearly', function()
  for _, name in ipairs({ 'nn', 'optim', 'data', 'kernels', 'viz', 'lesson' }) do
    local exists = io.open(lm.lua_dir .. '/lumen/' .. name .. '.lua') or
        io.open(lm.lua_dir .. '/lumen/' .. name .. '/init.lua')
    if exists then
      exists:close()
      test.eq(require(name), require('lumen.' .. name), name .. ': one table under both names')
      test.eq(_G[name], require(name), name .. ' preloaded as a global')
    else
      test.raises(function() require(name) end, "module '" .. name .. "' is not built yet")
      test.raises(function() require('lumen.' .. name) end, "module 'lumen." .. name .. "' is not built yet")
      test.eq(rawget(_G, name), nil)
      -- reading the global says so too (lm.planned, lua/lumen/init.lua)
      test.raises(function() return _G[name] end, name .. " is not built yet")
    end
  end
  test.raises(function() require('lumen.no_such_module') end, "module 'lumen.no_such_module' not found")
end)

test.case('the test runner: one line per failure, the summary last, exit status', function()
  os.execute('mkdir -p ' .. q(tmp .. '/suite'))
  write('suite/test_a.lua', [[
local test = require 'lumen.test'
test.case('passes', function() test.eq(1, 1) end)
test.case('fails', function()
  test.near(1.5, 2)
end)
test.case('raises', function() local _ = lm.ones(2) + lm.ones(3) end)
]])
  write('suite/test_b.lua', 'local x = = 1\n')
  write('suite/helper.lua', 'error("not a test file")\n')
  local out, code = run(q(exe) .. ' --test ' .. q(tmp .. '/suite'))
  test.eq(code, 1)
  local lines = {}
  for l in out:gmatch('[^\n]+') do lines[#lines + 1] = l end
  test.eq(#lines, 4, out)
  test.ok(lines[1]:find('test_a.lua:4: [fails] expected 2', 1, true), lines[1])
  test.ok(lines[2]:find('test_a.lua:6: [raises] Tensor:__add:', 1, true), lines[2])
  test.ok(lines[3]:find('test_b.lua:1:', 1, true), lines[3])
  test.eq(lines[4], '1 passed, 3 failed')
end)

test.case('the test runner exits 0 when everything passes', function()
  os.execute('mkdir -p ' .. q(tmp .. '/good'))
  write('good/test_good.lua', "local test = require 'lumen.test'\ntest.case('a', function() end)\n")
  local out, code = run(q(exe) .. ' --test ' .. q(tmp .. '/good') .. ' ' .. q(tmp .. '/good/test_good.lua'))
  test.eq(out, '2 passed, 0 failed\n')
  test.eq(code, 0)
  os.execute('rm -rf ' .. q(tmp))
end)
