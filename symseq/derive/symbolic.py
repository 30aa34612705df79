"""Shared tools of the exact proofs in :mod:`symseq.derive`: proof results, zero tests, reverse-mode Jacobians.

* :class:`Proof` is what every proving function returns: whether the
  statement holds, a one-line detail, and a witness when it does not (the
  entry and its exact or 30-digit value), so a derivation can state it with
  ``section.prove(statement, proof.check)``.
* :func:`vanishes` decides that an exact SymPy expression is identically
  zero: structurally, after expansion, or after simplification.
* :func:`reverse_jacobian` reads a full Jacobian ∂out/∂x off the ledger's own
  reverse mode: it adds a symbolic upstream adjoint G of the output's shape,
  the scalar ℓ = Σ G ⊙ out, runs :meth:`~symseq.Ledger.backward`, and
  differentiates the (G-linear) adjoint of x by each entry of G.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .. import ops
from ..errors import ShapeError

_COUNTER = itertools.count()


@dataclass
class Proof:
    """The outcome of an exact proof: ``holds``, a one-line ``detail``, and a ``witness`` when it fails.

    ``bool(proof)`` is ``holds``; :meth:`check` returns ``(holds, detail)`` as
    :meth:`symseq.Section.prove` expects.
    """

    statement: str
    holds: bool
    detail: str = ""
    witness: dict = field(default_factory=dict)
    value: Any = None

    def __bool__(self) -> bool:
        return bool(self.holds)

    def check(self) -> tuple[bool, str]:
        return bool(self.holds), self.detail


def vanishes(expr) -> bool:
    """True when the exact SymPy expression (or every entry of a matrix) is identically zero.

    Tries, in order of cost: structural zero and ``expand``; then a value at an
    exact rational point (a nonzero value there proves the expression is not
    zero); then ``cancel`` of the expansion and ``simplify``.
    """
    if isinstance(expr, sp.MatrixBase):
        return all(vanishes(e) for e in expr)
    if expr == 0:
        return True
    e = sp.expand(expr)
    if e == 0:
        return True
    syms = e.free_symbols
    if syms:  # a nonzero value at an exact point proves that it is not identically zero
        v = numeric(e, rational_point(syms, seed=7))
        if v.is_number and v.is_real and v.is_finite and abs(v) > sp.Float("1e-20"):
            return False
    try:
        if sp.cancel(sp.together(e)) == 0:
            return True
    except (sp.PolynomialError, TypeError):  # pragma: no cover - cancel refuses some expressions
        pass
    return sp.simplify(expr) == 0


def fresh(prefix: str) -> str:
    """A ledger name not used before in this process (``prefix`` plus a counter), for helper rows."""
    return f"{prefix}_{{{next(_COUNTER)}}}"


def reverse_jacobian(L, out, wrt, *, values: bool = True, keep=()) -> sp.Matrix:
    """The Jacobian ∂out/∂wrt from the ledger's reverse mode, exactly.

    Args:
        L: the ledger holding ``out`` and ``wrt``.
        out: handle of an m×n row (the function's output).
        wrt: handle of a p×q name (an input, parameter or row) on a path to ``out``.
        values: use the leaves' exact values where they have one (symbols otherwise).
        keep: names to keep as symbols in the closed form (see :meth:`Ledger.expand`).

    Returns:
        An (m·n)×(p·q) SymPy matrix, entries in row-major order of ``out``
        (rows) and ``wrt`` (columns): J[(i,c), (j,e)] = ∂out_ic/∂wrt_je.

    Raises:
        ShapeError: when ``out`` is a scalar row (use ``backward`` directly).
    """
    if out.shape == ():
        raise ShapeError("reverse_jacobian needs a matrix-valued output; for a scalar use Ledger.backward")
    G_name, loss_name = fresh("Ḡ"), fresh("ℓ")
    G = L.input(G_name, shape=out.shape, note="symbolic upstream adjoint")
    L.define(loss_name, ops.Sum(G * out, None), note="ℓ = Σ Ḡ ⊙ out: its gradient is Ḡ times the Jacobian")
    name = wrt.name if isinstance(wrt, ops.Ref) else str(wrt)
    grads = L.backward(loss_name, wrt=[name], names=lambda n: f"∂{loss_name}/∂{n}")
    adj = L.expand(grads.name(name), values=values, keep=keep)
    adj = adj if isinstance(adj, sp.MatrixBase) else sp.Matrix([[adj]])
    Gs = list(L.entry_symbols(G_name))
    flat = list(adj)
    return sp.Matrix(len(Gs), len(flat), lambda i, j: sp.diff(flat[j], Gs[i]))


def rational_point(symbols, seed: int = 0) -> dict:
    """Small distinct rationals for ``symbols`` (a deterministic point at which to show a nonzero value)."""
    import random

    rnd = random.Random(seed)
    out = {}
    for s in sorted(symbols, key=lambda s: s.name):
        out[s] = sp.Rational(rnd.randint(-9, 9), rnd.randint(2, 7)) + sp.Rational(1, 11)
    return out


def numeric(expr, point: dict, digits: int = 30):
    """``expr`` at ``point`` (symbol → exact value), evaluated to ``digits`` significant digits."""
    return sp.N(expr.xreplace(point), digits)
