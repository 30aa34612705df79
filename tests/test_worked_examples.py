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
from symseq.authoring import discover

from example_helpers import EXAMPLES, renditions, section_of_reason

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
    from symseq.audit.sections import locate

    located = locate(doc, ds)
    ranges = {s.title: (loc.start, loc.end) for d in ds for s in d.sections
              if (loc := located.get(id(s))) is not None and loc.start is not None}
    for t in rep.tokens:
        if t.cls not in ("covered", "wrong") or "::" not in t.reason:
            continue
        title = next((x for d in ds if (x := section_of_reason(t.reason, d))), None)  # titles may hold commas
        if title in ranges:
            a, b = ranges[title]
            assert a <= t.line <= b, (t.line, t.text, t.reason)
