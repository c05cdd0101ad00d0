-- aics/04-framework beyond its walk (tests/lessons walks the steps, their expect and the shipped
-- wrong answers): each exercise's check refuses more plausible mistakes than the lesson ships,
-- and accepts right answers written another way.
local test = require 'lumen.test'

local function opened()
  local env = setmetatable({}, { __index = _G })
  lesson.open('aics/04-framework', { env = env, quiet = true, record = false })
  return env
end

-- the verdict of `code` at step n, in a fresh environment where steps 1..n ran as written
local function verdict(n, code)
  opened()
  lesson.step(n)
  assert(lesson.run())
  if code then
    local ok, out = lesson.run(code)
    assert(ok, out)
  end
  return (lesson.check())
end

test.case('aics/04-framework step 3: predictions of the kernels of head(a, b)', function()
  test.ok(verdict(3, "loops = {'fill', 'binary', 'binary', 'unary', 'reduce_dims'}"))
  for _, wrong in ipairs({
    "loops = {'fill', 'binary', 'binary', 'unary'}",                          -- the sum forgotten
    "loops = {'fill', 'binary', 'binary', 'unary', 'reduce'}",                -- not a loop's name
    "loops = {'binary', 'fill', 'binary', 'unary', 'reduce_dims'}",           -- the fill after the mul
    "loops = {'fill', 'binary', 'fill', 'binary', 'unary', 'reduce_dims'}",   -- a fill for b too
    "loops = {'fill', 'binary', 'binary', 'unary', 'reduce_dims', 'view'}",   -- the view counted last
    "loops = {'fill', 'matmul', 'binary', 'unary', 'reduce_dims'}",
    "loops = 5",
  }) do
    test.eq(verdict(3, wrong), false, wrong)
  end
end)

test.case('aics/04-framework step 6: scaled(x) compiled without a break', function()
  test.ok(verdict(6, 'function scaled(x) return (x / x:abs():max()):matmul(W):relu() end'))
  test.ok(verdict(6, 'function scaled(x) return lm.relu((x * (1 / x:abs():max())):matmul(W)) end'))
  for _, wrong in ipairs({
    'function scaled(x) return (x / x:abs():max()):matmul(W) end',                         -- no ReLU
    'function scaled(x) return (x / 3.5):matmul(W):relu() end',                            -- a constant
    'function scaled(x) return (x / x:abs():max(1, true)):matmul(W):relu() end',           -- per column
    'function scaled(x) print(x) return (x / x:abs():max()):matmul(W):relu() end',         -- a break
    'function scaled(x) return (x / x:abs():max()[1]):matmul(W):relu() end',
    'local k = 0 function scaled(x) k = k + 1 return (x / x:abs():max()):matmul(W):relu() * k end',
  }) do
    test.eq(verdict(6, wrong), false, wrong)
  end
end)

test.case('aics/04-framework step 7: roundtrip(model, path) through the file', function()
  test.ok(verdict(7, [[function roundtrip(model, path)
    lm.save(path, model:state_dict())
    local m = make_model()
    m:load_state_dict(lm.load(path))
    return m
  end]]))
  for _, wrong in ipairs({
    -- never saved: loaded from the model itself
    'function roundtrip(model, path) local m = make_model(); m:load_state_dict(model:state_dict()); return m end',
    -- the parameters' array saved: no names
    'function roundtrip(model, path) lm.save(path, model:parameters()); local m = make_model(); m:load_state_dict(lm.load(path)); return m end',
    -- nothing returned
    'function roundtrip(model, path) lm.save(path, model:state_dict()); local m = make_model(); m:load_state_dict(lm.load(path)) end',
    -- the right new model made, the old one returned
    'function roundtrip(model, path) lm.save(path, model:state_dict()); local m = make_model(); m:load_state_dict(lm.load(path)); return model end',
    -- saved to another file
    'function roundtrip(model, path) local p = os.tmpname(); lm.save(p, model:state_dict()); local m = make_model(); m:load_state_dict(lm.load(p)); os.remove(p); return m end',
  }) do
    test.eq(verdict(7, wrong), false, wrong)
  end
end)
