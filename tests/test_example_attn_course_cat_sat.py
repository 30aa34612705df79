"""A public worked example as a fixture: the attention scores of "The" in "The cat sat" (a course's Lesson 3).

Source: https://github.com/vukrosic/blueberry-llm-kimi-deepseek/blob/71a19b79dca80378aa5ab8d3d58dea56305328d9/_course/07_attention_mechanism/03_calculating_attention_scores.md,
rendered in ``tests/data/examples/attn-course-cat-sat.md`` with its derivation in
``tests/data/examples/derivations/attn_course_cat_sat.py``.

Every printed number of the page holds (recomputed here in plain mpmath): the
audit should exit 0. Two lines of the softmax step stand alone between blank
lines (``softmax([0.577, 0.577, 0])`` and ``Sum = 1.78 + 1.78 + 1 = 4.56``) and
must not be read as plain headings (their numbers would become structural, three
claims would be missing and the claims that follow attributed one line off); the
exponent of ``e^0.577`` is one token, not a superscript ``0`` and a quantity
``.577``; the labels ``Word 1`` ... ``Word 3`` that open each word's vectors are
structural. Only the three percentages, which the derivation does not claim, are
left uncovered.
"""

from __future__ import annotations

from fractions import Fraction

from mpmath import exp, mp, mpf, sqrt

from symseq.audit.attribution import Given
from symseq.audit import read
from symseq.cli import main

from example_helpers import EXAMPLES, rounds_to, section_lines, section_of
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "attn-course-cat-sat.md"
NAME = "attn-course-cat-sat"
SECTIONS = ("Lesson 3: Calculating Attention Scores", "Step 1: Calculate Scores", "Step 2: Scale", "Step 3: Softmax")
# lines of the rendition that print inputs or computed values (never headings)
QUANTITY_LINES = (11, 12, 13, 16, 17, 18, 21, 22, 23, 31, 32, 33, 39, 41, 42, 43, 51, 53, 54, 55, 57, 59, 60, 61)
PERCENT_LINE = 63  # "39%", "39%", "22%": a printed claim cannot be a percentage, so they are not claimed


def tokens_on(report, line: int) -> list:
    return sorted((t for t in report.tokens if t.line == line), key=lambda t: t.start)


# -- the rendition and its derivation ------------------------------------------------------------------------------

def test_rendition_names_its_source():
    lines = MD.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("Source: https://github.com/vukrosic/blueberry-llm-kimi-deepseek/blob/")
    assert lines[0].endswith("/_course/07_attention_mechanism/03_calculating_attention_scores.md")
    assert "rendition" in lines[1] and "formulas" in lines[1] and "number" in lines[1]


def test_section_titles_are_the_rendition_headings(derivation):
    assert tuple(s.title for s in derivation.sections) == SECTIONS
    assert set(SECTIONS) == set(section_lines(MD))


def test_verify_every_claim_holds(derivation):
    results = [c.check() for c in derivation.claims]
    # the 14 results, and the copies of √3, e^{s_j} and their sum that the written-out divisions and sum print
    assert len([c for c in derivation.claims if not c.location.at.startswith(("s_", "sum ", "a_"))]) >= 6
    assert {c.printed for c in derivation.claims} >= {"3", "0.577", "0", "[0.577, 0.577, 0]", "1.78", "1", "4.56",
                                                      "0.39", "0.22", "1.732"}
    assert all(r.ok for r in results), [r for r in results if not r.ok]


def test_verify_cli_exits_0():
    assert main(["verify", "--no-bundled", "--path", str(EXAMPLES), NAME]) == 0


def test_audit_finds_no_wrong_number(report):
    assert report.errata == []
    assert report.counts.wrong == 0


# -- the printed numbers, recomputed without symseq ----------------------------------------------------------------

def test_printed_numbers_recomputed_in_mpmath():
    mp.dps = 30
    q1 = [1, 0, 0]
    keys = [[1, 1, 0], [1, 1, 0], [0, 1, 1]]
    raw = [sum(a * b for a, b in zip(q1, k)) for k in keys]
    assert raw == [1, 1, 0]  # lines 31–33
    root = sqrt(3)
    assert rounds_to(root, "1.732")  # line 39
    scaled = [r / root for r in raw]
    assert rounds_to(scaled[0], "0.577") and rounds_to(scaled[1], "0.577") and scaled[2] == 0  # lines 41–43
    # the written divisions use the displayed divisor 1.732; their results round the same way
    assert rounds_to(mpf(1) / mpf("1.732"), "0.577")
    e = [exp(s) for s in scaled]
    assert rounds_to(e[0], "1.78") and rounds_to(exp(mpf("0.577")), "1.78") and e[2] == 1  # lines 53–55
    total = sum(e)
    assert rounds_to(total, "4.56") and Fraction("1.78") + Fraction("1.78") + 1 == Fraction("4.56")  # line 57
    weights = [x / total for x in e]
    assert rounds_to(weights[0], "0.39") and rounds_to(weights[1], "0.39") and rounds_to(weights[2], "0.22")
    # the divisions written with the displayed numbers round the same way (lines 59–61)
    assert rounds_to(mpf("1.78") / mpf("4.56"), "0.39") and rounds_to(1 / mpf("4.56"), "0.22")
    # the closing shares (line 63)
    assert rounds_to(100 * weights[0], "39") and rounds_to(100 * weights[2], "22")


# -- the audit's attribution ---------------------------------------------------------------------------------------

def test_no_token_is_claimed_by_another_section(report, derivation):
    spans = section_lines(MD)
    for t in report.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or t.attribution.statement is not None:
            continue
        home = next((title for title, (a, b) in spans.items() if a <= t.line <= b), None)
        owner = section_of(t.attribution, derivation)
        assert owner == home, f"line {t.line} {t.text!r} (section {home!r}) is claimed by {t.attribution.text()!r}"


def test_the_given_rows_and_step_1_are_covered(report):
    for line in (11, 12, 13, 16, 17, 18, 21, 22, 23):
        vec = [t for t in tokens_on(report, line) if t.kind == "vector"]
        assert len(vec) == 1 and vec[0].attribution.verdict == "covered" and isinstance(vec[0].attribution.by, Given), line
    for line in (31, 32, 33):
        quantities = [t for t in tokens_on(report, line) if t.attribution.verdict != "structural"]
        assert len(quantities) == 9 and all(t.attribution.verdict == "covered" for t in quantities), line


def test_no_line_holding_a_quantity_is_a_heading():
    doc = read(MD)
    heading_lines = {h.line for h in doc.headings}
    assert not heading_lines & set(QUANTITY_LINES), sorted(heading_lines & set(QUANTITY_LINES))
    assert heading_lines == {a for a, _ in section_lines(MD).values()}


def test_audit_cli_exits_0(capsys):
    assert main(["audit", str(MD), "--no-bundled", "--path", str(EXAMPLES)]) == 0
    assert "missing" not in capsys.readouterr().out


def test_softmax_lines_are_attributed_to_their_claims(report):
    def owners(line):
        return [f"page arithmetic, line {a.statement.line}" if a.statement is not None else a.claim_id.rsplit("::", 1)[0]
                for t in tokens_on(report, line) if (a := t.attribution).verdict != "structural"]

    assert [t.attribution.verdict for t in tokens_on(report, 51)] == ["covered"]
    # 1.78 + 1.78 + 1 = 4.56 and 1.78 / 4.56 = 0.39: each printed number by its claim, the copies of e^{s_j} and
    # of their sum included (so a copy edited within the statement's rounding, 1.79 + 1.78 + 1, still fails)
    softmax = f"{NAME}::Step 3: Softmax"
    assert [o.startswith(softmax) for o in owners(57)] == [True] * 4
    for line in (59, 60, 61):
        assert [o.startswith(softmax) for o in owners(line)] == [True] * 3, line
    assert all(t.attribution.verdict == "covered" for ln in (57, 59, 60, 61) for t in tokens_on(report, ln) if t.attribution.verdict != "structural")
    assert report.missing == []


def test_exponent_is_one_token():
    doc = read(MD)
    for line in (53, 54):
        texts = [t.text for t in doc.tokens if t.line == line]
        assert texts == ["0.577", "1.78"], (line, texts)


def test_only_the_percentages_are_uncovered(report):
    uncovered = [(t.line, t.text) for t in report.tokens if t.attribution.verdict == "uncovered"]
    assert uncovered == [(PERCENT_LINE, "39%"), (PERCENT_LINE, "39%"), (PERCENT_LINE, "22%")]
    for line in (10, 15, 20):
        assert [t.attribution.verdict for t in tokens_on(report, line)] == ["structural"], line
