#!/usr/bin/python3
"""bench/generative/torch_models.py — PyTorch 1.13 (CPU) twins of lumen/generative.lua's models,
timed per training step, for bench/generative/run.sh: the conditional DCGAN (gen.DCGAN) and the
conditional U-Net DDPM (gen.UNet / gen.ImageDDPM) on 28 x 28 images, batch 64, and the style
transfer step (gen.StyleNet's image optimisation) on a 128 x 128 image. Prints 'name ms' lines:
the median of the timed steps after warm-up steps. Threads: torch.set_num_threads(argv[1]).
"""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(1)


def median_ms(step, warm=2, reps=5):
    for _ in range(warm):
        step()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


# ---------------------------------------------------------------- the DCGAN
class G(nn.Module):
    def __init__(self, zd=64, w=64, K=10):
        super().__init__()
        self.w = w
        self.embed = nn.Embedding(K, 16)
        self.fc = nn.Linear(zd + 16, 2 * w * 49)
        self.bn0 = nn.BatchNorm2d(2 * w)
        self.up1 = nn.ConvTranspose2d(2 * w, w, 4, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(w)
        self.up2 = nn.ConvTranspose2d(w, 1, 4, stride=2, padding=1)

    def forward(self, z, y):
        h = self.fc(torch.cat([z, self.embed(y)], 1)).view(-1, 2 * self.w, 7, 7)
        h = F.relu(self.bn0(h))
        h = F.relu(self.bn1(self.up1(h)))
        return torch.tanh(self.up2(h))


class D(nn.Module):
    def __init__(self, w=64, K=10):
        super().__init__()
        self.embed = nn.Embedding(K, 784)
        self.c1 = nn.Conv2d(2, w, 4, stride=2, padding=1)
        self.c2 = nn.Conv2d(w, 2 * w, 4, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * w)
        self.fc = nn.Linear(2 * w * 49, 1)

    def forward(self, x, y):
        h = torch.cat([x, self.embed(y).view(-1, 1, 28, 28)], 1)
        h = F.leaky_relu(self.c1(h), 0.2)
        h = F.leaky_relu(self.bn2(self.c2(h)), 0.2)
        return self.fc(h.flatten(1))


g, d = G(), D()
og = torch.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
od = torch.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
x = torch.rand(64, 1, 28, 28) * 2 - 1
y = torch.randint(0, 10, (64,))
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)


def dcgan_step():
    fake = g(torch.randn(64, 64), y)
    od.zero_grad()
    l = F.binary_cross_entropy_with_logits(d(x, y), ones) + F.binary_cross_entropy_with_logits(d(fake.detach(), y), zeros)
    l.backward()
    od.step()
    og.zero_grad()
    F.binary_cross_entropy_with_logits(d(fake, y), ones).backward()
    og.step()


print("dcgan_step %.2f" % median_ms(dcgan_step))


# ---------------------------------------------------------------- the U-Net DDPM
def time_embedding(t, dim, maxp=10000):
    half = dim // 2
    f = torch.exp(torch.arange(half, dtype=torch.float64) * (-math.log(maxp) / half))
    a = t.double().view(-1, 1) * f.view(1, half)
    return torch.cat([a.cos(), a.sin()], 1).float()


class Res(nn.Module):
    def __init__(self, a, b, E):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, a), nn.Conv2d(a, b, 3, padding=1)
        self.emb = nn.Linear(E, b)
        self.n2, self.c2 = nn.GroupNorm(8, b), nn.Conv2d(b, b, 3, padding=1)
        self.skip = nn.Conv2d(a, b, 1) if a != b else None

    def forward(self, x, e):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.emb(e).view(e.shape[0], -1, 1, 1)
        h = self.c2(F.silu(self.n2(h)))
        return h + (self.skip(x) if self.skip is not None else x)


class UNet(nn.Module):
    def __init__(self, C=1, w=32, K=10, td=64):
        super().__init__()
        E = 4 * w
        self.td = td
        self.t1, self.t2 = nn.Linear(td, E), nn.Linear(E, E)
        self.cls = nn.Embedding(K, E)
        self.inc = nn.Conv2d(C, w, 3, padding=1)
        self.d1 = Res(w, w, E)
        self.down1 = nn.Conv2d(w, w, 3, stride=2, padding=1)
        self.d2 = Res(w, 2 * w, E)
        self.down2 = nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1)
        self.mid = Res(2 * w, 2 * w, E)
        self.u2 = Res(4 * w, 2 * w, E)
        self.u1 = Res(3 * w, w, E)
        self.outn, self.outc = nn.GroupNorm(8, w), nn.Conv2d(w, C, 3, padding=1)

    def forward(self, x, t, y):
        e = self.t2(F.silu(self.t1(time_embedding(t, self.td)))) + self.cls(y)
        h1 = self.d1(self.inc(x), e)
        h2 = self.d2(self.down1(h1), e)
        m = self.mid(self.down2(h2), e)
        g2 = self.u2(torch.cat([F.interpolate(m, scale_factor=2, mode="nearest"), h2], 1), e)
        g1 = self.u1(torch.cat([F.interpolate(g2, scale_factor=2, mode="nearest"), h1], 1), e)
        return self.outc(F.silu(self.outn(g1)))


u = UNet()
ou = torch.optim.Adam(u.parameters(), lr=2e-4)
betas = torch.linspace(1e-4, 0.02, 400, dtype=torch.float64)
abar = torch.cumprod(1 - betas, 0)


def ddpm_step():
    t = torch.randint(1, 401, (64,))
    noise = torch.randn(64, 1, 28, 28)
    ab = abar[t - 1].float().view(-1, 1, 1, 1)
    xt = x * ab.sqrt() + noise * (1 - ab).sqrt()
    ou.zero_grad()
    F.mse_loss(u(xt, t, y), noise).backward()
    ou.step()


print("unet_ddpm_step %.2f" % median_ms(ddpm_step))


# ---------------------------------------------------------------- style transfer (Gatys, random features)
class StyleNet(nn.Module):
    def __init__(self):
        super().__init__()
        ws, cin = [32, 64, 128, 256, 256], 3
        self.convs = nn.ModuleList()
        for w in ws:
            c = nn.Conv2d(cin, w, 3, padding=1)
            nn.init.kaiming_uniform_(c.weight, nonlinearity="relu")
            nn.init.zeros_(c.bias)
            c.requires_grad_(False)
            self.convs.append(c)
            cin = w

    def features(self, x):
        out, h = [], x
        for i, c in enumerate(self.convs):
            if i:
                h = F.avg_pool2d(h, 2)
            h = F.relu(c(h))
            out.append(h)
        return out


def stats(f):
    N, C, H, W = f.shape
    v = f.reshape(N, C, H * W)
    v = v - v.mean(2, keepdim=True)
    return f.mean((2, 3)), v @ v.transpose(1, 2) / (C * H * W)


net = StyleNet()
content, style = torch.rand(1, 3, 128, 128), torch.rand(1, 3, 128, 128)
with torch.no_grad():
    cf = net.features(content)[3]
    st = [stats(f) for f in net.features(style)]
cn = cf.pow(2).mean().item()
sn = [(m.pow(2).mean().item(), g.pow(2).mean().item()) for m, g in st]
img = content.clone().requires_grad_(True)
lb = torch.optim.LBFGS([img], lr=1, max_iter=20, history_size=20)


def closure():
    lb.zero_grad()
    fs = net.features(img)
    loss = F.mse_loss(fs[3], cf) / cn
    for i, f in enumerate(fs):
        m, g = stats(f)
        loss = loss + 10 * (F.mse_loss(g, st[i][1]) / sn[i][1] + F.mse_loss(m, st[i][0]) / sn[i][0])
    loss.backward()
    return loss


def style_step():
    lb.step(closure)
    with torch.no_grad():
        img.clamp_(0, 1)


print("style_lbfgs_step %.2f" % median_ms(style_step, warm=1, reps=3))
