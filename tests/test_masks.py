"""Visibility masks: causal, key padding, combined (Week 06 handout, 004, "Padding changes visibility ...")."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import ConventionError, Ledger, MaskError, ShapeError, blocks, ops

masks = blocks.masks


def test_causal_is_the_lower_triangle_with_distinct_sizes():
    np.testing.assert_array_equal(masks.causal(3, 4), [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(masks.causal(2), [[1, 0], [1, 1]])
    assert masks.full(2, 3).all() and masks.full(2, 3).shape == (2, 3)
    with pytest.raises(ShapeError, match="T \\(queries\\) must be a positive integer; got 0"):
        masks.causal(0)


def test_key_padding_repeats_the_source_validity_on_every_query_row():
    allowed = masks.key_padding([1, 1, 0, 1, 0], T=3)
    np.testing.assert_array_equal(allowed, [[1, 1, 0, 1, 0]] * 3)
    np.testing.assert_array_equal(masks.key_padding([True, False]), [[1, 0], [1, 0]])
    with pytest.raises(MaskError, match="marks no position as valid"):
        masks.key_padding([0, 0, 0])
    with pytest.raises(ConventionError, match="True/False or 1/0; got 2"):
        masks.key_padding([1, 2])
    with pytest.raises(ShapeError, match="must be a vector"):
        masks.key_padding([[1, 0], [1, 1]])


def test_combined_padding_and_causal_mask():
    np.testing.assert_array_equal(masks.padding_causal([1, 1, 1, 0]),
                                  [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]])
    assert masks.empty_rows(masks.padding_causal([1, 1, 0])) == []
    assert masks.empty_rows(masks.padding_causal([0, 0, 1, 1])) == [0, 1]  # left padding empties the first rows
    np.testing.assert_array_equal(masks.combine([[1, 1], [0, 1]], [[1, 0], [1, 1]]), [[1, 0], [0, 1]])
    with pytest.raises(ShapeError, match="same shape .* got 2×2, 2×3"):
        masks.combine(np.ones((2, 2), bool), np.ones((2, 3), bool))
    with pytest.raises(ShapeError, match="at least one mask"):
        masks.combine()


def test_check_names_wrong_shapes_and_values():
    with pytest.raises(ShapeError, match="has shape 3×3 but the scores are 3×4"):
        masks.check(masks.causal(3), (3, 4))
    with pytest.raises(ShapeError, match="must be a matrix"):
        masks.check([1, 0, 1])
    with pytest.raises(ConventionError, match="True/False or 1/0; got 0.5"):
        masks.check([[1, 0.5]])
    with pytest.raises(ShapeError, match="is empty"):
        masks.validity([])
    with pytest.raises(ShapeError, match="has 3 entries but there are 4 positions"):
        masks.validity([1, 1, 0], 4)


def test_torch_convention_is_the_complement():
    allowed = masks.padding_causal([1, 1, 0])
    np.testing.assert_array_equal(masks.torch_convention(allowed), ~allowed)


def test_left_padding_with_a_causal_mask_is_refused_by_attention_naming_the_row():
    L = Ledger()
    Q = L.input("Q", [[1, 0], [0, 1], [1, 1]])
    with pytest.raises(MaskError, match="query position 0 has no allowed source"):
        blocks.scaled_dot_product(L, Q, Q, Q, mask=masks.padding_causal([0, 1, 1]))


def test_key_padding_gives_padded_sources_weight_zero_and_renormalises():
    L = Ledger()
    S = L.input("S", [[0, sp.log(2), 5], [sp.log(3), 0, 7]])
    A = L.define("A", ops.SoftmaxRows(S, masks.key_padding([1, 1, 0], T=2)))
    assert L.value(A.name) == sp.Matrix([[sp.Rational(1, 3), sp.Rational(2, 3), 0],
                                         [sp.Rational(3, 4), sp.Rational(1, 4), 0]])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8).filter(lambda m: m[0]))
def test_combined_mask_allows_exactly_real_sources_up_to_the_query(m):
    allowed = masks.padding_causal(m)
    T = len(m)
    for t in range(T):
        for j in range(T):
            assert allowed[t, j] == (j <= t and m[j])
    assert masks.empty_rows(allowed) == []  # right-aligned real first token: every row keeps source 0


@pytest.mark.parametrize("bad", [[[1, 0.5], [1, 1]], [[1, 2], [1, 1]], [[1, -1], [1, 1]],
                                 [["True", "False"], ["True", "True"]], [[1.0, 0.0], [1.0, 1.0]]])
def test_attention_refuses_the_masks_that_check_refuses(bad):
    """One validator: a mask entry that is not plainly true or false is refused by masks.check, by the attention
    blocks and by SoftmaxRows alike, instead of being read as "allowed"."""
    with pytest.raises(ConventionError, match="True/False or 1/0"):
        masks.check(bad)
    L = Ledger()
    X = L.input("X", [[0, 1], [2, 3]])
    with pytest.raises(ConventionError, match="True/False or 1/0"):
        ops.SoftmaxRows(X, bad)
    with pytest.raises(ConventionError, match="True/False or 1/0"):
        blocks.scaled_dot_product(L, X, X, X, mask=bad)
