"""Scaled dot-product attention, causal masks and multi-head attention as ledger rows.

For queries Q (T×d_k), keys K (S×d_k) and values V (S×d_v), rows are
positions (receiving positions for Q, consulted positions for K and V):

    S = Q Kᵀ / √d_k                      scores, T×S
    S_masked = S + M                     M_ts = 0 where allowed, −∞ where excluded
    A = softmax_rows(S_masked)           each row a distribution over allowed sources
    O = A V                              T×d_v

The mask holds exact −∞; the softmax renormalises over the allowed sources.
A mask is None, ``"causal"``, a T×S boolean keep-matrix (True = may attend)
or a :class:`~symseq.ops.Mask` naming its convention (``Mask.keep``,
``Mask.exclude`` as torch's boolean ``attn_mask`` of ``nn.MultiheadAttention``,
``Mask.additive`` as torch's float 0/−∞ ``attn_mask``); every block checks it
with :func:`symseq.ops.allowed_matrix` before appending any row. A query row
with no allowed source raises :class:`~symseq.errors.MaskError` naming the
position, unless ``empty_rows="zero"`` asks for a zero row (as torch's
``scaled_dot_product_attention`` gives).

Sources: Week 8 handout (000), §1 "One head" and §4; Vaswani et al. (2017),
eq. (1) and §3.2.2 for MHA(H) = [O⁽¹⁾ ⋯ O⁽ʰ⁾] W_O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from .. import ops
from ..errors import ConventionError, ShapeError
from ..numbers import exact
from ._args import matrices
from ._naming import tagged
from .linear import project


def mask_matrix(allowed) -> sp.ImmutableMatrix:
    """The additive mask M (T×S): 0 where allowed, exact −∞ where excluded.

    ``allowed`` is anything :func:`symseq.ops.allowed_matrix` accepts with a shape of its own (a keep-matrix or a
    :class:`~symseq.ops.Mask`).

    Raises:
        ShapeError, MaskError: as :func:`symseq.ops.allowed_matrix`.
    """
    allowed = ops.allowed_matrix(allowed, empty_rows="zero", what="additive mask M")
    m, n = allowed.shape
    return sp.ImmutableMatrix(m, n, lambda i, j: sp.S.Zero if allowed[i, j] else sp.S.NegativeInfinity)


@dataclass
class Head:
    """Handles of one attention head's rows (Q, K, V are None when given rather than projected)."""

    S: ops.Ref
    A: ops.Ref
    O: ops.Ref
    S_masked: ops.Ref | None = None
    Q: ops.Ref | None = None
    K: ops.Ref | None = None
    V: ops.Ref | None = None
    allowed: np.ndarray | None = None


def _divisor(scale, d_k: int, what: str):
    """The divisor of the scores: √d_k by default, else ``scale`` read exactly (a finite nonzero real, or a symbol).

    Raises:
        ConventionError: a float, or a number that is zero, infinite, NaN or not real (the scores would be
            undefined, or every weight uniform).
    """
    if scale is None:
        return sp.sqrt(d_k)
    divisor = exact(scale, what=f"{what}: scale")
    if divisor.is_number and not (divisor.is_extended_real and divisor.is_finite and divisor != 0):
        raise ConventionError(
            f"{what}: scale is the divisor of the scores S = Q Kᵀ / scale (default √d_k = √{d_k}) and must be a "
            f"finite nonzero real number; got scale = {divisor}. torch's scale= is its reciprocal (a factor): "
            f"torch's scale=c is scale=1/c here"
        )
    return divisor


def scaled_dot_product(L, Q, K, V, *, mask=None, scale=None, tag: str | None = None, names: dict | None = None,
                       empty_rows: str = "error") -> Head:
    """Append S, S_masked (when masked), A and O for given Q, K, V; return their handles.

    Args:
        Q: T×d_k queries, K: S×d_k keys, V: S×d_v values (rows are positions).
        mask: None, ``"causal"``, a T×S boolean keep-matrix (True = may attend), or a
            :class:`~symseq.ops.Mask` (``Mask.keep``, ``Mask.exclude``, ``Mask.additive``).
        scale: divisor of the scores (S = Q Kᵀ / scale), an exact finite nonzero number or a scalar of the
            ledger; default √d_k. torch's ``scale=`` is the reciprocal, a factor.
        tag: superscript for the row names (``"(1)"`` → S^{(1)}).
        names: explicit row names, e.g. ``{"S_masked": "S_causal"}``.
        empty_rows: ``"error"`` (default) or ``"zero"`` for query rows with no allowed source.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), d_k of Q and K differ, K and V have different numbers of
            positions, or the mask has the wrong shape.
        ConventionError: a scale that is a float, zero, infinite, NaN or not real.
        MaskError: a mask entry that is no value of its convention (names its row, column and value), an
            unknown mask name, or a query position with no allowed source (names it).
    """
    matrices("scaled_dot_product", Q=Q, K=K, V=V)
    names = dict(names or {})
    nm = lambda key, base: names.get(key, tagged(base, tag))  # noqa: E731
    if Q.shape[1] != K.shape[1]:
        raise ShapeError(
            f"attention: Q is {Q.shape[0]}×{Q.shape[1]} and K is {K.shape[0]}×{K.shape[1]}; queries and keys "
            f"must have the same width d_k (got {Q.shape[1]} and {K.shape[1]})"
        )
    if K.shape[0] != V.shape[0]:
        raise ShapeError(
            f"attention: K has {K.shape[0]} positions but V has {V.shape[0]}; each key needs its value "
            f"(K is {K.shape[0]}×{K.shape[1]}, V is {V.shape[0]}×{V.shape[1]})"
        )
    d_k = Q.shape[1]
    allowed = ops.allowed_matrix(mask, (Q.shape[0], K.shape[0]), empty_rows, what=f"attention {nm('A', 'A')}")
    divisor = _divisor(scale, d_k, f"attention {nm('S', 'S')}")
    scores = Q @ K.T
    if divisor != 1:
        scores = scores / ops.as_node(divisor)
    S = L.define(nm("S", "S"), scores, note="scaled scores")
    S_masked = None
    src = S
    if allowed is not None:
        M = ops.Const(mask_matrix(allowed), label=names.get("M", "M"))
        S_masked = L.define(nm("S_masked", "S_masked"), S + M, allows_infinity=True,
                            note="masked scores: −∞ where a source is excluded")
        src = S_masked
    A = L.define(nm("A", "A"), ops.SoftmaxRows(src, allowed, empty_rows=empty_rows, what=f"attention {nm('A', 'A')}"),
                 note="attention weights; each row sums to 1 over its allowed sources")
    O = L.define(nm("O", "O"), A @ V, note="retrieved vectors")
    return Head(S=S, A=A, O=O, S_masked=S_masked, allowed=allowed)


def attention_head(L, H, W_Q, W_K, W_V, *, orientation: str, mask=None, tag: str | None = None,
                   names: dict | None = None, empty_rows: str = "error", X_kv=None) -> Head:
    """Project H to Q = H W_Q, K = H W_K, V = H W_V (or with Wᵀ), then :func:`scaled_dot_product`.

    ``orientation`` is required (see :mod:`symseq.blocks.linear`). ``X_kv``
    gives another source sequence for keys and values (cross-attention).
    ``mask`` is as in :func:`scaled_dot_product`, checked before any row is appended.

    Raises:
        ShapeError, MaskError: as :func:`scaled_dot_product`.
    """
    matrices("attention_head", H=H, W_Q=W_Q, W_K=W_K, W_V=W_V, X_kv=X_kv)
    names = dict(names or {})
    nm = lambda key: names.get(key, tagged(key, tag))  # noqa: E731
    src = H if X_kv is None else X_kv
    mask = ops.allowed_matrix(mask, (H.shape[0], src.shape[0]), empty_rows, what=f"attention {nm('A')}")
    Q = L.define(nm("Q"), project(H, W_Q, orientation=orientation, what=f"query projection {nm('Q')}"))
    K = L.define(nm("K"), project(src, W_K, orientation=orientation, what=f"key projection {nm('K')}"))
    V = L.define(nm("V"), project(src, W_V, orientation=orientation, what=f"value projection {nm('V')}"))
    head = scaled_dot_product(L, Q, K, V, mask=mask, tag=tag, names=names, empty_rows=empty_rows)
    head.Q, head.K, head.V = Q, K, V
    return head


def head_weights(heads) -> dict:
    """Each head's (W_Q, W_K, W_V) by the name an error gives it: ``W_Q of head 1 (heads[0][0])``."""
    return {f"{w} of head {i + 1} (heads[{i}][{j}])": W for i, triple in enumerate(heads)
            for j, (w, W) in enumerate(zip(("W_Q", "W_K", "W_V"), triple))}


def head_tag(tag: str | None, i: int) -> str:
    """Superscript of head ``i`` inside a block tagged ``tag``: (i), or (ℓ,i) for block tag (ℓ)."""
    if not tag:
        return f"({i})"
    if tag.startswith("(") and tag.endswith(")"):
        return f"{tag[:-1]},{i})"
    return f"{tag},{i}"


@dataclass
class MultiHead:
    """Handles of a multi-head attention: its heads, the concatenation and the output."""

    heads: list = field(default_factory=list)
    concat: ops.Ref | None = None
    out: ops.Ref | None = None


def multi_head(L, H, heads, W_O, *, orientation: str, mask=None, tag: str | None = None, name: str = "MHA",
               empty_rows: str = "error") -> MultiHead:
    """MHA(H) = [O⁽¹⁾ ⋯ O⁽ʰ⁾] W_O with one (W_Q, W_K, W_V) triple per head.

    Heads may have any widths d_k, d_v and the model any width (no
    requirement that d divides by h). W_O is h·d_v×d (``in_out``) or
    d×h·d_v (``out_in``). ``mask`` (shared by the heads) is as in
    :func:`scaled_dot_product`, checked before any row is appended.

    Raises:
        ShapeError: a scalar where a matrix is needed (names the argument), or W_O does not fit the concatenated width.
        MaskError: as :func:`scaled_dot_product`.
    """
    matrices("multi_head", H=H, W_O=W_O, **head_weights(heads))
    mask = ops.allowed_matrix(mask, (H.shape[0], H.shape[0]), empty_rows, what=f"attention {tagged('A', tag)}")
    out = MultiHead()
    for i, (W_Q, W_K, W_V) in enumerate(heads, start=1):
        out.heads.append(attention_head(L, H, W_Q, W_K, W_V, orientation=orientation, mask=mask,
                                        tag=head_tag(tag, i), empty_rows=empty_rows))
    parts = [h.O for h in out.heads]
    cat = ops.Concat(parts, axis=1) if len(parts) > 1 else parts[0]
    out.concat = L.define(tagged("O_cat", tag), cat, note="heads side by side") if len(parts) > 1 else parts[0]
    out.out = L.define(tagged(name, tag), project(out.concat, W_O, orientation=orientation,
                                                  what=f"output map {tagged('W_O', tag)}"))
    return out
