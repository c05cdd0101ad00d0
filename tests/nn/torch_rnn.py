#!/usr/bin/python3
"""torch_rnn.py — prints the PyTorch reference values of the recurrent modules (nn.RNN, nn.LSTM,
nn.GRU and their cells) that tests/lua/test_rnn.lua compares against, as a Lua file. Regenerate:

    /usr/bin/python3 tests/nn/torch_rnn.py > tests/nn/torch_rnn_values.lua

Everything is float64 and deterministic (no RNG): wave(n, a, b, s) = s * sin(a * i + b) for
i = 0..n-1 (as torch_modules.py), rebuilt the same way in Lua. For each case: the module's
parameters, in named_parameters order (k = 0, 1, ...), are wave(numel, 0.23 + 0.1 k, 0.3, 0.4);
the input x = wave(numel, 0.37, 0.1, 1.5), h0 = wave(numel, 0.29, 0.5, 0.8) and
c0 = wave(numel, 0.31, 0.7, 0.8) in their shapes; the loss is
sum(out * w_out) + sum(h_n * w_h) (+ sum(c_n * w_c) for the LSTM) with w_out = wave(n, 0.41, 0.2, 1),
w_h = wave(n, 0.43, 0.6, 1) and w_c = wave(n, 0.47, 0.9, 1). A cell's loss is
sum(h' * w_out) (+ sum(c' * w_c)). Printed: out, h_n, c_n and the gradients of x, h0, c0 and each
parameter, each as {sum = the sum of all its elements, v = every `stride`-th element of it
flattened in C order (1-based 1, 1 + stride, ...)}: stride is 1 for the smallest cases and larger
for the others (the issue's sizes: batch 15, input 11, hidden 12, sequence 13), so the file stays
small.
"""
import torch
import torch.nn as nn

d = torch.float64
out = []


def wave(n, a, b, s):
    return (torch.arange(n, dtype=d) * a + b).sin().mul(s)


def lua(v):
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
    return "{sum = %s, v = %s}" % (lua(float(flat.sum())), lua(flat[::stride].tolist()))


def shaped(shape, a, b, s):
    n = 1
    for k in shape:
        n *= k
    return wave(n, a, b, s).reshape(shape)


def set_params(m):
    with torch.no_grad():
        for k, (_, p) in enumerate(m.named_parameters()):
            p.copy_(wave(p.numel(), 0.23 + 0.1 * k, 0.3, 0.4).reshape(p.shape))


def case(name, cls, args, opts, xshape, state, stride=1):
    """state: None (no initial state) or the shape of h0 (and c0)."""
    m = cls(*args, **opts).double()
    set_params(m)
    x = shaped(xshape, 0.37, 0.1, 1.5).requires_grad_()
    lstm = cls in (nn.LSTM, nn.LSTMCell)
    cell = cls in (nn.RNNCell, nn.LSTMCell, nn.GRUCell)
    h0 = c0 = None
    if state is not None:
        h0 = shaped(state, 0.29, 0.5, 0.8).requires_grad_()
        c0 = shaped(state, 0.31, 0.7, 0.8).requires_grad_()
    hx = None if h0 is None else ((h0, c0) if lstm else h0)
    r = m(x, hx)
    if cell:
        o, hn, cn = (r[0], None, r[1]) if lstm else (r, None, None)
    else:
        o, hn = r
        hn, cn = hn if lstm else (hn, None)
    loss = (o * shaped(o.shape, 0.41, 0.2, 1.0)).sum()
    if hn is not None:
        loss = loss + (hn * shaped(hn.shape, 0.43, 0.6, 1.0)).sum()
    if cn is not None:
        loss = loss + (cn * shaped(cn.shape, 0.47, 0.9, 1.0)).sum()
    loss.backward()
    f = {"kind": cls.__name__, "args": list(args), "xshape": list(xshape), "stride": stride,
         "out_shape": list(o.shape), "out": values(o, stride)}
    if state is not None:
        f["state"] = list(state)
    for k, v in opts.items():
        f["opt_" + k] = v
    if hn is not None:
        f["h_shape"] = list(hn.shape)
        f["h_n"] = values(hn, stride)
    if cn is not None:
        f["c_shape"] = list(cn.shape)
        f["c_n"] = values(cn, stride)
    f["g_x"] = values(x.grad, stride)
    if h0 is not None:
        f["g_h0"] = values(h0.grad, stride)
        if lstm:
            f["g_c0"] = values(c0.grad, stride)
    for n, p in m.named_parameters():
        f["g_" + n] = values(p.grad, stride)
    fields = ", ".join("%s = %s" % (k, v if isinstance(v, str) and v.startswith("{") else lua(v))
                       for k, v in f.items())
    out.append("  {name = '%s', %s}," % (name, fields))


# ---------------------------------------------------------------- cells
case("rnncell tanh", nn.RNNCell, (5, 4), {}, (3, 5), (3, 4))
case("rnncell relu, no bias, no h", nn.RNNCell, (1, 1), {"bias": False, "nonlinearity": "relu"}, (1, 1), None)
case("rnncell unbatched", nn.RNNCell, (5, 4), {}, (5,), (4,))
case("lstmcell", nn.LSTMCell, (5, 4), {}, (3, 5), (3, 4))
case("lstmcell unbatched, no bias, no state", nn.LSTMCell, (1, 1), {"bias": False}, (1,), None)
case("grucell", nn.GRUCell, (5, 4), {}, (3, 5), (3, 4))
case("grucell large, no bias, no h", nn.GRUCell, (11, 12), {"bias": False}, (15, 11), None, stride=5)
case("lstmcell large", nn.LSTMCell, (11, 12), {}, (15, 11), (15, 12), stride=7)

# ---------------------------------------------------------------- layers
case("rnn tanh", nn.RNN, (5, 4), {}, (6, 3, 5), (1, 3, 4))
case("rnn relu 2 layers, no bias, no h0", nn.RNN, (1, 1), {"num_layers": 2, "bias": False, "nonlinearity": "relu"},
     (1, 1, 1), None)
case("rnn bidirectional batch_first", nn.RNN, (5, 4), {"num_layers": 2, "bidirectional": True, "batch_first": True},
     (3, 6, 5), (4, 3, 4), stride=2)
case("rnn unbatched", nn.RNN, (5, 4), {"nonlinearity": "relu"}, (6, 5), (1, 4))
case("lstm 2 layers", nn.LSTM, (5, 4), {"num_layers": 2}, (6, 3, 5), (2, 3, 4), stride=2)
case("lstm 1x1, no bias, no state", nn.LSTM, (1, 1), {"bias": False}, (1, 1, 1), None)
case("lstm bidirectional batch_first, no bias", nn.LSTM, (5, 4),
     {"num_layers": 2, "bidirectional": True, "batch_first": True, "bias": False}, (3, 6, 5), None,
     stride=3)
case("lstm unbatched bidirectional", nn.LSTM, (5, 4), {"bidirectional": True}, (6, 5), (2, 4))
case("gru 2 layers", nn.GRU, (5, 4), {"num_layers": 2}, (6, 3, 5), (2, 3, 4), stride=2)
case("gru 1x1, no bias", nn.GRU, (1, 1), {"bias": False}, (1, 1, 1), (1, 1, 1))
case("gru bidirectional batch_first, no h0", nn.GRU, (5, 4), {"num_layers": 2, "bidirectional": True, "batch_first": True},
     (3, 6, 5), None, stride=3)
case("gru unbatched 2 layers", nn.GRU, (5, 4), {"num_layers": 2}, (6, 5), (2, 4))
# the larger sizes: batch 15, input 11, hidden 12, sequence 13
case("lstm large", nn.LSTM, (11, 12), {"num_layers": 2}, (13, 15, 11), (2, 15, 12), stride=23)
case("gru large bidirectional, no bias", nn.GRU, (11, 12), {"bidirectional": True, "bias": False},
     (13, 15, 11), (2, 15, 12), stride=23)
case("rnn large relu batch_first, no h0", nn.RNN, (11, 12), {"num_layers": 2, "nonlinearity": "relu", "batch_first": True},
     (15, 13, 11), None, stride=23)

print("-- tests/nn/torch_rnn_values.lua: written by tests/nn/torch_rnn.py (PyTorch %s); do not edit" % torch.__version__)
print("return {")
print("\n".join(out))
print("}")
