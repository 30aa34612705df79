"""mpmath backend: every row evaluated at a requested number of decimal digits.

Inputs stay exact until evaluation: a Rational such as 1/5 becomes an mpf
at the working precision, never through a Python float. This is how deep
rows (a LayerNorm of a softmax of sines) are evaluated to 50 digits without
asking SymPy to simplify a page-long closed form.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from ..arrays import ExactKernel
from ..errors import EvaluationError
from ..numbers import short
from .scalar import Library, evaluate


class MpmathLibrary(Library):
    name = "mpmath"

    def __init__(self, ctx):
        self.ctx = ctx

    def number(self, value):
        if value is sp.S.NegativeInfinity:
            return self.ctx.ninf
        if value is sp.S.Infinity:
            return self.ctx.inf
        if value.is_Rational:
            return self.ctx.mpf(int(value.p)) / int(value.q)
        if value.has(sp.nan, sp.zoo):
            raise EvaluationError(f"{value} is undefined")
        f = sp.Float(value.evalf(self.ctx.dps + 10), self.ctx.dps + 10)
        return self.ctx.mpf(f._mpf_)

    def add(self, xs):
        return self.ctx.fsum(xs)

    def mul(self, xs):
        return self.ctx.fprod(xs)

    def pow(self, b, e, e_expr):
        if e_expr == sp.S.Half:
            return self.ctx.sqrt(b)
        if e_expr == -sp.S.Half:
            return 1 / self.ctx.sqrt(b)
        if e_expr.is_Integer:
            return b ** int(e_expr)
        return self.ctx.power(b, e)

    def f_exp(self, x):
        return self.ctx.exp(x)

    def f_log(self, x):
        if x == 0:
            return self.ctx.ninf
        if x < 0:
            raise EvaluationError(f"log of the negative number {short(x, 8)}")
        return self.ctx.log(x)

    def f_tanh(self, x):
        return self.ctx.tanh(x)

    def f_sinh(self, x):
        return self.ctx.sinh(x)

    def f_cosh(self, x):
        return self.ctx.cosh(x)

    def f_sin(self, x):
        return self.ctx.sin(x)

    def f_cos(self, x):
        return self.ctx.cos(x)

    def f_tan(self, x):
        return self.ctx.tan(x)

    def f_erf(self, x):
        return self.ctx.erf(x)

    def f_abs(self, x):
        return abs(x)

    def f_sigmoid(self, x):
        return 1 / (1 + self.ctx.exp(-x))

    def f_relu(self, x):
        return x if x > 0 else self.ctx.mpf(0)

    def f_heaviside(self, x, h0):
        return self.ctx.mpf(1) if x > 0 else (self.ctx.mpf(0) if x < 0 else h0)

    def f_max(self, xs):
        return max(xs)

    def f_min(self, xs):
        return min(xs)

    def f_gelu(self, x):
        return x / 2 * (1 + self.ctx.erf(x / self.ctx.sqrt(2)))

    def f_gelu_tanh(self, x):
        c = self.ctx.mpf(44715) / 1000000
        return x / 2 * (1 + self.ctx.tanh(self.ctx.sqrt(2 / self.ctx.pi) * (x + c * x**3)))

    def _allowed(self, xs):
        return [x for x in xs if x != self.ctx.ninf]

    def f_logsumexp(self, xs):
        ok = self._allowed(xs)
        if not ok:
            raise EvaluationError("logsumexp of a row whose entries are all masked")
        m = max(ok)
        return m + self.ctx.log(self.ctx.fsum(self.ctx.exp(x - m) for x in ok))

    def f_softmax(self, k, xs):
        ok = self._allowed(xs)
        if not ok:
            raise EvaluationError("softmax of a row whose entries are all masked")
        if xs[k] == self.ctx.ninf:
            return self.ctx.mpf(0)
        m = max(ok)
        return self.ctx.exp(xs[k] - m) / self.ctx.fsum(self.ctx.exp(x - m) for x in ok)


class MpmathKernel(ExactKernel):
    """The exact kernel's array code with mpmath numbers at ``dps`` digits."""

    name = "mpmath"

    def __init__(self, dps: int = 50):
        if int(dps) < 5:
            raise EvaluationError(f"mpmath needs at least 5 digits of precision; got dps={dps}")
        self.ctx = mpmath.MPContext()
        self.ctx.dps = int(dps)
        self.dps = int(dps)
        self.lib = MpmathLibrary(self.ctx)
        self.zero = self.ctx.mpf(0)

    def number(self, v):
        if isinstance(v, sp.Basic):
            return self.lib.number(v)
        return self.ctx.mpf(v)

    def from_user(self, value, shape):
        """Convert user data (exact SymPy, ints, floats taken exactly, arrays) to this kernel."""
        if shape == ():
            return self.number(value) if not isinstance(value, float) else self.ctx.mpf(value)
        arr = np.asarray(value.tolist() if hasattr(value, "tolist") else value, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = self.ctx.mpf(v) if isinstance(v, float) else self.number(v)
        return out

    def to_output(self, value, shape):
        return value

    def exp(self, x):
        return self.ctx.exp(x)

    def log(self, x):
        return self.lib.f_log(x)

    def total(self, xs):
        return self.ctx.fsum(xs)

    def is_neg_inf(self, x):
        return x == self.ctx.ninf

    def max(self, xs):
        return max(xs)

    def scalar(self, expr, env):
        return evaluate(expr, self.lib, env)

    def apply(self, lam, a):
        (x,) = lam.variables
        body = lam.expr
        if isinstance(a, np.ndarray):
            out = np.empty(a.shape, dtype=object)
            for idx, v in np.ndenumerate(a):
                out[idx] = evaluate(body, self.lib, {}, {x: v})
            return out
        return evaluate(body, self.lib, {}, {x: a})

    def _bad(self, e, allow_infinity):
        if self.ctx.isnan(e):
            return True
        return (not allow_infinity) and self.ctx.isinf(e)
