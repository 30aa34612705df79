"""The page's formulas bound to a derivation's ledgers by the page's own names, and checked there.

A handout prints the formulas of its computation: ``z_1=w_xx_1+w_hh_0``, ``g_0^z=g_0^h\\phi'(z_0)``,
``\\frac{\\partial\\mathcal L}{\\partial w_h}=g_0^zh_{-1}+g_1^zh_0+g_2^zh_1``, ``z_t=w_xx_t+w_hh_{t-1}``. The
derivation of that section builds the same computation in a ledger whose rows carry the page's names (``z_1``,
``g_0^z``, ``∂ℒ/∂w_h``). This module reads each equation of the section's mathematics, binds every name in it to
a row of one of the section's ledgers, and checks that its sides are equal there: a time step or an index edited
(``w_hh_1`` for ``w_hh_0``, ``h_{t-2}`` in a one-step recurrence), an exponent changed, or a factor dropped makes a
false statement at its line, though no claim quotes the formula.

How a page's name reaches a ledger row:

* the name is read as LaTeX writes it (a one-character subscript ``w_xx_1`` is ``w_x`` times ``x_1``; ``\\mathbf``
  and ``\\boldsymbol`` are dropped; ``\\widehat y`` is ``ŷ``, ``\\mathcal L`` is ``ℒ``) and keyed without braces
  (``h_{-1}`` is the row ``h_{-1}``);
* ``\\frac{\\partial A}{\\partial B}`` and ``\\partial A/\\partial B`` are the row ``∂A/∂B`` when the ledger has it
  (a gradient of a backward pass), else the local derivative of row ``A``'s definition by ``B`` when ``B`` is in it;
* a subscript over one or two index letters (``h_{t-1}``, ``x_t``, ``S_{ts}``) is bound at every step ``t = 0 … 9``
  (and ``s``) at which every name of the equation is a row, and the equation is checked at each;
* a lowercase letter names the rows of the matrix row named by that capital, with its subscript and superscript,
  when the ledger has no row of its own by that name: ``q_t`` (or ``\\mathbf q_t``) is row t of ``Q``, ``q_{t,i}``
  its entry, ``\\mathbf o_6^{[1]}`` row 6 of ``O^{[1]}``, ``\\mathbf b_{\\mathrm{att},6}`` row 6 of ``B_att`` and
  ``B_{\\mathrm{att},6,0}`` its entry; a 1×1 product (``\\mathbf q_t\\mathbf k_s^\\top``) is the number it holds,
  and a number added to a vector is added to each entry (``(1-\\mathbf z_t)\\odot\\mathbf n_t``);
* a section that names a row otherwise than the page does says so when it uses the ledger,
  ``s.use(L, names={"Q": "Q^{[1]}", "U": "U^{(0)}"})``: there the page's ``Q`` (and so ``q_6``, ``S_{60}``) is
  that row;
* an entry is keyed as the ledger names it (``W_{x,01}``, ``h_{t-1,1}``, ``g_{t,0}^z``; a row vector's ``W_{o,1}``
  also as ``W_{o,01}``), a bold name is the whole vector or matrix row (``\\mathbf z_t``); ``^\\top`` transposes,
  ``\\odot`` multiplies entry by entry, ``\\nabla_{\\mathbf W}\\mathcal L`` is the row ``∂ℒ/∂W``,
  ``\\sum_{t=0}^{T-1}`` runs between its bounds (``T`` is the ledger's number of steps, its inputs ``x_0 … x_{T-1}``;
  a bound may be a size, ``\\sum_{i=0}^{d_k-1}``),
  ``\\mathbf 0`` is a zero vector, ``(x_{t,0},x_{t,1})`` the row vector of those entries, a ``bmatrix`` (or
  ``pmatrix`` …) the matrix of its cells and ``I_n`` the n×n identity; an entry index the row lacks
  (``W_{x,02}`` of a 2×2 ``W_x``) and an identity of another size than the matrix it equals are named;
* a size written with a symbol (``d_k``, ``T``) that no row names is bound through the shapes the page declares
  (``\\mathbf Q\\in\\mathbb R^{T\\times d_k}`` for a 3×2 ``Q`` makes T = 3 and d_k = 2; a symbol two declarations
  give two values stays unbound), so ``\\frac{\\mathbf Q\\mathbf K^\\top}{\\sqrt{d_k}}`` is read (``\\sqrt`` too);
* ``\\phi`` is the ledger's general activation (an undefined function; ``\\phi'`` its derivative), ``\\sigma`` the
  logistic sigmoid, ``\\tanh`` and ``\\exp`` themselves; ``e^{…}`` is the exponential, unless the ledger has a
  row ``e`` (the prediction error of a backward pass): then an equation with ``e^{…}`` is not read.

A chain from a name to a printed number or row of numbers (``S_{60}\\approx\\frac{0.672}{\\sqrt3}\\approx0.388``,
``\\mathbf o_6^{[1]}\\approx(-0.0248,\\;0.239,\\;0.563)``) is decided as a claim of the bound row's value with
that printed string would be (:func:`symseq.verify.claims.check_claim`), when every leaf the row reads has a value;
what lies between is the page's arithmetic. In such a chain the equation is what stands before its first
``\\approx``: ``\\mathbf q_6\\mathbf k_0^\\top=q_{6,0}k_{0,0}+\\cdots`` is checked like any other.

The sides are compared as numbers: a leaf (or a leaf's entry) takes the ledger's exact value when it has one
(``h_{−1} = 0``) and otherwise a fixed random rational, every other row is computed from its own definition over
the rows it reads, an undefined activation becomes ``tanh``, and the two sides must agree to 30 digits at two such
points. Rules, kept narrow so a correct page is never failed: sides of two shapes are compared only when one is an
identity (a column written for a row is a convention, the shapes' business); an equation is read only when the
reader reads all of it and binds every name in it; printed decimals leave it to the page's arithmetic; a side
with no bound name at all is not compared.

Source: issue 39, "a printed formula for a bound name is evaluated with the bound values and compared with the
row"; "a subscript that names a time step or a position is bound like a name".
"""

from __future__ import annotations

import itertools
import random
import re
import unicodedata

import mpmath
import sympy as sp

from ..functions import sigmoid
from ..ledger import entry_name
from ..numbers import decimal_text, exact, short
from ..read import NUMBER
from ..read.number import SIGNED_NUMBER
from ..read.page import split_top
from .arithmetic import Broken
from .words import MATRIX_ENV, formula_bodies, line_of, plain_formula

MAX_PIECES = 600  # equations checked per page (bounded work)
STEPS = range(10)  # the values an index letter of a subscript is bound to
DIGITS = 30

_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "theta": "θ",
          "lambda": "λ", "mu": "μ", "tau": "τ", "eta": "η", "rho": "ρ", "omega": "ω", "psi": "ψ", "xi": "ξ"}
_ACCENT = {"widehat": "\u0302", "hat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "bar": "\u0304"}
_SCRIPT = r"(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])"
_NAME = re.compile(r"(?P<wrap>\\(?:mathbf|boldsymbol|bm|mathit|mathcal|widehat|hat|tilde|widetilde|bar)\s*)?"
                   r"(?P<base>\{\s*(?:\\(?:mathbf|boldsymbol|bm)\s*)?[A-Za-z]\s*\}|[A-Za-z]|\\(?:" + "|".join(_GREEK)
                   + r")(?![A-Za-z]))"
                   r"(?P<scripts>(?:\s*[_^]\s*" + _SCRIPT + r")*)(?P<primes>'*)")
_PARTIAL_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*\\partial\s*(?P<a>[^{}]*(?:\{[^{}]*\}[^{}]*)*)\}\s*"
                           r"\{\s*\\partial\s*(?P<b>[^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_PARTIAL_SLASH = re.compile(r"\\partial\s*(?P<a>(?:\\[A-Za-z]+\s*)?[A-Za-z{}](?:\s*[_^]\s*" + _SCRIPT + r")*)\s*/\s*"
                            r"\\partial\s*(?P<b>(?:\\[A-Za-z]+\s*)?[A-Za-z{}](?:\s*[_^]\s*" + _SCRIPT + r")*)")
_FUNCS = {"phi": "φ", "varphi": "φ", "sigma": "σ", "tanh": "tanh", "exp": "exp", "log": "log"}
_FUNC = re.compile(r"\\(?P<f>phi|varphi|sigma|tanh|exp|log)(?![A-Za-z])(?P<primes>'*)|"
                   r"\\(?:mathrm|operatorname)\s*\{\s*(?P<g>tanh|exp|log)\s*\}")
_FRAC = re.compile(r"\\[dt]?frac(?![A-Za-z])\s*(?:(?P<d1>\d)(?P<d2>\d)|(?P<d3>\d)(?=\s*\{))?")
_NUMBER = re.compile(NUMBER)
_OP = re.compile(r"\\cdot(?![A-Za-z])|\\times(?![A-Za-z])|\\odot(?![A-Za-z])|[-+*/()\[\]{}^]|−")
_TRANSPOSE = re.compile(r"\^\s*(?:\{\s*(?:\\top|\\intercal|T)\s*\}|\\top|\\intercal|T)(?![A-Za-z])")
_BOLD_DIGIT = re.compile(r"\\(?:mathbf|boldsymbol)\s*\{?\s*(\d)\s*\}?")
_NABLA = re.compile(r"\\nabla\s*_\s*(?P<b>\{(?:[^{}]|\{[^{}]*\})*\}|\\?[A-Za-z]+)\s*")
_SUM = re.compile(r"\\sum\s*_\s*\{\s*(?P<k>[a-z])\s*=\s*(?P<lo>[^{}]+?)\s*\}\s*\^\s*(?P<hi>\{[^{}]+\}|[A-Za-z0-9])")


_SQRT = re.compile(r"\\sqrt(?![A-Za-z])\s*")
_E_POWER = re.compile(r"e\s*\^\s*")
_ROMAN = re.compile(r"\\(?:mathrm|text|operatorname)\s*\{([A-Za-z]+)\}")
# a row or matrix named by one capital, with a subscript and a superscript: Q, B_att, O^[1], H^(0), B_mlp^(0)
_CAPITAL = re.compile(r"(?P<c>[A-Z])(?:_(?P<sub>[^^,]+))?(?P<sup>\^.+)?")
_NUMBERED = re.compile(r"(.+?_)(-?\d{1,2})((?:\^.*)?)")  # a key numbered by a step: g_3^z, h_-1, x_2


class _Unread(Exception):
    """An equation this reader does not read, or whose names are not all rows: it is left alone."""


def _index(script: str, env: dict) -> str:
    """A subscript's text with its index letter bound (``t-1`` at t = 2 is ``1``, ``t`` is ``2``, ``t-1,0`` is
    ``1,0``); any other subscript as it is."""
    if "," in script:
        return ",".join(_index(part, env) for part in script.split(","))
    m = re.fullmatch(r"\s*([A-Za-z])\s*([-+])\s*(\d+)\s*", script)
    if m and m.group(1) in env:
        v = env[m.group(1)] + (int(m.group(3)) if m.group(2) == "+" else -int(m.group(3)))
        return str(v)
    if len(script.strip()) == 1 and script.strip() in env:
        return str(env[script.strip()])
    if re.fullmatch(r"\s*[a-z0-9][a-z]|[a-z][a-z0-9]\s*", script.strip()) and \
            all(ch in env or ch.isdigit() for ch in script.strip()):
        return "".join(ch if ch.isdigit() else str(env[ch]) for ch in script.strip())  # S_{ts} at t = 1, s = 0: S_10
    return script


def name_key(text: str, env: dict | None = None) -> str:
    """The ledger key of a name as the page writes it: ``\\mathbf h_{t-1}`` at t = 2 is ``h_1``, ``\\widehat y``
    is ``ŷ``, ``\\mathcal L`` is ``ℒ``, ``g_0^z`` is ``g_0^z``, ``h_{-1}`` is ``h_-1`` (braces and spaces dropped:
    see :func:`ledger_key`)."""
    m = _NAME.fullmatch(text.strip())
    if m is None:
        return re.sub(r"[{}\s]", "", text)
    base = re.sub(r"\\(?:mathbf|boldsymbol|bm)\s*", "", m.group("base")).strip("{} ")  # \widehat{\mathbf y}: ŷ
    if base.startswith("\\"):
        base = _GREEK[base[1:]]
    wrap = (m.group("wrap") or "").strip().lstrip("\\")
    if wrap == "mathcal" and base == "L":
        base = "ℒ"
    elif wrap in _ACCENT:
        base = unicodedata.normalize("NFC", base + _ACCENT[wrap])
    out = base
    for sm in re.finditer(r"([_^])\s*(" + _SCRIPT + ")", m.group("scripts")):
        body = sm.group(2)
        body = body[1:-1] if body.startswith("{") else body
        body = _ROMAN.sub(r"\1", body)  # b_{\mathrm{att},6}: b_att,6
        if sm.group(1) == "_" and env:
            body = _index(body, env)
        out += sm.group(1) + body
    return re.sub(r"[{}\s]", "", out + m.group("primes"))


def ledger_key(name: str) -> str:
    """A ledger row's name keyed as :func:`name_key` keys the page's: ``h_{-1}`` is ``h_-1``."""
    return unicodedata.normalize("NFC", re.sub(r"[{}\s]", "", name))


class _Bind:
    """The rows of one ledger by key, and the SymPy objects an equation over them is built from."""

    def __init__(self, L, declarations=(), names: dict | None = None, sizes: dict | None = None):
        self.L = L
        # each row by its own name, and by the page's name of it in this section (use(L, names={"Q": "Q^{[1]}"}))
        named = [(n, n) for n in L.order] + [(page, row) for page, row in (names or {}).items()]
        self.keys = {ledger_key(a): n for a, n in named if L.shape(n) == ()}
        targets: dict = {}  # key -> the entries it names (a key two entries give binds neither)
        for a, n in named:
            if L.shape(n) != ():
                rows, cols = L.shape(n)
                for i in range(rows):
                    for j in range(cols):  # a row vector's entry W_{o,1} is also written W_{o,01}
                        for shape in {L.shape(n), (max(rows, 2), max(cols, 2))}:
                            targets.setdefault(ledger_key(entry_name(a, i, j, shape)), set()).add((n, i, j))
        self.matrices = {ledger_key(a): n for a, n in named if L.shape(n) not in ((), (1, 1))}  # a 1×1 is a number
        own = set(targets) | set(self.keys) | set(self.matrices)
        rows: dict = {}
        self.families: list = []  # (the keys of the rows and entries of a capital's matrix, the matrix)
        self.layers: dict = {}  # (capital, subscript, bracket) -> [(number, matrix)]: H^(0), H^(1); O^[1], O^[2]
        for a, n in named:  # a matrix named by a capital, its rows positions: q_t is row t of Q, q_{t,i} its entry
            m = _CAPITAL.fullmatch(ledger_key(a))
            if m is None or L.shape(n) == () or L.shape(n)[0] < 2:
                continue
            c, sub, sup = m.group("c"), m.group("sub"), m.group("sup") or ""
            if f"{c.lower()}{'_' + sub if sub else ''}{sup}" in own:  # a row q of its own: q_1 is its entry
                continue
            head = f"_{sub}," if sub else "_"
            family = f"[{c}{c.lower()}]{re.escape(head)}(\\d+)(?:,(\\d+))?{re.escape(sup)}"
            self.families.append((re.compile(family), n))
            numbered = re.fullmatch(r"\^([(\[])(\d+)[)\]]", sup)  # H^(0), O^[1]: a block's or a head's number
            if numbered:
                self.layers.setdefault((c, head, numbered.group(1)), []).append((int(numbered.group(2)), n))
            for i in range(L.shape(n)[0]):
                rows.setdefault(f"{c.lower()}{head}{i}{sup}", set()).add((n, i))
                for j in range(L.shape(n)[1]):
                    for key in (f"{c.lower()}{head}{i},{j}{sup}", f"{c}{head}{i},{j}{sup}"):
                        if key not in own:
                            targets.setdefault(key, set()).add((n, i, j))
        # the key of an entry of a vector or matrix row (W_{x,00}, h_{1,0}, q_{6,0}) -> (row, i, j); the key of a
        # row of a matrix whose rows are positions (q_6, o_6^[1], b_att,6) -> (row, i)
        self.entries = {k: next(iter(v)) for k, v in targets.items() if len(v) == 1 and k not in self.keys}
        self.rows = {k: next(iter(v)) for k, v in rows.items() if len(v) == 1 and k not in own}
        n = 0  # T, the number of time steps: the ledger's inputs x_0 … x_{T-1} (None without them)
        while f"x_{n}" in L:
            n += 1
        self.steps_count = n or None
        self.phi = sp.Function("φ")
        # a size the page writes with a symbol (d_k, T) → its value here: as the section gives it, else as the
        # page's declared shapes of this ledger's rows give it
        self.sizes = {name_key(k): sp.Integer(v) for k, v in (sizes or {}).items()}
        self.dims = {**self._dims(declarations), **self.sizes}
        self.names = frozenset((*self.keys, *self.dims, *self.matrices))  # every key that binds as it is written
        self._numbered = None
        self._values = None

    def _dims(self, declarations) -> dict:
        """The sizes the page declares with symbols (``\\mathbf Q\\in\\mathbb R^{T\\times d_k}``,
        :func:`symseq.audit.shapes.declarations`) bound to this ledger's sizes through the rows the declarations
        name (Q is 3×2 here: T = 3, d_k = 2). A symbol two declarations give two values is left unbound."""
        pairs = [(decl.shape, self.L.shape(self.matrices[name_key(name)])) for decl in declarations
                 if len(decl.shape) == 2 for name in decl.names if name_key(name) in self.matrices]
        agreed = _agreed(pairs, key=lambda sym: name_key(str(sym)), skip=lambda sym: str(sym) in self.keys)
        return {k: sp.Integer(v) for k, v in agreed.items()}

    @property
    def values(self) -> "_Values":
        """The numbers of this ledger's rows at the two points (made on first use)."""
        if self._values is None:
            self._values = _Values(self.L)
        return self._values

    def symbol(self, key: str):
        """The symbol of the scalar row, or of the entry of a vector or matrix row, that ``key`` names (the ledger's
        own symbol: ``W_{x,00}``)."""
        name = self.keys.get(key)
        if name is not None:
            return self.L.symbol(name)
        entry = self.entries.get(key)
        if entry is None:
            raise _Unread(key)
        row, i, j = entry
        return self.L.entry_symbols(row)[i, j]

    def steps(self, key: str) -> list[str] | None:
        """The rows of the ledger numbered like ``key`` (``g_3^z``: ``g_0^z``, ``g_1^z``, ``g_2^z``), when at least
        two are and ``key``'s own number is not among them; else None."""
        m = _NUMBERED.fullmatch(key)
        if m is None:
            return None
        if self._numbered is None:
            self._numbered = {}
            for k, name in self.keys.items():
                n = _NUMBERED.fullmatch(k)
                if n:
                    self._numbered.setdefault((n.group(1), n.group(3)), []).append((int(n.group(2)), name))
        have = sorted(self._numbered.get((m.group(1), m.group(3)), []))
        return [name for _, name in have] if len(have) >= 2 and int(m.group(2)) not in dict(have) else None

    def matrix(self, key: str):
        """The entry symbols of the vector or matrix row ``key`` names (``\\mathbf z_t`` at t = 1: ``z_1``), else
        None."""
        name = self.matrices.get(key)
        if name is None and key in self.rows:  # q_1: row 1 of Q
            row, i = self.rows[key]
            return self.L.entry_symbols(row).row(i)
        return None if name is None else self.L.entry_symbols(name)

    def outside_entry(self, key: str) -> str | None:
        """What is wrong with ``key`` when it names an entry, by an index the row does not have, of a vector or
        matrix row of the ledger (``W_{x,02}`` of a 2×2 ``W_x``, ``x_{1,2}`` of a 1×2 ``x_1``), or a row or an entry
        of a capital's matrix (``q_7``, ``q_{7,0}`` of a 7×3 ``Q``); else None."""
        m = re.fullmatch(r"(?P<row>[^,]+),(?P<idx>\d+)(?P<sup>\^.*)?", key)
        name = None if m is None else self.matrices.get(m.group("row") + (m.group("sup") or ""))
        if name is None:
            return self._outside_family(key)
        rows, cols = self.L.shape(name)
        idx = m.group("idx")
        fits = (len(idx) == 2 and int(idx[0]) < rows and int(idx[1]) < cols) or \
            (len(idx) == 1 and (rows == 1 or cols == 1) and int(idx) < max(rows, cols))
        return None if fits else f"an entry that {name} ({rows}×{cols}) does not have"

    def _outside_family(self, key: str) -> str | None:
        """What is wrong with ``key`` when it names a row or an entry that a capital's matrix does not have
        (``q_7`` or ``q_{7,0}`` of a 7×3 ``Q``), or a matrix numbered otherwise than the ledger's (``h_6^{(2)}`` where
        it has ``H^(0)`` and ``H^{(1)}``); else None."""
        for family, name in self.families:
            f = family.fullmatch(key)
            if f:
                rows, cols = self.L.shape(name)
                if int(f.group(1)) >= rows or (f.group(2) is not None and int(f.group(2)) >= cols):
                    what = "a row" if f.group(2) is None else "an entry"
                    return f"{what} that {name} ({rows}×{cols}) does not have"
        for (c, head, bracket), have in self.layers.items():  # h_{6,0}^{(2)} of a ledger with H^(0) and H^(1)
            close = {"(": ")", "[": "]"}[bracket]
            f = re.fullmatch(f"[{c}{c.lower()}]{re.escape(head)}\\d+(?:,\\d+)?\\^{re.escape(bracket)}(\\d+)"
                             f"{re.escape(close)}", key)
            if f and len(have) >= 2 and int(f.group(1)) not in dict(have):
                return f"a number the ledger does not have (it has {', '.join(n for _, n in sorted(have))})"
        return None

    def partial(self, a: str, b: str):
        """∂a/∂b: the ledger's row of that name, else the local derivative of row ``a`` by ``b``."""
        for sym in ("∂", "d"):
            key = f"{sym}{a}/{sym}{b}"
            if key in self.keys or key in self.entries:
                return self.symbol(key)
            if key in self.matrices:
                return self.matrix(key)
        name_a, name_b = self.keys.get(a), self.keys.get(b)
        if name_a is None or name_b is None:
            raise _Unread(f"∂{a}/∂{b}")
        node = self.L[name_a].node
        sym_b = self.L.symbol(name_b)
        if node is None or sym_b not in node.expr.free_symbols:
            raise _Unread(f"∂{a}/∂{b}")
        return sp.diff(node.expr, sym_b)


class _Reader:
    """Reads one side of an equation into SymPy over a ledger's row symbols (see the module docstring)."""

    def __init__(self, text: str, bind: _Bind, env: dict, lenient: bool = False):
        self.text, self.pos, self.bind, self.env = text, 0, bind, env
        self.names = 0
        self.lenient = lenient  # a name numbered by a step, or an entry, the ledger does not have reads as an unknown
        self.outside: list = []  # (the name's key, what it names that the ledger lacks, whether that is a step)
        self.identity = 0  # the size of an identity matrix I_n read

    def _skip(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _peek(self, pattern: re.Pattern):
        self._skip()
        return pattern.match(self.text, self.pos)

    def read(self):
        v = self.expr()
        self._skip()
        if self.pos != len(self.text):
            raise _Unread(self.text[self.pos:])
        return v

    def _op(self, *ops: str) -> str | None:
        """The operator at the reading position when it is one of ``ops``, taken (the position moves past it)."""
        m = self._peek(_OP)
        if m is None or m.group(0) not in ops:
            return None
        self.pos = m.end()
        return m.group(0)

    def expr(self):
        v = self.term()
        while op := self._op("+", "-", "−"):
            w = self.term()
            if isinstance(v, sp.MatrixBase) != isinstance(w, sp.MatrixBase):  # 1 − z_t: the number at every entry
                shape = (v if isinstance(v, sp.MatrixBase) else w).shape
                v, w = (x if isinstance(x, sp.MatrixBase) else x * sp.ones(*shape) for x in (v, w))
            v = v + w if op == "+" else v - w
        return v

    def term(self):
        sign = 1
        while op := self._op("+", "-", "−"):
            sign = -sign if op != "+" else sign
        v = self.power()
        while True:
            op = self._op("\\cdot", "\\times", "\\odot", "*", "/")
            if op:
                w = self.power()
                if op == "\\odot":
                    if not (isinstance(v, sp.MatrixBase) and isinstance(w, sp.MatrixBase)):
                        raise _Unread("⊙ of scalars")
                    v = sp.matrix_multiply_elementwise(v, w)
                else:
                    v = v / w if op == "/" else v * w
                continue
            self._skip()
            ahead = self._peek(_OP)
            if self.pos >= len(self.text) or self.text[self.pos] == "," or \
                    (ahead and ahead.group(0) in ("+", "-", "−", ")", "]", "}", "^")):
                return sign * v
            v = v * self.power()

    def power(self):
        v = self.atom()
        self._skip()
        m = _TRANSPOSE.match(self.text, self.pos)
        if m and isinstance(v, sp.MatrixBase):
            self.pos = m.end()
            return v.T
        if self._op("^"):
            if self._take("{"):
                e = self.expr()
                self._close("}")
            else:
                m = _NUMBER.match(self.text, self.pos)
                if m is None or not m.group(0).isdigit():
                    raise _Unread("an exponent")
                self.pos, e = m.end(), sp.Integer(m.group(0))
            v = v ** e
        return v

    def _take(self, ch: str) -> bool:
        """Whether the text at the reading position (spaces skipped) is ``ch``, taken if so."""
        self._skip()
        if not self.text.startswith(ch, self.pos):
            return False
        self.pos += len(ch)
        return True

    def _close(self, ch: str):
        if not self._take(ch):
            raise _Unread(f"expected {ch}")

    def _group(self):
        if not self._take("{"):
            raise _Unread("a braced argument")
        v = self.expr()
        self._close("}")
        return v

    def atom(self):
        self._skip()
        t, p = self.text, self.pos
        for pat in (_PARTIAL_FRAC, _PARTIAL_SLASH):
            m = pat.match(t, p)
            if m:
                self.pos = m.end()
                self.names += 1
                return self.bind.partial(name_key(m.group("a"), self.env), name_key(m.group("b"), self.env))
        m = MATRIX_ENV.match(t, p)
        if m:  # \begin{bmatrix}W_{x,00}&W_{x,01}\\…\end{bmatrix}: read cell by cell
            self.pos = m.end()
            return self._matrix(m.group(2))
        m = _NABLA.match(t, p)
        if m:
            self.pos = m.end()
            loss = _NAME.match(t, self.pos)
            if loss is None or loss.end() == self.pos:
                raise _Unread("∇ of no name")
            self.pos = loss.end()
            self.names += 1
            return self.bind.partial(name_key(loss.group(0), self.env), name_key(m.group("b").strip("{} "), self.env))
        m = _SUM.match(t, p)
        if m:
            return self._sum(m)
        m = _FRAC.match(t, p)
        if m:
            self.pos = m.end()
            if m.group("d1"):
                return sp.Rational(int(m.group("d1")), int(m.group("d2")))
            num = sp.Integer(m.group("d3")) if m.group("d3") else self._group()
            return num / self._group()
        m = _SQRT.match(t, p)
        if m:  # \sqrt{d_k}, \sqrt 2
            self.pos = m.end()
            return sp.sqrt(self._group() if t.startswith("{", self.pos) else self.atom())
        m = _FUNC.match(t, p)
        if m:
            self.pos = m.end()
            f = _FUNCS[m.group("f") or m.group("g")]
            primes = len(m.group("primes") or "")
            self._skip()
            if not t.startswith("(", self.pos) or primes > 1 or (primes and f != "φ"):
                raise _Unread("a function not applied")
            self.pos += 1
            arg = self.expr()
            self._close(")")
            return self._apply(f, arg, primes)
        m = _BOLD_DIGIT.match(t, p)
        if m:  # \mathbf 0: a zero vector, compared entry by entry
            self.pos = m.end()
            return sp.Integer(m.group(1))
        m = _NUMBER.match(t, p)
        if m:
            if not m.group(0).isdigit():
                raise _Unread("a printed decimal: the page's arithmetic")
            self.pos = m.end()
            return sp.Integer(m.group(0))
        if t.startswith(("(", "[", "{"), p):
            close = {"(": ")", "[": "]", "{": "}"}[t[p]]
            self.pos += 1
            entries = [self.expr()]
            while close != "}" and self._take(","):  # (x_{t,0},x_{t,1}): a row vector of entries
                entries.append(self.expr())
            self._close(close)
            if len(entries) == 1:
                return entries[0]
            if any(isinstance(e, sp.MatrixBase) for e in entries):
                raise _Unread("a list of vectors")
            return sp.ImmutableMatrix([entries])
        m = _E_POWER.match(t, p)
        if m and "e" not in self.bind.keys and "e" not in self.bind.matrices:  # e^{S_{tj}}: exp, where e is no row
            self.pos = m.end()
            arg = self._group() if t.startswith("{", self.pos) else self.atom()
            return self._apply("exp", arg, 0)
        m = _NAME.match(t, p)
        if m and m.end() > p:
            self.pos = m.end()
            return self._name(m.group(0))
        raise _Unread(t[p:p + 12])

    def _matrix(self, body: str):
        rows = [r for r in body.split("\\\\") if r.strip()]
        cells = [r.split("&") for r in rows]
        if not cells or len({len(r) for r in cells}) != 1:
            raise _Unread("a ragged matrix")
        out = []
        for row in cells:
            out.append([])
            for cell in row:
                sub = _Reader(cell, self.bind, self.env, self.lenient)
                value = sub.read()
                if isinstance(value, sp.MatrixBase):
                    raise _Unread("a block matrix")
                self.names += sub.names
                self.outside += sub.outside
                out[-1].append(value)
        return sp.ImmutableMatrix(out)

    def _sum(self, m: re.Match):
        """``\\sum_{t=lo}^{hi}`` and the product that follows it, summed with the index bound at each value."""
        k = m.group("k")
        bounds = []
        for text in (m.group("lo"), m.group("hi").strip("{} ")):
            value = _index(text, self.env)
            if not re.fullmatch(r"-?\d+", value.strip()):  # d_k-1: a size the page declared, read as a number
                bound = _Reader(value, self.bind, self.env).read()
                if isinstance(bound, sp.Expr):  # a scalar row with an exact value (d_k = 2 as an input)
                    bound = bound.xreplace({x: self.bind.L.value(x.name) for x in bound.free_symbols
                                            if x.name in self.bind.L and self.bind.L[x.name].value is not None})
                if not isinstance(bound, sp.Integer):
                    raise _Unread("a sum's bound")
                value = str(bound)
            bounds.append(int(value))
        start, total, env = m.end(), None, self.env
        if bounds[1] < bounds[0] or bounds[1] - bounds[0] > 50:
            raise _Unread("a sum's range")
        for value in range(bounds[0], bounds[1] + 1):
            self.env, self.pos = {**env, k: value}, start
            term = self.term()
            total = term if total is None else total + term
        self.env = env
        return total

    def _apply(self, f: str, arg, primes: int):
        if isinstance(arg, sp.MatrixBase):
            return arg.applyfunc(lambda x: self._apply(f, x, primes))
        if f == "φ":
            if not primes:
                return self.bind.phi(arg)
            x = sp.Dummy("x")
            return sp.Subs(sp.Derivative(self.bind.phi(x), x), x, arg)
        return {"σ": sigmoid, "tanh": sp.tanh, "exp": sp.exp, "log": sp.log}[f](arg)

    def _name(self, text: str):
        transposed = _TRANSPOSE.search(text)
        if transposed and transposed.end() == len(text.rstrip()):  # W_x^\top: a matrix row transposed
            matrix = self.bind.matrix(name_key(text[:transposed.start()], self.env))
            if matrix is not None:
                self.names += 1
                return matrix.T
        key = name_key(text, self.env)
        matrix = self.bind.matrix(key)
        if matrix is not None:
            self.names += 1
            return matrix
        if key in self.bind.dims and key not in self.bind.keys:  # d_k: a size the page declared with a symbol
            return self.bind.dims[key]
        eye = re.fullmatch(r"I_(\d)", key)
        if eye and key not in self.bind.keys:  # I_2: the identity matrix of that size
            self.identity = int(eye.group(1))
            return sp.eye(self.identity)
        try:
            v = self.bind.symbol(key)
        except _Unread:
            m = re.fullmatch(r"(.+?)\^(\d)", key)  # x_1^2: a row squared
            steps = self.bind.steps(key) if self.lenient else None
            entry = self.bind.outside_entry(key) if self.lenient and steps is None else None
            if steps is not None or entry is not None:
                self.outside.append((key, f"a step that the ledger does not have (it has {', '.join(steps)})"
                                     if steps is not None else entry, steps is not None))
                v = sp.Dummy(key)
            elif m is None or "'" in key:
                raise
            else:
                v = self.bind.symbol(m.group(1)) ** int(m.group(2))
        self.names += 1
        return v


def _equations(body: str) -> list[list[str]]:
    """The sides of each equation of one formula: pieces cut at top-level commas and semicolons, sides at ``=``,
    up to the first ``\\approx`` (what follows is printed arithmetic); a piece with another relation is not an
    equation."""
    out = []
    for piece in split_top(body, ",;"):
        piece = split_top(piece, ("\\approx",))[0]  # q_6k_0^T = Σ q_{6,i}k_{0,i} ≈ (…) ≈ 0.672: up to ≈
        if "=" not in piece or re.search(r"\\(?:approx|simeq|le|ge|leq|geq|neq|ne|in|prod|mapsto|to|cdots|ldots|"
                                         r"dots|text|mathrm\{[A-Za-z]{4,})(?![A-Za-z])|[<>≈≤≥]", piece):
            continue
        sides = split_top(piece, "=")
        if not all(s.strip() for s in sides):
            continue
        sides = [s for s in sides if not any("." in m.group(0) for m in _NUMBER.finditer(s))]  # 1.0\cdot0.75: the
        # page's arithmetic decides a side of printed decimals
        if len(sides) >= 2:
            out.append(sides)
    return out


_SIGNED = SIGNED_NUMBER.pattern
_PRINTED = re.compile(rf"{_SIGNED}|[(\[]\s*{_SIGNED}(?:\s*,\s*{_SIGNED})+\s*[)\]]")  # 0.388; (-0.0248, 0.239)


def _valued(body: str) -> list[tuple[str, str, str]]:
    """(the name side, ``≈`` when the chain has one else ``=``, the printed value) of each piece of one formula
    that ends a chain from a name at a printed number or row of numbers: ``S_{60}\\approx\\frac{0.672}{\\sqrt3}
    \\approx0.388``, ``\\mathbf o_6^{[1]}\\approx(-0.0248,0.239,0.563)``, ``h_{-1}=0``."""
    out = []
    for piece in split_top(body, ",;"):
        if re.search(r"\\(?:le|ge|leq|geq|neq|ne|in|to|mapsto|cdots|ldots|dots|text)(?![A-Za-z])|[<>≤≥]", piece):
            continue
        sides = split_top(piece.replace("\\approx", "≈"), "=≈")
        if len(sides) < 2 or not (_PRINTED.fullmatch(sides[-1].strip()) or _printed_matrix(sides[-1])) or \
                _NUMBER.search(sides[0]) and not re.search(r"[A-Za-z]", sides[0]):
            continue
        out.append((sides[0].strip(), "≈" if "≈" in piece or "\\approx" in piece else "=", sides[-1].strip()))
    return out


def _printed_matrix(text: str) -> tuple[int, int] | None:
    """The shape of a matrix environment of printed numbers (``\\begin{bmatrix} 1&0\\\\0.5&1 \\end{bmatrix}``),
    else None."""
    m = MATRIX_ENV.fullmatch(text.strip())
    if m is None:
        return None
    rows = [[c.strip() for c in r.split("&")] for r in m.group(2).split("\\\\") if r.strip()]
    if not rows or len({len(r) for r in rows}) != 1 or \
            not all(re.fullmatch(SIGNED_NUMBER.pattern, c) for r in rows for c in r):
        return None
    return len(rows), len(rows[0])


def _check_value(side: str, rel: str, printed: str, binds: list) -> tuple[bool, str, str, str] | None:
    """None when no ledger binds ``side`` (a name, with no index letter) to one value; else (holds, why not, the
    value as the page would print it, the ledger's title) for the printed value after ``rel``, decided as a claim
    of that value is (:func:`symseq.verify.claims.check_claim`): it holds when it holds on one of the ledgers that
    bind it. A printed matrix must have the row's shape; a row the ledger does not have is named."""
    from ..verify.claims import Claim, check_claim

    if _letters([side], binds):
        return None
    verdicts, grid = [], _printed_matrix(printed)
    for bind in binds:
        try:
            reader = _Reader(side, bind, {})
            expr = reader.read()
            if not reader.names:
                continue
            nums = bind.values.numbers(expr)
        except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
            # \mathbf h_7^{(0)} of a 7-row H^(0): the name read as both sides (_lacking asks two sides with names)
            lacking = _lacking([side, side], bind, [{}], steps=True)
            if lacking:
                verdicts.append((False, f"{lacking[0]} names {lacking[1]} (the derivation's ledger {bind.L.title!r})",
                                 "—", bind.L.title))
            continue
        half = len(nums) // 2
        if _differ(nums[:half], nums[half:]):
            continue  # it reads a leaf with no value (a symbol): no number to print
        entries = [exact(decimal_text(x, DIGITS)) for x in nums[:half]]  # to 30 digits, as a decimal
        if grid is not None:  # a printed matrix: the row's shape, then its entries
            shape = expr.shape if isinstance(expr, sp.MatrixBase) else (1, 1)
            if shape != grid:
                verdicts.append((False, f"{' '.join(side.split())} is {shape[0]}×{shape[1]} in the derivation's "
                                        f"ledger {bind.L.title!r}, but the page prints a {grid[0]}×{grid[1]} matrix",
                                 "—", bind.L.title))
                continue
            value = sp.ImmutableMatrix(*shape, entries)
            result = check_claim(Claim(printed, "value", value, exact=False if rel == "≈" else None), dps=DIGITS)
            if result.status in ("ok", "mismatch"):
                verdicts.append((result.ok, f"{' '.join(side.split())} differs from the derivation's ledger "
                                            f"{bind.L.title!r}: {'; '.join(result.wrong[:2])}", "—", bind.L.title))
            continue
        listed = printed.startswith(("(", "["))
        if listed != (len(entries) > 1) or (listed and len(entries) != len(split_top(printed[1:-1], ","))):
            continue
        value = sp.ImmutableMatrix([entries]) if listed else entries[0]
        result = check_claim(Claim(printed, "value", value, exact=False if rel == "≈" else None), dps=DIGITS)
        if result.status not in ("ok", "mismatch"):
            continue
        shown = ", ".join(result.rounded) if result.rounded else ", ".join(short(x) for x in nums[:half])
        shown = f"({shown})" if listed else shown
        verdicts.append((result.ok, f"{' '.join(side.split())} is {shown} in the derivation's ledger "
                                    f"{bind.L.title!r}, not {printed}", shown, bind.L.title))
    if not verdicts:
        return None
    return next((v for v in verdicts if v[0]), verdicts[0])


def _letters(sides: list[str], binds: list = ()) -> set:
    """The index letters of an equation's subscripts: ``t`` of ``h_{t-1}`` and ``x_t``, ``t`` and ``s`` of
    ``S_{ts}``; not the letter of a name one of ``binds`` knows as it is written (the k of ``d_k``), nor a sum's
    own letter."""
    out = set()
    text = "".join(sides)
    for name in _NAME.finditer(_SUM.sub(" ", text)):  # (a sum's header is no name: \sum_{i=0}^{d_k-1})
        if not name.group("scripts") or any(name_key(name.group(0)) in b.names for b in binds):
            continue
        scripts = name.group("scripts")
        for m in re.finditer(r"_\s*(?:\{\s*([a-z])\s*(?:[-+]\s*\d+\s*)?[,}]|([a-z])(?![A-Za-z]))", scripts):
            out.add(m.group(1) or m.group(2))
        for m in re.finditer(r"_\s*\{\s*([a-z0-9])([a-z0-9])\s*\}", scripts):  # S_{ts}, S_{6j}: two positions
            out.update(ch for ch in m.groups() if not ch.isdigit())
    summed = {m.group("k") for m in _SUM.finditer(text)}  # a sum's own letter is bound by the sum
    return out & set("tsijk") - summed


class _Values:
    """Numbers for an equation's sides on one ledger: a leaf (or a leaf's entry) at its exact value or at a fixed
    random rational, every other row from its own definition over the rows it reads, φ as tanh."""

    def __init__(self, L):
        self.L, self.forms, self.cache = L, {}, {}
        self.owner: dict = {}  # the symbol of a row or of a row's entry -> (row, i, j)
        for it in L.rows:
            if it.shape == ():
                self.owner[it.symbol] = (it.name, None, None)
            else:
                for (i, j), sym in zip(((i, j) for i in range(it.shape[0]) for j in range(it.shape[1])),
                                       L.entry_symbols(it.name)):
                    self.owner[sym] = (it.name, i, j)
        rng = random.Random(f"bound {L.title}")
        self.points = []
        for _ in range(2):
            point = {}
            for it in L.leaves:
                syms = [it.symbol] if it.shape == () else list(L.entry_symbols(it.name))
                values = [it.value] if it.shape == () else \
                    (list(it.value) if it.value is not None else [None] * len(syms))
                for sym, value in zip(syms, values):
                    point[sym] = sp.sympify(value) if value is not None else \
                        sp.Rational(rng.randint(-90, 90), rng.randint(11, 97))
            self.points.append(point)

    def numbers(self, expr) -> list:
        """The value of ``expr`` (over this ledger's row and entry symbols; a matrix entry by entry) at each point,
        to :data:`DIGITS`."""
        out = []
        for k in range(len(self.points)):
            for item in (list(expr) if isinstance(expr, sp.MatrixBase) else [expr]):
                e = item.subs({s: self._number(s, k) for s in item.free_symbols})
                with mpmath.workdps(DIGITS + 10):
                    out.append(mpmath.mpf(str(self._real(e))))
        return out

    def _number(self, sym, k: int):
        """The value of one row or entry symbol at point ``k``, computed once, from the row's definition over the
        rows it reads (their values computed the same way)."""
        key = (sym, k)
        if key not in self.cache:
            point = self.points[k]
            if sym in point:
                self.cache[key] = point[sym]
            elif sym in self.owner:
                name, i, j = self.owner[sym]
                if name not in self.forms:
                    self.forms[name] = self.L.closed_forms([name], keep=set(self.L.order) - {name})[name]
                form = self.forms[name] if i is None else self.forms[name][i, j]
                self.cache[key] = self._real(form.subs({s: self._number(s, k) for s in form.free_symbols}))
            else:
                raise _Unread(f"{sym} has no value")
        return self.cache[key]

    @staticmethod
    def _real(e) -> sp.Float:
        """``e`` with φ as tanh, as a real number of :data:`DIGITS` + 10 digits."""
        e = e.replace(lambda f: isinstance(f, sp.core.function.AppliedUndef), lambda f: sp.tanh(*f.args))
        n = sp.N(e.doit(), DIGITS + 10)
        if not n.is_number or n.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or not n.is_real:
            raise _Unread("no value at the points")
        return n


def _differ(a: list, b: list) -> bool:
    with mpmath.workdps(DIGITS + 10):
        return any(abs(x - y) > mpmath.mpf(10) ** (-DIGITS + 8) * (1 + abs(x) + abs(y)) for x, y in zip(a, b))


def _show(expr) -> str:
    """A ledger row's definition as the report prints it: ``g_0^h·φ′(z_0)``."""
    text = re.sub(r"Derivative\((\w+)\(([^()]+)\), \2\)", r"\1′(\2)", sp.sstr(expr))
    return text.replace("phi", "φ").replace("**", "^").replace("*", "·")


def _bound_env(env: dict, bind: _Bind, last) -> dict:
    """``env`` with ``T``, the ledger's number of steps, when the equation writes ``h_{T-1}`` (``last``)."""
    return {**env, "T": bind.steps_count} if last and bind.steps_count else env


def _lacking(sides: list[str], bind: _Bind, envs: list, *, steps: bool) -> tuple | None:
    """(key, what it names) of the first name of an equation that names an entry the ledger's row does not have, or
    (when ``steps``) a step the ledger does not have, at an index binding where every other name binds; else
    None. A step is not judged in an equation over an index letter (``h_{t-1}`` at t = 0 may be a row the
    ledger leaves out)."""
    for env in envs:
        try:
            readers = [_Reader(s, bind, env, lenient=True) for s in sides]
            for r in readers:
                r.read()
        except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
            continue
        outside = [(key, what) for r in readers for key, what, is_step in r.outside if steps or not is_step]
        if outside and len(outside) == sum(len(r.outside) for r in readers) and \
                sum(r.names > 0 for r in readers) >= 2:
            return outside[0]
    return None


def _reads(sides: list[str], bind: _Bind, env: dict) -> bool:
    """Whether every side of an equation reads on ``bind`` with the index letters bound as in ``env``."""
    try:
        for side in sides:
            _Reader(side, bind, env).read()
    except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
        return False
    return True


def _check(sides: list[str], binds: list) -> tuple[bool, str, str] | None:
    """None when no ledger binds the equation; else (holds, why not, the bound row's definition or "—") over the
    ledgers that bind it at some step: it holds when it holds on one of them at every step it is bound at."""
    letters = _letters(sides, binds)
    if letters and any(_reads(sides, bind, {}) for bind in binds):
        letters = set()  # a subscript of a name the ledger binds as it is written, no index
    if len(letters) > 2:
        return None
    envs = [dict(zip(sorted(letters), ks)) for ks in itertools.product(STEPS, repeat=len(letters))]
    verdicts = []
    last = re.search(r"[_^]\s*\{\s*T\s*(?:-\s*\d+\s*)?[,}]", "".join(sides))  # h_{T-1}, ^{T-1}: the last step
    for bind in binds:
        bound, ok, why, correct = 0, True, "", "—"
        for env in envs:
            env = _bound_env(env, bind, last)
            try:
                readers = [_Reader(s, bind, env) for s in sides]
                exprs = [r.read() for r in readers]
            except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
                continue
            # a 1×1 product (q_t k_sᵀ) is the number it holds
            exprs = [e[0, 0] if isinstance(e, sp.MatrixBase) and e.shape == (1, 1) else e for e in exprs]
            if sum(r.names > 0 for r in readers) < 2 and not (len(sides) == 2 and readers[0].names):
                continue  # a formula of numbers alone
            shapes = {e.shape for e in exprs if isinstance(e, sp.MatrixBase)}
            eyes = [i for i, r in enumerate(readers) if r.identity and exprs[i] == sp.eye(r.identity)]
            others = {e.shape for i, e in enumerate(exprs) if i not in eyes and isinstance(e, sp.MatrixBase)}
            if len(shapes) > 1 and len(eyes) == 1 and len(others) == 1:  # W_V = I_3 for a 2×2 W_V
                eye, other = readers[eyes[0]].identity, next(iter(others))
                bound, ok, correct = bound + 1, False, f"I_{other[0]}" if other[0] == other[1] else "—"
                named = next(i for i in range(len(sides)) if i not in eyes)
                why = (f"I_{eye} is {eye}×{eye}, but {' '.join(sides[named].split())} is {other[0]}×{other[1]} in "
                       f"the derivation's ledger {bind.L.title!r}")
                break
            if len(shapes) > 1 or (shapes and any(not isinstance(e, sp.MatrixBase) and e != 0 for e in exprs)):
                continue  # sides of two shapes: a convention this reader does not know (a column for a row)
            if shapes:  # a printed 0 beside a vector is its zero vector
                exprs = [e if isinstance(e, sp.MatrixBase) else sp.zeros(*next(iter(shapes))) for e in exprs]
            try:
                nums = [bind.values.numbers(e) for e in exprs]
            except (_Unread, TypeError, ValueError, ZeroDivisionError):
                continue
            bound += 1
            ref = next(i for i, r in enumerate(readers) if r.names)
            for i, n in enumerate(nums):
                if i != ref and _differ(nums[ref], n):
                    ok = False
                    lhs = exprs[ref]
                    shown = getattr(bind.L[lhs.name].node, "expr", None) if isinstance(lhs, sp.Symbol) and \
                        lhs.name in bind.L else None
                    at = f" at {', '.join(f'{k} = {v}' for k, v in env.items())}" if env else ""
                    why = (f"{' '.join(sides[i].split())} ≠ {' '.join(sides[ref].split())}{at} in the "
                           f"derivation's ledger {bind.L.title!r}")
                    correct = f"{lhs.name} = {_show(shown)}" if shown is not None else "—"
                    break
            if not ok:
                break
        if not bound:  # a step or an entry the ledger does not have, in an equation it otherwise binds
            lacking = _lacking(sides, bind, [_bound_env(env, bind, last) for env in envs], steps=not letters)
            if lacking:
                verdicts.append((False, f"{lacking[0]} names {lacking[1]} (the derivation's ledger "
                                        f"{bind.L.title!r})", "—"))
                continue
        if bound:
            verdicts.append((ok, why, correct))
    if not verdicts:
        return None
    if any(v[0] for v in verdicts):
        return True, "", "—"
    return verdicts[0]


def check(doc, derivations: list, sections: list, *, checked: list | None = None,
          held: list | None = None) -> list[Broken]:
    """The equations of each located section's mathematics that a ledger of that section binds and finds false
    (see the module docstring), as :class:`~symseq.audit.arithmetic.Broken` at their lines.

    Args:
        doc: the page (:class:`~symseq.read.document.Document`).
        derivations: the derivations audited, their sections built (ledgers kept).
        sections: (derivation name, section title, (first line, last line) or None) of each section in the
            derivations' order, as the audit located them (:attr:`AuditReport.sections`).
        checked: when given, (line, the equation, whether it holds) is appended to it for each equation a ledger
            bound and decided: what the report lists as the formulas it checked.
        held: when given, (line, first column, last column, the printed value, the chain, the ledger's title) is
            appended to it for each printed value of a bound name that holds: the numbers it accounts for.
    """
    by_line: dict = {}
    where = {(d, t): span for d, t, span in sections}
    for d in derivations:
        for s in d.sections:
            span = where.get((d.name, s.title))
            if span is None or not s.ledgers:
                continue
            for line in range(span[0], span[1] + 1):
                by_line.setdefault(line, []).extend((L, s.page_names.get(id(L), {}), s.page_sizes.get(id(L), {}))
                                                    for L in s.ledgers)
    if not by_line:
        return []
    from .shapes import declarations

    declared, binds = declarations(doc), {}  # each ledger's binding, by id, made on first use
    out, seen = _declared(declared, by_line, binds, checked), 0
    for line, start, end, body, texts in formula_bodies(doc, by_line):  # (texts: a display over several lines)
        mine, plain = _binds_at(line, by_line, binds, declared), plain_formula(body)
        for sides in _equations(plain):
            seen += 1
            if seen > MAX_PIECES:
                return out
            verdict = _check(sides, mine)
            k = 0 if texts is None or verdict is None else line_of(sides, texts)
            if verdict is not None and checked is not None:
                checked.append((line + k, " = ".join(" ".join(x.split()) for x in sides), verdict[0]))
            if verdict is None or verdict[0]:
                continue
            why = f"the formula does not hold: {verdict[1]}"
            if texts is None:
                out.append(Broken(line, start, end, body.strip(), why, verdict[2]))
                break
            out.append(Broken(line + k, 0, len(doc.lines[line + k - 1]), texts[k].strip(), why, verdict[2]))
        for side, rel, printed in _valued(plain):  # a bound name's printed value
            verdict = _check_value(side, rel, printed, mine)
            if verdict is None:
                continue
            k = 0 if texts is None else line_of([side, printed], texts)
            chain = f"{' '.join(side.split())} {rel} {printed}"
            if checked is not None:
                checked.append((line + k, chain, verdict[0]))
            where = (start, end, body.strip()) if texts is None else \
                (0, len(doc.lines[line + k - 1]), texts[k].strip())
            if verdict[0] and held is not None:
                held.append((line + k, where[0], where[1], printed, chain, verdict[3]))
            if not verdict[0] and all(b.line != line + k for b in out):  # (one failure per line: its equation's)
                out.append(Broken(line + k, *where, f"the printed value does not hold: {verdict[1]}", verdict[2]))
    return out


def _declared(declared: list, by_line: dict, binds: dict, checked: list | None) -> list[Broken]:
    """The shapes the page declares with symbols for rows of a section's ledgers (``E_{\\mathrm{vocab}}\\in
    \\mathbb R^{K\\times D}``), each checked against its row with the sizes the section gives
    (``s.use(L, sizes={"K": 9, "D": 5})``) or, for the others, the sizes the page's other declarations for that
    ledger's rows give where they agree: a declaration of another shape than its row's is an erratum at its line.
    A size left open, or given two values, decides nothing."""
    from .shapes import show_shape

    by_bind: dict = {}  # id(binding) -> (binding, [(declaration, its row's shape)])
    for decl in declared:
        if len(decl.shape) != 2 or decl.expression or not any(sp.sympify(n).free_symbols for n in decl.shape):
            continue
        for bind in _binds_at(decl.line, by_line, binds, declared):
            rows = {bind.matrices.get(name_key(n)) for n in decl.names}
            if len(rows) == 1 and None not in rows:
                by_bind.setdefault(id(bind), (bind, []))[1].append((decl, bind.L.shape(rows.pop())))
    verdicts: dict = {}  # id(declaration) -> (declaration, [whether it fits on each ledger that decides it], why, fix)
    for bind, decls in by_bind.values():
        for j, (decl, shape) in enumerate(decls):
            sizes = _agreed([(other.shape, other_shape) for k, (other, other_shape) in enumerate(decls) if k != j])
            sizes.update({sym: int(bind.sizes[name_key(str(sym))]) for size in decl.shape
                          for sym in sp.sympify(size).free_symbols if name_key(str(sym)) in bind.sizes})
            read = tuple(sp.sympify(sp.sympify(size).xreplace(sizes)) for size in decl.shape)  # 2d_v, d_v = 2: 4
            if not all(n.is_Integer for n in read):
                continue  # a size left open
            read = tuple(int(n) for n in read)
            entry = verdicts.setdefault(id(decl), [decl, [], "", "—"])
            entry[1].append(read == shape)
            if read != shape and not entry[2]:
                given = ", ".join(dict.fromkeys(f"{sym} = {sizes[sym]}" for size in decl.shape
                                                for sym in sorted(sp.sympify(size).free_symbols, key=str)))
                entry[2] = (f"{', '.join(decl.names)} is {shape[0]}×{shape[1]} in the derivation's ledger "
                            f"{bind.L.title!r}, but {decl.text.strip('{}')} is {read[0]}×{read[1]} with {given}")
                flipped = tuple(reversed(read))
                entry[3] = show_shape(tuple(reversed(decl.shape))) if flipped == shape else "—"
    out = []
    for decl, fits, why, fix in verdicts.values():
        if checked is not None:
            checked.append((decl.line, f"{', '.join(decl.names)} ∈ ℝ^{{{decl.text.strip('{}')}}}", any(fits)))
        if not any(fits):
            out.append(Broken(decl.line, decl.start, decl.end, decl.text, f"the declared shape does not hold: {why}",
                              fix))
    return out


def _agreed(pairs, key=lambda sym: sym, skip=lambda sym: False) -> dict:
    """``{key(symbol): size}`` for each size symbol of the declared shapes in ``pairs`` ((declared shape, the shape
    of the row it names)) that every pair giving it gives the same size: T×d_k over a 3×2 row makes T = 3, d_k = 2;
    a symbol given two sizes, or one ``skip`` names, is left out."""
    seen: dict = {}
    for declared, shape in pairs:
        for size, n in zip(declared, shape):
            if isinstance(size, sp.Symbol) and not skip(size):
                seen.setdefault(key(size), set()).add(n)
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


def _binds_at(line: int, by_line: dict, binds: dict, declarations) -> list:
    """The bindings of the ledgers of the sections located over ``line`` (each made once per set of the page's names
    a section gives its rows, kept in ``binds``, its sizes bound through the page's ``declarations``)."""
    mine = []
    for L, names, sizes in by_line.get(line, []):
        key = (id(L), tuple(sorted(names.items())), tuple(sorted(sizes.items())))
        if key not in binds:
            binds[key] = _Bind(L, declarations, names, sizes)
        if all(b is not binds[key] for b in mine):
            mine.append(binds[key])
    return mine
