"""backend="numba": one compiled loop over the batch, in parity with the NumPy and torch backends.

Skipped only where numba is not installed and ``CI`` is unset (CI installs the test extra, which has numba).
"""

import os

import numpy as np
import pytest
import sympy as sp

from small_ledgers import bundled_names, each_ledger, elman_ledger, numeric_ledgers, scalar_rnn
from symseq import ConventionError, Ledger, compile, evaluate, ops

if not os.environ.get("CI"):
    pytest.importorskip("numba")


def scalar_ledgers(derivation) -> list:
    """The numeric ledgers of ``derivation`` whose items are all scalars."""
    return [L for L in numeric_ledgers(derivation) if all(it.shape == () for it in L.items.values())]


def close(a, b, tol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    f = np.isfinite(b)
    assert np.all(np.abs(a[f] - b[f]) <= tol * np.maximum(1, np.abs(b[f]))), float(np.max(np.abs(a[f] - b[f])))


def test_the_bundled_scalar_ledgers_are_there(built):
    # the Week 6 RNN's trajectories and three-step gradients, the GRU coordinate
    assert sum(len(scalar_ledgers(d)) for d in built.values()) >= 7


@pytest.mark.parametrize("ledgers", ["first", pytest.param("every", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_scalar_ledger_agrees_with_numpy_and_torch(name, ledgers, built):
    """Each scalar ledger of a bundled derivation, compiled by numba, gives the NumPy and torch backends' numbers and
    the mpmath values (the first ledger of each derivation in the default run, every one with -m slow: each is a
    compilation of its own)."""
    torch = pytest.importorskip("torch")  # noqa: F841

    def check(L):
        names = [it.name for it in L.rows]
        ours = compile(L, names, backend="numba")()
        ref = evaluate(L, "mpmath", dps=40)
        for other in ("numpy", "torch"):
            theirs = compile(L, names, backend=other)()
            for n in names:
                t = theirs[n].detach().numpy() if hasattr(theirs[n], "detach") else theirs[n]
                close(ours[n], t, 1e-13)
        for n in names:
            close(ours[n], float(ref[n]), 1e-13)

    each_ledger(scalar_ledgers(built[name])[:None if ledgers == "every" else 1], check)


@pytest.mark.parametrize("reduce", [None, "sum", "mean"])
def test_a_batched_rnn_gradient_is_the_numpy_backends_and_torch_autograds(reduce):
    torch = pytest.importorskip("torch")
    T, B = 8, 37
    L, g = scalar_rnn(T)
    params = ("w_x", "w_h", "w_o")
    names = ["L"] + [g.name(p) for p in params]
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(T, B)), rng.normal(size=B)
    vals = {f"x_{t}": X[t] for t in range(T)} | {"y": Y, "w_h": 0.7}
    ours = compile(L, names, backend="numba", batch_reduce=reduce)(vals)
    numpy = compile(L, names, backend="numpy", batch_reduce=reduce)(vals)
    for n in names:
        close(ours[n], numpy[n], 1e-13)
    w = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.5, 0.7, 1.1)]
    h = torch.zeros(B, dtype=torch.float64)
    for t in range(T):
        h = torch.tanh(w[0] * torch.from_numpy(X[t]) + w[1] * h)
    loss = 0.5 * (w[2] * h - torch.from_numpy(Y)) ** 2
    close(ours["L"], loss.detach().numpy(), 1e-13)
    total = {None: loss.sum(), "sum": loss.sum(), "mean": loss.mean()}[reduce]
    auto = torch.autograd.grad(total, w)
    for p, a in zip(params, auto):
        got = ours[g.name(p)] if reduce else np.sum(ours[g.name(p)])
        close(got, a.item(), 1e-12)


def test_what_it_does_not_compile_is_named():
    L = Ledger()
    X = L.input("X", [[1, 2]])
    L.define("H", ops.Map(sp.tanh, X))  # a matrix row: one function on folded rows (test_compiled_numba_matrix)
    np.testing.assert_allclose(compile(L, ["H"], backend="numba")()["H"], np.tanh([[1.0, 2.0]]), rtol=5e-16)
    from symseq import functions as F

    M = Ledger()
    a, b = M.input("a", 1), M.input("b", 2)
    M.define("p", F.softmax(0, a, b))
    with pytest.raises(ConventionError, match="does not compile softmax"):
        compile(M, ["p"], backend="numba")
    with pytest.raises(ConventionError, match="compiles a whole program: use symseq.compile"):
        evaluate(M, "numba")


def test_numba_source_takes_the_names_of_the_batched_inputs():
    from symseq import LedgerError

    L, _ = scalar_rnn(2)
    f = compile(L, ["L"], backend="numba")
    assert "for i in range(n):" in f.numba_source(["x_0", "y"]) and "[i]" in f.numba_source("x_0")
    assert "for i in range(n):" not in f.numba_source()  # no batch axis: straight-line code
    with pytest.raises(LedgerError, match=r"batched names the inputs given with batch axes, as a list of names "
                                          r"such as \['x_0', 'y'\]; got True"):
        f.numba_source(True)
    with pytest.raises(LedgerError, match="x_9 in batched: not an input of the compiled ledger, which reads w_x"):
        f.numba_source(["x_0", "x_9"])


def test_a_value_of_the_wrong_shape_is_named_with_this_backend():
    from symseq import ShapeError

    L, _, names = elman_ledger()
    with pytest.raises(ShapeError, match=r"the value given for W_x has shape 2×3 but W_x is 3×2 \(the numba "
                                         r"backend takes the leaf's shape after any leading batch axes\)"):
        compile(L, names, backend="numba")(W_x=np.zeros((2, 3)))


def test_an_undefined_value_names_the_row():
    from symseq import EvaluationError

    L = Ledger()
    x = L.input("x", 1)
    L.define("r", 1 / (x - 1))
    f = compile(L, ["r"], backend="numba")
    with pytest.raises(EvaluationError):
        f()
    assert float(f(x=3.0)["r"]) == 0.5
