"""Terminal output with rich: the verify tables and the ledger of a derivation.

Math returns data; this module only renders it. Colours are dropped when
output is not a terminal or ``--no-color`` is given.
"""

from __future__ import annotations

import sympy as sp
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..numbers import decimal_text
from .console import console, report_table  # noqa: F401  (console: where the command line and the tests take it from)
from .fit import ELLIPSIS, Fit, fit_lines, shorten_number  # noqa: F401  (cells that never split a number)
from .notation import Notation

STYLE = {"ok": "green", "mismatch": "bold red", "error": "bold magenta", "skipped": "yellow"}

def short_value(values: list, shape: tuple, digits: int, integers=None) -> str:
    """Decimal values rounded to ``digits`` significant digits: one number, a row, or rows.

    ``values`` are decimal strings (a claim's values carry 40 significant digits); ``digits`` should not
    exceed what they carry.

    ``integers`` marks entries known to be exact integers (shown without a decimal point).
    """
    integers = list(integers) if integers is not None else [False] * len(values)

    def one(s, is_int):
        if s in ("inf", "-inf"):
            return "∞" if s == "inf" else "−∞"
        return decimal_text(s, digits, fixed=(-6, 12), strip_zeros=True, integer=is_int).replace("-", "−")

    vals = [one(v, i) for v, i in zip(values, integers)]
    if not shape or len(vals) == 1:
        return vals[0] if vals else ""
    if len(shape) == 2 and shape[0] > 1 and shape[1] > 1:
        rows = [vals[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
        return "[" + "; ".join(", ".join(r) for r in rows) + "]"
    return "(" + ", ".join(vals) + ")"


def exact_text(exact) -> str:
    if exact is None:
        return ""
    n = Notation("unicode")
    if isinstance(exact, sp.MatrixBase):
        if exact.rows == 1 or exact.cols == 1:
            return "(" + ", ".join(n.expr(e) for e in exact) + ")"
        return "[" + "; ".join(", ".join(n.expr(e) for e in exact.row(i)) for i in range(exact.rows)) + "]"
    return n.expr(exact)


def check_all(derivations, dps: int = 50, *, out: Console | None = None, sections=None,
              jobs: int = 1, cache=None):
    """:func:`symseq.verify.report.verify` with a progress display; returns its
    :class:`~symseq.verify.report.Report`.

    The display (the stage, the derivation being built or checked, a bar and the time taken) appears on ``out`` at
    once, when ``out`` is a terminal, and is gone when the work is done; on anything else (a pipe, a file, a test's
    capture) nothing is written. The command line passes standard error, so ``symseq verify > log`` on a
    terminal still shows it and keeps it out of the log.
    """
    from ..verify.report import verify

    with ProgressDisplay(out) as bar:
        return verify(derivations, dps, progress=bar.tick, sections=sections, jobs=jobs, cache=cache)


class ProgressDisplay:
    """A transient rich progress display that starts at once, on a terminal only (:func:`check_all`)."""

    def __init__(self, out: Console | None):
        self.enabled = out is not None and out.is_terminal and not out.is_dumb_terminal
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=out, transient=True,
                                 disable=not self.enabled)
        self.tasks: dict = {}

    def __enter__(self):
        if self.enabled:
            self.progress.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.progress.stop()
        return False

    def tick(self, stage: str, done: int, total: int, name: str) -> None:
        """The ``progress`` callback of :func:`symseq.verify.report.verify`: ``stage`` ("building" or "checking")
        of ``name``, ``done`` of ``total``."""
        text = f"{stage} {name}" if name else {"building": "built", "checking": "checked"}.get(stage, stage)
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(text, total=total)
        self.progress.update(self.tasks[stage], completed=done, description=text)
        if stage == "building" and self.enabled:  # a derivation takes seconds to build: name it now
            self.progress.refresh()


def _value_text(c, r, digits) -> str:
    if c.kind == "value":
        ints = None
        if r.exact is not None:
            ints = [bool(getattr(e, "is_Integer", False))
                    for e in (list(r.exact) if isinstance(r.exact, sp.MatrixBase) else [r.exact])]
        return short_value(r.values, r.shape, digits, integers=ints)
    if c.kind == "shape":
        return r.values[0] if r.values else ""
    return r.message


CLAIM_COLUMNS = ("where", "claim", "printed", "exact", "value", "status")


def claims_columns(t: Table) -> Table:
    """Add the six columns of a claims table: where, claim, printed, exact closed form, value, status (each as
    wide as its cells need; the cells wrap between words when the terminal is narrower)."""
    for name in CLAIM_COLUMNS[:-1]:
        t.add_column(name, overflow="fold")
    t.add_column("status", no_wrap=True)
    return t


def claim_cells(c, where: str, digits: int = 12, exact_width: int = 40) -> list:
    """The cells of one claim's row; plain text (:class:`Fit`), so "[t]" in a statement is not read as markup and
    no number is split across lines."""
    r = c.check()
    exact = exact_text(r.exact) if c.kind == "value" else ""
    if len(exact) > exact_width:
        exact = "…"
    claim = c.printed if c.kind == "property" else c.what
    printed = "" if c.kind == "property" else c.printed
    cells = (where, claim, printed, exact, _value_text(c, r, digits))
    return [Fit(x) for x in cells] + [Text(r.status, style=STYLE[r.status])]


NARROW = 110
"""Below this many columns a claims table has four columns (claim, printed, value, status): the place and the
claim share one cell and the exact closed form is left out (``--json`` has it), so that the claim's words are not
stacked one per line."""


def verify_table(d, digits: int = 12, exact_width: int = 40, width: int | None = None) -> Table:
    """One rich table for a derivation (the report style of :func:`~symseq.present.console.report_table`, as
    wide as its content): where, claim, printed, exact closed form, value, status; on a console
    narrower than :data:`NARROW` columns (``width``), claim (its place and what it says), printed, value, status.

    Sections are table sections; mismatches and errors are detailed by :func:`problems`. No cell splits a number
    or a word across lines (:class:`Fit`).
    """
    narrow = width is not None and width < NARROW
    title = Text.assemble(d.title, "  ", (f"({d.name}, {d.source})", "dim"))  # plain text: no markup is read
    t = report_table(title, [])
    if narrow:
        for name in ("claim", "printed", "value"):
            t.add_column(name, overflow="fold")
        t.add_column("status", no_wrap=True)
    else:
        claims_columns(t)
    blank = [""] * (len(t.columns) - 1)
    for s in d.sections:
        t.add_row(Fit(s.title, style="bold"), *blank)
        if s.error or s.skipped:
            first = s.error.splitlines()[0] if s.error else s.skipped
            kind = "error" if s.error else "skipped"
            cells = [Fit(first)] if narrow else ["", Fit(first)]  # in the claim column, the status in its own
            t.add_row(*cells, *[""] * (len(t.columns) - len(cells) - 1), Text(kind, style=STYLE[kind]))
        for c, where in zip(s.claims, where_column(s.claims)):
            cells = claim_cells(c, where, digits, exact_width)
            if narrow:  # where · claim, printed, value, status
                at, what = cells[0].plain, cells[1].plain
                cells = [Fit(f"{at} · {what}" if at and what else at or what), cells[2], cells[4], cells[5]]
            t.add_row(*cells)
    return t


def where_column(claims) -> list[str]:
    """The "where" cell of each claim in a table: its place in the section, left blank when it repeats the row
    above (a column of "table of objects" eleven times says nothing the first does not)."""
    out, last = [], None
    for c in claims:
        at = c.location.at
        out.append("" if at == last else at)
        last = at
    return out


def problems(report) -> list[str]:
    """One line per section of ``report`` that failed to build, then per claim that does not hold (location,
    printed, correct rounding, error in units of the last digit)."""
    out = [f"ERROR {d.source} · {s.title}: the section did not build: {s.error.splitlines()[0]}"
           for d, s in report.broken]
    out += [f"EMPTY {d.name}: it states no claim, so nothing of {d.source} was checked; claim each number the "
            f"page prints (s.claim, s.given, s.step)" for d in report.unclaimed]
    for c in report.failures:
        r = c.result
        head = _where(c)
        printed = f"printed {c.printed!r}: " if (r.status == "error" or c.kind == "shape") \
            and c.printed not in r.message else ""
        out.append(f"{r.status.upper()} {head}: {printed}{_entries_text(r)}")
    return out


SHOWN_ENTRIES = 8
"""How many wrong entries of one matrix or vector a terminal line lists before "and N more" (JSON has all)."""


def _entries_text(r) -> str:
    """A claim's message, with at most :data:`SHOWN_ENTRIES` of its wrong entries (then how many more, and where
    to read them all)."""
    if len(r.wrong) <= SHOWN_ENTRIES:
        return r.message
    n = len(r.wrong)
    head = r.message[:r.message.index(r.wrong[0])] if r.wrong[0] in r.message else ""
    return (head + "; ".join(r.wrong[:SHOWN_ENTRIES])
            + f"; and {n - SHOWN_ENTRIES} more (symseq verify --json FILE lists every one)")


def fragile_notes(report) -> list[str]:
    """One line per printed decimal that holds but sits within 1% of a unit of its last digit from a rounding
    boundary, with the digits float32 and float64 computations print: a note for the author, not a failure."""
    return [f"NOTE {_where(c)}: {note}" for c, note in report.fragile]


def _where(c) -> str:
    """A claim's place in a problem or note line: the handout's file, the location, and what it is."""
    return f"{c.source} · {c.location}" + (f" · {c.what}" if c.what else "")


def summary(report, *, notes_listed: bool = True) -> str:
    """The last line of ``symseq verify``: counts per status, broken and skipped sections (the verdict is
    ``report.ok``); ``notes_listed`` says whether the notes on fragile decimals were printed above it."""
    counts = report.counts
    parts = [f"{len(report.claims)} claims in {len(report.derivations)} derivation(s): {counts['ok']} ok"]
    for k in ("mismatch", "error", "skipped"):
        if counts[k]:
            parts.append(f"{counts[k]} {k}")
    if report.broken:
        parts.append(f"{len(report.broken)} section(s) failed to build")
    if report.unclaimed:
        parts.append(f"{len(report.unclaimed)} derivation(s) state no claim")
    if report.fragile:
        parts.append(f"{len(report.fragile)} printed decimal(s) within 1% of a rounding boundary "
                     + ("(noted above)" if notes_listed else "(--all lists them)"))
    if report.skipped:  # not checked, so not counted among the claims: say so
        parts.append(f"{len(report.skipped)} section(s) not checked ("
                     + "; ".join(f"{d.name} · {s.title}: {s.skipped}" for d, s in report.skipped) + ")")
    return ", ".join(parts)


def print_line(out: Console, text: str, style: str = "") -> None:
    """One line of a report (a problem, a note, the summary) as plain text: on a terminal wrapped between words
    (:class:`Fit`), elsewhere on one line however long, so that a log keeps one line per finding for grep."""
    if out.is_terminal:
        out.print(Fit(text, style=style))
    else:
        out.print(Text(text, style=style), soft_wrap=True)


def cause_lines(causes) -> list[str]:
    """One line per failing claim classified by :func:`symseq.verify.causes.classify_claims`: each root (or
    rounding drift) first, then the claims of its chain, indented."""
    out = []
    listed = set()
    for c in causes:
        if c.source is not None:
            continue
        out.append(f"{c.kind.upper()} {_where(c.claim)}: {c.reason}")
        for d in c.chain:
            cause = next((x for x in causes if x.claim is d), None)
            if cause is not None:
                out.append(f"  ↳ {cause.kind} {_where(d)}: {cause.reason}")
                listed.add(id(d))
    out += [f"{c.kind.upper()} {_where(c.claim)}: {c.reason}" for c in causes
            if c.source is not None and id(c.claim) not in listed]
    return out
