#!/usr/bin/python3
"""torch_norm.py — prints PyTorch's values of F.group_norm (groups of one channel, of all channels
and between; 2-D, 3-D and 4-D inputs; with and without the affine weight and bias; another eps)
and the gradients of sum(out * r) with respect to the input, the weight and the bias, for
tests/lua/test_groupnorm.lua, as a Lua file. Regenerate:

    /usr/bin/python3 tests/nn/torch_norm.py > tests/nn/torch_norm_values.lua

float64, no RNG: x = wave(., 0.37, 0.1, 1.5) + 0.3, weight = wave(., 0.53, 0.3, 0.8) + 1, bias =
wave(., 0.71, 0.5, 0.5), r = wave(., 0.41, 0.2, 1) (wave(n, a, b, s)[i] = s sin(a i + b)).
"""
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
    return "%.17g" % v


def case(shape, groups, affine, eps):
    n = 1
    for k in shape:
        n *= k
    C = shape[1]
    x = (wave(n, 0.37, 0.1, 1.5) + 0.3).reshape(shape).requires_grad_()
    w = (wave(C, 0.53, 0.3, 0.8) + 1).requires_grad_() if affine else None
    b = wave(C, 0.71, 0.5, 0.5).requires_grad_() if affine else None
    y = F.group_norm(x, groups, w, b, eps)
    r = wave(y.numel(), 0.41, 0.2, 1).reshape(y.shape)
    (y * r).sum().backward()
    return "  {shape = %s, groups = %d, affine = %s, eps = %s, out = %s, gx = %s%s}," % (
        lua(list(shape)), groups, lua(affine), lua(eps), lua(y.detach().reshape(-1).tolist()),
        lua(x.grad.reshape(-1).tolist()),
        (", gw = %s, gb = %s" % (lua(w.grad.tolist()), lua(b.grad.tolist()))) if affine else "")


rows = [((2, 4, 3, 3), 2, True, 1e-5), ((2, 4, 3, 3), 4, True, 1e-5), ((2, 4, 3, 3), 1, False, 1e-5),
        ((3, 6, 5), 3, True, 1e-3), ((1, 8), 2, True, 1e-5), ((2, 6, 2, 1, 3), 2, True, 1e-5),
        ((1, 3, 1, 2), 3, True, 1e-5), ((4, 4, 2, 2), 2, False, 1e-2)]
print("-- tests/nn/torch_norm_values.lua: written by tests/nn/torch_norm.py (PyTorch %s); do not edit" % torch.__version__)
print("return {")
for r in rows:
    print(case(*r))
print("}")
