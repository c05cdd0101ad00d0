--[[
tests/dist/parallel_check.lua — run by tests/dist/run.sh under mpirun: model parallelism against
the unsplit model, which every rank also computes alone (float64, so the comparison is tight).
  Tensor parallelism: an MLP split Megatron's way (ColumnParallelLinear without gathering, then
  RowParallelLinear on the split input) and each layer alone (gathered output, scattered input):
  outputs, the input's gradient and every parameter's gradient (this rank's rows or columns of
  the whole one's) equal the unsplit model's; f and g send what they should (identity / all-reduce).
  Pipeline: one stage per rank, GPipe and 1F1B, with and without re-materialisation, M = 1, 3, 4
  micro-batches: the loss and every stage's gradients equal the unsplit model's on the whole
  batch; the bubble counted from the order the stages really ran their ops is (K-1)/(M+K-1); the
  peak of activations kept is M (GPipe) and K - k (1F1B); pipe:forward gives the model's output.
  ZeRO-1: Adam over parameters split across the ranks gives, step after step, the parameters of
  one Adam over all of them, bit for bit; each rank keeps only its part's state.
Prints "rank R of N: C checks, F failed (model parallel)".
]]
local dist = require 'lumen.dist'
local rank, n = dist.init()
local checks, failed = 0, 0
local function ok(cond, what)
  checks = checks + 1
  if not cond then
    failed = failed + 1
    io.stderr:write(string.format('rank %d: FAIL: %s\n', rank, what))
  end
end
local function close(a, b, tol)
  return a:shape()[1] == b:shape()[1] and (a - b):abs():max():item() <= tol
end
local D = { dtype = 'float64' }

-- ---------------------------------------------------------------- tensor parallelism

do
  local hid, inp, out = 4 * n, 7, 5
  lm.manual_seed(11)
  local l1, l2 = nn.Linear(inp, hid, D), nn.Linear(hid, out, D)
  local col = dist.ColumnParallelLinear(inp, hid, { from = l1, gather_output = false })
  local row = dist.RowParallelLinear(hid, out, { from = l2, input_is_parallel = true })
  local x = lm.randn(6, inp, D) -- the same on every rank (same seed)
  local xr = x:clone():requires_grad_()
  local ref = l2(F.gelu(l1(xr)))
  ref:pow(2):sum():backward()
  local xs = x:clone():requires_grad_()
  local y = row(F.gelu(col(xs)))
  ok(close(y, ref, 1e-12), 'column then row: the output of the unsplit MLP')
  y:pow(2):sum():backward()
  ok(close(xs.grad, xr.grad, 1e-12), 'column then row: the input gradient (f all-reduced it)')
  local h = hid // n
  ok(close(col.weight.grad, l1.weight.grad:narrow(1, rank * h + 1, h), 1e-12), 'column: this rank\'s rows of dW')
  ok(close(col.bias.grad, l1.bias.grad:narrow(1, rank * h + 1, h), 1e-12), 'column: this rank\'s part of db')
  ok(close(row.weight.grad, l2.weight.grad:narrow(2, rank * h + 1, h), 1e-12), 'row: this rank\'s columns of dW')
  ok(close(row.bias.grad, l2.bias.grad, 1e-12), 'row: the whole db')
  -- each layer alone: the column layer gathers its output, the row layer splits its input
  local c2 = dist.ColumnParallelLinear(inp, hid, { from = l1 })
  local r2 = dist.RowParallelLinear(hid, out, { from = l2 })
  local x2 = x:clone():requires_grad_()
  local y2 = r2(c2(x2))
  local x3 = x:clone():requires_grad_()
  local ref2 = l2(l1(x3))
  ok(close(y2, ref2, 1e-12), 'gathered column, scattered row: the output')
  y2:sum():backward()
  ref2:sum():backward()
  ok(close(x2.grad, x3.grad, 1e-12), 'gathered column, scattered row: the input gradient')
  -- a layer made without from: rank 0's initialisation everywhere, so the gathered weight is whole
  local c3 = dist.ColumnParallelLinear(inp, hid, D)
  local all = dist.all_gather(c3.weight:detach()):view(hid, inp)
  local again = dist.all_gather(all)
  ok(lm.equal(again[1], again[n]), 'one initialisation for the world (rank 0\'s)')
  -- f and g one by one
  local a = lm.full({ 3 }, rank + 1, D):requires_grad_()
  local fa = dist.copy_to_parallel(a)
  ok(lm.equal(fa, a:detach()), 'f forward: the identity')
  fa:sum():backward()
  ok(lm.equal(a.grad, lm.full({ 3 }, n, D)), 'f backward: the gradients summed over the ranks')
  local b = lm.full({ 3 }, rank + 1, D):requires_grad_()
  local gb = dist.reduce_from_parallel(b)
  ok(lm.equal(gb, lm.full({ 3 }, n * (n + 1) / 2, D)), 'g forward: the sum over the ranks')
  gb:sum():backward()
  ok(lm.equal(b.grad, lm.ones(3, D)), 'g backward: the identity')
  local okc, err = pcall(dist.ColumnParallelLinear, 3, n + 1)
  ok(n == 1 or (not okc and tostring(err):find('out_features ' .. (n + 1) .. ' is not a multiple of the world size', 1, true)),
    'a size the world does not divide: ' .. tostring(err))
end

-- ---------------------------------------------------------------- the pipeline

local function make_model(seed)
  lm.manual_seed(seed)
  local stages = {}
  for k = 1, n do stages[k] = nn.Sequential(nn.Linear(6, 6, D), nn.Tanh()) end
  return stages
end

for _, sched in ipairs({ 'gpipe', '1f1b' }) do
  for _, Mb in ipairs({ 1, 3, 4 }) do
    for _, ckpt in ipairs({ false, true }) do
      local what = string.format('%s M=%d%s', sched, Mb, ckpt and ' checkpoint' or '')
      lm.manual_seed(5)
      local x, y = lm.randn(12, 6, D), lm.randn(12, 6, D)
      -- the unsplit model, here alone
      local whole = nn.Sequential(table.unpack(make_model(3)))
      local loss_ref = F.mse_loss(whole(x), y)
      loss_ref:backward()
      local stages = make_model(3)
      local pipe = dist.Pipeline(stages, { micro_batches = Mb, schedule = sched, checkpoint = ckpt })
      local loss = pipe:train_step(x, y, F.mse_loss)
      ok(math.abs(loss - loss_ref:item()) < 1e-12, what .. ': the loss ' .. loss .. ' vs ' .. loss_ref:item())
      local mine, ref = stages[rank + 1]:parameters(), whole[rank + 1]:parameters()
      local same = #mine == #ref
      for i = 1, #mine do same = same and mine[i].grad ~= nil and close(mine[i].grad, ref[i].grad, 1e-12) end
      ok(same, what .. ': this stage\'s gradients are the unsplit model\'s')
      local s = pipe.stats
      ok(math.abs(s.bubble_slots - (n - 1) / (Mb + n - 1)) < 1e-12,
        string.format('%s: the bubble counted from the run %.4f = (K-1)/(M+K-1) %.4f', what, s.bubble_slots, s.bubble_formula))
      ok(s.slots == 2 * (Mb + n - 1), what .. ': 2(M + K - 1) slots, got ' .. s.slots)
      local want_peak = sched == 'gpipe' and Mb or math.min(n - rank, Mb)
      ok(s.peak_activations == want_peak, string.format('%s: peak activations on stage %d: %d, want %d', what,
        rank + 1, s.peak_activations, want_peak))
      ok(#pipe.timeline == n and #pipe.timeline[1] == 2 * Mb, what .. ': the timeline holds every stage\'s ops')
    end
  end
end

do -- forward only, and the errors
  local stages = make_model(3)
  local whole = nn.Sequential(table.unpack(make_model(3)))
  local pipe = dist.Pipeline(stages, { micro_batches = 2 })
  local x = lm.randn(4, 6, D)
  local out = pipe:forward(x)
  if rank == n - 1 then ok(close(out, whole(x):detach(), 1e-12), 'pipe:forward: the model\'s output')
  else ok(out == nil, 'pipe:forward: nil before the last stage') end
  local okc, err = pcall(dist.Pipeline, { nn.Linear(2, 2) }, {})
  ok(n == 1 or (not okc and tostring(err):find('1 stages for ' .. n .. ' ranks', 1, true)), 'stages per rank: ' .. tostring(err))
  -- a schedule of one's own: 1F1B written as a function runs as the built-in one
  local function mine(K, k, M)
    local ops, warm = {}, math.min(K - k, M)
    for m = 1, warm do ops[#ops + 1] = { 'F', m } end
    for i = 1, M - warm do ops[#ops + 1] = { 'F', warm + i }; ops[#ops + 1] = { 'B', i } end
    for m = M - warm + 1, M do ops[#ops + 1] = { 'B', m } end
    return ops
  end
  local own = dist.Pipeline(make_model(3), { micro_batches = 4, schedule = mine })
  local xx, yy = lm.randn(8, 6, D), lm.randn(8, 6, D)
  own:train_step(xx, yy, F.mse_loss)
  ok(own.stats.schedule == 'custom' and math.abs(own.stats.bubble_slots - (n - 1) / (n + 3)) < 1e-12
    and own.stats.peak_activations == math.min(n - rank, 4), 'a schedule function: 1F1B as the built-in')
  okc, err = pcall(dist.Pipeline, stages, { micro_batches = 2, schedule = function() return { { 'B', 1 }, { 'F', 1 }, { 'F', 2 }, { 'B', 2 } } end })
  ok(not okc and tostring(err):find('the schedule for stage 1 of ' .. n .. ', 2 micro-batches: op 1 runs B1 before F1', 1, true), 'a B before its F: ' .. tostring(err))
  if n > 1 then -- the first stage runs B1 before F2, the last stage F2 before B1: each waits on the other
    okc, err = pcall(dist.Pipeline, stages, { micro_batches = 2, schedule = function(_, k)
      if k == 1 then return { { 'F', 1 }, { 'B', 1 }, { 'F', 2 }, { 'B', 2 } } end
      return { { 'F', 1 }, { 'F', 2 }, { 'B', 2 }, { 'B', 1 } } end })
    ok(not okc and tostring(err):find('the schedule deadlocks', 1, true), 'a deadlock is refused before it runs: ' .. tostring(err))
  end
  okc, err = pcall(dist.Pipeline, stages, { schedule = 'zigzag' })
  ok(not okc and tostring(err):find("schedule 'zigzag' is not one of gpipe, 1f1b", 1, true), 'an unknown schedule')
  -- a batch micro_batches does not divide: every rank that holds data says so (rank 0 has x)
  if n == 1 then
    okc, err = pcall(function() pipe:train_step(lm.randn(5, 6, D), lm.randn(5, 6, D), F.mse_loss) end)
    ok(not okc and tostring(err):find('its batch (dim 1) is not a multiple of micro_batches = 2', 1, true), 'an odd batch: ' .. tostring(err))
  end
end

-- ---------------------------------------------------------------- ZeRO-1

do
  lm.manual_seed(21)
  local net = nn.Sequential(nn.Linear(5, 8, D), nn.Tanh(), nn.Linear(8, 3, D))
  lm.manual_seed(21)
  local ref = nn.Sequential(nn.Linear(5, 8, D), nn.Tanh(), nn.Linear(8, 3, D))
  local zero = dist.ZeroRedundancyOptimizer(net:parameters(), optim.Adam, { lr = 0.01 })
  local adam = optim.Adam(ref:parameters(), { lr = 0.01 })
  local bytes_all = 0
  for step = 1, 4 do
    lm.manual_seed(100 + step)
    local x, y = lm.randn(4, 5, D), lm.randn(4, 3, D) -- the same on every rank: the same gradients
    zero:zero_grad()
    adam:zero_grad()
    F.mse_loss(net(x), y):backward()
    F.mse_loss(ref(x), y):backward()
    zero:step()
    adam:step()
  end
  local same = true
  local a, b = net:parameters(), ref:parameters()
  for i = 1, #a do same = same and lm.equal(a[i], b[i]) end
  ok(same, 'ZeRO-1 over ' .. n .. ' ranks: the parameters of one Adam, bit for bit')
  for _, st in pairs(adam.state) do for _, v in pairs(st) do if lm.is_tensor(v) then bytes_all = bytes_all + v:nbytes() end end end
  local total = dist.all_reduce(lm.tensor({ zero:state_bytes() }, D)):item()
  ok(total == bytes_all, string.format('the ranks\' states add up to one Adam\'s (%d = %d)', total, bytes_all))
  ok(n == 1 or zero:state_bytes() < bytes_all, 'each rank keeps less than the whole state')
  local owners = {}
  for i = 1, #zero.params do owners[zero.owner[i]] = true end
  ok(n > #zero.params or owners[n - 1], 'every rank owns a part')
end

print(string.format('rank %d of %d: %d checks, %d failed (model parallel)', rank, n, checks, failed))
if failed > 0 then os.exit(1) end
