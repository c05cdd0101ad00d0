--[[
lumen.nn.check — how nn, optim and data check arguments and raise errors: one place for the error
position (the user's line, not a line inside Lumen's library), the description of a bad value and
the options-table check, so that every message reads the same way.
Read next: lumen/nn/module.lua.
]]
local lm = require 'lumen'

local M = {}
local lua_dir = lm.lua_dir

--- The stack level of the first caller outside Lumen's Lua library (for error positions), as a
--- level for error() called by the caller of user_level. The user's code is any Lua function not
--- in a file of lua_dir: a script ('@file'), but also a chunk with no file, which is what the REPL
--- ('=stdin'), -e ('=(command line)'), a lesson's step and load() give; C functions (pcall, a
--- binding) are skipped, they have no line. A frame that the user's code left by a tail call
--- (`return self.fc(x)`) no longer exists; its caller's line is the nearest one Lua still knows.
function M.user_level()
  for level = 3, 40 do
    local info = debug.getinfo(level, 'S')
    if not info then return 0 end
    local src = info.source
    if info.what ~= 'C' and not (src:sub(1, 1) == '@' and src:sub(2, #lua_dir + 1) == lua_dir) then
      return level - 1
    end
  end
  return 0
end

--- Raises msg at the user's line.
function M.raise(msg) error(msg, M.user_level()) end

function M.shape_str(x) return '[' .. table.concat(x:shape(), ', ') .. ']' end

--- A short description of a value for messages (never calls metamethods of user tables).
function M.describe(v)
  if lm.is_tensor(v) then return v:is_closed() and 'a closed tensor' or ('a tensor of shape ' .. M.shape_str(v)) end
  if v ~= v then return 'nan' end
  if type(v) == 'number' or type(v) == 'boolean' then return tostring(v) end
  if type(v) == 'string' then return "'" .. v .. "'" end
  return 'a ' .. type(v)
end

--- The options table opts (nil: {}), its keys checked against allowed (a set); errors name fname.
function M.options(opts, allowed, fname)
  if opts == nil then return {} end
  if type(opts) ~= 'table' or lm.is_tensor(opts) then
    M.raise(string.format('%s: options must be a table, got %s', fname, M.describe(opts)))
  end
  for k in next, opts do
    if not allowed[k] then
      local list = {}
      for a in next, allowed do list[#list + 1] = a end
      table.sort(list)
      M.raise(string.format("%s: unknown option '%s' (expected %s)", fname, tostring(k), table.concat(list, ', ')))
    end
  end
  return opts
end

return M
