"""Layer normalisation as ledger rows (torch's convention).

For each row h ∈ ℝ^d of X (one position):

    μ = (1/d) Σ_j h_j                    mean over the features of the row
    v = (1/d) Σ_j (h_j − μ)²             population (biased) variance
    X̂ = (h − μ)/√(v + ε)                ε inside the square root
    LN(h) = γ ⊙ X̂ + β                    γ, β are 1×d rows (optional)

Sources: Week 8 handout (000), §2 (LN(h)_j = γ_j (h_j − μ)/√(v+ε) + b_j);
Ba, Kiros & Hinton (2016); torch.nn.LayerNorm (biased variance, ε inside the
root). With ε = 0, unit gain and zero shift the output has zero sum and
squared norm d (000, §2). A constant row has v = 0: with ε = 0 it cannot be
normalised, and evaluation raises an error naming the row and position, on
every backend. The numeric backends take the mean shifted by the row's first
entry, so a row whose entries are equal in their numbers (0.1, 0.1, 0.1 in
float64) centres to exact zeros and is refused, never normalised to ±1; the
error of a float backend says that the row is constant *after rounding* to
float64 (1, 1 + 10⁻²⁰, 1 is not constant) and that the exact or mpmath backend
decides. ε is a finite number ≥ 0 (or a symbol); a negative ε is refused,
since √(v + ε) would be imaginary on a nearly constant row.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .. import ops
from ..errors import ConventionError, ShapeError
from ..numbers import exact
from ._args import matrices
from ._naming import tagged

SQRT = ops.SQRT


def _epsilon(eps, name: str):
    """ε as an exact number ≥ 0 or a SymPy symbol.

    Raises:
        ConventionError: a negative, infinite or non-real ε, or an inexact one (a float).
    """
    eps = eps if isinstance(eps, sp.Basic) else exact(eps, what="ε")
    if eps.is_number and not (eps.is_extended_real and eps.is_finite and eps >= 0):
        raise ConventionError(f"{name}: ε must be a finite number ≥ 0 (it is added to a variance under a square "
                              f"root); got ε = {eps}. torch's default is 1e-5; ε = 0 is the handouts' exact form")
    return eps


def _zero_spread_hint(name: str, spread: str, exactly: str, rounded: str):
    """The hint of a normalised row whose ``spread`` (variance, mean square) is 0 with ε = 0, for each kernel.

    The exact kernel knows that the row ``exactly`` is so (constant); a rounding kernel only that it is
    ``rounded`` (constant) after rounding to its precision, so it says which backend decides.
    """

    def hint(kernel) -> str:
        precision = getattr(kernel, "precision", None)
        fix = "use ε > 0 (torch's default is 1e-5)"
        if precision is None:
            return f"a row of the input to {name} is {exactly} ({spread} 0) and ε = 0, so it cannot be normalised; {fix}"
        judge = "the exact backend decides" if kernel.name == "mpmath" else "the exact or mpmath backend decides"
        return (f"a row of the input to {name} is {rounded} after rounding to {precision} ({spread} 0 there) and "
                f"ε = 0, so it cannot be normalised here; {judge} whether the row itself is {exactly}; {fix}")

    return hint


@dataclass
class Norm:
    """Handles of a normalisation's rows."""

    mu: ops.Ref | None
    var: ops.Ref
    normalized: ops.Ref
    out: ops.Ref


def layer_norm(L, X, gamma=None, beta=None, *, eps=0, name: str = "LN", tag: str | None = None) -> Norm:
    """Append μ, v, X̂ and LN(X) rows for a T×d input X (rows are positions).

    Args:
        gamma, beta: optional 1×d gain and shift rows (handles of parameters).
        eps: ε, an exact number (``"1e-5"``, ``0``) or a SymPy symbol.
        name: name of the output row (``"LN_1"``); the others are derived.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), or γ or β is not 1×d.
        ConventionError: a negative, infinite or non-real ε.
        EvaluationError (on evaluation): a constant row with ε = 0 (on a float backend: a row whose
            entries are equal in float64; the message says so).
    """
    matrices("layer_norm", X=X, gamma=gamma, beta=beta)
    d = X.shape[1]
    for p, what in ((gamma, "γ"), (beta, "β")):
        if p is not None and p.shape != (1, d):
            raise ShapeError(f"LayerNorm {name}: {what} is {p.shape[0]}×{p.shape[1]} but must be 1×{d}")
    eps = _epsilon(eps, f"LayerNorm {name}")
    base = name.split("^")[0]
    mu = L.define(tagged(f"mu_{{{base}}}", tag), ops.Sum(X, 1, mean=True), note="mean over the features of each row")
    centred = X - mu
    var = L.define(tagged(f"v_{{{base}}}", tag), ops.var(X, 1, correction=0, mean_of=mu),
                   note="population variance over the features of each row")
    hint = _zero_spread_hint(name, "variance", "constant", "constant") if eps == 0 else ""
    denom = ops.Map(SQRT, var + ops.as_node(eps)) if eps != 0 else ops.Map(SQRT, var)
    affine = gamma is not None or beta is not None
    xhat = L.define(tagged(f"N_{{{base}}}" if affine else name, tag), centred / denom, on_nonfinite=hint,
                    note="normalised rows: zero mean, unit variance")
    if not affine:
        return Norm(mu, var, xhat, xhat)
    out = xhat
    if gamma is not None:
        out = gamma * out
    if beta is not None:
        out = out + beta
    return Norm(mu, var, xhat, L.define(tagged(name, tag), out))


def rms_norm(L, X, gamma=None, *, eps=0, name: str = "RMSNorm", tag: str | None = None) -> Norm:
    """RMSNorm: X̂ = X/√(mean_j(x_j²) + ε), then γ ⊙ X̂; no mean subtraction (Zhang & Sennrich 2019).

    X is T×d (rows are positions), γ an optional 1×d gain; returns the rows' handles as :class:`Norm`.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), or γ is not 1×d.
        ConventionError: a negative, infinite or non-real ε.
        EvaluationError (on evaluation): a row of zeros with ε = 0.
    """
    matrices("rms_norm", X=X, gamma=gamma)
    d = X.shape[1]
    if gamma is not None and gamma.shape != (1, d):
        raise ShapeError(f"RMSNorm {name}: γ is {gamma.shape[0]}×{gamma.shape[1]} but must be 1×{d}")
    eps = _epsilon(eps, f"RMSNorm {name}")
    base = name.split("^")[0]
    ms = L.define(tagged(f"ms_{{{base}}}", tag), ops.Sum(X * X, 1, mean=True), note="mean square over features")
    hint = _zero_spread_hint(name, "mean square", "all zeros", "all zeros (or too small to square)") if eps == 0 else ""
    denom = ops.Map(SQRT, ms + ops.as_node(eps)) if eps != 0 else ops.Map(SQRT, ms)
    xhat = L.define(tagged(f"N_{{{base}}}" if gamma is not None else name, tag), X / denom, on_nonfinite=hint)
    y = L.define(tagged(name, tag), gamma * xhat) if gamma is not None else xhat
    return Norm(None, ms, xhat, y)
