#!/usr/bin/python3
"""torch_anchor.py THREADS N — the PyTorch CPU anchor of bench_autograd: the same chain of 1,000
elementwise ops on N elements (forward + backward, and forward under no_grad) and the same MLP step
built from primitive ops. Prints 'name seconds' lines (median after a warm-up) at THREADS threads.
Run by bench_autograd in the same session (Debian's python3-torch, /usr/bin/python3)."""
import os
import sys
import time

# The thread count must reach every pool PyTorch uses: torch.set_num_threads covers OpenMP and
# oneDNN, but Debian's torch does its matmuls in OpenBLAS's pthread build, which reads its own
# variable when it loads (measured: "1 thread" matmuls used both cores without it).
_threads = sys.argv[1] if len(sys.argv) > 1 else "1"
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = _threads

import torch

threads, n = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(threads)
torch.manual_seed(0)
print("version", torch.__version__)

OPS = 1000


def median_time(fn, reps):
    fn()
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


x = torch.rand(n, requires_grad=True)
w = torch.full((n,), 0.999)


def chain():
    y = x
    for i in range(OPS // 4):  # the cycle of bench_autograd.c: mul, add scalar, tanh, mul scalar
        y = y * w
        y = y + 0.01
        y = torch.tanh(y)
        y = y * 1.001
    return y


def chain_grad():
    chain().sum().backward()
    x.grad = None


def chain_nograd():
    with torch.no_grad():
        chain().sum()


print("chain_grad", median_time(chain_grad, 15))
print("chain_nograd", median_time(chain_nograd, 15))

xb = torch.randn(128, 784)
onehot = torch.nn.functional.one_hot(torch.randint(0, 10, (128,)), 10).float()
w1 = (torch.randn(784, 256) * 0.05).requires_grad_()
b1 = torch.zeros(256, requires_grad=True)
w2 = (torch.randn(256, 10) * 0.05).requires_grad_()
b2 = torch.zeros(10, requires_grad=True)


def mlp_step():
    h = torch.relu(xb @ w1 + b1)
    z = h @ w2 + b2
    zc = z - z.amax(1, keepdim=True)
    lp = zc - zc.exp().sum(1, keepdim=True).log()
    loss = -(lp * onehot).sum() / 128
    loss.backward()
    with torch.no_grad():
        for p in (w1, b1, w2, b2):
            p -= 0.01 * p.grad
            p.grad = None


print("mlp", median_time(mlp_step, 50))
