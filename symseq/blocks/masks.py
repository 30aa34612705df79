"""Visibility masks as boolean *allowed* matrices: causal, key padding, and their combination.

A mask for T queries and S sources is a T×S boolean matrix, True where query
t may read source j. The attention blocks turn it into the additive mask

    M_tj = 0 where allowed,  −∞ where excluded,     A = softmax_rows(S + M),

so excluded sources get weight exactly zero and the allowed ones are
renormalised. Conventions differ between libraries: torch's
``nn.MultiheadAttention`` takes a boolean mask whose True *excludes*
(:func:`torch_convention` converts), ``F.scaled_dot_product_attention`` a
boolean mask whose True *allows* (the convention used here).

Validity vectors m (one 0/1 entry per position: 1 for a real token, 0 for
padding) describe which sources exist (key padding) and which rows may be
pooled or scored; a source mask does not remove a padded query's output row.

Source: Week 06 handout (``004_daeab95066cb0286.txt``), "Change visibility
with a mask" (causal M), "Padding changes visibility and output selection"
(combined padding and causal M, Figure 16).
"""

from __future__ import annotations

import numpy as np

from ..errors import MaskError, ShapeError
from ..ops import allowed_matrix, booleans


def _count(n, what) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ShapeError(f"{what} must be a positive integer; got {n!r}")
    return int(n)


def validity(m, T: int | None = None, *, what: str = "validity mask", allow_empty: bool = False) -> np.ndarray:
    """A validity vector m (length T, True/1 for a real position) as a boolean array.

    Raises:
        ShapeError: when m is not a vector or its length is not T.
        ConventionError: for entries other than True/False/1/0.
        MaskError: when no entry is valid and ``allow_empty`` is false
            (a pooled mean or a mean loss over no position is undefined).
    """
    arr = booleans(m, what, 1)
    if T is not None and arr.shape[0] != _count(T, "T"):
        raise ShapeError(f"{what} has {arr.shape[0]} entries but there are {T} positions; give one entry per position")
    if not allow_empty and not arr.any():
        raise MaskError(f"{what} marks no position as valid (all {arr.shape[0]} entries are 0); "
                        f"at least one real position is needed")
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
    T = _count(T, "T (queries)")
    S = T if S is None else _count(S, "S (sources)")
    return np.tril(np.ones((T, S), dtype=bool))


def full(T: int, S: int | None = None) -> np.ndarray:
    """Unrestricted visibility: every source allowed (T×S of True)."""
    T = _count(T, "T (queries)")
    S = T if S is None else _count(S, "S (sources)")
    return np.ones((T, S), dtype=bool)


def key_padding(m, T: int | None = None) -> np.ndarray:
    """Source (key) padding: row t allows exactly the real sources, allowed_tj = m_j (T×S, S = len(m)).

    Args:
        m: validity of the S sources (1 real, 0 padding).
        T: number of queries (default S, self-attention).

    Raises:
        ShapeError, ConventionError, MaskError: as :func:`validity` (a
            sequence with no real source leaves every query without a source).
    """
    valid = validity(m, what="key padding mask")
    T = valid.shape[0] if T is None else _count(T, "T (queries)")
    return np.broadcast_to(valid, (T, valid.shape[0])).copy()


def combine(*masks) -> np.ndarray:
    """Entrywise AND of allowed matrices (a source is allowed only if every mask allows it).

    Raises:
        ShapeError: when no mask is given or the shapes differ (names them).
        ConventionError: for entries other than True/False/1/0.
    """
    if not masks:
        raise ShapeError("combine needs at least one mask")
    arrs = [booleans(m, f"mask {i}", 2) for i, m in enumerate(masks)]
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


def check(allowed, shape: tuple | None = None, *, what: str = "attention mask") -> np.ndarray:
    """Validate an allowed matrix: 2-D, boolean (or 0/1), of ``shape`` when given; rows may be empty.

    The same check as the attention blocks and :class:`~symseq.ops.SoftmaxRows` make
    (:func:`symseq.ops.allowed_matrix`), so a mask this accepts they accept.

    Raises:
        ShapeError: wrong dimension or shape (names both shapes).
        ConventionError: entries other than True/False/1/0.
    """
    return allowed_matrix(allowed, shape, empty_rows="zero", what=what)


def empty_rows(allowed) -> list[int]:
    """Query positions whose mask row allows no source (their softmax would be undefined)."""
    arr = check(allowed)
    return [int(i) for i in np.flatnonzero(~arr.any(axis=1))]


def torch_convention(allowed) -> np.ndarray:
    """The same mask in ``nn.MultiheadAttention``'s boolean convention, where True *excludes* an entry."""
    return ~check(allowed)
