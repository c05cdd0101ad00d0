--[[
lm.vision — boxes as torchvision.ops has them: box_area, box_iou, nms.

Boxes are (N, 4) tensors of corners (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2, float32 or
float64 (integer corners are taken as float32; a box with
x2 < x1 or y2 < y1 is an error naming it: torchvision silently computes negative areas). Defined
results where torchvision divides 0 by 0: two boxes of zero area have IoU 0. Indices are
1-based, as everywhere in Lumen. Composed from tensor ops, so box_iou is differentiable.
Read next: docs/nn.md.
]]
local lm = require 'lumen'

local V = {}

local function check_boxes(fname, what, b)
  if not lm.is_tensor(b) then error(string.format('%s: %s must be an (N, 4) tensor of boxes, got %s', fname, what, type(b)), 3) end
  if b:dim() ~= 2 or b:size(2) ~= 4 then
    error(string.format('%s: %s of shape [%s] must be (N, 4): x1, y1, x2, y2', fname, what,
      table.concat(b:shape(), ', ')), 3)
  end
  local dt = b:dtype()
  if dt ~= 'float32' and dt ~= 'float64' then
    if dt:match('^q') then error(string.format('%s: %s must be a float or integer tensor, got %s', fname, what, dt), 3) end
    b = b:float() -- integer (or 16-bit) corners: float32
  end
  if b:size(1) == 0 then return b end
  local bad = lm.no_grad(function()
    local d = b:detach()
    return ((d:select(2, 3) - d:select(2, 1)):lt(0):double() + (d:select(2, 4) - d:select(2, 2)):lt(0):double()
      + d:ne(d):double():sum(2))
  end)
  if bad:max():item() > 0 then
    local i = bad:argmax():item()
    local r = b[i]:tolist()
    error(string.format('%s: %s box %d is (%g, %g, %g, %g): corners must be x1 <= x2 and y1 <= y2 (and not NaN)',
      fname, what, i, r[1], r[2], r[3], r[4]), 3)
  end
  return b
end

--- lm.vision.box_area(boxes) -> (N) areas (x2 - x1) (y2 - y1).
function V.box_area(boxes)
  boxes = check_boxes('lm.vision.box_area', 'boxes', boxes)
  return (boxes:select(2, 3) - boxes:select(2, 1)) * (boxes:select(2, 4) - boxes:select(2, 2))
end

--- lm.vision.box_iou(a, b) -> (N, M): intersection over union of every box of a with every box of b.
function V.box_iou(a, b)
  a = check_boxes('lm.vision.box_iou', 'boxes1', a)
  b = check_boxes('lm.vision.box_iou', 'boxes2', b)
  if a:dtype() ~= b:dtype() then
    error(string.format('lm.vision.box_iou: boxes1 is %s and boxes2 %s', a:dtype(), b:dtype()), 2)
  end
  local N, M = a:size(1), b:size(1)
  if N == 0 or M == 0 then return lm.zeros(N, M, { dtype = a:dtype() }) end
  local area_a = (a:select(2, 3) - a:select(2, 1)) * (a:select(2, 4) - a:select(2, 2))
  local area_b = (b:select(2, 3) - b:select(2, 1)) * (b:select(2, 4) - b:select(2, 2))
  local ax1, ay1 = a:select(2, 1):view(N, 1), a:select(2, 2):view(N, 1)
  local ax2, ay2 = a:select(2, 3):view(N, 1), a:select(2, 4):view(N, 1)
  local bx1, by1 = b:select(2, 1):view(1, M), b:select(2, 2):view(1, M)
  local bx2, by2 = b:select(2, 3):view(1, M), b:select(2, 4):view(1, M)
  local w = (lm.minimum(ax2, bx2) - lm.maximum(ax1, bx1)):clamp(0, math.huge)
  local h = (lm.minimum(ay2, by2) - lm.maximum(ay1, by1)):clamp(0, math.huge)
  local inter = w * h
  local union = area_a:view(N, 1) + area_b:view(1, M) - inter
  -- 0 / 0 (two boxes of no area) is 0, not NaN
  local safe = union + union:eq(0):to(union:dtype())
  return inter / safe
end

--- lm.vision.nms(boxes, scores, iou_threshold) -> int64 indices (1-based) of the boxes kept, by
--- decreasing score: a box is dropped when its IoU with a box kept before it is above the threshold
--- (torchvision's greedy rule; equal scores: the lower index first).
function V.nms(boxes, scores, iou_threshold)
  local fname = 'lm.vision.nms'
  boxes = check_boxes(fname, 'boxes', boxes)
  if not lm.is_tensor(scores) or scores:dim() ~= 1 or scores:size(1) ~= boxes:size(1) then
    error(string.format('%s: scores must be a 1-D tensor of %d scores (one per box), got %s', fname, boxes:size(1),
      lm.is_tensor(scores) and ('shape [' .. table.concat(scores:shape(), ', ') .. ']') or type(scores)), 2)
  end
  if type(iou_threshold) ~= 'number' or iou_threshold ~= iou_threshold then
    error(fname .. ': iou_threshold must be a number, got ' .. tostring(iou_threshold), 2)
  end
  local N = boxes:size(1)
  if N == 0 then return lm.zeros(0, { dtype = 'int64' }) end
  return lm.no_grad(function()
    local s = scores:detach():double():tolist()
    local order = {}
    for i = 1, N do order[i] = i end
    table.sort(order, function(i, j) if s[i] ~= s[j] then return s[i] > s[j] end return i < j end)
    local iou = V.box_iou(boxes:detach(), boxes:detach()):double()
    local rows = iou:tolist()
    local keep, dead = {}, {}
    for _, i in ipairs(order) do
      if not dead[i] then
        keep[#keep + 1] = i
        local r = rows[i]
        for j = 1, N do if r[j] > iou_threshold then dead[j] = true end end
      end
    end
    return lm.tensor(keep, { dtype = 'int64' })
  end)
end

return V
