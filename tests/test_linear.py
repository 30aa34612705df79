"""Linear maps (symseq.blocks.linear): the weight orientation is explicit and errors suggest the other (Week 8
handout, 000)."""

import pytest

from symseq import ConventionError, Ledger, ShapeError, blocks


def test_orientation_is_explicit_and_errors_suggest_the_other():
    L = Ledger()
    H = L.input("H", shape=(4, 5))
    W = L.parameter("W_Q", shape=(3, 5))  # stored out×in, as torch's nn.Linear
    with pytest.raises(ConventionError, match="unknown weight orientation"):
        blocks.linear(L, "Q", H, W, orientation="rows")
    with pytest.raises(ShapeError, match=r"X is 4×5 but W is 3×5.*use orientation='out_in'"):
        blocks.linear(L, "Q", H, W, orientation="in_out")
    Q = blocks.linear(L, "Q", H, W, orientation="out_in")
    assert Q.shape == (4, 3)
