"""jacobians.path_bound: ‖g_s‖ ≤ ‖g_q‖ Π_{t=s+1}^{q} f_t over every pair s < q (Week 06 handout, 004)."""

import numpy as np
import pytest
import sympy as sp

from symseq import ShapeError
from symseq.derive import jacobians


def test_equality_on_a_geometric_sequence_holds_both_ways():
    # g_s = g_q 2^(q−s): each ratio is exactly one
    ok, detail = jacobians.path_bound([8, 4, 2, 1], [2, 2, 2])
    assert ok and detail == "largest ‖g_s‖/(‖g_q‖ Π f_t) 1 over 6 pairs"
    assert jacobians.path_bound([8, 4, 2, 1], [2, 2, 2], lower=True)[0]


def test_each_pair_is_checked():
    # pairs (0,1): 1/(3·2) = 1/6, (1,2): 3/(4·2) = 3/8, (0,2): 1/(4·2·2) = 1/16
    ok, detail = jacobians.path_bound([1, 3, 4], [2, 2])
    assert ok and "0.375 over 3 pairs" in detail
    assert not jacobians.path_bound([1, 3, 4], [2, 2], lower=True)[0]
    assert not jacobians.path_bound([5, 2, 4], [2, 2])[0]  # |g_0| = 5 > |g_1| · 2
    assert not jacobians.path_bound([1, 2, 40], [2, 2], lower=True)[0]  # 1 < 40 · 2 · 2 only fails the lower


def test_rtol_and_exact_numbers():
    assert not jacobians.path_bound([sp.Rational(2) + sp.Rational(1, 10 ** 20), 1], [2])[0]
    assert jacobians.path_bound([sp.Rational(2) + sp.Rational(1, 10 ** 20), 1], [2], rtol="1e-15")[0]


def test_the_spectral_norm_bound_on_jacobian_products(rng):
    """g_s = g_q J_q ⋯ J_{s+1} with J_t = diag(tanh′(z_t)) W: the bound with ‖J_t‖₂ holds for every pair."""
    W = rng.normal(size=(3, 3)) * 1.3
    Js = [np.diag(1 - np.tanh(rng.normal(size=3)) ** 2) @ W for _ in range(5)]
    g = [rng.normal(size=(1, 3))]
    for J in reversed(Js):  # g_{t−1} = g_t J_t, from g_5 back to g_0
        g.insert(0, g[0] @ J)
    ok, _ = jacobians.path_bound([jacobians.spectral_norm(v) for v in g],
                                 [jacobians.spectral_norm(J) for J in Js], rtol="1e-20")
    assert ok
    # a factor below the true norm breaks it
    assert not jacobians.path_bound([jacobians.spectral_norm(v) for v in g], [0.01] * 5)[0]


def test_a_zero_bound_is_exceeded_by_any_nonzero_sensitivity():
    assert not jacobians.path_bound([1, 0], [5])[0]  # ‖g_0‖ = 1 > ‖g_1‖ · 5 = 0
    assert jacobians.path_bound([0, 0], [5])[0]


def test_lengths_must_match():
    with pytest.raises(ShapeError):
        jacobians.path_bound([1, 2, 3], [2])
    with pytest.raises(ShapeError):
        jacobians.path_bound([1], [])
