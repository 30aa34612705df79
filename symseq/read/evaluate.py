"""The value of a tree of printed mathematics (:mod:`symseq.read.tree`): exact, or over intervals.

:func:`value` evaluates exactly: every printed decimal is its Rational and functions stay exact
(``tanh(1/2)``), so the value can be rounded at any precision. :func:`interval` evaluates over :mod:`mpmath`
intervals, each printed decimal widened by half a unit of its last digit: what the printed step could give had
its operands not been rounded.

Lists are vectors; a list of lists is a matrix (rows first). ``+`` and ``−`` work entry by entry (a scalar
broadcasts); ``·`` of two vectors is their dot product; ``@``, ``·`` or ``×`` of two matrices (or a matrix and
a vector) their product; ``*`` of two lists is entry by entry.

Work is bounded, so hostile text ends in a :class:`~symseq.errors.ClaimError` and never hangs: integer powers at
most :data:`MAX_POWER`, results of at most :data:`MAX_BITS` bits, ``exp`` of arguments at most
:data:`MAX_EXP_ARG` in size.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..errors import ClaimError, NotRealError
from ..numbers import short
from .tree import Bin, Call, Const, Neg, Num, Pow, Ref, Vec

MAX_POWER = 400  # |n| of an integer power
MAX_BITS = 4000  # numerator and denominator of an exact rational
MAX_EXP_ARG = 1000  # |x| in exp(x)



def _short(x) -> str:
    """``x`` as a message shows it: a printed number as :func:`symseq.numbers.short` writes it, anything else (−e,
    √2) to six digits."""
    return short(x) if isinstance(x, sp.Rational) else str(sp.N(x, 6))


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
            b = _grouped(b)
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


def _grouped(x):
    """A divisor in square brackets that holds one number is that number: ``1/[1+e^{2w-1}]`` groups, as
    brackets do in print (a list cannot divide)."""
    return x[0] if isinstance(x, tuple) and len(x) == 1 and not isinstance(x[0], tuple) else x


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
        raise NotRealError(f"a negative base to a non-integer power ({_short(b)}^{_short(e)}) is not a real number")
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
            raise NotRealError(f"the logarithm of {_short(v)} is not defined (it needs a positive number)")
        return sp.log(v)
    if name == "sqrt":
        if a < 0:
            raise NotRealError(f"the square root of {_short(v)} is not a real number")
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
            b = _grouped(b)
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
