"""The ledger and its symbolic reverse mode (Week 06 handout, 004, Table 3, as the reference case)."""

import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, LedgerError, ShapeError, ops

phi = sp.Function("phi")


def scalar_rnn(T=3):
    L = Ledger("scalar RNN")
    xs = [L.input(f"x_{t}") for t in range(T)]
    w_x, w_h, w_o = L.parameter("w_x"), L.parameter("w_h"), L.parameter("w_o")
    h = L.input("h_{-1}", 0)
    y = L.input("y")
    for t in range(T):
        z = L.define(f"z_{t}", w_x * xs[t] + w_h * h)
        h = L.define(f"h_{t}", phi(z))
    yhat = L.define("yhat", w_o * h)
    L.define("L", sp.Rational(1, 2) * (yhat - y) ** 2)
    names = {f"z_{t}": f"g_{t}^z" for t in range(T)} | {f"h_{t}": f"g_{t}^h" for t in range(T)} | {"yhat": "e"}
    return L, L.backward("L", names=names)


def test_backward_rows_are_table_3():
    L, g = scalar_rnn()
    S = lambda n: L.symbol(n)  # noqa: E731
    d = lambda n: sp.Derivative(phi(S(n)), S(n))  # noqa: E731
    expected = {
        "e": S("yhat") - S("y"),
        "g_2^h": S("e") * S("w_o"),
        "g_2^z": S("g_2^h") * d("z_2"),
        "g_1^h": S("g_2^z") * S("w_h"),
        "g_1^z": S("g_1^h") * d("z_1"),
        "g_0^h": S("g_1^z") * S("w_h"),
        "g_0^z": S("g_0^h") * d("z_0"),
    }
    for name, expr in expected.items():
        assert sp.simplify(L[name].node.expr - expr) == 0, name
    # h_{-1} is fixed: its adjoint is g_0^z w_h, and it is the last backward row of the chain
    assert sp.simplify(L[g.name("h_{-1}")].node.expr - S("g_0^z") * S("w_h")) == 0


def test_shared_weight_gradient_is_a_sum_over_uses():
    L, g = scalar_rnn()
    S = L.symbol
    assert L[g.name("w_x")].node.expr == sum(S(f"g_{t}^z") * S(f"x_{t}") for t in range(3))
    assert L[g.name("w_h")].node.expr == S("g_0^z") * S("h_{-1}") + S("g_1^z") * S("h_0") + S("g_2^z") * S("h_1")
    assert L[g.name("w_h")].meta["uses"] == 3
    assert L[g.name("w_o")].node.expr == S("e") * S("h_2")


def test_expanded_gradient_equals_direct_differentiation():
    L, g = scalar_rnn()
    loss = L.expand("L")
    for w in ("w_x", "w_h", "w_o"):
        ours = L.expand(g.name(w))
        direct = sp.diff(loss, L.symbol(w))
        assert sp.simplify((ours - direct).doit()) == 0, w


def test_path_products_keep_forward_names():
    L, g = scalar_rnn()
    keep = [f"z_{t}" for t in range(3)] + [f"h_{t}" for t in range(3)] + ["yhat"]
    S = L.symbol
    dp = lambda t: sp.Derivative(phi(S(f"z_{t}")), S(f"z_{t}"))  # noqa: E731
    bracket = dp(2) * S("w_h") * dp(1) * S("w_h") * dp(0) * S("x_0") + dp(2) * S("w_h") * dp(1) * S("x_1") + dp(2) * S("x_2")
    expected = (S("yhat") - S("y")) * S("w_o") * bracket
    assert sp.expand(L.expand(g.name("w_x"), keep=keep) - expected) == 0


def test_exact_values_and_dependency_pruning():
    L = Ledger()
    a = L.input("a", "0.2")
    b = L.define("b", a * 3)
    L.define("c", b + 1)
    assert L.value("c") == sp.Rational(8, 5)
    assert L.needed(["b"]) == ["a", "b"]


def test_names_are_checked():
    L = Ledger()
    L.input("x", 1)
    with pytest.raises(LedgerError, match="already defined"):
        L.input("x", 2)
    with pytest.raises(LedgerError, match="'q', which is not defined"):
        L.define("y", sp.Symbol("q", real=True) + 1)
    with pytest.raises(LedgerError, match="did you mean 'x'"):
        L["X"]


def test_backward_needs_a_scalar_loss():
    L = Ledger()
    X = L.input("X", [[1, 2]])
    L.define("Y", X * 2)
    with pytest.raises(ShapeError, match="scalar loss"):
        L.backward("Y")


def test_matrix_row_entry_symbols_follow_the_handout():
    L = Ledger()
    L.parameter("W_x", shape=(2, 2))
    L.input("x_t", shape=(1, 3))
    assert str(L.entry_symbols("W_x")[0, 1]) == "W_{x,01}"
    assert str(L.entry_symbols("x_t")[0, 2]) == "x_{t,2}"


def test_shape_errors_name_both_shapes_and_the_operation():
    L = Ledger()
    A = L.input("A", shape=(2, 3))
    B = L.input("B", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"matrix product: \(2×3\)\(2×3\)"):
        A @ B
    C = L.input("C", shape=(3, 2))
    with pytest.raises(ShapeError, match=r"addition: shapes 2×3 and 3×2"):
        A + C
    assert (A @ C).shape == (2, 2)
    assert isinstance(A + L.input("b", shape=(1, 3)), ops.Add)


# --- conventions stated, not guessed (issue 12) -----------------------------------------------------------------


def test_max_with_zero_is_refused_with_a_pointer_to_relu():
    """sympy.Max(x, 0) differentiates to ½ at 0 (and torch.maximum splits the gradient); ReLU'(0) = 0 is symseq's."""
    from symseq import ConventionError, evaluate, relu

    L = Ledger()
    x = L.input("x", 0)
    X = L.input("X", [[0, 1]])
    u = sp.Symbol("u", real=True)
    with pytest.raises(ConventionError, match=r"row y uses Max\(0, x\).*symseq\.relu\(x\)"):
        L.define("y", sp.Max(x, 0))
    with pytest.raises(ConventionError, match=r"row y2 uses Min\(0, x\).*-relu\(-x\)"):
        L.define("y2", 2 * sp.Min(x, 0) + 1)
    with pytest.raises(ConventionError, match=r"row Y uses Max\(0, u\)"):
        L.define("Y", ops.Map(sp.Lambda(u, sp.Max(u, 0)), X))
    L.define("m", sp.Max(x, sp.Rational(1, 4)))  # no ReLU hides in max(x, 1/4): kept
    r = L.define("r", relu(x))
    g = L.backward(r.name)
    assert L.value(g.name("x")) == 0  # ReLU'(0) = 0
    assert float(evaluate(L, "numpy")[g.name("x")]) == 0.0


def test_a_sympy_matrix_of_ledger_names_is_evaluated_and_differentiated_entry_by_entry():
    """M := [[a, a·b], [3, a + b]] used to be a constant: a TypeError at evaluation and a silent zero gradient."""
    from symseq import evaluate

    L = Ledger()
    a, b = L.input("a", 1), L.input("b", 2)
    M = L.define("M", sp.Matrix([[a, a * b], [3, a + b]]))
    W = L.parameter("W", [[1, 2], [3, 4]])
    L.define("l", ops.Sum(M @ W, None))
    g = L.backward("l")
    # l = Σ_ik M_ik (Σ_j W_kj) = 3 M_00 + 7 M_01 + 3 M_10 + 7 M_11: ∂l/∂a = 3 + 7b + 7, ∂l/∂b = 7a + 7
    assert (L.value("M"), L.value(g.name("a")), L.value(g.name("b"))) == (sp.Matrix([[1, 2], [3, 3]]), 24, 14)
    backends = ["mpmath", "numpy"] + (["torch"] if _has_torch() else [])
    for backend in backends:
        out = evaluate(L, backend)
        got = np.array(np.asarray(out["M"].tolist() if hasattr(out["M"], "tolist") else out["M"], dtype=object)
                       .tolist(), dtype=float)
        assert got.tolist() == [[1, 2], [3, 3]], backend
        assert (float(out[g.name("a")]), float(out[g.name("b")])) == (24.0, 14.0), backend
    with pytest.raises(LedgerError, match="'q', which is not defined"):
        L.define("N", sp.Matrix([[a, sp.Symbol("q", real=True)]]))


def test_leaf_shapes_must_be_positive():
    L = Ledger()
    with pytest.raises(ShapeError, match=r"W: the numbers of rows and columns must be positive integers; got shape \(-1, 2\)"):
        L.parameter("W", shape=(-1, 2))
    with pytest.raises(ShapeError, match="positive integers"):
        L.input("X", shape=(0, 3))
    # an empty array is named by the shape it was given with, not the (0, 0) SymPy makes of it
    with pytest.raises(ShapeError, match=r"got shape \(0, 3\)"):
        L.input("Q", np.zeros((0, 3)))
    with pytest.raises(ShapeError, match=r"got shape \(2, 0\)"):
        L.input("K", [[], []])


def _has_torch():
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def test_the_nonfinite_check_agrees_with_sympys_has_on_deep_expressions():
    from symseq.arrays import EXACT

    x, y = sp.symbols("x y", real=True)
    f = sp.Function("f")
    deep = x
    for k in range(200):  # a long chain of rows, each built on the one before
        deep = sp.tanh(deep * sp.Rational(k + 1, 7) + y)
    cases = [deep, deep + sp.nan, sp.Add(deep, sp.zoo, evaluate=False), deep + sp.oo, sp.exp(sp.Integer(2)) + sp.oo,
             -sp.oo, f(2) + sp.oo, sp.pi / 3, sp.Integer(0)]
    for e in cases:
        expected_undefined = e.has(sp.nan, sp.zoo)
        expected_infinite = e.is_number and e.has(sp.oo, -sp.oo)
        assert EXACT._bad(e, False) == (expected_undefined or expected_infinite), e
        assert EXACT._bad(e, True) == expected_undefined, e


def test_a_matrix_names_entry_symbols_are_made_once_and_named_by_entry():
    L = Ledger("entry symbols")
    L.input("W_x", shape=(2, 3))
    first = L.entry_symbols("W_x")
    assert first is L.entry_symbols("W_x")  # the matrix is immutable: made on the first call, then reused
    assert [s.name for s in first] == ["W_{x,00}", "W_{x,01}", "W_{x,02}", "W_{x,10}", "W_{x,11}", "W_{x,12}"]
    assert all(s.is_real for s in first)
