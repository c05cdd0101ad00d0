#!/usr/bin/python3
"""torch_attention.py — prints the PyTorch reference values of attention that
tests/lua/test_attention.lua compares against, as a Lua file: F.scaled_dot_product_attention,
nn.MultiheadAttention, nn.TransformerEncoderLayer and nn.TransformerDecoderLayer. Regenerate:

    /usr/bin/python3 tests/nn/torch_attention.py > tests/nn/torch_attention_values.lua

Debian's torch is 1.13, which has no F.scaled_dot_product_attention, no is_causal, no float
key_padding_mask and no bias option in the Transformer layers: the reference for those is written
here with what 1.13 has (the explicit formula softmax(q k^T * scale + mask) v; the causal mask as a
boolean attn_mask; a float key_padding_mask as the float (N*H, L, S) attn_mask it adds up to; a layer
without biases as PyTorch's with every bias zero and left out of the parameters).

Everything is float64 and deterministic (no RNG): wave(n, a, b, s) = s * sin(a * i + b) for
i = 0..n-1 in a shape, rebuilt the same way in Lua. Parameter k (0-based, named_parameters order,
biases skipped when bias=False) = wave(numel, 0.23 + 0.1 k, 0.3, 0.4); inputs (query, key, value,
src, tgt, memory) = wave(numel, a, b, 1.5) with the (a, b) of INPUTS; a boolean mask is
wave(numel, a, b, 1) > thr with the first key (last-dim index 0) forced to "may attend" (so no row
is all masked); a float mask is wave(numel, a, b, 0.7). The loss is sum(out * wave(n, 0.41, 0.2, 1))
(+ sum(weights * wave(n, 0.43, 0.6, 1)) when MultiheadAttention returns weights). Printed: the
output, the weights and the gradients of the inputs and of each parameter, each as {sum =, v = every
`stride`-th element flattened in C order}.
"""
import math
import torch
import torch.nn as nn

d = torch.float64
out = []
INPUTS = {"q": (0.37, 0.1), "k": (0.31, 0.7), "v": (0.29, 0.5), "tgt": (0.37, 0.1), "memory": (0.31, 0.7)}


def wave(n, a, b, s):
    return (torch.arange(n, dtype=d) * a + b).sin().mul(s)


def shaped(shape, a, b, s):
    n = 1
    for k in shape:
        n *= k
    return wave(n, a, b, s).reshape(shape)


def lua(v):
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k if k.isidentifier() else "['%s']" % k, lua(x))
                               for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return "'" + v + "'"
    return "%.17g" % v


def values(t, stride):
    flat = t.detach().reshape(-1)
    return {"sum": float(flat.sum()), "v": flat[::stride].tolist()}


def make_input(name, shape):
    a, b = INPUTS[name]
    return shaped(shape, a, b, 1.5).requires_grad_()


def make_mask(spec, convention):
    """spec: {shape, a, b, thr} (boolean) or {shape, a, b, float=True}. convention: 'allow' (SDPA:
    True = may attend) or 'block' (MultiheadAttention: True = masked out)."""
    w = shaped(spec["shape"], spec["a"], spec["b"], 0.7 if spec.get("float") else 1.0)
    if spec.get("float"):
        return w
    m = w > spec["thr"]
    m[..., 0] = convention == "allow"
    return m


def emit(f):
    out.append("  " + lua(f) + ",")


def loss_of(o, w=None):
    loss = (o * shaped(o.shape, 0.41, 0.2, 1.0)).sum()
    if w is not None:
        loss = loss + (w * shaped(w.shape, 0.43, 0.6, 1.0)).sum()
    return loss


# ---------------------------------------------------------------- F.scaled_dot_product_attention

def sdpa_case(name, qs, ks, vs, mask=None, is_causal=False, scale=None, stride=1):
    q, k, v = make_input("q", qs), make_input("k", ks), make_input("v", vs)
    E, L, S = qs[-1], qs[-2], ks[-2]
    sc = scale if scale is not None else 1 / math.sqrt(E)
    scores = q @ k.transpose(-2, -1) * sc
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(1), float("-inf"))
    elif mask is not None:
        m = make_mask(mask, "allow")
        scores = scores + m if mask.get("float") else scores.masked_fill(~m, float("-inf"))
    o = scores.softmax(-1) @ v
    loss_of(o).backward()
    f = {"name": name, "kind": "sdpa", "qshape": list(qs), "kshape": list(ks), "vshape": list(vs),
         "stride": stride}
    if mask is not None:
        f["mask"] = mask
    if is_causal:
        f["is_causal"] = True
    if scale is not None:
        f["scale"] = scale
    f.update({"out_shape": list(o.shape), "out": values(o, stride), "g_q": values(q.grad, stride),
              "g_k": values(k.grad, stride), "g_v": values(v.grad, stride)})
    emit(f)


sdpa_case("sdpa batch 1, sequence 1", (1, 1, 1, 4), (1, 1, 1, 4), (1, 1, 1, 3))
sdpa_case("sdpa causal, batch 15, 2 heads, sequence 13", (15, 2, 13, 4), (15, 2, 13, 4), (15, 2, 13, 3),
          is_causal=True, stride=11)
sdpa_case("sdpa boolean mask, L 5, S 7", (3, 2, 5, 4), (3, 2, 7, 4), (3, 2, 7, 6),
          mask={"shape": [5, 7], "a": 0.71, "b": 0.4, "thr": -0.3}, stride=3)
sdpa_case("sdpa float mask per batch, scale 0.3", (3, 5, 4), (3, 7, 4), (3, 7, 2),
          mask={"shape": [3, 1, 7], "a": 0.53, "b": 0.2, "float": True}, scale=0.3, stride=2)
sdpa_case("sdpa 2-D, causal with L < S", (4, 3), (6, 3), (6, 5), is_causal=True)
sdpa_case("sdpa broadcast key and value over heads", (2, 4, 3, 5), (2, 1, 6, 5), (2, 1, 6, 3),
          mask={"shape": [2, 4, 3, 6], "a": 0.67, "b": 0.9, "thr": 0.2}, stride=2)


# ---------------------------------------------------------------- modules

def set_params(m, bias):
    """bias False: the biases are zero and not counted (PyTorch 2.x's bias=False)."""
    names = []
    with torch.no_grad():
        k = 0
        for n, p in m.named_parameters():
            if not bias and n.endswith("bias"):
                p.zero_()
                p.requires_grad_(False)
                continue
            p.copy_(wave(p.numel(), 0.23 + 0.1 * k, 0.3, 0.4).reshape(p.shape))
            names.append(n)
            k += 1
    return names


def heads_expand(kpm_float, N, H, L, S):
    return kpm_float.view(N, 1, 1, S).expand(N, H, L, S).reshape(N * H, L, S)


def mha_case(name, E, H, qs, ks, vs, opts=None, fwd=None, stride=1):
    """opts: the module's options (kdim, vdim, bias, batch_first); fwd: the forward's
    {attn_mask=spec, key_padding_mask=spec, is_causal=, need_weights=, average_attn_weights=}."""
    opts, fwd = dict(opts or {}), dict(fwd or {})
    m = nn.MultiheadAttention(E, H, **opts).double()
    names = set_params(m, True)
    q, k, v = make_input("q", qs), make_input("k", ks), make_input("v", vs)
    unbatched = len(qs) == 2
    bf = opts.get("batch_first", False)
    N = 1 if unbatched else qs[0 if bf else 1]
    seq = 0 if unbatched or not bf else 1
    L, S = qs[seq], ks[seq]
    kw = {"need_weights": fwd.get("need_weights", True),
          "average_attn_weights": fwd.get("average_attn_weights", True)}
    am = None
    if fwd.get("is_causal"):
        am = torch.ones(L, S, dtype=torch.bool).triu(1)
    elif "attn_mask" in fwd:
        am = make_mask(fwd["attn_mask"], "block")
    kpm = None
    if "key_padding_mask" in fwd:
        kpm = make_mask(fwd["key_padding_mask"], "block")
        if fwd["key_padding_mask"].get("float"):  # 1.13 has no float key_padding_mask: its sum as attn_mask
            add = heads_expand(kpm.reshape(N, S), N, H, L, S)
            if unbatched:
                add = add.reshape(H, L, S)
            am = add if am is None else am + add
            kpm = None
    o, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am, **kw)
    loss_of(o, w).backward()
    f = {"name": name, "kind": "MultiheadAttention", "args": [E, H], "qshape": list(qs), "kshape": list(ks),
         "vshape": list(vs), "stride": stride, "params": names}
    for kk, vv in opts.items():
        f["opt_" + kk] = vv
    for kk, vv in fwd.items():
        f["fwd_" + kk] = vv
    f.update({"out_shape": list(o.shape), "out": values(o, stride)})
    if w is not None:
        f.update({"w_shape": list(w.shape), "w": values(w, stride)})
    f.update({"g_q": values(q.grad, stride), "g_k": values(k.grad, stride), "g_v": values(v.grad, stride)})
    for n, p in m.named_parameters():
        f["g_" + n] = values(p.grad, stride)
    emit(f)


mha_case("mha 1 head, batch 1, sequence 1", 4, 1, (1, 1, 4), (1, 1, 4), (1, 1, 4))
mha_case("mha 2 heads, attn_mask and key_padding_mask", 6, 2, (5, 3, 6), (7, 3, 6), (7, 3, 6),
         fwd={"attn_mask": {"shape": [5, 7], "a": 0.71, "b": 0.4, "thr": 0.3},
              "key_padding_mask": {"shape": [3, 7], "a": 0.59, "b": 0.8, "thr": 0.4}}, stride=2)
mha_case("mha 4 heads, batch_first, batch 15, sequence 13, causal, per-head weights", 8, 4, (15, 13, 8),
         (15, 13, 8), (15, 13, 8), opts={"batch_first": True},
         fwd={"is_causal": True, "average_attn_weights": False}, stride=29)
mha_case("mha kdim and vdim, no bias, float (N*H, L, S) mask", 6, 2, (4, 2, 6), (6, 2, 5), (6, 2, 3),
         opts={"kdim": 5, "vdim": 3, "bias": False},
         fwd={"attn_mask": {"shape": [4, 4, 6], "a": 0.53, "b": 0.2, "float": True}}, stride=2)
mha_case("mha unbatched, 3 heads, (H, L, S) mask, key_padding_mask, per-head weights", 6, 3, (4, 6), (5, 6), (5, 6),
         fwd={"attn_mask": {"shape": [3, 4, 5], "a": 0.61, "b": 0.3, "thr": 0.5},
              "key_padding_mask": {"shape": [5], "a": 0.83, "b": 0.1, "thr": 0.2},
              "average_attn_weights": False}, stride=2)
mha_case("mha float key_padding_mask, no weights", 6, 2, (5, 3, 6), (7, 3, 6), (7, 3, 6),
         fwd={"key_padding_mask": {"shape": [3, 7], "a": 0.47, "b": 0.5, "float": True},
              "need_weights": False}, stride=2)


def layer_case(name, kind, args, shapes, opts=None, fwd=None, stride=1):
    """kind: 'TransformerEncoderLayer' (shapes: {src}) or 'TransformerDecoderLayer' ({tgt, memory});
    fwd: masks as specs ({..._mask=spec}) and *is_causal flags (as boolean masks in 1.13)."""
    opts, fwd = dict(opts or {}), dict(fwd or {})
    bias = opts.pop("bias", True)
    m = getattr(nn, kind)(*args, dropout=0.0, **opts).double()
    names = set_params(m, bias)
    bf = opts.get("batch_first", False)
    enc = kind == "TransformerEncoderLayer"
    x = make_input("tgt", shapes[0])
    mem = None if enc else make_input("memory", shapes[1])
    unbatched = len(shapes[0]) == 2

    def seq(s):
        return s[0] if unbatched else s[1 if bf else 0]

    L = seq(shapes[0])
    S = L if enc else seq(shapes[1])
    kw = {}
    for key, spec in fwd.items():
        if key.endswith("is_causal"):
            target = "src_mask" if key == "is_causal" else key.replace("is_causal", "mask")
            n = L if target in ("src_mask", "tgt_mask") else S
            kw[target] = torch.ones(L, n, dtype=torch.bool).triu(1)
        else:
            kw[key] = make_mask(spec, "block")
    o = m(x, **kw) if enc else m(x, mem, **kw)
    loss_of(o).backward()
    f = {"name": name, "kind": kind, "args": list(args), "shapes": [list(s) for s in shapes], "stride": stride,
         "params": names}
    if not bias:
        f["opt_bias"] = False
    for kk, vv in opts.items():
        f["opt_" + kk] = vv
    for kk, vv in fwd.items():
        f["fwd_" + kk] = vv
    f.update({"out_shape": list(o.shape), "out": values(o, stride), "g_x": values(x.grad, stride)})
    if mem is not None:
        f["g_memory"] = values(mem.grad, stride)
    for n, p in m.named_parameters():
        if p.grad is not None:
            f["g_" + n] = values(p.grad, stride)
    emit(f)


E = "TransformerEncoderLayer"
D = "TransformerDecoderLayer"
layer_case("encoder 1 head, batch 1, sequence 1, relu", E, (4, 1), [(1, 1, 4)], {"dim_feedforward": 6})
layer_case("encoder norm_first gelu batch_first, batch 15, sequence 13, causal and padding", E, (8, 2),
           [(15, 13, 8)], {"dim_feedforward": 16, "activation": "gelu", "norm_first": True, "batch_first": True},
           {"is_causal": True, "src_key_padding_mask": {"shape": [15, 13], "a": 0.59, "b": 0.8, "thr": 0.6}},
           stride=37)
layer_case("encoder unbatched, layer_norm_eps 1e-3, float src_mask", E, (6, 2), [(5, 6)],
           {"dim_feedforward": 10, "layer_norm_eps": 1e-3},
           {"src_mask": {"shape": [5, 5], "a": 0.53, "b": 0.2, "float": True}})
layer_case("encoder no bias, 3 heads, norm_first gelu", E, (6, 3), [(4, 2, 6)],
           {"dim_feedforward": 8, "activation": "gelu", "norm_first": True, "bias": False},
           {"src_mask": {"shape": [4, 4], "a": 0.71, "b": 0.4, "thr": 0.3}}, stride=2)
layer_case("decoder 1 head, batch 1, sequences 1", D, (4, 1), [(1, 1, 4), (1, 1, 4)], {"dim_feedforward": 6})
layer_case("decoder 4 heads, norm_first gelu batch_first, batch 15, sequences 13 and 11", D, (8, 4),
           [(15, 13, 8), (15, 11, 8)], {"dim_feedforward": 12, "activation": "gelu", "norm_first": True,
                                        "batch_first": True},
           {"tgt_is_causal": True, "memory_key_padding_mask": {"shape": [15, 11], "a": 0.59, "b": 0.8, "thr": 0.5}},
           stride=41)
layer_case("decoder relu, tgt padding, float memory_mask", D, (6, 2), [(5, 3, 6), (7, 3, 6)],
           {"dim_feedforward": 10},
           {"tgt_key_padding_mask": {"shape": [3, 5], "a": 0.83, "b": 0.1, "thr": 0.4},
            "memory_mask": {"shape": [5, 7], "a": 0.47, "b": 0.5, "float": True}}, stride=3)
layer_case("decoder unbatched, no bias, boolean tgt_mask and memory_mask", D, (6, 3), [(4, 6), (5, 6)],
           {"dim_feedforward": 7, "bias": False},
           {"tgt_mask": {"shape": [4, 4], "a": 0.61, "b": 0.3, "thr": 0.2},
            "memory_mask": {"shape": [4, 5], "a": 0.67, "b": 0.9, "thr": 0.1}}, stride=2)

print("-- tests/nn/torch_attention_values.lua: written by tests/nn/torch_attention.py (PyTorch %s); do not edit"
      % torch.__version__)
print("return {")
print("\n".join(out))
print("}")
