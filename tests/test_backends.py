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
