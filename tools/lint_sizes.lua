-- lint_sizes.lua — every product in the Lua bindings (src/lua/*.c) is a checked size product or
-- says why it cannot overflow (issue 29.6). A size from Lua can be anything up to 2^63 - 1, and a
-- signed product that wraps is undefined behaviour: UBSan stops the program, a release build goes
-- on with a wrong (often small, so accepted) count. The rule, checked here line by line:
--   * a product of two non-constant operands goes through lml_mul_overflows(a, b, &out) (or
--     lml_checkshape / lmi_numel_checked, which use it), or
--   * carries a comment "bounded: why" on its line or the line above (the operands were checked
--     small, or come from a tensor that exists, whose extents fit in its storage), or
--   * is floating-point arithmetic: a comment "float" the same way.
-- Run: lumen tools/lint_sizes.lua [dir] (exit 1 listing the offending lines). ctest tools/sizes.
local dir = arg and arg[1] or 'src/lua'
local files = lm.sys.listdir(dir)
table.sort(files)
local bad, seen = {}, 0

-- The line without string and character literals; comments are returned apart (for "bounded:").
local function split_comments(line, in_block)
  local code, comment = {}, {}
  local i, n = 1, #line
  while i <= n do
    if in_block then
      local e = line:find('*/', i, true)
      comment[#comment + 1] = line:sub(i, e and e - 1 or n)
      if not e then break end
      in_block, i = false, e + 2
    else
      local c = line:sub(i, i)
      if line:sub(i, i + 1) == '/*' then
        in_block, i = true, i + 2
      elseif line:sub(i, i + 1) == '//' then
        comment[#comment + 1] = line:sub(i + 2)
        break
      elseif c == '"' or c == "'" then
        local j = i + 1
        while j <= n and line:sub(j, j) ~= c do j = j + (line:sub(j, j) == '\\' and 2 or 1) end
        code[#code + 1] = c .. c
        i = j + 1
      else
        code[#code + 1] = c
        i = i + 1
      end
    end
  end
  return table.concat(code), table.concat(comment, ' '), in_block
end

local function constant(tok)
  return tok:match('^%d') or tok:match('^[A-Z][A-Z0-9_]*$') or tok:match('^sizeof')
end

for _, name in ipairs(files) do
  if name:match('%.c$') then
    local path = dir .. '/' .. name
    local prev_comment, in_block, lineno = '', false, 0
    for line in io.lines(path) do
      lineno = lineno + 1
      local code, comment
      code, comment, in_block = split_comments(line, in_block)
      local ok_here = (comment .. ' ' .. prev_comment):find('bounded:') or (comment .. ' ' .. prev_comment):find('float')
      -- a binary product: spaces on both sides (the house format; declarations are "type *name")
      for left, right in code:gmatch('([%w_%]%)%.%[]+) %* ([%w_%(][%w_%.%->%[%]]*)') do
        seen = seen + 1
        -- an operand ending in ) or ] is an expression (never a constant here); else its last name
        local lconst = not left:match('[%]%)]$') and constant(left:match('[%w_]+$'))
        if not (lconst or constant(right) or ok_here) then
          bad[#bad + 1] = string.format('%s:%d: %s * %s: check it (lml_mul_overflows) or say "bounded: why"',
            path, lineno, left, right)
        end
      end
      if code:find('__builtin_mul_overflow', 1, true) then
        bad[#bad + 1] = string.format('%s:%d: __builtin_mul_overflow: use lml_mul_overflows (one helper to grep)', path, lineno)
      end
      prev_comment = comment
    end
  end
end

if #bad > 0 then
  io.stderr:write(table.concat(bad, '\n'), '\n')
  io.stderr:write(string.format('lint_sizes: %d unchecked product%s in %s\n', #bad, #bad == 1 and '' or 's', dir))
  os.exit(1)
end
print(string.format('lint_sizes: %d products in %s, every one checked or bounded', seen, dir))
