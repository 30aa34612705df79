"""Jupyter display: ledgers, claims, sections, derivations and reports as plain text and as LaTeX.

The core classes know nothing of presentation: each has a one-line ``__repr__`` of its own, and this module
registers richer displays with IPython's formatters by type *name* (module and class), so registering
imports none of those classes, and the renderers are imported only when something is shown.
``import symseq`` registers them when IPython is running; in a plain Python session nothing is registered and
nothing from ``symseq.present`` is imported. ``%load_ext symseq.present.jupyter`` registers them explicitly.

* ``text/plain`` (:func:`text`): what ``symseq show`` prints, as plain text at :data:`WIDTH` columns — a
  ledger's rows (name, definition, shape, value), a claim with its status, a section's counts, ledgers and
  claims; a derivation as one line per section with its counts (:func:`derivation_summary`), so that a
  derivation of hundreds of claims stays short; a verify or audit report as its summary and failures.
* ``text/latex`` (:func:`latex`): math that MathJax and pdflatex (amsmath, amssymb) both accept — ``$$``
  displays of ``aligned`` and ``array`` with ``\\text`` runs, never ``tabular``, ``\\resizebox`` or
  ``\\hspace`` (:func:`symseq.present.latex.repr_latex`); a derivation as a table of its sections with their
  counts, at most :data:`DERIVATION_LATEX_LIMIT` bytes (its sections are displayed one at a time:
  ``d.sections[3]``); a section's displays are held to :data:`SECTION_LIMIT` characters (the ledgers that do
  not fit are named, to be displayed one at a time).
"""

from __future__ import annotations

import io
import sys

WIDTH = 100  # columns of the plain-text displays
DERIVATION_LATEX_LIMIT = 8000  # bytes of a derivation's LaTeX display, whatever its number of sections
TITLE_LIMIT = 70  # characters of a section title in a derivation's summary
SECTION_LIMIT = 16000  # characters of a section's display: ledgers past it are named, not shown

# (module, class) of each object Jupyter shows as LaTeX
TYPES = (
    ("symseq.ledger", "Ledger"),
    ("symseq.verify.claims", "Claim"),
    ("symseq.authoring.derivation", "Section"),
    ("symseq.authoring.derivation", "Derivation"),
)
# (module, class) of each object Jupyter shows as plain text: those above and the reports
TEXT_TYPES = TYPES + (("symseq.verify.report", "Report"), ("symseq.audit.report", "AuditReport"))


def _plain(*renderables) -> str:
    """Rich renderables as plain text (no colour, no terminal codes) at :data:`WIDTH` columns."""
    from rich.console import Console

    buf = io.StringIO()
    out = Console(file=buf, width=WIDTH, no_color=True, color_system=None, highlight=False, soft_wrap=False,
                  force_terminal=False, force_jupyter=False)
    for r in renderables:
        out.print(r)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()).strip("\n")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def section_status(s) -> str:
    """A section's state in words: ``"14 ok"``, ``"13 ok, 1 mismatch"``, ``"no claims"``, ``"failed to
    build"``, ``"not checked: needs torch …"`` (deciding its claims the first time)."""
    if s.error:
        return "failed to build: " + s.error.splitlines()[0]
    if s.skipped:
        return "not checked: " + s.skipped
    if not s.claims:
        return "no claims"
    from collections import Counter

    counts = Counter(c.check().status for c in s.claims)
    return ", ".join(f"{counts[k]} {k}" for k in ("ok", "mismatch", "error", "skipped") if counts[k])


def derivation_summary(d) -> list[dict]:
    """One record per section of ``d``: index, title, ledgers, ledger rows, claims, displays and status."""
    return [{"index": i, "title": s.title, "ledgers": len(s.ledgers), "rows": sum(len(L.rows) for L in s.ledgers),
             "claims": len(s.claims), "displays": len(s.displays) + len(s.figures), "status": section_status(s)}
            for i, s in enumerate(d.sections)]


def _short(title: str, limit: int = TITLE_LIMIT) -> str:
    return title if len(title) <= limit else title[:limit - 1] + "…"


def text(obj) -> str:
    """The plain-text display of a ledger, claim, section, derivation, verify report or audit report.

    Raises:
        TypeError: for any other object.
    """
    from ..audit.report import AuditReport
    from ..authoring import Derivation, Section
    from ..ledger import Ledger
    from ..verify.claims import Claim
    from ..verify.report import Report
    from .show import claims_table, ledger_display
    from .terminal import claim_cells, fragile_notes, problems, summary
    from .views import ledger_values

    if isinstance(obj, Ledger):
        num, ex = ledger_values(obj)
        return _plain(ledger_display(obj, values=num, exact=ex, width=WIDTH))
    if isinstance(obj, Claim):
        r = obj.check()
        where, what, printed, exact, val, status = (c.plain for c in claim_cells(obj, str(obj.location)))
        line = f"{status.upper()}  {obj.derivation} · {where}" + (f" · {what}" if what else "")
        detail = [f"printed {printed}" if printed else "", f"exact {exact}" if exact not in ("", "…") else "",
                  f"value {val}" if val and val != r.message else ""]
        tail = [x for x in detail if x] + ([r.message] if r.message and r.status != "ok" else [])
        return line + ("\n    " + "; ".join(tail) if tail else "")
    if isinstance(obj, Section):
        head = [f"{obj.title}  ({obj.derivation.name}): {_count(len(obj.ledgers), 'ledger')}, "
                f"{_count(len(obj.claims), 'claim')}, {_count(len(obj.displays) + len(obj.figures), 'display')}; "
                f"{section_status(obj)}"]
        head += [f"note: {n}" for n in obj.notes]
        out = "\n".join(head)
        shown = 0
        for L in obj.ledgers:  # whole ledgers while they fit in SECTION_LIMIT; the rest named
            num, ex = ledger_values(L, values=obj.values)
            part = _plain(ledger_display(L, values=num, exact=ex, width=WIDTH))
            if len(out) + len(part) > SECTION_LIMIT:
                break
            out, shown = out + "\n" + part, shown + 1
        rest = obj.ledgers[shown:]
        if rest:
            out += (f"\n… {_count(len(rest), 'more ledger')} not shown ({', '.join(_short(L.title, 40) for L in rest)}):"
                    f" display s.ledgers[{shown}] and after, or run symseq show {obj.derivation.name} "
                    f"'{_short(obj.title, 40)}'")
        if obj.claims:
            table = _plain(claims_table(f"claims of {obj.title}", obj.claims))
            out += "\n" + (table if len(out) + len(table) <= SECTION_LIMIT else
                           f"{_count(len(obj.claims), 'claim')}: {section_status(obj)} (display s.claims[i] for one)")
        return out
    if isinstance(obj, Derivation):
        rows = derivation_summary(obj)
        lines = [f"{obj.title}  ({obj.name}, {obj.source}): {_count(len(rows), 'section')}, "
                 f"{_count(sum(r['claims'] for r in rows), 'claim')}"]
        for r in rows:
            lines.append(f"  [{r['index']}] {_short(r['title'])} — {_count(r['ledgers'], 'ledger')}, "
                         f"{_count(r['claims'], 'claim')}: {r['status']}")
        lines.append("  (display d.sections[i] for a section's ledgers and claims)")
        return "\n".join(lines)
    if isinstance(obj, Report):
        return "\n".join(problems(obj) + fragile_notes(obj) + [summary(obj)])
    if isinstance(obj, AuditReport):
        from ..audit.render import summary_line

        return "\n".join([summary_line(obj)] + [f"fails: {f}" for f in obj.failures()])
    raise TypeError(f"no plain-text display for {type(obj).__name__}")


def latex(obj) -> str:
    """The LaTeX display (MathJax and pdflatex) of a ledger, claim, section or derivation.

    Ledgers, claims and sections are :func:`symseq.present.latex.repr_latex`; a derivation is a table of its
    sections with their counts and status, at most :data:`DERIVATION_LATEX_LIMIT` bytes.

    Raises:
        TypeError: for any other object.
    """
    from ..authoring import Derivation, Section
    from .latex import repr_latex
    from .tex import math_mode_chars, mathjax_text
    from .views import mathjax_label

    if isinstance(obj, Section):
        full = repr_latex(obj)
        if len(full) <= SECTION_LIMIT:
            return full
        return "$$%s$$" % mathjax_label(  # too long to read in a notebook: its counts, and where the rest is
            f"{obj.title} ({obj.derivation.name}): {_count(len(obj.ledgers), 'ledger')}, "
            f"{_count(len(obj.claims), 'claim')}; {section_status(obj)}. Display s.ledgers[i] or s.claims[i] "
            f"one at a time.", command="text")
    if not isinstance(obj, Derivation):
        return repr_latex(obj)
    head = "$$%s$$" % (mathjax_label(obj.title, command="textbf")
                       + mathjax_text(f" ({obj.name}, ", command="textbf")
                       + r"\mathtt{%s}" % math_mode_chars(obj.source) + r"\textbf{)}")
    cols = r"\text{section} & \text{ledgers} & \text{rows} & \text{claims} & \text{status} \\ \hline"
    rows, budget = [], DERIVATION_LATEX_LIMIT - len(head) - len(cols) - 200
    summary = derivation_summary(obj)
    for r in summary:
        row = " & ".join([mathjax_label(f"[{r['index']}] {_short(r['title'])}"), str(r["ledgers"]), str(r["rows"]),
                          str(r["claims"]), mathjax_text(_short(r["status"], 40))]) + r" \\"
        if len(row) > budget:
            rows.append(r"\text{… %d more sections} &&&& \\" % (len(summary) - len(rows)))
            break
        budget -= len(row) + 1
        rows.append(row)
    return head + "\n$$\\begin{array}{lrrrl}\n" + "\n".join([cols] + rows) + "\n\\end{array}$$"


def _pretty(obj, p, cycle) -> None:
    """IPython's pretty-printer hook: :func:`text`."""
    p.text(text(obj))


def register(ipython=None) -> bool:
    """Register :func:`latex` (``text/latex``) and :func:`text` (``text/plain``) with ``ipython`` (the running
    shell when None) for :data:`TYPES` and :data:`TEXT_TYPES`.

    Returns whether a shell was found. Never imports IPython when it is not
    already imported, so a plain ``import symseq`` stays light.
    """
    if ipython is None:
        if "IPython" not in sys.modules:
            return False
        ipython = sys.modules["IPython"].get_ipython()
        if ipython is None:
            return False
    formatters = ipython.display_formatter.formatters
    for module, name in TYPES:
        formatters["text/latex"].for_type_by_name(module, name, latex)
    if "text/plain" in formatters:
        for module, name in TEXT_TYPES:
            formatters["text/plain"].for_type_by_name(module, name, _pretty)
    return True


def load_ipython_extension(ipython):
    """``%load_ext symseq.present.jupyter``."""
    register(ipython)
