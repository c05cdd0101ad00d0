--[[
examples/fashion_train.lua — the training loop shared by mlp_fashion.lua and cnn_fashion.lua:
options, data, the loop over epochs and batches, evaluation, the progress bar, the CSV log and a
clean stop on Ctrl-C. Written out in full so it can be read and copied; the two examples only
define their model.

Options: --epochs N  --lr X  --batch N  --optim sgd|adam  --threads N  --seed N  --log FILE.csv
         --device cpu|cuda (where the model and the batches live; cuda without a GPU says why)
         --limit N (train on the first N images)  --log-every N (steps per log row, 10)  --quiet
         --viz (live curves in the visualizer's window while training; --viz=model: the layers
         with live histograms of activations and gradients; viz.scene('curves') shows the curves)
The CSV log has the columns step,epoch,loss,accuracy,lr,seconds,split: a 'train' row every
--log-every steps (loss and accuracy of the batches since the previous row) and a 'test' row at the
end of each epoch (test loss and accuracy). It is flushed per line, so `tail -f` or the
visualizer's curves scene can follow it while training runs.
]]
local M = {}

local function usage(name, defaults)
  return string.format([[usage: lumen examples/%s.lua [--epochs N] [--lr X] [--batch N] [--optim sgd|adam]
                [--threads N] [--seed N] [--log FILE.csv] [--limit N] [--log-every N] [--quiet]
                [--device cpu|cuda]
                [--viz | --viz=model]
defaults: --epochs %d --lr %g (sgd; adam: %g) --batch %d --optim sgd --seed %d]], name, defaults.epochs,
    defaults.lr, defaults.adam_lr, defaults.batch, defaults.seed)
end

--- The command line (arg[1..n]) as a table; errors say what is wrong and show the usage.
function M.parse(argv, name, defaults)
  local o = { epochs = defaults.epochs, batch = defaults.batch, optim = 'sgd', seed = defaults.seed,
    log_every = 10 }
  local numbers = { ['--epochs'] = 'epochs', ['--lr'] = 'lr', ['--batch'] = 'batch', ['--threads'] = 'threads',
    ['--seed'] = 'seed', ['--limit'] = 'limit', ['--log-every'] = 'log_every' }
  local i = 1
  while argv and argv[i] do
    local a = argv[i]
    local key, inline = a:match('^(%-%-[%w-]+)=(.*)$')
    if key then a = key end
    local function value()
      if inline then return inline end
      i = i + 1
      if argv[i] == nil then error(name .. ': ' .. a .. ' needs a value\n' .. usage(name, defaults), 0) end
      return argv[i]
    end
    if numbers[a] then
      local v = tonumber(value())
      local k = numbers[a]
      if not v or (k ~= 'lr' and (math.tointeger(v) == nil or v < 1)) or (k == 'lr' and not (v > 0)) then
        error(string.format('%s: %s needs a %s, got %s\n%s', name, a, k == 'lr' and 'positive number' or
          'positive integer', tostring(argv[i]), usage(name, defaults)), 0)
      end
      o[k] = k == 'lr' and v or math.tointeger(v)
    elseif a == '--optim' then
      o.optim = value()
      if o.optim ~= 'sgd' and o.optim ~= 'adam' then
        error(name .. ": --optim must be 'sgd' or 'adam', got '" .. o.optim .. "'\n" .. usage(name, defaults), 0)
      end
    elseif a == '--device' then
      o.device = value()
      if o.device ~= 'cpu' and o.device ~= 'cuda' then
        error(name .. ": --device must be 'cpu' or 'cuda', got '" .. o.device .. "'\n" .. usage(name, defaults), 0)
      end
    elseif a == '--log' then
      o.log = value()
    elseif a == '--quiet' then
      o.quiet = true
    elseif a == '--viz' then
      o.viz = inline or 'curves'
      if o.viz ~= 'curves' and o.viz ~= 'model' then
        error(name .. ": --viz takes no value or =model, got '" .. o.viz .. "'\n" .. usage(name, defaults), 0)
      end
    elseif a == '--help' or a == '-h' then
      print(usage(name, defaults))
      o.help = true
    else
      error(name .. ": unknown option '" .. a .. "'\n" .. usage(name, defaults), 0)
    end
    i = i + 1
  end
  o.lr = o.lr or (o.optim == 'adam' and defaults.adam_lr or defaults.lr)
  o.device = o.device or 'cpu'
  return o
end

--- Mean loss and accuracy of model over a data set (evaluation mode, no graph).
function M.evaluate(model, ds, batch, device)
  local was_training = model.training
  model:eval()
  local loss_sum, correct, n = 0, 0, 0
  local sum_loss = nn.CrossEntropyLoss({ reduction = 'sum' })
  lm.no_grad(function()
    for x, y in data.DataLoader(ds, { batch_size = batch or 500 }):iter() do
      local yd = y:to(device or 'cpu')
      local out = model(x:to(device or 'cpu'))
      loss_sum = loss_sum + sum_loss(out, yd):item()
      correct = correct + nn.utils.count_correct(out, yd)
      n = n + x:size(1)
    end
  end)
  model:train(was_training)
  return loss_sum / n, correct / n
end

--- Trains spec.model on Fashion-MNIST as the command line says. Leaves model, optimizer,
--- criterion, train_set, test_set and history as globals (for `lumen -i`).
function M.run(spec)
  local name, defaults = spec.name, spec.defaults
  local o = M.parse(spec.args, name, defaults)
  if o.help then return end
  if o.device == 'cuda' and not lm.cuda.is_available() then
    error(name .. ': --device cuda: no GPU can be used: ' .. lm.cuda.unavailable_reason(), 0)
  end
  local say = o.quiet and function() end or print
  if o.threads then lm.set_num_threads(o.threads) end
  lm.manual_seed(o.seed)
  if o.viz then
    viz.clear()
    -- the window opens and draws its first frame at once, while the data loads (unless a scene is
    -- shown already: a lesson's picture is not taken away; the curves then come with viz.scene('curves'))
    if o.viz == 'curves' and not viz.state().scene then
      viz.scene('curves')
      viz.redraw()
    end
  end
  local t0 = lm.sys.clock()
  train_set = data.FashionMNIST { split = 'train', limit = o.limit }
  test_set = data.FashionMNIST { split = 'test' }
  say(string.format('Fashion-MNIST: %d training and %d test images, loaded in %.2f s (CPU, %d threads)',
    #train_set, #test_set, lm.sys.clock() - t0, lm.get_num_threads()))
  model = spec.make_model()
  if o.device == 'cuda' then model:to('cuda') end -- before the optimizer takes the parameters
  criterion = nn.CrossEntropyLoss()
  if o.optim == 'adam' then
    optimizer = optim.Adam(model:parameters(), { lr = o.lr })
  else
    optimizer = optim.SGD(model:parameters(), { lr = o.lr })
  end
  say(tostring(model))
  say(string.format('optimizer %s, lr %g, batch %d, %d epochs, seed %d', o.optim, o.lr, o.batch, o.epochs, o.seed))
  local loader = data.DataLoader(train_set, { batch_size = o.batch, shuffle = true, seed = o.seed })
  local log = o.log and nn.utils.MetricsLog(o.log)
  -- --viz: curves from viz.plot (drawn at most ~10 times a second); the model's histograms by viz.watch
  local watch
  if o.viz == 'model' then watch = viz.watch(model) end
  local rows = log or o.viz
  history = {}
  local guard <close> = nn.utils.catch_interrupt()
  local step, stopped, start = 0, false, lm.sys.clock()
  for epoch = 1, o.epochs do
    model:train()
    local bar = nn.utils.Progress { total = #loader, title = string.format('epoch %d/%d', epoch, o.epochs),
      silent = o.quiet }
    -- a row's batches: their summed loss and correct predictions (nn.utils.count_correct: one pass
    -- over the logits in C, what logits:argmax(2):eq(y):sum():item() counts in four ops)
    local row_loss, row_n, row_batches, row_correct = 0, 0, 0, 0
    for x, y in loader:iter() do
      optimizer:zero_grad()
      local xd, yd = x:to(o.device), y:to(o.device)
      local out = model(xd)
      local loss = criterion(out, yd)
      loss:backward()
      if watch then watch:gradients() end
      optimizer:step()
      step = step + 1
      local l = loss:item()
      bar:update(x:size(1), l)
      if rows then
        row_loss, row_batches, row_n = row_loss + l, row_batches + 1, row_n + x:size(1)
        row_correct = row_correct + nn.utils.count_correct(out, yd)
        if step % o.log_every == 0 then
          if log then
            log:write { step = step, epoch = epoch, loss = row_loss / row_batches, accuracy = row_correct / row_n,
              lr = optimizer.param_groups[1].lr, seconds = lm.sys.clock() - start, split = 'train' }
          end
          if o.viz then
            viz.plot('train/loss', step, row_loss / row_batches)
            viz.plot('train/accuracy', step, row_correct / row_n)
          end
          row_loss, row_n, row_batches, row_correct = 0, 0, 0, 0
        end
      end
      if guard:requested() then stopped = true; break end
    end
    local train_loss, seconds = bar:done()
    if stopped then break end
    local test_loss, acc = M.evaluate(model, test_set, nil, o.device)
    history[epoch] = { train_loss = train_loss, test_loss = test_loss, accuracy = acc, seconds = seconds }
    say(string.format('epoch %d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.1f s, %.0f images/s; %s ' ..
      'measured, Lumen)', epoch, train_loss or 0 / 0, test_loss, 100 * acc, seconds, #train_set / seconds,
      o.device == 'cuda' and 'CUDA' or 'CPU'))
    if log then
      log:write { step = step, epoch = epoch, loss = test_loss, accuracy = acc, lr = optimizer.param_groups[1].lr,
        seconds = lm.sys.clock() - start, split = 'test' }
    end
    if o.viz then
      viz.plot('test/loss', step, test_loss)
      viz.plot('test/accuracy', step, acc)
    end
    if guard:requested() then stopped = true; break end
  end
  if log then log:close() end
  if watch then watch:close() end
  if stopped then
    print(string.format('\nstopped by Ctrl-C after %d steps: model, optimizer and criterion are usable ' ..
      '(lumen -i leaves you at the prompt with them)', step))
  end
  return history
end

return M
