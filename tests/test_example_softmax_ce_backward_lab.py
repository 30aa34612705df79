"""A public worked example as a fixture: softmax + cross-entropy for one sample, forward and backward, by hand.

Source: https://github.com/MihirSaiDudekula/VIsem_Labs/blob/2cdbbffc4566660a3dd296ce268a6f7af5193ba4/DLP2.md,
rendered in ``tests/data/examples/softmax-ce-backward-lab.md`` with its derivation in
``tests/data/examples/derivations/softmax_ce_backward_lab.py``.

The page rounds every step to three decimals and computes the next step from the rounded numbers. Its 18 wrong
tokens come from one root and one rounding drift, each checked below in plain mpmath (30 digits):

* **root**, line 57 (and again as the summand on line 63 and the numerator on line 69): e^{−1.9} = 0.1495686…
  printed 0.149, correct 0.150. It is wrong from the page's own printed input −1.9.
* **propagated from 0.149**: p_0 = 0.149/1.517 = 0.09822 prints as 0.098 (right from the printed operands), but
  the true p_0 = 0.0985659… is 0.099. Every later copy of it is propagated too: y_pred on lines 69, 75, 98 and
  153, grad_0 = 0.098 − 0 on lines 98, 121, 124, 125 and 155, the weight gradient 1.0 × 0.098 = 0.098 (line 129,
  correct 0.099) and 2.0 × 0.098 = 0.196 (line 130, correct 0.197), and ΔW = −0.1 × 0.098 = −0.0098 (line 139,
  correct −0.0099) and −0.1 × 0.196 = −0.0196 (line 140, correct −0.0197).
* **rounding drift**, line 130: 2.0 × 0.242 = 0.484, correct 0.485 (2 p_2 = 0.4848661…). Its operand 0.242 is
  correctly rounded (p_2 = 0.2424330…); doubling it doubles the rounding error, and 2 × [0.2415, 0.2425] =
  [0.483, 0.485] holds the true value.
* **propagated from 0.484** (itself drift), line 140: ΔW = −0.1 × 0.484 = −0.0484, correct −0.0485.

Everything else is right, the loss −log p_1 = 0.417 included.
"""

from __future__ import annotations

import pytest
from mpmath import exp, log, mp, mpf

from symseq.audit import audit, parse

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "softmax-ce-backward-lab.md"
NAME = "softmax-ce-backward-lab"
TEXT = MD.read_text(encoding="utf-8")
LINES = TEXT.splitlines()

# (line, printed, correct, class, the upstream number it was computed from: (line, printed), or None), in text order
ROOT, PROP, DRIFT = "root", "propagated", "rounding drift"
ERRATA = [(57, "0.149", "0.150", ROOT, None), (63, "0.149", "0.150", ROOT, None),  # e^{-1.9}, and its copies
          (69, "0.149", "0.150", ROOT, None), (69, "0.098", "0.099", PROP, (69, "0.149")),  # 0.149/1.517
          (75, "0.098", "0.099", PROP, (69, "0.098")), (98, "0.098", "0.099", PROP, (75, "0.098")),
          (98, "0.098", "0.099", PROP, (98, "0.098")),  # grad_0 = y_pred_0 − 0
          (121, "0.098", "0.099", PROP, (98, "0.098")), (124, "0.098", "0.099", PROP, (121, "0.098")),
          (125, "0.098", "0.099", PROP, (121, "0.098")), (129, "0.098", "0.099", PROP, (124, "0.098")),  # 1.0 × 0.098
          (130, "0.196", "0.197", PROP, (125, "0.098")),  # 2.0 × 0.098
          (130, "0.484", "0.485", DRIFT, None),  # 2.0 × 0.242, 0.242 right
          (139, "-0.0098", "-0.0099", PROP, (129, "0.098")), (140, "-0.0196", "-0.0197", PROP, (130, "0.196")),
          (140, "-0.0484", "-0.0485", PROP, (130, "0.484")),  # −0.1 × the weight gradient
          (153, "0.098", "0.099", PROP, (75, "0.098")), (155, "0.098", "0.099", PROP, (98, "0.098"))]


def _true():
    """The page's quantities computed exactly as defined, at 30 digits."""
    mp.dps = 30
    x, W = [mpf("1.0"), mpf("2.0")], [[mpf("0.2"), mpf("-0.3"), mpf("0.5")], [mpf("-0.5"), mpf("0.7"), mpf("-0.2")]]
    z = [x[0] * W[0][j] + x[1] * W[1][j] for j in range(3)]
    e = [exp(v - max(z)) for v in z]
    p = [v / sum(e) for v in e]
    grad = [p[0], p[1] - 1, p[2]]
    dW = [[x[i] * g for g in grad] for i in range(2)]
    return dict(z=z, e=e, sum=sum(e), p=p, loss=-log(p[1]), grad=grad, dW=dW,
                step=[[mpf("-0.1") * v for v in row] for row in dW])


def test_rendition_names_its_source():
    assert LINES[0] == "Source: https://github.com/MihirSaiDudekula/VIsem_Labs/blob/" \
                       "2cdbbffc4566660a3dd296ce268a6f7af5193ba4/DLP2.md"
    assert "rendition" in LINES[1]
    for line, printed, _, _, upstream in ERRATA:
        assert printed in LINES[line - 1], (line, printed)
        assert upstream is None or upstream[1] in LINES[upstream[0] - 1], upstream


def test_every_propagated_erratum_names_an_erratum_upstream_and_leads_back_to_the_root():
    wrong = {(line, printed) for line, printed, *_ in ERRATA}
    roots = set()
    for line, printed, _, kind, upstream in ERRATA:
        assert (kind == PROP) == (upstream is not None), (line, printed)
        seen = (line, printed)
        while upstream is not None:
            assert upstream in wrong and upstream[0] <= seen[0], (seen, upstream)
            seen, upstream = upstream, next(e[4] for e in ERRATA if e[:2] == upstream and e[4] != upstream)
        roots.add(seen)
    assert roots >= {(69, "0.149"), (130, "0.484")}


def test_the_printed_values_that_hold():
    t = _true()
    assert t["z"] == [mpf("-0.8"), mpf("1.1"), mpf("0.1")] or all(abs(a - mpf(b)) < mpf(10) ** -25
                                                                  for a, b in zip(t["z"], ("-0.8", "1.1", "0.1")))
    assert rounds_to(t["e"][2], "0.368") and rounds_to(t["sum"], "1.517")
    assert rounds_to(t["p"][1], "0.659") and rounds_to(t["p"][2], "0.242") and rounds_to(t["loss"], "0.417")
    assert rounds_to(t["grad"][1], "-0.341") and rounds_to(t["dW"][1][1], "-0.682")
    assert rounds_to(t["step"][0][1], "0.0341") and rounds_to(t["step"][1][1], "0.0682")
    assert rounds_to(t["step"][0][2], "-0.0242")


def test_each_erratum_and_its_class_in_plain_mpmath():
    t, P = _true(), mpf
    # root: e^{-1.9} from the printed exponent -1.9
    assert not rounds_to(exp(P("-1.9")), "0.149") and rounds_to(exp(P("-1.9")), "0.150")
    # propagated from 0.149: right from the page's operands, wrong in truth
    assert rounds_to(P("0.149") / P("1.517"), "0.098") and rounds_to(t["p"][0], "0.099")
    assert rounds_to(P("2.0") * P("0.098"), "0.196") and rounds_to(t["dW"][1][0], "0.197")
    assert rounds_to(P("-0.1") * P("0.098"), "-0.0098") and rounds_to(t["step"][0][0], "-0.0099")
    assert rounds_to(P("-0.1") * P("0.196"), "-0.0196") and rounds_to(t["step"][1][0], "-0.0197")
    # drift: 0.242 is right, 2 × 0.242 is not, and the rounding interval of the operand holds the truth
    assert rounds_to(t["p"][2], "0.242") and not rounds_to(t["dW"][1][2], "0.484")
    assert rounds_to(t["dW"][1][2], "0.485") and 2 * P("0.2415") <= t["dW"][1][2] <= 2 * P("0.2425")
    # propagated from the drift
    assert rounds_to(P("-0.1") * P("0.484"), "-0.0484") and rounds_to(t["step"][1][2], "-0.0485")


def test_the_audit_finds_exactly_the_errata(report):
    assert sorted((e.line, e.printed, e.correct) for e in report.errata) == sorted(e[:3] for e in ERRATA)
    c = report.counts
    assert (c.wrong, c.uncovered, c.covered) == (18, 0, 72)


def test_verify_agrees(derivation):
    wrong = [c for c in derivation.claims if c.check().status != "ok"]
    assert {c.check().status for c in wrong} == {"mismatch"}
    assert (len(wrong), len(derivation.claims)) == (18, 63)  # 2 vectors and 6 + 6 cells of the weight gradient
    assert {c.printed for c in wrong} >= {"0.149", "0.196", "0.484", "-0.0484", "[0.098, 0.659, 0.242]"}


@pytest.mark.parametrize("old, new, printed, correct", [
    ("≈ [0.149, 1.0, 0.368]", "≈ [0.149, 1.0, 0.369]", "0.369", "0.368"),
    ("1.0 * 0.242 \\\\", "1.0 * 0.252 \\\\", "0.252", "0.242"),
    ("= -\\log(0.659) ≈ 0.417", "= -\\log(0.659) ≈ 0.418", "0.418", "0.417"),
    ("0.196 & -0.682 & 0.484", "0.196 & -0.692 & 0.484", "-0.692", "-0.682"),
])
def test_an_edit_is_wrong_at_its_line(derivation, old, new, printed, correct):
    rep = audit(parse(TEXT.replace(old, new), path=MD.name), [derivation])
    line = next(i for i, ln in enumerate(LINES, start=1) if old in ln)
    assert (line, printed, correct) in {(e.line, e.printed, e.correct) for e in rep.errata}
