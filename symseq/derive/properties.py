"""Properties of attention proved on the ledger, exactly, rather than sampled.

Each function returns a :class:`~symseq.derive.symbolic.Proof` (``holds``,
``detail``, and a ``witness`` when the property fails):

* :func:`rows_sum_to_one` — every row of a (masked) attention matrix sums to 1;
* :func:`convex_combination` — O = A V is, row by row, a convex combination of
  the value rows: O_t = Σ_j w_tj v_j with w_tj ≥ 0, Σ_j w_tj = 1, read off the
  closed form of O as a function of symbolic values;
* :func:`shift_invariance` — adding a constant c_t to every score of row t
  leaves A unchanged;
* :func:`permutation_equivariance` — for a function f of the rows of X,
  f(ΠX) = Π f(X) (``kind="rows"``) or, for an attention matrix,
  A(ΠX) = Π A(X) Πᵀ (``kind="pairs"``); a failure names an entry and its
  nonzero value;
* :func:`dependence`, :func:`causal_independence`, :func:`leakage` —
  ∂o_i/∂x_j from the ledger's reverse mode for every pair of positions:
  exactly zero (structurally, from the exact adjoint rows) or nonzero (with an
  exact point and the value of one Jacobian entry there).

Functions that build their own ledgers take a *builder* ``build(L, X) ->
handle``: it appends the computation to ledger ``L`` for the T×D input ``X``
and returns the output's handle (parameters may be symbolic or exact). The
same builder with a wrong mask or a transposed product is how the tests show
that each check catches the error.

Sources: Handout #11 (``001_d42a515eb3cd140c.txt``) §2.1, §3.2, §6.1, §7.3;
Week 7 (``003_b76f00753924d0c1.txt``), the causal mask and the shift of a score
row; Week 8 (``000_30e9e4099f2cd2dc.txt``) §1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import mpmath
import numpy as np
import sympy as sp

from .. import ops
from ..errors import ShapeError
from ..functions import partial
from ..ledger import Ledger
from ..numbers import short
from .symbolic import Proof, vanishes

__all__ = [
    "agree",
    "rows_sum_to_one", "convex_combination", "shift_invariance", "permutation_equivariance", "permutation_matrix",
    "Dependence", "dependence", "causal_independence", "leakage",
]


def _closed(L, name, keep=()):
    v = L.expand(name if isinstance(name, str) else name.name, values=True, keep=keep)
    return v if isinstance(v, sp.MatrixBase) else sp.Matrix([[v]])


def agree(a, b, tol=None) -> tuple[bool, str]:
    """Whether two arrays of mpmath numbers (or numbers) agree entry by entry within ``tol`` (10⁻⁴⁰ by default),
    and the largest difference in words: ``(ok, "largest difference 3.2e-52")``, as a claim's proof returns.

    Use it to compare a ledger's values with the same quantity computed independently by the formula the
    handout states (both at 50 digits from :class:`~symseq.values.Values`).
    """
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if a.shape != b.shape:
        return False, f"shapes {a.shape} and {b.shape}"
    tol = mpmath.mpf(10) ** -40 if tol is None else tol
    worst = max(abs(x - y) for x, y in zip(a.flat, b.flat))
    return bool(worst < tol), f"largest difference {short(worst, 3)}"


def rows_sum_to_one(L: Ledger, A) -> Proof:
    """Every row of the attention matrix ``A`` (a handle in ``L``) sums to exactly 1.

    The closed form of A over the ledger's symbols (leaves without a value
    stay symbols) is summed row by row and each sum minus 1 simplified to 0.
    """
    M = _closed(L, A)
    for t in range(M.rows):
        total = sum(M.row(t))
        if not vanishes(total - 1):
            return Proof("every row sums to 1", False, f"row {t} sums to {sp.simplify(total)}",
                         witness={"row": t, "sum": sp.simplify(total)})
    return Proof("every row sums to 1", True, f"{M.rows} rows of {M.cols} weights each sum to exactly 1")


def convex_combination(L: Ledger, O, V) -> Proof:
    """O (T×d_v) is, row by row, a convex combination of the rows of V (S×d_v), for any values.

    V is kept symbolic (its entries are the unknowns). For every output row t
    the closed form must be O_t = Σ_j w_tj V_j: each entry linear in V with no
    constant term, the same weight w_tj for every feature, w_tj ≥ 0 (SymPy
    proves the sign from the exponentials) and Σ_j w_tj = 1.
    """
    Vn = V.name
    Mo = _closed(L, O, keep=[Vn])
    Vs = L.entry_symbols(Vn)
    S_, dv = Vs.shape
    for t in range(Mo.rows):
        w = [partial(Mo[t, 0], Vs[j, 0]) for j in range(S_)]
        for c in range(dv):
            for j in range(S_):
                for e in range(dv):
                    want = w[j] if e == c else 0
                    if not vanishes(partial(Mo[t, c], Vs[j, e]) - want):
                        return Proof("O is a convex combination of the values", False,
                                     f"O[{t},{c}] does not use value {j}, feature {e} with the row's weight",
                                     witness={"row": t, "feature": c, "source": j})
            rest = Mo[t, c] - sum(w[j] * Vs[j, c] for j in range(S_))
            if not vanishes(rest):
                return Proof("O is a convex combination of the values", False,
                             f"O[{t},{c}] is not linear in the values", witness={"row": t, "feature": c})
        neg = [j for j in range(S_) if not (w[j] == 0 or w[j].is_nonnegative)]
        if neg:
            return Proof("O is a convex combination of the values", False,
                         f"row {t}: the weight of value {neg[0]} is not provably ≥ 0 ({w[neg[0]]})",
                         witness={"row": t, "source": neg[0]})
        if not vanishes(sum(w) - 1):
            return Proof("O is a convex combination of the values", False,
                         f"row {t}: the weights sum to {sp.simplify(sum(w))}, not 1", witness={"row": t})
    return Proof("O is a convex combination of the values", True,
                 f"each of {Mo.rows} output rows is Σ_j w_tj v_j with w_tj ≥ 0 and Σ_j w_tj = 1")


def shift_invariance(T: int = 2, S: int = 3, allowed=None) -> Proof:
    """softmax_rows(S + c 1ᵀ) = softmax_rows(S) for symbolic scores S (T×S) and a symbolic shift c_t per row."""
    L = Ledger(f"shifted score rows, T={T}, S={S}")
    Sc = L.input("S", shape=(T, S))
    c = L.input("c", shape=(T, 1), note="one constant per score row")
    A = L.define("A", ops.SoftmaxRows(Sc, allowed))
    A2 = L.define("A_shift", ops.SoftmaxRows(Sc + c, allowed))
    diff = _closed(L, A2) - _closed(L, A)
    ok = vanishes(diff)
    return Proof("adding a constant to a score row changes nothing", ok,
                 f"softmax_rows(S + c1ᵀ) − softmax_rows(S) = 0 entry by entry ({T}×{S}, symbolic S and c)"
                 if ok else "the weights change")


def permutation_matrix(perm) -> sp.ImmutableMatrix:
    """Π with (ΠX)_i = X_{perm[i]}: row i of ΠX is row perm[i] of X."""
    perm = [int(p) for p in perm]
    n = len(perm)
    if sorted(perm) != list(range(n)):
        raise ShapeError(f"{perm} is not a permutation of 0..{n - 1}")
    return sp.ImmutableMatrix(n, n, lambda i, j: 1 if perm[i] == j else 0)


def _numeric_values(L: Ledger, name: str, point: dict):
    from ..backends import evaluate

    vals = {n: v for n, v in point.items() if n in L and L[n].is_leaf and L[n].value is None}
    return sp.Matrix(evaluate(L, "mpmath", dps=30, values=vals, targets=[name])[name].tolist())


def _permuted(M: sp.MatrixBase, perm, kind: str) -> sp.MatrixBase:
    """Π M (``kind="rows"``: row i is row perm[i] of M) or Π M Πᵀ (``"pairs"``: entry (i, k) is M[perm[i], perm[k]]),
    with Π = :func:`permutation_matrix` (perm), by moving entries: the same matrix as the products, without
    multiplying every closed form by the 0s and 1s of Π."""
    perm = [int(p) for p in perm]
    return M.extract(perm, perm if kind == "pairs" else list(range(M.cols)))


def permutation_equivariance(build: Callable, T: int, D: int, perm, *, kind: str = "rows", seed: int = 0) -> Proof:
    """f(ΠX) = Π f(X) (``kind="rows"``) or f(ΠX) = Π f(X) Πᵀ (``kind="pairs"``), for a symbolic T×D input X.

    ``build(L, X)`` appends the computation and returns its output handle;
    it is called on X and on ΠX in two ledgers and the exact closed forms are
    compared entry by entry (symbolic X; parameters symbolic or exact, as the
    builder made them). When they differ the proof fails with a witness: both
    sides evaluated with mpmath at an exact rational point and an entry whose
    difference is nonzero there.
    """
    if kind not in ("rows", "pairs"):
        raise ShapeError(f"kind must be 'rows' (outputs are positions) or 'pairs' (T×T attention); got {kind!r}")
    P = permutation_matrix(perm)
    if P.rows != T:
        raise ShapeError(f"the permutation has {P.rows} entries but X has T={T} rows")
    L1 = Ledger("f(X)")
    out1 = build(L1, L1.input("X", shape=(T, D)))
    L2 = Ledger("f(ΠX)")
    X2 = L2.input("X", shape=(T, D))
    Xp = L2.define("ΠX", ops.Const(P, label="Π") @ X2)
    out2 = build(L2, Xp)
    F1, F2 = _closed(L1, out1), _closed(L2, out2)
    diff = F2 - _permuted(F1, perm, kind)
    shown = "A(ΠX) = Π A(X) Πᵀ" if kind == "pairs" else "f(ΠX) = Π f(X)"
    if all(e == 0 for e in diff):
        return Proof(shown, True, f"{diff.rows}×{diff.cols} entries agree exactly for symbolic X, Π = {list(perm)}")
    point = _point_values(L1, seed)
    N1, N2 = _numeric_values(L1, out1.name, point), _numeric_values(L2, out2.name, point)
    Nw = _permuted(N1, perm, kind)
    for idx in np.ndindex(diff.shape):
        v = N2[idx] - Nw[idx]
        if abs(v) > mpmath.mpf("1e-20"):
            rhs = "Π f(X) Πᵀ" if kind == "pairs" else "Π f(X)"
            return Proof(shown, False, f"entry {list(idx)} of f(ΠX) − {rhs} is {short(v, 8)} at a rational "
                         f"point", witness={"entry": idx, "value": v, "point": point})
    if vanishes(diff):
        return Proof(shown, True, f"{diff.rows}×{diff.cols} entries agree exactly (after simplification)")
    return Proof(shown, False, "the difference does not simplify to zero")  # pragma: no cover


@dataclass
class Dependence:
    """∂o_i/∂x_j for every output position i and input position j, from the ledger's reverse mode.

    ``zero[i][j]`` is True when the block ∂o_i/∂x_j is exactly zero: every
    entry of the exact adjoint row is 0 as built by reverse mode. For a block
    shown nonzero, ``witness[(i, j)]`` is ``(c, e, value, point)``:
    ∂o_{i,c}/∂x_{j,e} = value (30 digits) at the exact rational ``point``.
    """

    T: int
    zero: list
    witness: dict = field(default_factory=dict)

    def future(self) -> list:
        """The pairs (i, j) with j > i whose block is not exactly zero."""
        return [(i, j) for i in range(self.T) for j in range(i + 1, self.T) if not self.zero[i][j]]

    def pattern(self) -> str:
        """Rows i, columns j: ``0`` exactly zero, ``•`` nonzero."""
        return "\n".join(" ".join("0" if z else "•" for z in row) for row in self.zero)


def _kept_rows(L: Ledger) -> list:
    """Forward rows to keep as symbols in closed forms: all but softmax rows, whose exact zeros carry the masks."""
    return [it.name for it in L.forward_rows() if not isinstance(it.node, ops.SoftmaxRows)]


def _point_values(L: Ledger, point_seed: int) -> dict:
    """Exact rational values for every leaf that has none (symbolic parameters, the input X)."""
    import random

    rnd = random.Random(point_seed)
    out = {}
    for it in L.leaves:
        if it.value is None:
            shape = it.shape if it.shape != () else (1, 1)
            m = sp.Matrix(*shape, lambda i, j: sp.Rational(rnd.randint(-9, 9), rnd.randint(2, 7)) + sp.Rational(1, 11))
            out[it.name] = m if it.shape != () else m[0, 0]
    return out


def dependence(build: Callable, T: int, D: int, *, seed: int = 0) -> Dependence:
    """∂o_i/∂x_j for a symbolic T×D input X, one reverse-mode pass per output position i.

    ``build(L, X)`` appends the computation and returns the output handle
    (T×d_out). For each i the ledger gets an upstream row g_i (1×d_out) and
    the scalar ℓ_i = Σ_c g_ic o_ic; row j of the adjoint ∂ℓ_i/∂X is
    g_i ∂o_i/∂x_j. It is evaluated exactly with the forward rows kept as
    symbols except the softmax rows, whose masked entries are exact zeros:
    a row that is 0 there is exactly zero for every input and parameter. A
    row that is not is evaluated with mpmath (30 digits) at an exact rational
    point with g_i one-hot, which exhibits a nonzero Jacobian entry.
    """
    from ..backends import evaluate

    L = Ledger("dependence of outputs on inputs")
    X = L.input("X", shape=(T, D))
    out = build(L, X)
    if out.shape[0] != T:
        raise ShapeError(f"the output has {out.shape[0]} rows but X has T={T} positions")
    d_out = out.shape[1]
    keep = _kept_rows(L)
    zero = [[True] * T for _ in range(T)]
    res = Dependence(T, zero)
    point = _point_values(L, seed)
    adjoints = []
    for i in range(T):
        g = L.input(f"g_{{{i}}}", shape=(1, d_out), note=f"weights of the outputs of position {i}")
        L.define(f"ℓ_{{{i}}}", ops.Sum(out[i, :] * g, None))
        grads = L.backward(f"ℓ_{{{i}}}", wrt=["X"], names=lambda n, i=i: f"∂ℓ_{{{i}}}/∂{n}")
        adjoints.append(grads.name("X"))
    closed = L.closed_forms(adjoints, values=True, keep=keep)  # the forward rows once, not once per position
    for i, name in enumerate(adjoints):
        adj = closed[name]
        open_rows = [j for j in range(T) if not all(e == 0 for e in adj.row(j))]
        for j in open_rows:
            zero[i][j] = False
        for c in range(d_out):
            if not any((i, j) not in res.witness for j in open_rows):
                break
            vals = dict(point)
            vals.update({f"g_{{{k}}}": sp.Matrix(1, d_out, lambda _, e: 1 if (k == i and e == c) else 0)
                         for k in range(i + 1)})
            got = evaluate(L, "mpmath", dps=30, values=vals, targets=[name])[name]
            for j in open_rows:
                if (i, j) in res.witness:
                    continue
                for e in range(D):
                    if abs(got[j, e]) > mpmath.mpf("1e-20"):
                        res.witness[(i, j)] = (c, e, got[j, e], point)
                        break
        for j in open_rows:  # reverse mode did not give a structural zero and no point showed a nonzero value
            if (i, j) not in res.witness and vanishes(adj.row(j)):
                zero[i][j] = True
    return res


def causal_independence(build: Callable, T: int, D: int) -> Proof:
    """∂o_i/∂x_j is exactly zero for every j > i (see :func:`dependence`)."""
    dep = dependence(build, T, D)
    bad = dep.future()
    if not bad:
        n = T * (T - 1) // 2
        return Proof("∂o_i/∂x_j = 0 for j > i", True,
                     f"all {n} blocks above the diagonal are exactly 0 in the reverse-mode rows", value=dep)
    i, j = bad[0]
    w = dep.witness.get((i, j))
    detail = f"∂o_{i}/∂x_{j} ≠ 0" + (f": ∂o_{{{i},{w[0]}}}/∂x_{{{j},{w[1]}}} = {short(w[2], 8)}" if w else "")
    return Proof("∂o_i/∂x_j = 0 for j > i", False, detail, witness={"pairs": bad}, value=dep)


def leakage(build: Callable, T: int, D: int) -> Proof:
    """Show that some output reads a later input: a nonzero ∂o_i/∂x_j with j > i, with its value.

    Holds when such an entry exists (the leak is demonstrated); the witness
    names the entry, its exact point and its value.
    """
    dep = dependence(build, T, D)
    bad = dep.future()
    if not bad:
        return Proof("some ∂o_i/∂x_j with j > i is nonzero", False, "no output depends on a later input", value=dep)
    i, j = bad[0]
    c, e, v, point = dep.witness[(i, j)]
    return Proof("some ∂o_i/∂x_j with j > i is nonzero", True,
                 f"∂o_{{{i},{c}}}/∂x_{{{j},{e}}} = {short(v, 8)} at a rational point; leaking pairs {bad}",
                 witness={"pairs": bad, "entry": (i, c, j, e), "value": v, "point": point}, value=dep)

