--[[
bench/viz/train.lua [--viz] — six epochs of examples/mlp_fashion.lua (784-256-10, batch 128, 2
threads), the training loop's seconds as the example measures them (history[e].seconds: batches,
forward, backward, SGD; not the data loading or the evaluation); with --viz the example plots its
curves into a visible window (run under Xvfb: bench/viz/run.sh), redrawn from the Lua hook at most
10 times a second and a frame's time x 300 apart (under llvmpipe a curves frame costs 8-11 ms, so
one comes every 2.5-3.3 s: a window of one 0.3 s epoch holds a whole frame or none). As bench/train, the epoch is the
mean of the epochs after the first (a fresh process's first also warms the allocator's cache and
the caches), here over 5 epochs (~2 s of training), the first shown too.
Prints: MODE seconds scene first_epoch_seconds
]]
local root = (debug.getinfo(1, 'S').source:match('^@(.*)/bench/viz/') or '.')
local mode = arg[1] == '--viz' and 'viz' or 'none'
arg = { [0] = root .. '/examples/mlp_fashion.lua', '--epochs', '6', '--quiet', '--threads', '2' }
if mode == 'viz' then arg[#arg + 1] = '--viz' end
dofile(root .. '/examples/mlp_fashion.lua')
local st = viz.state()
if mode == 'viz' then assert(not st.offscreen, 'bench/viz/train.lua --viz needs a display (run it under Xvfb)') end
local rest = 0
for e = 2, #history do rest = rest + history[e].seconds end
print(string.format('%s %.4f %s %.4f', mode, rest / (#history - 1), st.scene or '-', history[1].seconds))
viz.close()
