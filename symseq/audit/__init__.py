"""Handout audit: every number of a handout's text, and which are checked, wrong, or unchecked.

    from symseq.audit import audit_file
    report = audit_file("000_30e9e4099f2cd2dc.txt", derivations)
    report.counts.coverage, report.errata, report.uncovered()

The page is read by :mod:`symseq.read`: :mod:`symseq.read.formats` (notebooks and HTML pages rendered as
lines, each with its place in the file), :mod:`symseq.read.page` (numeric tokens), :mod:`symseq.read.document`
(headings, tables, code) and :mod:`symseq.read.sections` (where each section of a derivation is). The audit adds
:mod:`.structure` (numbers that are not quantities), :mod:`.matching`
(claims, inputs and reported numbers against tokens), :mod:`.report` (the
result) and :mod:`.render` (the terminal report).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AuditError

if TYPE_CHECKING:  # names of the annotations below; imported when first used (_LAZY)
    from ..read.document import Document
    from .report import AuditReport

# the rest is imported when first used, so that importing symseq.read.formats (the formats symseq's command line
# offers) does not load the whole audit into every symseq command
_LAZY = {"Document": "..read.document", "parse": "..read.document", "read": "..read.document",
         "relayout": "..read.document",
         "audit": ".matching", "digit_fault": ".matching", "AuditReport": ".report", "Counts": ".report",
         "Erratum": ".report", "Missing": ".report"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name], __name__), name)
    return value


def for_source(path: str | Path, derivations: list) -> list:
    """The derivations whose ``source`` is the page at ``path``: a ``source`` that is its file name, or a relative
    path (``pages/x.md``) that names it from the current folder or from the folder of the derivation's module.

    ``derivations`` are :class:`~symseq.authoring.derivation.Derivation` objects or catalogue entries
    (:class:`~symseq.authoring.discovery.Entry`, whose ``file`` is the module's file)."""
    target = Path(path)
    name = target.name

    def names_it(d) -> bool:
        src = Path(d.source)
        if d.source == name:
            return True
        if src.name != name or src.is_absolute() or not target.is_file():
            return False
        module = getattr(d, "file", None) or getattr(getattr(d, "module", None), "__file__", None)
        folders = [Path.cwd()] + ([Path(module).resolve().parent] if module else [])
        return any((f / src).is_file() and (f / src).resolve() == target.resolve() for f in folders)

    return [d for d in derivations if names_it(d)]


def audit_file(path: str | Path, derivations: list, *, fmt: str | None = None, dps: int = 50,
               arithmetic: bool = True) -> AuditReport:
    """Audit the handout at ``path`` against ``derivations`` (see :func:`symseq.audit.matching.audit`) and, unless
    ``arithmetic=False``, count the page's own arithmetic in it (:meth:`AuditReport.add_arithmetic`: a token no
    claim speaks of takes the verdict of the statement that prints it; where both speak, the claim decides and a
    disagreement is listed).

    Raises:
        AuditError: when the file cannot be read or no derivation is given.
    """
    from ..read.document import read

    if not derivations:
        raise AuditError(f"no derivation to audit {path} against; name one with --derivation NAME "
                         f"(symseq list shows them)")
    return audit_document(read(path, fmt=fmt), derivations, dps=dps, arithmetic=arithmetic)


def audit_document(doc: Document, derivations: list, *, dps: int = 50, arithmetic: bool = True) -> AuditReport:
    """The audit of a document already read (:func:`read`, :func:`parse`, or an edited copy made by
    :func:`symseq.read.document.relayout`) against ``derivations``, with the page's own arithmetic counted in
    it unless ``arithmetic=False``: what :func:`audit_file` and ``symseq audit`` report, and what
    :mod:`symseq.audit.mutate` judges an edit by."""
    from ..read.document import relayout
    from .matching import audit

    fresh = relayout(doc, doc.lines) if arithmetic else None  # read before the claims classify doc's tokens
    rep = audit(doc, derivations, dps=dps).place_missing(derivations)
    if arithmetic:
        from .arithmetic import audit_arithmetic

        rep.add_arithmetic(audit_arithmetic(fresh, dps=dps, exact=exact_as_printed(rep.tokens)))
    from .bound import check

    failed = {e.line for e in rep.errata}  # a line a wrong number or a false statement fails is named once
    held: list = []
    false = check(doc, derivations, rep.sections, checked=rep.formulas, held=held)
    rep.add_statements([b for b in false if b.line not in failed], "the derivation's ledger")
    rep.add_ledger_values(held)
    rep.add_repeats(doc.lines)
    return rep.add_comparisons(doc)


def exact_as_printed(tokens) -> frozenset:
    """The printed numbers a derivation holds to be exact as printed: the entries of each token covered by an input
    it declares, or by a claim whose every entry is its true value exactly (no rounding). The page's own arithmetic
    reads them as exact operands wherever the page uses them again (:func:`symseq.audit.arithmetic.audit_arithmetic`):
    ``0.1`` is exact in ``0.9[2,0]+0.1[0,2]+0.1[4,4]`` when the derivation's weight is 1/10."""
    from ..verify.claims import Claim
    from .attribution import Given

    out = set()
    for t in tokens:
        a = t.attribution
        if a is None or a.verdict != "covered":
            continue
        if isinstance(a.by, Claim):
            r = a.by.result
            if r is None or r.status != "ok" or any(e not in (None, 0) for e in r.errors):
                continue
        elif not isinstance(a.by, Given):
            continue
        out.update(t.entries)
    return frozenset(out)


__all__ = ["audit_file", "audit_document", "audit", "for_source", "read", "parse", "relayout", "Document",
           "AuditReport", "Counts", "Erratum", "Missing", "AuditError", "digit_fault"]
