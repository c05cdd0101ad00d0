#!/usr/bin/python3
"""torch_modules.py — prints the PyTorch reference values of the nn modules, losses, optimizers,
schedulers and gradient clipping that tests/lua/test_nn_torch.lua and test_optim.lua compare
against, as a Lua file (the sibling of torch_values.py, which covers the functional ops in C).

    /usr/bin/python3 tests/nn/torch_modules.py > tests/nn/torch_modules_values.lua

Inputs are written as formulas of arange (no RNG), rebuilt the same way in Lua (see wave() and
the tests): wave(n, a, b, s) = s * sin(a * i + b) for i = 0..n-1. Class and embedding indices
are printed 1-based, as Lumen takes them. float64 throughout unless a case says float32.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_printoptions(precision=17)
d = torch.float64
out = []


def wave(n, a, b, s, dtype=d):
    return (torch.arange(n, dtype=torch.float64) * a + b).sin().mul(s).to(dtype)


def lua(v):
    if isinstance(v, torch.Tensor):
        v = v.detach().reshape(-1).tolist()
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, lua(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return "%.17g" % v


def put(name, **kv):
    out.append("  %s = {%s}," % (name, ", ".join("%s = %s" % (k, lua(v)) for k, v in kv.items())))


def grads(module, x, r):
    """output, and gradients of sum(output * r) for x and each parameter"""
    y = module(x)
    (y * r).sum().backward()
    g = {"out": y, "shape": list(y.shape)}
    if x.requires_grad:
        g["gx"] = x.grad
    for n, p in module.named_parameters():
        g["g_" + n.replace(".", "_")] = p.grad
    return g


def set_params(m, a):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(wave(p.numel(), a + 0.1 * k, 0.3, 0.5).reshape(p.shape))


# ---------------------------------------------------------------- modules
lin = nn.Linear(5, 3).double()
set_params(lin, 0.23)
x = wave(20, 0.37, 0.1, 1.5).reshape(4, 5).requires_grad_()
put("linear", **grads(lin, x, wave(12, 0.41, 0.2, 1.0).reshape(4, 3)))

conv = nn.Conv2d(2, 3, 3, stride=2, padding=1).double()
set_params(conv, 0.19)
x = wave(100, 0.37, 0.1, 1.5).reshape(2, 2, 5, 5).requires_grad_()
put("conv2d", **grads(conv, x, wave(2 * 3 * 3 * 3, 0.41, 0.2, 1.0).reshape(2, 3, 3, 3)))

bn = nn.BatchNorm2d(3).double()
set_params(bn, 0.29)
x = wave(2 * 3 * 2 * 2, 0.37, 0.1, 1.5).reshape(2, 3, 2, 2).requires_grad_()
g = grads(bn, x, wave(24, 0.41, 0.2, 1.0).reshape(2, 3, 2, 2))
bn(wave(24, 0.53, 0.7, 2.0).reshape(2, 3, 2, 2))  # a second training step
bn.eval()
put("batchnorm2d", running_mean=bn.running_mean, running_var=bn.running_var,
    eval_out=bn(wave(24, 0.61, 0.3, 1.0).reshape(2, 3, 2, 2)), batches=int(bn.num_batches_tracked), **g)

bn1 = nn.BatchNorm1d(4, momentum=0.3, eps=1e-3).double()
x = wave(24, 0.37, 0.1, 1.5).reshape(6, 4).requires_grad_()
g = grads(bn1, x, wave(24, 0.41, 0.2, 1.0).reshape(6, 4))
bn1.eval()
put("batchnorm1d", running_mean=bn1.running_mean, running_var=bn1.running_var,
    eval_out=bn1(wave(8, 0.61, 0.3, 1.0).reshape(2, 4)), **g)

ln = nn.LayerNorm([3, 4]).double()
set_params(ln, 0.31)
x = wave(24, 0.37, 0.1, 1.5).reshape(2, 3, 4).requires_grad_()
put("layernorm", **grads(ln, x, wave(24, 0.41, 0.2, 1.0).reshape(2, 3, 4)))

emb = nn.Embedding(5, 3).double()
set_params(emb, 0.43)
idx = torch.tensor([[1, 4, 1], [0, 2, 3]])
g = grads(emb, idx, wave(18, 0.41, 0.2, 1.0).reshape(2, 3, 3))
put("embedding", idx=idx + 1, **g)

x = wave(2 * 3 * 6 * 6, 0.37, 0.1, 1.5).reshape(2, 3, 6, 6).requires_grad_()
put("maxpool", **grads(nn.MaxPool2d(2), x, wave(2 * 3 * 3 * 3, 0.41, 0.2, 1.0).reshape(2, 3, 3, 3)))
x = wave(2 * 3 * 6 * 6, 0.37, 0.1, 1.5).reshape(2, 3, 6, 6).requires_grad_()
put("avgpool", **grads(nn.AvgPool2d(3, stride=2, padding=1), x, wave(2 * 3 * 3 * 3, 0.41, 0.2, 1.0).reshape(2, 3, 3, 3)))
for name, m in [("leaky_relu", nn.LeakyReLU(0.2)), ("gelu_tanh", nn.GELU(approximate="tanh")),
                ("softmax", nn.Softmax(dim=1)), ("log_softmax", nn.LogSoftmax(dim=0)),
                ("sigmoid", nn.Sigmoid()), ("tanh", nn.Tanh())]:
    x = wave(12, 0.37, 0.1, 1.5).reshape(3, 4).requires_grad_()
    put(name, **grads(m, x, wave(12, 0.41, 0.2, 1.0).reshape(3, 4)))

# ---------------------------------------------------------------- losses
logits = wave(12, 0.37, 0.1, 2.0).reshape(4, 3).requires_grad_()
target = torch.tensor([2, 0, 1, 2])
loss = nn.CrossEntropyLoss(label_smoothing=0.2)(logits, target)
loss.backward()
put("cross_entropy_smooth", loss=loss, gx=logits.grad, target=target + 1)
logp = F.log_softmax(wave(12, 0.37, 0.1, 2.0).reshape(4, 3), 1).detach().requires_grad_()
loss = nn.NLLLoss(reduction="sum")(logp, target)
loss.backward()
put("nll_sum", loss=loss, gx=logp.grad)
a = wave(6, 0.37, 0.1, 2.0).requires_grad_()
b = wave(6, 0.41, 0.2, 1.0)
loss = nn.MSELoss(reduction="none")(a, b)
loss.sum().backward()
put("mse_none", loss=loss, gx=a.grad)
p = wave(6, 0.37, 0.1, 0.45).add(0.5).requires_grad_()
y = wave(6, 0.29, 0.4, 0.5).add(0.5)
loss = nn.BCELoss()(p, y)
loss.backward()
put("bce", loss=loss, gx=p.grad)
z = wave(8, 0.37, 0.1, 3.0).reshape(2, 4).requires_grad_()
y = wave(8, 0.29, 0.4, 0.5).add(0.5).reshape(2, 4)
pw = torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=d)
loss = nn.BCEWithLogitsLoss(pos_weight=pw)(z, y)
loss.backward()
put("bce_logits_pw", loss=loss, gx=z.grad)
z = torch.tensor([0.0, 30.0, -30.0, 1e4, -1e4], dtype=d, requires_grad=True)
y = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0], dtype=d)
loss = nn.BCEWithLogitsLoss(reduction="sum")(z, y)
loss.backward()
put("bce_logits_extreme", loss=loss, gx=z.grad)

# ---------------------------------------------------------------- optimizers
STEPS = 5


def grad_at(t, dtype=d):
    return (torch.arange(6, dtype=torch.float64) * 0.7 + t).cos().mul((t + 1) * 0.3).reshape(2, 3).to(dtype)


def run(cls, kw, dtype=d):
    p = wave(6, 1.0, 0.0, 1.0, dtype).reshape(2, 3).requires_grad_()
    opt = cls([p], **kw)
    hist = []
    for t in range(STEPS):
        p.grad = grad_at(t, dtype)
        opt.step()
        hist.extend(p.detach().reshape(-1).tolist())
    return hist


cases = [
    ("sgd", torch.optim.SGD, dict(lr=0.1), {}),
    ("sgd_momentum", torch.optim.SGD, dict(lr=0.1, momentum=0.9), {}),
    ("sgd_dampening", torch.optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3), {}),
    ("sgd_nesterov_wd", torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01), {}),
    ("sgd_wd_maximize", torch.optim.SGD, dict(lr=0.1, weight_decay=0.1, maximize=True), {}),
    ("adam", torch.optim.Adam, dict(lr=0.01), {}),
    ("adam_betas_wd", torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1), {}),
    ("adam_amsgrad", torch.optim.Adam, dict(lr=0.01, amsgrad=True), {}),
    ("adamw", torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1), {}),
    ("adamw_amsgrad", torch.optim.AdamW, dict(lr=0.01, amsgrad=True, weight_decay=0.05, eps=1e-6), {}),
    ("rmsprop", torch.optim.RMSprop, dict(lr=0.01), {}),
    ("rmsprop_momentum", torch.optim.RMSprop, dict(lr=0.01, momentum=0.9), {}),
    ("rmsprop_centered_wd", torch.optim.RMSprop, dict(lr=0.01, centered=True, weight_decay=0.1), {}),
    ("rmsprop_centered_momentum", torch.optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5, alpha=0.9), {}),
]
for name, cls, kw, _ in cases:
    put("optim_" + name, p=run(cls, kw), opts=kw)
put("optim_sgd_momentum_f32", p=run(torch.optim.SGD, dict(lr=0.1, momentum=0.9), torch.float32))
put("optim_adam_f32", p=run(torch.optim.Adam, dict(lr=0.01), torch.float32))

# ---------------------------------------------------------------- schedulers
EPOCHS = 12


def lrs(make, groups=None):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD(groups(p) if groups else [p], lr=0.1)
    sch = make(opt)
    hist = [sch.get_last_lr()]
    for _ in range(EPOCHS):
        opt.step()
        sch.step()
        hist.append(sch.get_last_lr())
    return hist


S = torch.optim.lr_scheduler
put("sched_step", lr=lrs(lambda o: S.StepLR(o, step_size=3, gamma=0.5)))
put("sched_multistep", lr=lrs(lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)))
put("sched_exponential", lr=lrs(lambda o: S.ExponentialLR(o, gamma=0.9)))
put("sched_cosine", lr=lrs(lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01)))
put("sched_lambda", lr=lrs(lambda o: S.LambdaLR(o, lambda e: 1.0 / (e + 1))))
q = torch.zeros(1, requires_grad=True)
put("sched_step_groups", lr=lrs(lambda o: S.StepLR(o, step_size=2, gamma=0.1),
                               lambda p: [{"params": [p]}, {"params": [q], "lr": 0.5}]))

# ---------------------------------------------------------------- clipping
a = torch.zeros(2, 3, dtype=d, requires_grad=True)
b = torch.zeros(4, dtype=d, requires_grad=True)
for norm_type, name in [(2.0, "clip_l2"), (math.inf, "clip_inf"), (1.0, "clip_l1")]:
    a.grad = wave(6, 0.37, 0.1, 1.5).reshape(2, 3)
    b.grad = wave(4, 0.41, 0.2, 2.0)
    total = torch.nn.utils.clip_grad_norm_([a, b], 1.0, norm_type=norm_type)
    put(name, total=total, ga=a.grad, gb=b.grad)

print("-- tests/nn/torch_modules_values.lua: written by tests/nn/torch_modules.py (PyTorch %s); "
      "do not edit" % torch.__version__)
print("return {")
print("\n".join(out))
print("}")
