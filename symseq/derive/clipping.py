"""The gradient-descent update and global-norm clipping, on gradient values.

Week 06 handout (004), "Compute the complete gradient before an update" and
"Clipping limits a large gradient; it cannot recover a lost one"; Pascanu,
Mikolov & Bengio (2013), Algorithm 1::

    θ_new = θ − η g                                   (every parameter, the same original gradient)
    ‖g‖₂ = √(Σ over every entry of every parameter's gradient of g²)
    g_clip = g                    if ‖g‖₂ ≤ τ         (the zero gradient takes this branch)
           = τ g / ‖g‖₂           if ‖g‖₂ > τ

``torch.nn.utils.clip_grad_norm_`` instead multiplies by min(1, τ/(‖g‖₂ + 10⁻⁶)):
pass ``eps="1e-6"`` to reproduce it (above the threshold its result has norm
τ‖g‖/(‖g‖ + 10⁻⁶), a hair below τ; at or below it the gradient is unchanged
either way).

Gradients are given as a dict from parameter name to value: exact SymPy
numbers or matrices (results stay exact), or float arrays (NumPy float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import ConventionError, ShapeError
from ..numbers import exact


@dataclass
class Clipped:
    """The result of clipping: the clipped gradients, the global norm, the factor applied, and the branch taken."""

    grads: dict
    norm: object
    factor: object
    clipped: bool


def _is_exact(v) -> bool:
    return isinstance(v, (sp.Basic, sp.MatrixBase))


def _entries(v):
    if isinstance(v, sp.MatrixBase):
        return list(v)
    if isinstance(v, sp.Basic):
        return [v]
    return list(np.asarray(v, dtype=np.float64).reshape(-1))


def _threshold(tau, exact_mode: bool, what: str = "τ"):
    t = exact(tau, what=what) if exact_mode or isinstance(tau, (str, int)) else tau
    if exact_mode:
        if not (t.is_real and t.is_positive):
            raise ConventionError(f"the clipping threshold {what} must be positive; got {tau!r}")
        return t
    t = float(t)
    if not t > 0:
        raise ConventionError(f"the clipping threshold {what} must be positive; got {tau!r}")
    return t


def global_norm(grads: dict):
    """‖g‖₂ over every entry of every gradient (the parameters flattened and joined): exact or float.

    Raises:
        ShapeError: for an empty dict.
    """
    if not grads:
        raise ShapeError("global norm of no gradients: give at least one parameter's gradient")
    vals = list(grads.values())
    if all(_is_exact(v) for v in vals):
        return sp.sqrt(sp.Add(*[e**2 for v in vals for e in _entries(v)]))
    return float(np.sqrt(sum(float(np.sum(np.square(np.asarray(v, dtype=np.float64)))) for v in vals)))


def clip_by_global_norm(grads: dict, tau, *, eps=0) -> Clipped:
    """Clip the joined gradient to length at most τ, keeping its direction (module docstring).

    Args:
        grads: parameter name → gradient (exact SymPy or float arrays).
        tau: the positive threshold τ (a decimal string such as ``"1.0"`` stays exact).
        eps: 0 for the handout's rule; ``"1e-6"`` for torch's clip_grad_norm_.

    Returns:
        :class:`Clipped`. The zero gradient is returned unchanged (first branch, no division by zero).

    Raises:
        ConventionError: τ ≤ 0 or a negative ε.
    """
    exact_mode = all(_is_exact(v) for v in grads.values())
    t = _threshold(tau, exact_mode)
    e = exact(eps, what="ε") if exact_mode or isinstance(eps, (str, int)) else eps
    if (e < 0) if not exact_mode else bool(e.is_negative):
        raise ConventionError(f"ε must be nonnegative; got {eps!r}")
    n = global_norm(grads)
    if exact_mode:
        over = bool(sp.simplify(n - t).is_positive) if e == 0 else bool(sp.simplify(t / (n + e) - 1).is_negative)
        factor = (t / (n + e)) if over else sp.S.One
        out = {k: (v * factor if over else v) for k, v in grads.items()}
        return Clipped(out, n, factor, over)
    e = float(e)
    factor = min(1.0, t / (n + e)) if (n + e) > 0 else 1.0
    over = factor < 1.0
    out = {k: np.asarray(v, dtype=np.float64) * factor for k, v in grads.items()}
    return Clipped(out, n, factor, over)


def gradient_step(params: dict, grads: dict, eta) -> dict:
    """θ_new = θ − η g for every parameter, all from the same original gradient.

    Raises:
        ConventionError: η ≤ 0. ShapeError: a parameter without a gradient or with a gradient of another shape.
    """
    exact_mode = all(_is_exact(v) for v in list(params.values()) + list(grads.values()))
    step = exact(eta, what="η") if exact_mode or isinstance(eta, (str, int)) else float(eta)
    if (step <= 0) if not isinstance(step, sp.Basic) else not step.is_positive:
        raise ConventionError(f"the learning rate η must be positive; got {eta!r}")
    out = {}
    for k, v in params.items():
        if k not in grads:
            raise ShapeError(f"parameter {k!r} has no gradient; every parameter needs one to be updated")
        g = grads[k]
        shape_v = getattr(v, "shape", ())
        shape_g = getattr(g, "shape", ())
        if tuple(shape_v) != tuple(shape_g):
            raise ShapeError(f"parameter {k!r} is {shape_v} but its gradient is {shape_g}")
        if exact_mode:
            out[k] = v - step * g
        else:
            out[k] = np.asarray(v, dtype=np.float64) - float(step) * np.asarray(g, dtype=np.float64)
    return out
