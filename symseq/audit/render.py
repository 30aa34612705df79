"""The summary line of an audit (:func:`summary_line`): the one line every rendering of an
:class:`~symseq.audit.report.AuditReport` ends with (the terminal report of :mod:`symseq.present.audit`, the Jupyter
display). Plain text: the rich rendering lives in :mod:`symseq.present.audit`."""

from __future__ import annotations

from .report import AuditReport


def summary_line(rep: AuditReport) -> str:
    """The last line of the report: the counts of the tokens by verdict, the coverage, the false statements and
    formulas (errata that are no single number), the comparisons in words and the formulas checked on the
    derivation's ledgers, and what the audit was against (the derivations, or the page's own arithmetic by its
    statements)."""
    c = rep.counts
    statements = sum(e.kind == "statement" for e in rep.errata)  # not a token: counted apart from "wrong"
    if rep.page_only:
        a = rep.arithmetic
        ok = sum(s.status == "ok" for s in a.statements)
        n = len(a.statements)
        against = (f" (the page's own arithmetic: {n} statement{'' if n == 1 else 's'} — {ok} right, {len(a.errata)} wrong, "
                   f"{len(a.drift)} within rounding, left for a derivation)")
    else:
        against = f" (against {', '.join(rep.derivations)})"
    return (f"{rep.path.name}: {c.quantity} quantity tokens — {c.covered} covered, {c.wrong} wrong, "
            f"{c.uncovered} uncovered; {c.structural} structural, {c.reported} reported; "
            f"coverage {c.coverage_text()}"
            + (f"; {statements} false statement(s) or formula(s)" if statements else "")
            + (f"; {len(rep.disagreements)} disagreement(s) with the page's arithmetic" if rep.disagreements else "")
            + (f"; comparisons in words: {len(rep.comparisons) - len(rep.unchecked_comparisons)} of "
               f"{len(rep.comparisons)} checked" if rep.comparisons else "")
            + (f"; formulas checked on the ledgers: {len(rep.formulas)}" if rep.formulas else "")
            + against)
