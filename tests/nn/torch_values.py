#!/usr/bin/python3
"""torch_values.py — prints the PyTorch reference values that tests/nn/test_nn_values.c holds as
constants. Run with Debian's python3-torch: /usr/bin/python3 tests/nn/torch_values.py
The inputs are written out literally here (no RNG), so the C test rebuilds them exactly."""
import torch
import torch.nn.functional as F

torch.set_printoptions(precision=10)
d = torch.float64


def show(name, t):
    vals = ", ".join("%.10g" % v for v in t.detach().reshape(-1).tolist())
    print("/* %s */ {%s}," % (name, vals))


x = torch.tensor([[1.0, -2.0, 3.0, 0.5], [0.25, 0.0, -1.5, 2.0], [-3.0, 1.0, 1e4, -1e4]], dtype=d,
                 requires_grad=True)
t = torch.tensor([2, 0, 2])
print("/* torch", torch.__version__, "*/")
show("softmax dim 1", F.softmax(x, 1))
show("log_softmax dim 0", F.log_softmax(x, 0))
show("gelu", F.gelu(x[:2]))
show("gelu tanh", F.gelu(x[:2], approximate="tanh"))
ce = F.cross_entropy(x, t)
show("cross_entropy mean", ce)
show("cross_entropy smoothing 0.1 sum", F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1))
ce.backward()
show("d cross_entropy / dx", x.grad)

img = torch.arange(2 * 2 * 5 * 5, dtype=d).reshape(2, 2, 5, 5).sin()
w = torch.arange(3 * 2 * 3 * 3, dtype=d).reshape(3, 2, 3, 3).cos() * 0.5
b = torch.tensor([0.1, -0.2, 0.3], dtype=d)
show("conv2d stride 2 padding 1", F.conv2d(img, w, b, stride=2, padding=1))
show("conv2d dilation 2", F.conv2d(img, w, None, dilation=2))
show("max_pool2d 3 stride 2 padding 1", F.max_pool2d(img, 3, 2, 1))
show("avg_pool2d 2", F.avg_pool2d(img, 2))
bn_in = img.reshape(2, 2, 25)[:, :, :4].contiguous()
rm = torch.zeros(2, dtype=d)
rv = torch.ones(2, dtype=d)
show("batch_norm train", F.batch_norm(bn_in, rm, rv, training=True, momentum=0.1))
show("running_mean", rm)
show("running_var", rv)
show("layer_norm last 2", F.layer_norm(img[0], (5, 5)).reshape(-1)[:10])
