"""The Values service (symseq.values): exact and mpmath values of ledger nodes, once per ledger and precision."""

import mpmath
import pytest
import sympy as sp

from symseq import ClaimError, ConventionError, Ledger, LedgerError, ops
from symseq.values import EXACT_SIZE_LIMIT, Values, ledger_of


def softmax_pair():
    """A 1×2 softmax row over the scores (0, 1/√2): its first weight is 1/(1 + e^{1/√2})."""
    L = Ledger("a softmax pair")
    S = L.input("S", [[0, 1 / sp.sqrt(2)]])
    A = L.define("A", ops.SoftmaxRows(S))
    return L, A


def test_exact_and_numeric_values_of_a_node():
    L, A = softmax_pair()
    v = Values()
    first = 1 / (1 + sp.exp(1 / sp.sqrt(2)))
    assert sp.simplify(v.exact(A[0, 0]) - first) == 0
    nums, shape = v.numeric(A[0, 0], dps=60)
    assert shape == ()
    with mpmath.workdps(70):
        assert abs(nums[0] - 1 / (1 + mpmath.exp(1 / mpmath.sqrt(2)))) < mpmath.mpf(10) ** -58
    row, shape = v.numeric(A, dps=30)
    assert shape == (1, 2) and mpmath.almosteq(row[0] + row[1], 1, 10**-29)


def test_each_precision_is_computed_at_its_own_digits():
    L, A = softmax_pair()
    v = Values()
    low, _ = v.numeric(A[0, 0], dps=20)
    high, _ = v.numeric(A[0, 0], dps=80)
    with mpmath.workdps(100):
        want = mpmath.mpf(1) / (1 + mpmath.exp(1 / mpmath.sqrt(2)))
        assert abs(high[0] - want) < mpmath.mpf(10) ** -78
        assert mpmath.mpf(10) ** -40 < abs(low[0] - want) < mpmath.mpf(10) ** -18  # 20 digits, not 80


def test_rows_evaluate_several_names_at_once_and_keep_them():
    L, A = softmax_pair()
    v = Values(dps=40)
    rows = v.rows(L, ["S", "A"])
    assert set(rows) == {"S", "A"}
    assert rows["A"].shape == (1, 2)
    assert v.rows(L, ["A"])["A"] is rows["A"]  # kept, not evaluated again


def test_exact_numbers_need_no_ledger_and_free_symbols_are_refused():
    v = Values()
    assert v.exact([["0.5", 1]]) == sp.ImmutableMatrix([[sp.Rational(1, 2), 1]])
    assert v.numeric(sp.Rational(1, 4))[0] == [mpmath.mpf("0.25")]
    with pytest.raises(ClaimError, match="free symbols"):
        v.exact(sp.Symbol("x") + 1)
    with pytest.raises(ClaimError, match="must refer to a ledger"):
        v.numeric(ops.Scalar(sp.Symbol("x")))


def test_exact_rows_leave_out_rows_too_large_to_keep():
    L = Ledger("a growing chain")
    h = L.input("x", [[sp.Rational(1, 3)]])
    for t in range(12):  # h_{t+1} = tanh(h_t) + tanh(h_t + 1/7): the exact form doubles with every step
        h = L.define(f"h_{t}", ops.Map(sp.tanh, h) + ops.Map(sp.tanh, h + sp.Rational(1, 7)))
    kept = Values().exact_rows(L)
    sizes = [sum(1 for _ in sp.preorder_traversal(kept[n])) for n in kept if n.startswith("h_")]
    assert "x" in kept and sizes and max(sizes) <= EXACT_SIZE_LIMIT
    assert len(sizes) < 12  # the deepest rows are left out


def test_ledger_of_a_node():
    L, A = softmax_pair()
    assert ledger_of(A[0, :] * 2) is L
    assert ledger_of(ops.Const(sp.eye(2))) is None
    assert ledger_of(sp.Integer(3)) is None


def test_an_mpmath_number_computed_elsewhere_is_taken_as_it_is():
    v = Values()
    with mpmath.workdps(60):
        third = mpmath.mpf(1) / 3
    nums, shape = v.numeric(third, dps=60)
    assert shape == () and nums[0] == third
    with pytest.raises(ConventionError, match="as an exact number"):
        v.exact(third)  # an mpmath number is not exact


def test_numeric_with_held_entries_recomputes_what_they_reach_only():
    """y = tanh(W x) and s = Σ y with W's entry [0, 1] held at 0.5: s is what the page gets from that W; W's other
    entries keep their values, and a row the held entry does not reach (u = 3x) keeps its value."""
    L = Ledger()
    x = L.input("x", [["0.2"], ["0.4"]])
    W = L.parameter("W", [["1", "2"], ["3", "4"]])
    y = L.define("y", ops.Map(sp.tanh, W @ x))
    u = L.define("u", x * 3)
    s = L.define("s", ops.Sum(y, None) + ops.Sum(u, None))
    v = Values()
    (got,) = v.numeric_with(s, {("W", 1): sp.Rational(1, 2)}, 40, ledger=L)
    with mpmath.workdps(40):
        want = mpmath.tanh(mpmath.mpf("0.2") + mpmath.mpf("0.5") * mpmath.mpf("0.4")) + \
            mpmath.tanh(3 * mpmath.mpf("0.2") + 4 * mpmath.mpf("0.4")) + 3 * (mpmath.mpf("0.2") + mpmath.mpf("0.4"))
        assert abs(got - want) < mpmath.mpf(10) ** -35
    (true,) = v.numeric(ops.as_node(s), 40, ledger=L)[0]  # the service's own values are untouched
    with mpmath.workdps(40):
        assert abs(true - (mpmath.tanh(mpmath.mpf("1.0")) + mpmath.tanh(mpmath.mpf("2.2")) + mpmath.mpf("1.8"))) \
            < mpmath.mpf(10) ** -35
    # a held row itself: y's entry [1] held at 0.9 (W untouched): s = tanh(1.0) + 0.9 + 1.8
    (held_y,) = v.numeric_with(s, {("y", 1): sp.Rational(9, 10)}, 40, ledger=L)
    with mpmath.workdps(40):
        assert abs(held_y - (mpmath.tanh(mpmath.mpf("1.0")) + mpmath.mpf("2.7"))) < mpmath.mpf(10) ** -35


def test_in_entries_of_writes_a_node_over_one_row_entry_by_entry():
    L = Ledger()
    W = L.parameter("W", [["1", "2"], ["3", "4"]])
    e = Values().in_entries_of(ops.Map(sp.Lambda(sp.Symbol("u"), sp.sqrt(sp.Symbol("u"))), W.T)[0, 1], "W")
    w10 = L.entry_symbols("W")[1, 0]
    assert sp.simplify(e - sp.sqrt(w10)) == 0
    with pytest.raises(LedgerError, match="refers to V too"):
        V = L.parameter("V", [["1", "2"]])
        Values().in_entries_of(W[0, :] + V, "W")
