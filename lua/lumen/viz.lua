--[[
viz — the visualizer (docs/API.md "viz", docs/viz.md): a window (offscreen without a display)
showing the course's pictures drawn from the kernels that really ran, with every number labelled by
where it came from.

  out, info = kernels.scan(lm.arange(1, 17):float(), {backend='emu'})
  viz.show(info)             -- Kogge-Stone and Brent-Kung side by side on that input
  viz.step(); viz.play()     -- or space, arrows, Tab in the window; ? lists the keys
  viz.snapshot('scan.png')
  viz.show(y)                -- y with a grad_fn: its autograd graph, stepped backward node by node
  viz.show(x:t())            -- a tensor without one: its storage, shape, strides and offset
  viz.show(model)            -- an nn module: its layers; viz.watch(model) adds live histograms
  viz.plot('train/loss', step, loss)  or  viz.follow('run.csv')   -- live curves

The calls are C bindings (src/lua/viz.c, viz_data.c over src/viz/viz.h); this file adds what needs
the nn modules: viz.show of a module and viz.watch. Without SDL2 at build time every call but
viz.is_open says that this build has no window (viz.built is false).
Read next: docs/viz.md.
]]
local lm = require 'lumen'

local viz = lm._viz
local show = viz.show

-- The nn module system, when it is loaded (viz does not load it itself).
local function nn_module(x)
  local ok, nn = pcall(require, 'lumen.nn.module')
  return ok and nn.is_module(x) and nn or nil
end

local function numel_sum(params)
  local n = 0
  for _, p in ipairs(params) do n = n + p:numel() end
  return n
end

-- The leaf modules of m in forward order, with their paths ("1", "features.3").
local function leaves(m)
  local out = {}
  for name, sub in pairs(m:named_modules()) do
    if #sub:children() == 0 and name ~= '' then out[#out + 1] = { name = name, module = sub } end
  end
  if #out == 0 then out[1] = { name = getmetatable(m).__name or 'model', module = m } end
  return out
end

--- The description the model scene draws: layers, their parameters, Conv2d filters.
local function describe(m)
  local layers = {}
  for i, l in ipairs(leaves(m)) do
    local cls = getmetatable(l.module)
    local w = rawget(l.module, '_parameters') and l.module._parameters.weight
    layers[i] = { name = l.name, kind = rawget(cls, '__name') or '?', desc = l.module:extra_repr(),
      params = numel_sum(l.module:parameters()),
      weight = (rawget(cls, '__name') == 'Conv2d' and w) and lm.no_grad(function() return w:detach():float() end) or nil,
      module = l.module }
  end
  -- id: this module (not another of the same layers): shown again, it keeps its live histograms
  return { name = rawget(getmetatable(m), '__name') or 'model', params = numel_sum(m:parameters()), layers = layers,
    id = string.format('%p', m) }
end

--- viz.show(x [, opts]): a kernel result, a trace, a tensor, or an nn module; viz.show(scene, x [, opts])
--- names the scene drawing the tensor x ('quant': a weight matrix).
function viz.show(x, ...)
  if type(x) == 'table' and nn_module(x) then return viz._show_model(describe(x), ...) end
  return show(x, ...)
end

--[[
viz.watch(model [, opts]) -> watcher: shows the model and records, at its first forward and then at
most about 10 times a second, each layer's activations (a forward hook on every leaf module) and, when watcher:gradients() is
called after backward, each layer's parameter gradients, as live histograms. watcher:close()
removes the hooks. opts.show = false records without switching the window to the model;
opts.always = true records every forward (scripts, tests: not paced by the clock).
]]
function viz.watch(model, opts)
  local nn = nn_module(model)
  if not nn then error('viz.watch: expected an nn module, got ' .. type(model), 2) end
  local d = describe(model)
  local always = opts and opts.always
  if not (opts and opts.show == false) then viz._show_model(d) end
  local w = { on = false, handles = {}, layers = d.layers }
  local first = true -- the first forward is recorded at once: the histograms appear with it
  for i, l in ipairs(d.layers) do
    w.handles[i] = l.module:register_forward_hook(function(_, _, out)
      if i == 1 then
        w.on = always or first or viz.due()
        first = false
      end
      if w.on and lm.is_tensor(out) and out:dtype():find('float') then viz._record(i, 'activations', out:detach()) end
    end)
  end
  --- Records the parameter gradients of each layer (call after backward; cheap when not due).
  function w:gradients()
    if not self.on then return end
    for i, l in ipairs(self.layers) do
      local gs = {}
      for _, p in ipairs(l.module:parameters()) do
        if p.grad then gs[#gs + 1] = p.grad:reshape(-1) end
      end
      if #gs > 0 then viz._record(i, 'gradients', #gs == 1 and gs[1] or lm.cat(gs)) end
    end
  end
  function w:close()
    for _, h in ipairs(self.handles) do h:remove() end
    self.handles = {}
  end
  return w
end

return viz
