"""Visibility masks: one :class:`Mask` type with its convention named, causal, key padding, and their combination.

A mask for T queries and S sources says which source j query t may read.
The attention blocks turn it into the additive mask

    M_tj = 0 where allowed,  −∞ where excluded,     A = softmax_rows(S + M),

so excluded sources get weight exactly zero and the allowed ones are
renormalised. Libraries write the same visibility three ways, so a mask
names its convention (:class:`Mask`):

=====================  ===============================  ==================================================
constructor            entries                          as in
=====================  ===============================  ==================================================
``Mask.keep(m)``       True/1 = may attend              this project; ``F.scaled_dot_product_attention``'s
                                                        boolean ``attn_mask``
``Mask.exclude(m)``    True/1 = masked out              ``nn.MultiheadAttention``'s boolean ``attn_mask``
                                                        and ``key_padding_mask``
``Mask.additive(m)``   0 = may attend, −∞ = masked out  torch's float ``attn_mask`` (added to the scores)
=====================  ===============================  ==================================================

A boolean (or 0/1 integer) array and ``"causal"`` are keep-masks, as every
function here returns. Anything else (0.5, 2, −1, ``"False"``, NaN, a float
0/1 array such as ``torch.tril(torch.ones(T, T))`` without a convention) is
refused with a :class:`~symseq.errors.MaskError` naming the entry, its value
and the fix: one check, :func:`symseq.ops.allowed_matrix`, serves
:func:`check`, every attention block and :class:`~symseq.ops.SoftmaxRows`.

Validity vectors m (one entry per position: 1 for a real token, 0 for
padding; or ``Mask.exclude(key_padding_mask)``) describe which sources exist
(key padding) and which rows may be pooled or scored; a source mask does not
remove a padded query's output row. A batch of B sequences has a B×T validity
mask (:func:`batch_validity`).

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Change visibility
with a mask" (causal M), "Padding changes visibility and output selection"
(combined padding and causal M, Figure 16); torch 2 documentation of
``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention``.
"""

from __future__ import annotations

import numpy as np

from ..arrays import integer
from ..errors import MaskError, ShapeError
from ..ops import MASK_CONVENTIONS, Mask, allowed_matrix, mask_allowed

__all__ = ["Mask", "MASK_CONVENTIONS", "validity", "batch_validity", "causal", "full", "key_padding", "combine",
           "padding_causal", "check", "empty_rows", "torch_convention"]


def validity(m, T: int | None = None, *, what: str = "validity mask", allow_empty: bool = False) -> np.ndarray:
    """A validity vector m (length T; True/1 for a real position, or a :class:`Mask`) as a boolean array.

    Raises:
        ShapeError: when m is not a vector or its length is not T.
        MaskError: for entries other than True/False/1/0 (or the values of the Mask's convention), and when no
            entry is valid and ``allow_empty`` is false (a pooled mean or a mean loss over no position is undefined).
    """
    arr = mask_allowed(m, what, ndim=1)
    if T is not None and arr.shape[0] != integer(T, "T", minimum=1):
        raise ShapeError(f"{what} has {arr.shape[0]} entries but there are {T} positions; give one entry per position")
    if not allow_empty and not arr.any():
        raise MaskError(f"{what} marks no position as valid (all {arr.shape[0]} entries are 0); "
                        f"at least one real position is needed")
    return arr


def batch_validity(m, B: int | None = None, T: int | None = None, *, what: str = "validity mask",
                   allow_empty: bool = False) -> np.ndarray:
    """A B×T validity mask (row b: which positions of sequence b are real) as a boolean array.

    m is a B×T array of True/False or 1/0 (True = a real token), or a :class:`Mask` such as
    ``Mask.exclude(key_padding_mask)`` for torch's B×S ``key_padding_mask`` (True = padding).

    Raises:
        ShapeError: when m is not B×T (names both shapes).
        MaskError: for entries that are no values of the convention (names the batch item and position), and,
            unless ``allow_empty``, for a sequence with no valid position (names the batch item).
    """
    arr = mask_allowed(m, what, ndim=2, axes=("batch item", "position"))
    want = (arr.shape[0] if B is None else integer(B, "B (batch items)", minimum=1),
            arr.shape[1] if T is None else integer(T, "T (positions)", minimum=1))
    if arr.shape != want:
        raise ShapeError(f"{what} has shape {arr.shape[0]}×{arr.shape[1]} but the batch is B×T = "
                         f"{want[0]}×{want[1]}; give one row per sequence and one entry per position")
    empty = [int(b) for b in np.flatnonzero(~arr.any(axis=1))]
    if empty and not allow_empty:
        raise MaskError(f"{what}: batch item {empty[0]} marks no position as valid (all {arr.shape[1]} entries are 0)"
                        + (f"; so do batch items {empty[1:]}" if len(empty) > 1 else "")
                        + "; every sequence needs at least one real position")
    return arr


def causal(T: int, S: int | None = None) -> np.ndarray:
    """Causal visibility: True where source j ≤ query t (T×S, lower triangle; S = T by default).

    >>> causal(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])

    Raises:
        ShapeError: for T or S below 1.
    """
    T = integer(T, "T (queries)", minimum=1)
    S = T if S is None else integer(S, "S (sources)", minimum=1)
    return allowed_matrix("causal", (T, S), empty_rows="zero")


def full(T: int, S: int | None = None) -> np.ndarray:
    """Unrestricted visibility: every source allowed (T×S of True)."""
    T = integer(T, "T (queries)", minimum=1)
    S = T if S is None else integer(S, "S (sources)", minimum=1)
    return np.ones((T, S), dtype=bool)


def key_padding(m, T: int | None = None) -> np.ndarray:
    """Source (key) padding: row t allows exactly the real sources, allowed_tj = m_j (T×S, S = len(m)).

    Args:
        m: validity of the S sources (1 real, 0 padding), or ``Mask.exclude(key_padding_mask)`` for one row of
            torch's ``key_padding_mask`` (True = padding).
        T: number of queries (default S, self-attention).

    Raises:
        ShapeError, MaskError: as :func:`validity` (a sequence with no real source leaves every query without a
            source).
    """
    valid = validity(m, what="key padding mask")
    T = valid.shape[0] if T is None else integer(T, "T (queries)", minimum=1)
    return np.broadcast_to(valid, (T, valid.shape[0])).copy()


def combine(*masks) -> np.ndarray:
    """Entrywise AND of masks (a source is allowed only if every mask allows it); a keep-matrix.

    Each mask is a keep-matrix (boolean or 0/1) or a :class:`Mask` in any convention.

    Raises:
        ShapeError: when no mask is given or the shapes differ (names them).
        MaskError: for entries that are no values of their convention.
    """
    if not masks:
        raise ShapeError("combine needs at least one mask")
    arrs = [mask_allowed(m, f"mask {i}", ndim=2) for i, m in enumerate(masks)]
    shapes = {a.shape for a in arrs}
    if len(shapes) > 1:
        raise ShapeError("masks to combine must have the same shape (queries × sources); got "
                         + ", ".join("×".join(map(str, a.shape)) for a in arrs))
    out = arrs[0].copy()
    for a in arrs[1:]:
        out &= a
    return out


def padding_causal(m) -> np.ndarray:
    """Causal visibility restricted to real sources: allowed_tj = (j ≤ t) and m_j (T×T).

    With right padding and at least one real token (m_0 = 1), every row keeps
    source 0, so no softmax row is empty. Left padding leaves the first
    query rows without a source; attention with such a mask raises
    :class:`~symseq.errors.MaskError` naming the row unless a zero row is
    requested explicitly.
    """
    valid = validity(m, what="padding mask")
    return combine(causal(valid.shape[0]), key_padding(valid))


def check(mask, shape: tuple | None = None, *, empty_rows: str = "error", what: str = "attention mask") -> np.ndarray:
    """Validate an attention mask as the attention blocks do, and return its allowed (keep) matrix.

    This is :func:`symseq.ops.allowed_matrix`, the check every attention block and
    :class:`~symseq.ops.SoftmaxRows` make, with the same defaults: a mask this accepts they accept, and a mask this
    refuses they refuse with the same error.

    Args:
        mask: None (no mask: returns None), ``"causal"`` (needs ``shape``), a T×S boolean (or 0/1)
            keep-matrix, or a :class:`Mask`.
        shape: (T, S), the scores' shape, or None.
        empty_rows: ``"error"`` (as the blocks by default) or ``"zero"`` (rows may be empty).

    Raises:
        ShapeError: wrong dimension or shape (names both shapes).
        MaskError: entries that are no values of the mask's convention (names the entry, its value and the fix),
            an unknown mask name, or an empty row with ``empty_rows="error"``.
    """
    return allowed_matrix(mask, shape, empty_rows=empty_rows, what=what)


def empty_rows(mask) -> list[int]:
    """Query positions whose mask row allows no source (their softmax would be undefined)."""
    arr = check(mask, empty_rows="zero")
    return [int(i) for i in np.flatnonzero(~arr.any(axis=1))]


def torch_convention(mask) -> np.ndarray:
    """The same mask in ``nn.MultiheadAttention``'s boolean convention, where True *excludes* an entry.

    ``Mask.keep(m).to("exclude")``; ``Mask.to("additive")`` gives torch's float form.
    """
    return ~check(mask, empty_rows="zero")
