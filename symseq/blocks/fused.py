"""Fused query/key/value projection W_QKV, its split, and multi-head self-attention with any head widths.

One product X W_QKV gives three adjacent feature groups, each cut into h
adjacent head slices (rows are positions, X is T×D)::

    [Q K V] = X W_QKV + b_QKV                 T×(h d_k + h d_k + h d_v)
    Q = columns [0, h d_k),  K = [h d_k, 2h d_k),  V = [2h d_k, 2h d_k + h d_v)
    Q⁽ⁱ⁾ = Q[:, (i−1) d_k : i d_k]     K⁽ⁱ⁾, V⁽ⁱ⁾ likewise (d_v for V)
    O⁽ⁱ⁾ = softmax_rows(Q⁽ⁱ⁾ K⁽ⁱ⁾ᵀ/√d_k + M) V⁽ⁱ⁾
    MHA(X) = [O⁽¹⁾ ⋯ O⁽ʰ⁾] W_O + b_O           T×D

where:
    W_QKV is D×(2h d_k + h d_v) with ``orientation="in_out"`` (Handout #11,
        001, §4.2: W_QKV = [W_Q W_K W_V] ∈ ℝ^{D×3D}), or (2h d_k + h d_v)×D with
        ``"out_in"``: torch's ``nn.MultiheadAttention.in_proj_weight`` (packing
        order q, k, v) and nanoGPT's ``c_attn.weight``;
    b_QKV is an optional 1×(2h d_k + h d_v) row (torch's ``in_proj_bias``);
    W_O is h d_v×D (``in_out``) or D×h d_v (``out_in``, torch's ``out_proj.weight``),
        b_O an optional 1×D row;
    M is 0 where a source is allowed and exact −∞ where excluded.

The head slices are the ones nanoGPT's ``view(B, T, nh, hs).transpose(1, 2)``
makes: head i takes the i-th block of hs adjacent columns of each group. Our
d_k is torch's head_dim; unlike torch, D need not be a multiple of h, and d_k,
d_v are free (torch refuses embed_dim = 5 with two heads).

A batch is a list of T×D inputs sharing the parameters
(:func:`batched_self_attention`); a mask is then B×T×T (a boolean keep-array
or a :class:`~symseq.ops.Mask` in any convention), and a query with no
allowed source raises :class:`~symseq.errors.MaskError` naming the batch item
and the query position (or gives a zero row with ``empty_rows="zero"``, as
torch's ``scaled_dot_product_attention``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


from .. import ops
from ..errors import ConventionError, ShapeError
from ._args import matrices
from ._naming import tagged
from .attention import Head, head_tag, scaled_dot_product
from .linear import check_orientation, linear


@dataclass
class QKV:
    """Handles of the fused product and its split: the three groups and one (Q, K, V) triple per head."""

    fused: ops.Ref
    Q: ops.Ref
    K: ops.Ref
    V: ops.Ref
    heads: list = field(default_factory=list)  # [(Q_i, K_i, V_i)]
    d_k: int = 0
    d_v: int = 0


@dataclass
class FusedAttention:
    """Handles of a fused multi-head self-attention: the split, the heads, the concatenation and the output."""

    qkv: QKV
    heads: list = field(default_factory=list)  # list of Head
    concat: ops.Ref | None = None
    out: ops.Ref | None = None


def head_widths(W_QKV, n_heads: int, d_k: int | None, d_v: int | None, orientation: str) -> tuple[int, int]:
    """(d_k, d_v) for a fused weight: as given, or h d_k = h d_v = (width of W_QKV's output side)/3.

    Raises:
        ShapeError: when W_QKV is a scalar, or its output side is not 2h d_k + h d_v (names both and the fix).
        ConventionError: when n_heads is not a positive integer.
    """
    check_orientation(orientation)
    matrices("head_widths", W_QKV=W_QKV)
    if int(n_heads) != n_heads or n_heads < 1:
        raise ConventionError(f"n_heads must be a positive integer; got {n_heads!r}")
    width = W_QKV.shape[1] if orientation == "in_out" else W_QKV.shape[0]
    if d_k is None and d_v is None:
        if width % (3 * n_heads):
            raise ShapeError(
                f"W_QKV has {width} output features, which is not 3·h·d for h={n_heads} heads; "
                f"pass d_k and d_v (the output side must be 2·h·d_k + h·d_v)"
            )
        return width // (3 * n_heads), width // (3 * n_heads)
    if d_k is None or d_v is None:
        raise ShapeError("give both d_k and d_v, or neither (then d_k = d_v = width/(3h))")
    if width != n_heads * (2 * d_k + d_v):
        raise ShapeError(
            f"W_QKV has {width} output features but h={n_heads} heads with d_k={d_k}, d_v={d_v} need "
            f"2·h·d_k + h·d_v = {n_heads * (2 * d_k + d_v)}; check the head widths or the orientation"
        )
    return int(d_k), int(d_v)


def split_qkv(L, X, W_QKV, b_QKV=None, *, n_heads: int, orientation: str, d_k: int | None = None,
              d_v: int | None = None, tag: str | None = None) -> QKV:
    """Append QKV := X W_QKV + b_QKV, its three adjacent groups Q, K, V, and each head's slices.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), or W_QKV does not fit X or the head widths (see :func:`head_widths`).
    """
    matrices("split_qkv", X=X, W_QKV=W_QKV, b_QKV=b_QKV)
    d_k, d_v = head_widths(W_QKV, n_heads, d_k, d_v, orientation)
    hk, hv = n_heads * d_k, n_heads * d_v
    fused = linear(L, tagged("QKV", tag), X, W_QKV, b_QKV, orientation=orientation,
                   note="three adjacent feature groups [Q K V]")
    Q = L.define(tagged("Q", tag), fused[:, 0:hk], note="first group")
    K = L.define(tagged("K", tag), fused[:, hk:2 * hk], note="second group")
    V = L.define(tagged("V", tag), fused[:, 2 * hk:2 * hk + hv], note="third group")
    out = QKV(fused, Q, K, V, d_k=d_k, d_v=d_v)
    if n_heads == 1:
        out.heads.append((Q, K, V))
        return out
    for i in range(n_heads):
        t = head_tag(tag, i + 1)
        out.heads.append((L.define(tagged("Q", t), Q[:, i * d_k:(i + 1) * d_k]),
                          L.define(tagged("K", t), K[:, i * d_k:(i + 1) * d_k]),
                          L.define(tagged("V", t), V[:, i * d_v:(i + 1) * d_v])))
    return out


def _mask_for(mask, T: int, batch, empty_rows: str):
    where = "attention" if batch is None else f"attention, batch item {batch}"
    return ops.allowed_matrix(mask, (T, T), empty_rows, what=where)


def fused_self_attention(L, X, W_QKV, W_O, *, n_heads: int, orientation: str, b_QKV=None, b_O=None,
                         d_k: int | None = None, d_v: int | None = None, mask=None, empty_rows: str = "error",
                         tag: str | None = None, batch: int | None = None, name: str = "MHA") -> FusedAttention:
    """Multi-head self-attention from one fused projection (see the module docstring).

    Args:
        X: T×D input (rows are positions).
        W_QKV, b_QKV: fused weight and optional bias; W_O, b_O: output map and optional bias.
        n_heads: h. d_k, d_v: head widths (default: W_QKV's output side / 3h each).
        mask: None, ``"causal"``, a T×T boolean matrix of *allowed* sources (True = may be read), or a
            :class:`~symseq.ops.Mask` (``Mask.keep``, ``Mask.exclude``, ``Mask.additive``).
        empty_rows: ``"error"`` or ``"zero"`` for a query with no allowed source.
        batch: the batch index of this input (named in mask errors and row tags).

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), weights that do not fit, or a mask of the wrong shape.
        MaskError: a mask entry that is no value of its convention, an unknown mask name, or a query position
            (and batch item) with no allowed source.
    """
    matrices("fused_self_attention", X=X, W_QKV=W_QKV, W_O=W_O, b_QKV=b_QKV, b_O=b_O)
    T = X.shape[0]
    allowed = _mask_for(mask, T, batch, empty_rows)
    qkv = split_qkv(L, X, W_QKV, b_QKV, n_heads=n_heads, orientation=orientation, d_k=d_k, d_v=d_v, tag=tag)
    res = FusedAttention(qkv)
    for i, (Q, K, V) in enumerate(qkv.heads):
        t = tag if n_heads == 1 else head_tag(tag, i + 1)
        head = scaled_dot_product(L, Q, K, V, mask=allowed, tag=t, empty_rows=empty_rows)
        head.Q, head.K, head.V = Q, K, V
        res.heads.append(head)
    parts = [h.O for h in res.heads]
    res.concat = L.define(tagged("O_cat", tag), ops.Concat(parts, axis=1), note="heads side by side") \
        if len(parts) > 1 else parts[0]
    res.out = linear(L, tagged(name, tag), res.concat, W_O, b_O, orientation=orientation,
                     note="heads mixed by W_O")
    return res


def batched_self_attention(L, Xs, W_QKV, W_O, *, masks=None, **kw) -> list:
    """:func:`fused_self_attention` for each item of a batch (a list of T×D inputs) with shared parameters.

    ``masks`` is None, ``"causal"``, a B×T×T boolean keep-array of allowed
    sources (True = may attend), or a B×T×T :class:`~symseq.ops.Mask` in any
    convention (``Mask.exclude`` for torch's boolean ``attn_mask`` of shape
    (B, T, T), ``Mask.additive`` for its float one); item b's rows are tagged
    ``[b]`` (Q^{[0]}, S^{[0],1}). Every item's mask is checked before any row is
    appended.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), or a mask that is not B×T×T (names both shapes).
        MaskError: an entry that is no value of the convention (names the batch item, row and column), or an
            empty mask row (names the batch item and query position).
    """
    Xs = list(Xs)
    B = len(Xs)
    if not B:
        raise ShapeError("a batch needs at least one input")
    matrices("batched_self_attention", Xs=Xs, W_QKV=W_QKV, W_O=W_O)
    T = Xs[0].shape[0]
    if isinstance(masks, str) or masks is None:
        per_item = [masks] * B
    else:
        arr = ops.mask_allowed(masks, "the batch mask", ndim=3)
        if arr.shape != (B, T, T):
            raise ShapeError(
                f"the batch mask has shape {'×'.join(map(str, arr.shape))} but the batch needs B×T×T = {B}×{T}×{T} "
                f"(one T×T matrix of allowed sources per item)"
            )
        per_item = list(arr)
    if any(X.shape[0] != T for X in Xs):
        raise ShapeError("every item of a batch needs the same number of positions T; got "
                         + ", ".join(str(X.shape[0]) for X in Xs))
    for b, m in enumerate(per_item):  # every mask is checked before any row is appended
        _mask_for(m, T, b, kw.get("empty_rows", "error"))
    return [fused_self_attention(L, X, W_QKV, W_O, mask=m, tag=f"[{b}]", batch=b, **kw)
            for b, (X, m) in enumerate(zip(Xs, per_item))]


__all__ = ["QKV", "FusedAttention", "Head", "head_widths", "split_qkv", "fused_self_attention",
           "batched_self_attention"]
