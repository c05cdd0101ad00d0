--[[
viz — the visualizer (docs/API.md "viz", docs/viz.md): a window (offscreen without a display)
showing the course's pictures drawn from the kernels that really ran, with every number labelled by
where it came from.

  out, info = kernels.scan(lm.arange(1, 17):float(), {backend='emu'})
  viz.show(info)             -- Kogge-Stone and Brent-Kung side by side on that input
  viz.step(); viz.play()     -- or space, arrows, Tab in the window; ? lists the keys
  viz.snapshot('scan.png')

The calls are C bindings (src/lua/viz.c over src/viz/viz.h); without SDL2 at build time every call
but viz.is_open says that this build has no window (viz.built is false).
Read next: docs/viz.md.
]]
local lm = require 'lumen'

return lm._viz
