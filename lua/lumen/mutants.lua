--[[
lumen.mutants — plausible wrong answers made from a right one: the mistakes students make in the
course's kernels, applied one at a time to a solution's source, so that a lesson's check can be
tested against every one of them and not only against the wrong answers its author thought of.

  local mutants = require 'lumen.mutants'
  for _, m in ipairs(mutants.generate(solution_code)) do  -- {op=, line=, what=, code=}
    ... run m.code, then the exercise's check: it must refuse it ...
  end

The operators (each mutant changes one place of the first function of the code, the kernel):
  sync     drop one t:sync() (a __syncthreads)
  atomic   an atomic update made plain: t:atomic_add(a, i, v) -> a[i] = a[i] + v
  compare  a guard's comparison off by one: < <-> <=, > <-> >=
  index    an index off by one: a[i] -> a[(i) + 1] and a[(i) - 1]
  bound    a numeric for loop's last (or first) value off by one: for k = 0, n - 1 -> 0, (n - 1) + 1
  zero     a zero-fill dropped: the statement a[i] = 0 removed
  stride   a stride loop run once: while c do ... end -> if c then ... end (one element per thread)
The source is read by a small Lua lexer (names, numbers, strings, long strings, comments,
operators), so strings and comments are never mutated, and the result is always valid Lua.
Mutants that come out the same text are given once.
Read next: tests/lessons/test_mutants.lua (the corpus run through every kernel exercise).
]]
local M = {}

local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or repeat
  return then true until while]]):gmatch('%a+') do KEYWORDS[w] = true end

-- Longest first: the lexer takes the first that matches at a position.
local OPERATORS = { '...', '..', '==', '~=', '<=', '>=', '<<', '>>', '//', '::',
  '+', '-', '*', '/', '%', '^', '#', '&', '~', '|', '<', '>', '=', '(', ')', '{', '}', '[', ']',
  ';', ':', ',', '.' }

--- The tokens of src: {kind = 'name'|'keyword'|'number'|'string'|'comment'|'op'|'space', text,
--- s, e (byte positions), line}. Raises on a character Lua does not accept.
function M.lex(src)
  local toks, i, n, line = {}, 1, #src, 1
  local function add(kind, e)
    local text = src:sub(i, e)
    toks[#toks + 1] = { kind = kind, text = text, s = i, e = e, line = line }
    for _ in text:gmatch('\n') do line = line + 1 end
    i = e + 1
  end
  local function long_bracket(at)
    local eq = src:match('^%[(=*)%[', at)
    if not eq then return nil end
    local close = src:find(']' .. eq .. ']', at, true)
    if not close then error('mutants: an unfinished long string or comment at line ' .. line, 0) end
    return close + #eq + 1
  end
  while i <= n do
    local c = src:sub(i, i)
    if c:match('%s') then
      add('space', src:find('[^%s]', i) and src:find('[^%s]', i) - 1 or n)
    elseif src:sub(i, i + 1) == '--' then
      local e = long_bracket(i + 2)
      add('comment', e or (src:find('\n', i, true) or n + 1) - 1)
    elseif c:match('[%a_]') then
      local e = select(2, src:find('^[%w_]+', i))
      add(KEYWORDS[src:sub(i, e)] and 'keyword' or 'name', e)
    elseif c:match('%d') or (c == '.' and src:sub(i + 1, i + 1):match('%d')) then
      local e = select(2, src:find('^0[xX][%x%.]+[pP][%+%-]?%d+', i)) or select(2, src:find('^0[xX][%x%.]+', i))
        or select(2, src:find('^[%d%.]+[eE][%+%-]?%d+', i)) or select(2, src:find('^[%d%.]+', i))
      add('number', e)
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = src:sub(j, j)
        if d == '\\' then j = j + 2
        elseif d == c then break
        elseif d == '\n' then error('mutants: an unfinished string at line ' .. line, 0)
        else j = j + 1 end
      end
      add('string', j)
    elseif c == '[' and long_bracket(i) then
      add('string', long_bracket(i))
    else
      local op
      for _, o in ipairs(OPERATORS) do
        if src:sub(i, i + #o - 1) == o then op = o break end
      end
      if not op then error(string.format("mutants: unexpected character '%s' at line %d", c, line), 0) end
      add('op', i + #op - 1)
    end
  end
  return toks
end

-- The indices of the significant tokens (not space or comment), in order.
local function significant(toks)
  local sig = {}
  for k, t in ipairs(toks) do
    if t.kind ~= 'space' and t.kind ~= 'comment' then sig[#sig + 1] = k end
  end
  return sig
end

-- The span [first, last] (positions in sig) of the first function of the code: from the keyword
-- `function` to its `end`.
local function first_function(toks, sig)
  local start
  for p, k in ipairs(sig) do
    if toks[k].text == 'function' and toks[k].kind == 'keyword' then start = p break end
  end
  if not start then return nil end
  local depth, pending = 0, 0
  for p = start, #sig do
    local t = toks[sig[p]]
    if t.kind == 'keyword' then
      local w = t.text
      if w == 'function' or w == 'if' or w == 'repeat' then depth = depth + 1
      elseif w == 'while' or w == 'for' then depth = depth + 1; pending = pending + 1
      elseif w == 'do' then
        if pending > 0 then pending = pending - 1 else depth = depth + 1 end
      elseif w == 'end' or w == 'until' then
        depth = depth - 1
        if depth == 0 then return start, p end
      end
    end
  end
  return nil
end

-- The position in sig of the bracket or parenthesis that closes the one at position p.
local function closing(toks, sig, p)
  local open = toks[sig[p]].text
  local close = ({ ['('] = ')', ['['] = ']', ['{'] = '}' })[open]
  local depth = 0
  for q = p, #sig do
    local t = toks[sig[q]].text
    if toks[sig[q]].kind == 'op' then
      if t == '(' or t == '[' or t == '{' then depth = depth + 1
      elseif t == ')' or t == ']' or t == '}' then
        depth = depth - 1
        if depth == 0 then
          assert(t == close, 'mutants: unbalanced brackets')
          return q
        end
      end
    end
  end
  error('mutants: unbalanced brackets', 0)
end

-- The source text of the significant tokens from position a to b (with what lies between them).
local function text_between(src, toks, sig, a, b)
  return src:sub(toks[sig[a]].s, toks[sig[b]].e)
end

-- Whether the token at position p (in sig) starts a statement: what comes before it ends one.
local function starts_statement(toks, sig, p, first)
  if p <= first + 1 then return true end
  local prev = toks[sig[p - 1]]
  if prev.kind == 'keyword' then
    return ({ ['then'] = true, ['do'] = true, ['else'] = true, ['end'] = true, ['repeat'] = true,
              ['break'] = true })[prev.text] or false
  end
  if prev.kind == 'op' then return prev.text == ')' or prev.text == ']' or prev.text == ';' or prev.text == '}' end
  return prev.kind == 'name' or prev.kind == 'number' or prev.kind == 'string'
end

--- The mutants of code (a string holding a kernel function, possibly more after it): an array of
--- {op = 'sync'|'atomic'|'compare'|'index'|'bound'|'zero'|'stride', line = (in code), what =
--- (a short description), code = (the mutated code)}, each differing from code in one place, no
--- two alike. opts.ops restricts the operators ({sync = true, ...}).
function M.generate(code, opts)
  local ops = opts and opts.ops
  local toks = M.lex(code)
  local sig = significant(toks)
  local first, last = first_function(toks, sig)
  if not first then return {} end
  local out, seen = {}, { [code] = true }
  -- one replacement: bytes [s, e] of code become rep
  local named = {} -- how many mutants have had a description: the second is "... (2nd)"
  local function mutant(op, line, what, s, e, rep)
    if ops and not ops[op] then return end
    local c = code:sub(1, s - 1) .. rep .. code:sub(e + 1)
    if seen[c] then return end
    seen[c] = true
    named[what] = (named[what] or 0) + 1
    if named[what] > 1 then
      local k = named[what]
      what = string.format('%s (%d%s)', what, k, k == 2 and 'nd' or k == 3 and 'rd' or 'th')
    end
    out[#out + 1] = { op = op, line = line, what = what, code = c }
  end
  local function tok(p) return toks[sig[p]] end
  for p = first, last do
    local t = tok(p)
    -- sync: NAME : sync ( )
    if t.kind == 'op' and t.text == ':' and p > first and tok(p + 1).text == 'sync' and tok(p + 2).text == '('
        and tok(p + 3).text == ')' then
      local a = tok(p - 1)
      mutant('sync', a.line, 'no ' .. text_between(code, toks, sig, p - 1, p + 3) .. ' at line ' .. a.line,
        a.s, tok(p + 3).e, '')
    end
    -- atomic: NAME : atomic_add ( A , I , V )
    if t.kind == 'op' and t.text == ':' and p > first and tok(p + 1).text == 'atomic_add' and tok(p + 2).text == '(' then
      local open, close = p + 2, closing(toks, sig, p + 2)
      local args, from, depth = {}, open + 1, 0
      for q = open + 1, close - 1 do
        local x = tok(q)
        if x.kind == 'op' and (x.text == '(' or x.text == '[' or x.text == '{') then depth = depth + 1
        elseif x.kind == 'op' and (x.text == ')' or x.text == ']' or x.text == '}') then depth = depth - 1
        elseif x.kind == 'op' and x.text == ',' and depth == 0 then
          args[#args + 1] = text_between(code, toks, sig, from, q - 1)
          from = q + 1
        end
      end
      if from <= close - 1 then args[#args + 1] = text_between(code, toks, sig, from, close - 1) end
      if #args == 3 then
        local a, i, v = args[1], args[2], args[3]
        local rep
        if starts_statement(toks, sig, p - 1, first) then
          rep = string.format('%s[%s] = %s[%s] + (%s)', a, i, a, i, v)
        else -- its old value is used: the same update, plain, in an expression
          rep = string.format('(function() local old = %s[%s]; %s[%s] = old + (%s); return old end)()', a, i, a, i, v)
        end
        mutant('atomic', tok(p - 1).line, 'a plain update instead of ' .. text_between(code, toks, sig, p - 1, close)
          .. ' at line ' .. tok(p - 1).line, tok(p - 1).s, tok(close).e, rep)
        -- the atomic's index off by one (a[i] spelled as the call's second argument)
        local s2, e2 = code:find(i, tok(open).e + #a + 1, true)
        for _, d in ipairs({ '+ 1', '- 1' }) do
          mutant('index', tok(p - 1).line, string.format('t:atomic_add(%s, (%s) %s, ...) at line %d', a, i, d,
            tok(p - 1).line), s2, e2, string.format('(%s) %s', i, d))
        end
      end
    end
    -- compare: < <= > >=
    if t.kind == 'op' and (t.text == '<' or t.text == '<=' or t.text == '>' or t.text == '>=') then
      local swap = ({ ['<'] = '<=', ['<='] = '<', ['>'] = '>=', ['>='] = '>' })[t.text]
      mutant('compare', t.line, string.format('%s instead of %s at line %d', swap, t.text, t.line), t.s, t.e, swap)
    end
    -- index: [expr] after a name, ] or ): an index, not a table constructor's key
    if t.kind == 'op' and t.text == '[' and p > first then
      local prev = tok(p - 1)
      if prev.kind == 'name' or (prev.kind == 'op' and (prev.text == ']' or prev.text == ')')) then
        local close = closing(toks, sig, p)
        if close > p + 1 then
          local expr = text_between(code, toks, sig, p + 1, close - 1)
          for _, d in ipairs({ '+ 1', '- 1' }) do
            mutant('index', t.line, string.format('%s[(%s) %s] at line %d', prev.text == ']' and '...' or prev.text,
              expr, d, t.line), tok(p + 1).s, tok(close - 1).e, string.format('(%s) %s', expr, d))
          end
        end
      end
    end
    -- bound: for v = a, b [, c] do
    if t.kind == 'keyword' and t.text == 'for' and tok(p + 2).text == '=' then
      local q, depth, commas = p + 3, 0, {}
      while q <= last do
        local x = tok(q)
        if x.kind == 'keyword' and x.text == 'do' and depth == 0 then break end
        if x.kind == 'op' and (x.text == '(' or x.text == '[' or x.text == '{') then depth = depth + 1
        elseif x.kind == 'op' and (x.text == ')' or x.text == ']' or x.text == '}') then depth = depth - 1
        elseif x.kind == 'op' and x.text == ',' and depth == 0 then commas[#commas + 1] = q end
        q = q + 1
      end
      if #commas >= 1 then
        local a_from, a_to = p + 3, commas[1] - 1
        local b_from, b_to = commas[1] + 1, (commas[2] or q) - 1
        local b = text_between(code, toks, sig, b_from, b_to)
        local a = text_between(code, toks, sig, a_from, a_to)
        mutant('bound', t.line, string.format('for ... = %s, (%s) + 1 at line %d', a, b, t.line),
          tok(b_from).s, tok(b_to).e, '(' .. b .. ') + 1')
        mutant('bound', t.line, string.format('for ... = %s, (%s) - 1 at line %d', a, b, t.line),
          tok(b_from).s, tok(b_to).e, '(' .. b .. ') - 1')
        mutant('bound', t.line, string.format('for ... = (%s) + 1, %s at line %d', a, b, t.line),
          tok(a_from).s, tok(a_to).e, '(' .. a .. ') + 1')
      end
    end
    -- zero: NAME [ expr ] = 0 as a statement
    if t.kind == 'name' and tok(p + 1).text == '[' and starts_statement(toks, sig, p, first) then
      local close = closing(toks, sig, p + 1)
      local eq, zero, after = tok(close + 1), tok(close + 2), tok(close + 3)
      if eq and eq.text == '=' and zero and zero.kind == 'number' and tonumber(zero.text) == 0
          and not (after and after.kind == 'op' and not (after.text == ';' or after.text == ')')) then
        local e = zero.e
        if after and after.text == ';' then e = after.e end
        mutant('zero', t.line, string.format('no %s at line %d', text_between(code, toks, sig, p, close + 2), t.line),
          t.s, e, '')
      end
    end
    -- stride: while c do ... end -> if c then ... end
    if t.kind == 'keyword' and t.text == 'while' then
      local q, depth = p + 1, 0
      while q <= last do
        local x = tok(q)
        if x.kind == 'keyword' and x.text == 'do' and depth == 0 then break end
        if x.kind == 'op' and (x.text == '(' or x.text == '[' or x.text == '{') then depth = depth + 1
        elseif x.kind == 'op' and (x.text == ')' or x.text == ']' or x.text == '}') then depth = depth - 1 end
        q = q + 1
      end
      if q <= last then
        local cond = text_between(code, toks, sig, p + 1, q - 1)
        mutant('stride', t.line, string.format('if %s then (once) instead of while at line %d', cond, t.line),
          t.s, tok(q).e, 'if ' .. cond .. ' then')
      end
    end
  end
  return out
end

--- The operators, in the order generate tries them.
M.ops = { 'sync', 'atomic', 'compare', 'index', 'bound', 'zero', 'stride' }

return M
