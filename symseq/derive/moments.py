"""Exact moments of polynomials in independent random variables.

Used for the √d_k argument: if query and key coordinates are independent,
centred and of variance σ², then Var(q·k) = d_k σ⁴, and dividing the score by
√d_k returns it to σ⁴ (Week 8 handout, 000, §1; Handout #11, 001, §3.1).

The expectation of a monomial ∏ x_i^{a_i} over independent x_i is
∏ E[x_i^{a_i}]; :func:`expectation` applies this to an expanded polynomial
with the moments you state (by default E[x] = 0, E[x²] = σ²), so the result is
exact for any distribution with those moments, not for one sampled law.
"""

from __future__ import annotations

import sympy as sp

from ..errors import ConventionError
from ..numbers import exact


def expectation(expr, variables, moments: dict | None = None, *, variance=1):
    """E[expr] for ``expr`` a polynomial in independent ``variables``.

    Args:
        variables: the independent random variables (SymPy symbols).
        moments: ``{k: E[x^k]}`` shared by every variable; default
            ``{0: 1, 1: 0, 2: variance}``. A needed moment that is not given
            raises ConventionError.
    """
    moments = {0: sp.S.One, 1: sp.S.Zero, 2: exact(variance, what="variance")} if moments is None else dict(moments)
    variables = list(variables)
    poly = sp.Poly(sp.expand(expr), *variables)
    total = sp.S.Zero
    for powers, coeff in poly.terms():
        term = coeff
        for k in powers:
            if k not in moments:
                raise ConventionError(f"the expectation needs E[x^{k}], which was not given")
            term *= moments[k]
        total += term
    return sp.simplify(total)


def variance(expr, variables, **kw):
    """Var[expr] = E[expr²] − E[expr]² for independent ``variables`` (see :func:`expectation`)."""
    mean = expectation(expr, variables, **kw)
    return sp.simplify(expectation(sp.expand(expr**2), variables, **kw) - mean**2)


_VARIANCES: dict = {}  # (d_k, sigma2, scaled) with their types → Var(q·k): several sections state the same one


def dot_product_variance(d_k: int, sigma2=1, scaled: bool = False):
    """Var(q·k) (or of q·k/√d_k) for d_k independent centred coordinates of variance ``sigma2``."""
    key = (type(d_k), d_k, type(sigma2), sigma2, bool(scaled))
    try:
        hit = _VARIANCES.get(key)
    except TypeError:  # an unhashable argument: computed (and refused) as before, not remembered
        hit, key = None, None
    if hit is not None:
        return hit  # a SymPy expression, immutable, computed from these same arguments
    q = sp.symbols(f"q_0:{d_k}", real=True)
    k = sp.symbols(f"k_0:{d_k}", real=True)
    s = sum(qi * ki for qi, ki in zip(q, k))
    if scaled:
        s = s / sp.sqrt(d_k)
    out = variance(s, list(q) + list(k), variance=sigma2)
    if key is not None:
        _VARIANCES[key] = out
    return out
