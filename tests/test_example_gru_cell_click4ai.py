"""A public worked example as a fixture: one GRU step by hand (Click4Ai problem 131).

Source: https://click4ai.perfionixai.com/problems/gru-cell, rendered in
``tests/data/examples/gru-cell-click4ai.md`` with its derivation in
``tests/data/examples/derivations/gru_cell_click4ai.py``.

The page prints three wrong numbers: on line 45 the candidate tanh([0.55, 0.35])
as [0.500, 0.337] (correct [0.501, 0.336]) and on line 47 the new state's second
coordinate as 0.198 (correct 0.197; 0.198 is 0.587 × 0.337 from the page's own
rounded operands). Each is recomputed here in plain mpmath.

The page sets every step on a line of its own between blank lines; the audit
must not read those lines as plain headings (their numbers would be classed as
structural and the errata not located).
"""

from __future__ import annotations

from mpmath import mp, mpf, tanh, exp

from symseq.audit import read
from symseq.cli import main

from symseq.audit.attribution import Given

from example_helpers import EXAMPLES, rounds_to, section_lines, section_of
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "gru-cell-click4ai.md"
NAME = "gru-cell-click4ai"
SECTIONS = ("Formula", "Example", "Explanation", "Constraints", "Test Cases")
# lines of the rendition that print inputs or computed values of the example (never headings)
QUANTITY_LINES = (23, 25, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47)
ERRATA = {  # line: (printed, correct) for each wrong entry on it
    45: [("0.500", "0.501"), ("0.337", "0.336")],
    47: [("0.198", "0.197")],
}


# -- the rendition and its derivation ------------------------------------------------------------------------------

def test_rendition_names_its_source():
    lines = MD.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "Source: https://click4ai.perfionixai.com/problems/gru-cell"
    assert "rendition" in lines[1] and "numbers and formulas" in lines[1]


def test_section_titles_are_the_rendition_headings(derivation):
    assert tuple(s.title for s in derivation.sections) == SECTIONS
    assert set(SECTIONS) <= set(section_lines(MD))


def test_verify_finds_exactly_the_two_wrong_claims(derivation):
    results = {c.what: c.check() for c in derivation.claims}
    bad = {what: r for what, r in results.items() if not r.ok}
    assert set(bad) == {"Step 4: h_hat = tanh(...)", "Step 5: h_t"}
    assert all(r.status == "mismatch" for r in bad.values())
    assert bad["Step 4: h_hat = tanh(...)"].rounded == ["0.501", "0.336"]
    assert bad["Step 5: h_t"].rounded == ["0.300", "0.197"]
    assert len(results) == 15  # Steps 2–4's gates are the page's own arithmetic, checked by the audit


def test_verify_cli_exits_1():
    assert main(["verify", "--no-bundled", "--path", str(EXAMPLES), NAME]) == 1


def test_audit_cli_exits_1(capsys):
    assert main(["audit", str(MD), "--no-bundled", "--path", str(EXAMPLES)]) == 1
    assert "wrong number(s)" in capsys.readouterr().out


def test_audit_lists_both_wrong_claims(report):
    assert len(report.errata) == 2
    by_claim = {e.source.rsplit("::", 1)[-1]: e for e in report.errata}
    assert set(by_claim) == {"Step 4: h_hat = tanh(...)", "Step 5: h_t"}
    assert "0.501" in by_claim["Step 4: h_hat = tanh(...)"].correct
    assert "0.336" in by_claim["Step 4: h_hat = tanh(...)"].correct
    assert "0.197" in by_claim["Step 5: h_t"].correct


# -- the errata, recomputed without symseq -------------------------------------------------------------------------

def test_errata_recomputed_in_mpmath():
    mp.dps = 30
    sig = lambda v: 1 / (1 + exp(-v))  # noqa: E731
    combined = [mpf("1.0"), mpf("0.5"), mpf("0.0"), mpf("0.0")]
    W_z = [[mpf(v) for v in row] for row in (("0.3", "0.2", "0.1", "0.4"), ("0.1", "0.5", "0.3", "0.2"))]
    W_h = [[mpf(v) for v in row] for row in (("0.5", "0.1", "0.2", "0.3"), ("0.2", "0.3", "0.4", "0.1"))]
    h_prev = [mpf(0), mpf(0)]
    a_z = [sum(w * c for w, c in zip(row, combined)) for row in W_z]
    z = [sig(a) for a in a_z]
    # r_t * h = 0, so the candidate's input is the combined vector again
    a_h = [sum(w * c for w, c in zip(row, combined)) for row in W_h]
    assert all(abs(a - mpf(v)) < mpf(10) ** -25 for a, v in zip(a_h, ("0.55", "0.35")))
    h_hat = [tanh(a) for a in a_h]
    h_t = [(1 - zi) * hp + zi * hh for zi, hp, hh in zip(z, h_prev, h_hat)]
    # line 45: [0.500, 0.337] printed, [0.501, 0.336] correct
    assert not rounds_to(h_hat[0], "0.500") and rounds_to(h_hat[0], "0.501")
    assert not rounds_to(h_hat[1], "0.337") and rounds_to(h_hat[1], "0.336")
    assert mp.nstr(h_hat[0], 6) == "0.50052" and mp.nstr(h_hat[1], 6) == "0.336376"
    # line 47: [0.300, 0.198] printed, [0.300, 0.197] correct
    assert rounds_to(h_t[0], "0.300")
    assert not rounds_to(h_t[1], "0.198") and rounds_to(h_t[1], "0.197")
    # 0.198 is the product of the page's rounded operands 0.587 and 0.337
    assert abs(mpf("0.587") * mpf("0.337") - mpf("0.197819")) < mpf(10) ** -25 and rounds_to(mpf("0.197819"), "0.198")


# -- the audit's attribution ---------------------------------------------------------------------------------------

def test_no_token_is_claimed_by_another_section(report, derivation):
    spans = section_lines(MD)
    for t in report.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or t.attribution.statement is not None:
            continue
        home = next((title for title, (a, b) in spans.items() if a <= t.line <= b), None)
        owner = section_of(t.attribution, derivation)
        assert owner == home, f"line {t.line} {t.text!r} (section {home!r}) is claimed by {t.attribution.text()!r}"


def test_no_line_holding_a_quantity_is_a_heading():
    doc = read(MD)
    heading_lines = {h.line for h in doc.headings}
    assert not heading_lines & set(QUANTITY_LINES), sorted(heading_lines & set(QUANTITY_LINES))


def test_errata_are_located_at_their_lines(report):
    located = {e.line: e for e in report.errata}
    assert set(located) == set(ERRATA)
    for line, entries in ERRATA.items():
        for printed, correct in entries:
            assert printed in located[line].printed and correct in located[line].correct
    assert report.counts.wrong == 2
    assert report.counts.uncovered == 0
    wrong = {(t.line, t.text) for t in report.tokens if t.attribution.verdict == "wrong"}
    assert wrong == {(45, "[0.500, 0.337]"), (47, "[0.300, 0.198]")}


def test_test_case_2_expected_value_is_the_claims_token(report):
    row = sorted((t for t in report.tokens if t.line == 69), key=lambda t: t.start)
    assert [t.text for t in row] == ["[0.0,0.0]", "[0.0,0.0]", "[0.0, 0.0]"]
    assert isinstance(row[0].attribution.by, Given) and row[0].attribution.what == "x of test case 2"
    assert isinstance(row[1].attribution.by, Given) and row[1].attribution.what == "h of test case 2"
    assert row[2].attribution.what == "h for any W (symbolic weights, expanded)"
