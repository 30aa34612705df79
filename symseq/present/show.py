"""symseq show: a derivation in the terminal, as the handout lays it out.

Each section prints its notes, then the displays it records in their order
(forward rows beside backward rows; tables with row and column labels rounded
as the handout rounds them; heatmaps with masked entries marked ×), then its
ledgers (``name = formula`` in handout notation, values with short exact
closed forms, matrices as aligned grids), then its claims with their status.
Every string reaches rich as plain text, so formulas such as ``Z[t, c_t]`` are
never read as markup; colours disappear when output is not a terminal.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..errors import SymseqError
from .notation import Notation
from .terminal import STYLE, Fit, check_all, claim_cells, claims_columns, where_column


def _plain(*cells):
    """Cells as plain text: a formula such as Z[t, c_t] or w_x^[t] must not be read as rich markup, and no number,
    word or LaTeX command is split across lines (:class:`~symseq.present.terminal.Fit`)."""
    return [Fit(c) if isinstance(c, str) else c for c in cells]


def _num(d) -> str:
    """A rounded number for the terminal (handout tables keep the handout's ASCII minus)."""
    if d.special:
        return {"inf": "∞", "-inf": "−∞", "nan": "undefined"}[d.special]
    return d.text


def _uni_minus(text: str) -> str:
    return text.replace("-", "−")


GRID_MAX = 12  # rows and columns of a matrix shown in the terminal; larger ones show their leading block


def _value_grid(values, exact, shape, digits: int, *, row_labels=None, col_labels=None) -> Table:
    """An aligned grid of a matrix: column indices on top, row indices on the left, exact forms where short.

    A matrix larger than :data:`GRID_MAX` in either direction shows its leading
    block and says how much is left out.
    """
    from ..numbers import handout_decimal
    from .views import short_exact

    full = shape
    m, n = min(shape[0], GRID_MAX), min(shape[1], GRID_MAX)
    g = Table(box=box.SIMPLE, show_header=True, header_style="dim", pad_edge=False, show_edge=False,
              padding=(0, 1, 0, 1))
    g.add_column("", style="dim", justify="right", no_wrap=True)
    for j in range(n):
        g.add_column(Text(str(col_labels[j]) if col_labels else str(j)), justify="right", no_wrap=True)
    if (m, n) != tuple(full):
        g.caption = f"first {m} of {full[0]} rows, {n} of {full[1]} columns"
    short = None
    if exact is not None:
        short = [[short_exact(exact[i][j], 10) for j in range(n)] for i in range(m)]
        if any(v is None for r in short for v in r):
            short = None
    for i in range(m):
        cells = []
        for j in range(n):
            e = exact[i][j] if exact is not None else None
            dec = _uni_minus(_num(handout_decimal(e if isinstance(e, sp.Rational) else values[i][j], digits)))
            if short is not None:
                ex = short[i][j]
                e = exact[i][j]
                cells.append(ex if (getattr(e, "is_Integer", False) or e in (sp.oo, -sp.oo)) else f"{ex} ≈ {dec}")
            else:
                cells.append(dec)
        g.add_row(*_plain(str(row_labels[i]) if row_labels else str(i), *cells))
    return g


def _grid_width(shape, digits: int) -> int:
    return 4 + min(shape[1], GRID_MAX) * (digits + 5)


def _scalar_text(v, e, digits: int) -> str:
    from ..numbers import handout_decimal
    from .views import short_exact

    dec = _uni_minus(_num(handout_decimal(e if isinstance(e, sp.Rational) else v, digits)))
    ex = short_exact(e, 24) if e is not None else None
    if ex is None:
        return dec
    if getattr(e, "is_Integer", False) or e in (sp.oo, -sp.oo):
        return ex
    return f"{ex} ≈ {dec}"


def _rows_of(v, shape):
    if shape == ():
        return None
    m, n = shape
    flat = list(v.flat) if isinstance(v, np.ndarray) else list(v)
    return [flat[i * n:(i + 1) * n] for i in range(m)]


def _value_renderable(it, num, ex, digits):
    if it.name not in num:
        return ""
    v = num[it.name]
    e = ex.get(it.name)
    if it.shape == ():
        return _scalar_text(v, e, digits)
    rows = _rows_of(v, it.shape)
    erows = _rows_of(e, it.shape) if isinstance(e, sp.MatrixBase) else None
    if it.shape == (1, 1):
        return _scalar_text(rows[0][0], erows[0][0] if erows else None, digits)
    return _value_grid(rows, erows, it.shape, digits)


def _definition(it, n: Notation) -> str:
    from .views import step

    if it.is_leaf:
        return it.kind + (f" ({it.note})" if it.note else "")
    st = step(n.ledger, it.name, n)
    return st.formula + (f" = {st.simplified}" if st.simplified else "")


def ledger_display(ledger, *, values: dict | None = None, exact: dict | None = None, digits: int = 6,
                 width: int | None = None):
    """A ledger as the handouts write it: each row ``name = formula`` beside its value.

    Scalars show their exact closed form beside the decimal where it is short
    (``1/(1 + e^{1/√2}) ≈ 0.330238``); matrices show as aligned grids with row
    (position) and column (feature) indices. When a grid would not fit
    ``width``, each row is printed on its own with its grid below it.
    """
    n = Notation("unicode", ledger)
    num, ex = values or {}, exact or {}
    items = ledger.leaves + ledger.rows
    widest = max((_grid_width(it.shape, digits) for it in items if it.shape not in ((), (1, 1)) and it.name in num),
                 default=0)
    if width is not None and widest + 40 > width:
        return _ledger_stacked(ledger, n, items, num, ex, digits)
    t = Table(box=box.SIMPLE, pad_edge=False)
    t.add_column("name", no_wrap=True)
    t.add_column("definition", overflow="fold", ratio=3)
    t.add_column("shape", no_wrap=True)
    if num:
        t.add_column("value", overflow="fold", ratio=2)
    for it in items:
        cells = [n.name(it.name), _definition(it, n), _shape_text(it.shape)]
        t.add_row(*_plain(*cells, *([_value_renderable(it, num, ex, digits)] if num else [])))
    return _captioned(ledger.title, "", t) if ledger.title else t


def _shape_text(shape) -> str:
    return "scalar" if shape == () else f"{shape[0]}×{shape[1]}"


def _ledger_stacked(ledger, n, items, num, ex, digits):
    from rich.console import Group
    from rich.padding import Padding

    parts = [Fit(ledger.title, style="italic")]
    for it in items:
        head = Text.assemble((n.name(it.name), "bold"), " = ", _definition(it, n), (f"   ({_shape_text(it.shape)})", "dim"))
        parts.append(Fit(head))
        val = _value_renderable(it, num, ex, digits)
        if val != "":
            parts.append(Padding(val if not isinstance(val, str) else Fit(val), (0, 0, 0, 4)))
    return Group(*parts)


def paired_table(view, values: dict | None = None, exact: dict | None = None, digits: int = 6):
    """Forward steps beside backward steps, row for row in the handout's order (Week 06, Table 3)."""
    num, ex = values or {}, exact or {}
    with_values = bool(num)
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("forward pass", overflow="fold", ratio=3)
    if with_values:
        t.add_column("value", overflow="fold", ratio=1)
    t.add_column("backward pass", overflow="fold", ratio=3)
    if with_values:
        t.add_column("value", overflow="fold", ratio=1)

    def eq(st):
        if st is None:
            return ""
        rhs = st.formula or "given"
        return f"{st.name} = {rhs}" + (f" = {st.simplified}" if st.simplified else "")

    def val(st):
        if st is None or st.item is None:
            return ""
        v = _value_renderable(st.item, num, ex, digits)
        return v

    for f, b in view.pairs:
        cells = [eq(f)] + ([val(f)] if with_values else []) + [eq(b)] + ([val(b)] if with_values else [])
        t.add_row(*_plain(*cells))
    return _captioned(view.label, "", t)


def table_display(view):
    """A handout table: row labels (positions and tokens), column labels (features), cells rounded as the spec says.

    An entry whose printed string differs from the correct rounding is shown in
    red with the printed string beside it.
    """
    from .views import unicode_label

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("", no_wrap=True)
    for c in view.cols:
        t.add_column(Text(unicode_label(c)), justify="right", overflow="fold")
    for label, row in zip(view.rows, view.cells):
        cells = []
        for c in row:
            if c.expr is not None:
                cells.append(Notation("unicode").expr(c.expr))
            elif c.differs:
                cells.append(Fit(f"{_num(c.text)} (printed {c.printed})", style="bold red"))
            else:
                cells.append(_num(c.text))
        t.add_row(*_plain(unicode_label(label), *cells))
    formulas = all(c.expr is not None for row in view.cells for c in row)
    return _captioned(unicode_label(view.label), "" if formulas else view.rounding, t)


def _captioned(caption: str, detail: str, table: Table):
    """A caption on its own line above a table (a table title would wrap at the table's width)."""
    from rich.console import Group

    head = Text(caption, style="bold")  # Text: never read as markup
    if detail:
        head.append(f"  ({detail})", style="dim")
    return Group(Fit(head), table)


def _shade(t: float) -> str:
    lo, hi = (247, 251, 255), (8, 48, 107)
    r, g, b = (round(a + (b_ - a) * t) for a, b_ in zip(lo, hi))
    fg = "white" if t > 0.55 else "black"
    return f"{fg} on rgb({r},{g},{b})"


def heatmap_display(view):
    """A heatmap as a table: shaded cells (on a colour terminal) with their values; masked entries show ×."""
    import numpy as np

    from .views import heatmap_caption, unicode_label

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("", no_wrap=True)
    for c in view.cols:
        t.add_column(Text(unicode_label(c)), justify="right", no_wrap=True)
    finite = view.values[~view.masked & np.isfinite(view.values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    span = hi - lo if hi > lo else 1.0
    for i, (label, row) in enumerate(zip(view.rows, view.cells)):
        cells = []
        for j, c in enumerate(row):
            if c.masked:
                cells.append(Text("×", style="dim"))
            else:
                cells.append(Fit(_num(c.text), style=_shade((float(view.values[i, j]) - lo) / span)))
        t.add_row(*_plain(unicode_label(label), *cells))
    caption, notes = heatmap_caption(view)
    return _captioned(unicode_label(caption), notes, t)


def claims_table(title: str, claims, digits: int = 12, exact_width: int = 40):
    """The claims of one section with their status (the columns of :func:`verify_table`)."""
    t = claims_columns(Table(box=box.SIMPLE_HEAD, pad_edge=False))
    for c, where in zip(claims, where_column(claims)):
        t.add_row(*claim_cells(c, where, digits, exact_width))
    return _captioned(title, "", t)


def show(d, sections, out: Console, *, digits: int = 6, dps: int = 50, progress: Console | None = None):
    """Print a derivation's sections: notes, displays in recorded order, ledgers, and claims with their status.

    ``progress``, a console (the command line's standard error), shows the building and checking as it goes when
    it is a terminal (:func:`~symseq.present.terminal.check_all`).

    Raises:
        ClaimError: after printing everything else, when a display cannot be rendered (naming each one)."""
    from .views import heatmap_view, ledger_values, paired_view, table_view
    from ..authoring import HeatmapSpec, PairedRowsSpec, TableSpec

    from .latex import display_failure, raise_failures

    failures: list = []
    check_all([d], dps, out=progress, sections=sections)  # the report decides each claim; below it is rendered
    out.print(Text.assemble((d.title, "bold"), f"  ({d.name}, {d.source})"))
    for s in sections:
        out.rule(Text(s.title, style="bold"))
        if s.error:
            out.print(Fit("section failed to build: " + s.error.splitlines()[0], style=STYLE["error"]))
        if s.skipped:
            out.print(Fit("skipped: " + s.skipped, style=STYLE["skipped"]))
        for note in s.notes:
            out.print(Fit(Text.assemble(("note: ", "italic"), note)))
        for spec in s.displays:
            try:
                if isinstance(spec, PairedRowsSpec):
                    num, ex = ledger_values(spec.ledger, values=spec.values)
                    out.print(paired_table(paired_view(spec, lambda L: Notation("unicode", L)), num, ex, digits))
                elif isinstance(spec, TableSpec):
                    out.print(table_display(table_view(spec)))
                elif isinstance(spec, HeatmapSpec):
                    out.print(heatmap_display(heatmap_view(spec)))
            except SymseqError as exc:  # the rest is shown, then the command fails naming the display
                out.print(Fit(f"{spec.label}: cannot be shown: {exc}", style=STYLE["error"]))
                failures.append(display_failure(s, spec, exc))
        for L in s.ledgers:
            num, ex = ledger_values(L, values=s.values)
            out.print(ledger_display(L, values=num, exact=ex, digits=digits, width=out.width))
        if s.claims:
            out.print(claims_table(f"claims of {s.title}", s.claims))
    raise_failures(failures)
