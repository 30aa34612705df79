"""Backends agree with the exact values; options fail clearly."""

import numpy as np
import pytest
import sympy as sp

from symseq import BackendUnavailable, ConventionError, LedgerError, evaluate

from small_ledgers import two_token_ledger


def test_parity_exact_mpmath_numpy_on_the_two_token_example():
    L, r = two_token_ledger()
    g = L.backward("loss")
    exact = L.value(g.name("H"))
    mp = evaluate(L, "mpmath", dps=40)
    nump = evaluate(L, "numpy")
    for i in range(2):
        for j in range(2):
            e = sp.N(exact[i, j], 40)
            assert abs(sp.Float(str(mp[g.name("H")][i, j]), 40) - e) < sp.Float("1e-35")
            assert nump[g.name("H")][i, j] == pytest.approx(float(e), rel=1e-13, abs=1e-15)
    assert float(nump["loss"]) == pytest.approx(0.232674446028972, rel=1e-14)


def test_torch_backend_parity_and_cuda_message():
    torch = pytest.importorskip("torch")
    L, r = two_token_ledger()
    v = evaluate(L, "torch")
    assert float(v["loss"]) == pytest.approx(0.232674446028972, rel=1e-14)
    assert v["P"].dtype == torch.float64
    if not torch.cuda.is_available():
        with pytest.raises(BackendUnavailable, match="no CUDA device.*use device='cpu'"):
            evaluate(L, "torch", device="cuda")


def test_unknown_backend_lists_valid_ones():
    L, r = two_token_ledger()
    with pytest.raises(ConventionError, match="valid backends are exact, mpmath, numpy, torch"):
        evaluate(L, "jax")


def test_missing_values_are_named():
    from symseq import Ledger

    L = Ledger()
    a = L.input("a")
    L.define("b", a + 1)
    with pytest.raises(LedgerError, match="no value for a"):
        evaluate(L, "numpy")
    assert float(evaluate(L, "numpy", values={"a": 2.5})["b"]) == 3.5


def test_mpmath_reads_rationals_exactly():
    from symseq import Ledger

    L = Ledger()
    a = L.input("a", "0.1")
    L.define("b", a * 3)
    import mpmath

    v = evaluate(L, "mpmath", dps=60)["b"]
    assert mpmath.nstr(v, 58, strip_zeros=False) == "0." + "3" + "0" * 57


def test_numpy_batch_axis_broadcasts():
    L, r = two_token_ledger()
    batch = np.stack([np.eye(2), 2 * np.eye(2)])
    v = evaluate(L, "numpy", values={"H": batch})
    assert v["loss"].shape == (2,)
    single = evaluate(L, "numpy", values={"H": 2 * np.eye(2)})
    assert v["loss"][1] == pytest.approx(float(single["loss"]), rel=1e-15)


# --- values given at evaluation: floats on mpmath, shapes everywhere (issue 12) ----------------------------------


def _three_x():
    from symseq import Ledger

    L = Ledger()
    x = L.input("x", "0.1")
    L.define("y", 3 * x)
    return L


def test_mpmath_takes_a_float_at_its_binary_value_and_warns():
    """The float 0.1 is 0.1000000000000000055511…: mpmath must not use it quietly where 1/10 was meant."""
    import mpmath

    from symseq import compile, exact
    from symseq.errors import PrecisionWarning

    L = _three_x()
    with pytest.warns(PrecisionWarning, match=r"floats given for x at their exact binary values.*symseq.exact\('0.1'\)"):
        y = evaluate(L, "mpmath", dps=40, values={"x": 0.1})["y"]
    with mpmath.workdps(60):  # the documented rule: the binary value of 0.1, times 3 (not 0.3)
        assert mpmath.nstr(y, 38) == mpmath.nstr(3 * mpmath.mpf(0.1), 38) == "0.30000000000000001665334536937734810635"
    with pytest.warns(PrecisionWarning, match="floats given for x"):
        compile(L, ["y"], backend="mpmath", dps=40)(x=np.float64(0.1))
    with pytest.warns(PrecisionWarning, match="floats given for X"):
        from symseq import Ledger

        L2 = Ledger()
        L2.define("Y", L2.input("X", [[1, 2]]) * 2)
        evaluate(L2, "mpmath", values={"X": np.array([[0.5, 0.1]])})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exact decimals and mpf values are not floats: no warning
        for v in (exact("0.1"), "0.1", sp.Rational(1, 10)):
            assert mpmath.nstr(evaluate(L, "mpmath", dps=60, values={"x": v})["y"], 55) == "0.3"
        evaluate(L, "mpmath", dps=60, values={"x": mpmath.mpf("0.1")})  # an mpf is a binary value by choice


@pytest.mark.parametrize("backend", ["exact", "mpmath", "numpy", "torch"])
def test_a_value_of_the_wrong_shape_names_the_leaf_and_both_shapes(backend):
    from symseq import Ledger, ShapeError, compile

    if backend == "torch":
        pytest.importorskip("torch")
    L = Ledger()
    X = L.input("X", [[1, 2]])
    L.define("Y", X * 2)
    with pytest.raises(ShapeError, match=r"value given for X has shape 1×3 but X is 1×2"):
        evaluate(L, backend, values={"X": [[1, 2, 3]]})
    if backend != "exact":
        with pytest.raises(ShapeError, match=r"value given for X has shape 2 \(one axis\) but X is 1×2"):
            compile(L, ["Y"], backend=backend)(X=[1, 2])
    s = Ledger()
    s.define("b", s.input("a", 1) + 1)
    if backend in ("exact", "mpmath"):  # the numeric backends read [[2]] as a batch of scalars
        with pytest.raises(ShapeError, match=r"value given for a has shape 1×1 but a is a scalar"):
            evaluate(s, backend, values={"a": [[2]]})


def test_numeric_backends_keep_leading_batch_axes():
    from symseq import Ledger

    L = Ledger()
    X = L.input("X", [[1, 2]])
    L.define("Y", X * 2)
    out = evaluate(L, "numpy", values={"X": np.ones((4, 1, 2))})["Y"]
    assert out.shape == (4, 1, 2)


@pytest.mark.parametrize("package, importer, extra, alone", [
    ("torch", "symseq.backends.torch_backend:import_torch", "torch",
     r"or torch alone, its CPU build: pip install torch --index-url https://download.pytorch.org/whl/cpu"),
    ("numba", "symseq.backends.numba_backend:import_numba", "numba", "or pip install numba"),
])
def test_a_missing_optional_package_names_its_extra(monkeypatch, package, importer, extra, alone):
    """torch and numba (and matplotlib, tests/test_figures.py) are imported by one guard that names the extra; for
    torch alone, the CPU build (a bare ``pip install torch`` takes the CUDA build on Linux, several GB)."""
    import importlib
    import sys

    from symseq.errors import BackendUnavailable

    module, fn = importer.split(":")
    load = getattr(importlib.import_module(module), fn)
    monkeypatch.setitem(sys.modules, package, None)
    with pytest.raises(BackendUnavailable, match=rf"needs .*not installed: pip install 'symseq\[{extra}\]' "
                                                 rf"\({alone}\); "):
        load()
