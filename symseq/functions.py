"""The activations and normalisers of the handouts as SymPy functions.

Each is a :class:`sympy.Function` with an exact ``eval`` for numbers, a
closed-form ``fdiff``, LaTeX (``_latex``) and single-line Unicode
(``_unicode``) printing. Numeric backends evaluate them by name (see
``symseq.backends``), each with the same conventions:

* ``relu``: ReLU'(0) = 0 by default, as torch's autograd; the other
  convention (½, SymPy's Heaviside default) is an explicit option.
* ``softmax`` and ``logsumexp`` take a whole row of arguments; an argument
  equal to ``-oo`` is a masked entry and is left out of the normalisation.
  Numeric backends subtract the row maximum before exponentiating.
* ``gelu`` is the exact form x·Φ(x); ``gelu_tanh`` the tanh approximation
  (Hendrycks & Gimpel 2016, eq. for GELU; torch's ``approximate="tanh"``).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import ArgumentIndexError

from .errors import ConventionError, EvaluationError

__all__ = [
    "sigmoid",
    "relu",
    "relu_at_zero",
    "require_explicit_relu",
    "partial",
    "jacobian",
    "softmax",
    "logsumexp",
    "gelu",
    "gelu_tanh",
    "Heaviside",
]

Heaviside = sp.Heaviside


def _tex(printer, arg) -> str:
    return printer._print(arg)


class sigmoid(sp.Function):
    r"""Logistic sigmoid σ(x) = 1/(1 + e^{−x}).

    Derivative: σ'(x) = σ(x)(1 − σ(x)) ≤ 1/4. Exact at 0 (½) and ±∞.
    Source: Week 06 handout (004), Table 4.
    """

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Half
        if x is sp.S.Infinity:
            return sp.S.One
        if x is sp.S.NegativeInfinity:
            return sp.S.Zero
        return None

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise ArgumentIndexError(self, argindex)
        return self * (1 - self)

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return 1 / (1 + sp.exp(-x))

    def _eval_evalf(self, prec):
        return (1 / (1 + sp.exp(-self.args[0])))._eval_evalf(prec)

    def _eval_is_real(self):
        return self.args[0].is_real

    def _latex(self, printer, exp=None):
        base = r"\sigma\left(%s\right)" % _tex(printer, self.args[0])
        return base if exp is None else r"\sigma^{%s}\left(%s\right)" % (exp, _tex(printer, self.args[0]))

    def _unicode(self, printer):
        return "σ(%s)" % printer._print(self.args[0])


class relu(sp.Function):
    r"""Rectified linear unit ReLU(x) = max(0, x).

    ``relu(x)`` has derivative Heaviside(x, 0): ReLU'(0) = 0, as torch's
    autograd. ``relu(x, S.Half)`` (or :func:`relu_at_zero`) records the other
    convention, ReLU'(0) = ½. The second argument only affects the derivative.

    Source: Week 06 handout (004), Table 4; Week 8 handout (000), §3.
    """

    nargs = (1, 2)

    @classmethod
    def eval(cls, x, h0=None):
        if h0 is not None and h0.is_zero:
            return cls(x)
        if x.is_number and x.is_extended_real:
            if x.is_extended_positive:
                return x
            if x.is_extended_nonpositive:
                return sp.S.Zero
        return None

    @property
    def derivative_at_zero(self):
        return self.args[1] if len(self.args) > 1 else sp.S.Zero

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise ArgumentIndexError(self, argindex)
        return sp.Heaviside(self.args[0], self.derivative_at_zero)

    def _eval_rewrite_as_Max(self, x, *args, **kwargs):
        return sp.Max(0, x)

    def _eval_evalf(self, prec):
        return sp.Max(0, self.args[0])._eval_evalf(prec)

    def _eval_is_real(self):
        return self.args[0].is_real

    def _eval_is_nonnegative(self):
        if self.args[0].is_real:
            return True
        return None

    def _latex(self, printer, exp=None):
        s = r"\operatorname{ReLU}\left(%s\right)" % _tex(printer, self.args[0])
        return s if exp is None else r"%s^{%s}" % (s, exp)

    def _unicode(self, printer):
        return "ReLU(%s)" % printer._print(self.args[0])


def relu_at_zero(x, derivative_at_zero=0):
    """ReLU with an explicit derivative at 0: ``0`` (torch's autograd) or ``1/2`` (SymPy's Heaviside).

    Raises:
        ConventionError: for any other value.
    """
    d = sp.nsimplify(derivative_at_zero) if not isinstance(derivative_at_zero, sp.Basic) else derivative_at_zero
    if d not in (sp.S.Zero, sp.S.Half):
        raise ConventionError(
            f"ReLU'(0) must be 0 (torch's autograd) or 1/2 (SymPy's Heaviside); got {derivative_at_zero!r}"
        )
    return relu(x) if d == 0 else relu(x, sp.S.Half)


def partial(expr: sp.Expr, x: sp.Symbol) -> sp.Expr:
    """∂expr/∂x: the expression ``sympy.diff(expr, x)`` returns, built by SymPy's own rules without its queries.

    ``expr`` is a SymPy expression (a scalar) and ``x`` a Symbol. Sums, products, powers and applied functions
    with a closed-form ``fdiff`` (tanh, exp, log, sigmoid, softmax, ...) are differentiated by the rules SymPy
    uses for a first derivative (``Add``: the sum of the parts' derivatives; ``Mul``: the Leibniz sum; ``Pow``:
    b^e (e′ log b + b′ e / b); ``f(a, ...)``: Σ_i f_i′ a_i′), and the result is the same expression. What is left
    out is SymPy's question, at every node, whether the derivative just built is zero (``sympy.diff`` returns it
    either way): it runs the assumptions system over the whole subexpression (is 1 − tanh(z)² zero? is tanh(z)
    real? is Im(z) a multiple of π?), 5–25 ms for each new expression and seconds for the Jacobian of a LayerNorm.
    One difference: a chain-rule term whose inner derivative SymPy proves zero without its being the number 0 is
    kept (its value is 0). Anything else (a Derivative, an undefined function, Abs, Piecewise, Max, a matrix
    expression, a non-symbol ``x``) and any result holding an unevaluated derivative is left to ``sympy.diff``.

    Source: SymPy 1.14, ``Add._eval_derivative``, ``Mul._eval_derivative_n_times``, ``Pow._eval_derivative``,
    ``Function._eval_derivative`` and ``Derivative.__new__``.
    """
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.Derivative) or not isinstance(x, sp.Symbol):
        return sp.diff(expr, x)
    d = _partial(expr, x, {})
    if d is None or d.has(sp.Derivative):
        return sp.diff(expr, x)
    return d


_FUNCTION_RULES = (sp.Function._eval_derivative, sp.Basic._eval_derivative_n_times)


_ARGS_FREE_SYMBOLS: dict = {}  # type → whether its free symbols are the union of its args' (see below)


def free_symbols_of_args(t: type) -> bool:
    """Whether a SymPy type's free symbols are the union of its args' (``Basic.free_symbols``: sums, products,
    powers, functions), so that a question about them can be answered from the args; False for a type that defines
    them itself (a symbol, a Lambda, a derivative). Remembered per type."""
    hit = _ARGS_FREE_SYMBOLS.get(t)
    if hit is None:
        hit = _ARGS_FREE_SYMBOLS[t] = next(c for c in t.__mro__ if "free_symbols" in c.__dict__) is sp.Basic
    return hit


def _uses(e, x, memo: dict) -> bool:
    """``x in e.free_symbols``, remembered per subexpression in ``memo``: :func:`_partial` asks it at every node,
    and ``free_symbols`` walks the node's whole subtree each time. A node whose free symbols are the union of its
    args' (``Basic.free_symbols``: sums, products, powers, functions) answers from its args; any other (a symbol,
    a Lambda, a derivative) is asked itself."""
    hit = memo.get(e)
    if hit is None:
        hit = memo[e] = (any(_uses(a, x, memo) for a in e.args) if free_symbols_of_args(type(e))
                         else x in e.free_symbols)
    return hit


def _partial(e, x, memo):
    """∂e/∂x by :func:`partial`'s rules, or None where they do not apply. ``memo``: :func:`_uses` for this x."""
    if not _uses(e, x, memo):
        return sp.S.Zero
    if e == x:
        return sp.S.One
    t = type(e)
    if t is sp.Add:
        parts = [_partial(a, x, memo) for a in e.args]
        return None if None in parts else sp.Add(*parts)
    if t is sp.Mul:
        terms = []
        for i, a in enumerate(e.args):
            d = _partial(a, x, memo)
            if d is None:
                return None
            terms.append(sp.Mul(*e.args[:i], d, *e.args[i + 1:]))
        return sp.Add(*terms)
    if t is sp.Pow:
        db, de = _partial(e.base, x, memo), _partial(e.exp, x, memo)
        if db is None or de is None:
            return None
        return e * (de * sp.log(e.base) + db * e.exp / e.base)
    if (isinstance(e, sp.Function) and not isinstance(e, sp.core.function.AppliedUndef)
            and (t._eval_derivative, t._eval_derivative_n_times) == _FUNCTION_RULES):
        terms = []
        for i, a in enumerate(e.args, 1):
            da = _partial(a, x, memo)
            if da is None:
                return None
            if da == 0:
                continue
            try:
                df = e.fdiff(i)
            except ArgumentIndexError:
                return None
            terms.append(df * da)
        return sp.Add(*terms)
    return None


def jacobian(ys, xs) -> sp.Matrix:
    """The Jacobian J_ij = ∂y_i/∂x_j of the entries of ``ys`` (a matrix or list, read row by row, m entries)
    with respect to the symbols ``xs`` (n of them): an m×n matrix, each entry :func:`partial` (what
    ``sympy.Matrix(ys).jacobian(xs)`` gives, without its assumption queries)."""
    ys, xs = list(ys), list(xs)
    return sp.Matrix(len(ys), len(xs), [partial(y, x) for y in ys for x in xs])


def require_explicit_relu(expr: sp.Basic, what: str = "expression") -> None:
    """Refuse ``sympy.Max(x, 0)`` and ``sympy.Min(x, 0)`` in ``expr``: they are ReLUs with an unstated convention.

    SymPy differentiates Max(x, 0) to Heaviside(x) = ½ at x = 0 and torch lowers it to ``torch.maximum``
    (gradient ½ at the tie), while symseq's documented ReLU has ReLU'(0) = 0 (torch's ``relu``). Writing
    :class:`relu` (or :func:`relu_at_zero`) states the convention. A Max or Min without a zero argument
    (max(x, 1/4)) is kept: its tie is not a ReLU's.

    Raises:
        ConventionError: naming the term and the replacement (relu(x); −relu(−x) for Min(x, 0)).
    """
    for m in expr.atoms(sp.Max, sp.Min):
        rest = [a for a in m.args if not a.is_zero]
        if len(rest) == len(m.args):
            continue
        arg = rest[0] if len(rest) == 1 else type(m)(*rest)
        use = f"relu({arg})" if isinstance(m, sp.Max) else f"-relu({-arg})"
        raise ConventionError(
            f"{what} uses {m}, a ReLU whose derivative at 0 is a convention: SymPy differentiates it to "
            f"Heaviside = 1/2 at the kink (and torch.maximum splits the gradient there), while symseq's ReLU has "
            f"ReLU'(0) = 0 as torch's relu. Write symseq.{use} (ReLU'(0) = 0) or symseq.relu_at_zero(..., 1/2)"
        )


def _allowed(xs):
    return [x for x in xs if x is not sp.S.NegativeInfinity]


class softmax(sp.Function):
    r"""Entry k of the softmax of a row: softmax(k, x_0, …, x_{n−1}) = e^{x_k} / Σ_j e^{x_j}.

    Arguments equal to ``-oo`` are masked: their entry is 0 and they are left
    out of the sum (renormalisation over the allowed entries). With numeric
    arguments the exact closed form is returned, e.g. softmax(0, 0, √2/2) =
    1/(1 + e^{√2/2}).

    Derivative: ∂softmax_k/∂x_i = softmax_k (δ_ki − softmax_i), the row
    Jacobian diag(a) − a aᵀ.

    Raises:
        EvaluationError: when every argument is masked (no allowed entry).
    """

    @classmethod
    def eval(cls, k, *xs):
        if not xs:
            raise EvaluationError("softmax needs at least one entry in its row")
        if not k.is_Integer or not (0 <= int(k) < len(xs)):
            raise EvaluationError(f"softmax index {k} is outside the row of length {len(xs)}")
        if all(x.is_number for x in xs):
            allowed = _allowed(xs)
            if not allowed:
                raise EvaluationError(
                    f"softmax of a row whose {len(xs)} entries are all masked (-oo): there is no allowed entry"
                )
            xk = xs[int(k)]
            if xk is sp.S.NegativeInfinity:
                return sp.S.Zero
            return sp.exp(xk) / sp.Add(*[sp.exp(x) for x in allowed])
        return None

    def fdiff(self, argindex=1):
        if argindex == 1:
            raise ArgumentIndexError(self, argindex)
        k = self.args[0]
        xs = self.args[1:]
        i = argindex - 2
        return self * (sp.KroneckerDelta(k, i) - softmax(i, *xs))

    def _eval_rewrite_as_exp(self, k, *xs, **kwargs):
        return sp.exp(xs[int(k)]) / sp.Add(*[sp.exp(x) for x in xs])

    def _latex(self, printer, exp=None):
        row = ", ".join(_tex(printer, x) for x in self.args[1:])
        s = r"\operatorname{softmax}\left(%s\right)_{%s}" % (row, _tex(printer, self.args[0]))
        return s if exp is None else r"\left(%s\right)^{%s}" % (s, exp)

    def _unicode(self, printer):
        row = ", ".join(printer._print(x) for x in self.args[1:])
        return "softmax(%s)[%s]" % (row, printer._print(self.args[0]))


class logsumexp(sp.Function):
    r"""log Σ_j e^{x_j} over a row; ``-oo`` entries are masked and left out.

    Cross-entropy of logits z against target c is logsumexp(z) − z_c (nats).
    Derivative: ∂/∂x_i = softmax(i, x). Numeric backends compute
    m + log Σ e^{x_j − m} with m the row maximum.

    Raises:
        EvaluationError: when every argument is masked.
    """

    @classmethod
    def eval(cls, *xs):
        if not xs:
            raise EvaluationError("logsumexp needs at least one entry")
        if all(x.is_number for x in xs):
            allowed = _allowed(xs)
            if not allowed:
                raise EvaluationError("logsumexp of a row whose entries are all masked (-oo)")
            if len(allowed) == 1:
                return allowed[0]
            return sp.log(sp.Add(*[sp.exp(x) for x in allowed]))
        return None

    def fdiff(self, argindex=1):
        return softmax(argindex - 1, *self.args)

    def _eval_rewrite_as_exp(self, *xs, **kwargs):
        return sp.log(sp.Add(*[sp.exp(x) for x in xs]))

    def _latex(self, printer, exp=None):
        s = r"\operatorname{logsumexp}\left(%s\right)" % ", ".join(_tex(printer, x) for x in self.args)
        return s if exp is None else r"\left(%s\right)^{%s}" % (s, exp)

    def _unicode(self, printer):
        return "logsumexp(%s)" % ", ".join(printer._print(x) for x in self.args)


class gelu(sp.Function):
    r"""Exact GELU(x) = x Φ(x) = (x/2)(1 + erf(x/√2)) (Hendrycks & Gimpel 2016; torch's default)."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Zero
        return None

    def _closed(self, x):
        return x / 2 * (1 + sp.erf(x / sp.sqrt(2)))

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise ArgumentIndexError(self, argindex)
        t = sp.Dummy("t")
        return sp.diff(self._closed(t), t).subs(t, self.args[0])

    def _eval_rewrite_as_erf(self, x, **kwargs):
        return self._closed(x)

    def _eval_evalf(self, prec):
        return self._closed(self.args[0])._eval_evalf(prec)

    def _latex(self, printer, exp=None):
        return r"\operatorname{GELU}\left(%s\right)" % _tex(printer, self.args[0])

    def _unicode(self, printer):
        return "GELU(%s)" % printer._print(self.args[0])


class gelu_tanh(sp.Function):
    r"""Tanh-approximate GELU: (x/2)(1 + tanh(√(2/π)(x + 0.044715 x³))) (torch's ``approximate='tanh'``)."""

    nargs = 1
    C = sp.Rational(44715, 1000000)

    @classmethod
    def eval(cls, x):
        if x.is_zero:
            return sp.S.Zero
        return None

    @classmethod
    def closed_form(cls, x):
        return x / 2 * (1 + sp.tanh(sp.sqrt(2 / sp.pi) * (x + cls.C * x**3)))

    def fdiff(self, argindex=1):
        t = sp.Dummy("t")
        return sp.diff(self.closed_form(t), t).subs(t, self.args[0])

    def _eval_rewrite_as_tanh(self, x, **kwargs):
        return self.closed_form(x)

    def _eval_evalf(self, prec):
        return self.closed_form(self.args[0])._eval_evalf(prec)

    def _latex(self, printer, exp=None):
        return r"\operatorname{GELU}_{\tanh}\left(%s\right)" % _tex(printer, self.args[0])

    def _unicode(self, printer):
        return "GELU_tanh(%s)" % printer._print(self.args[0])
