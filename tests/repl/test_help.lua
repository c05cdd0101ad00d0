-- The REPL's Lua side: a help entry for every function of docs/API.md and every built function,
-- honest about what is not built; completion of globals, fields, methods, commands and file
-- names without running user code; how results are formatted.
local test = require 'lumen.test'
local H = require 'lumen.help'
local repl = require 'lumen.repl'

-- Every name of docs/API.md (the contract), as :help knows it.
local api = {
  'lm.tensor', 'lm.zeros', 'lm.ones', 'lm.full', 'lm.empty', 'lm.arange', 'lm.linspace', 'lm.eye',
  'lm.rand', 'lm.randn', 'lm.randint', 'lm.manual_seed',
  'Tensor:shape', 'Tensor:size', 'Tensor:dim', 'Tensor:numel', 'Tensor:dtype', 'Tensor:device',
  'Tensor:stride', 'Tensor:is_contiguous', 'Tensor:item', 'Tensor:tolist',
  'Tensor:view', 'Tensor:reshape', 'Tensor:t', 'Tensor:transpose', 'Tensor:permute', 'Tensor:narrow',
  'Tensor:select', 'Tensor:expand', 'Tensor:squeeze', 'Tensor:unsqueeze', 'Tensor:flatten',
  'Tensor:contiguous', 'Tensor:clone', 'Tensor:detach',
  'Tensor:add', 'Tensor:sub', 'Tensor:mul', 'Tensor:div', 'Tensor:pow', 'lm.matmul', 'Tensor:matmul',
  'Tensor:mm', 'Tensor:add_', 'Tensor:mul_', 'Tensor:fill_', 'Tensor:zero_', 'Tensor:copy_',
  'Tensor:uniform_', 'Tensor:normal_',
  'Tensor:exp', 'Tensor:log', 'Tensor:sqrt', 'Tensor:abs', 'Tensor:neg', 'Tensor:sin', 'Tensor:cos',
  'Tensor:tanh', 'Tensor:sigmoid', 'Tensor:relu', 'Tensor:clamp', 'Tensor:sign', 'Tensor:floor',
  'Tensor:ceil', 'Tensor:round', 'Tensor:eq', 'Tensor:ne', 'Tensor:gt', 'Tensor:lt', 'Tensor:ge',
  'Tensor:le', 'lm.where', 'lm.maximum', 'lm.minimum',
  'Tensor:sum', 'Tensor:mean', 'Tensor:var', 'Tensor:std', 'Tensor:max', 'Tensor:min',
  'Tensor:argmax', 'Tensor:argmin', 'Tensor:prod', 'Tensor:norm',
  'lm.cat', 'lm.stack', 'Tensor:index_select', 'Tensor:gather', 'Tensor:masked_fill', 'Tensor:sort',
  'Tensor:topk',
  'Tensor:float', 'Tensor:double', 'Tensor:int', 'Tensor:long', 'Tensor:byte', 'Tensor:char', 'Tensor:half', 'Tensor:bfloat16', 'Tensor:to',
  'Tensor:cuda', 'Tensor:cpu', 'lm.cuda.is_available', 'lm.cuda.device_name',
  'lm.save', 'lm.load', 'lm.load_npy', 'lm.save_npy',
  'Tensor:requires_grad_', 'Tensor.requires_grad', 'Tensor.grad', 'Tensor:backward', 'lm.no_grad',
  'Tensor.grad_fn', 'lm.autograd.gradcheck',
  'F.linear', 'F.conv2d', 'F.max_pool2d', 'F.avg_pool2d', 'F.relu', 'F.leaky_relu', 'F.gelu',
  'F.sigmoid', 'F.tanh', 'F.softmax', 'F.log_softmax', 'F.cross_entropy', 'F.nll_loss', 'F.mse_loss',
  'F.binary_cross_entropy', 'F.dropout', 'F.layer_norm', 'F.batch_norm', 'F.embedding', 'F.pad',
  'nn.Module', 'nn.Module:forward', 'nn.Module:parameters', 'nn.Module:named_parameters',
  'nn.Module:children', 'nn.Module:train', 'nn.Module:eval', 'nn.Module:zero_grad',
  'nn.Module:state_dict', 'nn.Module:load_state_dict', 'nn.Module:to',
  'nn.Sequential', 'nn.Linear', 'nn.Conv2d', 'nn.MaxPool2d', 'nn.AvgPool2d', 'nn.ReLU', 'nn.Sigmoid',
  'nn.Tanh', 'nn.GELU', 'nn.Flatten', 'nn.Dropout', 'nn.BatchNorm1d', 'nn.BatchNorm2d',
  'nn.LayerNorm', 'nn.Embedding', 'nn.Residual', 'nn.Identity', 'nn.RNN', 'nn.LSTM',
  'nn.MultiheadAttention', 'nn.TransformerEncoderLayer', 'nn.CrossEntropyLoss', 'nn.MSELoss',
  'nn.NLLLoss', 'nn.BCELoss', 'nn.init.kaiming_uniform_', 'nn.init.xavier_uniform_',
  'nn.init.normal_', 'nn.init.zeros_',
  'optim.SGD', 'optim.Adam', 'optim.AdamW', 'optim.Optimizer:step', 'optim.Optimizer:zero_grad',
  'optim.lr_scheduler.StepLR', 'optim.lr_scheduler.CosineAnnealingLR',
  'data.FashionMNIST', 'data.MNIST', 'data.TensorDataset', 'data.DataLoader', 'data.DataLoader:iter',
  'kernels.reduce', 'kernels.scan', 'kernels.histogram', 'kernels.matmul', 'kernels.conv2d',
  'kernels.spmv', 'kernels.sparse', 'kernels.divergence', 'kernels.streams',
  'viz.open', 'viz.close', 'viz.show', 'viz.scene', 'viz.plot', 'viz.snapshot', 'viz.is_open',
  'viz.step', 'viz.play', 'viz.pause',
  'lesson.list', 'lesson.open', 'lesson.step', 'lesson.next', 'lesson.prev', 'lesson.run',
  'lesson.check',
}

-- Captures what fn prints.
local function printed(fn, ...)
  local out, old = {}, _G.print
  _G.print = function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    out[#out + 1] = table.concat(t, '\t')
  end
  local ok, err = pcall(fn, ...)
  _G.print = old
  if not ok then error(err, 0) end
  return table.concat(out, '\n')
end

test.case('every name of API.md has a signature and a paragraph', function()
  for _, name in ipairs(api) do
    local e = H.entries[name]
    test.ok(e, 'no help for ' .. name)
    test.ok(type(e.sig) == 'string' and #e.sig > 0, name .. ': signature')
    test.ok(type(e.doc) == 'string' and #e.doc > 10, name .. ': doc')
  end
end)

test.case('every built function can be looked up', function()
  local function each(t, prefix, sep)
    for k, v in pairs(t) do
      if type(v) == 'function' and type(k) == 'string' and k:sub(1, 1) ~= '_' then
        local key = H.lookup(prefix .. sep .. k)
        test.ok(key, 'no help for ' .. prefix .. sep .. k)
      end
    end
  end
  each(lm, 'lm', '.')
  each(lm.Tensor, 'Tensor', ':')
  each(lm.nn.functional, 'F', '.')
  each(lm.cuda, 'lm.cuda', '.')
  each(lm.sys, 'lm.sys', '.')
  each(lm.autograd, 'lm.autograd', '.')
  for _, m in ipairs({ 'nn', 'optim', 'data', 'kernels', 'viz', 'lesson' }) do
    local t = rawget(_G, m)
    if type(t) == 'table' then each(t, m, '.') end
  end
end)

test.case('entries of what is not built say so; built ones do not', function()
  local text = printed(H.show, 'lm.zeros', repl)
  test.ok(text:find('lm.zeros(d1, d2', 1, true), text)
  test.ok(not text:find('not available', 1, true), text)
  for _, name in ipairs(api) do
    local ok = H.available(name)
    text = printed(H.show, name, repl)
    test.eq(text:find('Not available yet', 1, true) ~= nil, not ok, name .. ': ' .. text)
  end
  -- a module that is not built is named; so is a function missing from a built module
  if not rawget(_G, 'nn') then
    text = printed(H.show, 'nn.Linear', repl)
    test.ok(text:find("Not available yet: the 'nn' module is not built", 1, true), text)
  end
  if not rawget(lm, 'save') then
    text = printed(H.show, 'lm.save', repl)
    test.ok(text:find('Not available yet in this version of Lumen', 1, true), text)
  end
end)

test.case('lookup aliases', function()
  test.eq(H.lookup('lumen.zeros'), 'lm.zeros')
  test.eq(H.lookup('lm.zeros()'), 'lm.zeros')
  test.eq(H.lookup('lm.nn.functional.conv2d'), 'F.conv2d')
  test.eq(H.lookup('lm.sin'), 'Tensor:sin')
  test.eq(H.lookup('x:matmul'), 'Tensor:matmul') -- x unknown: a method name is enough
  test.eq(H.lookup('zeros'), 'lm.zeros')
  test.eq(H.lookup('x:maximum'), 'lm.maximum')
  test.eq(H.lookup('x:sqrt_'), 'Tensor:sqrt')
  test.eq(H.lookup('Tensor:exp_'), 'Tensor:exp')
  local key, hits = H.lookup('relu')
  test.eq(key, nil)
  test.eq(hits, { 'F.relu', 'Tensor:relu' })
  test.eq(H.lookup('no_such_thing'), nil)
  local text = printed(H.show, 'nn', repl)
  test.ok(text:find('nn.Linear(in, out', 1, true), text)
  text = printed(H.show, ':time', repl)
  test.ok(text:find(':time EXPR', 1, true), text)
end)

test.case('a misspelled name: did you mean the right one?', function()
  local function said(name) return printed(H.show, name, repl) end
  test.eq(said('lm.zeroes'), "no help for 'lm.zeroes'; did you mean lm.zeros?")
  test.eq(said('kernels.histgram'), "no help for 'kernels.histgram'; did you mean kernels.histogram?")
  test.ok(said('nn.linear'):find('did you mean nn.Linear?', 1, true), 'case')
  test.ok(said('kernel.scan'):find('did you mean kernels.scan?', 1, true), 'the module misspelled')
  test.ok(said('x:matmull'):find('did you mean Tensor:matmul?', 1, true), 'a method of a tensor')
  test.ok(said('zeroes'):find('did you mean lm.zeros?', 1, true), 'a bare name')
  test.ok(said('string.frmat'):find('did you mean string.format?', 1, true), "a table's own keys")
  rawset(_G, 'repl_test_t', { learning_rate = 0.1 })
  test.ok(said('repl_test_t.learnig_rate'):find('did you mean repl_test_t.learning_rate?', 1, true),
    "a user's table")
  rawset(_G, 'repl_test_t', nil)
  test.eq(said('qqqqqq'), "no help for 'qqqqqq'; :help lists the topics", 'nothing near: no guess')
  test.eq(H.suggest('lm.ones'), {}, 'an exact name is no suggestion')
end)

test.case('a table: :help lists what is in it, entries by their signature', function()
  local function said(name) return printed(H.show, name, repl) end
  -- a user's table: values, functions with their parameters, tables, tensors, the array part;
  -- never a metamethod of the values
  local trap = setmetatable({}, { __index = function() error('user code ran') end,
    __tostring = function() error('user code ran') end })
  rawset(_G, 'repl_test_t', { 10, 20, rate = 0.5, name = 'mlp', step = function(x, y) end, trap = trap,
    w = lm.zeros(2, 3), _private = 1 })
  function repl_test_t:fit(data, ...) end
  local text = said('repl_test_t')
  rawset(_G, 'repl_test_t', nil)
  test.ok(text:find('^repl_test_t %(a table of 8 fields%)'), text)
  for _, line in ipairs({ 'repl_test_t[1..2]  10, 20', 'repl_test_t.rate = 0.5', 'repl_test_t.name = "mlp"',
    'repl_test_t.step(x, y)', 'repl_test_t:fit(data, ...)', 'repl_test_t.trap  (a table of 0 fields',
    'repl_test_t.w  (a float32 tensor of shape [2, 3])' }) do
    test.ok(text:find('\n  ' .. line, 1, true), line .. ' in ' .. text)
  end
  test.ok(not text:find('_private', 1, true), 'internals (_x) are not listed')
  -- Lumen's tables without a topic list their entries' signatures and the rest
  text = said('kernels.puzzles')
  test.ok(text:find('kernels.puzzles.check(n, fn', 1, true), text)
  test.ok(text:find('kernels.puzzles.count = ', 1, true), text)
  text = said('math')
  test.ok(text:find('\n  math.floor(...)\n', 1, true) and text:find('math.pi = 3.14', 1, true), text)
  -- topics list their entries and what the live table holds beyond them
  text = said('kernels')
  test.ok(text:find('kernels.histogram(bytes_or_tensor', 1, true), text)
  test.ok(text:find('kernels.puzzles  (a table of', 1, true), text)
  text = said('nn')
  test.ok(text:find('nn.functional  (:help F)', 1, true), text)
  text = said('lm.sys')
  test.ok(text:find('lm.sys.clock() -> seconds', 1, true), text)
end)

local function has(list, s)
  for _, x in ipairs(list) do if x == s then return true end end
  return false
end

test.case('completion: globals, fields, methods, commands', function()
  local c = repl.complete('lm.ze', 0, 5)
  test.eq(c, { 'lm.zeros', 'lm.zeros_like' })
  c = repl.complete('print(lm.ze', 6, 11)
  test.eq(c, { 'lm.zeros', 'lm.zeros_like' })
  c = repl.complete('corout', 0, 6)
  test.eq(c, { 'coroutine' })
  c = repl.complete('whi', 0, 3)
  test.eq(c, { 'while' })
  rawset(_G, 'repl_test_x', lm.ones(2))
  c = repl.complete('repl_test_x:ma', 0, 14)
  for _, m in ipairs({ 'matmul', 'masked_fill', 'max', 'maximum' }) do
    test.ok(has(c, 'repl_test_x:' .. m), m)
  end
  c = repl.complete('repl_test_x.gr', 0, 14)
  test.eq(c, { 'repl_test_x.grad', 'repl_test_x.grad_fn' })
  rawset(_G, 'repl_test_x', nil)
  c = repl.complete(':he', 0, 3)
  test.eq(c, { ':help' })
  c = repl.complete(':l', 0, 2)
  test.eq(c, { ':lang', ':lesson', ':lessons' })
  c = repl.complete('x = :l', 4, 6)
  test.eq(c, {})
  c = repl.complete('("abc"):up', 7, 10)
  test.eq(c, {}) -- a method of an expression that is not a name: nothing
  c = repl.complete('string.for', 0, 10)
  test.eq(c, { 'string.format' })
end)

test.case('completion runs no user code', function()
  local calls = 0
  rawset(_G, 'repl_test_t', setmetatable({ a = 1 }, {
    __index = function() calls = calls + 1; error('user code ran') end,
  }))
  local c = repl.complete('repl_test_t.', 0, 12)
  test.eq(c, { 'repl_test_t.a' })
  c = repl.complete('repl_test_t.b.c', 0, 15)
  test.eq(c, {})
  test.eq(calls, 0)
  -- classes: fields of __index tables
  local Class = { method = function() end }
  Class.__index = Class
  rawset(_G, 'repl_test_t', setmetatable({}, Class))
  test.eq(repl.complete('repl_test_t:me', 0, 14), { 'repl_test_t:method' })
  rawset(_G, 'repl_test_t', nil)
end)

test.case('completion of file names inside strings', function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p '" .. dir .. "/sub'")
  local f = assert(io.open(dir .. '/data.txt', 'w'))
  f:close()
  f = assert(io.open(dir .. '/.hidden', 'w'))
  f:close()
  local line = 'io.open("' .. dir .. '/'
  local start = #'io.open("'
  local c = repl.complete(line, start, #line)
  test.eq(c, { dir .. '/data.txt', dir .. '/sub/' })
  c = repl.complete(line .. 'd', start, #line + 1)
  test.eq(c, { dir .. '/data.txt' })
  c = repl.complete(line .. '.', start, #line + 1)
  test.eq(c, { dir .. '/.hidden' })
  -- libedit hands over the quote itself when the cursor is right after it
  c = repl.complete("dofile('" .. dir .. '/s', 7, #("dofile('" .. dir .. '/s'))
  test.eq(c, { "'" .. dir .. '/sub/' })
  os.execute("rm -rf '" .. dir .. "'")
end)

test.case('results: tensors in full, tables on one line, strings as print shows them', function()
  test.eq(repl.format(lm.tensor({ 1, 2 })), '[1, 2]\n[int64 tensor of shape [2] on cpu]')
  test.eq(repl.format({ 1, 'two', { 3 }, k = true }), '{1, "two", {3}, k = true}')
  test.eq(repl.format('text'), 'text')
  test.eq(repl.format(nil), 'nil')
  local t = {}
  t.self = t
  test.eq(repl.format(t), '{self = {...}}')
  local big = {}
  for i = 1, 40 do big[i] = i end
  test.ok(repl.format(big):find(', ...}$'), repl.format(big))
  local bad = setmetatable({}, { __tostring = function() error('no') end })
  test.eq(repl.format(bad), '(table: __tostring failed)')
  test.eq(repl.bytes(512), '512 B')
  test.eq(repl.bytes(1536), '1.5 KiB')
  test.eq(repl.bytes(3 * 2 ^ 30), '3.0 GiB')
end)
