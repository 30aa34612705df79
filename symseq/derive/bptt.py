"""Backpropagation through time on a recurrent ledger: the backward table, sums over uses, path products.

BPTT is the ledger's reverse mode applied to an unrolled recurrence (Week 06
handout, 004, "Match each forward operation to its backward calculation").
For the Elman cell z_t = x_t W_xᵀ + h_{t−1} W_hᵀ + b, h_t = φ(z_t), with
readouts ŷ_q at the scored positions q and ℒ = s Σ_q ½‖ŷ_q − y_q‖²::

    e_q = ∂ℒ/∂ŷ_q = s (ŷ_q − y_q)                       (s = 1, 1/T, 1/B, 1/(TB))
    g_t^h = e_t W_o [if t is scored] + g_{t+1}^z W_h    (g_T^z = 0: the two paths meet at h_t)
    g_t^z = g_t^h ⊙ φ′(z_t)
    ∇_{W_x} ℒ = Σ_t (g_t^z)ᵀ x_t,   ∇_{W_h} ℒ = Σ_t (g_t^z)ᵀ h_{t−1},   ∇_b ℒ = Σ_t g_t^z (summed over examples)
    ∇_{W_o} ℒ = Σ_q e_qᵀ h_q,       ∂ℒ/∂x_t = g_t^z W_x,   ∂ℒ/∂h_{−1} = g_0^z W_h

Shapes: g_t^h, g_t^z are B×H like h_t and z_t; e_q is B×C like ŷ_q; every
gradient has its parameter's shape. The recursion's rows are the ledger's own
adjoint rows (named here as the handout names them: g_t^h, g_t^z, e);
:func:`path_sum` writes the same scalar gradients as the handout's bracketed
sums of path products, built from first principles, so the two can be proved
equal (symbolically for small T with a general φ; numerically for long T).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy as sp

from .. import ops
from ..blocks.cells import Recurrence, derivative
from ..blocks.heads import SquaredError
from ..errors import ConventionError, LedgerError
from ..ledger import Gradients, Ledger


@dataclass
class BPTT:
    """One backward pass through a recurrence: the ledger, the recurrence, the loss and the adjoint rows.

    ``names`` maps forward names to the adjoint names used (h_t → g_t^h,
    z_t → g_t^z, ŷ → e, ...).
    """

    ledger: Ledger
    run: Recurrence
    loss: SquaredError
    grads: Gradients
    names: dict

    # -- names of the handout's sensitivities
    def adjoint(self, handle_or_name) -> str:
        """The adjoint row name of a forward name or handle (g_t^z for z_t)."""
        n = handle_or_name if isinstance(handle_or_name, str) else handle_or_name.name
        return self.grads.name(n)

    def g_h(self, t: int) -> str:
        return self.adjoint(self.run.h[t])

    def g_z(self, t: int) -> str:
        return self.adjoint(self.run.z[t])

    def e(self, q: int | None = None) -> str:
        """∂ℒ/∂ŷ_q (the error signal e_q, scaled by 1/T, 1/B for means); default: the last scored position."""
        ro = self.loss.readout
        q = ro.positions[-1] if q is None else q
        return self.adjoint(ro.yhat[ro.positions.index(q)])

    def symbol(self, name: str):
        return self.ledger.symbol(name)

    # -- the backward table
    def table(self) -> list[tuple[str | None, str | None]]:
        """Forward rows beside their backward rows, in the handout's order (Table 3 of seed 004).

        For an Elman recurrence with a final-only readout each forward row
        stands beside the sensitivity passed through it, read upward from the
        loss: (z_0, ∂ℒ/∂h_{−1}), (h_0, g_0^z), (z_1, g_0^h), …, (ŷ, g_{T−1}^h),
        (ℒ, e). Otherwise each forward row stands beside its own adjoint.
        """
        L, run, ro = self.ledger, self.run, self.loss.readout
        if run.kind == "rnn" and ro.final_only:
            chain = []
            for z, h in zip(run.z, run.h):
                chain += [z.name, h.name]
            chain += [ro.yhat[0].name, self.loss.name]
            before = [None if run.h_init is None else run.h_init.name] + chain[:-1]
            return [(f, self.grads.map.get(b) if b is not None else None) for f, b in zip(chain, before)]
        rows = [it.name for it in L.forward_rows() if it.name in self.grads.map or it.name == self.loss.name]
        return [(n, self.grads.map.get(n)) for n in rows]

    # -- sums over uses
    def uses(self, leaf) -> list:
        """The contributions of each use of ``leaf`` to its gradient (SymPy terms or nodes), in ledger order."""
        name = leaf if isinstance(leaf, str) else leaf.name
        node = self.ledger[self.grads.name(name)].node
        if isinstance(node, ops.Scalar):
            return list(sp.Add.make_args(node.expr))
        if isinstance(node, ops.Add):
            return list(node.children)
        return [node]

    def closed_form(self, leaf, *, keep=None):
        """The gradient of ``leaf`` with the adjoint rows substituted in, keeping the forward rows as symbols.

        By default every forward row of the recurrence and the readout stays a
        symbol (z_t, h_t, ŷ), which is how the handout writes path products.
        """
        name = leaf if isinstance(leaf, str) else leaf.name
        if keep is None:
            keep = forward_names(self)
        return self.ledger.expand(self.grads.name(name), keep=keep)


def forward_names(bp: BPTT) -> list[str]:
    """The names of the recurrence's and the readout's forward rows (z_t, h_t, gates, c_t, ŷ_t)."""
    run, ro = bp.run, bp.loss.readout
    out = [z.name for z in run.z] + [h.name for h in run.h] + [c.name for c in run.c]
    for rows in run.gates.values():
        out += [r.name for r in rows]
    out += [y.name for y in ro.yhat]
    return out


def _default_names(run: Recurrence, loss: SquaredError) -> dict:
    names = {}
    for t, h in enumerate(run.h):
        names[h.name] = f"g_{t}^h"
    for t, z in enumerate(run.z):
        names[z.name] = f"g_{t}^z"
    for t, c in enumerate(run.c):
        names[c.name] = f"g_{t}^c"
    for key, rows in run.gates.items():
        for t, r in enumerate(rows):
            names[r.name] = f"g_{t}^{{{key}}}"
    ro = loss.readout
    if loss.scale == 1:
        for q, y in zip(ro.positions, ro.yhat):
            names[y.name] = "e" if ro.final_only else f"e_{q}"
    return names


def bptt(L: Ledger, run: Recurrence, loss: SquaredError, *, names: dict | None = None, wrt=None) -> BPTT:
    """Run the ledger's reverse mode from ``loss`` and name the sensitivities as the handout does.

    The adjoint of h_t is g_t^h, of z_t g_t^z, of c_t g_t^c, of a gate a_t
    g_t^{a}; the adjoint of ŷ is e (e_q per position) when the loss is an
    unscaled sum, and ∂ℒ/∂ŷ_q otherwise (it equals e_q/T, e_q/B for means).
    ``names`` overrides any of these. The recurrence's rows must not carry a
    tag whose names would clash with another recurrence in the same ledger.

    Raises:
        LedgerError: when a name is already taken (run backward once per loss).
    """
    all_names = _default_names(run, loss)
    all_names.update(names or {})
    grads = L.backward(loss.name, names=all_names, wrt=wrt)
    return BPTT(L, run, loss, grads, all_names)


# ---------------------------------------------------------------------------
# path products (scalar Elman)
# ---------------------------------------------------------------------------


def _scalar_elman(bp: BPTT):
    run = bp.run
    if run.kind != "rnn" or not run.scalar:
        raise ConventionError(
            f"path sums are written for the scalar Elman RNN (the handout's bracketed sums); this recurrence is a "
            f"{'vector ' if not run.scalar else ''}{run.kind}. For vector states use symseq.derive.jacobians."
        )
    return run


def phi_prime(bp: BPTT, t: int) -> sp.Expr:
    """φ′(z_t) as the ledger writes it (a Derivative for a general φ, 1 − tanh²(z_t) for tanh)."""
    run = bp.run
    return derivative(run.phi)(run.z[t])


def error_signal(bp: BPTT, q: int) -> sp.Expr:
    """s (ŷ_q − y_q): the direct error signal at a scored position, with its 1/T and 1/B scale."""
    ro = bp.loss.readout
    k = ro.positions.index(q)
    return bp.loss.scale * (ro.yhat[k] - bp.loss.targets[k])


def paths_to_z(bp: BPTT, t: int, _factors: dict | None = None) -> list[list[sp.Expr]]:
    """The paths from the loss to z_t, each as its list of factors, from first principles (not from the ledger).

    One path per scored position q ≥ t: [s(ŷ_q − y_q), w_o, w_h φ′(z_q), …, w_h φ′(z_{t+1}), φ′(z_t)]:
    the error signal, the head, one factor per recurrent transition, the activation at t. Their sum is g_t^z.
    """
    _scalar_elman(bp)
    ro = bp.loss.readout
    f = _factors if _factors is not None else _path_factors(bp)
    return [[f["e"][q], ro.W_o] + f["step"][q:t:-1] + [f["act"][t]] for q in ro.positions if q >= t]


def _path_factors(bp: BPTT) -> dict:
    """The distinct factors of every path, built once: errors s(ŷ_q − y_q), slopes φ′(z_t), transitions w_h φ′(z_t)."""
    run = bp.run
    act = [phi_prime(bp, t) for t in range(run.T)]
    return {"act": act, "step": [run.params.W_h * a for a in act],
            "e": {q: error_signal(bp, q) for q in bp.loss.readout.positions}}


def path_to_z(bp: BPTT, t: int) -> sp.Expr:
    """g_t^z as a sum of path products: Σ_{q scored, q ≥ t} s e_q w_o Π_{k=t+1}^{q} [w_h φ′(z_k)] · φ′(z_t)."""
    return sp.Add(*[sp.Mul(*f) for f in paths_to_z(bp, t)])


def path_terms(bp: BPTT, wrt: str) -> list[list[sp.Expr]]:
    """Every path contributing to a scalar Elman gradient, as lists of factors (see :func:`path_sum`).

    ``wrt`` is ``"w_x"``, ``"w_h"``, ``"w_o"``, ``"b"`` (the cell bias),
    ``"b_o"``, the name of an input x_t, or ``"h_init"``.

    Raises:
        ConventionError: for a vector or gated recurrence, or an unknown ``wrt``.
    """
    run = _scalar_elman(bp)
    ro = bp.loss.readout
    T = run.T
    p = run.params
    if wrt == "w_o":
        return [[error_signal(bp, q), h] for q, h in zip(ro.positions, ro.states)]
    if wrt == "b_o":
        return [[error_signal(bp, q)] for q in ro.positions]
    factors = _path_factors(bp)
    if wrt in ("w_x", "w_h", "b"):
        prev = [run.h_init if run.h_init is not None else sp.S.Zero] + run.h[:-1]
        local = {"w_x": run.x, "w_h": prev, "b": [sp.S.One] * T}[wrt]
        return [f + [local[t]] for t in range(T) for f in paths_to_z(bp, t, factors)]
    if wrt == "h_init":
        return [f + [p.W_h] for f in paths_to_z(bp, 0, factors)]
    for t, x in enumerate(run.x):
        if getattr(x, "name", None) == wrt:
            return [f + [p.W_x] for f in paths_to_z(bp, t, factors)]
    raise ConventionError(f"unknown gradient {wrt!r} for path sums; use w_x, w_h, w_o, b, b_o, h_init or an input name")


def path_sum(bp: BPTT, wrt: str) -> sp.Expr:
    """A scalar Elman gradient as the handout's bracketed sum of path products (seed 004, "Why shared-weight
    gradients contain sums"): one product per path from the loss to a use of the parameter.

    For the three-step final-only model::

        ∂ℒ/∂w_x = (ŷ − y) w_o [φ′(z_2) w_h φ′(z_1) w_h φ′(z_0) x_0 + φ′(z_2) w_h φ′(z_1) x_1 + φ′(z_2) x_2]

    The expression has O(T²) factors for a final-only loss and O(T³) when
    every position is scored; for long sequences evaluate it with
    :func:`path_sum_value` instead of building it.
    """
    return sp.Add(*[sp.Mul(*f) for f in path_terms(bp, wrt)])


def path_sum_value(bp: BPTT, wrt: str, value) -> object:
    """The path sum evaluated path by path: Σ_paths Π value(factor), each distinct factor evaluated once.

    ``value`` maps a factor (a small SymPy expression over the ledger's names,
    such as 1 − tanh²(z_7)) to a number (mpmath, float or exact); products and
    sums use that number type. This is the same enumeration as :func:`path_sum`,
    without building the O(T³) expression.
    """
    memo: dict = {}

    def v(f):
        if f not in memo:
            memo[f] = value(f)
        return memo[f]

    total = None
    for path in path_terms(bp, wrt):
        prod = None
        for f in path:
            prod = v(f) if prod is None else prod * v(f)
        total = prod if total is None else total + prod
    return total


def factor_values(values: dict, dps: int = 50):
    """A ``value`` function for :func:`path_sum_value`: each factor evaluated with mpmath at ``dps`` digits.

    ``values`` maps ledger names to numbers (mpmath mpf, floats taken exactly,
    or exact SymPy numbers), e.g. the forward rows from
    ``symseq.evaluate(L, "mpmath", ...)``. Returns mpf numbers.
    """
    ctx = mpmath.MPContext()
    ctx.dps = dps

    def value(expr):
        sub = {}
        for sym in expr.free_symbols:
            if sym.name not in values:
                raise LedgerError(f"no value for {sym.name}, which the factor {expr} uses")
            v = values[sym.name]
            sub[sym] = v if isinstance(v, sp.Basic) else sp.Float(v, dps + 5)
        out = sp.N(expr.xreplace(sub), dps + 5)
        return ctx.mpf(sp.Float(out, dps + 5)._mpf_)

    return value


def state_sensitivity(bp: BPTT, s: int, q: int) -> sp.Expr:
    """∂h_q/∂h_s = Π_{t=s+1}^{q} w_h φ′(z_t) for s ≤ q (1 when s = q): the factor that carries a sensitivity
    from h_q back to h_s when no loss lies between them (seed 004, "What the products say")."""
    run = _scalar_elman(bp)
    if not 0 <= s <= q < run.T:
        raise ConventionError(f"need 0 ≤ s ≤ q < T = {run.T}; got s={s}, q={q}")
    return sp.Mul(*[run.params.W_h * phi_prime(bp, t) for t in range(s + 1, q + 1)])


def expanded_equals_path_sum(bp: BPTT, wrt: str) -> sp.Expr:
    """The difference (recursion, expanded) − (path sum): zero exactly when the two forms agree."""
    b = bp.run.params.b
    b = b[0] if isinstance(b, (tuple, list)) else b  # torch's two biases receive the same gradient
    leaf = {"w_x": bp.run.params.W_x, "w_h": bp.run.params.W_h, "w_o": bp.loss.readout.W_o,
            "b": b, "h_init": bp.run.h_init}.get(wrt, wrt)
    if leaf is None:
        raise LedgerError(f"this recurrence has no {wrt}")
    name = leaf if isinstance(leaf, str) else leaf.name
    return sp.expand(bp.closed_form(name) - path_sum(bp, wrt))
