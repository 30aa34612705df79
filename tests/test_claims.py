"""Claims: the half-unit rule, significant digits, exact formulas, and clear reports."""

import pytest
import sympy as sp

from symseq import ClaimError, ClaimMismatch, Ledger, blocks
from symseq.verify.claims import Claim
from symseq.read import read_number, read_printed

W = 1 / (1 + sp.exp(1 / sp.sqrt(2)))
P = 1 / (1 + sp.exp(-2 * (1 - W)))


def value_claim(printed, value, **kw):
    c = Claim(printed, "value", value, derivation="t", source="000_test.txt", location="§4", **kw)
    return c.check()


def test_half_unit_of_the_last_printed_digit():
    assert value_claim("0.792412", P).ok
    assert value_claim("0.7924", P).ok
    r = value_claim("0.792413", P)
    assert r.status == "mismatch"
    assert r.rounded == ["0.792412"]
    assert r.errors[0] == pytest.approx((0.792413 - 0.7924115042487464) / 1e-6, abs=1e-3)
    assert "correct 0.792412" in r.message


def test_boundary_is_decided_exactly():
    # 0.125 printed as 0.13 or 0.12: both within half a unit (a tie)
    assert value_claim("0.13", sp.Rational(1, 8)).ok
    assert value_claim("0.12", sp.Rational(1, 8)).ok
    assert not value_claim("0.12", sp.Rational(1, 8) + sp.Rational(1, 10**40)).ok


def test_significant_digits_of_a_table():
    assert value_claim("0.15", sp.Rational(1502, 10000), digits=3).ok
    assert not value_claim("0.15", sp.Rational(1506, 10000), digits=3).ok  # 0.151 at three digits
    assert value_claim("0.15", sp.Rational(1506, 10000)).ok  # as printed: half of 0.01
    assert value_claim("-1.09", -sp.Rational(1094, 1000), digits=3).ok
    assert value_claim("0.00930", sp.Rational(9304, 1000000), digits=3).ok
    assert value_claim("0", sp.S.Zero, digits=3).ok
    assert not value_claim("0", sp.Rational(1, 10**6), digits=3).ok


def test_exact_claims_compare_formulas():
    assert value_claim(r"\frac{1}{1+e^{1/\sqrt{2}}}", W).ok
    assert value_claim("1/(1+e^{1/√2})", W).ok
    assert value_claim("1/(1+e^{-2(1-w)})", P, names={"w": W}).ok
    assert not value_claim("1/(1+e^{-2(1-w)})", W, names={"w": W}).ok
    assert value_claim("(0,4)", sp.Matrix([[0, 4]])).ok
    assert not value_claim("(0,4)", sp.Matrix([[0, sp.Rational(41, 10)]])).ok  # integers are exact claims


def test_latex_fractions_without_braces_and_products_with_times():
    assert value_claim(r"\tfrac25", sp.Rational(2, 5)).ok
    assert value_claim(r"\frac12+\tfrac1{10}", sp.Rational(3, 5)).ok
    assert not value_claim(r"\tfrac25", sp.Rational(1, 4)).ok  # \tfrac25 is 2/5, never 25 or 2/50
    assert value_claim("1×1.131+1×0", sp.Rational(1131, 1000)).ok
    # a formula is decided exactly: 1×0.283+1×0.283 = 0.566 ≠ 0.4√2
    assert not value_claim("1×0.283+1×0.283", sp.Rational(2, 5) * sp.sqrt(2)).ok
    r = value_claim(r"\frac123", sp.Rational(3, 2))
    assert r.status == "error" and "unexpected '3' after a complete expression" in r.message


def test_unreadable_printed_strings_are_named():
    r = value_claim("0.79.2412", P)
    assert r.status == "error" and "0.79.2412" in r.message
    r = value_claim("1/(1+e^{x})", W)
    assert r.status == "error" and "'x'" in r.message
    r = value_claim("(1,2,3)", sp.Matrix([[1, 2]]))  # readable, but the text prints another shape: wrong
    assert r.status == "mismatch" and r.message.startswith("wrong shape") and "3 entries" in r.message


def test_assert_ok_raises_a_mismatch_with_location():
    c = Claim("0.792413", "value", P, derivation="t", source="000_test.txt", location="§4", what="p(B|AB)")
    with pytest.raises(ClaimMismatch, match=r"000_test.txt §4 \(p\(B\|AB\)\).*correct 0.792412"):
        c.assert_ok()


def test_record_has_thirty_digits():
    c = Claim("0.792412", "value", P, derivation="t", source="s", location="§4")
    rec = c.record()
    (value,) = rec["value"]
    assert rec["shape"] == [] and value.startswith("0.79241150424874644354")
    assert len(value.replace("0.", "", 1)) >= 30
    assert rec["status"] == "ok" and rec["digits"] == 6


def test_shapes_read_with_dimension_names():
    c = Claim("T×d_k", "shape", (4, 2), names={"T": sp.Integer(4), "d_k": sp.Integer(2)})
    assert c.check().ok
    c = Claim("T×d_k", "shape", (2, 4), names={"T": sp.Integer(4), "d_k": sp.Integer(2)})
    assert c.check().status == "mismatch"


def test_printed_forms():
    assert read_printed("[2,0.6 | 0.6,2]").shape == (1, 4)
    assert read_printed("[[1,0],[0,1]]").shape == (2, 2)
    assert read_printed(r"\begin{array}{cc}1& 0\\ 0& 1\end{array}").shape == (2, 2)
    assert read_number("0.00930").sig_digits() == 3
    with pytest.raises(ClaimError, match="shape"):
        read_printed("4", shape=True)


def test_claims_on_a_ledger_value():
    L = Ledger()
    H = L.input("H", sp.eye(2))
    eye = sp.eye(2)
    head = blocks.attention_head(L, H, L.parameter("W_Q", eye), L.parameter("W_K", eye), L.parameter("W_V", eye),
                                 orientation="in_out", mask="causal")
    assert Claim("0.330238", "value", head.A[1, 0]).check().ok
    assert Claim("(0.330238, 0.669762)", "value", head.A[1, :]).check().ok


def test_exact_claim_on_a_numeric_only_ledger_keeps_its_digits():
    # Without exact forms the claim is decided from mpmath values; 1/5 is not a binary fraction, so the
    # printed target must be converted at the working precision, not at mpmath's default 15 digits.
    L = Ledger("numeric only", exact_forms=False)
    X = L.input("X", [["0.2", "0.9"]])
    Y = L.define("Y", X + X)
    c = Claim("(0.4,1.8)", "value", Y, derivation="t", source="000_test.txt", location="§1", exact=True)
    assert c.check().ok, c.check().message
    c2 = Claim("(0.4,1.8)", "value", Y + sp.Rational(1, 10**30), derivation="t", source="000_test.txt",
               location="§1", exact=True)
    assert c2.check().status == "mismatch"


def test_integers_in_a_significant_digit_table_are_rounded():
    assert value_claim("2", sp.Rational(2001, 1000), digits=3).ok  # 2 stands for 2.00
    assert not value_claim("2", sp.Rational(2006, 1000), digits=3).ok
    assert not value_claim("2", sp.Rational(2001, 1000)).ok  # without digits an integer is exact


def test_declared_multi_letter_names_are_one_symbol():
    """Shapes such as T×Vocab, T_max×D and B×n_head×T^2 read declared names whole (Handout #11, Week 7)."""
    from symseq.read import read_printed

    assert read_printed("T×Vocab", {"T": 3, "Vocab": 5}, shape=True).entries == [3, 5]
    assert read_printed("B×n_head×T^2", {"B": 2, "n_head": 3, "T": 2}, shape=True).entries == [2, 3, 4]
    with pytest.raises(ClaimError, match="'Vocab' is neither a number nor a name"):
        read_printed("T×Vocab", {"T": 3}, shape=True)


def test_a_failing_check_is_an_error_not_a_crash():
    c = Claim("a property", "property", lambda: 1 / 0, derivation="t", source="s", location="§1")
    r = c.check()
    assert r.status == "error" and "ZeroDivisionError" in r.message


def test_a_claim_is_decided_again_at_a_higher_precision():
    L = Ledger("precision")
    x = L.input("x", "2")
    r = L.define("r", sp.sqrt(x))
    c = Claim("1.41421356", "value", r, ledger=L)
    v20, v80 = c.check(20), c.check(80)
    assert v20.method == "20 digits" and v80.method == "80 digits"
    true = str(sp.N(sp.sqrt(2), 45))[:39]
    assert v80.values[0][:39] == true  # 80 working digits: every shown digit right
    assert v20.values[0][:20] == true[:20] and v20.values[0][:39] != true  # 20 digits: the tail is noise
    assert c.check() is v80  # no precision asked: the latest result
    assert c.check(20) is v20  # each precision decided once


def test_claims_share_their_derivation_values_and_own_nothing_globally():
    from symseq import Derivation
    from symseq.values import Values

    d = Derivation("t-values", title="t", source="t.txt")

    @d.section("§1")
    def one(s):
        L = s.ledger()
        y = L.define("y", 2 * L.input("x", "0.5"))
        s.claim("1", y)
        s.claim("1.0", y)

    a, b = d.claims
    assert a.values is b.values is d.values and isinstance(d.values, Values)
    assert a.check().ok and b.check().ok
    assert not hasattr(__import__("symseq.verify.claims", fromlist=["x"]), "CACHE")


def test_a_printed_decimal_near_a_rounding_boundary_is_noted_with_the_float_digits():
    """0.031450001 rounds to 0.0315, but lies 0.001% of a unit above the boundary 0.03145: float32 (0.0314499997)
    prints 0.0314, float64 prints 0.0315. The claim holds and carries the note; a value far from it carries none."""
    L = Ledger("near a boundary")
    X = L.input("X", [[sp.Rational(31450001, 10**9), sp.Rational(3, 10)]])
    near = Claim("0.0315", "value", X[0, 0], location="s")
    result = near.check()
    assert result.ok and len(result.fragile) == 1
    note = result.fragile[0]
    assert "printed 0.0315 lies 0.001% of a unit from the rounding boundary 0.03145" in note
    assert note.endswith("float32 prints 0.0314, float64 prints 0.0315")
    assert Claim("0.300", "value", X[0, 1], location="s").check().fragile == []
    assert Claim("0.0315", "value", sp.Rational(3149, 100000), location="s").check().fragile == []  # 0.4 unit away
    assert near.record()["fragile"] == [note]


def test_a_number_printed_in_scientific_notation_gets_its_correct_rounding_in_the_same_form():
    """torch prints 8.69e-02 (sci_mode): the correct rounding reads 8.68e-02, not 0.0868, so the audit's digit at
    fault is the mantissa's (a worked example, ``attn-backprop-demo-notebook.md``)."""
    from symseq.audit import digit_fault

    r = value_claim("8.69e-02", sp.Rational(868, 10000) + sp.Rational(3, 10**6))
    assert r.status == "mismatch" and r.rounded == ["8.68e-02"]
    assert digit_fault("8.69e-02", r.rounded[0]) == "2nd decimal: printed 9, correct 8"
    assert value_claim("-2.54e-04", sp.Rational(-12715, 10**8)).rounded == ["-1.27e-04"]
    assert value_claim("9.99E-3", sp.Rational(9996, 10**6)).rounded == ["1.00E-2"]  # the carry moves the exponent
    assert value_claim("1.5e+3", 1549).rounded == ["1.5e+3"] and value_claim("0.00e+00", 0).ok


def test_exact_equality_decides_by_digits_before_simplifying(monkeypatch):
    from symseq.verify import claims as module

    calls = []
    monkeypatch.setattr(module.sp, "simplify", lambda d: calls.append(d) or d)
    w = 1 / (1 + sp.exp(1 / sp.sqrt(2)))
    # different numbers (Week 8's w against 1 − w) never reach simplify
    assert module._equal_exact(w, 1 - w) == (False, "exact") and not calls
    # Week 8's p(B|AB) written two ways: 41 operations, equal to 60 digits, not simplified
    a = sp.exp(sp.exp(1 / sp.sqrt(2)) / (1 + sp.exp(1 / sp.sqrt(2))) + 1)
    a = a / (sp.exp(1 / (1 + sp.exp(1 / sp.sqrt(2)))) + a)
    b = 1 / (sp.exp(-2 + 2 / (1 + sp.exp(1 / sp.sqrt(2)))) + 1)
    assert sp.count_ops(sp.expand(a - b)) > module.SIMPLIFY_OPS
    assert module._equal_exact(a, b) == (True, "equal to 60 digits") and not calls
