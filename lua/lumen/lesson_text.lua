--[[
lumen.lesson_text — how a lesson's text reaches the student: the language (:lang, LUMEN_LANG,
LANG), texts given as a string or {en=, zh=}, the width of a string on a terminal (East Asian wide
characters take two columns), and wrapping paragraphs to the terminal's width.

Wrapping is greedy over tokens: a Latin word (what lies between spaces), or one wide character
(Chinese breaks between any two characters). A line never starts with closing punctuation (，。、
；：？！）」』】》 ...) nor ends with opening punctuation: such a character takes its neighbour
with it to the next line (or hangs past the width after a line's only token). A word wider than
the line is cut. Paragraphs are separated by blank
lines; a line indented by two spaces or more is kept as it is; '- ' starts a bullet with a hanging
indent. Lines of one paragraph are joined with a space, or with nothing between two wide
characters or next to Chinese punctuation (a Chinese sentence split over source lines). Read next: lumen/lesson.lua.
]]
local lm = require 'lumen'
local T = {}

-- ---------------------------------------------------------------- language

T.langs = { 'en', 'zh' }

--- The language from a locale-like string ('zh', 'zh_CN.UTF-8', 'en_US' ...), or nil.
local function from_locale(s)
  if type(s) ~= 'string' or s == '' then return nil end
  s = s:lower()
  if s:match('^zh') then return 'zh' end
  if s:match('^en') or s == 'c' or s == 'posix' or s:match('^c%.') then return 'en' end
  return nil
end

--- The current language and why: 'en' or 'zh', and a phrase naming where it came from. The one
--- process-wide setting of the core (lm.sys.lang): the emulator's reports and the scenes' labels
--- follow it too.
function T.lang() return lm.sys.lang() end

--- Sets the language ('en' or 'zh'; nil goes back to the environment's). Returns it or raises.
function T.set_lang(l)
  if l == nil then return (lm.sys.lang(false)) end
  local v = from_locale(l)
  if not v then
    error(string.format("lesson: unknown language '%s' (en or zh)", tostring(l)), 2)
  end
  return (lm.sys.lang(v))
end

--- Whether v is a text: a string, or a table of strings keyed by language.
function T.is_text(v)
  if type(v) == 'string' then return true end
  if type(v) ~= 'table' then return false end
  local n = 0
  for k, s in pairs(v) do
    if (k ~= 'en' and k ~= 'zh') or type(s) ~= 'string' then return false end
    n = n + 1
  end
  return n > 0
end

--- A text in language l (default the current one): the string, the table's entry for l, else
--- the other language's.
function T.pick(v, l)
  if type(v) ~= 'table' then return v end
  l = l or T.lang()
  return v[l] or v.en or v.zh
end

-- ---------------------------------------------------------------- widths

-- Code points that take two columns (East Asian Wide and Fullwidth), as ranges.
local wide = {
  { 0x1100, 0x115F }, { 0x2329, 0x232A }, { 0x2E80, 0x303E }, { 0x3041, 0x33FF },
  { 0x3400, 0x4DBF }, { 0x4E00, 0x9FFF }, { 0xA000, 0xA4CF }, { 0xA960, 0xA97F },
  { 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF }, { 0xFE10, 0xFE19 }, { 0xFE30, 0xFE6F },
  { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F300, 0x1F64F }, { 0x1F900, 0x1F9FF },
  { 0x20000, 0x2FFFD }, { 0x30000, 0x3FFFD },
}

--- Columns a code point takes: 0 (combining marks, zero-width), 1 or 2.
function T.cp_width(c)
  if c < 0x300 then return 1 end
  if (c >= 0x300 and c <= 0x36F) or (c >= 0x200B and c <= 0x200F) or (c >= 0xFE00 and c <= 0xFE0F) then
    return 0
  end
  for _, r in ipairs(wide) do
    if c < r[1] then return 1 end
    if c <= r[2] then return 2 end
  end
  return 1
end

--- The code points of s as an array of {char, codepoint}; a byte that is not valid UTF-8 is one
--- character of width 1.
local function chars(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    local len = b < 0x80 and 1 or b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC0 and 2 or 1
    local ok, c = pcall(utf8.codepoint, s, i)
    if not ok or len == 1 and b >= 0x80 then
      out[#out + 1] = { s:sub(i, i), 0x3F }
      i = i + 1
    else
      out[#out + 1] = { s:sub(i, i + len - 1), c }
      i = i + len
    end
  end
  return out
end
T.chars = chars

--- Columns s takes on a terminal (escape sequences of colours excluded).
function T.width(s)
  s = s:gsub('\27%[[%d;]*m', '')
  local w = 0
  for _, ch in ipairs(chars(s)) do w = w + T.cp_width(ch[2]) end
  return w
end

-- ---------------------------------------------------------------- wrapping

local closing = {}
for _, c in ipairs(chars('，。、；：？！）」』】》〉〕…—”’·％,.;:?!)]}%')) do closing[c[2]] = true end
local opening = {}
for _, c in ipairs(chars('（「『【《〈〔“‘([{')) do opening[c[2]] = true end

-- Tokens of a paragraph: {s=, w=, space=(a space before it), glue=(no break before it)}.
local function tokens(text)
  local out, word, ww, space, glue = {}, {}, 0, false, false
  local function flush()
    if #word > 0 then
      out[#out + 1] = { s = table.concat(word), w = ww, space = space, glue = glue }
      word, ww, space, glue = {}, 0, false, false
    end
  end
  for _, ch in ipairs(chars(text)) do
    local c, w = ch[2], T.cp_width(ch[2])
    if c == 0x20 or c == 0x09 then
      flush()
      space, glue = #out > 0, false
    elseif w == 2 then
      local prev = out[#out]
      local attach = #word > 0 and (closing[c] or false)
      if attach then
        word[#word + 1] = ch[1]; ww = ww + 2 -- "word，" stays together
        flush()
      else
        flush()
        out[#out + 1] = { s = ch[1], w = 2, space = space,
                          glue = closing[c] or (prev and not space and opening[prev.last or 0]) or false,
                          last = c }
        space, glue = false, false
      end
    else
      if #word == 0 and #out > 0 and not space then
        local prev = out[#out]
        -- latin right after a wide character: a break is allowed unless it is punctuation
        glue = closing[c] or (prev.last and opening[prev.last]) or false
      end
      word[#word + 1] = ch[1]
      ww = ww + w
    end
  end
  flush()
  return out
end

-- Cuts a token wider than width into pieces.
local function cut(tok, width)
  local pieces, cur, cw = {}, {}, 0
  for _, ch in ipairs(chars(tok.s)) do
    local w = T.cp_width(ch[2])
    if cw + w > width and #cur > 0 and not closing[ch[2]] then
      pieces[#pieces + 1] = { s = table.concat(cur), w = cw }
      cur, cw = {}, 0
    end
    cur[#cur + 1] = ch[1]
    cw = cw + w
  end
  if #cur > 0 then pieces[#pieces + 1] = { s = table.concat(cur), w = cw } end
  pieces[1].space, pieces[1].glue = tok.space, tok.glue
  return pieces
end

--- Wraps one paragraph (no newlines) to width columns: first line after `first`, the others
--- after `rest` (prefixes, counted in the width). Returns an array of lines.
function T.wrap_paragraph(text, width, first, rest)
  first, rest = first or '', rest or first or ''
  local lines, line = {}, {}
  local prefix = first
  local avail = math.max(8, width - T.width(prefix))
  local used = 0
  local function emit()
    local parts = {}
    for k, t in ipairs(line) do
      parts[#parts + 1] = (k > 1 and t.space) and ' ' .. t.s or t.s
    end
    lines[#lines + 1] = prefix .. table.concat(parts)
    prefix = rest
    avail = math.max(8, width - T.width(prefix))
    line, used = {}, 0
  end
  local list = {}
  for _, tok in ipairs(tokens(text)) do
    if tok.w > math.max(8, width - math.max(T.width(first), T.width(rest))) then
      for _, p in ipairs(cut(tok, math.max(8, width - math.max(T.width(first), T.width(rest))))) do
        list[#list + 1] = p
      end
    else
      list[#list + 1] = tok
    end
  end
  for _, tok in ipairs(list) do
    local need = (#line > 0 and tok.space) and tok.w + 1 or tok.w
    -- punctuation after the only token of a full line hangs past the width rather than start a line
    local hang = tok.glue and #line == 1
    if #line > 0 and used + need > avail and not hang then
      -- a token that may not start a line takes the last one of this line with it
      local carry = {}
      if tok.glue then
        -- back to a token that may start a line (a run of punctuation moves as one)
        while #line > 1 do
          local t = table.remove(line)
          table.insert(carry, 1, t)
          if not t.glue then break end
        end
      end
      emit()
      for _, t in ipairs(carry) do
        line[#line + 1] = t
        used = used + t.w
      end
      need = (#line > 0 and tok.space) and tok.w + 1 or tok.w
    end
    line[#line + 1] = tok
    used = used + need
  end
  if #line > 0 or #lines == 0 then emit() end
  return lines
end

-- The last and first code points of two strings.
local function last_cp(s)
  local cs = chars(s)
  return cs[#cs] and cs[#cs][2] or 0
end
local function first_cp(s)
  local cs = chars(s)
  return cs[1] and cs[1][2] or 0
end

--- Joins the lines of a paragraph: a space between them, none between two wide characters or
--- next to Chinese punctuation ("log2 n" + "步" keeps its space, "8、" + "1" does not get one).
local function join(lines)
  local out = lines[1] or ''
  for k = 2, #lines do
    local a, b = last_cp(out), first_cp(lines[k])
    local wa, wb = T.cp_width(a) == 2, T.cp_width(b) == 2
    if (wa and wb) or (wa and (closing[a] or opening[a])) or (wb and (closing[b] or opening[b])) then
      out = out .. lines[k]
    else
      out = out .. ' ' .. lines[k]
    end
  end
  return out
end

--- Lays a text out to width columns after indent: paragraphs wrapped, indented lines kept,
--- bullets with a hanging indent. Returns an array of lines and the set of the indices of the
--- lines kept as they were (verbatim[k] is true).
function T.layout(text, width, indent)
  indent = indent or ''
  local out, verbatim = {}, {}
  local para, bullet = {}, false
  local function flush()
    if #para == 0 then return end
    local body = join(para)
    local ls = bullet and T.wrap_paragraph(body, width, indent .. '- ', indent .. '  ')
        or T.wrap_paragraph(body, width, indent, indent)
    for _, l in ipairs(ls) do out[#out + 1] = l end
    para, bullet = {}, false
  end
  local src = text:gsub('\r', '')
  -- the common indentation of a long string is removed first ([[ ... ]] inside a table)
  local common
  for l in (src .. '\n'):gmatch('(.-)\n') do
    if l:match('%S') then
      local n = #l:match('^ *')
      common = common and math.min(common, n) or n
    end
  end
  common = common or 0
  local blank_pending = false
  for l in (src .. '\n'):gmatch('(.-)\n') do
    l = l:sub(common + 1):gsub('%s+$', '')
    if l == '' then
      flush()
      blank_pending = #out > 0
    else
      if blank_pending then
        out[#out + 1] = ''
        blank_pending = false
      end
      if l:match('^  ') then
        flush()
        out[#out + 1] = indent .. l
        verbatim[#out] = true
      elseif l:match('^[-*] ') then
        flush()
        para, bullet = { l:sub(3) }, true
      else
        para[#para + 1] = bullet and l:gsub('^%s+', '') or l
      end
    end
  end
  flush()
  return out, verbatim
end

-- ---------------------------------------------------------------- the terminal

--- The width to lay text out to: COLUMNS, else the terminal's (lm.sys.term_size when this build
--- has it), else 80; at most 100 (longer lines are hard to read), at least 30.
function T.columns()
  local n = tonumber(os.getenv('COLUMNS') or '')
  if not n then
    local lm = require 'lumen'
    local f = rawget(lm.sys, 'term_size')
    if f then n = f() end
  end
  n = n or 80
  return math.max(30, math.min(100, math.floor(n)))
end

--- Colours: paint(code, s) when the REPL says its terminal takes them (lumen.repl.colour).
function T.paint(code, s)
  local repl = package.loaded['lumen.repl']
  if repl and repl.colour then return '\27[' .. code .. 'm' .. s .. '\27[0m' end
  return s
end

--- Paints `code spans` of a laid-out line (the backticks stay, so widths do not change).
function T.paint_code(line)
  local repl = package.loaded['lumen.repl']
  if not (repl and repl.colour) then return line end
  return (line:gsub('`([^`]+)`', function(s) return '\27[36m`' .. s .. '`\27[0m' end))
end

return T
