"""Relations between a page's printed tables, found and checked with no derivation.

A worked example that runs a computation stage by stage prints one table per stage: the residual sum, its
LayerNorm, the MLP branch, the block output (Week 06, Tables 23–31). Its prose names the stages ("encoder stage
residual1", "mlp-normalized") but not the arithmetic between them, so no statement of the page says
``Table 30 = Table 27 + Table 29``. The arithmetic is still there to check by hand, and a reader checks it the way
this module does: by trying the few operations a stage can be and keeping the one that fits every row.

Relations tried, each between printed rows or columns of the same shape (``T`` a table, ``i`` a row):

* **sum of rows**: ``T_c[i] = T_a[i] + T_b[i]`` for two other tables of the same shape, or, in one table whose
  rows are stages, ``row k = row i + row j`` (Week 06, Table 23, "First sum U");
* **LayerNorm of rows**: ``T_b[i] = (T_a[i] − μ) / √(σ² + ε)`` with μ, σ² the mean and population variance of the
  row (ε = 0 or 10⁻⁵, the PyTorch default), across tables or between rows of one table;
* **row statistics**: a table whose header names a *mean* and a *variance* column gives, per row, the mean and
  population variance of the rows of another table (Week 06, Table 24);
* **weighted rows**: ``T_c[i] = s_i · T_a[i]`` with ``s`` a printed column of a third table (Week 06, Table 14:
  each value row times its attention weight);
* **scaled column**: ``column b = column a / √d`` for a ``√d`` the page prints (Week 06, Table 13: ``S = q·k/√3``);
* **softmax of a column**: ``column b = softmax(column a)`` entry by entry (Week 06, Table 13, ``A_6j``);
* **column sums**: the sums of a table's columns are a row printed elsewhere (Week 06: ``o_6`` from Table 14).

Soundness. Each candidate is first screened in floating point (with a tolerance estimated from the printed
digits), then decided exactly from the printed operands by :func:`symseq.verify.steps.decide`, every table entry
read as a rounded result (a printed table of computed values is rounded: ``2`` in a column printed to three
significant digits is read as ``2.00``). A relation found over several rows is kept only when it holds (exactly or
within the rounding of its operands) on every row, or, with at least five rows, on all rows but one: the chance
that an unrelated table fits four or more rows of printed digits is negligible, so the one row that does not fit is
a wrong number. A relation found for a single row (within one table, or a column sum) is kept only when it holds
and never reports a wrong number. Each printed row is explained by the first relation found for it, and only its
own numbers are marked checked (the operands are checked by their own relations).

Source: issue 13, build item 2 (no code for the easy part); Week 06 (``004_daeab95066cb0286.txt``), Tables 13–31.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import SymseqError
from ..read import Bin, Call, Neg, Num, Pow, Statement, Vec, integer
from ..read import PrintedNumber, magnitude, read_number
from ..verify.steps import decide
from ..read.document import Document, _separators

MIN_ROWS = 3  # a relation over tables needs at least this many rows
ONE_WRONG = 5  # with at least this many rows, one row may fail (a wrong number) and the relation still stands
MIN_WIDTH = 3  # a single-row relation needs rows of at least this many entries
BUDGET = 50_000  # candidate relations screened per page at most (Week 06, 35 tables: about 14,500, 2 s)
EPSILONS = (sp.Integer(0), sp.Rational(1, 10**5))  # LayerNorm's ε: none, or PyTorch's default
_ROOT = re.compile(r"√\s*\(?\s*(\d{1,4})\b|\\sqrt\s*\{\s*(\d{1,4})\s*\}|\\sqrt\s*(\d)|sqrt\((\d{1,4})\)")
_MEAN = re.compile(r"\bmean\b|\baverage\b|μ", re.IGNORECASE)
_VAR = re.compile(r"\bvariance\b|\bvar\b|σ²", re.IGNORECASE)


@dataclass
class Grid:
    """The numeric part of a printed table: the columns whose every row holds one number."""

    label: str
    lines: list  # the row lines (1-based)
    header: list  # header text of each numeric column
    cells: list  # per row, per numeric column: (node, (line, start, end))
    shown: list  # per row, per numeric column: the entry as printed
    floats: np.ndarray  # rows × columns
    halves: np.ndarray  # half a unit of each entry's last printed digit

    @property
    def shape(self) -> tuple:
        return self.floats.shape

    def row(self, i: int) -> Vec:
        return Vec(tuple(node for node, _ in self.cells[i]))

    def column(self, j: int) -> Vec:
        return Vec(tuple(r[j][0] for r in self.cells))

    def span(self, i: int, cols=None) -> tuple:
        """(line, start, end) covering the row's numeric cells (or the columns ``cols``)."""
        spans = [self.cells[i][j][1] for j in (range(self.shape[1]) if cols is None else cols)]
        return (spans[0][0], min(s[1] for s in spans), max(s[2] for s in spans))

    def text(self, i: int, cols=None) -> str:
        cols = range(self.shape[1]) if cols is None else cols
        return "(" + ", ".join(self.shown[i][j] for j in cols) + ")"


def grids(doc: Document) -> list[Grid]:
    """The numeric part of every table of ``doc`` with at least two rows of numbers (header row excluded)."""
    out = []
    for t in doc.tables:
        rows = [t.header] + list(t.rows)
        parsed = [_cells(doc.line(k), k, t.sep) for k in rows]
        head, body = parsed[0], parsed[1:]
        if head and all(c is not None for c, _, _ in head):  # a header of numbers is a data row
            head, body = [], parsed
        else:
            rows = rows[1:]
        if len(body) < 2 or len({len(r) for r in body}) != 1 or not body[0]:
            continue
        numeric = [j for j in range(len(body[0])) if all(r[j][0] is not None for r in body)
                   and not _index([r[j][0] for r in body])]
        if not numeric:
            continue
        sig = _sig_digits([r[j][0] for r in body for j in numeric])
        cells = [[(_as_rounded(r[j][0], sig), (k, r[j][1], r[j][2])) for j in numeric] for k, r in zip(rows, body)]
        header = [head[j][2] if j < len(head) else "" for j in numeric]
        shown = [[doc.line(k)[r[j][1]:r[j][2]] for j in numeric] for k, r in zip(rows, body)]
        values = np.array([[float(r[j][0].value) for j in numeric] for r in body])  # signed, as printed
        halves = np.array([[float(_number(c).half_unit(None)) if _number(c).has_point else 0.0 for c, _ in row]
                           for row in cells])  # at the precision the entry is read at (_as_rounded)
        out.append(Grid(t.label, list(rows), header, cells, shown, values, halves))
    return out


def _index(column: list) -> bool:
    """Whether a column numbers the rows (0, 1, 2, … or 1, 2, 3, …): a position, not a quantity."""
    if any(n.has_point for n in column):
        return False
    return [int(n.value) for n in column] in (list(range(len(column))), list(range(1, len(column) + 1)))


def _cells(text: str, line: int, sep: str) -> list:
    """(PrintedNumber or None, start, end) of each cell of a table row; the cell text for the header."""
    cuts = [-1] + _separators(text, sep) + [len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        raw = text[a + 1:b]
        body = raw.strip().rstrip("\\").strip().strip("$").strip()
        lead = a + 1 + (len(raw) - len(raw.lstrip()))
        if sep == "|" and not raw.strip() and (a == -1 or b == len(text)):
            continue  # the empty cells outside a Markdown row's outer bars
        n = read_number(body) if body else None
        out.append((n, lead, lead + len(body)) if n is not None else (None, lead, raw.strip()))
    return out


def _sig_digits(numbers: list) -> int | None:
    """The significant digits most entries with a decimal point are printed to, when at least 60% share it."""
    sig = Counter(n.sig_digits() for n in numbers if n.has_point)
    if not sig:
        return None
    digits, count = sig.most_common(1)[0]
    return digits if count >= 0.6 * sum(sig.values()) else None


def _as_rounded(n: PrintedNumber, sig: int | None):
    """A table entry as a tree. In a table printed to ``sig`` significant digits with trailing zeros dropped (as
    ``%g`` prints), a shorter entry is rounded to ``sig`` digits too: ``2`` is ``2.00`` and ``0.44`` is ``0.440``;
    zero stays exact."""
    if sig is not None and n.value != 0 and "e" not in n.text.lower() and n.sig_digits() < sig:
        decimals = sig - 1 - magnitude(n.value)
        if decimals > max(n.decimals, 0):
            body = n.text.lstrip("+-−")
            text = body + ("" if "." in body else ".") + "0" * (decimals - max(n.decimals, 0))
            n = PrintedNumber(("-" if n.value < 0 else "") + text, n.value, decimals, True)
    if n.value < 0:
        return Neg(Num(PrintedNumber(n.text.lstrip("-−"), -n.value, n.decimals, n.has_point)))
    return Num(n)


def _number(node) -> PrintedNumber:
    return node.arg.number if isinstance(node, Neg) else node.number


# ---------------------------------------------------------------------------
# the operations, as trees of the page-arithmetic grammar and in floating point
# ---------------------------------------------------------------------------


def _k(x) -> Num:
    x = sp.Rational(x)
    if x.q == 1:
        return integer(x.p)
    return Num(PrintedNumber(f"{sp.Float(x, 3)}", x, 0, False))  # ε = 1e-05: exact, never widened


def _layer_norm(v: Vec, eps) -> Bin:
    centred = Bin("-", v, Call("mean", v))
    var = Call("mean", Pow(centred, _k(2)))
    return Bin("/", centred, Call("sqrt", Bin("+", var, _k(eps)) if eps else var))


def _ln(x: np.ndarray, eps: float) -> np.ndarray:
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + eps)


def _variance(v: Vec) -> Call:
    return Call("mean", Pow(Bin("-", v, Call("mean", v)), _k(2)))


@functools.cache
def _signs() -> np.ndarray:
    """Fixed random sign patterns (repeated past 512 entries), made when a relation is first screened."""
    return np.random.default_rng(0).choice([-1.0, 1.0], size=(6, 512))


def _screen(f, args: list, halves: list, printed: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Per row (the first axis of ``printed``), whether ``f(*args)`` is near ``printed``: within twice the spread
    ``f`` shows when every operand moves by its printed half unit (all up, all down, and six fixed random sign
    patterns), plus the printed result's own half unit. ``f`` works row by row on the first axis."""
    printed = np.asarray(printed, dtype=float)
    with np.errstate(all="ignore"):
        try:
            base = np.asarray(f(*args), dtype=float)
        except (ValueError, FloatingPointError, ZeroDivisionError):
            return np.zeros(len(printed), dtype=bool)
        if base.shape != printed.shape:
            return np.zeros(len(printed), dtype=bool)
        loose = np.abs(base - printed) <= 0.2 * np.abs(printed) + 20 * (half + max(float(np.max(h)) for h in halves))
        if loose.reshape(len(printed), -1).all(axis=1).sum() < len(printed) - 1:
            return np.zeros(len(printed), dtype=bool)  # far off on two rows or more: not this relation
        spread = np.zeros_like(base)
        for k in range(8):
            moved = [a + h * (np.sign(k - 0.5) if k < 2 else np.resize(_signs()[k - 2], np.shape(a)))
                     for a, h in zip(args, halves)]
            spread = np.maximum(spread, np.abs(np.asarray(f(*moved), dtype=float) - base))
    return _near(base, printed, 2 * spread + half + 1e-12, half)


INFORMATIVE = 0.05
"""A relation is evidence within the rounding of its operands only when that tolerance is small beside the
numbers it relates: at most this fraction of their mean size. A dot product with a vector printed to one decimal
(``(0.2, −0.1, 0.4)``) bounds every small number, so such a relation stands only where its printed operands give
the printed result exactly."""


def _near(base: np.ndarray, printed: np.ndarray, tol: np.ndarray, half) -> np.ndarray:
    """Per row, whether ``base`` lies within ``tol`` of ``printed``; only within the printed result's own
    ``half`` unit when the tolerance is not small beside the printed numbers (:data:`INFORMATIVE`)."""
    printed = np.asarray(printed, dtype=float)
    tol = np.broadcast_to(tol, printed.shape)
    if not np.mean(np.abs(printed)) or np.mean(tol) > INFORMATIVE * np.mean(np.abs(printed)):
        tol = np.broadcast_to(half, printed.shape) * (1 + 1e-9) + 1e-12
    near = np.isfinite(base) & (np.abs(base - printed) <= tol)
    return near.reshape(len(printed), -1).all(axis=1)


@dataclass
class Group:
    """A candidate relation: per row, whether the floating-point screen passed, and how to build the row's
    statement readings (conventions such as LayerNorm's ε: a row holds when one reading does) and result span."""

    near: np.ndarray
    make: object  # row → (readings, span)
    single: bool = False


# ---------------------------------------------------------------------------
# finding and deciding relations
# ---------------------------------------------------------------------------


def table_statements(doc: Document, *, dps: int = 50, taken=(), notes: list | None = None):
    """The relations between ``doc``'s tables that hold (see the module docstring), each row as
    ``(statement, links, span)``: the decided :class:`~symseq.read.tree.Statement`, its
    :class:`~symseq.verify.steps.Link` list and the span of its printed result. ``taken`` holds spans of results
    other statements already check; they are not explained twice. When the search stops at :data:`BUDGET`
    candidates, a sentence saying so is appended to ``notes``."""
    notes = [] if notes is None else notes
    gs = grids(doc)
    if not gs:
        return []
    text = "\n".join(doc.lines)
    roots = sorted({int(next(g for g in m.groups() if g)) for m in _ROOT.finditer(text)} - {0, 1})
    done = set(taken)
    out = []
    for count, group in enumerate(_groups(gs, roots, doc)):
        if count == BUDGET:
            notes.append(f"the search for relations between the {len(gs)} printed tables stopped after {BUDGET} "
                         f"candidates; the rest of the tables' numbers are left for a derivation")
            break
        n = len(group.near)
        spare = 1 if n >= ONE_WRONG and not group.single else 0
        if (not group.single and n < MIN_ROWS) or group.near.sum() < n - spare:
            continue
        rows = [group.make(i) for i in range(n)]
        if any(span in done for _, span in rows):
            continue
        decided = [_best(readings, dps) for readings, _ in rows]
        if any(d is None for d in decided) or sum(d[2] != "wrong" for d in decided) < n - spare:
            continue
        for (_, span), (st, links, _) in zip(rows, decided):
            out.append((st, links, span))
            done.add(span)
    return out


def _best(readings: list, dps: int):
    """(statement, links, status) of the reading that holds best (ok, then drift), or None if none can be read."""
    best = None
    for st in readings:
        try:
            links = decide(st, dps=dps, rounded=lambda number: True)
        except SymseqError:
            continue
        status = "ok" if all(k.ok for k in links) else \
            "drift" if all(k.ok or (k.kind == "result" and k.within_rounding) for k in links) else "wrong"
        rank = ("ok", "drift", "wrong").index(status)
        if best is None or rank < best[0]:
            best = (rank, st, links, status)
    return None if best is None else best[1:]


def _statement(left, left_text: str, right, right_text: str) -> Statement:
    return Statement((left, right), ("≈",), (left_text, right_text))


def _groups(gs: list, roots: list, doc: Document):
    """Candidate relations (:class:`Group`), most specific first."""
    same = [(a, b) for a, b in itertools.permutations(range(len(gs)), 2) if gs[a].shape == gs[b].shape]
    for c, g in enumerate(gs):  # sums of the rows of two other tables
        for a, b in itertools.combinations(range(len(gs)), 2):
            if c not in (a, b) and gs[a].shape == gs[b].shape == g.shape:
                yield _row_sums(gs[a], gs[b], g)
    for a, b in same:  # LayerNorm of the rows of another table
        if gs[a].shape[1] >= MIN_WIDTH:
            yield _row_lns(gs[a], gs[b])
    for g in gs:  # rows of one table as stages: sums and LayerNorms of other rows
        n, w = g.shape
        if w < MIN_WIDTH:
            continue
        for k in range(n):
            for i, j in itertools.combinations([r for r in range(n) if r != k], 2):
                yield _stage_sum(g, i, j, k)
            for i in range(n):
                if i != k:
                    yield _stage_ln(g, i, k)
    for s in gs:  # row statistics named by a header
        for j in range(s.shape[1] - 1):
            if _MEAN.search(s.header[j]) and _VAR.search(s.header[j + 1]):
                for g in gs:
                    if g is not s and g.shape[0] == s.shape[0] and g.shape[1] >= 2:
                        yield _row_stats(g, s, j)
    for a, c in same:  # weighted rows: a column of one table times the rows of another
        for w in gs:
            if w.shape[0] == gs[c].shape[0] and w is not gs[c]:
                for j in range(w.shape[1]):
                    yield _row_weighted(w, j, gs[a], gs[c])
    vectors: dict = {}  # width → the printed rows and lists of that width
    for y in gs:  # a column of dot products: one printed vector with every row of another table
        n, w = y.shape
        if n < MIN_ROWS or w < 2:
            continue
        if w not in vectors:
            vectors[w] = [(h.row(i), h.text(i), h.floats[i], h.halves[i]) for h in gs if h.shape[1] == w
                          for i in range(h.shape[0])] + [(node, text, np.array(v), np.array(hv)) for node, _, text, v, hv
                                                         in _printed_lists(doc, w)]
        for g in gs:
            if g.shape[0] == n and g is not y:
                yield from _column_dots(y, g, vectors[w])
    for g in gs:  # columns of one table: scaled by 1/√d, or the softmax of another column
        for a, b in itertools.permutations(range(g.shape[1]), 2):
            for d in roots:
                yield _column_scaled(g, a, b, d)
            yield _column_softmax(g, a, b)
    lists: dict = {}
    for g in gs:  # column sums printed as a row elsewhere
        w = g.shape[1]
        if w < MIN_WIDTH:
            continue
        for h in gs:
            if h is not g and h.shape[1] == w:
                for i in range(h.shape[0]):
                    yield _column_sums(g, h.floats[i], h.halves[i], h.row(i), h.span(i), h.text(i))
        if w not in lists:
            lists[w] = _printed_lists(doc, w)
        for node, span, text, values, halves in lists[w]:
            yield _column_sums(g, values, halves, node, span, text)


def _row_sums(ga: Grid, gb: Grid, gc: Grid) -> Group:
    near = _screen(lambda x, y: x + y, [ga.floats, gb.floats], [ga.halves, gb.halves], gc.floats, gc.halves)
    return Group(near, lambda i: ([_statement(Bin("+", ga.row(i), gb.row(i)), f"{ga.text(i)} + {gb.text(i)}",
                                              gc.row(i), gc.text(i))], gc.span(i)))


def _ln_readings(ga: Grid, i: int, gb: Grid, k: int) -> tuple:
    return [_statement(_layer_norm(ga.row(i), e), f"LayerNorm{ga.text(i)}" + (" (ε = 1e-05)" if e else ""),
                       gb.row(k), gb.text(k)) for e in EPSILONS], gb.span(k)


def _ln_near(x, hx, y, hy) -> np.ndarray:
    return np.logical_or.reduce([_screen(lambda v, e=e: _ln(v, float(e)), [x], [hx], y, hy) for e in EPSILONS])


def _row_lns(ga: Grid, gb: Grid) -> Group:
    return Group(_ln_near(ga.floats, ga.halves, gb.floats, gb.halves), lambda i: _ln_readings(ga, i, gb, i))


def _stage_sum(g: Grid, i: int, j: int, k: int) -> Group:
    near = _screen(lambda x, y: x + y, [g.floats[i:i + 1], g.floats[j:j + 1]], [g.halves[i:i + 1], g.halves[j:j + 1]],
                   g.floats[k:k + 1], g.halves[k:k + 1])
    return Group(near, lambda _: ([_statement(Bin("+", g.row(i), g.row(j)), f"{g.text(i)} + {g.text(j)}", g.row(k),
                                              g.text(k))], g.span(k)), single=True)


def _stage_ln(g: Grid, i: int, k: int) -> Group:
    near = _ln_near(g.floats[i:i + 1], g.halves[i:i + 1], g.floats[k:k + 1], g.halves[k:k + 1])
    return Group(near, lambda _: _ln_readings(g, i, g, k), single=True)


def _row_stats(g: Grid, s: Grid, j: int) -> Group:
    near = _screen(lambda x: np.stack([x.mean(axis=1), x.var(axis=1)], axis=1), [g.floats], [g.halves],
                   s.floats[:, j:j + 2], s.halves[:, j:j + 2])

    def make(i):
        v = g.row(i)
        return [_statement(Vec((Call("mean", v), _variance(v))), f"(mean, population variance) of {g.text(i)}",
                           Vec((s.cells[i][j][0], s.cells[i][j + 1][0])), s.text(i, (j, j + 1)))], s.span(i, (j, j + 1))

    return Group(near, make)


def _row_weighted(w: Grid, j: int, ga: Grid, gc: Grid) -> Group:
    near = _screen(lambda s, x: s[:, None] * x, [w.floats[:, j], ga.floats], [w.halves[:, j], ga.halves],
                   gc.floats, gc.halves)

    def make(i):
        weight = w.cells[i][j][0]
        return [_statement(Bin("·", weight, ga.row(i)), f"{w.shown[i][j]} · {ga.text(i)}", gc.row(i),
                           gc.text(i))], gc.span(i)

    return Group(near, make)


def _column_dots(y: Grid, g: Grid, vectors: list):
    """Columns of ``g`` that are the dot products of one printed vector with each row of ``y`` (Week 06,
    Table 13: ``q_6·k_j``), screened for all vectors and columns at once with the first-order rounding bound."""
    if not vectors:
        return
    xs = np.array([v for _, _, v, _ in vectors])
    hx = np.array([h for _, _, _, h in vectors])
    dots = xs @ y.floats.T  # vectors × rows
    bound = np.abs(xs) @ y.halves.T + hx @ np.abs(y.floats).T + hx @ y.halves.T
    spare = 1 if y.shape[0] >= ONE_WRONG else 0
    for j in range(g.shape[1]):
        rough = np.abs(dots - g.floats[:, j]) <= 2 * bound + g.halves[:, j] + 1e-12
        for m in np.flatnonzero(rough.sum(axis=1) >= y.shape[0] - spare):
            near = _near(dots[m], g.floats[:, j], 2 * bound[m] + g.halves[:, j] + 1e-12, g.halves[:, j])
            if near.sum() < y.shape[0] - spare:
                continue
            node, text = vectors[m][0], vectors[m][1]

            def make(i, node=node, text=text, j=j):
                return [_statement(Bin("·", node, y.row(i)), f"{text}·{y.text(i)}", g.cells[i][j][0],
                                   g.shown[i][j])], g.cells[i][j][1]

            yield Group(near, make)


def _column_scaled(g: Grid, a: int, b: int, d: int) -> Group:
    near = _screen(lambda x: x / np.sqrt(d), [g.floats[:, a]], [g.halves[:, a]], g.floats[:, b], g.halves[:, b])

    def make(i):
        x, y = g.cells[i][a][0], g.cells[i][b][0]
        return [_statement(Bin("/", x, Call("sqrt", _k(d))), f"{g.shown[i][a]}/√{d}", y, g.shown[i][b])], g.cells[i][b][1]

    return Group(near, make)


def _column_softmax(g: Grid, a: int, b: int) -> Group:
    def soft(x):
        e = np.exp(x - x.max())
        return e / e.sum()

    near = _screen(soft, [g.floats[:, a]], [g.halves[:, a]], g.floats[:, b], g.halves[:, b])
    column = g.column(a)
    shown = "(" + ", ".join(row[a] for row in g.shown) + ")"

    def make(i):
        y = g.cells[i][b][0]
        left = Bin("/", Call("exp", column.items[i]), Call("sum", Call("exp", column)))
        return [_statement(left, f"softmax{shown}_{i}", y, g.shown[i][b])], g.cells[i][b][1]

    return Group(near, make)


def _column_sums(g: Grid, values, halves, node, span: tuple, text: str) -> Group:
    near = _screen(lambda x: x.sum(axis=0)[None, :], [g.floats], [g.halves], np.asarray(values)[None, :],
                   np.asarray(halves)[None, :])
    def make(_):
        left = Vec(tuple(Call("sum", g.column(j)) for j in range(g.shape[1])))
        return [_statement(left, f"column sums of {g.label or 'the table'}", node, text)], span

    return Group(near, make, single=True)


def _printed_lists(doc: Document, width: int) -> list:
    """(node, span, text, values, half units) of each list of ``width`` numbers printed outside tables."""
    from ..verify.steps import _entries
    from .arithmetic import _clean, _lists

    rows = {k for t in doc.tables for k in [t.header, *t.rows]}
    out = []
    for line, raw in enumerate(doc.lines, start=1):
        if line in rows or line in doc.code:
            continue
        text = _clean(raw)
        for node, a, b in _lists(text):
            if len(node.items) == width:
                entries = _entries(node)
                values = [float(sign * n.value) for _, n, sign in entries]
                halves = [float(n.half_unit(None)) if n.has_point else 0.0 for _, n, _ in entries]
                out.append((node, (line, a, b), text[a:b], values, halves))
    return out
