--[[
bench/viz/train.lua [--viz] — one epoch of examples/mlp_fashion.lua (784-256-10, batch 128, 2
threads), the training loop's seconds as the example measures them (history[1].seconds: batches,
forward, backward, SGD; not the data loading or the evaluation); with --viz the example plots its
curves into a visible window (run under Xvfb: bench/viz/run.sh), redrawn from the Lua hook at most
10 times a second. Prints: MODE seconds frames
]]
local root = (debug.getinfo(1, 'S').source:match('^@(.*)/bench/viz/') or '.')
local mode = arg[1] == '--viz' and 'viz' or 'none'
arg = { [0] = root .. '/examples/mlp_fashion.lua', '--epochs', '1', '--quiet', '--threads', '2' }
if mode == 'viz' then arg[#arg + 1] = '--viz' end
dofile(root .. '/examples/mlp_fashion.lua')
local st = viz.state()
if mode == 'viz' then assert(not st.offscreen, 'bench/viz/train.lua --viz needs a display (run it under Xvfb)') end
print(string.format('%s %.4f %s', mode, history[1].seconds, st.scene or '-'))
viz.close()
