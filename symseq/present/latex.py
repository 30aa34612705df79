"""LaTeX for handouts: derivation steps, forward/backward tables, boxed results, booktabs tables.

One derivation object, one deterministic document (the same bytes on every
run, in any process):

* each ledger as an ``align*`` of its rows, ``name = formula`` in handout
  notation (``\\odot`` for the Hadamard product, ``^{\\top}`` for the
  transpose, ``\\mathbf`` matrices), exact closed forms and decimals where
  short; gradients of parameters repeated in ``\\boxed`` form after the steps
  (as Week 06, handout 004, boxes ∂ℒ/∂w_x, ∂ℒ/∂w_h, ∂ℒ/∂w_o);
* a section's displays in recorded order: paired forward/backward rows as a
  two-column ``tabular`` (Week 06, Table 3), matrices as booktabs tables
  rounded as the handout rounds them (three significant digits print 0.150
  as 0.15), heatmaps as tables with masked entries marked ``\\times``;
* the claims as a ``longtable`` with printed value, value and status.

The output is ASCII: Unicode in names and sentences becomes LaTeX commands
(ŷ → ``\\hat{y}``, ε → ``\\epsilon``, ∂ → ``\\partial``), so a standalone
document compiles with pdflatex and the packages of texlive-latex-base and
texlive-latex-recommended: amsmath, amssymb, booktabs, longtable, array and
geometry (:data:`PACKAGES`).

:func:`repr_latex` gives the MathJax flavour (math only, no ``tabular``)
used by ``_repr_latex_`` in Jupyter.
"""

from __future__ import annotations

import re

import mpmath
import sympy as sp

from ..errors import SymseqError
from .notation import HandoutLatexPrinter, Notation
from .tex import balanced_braces, mathjax_text, source_formula_text, tex_math, tex_source_parts, tex_text, texttt
from ..numbers import Decimalish, handout_decimal
from .views import (heatmap_caption, heatmap_view, latex_label, ledger_values,
                    paired_view, rounding_label, step, table_view)

PACKAGES = ("amsmath", "amssymb", "booktabs", "longtable", "array")
PREAMBLE = r"""\documentclass[11pt]{article}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{booktabs,longtable,array}
\allowdisplaybreaks
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


def _aligned_rhs(lhs: str, rhs: str) -> str:
    """``lhs &= rhs`` for an ``align*``, the right-hand side continued on indented lines when it is long."""
    parts = break_lines(rhs, first=visible_width(lhs) + 2)
    return f"{lhs} &= " + " \\\\\n  &\\quad ".join(parts)


def _boxed(lhs: str, rhs: str) -> str:
    parts = break_lines(rhs, first=visible_width(lhs) + 4)
    if len(parts) == 1:
        return r"\boxed{%s = %s}" % (lhs, rhs)
    return r"\boxed{\begin{aligned}%s &= %s\end{aligned}}" % (lhs, " \\\\ &\\quad ".join(parts))


def ledger_latex(ledger, *, digits: int = 6, values: bool = True, service=None) -> str:
    """A ledger's rows as an ``align*`` environment, then its parameter gradients boxed (``gather*``).

    Leaves with a short exact value are listed first (``h_{-1} = 0``);
    symbolic leaves are omitted. Scalar rows show their exact closed form and
    decimal where short (``w = \\frac{1}{1 + e^{\\frac{1}{\\sqrt{2}}}} \\approx 0.330238``).
    Values come from ``service`` (the derivation's :class:`~symseq.values.Values`; a new one when None).
    """
    n = _notation(ledger)
    num, ex = ledger_values(ledger, values=service) if values else ({}, {})
    lines, boxed = [], []
    for it in ledger.leaves:
        if it.value is None:
            continue
        part = _value_part(it, num, ex, digits) if it.name in num else ""
        if not part.startswith(" = "):
            continue
        lines.append(f"{n.name(it.name)} &{part.strip()}")
    for it in ledger.rows:
        st = step(ledger, it.name, n)
        lhs, rhs = _equation(st, _value_part(it, num, ex, digits))
        lines.append(_aligned_rhs(lhs, rhs))
        if st.boxed:
            boxed.append(_boxed(lhs, st.formula))
    out = [r"\paragraph{%s}" % tex_text(ledger.title)] if ledger.title else []
    if lines:
        out.append("\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}")
    if boxed:
        out.append("\\begin{gather*}\n" + " \\\\\n".join(boxed) + "\n\\end{gather*}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# displays: paired rows, booktabs tables, heatmaps
# ---------------------------------------------------------------------------


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


def printed_latex(claim) -> str:
    """The printed string of a claim, typeset: numbers as math, formulas re-read and printed in LaTeX.

    A formula over declared names keeps the names (``1/[1+e^{2w-1}]`` →
    ``\\frac{1}{1 + e^{2 w - 1}}``). What cannot be read shows verbatim.
    """
    from ..errors import SymseqError
    from ..verify.printed import PrintedNumber, read_printed

    if claim.kind == "property":
        return ""
    if claim.kind == "shape":
        t = tex_math(claim.printed)
        return f"${t}$" if balanced_braces(t) else texttt(claim.printed)
    try:
        p = read_printed(claim.printed, {k: sp.Symbol(k) for k in claim.names})
    except (SymseqError, Exception):  # an unreadable string is shown as it is
        return texttt(claim.printed)
    if len(p.entries) > 16:
        shape = "\\times".join(str(s) for s in p.shape)
        return f"${shape}$ table"
    entries = []
    for e in p.entries:
        if isinstance(e, PrintedNumber):
            entries.append(e.text.replace("−", "-").replace("\u2212", "-"))
        else:
            entries.append(_expr(e))
    return "$%s$" % _entries_tex(entries, p.shape)


def value_latex(claim) -> str:
    """The checked value: a short exact closed form and its decimal, or the decimals of a small matrix."""
    r = claim.check()
    if claim.kind == "shape":
        return "$%s$" % r"\times".join(r.values[0].split("×")) if r.values else ""
    if claim.kind == "property" or not r.values:
        return tex_text(r.message) if r.message and claim.kind == "property" else ""
    sig = 10 if len(r.values) == 1 else 6  # vectors and matrices must fit their column
    with mpmath.workdps(50):
        vals = [number(handout_decimal(mpmath.mpf(v) if v not in ("inf", "-inf") else
                                       (mpmath.inf if v == "inf" else mpmath.ninf), sig)) for v in r.values]
    if len(vals) == 1:
        e = r.exact[0, 0] if isinstance(r.exact, sp.MatrixBase) else r.exact
        short = _short_exact_tex(e, 60)
        if short is not None and not getattr(e, "is_Integer", False) and e not in (sp.oo, -sp.oo):
            return r"$%s \approx %s$" % (short, vals[0])
        return f"${vals[0]}$"
    if len(vals) > 16:
        return "$%s$ matrix" % r"\times".join(str(s) for s in r.shape)
    shape = r.shape if r.shape else ()
    return "$%s$" % _entries_tex(vals, shape)


def _what_latex(c) -> str:
    """What a claim states: a property's statement as the handout printed it (a formula from a LaTeX source
    is typeset), else the quantity's name."""
    if c.kind == "property" and "\\" in c.printed:
        return source_formula_text(c.printed)
    return latex_label(c.printed if c.kind == "property" else c.what)


def claims_latex(claims, *, section_title: str = "") -> str:
    """The claims as a longtable: where, quantity, printed, value, status."""
    if not claims:
        return ""
    rows = []
    for c in claims:
        r = c.check()
        where = c.location.at if section_title == c.location.section else str(c.location)
        what = _what_latex(c)
        rows.append(" & ".join([latex_label(where), what, printed_latex(c), value_latex(c),
                                _STATUS[r.status]]) + r" \\")
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


def section_latex(s, *, digits: int = 6, claims: bool = True) -> str:
    """A section: heading, notes, displays in recorded order, ledgers, claims."""
    out = [r"\subsection*{%s}" % tex_text(s.title)]
    if s.error:
        out.append(r"\noindent\textbf{This section did not build:} %s\par" % texttt(s.error.splitlines()[0]))
    if s.skipped:
        out.append(r"\noindent\textit{Skipped:} %s\par" % tex_text(s.skipped))
    for note in s.notes:
        out.append(r"\paragraph{Note.} %s" % tex_text(note))
    for spec in s.displays:
        try:
            out.append(display_latex(spec))
        except SymseqError as exc:  # one broken display does not hide the rest of the derivation
            out.append(r"\noindent\textbf{%s cannot be shown:} %s\par" % (tex_text(spec.label), tex_text(str(exc))))
    for L in s.ledgers:
        out.append(ledger_latex(L, digits=digits, service=s.values))
    if claims and s.claims:
        out.append(claims_latex(s.claims, section_title=s.title))
    return "\n".join(out) + "\n"


def derivation_latex(d, sections=None, *, standalone: bool = False, digits: int = 6, claims: bool = True) -> str:
    """A derivation as LaTeX: a fragment (``\\section*`` and below), or a complete document with ``standalone``.

    The fragment needs ``\\usepackage{amsmath,amssymb,booktabs,longtable,array}``
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
    body = "\n".join(head) + "\n".join(section_latex(s, digits=digits, claims=claims) for s in sections)
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
    printed = printed_latex(c).strip("$") if c.kind == "value" else ""
    if printed.startswith(r"\texttt"):
        printed = mathjax_text(c.printed)
    value = value_latex(c)
    value = value.strip("$") if value.startswith("$") and value.endswith("$") else mathjax_text(r.message or "")
    mark = r"\checkmark" if r.status == "ok" else r"\text{%s}" % r.status
    parts = tex_source_parts(what) if c.kind == "property" and "\\" in what else None
    what = "".join(t if k == "math" else mathjax_text(t) for k, t in parts) if parts else mathjax_text(what)
    return " & ".join([what, printed, value, mark])


def _mj_display(spec) -> str:
    """A recorded display as a MathJax array: a table or heatmap with its labels, or paired rows."""
    from ..authoring import HeatmapSpec, PairedRowsSpec

    if isinstance(spec, PairedRowsSpec):
        view = paired_view(spec, _notation)
        cell = lambda st: "" if st is None else "%s = %s" % _equation(st)  # noqa: E731
        rows = [r"\text{Forward pass} & \text{Backward pass} \\ \hline"]
        rows += [f"{cell(f)} & {cell(b)} \\\\" for f, b in view.pairs]
        return "$$%s$$\n$$\\begin{array}{ll}\n%s\n\\end{array}$$" % (mathjax_text(view.label), "\n".join(rows))
    if isinstance(spec, HeatmapSpec):
        v = heatmap_view(spec)
        cells = [[r"\times" if c.masked else number(c.text) for c in row] for row in v.cells]
        caption = heatmap_caption(v)[0]
    else:
        v = table_view(spec)
        cells = [[_expr(c.expr) if c.expr is not None else number(c.text) for c in row] for row in v.cells]
        caption = v.label
    head = " & ".join([""] + [mathjax_text(c) for c in v.cols]) + r" \\ \hline"
    body = [" & ".join([mathjax_text(r)] + row) + r" \\" for r, row in zip(v.rows, cells)]
    return "$$%s$$\n$$\\begin{array}{l|%s}\n%s\n\\end{array}$$" % (mathjax_text(caption), "r" * len(v.cols),
                                                                  "\n".join([head] + body))


def _mj_title(text: str) -> str:
    """A heading in bold text runs, with what text cannot hold set as math between them (:func:`mathjax_text`)."""
    return mathjax_text(text, command="textbf")


def repr_latex(obj, service=None) -> str:
    """MathJax LaTeX for Jupyter's ``_repr_latex_``: a ledger, claim, section or derivation.

    Only math is used (``aligned``, ``array``, ``\\boxed``, ``\\text``), since
    notebooks typeset with MathJax rather than LaTeX.
    """
    from ..ledger import Ledger
    from ..verify.claims import Claim
    from ..authoring import Derivation, Section

    if isinstance(obj, Ledger):
        lines = ([mathjax_text(obj.title)] if obj.title else []) + _mj_ledger_lines(obj, service=service)
        if obj.title:
            lines[0] = "&" + lines[0]
        return "$$\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}$$"
    if isinstance(obj, Claim):
        row = _mj_claim_row(obj).split(" & ")
        where = mathjax_text(str(obj.location))
        return "$$" + r" \quad ".join([where] + [p for p in row if p]) + "$$"
    if isinstance(obj, Section):
        parts = ["$$%s$$" % _mj_title(obj.title)]
        for spec in obj.displays:
            try:
                parts.append(_mj_display(spec))
            except SymseqError as exc:
                parts.append("$$%s$$" % mathjax_text(f"{spec.label} cannot be shown: {exc}"))
        parts += [repr_latex(L, obj.values) for L in obj.ledgers]
        if obj.claims:
            rows = [_mj_claim_row(c) for c in obj.claims]
            parts.append("$$\\begin{array}{llll}\n" + " \\\\\n".join(rows) + "\n\\end{array}$$")
        return "\n".join(parts)
    if isinstance(obj, Derivation):
        head = "$$%s$$" % _mj_title(obj.title)
        return "\n".join([head] + [repr_latex(s) for s in obj.sections])
    raise TypeError(f"no LaTeX display for {type(obj).__name__}")
