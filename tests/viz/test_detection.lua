--[[
test_detection.lua — the detection scene (issue 41), offscreen: for boxes whose verdicts are
known by construction, the step label's TP / FP / missed and the boxes' states (TP, FP,
suppressed) are those; the candidates drawn at step 1 are all the boxes given and those of step 2
the ones kept (by the keep list given, or by lm.vision.nms per class when none is); hovering a box
tells its score and IoU; the demonstration draws every step and --snapshot renders it; bad input
is named. Read next: src/viz/scenes/detection.c.
]]
local test = require 'lumen.test'
local here = debug.getinfo(1, 'S').source:match('^@(.*/)') or 'tests/viz/'
local check = dofile(here .. 'scene_check.lua')
local cells = check.cells

-- Two 32 x 32 images. Image 1: a 'square' at (4, 4)-(14, 14) and a 'ring' at (18, 18)-(30, 28);
-- image 2: a 'square' at (10, 2)-(20, 12). Predictions on image 1: the square twice (IoU with it
-- 1 and 0.81: the second is suppressed by NMS at 0.5), the ring as a 'square' (wrong class: FP);
-- on image 2 nothing near the truth (a miss) and one box far away (FP).
local function data(with_keep)
  local pred1 = { boxes = { { 4, 4, 14, 14 }, { 5, 5, 14, 14 }, { 18, 18, 30, 28 } }, scores = { 0.9, 0.8, 0.7 },
    classes = { 1, 1, 1 } }
  local pred2 = { boxes = { { 22, 22, 30, 30 } }, scores = { 0.6 }, classes = { 2 } }
  if with_keep then pred1.keep, pred2.keep = { 1, 3 }, { 1 } end
  return {
    images = lm.rand(2, 32, 32),
    truth = { { boxes = { { 4, 4, 14, 14 }, { 18, 18, 30, 28 } }, classes = { 1, 2 } },
      { boxes = { { 10, 2, 20, 12 } }, classes = { 1 } } },
    pred = { pred1, pred2 },
    classes = { 'square', 'ring' },
    source = 'test boxes',
  }
end

test.case('detection: the verdicts of boxes known by construction', function()
  for _, with_keep in ipairs({ true, false }) do
    viz.show('detection', data(with_keep))
    local st = viz.state()
    test.eq(st.scene, 'detection')
    test.eq(st.steps, 3)
    test.ok(st.title:find('2 images, 3 objects, 4 candidate boxes; test boxes', 1, true), st.title)
    viz.seek(0)
    test.eq(#cells { kind = 'truth' }, 3)
    test.eq(#cells { kind = 'box' }, 0)
    viz.seek(1)
    local cand = cells { kind = 'box' }
    test.eq(#cand, 4, 'every candidate at step 1')
    local suppressed = cells { kind = 'box', state = 'candidate suppressed' }
    test.eq(#suppressed, 1)
    test.eq(suppressed[1].index, 1, 'the second square (0-based 1) is suppressed')
    viz.seek(2)
    test.ok(viz.state().step_label:find('3 kept; at IoU >= 0.50: 1 TP, 2 FP, 2 missed', 1, true), viz.state().step_label)
    local tp, fp = cells { kind = 'box', state = 'TP' }, cells { kind = 'box', state = 'FP' }
    test.eq(#tp, 1)
    test.eq(tp[1].index, 0)
    test.eq(#fp, 2)
    test.eq(#cells { kind = 'truth', state = 'missed' }, 2)
    test.eq(#cells { kind = 'truth', state = 'matched' }, 1)
    local p = viz.pick(fp[1].x + 1, fp[1].y + fp[1].h / 2)
    test.ok(p and p.text:find('a false positive', 1, true), p and p.text)
    p = viz.pick(tp[1].x + 1, tp[1].y + tp[1].h / 2)
    test.ok(p and p.text:find('score 0.900', 1, true) and p.text:find('1.000', 1, true), p and p.text)
    test.ok(check.panel_ink() > 50, 'the panel has text')
  end
  -- a lower threshold: the ring's box is still the wrong class, so still FP
  local d = data(true)
  d.iou = 0.1
  viz.show('detection', d)
  viz.seek(2)
  test.ok(viz.state().step_label:find('1 TP, 2 FP, 2 missed', 1, true), viz.state().step_label)
end)

test.case('detection: the demonstration draws every step; --snapshot', function()
  viz.scene('detection')
  test.ok(viz.state().title:find('random boxes: a demonstration', 1, true))
  for step = 0, 2 do
    viz.seek(step)
    test.ok(#cells { kind = 'truth' } > 0)
    test.ok(check.panel_ink() > 50)
  end
  local a = check.snap('det-a')
  viz.scene('detection', { seed = 3 })
  test.ok(check.snap('det-b') ~= a, 'another seed, another picture')
  local exe, tmp = lm.sys.executable(), check.tmp
  for s = 0, 2 do
    local out = string.format('%s/det-%d.png', tmp, s)
    local ok = os.execute(string.format("SDL_VIDEODRIVER=offscreen '%s' --snapshot detection '%s' --step %d 2>&1", exe, out, s))
    test.ok(ok and #check.read(out) > 1000, '--snapshot detection --step ' .. s)
  end
end)

test.case('detection: bad input is named by the scene', function()
  local d = data(true)
  d.images = lm.rand(17, 8, 8)
  test.raises(function() viz.show('detection', d) end, 'the detection scene takes 1 to 16 grey images')
  d = data(true)
  d.truth[1].boxes[1] = { 14, 4, 4, 14 }
  test.raises(function() viz.show('detection', d) end, 'the detection scene: truth[1] box 1 is (14, 4, 4, 14): corners must be x1 <= x2')
  d = data(true)
  d.pred[1].classes[1] = 3
  test.raises(function() viz.show('detection', d) end, 'a box has class 3; classes 1..2 (square, ring)')
  d = data(true)
  d.pred[1].scores = { 1 }
  test.raises(function() viz.show('detection', d) end, 'pred[1].scores must hold 3 values')
  d = data(true)
  d.pred[1].keep = { 4 }
  test.raises(function() viz.show('detection', d) end, 'pred[1].keep has index 4 of 3 boxes')
  d = data(true)
  d.pred[2].scores = nil
  test.raises(function() viz.show('detection', d) end, 'pred[2].scores is missing')
  d = data(true)
  d.iou = 0
  test.raises(function() viz.show('detection', d) end, 'iou must be in (0, 1]')
  d = data(true)
  d.truth = { {}, {}, {} }
  test.raises(function() viz.show('detection', d) end, 'truth has 3 entries for 2 images')
  test.raises(function() viz.show('detection', lm.ones(3)) end, 'the detection scene takes {images =, truth =, pred =}, got a tensor')
end)

test.case('(the window closed for the next file)', function() viz.close() end)
