"""Read printed mathematics into the tree of :mod:`symseq.read.tree`, by the grammar ``printed.lark``.

Worked examples write their steps out: ``2.0 · 0.4621 = 0.9242``, ``√0.1325 = 0.364``,
``(0.1 - 0.25) / 0.364 = -0.15 / 0.364 = -0.412``, ``e^{0.5} ≈ 1.6487``, ``softmax([1, 2]) = [0.269, 0.731]``,
``(5*5*16+1)*32 = 12,832``, ``0.3 × 100 = 30%``, ``\\sqrt[3]{8} = 2``,
``\\begin{bmatrix}1 & 2\\\\ 3 & 4\\end{bmatrix}``. :func:`parse_statement` reads such a statement into a
:class:`~symseq.read.tree.Statement`, a chain of relations (``=``, ``≈``, ``≃``, ``\\approx``, ``\\simeq``) whose
parts are trees; :func:`formula` reads a claim's printed formula over the claim's own names into a SymPy value.
Text is parsed by lark (LALR), never run: ``sympify``, ``parse_expr`` and ``eval`` are never used.

Names: a page binds names to printed values (``W_z = [[0.3, 0.2], …]``) and passes them as ``names`` (key →
tree); a bound name reads as a :class:`~symseq.read.tree.Ref` (``h_{6,1}^{(0)}`` is entry 1 of a bound
``h_6^{(0)}``); a name written against a factor multiplies it (``3D²``), one after a space does not, except in a
claim's formula (``T^2 d_k``). Any other name is an error that names it.

Work is bounded before the parser builds anything, so hostile text ends in a :class:`~symseq.errors.ClaimError`
and never hangs: at most :data:`MAX_LENGTH` characters and :data:`MAX_TOKENS` tokens, brackets nested at most
:data:`MAX_DEPTH` deep (and as many signs, roots or functions in a row, or powers in a statement), exponents of
printed numbers at most :data:`MAX_EXPONENT`, lists of at most :data:`MAX_ENTRIES` entries; the values are bounded
by :mod:`symseq.read.evaluate`.
"""

from __future__ import annotations

import functools
import re
import threading

import sympy as sp

from ..errors import ClaimError
from . import grammar
from .number import read_number
from .page import in_list
from .tree import Bin, Call, Const, Neg, Num, Pow, Ref, Statement, Vec, integer

MAX_LENGTH = 2000
MAX_TOKENS = 600
MAX_DEPTH = 40
MAX_EXPONENT = 300  # of a printed number: 1e-300 … 1e300
MAX_ENTRIES = 400

RELATIONS = {"=": "=", "≈": "≈", "≃": "≈", "\\approx": "≈", "\\simeq": "≈", "≅": "≈", "\\approxeq": "≈"}

FUNCTIONS = ("exp", "log", "ln", "tanh", "sigmoid", "sin", "cos", "sqrt", "softmax", "sum", "mean", "max", "min")

# the words of the grammar: functions (ln reads as log, σ and sigma as the sigmoid), e and π
_NAMES = {"exp": "exp", "log": "log", "ln": "log", "tanh": "tanh", "sigmoid": "sigmoid", "sigma": "sigmoid",
          "σ": "sigmoid", "sin": "sin", "cos": "cos", "sqrt": "sqrt", "softmax": "softmax", "sum": "sum",
          "mean": "mean", "max": "max", "min": "min", "e": "e", "π": "π", "pi": "π"}
_LISTS_ONLY = ("softmax", "sum", "mean", "max", "min")  # functions whose argument is a bracketed list

NAME = grammar.compiled("NAME")
"""A name as pages write it: the grammar's ``NAME`` terminal (``W_z``, ``q_6``, ``h1``, ``k_{0}``,
``b_{\\mathrm{att},6}``, ``h_6^{(0)}``, ``\\alpha_{dog}``)."""

# an entry of a bound list: h_{6,0}^{(0)} is entry 0 of h_6^{(0)}, r_{6,2} entry 2 of r_6
_ENTRY = re.compile(r"(?P<base>[A-Za-z][A-Za-z0-9]*)_\{(?P<sub>[^{}]+),(?P<i>\d{1,3})\}(?P<sup>\^.*)?")
_VERBATIM = re.compile("\ue000(\\d+)\ue001")
_OPS = {"×": "·", "⋅": "·", "∙": "·", "\\cdot": "·", "\\times": "·", ".": "·", "÷": "/", "\\div": "/"}


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


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# ---------------------------------------------------------------------------------------------------------------
# one parse: its text, names and the tokens read so far
# ---------------------------------------------------------------------------------------------------------------


class _Parse:
    def __init__(self, text: str, names: dict, symbols: bool, verbatim: list, shown: str | None = None):
        self.text = text
        self.shown = text if shown is None else shown  # the text as errors quote it (declared names in place)
        self.names = names
        self.symbols = symbols
        self.verbatim = verbatim  # the declared names that are no plain name, by placeholder number
        self.toks: list = []  # every token the parser is given, in order
        self.keys: dict = {}  # id(token) → the key of a bound name
        self.bracketed: set = set()  # ids of the nodes written in brackets (the argument of softmax(…))
        self.kept: list = []  # those nodes, kept alive while their ids are in use

    def fail(self, why: str):
        raise ClaimError(f"cannot read {_clip(self.shown)!r}: {why}")


_local = threading.local()


def _current() -> _Parse:
    return _local.parse


# ---------------------------------------------------------------------------------------------------------------
# the post-lexer: bounds, lists, matrix cells, names
# ---------------------------------------------------------------------------------------------------------------

_OPENING = {"LPAR", "LSQB", "LBRACE", "ROOTN", "BEGIN"}
_CLOSING = {"RPAR", "RSQB", "RBRACE", "END"}
_PREFIX = {"MINUS", "PLUS", "ROOT", "FUNC", "FRAC"}


class _PostLex:
    always_accept = ()

    def process(self, stream):
        from lark import Token

        p = _current()
        stack: list[str] = []  # the open brackets and environments
        run = carets = 0
        prev_end = None
        fracs: list[list[int]] = []  # [depth, arguments still wanted] of each \\frac being read
        for tok in stream:
            kind = tok.type
            if fracs and len(stack) == fracs[-1][0] and kind != "RBRACE":
                wanted = fracs[-1]
                if kind == "NUMBER" and tok.isdigit():  # \\tfrac25: one digit an argument
                    pos, rest = tok.start_pos, str(tok)
                    while rest and fracs and fracs[-1] is wanted:
                        yield from self._give(Token("NUMBER", rest[0], start_pos=pos, end_pos=pos + 1), p)
                        pos, rest = pos + 1, rest[1:]
                        wanted[1] -= 1
                        if not wanted[1]:
                            fracs.pop()
                    if rest:
                        yield from self._give(Token("NUMBER", rest, start_pos=pos, end_pos=tok.end_pos), p)
                    prev_end, run = tok.end_pos, 0
                    continue
                if kind == "LBRACE":
                    wanted[1] -= 1
                if kind != "LBRACE" or not wanted[1]:
                    fracs.pop()
            if kind == "FRAC":
                fracs.append([len(stack), 2])
            if kind in ("CELLSEP", "ROWSEP") and "BEGIN" not in stack[-1:]:
                continue  # LaTeX's alignment marks outside a matrix
            if kind == "NUMBER" and "," in tok and in_list(p.text, tok.start_pos, tok.end_pos):
                # inside brackets a comma separates entries: [1,234] is two numbers
                pos = tok.start_pos
                for k, piece in enumerate(tok.split(",")):
                    if k:
                        yield from self._give(Token("COMMA", ",", start_pos=pos, end_pos=pos + 1), p)
                        pos += 1
                    if piece:
                        yield from self._give(Token("NUMBER", piece, start_pos=pos, end_pos=pos + len(piece)), p)
                    pos += len(piece)
                prev_end = tok.end_pos
                run = 0
                continue
            if kind in _OPENING:
                stack.append(kind)
                if sum(k != "BEGIN" for k in stack) > MAX_DEPTH:
                    p.fail(f"nested more than {MAX_DEPTH} levels deep")
            elif kind in _CLOSING and stack:
                stack.pop()
            run = run + 1 if kind in _PREFIX else 0
            if run > MAX_DEPTH:
                p.fail(f"nested more than {MAX_DEPTH} levels deep")
            if kind == "CARET":
                carets += 1
                if carets > MAX_DEPTH:
                    p.fail(f"more than {MAX_DEPTH} powers in one statement")
            elif kind == "NUMBER":
                m = re.search(r"(?:[eE]|\^\s*\{?\s*)([-+\u2212]?\d+)", tok)
                if m and (len(m.group(1)) > 6 or abs(int(m.group(1).replace("\u2212", "-"))) > MAX_EXPONENT):
                    p.fail(f"the exponent of {tok} is beyond ±{MAX_EXPONENT}")
            elif kind == "NAME":
                tok = self._name(tok, p, prev_end)
            elif kind == "CONST" and tok in ("∞", "\\infty") and not p.symbols:
                p.fail(f"unexpected {str(tok)!r} at position {tok.start_pos}; ∞ is no printed result of arithmetic")
            prev_end = tok.end_pos
            yield from self._give(tok, p)

    @staticmethod
    def _give(tok, p: _Parse):
        p.toks.append(tok)
        if len(p.toks) > MAX_TOKENS:
            raise ClaimError(f"a printed statement of more than {MAX_TOKENS} tokens is too long for this reader; "
                             f"split it into steps")
        yield tok

    @staticmethod
    def _name(tok, p: _Parse, prev_end):
        """A name token checked against the names in scope; written after a space on a page, it is SNAME (no
        factor of a product without an operator)."""
        from lark import Token

        v = _VERBATIM.fullmatch(tok)
        key = p.verbatim[int(v.group(1))] if v else _bound(tok, p.names) if tok not in _NAMES else None
        if key is None:
            if p.symbols:
                raise ClaimError(_unknown_symbol(p.shown, str(tok), p.names))
            p.fail(f"{str(tok)!r} is not a number or a function this reader knows ({', '.join(FUNCTIONS)}, e, π)")
        if not p.symbols and prev_end is not None and tok.start_pos != prev_end:
            tok = Token.new_borrow_pos("SNAME", str(tok), tok)
        p.keys[id(tok)] = key
        return tok


def _unknown_symbol(text: str, name: str, names: dict | None) -> str:
    """The error of a name a claim's formula uses without defining it (see :func:`formula`)."""
    if re.search(r"\d", text) and not names:
        return (f"cannot read {text!r} as a number: {name!r} is not a digit (a typo?); a formula over symbols "
                f"needs names={{...}} for them")
    known = ", ".join(sorted(names or {})) or "none"
    return (f"cannot read {text!r}: {name!r} is neither a number nor a name this claim defines (defined: {known}); "
            f"pass names={{'{name}': ...}} if it is a symbol of the formula")


# ---------------------------------------------------------------------------------------------------------------
# the tree builder: called by the parser as it reduces each rule
# ---------------------------------------------------------------------------------------------------------------


def _builder():
    from lark import Transformer

    class Build(Transformer):
        # -- numbers, names and constants
        def number(self, c):
            n = read_number(c[0])
            if n is None:  # pragma: no cover - the post-lexer bounds the exponent, the terminal the form
                _current().fail(f"the number {str(c[0])!r} is out of range")
            return Num(n)

        def name(self, c):
            p = _current()
            key = p.keys[id(c[0])]
            return Ref(key, _lookup(p.names, key))

        def const(self, c):
            t = str(c[0])
            return Const("e" if t == "e" else "∞" if t in ("∞", "\\infty") else "π")

        # -- operations
        def add(self, c):
            return Bin("+", c[0], c[2])

        def sub(self, c):
            return Bin("-", c[0], c[2])

        def mul(self, c):
            op = str(c[1])
            return Bin(_OPS.get(op, op), c[0], c[2])

        def juxtapose(self, c):
            return Bin("·", c[0], c[1])

        def neg(self, c):
            return Neg(c[1])

        def pos(self, c):
            return c[1]

        def pow(self, c):
            return Pow(c[0], c[2])

        def group(self, c):
            return c[1]

        def squared(self, c):
            return Pow(c[0], integer(2 if c[1] == "²" else 3))

        # -- brackets, lists and matrices
        def items(self, c):
            return [x for x in c if not (hasattr(x, "type") and x.type == "COMMA")]

        def _list(self, items, single_is_group: bool):
            p = _current()
            if len(items) > MAX_ENTRIES:
                p.fail(f"a list of more than {MAX_ENTRIES} entries")
            node = items[0] if len(items) == 1 and single_is_group else Vec(tuple(items))
            p.bracketed.add(id(node))
            p.kept.append(node)
            return node

        def paren(self, c):
            return self._list(c[1], True)

        def bracket(self, c):  # a claim's formula groups with [ ]: 1/[1+e^x]; on a page [x] is a list
            return self._list(c[1], _current().symbols)

        def brace(self, c):
            return self._list(c[1], True)

        def row(self, c):
            return [x for x in c if not (hasattr(x, "type") and x.type == "CELLSEP")]

        def rows(self, c):
            return [x for x in c if not (hasattr(x, "type") and x.type == "ROWSEP")]

        def matrix(self, c):
            rows = c[1]
            if sum(len(r) for r in rows) > MAX_ENTRIES:
                _current().fail(f"a matrix of more than {MAX_ENTRIES} entries")
            return Vec(tuple(Vec(tuple(r)) for r in rows))

        # -- roots, fractions and functions
        def root(self, c):
            return Call("sqrt", c[1])

        def nroot(self, c):
            return Pow(c[4], Bin("/", integer(1), c[1]))

        def frac(self, c):
            return Bin("/", c[1], c[2])

        def call(self, c):
            word = re.sub(r"^\\(?:text|textrm|mathrm|operatorname)\s*\{\s*|\s*\}$|^\\", "", str(c[0]))
            f = _NAMES[word]
            p = _current()
            if f in _LISTS_ONLY and id(c[1]) not in p.bracketed:
                p.fail(f"{f} needs its argument in parentheses, such as {f}([1, 2])")
            return Call(f, c[1])

        # -- the statement
        def statement(self, c):
            p = _current()
            parts = tuple(c[0::2])
            relations = tuple(RELATIONS[str(r)] for r in c[1::2])
            bounds = [i for i, t in enumerate(p.toks) if t.type == "REL"]
            ends = [(p.toks[a + 1].start_pos, p.toks[b - 1].end_pos)
                    for a, b in zip([-1] + bounds, bounds + [len(p.toks)])]
            return Statement(parts, relations, tuple(p.text[a:b].strip() for a, b in ends), tuple(ends))

    return Build()


@functools.cache
def _parser():
    from lark import Lark

    tables = grammar.tables_file()  # lark checks the grammar's and its own version's hash in the file
    return Lark(grammar.text(), parser="lalr", lexer="basic", postlex=_PostLex(), transformer=_builder(),
                maybe_placeholders=False, cache=tables or False)


# ---------------------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------------------


def _read(text: str, names: dict, *, symbols: bool = False, verbatim: list | None = None,
          shown: str | None = None) -> Statement:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

    if not isinstance(text, str):
        raise ClaimError(f"a printed statement is text; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ClaimError(f"a printed statement of {len(text)} characters is longer than the {MAX_LENGTH} this "
                         f"reader takes; split it into steps")
    p = _Parse(text, names, symbols, verbatim or [], shown)
    outer = getattr(_local, "parse", None)
    _local.parse = p
    try:
        return _parser().parse(text)
    except UnexpectedCharacters as exc:
        cmd = re.match(r"\\[A-Za-z]+", text[exc.pos_in_stream:])
        if cmd:
            p.fail(f"the LaTeX command {cmd.group(0)} is not arithmetic")
        p.fail(f"unexpected {text[exc.pos_in_stream:exc.pos_in_stream + 12]!r} at position {exc.pos_in_stream}; a "
               f"statement is numbers, + − × · / ^ √, parentheses, lists and {', '.join(FUNCTIONS)}")
    except (UnexpectedToken, UnexpectedEOF) as exc:
        toks = p.toks
        if not toks:
            raise ClaimError("an empty printed statement cannot be read") from None
        if toks[0].type == "REL":
            p.fail("it starts with a relation")
        if isinstance(exc, UnexpectedEOF) or getattr(exc, "token", None) is not None and exc.token.type == "$END":
            p.fail("it ends with a relation" if toks[-1].type == "REL" else "it ends early")
        tok = exc.token
        after = " after a complete expression" if len(toks) > 1 and toks[-2].type in (
            "NUMBER", "NAME", "SNAME", "CONST", "RPAR", "RSQB", "RBRACE", "SQUARED", "END") else ""
        p.fail(f"unexpected {str(tok)!r}{after}")
    except UnexpectedInput as exc:  # pragma: no cover - the three above are lark's
        p.fail(str(exc).splitlines()[0])
    except RecursionError:  # pragma: no cover - the post-lexer bounds the depth first
        p.fail(f"nested more than {MAX_DEPTH} levels deep")
    finally:
        _local.parse = outer


def parse_statement(text: str, names: dict | None = None) -> Statement:
    """Parse ``a = b ≈ c …`` (see the module docstring) into a :class:`~symseq.read.tree.Statement`.

    Args:
        text: the statement as printed.
        names: key → printed tree of the names the page bound (:func:`name_key` gives a name's key).

    Raises:
        ClaimError: naming the text and what could not be read (also for empty text).

    >>> st = parse_statement("2.0 · 0.4621 = 0.9242")
    >>> st.relations, st.texts
    (('=',), ('2.0 · 0.4621', '0.9242'))
    """
    return _read(text, names or {})


def parse(text: str, names: dict | None = None):
    """Parse one printed expression (no relation) into a tree; ``names`` as in :func:`parse_statement`.

    Raises:
        ClaimError: naming the text and what could not be read.

    >>> from symseq.read.tree import numbers
    >>> numbers(parse("2.0 · 0.4621"))[1].value
    4621/10000
    """
    st = parse_statement(text, names)
    if st.relations:
        raise ClaimError(f"{_clip(text)!r} is a statement ({st.relations[0]}), not one expression")
    return st.parts[0]


def formula(text: str, names: dict | None = None):
    """A claim's printed formula as an exact SymPy expression over the claim's ``names`` (name → SymPy value):
    ``1/(1+e^{1/√2})``, ``\\frac{1}{\\sqrt{2}}``, ``\\tfrac25``, ``I/√2`` (a matrix name), ``T^2 d_k``, ``0.364²``,
    ``sin(1)``, ``1×1.131+1×0``, ``-\\infty``. The grammar is the page's, with the claim's names as symbols (a
    name after a space multiplies too); printed decimals are their Rationals. A declared name that is no plain
    name (``config.n_embd``, ``h̃``) is read where the text writes it.

    Raises:
        ClaimError: naming the text and what could not be read; a name the claim does not define, with the names
            it does; a list, or a function of lists, where a formula's value is one number or matrix.

    >>> formula("T^2 d_k", {"T": sp.Integer(4), "d_k": sp.Integer(3)})
    48
    """
    if isinstance(text, str) and re.search("[\ue000-\ue002]", text):
        raise ClaimError(f"cannot read {_clip(text)!r}: it holds a private-use character")
    printed = text
    given = {name_key(k) if NAME.fullmatch(k) else k: v for k, v in (names or {}).items()}
    verbatim = sorted((k for k in given if not NAME.fullmatch(k)), key=len, reverse=True)
    if isinstance(text, str):
        if not text.strip():
            raise ClaimError("an empty printed string cannot be read")
        if "'" in text or "′" in text:
            raise ClaimError(f"cannot read {_clip(text)!r}: derivatives (′) are not numbers")
        for i, k in enumerate(verbatim):  # a declared name that is not a plain one is one symbol where it stands
            text = re.sub(rf"(?<![\w\ue000]){re.escape(k)}(?![\w])", f"\ue000{i}\ue001", text)
    st = _read(text, given, symbols=True, verbatim=verbatim, shown=printed)
    if st.relations:
        raise ClaimError(f"cannot read {_clip(printed)!r}: a printed value has no {st.relations[0]}")
    return _symbolic(st.parts[0], printed)


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
