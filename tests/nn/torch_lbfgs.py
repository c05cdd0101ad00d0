#!/usr/bin/python3
"""torch_lbfgs.py — prints the PyTorch reference values of torch.optim.LBFGS that
tests/lua/test_lbfgs.lua compares optim.LBFGS against, as a Lua file.

    /usr/bin/python3 tests/nn/torch_lbfgs.py > tests/nn/torch_lbfgs_values.lua

Everything the Lua side needs is written out: the data of each problem, the initial parameters
and the options of each case, then after every opt.step(closure): the loss step() returned, the
parameters (flattened, in order), and the state's n_iter, func_evals and t. No RNG: inputs are
formulas of arange, wave(n, a, b, s) = s * sin(a * i + b) for i = 0..n-1, rounded to a few digits
so that the printed values are the exact doubles used. float64 throughout.

The problems (the closure zeroes the grads, evaluates the loss, calls backward, returns the loss):
  rosen       sum (1 - x[i])^2 + 100 (x[i+1] - x[i]^2)^2 over one vector parameter x
  lsq         mean((X W + b - Y)^2), W 3x2, b of 2, and a parameter u of 2 the loss never uses
  logreg      mean(log(1 + exp(z)) - y z), z = X w + c, w of 4 and c a 0-dim parameter
Squares are written as products (x * x) on both sides, the same formula as the Lua test.
Then _strong_wolfe alone on polynomials along a line, and _cubic_interpolate on a few points.

The cases stop before rounding differences grow past 1e-10: PyTorch's add(alpha=) is a fused
multiply-add and its dot a BLAS one, Lumen's are not, and on Rosenbrock (above all with a short
history) a last-bit difference grows about threefold an iteration after a few dozen of them.
"""
import torch
from torch.optim.lbfgs import _cubic_interpolate, _strong_wolfe

d = torch.float64


def wave(n, a, b, s):
    v = (torch.arange(n, dtype=torch.float64) * a + b).sin().mul(s)
    return torch.tensor([round(x, 6) for x in v.tolist()], dtype=d)


def lua(v):
    if isinstance(v, torch.Tensor):
        v = v.detach().reshape(-1).tolist()
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, lua(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"%s"' % v
    return "%.17g" % v


# ---------------------------------------------------------------- the problems

data = {
    "lsq": {"X": wave(24, 0.7, 0.1, 1.5).reshape(8, 3), "Y": wave(16, 1.3, 0.5, 2.0).reshape(8, 2)},
    "logreg": {"X": wave(48, 0.37, 0.2, 2.0).reshape(12, 4),
               "y": (wave(12, 2.1, 0.3, 1.0) > 0).to(d)},
}


def rosen(ps):
    x = ps[0]
    a, b = x[:-1], x[1:]
    r1 = 1 - a
    r2 = b - a * a
    return (r1 * r1).sum() + 100 * (r2 * r2).sum()


def lsq(ps):
    W, b, _ = ps
    r = data["lsq"]["X"].matmul(W) + b - data["lsq"]["Y"]
    return (r * r).mean()


def logreg(ps):
    w, c = ps
    z = data["logreg"]["X"].matmul(w) + c
    return ((z.exp() + 1).log() - data["logreg"]["y"] * z).mean()


problems = {"rosen": rosen, "lsq": lsq, "logreg": logreg}

x0 = {
    "rosen2": [torch.tensor([-1.5, 2.0], dtype=d)],
    "rosen10": [wave(10, 0.9, 0.4, 1.2)],
    "rosen_opt": [torch.tensor([1.0, 1.0], dtype=d)],
    "lsq": [wave(6, 0.5, 0.2, 0.8).reshape(3, 2), wave(2, 1.1, 0.7, 0.5), wave(2, 0.3, 0.1, 1.0)],
    "logreg": [wave(4, 0.8, 0.9, 0.6), torch.tensor(0.25, dtype=d)],
}

# name, problem, initial parameters, options (torch's keywords), number of step() calls
cases = [
    ("rosen2", "rosen", "rosen2", {"max_iter": 6}, 3),
    ("rosen2_lr", "rosen", "rosen2", {"lr": 0.1}, 3),
    ("rosen2_h3", "rosen", "rosen2", {"history_size": 3, "max_iter": 6}, 3),
    ("rosen2_wolfe", "rosen", "rosen2", {"line_search_fn": "strong_wolfe"}, 3),
    ("rosen2_wolfe_h3", "rosen", "rosen2", {"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 5}, 3),
    ("rosen2_wolfe_eval", "rosen", "rosen2",
     {"line_search_fn": "strong_wolfe", "max_iter": 10, "max_eval": 9, "history_size": 5}, 3),
    ("rosen10", "rosen", "rosen10", {"lr": 0.05, "history_size": 3}, 3),
    ("rosen10_h100", "rosen", "rosen10", {"lr": 0.05}, 3),
    ("rosen10_wolfe", "rosen", "rosen10", {"line_search_fn": "strong_wolfe", "max_iter": 12}, 2),
    ("rosen10_wolfe_h3", "rosen", "rosen10", {"line_search_fn": "strong_wolfe", "history_size": 3}, 3),
    ("rosen10_wolfe_lr", "rosen", "rosen10", {"line_search_fn": "strong_wolfe", "lr": 0.5, "max_iter": 7}, 4),
    ("rosen2_wolfe_big", "rosen", "rosen2", {"line_search_fn": "strong_wolfe", "lr": 8, "max_iter": 6}, 2),
    ("rosen10_wolfe_small", "rosen", "rosen10", {"line_search_fn": "strong_wolfe", "lr": 0.01, "max_iter": 6}, 2),
    ("rosen_at_optimum", "rosen", "rosen_opt", {}, 2),
    ("lsq", "lsq", "lsq", {}, 2),
    ("lsq_h3", "lsq", "lsq", {"history_size": 3, "max_iter": 4}, 3),
    ("lsq_iter1", "lsq", "lsq", {"max_iter": 1, "lr": 0.5}, 6),
    ("lsq_wolfe", "lsq", "lsq", {"line_search_fn": "strong_wolfe"}, 2),
    ("lsq_wolfe_h3", "lsq", "lsq", {"line_search_fn": "strong_wolfe", "history_size": 3, "max_iter": 5}, 3),
    ("lsq_wolfe_small", "lsq", "lsq", {"line_search_fn": "strong_wolfe", "lr": 1e-3, "history_size": 3, "max_iter": 2}, 2),
    ("logreg", "logreg", "logreg", {}, 3),
    ("logreg_h3", "logreg", "logreg", {"history_size": 3, "tolerance_grad": 1e-4}, 3),
    ("logreg_wolfe", "logreg", "logreg", {"line_search_fn": "strong_wolfe", "max_iter": 8}, 3),
    ("logreg_wolfe_h3", "logreg", "logreg",
     {"line_search_fn": "strong_wolfe", "history_size": 3, "tolerance_change": 1e-6}, 3),
    ("logreg_wolfe_big", "logreg", "logreg", {"line_search_fn": "strong_wolfe", "lr": 30, "max_iter": 6}, 2),
]

out = []
for name, problem, start, opts, nsteps in cases:
    f = problems[problem]
    ps = [p.clone().requires_grad_() for p in x0[start]]
    opt = torch.optim.LBFGS(ps, **opts)

    def closure():
        opt.zero_grad()
        loss = f(ps)
        loss.backward()
        return loss

    steps = []
    for _ in range(nsteps):
        loss = opt.step(closure)
        st = opt.state[ps[0]]
        steps.append({"loss": float(loss), "x": torch.cat([p.detach().reshape(-1) for p in ps]),
                      "n_iter": st["n_iter"], "func_evals": st["func_evals"],
                      "t": float(st["t"]) if st.get("t") is not None else -1.0})
    out.append("    {name = %s, problem = %s, x0 = %s, shapes = %s, opts = %s, steps = {\n%s}}," % (
        lua(name), lua(problem), lua([p.reshape(-1) for p in x0[start]]),
        lua([list(p.shape) for p in x0[start]]), lua(opts),
        "".join("      %s,\n" % lua(s) for s in steps)))

# ---------------------------------------------------------------- the line search alone
# _strong_wolfe on phi(x + t d) for polynomials phi (coefficients c from degree 0 up, evaluated by
# Horner's rule, the derivative's coefficients dc likewise), from x with d = -sign(phi'(x)) and
# the initial step t: a line with no minimum (25 evaluations, the max_ls exit), quadratics from a
# step far too short (extrapolation) and far too long (zoom), and polynomials whose zoom moves a
# trial point away from the bracket's ends or stops on a bracket too small.


def horner(c, v):
    r = torch.zeros_like(v) + c[-1]
    for k in range(len(c) - 2, -1, -1):
        r = r * v + c[k]
    return r


ls_out = []
for c, x, t in [([0.0, -2.0], 0.5, 1.0),
                ([9.0, -6.0, 1.0], 0.0, 1e-3),
                ([9.0, -6.0, 1.0], 0.0, 100.0),
                ([0.0, 1.0, -3.0, 0.0, 1.0], 0.0, 1.0),
                ([1.5, 1.6, -0.1, -2.8, 1.2], 0.5, 100.0),
                ([0.3, 0.9, -1.5, 0.5, 0.2], 0.9, 100.0),
                ([1.6, 1.8, -1.7, -1.6, 1.4], -0.7, 10.0),
                ([-1.3, 0.8, -2.8, 0.1, 0.2], 0.4, 10.0)]:
    dc = [k * c[k] for k in range(1, len(c))]
    evals = []

    def obj(xs, step, dirn):
        v = xs[0] + step * dirn
        evals.append(float(step))
        return float(horner(c, v).sum()), horner(dc, v)

    xs = [torch.tensor([x], dtype=d)]
    f0, g0 = obj(xs, 0.0, torch.ones(1, dtype=d))
    dirn = -g0.sign()
    evals.clear()
    f, g, t_out, n = _strong_wolfe(obj, xs, t, dirn, f0, g0, g0.dot(dirn))
    ls_out.append("    %s," % lua({"c": c, "dc": dc, "x": x, "d": dirn, "t0": t, "f": f, "g": g, "t": float(t_out),
                                    "evals": n, "ts": evals}))

cubic_out = []
for args, bounds in [((0.0, 0.09, -0.6, 1.0, 0.49, 1.4), None),
                     ((1.0, 0.49, 1.4, 0.0, 0.09, -0.6), None),
                     ((0.0, 0.09, -0.6, 1.0, 0.49, 1.4), (0.5, 2.0)),
                     ((0.0, 0.0, 1.0, 1.0, 0.5, 1.0), None),
                     ((2.0, 1.0, -3.0, 0.5, 2.0, 1.5), None),
                     ((0.3, -1.0, -0.2, 0.7, -1.1, 0.1), (0.31, 4.0)),
                     ((0.0, 1.0, -1.0, 1.0, 0.0, -0.5), (1.01, 10.0))]:
    x1, f1, g1, x2, f2, g2 = args
    r = _cubic_interpolate(x1, f1, torch.tensor(g1, dtype=d), x2, f2, torch.tensor(g2, dtype=d),
                                             bounds=bounds)
    cubic_out.append("    %s," % lua({"args": list(args), "bounds": list(bounds) if bounds else False,
                                       "r": float(r)}))

print("-- tests/nn/torch_lbfgs_values.lua: written by tests/nn/torch_lbfgs.py (PyTorch %s); do not edit"
      % torch.__version__)
print("return {")
print("  data = {")
for k, v in data.items():
    print("    %s = {%s}," % (k, ", ".join("%s = %s, %s_shape = %s" % (n, lua(t), n, lua(list(t.shape)))
                                            for n, t in v.items())))
print("  },")
print("  cases = {")
print("\n".join(out))
print("  },")
print("  line_search = {")
print("\n".join(ls_out))
print("  },")
print("  cubic = {")
print("\n".join(cubic_out))
print("  },")
print("}")
