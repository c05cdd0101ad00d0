--[[
lumen.data — `require 'data'` (the global data): data sets, the DataLoader, batch transforms.

A data set here is one tensor per field (images (N, 1, 28, 28) float32, labels (N) int64), not N
small tensors: data.TensorDataset(x, y) holds them, ds:get(i) gives the i-th rows (views; ds[i] the
same as a table {x, y}, PyTorch's tuple), #ds the count. data.FashionMNIST{} and data.MNIST{} read the IDX files once into such tensors (through
lm.load_idx: gzip streamed by zlib, uint8 converted to float32 in [0, 1] on the way; labels
1-based). data.DataLoader(ds, {batch_size=, shuffle=, drop_last=, seed=}) gathers each batch in C
by index (lm._data.take: one memcpy per row, no Lua per sample); shuffling draws a permutation
from Philox keyed by the seed, so seed=s gives the same batches on every run (epoch e uses counter
stream e); without a seed each epoch's seed is drawn from Lumen's generator (lm.manual_seed makes
that reproducible too). Transforms (Normalize, RandomCrop, RandomHorizontalFlip, Compose) run on
whole batches. Text (data.TextFile, data.CharDataset, data.Corpus) is in lumen/data/text.lua. See
docs/nn.md. Read next: lumen/nn/utils.lua.
]]
local lm = require 'lumen'
local C = lm._data

local data = {}

local check = require 'lumen.nn.check'
local raise, describe = check.raise, check.describe
local function options(name, opts, allowed) return check.options(opts, allowed, name) end

-- ---------------------------------------------------------------- TensorDataset

local TensorDataset = { __name = 'TensorDataset' }
data.TensorDataset = setmetatable(TensorDataset, {
  __call = function(cls, ...) return cls.new(...) end,
  __tostring = function() return 'class data.TensorDataset' end,
})

function TensorDataset.new(...)
  local ts = table.pack(...)
  if ts.n == 0 then raise('data.TensorDataset: expected at least one tensor') end
  local n
  for i = 1, ts.n do
    local t = ts[i]
    if not lm.is_tensor(t) then raise(string.format('data.TensorDataset: argument %d is %s, expected a tensor', i, describe(t))) end
    if t:dim() == 0 then raise(string.format('data.TensorDataset: argument %d is a 0-d tensor (it needs a dim of samples)', i)) end
    n = n or t:size(1)
    if t:size(1) ~= n then
      raise(string.format('data.TensorDataset: the tensors must have the same size along dim 1: argument 1 has %d ' ..
        'rows, argument %d has %d', n, i, t:size(1)))
    end
  end
  local self = { tensors = {} }
  for i = 1, ts.n do self.tensors[i] = ts[i]:contiguous() end
  return setmetatable(self, TensorDataset)
end

-- the fields of sample k (views) as an array
local function sample(self, k)
  local n = rawget(self, 'tensors')[1]:size(1)
  if math.type(k) ~= 'integer' or k < 1 or k > n then
    raise(string.format('%s: index %s is out of range 1..%d', getmetatable(self).__name, tostring(k), n))
  end
  local out = {}
  for i, t in ipairs(rawget(self, 'tensors')) do out[i] = t[k] end
  return out
end

--- ds[i] -> {x, y}: the fields of sample i (views), as PyTorch's tuple (an __index gives Lua one
--- value: local x, y = ds:get(i), or table.unpack(ds[i])).
function TensorDataset.__index(self, k)
  if math.type(k) == 'integer' then return sample(self, k) end
  return getmetatable(self)[k]
end

--- ds:get(i) -> x, y: the fields of sample i (views).
function TensorDataset:get(i) return table.unpack(sample(self, math.tointeger(i) or i)) end

function TensorDataset:__len() return rawget(self, 'tensors')[1]:size(1) end

function TensorDataset:__tostring()
  local parts = {}
  for i, t in ipairs(rawget(self, 'tensors')) do parts[i] = t:dtype() .. ' [' .. table.concat(t:shape(), ', ') .. ']' end
  return string.format('%s of %d samples: %s', getmetatable(self).__name, #self, table.concat(parts, ', '))
end

-- ---------------------------------------------------------------- IDX data sets

local FASHION_ROOT = '/usr/share/datasets/fashion-mnist'
local FASHION_CLASSES = { 'T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker',
  'Bag', 'Ankle boot' }
local STATS = { FashionMNIST = { 0.2860, 0.3530 }, MNIST = { 0.1307, 0.3081 } }

-- Something is there (a FIFO or a directory too: the loader then says what it is, where
-- io.open would block on a FIFO).
local function exists(path)
  local ok, what = lm.sys.isfile(path)
  return ok or what ~= 'missing'
end

--- The file of base name in root (.gz first, then plain), or an error saying how to get it.
local function find(name, root, base, how)
  for _, p in ipairs({ root .. '/' .. base .. '.gz', root .. '/' .. base }) do
    if exists(p) then return p end
  end
  raise(string.format("data.%s: '%s/%s.gz' was not found: %s", name, root, base, how))
end

local function idx_dataset(name, o, default_root, how)
  local fname = 'data.' .. name
  o = options(fname, o, { split = true, root = true, normalize = true, limit = true, train = true })
  local split = o.split
  if split == nil and o.train ~= nil then split = o.train and 'train' or 'test' end
  split = split or 'train'
  if split ~= 'train' and split ~= 'test' then
    raise(fname .. ": option split must be 'train' or 'test', got " .. describe(split))
  end
  local root = o.root or default_root
  if type(root) ~= 'string' then
    raise(string.format('%s: no data set root: %s', fname, how))
  end
  root = root:gsub('/$', '')
  if o.limit ~= nil and (math.type(o.limit) ~= 'integer' or o.limit < 1) then
    raise(fname .. ': option limit must be a positive integer, got ' .. describe(o.limit))
  end
  local prefix = split == 'train' and 'train' or 't10k'
  local ipath = find(name, root, prefix .. '-images-idx3-ubyte', how)
  local lpath = find(name, root, prefix .. '-labels-idx1-ubyte', how)
  local x = lm.load_idx(ipath, { scale = 1 / 255, limit = o.limit })
  local y = lm.load_idx(lpath, { limit = o.limit })
  if x:dim() ~= 3 then raise(string.format("%s: '%s' holds %d-d data, expected images (N, H, W)", fname, ipath, x:dim())) end
  if y:dim() ~= 1 then raise(string.format("%s: '%s' holds %d-d data, expected labels (N)", fname, lpath, y:dim())) end
  if x:size(1) ~= y:size(1) then
    raise(string.format("%s: '%s' holds %d images but '%s' %d labels", fname, ipath, x:size(1), lpath, y:size(1)))
  end
  if y:numel() > 0 and y:max():item() > 9 then
    raise(string.format("%s: '%s' holds label %d; expected 0..9", fname, lpath, y:max():item()))
  end
  local norm = o.normalize
  if norm ~= nil and norm ~= false then
    local mean, std
    if norm == true then mean, std = STATS[name][1], STATS[name][2]
    elseif type(norm) == 'table' and type(norm[1]) == 'number' and type(norm[2]) == 'number' and norm[2] > 0 then
      mean, std = norm[1], norm[2]
    else
      raise(fname .. ': option normalize must be true, false or {mean, std}, got ' .. describe(norm))
    end
    x:sub_(mean):div_(std)
  end
  local ds = TensorDataset.new(x:view(x:size(1), 1, x:size(2), x:size(3)), y:long():add_(1))
  ds.data, ds.targets = ds.tensors[1], ds.tensors[2]
  ds.classes = FASHION_CLASSES
  if name == 'MNIST' then ds.classes = { '0', '1', '2', '3', '4', '5', '6', '7', '8', '9' } end
  ds.split, ds.root = split, root
  return setmetatable(ds, data[name])
end

local function idx_class(name, default_root, how)
  local cls = setmetatable({ __name = name, __len = TensorDataset.__len, __tostring = TensorDataset.__tostring,
    get = TensorDataset.get }, {
    __index = TensorDataset,
    __call = function(_, o) return idx_dataset(name, o, default_root, how) end,
    __tostring = function() return 'class data.' .. name end,
  })
  cls.__index = TensorDataset.__index
  data[name] = cls
end

--- data.FashionMNIST{split='train'|'test', root=, normalize=false|true|{mean, std}, limit=}
idx_class('FashionMNIST', FASHION_ROOT, "install Debian's dataset-fashion-mnist (apt-get install " ..
  'dataset-fashion-mnist) or pass root= to a directory holding the IDX files')
--- data.MNIST{split=, root=, normalize=, limit=}: the same files from root (no default location).
idx_class('MNIST', nil, 'pass root= to a directory holding train-images-idx3-ubyte.gz, ' ..
  'train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (from the MNIST site)')

-- ---------------------------------------------------------------- DataLoader

local DataLoader = { __name = 'DataLoader' }
DataLoader.__index = DataLoader
data.DataLoader = setmetatable(DataLoader, {
  __call = function(cls, ...) return cls.new(...) end,
  __tostring = function() return 'class data.DataLoader' end,
})

--- data.DataLoader(ds, {batch_size=1, shuffle=false, drop_last=false, seed=, transform=, sampler=})
--- sampler: an object with :indices() (this epoch's 1-based sample indices, an int64 tensor) and #,
--- as dist.DistributedSampler; the loader then takes those samples in that order (as PyTorch's,
--- it excludes shuffle; call sampler:set_epoch(e) each epoch).
function DataLoader.new(ds, o)
  local fname = 'data.DataLoader'
  if type(ds) ~= 'table' then raise(fname .. ': argument 1 must be a data set, got ' .. describe(ds)) end
  o = options(fname, o, { batch_size = true, shuffle = true, drop_last = true, seed = true, transform = true, sampler = true })
  local bs = o.batch_size or 1
  if math.type(bs) ~= 'integer' or bs < 1 then
    raise(fname .. ': option batch_size must be a positive integer, got ' .. describe(bs))
  end
  for _, k in ipairs({ 'shuffle', 'drop_last' }) do
    if o[k] ~= nil and type(o[k]) ~= 'boolean' then raise(string.format('%s: option %s must be a boolean, got %s', fname, k, describe(o[k]))) end
  end
  if o.seed ~= nil and math.type(o.seed) ~= 'integer' then
    raise(fname .. ': option seed must be an integer, got ' .. describe(o.seed))
  end
  if o.transform ~= nil and type(o.transform) ~= 'function' and not (type(o.transform) == 'table' and
      getmetatable(o.transform) and getmetatable(o.transform).__call) then
    raise(fname .. ': option transform must be callable, got ' .. describe(o.transform))
  end
  local sampler = o.sampler
  if sampler ~= nil then
    local smt = getmetatable(sampler)
    if type(sampler) ~= 'table' or type(sampler.indices) ~= 'function' or not (smt and smt.__len) then
      raise(fname .. ': option sampler must have :indices() and a length (dist.DistributedSampler), got ' .. describe(sampler))
    end
    if o.shuffle then raise(fname .. ': option sampler is mutually exclusive with shuffle (the sampler orders the samples)') end
  end
  local tensors = rawget(ds, 'tensors')
  local mt = getmetatable(ds)
  -- a data set that gathers a batch itself (data.CharDataset): ds:_take(order, first, count)
  local take = type(mt) == 'table' and type(rawget(mt, '_take')) == 'function' and rawget(mt, '_take') or nil
  if tensors == nil and (mt == nil or mt.__len == nil) then
    raise(fname .. ': the data set needs tensors (data.TensorDataset) or __len and __index')
  end
  return setmetatable({ dataset = ds, batch_size = bs, shuffle = o.shuffle or false, drop_last = o.drop_last or false,
    seed = o.seed, transform = o.transform, sampler = sampler, epoch = 0, _tensors = tensors, _take = take }, DataLoader)
end

function DataLoader:__len()
  local n = self.sampler and #self.sampler or #self.dataset
  -- (n - 1) // bs + 1, not (n + bs - 1) // bs: that wraps for a batch_size near 2^63
  return self.drop_last and n // self.batch_size or n == 0 and 0 or (n - 1) // self.batch_size + 1
end

--- This epoch's order of samples (0-based int64): the sampler's, Philox(seed, epoch) or 0..n-1.
function DataLoader:_order(n)
  if self.sampler then
    local idx = self.sampler:indices()
    if not lm.is_tensor(idx) or idx:dim() ~= 1 or idx:numel() ~= n then
      raise(string.format('data.DataLoader: the sampler gave %s; expected %d indices (its length) in a 1-d tensor',
        lm.is_tensor(idx) and string.format('a %d-d tensor of %d elements', idx:dim(), idx:numel()) or describe(idx), n))
    end
    idx = idx:long() - 1
    local size = #self.dataset
    if n > 0 and (idx:min():item() < 0 or idx:max():item() >= size) then
      raise(string.format('data.DataLoader: the sampler gave index %d; the data set has %d samples (1 to %d)',
        (idx:min():item() < 0 and idx:min():item() or idx:max():item()) + 1, size, size))
    end
    return idx:contiguous()
  end
  if not self.shuffle then
    if not self._identity or self._identity:numel() ~= n then self._identity = lm.arange(0, n, { dtype = 'int64' }) end
    return self._identity
  end
  local seed = self.seed
  if seed == nil then seed = lm.randint(0, 1 << 62, { 1 })[1]:item() end
  return C.randperm(n, seed, self.epoch)
end

--- Sample i of a data set of samples: ds:get(i) when the class has get, else ds[i] (a tensor, a
--- number, or a table of fields such as {x, y}, PyTorch's tuple).
local function get_sample(ds, i)
  local mt = getmetatable(ds)
  local get = rawget(ds, 'get') or (type(mt) == 'table' and type(mt.__index) == 'table' and mt.__index.get)
  if type(get) == 'function' then return table.pack(get(ds, i)) end
  local v = ds[i]
  if type(v) == 'table' and not lm.is_tensor(v) then return table.pack(table.unpack(v)) end
  return table.pack(v)
end

--- Iterates over the batches of one epoch: for x, y in loader:iter() do ... end.
function DataLoader:iter()
  self.epoch = self.epoch + 1
  local ds, bs, ts = self.dataset, self.batch_size, self._tensors
  local n = self.sampler and #self.sampler or #ds
  local order = self:_order(n)
  local nb = #self
  local b, transform = 0, self.transform
  if self._take then
    local take = self._take
    return function()
      if b >= nb then return nil end
      local first = b * bs
      local count = math.min(bs, n - first)
      b = b + 1
      local x, y = take(ds, order, first, count)
      if transform then x = transform(x) end
      return x, y
    end
  end
  if ts then
    local k, take = #ts, C.take
    return function()
      if b >= nb then return nil end
      local first = b * bs
      local count = math.min(bs, n - first)
      b = b + 1
      if k == 2 then
        local x, y = take(ts[1], order, first, count), take(ts[2], order, first, count)
        if transform then x = transform(x) end
        return x, y
      end
      local out = {}
      for i = 1, k do out[i] = take(ts[i], order, first, count) end
      if transform then out[1] = transform(out[1]) end
      return table.unpack(out, 1, k)
    end
  end
  -- a data set of samples (ds[i]): gathered in Lua and stacked (slower; one call per sample)
  local idx = order:tolist()
  return function()
    if b >= nb then return nil end
    local first = b * bs
    local count = math.min(bs, n - first)
    b = b + 1
    local fields = {}
    for j = 1, count do
      local sample = get_sample(ds, idx[first + j] + 1)
      for f = 1, sample.n do
        fields[f] = fields[f] or {}
        fields[f][j] = lm.is_tensor(sample[f]) and sample[f] or lm.tensor(sample[f])
      end
    end
    for f = 1, #fields do fields[f] = lm.stack(fields[f], 1) end
    if transform then fields[1] = transform(fields[1]) end
    return table.unpack(fields)
  end
end

function DataLoader:__tostring()
  return string.format('DataLoader(%d samples, batch_size=%d, shuffle=%s, drop_last=%s%s): %d batches', #self.dataset,
    self.batch_size, tostring(self.shuffle), tostring(self.drop_last), self.seed and (', seed=' .. self.seed) or '', #self)
end

-- ---------------------------------------------------------------- transforms (whole batches)

local function transform_class(name, init, apply)
  local cls = { __name = name }
  cls.__index = cls
  cls.__call = apply
  data[name] = setmetatable(cls, { __call = function(c, ...) return setmetatable(init(...), c) end,
    __tostring = function() return 'class data.' .. name end })
  return cls
end

local function per_channel(v, what, fname)
  if type(v) == 'number' then return { v } end
  if type(v) == 'table' and not lm.is_tensor(v) and #v > 0 then
    for _, x in ipairs(v) do if type(x) ~= 'number' then raise(fname .. ': ' .. what .. ' must hold numbers') end end
    return v
  end
  raise(fname .. ': ' .. what .. ' must be a number or a table of numbers per channel, got ' .. describe(v))
end

--- data.Normalize(mean, std): (x - mean) / std per channel of a batch (N, C, H, W).
transform_class('Normalize', function(mean, std)
  local m, s = per_channel(mean, 'mean', 'data.Normalize'), per_channel(std, 'std', 'data.Normalize')
  if #m ~= #s then raise('data.Normalize: mean and std must have as many channels') end
  for _, v in ipairs(s) do if not (v > 0) then raise('data.Normalize: std must be > 0, got ' .. v) end end
  return { mean = m, std = s }
end, function(self, x)
  local c = #self.mean
  if not lm.is_tensor(x) or x:dim() < 2 or (c > 1 and x:size(2) ~= c) then
    raise(string.format('data.Normalize: expected a batch (N, %s, ...), got %s', c > 1 and c or 'C', describe(x)))
  end
  if c == 1 then return (x - self.mean[1]) / self.std[1] end
  local shape = { 1, c }
  for _ = 3, x:dim() do shape[#shape + 1] = 1 end
  local m = lm.tensor(self.mean, { dtype = x:dtype() }):view(shape)
  local s = lm.tensor(self.std, { dtype = x:dtype() }):view(shape)
  return (x - m) / s
end)

--- data.RandomCrop(size [, {padding=0}]): each image of a batch zero-padded and cropped to size
--- (a number or {h, w}) at a random place (Lumen's generator).
transform_class('RandomCrop', function(size, o)
  local fname = 'data.RandomCrop'
  if type(size) == 'number' then size = { size, size } end
  if type(size) ~= 'table' or math.type(size[1]) ~= 'integer' or math.type(size[2]) ~= 'integer' or size[1] < 1 or size[2] < 1 then
    raise(fname .. ': size must be a positive integer or {h, w}, got ' .. describe(size))
  end
  o = options(fname, o, { padding = true })
  local pad = o.padding or 0
  if math.type(pad) ~= 'integer' or pad < 0 then raise(fname .. ': option padding must be an integer >= 0, got ' .. describe(pad)) end
  return { size = { size[1], size[2] }, padding = pad }
end, function(self, x)
  if not lm.is_tensor(x) or x:dim() ~= 4 then raise('data.RandomCrop: expected a batch (N, C, H, W), got ' .. describe(x)) end
  local n, h, w, p = x:size(1), x:size(3), x:size(4), self.padding
  local oh, ow = self.size[1], self.size[2]
  if oh > h + 2 * p or ow > w + 2 * p then
    raise(string.format('data.RandomCrop: a crop of %d x %d does not fit images of %d x %d padded by %d', oh, ow, h, w, p))
  end
  local tops = lm.randint(0, h + 2 * p - oh + 1, { n, 1 })
  local lefts = lm.randint(0, w + 2 * p - ow + 1, { n, 1 })
  return C.crop(x, lm.cat({ tops, lefts }, 2), oh, ow, p)
end)

--- data.RandomHorizontalFlip([p = 0.5]): each image of a batch mirrored with probability p.
transform_class('RandomHorizontalFlip', function(p)
  p = p == nil and 0.5 or p
  if type(p) ~= 'number' or not (p >= 0 and p <= 1) then
    raise('data.RandomHorizontalFlip: p must be a number in [0, 1], got ' .. describe(p))
  end
  return { p = p }
end, function(self, x)
  if not lm.is_tensor(x) or x:dim() < 2 then raise('data.RandomHorizontalFlip: expected a batch (N, ..., W), got ' .. describe(x)) end
  return C.flip(x, lm.rand(x:size(1)):lt(self.p))
end)

--- data.Compose({t1, t2, ...}): the transforms in order.
transform_class('Compose', function(list)
  if type(list) ~= 'table' or #list == 0 then raise('data.Compose: expected a table of transforms') end
  for i, t in ipairs(list) do
    if type(t) ~= 'function' and not (type(t) == 'table' and getmetatable(t) and getmetatable(t).__call) then
      raise(string.format('data.Compose: transform %d is not callable (%s)', i, describe(t)))
    end
  end
  return { transforms = list }
end, function(self, x)
  for _, t in ipairs(self.transforms) do x = t(x) end
  return x
end)

-- ---------------------------------------------------------------- text (lumen/data/text.lua)

local text = require 'lumen.data.text'
data.TextFile, data.CharDataset, data.Corpus = text.TextFile, text.CharDataset, text.Corpus

return data
