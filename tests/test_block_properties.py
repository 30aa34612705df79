"""Regressions found by the property-based checks of every public block (issue 12)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from symseq import (ConventionError, EvaluationError, Ledger, MaskError, ShapeError, blocks, evaluate, exact,
                    ops)
from symseq.blocks import Mask, masks


# ---------------------------------------------------------------------------
# regressions: the bugs these properties found, each in its smallest form
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0, sp.oo, -sp.oo, sp.nan, sp.zoo, sp.I])
def test_attention_scale_must_be_a_finite_nonzero_real(scale):
    """A zero divisor gave a late 'row S evaluates to inf'; an infinite one gave uniform weights silently."""
    L = Ledger()
    Q, K, V = L.input("Q", [[1, 2]]), L.input("K", [[1, 0], [0, 1]]), L.input("V", [[1], [3]])
    with pytest.raises(ConventionError, match=r"scale .*finite nonzero .*got .*torch's scale= is its reciprocal"):
        blocks.scaled_dot_product(L, Q, K, V, scale=scale)
    assert len(L) == 3  # no row appended


def test_attention_scale_is_a_divisor_and_may_be_negative_or_symbolic():
    L = Ledger()
    Q, K, V = L.input("Q", [[1, 2]]), L.input("K", [[1, 0], [0, 1]]), L.input("V", [[1], [3]])
    head = blocks.scaled_dot_product(L, Q, K, V, scale=-2)
    assert L.value(head.S.name) == sp.Matrix([[-sp.Rational(1, 2), -1]])
    s = L.input("s")  # a symbolic divisor (a scalar of the ledger) is not judged
    blocks.scaled_dot_product(L, Q, K, V, scale=s, tag="(2)")


def test_a_batch_validity_mask_given_as_a_vector_is_described_as_batch_by_positions():
    """It was 'must be a matrix (queries × sources)', the words of an attention mask."""
    with pytest.raises(ShapeError, match=r"must be a matrix \(one row per batch item, one entry per position\); "
                                         r"got an array of shape \(2,\)"):
        masks.batch_validity([1, 0])
    L = Ledger()
    Hs = [L.input(f"H_{b}", [[1, 2], [3, 4]]) for b in range(2)]
    with pytest.raises(ShapeError, match=r"pooling mask must be a matrix \(one row per batch item"):
        blocks.masked_mean_pool(L, Hs, [1, 1])
    with pytest.raises(ShapeError, match=r"must be a matrix \(queries × sources\)"):  # attention keeps its words
        masks.check([1, 0])


@pytest.mark.parametrize("target", [0.7, 1.0, True, "1"])
def test_cross_entropy_refuses_a_target_that_is_not_an_integer(target):
    """int(0.7) silently scored class 0, and True class 1."""
    L = Ledger()
    Z = L.input("Z", [[1, 2, 3], [3, 4, 5]])
    with pytest.raises(ShapeError, match=rf"a target must be an integer class index in 0..2; got {target!r}"):
        blocks.cross_entropy(L, Z, [0, target])
    with pytest.raises(ShapeError, match=r"targets \[3\] are outside 0..2 \(3 classes\)"):
        blocks.cross_entropy(L, Z, [0, 3])
    assert len(L) == 1  # refused before any row is appended
    blocks.cross_entropy(L, Z, [np.int64(0), 2])  # NumPy integers are integers


@pytest.mark.parametrize("positions, says", [
    ([-1], r"scored positions \[-1\] are outside 0..1 \(Z has 2 rows; a negative position is not read from the end\)"),
    ([2], r"scored positions \[2\] are outside 0..1"),
    ([0.5], r"a scored position must be an integer row index .*got 0.5"),
    ([], r"no scored position"),
])
def test_cross_entropy_refuses_positions_outside_the_rows_and_none(positions, says):
    """−1 silently scored the last row (Python's negative index), and no position was an IndexError."""
    L = Ledger()
    Z = L.input("Z", [[1, 2], [3, 4]])
    with pytest.raises(ShapeError, match=says):
        blocks.cross_entropy(L, Z, [0] * len(positions), positions=positions)
    assert len(L) == 1  # no row appended


def test_masked_cross_entropy_takes_validity_as_a_mask():
    """A Mask (Mask.exclude of a padding mask) was a TypeError: 'Mask' object is not iterable."""
    L = Ledger()
    Z0, Z1 = L.input("Z_0", [[0, 1], [2, 0]]), L.input("Z_1", [[1, 1]])
    one = blocks.masked_cross_entropy(L, Z0, [1, 0], Mask.exclude([False, True]), name="one")
    batch = blocks.masked_cross_entropy(L, [Z0, Z1], [[1, 0], [0]], [Mask.exclude([False, True]), [1]],
                                        name="batch", tag="_b")
    assert abs(sp.N(L.value(one.loss.name) - sp.log(1 + sp.exp(-1)), 50)) < 1e-45  # row 0 only: log(1 + e) − 1
    assert abs(sp.N(L.value(batch.loss.name) - (sp.log(1 + sp.exp(-1)) + sp.log(2)) / 2, 50)) < 1e-45


@pytest.mark.parametrize("positions", [[1.5], [True], ["0"]])
def test_regression_head_refuses_a_time_step_that_is_not_an_integer(positions):
    """int(1.5) silently read the state h_1."""
    L = Ledger()
    hs = [L.input(f"h_{t}", [[1, 2]]) for t in range(3)]
    with pytest.raises(ShapeError, match=r"positions: a time step must be an integer in 0..2; got"):
        blocks.regression_head(L, hs, L.parameter("W_o", [[1, 1]]), positions=positions)


def test_positions_take_numpy_integer_sizes():
    """np.int64(3) (a size read from an array's shape) was refused as 'not a positive integer'; masks took it."""
    L = Ledger()
    P = blocks.positions(L, np.int64(3), np.int64(2))
    assert L.value(P.name) == blocks.sinusoidal_positions(3, 2)
    table = L.parameter("P_table", [[1, 2], [3, 4], [5, 6]])
    Pl = blocks.learned_positions(L, table, np.int64(2), name="P_learned")
    assert L.value(Pl.name) == sp.Matrix([[1, 2], [3, 4]])
    assert blocks.angular_frequencies(np.int64(4))[2] == sp.Rational(1, 100)
    for bad in (0, -1, 2.0, True, "3"):
        with pytest.raises(ShapeError, match=r"T \(the number of positions\) must be a positive integer; got"):
            blocks.sinusoidal_positions(bad, 2)


@pytest.mark.parametrize("base", [sp.oo, sp.I, sp.nan, 1, -2, "1/2"])
def test_positions_refuse_a_base_that_is_not_a_finite_number_above_one(base):
    """base = ∞ gave ω = (1, 1, 0, 0, …) silently (sines and cosines of t alone); base = i was a TypeError."""
    with pytest.raises(ConventionError, match=r"the positional base must be a finite number greater than 1 .*; got"):
        blocks.angular_frequencies(4, base=base)
    L = Ledger()
    with pytest.raises(ConventionError, match=r"positional base must be a finite number greater than 1"):
        blocks.positions(L, 2, 4, base=base)


def test_a_mask_of_sympy_booleans_is_read_as_booleans():
    """sp.Integer(j) <= i is SymPy's true: it was refused as 'entry is True; … holds True/False'."""
    causal = [[sp.Integer(j) <= i for j in range(3)] for i in range(3)]
    assert causal[1][0] is sp.S.true
    assert np.array_equal(masks.check(causal), masks.causal(3))
    assert np.array_equal(Mask.exclude([[sp.S.false, sp.S.true]]).allowed, [[True, False]])
    with pytest.raises(MaskError, match=r"Mask.additive takes|additive mask holds 0"):
        Mask.additive([[sp.S.true]])
