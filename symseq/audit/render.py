"""The terminal report of an audit (rich): summary and coverage, errata first, then uncovered numbers by line,
claims missing from the text, and the classified counts."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .report import AuditReport


def _table(title: str, cols: list[str]) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False)
    for c in cols:
        t.add_column(c, overflow="fold")
    return t


def summary_line(rep: AuditReport) -> str:
    c = rep.counts
    return (f"{rep.path.name}: {c.quantity} quantity tokens — {c.covered} covered, {c.wrong} wrong, "
            f"{c.uncovered} uncovered; {c.structural} structural, {c.reported} reported; "
            f"coverage {c.coverage:.1f}%")


def render(rep: AuditReport, out) -> None:
    """Print ``rep`` on the rich console ``out``."""
    out.print(Text(f"audit of {rep.path} against {', '.join(rep.derivations)}", style="bold"), soft_wrap=True)
    c = rep.counts
    t = _table("coverage", ["part", "quantity", "structural", "reported", "covered", "uncovered", "wrong",
                            "coverage"])
    rows = [("whole file", c)] + [(f"{n} (lines {', '.join(f'{a}–{b}' for a, b in rep.spans[n])})",
                                   rep.counts_for(n)) for n in rep.derivations if n in rep.spans]
    for name, k in rows:
        t.add_row(name, str(k.quantity), str(k.structural), str(k.reported), str(k.covered), str(k.uncovered),
                  str(k.wrong), f"{k.coverage:.1f}%")
    out.print(t)
    if rep.sections:
        st = _table("sections", ["lines", "section"])
        for d, title, r in rep.sections:
            st.add_row(f"{r[0]}–{r[1]}" if r else "no heading", f"{d} · {title}")
        out.print(st)
    for d, title, err in rep.broken:
        out.print(Text(f"{d} · {title} did not build, so none of its claims was checked: {err}",
                       style="bold red"), soft_wrap=True)
    if rep.errata:
        e = _table(f"errata ({len(rep.errata)})", ["line", "printed", "correct", "digit at fault", "value", "claim"])
        for x in rep.errata:
            e.add_row(str(x.line) if x.line is not None else "—", x.printed, x.correct, x.fault, x.value,
                      x.source + (f" (and {len(x.also)} more claims printed by the same text)" if x.also else ""))
        out.print(e)
    unc = rep.uncovered()
    if unc:
        u = _table(f"uncovered quantity tokens ({len(unc)})", ["line", "token", "in the text", "note"])
        for tok in unc:
            u.add_row(str(tok.line), tok.text, tok.context, tok.reason)
        out.print(u)
    if rep.missing:
        m = _table(f"claims missing from the text ({len(rep.missing)})", ["expected at", "kind", "printed",
                                                                           "location", "what"])
        for x in rep.missing:
            where = ("lines " + (f"{x.lines[0]}" if x.lines[0] == x.lines[1] else f"{x.lines[0]}–{x.lines[1]}")
                     if x.lines else "—")
            m.add_row(where, x.kind, x.printed, str(x.location), x.what)
        out.print(m)
    if rep.ambiguous:
        a = _table(f"attributions the order of the text leaves open ({len(rep.ambiguous)})",
                   ["line", "printed", "also at", "claim"])
        for x in rep.ambiguous:
            a.add_row(str(x.line), x.printed, ", ".join(map(str, x.others)), x.id)
        out.print(a)
    if rep.unlocated:
        out.print(Text("sections without a heading in the text (matched by their printed strings alone): "
                       + "; ".join(f"{d}: {s}" for d, s in rep.unlocated), style="dim"))
    reasons = rep.structural_reasons()
    if reasons:
        r = _table("numbers that are not quantities", ["class: reason", "tokens"])
        for k, n in reasons.items():
            r.add_row(k, str(n))
        out.print(r)
    style = "bold red" if rep.failed else "green"
    out.print(Text(summary_line(rep), style=style), soft_wrap=True)
