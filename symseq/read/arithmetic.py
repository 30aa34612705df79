"""The arithmetic a page prints, read by a grammar that never runs text as code.

Worked examples write their steps out: ``2.0 · 0.4621 = 0.9242``, ``√0.1325 = 0.364``,
``(0.1 - 0.25) / 0.364 = -0.15 / 0.364 = -0.412``, ``e^{0.5} ≈ 1.6487``,
``softmax([1, 2]) = [0.269, 0.731]``. This module reads such a statement into a small
tree and evaluates it exactly (every printed decimal is a Rational, :mod:`symseq.read.printed`'s
:class:`~symseq.read.printed.PrintedNumber` keeps its printed precision) or over intervals
(each printed decimal widened by half a unit of its last digit, :mod:`mpmath`'s ``iv`` context).

The grammar (recursive descent; ``sympify``, ``parse_expr`` and ``eval`` are never used)::

    statement := expr (relation expr)*          relation: = ≈ ≃ \\approx \\simeq
    expr      := term (("+" | "-" | "−") term)*
    term      := unary (("·" | "×" | "*" | "/" | "÷" | "@" | \\cdot | \\times | \\div) unary | implicit)*
    unary     := ("-" | "−" | "+") unary | power
    power     := postfix ("^" exponent)?           right-associative; ² and ³ as postfix powers
    atom      := number | "(" expr ")" | "(" expr, ... ")" | "[" expr, ... "]" | "{" expr "}"
               | "√" atom | \\sqrt{expr} | \\frac{expr}{expr} | e | π
               | function ("(" args ")" | atom)       function: exp log ln tanh sigmoid σ sin cos sqrt
                                                       softmax sum mean max min
    number    := 12 | 0.4621 | .5 | 1e-3 | 1.5×10^{-3} (one printed number in scientific form)

Lists are vectors; a list of lists is a matrix (rows first). ``+`` and ``−`` work entry by entry (a scalar
broadcasts); ``·`` of two vectors is their dot product; ``@``, ``·`` or ``×`` of two matrices (or a matrix and
a vector) their product; ``*`` of two lists is entry by entry.

Work is bounded, so hostile text ends in a :class:`~symseq.errors.ClaimError` and never hangs: at most
:data:`MAX_LENGTH` characters and :data:`MAX_TOKENS` tokens, nesting at most :data:`MAX_DEPTH` deep, exponents of
printed numbers at most :data:`MAX_EXPONENT`, integer powers at most :data:`MAX_POWER` and results of at most
:data:`MAX_BITS` bits, ``exp`` of arguments at most :data:`MAX_EXP_ARG` in size, lists of at most
:data:`MAX_ENTRIES` entries.

Source: issue 13 (build items 1 and 2); the forms are those of the worked examples in ``tests/data/examples``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp

from ..errors import ClaimError, NotRealError
from ..numbers import short
from .printed import PrintedNumber, read_number

MAX_LENGTH = 2000
MAX_TOKENS = 600
MAX_DEPTH = 40
MAX_EXPONENT = 300  # of a printed number: 1e-300 … 1e300
MAX_POWER = 400  # |n| of an integer power
MAX_BITS = 4000  # numerator and denominator of an exact rational
MAX_EXP_ARG = 1000  # |x| in exp(x)
MAX_ENTRIES = 400

RELATIONS = {"=": "=", "≈": "≈", "≃": "≈", "\\approx": "≈", "\\simeq": "≈", "≅": "≈", "\\approxeq": "≈"}

FUNCTIONS = ("exp", "log", "ln", "tanh", "sigmoid", "sin", "cos", "sqrt", "softmax", "sum", "mean", "max", "min")

# ---------------------------------------------------------------------------
# the tree
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    """A printed number (its exact value and printed precision)."""

    number: PrintedNumber


@dataclass(frozen=True)
class Const:
    """``e`` or ``π``."""

    name: str


@dataclass(frozen=True)
class Neg:
    arg: object


@dataclass(frozen=True)
class Bin:
    """``op`` is one of + - * / · @ (× reads as ·, ÷ as /)."""

    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Pow:
    base: object
    exponent: object


@dataclass(frozen=True)
class Call:
    name: str  # one of FUNCTIONS (ln reads as log, σ as sigmoid)
    arg: object


@dataclass(frozen=True)
class Vec:
    """A printed list: entries are nodes (a Vec of Vecs is a matrix)."""

    items: tuple


@dataclass(frozen=True)
class Ref:
    """A name the page bound earlier to a printed value (``W_z``, ``q_6``, ``h1``): ``node`` is that value as
    printed (a number or list, with its printed precision), so a name bound by a rounded result carries the
    result's rounding into :func:`interval`."""

    name: str
    node: object


@dataclass(frozen=True)
class Statement:
    """A statement ``part₀ rel₁ part₁ rel₂ …``: ``parts`` are trees, ``relations`` "=" or "≈" (one fewer),
    ``texts`` each part as printed."""

    parts: tuple
    relations: tuple
    texts: tuple


def numbers(node, *, signed: bool = False) -> list:
    """The printed numbers of a tree (:class:`PrintedNumber`), in reading order; with ``signed``, a number under
    an odd number of unary minus signs carries the negative value (``[-1, 0]`` gives −1 and 0: a copy of
    ``[1, 0]`` with its sign changed is then told apart)."""
    out: list = []

    def walk(n, neg=False):
        if isinstance(n, Num):
            out.append(dataclasses.replace(n.number, value=-n.number.value) if neg and signed else n.number)
        elif isinstance(n, Neg):
            walk(n.arg, not neg)
        elif isinstance(n, Bin):
            walk(n.left)
            walk(n.right)
        elif isinstance(n, Pow):
            walk(n.base)
            walk(n.exponent)
        elif isinstance(n, Call):
            walk(n.arg)
        elif isinstance(n, Ref):
            walk(n.node, neg)
        elif isinstance(n, Vec):
            for i in n.items:
                walk(i, neg)

    walk(node)
    return out


def _at_number(node, j: int, replace, *, signed: bool = False):
    """The tree ``node`` with the node of its ``j``-th printed number (reading order of :func:`numbers`) put
    through ``replace``: the number itself, or, with ``signed``, the unary minus directly around it when it has
    one."""
    count = [0]

    def walk(n):
        if isinstance(n, Num) or signed and isinstance(n, Neg) and isinstance(n.arg, Num):
            count[0] += 1
            return replace(n) if count[0] - 1 == j else n
        if isinstance(n, Neg):
            return Neg(walk(n.arg))
        if isinstance(n, Bin):
            return Bin(n.op, walk(n.left), walk(n.right))
        if isinstance(n, Pow):
            return Pow(walk(n.base), walk(n.exponent))
        if isinstance(n, Call):
            return Call(n.name, walk(n.arg))
        if isinstance(n, Ref):
            return Ref(n.name, walk(n.node))
        if isinstance(n, Vec):
            return Vec(tuple(walk(i) for i in n.items))
        return n

    return walk(node)


def with_number(node, j: int, number: PrintedNumber):
    """The tree ``node`` with its ``j``-th printed number (the reading order of :func:`numbers`) replaced by
    ``number``: a statement as it would read with one number printed otherwise."""
    return _at_number(node, j, lambda n: Num(number))


def without_sign(node, j: int):
    """The tree ``node`` with the unary minus directly before its ``j``-th printed number (reading order of
    :func:`numbers`) removed: ``sqrt(-64)`` read as ``sqrt(64)``; None when that number has no minus sign."""
    signed = []  # whether the j-th number stands under a minus sign

    def unsign(n):
        signed.append(isinstance(n, Neg))
        return n.arg if isinstance(n, Neg) else n

    out = _at_number(node, j, unsign, signed=True)
    return out if signed == [True] else None


def show(node) -> str:
    """A tree as text in the grammar's own notation (``tanh(0.98)``, ``W_z @ combined``, ``[0.40, 0.35]``): how
    a part of a printed step is named in a report."""
    if isinstance(node, Num):
        return node.number.text
    if isinstance(node, Const):
        return node.name
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Vec):
        return "[" + ", ".join(show(i) for i in node.items) + "]"
    if isinstance(node, Neg):
        return "-" + _wrap(node.arg)
    if isinstance(node, Pow):
        return f"{_wrap(node.base)}^{_wrap(node.exponent)}"
    if isinstance(node, Call):
        return f"{node.name}({show(node.arg)})"
    if isinstance(node, Bin):
        op = {"·": "·", "*": "*", "/": "/", "@": "@"}.get(node.op, node.op)
        plain = (node.op == "+" and not isinstance(node.right, Neg)) or not isinstance(node.right, (Bin, Neg))
        right = show(node.right) if plain else _wrap(node.right)
        left = show(node.left) if node.op in ("+", "-") or not isinstance(node.left, Bin) \
            or node.left.op not in ("+", "-") else _wrap(node.left)
        return f"{left} {op} {right}"
    return repr(node)  # pragma: no cover


def _wrap(node) -> str:
    return show(node) if isinstance(node, (Num, Const, Ref, Vec, Call)) else f"({show(node)})"


def computes(node) -> bool:
    """Whether a part computes something (an operation or a function), rather than print a number, a list of
    numbers or a name: the part after it in a chain is then a printed result (``tanh(0.5) = 0.4621``), not an
    input (``w = 0.3``)."""
    if isinstance(node, Ref):
        return False
    if isinstance(node, Vec):
        return any(computes(i) for i in node.items)
    return not is_number(node)


def result_parts(statement: Statement) -> list[int]:
    """The indices of the parts a statement prints as results: each part that follows ``≈``, or ``=`` after a part
    that computes (:func:`computes`); ``w = 0.3`` prints an input, ``tanh(0.5) = 0.4621`` a result."""
    return [k + 1 for k, rel in enumerate(statement.relations) if rel != "=" or computes(statement.parts[k])]


def is_number(node) -> bool:
    """A bare printed number (signed or not), or a list of them: what a result is printed as."""
    if isinstance(node, Num):
        return True
    if isinstance(node, Neg):
        return isinstance(node.arg, Num)
    if isinstance(node, Vec):
        return all(is_number(i) for i in node.items)
    return False


# ---------------------------------------------------------------------------
# tokens
# ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|\\[,;!:\ ]|\\quad|\\qquad|\\left|\\right|\\big[lr]?|\\Big[lr]?|\\displaystyle|&)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+−]?\d+(?![\d.]))?)
  | (?P<rel>\\approx(?![A-Za-z])|\\simeq(?![A-Za-z])|\\approxeq(?![A-Za-z])|[=≈≃≅])
  | (?P<cmd>\\[A-Za-z]+)
  | (?P<name>[A-Za-z]+|[σπ])
  | (?P<op>\*\*|(?<=\s)\.(?=\s)|[-+−*/÷^×·⋅∙√²³(),\[\]{}@])
    """,
    re.VERBOSE,
)

_CMD = {r"\cdot": "·", r"\times": "·", r"\div": "/", r"\sqrt": "√", r"\exp": "exp", r"\log": "log",
        r"\ln": "log", r"\tanh": "tanh", r"\sin": "sin", r"\cos": "cos", r"\sigma": "sigmoid", r"\pi": "π",
        r"\lbrack": "[", r"\rbrack": "]", r"\lparen": "(", r"\rparen": ")", r"\mathrm": "", r"\operatorname": "",
        r"\text": "", r"\textrm": "", r"\frac": r"\frac", r"\tfrac": r"\frac", r"\dfrac": r"\frac",
        r"\mathbf": "", r"\boldsymbol": ""}
_NAMES = {"exp": "exp", "log": "log", "ln": "log", "tanh": "tanh", "sigmoid": "sigmoid", "sigma": "sigmoid",
          "σ": "sigmoid", "sin": "sin", "cos": "cos", "sqrt": "sqrt", "softmax": "softmax", "sum": "sum",
          "mean": "mean", "max": "max", "min": "min", "e": "e", "π": "π", "pi": "π"}
_WORD_CMD = re.compile(r"\\(?:text|textrm|mathrm|operatorname)\s*\{\s*([A-Za-z]+)\s*\}")
_OPS = {"×": "·", "⋅": "·", "∙": "·", "÷": "/", "−": "-", "*": "*", "**": "^", ".": "·"}


# a name as pages write it: W_z, h_hat, q_6, h1, k_{0}, b_{\mathrm{att},6}, h_6^{(0)} (a layer in parentheses or
# brackets is part of the name; braces, \mathrm and spaces are dropped from its key)
# a Greek letter written as its LaTeX command is a name too (\alpha_{dog}, \delta_t, \eta); \sigma and \pi are not:
# they read as the sigmoid and as π
_GREEK = (r"\\(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|iota|kappa|lambda|mu|nu|xi|rho|"
          r"tau|upsilon|phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Xi|Phi|Psi|Omega)(?![A-Za-z])")
NAME = re.compile(r"(?:" + _GREEK + r"|[A-Za-z][A-Za-z0-9]*)"
                  r"(?:_(?:\{(?:\\mathrm\{[A-Za-z]{1,8}\}|[A-Za-z0-9,+\-]){1,16}\}|[A-Za-z0-9]+))*"
                  r"(?:\^\{?\(\d{1,3}\)\}?|\^\{\[\d{1,3}\]\})?(?![A-Za-z0-9_{])")
# an entry of a bound list: h_{6,0}^{(0)} is entry 0 of h_6^{(0)}, r_{6,2} entry 2 of r_6
_ENTRY = re.compile(r"(?P<base>[A-Za-z][A-Za-z0-9]*)_\{(?P<sub>[^{}]+),(?P<i>\d{1,3})\}(?P<sup>\^.*)?")


def name_key(text: str) -> str:
    """The key a printed name is bound under: ``k_{0}`` and ``k_0`` are one name, ``b_{\\mathrm{att},6}`` is
    ``b_att,6``."""
    return re.sub(r"\\mathrm|[{}\s]", "", text)


def is_word(name: str) -> bool:
    """Whether ``name`` is a word of the grammar (a function, e or π), which a page cannot bind to a value."""
    return name in _NAMES


def _bound(name: str, names: dict) -> str | None:
    """The key of ``name`` in ``names``: itself, or ``base[i]`` for an entry of a bound list (see :data:`_ENTRY`)."""
    key = name_key(name)
    if key in names:
        return key
    m = _ENTRY.fullmatch(name)
    if m:
        base = name_key(f"{m.group('base')}_{{{m.group('sub')}}}{m.group('sup') or ''}")
        node = names.get(base)
        if isinstance(node, Vec) and int(m.group("i")) < len(node.items) \
                and not isinstance(node.items[int(m.group("i"))], Vec):
            return f"{base}[{int(m.group('i'))}]"
    return None


def _lookup(names: dict, key: str):
    if key.endswith("]") and key not in names:
        base, _, i = key[:-1].rpartition("[")
        return names[base].items[int(i)]
    return names[key]


def tokens(text: str, names: dict | None = None, *, symbols: bool = False) -> list[tuple[str, str, int, int]]:
    """(kind, text, start, end) of each token of ``text``; kinds are num, rel, cmd, name, ref and op (``text`` is
    normalised: × and \\times read as ·, − as -, ln as log, σ as sigmoid). With ``names`` (key → printed tree, see
    :class:`Ref`), a name bound there reads as a ``ref`` token whose text is its key; any other name is read as
    before (a function, e or π, or an error).

    With ``symbols`` (a claim's printed formula, :func:`formula`), ``names`` are the claim's own (key → SymPy
    value): a key that is not a plain name (``config.n_embd``, ``h̃``) is read where the text writes it, ∞ and
    ``\\infty`` read as infinity, and an unknown name is an error that lists the names defined.

    Raises:
        ClaimError: for text longer than :data:`MAX_LENGTH`, with more than :data:`MAX_TOKENS` tokens, or with
            a character the grammar does not know (named, with its position).
    """
    if not isinstance(text, str):
        raise ClaimError(f"a printed statement is text; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ClaimError(f"a printed statement of {len(text)} characters is longer than the {MAX_LENGTH} this "
                         f"reader takes; split it into steps")
    out: list[tuple[str, str, int, int]] = []
    pos = 0
    verbatim = sorted((k for k in names or () if not NAME.fullmatch(k)), key=len, reverse=True) if symbols else []
    while pos < len(text):
        start = pos
        hit = next((k for k in verbatim if text.startswith(k, pos) and not (
            pos + len(k) < len(text) and (text[pos + len(k)].isalnum() or text[pos + len(k)] == "_"))), None)
        if hit is not None:  # a declared name that is not a plain one (config.n_embd, h̃) is one symbol
            out.append(("ref", hit, start, pos + len(hit)))
            pos += len(hit)
            continue
        if symbols and (text.startswith("∞", pos) or re.match(r"\\infty(?![A-Za-z])", text[pos:])):
            pos += 1 if text[pos] == "∞" else len(r"\infty")
            out.append(("name", "∞", start, pos))
            continue
        word = _WORD_CMD.match(text, pos)
        if word and word.group(1) in _NAMES:  # \text{softmax}, \operatorname{tanh}: the function's name
            pos = word.end()
            out.append(("name", _NAMES[word.group(1)], start, pos))
            continue
        if symbols and text[pos] in "'′":
            raise ClaimError(f"cannot read {_clip(text)!r}: derivatives (′) are not numbers")
        if names:
            m = NAME.match(text, pos)
            key = _bound(m.group(0), names) if m and m.group(0) not in _NAMES else None
            if key is not None and (pos == 0 or not (text[pos - 1].isalpha() or text[pos - 1] in "_\\")):
                out.append(("ref", key, start, m.end()))
                pos = m.end()
                if len(out) > MAX_TOKENS:
                    raise ClaimError(f"a printed statement of more than {MAX_TOKENS} tokens is too long for this "
                                     f"reader; split it into steps")
                continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise ClaimError(f"cannot read {_clip(text)!r}: unexpected {text[pos:pos + 12]!r} at position {pos}; "
                             f"a statement is numbers, + − × · / ^ √, parentheses, lists and "
                             f"{', '.join(FUNCTIONS)}")
        pos = m.end()
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "ws":
            continue
        if kind == "cmd":
            if tok not in _CMD:
                raise ClaimError(f"cannot read {_clip(text)!r}: the LaTeX command {tok} is not arithmetic")
            tok = _CMD[tok]
            if not tok:
                continue
            kind = "cmd" if tok == r"\frac" else ("op" if tok in ("·", "/", "√", "[", "]", "(", ")") else "name")
        elif kind == "rel":
            tok = RELATIONS[tok]
        elif kind == "name":
            if tok not in _NAMES and symbols:
                raise ClaimError(_unknown_symbol(text, tok, names))
            if tok not in _NAMES:
                raise ClaimError(f"cannot read {_clip(text)!r}: {tok!r} is not a number or a function this reader "
                                 f"knows ({', '.join(FUNCTIONS)}, e, π)")
            tok = _NAMES[tok]
        elif kind == "op":
            tok = _OPS.get(tok, tok)
        elif kind == "num":
            tok = tok.replace("−", "-")
            mant, _, exp = tok.lower().partition("e")
            if exp and abs(int(exp)) > MAX_EXPONENT:
                raise ClaimError(f"cannot read {_clip(text)!r}: the exponent of {tok} is beyond ±{MAX_EXPONENT}")
        out.append((kind, tok, start, pos))
        if len(out) > MAX_TOKENS:
            raise ClaimError(f"a printed statement of more than {MAX_TOKENS} tokens is too long for this reader; "
                             f"split it into steps")
    return out


def _unknown_symbol(text: str, name: str, names: dict | None) -> str:
    """The error of a name a claim's formula uses without defining it (see :func:`formula`)."""
    if re.search(r"\d", text) and not names:
        return (f"cannot read {text!r} as a number: {name!r} is not a digit (a typo?); a formula over symbols "
                f"needs names={{...}} for them")
    known = ", ".join(sorted(names or {})) or "none"
    return (f"cannot read {text!r}: {name!r} is neither a number nor a name this claim defines (defined: {known}); "
            f"pass names={{'{name}': ...}} if it is a symbol of the formula")


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# ---------------------------------------------------------------------------
# the parser
# ---------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str, names: dict | None = None, *, symbols: bool = False):
        self.text = text
        self.names = names or {}
        self.symbols = symbols
        self.toks = tokens(text, self.names, symbols=symbols)
        self.i = 0
        self.depth = 0

    # -- helpers
    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j][:2] if j < len(self.toks) else (None, None)

    def take(self, expect: str | None = None):
        kind, tok = self.peek()
        if kind is None:
            raise ClaimError(f"cannot read {_clip(self.text)!r}: it ends early"
                             + (f" (expected {expect!r})" if expect else ""))
        if expect is not None and tok != expect:
            raise ClaimError(f"cannot read {_clip(self.text)!r}: expected {expect!r} but found {tok!r}")
        self.i += 1
        return kind, tok

    def _touching(self) -> bool:
        """Whether the next token starts where the one before it ends (``3D`` rather than ``3 D``)."""
        return 0 < self.i < len(self.toks) and self.toks[self.i - 1][3] == self.toks[self.i][2]

    def fail(self, why: str):
        raise ClaimError(f"cannot read {_clip(self.text)!r}: {why}")

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} levels deep")

    def leave(self):
        self.depth -= 1

    # -- grammar
    def statement(self) -> Statement:
        parts, rels, texts = [], [], []
        start = 0
        while True:
            parts.append(self.expr())
            texts.append(self._span(start))
            kind, tok = self.peek()
            if kind is None:
                break
            if kind != "rel":
                self.fail(f"unexpected {tok!r} after a complete expression")
            self.take()
            rels.append(tok)
            start = self.i
        return Statement(tuple(parts), tuple(rels), tuple(texts))

    def _span(self, start: int) -> str:
        return self.text[self.toks[start][2]:self.toks[self.i - 1][3]].strip()

    def expr(self):
        self.enter()
        left = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = Bin(op, left, self.term())
        self.leave()
        return left

    def term(self):
        left = self.unary()
        while True:
            kind, tok = self.peek()
            if tok in ("·", "*", "/", "@"):
                self.take()
                left = Bin(tok, left, self.unary())
            elif kind in ("name", "cmd") or tok in ("(", "[", "√") or (
                    kind == "ref" and (self.symbols or self._touching())):
                # 2√2, 2(3 + 1), 0.8[2, 0], 2 e^x, 3D² (a bound name written against its factor; in a claim's
                # formula, T^2 d_k with a space): a product
                left = Bin("·", left, self.power())
            else:
                return left

    def unary(self):
        kind, tok = self.peek()
        if tok in ("-", "+"):
            self.take()
            self.enter()
            arg = self.unary()
            self.leave()
            return Neg(arg) if tok == "-" else arg
        return self.power()

    def power(self):
        base = self.postfix()
        if self.peek()[1] == "^":
            self.take()
            self.enter()
            ex = self.exponent()
            self.leave()
            return Pow(base, ex)
        return base

    def exponent(self):
        kind, tok = self.peek()
        if tok == "{":
            self.take()
            e = self.expr()
            self.take("}")
            return e
        if tok in ("-", "+"):
            self.take()
            arg = self.exponent()
            return Neg(arg) if tok == "-" else arg
        return self.power()  # right-associative: 2^3^2 = 2^(3^2)

    def postfix(self):
        node = self.atom()
        while self.peek()[1] in ("²", "³"):
            node = Pow(node, _int(2 if self.take()[1] == "²" else 3))
        return node

    def atom(self):
        kind, tok = self.take()
        if kind == "num":
            return self.number(tok)
        if kind == "ref":
            return Ref(tok, _lookup(self.names, tok))
        if tok in ("(", "[", "{"):
            self.enter()
            close = {"(": ")", "[": "]", "{": "}"}[tok]
            items = [self.expr()]
            while self.peek()[1] == ",":
                self.take()
                items.append(self.expr())
            self.take(close)
            self.leave()
            if len(items) == 1 and (tok != "[" or self.symbols):  # a claim's formula groups with [ ]: 1/[1+e^x]
                return items[0]
            return self.vector(items)
        if tok == "√":
            self.enter()
            arg = self.braced() if self.peek()[1] == "{" else self.power_free()
            self.leave()
            return Call("sqrt", arg)
        if kind == "cmd":  # \frac
            self.enter()
            a = self.frac_argument()
            b = self.frac_argument()
            self.leave()
            return Bin("/", a, b)
        if kind == "name":
            if tok in ("e", "π", "∞"):
                return Const(tok)
            self.enter()
            if tok == "sqrt" and self.peek()[1] == "{":
                arg = self.braced()
            elif self.peek()[1] in ("(", "[", "{"):
                arg = self.atom()
            elif tok in ("exp", "log", "tanh", "sin", "cos", "sigmoid", "sqrt"):
                arg = self.power_free()  # log 2, \tanh 0.5, \sigma(x)
            else:
                self.fail(f"{tok} needs its argument in parentheses, such as {tok}([1, 2])")
            self.leave()
            return Call(tok, arg)
        self.fail(f"unexpected {tok!r}")

    def power_free(self):
        """The argument of ``√x``, ``log 2``: a signed atom with its postfix powers (√x² is √(x²))."""
        if self.peek()[1] in ("-", "+"):
            sign = self.take()[1]
            arg = self.power_free()
            return Neg(arg) if sign == "-" else arg
        return self.postfix()

    def braced(self):
        self.take("{")
        e = self.expr()
        self.take("}")
        return e

    def frac_argument(self):
        kind, tok = self.peek()
        if tok == "{":
            return self.braced()
        if kind == "num" and re.fullmatch(r"\d+", tok):  # \tfrac25: one digit per argument
            if len(tok) > 1:
                k, t, a, b = self.toks[self.i]
                self.toks[self.i] = ("num", t[1:], a + 1, b)
            else:
                self.take()
            return Num(_printed(tok[0]))
        self.fail("\\frac needs two arguments, such as \\frac{2}{5} or \\tfrac25")

    def number(self, tok: str):
        n = _printed(tok)
        # 1.5 × 10^{-3}: one printed number in scientific form (its precision is the mantissa's)
        if (self.peek()[1] == "·" and self.peek(1) == ("num", "10") and self.peek(2)[1] == "^"
                and "e" not in tok.lower()):
            save = self.i
            self.i += 3
            sign = ""
            if self.peek()[1] == "{":
                self.take()
                if self.peek()[1] in ("-", "+"):
                    sign = "-" if self.take()[1] == "-" else ""
                k = self.take()
                ok = k[0] == "num" and k[1].isdigit() and self.peek()[1] == "}"
                if ok:
                    self.take()
            else:
                if self.peek()[1] in ("-", "+"):
                    sign = "-" if self.take()[1] == "-" else ""
                k = self.take()
                ok = k[0] == "num" and k[1].isdigit()
            if ok and int(k[1]) <= MAX_EXPONENT:
                return Num(_printed(f"{tok}e{sign}{k[1]}", text=f"{tok}×10^{sign}{k[1]}"))
            self.i = save
        return Num(n)

    def vector(self, items):
        if len(items) > MAX_ENTRIES:
            self.fail(f"a list of more than {MAX_ENTRIES} entries")
        return Vec(tuple(items))


def _printed(tok: str, text: str | None = None) -> PrintedNumber:
    n = read_number(tok)
    if n is None:  # pragma: no cover - the token pattern admits only numbers
        raise ClaimError(f"cannot read the number {tok!r}")
    if text is not None:
        n = PrintedNumber(text, n.value, n.decimals, n.has_point)
    return n


def _int(k: int) -> Num:
    return Num(PrintedNumber(str(k), sp.Integer(k), 0, False))


def parse(text: str, names: dict | None = None):
    """Parse one arithmetic expression (no relation) into a tree; ``names`` as in :func:`tokens`.

    Raises:
        ClaimError: naming the text and what could not be read.

    >>> numbers(parse("2.0 · 0.4621"))[1].value
    4621/10000
    """
    st = parse_statement(text, names)
    if st.relations:
        raise ClaimError(f"{_clip(text)!r} is a statement ({st.relations[0]}), not one expression")
    return st.parts[0]


def parse_statement(text: str, names: dict | None = None) -> Statement:
    """Parse ``a = b ≈ c …`` (see the module docstring) into a :class:`Statement`; ``names`` as in :func:`tokens`.

    Raises:
        ClaimError: naming the text and what could not be read (also for empty text).

    >>> st = parse_statement("2.0 · 0.4621 = 0.9242")
    >>> st.relations, st.texts
    (('=',), ('2.0 · 0.4621', '0.9242'))
    """
    p = _Parser(text, names)
    if not p.toks:
        raise ClaimError("an empty printed statement cannot be read")
    if p.toks[0][0] == "rel":
        p.fail("it starts with a relation")
    if p.toks[-1][0] == "rel":
        p.fail("it ends with a relation")
    return p.statement()


def formula(text: str, names: dict | None = None):
    """A claim's printed formula as an exact SymPy expression over the claim's ``names`` (name → SymPy value):
    ``1/(1+e^{1/√2})``, ``\\frac{1}{\\sqrt{2}}``, ``\\tfrac25``, ``I/√2`` (a matrix name), ``T^2 d_k``, ``0.364²``,
    ``sin(1)``, ``1×1.131+1×0``, ``-\\infty``. The grammar is the page's (:func:`parse`), with the claim's names
    as symbols; printed decimals are their Rationals.

    Raises:
        ClaimError: naming the text and what could not be read; a name the claim does not define, with the names
            it does; a list, or a function of lists, where a formula's value is one number or matrix.

    >>> formula("T^2 d_k", {"T": sp.Integer(4), "d_k": sp.Integer(3)})
    48
    """
    given = {name_key(k) if NAME.fullmatch(k) else k: v for k, v in (names or {}).items()}
    p = _Parser(text, given, symbols=True)
    if not p.toks:
        raise ClaimError("an empty printed string cannot be read")
    st = p.statement()
    if st.relations:
        raise ClaimError(f"cannot read {_clip(text)!r}: a printed value has no {st.relations[0]}")
    return _symbolic(st.parts[0], text)


_SYMBOLIC = {"exp": sp.exp, "log": sp.log, "tanh": sp.tanh, "sin": sp.sin, "cos": sp.cos, "sqrt": sp.sqrt}


def _symbolic(n, text: str):
    """The SymPy value of a formula's tree (see :func:`formula`)."""
    if isinstance(n, Num):
        return n.number.value
    if isinstance(n, Const):
        return {"e": sp.E, "π": sp.pi, "∞": sp.oo}[n.name]
    if isinstance(n, Ref):
        return n.node
    if isinstance(n, Neg):
        return -_symbolic(n.arg, text)
    if isinstance(n, Pow):
        return _symbolic(n.base, text) ** _symbolic(n.exponent, text)
    if isinstance(n, Bin) and n.op in ("+", "-", "·", "*", "/"):
        a, b = _symbolic(n.left, text), _symbolic(n.right, text)
        return a + b if n.op == "+" else a - b if n.op == "-" else a / b if n.op == "/" else a * b
    if isinstance(n, Call) and n.name in _SYMBOLIC:
        return _SYMBOLIC[n.name](_symbolic(n.arg, text))
    if isinstance(n, Call) and n.name == "sigmoid":
        from ..functions import sigmoid

        return sigmoid(_symbolic(n.arg, text))
    what = "a list" if isinstance(n, Vec) else f"{n.name}(…)" if isinstance(n, Call) else f"'{n.op}'"
    raise ClaimError(f"cannot read {_clip(text)!r} as one value: {what} is not part of a claim's formula (a vector "
                     f"or matrix is printed as [a, b] or a LaTeX array, entry by entry)")


# ---------------------------------------------------------------------------
# exact values
# ---------------------------------------------------------------------------


def value(node):
    """The exact value of a tree: a SymPy number for a scalar, a tuple (of tuples) for a list.

    Every printed decimal is its Rational; functions stay exact (``tanh(1/2)``), so the value can be rounded
    by :mod:`symseq.verify.claims` at any precision.

    Raises:
        ClaimError: a division by zero, the logarithm of a number ≤ 0, the root of a negative number, lists of
            shapes that do not fit, softmax of a scalar, or a value beyond the bounds of the module docstring.
    """
    return _Evaluator().eval(node)


def _approx(x) -> mpmath.mpf:
    with mpmath.workdps(20):
        return mpmath.mpf(sp.N(x, 20)) if not isinstance(x, sp.Rational) else mpmath.mpf(int(x.p)) / int(x.q)


class _Evaluator:
    def eval(self, n):
        if isinstance(n, Num):
            return n.number.value
        if isinstance(n, Const):
            return sp.E if n.name == "e" else sp.pi
        if isinstance(n, Neg):
            return _map(self.eval(n.arg), lambda x: -x)
        if isinstance(n, Vec):
            return tuple(self.eval(i) for i in n.items)
        if isinstance(n, Ref):
            return self.eval(n.node)
        if isinstance(n, Bin):
            return self.binary(n.op, self.eval(n.left), self.eval(n.right))
        if isinstance(n, Pow):
            return self.power(self.eval(n.base), self.eval(n.exponent))
        if isinstance(n, Call):
            return self.call(n.name, self.eval(n.arg))
        raise ClaimError(f"not an arithmetic tree: {n!r}")  # pragma: no cover

    # -- operations
    def binary(self, op, a, b):
        if op in ("+", "-"):
            f = (lambda x, y: _check(x + y)) if op == "+" else (lambda x, y: _check(x - y))
            return _zip(a, b, f, op)
        if op == "/":
            if isinstance(b, tuple):
                raise ClaimError("division by a list is not defined; divide entry by entry in words")
            return _map(a, lambda x: _divide(x, b))
        if op == "*":
            return _zip(a, b, lambda x, y: _check(x * y), op)
        # · and @: products
        if isinstance(a, tuple) and isinstance(b, tuple):
            return _product(a, b, op)
        if isinstance(a, tuple) or isinstance(b, tuple):
            s, v = (a, b) if not isinstance(a, tuple) else (b, a)
            return _map(v, lambda x: _check(s * x))
        return _check(a * b)

    def power(self, base, ex):
        if isinstance(base, tuple) or isinstance(ex, tuple):
            return _zip(base, ex, _pow, "^") if isinstance(base, tuple) and isinstance(ex, tuple) else \
                _map(base, lambda x: _pow(x, ex)) if isinstance(base, tuple) else _map(ex, lambda y: _pow(base, y))
        return _pow(base, ex)

    def call(self, name, x):
        if name == "softmax":
            if not isinstance(x, tuple) or any(isinstance(i, tuple) for i in x):
                raise ClaimError("softmax takes one printed list, such as softmax([1, 2, 3])")
            if not x:
                raise ClaimError("softmax of an empty list is not defined")
            for v in x:
                _exp(v)  # bounded
            m = max(x, key=_approx)
            es = [sp.exp(v - m) for v in x]
            total = sp.Add(*es)
            return tuple(e / total for e in es)
        if name in ("sum", "mean", "max", "min"):
            if not isinstance(x, tuple):
                raise ClaimError(f"{name} takes a printed list, such as {name}([1, 2, 3])")
            flat = list(flat_entries(x))
            if not flat:
                raise ClaimError(f"{name} of an empty list is not defined")
            if name in ("max", "min"):
                return (max if name == "max" else min)(flat, key=_approx)
            total = _check(sp.Add(*flat))
            return total if name == "sum" else total / len(flat)
        return _map(x, lambda v: _scalar_function(name, v))


def flat_entries(x):
    """The entries of a value of the grammar (a number, or a list nested in tuples), in row order."""
    if isinstance(x, tuple):
        for i in x:
            yield from flat_entries(i)
    else:
        yield x


def _map(x, f):
    return tuple(_map(i, f) for i in x) if isinstance(x, tuple) else f(x)


def _shape(x) -> tuple:
    if not isinstance(x, tuple):
        return ()
    inner = {_shape(i) for i in x}
    if len(inner) > 1:
        raise ClaimError(f"a printed list of lists has rows of different lengths {sorted(len(s) and s[0] or 0 for s in inner)}")
    return (len(x),) + (inner.pop() if inner else ())


def _zip(a, b, f, op):
    if isinstance(a, tuple) and isinstance(b, tuple):
        if _shape(a) != _shape(b):
            raise ClaimError(f"lists of shapes {_dims(_shape(a))} and {_dims(_shape(b))} cannot be combined by {op} "
                             f"entry by entry; they need the same shape")
        return tuple(_zip(x, y, f, op) for x, y in zip(a, b))
    if isinstance(a, tuple):
        return tuple(_zip(x, b, f, op) for x in a)
    if isinstance(b, tuple):
        return tuple(_zip(a, y, f, op) for y in b)
    return f(a, b)


def _dims(s: tuple) -> str:
    return "×".join(map(str, s)) or "scalar"


def _product(a, b, op):
    sa, sb = _shape(a), _shape(b)
    if len(sa) == 1 and len(sb) == 1:
        if sa != sb:
            raise ClaimError(f"a dot product needs two lists of one length; got {sa[0]} and {sb[0]} entries")
        return _check(sp.Add(*[x * y for x, y in zip(a, b)]))
    if len(sa) > 2 or len(sb) > 2:
        raise ClaimError("products of lists nested more than two deep are not read")
    A = [list(r) for r in a] if len(sa) == 2 else [list(a)]
    B = [list(r) for r in b] if len(sb) == 2 else [[x] for x in b]
    if len(A[0]) != len(B):
        raise ClaimError(f"a matrix product {op} needs the columns of the left ({len(A[0])}) to equal the rows of the "
                         f"right ({len(B)}); shapes {_dims(sa)} and {_dims(sb)}")
    out = tuple(tuple(_check(sp.Add(*[A[i][k] * B[k][j] for k in range(len(B))])) for j in range(len(B[0])))
                for i in range(len(A)))
    if len(sb) == 1:
        out = tuple(r[0] for r in out)
    if len(sa) == 1:
        out = out[0]
    return out


def _check(x):
    """``x`` unless it is an exact rational with more than :data:`MAX_BITS` bits (the work would not be bounded)."""
    if isinstance(x, sp.Rational) and (int(x.p).bit_length() > MAX_BITS or int(x.q).bit_length() > MAX_BITS):
        raise ClaimError(f"a value of this statement needs more than {MAX_BITS} bits exactly; this reader is for "
                         f"the arithmetic a page prints")
    if x.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        raise NotRealError("a value of this statement is infinite or undefined (a division by zero?)")
    return x


def _divide(x, y):
    if y == 0 or (not isinstance(y, sp.Rational) and _approx(y) == 0 and sp.simplify(y) == 0):
        raise NotRealError("a division by zero")
    return _check(x / y)


def _pow(b, e):
    if isinstance(e, sp.Integer):
        if abs(int(e)) > MAX_POWER:
            raise ClaimError(f"a power with exponent {e} is beyond ±{MAX_POWER}")
        if b == 0 and e < 0:
            raise NotRealError("a division by zero (0 to a negative power)")
        if isinstance(b, sp.Rational):
            bits = max(int(b.p).bit_length(), int(b.q).bit_length())
            if bits * abs(int(e)) > MAX_BITS:
                raise ClaimError(f"a power needs more than {MAX_BITS} bits exactly; this reader is for the arithmetic "
                                 f"a page prints")
        return _check(b ** e)
    if b == sp.E:
        return _exp(e)
    ab, ae = _approx(b), _approx(e)
    if ab < 0:
        raise NotRealError(f"a negative base to a non-integer power ({short(b)}^{short(e)}) is not a real number")
    if ab == 0:
        if ae <= 0:
            raise ClaimError("0 to a power ≤ 0 is not defined")  # 0^0 = 1 is a convention pages state
        return sp.S.Zero
    if abs(ae * mpmath.log(ab)) > MAX_EXP_ARG:
        raise ClaimError(f"a power beyond e^{MAX_EXP_ARG} in size")
    return _check(b ** e)


def _exp(x):
    if isinstance(x, tuple):
        raise ClaimError("exp takes a number here")
    if abs(_approx(x)) > MAX_EXP_ARG:
        raise ClaimError(f"exp of {sp.N(x, 6)} is beyond e^±{MAX_EXP_ARG}")
    return sp.exp(x)


def _scalar_function(name, v):
    a = _approx(v)
    if name == "exp":
        return _exp(v)
    if name == "log":
        if a <= 0 and (isinstance(v, sp.Rational) or v.is_positive is not True):
            raise NotRealError(f"the logarithm of {short(v)} is not defined (it needs a positive number)")
        return sp.log(v)
    if name == "sqrt":
        if a < 0:
            raise NotRealError(f"the square root of {short(v)} is not a real number")
        return sp.sqrt(v)
    if name == "sigmoid":
        _exp(v)
        return 1 / (1 + sp.exp(-v))
    if name in ("sin", "cos"):
        if abs(a) > 10**6:
            raise ClaimError(f"{name} of {sp.N(v, 6)}: an argument that large is not a page's arithmetic")
        return getattr(sp, name)(v)
    if name == "tanh":
        return sp.tanh(v)
    raise ClaimError(f"{name} takes a printed list, such as {name}([1, 2])")


# ---------------------------------------------------------------------------
# intervals: the accumulated rounding of the printed operands
# ---------------------------------------------------------------------------


def interval(node, *, widen=True, dps: int = 30):
    """The value of a tree over :mod:`mpmath` intervals: each printed decimal (``has_point``) widened by half a unit
    of its last digit when ``widen`` (integers stay exact). A scalar is an ``iv.mpf``, a list a tuple of them.

    ``widen`` is True (every printed decimal may be rounded), False, or a predicate on a
    :class:`~symseq.read.printed.PrintedNumber` naming the ones that may be (the page printed them as results);
    with a predicate, the value of a name (:class:`Ref`) may always be rounded, as a page names the quantities it
    computes.

    This bounds what the printed step could give had its operands not been rounded (first-order effects and
    beyond: interval arithmetic is conservative).

    Raises:
        ClaimError: as :func:`value`, for an operation outside its domain.
    """
    iv = mpmath.iv
    old = iv.dps
    iv.dps = dps
    try:
        return _IntervalEvaluator(widen).eval(node)
    except (ZeroDivisionError, ValueError) as exc:
        raise ClaimError(f"the printed operands do not bound this step ({exc})") from None
    finally:
        iv.dps = old


class _IntervalEvaluator(_Evaluator):
    def __init__(self, widen: bool):
        self.widen = widen

    def eval(self, n):
        iv = mpmath.iv
        if isinstance(n, Num):
            v = n.number.value
            x = iv.mpf(int(v.p)) / int(v.q)
            if n.number.has_point and (self.widen(n.number) if callable(self.widen) else self.widen):
                h = n.number.half_unit(None)
                x = x + iv.mpf([-1, 1]) * (iv.mpf(int(h.p)) / int(h.q))
            return x
        if isinstance(n, Ref) and callable(self.widen):  # a named value may have been printed rounded
            narrow, self.widen = self.widen, True
            try:
                return self.eval(n.node)
            finally:
                self.widen = narrow
        if isinstance(n, Const):
            return iv.e if n.name == "e" else iv.pi
        return super().eval(n)

    def binary(self, op, a, b):
        iv = mpmath.iv
        if op in ("+", "-"):
            return _zip(a, b, (lambda x, y: x + y) if op == "+" else (lambda x, y: x - y), op)
        if op == "/":
            if isinstance(b, tuple):
                raise ClaimError("division by a list is not defined")
            if b.a <= 0 <= b.b:
                raise ClaimError("the divisor's interval holds zero")
            return _map(a, lambda x: x / b)
        if op == "*":
            return _zip(a, b, lambda x, y: x * y, op)
        if isinstance(a, tuple) and isinstance(b, tuple):
            sa, sb = _shape(a), _shape(b)
            if len(sa) == 1 and len(sb) == 1:
                return _isum([x * y for x, y in zip(a, b)])
            A = [list(r) for r in a] if len(sa) == 2 else [list(a)]
            B = [list(r) for r in b] if len(sb) == 2 else [[x] for x in b]
            out = tuple(tuple(_isum([A[i][k] * B[k][j] for k in range(len(B))]) for j in range(len(B[0])))
                        for i in range(len(A)))
            return tuple(r[0] for r in out) if len(sb) == 1 else (out[0] if len(sa) == 1 else out)
        if isinstance(a, tuple) or isinstance(b, tuple):
            s, v = (a, b) if not isinstance(a, tuple) else (b, a)
            return _map(v, lambda x: s * x)
        del iv
        return a * b

    def power(self, base, ex):
        iv = mpmath.iv
        if isinstance(ex, tuple):
            raise ClaimError("powers with a list exponent are not bounded here")
        if isinstance(base, tuple):  # entry by entry, as value() does
            return _map(base, lambda b: self.power(b, ex))
        if ex.a == ex.b and ex.a == int(ex.a):
            k = int(ex.a)
            if k >= 0:
                return _ipow_int(base, k)
            return 1 / _ipow_int(base, -k)
        if base.a <= 0:
            raise ClaimError("a base that may be ≤ 0 to a non-integer power")
        return iv.exp(ex * iv.log(base))

    def call(self, name, x):
        iv = mpmath.iv
        if name == "softmax":
            es = [iv.exp(v) for v in x]
            # each weight is monotone: increasing in its own logit, decreasing in the others
            out = []
            for i, e in enumerate(es):
                others = _isum([es[j] for j in range(len(es)) if j != i]) if len(es) > 1 else iv.mpf(0)
                lo = e.a / (e.a + others.b)
                hi = e.b / (e.b + others.a)
                out.append(iv.mpf([lo, hi]))
            return tuple(out)
        if name in ("sum", "mean"):
            flat = list(flat_entries(x))
            total = _isum(flat)
            return total if name == "sum" else total / len(flat)
        if name in ("max", "min"):  # the largest (smallest) entry lies between the largest (smallest) ends
            flat = list(flat_entries(x))
            pick = max if name == "max" else min
            lo = pick((_end(v, 0) for v in flat))
            hi = pick((_end(v, 1) for v in flat))
            return iv.mpf([lo, hi])
        f = {"exp": iv.exp, "log": iv.log, "sqrt": iv.sqrt, "sin": iv.sin, "cos": iv.cos,
             "tanh": _itanh, "sigmoid": lambda v: 1 / (1 + iv.exp(-v))}[name]
        return _map(x, f)


def _end(box, k: int):
    return mpmath.mp.make_mpf(box._mpi_[k])


def _isum(xs):
    total = mpmath.iv.mpf(0)
    for x in xs:
        total = total + x
    return total


def _ipow_int(x, k: int):
    if k == 0:
        return mpmath.iv.mpf(1)
    if k % 2 == 0 and x.a < 0 < x.b:  # an even power of an interval about zero starts at zero
        hi = max(abs(x.a), abs(x.b)) ** k
        return mpmath.iv.mpf([0, hi])
    return x ** k


def _itanh(x):
    iv = mpmath.iv
    return 1 - 2 / (iv.exp(2 * x) + 1)  # x occurs once: no dependency widening
