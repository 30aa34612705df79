"""A public worked example as a fixture: a three-step scalar tanh RNN by hand and in numpy (tutorial notebook).

Source: AyanPaul2210/Deep-Learning-Tutorial, notebook 48 (URL on line 1 of
``tests/data/examples/rnn-forward-tanh-notebook.md``); derivation in
``tests/data/examples/derivations/rnn_forward_tanh_notebook.py``.

The hand solution truncates where it should round and carries the cut values
on: h2 = 0.809829 is written 0.809 (line 34, and again as an operand on line 37),
the third preactivation 0.884915 is written 0.8845 (from the cut 0.5 × 0.809)
and h3 = 0.708873 is written 0.708. The numpy output at the end is right. Each
erratum is recomputed here in plain mpmath.
"""

from __future__ import annotations

from mpmath import mp, mpf, tanh

from symseq.audit import read
from symseq.cli import main

from example_helpers import EXAMPLES, rounds_to, section_lines, section_of
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "rnn-forward-tanh-notebook.md"
NAME = "rnn-forward-tanh-notebook"
SECTIONS = ("Problem Statement", "Manual Solution", "Compute hidden states for the sequence")
# the rendition's headings: Markdown ones and the notebook's one-line captions above its code cells
PLAIN_HEADINGS = ("Import required library", "Given parameters", "Define the tanh activation function",
                  "Compute hidden states for the sequence")
QUANTITY_LINES = (7, 8, 9, 12, 13, 14, 31, 34, 37, 82, 83, 84)
ERRATA = {  # (line, printed): correct
    (34, "0.809"): "0.810",
    (37, "0.809"): "0.810",
    (37, "0.8845"): "0.8849",
    (37, "0.708"): "0.709",
}


# -- the rendition and its derivation ------------------------------------------------------------------------------

def test_rendition_names_its_source():
    lines = MD.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("Source: https://github.com/AyanPaul2210/Deep-Learning-Tutorial/blob/")
    assert "rendition" in lines[1] and "numbers and formulas" in lines[1]


def test_section_titles_are_the_rendition_headings(derivation):
    assert tuple(s.title for s in derivation.sections) == SECTIONS
    assert set(SECTIONS) <= set(section_lines(MD, PLAIN_HEADINGS))


def test_verify_finds_the_two_wrong_claims(derivation):
    """The derivation claims only what true values decide (step 3's operand h2 and its preactivation); the hand
    steps' own arithmetic, tanh(1.1265) ≈ 0.809 and tanh(0.8845) ≈ 0.708 included, is the audit's to check."""
    bad = {(str(c.location), c.printed): c.check() for c in derivation.claims if not c.check().ok}
    assert {k: r.rounded for k, r in bad.items()} == {
        ("Manual Solution", "0.809"): ["0.810"],
        ("Manual Solution", "0.8845"): ["0.8849"],
    }
    assert len(derivation.claims) == 5


def test_verify_cli_exits_1():
    assert main(["verify", "--no-bundled", "--path", str(EXAMPLES), NAME]) == 1


def test_audit_cli_exits_1(capsys):
    assert main(["audit", str(MD), "--no-bundled", "--path", str(EXAMPLES)]) == 1
    out = capsys.readouterr().out
    assert "31 quantity tokens — 27 covered, 4 wrong, 0 uncovered" in out


def test_audit_errata_at_their_lines(report):
    found = {(e.line, e.printed): e.correct for e in report.errata}
    assert found == ERRATA
    assert {(e.line, e.printed) for e in report.errata if e.kind == "arithmetic"} == {(34, "0.809"), (37, "0.708")}
    wrong = {(t.line, t.text) for t in report.tokens if t.attribution.verdict == "wrong"}
    assert wrong == set(ERRATA)
    assert report.counts.uncovered == 0 and report.counts.wrong == 4 and report.counts.covered == 27


def test_numpy_output_is_covered(report):
    printed = {t.line: (t.text, t.attribution.verdict) for t in report.tokens if t.line in (82, 83, 84) and t.kind == "number"
               and t.attribution.verdict in ("covered", "wrong")}
    assert printed == {82: ("0.753066", "covered"), 83: ("0.809829", "covered"), 84: ("0.708873", "covered")}


# -- the errata, recomputed without symseq -------------------------------------------------------------------------

def test_errata_recomputed_in_mpmath():
    mp.dps = 30
    w_x, w_h, b = mpf("0.9"), mpf("0.5"), mpf("0.3")
    h, hs, zs = mpf("0.1"), [], []
    for x in (mpf("0.7"), mpf("0.5"), mpf("0.2")):
        z = w_x * x + w_h * h + b
        h = tanh(z)
        zs.append(z)
        hs.append(h)
    assert abs(zs[0] - mpf("0.98")) < mpf(10) ** -25 and rounds_to(hs[0], "0.753")
    assert rounds_to(zs[1], "1.1265")
    # line 34 (and line 37, as an operand): h2 printed 0.809, correct 0.810
    assert not rounds_to(hs[1], "0.809") and rounds_to(hs[1], "0.810")
    # line 37: the third preactivation printed 0.8845, correct 0.8849
    assert not rounds_to(zs[2], "0.8845") and rounds_to(zs[2], "0.8849")
    # ... 0.8845 is the sum with the page's truncated h2
    assert abs(w_x * mpf("0.2") + w_h * mpf("0.809") + b - mpf("0.8845")) < mpf(10) ** -25
    # line 37: h3 printed 0.708, correct 0.709, and 0.709 even from the page's 0.8845
    assert not rounds_to(hs[2], "0.708") and rounds_to(hs[2], "0.709")
    assert rounds_to(tanh(mpf("0.8845")), "0.709")
    # the truncation: tanh(1.1265) = 0.80981… is not 0.809 either
    assert not rounds_to(tanh(mpf("1.1265")), "0.809")
    # the numpy output (format .6f) is right
    assert [mp.nstr(v, 6) for v in hs] == ["0.753066", "0.809829", "0.708873"]


# -- the audit's attribution ---------------------------------------------------------------------------------------

def test_no_token_is_claimed_by_another_section(report, derivation):
    spans = section_lines(MD, PLAIN_HEADINGS)
    for t in report.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or t.attribution.statement is not None:
            continue
        home = next((title for title, (a, b) in spans.items() if a <= t.line <= b), None)
        owner = section_of(t.attribution, derivation)
        assert owner == home, f"line {t.line} {t.text!r} (section {home!r}) is claimed by {t.attribution.text()!r}"


def test_no_line_holding_a_quantity_is_a_heading():
    doc = read(MD)
    assert not {h.line for h in doc.headings} & set(QUANTITY_LINES)
