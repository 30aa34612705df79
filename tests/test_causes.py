"""Errata by cause (symseq.audit.causes, symseq.verify.causes): root, propagated, rounding drift.

Every classification asserted here is recomputed independently in plain mpmath (30 digits): a step is *wrong from
its printed operands* when the value of those operands does not round to the printed result; an operand is an
*erratum* when its true value does not round to it; *drift* is a result the printed operands give, whose true value
lies within their half-units carried through the step.
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from symseq import Derivation, exact
from symseq.audit import audit, audit_file, parse, read
from symseq.audit.causes import classify
from symseq.cli import main
from symseq.verify.causes import classify_claims

from example_helpers import EXAMPLES, example_derivation

M = mpmath.mpf


@pytest.fixture(autouse=True)
def _thirty_digits():
    """Plain mpmath at 30 digits inside each test, restored after it (other modules keep their precision)."""
    with mpmath.workdps(30):
        yield


def rounds_to(x, printed: str) -> bool:
    """Whether ``x`` lies within half a unit of the last digit of ``printed`` (plain mpmath)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(x - M(printed)) <= M(5) / 10 ** (decimals + 1)


def _causes(name: str):
    md = EXAMPLES / name
    rep = audit_file(md, [example_derivation(md.stem)])
    return {(c.erratum.line, c.erratum.printed): c for c in classify(read(md), rep.errata)}


def test_rnn_notebook_one_root_per_slip_and_what_it_carries():
    c = _causes("rnn-forward-tanh-notebook.md")
    # line 34: tanh(1.1265) printed 0.809, but from that printed operand it is 0.80982 → 0.810: a root
    assert not rounds_to(mpmath.tanh(M("1.1265")), "0.809") and rounds_to(mpmath.tanh(M("1.1265")), "0.810")
    assert c[(34, "0.809")].kind == "root"
    # line 37 reuses the wrong 0.809 as an input: propagated from line 34
    assert c[(37, "0.809")].kind == "propagated" and c[(37, "0.809")].source.line == 34
    # 0.18 + 0.5·0.809 + 0.3 = 0.8845 exactly from the printed numbers, while the true z = 0.884915 (0.8849):
    # right from its inputs, wrong because 0.809 is
    assert abs(M("0.9") * M("0.2") + M("0.5") * M("0.809") + M("0.3") - M("0.8845")) < M(10) ** -25
    h1 = mpmath.tanh(M("0.98"))
    h2 = mpmath.tanh(M("0.45") + M("0.5") * h1 + M("0.3"))
    assert not rounds_to(M("0.18") + M("0.5") * h2 + M("0.3"), "0.8845")
    assert c[(37, "0.8845")].kind == "propagated" and c[(37, "0.8845")].source.printed == "0.809"
    # tanh(0.8845) = 0.70867 prints 0.709, not 0.708: a root of its own, even from the page's wrong input
    assert rounds_to(mpmath.tanh(M("0.8845")), "0.709")
    assert c[(37, "0.708")].kind == "root"
    root34 = c[(34, "0.809")]
    assert {(e.line, e.printed) for e in root34.chain} == {(37, "0.809"), (37, "0.8845")}


def test_gru_and_positional_roots():
    gru = _causes("gru-cell-click4ai.md")
    # tanh(0.55) = 0.50052 and tanh(0.35) = 0.33638: [0.500, 0.337] is wrong from the printed [0.55, 0.35]
    assert rounds_to(mpmath.tanh(M("0.55")), "0.501") and rounds_to(mpmath.tanh(M("0.35")), "0.336")
    assert gru[(45, "0.500, 0.337")].kind == "root"
    pe = _causes("positional-encoding-d4.md")
    # cos(2/100) = 0.99980 is printed −0.9988
    assert rounds_to(mpmath.cos(M(2) / 100), "0.9998")
    assert pe[(66, "-0.9988")].kind == "root"


def test_the_same_number_twice_is_not_a_copy_unless_it_is_the_same_quantity():
    c = _causes("layernorm-hello-prompt.md")
    # lines 136 and 137 both print 0.424 for two different rows' standard deviations (0.3937 and 0.4023)
    assert c[(137, "0.424")].kind == "root"


DRIFT_PAGE = """# Step

The weight is tanh(0.5) ≈ 0.4621.

Three of them: 0.4621 + 0.4621 + 0.4621 = 1.3863
"""


def _drift_derivation():
    d = Derivation("drift-demo", title="drift", source="drift.md")

    @d.section("Step")
    def _(s):
        L = s.ledger()
        x = L.input("x", exact("0.5"))
        t = L.define("t", sp.tanh(x))
        three = L.define("three", 3 * t)
        s.claim("0.4621", t, what="tanh(0.5)")
        s.step("0.4621 + 0.4621 + 0.4621 = 1.3863", result=three, operands={"0.4621": t}, what="three weights")

    return d


def test_rounding_drift_in_the_audit_and_in_verify():
    # 3·tanh(0.5) = 1.386351 prints 1.3864; the page adds its rounded 0.4621 three times: 1.3863, within 3 half-units
    t = mpmath.tanh(M("0.5"))
    assert rounds_to(t, "0.4621") and not rounds_to(3 * t, "1.3863")
    assert M("1.3863") - M("0.00015") <= 3 * t <= M("1.3863") + M("0.00015")
    d = _drift_derivation()
    doc = parse(DRIFT_PAGE, path="drift.md", fmt="markdown")
    rep = audit(doc, [d])
    assert not rep.missing
    (cause,) = classify(doc, rep.errata, claims=d.claims)
    assert cause.kind == "drift" and cause.erratum.line == 5
    (cc,) = classify_claims(d.claims)
    assert cc.kind == "drift" and cc.claim.what == "three weights"


def test_a_step_whose_operands_are_not_tied_is_never_called_drift():
    """Drift says the printed operands are right to their digits; without operands= nothing checked that (a public
    page's untied operands were themselves wrong, and verify called the step drift). Tied, it is drift as above."""
    d = Derivation("untied-demo", title="untied", source="drift.md")

    @d.section("Step")
    def _(s):
        L = s.ledger()
        t = L.define("t", sp.tanh(L.input("x", exact("0.5"))))
        s.claim("0.4621", t, what="tanh(0.5)")
        s.step("0.4621 + 0.4621 + 0.4621 = 1.3863", result=3 * L.symbol("t"), what="three weights")

    (cc,) = classify_claims(d.claims)
    assert cc.kind == "root" and "0.4621 is not tied to its quantity (operands=)" in cc.reason
    assert cc.kind != "drift"


def _rnn_derivation():
    d = Derivation("rnn-steps", title="rnn", source="rnn.md")

    @d.section("Steps")
    def _(s):
        L = s.ledger()
        h1 = L.define("h_1", sp.tanh(exact("0.98")))
        h2 = L.define("h_2", sp.tanh(exact("0.45") + exact("0.5") * h1 + exact("0.3")))
        z3 = L.define("z_3", exact("0.18") + exact("0.5") * h2 + exact("0.3"))
        s.claim("0.753", h1, what="h1")
        s.step("tanh(1.1265) ≈ 0.809", result=h2, what="h2")
        s.step("0.18 + 0.5 · 0.809 + 0.3 = 0.8845", result=z3, operands={"0.809": h2}, what="z3")
        s.step("0.5 · 0.753 = 0.3765", result=exact("0.5") * h1, operands={"0.753": h1}, what="half of h1")

    return d


def test_verify_lists_each_root_with_its_chain(capsys):
    d = _rnn_derivation()
    causes = classify_claims(d.claims)
    kinds = {c.claim.what: (c.kind, getattr(c.source, "what", None)) for c in causes}
    # tanh(1.1265) = 0.80982 → 0.810: wrong from its printed operand; 0.18 + 0.5·0.809 + 0.3 = 0.8845 holds from
    # the printed 0.809 but the true h2 = 0.80983 (0.810); 0.5·0.753 = 0.3765 is right, but the true value
    # 0.5 tanh(0.98) = 0.376533 prints 0.3765 too: it holds
    assert rounds_to(mpmath.tanh(M("1.1265")), "0.810")
    assert rounds_to(M("0.5") * mpmath.tanh(M("0.98")), "0.3765")
    assert kinds == {"h2": ("root", None), "z3": ("propagated", "h2")}
    root = next(c for c in causes if c.source is None)
    assert [x.what for x in root.chain] == ["z3"]
    from symseq.present.terminal import cause_lines
    lines = cause_lines(causes)
    assert lines[0].startswith("ROOT") and "h2" in lines[0] and lines[1].startswith("  ↳ propagated")


def test_cli_audit_prints_errata_by_cause(capsys):
    md = EXAMPLES / "rnn-forward-tanh-notebook.md"
    assert main(["--no-color", "audit", str(md), "--path", str(EXAMPLES / "derivations"), "--no-bundled"]) == 1
    out = capsys.readouterr().out
    assert "errata by cause" in out
    block = out[out.index("errata by cause"):]
    assert block.index("root") < block.index("propagated")


# -- tracing through the ledger (symseq.verify.causes.trace) ---------------------------------------------------------

def _traced_page(*rows):
    """A derivation of one section: E (input) + P (row) = H, each of ``rows`` (printed, what, key) claimed on it in
    order, with key "P1" (row 1 of P = [0.5, 0.26]), "H1" (row 1 of H = [1.1, 0.56]), "H1c0"/"H1c1" (cells of H's
    row 1), "v11" (v := P ⊙ P, its [1, 1] entry 0.0676) or "sd0" (√v[1, 0] = 0.5, to trace back through a
    function)."""
    from symseq import ops

    d = Derivation("traced", title="traced", source="traced.md")

    @d.section("Table")
    def table(s):
        L = s.ledger("E + P")
        E = L.input("E", [["0.2", "0.1"], ["0.6", "0.3"]])
        P = L.define("P", L.input("Q", [["0", "1"], ["0.5", "0.26"]]) * exact("1"))
        H = L.define("H", E + P)
        v = L.define("v", P * P)
        keys = {"P1": P[1, :], "H1": H[1, :], "H1c0": H[1, 0], "H1c1": H[1, 1], "v11": v[1, 1],
                "sd0": ops.Map(sp.Lambda(sp.Symbol("u"), sp.sqrt(sp.Symbol("u"))), v)[1, 0]}
        for printed, what, key in rows:
            s.claim(printed, keys[key], what=what)

    return d.claims


def _trace(claims, what):
    from symseq.verify.causes import trace

    return trace(next(c for c in claims if c.what == what), claims)


def test_a_table_row_computed_from_a_wrong_row_printed_before_it_is_propagated():
    # P's row 1 is [0.5, 0.26]; the page prints [0.51, 0.26], then H = E + P from it: [1.11, 0.56] (true [1.1, 0.56])
    claims = _traced_page(("[0.51, 0.26]", "P row 1", "P1"), ("[1.11, 0.56]", "H row 1", "H1"))
    assert rounds_to(M("0.6") + M("0.51"), "1.11") and not rounds_to(M("0.6") + M("0.5"), "1.11")
    found = _trace(claims, "H row 1")
    assert found.kind == "propagated" and found.source.what == "P row 1"
    assert _trace(claims, "P row 1") is None  # P's own row: nothing printed upstream of it


def test_a_row_wrong_from_the_printed_values_too_is_not_traced():
    claims = _traced_page(("[0.51, 0.26]", "P row 1", "P1"), ("[1.13, 0.56]", "H row 1", "H1"))
    assert not rounds_to(M("0.6") + M("0.51"), "1.13")
    assert _trace(claims, "H row 1") is None


def test_a_value_within_the_rounding_of_right_printed_values_is_drift():
    # P[1, 1] = 0.26 printed "0.3" (right to its digit); v[1, 1] = P[1, 1]² printed from it as 0.09 (true 0.0676,
    # 0.07): wrong, but the rounding of 0.3 ([0.25, 0.35]) carried through the square holds 0.0676
    claims = _traced_page(("[0.5, 0.3]", "P row 1", "P1"), ("0.09", "v cell", "v11"))
    assert rounds_to(M("0.26"), "0.3") and not rounds_to(M("0.26") ** 2, "0.09") and rounds_to(M("0.3") ** 2, "0.09")
    assert M("0.25") ** 2 <= M("0.26") ** 2 <= M("0.35") ** 2
    assert _trace(claims, "v cell").kind == "drift"


def test_one_cell_of_a_block_that_happens_to_follow_is_not_traced_when_its_neighbours_do_not():
    # cell 0 follows from the wrong P (0.6 + 0.51 = 1.11); cell 1, printed with it, follows from nothing (0.9)
    claims = _traced_page(("[0.51, 0.26]", "P row 1", "P1"), ("1.11", "cell 0", "H1c0"), ("0.9", "cell 1", "H1c1"))
    assert not rounds_to(M("0.3") + M("0.26"), "0.9")
    assert _trace(claims, "cell 0") is None
    claims = _traced_page(("[0.51, 0.26]", "P row 1", "P1"), ("1.11", "cell 0", "H1c0"), ("0.56", "cell 1", "H1c1"))
    assert _trace(claims, "cell 0").kind == "propagated"  # the neighbour holds: no objection


def test_a_value_printed_as_a_function_of_a_row_is_carried_back_to_the_row():
    # √v[1, 0] = |P[1, 0]| = 0.5 printed "0.52": it is carried back as v = 0.52² (ends 0.515², 0.525²); H does not
    # depend on v, so it is not traced, but P → v → √v: a claim of v's square root names v's entry
    from symseq.verify.causes import _printed_rows

    claims = _traced_page(("0.52", "sd", "sd0"))
    c = claims[0]
    from symseq.values import ledger_of

    led = ledger_of(c.quantity)
    ((key, (lo, mid, hi)),) = _printed_rows(c, led, {})
    assert key == ("v", 2) and mid == sp.Rational(52, 100) ** 2
    assert lo == sp.Rational(515, 1000) ** 2 and hi == sp.Rational(525, 1000) ** 2


def test_verify_lists_a_step_of_the_notebook_as_propagated_from_the_gradient_it_printed():
    """``symseq verify`` on the BPTT notebook (no s.step): W after one step is W − 0.001·dlossdW from the printed,
    wrong dlossdW, and U's step broadcasts the printed 2-vector over U's rows as NumPy does."""
    from symseq.verify.report import verify

    report = verify([example_derivation("rnn-bptt-numpy-notebook")], 50)
    by_what = {c.claim.what: c for c in report.causes}
    assert by_what["W after one step"].kind == "propagated"
    assert by_what["W after one step"].source.what == "dlossdW, ∂loss/∂W"
    assert by_what["U after one step"].kind == "propagated"
    assert by_what["U after one step"].source.what == "dlossdU, ∂loss/∂U (2×2)"
    assert by_what["dlossdW, ∂loss/∂W"].kind == "root"
    # in plain mpmath: the printed step is W − 0.001 · printed dlossdW, the true step is not
    assert rounds_to(M("2.0") - M("0.001") * M("0.00034735"), "1.99999965")
    assert rounds_to(M("4.0") - M("0.001") * M("0.00212484"), "3.99999788")  # U[1, 1] − η · dU[1] (broadcast)
    assert not rounds_to(M("2.0") - M("0.001") * M("-0.00309605732938"), "1.99999965")
