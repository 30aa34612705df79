"""The numba backend's tanh (plain arithmetic LLVM vectorises) against mpmath, and the loop it lets vectorise.

Skipped only where numba is not installed and ``CI`` is unset (CI installs the test extra, which has numba).
"""

import os
import platform

import mpmath
import numpy as np
import pytest
import sympy as sp

from small_ledgers import scalar_rnn
from symseq import EvaluationError, Ledger, compile
from symseq.backends.numba_backend import tanh_f64

if not os.environ.get("CI"):
    pytest.importorskip("numba")

WORST = 0.22  # near here tanh_f64 is least accurate: 2|x| = ln 2 + r with r < 0 (see its docstring)
# tanh_f64 writes 2|x| = n ln 2 + r with n rounded: n steps up where |x| is an odd multiple of ln(2)/4
STEPS = 0.17328679513998632 * np.array([1, 3, 5, 7, 9])


@pytest.fixture(scope="module")
def tanh():
    import numba

    ufunc = numba.vectorize(["float64(float64)"])(tanh_f64())  # the same arithmetic the program's loop inlines

    def tanh(x):
        with np.errstate(all="ignore"):  # 2|x| overflows for |x| > 9e307, before it is clamped to 44
            return ufunc(x)

    return tanh


def points() -> np.ndarray:
    """1.3·10⁵ points, both signs: tiny (subnormal up) and every binade to 1e300, uniform where tanh bends, dense
    where the reduction of 2|x| changes n and around the least accurate point, and the last values before tanh
    rounds to 1."""
    rng = np.random.default_rng(20261202)
    x = np.concatenate([
        [5e-324, 1e-310, 2.2250738585072014e-308, 1e-200, 1e-20, 1e-8, 1e-5, 0.1, 1.0, 19.0, 19.1, 22.0, 44.0,
         710.0, 1e300, np.finfo(float).max],
        STEPS, np.nextafter(STEPS, 0), np.nextafter(STEPS, 1),
        10.0 ** rng.uniform(-323, 300, 15_000),
        rng.uniform(0, 0.625, 15_000),
        WORST + rng.uniform(-0.05, 0.05, 5_000),
        (STEPS[:, None] + rng.uniform(-1e-3, 1e-3, (5, 1_000))).reshape(-1),
        rng.uniform(0.625, 3, 15_000),
        rng.uniform(3, 20, 10_000),
    ])
    return np.concatenate([x, -x])


def ulps_from_mpmath(x: np.ndarray, got: np.ndarray) -> np.ndarray:
    """|got − tanh(x)| in units of the last place of the exact tanh(x) (mpmath at 40 digits)."""
    out = np.empty(x.size)
    with mpmath.workdps(40):
        for i, (v, g) in enumerate(zip(x.tolist(), got.tolist())):
            exact = mpmath.tanh(v)
            if exact == 0:
                out[i] = 0.0 if g == 0 else np.inf
                continue
            _, e = mpmath.frexp(exact)  # |exact| in [2^(e−1), 2^e): an ulp is 2^(e−53), not below 2^-1074
            ulp = mpmath.ldexp(1, max(int(e) - 53, -1074))
            out[i] = float(abs(mpmath.mpf(g) - exact) / ulp)
    return out


def test_tanh_is_within_2_ulp_of_mpmath_on_1e5_points(tanh):
    x = points()
    err = ulps_from_mpmath(x, tanh(x))
    worst = int(np.argmax(err))
    assert err[worst] <= 2.0, f"{err[worst]:.3f} ulp at x = {x[worst]!r}"
    assert err[worst] <= 1.6  # measured 1.52 ulp, at |x| = 0.2198 (1.57 at most on 2·10⁶ points in [0, 20])
    tiny = np.abs(x) < 1e-8
    assert np.all(err[tiny] <= 0.5)  # tanh x = x − x³/3 …: correctly rounded where x³ is below the last bit


def test_zeros_infinities_and_nan(tanh):
    got = tanh(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]))
    assert got[0] == 0 and not np.signbit(got[0])
    assert got[1] == 0 and np.signbit(got[1])
    assert got[2] == 1.0 and got[3] == -1.0
    assert np.isnan(got[4])
    assert got[5] == 5e-324 and got[6] == -5e-324


def test_tanh_is_odd_bounded_by_1_and_monotone_where_the_reduction_changes_n(tanh):
    near_steps = STEPS[:, None] + np.arange(-2000, 2001) * 2.0 ** -52
    x = np.concatenate([np.linspace(0, 25, 200_001), near_steps.reshape(-1)])
    x.sort()
    t = tanh(x)
    assert np.array_equal(tanh(-x), -t)
    assert np.all(np.abs(t) <= 1.0)  # so 1 − tanh², the derivative rows, is never negative
    assert np.all(np.diff(t) >= 0)
    assert np.all(1 - t * t >= 0)


def test_the_compiled_loop_uses_the_same_tanh_and_nan_is_reported_as_by_numpy(tanh):
    L = Ledger()
    x = L.input("x", 0)
    L.define("h", sp.tanh(x))
    L.define("dh", 1 - sp.tanh(x) ** 2)
    f = compile(L, ["h", "dh"], backend="numba")
    xs = points()
    out = f(x=xs)
    assert np.array_equal(out["h"].reshape(-1), tanh(xs))  # bit for bit: no fast-math, no fused multiply-add
    h = tanh(xs)
    assert np.array_equal(out["dh"].reshape(-1), 1 - h * h)
    for v in (0.3, 0.7, -4.0):  # one example, no batch axis: straight-line code, the same tanh
        assert float(f(x=v)["h"]) == tanh(np.array([v]))[0]
    for b in ("numba", "numpy"):
        with pytest.raises(EvaluationError, match="row h evaluates to nan at example \\[1\\]; check"):
            compile(L, ["h"], backend=b)(x=np.array([0.5, np.nan]))


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="reads x86-64 assembly")
def test_a_long_rnn_gradient_loop_is_vectorised():
    # T = 40: 41 batched inputs and 4 outputs make 164 pointer-overlap checks, over LLVM's default cap of 128;
    # with the C library's tanh, a running sum in the loop, or the cap, the loop stayed scalar (mulsd only)
    T = 40
    L, g = scalar_rnn(T)
    names = ["L"] + [g.name(p) for p in ("w_x", "w_h", "w_o")]
    batched = [f"x_{t}" for t in range(T)] + ["y"]
    f = compile(L, names, backend="numba", batch_reduce="sum", inputs=["w_x", "w_h", "w_o", *batched])
    f({n: np.full(3, 0.1) for n in batched})
    fn = f._function(frozenset(batched))[0]
    asm = "\n".join(fn.inspect_asm().values())
    assert "mulpd" in asm  # packed: 2, 4 or 8 examples per instruction (mulpd, vmulpd)
