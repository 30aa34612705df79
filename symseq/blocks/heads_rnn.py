"""Regression heads on recurrent states and squared-error losses over positions and examples.

A head reads a hidden state where the task needs an output (Week 06 handout,
004, "One scalar recurrent model" and "If every position has a target")::

    ŷ_t = h_t W_oᵀ + b_o        W_o: C×H, b_o: 1×C, h_t: B×H, ŷ_t: B×C   (scalar: ŷ_t = w_o h_t + b_o)

and the loss is half the squared error, summed over output coordinates and
examples, then summed or averaged over the scored positions and over the
batch::

    ℓ_t = ½ Σ_{b,c} (ŷ_{t,bc} − y_{t,bc})²
    ℒ = s Σ_{t scored} ℓ_t,    s = 1, 1/T (mean over positions), 1/B (mean over examples), or 1/(TB)

The derivative the backward pass starts from is ∂ℒ/∂ŷ_t = s (ŷ_t − y_t): the
error e_t, scaled by 1/T and 1/B for means and by nothing else (the recurrent
signal is not divided again at every transition). Values are unitless
(squared-error units of the targets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .. import ops
from ..errors import ConventionError, ShapeError

REDUCTIONS = ("sum", "mean")


class HalfSquaredNorm(ops.Node):
    """½ Σ_{ij} D_ij² of a matrix D, a scalar (½‖D‖² in the Frobenius norm).

    Adjoint: Ḡ_D = Ḡ D, so the loss ½‖ŷ − y‖² hands ŷ the error ŷ − y itself.
    """

    prec = ops.ATOM

    def __init__(self, a):
        if a.shape == ():
            raise ShapeError("½‖D‖² needs a matrix; for a scalar write ½ d² directly")
        self.children = (a,)
        self.shape = ()

    def forward(self, k, vals):
        v = vals[0]
        return k.div(k.sum(k.mul(v, v), None), k.const(sp.Integer(2)))

    def vjp(self, G, out):
        return (ops.mul(G, self.children[0]),)

    def render(self, fmt, parts):
        if getattr(fmt, "uni", True):
            return f"½‖{parts[0]}‖²"
        return r"\tfrac{1}{2}\left\lVert %s\right\rVert^{2}" % parts[0]


@dataclass
class Readout:
    """A head's predictions: ``yhat[k]`` is the handle of ŷ at position ``positions[k]``."""

    positions: list
    yhat: list
    states: list
    final_only: bool = False
    W_o: Any = None
    b_o: Any = None


@dataclass
class SquaredError:
    """The loss rows: the loss handle, its name, the targets and the scale s (1, 1/T, 1/B or 1/(TB))."""

    loss: Any
    name: str
    targets: list
    scale: sp.Expr
    readout: Readout
    terms: list = field(default_factory=list)


def _positions(positions, T: int) -> list:
    if isinstance(positions, str):
        if positions == "final":
            return [T - 1]
        if positions == "all":
            return list(range(T))
        raise ConventionError(f"unknown positions {positions!r}; use 'final', 'all' or a list of time steps")
    out = [int(p) for p in positions]
    bad = [p for p in out if not 0 <= p < T]
    if bad or not out:
        raise ShapeError(f"positions {out} must be a nonempty list of time steps in 0..{T - 1}")
    return out


def regression_head(L, states, W_o, b_o=None, *, positions="final", name: str | None = None) -> Readout:
    """Append ŷ_t := h_t W_oᵀ + b_o (scalar: w_o h_t + b_o) at the scored positions.

    Args:
        states: the hidden states h_0, …, h_{T−1} (a :class:`~symseq.blocks.cells.Recurrence`
            or a list of handles), B×H matrices or scalars.
        W_o: C×H head weight (a scalar w_o for scalar states); b_o: optional 1×C bias (or scalar).
        positions: ``"final"`` (ŷ read from h_{T−1} only, named ``ŷ``), ``"all"``
            (ŷ_t at every position) or a list of time steps.
        name: base name of the prediction rows (default ``ŷ``; per-position rows are ``ŷ_t``).

    Raises:
        ShapeError: when W_o does not take H inputs or b_o is not 1×C.
    """
    hs = list(getattr(states, "h", states))
    T = len(hs)
    if T == 0:
        raise ShapeError("a head needs at least one hidden state: T must be at least 1")
    pos = _positions(positions, T)
    base = name or "ŷ"
    out = Readout(pos, [], [hs[t] for t in pos], final_only=positions == "final", W_o=W_o, b_o=b_o)
    for t in pos:
        h = hs[t]
        row = base if positions == "final" else f"{base}_{t}"
        if isinstance(h, sp.Basic):
            if not isinstance(W_o, sp.Basic):
                raise ShapeError(f"head: the state is a scalar but W_o is {W_o.shape[0]}×{W_o.shape[1]}; "
                                 f"use a scalar w_o")
            expr = W_o * h + (b_o if b_o is not None else 0)
            out.yhat.append(L.define(row, expr, note="regression prediction"))
            continue
        if isinstance(W_o, sp.Basic) or W_o.shape[1] != h.shape[1]:
            got = "a scalar" if isinstance(W_o, sp.Basic) else f"{W_o.shape[0]}×{W_o.shape[1]}"
            raise ShapeError(f"head: h_{t} is {h.shape[0]}×{h.shape[1]} but W_o is {got}; W_o must be C×{h.shape[1]} "
                             f"(output×hidden, as torch's nn.Linear.weight)")
        y = h @ W_o.T
        if b_o is not None:
            if b_o.shape != (1, W_o.shape[0]):
                raise ShapeError(f"head: b_o is {b_o.shape[0]}×{b_o.shape[1]} but must be 1×{W_o.shape[0]}")
            y = y + b_o
        out.yhat.append(L.define(row, y, note="regression prediction"))
    return out


def _reduction(value: str, what: str) -> str:
    if value not in REDUCTIONS:
        raise ConventionError(f"unknown reduction over {what} {value!r}; use 'sum' or 'mean'")
    return value


def squared_error(L, readout: Readout, targets=None, *, positions: str = "sum", batch: str = "sum",
                  name: str = "ℒ", target_name: str = "y") -> SquaredError:
    """Append ℒ := s Σ_t ½‖ŷ_t − y_t‖² over the head's scored positions (see the module docstring).

    Args:
        readout: the head's predictions (:func:`regression_head`).
        targets: one handle per scored position (same shape as ŷ_t); None
            creates symbolic inputs ``y`` (a single position) or ``y_t``.
        positions: ``"sum"`` or ``"mean"`` over the scored positions (1/T when every position is scored).
        batch: ``"sum"`` or ``"mean"`` over the B examples (rows of ŷ_t).

    Raises:
        ConventionError: an unknown reduction. ShapeError: targets that do not match the predictions.
    """
    _reduction(positions, "positions")
    _reduction(batch, "the batch")
    preds = readout.yhat
    if targets is None:
        single = readout.final_only
        targets = []
        for t, p in zip(readout.positions, preds):
            tname = target_name if single else f"{target_name}_{t}"
            targets.append(L.input(tname) if isinstance(p, sp.Basic) else L.input(tname, shape=p.shape))
    targets = list(targets)
    if len(targets) != len(preds):
        raise ShapeError(f"squared error: {len(targets)} targets for {len(preds)} scored positions")
    scalar = isinstance(preds[0], sp.Basic)
    B = 1 if scalar else preds[0].shape[0]
    n = len(preds)
    scale = (sp.Rational(1, n) if positions == "mean" else sp.S.One) * (sp.Rational(1, B) if batch == "mean" else 1)
    terms = []
    for p, y in zip(preds, targets):
        if scalar:
            if not isinstance(y, sp.Basic):
                raise ShapeError("squared error: the prediction is a scalar but its target is a matrix")
            terms.append(sp.Rational(1, 2) * (p - y) ** 2)
        else:
            if getattr(y, "shape", None) != p.shape:
                raise ShapeError(f"squared error: the prediction is {p.shape[0]}×{p.shape[1]} but its target is "
                                 f"{'a scalar' if isinstance(y, sp.Basic) else '×'.join(map(str, y.shape))}")
            terms.append(HalfSquaredNorm(p - y))
    if scalar:
        total = scale * sp.Add(*terms)
    else:
        total = ops.add(*terms)
        if scale != 1:
            total = ops.mul(ops.Const(scale), total)
    what = {("sum", "sum"): "sum", ("mean", "sum"): "mean over positions", ("sum", "mean"): "mean over examples",
            ("mean", "mean"): "mean over positions and examples"}[(positions, batch)]
    loss = L.define(name, total, note=f"half squared error, {what}")
    return SquaredError(loss, name, targets, scale, readout, terms)
