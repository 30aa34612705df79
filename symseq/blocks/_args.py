"""The one check of the blocks that an argument which needs rows is a matrix, not a scalar of the ledger."""

from __future__ import annotations

from ..errors import ShapeError

FIX = ("a scalar of a ledger has no rows or columns: give a row as a 1×d matrix (L.input(name, [[0.1, 0.2]]) or "
       "L.input(name, shape=(1, d)))")


def matrices(block: str, **arguments) -> None:
    """Check that each argument given (None is an argument left out) is a matrix: a ledger handle, or a node over
    handles, of shape (rows, columns).

    Args:
        block: the block's name, as the message names it (``"layer_norm"``).
        arguments: the arguments by their parameter names (``X=X, gamma=gamma``); a list or tuple (a batch, the
            heads' weights) is checked entry by entry, named with its index (``Xs[1]``, ``heads[0][2]``).

    Raises:
        ShapeError: "layer_norm: X must be a matrix (rows × columns); got the scalar x. …",
            naming the first argument that is not a matrix, what it is, and how to give a row.
    """
    for name, value in arguments.items():
        if isinstance(value, (list, tuple)):
            matrices(block, **{f"{name}[{i}]": v for i, v in enumerate(value)})
        elif value is not None:
            _matrix(block, name, value)


def _matrix(block: str, name: str, value) -> None:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and len(shape) == 2:
        return
    raise ShapeError(f"{block}: {name} must be a matrix (rows × columns); got {_what(value)}. {FIX}")


def _what(value) -> str:
    """How the message names a value that is not a matrix: ``the scalar x``, ``the int 3``."""
    import sympy as sp

    if isinstance(value, sp.Basic):
        return f"the scalar {value}"
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"a value of shape {tuple(shape)}"
    return f"the {type(value).__name__} {value!r}"
