"""Strangers' pages (tests/data/strangers): public worked examples labelled statement by statement by a reader who
never saw the checker. The audit with no derivation must report no erratum where the labels say the page is right;
the labels must point at the lines that print them; and every root erratum the labels claim is recomputed here
independently, in plain mpmath, from the page's own printed operands."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import mpmath
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from strangers import STRANGERS, pages, score  # noqa: E402
from arithmetic_coverage import _norm, load_labels  # noqa: E402

PAGES = pages()


def test_there_are_strangers_pages_with_root_errata():
    assert len(PAGES) >= 10
    assert sum(any(lab.verdict == "wrong" for lab in load_labels(p, STRANGERS / "labels")) for p in PAGES) >= 5


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_each_label_points_at_a_line_that_prints_its_result(page):
    lines = page.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("Source: https://")
    for lab in load_labels(page, STRANGERS / "labels"):
        entries = [e for e in re.split(r",", _norm(lab.result)) if e]
        line = _norm(lines[lab.line - 1]).replace("\\,", "")
        assert all(e.rstrip("%") in line for e in entries), (lab.line, lab.result, lines[lab.line - 1])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_audit_with_no_derivation_reports_no_erratum_where_the_labels_say_the_page_is_right(page):
    s = score(page)
    assert [(e.line, e.printed, e.fault) for e in s["false"]] == []


def _wrong(name: str) -> dict:
    """line → the printed results labelled wrong on it."""
    out: dict = {}
    for lab in load_labels(STRANGERS / name, STRANGERS / "labels"):
        if lab.verdict == "wrong":
            out.setdefault(lab.line, []).append(lab.result)
    return out


def _misprinted(value, printed: str) -> bool:
    """Whether ``printed`` (a decimal, or a percentage) is not ``value`` rounded to its digits."""
    percent = printed.endswith("%")
    text = printed.rstrip("%")
    digits = len(text.split(".")[1]) if "." in text else 0
    v = value * 100 if percent else value
    return mpmath.nstr(mpmath.mpf(mpmath.nint(v * 10 ** digits)) / 10 ** digits, 20) != mpmath.nstr(mpmath.mpf(text), 20)


def test_the_root_errata_the_labels_claim_are_wrong_in_plain_mpmath():
    mpmath.mp.dps = 30
    f = mpmath.mpf
    e = mpmath.e
    softmax = lambda *xs: [e ** x / sum(e ** y for y in xs) for x in xs]  # noqa: E731
    claims = [  # (page, line, printed, value from the page's own printed operands)
        ("attn-sitting-dog-weighted-sum.md", 45, "0.13", f("0.3") * f("0.1") + f("0.4") * f("0.3") + f("0.1") * f("0.6")),
        ("attn-sitting-dog-weighted-sum.md", 47, "0.26", f("0.3") * f("0.2") + f("0.4") * f("0.4") + f("0.1") * f("0.7")),
        ("attn-sitting-dog-weighted-sum.md", 62, "0.4", softmax(f("0.13") / 3, f("0.26") / 3)[0]),
        ("attn-sitting-dog-weighted-sum.md", 64, "0.6", softmax(f("0.13") / 3, f("0.26") / 3)[1]),
        ("attn-softmax-ten-zero-minus-five.md", 29, "0.9999545", f("22026.4658") / f("22027.4725")),
        ("attn-softmax-ten-zero-minus-five.md", 33, "0.0003%", f("0.0000003")),
        ("attn-softmax-ten-zero-minus-five.md", 36, "0.9999545", softmax(10, 0, -5)[0]),
        ("attn-softmax-ten-zero-minus-five.md", 69, "0.9999", softmax(10, 0, -5)[0]),
        ("attn-softmax-ten-zero-minus-five.md", 98, "0.9929", f("148.41") / f("149.492")),
        ("attn-lecture-scaled-dot-product.md", 92, "0.501", f("4.096") / f("8.164")),
        ("rnn-i-love-ai-forward.md", 150, "0.422", mpmath.tanh(f("0.449"))),
        ("rnn-i-love-ai-forward.md", 151, "0.633", mpmath.tanh(f("0.745"))),
        ("rnn-lstm-scalar-forward.md", 50, "0.4417", mpmath.tanh(f("0.4741"))),
        ("rnn-lstm-scalar-forward.md", 64, "0.4934", mpmath.tanh(f("0.5403"))),
        ("rnn-lstm-scalar-forward.md", 73, "0.3915", 1 / (1 + e ** f("0.4413"))),
        ("rnn-lstm-scalar-forward.md", 75, "-0.7745", mpmath.tanh(f("-1.0294"))),
    ]
    claims += [("attn-softmax-ten-zero-minus-five.md", 105, p, v)
               for p, v in zip(("0.6011", "0.1711", "0.2278"), softmax(f("1.25"), 0, f("-0.625")))]
    # LayerNorm (ε = 1e-5, population variance) of the residual row the page prints on lines 187-188
    page = (STRANGERS / "norm-layernorm-manual-llm.md").read_text(encoding="utf-8").split("\n")
    row = [f(x) for x in re.findall(r"-?\d+\.\d+", page[186] + page[187])]
    printed = re.findall(r"-?\d+\.\d+", page[192] + page[193])
    mu = sum(row) / len(row)
    sd = mpmath.sqrt(sum((x - mu) ** 2 for x in row) / len(row) + f("1e-5"))
    wrong = _wrong("norm-layernorm-manual-llm.md")
    claims += [("norm-layernorm-manual-llm.md", 193 if j < 8 else 194, p, (x - mu) / sd)
               for j, (x, p) in enumerate(zip(row, printed)) if p in wrong.get(193 if j < 8 else 194, [])]
    # sinusoidal positions, D = 5: sin on even features, cos on odd ones, at pos / 10000^(2⌊i/2⌋/5)
    table = {k: re.findall(r"-?\d+\.\d+", page_line)
             for k, page_line in ((k, (STRANGERS / "norm-pe-cat-is-black.md").read_text(encoding="utf-8")
                                   .split("\n")[k - 1]) for k in (80, 81, 82))}
    for k, pos in ((80, 1), (81, 2), (82, 3)):
        for i, p in enumerate(table[k]):
            angle = pos / f(10000) ** (f(2 * (i // 2)) / 5)
            v = mpmath.sin(angle) if i % 2 == 0 else mpmath.cos(angle)
            if _misprinted(v, p):
                claims.append(("norm-pe-cat-is-black.md", k, p, v))
    assert len(claims) >= 40
    for name, line, p, value in claims:
        assert p in _wrong(name).get(line, []), (name, line, p)
        assert _misprinted(value, p), (name, line, p, value)
    # and the labels claim no other root erratum on these pages
    labelled = sum(len(v) for n in {c[0] for c in claims} for v in _wrong(n).values())
    assert labelled - 1 <= len(claims)  # the lecture's restated row (line 95) repeats line 92's slip
