--[[
AI Computing Systems, chapter 3: object detection, following the notes — classification, then
localisation + classification, then detection (several objects, labels and bounding boxes); the
two families (two-stage: the R-CNN series, region proposals first and a CNN classifier on each;
one-stage: YOLO and SSD, location and class straight from the image) and the two measures (IoU and
mAP). The student writes IoU (checked on random and degenerate boxes against lm.vision.box_iou),
non-maximum suppression (checked on clustered random boxes, ties and an IoU exactly at the
threshold against lm.vision.nms) and the average precision of one class (VOC all-points
interpolation, checked against the lesson's own reference on random sets), then a tiny YOLO-style
one-stage detector is trained live on shapes drawn over Fashion-MNIST backgrounds and its mAP@0.5
is measured on a held-out set.
Steps 1, 3, 5 and 6 show the `detection` scene (step 6: the detector's boxes, updated while it
trains).
Format: docs/lessons.md.
]]
local say = lesson.say

-- ---------------------------------------------------------------- shared helpers

-- A seeded LCG in [0, 1) (the checks do not touch lm's or math's random state).
local lcg = lesson.lcg

local function box_text(b)
  return '{' .. lesson.show(b[1]) .. ', ' .. lesson.show(b[2]) .. ', ' .. lesson.show(b[3]) .. ', '
    .. lesson.show(b[4]) .. '}'
end

local function list_text(t)
  local p = {}
  for i, v in ipairs(t) do p[i] = lesson.show(v) end
  return '{' .. table.concat(p, ', ') .. '}'
end

-- IoU of two boxes by lm.vision.box_iou (float64): the checks' reference.
local function iou_lm(a, b)
  return lm.vision.box_iou(lm.tensor({ a }, { dtype = 'float64' }), lm.tensor({ b }, { dtype = 'float64' })):item()
end

-- IoU in plain Lua (the same rule as lm.vision.box_iou), with a mistake switched on (v).
local function iou_variant(a, b, v)
  v = v or {}
  local d = v.plus1 and 1 or 0
  local w = math.min(a[3], b[3]) - math.max(a[1], b[1]) + d
  local h = math.min(a[4], b[4]) - math.max(a[2], b[2]) + d
  if not v.noclamp then w, h = math.max(w, 0), math.max(h, 0) end
  local inter = w * h
  local aa = (a[3] - a[1] + d) * (a[4] - a[2] + d)
  local ab = (b[3] - b[1] + d) * (b[4] - b[2] + d)
  local union = aa + ab - (v.nosub and 0 or inter)
  if v.over_a then union = aa elseif v.over_b then union = ab elseif v.over_min then union = math.min(aa, ab) end
  if union == 0 then return v.nan and 0 / 0 or 0 end
  return inter / union
end

-- ---------------------------------------------------------------- IoU check

local IOU_MISTAKES = {
  { { noclamp = true }, say('it matches the IoU without clamping the overlap at 0: for boxes apart, min(x2) - max(x1) is negative, and two negatives make a positive "intersection"',
    '它和没有把重叠宽高截到 0 的 IoU 一样：两个框不相交时 min(x2) - max(x1) 是负数，两个负数相乘会得到一个正的“交集”') },
  { { nosub = true }, say('it matches area(a) + area(b) as the union: the intersection is counted twice there, subtract it once',
    '它和把 area(a) + area(b) 当作并集的结果一样：那样交集被算了两次，要减去一次') },
  { { over_a = true }, say('it matches intersection / area(a): IoU divides by the union of the two boxes, not by the area of one',
    '它和 交集 / area(a) 一样：IoU 除以两个框的并集，而不是其中一个框的面积') },
  { { over_b = true }, say('it matches intersection / area(b): IoU divides by the union of the two boxes, not by the area of one',
    '它和 交集 / area(b) 一样：IoU 除以两个框的并集，而不是其中一个框的面积') },
  { { plus1 = true }, say('it matches widths of x2 - x1 + 1 (pixel counting, old VOC code): here boxes are corners in continuous coordinates, width = x2 - x1 (as lm.vision.box_iou)',
    '它和宽度取 x2 - x1 + 1（按像素个数数，旧的 VOC 代码）一样：这里框是连续坐标下的角点，宽度 = x2 - x1（与 lm.vision.box_iou 一致）') },
  { { over_min = true }, say('it matches intersection / the smaller area: IoU divides by the union',
    '它和 交集 / 较小的面积 一样：IoU 除以并集') },
}

local function iou_cases()
  local cases = {
    { { 1, 2, 5, 7 }, { 1, 2, 5, 7 }, say('two identical boxes', '两个相同的框') },
    { { 0, 0, 2, 2 }, { 3, 3, 5, 5 }, say('two boxes apart (diagonally)', '两个分开的框（斜对角）') },
    { { 0, 0, 2, 4 }, { 3, 1, 6, 3 }, say('two boxes apart (side by side)', '两个分开的框（左右并排）') },
    { { 0, 0, 2, 2 }, { 2, 0, 4, 2 }, say('two boxes touching along an edge', '两个沿一条边相接的框') },
    { { 0, 0, 10, 10 }, { 2, 3, 5, 7 }, say('a box inside another', '一个框套在另一个里面') },
    { { 0, 0, 4, 2 }, { 1, 1, 3, 5 }, say('two boxes overlapping', '两个部分重叠的框') },
    { { 2, 1, 2, 5 }, { 2, 1, 2, 5 }, say('two identical boxes of zero width (area 0)', '两个相同的、宽度为 0 的框（面积为 0）') },
    { { 1, 3, 6, 3 }, { 1, 3, 6, 3 }, say('two identical boxes of zero height (area 0)', '两个相同的、高度为 0 的框（面积为 0）') },
    { { 1, 1, 1, 3 }, { 0, 0, 4, 4 }, say('a box of zero area inside another', '一个面积为 0 的框位于另一个框内') },
  }
  local r = lcg(41)
  for k = 1, 150 do
    local function box()
      local x, y = r() * 20, r() * 20
      local b = { x, y, x + r() * 10, y + r() * 10 }
      if k % 3 == 0 then for q = 1, 4 do b[q] = math.floor(b[q]) end end
      return b
    end
    cases[#cases + 1] = { box(), box(), say('two random boxes', '两个随机的框') }
  end
  return cases
end

local function check_iou(env)
  local ok, fn = lesson.need(env, 'iou')
  if not ok then return false, fn end
  for _, c in ipairs(iou_cases()) do
    local a, b = c[1], c[2]
    local want = iou_lm(a, b)
    local rok, got = lesson.try(fn, { table.unpack(a) }, { table.unpack(b) })
    if not rok then return false, got end
    local call = string.format('iou(%s, %s)', box_text(a), box_text(b))
    local g = lesson.number(got)
    if g == nil then
      return false, say(string.format('%s (%s) returns %s; return a number', call, c[3].en, type(got)),
        string.format('%s（%s）返回的是 %s；应返回一个数', call, c[3].zh, type(got)))
    end
    if g ~= g then
      return false, say(string.format('%s (%s) returns NaN, expected %s: with both areas 0 the union is 0, and 0 / 0 is NaN; return 0 there (lm.vision.box_iou does)',
        call, c[3].en, lesson.show(want)),
        string.format('%s（%s）返回 NaN，应为 %s：两个面积都为 0 时并集是 0，0 / 0 得到 NaN；这时应返回 0（lm.vision.box_iou 就是这样）',
          call, c[3].zh, lesson.show(want)))
    end
    if math.abs(g - want) > 1e-9 then
      local why
      for _, m in ipairs(IOU_MISTAKES) do
        if math.abs(g - iou_variant(a, b, m[1])) < 1e-9 then why = m[2] break end
      end
      return false, say(string.format('%s (%s) returns %s, expected %s (lm.vision.box_iou)%s', call, c[3].en,
        lesson.show(g), lesson.show(want), why and (': ' .. why.en) or ''),
        string.format('%s（%s）返回 %s，应为 %s（lm.vision.box_iou）%s', call, c[3].zh, lesson.show(g),
          lesson.show(want), why and ('：' .. why.zh) or ''))
    end
  end
  return true, say('right: the same IoU as lm.vision.box_iou on 159 pairs: apart, touching, nested, identical, of zero area, random',
    '对：在 159 对框上（分开、相接、嵌套、相同、面积为 0、随机）都与 lm.vision.box_iou 相同')
end

-- ---------------------------------------------------------------- NMS check

-- NMS in plain Lua with a mistake switched on (v); the right rule is torchvision's (lm.vision.nms).
local function nms_variant(boxes, scores, thr, v)
  local n = #boxes
  local order = {}
  for i = 1, n do order[i] = i end
  if not v.unsorted then
    table.sort(order, function(i, j)
      if scores[i] ~= scores[j] then
        if v.ascending then return scores[i] < scores[j] end
        return scores[i] > scores[j]
      end
      return i < j
    end)
  end
  local keep, dead = {}, {}
  for _, i in ipairs(order) do
    if not dead[i] then
      keep[#keep + 1] = i
      for j = 1, n do
        local o = iou_variant(boxes[i], boxes[j])
        if j ~= i and (v.ge and o >= thr or o > thr) then dead[j] = true end
      end
    elseif v.against_all then
      for j = 1, n do
        if j ~= i and iou_variant(boxes[i], boxes[j]) > thr then dead[j] = true end
      end
    end
  end
  if v.by_index then table.sort(keep) end
  return keep
end

local NMS_MISTAKES = {
  { { ge = true }, say('it matches dropping a box when its IoU is >= the threshold: torchvision (and lm.vision.nms) drop it only when the IoU is above it (>)',
    '它和 IoU >= 阈值 就丢掉的结果一样：torchvision（以及 lm.vision.nms）只在 IoU 大于阈值（>）时才丢掉') },
  { { unsorted = true }, say('it matches taking the boxes in index order: NMS takes them by decreasing score, so the best box of a cluster survives',
    '它和按下标顺序处理的结果一样：NMS 要按得分从高到低处理，一簇框里留下的才是最好的那个') },
  { { ascending = true }, say('it matches taking the lowest score first: NMS keeps the highest-scored box of each cluster',
    '它和先处理得分最低的框的结果一样：NMS 要留下每一簇里得分最高的框') },
  { { against_all = true }, say('it matches suppressing also by boxes that were themselves suppressed: only a kept box removes its neighbours',
    '它和被抑制掉的框也去抑制别人的结果一样：只有留下来的框才去掉它的邻居') },
  { { by_index = true }, say('it matches the right boxes in index order: return them by decreasing score, in the order NMS keeps them',
    '它和按下标排序的正确结果一样：应按得分从高到低返回，也就是 NMS 留下它们的顺序') },
}

local function nms_cases()
  local cases = {
    { {}, {}, 0.5, say('no boxes at all', '一个框也没有') },
    { { { 3, 4, 9, 12 } }, { 0.4 }, 0.5, say('one box', '只有一个框') },
    { { { 0, 0, 3, 1 }, { 1, 0, 4, 1 } }, { 0.9, 0.8 }, 0.5,
      say('two boxes whose IoU is exactly 0.5', '两个 IoU 恰好为 0.5 的框') },
    { { { 0, 0, 10, 10 }, { 4, 0, 14, 10 }, { 8, 0, 18, 10 } }, { 0.9, 0.8, 0.7 }, 0.3,
      say('a chain A-B-C where A removes B, and B overlaps C but A does not', '一串 A-B-C：A 去掉 B，B 与 C 重叠而 A 与 C 不重叠') },
    { { { 0, 0, 10, 10 }, { 1, 1, 11, 11 }, { 30, 30, 40, 40 }, { 31, 30, 41, 40 } }, { 0.7, 0.7, 0.6, 0.6 }, 0.5,
      say('equal scores (the lower index goes first, as lm.vision.nms)', '得分相同（下标小的在前，与 lm.vision.nms 一致）') },
  }
  local r = lcg(7)
  for k = 1, 10 do
    local boxes, scores = {}, {}
    for _ = 1, 1 + math.floor(r() * 4) do
      local cx, cy, s = 10 + r() * 80, 10 + r() * 80, 8 + r() * 20
      for _ = 1, 2 + math.floor(r() * 7) do
        local w, h = s * (0.7 + 0.6 * r()), s * (0.7 + 0.6 * r())
        local x, y = cx + (r() - 0.5) * s * 0.6, cy + (r() - 0.5) * s * 0.6
        boxes[#boxes + 1] = { x - w / 2, y - h / 2, x + w / 2, y + h / 2 }
        scores[#scores + 1] = r()
      end
    end
    cases[#cases + 1] = { boxes, scores, ({ 0.3, 0.5, 0.7 })[k % 3 + 1],
      say(string.format('%d random boxes in clusters', #boxes), string.format('%d 个成簇的随机框', #boxes)) }
  end
  return cases
end

local function check_nms(env)
  local ok, fn = lesson.need(env, 'nms')
  if not ok then return false, fn end
  for _, c in ipairs(nms_cases()) do
    local boxes, scores, thr = c[1], c[2], c[3]
    local want = #boxes > 0 and lm.vision.nms(lm.tensor(boxes, { dtype = 'float64' }),
      lm.tensor(scores, { dtype = 'float64' }), thr):tolist() or {}
    local copy = {}
    for i, b in ipairs(boxes) do copy[i] = { table.unpack(b) } end
    local rok, got = lesson.try(fn, copy, { table.unpack(scores) }, thr)
    if not rok then return false, got end
    local on_en = string.format('nms on %s (threshold %s)', c[4].en, lesson.show(thr))
    local on_zh = string.format('nms 在%s上（阈值 %s）', c[4].zh, lesson.show(thr))
    if lm.is_tensor(got) then got = got:dim() == 0 and { got:item() } or got:tolist() end
    if type(got) ~= 'table' then
      return false, say(string.format('%s returns %s; return the list of the indices kept', on_en, type(got)),
        string.format('%s返回的是 %s；应返回留下的框的下标列表', on_zh, type(got)))
    end
    local same = #got == #want
    for i = 1, #want do if got[i] ~= want[i] then same = false end end
    if not same then
      local why
      for _, m in ipairs(NMS_MISTAKES) do
        local v = nms_variant(boxes, scores, thr, m[1])
        local eq = #v == #got
        for i = 1, #v do if v[i] ~= got[i] then eq = false end end
        if eq then why = m[2] break end
      end
      local gt = {}
      for i, v in ipairs(got) do gt[i] = v end
      return false, say(string.format('%s keeps %s; lm.vision.nms keeps %s%s', on_en, list_text(gt), list_text(want),
        why and (': ' .. why.en) or ''),
        string.format('%s留下 %s；lm.vision.nms 留下 %s%s', on_zh, list_text(gt), list_text(want),
          why and ('：' .. why.zh) or ''))
    end
  end
  return true, say('right: the same boxes in the same order as lm.vision.nms on 15 sets (clusters, a chain, ties, an IoU exactly at the threshold, none)',
    '对：在 15 组框上（成簇、链状、得分相同、IoU 恰好等于阈值、空集）留下的框和顺序都与 lm.vision.nms 相同')
end

-- ---------------------------------------------------------------- AP check

-- VOC all-points AP of one class, with a mistake switched on (v): the check's reference.
local function ap_variant(preds, truths, thr, v)
  v = v or {}
  local order = {}
  for k = 1, #preds do order[k] = k end
  if not v.unsorted then
    table.sort(order, function(a, b)
      if preds[a].score ~= preds[b].score then return preds[a].score > preds[b].score end
      return a < b
    end)
  end
  local total = 0
  for _, boxes in pairs(truths) do total = total + #boxes end
  local used, tp, prec, rec, hit = {}, 0, {}, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local pool = {}
    if v.any_image then
      for _, boxes in pairs(truths) do for _, t in ipairs(boxes) do pool[#pool + 1] = t end end
    else
      pool = truths[p.image] or {}
    end
    local best, bt = -1, nil
    for _, t in ipairs(pool) do
      if v.reuse or not used[t] then
        local o = iou_variant(p.box, t)
        if o > best then best, bt = o, t end
      end
    end
    if bt and (v.strict and best > thr or not v.strict and best >= thr) then
      used[bt] = true
      tp = tp + 1
      hit[k] = true
    end
    prec[k], rec[k] = tp / k, tp / total
  end
  if v.eleven then
    local ap = 0
    for i = 0, 10 do
      local m = 0
      for k = 1, #order do if rec[k] >= i / 10 - 1e-12 then m = math.max(m, prec[k]) end end
      ap = ap + m / 11
    end
    return ap
  end
  local ap, best = 0, 0
  for k = #order, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then
      local p = v.nointerp and prec[k] or best
      ap = ap + p / (v.over_tp and tp or total)
    end
  end
  return ap
end

local AP_MISTAKES = {
  { { nointerp = true }, say('it matches the precision at each true positive without interpolation: all-points AP takes, at each recall, the best precision at that recall or higher (max over the ranks after it)',
    '它和不做插值、直接用每个真正例处的精度的结果一样：全点插值的 AP 在每个召回率处取该召回率及更高召回率上的最大精度（其后各名次的最大值）') },
  { { eleven = true }, say('it matches the 11-point interpolation of VOC 2007 (recall 0, 0.1, ..., 1): this lesson asks for the all-points AP of VOC 2010 and later',
    '它和 VOC 2007 的 11 点插值（召回率 0, 0.1, ..., 1）一样：本课要的是 VOC 2010 以后的全点插值 AP') },
  { { over_tp = true }, say('it matches dividing by the number of true positives: recall divides by the number of ground-truth boxes, so every missed object lowers AP',
    '它和除以真正例个数的结果一样：召回率除以真实框的个数，漏检的每个物体都会拉低 AP') },
  { { reuse = true }, say('it matches letting a ground-truth box be matched more than once: a second detection of an object already found is a false positive (a duplicate)',
    '它和一个真实框可以被匹配多次的结果一样：对已经检出的物体的第二次检测是假正例（重复检测）') },
  { { any_image = true }, say('it matches matching a prediction with ground-truth boxes of any image: a prediction can only find an object of its own image (pred.image)',
    '它和预测框可以匹配任意图像里的真实框的结果一样：一个预测框只能找到它自己那张图（pred.image）里的物体') },
  { { strict = true }, say('it matches IoU > thr for a true positive: the rule is IoU >= thr',
    '它和 IoU > thr 才算真正例的结果一样：规则是 IoU >= thr') },
  { { unsorted = true }, say('it matches taking the predictions in the order given: sort them by decreasing score first (the precision-recall curve is drawn from the most confident down)',
    '它和按给定顺序处理预测的结果一样：要先按得分从高到低排序（精度-召回曲线从最有把握的预测画起）') },
}

local function ap_cases()
  local cases = {
    { { { image = 1, box = { 0, 0, 4, 1 }, score = 0.9 } }, { { { 0, 0, 4, 2 } } }, 0.5,
      say('one prediction whose IoU with the object is exactly 0.5', '一个与物体 IoU 恰好为 0.5 的预测') },
    { {}, { { { 1, 1, 5, 5 } }, { { 2, 2, 6, 6 } } }, 0.5, say('no predictions at all', '一个预测也没有') },
  }
  local r = lcg(2024)
  for k = 1, 12 do
    local truths, preds = {}, {}
    local nimg = 2 + math.floor(r() * 4)
    for i = 1, nimg do
      truths[i] = {}
      for _ = 1, math.floor(r() * 4) + (i == 1 and 1 or 0) do
        local x, y, w, h = r() * 40, r() * 40, 6 + r() * 14, 6 + r() * 14
        local t = { x, y, x + w, y + h }
        truths[i][#truths[i] + 1] = t
        for _ = 1, (r() < 0.8 and 1 or 0) + (r() < 0.35 and 1 or 0) do
          local j = w * 0.35
          local b = { t[1] + (r() - 0.5) * j, t[2] + (r() - 0.5) * j, t[3] + (r() - 0.5) * j, t[4] + (r() - 0.5) * j }
          preds[#preds + 1] = { image = i, box = b }
        end
      end
      for _ = 1, math.floor(r() * 3) do
        local x, y = r() * 40, r() * 40
        preds[#preds + 1] = { image = i, box = { x, y, x + 6 + r() * 14, y + 6 + r() * 14 } }
      end
    end
    for _, p in ipairs(preds) do p.score = r() end
    -- shuffled so that the order given is not the order of the scores
    for i = #preds, 2, -1 do
      local j = 1 + math.floor(r() * i)
      preds[i], preds[j] = preds[j], preds[i]
    end
    local total = 0
    for _, t in ipairs(truths) do total = total + #t end
    cases[#cases + 1] = { preds, truths, ({ 0.5, 0.5, 0.3, 0.7 })[k % 4 + 1],
      say(string.format('a random set: %d images, %d objects, %d predictions', nimg, total, #preds),
        string.format('一组随机数据：%d 张图、%d 个物体、%d 个预测', nimg, total, #preds)) }
  end
  return cases
end

local function deep_copy(t)
  if type(t) ~= 'table' then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = deep_copy(v) end
  return c
end

local function check_ap(env)
  local ok, fn = lesson.need(env, 'average_precision')
  if not ok then return false, fn end
  for _, c in ipairs(ap_cases()) do
    local preds, truths, thr = c[1], c[2], c[3]
    local want = ap_variant(preds, truths, thr)
    local rok, got = lesson.try(fn, deep_copy(preds), deep_copy(truths), thr)
    if not rok then return false, got end
    local on_en = string.format('average_precision on %s (thr %s)', c[4].en, lesson.show(thr))
    local on_zh = string.format('average_precision 在%s上（thr %s）', c[4].zh, lesson.show(thr))
    local g = lesson.number(got)
    if g == nil or g ~= g then
      return false, say(string.format('%s returns %s, expected %s', on_en, g and 'NaN' or type(got), lesson.show(want)),
        string.format('%s返回 %s，应为 %s', on_zh, g and 'NaN' or type(got), lesson.show(want)))
    end
    if math.abs(g - want) > 1e-9 then
      local why
      for _, m in ipairs(AP_MISTAKES) do
        if math.abs(g - ap_variant(preds, truths, thr, m[1])) < 1e-9 then why = m[2] break end
      end
      return false, say(string.format('%s returns %s, expected %s%s', on_en, lesson.show(g), lesson.show(want),
        why and (': ' .. why.en) or ''),
        string.format('%s返回 %s，应为 %s%s', on_zh, lesson.show(g), lesson.show(want), why and ('：' .. why.zh) or ''))
    end
  end
  return true, say('right: the all-points AP of the lesson\'s reference on 14 sets (random sets, duplicates, misses, an IoU exactly at thr, no predictions)',
    '对：在 14 组数据上（随机数据、重复检测、漏检、IoU 恰好等于 thr、没有预测）都与本课的全点插值 AP 参考实现相同')
end

return {
  title = say('Object detection: IoU, NMS, mAP and a one-stage detector', '目标检测：IoU、NMS、mAP 与一阶段检测器'),
  course = 'aics',
  lecture = say('AI Computing Systems, chapter 3: deep learning (image detection)',
    '智能计算系统 第 3 章：深度学习（图像检测）'),
  summary = say([[From classification to detection: bounding boxes, two-stage (R-CNN series) against
one-stage (YOLO, SSD) detectors; IoU, non-maximum suppression and mAP written by the student, and a
tiny YOLO-style detector trained live on shapes over Fashion-MNIST.]],
    [[从分类到检测：边界框；两阶段（R-CNN 系列）与一阶段（YOLO、SSD）检测算法；亲手写出 IoU、
非极大值抑制和 mAP；在 Fashion-MNIST 背景上的图形上现场训练一个很小的 YOLO 式检测器。]]),
  steps = {
    -- 1 ------------------------------------------------------------------------------------
    {
      title = say('From classification to detection', '从分类到检测'),
      text = say([[
The notes put three tasks side by side. Classification: one big object, the output is a label
(measured by top-1 / top-5 precision). Localisation + classification: one big object, the output
is a label and a bounding box. Object detection: several objects, often small, the output is a
label and a bounding box for each, measured by IoU (intersection over union) and mAP (mean
average precision).

A box here is its two corners {x1, y1, x2, y2} in pixels (x to the right, y down), as
lm.vision and torchvision have them. Deep-learning detectors come in two families:

- two-stage, the R-CNN series (R-CNN, SPP-Net, Fast R-CNN, Faster R-CNN, ...): first propose candidate regions (selective search, later a region proposal network, RPN), then classify each region with a CNN and refine its box;
- one-stage, YOLO and SSD (and RetinaNet, ...): the image goes through one network that outputs the locations and the classes at once, for every cell of a grid: faster, and for a long time less accurate on small objects.

Both end the same way: many candidate boxes, of which non-maximum suppression (NMS) keeps the
best of each cluster. The picture is the detection scene on its own demonstration (random
rectangles, noisy candidates): step through it (0 ground truth dashed, 1 every candidate, 2 what
NMS kept, green a true positive, red a false one).]],
        [[
讲义把三个任务并排列出。分类：一个大的物体，输出一个标签（用 top-1 / top-5 精度衡量）。定位 +
分类：一个大的物体，输出标签和一个边界框（bounding box）。物体检测：多个物体，往往很小，为每个
物体输出标签和边界框，用 IoU（交并比）和 mAP（Mean Average Precision，平均精度均值）衡量。

这里一个框用它的两个角点 {x1, y1, x2, y2} 表示，单位是像素（x 向右，y 向下），与 lm.vision 和
torchvision 相同。基于深度学习的目标检测算法大致分为两类：

- 两阶段（two-stage），R-CNN 系列（R-CNN、SPP-Net、Fast R-CNN、Faster R-CNN 等）：基于候选区域，先产生边界框（选择性搜索，后来是区域建议网络 RPN），再用 CNN 对每个区域分类并修正边界框；
- 一阶段（one-stage），YOLO 和 SSD（以及 RetinaNet 等）：对输入图像直接处理，一个网络同时输出定位及其类别，网格的每个格子都输出：更快，但在很长一段时间里对小物体不如两阶段准确。

两类算法的结尾相同：很多候选框，由非极大值抑制（NMS）在每一簇里留下最好的那个。画面是检测场景
自带的演示（随机矩形和带噪声的候选框）：单步查看（0 虚线是真实框，1 是全部候选框，2 是 NMS
留下的框，绿色是真正例，红色是假正例）。]]),
      code = [[
local boxes = lm.tensor({{10, 10, 30, 40}, {20, 15, 40, 45}, {50, 50, 60, 60}})
print('areas:', lm.vision.box_area(boxes))
print('IoU of every box with every box:')
print(lm.vision.box_iou(boxes, boxes))
]],
      scene = 'detection',
    },
    -- 2 ------------------------------------------------------------------------------------
    {
      title = say('IoU: intersection over union', 'IoU：交并比'),
      text = say([[
How well does a predicted box B fit the ground-truth box A? The notes' measure is IoU, the area
they share over the area they cover together:

  IoU(A, B) = area(A ∩ B) / area(A ∪ B)
  area(A ∪ B) = area(A) + area(B) - area(A ∩ B)

The intersection of two boxes is a box again: its left edge is the larger of the two left edges,
its right edge the smaller of the two right edges (the same for y). When they do not overlap,
that "box" has a negative width or height, and the intersection is 0. IoU is 1 for the same box,
0 for boxes apart or only touching, and a detection usually counts as right at IoU >= 0.5.

The code computes the two boxes of step 1 with lm.vision.box_iou: their intersection is
{20, 15, 30, 40}, 10 x 25 = 250, the union 600 + 600 - 250 = 950, IoU = 250 / 950.]],
        [[
预测框 B 和真实框 A 贴合得有多好？讲义用的是 IoU：两者共有的面积除以两者一共覆盖的面积：

  IoU(A, B) = area(A ∩ B) / area(A ∪ B)
  area(A ∪ B) = area(A) + area(B) - area(A ∩ B)

两个框的交集仍是一个框：左边界取两个左边界中较大的那个，右边界取两个右边界中较小的那个（y 方向
相同）。不重叠时，这个“框”的宽或高是负的，交集为 0。同一个框的 IoU 是 1，分开或只是相接的框
IoU 是 0；通常 IoU >= 0.5 的检测才算对。

代码用 lm.vision.box_iou 计算第 1 步的两个框：交集是 {20, 15, 30, 40}，10 x 25 = 250，并集是
600 + 600 - 250 = 950，IoU = 250 / 950。]]),
      code = [[
local A, B = lm.tensor({{10, 10, 30, 40}}), lm.tensor({{20, 15, 40, 45}})
print(string.format('IoU = %.4f, 250 / 950 = %.4f', lm.vision.box_iou(A, B):item(), 250 / 950))
]],
      expect = 'IoU = 0.2632, 250 / 950 = 0.2632\n',
      exercise = {
        prompt = say([[
Write `iou(a, b)` for two boxes given as Lua tables {x1, y1, x2, y2} (x1 <= x2, y1 <= y2): it
returns their IoU, a number. Two boxes of zero area (both) have IoU 0, not NaN. The check
compares it with lm.vision.box_iou on boxes apart, touching, nested, identical, of zero area, and
150 random pairs.]],
          [[
写出 `iou(a, b)`：两个框都是 Lua 表 {x1, y1, x2, y2}（x1 <= x2，y1 <= y2），返回它们的 IoU（一个数）。
两个面积都为 0 的框 IoU 为 0，而不是 NaN。检查时会在分开、相接、嵌套、相同、面积为 0 的框以及
150 对随机框上与 lm.vision.box_iou 比较。]]),
        hints = {
          say('w = min(a[3], b[3]) - max(a[1], b[1]), h the same with [4] and [2]; no overlap when w <= 0 or h <= 0.',
            'w = min(a[3], b[3]) - max(a[1], b[1])，h 同理用 [4] 和 [2]；w <= 0 或 h <= 0 时不重叠。'),
          say('union = area(a) + area(b) - w * h; return 0 when there is no overlap (that also covers the boxes of zero area).',
            'union = area(a) + area(b) - w * h；不重叠时返回 0（面积为 0 的框也就一并处理了）。'),
        },
        check = check_iou,
        solution = [[
function iou(a, b)
  local w = math.min(a[3], b[3]) - math.max(a[1], b[1])
  local h = math.min(a[4], b[4]) - math.max(a[2], b[2])
  if w <= 0 or h <= 0 then return 0 end
  local union = (a[3] - a[1]) * (a[4] - a[2]) + (b[3] - b[1]) * (b[4] - b[2]) - w * h
  return w * h / union
end
]],
        wrong = {
          [[
function iou(a, b)   -- the overlap is not clamped at 0
  local w = math.min(a[3], b[3]) - math.max(a[1], b[1])
  local h = math.min(a[4], b[4]) - math.max(a[2], b[2])
  local union = (a[3] - a[1]) * (a[4] - a[2]) + (b[3] - b[1]) * (b[4] - b[2]) - w * h
  if union == 0 then return 0 end
  return w * h / union
end
]],
          [[
function iou(a, b)   -- the union counts the intersection twice
  local w = math.max(0, math.min(a[3], b[3]) - math.max(a[1], b[1]))
  local h = math.max(0, math.min(a[4], b[4]) - math.max(a[2], b[2]))
  local union = (a[3] - a[1]) * (a[4] - a[2]) + (b[3] - b[1]) * (b[4] - b[2])
  if union == 0 then return 0 end
  return w * h / union
end
]],
          [[
function iou(a, b)   -- widths as pixel counts, x2 - x1 + 1
  local w = math.max(0, math.min(a[3], b[3]) - math.max(a[1], b[1]) + 1)
  local h = math.max(0, math.min(a[4], b[4]) - math.max(a[2], b[2]) + 1)
  local union = (a[3] - a[1] + 1) * (a[4] - a[2] + 1) + (b[3] - b[1] + 1) * (b[4] - b[2] + 1) - w * h
  return w * h / union
end
]],
          [[
function iou(a, b)   -- divides by the area of the first box
  local w = math.max(0, math.min(a[3], b[3]) - math.max(a[1], b[1]))
  local h = math.max(0, math.min(a[4], b[4]) - math.max(a[2], b[2]))
  local area = (a[3] - a[1]) * (a[4] - a[2])
  if area == 0 then return 0 end
  return w * h / area
end
]],
          [[
function iou(a, b)   -- NaN for two boxes of zero area
  local w = math.max(0, math.min(a[3], b[3]) - math.max(a[1], b[1]))
  local h = math.max(0, math.min(a[4], b[4]) - math.max(a[2], b[2]))
  local union = (a[3] - a[1]) * (a[4] - a[2]) + (b[3] - b[1]) * (b[4] - b[2]) - w * h
  return w * h / union
end
]],
        },
      },
    },
    -- 3 ------------------------------------------------------------------------------------
    {
      title = say('Non-maximum suppression', '非极大值抑制（NMS）'),
      text = say([[
A detector proposes many boxes around each object, slightly shifted, each with a score. NMS keeps
one per object, greedily:

- 1. take the box with the highest score that is still there; keep it;
- 2. remove every remaining box whose IoU with it is above the threshold (say 0.5);
- 3. repeat until no box is left.

The result is the kept indices by decreasing score. Two details make answers differ: a box is
removed only when its IoU is above the threshold (> , torchvision's rule: exactly 0.5 at
threshold 0.5 survives), and only a kept box removes others (a box already removed removes
nothing). Equal scores: the lower index goes first. Two-stage detectors run NMS on their region
proposals, one-stage ones on their grid's boxes; both run it per class.

The code defines `overlap(a, b)`, the lesson's own IoU of two table boxes (use it or your iou),
and runs lm.vision.nms on 11 candidates around two objects: the scene shows them (step 1), then
the 3 kept (step 2): one on each object and a stray box, a false positive; its counters count
2 TP, 1 FP.]],
        [[
检测器会在每个物体周围给出许多略有偏移的框，每个都带一个得分。NMS 贪心地为每个物体只留一个：

- 1. 在剩下的框里取得分最高的一个，留下它；
- 2. 去掉剩下的框中与它的 IoU 大于阈值（比如 0.5）的每一个；
- 3. 重复，直到没有框剩下。

结果是留下的框的下标，按得分从高到低排列。有两个细节会让答案不同：只有 IoU 大于阈值（>，
torchvision 的规则：阈值 0.5 时恰好为 0.5 的框会留下）才去掉；只有留下的框才去掉别的框（已经
被去掉的框不再去掉别人）。得分相同时，下标小的在前。两阶段检测器对候选区域做 NMS，一阶段检测器
对网格输出的框做 NMS；两者都按类别分别做。

代码定义了 `overlap(a, b)`，即本课自己的两个表形式的框的 IoU（可以用它，也可以用你的 iou），
并对两个物体周围的 11 个候选框运行 lm.vision.nms：场景先画出它们（第 1 步），再画出留下的 3 个
（第 2 步）：每个物体上一个，外加一个离群的框，即假正例；计数器显示 2 个 TP、1 个 FP。]]),
      code = [[
function overlap(a, b)   -- the lesson's IoU of two boxes {x1, y1, x2, y2}
  local w = math.min(a[3], b[3]) - math.max(a[1], b[1])
  local h = math.min(a[4], b[4]) - math.max(a[2], b[2])
  if w <= 0 or h <= 0 then return 0 end
  return w * h / ((a[3] - a[1]) * (a[4] - a[2]) + (b[3] - b[1]) * (b[4] - b[2]) - w * h)
end
objects = {{8, 10, 28, 34}, {34, 26, 56, 50}}
candidates = {{9, 11, 29, 33}, {6, 9, 27, 35}, {10, 12, 30, 36}, {8, 8, 26, 32}, {12, 14, 28, 30},
  {35, 27, 55, 49}, {32, 24, 57, 48}, {36, 29, 58, 52}, {33, 25, 52, 47}, {38, 30, 54, 46},
  {40, 2, 52, 12}}
scores = {0.92, 0.75, 0.81, 0.60, 0.44, 0.88, 0.70, 0.65, 0.52, 0.40, 0.58}
kept = lm.vision.nms(lm.tensor(candidates), lm.tensor(scores), 0.5):tolist()
print('kept (by decreasing score):', table.concat(kept, ', '))
print(string.format('IoU of box 1 and box 3: %.3f (> 0.5: box 3 goes)', overlap(candidates[1], candidates[3])))
]],
      expect = 'kept (by decreasing score):\t1, 6, 11\nIoU of box 1 and box 3: 0.766 (> 0.5: box 3 goes)\n',
      scene = function(env)
        local img = lm.zeros(64, 64):add(0.1)
        for _, o in ipairs(env.objects) do
          img:narrow(1, o[2] + 1, o[4] - o[2]):narrow(2, o[1] + 1, o[3] - o[1]):fill_(0.7)
        end
        return 'detection', { images = img:view(1, 64, 64),
          truth = { { boxes = env.objects } },
          pred = { { boxes = env.candidates, scores = env.scores, keep = env.kept } },
          source = 'given by the lesson: 11 candidate boxes; NMS by lm.vision.nms at 0.5' }
      end,
      exercise = {
        prompt = say([[
Write `nms(boxes, scores, thr)`: boxes is a list of tables {x1, y1, x2, y2}, scores a list of
numbers (one per box), thr the IoU threshold. Return the list of the indices (1-based) of the
boxes kept, by decreasing score; a box goes when its IoU with a kept box is above thr; equal
scores: the lower index first. The check compares it with lm.vision.nms on clustered random boxes
at thresholds 0.3, 0.5 and 0.7, on a chain of three boxes, on ties, on an IoU exactly at the
threshold, and on no boxes at all.]],
          [[
写出 `nms(boxes, scores, thr)`：boxes 是由表 {x1, y1, x2, y2} 组成的列表，scores 是一列数（每个框
一个），thr 是 IoU 阈值。返回留下的框的下标（从 1 开始）列表，按得分从高到低；与某个留下的框的
IoU 大于 thr 的框被去掉；得分相同时下标小的在前。检查时会与 lm.vision.nms 比较：阈值为 0.3、0.5、
0.7 的成簇随机框，三个框连成的链，得分相同，IoU 恰好等于阈值，以及一个框也没有的情况。]]),
        hints = {
          say('Keep a table gone[i]. Loop: find the box not gone with the highest score (on a tie the lower index: compare with > only); stop when there is none.',
            '用一个表 gone[i] 记下去掉的框。循环：找出还在的框里得分最高的一个（得分相同取下标小的：只用 > 比较）；找不到就结束。'),
          say('Append it to the result, mark it gone, then mark gone every alive box with overlap(box, it) > thr.',
            '把它加入结果并标记为不在，再把与它 overlap(box, it) > thr 的每个还在的框标记为不在。'),
        },
        check = check_nms,
        solution = [[
function nms(boxes, scores, thr)
  local keep, gone = {}, {}
  while true do
    local best = nil
    for i in ipairs(boxes) do
      if not gone[i] and (best == nil or scores[i] > scores[best]) then best = i end
    end
    if best == nil then return keep end
    keep[#keep + 1] = best
    gone[best] = true
    for i, b in ipairs(boxes) do
      if not gone[i] and overlap(b, boxes[best]) > thr then gone[i] = true end
    end
  end
end
]],
        wrong = {
          [[
function nms(boxes, scores, thr)   -- drops a box at IoU >= thr
  local keep, alive = {}, {}
  for i = 1, #boxes do alive[i] = true end
  while true do
    local best = nil
    for i = 1, #boxes do
      if alive[i] and (best == nil or scores[i] > scores[best]) then best = i end
    end
    if best == nil then return keep end
    keep[#keep + 1] = best
    alive[best] = false
    for i = 1, #boxes do
      if alive[i] and overlap(boxes[i], boxes[best]) >= thr then alive[i] = false end
    end
  end
end
]],
          [[
function nms(boxes, scores, thr)   -- boxes taken in index order, not by score
  local keep, alive = {}, {}
  for i = 1, #boxes do alive[i] = true end
  for i = 1, #boxes do
    if alive[i] then
      keep[#keep + 1] = i
      for j = i + 1, #boxes do
        if overlap(boxes[i], boxes[j]) > thr then alive[j] = false end
      end
    end
  end
  return keep
end
]],
          [[
function nms(boxes, scores, thr)   -- a removed box still removes others
  local order = {}
  for i = 1, #boxes do order[i] = i end
  table.sort(order, function(i, j)
    if scores[i] ~= scores[j] then return scores[i] > scores[j] end
    return i < j
  end)
  local keep = {}
  for k, i in ipairs(order) do
    local ok = true
    for q = 1, k - 1 do
      local j = order[q]
      if overlap(boxes[i], boxes[j]) > thr then ok = false end
    end
    if ok then keep[#keep + 1] = i end
  end
  return keep
end
]],
          [[
function nms(boxes, scores, thr)   -- keeps the lowest score of each cluster
  local keep, alive = {}, {}
  for i = 1, #boxes do alive[i] = true end
  while true do
    local best = nil
    for i = 1, #boxes do
      if alive[i] and (best == nil or scores[i] < scores[best]) then best = i end
    end
    if best == nil then return keep end
    keep[#keep + 1] = best
    alive[best] = false
    for i = 1, #boxes do
      if alive[i] and overlap(boxes[i], boxes[best]) > thr then alive[i] = false end
    end
  end
end
]],
          [[
function nms(boxes, scores, thr)   -- the right boxes, returned in index order
  local alive = {}
  for i = 1, #boxes do alive[i] = true end
  while true do
    local best = nil
    for i = 1, #boxes do
      if alive[i] == true and (best == nil or scores[i] > scores[best]) then best = i end
    end
    if best == nil then break end
    alive[best] = 'kept'
    for i = 1, #boxes do
      if alive[i] == true and overlap(boxes[i], boxes[best]) > thr then alive[i] = false end
    end
  end
  local keep = {}
  for i = 1, #boxes do if alive[i] == 'kept' then keep[#keep + 1] = i end end
  return keep
end
]],
        },
      },
    },
    -- 4 ------------------------------------------------------------------------------------
    {
      title = say('Average precision and mAP', '平均精度（AP）与 mAP'),
      text = say([[
One number for a detector over a whole data set, for one class:

- 1. sort all its predictions of that class, over all images, by decreasing score;
- 2. walk down the list: a prediction is a true positive (TP) when the unmatched ground-truth box of its image with the highest IoU has IoU >= thr (that box is now matched), else a false positive (FP): poorly placed, or a duplicate of an object already found;
- 3. after the k-th prediction: precision p_k = TP_k / k, recall r_k = TP_k / n, n the number of ground-truth boxes (every one: a missed object lowers recall);
- 4. AP, all-points interpolation (PASCAL VOC 2010 and later): the area under the precision-recall curve made decreasing,

  AP = sum over k of (r_k - r_{k-1}) * max_{j >= k} p_j,   r_0 = 0

Recall grows only at a TP, by 1/n, so AP is the sum over the TPs of max_{j >= k} p_j, over n.
mAP is the mean of AP over the classes; mAP@0.5 uses thr = 0.5.

The example: two images, three objects, five predictions in score order TP, FP (IoU 0.43),
FP (a duplicate), TP, TP. Precision 1, 1/2, 1/3, 1/2, 3/5 at recall 1/3, 1/3, 1/3, 2/3, 1; the
interpolated precision at the three TPs is 1, 3/5, 3/5, so AP = (1 + 0.6 + 0.6) / 3 = 0.7333
(without interpolation it would be (1 + 0.5 + 0.6) / 3 = 0.7).]],
        [[
对一个类别，用一个数衡量检测器在整个数据集上的表现：

- 1. 把它对该类别在所有图像上的预测按得分从高到低排序；
- 2. 依次往下：在这个预测所在图像的、还没被匹配的真实框中，取 IoU 最高的一个，若 IoU >= thr，这个预测就是真正例（TP），那个真实框标记为已匹配；否则是假正例（FP）：位置不准，或者是对已经检出的物体的重复检测；
- 3. 第 k 个预测之后：精度（precision）p_k = TP_k / k，召回率（recall）r_k = TP_k / n，n 是真实框的个数（全部：漏检的物体会拉低召回率）；
- 4. AP，全点插值（PASCAL VOC 2010 及以后）：把精度-召回曲线改成单调递减后曲线下的面积，

  AP = sum over k of (r_k - r_{k-1}) * max_{j >= k} p_j,   r_0 = 0

召回率只在 TP 处增长，每次 1/n，所以 AP 就是各个 TP 处 max_{j >= k} p_j 之和除以 n。mAP 是各
类别 AP 的平均；mAP@0.5 用 thr = 0.5。

例子：两张图、三个物体、五个预测，按得分依次是 TP、FP（IoU 0.43）、FP（重复检测）、TP、TP。
精度依次为 1、1/2、1/3、1/2、3/5，召回率 1/3、1/3、1/3、2/3、1；三个 TP 处插值后的精度是 1、
3/5、3/5，所以 AP = (1 + 0.6 + 0.6) / 3 = 0.7333（不插值则是 (1 + 0.5 + 0.6) / 3 = 0.7）。]]),
      code = [[
-- truths[i]: the ground-truth boxes of image i; preds: {image =, box =, score =}
example_truths = {{{10, 10, 30, 30}, {40, 40, 60, 60}}, {{5, 5, 25, 35}}}
example_preds = {
  {image = 1, box = {11, 10, 31, 30}, score = 0.95},   -- object 1 of image 1
  {image = 2, box = {13, 5, 33, 35}, score = 0.90},    -- IoU 0.43 with the object: too far
  {image = 1, box = {10, 11, 30, 31}, score = 0.80},   -- object 1 again: a duplicate
  {image = 2, box = {6, 5, 25, 34}, score = 0.70},     -- the object of image 2
  {image = 1, box = {40, 41, 60, 61}, score = 0.60},   -- object 2 of image 1
}
for k, p in ipairs(example_preds) do
  print(string.format('%d  image %d  score %.2f  IoU with its best object %.2f', k, p.image,
    p.score, math.max(table.unpack((function()
      local t = {} for j, b in ipairs(example_truths[p.image]) do t[j] = overlap(p.box, b) end return t
    end)()))))
end
]],
      expect = '1  image 1  score 0.95  IoU with its best object 0.90\n'
        .. '2  image 2  score 0.90  IoU with its best object 0.43\n'
        .. '3  image 1  score 0.80  IoU with its best object 0.90\n'
        .. '4  image 2  score 0.70  IoU with its best object 0.92\n'
        .. '5  image 1  score 0.60  IoU with its best object 0.90\n',
      exercise = {
        prompt = say([[
Write `average_precision(preds, truths, thr)`: the all-points AP of one class as defined above.
preds is a list of {image = i, box = {x1, y1, x2, y2}, score = s} in any order; truths[i] the
list of the ground-truth boxes of image i (possibly empty; n >= 1 in all). Matching: by decreasing
score (equal scores: the earlier in preds), each prediction takes the unmatched truth box of its
image with the highest IoU, a TP if that IoU >= thr. Do not change preds. The example gives
0.7333 at thr 0.5. The check compares it with the lesson's reference on random sets (duplicates,
misses, several images, thr 0.3, 0.5, 0.7), an IoU exactly at thr and an empty preds (AP 0).]],
          [[
写出 `average_precision(preds, truths, thr)`：按上面的定义计算一个类别的全点插值 AP。preds 是
{image = i, box = {x1, y1, x2, y2}, score = s} 组成的列表，顺序任意；truths[i] 是第 i 张图的真实框
列表（可以为空；总数 n >= 1）。匹配：按得分从高到低（得分相同时 preds 中靠前的先），每个预测在
自己那张图还没被匹配的真实框中取 IoU 最高的一个，该 IoU >= thr 就是 TP。不要改动 preds。上面的
例子在 thr 0.5 时得到 0.7333。检查时会与本课的参考实现比较：随机数据（有重复检测、漏检、多张图，
thr 0.3、0.5、0.7），IoU 恰好等于 thr，以及 preds 为空（AP 为 0）。]]),
        hints = {
          say('Sort a list of indices 1..#preds by preds[k].score (descending); count n over all truths[i]; keep matched[box] = true for the truth boxes already taken.',
            '对下标 1..#preds 按 preds[k].score 从高到低排序；对所有 truths[i] 数出 n；用 matched[box] = true 记下已被匹配的真实框。'),
          say('Record hit[k] and prec[k] = tp / k; then walk k from the last down to 1 keeping best = max(best, prec[k]), adding best / n at each hit.',
            '记下 hit[k] 和 prec[k] = tp / k；然后 k 从最后一个往回走到 1，保持 best = max(best, prec[k])，在每个 hit 处加上 best / n。'),
        },
        check = check_ap,
        equivalent = {
          ['>= instead of > at line 5'] = 'the comparison runs only when the two scores differ (~=), where > and >= agree',
          ['>= instead of > at line 16'] = 'it changes which truth box is taken only when two unmatched truth boxes have exactly the same IoU with the prediction, which the rule leaves open (and random boxes never give)',
        },
        solution = [[
function average_precision(preds, truths, thr)
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b)
    if preds[a].score ~= preds[b].score then return preds[a].score > preds[b].score end
    return a < b
  end)
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local matched, tp, prec, hit = {}, 0, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1; hit[k] = true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #order, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / n end
  end
  return ap
end
]],
        wrong = {
          [[
function average_precision(preds, truths, thr)   -- no interpolation
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b) return preds[a].score > preds[b].score end)
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local matched, tp, ap = {}, 0, 0
  for k, q in ipairs(order) do
    local p = preds[q]
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1; ap = ap + tp / k / n end
  end
  return ap
end
]],
          [[
function average_precision(preds, truths, thr)   -- a found object can be found again
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b) return preds[a].score > preds[b].score end)
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local tp, prec, hit = 0, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local best = 0
    for _, t in ipairs(truths[p.image] or {}) do best = math.max(best, overlap(p.box, t)) end
    if best >= thr then tp = tp + 1; hit[k] = true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #order, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / n end
  end
  return ap
end
]],
          [[
function average_precision(preds, truths, thr)   -- divides by the true positives, not n
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b) return preds[a].score > preds[b].score end)
  local matched, tp, prec, hit = {}, 0, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1; hit[k] = true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #order, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / tp end
  end
  return ap
end
]],
          [[
function average_precision(preds, truths, thr)   -- the order given, not sorted by score
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local matched, tp, prec, hit = {}, 0, {}, {}
  for k, p in ipairs(preds) do
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1; hit[k] = true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #preds, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / n end
  end
  return ap
end
]],
          [[
function average_precision(preds, truths, thr)   -- IoU > thr for a true positive
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b) return preds[a].score > preds[b].score end)
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local matched, tp, prec, hit = {}, 0, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o > thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1; hit[k] = true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #order, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / n end
  end
  return ap
end
]],
          [[
function average_precision(preds, truths, thr)   -- 11-point interpolation (VOC 2007)
  local order = {}
  for k = 1, #preds do order[k] = k end
  table.sort(order, function(a, b) return preds[a].score > preds[b].score end)
  local n = 0
  for _, boxes in pairs(truths) do n = n + #boxes end
  local matched, tp, prec, rec = {}, 0, {}, {}
  for k, q in ipairs(order) do
    local p = preds[q]
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image] or {}) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick] = true; tp = tp + 1 end
    prec[k], rec[k] = tp / k, tp / n
  end
  local ap = 0
  for i = 0, 10 do
    local m = 0
    for k = 1, #order do if rec[k] >= i / 10 then m = math.max(m, prec[k]) end end
    ap = ap + m / 11
  end
  return ap
end
]],
        },
      },
    },
    -- 5 ------------------------------------------------------------------------------------
    {
      title = say('A synthetic detection set and the YOLO targets', '一个合成的检测数据集与 YOLO 的训练目标'),
      text = say([[
A data set small enough to train on in seconds: canvases of 48x48, the background a Fashion-MNIST
image (enlarged to 48x48, dimmed to 45%, plus noise), and 1 to 3 bright shapes drawn on it, each
of 10 to 18 pixels a side, of three classes: a filled square, a hollow frame and a cross. The
boxes are known exactly because the code drew the shapes. 1024 training canvases use training
images of Fashion-MNIST, 256 held-out test canvases use its test images.

One-stage, the YOLO way: the network looks at the whole image once and answers for every cell of
a grid. Here the grid is 6x6 cells of 8x8 pixels, and the cell that holds an object's centre is
responsible for it. Its targets (T, 5 + 3 channels per cell):

- objectness: 1 in the responsible cell, 0 everywhere else;
- tx, ty: where the centre lies inside that cell, 0..1; tw, th: the width and height over 48;
- the class, one-hot (square, frame, cross).

No two objects share a cell here (the code places them so); real YOLO gives a cell several
boxes, SSD several default boxes (anchors) of different shapes at several scales. The picture is
the first 8 test canvases with their ground truth (step 0 of the scene).]],
        [[
一个小到几秒钟就能训练完的数据集：48x48 的画布，背景是一张 Fashion-MNIST 图像（放大到 48x48，
亮度降到 45%，再加上噪声），上面画 1 到 3 个明亮的图形，边长 10 到 18 个像素，分三类：实心方块、
空心方框和十字。因为图形是代码画的，框是精确已知的。1024 张训练画布用 Fashion-MNIST 的训练
图像，256 张留出的测试画布用它的测试图像。

一阶段，YOLO 的做法：网络把整张图看一遍，为网格的每个格子给出答案。这里网格是 6x6 个格子，每格
8x8 像素，物体中心所在的格子负责这个物体。它的训练目标（T，每个格子 5 + 3 个通道）：

- 物体置信度（objectness）：负责的格子为 1，其余都为 0；
- tx、ty：中心在这个格子里的位置，0..1；tw、th：宽和高除以 48；
- 类别，独热编码（方块、方框、十字）。

这里没有两个物体共用一个格子（代码就是这样摆放的）；真正的 YOLO 让一个格子给出多个框，SSD 则
在多个尺度上用多个不同形状的默认框（anchor）。画面是前 8 张测试画布及其真实框（场景的第 0 步）。]]),
      code = [[
CLASSES = {'square', 'frame', 'cross'}
S, G, CELL = 48, 6, 8                  -- canvas side, grid side, cell side (pixels)
-- make_set(n, seed, split) -> X (n, 1, S, S), T (n, 5 + #CLASSES, G, G), truth (per canvas)
function make_set(n, seed, split)
  math.randomseed(seed)
  local fm = data.FashionMNIST{split = split, limit = n}
  local X = F.interpolate(fm.data, {size = {S, S}, mode = 'bilinear'}):mul(0.45)
  X = (X + lm.rand(n, 1, S, S):mul(0.1)):contiguous()
  local T, truth = lm.zeros(n, 5 + #CLASSES, G, G), {}
  for i = 1, n do
    local img, boxes, classes, used = X[i][1], {}, {}, {}
    for _ = 1, math.random(1, 3) do
      for _ = 1, 20 do                 -- a few tries to place it apart from the others
        local w, h = math.random(10, 18), math.random(10, 18)
        local x1, y1 = math.random(0, S - w), math.random(0, S - h)
        local col, row = (x1 + w / 2) // CELL + 1, (y1 + h / 2) // CELL + 1
        local free = not used[row * G + col]
        for _, b in ipairs(boxes) do
          if x1 <= b[3] and b[1] <= x1 + w and y1 <= b[4] and b[2] <= y1 + h then free = false end
        end
        if free then
          local c, v = math.random(1, #CLASSES), 0.75 + 0.25 * math.random()
          local function rect(x, y, rw, rh) img:narrow(1, y + 1, rh):narrow(2, x + 1, rw):fill_(v) end
          if c == 1 then rect(x1, y1, w, h)
          elseif c == 2 then
            rect(x1, y1, w, 2); rect(x1, y1 + h - 2, w, 2); rect(x1, y1, 2, h); rect(x1 + w - 2, y1, 2, h)
          else rect(x1, y1 + h // 2 - 2, w, 4); rect(x1 + w // 2 - 2, y1, 4, h) end
          boxes[#boxes + 1], classes[#classes + 1], used[row * G + col] = {x1, y1, x1 + w, y1 + h}, c, true
          local t = {1, (x1 + w / 2) / CELL - (col - 1), (y1 + h / 2) / CELL - (row - 1), w / S, h / S}
          for k = 1, 5 do T[i][k][row][col] = t[k] end
          T[i][5 + c][row][col] = 1
          break
        end
      end
    end
    truth[i] = {boxes = boxes, classes = classes}
  end
  return X:clamp(0, 1), T, truth
end
Xtr, Ttr, truth_tr = make_set(1024, 1, 'train')
Xte, Tte, truth_te = make_set(256, 2, 'test')
local count = {0, 0, 0}
for _, t in ipairs(truth_te) do for _, c in ipairs(t.classes) do count[c] = count[c] + 1 end end
print(string.format('test set: 256 canvases, %d squares, %d frames, %d crosses', count[1], count[2], count[3]))
print('targets per canvas:', table.concat(Tte[1]:shape(), ' x '))
]],
      scene = function(env)
        return 'detection', { images = env.Xte:narrow(1, 1, 8):select(2, 1),
          truth = { table.unpack(env.truth_te, 1, 8) }, classes = env.CLASSES,
          source = 'the lesson\'s synthetic set: shapes drawn on Fashion-MNIST test images' }
      end,
    },
    -- 6 ------------------------------------------------------------------------------------
    {
      title = say('A tiny one-stage detector, trained live', '一个很小的一阶段检测器，现场训练'),
      text = say([[
The detector is a small CNN that maps a 48x48 canvas to the 6x6 grid in one pass: three 3x3
convolutions of stride 2 (48 -> 24 -> 12 -> 6), one more 3x3 to widen what each cell sees, and a
1x1 convolution that gives each cell 5 + 3 numbers: objectness, tx, ty, tw, th and the 3 class
scores. The loss is YOLO's in small:

- objectness: binary cross-entropy over every cell (the few cells with an object weighted 4x);
- box: squared error of sigmoid(tx, ty, tw, th) against the targets, only in responsible cells, weighted 5 (YOLO's lambda_coord);
- class: cross-entropy, only in responsible cells.

Decoding turns every cell into a candidate: centre ((col - 1 + tx) * 8, (row - 1 + ty) * 8),
size (tw * 48, th * 48), class the most probable, score = objectness x class probability. It
trains with Adam for 300 steps of 32 canvases (1.2 to 5 seconds, measured on the 2 shared CPU
cores the lesson was written on); every 50 steps the scene shows the boxes on 8 test canvases. The
final picture keeps candidates of score >= 0.3, NMS per class at IoU 0.5 (the scene runs
lm.vision.nms); step 2 of the scene marks TP (IoU >= 0.5 with an object of the same class), FP and
misses, and its counters give precision and recall on these 8 canvases (when the lesson was
written: 16 TP, 6 FP, 3 missed of 19 objects; the weak boxes kept at 0.3 are the FPs).]],
        [[
检测器是一个小的 CNN，一次前向就把 48x48 的画布映射到 6x6 的网格：三个步长为 2 的 3x3 卷积
（48 -> 24 -> 12 -> 6），再一个 3x3 卷积让每个格子看得更广，最后一个 1x1 卷积给每个格子 5 + 3
个数：物体置信度、tx、ty、tw、th 和 3 个类别得分。损失函数是缩小版的 YOLO 损失：

- 物体置信度：在每个格子上算二元交叉熵（有物体的少数格子权重为 4）；
- 边框：sigmoid(tx, ty, tw, th) 与目标的平方误差，只在负责的格子上算，权重 5（YOLO 的 lambda_coord）；
- 类别：交叉熵，只在负责的格子上算。

解码把每个格子变成一个候选框：中心 ((col - 1 + tx) * 8, (row - 1 + ty) * 8)，大小
(tw * 48, th * 48)，类别取概率最大的，得分 = 物体置信度 x 类别概率。用 Adam 训练 300 步，每步
32 张画布（在编写本课用的 2 个共享 CPU 核上实测 1.2 到 5 秒，随机器负载而变）；每 50 步，场景在 8 张测试画布上
显示当前的框。
最终画面保留得分 >= 0.3 的候选框，按类别在 IoU 0.5 做 NMS（由场景调用 lm.vision.nms）；场景的
第 2 步标出 TP（与同类物体 IoU >= 0.5）、FP 和漏检，计数器给出这 8 张画布上的精度和召回率（编写
本课时：19 个物体中 16 个 TP、6 个 FP、3 个漏检；FP 是阈值 0.3 留下的那些弱框）。]]),
      code = [[
lm.manual_seed(3)
detector = nn.Sequential(
  nn.Conv2d(1, 16, 3, {padding = 1, stride = 2}), nn.ReLU(),    -- 48 -> 24
  nn.Conv2d(16, 32, 3, {padding = 1, stride = 2}), nn.ReLU(),   -- 24 -> 12
  nn.Conv2d(32, 32, 3, {padding = 1, stride = 2}), nn.ReLU(),   -- 12 -> 6
  nn.Conv2d(32, 32, 3, {padding = 1}), nn.ReLU(),
  nn.Conv2d(32, 5 + #CLASSES, 1))                               -- per cell: obj, box, classes
function yolo_loss(out, T)
  local obj = T:select(2, 1)
  local pos = obj:sum()
  local l_obj = F.binary_cross_entropy_with_logits(out:select(2, 1), obj, {pos_weight = lm.tensor({4.0})})
  local l_box = ((out:narrow(2, 2, 4):sigmoid() - T:narrow(2, 2, 4)):pow(2) * obj:unsqueeze(2)):sum() / pos
  local l_cls = -(F.log_softmax(out:narrow(2, 6, #CLASSES), 2) * T:narrow(2, 6, #CLASSES)):sum() / pos
  return l_obj + 5 * l_box + l_cls
end
-- decode(out, min_score) -> per canvas {boxes =, scores =, classes =}: one candidate per cell
function decode(out, min_score)
  local box, prob = out:narrow(2, 2, 4):sigmoid():tolist(), out:narrow(2, 6, #CLASSES):softmax(2)
  local p, c = prob:max(2)
  local score = (out:select(2, 1):sigmoid() * p:squeeze(2)):tolist()
  c = c:squeeze(2):tolist()
  local res = {}
  for i = 1, out:size(1) do
    local d = {boxes = {}, scores = {}, classes = {}}
    for r = 1, G do
      for q = 1, G do
        if score[i][r][q] >= min_score then
          local b = box[i]
          local cx, cy = (q - 1 + b[1][r][q]) * CELL, (r - 1 + b[2][r][q]) * CELL
          local w, h = b[3][r][q] * S, b[4][r][q] * S
          table.insert(d.boxes, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2})
          table.insert(d.scores, score[i][r][q])
          table.insert(d.classes, c[i][r][q])
        end
      end
    end
    res[i] = d
  end
  return res
end
-- the 8 first test canvases with the detector's boxes of score >= 0.3 (NMS by the scene)
function detection_view(note)
  detector:eval()
  local pred = decode(lm.no_grad(function() return detector(Xte:narrow(1, 1, 8)) end), 0.3)
  detector:train()
  return {images = Xte:narrow(1, 1, 8):select(2, 1), truth = {table.unpack(truth_te, 1, 8)},
    pred = pred, classes = CLASSES, nms = 0.5, iou = 0.5,
    source = 'computed by Lumen (CPU): the lesson\'s detector, ' .. note}
end
local opt = optim.Adam(detector:parameters(), {lr = 3e-3})
local t0 = lm.sys.clock()
-- (Lumen's own tests walk this lesson in a sanitizer build, several times slower: fewer steps there)
local STEPS = lm.build_info().sanitize and 100 or 300
for s = 1, STEPS do
  local first = ((s - 1) * 32) % 1024 + 1
  local loss = yolo_loss(detector(Xtr:narrow(1, first, 32)), Ttr:narrow(1, first, 32))
  opt:zero_grad(); loss:backward(); opt:step()
  if s % 50 == 0 then
    print(string.format('step %3d  loss %.3f', s, loss:item()))
    viz.show('detection', detection_view(string.format('after %d of %d steps', s, STEPS)))
  end
end
print(string.format('%d steps in %.1f s (CPU, measured)', STEPS, lm.sys.clock() - t0))
detector:eval()
]],
      scene = function(env)
        return 'detection', env.detection_view('after 300 training steps')
      end,
    },
    -- 7 ------------------------------------------------------------------------------------
    {
      title = say('mAP@0.5 on the held-out set', '在留出集上测 mAP@0.5'),
      text = say([[
The measure of step 4 on the 256 held-out canvases: every candidate of score >= 0.01, NMS per
class at IoU 0.5, then the all-points AP of each class at IoU >= 0.5 and their mean, mAP@0.5.
The AP is the lesson's own (`voc_ap`, the same definition as the exercise); when your
`average_precision` is defined, the code computes the same numbers with it too. On the machine
the lesson was written on, the detector of step 6 reached an mAP@0.5 of 0.908 (AP 0.930 squares,
0.856 frames, 0.939 crosses) after its few seconds: the frames, whose inside is background, are the hardest class (small boxes inside them
and around them are the false positives). This is a toy: 3 classes of clean shapes, one object
a cell, one scale; PASCAL VOC has 20 classes of real photographs and COCO 80 (and averages AP over
IoU 0.5 to 0.95). Try more steps, a smaller learning rate, or `detection_view` after changing
the 0.3 threshold.]],
        [[
在 256 张留出的画布上用第 4 步的指标：保留得分 >= 0.01 的每个候选框，按类别在 IoU 0.5 做 NMS，
再在 IoU >= 0.5 下算出每个类别的全点插值 AP，取平均就是 mAP@0.5。AP 用的是本课自己的
（`voc_ap`，与练习的定义相同）；如果你定义了 `average_precision`，代码也会用它把同样的数算一遍。
在编写本课的机器上，第 6 步的检测器训练几秒后 mAP@0.5 是 0.908（方块 0.930、方框 0.856、十字
0.939）：最难的一类是方框，它的内部
就是背景（框内和框周围的小框就是那些假正例）。这只是个玩具：3 类干净的图形，一格一个物体，一种
尺度；PASCAL VOC 有 20 类真实照片，COCO 有 80 类（并且在 IoU 0.5 到 0.95 上对 AP 求平均）。
可以试试更多的训练步数、更小的学习率，或者改掉 0.3 这个阈值再看 `detection_view`。]]),
      code = [[
function voc_ap(preds, truths, thr)   -- the lesson's all-points AP (the definition of step 4)
  table.sort(preds, function(a, b) return a.score > b.score end)
  local n, matched, tp, prec, hit = 0, {}, 0, {}, {}
  for _, boxes in pairs(truths) do n = n + #boxes end
  for k, p in ipairs(preds) do
    local best, pick = 0, nil
    for _, t in ipairs(truths[p.image]) do
      local o = overlap(p.box, t)
      if not matched[t] and o >= thr and o > best then best, pick = o, t end
    end
    if pick then matched[pick], tp, hit[k] = true, tp + 1, true end
    prec[k] = tp / k
  end
  local ap, best = 0, 0
  for k = #preds, 1, -1 do
    best = math.max(best, prec[k])
    if hit[k] then ap = ap + best / n end
  end
  return ap
end
-- per class c: the predictions kept by NMS over all test canvases, and the truth boxes
local dets = decode(lm.no_grad(function() return detector(Xte) end), 0.01)
local function class_set(c)
  local preds, truths = {}, {}
  for i, d in ipairs(dets) do
    local b, s = {}, {}
    for j = 1, #d.boxes do
      if d.classes[j] == c then b[#b + 1], s[#s + 1] = d.boxes[j], d.scores[j] end
    end
    if #b > 0 then
      for _, q in ipairs(lm.vision.nms(lm.tensor(b), lm.tensor(s), 0.5):tolist()) do
        preds[#preds + 1] = {image = i, box = b[q], score = s[q]}
      end
    end
    truths[i] = {}
    for j, t in ipairs(truth_te[i].boxes) do
      if truth_te[i].classes[j] == c then table.insert(truths[i], t) end
    end
  end
  return preds, truths
end
local mean, yours = 0, 0
for c, name in ipairs(CLASSES) do
  local preds, truths = class_set(c)
  local mine = ''
  if type(average_precision) == 'function' then   -- yours first: voc_ap sorts preds
    local ok, v = pcall(average_precision, preds, truths, 0.5)
    yours = ok and type(v) == 'number' and yours + v / #CLASSES or 0 / 0
    mine = ok and type(v) == 'number' and string.format('   yours: %.3f', v) or '   yours: error'
  end
  local ap = voc_ap(preds, truths, 0.5)
  mean = mean + ap / #CLASSES
  print(string.format('AP@0.5 %-6s %.3f  (%d predictions after NMS)%s', name, ap, #preds, mine))
end
print(string.format('mAP@0.5 = %.3f on 256 held-out canvases (computed by the lesson\'s voc_ap, CPU)', mean))
if type(average_precision) == 'function' then
  print(string.format('mAP@0.5 = %.3f by your average_precision', yours))
end
]],
    },
  },
}
