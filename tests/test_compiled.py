"""Compiled ledgers: parity with the interpreter for every bundled ledger, batching, options and errors."""

import numpy as np
import pytest
import sympy as sp

from symseq import BackendUnavailable, ConventionError, Ledger, LedgerError, ShapeError, compile, evaluate, ops
import small_ledgers
from small_ledgers import bundled_names, each_ledger, numeric_ledgers, two_token_ledger
from symseq.verify.autograd import exact_binary




def as_float_array(v):
    if hasattr(v, "detach"):
        v = v.detach().numpy()
    return np.array(np.asarray(v, dtype=object).tolist(), dtype=float)


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_ledger_evaluates_on_every_backend(name, built):
    def check(L):
        names = [it.name for it in L.rows]
        ref = evaluate(L, "mpmath", dps=80)
        for backend, tol in (("numpy", 1e-12), ("torch", 1e-12), ("mpmath", 1e-25)):
            if backend == "torch":
                pytest.importorskip("torch")
            out = compile(L, names, backend=backend, dps=30)()
            for n in names:
                r, o = as_float_array(ref[n]), as_float_array(out[n])
                finite = np.isfinite(r)
                assert np.array_equal(np.isfinite(o), finite) and np.all(o[~finite] == r[~finite]), (backend, n)
                assert np.all(np.abs(o[finite] - r[finite]) <= tol * np.maximum(1, np.abs(r[finite]))), (backend, n)

    each_ledger(numeric_ledgers(built[name]), check)


def test_mpmath_to_the_requested_digits():
    L, r = two_token_ledger()
    g = L.backward("loss")
    ref = evaluate(L, "mpmath", dps=120)[g.name("W_Q")]
    out = compile(L, [g.name("W_Q")], backend="mpmath", dps=60)()[g.name("W_Q")]
    assert max(abs(out[i, j] - ref[i, j]) for i in range(2) for j in range(2)) < sp.Float("1e-57")


def scalar_rnn(T):
    return small_ledgers.scalar_rnn(T, w_h="1.2", w_o="0.7", x=0)


def test_program_size_is_exactly_linear_in_T():
    sizes = [len(compile(scalar_rnn(T)[0], ["L"] + [scalar_rnn(T)[1].name("w_h")])) for T in (10, 20, 30)]
    assert sizes[2] - sizes[1] == sizes[1] - sizes[0] > 0


def test_batch_reduce_sums_per_example_gradients(rng):
    L, g = scalar_rnn(5)
    names = [g.name(p) for p in ("w_x", "w_h", "w_o")]
    X = rng.normal(size=(5, 7))
    vals = {f"x_{t}": X[t] for t in range(5)}
    per = compile(L, names)(vals)
    summed = compile(L, names, batch_reduce="sum")(vals)
    mean = compile(L, names, batch_reduce="mean")(vals)
    for n in names:
        assert per[n].shape == (7,)
        assert float(summed[n]) == pytest.approx(per[n].sum(), rel=1e-13)
        assert float(mean[n]) == pytest.approx(per[n].mean(), rel=1e-13)


def test_compiled_torch_is_differentiable_and_matches_the_adjoints(rng):
    torch = pytest.importorskip("torch")
    L, r = two_token_ledger()
    g = L.backward("loss")
    f = compile(L, ["loss"], backend="torch")
    leaves = ["H", "W_Q", "W_K", "W_V", "W_out"]
    ts = {n: torch.tensor(rng.normal(size=(2, 2)), requires_grad=True) for n in leaves}
    loss = f({n: ts[n] for n in leaves})["loss"]
    auto = torch.autograd.grad(loss, [ts[n] for n in leaves])
    ours = compile(L, [g.name(n) for n in leaves], backend="mpmath", dps=30)(
        {n: exact_binary(ts[n].detach().numpy()) for n in leaves})  # the same binary values, as mpf
    for n, a in zip(leaves, auto):
        np.testing.assert_allclose(a.numpy(), as_float_array(ours[g.name(n)]), rtol=0, atol=1e-13)


@pytest.mark.parametrize("bad", ["abc", None, {"a": 1}, ["0.5", "x"]])
def test_a_value_that_is_not_a_number_is_named_with_the_leaf(bad):
    L, _ = scalar_rnn(3)
    with pytest.raises(ConventionError, match=r"the value given for x_0 is not a number or an array of numbers \(got "
                                              + type(bad).__name__):
        compile(L, ["L"])(x_0=bad)


def test_an_undefined_entry_of_a_batch_names_the_example_and_the_entry():
    from symseq import EvaluationError, Ledger, ops

    L = Ledger()
    L.define("Y", ops.Map(sp.log, L.input("X", [[1, 2]])))
    X = np.ones((3, 1, 2))
    X[2, 0, 1] = -1.0
    with pytest.raises(EvaluationError, match=r"row Y evaluates to nan at example \[2\], entry \[0, 1\]"):
        compile(L, ["Y"])(X=X)
    M = Ledger()
    M.define("y", sp.log(M.input("x", 1)))  # a number per example: no entry to name
    with pytest.raises(EvaluationError, match=r"row y evaluates to nan at example \[1\]; check"):
        compile(M, ["y"])(x=np.array([1.0, -1.0]))


def test_errors_name_what_is_wrong():
    L, g = scalar_rnn(3)
    with pytest.raises(ConventionError,
                       match=r"valid backends are exact, mpmath, numpy, torch \(and numba for symseq.compile\)"):
        compile(L, ["L"], backend="cupy")
    f = compile(L, ["L"], inputs=["x_0", "x_1", "y", "w_h"])
    with pytest.raises(LedgerError, match="does not read; it reads"):
        f(x_9=1.0)
    with pytest.raises(ShapeError, match="x_0 has \\(3,\\), x_1 has \\(4,\\)"):
        f(x_0=np.zeros(3), x_1=np.zeros(4))
    with pytest.raises(ShapeError, match="w_h came with batch axes"):
        compile(L, [g.name("w_h")], batch_reduce="sum")(w_h=np.ones(3))
    M = Ledger()
    a = M.input("a")
    M.define("b", a + 1)
    with pytest.raises(LedgerError, match="no value for a"):
        compile(M, ["b"])()
    with pytest.raises(LedgerError, match="values given for aa, which the compiled ledger does not read"):
        compile(M, ["b"])(aa=1.0)  # a misspelt leaf is named before the leaf it leaves without a value


def test_cuda_without_a_device_says_so():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    L, g = scalar_rnn(2)
    with pytest.raises(BackendUnavailable, match="use device='cpu'"):
        compile(L, ["L"], backend="torch", device="cuda")


def test_reuses_rows_for_activation_derivatives():
    L = Ledger()
    X = L.input("X", [[1, 2]])
    H = L.define("H", ops.Map(sp.tanh, X))
    L.define("loss", ops.Sum(H * H, None))
    g = L.backward("loss")
    f = compile(L, [g.name("X")])
    labels = [lab for _, _, _, lab in f.program.instructions]
    assert labels.count("tanh") == 1  # 1 − tanh²(X) reads H
    np.testing.assert_allclose(f()[g.name("X")], 2 * np.tanh([[1, 2]]) * (1 - np.tanh([[1, 2]]) ** 2), rtol=1e-14)


def vector_rnn(T, D=3, H=2):
    L = Ledger()
    W_x, W_h = L.parameter("W_x", shape=(H, D)), L.parameter("W_h", shape=(H, H))
    h = L.input("h_{-1}", [[0] * H])
    for t in range(T):
        z = L.define(f"z_{t}", L.input(f"x_{t}", shape=(1, D)) @ W_x.T + h @ W_h.T)
        h = L.define(f"h_{t}", ops.Map(sp.tanh, z))
    L.define("L", ops.Sum(h * h, None) / 2)
    return L, L.backward("L")


def test_a_tree_used_in_every_step_is_computed_once():
    L, g = vector_rnn(4)
    f = compile(L, ["L", g.name("W_x"), g.name("W_h")], batch_reduce="sum")
    labels = [lab for _, _, _, lab in f.program.instructions]
    assert labels.count("Transpose") == 2  # W_xᵀ and W_hᵀ, not once per position


def test_leaves_left_at_their_exact_values_stay_exact_across_calls(rng):
    L, g = vector_rnn(3)
    f = compile(L, ["L", g.name("W_h")], batch_reduce="sum")  # h_{-1} is not passed: its exact zeros are used
    vals = {"W_x": rng.normal(size=(2, 3)), "W_h": rng.normal(size=(2, 2))} | {
        f"x_{t}": rng.normal(size=(5, 1, 3)) for t in range(3)}
    first = f(vals)
    out = f(vals)
    h = np.zeros((5, 1, 2))
    for t in range(3):
        h = np.tanh(vals[f"x_{t}"] @ vals["W_x"].T + h @ vals["W_h"].T)
    np.testing.assert_allclose(out["L"], (h * h).sum(axis=(1, 2)) / 2, rtol=1e-14)
    np.testing.assert_array_equal(first[g.name("W_h")], out[g.name("W_h")])


def test_device_names_are_checked():
    pytest.importorskip("torch")
    L, g = scalar_rnn(2)
    with pytest.raises(ConventionError, match="unknown torch device 'cudaa'"):
        compile(L, ["L"], backend="torch", device="cudaa")
