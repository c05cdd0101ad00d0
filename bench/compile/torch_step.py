#!/usr/bin/python3
"""torch_step.py — the PyTorch anchor of bench/compile: one training step (zero_grad, forward,
cross-entropy, backward, SGD lr 0.1) of the MLP (784-256-10) and the CNN of bench/compile/run.lua,
batch 128, eager (Debian's torch 1.13 has no torch.compile), and the 4-op chain
((x * 2 + 1).relu() * 3) on 2^24 float32; and the eval CNN of run.lua's section 4 (the layout
pass) in NCHW and in channels_last, under no_grad. Prints one JSON line: milliseconds, median of --repeats
calls after --warmup calls.

    /usr/bin/python3 bench/compile/torch_step.py --threads 2 [--repeats 20] [--warmup 3] [--quick]

Threads: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are set before torch is imported
(Debian's torch runs its matmuls in OpenBLAS's pthread build), then torch.set_num_threads.
"""
import argparse
import json
import os
import statistics
import time

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=2)
p.add_argument("--repeats", type=int, default=20)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--quick", action="store_true")
a = p.parse_args()
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(a.threads)
if a.quick:
    a.repeats, a.warmup = 3, 1


def ms(fn):
    for _ in range(a.warmup):
        fn()
    t = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def step_of(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()
    return step


out = {"threads": a.threads, "torch": torch.__version__}
n = (1 << 20) if a.quick else (1 << 24)
x = torch.randn(n)
out["chain_ms"] = ms(lambda: ((x * 2 + 1).relu() * 3))
out["copy_ms"] = ms(lambda: x.clone())
xb, yb = torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,))
torch.manual_seed(1)
mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
s = step_of(mlp)
out["mlp_ms"] = ms(lambda: s(xb, yb))
torch.manual_seed(1)
s = step_of(CNN())
out["cnn_ms"] = ms(lambda: s(xb, yb))
torch.manual_seed(1)
ev = nn.Sequential(nn.Conv2d(16, 32, 5, padding=2), nn.BatchNorm2d(32), nn.ReLU(),
                   nn.Conv2d(32, 32, 5, padding=2), nn.BatchNorm2d(32), nn.ReLU(),
                   nn.Conv2d(32, 32, 3, stride=2), nn.ReLU()).eval()
xe = torch.randn(8 if a.quick else 64, 16, 14, 14)
with torch.no_grad():
    out["eval_cnn_nchw_ms"] = ms(lambda: ev(xe))
    evl = ev.to(memory_format=torch.channels_last)
    xl = xe.to(memory_format=torch.channels_last)
    out["eval_cnn_channels_last_ms"] = ms(lambda: evl(xl))
print(json.dumps(out))
