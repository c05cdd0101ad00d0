--[[
examples/args.lua — the command line of the generative examples (gan_2d, ddpm_2d, dcgan_fashion,
ddpm_fashion): options given as a table { ['--steps'] = {'steps', 'int'}, ... } with kinds 'int' (a
non-negative integer), 'num' (a number), 'str' and 'flag' (no value); --help prints the usage. An
unknown option or a bad value is an error that shows the usage.
  local args = dofile(here .. 'args.lua')
  local o = args.parse(arg, spec, defaults, usage)
]]
local M = {}

function M.parse(args, spec, defaults, usage)
  local o = {}
  for k, v in pairs(defaults or {}) do o[k] = v end
  local i = 1
  while args and args[i] do
    local a = args[i]
    local s = spec[a]
    if a == '--help' or a == '-h' then
      print(usage)
      os.exit(0)
    elseif not s then
      error('unknown option ' .. a .. '\n' .. usage, 0)
    elseif s[2] == 'flag' then
      o[s[1]] = true
      i = i + 1
    else
      local v = args[i + 1]
      if v == nil then error(a .. ' needs a value\n' .. usage, 0) end
      if s[2] == 'int' then
        v = math.tointeger(tonumber(v))
        if not v or v < 0 then error(a .. ' needs a non-negative integer, got ' .. tostring(args[i + 1]) .. '\n' .. usage, 0) end
      elseif s[2] == 'num' then
        v = tonumber(v)
        if not v then error(a .. ' needs a number, got ' .. tostring(args[i + 1]) .. '\n' .. usage, 0) end
      end
      o[s[1]] = v
      i = i + 2
    end
  end
  return o
end

return M
