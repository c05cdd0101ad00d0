--[[
bench/dist/pipeline.lua — dist.Pipeline measured (run by bench/dist/run_pipeline.sh under mpirun,
one stage per rank, 1 thread each): for GPipe and 1F1B and M micro-batches, the time per step,
the bubble measured from the stages' own times (idle time over span x stages, communication
waits included) against the bubble counted in slots from the order they ran and (K-1)/(M+K-1);
with checkpoint = true the cost of re-materialisation. Without mpirun: the whole model in one
process, the reference time for the same global batch.
]]
local dist = require 'lumen.dist'
local rank, K = dist.init()
local layers, width, batch = 4, 512, 256
local function stage(seed)
  lm.manual_seed(seed)
  local mods = {}
  for i = 1, layers do mods[#mods + 1] = nn.Linear(width, width); mods[#mods + 1] = nn.Tanh() end
  return nn.Sequential(table.unpack(mods))
end
lm.manual_seed(1)
local x, y = lm.randn(batch, width), lm.randn(batch, width)
local reps = 4

if K == 1 then -- the reference: two stages' worth of layers in one process
  local whole = nn.Sequential(stage(1), stage(2))
  local function step() whole:zero_grad() F.mse_loss(whole(x), y):backward() end
  step()
  local t0 = dist.wtime()
  for _ = 1, reps do step() end
  print(string.format('one process, 2 stages in sequence: %.1f ms per step', (dist.wtime() - t0) / reps * 1e3))
  return
end

if rank == 0 then
  print(string.format('%d stages (ranks) x %d Linear(%d, %d)+Tanh, batch %d', K, layers, width, width, batch))
  print('schedule  M  ckpt  ms/step  bubble measured  counted  (K-1)/(M+K-1)  peak act (stage 1)')
end
for _, sched in ipairs({ 'gpipe', '1f1b' }) do
  for _, M in ipairs({ 1, 2, 4, 8, 16 }) do
    for _, ckpt in ipairs({ false, true }) do
      if not ckpt or M == 8 then
        local pipe = dist.Pipeline(function(k) return stage(k) end, { micro_batches = M, schedule = sched, checkpoint = ckpt })
        pipe:zero_grad()
        pipe:train_step(x, y, F.mse_loss)
        local ms, meas = 0, 0
        for _ = 1, reps do
          pipe:zero_grad()
          pipe:train_step(x, y, F.mse_loss)
          ms, meas = ms + pipe.stats.seconds * 1e3 / reps, meas + pipe.stats.bubble_measured / reps
        end
        local s = pipe.stats
        if rank == 0 then
          print(string.format('%-8s %2d  %-5s %7.1f  %15.3f  %7.3f  %13.3f  %d', sched, M, tostring(ckpt), ms, meas,
            s.bubble_slots, s.bubble_formula, s.peak_activations))
        end
      end
    end
  end
end
