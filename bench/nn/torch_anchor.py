#!/usr/bin/python3
"""torch_anchor.py THREADS — the PyTorch CPU anchor of bench_nn: prints one line per case,
'name seconds_per_iteration', median of repeated runs after a warm-up, at THREADS threads.
Run by bench_nn in the same session (Debian's python3-torch, /usr/bin/python3), with glibc's
MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ raised in its environment (see bench_nn.c); the
version line says whether oneDNN (mkldnn) is there and which thresholds the process saw."""
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
import torch.nn.functional as F

threads = int(sys.argv[1])
torch.set_num_threads(threads)
torch.manual_seed(0)
print("version", "%s,oneDNN=%s,MALLOC_MMAP_THRESHOLD_=%s" % (
    torch.__version__, torch.backends.mkldnn.is_available(),
    os.environ.get("MALLOC_MMAP_THRESHOLD_", "unset")))


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


def conv_case(n, c, k, hw, reps):
    x = torch.randn(n, c, hw, hw, requires_grad=True)
    w = torch.randn(k, c, 3, 3, requires_grad=True)
    b = torch.randn(k, requires_grad=True)

    def step():
        y = F.conv2d(x, w, b, padding=1)
        y.sum().backward()
        x.grad = w.grad = b.grad = None

    return median_time(step, reps)


def mlp_step(reps):
    x = torch.randn(128, 784)
    t = torch.randint(0, 10, (128,))
    w1 = (torch.randn(256, 784) * 0.05).requires_grad_()
    b1 = torch.zeros(256, requires_grad=True)
    w2 = (torch.randn(10, 256) * 0.05).requires_grad_()
    b2 = torch.zeros(10, requires_grad=True)

    def step():
        h = F.relu(F.linear(x, w1, b1))
        loss = F.cross_entropy(F.linear(h, w2, b2), t)
        loss.backward()
        for p in (w1, b1, w2, b2):
            p.grad = None

    return median_time(step, reps)


print("lenet", conv_case(64, 1, 32, 28, 15))
print("vgg", conv_case(32, 64, 64, 32, 5))
print("mlp", mlp_step(50))
