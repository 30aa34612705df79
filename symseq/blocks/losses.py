"""Readout probabilities and softmax cross-entropy (nats).

For logits Z (T×v, rows are positions) and target classes c_t:

    P = softmax_rows(Z)                          p(x_{t+1} = a | x_≤t) = P_ta
    ℓ_t = logsumexp(Z_t) − Z_{t,c_t} = −log P_{t,c_t}     (nats)
    loss = mean_t ℓ_t  (or the sum) over the scored positions

The rows are written, shown and differentiated in that textbook form
(∂ℓ_t/∂Z_t = softmax(Z_t) − onehot(c_t)). The numeric backends (mpmath, NumPy,
torch) evaluate ℓ_t as log Σ_j e^{Z_tj − Z_{t,c_t}}, shifted by the maximum of
that shifted row, so it is never the difference of two large numbers: logits
(10¹⁶, 10¹⁶) give log 2 (as ``torch.nn.functional.cross_entropy``), where
logsumexp(z) − z_target gives 0 in float64. The exact backend keeps the
textbook closed form. See :class:`symseq.ops.CrossEntropyRows`.
Source: Week 8 handout (000), §3–§4; Handout #11 (001), §7.4.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ops
from ..arrays import integer
from ..errors import ConventionError, ShapeError
from ._args import matrices


def probabilities(L, Z, *, name: str = "P"):
    """Append ``name := softmax_rows(Z)``: next-token distributions, one row per position (Z is T×v).

    Raises:
        ShapeError: when Z is a scalar (a softmax over one class is 1).
    """
    matrices("probabilities", Z=Z)
    return L.define(name, ops.SoftmaxRows(Z), note="probabilities over the vocabulary (rows sum to 1)")


@dataclass
class CrossEntropy:
    logits: ops.Ref
    lse: ops.Ref
    target_logit: ops.Ref
    per_position: ops.Ref
    loss: object


def cross_entropy(L, Z, targets, *, positions=None, reduction: str = "mean", name: str = "loss",
                  tag: str = "") -> CrossEntropy:
    """Append the cross-entropy rows of logits Z against ``targets`` (one class index per scored position).

    Rows: ``lse`` := logsumexp of each scored row (N×1), ``z_target`` := Z_{t,c_t} (N×1), ``ell`` := lse −
    z_target (N×1, nats; evaluated stably, see the module docstring) and ``name`` := their mean or sum.

    Args:
        Z: T×v logits.
        targets: class indices, one per scored position.
        positions: which rows of Z are scored (default: all, in order).
        reduction: ``"mean"`` or ``"sum"`` over the scored positions.

    Raises:
        ShapeError: when Z is a scalar, targets and scored positions differ in number, there is no scored position, a
            target is not an integer or is outside the vocabulary (0..v−1), or a position is not an integer
            or is outside the rows (0..T−1; −1 is not the last row).
        ConventionError: for an unknown reduction.
    """
    if reduction not in ("mean", "sum"):
        raise ConventionError(f"unknown reduction {reduction!r}; use 'mean' or 'sum'")
    matrices("cross_entropy", Z=Z)
    T, v = Z.shape
    positions = list(range(T)) if positions is None else [
        integer(p, "cross-entropy: a scored position", expected=f"an integer row index in 0..{T - 1}")
        for p in positions]
    outside = [p for p in positions if not 0 <= p < T]
    if outside:
        raise ShapeError(f"cross-entropy: scored positions {outside} are outside 0..{T - 1} (Z has {T} rows; a "
                         f"negative position is not read from the end)")
    targets = [integer(c, "cross-entropy: a target", expected=f"an integer class index in 0..{v - 1}")
               for c in targets]
    beyond = [c for c in targets if not 0 <= c < v]
    if beyond:
        raise ShapeError(f"cross-entropy: targets {beyond} are outside 0..{v - 1} ({v} classes)")
    if not positions:
        raise ShapeError("cross-entropy: no scored position; give at least one (position, target) pair (the mean "
                         "over no position is undefined)")
    if len(targets) != len(positions):
        raise ShapeError(f"cross-entropy: {len(targets)} targets for {len(positions)} scored positions")
    Zs = Z if positions == list(range(T)) else L.define(f"Z_scored{tag}", Z[positions, :])
    lse = L.define(f"lse{tag}", ops.LogSumExpRows(Zs), note="log Σ_a e^{Z_ta} per scored position")
    zc = L.define(f"z_target{tag}", ops.TakeAlong(Zs, targets, label="c_t"), note="target logit per position")
    ell = L.define(f"ell{tag}", ops.CrossEntropyRows(lse, zc, Zs, targets), note="−log p(target) per position, in nats")
    total = ops.Sum(ell, None, mean=(reduction == "mean"))
    loss = L.define(name, total, note=f"{reduction} cross-entropy in nats")
    return CrossEntropy(Z, lse, zc, ell, loss)


