"""What the tests of the worked examples in ``tests/data/examples`` share: their derivation and its audit (the
fixtures ``derivation`` and ``report``, for a module naming ``NAME`` and ``MD``), the line ranges of a rendition's
sections, the section a token's reason names, and the rounding rule checked in plain mpmath."""

from __future__ import annotations

from pathlib import Path

import pytest
from mpmath import mpf

from symseq.audit import audit_file
from symseq.authoring import discover

EXAMPLES = Path(__file__).resolve().parent / "data" / "examples"


def renditions(derivations) -> list[Path]:
    """The renditions in ``tests/data/examples`` that one of ``derivations`` names as its source, in every format the
    audit reads (``.md``, ``.ipynb``, ``.html``, ``.tex``, ``.txt``), sorted by name."""
    from symseq.read.formats import SUFFIXES

    return sorted(p for p in EXAMPLES.iterdir()
                  if p.suffix.lower() in SUFFIXES and any(d.source == p.name for d in derivations))


def example_derivation(name: str):
    """The one derivation called ``name`` in ``tests/data/examples/derivations``."""
    found = [d for d in discover([EXAMPLES / "derivations"], include_bundled=False) if d.name == name]
    assert len(found) == 1, (name, [d.name for d in found])
    return found[0]


@pytest.fixture(scope="module")
def derivation(request):
    """The derivation of the example a test module covers (its ``NAME``)."""
    return example_derivation(request.module.NAME)


@pytest.fixture(scope="module")
def report(request, derivation):
    """The audit of that module's rendition (its ``MD``) against its derivation."""
    return audit_file(request.module.MD, [derivation])


def section_lines(md: Path, plain_headings=()) -> dict:
    """Heading text -> (first line, last line) of the rendition ``md``: its Markdown headings outside code fences,
    and the lines in ``plain_headings`` that stand as headings without a ``#``."""
    lines = md.read_text(encoding="utf-8").splitlines()
    heads, fence = [], False
    for i, ln in enumerate(lines, start=1):
        if ln.startswith("```"):
            fence = not fence
            continue
        if not fence and (ln.startswith("#") or ln.strip() in plain_headings):
            heads.append((i, ln.lstrip("#").strip()))
    return {title: (i, heads[k + 1][0] - 1 if k + 1 < len(heads) else len(lines))
            for k, (i, title) in enumerate(heads)}


def section_of(attribution, derivation) -> str | None:
    """The section of ``derivation`` whose claim or input decided a token (its attribution), or None."""
    where = attribution.section
    return where[1] if where is not None and where[0] == derivation.name else None


def rounds_to(value, printed: str) -> bool:
    """``printed`` is ``value`` rounded to the printed decimals (within half a unit of the last digit)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(mpf(printed) - value) <= mpf(10) ** (-decimals) / 2
