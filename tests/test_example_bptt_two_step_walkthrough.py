"""A public worked example as a fixture: backpropagation through time by hand, two steps of a scalar tanh RNN.

Source: https://prachub.com/resources/detailed-backpropagation-walkthrough, rendered in
``tests/data/examples/bptt-two-step-walkthrough.md`` (up to where the page's stored text ends, in the second step
of its backward pass) with its derivation in ``tests/data/examples/derivations/bptt_two_step_walkthrough.py``.

The model: h_t = tanh(0.5 x_t + 0.1 h_{t−1}), y_t = 2 h_t, L = ½(y_1 − 1)² + ½(y_2 − 2)², x = (1, 2), h_0 = 0.
The errata, each checked below in plain mpmath (30 digits):

* **root**, line 38: tanh(1.04621) ≈ 0.7790; it is 0.780329.
* **root**, line 42: ½(0.9242 − 1)² = 0.00288; from the printed 0.9242 it is 0.0028728, 0.00287 (and truly
  0.0028702).
* **root**, line 43: ½(1.558 − 2)² = 0.0978; from the printed 1.558 it is 0.097682, 0.0977 (truly 0.0965).
* **root**, line 44: L = 0.1007, 0.00288 + 0.0978 rounded; truly 0.0994. The page prints no sum, so the audit
  can trace it no further.
* **root**, line 65: (0.7790)² = 0.606841 is printed 0.6069 (truly h_2² = 0.6089).
* **propagated**: y_2 = 2.0 · 0.7790 = 1.558 (line 39, from line 38), then ∂L/∂y_2 = −0.442 (59),
  ∂L/∂h_2 = −0.884 (62), tanh′(a_2) = 1 − 0.6069 = 0.3931 (65), ∂L/∂a_2 = −0.3475 (68) and the t = 2 terms
  −0.695 (73) and −0.1606 (76): each right from its printed operands, each wrong in truth.

The audit found two faults of its own on this page, fixed with it: ``W_y h_2 = … = 1.558`` bound h_2 to 1.558
(a product's last factor taken for the name of the chain), which made (0.7790)² on line 65 a false erratum; and a
number printed again as an operand (0.7790 on line 39) was not traced to its first printing, so y_2 was called
rounding drift and the steps after it roots.
"""

from __future__ import annotations

from mpmath import mp, mpf, tanh

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "bptt-two-step-walkthrough.md"
NAME = "bptt-two-step-walkthrough"
LINES = MD.read_text(encoding="utf-8").splitlines()
ERRATA = {  # (line, printed): correct
    (38, "0.7790"): "0.7803", (39, "1.558"): "1.561", (42, "0.00288"): "0.00287", (43, "0.0978"): "0.0965",
    (44, "0.1007"): "0.0994", (59, "-0.442"): "-0.439", (62, "-0.884"): "-0.879", (65, "0.6069"): "0.6089",
    (65, "0.3931"): "0.3911", (68, "-0.3475"): "-0.3436", (73, "-0.695"): "-0.687", (76, "-0.1606"): "-0.1588",
}


def _model():
    """The page's numbers, the forward pass and the t = 2 gradients, by hand at 30 digits."""
    mp.dps = 30
    Wx, Wh, Wy, x = mpf("0.5"), mpf("0.1"), mpf(2), [mpf(1), mpf(2)]
    h1 = tanh(Wx * x[0])
    a2 = Wx * x[1] + Wh * h1
    h2 = tanh(a2)
    y1, y2 = Wy * h1, Wy * h2
    L1, L2 = (y1 - 1) ** 2 / 2, (y2 - 2) ** 2 / 2
    dy2 = y2 - 2
    dh2 = dy2 * Wy
    da2 = dh2 * (1 - h2 ** 2)
    return dict(h1=h1, a2=a2, h2=h2, y1=y1, y2=y2, L1=L1, L2=L2, L=L1 + L2, dy2=dy2, dh2=dh2, da2=da2,
                dWx2=da2 * x[1], dWh2=da2 * h1)


def test_rendition_names_its_source():
    assert LINES[0] == "Source: https://prachub.com/resources/detailed-backpropagation-walkthrough"
    assert "rendition" in LINES[1]


def test_the_first_step_is_right():
    m = _model()
    assert rounds_to(m["h1"], "0.4621") and rounds_to(m["y1"], "0.9242")
    assert rounds_to(m["a2"], "1.04621") and "1.04621" in LINES[37]


def test_each_erratum_and_its_class_in_plain_mpmath():
    m, P = _model(), mpf
    true = {38: m["h2"], 39: m["y2"], 42: m["L1"], 43: m["L2"], 44: m["L"], 59: m["dy2"], 62: m["dh2"],
            68: m["da2"], 73: m["dWx2"], 76: m["dWh2"]}
    for (line, printed), correct in ERRATA.items():
        assert printed in LINES[line - 1], (line, printed)
        if line in true:
            assert rounds_to(true[line], correct) and not rounds_to(true[line], printed), line
    assert rounds_to(m["h2"] ** 2, "0.6089") and rounds_to(1 - m["h2"] ** 2, "0.3911")
    # roots: wrong even from the printed operands
    assert not rounds_to(tanh(P("1.04621")), "0.7790")
    assert rounds_to((P("0.9242") - 1) ** 2 / 2, "0.00287") and not rounds_to((P("0.9242") - 1) ** 2 / 2, "0.00288")
    assert rounds_to((P("1.558") - 2) ** 2 / 2, "0.0977") and not rounds_to((P("1.558") - 2) ** 2 / 2, "0.0978")
    assert rounds_to(P("0.7790") ** 2, "0.6068") and not rounds_to(P("0.7790") ** 2, "0.6069")
    assert rounds_to(P("0.00288") + P("0.0978"), "0.1007")  # L: the printed losses added
    # propagated: right from the printed operands
    for expr, printed in ((2 * P("0.7790"), "1.558"), (P("1.558") - 2, "-0.442"), (P("-0.442") * 2, "-0.884"),
                          (1 - P("0.6069"), "0.3931"), (P("-0.884") * P("0.3931"), "-0.3475"),
                          (P("-0.3475") * 2, "-0.695"), (P("-0.3475") * P("0.4621"), "-0.1606")):
        assert rounds_to(expr, printed), printed


def test_the_audit_finds_exactly_the_errata(report):
    assert {(e.line, e.printed): e.correct for e in report.errata} == ERRATA
    assert not report.missing and not report.undecided
    c = report.counts
    assert c.wrong == 12 and c.covered >= 40
    # the numbers of a list in a block quote ("> 1. the loss at t=1") are list markers
    assert {t.attribution.verdict for t in report.tokens if t.line in (53, 54) and t.text in ("1", "2") and t.start < 4} \
        == {"structural"}
    # (0.7790)^2 on line 65 is the page's h_2 squared, not an erratum: h_2 is not bound to y_2's 1.558
    assert [e.printed for e in report.errata if e.line == 65] == ["0.6069", "0.3931"]
