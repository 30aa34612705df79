"""Terminal output with rich: the verify tables and the ledger of a derivation.

Math returns data; this module only renders it. Colours are dropped when
output is not a terminal or ``--no-color`` is given.
"""

from __future__ import annotations


import sympy as sp
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..numbers import decimal_text
from .notation import Notation

STYLE = {"ok": "green", "mismatch": "bold red", "error": "bold magenta", "skipped": "yellow"}


def console(no_color: bool = False, file=None) -> Console:
    """A rich console; when output is not a terminal the width is $COLUMNS or 140 (tables stay readable in logs)."""
    import os

    c = Console(no_color=no_color, file=file, highlight=False, soft_wrap=False)
    if not c.is_terminal:
        try:
            width = int(os.environ.get("COLUMNS", "140"))
        except ValueError:
            width = 140
        c = Console(no_color=no_color, file=file, highlight=False, soft_wrap=False, width=width)
    return c


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


def check_all(derivations, dps: int = 50, *, out: Console | None = None, delay: float = 0.5, sections=None,
              jobs: int = 1):
    """:func:`symseq.verify.report.verify` with a progress bar; returns its :class:`~symseq.verify.report.Report`.

    A transient progress bar appears on ``out`` only when it is a terminal and
    the work has taken more than ``delay`` seconds; piped output never sees it.
    """
    from ..verify.report import verify

    with DelayedProgress(out, delay) as bar:
        tasks: dict = {}

        def progress(stage, done, total, name):
            if stage not in tasks:
                tasks[stage] = bar.add_task(f"{stage} {name}".strip(), total=total)
            bar.update(tasks[stage], completed=done, description=f"{stage} {name}".strip())

        return verify(derivations, dps, progress=progress, sections=sections, jobs=jobs)


class DelayedProgress:
    """A rich progress bar that starts only after ``delay`` seconds, and only on a terminal."""

    def __init__(self, out: Console | None, delay: float):
        import time

        self._clock = time.monotonic
        self.enabled = out is not None and out.is_terminal and not out.is_dumb_terminal
        self.delay = delay
        self.started = False
        self.t0 = self._clock()
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=out, transient=True, disable=not self.enabled)

    def __enter__(self):
        self._maybe_start()
        return self

    def __exit__(self, *exc):
        if self.started:
            self.progress.stop()
        return False

    def _maybe_start(self):
        if self.enabled and not self.started and self._clock() - self.t0 >= self.delay:
            self.progress.start()
            self.started = True

    def add_task(self, description, total):
        self._maybe_start()
        return self.progress.add_task(description, total=total)

    def update(self, task, **kw):
        self._maybe_start()
        self.progress.update(task, **kw)


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
    """Add the six columns of a claims table: where, claim, printed, exact closed form, value, status."""
    for name, ratio in zip(CLAIM_COLUMNS[:-1], (2, 3, 2, 2, 2)):
        t.add_column(name, overflow="fold", ratio=ratio)
    t.add_column("status", no_wrap=True)
    return t


def claim_cells(c, where: str, digits: int = 12, exact_width: int = 40) -> list:
    """The cells of one claim's row; plain text, so "[t]" in a statement is not read as markup."""
    r = c.check()
    exact = exact_text(r.exact) if c.kind == "value" else ""
    if len(exact) > exact_width:
        exact = "…"
    claim = c.printed if c.kind == "property" else c.what
    printed = "" if c.kind == "property" else c.printed
    cells = (where, claim, printed, exact, _value_text(c, r, digits))
    return [Text(x) for x in cells] + [Text(r.status, style=STYLE[r.status])]


def verify_table(d, digits: int = 12, exact_width: int = 40) -> Table:
    """One rich table for a derivation: where, claim, printed, exact closed form, value, status.

    Sections are table sections; mismatches and errors are detailed by :func:`problems`.
    """
    title = Text.assemble(d.title, "  ", (f"({d.name}, {d.source})", "dim"))  # plain text: no markup is read
    t = claims_columns(Table(title=title, box=box.SIMPLE_HEAVY, title_justify="left", expand=False,
                             pad_edge=False))
    for s in d.sections:
        t.add_row(Text(s.title, style="bold"), "", "", "", "", "")
        if s.error or s.skipped:
            first = s.error.splitlines()[0] if s.error else s.skipped
            kind = "error" if s.error else "skipped"
            t.add_row("", Text(first), "", "", "", Text(kind, style=STYLE[kind]))
        for c in s.claims:
            where = c.location.at
            t.add_row(*claim_cells(c, where, digits, exact_width))
    return t


def problems(report) -> list[str]:
    """One line per section of ``report`` that failed to build, then per claim that does not hold (location,
    printed, correct rounding, error in units of the last digit)."""
    out = [f"ERROR {d.source} · {s.title}: the section did not build: {s.error.splitlines()[0]}"
           for d, s in report.broken]
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


def summary(report) -> str:
    """The last line of ``symseq verify``: counts per status, broken and skipped sections (the verdict is
    ``report.ok``)."""
    counts = report.counts
    parts = [f"{len(report.claims)} claims in {len(report.derivations)} derivation(s): {counts['ok']} ok"]
    for k in ("mismatch", "error", "skipped"):
        if counts[k]:
            parts.append(f"{counts[k]} {k}")
    if report.broken:
        parts.append(f"{len(report.broken)} section(s) failed to build")
    if report.fragile:
        parts.append(f"{len(report.fragile)} printed decimal(s) within 1% of a rounding boundary (noted above)")
    if report.skipped:  # not checked, so not counted among the claims: say so
        parts.append(f"{len(report.skipped)} section(s) not checked ("
                     + "; ".join(f"{d.name} · {s.title}: {s.skipped}" for d, s in report.skipped) + ")")
    return ", ".join(parts)




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
