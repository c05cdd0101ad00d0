-- data: TensorDataset, the DataLoader (every sample once per epoch, batch sizes, drop_last,
-- seeded and reproducible shuffling, batches equal to the rows they were gathered from),
-- whole-batch transforms against per-sample references, Fashion-MNIST and MNIST from IDX files,
-- and clear errors (a missing data set says how to install it).
local test = require 'lumen.test'

local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p '" .. tmp .. "'")
local have_fashion = io.open('/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz', 'rb')
if have_fashion then have_fashion:close() end

local function ids(loader)
  local seen, sizes = {}, {}
  for x, y in loader:iter() do
    sizes[#sizes + 1] = x:size(1)
    for _, v in ipairs(y:tolist()) do seen[#seen + 1] = v end
  end
  return seen, sizes
end

test.case('TensorDataset: rows as views, #, errors', function()
  local x, y = lm.arange(0, 20):view(10, 2), lm.arange(1, 11)
  local ds = data.TensorDataset(x, y)
  test.eq(#ds, 10)
  local a, b = ds:get(3)
  test.eq(a:tolist(), { 4, 5 })
  test.eq(b:item(), 3)
  local s = ds[3]
  test.eq(#s, 2, 'ds[i] is {x, y}, as PyTorch\'s tuple')
  test.eq(s[1]:tolist(), { 4, 5 })
  test.eq(s[2]:item(), 3)
  test.raises(function() return ds[11] end, 'index 11 is out of range 1..10')
  test.raises(function() return ds:get(0) end, 'index 0 is out of range 1..10')
  test.raises(function() data.TensorDataset(x, lm.arange(0, 3)) end,
    'the tensors must have the same size along dim 1: argument 1 has 10 rows, argument 2 has 3')
  test.raises(function() data.TensorDataset(x, 'y') end, "argument 2 is 'y', expected a tensor")
  test.raises(function() data.TensorDataset() end, 'expected at least one tensor')
  test.ok(tostring(ds):find('TensorDataset of 10 samples', 1, true))
end)

test.case('DataLoader: every sample once per epoch, batch sizes, drop_last', function()
  local n = 103
  local ds = data.TensorDataset(lm.randn(n, 3, 2), lm.arange(1, n + 1))
  for _, shuffle in ipairs({ false, true }) do
    local loader = data.DataLoader(ds, { batch_size = 10, shuffle = shuffle, seed = 5 })
    test.eq(#loader, 11)
    for _ = 1, 2 do
      local seen, sizes = ids(loader)
      test.eq(#sizes, 11)
      test.eq(sizes[11], 3, 'the last batch is partial')
      table.sort(seen)
      for i = 1, n do test.eq(seen[i], i, 'sample ' .. i .. ' exactly once') end
    end
  end
  local dl = data.DataLoader(ds, { batch_size = 10, drop_last = true, shuffle = true })
  test.eq(#dl, 10)
  local seen, sizes = ids(dl)
  test.eq(#seen, 100)
  for _, s in ipairs(sizes) do test.eq(s, 10) end
  local inorder = ids(data.DataLoader(ds, { batch_size = 7 }))
  for i = 1, n do test.eq(inorder[i], i, 'no shuffle: in order') end
  local one = data.DataLoader(ds)
  test.eq(#one, n, 'batch_size 1 by default')
end)

test.case('DataLoader: batches hold exactly the gathered rows', function()
  local x = lm.randn(50, 2, 3)
  local ds = data.TensorDataset(x, lm.arange(1, 51), lm.arange(0, 50):double())
  for xb, yb, zb in data.DataLoader(ds, { batch_size = 8, shuffle = true, seed = 1 }):iter() do
    test.eq(xb:shape()[2], 2)
    for j, idx in ipairs(yb:tolist()) do
      test.ok(lm.equal(xb[j], x[idx]), 'x rows')
      test.eq(zb[j]:item(), idx - 1, 'third field')
    end
  end
end)

test.case('seeded shuffling is reproducible; epochs differ; lm.manual_seed governs the unseeded', function()
  local ds = data.TensorDataset(lm.arange(1, 201))
  local function order(loader)
    local s = {}
    for b in loader:iter() do for _, v in ipairs(b:tolist()) do s[#s + 1] = v end end
    return s
  end
  local a1 = data.DataLoader(ds, { batch_size = 16, shuffle = true, seed = 42 })
  local a2 = data.DataLoader(ds, { batch_size = 16, shuffle = true, seed = 42 })
  local e1, e2 = order(a1), order(a1)
  test.eq(order(a2), e1, 'the same seed, the same first epoch')
  test.eq(order(a2), e2, 'and the same second epoch')
  test.ok(table.concat(e1, ',') ~= table.concat(e2, ','), 'epochs are shuffled differently')
  local other = order(data.DataLoader(ds, { batch_size = 16, shuffle = true, seed = 43 }))
  test.ok(table.concat(e1, ',') ~= table.concat(other, ','), 'another seed, another order')
  lm.manual_seed(9)
  local u1 = order(data.DataLoader(ds, { batch_size = 16, shuffle = true }))
  lm.manual_seed(9)
  local u2 = order(data.DataLoader(ds, { batch_size = 16, shuffle = true }))
  test.eq(u1, u2, 'unseeded loaders follow lm.manual_seed')
  lm.set_num_threads(1)
  test.eq(order(data.DataLoader(ds, { batch_size = 16, shuffle = true, seed = 42 })), e1, 'any thread count')
  lm.set_num_threads(0)
end)

test.case('a data set of samples (ds[i] in Lua) also loads, stacked', function()
  local Squares = setmetatable({}, {
    __len = function() return 9 end,
    __index = function(_, i) return { lm.tensor({ i, i * i }), i } end, -- PyTorch's (x, y)
  })
  local total, batches = 0, 0
  for x, y in data.DataLoader(Squares, { batch_size = 4 }):iter() do
    batches = batches + 1
    test.eq(x:shape()[2], 2)
    total = total + y:sum():item()
  end
  test.eq(batches, 3)
  test.eq(total, 45)
end)

test.case('transforms on whole batches against per-sample references', function()
  lm.manual_seed(1)
  local x = lm.randn(6, 2, 5, 7)
  local n = data.Normalize({ 0.5, -1 }, { 2, 4 })(x)
  test.tensor_near(n[{ {}, 1 }], (x[{ {}, 1 }] - 0.5) / 2, 1e-6)
  test.tensor_near(n[{ {}, 2 }], (x[{ {}, 2 }] + 1) / 4, 1e-6)
  test.tensor_near(data.Normalize(0.5, 2)(x), (x - 0.5) / 2, 1e-6)
  -- RandomCrop: replay the same draws to build the reference
  lm.manual_seed(77)
  local c = data.RandomCrop({ 4, 6 }, { padding = 2 })(x)
  lm.manual_seed(77)
  local tops = lm.randint(0, 5 + 4 - 4 + 1, { 6, 1 })
  local lefts = lm.randint(0, 7 + 4 - 6 + 1, { 6, 1 })
  local padded = F.pad(x, { 2, 2, 2, 2 })
  for i = 1, 6 do
    local want = padded[i]:narrow(2, tops[{ i, 1 }]:item() + 1, 4):narrow(3, lefts[{ i, 1 }]:item() + 1, 6)
    test.ok(lm.equal(c[i], want), 'crop of sample ' .. i)
  end
  lm.manual_seed(3)
  local f = data.RandomHorizontalFlip(0.5)(x)
  lm.manual_seed(3)
  local mask = lm.rand(6):lt(0.5)
  local flipped = 0
  for i = 1, 6 do
    local want = mask[i]:item() == 1 and x[i]:flip(3) or x[i]
    flipped = flipped + mask[i]:item()
    test.ok(lm.equal(f[i], want), 'flip of sample ' .. i)
  end
  test.ok(flipped > 0 and flipped < 6, 'some flipped, some not')
  local comp = data.Compose({ data.RandomHorizontalFlip(1), data.Normalize(1, 1) })
  test.ok(lm.equal(comp(x), x:flip(4) - 1))
  local loader = data.DataLoader(data.TensorDataset(x, lm.arange(1, 7)), { batch_size = 3, transform = data.Normalize(10, 1) })
  for xb in loader:iter() do test.ok(xb:max():item() < 0, 'the transform ran on the batch') end
  test.raises(function() data.RandomCrop(9)(x) end, 'a crop of 9 x 9 does not fit images of 5 x 7 padded by 0')
  test.raises(function() data.RandomCrop(3)(lm.randn(3, 3)) end, 'expected a batch (N, C, H, W)')
  test.raises(function() data.Normalize({ 1, 2 }, { 1 }) end, 'as many channels')
  test.raises(function() data.Normalize(0, 0) end, 'std must be > 0')
  test.raises(function() data.RandomHorizontalFlip(2) end, 'p must be a number in [0, 1]')
end)

test.case('DataLoader bad options', function()
  local ds = data.TensorDataset(lm.ones(4, 2))
  test.raises(function() data.DataLoader(ds, { batch_size = 0 }) end, 'option batch_size must be a positive integer, got 0')
  test.raises(function() data.DataLoader(ds, { shuffle = 'yes' }) end, "option shuffle must be a boolean, got 'yes'")
  test.raises(function() data.DataLoader(ds, { seed = 1.5 }) end, 'option seed must be an integer, got 1.5')
  test.raises(function() data.DataLoader(ds, { batchsize = 4 }) end, "unknown option 'batchsize'")
  test.raises(function() data.DataLoader(42) end, 'argument 1 must be a data set')
  test.raises(function() data.DataLoader({}) end, 'the data set needs tensors')
end)

-- A minimal IDX pair (images uint8 (n, h, w), labels uint8 (n)) written with string.pack.
local function write_idx(dir, prefix, labels, h, w)
  local n = #labels
  local img = { string.pack('>I4I4I4I4', 0x00000803, n, h, w) }
  for i = 0, n * h * w - 1 do img[#img + 1] = string.char((i * 13) % 256) end
  local f = assert(io.open(dir .. '/' .. prefix .. '-images-idx3-ubyte', 'wb'))
  f:write(table.concat(img))
  f:close()
  local lab = { string.pack('>I4I4', 0x00000801, n) }
  for _, l in ipairs(labels) do lab[#lab + 1] = string.char(l) end
  f = assert(io.open(dir .. '/' .. prefix .. '-labels-idx1-ubyte', 'wb'))
  f:write(table.concat(lab))
  f:close()
end

test.case('MNIST from a root of IDX files; labels 1-based; malformed sets are errors', function()
  write_idx(tmp, 'train', { 0, 9, 3 }, 4, 5)
  write_idx(tmp, 't10k', { 5 }, 4, 5)
  local ds = data.MNIST({ root = tmp })
  test.eq(#ds, 3)
  test.eq(ds.data:shape(), { 3, 1, 4, 5 })
  test.eq(ds.data:dtype(), 'float32')
  test.eq(ds.targets:tolist(), { 1, 10, 4 })
  test.near(ds.data[{ 1, 1, 1, 2 }]:item(), 13 / 255, 1e-7)
  test.eq(#data.MNIST({ root = tmp, split = 'test' }), 1)
  test.eq(#data.MNIST({ root = tmp, limit = 2 }), 2)
  local norm = data.MNIST({ root = tmp, normalize = { 0.5, 0.25 } })
  test.near(norm.data[{ 1, 1, 1, 1 }]:item(), (0 - 0.5) / 0.25, 1e-6)
  write_idx(tmp, 'train', { 0, 12 }, 4, 5)
  test.raises(function() data.MNIST({ root = tmp }) end, 'holds label 12; expected 0..9')
  write_idx(tmp, 'train', { 1, 2 }, 4, 5)
  write_idx(tmp, 't10k', { 1, 2, 3 }, 4, 5)
  os.rename(tmp .. '/t10k-labels-idx1-ubyte', tmp .. '/train-labels-idx1-ubyte')
  test.raises(function() data.MNIST({ root = tmp }) end, 'holds 2 images but')
  test.raises(function() data.MNIST({}) end, 'data.MNIST: no data set root: pass root=')
  test.raises(function() data.MNIST({ root = tmp, split = 'val' }) end, "option split must be 'train' or 'test', got 'val'")
  test.raises(function() data.FashionMNIST({ root = tmp .. '/nowhere' }) end,
    "data.FashionMNIST: '" .. tmp .. "/nowhere/train-images-idx3-ubyte.gz' was not found: install Debian's " ..
    'dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or pass root=')
  write_idx(tmp, 'train', { 1, 2 }, 4, 5)
  local f = assert(io.open(tmp .. '/train-images-idx3-ubyte', 'r+b'))
  f:write('\0\0\7\3')
  f:close()
  test.raises(function() data.MNIST({ root = tmp }) end, "lm.load_idx: '" .. tmp .. "/train-images-idx3-ubyte': unknown IDX element type 0x07")
end)

test.case('Fashion-MNIST: one tensor of images in [0, 1], 1-based labels', function()
  if not have_fashion then
    print('  skipped: Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist; ./test.sh installs it)')
    return
  end
  local ds = data.FashionMNIST({ split = 'test', limit = 500 })
  test.eq(#ds, 500)
  test.eq(ds.data:shape(), { 500, 1, 28, 28 })
  test.eq(ds.targets:dtype(), 'int64')
  test.ok(ds.data:min():item() >= 0 and ds.data:max():item() <= 1)
  test.eq(ds.targets[1]:item(), 10, 'the first test image is an ankle boot (class 9 + 1)')
  test.eq(ds.classes[10], 'Ankle boot')
  test.ok(ds.targets:min():item() >= 1 and ds.targets:max():item() <= 10)
  local nd = data.FashionMNIST({ split = 'test', limit = 500, normalize = true })
  test.tensor_near(nd.data, (ds.data - 0.2860) / 0.3530, 1e-5)
  local seen = ids(data.DataLoader(ds, { batch_size = 128, shuffle = true, seed = 1 }))
  test.eq(#seen, 500)
end)

test.case('DataLoader with a sampler: its indices, in its order, on both gathering paths', function()
  local x, y = lm.arange(0, 20):view(10, 2), lm.arange(1, 11)
  local order = { 3, 1, 7, 10, 10, 2 }
  local samp = setmetatable({ indices = function() return lm.tensor(order, { dtype = 'int64' }) end },
    { __len = function() return #order end })
  local seen, sizes = ids(data.DataLoader(data.TensorDataset(x, y), { batch_size = 4, sampler = samp }))
  test.eq(seen, order, 'the tensor path takes the sampler\'s samples')
  test.eq(sizes, { 4, 2 })
  test.eq(#data.DataLoader(data.TensorDataset(x, y), { batch_size = 4, sampler = samp, drop_last = true }), 1)
  -- a data set of samples (ds[i]) goes through the Lua path
  local rows = setmetatable({}, { __len = function() return 10 end, __index = function(_, i) return { x[i], y[i] } end })
  seen = ids(data.DataLoader(rows, { batch_size = 4, sampler = samp }))
  test.eq(seen, order, 'the sample path takes the sampler\'s samples')
  test.raises(function() data.DataLoader(data.TensorDataset(x, y), { sampler = samp, shuffle = true }) end,
    'data.DataLoader: option sampler is mutually exclusive with shuffle')
  test.raises(function() data.DataLoader(data.TensorDataset(x, y), { sampler = 3 }) end,
    'data.DataLoader: option sampler must have :indices() and a length')
  local far = setmetatable({ indices = function() return lm.tensor({ 11 }, { dtype = 'int64' }) end },
    { __len = function() return 1 end })
  test.raises(function() ids(data.DataLoader(data.TensorDataset(x, y), { sampler = far })) end,
    'data.DataLoader: the sampler gave index 11; the data set has 10 samples (1 to 10)')
  local short = setmetatable({ indices = function() return lm.tensor({ 1 }, { dtype = 'int64' }) end },
    { __len = function() return 2 end })
  test.raises(function() ids(data.DataLoader(data.TensorDataset(x, y), { sampler = short })) end,
    'data.DataLoader: the sampler gave a 1-d tensor of 1 elements; expected 2 indices')
end)

test.case('cleanup', function() os.execute("rm -rf '" .. tmp .. "'") end)
