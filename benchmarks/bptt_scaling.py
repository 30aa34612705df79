"""BPTT on the ledger against naive differentiation of the unrolled loss, for a scalar tanh RNN.

    python benchmarks/bptt_scaling.py [--T 10 100 1000 10000] [--timeout 60] [--repeats 3]

The model is the Week 06 handout's (seed 004) scalar RNN with φ = tanh and a
final-only loss: z_t = w_x x_t + w_h h_{t−1}, h_t = tanh(z_t), ŷ = w_o h_{T−1},
ℒ = ½(ŷ − y)². For each T it prints:

* ledger rows: forward rows, adjoint rows (g_t^h, g_t^z, the weight and input
  gradients) and all names; the counts must be exactly linear in T;
* derivation time: ``symseq.derive.bptt.bptt`` (the symbolic reverse mode that
  appends every adjoint row), the best of ``--repeats`` runs, each started
  cold (SymPy's cache and the ledger's template cache cleared, garbage
  collected beforehand, as in a fresh process); and the time to
  evaluate ∂ℒ/∂w_h with NumPy at one point, showing the result is usable;
* naive: ``sympy.diff`` of the unrolled loss expression with respect to w_x,
  w_h and w_o, each T in a subprocess abandoned after ``--timeout`` seconds;
  once one T exceeds the limit, larger T are not tried.

It ends with the least-squares slope of log(derivation time) against log T,
the slopes between consecutive T, and naive/ledger time ratios measured in
the same run. Timings depend on the machine's load; ratios and slopes are
the result.
"""

from __future__ import annotations

import argparse
import gc
import math
import subprocess
import sys
import time

import numpy as np
import sympy as sp


def build(T: int):
    from symseq import Ledger
    from symseq.blocks import cells, heads

    L = Ledger(f"scalar tanh RNN, T={T}")
    xs = cells.sequence_inputs(L, T)
    run = cells.rnn(L, xs, L.parameter("w_x"), L.parameter("w_h"), phi=sp.tanh)
    head = heads.regression_head(L, run, L.parameter("w_o"))
    loss = heads.squared_error(L, head)
    return L, run, loss


def cold():
    """Start a timing as a fresh process would: no garbage pending, SymPy's cache and the template cache empty.

    Without this, repeats at small T reuse the previous repeat's cached expressions (the same symbol names)
    and look faster than a first run.
    """
    from sympy.core.cache import clear_cache

    from symseq import ledger

    clear_cache()
    ledger._PARTIALS.clear()
    gc.collect()


def ledger_point(T: int, repeats: int) -> dict:
    from symseq import evaluate
    from symseq.derive import bptt

    best = math.inf
    for _ in range(max(1, repeats)):
        L = run = loss = bp = None
        gc.collect()  # ledgers are reference cycles (Ref → ledger): free the previous run's before timing
        t0 = time.perf_counter()
        L, run, loss = build(T)
        t_build = time.perf_counter() - t0
        n_forward = len(L)
        cold()
        t0 = time.perf_counter()
        bp = bptt.bptt(L, run, loss)
        best = min(best, time.perf_counter() - t0)
    rng = np.random.default_rng(0)
    values = {f"x_{t}": v for t, v in enumerate(rng.normal(size=T))}
    values.update({"w_x": 0.5, "w_h": 0.9, "w_o": 1.1, "y": 0.3})
    t0 = time.perf_counter()
    g = evaluate(L, "numpy", values=values, targets=[bp.grads.name("w_h")])[bp.grads.name("w_h")]
    t_eval = time.perf_counter() - t0
    return {"T": T, "forward": len(L.forward_rows()), "adjoint": len(L.adjoint_rows()), "names": len(L),
            "leaves": n_forward - len(L.forward_rows()), "build": t_build, "backward": best, "eval": t_eval,
            "grad_w_h": float(g)}


# The unrolled loss nests T tanh calls; SymPy walks it recursively, so the child raises the recursion limit and
# runs on a thread with a large stack (without this it stops with RecursionError near T = 100).
NAIVE = """
import sys, threading, time
import sympy as sp

def run():
    T = int(sys.argv[1])
    w_x, w_h, w_o, y = sp.symbols("w_x w_h w_o y", real=True)
    xs = sp.symbols(f"x_0:{T}", real=True)
    h = sp.S.Zero
    for x in xs:
        h = sp.tanh(w_x * x + w_h * h)
    loss = (w_o * h - y) ** 2 / 2
    t0 = time.perf_counter()
    grads = [sp.diff(loss, w) for w in (w_x, w_h, w_o)]
    print(time.perf_counter() - t0, flush=True)

sys.setrecursionlimit(1_000_000)
threading.stack_size(1 << 29)
worker = threading.Thread(target=run)
worker.start()
worker.join()
"""


def naive_point(T: int, timeout: float) -> tuple[float | None, str]:
    """Seconds sympy.diff needed for the three weight gradients of the unrolled loss, or None and why it stopped."""
    try:
        out = subprocess.run([sys.executable, "-c", NAIVE, str(T)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"> {timeout:g}"
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        last = (out.stderr.strip().splitlines() or ["exit status %d" % out.returncode])[-1]
        return None, "failed: " + last[:60]
    return float(lines[-1]), f"{float(lines[-1]):.3f}"


def slope(xs, ys) -> float:
    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="+", default=[10, 100, 1000, 10000])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per naive point (default 60)")
    ap.add_argument("--repeats", type=int, default=3, help="backward runs per T; the best is reported (default 3)")
    args = ap.parse_args(argv)

    rows = []
    naive_stopped = False
    head = (f"{'T':>6} {'forward':>8} {'adjoint':>8} {'names':>7} {'build s':>9} {'backward s':>11} "
            f"{'eval s':>8} {'naive diff s':>13}")
    print(head)
    print("-" * len(head))
    for T in args.T:
        r = ledger_point(T, args.repeats)
        if naive_stopped:
            r["naive"], note = None, "not tried"
        else:
            r["naive"], note = naive_point(T, args.timeout)
            naive_stopped = r["naive"] is None
        rows.append(r)
        print(f"{T:>6} {r['forward']:>8} {r['adjoint']:>8} {r['names']:>7} {r['build']:>9.3f} {r['backward']:>11.3f} "
              f"{r['eval']:>8.3f} {note:>13}", flush=True)

    Ts = [r["T"] for r in rows]
    print()
    for key in ("forward", "adjoint", "names"):
        a = (rows[-1][key] - rows[0][key]) / (Ts[-1] - Ts[0]) if len(rows) > 1 else 0
        b = rows[0][key] - a * Ts[0]
        exact_linear = all(r[key] == a * r["T"] + b for r in rows)
        print(f"{key} rows = {a:g}·T + {b:g}: {'exactly linear in T' if exact_linear else 'NOT linear'}")
    if len(rows) > 1:
        s = slope(Ts, [r["backward"] for r in rows])
        pairs = ", ".join(f"{a['T']}→{b['T']}: {slope([a['T'], b['T']], [a['backward'], b['backward']]):.2f}"
                          for a, b in zip(rows, rows[1:]))
        print(f"log-log slope of derivation (backward) time against T: {s:.2f} (least squares); consecutive: {pairs}")
        big = [r for r in rows if r["T"] >= 100]
        if len(big) > 1 and len(big) < len(rows):
            print(f"  over T ≥ 100 only (no fixed start-up cost): {slope([r['T'] for r in big], [r['backward'] for r in big]):.2f}")
        se = slope(Ts, [r["eval"] for r in rows])
        print(f"log-log slope of evaluation time against T: {se:.2f}")
    for r in rows:
        if r["naive"] is not None:
            print(f"T={r['T']}: naive sympy.diff / ledger backward = {r['naive'] / r['backward']:.0f}×")
    done = rows[-1]
    print(f"T={done['T']} finished: ∂ℒ/∂w_h = {done['grad_w_h']:.12g} at the benchmark point")
    return 0


if __name__ == "__main__":
    sys.exit(main())
