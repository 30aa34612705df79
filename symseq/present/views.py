"""What a display shows, independent of the medium: values, rounding, labels and formulas.

The terminal (:mod:`.terminal`), LaTeX (:mod:`.latex`) and figure
(:mod:`.figures`) renderers all read a section's displays through this
module, so a table shows the same digits everywhere:

* :func:`handout_decimal` rounds as the handouts print tables: to ``d``
  significant digits, half away from zero, trailing zeros dropped (three
  significant digits print 0.150 as ``0.15`` and 0.300 as ``0.3``, Week 06
  handout 004, Tables 10–15).
* :func:`grid` asks the derivation's :class:`~symseq.values.Values` service
  for a matrix node's values (mpmath at 50 digits) and, where the ledger keeps
  exact forms, its exact entries.
* :class:`TableView`, :class:`HeatmapView` and :class:`PairedView` hold one
  display as rows of cells ready to print.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from .. import ops
from ..errors import ClaimError, EvaluationError, LedgerError, SymseqError
from ..numbers import Decimalish, handout_decimal, near_tie
from ..values import DPS, Values, ledger_of


# ---------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------


def decimals_of(printed: str) -> int | None:
    """Digits after the decimal point of a printed decimal (``"0.150"`` → 3, ``"4"`` → 0); None if not a number."""
    from ..read import read_number

    n = read_number(printed) if isinstance(printed, str) else None
    if n is None or n.decimals < 0:
        return None
    return n.decimals


def rounding_label(digits: int | None, printed: bool) -> str:
    """How a table is rounded, in words: "three significant digits", "as printed"."""
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    if digits is not None:
        return f"{words.get(digits, str(digits))} significant digit{'s' if digits != 1 else ''}"
    return "rounded as printed" if printed else "six significant digits"


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------


@dataclass
class Grid:
    """A matrix's values: mpf entries (rows are positions), exact entries when available, its shape."""

    values: list  # list of rows of mpf
    exact: list | None  # list of rows of SymPy numbers, or None
    shape: tuple
    source: Any = None  # the node evaluated, for exact entries on demand
    service: Any = None  # the Values service that evaluated it

    def best(self, i: int, j: int, digits: int | None = 3, decimals: int | None = None):
        """The entry to round: its mpf value, or its exact rational when that value sits on a rounding tie.

        A 50-digit binary value of 0.6705 may fall on either side of the tie; the
        exact entry (computed only then) rounds away from zero, as printed.
        """
        if self.exact is not None and isinstance(self.exact[i][j], sp.Rational):
            return self.exact[i][j]
        v = self.values[i][j]
        if not near_tie(v, digits, decimals) or not isinstance(self.source, ops.Node):
            return v
        e = self.exact_entry(i, j)
        return e if isinstance(e, sp.Rational) else v

    def exact_entry(self, i: int, j: int):
        """The exact value of entry (i, j), or None when it cannot be computed."""
        node = self.source if self.source.shape == () else ops.Entry(self.source, i, j)
        if ledger_of(node) is None:
            return None
        try:
            return (self.service or Values()).exact(node)
        except SymseqError:
            return None

    def floats(self) -> np.ndarray:
        """float64 array for plotting (−∞ stays −∞).

        Raises:
            ClaimError: when an entry is a formula rather than a number.
        """
        if any(v is None for row in self.values for v in row):
            raise ClaimError("a heatmap needs numbers, but this value holds formulas; record it with show_table")
        return np.array([[float(v) for v in row] for row in self.values], dtype=float)


def _as_grid_shape(values, shape):
    if shape == ():
        return [[values[0]]], (1, 1)
    m, n = shape
    return [values[i * n:(i + 1) * n] for i in range(m)], (m, n)


def grid(value, *, exact: bool = True, dps: int = DPS, values: Values | None = None) -> Grid:
    """Evaluate a display's value: a node over a ledger, an exact SymPy matrix or number, or a nested list.

    Numeric entries come from mpmath at ``dps`` digits; exact entries from the
    exact kernel when ``exact`` and the ledger keeps exact forms (see
    ``Ledger(exact_forms=...)``). Both are computed by ``values`` (the
    derivation's :class:`~symseq.values.Values` service; a new one when None).
    A scalar comes back as a 1×1 grid.

    Raises:
        ClaimError: for a value that is neither a node nor exact numbers.
        LedgerError, EvaluationError: when the ledger cannot be evaluated.
    """
    if isinstance(value, ops.Node):
        led = ledger_of(value)
        if led is None:
            if isinstance(value, ops.Const):
                return grid(value.value, exact=exact, dps=dps, values=values)
            raise ClaimError("a display's value must refer to a ledger (a node built from ledger handles)")
        values = values or Values()
        flat, shape = values.numeric(value, dps)
        rows, shape = _as_grid_shape(flat, shape)
        ex = None
        if exact and getattr(led, "exact_forms", True):
            try:
                e = values.exact(value)
                flat_e = list(e) if isinstance(e, sp.MatrixBase) else [e]
                ex, _ = _as_grid_shape(flat_e, shape)
            except SymseqError:
                ex = None
        return Grid(rows, ex, shape, value, values)
    values = values or Values()
    if _has_nodes(value):
        return _node_grid(value, exact=exact, dps=dps, values=values)
    if isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, sp.MatrixBase):
        value = values.exact(value)
    if isinstance(value, sp.MatrixBase) or isinstance(value, sp.Basic):
        entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
        shape = value.shape if isinstance(value, sp.MatrixBase) else ()
        # a formula entry (φ′(z) = 1 − tanh²(z)) has no number: None
        nums = [None if getattr(e, "free_symbols", None) else values.numeric(e, dps)[0][0] for e in entries]
        rows, shape = _as_grid_shape(nums, shape)
        ex, _ = _as_grid_shape(entries, value.shape if isinstance(value, sp.MatrixBase) else ())
        symbolic = any(v is None for v in nums)
        return Grid(rows, ex if exact or symbolic else None, shape)
    raise ClaimError(f"cannot display a value of type {type(value).__name__}; give a matrix node or exact numbers")


def _has_nodes(value) -> bool:
    """Whether ``value`` is a list of rows with a scalar node among its entries."""
    return (isinstance(value, (list, tuple)) and all(isinstance(r, (list, tuple)) for r in value)
            and any(isinstance(e, ops.Node) for r in value for e in r))


def _node_grid(rows, *, exact: bool, dps: int, values: Values) -> Grid:
    """A grid of a list of rows whose entries are scalar nodes (of any ledgers) or exact numbers: each entry
    evaluated on its own, exact where its ledger keeps exact forms (a table whose columns come from two ledgers,
    Week 06's Figure 3 (right)).

    Raises:
        ClaimError: for rows of different lengths or an entry that is not a scalar.
    """
    n = len(rows[0]) if rows else 0
    if any(len(r) != n for r in rows):
        raise ClaimError(f"a table given as rows needs rows of one length; got lengths {[len(r) for r in rows]}")
    nums, exacts = [], []
    for r in rows:
        nums.append([])
        exacts.append([])
        for e in r:
            flat, shape = values.numeric(e, dps)
            if shape != ():
                raise ClaimError(f"a table given as rows needs a scalar in each entry; got a {shape} value")
            nums[-1].append(flat[0])
            led = ledger_of(e)
            keep = exact and (led is None or getattr(led, "exact_forms", True))
            try:
                exacts[-1].append(values.exact(e) if keep else None)
            except SymseqError:
                exacts[-1].append(None)
    return Grid(nums, exacts if exact else None, (len(rows), n))




def short_exact(e, limit: int = 18) -> str | None:
    """The exact closed form of a number in Unicode when it is short (``1/√2``, ``3/4``), else None.

    Integers print as themselves; a closed form no shorter than its decimal is not worth showing.
    """
    from .notation import Notation

    if e is None or not isinstance(e, sp.Basic) or not e.is_number:
        return None
    if e in (sp.oo, -sp.oo):
        return "∞" if e == sp.oo else "−∞"
    if sp.count_ops(e) > 12:
        return None
    text = Notation("unicode").expr(e)
    return text if len(text) <= limit else None


# ---------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------

_NAMEISH = re.compile(r"^[A-Za-z\u0370-\u03ff][A-Za-z0-9\u0370-\u03ff'′]*"
                      r"([_^](\{[^{}\s]*\}|\([^()\s]*\)|[A-Za-z0-9\u0370-\u03ff+\-−'′]+))+$")


def label_parts(label: str, *, inside_words: bool = False) -> list[tuple[str, str]]:
    """Split a row or column label into ("text", s) and ("name", s) pieces.

    Words that look like handout symbols (``A_{6j}``, ``S_6j``, ``g_t^z``,
    ``H^(0)``) are names, typeset as math; the rest is text ("Raw dot
    product", "0: a"). ``$...$`` and ``\\(...\\)`` spans are LaTeX math taken as
    given. With ``inside_words`` a symbol is also found inside a longer word (``d_k=2,`` → ``d_k`` then
    ``=2,``; ``ε>0``): what LaTeX typesets, so that no ``_`` or ``{`` of a name is left in the text; code
    (``torch.nn.utils``, ``clip_grad_norm_``, ``batch_first``) is then a ("code", s) piece, and a power of an
    absolute value in words (``|factor|^n``) a ("tex", s) piece of LaTeX math. A list of numbers as Python
    writes it (``[[0, 2], [0, 0]]``, ``[0, 8]``) is a ("list", s) piece.
    """
    out: list[tuple[str, str]] = []
    pos = 0
    for m in re.finditer(r"\$([^$]+)\$|\\\((.+?)\\\)|(\\[A-Za-z]+)(?![A-Za-z])|" + _number_list(), label):
        if m.group(3) and m.group(3)[1:] not in _source_commands():
            continue  # an unknown command stays text, escaped
        if m.start() > pos:
            out.extend(_words(label[pos:m.start()], inside_words))
        out.append(("math", m.group(1) or m.group(2)) if m.group(1) or m.group(2) else
                   ("tex", m.group(3)) if m.group(3) else ("list", m.group(0)))
        pos = m.end()
    out.extend(_words(label[pos:], inside_words))
    return out


def _source_commands():
    """The LaTeX commands a label may hold as a formula's (``0.2+\\sin 3``): those of a handout's source."""
    from .tex import SOURCE_COMMANDS

    return SOURCE_COMMANDS


# A list of numbers written as Python writes it, in a label: a row [0, 8] or rows [[0, 2], [0, 0]] (a ("list", s)
# piece: a matrix in LaTeX, as written in the terminal).
@functools.cache
def _number_list() -> str:
    from ..read.number import SIGNED_NUMBER

    row = r"\[%s(?:,\s*%s)+\]" % (SIGNED_NUMBER.pattern, SIGNED_NUMBER.pattern)
    return r"(?<![\w\]])(?:\[%s(?:,\s*%s)*\]|%s)(?![\w\[])" % (row, row, row)


def number_list_latex(text: str) -> str:
    """A list of numbers as Python writes it, as math: ``[[0, 2], [0, 0]]`` → a ``pmatrix``, ``[0, 8]`` → ``[0, 8]``
    with math minus signs."""
    from .tex import tex_math

    rows = re.findall(r"\[([^\[\]]*)\]", text)
    cells = [[tex_math(c.strip()) for c in r.split(",")] for r in rows]
    if text.startswith("[["):
        return r"\begin{pmatrix}%s\end{pmatrix}" % r" \\ ".join(" & ".join(r) for r in cells)
    return "[%s]" % ", ".join(cells[0])


# A symbol inside a word: a letter (any script, with its accents; ∇, ℓ, ∂ too) with sub- or superscripts,
# not after a letter, backslash, dot or underscore (a module path torch.nn.clip_grad_norm_), nor followed by
# another script mark (code: clip_grad_norm_); W_1W_2 is two names.
_SCRIPT_CHARS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"
_LETTER = r"(?:(?![%s])[^\W\d_]|[∇ℓ∂])[\u0300-\u036f]*" % _SCRIPT_CHARS  # w_h³ is w_h cubed, not w_{h³}
_NAME_INSIDE = re.compile(r"(?<![^\W\d_]|[\\._])" + _LETTER + r"(?:[^\W_]|['′])*(?:[_^](?:\{[^{}\s]*\}|\([^()\s]*\)"
                          r"|\[[^\[\]\s]*\]|[0-9]+|" + _LETTER + r"(?:" + _LETTER + r"|[0-9'′])*))+(?![_^0-9])")
# Code in a sentence: a dotted path (torch.nn.utils), a name with two underscores or ending in one
# (clip_by_global_norm, clip_grad_norm_), or a keyword argument (max_norm=), set in typewriter type as it is.
# So is a snake_case name of two lowercase words (batch_first, register_buffer, embed_dim), unless its first word is
# one of mathematics (softmax_rows, mu_enc).
_MATH_WORDS = ("softmax", "logsumexp", "alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "lambda", "mu", "nu", "pi", "rho",
               "sigma", "tau", "phi", "psi", "omega", "ell")
_CODE = re.compile(r"(?<![\w.])(?:[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"
                   r"|[A-Za-z]{2,}(?:_[A-Za-z0-9]*){2,}|[A-Za-z]{2,}_[A-Za-z]{2,}(?==)"
                   r"|(?!(?:%s)_)[a-z]{2,}_[a-z]{2,}(?![\w^]))" % "|".join(_MATH_WORDS))
# |factor|^n: a power of an absolute value written in words
_ABS_POWER = re.compile(r"\|([^|\s]+)\|\^(\{[^{}\s]*\}|[A-Za-z0-9]+)")
# A script after a closing bracket, a power of a number: FF(X)_i, 10000^(−2⌊j/2⌋/D) (not a file name 000_3e.txt).
_AFTER_BRACKET = re.compile(r"(?:(?<=[)\]])[_^]|(?<=[0-9])\^)(?:\{([^{}\s]*)\}|(\([^()\s]*\)|[A-Za-z0-9]+))")


def _inside(piece: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    code = _CODE.search(piece)
    if code:
        before, after = piece[:code.start()], piece[code.end():]
        return (_inside(before) if before else []) + [("code", code.group(0))] + (_inside(after) if after else [])
    found = [*_ABS_POWER.finditer(piece), *_NAME_INSIDE.finditer(piece), *_AFTER_BRACKET.finditer(piece)]
    for m in sorted(found, key=lambda m: m.start()):
        if m.start() < pos:
            continue
        if m.start() > pos:
            out.append(("text", piece[pos:m.start()]))
        if m.re is _ABS_POWER:
            out.append(("tex", r"|%s|^{%s}" % (_abs_body(m.group(1)), m.group(2).strip("{}"))))
        else:
            out.append(("name", m.group(0)) if m.re is _NAME_INSIDE else
                       ("math", "{}%s{%s}" % (m.group(0)[0], m.group(1) if m.group(1) is not None else m.group(2))))
        pos = m.end()
    if pos < len(piece):
        out.append(("text", piece[pos:]))
    return out


def _abs_body(text: str) -> str:
    """What stands between the bars of |factor|^n or |w_h|^5, as math: a word upright, a name as a name."""
    from .notation import latex_name

    return r"\mathrm{%s}" % text if re.fullmatch(r"[A-Za-z]{2,}", text) else latex_name(text)


def _words(text: str, inside_words: bool = False) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for piece in re.split(r"(\s+)", text):
        if not piece:
            continue
        if inside_words and (not _NAMEISH.match(piece.rstrip(",.;:)")) or _CODE.search(piece)):
            out.extend(_inside(piece))
            continue
        trail = ""
        core = piece
        while core and core[-1] in ",.;:)" and not _NAMEISH.match(core):
            trail = core[-1] + trail
            core = core[:-1]
        if core and _NAMEISH.match(core):
            out.append(("name", core))
            if trail:
                out.append(("text", trail))
        else:
            out.append(("text", piece))
    merged: list[tuple[str, str]] = []
    for kind, s in out:
        if merged and kind == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + s)
        else:
            merged.append((kind, s))
    return merged


def unicode_label(label: str) -> str:
    """A label for the terminal: handout symbols in Unicode (``A_{6j}`` → A₆ⱼ)."""
    from .notation import unicode_name

    out = []
    for kind, s in label_parts(str(label)):
        if kind == "name":
            out.append(unicode_name(s))
        elif kind == "math":
            out.append(_latex_to_unicode(s))
        else:
            out.append(s)
    return "".join(out)


def latex_label(label: str) -> str:
    """A label or sentence for LaTeX text mode: symbols as math (``$A_{6j}$``, ``d_k=2`` → ``$d_{k}$=2``),
    even inside a word, the rest escaped (:func:`~symseq.present.tex.tex_text`)."""
    from .tex import tex_text

    return _tex_label(label, math="$%s$", code=lambda s: r"\texttt{%s}" % tex_text(s), text=tex_text)


def _brace(tex: str, scripts: str) -> str:
    """A name that already has a superscript, braced before another one is put on it: ``{W_{x}^{(1)}}^{\\top}``."""
    return "{%s}" % tex if scripts and "^" in tex else tex


def mathjax_label(label: str, command: str = "text") -> str:
    """A label or sentence as math that MathJax (Jupyter) and pdflatex both typeset: symbols as in
    :func:`latex_label` (``A_{6j}``, ``w_h³`` → ``w_{h}^{3}``), code in ``\\mathtt``, the rest in ``\\text`` runs
    (:func:`~symseq.present.tex.mathjax_text`; ``command="textbf"`` for a heading)."""
    from .tex import math_mode_chars, mathjax_text

    # braced: after a row's \\ a bracket would read as a length
    return _tex_label(label, math="{%s}", code=lambda s: r"\mathtt{%s}" % math_mode_chars(s),
                      text=lambda s: mathjax_text(s, command=command))


def _tex_label(label: str, *, math: str, code, text) -> str:
    """The parts of ``label`` (:func:`label_parts`) in LaTeX: names, formulas, number lists and LaTeX as ``math``
    (a format, ``"$%s$"`` in text mode), a name with the sub- and superscript characters that follow it (``w_h³``,
    ``W_xᵀ``); code by ``code`` and the other text by ``text``."""
    from .notation import latex_name
    from .tex import tex_math

    out = []
    parts = label_parts(str(label), inside_words=True)
    for k, (kind, s) in enumerate(parts):
        if kind == "code":
            out.append(code(s))
        elif kind == "name":
            scripts = re.match("[%s]*" % _SCRIPT_CHARS, parts[k + 1][1]).group(0) \
                if k + 1 < len(parts) and parts[k + 1][0] == "text" else ""
            if scripts:
                parts[k + 1] = ("text", parts[k + 1][1][len(scripts):])
            out.append(math % (_brace(latex_name(s), scripts) + tex_math(scripts)))
        elif kind == "math":
            out.append(math % tex_math(s))
        elif kind == "list":
            out.append(math % number_list_latex(s))
        elif kind == "tex":
            out.append(math % s)
        elif s:
            out.append(text(s))
    return "".join(out)


def mathtext_label(label: str) -> str:
    """A label for matplotlib: symbols as mathtext (``$A_{6j}$``), the rest as text with ``$`` escaped."""
    from .notation import latex_name
    from .tex import math_mode_chars

    out = []
    for kind, s in label_parts(str(label), inside_words=True):
        if kind == "code":  # monospace in mathtext, its marks escaped (matplotlib has no \texttt)
            out.append(r"$\mathtt{%s}$" % math_mode_chars(s))
        elif kind == "name":
            out.append("$%s$" % latex_name(s))
        elif kind in ("math", "tex"):
            out.append("$%s$" % s)
        elif kind == "list":
            out.append(s)  # mathtext has no matrices
        else:
            out.append(s.replace("$", r"\$"))
    return "".join(out)


def _latex_to_unicode(s: str) -> str:
    from .notation import unicode_name

    s = s.replace(r"\mathbf", "").replace(r"\mathrm", "").replace(r"\,", " ").strip()
    return unicode_name(s) if _NAMEISH.match(s) else s


# ---------------------------------------------------------------------------
# views of a section's displays
# ---------------------------------------------------------------------------


@dataclass
class Cell:
    """One table entry: what to print, its number, and whether the handout's printed string differs."""

    text: Decimalish
    exact: str | None = None
    printed: str | None = None
    differs: bool = False
    masked: bool = False
    expr: Any = None  # a formula entry (SymPy), printed in the medium's notation instead of a number


@dataclass
class TableView:
    """A handout table (rows are positions): labels, cells, and how it is rounded."""

    label: str
    rows: list
    cols: list
    cells: list  # list of rows of Cell
    rounding: str
    digits: int | None


def _labels(given, n, what):
    if given is None:
        return [str(i) for i in range(n)]
    given = [str(g) for g in given]
    if len(given) < n:
        raise ClaimError(f"{what}: {len(given)} labels for {n} {what.split()[-1]}; give one label per entry")
    return given[:n]


def table_view(spec, values: Values | None = None) -> TableView:
    """The view of a :class:`~symseq.authoring.TableSpec`.

    The table shows the printed table's shape when the handout's strings are
    given (the value may be larger), else the whole value. Each entry is
    rounded as the spec says: ``digits`` significant digits, or, with
    ``digits=None``, to as many decimals as the printed entry shows. Entries
    that are formulas (a table of activation slopes φ′(z)) keep their SymPy
    expression in :attr:`Cell.expr`.
    """
    g = grid(spec.value, exact=False, values=values or spec.values)
    printed = spec.printed
    m = len(printed) if printed else g.shape[0]
    n = max((len(r) for r in printed), default=0) if printed else g.shape[1]
    if m > g.shape[0] or n > g.shape[1]:
        raise ClaimError(f"{spec.label}: the printed table is {m}×{n} but the value is only "
                         f"{g.shape[0]}×{g.shape[1]}")
    cells = []
    for i in range(m):
        row = []
        for j in range(n):
            p = printed[i][j] if printed and j < len(printed[i]) else None
            if g.values[i][j] is None:
                row.append(Cell(Decimalish(""), printed=p, expr=g.exact[i][j]))
                continue
            dec = decimals_of(p) if spec.digits is None and p is not None else None
            d = _round_entry(g.best(i, j, spec.digits if spec.digits is not None else (None if dec is not None else 6),
                                    dec), spec.digits, p)
            differs = p is not None and _normal(p) != d.text
            row.append(Cell(d, printed=p, differs=differs))
        cells.append(row)
    return TableView(spec.label, _labels(spec.rows, m, f"{spec.label} rows"),
                     _labels(spec.cols, n, f"{spec.label} columns"), cells,
                     rounding_label(spec.digits, bool(printed)), spec.digits)


def _round_entry(v, digits, printed):
    if digits is not None:
        return handout_decimal(v, digits)
    dec = decimals_of(printed) if printed is not None else None
    if dec is not None:
        return handout_decimal(v, decimals=dec)
    return handout_decimal(v, 6)


def _normal(printed: str) -> str:
    return printed.strip().replace("−", "-").replace("\u2212", "-")


def heatmap_caption(view) -> tuple[str, str]:
    """The caption of a heatmap (its label, and its title when it has one) and what its axes and marks mean."""
    caption = view.label if view.title in ("", view.label) else f"{view.label}: {view.title}"
    notes = ["rows: queries, columns: sources"] if list(view.rows) == list(view.cols) else []
    if view.masked.any():
        notes.append("× masked")
    return caption, "; ".join(notes)


@dataclass
class HeatmapView:
    """A heatmap: float values for colour, rounded annotations, and which entries are masked."""

    label: str
    title: str
    rows: list
    cols: list
    values: np.ndarray  # float64; masked entries keep their value (0 or −∞)
    masked: np.ndarray  # bool, True where the entry is excluded
    cells: list  # list of rows of Cell
    digits: int


def heatmap_view(spec, values: Values | None = None) -> HeatmapView:
    """The view of a :class:`~symseq.authoring.HeatmapSpec`; entries equal to −∞ count as masked too."""
    g = grid(spec.value, exact=False, values=values or spec.values)
    m, n = g.shape
    vals = g.floats()
    if spec.allowed is not None:
        allowed = ops.mask_allowed(spec.allowed, f"{spec.label}: the allowed mask", ndim=2)
        if allowed.shape != (m, n):
            raise ClaimError(f"{spec.label}: the allowed mask is {allowed.shape[0]}×{allowed.shape[1]} but the "
                             f"value is {m}×{n}; give one entry per (query, source)")
        masked = ~allowed
    else:
        masked = np.zeros((m, n), dtype=bool)
    masked = masked | np.isneginf(vals)
    cells = [[Cell(handout_decimal(g.best(i, j, spec.digits), spec.digits), masked=bool(masked[i, j])) for j in range(n)]
             for i in range(m)]
    return HeatmapView(spec.label, spec.title or spec.label, _labels(spec.rows, m, f"{spec.label} rows"),
                       _labels(spec.cols, n, f"{spec.label} columns"), vals, masked, cells, spec.digits)


@dataclass
class Step:
    """One ledger row as an equation: name, formula, and an optional simplified right-hand side."""

    name: str
    formula: str
    simplified: str | None = None
    kind: str = "row"
    boxed: bool = False
    item: Any = None


@dataclass
class PairedView:
    """Forward steps beside backward steps, in the handout's order (Week 06, Table 3)."""

    label: str
    pairs: list  # list of (Step | None, Step | None)


def step(ledger, name: str, notation) -> Step:
    """The equation ``name = formula`` of a ledger row (a leaf shows its value or 'given').

    A scalar row that uses an input fixed at zero also gets the form with
    that input's terms dropped (z₀ = w_x x₀ + w_h h₋₁ = w_x x₀ when
    h₋₁ = 0), as the handouts write it.
    """
    it = ledger[name]
    lhs = notation.name(name)
    if it.is_leaf:
        if it.value is not None:
            return Step(lhs, notation.expr(it.value), kind=it.kind, item=it)
        return Step(lhs, "", kind=it.kind, item=it)
    rhs = notation.render(it.node)
    simplified = None
    if isinstance(it.node, ops.Scalar):
        fixed = {ledger[s.name].symbol: 0 for s in it.node.expr.free_symbols
                 if s.name in ledger and ledger[s.name].kind == "input" and ledger[s.name].value == 0}
        if fixed:
            sub = it.node.expr.xreplace(fixed)
            if sub != it.node.expr:
                simplified = notation.expr(sub)
    boxed = it.kind == "adjoint" and it.adjoint_of is not None and ledger[it.adjoint_of].kind == "parameter"
    return Step(lhs, rhs, simplified, kind=it.kind, boxed=boxed, item=it)


def paired_view(spec, notation_factory) -> PairedView:
    """The view of a :class:`~symseq.authoring.PairedRowsSpec` with a notation for its ledger."""
    n = notation_factory(spec.ledger)
    pairs = []
    for f, b in spec.pairs:
        pairs.append((step(spec.ledger, f, n) if f is not None else None,
                      step(spec.ledger, b, n) if b is not None else None))
    return PairedView(spec.label, pairs)


def ledger_values(ledger, *, exact: bool = True, dps: int = DPS, values: Values | None = None) -> tuple[dict, dict]:
    """Numeric (mpf or object arrays of mpf) and exact values of every row that can be evaluated.

    Returns two dicts from name to value; both are empty when a needed leaf has
    no value (a symbolic ledger). Both come from ``values`` (the derivation's
    :class:`~symseq.values.Values` service; a new one when None): exact values
    only when the ledger keeps exact forms, and only rows of bounded size
    (:meth:`~symseq.values.Values.exact_rows`).
    """
    values = values or Values()
    try:
        num = values.rows(ledger, dps=dps)
    except (LedgerError, EvaluationError):
        return {}, {}
    ex = values.exact_rows(ledger) if exact and getattr(ledger, "exact_forms", True) else {}
    return num, ex
