"""A public worked example as a fixture: a coding exercise on scaled dot-product attention, with wrong answers.

Source: https://amanailab.com/code-lab/scaled-dot-product-attention, rendered in
``tests/data/examples/attn-codelab-amanailab.md`` with its derivation in
``tests/data/examples/derivations/attn_codelab_amanailab.py``.

Every output the page prints is wrong. With Q = K = I₂ the scaled scores are
I/√2 and each row puts 1/(1+e^{-1/√2}) = 0.669762 on its own key, so:

* line 15 (the worked example) and line 23 (test case 1) print
  [[1.66082, 2.66082], [2.33918, 3.33918]]; correct [[1.66048, 2.66048], [2.33952, 3.33952]];
* line 27 (test case 2, the query [1,0] against V = [[10,20],[30,40]]) prints
  [[16.60882, 26.60882]]; correct [[16.60477, 26.60477]].

Each is recomputed here in plain mpmath. The audit finds all three. The labels
``Case 1`` and ``Case 2`` of the test cases are structural (a label that opens an
item), not uncovered quantities.
"""

from __future__ import annotations

from mpmath import exp, matrix, mp, mpf, sqrt

from symseq.audit.attribution import Given
from symseq.audit import read
from symseq.cli import main

from example_helpers import EXAMPLES, rounds_to, section_lines, section_of
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "attn-codelab-amanailab.md"
NAME = "attn-codelab-amanailab"
SECTIONS = ("Scaled Dot-Product Attention", "Test Cases (2 visible · 1 hidden)")
# lines of the rendition that print inputs or computed values (never headings)
QUANTITY_LINES = (15, 17, 21, 22, 23, 26, 27)
ERRATA = {  # line: (claim, [(printed, correct), ...])
    15: ("Scaled Dot-Product Attention::Output",
         [("1.66082", "1.66048"), ("2.66082", "2.66048"), ("2.33918", "2.33952"), ("3.33918", "3.33952")]),
    23: ("Test Cases (2 visible · 1 hidden), Case 1::Expected",
         [("1.66082", "1.66048"), ("2.66082", "2.66048"), ("2.33918", "2.33952"), ("3.33918", "3.33952")]),
    27: ("Test Cases (2 visible · 1 hidden), Case 2::Expected", [("16.60882", "16.60477"), ("26.60882", "26.60477")]),
}


def attention(Q, K, V):
    """softmax(Q Kᵀ/√d_k) V in plain mpmath, rows as positions."""
    d_k = K.cols
    S = (Q * K.T) / sqrt(d_k)
    A = matrix(S.rows, S.cols)
    for i in range(S.rows):
        e = [exp(S[i, j]) for j in range(S.cols)]
        for j in range(S.cols):
            A[i, j] = e[j] / sum(e)
    return A * V


# -- the rendition and its derivation ------------------------------------------------------------------------------

def test_rendition_names_its_source():
    lines = MD.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "Source: https://amanailab.com/code-lab/scaled-dot-product-attention"
    assert "rendition" in lines[1] and "formulas" in lines[1] and "number" in lines[1]


def test_section_titles_are_the_rendition_headings(derivation):
    assert tuple(s.title for s in derivation.sections) == SECTIONS
    assert set(SECTIONS) == set(section_lines(MD))


def test_verify_finds_exactly_the_three_wrong_outputs(derivation):
    results = {c.id: c.check() for c in derivation.claims}
    assert len(results) == 5
    bad = {cid.split("::", 1)[1]: r for cid, r in results.items() if not r.ok}
    assert set(bad) == {claim for claim, _ in ERRATA.values()}
    assert all(r.status == "mismatch" for r in bad.values())
    for claim, entries in ERRATA.values():
        assert bad[claim].rounded == [correct for _, correct in entries]


def test_verify_cli_exits_1():
    assert main(["verify", "--no-bundled", "--path", str(EXAMPLES), NAME]) == 1


def test_audit_cli_exits_1(capsys):
    assert main(["audit", str(MD), "--no-bundled", "--path", str(EXAMPLES)]) == 1
    out = capsys.readouterr().out
    assert "3 wrong number(s)" in out and "missing" not in out


def test_errata_are_located_at_their_lines(report):
    located = {e.line: e for e in report.errata}
    assert set(located) == set(ERRATA)
    for line, (claim, entries) in ERRATA.items():
        e = located[line]
        assert e.source == f"{NAME}::{claim}"
        assert e.printed == ", ".join(p for p, _ in entries)
        assert e.correct == ", ".join(c for _, c in entries)
    wrong = sorted((t.line, t.text) for t in report.tokens if t.attribution.verdict == "wrong")
    assert wrong == [(15, "[1.66082, 2.66082]"), (15, "[2.33918, 3.33918]"),
                     (23, "[1.66082, 2.66082]"), (23, "[2.33918, 3.33918]"), (27, "[16.60882, 26.60882]")]
    assert report.missing == []


def test_every_printed_input_is_covered(report):
    for line in (15, 22, 26):
        vectors = [t for t in report.tokens if t.line == line and t.kind == "vector" and t.attribution.verdict != "wrong"]
        assert vectors and all(t.attribution.verdict == "covered" and isinstance(t.attribution.by, Given) for t in vectors), line


# -- the errata, recomputed without symseq -------------------------------------------------------------------------

def test_errata_recomputed_in_mpmath():
    mp.dps = 30
    eye = matrix([[1, 0], [0, 1]])
    out1 = attention(eye, eye, matrix([[1, 2], [3, 4]]))
    w = 1 / (1 + exp(-1 / sqrt(2)))
    assert mp.nstr(w, 6) == "0.669762"
    assert abs(out1[0, 0] - (w + 3 * (1 - w))) < mpf(10) ** -25
    printed1 = [["1.66082", "2.66082"], ["2.33918", "3.33918"]]
    correct1 = [["1.66048", "2.66048"], ["2.33952", "3.33952"]]
    for i in range(2):
        for j in range(2):
            # lines 15 and 23 print the same wrong matrix
            assert not rounds_to(out1[i, j], printed1[i][j]), (i, j)
            assert rounds_to(out1[i, j], correct1[i][j]), (i, j)
    out2 = attention(matrix([[1, 0]]), eye, matrix([[10, 20], [30, 40]]))
    for j, (printed, correct) in enumerate((("16.60882", "16.60477"), ("26.60882", "26.60477"))):
        assert not rounds_to(out2[0, j], printed) and rounds_to(out2[0, j], correct)  # line 27
    assert mp.nstr(out2[0, 0], 12) == "16.6047690135"


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


def test_case_labels_are_not_quantities(report):
    for line in (21, 25):
        label = min((t for t in report.tokens if t.line == line), key=lambda t: t.start)
        assert label.text == ("1" if line == 21 else "2") and label.attribution.verdict == "structural", (line, label.attribution.verdict)
    assert report.counts.uncovered == 0
