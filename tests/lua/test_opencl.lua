-- The OpenCL device (docs/opencl.md): tensors there against the CPU on random shapes and layouts,
-- training on it, the course's kernels with backend = 'opencl' against the CPU's results, and
-- kernels.opencl (a student's kernel: results, each parameter checked, build errors at their
-- line). Without an OpenCL ICD (PoCL: Debian's pocl-opencl-icd) every case says why and the
-- no-device answers are checked instead. The op table runs on the device too (tests/core/
-- test_optable.c: every op, dtype and layout, with gradients).
local test = require 'lumen.test'
local kernels = require 'lumen.kernels'

local cl = lm.opencl.is_available()
local function skip(why) print('  (skipped: ' .. why .. ')') end
local function need() if not cl then skip('no OpenCL device: ' .. lm.opencl.unavailable_reason()) end return cl end

local function maxdiff(a, b)
  a, b = a:cpu():double(), b:cpu():double()
  if a:numel() == 0 then return 0 end
  return (a - b):abs():max():item()
end

test.case('lm.opencl: devices, names, availability', function()
  test.eq(type(lm.opencl.is_available()), 'boolean')
  local devs = lm.opencl.devices()
  if not cl then
    test.ok(#lm.opencl.unavailable_reason() > 0)
    test.raises(function() return lm.ones(2):to('opencl') end, "device 'opencl' is not available")
    return
  end
  test.eq(lm.opencl.unavailable_reason(), nil)
  test.ok(#devs >= 1)
  local used = 0
  for _, d in ipairs(devs) do
    test.ok(#d.name > 0 and #d.platform > 0 and d.compute_units >= 1 and d.max_work_group >= 1, d.name)
    test.ok(d.version:find('^OpenCL'), d.version)
    if d.in_use then used = used + 1; test.eq(d.name, lm.opencl.device_name()) end
  end
  test.eq(used, 1)
end)

test.case('without an ICD: the reason, and every entry point refuses', function()
  -- a child process whose loader finds no vendor files
  local exe = lm.sys.executable()
  local p = io.popen("OCL_ICD_VENDORS=/nonexistent-lumen-icds '" .. exe .. "' -e \"print(lm.opencl.is_available()); " ..
    "print(lm.opencl.unavailable_reason()); print(pcall(function() return lm.ones(2):to('opencl') end)); " ..
    "print(pcall(require('lumen.kernels').opencl, '__kernel void f() {}', {global = 1}))\" 2>&1")
  local out = p:read('a')
  p:close()
  test.ok(out:find('^false\n'), out)
  test.ok(out:find('no platform', 1, true) or out:find('no OpenCL', 1, true), out)
  test.ok(out:find("Tensor:to: device 'opencl' is not available", 1, true), out)
  test.ok(out:find('kernels.opencl: no OpenCL device', 1, true), out)
end)

test.case('tensors on OpenCL: elementwise, broadcasting, views, dtypes', function()
  if not need() then return end
  lm.manual_seed(3)
  for trial = 1, 6 do
    local m, n = math.random(1, 9), math.random(1, 13)
    local a, b = lm.randn(m, n), lm.randn(1, n)
    local da, db = a:to('opencl'), b:to('opencl')
    test.eq(da:device(), 'opencl')
    for _, f in ipairs{function(x, y) return x + y end, function(x, y) return x * y - y end,
                       function(x, y) return x / (y:abs() + 1) end, function(x, y) return lm.maximum(x, y) end,
                       function(x) return (x:exp() + 1):log() end, function(x) return x:tanh():sigmoid() end,
                       function(x) return x:relu() + x:clamp(-0.5, 0.5) end, function(x) return x:pow(3) end} do
      test.near(maxdiff(f(da, db), f(a, b)), 0, 1e-5)
    end
    -- non-contiguous views: a transpose, a narrow, an expand
    test.near(maxdiff(da:t() * 2, a:t() * 2), 0, 1e-6)
    test.near(maxdiff(da:narrow(2, 1, math.max(1, n - 1)):exp(), a:narrow(2, 1, math.max(1, n - 1)):exp()), 0, 1e-5)
    test.near(maxdiff(db:expand(m, n) + da, b:expand(m, n) + a), 0, 1e-6)
    -- comparisons and where
    test.eq(da:gt(0):cpu():tolist(), a:gt(0):tolist())
    test.near(maxdiff(lm.where(da:gt(0), da, db), lm.where(a:gt(0), a, b)), 0, 0)
  end
  -- float64, int32, int64, uint8
  local d = lm.randn(5, 7):double()
  test.near(maxdiff(d:to('opencl'):sin(), d:sin()), 0, 1e-14)
  local i = lm.randint(-50, 50, {6, 5}):int()
  test.eq((i:to('opencl') * 3 - 7):cpu():tolist(), (i * 3 - 7):tolist())
  test.eq((i:to('opencl') // 7):cpu():tolist(), (i // 7):tolist())
  test.eq((i:to('opencl') % 7):cpu():tolist(), (i % 7):tolist())
  test.raises(function() return i:to('opencl') // lm.zeros(6, 5):int():to('opencl') end, 'integer division by zero')
  local l = lm.randint(-1000, 1000, {9}):long()
  test.eq(l:to('opencl'):abs():cpu():tolist(), l:abs():tolist())
  -- empty and size-1
  test.eq((lm.zeros(0, 3):to('opencl') + 1):cpu():size(), {0, 3})
  test.eq((lm.ones(1):to('opencl') * 5):cpu():item(), 5)
  -- what it lacks says so
  test.raises(function() return lm.randn(4):to('opencl'):sort() end, 'the opencl device has no sort loop')
end)

test.case('reductions, matmul and softmax on OpenCL match the CPU', function()
  if not need() then return end
  lm.manual_seed(5)
  for trial = 1, 5 do
    local s = {math.random(1, 6), math.random(1, 70), math.random(1, 5)}
    local x = lm.randn(s[1], s[2], s[3])
    local d = x:to('opencl')
    for _, dim in ipairs{1, 2, 3} do
      test.near(maxdiff(d:sum(dim), x:sum(dim)), 0, 1e-4)
      test.near(maxdiff(d:mean(dim), x:mean(dim)), 0, 1e-5)
      test.near(maxdiff(d:amax(dim), x:amax(dim)), 0, 0)
      test.eq(d:argmax(dim):cpu():tolist(), x:argmax(dim):tolist())
      if s[dim] > 1 then test.near(maxdiff(d:std(dim), x:std(dim)), 0, 1e-5) end
      test.near(maxdiff(d:softmax(dim), x:softmax(dim)), 0, 1e-6)
      test.near(maxdiff(d:log_softmax(dim), x:log_softmax(dim)), 0, 1e-5)
    end
    test.near(maxdiff(d:norm(), x:norm()), 0, 1e-4)
    local m, k, n = math.random(1, 40), math.random(1, 33), math.random(1, 29)
    local a, b = lm.randn(3, m, k), lm.randn(k, n) -- a batch against one matrix
    test.near(maxdiff(a:to('opencl'):matmul(b:to('opencl')), a:matmul(b)), 0, 1e-4)
    test.near(maxdiff(a:to('opencl'):transpose(2, 3):matmul(lm.randn(3, m, 2):to('opencl')):cpu(),
                      a:transpose(2, 3):matmul(lm.randn(3, m, 2))), 0, math.huge) -- shapes chain
  end
  local xi = lm.randint(0, 9, {4, 11}):long()
  test.eq(xi:to('opencl'):sum(2):cpu():tolist(), xi:sum(2):tolist())
end)

test.case('training on OpenCL: the same losses as on the CPU', function()
  if not need() then return end
  local function run(device)
    lm.manual_seed(11)
    local model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    model:to(device)
    local opt = optim.Adam(model:parameters(), {lr = 0.02})
    local x, y = lm.randn(32, 6):to(device), lm.randint(1, 4, {32}):long():to(device)
    local losses = {}
    for step = 1, 15 do
      opt:zero_grad()
      local loss = F.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
      losses[step] = loss:item()
    end
    return losses
  end
  local cpu, ocl = run('cpu'), run('opencl')
  for i = 1, #cpu do test.near(ocl[i], cpu[i], 1e-4) end
  test.ok(ocl[#ocl] < ocl[1] - 0.1, 'the loss falls')
end)

test.case('a small CNN with an embedding-free head trains on OpenCL as on the CPU', function()
  if not need() then return end
  local function run(device)
    lm.manual_seed(5)
    local model = nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    model:to(device)
    local opt = optim.SGD(model:parameters(), {lr = 0.05, momentum = 0.9})
    local x, y = lm.randn(8, 1, 8, 8):to(device), lm.randint(1, 4, {8}):long():to(device)
    local losses = {}
    for step = 1, 8 do
      opt:zero_grad()
      local loss = F.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
      losses[step] = loss:item()
    end
    return losses
  end
  local cpu, ocl = run('cpu'), run('opencl')
  for i = 1, #cpu do test.near(ocl[i], cpu[i], 1e-4) end
  -- gather and an out-of-range index, worded as the CPU's
  local x = lm.randn(4, 5)
  local idx = lm.tensor({{1, 2}, {5, 4}, {3, 3}, {1, 1}}):long()
  test.eq(x:to('opencl'):gather(2, idx:to('opencl')):cpu():tolist(), x:gather(2, idx):tolist())
end)

test.case("the course's kernels with backend = 'opencl' equal the CPU's", function()
  if not need() then return end
  lm.manual_seed(7)
  for _, n in ipairs{1, 37, 1000, 4099} do
    local x = lm.randn(n)
    for _, algo in ipairs{'naive', 'convergent', 'shared', 'coarsened'} do
      local y, info = kernels.reduce(x, {backend = 'opencl', algo = algo})
      test.near(y:item(), x:sum():item(), 1e-3 * math.sqrt(n))
      test.eq(info.source, 'opencl')
      test.ok(info.impl:find('^opencl: reduce_'), info.impl)
      test.ok(info.label:find('measured by events', 1, true), info.label)
      test.ok(info.counters.time_ms >= 0)
    end
    for _, algo in ipairs{'kogge-stone', 'brent-kung', 'hierarchical'} do
      local y = kernels.scan(x, {backend = 'opencl', algo = algo})
      test.near(maxdiff(y, x:cumsum(1)), 0, 1e-4 * math.sqrt(n) + 1e-5)
      local ye = kernels.scan(x, {backend = 'opencl', algo = algo, inclusive = false})
      test.near(maxdiff(ye, kernels.scan(x, {backend = 'cpu', inclusive = false})), 0, 1e-4 * math.sqrt(n) + 1e-5)
    end
  end
  local data = lm.randint(0, 19, {3001}):byte()
  for _, algo in ipairs{'global-atomic', 'privatized', 'aggregated'} do
    local h = kernels.histogram(data, 19, {backend = 'opencl', algo = algo})
    test.eq(h:tolist(), kernels.histogram(data, 19, {backend = 'cpu'}):tolist())
  end
  local a, b = lm.randn(45, 31), lm.randn(31, 18)
  for _, algo in ipairs{'naive', 'tiled'} do
    test.near(maxdiff(kernels.matmul(a, b, {backend = 'opencl', algo = algo}), a:matmul(b)), 0, 1e-4)
    test.near(maxdiff(kernels.matmul(a:double(), b:double(), {backend = 'opencl', algo = algo}),
                      a:double():matmul(b:double())), 0, 1e-12)
  end
  local img, mask = lm.randn(29, 41), lm.randn(5, 3)
  for _, algo in ipairs{'naive', 'constant', 'tiled-input', 'tiled-output'} do
    test.near(maxdiff(kernels.conv2d(img, mask, {backend = 'opencl', algo = algo}),
                      kernels.conv2d(img, mask, {backend = 'cpu'})), 0, 1e-5)
  end
  local A = lm.randn(23, 17) * lm.rand(23, 17):lt(0.3):float()
  local v = lm.randn(17)
  for _, fmt in ipairs{'coo', 'csr', 'ell', 'jds'} do
    test.near(maxdiff(kernels.spmv(kernels.sparse(A), v, {backend = 'opencl', format = fmt}), A:matmul(v)), 0, 1e-5)
  end
  test.raises(function() return kernels.divergence{backend = 'opencl'} end, "")
end)

local VADD = [[
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n)
{
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
]]

test.case("kernels.opencl: a student's kernel, its results and its timing", function()
  if not need() then return end
  for _, n in ipairs{1, 63, 64, 1000} do
    local a, b, c = lm.randn(n), lm.randn(n), lm.zeros(n)
    local g = math.ceil(n / 64) * 64
    local info = kernels.opencl(VADD, {global = g, ['local'] = 64, args = {a, b, c, n}, repeats = 3})
    test.near(maxdiff(c, a + b), 0, 0)
    test.eq(info.kernel, 'vadd')
    test.ok(info.time_ms >= 0 and info.compile_ms >= 0)
    test.ok(info.label:find('measured by events', 1, true))
  end
  -- the second build of a source comes from the cache
  test.eq(kernels.opencl(VADD, {global = 1, args = {lm.zeros(1), lm.zeros(1), lm.zeros(1), 1}}).cached, true)
  -- const tensors are not written back; repeats start from the arguments as given
  local acc = [[__kernel void acc(__global float *x, __global const float *y) { x[get_global_id(0)] += y[get_global_id(0)]; }]]
  local x, y = lm.ones(8), lm.ones(8)
  kernels.opencl(acc, {global = 8, args = {x, y}, repeats = 5})
  test.eq(x:tolist(), lm.full({8}, 2):tolist())
  test.eq(y:tolist(), lm.ones(8):tolist())
  -- OpenCL tensors, non-contiguous CPU tensors and __local memory
  local m = lm.randn(6, 4)
  local mt = m:t() -- strided
  local out = lm.zeros(4, 6):to('opencl')
  kernels.opencl([[__kernel void cp(__global const float *s, __global float *d, __local float *tmp) {
    int i = get_global_id(0); tmp[get_local_id(0)] = s[i] * 2; barrier(CLK_LOCAL_MEM_FENCE); d[i] = tmp[get_local_id(0)]; }]],
    {global = 24, ['local'] = 8, args = {mt, out, {local_bytes = 32}}})
  test.eq(out:cpu():tolist(), (mt * 2):tolist())
end)

test.case('kernels.opencl: bad input gets a clear error', function()
  if not need() then return end
  local a, b, c = lm.randn(100), lm.randn(100), lm.zeros(100)
  test.raises(function() kernels.opencl(VADD, {global = 100, ['local'] = 64, args = {a, b, c, 100}}) end,
    'local size 64 does not divide global size 100 in dimension 0 %(get_global_id%(0%)%): OpenCL counts global in work%-items, not groups: round it up to 128 %(and guard the work%-items past the end%), or, if 100 was a count of groups, give 6400')
  test.raises(function() kernels.opencl(VADD, {global = 1 << 20, ['local'] = 1 << 20, args = {a, b, c, 100}}) end,
    'exceeds the device')
  test.raises(function() kernels.opencl(VADD, {global = 128, args = {a, b, c:double(), 100}}) end,
    'argument 3 %(float%* c%) wants a float32 tensor, got float64')
  test.raises(function() kernels.opencl(VADD, {global = 128, args = {a, b, c}}) end, "kernel 'vadd' takes 4 arguments, 3 given")
  test.raises(function() kernels.opencl(VADD, {global = 128, args = {a, b, c, 2.5}}) end, 'argument 4 %(int n%) is 2.5')
  test.raises(function() kernels.opencl(VADD, {global = 128, args = {a, b, 7, 100}}) end, 'pass a tensor')
  test.raises(function() kernels.opencl(VADD, {global = 0, args = {a, b, c, 100}}) end, 'global size 0 in dimension 0')
  test.raises(function() kernels.opencl(VADD, {args = {a, b, c, 100}}) end, 'option global is required')
  test.raises(function() kernels.opencl(VADD, {global = 128, lcoal = 4, args = {}}) end, 'unknown option lcoal')
  test.raises(function() kernels.opencl(VADD, {global = 128, kernel = 'nope', args = {a, b, c, 100}}) end,
    "the program has no kernel 'nope'")
  local ok, err = pcall(kernels.opencl, '__kernel void f(__global float *x)\n{\n  x[0] = undefined_name;\n}\n',
    {global = 1, args = {c}})
  test.ok(not ok)
  test.ok(err:find('does not compile', 1, true), err)
  test.ok(err:find('<source>:3:', 1, true), err)
  test.ok(err:find('    3 |   x[0] = undefined_name;', 1, true), err)
  test.raises(function() kernels.opencl('__kernel void f() {}\n__kernel void g() {}', {global = 1}) end,
    "the source defines 2 kernels %('f', 'g'%)")
end)
