"""Every "done when" figure of the speed issue, in one run, as ratios against references measured in the same run.

    python benchmarks/speed.py              # the full run (several minutes on a busy machine)
    python benchmarks/speed.py --quick      # fewer pairs, T up to 4096 for the slope
    python benchmarks/speed.py --markdown   # also print the table as Markdown (for the README)

Every time is the median over interleaved pairs (ours, reference, ours, reference, …) of the ratio ours /
reference, with NumPy's BLAS, torch and XLA at one thread, so the machine's load (printed beside each figure,
``os.getloadavg()``) weighs on both sides alike. Absolute times are printed for the record only: on a shared
machine they mean little. References: torch autograd (float64), JAX ``jit(value_and_grad)`` of the unrolled loop
(float64) when JAX is installed (``pip install 'symseq[bench]'``), and a hand-written mpmath loop. Figures that
are wall times of a fresh process (derive + compile, ``symseq verify``) have no reference in the run; their goal
is absolute and is marked as such.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from backends import attention_setup, scalar_rnn, scalar_rnn_data, vector_rnn_setup  # noqa: E402

from symseq import compile  # noqa: E402

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parent.parent

try:
    import jax  # noqa: E402

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: E402
except ImportError:  # the optional bench extra
    jax = None


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def pairs(ours, ref, n, warm=0.1):
    """Median over ``n`` interleaved pairs of time(ours) / time(ref), and the two medians of the times, after
    calling each for ``warm`` seconds (and at least three times): the steady state of a program called at many
    points, which a compiled ledger reaches once stepping through its instructions has cost as much as writing
    them out as straight-line Python (``symseq.backends.compiled``; the 50-digit mpmath program after about a
    dozen calls)."""
    for f in (ours, ref):
        k, end = 0, time.perf_counter() + warm
        while k < 3 or time.perf_counter() < end:
            f()
            k += 1
    ratios, ta, tb = [], [], []
    for _ in range(n):
        t = time.perf_counter()
        ours()
        a = time.perf_counter() - t
        t = time.perf_counter()
        ref()
        b = time.perf_counter() - t
        ratios.append(a / b)
        ta.append(a)
        tb.append(b)
    return statistics.median(ratios), statistics.median(ta), statistics.median(tb)


ROWS = []


def row(figure, ratio, t_ours, t_ref, reference, goal, met, agreement, when):
    ROWS.append((figure, f"{t_ours * 1e3:.2f} ms" if t_ours is not None else "—",
                 f"{t_ref * 1e3:.2f} ms ({reference})" if t_ref is not None else reference,
                 f"{ratio:.2f}" if ratio is not None else "—", goal, "yes" if met else "no", agreement, when))


# ---------------------------------------------------------------- scalar tanh RNN, T = 100, batch 10⁴
def scalar_case(n):
    T, B = 100, 10_000
    rng = np.random.default_rng(0)
    L, g = scalar_rnn(T)
    params = ("w_x", "w_h", "w_o")
    names = ["L"] + [g.name(p) for p in params]
    inputs = list(params) + [f"x_{t}" for t in range(T)] + ["y"]  # h_{-1} = 0 compiled in, as in the references
    X, Y, vals, ref = scalar_rnn_data(T, B, rng)
    f_np = compile(L, names, backend="numpy", batch_reduce="sum", inputs=inputs)
    try:
        f_nb = compile(L, names, backend="numba", batch_reduce="sum", inputs=inputs)
        f_nb(vals)  # compiled on the first call
    except ImportError:
        f_nb = None
    exact = [r.item() for r in ref()]

    def agree(out):
        return max(abs(float(out[g.name(p)]) - e) / max(1.0, abs(e)) for p, e in zip(params, exact))

    r, a, b = pairs(lambda: f_np(vals), ref, n)
    row("scalar tanh RNN, T=100, batch 10⁴: NumPy backend", r, a, b, "torch autograd", "≤ 0.5", r <= 0.5,
        f"{agree(f_np(vals)):.0e}", load())
    if f_nb is not None:
        r, a, b = pairs(lambda: f_nb(vals), ref, n)
        row("scalar tanh RNN: numba backend", r, a, b, "torch autograd", "≤ 0.25", r <= 0.25,
            f"{agree(f_nb(vals)):.0e}", load())
    else:
        row("scalar tanh RNN: numba backend", None, None, None, "numba not installed", "≤ 0.25", False, "", load())
    if jax is None:
        row("scalar tanh RNN: numba backend against JAX", None, None, None,
            "JAX not installed (pip install 'symseq[bench]')",
            "≤ 1.0", False, "", load())
        return
    Xj, Yj = jnp.asarray(X), jnp.asarray(Y)

    def jloss(w, X, Y):
        h = jnp.zeros(B)
        for t in range(T):  # unrolled, as our program is
            h = jnp.tanh(w[0] * X[t] + w[1] * h)
        return 0.5 * jnp.sum((w[2] * h - Y) ** 2)

    jg = jax.jit(jax.value_and_grad(jloss))
    w0 = jnp.asarray([0.5, 0.9, 1.1])

    def jref():
        v, gr = jg(w0, Xj, Yj)
        return gr.block_until_ready()

    jexact = np.asarray(jref())
    err = max(abs(jexact[i] - e) / max(1.0, abs(e)) for i, e in enumerate(exact))
    if f_nb is not None:
        r, a, b = pairs(lambda: f_nb(vals), jref, n)
        row("scalar tanh RNN: numba backend against JAX", r, a, b, "JAX jit(grad)", "≤ 1.0", r <= 1.0,
            f"JAX vs torch {err:.0e}", load())
    r, a, b = pairs(lambda: f_np(vals), jref, n)
    row("scalar tanh RNN: NumPy backend against JAX", r, a, b, "JAX jit(grad)", "(none)", True, "", load())


# ---------------------------------------------------------------- Elman RNN, 16 steps, d = 64, batch 64
def elman_case(n):
    T, D, H, C, B = 16, 64, 64, 8, 64
    inputs = ["W_x", "W_h", "b_h", "W_o"] + [f"x_{t}" for t in range(T)] + ["y"]  # h_{-1} = 0 compiled in
    f, vals, ref, err = vector_rnn_setup(T, D, H, C, B, np.random.default_rng(1), inputs=inputs)
    r, a, b = pairs(lambda: f(vals), ref, n)
    row("Elman RNN, 16 steps, d=64, batch 64: NumPy backend", r, a, b, "nn.RNN autograd", "≤ 0.5; agree ≤ 1e-12",
        r <= 0.5 and err <= 1e-12, f"{err:.0e}", load())
    try:  # one compiled function on the folded batch (symseq.backends.numba_matrix), compiled on the first call
        f, vals, ref, err = vector_rnn_setup(T, D, H, C, B, np.random.default_rng(1), inputs=inputs,
                                             backend="numba")
    except ImportError:
        row("Elman RNN: numba backend", None, None, None, "numba not installed", "≤ 0.5; agree ≤ 1e-12", False, "",
            load())
        return
    r, a, b = pairs(lambda: f(vals), ref, n)
    row("Elman RNN: numba backend", r, a, b, "nn.RNN autograd", "≤ 0.5; agree ≤ 1e-12", r <= 0.5 and err <= 1e-12,
        f"{err:.0e}", load())


# ---------------------------------------------------------------- attention, T = 128, D = 64, 4 heads, batch 8
def attention_case(n):
    f, vals, ref, err = attention_setup(128, 64, 4, 8, np.random.default_rng(2))
    r, a, b = pairs(lambda: f(vals), ref, 2 * n)
    row("attention, T=128, D=64, 4 heads, batch 8: NumPy backend", r, a, b, "torch autograd", "≤ 1.0", r <= 1.0,
        f"{err:.0e}", load())


# ---------------------------------------------------------------- derive + compile in a fresh process
FRESH = textwrap.dedent("""
    import sys, time
    import numpy as np, sympy as sp
    import symseq
    from symseq import Ledger, compile, ops
    T = int(sys.argv[1])
    t0 = time.perf_counter()
    L = Ledger()
    W_x, W_h = L.parameter("W_x", shape=(4, 4)), L.parameter("W_h", shape=(4, 4))
    h = L.input("h_{-1}", [[0] * 4])
    for t in range(T):
        z = L.define(f"z_{t}", L.input(f"x_{t}", shape=(1, 4)) @ W_x.T + h @ W_h.T)
        h = L.define(f"h_{t}", ops.Map(sp.tanh, z))
    L.define("L", ops.Sum(h * h, None) / 2)
    t1 = time.perf_counter()
    g = L.backward("L")
    t2 = time.perf_counter()
    f = compile(L, ["L", g.name("W_x"), g.name("W_h")], backend="numpy", batch_reduce="sum")
    t3 = time.perf_counter()
    t4 = time.perf_counter()
    sp.diff(sp.tanh(sp.Symbol("u")), sp.Symbol("u"))  # a second derivative: what the first one cost once
    t5 = time.perf_counter()
    print(t3 - t0, t1 - t0, t2 - t1, t3 - t2, t5 - t4)
""")


def fresh(T):
    out = subprocess.run([sys.executable, "-c", FRESH, str(T)], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    return [float(x) for x in out.stdout.split()]


def derive_case(quick):
    runs = [fresh(16) for _ in range(5)]
    total = statistics.median(r[0] for r in runs)
    backward = statistics.median(r[2] for r in runs)
    row("derive + compile, T=16 tanh RNN (state 4), fresh process, after import", None, total, None,
        f"{total * 1e3:.1f} ms (backward {backward * 1e3:.1f} ms) — absolute", "≤ 15 ms", total <= 0.015, "", load())
    Ts = (256, 1024, 4096) if quick else (256, 1024, 4096, 10_000)
    ts = [statistics.median(fresh(T)[0] for _ in range(5)) for T in Ts]  # medians of 5 fresh processes per T
    slope = float(np.polyfit(np.log(Ts), np.log(ts), 1)[0])
    row(f"derive + compile, slope in T ({', '.join(map(str, Ts))})", None, None, None,
        "log-log slope " + ", ".join(f"{t:.2f} s" for t in ts), "≤ 1.1", slope <= 1.1, f"slope {slope:.2f}", load())


# ---------------------------------------------------------------- mpmath, 50 digits, T = 100 gradient
def mpmath_case(n):
    T = 100
    L, g = scalar_rnn(T)
    names = [g.name(p) for p in ("w_x", "w_h", "w_o")]
    f = compile(L, names, backend="mpmath", dps=50)
    ref120 = compile(L, names, backend="mpmath", dps=120)()
    ctx = mpmath.MPContext()
    ctx.dps = 50

    def hand():  # the same gradient, written by hand: forward states kept, then one backward sweep
        wx, wh, wo, x, y = ctx.mpf(1) / 2, ctx.mpf(9) / 10, ctx.mpf(11) / 10, ctx.mpf(1) / 10, ctx.mpf(1)
        hs = [ctx.mpf(0)]
        for _ in range(T):
            hs.append(ctx.tanh(wx * x + wh * hs[-1]))
        e = wo * hs[-1] - y
        gwo, gz, gwx, gwh = e * hs[-1], e * wo, ctx.mpf(0), ctx.mpf(0)
        for t in range(T, 0, -1):
            gz = gz * (1 - hs[t] * hs[t])
            gwx += gz * x
            gwh += gz * hs[t - 1]
            gz = gz * wh
        return gwx, gwh, gwo

    out = f()
    digits = min(-float(mpmath.log10(abs(out[x] - ref120[x]) / abs(ref120[x]))) if out[x] != ref120[x] else 120
                 for x in names)
    r, a, b = pairs(f, hand, n)
    row(f"mpmath, 50 digits, T=100 gradient (mpmath backend: {mpmath.libmp.BACKEND})", r, a, b,
        "hand-written mpmath loop", "≤ 2 ms per point (absolute); ≥ 50 digits", a <= 0.002 and digits >= 50,
        f"{digits:.1f} correct digits (120-digit reference)", load())


# ---------------------------------------------------------------- symseq verify
def verify_case():
    def wall(args):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "symseq.cli", "verify", *args], capture_output=True, text=True,
                           cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        return time.perf_counter() - t, p.returncode, p.stderr

    t, rc, err = wall(["-j", "2"])
    if rc == 2 and "-j" in err:
        t, rc, _ = wall([])
        row("symseq verify, all bundled derivations (no -j option yet: one process)", None, t, None,
            f"{t:.1f} s wall, exit {rc} — absolute", "≤ 10 s with -j 2", t <= 10, "", load())
    else:
        row("symseq verify -j 2, all bundled derivations", None, t, None, f"{t:.1f} s wall, exit {rc} — absolute",
            "≤ 10 s", t <= 10 and rc == 0, "", load())
    t, rc, _ = wall(["week08-decoder"])
    row("symseq verify week08-decoder", None, t, None, f"{t:.1f} s wall, exit {rc} — absolute", "≤ 3 s",
        t <= 3 and rc == 0, "", load())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer pairs; the slope in T up to 4096")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--skip", default="", help="comma-separated cases to leave out: "
                    "scalar,elman,attention,derive,mpmath,verify")
    args = ap.parse_args()
    n = 7 if args.quick else 15
    skip = set(filter(None, args.skip.split(",")))
    started = load()
    for name, case in (("scalar", lambda: scalar_case(n)), ("elman", lambda: elman_case(n)),
                       ("attention", lambda: attention_case(n)), ("derive", lambda: derive_case(args.quick)),
                       ("mpmath", lambda: mpmath_case(n)), ("verify", verify_case)):
        if name not in skip:
            case()
    con = Console(width=max(Console().width, 160))
    cols = ("figure", "ours", "reference", "ratio", "goal", "met", "agreement", "load (1, 5, 15 min)")
    t = Table(title=f"symseq speed: medians of interleaved pairs, one thread; cpus {os.cpu_count()}, "
                    f"load at start {started}; numpy {np.__version__}, torch {torch.__version__}"
                    + (f", jax {jax.__version__}" if jax else ", no jax"))
    for c in cols:
        t.add_column(c)
    for r in ROWS:
        t.add_row(*r)
    con.print(t)
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in ROWS:
            print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")


if __name__ == "__main__":
    main()
