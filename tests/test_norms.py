"""LayerNorm (symseq.blocks.norms): population variance, ε inside the root, constant rows (Week 06 handout, 004)."""

import numpy as np
import pytest
import sympy as sp

from symseq import ConventionError, EvaluationError, Ledger, blocks, compile, evaluate, exact
from symseq.errors import PrecisionWarning


def test_layer_norm_population_variance_eps_inside_the_root():
    L = Ledger()
    X = L.input("X", [[1, 3], [2, 6]])
    n = blocks.layer_norm(L, X, eps="0.5", name="LN")
    assert L.value(n.var.name) == sp.Matrix([[1], [4]])  # biased variance
    assert L.value(n.out.name)[0, 1] == 1 / sp.sqrt(sp.Rational(3, 2))


def test_layer_norm_constant_row_with_zero_eps_names_the_row():
    L = Ledger()
    X = L.input("X", [[1, 3], [2, 2]])
    n = blocks.layer_norm(L, X, eps=0, name="LN")
    with pytest.raises(EvaluationError, match=r"row LN evaluates to .* at entry \[1, 0\].*constant.*ε > 0"):
        L.value(n.out.name)
    with pytest.raises(EvaluationError, match="constant"):
        evaluate(L, "numpy")


def test_layer_norm_constant_row_with_zero_eps_on_mpmath_names_the_row():
    L = Ledger()
    X = L.input("X", [[1, 3], [2, 2]])
    blocks.layer_norm(L, X, eps=0, name="LN")
    with pytest.raises(EvaluationError, match=r"row LN evaluates to nan at entry \[1, 0\].*constant.*ε > 0"):
        evaluate(L, "mpmath")


# --- a constant row with ε = 0 is an error on every backend, never ±1 (issue 12) --------------------------------

BACKENDS = ["exact", "mpmath", "numpy", "torch"]


def _needs(backend):
    if backend == "torch":
        pytest.importorskip("torch")


def _ledger(rows, eps=0, **kw):
    L = Ledger()
    X = L.input("X", rows)
    return L, blocks.layer_norm(L, X, eps=eps, name="LN", **kw)


@pytest.mark.parametrize("value", ["0.1", "0.7"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_row_of_decimals_with_zero_eps_is_refused_on_every_backend(value, backend):
    """0.1 + 0.1 + 0.1 ≠ 0.3 in float64 (and in mpmath at 50 digits): the mean must still be the row's value."""
    _needs(backend)
    L, n = _ledger([[1, 2, 4], [exact(value)] * 3])
    with pytest.raises(EvaluationError, match=r"row LN .*\[1, 0\].*variance 0.*ε = 0.*ε > 0"):
        evaluate(L, backend)


@pytest.mark.parametrize("backend", ["mpmath", "numpy", "torch"])
def test_constant_row_with_zero_eps_is_refused_by_compiled_programs(backend):
    _needs(backend)
    L, n = _ledger([[1, 2, 4], [exact("0.1")] * 3])
    with pytest.raises(EvaluationError, match=r"row LN .*\[1, 0\].*variance 0"):
        compile(L, ["LN"], backend=backend)()


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_row_with_positive_eps_normalises_to_exact_zeros(backend):
    """(h − μ) is exactly 0 on a constant row in every backend, so LN is the zero row (γ·0 + β = β)."""
    _needs(backend)
    L, n = _ledger([[exact("0.1")] * 3, [exact("0.7")] * 3], eps="1e-5")
    out = np.array(np.asarray(evaluate(L, backend)["LN"], dtype=object).tolist(), dtype=float)
    assert np.array_equal(out, np.zeros((2, 3)))


@pytest.mark.parametrize("eps", ["-1e-5", -1, sp.I, sp.oo])
def test_negative_or_non_real_eps_is_refused(eps):
    L = Ledger()
    X = L.input("X", [[0, 0, exact("1e-3")]])
    with pytest.raises(ConventionError, match=r"ε must be a finite number ≥ 0.*got"):
        blocks.layer_norm(L, X, eps=eps)
    with pytest.raises(ConventionError, match=r"ε must be a finite number ≥ 0"):
        blocks.rms_norm(L, X, eps=eps)


def test_symbolic_eps_is_still_accepted():
    L = Ledger()
    X = L.input("X", [[1, 3]])
    e = L.parameter("epsilon", "1e-5")
    n = blocks.layer_norm(L, X, eps=e)
    assert L.value(n.out.name)[0, 1] == 1 / sp.sqrt(1 + sp.Rational(1, 10**5))


def test_row_constant_only_after_float64_rounding_says_so():
    """1 + 10⁻²⁰ rounds to 1 in float64: the float backends cannot normalise the row and say why; the exact and
    mpmath backends can, and give (−1/√2, √2, −1/√2)."""
    L, n = _ledger([[1, 1 + sp.Rational(1, 10**20), 1]])
    want = [-1 / sp.sqrt(2), sp.sqrt(2), -1 / sp.sqrt(2)]
    assert list(L.value("LN")) == want
    mp = evaluate(L, "mpmath", dps=60)["LN"]  # 20 of the 60 digits go to the spread of 10⁻²⁰
    assert all(abs(sp.Float(str(mp[0, j]), 60) - sp.N(w, 60)) < 1e-35 for j, w in enumerate(want))
    for backend in ("numpy", "torch"):
        if backend == "torch" and not _has_torch():
            continue
        with pytest.raises(EvaluationError) as err, pytest.warns(PrecisionWarning, match="X.0, 0. = 1 and X.0, 1."):
            evaluate(L, backend)  # warned first: the backend holds 1 and 1 + 10⁻²⁰ as one number
        text = str(err.value)
        assert "after rounding to float64" in text and "the exact or mpmath backend decides" in text
        assert "is constant (variance 0)" not in text  # the exact kernel's wording: not claimed of the row itself


def test_rms_norm_zero_row_on_float_backends_names_the_precision():
    L = Ledger()
    X = L.input("X", [[1, 2], [0, 0]])
    blocks.rms_norm(L, X, name="R")
    with pytest.raises(EvaluationError, match=r"row R .*\[1, 0\].*all zeros .*after rounding to float64 \(mean square 0"):
        evaluate(L, "numpy")
    with pytest.raises(EvaluationError, match=r"row R .*all zeros"):
        evaluate(L, "exact")


def _has_torch():
    import importlib.util

    return importlib.util.find_spec("torch") is not None


# --- values and gradients against torch float64 (ε = 1e-5) and mpmath (ε = 0), near-constant rows included --------

import functools  # noqa: E402

import mpmath  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

T, D = 3, 4


@functools.lru_cache(maxsize=None)
def _ln_program(backend, eps):
    """LN(X) = γ ⊙ (X − μ)/√(v + ε) + β and ℓ = Σ G ⊙ LN(X), with the gradients of ℓ, compiled once."""
    L = Ledger(f"LayerNorm, ε = {eps}")
    X = L.input("X", shape=(T, D))
    gamma, beta = L.parameter("gamma", shape=(1, D)), L.parameter("beta", shape=(1, D))
    G = L.input("G", shape=(T, D))
    n = blocks.layer_norm(L, X, gamma, beta, eps=eps, name="LN")
    from symseq import ops

    L.define("l", ops.Sum(G * n.out, None))
    g = L.backward("l", wrt=["X", "gamma", "beta"])
    names = ["LN", g.name("X"), g.name("gamma"), g.name("beta")]
    return L, names, compile(L, names, backend=backend)


def _rows(centres, spreads, noise):
    """Rows c_t + δ_t·noise_t: δ = 0 gives a constant row, δ ≪ |c| a nearly constant one."""
    return np.array([[c + s * e for e in noise[t * D:(t + 1) * D]] for t, (c, s) in enumerate(zip(centres, spreads))])


centres = st.lists(st.floats(-100, 100, allow_nan=False), min_size=T, max_size=T)
unit = st.lists(st.floats(-1, 1, allow_nan=False), min_size=T * D, max_size=T * D)
small = st.lists(st.floats(-2, 2, allow_nan=False), min_size=D, max_size=D)
apart = st.lists(st.floats(-1, 1, allow_nan=False).filter(lambda v: v == 0 or abs(v) >= 1e-2), min_size=T * D,
                 max_size=T * D)  # a row's spread is 0 or at least 10⁻⁶ of its centre


@settings(max_examples=200, deadline=None)
@given(centres, st.lists(st.sampled_from([0.0, 1e-12, 1e-6, 1.0, 30.0]), min_size=T, max_size=T), unit, small, small,
       st.lists(st.floats(-3, 3, allow_nan=False), min_size=T * D, max_size=T * D))
def test_values_and_gradients_match_torch_layer_norm(c, spread, noise, gamma, beta, weights):
    torch = pytest.importorskip("torch")
    X = _rows(c, spread, noise)
    G = np.array(weights).reshape(T, D)
    tx = torch.tensor(X, requires_grad=True)
    tg = torch.tensor([gamma], dtype=torch.float64, requires_grad=True)
    tb = torch.tensor([beta], dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.layer_norm(tx, (D,), tg[0], tb[0], eps=1e-5)
    ref = [y.detach().numpy(), *(a.numpy() for a in torch.autograd.grad((y * torch.tensor(G)).sum(), [tx, tg, tb]))]
    for backend in ("numpy", "torch"):
        L, names, f = _ln_program(backend, "1e-5")
        out = f(X=X, G=G, gamma=[gamma], beta=[beta])
        for name, r in zip(names, ref):
            got = out[name].detach().numpy() if hasattr(out[name], "detach") else out[name]
            np.testing.assert_allclose(got, r, rtol=1e-9, atol=1e-8 * max(1, np.abs(r).max()), err_msg=name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's 0/0 in a refused row, before the row is named
@settings(max_examples=200, deadline=None)
@given(centres, st.lists(st.sampled_from([0.0, 1e-4, 1.0, 30.0]), min_size=T, max_size=T), apart, small, small)
def test_zero_eps_matches_mpmath_or_refuses_a_row_constant_in_float64(c, spread, noise, gamma, beta):
    """ε = 0: a row whose float64 entries are all equal is refused on every float backend; otherwise the float64
    values and gradients agree with mpmath at 30 digits on the same binary inputs. (Rows spread over a few ulps
    are left out: there LayerNorm with ε = 0 amplifies one rounding of the mean to O(1), in torch as here.)"""
    from symseq.verify.autograd import exact_binary

    X = _rows(c, [s * max(1, abs(ci)) for s, ci in zip(spread, c)], noise)
    G = np.ones((T, D))
    values = dict(X=X, G=G, gamma=np.array([gamma]), beta=np.array([beta]))
    L, names, f = _ln_program("numpy", 0)
    constant = [t for t in range(T) if np.all(X[t] == X[t, 0])]
    if constant:
        with pytest.raises(EvaluationError, match=rf"row N_{{LN}} .*\[{constant[0]}, 0\].*constant after rounding"):
            f(**values)
        return
    out = f(**values)
    ref = evaluate(L, "mpmath", dps=30, values={k: exact_binary(v) for k, v in values.items()}, targets=names)
    for name in names:
        r = np.array(np.asarray(ref[name], dtype=object).tolist(), dtype=float)
        np.testing.assert_allclose(out[name], r, rtol=1e-8, atol=1e-8 * max(1, np.abs(r).max()), err_msg=name)


# --- ops.mean / ops.var / ops.std: torch's reductions, with the correction always stated -------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=T * D, max_size=T * D), st.sampled_from([0, 1, 2]),
       st.sampled_from([0, 1]))
def test_var_and_std_match_torch_in_float64(cells, correction, axis):
    torch = pytest.importorskip("torch")
    from symseq import ops

    X = np.array(cells).reshape(T, D)
    if correction >= X.shape[axis]:
        return
    L = Ledger()
    Xn = L.input("X", shape=(T, D))
    L.define("m", ops.mean(Xn, axis))
    L.define("v", ops.var(Xn, axis, correction=correction))
    L.define("s", ops.std(Xn, axis, correction=correction))
    got = evaluate(L, "numpy", values={"X": X}, targets=["m", "v", "s"])
    ref = torch.tensor(X, dtype=torch.float64)
    keep = dict(dim=axis, keepdim=True)
    np.testing.assert_allclose(got["m"], ref.mean(**keep).numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got["v"], ref.var(correction=correction, **keep).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got["s"], ref.std(correction=correction, **keep).numpy(), rtol=1e-10, atol=1e-12)


def test_std_exact_population_and_sample_of_a_handout_row():
    """The "Hello" row of layernorm-hello-prompt.md: population std √0.1325, sample std √(0.53/3)."""
    from symseq import ops

    L = Ledger()
    X = L.input("X", [["0.1", "0.3", "-0.2", "0.8"]])
    assert L.value(L.define("pop", ops.std(X, 1, correction=0)).name)[0, 0] == sp.sqrt(sp.Rational(53, 400))
    assert L.value(L.define("sample", ops.std(X, 1, correction=1)).name)[0, 0] == sp.sqrt(sp.Rational(53, 300))


@pytest.mark.parametrize("correction", [-1, 4, 1.0, None])
def test_var_refuses_a_correction_without_degrees_of_freedom_or_not_an_integer(correction):
    from symseq import ShapeError, ops

    X = Ledger().input("X", [[1, 2, 3, 4]])
    with pytest.raises(ShapeError, match=r"0 ≤ c < 4 \(0: population, 1: sample\); got"):
        ops.var(X, 1, correction=correction)
