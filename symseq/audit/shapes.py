"""The shapes a page declares with symbols, checked against the formulas it prints.

A page that teaches attention or a recurrence states the shape of its objects with symbols: a table of objects
(``$W_Q,W_K$ | $d\\times d_k$``), ``X\\in\\mathbb R^{T\\times D}``, "where $W_1$ is $d\\times m$", ``h\\in\\mathbb
R^d``. Its formulas then multiply and add those objects (``Q=HW_Q``, ``O=AV``, ``\\mathrm{FF}(h)=\\mathrm{ReLU}
(hW_1+b_1)W_2+b_2``). This module reads both and checks that every product's inner sizes agree and that both
sides of an equation have one shape, with the sizes as symbols (``T``, ``d_k``, ``hd_v``): a shape written
transposed (``d_k\\times d`` for ``W_Q``) breaks some formula that uses it.

Rules, kept narrow so a correct page is never failed:

* Only sizes written with symbols are read (``T\\times d``, ``2D``, ``hd_v``); a shape of plain numbers belongs to a
  worked example, whose numbers the claims and the page's arithmetic check.
* A formula is read only when the reader reads all of it: names, products written side by side or with
  ``\\cdot``, ``+``/``−``, transposes (``^\\top``, ``^{\\mathsf T}``), brackets, ``\\frac{…}{…}`` with a scalar below,
  and functions that act entry by entry (ReLU, tanh, σ, softmax, LN, exp, dropout). Anything else (sums with
  indices, entries ``A_{ts}``, concatenations with ``\\cdots``, numbers in lists) leaves the formula unread.
* A name with no declared shape fits anything (a bias ``b_1`` added to every row, a scalar). A name takes the
  declaration nearest to the formula, at most :data:`REACH` lines away (pages reuse letters).
* Sizes that are different symbols are different sizes (``d_k`` is not ``d_v``): the page wrote them apart.

When a formula does not fit, the declaration at fault is the one whose shape, were it unknown, is inferred from
the formulas to another shape with every formula then fitting: the erratum is at its line, with that shape as the
correction. When no single declaration explains it, the erratum is at the formula.

A statement in words of the product rule ("an $a\\times b$ matrix by a $b\\times c$ matrix gives an $a\\times c$
matrix") is checked the same way.

Source: issue 39, "a printed shape, numeric or symbolic, alone or in a table of objects, is checked".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from ..read import NUMBER
from ..read.document import Document, row_cells
from .arithmetic import Broken
from .words import formula_bodies, line_of, math_bodies, plain_formula

REACH = 120  # lines: a formula reads a name's shape declared at most this far away (a table of objects above)
MAX_FORMULAS = 400  # formulas checked per page (bounded work)

_WRAP = re.compile(r"\\(?:mathbf|boldsymbol|bm|mathit|mathrm|mathsf|operatorname|text|vec|widehat|hat|tilde|"
                   r"widetilde|bar|overline)\s*")
_TIMES = re.compile(r"\\times(?![A-Za-z])|×")
_REALS = re.compile(r"\\in\s*\{?\s*(?:\\mathbb\s*\{?\s*R\s*\}?|\\R(?![A-Za-z])|ℝ|R)\s*\}?\s*\^\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|"
                    r"[A-Za-z0-9])")
_ELEMENTWISE = {"relu", "tanh", "sigma", "σ", "softmax", "ln", "layernorm", "exp", "dropout", "gelu", "phi", "sigmoid",
                "norm", "rmsnorm"}
_TRANSPOSE = re.compile(r"\^\s*(?:\\top|\{\s*\\top\s*\}|T(?![A-Za-z])|\{\s*T\s*\}|\{?\s*\\mathsf\s*\{?\s*T\s*\}?\s*\}?|"
                        r"\\intercal|\{\s*\\intercal\s*\})")


class _Unread(Exception):
    """A formula (or size) this reader does not read: it is left alone."""


class _Misfit(Exception):
    """Two sizes that must agree do not."""


@dataclass
class Declaration:
    """A shape the page declares: the names it is for (or an expression, a table row such as ``AV``), the shape
    (sizes as SymPy expressions; one size for a vector), and where its text is."""

    line: int
    start: int
    end: int
    text: str
    names: tuple
    shape: tuple
    expression: str = ""  # a table row whose object is a formula (AV): its shape is checked as an equation


@dataclass
class Formula:
    line: int
    text: str
    sides: list  # the text of each side of its equations (one side: only its own products are checked)


# --- sizes -------------------------------------------------------------------------------------------------------

def _key(name: str) -> str:
    """A name as the shapes key it: ``\\mathbf W_Q``, ``W_{Q}`` and ``{W}_Q`` are ``W_Q``."""
    return re.sub(r"[{}\s]", "", _WRAP.sub("", name))


_SIZE_ATOM = re.compile(r"\\ell|\\[A-Za-z]+|[A-Za-z](?:_\{[^{}]*\}|_[A-Za-z0-9])?|\d+")


def _size(text: str):
    """A size written with symbols (``T``, ``d_k``, ``hd_v``, ``2D``, ``d_{\\mathrm{model}}``) as a SymPy expression;
    :class:`_Unread` for anything else (a plain number, a sum)."""
    t = re.sub(r"\{([A-Za-z])\}", r"\1", _WRAP.sub("", text)).strip()
    if not t or len(t) > 30 or re.search(r"[A-Za-z]{4,}", t):  # a word (|vocab|), not a product of sizes
        raise _Unread(text)
    factors, pos = [], 0
    for m in _SIZE_ATOM.finditer(t):
        if t[pos:m.start()].strip():
            raise _Unread(text)
        pos = m.end()
        a = m.group(0)
        if a.isdigit():
            factors.append(sp.Integer(a))
        elif a.startswith("\\") and a != "\\ell":
            raise _Unread(text)
        else:
            factors.append(sp.Symbol(re.sub(r"[{}]", "", a), positive=True, integer=True))
    if t[pos:].strip() or not factors or not any(isinstance(f, sp.Symbol) for f in factors):
        raise _Unread(text)
    return sp.Mul(*factors)


def _shape(text: str) -> tuple:
    """``T\\times d_k`` → (T, d_k); ``1\\times H`` → (1, H); ``d`` → (d,)."""
    parts = _TIMES.split(text.strip().strip("{}"))
    if len(parts) > 2:
        raise _Unread(text)
    if len(parts) == 2 and "1" in (parts[0].strip(), parts[1].strip()):  # a row 1×H or a column H×1
        return tuple(sp.Integer(1) if p.strip() == "1" else _size(p) for p in parts)
    return tuple(_size(p) for p in parts)


def show_shape(shape) -> str:
    return "×".join(str(s).replace("*", "") for s in shape)


# --- declarations ------------------------------------------------------------------------------------------------

def _names(text: str) -> tuple:
    """The names of ``W_Q,W_K`` or ``\\mathbf W_x,\\mathbf W_h``; :class:`_Unread` when one is not a plain name."""
    out = []
    for part in re.split(r",|\\;|\\,", text):
        k = _key(part)
        if not k:
            continue
        if not re.fullmatch(r"(?:\\[A-Za-z]+|[A-Za-z])(?:_[A-Za-z0-9,()\\]+)?(?:\^[A-Za-z0-9()\[\]\\,']+)?'*", k):
            raise _Unread(part)
        out.append(k)
    if not out:
        raise _Unread(text)
    return tuple(out)


_IS = re.compile(r"^\s*(?:is|are|has shape|have shape|has size|of shape|with shape)\s+(?:an?\s+)?$")


def declarations(doc: Document) -> list[Declaration]:
    """Every shape the page declares with symbols: ``NAMES \\in \\mathbb R^{…}``, "``$NAMES$`` is ``$a\\times b$``",
    and the rows of a table with a column headed "shape"."""
    out = []
    for k, line in enumerate(doc.lines, 1):
        if k in doc.code:
            continue
        spans = math_bodies(line)
        for a, b, body in spans:
            for m in _REALS.finditer(body):
                names = []  # the names just before \in: W_Q,W_K\in…; Z=…,W_{\mathrm{out}}\in…
                for piece in reversed(re.split(r",|=|\\quad|\\qquad|;|:|\(|\)", body[:m.start()])):
                    try:
                        names[:0] = _names(piece)
                    except _Unread:
                        break
                try:
                    names, shape = _names(",".join(names)), _shape(m.group(1).strip()[1:-1] if m.group(1).startswith("{")
                                                         else m.group(1))
                except _Unread:
                    continue
                s = a + m.start(1)
                out.append(Declaration(k, s, a + m.end(1), m.group(1), names, shape))
        for (a1, b1, n), (a2, b2, sh) in zip(spans, spans[1:]):  # "$W_1$ is $d\times m$"
            if not _TIMES.search(sh) or not _IS.match(line[b1 + 1:a2 - 1].replace("$", "")):
                continue
            try:
                out.append(Declaration(k, a2, b2, sh, _names(n), _shape(sh)))
            except _Unread:
                continue
    for t in doc.tables:
        head = row_cells(doc.lines[t.header - 1], t.sep)
        col = next((j for j, (_, _, c) in enumerate(head) if re.search(r"\bshapes?\b|\bdimensions?\b", c, re.I)), None)
        if col is None or col == 0:
            continue
        for r in t.rows:
            cells = row_cells(doc.lines[r - 1], t.sep)
            if len(cells) <= col:
                continue
            _, _, obj = cells[0]
            a, _, cell = cells[col]
            shapes = [(a + s, a + e, body) for s, e, body in math_bodies(cell)] or [(a, a + len(cell), cell)]
            objs = [body for _, _, body in math_bodies(obj)] or [obj]
            try:
                obj_text = objs[0]
                shaped = [(s, e, body, _shape(body)) for s, e, body in shapes]
            except _Unread:
                continue
            try:
                names = _names(obj_text)
            except _Unread:
                names = ()
            if not names:  # an expression (AV): its shape is an equation
                s, e, body, shape = shaped[0]
                out.append(Declaration(r, s, e, body, (), shape, expression=obj_text))
            elif len(shaped) == len(names):
                out += [Declaration(r, s, e, body, (n,), shape) for n, (s, e, body, shape) in zip(names, shaped)]
            elif len(shaped) == 1:
                s, e, body, shape = shaped[0]
                out.append(Declaration(r, s, e, body, names, shape))
    return out


# --- formulas: a small reader of products of names --------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<frac>\\[dt]?frac)|(?P<sqrt>\\sqrt)|(?P<op>\\cdot|\\odot|\\circ)"
                    r"|(?P<func>\\(?:mathrm|operatorname|text)\s*\{(?P<fname>[A-Za-z]+)\}(?:_\{?[A-Za-z0-9,\\ ]*\}?)?"
                    r"|\\(?P<gfunc>tanh|sigma|exp|phi|sigmoid)(?![A-Za-z]))"
                    r"|(?P<name>(?:\\(?:mathbf|boldsymbol|bm|mathit|vec|widehat|hat|tilde|widetilde|bar)\s*"
                    r"(?:\{[^{}]*\}|[A-Za-z])|\{[A-Za-z]\}|[A-Za-z]|\\[A-Za-z]+)"
                    r"(?:\s*_\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z0-9])|\s*\^\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z0-9]|\\ell)"
                    r"|'|\^\\prime)*)"
                    r"|(?P<bracket>[-+*/(){}\[\]])|(?P<num>" + NUMBER + "))")


def _tokens(text: str) -> list[tuple[str, str]]:
    text = re.sub(r"(?<![_^\s])\s*\{\s*(\\(?:mathrm|operatorname|text)\s*\{[A-Za-z]+\})\s*\}(?=\s*[_(])", r"\1",
                  _TRANSPOSE.sub(" ⊤ ", text))  # {\mathrm{LN}}_f( is the function LN_f
    out, pos = [], 0
    text = text.rstrip(" .,;")
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        if text[pos:].lstrip().startswith("⊤"):
            pos = text.index("⊤", pos) + 1
            out.append(("T", "⊤"))
            continue
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _Unread(text[pos:])
        pos = m.end()
        kind = m.lastgroup
        if m.group("gfunc"):
            out.append(("func", m.group("gfunc")))
        elif m.group("func"):
            out.append(("func", m.group("fname").lower()))
        elif m.group("name"):
            n = m.group("name")
            if n.startswith("\\") and not _WRAP.match(n) and re.match(r"\\[A-Za-z]+", n).group(0) not in (
                    "\\ell", "\\alpha", "\\beta", "\\gamma", "\\mu", "\\theta", "\\delta", "\\epsilon", "\\lambda"):
                raise _Unread(n)
            out.append(("name", _key(n)))
        elif kind:
            out.append(("op" if kind == "bracket" else kind, m.group(kind)))
    return out


# a name numbered by a step or a position: h_0, h_{-1}, h_{t-1}, h_{T-1} (its key: h_T-1)
_STEP = re.compile(r"([A-Za-z]+)_(-?\d{1,3}|[A-Za-z][-+]\d{1,3})")


class _Reader:
    """Reads one side of a formula into its shape, checking every product and sum on the way."""

    def __init__(self, toks, shapes: dict, env: "_Sizes"):
        self.toks, self.i, self.shapes, self.env = toks, 0, shapes, env

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise _Unread(f"expected {value}")
        self.i += 1
        return tok

    def read(self):
        s = self.expr()
        if self.i != len(self.toks):
            raise _Unread("trailing text")
        return s

    def expr(self):
        s = self.term()
        while self.peek()[1] in ("+", "-"):
            self.take()
            s = self.env.add(s, self.term())
        return s

    def term(self):
        if self.peek()[1] in ("-", "+"):
            self.take()
        s = self.factor()
        while True:
            kind, v = self.peek()
            if v in ("\\cdot", "*"):
                self.take()
                s = self.env.product(s, self.factor())
            elif v in ("\\odot", "\\circ"):
                self.take()
                s = self.env.add(s, self.factor())
            elif v == "/":
                self.take()
                self.env.scalar(self.factor())
            elif kind in ("name", "func", "frac", "sqrt", "num") or v in ("(", "["):
                s = self.env.product(s, self.factor())
            else:
                return s

    def factor(self):
        kind, v = self.take()
        if kind == "num":
            s = ()
        elif kind == "name":  # H^{(1)}, H^L, H' take H's shape unless declared
            bare = re.sub(r"\^.*|'+$", "", v)
            s = self.shapes.get(v, self.shapes.get(bare))
            step = _STEP.fullmatch(bare)
            if s is None and step:  # h_{T-1}, h_0, h_{t-1} take the shape declared for h_t
                s = next((self.shapes[f"{step.group(1)}_{i}"] for i in "tsij" if f"{step.group(1)}_{i}" in self.shapes),
                         None)
        elif kind == "func":  # an entry-by-entry function keeps the shape; another one's shape is unknown
            self.take("(")
            s = self.expr()
            self.take(")")
            s = s if v in _ELEMENTWISE else None
        elif kind == "frac":
            self.take("{")
            s = self.expr()
            self.take("}")
            self.take("{")
            self.env.scalar(self.expr())
            self.take("}")
        elif kind == "sqrt":
            self.take("{")
            self.env.scalar(self.expr())
            self.take("}")
            s = ()
        elif v in ("(", "[", "{"):
            s = self.expr()
            self.take({"(": ")", "[": "]", "{": "}"}[v])
        else:
            raise _Unread(str(v))
        while self.peek()[0] == "T":
            self.take()
            s = None if s is None else tuple(reversed(s))
        return s


class _Sizes:
    """Sizes that must agree, with unknown sizes (SymPy Dummies) solved on the way."""

    def __init__(self):
        self.solved: dict = {}

    def value(self, x):
        return x.xreplace(self.solved) if self.solved else x

    def same(self, a, b):
        a, b = self.value(a), self.value(b)
        if a == b:
            return
        for u, w in ((a, b), (b, a)):
            if isinstance(u, sp.Dummy):
                self.solved[u] = w
                self.solved = {k: v.xreplace({u: w}) for k, v in self.solved.items()}
                return
        if (a.free_symbols or a == 1) and (b.free_symbols or b == 1) and not (a.atoms(sp.Dummy) or b.atoms(sp.Dummy)):
            raise _Misfit(f"{a} is not {b}")  # two sizes written apart, or a row's 1 against a size
        raise _Unread("sizes not comparable")

    def scalar(self, s):
        if s not in ((), None) and not all(self.value(x) == 1 for x in s):
            raise _Unread("not a scalar")

    def add(self, a, b):
        if a is None or b is None or a == () or b == ():
            return b if a is None or a == () else a
        if len(a) != len(b):  # a row added to every row: its size is the columns'
            self.same(a[-1], b[-1])
            return a if len(a) > len(b) else b
        for x, y in zip(a, b):
            self.same(x, y)
        return a

    def product(self, a, b):
        if a == ():
            return b
        if b == ():
            return a
        if a is None or b is None:
            return None
        self.same(a[-1], b[0])
        return a[:-1] + b[1:]


def formulas(doc: Document) -> list[Formula]:
    """The equations the page prints in its formulas (``Q=HW_Q,K=HW_K`` is two), each as the text of its sides."""
    out = []
    for k, _, _, body, texts in formula_bodies(doc):
        if re.search(r"\\begin\{(?:aligned|align\*?|split|gathered)\}", body):
            body = plain_formula(body)  # an aligned display: its rows as equations
        if re.search(r"\\begin", body):
            continue
        for piece in re.split(r",(?![^{}()]*[})])|\\quad|\\qquad|;", body):
            if re.search(r"\\approx|\\sum|\\prod|\\cdots|\\ldots|\\dots|\\in(?![A-Za-z])|\\mapsto|<|>|\\le|\\ge|"
                         r"\\times|\\mid|\|", piece) or "=" not in piece:
                continue
            if re.search(r"(?<![_^{])\d", re.sub(r"[_^]\s*\{[^{}]*\}|[_^]\s*\w", "", piece)) \
                    and not re.search(r"\\frac|\\sqrt", piece):
                continue  # numbers: a worked example's arithmetic
            sides = [s for s in piece.split("=")]
            if all(s.strip() for s in sides) and len(out) < MAX_FORMULAS:
                out.append(Formula(k + (0 if texts is None else line_of(sides, texts)), piece.strip(), sides))
    return out


def _fit(formula: Formula, shapes: dict, env: _Sizes, declared=None):
    """Read each side of ``formula`` (and its declared shape, for a table row's expression); raise :class:`_Misfit`
    when a product, a sum or the equation does not fit."""
    got = [_Reader(_tokens(side), shapes, env).read() for side in formula.sides]
    if declared is not None:
        got.append(declared)
    known = [g for g in got if g not in (None, ())]
    for g in known[1:]:
        if len(g) != len(known[0]):
            raise _Unread("a vector beside a matrix")
        for x, y in zip(known[0], g):
            env.same(x, y)


def check(doc: Document) -> list[Broken]:
    """The shapes of :func:`declarations` that do not fit the page's :func:`formulas`, as :class:`~symseq.audit.arithmetic.Broken`\\ s."""
    decls = declarations(doc)
    if not decls:
        return []
    # (formula, the table row whose object it is, or None)
    forms = [(f, None) for f in formulas(doc)] + [(Formula(d.line, d.expression, [d.expression]), d)
                                                  for d in decls if d.expression]
    named = [d for d in decls if d.names]

    def shapes_at(line: int, drop=None) -> tuple[dict, dict]:
        best: dict = {}
        for d in named:
            if abs(d.line - line) > REACH:
                continue
            for n in d.names:
                if n not in best or abs(d.line - line) < abs(best[n].line - line):
                    best[n] = d
        shapes, fresh = {}, {}
        for n, d in best.items():
            if d is drop:
                fresh[n] = tuple(sp.Dummy() for _ in d.shape)
                shapes[n] = fresh[n]
            else:
                shapes[n] = d.shape
        return shapes, fresh

    def misfits(drop=None):
        bad, solved = [], {}
        for f, row in forms:
            if row is drop and row is not None:
                continue
            shapes, fresh = shapes_at(f.line, drop)
            env = _Sizes()
            try:
                _fit(f, shapes, env, row.shape if row is not None else None)
            except _Unread:
                continue
            except _Misfit as exc:
                bad.append((f, str(exc)))
                continue
            for n, dims in fresh.items():
                vals = tuple(env.value(x) for x in dims)
                if not any(v.atoms(sp.Dummy) for v in vals):
                    solved.setdefault(n, set()).add(vals)
        return bad, solved

    bad, _ = misfits()
    if not bad:
        return []
    out = []
    culprits, candidates = [], []  # declarations whose shape, inferred, fits: to another shape; at all
    for d in decls:
        if d.expression:
            rest, _ = misfits(drop=d)
            if not rest:
                culprits.append((d, None))
                candidates.append((d, None))
            continue
        rest, solved = misfits(drop=d)
        got = {v for n in d.names for v in solved.get(n, ())}
        if not rest:
            candidates.append((d, None))
            if len(got) == 1 and next(iter(got)) != d.shape:
                culprits.append((d, next(iter(got))))
    if len(culprits) == 1 and len(candidates) == 1:
        d, right = culprits[0]
        what = ", ".join(d.names) or d.expression
        fits = f"; {show_shape(right)} fits them" if right is not None else ""
        out.append(Broken(d.line, d.start, d.end, d.text, f"the shape {show_shape(d.shape)} of {what} does not fit "
                          f"the page's formulas ({bad[0][0].text}: {bad[0][1]}){fits}",
                          show_shape(right) if right is not None else "—"))
        return out
    if len({d.line for d, _ in candidates}) == 1 and len(candidates) > 1:  # "W_1 is d×m, W_2 is m×d": one of these
        d = candidates[0][0]
        what = " or ".join(f"{', '.join(c.names) or c.expression} ({show_shape(c.shape)})" for c, _ in candidates)
        out.append(Broken(d.line, d.start, d.end, d.text, f"the shape of {what} does not fit the page's formulas "
                          f"({bad[0][0].text}: {bad[0][1]})"))
        return out
    seen = set()
    for f, why in bad:
        if f.line in seen:
            continue
        seen.add(f.line)
        col = doc.lines[f.line - 1].find(f.text)
        out.append(Broken(f.line, max(col, 0), max(col, 0) + len(f.text), f.text,
                          f"the shapes the page declares do not fit {f.text}: {why}"))
    return out


# the product rule said in words: "an $a\times b$ matrix by a $b\times c$ matrix produces an $a\times c$ matrix"
_RULE = re.compile(r"an?\s+\$([^$]+)\$\s+matri(?:x|ces)\s+by\s+an?\s+\$([^$]+)\$\s+matri(?:x|ces)\s+"
                   r"(?:produces|gives|yields|results in|is|makes)\s+an?\s+\$([^$]+)\$", re.IGNORECASE)


def product_rules(doc: Document) -> list[Broken]:
    """Statements of the product rule in words whose shapes are wrong."""
    out = []
    for k, line in enumerate(doc.lines, 1):
        for m in _RULE.finditer(line):
            try:
                a, b, c = (_shape(m.group(j)) for j in (1, 2, 3))
            except _Unread:
                continue
            if len(a) != 2 or len(b) != 2 or len(c) != 2:
                continue
            right = (a[0], b[1])
            if a[1] != b[0] or c != right:
                why = (f"an {show_shape(a)} matrix cannot multiply a {show_shape(b)} one" if a[1] != b[0] else
                       f"the product of an {show_shape(a)} and a {show_shape(b)} matrix is {show_shape(right)}")
                out.append(Broken(k, m.start(), m.end(), m.group(0), why,
                                  show_shape(right) if a[1] == b[0] else "—"))
    return out


def misfits(doc: Document) -> list[Broken]:
    """Every shape of the page that does not fit (:func:`check`, :func:`product_rules`)."""
    try:
        return check(doc) + product_rules(doc)
    except RecursionError:  # pragma: no cover - formulas are short
        return []
