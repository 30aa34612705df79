"""Losses (symseq.blocks.losses): cross-entropy in nats (Week 8 handout, 000)."""

import pytest
import sympy as sp

from symseq import Ledger, ShapeError, blocks


def test_cross_entropy_in_nats():
    L = Ledger()
    Z = L.input("Z", [[0, 0], [0, sp.log(3)]])
    ce = blocks.cross_entropy(L, Z, targets=[0, 1], reduction="sum")
    assert sp.simplify(L.value(ce.loss.name) - (sp.log(2) + sp.log(sp.Rational(4, 3)))) == 0
    with pytest.raises(ShapeError, match="2 targets for 1 scored positions"):
        blocks.cross_entropy(L, Z, targets=[0, 1], positions=[0], name="l2", tag="2")
    with pytest.raises(ShapeError, match="outside 0..1"):
        blocks.cross_entropy(L, Z, targets=[0, 5], name="l3", tag="3")
