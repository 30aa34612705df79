"""The public worked example ``layernorm-hello-prompt.md`` (LayerNorm of "Hello, how are you?") as an audit fixture.

Source: https://github.com/micwill755/transformer/blob/796de3411284cc66c1f1f20c3fc9ad80462129ad/lesson/docs/Layer_Normalization_Explained.md
(the rendition keeps every printed number, slips included; its derivation is
``tests/data/examples/derivations/layernorm_hello_prompt.py``).

The page's slips, each recomputed here in plain mpmath (30 digits): the standard deviations
of five of the six tokens and everything computed from them (normalized rows, their
two-decimal copies, two ranges), and the script's "Expected Output", which torch cannot
print: ``Tensor.std`` is the sample standard deviation, and ε = 1e-5 moves the fourth
decimal of the normalized "Hello" row.
"""

from __future__ import annotations

from decimal import Decimal

import mpmath
import pytest

from symseq import Derivation
from symseq.audit import audit_file, for_source, read
from symseq.cli import main

from example_helpers import EXAMPLES
from example_helpers import derivation  # noqa: F401 (the module's fixture)

DOC = EXAMPLES / "layernorm-hello-prompt.md"
NAME = "layernorm-hello-prompt"
TEXT = DOC.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def report(derivation):
    assert for_source(DOC, [derivation]) == [derivation]
    return audit_file(DOC, [derivation])


def _line_of(text: str, start: int = 1) -> int:
    """The line from ``start`` on that contains ``text``; it must be the only one from there."""
    hits = [i for i, ln in enumerate(TEXT, start=1) if i >= start and text in ln]
    assert len(hits) == 1, (text, hits)
    return hits[0]


OUTPUT = _line_of("### Expected Output")


# -- independent arithmetic: plain mpmath at 30 digits, no symseq ---------------------------------------------

X = [["0.1", "0.3", "-0.2", "0.8"], ["0.0", "0.1", "0.4", "-0.1"], ["0.5", "-0.3", "0.2", "0.6"],
     ["0.2", "0.7", "-0.4", "0.3"], ["-0.1", "0.4", "0.8", "-0.2"], ["0.3", "-0.1", "0.1", "0.5"]]


def _row(t):
    mpmath.mp.dps = 30
    return [mpmath.mpf(v) for v in X[t]]


def _mean(r):
    return mpmath.fsum(r) / len(r)


def _ss(r):
    m = _mean(r)
    return mpmath.fsum((v - m) ** 2 for v in r)


def _pop_std(r):
    return mpmath.sqrt(_ss(r) / len(r))


def _sample_std(r):
    return mpmath.sqrt(_ss(r) / (len(r) - 1))


def _ln(r, eps="0"):
    m, var = _mean(r), _ss(r) / len(r)
    return [(v - m) / mpmath.sqrt(var + mpmath.mpf(eps)) for v in r]


def _decimals(printed: str) -> int:
    parts = printed.split(".")
    return len(parts[1]) if len(parts) > 1 else 0


def _holds(printed: str, value) -> bool:
    return abs(mpmath.mpf(printed) - value) <= mpmath.mpf(10) ** (-_decimals(printed)) / 2


def _rounded(value, like: str) -> str:
    q = Decimal(mpmath.nstr(value, 40, strip_zeros=False)).quantize(Decimal(1).scaleb(-_decimals(like)))
    return str(q if q != 0 else abs(q))


def _faults(printed: list[str], values: list) -> tuple[str, str]:
    """(printed, correct) of the entries that do not hold, as the audit lists them."""
    bad = [(p, _rounded(v, p)) for p, v in zip(printed, values) if not _holds(p, v)]
    return ", ".join(p for p, _ in bad), ", ".join(c for _, c in bad)


def _split(vector: str) -> list[str]:
    return [e.strip() for e in vector.strip("[]").split(",")]


def _matrix_rows(first: int, n: int) -> list[list[str]]:
    return [_split(TEXT[i - 1].split("[")[-1].split("]")[0]) for i in range(first, first + n)]


AFTER = _line_of("normalized_embeddings = [") + 1
SOLUTION = _line_of("# with normalization the tokens share a scale") + 1
MANUAL = _line_of("After manual layer norm:", OUTPUT) + 1


def _expected_errata():
    """Every slip: (line, printed, correct), recomputed from the embeddings alone."""
    out = []
    stats = _line_of('"Hello": mean=0.25, std=0.364')
    for t, p in enumerate(("0.364", "0.208", "0.374", "0.424", "0.424", "0.245")):
        line = stats + t
        assert "std=" + p in TEXT[line - 1]
        if not _holds(p, _pop_std(_row(t))):
            out.append((line, p, _rounded(_pop_std(_row(t)), p)))
    for t, printed in enumerate(_matrix_rows(AFTER, 6)):
        f = _faults(printed, _ln(_row(t)))
        if f[0]:
            out.append((AFTER + t, *f))
    for t, printed in enumerate(_matrix_rows(SOLUTION, 3)):
        f = _faults(printed, _ln(_row(t)))
        if f[0]:
            out.append((SOLUTION + t, *f))
        rng = TEXT[SOLUTION + t - 1].split("~")[1].split(",")[0]
        r = _ln(_row(t))
        if not _holds(rng, max(r) - min(r)):
            out.append((SOLUTION + t, rng, _rounded(max(r) - min(r), rng)))
    stds = _line_of("Original stds per token: tensor(")
    out.append((stds, *_faults(_split(TEXT[stds - 1].split("tensor(")[1].rstrip(")")),
                               [_sample_std(_row(t)) for t in range(6)])))
    for t, row in enumerate(_matrix_rows(MANUAL, 6)):  # one matrix over six lines: each row at its own line
        f = _faults(row, _ln(_row(t), "1e-5"))
        if f[0]:
            out.append((MANUAL + t, *f))
    new_stds = _line_of("New stds per token: tensor(")
    out.append((new_stds, *_faults(["1.0000"] * 6, [_sample_std(_ln(_row(t), "1e-5")) for t in range(6)])))
    hello = _line_of("Normalized 'Hello': tensor(")
    out.append((hello, *_faults(_split(TEXT[hello - 1].split("tensor(")[1].rstrip(")")), _ln(_row(0)))))
    out.append((_line_of("Normalized std: 1.000000"), "1.000000", _rounded(_sample_std(_ln(_row(0))), "1.000000")))
    return [e for e in out if e[0] is not None]


def test_slips_recomputed_in_mpmath():
    errata = _expected_errata()
    assert len(errata) == 24  # five of them the rows of one 6×4 matrix, each at its line
    for line, printed, correct in errata:
        assert printed and correct and printed != correct, (line, printed, correct)
    # spot values, written out
    mpmath.mp.dps = 30
    assert _rounded(_pop_std(_row(1)), "0.208") == "0.187" and not _holds("0.208", _pop_std(_row(1)))
    assert _rounded(_sample_std(_row(0)), "0.3640") == "0.4203"
    assert _rounded(_ln(_row(0), "1e-5")[0], "-0.4124") == "-0.4121"
    assert _rounded(_sample_std(_ln(_row(0))), "1.000000") == "1.154701"
    r = _ln(_row(2))
    assert _rounded(max(r) - min(r), "2.94") == "2.57"


def test_the_printed_values_that_hold_recomputed_in_mpmath():
    mpmath.mp.dps = 30
    x = _row(0)
    assert _mean(x) == mpmath.mpf("0.25") and _ss(x) / 4 == mpmath.mpf("0.1325")
    assert _holds("0.364", _pop_std(x)) and _holds("0.132", _ss(x) / 4) and _holds("0.1325", mpmath.mpf("0.364") ** 2)
    assert _holds("0.364", mpmath.sqrt(mpmath.mpf("0.1325") + mpmath.mpf("0.00001")))
    for p, v in zip(("-0.412", "0.137", "-1.236", "1.511"), _ln(x)):
        assert _holds(p, v)
    for p, v in zip(("-0.41", "0.14", "-1.24", "1.51"), _ln(x)):
        assert _holds(p, v)
    for t, m in enumerate(("0.2500", "0.1000", "0.2500", "0.2000", "0.2250", "0.2000")):
        assert _holds(m, _mean(_row(t))) and abs(_mean(_row(t)) - mpmath.mpf(m)) < mpmath.mpf(10) ** -25
    for t, rng in enumerate(("1.0", "0.5", "0.9")):
        assert abs(max(_row(t)) - min(_row(t)) - mpmath.mpf(rng)) < mpmath.mpf(10) ** -25
    assert _holds("2.75", max(_ln(x)) - min(_ln(x)))


# -- the audit as it stands -----------------------------------------------------------------------------------

def test_cli_exit_code_is_one_for_a_page_with_errata(capsys):
    code = main(["audit", str(DOC), "--no-bundled", "--path", str(EXAMPLES)])
    assert code == 1
    assert "layernorm-hello-prompt.md:" in capsys.readouterr().out


def test_every_erratum_at_its_line_with_printed_and_correct(report):
    got = sorted((e.line, e.printed, e.correct) for e in report.errata)
    assert got == sorted(_expected_errata())
    # the five wrong stds of the "Before" block are claimed (√v of the row printed above them), so the rows the
    # "After" block normalizes with them trace back to them (test_example_errata_causes)
    assert sorted(e.line for e in report.errata if "::std of" in e.source) == [134, 135, 136, 137, 138]
    assert not [e for e in report.errata if e.kind == "arithmetic"]
    assert all(e.source.startswith(NAME + "::") for e in report.errata if e.kind != "arithmetic")


def test_multiline_output_matrix_is_read_as_one_claim(report):
    """The six printed lines of 'After manual layer norm' are the one 6×4 claim, every line wrong."""
    toks = [t for t in report.tokens if MANUAL <= t.line < MANUAL + 6]
    assert [t.line for t in toks] == list(range(MANUAL, MANUAL + 6))
    assert {t.attribution.verdict for t in toks} == {"wrong"} and len({t.attribution.claim_id for t in toks}) == 1


def test_reported_and_covered(report):
    reported = {t.line for t in report.tokens if t.attribution.verdict == "reported"}
    for where in ("[15.2, -8.9, 22.1, -12.4]", "[0.23, -0.87, 1.12, -0.48]", "layer_5_gradient = 15.7",
                  "out of 100 and others out of 1000"):
        assert _line_of(where) in reported, where
    covered = {(t.line, t.text) for t in report.tokens if t.attribution.verdict == "covered"}
    for where, text in (("hello_features = [0.1, 0.3, -0.2, 0.8]", "[0.1, 0.3, -0.2, 0.8]"),
                        ("     = 0.1325", "0.1325"), ("Layer 1:  [-0.41, 0.14, -1.24, 1.51]", "[-0.41, 0.14, -1.24, 1.51]"),
                        ("Mean=6.5", "6.5"), ("√(0.1325 + 0.00001) = 0.364", "0.00001"),
                        ("Original means per token: tensor(", "[0.2500, 0.1000, 0.2500, 0.2000, 0.2250, 0.2000]")):
        assert (_line_of(where), text) in covered, (where, text)


def _section_regions(derivation):
    starts = []
    for s in derivation.sections:
        hits = [i for i, ln in enumerate(TEXT, start=1) if ln.lstrip("#").strip() == s.title]
        assert len(hits) == 1, (s.title, hits)
        starts.append((hits[0], s.title))
    starts.sort()

    def level(i):  # "## Title" is 2; a bold or plain heading ranks below every "#" one
        hashes = len(TEXT[i - 1]) - len(TEXT[i - 1].lstrip("#"))
        return hashes or 7

    heads = sorted({h.line for h in read(DOC).headings if h.marked})
    out = []
    for a, title in starts:  # a section runs to the next heading of its level or above (its subsections in it)
        nxt = [h for h in heads if h > a and level(h) <= level(a)]
        out.append((a, nxt[0] - 1 if nxt else len(TEXT), title))
    return out


def _foreign_claims(report, derivation):
    regions = _section_regions(derivation)
    titles = [s.title for s in derivation.sections]
    bad = []
    for t in report.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or (t.attribution.section or ("",))[0] != NAME:
            continue
        inside = [title for a, b, title in sorted(regions, reverse=True) if a <= t.line <= b]  # innermost first
        if not inside or t.attribution.section[1] != inside[0]:
            bad.append((t.line, t.text, t.attribution.text()))
    return bad


def test_no_token_is_claimed_from_another_line_or_section(report, derivation):
    assert not _foreign_claims(report, derivation)
    first = _line_of("Original embeddings:", OUTPUT) + 1
    for line in range(first, first + 6):
        toks = [t for t in report.tokens if t.line == line]
        assert toks and all(t.attribution.verdict == "covered" and "Original embeddings" in t.attribution.what for t in toks), line
    hello = _line_of("Original 'Hello' features: tensor(")
    assert all(t.attribution.verdict == "covered" for t in report.tokens if t.line == hello)
    assert not [m for m in report.missing if m.kind == "input"]


def test_no_token_is_claimed_from_another_section_apart_from_the_output_tensor(report, derivation):
    first = _line_of("Original embeddings:", OUTPUT) + 1
    assert [b for b in _foreign_claims(report, derivation) if b[0] != first] == []


def test_multiline_matrix_errata_at_each_row(report):
    for t, row in enumerate(_matrix_rows(MANUAL, 6)):
        printed, correct = _faults(row, _ln(_row(t), "1e-5"))
        hits = [(e.printed, e.correct) for e in report.errata if e.line == MANUAL + t]
        assert hits == [(printed, correct)], (MANUAL + t, hits)


def test_root_of_a_decimal_is_one_token():
    doc = read(DOC)
    line = _line_of("std_dev = √0.1325 = 0.364")
    assert [t.text for t in doc.tokens if t.line == line] == ["√0.1325", "0.364"]


def test_printed_output_block_is_not_code():
    bare = Derivation(NAME + "-bare", title="no claims", source=DOC.name, description="checks nothing")

    @bare.section("Expected Output")
    def nothing(s):
        s.note("no claims: every printed result of this block is unchecked")

    r = audit_file(DOC, [bare], arithmetic=False)  # with it, the block's mean and std lines are checked as well
    first, last = _line_of("Original embeddings:", OUTPUT), _line_of("Normalized std: 1.000000")
    classes = {t.attribution.verdict for t in r.tokens if first <= t.line <= last and "." in t.text}
    assert classes == {"uncovered"}, classes


def test_no_line_with_a_quantity_is_a_heading(report):
    doc = read(DOC)
    line = _line_of("**24 times** in all!")
    assert line not in {h.line for h in doc.headings}
    assert {t.text: t.attribution.verdict for t in report.tokens if t.line == line} == {"12": "covered", "24": "covered"}
    assert not report.missing


def test_ranges_are_wrong_even_from_the_printed_rows(report):
    """The two-decimal rows print ranges ~2.88 and ~2.94, but their own printed entries span 1.44 − (−0.96) = 2.40
    and 0.94 − (−1.47) = 2.41: the audit with no derivation finds both as errata of the page's own arithmetic, and
    with the derivation they are roots, while the rows themselves repeat lines 146 and 147 (propagated)."""
    from symseq.audit.arithmetic import audit_arithmetic
    from symseq.audit.causes import classify

    rows = {_line_of("# Range: ~2.88"): ("-0.48", "0.00", "1.44", "-0.96"),
            _line_of("# Range: ~2.94"): ("0.67", "-1.47", "-0.13", "0.94")}
    with mpmath.workdps(30):
        spans = {line: max(map(mpmath.mpf, r)) - min(map(mpmath.mpf, r)) for line, r in rows.items()}
        assert [mpmath.nstr(v, 3) for v in spans.values()] == ["2.4", "2.41"]
        wanted = {(line, _rounded(v, "2.88")) for line, v in spans.items()}
    bare = audit_arithmetic(read(DOC))
    found = {(s.line, s.links[-1].correct[0]) for s in bare.errata}
    assert wanted <= found
    # the others: the population standard deviations of five rows (lines 134-138, e.g. 0.208 for √0.035 = 0.187)
    # and of the printed normalized row (429: 1.000692), wrong from their printed operands, and the normalized
    # 'Hello' row printed under its features (427: LayerNorm of [0.1, 0.3, -0.2, 0.8] with ε = 0 starts −0.4121)
    assert {line for line, _ in found - wanted} == {134, 135, 136, 137, 138, 427, 429}
    with mpmath.workdps(30):
        hello = [mpmath.mpf(v) for v in ("0.1", "0.3", "-0.2", "0.8")]
        mu = sum(hello) / 4
        first = (hello[0] - mu) / mpmath.sqrt(sum((v - mu) ** 2 for v in hello) / 4)
        assert mpmath.nstr(first, 4) == "-0.4121"
    causes = {(c.erratum.line, c.erratum.printed): c for c in classify(read(DOC), report.errata)}
    for line, printed in zip(rows, ("2.88", "2.94")):
        assert causes[(line, printed)].kind == "root"
    assert causes[(min(rows), "-0.48, 1.44, -0.96")].kind == "propagated"
    assert causes[(min(rows), "-0.48, 1.44, -0.96")].source.line == _line_of("[-0.481, 0.000, 1.442, -0.962]")


# -- structural numbers ---------------------------------------------------------------------------------------


def test_table_of_contents_is_structural(report):
    assert report.uncovered() == []


def test_superscript_square_is_readable():
    """A printed square (0.364², (-0.15)²) reads as a claim's formula, exactly (the page's grammar)."""
    import sympy as sp

    from symseq.read import read_printed

    p = read_printed("0.364²")
    assert (p.kind, p.entries) == ("expr", [sp.Rational(364, 1000) ** 2])
    assert read_printed("(-0.15)²").entries == [sp.Rational(9, 400)]
