"""Every worked example of ``tests/data/examples`` against its derivation: the audit names each claim ``verify``
finds wrong among its errata, fails exactly when there is one, and classes no quantity as a heading."""

from __future__ import annotations

import re

import pytest

from symseq.audit import audit_file, read

from example_helpers import EXAMPLES, renditions
from symseq.authoring import discover

FOUND = discover([EXAMPLES / "derivations"], include_bundled=False)
PAGES = renditions(FOUND)


def test_there_are_at_least_five_examples():
    assert len(PAGES) >= 5, [p.name for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_claim_verify_finds_wrong_is_an_erratum_of_the_audit(page):
    mine = [d for d in FOUND if d.source == page.name]
    wrong = {c.id for d in mine for c in d.claims if c.in_text and c.check(30).status == "mismatch"}
    rep = audit_file(page, mine)
    named = {e.source for e in rep.errata} | {s for e in rep.errata for s in e.also}
    assert wrong <= named, sorted(wrong - named)
    assert rep.failed == bool(wrong), rep.failures()
    assert not rep.missing, [(m.id, m.lines) for m in rep.missing]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_line_stating_a_quantity_is_a_heading(page):
    doc = read(page)
    for h in doc.headings:
        text = doc.line(h.line)
        if h.marked:
            continue  # the author's own # or \\section markup
        assert not re.search(r"=|\[[-\d.,\s]+\]", text), (h.line, text)
