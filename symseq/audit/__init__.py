"""Handout audit: every number of a handout's text, and which are checked, wrong, or unchecked.

    from symseq.audit import audit_file
    report = audit_file("000_30e9e4099f2cd2dc.txt", derivations)
    report.counts.coverage, report.errata, report.uncovered()

The pipeline: :mod:`.formats` (notebooks and HTML pages rendered as lines, each
with its place in the file), :mod:`.tokens` (numeric tokens), :mod:`.document` (headings,
tables, code), :mod:`.structure` (numbers that are not quantities),
:mod:`.sections` (where each section of a derivation is), :mod:`.matching`
(claims, inputs and reported numbers against tokens), :mod:`.report` (the
result) and :mod:`.render` (the terminal report).
"""

from __future__ import annotations

from pathlib import Path

import importlib

from ..errors import AuditError

# the rest is imported when first used, so that importing symseq.audit.formats (the formats symseq's command line
# offers) does not load the whole audit into every symseq command
_LAZY = {"Document": ".document", "parse": ".document", "read": ".document", "audit": ".matching",
         "digit_fault": ".matching", "AuditReport": ".report", "Counts": ".report", "Erratum": ".report",
         "Missing": ".report"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_LAZY[name], __name__), name)
    return value


def for_source(path: str | Path, derivations: list) -> list:
    """The derivations whose ``source`` is the file name of ``path``."""
    name = Path(path).name
    return [d for d in derivations if d.source == name]


def audit_file(path: str | Path, derivations: list, *, fmt: str | None = None, dps: int = 50,
               arithmetic: bool = True) -> AuditReport:
    """Audit the handout at ``path`` against ``derivations`` (see :func:`symseq.audit.matching.audit`) and, unless
    ``arithmetic=False``, count the page's own arithmetic in it (:meth:`AuditReport.add_arithmetic`: a token no
    claim speaks of takes the verdict of the statement that prints it; where both speak, the claim decides and a
    disagreement is listed).

    Raises:
        AuditError: when the file cannot be read or no derivation is given.
    """
    from .document import read
    from .matching import audit

    if not derivations:
        raise AuditError(f"no derivation to audit {path} against; name one with --derivation NAME "
                         f"(symseq list shows them)")
    rep = audit(read(path, fmt=fmt), derivations, dps=dps)
    if arithmetic:
        from .arithmetic import audit_arithmetic

        rep.add_arithmetic(audit_arithmetic(read(path, fmt=fmt), dps=dps))
    return rep


__all__ = ["audit_file", "audit", "for_source", "read", "parse", "Document", "AuditReport", "Counts", "Erratum",
           "Missing", "AuditError", "digit_fault"]
