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

    # functions by name; each library provides what it can
    def call(self, name: str, args, expr):
        fn = getattr(self, "f_" + name, None)
        if fn is None:
            raise EvaluationError(f"the {self.name} backend cannot evaluate {name}(…) in {expr}")
        return fn(*args)


def evaluate(expr: sp.Basic, lib: Library, env: dict, bind: dict | None = None):
    """Evaluate ``expr`` with ``lib``; symbols are looked up in ``bind`` (by symbol) then ``env`` (by name).

    Raises:
        EvaluationError: for an undefined function (a general φ), a missing
            symbol, or a function the backend does not provide.
    """
    bind = bind or {}
    cache: dict = {}

    def ev(e):
        hit = cache.get(e)
        if hit is not None:
            return hit
        out = _ev(e)
        cache[e] = out
        return out

    def _ev(e):
        if e.is_Symbol:
            if e in bind:
                return bind[e]
            try:
                return env[e.name]
            except KeyError:
                raise EvaluationError(f"{e.name} has no value in {expr}") from None
        if e.is_number and not e.has(F.softmax, F.logsumexp, F.relu, F.sigmoid, F.gelu, F.gelu_tanh):
            if e.is_Number or e.is_NumberSymbol or e in (sp.S.Infinity, sp.S.NegativeInfinity):
                return lib.number(e)
        if e.is_Add:
            return lib.add([ev(a) for a in e.args])
        if e.is_Mul:
            return lib.mul([ev(a) for a in e.args])
        if e.is_Pow:
            b, x = e.args
            return lib.pow(ev(b), ev(x), x)
        if isinstance(e, sp.Derivative) or isinstance(e, sp.Subs) or isinstance(e, sp.core.function.AppliedUndef):
            f = e.atoms(sp.core.function.AppliedUndef)
            names = ", ".join(sorted({str(a.func) for a in f})) or str(e)
            raise EvaluationError(
                f"{names} is a general function here, so {e} has no numeric value; build the ledger "
                f"with a concrete activation (tanh, sigmoid, relu) to evaluate it"
            )
        if isinstance(e, sp.Heaviside):
            x = ev(e.args[0])
            h0 = ev(e.args[1]) if len(e.args) > 1 else lib.number(sp.S.Half)
            return lib.f_heaviside(x, h0)
        if isinstance(e, F.relu):
            return lib.f_relu(ev(e.args[0]))
        if isinstance(e, F.softmax):
            return lib.f_softmax(int(e.args[0]), [ev(a) for a in e.args[1:]])
        if isinstance(e, F.logsumexp):
            return lib.f_logsumexp([ev(a) for a in e.args])
        if isinstance(e, sp.KroneckerDelta):
            v = e.doit()
            if v.is_Number:
                return lib.number(v)
        if isinstance(e, (sp.Max, sp.Min)):
            vals = [ev(a) for a in e.args]
            return lib.f_max(vals) if isinstance(e, sp.Max) else lib.f_min(vals)
        if isinstance(e, sp.Function):
            return lib.call(type(e).__name__.lower() if type(e) is not sp.Abs else "abs", [ev(a) for a in e.args], e)
        if e.is_number:
            return lib.number(e)
        raise EvaluationError(f"cannot evaluate {e} (a {type(e).__name__}) numerically")

    return ev(expr)
