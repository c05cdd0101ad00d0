#!/usr/bin/python3
"""torch_text.py — the PyTorch CPU anchor of bench/text/gpt.sh: the char GPT of examples/char_gpt.lua
or the char LSTM of examples/char_lstm.lua, trained as examples/text_train.lua trains them, on the
same text (a file the benchmark writes from data.Corpus), printing one line
`summary: iters=N ms_per_iter=X train_loss=X val_loss=X` as the example does.

    /usr/bin/python3 bench/text/torch_text.py --model gpt --text corpus.txt --iters 2000 --threads 1
    options: --model gpt|lstm  --text FILE  --iters N  --threads N  --blas-threads N  --batch 12
             --block 64  --layers N  --heads 4  --width N  --lr X  --min-lr 1e-4  --warmup 100
             --eval-iters 20  --seed 1

The same as Lumen's: the vocabulary (the text's characters sorted by code point), the split (the
first 90% of the characters for training, the last 10% for validation), random windows of --block
characters with uniform starts (a new batch each step), the architecture and GPT-2 initialisation,
AdamW (betas 0.9, 0.95; weight decay 0.1 on the matrices, 0 elsewhere), the linear warm-up and
cosine decay, clipping at norm 1.0, validation as the mean loss over --eval-iters batches.
Debian's torch 1.13 has no F.scaled_dot_product_attention: the attention here is written out as
softmax(q k^T / sqrt(hd) + causal mask) v (Lumen's F.scaled_dot_product_attention takes its fused
kernel). Threads as bench/train/torch_train.py: OMP/MKL/OPENBLAS_NUM_THREADS set before import,
torch.set_num_threads(N); --blas-threads 1 keeps OpenBLAS's own pool to one thread.
"""
import argparse
import math
import os
import time

p = argparse.ArgumentParser()
p.add_argument("--model", default="gpt", choices=["gpt", "lstm"])
p.add_argument("--text", required=True)
p.add_argument("--iters", type=int, default=2000)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--blas-threads", type=int, default=None)
p.add_argument("--batch", type=int, default=12)
p.add_argument("--block", type=int, default=64)
p.add_argument("--layers", type=int, default=None)
p.add_argument("--heads", type=int, default=4)
p.add_argument("--width", type=int, default=None)
p.add_argument("--lr", type=float, default=None)
p.add_argument("--min-lr", type=float, default=1e-4)
p.add_argument("--warmup", type=int, default=100)
p.add_argument("--eval-iters", type=int, default=20)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()
for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = str(a.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(a.blas_threads or a.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)
gpt = a.model == "gpt"
layers = a.layers or (4 if gpt else 2)
width = a.width or (128 if gpt else 256)
lr = a.lr or (1e-3 if gpt else 2e-3)

text = open(a.text, encoding="utf-8").read()
vocab = sorted(set(text))
stoi = {c: i for i, c in enumerate(vocab)}
ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
n_val = int(math.floor(len(ids) * 0.1 + 0.5))
train_ids, val_ids = ids[:len(ids) - n_val], ids[len(ids) - n_val:]
offsets = torch.arange(a.block)


def batch(d, n, gen=None):
    starts = torch.randint(0, len(d) - a.block, (n, 1), generator=gen)
    idx = starts + offsets
    return d[idx], d[idx + 1]


class CausalSelfAttention(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.register_buffer("mask", torch.full((a.block, a.block), float("-inf")).triu(1))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h) + self.mask[:T, :T]
        y = att.softmax(-1) @ v  # softmax(q k^T / sqrt(d) + causal mask) v: torch 1.13 has no fused SDPA
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(c), CausalSelfAttention(c, h), nn.LayerNorm(c)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, v, c, h, n):
        super().__init__()
        self.tok, self.pos = nn.Embedding(v, c), nn.Embedding(a.block, c)
        self.blocks = nn.ModuleList([Block(c, h) for _ in range(n)])
        self.ln_f = nn.LayerNorm(c)
        for name, prm in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(prm)
            elif prm.dim() >= 2:
                proj = name.endswith("attn.proj.weight") or name.endswith("mlp.2.weight")
                nn.init.normal_(prm, 0, 0.02 / math.sqrt(2 * n) if proj else 0.02)

    def forward(self, idx):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(T))
        for b in self.blocks:
            x = b(x)
        return F.linear(self.ln_f(x), self.tok.weight)  # the head tied to the token embedding


class CharLSTM(nn.Module):
    def __init__(self, v, c, n):
        super().__init__()
        self.embed = nn.Embedding(v, c)
        self.lstm = nn.LSTM(c, c, num_layers=n, batch_first=True)
        self.head = nn.Linear(c, v)

    def forward(self, idx):
        return self.head(self.lstm(self.embed(idx))[0])


model = GPT(len(vocab), width, a.heads, layers) if gpt else CharLSTM(len(vocab), width, layers)
decay = [q for q in model.parameters() if q.dim() >= 2]
no_decay = [q for q in model.parameters() if q.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=lr, betas=(0.9, 0.95))
warmup = a.warmup if a.warmup < a.iters or a.iters <= 1 else a.iters // 10


def factor(t):
    if t < warmup:
        return (t + 1) / warmup
    floor = a.min_lr / lr
    prog = min(1.0, (t - warmup) / max(1, a.iters - warmup))
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * prog))


sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)


def loss_of(x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))


train_time, losses = 0.0, []
model.train()
for it in range(a.iters):
    t0 = time.perf_counter()
    x, y = batch(train_ids, a.batch)
    opt.zero_grad(set_to_none=True)
    loss = loss_of(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    losses.append(loss.item())
    train_time += time.perf_counter() - t0
model.eval()
with torch.no_grad():
    val = sum(loss_of(*batch(val_ids, a.batch, torch.Generator().manual_seed(s))).item()
              for s in range(1, a.eval_iters + 1)) / a.eval_iters
print("summary: iters=%d ms_per_iter=%.3f train_loss=%.4f val_loss=%.4f torch=%s threads=%d blas_threads=%d" % (
    a.iters, 1000 * train_time / a.iters, sum(losses) / len(losses), val, torch.__version__, a.threads,
    a.blas_threads or a.threads))
