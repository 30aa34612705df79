"""Gated feed-forward maps (GLU family): features times gates, then back to the model width.

For X (T×D, rows are positions) and hidden width m::

    a_gate = X W_gate + b_gate          T×m     (the gate pre-activations)
    a_up   = X W_up + b_up              T×m     (the features)
    m      = φ(a_gate) ⊙ a_up           T×m
    FF(X)  = m W_down + b_down          T×D

with φ one of

    ``"glu"``      σ(x)                       (Dauphin et al. 2017)
    ``"reglu"``    ReLU(x), ReLU'(0) = 0
    ``"geglu"``    GELU(x) = x Φ(x)           (exact form; ``"geglu_tanh"`` for the tanh form)
    ``"swiglu"``   SiLU(x) = x σ(x)           (Shazeer 2020, "GLU Variants Improve Transformer", eq. 5)

Weights follow ``orientation`` (see :mod:`symseq.blocks.linear`): with
``"in_out"`` W_gate and W_up are D×m and W_down is m×D; with ``"out_in"``
they are stored as torch's ``nn.Linear.weight`` (m×D and D×m). Biases are
optional 1×width rows. The same parameters act at every position.

Source: Handout #11 (``001_d42a515eb3cd140c.txt``), §9.3: two D → D_ff maps
produce features and gates, multiplied elementwise before a D_ff → D map.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .. import ops
from ..errors import ConventionError, ShapeError
from ..functions import gelu, gelu_tanh, relu, sigmoid
from ._args import matrices
from ._naming import tagged
from .linear import check_orientation, linear

_x = sp.Symbol("x", real=True)

#: SiLU(x) = x σ(x), the "swish" of SwiGLU, as a one-variable Lambda (its derivative comes from sympy.diff).
SILU = sp.Lambda(_x, _x * sigmoid(_x))

GATES = {"glu": sigmoid, "reglu": relu, "geglu": gelu, "geglu_tanh": gelu_tanh, "swiglu": SILU}


@dataclass
class GatedFeedForward:
    """Handles of a gated feed-forward map's rows."""

    gate_pre: ops.Ref
    up: ops.Ref
    hidden: ops.Ref
    out: ops.Ref


def gated_feed_forward(L, X, W_gate, W_up, W_down, *, orientation: str, b_gate=None, b_up=None, b_down=None,
                       activation: str = "swiglu", tag: str | None = None, name: str = "FF") -> GatedFeedForward:
    """Append a_gate, a_up, m = φ(a_gate) ⊙ a_up and FF = m W_down + b_down (see the module docstring).

    Raises:
        ConventionError: for an unknown activation (lists the known ones) or orientation.
        ShapeError: a scalar where a matrix is needed (names the argument), the gate and feature widths differ, or W_down does not map back to D.
    """
    matrices("gated_feed_forward", X=X, W_gate=W_gate, W_up=W_up, W_down=W_down, b_gate=b_gate, b_up=b_up,
             b_down=b_down)
    if activation not in GATES:
        raise ConventionError(f"unknown gate activation {activation!r}; use one of {', '.join(GATES)}")
    check_orientation(orientation)
    out_side = (lambda W: W.shape[1]) if orientation == "in_out" else (lambda W: W.shape[0])  # noqa: E731
    if out_side(W_gate) != out_side(W_up):
        raise ShapeError(f"{name}: W_gate gives {out_side(W_gate)} gates but W_up gives {out_side(W_up)} features; "
                         f"W_gate and W_up need the same hidden width")
    if out_side(W_down) != X.shape[1]:
        raise ShapeError(f"{name}: W_down maps to width {out_side(W_down)} but the input has width {X.shape[1]}; "
                         f"a position-wise map must return to D")
    gate = linear(L, tagged(f"a_{{{name},gate}}", tag), X, W_gate, b_gate, orientation=orientation,
                  note="gate pre-activations")
    up = linear(L, tagged(f"a_{{{name},up}}", tag), X, W_up, b_up, orientation=orientation, note="features")
    hidden = L.define(tagged(f"m_{{{name}}}", tag), ops.Map(GATES[activation], gate) * up,
                      note=f"{activation}: φ(gate) ⊙ features")
    out = linear(L, tagged(name, tag), hidden, W_down, b_down, orientation=orientation, note="back to the model width")
    return GatedFeedForward(gate, up, hidden, out)


__all__ = ["SILU", "GATES", "GatedFeedForward", "gated_feed_forward"]
