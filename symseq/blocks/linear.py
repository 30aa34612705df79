"""Linear maps with an explicit weight orientation.

Handouts disagree on how a weight is stored, so no block guesses from shapes:

* ``orientation="in_out"``: Y = X W with W of shape in×out (Week 8 handout,
  000, §1: Q = H W_Q with W_Q of shape d×d_k; Vaswani et al. 2017).
* ``orientation="out_in"``: Y = X Wᵀ with W of shape out×in, as torch's
  ``nn.Linear.weight`` (Week 06 handout, 004: W_Q stored 3×5).

Rows are positions: X is T×in and Y is T×out. A bias is a 1×out row added at
every position.
"""

from __future__ import annotations

from .. import ops
from ..errors import ConventionError, ShapeError
from ._args import matrices

ORIENTATIONS = ("in_out", "out_in")


def check_orientation(orientation: str) -> str:
    """Return ``orientation`` or raise ConventionError listing the valid ones."""
    if orientation not in ORIENTATIONS:
        raise ConventionError(
            f"unknown weight orientation {orientation!r}; use 'in_out' (Y = X W, W is in×out, as the Week 8 "
            f"handout) or 'out_in' (Y = X Wᵀ, W is out×in, as torch's nn.Linear)"
        )
    return orientation


def project(X: ops.Node, W: ops.Node, *, orientation: str, what: str = "linear map") -> ops.Node:
    """The node X W (``in_out``) or X Wᵀ (``out_in``), with a shape error naming both shapes.

    Raises:
        ConventionError: for an unknown orientation.
        ShapeError: when X or W is a scalar (names it), or X's width does not match W's input side.
    """
    check_orientation(orientation)
    matrices(what, X=X, W=W)
    n_in = W.shape[0] if orientation == "in_out" else W.shape[1]
    if X.shape[1] != n_in:
        side = "rows" if orientation == "in_out" else "columns"
        raise ShapeError(
            f"{what}: X is {X.shape[0]}×{X.shape[1]} but W is {W.shape[0]}×{W.shape[1]}; with "
            f"orientation={orientation!r} W's {side} must equal X's width {X.shape[1]}"
            + (". If W is stored out×in (as torch's nn.Linear), use orientation='out_in'" if orientation == "in_out"
               and W.shape[1] == X.shape[1] else "")
            + (". If W is stored in×out, use orientation='in_out'" if orientation == "out_in"
               and W.shape[0] == X.shape[1] else "")
        )
    return X @ W if orientation == "in_out" else X @ W.T


def linear(L, name: str, X, W, b=None, *, orientation: str, note: str = "", display=None, latex=None):
    """Append ``name := X W + b`` (or ``X Wᵀ + b``) to ledger ``L`` and return its handle.

    Args:
        X: T×in input (rows are positions).
        W: in×out (``in_out``) or out×in (``out_in``) weight.
        b: optional 1×out bias row, added at every position.

    Raises:
        ConventionError: unknown orientation. ShapeError: a scalar where a matrix is needed (names the
            argument), or widths that do not fit.
    """
    matrices(f"linear {name}", X=X, W=W, b=b)
    Y = project(X, W, orientation=orientation, what=name)
    if b is not None:
        if b.shape not in ((1, Y.shape[1]),):
            raise ShapeError(f"{name}: the bias is {b.shape[0]}×{b.shape[1]} but must be 1×{Y.shape[1]}")
        Y = Y + b
    return L.define(name, Y, note=note, display=display, latex=latex)
