"""Every goal of the speed issue, in one run, as ratios of CPU time against references measured in the same run.

    python benchmarks/speed.py              # the full run (two to three minutes)
    python benchmarks/speed.py --quick      # fewer pairs, T up to 4096 for the slope, no verify -j 2
    python benchmarks/speed.py --markdown   # also print the table as Markdown (for the README)

Every figure is the median over interleaved pairs (ours, reference, ours, reference, …) of the ratio ours /
reference, measured twice in each call: in CPU time (``time.process_time()``: user + system time of every thread
of this process) and in wall time. Goals are met or not by the CPU-time ratio. On a shared machine the wall clock
also counts the time the process waited for a core, which lands on one side of a pair or the other by chance (torch
autograd read 18 ms by wall clock and 12.6 ms by CPU time in one set of calls); CPU time does not. NumPy's BLAS,
torch, numba and XLA are pinned to one thread, so CPU time is the time of that thread's work. It is
``process_time`` and not ``thread_time`` because JAX runs its computation on a thread of its own (0.3 ms of the
calling thread against 4.5 ms of the process for the scalar RNN); torch autograd on the CPU, NumPy and numba run
on the calling thread, where the two agree. The processor, the thread settings and the load
(``os.getloadavg()``, at the start and end and beside each figure) are printed with the table.

References: torch autograd (float64), JAX ``jit(value_and_grad)`` of the unrolled loop (float64) when JAX is
installed (``pip install '.[bench]'``), and a hand-written mpmath loop. Figures of a fresh process (derive +
compile, ``symseq verify``) have no reference: they are CPU seconds (user + system) of the child, as medians of
several processes; derive + compile is timed by the child itself after its imports.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
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
torch.set_num_interop_threads(1)
ROOT = Path(__file__).resolve().parent.parent

try:
    import jax  # noqa: E402

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: E402
except ImportError:  # the optional bench extra
    jax = None
try:
    import numba  # noqa: E402
except ImportError:
    numba = None


# ---------------------------------------------------------------- the machine
def processor() -> str:
    """The processor as /proc/cpuinfo names it ("model name"; a virtual machine may show a generic name), with its
    family, model and stepping, whether it has AVX-512, and the number of CPUs."""
    info = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:
        import platform

        return f"{platform.processor() or 'unknown'}, {os.cpu_count()} CPUs"
    flags = info.get("flags", "").split()
    return (f"{info.get('model name', 'unknown')} (family {info.get('cpu family', '?')}, model "
            f"{info.get('model', '?')}, stepping {info.get('stepping', '?')}; "
            f"{'AVX-512' if 'avx512f' in flags else 'no AVX-512'}), {os.cpu_count()} CPUs")


def threads() -> str:
    env = ", ".join(f"{v}={os.environ.get(v, '(unset)')}"
                    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    nb = f"numba {numba.get_num_threads()}" if numba else "no numba"
    return (f"torch {torch.get_num_threads()} (inter-op {torch.get_num_interop_threads()}); {env}; {nb}; "
            f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")


def seconds(x: float) -> str:
    return f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.2f} s"


def load1() -> float:
    return os.getloadavg()[0]


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


# ---------------------------------------------------------------- the one timing helper
def clocked(f):
    """``f`` as a side of :func:`pairs`: calls it and returns the (CPU, wall) seconds the call took in this
    process."""
    def side():
        c, w = time.process_time(), time.perf_counter()
        f()
        return time.process_time() - c, time.perf_counter() - w
    return side


@dataclass
class Timing:
    cpu: float        # median of ours / ref in CPU time; without a reference, the median CPU seconds of ours
    wall: float       # the same in wall time
    ours_cpu: float   # median CPU seconds of ours
    ref_cpu: float | None
    load: tuple[float, float]  # 1-minute load at the start and end of the measurement

    @property
    def when(self) -> str:
        return f"{self.load[0]:.1f}–{self.load[1]:.1f}"


def pairs(ours, ref=None, n=15, warm=0.1) -> Timing:
    """Medians over ``n`` interleaved pairs (ours, ref, ours, ref, …) of CPU(ours) / CPU(ref) and of wall(ours) /
    wall(ref), and the median CPU seconds of each side. ``ours`` and ``ref`` are called with no argument and return
    the (CPU, wall) seconds of one call: :func:`clocked` for a call in this process, :func:`fresh` for a child
    process. Without ``ref`` the figure is ours' median CPU and wall seconds. Each side is first called for ``warm``
    seconds (at least three times; ``warm=0``: not at all): the steady state of a program called at many points,
    which a compiled ledger reaches once stepping through its instructions has cost as much as writing them out as
    straight-line Python (``symseq.backends.compiled``; the 50-digit mpmath program after about a dozen calls)."""
    start = load1()
    if warm:
        for side in (ours, ref) if ref else (ours,):
            k, end = 0, time.perf_counter() + warm
            while k < 3 or time.perf_counter() < end:
                side()
                k += 1
    a, b = [], []
    for _ in range(n):
        a.append(ours())
        if ref:
            b.append(ref())
    med = statistics.median
    when = (start, load1())
    if not ref:
        return Timing(med(c for c, _ in a), med(w for _, w in a), med(c for c, _ in a), None, when)
    return Timing(med(x[0] / y[0] for x, y in zip(a, b)), med(x[1] / y[1] for x, y in zip(a, b)),
                  med(c for c, _ in a), med(c for c, _ in b), when)


# ---------------------------------------------------------------- the table
ROWS = []
GOALS = []  # (figure, goal, CPU-time ratio or figure, met)


def row(figure, t: Timing | None, reference, goal, met, agreement="", unit="ratio"):
    """One figure: ``unit`` "ratio" (t.cpu and t.wall are ratios ours / reference) or "s" (CPU and wall seconds of
    a fresh process, no reference). ``met`` is None for a figure without a goal."""
    if t is None:
        ROWS.append((figure, "—", reference, "—", "—", goal, "no" if goal != "(none)" else "", agreement,
                     f"{load1():.1f}"))
    elif unit == "ratio":
        ROWS.append((figure, f"{t.ours_cpu * 1e3:.2f} ms", f"{t.ref_cpu * 1e3:.2f} ms ({reference})",
                     f"{t.cpu:.3f}", f"{t.wall:.3f}", goal, "" if met is None else "yes" if met else "no",
                     agreement, t.when))
    else:
        ROWS.append((figure, seconds(t.cpu), reference, seconds(t.cpu), seconds(t.wall), goal,
                     "" if met is None else "yes" if met else "no", agreement, t.when))
    if met is not None:
        GOALS.append((figure, goal, ROWS[-1][3], bool(met)))
    print(f"  {figure}: CPU {ROWS[-1][3]}, wall {ROWS[-1][4]}, goal {goal}, met {ROWS[-1][6] or '—'}, load "
          f"{ROWS[-1][8]}", file=sys.stderr)


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

    t = pairs(clocked(lambda: f_np(vals)), clocked(ref), n)
    row("scalar tanh RNN, T=100, batch 10⁴: NumPy backend", t, "torch autograd", "≤ 0.5", t.cpu <= 0.5,
        f"{agree(f_np(vals)):.0e}")
    if f_nb is not None:
        t = pairs(clocked(lambda: f_nb(vals)), clocked(ref), n)
        row("scalar tanh RNN: numba backend", t, "torch autograd", "≤ 0.3", t.cpu <= 0.3, f"{agree(f_nb(vals)):.0e}")
    else:
        row("scalar tanh RNN: numba backend", None, "numba not installed", "≤ 0.3", False)
    if jax is None:
        row("scalar tanh RNN: numba backend against JAX", None, "JAX not installed (pip install '.[bench]')",
            "≤ 1.0", False)
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
        t = pairs(clocked(lambda: f_nb(vals)), clocked(jref), n)
        row("scalar tanh RNN: numba backend against JAX", t, "JAX jit(grad)", "≤ 1.0", t.cpu <= 1.0,
            f"JAX vs torch {err:.0e}")
    t = pairs(clocked(lambda: f_np(vals)), clocked(jref), n)
    row("scalar tanh RNN: NumPy backend against JAX", t, "JAX jit(grad)", "(none)", None)


# ---------------------------------------------------------------- Elman RNN, 16 steps, d = 64, batch 64
def elman_case(n):
    T, D, H, C, B = 16, 64, 64, 8, 64
    inputs = ["W_x", "W_h", "b_h", "W_o"] + [f"x_{t}" for t in range(T)] + ["y"]  # h_{-1} = 0 compiled in
    f, vals, ref, err = vector_rnn_setup(T, D, H, C, B, np.random.default_rng(1), inputs=inputs)
    t = pairs(clocked(lambda: f(vals)), clocked(ref), n)
    row("Elman RNN, 16 steps, d=64, batch 64: NumPy backend", t, "nn.RNN autograd", "≤ 0.5; agree ≤ 1e-12",
        t.cpu <= 0.5 and err <= 1e-12, f"{err:.0e}")
    try:  # one compiled function on the folded batch (symseq.backends.numba_matrix), compiled on the first call
        f, vals, ref, err = vector_rnn_setup(T, D, H, C, B, np.random.default_rng(1), inputs=inputs,
                                             backend="numba")
    except ImportError:
        row("Elman RNN: numba backend", None, "numba not installed", "≤ 0.5; agree ≤ 1e-12", False)
        return
    t = pairs(clocked(lambda: f(vals)), clocked(ref), n)
    row("Elman RNN: numba backend", t, "nn.RNN autograd", "≤ 0.5; agree ≤ 1e-12", t.cpu <= 0.5 and err <= 1e-12,
        f"{err:.0e}")


# ---------------------------------------------------------------- attention, T = 128, D = 64, 4 heads, batch 8
def attention_case(n):
    f, vals, ref, err = attention_setup(128, 64, 4, 8, np.random.default_rng(2))
    t = pairs(clocked(lambda: f(vals)), clocked(ref), n)
    row("attention, T=128, D=64, 4 heads, batch 8: NumPy backend", t, "torch autograd", "≤ 1.0", t.cpu <= 1.0,
        f"{err:.0e}")


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
    t = pairs(clocked(f), clocked(hand), 2 * n)
    row(f"mpmath, 50 digits, T=100 gradient (mpmath backend: {mpmath.libmp.BACKEND})", t,
        "hand-written mpmath loop", "≤ 1.0; ≥ 50 digits", t.cpu <= 1.0 and digits >= 50,
        f"{digits:.1f} correct digits (120-digit reference)")


# ---------------------------------------------------------------- fresh processes
FRESH = textwrap.dedent("""
    import sys, time
    import numpy as np, sympy as sp
    import symseq
    from symseq import Ledger, compile, ops
    T = int(sys.argv[1])
    c0, w0 = time.process_time(), time.perf_counter()
    L = Ledger()
    W_x, W_h = L.parameter("W_x", shape=(4, 4)), L.parameter("W_h", shape=(4, 4))
    h = L.input("h_{-1}", [[0] * 4])
    for t in range(T):
        z = L.define(f"z_{t}", L.input(f"x_{t}", shape=(1, 4)) @ W_x.T + h @ W_h.T)
        h = L.define(f"h_{t}", ops.Map(sp.tanh, z))
    L.define("L", ops.Sum(h * h, None) / 2)
    g = L.backward("L")
    f = compile(L, ["L", g.name("W_x"), g.name("W_h")], backend="numpy", batch_reduce="sum")
    print(time.process_time() - c0, time.perf_counter() - w0)
""")


def child(args) -> tuple[float, float, int, str]:
    """Runs ``python args`` from the repository root; returns the CPU seconds (user + system) of the child and of
    every process it waited for, its wall seconds, its exit status and its standard output. ``symseq verify``
    decides every derivation afresh (``SYMSEQ_NO_CACHE``), not from a cache that an earlier run left."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = time.perf_counter()
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), SYMSEQ_NO_CACHE="1"))
    w = time.perf_counter() - w
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, w, p.returncode, p.stdout + p.stderr


def fresh(T):
    """A side of :func:`pairs`: derive + compile at ``T`` steps in a fresh process, timed by the child after its
    imports (its own CPU and wall seconds)."""
    def side():
        _, _, rc, out = child(["-c", FRESH, str(T)])
        if rc:
            raise RuntimeError(f"derive + compile at T={T} failed:\n{out}")
        cpu, wall = (float(x) for x in out.split()[-2:])
        return cpu, wall
    return side


def derive_case(quick):
    t = pairs(fresh(16), n=5, warm=0)
    row("derive + compile, T=16 tanh RNN (state 4), fresh process, after import", t,
        "CPU s of the child, median of 5", "≤ 15 ms", t.cpu <= 0.015, unit="s")
    Ts = (256, 1024, 4096) if quick else (256, 1024, 4096, 10_000)
    ts = [pairs(fresh(T), n=5, warm=0) for T in Ts]  # medians of 5 fresh processes per T
    slope = float(np.polyfit(np.log(Ts), np.log([x.cpu for x in ts]), 1)[0])
    wall_slope = float(np.polyfit(np.log(Ts), np.log([x.wall for x in ts]), 1)[0])
    ROWS.append((f"derive + compile, slope in T ({', '.join(map(str, Ts))})",
                 ", ".join(f"{x.cpu:.2f}" for x in ts) + " CPU s", "log-log slope of the child's CPU s",
                 f"{slope:.3f}", f"{wall_slope:.3f}", "≤ 1.1", "yes" if slope <= 1.1 else "no",
                 "wall s " + ", ".join(f"{x.wall:.2f}" for x in ts), f"{ts[0].load[0]:.1f}–{ts[-1].load[1]:.1f}"))
    GOALS.append((ROWS[-1][0], "≤ 1.1", f"{slope:.3f}", slope <= 1.1))
    print(f"  {ROWS[-1][0]}: CPU slope {slope:.3f}, wall slope {wall_slope:.3f}", file=sys.stderr)


def verify_case(quick):
    def verify(args):
        def side():
            cpu, wall, rc, out = child(["-m", "symseq.cli", "verify", *args])
            side.rc = rc
            return cpu, wall
        return side

    if not quick:  # a figure for the record: CPU seconds of verify and its worker processes, no goal
        side = verify(["-j", "2"])
        t = pairs(side, n=1, warm=0)
        row("symseq verify -j 2, all bundled derivations", t, f"CPU s of the processes, exit {side.rc}", "(none)",
            None, unit="s")
    side = verify(["week08-decoder"])
    t = pairs(side, n=3 if quick else 5, warm=0)
    row("symseq verify week08-decoder", t, f"CPU s of the process, exit {side.rc}", "≤ 3 s",
        t.cpu <= 3 and side.rc == 0, unit="s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer pairs; the slope in T up to 4096; no verify -j 2")
    ap.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    ap.add_argument("--skip", default="", help="comma-separated cases to leave out: "
                    "scalar,elman,attention,derive,mpmath,verify")
    args = ap.parse_args()
    n = 9 if args.quick else 21
    skip = set(filter(None, args.skip.split(",")))
    started = load()
    head = [f"processor: {processor()}", f"threads: {threads()}",
            f"numpy {np.__version__}, torch {torch.__version__}, " + (f"jax {jax.__version__}" if jax else "no jax")
            + (f", numba {numba.__version__}" if numba else ", no numba"),
            f"load (1, 5, 15 min) at start: {started}"]
    print("\n".join(head), flush=True)
    for name, case in (("scalar", lambda: scalar_case(n)), ("elman", lambda: elman_case(n)),
                       ("attention", lambda: attention_case(n)), ("derive", lambda: derive_case(args.quick)),
                       ("mpmath", lambda: mpmath_case(n)), ("verify", lambda: verify_case(args.quick))):
        if name not in skip:
            case()
    ended = load()
    con = Console(width=max(Console().width, 180))
    cols = ("figure", "ours (CPU)", "reference (CPU)", "CPU ratio", "wall ratio", "goal", "met", "agreement",
            "load (1 min)")
    t = Table(title="symseq speed: medians of interleaved pairs, one thread; met by the CPU-time ratio")
    for c in cols:
        t.add_column(c)
    for r in ROWS:
        t.add_row(*r)
    con.print(t)
    print("\n".join(head[:3]))
    print(f"load (1, 5, 15 min) at start: {started}; at end: {ended}")
    met = sum(m for *_, m in GOALS)
    print(f"goals met by CPU time: {met} of {len(GOALS)}")
    for figure, goal, value, m in GOALS:
        print(f"  {'met    ' if m else 'NOT MET'}  {figure}: {value} (goal {goal})")
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for r in ROWS:
            print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")


if __name__ == "__main__":
    main()
