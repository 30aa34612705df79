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
normalised, and evaluation raises an error naming the row and position.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .. import ops
from ..errors import ShapeError
from ..numbers import exact
from ._naming import tagged

_X = sp.Dummy("x", real=True)
SQRT = sp.Lambda(_X, sp.sqrt(_X))


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
        ShapeError: when γ or β is not 1×d.
        EvaluationError (on evaluation): a constant row with ε = 0.
    """
    if X.shape == ():
        raise ShapeError("LayerNorm needs a T×d matrix (rows are positions)")
    d = X.shape[1]
    for p, what in ((gamma, "γ"), (beta, "β")):
        if p is not None and p.shape != (1, d):
            raise ShapeError(f"LayerNorm {name}: {what} is {p.shape[0]}×{p.shape[1]} but must be 1×{d}")
    eps = eps if isinstance(eps, sp.Basic) else exact(eps, what="ε")
    base = name.split("^")[0]
    mu = L.define(tagged(f"mu_{{{base}}}", tag), ops.Sum(X, 1, mean=True), note="mean over the features of each row")
    centred = X - mu
    var = L.define(tagged(f"v_{{{base}}}", tag), ops.Sum(centred * centred, 1, mean=True),
                   note="population variance over the features of each row")
    hint = (f"a row of the input to {name} is constant (variance 0) and ε = 0, so it cannot be normalised; "
            f"use ε > 0 (torch's default is 1e-5)") if eps == 0 else ""
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
    """RMSNorm: X̂ = X/√(mean_j(x_j²) + ε), then γ ⊙ X̂; no mean subtraction (Zhang & Sennrich 2019)."""
    d = X.shape[1]
    if gamma is not None and gamma.shape != (1, d):
        raise ShapeError(f"RMSNorm {name}: γ is {gamma.shape[0]}×{gamma.shape[1]} but must be 1×{d}")
    eps = eps if isinstance(eps, sp.Basic) else exact(eps, what="ε")
    base = name.split("^")[0]
    ms = L.define(tagged(f"ms_{{{base}}}", tag), ops.Sum(X * X, 1, mean=True), note="mean square over features")
    hint = (f"a row of the input to {name} is all zeros and ε = 0; use ε > 0") if eps == 0 else ""
    denom = ops.Map(SQRT, ms + ops.as_node(eps)) if eps != 0 else ops.Map(SQRT, ms)
    xhat = L.define(tagged(f"N_{{{base}}}" if gamma is not None else name, tag), X / denom, on_nonfinite=hint)
    y = L.define(tagged(name, tag), gamma * xhat) if gamma is not None else xhat
    return Norm(None, ms, xhat, y)
