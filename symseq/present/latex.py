"""LaTeX for handouts: derivation steps, forward/backward tables, boxed results, booktabs tables.

One derivation object, one deterministic document (the same bytes on every
run, in any process), short by default (``symseq latex``; ``--full`` is the
long form):

* each ledger as an ``align*`` of its rows, ``name = formula`` in handout
  notation (``\\odot`` for the Hadamard product, ``^{\\top}`` for the
  transpose, ``\\mathbf`` matrices), exact closed forms and decimals where
  short; the names of parameters' gradients boxed (as Week 06, handout 004,
  boxes ∂ℒ/∂w_x, ∂ℒ/∂w_h, ∂ℒ/∂w_o; ``full`` repeats them boxed after the
  steps); runs of short steps in two columns; a formula too wide to break
  scaled down to the line (:func:`fit_width`);
* a ledger that shares most of its steps with one typeset before (another
  section's, or the same object used again) is referred to by title and
  section, with only the steps and values that differ (:func:`section_latex`);
* a section's displays in recorded order: paired forward/backward rows as a
  two-column ``tabular`` (Week 06, Table 3), matrices as booktabs tables
  rounded as the handout rounds them (three significant digits print 0.150
  as 0.15), heatmaps as tables with masked entries marked ``\\times``;
* the claims as a compact ``longtable`` (:func:`compact_claims_latex`): what
  is claimed, the printed text as the handout printed it, the exact form,
  the status; the entries of one printed table are one row.

Every name goes through :mod:`.notation` (in sentences too:
:func:`~symseq.present.views.latex_label`), text is escaped by
:func:`~symseq.present.tex.tex_text` (pylatexenc). The output is ASCII:
Unicode in names and sentences becomes LaTeX commands (ŷ → ``\\hat{y}``,
ε → ``\\epsilon``, ∂ → ``\\partial``), so a standalone document compiles with
pdflatex and the packages of texlive-latex-base and texlive-latex-recommended
(:data:`PACKAGES`, and geometry, fontenc and lmodern in :data:`PREAMBLE`).

:func:`repr_latex` gives the MathJax flavour (math only, no ``tabular``)
used by ``_repr_latex_`` in Jupyter.
"""

from __future__ import annotations

import re

import mpmath
import sympy as sp

from .. import ops
from ..errors import ClaimError, SymseqError
from .notation import HandoutLatexPrinter, Notation
from .tex import (balanced_braces, math_mode_chars, mathjax_text, source_formula_text, tex_math, tex_source_parts,
                  tex_text, texttt)
from ..numbers import Decimalish, handout_decimal
from .views import (heatmap_caption, heatmap_view, latex_label, ledger_values, mathjax_label,
                    paired_view, rounding_label, step, table_view)

PACKAGES = ("amsmath", "amssymb", "booktabs", "longtable", "array", "graphicx")
PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage[margin=1.4cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{booktabs,longtable,array,graphicx}
\allowdisplaybreaks
\setlength{\jot}{2pt}
\setlength{\LTpre}{4pt}
\setlength{\LTpost}{4pt}
\makeatletter
\renewcommand\subsection{\@startsection{subsection}{2}{\z@}{-2ex\@plus -.5ex\@minus -.2ex}{1ex\@plus .2ex}%
  {\normalfont\large\bfseries}}
\renewcommand\paragraph{\@startsection{paragraph}{4}{\z@}{1.5ex\@plus .5ex\@minus .2ex}{-1em}%
  {\normalfont\normalsize\bfseries}}
\makeatother
\AtBeginDocument{\setlength{\abovedisplayskip}{5pt plus 2pt minus 2pt}%
  \setlength{\belowdisplayskip}{5pt plus 2pt minus 2pt}}
"""


# ---------------------------------------------------------------------------
# numbers and values
# ---------------------------------------------------------------------------


def number(d: Decimalish) -> str:
    """A rounded number in math mode: ``-0.175``, ``1.2 \\times 10^{-7}``, ``-\\infty``."""
    if d.special:
        return {"inf": r"\infty", "-inf": r"-\infty", "nan": r"\text{undefined}"}[d.special]
    if d.exponent is not None:
        return r"%s \times 10^{%d}" % (d.mantissa, d.exponent)
    return d.text


def fit_width(math: str, width: str = r"\linewidth", *, display: bool = True) -> str:
    """``math`` at its natural size, or scaled down to ``width`` when it is wider (``\\resizebox`` of
    graphicx, decided by TeX when it typesets: only a formula that would run off the page shrinks). Usable in
    math mode (an ``align*`` cell) and in text (a table cell)."""
    style = r"\displaystyle " if display else ""
    return (r"\setbox0=\hbox{$%s%s$}\ifdim\wd0>%s\resizebox{%s}{!}{\box0}\else\box0\fi"
            % (style, math, width, width))


def _notation(ledger=None) -> Notation:
    return Notation("latex", ledger, bold=True)


def _expr(e) -> str:
    return HandoutLatexPrinter().doprint(e)


def _short_exact_tex(e, limit: int = 40) -> str | None:
    if e is None or not isinstance(e, sp.Basic) or not e.is_number:
        return None
    if e in (sp.oo, -sp.oo):
        return r"\infty" if e == sp.oo else r"-\infty"
    if sp.count_ops(e) > 12:
        return None
    text = _expr(e)
    return text if len(text) <= limit else None


def _flat(v):
    import numpy as np

    if isinstance(v, np.ndarray):
        return list(v.flat)
    if isinstance(v, sp.MatrixBase):
        return list(v)
    return [v]


def _value_part(item, num: dict, ex: dict, digits: int) -> str:
    """``= exact \\approx decimal`` for a scalar row, ``= pmatrix`` for a small matrix of short exact entries."""
    if item.name not in num:
        return ""
    e = ex.get(item.name)
    if item.shape in ((), (1, 1)):
        v = _flat(num[item.name])[0]
        e1 = _flat(e)[0] if e is not None else None
        dec = number(handout_decimal(e1 if isinstance(e1, sp.Rational) else v, digits))
        short = _short_exact_tex(e1)
        if short is not None and getattr(e1, "is_Integer", False):
            return " = " + short
        if short is not None:
            return r" = %s \approx %s" % (short, dec)
        return r" \approx %s" % dec
    m, n = item.shape
    if m > 4 or n > 4:
        return ""
    exact = [_short_exact_tex(x, 24) for x in _flat(e)] if e is not None else [None] * (m * n)
    if all(x is not None for x in exact):
        entries, rel = exact, "="
    else:  # decimals, integers kept exact: A ≈ (1 0; 0.330238 0.669762)
        nums = _flat(num[item.name])
        ints = [e is not None and getattr(x, "is_Integer", False) for x in (_flat(e) if e is not None else nums)]
        entries = [str(x) if ok else number(handout_decimal(v, digits))
                   for x, v, ok in zip(_flat(e) if e is not None else nums, nums, ints)]
        rel = r"\approx"
    rows = [" & ".join(entries[i * n:(i + 1) * n]) for i in range(m)]
    return r" %s \begin{pmatrix}%s\end{pmatrix}" % (rel, r" \\ ".join(rows))


# ---------------------------------------------------------------------------
# ledgers: align* of the steps, boxed results
# ---------------------------------------------------------------------------


def _equation(st, value: str = "") -> tuple[str, str]:
    rhs = st.formula + (f" = {st.simplified}" if st.simplified else "") + value
    return st.name, rhs


LINE_WIDTH = 72  # characters of typeset math that fit a line of a page with 2 cm margins (about 17 cm)


def visible_width(tex: str) -> int:
    """A rough count of the characters ``tex`` shows when typeset: a fraction as wide as its wider part,
    a command that draws one symbol as one character, a binary operator with its spaces as three."""
    s = re.sub(r"\\(left|right|[bB]igg?[lr]?)(?![A-Za-z])", "", tex)
    s = re.sub(r"\\begin\{([pbv]?matrix)\}((?:(?!\\begin).)*?)\\end\{\1\}",  # a matrix: its widest row
               lambda m: "(%s)" % max(m.group(2).split("\\\\"), key=len).replace("&", "  "), s)
    for _ in range(3):  # nested fractions, innermost first
        s = re.sub(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", lambda m: max(m.group(1), m.group(2), key=len), s)
    s = re.sub(r"\\(mathbf|mathrm|mathcal|mathbb|operatorname|boxed|text|hat|tilde|widehat|widetilde|bar|"
               r"begin\{[a-z*]+\}|end\{[a-z*]+\})", "", s)
    s = re.sub(r"\\[A-Za-z]+", "x", s)
    operators = len(re.findall(r" [-+=] ", s))  # binary operators are set with space on both sides
    s = re.sub(r"[{}^_\s&]|\\\\", "", s)
    return len(s) + 2 * operators


def break_lines(tex: str, width: int = LINE_WIDTH, first: int = 0) -> list[str]:
    """``tex`` cut at top-level ``+``, ``-``, ``=`` and ``\\approx`` (outside braces, parentheses and
    environments) into pieces that fit ``width`` visible characters; ``first`` is taken by what comes before
    the first piece (the left-hand side). Each later piece starts with its operator."""
    cuts, depth, i = [], 0, 0
    while i < len(tex):
        if tex.startswith("\\begin{", i):
            depth += 1
        elif tex.startswith("\\end{", i):
            depth -= 1
        ch = tex[i]
        if ch in "({[" and not tex.startswith("\\{", i - 1):
            depth += 1
        elif ch in ")}]" and not tex.startswith("\\}", i - 1):
            depth -= 1
        elif depth == 0 and i > 0 and (tex.startswith(" + ", i - 1) or tex.startswith(" - ", i - 1)
                                       or tex.startswith(" = ", i - 1) or tex.startswith(" \\approx ", i - 1)):
            cuts.append(i)
        i += 1
    pieces, start, budget = [], 0, width - first
    last = 0
    for c in cuts + [len(tex)]:
        if visible_width(tex[start:c]) > budget and last > start:
            pieces.append(tex[start:last].rstrip())
            start, budget = last, width - 4
        last = c
    pieces.append(tex[start:].rstrip())
    return [p for p in pieces if p]


def _aligned_rhs(lhs: str, rhs: str, rel: str = "=") -> str:
    """``lhs &= rhs`` for an ``align*``, the right-hand side continued on indented lines when it is long."""
    parts = break_lines(rhs, first=visible_width(lhs) + 2)
    # a piece that break_lines could not cut to its line (one matrix, one long product) is scaled by TeX when
    # it is wider than the line; the width estimate is rough, so only a clear excess asks for it
    rooms = [LINE_WIDTH - visible_width(lhs) - 2] + [LINE_WIDTH - 4] * (len(parts) - 1)
    parts = [fit_width(p, r"0.8\linewidth") if visible_width(p) > room + 8 else p for p, room in zip(parts, rooms)]
    return f"{lhs} &{rel} " + " \\\\\n  &\\quad ".join(parts)


def _boxed(lhs: str, rhs: str) -> str:
    parts = break_lines(rhs, first=visible_width(lhs) + 4)
    if len(parts) == 1:
        return r"\boxed{%s = %s}" % (lhs, rhs)
    return r"\boxed{\begin{aligned}%s &= %s\end{aligned}}" % (lhs, " \\\\ &\\quad ".join(parts))


def _ledger_entries(ledger, n, num, ex, digits) -> list[dict]:
    """The ledger's equations as records: name, typeset left-hand side, formula ("" for a leaf), value part
    (``= ...`` or ``\\approx ...``, or "") and whether the row is a parameter's gradient (boxed). Leaves with a
    short exact value come first, then the rows."""
    out = []
    for it in ledger.leaves:
        if it.value is None:
            continue
        part = _value_part(it, num, ex, digits) if it.name in num else ""
        if part.startswith(" = "):
            out.append(dict(name=it.name, lhs=n.name(it.name), formula="", value=part.strip(), boxed=False))
    for it in ledger.rows:
        st = step(ledger, it.name, n)
        formula = st.formula + (f" = {st.simplified}" if st.simplified else "")
        value = _value_part(it, num, ex, digits).strip()
        out.append(dict(name=it.name, lhs=st.name, formula=formula, value=value, boxed=st.boxed,
                        numbers=_substituted(it, ledger, n, num, ex, digits) if value else ""))
    return out


def _substituted(item, ledger, n, num: dict, ex: dict, digits: int) -> str:
    """A scalar step with the values of its names put in (handcalcs' middle line: ``z_0 = w_x x_0 =
    0.5 \\cdot 1``), rounded as the ledger's values are; "" for a step that is not a formula over named
    numbers, or over more than six of them."""
    if not isinstance(item.node, ops.Scalar):
        return ""
    expr = item.node.expr  # with the inputs fixed at zero dropped, as the step's simplified form (views.step)
    expr = expr.xreplace({ledger[s.name].symbol: 0 for s in expr.free_symbols if s.name in ledger
                          and ledger[s.name].kind == "input" and ledger[s.name].value == 0})
    if expr.is_number:
        return ""
    names = sorted({s.name for s in expr.free_symbols}, key=str)
    if not names or len(names) > 6 or any(nm not in num or nm not in ledger or ledger[nm].shape != () for nm in names):
        return ""
    text = {}
    for nm in names:
        e = _flat(ex[nm])[0] if nm in ex else None
        v = e if getattr(e, "is_Integer", False) else number(handout_decimal(
            e if isinstance(e, sp.Rational) else _flat(num[nm])[0], digits))
        t = str(v)
        text[ledger[nm].symbol] = r"\left(%s\right)" % t if t.startswith("-") else t
    return n.expr(expr, text, numbers=True)


def _equations(entries, *, boxed_inline: bool, against: dict | None = None):
    """(lhs, rhs, relation) triples of the entries and the boxed gradients to repeat apart. ``against``
    (name → (formula, value) of a ledger typeset before): only what differs from it, a row with the same
    formula by its value alone."""
    leaves, rows, boxed = [], [], []
    for e in entries:
        lhs = r"\boxed{%s}" % e["lhs"] if e["boxed"] and boxed_inline else e["lhs"]
        before = against.get(e["name"]) if against is not None else None
        if before is not None and before == (e["formula"], e["value"]):
            continue
        rel, _, value = e["value"].partition(" ")
        if not e["formula"] or (before is not None and before[0] == e["formula"]):
            if e["value"]:
                (leaves if not e["formula"] else rows).append((lhs, value, rel))
            continue
        numbers = f" = {e['numbers']}" if e.get("numbers") else ""
        rows.append((lhs, e["formula"] + numbers + (" " + e["value"] if e["value"] else ""), "="))
        if e["boxed"] and not boxed_inline:
            boxed.append(_boxed(e["lhs"], e["formula"].split(" = ")[0]))
    return (_same_values(leaves) if boxed_inline else leaves) + rows, boxed


HALF_WIDTH = 48  # visible characters of an equation that fits one of two columns


def _align(eqs, *, columns: int = 1) -> str:
    """``align*`` blocks of (lhs, rhs, relation) equations. With ``columns=2``, each run of four or more short
    equations is set in two columns (the first half of the run down the left, the rest down the right);
    the other equations take a line each, long ones broken over lines."""
    if not eqs:
        return ""
    runs: list[tuple[bool, list]] = []  # (two columns, equations)
    widest = (0, 0)  # of the current run of short equations: its widest left and right sides share a column
    for eq in eqs:
        lhs, rhs, rel = eq
        width = (visible_width(lhs), visible_width(f"{rel} {rhs}"))
        grown = (max(widest[0], width[0]), max(widest[1], width[1]))
        narrow = columns == 2 and sum(width) <= HALF_WIDTH
        if narrow and runs and runs[-1][0] and sum(grown) <= HALF_WIDTH:
            runs[-1][1].append(eq)
            widest = grown
        elif not narrow and runs and not runs[-1][0]:
            runs[-1][1].append(eq)
        else:
            runs.append((narrow, [eq]))
            widest = width if narrow else (0, 0)
    merged: list[tuple[bool, list]] = []  # a short run is not worth its own display: set it a line each
    for narrow, run in runs:
        narrow = narrow and len(run) >= 4
        if merged and not narrow and not merged[-1][0]:
            merged[-1][1].extend(run)
        else:
            merged.append((narrow, list(run)))
    blocks = []
    for narrow, run in merged:
        if narrow:
            half = (len(run) + 1) // 2
            left, right = run[:half], run[half:]
            lines = []
            for k, (lhs, rhs, rel) in enumerate(left):
                line = f"{lhs} &{rel} {rhs}"
                if k < len(right):
                    line += " & %s &%s %s" % (right[k][0], right[k][2], right[k][1])
                lines.append(line)
        else:
            lines = [_aligned_rhs(lhs, rhs, rel) for lhs, rhs, rel in run]
        blocks.append("\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}")
    return "\n".join(blocks)


def _same_values(eqs):
    """Leaves given the same value share one equation: ``W_Q = W_K = W_V = I``."""
    out: list = []
    for lhs, rhs, rel in eqs:
        for k, (l2, r2, rel2) in enumerate(out):
            if r2 == rhs and rel2 == rel:
                out[k] = (f"{l2} = {lhs}", r2, rel2)
                break
        else:
            out.append((lhs, rhs, rel))
    return out


def ledger_latex(ledger, *, digits: int = 6, values: bool = True, service=None, compact: bool = False,
                 against: dict | None = None) -> str:
    """A ledger's rows as an ``align*`` environment, then its parameter gradients boxed (``gather*``).

    Leaves with a short exact value are listed first (``h_{-1} = 0``);
    symbolic leaves are omitted. Scalar rows show their exact closed form and
    decimal where short (``w = \\frac{1}{1 + e^{\\frac{1}{\\sqrt{2}}}} \\approx 0.330238``).
    Values come from ``service`` (the derivation's :class:`~symseq.values.Values`; a new one when None).

    ``compact`` (``symseq latex`` without ``--full``): a gradient of a parameter has its name boxed where its
    step is, not repeated after the steps; leaves of one value share an equation; runs of short steps are set
    in two columns. ``against`` (:func:`ledger_record` of a ledger typeset before): only the steps and values
    that differ from it.
    """
    return _ledger_tex(ledger, _entries_of(ledger, digits, values, service), compact=compact, against=against)


def _entries_of(ledger, digits, values, service):
    num, ex = ledger_values(ledger, values=service) if values else ({}, {})
    return _ledger_entries(ledger, _notation(ledger), num, ex, digits)


def _ledger_tex(ledger, entries, *, compact: bool, against: dict | None = None, head: str | None = None) -> str:
    eqs, boxed = _equations(entries, boxed_inline=compact, against=against)
    out = [head if head is not None else (r"\paragraph{%s}" % latex_label(ledger.title) if ledger.title else "")]
    if eqs:
        out.append(_align(eqs, columns=2 if compact else 1))
    if boxed:
        out.append("\\begin{gather*}\n" + " \\\\\n".join(boxed) + "\n\\end{gather*}")
    return "\n".join(o for o in out if o) + "\n"


def ledger_record(entries) -> dict:
    """name → (formula, value) of a ledger's typeset entries, to compare a later ledger with."""
    return {e["name"]: (e["formula"], e["value"]) for e in entries}


def _caption(label: str, extra: str = "") -> str:
    return r"\textbf{%s}%s\par" % (latex_label(label), f" ({tex_text(extra)})" if extra else "")


def _kept_together(caption: str, tabular: list[str]) -> str:
    """A caption line and its table in one unbreakable block (a table never starts on the next page)."""
    return "\n".join([r"\par\medskip\noindent\begin{minipage}{\linewidth}", caption, r"\smallskip\centering",
                      *tabular, r"\end{minipage}\par\medskip"]) + "\n"


def paired_latex(spec) -> str:
    """Forward steps beside backward steps, row for row in the recorded order (Week 06, Table 3)."""
    view = paired_view(spec, _notation)

    def cell(st):
        if st is None:
            return ""
        lhs, rhs = _equation(st)
        return f"${lhs} = {rhs}$" if rhs else f"${lhs}$"

    rows = [f"{cell(f)} & {cell(b)} \\\\" for f, b in view.pairs]
    return _kept_together(_caption(view.label), [
        r"\begin{tabular}{@{}ll@{}}",
        r"\toprule",
        r"Forward pass & Backward pass \\",
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}",
    ])


def _booktabs(label: str, note: str, cols: list, rows: list, cells: list) -> str:
    head = " & ".join([""] + [latex_label(c) for c in cols]) + r" \\"
    body = [" & ".join([latex_label(r)] + row) + r" \\" for r, row in zip(rows, cells)]
    return _kept_together(_caption(label, note), [
        r"\begin{tabular}{@{}l%s@{}}" % ("r" * len(cols)),
        r"\toprule",
        head,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ])


def table_latex(spec) -> str:
    """A :class:`~symseq.authoring.TableSpec` as a booktabs table, rounded as the handout rounds it."""
    v = table_view(spec)
    cells = [["$%s$" % (_expr(c.expr) if c.expr is not None else number(c.text)) for c in row] for row in v.cells]
    formulas = all(c.expr is not None for row in v.cells for c in row)
    return _booktabs(v.label, "" if formulas else v.rounding, v.cols, v.rows, cells)


def heatmap_latex(spec) -> str:
    """A :class:`~symseq.authoring.HeatmapSpec` as a booktabs table; masked entries are ``\\times``."""
    v = heatmap_view(spec)
    cells = [[r"$\times$" if c.masked else "$%s$" % number(c.text) for c in row] for row in v.cells]
    caption, _ = heatmap_caption(v)
    note = rounding_label(v.digits, False) + ("; × marks a masked entry" if v.masked.any() else "")
    return _booktabs(caption, note, v.cols, v.rows, cells)


def matrix_table(value, *, label: str = "", rows: list | None = None, cols: list | None = None,
                 digits: int | None = 3) -> str:
    """A booktabs table of a matrix node (or exact matrix), for pasting into a handout.

    Args:
        value: an m×n matrix node over a ledger (rows are positions), or an
            exact SymPy matrix.
        label: the caption line ("Table 17").
        rows, cols: labels (``"0: a"``, ``"Head 1 weight"``); default indices.
        digits: significant digits (3 as Week 06's tables), or None for six.

    Raises:
        ClaimError: when the labels do not match the shape.
    """
    from ..authoring import TableSpec

    return table_latex(TableSpec(label, value, None, rows, cols, digits))


# ---------------------------------------------------------------------------
# claims
# ---------------------------------------------------------------------------

_STATUS = {"ok": r"$\checkmark$", "mismatch": r"\textbf{mismatch}", "error": r"\textbf{error}",
           "skipped": r"\textit{skipped}"}


def _entries_tex(entries, shape) -> str:
    if shape and len(shape) == 2 and shape[0] > 1:
        m, n = shape
        rows = [" & ".join(entries[i * n:(i + 1) * n]) for i in range(m)]
        return r"\begin{pmatrix}%s\end{pmatrix}" % r" \\ ".join(rows)
    if len(entries) > 1:  # a vector may break across lines in a narrow column (not inside \left ... \right)
        return "(%s)" % r", \allowbreak ".join(entries)
    return entries[0] if entries else ""


_MATRIX_ENVS = ("matrix", "pmatrix", "bmatrix", "vmatrix", "Bmatrix", "array")


def _source_matrix(text: str) -> str | None:
    """A matrix as a LaTeX handout writes it (``\\begin{pmatrix}1&0\\\\w&1-w\\end{pmatrix}``), checked and
    made ASCII: only the commands of :data:`~symseq.present.tex.SOURCE_COMMANDS`, one matrix environment,
    balanced braces; else None."""
    from .tex import SOURCE_COMMANDS

    envs = re.findall(r"\\(?:begin|end)\{([A-Za-z]+)\}", text)
    if not envs or any(e not in _MATRIX_ENVS for e in envs) or any(ch in text for ch in "$%#"):
        return None
    text = re.sub(r"(\\begin\{array\})\s*\{([lcr|]+)\}", r"\1[\2]", text)  # the column spec is no group
    rest = re.sub(r"\\(?:begin|end)\{[A-Za-z]+\}(?:\[[lcr|]+\])?", "", text)
    words = [w for w in re.findall(r"\\([A-Za-z]+|.)", rest) if w.isalpha()]  # \\\\ ends a row: no word
    if any(w not in SOURCE_COMMANDS for w in words) or not balanced_braces(rest):
        return None
    pieces = re.split(r"(\\(?:begin|end)\{[A-Za-z]+\}(?:\[[lcr|]+\])?|\\[A-Za-z]+|\\\\|\\.|&)", text)
    out = "".join(p if p.startswith("\\") or p == "&" else tex_math(p, words=True) for p in pieces if p)
    return re.sub(r"(\\begin\{array\})\[([lcr|]+)\]", r"\1{\2}", out)


def _breakable(math: str) -> str:
    """Math that may break after its top-level commas (a long printed vector in a narrow column)."""
    out, depth = [], 0
    for ch in math:
        depth += ch in "{(["
        depth -= ch in "})]"
        out.append(ch + r"\allowbreak " if ch == "," and depth <= 1 else ch)
    return "".join(out)


def printed_latex(claim) -> str:
    """The claim's printed text as the handout printed it, typeset (never re-read and rewritten by SymPy).

    Numbers and Unicode formulas are set as math (``1/(1+e^{1/√2})`` → ``$1/(1+e^{1/\\sqrt{2}})$``),
    a formula from a LaTeX source keeps its commands (those of
    :data:`~symseq.present.tex.SOURCE_COMMANDS` only) and its words as text, a printed matrix environment
    stays a matrix; anything else shows verbatim in typewriter type. A property's statement is its quantity
    (:func:`_what_latex`), so it prints nothing here.
    """
    if claim.kind == "property":
        return ""
    text = claim.printed.strip()
    matrix = _source_matrix(text) if "\\begin" in text else None
    if matrix is not None:
        return fit_width(matrix, display=False)
    parts = tex_source_parts(text)
    if parts is None:
        return texttt(text)
    return "".join(f"${_breakable(t) if len(t) > 20 else t}$" if kind == "math" else latex_label(t)
                   for kind, t in parts)


def value_latex(claim) -> str:
    """The checked value: a short exact closed form and its decimal, or the decimals of a small matrix."""
    r = claim.check()
    if claim.kind == "property" or not r.values:
        return tex_text(r.message) if r.message and claim.kind == "property" else ""
    math, wide = value_math(claim)
    if wide:
        return fit_width(math, display=False)
    return "$%s$" % math + (" matrix" if claim.kind == "value" and len(r.values) > 16 else "")


def value_math(claim) -> tuple[str, bool]:
    """The checked value of a value or shape claim as math, and whether it is a matrix (scaled to its column in a
    table); ``("", False)`` for a property or a claim with no value."""
    r = claim.check()
    if claim.kind == "shape":
        return (r"\times".join(r.values[0].split("×")) if r.values else ""), False
    if claim.kind == "property" or not r.values:
        return "", False
    sig = 10 if len(r.values) == 1 else 6  # vectors and matrices must fit their column
    with mpmath.workdps(50):
        vals = [number(handout_decimal(mpmath.mpf(v) if v not in ("inf", "-inf") else
                                       (mpmath.inf if v == "inf" else mpmath.ninf), sig)) for v in r.values]
    if len(vals) == 1:
        e = r.exact[0, 0] if isinstance(r.exact, sp.MatrixBase) else r.exact
        short = _short_exact_tex(e, 60)
        if short is not None and not getattr(e, "is_Integer", False) and e not in (sp.oo, -sp.oo):
            return r"%s \approx %s" % (short, vals[0]), False
        return vals[0], False
    if len(vals) > 16:
        return r"\times".join(str(s) for s in r.shape), False
    shape = r.shape if r.shape else ()
    return _entries_tex(vals, shape), len(shape) == 2 and shape[0] > 1


def printed_math(claim) -> str:
    """The claim's printed text as math for MathJax (Jupyter): a printed matrix environment as a matrix, a formula
    from a LaTeX source with its commands (:data:`~symseq.present.tex.SOURCE_COMMANDS`) and its words in
    ``\\text``, anything else as text (:func:`~symseq.present.tex.mathjax_text`); never the source escaped."""
    if claim.kind == "property":
        return ""
    text = claim.printed.strip()
    matrix = _source_matrix(text) if "\\begin" in text else None
    if matrix is not None:
        return matrix
    parts = tex_source_parts(text)
    if parts is None:
        return mathjax_text(text)
    return "".join(t if kind == "math" else mathjax_label(t) for kind, t in parts)


def _what_latex(c) -> str:
    """What a claim states: a property's statement as the handout printed it (a formula from a LaTeX source
    is typeset), else the quantity's name."""
    if c.kind == "property" and "\\" in c.printed:
        return source_formula_text(c.printed)
    return latex_label(c.printed if c.kind == "property" else c.what)


_PLAIN_NOTE = re.compile(r"[^*_{}\[\]^\\]*")


def proof_note(claim, result) -> str:
    """What a proved property's result says, as text: "2 differences simplify to 0", "largest difference
    0"; a detail that holds SymPy's plain text (``2*H_{00}``) is left out when the claim holds and shown
    verbatim in typewriter type when it fails (a failure is never hidden)."""
    msg = (result.message or "").strip()
    if not msg:
        return ""
    if _PLAIN_NOTE.fullmatch(msg):
        return latex_label(msg)
    return "" if result.status == "ok" else texttt(msg)


def _exact_latex(c, r) -> str:
    if c.kind == "property":
        return proof_note(c, r)
    return value_latex(c)


def _entry_key(c):
    loc = c.location
    if isinstance(loc, str) or not (loc.row or loc.column):
        return None
    return (loc.table, c.what)


def _where(c, section_title: str) -> str:
    loc = c.location
    if isinstance(loc, str):
        return "" if loc == section_title else loc
    if loc.row or loc.column:
        return ""
    return loc.at if loc.section == section_title else str(loc)


def _row(cells) -> str:
    """A table row; one that starts with ``[`` is protected, else the ``\\\\`` before it reads it as a length."""
    text = " & ".join(cells)
    return ("{}" + text if text.startswith("[") else text) + r" \\"


def compact_claims_latex(claims, *, section_title: str = "") -> str:
    """The claims as a compact longtable: quantity, printed (as the handout printed it), exact form, status.

    The entries of a printed table checked entry by entry are one row ("Table 11, key: 21 entries, three
    significant digits"), with any entry that fails listed after it; a claim's place within the section
    heads the rows it covers.
    """
    if not claims:
        return ""
    rows, where = [], None
    i = 0
    while i < len(claims):
        c = claims[i]
        key = _entry_key(c)
        j = i + 1
        while key is not None and j < len(claims) and _entry_key(claims[j]) == key:
            j += 1
        w = _where(c, section_title)
        place = r"\textit{%s:} " % latex_label(w) if w and w != where else ""  # a place heads its first row
        where = w or where
        if key is not None and j - i > 1:
            group = claims[i:j]
            results = [g.check() for g in group]
            held = sum(r.status == "ok" for r in results)
            table, what = key
            label = latex_label(f"{table}, {what}" if table and what else (table or what))
            digits = c.digits
            how = rounding_label(digits, True) if digits is not None else "as printed"
            status = _STATUS["ok"] if held == len(group) else r"\textbf{%d of %d hold}" % (held, len(group))
            rows.append(_row([place + label, f"{len(group)} entries", tex_text(how), status]))
            for g, r in zip(group, results):
                if r.status != "ok":
                    rows.append(_row([r"\quad " + latex_label(f"{g.location.row}, {g.location.column}"),
                                      printed_latex(g), _exact_latex(g, r), _STATUS[r.status]]))
        else:
            for g in claims[i:j]:
                r = g.check()
                rows.append(_row([place + _what_latex(g), printed_latex(g), _exact_latex(g, r), _STATUS[r.status]]))
                place = ""
        i = j
    return "\n".join([
        r"\begingroup\footnotesize",
        r"\begin{longtable}{@{}>{\raggedright}p{0.46\linewidth}>{\raggedright}p{0.17\linewidth}"
        r">{\raggedright\arraybackslash}p{0.25\linewidth}l@{}}",
        r"\toprule",
        r"Quantity & Printed & Exact & \\",
        r"\midrule",
        r"\endhead",
        *rows,
        r"\bottomrule",
        r"\end{longtable}",
        r"\endgroup",
    ]) + "\n"


def claims_latex(claims, *, section_title: str = "") -> str:
    """The claims as a longtable, one row per claim: where, quantity, printed, value, status (``--full``)."""
    if not claims:
        return ""
    rows = []
    for c in claims:
        r = c.check()
        where = c.location.at if section_title == c.location.section else str(c.location)
        what = _what_latex(c)
        rows.append(_row([latex_label(where), what, printed_latex(c), _exact_latex(c, r), _STATUS[r.status]]))
    return "\n".join([
        r"\begin{longtable}{@{}>{\raggedright}p{0.17\linewidth}>{\raggedright}p{0.25\linewidth}"
        r">{\raggedright}p{0.2\linewidth}>{\raggedright\arraybackslash}p{0.25\linewidth}l@{}}",
        r"\toprule",
        r"Where & Quantity & Printed & Value & \\",
        r"\midrule",
        r"\endhead",
        *rows,
        r"\bottomrule",
        r"\end{longtable}",
    ]) + "\n"


# ---------------------------------------------------------------------------
# sections and derivations
# ---------------------------------------------------------------------------


def display_latex(spec) -> str:
    """One recorded display (table, heatmap or paired rows) as LaTeX."""
    from ..authoring import HeatmapSpec, PairedRowsSpec, TableSpec

    if isinstance(spec, PairedRowsSpec):
        return paired_latex(spec)
    if isinstance(spec, TableSpec):
        return table_latex(spec)
    if isinstance(spec, HeatmapSpec):
        return heatmap_latex(spec)
    raise TypeError(f"unknown display {type(spec).__name__}")


def _ledger_once(L, s, typeset: list, *, digits: int, full: bool) -> str:
    """A section's ledger, typeset in full unless a ledger typeset before shares most of its steps
    (``typeset``: (title, section, record) of each, in order). Then it is referred to by that ledger's
    title and section, with only the steps and values that differ."""
    if full:
        return ledger_latex(L, digits=digits, service=s.values)
    entries = _entries_of(L, digits, True, s.values)
    record = ledger_record(entries)
    rows = [e for e in entries if e["formula"]]
    best, shared = None, 0
    for title, section, before in typeset:
        n_same = sum(before.get(e["name"], (None,))[0] == e["formula"] for e in rows)
        if n_same > shared:
            best, shared = (title, section, before), n_same
    typeset.append((L.title, s.title, record))
    if best is None or shared < 3 or 2 * shared < len(rows):
        return _ledger_tex(L, entries, compact=True)
    title, section, before = best
    name = r"\emph{%s}" % latex_label(title) if title else "the ledger"
    where = "" if section == s.title else r" (\emph{%s})" % latex_label(section)
    head = r"\paragraph{%s}" % latex_label(L.title) if L.title else r"\noindent"
    changed = {k for k, v in record.items() if before.get(k) != v}
    if not changed and set(before) <= set(record):
        return head + r" The steps and values of %s%s above.\par" % (name, where) + "\n"
    formulas = any(before.get(e["name"], (None,))[0] != e["formula"] for e in rows)
    what = ("the steps and values that differ" if formulas else "the values that differ")
    return _ledger_tex(L, entries, compact=True, against=before,
                       head=head + r" As %s%s above; %s:" % (name, where, what))


def display_failure(s, spec, exc) -> ClaimError:
    """The error of a display of section ``s`` that cannot be rendered: derivation, section, display and why."""
    d = getattr(s, "derivation", None)
    where = f"{d.name} · {s.title}" if d is not None else s.title
    return ClaimError(f"{where} · {spec.label}: the display cannot be rendered: {exc}")


def raise_failures(failures: list) -> None:
    """Raise one :class:`~symseq.errors.ClaimError` naming every display of ``failures`` (none: nothing)."""
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise ClaimError(f"{len(failures)} displays cannot be rendered:\n" + "\n".join(f"  {f}" for f in failures))


def section_latex(s, *, digits: int = 6, claims: bool = True, full: bool = False, typeset: list | None = None,
                  failures: list | None = None) -> str:
    """A section: heading, notes, displays in recorded order, ledgers, claims.

    A display that cannot be rendered is never typeset: it raises :class:`~symseq.errors.ClaimError` naming the
    derivation, section and display, or, when ``failures`` is a list, is left out and its error appended there
    (:func:`derivation_latex` raises them all at the end).

    ``typeset`` lists the ledgers typeset before (see :func:`_ledger_once`): a ledger that shares most of its
    steps with one of them is referred to by its title and section, with what differs (unless ``full``). Claims are a
    compact table (:func:`compact_claims_latex`), or one row each with ``full`` (:func:`claims_latex`).
    """
    out = [r"\subsection*{%s}" % latex_label(s.title)]
    if s.error:
        out.append(r"\noindent\textbf{This section did not build:} %s\par" % texttt(s.error.splitlines()[0]))
    if s.skipped:
        out.append(r"\noindent\textit{Skipped:} %s\par" % tex_text(s.skipped))
    for note in s.notes:
        out.append(r"\paragraph{Note.} %s" % latex_label(note))
    for spec in s.displays:
        try:
            out.append(display_latex(spec))
        except SymseqError as exc:  # never typeset: the document is refused, naming every display that failed
            failure = display_failure(s, spec, exc)
            if failures is None:
                raise failure from exc
            failures.append(failure)
    typeset = [] if typeset is None else typeset
    for L in s.ledgers:
        out.append(_ledger_once(L, s, typeset, digits=digits, full=full))
    if claims and s.claims:
        out.append((claims_latex if full else compact_claims_latex)(s.claims, section_title=s.title))
    return "\n".join(out) + "\n"


def derivation_latex(d, sections=None, *, standalone: bool = False, digits: int = 6, claims: bool = True,
                     full: bool = False) -> str:
    """A derivation as LaTeX: a fragment (``\\section*`` and below), or a complete document with ``standalone``.

    Raises:
        ClaimError: when a display cannot be rendered (naming each such display); nothing is returned then.

    Short by default: a ledger that several sections use is typeset once and referred to by name after,
    and the claims are compact tables; ``full`` typesets every section's ledgers and a row per claim.
    The fragment needs the packages of :data:`PACKAGES`
    (and ``\\allowdisplaybreaks`` for long ledgers). The output is ASCII and
    the same bytes on every run.
    """
    sections = d.sections if sections is None else sections
    head = [
        f"% symseq latex {d.name} ({d.source})",
        "% needs \\usepackage{" + ",".join(PACKAGES) + "}",
        r"\section*{%s}" % tex_text(d.title),
        r"\noindent Source: \texttt{%s}.\par" % tex_text(d.source),
        "",
    ]
    typeset: list = []
    failures: list = []
    body = "\n".join(head) + "\n".join(section_latex(s, digits=digits, claims=claims, full=full, typeset=typeset,
                                                     failures=failures) for s in sections)
    raise_failures(failures)
    if standalone:
        body = standalone_document(body)
    return body


def standalone_document(body: str) -> str:
    """Wrap a fragment in a document that compiles with pdflatex (packages in :data:`PREAMBLE`)."""
    return PREAMBLE + "\\begin{document}\n" + body.rstrip("\n") + "\n\\end{document}\n"


# ---------------------------------------------------------------------------
# Jupyter (MathJax): math only
# ---------------------------------------------------------------------------


def _mj_ledger_lines(ledger, digits: int = 6, service=None) -> list[str]:
    n = _notation(ledger)
    num, ex = ledger_values(ledger, values=service)
    lines = []
    for it in ledger.rows:
        st = step(ledger, it.name, n)
        lhs, rhs = _equation(st, _value_part(it, num, ex, digits))
        lines.append(r"%s &= %s" % (r"\boxed{%s}" % lhs if st.boxed else lhs, rhs))
    return lines


def _mj_claim_row(c) -> str:
    r = c.check()
    what = c.printed if c.kind == "property" else (c.what or str(c.location))
    printed = printed_math(c)
    value = value_math(c)[0] if c.kind != "property" else _mj_note(r)
    mark = r"\checkmark" if r.status == "ok" else r"\text{%s}" % r.status
    parts = tex_source_parts(what) if c.kind == "property" and "\\" in what else None
    what = "".join(t if k == "math" else mathjax_label(t) for k, t in parts) if parts else mathjax_label(what)
    return " & ".join([what, printed, value, mark])


def _mj_note(result) -> str:
    """What a proved property's result says, as :func:`proof_note` shows it, in MathJax: names as mathematics; a
    detail in SymPy's plain text only when the claim fails, in ``\\mathtt``."""
    msg = (result.message or "").strip()
    if not msg:
        return ""
    if result.status != "ok" and not _PLAIN_NOTE.fullmatch(msg):
        return r"\mathtt{%s}" % math_mode_chars(msg)
    return mathjax_label(msg)


def _mj_display(spec) -> str:
    """A recorded display as a MathJax array: a table or heatmap with its labels, or paired rows."""
    from ..authoring import HeatmapSpec, PairedRowsSpec

    if isinstance(spec, PairedRowsSpec):
        view = paired_view(spec, _notation)
        cell = lambda st: "" if st is None else "%s = %s" % _equation(st)  # noqa: E731
        rows = [r"\text{Forward pass} & \text{Backward pass} \\ \hline"]
        rows += [f"{cell(f)} & {cell(b)} \\\\" for f, b in view.pairs]
        return "$$%s$$\n$$\\begin{array}{ll}\n%s\n\\end{array}$$" % (mathjax_label(view.label), "\n".join(rows))
    if isinstance(spec, HeatmapSpec):
        v = heatmap_view(spec)
        cells = [[r"\times" if c.masked else number(c.text) for c in row] for row in v.cells]
        caption = heatmap_caption(v)[0]
    else:
        v = table_view(spec)
        cells = [[_expr(c.expr) if c.expr is not None else number(c.text) for c in row] for row in v.cells]
        caption = v.label
    head = " & ".join([""] + [mathjax_label(c) for c in v.cols]) + r" \\ \hline"
    body = [" & ".join([mathjax_label(r)] + row) + r" \\" for r, row in zip(v.rows, cells)]
    return "$$%s$$\n$$\\begin{array}{l|%s}\n%s\n\\end{array}$$" % (mathjax_label(caption), "r" * len(v.cols),
                                                                  "\n".join([head] + body))


def _mj_title(text: str) -> str:
    """A heading in bold text runs, with what text cannot hold set as math between them (:func:`mathjax_text`)."""
    return mathjax_label(text, command="textbf")


def repr_latex(obj, service=None) -> str:
    """MathJax LaTeX for Jupyter's ``_repr_latex_``: a ledger, claim, section or derivation.

    Only math is used (``aligned``, ``array``, ``\\boxed``, ``\\text``), since
    notebooks typeset with MathJax rather than LaTeX.
    """
    from ..ledger import Ledger
    from ..verify.claims import Claim
    from ..authoring import Derivation, Section

    if isinstance(obj, Ledger):
        lines = ([mathjax_label(obj.title)] if obj.title else []) + _mj_ledger_lines(obj, service=service)
        if obj.title:
            lines[0] = "&" + lines[0]
        return "$$\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}$$"
    if isinstance(obj, Claim):
        row = _mj_claim_row(obj).split(" & ")
        where = mathjax_label(str(obj.location))
        return "$$" + r" \quad ".join([where] + [p for p in row if p]) + "$$"
    if isinstance(obj, Section):
        parts = ["$$%s$$" % _mj_title(obj.title)]
        for spec in obj.displays:
            try:
                parts.append(_mj_display(spec))
            except SymseqError as exc:  # never typeset (:func:`display_failure`)
                raise display_failure(obj, spec, exc) from exc
        parts += [repr_latex(L, obj.values) for L in obj.ledgers]
        if obj.claims:
            rows = [_mj_claim_row(c) for c in obj.claims]
            parts.append("$$\\begin{array}{llll}\n" + " \\\\\n".join(rows) + "\n\\end{array}$$")
        return "\n".join(parts)
    if isinstance(obj, Derivation):
        head = "$$%s$$" % _mj_title(obj.title)
        return "\n".join([head] + [repr_latex(s) for s in obj.sections])
    raise TypeError(f"no LaTeX display for {type(obj).__name__}")
