-- Every lesson under lessons/ walked headless, step by step (lesson.verify, what
-- `lumen --check-lesson` runs): each step's code runs in a fresh environment and prints its
-- `expect`; its scene renders offscreen (the frames drawn are counted); each exercise refuses
-- the untouched state and every `wrong` answer, with a message in both languages, and accepts
-- its `solution`; every text lays out in English and in Chinese. Lumen's lessons must have both
-- languages everywhere (a warning is a failure here), and the lessons of issues 20, 21 and 31 at
-- least 6 steps, a scene, 2 exercises.
-- Lessons added by anyone are walked too: the list comes from the directory.
-- ctest runs this with SDL_VIDEODRIVER=offscreen (CMakeLists.txt, label lessons).
local test = require 'lumen.test'
local F = require 'lumen.lesson_format'

local dir = lesson.dirs()[1]
local sanitized = lm.build_info().sanitize

-- Under ASan + UBSan (slower) every lesson is walked too: the walk is what drives the emulator,
-- the sanitizer of student kernels and the scenes the way students do.
local lessons = {}
for _, e in ipairs(lesson.catalog()) do
  if e.path:sub(1, #dir + 1) == dir .. '/' then lessons[#lessons + 1] = e end
end

test.case('the lessons directory has lessons, and every file in it is named <NN>-<slug>.lua', function()
  test.ok(#lessons >= 1, 'no lessons found in ' .. dir)
  for _, course in ipairs(lm.sys.listdir(dir) or {}) do
    if lm.sys.isdir(dir .. '/' .. course) then
      for _, f in ipairs(lm.sys.listdir(dir .. '/' .. course)) do
        test.ok(f:match('^%d+%-[%w_%-]+%.lua$'), course .. '/' .. f .. ' is not named <NN>-<slug>.lua')
      end
    end
  end
end)

local issue20 = {
  ['ece408/16-scan'] = true, ['ece408/17-brent-kung'] = true, ['ece408/18-histogram'] = true,
  ['ece408/19-sparse'] = true, ['ece408/26-patterns'] = true,
}

local issue21 = {
  ['dlsys/07-abstractions'] = true, ['dlsys/09-normalization'] = true,
  ['dlsys/10-convolution'] = true, ['aics/02-regression-to-mlp'] = true, ['aics/03-cnn'] = true,
  ['ece408/21-22-gpu-in-pc'] = true,
}

-- issue 31: the framework and compiler lessons of AICS chapters 4-5
local issue31 = {
  ['aics/04-framework'] = true,
  ['aics/05-compiler'] = true,
}

-- Frames drawn during a walk: every step with a scene must draw at least one (offscreen; a
-- step's code may draw more).
local frames = 0
local viz = F.scenes() and require('viz') or nil
if viz then
  local redraw = viz.redraw
  viz.redraw = function(...)
    frames = frames + 1
    return redraw(...)
  end
end

for _, e in ipairs(lessons) do
  test.case(e.name .. ': every step walked (code, scene, exercises) in English and Chinese', function()
    local t0 = lm.sys.clock()
    frames = 0
    local ok, problems, warnings = lesson.verify(e.path)
    local drawn = frames
    test.ok(ok, table.concat(problems or {}, '\n'))
    test.eq(warnings, {}, 'both languages everywhere: ' .. table.concat(warnings, '\n'))
    local l = assert(F.load(e.path))
    test.eq(F.languages(l), { 'en', 'zh' })
    if viz then
      local with_scene = 0
      for _, s in ipairs(l.steps) do if s.scene ~= nil then with_scene = with_scene + 1 end end
      test.ok(drawn >= with_scene, string.format('%s: %d frames drawn offscreen for %d steps with a scene',
        e.name, drawn, with_scene))
    end
    if issue20[e.name] or issue21[e.name] or issue31[e.name] then
      local scenes, exercises = 0, 0
      for _, s in ipairs(l.steps) do
        if s.scene then scenes = scenes + 1 end
        if s.exercise then exercises = exercises + 1 end
      end
      test.ok(#l.steps >= 6, e.name .. ': ' .. #l.steps .. ' steps, at least 6')
      test.ok(scenes >= 1, e.name .. ': no scene')
      test.ok(exercises >= 2, e.name .. ': ' .. exercises .. ' exercises, at least 2')
    end
    io.stderr:write(string.format('test_lessons: %s walked in %.2f s%s\n', e.name, lm.sys.clock() - t0,
      sanitized and ' (ASan build)' or ''))
  end)
end


for _, issue in ipairs({ { 20, issue20 }, { 21, issue21 }, { 31, issue31 } }) do
  test.case('the lessons of issue ' .. issue[1] .. ' are all there', function()
    local have = {}
    for _, e in ipairs(lessons) do have[e.name] = true end
    for name in pairs(issue[2]) do test.ok(have[name], name .. ' is missing') end
  end)
end
