"""Readouts and losses: task heads on encoder features, and regression heads on recurrent states.

**Encoder features**: token classification, masked mean pooling, next-token prediction. For final encoder rows H_enc (T×D, rows are positions):

    s_t = h_enc,t W_oᵀ + b_o                  logits, W_o is C×D (token classes or vocabulary K)
    s_t = h_enc,t E_vocabᵀ                     tied embeddings: the lookup table reused as W_o
    h̄ = Σ_t m_t h_enc,t / Σ_t m_t             masked mean pooling, Σ_t m_t > 0
    h̄_b = Σ_t m_bt h_b,t / Σ_t m_bt           a batch of B sequences (m is B×T): each over its own count
    y_t = k_{t+1}                              next-token targets (shifted one position ahead)
    ℒ = Σ_t v_t [logsumexp(s_t) − s_{t,y_t}] / Σ_t v_t      masked mean over valid targets (nats)

The loss rows are those of :func:`symseq.blocks.losses.cross_entropy`: written
and differentiated as logsumexp(s_t) − s_{t,y_t}, evaluated by the numeric
backends as log Σ_j e^{s_tj − s_{t,y_t}} (never as the log of a softmax, nor
as the difference of two large numbers). Rows whose target is invalid
are removed *before* their target is looked up, so an invalid target index
is never read.

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Task heads,
information boundaries, and evidence": "Choose a readout for the task",
"Padding changes visibility and output selection", "Shift the target one
position ahead" (Table 33), "Teacher forcing is not the generation loop".

**Recurrent states**: regression heads and squared-error losses over positions and examples. A head reads a hidden state where the task needs an output (Week 06 handout,
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

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import sympy as sp

from .. import ops
from ..arrays import integer
from ..errors import ConventionError, MaskError, ShapeError
from ._args import matrices
from .linear import linear
from .losses import CrossEntropy, cross_entropy
from .masks import Mask, batch_validity, validity


def token_classifier(L, H_enc, W_o, b_o=None, *, orientation: str, name: str = "s", note: str = ""):
    """Append the logits ``name := H_enc W_oᵀ + b_o`` (``out_in``) or ``H_enc W_o + b_o`` (``in_out``).

    One shared affine head for every row: T×D features → T×C class logits.

    Args:
        H_enc: T×D encoder features.
        W_o: C×D (``out_in``, as torch's nn.Linear) or D×C (``in_out``).
        b_o: optional 1×C bias row.

    Raises:
        ConventionError: unknown orientation. ShapeError: a scalar where a matrix is needed (names the argument), or widths that do not fit.
    """
    matrices(name, H_enc=H_enc, W_o=W_o, b_o=b_o)
    return linear(L, name, H_enc, W_o, b_o, orientation=orientation,
                  note=note or "class logits per position (unrestricted scores, not probabilities)")


def next_token_logits(L, H_enc, W_o, b_o=None, *, orientation: str, name: str = "s"):
    """Vocabulary logits per position: :func:`token_classifier` with C = K classes (W_o is K×D ``out_in``)."""
    return token_classifier(L, H_enc, W_o, b_o, orientation=orientation, name=name,
                            note="next-token logits over the vocabulary, one row per position")


def tied_logits(L, H_enc, E_vocab, *, name: str = "s"):
    """Append ``name := H_enc E_vocabᵀ``: tied embeddings, the K×D lookup table reused as the output map.

    Raises:
        ShapeError: when H_enc or E_vocab is a scalar, or their feature widths differ.
    """
    matrices("tied_logits", H_enc=H_enc, E_vocab=E_vocab)
    if H_enc.shape[1] != E_vocab.shape[1]:
        raise ShapeError(f"tied logits: H_enc is {ops._fmt_shape(H_enc.shape)} but E_vocab is "
                         f"{ops._fmt_shape(E_vocab.shape)}; tying needs the model width D on both")
    return L.define(name, H_enc @ E_vocab.T, note="logits s = H E_vocabᵀ (tied to the embedding table)")


def masked_mean_pool(L, H, m, *, name: str = "h_bar"):
    """Append ``name := Σ_t m_t h_t / Σ_t m_t``: the mean of the valid rows of H, one sequence or a batch.

    One sequence: H is T×D and m has T entries; the result is 1×D. A batch: H is a list of B inputs, each T×D,
    and m is B×T; the result is B×D, row b the mean of sequence b's valid rows, divided by its own count::

        h̄_b = Σ_t m_bt h_b,t / Σ_t m_bt          (b = 0..B−1; Σ_t m_bt > 0 for every b)

    Padded rows (m_t = 0) get weight zero; the denominator counts the valid rows only. The row is
    ``W [H_0; …; H_{B−1}]`` with W a fixed B×BT matrix holding m_bt/Σ_t m_bt in row b (``(m / Σm) H`` for one
    sequence), so its adjoint sends 1/Σ_t m_bt of row b's incoming gradient to each valid row of H_b and nothing to
    the padded ones.

    Args:
        H: T×D features (rows are positions), or a list of B such inputs with the same T.
        m: T validity entries (1 real, 0 padding), or a B×T validity mask for a batch; a boolean (or 0/1) array,
            or a :class:`~symseq.ops.Mask` (``Mask.exclude(key_padding_mask)`` for torch's B×T
            ``key_padding_mask``, True = padding).

    Raises:
        ShapeError: when H (or an input of a batch) is a scalar, m does not have one entry per row of H (one row per batch item), or the inputs of a batch
            have different shapes.
        MaskError: an entry that is no validity value, or no valid row (for a batch: names the batch item whose
            mask is empty); the mean would divide by zero.

    Source: Week 06 handout (004), "Choose a readout for the task" and "Padding changes visibility and output
    selection"; torch's ``key_padding_mask`` convention (``nn.MultiheadAttention``).
    """
    matrices("masked_mean_pool", H=H)
    if isinstance(H, (list, tuple)):
        return _batch_mean_pool(L, list(H), m, name)
    valid = validity(m, H.shape[0], what="pooling mask")
    n = int(valid.sum())
    weights = sp.ImmutableMatrix(1, len(valid), lambda _, t: sp.Rational(int(valid[t]), n))
    return L.define(name, ops.Const(weights, label="m/Σm") @ H, note=f"mean of the {n} valid rows")


def _batch_mean_pool(L, Hs: list, m, name: str):
    if not Hs:
        raise ShapeError("batched pooling needs at least one input (a list of B T×D matrices)")
    shapes = [X.shape for X in Hs]
    if any(len(s) != 2 for s in shapes) or len(set(shapes)) > 1:
        raise ShapeError("batched pooling needs B inputs of the same shape T×D; got "
                         + ", ".join(ops._fmt_shape(s) for s in shapes))
    B, (T, _) = len(Hs), shapes[0]
    valid = batch_validity(m, B, T, what="pooling mask")
    counts = [int(c) for c in valid.sum(axis=1)]
    weights = sp.ImmutableMatrix(B, B * T, lambda b, j: sp.Rational(int(j // T == b and valid[b, j % T]), counts[b]))
    stacked = Hs[0] if B == 1 else ops.Concat(Hs, axis=0)
    return L.define(name, ops.Const(weights, label="m_b/Σ_t m_bt") @ stacked,
                    note="row b: mean of the valid rows of sequence b (" + ", ".join(map(str, counts)) + " rows)")


def next_token_targets(ids: Sequence[int], continuation: int | None = None) -> tuple[list, list[bool]]:
    """Targets y_t = k_{t+1} for input IDs k_0..k_{T−1}, and which rows have one.

    Rows 0..T−2 are labelled by the next input token. The last row is
    labelled only when the record supplies a ``continuation`` (which must not
    itself be an input). Returns (targets, valid) with ``None`` as the target
    of a row without one.

    Raises:
        ShapeError: for an empty sequence or IDs that are not integers.

    Source: Week 06 handout (004), Table 33.
    """
    ids = [integer(k, "an input ID") for k in ids]
    if not ids:
        raise ShapeError("next-token targets need at least one input token")
    targets: list = ids[1:] + [None if continuation is None else integer(continuation, "a continuation ID")]
    return targets, [t is not None for t in targets]


def masked_cross_entropy(L, Z, targets, valid=None, *, name: str = "loss", tag: str = "") -> CrossEntropy:
    """Mean cross-entropy (nats) over the valid targets, ℒ = Σ v_t ℓ_t / Σ v_t with ℓ_t = lse(s_t) − s_{t,y_t}.

    Args:
        Z: T×C logits, or a list of T_b×C logits (a batch: numerator and
            denominator are summed over every example and position, so each
            valid target has equal weight whatever its sequence length).
        targets: one class ID per row (``None`` or any placeholder where
            invalid); a list of such lists for a batch.
        valid: target validity v_t per row (default: rows whose target is not None): 1/0, True/False or a
            :class:`~symseq.ops.Mask` (``Mask.exclude(padding)``); for a batch, one per example (or one B×T Mask).

    Returns:
        The :class:`~symseq.blocks.losses.CrossEntropy` handles (loss is a scalar row).

    Raises:
        ShapeError: Z (or a logit matrix of a batch) a scalar; targets or validity not matching the rows; a valid target
            outside 0..C−1 (reported by the cross-entropy rows).
        MaskError: when no target is valid (the mean is undefined).
    """
    matrices("masked_cross_entropy", Z=Z)
    batch = isinstance(Z, (list, tuple))
    Zs = list(Z) if batch else [Z]
    T_list = [list(targets)] if not batch else [list(t) for t in targets]
    if len(T_list) != len(Zs):
        raise ShapeError(f"masked cross-entropy: {len(T_list)} target sequences for {len(Zs)} logit matrices")
    if valid is None:
        V_list = [[t is not None for t in ts] for ts in T_list]
    else:  # each validity as given (a list, an array or a Mask): validity() reads it
        V_list = [valid] if not batch else list(valid.allowed) if isinstance(valid, Mask) else list(valid)
        if len(V_list) != len(Zs):
            raise ShapeError(f"masked cross-entropy: {len(V_list)} validity sequences for {len(Zs)} logit matrices")
    rows, chosen, positions = [], [], []
    for b, (Zb, ts, vs) in enumerate(zip(Zs, T_list, V_list)):
        where = f" (example {b})" if batch else ""
        if len(ts) != Zb.shape[0]:
            raise ShapeError(f"masked cross-entropy{where}: {len(ts)} targets for {Zb.shape[0]} rows of logits; "
                             f"give one target (or None) per row")
        vb = validity(vs, Zb.shape[0], what=f"target validity{where}", allow_empty=True)
        pos = [t for t in range(len(ts)) if vb[t]]
        missing = [t for t in pos if ts[t] is None]
        if missing:
            raise ShapeError(f"masked cross-entropy{where}: rows {missing} are marked valid but have no target")
        positions = pos
        if pos:
            rows.append(Zb if len(pos) == Zb.shape[0] else ops.Slice(Zb, pos, slice(None)))
            chosen.extend(integer(ts[t], "a target") for t in pos)
    if not chosen:
        raise MaskError("masked cross-entropy: no target is valid (Σ v_t = 0), so the mean loss is undefined; "
                        "mark at least one scored position as valid")
    if not batch:
        return cross_entropy(L, Zs[0], chosen, positions=positions, name=name, tag=tag)
    scored = rows[0] if len(rows) == 1 else ops.Concat(rows, axis=0)
    Zv = L.define(f"Z_valid{tag}", scored, note="logit rows with a valid target, all examples stacked")
    return cross_entropy(L, Zv, chosen, name=name, tag=tag)


def greedy_generate(next_logits: Callable[[list[int]], Sequence], prefix: Sequence[int], *, steps: int,
                    eos: int | None = None, dps: int = 50) -> list[int]:
    """Greedy generation: append argmax of the last row's logits, ``steps`` times (or until ``eos``).

    The rule is declared: the selected ID is the largest logit, ties going to
    the lowest ID (as ``torch.argmax``). Logits are compared with mpmath at
    ``dps`` digits from exact values, never through float32.

    Args:
        next_logits: a function of the current ID prefix returning the K
            logits of its last row (exact SymPy numbers, ints, mpf, or a 1×K
            matrix; floats from a numeric backend are taken exactly).
        prefix: the supplied IDs (at least one).
        steps: the number of tokens to generate (an externally chosen length
            when the vocabulary has no end-of-sequence token).
        eos: an end-of-sequence ID that stops generation once selected.

    Returns:
        The prefix followed by the generated IDs.

    Raises:
        ShapeError: an empty prefix, a negative ``steps``, or logits whose
            number changes between steps.
        ConventionError: logits that are not numbers.

    Source: Week 06 handout (004), "Teacher forcing is not the generation loop".
    """
    import mpmath

    ids = [integer(k, "a prefix ID") for k in prefix]
    if not ids:
        raise ShapeError("generation needs a non-empty prefix")
    steps = integer(steps, "steps", minimum=0)
    ctx = mpmath.MPContext()
    ctx.dps = int(dps)
    K = None
    for _ in range(int(steps)):
        raw = next_logits(list(ids))
        vals = [_mp(ctx, v) for v in (list(raw) if not isinstance(raw, sp.MatrixBase) else list(raw))]
        if K is None:
            K = len(vals)
        if len(vals) != K or K == 0:
            raise ShapeError(f"next_logits returned {len(vals)} logits after returning {K}; the vocabulary is fixed")
        best = max(range(K), key=lambda k: (vals[k], -k))
        ids.append(best)
        if eos is not None and best == eos:
            break
    return ids


def _mp(ctx, v):
    if isinstance(v, sp.Basic):
        if not v.is_number or v.has(sp.nan, sp.zoo):
            raise ConventionError(f"logits must be numbers; got {v}")
        if v is sp.S.NegativeInfinity:
            return ctx.ninf
        return ctx.mpf(sp.Float(sp.N(v, ctx.dps + 10), ctx.dps + 10)._mpf_)
    if isinstance(v, float):
        return ctx.mpf(v)
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return ctx.mpf(int(v))
    if hasattr(v, "_mpf_"):  # an mpmath number
        return ctx.mpf(v)
    raise ConventionError(f"logits must be numbers; got {v!r} of type {type(v).__name__}")


# ---------------------------------------------------------------------------
# regression heads on recurrent states (Week 06, 004, first half)
# ---------------------------------------------------------------------------

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
    out = [integer(p, "positions: a time step", expected=f"an integer in 0..{T - 1}") for p in positions]
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
        ShapeError: a scalar where matrix states need a matrix (names it: a state, W_o or b_o), W_o that does
            not take H inputs or b_o that is not 1×C, or a position is not an integer time step
            in 0..T−1 (1.5 is not h_1).
        ConventionError: an unknown position rule.
    """
    hs = list(getattr(states, "h", states))
    T = len(hs)
    if T == 0:
        raise ShapeError("a head needs at least one hidden state: T must be at least 1")
    if not all(isinstance(h, sp.Basic) for h in hs):  # matrix states: every state and the head are matrices
        matrices("regression_head", states=hs, W_o=W_o, b_o=b_o)
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
