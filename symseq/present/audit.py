"""The terminal report of an audit (rich): summary and coverage, errata first, then uncovered numbers by line,
claims missing from the text, the classified counts and the errata by cause, the summary line last; for a page no
derivation speaks of, also the statements of its own arithmetic that only a derivation can decide and those
checked and right. One report (:class:`~symseq.audit.report.AuditReport`) and one renderer for the audit with and
without a derivation, in the table style of every report (:func:`symseq.present.console.report_table`).

Every text of the handout or of a derivation reaches rich as plain text (:class:`~symseq.present.fit.Fit`), never
as markup: a handout that prints ``[/x]`` or ``[bold]`` is shown as written."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..audit.render import summary_line
from ..audit.report import AuditReport
from .console import report_table
from .fit import Fit


def _table(title: str, cols: list[str]) -> Table:
    """A table of the report, in the style of every report (:func:`symseq.present.console.report_table`): as wide
    as its content, its cells wrapped by :class:`~symseq.present.fit.Fit`."""
    t = report_table(title, cols)
    for c in t.columns:
        c.overflow = "fold"
    return t


def _row(t: Table, *cells) -> None:
    """Add a row of plain-text cells (no markup is read in them), each wrapped by :class:`~symseq.present.fit.Fit`,
    which never splits a number, a word or a LaTeX command across lines (a piece too long for its column is
    shortened with an ellipsis), so that prose wraps between words."""
    t.add_row(*(Fit(str(c)) for c in cells))


_LINE = {False: "line", True: "where"}  # the heading of a column of lines: a notebook's or page's are places


def _range(rep: AuditReport, r) -> str:
    """Lines (first, last) as the report prints them: ``12–30`` or, rendered, ``cell 3, line 1 – cell 5, output
    line 2``."""
    if not rep.rendered:
        return f"{r[0]}–{r[1]}"
    a, b = rep.where(r[0]), rep.where(r[1])
    return a if a == b else f"{a} – {b}"


def _range_list(rep: AuditReport, ranges) -> str:
    return ("" if rep.rendered else "lines ") + ", ".join(_range(rep, r) for r in ranges)


def render(rep: AuditReport, out, listing: str = "all", *, known=(), causes=(), verdict=()) -> None:
    """Print ``rep`` on the rich console ``out``: all of it (``listing="all"``), only what fails the audit (sections
    that did not build, errata, claims missing from the text, the errata by cause) and the summary line
    ("failures"), or the summary line alone ("quiet"). ``known`` names the derivations there are, for the head of
    the report of a page none of them speaks of; ``causes`` are the errata by cause
    (:func:`symseq.audit.causes.classify`), ``verdict`` why the audit fails
    (:meth:`~symseq.audit.report.AuditReport.failures`), printed just above the summary line, which is always the
    last line."""
    everything = listing == "all"
    if everything:
        _coverage(rep, out, known)
    if listing != "quiet":
        _failures(rep, out)
    if rep.page_only:
        _page_arithmetic(rep, out, listing)
    if rep.disagreements and everything:
        g = _table(f"the page's arithmetic disagrees with a claim that holds ({len(rep.disagreements)}): the claim "
                   f"decides the number; the statement does not follow from its printed operands",
                   [_LINE[rep.rendered], "printed", "the operands give", "statement", "claim"])
        for x in rep.disagreements:
            _row(g, rep.where(x.line), x.printed, x.correct, x.statement, x.claim)
        out.print(g)
    notes = rep.boundary_notes() if everything else []
    if notes:
        b = _table(f"printed decimals within 1% of a rounding boundary ({len(notes)}): right, but another order of "
                   f"operations may print the other digit", [_LINE[rep.rendered], "claim", "note"])
        for line, c, note in notes:
            _row(b, rep.where(line), c, note)
        out.print(b)
    formulas = rep.formulas if everything else []
    if formulas:
        f = _table(f"formulas checked on the derivation's ledgers ({len(formulas)}): a formula not listed was not "
                   f"read", [_LINE[rep.rendered], "formula", "holds"])
        for line, text, holds in formulas:
            _row(f, rep.where(line), text, "yes" if holds else "no")
        out.print(f)
    words = rep.unchecked_comparisons if everything else []
    if words:
        w = _table(f"comparisons in words no claim checks ({len(words)} of {len(rep.comparisons)}): a claim with "
                   f"near= quoting the word checks one", [_LINE[rep.rendered], "word", "in the text"])
        for c in words:
            _row(w, rep.where(c.line), c.word, c.context)
        out.print(w)
    unc = rep.uncovered() if everything else []
    if unc:
        u = _table(f"uncovered quantity tokens ({len(unc)})", [_LINE[rep.rendered], "token", "in the text", "note"])
        for tok in unc:
            _row(u, rep.where(tok.line), tok.text, tok.context, tok.attribution.text())
        out.print(u)
    if rep.ambiguous and everything:
        a = _table(f"attributions the order of the text leaves open ({len(rep.ambiguous)})",
                   [_LINE[rep.rendered], "printed", "also at", "claim"])
        for x in rep.ambiguous:
            _row(a, rep.where(x.line), x.printed, "; ".join(map(rep.where, x.others)), x.id)
        out.print(a)
    if rep.unlocated and everything:
        out.print(Text("sections without a heading in the text (matched by their printed strings alone): "
                       + "; ".join(f"{d}: {s}" for d, s in rep.unlocated), style="dim"))
    reasons = rep.structural_reasons() if everything else {}
    if reasons:
        r = _table("numbers that are not quantities", ["class: reason", "tokens"])
        for k, n in reasons.items():
            _row(r, k, n)
        out.print(r)
    if listing != "quiet":
        render_causes(causes, out)
    for d, title, why in rep.skipped if everything else ():  # its numbers count as uncovered above: say why
        out.print(Text(f"note: {d} · {title} was not checked ({why}); its numbers are uncovered", style="yellow"),
                  soft_wrap=True)
    if verdict:
        out.print(Text(f"audit failed: {'; '.join(verdict)}", style="bold red"), soft_wrap=True)
    style = "bold red" if rep.failed or verdict else "green"
    out.print(Text(summary_line(rep), style=style), soft_wrap=True)


def _coverage(rep: AuditReport, out, known=()) -> None:
    """The head of the full report: the coverage of the whole file and per derivation, and the sections found."""
    if rep.page_only:
        head = (f"audit of {rep.path}: no derivation has it as its source" + (f" (known: {', '.join(known)})"
                                                                               if known else "")
                + "; checking the arithmetic it prints, from its own printed operands")
    else:
        head = f"audit of {rep.path} against {', '.join(rep.derivations)}"
    out.print(Text(head, style="bold"), soft_wrap=True)
    c = rep.counts
    t = _table("coverage", ["part", "quantity", "structural", "reported", "covered", "uncovered", "wrong",
                            "coverage"])
    rows = [("whole file", c)] + [(f"{n} ({_range_list(rep, rep.spans[n])})",
                                   rep.counts_for(n)) for n in rep.derivations if n in rep.spans]
    for name, k in rows:
        _row(t, name, k.quantity, k.structural, k.reported, k.covered, k.uncovered, k.wrong,
             f"{k.coverage:.1f}%" if k.quantity else "—")
    out.print(t)
    if rep.sections:
        st = _table("sections", ["from – to" if rep.rendered else "lines", "section"])
        for d, title, r in rep.sections:
            _row(st, _range(rep, r) if r else "no heading", f"{d} · {title}")
        out.print(st)


def _failures(rep: AuditReport, out) -> None:
    """What fails the audit: sections that did not build, the errata, the claims missing from the text."""
    for d, title, err in rep.broken:
        out.print(Text(f"{d} · {title} did not build, so none of its claims was checked: {err}",
                       style="bold red"), soft_wrap=True)
    for claim, err in rep.undecided:
        out.print(Text(f"{claim} could not be checked, so the number the text prints for it was not: {err}",
                       style="bold red"), soft_wrap=True)
    if rep.errata:
        e = _table(f"errata ({len(rep.errata)})", [_LINE[rep.rendered], "printed", "correct", "digit at fault", "value",
                                                   "statement" if rep.page_only else "claim"])
        for x in rep.errata:
            _row(e, rep.where(x.line), x.printed, x.correct, x.fault, x.value,
                 x.source + (f" (and {len(x.also)} more claims printed by the same text)" if x.also else ""))
        out.print(e)
    if rep.missing:
        m = _table(f"claims missing from the text ({len(rep.missing)})", ["expected at", "kind", "printed",
                                                                           "location", "what"])
        for x in rep.missing:
            if x.lines and rep.rendered:
                where = _range(rep, x.lines)
            else:
                where = ((f"line {x.lines[0]}" if x.lines[0] == x.lines[1] else f"lines {x.lines[0]}–{x.lines[1]}")
                         if x.lines else "—")
            _row(m, where, x.kind, x.printed, x.location, x.what)
        out.print(m)


def _page_arithmetic(rep: AuditReport, out, listing: str) -> None:
    """What the page's own arithmetic decided, for a page no derivation speaks of: the results only a derivation
    can decide (within the rounding of their printed operands) and the statements checked and right (the full
    report), and the notes on the whole page (a stopped search)."""
    a = rep.arithmetic
    if a.drift and listing == "all":
        d = _table(f"within the rounding of their printed operands: a derivation decides ({len(a.drift)})",
                   [_LINE[rep.rendered], "statement", "printed", "from the printed operands"])
        for s in a.drift:
            for link in s.wrong:
                _row(d, rep.where(s.line), s.text, ", ".join(link.printed[i] for i in link.wrong),
                     ", ".join(link.correct[i] for i in link.wrong))
        out.print(d)
    ok = [s for s in a.statements if s.status == "ok"]
    if ok and listing == "all":
        c = _table(f"checked and right ({len(ok)})", [_LINE[rep.rendered], "statement"])
        for s in ok:
            _row(c, rep.where(s.line), s.text)
        out.print(c)
    for line_no, _, reason in a.unread:
        if not line_no:  # a note on the whole page, such as a stopped search
            out.print(Text(f"note: {reason}", style="yellow"), soft_wrap=True)


def render_causes(causes, out) -> None:
    """Print the errata by cause (:func:`symseq.audit.causes.classify`): each root (or rounding drift) with the
    errata it caused beneath it, then any propagated erratum whose root is not listed."""
    if not causes:
        return
    t = _table("errata by cause (root: wrong even from the page's own printed operands)",
               ["line", "printed", "cause", "why"])
    listed = set()
    for c in causes:
        if c.source is not None:
            continue
        _row(t, c.erratum.line if c.erratum.line is not None else "—", c.erratum.printed, c.kind, c.reason)
        for d in c.chain:
            sub = next((x for x in causes if x.erratum is d), None)
            if sub is not None:
                _row(t, f"  ↳ {d.line}", d.printed, sub.kind, sub.reason)
                listed.add(id(d))
    for c in causes:
        if c.source is not None and id(c.erratum) not in listed:
            _row(t, c.erratum.line, c.erratum.printed, c.kind, c.reason)
    out.print(t)
