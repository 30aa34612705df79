"""LayerNorm (symseq.blocks.norms): population variance, ε inside the root, constant rows (Week 06 handout, 004)."""

import pytest
import sympy as sp

from symseq import EvaluationError, Ledger, blocks, evaluate


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
    with pytest.raises(EvaluationError, match=r"row LN divides by zero.*constant.*ε > 0"):
        evaluate(L, "mpmath")
