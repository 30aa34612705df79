"""Every worked example in tests/data/examples, audited: public pages symseq was not built for.

Each page's rendition (``<slug>.md``, a notebook ``<slug>.ipynb``, a LaTeX source ``<slug>.tex``, or any
suffix the audit reads; its source address on its first line, in a ``%`` comment in LaTeX) has one derivation or
more in ``tests/data/examples/derivations``. Whatever the page, the audit
must agree with ``verify``: every claim that does not hold is an erratum of the
audit, and the audit fails when there is one. No claim takes a token outside
its section, and no line that states a quantity is a heading. The pages'
own errata are asserted, with an independent mpmath check, in the
``test_example_<slug>.py`` files.
"""

import pytest

from symseq.audit import audit_file, read
from symseq.audit.render import summary_line
from symseq.authoring import discover

import mpmath
from mpmath import mpf

from example_helpers import EXAMPLES, renditions, section_of

DERIVATIONS = discover([EXAMPLES / "derivations"], include_bundled=False)
PAGES = renditions(DERIVATIONS)


def test_there_are_at_least_five_pages_each_with_its_source():
    assert len(PAGES) >= 5, [p.name for p in PAGES]
    for p in PAGES:
        first = (p.read_text(encoding="utf-8").splitlines()[0].removeprefix("% ") if p.suffix == ".tex"
                 else read(p).lines[0])  # a notebook's first line: its first cell's
        assert first.startswith("Source: http"), p.name
    assert any(p.suffix == ".ipynb" for p in PAGES) and any(p.suffix == ".tex" for p in PAGES)


def test_the_source_comment_of_a_latex_page_is_no_quantity():
    """The ``%`` line naming a LaTeX page's source (its commit hash is full of digits) yields no token."""
    for p in PAGES:
        if p.suffix == ".tex":
            assert not [t for t in read(p).tokens if t.line <= 2], p.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_the_audit_agrees_with_verify(page):
    ds = [d for d in DERIVATIONS if d.source == page.name]
    rep = audit_file(page, ds)
    wrong = {c.id for d in ds for c in d.claims if c.check().status == "mismatch"}
    assert wrong <= {e.source for e in rep.errata}
    assert rep.failed == bool(wrong or rep.missing)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_claims_stay_in_their_sections_and_quantities_are_not_headings(page):
    ds = [d for d in DERIVATIONS if d.source == page.name]
    rep = audit_file(page, ds)
    doc = read(page)
    assert not [h for h in doc.headings if not h.marked and ("=" in h.text or any(ch.isdigit() for ch in h.text)
                                                            and "[" in h.text)]
    from symseq.read.sections import locate

    located = locate(doc, ds)
    ranges = {s.title: (loc.start, loc.end) for d in ds for s in d.sections
              if (loc := located.get(id(s))) is not None and loc.start is not None}
    for t in rep.tokens:
        if t.attribution.verdict not in ("covered", "wrong") or t.attribution.section is None:
            continue
        title = next((x for d in ds if (x := section_of(t.attribution, d))), None)  # titles may hold commas
        if title in ranges:
            a, b = ranges[title]
            assert a <= t.line <= b, (t.line, t.text, t.attribution)


# The page's own arithmetic counted in an audit with a derivation (issue 13, "no code for the easy part"): a page
# with one claimed number (h) and steps no claim speaks of.
PAGE = """# A tanh step by hand

## 1. One tanh step

Take x = 0.5, w = 0.8 and b = 0.1.

z = 0.8 · 0.5 + 0.1 = 0.5

h = tanh(0.5) = 0.4621

Twice h is 2 · 0.4621 = 0.9242, and three times h is 3 · 0.4621 = 1.3863.
"""


def _tanh_page(tmp_path, text=PAGE):
    import sympy as sp

    from symseq import Derivation

    d = Derivation("tanh-page", title="tanh", source="page.md")

    @d.section("1. One tanh step")
    def one(s):
        s.claim("0.4621", sp.tanh(sp.Rational(1, 2)), what="h")

    path = tmp_path / "page.md"
    path.write_text(text, encoding="utf-8")
    return path, d


def test_a_number_only_the_page_arithmetic_checks_counts_as_covered(tmp_path):
    path, d = _tanh_page(tmp_path)
    before = audit_file(path, [d], arithmetic=False)
    rep = audit_file(path, [d])
    cls = {(t.line, t.text): t.attribution.verdict for t in rep.tokens}
    assert {(t.line, t.text) for t in before.tokens if t.attribution.verdict == "uncovered"} >= {(7, "0.5"), (11, "0.9242")}
    # 0.5 = 0.8 · 0.5 + 0.1 and 2 · 0.4621 = 0.9242 hold from their printed operands: covered, by no claim
    assert cls[(7, "0.5")] == cls[(11, "0.9242")] == cls[(11, "1.3863")] == "covered"
    assert next(t for t in rep.tokens if t.text == "0.9242").attribution.statement.line == 11
    assert cls[(9, "0.4621")] == "covered" and not rep.errata and not rep.disagreements and not rep.failed
    assert [t.line for t in rep.uncovered()] == [5, 5, 5]  # x, w and b: inputs that no claim declares
    assert (before.counts.covered, rep.counts.covered) == (1, 12)  # every number of the three statements


def test_a_wrong_page_arithmetic_statement_beside_a_derivation_is_an_erratum_and_a_root(tmp_path):
    from symseq.audit import read
    from symseq.audit.causes import classify

    path, d = _tanh_page(tmp_path, PAGE.replace("= 0.9242", "= 0.9252"))
    rep = audit_file(path, [d])
    assert rep.failed and rep.counts.wrong == 1
    (e,) = rep.errata
    assert (e.line, e.printed, e.correct, e.kind) == (11, "0.9252", "0.9242", "arithmetic")
    assert e.fault == "3rd decimal: printed 5, correct 4"
    (c,) = classify(read(path), rep.errata, claims=d.claims)
    assert c.kind == "root" and "2 · 0.4621 gives 0.9242" in c.reason
    assert mpf("2") * mpf("0.4621") == mpf("0.9242")  # independently: the printed operands give 0.9242
    assert not audit_file(path, [d], arithmetic=False).failed  # before: no claim spoke of it, and it passed


def test_where_a_claim_and_the_page_arithmetic_disagree_the_claim_decides_and_the_disagreement_is_listed(tmp_path):
    import sympy as sp

    from symseq import Derivation

    # the page computed the loss from the unrounded p = σ(0.5) = 0.622459…: −log p = 0.474077 prints 0.4741, but
    # from the printed 0.6225, −log(0.6225) = 0.474012 prints 0.4740
    d = Derivation("loss-page", title="loss", source="loss.md")

    @d.section("1. The loss")
    def loss(s):
        s.claim("0.4741", -sp.log(1 / (1 + sp.exp(-sp.Rational(1, 2)))), what="the loss")

    path = tmp_path / "loss.md"
    # (0.6225 printed in place, an input exact as printed: a named p = 0.6225 would be a rounded result)
    path.write_text("# 1. The loss\n\nThe loss is $-\\log(0.6225) = 0.4741$.\n", encoding="utf-8")
    rep = audit_file(path, [d])
    (g,) = rep.disagreements
    assert (g.line, g.printed, g.correct) == (3, "0.4741", "0.4740") and g.claim.endswith("the loss")
    assert g.statement.startswith("page arithmetic, line 3")
    assert next(t for t in rep.tokens if t.text == "0.4741").attribution.verdict == "covered" and not rep.errata  # the claim decides
    assert rep.as_json()["disagreements"] == [vars(g)]
    assert "1 disagreement(s) with the page's arithmetic" in summary_line(rep)
    assert mpmath.nstr(-mpmath.log(mpf("0.6225")), 4) == "0.474"  # independently: 0.47401…
    assert mpmath.nstr(-mpmath.log(1 / (1 + mpmath.exp(mpf("-0.5")))), 4) == "0.4741"
