-- Code the lessons ship, tested where a lesson's walk does not reach it: aics/03-architectures'
-- ViT patches refuse an image that is not a whole number of patches (issue 41's bad input) and
-- agree with the student's answer (step 8's solution) on sizes that are.
local test = require 'lumen.test'

local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
local L = assert(lesson.load(here .. '../../lessons/aics/03-architectures.lua'))

local function step_with(pattern)
  for _, s in ipairs(L.steps) do
    if s.code and s.code:find(pattern) then return s end
  end
end

test.case('aics/03-architectures: the ViT patches refuse a size the patch does not divide', function()
  local s = step_with('local function patches')
  test.ok(s, 'the step defining patches')
  local src = s.code:match('(local function patches.-\nend\n)')
  test.ok(src, 'its definition')
  local patches = assert(load(src .. 'return patches', '=patches', 't', _G))()
  test.raises(function() patches(lm.zeros(2, 1, 30, 28), 4) end, 'patches: an image of 30 x 28 is not a whole number of 4 x 4 patches')
  test.raises(function() patches(lm.zeros(2, 1, 28, 27), 7) end, 'an image of 28 x 27')
  -- on sizes it divides: step 8's solution, patch by patch
  local ex = step_with('function patchify').exercise
  local env = setmetatable({}, { __index = _G })
  assert(load(ex.solution, '=solution', 't', env))()
  local x = lm.randn(3, 2, 12, 8)
  test.eq((patches(x, 4) - env.patchify(x, 4)):abs():max():item(), 0)
  test.eq(patches(x, 4):shape(), { 3, 6, 32 })
end)
