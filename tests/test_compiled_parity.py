"""The compiled NumPy program against the interpreter (``evaluate(L, "numpy")``, the same kernels one row at a time).

Every optimisation of the compiler (constant folding, subexpressions shared across rows, fused element-wise
chains, batch sums as dot products) must leave the numbers as the row-by-row evaluation gives them, to 1e-13
relative, on every bundled ledger the compiler accepts, with the leaves' own values and with a batch of
perturbed values (so that a leaf whose value is 0 or 1 is not folded away when the caller may pass it).
"""

import numpy as np
import pytest

from small_ledgers import benchmark_elman, bundled_names, each_ledger, elman_ledger, numeric_ledgers, scalar_rnn
from symseq import compile, evaluate
from symseq.errors import SymseqError


def close(a, b, tol=1e-13):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    fa, fb = np.isfinite(a), np.isfinite(b)
    assert np.array_equal(fa, fb) and np.array_equal(a[~fa], b[~fb])
    assert np.all(np.abs(a[fa] - b[fa]) <= tol * np.maximum(np.abs(b[fa]), 1e-300) + 1e-300), \
        float(np.max(np.abs(a[fa] - b[fa]) / np.maximum(np.abs(b[fa]), 1e-300)))


def all_names(L):
    return [it.name for it in L.rows]


@pytest.mark.parametrize("name", bundled_names())
def test_compiled_numpy_is_the_interpreter_on_every_bundled_ledger(name, built):
    def check(L):
        names = all_names(L)
        ref = evaluate(L, "numpy")
        out = compile(L, names, backend="numpy")()
        for n in names:
            close(out[n], ref[n])

    each_ledger(numeric_ledgers(built[name]), check)


@pytest.mark.parametrize("name", bundled_names())
def test_compiled_numpy_is_the_interpreter_on_a_batch_of_perturbed_leaves(name, built):
    def check(L):
        rng = np.random.default_rng(7)
        base = evaluate(L, "numpy", targets=[])
        values = {}
        for it in L.leaves:
            v = np.asarray(base[it.name], dtype=float) if it.name in base else np.asarray(
                evaluate(L, "numpy")[it.name], dtype=float)
            noise = 1 + 1e-3 * rng.standard_normal((3,) + v.shape)
            values[it.name] = v * noise + 1e-3 * rng.standard_normal((3,) + v.shape)  # exact zeros move too
        names = all_names(L)
        f = compile(L, names, backend="numpy")
        values = {n: v for n, v in values.items() if n in f.program.inputs}
        try:
            ref = evaluate(L, "numpy", values=values)
        except SymseqError:
            pytest.skip("the interpreter refuses these perturbed values")
        out = f(values)
        for n in names:
            close(out[n], ref[n], 1e-12)

    each_ledger(numeric_ledgers(built[name]), check)




@pytest.mark.parametrize("reduce", [None, "sum", "mean"])
def test_scalar_rnn_gradient_batched_is_the_interpreter(reduce):
    L, g = scalar_rnn(6)
    rng = np.random.default_rng(3)
    names = ["L"] + [g.name(p) for p in ("w_x", "w_h", "w_o", "h_{-1}")]
    vals = {f"x_{t}": rng.normal(size=5) for t in range(6)} | {"y": rng.normal(size=5), "h_{-1}": rng.normal(size=5)}
    ref = evaluate(L, "numpy", values=vals)
    out = compile(L, names, backend="numpy", batch_reduce=reduce)(vals)
    for n in names:
        r = np.asarray(ref[n])
        if reduce and n != "L" and n != g.name("h_{-1}"):
            r = r.sum() if reduce == "sum" else r.mean()
        close(out[n], r)


def test_fewer_passes_shared_subexpression_folded_zero_and_dot_products():
    L, g = scalar_rnn(4)
    names = ["L"] + [g.name(p) for p in ("w_x", "w_h", "w_o")]
    inputs = ["w_x", "w_h", "w_o", "y"] + [f"x_{t}" for t in range(4)]
    f = compile(L, names, backend="numpy", batch_reduce="sum", inputs=inputs)
    labels = [lab for _, _, _, lab in f.program.instructions]
    assert labels.count("sub") == 1 + 4  # ŷ − y once (the loss and its adjoint share it), 1 − h_t² per step
    # forward w_x x_t (4), w_h h_{t-1} for t ≥ 1 (3: h_{-1} = 0 is compiled in), w_o h_T, ½ e²; backward w_o e,
    # g_3 = w_o e (1 − h_3²), then w_h g_{t+1} and its product with 1 − h_t² for t = 2, 1, 0
    assert labels.count("mul") == 4 + 3 + 1 + 1 + 1 + 1 + 2 * 3
    assert labels.count("batch_dot") == 4 + 3 + 1  # Σ_b x_t g_t, Σ_b h_{t-1} g_t for t ≥ 1, Σ_b h_3 e
    with_h0 = compile(L, names, backend="numpy", batch_reduce="sum", inputs=inputs + ["h_{-1}"])
    labels0 = [lab for _, _, _, lab in with_h0.program.instructions]
    assert (labels0.count("mul"), labels0.count("batch_dot")) == (labels.count("mul") + 1, labels.count("batch_dot") + 1)
    rng = np.random.default_rng(5)
    vals = {f"x_{t}": rng.normal(size=6) for t in range(4)} | {"y": rng.normal(size=6)}
    ref = evaluate(L, "numpy", values=vals)
    out = f(vals)
    for n in names[1:]:
        close(out[n], np.sum(ref[n]))


def test_a_leaf_the_caller_may_pass_is_never_folded():
    L, g = scalar_rnn(3)
    f = compile(L, [g.name("w_h")], backend="numpy")  # h_{-1} = 0 by default, but an input
    assert "h_{-1}" in f.program.inputs
    ref = evaluate(L, "numpy", values={"h_{-1}": 0.3})[g.name("w_h")]
    close(f({"h_{-1}": 0.3})[g.name("w_h")], ref)
    assert float(f()[g.name("w_h")]) != float(ref)


def test_in_place_writes_never_touch_the_callers_arrays_or_the_outputs():
    L, g = scalar_rnn(3)
    names = ["L", "h_2", "z_1", g.name("w_h")]
    f = compile(L, names, backend="numpy")
    rng = np.random.default_rng(11)
    vals = {f"x_{t}": rng.normal(size=4) for t in range(3)} | {"y": rng.normal(size=4)}
    copies = {n: v.copy() for n, v in vals.items()}
    assert f.program.in_place  # the chains are written in place
    out1 = f(vals)
    out2 = f(vals)
    ref = evaluate(L, "numpy", values=vals)
    for n in names:
        close(out1[n], ref[n])
        assert np.array_equal(out1[n], out2[n])
    for n in vals:
        assert np.array_equal(vals[n], copies[n])


def test_mpmath_uses_gmpy2_and_gives_fifty_correct_digits_at_t_100():
    import os

    import mpmath

    if not os.environ.get("CI"):
        pytest.importorskip("gmpy2")
    assert mpmath.libmp.BACKEND == "gmpy"  # gmpy2 is a dependency: mpmath's integers are GMP's
    L, g = scalar_rnn(100)
    names = [g.name(p) for p in ("w_x", "w_h", "w_o")]
    out = compile(L, names, backend="mpmath", dps=50)()
    ref = compile(L, names, backend="mpmath", dps=120)()
    for n in names:
        assert abs(out[n] - ref[n]) <= abs(ref[n]) * mpmath.mpf(10) ** -50, n


def test_an_array_a_transpose_still_reads_is_not_written_in_place():
    """Z = Xᵀ ⊙ (X + C) with X = A B: X + C is X's last use, but Xᵀ (a view of X) is read after it; writing X + C
    into X changed Xᵀ and Z silently (off by 1.05 on these values)."""
    from symseq import Ledger

    L = Ledger("a transpose read after its matrix's last use")
    A, B, C = (L.input(n, shape=(2, 2)) for n in "ABC")
    X = L.define("X", A @ B)
    T = L.define("T", X.T)
    Y = L.define("Y", X + C)
    L.define("Z", T * Y)
    rng = np.random.default_rng(0)
    vals = {n: rng.normal(size=(2, 2)) for n in "ABC"}
    f = compile(L, ["Z"])
    close(f(vals)["Z"], evaluate(L, "numpy", values=vals)["Z"])
    vals = {n: rng.normal(size=(3, 2, 2)) for n in "ABC"}
    close(f(vals)["Z"], evaluate(L, "numpy", values=vals)["Z"])


def softmax_ledger(masked):
    from symseq import Ledger, ops

    L = Ledger("a row softmax and its adjoint")
    S, C = L.input("S", shape=(3, 4)), L.input("C", shape=(3, 4))
    Z = L.define("Z", S * 2) if masked else S  # Z := 2S is a new array of the program's own; S is the caller's
    A = L.define("A", ops.SoftmaxRows(Z, "causal" if masked else None, empty_rows="zero"))
    L.define("loss", ops.Sum(A * C, None))
    return L, L.backward("loss")


@pytest.mark.parametrize("masked", [False, True])
def test_the_softmax_adjoint_broadcasts_its_row_sums_and_is_bitwise_the_interpreter(masked):
    """Ḡ_S = A ⊙ (Ḡ_A − Broadcast(Σ_j Ḡ_A ⊙ A)): the row sums are subtracted as an (…, m, 1) array that NumPy
    broadcasts, with no (…, m, n) copy and no negated copy; x + (−y) and x − y are the same double."""
    L, g = softmax_ledger(masked)
    f = compile(L, ["loss", "A", g.name("S")])
    labels = [lab for _, _, _, lab in f.program.instructions]
    assert "Sub" in labels and "Broadcast" not in labels and "Neg" not in labels
    rng = np.random.default_rng(5)
    for lead in ((), (2,)):
        vals = {n: rng.normal(size=lead + (3, 4)) for n in "SC"}
        copies = {n: v.copy() for n, v in vals.items()}
        out = f(vals)
        ref = evaluate(L, "numpy", values=vals)
        for n in out:
            np.testing.assert_array_equal(out[n], ref[n])
        for n in vals:  # the softmax is computed in place of 2S only, never of the caller's S
            np.testing.assert_array_equal(vals[n], copies[n])
    if masked:
        assert "SoftmaxRows" in [f.program.instructions[i][3] for i in f.program.in_place]
        assert np.all(out["A"][..., 0, 1:] == 0) and np.all(out["A"][..., 1, 2:] == 0)


def test_a_head_slice_is_a_view_and_its_source_is_not_written_while_it_is_read():
    """Columns 2..3 of X (a head's block) are read as a view; X + C is X's last use, but the view is read after."""
    from symseq import Ledger, ops

    L = Ledger("a column block read after its matrix's last use")
    A, B, C = (L.input(n, shape=(2, 4)) for n in "ABC")
    X = L.define("X", A * B)
    V = L.define("V", ops.Slice(X, slice(None), slice(2, 4)))
    Y = L.define("Y", X + C)
    L.define("Z", ops.Slice(Y, slice(None), slice(0, 2)) * V)
    rng = np.random.default_rng(1)
    vals = {n: rng.normal(size=(3, 2, 4)) for n in "ABC"}
    f = compile(L, ["Z"])
    np.testing.assert_array_equal(f(vals)["Z"], evaluate(L, "numpy", values=vals)["Z"])
    X = vals["A"] * vals["B"]
    np.testing.assert_array_equal(f(vals)["Z"], (X + vals["C"])[..., :2] * X[..., 2:])


def test_sums_of_several_arrays_and_weight_gradients_are_accumulated_in_place_safely():
    """x_t W_xᵀ + h_{t−1} W_hᵀ + b (h₋₁ = 0 folded: x_0 W_xᵀ + b) writes into its first term, and Σ_t g_tᵀ x_t
    into the running sum; the caller's arrays are never written and every number is the interpreter's."""
    L, g, names = elman_ledger(head=False)
    names = names[:4]
    f = compile(L, names, inputs=["W_x", "W_h", "b", "x_0", "x_1", "x_2"])
    in_place = [f.program.instructions[i][3] for i in f.program.in_place]
    assert "Add" in in_place and "accumulate" in in_place
    rng = np.random.default_rng(3)
    vals = {"W_x": rng.normal(size=(3, 2)), "W_h": rng.normal(size=(3, 3)), "b": rng.normal(size=(1, 3))} | {
        f"x_{t}": rng.normal(size=(4, 1, 2)) for t in range(3)}
    copies = {n: v.copy() for n, v in vals.items()}
    out1, out2 = f(vals), f(vals)
    ref = evaluate(L, "numpy", values=vals)
    for n in names:
        close(out1[n], ref[n])
        np.testing.assert_array_equal(out1[n], out2[n])
    for n in vals:
        np.testing.assert_array_equal(vals[n], copies[n])


@pytest.mark.parametrize("name", bundled_names())
@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_the_straight_line_program_is_the_instruction_list_bit_for_bit(name, backend, built, monkeypatch):
    """The first calls step through the instructions; later calls run them as one generated Python function:
    the same calls in the same order, so every output is the same object value, bit for bit (mpmath: digit for
    digit), and the calls after it agree too (arrays written in place are the program's own)."""
    from symseq.backends import compiled

    def check(L):
        names = all_names(L)
        f = compile(L, names, backend=backend, **({"dps": 30} if backend == "mpmath" else {}))
        first = f()
        assert getattr(f, "_program_fn", None) is None or len(f) == 0
        with monkeypatch.context() as m:
            m.setattr(compiled, "_GENERATE_SECONDS", 0.0)  # stepping has now cost "as much as writing it out"
            second, third = f(), f()
        assert f._program_fn is not None
        for n in names:
            for again in (second, third):
                if backend == "mpmath":  # the binary values themselves (libmp's tuples), entry by entry
                    assert [x._mpf_ for x in np.ravel(again[n])] == [x._mpf_ for x in np.ravel(first[n])], n
                else:
                    np.testing.assert_array_equal(again[n], first[n])

    each_ledger(numeric_ledgers(built[name]), check)


def _raw_program(f) -> bool:
    """Whether the straight-line program of ``f`` runs on libmp's raw numbers (it calls libmp's functions)."""
    return "_mul" in f._program_fn.__code__.co_names or "_add" in f._program_fn.__code__.co_names


@pytest.mark.parametrize("activation", ["tanh", "exp", "sinh", "cosh", "sin", "cos"])
def test_the_raw_mpmath_program_is_the_mpf_program_bit_for_bit(activation, monkeypatch):
    """A scalar RNN through each function the raw program writes itself, with every form of scalar.py's plans
    (a product of three factors, a signed sum, a negation, 1/x, x²): the straight-line program runs on libmp's
    tuples, and each gradient is bitwise the mpf program's, at 50 and at 120 digits; the result is an mpf of the
    kernel's context."""
    import sympy as sp

    from symseq import Ledger
    from symseq.backends import compiled

    L = Ledger(f"a scalar RNN through {activation}")
    w_x, w_h, c = L.parameter("w_x", sp.Rational(1, 2)), L.parameter("w_h", sp.Rational(9, 10)), L.parameter("c", 3)
    h = L.input("h_{-1}", sp.Rational(1, 7))
    for t in range(4):
        x = L.input(f"x_{t}", sp.Rational(t + 1, 10))
        z = L.define(f"z_{t}", w_x * x * c - w_h * h - x + 1 / (c + t))
        h = L.define(f"h_{t}", getattr(sp, activation)(z))
    L.define("L", -(h - 1) ** 2 / 2)
    g = L.backward("L")
    names = ["L"] + [g.name(p) for p in ("w_x", "w_h", "c")]
    for dps in (50, 120):
        f = compile(L, names, backend="mpmath", dps=dps)
        first = f()
        monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
        second = f(x_2="0.35")
        assert _raw_program(f)
        assert f(x_2="0.35")[names[1]] != first[names[1]]  # the inputs are read at every call
        again = f()
        monkeypatch.undo()
        for n in names:
            assert again[n]._mpf_ == first[n]._mpf_, n
            assert type(again[n]) is type(first[n]) and again[n].context is f.kernel.ctx
        assert second[names[1]]._mpf_ == compile(L, names, backend="mpmath", dps=dps)(x_2="0.35")[names[1]]._mpf_


def test_a_program_with_an_instruction_the_raw_arithmetic_does_not_write_stays_on_mpf(monkeypatch):
    """A square root (and any function but tanh, exp, sinh, cosh, sin, cos) keeps the program on mpf objects;
    its results are unchanged."""
    import sympy as sp

    from symseq import Ledger
    from symseq.backends import compiled

    L = Ledger("a square root")
    x = L.input("x", 2)
    L.define("r", sp.sqrt(x * x + 1) * x)
    f = compile(L, ["r"], backend="mpmath")
    first = f()
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    assert f()["r"]._mpf_ == first["r"]._mpf_
    assert not _raw_program(f)
    assert str(first["r"])[:12] == "4.4721359549"  # 2√5


@pytest.mark.parametrize("backend", ["numpy", "mpmath"])
def test_a_division_by_zero_in_the_straight_line_program_names_the_row(backend, monkeypatch):
    from symseq import EvaluationError, Ledger
    from symseq.backends import compiled

    L = Ledger("a quotient")
    x = L.input("x", 3)
    L.define("r", 1 / (x - 1))
    f = compile(L, ["r"], backend=backend)
    assert float(f()["r"]) == 0.5
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    assert float(f()["r"]) == 0.5  # the straight-line program
    assert backend != "mpmath" or _raw_program(f)  # 1/(x − 1) on libmp's numbers: mpf_rdiv_int raises too
    with pytest.raises(EvaluationError, match="row r (divides by zero|evaluates to inf)"):
        f(x=1)
    assert float(f(x=5)["r"]) == 0.25


@pytest.mark.parametrize("overwrite", [False, True])
def test_the_masked_softmax_is_the_plain_formula_bit_for_bit(overwrite):
    """softmax over the allowed entries, the excluded ones set to 0 instead of computed as e^{−∞} (NumPy's exp is
    slow there): bitwise exp(a − max)/Σ of the plain formula; a row with no allowed entry is all 0; the argument is
    written only with ``overwrite``."""
    from symseq.backends.numpy_backend import _softmax

    rng = np.random.default_rng(8)
    allowed = ~np.triu(np.ones((37, 37), bool), 1)
    allowed[3] = False  # a row with no allowed source (empty_rows="zero")
    a = rng.normal(size=(2, 37, 37)) * 20
    copy = a.copy()
    masked = np.where(allowed, a, -np.inf)
    m = np.max(masked, axis=-1, keepdims=True)
    m[np.isneginf(m)] = 0.0
    with np.errstate(under="ignore"):
        plain = np.exp(masked - m)
    s = plain.sum(axis=-1, keepdims=True)
    plain = plain / np.where(s > 0, s, 1.0)
    got = _softmax(a, allowed, overwrite=overwrite)
    np.testing.assert_array_equal(got, plain)
    assert np.all(got[..., ~allowed] == 0) and np.all(got[:, 3] == 0)
    assert (got is a) == overwrite
    if not overwrite:
        np.testing.assert_array_equal(a, copy)


def test_a_sum_that_repeats_a_temporary_does_not_overwrite_it_before_reading_it_again():
    """Y = X + B + X with X = A ⊙ C a temporary: writing X + B into X first would make the sum (X + B) + (X + B),
    off by 2.3 on these values."""
    from symseq import Ledger, ops

    L = Ledger("a repeated term")
    A, B, C = (L.input(n, shape=(2, 2)) for n in "ABC")
    X = L.define("X", A * C)
    L.define("Y", ops.Add(X, B, X))
    L.define("Z", ops.Add(B, X, X))
    rng = np.random.default_rng(0)
    vals = {n: rng.normal(size=(3, 2, 2)) for n in "ABC"}
    f = compile(L, ["Y"])
    X = vals["A"] * vals["C"]
    np.testing.assert_array_equal(f(vals)["Y"], (X + vals["B"]) + X)
    np.testing.assert_array_equal(f(vals)["Y"], evaluate(L, "numpy", values=vals)["Y"])
    g = compile(L, ["Z"])
    np.testing.assert_array_equal(g(vals)["Z"], (vals["B"] + X) + X)


@pytest.mark.parametrize("backend", ["numpy", "mpmath", "torch"])
def test_a_sum_of_three_or_more_terms_with_minus_signs_compiles(backend):
    """a − b − c and −a + b − c + d (scalar.py's signed fold): the compiler once read the fold's signs from the
    wrong attribute and raised a TypeError on any such row; each is now its exact value."""
    pytest.importorskip(backend) if backend == "torch" else None
    from symseq import Ledger

    L = Ledger("signed sums")
    a, b, c, d = (L.input(n, v) for n, v in zip("abcd", (1, 2, 4, 8)))
    L.define("r", a - b - c)
    L.define("s", -a + b - c + d)
    L.define("u", a + b + c)
    out = compile(L, ["r", "s", "u"], backend=backend)()
    assert [float(out[n]) for n in "rsu"] == [-5.0, 5.0, 7.0]


@pytest.mark.parametrize("reduce", [None, "sum"])
def test_a_batch_of_rows_runs_folded_into_one_matrix_with_the_same_numbers(reduce, monkeypatch):
    """With the inputs x_t and y batched as rows and the weights' gradients summed over the batch, the program runs
    on (N, n) matrices and gives back every output with its batch axes: bitwise the step-by-step program for one
    batch axis, and the interpreter's numbers for two (a sum over the batch may add in another order); the
    caller's arrays are never written. Without the sum, each example's gradient of W_x is its own outer product
    g_tᵀ x_t, which one matrix of rows cannot keep apart: the program then runs unfolded."""
    from symseq.backends import compiled

    L, _, names = elman_ledger()
    inputs = ["W_x", "W_h", "b", "W_o", "y"] + [f"x_{t}" for t in range(3)]
    f = compile(L, names, inputs=inputs, batch_reduce=reduce)
    rng = np.random.default_rng(11)
    params = {"W_x": rng.normal(size=(3, 2)), "W_h": rng.normal(size=(3, 3)), "b": rng.normal(size=(1, 3)),
              "W_o": rng.normal(size=(2, 3))}
    for lead in [(5,), (2, 3), (1,)]:
        vals = params | {n: rng.normal(size=lead + (1, 2)) for n in inputs[4:]}
        copies = {n: v.copy() for n, v in vals.items()}
        stepped = f(vals)  # the first calls step through the instructions
        monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
        f(vals)  # notes the shapes (stepping once more)
        assert (f._folded[frozenset(inputs[4:])] is not None) == (reduce == "sum")
        folded = f(vals)
        ref = evaluate(L, "numpy", values=vals)
        for n in names:
            assert np.shape(folded[n]) == np.shape(stepped[n]), n
            if len(lead) == 1:
                np.testing.assert_array_equal(folded[n], stepped[n])
            r = np.asarray(ref[n])
            if reduce and n in names[2:6]:
                r = r.sum(axis=tuple(range(len(lead))))
            close(folded[n], r, 1e-13)
        for n in vals:
            np.testing.assert_array_equal(vals[n], copies[n])
        monkeypatch.undo()


def test_a_program_that_does_not_keep_rows_apart_is_not_folded(monkeypatch):
    """A batched input that is a matrix (not a row), a row turned into a column (Xᵀ), or a batched row times a
    batched matrix: each computes something per example that one (N, n) matrix would mix, so the program runs
    unfolded, with the interpreter's numbers."""
    from symseq import Ledger, ops
    from symseq.backends import compiled

    rng = np.random.default_rng(12)
    cases = []
    L = Ledger("a matrix input")
    A = L.input("A", shape=(2, 3))
    L.define("S", ops.Sum(A * A, None))
    cases.append((L, {"A": rng.normal(size=(4, 2, 3))}))
    L = Ledger("a column from a row")
    x = L.input("x", shape=(1, 3))
    L.define("G", x.T @ x)
    cases.append((L, {"x": rng.normal(size=(4, 1, 3))}))
    L = Ledger("a row times a batched matrix")
    x, M = L.input("x", shape=(1, 2)), L.input("M", shape=(2, 2))
    L.define("r", x @ M)
    cases.append((L, {"x": rng.normal(size=(4, 1, 2)), "M": rng.normal(size=(4, 2, 2))}))
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    for L, vals in cases:
        name = L.rows[-1].name
        f = compile(L, [name])
        first, second = f(vals), f(vals)
        assert list(f._folded.values()) == [None], L.title
        close(second[name], evaluate(L, "numpy", values=vals)[name], 1e-14)
        np.testing.assert_array_equal(first[name], second[name])


def test_the_elman_benchmark_runs_folded_and_agrees_with_nn_rnn(monkeypatch):
    """The 16-step Elman RNN of benchmarks/speed.py (d = 64, batch 64): the program runs folded, and its gradients
    agree with torch autograd through nn.RNN in float64 to 1e-12."""
    pytest.importorskip("torch")
    from symseq.backends import compiled

    f, vals, ref, err, backends = benchmark_elman()
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    f(vals)
    assert all(v is not None for v in f._folded.values()) and f._folded
    g = backends.vector_rnn(16, 64, 64, 8)[1]
    assert err <= 1e-12 and backends._agreement(f(vals), g, ["W_x", "W_h", "b_h", "W_o"], ref()) <= 1e-12


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_ledger_gives_the_same_numbers_folded_or_not(name, built, monkeypatch):
    """Every bundled ledger, its row and number inputs batched (the parameters not, their gradients summed over
    the batch): the straight-line program (folded when it can be) gives the step-by-step program's numbers."""
    from symseq.backends import compiled

    def check(L):
        rng = np.random.default_rng(13)
        base = evaluate(L, "numpy")
        names = all_names(L)
        f = compile(L, names, backend="numpy", batch_reduce="sum")
        values = {}
        for it in L.leaves:
            if it.name not in f.program.inputs:
                continue
            v = np.asarray(base[it.name], dtype=float)
            batched = it.kind != "parameter" and (v.ndim == 0 or (v.ndim == 2 and v.shape[0] == 1))
            values[it.name] = v + (1e-3 * rng.standard_normal((4,) + v.shape) if batched else 0.0)
        try:
            stepped = f(values)
        except SymseqError:
            pytest.skip("the program refuses these perturbed values")
        with monkeypatch.context() as m:
            m.setattr(compiled, "_GENERATE_SECONDS", 0.0)
            f(values)
            again = f(values)
        for n in names:
            close(again[n], stepped[n], 1e-13)

    each_ledger(numeric_ledgers(built[name]), check)


def test_a_folded_program_gives_back_a_batched_input_requested_as_an_output(monkeypatch):
    """An input asked for as an output, read by the program or not, comes back with its batch axes."""
    from symseq import Ledger
    from symseq.backends import compiled

    L = Ledger("a row times a matrix")
    x, u, W = L.input("x", shape=(1, 2)), L.input("u", shape=(1, 3)), L.parameter("W", shape=(2, 3))
    L.define("r", x @ W)
    rng = np.random.default_rng(14)
    vals = {"x": rng.normal(size=(4, 1, 2)), "u": rng.normal(size=(4, 1, 3)), "W": rng.normal(size=(2, 3))}
    f = compile(L, ["r", "x", "u"], inputs=["x", "u", "W"])
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    f(vals)
    out = f(vals)
    assert list(f._folded.values()) != [None]
    np.testing.assert_array_equal(out["x"], vals["x"])
    np.testing.assert_array_equal(out["u"], vals["u"])
    # one (4, 2) @ (2, 3) product against NumPy's batched one: BLAS may round them 1 ulp apart (kernel, alignment)
    np.testing.assert_allclose(out["r"], vals["x"] @ vals["W"], rtol=1e-14, atol=0)


def test_an_array_written_in_place_is_never_one_the_result_outgrows(monkeypatch):
    """u = w ⊙ w is the program's own array and its last use is u + x; with x a batch of rows the sum has the
    batch's shape, which u cannot hold: the folded program makes a new array there (and writes in place where
    the shapes agree), with the interpreter's numbers and the step-by-step program's bits."""
    import sympy as sp

    from symseq import Ledger, ops
    from symseq.backends import compiled

    L = Ledger("a parameter's square plus a batch of rows")
    x, w = L.input("x", shape=(1, 3)), L.parameter("w", shape=(1, 3))
    v = L.define("v", w * w + x)
    L.define("S", ops.Sum(ops.Map(sp.tanh, v) * v, None))
    rng = np.random.default_rng(15)
    vals = {"x": rng.normal(size=(5, 1, 3)), "w": rng.normal(size=(1, 3))}
    f = compile(L, ["v", "S"])
    stepped = f(vals)
    monkeypatch.setattr(compiled, "_GENERATE_SECONDS", 0.0)
    f(vals)
    assert list(f._folded.values()) != [None]
    assert f.program.in_place_ufunc  # some instruction writes in place
    folded = f(vals)
    ref = evaluate(L, "numpy", values=vals)
    for n in ("v", "S"):
        np.testing.assert_array_equal(folded[n], stepped[n])
        close(folded[n], ref[n])


def test_a_quotient_by_a_constant_without_a_zero_is_numpys_division_and_a_zero_divisor_names_the_row():
    """X / C with C compiled in: with no zero entry in C it is the plain quotient, bit for bit; with one, a
    division by zero is still caught and reported with the row's name."""
    import operator

    import sympy as sp

    from symseq import Ledger
    from symseq.errors import EvaluationError

    X = np.array([[1.0, -2.5, 7.0]])
    for C, ok in (([[2, 3, sp.Rational(1, 7)]], True), ([[2, 0, 5]], False)):
        L = Ledger("a quotient by a constant")
        x = L.input("X", shape=(1, 3))
        L.define("Q", x / L.input("C", sp.Matrix(C)))
        f = compile(L, ["Q"], inputs=["X"])
        divides = [fn is operator.truediv for _, fn, _, label in f.program.instructions if label == "Div"]
        assert divides == [ok]
        if ok:
            np.testing.assert_array_equal(f(X=X)["Q"], X / np.array([[2.0, 3.0, 1 / 7]]))
        else:
            with pytest.raises(EvaluationError, match="Q"):
                f(X=X)
