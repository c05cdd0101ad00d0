-- lm.load_image / lm.save_image (src/io/image.c): PNG and JPEG round trips of random images
-- (every channel count, odd sizes, 1x1, uint8 and floats, views), the grid of a batch checked pixel
-- by pixel against a loop, the modes, the fixtures in tests/data/img_* (made by
-- tests/data/make_images.py: palette, 2-bit gray, 16-bit, gray + alpha, tRNS, interlaced, JPEGs
-- with what PIL decodes them to), PIL reading what Lumen writes, and every bad input with its
-- message: missing, directory, not an image, truncated, corrupt, CMYK, sizes past a tensor's, the
-- memory limit, an allocation failing anywhere (nothing leaks, the target is never damaged).
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local data_dir = here .. '../data/'
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p '" .. tmp .. "'")
local function path(name) return tmp .. '/' .. name end

local function read(p)
  local f = assert(io.open(p, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end
local function write(p, s)
  local f = assert(io.open(p, 'wb'))
  f:write(s)
  f:close()
  return p
end

local function bytes(shape) return lm.randint(0, 256, shape):byte() end
local function u8(p, opts)
  opts = opts or {}
  opts.dtype = 'uint8'
  return lm.load_image(p, opts)
end
-- a (C, H, W) table of fn(c, y, x), all from 0
local function image(c, h, w, fn)
  local t = {}
  for k = 1, c do
    t[k] = {}
    for y = 1, h do
      t[k][y] = {}
      for x = 1, w do t[k][y][x] = fn(k - 1, y - 1, x - 1) end
    end
  end
  return t
end

-- A build without libpng or libjpeg (CMake did not find it) says so for that format; the cases
-- below need both and say they are skipped.
local lacks
for _, ext in ipairs({ 'png', 'jpg' }) do
  local ok, err = pcall(lm.save_image, path('probe.' .. ext), lm.zeros(1, 1))
  if not ok then lacks = (lacks and lacks .. '; ' or '') .. err end
end
local function case(name, fn)
  test.case(name, function()
    if lacks then return test.skip(lacks) end
    return fn()
  end)
end

test.case('a build without libpng or libjpeg says which package to install', function()
  if lacks then
    test.ok(lacks:find('this build of Lumen has no lib%a+: install it %(Debian/Ubuntu: apt%-get install lib%a+%-dev%)'), lacks)
  end
end)

local function live()
  collectgarbage()
  collectgarbage()
  local m = lm.memory()
  return m.live_tensors, m.live_bytes
end

-- ---------------------------------------------------------------- PNGs made here (CRCs and all)

local CRC = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do c = (c & 1 == 1) and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  CRC[n] = c
end
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = CRC[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end
local function chunk(kind, data)
  return string.pack('>I4', #data) .. kind .. data .. string.pack('>I4', crc32(kind .. data))
end
local SIG = '\137PNG\r\n\26\n'
-- a PNG whose header claims w x h (color type ct, 8 bits) over a few bytes of data
local function claimed_png(w, h, ct)
  return SIG .. chunk('IHDR', string.pack('>I4I4BBBBB', w, h, 8, ct, 0, 0, 0)) ..
      chunk('IDAT', '\120\1\1\0\0\255\255\0\0\0\1') .. chunk('IEND', '')
end

-- ---------------------------------------------------------------- round trips

case('PNG round trips give back the bytes: every channel count, odd sizes, 1x1', function()
  for _, shape in ipairs({ { 1, 1, 1 }, { 3, 1, 1 }, { 4, 1, 1 }, { 1, 13, 6 }, { 2, 5, 7 }, { 3, 5, 7 },
    { 4, 9, 2 }, { 3, 1, 17 }, { 3, 17, 1 } }) do
    local x = bytes(shape)
    lm.save_image(path('rt.png'), x)
    local y = u8(path('rt.png'))
    test.eq(y:dtype(), 'uint8')
    test.eq(y:tolist(), x:tolist(), 'shape ' .. table.concat(shape, 'x'))
  end
  local x = bytes({ 6, 5 }) -- (H, W): one gray channel
  lm.save_image(path('hw.png'), x)
  test.eq(u8(path('hw.png')):tolist(), { x:tolist() })
  lm.save_image(path('upper.PNG'), x) -- the extension in any case
  test.eq(u8(path('upper.PNG')):tolist(), { x:tolist() })
end)

case('floats are written as torchvision writes them and read back as v / 255', function()
  for _, dt in ipairs({ 'float32', 'float64' }) do
    local x = lm.rand(3, 7, 5, { dtype = dt }) * 1.4 - 0.2 -- some below 0, some above 1
    lm.save_image(path('f.png'), x)
    local want = (x * 255 + 0.5):clamp(0, 255):byte() -- save_image: mul(255).add_(0.5).clamp_(0, 255)
    test.eq(u8(path('f.png')):tolist(), want:tolist(), dt)
    local f = lm.load_image(path('f.png'), { dtype = dt })
    test.eq(f:dtype(), dt)
    test.eq(f:tolist(), (want:to(dt) / 255):tolist(), dt .. ': value / 255')
  end
  local f = lm.load_image(path('f.png'))
  test.eq(f:dtype(), 'float32', 'float32 by default')
  test.ok(f:min():item() >= 0 and f:max():item() <= 1)
  -- NaN gives 0, infinities clamp; 0.5 -> 128
  lm.save_image(path('nan.png'), lm.tensor({ { { 0 / 0, math.huge, -math.huge, -1, 2, 0.5, 1 } } }))
  test.eq(u8(path('nan.png')):tolist(), { { { 0, 255, 0, 0, 255, 128, 255 } } })
  -- other dtypes are floats in [0, 1] after a conversion to float64 (torchvision's rule)
  lm.save_image(path('int.png'), lm.tensor({ { { 0, 1, 2, -1 } } }, { dtype = 'int32' }))
  test.eq(u8(path('int.png')):tolist(), { { { 0, 255, 255, 0 } } })
  lm.save_image(path('half.png'), lm.tensor({ { { 0, 0.25, 1 } } }):half())
  test.eq(u8(path('half.png')):tolist(), { { { 0, 64, 255 } } })
end)

case('views of any layout are written as their values', function()
  local base = bytes({ 3, 6, 4 })
  local v = base:transpose(2, 3) -- (3, 4, 6), not contiguous
  test.ok(not v:is_contiguous())
  lm.save_image(path('t.png'), v)
  test.eq(u8(path('t.png')):tolist(), v:contiguous():tolist())
  local f = lm.rand(5, 3, 8, { dtype = 'float64' }):permute(2, 3, 1) -- (3, 8, 5) of floats
  lm.save_image(path('p.png'), f)
  test.eq(u8(path('p.png')):tolist(), (f * 255 + 0.5):clamp(0, 255):byte():tolist())
  local n = bytes({ 4, 10, 9 }):narrow(1, 2, 3):narrow(3, 2, 5) -- an offset and strides
  lm.save_image(path('n.png'), n)
  test.eq(u8(path('n.png')):tolist(), n:contiguous():tolist())
  local b = bytes({ 3, 2, 5, 4 }):transpose(1, 2) -- a batch view (2, 3, 5, 4)
  lm.save_image(path('b.png'), b, { nrow = 2, padding = 0 })
  local g = u8(path('b.png'))
  test.eq(g:narrow(3, 1, 4):tolist(), b:select(1, 1):contiguous():tolist())
  test.eq(g:narrow(3, 5, 4):tolist(), b:select(1, 2):contiguous():tolist())
  local r = lm.rand(2, 3, { requires_grad = true }) -- a tensor that needs grad is written too
  lm.save_image(path('r.png'), r)
  test.eq(u8(path('r.png')):tolist(), { (r:detach() * 255 + 0.5):byte():tolist() })
end)

case('a batch is a grid as make_grid lays it out: nrow, padding, around the border too', function()
  local n, c, h, w = 5, 3, 4, 3
  local x = bytes({ n, c, h, w })
  local xl = x:tolist()
  for _, o in ipairs({ { nrow = 2, padding = 1 }, {}, { nrow = 3, padding = 0 }, { nrow = 1, padding = 3 },
    { nrow = 5 }, { nrow = 100, padding = 2 } }) do
    lm.save_image(path('grid.png'), x, o)
    local g = u8(path('grid.png'))
    local nrow, pad = o.nrow or 8, o.padding or 2
    local cols = math.min(nrow, n)
    local rows = (n + cols - 1) // cols
    local want = image(c, (h + pad) * rows + pad, (w + pad) * cols + pad, function() return 0 end)
    for k = 0, n - 1 do
      local y0, x0 = k // cols * (h + pad) + pad, k % cols * (w + pad) + pad
      for ch = 1, c do
        for yy = 1, h do
          for xx = 1, w do want[ch][y0 + yy][x0 + xx] = xl[k + 1][ch][yy][xx] end
        end
      end
    end
    test.eq(g:tolist(), want, 'nrow ' .. nrow .. ', padding ' .. pad)
  end
  -- a batch of one is the image alone (make_grid returns it so); gray and RGBA batches too
  local one = bytes({ 1, 3, 4, 5 })
  lm.save_image(path('one.png'), one)
  test.eq(u8(path('one.png')):tolist(), one:select(1, 1):tolist())
  local gray = bytes({ 3, 1, 2, 2 })
  lm.save_image(path('gray.png'), gray, { padding = 1 })
  local gl = gray:tolist()
  test.eq(u8(path('gray.png')):tolist(), { {
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
    { 0, gl[1][1][1][1], gl[1][1][1][2], 0, gl[2][1][1][1], gl[2][1][1][2], 0, gl[3][1][1][1], gl[3][1][1][2], 0 },
    { 0, gl[1][1][2][1], gl[1][1][2][2], 0, gl[2][1][2][1], gl[2][1][2][2], 0, gl[3][1][2][1], gl[3][1][2][2], 0 },
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } } })
  local rgba = bytes({ 2, 4, 3, 3 })
  lm.save_image(path('rgba.png'), rgba, { nrow = 1 })
  local g = u8(path('rgba.png'))
  test.eq(g:shape(), { 4, 12, 7 })
  test.eq(g:narrow(2, 3, 3):narrow(3, 3, 3):tolist(), rgba:select(1, 1):tolist())
  test.eq(g:narrow(2, 8, 3):narrow(3, 3, 3):tolist(), rgba:select(1, 2):tolist())
  test.eq(g:select(1, 4):select(1, 1):tolist(), { 0, 0, 0, 0, 0, 0, 0 }, 'the padding is transparent')
end)

case('normalize rescales by the min and max first', function()
  local x = lm.arange(0, 24, { dtype = 'float64' }):view(2, 3, 4) * 0.5 - 3 -- -3 .. 8.5
  lm.save_image(path('norm.png'), x, { normalize = true })
  test.eq(u8(path('norm.png')):select(1, 1):tolist(), ((x + 3) / 11.5 * 255 + 0.5):byte():select(1, 1):tolist())
  local b = lm.tensor({ { { 10, 20, 30 } } }, { dtype = 'uint8' }) -- bytes are rescaled too
  lm.save_image(path('normb.png'), b, { normalize = true })
  test.eq(u8(path('normb.png')):tolist(), { { { 0, 128, 255 } } })
  lm.save_image(path('const.png'), lm.full({ 1, 2, 2 }, 7), { normalize = true }) -- max = min: zeros
  test.eq(u8(path('const.png')):tolist(), { { { 0, 0 }, { 0, 0 } } })
  lm.save_image(path('b.png'), b) -- without it, bytes as they are
  test.eq(u8(path('b.png')):tolist(), { { { 10, 20, 30 } } })
end)

case('JPEG round trips within a tolerance; quality trades size for error', function()
  local smooth = lm.tensor(image(3, 24, 32, function(c, y, x)
    return 0.5 + 0.35 * math.sin(x / 6 + c) * math.cos(y / 8 - c)
  end), { dtype = 'float64' })
  local sizes, errs = {}, {}
  for _, q in ipairs({ 30, 95 }) do
    lm.save_image(path('s.jpg'), smooth, { quality = q })
    local y = lm.load_image(path('s.jpg'), { dtype = 'float64' })
    test.eq(y:shape(), { 3, 24, 32 })
    sizes[q], errs[q] = #read(path('s.jpg')), (y - smooth):abs():mean():item()
  end
  test.ok(errs[95] < 0.01, 'mean error at quality 95: ' .. errs[95])
  test.ok(errs[30] > errs[95] and sizes[30] < sizes[95], 'quality 30 is smaller and worse')
  local gray = lm.tensor(image(1, 9, 13, function(_, y, x) return (x + y) / 20 end))
  lm.save_image(path('g.jpeg'), gray, { quality = 100 })
  local y = lm.load_image(path('g.jpeg'))
  test.eq(y:shape(), { 1, 9, 13 }, 'a gray JPEG stays gray')
  test.ok((y - gray):abs():max():item() < 0.02)
  lm.save_image(path('one.JPG'), lm.ones(3, 1, 1)) -- 1x1, the extension in any case
  test.eq(u8(path('one.JPG')):tolist(), { { { 255 } }, { { 255 } }, { { 255 } } })
  lm.save_image(path('grid.jpg'), lm.zeros(3, 3, 8, 8) + 1, { nrow = 2, padding = 2 }) -- a grid
  local g = u8(path('grid.jpg'))
  test.eq(g:shape(), { 3, 22, 22 })
  test.ok(g[{ 1, 7, 7 }]:item() > 240 and g[{ 1, 1, 1 }]:item() < 15, 'image and padding')
end)

-- ---------------------------------------------------------------- modes

case("modes: 'gray' is BT.601 luma as PIL rounds it, 'rgb' replicates or drops, 'rgba' adds", function()
  local rgb = bytes({ 3, 4, 5 })
  local r = rgb:tolist()
  lm.save_image(path('rgb.png'), rgb)
  local want = image(1, 4, 5, function(_, y, x) -- PIL's convert('L')
    return (19595 * r[1][y + 1][x + 1] + 38470 * r[2][y + 1][x + 1] + 7471 * r[3][y + 1][x + 1] + 0x8000) >> 16
  end)
  test.eq(u8(path('rgb.png'), { mode = 'gray' }):tolist(), want)
  test.eq(lm.load_image(path('rgb.png'), { mode = 'gray', dtype = 'float64' }):tolist(),
    (lm.tensor(want, { dtype = 'float64' }) / 255):tolist())
  local a = u8(path('rgb.png'), { mode = 'rgba' })
  test.eq(a:narrow(1, 1, 3):tolist(), r)
  test.eq(a:select(1, 4):tolist(), image(1, 4, 5, function() return 255 end)[1], 'opaque alpha')
  test.eq(u8(path('rgb.png'), { mode = 'rgb' }):tolist(), r)

  local rgba = bytes({ 4, 3, 2 })
  lm.save_image(path('rgba.png'), rgba)
  test.eq(u8(path('rgba.png'), { mode = 'rgb' }):tolist(), rgba:narrow(1, 1, 3):tolist(), 'alpha dropped')
  local q = rgba:tolist()
  test.eq(u8(path('rgba.png'), { mode = 'gray' }):tolist(), image(1, 3, 2, function(_, y, x)
    return (19595 * q[1][y + 1][x + 1] + 38470 * q[2][y + 1][x + 1] + 7471 * q[3][y + 1][x + 1] + 0x8000) >> 16
  end), 'gray ignores alpha')

  local ga = bytes({ 2, 3, 4 })
  lm.save_image(path('ga.png'), ga)
  local g, al = ga:select(1, 1):tolist(), ga:select(1, 2):tolist()
  test.eq(u8(path('ga.png')):tolist(), ga:tolist(), 'gray + alpha as it is')
  test.eq(u8(path('ga.png'), { mode = 'rgb' }):tolist(), { g, g, g })
  test.eq(u8(path('ga.png'), { mode = 'rgba' }):tolist(), { g, g, g, al }, 'its alpha kept')
  test.eq(u8(path('ga.png'), { mode = 'gray' }):tolist(), { g })
  local one = bytes({ 1, 2, 3 })
  lm.save_image(path('g1.png'), one)
  local o = one:select(1, 1):tolist()
  test.eq(u8(path('g1.png'), { mode = 'rgba' }):tolist(), { o, o, o, { { 255, 255, 255 }, { 255, 255, 255 } } })
  test.eq(lm.load_image(path('g1.png'), { dtype = 'double' }):dtype(), 'float64', 'dtype aliases')
end)

-- ---------------------------------------------------------------- fixtures

case('the fixtures decode to their pixels (tests/data/make_images.py)', function()
  local pal = u8(data_dir .. 'img_palette4_trns.png') -- 4-bit palette with tRNS -> RGBA
  test.eq(pal:tolist(), image(4, 4, 6, function(c, y, x)
    local k = (3 * y + 5 * x) % 16
    if c == 3 then return k < 4 and 60 * k or 255 end
    return ({ 17 * k, 255 - 13 * k, (40 * k) % 256 })[c + 1]
  end), 'palette')
  test.eq(u8(data_dir .. 'img_palette4_trns.png', { mode = 'rgb' }):shape(), { 3, 4, 6 })
  test.eq(u8(data_dir .. 'img_gray2.png'):tolist(), image(1, 3, 7, function(_, y, x) return 85 * ((x + 2 * y) % 4) end),
    '2-bit gray')
  test.eq(u8(data_dir .. 'img_rgb16.png'):tolist(), image(3, 2, 3, function(c, y, x) return 50 * c + 30 * y + 20 * x end),
    '16-bit: the high bytes')
  test.eq(u8(data_dir .. 'img_la8.png'):tolist(), image(2, 4, 5, function(c, y, x)
    local i = 5 * y + x
    return c == 0 and 12 * i or 255 - 10 * i
  end), 'gray + alpha')
  test.eq(u8(data_dir .. 'img_gray_trns.png'):tolist(), image(2, 4, 4, function(c, y, x)
    local g = (50 * x + 25 * y) % 256
    if c == 0 then return g end
    return g == 100 and 0 or 255
  end), 'gray with a tRNS key')
  test.eq(u8(data_dir .. 'img_adam7_rgba.png'):tolist(),
    image(4, 9, 10, function(c, y, x) return (64 * c + 17 * y + 7 * x) % 256 end), 'interlaced')
  local f = lm.load_image(data_dir .. 'img_adam7_rgba.png')
  test.tensor_near(f, u8(data_dir .. 'img_adam7_rgba.png'):float() / 255, 1e-7)
  -- the JPEGs against what PIL (libjpeg too) decodes them to: the same here, libjpeg versions
  -- may round an IDCT differently
  for _, name in ipairs({ 'img_rgb', 'img_gray', 'img_progressive' }) do
    local got, want = u8(data_dir .. name .. '.jpg'), lm.load_npy(data_dir .. name .. '_jpg.npy')
    test.eq(got:shape(), want:shape(), name)
    local d = (got:int() - want:int()):abs():max():item()
    test.ok(d <= 2, name .. ': largest difference from PIL ' .. d)
  end
end)

case('PIL reads what Lumen writes, and decodes the JPEGs as Lumen does', function()
  if not os.execute('/usr/bin/python3 -c "import numpy, PIL" 2>/dev/null') then
    return test.skip('/usr/bin/python3 with numpy and PIL is not installed (apt-get install python3-numpy python3-pil)')
  end
  local files = {
    { 'rgb.png', bytes({ 3, 5, 7 }) }, { 'rgba.png', bytes({ 4, 3, 2 }) }, { 'gray.png', bytes({ 1, 4, 4 }) },
    { 'ga.png', bytes({ 2, 2, 3 }) }, { 'grid.png', bytes({ 3, 3, 4, 4 }) },
    { 'rgb.jpg', lm.rand(3, 16, 24) }, { 'gray.jpg', lm.rand(1, 8, 8) },
  }
  local names = {}
  for _, f in ipairs(files) do
    lm.save_image(path('pil_' .. f[1]), f[2])
    names[#names + 1] = "'" .. f[1] .. "'"
  end
  write(path('pil.py'), ([[
import sys, numpy as np
from PIL import Image
d = sys.argv[1]
for n in [%s]:
    im = Image.open(d + '/pil_' + n)
    a = np.asarray(im)
    a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
    np.save(d + '/pil_' + n + '.npy', np.ascontiguousarray(a).astype(np.uint8))
    if im.mode == 'RGB':
        np.save(d + '/pil_' + n + '.L.npy', np.asarray(im.convert('L'))[None].astype(np.uint8))
print('ok')
]]):format(table.concat(names, ', ')))
  local p = io.popen("/usr/bin/python3 '" .. path('pil.py') .. "' '" .. tmp .. "' 2>&1")
  local out = p:read('a')
  test.ok(p:close() and out:match('^ok'), 'pil.py: ' .. out)
  for _, f in ipairs(files) do
    local mine = u8(path('pil_' .. f[1]))
    test.eq(lm.load_npy(path('pil_' .. f[1] .. '.npy')):tolist(), mine:tolist(), f[1])
    if mine:size(1) == 3 then
      test.eq(lm.load_npy(path('pil_' .. f[1] .. '.L.npy')):tolist(), u8(path('pil_' .. f[1]), { mode = 'gray' }):tolist(),
        f[1] .. ": PIL's convert('L')")
    end
  end
end)

-- ---------------------------------------------------------------- bad input

case('bad files are errors naming lm.load_image, the path and what is wrong', function()
  local function raises(p, msg, opts)
    local err = test.raises(function() return lm.load_image(p, opts) end, msg)
    test.ok(err:find('lm.load_image: ', 1, true) and err:find(p, 1, true), err)
  end
  raises(path('missing.png'), 'cannot open: No such file or directory')
  raises(tmp, 'not a regular file (it is a directory)')
  raises(write(path('empty.png'), ''), 'is empty (0 bytes), not a PNG or JPEG image')
  raises(write(path('text.png'), 'hello, world'),
    'is not a PNG or JPEG image (it starts with bytes 68 65 6c 6c 6f 2c 20 77)')
  raises(write(path('gif.jpg'), 'GIF89a\1\0\1\0'), 'it starts with bytes 47 49 46 38 39 61 01 00: a GIF image')
  raises(write(path('short'), '\137PN'), 'it starts with bytes 89 50 4e)')
  raises(data_dir .. 'v1_f32.npy', 'a NumPy .npy file, for lm.load_npy')
  -- a PNG cut anywhere: in the signature, the header, the data, before IEND
  lm.save_image(path('whole.png'), bytes({ 3, 20, 30 }))
  local png = read(path('whole.png'))
  raises(write(path('cut.png'), png:sub(1, 20)), 'truncated: the file ends at byte 20, inside the header')
  raises(write(path('cut.png'), png:sub(1, #png // 2)), 'truncated: the file ends at byte %d+, inside the image data')
  raises(write(path('cut.png'), png:sub(1, #png - 12)),
    'truncated: the file ends at byte %d+, inside the chunks after the image data %(IEND is missing%)')
  -- corrupt: a flipped bit (the CRC finds it), or damaged compressed data under a right CRC
  local flip = png:sub(1, 19) .. string.char(png:byte(20) ~ 1) .. png:sub(21) -- the width
  raises(write(path('flip.png'), flip), 'corrupt PNG %(libpng: IHDR: CRC error%)')
  flip = png:sub(1, 60) .. string.char(png:byte(61) ~ 1) .. png:sub(62) -- compressed data, inflated first
  raises(write(path('flip.png'), flip), 'corrupt PNG %(libpng: IDAT: ')
  local ihdr = png:sub(1, 8) .. chunk('IHDR', string.pack('>I4I4BBBBB', 30, 20, 8, 6, 0, 0, 0)) -- RGBA over RGB data
  raises(write(path('lie.png'), ihdr .. png:sub(34)), 'corrupt PNG %(libpng: ')
  local bad_zlib = SIG .. chunk('IHDR', string.pack('>I4I4BBBBB', 2, 2, 8, 0, 0, 0, 0)) ..
      chunk('IDAT', '\120\1garbage!') .. chunk('IEND', '')
  raises(write(path('zlib.png'), bad_zlib), 'corrupt PNG %(libpng: ')
  raises(write(path('depth.png'), SIG .. chunk('IHDR', string.pack('>I4I4BBBBB', 2, 2, 3, 0, 0, 0, 0))),
    'corrupt PNG %(libpng: .*bit depth')
  -- JPEGs: cut, a bad header, CMYK
  local jpg = read(data_dir .. 'img_rgb.jpg')
  raises(write(path('cut.jpg'), jpg:sub(1, #jpg // 2)), 'truncated: the file ends at byte %d+, inside the JPEG data')
  raises(write(path('cut.jpg'), jpg:sub(1, 3)), 'truncated: the file ends at byte 3, inside the JPEG data')
  local sof = jpg:find('\255\192', 1, true)
  raises(write(path('p12.jpg'), jpg:sub(1, sof + 3) .. '\12' .. jpg:sub(sof + 5)),
    'corrupt or unsupported JPEG %(libjpeg: Unsupported JPEG data precision 12%)')
  raises(write(path('soi.jpg'), '\255\216\255\216' .. jpg:sub(5)), 'corrupt or unsupported JPEG %(libjpeg: ')
  raises(data_dir .. 'img_cmyk.jpg', 'a JPEG in CMYK %(4 components%): Lumen reads gray, YCbCr and RGB JPEGs')
  -- damaged entropy-coded data: libjpeg decodes it anyway (as PIL does), and says nothing
  local body = jpg:sub(1, #jpg - 40) .. string.rep('\0', 30) .. jpg:sub(#jpg - 9)
  test.eq(u8(write(path('damaged.jpg'), body)):shape(), { 3, 16, 16 })
end)

case('every truncation and 300 random byte changes of each fixture: a tensor or a clear error', function()
  math.randomseed(7)
  local n = 0
  for _, name in ipairs({ 'img_palette4_trns.png', 'img_gray2.png', 'img_rgb16.png', 'img_la8.png',
    'img_gray_trns.png', 'img_adam7_rgba.png', 'img_rgb.jpg', 'img_gray.jpg', 'img_progressive.jpg', 'img_cmyk.jpg' }) do
    local s = read(data_dir .. name)
    local function try(bad)
      local p = write(path('m_' .. name), bad)
      local ok, err = pcall(lm.load_image, p, { mode = ({ 'gray', 'rgb', 'rgba' })[n % 4] })
      n = n + 1
      if not ok then test.ok(err:find("lm.load_image: '" .. p .. "': ", 1, true), name .. ': ' .. tostring(err)) end
    end
    for len = 0, #s - 1 do try(s:sub(1, len)) end
    for _ = 1, 300 do
      local i = math.random(1, #s)
      local v = math.random() < 0.5 and math.random(0, 255) or ({ 0, 255, 0x7f, 0x80 })[math.random(1, 4)]
      try(s:sub(1, i - 1) .. string.char(v) .. s:sub(i + 1))
    end
  end
  test.ok(n > 5000, 'loads tried: ' .. n)
end)

case('sizes past a tensor, past what the file can hold, past the memory limit', function()
  local function raises(s, msg)
    local p = write(path('claim.png'), s)
    local err = test.raises(function() return lm.load_image(p) end, msg)
    test.ok(err:find("lm.load_image: '" .. p .. "'", 1, true), err)
  end
  raises(claimed_png(0x7fffffff, 0x7fffffff, 6),
    'an image of 2147483647 x 2147483647 pixels is too large for a tensor %(shape %[4, 2147483647, 2147483647%]%)')
  raises(claimed_png(0x7fffffff, 0x7fffffff, 0), 'is too large for a tensor')
  raises(claimed_png(100000, 100000, 0), 'truncated: an image of 100000 x 100000 pixels needs 10000000000 bytes of ' ..
    'image data, more than a %d+%-byte file can hold compressed')
  raises(claimed_png(0, 5, 0), 'corrupt PNG %(libpng: Invalid IHDR data; Image width is zero in IHDR%)')
  -- a real image that the memory limit does not leave room for
  lm.save_image(path('big.png'), lm.zeros(1, 600, 700))
  test.ok(#read(path('big.png')) < 4096, 'a flat image compresses well')
  local _, b0 = live()
  local prev = lm.set_memory_limit(b0 + (1 << 20))
  local ok, err = pcall(lm.load_image, path('big.png')) -- float32: 1.7 MB
  local ok8 = pcall(lm.load_image, path('big.png'), { dtype = 'uint8' }) -- 420 KB (and as many for the pixels)
  lm.set_memory_limit(prev)
  test.ok(not ok and err:find("lm.load_image: '" .. path('big.png') .. "': cannot allocate shape [1, 600, 700] of float32", 1, true), err)
  test.ok(err:find('exceed the limit', 1, true), err)
  test.ok(ok8, 'uint8 fits')
  -- saving: the picture's bytes are allocated through the same limit
  local z = lm.zeros(200, 3, 100, 100):byte() -- 6 MB, and a 6.3 MB picture
  _, b0 = live()
  prev = lm.set_memory_limit(b0 + 7000000)
  ok, err = pcall(lm.save_image, path('big_grid.png'), z)
  lm.set_memory_limit(prev)
  test.ok(not ok and err:find('lm.save_image: cannot allocate the bytes of a 818 x 2552 picture (alloc: ', 1, true), err)
  test.ok(not io.open(path('big_grid.png')), 'nothing written')
  -- a progressive JPEG: libjpeg's whole-image coefficients (512 KB here) are held to the limit too
  local flat = data_dir .. 'img_flat_progressive.jpg'
  test.eq(u8(flat):shape(), { 1, 512, 512 })
  test.eq(u8(flat):max():item(), 90)
  _, b0 = live()
  prev = lm.set_memory_limit(b0 + 2 * 512 * 512 + 150000) -- the tensor and the pixels, with room to spare
  ok, err = pcall(lm.load_image, flat, { dtype = 'uint8' })
  lm.set_memory_limit(prev)
  test.ok(not ok and err:find("lm.load_image: '" .. flat .. "': decoding this JPEG needs more memory than the " ..
    'limit leaves (lm.set_memory_limit)', 1, true), err)
end)

case('bad arguments to lm.save_image and lm.load_image', function()
  local x = lm.rand(3, 4, 5)
  local function raises(fn, msg) test.raises(fn, msg) end
  raises(function() lm.save_image(path('x.bmp'), x) end,
    "lm.save_image: '" .. path('x.bmp') .. "': the extension says the format: .png, .jpg or .jpeg (got '.bmp')")
  raises(function() lm.save_image(path('noext'), x) end, 'the extension says the format: .png, .jpg or .jpeg (the name has none)')
  raises(function() lm.save_image(path('dir.png/x'), x) end, 'the name has none')
  raises(function() lm.save_image(path('a.jpg'), lm.rand(4, 2, 2)) end,
    'lm.save_image: shape [4, 2, 2] has 4 channels, with alpha, and a JPEG has no alpha: write a .png, or drop the alpha (x:narrow(1, 1, 3))')
  raises(function() lm.save_image(path('a.jpg'), lm.rand(2, 2, 2, 2)) end, 'drop the alpha %(x:narrow%(2, 1, 1%)%)')
  raises(function() lm.save_image(path('a.png'), lm.rand(5, 2, 2)) end,
    'shape [5, 2, 2] has 5 channels: an image has 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA)')
  raises(function() lm.save_image(path('a.png'), lm.rand(6)) end,
    'lm.save_image: an image is (H, W), (C, H, W) or a batch (N, C, H, W), got shape [6]')
  raises(function() lm.save_image(path('a.png'), lm.rand(1, 1, 1, 1, 1)) end, 'got shape [1, 1, 1, 1, 1]')
  raises(function() lm.save_image(path('a.png'), lm.rand(3, 0, 4)) end, 'shape [3, 0, 4] holds no pixels')
  raises(function() lm.save_image(path('a.png'), lm.rand(0, 3, 4, 4)) end, 'holds no pixels')
  raises(function() lm.save_image(path('a.png'), lm.zeros(1, 1, 1000001):byte()) end,
    'the picture would be 1000001 x 1 pixels (W x H): a PNG (libpng\'s limit) is at most 1000000 on each side')
  raises(function() lm.save_image(path('a.jpg'), lm.zeros(1, 65501, 1):byte()) end, 'a JPEG is at most 65500 on each side')
  raises(function() lm.save_image(path('a.png'), lm.zeros(300, 1, 1, 1):byte(), { padding = 999999 }) end,
    'the picture would be')
  raises(function() lm.save_image(path('a.png'), x, { nrow = 0 }) end, 'lm.save_image: option nrow must be at least 1, got 0')
  raises(function() lm.save_image(path('a.png'), x, { padding = -1 }) end, 'option padding must be in 0..1000000, got -1')
  raises(function() lm.save_image(path('a.png'), x, { quality = 0 }) end, 'option quality must be in 1..100, got 0')
  raises(function() lm.save_image(path('a.jpg'), x, { quality = 101 }) end, 'option quality must be in 1..100, got 101')
  raises(function() lm.save_image(path('a.png'), x, { normalize = 'yes' }) end, 'option normalize must be a boolean')
  raises(function() lm.save_image(path('a.png'), x, { pad_value = 1 }) end, "unknown option 'pad_value'")
  raises(function() lm.save_image(path('a.png'), 'x') end, 'lm.save_image: argument 2 must be a tensor')
  raises(function() lm.save_image(42, x) end, 'lm.save_image: path must be a string, got 42')
  raises(function() lm.save_image(tmp, x) end, 'the extension says')
  os.execute("mkdir -p '" .. path('d.png') .. "'")
  raises(function() lm.save_image(path('d.png'), x) end, "lm.save_image: cannot write '" .. path('d.png') .. "': it is a directory")
  raises(function() lm.save_image('/nonexistent-dir/x.png', x) end, "lm.save_image: cannot write '/nonexistent-dir/x.png'")
  raises(function() lm.load_image(path('a.png'), { mode = 'cmyk' }) end,
    "lm.load_image: option mode must be 'gray', 'rgb' or 'rgba', got string 'cmyk'")
  raises(function() lm.load_image(path('a.png'), { dtype = 'int32' }) end,
    "lm.load_image: option dtype must be 'float32', 'float64' or 'uint8', got 'int32'")
  raises(function() lm.load_image(path('a.png'), { size = 3 }) end, "unknown option 'size'")
  raises(function() lm.load_image() end, 'lm.load_image: path must be a string, got no value')
end)

case('a failed save leaves the file as it was; an allocation failing anywhere leaks nothing', function()
  local target = path('keep.png')
  local x = bytes({ 3, 6, 5 })
  lm.save_image(target, x)
  local before = read(target)
  local function listing()
    local names = lm.sys.listdir(tmp)
    table.sort(names)
    return table.concat(names, ' ')
  end
  local files = listing()
  test.raises(function() lm.save_image(target, lm.rand(6)) end, 'an image is')
  test.eq(read(target), before)
  lm.save_image(path('keep.jpg'), x)
  local jpg_before = read(path('keep.jpg'))
  files = listing()
  local t0, b0 = live()
  local fails = 0
  for k = 1, 40 do
    for _, case in ipairs({
      function() lm.save_image(target, bytes({ 2, 3, 4, 5 })) end,
      function() lm.save_image(path('keep.jpg'), lm.rand(3, 6, 5):transpose(2, 3)) end,
      function() return lm.load_image(data_dir .. 'img_adam7_rgba.png', { mode = 'gray' }) end,
      function() return lm.load_image(data_dir .. 'img_progressive.jpg', { dtype = 'float64' }) end,
      function() return lm.load_image(data_dir .. 'img_cmyk.jpg') end,
    }) do
      lm.sys.fail_alloc_after(k)
      local ok, err = pcall(case)
      lm.sys.fail_alloc_after(0)
      if not ok and err:find('injected', 1, true) then fails = fails + 1 end
      test.ok(ok or type(err) == 'string' and (err:find('injected', 1, true) or err:find('CMYK', 1, true)),
        tostring(err))
    end
    test.eq(listing(), files, 'no temporary left behind')
    lm.save_image(target, x)
    lm.save_image(path('keep.jpg'), x)
  end
  test.ok(fails > 5, 'allocations failed: ' .. fails)
  test.eq(read(target), before)
  test.eq(read(path('keep.jpg')), jpg_before)
  local t1, b1 = live()
  test.eq(t1, t0, 'live tensors')
  test.eq(b1, b0, 'live bytes')
end)

test.case('cleanup', function() os.execute("rm -rf '" .. tmp .. "'") end)
