"""Terminal output with rich: the verify tables and the ledger of a derivation.

Math returns data; this module only renders it. Colours are dropped when
output is not a terminal or ``--no-color`` is given.
"""

from __future__ import annotations

import re

import sympy as sp
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..numbers import decimal_text
from .console import console  # noqa: F401  (where the command line and the tests take it from)
from .notation import Notation

STYLE = {"ok": "green", "mismatch": "bold red", "error": "bold magenta", "skipped": "yellow"}

ELLIPSIS = "…"
_NUMBER = re.compile(r"([−-]?\d+)(?:\.(\d+))?((?:e[−+-]?\d+)?)")
_CLOSING = set(",;:.)]}…'′ᵀ_^")  # never the first character of a continued line
_OPERATORS = set("+=<>≈&,;")  # a line may end after one of these


def _atom(ch: str) -> bool:
    """A character that belongs to a number, a word or a command name: no line may end between two of them."""
    return ch.isalnum() or ch in "_^"


def _break_ok(s: str, i: int) -> bool:
    """Whether a line may end between ``s[i-1]`` and ``s[i]`` inside one word: after an operator, a separator, an
    opening brace or a closing bracket (or between two calls of a chain), after LaTeX's ``\\\\`` row end, before a LaTeX command, or
    after a hyphen between letters;
    never inside a number, a word or a command name, and never before closing punctuation."""
    a, b = s[i - 1], s[i]
    if a == ")" and b == "." and s[i + 1:i + 2].isalpha():  # a chain of calls: x.view(…).transpose(…)
        return True
    if b in _CLOSING or (_atom(a) and _atom(b)) or b.isspace():
        return False
    if a == "\\":  # the end of "\\\\" (a LaTeX row), not the start of a command
        return i >= 2 and s[i - 2] == "\\" and (i < 3 or s[i - 3] != "\\") and b != "\\"
    if b == "\\":  # before a command, not before a row end
        return s[i + 1:i + 2].isalpha()
    if a in _OPERATORS or a in ")]}" or (a == "{" and b != "}"):  # \begin{ then array}: the name stays whole
        return True
    return a in "-−" and i >= 2 and s[i - 2].isalpha() and b.isalpha()


def shorten_number(text: str, width: int) -> str | None:
    """A decimal ``text`` (``0.792411504249``, ``−1.5e−7``) in at most ``width`` characters: its leading digits then
    an ellipsis (``0.79241150…``), or without the ellipsis when only zeros are dropped; ``None`` when not even its
    integer part and one decimal fit (the caller shows ``…`` alone).

    The digits kept are the leading digits of ``text`` as it was rounded (:mod:`symseq.numbers`); cutting a correctly
    rounded decimal after a nonzero digit it drops leaves digits that are also the true leading digits, so the
    ellipsis never hides a carry."""
    m = _NUMBER.fullmatch(text)
    if not m:
        return None
    head, frac, exp = m.group(1), m.group(2) or "", m.group(3)
    if len(text) <= width:
        return text
    for k in range(len(frac) - 1, 0, -1):
        cut = frac[k:]
        t = f"{head}.{frac[:k]}{exp}" if set(cut) == {"0"} else f"{head}.{frac[:k]}{ELLIPSIS}{exp}"
        if len(t) <= width:
            return t
    return head + exp if frac and set(frac) == {"0"} and len(head + exp) <= width else None


def _shorten(piece: str, width: int) -> str:
    """One unbreakable piece longer than ``width``: a number in it cut to its leading digits (with the brackets and
    punctuation around it kept when they fit), any other text cut with an ellipsis."""
    m = re.fullmatch(r"([^\w.−-]*)(.+?)([^\w.]*)", piece)
    if m and _NUMBER.fullmatch(m.group(2)):
        pre, num, post = m.groups()
        for p, q in ((pre, post), (pre, ""), ("", "")):
            short = shorten_number(num, width - len(p) - len(q))
            if short is not None:
                return p + short + q
        return ELLIPSIS
    return piece[:max(width - 1, 0)] + ELLIPSIS


def fit_lines(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words or at the safe points of
    :func:`_break_ok`; a piece that cannot fit is shortened (:func:`_shorten`), never split. Lines of ``text`` stay
    lines."""
    return ["".join(p if isinstance(p, str) else p[2] if len(p) == 3 else text[p[0]:p[1]] for p in line)
            for line in _fit(text, width)]


def _fit(text: str, width: int) -> list[list]:
    """The lines of :func:`fit_lines`, each a list of parts: ``(start, end)`` of ``text`` or a shortened piece
    ``(start, end, replacement)`` (so that a styled text keeps its styles). The spaces between words on one line,
    and before the first word of a line of ``text``, are kept as written."""
    width = max(width, 1)
    out: list[list] = []
    offset = 0
    for hard in text.split("\n"):
        line: list = []
        used, gap_from = 0, offset  # the spaces before the next word start at gap_from
        for m in re.finditer(r"\S+", hard):
            a, b = offset + m.start(), offset + m.end()
            gap = a - gap_from
            n = b - a
            if used + gap + n <= width:
                line += [(gap_from, b)] if gap else [(a, b)]
                used += gap + n
                gap_from = b
                continue
            if used:
                out.append(line)
                line, used = [], 0
            gap_from = b
            for pa, pb in _piece_spans(text, a, b):
                n = pb - pa
                if used + n <= width:
                    line.append((pa, pb))
                    used += n
                    continue
                if used:
                    out.append(line)
                if n <= width:
                    line, used = [(pa, pb)], n
                else:
                    short = _shorten(text[pa:pb], width)
                    line, used = [(pa, pb, short)], len(short)
        out.append(line)
        offset += len(hard) + 1
    return out


def _piece_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The word ``text[a:b]`` cut at the points where a line may end inside it (:func:`_break_ok`)."""
    word = text[a:b]
    cuts = [0] + [i for i in range(1, len(word)) if _break_ok(word, i)] + [len(word)]
    return [(a + x, a + y) for x, y in zip(cuts, cuts[1:])]


class Fit:
    """Text for the terminal that wraps to whatever width it is given without ever splitting a number, a word or a
    LaTeX command across lines: a piece too long for the width is shortened (``0.79241150…``, the full value being
    in ``symseq verify --json``). The one place terminal output decides where a line ends inside a cell.

    Args:
        text: a string, read as plain text (never as markup), or a :class:`rich.text.Text` whose styles are kept;
            its line breaks are kept.
        style: a rich style for the whole text.
        justify: "left" (default), "right" or "center", within the width given.
    """

    def __init__(self, text, style: str = "", justify: str | None = None):
        self.rich = text if isinstance(text, Text) else Text(str(text))
        self.text, self.style, self.justify = self.rich.plain, style, justify

    def __str__(self) -> str:
        return self.text

    @property
    def plain(self) -> str:
        """The whole text, as :attr:`rich.text.Text.plain` gives it."""
        return self.text

    def __rich_measure__(self, console, options) -> Measurement:
        pieces = [b - a for m in re.finditer(r"\S+", self.text) for a, b in _piece_spans(self.text, *m.span())]
        widest = max((len(x) for x in self.text.split("\n")), default=0)
        return Measurement(min(max(pieces, default=0), widest), widest).with_maximum(options.max_width)

    def __rich_console__(self, console, options):
        if options.max_width < 1:
            return
        lines = []
        for parts in _fit(self.text, options.max_width):
            line = Text()
            for p in parts:
                if isinstance(p, str):
                    line.append(p)
                elif len(p) == 2:
                    line.append_text(self.rich[p[0]:p[1]])
                else:
                    piece = self.rich[p[0]:p[1]]
                    piece.plain = p[2]  # spans past its new end are dropped
                    line.append_text(piece)
            lines.append(line)
        text = Text("\n", style=self.style, no_wrap=True, overflow="crop",
                    justify=self.justify or options.justify).join(lines)
        yield text


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
    """Add the six columns of a claims table: where, claim, printed, exact closed form, value, status."""
    for name, ratio in zip(CLAIM_COLUMNS[:-1], (2, 3, 2, 2, 2)):
        t.add_column(name, overflow="fold", ratio=ratio)
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
    """One rich table for a derivation: where, claim, printed, exact closed form, value, status; on a console
    narrower than :data:`NARROW` columns (``width``), claim (its place and what it says), printed, value, status.

    Sections are table sections; mismatches and errors are detailed by :func:`problems`. No cell splits a number
    or a word across lines (:class:`Fit`).
    """
    narrow = width is not None and width < NARROW
    title = Text.assemble(d.title, "  ", (f"({d.name}, {d.source})", "dim"))  # plain text: no markup is read
    t = Table(title=title, box=box.SIMPLE_HEAVY, title_justify="left", expand=False, pad_edge=False)
    if narrow:
        for name, ratio in (("claim", 5), ("printed", 2), ("value", 2)):
            t.add_column(name, overflow="fold", ratio=ratio)
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
