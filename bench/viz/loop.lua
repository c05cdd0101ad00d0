--[[
bench/viz/loop.lua MODE — a training-like loop (a two-layer MLP's forward and backward on a batch,
tensor ops through autograd) and a pure Lua loop, timed; MODE: 'none' (no window), 'idle' (a
visible window open: the event pump runs from the Lua hook every 40 ms), 'play' (the window
animating at 60 frames a second while the loop runs). bench/viz/run.sh runs it under Xvfb.
Prints: MODE train_ms lua_ms frames
]]
local mode = arg[1] or 'none'
local ITER = tonumber(os.getenv('ITER') or '2000')
if mode ~= 'none' then
  viz.scene('histogram', { input = 'random', n = 8192, bins = 64, block = 32, speed = 20 })
  assert(not viz.state().offscreen, 'bench/viz/loop.lua needs a display (run it under Xvfb)')
  for _ = 1, 5 do viz.pump() end -- the first frame is drawn before the clock starts
  if mode == 'play' then viz.play() end
end
lm.manual_seed(0)
local x = lm.randn(128, 256)
local w1 = lm.randn(256, 256, { requires_grad = true })
local w2 = lm.randn(256, 10, { requires_grad = true })
local t0 = lm.sys.clock()
for _ = 1, ITER do
  local h = x:matmul(w1):relu()
  local y = h:matmul(w2)
  local loss = (y * y):mean()
  loss:backward()
end
local train = (lm.sys.clock() - t0) * 1e3
t0 = lm.sys.clock()
local s = 0
for i = 1, tonumber(os.getenv('LUAITER') or '20000000') do s = s + i % 7 end
local pure = (lm.sys.clock() - t0) * 1e3
local st = mode ~= 'none' and viz.state() or { step = 0 }
print(string.format('%s %.1f %.1f %d', mode, train, pure, st.step))
viz.close()
