"""Exact array kernel: the ledger's operations on NumPy object arrays of SymPy expressions.

A kernel is the small array vocabulary that :mod:`symseq.ops` nodes call in
their ``forward``. This one keeps every entry an exact SymPy expression, so
evaluating a ledger with it gives closed forms (with symbols bound to
themselves) or exact values (with the handout's Rationals bound). The mpmath,
NumPy and torch kernels in :mod:`symseq.backends` implement the same methods.

Matrices are 2-D object arrays (rows are positions); scalars are SymPy
expressions.
"""

from __future__ import annotations

import numbers

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from .errors import LedgerError, ShapeError
from .functions import free_symbols_of_args


def integer(n, what: str, *, minimum: int | None = None, expected: str = "") -> int:
    """``n`` as a Python int: Python, NumPy and SymPy integers pass; a bool, a float (0.7 is no class, 2.0 no
    width) or text is refused, and so is ``n < minimum``. The one integer check of the blocks.

    Args:
        n: the value received.
        what: what it is, as the message names it ("T (the number of positions)").
        minimum: the least value allowed: 1 for what counts something (a width, a length), 0 for a number of
            steps; None for any integer.
        expected: what it must be, when more than "a positive integer" says it ("an integer class index in 0..8").

    Raises:
        ShapeError: "{what} must be a positive integer; got 0" (the value received, as Python shows it).
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or (minimum is not None and n < minimum):
        kind = expected or {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer ≥ {minimum}")
        raise ShapeError(f"{what} must be {kind}; got {n!r}")
    return int(n)


def substitute(expr: sp.Basic, mapping: dict) -> sp.Basic:
    """Replace symbols in ``expr``; derivatives of undefined functions stay valid (``Subs``)."""
    if not mapping:
        return expr
    if expr.has(sp.Derivative, sp.Subs):
        return expr.subs(mapping, simultaneous=True)
    return expr.xreplace(mapping)


def user_shape(value) -> tuple:
    """The shape of user data: () for a number, (m, n) for a matrix, nested list or array (any ndim)."""
    if isinstance(value, sp.MatrixBase):
        return tuple(value.shape)
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, sp.Basic):
        return tuple(int(s) for s in shape)
    if isinstance(value, (list, tuple)):
        try:
            return tuple(np.asarray(value, dtype=object).shape)
        except ValueError:  # ragged rows
            raise ShapeError("a matrix given as nested lists needs rows of equal length; got rows of lengths "
                             + ", ".join(str(len(r)) if isinstance(r, (list, tuple)) else "1" for r in value)) from None
    return ()


def _fmt(shape) -> str:
    if len(shape) == 1:
        return f"{shape[0]} (one axis)"
    return "a scalar" if shape == () else "×".join(str(s) for s in shape)


def check_user_shape(value, shape, name, backend, batch: bool = False):
    """Raise a ShapeError naming leaf ``name`` when ``value`` does not have its ``shape``.

    ``batch`` allows leading batch axes before the leaf's shape (the NumPy and torch backends).
    """
    got, shape = user_shape(value), tuple(shape)
    fits = len(got) >= len(shape) and got[len(got) - len(shape):] == shape if batch else got == shape
    if not fits:
        how = (f"the {backend} backend takes the leaf's shape after any leading batch axes" if batch
               else f"the {backend} backend takes no batch axes")
        raise ShapeError(f"the value given for {name} has shape {_fmt(got)} but {name} is {_fmt(shape)} ({how}); "
                         f"give {_fmt(shape)}" + (", rows are positions" if len(shape) == 2 else ""))


def _obj(shape, fill):
    out = np.empty(shape, dtype=object)
    out.fill(fill)
    return out


_REAL: dict = {}  # subexpression → whether _surely_real proves it real, cleared past _REAL_MAX entries
_REAL_MAX = 1 << 16


def _surely_real(y) -> bool:
    """True when SymPy's ``y.is_real`` is True by its own rules for sums, products and powers: a sum or a product
    of reals is real (``Add._eval_is_real``; ``Mul._eval_real_imag`` and finite factors), so is a real to a
    nonnegative integer power or a positive rational to a rational power (``Pow._eval_is_extended_real`` and
    ``_eval_is_finite``); anything else is asked ``is_real`` itself. False says nothing. Remembered per
    subexpression: SymPy answers ``is_real`` of a product by searching through every other fact of it (is it
    zero, positive, imaginary, an integer, odd?), about 2 ms for each score beside a masked entry."""
    hit = _REAL.get(y)
    if hit is None:
        if len(_REAL) > _REAL_MAX:
            _REAL.clear()
        t = type(y)
        if y.is_Rational:
            hit = True
        elif t is sp.Add or t is sp.Mul:
            hit = all(_surely_real(a) for a in y.args)
        elif t is sp.Pow:
            b, e = y.args
            hit = ((e.is_Integer and e >= 0 and _surely_real(b))
                   or (b.is_Rational and b > 0 and e.is_Rational))
        else:
            hit = y.is_real is True
        _REAL[y] = hit
    return hit


def _add(a, b):
    """a + b as SymPy makes it, a masked score first: −∞ plus an expression SymPy knows to be real is −∞ (SymPy's
    sum drops each real term beside −∞, but asks of each first whether it is ≤ 0, a search for its sign through
    the assumptions system: most of evaluating a causal attention over symbolic scores). Whether it is real is
    read off its sums, products and powers first (:func:`_surely_real`), then asked of SymPy."""
    for x, y in ((a, b), (b, a)):
        if (x is sp.S.NegativeInfinity and isinstance(y, sp.Expr) and not y.is_Number
                and (_surely_real(y) or y.is_real)):
            return x
    return a + b


_ADD = np.frompyfunc(_add, 2, 1)  # entrywise, with NumPy's broadcasting

_INFINITE = (sp.S.Infinity, sp.S.NegativeInfinity, sp.S.ComplexInfinity, sp.S.NaN)
_INFINITE_SET = frozenset(_INFINITE)  # looked up as Basic.has looks up its patterns


_ABSORBED: dict = {}  # subexpression → whether 0 times it is 0 (see _zero_absorbs), cleared past _ABSORBED_MAX entries
_ABSORBED_MAX = 1 << 18
def _zero_absorbs(y) -> bool:
    """Whether ``y`` holds no ∞ or nan and only finite free symbols: ``not y.has(*_INFINITE) and all(s.is_finite
    for s in y.free_symbols)``, remembered per subexpression. The value entries meet the zeros of every row of a
    masked weights matrix and share their subexpressions with the rows before them, so asking this of the whole
    tree each time walked the same nodes again and again. A node whose free symbols are the union of its args'
    (Basic's rule: Add, Mul, Pow, functions) answers from its args, as ``has`` also looks at the node then its
    args; any other (a symbol, a Lambda, a derivative) is asked the question itself. Uses its own stack, so a deep
    expression cannot exhaust Python's recursion limit."""
    def outright(node):
        if node in _INFINITE_SET:
            return False
        if not free_symbols_of_args(type(node)):
            return not node.has(*_INFINITE) and all(s.is_finite for s in node.free_symbols)
        return None

    return _fold_up(y, _ABSORBED, _ABSORBED_MAX, outright, all)


def _fold_up(e, memo: dict, limit: int, outright, combine):
    """A property of ``e`` found bottom-up over its distinct subexpressions: ``outright(node)`` answers a node by
    itself (None: from its arguments), else ``combine`` takes the answers of its SymPy arguments. Each answer is
    remembered in ``memo`` (cleared past ``limit`` entries), so a subexpression shared by many rows is visited
    once; the walk uses its own stack, so a deep expression cannot exhaust Python's recursion limit."""
    if len(memo) > limit:
        memo.clear()
    stack = [e]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        answer = outright(node)
        if answer is None:
            args = [a for a in node.args if isinstance(a, sp.Basic)]
            todo = [a for a in args if a not in memo]
            if todo:
                stack.extend(todo)
                continue
            answer = combine([memo[a] for a in args])
        memo[node] = answer
        stack.pop()
    return memo[e]


def _mul(a, b):
    """a · b as SymPy makes it, an exact zero first: 0 times an expression of finite symbols and numbers, with no
    ∞ or nan in it, is 0 (SymPy's product is 0 unless it can prove the other factor infinite, which such an
    expression never is; it asks whether it is finite first, through the assumptions system: most of multiplying
    the attention weights' matrix, a masked one holding zeros, by the values)."""
    for x, y in ((a, b), (b, a)):
        if ((x is sp.S.Zero or type(x) is int and x == 0) and isinstance(y, sp.Expr) and not y.is_Number
                and _zero_absorbs(y)):
            return sp.S.Zero
    return a * b


_MUL = np.frompyfunc(_mul, 2, 1)


class ExactKernel:
    """Exact arithmetic on object arrays of SymPy expressions (see module docstring)."""

    name = "exact"
    #: What the kernel's numbers are rounded to, for messages ("float64", "50 significant digits"); None: exact.
    precision: str | None = None
    #: Whether a value is one array of numbers with any leading batch axes, computed by whole-array operations
    #: (the NumPy and torch kernels), rather than an object array of numbers computed entry by entry (this kernel
    #: and mpmath's); a compiled program releases such values after their last use.
    arrays = False

    # -- numbers ---------------------------------------------------------------
    zero = sp.S.Zero

    def number(self, v):
        return v

    def exp(self, x):
        return sp.exp(x)

    def log(self, x):
        return sp.log(x)

    def total(self, xs):
        return sp.Add(*xs)

    def is_neg_inf(self, x):
        return x is sp.S.NegativeInfinity

    def max(self, xs):
        return None  # exact softmax needs no shift

    # -- leaves ----------------------------------------------------------------
    def const(self, value):
        if isinstance(value, sp.MatrixBase):
            m, n = value.shape
            out = np.empty((m, n), dtype=object)
            for i in range(m):
                for j in range(n):
                    out[i, j] = self.number(value[i, j])
            return out
        return self.number(value)

    def scalar(self, expr, env):
        mapping = {}
        for s in expr.free_symbols:
            try:
                mapping[s] = env[s.name]
            except KeyError:
                raise LedgerError(f"the expression {expr} uses {s.name!r}, which has no value here") from None
        return substitute(expr, mapping)

    def apply(self, lam, a):
        (x,) = lam.variables
        body = lam.expr
        if isinstance(a, np.ndarray):
            out = np.empty(a.shape, dtype=object)
            for idx, v in np.ndenumerate(a):
                out[idx] = substitute(body, {x: v})
            return out
        return substitute(body, {x: a})

    # -- arithmetic ----------------------------------------------------------------
    def add(self, a, b):
        return _ADD(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else _add(a, b)

    def mul(self, a, b):
        return _MUL(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else _mul(a, b)

    def div(self, a, b):
        return np.true_divide(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else a / b

    def neg(self, a):
        return np.negative(a) if isinstance(a, np.ndarray) else -a

    def transpose(self, a):
        return np.swapaxes(a, -1, -2)

    def matmul(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        out = np.empty((m, n), dtype=object)
        for i in range(m):
            for j in range(n):
                out[i, j] = self.total([_mul(a[i, l], b[l, j]) for l in range(k)])
        return out

    def batch_sum(self, a):  # no batch axes in exact or mpmath evaluation
        return a

    def batch_tn(self, a, b):
        return self.matmul(self.transpose(a), b)

    # -- reductions ---------------------------------------------------------------
    def sum(self, a, axis):
        if axis is None:
            return self.total(list(a.flat))
        m, n = a.shape
        if axis == 0:
            out = np.empty((1, n), dtype=object)
            for j in range(n):
                out[0, j] = self.total(list(a[:, j]))
            return out
        out = np.empty((m, 1), dtype=object)
        for i in range(m):
            out[i, 0] = self.total(list(a[i, :]))
        return out

    def mean(self, a, axis, count):
        """The mean over ``axis`` (as :meth:`sum`) of ``count`` entries: the exact sum divided by ``count``."""
        return self.div(self.sum(a, axis), self.const(sp.Integer(count)))

    def broadcast_to(self, a, shape):
        if not isinstance(a, np.ndarray):
            return _obj(shape, a)
        return np.array(np.broadcast_to(a, shape), dtype=object)

    # -- indexing ------------------------------------------------------------------
    def entry(self, a, i, j):
        return a[i, j]

    def select(self, a, rows, cols):
        return a[np.ix_(list(rows), list(cols))]

    def place(self, a, rows, cols, shape):
        if not isinstance(a, np.ndarray):  # a scalar placed at one entry
            a = np.array([[a]], dtype=object)
        out = _obj(shape, self.zero)
        for ii, r in enumerate(rows):
            for jj, c in enumerate(cols):
                out[r, c] = out[r, c] + a[ii, jj]
        return out

    def concat(self, vals, axis):
        return np.concatenate(vals, axis=axis)

    def take_rows(self, a, ids):
        return a[list(ids), :]

    def take_along(self, a, cols):
        out = np.empty((a.shape[0], 1), dtype=object)
        for i, c in enumerate(cols):
            out[i, 0] = a[i, c]
        return out

    def place_along(self, a, cols, shape):
        out = _obj(shape, self.zero)
        for i, c in enumerate(cols):
            out[i, c] = a[i, 0]
        return out

    # -- softmax family -------------------------------------------------------------
    def _row_allowed(self, row, allowed_row):
        return [j for j, v in enumerate(row) if (allowed_row is None or allowed_row[j]) and not self.is_neg_inf(v)]

    def softmax_rows(self, a, allowed):
        m, n = a.shape
        out = _obj((m, n), self.zero)
        for i in range(m):
            js = self._row_allowed(a[i], None if allowed is None else allowed[i])
            if not js:
                continue  # an empty row was accepted at construction (empty_rows="zero")
            shift = self.max([a[i, j] for j in js])
            e = {j: self.exp(a[i, j] if shift is None else a[i, j] - shift) for j in js}
            z = self.total(list(e.values()))
            for j in js:
                out[i, j] = e[j] / z
        return out

    def logsumexp_rows(self, a):
        m, n = a.shape
        out = np.empty((m, 1), dtype=object)
        for i in range(m):
            js = self._row_allowed(a[i], None)
            if len(js) == 1:
                out[i, 0] = a[i, js[0]]
                continue
            shift = self.max([a[i, j] for j in js])
            if shift is None:
                out[i, 0] = self.log(self.total([self.exp(a[i, j]) for j in js]))
            else:
                out[i, 0] = shift + self.log(self.total([self.exp(a[i, j] - shift) for j in js]))
        return out


    def cross_entropy_rows(self, logits, cols, lse, target):
        """ℓ_t = lse_t − Z_{t,c_t} (m×1) from the rows as written: exact arithmetic does not cancel."""
        return self.add(lse, self.neg(target))

    def from_user(self, value, shape, name="value"):
        """Convert user data for the leaf ``name`` of ``shape`` to this kernel: exact numbers only.

        Raises:
            ShapeError: a value whose shape is not ``shape`` (names the leaf and both shapes).
            ConventionError: a float (inexact) or anything else that is not an exact number.
        """
        from .numbers import exact, exact_matrix

        check_user_shape(value, shape, name, self.name)
        return self.const(exact(value, what=name) if shape == () else exact_matrix(value, what=name))

    def to_output(self, value, shape):
        return sp.ImmutableMatrix(value.tolist()) if isinstance(value, np.ndarray) else value

    # -- checks ------------------------------------------------------------------
    def _bad(self, e, allow_infinity):
        if not isinstance(e, sp.Basic):
            return False
        undefined, infinite, symbolic = _nonfinite(e)
        return undefined or (not allow_infinity and infinite and not symbolic)

    def first_nonfinite(self, value, allow_infinity=False):
        """``(index, entry)`` of the first undefined (nan, zoo) or, unless allowed, infinite entry; else None."""
        if isinstance(value, np.ndarray):
            for idx, e in np.ndenumerate(value):
                if self._bad(e, allow_infinity):
                    return idx, e
            return None
        return ((), value) if self._bad(value, allow_infinity) else None


EXACT = ExactKernel()


_NONFINITE: dict = {}  # subexpression → (undefined, infinite, symbolic), cleared past _NONFINITE_MAX entries
_NONFINITE_MAX = 1 << 18


def _nonfinite(e: sp.Basic) -> tuple[bool, bool, bool]:
    """(holds nan or zoo, holds ±oo, holds a symbol or an undefined function) of an exact expression.

    A row's value shares its subexpressions with the rows before it, so the answers are remembered per
    subexpression: checking a row costs its new nodes, not its whole tree (``Basic.has`` walks the whole tree,
    which made the check quadratic along a derivation's rows). The walk uses its own stack, so a deep expression
    (a long unrolled recurrence) cannot exhaust Python's recursion limit."""
    def outright(node):
        if node is sp.nan or node is sp.zoo:
            return True, False, False
        if node is sp.oo or node is sp.S.NegativeInfinity:
            return False, True, False
        if isinstance(node, (sp.Symbol, AppliedUndef)):
            return False, False, True
        return None

    return _fold_up(e, _NONFINITE, _NONFINITE_MAX, outright,
                    lambda flags: tuple(any(f[k] for f in flags) for k in range(3)))
