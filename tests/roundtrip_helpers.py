"""Read back what symseq prints: LaTeX and Unicode formulas, parsed by SymPy's Lark LaTeX grammar.

A printed form *round-trips* when reading it gives the value of the expression it
was printed from. The parser is SymPy's own (``sympy.parsing.latex.lark.LarkLaTeXParser``,
what ``parse_latex(s, backend="lark")`` runs) with SymPy's grammar less rules that the
respelled text can never use (see ``_TRIM``); only our own output is ever read here,
never a user's text.

That grammar reads ordinary algebra but knows no matrix notation and few function
names, so before parsing, :func:`to_grammar` respells each piece of handout notation
as the grammar's word for the same thing, and nothing else:

* every name the expression prints (``\\mathbf{W}_{Q}``, ``g_{0}^{z}``, a label ``M``)
  becomes a one-letter placeholder bound to the named value;
* ``\\odot`` (Hadamard) becomes ``\\times``, read as the entrywise product; a blank
  between two operands (juxtaposition, ``\\,``) becomes ``*``, read as the product:
  the matrix product of two matrices, scaling otherwise;
* ``^{\\top}`` becomes ``^{T}``, read as the transpose; ``\\pi`` becomes ``O`` (the
  grammar has no ``\\pi``);
* named operations become calls of reserved functions ``F_{..}(...)`` (short codes,
  :data:`SHORT`): ``\\sigma``, ``\\operatorname{ReLU}``, GELU, erf, ``\\mathbf{1}[x > 0]``,
  ``H(x)``, ``\\operatorname{softmax}(row)_{k}``, logsumexp, ``softmax_rows``,
  ``logsumexp_rows``, ``\\sum_{t}``, ``\\sum_{j}``, ``\\sum``, ``mean``, the side by side
  blocks ``[a | b]``, an entry ``X_{01}`` (``X_{1,10}``) and a block ``X_{0..1,:}``
  (``X_{\\{0,2\\},1..3}``); a function raised to a power (``\\tanh^{2}(z)``) is written
  ``(\\tanh(z))^{2}``, and the group SymPy writes after a function holds all of its
  argument: ``\\tanh{(x)} y`` is ``(\\tanh(x))*y``;
* ``\\left`` and ``\\right`` are dropped (they only size delimiters), and so are blanks.

The parse forest is then evaluated by :class:`Reader` with exact SymPy values (names
bound to symbolic matrices), never by ``eval`` or ``sympify``. Functions and powers
of a matrix apply entrywise (the package has no matrix power or matrix exponential).
Where the forest is ambiguous (``F(x)`` as a call or a product), readings that cannot
be evaluated (a name called as a function, a product of mismatched shapes) are
dropped; if the readings left disagree, the form is ambiguous and reading fails.

Unicode forms are turned into LaTeX by the package's own :func:`symseq.present.tex.tex_math`
(what ``symseq latex`` uses for Unicode formulas) after the Unicode-only spellings are
respelled (:func:`unicode_to_latex`), and read the same way.
"""

from __future__ import annotations

import atexit
import functools
import re
import shutil
import string
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import sympy as sp
from lark import Token, Transformer
from sympy.parsing.latex.lark import LarkLaTeXParser

from symseq import functions as fn
from symseq import ops
from symseq.arrays import ExactKernel
from symseq.present.tex import balanced_braces, tex_math

# SymPy's grammar, less the rules whose every spelling starts with a word that never occurs in the respelled text
# (:data:`ABSENT`: integrals, limits, sums, relations, brackets of quantum states, ...). A rule none of whose words
# occur cannot take part in any parse of the text, so this grammar reads every respelled text exactly as SymPy's
# whole grammar does (tests/test_roundtrip.py compares the two); it only spares the Earley parser, which takes
# time in proportion to the rules it predicts at each character, most of the work.
_TRIM = [
    ("latex_string: _relation | _expression", "latex_string: _expression"),
    ("number: /\\d+(\\.\\d*)?/ | CMD_IMAGINARY_UNIT", "number: /\\d+(\\.\\d*)?/"),
    ("_atomic_expr: _one_letter_symbol\n    | multi_letter_symbol\n", "_atomic_expr: _one_letter_symbol\n"),
    ("    | binomial\n    | _function\n    | _integral// | derivative\n    | limit\n    | matrix",
     "    | _function\n    | matrix"),
    ("_expression_power: _expression_func | superscript | matrix_prime | symbol_prime",
     "_expression_power: _expression_func | superscript"),
    ("    | mul | div | adjacent_expressions\n    | summation | product", "    | mul | div | adjacent_expressions"),
    ("_function: function_applied\n    | abs | floor | ceil\n    | _trigonometric_function | "
     "_inverse_trigonometric_function\n    | _trigonometric_function_power\n    | _hyperbolic_trigonometric_function "
     "| _inverse_hyperbolic_trigonometric_function\n    | exponential\n    | log\n    | square_root\n    | factorial"
     "\n    | conjugate\n    | max | min\n    | bra | ket | inner_product\n    | determinant\n    | trace\n    | "
     "adjugate", "_function: function_applied\n    | abs\n    | tanh\n    | log\n    | square_root"),
    ("log: FUNC_LOG _expression\n    | FUNC_LN _expression\n    | FUNC_LG _expression\n    | FUNC_LOG UNDERSCORE "
     "(DIGIT | _one_letter_symbol) _expression\n    | FUNC_LOG UNDERSCORE group_curly_parentheses _expression",
     "log: FUNC_LOG _expression"),
    ("fraction: _basic_fraction\n    | _simple_fraction\n    | _general_fraction", "fraction: _general_fraction"),
    ("_one_letter_symbol: SYMBOL\n    | LATIN_SYMBOL_WITH_LATIN_SUBSCRIPT\n    | LATIN_SYMBOL_WITH_GREEK_SUBSCRIPT\n"
     "    | GREEK_SYMBOL_WITH_LATIN_SUBSCRIPT\n    | GREEK_SYMBOL_WITH_GREEK_SUBSCRIPT\n    | GREEK_SYMBOL_WITH_PRIMES",
     "_one_letter_symbol: SYMBOL\n    | LATIN_SYMBOL_WITH_LATIN_SUBSCRIPT"),
]
# the words that start the rules left out; the respelled text never holds one (to_grammar checks)
ABSENT = re.compile(r"[=<>!']|(?<!\\sqrt)\[|\\begin\{(v?matrix|array)\}|\\[dt]?frac(?!\{)|_\{?\\|"
                    r"\\(exp|ln|lg|alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|kappa|lambda|mu|"
                    r"nu|xi|rho|varrho|tau|upsilon|phi|varphi|chi|psi|omega|"
                    r"int|intop|lim|sum|prod|binom|dbinom|tbinom|le|ge|ne|neq|"
                    r"leq|geq|leqslant|geqslant|langle|rangle|overline|det|trace|adjugate|min|max|lfloor|lceil|sin|"
                    r"cos|tan|csc|sec|cot|arc[a-z]+|ar[a-z]+h|sinh|cosh|text|mathrm|mathit|imaginaryunit|prime|ast)"
                    r"(?![A-Za-z])")


def _trimmed_grammar() -> str:
    import sympy.parsing.latex.lark as lark_latex

    folder = Path(lark_latex.__file__).parent / "grammar"
    text = (folder / "latex.lark").read_text(encoding="utf-8")
    for old, new in _TRIM:
        if old not in text:  # SymPy changed its grammar: the trimming must be redone, never silently skipped
            raise RuntimeError(f"SymPy's LaTeX grammar no longer has {old[:60]!r}")
        text = text.replace(old, new)
    folder = Path(tempfile.mkdtemp(prefix="symseq-grammar-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "latex_trimmed.lark"
    path.write_text(text, encoding="utf-8")
    return str(path)


PARSER = LarkLaTeXParser(transform=False, grammar_file=_trimmed_grammar())
FULL_PARSER = LarkLaTeXParser(transform=False)


@functools.lru_cache(maxsize=4096)
def _parse(text: str):
    """The parse forest of a respelled text (the same text, printed again, is not parsed again)."""
    return PARSER.doparse(text)


_SENTINEL0 = 0xE100  # names become private-use characters first, placeholders last


class NotRead(AssertionError):
    """A printed form that the grammar cannot read, or reads in two ways with different values."""


class _Invalid:
    """A reading that cannot be evaluated (dropped when the parse is ambiguous)."""

    def __init__(self, why):
        self.why = why

    def __repr__(self):
        return f"Invalid({self.why})"


# ---------------------------------------------------------------------------
# values: SymPy scalars and explicit matrices
# ---------------------------------------------------------------------------


def symbolic_env(ledger) -> dict:
    """Every item of ``ledger``, leaf or row, bound to symbols: a scalar to its symbol, a matrix to a matrix of
    entry symbols ``X[i,j]`` (a row is read as the name it prints as, so it is a symbol too)."""
    env = {}
    for name, it in ledger.items.items():
        if it.shape == ():
            env[name] = it.symbol if it.symbol is not None else sp.Symbol(name, real=True)
        else:
            m, n = it.shape
            env[name] = sp.ImmutableMatrix(m, n, lambda i, j, name=name: sp.Symbol(f"{name}[{i},{j}]", real=True))
    return env


def meaning(node: ops.Node, env: dict):
    """What ``node`` computes, exactly, with the leaves bound by ``env`` (a scalar, or an ImmutableMatrix)."""
    arr_env = {k: (np.array(v.tolist(), dtype=object) if isinstance(v, sp.MatrixBase) else v) for k, v in env.items()}
    v = ops.evaluate(node, ExactKernel(), arr_env)
    if isinstance(v, np.ndarray):
        return sp.ImmutableMatrix(v.tolist())
    return sp.sympify(v)


def _zero(d) -> bool:
    if d == 0:
        return True
    if d.has(sp.oo, -sp.oo, sp.nan, sp.zoo):
        return False
    return sp.expand(d) == 0 or sp.simplify(d) == 0


def _value_form(v):
    """ReLU's second argument is the convention of its derivative at 0, not part of its value: dropped."""
    def drop(e):
        return e.replace(lambda f: isinstance(f, fn.relu) and len(f.args) == 2, lambda f: fn.relu(f.args[0]))

    return v.applyfunc(drop) if isinstance(v, sp.MatrixBase) else drop(sp.sympify(v))


def same(a, b) -> bool:
    """Equal values: same kind and shape, every entry's difference simplifying to 0 (infinities compared as such)."""
    if isinstance(a, sp.MatrixBase) != isinstance(b, sp.MatrixBase):
        return False
    a, b = _value_form(a), _value_form(b)
    if isinstance(a, sp.MatrixBase):
        return a.shape == b.shape and all(x == y or _zero(x - y) for x, y in zip(a, b))
    return a == b or _zero(a - b)


def _is_mat(v):
    return isinstance(v, sp.MatrixBase)


def _shape(v):
    return v.shape if _is_mat(v) else ()


def _broadcast(a, b, op):
    """a, b brought to one shape as ``symseq.ops.broadcast_shape`` allows, or _Invalid."""
    if not _is_mat(a) and not _is_mat(b):
        return a, b
    try:
        shape = ops.broadcast_shape(_shape(a), _shape(b), op)
    except Exception as e:  # a reading of mismatched shapes
        return _Invalid(str(e)), None

    def full(v):
        if not _is_mat(v):
            return sp.ImmutableMatrix(shape[0], shape[1], lambda i, j: v)
        return sp.ImmutableMatrix(shape[0], shape[1],
                                  lambda i, j: v[i if v.shape[0] > 1 else 0, j if v.shape[1] > 1 else 0])

    return full(a), full(b)


def _entrywise(f, *vs):
    mats = [v for v in vs if _is_mat(v)]
    if not mats:
        return f(*vs)
    m, n = mats[0].shape
    if any(v.shape != (m, n) for v in mats):
        return _Invalid("entrywise function of matrices of different shapes")
    return sp.ImmutableMatrix(m, n, lambda i, j: f(*[v[i, j] if _is_mat(v) else v for v in vs]))


def _rows_softmax(S):
    out = []
    for i in range(S.rows):
        row = list(S.row(i))
        allowed = [x for x in row if x is not sp.S.NegativeInfinity]
        out.append([sp.S.Zero if x is sp.S.NegativeInfinity else sp.exp(x) / sp.Add(*[sp.exp(y) for y in allowed])
                    for x in row])
    return sp.ImmutableMatrix(out)


def _rows_lse(Z):
    return sp.ImmutableMatrix([[sp.log(sp.Add(*[sp.exp(x) for x in Z.row(i)]))] for i in range(Z.rows)])


# functions of one value, applied entrywise
UNARY = {
    "sigma": fn.sigmoid, "relu": fn.relu, "gelu": fn.gelu, "gelutanh": fn.gelu_tanh, "erf": sp.erf,
    "step": lambda x: sp.Heaviside(x, 0), "heaviside": sp.Heaviside,
}
# operations on whole matrices
MATRIX = {
    "softmaxrows": _rows_softmax,
    "logsumexprows": _rows_lse,
    "sumt": lambda X: sp.ImmutableMatrix([[sum(X.col(j))] for j in range(X.cols)]).T,
    "sumj": lambda X: sp.ImmutableMatrix([[sum(X.row(i))] for i in range(X.rows)]),
    "sum": lambda X: sp.Add(*X),
    "meant": lambda X: sp.ImmutableMatrix([[sum(X.col(j)) / X.rows] for j in range(X.cols)]).T,
    "meanj": lambda X: sp.ImmutableMatrix([[sum(X.row(i)) / X.cols] for i in range(X.rows)]),
    "mean": lambda X: sp.Add(*X) / (X.rows * X.cols),
}


# ---------------------------------------------------------------------------
# the parse tree, evaluated
# ---------------------------------------------------------------------------


_TRANSPOSE = _Invalid("T is the transpose only as an exponent")


class Reader(Transformer):
    """Evaluates a parse tree of SymPy's Lark LaTeX grammar with exact values (see module docstring).

    ``env`` maps placeholder symbols (``a``, ``b``, ...) to values; ``index`` maps the
    reserved names of blocks to their index sets.
    """

    def __init__(self, env: dict, index: dict):
        super().__init__(visit_tokens=False)
        self.env = env
        self.index = index

    def _call_userfunc(self, tree, new_children=None):
        try:
            return super()._call_userfunc(tree, new_children)
        except NotRead:
            raise
        except Exception as e:  # lark wraps errors of a rule; a reading that raises is not a reading
            cause = getattr(e, "orig_exc", e)
            if isinstance(cause, NotRead):
                raise cause from None
            return _Invalid(f"{tree.data}: {type(cause).__name__}: {cause}")

    # -- atoms
    def _atom(self, x):
        if not isinstance(x, Token):
            return x
        t = x.value
        if x.type in ("SYMBOL", "LATIN_SYMBOL_WITH_LATIN_SUBSCRIPT"):
            if t in self.env:
                return self.env[t]
            if t == "e":
                return sp.E
            if t == "O":  # \pi, respelled (the grammar has no \pi)
                return sp.pi
            return _Invalid(f"unknown symbol {t!r}")
        if x.type == "DIGIT":
            return sp.Integer(t)
        if x.type == "CMD_INFTY":
            return sp.oo
        return _Invalid(f"token {t!r} is not a value")

    def _vals(self, children):
        vals = [self._atom(c) for c in children if not (isinstance(c, Token) and c.type in _PUNCT)]
        bad = next((v for v in vals if isinstance(v, _Invalid)), None)
        return vals, bad

    def __default__(self, data, children, meta):
        return _Invalid(f"the grammar rule {data} is not handout notation")

    def _ambig(self, children):
        good = [c for c in children if not isinstance(c, _Invalid)]
        if not good:
            return children[0]
        first = good[0]
        for other in good[1:]:
            if not same(first, other):
                raise NotRead(f"two readings with different values: {first} and {other}")
        return first

    def latex_string(self, c):
        vals, bad = self._vals(c)
        return bad or vals[0]

    def number(self, c):
        t = c[0].value
        if t.isdigit():
            return sp.Integer(t)
        return sp.Rational(t)  # a decimal stays exact

    def group_round_parentheses(self, c):
        inner = [x for x in c if not (isinstance(x, Token) and x.type in _PUNCT)]
        if len(inner) == 1 and isinstance(inner[0], Token) and inner[0].value == "T":
            return _TRANSPOSE  # the exponent of ^{T}
        vals, bad = self._vals(c)
        return bad or vals[0]

    group_curly_parentheses = group_round_parentheses

    # -- arithmetic
    def add(self, c):
        vals, bad = self._vals(c)
        if bad:
            return bad
        if len(vals) == 1:
            return vals[0]
        a, b = _broadcast(vals[0], vals[1], "addition")
        return a if isinstance(a, _Invalid) else a + b

    def sub(self, c):
        vals, bad = self._vals(c)
        if bad:
            return bad
        if len(vals) == 1:
            return -vals[0]
        a, b = _broadcast(vals[0], vals[1], "subtraction")
        return a if isinstance(a, _Invalid) else a - b

    def _product(self, a, b):
        if _is_mat(a) and _is_mat(b):
            if a.shape[1] != b.shape[0]:
                return _Invalid(f"matrix product of {a.shape} and {b.shape}")
            return a * b
        return a * b

    def mul(self, c):
        op = next(t for t in c if isinstance(t, Token) and t.type in ("MUL_SYMBOL", "MUL", "CMD_TIMES", "CMD_CDOT"))
        vals, bad = self._vals(c)
        if bad:
            return bad
        a, b = vals
        if op.value == r"\times":  # the Hadamard product
            if not (_is_mat(a) and _is_mat(b)):
                return _Invalid("⊙ between non-matrices")
            a, b = _broadcast(a, b, "⊙")
            return a if isinstance(a, _Invalid) else a.multiply_elementwise(b)
        return self._product(a, b)

    def adjacent_expressions(self, c):
        vals, bad = self._vals(c)
        if bad:
            return bad
        if len(vals) != 2 or any(isinstance(v, str) for v in vals):
            return _Invalid("a function name is not a factor")
        return self._product(*vals)

    def _divide(self, a, b):
        if _is_mat(b):
            a, b = _broadcast(a, b, "division")
            if isinstance(a, _Invalid):
                return a
            return sp.ImmutableMatrix(a.rows, a.cols, lambda i, j: a[i, j] / b[i, j])
        return a / b

    def div(self, c):
        vals, bad = self._vals(c)
        return bad or self._divide(*vals)

    def fraction(self, c):
        vals, bad = self._vals(c)
        return bad or self._divide(*vals)

    def superscript(self, c):
        base, sup = self._atom(c[0]), c[-1]
        if sup is _TRANSPOSE or isinstance(sup, Token) and sup.value == "T":
            if isinstance(base, _Invalid) or not _is_mat(base):
                return _Invalid("transpose of a non-matrix")
            return base.T
        sup = self._atom(sup)
        if isinstance(base, _Invalid):
            return base
        if isinstance(sup, _Invalid):
            return sup
        if base == sp.E:  # e^{X} of a matrix: entrywise, as every function of a matrix in this notation
            return _entrywise(sp.exp, sup)
        if _is_mat(sup):
            return _Invalid("a matrix exponent")
        return _entrywise(lambda x: x**sup, base)

    def square_root(self, c):
        vals, bad = self._vals(c)
        if bad:
            return bad
        if len(vals) == 2:  # \sqrt[n]{x}: the index in square brackets, then the radicand
            n = vals[0]
            return _entrywise(lambda x: x ** (1 / n), vals[1]) if not _is_mat(n) else _Invalid("a matrix index")
        return _entrywise(sp.sqrt, vals[-1])

    def group_square_brackets(self, c):  # only the index of \sqrt[n]{…} (ABSENT allows no other "[")
        return self.group_round_parentheses(c)

    def abs(self, c):
        vals, bad = self._vals(c)
        return bad or _entrywise(sp.Abs, vals[0])

    def _unary(self, f):
        def rule(c):
            vals, bad = self._vals(c)
            return bad or _entrywise(f, vals[-1])

        return rule

    def tanh(self, c):
        return self._unary(sp.tanh)(c)

    def log(self, c):
        if len(c) > 2:
            return _Invalid("a logarithm with a base")
        return self._unary(sp.log)(c)

    # -- reserved functions
    def list_of_expressions(self, c):
        vals, bad = self._vals(c)
        return bad or ("args", vals)

    def function_applied(self, c):
        head = c[0].value
        m = re.fullmatch(r"F_\{([a-z]+)\}", head)
        if not m:
            return _Invalid(f"{head} is not a function")
        args = c[2]
        if isinstance(args, _Invalid):
            return args
        _, args = args
        name = LONG.get(m.group(1), m.group(1))
        if name in UNARY and len(args) == 1:
            return _entrywise(UNARY[name], args[0])
        if name in MATRIX and len(args) == 1:
            return MATRIX[name](args[0]) if _is_mat(args[0]) else _Invalid(f"{name} of a scalar")
        if name == "softmax":
            return fn.softmax(*args)
        if name == "logsumexp":
            return fn.logsumexp(*args)
        if name == "entry" and len(args) == 3:
            X, i, j = args
            return X[int(i), int(j)] if _is_mat(X) else _Invalid("entry of a scalar")
        if name == "hcat":
            if not all(_is_mat(a) for a in args) or len({a.rows for a in args}) != 1:
                return _Invalid("side by side blocks of different heights")
            return sp.ImmutableMatrix(sp.Matrix.hstack(*args))
        if name in self.index and len(args) == 1 and _is_mat(args[0]):
            kind, rows, cols = self.index[name]
            X = args[0]
            rows = _indices(rows, X.rows)
            cols = _indices(cols, X.cols) if cols is not None else list(range(X.cols))
            return sp.ImmutableMatrix(X.extract(rows, cols))
        return _Invalid(f"F_{{{name}}} with {len(args)} arguments")

    # -- matrices: entries, or blocks stacked
    def matrix(self, c):
        body = next(x for x in c if isinstance(x, (list, _Invalid)))
        if isinstance(body, _Invalid):
            return body
        rows = body
        if all(not _is_mat(x) for r in rows for x in r):
            if len({len(r) for r in rows}) != 1:
                return _Invalid("ragged matrix")
            return sp.ImmutableMatrix(rows)
        try:
            return sp.ImmutableMatrix(sp.Matrix.vstack(*[sp.Matrix.hstack(*[x if _is_mat(x) else sp.Matrix([[x]])
                                                                                 for x in r]) for r in rows]))
        except Exception as e:
            return _Invalid(f"blocks that do not fit: {e}")

    def matrix_body(self, c):
        rows = [r for r in c if not isinstance(r, Token)]
        bad = next((r for r in rows if isinstance(r, _Invalid)), None)
        return bad or rows

    def matrix_row(self, c):
        vals, bad = self._vals(c)
        return bad or vals

    # anything that is not handout notation (relations, integrals, limits, ...) is refused by __default__


_PUNCT = {"L_PAREN", "R_PAREN", "L_BRACE", "R_BRACE", "L_BRACKET", "R_BRACKET", "ADD", "SUB", "MUL_SYMBOL",
          "DIV_SYMBOL", "CARET", "CMD_FRAC", "FUNC_SQRT", "BAR", "FUNC_TANH", "FUNC_LOG", "FUNC_LN", "FUNC_EXP",
          "MATRIX_COL_DELIM", "MATRIX_ROW_DELIM", "CMD_MATRIX_BEGIN", "CMD_MATRIX_END", "COMMA", "__ANON_0",
          "CMD_CDOT", "CMD_TIMES", "MUL", "DIV"}


def _indices(spec: str, n: int) -> list:
    """``:`` (all), ``a..b`` (both ends included), ``{a,b}`` or ``\\{a,b\\}`` (listed), ``a`` (one)."""
    spec = spec.strip().replace("\\{", "{").replace("\\}", "}")
    if spec == ":":
        return list(range(n))
    if ".." in spec:
        a, b = spec.split("..")
        return list(range(int(a), int(b) + 1))
    return [int(i) for i in spec.strip("{}").split(",")]


# ---------------------------------------------------------------------------
# handout notation → the grammar's words
# ---------------------------------------------------------------------------


# one-letter placeholders: never d (a differential to the grammar), e (Euler's number), F (reserved functions) or
# T (the transpose); short, since the grammar's Earley parser takes time in proportion to the length
PLACEHOLDERS = "abcfghkmnpqrsuvwxyzABCGJKLMNPQRSUVWXYZ"


def _placeholder(k: int) -> str:
    return PLACEHOLDERS[k]


def _match(s: str, i: int) -> int:
    """Index of the bracket closing the one at ``s[i]`` (``(``, ``{`` or ``[``)."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    open_, close = s[i], pairs[s[i]]
    depth = 0
    for k in range(i, len(s)):
        if s[k] == open_:
            depth += 1
        elif s[k] == close:
            depth -= 1
            if depth == 0:
                return k
    raise NotRead(f"unbalanced {open_!r} in {s!r}")


def _match_back(s: str, k: int) -> int:
    """Index of the bracket opening the one closed at ``s[k]``."""
    pairs = {")": "(", "}": "{", "]": "["}
    close, open_ = s[k], pairs[s[k]]
    depth = 0
    for i in range(k, -1, -1):
        if s[i] == close:
            depth += 1
        elif s[i] == open_:
            depth -= 1
            if depth == 0:
                return i
    raise NotRead(f"unbalanced {close!r} in {s!r}")


def _letter_or_digit(ch: str) -> bool:
    """A letter or digit that continues a word (x₀'s subscript ₀ and Xᵀ's ᵀ do not)."""
    return bool(ch) and unicodedata.category(ch) in ("Lu", "Ll", "Lo", "Nd")


def _replace_names(s: str, names: dict, sentinels: dict) -> str:
    """Each printed name (longest first) by one private-use character; a name never matches inside a longer word."""
    for printed in sorted(names, key=len, reverse=True):
        ch = sentinels[names[printed]]
        out, i = [], 0
        while i < len(s):
            if s.startswith(printed, i):
                before = s[i - 1] if i else ""
                after = s[i + len(printed)] if i + len(printed) < len(s) else ""
                starts_word = printed[0].isalnum() or printed[0] == "\\"
                glued_before = before.isalpha() and starts_word or before == "\\"
                glued_after = _letter_or_digit(after) and _letter_or_digit(printed[-1])
                if not glued_before and not glued_after:
                    out.append(ch)
                    i += len(printed)
                    continue
            out.append(s[i])
            i += 1
        s = "".join(out)
    return s


_HEADS = [  # (printed head, reserved function); longest spellings first
    (r"\operatorname{softmax}_{\mathrm{rows}}", "F_{softmaxrows}"),
    (r"\operatorname{logsumexp}_{\mathrm{rows}}", "F_{logsumexprows}"),
    (r"\operatorname{softmax}", "F_{softmax}"),
    (r"\operatorname{logsumexp}", "F_{logsumexp}"),
    (r"\operatorname{ReLU}", "F_{relu}"),
    (r"\operatorname{GELU}_{\tanh}", "F_{gelutanh}"),
    (r"\operatorname{GELU}", "F_{gelu}"),
    (r"\operatorname{erf}", "F_{erf}"),
    (r"\operatorname{mean}_{t}", "F_{meant}"),
    (r"\operatorname{mean}_{j}", "F_{meanj}"),
    (r"\operatorname{mean}", "F_{mean}"),
    (r"\sum_{t}", "F_{sumt}"),
    (r"\sum_{j}", "F_{sumj}"),
    (r"\sum", "F_{sum}"),
    (r"\sigma", "F_{sigma}"),
]


def _heads(s: str) -> str:
    for printed, reserved in _HEADS:
        s = re.sub(re.escape(printed) + r"(?![A-Za-z])", lambda m: reserved, s)
    # Heaviside: 1[x > 0] (H(0) = 0) and H(x) (H(0) = 1/2)
    while r"\mathbf{1}[" in s:
        i = s.index(r"\mathbf{1}[") + len(r"\mathbf{1}")
        k = _match(s, i)
        inner = s[i + 1:k]
        if not inner.rstrip().endswith("> 0"):
            raise NotRead(f"an indicator that is not [x > 0]: {inner!r}")
        s = s[:i - len(r"\mathbf{1}")] + "F_{step}(" + inner.rstrip()[:-3].rstrip() + ")" + s[k + 1:]
    s = re.sub(r"(?<![A-Za-z\\_])H(?=\()", "F_{heaviside}", s)
    return s


def _function_groups(s: str) -> str:
    """``F{(x)}`` → ``F(x)``; ``head^{k}(x)`` → ``(head(x))^{k}``;
    ``F_{softmax}(row)_{k}`` → ``F_{softmax}(k, row)``."""
    heads = r"(F_\{[a-z]+\}|\\tanh|\\log|\\exp)"
    changed = True
    while changed:
        changed = False
        for m in re.finditer(heads + r"\{\(", s):  # SymPy's f{\left(x \right)}
            i = m.end() - 2
            k = _match(s, i)
            if k == _match(s, i + 1) + 1:
                s = s[:i] + s[i + 1:k] + s[k + 1:]
                changed = True
                break
        if changed:
            continue
        for m in re.finditer(heads + r"\^\{", s):  # a power of a function
            j = m.end() - 1
            k = _match(s, j)
            if k + 1 < len(s) and s[k + 1] in "({":
                e = _match(s, k + 1)
                arg = s[k + 1:e + 1]
                if arg.startswith("{"):
                    arg = arg[1:-1]
                s = s[:m.start()] + "(" + m.group(1) + arg + ")^" + s[j:k + 1] + s[e + 1:]
                changed = True
                break
        if changed:
            continue
        for m in re.finditer(r"F_\{softmax\}\(", s):
            i = m.end() - 1
            k = _match(s, i)
            sub = re.match(r"_\{([^{}]+)\}", s[k + 1:])
            if sub:
                s = s[:i + 1] + sub.group(1) + ", " + s[i + 1:k + 1] + s[k + 1 + sub.end():]
                changed = True
                break
    return s


def _braced_calls(s: str) -> str:
    r"""``\tanh(x) y`` → ``(\tanh(x)) y``: the group SymPy writes after a function (``\tanh{\left(x \right)}``) holds
    all of its argument (the grammar would also let ``\tanh`` take the product that follows)."""
    out, i = [], 0
    for m in re.finditer(r"\\(tanh|log|exp)[{(]", s):
        if m.start() < i:
            continue
        k = _match(s, m.end() - 1)
        call = m.group(0) + _braced_calls(s[m.end():k]) + s[k]
        enclosed = s[:m.start()].endswith("(") and s[k + 1:k + 2] == ")"
        out.append(s[i:m.start()] + (call if enclosed else "(" + call + ")"))
        i = k + 1
    return "".join(out) + s[i:]


def _base_start(s: str, k: int) -> int:
    """Start of the operand that ends at ``s[k]`` (a placeholder character, a group, or a call)."""
    ch = s[k]
    if ord(ch) >= _SENTINEL0:
        return k
    if ch in ")}]":
        i = _match_back(s, k)
        head = re.search(r"(F_\{[a-z]+\}|\\tanh|\\log|\\exp|\\sqrt)$", s[:i])
        if head:
            return head.start()
        return i
    raise NotRead(f"a subscript with no operand before it in {s!r}")


def _indexing(s: str, index: dict) -> str:
    """Entries ``X_{01}`` (``X_{1,10}``) and blocks ``X_{0..1,:}`` (``X_{\\{0,2\\},:}``) as reserved calls."""
    while True:
        m = re.search(r"_\{(\d)(\d)\}|_\{(\d+),(\d+)\}|_\{(%s,%s)\}" % (_AXIS, _AXIS), s)
        if m is None:
            return s
        k = m.start() - 1
        if s[k] == "^" or (s[k] == "}" and s[_match_back(s, k) - 1] == "^"):
            raise NotRead(f"a subscript on a superscript: {s!r}")
        i = _base_start(s, k)
        base = s[i:k + 1]
        if m.group(5) is not None:
            key = "k" + string.ascii_lowercase[len(index) % 26] * (1 + len(index) // 26)
            index[key] = ("block", *_split_block(m.group(5)))
            s = s[:i] + "F_{%s}(%s)" % (key, base) + s[m.end():]
        else:
            a, b = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
            s = s[:i] + "F_{entry}(%s, %s, %s)" % (base, a, b) + s[m.end():]


_AXIS = r"(?::|\d+\.\.\d+|\\?\{[\d,]+\\?\}|\d+)"  # the indices of one axis of a block (Notation.slice)


def _split_block(spec: str):
    m = re.fullmatch(r"(%s),(%s)" % (_AXIS, _AXIS), spec.strip())
    if m is None:
        raise NotRead(f"block indices {spec!r} do not say where the rows end and the columns start")
    return m.group(1), m.group(2)


def _concat(s: str) -> str:
    r"""``\left[a \;\middle|\; b\right]`` → ``F_{hcat}(a, b)`` (innermost first)."""
    sep = r"\;\middle|\;"
    while sep in s:
        j = s.index(sep)
        i = s.rindex(r"\left[", 0, j)
        depth, k, p = 0, None, i
        while p < len(s):
            if s.startswith(r"\left", p):
                depth += 1
            elif s.startswith(r"\right", p):
                depth -= 1
                if depth == 0:
                    k = p
                    break
            p += 1
        inner = s[i + len(r"\left["):k]
        if not s.startswith(r"\right]", k):
            raise NotRead(f"side-by-side blocks not closed by \\right]: {s!r}")
        parts, depth, cur, p = [], 0, "", 0
        while p < len(inner):
            if inner.startswith(r"\left", p):
                depth += 1
            elif inner.startswith(r"\right", p):
                depth -= 1
            if depth == 0 and inner.startswith(sep, p):
                parts.append(cur)
                cur, p = "", p + len(sep)
                continue
            cur += inner[p]
            p += 1
        parts.append(cur)
        s = s[:i] + "F_{hcat}(" + ", ".join(p.strip() for p in parts) + ")" + s[k + len(r"\right]"):]
    return s


_OPERAND_END = re.compile(r"[A-Za-z0-9)}\]'\ue100-\uf8ff]$")
_OPERAND_START = re.compile(r"^([A-Za-z0-9({\ue100-\uf8ff]|"
                            r"\\(?!odot|times|cdot|right|middle|end|\\|,|;|quad|approx)[A-Za-z]+)")


def _products(s: str) -> str:
    """A blank between two operands is a product: write it ``\\cdot``."""
    s = s.replace(r"\,", " ").replace(r"\;", " ")
    out = []
    parts = re.split(r"(\s+)", s)
    for idx, part in enumerate(parts):
        if part.isspace() and 0 < idx < len(parts) - 1:
            left = "".join(out)
            right = "".join(parts[idx + 1:])
            if _OPERAND_END.search(left) and _OPERAND_START.search(right) and not re.search(r"\\[A-Za-z]+$", left):
                out.append(r" \cdot ")
                continue
        out.append(part)
    return "".join(out)


# The grammar's Earley parser takes time in proportion to the length of the text: the reserved names are short
SHORT = {"softmaxrows": "sr", "logsumexprows": "lr", "softmax": "sm", "logsumexp": "ls", "relu": "re",
         "gelutanh": "gt", "gelu": "ge", "erf": "er", "meant": "mt", "meanj": "mj", "mean": "mn", "sumt": "st",
         "sumj": "sj", "sum": "su", "sigma": "sg", "step": "sp", "heaviside": "hv", "entry": "en", "hcat": "hc"}
LONG = {v: k for k, v in SHORT.items()}


def _compact(s: str) -> str:
    """The same text, shorter: reserved names by their codes, ``\\cdot`` as ``*``, no blanks (but one after a
    control word that a letter follows)."""
    s = re.sub(r"F_\{([a-z]+)\}", lambda m: "F_{%s}" % SHORT.get(m.group(1), m.group(1)), s)
    s = s.replace(r"\cdot", "*")
    s = re.sub(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])", lambda m: m.group(1) + "\0", s)
    return re.sub(r"\s+", "", s).replace("\0", " ")


def to_grammar(tex: str, names: dict) -> tuple[str, dict, dict]:
    """``tex`` in the words of SymPy's Lark LaTeX grammar (see the module docstring).

    ``names`` maps each printed name to the key of its value. Returns the
    respelled string, the placeholder → key map and the index sets of blocks and lookups.
    """
    if r"\times" in tex:
        raise NotRead(r"\times is reserved for the Hadamard product when reading; the package printed it itself")
    keys = sorted(set(names.values()), key=str)
    sentinels = {key: chr(_SENTINEL0 + k) for k, key in enumerate(keys)}
    s = _replace_names(tex, names, sentinels)
    s = _concat(s)
    s = re.sub(r"\\(left|right)(?![A-Za-z])", "", s)
    s = s.replace(r"\odot", r"\times").replace(r"^{\top}", "^{T}")
    s = re.sub(r"\\pi(?![A-Za-z])", "O", s)  # the grammar has no \pi: O (never a placeholder) is read as π
    s = _heads(s)
    s = _function_groups(s)
    s = _braced_calls(s)
    index: dict = {}
    s = _indexing(s, index)
    s = _products(s)
    s = _compact(s)
    if ABSENT.search(s):
        raise NotRead(f"{s!r} holds {ABSENT.search(s).group(0)!r}, which the trimmed grammar leaves out")
    placeholders = {}
    for k, key in enumerate(keys):
        ph = _placeholder(k)
        s = s.replace(sentinels[key], ph)
        placeholders[ph] = key
    return s, placeholders, index


def tex_problems(tex: str) -> list:
    """What would stop pdflatex in a formula: unbalanced braces or ``\\left``/``\\right``, a double superscript or
    subscript (``e^{X}^{2}``, ``x'^{2}``: one base takes one of each)."""
    out = []
    if not balanced_braces(tex):
        out.append("unbalanced braces")
    if len(re.findall(r"\\left(?![A-Za-z])", tex)) != len(re.findall(r"\\right(?![A-Za-z])", tex)):
        out.append("unpaired \\left/\\right")
    used, i = set(), 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":  # a control word or symbol is a base of its own
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            used, i = set(), i + m.end()
            continue
        if ch in "^_'":
            mark = "^" if ch in "^'" else "_"
            if mark in used:
                out.append(f"double {'superscript' if mark == '^' else 'subscript'} at {tex[max(0, i - 12):i + 6]!r}")
            used.add(mark)
            j = i + 1
            if ch != "'" and j < len(tex):
                if tex[j] == "{":
                    j = _match(tex, j) + 1
                elif tex[j] == "\\":
                    j += re.match(r"\\([A-Za-z]+|.)", tex[j:]).end()
                else:
                    j += 1
            i = j
            continue
        if not ch.isspace():
            used = set()
        i += 1
    return out


def canonical(text: str) -> str:
    """A respelled text written one way, with the same value: ``\\frac{A}{B}`` as ``((A)/(B))``, ``^x`` as
    ``^{x}``, a brace group standing as an argument as parentheses, then no parentheses that change nothing:
    around a whole argument or exponent, around a lone symbol or number, and around a product or quotient
    (no sum at its top level) that starts a term or a chain of products (``(a/b)/c`` is ``a/b/c``: products
    and quotients read from the left). Used only to see that two forms say the same thing before parsing
    them; when they do not, both are parsed."""
    while r"\frac{" in text:
        i = text.rindex(r"\frac{")
        j = i + len(r"\frac")
        k = _match(text, j)
        if k + 1 >= len(text) or text[k + 1] != "{":
            return text
        e = _match(text, k + 1)
        text = text[:i] + "((" + text[j + 1:k] + ")/(" + text[k + 2:e] + "))" + text[e + 1:]
    text = re.sub(r"\^([A-Za-z0-9])", r"^{\1}", text)
    changed = True
    while changed:
        changed = False
        for m in re.finditer(r"[({]", text):
            i = m.start()
            k = _match(text, i)
            before, after = text[:i], text[k + 1:]
            inner = text[i + 1:k]
            if text[i] == "{":
                if before.endswith(("(", ",")) and after.startswith((")", ",")):  # {x} as an argument
                    text = before + "(" + inner + ")" + after
                    changed = True
                    break
                continue
            call = bool(re.search(r"(F_\{[a-z]+\}|\\[A-Za-z]+)$", before))
            if call:
                continue  # the parentheses of a call
            whole = ((not before or before.endswith(("(", "{", ",")))
                     and (not after or after.startswith((")", "}", ","))))
            atom = re.fullmatch(r"[A-Za-z]|\d+", inner) or _one_call(inner)
            chain = not _top_level_sum(inner) and not inner.startswith(("-", r"\tanh", r"\log"))
            starts = not before or before.endswith(("(", "{", ",", "+", "-"))
            ends = not after or after.startswith((")", "}", ",", "+", "-", "*", "/", r"\times"))
            if whole or atom or chain and starts and ends:
                text = before + inner + after
                changed = True
                break
    return text


def _one_call(s: str) -> bool:
    """Whether ``s`` is one reserved call ``F_{..}(...)`` or one root ``\\sqrt{...}``."""
    m = re.match(r"F_\{[a-z]+\}\(|\\sqrt\{", s)
    return bool(m) and _match(s, m.end() - 1) == len(s) - 1


def _top_level_sum(s: str) -> bool:
    """Whether ``s`` has a ``+`` or ``-`` outside brackets (other than a leading sign)."""
    depth = 0
    for k, ch in enumerate(s):
        depth += ch in "({"
        depth -= ch in ")}"
        if depth == 0 and ch in "+-" and k > 0:
            return True
    return False


def read_latex(tex: str, names: dict, env: dict):
    """The value ``tex`` denotes, read by SymPy's Lark LaTeX grammar with ``names`` bound to ``env`` values.

    ``names`` maps each printed name to a key of ``env``.

    Raises:
        NotRead: the grammar cannot read it, or reads it two ways with different values.
    """
    text, placeholders, index = to_grammar(tex, names)
    try:
        tree = _parse(text)
    except Exception as e:
        raise NotRead(f"SymPy's LaTeX grammar cannot read {text!r} (printed {tex!r}): {type(e).__name__}") from None
    value = Reader({ph: env[key] for ph, key in placeholders.items()}, index).transform(tree)
    if isinstance(value, _Invalid):
        raise NotRead(f"{tex!r} (read as {text!r}) has no reading that can be evaluated: {value.why}")
    return value


# Unicode spellings the LaTeX converter leaves as letters: the function names and named operations
_UNICODE_WORDS = [  # in the output of tex_math
    ("softmax_rows(", r"\operatorname{softmax}_{\mathrm{rows}}("),
    ("logsumexp_rows(", r"\operatorname{logsumexp}_{\mathrm{rows}}("),
    ("softmax(", r"\operatorname{softmax}("), ("logsumexp(", r"\operatorname{logsumexp}("),
    ("GELU_tanh(", r"\operatorname{GELU}_{\tanh}("), ("GELU(", r"\operatorname{GELU}("),
    ("ReLU(", r"\operatorname{ReLU}("), ("erf(", r"\operatorname{erf}("),
    ("mean_t(", r"\operatorname{mean}_{t}("), ("mean_j(", r"\operatorname{mean}_{j}("),
    ("mean(", r"\operatorname{mean}("), (r"\Sigma_t(", r"\sum_{t}("), (r"\Sigma_j(", r"\sum_{j}("),
    (r"\Sigma(", r"\sum("), ("tanh", r"\tanh"), ("log(", r"\log("),
]


def unicode_to_latex(text: str, names: dict) -> tuple[str, dict]:
    """A Unicode form as LaTeX, by the package's own ``tex_math``, with the names it binds
    (see :func:`read_unicode`)."""
    keys = sorted(set(names.values()), key=str)
    sentinels = {key: chr(_SENTINEL0 + k) for k, key in enumerate(keys)}
    s = _replace_names(text, names, sentinels)
    s = re.sub("√([\ue100-\uf8ff])", r"√(\1)", s)  # √X: tex_math takes a root's argument to be letters or digits
    s = _unicode_indexing(s)
    tex = tex_math(s)
    for ch in sentinels.values():  # tex_math spells a character it has no LaTeX for as \text{[U+XXXX]}
        tex = tex.replace(r"\text{[U+%04X]}" % ord(ch), ch)
    tex = _unicode_blocks(tex)
    for word, rep in _UNICODE_WORDS:
        tex = re.sub(r"(?<![A-Za-z\\])" + re.escape(word), lambda m: rep, tex)
    return _call_groups(tex), {ch: key for key, ch in sentinels.items()}


def _call_groups(tex: str) -> str:
    r"""``\tanh(x)/y`` → ``\tanh{(x)}/y``: in the Unicode form the parentheses after a function are its call's (the
    grammar would also let ``\tanh`` take all of ``(x)/y``); SymPy's LaTeX writes the braces itself."""
    out, i = [], 0
    for m in re.finditer(r"\\(tanh|log|exp)(?:\^\{[^{}]*\})?\(", tex):
        if m.start() < i:
            continue
        j = m.end() - 1
        k = _match(tex, j)
        out.append(tex[i:j] + "{" + _call_groups(tex[j:k + 1]) + "}")
        i = k + 1
    return "".join(out) + tex[i:]


def read_unicode(text: str, names: dict, env: dict):
    """The value a Unicode form denotes: LaTeX by the package's own ``tex_math``, then :func:`read_latex`.

    Names are set aside first (as private-use characters), and the spellings that exist only in the Unicode
    form are respelled: ``X[0,1]`` (an entry), ``X[0..1, :]`` and ``X[{0,2}, :]`` (blocks), ``[a | b]`` and
    ``[a; b]`` (blocks side by side and stacked), ``[[1, 2], [3, 4]]`` (a constant), function words (``tanh``,
    ``softmax_rows``, ``Σ_t``) as their LaTeX commands.
    """
    tex, names_tex = unicode_to_latex(text, names)
    return read_latex(tex, names_tex, env)


def _unicode_indexing(s: str) -> str:
    r"""After an operand: ``X[0,1]`` → ``X_{0,1}`` (an entry), ``X[0..1, :]`` and ``X[{0,2}, :]`` → ``X_{0..1,:}``,
    ``X_{\{0,2\},:}`` (a block), ``softmax(a, b)[k]`` → ``softmax(a, b)_{k}``; ``E[k_t]`` (a named lookup) stays."""
    out = s
    for m in reversed(list(re.finditer(r"(?<=[\ue100-\uf8ff\)\]ᵀ])\[([^\[\]]*)\]", s))):
        body = m.group(1)
        if s[m.start() - 1] == ")" and s[:_match_back(s, m.start() - 1)].endswith("softmax"):
            rep = "_{%s}" % body  # softmax(row)[k]: entry k of the row's softmax
        elif re.fullmatch(r"\d+,\d+", body):
            rep = "_{%s}" % body
        elif ", " in body:
            rows, cols = body.split(", ", 1)
            rep = "_{%s,%s}" % (rows, cols)
        else:
            rep = "[%s]" % body
        out = out[:m.start()] + rep + out[m.end():]
    return out


def _unicode_blocks(s: str) -> str:
    r"""``[a | b]`` → ``\left[a \;\middle|\; b\right]``; ``[a; b]`` → ``\begin{bmatrix}a \\ b\end{bmatrix}``;
    a constant ``[[1, 2], [3, 4]]`` (or one row ``[1, 2]``) → ``\begin{pmatrix}...\end{pmatrix}``."""
    out, i = [], 0
    while i < len(s):
        ch = s[i]
        if ch != "[" or i > 0 and (ord(s[i - 1]) >= _SENTINEL0 or s[i - 1] in ")]}_{" or s[i - 1].isalnum()):
            out.append(ch)
            i += 1
            continue
        k = _match(s, i)
        inner = s[i + 1:k]
        bars, semis, commas = (_split_top(inner, sep) for sep in "|;,")
        if len(bars) > 1:
            rep = r"\left[" + r" \;\middle|\; ".join(_unicode_blocks(p.strip()) for p in bars) + r"\right]"
        elif len(semis) > 1:
            rep = r"\begin{bmatrix}" + r" \\ ".join(_unicode_blocks(p.strip()) for p in semis) + r"\end{bmatrix}"
        elif all(re.fullmatch(r"\[.*\]", p.strip()) for p in commas):  # [[1, 2], [3, 4]]
            rows = [_split_top(p.strip()[1:-1], ",") for p in commas]
            rep = r"\begin{pmatrix}" + r" \\ ".join(" & ".join(_unicode_blocks(x.strip()) for x in r) for r in rows) \
                + r"\end{pmatrix}"
        elif len(commas) > 1:  # [1, 2]
            rep = r"\begin{pmatrix}" + " & ".join(_unicode_blocks(x.strip()) for x in commas) + r"\end{pmatrix}"
        else:
            rep = "[" + _unicode_blocks(inner) + "]"
        out.append(rep)
        i = k + 1
    return "".join(out)


def _split_top(s: str, sep: str) -> list:
    """``s`` split at each ``sep`` outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and ch == sep:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    return parts + [cur]
