"""Every printed form of an expression reads back as the expression (issue 12).

Each form the package prints (Notation's LaTeX, plain and bold, and Unicode, for
node trees and for SymPy expressions, and the rows of ``ledger_latex``) is read
back by SymPy's Lark LaTeX grammar (``tests/roundtrip_helpers.py`` says how our
notation is respelled for it) and must denote the exact value of what was
printed, every entry's difference simplifying to zero.

Not read back by value, and why (each is checked as an atom instead: the rest of
the expression must read right with it standing for its value, and its argument,
printed inside it, must read back by itself):

* ``Z_{t,c_{t}}`` (TakeAlong): the targets c_t are not printed;
* ``\\operatorname{onehot}(G)`` (PlaceAlong): neither the targets nor the width are printed;
* ``E_{r,c} G`` (Place, an adjoint of indexing): the shape of the unit matrix is not printed;
* ``E[k_t]`` (TakeRows with a label): the label names the index set, not its values.
"""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symseq import Ledger, ops
from symseq import functions as F
from symseq.present.latex import ledger_latex
from symseq.present.notation import Notation, _unbold

from present_helpers import pdflatex
from roundtrip_helpers import (FULL_PARSER, PARSER, NotRead, canonical, meaning, read_latex, read_unicode, same,
                               symbolic_env, tex_problems, to_grammar, unicode_to_latex)

STYLES = (("latex", False), ("latex", True), ("unicode", False))
OPAQUE = (ops.TakeAlong, ops.PlaceAlong, ops.Place)


def _ledger():
    """Leaves of pairwise-distinct shapes, so a transposed or swapped operand cannot read back right."""
    L = Ledger()
    L.input("X", shape=(2, 3))
    L.input("Y", shape=(2, 3))
    L.parameter("W_Q", shape=(3, 2))
    L.input("g_0^z", shape=(2, 2))
    L.input("r", shape=(1, 3))
    L.input("c", shape=(2, 1))
    L.input("a")
    L.input("b")
    L.input("mu")
    L.input("yhat", display="ŷ")
    return L


LEDGER = _ledger()
X, Y, W, G, R, C = (ops.Ref(n, LEDGER[n].shape, LEDGER) for n in ("X", "Y", "W_Q", "g_0^z", "r", "c"))
A, B, MU, YHAT = (ops.Ref(n, (), LEDGER) for n in ("a", "b", "mu", "yhat"))
a, b, mu = (LEDGER[n].symbol for n in ("a", "b", "mu"))


ENV = symbolic_env(LEDGER)


def names_of(n: Notation, ledger, node=None) -> dict:
    """Printed name → key of its value: every ledger name (and its unbold form inside an entry), the labels of
    the tree's constants, and the printed text of the atoms that are not read back by value (module docstring)."""
    out = {}
    for name in ledger.items:
        out[n.name(name)] = name
        out[_unbold(n.name(name))] = name
    if node is not None:
        for k in ops.walk(node):
            if isinstance(k, ops.Const) and k.label is not None:
                out[n.label(k.label)] = ("label", k.label, k.key())
            if isinstance(k, OPAQUE) or isinstance(k, ops.TakeRows) and k.label is not None:
                out[n.render(k)] = ("atom", k.key())
    return out


def bindings(names: dict, node, env: dict) -> dict:
    """``env`` with the constants' labels and the atoms bound to their values."""
    env = dict(env)
    for k in ops.walk(node) if node is not None else ():
        if isinstance(k, ops.Const) and k.label is not None:
            env[("label", k.label, k.key())] = meaning(k, env)
        if isinstance(k, OPAQUE) or isinstance(k, ops.TakeRows) and k.label is not None:
            env[("atom", k.key())] = meaning(k, env)
    return env


def read(text: str, style: str, names: dict, env: dict):
    return (read_latex if style == "latex" else read_unicode)(text, names, env)


def _broadcast_to(got, want, node):
    """A broadcast prints as what it repeats (the adjoint 1 of a sum, a bias row): when ``node`` holds one, a read
    scalar or row stands for every row of the matrix it was printed for."""
    if not any(isinstance(k, ops.Broadcast) for k in ops.walk(node)) or not isinstance(want, sp.MatrixBase):
        return got
    if not isinstance(got, sp.MatrixBase):
        return sp.ImmutableMatrix(*want.shape, lambda i, j: got)
    if got.shape != want.shape and ops.broadcast_shape(got.shape, want.shape, "broadcast") == want.shape:
        return sp.ImmutableMatrix(*want.shape, lambda i, j: got[min(i, got.rows - 1), min(j, got.cols - 1)])
    return got


def says_the_same(text: str, style: str, names: dict, read_back) -> bool:
    """Whether a form, respelled for the grammar, is word for word the plain LaTeX form that read back
    (``read_back``: its text and names); then it denotes the same value and need not be parsed again (the
    grammar's parser is slow). Bold LaTeX differs from plain only in its names; Unicode is first turned into
    LaTeX by the package's ``tex_math``."""
    if read_back is None:
        return False
    tex, tex_names = unicode_to_latex(text, names) if style == "unicode" else (text, names)
    try:
        return canonical(to_grammar(tex, tex_names)[0]) == canonical(to_grammar(*read_back)[0])
    except NotRead:
        return False


def failures(node, ledger=LEDGER, env=ENV, styles=STYLES, *, compare_unicode=False) -> list:
    """Each printed form of ``node`` that does not read back as its value: (style, bold, text, reason).

    A bold LaTeX form that says word for word what the plain LaTeX form (read back first) says is not parsed
    again; with ``compare_unicode`` neither is such a Unicode form (its LaTeX, by ``tex_math``, is compared)."""
    want = meaning(node, env)
    out, read_back = [], None
    for style, bold in styles:
        n = Notation(style, ledger, bold=bold)
        text = n.render(node)
        names = names_of(n, ledger, node)
        if style == "latex" and tex_problems(text):
            out.append((style, bold, text, "; ".join(tex_problems(text))))
        if (style == "latex" or compare_unicode) and says_the_same(text, style, names, read_back):
            continue
        try:
            got = read(text, style, names, bindings(names, node, env))
        except NotRead as e:
            out.append((style, bold, text, str(e)))
            continue
        if not same(_broadcast_to(got, want, node), want):
            out.append((style, bold, text, f"reads as {got}, is {want}"))
        elif style == "latex" and not bold:
            read_back = (text, names)
    return out


def expr_failures(e, ledger=LEDGER, env=ENV) -> list:
    """Each printed form of a SymPy expression (Notation.expr, LaTeX and Unicode) that does not read back."""
    out = []
    for style in ("latex", "unicode"):
        n = Notation(style, ledger)
        text = n.expr(e)
        names = names_of(n, ledger)
        try:
            got = read(text, style, names, env)
        except NotRead as err:
            out.append((style, text, str(err)))
            continue
        want = e.xreplace({it.symbol: env[name] for name, it in ledger.items.items() if it.symbol is not None})
        if not same(got, want):
            out.append((style, text, f"reads as {got}"))
    return out


# ---------------------------------------------------------------------------
# the finding: a negated factor
# ---------------------------------------------------------------------------


def test_a_product_with_a_negated_factor_keeps_its_product():
    e = sp.Mul(a, -b, evaluate=False)  # a·(−b), as an author may build it: it used to print "a - b"
    assert Notation("latex").expr(e) == r"a \left(- b\right)"
    assert Notation("unicode").expr(e) == "a (−b)"
    assert expr_failures(e) == []
    assert failures(ops.Scalar(e)) == []
    assert failures(ops.Mul(ops.Const(sp.Integer(2), label="c_0"), ops.Scalar(sp.Mul(a, -b, evaluate=False)))) == []


def test_a_negated_term_that_prints_with_a_minus_keeps_its_parentheses():
    """x − (−2x): the negation of a term that prints with its own minus sign (found by the random trees)."""
    minus_two_b = ops.Scalar(sp.Mul(-2, b, evaluate=False))
    for node in (ops.Add(ops.Scalar(b), ops.Neg(minus_two_b)), ops.Neg(minus_two_b)):
        assert failures(node) == []
    # b − (−1)(−2 b) unevaluated, as a formula may hold it: it printed "b - - 2 b"
    e = sp.Add(b, sp.Mul(-1, sp.Mul(-1, 2, b, evaluate=False), evaluate=False), evaluate=False)
    assert expr_failures(e) == []
    assert "- -" not in Notation("latex").expr(e) and "− −" not in Notation("unicode").expr(e)


def test_two_numbers_side_by_side_keep_their_product():
    e = sp.Mul(2, 3, a, evaluate=False)  # 2·3·a, never 23 a
    assert Notation("unicode").expr(e) == "2·3 a"
    assert expr_failures(e) == []


# ---------------------------------------------------------------------------
# every node of symseq.ops, and every function of symseq.functions
# ---------------------------------------------------------------------------

u = sp.Symbol("u", real=True)

NODES = {
    "Ref": X,
    "Const": ops.Const(sp.Matrix([[1, -2, sp.Rational(1, 2)], [0, sp.sqrt(2), -sp.Rational(3, 4)]])),
    "Const labelled": ops.Add(X, ops.Const(sp.Matrix([[0, -sp.oo, 0], [0, 0, -sp.oo]]), label="M")),
    "Scalar": ops.Scalar(-a * b / (1 + sp.sqrt(2) * mu) ** 2),
    "Add": ops.Add(X, ops.Neg(Y), ops.Mul(A, Y)),
    "Add of a broadcast row": ops.Add(X, R),
    "Add of a broadcast column": ops.Add(ops.Neg(X), C),
    "Neg": ops.Neg(ops.Add(X, Y)),
    "Neg of a product": ops.Neg(ops.MatMul(X, W)),
    "Mul scale": ops.Mul(ops.Scalar(-a), X),
    "Mul Hadamard": ops.Mul(X, ops.Neg(Y)),
    "Mul of a negated product": ops.Mul(ops.Neg(ops.MatMul(X, W)), G),
    "Div by a scalar": ops.Div(ops.MatMul(X, W), ops.Const(sp.sqrt(2))),
    "Div elementwise": ops.Div(X, ops.Add(Y, ops.Const(1))),
    "Div nested": ops.Div(ops.Div(X, A), ops.Div(B, MU)),
    "MatMul": ops.MatMul(ops.MatMul(X, W), G),
    "MatMul of a sum": ops.MatMul(G, ops.Add(X, ops.Neg(Y))),
    "Transpose": ops.Transpose(ops.Add(X, ops.Neg(Y))),
    "Transpose of a name with scripts": ops.MatMul(ops.Transpose(G), G),
    "Transpose of a product": ops.MatMul(ops.Transpose(W), ops.Transpose(X)),
    "Map tanh": ops.Map(sp.tanh, ops.Neg(X)),
    "Map exp": ops.Map(sp.exp, X),
    "Map log": ops.Map(sp.log, X),
    "Map sqrt": ops.Map(sp.Lambda(u, sp.sqrt(u)), ops.Add(X, ops.Const(1))),
    "Map square": ops.Map(sp.Lambda(u, u**2), ops.Neg(X)),
    "Map reciprocal": ops.Map(sp.Lambda(u, 1 / u), X),
    "Map tanh'": ops.Mul(Y, ops.Map(sp.Lambda(u, 1 - sp.tanh(u) ** 2), X)),
    "Map sigmoid": ops.Map(F.sigmoid, ops.Neg(X)),
    "Map sigmoid'": ops.Map(sp.Lambda(u, sp.diff(F.sigmoid(u), u)), X),
    "Map relu": ops.Map(F.relu, X),
    "Map relu'": ops.Map(sp.Lambda(u, sp.diff(F.relu(u), u)), X),
    "Map relu at zero": ops.Map(sp.Lambda(u, F.relu_at_zero(u, sp.S.Half)), X),
    "Map relu' at zero 1/2": ops.Map(sp.Lambda(u, sp.diff(F.relu_at_zero(u, sp.S.Half), u)), X),
    "Map gelu": ops.Map(F.gelu, X),
    "Map gelu'": ops.Map(sp.Lambda(u, sp.diff(F.gelu(u), u)), X),
    "Map gelu_tanh": ops.Map(F.gelu_tanh, X),
    "Map Heaviside": ops.Map(sp.Lambda(u, sp.Heaviside(u)), X),
    "Sum over positions": ops.Sum(X, 0),
    "Sum over features": ops.Sum(ops.Neg(X), 1),
    "Sum of all": ops.Sum(ops.Mul(X, Y), None),
    "mean": ops.Sum(X, 1, mean=True),
    "mean over positions": ops.Sum(X, 0, mean=True),
    "mean of all": ops.Sum(X, None, mean=True),
    "Broadcast": ops.Add(X, ops.Broadcast(ops.Sum(Y, 0), (2, 3))),
    "Entry": ops.Entry(ops.MatMul(X, W), 0, 1),
    "Entry of a name with scripts": ops.Neg(ops.Entry(G, 0, 1)),
    "Entry of exp": ops.Entry(ops.Map(sp.exp, X), 1, 2),
    "Slice of rows": ops.Slice(X, slice(0, 1), slice(None)),
    "Slice of a block": ops.Slice(W, [0, 2], [1]),
    "Slice of lists": ops.Slice(X, [0, 1], [0, 2]),
    "Concat side by side": ops.Concat([X, ops.Neg(Y)], axis=1),
    "Concat stacked": ops.Concat([X, R], axis=0),
    "SoftmaxRows": ops.SoftmaxRows(ops.Div(ops.MatMul(X, W), ops.Const(sp.sqrt(2)))),
    "SoftmaxRows of masked scores": ops.SoftmaxRows(ops.Add(G, ops.Const(sp.Matrix([[0, -sp.oo], [0, 0]]), label="M")),
                                                   [[1, 0], [1, 1]]),
    "LogSumExpRows": ops.LogSumExpRows(ops.Neg(X)),
    "TakeRows": ops.TakeRows(W, [0, 2]),
    "TakeRows repeated": ops.TakeRows(W, [2, 2, 0]),
    "TakeRows labelled": ops.Add(ops.TakeRows(W, [0, 2], label="k_t"), G),
    "TakeAlong": ops.Neg(ops.TakeAlong(X, [2, 0])),
    "Place": ops.Add(ops.Place(ops.Entry(G, 1, 0), (0,), (1,), (2, 3)), X),
    "PlaceAlong": ops.Add(ops.PlaceAlong(C, [2, 0], (2, 3)), X),
}


@pytest.mark.parametrize("name", list(NODES))
def test_every_node_reads_back(name):
    assert failures(NODES[name]) == []


SCALARS = {
    "sigmoid": F.sigmoid(-a),
    "sigmoid squared": F.sigmoid(a) ** 2,
    "sigmoid'": sp.diff(F.sigmoid(a), a),
    "relu": F.relu(a - b),
    "relu at zero": F.relu_at_zero(a, sp.S.Half),
    "relu'": sp.diff(F.relu(a), a),
    "softmax": F.softmax(1, a, -b, mu),
    "softmax'": sp.diff(F.softmax(0, a, b), b),
    "logsumexp": F.logsumexp(a, -b),
    "logsumexp'": sp.diff(F.logsumexp(a, b), a),
    "gelu": F.gelu(-a),
    "gelu'": sp.diff(F.gelu(a), a),
    "gelu_tanh": F.gelu_tanh(a),
    "Heaviside": sp.Heaviside(a, 0) * b,
    "tanh squared": 1 - sp.tanh(a) ** 2,
    "w of Week 8": 1 / (1 + sp.exp(1 / sp.sqrt(2))),
    "nested fractions": (a / (1 + b / (mu - 1))) / (1 - a / b),
    "negative powers": a ** -2 * (b - mu) ** sp.Rational(-3, 2),
    "roots": sp.sqrt(2) * a / 2 - sp.sqrt(3) / (2 * b),
    "fourth roots": sp.root(2, 4) * a - b ** sp.Rational(1, 4),  # \sqrt[4]{2}: random trees meet it now and then
    "negative factors": -a * (b - 1) * (mu + 2),
    "exp of a difference": sp.exp(a - b) / (1 + sp.exp(-a)),
    "log": sp.log(1 + sp.exp(-a)),
    "display name": -2 * LEDGER["yhat"].symbol * (a - LEDGER["yhat"].symbol),
}


@pytest.mark.parametrize("name", list(SCALARS))
def test_every_function_and_formula_reads_back(name):
    assert expr_failures(SCALARS[name]) == []  # a Scalar node prints as its expression (NODES["Scalar"])


# ---------------------------------------------------------------------------
# every row of a ledger, forward and backward, as ``ledger_latex`` writes it
# ---------------------------------------------------------------------------


def _network():
    """A small network that uses every kind of row: attention, a nonlinearity, a lookup, a loss."""
    L = Ledger("roundtrip")
    H = L.input("H", shape=(2, 3))
    Wq = L.parameter("W_Q", shape=(3, 2))
    Wk = L.parameter("W_K", shape=(3, 2))
    bias = L.parameter("beta", shape=(1, 2))
    E = L.parameter("E", shape=(4, 3))
    Xe = L.define("X_e", ops.TakeRows(E, [1, 3]))
    Q = L.define("Q", (H + Xe) @ Wq + bias)
    K = L.define("K", ops.Map(sp.tanh, -(H @ Wk)))
    S = L.define("S", Q @ K.T / sp.sqrt(2))
    Am = L.define("A", ops.SoftmaxRows(S))
    Z = L.define("Z", ops.Concat([Am, ops.Map(F.sigmoid, S[:, 0:1])], axis=1))
    lse = L.define("l", ops.LogSumExpRows(Z))
    pick = L.define("z_c", ops.TakeAlong(Z, [0, 2]))
    L.define("loss", ops.Sum(lse - pick, None) / 2 - Z[1, 2] * Q[0, 1])
    L.backward("loss")
    return L


def test_every_row_of_a_ledger_and_its_adjoints_reads_back():
    L = _network()
    env = symbolic_env(L)
    bad = {it.name: failures(it.node, L, env, compare_unicode=True) for it in L.rows}
    assert {k: v for k, v in bad.items() if v} == {}
    assert sum(it.kind == "adjoint" for it in L.rows) >= 8


def test_ledger_latex_lines_are_the_rows():
    """The align* lines of ``ledger_latex`` (long right-hand sides broken over lines) are the rows' bold LaTeX
    forms, which read back (above); two of them, read again from the document, to be sure."""
    L = _network()
    env = symbolic_env(L)
    n = Notation("latex", L, bold=True)
    body = ledger_latex(L, values=False).split("\\begin{align*}\n")[1].split("\n\\end{align*}")[0]
    lines = body.replace(" \\\\\n  &\\quad ", " ").split(" \\\\\n")
    assert len(lines) == len(L.rows)
    for it, line in zip(L.rows, lines):
        assert line == f"{n.name(it.name)} &= {n.render(it.node)}"
    for it, line in [(L["S"], lines[3]), (L.rows[-1], lines[-1])]:
        rhs = line.split(" &= ", 1)[1]
        names = names_of(n, L, it.node)
        want = meaning(it.node, env)
        assert same(_broadcast_to(read_latex(rhs, names, bindings(names, it.node, env)), want, it.node), want), line


# ---------------------------------------------------------------------------
# random expression trees
# ---------------------------------------------------------------------------

SYMS = st.sampled_from([a, b, mu])
SMALL = st.sampled_from([sp.Integer(2), sp.Integer(-1), sp.Integer(-3), sp.Rational(1, 2), sp.Rational(-2, 3),
                         sp.sqrt(2), -sp.sqrt(3) / 2])


def _formulas():
    """Scalar formulas with negative factors (also unevaluated, as an author may build them), nested fractions,
    powers (negative and fractional), roots and the activations."""
    def extend(inner):
        pair = st.tuples(inner, inner)
        return st.one_of(
            pair.map(lambda p: p[0] + p[1]), pair.map(lambda p: p[0] - p[1]), pair.map(lambda p: p[0] * p[1]),
            pair.map(lambda p: p[0] * -p[1]), pair.map(lambda p: sp.Mul(p[0], -p[1], evaluate=False)),
            pair.map(lambda p: p[0] / p[1]), pair.map(lambda p: p[0] / (1 - p[1])),
            st.tuples(inner, st.sampled_from([2, 3, -1, -2, sp.S.Half, -sp.S.Half])).map(lambda p: p[0] ** p[1]),
            inner.map(lambda e: -e), inner.map(sp.tanh), inner.map(sp.exp), inner.map(F.sigmoid), inner.map(F.relu),
        )

    # a square root of a negative number is imaginary: no handout quantity
    return st.recursive(st.one_of(SYMS, SMALL), extend, max_leaves=4).filter(lambda e: not e.has(sp.I, sp.zoo, sp.nan))


REFS = {(2, 3): [X, Y], (3, 2): [W], (2, 2): [G], (1, 3): [R], (2, 1): [C]}
FUNCS = [sp.tanh, sp.exp, F.sigmoid, F.relu, sp.Lambda(u, 1 - u**2), sp.Lambda(u, sp.sqrt(u)),
         sp.Lambda(u, -2 * u), sp.Lambda(u, sp.diff(F.sigmoid(u), u))]
# constants print by their labels (the entries of an unlabelled constant are read in NODES["Const"])
CONSTS = {s: ops.Const(sp.Matrix(*s, lambda i, j: (-1) ** (i + j) * (i + 2 * j + 1)), label=label)
          for s, label in zip(REFS, ("K", "P", "U", "V", "Z"))}


@st.composite
def trees(draw, shape=(2, 3), depth=2):
    """A node of ``shape`` from the ops constructors (sometimes the folding helpers), at most ``depth`` deep."""
    leaves = REFS[shape] + [CONSTS[shape]]
    kinds = ["add", "sub", "neg", "scale", "hadamard", "div", "divm", "map", "softmax"]
    m, n = shape
    kinds += ["matmul"] + (["transpose"] if (n, m) in REFS else []) + (["slice"] if shape == (1, 3) else [])
    kinds += ["concat"] if shape == (2, 3) else []
    kind = draw(st.sampled_from(["leaf"] + kinds)) if depth > 0 else "leaf"
    sub = lambda s: trees(s, depth - 1)  # noqa: E731
    if kind == "leaf":
        return draw(st.sampled_from(leaves))
    if kind == "add":
        other = (1, n) if m > 1 and (1, n) in REFS and draw(st.booleans()) else shape  # a row added at every position
        return ops.Add(draw(sub(shape)), draw(sub(other)))
    if kind == "sub":
        x, y = draw(sub(shape)), draw(sub(shape))
        return ops.add(x, ops.neg(y)) if draw(st.booleans()) else ops.Add(x, ops.Neg(y))
    if kind == "neg":
        return ops.Neg(draw(sub(shape)))
    if kind == "scale":
        c, x = draw(scalar_trees(depth - 1)), draw(sub(shape))
        return ops.Mul(c, x) if draw(st.booleans()) else ops.mul(x, c)
    if kind == "hadamard":
        return ops.Mul(draw(sub(shape)), draw(sub(shape)))
    if kind == "div":
        return ops.Div(draw(sub(shape)), draw(scalar_trees(depth - 1)))
    if kind == "divm":
        return ops.Div(draw(sub(shape)), draw(sub(shape)))
    if kind == "map":
        return ops.Map(draw(st.sampled_from(FUNCS)), draw(sub(shape)))
    if kind == "softmax":
        return ops.SoftmaxRows(draw(sub(shape)))
    if kind == "matmul":
        k = draw(st.sampled_from([k for k in (1, 2, 3) if (m, k) in REFS and (k, n) in REFS] or [None]))
        return ops.MatMul(draw(sub((m, k))), draw(sub((k, n)))) if k else draw(st.sampled_from(leaves))
    if kind == "transpose":
        return ops.Transpose(draw(sub((n, m))))
    if kind == "slice":
        return ops.Slice(draw(sub((2, 3))), draw(st.sampled_from([0, 1])), slice(None))
    return ops.Concat([draw(sub((2, 2))), draw(sub((2, 1)))], axis=1)


@st.composite
def scalar_trees(draw, depth=1):
    kind = draw(st.sampled_from(["ref", "formula", "const"] + (["entry", "sum", "add", "neg", "mul", "div"]
                                                                 if depth > 0 else [])))
    if kind == "ref":
        return draw(st.sampled_from([A, B, MU]))
    if kind == "formula":
        return ops.Scalar(draw(_formulas()))
    if kind == "const":
        return ops.Const(draw(SMALL))
    if kind == "entry":
        s = draw(st.sampled_from([(2, 3), (2, 2)]))
        return ops.Entry(draw(trees(s, depth - 1)), draw(st.integers(0, s[0] - 1)), draw(st.integers(0, s[1] - 1)))
    if kind == "sum":
        return ops.Sum(draw(trees((2, 3), depth - 1)), None, mean=draw(st.booleans()))
    x, y = draw(scalar_trees(depth - 1)), draw(scalar_trees(depth - 1))
    return {"add": lambda: ops.Add(x, y), "neg": lambda: ops.Neg(x), "mul": lambda: ops.Mul(x, y),
            "div": lambda: ops.Div(x, y)}[kind]()


@pytest.mark.parametrize("examples", [30, pytest.param(200, marks=pytest.mark.slow)])
def test_random_expression_trees_read_back(examples):
    r"""Matrix trees (transposes, products, quotients, maps, softmax, blocks), scalar trees and formulas: the LaTeX
    form and the Unicode form each read back as the tree's value.

    The same 200 trees on every slow run (30 in the default run), so that CI is reproducible; a wider search
    (thousands of random trees, run by hand) found ``\sqrt[4]{2}`` and ``b - - 2 b``, now in the fixed cases
    above."""

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(trees(), scalar_trees(2), _formulas().map(ops.Scalar)))
    def reads_back(node):
        assert failures(node, styles=(("latex", False), ("unicode", False)), compare_unicode=True) == []

    reads_back()


def test_the_trimmed_grammar_reads_as_sympys_whole_grammar():
    """The parser reads with SymPy's grammar less rules whose words the respelled text never holds: on that text
    both grammars give the same parse forest (ambiguities included)."""
    n = Notation("latex", LEDGER)
    for name in ("Add", "Mul Hadamard", "Map sigmoid'", "Entry", "SoftmaxRows", "Transpose of a product"):
        node = NODES[name]
        names = names_of(n, LEDGER, node)
        text = to_grammar(n.render(node), names)[0]
        assert PARSER.doparse(text) == FULL_PARSER.doparse(text), text


def test_every_printed_form_compiles(tmp_path):
    """Every LaTeX form above (plain and bold), each in its own display, compiles with pdflatex."""
    forms = []
    for node in NODES.values():
        forms += [Notation("latex", LEDGER, bold=bold).render(node) for bold in (False, True)]
    forms += [Notation("latex", LEDGER).expr(e) for e in SCALARS.values()]
    L = _network()
    forms += [Notation("latex", L, bold=True).render(it.node) for it in L.rows]
    assert all(f.isascii() for f in forms)
    body = "\n".join(r"\begin{equation*}%s\end{equation*}" % f for f in forms)
    pdflatex("\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n" + body
             + "\n\\end{document}\n", tmp_path)


@pytest.mark.parametrize("name", ["w of Week 8", "nested fractions", "negative powers", "roots", "negative factors",
                                  "exp of a difference", "log", "display name", "the finding"])
def test_sympys_parse_latex_reads_the_plain_formulas(name):
    """Formulas of plain algebra, respelled only in their names, are read by ``parse_latex(s, backend="lark")``
    itself (SymPy's whole grammar and its own transformer) as the expression, and as our reader reads them."""
    from sympy.parsing.latex import parse_latex

    e = SCALARS.get(name, sp.Mul(a, -b, evaluate=False))
    n = Notation("latex", LEDGER)
    text, placeholders, _ = to_grammar(n.expr(e), names_of(n, LEDGER))
    parsed = parse_latex(text, backend="lark")
    assert isinstance(parsed, sp.Expr), parsed  # one reading, not an ambiguity
    back = {sp.Symbol(ph): LEDGER[key].symbol for ph, key in placeholders.items()}
    back[sp.Symbol("e")] = sp.E
    assert sp.simplify(parsed.xreplace(back) - e) == 0
    assert same(read_latex(n.expr(e), names_of(n, LEDGER), ENV), e)


@pytest.mark.parametrize("name", ["w of Week 8", "nested fractions", "roots", "negative factors", "exp of a difference",
                                  "the finding"])
def test_the_claim_reader_reads_the_plain_unicode_formulas(name):
    """The package's own reader of printed formulas (``symseq.read.printed``, what claims use) reads the Unicode
    forms of plain algebra back as the expression (it reads no σ, ReLU, superscript digits or log: those Unicode
    forms are read through their LaTeX, above)."""
    from symseq.read import parse_expression

    e = SCALARS.get(name, sp.Mul(a, -b, evaluate=False))
    n = Notation("unicode", LEDGER)
    names = {n.name(k): it.symbol for k, it in LEDGER.items.items() if it.symbol is not None}
    assert sp.simplify(parse_expression(n.expr(e), names) - e) == 0
