#!/usr/bin/python3
"""torch_attention.py THREADS [T] — PyTorch's side of bench/text/attention.sh: the same causal
attention forward + backward (B x H = 4, head dim 64) composed as softmax(q k^T / 8 + mask) v, since
Debian's torch 1.13 has no scaled_dot_product_attention (2.0); median of 5 after a warm-up."""
import json, os, sys, time
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
T = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(threads)
import torch  # noqa: E402
torch.set_num_threads(threads)
torch.manual_seed(1)
q, k, v = (torch.randn(4, T, 64, requires_grad=True) for _ in range(3))
mask = torch.ones(T, T).tril() == 0
def it():
    s = (q @ k.transpose(-2, -1)) / 8.0
    (s.masked_fill(mask, float("-inf")).softmax(-1) @ v).sum().backward()
    q.grad = k.grad = v.grad = None
it()
ts = []
for _ in range(5):
    t0 = time.perf_counter(); it(); ts.append(time.perf_counter() - t0)
ts.sort()
print(json.dumps({"impl": "PyTorch %s composed" % torch.__version__, "threads": threads, "T": T, "ms": 1e3 * ts[2]}))
