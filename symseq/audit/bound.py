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
* a subscript over one index letter (``h_{t-1}``, ``x_t``) is bound at every step ``t = 0 … 9`` at which every
  name of the equation is a row, and the equation is checked at each;
* ``\\phi`` is the ledger's general activation (an undefined function; ``\\phi'`` its derivative), ``\\sigma`` the
  logistic sigmoid, ``\\tanh`` and ``\\exp`` themselves; ``e`` is a name (the prediction error ``e`` of a
  backward pass), so an equation with ``e^{…}`` is not read.

The sides are compared as numbers: every row is expanded to the ledger's leaves, a leaf takes the ledger's exact
value when it has one (``h_{−1} = 0``) and otherwise a fixed random rational, an undefined activation becomes
``tanh``, and the two sides must agree to 30 digits at two such points. Rules, kept narrow so a correct page is
never failed: only scalar rows are bound (a vector's formula is the shapes' and the claims' business); an
equation is read only when the reader reads all of it and binds every name in it; printed decimals leave it to the
page's arithmetic; a side with no bound name at all is not compared.

Source: issue 39, "a printed formula for a bound name is evaluated with the bound values and compared with the
row"; "a subscript that names a time step or a position is bound like a name".
"""

from __future__ import annotations

import random
import re
import unicodedata

import mpmath
import sympy as sp

from ..functions import sigmoid
from ..read import NUMBER
from ..read.page import split_top
from .arithmetic import Broken
from .words import math_bodies, plain_formula

MAX_PIECES = 600  # equations checked per page (bounded work)
STEPS = range(10)  # the values an index letter of a subscript is bound to
DIGITS = 30

_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "theta": "θ",
          "lambda": "λ", "mu": "μ", "tau": "τ", "eta": "η", "rho": "ρ", "omega": "ω", "psi": "ψ", "xi": "ξ"}
_ACCENT = {"widehat": "\u0302", "hat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "bar": "\u0304"}
_SCRIPT = r"(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])"
_NAME = re.compile(r"(?P<wrap>\\(?:mathbf|boldsymbol|bm|mathit|mathcal|widehat|hat|tilde|widetilde|bar)\s*)?"
                   r"(?P<base>\{\s*[A-Za-z]\s*\}|[A-Za-z]|\\(?:" + "|".join(_GREEK) + r")(?![A-Za-z]))"
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
_OP = re.compile(r"\\cdot(?![A-Za-z])|\\times(?![A-Za-z])|[-+*/()\[\]{}^]|−")


_NUMBERED = re.compile(r"(.+?_)(-?\d{1,2})((?:\^.*)?)")  # a key numbered by a step: g_3^z, h_-1, x_2


class _Unread(Exception):
    """An equation this reader does not read, or whose names are not all rows: it is left alone."""


def _index(script: str, env: dict) -> str:
    """A subscript's text with its index letter bound (``t-1`` at t = 2 is ``1``, ``t`` is ``2``); any other
    subscript as it is."""
    m = re.fullmatch(r"\s*([A-Za-z])\s*([-+])\s*(\d+)\s*", script)
    if m and m.group(1) in env:
        v = env[m.group(1)] + (int(m.group(3)) if m.group(2) == "+" else -int(m.group(3)))
        return str(v)
    if len(script.strip()) == 1 and script.strip() in env:
        return str(env[script.strip()])
    return script


def name_key(text: str, env: dict | None = None) -> str:
    """The ledger key of a name as the page writes it: ``\\mathbf h_{t-1}`` at t = 2 is ``h_1``, ``\\widehat y``
    is ``ŷ``, ``\\mathcal L`` is ``ℒ``, ``g_0^z`` is ``g_0^z``, ``h_{-1}`` is ``h_-1`` (braces and spaces dropped:
    see :func:`ledger_key`)."""
    m = _NAME.fullmatch(text.strip())
    if m is None:
        return re.sub(r"[{}\s]", "", text)
    base = m.group("base").strip("{} ")
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
        if sm.group(1) == "_" and env:
            body = _index(body, env)
        out += sm.group(1) + body
    return re.sub(r"[{}\s]", "", out + m.group("primes"))


def ledger_key(name: str) -> str:
    """A ledger row's name keyed as :func:`name_key` keys the page's: ``h_{-1}`` is ``h_-1``."""
    return unicodedata.normalize("NFC", re.sub(r"[{}\s]", "", name))


class _Bind:
    """The rows of one ledger by key, and the SymPy objects an equation over them is built from."""

    def __init__(self, L):
        self.L = L
        self.keys = {ledger_key(n): n for n in L.order if L.shape(n) == ()}
        self.phi = sp.Function("φ")
        self._numbered = None
        self._values = None

    @property
    def values(self) -> "_Values":
        """The numbers of this ledger's rows at the two points (made on first use)."""
        if self._values is None:
            self._values = _Values(self.L)
        return self._values

    def symbol(self, key: str):
        name = self.keys.get(key)
        if name is None:
            raise _Unread(key)
        return self.L.symbol(name)

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

    def partial(self, a: str, b: str):
        """∂a/∂b: the ledger's row of that name, else the local derivative of row ``a`` by ``b``."""
        for sym in ("∂", "d"):
            key = f"{sym}{a}/{sym}{b}"
            if key in self.keys:
                return self.symbol(key)
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
        self.lenient = lenient  # a name numbered by a step the ledger does not have reads as an unknown
        self.outside: list = []  # (the name's key, the steps the ledger has)

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
            v = v + w if op == "+" else v - w
        return v

    def term(self):
        sign = 1
        while op := self._op("+", "-", "−"):
            sign = -sign if op != "+" else sign
        v = self.power()
        while True:
            op = self._op("\\cdot", "\\times", "*", "/")
            if op:
                w = self.power()
                v = v / w if op == "/" else v * w
                continue
            self._skip()
            ahead = self._peek(_OP)
            if self.pos >= len(self.text) or (ahead and ahead.group(0) in ("+", "-", "−", ")", "]", "}", "^")):
                return sign * v
            v = v * self.power()

    def power(self):
        v = self.atom()
        if self._op("^"):
            self._skip()
            if self.text.startswith("{", self.pos):
                self.pos += 1
                e = self.expr()
                self._close("}")
            else:
                m = _NUMBER.match(self.text, self.pos)
                if m is None or not m.group(0).isdigit():
                    raise _Unread("an exponent")
                self.pos, e = m.end(), sp.Integer(m.group(0))
            v = v ** e
        return v

    def _close(self, ch: str):
        self._skip()
        if not self.text.startswith(ch, self.pos):
            raise _Unread(f"expected {ch}")
        self.pos += 1

    def _group(self):
        self._skip()
        if not self.text.startswith("{", self.pos):
            raise _Unread("a braced argument")
        self.pos += 1
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
        m = _FRAC.match(t, p)
        if m:
            self.pos = m.end()
            if m.group("d1"):
                return sp.Rational(int(m.group("d1")), int(m.group("d2")))
            num = sp.Integer(m.group("d3")) if m.group("d3") else self._group()
            return num / self._group()
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
        m = _NUMBER.match(t, p)
        if m:
            if not m.group(0).isdigit():
                raise _Unread("a printed decimal: the page's arithmetic")
            self.pos = m.end()
            return sp.Integer(m.group(0))
        if t.startswith(("(", "[", "{"), p):
            close = {"(": ")", "[": "]", "{": "}"}[t[p]]
            self.pos += 1
            v = self.expr()
            self._close(close)
            return v
        m = _NAME.match(t, p)
        if m and m.end() > p:
            self.pos = m.end()
            return self._name(m.group(0))
        raise _Unread(t[p:p + 12])

    def _apply(self, f: str, arg, primes: int):
        if f == "φ":
            if not primes:
                return self.bind.phi(arg)
            x = sp.Dummy("x")
            return sp.Subs(sp.Derivative(self.bind.phi(x), x), x, arg)
        return {"σ": sigmoid, "tanh": sp.tanh, "exp": sp.exp, "log": sp.log}[f](arg)

    def _name(self, text: str):
        key = name_key(text, self.env)
        try:
            v = self.bind.symbol(key)
        except _Unread:
            m = re.fullmatch(r"(.+?)\^(\d)", key)  # x_1^2: a row squared
            steps = self.bind.steps(key) if self.lenient else None
            if steps is not None:
                self.outside.append((key, steps))
                v = sp.Dummy(key)
            elif m is None or "'" in key:
                raise
            else:
                v = self.bind.symbol(m.group(1)) ** int(m.group(2))
        self.names += 1
        return v


def _equations(body: str) -> list[list[str]]:
    """The sides of each equation of one formula: pieces cut at top-level commas and semicolons, sides at ``=``;
    a piece with another relation is not an equation."""
    out = []
    for piece in split_top(body, ",;"):
        if "=" not in piece or re.search(r"\\(?:approx|simeq|le|ge|leq|geq|neq|ne|in|sum|prod|mapsto|to|cdots|ldots|"
                                         r"dots|text|mathrm\{[A-Za-z]{4,})(?![A-Za-z])|[<>≈≤≥]", piece):
            continue
        sides = split_top(piece, "=")
        if len(sides) >= 2 and all(s.strip() for s in sides):
            out.append(sides)
    return out


def _letters(sides: list[str]) -> set:
    """The index letters of an equation's subscripts: ``t`` of ``h_{t-1}`` and ``x_t``."""
    out = set()
    for m in re.finditer(r"_\s*(?:\{\s*([a-z])\s*(?:[-+]\s*\d+\s*)?\}|([a-z])(?![A-Za-z]))", "".join(sides)):
        out.add(m.group(1) or m.group(2))
    return out & set("tsijk")


class _Values:
    """Numbers for an equation's sides on one ledger: every row expanded to the leaves, a leaf at its exact value
    or at a fixed random rational, φ as tanh."""

    def __init__(self, L):
        self.L, self.forms = L, {}
        rng = random.Random(f"bound {L.title}")
        self.points = []
        leaves = [it for it in L.leaves if L.shape(it.name) == ()]
        for _ in range(2):
            point = {}
            for it in leaves:
                point[L.symbol(it.name)] = sp.sympify(it.value) if it.value is not None else \
                    sp.Rational(rng.randint(-90, 90), rng.randint(11, 97))
            self.points.append(point)

    def numbers(self, expr) -> list:
        rows = [s for s in expr.free_symbols if s.name in self.L and not self.L[s.name].is_leaf]
        missing = [s.name for s in rows if s.name not in self.forms]
        if missing:
            self.forms.update(self.L.closed_forms(missing))
        e = expr.subs({s: self.forms[s.name] for s in rows}) if rows else expr
        e = e.replace(lambda f: isinstance(f, sp.core.function.AppliedUndef), lambda f: sp.tanh(*f.args))
        out = []
        for point in self.points:
            n = sp.N(e.subs(point).doit(), DIGITS)
            if not n.is_number or n.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or not n.is_real:
                raise _Unread("no value at the points")
            out.append(mpmath.mpf(str(n)))
        return out


def _differ(a: list, b: list) -> bool:
    return any(abs(x - y) > mpmath.mpf(10) ** (-DIGITS + 8) * (1 + abs(x) + abs(y)) for x, y in zip(a, b))


def _show(expr) -> str:
    """A ledger row's definition as the report prints it: ``g_0^h·φ′(z_0)``."""
    text = re.sub(r"Derivative\((\w+)\(([^()]+)\), \2\)", r"\1′(\2)", sp.sstr(expr))
    return text.replace("phi", "φ").replace("**", "^").replace("*", "·")


def _check(sides: list[str], binds: list) -> tuple[bool, str, str] | None:
    """None when no ledger binds the equation; else (holds, why not, the bound row's definition or "—") over the
    ledgers that bind it at some step: it holds when it holds on one of them at every step it is bound at."""
    letters = _letters(sides)
    if len(letters) > 1:
        return None
    envs = [{}] if not letters else [{next(iter(letters)): k} for k in STEPS]
    verdicts = []
    for bind in binds:
        bound, ok, why, correct = 0, True, "", "—"
        for env in envs:
            try:
                readers = [_Reader(s, bind, env) for s in sides]
                exprs = [r.read() for r in readers]
            except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
                continue
            if sum(r.names > 0 for r in readers) < 2 and not (len(sides) == 2 and readers[0].names):
                continue  # a formula of numbers alone
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
                    shown = bind.L[lhs.name].node.expr if isinstance(lhs, sp.Symbol) and \
                        bind.L[lhs.name].node is not None else None
                    at = f" at {', '.join(f'{k} = {v}' for k, v in env.items())}" if env else ""
                    why = (f"{' '.join(sides[i].split())} ≠ {' '.join(sides[ref].split())}{at} in the "
                           f"derivation's ledger {bind.L.title!r}")
                    correct = f"{lhs.name} = {_show(shown)}" if shown is not None else "—"
                    break
            if not ok:
                break
        if not bound and not letters:  # a step the ledger does not have, in an equation it otherwise binds
            try:
                readers = [_Reader(s, bind, {}, lenient=True) for s in sides]
                for r in readers:
                    r.read()
            except (_Unread, ZeroDivisionError, TypeError, ValueError, AttributeError):
                readers = []
            outside = [o for r in readers for o in r.outside]
            if outside and sum(r.names > 0 for r in readers) >= 2:
                key, steps = outside[0]
                verdicts.append((False, f"{key} names a step that the derivation's ledger {bind.L.title!r} does not "
                                        f"have (it has {', '.join(steps)})", "—"))
                continue
        if bound:
            verdicts.append((ok, why, correct))
    if not verdicts:
        return None
    if any(v[0] for v in verdicts):
        return True, "", "—"
    return verdicts[0]


def check(doc, derivations: list, sections: list) -> list[Broken]:
    """The equations of each located section's mathematics that a ledger of that section binds and finds false
    (see the module docstring), as :class:`~symseq.audit.arithmetic.Broken` at their lines.

    Args:
        doc: the page (:class:`~symseq.read.document.Document`).
        derivations: the derivations audited, their sections built (ledgers kept).
        sections: (derivation name, section title, (first line, last line) or None) of each section in the
            derivations' order, as the audit located them (:attr:`AuditReport.sections`).
    """
    by_line: dict = {}
    where = {(d, t): span for d, t, span in sections}
    for d in derivations:
        for s in d.sections:
            span = where.get((d.name, s.title))
            if span is None or not s.ledgers:
                continue
            for line in range(span[0], span[1] + 1):
                by_line.setdefault(line, []).extend(s.ledgers)
    if not by_line:
        return []
    binds: dict = {}
    out, seen = [], 0
    for line in sorted(by_line):
        if line in doc.code or not 0 < line <= len(doc.lines):
            continue
        text = doc.lines[line - 1]
        mine = []
        for L in by_line[line]:
            if id(L) not in binds:
                binds[id(L)] = _Bind(L)
            if all(b is not binds[id(L)] for b in mine):
                mine.append(binds[id(L)])
        for start, end, body in math_bodies(text):
            for sides in _equations(plain_formula(body)):
                seen += 1
                if seen > MAX_PIECES:
                    return out
                verdict = _check(sides, mine)
                if verdict is None or verdict[0]:
                    continue
                out.append(Broken(line, start, end, body.strip(), f"the formula does not hold: {verdict[1]}",
                                  verdict[2]))
                break
    return out
