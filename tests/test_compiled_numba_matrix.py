"""backend="numba" on ledgers with matrix rows: one compiled function on a batch of rows folded into one matrix
(:mod:`symseq.backends.numba_matrix`), against the NumPy backend and torch autograd through nn.RNN in float64.

Skipped only where numba is not installed and ``CI`` is unset (CI installs the test extra, which has numba and
SciPy, whose BLAS numba's matrix product calls).
"""

import os

import numpy as np
import pytest
import sympy as sp

from small_ledgers import benchmark_elman, bundled_numeric_ledgers, elman_ledger
from symseq import ConventionError, EvaluationError, Ledger, LedgerError, compile, ops
from symseq.backends import compiled

if not os.environ.get("CI"):
    pytest.importorskip("numba")
    pytest.importorskip("scipy")


def close(a, b, tol=1e-13):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    f = np.isfinite(b)
    assert np.all(np.abs(a[f] - b[f]) <= tol * np.maximum(1, np.abs(b[f]))), float(np.max(np.abs(a[f] - b[f])))


def _elman_values(rng, lead):
    params = {"W_x": rng.normal(size=(3, 2)), "W_h": rng.normal(size=(3, 3)), "b": rng.normal(size=(1, 3)),
              "W_o": rng.normal(size=(2, 3))}
    return params | {n: rng.normal(size=lead + (1, 2)) for n in ("y", "x_0", "x_1", "x_2")}


@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
def test_an_elman_rnn_gives_the_numpy_backends_numbers_batched_or_not(lead):
    """Loss, error and every gradient (the weights' summed over the batch), for one example and for batches with
    one and two axes; the caller's arrays are never written."""
    L, _, names = elman_ledger()
    inputs = ["W_x", "W_h", "b", "W_o", "y", "x_0", "x_1", "x_2"]
    vals = _elman_values(np.random.default_rng(21), lead)
    copies = {n: v.copy() for n, v in vals.items()}
    ours = compile(L, names, backend="numba", inputs=inputs, batch_reduce="sum")
    ref = compile(L, names, backend="numpy", inputs=inputs, batch_reduce="sum")(vals)
    for _ in range(2):  # the first call compiles, the second runs what it compiled
        out = ours(vals)
        for n in names:
            close(out[n], ref[n])
    for n in vals:
        np.testing.assert_array_equal(vals[n], copies[n])
    assert "np.dot" in ours.numba_source(inputs[4:] if lead else ())


def test_an_initial_state_given_once_for_the_whole_batch_folds(monkeypatch):
    """h_{−1} a caller may pass (every leaf an input, the default), given once without batch axes: ∂L/∂W_h holds
    Σ_b g_0,bᵀ h_{−1}, a product with a row shared by every example. Both folded programs repeat that row for
    each example, as the unfolded program broadcasts it: the NumPy backend's folded numbers are bitwise those it
    computes unfolded (the first call), and the numba backend's agree with them."""
    L, _, names = elman_ledger()
    vals = _elman_values(np.random.default_rng(23), (6,)) | {"h_{-1}": np.array([[0.3, -0.2, 0.5]])}
    batched = [n for n in vals if n.startswith(("x_", "y"))]
    numpy = compile(L, names, backend="numpy", batch_reduce="sum")
    unfolded = numpy(vals)  # the first calls step through the instructions
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    numpy(vals)  # notes the shapes (stepping once more)
    assert numpy._folded[frozenset(batched)] is not None  # it folds
    folded = numpy(vals)
    for n in names:
        np.testing.assert_array_equal(folded[n], unfolded[n])
    ours = compile(L, names, backend="numba", batch_reduce="sum")
    for _ in range(2):
        out = ours(vals)
        for n in names:
            close(out[n], unfolded[n])
    assert "_repeat_row(" in ours.numba_source(batched)


def test_per_example_rows_fold_and_per_example_weight_gradients_are_refused_at_the_call():
    """Without batch_reduce, each example's loss and error fold into one matrix and come back with the batch's
    axes; each example's gradient of W_x is its own outer product g_tᵀ x_t, which the folded matrix cannot keep
    apart: the call says so and names the backend that computes it."""
    L, _, names = elman_ledger()
    inputs = ["W_x", "W_h", "b", "W_o", "y", "x_0", "x_1", "x_2"]
    vals = _elman_values(np.random.default_rng(22), (4,))
    out = compile(L, ["L", "e", "h_2"], backend="numba", inputs=inputs)(vals)
    ref = compile(L, ["L", "e", "h_2"], backend="numpy", inputs=inputs)(vals)
    for n in ("L", "e", "h_2"):
        close(out[n], ref[n])
    with pytest.raises(ConventionError, match="folded into one matrix; with x_0, x_1, x_2, y batched, the result of "
                                              "Transpose is a 3×1 matrix per example.*backend='numpy'"):
        compile(L, names, backend="numba", inputs=inputs)(vals)


@pytest.mark.slow  # the benchmark's sizes, compiled by numba
def test_the_benchmark_elman_rnn_agrees_with_nn_rnn():
    """The 16-step Elman RNN of benchmarks/speed.py (d = 64, batch 64): the gradients of W_x, W_h, b and W_o agree
    with torch autograd through nn.RNN in float64 to 1e-12."""
    pytest.importorskip("torch")
    f, _, _, err, _ = benchmark_elman("numba")
    inputs = [f"x_{t}" for t in range(16)] + ["y"]
    assert err <= 1e-12 and "np.dot" in f.numba_source(inputs)


def test_rows_columns_and_numbers_broadcast_and_every_sum_adds_as_numpy():
    """X ⊙ c + r + 2 with c a column and r a row, its tanh, and its sums over positions, features and all entries,
    with X a batch of rows or not."""
    L = Ledger("broadcasting and sums")
    x, r = L.input("x", shape=(1, 3)), L.input("r", shape=(1, 3))
    W, c = L.input("W", shape=(4, 3)), L.input("c", shape=(4, 1))
    Y = L.define("Y", ops.Map(sp.tanh, W * c + r + 2))
    L.define("s0", ops.Sum(Y, 0))
    L.define("s1", ops.Sum(Y, 1))
    L.define("s", ops.Sum(Y, None))
    L.define("z", ops.Sum(ops.Map(sp.exp, x * r - x), None))
    rng = np.random.default_rng(23)
    base = {"r": rng.normal(size=(1, 3)), "W": rng.normal(size=(4, 3)), "c": rng.normal(size=(4, 1))}
    names = ["Y", "s0", "s1", "s", "z"]
    for x_value in (rng.normal(size=(1, 3)), rng.normal(size=(6, 1, 3))):
        vals = base | {"x": x_value}
        ours = compile(L, names, backend="numba")(vals)
        ref = compile(L, names, backend="numpy")(vals)
        for n in names:
            close(ours[n], ref[n])


def test_what_it_does_not_compile_is_named():
    """A softmax or a mean is refused when compiling; a batch of matrices is refused at the call; each names
    backend='numpy'."""
    L = Ledger()
    S = L.input("S", [[1, 2], [3, 4]])
    L.define("A", ops.SoftmaxRows(S))
    with pytest.raises(ConventionError, match="does not compile SoftmaxRows.*backend='numpy'"):
        compile(L, ["A"], backend="numba")
    M = Ledger()
    X = M.input("X", [[1, 2], [3, 4]])
    M.define("m", ops.Sum(X, 1, mean=True))
    with pytest.raises(ConventionError, match="does not compile a mean.*backend='numpy'"):
        compile(M, ["m"], backend="numba")
    N = Ledger()
    X = N.input("X", shape=(2, 2))
    N.define("Y", ops.Map(sp.tanh, X))
    f = compile(N, ["Y"], backend="numba")
    with pytest.raises(ConventionError, match="with X batched, X is a 2×2 matrix per example"):
        f(X=np.zeros((3, 2, 2)))


def test_the_source_is_written_on_the_first_call_with_those_inputs_batched():
    L, _, names = elman_ledger()
    inputs = ["W_x", "W_h", "b", "W_o", "y", "x_0", "x_1", "x_2"]
    f = compile(L, names, backend="numba", inputs=inputs, batch_reduce="sum")
    with pytest.raises(LedgerError, match="no call with x_0, x_1, x_2, y batched has been made"):
        f.numba_source(["x_0", "x_1", "x_2", "y"])
    f(_elman_values(np.random.default_rng(24), (3,)))
    src = f.numba_source(["x_0", "x_1", "x_2", "y"])
    assert "def _loop0(N" in src and "np.dot(" in src and "for i in range(N):" in src


def test_an_undefined_value_names_the_row():
    L = Ledger()
    X, one = L.input("X", [[1, 2]]), L.input("one", [[1, 1]])
    L.define("R", ops.Div(one, X - one))
    f = compile(L, ["R"], backend="numba", inputs=["X"])
    with pytest.raises(EvaluationError, match="R"):
        f()
    close(f(X=np.array([[3.0, 5.0]]))["R"], [[0.5, 0.25]])


def test_every_bundled_matrix_ledger_it_compiles_gives_the_numpy_backends_numbers():
    """The bundled ledgers with matrix rows: those the numba backend compiles (no softmax, no gathered rows, no
    mean) give the NumPy backend's numbers at their own values; the others are refused naming backend='numpy'."""
    n_compiled = 0
    for L in bundled_numeric_ledgers():
        if all(it.shape == () for it in L.items.values()):
            continue
        names = [it.name for it in L.rows]
        try:
            f = compile(L, names, backend="numba")
        except ConventionError as e:
            assert "backend='numpy'" in str(e)
            continue
        out, ref = f(), compile(L, names, backend="numpy")()
        for n in names:
            close(out[n], ref[n], 1e-12)
        n_compiled += 1
    assert n_compiled >= 1


def test_a_gradient_asked_for_alone_computes_only_what_it_needs():
    """∂L/∂W_h alone of an RNN whose loss is ½‖h_2‖²: the adjoint of z_0 (and its product with W_h) is needed by
    no output, is not compiled, and the program gives the NumPy backend's numbers."""
    L, g, _ = elman_ledger(head=False)
    rng = np.random.default_rng(25)
    vals = {"W_x": rng.normal(size=(3, 2)), "W_h": rng.normal(size=(3, 3)), "b": rng.normal(size=(1, 3))} \
        | {f"x_{t}": rng.normal(size=(8, 1, 2)) for t in range(3)}
    inputs = ["W_x", "W_h", "b", "x_0", "x_1", "x_2"]
    names = ["L", g.name("W_h")]
    f = compile(L, names, backend="numba", inputs=inputs, batch_reduce="sum")
    out, ref = f(vals), compile(L, names, backend="numpy", inputs=inputs, batch_reduce="sum")(vals)
    for n in names:
        close(out[n], ref[n])
    products = [label for _, _, _, label in f.program.instructions if label in ("MatMul", "batch_tn")]
    # x_t W_xᵀ (3), h_{t−1} W_hᵀ (t = 1, 2), g_2 W_h (for g_1), Σ g_2ᵀ h_1 and Σ g_1ᵀ h_0; not g_1 W_h (for g_0)
    assert len(products) == 3 + 2 + 1 + 2

