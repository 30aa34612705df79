"""The public worked example ``positional-encoding-d4.md`` (sinusoidal positions at d_model = 4) as an audit fixture.

Source: https://github.com/sansin5982/GenAI-Fundamentals/blob/9caf9808fc6ec2a513eb7969113f95b285cb5658/chapters/Transformer/Positional_Encoding.md
(the rendition keeps every printed number, slips included; its derivation is
``tests/data/examples/derivations/positional_encoding_d4.py``).

The page's slips, each recomputed here in plain mpmath: cos(2/100) printed as -0.9988;
sin(1/100) and cos(1/100) truncated to 0.00999 and 0.9999 (and 0.60999, 1.2999 in the sums
that carry them); -0.4016 and 0.9908 for cos(2) and cos(2/100) in the first table; 0.009,
1.82, 0.018 and 0.99 in the "sample" table; 1.82 for sin(2) in the partial sum of "great".
"""

from __future__ import annotations

import mpmath
import pytest

from symseq.audit import audit_file, for_source, read
from symseq.cli import main

from example_helpers import EXAMPLES
from example_helpers import derivation  # noqa: F401 (the module's fixture)

DOC = EXAMPLES / "positional-encoding-d4.md"
NAME = "positional-encoding-d4"


@pytest.fixture(scope="module")
def report(derivation):
    assert for_source(DOC, [derivation]) == [derivation]
    return audit_file(DOC, [derivation])


def _line_of(text: str) -> int:
    """The 1-based line of the rendition that contains ``text`` (exactly one)."""
    hits = [i for i, ln in enumerate(DOC.read_text(encoding="utf-8").splitlines(), start=1) if text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


# -- independent arithmetic: plain mpmath at 30 digits, no symseq ---------------------------------------------

def _half_unit(printed: str):
    digits = printed.lstrip("-−").split(".")
    return mpmath.mpf(10) ** (-(len(digits[1]) if len(digits) > 1 else 0)) / 2


def _holds(printed: str, value) -> bool:
    """``printed`` is ``value`` rounded: within half a unit of its last digit."""
    return abs(mpmath.mpf(printed.replace("−", "-")) - value) <= _half_unit(printed)


def _pe(pos: int, j: int):
    """PE(pos, j) at d_model = 4: sin for even j, cos for odd j, frequency 10000^(-2⌊j/2⌋/4)."""
    angle = mpmath.mpf(pos) / mpmath.power(10000, mpmath.mpf(2 * (j // 2)) / 4)
    return mpmath.sin(angle) if j % 2 == 0 else mpmath.cos(angle)


def _values():
    mpmath.mp.dps = 30
    return {
        "sin(1/100)": _pe(1, 2), "cos(1/100)": _pe(1, 3), "cos(2)": _pe(2, 1), "sin(2)": _pe(2, 0),
        "sin(2/100)": _pe(2, 2), "cos(2/100)": _pe(2, 3),
        "0.6+sin(1/100)": mpmath.mpf("0.6") + _pe(1, 2), "0.3+cos(1/100)": mpmath.mpf("0.3") + _pe(1, 3),
    }


# (line text, quantity, printed, correct): every slip of the page, with its correct rounding
SLIPS = [
    ("PE(1)=[0.841,0.540,0.00999,0.9999]", "sin(1/100)", "0.00999", "0.01000"),
    ("PE(1)=[0.841,0.540,0.00999,0.9999]", "cos(1/100)", "0.9999", "1.0000"),
    ("cos(\\frac{2}{100}) ≈ -0.9988", "cos(2/100)", "-0.9988", "0.9998"),
    ("| 1        | \\[0.84, 0.54, 0.00999, 0.9999]", "sin(1/100)", "0.00999", "0.01000"),
    ("| 1        | \\[0.84, 0.54, 0.00999, 0.9999]", "cos(1/100)", "0.9999", "1.0000"),
    ("\\[0.909, -0.4016, 0.02, 0.9908]", "cos(2)", "-0.4016", "-0.4161"),
    ("\\[0.909, -0.4016, 0.02, 0.9908]", "cos(2/100)", "0.9908", "0.9998"),
    ("`[0.84, 0.54, 0.009, 1.00]`", "sin(1/100)", "0.009", "0.010"),
    ("`[1.82, -0.42, 0.018, 0.99]`", "sin(2)", "1.82", "0.91"),
    ("`[1.82, -0.42, 0.018, 0.99]`", "sin(2/100)", "0.018", "0.020"),
    ("`[1.82, -0.42, 0.018, 0.99]`", "cos(2/100)", "0.99", "1.00"),
    ("`[0.91 + 1.82, -0.44 + (-0.42), ...]`", "sin(2)", "1.82", "0.91"),
    ("| is    | \\[0.2, 0.1, 0.6, 0.3] | \\[0.841", "sin(1/100)", "0.00999", "0.01000"),
    ("| is    | \\[0.2, 0.1, 0.6, 0.3] | \\[0.841", "cos(1/100)", "0.9999", "1.0000"),
    ("| is    | \\[0.2, 0.1, 0.6, 0.3] | \\[0.841", "0.6+sin(1/100)", "0.60999", "0.61000"),
    ("| is    | \\[0.2, 0.1, 0.6, 0.3] | \\[0.841", "0.3+cos(1/100)", "1.2999", "1.3000"),
]


@pytest.mark.parametrize("where, quantity, printed, correct", SLIPS)
def test_slips_recomputed_in_mpmath(where, quantity, printed, correct):
    value = _values()[quantity]
    assert not _holds(printed, value), f"{quantity} = {value}: {printed} would be a correct rounding"
    assert _holds(correct, value), f"{quantity} = {value}: {correct} is not its rounding"
    _line_of(where)


def test_the_printed_values_that_hold_recomputed_in_mpmath():
    v = _values()
    mpmath.mp.dps = 30
    for printed, value in (("0.841", mpmath.sin(1)), ("0.540", mpmath.cos(1)), ("0.909", v["sin(2)"]),
                           ("-0.416", v["cos(2)"]), ("0.02", v["sin(2/100)"]), ("0.9998", v["cos(2/100)"]),
                           ("1.309", mpmath.mpf("0.4") + v["sin(2)"]), ("-0.116", mpmath.mpf("0.3") + v["cos(2)"]),
                           ("0.92", mpmath.mpf("0.9") + v["sin(2/100)"]), ("1.0998", mpmath.mpf("0.1") + v["cos(2/100)"]),
                           ("-0.42", v["cos(2)"]), ("0.84", mpmath.sin(1)), ("0.54", mpmath.cos(1))):
        assert _holds(printed, value), (printed, value)


# -- the audit as it stands -----------------------------------------------------------------------------------

def test_cli_exit_code_is_one_for_a_page_with_errata(capsys):
    code = main(["audit", str(DOC), "--no-bundled", "--path", str(EXAMPLES)])
    out = capsys.readouterr().out
    assert code == 1
    assert "positional-encoding-d4.md:" in out and "wrong" in out


def _erratum(report, line: int):
    hits = [e for e in report.errata if e.line == line]
    assert len(hits) == 1, (line, [(e.line, e.printed) for e in report.errata])
    return hits[0]


@pytest.mark.parametrize("where, printed, correct", [
    ("PE(1)=[0.841,0.540,0.00999,0.9999]", "0.00999", "0.01000"),
    ("cos(\\frac{2}{100}) ≈ -0.9988", "-0.9988", "0.9998"),
    ("`[0.84, 0.54, 0.009, 1.00]`", "0.009", "0.010"),
    ("`[1.82, -0.42, 0.018, 0.99]`", "1.82, 0.018, 0.99", "0.91, 0.020, 1.00"),
    ("`[0.91 + 1.82, -0.44 + (-0.42), ...]`", "1.82", "0.91"),
])
def test_errata_found_at_their_lines(report, where, printed, correct):
    e = _erratum(report, _line_of(where))
    assert printed in e.printed.split(", ") or e.printed == printed
    assert correct in e.correct.split(", ") or e.correct == correct
    assert e.source.startswith(NAME + "::") or (e.kind == "arithmetic" and where.startswith("cos"))  # written out


def test_the_correct_lines_are_covered(report):
    covered = {(t.line, t.text) for t in report.tokens if t.attribution.verdict == "covered"}
    for where, text in (("PE(0)=[sin(0),cos(0),sin(0),cos(0)]=[0,1,0,1]", "[0,1,0,1]"),
                        ("sin(1)≈0.841", "0.841"), ("cos(1)≈0.540", "0.540"),
                        ("PE(2)=[0.909,−0.416,0.02,0.9998]", "[0.909,−0.416,0.02,0.9998]"),
                        ("**FinalInput** = [0.45, 0.68, 0.12, 1.99]", "[0.45, 0.68, 0.12, 1.99]"),
                        ("**Embedding** = [0.45, -0.32, 0.12, 0.99]", "[0.45, -0.32, 0.12, 0.99]"),
                        ("`[0.00, 1.00, 0.00, 1.00]`", "[0.00, 1.00, 0.00, 1.00]"),
                        ("`[0.22 + 0.84, 0.11 + 0.54, ...]`", "0.22"), ("`[0.22 + 0.84, 0.11 + 0.54, ...]`", "0.84")):
        assert (_line_of(where), text) in covered, (where, text)


def test_the_garbled_values_are_not_passed_over(report):
    """0.0.00999 and 0.0.9999 (two dots) cannot be stated as claims; they must not count as covered or structural."""
    for text in ("0.0.00999", "0.0.9999"):
        toks = [t for t in report.tokens if t.text == text]
        assert len(toks) == 1 and toks[0].attribution.verdict == "uncovered", [(t.line, t.attribution.verdict) for t in toks]


def _section_regions(derivation, doc):
    """Each section's lines: from its heading (found by its exact text) to the next section's heading."""
    titles = [s.title for s in derivation.sections]
    lines = doc.lines
    starts = []
    for t in titles:
        hits = [i for i, ln in enumerate(lines, start=1) if ln.lstrip("#").strip() == t]
        assert len(hits) == 1, (t, hits)
        starts.append((hits[0], t))
    starts.sort()
    return [(a, (starts[k + 1][0] - 1) if k + 1 < len(starts) else len(lines), t) for k, (a, t) in enumerate(starts)]


def test_no_token_is_claimed_from_another_section(report, derivation):
    doc = read(DOC)
    regions = _section_regions(derivation, doc)
    titles = [s.title for s in derivation.sections]
    for t in report.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or (t.attribution.section or ("",))[0] != NAME:
            continue
        inside = [title for a, b, title in regions if a <= t.line <= b]
        assert inside, (t.line, t.text, t.attribution)
        assert t.attribution.section[1] == inside[0], (t.line, t.text, t.attribution)


def test_every_section_title_is_a_heading_of_the_rendition(derivation):
    heads = {h.text for h in read(DOC).headings}
    for s in derivation.sections:
        assert s.title in heads, s.title


# -- structural numbers ---------------------------------------------------------------------------------------

def test_no_line_with_a_quantity_is_a_heading(report):
    doc = read(DOC)
    heading_lines = {h.line for h in doc.headings}
    quantity = {t.line for t in doc.tokens if t.kind in ("vector", "matrix") or "." in t.text}
    assert not heading_lines & quantity, sorted(heading_lines & quantity)
    line = _line_of("**[0.45,−0.32,0.12,0.99]+[0.00,1.00,0.00,1.00] = [0.45,0.68,0.12,1.99]**")
    assert {t.attribution.verdict for t in report.tokens if t.line == line} == {"covered"}


def test_escaped_bracket_vectors_in_tables(report):
    doc = read(DOC)
    for where in ("| 1        | \\[0.84, 0.54, 0.00999, 0.9999]", "| India | \\[0.1, 0.3, 0.4, 0.5] | \\[0, 1",
                  "| great | \\[0.4, 0.3, 0.9, 0.1] | \\[0.909"):
        line = _line_of(where)
        kinds = [t.kind for t in doc.tokens if t.line == line and not t.text.isdigit()]
        assert kinds and set(kinds) == {"vector"}, (line, kinds)
    assert all(e.line is not None for e in report.errata), [e.printed for e in report.errata if e.line is None]
    e = _erratum(report, _line_of("\\[0.909, -0.4016, 0.02, 0.9908]"))
    assert (e.printed, e.correct) == ("-0.4016, 0.9908", "-0.4161, 0.9998")
    e = _erratum(report, _line_of("| 1        | \\[0.84, 0.54, 0.00999, 0.9999]"))
    assert (e.printed, e.correct) == ("0.00999, 0.9999", "0.01000, 1.0000")
    is_row = _line_of("| is    | \\[0.2, 0.1, 0.6, 0.3] | \\[0.841")
    assert {(e.printed, e.correct) for e in report.errata if e.line == is_row} == {
        ("0.00999, 0.9999", "0.01000, 1.0000"), ("0.60999, 1.2999", "0.61000, 1.3000")}
    rows = {_line_of("| 1        | \\[0.84"), _line_of("| India | \\[0.1, 0.3, 0.4, 0.5] | \\[0, 1"), is_row}
    assert not [t.text for t in report.uncovered() if t.line in rows and t.kind == "vector"]


def test_vector_erratum_lists_every_wrong_entry(report):
    e = _erratum(report, _line_of("PE(1)=[0.841,0.540,0.00999,0.9999]"))
    assert (e.printed, e.correct) == ("0.00999, 0.9999", "0.01000, 1.0000")


def test_position_arguments_are_structural(report):
    expect = [("(pos = 0, 1, 2)", "0"), ("(pos = 0, 1, 2)", "1"), ("(pos = 0, 1, 2)", "2"),
              ("$$PE(1,0)=", "(1,0)"), ("$$PE(1,1)=", "(1,1)"), ("$$PE(1,2)=", "(1,2)"), ("$$PE(1,3)=", "(1,3)"),
              ("PE(1)=[0.841,0.540,0.00999,0.9999]", "1"), ("PE(2)=[0.909,−0.416,0.02,0.9998]", "2")]
    for where, text in expect:
        line = _line_of(where)
        toks = [t for t in report.tokens if t.line == line and t.text == text]
        assert toks and all(t.attribution.verdict == "structural" for t in toks), (where, text, [t.attribution.verdict for t in toks])


def test_plain_sin_is_readable():
    """A formula printed with a plain function name (sin(1), as the page prints it) reads without the backslash."""
    import sympy as sp

    from symseq.read import read_printed

    p = read_printed("sin(1)")
    assert (p.kind, p.entries) == ("expr", [sp.sin(1)])
    assert read_printed(r"\cos(2/100)").entries == [sp.cos(sp.Rational(1, 50))]
