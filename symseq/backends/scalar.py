"""Numeric evaluation of SymPy scalar expressions without ``lambdify``.

The ledger's scalar rows are small SymPy expressions (``w_x x_0 + w_h h_{-1}``,
``1 − tanh(z)²``). :func:`evaluate` walks such an expression once with a
*library* of numeric operations (mpmath numbers, NumPy arrays or torch
tensors), so every backend evaluates symseq's functions with the same
conventions: ReLU'(0) = 0 unless the other convention was recorded, softmax
and logsumexp subtract the row maximum, masked (−∞) entries drop out.

A general activation φ (an undefined SymPy function) cannot be evaluated
numerically; the error says to substitute a concrete one.
"""

from __future__ import annotations

import operator

import sympy as sp

from .. import functions as F
from ..errors import EvaluationError


class Library:
    """Numeric operations for one backend. Subclasses set the functions they support."""

    name = "library"

    def number(self, value: sp.Expr):  # exact SymPy number -> backend number
        raise NotImplementedError

    def add(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out

    def mul(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x
        return out

    def pow(self, b, e, e_expr):
        return b**e



def plan(e: sp.Basic, lib: Library):
    """How to compute one node of an expression with ``lib``.

    Returns ``("symbol", e)``, ``("number", value)`` or ``("call", fn, children)``
    where ``fn(*values_of_children)`` computes the node. Both the interpreter
    (:func:`evaluate`) and the compiler (:mod:`symseq.backends.compiled`) use
    this one dispatch, so they cannot disagree on a convention.

    Raises:
        EvaluationError: for an undefined function (a general φ) or a
            function the backend does not provide.
    """
    if e.is_Symbol:
        return ("symbol", e)
    if e.is_Number or e.is_NumberSymbol or e in (sp.S.Infinity, sp.S.NegativeInfinity):
        return ("number", lib.number(e))
    if e.is_Add:
        return _plan_add(e)
    if e.is_Mul:
        return _plan_mul(e)
    if e.is_Pow:
        return _plan_pow(e, lib)
    if isinstance(e, (sp.Derivative, sp.Subs, sp.core.function.AppliedUndef)):
        f = e.atoms(sp.core.function.AppliedUndef)
        names = ", ".join(sorted({str(a.func) for a in f})) or str(e)
        raise EvaluationError(
            f"{names} is a general function here, so {e} has no numeric value; build the ledger "
            f"with a concrete activation (tanh, sigmoid, relu) to evaluate it"
        )
    if isinstance(e, sp.Heaviside):
        args = e.args if len(e.args) > 1 else (e.args[0], sp.S.Half)
        return ("call", lib.f_heaviside, args)
    if isinstance(e, F.relu):
        return ("call", lib.f_relu, e.args[:1])
    if isinstance(e, F.softmax):
        k = int(e.args[0])
        return ("call", lambda *xs: lib.f_softmax(k, list(xs)), e.args[1:])
    if isinstance(e, F.logsumexp):
        return ("call", lambda *xs: lib.f_logsumexp(list(xs)), e.args)
    if isinstance(e, sp.KroneckerDelta):
        v = e.doit()
        if v.is_Number:
            return ("number", lib.number(v))
    if isinstance(e, (sp.Max, sp.Min)):
        f = lib.f_max if isinstance(e, sp.Max) else lib.f_min
        return ("call", lambda *xs: f(list(xs)), e.args)
    if isinstance(e, sp.Function):
        name = "abs" if type(e) is sp.Abs else type(e).__name__.lower()
        fn = getattr(lib, "f_" + name, None)
        if fn is None:
            raise EvaluationError(f"the {lib.name} backend cannot evaluate {name}(…) in {e}")
        return ("call", fn, e.args)
    if e.is_number:
        return ("number", lib.number(e))
    raise EvaluationError(f"cannot evaluate {e} (a {type(e).__name__}) numerically")


def _plan_add(e):
    """a + b − c ...: positive terms added, terms with a minus sign subtracted (no multiplication by −1)."""
    terms, signs = [], []
    for t in e.args:
        if t.could_extract_minus_sign() and t.is_Mul and t.args[0] == -1:
            terms.append(sp.Mul(*t.args[1:]))
            signs.append(False)
        else:
            terms.append(t)
            signs.append(True)
    order = sorted(range(len(terms)), key=lambda i: not signs[i])  # start from a positive term when there is one
    terms = [terms[i] for i in order]
    signs = [signs[i] for i in order]
    if len(terms) == 2 and all(signs):
        return ("call", operator.add, tuple(terms))
    if len(terms) == 2 and signs[0]:
        return ("call", operator.sub, tuple(terms))

    signs = tuple(signs)

    def fold(*xs, _signs=signs):
        out = xs[0] if _signs[0] else -xs[0]
        for x, sg in zip(xs[1:], _signs[1:]):
            out = out + x if sg else out - x
        return out

    fold.signs = signs  # read by the compiler's code generators (compiled._op)
    return ("call", fold, tuple(terms))


def _plan_mul(e):
    args = e.args
    if args[0] == -1:
        rest = sp.Mul(*args[1:])
        return ("call", operator.neg, (rest,))
    if len(args) == 2:
        return ("call", operator.mul, args)

    def prod(*xs):
        out = xs[0]
        for x in xs[1:]:
            out = out * x
        return out

    return ("call", prod, args)


def square(x):
    """x·x (one multiplication; the compiler recognises it to write the result in place)."""
    return x * x


def _plan_pow(e, lib):
    b, x = e.args
    if x == sp.S.Half:
        return ("call", lambda vb: lib.pow(vb, None, sp.S.Half), (b,))
    if x == -sp.S.Half:
        return ("call", lambda vb: lib.pow(vb, None, -sp.S.Half), (b,))
    if x.is_Integer:
        n = int(x)
        if n == 2:
            return ("call", square, (b,))
        if n == -1:
            return ("call", lambda vb: 1 / vb, (b,))
        return ("call", lambda vb: vb**n, (b,))
    return ("call", lambda vb, vx: lib.pow(vb, vx, x), (b, x))


def evaluate(expr: sp.Basic, lib: Library, env: dict, bind: dict | None = None, cache: dict | None = None):
    """Evaluate ``expr`` with ``lib``; symbols are looked up in ``bind`` (by symbol) then ``env`` (by name).

    ``cache`` (subexpression → value), when given, is read and filled: pass one dict to evaluate several
    expressions that share subexpressions (a sum and each of its terms) with the same ``lib``, ``env`` and ``bind``.

    Raises:
        EvaluationError: for an undefined function (a general φ), a missing
            symbol, or a function the backend does not provide.
    """
    bind = bind or {}
    cache = {} if cache is None else cache

    def ev(e):
        hit = cache.get(e)
        if hit is not None:
            return hit
        step = plan(e, lib)
        if step[0] == "symbol":
            if e in bind:
                out = bind[e]
            else:
                try:
                    out = env[e.name]
                except KeyError:
                    raise EvaluationError(f"{e.name} has no value in {expr}") from None
        elif step[0] == "number":
            out = step[1]
        else:
            out = step[1](*[ev(a) for a in step[2]])
        cache[e] = out
        return out

    return ev(expr)
