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

:func:`scalar_rnn` and :func:`vector_rnn` build the handout's two models (the
Elman RNN, a regression head, ½ the squared error, BPTT) in one call;
:func:`final_loss_sensitivities` and :func:`scalar_path_bound` check the
bounds |g_s^h| ≤ |g_q^h| r^{q−s} (every factor at most r) and ≥ (every factor at
least r) of "What the products say about long-range gradients" on a trajectory.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy as sp

from .. import ops
from ..backends import evaluate
from ..blocks import cells, heads
from ..blocks.cells import Recurrence, derivative
from ..blocks.heads import SquaredError
from ..errors import ConventionError, LedgerError
from ..ledger import Gradients, Ledger
from ..numbers import exact, short, to_mpf
from . import jacobians

PHI = sp.Function("phi")
"""The general activation φ of the handout's derivations: an undefined function, so results are identities."""
PHI.__module__ = __name__  # (SymPy leaves it None, which pydoc, and so help() on this module, cannot render)


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

    def ref(self, name: str) -> ops.Ref:
        """The node of row or leaf ``name`` (scalar or matrix), to compare values with ``Section.agree``."""
        return ops.Ref(name, self.ledger.shape(name), self.ledger)

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

    def g(k, sup):  # the adjoint of the k-th step's row, at the page's time start + k
        t = run.start + k
        return f"g_{t}^{sup}" if t >= 0 else f"g_{{{t}}}^{sup}"

    for k, h in enumerate(run.h):
        names[h.name] = g(k, "h")
    for k, z in enumerate(run.z):
        names[z.name] = g(k, "z")
    for k, c in enumerate(run.c):
        names[c.name] = g(k, "c")
    for key, rows in run.gates.items():
        for k, r in enumerate(rows):
            names[r.name] = g(k, f"{{{key}}}")
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
    The subscript is the page's time: with ``cells.rnn(..., start=1)`` the
    adjoint of h_1 is g_1^h. (Arguments named ``t`` of this module's functions,
    such as :meth:`BPTT.g_h`, count the steps from 0 whatever ``start``;
    :meth:`BPTT.adjoint` of a row's handle needs no count.)

    Raises:
        LedgerError: when a name is already taken (run backward once per loss).
    """
    all_names = _default_names(run, loss)
    all_names.update(names or {})
    grads = L.backward(loss.name, names=all_names, wrt=wrt)
    return BPTT(L, run, loss, grads, all_names)


# ---------------------------------------------------------------------------
# per-time-step terms of a shared weight's gradient
# ---------------------------------------------------------------------------

STEP_WEIGHTS = ("W_x", "W_h", "b")
"""The shared Elman weights :func:`step_term` splits by time step (the input weight, the recurrent weight, the
cell bias), by their roles; the parameter's own handle or ledger name is accepted too."""


def step_term(bp: BPTT, wrt, t: int):
    """The contribution of time step ``t`` to the gradient of a shared Elman weight, as BPTT pages print it
    ("∂ℒ/∂W_x at t = 2").

    The gradient of a weight used at every step is the sum of one term per step (Week 06 handout, 004, "Why
    shared-weight gradients contain sums"; the ledger's adjoint row of the weight is that sum)::

        ∇_{W_x} ℒ = Σ_t (g_t^z)ᵀ x_t,     ∇_{W_h} ℒ = Σ_t (g_t^z)ᵀ h_{t−1},     ∇_b ℒ = Σ_t 1ᵀ g_t^z

    and this function returns the term of one t: (g_t^z)ᵀ x_t, (g_t^z)ᵀ h_{t−1} (zero at the first step when
    the initial state is left out) or the column sums of g_t^z (summed over the B examples). Each equals the
    gradient with respect to a copy of the weight used at step t only (torch: one ``nn.Parameter`` per step).

    Args:
        bp: the BPTT pass (:func:`bptt`) of an Elman recurrence (:func:`symseq.blocks.cells.rnn`).
        wrt: ``"W_x"``, ``"W_h"`` or ``"b"`` (:data:`STEP_WEIGHTS`), or the parameter's handle or ledger name
            (``"weight_ih_l0"``; for torch's two biases, either one: both get the same term).
        t: the time step as the recurrence's rows are named (``start``, …, ``start + T − 1``; with
            ``cells.rnn(..., start=1)`` the first step is t = 1).

    Returns:
        A node over the ledger of the weight's shape: W_x H×D, W_h H×H, b 1×H (g_t^z is B×H, x_t B×D,
        h_{t−1} B×H); a SymPy expression over the ledger's names for the scalar RNN. Claim it like any value,
        ``s.claim("0.0123", bptt.step_term(bp, "W_x", 2), what="∂ℒ/∂W_x at t = 2")`` (register the ledger with
        ``s.use(L)`` when a helper built it); the terms of every t add up to the adjoint row ``bp.adjoint(W_x)``.

    Raises:
        ConventionError: a GRU or LSTM recurrence, or a weight that is none of the cell's.
        LedgerError: a step t outside the recurrence, or a weight the backward pass gave no adjoint (``wrt=``).

    Source: Week 06 handout (004), "Match each forward operation to its backward calculation" (Table 3) and the
    sums over uses; torch autograd on per-step copies of the weight (tests/test_authoring_fixes.py).
    """
    run = bp.run
    if run.kind != "rnn":
        raise ConventionError(f"step_term splits the shared weights of the Elman RNN (W_x, W_h, b); this recurrence "
                              f"is a {run.kind}: claim its gradient rows (bp.adjoint(name)) instead")
    role = _step_role(run, wrt)
    k = t - run.start
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= k < run.T:
        raise LedgerError(f"step_term: t = {t!r} is no step of this recurrence; its steps are t = {run.start}, …, "
                          f"{run.start + run.T - 1}")
    g = bp.symbol(bp.g_z(k)) if run.scalar else bp.ref(bp.g_z(k))
    if role == "b":
        return g if run.scalar else ops.Sum(g, 0)
    if role == "W_x":
        local = run.x[k]
    else:
        local = run.h[k - 1] if k > 0 else run.h_init
        if local is None:  # h_{start−1} = 0 is left out: the first step adds nothing to ∇_{W_h}
            return sp.S.Zero if run.scalar else ops.Const(sp.zeros(*run.params.W_h.shape))
    return g * local if run.scalar else g.T @ local


def _step_role(run: Recurrence, wrt) -> str:
    """"W_x", "W_h" or "b" for a role name, a parameter's handle, or its ledger name."""
    if isinstance(wrt, str) and wrt in STEP_WEIGHTS:
        return wrt
    name = wrt if isinstance(wrt, str) else getattr(wrt, "name", None)
    p = run.params
    for role, leaf in (("W_x", p.W_x), ("W_h", p.W_h)):
        if getattr(leaf, "name", None) == name:
            return role
    if any(getattr(b, "name", None) == name for b in cells._biases(p.b)):
        return "b"
    raise ConventionError(f"step_term: {wrt!r} is none of the cell's shared weights; give 'W_x', 'W_h' or 'b', or "
                          f"the handle of {', '.join(str(getattr(x, 'name', x)) for x in [p.W_x, p.W_h] + cells._biases(p.b))}")


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


# ---------------------------------------------------------------------------
# the handout's models in one call
# ---------------------------------------------------------------------------


def scalar_rnn(title: str, *, T: int = 3, activation=PHI, positions="final", loss_positions="sum",
               h_init: bool = True, values: dict | None = None, ledger: Ledger | None = None):
    """The scalar RNN of seed ``004_daeab95066cb0286.txt`` (Week 06, "One scalar recurrent model: the
    three-step problem") with its loss and backward pass::

        z_t = w_x x_t + w_h h_{t−1},  h_t = φ(z_t),  ŷ_q = w_o h_q,  ℒ = s Σ_q ½ (ŷ_q − y_q)²

    Args:
        title: the ledger's title (a new ledger with ``exact_forms=False`` unless ``ledger`` is given).
        T: the number of positions; inputs x_0 … x_{T−1}, parameters w_x, w_h, w_o (scalars).
        activation: φ (default the undefined function ``phi``; ``sympy.tanh``, ``relu``, ``"identity"``, …).
        positions: the scored positions (``"final"``: one prediction ŷ and target y; ``"all"``; a list).
        loss_positions: ``"sum"`` or ``"mean"`` over the scored positions (s = 1 or 1/T).
        h_init: add the input h_{−1} = 0 (the handout's fixed initial state) rather than leaving its term out.
        values: exact values by leaf name (``x_t``, ``w_x``, ``w_h``, ``w_o``, ``y`` or ``y_q``); leaves
            not named stay symbolic. Targets are created here when ``values`` names one.

    Returns:
        (ledger, :class:`~symseq.blocks.cells.Recurrence`, :class:`BPTT`): the adjoints are named g_t^h, g_t^z, e.
    """
    values = values or {}
    L = ledger or Ledger(title, exact_forms=False)
    xs = [L.input(f"x_{t}", values.get(f"x_{t}")) for t in range(T)]
    w_x, w_h, w_o = (L.parameter(n, values.get(n)) for n in ("w_x", "w_h", "w_o"))
    h0 = L.input("h_{-1}", 0, note="fixed initial state") if h_init else None
    run = cells.rnn(L, xs, w_x, w_h, phi=activation, h_init=h0)
    head = heads.regression_head(L, run, w_o, positions=positions)
    targets = None
    if "y" in values or any(k.startswith("y_") for k in values):
        names = ["y" if head.final_only else f"y_{q}" for q in head.positions]
        targets = [L.input(n, values.get(n)) for n in names]
    loss = heads.squared_error(L, head, targets, positions=loss_positions)
    return L, run, bptt(L, run, loss)


def vector_rnn(title: str, *, T: int = 3, D: int = 2, H: int = 2, C: int = 1, B: int = 1, activation=PHI,
               bias: bool = False, head_bias: bool = False, positions="final", loss_positions="sum",
               batch="sum", h_init: bool = False):
    """The vector RNN of seed ``004_daeab95066cb0286.txt`` (Week 06, "General forward pass: read the shapes
    with the equation (Table 5)"), symbolic, with the handout's names::

        z_t = x_t W_xᵀ + h_{t−1} W_hᵀ + b_h,  h_t = φ(z_t),  ŷ_q = h_q W_oᵀ + b_o,
        ℒ = s Σ_q ½ ‖ŷ_q − y_q‖²   (summed over the C outputs and the B examples; s = 1, 1/T, 1/B or 1/(TB))

    Shapes: x_t B×D, W_x H×D, W_h H×H, b_h 1×H, h_t and z_t B×H, W_o C×H, b_o 1×C, ŷ_q and y_q B×C.
    ``h_init`` adds a symbolic input h_{−1} (B×H); otherwise h_{−1} = 0 and its term is left out.
    ``batch`` is ``"sum"`` or ``"mean"`` over the examples; other arguments as for :func:`scalar_rnn`.

    Returns:
        (ledger, :class:`~symseq.blocks.cells.Recurrence`, :class:`BPTT`).
    """
    L = Ledger(title, exact_forms=False)
    xs = cells.sequence_inputs(L, T, width=D, batch=B)
    p = cells.rnn_parameters(L, D, H, bias=bias, naming="handout")
    h0 = L.input("h_{-1}", shape=(B, H)) if h_init else None
    run = cells.rnn(L, xs, p.W_x, p.W_h, p.b, phi=activation, h_init=h0)
    W_o = L.parameter("W_o", shape=(C, H))
    b_o = L.parameter("b_o", shape=(1, C)) if head_bias else None
    head = heads.regression_head(L, run, W_o, b_o, positions=positions)
    loss = heads.squared_error(L, head, positions=loss_positions, batch=batch)
    return L, run, bptt(L, run, loss)


def loss_factor(L: Ledger, yhat: str = "ŷ", y: str = "y", loss: str = "ℒ") -> sp.Expr:
    """The factor c of a squared-error row ℒ = c (ŷ − y)², read from the ledger (a scalar or 1×1 prediction).

    The handout's ℒ = ½(ŷ − y)² (seed 004, Week 06, "One scalar recurrent model") has c = 1/2, the factor
    that cancels the 2 of the square so that ∂ℒ/∂ŷ = ŷ − y.
    """
    if L.shape(yhat) == ():
        err, total = L.symbol(yhat) - L.symbol(y), L[loss].node.expr
    else:
        err, total = L.entry_symbols(yhat)[0] - L.entry_symbols(y)[0], L.expand(loss, keep=[yhat])
    return sp.simplify(total / err ** 2)


def widths_one(T: int = 3) -> tuple[sp.Expr, list]:
    """The vector RNN with D = H = C = 1 against the scalar RNN (seed 004, Week 06, "Two coordinates are two
    coupled scalar updates": setting D = H = C = 1 recovers the scalar model), both with h_{−1} = 0 left out.

    Returns (ℒ_vector − ℒ_scalar, [∂ℒ/∂W_k − ∂ℒ/∂w_k for k = x, h, o]) in closed form over the scalar model's
    symbols (W_{x,00} renamed w_x, …): each is zero exactly when the two models are the same.
    """
    L1, _, bp1 = vector_rnn("vector RNN with D = H = C = 1", T=T, D=1, H=1, C=1)
    Ls, _, bps = scalar_rnn("scalar RNN, h_{−1} left out", T=T, h_init=False)
    ren = {L1.entry_symbols(f"W_{k}")[0, 0]: Ls.symbol(f"w_{k}") for k in ("x", "h", "o")}
    ren.update({L1.entry_symbols(f"x_{t}")[0, 0]: Ls.symbol(f"x_{t}") for t in range(T)})
    ren[L1.entry_symbols("y")[0, 0]] = Ls.symbol("y")
    return (sp.expand(L1.expand("ℒ").xreplace(ren) - Ls.expand("ℒ")),
            [sp.expand(L1.expand(bp1.grads.name(f"W_{k}"))[0, 0].xreplace(ren) - Ls.expand(bps.grads.name(f"w_{k}")))
             for k in ("x", "h", "o")])


def labelled_uses(T: int = 3, activation=PHI, title: str = "three uses of w_x labelled separately"):
    """The scalar RNN of :func:`scalar_rnn` with each use of the input weight labelled as its own parameter
    w_x^[0], …, w_x^[T−1] (seed 004, Week 06, "Why shared-weight gradients contain sums")::

        z_t = w_x^[t] x_t + w_h h_{t−1},  h_t = φ(z_t),  ŷ = w_o h_{T−1},  ℒ = ½ (ŷ − y)²   (h_{−1} = 0 left out)

    Setting every w_x^[t] to w_x gives the shared model, and ∂ℒ/∂w_x = Σ_t ∂ℒ/∂w_x^[t] (each ∂w_x^[t]/∂w_x = 1).

    Returns:
        (ledger, [∂ℒ/∂w_x^[t] in closed form over the leaves, for t = 0 … T−1]).
    """
    L = Ledger(title, exact_forms=False)
    w_h, w_o, y, h = L.parameter("w_h"), L.parameter("w_o"), L.input("y"), 0
    for t in range(T):
        z = L.define(f"z_{t}", L.parameter(f"w_x^[{t}]") * L.input(f"x_{t}") + w_h * h)
        h = L.define(f"h_{t}", cells.apply(activation, z))
    L.define("ℒ", (L.define("ŷ", w_o * h) - y) ** 2 / 2)
    g = L.backward("ℒ")
    return L, [L.expand(g.name(f"w_x^[{t}]")) for t in range(T)]


# ---------------------------------------------------------------------------
# bounds on path products along a trajectory
# ---------------------------------------------------------------------------


def final_loss_sensitivities(activation, w_h, xs, *, dps: int = 40) -> tuple[list, list]:
    """|g_t^h| = |∂ℒ/∂h_t| for t = 0 … T−1 and the transition factors |∂h_t/∂h_{t−1}| = |w_h φ′(z_t)| for
    t = 1 … T−1 (lists of T and T − 1 mpmath numbers at ``dps`` digits), along the scalar RNN with inputs ``xs``
    (exact numbers), the given exact w_h, w_x = w_o = 1, h_{−1} = 0 and a final loss ½ ŷ² (y = 0).

    Seed 004, Week 06, "What the products say about long-range gradients": g_s^h = g_q^h Π_{t=s+1}^{q} w_h φ′(z_t).
    """
    T = len(xs)
    L, run, bp = scalar_rnn(f"{T}-step scalar RNN, w_h = {w_h}", T=T, activation=activation,
                            values={**{f"x_{t}": x for t, x in enumerate(xs)}, "w_x": 1, "w_h": w_h, "w_o": 1, "y": 0})
    J = [jacobians.elman_jacobian(L, run, t) for t in range(1, T)]
    ev = evaluate(L, "mpmath", dps=dps)
    return [abs(ev[bp.g_h(t)]) for t in range(T)], [abs(ev[j.name]) for j in J]


def scalar_path_bound(activation, w_h, xs, r, *, lower: bool = False, rtol="1e-30") -> tuple[bool, str]:
    """Along the trajectory of :func:`final_loss_sensitivities`: every transition factor is at most r (``lower``:
    at least r), and for every pair s < q, |g_s^h| ≤ |g_q^h| r^{q−s} (``lower``: ≥), to a relative ``rtol``.

    Seed 004, Week 06, "What the products say about long-range gradients": with every factor at most r < 1 the
    sensitivity shrinks with the path length; with a sustained lower bound r > 1 it grows.

    Returns:
        (holds, detail): the extreme factor, the extreme ratio |g_s^h| / (|g_q^h| r^{q−s}) over the T(T − 1)/2
        pairs, and |g_0^h| / |g_{T−1}^h|.
    """
    g, f = final_loss_sensitivities(activation, w_h, xs)
    rm, slack = to_mpf(exact(r), 40), to_mpf(exact(rtol), 40)
    # each factor against r to the same relative rtol as the path products (a factor equal to r is within), at
    # the factors' own 40 digits whatever mpmath's global precision
    with mpmath.workdps(40):
        within = all(x >= rm * (1 - slack) for x in f) if lower else all(x <= rm * (1 + slack) for x in f)
    ok, detail = jacobians.path_bound(g, [rm] * len(f), lower=lower, rtol=rtol)
    extreme = min(f) if lower else max(f)
    return within and ok, (f"{'smallest' if lower else 'largest'} factor {short(extreme, 6)}; {detail}; "
                           f"|g_0|/|g_{len(g) - 1}| = {short(g[0] / g[-1], 6)}")
