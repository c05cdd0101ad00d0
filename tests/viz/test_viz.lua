--[[
test_viz.lua — the window and its controls, bad input, and the program's viz options, offscreen:
keys (space, arrows, Home/End, +/-, Tab, s, ?, Esc), hover, a window closed while a script draws,
unknown scenes and options, traces of the wrong kind, empty and truncated traces, snapshot paths
that cannot be written, a broken shader, no display and no GL, --snapshot and --headless.
Read next: test_scenes.lua, x11.sh (a real X11 window).
]]
local test = require 'lumen.test'

local exe = lm.sys.executable()
local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs the program with env and args; returns its output (stdout and stderr) and exit status.
local function run(env, args)
  local p = io.popen(env .. ' ' .. q(exe) .. ' ' .. args .. ' 2>&1; echo "rc=$?"')
  local out = p:read('a')
  p:close()
  local rc = tonumber(out:match('rc=(%d+)\n$'))
  return out:gsub('rc=%d+\n$', ''), rc
end

local function file_size(path)
  local f = io.open(path, 'rb')
  if not f then return nil end
  local n = f:seek('end')
  f:close()
  return n
end

test.case('keys step, play, change variant and speed, close', function()
  viz.scene('scan')
  local st = viz.state()
  test.eq(st.step, 0)
  viz.key('right'); viz.key('right')
  test.eq(viz.state().step, 2)
  viz.key('left')
  test.eq(viz.state().step, 1)
  viz.key('end')
  test.eq(viz.state().step, st.steps - 1)
  viz.key('home')
  test.eq(viz.state().step, 0)
  viz.key('space')
  test.eq(viz.state().playing, true)
  viz.key('space')
  test.eq(viz.state().playing, false)
  local speed = viz.state().speed
  viz.key('+')
  test.near(viz.state().speed, speed * 1.5, 1e-9)
  viz.key('-'); viz.key('-')
  test.near(viz.state().speed, speed / 1.5, 1e-9)
  viz.key('tab')
  test.eq(viz.state().variant, 'kogge-stone')
  test.eq(viz.state().steps, 5)
  viz.key('tab'); viz.key('tab')
  test.eq(viz.state().variant, 'side by side')
  -- ? shows the keys (the frame changes), Esc hides them, Esc again closes
  local a = table.pack(viz.pixel(640, 300))
  viz.key('?')
  local b = table.pack(viz.pixel(640, 300))
  test.ok(a[1] ~= b[1] or a[2] ~= b[2] or a[3] ~= b[3], 'the help box is drawn')
  viz.key('escape')
  test.eq(viz.is_open(), true)
  viz.key('escape')
  test.eq(viz.is_open(), false)
  test.raises(function() viz.key('f13') end, 'viz.key: the window is closed')
  viz.scene('scan')
  test.raises(function() viz.key('f13') end, "unknown key 'f13'")
end)

test.case('hover shows what is under the pointer', function()
  viz.scene('reduce')
  viz.seek(1)
  local c
  for _, x in ipairs(viz.layout()) do
    if x.kind == 'element' and x.state == 'active' and x.w > 2 then c = x break end
  end
  local before = viz.pick(c.x + c.w / 2, c.y + c.h / 2)
  viz.pointer(c.x + c.w / 2, c.y + c.h / 2)
  local px = table.pack(viz.pixel(math.floor(c.x + 40), math.floor(c.y + c.h + 30)))
  viz.pointer(-100, -100)
  local px2 = table.pack(viz.pixel(math.floor(c.x + 40), math.floor(c.y + c.h + 30)))
  test.ok(px[1] ~= px2[1] or px[2] ~= px2[2] or px[3] ~= px2[3], 'the tooltip is drawn')
  test.ok(before.text:find('thread'), before.text)
  test.eq(viz.pick(-5, -5), nil)
  test.eq(viz.pick(5, 5), nil, 'the title bar holds no cells')
end)

test.case('a window closed while a script draws', function()
  local _, info = kernels.scan(lm.arange(1, 9):float(), { backend = 'emu' })
  for i = 1, 6 do
    if i == 3 then viz.key('escape') end -- the user closes the window
    if viz.is_open() then
      viz.show(info)
      viz.step()
    else
      test.eq(viz.step(), nil, 'stepping a closed window does nothing')
      viz.play(); viz.pause()
      test.raises(function() viz.snapshot(tmp .. '/x.png') end, 'viz.snapshot: the window is closed')
      test.raises(function() viz.layout() end, 'viz.layout: the window is closed')
    end
  end
  test.eq(viz.is_open(), false)
  viz.show(info) -- showing again opens it again
  test.eq(viz.is_open(), true)
  viz.close()
  viz.close() -- twice is fine
  test.raises(function() viz.seek(1) end, 'viz.seek: no scene is shown (the window is closed)')
end)

test.case('bad input: scenes, options, runs of the wrong kind', function()
  viz.scene('reduce')
  test.raises(function() viz.scene('nope') end, "viz.scene: unknown scene 'nope' (scenes: scan, reduce, histogram, divergence, conv, matmul, spmv, timeline, curves, graph, tensor, model")
  test.raises(function() viz.scene(3) end, 'viz.scene: the scene name must be a string')
  test.raises(function() viz.scene('scan', { m = 3 }) end, "unknown option 'm' for scene 'scan' (its options: n, input")
  test.raises(function() viz.scene('scan', { n = 0 }) end, 'option n of scene \'scan\' must lie in 1..65536, got 0')
  test.raises(function() viz.scene('scan', { n = 2.5 }) end, 'must be an integer, got \'2.5\'')
  test.raises(function() viz.scene('scan', { input = 'zigzag' }) end, 'must be one of arange|ones|pmpp|random, got \'zigzag\'')
  test.raises(function() viz.scene('scan', { variant = 'upside down' }) end, "scene 'scan' has no variant 'upside down' (its variants: 'side by side'")
  test.raises(function() viz.scene('scan', { n = {} }) end, 'option n must be a number, a string or a boolean, got a table')
  test.raises(function() viz.scene('scan', 5) end, 'viz.scene: options must be a table')
  test.raises(function() viz.scene('scan', { width = 400 }) end, 'give both width and height')
  test.raises(function() viz.show() end, 'viz.show: expected the info of a kernels call')
  test.raises(function() viz.show(lm.ones(3), { scene = 'graph' }) end, 'this tensor has no grad_fn, so no autograd graph')
  test.raises(function() viz.show(lm.ones(3), { scene = 'scan' }) end, "a tensor is drawn by the scene 'graph' (with a grad_fn), 'tensor' or 'quant' (a weight matrix), not 'scan'")
  test.raises(function() viz.show({ 1, 2 }) end, 'result 1 must be the info of a kernels call or a trace, got 1')
  local _, r = kernels.reduce(lm.ones(16), { backend = 'emu' })
  local _, s = kernels.scan(lm.ones(16), { backend = 'emu' })
  test.raises(function() viz.show(r, { scene = 'scan' }) end, "viz.show: scene 'scan' draws scan results; this is a reduce result (reduce shared)")
  test.raises(function() viz.show({ r, s }) end, 'different patterns (reduce and scan)')
  test.raises(function() viz.show(s, { scene = 'nope' }) end, "unknown scene 'nope'")
  test.raises(function() viz.show(s, { scene = 5 }) end, 'option scene must be a string, got 5')
  test.raises(function() viz.open { depth = 3 } end, "viz.open: unknown option string 'depth' (expected width, height)")
  test.raises(function() viz.open { width = 100, height = 100 } end, 'window size must lie in 200..8192')
  test.raises(function() viz.seek(99) end, 'viz.seek: step 99 is out of range')
  test.raises(function() viz.pixel(99999, 0) end, 'viz.pixel: pixel')
  -- the failed calls left the last good scene in place
  test.eq(viz.state().scene, 'reduce')
end)

test.case('bad input: empty and truncated traces, traces of the wrong kind', function()
  local _, tiny = kernels.scan(lm.ones(16), { backend = 'emu', trace_cap = 1 })
  test.eq(tiny.trace.truncated, true)
  test.raises(function() viz.show(tiny) end, 'viz.show: this scan trace cannot be drawn: block 0 of launch 0 adds nothing in the events kept (the trace is truncated)')
  local _, h = kernels.histogram(lm.zeros(64):int(), 4, { backend = 'emu', trace_cap = 40 })
  test.raises(function() viz.show(h) end, 'the histogram trace is truncated')
  local _, d = kernels.divergence { warps = 1 }
  test.raises(function() viz.show(d.trace, { scene = 'reduce' }) end, "scene 'reduce' draws reduce results; this is a divergence result")
  -- a reduce trace shown as if it were a scan's (the names agree, the arrays do not)
  local _, r = kernels.reduce(lm.ones(8), { backend = 'emu', algo = 'naive' })
  local fake = { pattern = 'scan', algo = 'kogge-stone', source = 'emu', device = 'x', provenance = 'y',
                 counters = {}, counter_names = {}, trace = r.trace }
  test.raises(function() viz.show(fake) end, 'not a trace of a scan kernel (it has no arrays X and XY): reduce naive')
  fake.pattern = 'histogram'
  test.raises(function() viz.show(fake) end, 'not a trace of a histogram kernel')
  fake.pattern = 'divergence'
  test.raises(function() viz.show(fake) end, 'not a trace of the divergence demo')
  fake.pattern = 'reduce'
  fake.trace = d.trace
  test.raises(function() viz.show(fake) end, 'not a trace of a reduce kernel')
  -- a large truncated scan still draws: its steps are complete in the events kept
  local _, big = kernels.scan(lm.ones(4096), { backend = 'emu', block = 256, trace_cap = 100000 })
  test.eq(big.trace.truncated, true)
  viz.show(big)
  test.eq(viz.state().variant, 'blocks')
end)

-- The visualizer's heap is the core's counting allocator: lm.memory() sees a scene's arrays,
-- they go when the window closes, and the memory limit holds them too (issue 30.5).
test.case("the scenes' memory is counted, freed on close, and under the memory limit", function()
  viz.close()
  collectgarbage()
  local m0 = lm.memory().live_bytes
  viz.scene('histogram')
  local m1 = lm.memory().live_bytes
  test.ok(m1 > m0 + 100000, string.format('a histogram scene counts its arrays: %d -> %d bytes', m0, m1))
  viz.close()
  collectgarbage()
  test.eq(lm.memory().live_bytes, m0, 'all of it freed on close')
  local limit = lm.memory().limit_bytes
  lm.set_memory_limit(m0 + 200000)
  test.raises(function() viz.scene('histogram') end, 'viz.scene: .*would exceed the limit')
  lm.set_memory_limit(limit)
  viz.scene('histogram')
  test.ok(viz.state().scene == 'histogram', 'and it opens again once the limit allows')
  viz.close()
end)

-- viz.show(info) takes the run from the kernels call's C object, not from the table read back
-- (issue 30.5): a number changed in the table does not reach the panel; a table made by hand is
-- still read as it is.
test.case('viz.show(info) draws the C object behind the info table', function()
  local _, info = kernels.reduce(lm.ones(256), { backend = 'emu', block = 64 })
  local real = info.counters.modelled_cycles
  info.counters.modelled_cycles = 1
  viz.show(info)
  local y, row = nil, {}
  for _, t in ipairs(viz.layout('text')) do if t.text == 'modelled_cycles' then y = t.y end end
  for _, t in ipairs(viz.layout('text')) do
    if y and math.abs(t.y - y) < 1 and t.text ~= 'modelled_cycles' then row[#row + 1] = tonumber(t.text) end
  end
  local seen = {}
  for _, v in ipairs(row) do seen[v] = true end
  test.ok(seen[real] and not seen[1], 'the panel shows ' .. real .. ', not the 1 written into the table: ' .. table.concat(row, ' '))
  viz.close()
end)

test.case('bad input: snapshot paths', function()
  viz.scene('divergence')
  test.raises(function() viz.snapshot(tmp .. '/no/such/dir/a.png') end, "viz.snapshot: cannot write '" .. tmp .. "/no/such/dir/a.png': No such file or directory")
  test.raises(function() viz.snapshot('/sys/lumen.png') end, "cannot write '/sys/lumen.png': Permission denied")
  test.raises(function() viz.snapshot(tmp) end, "cannot write '" .. tmp .. "'")
  test.raises(function() viz.snapshot('') end, 'viz.snapshot: the path is empty')
  test.raises(function() viz.snapshot(3) end, 'viz.snapshot: the path must be a string, got 3')
  test.eq(io.open(tmp .. '/no') , nil, 'nothing left behind')
  viz.snapshot(tmp .. '/ok.png')
  local f = assert(io.open(tmp .. '/ok.png', 'rb'))
  test.eq(f:read(8), '\137PNG\r\n\26\n')
  f:close()
  -- the one safe-write routine (issue 29.1): a device stays a device, a link stays a link to
  -- the new picture, the mode of an existing file is kept, nothing temporary is left behind
  test.raises(function() viz.snapshot('/dev/null') end, "viz.snapshot: cannot write '/dev/null': it is a character device")
  local function sh(c) local p = io.popen(c) local o = p:read('a') p:close() return (o:gsub('%s+$', '')) end
  test.eq(sh('stat -c %F /dev/null'), 'character special file')
  os.execute('chmod 600 ' .. q(tmp .. '/ok.png') .. ' && ln -sf ' .. q(tmp .. '/ok.png') .. ' ' .. q(tmp .. '/link.png'))
  viz.snapshot(tmp .. '/link.png')
  test.eq(sh('stat -c %F ' .. q(tmp .. '/link.png')), 'symbolic link')
  test.eq(sh('stat -c %a ' .. q(tmp .. '/ok.png')), '600')
  test.eq(sh('ls -A ' .. q(tmp) .. ' | grep -c lumen- || true'), '0', 'no temporary left')
end)

test.case('the s key writes a PNG; viz.open sizes the window', function()
  -- In an ASan build LeakSanitizer's tracer crashed (signal 11, "LeakSanitizer has encountered a
  -- fatal error") while scanning a thread's TLS at this child's exit, every time and in no other
  -- process (without the TLS roots it reports glib's and the loader's TLS-held blocks instead): the
  -- child runs without leak detection; ASan's other checks stay on, and the parent is leak-checked
  local lsan = os.getenv('LSAN_OPTIONS')
  local env = lsan and ('LSAN_OPTIONS=' .. q(lsan .. ':detect_leaks=0') .. ' ') or ''
  local out, rc = run('cd ' .. q(tmp) .. ' && ' .. env .. 'SDL_VIDEODRIVER=offscreen',
    [[-e "viz.scene('histogram'); viz.step(); viz.key('s'); print(viz.state().width, viz.state().height)"]])
  test.eq(rc, 0, out)
  test.ok(out:find('1280\t720'), out)
  test.ok(file_size(tmp .. '/lumen-histogram-1.png') > 1000, 'lumen-histogram-1.png')
  viz.open { width = 640, height = 400 }
  test.eq({ viz.state().width, viz.state().height }, { 640, 400 })
  viz.scene('scan', { width = 800, height = 500 })
  test.eq({ viz.state().width, viz.state().height }, { 800, 500 })
  viz.close()
end)

test.case('a broken shader is a clear error with the driver log', function()
  os.execute('mkdir -p ' .. q(tmp .. '/shaders'))
  os.execute('cp ' .. q(lm.lua_dir .. '/../shaders') .. '/*.* ' .. q(tmp .. '/shaders/'))
  local f = assert(io.open(tmp .. '/shaders/fill.frag', 'w'))
  f:write('#version 330 core\nout vec4 c;\nvoid main() { c = vec4(undefined_thing); }\n')
  f:close()
  local out, rc = run('SDL_VIDEODRIVER=offscreen LUMEN_SHADER_DIR=' .. q(tmp .. '/shaders'),
    [[-e "local ok, e = pcall(viz.scene, 'scan'); print(ok, e); print(viz.is_open())"]])
  test.eq(rc, 0, out)
  test.ok(out:find('false\tviz.scene: the shader ' .. tmp:gsub('%p', '%%%0') .. '/shaders/fill.frag does not compile:'), out)
  test.ok(out:find('undefined_thing'), 'the driver log names the error: ' .. out)
  test.ok(out:find('\nfalse\n'), 'no window is left open')
  out, rc = run('SDL_VIDEODRIVER=offscreen LUMEN_SHADER_DIR=/nonexistent', [[-e "viz.open()"]])
  test.eq(rc, 1)
  test.ok(out:find('the shader /nonexistent/batch.vert cannot be read: No such file or directory'), out)
  -- a FIFO where a shader is meant: refused at once (it blocked the window's start in open())
  os.remove(tmp .. '/shaders/batch.vert')
  os.execute('mkfifo ' .. q(tmp .. '/shaders/batch.vert'))
  out, rc = run('SDL_VIDEODRIVER=offscreen timeout 20 env LUMEN_SHADER_DIR=' .. q(tmp .. '/shaders'), [[-e "viz.open()"]])
  test.eq(rc, 1)
  test.ok(out:find('/shaders/batch.vert cannot be read: it is not a regular file', 1, true), out)
  os.remove(tmp .. '/shaders/batch.vert')
  out, rc = run('SDL_VIDEODRIVER=offscreen LUMEN_FONT=/nonexistent.ttf', [[-e "viz.open()"]])
  test.eq(rc, 1)
  test.ok(out:find("viz.open: the font '/nonexistent.ttf' %(LUMEN_FONT%) cannot be read"), out)
end)

test.case('no display renders offscreen and says so; no GL is a clear error', function()
  local out, rc = run('env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER',
    [[-e "viz.open(); print(viz.state().offscreen); viz.scene('scan'); viz.snapshot(']] .. tmp .. [[/nodisplay.png')"]])
  test.eq(rc, 0, out)
  test.ok(out:find('viz: no display %(DISPLAY is not set%): rendering offscreen'), out)
  test.ok(out:find('true'), out)
  test.ok(file_size(tmp .. '/nodisplay.png') > 1000)
  out, rc = run('SDL_VIDEODRIVER=dummy', [[-e "viz.open()"]])
  test.eq(rc, 1)
  test.ok(out:find('viz.open: no OpenGL 3.3 core context %(dummy driver%)') or
          out:find('viz.open: SDL cannot create a window %(dummy driver%)'), out)
  out, rc = run('SDL_VIDEODRIVER=nosuchdriver', [[-e "print(pcall(viz.scene, 'scan'))"]])
  test.ok(out:find('false\tviz.scene: SDL cannot start its video driver'), out)
end)

test.case('lumen --snapshot and --headless', function()
  local png = tmp .. '/snap.png'
  local out, rc = run('env -u DISPLAY', '--snapshot scan ' .. q(png) .. ' --step 2 --opts n=8,input=pmpp')
  test.eq(rc, 0, out)
  test.eq(out, '')
  test.ok(file_size(png) > 1000)
  local a = io.open(png, 'rb'):read('a')
  run('env -u DISPLAY', '--snapshot scan ' .. q(png) .. ' --step 2 --opts n=8,input=pmpp')
  test.ok(io.open(png, 'rb'):read('a') == a, 'the same snapshot twice: the same bytes')
  out, rc = run('', '--snapshot scan ' .. q(png) .. ' --step 99')
  test.eq(rc, 1)
  test.ok(out:find('%-%-step 99 is past the end: scene \'scan\' has steps 0..7'), out)
  out, rc = run('', '--snapshot nope ' .. q(png))
  test.ok(out:find("unknown scene 'nope'"), out)
  out, rc = run('', '--snapshot scan ' .. q(png) .. ' --opts n')
  test.ok(out:find("option 'n' must be written key=value"), out)
  test.eq(rc, 1)
  out, rc = run('', '--snapshot scan')
  test.ok(out:find('usage: lumen %-%-snapshot SCENE OUT.png'), out)
  out, rc = run('', '--snapshot scan ' .. q(tmp .. '/missing/x.png'))
  test.ok(out:find('No such file or directory'), out)
  test.eq(rc, 1)
  out, rc = run('DISPLAY=:12345', [[--headless -e "viz.open(); print(viz.state().offscreen)"]])
  test.eq(rc, 0, out)
  test.eq(out, 'true\n', '--headless: offscreen without a word')
  out = run('', '--version')
  test.ok(out:find('SDL: yes'), out)
end)

test.case('zoom and pan: a dense row becomes cells with values, the picture moves', function()
  local _, info = kernels.scan(lm.arange(1, 1025):float(), { backend = 'emu' })
  viz.show(info)
  viz.seek(1)
  local function kog(pred)
    local out = {}
    for _, c in ipairs(viz.layout()) do
      if c.group == 'kogge-stone' and c.step == 1 and (not pred or pred(c)) then out[#out + 1] = c end
    end
    return out
  end
  local rows = kog()
  test.eq(#rows, 1, 'at 1,024 elements a row is one image')
  local p = viz.pick(rows[1].x + rows[1].w / 2, rows[1].y + rows[1].h / 2)
  test.eq(p.kind, 'element')
  test.ok(p.index >= 500 and p.index <= 524, 'the element under the middle of the row: ' .. p.index)
  test.eq(p.state, 'active')
  test.eq(p.value, p.index + (p.index + 1), 'XY[i] + XY[i - 1] after step 1')
  viz.zoom(16, rows[1].x + 2, rows[1].y)
  local cells = kog()
  test.ok(#cells > 10 and #cells < 400, 'zoomed in: separate cells, only those on screen (' .. #cells .. ')')
  test.ok(cells[1].w > 5, 'wider on screen')
  test.eq(cells[1].index, 0, 'zoomed about the row\'s left end')
  local mid = cells[#cells // 2]
  local x0 = mid.x
  viz.pan(-100, 0)
  local moved = kog(function(c) return c.index == mid.index end)[1]
  test.near(moved.x, x0 - 100, 1.5)
  viz.zoom(0)
  test.eq(#kog(), 1, 'fitted again')
  test.raises(function() viz.zoom(-2) end, 'viz.zoom: the factor must be positive (0 fits the scene), got -2')
  test.raises(function() viz.pan(0 / 0, 1) end, 'viz.pan: the offsets must be finite numbers')
  viz.close()
  test.raises(function() viz.zoom(2) end, 'viz.zoom: no scene is shown (the window is closed)')
end)
