"""A public worked example as a fixture: BPTT by hand through a two-unit tanh RNN in numpy, then one step.

Source: https://github.com/thsis/INFOSYS/blob/4f708b909831c9a6582ec6405233a6611af9ae2f/models/RNN-backprop.ipynb,
rendered in ``tests/data/examples/rnn-bptt-numpy-notebook.md`` with its derivation in
``tests/data/examples/derivations/rnn_bptt_numpy_notebook.py``. The notebook names no loss; the derivation takes
loss = ½(y − ŷ)², the loss the same repository's LSTM-backprop notebook states.

The forward pass (h1, h2, h3, ŷ) is right. The errata, each checked below in plain mpmath (30 digits):

* **root**, line 136, ``dlossdW`` printed [0.00034735, 0.00272708], correct [-0.00309606, -0.00103879]: wrong
  even from the page's own printed inputs (W, U, w, x, y). Its formula takes ∂loss/∂ŷ = y − ŷ (the sign
  flipped), follows only the path through h1 and multiplies the chain's vectors elementwise; recomputed that way
  it gives exactly the printed numbers.
* **root**, line 148, ``dlossdU`` printed [0.00053191, 0.00212484]: a 2-vector for the 2×2 gradient
  [[-0.00539987, -0.00571145], [-0.00020622, -0.00011483]] (wrong shape, and wrong sign and size).
* **propagated from line 136**, line 170: W − 0.001·dlossdW = [1.99999965, 0.99999727] is right from the
  printed dlossdW; the true step gives [2.00000310, 1.00000104].
* **propagated from line 148**, lines 182 and 183: U − 0.001·dlossdU (the 2-vector broadcast over the rows of U)
  is right from the printed dlossdU; the true step gives [[1.00000540, 2.00000571], [3.00000021, 4.00000011]].

No erratum here is rounding drift: every printed number is either right or off far beyond its last digit.
"""

from __future__ import annotations

import pytest
from mpmath import mp, mpf, tanh

from symseq.audit import audit, parse

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "rnn-bptt-numpy-notebook.md"
NAME = "rnn-bptt-numpy-notebook"
TEXT = MD.read_text(encoding="utf-8")
LINES = TEXT.splitlines()
ERRATA = {  # (line, printed): (correct, class)
    (136, "0.00034735, 0.00272708"): ("-0.00309606, -0.00103879", "root"),
    (148, "[0.00053191, 0.00212484]"): ("", "root (wrong shape)"),
    (170, "1.99999965, 0.99999727"): ("2.00000310, 1.00000104", "propagated from line 136"),
    (182, "0.99999947, 1.99999788"): ("1.00000540, 2.00000571", "propagated from line 148"),
    (183, "2.99999947, 3.99999788"): ("3.00000021, 4.00000011", "propagated from line 148"),
}


def _printed(line: int) -> list[str]:
    inner = LINES[line - 1].split("[")[-1].split("]")[0]
    return [v.strip() for v in inner.split(",")]


def _model():
    """The notebook's numbers, its forward pass and the true gradients of ½(y − ŷ)², by hand (reverse mode)."""
    mp.dps = 30
    W, U, w = [mpf(2), mpf(1)], [[mpf(1), mpf(2)], [mpf(3), mpf(4)]], [mpf(2), mpf(4)]
    x, y = [mpf("0.2"), mpf("0.3"), mpf("0.4")], mpf(7)
    hs, h = [], [mpf(0), mpf(0)]
    for xt in x:
        h = [tanh(W[i] * xt + U[i][0] * h[0] + U[i][1] * h[1]) for i in range(2)]
        hs.append(h)
    yhat = w[0] * h[0] + w[1] * h[1]
    dW, dU = [mpf(0)] * 2, [[mpf(0)] * 2 for _ in range(2)]
    dh = [(yhat - y) * wi for wi in w]
    for t in (2, 1, 0):
        da = [dh[i] * (1 - hs[t][i] ** 2) for i in range(2)]
        prev = hs[t - 1] if t else [mpf(0), mpf(0)]
        for i in range(2):
            dW[i] += da[i] * x[t]
            for j in range(2):
                dU[i][j] += da[i] * prev[j]
        dh = [U[0][j] * da[0] + U[1][j] * da[1] for j in range(2)]
    return dict(W=W, U=U, w=w, x=x, y=y, h=hs, yhat=yhat, dW=dW, dU=dU)


def test_rendition_names_its_source():
    assert LINES[0].startswith("Source: https://github.com/thsis/INFOSYS/blob/")
    assert "rendition" in LINES[1]


def test_the_forward_pass_is_right():
    m = _model()
    for t, line in enumerate((36, 49, 62)):
        assert all(rounds_to(v, p) for v, p in zip(m["h"][t], _printed(line))), line
    assert rounds_to(m["yhat"], LINES[75 - 1].strip())


def test_the_gradients_by_finite_differences():
    """The hand-written reverse mode agrees with central differences of ½(y − ŷ)² at 30 digits."""
    m = _model()

    def loss(W):
        h = [mpf(0), mpf(0)]
        for xt in m["x"]:
            h = [tanh(W[i] * xt + m["U"][i][0] * h[0] + m["U"][i][1] * h[1]) for i in range(2)]
        return (m["y"] - m["w"][0] * h[0] - m["w"][1] * h[1]) ** 2 / 2

    eps = mpf(10) ** -12
    for i in range(2):
        up, down = list(m["W"]), list(m["W"])
        up[i] += eps
        down[i] -= eps
        assert abs((loss(up) - loss(down)) / (2 * eps) - m["dW"][i]) < mpf(10) ** -15


def test_each_erratum_and_its_class_in_plain_mpmath():
    m, P = _model(), mpf
    # root: the true ∂loss/∂W from the printed inputs is not what line 136 prints; the page's formula is
    printed_dW = _printed(136)
    assert not any(rounds_to(v, p) for v, p in zip(m["dW"], printed_dW))
    assert [mp.nstr(v, 6) for v in m["dW"]] == ["-0.00309606", "-0.00103879"]
    h1, h2, h3, x = m["h"][0], m["h"][1], m["h"][2], m["x"]

    def d(h, i):  # the notebook's dtanh of a preactivation, 1 − h_i²
        return 1 - h[i] ** 2

    def rowdot(v):  # numpy's v.dot(U)
        return [v[0] * m["U"][0][j] + v[1] * m["U"][1][j] for j in range(2)]

    dh3dh2, dh2dh1 = rowdot([d(h3, 0), d(h3, 1)]), rowdot([d(h2, 0), d(h2, 1)])
    page_dW = [(m["y"] - m["yhat"]) * m["w"][i] * dh3dh2[i] * dh2dh1[i] * d(h1, i) * x[0] for i in range(2)]
    assert all(rounds_to(v, p) for v, p in zip(page_dW, printed_dW))
    dh2dU = d(h2, 0) * h1[0] + d(h2, 1) * h1[1]
    page_dU = [(m["y"] - m["yhat"]) * m["w"][i] * dh3dh2[i] * dh2dU for i in range(2)]
    assert all(rounds_to(v, p) for v, p in zip(page_dU, _printed(148)))
    # root (wrong shape): the true ∂loss/∂U is 2×2, all four entries negative
    assert all(v < 0 for row in m["dU"] for v in row) and len(m["dU"]) * len(m["dU"][0]) == 4
    # propagated: each step is right from the printed gradient and wrong from the true one
    eta = P("0.001")
    for i, p in enumerate(_printed(170)):
        assert rounds_to(m["W"][i] - eta * P(printed_dW[i]), p) and not rounds_to(m["W"][i] - eta * m["dW"][i], p)
    for i, line in enumerate((182, 183)):
        for j, p in enumerate(_printed(line)):
            assert rounds_to(m["U"][i][j] - eta * P(_printed(148)[j]), p)
            assert not rounds_to(m["U"][i][j] - eta * m["dU"][i][j], p)


def test_the_audit_finds_exactly_the_errata(report):
    assert {(e.line, e.printed): e.correct for e in report.errata} == {k: v[0] for k, v in ERRATA.items()}
    (shape,) = [e for e in report.errata if e.line == 148]
    assert shape.fault.startswith("wrong shape") and "2×2" in shape.fault
    c = report.counts
    assert (c.wrong, c.uncovered, c.covered) == (5, 0, 11)
    # prompts, identifiers (h3, x[2]) and the digits of the formulas are no quantities
    assert {t.attribution.verdict for t in report.tokens if t.line in (14, 55, 90, 114)} == {"structural"}


@pytest.mark.parametrize("old, new", [("y = 7.0", "y = 8.0"), ("[0.87975882, 0.97711011]", "[0.87975882, 0.97711021]"),
                                      ("5.99720442000804", "5.99720442000904")])
def test_an_edit_of_a_right_number_is_wrong_at_its_line(derivation, old, new):
    rep = audit(parse(TEXT.replace(old, new), path=MD.name), [derivation])
    line = next(i for i, ln in enumerate(LINES, start=1) if old in ln)
    assert line in {e.line for e in rep.errata}
