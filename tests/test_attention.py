"""Attention blocks (symseq.blocks.attention): shapes with distinct sizes, d_k checks, masks and multi-head widths
(Week 8 handout, 000; Week 06, 004)."""

import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, MaskError, ShapeError, blocks


def test_attention_shapes_with_distinct_sizes():
    L = Ledger()
    H = L.input("H", shape=(7, 5))
    head = blocks.attention_head(L, H, L.parameter("W_Q", shape=(5, 3)), L.parameter("W_K", shape=(5, 3)),
                                 L.parameter("W_V", shape=(5, 2)), orientation="in_out", mask="causal")
    assert (head.S.shape, head.A.shape, head.O.shape) == ((7, 7), (7, 7), (7, 2))


def test_dk_mismatch_names_both_widths():
    L = Ledger()
    Q = L.input("Q", shape=(2, 3))
    K = L.input("K", shape=(2, 2))
    V = L.input("V", shape=(2, 2))
    with pytest.raises(ShapeError, match="same width d_k \\(got 3 and 2\\)"):
        blocks.scaled_dot_product(L, Q, K, V)


def test_empty_mask_row_raises_or_gives_zero_row_by_option():
    L = Ledger()
    Q = L.input("Q", [[1, 0], [0, 1]])
    allowed = np.array([[True, True], [False, False]])
    with pytest.raises(MaskError, match="query position 1"):
        blocks.scaled_dot_product(L, Q, Q, Q, mask=allowed)
    L2 = Ledger()
    Q2 = L2.input("Q", [[1, 0], [0, 1]])
    h = blocks.scaled_dot_product(L2, Q2, Q2, Q2, mask=allowed, empty_rows="zero")
    A = L2.value(h.A.name)
    assert A.row(1) == sp.Matrix([[0, 0]]) and sp.simplify(sum(A.row(0)) - 1) == 0


def test_causal_rows_sum_to_one_and_ignore_the_future():
    L = Ledger()
    H = L.input("H", shape=(3, 2))
    eye = sp.eye(2)
    h = blocks.attention_head(L, H, L.parameter("W_Q", eye), L.parameter("W_K", eye), L.parameter("W_V", eye),
                              orientation="in_out", mask="causal")
    A = L.expand(h.A.name, values=True)
    for i in range(3):
        assert sp.simplify(sum(A.row(i)) - 1) == 0
    O = L.expand(h.O.name, values=True)
    later = set(L.entry_symbols("H").row(2))
    assert not (set().union(*(e.free_symbols for e in O.row(0))) & later)
    assert set().union(*(e.free_symbols for e in O.row(2))) & later


def test_multi_head_allows_any_widths():
    L = Ledger()
    H = L.input("H", shape=(3, 5))
    heads = [(L.parameter(f"W_Q^({i})", shape=(5, 3)), L.parameter(f"W_K^({i})", shape=(5, 3)),
              L.parameter(f"W_V^({i})", shape=(5, 3))) for i in (1, 2)]
    mha = blocks.multi_head(L, H, heads, L.parameter("W_O", shape=(6, 5)), orientation="in_out")
    assert mha.concat.shape == (3, 6) and mha.out.shape == (3, 5)
    with pytest.raises(ShapeError, match="W_O"):
        blocks.multi_head(L, H, heads[:1], L.parameter("W_O2", shape=(6, 5)), orientation="in_out", tag="x")
