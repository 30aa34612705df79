"""Every node's adjoint rule against SymPy's own differentiation of the expanded expression (exact)."""

import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, MaskError, ShapeError, ops
from symseq.functions import relu, sigmoid


def check_adjoints(build, shapes):
    """Build out = f(inputs), loss = Σ W ⊙ out with a symbolic weight W; compare every adjoint with diff."""
    L = Ledger()
    ins = {n: L.input(n, shape=s) for n, s in shapes.items()}
    out = L.define("out", build(**ins))
    W = L.input("W", shape=out.shape) if out.shape != () else L.input("W")
    L.define("loss", ops.Sum(W * out, None) if out.shape != () else W * out)
    g = L.backward("loss")
    loss = L.expand("loss")
    for n in shapes:
        ours = L.expand(g.name(n))
        syms = L.entry_symbols(n)
        direct = sp.Matrix(syms.shape[0], syms.shape[1], lambda i, j: sp.diff(loss, syms[i, j]))
        diff = sp.Matrix(ours) - direct if isinstance(ours, sp.MatrixBase) else ours - direct[0, 0]
        entries = list(diff) if isinstance(diff, sp.MatrixBase) else [diff]
        for e in entries:
            assert sp.simplify(e) == 0, (n, e)


def test_matmul_transpose_add_broadcast():
    check_adjoints(lambda A, B, b: A @ B.T + b, {"A": (2, 3), "B": (4, 3), "b": (1, 4)})


def test_hadamard_scale_div_neg():
    check_adjoints(lambda A, B: (A * B) / 3 - A * 2, {"A": (2, 2), "B": (2, 2)})


def test_div_by_a_column_broadcast():
    check_adjoints(lambda A, c: A / c, {"A": (2, 3), "c": (2, 1)})


def test_elementwise_functions():
    check_adjoints(lambda A: ops.Map(sp.tanh, A) + ops.Map(sigmoid, A), {"A": (2, 2)})


def test_softmax_rows_masked():
    allowed = np.tril(np.ones((3, 3), bool))
    check_adjoints(lambda S: ops.SoftmaxRows(S, allowed), {"S": (3, 3)})


def test_logsumexp_rows_and_take_along():
    check_adjoints(lambda Z: ops.LogSumExpRows(Z) - ops.TakeAlong(Z, [2, 0]), {"Z": (2, 3)})


def test_sums_and_means():
    check_adjoints(lambda A: ops.Sum(A, 0) * 2 + ops.Sum(A, 1, mean=True).T @ A, {"A": (2, 2)})


def test_slicing_entry_concat_take_rows():
    check_adjoints(lambda A, B: ops.Concat([A[:, [0]], B], axis=1)[[1, 1, 0], :] * A[0, 1],
                   {"A": (3, 2), "B": (3, 1)})
    check_adjoints(lambda E: ops.TakeRows(E, [2, 0, 2]), {"E": (3, 2)})


def test_relu_adjoint_uses_the_torch_convention_at_zero():
    L = Ledger()
    X = L.input("X", [[0, 1, -1]])
    L.define("loss", ops.Sum(ops.Map(relu, X), None))
    g = L.backward("loss")
    assert L.value(g.name("X")) == sp.Matrix([[0, 1, 0]])


def test_fully_masked_row_names_the_row():
    allowed = np.array([[True, False], [False, False]])
    with pytest.raises(MaskError, match="query position 1 has no allowed source"):
        ops.SoftmaxRows(ops.Const(sp.zeros(2, 2)), allowed)
    z = ops.SoftmaxRows(ops.Const(sp.zeros(2, 2)), allowed, empty_rows="zero")
    L = Ledger()
    S = L.input("S", [[1, 2], [3, 4]])
    L.define("A", ops.SoftmaxRows(S, allowed, empty_rows="zero"))
    assert L.value("A") == sp.Matrix([[1, 0], [0, 0]])
    assert z.shape == (2, 2)


def test_mask_shape_is_checked():
    with pytest.raises(ShapeError, match="mask has shape 3×3 but the scores are 2×2"):
        ops.SoftmaxRows(ops.Const(sp.zeros(2, 2)), np.ones((3, 3), bool))


def test_undefined_values_name_the_row():
    from symseq import EvaluationError

    L = Ledger()
    a = L.input("a", 0)
    L.define("b", 1 / a)
    with pytest.raises(EvaluationError, match="row b evaluates to"):
        L.value("b")


def test_the_adjoint_of_a_weighted_sum_is_the_weight_itself():
    # ∂/∂a Σ(G ⊙ a) = G: the ones a sum hands back are not multiplied in (no "1 ⊙ G" row)
    L = Ledger()
    G, a = L.input("G", shape=(1, 3)), L.input("a", shape=(1, 3))
    L.define("loss", ops.Sum(G * a, None))
    g = L.backward("loss")
    assert isinstance(L[g.name("a")].node, ops.Ref) and L[g.name("a")].node.name == "G"


def test_a_sympy_function_of_a_whole_row_says_to_map_it_entry_by_entry():
    # sp.tanh(z) of a 1×2 row recursed inside SymPy (RecursionError) before Node._sympy_ refused it
    from symseq import Ledger, functions, ops
    from symseq.errors import ShapeError

    L = Ledger("one step")
    z = L.input("z", [[1, 2]])
    for f in (sp.tanh, functions.sigmoid):
        with pytest.raises(ShapeError, match=r"1×2 ledger row.*ops\.Map\(sp\.tanh, z\)"):
            f(z)
    c = sp.Symbol("c")
    assert (c * z).shape == (1, 2) and (sp.Integer(2) * z).shape == (1, 2)  # SymPy times a row is still the row's
    h = L.define("h", ops.Map(sp.tanh, z))  # the way it says
    assert L.value(h.name)[0, 1] == sp.tanh(2)


def test_the_names_a_tree_refers_to_include_its_scalar_leaves_free_symbols():
    L = Ledger()
    W = L.input("W", shape=(2, 2))
    w, u = L.input("w"), L.input("u")
    leaf = ops.Scalar(w * u + sp.Lambda(sp.Symbol("bound"), sp.Symbol("bound") + 1)(u))
    assert leaf.names() == frozenset({"w", "u"}) and leaf.names() is leaf.names()  # found once
    assert ops.refs(W @ W + leaf) == {"W", "w", "u"}
    assert ops.refs(ops.Scalar(sp.Integer(3))) == set()
