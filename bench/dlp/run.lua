-- bench/dlp/run.lua — lumen.dlp's speed figure (issue 36): AlexNet's five convolutions on a 32 x 32
-- array in the three dataflows, 15 simulations, in SCALE-Sim's two modes (CALC, its default, and
-- USER at 10 words per cycle), wall seconds on one core (the simulator is single-threaded), best
-- of 3. With `--scalesim PYTHON` (a Python with scalesim 3.0.0, see tests/data/make_dlp_scalesim.py)
-- the same 15 layers run in SCALE-Sim in the same run, and every number is compared.
-- Usage: lumen bench/dlp/run.lua [--scalesim /path/to/python] [--modes calc,user]
local dlp = require 'lumen.dlp'

local python, modes = nil, {'calc', 'user'}
local i = 1
while arg[i] do
  if arg[i] == '--scalesim' then python = arg[i + 1]; i = i + 2
  elseif arg[i] == '--modes' then
    modes = {}
    for m in arg[i + 1]:gmatch('[^,]+') do modes[#modes + 1] = m end
    i = i + 2
  else error('bench/dlp/run.lua: unknown argument ' .. arg[i]) end
end

local function now() return lm.sys.clock() end
local layers = dlp.alexnet()
local results = {}
print('lumen.dlp: AlexNet Conv1..5 on 32x32, 64 KiB scratchpads, bandwidth 10; best of 3 (wall s)')
print(string.format('%-6s %-4s %10s %12s %10s', 'mode', 'df', 'seconds', 'total cyc', 'stalls'))
for _, mode in ipairs(modes) do
  local all = 0
  for _, df in ipairs{'os', 'ws', 'is'} do
    local a = dlp.array{dataflow = df, mode = mode}
    local best = math.huge
    local cyc, st = 0, 0
    for _ = 1, 3 do
      local t0 = now()
      cyc, st = 0, 0
      for _, l in ipairs(layers) do
        local r = a:run(l)
        results[mode .. df .. l.name] = r
        cyc, st = cyc + r.total_cycles, st + r.stall_cycles
      end
      best = math.min(best, now() - t0)
    end
    all = all + best
    print(string.format('%-6s %-4s %10.3f %12d %10d', mode, df, best, cyc, st))
  end
  print(string.format('%-6s %-4s %10.3f   (15 layers)', mode, 'all', all))
end

if python then
  local tmp = os.tmpname()
  os.remove(tmp)
  os.execute('mkdir -p ' .. tmp)
  local script = tmp .. '/run.py'
  local f = assert(io.open(script, 'w'))
  f:write([[
import sys, time, os
sys.path.insert(0, sys.argv[1])
import make_dlp_scalesim as g
mode, df, out = sys.argv[2], sys.argv[3], sys.argv[4]
t = time.time()
rows = []
for (name, h, w, fh, fw, c, n, s) in g.ALEXNET:
    case = (name, 32, 32, df, mode, 64, 64, 64, 10, h, w, fh, fw, c, n, s)
    rows.append(name + ',' + ','.join(g.run(case, out)))
open(out + '/result.txt', 'w').write('%f\n' % (time.time() - t) + '\n'.join(rows) + '\n')
]])
  f:close()
  local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
  local data = here .. '../../tests/data'
  print('\nSCALE-Sim 3.0.0 (' .. python .. '), the same 15 layers, one run each (wall s):')
  for _, mode in ipairs(modes) do
    local all = 0
    for _, df in ipairs{'os', 'ws', 'is'} do
      local ok = os.execute(string.format("'%s' '%s' '%s' %s %s '%s' >/dev/null 2>&1", python, script, data,
        mode:upper(), df, tmp))
      if not ok then error('bench/dlp/run.lua: SCALE-Sim failed (' .. mode .. ', ' .. df .. ')') end
      local rf = assert(io.open(tmp .. '/result.txt'))
      local secs = tonumber(rf:read('l'))
      local same, li = 0, 0
      for line in rf:lines() do
        local c = {}
        for x in (line .. ','):gmatch('([^,]*),') do c[#c + 1] = x end
        li = li + 1
        local r = assert(results[mode .. df .. layers[li].name], 'a report for each layer')
        local eq = tonumber(c[3]) == r.total_cycles and tonumber(c[4]) == r.stall_cycles
          and tonumber(c[25]) == r.ifmap_dram_reads and tonumber(c[31]) == r.ofmap_dram_writes
        if eq then same = same + 1 end
      end
      rf:close()
      all = all + secs
      print(string.format('%-6s %-4s %10.1f   reports equal to lumen.dlp: %d of 5', mode, df, secs, same))
    end
    print(string.format('%-6s %-4s %10.1f   (15 layers)', mode, 'all', all))
  end
  os.execute('rm -rf ' .. tmp)
end
