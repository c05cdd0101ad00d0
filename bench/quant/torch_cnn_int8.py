#!/usr/bin/python3
"""torch_cnn_int8.py — the PyTorch anchor of bench/quant/cnn.sh: examples/cnn_fashion.lua's CNN
(conv 3x3 16 - ReLU - pool 2, conv 3x3 32 - ReLU - pool 2, linear 1568 -> 10) at inference on a
batch of 256 28x28 images, float32 against PyTorch's quantized engine (eager static quantization:
conv+ReLU fused, per-channel int8 weights, uint8 activations calibrated on the batch), median of
ROUNDS timed calls after a warm-up. Prints one JSON line per configuration.

    /usr/bin/python3 bench/quant/torch_cnn_int8.py --threads 1 [--engine onednn|qnnpack|fbgemm|x86]

Threads: OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS set before torch is imported
(as bench/train/torch_train.py does), then torch.set_num_threads.
"""
import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=1)
p.add_argument("--engine", default="onednn")
p.add_argument("--rounds", type=int, default=15)
a = p.parse_args()
for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

torch.set_num_threads(a.threads)
torch.manual_seed(5)
if a.engine not in torch.backends.quantized.supported_engines:
    print(json.dumps({"error": "engine %s not in %s" % (a.engine, torch.backends.quantized.supported_engines)}))
    sys.exit(0)
torch.backends.quantized.engine = a.engine


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 7 * 7, 10)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.pool(self.relu1(self.conv1(x)))
        x = self.pool(self.relu2(self.conv2(x)))
        return self.dequant(self.fc(torch.flatten(x, 1)))


def median_ms(fn, rounds):
    fn()
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return 1e3 * ts[len(ts) // 2]


x = torch.rand(256, 1, 28, 28)
model = CNN().eval()
with torch.no_grad():
    tf = median_ms(lambda: model(x), a.rounds)
    model.qconfig = torch.ao.quantization.get_default_qconfig(a.engine)
    fused = torch.ao.quantization.fuse_modules(model, [["conv1", "relu1"], ["conv2", "relu2"]])
    prepared = torch.ao.quantization.prepare(fused)
    prepared(x)
    q = torch.ao.quantization.convert(prepared)
    ti = median_ms(lambda: q(x), a.rounds)
print(json.dumps({"impl": "PyTorch %s" % torch.__version__, "engine": a.engine, "threads": a.threads,
                  "batch": 256, "float32_ms": tf, "int8_ms": ti}))
