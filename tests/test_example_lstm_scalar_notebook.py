"""A public worked example as a fixture: a one-unit LSTM run for three steps in a Colab notebook.

Source: https://github.com/Yasmeen-Akl/DL-lSTM-/blob/419d0cb5fdf0fa6ed1b42f0094792cf142b2bbb2/Untitled10.ipynb,
rendered in ``tests/data/examples/lstm-scalar-notebook.md`` (the code cell in a ``python`` fence, the text it
printed in a ``text`` fence) with its derivation in ``tests/data/examples/derivations/lstm_scalar_notebook.py``.

Every one of its 19 printed results is correctly rounded (recomputed here in plain mpmath), so the clean page
audits with no erratum. Its inputs are printed in code (``Wf, Whf, bf = 0.5, 0.1, 0``) and its results in an
output block: an edit to either is reported at its line.
"""

from __future__ import annotations

import pytest
from mpmath import exp, mp, mpf, tanh

from symseq.audit import audit, parse

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "lstm-scalar-notebook.md"
NAME = "lstm-scalar-notebook"
TEXT = MD.read_text(encoding="utf-8")
LINES = TEXT.splitlines()


def _line_of(text: str) -> int:
    (hit,) = [i for i, ln in enumerate(LINES, start=1) if text in ln]
    return hit


def test_rendition_names_its_source():
    assert LINES[0].startswith("Source: https://github.com/Yasmeen-Akl/DL-lSTM-/blob/")
    assert "rendition" in LINES[1]


def test_every_printed_result_recomputed_in_mpmath():
    mp.dps = 40
    sig = lambda z: 1 / (1 + exp(-z))  # noqa: E731
    W = {"f": (mpf("0.5"), mpf("0.1")), "i": (mpf("0.6"), mpf("0.2")), "c": (mpf("0.7"), mpf("0.3")),
         "o": (mpf("0.8"), mpf("0.4"))}
    h = C = mpf(0)
    printed = [ln.split("= ")[-1] for ln in LINES if ln.startswith("  ") and "_t" in ln and " = 0." in ln
               or ln.startswith("  Cell state") and "= 1." in ln]
    got = []
    for x in (1, 2, 3):
        f = sig(W["f"][0] * x + W["f"][1] * h)
        i = sig(W["i"][0] * x + W["i"][1] * h)
        c = tanh(W["c"][0] * x + W["c"][1] * h)
        C = f * C + i * c
        o = sig(W["o"][0] * x + W["o"][1] * h)
        h = o * tanh(C)
        got += [f, i, c, C, o, h]
    assert len(printed) == 18
    assert all(rounds_to(v, p) for v, p in zip(got, printed)), list(zip(printed, got))
    assert rounds_to(4 * h, LINES[_line_of("Final output y: 3") - 1].split(": ")[-1])


def test_the_clean_page_audits_with_every_number_covered(report):
    assert not report.failed, report.failures()
    c = report.counts
    assert c.uncovered == 0 and c.wrong == 0 and c.covered == c.quantity >= 39
    # the notebook's execution counter and the step labels are no quantities
    assert [t.attribution.verdict for t in report.tokens if t.line == _line_of("In [1]:")] == ["structural"]
    step2 = [(t.text, t.attribution.verdict) for t in report.tokens if t.line == _line_of("Time step 2: Input")]
    assert step2 == [("2", "structural"), ("2", "covered")]


@pytest.mark.parametrize("old, new, printed, correct", [
    ("Wf, Whf, bf = 0.5, 0.1, 0", "Wf, Whf, bf = 0.5, 0.1, 1", "1", "0"),  # a one-digit bias of a tuple assignment
    ("Wy, by = 4, 0", "Wy, by = 5, 0", "5", "4"),
    ("h = 0  # hidden", "h = 1  # hidden", "1", "0"),
    ("X = [1, 2, 3]", "X = [2, 1, 3]", "2", "1"),
    ("Time step 2: Input = 2", "Time step 2: Input = 7", "7", "2"),  # not the label "Time step 2"
    ("Cell state: C_t = 0.9877", "Cell state: C_t = 0.9867", "0.9867", "0.9877"),
    ("Hidden state: h_t = 0.6398", "Hidden state: h_t = -0.6398", "-0.6398", "0.6398"),
    ("Final output y: 3.4827", "Final output y: 3.4828", "3.4828", "3.4827"),
    ("Wi, Whi, bi = 0.6, 0.2, 0", "Wi, Whi, bi = -0.6, 0.2, 0", "-0.6", "0.6"),
])
def test_an_edit_of_an_input_or_a_result_is_wrong_at_its_line(derivation, old, new, printed, correct):
    rep = audit(parse(TEXT.replace(old, new), path=MD.name), [derivation])
    assert rep.failed
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(_line_of(old), printed, correct)]


def test_a_deleted_result_is_missing_where_it_was_printed(derivation):
    line = _line_of("Output gate: o_t = 0.8459")
    rep = audit(parse(TEXT.replace("o_t = 0.8459", "o_t = "), path=MD.name), [derivation])
    assert rep.failed and not rep.errata
    (m,) = rep.missing
    assert m.printed == "0.8459" and m.lines[0] <= line <= m.lines[1] and m.lines[1] - m.lines[0] <= 2


def test_an_unclaimed_result_of_the_output_block_is_uncovered(derivation):
    extra = TEXT.replace("  Output gate: o_t = 0.8459\n", "  Output gate: o_t = 0.8459\n  Peephole: p_t = 0.4321\n")
    rep = audit(parse(extra, path=MD.name), [derivation])
    assert [(t.text, t.attribution.verdict) for t in rep.uncovered()] == [("0.4321", "uncovered")]
    assert rep.failures(fail_under=100)
