-- One safe-write routine for every file Lumen writes whole (issue 29.1): lm.save, lm.save_npy,
-- the lessons' progress file (lm.sys.write_file), viz.snapshot. Only regular files are written
-- (a device, FIFO or directory at the target is an error, and stays what it was); a symlink is
-- followed to its target (the link stays a link), a dangling one refused; an existing file keeps
-- its mode, owner and hard links; a read-only file is refused for a user that may not write it;
-- no temporary is left behind, by an error, by SIGTERM or SIGKILL in the middle of a large save,
-- or by Ctrl-C (which either leaves the old file and says so, or completes the save).
local test = require 'lumen.test'

local exe = assert(lm.sys.executable())
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local dir = os.tmpname()
os.remove(dir)
os.execute('mkdir -p ' .. q(dir))
local function sh(cmd) local p = io.popen(cmd) local o = p:read('a') p:close() return (o:gsub('%s+$', '')) end
local function leftovers() return sh('ls -A ' .. q(dir) .. ' | grep -c lumen- || true') end

local writers = {
  { 'lm.save', function(p) lm.save(p, lm.ones(3)) end },
  { 'lm.save_npy', function(p) lm.save_npy(p, lm.ones(3)) end },
  { 'lm.sys.write_file', function(p) lm.sys.write_file(p, 'text\n') end },
}

test.case('not a regular file: a device, a FIFO, a directory are refused and left as they were', function()
  os.execute('mkfifo ' .. q(dir .. '/fifo'))
  os.execute('mkdir -p ' .. q(dir .. '/sub'))
  for _, w in ipairs(writers) do
    for _, t in ipairs({ { '/dev/null', 'a character device' }, { dir .. '/fifo', 'a FIFO' }, { dir .. '/sub', 'a directory' } }) do
      test.raises(function() w[2](t[1]) end, "cannot write '" .. t[1]:gsub('%p', '%%%0') .. "': it is " .. t[2], w[1])
    end
  end
  test.eq(sh('stat -c %F /dev/null'), 'character special file')
  test.eq(sh('stat -c %F ' .. q(dir .. '/fifo')), 'fifo')
  test.eq(leftovers(), '0')
end)

test.case('symlinks followed (the link stays a link), dangling ones refused; mode, owner and hard links kept', function()
  local target, link = dir .. '/target.bin', dir .. '/link.bin'
  for _, w in ipairs(writers) do
    os.remove(target); os.remove(link)
    w[2](target)
    os.execute('ln -s ' .. q(target) .. ' ' .. q(link))
    w[2](link)
    test.eq(sh('stat -c %F ' .. q(link)), 'symbolic link', w[1])
    os.execute('chmod 600 ' .. q(target))
    if sh('id -u') == '0' then os.execute('chown nobody ' .. q(target)) end
    w[2](target)
    test.eq(sh('stat -c %a ' .. q(target)), '600', w[1] .. ': the mode is kept')
    if sh('id -u') == '0' then test.eq(sh('stat -c %U ' .. q(target)), 'nobody', w[1] .. ': the owner is kept') end
    os.execute('ln -f ' .. q(target) .. ' ' .. q(dir .. '/hard.bin'))
    w[2](target)
    test.eq(sh('stat -c %h ' .. q(target)), '2', w[1] .. ': the hard link is kept')
    test.eq(sh('cmp -s ' .. q(target) .. ' ' .. q(dir .. '/hard.bin') .. ' && echo same'), 'same')
    os.remove(dir .. '/hard.bin')
  end
  os.execute('ln -sf ' .. q(dir .. '/nowhere') .. ' ' .. q(dir .. '/dangling'))
  test.raises(function() lm.save(dir .. '/dangling', lm.ones(1)) end, 'a symlink to nothing that exists')
  test.eq(leftovers(), '0')
end)

test.case('a read-only file is refused for a user who may not write it (as the shell refuses >)', function()
  if sh('id -u') ~= '0' or sh('command -v setpriv') == '' then return test.skip('needs root and setpriv to act as another user') end
  if sh(string.format('setpriv --reuid=nobody --regid=nogroup --clear-groups %s -e %s 2>&1', q(exe), q('print(6 * 7)'))) ~= '42' then
    return test.skip('user nobody cannot run this checkout (a directory above it is private)')
  end
  local ro = dir .. '/ro.bin'
  lm.save(ro, lm.ones(2))
  os.execute('chmod 755 ' .. q(dir) .. ' && chmod 444 ' .. q(ro) .. ' && chown nobody ' .. q(ro) .. ' && chown nobody ' .. q(dir))
  local out = sh(string.format('setpriv --reuid=nobody --regid=nogroup --clear-groups %s -e %s 2>&1', q(exe),
    q("print(pcall(lm.save, " .. string.format('%q', ro) .. ", lm.ones(5)))")))
  test.ok(out:find("cannot write '.-ro.bin': Permission denied %(it is read%-only for this user%)"), out)
  test.eq(lm.load(ro):numel(), 2, 'the file is as it was')
  os.execute('chown root ' .. q(dir))
end)

-- A child saving a large tensor over an existing file, killed in the middle: the old file is whole
-- and no temporary is left (SIGKILL too: the temporary has no name until it replaces the file).
test.case('killed in the middle of a large save (SIGTERM, SIGHUP, SIGKILL): the old file whole, nothing left behind', function()
  local path = dir .. '/big.st'
  lm.save(path, lm.arange(0, 10))
  for _, sig in ipairs({ 'TERM', 'HUP', 'KILL' }) do
    os.execute(string.format("(%s -e %s >/dev/null 2>&1 & pid=$!; sleep 0.4; kill -%s $pid; wait $pid) 2>/dev/null", q(exe),
      q("local x = lm.rand(4000, 4000) for i = 1, 50 do lm.save(" .. string.format('%q', path) .. ", x) end"), sig))
    local t = lm.load(path)
    test.ok(t:numel() == 10 or t:numel() == 16000000, sig .. ': the file is whole: the old one or the new one')
    test.eq(leftovers(), '0', sig .. ': no temporary left')
  end
end)

-- Ctrl-C during a save: either the old file stays and the error says so, or the save completed and
-- returned normally (an interrupt held during the rename is delivered after it).
test.case('Ctrl-C during a save: the old file and an error that says so, or the new file and a normal return', function()
  local path = dir .. '/int.st'
  lm.save(path, lm.arange(0, 10))
  local out = sh(string.format("timeout --foreground -s INT 0.5 %s -e %s 2>&1; true", q(exe),
    q("local x = lm.rand(4000, 4000) for i = 1, 50 do local ok, e = pcall(lm.save, " .. string.format('%q', path)
      .. ", x) if not ok then print('ERR', e) error(e, 0) end print('saved', i) end")))
  local t = lm.load(path)
  local err = out:match('ERR ([^\n]*)')
  if err then
    test.ok(err:find('interrupted') and (err:find('was not written', 1, true) or err:find('as it was', 1, true)), err)
  end
  test.ok(t:numel() == 10 or t:numel() == 16000000, 'whole')
  test.eq(leftovers(), '0')
end)
