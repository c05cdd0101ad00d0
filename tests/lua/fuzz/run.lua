--[[
run.lua — long runs of the Lua API fuzzer (fuzz.lua), for a sanitizer or a release build.

  lumen tests/lua/fuzz/run.lua --seeds 1-200 [--episodes 40] [--calls 60] [--timeout 300]
      Runs each seed in a child process (the same lumen), so a crash, an abort, a sanitizer
      report or a hang (killed after --timeout seconds) is caught; such a seed is replayed with
      --trace to name the call that was running. Prints one line per seed, the failures, and a
      summary; exits 1 when anything failed.
  lumen tests/lua/fuzz/run.lua --seed 7 [--episodes N] [--first-episode E] [--upto C] [--trace]
      Runs one seed in this process (the child's mode). --first-episode E --episodes 1 --upto C
      replays an episode up to its call C; --trace prints every call to stderr before it runs.

The seed and the episode and call numbers in a report are all a replay needs.
]]
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local fuzz = dofile(here .. 'fuzz.lua')

local opts = { episodes = 40, calls = 60, timeout = 300, oracle = 10 }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == '--seed' then opts.seed = tonumber(v); i = i + 1
  elseif a == '--seeds' then
    local lo, hi = v:match('^(%d+)%-(%d+)$')
    opts.seeds = { tonumber(lo or v), tonumber(hi or v) }; i = i + 1
  elseif a == '--episodes' then opts.episodes = tonumber(v); i = i + 1
  elseif a == '--calls' then opts.calls = tonumber(v); i = i + 1
  elseif a == '--first-episode' then opts.first_episode = tonumber(v); i = i + 1
  elseif a == '--upto' then opts.upto = tonumber(v); i = i + 1
  elseif a == '--oracle' then opts.oracle = tonumber(v); i = i + 1 -- checks per episode
  elseif a == '--timeout' then opts.timeout = tonumber(v); i = i + 1
  elseif a == '--slow' then opts.slow = tonumber(v); i = i + 1
  elseif a == '--trace' then opts.trace = true
  elseif a == '--stop' then opts.stop_on_failure = true
  elseif a == '--stats' then opts.stats = {}
  elseif a == '--show' then opts.show = v; i = i + 1 -- print what calls of this name did
  else io.stderr:write('run.lua: unknown argument ', a, '\n'); os.exit(2) end
  i = i + 1
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- One seed in this process.
local function run_one(seed)
  local t0 = lm.sys.clock()
  local failures, stats = fuzz.run(seed, opts)
  for _, f in ipairs(failures) do
    print(string.format('FAIL %s\n     %s', f.text or '?', f.what))
  end
  if opts.stats then -- how often each callable ran, and how often it returned
    local names = {}
    for k in pairs(opts.stats) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do
      print(string.format('  %-28s %6d calls %6d returned', k, opts.stats[k].calls, opts.stats[k].ok))
    end
  end
  print(string.format('seed %d: %d episodes, %d calls, %d failures, %.1f s', seed,
    stats.episodes, stats.calls, #failures, lm.sys.clock() - t0))
  io.stdout:flush()
  return #failures
end

if opts.seed then os.exit(run_one(opts.seed) == 0 and 0 or 1) end
if not opts.seeds then
  io.stderr:write('usage: lumen run.lua --seeds A-B [options] | --seed N [options]\n')
  os.exit(2)
end

-- The driver: one child per seed.
local exe = assert(lm.sys.executable())
local common = string.format('--episodes %d --calls %d --oracle %d', opts.episodes, opts.calls,
  opts.oracle)
if opts.slow then common = common .. ' --slow ' .. opts.slow end
local tmp = os.tmpname()
local bad, t0 = 0, lm.sys.clock()
for seed = opts.seeds[1], opts.seeds[2] do
  local cmd = string.format('timeout -s KILL %d %s %s --seed %d %s >%s 2>&1', opts.timeout,
    q(exe), q(here .. 'run.lua'), seed, common, q(tmp))
  local c0 = lm.sys.clock()
  local ok, how, code = os.execute(cmd)
  local wall = lm.sys.clock() - c0
  local f = io.open(tmp)
  local out = f and f:read('a') or ''
  if f then f:close() end
  local summary = out:match('(seed %d+: [^\n]*)')
  if ok then
    print(string.format('%s (%.1f s with start-up and exit)', summary, wall))
  else
    bad = bad + 1
    local reason = code == 9 and 'killed after ' .. opts.timeout .. ' s (a hang?)'
      or string.format('exit %s %s', how, code)
    print(string.format('seed %d: %s', seed, summary and 'failures' or reason))
    print(out:sub(1, 6000))
    if not summary then -- crashed or hung: replay with a trace to name the call
      local tcmd = string.format('timeout -s KILL %d %s %s --seed %d %s --trace 2>&1 >/dev/null | '
        .. "grep -a '^seed .* call ' | tail -n 1", opts.timeout, q(exe), q(here .. 'run.lua'),
        seed, common)
      local p = io.popen(tcmd)
      local last = p:read('a')
      p:close()
      print('  the call that was running: ' .. (last ~= '' and last or '(none traced)'))
    end
  end
  io.stdout:flush()
end
os.remove(tmp)
print(string.format('%d seeds, %d failed, %.0f s', opts.seeds[2] - opts.seeds[1] + 1, bad,
  lm.sys.clock() - t0))
os.exit(bad == 0 and 0 or 1)
