-- Reading where a file is meant (issue 29.2): Lumen's own readers open regular files only, so a
-- FIFO (which blocks in open() until a writer comes), /dev/zero or a symlink to it (which never
-- ends), a directory or a socket is refused at once with what it is, and left as it was. The
-- readers: lm.load, lm.load_npy, the IDX loader behind data.FashionMNIST, lm.sys.read_file (the
-- lessons' files and progress), viz.follow (tests/viz/test_data_scenes.lua). Every case runs in a
-- child under `timeout`, so a regression fails the test instead of hanging it.
local test = require 'lumen.test'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local dir = os.tmpname()
os.remove(dir)
os.execute('mkdir -p ' .. q(dir))
local fifo, zero, sub = dir .. '/fifo', dir .. '/zero', dir .. '/sub'
os.execute('mkfifo ' .. q(fifo) .. ' && ln -s /dev/zero ' .. q(zero) .. ' && mkdir ' .. q(sub))

local targets = {
  { fifo, 'a FIFO %(named pipe%)' },
  { zero, 'a character device' },
  { '/dev/zero', 'a character device' },
  { sub, 'a directory' },
}

-- Runs code in a child lumen (at most 20 s); returns its output and exit code.
local function child(code)
  local p = io.popen(string.format('timeout 20 %s -e %s 2>&1', q(exe), q(code)))
  local out = p:read('a')
  local _, _, rc = p:close()
  return out, rc
end

test.case('lm.sys.read_file and lm.sys.isfile: a regular file read whole; anything else named, at once', function()
  local path = dir .. '/text'
  lm.sys.write_file(path, 'one\0two\n')
  test.eq(lm.sys.read_file(path), 'one\0two\n')
  test.eq(lm.sys.isfile(path), true)
  local data, why, what = lm.sys.read_file(dir .. '/missing')
  test.eq({ data, what }, { nil, 'missing' })
  test.ok(why:find('No such file or directory', 1, true), why)
  test.eq({ lm.sys.isfile(dir .. '/missing') }, { false, 'missing' })
  for _, t in ipairs(targets) do
    local out, rc = child(string.format('print(lm.sys.read_file(%q)) print(lm.sys.isfile(%q))', t[1], t[1]))
    test.eq(rc, 0, out)
    test.ok(out:find('^nil\t[^\n]*: it is ' .. t[2] .. ', not a regular file\tnot regular\nfalse\t' .. t[2] .. '\n$'), out)
  end
  test.raises(function() lm.sys.read_file('') end, 'lm.sys.read_file: the path is empty')
  test.raises(function() lm.sys.read_file('a\0b') end, 'holds a NUL byte')
end)

test.case('lm.load, lm.load_npy and the IDX loader refuse a FIFO, /dev/zero, a directory at once', function()
  for _, t in ipairs(targets) do
    for _, f in ipairs { 'lm.load', 'lm.load_npy' } do
      local out, rc = child(string.format('print(pcall(%s, %q))', f, t[1]))
      test.eq(rc, 0, f .. ' ' .. t[1] .. ': ' .. out)
      test.ok(out:find('^false\t' .. f:gsub('%.', '%%.') .. ": '[^']*': not a regular file %(it is " .. t[2] .. '%)'), out)
    end
  end
  -- a data root whose training images are a FIFO
  local root = dir .. '/fashion'
  os.execute('mkdir -p ' .. q(root) .. ' && mkfifo ' .. q(root .. '/train-images-idx3-ubyte.gz') .. ' && : > ' .. q(root .. '/train-labels-idx1-ubyte.gz'))
  local out, rc = child(string.format("print(pcall(data.FashionMNIST, { root = %q }))", root))
  test.eq(rc, 0, out)
  test.ok(out:find('^false\t.*train%-images%-idx3%-ubyte%.gz.*not a regular file %(it is a FIFO %(named pipe%)%)'), out)
end)

test.case('a lesson file that is a FIFO or /dev/zero: an error, not a hang', function()
  for _, t in ipairs { { fifo, 'a FIFO %(named pipe%)' }, { zero, 'a character device' } } do
    local out, rc = child(string.format("print(require('lumen.lesson_format').load(%q))", t[1]))
    test.eq(rc, 0, out)
    test.ok(out:find('cannot read the lesson file %(.*: it is ' .. t[2] .. ', not a regular file%)'), out)
  end
  local p = io.popen('stat -c %F ' .. q(fifo))
  test.eq(p:read('l'), 'fifo', 'left as it was')
  p:close()
end)

test.case('(cleanup)', function() os.execute('rm -rf ' .. q(dir)) end)
