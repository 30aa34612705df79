"""Task heads on encoder features: token classification, masked mean pooling, next-token prediction.

For final encoder rows H_enc (T×D, rows are positions):

    s_t = h_enc,t W_oᵀ + b_o                  logits, W_o is C×D (token classes or vocabulary K)
    s_t = h_enc,t E_vocabᵀ                     tied embeddings: the lookup table reused as W_o
    h̄ = Σ_t m_t h_enc,t / Σ_t m_t             masked mean pooling, Σ_t m_t > 0
    y_t = k_{t+1}                              next-token targets (shifted one position ahead)
    ℒ = Σ_t v_t [logsumexp(s_t) − s_{t,y_t}] / Σ_t v_t      masked mean over valid targets (nats)

The loss is evaluated through logsumexp (row maximum subtracted in every
numeric backend), never as log of a softmax. Rows whose target is invalid
are removed *before* their target is looked up, so an invalid target index
is never read.

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Task heads,
information boundaries, and evidence": "Choose a readout for the task",
"Padding changes visibility and output selection", "Shift the target one
position ahead" (Table 33), "Teacher forcing is not the generation loop".
"""

from __future__ import annotations

import numbers
from typing import Callable, Sequence

import sympy as sp

from .. import ops
from ..errors import ConventionError, MaskError, ShapeError
from .linear import linear
from .losses import CrossEntropy, cross_entropy
from .masks import validity


def token_classifier(L, H_enc, W_o, b_o=None, *, orientation: str, name: str = "s", note: str = ""):
    """Append the logits ``name := H_enc W_oᵀ + b_o`` (``out_in``) or ``H_enc W_o + b_o`` (``in_out``).

    One shared affine head for every row: T×D features → T×C class logits.

    Args:
        H_enc: T×D encoder features.
        W_o: C×D (``out_in``, as torch's nn.Linear) or D×C (``in_out``).
        b_o: optional 1×C bias row.

    Raises:
        ConventionError: unknown orientation. ShapeError: widths that do not fit.
    """
    return linear(L, name, H_enc, W_o, b_o, orientation=orientation,
                  note=note or "class logits per position (unrestricted scores, not probabilities)")


def next_token_logits(L, H_enc, W_o, b_o=None, *, orientation: str, name: str = "s"):
    """Vocabulary logits per position: :func:`token_classifier` with C = K classes (W_o is K×D ``out_in``)."""
    return token_classifier(L, H_enc, W_o, b_o, orientation=orientation, name=name,
                            note="next-token logits over the vocabulary, one row per position")


def tied_logits(L, H_enc, E_vocab, *, name: str = "s"):
    """Append ``name := H_enc E_vocabᵀ``: tied embeddings, the K×D lookup table reused as the output map.

    Raises:
        ShapeError: when the feature width of H_enc and E_vocab differ.
    """
    if H_enc.shape[1] != E_vocab.shape[1]:
        raise ShapeError(f"tied logits: H_enc is {ops._fmt_shape(H_enc.shape)} but E_vocab is "
                         f"{ops._fmt_shape(E_vocab.shape)}; tying needs the model width D on both")
    return L.define(name, H_enc @ E_vocab.T, note="logits s = H E_vocabᵀ (tied to the embedding table)")


def masked_mean_pool(L, H, m, *, name: str = "h_bar"):
    """Append ``name := Σ_t m_t h_t / Σ_t m_t``: the mean of the valid rows of H (1×D).

    Padded rows (m_t = 0) get weight zero; the denominator counts the valid
    rows only. The row is ``(m / Σm) H`` with m a fixed 1×T row, so its
    adjoint sends 1/Σm of the incoming gradient to each valid row and
    nothing to the padded ones.

    Args:
        H: T×D features (rows are positions).
        m: T validity entries (1 real, 0 padding).

    Raises:
        ShapeError: when m does not have one entry per row of H.
        MaskError: when no row is valid (the mean would divide by zero).

    Source: Week 06 handout (004), "Choose a readout for the task".
    """
    if H.shape == ():
        raise ShapeError("pooling needs a T×D matrix (rows are positions)")
    valid = validity(m, H.shape[0], what="pooling mask")
    n = int(valid.sum())
    weights = sp.ImmutableMatrix(1, len(valid), lambda _, t: sp.Rational(int(valid[t]), n))
    return L.define(name, ops.Const(weights, label="m/Σm") @ H, note=f"mean of the {n} valid rows")


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
    ids = [_int(k, "input ID") for k in ids]
    if not ids:
        raise ShapeError("next-token targets need at least one input token")
    targets: list = ids[1:] + [None if continuation is None else _int(continuation, "continuation ID")]
    return targets, [t is not None for t in targets]


def masked_cross_entropy(L, Z, targets, valid=None, *, name: str = "loss", tag: str = "") -> CrossEntropy:
    """Mean cross-entropy (nats) over the valid targets, ℒ = Σ v_t ℓ_t / Σ v_t with ℓ_t = lse(s_t) − s_{t,y_t}.

    Args:
        Z: T×C logits, or a list of T_b×C logits (a batch: numerator and
            denominator are summed over every example and position, so each
            valid target has equal weight whatever its sequence length).
        targets: one class ID per row (``None`` or any placeholder where
            invalid); a list of such lists for a batch.
        valid: target validity v_t per row (default: rows whose target is not None).

    Returns:
        The :class:`~symseq.blocks.losses.CrossEntropy` handles (loss is a scalar row).

    Raises:
        ShapeError: targets or validity not matching the rows; a valid target
            outside 0..C−1 (reported by the cross-entropy rows).
        MaskError: when no target is valid (the mean is undefined).
    """
    batch = isinstance(Z, (list, tuple))
    Zs = list(Z) if batch else [Z]
    T_list = [list(targets)] if not batch else [list(t) for t in targets]
    if len(T_list) != len(Zs):
        raise ShapeError(f"masked cross-entropy: {len(T_list)} target sequences for {len(Zs)} logit matrices")
    if valid is None:
        V_list = [[t is not None for t in ts] for ts in T_list]
    else:
        V_list = [list(valid)] if not batch else [list(v) for v in valid]
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
            chosen.extend(_int(ts[t], "target") for t in pos)
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

    ids = [_int(k, "prefix ID") for k in prefix]
    if not ids:
        raise ShapeError("generation needs a non-empty prefix")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ShapeError(f"steps must be a non-negative integer; got {steps!r}")
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


def _int(k, what) -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ShapeError(f"a {what} must be an integer; got {k!r}")
    return int(k)
