-- The mutation corpus (issue 28): every exercise whose solution defines a function is checked
-- against the mutants of that function (lumen.mutants: a dropped t:sync() or atomic, a guard's <
-- for <=, an index or a loop bound off by one, a dropped zero-fill, a stride loop run once), each
-- run in the lesson's environment at its step and checked as a student's answer would be: every
-- mutant must be refused, except those the exercise lists as right answers (exercise.equivalent,
-- each with its reason), which must be accepted. A mutant that loops forever is stopped by the
-- check's budget (lesson.budget) and refused. The table of mutants generated and refused per
-- lesson is printed (the issue's measure).
-- Under ASan + UBSan (slower) every fourth mutant runs: the sanitizers look at the emulator and
-- the checks on odd kernels, the release run is the corpus.
-- ctest runs this with SDL_VIDEODRIVER=offscreen (CMakeLists.txt, label lessons).
local test = require 'lumen.test'

local dir = lesson.dirs()[1]
local sanitized = lm.build_info().sanitize
local every = sanitized and 4 or 1

local lessons = {}
for _, e in ipairs(lesson.catalog()) do
  if e.path:sub(1, #dir + 1) == dir .. '/' then lessons[#lessons + 1] = e end
end

local rows = {}
for _, e in ipairs(lessons) do
  test.case(e.name .. ': every mutant of every function exercise refused (the right answers among them accepted)', function()
    local t0 = lm.sys.clock()
    local k = 0
    local report = lesson.mutants(e.path, { sample = function() k = k + 1; return k % every == 0 end })
    test.eq(report.error, nil, e.name .. ': the run stopped')
    local gen, ref, eqv, surv = 0, 0, 0, 0
    for _, x in ipairs(report.exercises) do
      gen, ref, eqv, surv = gen + x.generated, ref + x.refused, eqv + x.equivalent, surv + #x.survivors
      for _, m in ipairs(x.survivors) do
        test.ok(false, string.format('%s step %d accepts the mutant [%s] %s', e.name, x.step, m.op, m.what))
      end
      for _, m in ipairs(x.wrongly_refused) do
        test.ok(false, string.format('%s step %d refuses the right answer [%s] %s', e.name, x.step, m.op, m.what))
      end
    end
    rows[#rows + 1] = { e.name, #report.exercises, gen, ref, eqv, surv, lm.sys.clock() - t0 }
  end)
end

test.case('the corpus table', function()
  local out = { string.format('\n%-28s %9s %8s %8s %10s %9s %7s', 'lesson', 'exercises', 'mutants', 'refused',
    'equivalent', 'accepted', 'seconds') }
  local tg, tr, te, ts = 0, 0, 0, 0
  for _, r in ipairs(rows) do
    out[#out + 1] = string.format('%-28s %9d %8d %8d %10d %9d %7.1f', r[1], r[2], r[3], r[4], r[5], r[6], r[7])
    tg, tr, te, ts = tg + r[3], tr + r[4], te + r[5], ts + r[6]
  end
  out[#out + 1] = string.format('%-28s %9s %8d %8d %10d %9d   (%s)', 'all', '', tg, tr, te, ts,
    every == 1 and 'every mutant' or ('every ' .. every .. 'th mutant, sanitizer build'))
  out[#out + 1] = string.format('refused: %d of %d wrong mutants (%.1f%%)', tr, tg - te, tg - te > 0 and 100 * tr / (tg - te) or 100)
  io.stderr:write(table.concat(out, '\n'), '\n')
  test.ok(tg > 0, 'no mutants were generated')
  test.eq(ts, 0, 'mutants accepted')
end)
