#!/usr/bin/python3
"""torch_resize.py — prints PyTorch's values of F.adaptive_avg_pool2d and F.interpolate (nearest,
bilinear with and without align_corners, by size and by scale factor, up and down, non-divisible
sizes) and their input gradients, plus reference IoU matrices and NMS keeps written here in plain
Python (torchvision's rules: corners x1, y1, x2, y2; greedy NMS by decreasing score, suppressing
IoU > threshold) for tests/lua/test_resize.lua, as a Lua file. Regenerate:

    /usr/bin/python3 tests/nn/torch_resize.py > tests/nn/torch_resize_values.lua

float64, no RNG: x = wave(numel, 0.37, 0.1, 1.5) in its shape and the loss sum(out * w) with
w = wave(numel, 0.41, 0.2, 1) (wave(n, a, b, s)[i] = s sin(a i + b), i = 0..n-1, as the other
scripts here). Printed whole: the outputs and d loss / d x, flattened in C order.
"""
import math

import torch
import torch.nn.functional as F

d = torch.float64


def wave(n, a, b, s):
    return (torch.arange(n, dtype=d) * a + b).sin().mul(s)


def lua(v):
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return "'" + v + "'"
    if v is None:
        return "nil"
    return "%.17g" % v


def case(name, shape, fn, opts):
    n = 1
    for k in shape:
        n *= k
    x = wave(n, 0.37, 0.1, 1.5).reshape(shape).requires_grad_()
    y = fn(x)
    w = wave(y.numel(), 0.41, 0.2, 1).reshape(y.shape)
    (y * w).sum().backward()
    return "  {name = %s, shape = %s, %s, out_shape = %s, out = %s, grad = %s}," % (
        lua(name), lua(list(shape)), opts, lua(list(y.shape)), lua(y.detach().reshape(-1).tolist()),
        lua(x.grad.reshape(-1).tolist()))


rows = []
for shape, out in (((1, 1, 5, 7), (3, 2)), ((2, 3, 7, 5), (3, 4)), ((1, 2, 6, 6), (2, 2)), ((1, 1, 4, 5), (1, 1)),
                   ((1, 1, 3, 3), (5, 4)), ((2, 1, 5, 4), (5, 4))):
    rows.append(case("adaptive %s -> %s" % (shape, out), shape, lambda x, o=out: F.adaptive_avg_pool2d(x, o),
                     "fn = 'adaptive', output_size = %s" % lua(list(out))))
for mode, align in (("nearest", None), ("bilinear", False), ("bilinear", True)):
    for shape, size in (((1, 2, 3, 4), (6, 9)), ((2, 1, 7, 5), (3, 4)), ((1, 1, 5, 5), (5, 8)), ((1, 1, 1, 3), (4, 2))):
        rows.append(case("%s align=%s size %s -> %s" % (mode, align, shape, size), shape,
                         lambda x, s=size, m=mode, a=align: F.interpolate(x, size=s, mode=m, align_corners=a),
                         "fn = 'interpolate', mode = '%s', align_corners = %s, size = %s" % (mode, lua(align), lua(list(size)))))
    for shape, sf in (((1, 2, 3, 4), 2.0), ((1, 1, 5, 7), 1.5), ((1, 1, 8, 6), 0.5), ((1, 1, 4, 3), (2.0, 3.0))):
        rows.append(case("%s align=%s scale %s x %s" % (mode, align, shape, sf), shape,
                         lambda x, s=sf, m=mode, a=align: F.interpolate(x, scale_factor=s, mode=m, align_corners=a),
                         "fn = 'interpolate', mode = '%s', align_corners = %s, scale_factor = %s" % (
                             mode, lua(align), lua(list(sf) if isinstance(sf, tuple) else sf))))


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def boxes(n, a, b):
    out = []
    for i in range(n):
        x1 = 10 * math.sin(a * i + b) + 10
        y1 = 10 * math.sin(a * i + b + 1.3) + 10
        w = 1 + 6 * (math.sin(0.7 * i + b) + 1)
        h = 1 + 6 * (math.sin(0.9 * i + b + 0.4) + 1)
        out.append([x1, y1, x1 + w, y1 + h])
    return out


box_rows = []
for n, m, a, b in ((5, 4, 0.9, 0.2), (12, 7, 1.7, 0.5), (1, 3, 0.3, 0.1)):
    A, B = boxes(n, a, b), boxes(m, a + 0.4, b + 0.3)
    box_rows.append("  {a = %s, b = %s, iou = %s}," % (lua(A), lua(B), lua([[iou(p, q) for q in B] for p in A])))
nms_rows = []
for n, a, b, thr in ((30, 0.37, 0.2, 0.5), (40, 0.13, 0.9, 0.3), (25, 0.71, 0.4, 0.7)):
    A = boxes(n, a, b)
    scores = [0.5 + 0.5 * math.sin(1.3 * i + b) for i in range(n)]
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    keep, dead = [], set()
    for i in order:
        if i in dead:
            continue
        keep.append(i + 1)
        for j in range(n):
            if iou(A[i], A[j]) > thr:
                dead.add(j)
    nms_rows.append("  {boxes = %s, scores = %s, threshold = %s, keep = %s}," % (lua(A), lua(scores), lua(thr), lua(keep)))

print("-- tests/nn/torch_resize_values.lua: written by tests/nn/torch_resize.py (PyTorch %s); do not edit" % torch.__version__)
print("return {\nresize = {")
print("\n".join(rows))
print("},\niou = {")
print("\n".join(box_rows))
print("},\nnms = {")
print("\n".join(nms_rows))
print("},\n}")
