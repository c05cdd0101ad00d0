-- The op table (issue 30.6): lm.ops() and `lumen --ops` come from the engine's one list of ops,
-- with the device loop each op runs, its backward rule, and the dtypes each device runs it for
-- (the CUDA column is what the CUDA backend implements, GPU or not).
local test = require 'lumen.test'

local function by_name()
  local t = {}
  for _, o in ipairs(lm.ops()) do t[o.name] = o end
  return t
end

test.case('lm.ops(): every op, its rule, its loop and the dtypes per device', function()
  local ops = lm.ops()
  test.ok(#ops >= 90, #ops .. ' ops')
  local o = by_name()
  test.eq({ o.exp.backward, o.exp.loop, o.exp.arity }, { 'ExpBackward', 'unary', 1 })
  test.eq(o.exp.devices.cpu, { 'float32', 'float64', 'int32', 'int64', 'uint8', 'int8', 'float16', 'bfloat16' },
    'exp of an integer runs in float32; the 16-bit floats and int8 in the float32 and int32 loops')
  test.eq(o.exp.devices.cuda, { 'float32', 'float64', 'int32', 'int64', 'uint8' }, 'the 16-bit types live on the CPU')
  test.eq(o.softmax.devices.cpu, { 'float32', 'float64', 'float16', 'bfloat16' })
  test.eq(o.eq.backward, nil, 'a comparison has no backward rule')
  test.eq(o.sum.params, { 'dim', 'keepdim' })
  test.eq(o.var.params, { 'dim', 'keepdim', 'correction' })
  test.eq(o.view.loop, 'view')
  test.eq(o.cat.loop, 'copy')
  test.eq(o.cat.arity, -1)
  test.eq(o.one_hot.devices.cpu, { 'int32', 'int64' })
  test.eq(o.count_correct.devices.cuda, {}, 'the CUDA backend has no count_correct loop: the gap is shown')
  test.eq(o.matmul.devices.cuda, { 'float32', 'float64', 'int32', 'int64', 'uint8' })
  for _, op in ipairs(ops) do
    test.ok(type(op.name) == 'string' and type(op.loop) == 'string' and type(op.dtypes) == 'string', op.name)
    test.ok(#op.devices.cpu >= 1, op.name .. ' runs on the cpu')
  end
  -- grad_fn names what lm.ops lists
  local x = lm.ones(2, { requires_grad = true })
  test.eq(o[x:exp().grad_fn.op].backward, 'ExpBackward')
end)

test.case('lumen --ops prints the table', function()
  local exe = assert(lm.sys.executable())
  local p = io.popen("'" .. exe .. "' --ops 2>&1")
  local out = p:read('a')
  local _, _, rc = p:close()
  test.eq(rc, 0)
  test.ok(out:find("^Lumen's ops: %d+, %d+ with a backward rule"), out:sub(1, 200))
  local lines = 0
  for _, op in ipairs(lm.ops()) do
    test.ok(out:find('\n' .. op.name:gsub('%p', '%%%0') .. ' +'), op.name .. ' has its line')
    lines = lines + 1
  end
  test.ok(out:find('\ncount_correct +%- +count_correct +f32 f64 f16 bf16 +%- +%-\n'), 'the cuda and opencl gap of count_correct')
  test.ok(out:find('\nexp +ExpBackward +unary +all +all +all\n'), 'exp on every dtype, every device')
  test.ok(out:find('\nsort +SortBackward +sort +all +all +%-\n'), 'sort: not on opencl')
  test.ok(lines >= 90)
end)
