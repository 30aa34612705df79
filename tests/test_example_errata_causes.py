"""Every erratum of every worked example in ``tests/data/examples``, with its cause, checked twice.

For each page, ``CAUSES`` lists every wrong number the audit reports (``symseq audit PAGE``, the derivation and
the page's own arithmetic together) with its cause (:mod:`symseq.audit.causes`): ``root`` (wrong even from the
page's own printed inputs), ``propagated`` (right from its printed inputs, one of which is wrong: the line of that
upstream number is given), or ``drift`` (within the rounding of printed operands that are right). A number the page
prints again (the same quantity, the same wrong digits) is propagated from its first printing.

1. The audit's classification is asserted, erratum by erratum (:func:`test_the_audit_classifies_every_erratum`).
2. Each classification is checked independently of symseq in plain mpmath (30 digits), from the page's printed
   operands at their printed precision (the ``test_*_in_plain_mpmath`` functions below): a root is wrong from
   them; a propagated number is right from them while an operand is wrong; drift lies within their rounding.
   Three pages already do this in their own module and are only referred to: the BPTT notebook
   (``test_example_rnn_bptt_numpy_notebook``), the attention backprop notebook and the LayerNorm output block.

A number computed where the page prints no statement of it (a table row ``E + P``, a NumPy cell ``W -= eta * dW``,
a matrix product spread over several lines, rows normalized in a code block) is classified through the
derivation's ledger from the values the page printed upstream (:func:`symseq.verify.causes.trace`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from fractions import Fraction as F

import pytest
from mpmath import cos, exp, mp, mpf, sin, sqrt, tanh

from symseq.audit import audit_file, read
from symseq.audit.causes import classify
from symseq.authoring import discover

from example_helpers import EXAMPLES, renditions, rounds_to

DERIVATIONS = discover([EXAMPLES / "derivations"], include_bundled=False)
R, P, D = "root", "propagated", "drift"
# page: [(line, printed as the erratum lists it, cause, line of the upstream erratum or None)]
CAUSES = {
    "rnn-forward-tanh-notebook.md": [
        (34, "0.809", R, None),  # tanh(1.1265) ≈ 0.809: 0.810
        (37, "0.809", P, 34),  # h2 printed again as an operand of step 3
        (37, "0.8845", P, 37),  # 0.18 + 0.5 · 0.809 + 0.3 = 0.8845 holds; 0.809 is wrong
        (37, "0.708", R, None),  # tanh(0.8845) ≈ 0.708: 0.709
    ],
    "gru-cell-click4ai.md": [
        (45, "0.500, 0.337", R, None),  # tanh([0.55, 0.35]) = [0.501, 0.336]
        (47, "0.198", P, 45),  # z_t * h_hat = 0.587 · 0.337 = 0.1978 holds; h_hat's 0.337 is wrong
    ],
    "attn-codelab-amanailab.md": [
        (15, "1.66082, 2.66082, 2.33918, 3.33918", R, None),  # softmax(I/√2) V = [[1.66048, …], …]
        (23, "1.66082, 2.66082, 2.33918, 3.33918", P, 15),  # Case 1 is the worked example, printed again
        (27, "16.60882, 26.60882", R, None),  # [16.60477, 26.60477]
    ],
    "positional-encoding-d4.md": [
        (61, "0.00999, 0.9999", R, None),  # sin(1/100) = 0.0099998, cos(1/100) = 0.99995
        (66, "-0.9988", R, None),  # cos(2/100) ≈ -0.9988: 0.9998
        (75, "0.00999, 0.9999", P, 61),
        (76, "-0.4016, 0.9908", R, None),  # cos 2 = -0.4161, cos(2/100) = 0.9998
        (129, "0.009", R, None),  # sin(1/100) to three decimals is 0.010
        (130, "1.82, 0.018, 0.99", R, None),  # sin 2 = 0.909, sin(2/100) = 0.0200, cos(2/100) = 1.00
        (145, "1.82", P, 130),  # 0.91 + 1.82: the 1.82 of line 130 again
        (151, "0.00999, 0.9999", P, 61),
        (151, "0.60999, 1.2999", P, 151),  # 0.6 + 0.00999 and 0.3 + 0.9999 hold; the encoding's cells are wrong
    ],
    "rnn-bptt-numpy-notebook.md": [  # checked in plain mpmath in test_example_rnn_bptt_numpy_notebook
        (136, "0.00034735, 0.00272708", R, None),
        (148, "[0.00053191, 0.00212484]", R, None),  # a 2-vector for the 2×2 gradient
        (170, "1.99999965, 0.99999727", P, 136),  # W − 0.001 · dlossdW
        (182, "0.99999947, 1.99999788", P, 148),  # U − 0.001 · dlossdU
        (183, "2.99999947, 3.99999788", P, 148),
    ],
    "softmax-ce-backward-lab.md": [
        (57, "0.149", R, None),  # e^{-1.9} = 0.1496
        (63, "0.149", P, 57), (69, "0.149", P, 57),  # the summand and the numerator
        (69, "0.098", P, 69),  # 0.149/1.517 = 0.0982 holds; 0.149 is wrong
        (75, "0.098", P, 69),
        (98, "0.098", P, 98), (98, "0.098", P, 98),  # y_pred again, and 0.098 − 0 = 0.098
        (121, "0.098", P, 98), (124, "0.098", P, 69), (125, "0.098", P, 69), (129, "0.098", P, 69),
        (130, "0.196", P, 125),  # 2.0 · 0.098 = 0.196 holds; 0.098 is wrong
        (130, "0.484", D, None),  # 2.0 · 0.242 = 0.484, 0.242 right: 2 · [0.2415, 0.2425] holds 0.48487
        (139, "-0.0098", P, 129),  # −0.1 · 0.098
        (140, "-0.0196", P, 130), (140, "-0.0484", P, 130),  # −0.1 · 0.196 and −0.1 · 0.484
        (153, "0.098", P, 69), (155, "0.098", P, 98),
    ],
    "layernorm-hello-prompt.md": [
        (134, "0.208", R, None), (135, "0.374", R, None), (136, "0.424", R, None), (137, "0.424", R, None),
        (138, "0.245", R, None),  # population stds 0.187, 0.350, 0.394, 0.402, 0.224
        (146, "-0.481, 1.442, -0.962", P, 134),  # (x − 0.10)/0.208 holds; 0.208 is wrong
        (147, "0.668, -1.471, -0.134, 0.936", P, 135),
        (148, "1.179, -1.415, 0.236", P, 136),
        (149, "-0.766, 0.412, 1.354, -1.000", R, None),  # not even (x − 0.225)/0.424 (1.356, −1.002)
        (150, "0.408, -1.225, -0.408, 1.225", P, 138),  # (x − 0.20)/0.245 within the rounding of 0.245
        (213, "2.88", R, None),  # the range of the printed row [-0.48, 0.00, 1.44, -0.96] is 2.40
        (213, "-0.48, 1.44, -0.96", P, 146),
        (214, "2.94", R, None),  # 0.94 − (−1.47) = 2.41
        (214, "0.67, -1.47, -0.13, 0.94", P, 147),
        # the script's "Expected Output", which the script cannot print (test_example_layernorm_hello_prompt)
        (407, "0.3640, 0.2082, 0.3742, 0.4243, 0.4240, 0.2449", R, None),
        (410, "-0.4124, 0.1375, -1.2371, 1.5120", R, None), (411, "-0.4804, 1.4414, -0.9610", R, None),
        (412, "0.6682, -1.4706, -0.1336, 0.9360", R, None), (413, "1.1785, -1.4142, 0.2357", R, None),
        (414, "-0.7660, 0.4123, 1.3540, -1.0003", R, None), (415, "0.4082, -1.2247, -0.4082, 1.2247", R, None),
        (418, "1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000", R, None),
        (427, "-0.4124, 0.1375, -1.2371, 1.5120", P, 410), (429, "1.000000", R, None),
    ],
    "bptt-two-step-walkthrough.md": [  # checked in plain mpmath in test_example_bptt_two_step_walkthrough
        (38, "0.7790", R, None),  # tanh(1.04621) = 0.7803
        (39, "1.558", P, 38),  # 2.0 · 0.7790: the 0.7790 of line 38 printed again as an operand
        (42, "0.00288", R, None), (43, "0.0978", R, None),  # ½(0.9242 − 1)² = 0.00287, ½(1.558 − 2)² = 0.0977
        (44, "0.1007", R, None),  # L: the page prints no sum
        (59, "-0.442", P, 39), (62, "-0.884", P, 59),
        (65, "0.6069", R, None),  # (0.7790)² = 0.6068
        (65, "0.3931", P, 38),  # 1 − h_2², with h_2 = 0.7790
        (68, "-0.3475", P, 65), (73, "-0.695", P, 68), (76, "-0.1606", P, 68),
    ],
    "attn-backprop-demo-notebook.md": None,  # built below: 79 errata of a stale configuration
    "attn-course-cat-sat.md": [], "attention-dog-ran-quickly-notebook.ipynb": [], "lstm-scalar-notebook.md": [], "rnn-pos-tagging-bptt-notes.tex": [],
    "self-attention-journey-notebook.ipynb": [],
}



def _backprop_causes():
    """The attention backprop notebook: the entries of A and the gradients the stale configuration prints (roots,
    checked in plain mpmath in test_example_attn_backprop_demo_notebook), ∂L/∂W_Q printed again (lines 360–363 and
    366–369, and its [0, 0] entry on lines 406–407: propagated), and the float32 central difference (root)."""
    lines = (EXAMPLES / "attn-backprop-demo-notebook.md").read_text(encoding="utf-8").splitlines()
    out = [(405, "-2.51e-04", R, None), (406, "-2.54e-04", P, 213), (407, "-2.54e-04", P, 213)]
    roots = {161: [0, 2, 3], 162: [0, 1], **{k: range(4) for k in (213, 214, 215, 216, 219, 220, 221, 222)},
             225: [0], 226: [1, 2], 227: range(4)}
    for line, entries in roots.items():
        row = re.findall(r"-?\d\.\d\de[-+]\d\d", lines[line - 1])
        out += [(line, row[j], R, None) for j in entries]
        if 213 <= line <= 216:
            out += [(copy, row[j], P, line) for copy in (line + 147, line + 153) for j in entries]
    return out


CAUSES["attn-backprop-demo-notebook.md"] = _backprop_causes()
PAGES = renditions(DERIVATIONS)


@functools.lru_cache(maxsize=None)
def _audit_causes(page):
    """(line, printed, cause, upstream line) of every erratum of ``page``, as ``symseq audit`` lists them (once per
    page and test run)."""
    ds = [d for d in DERIVATIONS if d.source == page.name]
    rep = audit_file(page, ds)
    causes = classify(read(page), rep.errata, claims=[c for d in ds for c in d.claims]) if rep.errata else []
    return tuple((c.erratum.line, c.erratum.printed, c.kind, getattr(c.source, "line", None)) for c in causes)


def test_every_page_is_in_the_table():
    assert sorted(CAUSES) == sorted(p.name for p in PAGES)
    assert sum(len(v) for v in CAUSES.values()) >= 144


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_audit_classifies_every_erratum(page):
    """Every erratum the audit reports is in the table with its true cause, and every erratum of the table is
    reported."""
    assert Counter(_audit_causes(page)) == Counter(CAUSES[page.name])


def _lines(page):
    return (EXAMPLES / page).read_text(encoding="utf-8").splitlines()


def test_every_propagated_erratum_names_an_erratum_upstream():
    for page, rows in CAUSES.items():
        keys = {line for line, *_ in rows}
        for line, printed, kind, up in rows:
            assert (kind == P) == (up is not None), (page, line, printed)
            assert up is None or (up in keys and up <= line), (page, line, up)


def test_rnn_forward_tanh_in_plain_mpmath():
    mp.dps = 30
    assert rounds_to(tanh(mpf("1.1265")), "0.810") and not rounds_to(tanh(mpf("1.1265")), "0.809")  # root, 34
    assert F("0.9") * F("0.2") + F("0.5") * F("0.809") + F("0.3") == F("0.8845")  # propagated: from 0.809 ...
    h2 = tanh(mpf("0.9") * mpf("0.5") + mpf("0.5") * tanh(mpf("0.98")) + mpf("0.3"))
    assert rounds_to(h2, "0.810")  # ... which is wrong (line 34, printed again on 37)
    z3_true = mpf("0.18") + mpf("0.5") * h2 + mpf("0.3")
    assert rounds_to(z3_true, "0.8849")
    assert rounds_to(tanh(mpf("0.8845")), "0.709")  # root, 37: wrong even from the printed 0.8845


def test_gru_in_plain_mpmath():
    mp.dps = 30
    assert [rounds_to(tanh(mpf(a)), p) for a, p in (("0.55", "0.500"), ("0.35", "0.337"))] == [False, False]  # root
    assert rounds_to(mpf("0.587") * mpf("0.337"), "0.198")  # propagated: right from the printed operands ...
    assert rounds_to(tanh(mpf("0.35")), "0.336")  # ... one of which, 0.337, is wrong
    z = 1 / (1 + exp(-mpf("0.35")))
    assert rounds_to(z * tanh(mpf("0.35")), "0.197") and rounds_to(mpf("0.587") * mpf("0.336"), "0.197")


def test_attention_codelab_in_plain_mpmath():
    mp.dps = 30
    w = 1 / (1 + exp(-1 / sqrt(2)))  # softmax([1/√2, 0]) on the matching key, from the printed Q = K = I, d_k = 2
    out = [w * 1 + (1 - w) * 3, w * 2 + (1 - w) * 4, (1 - w) * 1 + w * 3, (1 - w) * 2 + w * 4]
    assert [mp.nstr(v, 6) for v in out] == ["1.66048", "2.66048", "2.33952", "3.33952"]  # root, line 15
    assert not any(rounds_to(v, p) for v, p in zip(out, "1.66082 2.66082 2.33918 3.33918".split()))
    assert _lines("attn-codelab-amanailab.md")[22].endswith("[[1.66082, 2.66082], [2.33918, 3.33918]]")  # again
    case2 = [w * 10 + (1 - w) * 30, w * 20 + (1 - w) * 40]
    assert [mp.nstr(v, 7) for v in case2] == ["16.60477", "26.60477"]  # root, line 27


def test_positional_encoding_in_plain_mpmath():
    mp.dps = 30
    s1, c1, s2, c2 = sin(mpf(1) / 100), cos(mpf(1) / 100), sin(mpf(2) / 100), cos(mpf(2) / 100)
    assert not rounds_to(s1, "0.00999") and not rounds_to(c1, "0.9999")  # root, 61
    assert rounds_to(c2, "0.9998") and not rounds_to(c2, "-0.9988")  # root, 66: cos of the printed 2/100
    assert not rounds_to(cos(2), "-0.4016") and not rounds_to(c2, "0.9908")  # root, 76
    assert rounds_to(s1, "0.010") and not rounds_to(s1, "0.009")  # root, 129
    assert not rounds_to(sin(2), "1.82") and not rounds_to(s2, "0.018") and not rounds_to(c2, "0.99")  # root, 130
    # propagated, 151: 0.6 + 0.00999 and 0.3 + 0.9999 are exact from the printed cells, which are wrong
    assert F("0.6") + F("0.00999") == F("0.60999") and F("0.3") + F("0.9999") == F("1.2999")
    assert not rounds_to(mpf("0.6") + s1, "0.60999") and not rounds_to(mpf("0.3") + c1, "1.2999")


def test_softmax_cross_entropy_in_plain_mpmath():
    mp.dps = 30
    assert not rounds_to(exp(mpf("-1.9")), "0.149")  # root, 57
    p = [exp(mpf(v)) for v in ("-1.9", "0", "-1.0")]
    p = [v / sum(p) for v in p]
    assert rounds_to(mpf("0.149") / mpf("1.517"), "0.098") and not rounds_to(p[0], "0.098")  # propagated, 69
    assert rounds_to(mpf("2.0") * mpf("0.098"), "0.196") and not rounds_to(2 * p[0], "0.196")  # propagated, 130
    # drift, 130: 0.242 is right, 2.0 · 0.242 = 0.484 holds from it, and its rounding interval holds 2 p_2
    assert rounds_to(p[2], "0.242") and not rounds_to(2 * p[2], "0.484")
    assert 2 * mpf("0.2415") <= 2 * p[2] <= 2 * mpf("0.2425")
    for a, b in (("0.098", "-0.0098"), ("0.196", "-0.0196"), ("0.484", "-0.0484")):  # propagated, 139–140
        assert F("-0.1") * F(a) == F(b)
    assert not rounds_to(-p[0] / 10, "-0.0098") and not rounds_to(-p[2] / 5, "-0.0484")


def test_layernorm_in_plain_mpmath():
    mp.dps = 30
    rows = {134: ("0.0 0.1 0.4 -0.1", "0.10", "0.208"), 135: ("0.5 -0.3 0.2 0.6", "0.25", "0.374"),
            136: ("0.2 0.7 -0.4 0.3", "0.20", "0.424"), 137: ("-0.1 0.4 0.8 -0.2", "0.225", "0.424"),
            138: ("0.3 -0.1 0.1 0.5", "0.20", "0.245")}
    normalized = dict(zip((134, 135, 136, 137, 138), CAUSES["layernorm-hello-prompt.md"][5:10]))
    for line, (row, mean, std) in rows.items():
        x = [mpf(v) for v in row.split()]
        mu = sum(x) / 4
        pop = sqrt(sum((v - mu) ** 2 for v in x) / 4)
        assert rounds_to(mu, mean) and not rounds_to(pop, std)  # root: the std, from the printed row
        printed = [p for p in normalized[line][1].split(", ")]
        lo, hi = mpf(std) - mpf("0.0005"), mpf(std) + mpf("0.0005")
        # the normalized row, from the printed mean and std at their printed precision
        fits = all(any(rounds_to((v - mpf(mean)) / s, p) for s in (lo, mpf(std), hi)) or
                   min((v - mpf(mean)) / lo, (v - mpf(mean)) / hi) <= mpf(p) <= max((v - mpf(mean)) / lo,
                                                                                     (v - mpf(mean)) / hi)
                   for v, p in zip([v for v in x if not rounds_to((v - mu), "0.000")], printed))
        assert fits == (normalized[line][2] == P), line  # propagated from the std where it fits, else root
    assert F("1.44") - F("-0.96") == F("2.40") and F("0.94") - F("-1.47") == F("2.41")  # roots: not 2.88, 2.94
