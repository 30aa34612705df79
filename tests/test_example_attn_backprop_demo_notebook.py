"""A public worked example as a fixture: backpropagation through one attention head, autograd against the formulas.

Source: https://github.com/RichardJPovinelli/Neural_Networks_Course/blob/066048e7a78e53d19fba01bfaffec7a4727516ba/Attention_Backprop_Demo.ipynb,
rendered in ``tests/data/examples/attn-backprop-demo-notebook.md``, with its derivation in
``attn_backprop_demo_notebook.py`` (setup, forward pass, autograd, the hand formulas, the comparison, the finite
difference).

The code sets SCALE = True (scale = 1/√d_k = 1/2), but that cell shows no execution count, and every printed result
is the unscaled head's (scale = 1), recomputed below in plain mpmath (30 digits). Against the page as written:

* **root** (a stale configuration: the results do not follow from the printed inputs and code): the entries
  A[1,0], A[1,2], A[1,3], A[2,0], A[2,1] (line 161, 162); all 16 entries of ∂L/∂W_Q (lines 213–216), all 16 of
  ∂L/∂W_K (lines 219–222, twice the true values), 7 of ∂L/∂W_V (lines 225–227). The loss 2.86e-02 holds for both
  scales. Nothing is rounding drift.
* **propagated** from lines 213–216: the same ∂L/∂W_Q printed again for autograd and for the hand formulas (lines
  360–363 and 366–369) and its [0,0] entry on lines 406–407, with the same wrong digits (the audit's convention for
  a wrong number printed again; tests/test_example_errata_causes.py lists every erratum with its cause).
* **root**, line 405: the float32 central difference −2.51e-04. In exact arithmetic the central difference at
  eps = 1e-4 is −1.27e-04 (scaled) or −2.54e-04 (unscaled): float32 cancellation of L(W+eps) − L(W−eps) ≈ 5e-8
  against L ≈ 0.029 is a second, independent slip, reproduced below in float32.

The maxima |manual − autograd| (line 354–357) are float rounding noise of an exact 0 and are reported.
"""

from __future__ import annotations

import numpy as np
import pytest
from mpmath import exp, mp, mpf

from symseq.audit import audit, audit_file, parse
from symseq.authoring import discover

from example_helpers import EXAMPLES


def rounds_to(value, printed: str) -> bool:
    """``printed`` (fixed or scientific, 8.67e-02) is ``value`` within half a unit of its last digit."""
    mant, _, e = printed.lower().partition("e")
    decimals = (len(mant.split(".")[1]) if "." in mant else 0) - int(e or 0)
    return abs(mpf(printed) - value) <= mpf(10) ** (-decimals) / 2

MD = EXAMPLES / "attn-backprop-demo-notebook.md"
TEXT = MD.read_text(encoding="utf-8")
LINES = TEXT.splitlines()
NAMES = ("attn-backprop-demo-notebook",)
X = "0.5 0.2 0.1 -0.1 0.0 0.3 -0.2 0.2 0.4 -0.1 0.0 0.3"
W = {"Q": "0.2 -0.1 0.0 0.3 0.1 0.0 0.2 -0.2 -0.1 0.3 0.1 0.0 0.0 0.2 -0.2 0.1",
     "K": "0.1 0.2 0.0 -0.1 0.0 0.1 0.3 0.0 0.2 -0.2 0.1 0.1 -0.1 0.0 0.2 0.2",
     "V": "0.3 0.1 0.0 -0.2 0.0 0.2 0.1 0.0 0.1 -0.1 0.2 0.1 0.0 0.1 -0.2 0.3"}
T = "0.10 0.00 0.05 -0.05 0.00 0.10 -0.05 0.05 0.05 -0.05 0.10 0.00"


@pytest.fixture(scope="module")
def derivations():
    found = [d for d in discover([EXAMPLES / "derivations"], include_bundled=False) if d.source == MD.name]
    assert sorted(d.name for d in found) == sorted(NAMES)
    return found


@pytest.fixture(scope="module")
def report(derivations):
    return audit_file(MD, derivations)


def _m(text, cols=4):
    v = [mpf(x) for x in text.split()]
    return [v[i:i + cols] for i in range(0, len(v), cols)]


def _mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def _t(a):
    return [list(r) for r in zip(*a)]


def _head(scale, wq00=0):
    """Forward and hand backward pass of the page's head at 30 digits: A, L and ∂L/∂W_Q, ∂L/∂W_K, ∂L/∂W_V."""
    mp.dps = 30
    x, t, wq, wk, wv = _m(X), _m(T), _m(W["Q"]), _m(W["K"]), _m(W["V"])
    wq[0][0] += wq00
    q, k, v = _mul(x, wq), _mul(x, wk), _mul(x, wv)
    s = [[e * scale for e in r] for r in _mul(q, _t(k))]
    p = [[exp(e) / sum(exp(f) for f in r) for e in r] for r in s]
    a = _mul(p, v)
    da = [[a[i][j] - t[i][j] for j in range(4)] for i in range(3)]
    loss = sum(e * e for r in da for e in r) / 2
    dp = _mul(da, _t(v))
    ds = [[p[i][j] * (dp[i][j] - sum(p[i][c] * dp[i][c] for c in range(3))) for j in range(3)] for i in range(3)]
    dq = [[e * scale for e in r] for r in _mul(ds, k)]
    dk = [[e * scale for e in r] for r in _mul(_t(ds), q)]
    g = {"Q": _mul(_t(x), dq), "K": _mul(_t(x), dk), "V": _mul(_t(x), _mul(_t(p), da))}
    return dict(A=a, L=loss, g=g)


def _printed_rows(first_line: int, n: int) -> list[list[str]]:
    import re

    return [re.findall(r"-?\d\.\d\de[-+]\d\d", LINES[i - 1])[:4] for i in range(first_line, first_line + n)]


BLOCKS = {"A": (160, "A"), "Q": (213, "g"), "K": (219, "g"), "V": (225, "g")}  # first line of each printed tensor


def test_rendition_names_its_source():
    assert LINES[0].startswith("Source: https://github.com/RichardJPovinelli/Neural_Networks_Course/blob/")
    assert "rendition" in LINES[1]
    assert LINES[159].startswith("tensor([[ 8.67e-02") and LINES[212].startswith("tensor([[-2.54e-04")


def test_every_printed_result_is_the_unscaled_heads():
    unscaled = _head(mpf(1))
    for name, (line, kind) in BLOCKS.items():
        rows = _printed_rows(line, 3 if name == "A" else 4)
        value = unscaled["A"] if kind == "A" else unscaled["g"][name]
        assert all(rounds_to(value[i][j], rows[i][j]) for i in range(len(rows)) for j in range(4)), name
    assert rounds_to(unscaled["L"], "0.0286") and rounds_to(_head(mpf(1) / 2)["L"], "0.0286")


def _expected_errata():
    """(line, printed) of every printed entry that is wrong for the scaled head the code sets up."""
    scaled, out = _head(mpf(1) / 2), set()
    for name, (line, kind) in BLOCKS.items():
        rows = _printed_rows(line, 3 if name == "A" else 4)
        value = scaled["A"] if kind == "A" else scaled["g"][name]
        for i, row in enumerate(rows):
            for j, p in enumerate(row):
                if not rounds_to(value[i][j], p):
                    out.add((line + i, p))
                    if name == "Q":  # the same tensor printed again, for autograd and for the hand formulas
                        out |= {(360 + i, p), (366 + i, p)}
    return out | {(405, "-2.51e-04"), (406, "-2.54e-04"), (407, "-2.54e-04")}


def test_the_errata_against_the_code_as_printed():
    expected = _expected_errata()
    assert len(expected) == 5 + 3 * 16 + 16 + 7 + 3
    scaled = _head(mpf(1) / 2)
    assert mp.nstr(scaled["g"]["Q"][0][0], 3) == "-0.000127" and mp.nstr(scaled["g"]["K"][0][3], 3) == "-0.000147"
    # the central difference, exact, at eps = 1e-4: the gradient to 3 digits, scaled or not
    eps = mpf("1e-4")
    for scale, printed in ((mpf(1) / 2, "-0.000127"), (mpf(1), "-0.000254")):
        diff = (_head(scale, eps)["L"] - _head(scale, -eps)["L"]) / (2 * eps)
        assert mp.nstr(diff, 3) == printed


def test_the_float32_central_difference_prints_the_page_number():
    def loss(wq00):
        x, t = np.array(_m(X), dtype=np.float32), np.array(_m(T), dtype=np.float32)
        wq, wk, wv = (np.array(_m(W[k]), dtype=np.float32) for k in "QKV")
        wq[0, 0] += np.float32(wq00)
        s = (x @ wq) @ (x @ wk).T
        p = np.exp(s - s.max(1, keepdims=True))
        a = (p / p.sum(1, keepdims=True)) @ (x @ wv)
        return np.float32(0.5) * np.sum((a - t) ** 2, dtype=np.float32)

    diff = (loss(1e-4) - loss(-1e-4)) / np.float32(2e-4)
    assert f"{diff:.2e}" != "-2.54e-04" and abs(diff - -2.54e-4) > 1e-6  # cancellation, not the gradient


def test_the_audit_finds_exactly_those_errata(report):
    assert {(e.line, e.printed) for e in report.errata} == _expected_errata()
    c = report.counts
    assert (c.wrong, c.uncovered, c.reported) == (79, 0, 5) and not report.missing
    (a10,) = [e for e in report.errata if (e.line, e.printed) == (161, "8.69e-02")]
    assert (a10.correct, a10.fault) == ("8.68e-02", "2nd decimal: printed 9, correct 8")


@pytest.mark.parametrize("old, new, printed, correct", [
    ("Loss L: 2.86e-02", "Loss L: 2.87e-02", "2.87e-02", "2.86e-02"),
    ("    [0.5, 0.2, 0.1, -0.1],", "    [0.5, 0.2, 0.1, -0.2],", "-0.2", "-0.1"),  # an input of the code
])
def test_an_edit_of_a_right_number_is_wrong_at_its_line(derivations, old, new, printed, correct):
    assert TEXT.count(old) == 1, old
    rep = audit(parse(TEXT.replace(old, new), path=MD.name), derivations)
    line = next(i for i, ln in enumerate(LINES, start=1) if old in ln)
    assert [(e.printed.strip("[]"), e.correct.strip("[]")) for e in rep.errata if e.line == line] == [
        (printed.strip("[]"), correct.strip("[]"))]
