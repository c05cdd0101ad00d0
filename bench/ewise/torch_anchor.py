#!/usr/bin/python3
"""torch_anchor.py THREADS — the PyTorch CPU anchor of bench_ewise's reductions over
non-contiguous dims: one line per case, 'name seconds', the median of repeated runs after a
warm-up, at THREADS threads. Run by bench_ewise in the same session (Debian's python3-torch,
/usr/bin/python3); the cases are the ones bench_ewise times in Lumen (same shapes, dtypes, dims).
"""
import os
import sys

_threads = sys.argv[1] if len(sys.argv) > 1 else "1"
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = _threads

import time

import torch

torch.set_num_threads(int(_threads))
torch.manual_seed(0)
print("version", torch.__version__)


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


x = torch.randn(4096, 4096)
y = torch.randn(2 ** 26, 2)
one = torch.ones(1)
print("tsum_dim", median_time(lambda: x.t().sum(0), 15))      # Lumen x:t():sum(1)
print("tsum_rows", median_time(lambda: x.t().sum(1), 15))     # Lumen x:t():sum(2)
print("pair_all", median_time(lambda: y.t().sum(), 9))        # Lumen y:t():sum()
print("pair_dim", median_time(lambda: y.t().sum(1), 9))       # Lumen y:t():sum(2)
print("expand_all", median_time(lambda: one.expand(2 ** 31).sum(), 5))
