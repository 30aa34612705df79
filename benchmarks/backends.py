"""Compiled ledgers against torch autograd and naive SymPy, measured side by side in one run.

    python benchmarks/backends.py            # full table (a few minutes)
    python benchmarks/backends.py --quick    # smaller sizes

Each row reports a ratio of times measured in this run (best of several
repeats, one thread for NumPy's BLAS and for torch), so a loaded machine
affects both sides alike. Targets (issue "Backends and speed"): the compiled
NumPy gradient is not slower than torch autograd on the RNN cases (ratio
≤ 1.0); compile time grows linearly in T; mpmath at 50 digits evaluates the
T = 100 gradient in under a second.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from symseq import Ledger, ops  # noqa: E402
from symseq.backends.compiled import compile  # noqa: E402

torch.set_num_threads(1)


def best(fn, repeats=7):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# ---------------------------------------------------------------- scalar tanh RNN
def scalar_rnn(T):
    L = Ledger(f"scalar tanh RNN, T={T}")
    w_x, w_h, w_o = L.parameter("w_x", "0.5"), L.parameter("w_h", "0.9"), L.parameter("w_o", "1.1")
    h = L.input("h_{-1}", 0)
    for t in range(T):
        h = L.define(f"h_{t}", sp.tanh(L.define(f"z_{t}", w_x * L.input(f"x_{t}", "0.1") + w_h * h)))
    L.define("L", (L.define("yhat", w_o * h) - L.input("y", 1)) ** 2 / 2)
    return L, L.backward("L")


def scalar_rnn_data(T, B, rng):
    """A batch of B sequences for :func:`scalar_rnn`: (X of T×B, Y of B, the inputs by ledger name, and ``ref()``,
    torch autograd's gradient with respect to (w_x, w_h, w_o) of the same loss summed over the batch, float64)."""
    X = rng.normal(size=(T, B)) * 0.5
    Y = rng.normal(size=B)
    vals = {f"x_{t}": X[t] for t in range(T)} | {"y": Y}
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)

    def ref():
        w = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.5, 0.9, 1.1)]
        h = torch.zeros(B, dtype=torch.float64)
        for t in range(T):
            h = torch.tanh(w[0] * Xt[t] + w[1] * h)
        loss = (0.5 * (w[2] * h - Yt) ** 2).sum()
        return torch.autograd.grad(loss, w)

    return X, Y, vals, ref


def bench_scalar_rnn(T, B, rng):
    L, g = scalar_rnn(T)
    names = [g.name(p) for p in ("w_x", "w_h", "w_o")]
    f = compile(L, ["L"] + names, backend="numpy", batch_reduce="sum")
    X, Y, vals, ref = scalar_rnn_data(T, B, rng)
    ours = f(vals)
    err = max(abs(float(ours[n]) - r.item()) / max(1.0, abs(r.item())) for n, r in zip(names, ref()))
    return best(lambda: f(vals)), best(ref), err


# ---------------------------------------------------------------- vector RNN
def vector_rnn(T, D, H, C):
    L = Ledger(f"vector tanh RNN, T={T}, D={D}, H={H}")
    W_x = L.parameter("W_x", shape=(H, D))
    W_h = L.parameter("W_h", shape=(H, H))
    b = L.parameter("b_h", shape=(1, H))
    W_o = L.parameter("W_o", shape=(C, H))
    h = L.input("h_{-1}", np.zeros((1, H), dtype=int).tolist())
    for t in range(T):
        x = L.input(f"x_{t}", shape=(1, D))
        z = L.define(f"z_{t}", x @ W_x.T + h @ W_h.T + b)
        h = L.define(f"h_{t}", ops.Map(sp.tanh, z))
    y = L.input("y", shape=(1, C))
    e = L.define("e", h @ W_o.T - y)
    L.define("L", ops.Sum(e * e, None) / 2)
    return L, L.backward("L")


def _agreement(ours, g, pnames, theirs) -> float:
    """The largest difference of our gradients from the reference's, relative to the larger of 1 and the
    reference's largest entry, over the parameters."""
    return max(float(np.max(np.abs(np.asarray(ours[g.name(p)]).reshape(r.shape) - r.numpy())))
               / max(1.0, float(np.max(np.abs(r.numpy())))) for p, r in zip(pnames, theirs))


def vector_rnn_setup(T, D, H, C, B, rng, *, inputs=None, backend="numpy"):
    """The Elman RNN's compiled gradient ``f``, its values, the ``nn.RNN`` autograd reference ``ref`` and their
    agreement (:func:`_agreement`); ``inputs`` and ``backend`` as :func:`symseq.compile` takes them (None: every
    leaf)."""
    L, g = vector_rnn(T, D, H, C)
    pnames = ["W_x", "W_h", "b_h", "W_o"]
    f = compile(L, ["L"] + [g.name(p) for p in pnames], backend=backend, batch_reduce="sum", inputs=inputs)
    P = {"W_x": rng.normal(size=(H, D)) / math.sqrt(D), "W_h": rng.normal(size=(H, H)) / math.sqrt(H),
         "b_h": rng.normal(size=(1, H)) * 0.1, "W_o": rng.normal(size=(C, H)) / math.sqrt(H)}
    X = rng.normal(size=(T, B, 1, D))
    Y = rng.normal(size=(B, 1, C))
    vals = dict(P) | {f"x_{t}": X[t] for t in range(T)} | {"y": Y}
    rnn = torch.nn.RNN(D, H, bias=True, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.from_numpy(P["W_x"]))
        rnn.weight_hh_l0.copy_(torch.from_numpy(P["W_h"]))
        rnn.bias_ih_l0.copy_(torch.from_numpy(P["b_h"][0]))
        rnn.bias_hh_l0.zero_()
    W_o = torch.tensor(P["W_o"], requires_grad=True)
    Xt = torch.from_numpy(X[:, :, 0, :]).transpose(0, 1).contiguous()
    Yt = torch.from_numpy(Y[:, 0, :])
    params = [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, W_o]

    def ref():
        out, hT = rnn(Xt)
        loss = 0.5 * ((hT[0] @ W_o.T - Yt) ** 2).sum()
        return torch.autograd.grad(loss, params)

    return f, vals, ref, _agreement(f(vals), g, pnames, ref())


def bench_vector_rnn(T, D, H, C, B, rng):
    f, vals, ref, err = vector_rnn_setup(T, D, H, C, B, rng)
    return best(lambda: f(vals)), best(ref), err


# ---------------------------------------------------------------- attention block
def attention_block(T, D, heads):
    from symseq import blocks

    L = Ledger(f"multi-head attention, T={T}, D={D}, h={heads}")
    X = L.input("X", shape=(T, D))
    dh = D // heads
    hs = [(L.parameter(f"W_Q^({i})", shape=(D, dh)), L.parameter(f"W_K^({i})", shape=(D, dh)),
           L.parameter(f"W_V^({i})", shape=(D, dh))) for i in range(heads)]
    W_O = L.parameter("W_O", shape=(D, D))
    mha = blocks.multi_head(L, X, hs, W_O, orientation="in_out", mask="causal")
    Y = L.input("Y", shape=(T, D))
    e = L.define("e", mha.out - Y)
    L.define("L", ops.Sum(e * e, None) / 2)
    return L, L.backward("L"), hs


def attention_setup(T, D, heads, B, rng):
    """The attention block's compiled gradient ``f``, its values, the torch autograd reference ``ref`` (heads one
    by one, causal mask) and their agreement (:func:`_agreement`)."""
    L, g, hs = attention_block(T, D, heads)
    dh = D // heads
    pnames = [n for i in range(heads) for n in (f"W_Q^({i})", f"W_K^({i})", f"W_V^({i})")] + ["W_O"]
    f = compile(L, ["L"] + [g.name(p) for p in pnames], backend="numpy", batch_reduce="sum")
    P = {n: rng.normal(size=L.shape(n)) / math.sqrt(D) for n in pnames}
    X = rng.normal(size=(B, T, D))
    Y = rng.normal(size=(B, T, D))
    vals = dict(P) | {"X": X, "Y": Y}
    tp = {n: torch.tensor(P[n], requires_grad=True) for n in pnames}
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)

    def ref():
        outs = []
        for i in range(heads):
            Q, K, V = Xt @ tp[f"W_Q^({i})"], Xt @ tp[f"W_K^({i})"], Xt @ tp[f"W_V^({i})"]
            S = (Q @ K.transpose(-1, -2) / math.sqrt(dh)).masked_fill(mask, float("-inf"))
            outs.append(torch.softmax(S, dim=-1) @ V)
        out = torch.cat(outs, dim=-1) @ tp["W_O"]
        loss = 0.5 * ((out - Yt) ** 2).sum()
        return torch.autograd.grad(loss, [tp[n] for n in pnames])

    return f, vals, ref, _agreement(f(vals), g, pnames, ref())


def bench_attention(T, D, heads, B, rng):
    f, vals, ref, err = attention_setup(T, D, heads, B, rng)
    return best(lambda: f(vals), 5), best(ref, 5), err


# ---------------------------------------------------------------- lambdify of the expanded gradient
def _lambdify_job(T, q, cse):
    try:
        _lambdify_run(T, q, cse)
    except RecursionError:
        q.put("recursion")


def _lambdify_run(T, q, cse):
    L, g = scalar_rnn(T)
    t0 = time.perf_counter()
    expr = L.expand(g.name("w_h"))  # inputs x_t are symbols: the sweep varies them
    syms = [L.symbol(n) for n in ["w_x", "w_h", "w_o", "y", "h_{-1}"] + [f"x_{t}" for t in range(T)]]
    fn = sp.lambdify(syms, expr, "numpy", cse=cse)
    build = time.perf_counter() - t0
    args = [0.5, 0.9, 1.1, 1.0, 0.0] + [np.linspace(-1, 1, POINTS)] * T
    ev = best(lambda: fn(*args), 5)
    q.put((build, ev, float(fn(*args)[0])))


def bench_lambdify(T, limit, cse=False):
    q = mp.Queue()
    p = mp.Process(target=_lambdify_job, args=(T, q, cse))
    p.start()
    p.join(limit)
    if p.is_alive():
        p.terminate()
        p.join()
        return None
    try:
        return q.get(timeout=5)
    except Exception:
        return "failed"


POINTS = 1000  # the lambdify comparison sweeps the gradient over this many input points


def bench_compiled_scalar(T):
    L, g = scalar_rnn(T)
    t0 = time.perf_counter()
    f = compile(L, [g.name("w_h")], backend="numpy")
    build = time.perf_counter() - t0
    vals = {f"x_{t}": np.linspace(-1, 1, POINTS) for t in range(T)}
    ev = best(lambda: f(vals), 5)
    return build, ev, float(f(vals)[g.name("w_h")][0])


def bench_mpmath(T):
    L, g = scalar_rnn(T)
    f = compile(L, [g.name(p) for p in ("w_x", "w_h", "w_o")], backend="mpmath", dps=50)
    return best(lambda: f(), 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds allowed per naive lambdify attempt")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    con = Console(width=max(Console().width, 150))
    t = Table(title="compiled ledgers vs references (ratio = ours / reference; lower is faster)")
    for c in ("case", "ours", "reference", "ratio", "max rel. difference"):
        t.add_column(c)
    B = 1000 if args.quick else 10_000
    a, b, e = bench_scalar_rnn(100, B, rng)
    t.add_row(f"scalar tanh RNN gradient, T=100, batch {B}", f"{a*1e3:.2f} ms", f"{b*1e3:.2f} ms (torch autograd)",
              f"{a/b:.2f}", f"{e:.1e}")
    a, b, e = bench_vector_rnn(16, 64, 64, 8, 64, rng)
    t.add_row("vector RNN gradient, H=64, D=64, T=16, batch 64", f"{a*1e3:.2f} ms", f"{b*1e3:.2f} ms (nn.RNN autograd)",
              f"{a/b:.2f}", f"{e:.1e}")
    Ta = 32 if args.quick else 128
    a, b, e = bench_attention(Ta, 64, 4, 8, rng)
    t.add_row(f"attention block gradient, T={Ta}, D=64, 4 heads, batch 8", f"{a*1e3:.2f} ms",
              f"{b*1e3:.2f} ms (torch autograd)", f"{a/b:.2f}", f"{e:.1e}")
    plain_done = True
    for T in (10, 30) if args.quick else (10, 30, 100):
        ours = bench_compiled_scalar(T)
        for cse in (True, False):
            if not cse and not plain_done:
                continue
            naive = bench_lambdify(T, args.limit, cse)
            ref = "lambdify(cse=True)" if cse else "lambdify"
            if naive in ("recursion", "failed"):
                t.add_row(f"∂L/∂w_h at {POINTS} points, T={T}: compile / evaluate", f"{ours[0]*1e3:.1f} ms / {ours[1]*1e6:.0f} µs",
                          f"fails: {'RecursionError in SymPy' if naive == 'recursion' else 'no result'} ({ref})",
                          "—", "")
                continue
            if naive is None:
                plain_done = plain_done and cse
                t.add_row(f"∂L/∂w_h at {POINTS} points, T={T}: compile / evaluate", f"{ours[0]*1e3:.1f} ms / {ours[1]*1e6:.0f} µs",
                          f"> {args.limit:.0f} s ({ref} of the expanded expression)", "—", "")
                continue
            t.add_row(f"∂L/∂w_h at {POINTS} points, T={T}: compile / evaluate", f"{ours[0]*1e3:.1f} ms / {ours[1]*1e6:.0f} µs",
                      f"{naive[0]*1e3:.1f} ms / {naive[1]*1e6:.0f} µs ({ref} of the expanded expression)",
                      f"{ours[0]/naive[0]:.2f} / {ours[1]/naive[1]:.2f}",
                      f"{abs(ours[2]-naive[2])/max(1, abs(naive[2])):.1e}")
    con.print(t)
    t2 = Table(title="compile time against T (scalar tanh RNN gradient, numpy)")
    for c in ("T", "rows", "instructions", "compile"):
        t2.add_column(c)
    pts = []
    for T in (10, 100, 1000) if args.quick else (10, 100, 1000, 10_000):
        L, g = scalar_rnn(T)
        t0 = time.perf_counter()
        f = compile(L, [g.name("w_h")], backend="numpy")
        dt = time.perf_counter() - t0
        pts.append((T, dt))
        t2.add_row(str(T), str(len(L)), str(len(f)), f"{dt*1e3:.1f} ms")
    slope = np.polyfit(np.log([p[0] for p in pts[1:]]), np.log([p[1] for p in pts[1:]]), 1)[0]
    con.print(t2)
    con.print(f"log-log slope of compile time against T (T ≥ 100): {slope:.2f}")
    con.print(f"mpmath, 50 digits, T=100 gradient (∂L/∂w_x, ∂L/∂w_h, ∂L/∂w_o): {bench_mpmath(100)*1e3:.1f} ms per evaluation")


if __name__ == "__main__":
    main()
