#!/usr/bin/python3
"""torch_convt.py — prints PyTorch's values of F.conv_transpose2d (strides, paddings, output
paddings, dilations, groups, with and without bias, odd and one-pixel images) and the gradients of
sum(out * w) with respect to the input, the weight and the bias, for tests/lua/test_convt.lua, as a
Lua file. Regenerate:

    /usr/bin/python3 tests/nn/torch_convt.py > tests/nn/torch_convt_values.lua

float64, no RNG: x, the weight and the bias are wave(numel, a, b, s) in their shapes
(wave(n, a, b, s)[i] = s sin(a i + b), i = 0..n-1, as the other scripts here): x = wave(., 0.37,
0.1, 1.5), weight = wave(., 0.53, 0.3, 0.8), bias = wave(., 0.71, 0.5, 0.5), w = wave(., 0.41,
0.2, 1). Printed whole, flattened in C order.
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
    if v is None:
        return "nil"
    return "%.17g" % v


def numel(shape):
    n = 1
    for k in shape:
        n *= k
    return n


def case(xshape, cout, k, stride, padding, output_padding, dilation, groups, bias):
    N, C, H, W = xshape
    kh, kw = k
    wshape = (C, cout // groups, kh, kw)
    x = wave(numel(xshape), 0.37, 0.1, 1.5).reshape(xshape).requires_grad_()
    w_ = wave(numel(wshape), 0.53, 0.3, 0.8).reshape(wshape).requires_grad_()
    b_ = wave(cout, 0.71, 0.5, 0.5).requires_grad_() if bias else None
    y = F.conv_transpose2d(x, w_, b_, stride=stride, padding=padding, output_padding=output_padding,
                           groups=groups, dilation=dilation)
    r = wave(y.numel(), 0.41, 0.2, 1).reshape(y.shape)
    (y * r).sum().backward()
    return ("  {x = %s, w = %s, stride = %s, padding = %s, output_padding = %s, dilation = %s, groups = %d, bias = %s,\n"
            "   out_shape = %s, out = %s,\n   gx = %s,\n   gw = %s,\n   gb = %s}," % (
                lua(list(xshape)), lua(list(wshape)), lua(list(stride)), lua(list(padding)), lua(list(output_padding)),
                lua(list(dilation)), groups, lua(bias), lua(list(y.shape)), lua(y.detach().reshape(-1).tolist()),
                lua(x.grad.reshape(-1).tolist()), lua(w_.grad.reshape(-1).tolist()),
                lua(b_.grad.tolist()) if bias else "nil"))


rows = [
    # (N, C, H, W), cout, kernel, stride, padding, output_padding, dilation, groups, bias
    ((1, 1, 1, 1), 1, (1, 1), (1, 1), (0, 0), (0, 0), (1, 1), 1, False),
    ((1, 1, 1, 1), 2, (3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
    ((2, 3, 4, 4), 2, (4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1, True),      # DCGAN's 2x upsampling
    ((1, 2, 3, 5), 4, (3, 2), (2, 3), (0, 1), (1, 2), (1, 1), 1, True),
    ((2, 4, 3, 3), 6, (3, 3), (1, 1), (1, 1), (0, 0), (2, 2), 2, True),
    ((1, 4, 5, 4), 4, (2, 3), (3, 2), (1, 0), (2, 1), (1, 1), 4, False),
    ((1, 3, 2, 7), 5, (5, 1), (1, 2), (2, 0), (0, 1), (1, 1), 1, True),
    ((2, 2, 6, 5), 3, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1, True),
    ((1, 1, 4, 3), 2, (2, 2), (1, 1), (0, 0), (1, 1), (2, 2), 1, False),     # output_padding < dilation
    ((3, 2, 1, 4), 2, (1, 3), (1, 1), (0, 1), (0, 0), (1, 3), 2, True),
    ((1, 6, 3, 3), 9, (3, 3), (2, 2), (0, 0), (1, 0), (1, 1), 3, True),
]
print("-- tests/nn/torch_convt_values.lua: written by tests/nn/torch_convt.py (PyTorch %s); do not edit" % torch.__version__)
print("return {")
for r in rows:
    print(case(*r))
print("}")
