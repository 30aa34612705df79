"""A public worked example in LaTeX as a fixture: a five-step vanilla RNN POS tagger, forward, BPTT and one update.

Source: https://github.com/abdullah-al-mahmud-18/cse751/blob/7c089d9832106ba9526c2ff4ba0708c2e125a8c7/src/rnn_lstm_overview.tex
(Worked Example 1), rendered in ``tests/data/examples/rnn-pos-tagging-bptt-notes.tex`` (the address in a ``%``
comment on line 1), with its derivation in ``rnn_pos_tagging_bptt_notes.py`` (setup, forward pass, δ_out, ∇V, ∇W,
∇U and the step η = 0.1).

Every one of its 245 printed quantities is right, recomputed below in plain mpmath (30 digits, reverse mode written
out by hand and checked by finite differences): the page has no erratum, so there is nothing to classify as root,
propagated or rounding drift. Its only slip is in prose: the zero last column of ∇U is put down to h^(0) = 0, while
it is zero because the fifth unit stays at 0 until step 5 (h^(t−1)_5 = 0 for every t ≤ 5), checked below.
"""

from __future__ import annotations

import re

import pytest
from mpmath import exp, log, mp, mpf, tanh

from symseq.audit import audit, audit_file, parse, read
from symseq.authoring import discover
from symseq.cli import main

from example_helpers import EXAMPLES, rounds_to

TEX = EXAMPLES / "rnn-pos-tagging-bptt-notes.tex"
TEXT = TEX.read_text(encoding="utf-8")
LINES = TEXT.splitlines()
NAMES = ("rnn-pos-tagging-notes",)
LABELS = (0, 1, 1, 2, 4)


@pytest.fixture(scope="module")
def derivations():
    found = [d for d in discover([EXAMPLES / "derivations"], include_bundled=False) if d.source == TEX.name]
    assert sorted(d.name for d in found) == sorted(NAMES)
    return found


@pytest.fixture(scope="module")
def report(derivations):
    return audit_file(TEX, derivations)


def _line_of(text: str) -> int:
    (hit,) = [i for i, ln in enumerate(LINES, start=1) if text in ln]
    return hit


def _starting(text: str) -> int:
    (hit,) = [i for i, ln in enumerate(LINES, start=1) if ln.strip().startswith(text)]
    return hit


def _numbers(line: int) -> list[str]:
    return re.findall(r"-?\d+\.\d+|-?\d+", LINES[line - 1].split("=")[-1])


def _matrix(label: str) -> list[list[str]]:
    """The five printed rows of the bmatrix that follows ``label``."""
    first = _line_of(label) + 1
    return [re.findall(r"-?\d+(?:\.\d+)?", LINES[i - 1]) for i in range(first, first + 5)]


def _model():
    """Forward, mean loss, δ_out, and ∇V, ∇W, ∇U by BPTT, at 30 digits (W = I, U = V = I/2, one-hot inputs)."""
    mp.dps = 30
    h, hs, os_ = [mpf(0)] * 5, [[mpf(0)] * 5], []
    for t in range(5):
        h = [tanh(h[i] / 2 + (1 if i == t else 0)) for i in range(5)]
        e = [exp(v / 2) for v in h]
        os_.append([v / sum(e) for v in e])
        hs.append(h)
    losses = [-log(os_[t][LABELS[t]]) for t in range(5)]
    d = [[os_[t][i] - (1 if i == LABELS[t] else 0) for i in range(5)] for t in range(5)]
    gV = [[sum(d[t][i] * hs[t + 1][j] for t in range(5)) / 5 for j in range(5)] for i in range(5)]
    gW, gU, nxt = [[mpf(0)] * 5 for _ in range(5)], [[mpf(0)] * 5 for _ in range(5)], [mpf(0)] * 5
    for t in (4, 3, 2, 1, 0):
        pre = [(d[t][i] / 2 / 5 + nxt[i]) * (1 - hs[t + 1][i] ** 2) for i in range(5)]  # Vᵀδ/5 + next, tanh'
        for i in range(5):
            gW[i][t] += pre[i]
            for j in range(5):
                gU[i][j] += pre[i] * hs[t][j]
        nxt = [v / 2 for v in pre]  # Uᵀ δ_pre
    return dict(h=hs[1:], hs=hs, o=os_, L=losses, d=d, V=gV, W=gW, U=gU)


def test_rendition_names_its_source_in_a_comment():
    assert LINES[0].startswith("% Source: https://github.com/abdullah-al-mahmud-18/cse751/blob/")
    assert LINES[1].startswith("% ") and "rendition" in LINES[1]
    assert not [t for t in read(TEX).tokens if t.line <= 2]


def test_the_forward_pass_in_mpmath():
    m = _model()
    for t in range(5):
        assert all(rounds_to(v, p) for v, p in zip(m["h"][t], _numbers(_starting(f"h^{{({t + 1})}} &= ")))), t
        o_line = _starting(f"o^{{({t + 1})}} &= ")
        assert all(rounds_to(v, p) for v, p in zip(m["o"][t], _numbers(o_line))), t
        p, loss = re.findall(r"\d+\.\d+", LINES[_starting(f"L^{{({t + 1})}} &= ") - 1])  # -\log(p) = loss
        assert rounds_to(m["o"][t][LABELS[t]], p) and rounds_to(m["L"][t], loss)
    assert rounds_to(sum(m["L"]) / 5, "1.4394")


def test_the_gradients_in_mpmath():
    m = _model()
    for t in range(5):
        printed = _numbers(_line_of(f"\\delta_{{\\text{{out}}}}^{{({t + 1})}} &= "))
        assert all(rounds_to(v, p) for v, p in zip(m["d"][t], printed)), t
    for name in "VWU":
        rows = _matrix(f"\\nabla {name} = \\begin{{bmatrix}}")
        assert all(rounds_to(m[name][i][j], rows[i][j]) for i in range(5) for j in range(5)), name
    for name, old in (("W", 1), ("U", mpf(1) / 2), ("V", mpf(1) / 2)):
        rows = _matrix(f"{name}_{{\\text{{new}}}} = \\begin{{bmatrix}}")
        new = [[(old if i == j else 0) - m[name][i][j] / 10 for j in range(5)] for i in range(5)]
        assert all(rounds_to(new[i][j], rows[i][j]) for i in range(5) for j in range(5)), name


def test_the_gradients_agree_with_finite_differences():
    m = _model()

    def loss(U55):
        h, total = [mpf(0)] * 5, mpf(0)
        for t in range(5):
            h = [tanh((U55 if i == 4 == t else mpf(1) / 2) * 0 + h[i] / 2 + (1 if i == t else 0)) for i in range(5)]
            e = [exp(v / 2) for v in h]
            total += -log(e[LABELS[t]] / sum(e))
        return total / 5

    eps = mpf(10) ** -12
    assert abs((loss(mpf(1) / 2 + eps) - loss(mpf(1) / 2 - eps)) / (2 * eps) - m["U"][4][4]) < mpf(10) ** -15


def test_the_zero_column_of_grad_u_comes_from_the_fifth_unit_not_from_h0():
    m = _model()
    assert all(m["hs"][t][4] == 0 for t in range(5)) and m["hs"][5][4] != 0  # h^(0..4)_5 = 0, h^(5)_5 ≠ 0
    assert all(m["U"][i][4] == 0 for i in range(5)) and any(m["hs"][t][0] != 0 for t in range(1, 5))


def test_the_page_audits_clean_with_every_quantity_covered(report):
    assert not report.failed, report.failures()
    c = report.counts
    assert (c.quantity, c.covered, c.wrong, c.uncovered) == (245, 245, 0, 0) and not report.missing
    # superscripts (x^{(1)}), subscripts (I_5), the bounds of a sum and "index 3" are no quantities
    for text in (r"\text{the}   &\to x^{(1)}", r"W = \mathbf{I}_5, \qquad U", r"\frac{1}{5}\sum_{t=1}^{5}"):
        line = _line_of(text)
        assert [t.attribution.verdict for t in report.tokens if t.line == line and t.text in ("1", "5")].count("structural") >= 1


def test_cli_audit_exits_0(capsys):
    assert main(["audit", str(TEX), "--no-bundled", "--path", str(EXAMPLES)]) == 0
    assert "245 quantity tokens — 245 covered, 0 wrong, 0 uncovered" in capsys.readouterr().out


@pytest.mark.parametrize("old, new, printed, correct", [
    ("[0.3634,0.7616,0,0,0]", "[0.3643,0.7616,0,0,0]", "0.3643", "0.3634"),  # h^(2), swapped digits
    ("L^{(4)} &= -\\log(0.2067) = 1.5766", "L^{(4)} &= -\\log(0.2067) = 1.5767", "1.5767", "1.5766"),
    ("-0.0495 & -0.1605 & -0.1004", "-0.0495 & 0.1605 & -0.1004", "0.1605", "-0.1605"),  # ∇V, a sign
    ("0.0047 &  0.5030 & -0.0027", "0.0047 &  0.5031 & -0.0027", "0.5031", "0.5030"),  # U_new
])
def test_an_edit_is_wrong_at_its_line(derivations, old, new, printed, correct):
    assert TEXT.count(old) == 1, old
    rep = audit(parse(TEXT.replace(old, new), path=TEX.name), derivations)
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(_line_of(old), printed, correct)]
