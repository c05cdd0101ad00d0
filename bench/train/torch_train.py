#!/usr/bin/python3
"""torch_train.py — the PyTorch CPU anchor of bench/train (and of the accuracy targets): trains
the same models as examples/mlp_fashion.lua and cnn_fashion.lua on the same Fashion-MNIST files,
with the same batch, lr, optimizer, epochs and thread count, and prints one JSON line per epoch
(seconds of training, test loss and accuracy), one for a DataLoader-only epoch, and peak RSS.

    /usr/bin/python3 bench/train/torch_train.py --model mlp --threads 1 --epochs 3
    options: --model mlp|cnn  --threads N  --epochs N  --batch 128  --lr 0.1  --optim sgd|adam
             --seed N  --loader torch|index  --root DIR  --blas-threads N

Threads: OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are set to N before torch is
imported (Debian's torch does its matmuls in OpenBLAS's pthread build, which reads its own variable;
without it, "1 thread" used both cores — bench/nn found this), then torch.set_num_threads(N).
--blas-threads 1 with --threads 2 gives OpenBLAS one thread and torch's OpenMP pool two: Debian's
torch otherwise runs two pools (OpenMP and OpenBLAS's pthreads) that fight over the cores.
--loader torch (default) is the standard torch.utils.data.DataLoader over a TensorDataset
(shuffle=True); --loader index gathers each batch as x[perm[i:i+b]], the fastest plain-PyTorch way.
"""
import argparse
import gzip
import json
import os
import resource
import struct
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
p.add_argument("--threads", type=int, default=1)
p.add_argument("--epochs", type=int, default=1)
p.add_argument("--batch", type=int, default=128)
p.add_argument("--lr", type=float, default=None)
p.add_argument("--optim", default="sgd", choices=["sgd", "adam"])
p.add_argument("--seed", type=int, default=1)
p.add_argument("--loader", default="torch", choices=["torch", "index"])
p.add_argument("--root", default="/usr/share/datasets/fashion-mnist")
p.add_argument("--blas-threads", type=int, default=None,
               help="OpenBLAS's threads (default: --threads); 1 keeps its pthread pool out of torch's OpenMP one")
a = p.parse_args()
for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(a.blas_threads or a.threads)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(split):
    pre = "train" if split == "train" else "t10k"
    x = torch.from_numpy(idx(os.path.join(a.root, pre + "-images-idx3-ubyte.gz")).copy())
    y = torch.from_numpy(idx(os.path.join(a.root, pre + "-labels-idx1-ubyte.gz")).copy()).long()
    return x.float().div_(255).unsqueeze(1), y


class FashionCNN(nn.Module):
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


t0 = time.perf_counter()
xtr, ytr = load("train")
xte, yte = load("test")
load_s = time.perf_counter() - t0
if a.model == "mlp":
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
else:
    model = FashionCNN()
lr = a.lr if a.lr is not None else (0.1 if a.optim == "sgd" else 1e-3)
opt = torch.optim.SGD(model.parameters(), lr=lr) if a.optim == "sgd" else torch.optim.Adam(model.parameters(), lr=lr)
crit = nn.CrossEntropyLoss()
ds = torch.utils.data.TensorDataset(xtr, ytr)


def batches():
    if a.loader == "torch":
        yield from torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=True)
    else:
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), a.batch):
            j = perm[i:i + a.batch]
            yield xtr[j], ytr[j]


def evaluate():
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(xte), 500):  # batches of 500, as examples/fashion_train.lua evaluates
            out = model(xte[i:i + 500])
            loss += F.cross_entropy(out, yte[i:i + 500], reduction="sum").item()
            correct += (out.argmax(1) == yte[i:i + 500]).sum().item()
    model.train()
    return loss / len(xte), correct / len(xte)


print(json.dumps({"torch": torch.__version__, "threads": a.threads, "blas_threads": a.blas_threads or a.threads,
                  "loader": a.loader, "load_s": load_s}))
t = time.perf_counter()
n = 0
for x, y in batches():
    n += len(x)
print(json.dumps({"dataloader_epoch_s": time.perf_counter() - t, "samples": n}))
for epoch in range(1, a.epochs + 1):
    t = time.perf_counter()
    total, steps = 0.0, 0
    for x, y in batches():
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
        steps += 1
    s = time.perf_counter() - t
    tl, acc = evaluate()
    print(json.dumps({"epoch": epoch, "seconds": s, "train_loss": total / steps, "test_loss": tl, "accuracy": acc}))
    sys.stdout.flush()
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
