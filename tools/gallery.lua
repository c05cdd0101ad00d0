--[[
tools/gallery.lua OUTDIR — the gallery's pictures that need a program rather than scene options
(tools/gallery.sh runs it): the model scene of a small CNN after 16 SGD steps on Fashion-MNIST
with the histograms of one more step (viz.watch), and the autograd graph of a perceptron's loss
on a real batch with its per-node gradcheck, halfway through backward. Seeded, one thread: the same
run writes the same bytes.
]]
local out = assert(arg[1], 'usage: lumen --headless tools/gallery.lua OUTDIR')
lm.set_num_threads(1)
lm.manual_seed(5)
local ds = data.FashionMNIST { split = 'train', limit = 1024 }
local loader = data.DataLoader(ds, { batch_size = 64, shuffle = true, seed = 5 })
local crit = nn.CrossEntropyLoss()

-- the model: two conv layers with their filters, and the histograms of a step of training
local model = nn.Sequential(nn.Conv2d(1, 8, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
  nn.Conv2d(8, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
local opt = optim.SGD(model:parameters(), { lr = 0.1 })
local batches = {}
for x, y in loader:iter() do batches[#batches + 1] = { x, y } end
for i = 1, #batches - 1 do
  opt:zero_grad()
  crit(model(batches[i][1]), batches[i][2]):backward()
  opt:step()
end
viz.open { width = 1280, height = 720 }
local watch = viz.watch(model, { always = true })
opt:zero_grad()
crit(model(batches[#batches][1]), batches[#batches][2]):backward()
watch:gradients()
watch:close()
viz.seek(4)
viz.snapshot(out .. '/model.png')

-- the graph: a 784-16-10 perceptron's loss on 8 images, in float64, checked node by node
local x, y = batches[1][1]:narrow(1, 1, 8):flatten(2):double(), batches[1][2]:narrow(1, 1, 8)
local function param(...) return (lm.randn(...):double() * 0.1):requires_grad_() end
local w1, b1, w2, b2 = param(784, 16), param(16), param(16, 10), param(10)
local function loss(w1_, b1_, w2_, b2_) return F.cross_entropy((x:matmul(w1_) + b1_):relu():matmul(w2_) + b2_, y) end
viz.show(loss(w1, b1, w2, b2), { gradcheck = loss, inputs = { w1, b1, w2, b2 } })
viz.seek(4)
viz.snapshot(out .. '/graph.png')
