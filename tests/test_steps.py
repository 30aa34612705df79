"""Step claims (symseq.verify.steps, Section.step): a printed step decided from its own printed operands."""

import mpmath
import pytest
import sympy as sp

from symseq import Derivation, exact
from symseq.errors import ClaimError
from symseq.verify.steps import decide, holds


def test_a_step_holds_from_its_printed_operands():
    # the page multiplies its own rounded tanh: 2.0 × 0.4621 = 0.9242 exactly, although 2 tanh(1/2) = 0.92423
    assert holds("2.0 · 0.4621 = 0.9242") == (True, "1 link(s) hold from the printed operands")
    assert holds("2 · tanh(0.5) = 0.9242")[0]
    ok, detail = holds("2.0 · 0.4621 = 0.9243")
    assert not ok and "correct 0.9242" in detail


def test_a_chain_is_decided_link_by_link():
    links = decide("(0.1 - 0.25) / 0.364 = -0.15 / 0.364 = -0.412")
    assert [(x.kind, x.ok) for x in links] == [("rewrite", True), ("result", True)]
    links = decide("(0.1 - 0.25) / 0.364 = -0.16 / 0.364 = -0.44")  # a slip in the middle, carried on correctly
    assert [(x.kind, x.ok) for x in links] == [("rewrite", False), ("result", True)]
    # a rewrite with a rounded operand holds when the left lies within its printed rounding
    assert all(x.ok for x in decide("0.5·√2 = 0.5·1.414 = 0.707"))


def test_the_rounding_rule_is_the_claims_rule():
    # within half a unit of the last printed digit, the boundary included: 0.36401 prints 0.364
    assert holds("√0.1325 = 0.364")[0]
    assert holds("0.3645 = 0.365")[0] and holds("0.3645 = 0.364")[0] and not holds("0.36451 = 0.364")[0]
    # an integer after = is exact, after ≈ it is rounded
    assert holds("√64 = 8")[0] and not holds("0.333 + 0.333 + 0.333 = 1")[0]
    assert holds("(-0.412 + 0.137 + (-1.236) + 1.511) / 4 ≈ 0.000")[0]
    assert holds("e^{0.5} ≈ 1.6487")[0] and holds("log 2 ≈ 0.693")[0]


def test_lists_are_decided_entry_by_entry():
    link, = decide("softmax([1, 2]) = [0.269, 0.732]")
    assert not link.ok and link.wrong == [1] and link.correct == ["0.269", "0.731"]
    # the exact weights are e/(e + e²) and e²/(e + e²), checked here in plain mpmath
    with mpmath.workdps(30):
        assert mpmath.nstr(mpmath.e ** 2 / (mpmath.e + mpmath.e ** 2), 3) == "0.731"


def test_within_rounding_of_the_operands_is_said():
    link, = decide("0.333 + 0.333 + 0.333 = 1")
    assert not link.ok and link.within_rounding  # 0.3325·3 ≤ 1 ≤ 0.3335·3
    link, = decide("0.333 + 0.333 + 0.333 = 1.1")
    assert not link.ok and not link.within_rounding


def _derivation(statement, **kw):
    d = Derivation("steps-demo", title="steps", source="steps.md")

    @d.section("Step 2")
    def _(s):
        L = s.ledger()
        x = L.input("x", exact("1.1265"))
        h = L.define("h", sp.tanh(x))
        s.step(statement, **kw, result=h)

    return d


def test_section_step_is_a_claim_that_verify_decides():
    ok, = _derivation("tanh(1.1265) ≈ 0.810").claims
    assert ok.check().status == "ok"
    bad, = _derivation("tanh(1.1265) ≈ 0.809").claims  # the tutorial's slip: tanh(1.1265) = 0.80984
    r = bad.check()
    assert r.status == "mismatch" and "correct 0.810" in r.message


def test_section_step_refuses_what_it_cannot_state():
    d = _derivation("tanh(1.1265)")
    assert "does not end in a printed number" in d.sections[0].error
    d = _derivation("tanh(1.1265) ≈ 0.810", operands={"1.2": None})
    assert "not printed numbers" in d.sections[0].error
    with pytest.raises(ClaimError):
        holds_or_raise = decide("x = 1")  # noqa: F841


def test_with_result_the_printed_result_is_also_its_true_value():
    # 0.4621 + 0.4621 = 0.9242 holds from the printed numbers, but 2 tanh(0.5) = 0.924234 prints 0.9242 too: ok;
    # 0.4621 · 3 = 1.3863 holds from them, but 3 tanh(0.5) = 1.386351 prints 1.3864
    d = Derivation("steps-truth", title="steps", source="steps.md")

    @d.section("Step")
    def _(s):
        L = s.ledger()
        t = L.define("t", sp.tanh(L.input("x", exact("0.5"))))
        s.step("0.4621 + 0.4621 = 0.9242", result=2 * t, operands={"0.4621": t})
        s.step("0.4621 · 3 = 1.3863", result=3 * t, operands={"0.4621": t})

    two, three = d.claims
    assert two.check().status == "ok"
    r = three.check()
    assert r.status == "mismatch" and "not the true value" in r.message and "correct 1.3864" in r.message
    with mpmath.workdps(30):
        assert mpmath.nstr(3 * mpmath.tanh(mpmath.mpf("0.5")), 5) == "1.3864"


def test_a_result_printed_as_an_integer_after_equals_is_exact():
    """``= [2, 0.6]`` prints 2, not 1.5 to 2.5: a wrong 2 is no rounding of 2.2; after ≈ it is one."""
    (link,) = decide("0.9 · [2, 0] + 0.1 · [0, 2] + 0.1 · [4, 4] = [2, 0.6]", rounded=lambda n: False)
    assert not link.ok and not link.within_rounding and link.wrong == [0]
    (link,) = decide("0.9 · [2, 0] + 0.1 · [0, 2] + 0.1 · [4, 4] ≈ [2, 0.6]", rounded=lambda n: False)
    assert link.ok
