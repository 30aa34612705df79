"""Matrix-level operations of the ledger: forward, adjoint and notation in one place each.

A ledger row is ``name := tree`` where the tree is built from the nodes of
this module. Each node class states, side by side:

* its **shape rule** (shapes are ``()`` for a scalar or ``(m, n)``; rows are
  positions), raising :class:`~symseq.errors.ShapeError` with both shapes and
  the operation when operands do not fit;
* its **forward** evaluation through an array kernel ``k`` (exact SymPy
  object arrays, mpmath, NumPy or torch; see ``symseq.arrays`` and
  ``symseq.backends``);
* its **adjoint** (vector-Jacobian product) ``vjp(G, out)``: given the
  adjoint ``G`` of the node's output (a node of the same shape) and the
  output itself, it returns one adjoint node per child. Adjoints are again
  trees of these nodes, so the backward pass is a ledger too;
* its **notation** through a formatter ``fmt`` supplied by ``symseq.present``.

Scalars inside trees are :class:`Scalar` leaves holding a SymPy expression;
their local partials come from ``sympy.diff``.
"""

from __future__ import annotations

import numbers as _numbers
from typing import Any, Sequence

import numpy as np
import sympy as sp

from .errors import ConventionError, MaskError, ShapeError
from .functions import partial
from .numbers import exact, exact_matrix

ATOM, POSTFIX, MUL, NEG, ADD = 100, 90, 50, 45, 40

Shape = tuple


def _fmt_shape(shape: Shape) -> str:
    return "scalar" if shape == () else "×".join(str(s) for s in shape)


def broadcast_shape(a: Shape, b: Shape, op: str) -> Shape:
    """Shape of an elementwise ``op`` between ``a`` and ``b``.

    A scalar combines with anything; a 1×n row is repeated over the rows of an
    m×n matrix (a bias added at every position); an m×1 column over its
    columns. Anything else must match exactly.
    """
    if a == ():
        return b
    if b == ():
        return a
    out = []
    for da, db in zip(a, b):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            raise ShapeError(
                f"{op}: shapes {_fmt_shape(a)} and {_fmt_shape(b)} do not fit; elementwise operations need equal "
                f"shapes, a scalar, a 1×n row repeated over positions, or an m×1 column repeated over features"
            )
    return tuple(out)


class WholeRowError(ShapeError, sp.SympifyError):
    """A whole ledger row given where SymPy needs one expression (:meth:`Node._sympy_`). It is also SymPy's
    ``SympifyError``, so that ``c * row`` with a SymPy ``c`` still falls back to the row's own ``__rmul__``."""

    def __init__(self, message: str):
        ShapeError.__init__(self, message)
        self.expr, self.base_exc = message, None

    def __str__(self) -> str:
        return str(self.expr)


class Node:
    """Base of every ledger expression node (see module docstring)."""

    shape: Shape = ()
    children: tuple = ()
    prec: int = ATOM

    def _sympy_(self):
        """SymPy asks for this when a SymPy function is applied to a node (``sp.tanh(z)``, ``sigmoid(z)``). A node
        is a whole ledger row, a matrix of entries, not one SymPy expression: refused with the way to say it.

        Raises:
            WholeRowError: always (a :class:`~symseq.errors.ShapeError`), naming the row's shape and :class:`Map`.
        """
        raise WholeRowError(f"{self!r} is a {_fmt_shape(self.shape)} ledger row, not one SymPy expression, so a SymPy "
                         f"function cannot take it whole: apply it entry by entry with ops.Map, e.g. "
                         f"L.define('h', ops.Map(sp.tanh, z)) (or use a block such as blocks.cells.rnn); note that "
                         f"* multiplies entry by entry (with broadcasting) and @ is the matrix product")

    # -- construction helpers -------------------------------------------------
    def __add__(self, other):
        return add(self, as_node(other))

    def __radd__(self, other):
        return add(as_node(other), self)

    def __sub__(self, other):
        return add(self, neg(as_node(other)))

    def __rsub__(self, other):
        return add(as_node(other), neg(self))

    def __neg__(self):
        return neg(self)

    def __mul__(self, other):
        return mul(self, as_node(other))

    def __rmul__(self, other):
        return mul(as_node(other), self)

    def __truediv__(self, other):
        return div(self, as_node(other))

    def __matmul__(self, other):
        return matmul(self, as_node(other))

    def __rmatmul__(self, other):
        return matmul(as_node(other), self)

    @property
    def T(self):
        return transpose(self)

    def __getitem__(self, key):
        if self.shape == ():
            raise ShapeError("cannot index a scalar")
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, (int, np.integer)) for k in key):
            return Entry(self, int(key[0]), int(key[1]))
        if isinstance(key, tuple) and len(key) == 2:
            return Slice(self, key[0], key[1])
        if isinstance(key, (int, np.integer, slice)):
            return Slice(self, key, slice(None))
        raise ShapeError(f"index {key!r}: use [i, j] for an entry, [i] or [i0:i1] for rows, [:, j0:j1] for columns")

    # -- to be provided by subclasses ----------------------------------------
    def forward(self, k, vals):  # pragma: no cover - abstract
        raise NotImplementedError

    def vjp(self, G, out):  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, fmt, parts):  # pragma: no cover - abstract
        raise NotImplementedError

    def key(self):
        """A hashable structural key (used to compare trees)."""
        return (type(self).__name__, tuple(c.key() for c in self.children), self._attrs())

    def _attrs(self):
        return ()

    def __repr__(self):
        return f"{type(self).__name__}{_fmt_shape(self.shape)}"


# ---------------------------------------------------------------------------
# leaves
# ---------------------------------------------------------------------------


class Ref(Node):
    """A reference to a named ledger entry (input, parameter, row or adjoint)."""

    def __init__(self, name: str, shape: Shape, ledger=None):
        self.name = name
        self.shape = tuple(shape)
        self.ledger = ledger

    def _attrs(self):
        return (self.name,)

    def render(self, fmt, parts):
        return fmt.name(self.name)

    def __repr__(self):
        return f"Ref({self.name!r}, {_fmt_shape(self.shape)})"


class Const(Node):
    """A constant: an exact scalar or matrix (identity, zeros, a mask of −∞).

    ``label`` is how it prints (``I``, ``M``, ``0``); without a label the
    entries print.
    """

    def __init__(self, value, label: str | None = None):
        if isinstance(value, sp.MatrixBase) or isinstance(value, (list, tuple, np.ndarray)):
            self.value = exact_matrix(value)
            self.shape = self.value.shape
        else:
            self.value = exact(value)
            self.shape = ()
        if self.value.free_symbols:  # a constant's entries are never differentiated: symbols there would get 0
            raise ConventionError(
                f"a constant cannot hold the symbols {', '.join(sorted(map(str, self.value.free_symbols)))}; build "
                f"a matrix of symbols with symseq.ops.as_node (an Entries node), a scalar with ops.Scalar")
        self.label = label

    def _attrs(self):
        return (self.label, self.value if self.shape == () else tuple(self.value))

    def forward(self, k, vals):
        return k.const(self.value)

    def render(self, fmt, parts):
        if self.label is not None:
            return fmt.label(self.label)
        if self.shape == ():
            return fmt.expr(self.value)
        return fmt.matrix(self.value)

    @property
    def prec(self):
        if self.shape != () or self.label is not None:
            return ATOM
        v = self.value
        if v.is_Add or (v.is_Number and v < 0) or v.could_extract_minus_sign():
            return ADD
        if _prints_as_fraction(v):  # 1/2, √2/2: a denominator binds like a product (X/(1/2), not X / 1/2)
            return MUL
        return ATOM


class Scalar(Node):
    """A scalar SymPy expression over the ledger's scalar names."""

    shape = ()

    def __init__(self, expr):
        self.expr = expr if isinstance(expr, sp.Basic) else exact(expr)
        self._names = None

    def names(self) -> frozenset:
        """The names of the expression's free symbols, found on the first call (the expression never changes; the
        ledger asks for a row's names each time it runs or orders rows)."""
        if self._names is None:
            self._names = frozenset(s.name for s in self.expr.free_symbols)
        return self._names

    def _attrs(self):
        return (self.expr,)

    def forward(self, k, vals):  # evaluated by the kernel with the environment
        raise AssertionError("Scalar leaves are evaluated by the kernel directly")

    def render(self, fmt, parts):
        return fmt.expr(self.expr)

    @property
    def prec(self):
        e = self.expr
        if e.is_Add:
            return ADD
        if e.is_Mul:
            return NEG if e.could_extract_minus_sign() else MUL
        if e.is_Number and e < 0:
            return NEG
        if _prints_as_fraction(e):  # 1/a
            return MUL
        if isinstance(e, sp.exp):  # e^{a}: a superscript, so (e^{a})ᵀ, (e^a)²
            return POSTFIX
        return ATOM


def _prints_as_fraction(e) -> bool:
    """Whether a SymPy value prints as a fraction or a product (1/2, 1/a, a^{−1/2}, √2/2): it binds like one."""
    return (e.is_Rational and not e.is_Integer) or (e.is_Pow and e.exp.is_number and e.exp.is_negative) or e.is_Mul


class Entries(Node):
    """A matrix whose entries are scalar expressions over the ledger's scalar names: ``sympy.Matrix([[a, b]])``.

    Children are one :class:`Scalar` per entry, row by row; the value is assembled from their values, and
    the adjoint of entry (i, j) is Ḡ[i, j], so each name in an entry receives Ḡ[i, j] times its partial.
    It prints as the matrix of its entries.
    """

    prec = ATOM

    def __init__(self, matrix):
        m, n = matrix.shape
        if m == 0 or n == 0:
            raise ShapeError(f"a matrix of expressions needs at least one row and one column; got {m}×{n}")
        self.children = tuple(Scalar(matrix[i, j]) for i in range(m) for j in range(n))
        self.shape = (m, n)

    def _attrs(self):
        return (self.shape,)

    def forward(self, k, vals):
        m, n = self.shape
        rows = [k.concat([k.broadcast_to(vals[i * n + j], (1, 1)) for j in range(n)], 1) for i in range(m)]
        return rows[0] if m == 1 else k.concat(rows, 0)

    def vjp(self, G, out):
        m, n = self.shape
        return tuple(Entry(G, i, j) for i in range(m) for j in range(n))

    def render(self, fmt, parts):
        return fmt.matrix(sp.ImmutableMatrix(*self.shape, [c.expr for c in self.children]))


def as_node(x: Any) -> Node:
    """Wrap a SymPy scalar, exact number or SymPy matrix as a node (nodes pass through).

    A SymPy matrix of numbers is a :class:`Const`; one whose entries hold symbols is an :class:`Entries` node,
    evaluated and differentiated entry by entry.
    """
    if isinstance(x, Node):
        return x
    if isinstance(x, sp.MatrixBase):
        return Entries(x) if x.free_symbols else Const(x)
    if isinstance(x, sp.Basic):
        if x.is_number:
            return Const(x)
        return Scalar(x)
    if isinstance(x, float):
        raise ConventionError(
            f"got the float {x!r} inside a ledger expression; floats are not exact. "
            f"Use a decimal string (symseq.exact('{x!r}')) or a SymPy Rational."
        )
    return Const(exact(x))


def is_zero(n: Node) -> bool:
    return isinstance(n, Const) and n.label is None and (n.value.is_zero if n.shape == () else n.value.is_zero_matrix)


def is_one(n: Node) -> bool:
    return isinstance(n, Const) and n.shape == () and n.value == 1


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------


class Add(Node):
    """Sum of terms with broadcasting (a 1×n bias row is added at every position)."""

    prec = ADD

    def __init__(self, *terms):
        shape = ()
        for t in terms:
            shape = broadcast_shape(shape, t.shape, "addition")
        self.children = tuple(terms)
        self.shape = shape

    def forward(self, k, vals):
        out = vals[0]
        for v in vals[1:]:
            out = k.add(out, v)
        return out

    def vjp(self, G, out):
        return tuple(unbroadcast(G, c.shape) for c in self.children)

    def render(self, fmt, parts):
        """a + b, a − b; a term that prints with a leading minus is never run into the sign before it
        (a − −b, a + −1/2): a negated negative keeps parentheses, a negative number or formula is subtracted."""
        pieces = [parts[0]]
        for c, p in zip(self.children[1:], parts[1:]):
            if isinstance(c, Neg):
                pieces.append(fmt.minus(wrap(fmt, c.children[0], fmt.render(c.children[0]), NEG + 1, signed=True)))
            elif p.startswith(("−", "-")) and isinstance(c, (Scalar, Const)):
                m = neg(c)
                pieces.append(fmt.minus(wrap(fmt, m, fmt.render(m), ADD + 1)))
            elif p.startswith(("−", "-")):
                pieces.append(fmt.plus(fmt.paren(p)))
            else:
                pieces.append(fmt.plus(p))
        return "".join(pieces)


def add(*terms: Node) -> Node:
    flat = []
    for t in terms:
        if is_zero(t) and t.shape == ():
            continue
        if isinstance(t, Add):
            flat.extend(t.children)
        else:
            flat.append(t)
    if not flat:
        shape = ()
        for t in terms:
            shape = broadcast_shape(shape, t.shape, "addition")
        return zeros(shape)
    if all(isinstance(t, Scalar) or (isinstance(t, Const) and t.shape == () and t.label is None) for t in flat):
        return Scalar(sp.Add(*[t.expr if isinstance(t, Scalar) else t.value for t in flat]))
    if len(flat) == 1:
        shape = ()
        for t in terms:
            shape = broadcast_shape(shape, t.shape, "addition")
        return flat[0] if flat[0].shape == shape else Add(*terms)
    return Add(*flat)


class Neg(Node):
    """Negation −a."""

    prec = NEG

    def __init__(self, a):
        self.children = (a,)
        self.shape = a.shape

    def forward(self, k, vals):
        return k.neg(vals[0])

    def vjp(self, G, out):
        return (neg(G),)

    def render(self, fmt, parts):
        return fmt.neg(wrap(fmt, self.children[0], parts[0], MUL, signed=True))


def neg(a: Node) -> Node:
    if isinstance(a, Neg):
        return a.children[0]
    if isinstance(a, Scalar):
        return Scalar(-a.expr)
    if isinstance(a, Const) and a.label is None:
        return Const(-a.value)
    return Neg(a)


class Mul(Node):
    """Elementwise product with broadcasting: a scalar times a matrix, or the Hadamard product a ⊙ b."""

    prec = MUL

    def __init__(self, a, b):
        self.shape = broadcast_shape(a.shape, b.shape, "elementwise product (⊙)")
        self.children = (a, b)

    def forward(self, k, vals):
        return k.mul(vals[0], vals[1])

    def vjp(self, G, out):
        a, b = self.children
        return (unbroadcast(mul(G, b), a.shape), unbroadcast(mul(G, a), b.shape))

    def render(self, fmt, parts):
        a, b = self.children
        pa, pb = wrap(fmt, a, parts[0], MUL), wrap(fmt, b, parts[1], MUL + 1)
        if a.shape == () or b.shape == ():
            return fmt.scale(pa, pb)
        return fmt.hadamard(pa, pb)


def _all_ones(n: Node) -> bool:
    """The constant 1, or 1 broadcast to a matrix (the adjoint a sum of entries hands to its argument)."""
    return is_one(n) or (isinstance(n, Broadcast) and is_one(n.children[0]))


def mul(a: Node, b: Node) -> Node:
    if _all_ones(a) and broadcast_shape(a.shape, b.shape, "·") == b.shape:
        return b
    if _all_ones(b) and broadcast_shape(a.shape, b.shape, "·") == a.shape:
        return a
    if isinstance(a, (Scalar, Const)) and isinstance(b, (Scalar, Const)) and a.shape == () == b.shape:
        if (isinstance(a, Const) and a.label) or (isinstance(b, Const) and b.label):
            return Mul(a, b)
        ea = a.expr if isinstance(a, Scalar) else a.value
        eb = b.expr if isinstance(b, Scalar) else b.value
        return Scalar(ea * eb)
    if b.shape == () and a.shape != ():  # scalars print first: c·M
        return Mul(b, a)
    return Mul(a, b)


class Div(Node):
    """Division by a scalar, a / c (e.g. S = QKᵀ/√d_k), or elementwise a ⊘ b."""

    prec = MUL

    def __init__(self, a, b):
        self.shape = broadcast_shape(a.shape, b.shape, "division")
        self.children = (a, b)

    def forward(self, k, vals):
        return k.div(vals[0], vals[1])

    def vjp(self, G, out):
        a, b = self.children
        ga = unbroadcast(div(G, b), a.shape)
        gb = unbroadcast(neg(div(mul(G, a), mul(b, b))), b.shape)
        return (ga, gb)

    def render(self, fmt, parts):
        a, b = self.children
        return fmt.div(wrap(fmt, a, parts[0], MUL), wrap(fmt, b, parts[1], ATOM))


def div(a: Node, b: Node) -> Node:
    if is_one(b):
        return a
    if isinstance(a, (Scalar, Const)) and isinstance(b, (Scalar, Const)) and a.shape == () == b.shape:
        if not ((isinstance(a, Const) and a.label) or (isinstance(b, Const) and b.label)):
            ea = a.expr if isinstance(a, Scalar) else a.value
            eb = b.expr if isinstance(b, Scalar) else b.value
            return Scalar(ea / eb)
    return Div(a, b)


class MatMul(Node):
    """Matrix product a b: (m×k)(k×n) → m×n."""

    prec = MUL

    def __init__(self, a, b):
        if a.shape == () or b.shape == ():
            raise ShapeError("matrix product: use * for a scalar times a matrix")
        if a.shape[1] != b.shape[0]:
            raise ShapeError(
                f"matrix product: ({_fmt_shape(a.shape)})({_fmt_shape(b.shape)}) does not fit; the inner "
                f"sizes {a.shape[1]} and {b.shape[0]} must agree. Check the weight orientation "
                f"(x Wᵀ for a stored out×in weight, x W for an in×out one)."
            )
        self.children = (a, b)
        self.shape = (a.shape[0], b.shape[1])

    def forward(self, k, vals):
        return k.matmul(vals[0], vals[1])

    def vjp(self, G, out):
        a, b = self.children
        return (matmul(G, transpose(b)), matmul(transpose(a), G))

    def render(self, fmt, parts):
        a, b = self.children
        return fmt.matmul(wrap(fmt, a, parts[0], MUL), wrap(fmt, b, parts[1], MUL + 1))


def matmul(a: Node, b: Node) -> Node:
    if is_identity(a) and a.shape[1] == b.shape[0]:
        return b
    if is_identity(b) and a.shape[1] == b.shape[0]:
        return a
    return MatMul(a, b)


def is_identity(n: Node) -> bool:
    return isinstance(n, Const) and n.shape != () and n.shape[0] == n.shape[1] and n.value == sp.eye(n.shape[0])


class Transpose(Node):
    """Transpose aᵀ (rows and columns exchanged)."""

    prec = POSTFIX

    def __init__(self, a):
        if a.shape == ():
            raise ShapeError("transpose of a scalar")
        self.children = (a,)
        self.shape = (a.shape[1], a.shape[0])

    def forward(self, k, vals):
        return k.transpose(vals[0])

    def vjp(self, G, out):
        return (transpose(G),)

    def render(self, fmt, parts):
        return fmt.transpose(wrap(fmt, self.children[0], parts[0], POSTFIX + 1))


def transpose(a: Node) -> Node:
    if isinstance(a, Transpose):
        return a.children[0]
    if isinstance(a, MatMul):
        return MatMul(transpose(a.children[1]), transpose(a.children[0]))
    if isinstance(a, Const) and a.shape != ():
        if a.value == a.value.T:
            return a
        return Const(a.value.T, label=None)
    return Transpose(a)


# ---------------------------------------------------------------------------
# elementwise functions
# ---------------------------------------------------------------------------

_X = sp.Dummy("x", real=True)
SQRT = sp.Lambda(_X, sp.sqrt(_X))  # √ as an elementwise function (LayerNorm's denominator, std)


class Map(Node):
    """Elementwise function f(a), with f a SymPy function class or a one-variable ``Lambda``.

    The adjoint is G ⊙ f'(a), with f' from ``sympy.diff`` (so tanh' prints as
    1 − tanh², ReLU' as the Heaviside step with its convention at 0).
    """

    def __init__(self, fn, a):
        if isinstance(fn, sp.Lambda):
            if len(fn.variables) != 1:
                raise ConventionError("Map needs a function of one variable")
            self.fn = fn
        elif isinstance(fn, type) and issubclass(fn, sp.Basic) or isinstance(fn, sp.core.function.UndefinedFunction):
            self.fn = sp.Lambda(_X, fn(_X))
        else:
            raise ConventionError(f"Map needs a SymPy function (tanh, sigmoid, relu, phi) or Lambda; got {fn!r}")
        self.children = (a,)
        self.shape = a.shape

    def _attrs(self):
        return (self.fn,)

    @property
    def prec(self):
        """A body printed as a sum or product (1 − tanh², σ(1 − σ)) binds like one, so g ⊙ (1 − tanh²(z)) keeps
        its parentheses; e^{z} carries a superscript, so a transpose, an index or a power of it is parenthesised."""
        b = self.fn.expr
        if b.is_Add:
            return ADD
        if b.is_Mul or b.is_Pow and not isinstance(b.base, sp.Function):
            return MUL
        if isinstance(b, sp.exp):
            return POSTFIX
        return ATOM

    @property
    def body(self):
        return self.fn.expr

    def forward(self, k, vals):
        return k.apply(self.fn, vals[0])

    def derivative(self):
        (x,) = self.fn.variables
        return sp.Lambda(x, partial(self.fn.expr, x))

    def vjp(self, G, out):
        d = self.derivative()
        if d.expr.is_number:
            return (mul(G, Const(d.expr)) if d.expr != 1 else G,)
        return (mul(G, Map(d, self.children[0])),)

    def render(self, fmt, parts):
        return fmt.apply(self.fn, self.children[0], parts[0])


def apply(fn, a) -> Node:
    """Elementwise application f(a) as a node (scalars become SymPy expressions)."""
    a = as_node(a)
    if isinstance(a, Scalar):
        return Scalar(fn(a.expr)) if not isinstance(fn, sp.Lambda) else Scalar(fn(a.expr))
    return Map(fn, a)


# ---------------------------------------------------------------------------
# reductions and broadcasting
# ---------------------------------------------------------------------------


class Sum(Node):
    """Sum over an axis: ``axis=0`` over positions (m×n → 1×n), ``axis=1`` over features (m×n → m×1), ``None`` over all.

    With ``mean=True`` the sum is divided by the number of entries; on numeric kernels the mean of entries that
    are all equal is that entry exactly (a LayerNorm row of 0.1s centres to exact zeros, not to ±1e-17).
    """

    prec = ATOM

    def __init__(self, a, axis=None, mean=False):
        if a.shape == ():
            raise ShapeError("sum of a scalar")
        if axis not in (0, 1, None):
            raise ShapeError(f"sum axis must be 0 (positions), 1 (features) or None; got {axis!r}")
        self.children = (a,)
        self.axis = axis
        self.mean = mean
        m, n = a.shape
        self.shape = () if axis is None else ((1, n) if axis == 0 else (m, 1))
        self.count = m * n if axis is None else (m if axis == 0 else n)

    def _attrs(self):
        return (self.axis, self.mean)

    def forward(self, k, vals):
        return k.mean(vals[0], self.axis, self.count) if self.mean else k.sum(vals[0], self.axis)

    def vjp(self, G, out):
        g = div(G, Const(self.count)) if self.mean else G
        return (Broadcast(g, self.children[0].shape),)

    def render(self, fmt, parts):
        return fmt.reduce("mean" if self.mean else "sum", self.axis, self.children[0], parts[0])


def mean(a, axis=None) -> Node:
    """mean_j a_j along ``axis`` (as :class:`Sum`): ``torch.mean(input, dim)``.

    Args:
        a: an m×n node; ``axis`` 1 gives m×1 (a mean per row), 0 gives 1×n, None a scalar.
    """
    return Sum(as_node(a), axis, mean=True)


def var(a, axis=None, *, correction: int, mean_of: Node | None = None) -> Node:
    """Σ_j (a_j − ā)² / (N − correction) along ``axis``: ``torch.var(input, dim, correction=...)``.

    ``correction`` has no default, because the two conventions differ where it matters: 0 is the population
    variance (LayerNorm's, NumPy's ``var``), 1 the sample variance (``torch.var`` and ``Tensor.std`` without
    arguments). With ``correction=0`` the node is the mean of the squared deviations, as LayerNorm prints it.

    Args:
        a: an m×n node; ``axis`` as for :func:`mean` (m×1 for ``axis=1``).
        mean_of: the mean ā already defined as a ledger row (so that the deviations print as a − ā); by default
            ``mean(a, axis)``.

    Raises:
        ShapeError: for a correction that leaves no degrees of freedom (N − correction ≤ 0), or one that is not a
            non-negative integer.
    """
    a = as_node(a)
    n = Sum(a, axis).count if a.shape != () else 1
    if not isinstance(correction, _numbers.Integral) or correction < 0 or n - correction <= 0:
        raise ShapeError(f"var over {n} entries needs a correction 0 ≤ c < {n} (0: population, 1: sample); "
                         f"got {correction!r}")
    c = a - (mean_of if mean_of is not None else mean(a, axis))
    if correction == 0:
        return Sum(c * c, axis, mean=True)
    return Sum(c * c, axis) / as_node(sp.Integer(n - correction))


def std(a, axis=None, *, correction: int, mean_of: Node | None = None) -> Node:
    """√var(a): ``torch.std(input, dim, correction=...)``; arguments, shapes and errors as for :func:`var`."""
    return Map(SQRT, var(a, axis, correction=correction, mean_of=mean_of))


class Broadcast(Node):
    """Repeat a scalar, 1×n row or m×1 column to a full shape (the adjoint of a sum)."""

    def __init__(self, a, shape):
        broadcast_shape(a.shape, tuple(shape), "broadcast")
        self.children = (a,)
        self.shape = tuple(shape)

    @property
    def prec(self):
        return self.children[0].prec

    def _attrs(self):
        return (self.shape,)

    def forward(self, k, vals):
        return k.broadcast_to(vals[0], self.shape)

    def vjp(self, G, out):
        return (unbroadcast(G, self.children[0].shape),)

    def render(self, fmt, parts):
        return parts[0]


def unbroadcast(G: Node, shape: Shape) -> Node:
    """Sum an adjoint back to the shape of an operand that was broadcast."""
    if G.shape == shape:
        return G
    if shape == ():
        return Sum(G, None)
    if isinstance(G, Broadcast) and G.children[0].shape == shape:
        return G.children[0]
    out = G
    if shape[0] == 1 and out.shape[0] != 1:
        out = Sum(out, 0)
    if shape[1] == 1 and out.shape[1] != 1:
        out = Sum(out, 1)
    if out.shape != shape:  # pragma: no cover - guarded by broadcast_shape
        raise ShapeError(f"cannot reduce an adjoint of shape {_fmt_shape(G.shape)} to {_fmt_shape(shape)}")
    return out


def zeros(shape: Shape) -> Node:
    if shape == ():
        return Const(0)
    return Const(sp.zeros(*shape), label="0")


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


def _norm_index(idx, n, what):
    if isinstance(idx, slice):
        r = range(n)[idx]
        if len(r) == 0:
            raise ShapeError(f"{what} selection {idx} is empty for a size of {n}")
        return tuple(r)
    if isinstance(idx, (int, np.integer)):
        i = int(idx)
        if not -n <= i < n:
            raise ShapeError(f"{what} index {i} is outside 0..{n - 1}")
        return (i % n,)
    return tuple(_norm_index(int(i), n, what)[0] for i in idx)


class Entry(Node):
    """Entry a[i, j] as a scalar."""

    prec = POSTFIX

    def __init__(self, a, i, j):
        m, n = a.shape
        if not (0 <= i < m and 0 <= j < n):
            raise ShapeError(f"entry [{i}, {j}] is outside a {m}×{n} matrix (indices start at 0)")
        self.children = (a,)
        self.i, self.j = i, j

    def _attrs(self):
        return (self.i, self.j)

    def forward(self, k, vals):
        return k.entry(vals[0], self.i, self.j)

    def vjp(self, G, out):
        return (Place(G, (self.i,), (self.j,), self.children[0].shape),)

    def render(self, fmt, parts):
        return fmt.entry(wrap(fmt, self.children[0], parts[0], POSTFIX + 1), self.i, self.j)


class Slice(Node):
    """Rows and columns of a matrix, a[rows, cols] (each an index, a range or a list)."""

    prec = POSTFIX

    def __init__(self, a, rows, cols):
        m, n = a.shape
        self.rows = _norm_index(rows, m, "row")
        self.cols = _norm_index(cols, n, "column")
        self.children = (a,)
        self.shape = (len(self.rows), len(self.cols))

    def _attrs(self):
        return (self.rows, self.cols)

    def forward(self, k, vals):
        return k.select(vals[0], self.rows, self.cols)

    def vjp(self, G, out):
        return (Place(G, self.rows, self.cols, self.children[0].shape),)

    def render(self, fmt, parts):
        return fmt.slice(wrap(fmt, self.children[0], parts[0], POSTFIX + 1), self.rows, self.cols,
                         self.children[0].shape)


class Place(Node):
    """A zero matrix of ``shape`` with ``a`` added at ``rows × cols`` (adjoint of indexing; repeated rows add)."""

    def __init__(self, a, rows, cols, shape):
        self.children = (a,)
        self.rows, self.cols = tuple(rows), tuple(cols)
        self.shape = tuple(shape)

    def _attrs(self):
        return (self.rows, self.cols, self.shape)

    def forward(self, k, vals):
        return k.place(vals[0], self.rows, self.cols, self.shape)

    def vjp(self, G, out):
        return (Slice(G, list(self.rows), list(self.cols)),)

    def render(self, fmt, parts):
        return fmt.place(wrap(fmt, self.children[0], parts[0], ATOM), self.rows, self.cols, self.shape)


class Concat(Node):
    """Side-by-side (``axis=1``, e.g. heads [O⁽¹⁾ ⋯ O⁽ʰ⁾]) or stacked (``axis=0``) matrices."""

    prec = ATOM

    def __init__(self, parts: Sequence[Node], axis=1):
        parts = tuple(parts)
        if not parts:
            raise ShapeError("concatenation of nothing")
        other = 1 - axis
        sizes = {p.shape[other] for p in parts}
        if len(sizes) > 1:
            what = "rows" if axis == 1 else "columns"
            raise ShapeError(
                f"concatenation along axis {axis}: the parts have different numbers of {what}: "
                + ", ".join(_fmt_shape(p.shape) for p in parts)
            )
        self.children = parts
        self.axis = axis
        total = sum(p.shape[axis] for p in parts)
        self.shape = (parts[0].shape[0], total) if axis == 1 else (total, parts[0].shape[1])

    def _attrs(self):
        return (self.axis,)

    def forward(self, k, vals):
        return k.concat(vals, self.axis)

    def vjp(self, G, out):
        grads, start = [], 0
        for p in self.children:
            size = p.shape[self.axis]
            idx = list(range(start, start + size))
            grads.append(Slice(G, slice(None), idx) if self.axis == 1 else Slice(G, idx, slice(None)))
            start += size
        return tuple(grads)

    def render(self, fmt, parts):
        return fmt.concat(parts, self.axis)


# ---------------------------------------------------------------------------
# masks: one type, three conventions, one check
# ---------------------------------------------------------------------------

MASK_CONVENTIONS = ("keep", "exclude", "additive")

_NAME_THE_CONVENTION = (
    "Name the convention: Mask.keep(m) (True or 1 = may attend: symseq's convention, and the boolean attn_mask of "
    "torch's F.scaled_dot_product_attention), Mask.exclude(m) (True or 1 = masked out: the boolean attn_mask and "
    "key_padding_mask of torch's nn.MultiheadAttention) or Mask.additive(m) (0 or −∞ added to the scores: torch's "
    "float attn_mask)"
)
_AXES = {1: ("position",), 2: ("row", "column"), 3: ("batch item", "row", "column")}
_NEG_INF = float("-inf")


def _as_array(values, what: str) -> np.ndarray:
    """``values`` as a NumPy array; nested lists keep their Python entries (so ``[[True, "False"]]`` stays mixed).

    Raises:
        ShapeError: nested lists whose rows have different lengths.
    """
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # a torch tensor, on any device, with or without grad
        values = values.detach().cpu().numpy()
    if not isinstance(values, (list, tuple)):
        return np.asarray(values)
    try:
        arr = np.array(values, dtype=object)
    except ValueError:  # NumPy refuses some ragged nestings outright
        arr = None
    if arr is None or any(isinstance(v, (list, tuple, np.ndarray)) for v in arr.ravel().tolist()):
        raise ShapeError(f"{what} has rows of different lengths; give one entry per (row, column), every row as long")
    return arr


def _entry(v) -> tuple[str, Any]:
    """One mask entry as (kind, number): kind ``bool``, ``int``, ``float`` (−∞ included) or ``other``.

    SymPy's true and false (what ``sp.Integer(j) <= i`` gives) are booleans."""
    if isinstance(v, (bool, np.bool_, sp.logic.boolalg.BooleanAtom)):
        return "bool", int(bool(v))
    if isinstance(v, _numbers.Integral):  # Python, NumPy and SymPy integers
        return "int", int(v)
    if isinstance(v, (float, np.floating)):
        return "float", float(v)
    if isinstance(v, sp.Basic) and (v == sp.S.NegativeInfinity or isinstance(v, sp.Float)):
        return "float", float(v)
    return "other", None


def _read_entry(kind: str, x, convention: str | None):
    """The entry as allowed (True) or excluded (False) in ``convention`` (None: none stated); None if it is no value
    of that convention."""
    if convention == "additive":
        if kind in ("int", "float") and x == 0:
            return True
        return False if kind == "float" and x == _NEG_INF else None
    if (kind in ("bool", "int") or kind == "float" and convention is not None) and x in (0, 1):
        return bool(x) != (convention == "exclude")
    return None


def _entry_error(what: str, arr: np.ndarray, index: int, convention: str | None, axes) -> MaskError:
    """The error for entry ``index`` (flat), the first that is no value of ``convention``. Without a stated
    convention, an entry that is no value of any convention (0.5, NaN) is named first, then a −∞."""
    entries = [_entry(v) for v in arr.ravel().tolist()]
    fix = None
    if convention is None:
        index = next((i for i, e in enumerate(entries)
                      if _read_entry(*e, "keep") is None and _read_entry(*e, "additive") is None), index)
        if all(k == "float" and x in (0, 1) for k, x in entries):
            fix = ("a float mask is not read without its convention; a 0/1 float mask (such as "
                   "torch.tril(torch.ones(...))) is a keep-mask: pass mask.astype(bool) or Mask.keep(mask) "
                   "(Mask.exclude(mask) if its 1s mark masked-out entries)")
        elif all(_read_entry(*e, "additive") is not None for e in entries):
            index = next(i for i, e in enumerate(entries) if not _read_entry(*e, "additive"))
            fix = ("a 0/−∞ mask (torch's float attn_mask) is added to the scores and is not read without its "
                   "convention: pass Mask.additive(mask)")
    pos = np.unravel_index(index, arr.shape)
    axes = axes or _AXES.get(arr.ndim) or tuple(f"axis {i}" for i in range(arr.ndim))
    where = "(" + ", ".join(f"{a} {int(i)}" for a, i in zip(axes, pos)) + ")"
    value = arr.ravel()[index]
    value = value.item() if isinstance(value, np.generic) else value
    kind, x = entries[index]
    if fix is None:
        fix = _fix_for(value, kind, x, convention)
    return MaskError(f"{what}: entry {where} is {value!r}; {fix}. {_NAME_THE_CONVENTION}.")


def _fix_for(value, kind: str, x, convention: str | None) -> str:
    """What an entry that is no value of ``convention`` should be, and how to get there."""
    if isinstance(value, str):
        return "a mask holds booleans or numbers, not text: write True or False"
    if convention is None:
        return "a mask given without a convention holds True/False (or the integers 1/0), True = may attend"
    if convention != "additive":
        return f"Mask.{convention} takes True/False or 1/0"
    fix = "an additive mask holds 0 (may attend) or −∞ (masked out)"
    if kind in ("bool", "int"):
        return fix + "; a boolean or 0/1 mask is Mask.keep(m) or Mask.exclude(m)"
    if kind == "float" and x < 0:
        return fix + ("; a large negative number is not −∞ (it leaves the source a weight above zero): "
                      "pass Mask.keep(m == 0)")
    return fix


def _read(arr: np.ndarray, convention: str | None, what: str, axes=None) -> np.ndarray:
    """The allowed (keep) form of the entries of ``arr`` read in ``convention``; the first entry that is no value of
    it is refused by name."""
    exclude = convention == "exclude"
    if convention != "additive":
        if arr.dtype == bool:
            return ~arr if exclude else arr.copy()
        if (arr.dtype.kind in "iu" or arr.dtype.kind == "f" and convention) and np.isin(arr, (0, 1)).all():
            return (arr == 0) if exclude else (arr != 0)
    elif arr.dtype.kind == "f" and ((arr == 0) | np.isneginf(arr)).all():
        return arr == 0
    out = np.empty(arr.size, dtype=bool)
    for i, v in enumerate(arr.ravel().tolist()):
        r = _read_entry(*_entry(v), convention)
        if r is None:
            raise _entry_error(what, arr, i, convention, axes)
        out[i] = r
    return out.reshape(arr.shape)


def _checked_array(values, what: str, ndim: int | None, axes: tuple | None = None) -> np.ndarray:
    arr = _as_array(values, what)
    if ndim is not None and arr.ndim != ndim or arr.ndim == 0:
        want = {1: "a vector (one entry per position)", 2: "a matrix (queries × sources)",
                3: "a B×T×T array (one matrix per batch item)"}.get(ndim, "an array of entries")
        if ndim == 2 and axes:  # a B×T validity mask is no attention mask: say what its axes are
            want = f"a matrix (one row per {axes[0]}, one entry per {axes[1]})"
        got = f"the single value {arr.item()!r}" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ShapeError(f"{what} must be {want}; got {got}")
    if arr.size == 0:
        raise ShapeError(f"{what} is empty; it needs one entry per position")
    return arr


class Mask:
    """A visibility mask with its convention named: ``keep``, ``exclude`` or ``additive``.

    Attention reads the mask as the additive matrix M of the scores (rows are
    queries t, columns sources j)::

        M_tj = 0 where source j is allowed, exact −∞ where it is excluded,     A = softmax_rows(S + M)

    and the three conventions say which entries are allowed:

    * ``Mask.keep(m)``: allowed_tj = m_tj; entries True/False or 1/0, True = may attend (this project's
      convention, and the boolean ``attn_mask`` of torch's ``F.scaled_dot_product_attention``);
    * ``Mask.exclude(m)``: allowed_tj = not m_tj; True = masked out (the boolean ``attn_mask`` and
      ``key_padding_mask`` of torch's ``nn.MultiheadAttention``);
    * ``Mask.additive(m)``: allowed_tj = (m_tj = 0); entries exactly 0 or −∞ (float ``-inf``, SymPy ``-oo``),
      added to the scores (torch's float ``attn_mask``). A large finite negative number is refused: it is not −∞.

    Under keep and exclude a float 0.0/1.0 is read as 0/1, since the convention is stated. A mask passed without
    this type (a boolean or integer 0/1 array) is a keep-mask; a float array without a convention is refused.

    Args:
        values: an array of any shape (T×S for attention, T or B×T for validity, B×T×T for a batch): NumPy,
            nested lists, a SymPy matrix or a torch tensor.
        convention: ``"keep"``, ``"exclude"`` or ``"additive"``.
        what: the mask's name in error messages.

    Attributes:
        allowed: the keep form, a read-only boolean array of the same shape (True = may attend).
        convention: the convention the values were given in.

    Raises:
        ConventionError: an unknown convention.
        ShapeError: a single value or an empty array.
        MaskError: an entry that is no value of the convention (names its row and column, its value, the
            conventions and how to convert).

    Sources: torch 2 docs of ``F.scaled_dot_product_attention`` (``attn_mask``) and ``nn.MultiheadAttention``
    (``attn_mask``, ``key_padding_mask``); Week 06 handout (004), "Change visibility with a mask".
    """

    __slots__ = ("allowed", "convention")
    __hash__ = None

    def __init__(self, values, convention: str = "keep", *, what: str = "mask"):
        if convention not in MASK_CONVENTIONS:
            raise ConventionError(f"unknown mask convention {convention!r}; use one of {', '.join(MASK_CONVENTIONS)}")
        if isinstance(values, Mask):
            raise MaskError(f"{what} is already Mask.{values.convention}(...); pass it as it is")
        if isinstance(values, str):
            raise MaskError(f"{what}: got the string {values!r}; a mask is an array of entries. "
                            f"{_NAME_THE_CONVENTION}.")
        allowed = _read(_checked_array(values, what, None), convention, what)
        allowed.setflags(write=False)
        self.allowed = allowed
        self.convention = convention

    @classmethod
    def keep(cls, values, *, what: str = "mask") -> "Mask":
        """True (or 1) = may attend: symseq's convention and SDPA's boolean ``attn_mask``."""
        return cls(values, "keep", what=what)

    @classmethod
    def exclude(cls, values, *, what: str = "mask") -> "Mask":
        """True (or 1) = masked out: ``nn.MultiheadAttention``'s boolean ``attn_mask`` and ``key_padding_mask``."""
        return cls(values, "exclude", what=what)

    @classmethod
    def additive(cls, values, *, what: str = "mask") -> "Mask":
        """0 = may attend, −∞ = masked out, added to the scores: torch's float ``attn_mask``."""
        return cls(values, "additive", what=what)

    @property
    def shape(self) -> tuple:
        return self.allowed.shape

    def to(self, convention: str) -> np.ndarray:
        """The same visibility in ``convention``: a boolean array (keep, exclude) or floats 0/−∞ (additive)."""
        if convention not in MASK_CONVENTIONS:
            raise ConventionError(f"unknown mask convention {convention!r}; use one of {', '.join(MASK_CONVENTIONS)}")
        if convention == "additive":
            return np.where(self.allowed, 0.0, _NEG_INF)
        return ~self.allowed if convention == "exclude" else self.allowed.copy()

    def __eq__(self, other):
        """Two masks are equal when they allow the same entries, whatever conventions they were given in."""
        if not isinstance(other, Mask):
            return NotImplemented
        return self.shape == other.shape and bool((self.allowed == other.allowed).all())

    def __repr__(self):
        return (f"Mask.{self.convention}(<{_fmt_shape(self.shape)}: {int(self.allowed.sum())} of "
                f"{self.allowed.size} allowed>)")


def mask_allowed(mask, what: str = "mask", *, ndim: int | None = None, axes: tuple | None = None) -> np.ndarray:
    """The one reading of a mask's entries: a :class:`Mask` in its convention, anything else as a keep-mask.

    Returns the allowed (keep) form, a boolean array of the mask's shape. Without a :class:`Mask`, the entries must
    be True/False or the integers 1/0 (True = may attend); floats (a 0/1 ``torch.tril(torch.ones(...))``, a 0/−∞
    additive mask), other numbers, NaN and strings are refused, never guessed.

    Args:
        mask: a :class:`Mask`, or an array (NumPy, nested lists, SymPy matrix, torch tensor).
        what: the mask's name in error messages.
        ndim: the number of dimensions required (1: a validity vector, 2: T×S, 3: B×T×T), or None.
        axes: the names of the axes in messages (default: position; row, column; batch item, row, column).

    Raises:
        ShapeError: another number of dimensions, or no entry.
        MaskError: an entry that is no value of the convention, naming where it is, its value and the fix.
    """
    if isinstance(mask, Mask):
        if ndim is not None and mask.allowed.ndim != ndim:
            raise ShapeError(f"{what} must have {ndim} dimension(s); got {mask!r}")
        return mask.allowed.copy()
    if isinstance(mask, str):
        raise MaskError(f"{what}: got the string {mask!r}; a mask here is an array of entries. "
                        f"{_NAME_THE_CONVENTION}.")
    return _read(_checked_array(mask, what, ndim, axes), None, what, axes)


def _causal(shape) -> np.ndarray:
    """Causal visibility, True where source j ≤ query t (the lower triangle of a T×S matrix)."""
    return np.tril(np.ones(tuple(shape), dtype=bool))


def allowed_matrix(mask, shape=None, empty_rows="error", what="attention"):
    """The one check of an attention mask; returns its *allowed* matrix (True = the query may read the source).

    ``mask`` is None (every source allowed: returns None), ``"causal"`` (source j ≤ query t; needs ``shape``),
    a :class:`Mask` in any convention, or a T×S boolean (or 0/1 integer) matrix read as a keep-mask. Every block
    that takes a mask, :class:`SoftmaxRows` and ``blocks.masks.check`` call this, so they accept and refuse the same
    masks. A row with no allowed source is refused unless ``empty_rows="zero"``.

    Args:
        mask: as above. shape: (T, S), the scores' shape, or None. empty_rows: ``"error"`` or ``"zero"``.
        what: the mask's owner in messages (``"attention A"``).

    Raises:
        ShapeError: not a matrix, or not of ``shape`` (names both shapes); ``"causal"`` without a shape.
        MaskError: an entry that is no value of its convention (see :func:`mask_allowed`), an unknown mask name,
            or a query row with no allowed source and ``empty_rows="error"``.
        ConventionError: an unknown ``empty_rows``.
    """
    if empty_rows not in ("error", "zero"):
        raise ConventionError(f"empty_rows must be 'error' or 'zero'; got {empty_rows!r}")
    if mask is None:
        return None
    label = what if what.endswith("mask") else f"{what} mask"
    if isinstance(mask, str):
        if mask != "causal":
            raise MaskError(f"{label}: unknown mask {mask!r}; use 'causal', a T×S boolean matrix of allowed sources "
                            f"(True = may attend) or a Mask. {_NAME_THE_CONVENTION}.")
        if shape is None:
            raise ShapeError(f"{label}: 'causal' needs the shape of the scores (queries × sources)")
        return _causal(shape)
    allowed = mask_allowed(mask, label, ndim=2)
    if shape is not None and allowed.shape != tuple(shape):
        raise ShapeError(
            f"{label} has shape {_fmt_shape(allowed.shape)} but the scores are {_fmt_shape(tuple(shape))}; "
            f"the mask needs one entry per (query position, source position)"
        )
    empty = [i for i in range(allowed.shape[0]) if not allowed[i].any()]
    if empty and empty_rows == "error":
        raise MaskError(
            f"{what}: query position {empty[0]} has no allowed source (its whole mask row is excluded)"
            + (f"; so do positions {empty[1:]}" if len(empty) > 1 else "")
            + ". Allow at least one source per query, or pass empty_rows='zero' to get a zero row "
            "(as torch's scaled_dot_product_attention does)."
        )
    return allowed


# ---------------------------------------------------------------------------
# softmax family
# ---------------------------------------------------------------------------


class SoftmaxRows(Node):
    """Row softmax over the allowed sources: A_ts = e^{S_ts} / Σ_{j allowed} e^{S_tj}, 0 where excluded.

    ``allowed`` is anything :func:`allowed_matrix` accepts: None (every source allowed), ``"causal"``, a boolean
    keep-matrix or a :class:`Mask` in any convention. Excluded
    entries act as exact −∞ and the row is renormalised over the rest. A row
    with no allowed source is refused at construction unless
    ``empty_rows="zero"``.

    Adjoint: Ḡ_S = A ⊙ (Ḡ_A − (Ḡ_A ⊙ A) 1 1ᵀ), i.e. each row times the
    softmax Jacobian diag(a) − a aᵀ.
    """

    prec = ATOM

    def __init__(self, a, allowed=None, *, empty_rows="error", label=None, what="attention"):
        if a.shape == ():
            raise ShapeError("softmax over rows needs a matrix")
        self.allowed = allowed_matrix(allowed, a.shape, empty_rows, what)
        self.empty_rows = empty_rows
        self.label = label
        self.children = (a,)
        self.shape = a.shape

    def _attrs(self):
        return (None if self.allowed is None else self.allowed.tobytes(), self.empty_rows)

    def forward(self, k, vals):
        return k.softmax_rows(vals[0], self.allowed)

    def vjp(self, G, out):
        inner = add(G, neg(Broadcast(Sum(mul(G, out), 1), self.shape)))
        return (mul(out, inner),)

    def render(self, fmt, parts):
        return fmt.call("softmax", [parts[0]], sub="rows")


class LogSumExpRows(Node):
    """Row log-sum-exp: m×n → m×1, lse_t = log Σ_j e^{Z_tj} (numeric backends subtract the row maximum)."""

    prec = ATOM

    def __init__(self, a):
        if a.shape == ():
            raise ShapeError("logsumexp over rows needs a matrix")
        self.children = (a,)
        self.shape = (a.shape[0], 1)

    def forward(self, k, vals):
        return k.logsumexp_rows(vals[0])

    def vjp(self, G, out):
        a = self.children[0]
        return (mul(Broadcast(G, a.shape), SoftmaxRows(a)),)

    def render(self, fmt, parts):
        return fmt.call("logsumexp", [parts[0]], sub="rows")


class CrossEntropyRows(Node):
    """ℓ_t = lse_t − Z_{t,c_t} (m×1): written and differentiated as the difference of the two rows, evaluated stably.

    Children: the rows ``lse`` (m×1, logsumexp of Z's rows) and ``target`` (m×1, Z_{t,c_t}) that the formula
    is written with, and the logits ``Z`` (m×n) themselves; ``cols`` are the targets c_t.

    Value: the exact kernel gives lse − z_target (exact arithmetic does not cancel, and the closed form is
    the textbook's); numeric kernels compute ℓ_t = log Σ_j e^{s_tj} with s_tj = Z_tj − Z_{t,c_t}, shifted by
    max_j s_tj ≥ 0, so the loss is never the difference of two large numbers: logits (10¹⁶, 10¹⁶) give
    log 2, where logsumexp − z_target gives 0 in float64 (as ``torch.nn.functional.cross_entropy`` does,
    through log_softmax).

    Adjoint: Ḡ to lse and −Ḡ to z_target, as the written difference (through those rows Z receives
    Ḡ ⊙ (softmax(Z) − onehot(c))); nothing to Z directly.
    """

    prec = ADD

    def __init__(self, lse, target, logits, cols):
        m, n = logits.shape
        if lse.shape != (m, 1) or target.shape != (m, 1) or len(cols) != m:
            raise ShapeError(f"cross-entropy rows: logsumexp {_fmt_shape(lse.shape)} and target logits "
                             f"{_fmt_shape(target.shape)} must both be {m}×1 for {m}×{n} logits, with one "
                             f"target per row ({len(cols)} given)")
        self.children = (lse, target, logits)
        self.cols = tuple(int(c) for c in cols)
        self.shape = (m, 1)

    def _attrs(self):
        return (self.cols,)

    def forward(self, k, vals):
        return k.cross_entropy_rows(vals[2], self.cols, vals[0], vals[1])

    def vjp(self, G, out):
        return (G, neg(G), None)

    def render(self, fmt, parts):
        return parts[0] + fmt.minus(wrap(fmt, self.children[1], parts[1], ADD + 1))


class TakeRows(Node):
    """Rows selected by index, a[ids, :] (embedding lookup E[k_t]); repeated ids repeat rows."""

    prec = POSTFIX

    def __init__(self, a, ids, label=None):
        m = a.shape[0]
        ids = tuple(int(i) for i in ids)
        bad = [i for i in ids if not 0 <= i < m]
        if bad:
            raise ShapeError(f"row lookup: ids {bad} are outside 0..{m - 1} (a table of {m} rows)")
        self.children = (a,)
        self.ids = ids
        self.label = label
        self.shape = (len(ids), a.shape[1])

    def _attrs(self):
        return (self.ids,)

    def forward(self, k, vals):
        return k.take_rows(vals[0], self.ids)

    def vjp(self, G, out):
        return (Place(G, self.ids, tuple(range(self.shape[1])), self.children[0].shape),)

    def render(self, fmt, parts):
        text = wrap(fmt, self.children[0], parts[0], POSTFIX + 1)
        if self.label is None:  # rows by number print as a block of rows, E[0,2; :], never as an entry E[0,2]
            return fmt.slice(text, self.ids, tuple(range(self.shape[1])), self.children[0].shape)
        return fmt.take_rows(text, self.label)


class TakeAlong(Node):
    """One entry per row, Z[t, c_t] (the target logit of each position): m×n → m×1."""

    prec = POSTFIX

    def __init__(self, a, cols, label=None):
        m, n = a.shape
        cols = tuple(int(c) for c in cols)
        if len(cols) != m:
            raise ShapeError(f"one target per row is needed: {len(cols)} targets for {m} rows")
        bad = [c for c in cols if not 0 <= c < n]
        if bad:
            raise ShapeError(f"targets {bad} are outside 0..{n - 1} ({n} classes)")
        self.children = (a,)
        self.cols = cols
        self.label = label
        self.shape = (m, 1)

    def _attrs(self):
        return (self.cols,)

    def forward(self, k, vals):
        return k.take_along(vals[0], self.cols)

    def vjp(self, G, out):
        return (PlaceAlong(G, self.cols, self.children[0].shape),)

    def render(self, fmt, parts):
        return fmt.take_along(wrap(fmt, self.children[0], parts[0], POSTFIX + 1), self.label)


class PlaceAlong(Node):
    """m×1 values placed at (t, c_t) of an m×n zero matrix (adjoint of :class:`TakeAlong`)."""

    def __init__(self, a, cols, shape):
        self.children = (a,)
        self.cols = tuple(cols)
        self.shape = tuple(shape)

    def _attrs(self):
        return (self.cols, self.shape)

    def forward(self, k, vals):
        return k.place_along(vals[0], self.cols, self.shape)

    def vjp(self, G, out):
        return (TakeAlong(G, self.cols),)

    def render(self, fmt, parts):
        return fmt.call("onehot", [parts[0]])


# ---------------------------------------------------------------------------
# rendering helpers
# ---------------------------------------------------------------------------


def wrap(fmt, node: Node, text: str, need: int, *, signed: bool = False) -> str:
    """Parenthesise ``text`` when ``node`` binds less tightly than ``need``, or (``signed``: after a minus sign)
    when it starts with a minus of its own: x − (−2 x), never x − −2 x."""
    if node.prec < need or signed and text.lstrip().startswith(("-", "−", "\\minus")):
        return fmt.paren(text)
    return text


def walk(node: Node):
    """Yield every node of a tree (pre-order)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def refs(node: Node) -> set:
    """Names referenced by a tree: :class:`Ref` leaves and free symbols of :class:`Scalar` leaves."""
    out = set()
    for n in walk(node):
        if isinstance(n, Ref):
            out.add(n.name)
        elif isinstance(n, Scalar):
            out.update(n.names())
    return out


def evaluate(node: Node, kernel, env: dict):
    """The value of ``node`` with ``kernel``, given the values of the names it refers to in ``env``.

    ``env`` maps each :class:`Ref` name (and each symbol of a :class:`Scalar`)
    to a kernel value; the result is a kernel value (a number, or an array of
    the node's shape). This is one forward pass over the node's tree; the order
    of rows is :meth:`symseq.ledger.Ledger.run`.

    Raises:
        KeyError: when ``env`` has no value for a name the node refers to.
    """
    if isinstance(node, Ref):
        return env[node.name]
    if isinstance(node, Scalar):
        return kernel.scalar(node.expr, env)
    if isinstance(node, Const):
        return node.forward(kernel, ())
    return node.forward(kernel, [evaluate(c, kernel, env) for c in node.children])


class Group(Node):
    """Several nodes as one, so that the rows they need are evaluated together (:meth:`symseq.values.Values.rows`);
    never a row of a ledger itself."""

    def __init__(self, nodes):
        self.children = tuple(nodes)
