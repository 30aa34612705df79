"""State-to-state Jacobians of recurrent cells, their products and norm bounds, and activation slopes.

For one example (B = 1, row vectors), with (J_t)_ij = ∂h_{t,i}/∂h_{t−1,j}
(Week 06 handout, 004, "Matrix paths can shrink, grow, and change direction")::

    Elman:  J_t = diag(φ′(z_t)) W_h                              H×H
            g_{t−1}^h = g_t^h J_t,   g_s^h = g_q^h J_q J_{q−1} ⋯ J_{s+1}   (no losses between s and q)
            ‖g_s^h‖₂ ≤ ‖g_q^h‖₂ Π_{t=s+1}^{q} ‖J_t‖₂                 (spectral norms; :func:`path_bound`)

    GRU (torch): h_t = u ⊙ h_{t−1} + (1 − u) ⊙ h̃; direct carry diag(u_t) (gates and candidate held fixed);
        J_t = diag(u) + diag((h_{t−1} − h̃) ⊙ u ⊙ (1 − u)) W_hu
              + diag((1 − u) ⊙ (1 − h̃²) ⊙ r) W_hn
              + diag((1 − u) ⊙ (1 − h̃²) ⊙ (h_{t−1} W_hnᵀ + b_hn) ⊙ r ⊙ (1 − r)) W_hr
      (cho2014: the last two terms become diag((1 − u) ⊙ (1 − h̃²)) W_hn (diag(r) + diag(h_{t−1} ⊙ r ⊙ (1 − r)) W_hr))

    LSTM, state (c, h): direct carry ∂c_t/∂c_{t−1} = diag(f_t); the full 2H×2H Jacobian is
        [[diag(f),              K                                     ],
         [diag(o ⊙ τ′ ⊙ f),     diag(tanh(c_t) ⊙ o ⊙ (1 − o)) W_ho + diag(o ⊙ τ′) K]]
        K = ∂c_t/∂h_{t−1} = diag(c_{t−1} ⊙ f ⊙ (1 − f)) W_hf + diag(c̃ ⊙ i ⊙ (1 − i)) W_hi + diag(i ⊙ (1 − c̃²)) W_hc
        τ′ = 1 − tanh²(c_t)

The rows these functions append are ordinary ledger rows (exact, mpmath,
NumPy or torch values); the closed forms are proved against the Jacobian of
the expanded cell by :func:`state_jacobian`.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from .. import ops
from ..blocks.cells import IDENTITY, Recurrence, derivative
from ..errors import ConventionError, ShapeError
from ..functions import jacobian, relu, sigmoid
from ..numbers import exact, short


class Diag(ops.Node):
    """diag(v): the H×H diagonal matrix of a 1×H row v (a Jacobian's activation slopes).

    Adjoint: Ḡ_v = the diagonal of Ḡ as a 1×H row.
    """

    prec = ops.ATOM

    def __init__(self, v):
        if v.shape == () or v.shape[0] != 1:
            raise ShapeError(f"diag needs a 1×H row; got {ops._fmt_shape(v.shape)} (take one example's row first)")
        self.children = (v,)
        n = v.shape[1]
        self.shape = (n, n)
        self.eye = sp.eye(n)

    def forward(self, k, vals):
        return k.mul(k.transpose(vals[0]), k.const(self.eye))

    def vjp(self, G, out):
        return (ops.Sum(ops.mul(G, ops.Const(self.eye, label="I")), 0),)

    def render(self, fmt, parts):
        return fmt.call("diag", [parts[0]])


def diag(v) -> Diag:
    """The node diag(v) for a 1×H row node v."""
    return Diag(ops.as_node(v))


def _one_example(run: Recurrence):
    if run.scalar:
        return
    if run.batch != 1:
        raise ShapeError(f"a state Jacobian is per example; this recurrence has a batch of {run.batch} "
                         f"(build it with B = 1)")


def _previous(run: Recurrence, t: int, which: str = "h"):
    if not 0 <= t < run.T:
        raise ShapeError(f"time step {t} is outside 0..{run.T - 1}")
    if t > 0:
        return (run.h if which == "h" else run.c)[t - 1]
    init = run.h_init if which == "h" else run.c_init
    if init is None:
        raise ConventionError(
            f"the Jacobian at t = 0 needs a given initial state {which}_{{-1}}; this recurrence started from zero "
            f"with its terms left out (pass h_init=... to the cell)"
        )
    return init


# ---------------------------------------------------------------------------
# Elman
# ---------------------------------------------------------------------------


def elman_jacobian(L, run: Recurrence, t: int, *, name: str | None = None):
    """Append J_t := diag(φ′(z_t)) W_h (H×H; scalar: w_h φ′(z_t)) and return its handle."""
    if run.kind != "rnn":
        raise ConventionError(f"elman_jacobian needs an Elman recurrence; this one is a {run.kind} "
                              f"(use gru_jacobian or lstm_jacobian)")
    _one_example(run)
    name = name or f"J_{t}"
    if name in L:
        return L.handle(name)
    d = derivative(run.phi)
    if run.scalar:
        return L.define(name, run.params.W_h * d(run.z[t]), note="∂h_t/∂h_{t−1}")
    slopes = ops.Map(d, run.z[t]) if not d.expr.is_number else ops.Const(sp.ones(1, run.width) * d.expr)
    return L.define(name, diag(slopes) @ run.params.W_h, note="∂h_t/∂h_{t−1} = diag(φ′(z_t)) W_h")


def jacobian_product(L, run: Recurrence, q: int, s: int, *, name: str | None = None):
    """Append J_q J_{q−1} ⋯ J_{s+1} (∂h_q/∂h_s; the identity when s = q) and return its handle.

    The order matters: a row sensitivity g_q^h is multiplied on the right,
    g_s^h = g_q^h J_q ⋯ J_{s+1}.
    """
    if not 0 <= s <= q < run.T:
        raise ShapeError(f"need 0 ≤ s ≤ q < T = {run.T}; got s={s}, q={q}")
    name = name or f"J_{{{q}←{s}}}"
    if q == s:
        one = sp.S.One if run.scalar else sp.eye(run.width)
        return L.define(name, one if run.scalar else ops.Const(one, label="I"))
    Js = [elman_jacobian(L, run, t) for t in range(q, s, -1)]
    out = Js[0]
    for J in Js[1:]:
        out = out * J if run.scalar else out @ J
    return L.define(name, out, note=f"∂h_{q}/∂h_{s}")


def spectral_norm(M, dps: int = 30):
    """‖M‖₂, the largest singular value, with mpmath at ``dps`` digits (M: SymPy, NumPy or mpmath values)."""
    ctx = mpmath.MPContext()
    ctx.dps = dps
    if isinstance(M, sp.MatrixBase):
        rows = [[ctx.mpf(sp.Float(sp.N(M[i, j], dps + 5), dps + 5)._mpf_) for j in range(M.cols)]
                for i in range(M.rows)]
    else:
        arr = np.asarray(M, dtype=object)
        if arr.ndim == 0:
            return abs(ctx.mpf(arr.item()))
        rows = [[ctx.mpf(x) for x in r] for r in arr]
    if not rows or not rows[0]:
        raise ShapeError("the spectral norm of an empty matrix is undefined")
    s = ctx.svd_r(ctx.matrix(rows), compute_uv=False)
    return max(abs(s[i]) for i in range(len(s)))


def path_bound(g, factors, *, lower: bool = False, rtol=0) -> tuple[bool, str]:
    """The bound of a sensitivity carried back along a path, checked for every pair s < q::

        ‖g_s‖ ≤ ‖g_q‖ Π_{t=s+1}^{q} f_t        (``lower``: ≥)

    Seed ``004_daeab95066cb0286.txt``, Week 06, "Matrix paths can shrink, grow, and change direction"
    (f_t = ‖J_t‖₂, since g_s^h = g_q^h J_q ⋯ J_{s+1}) and "What the products say about long-range gradients"
    (scalar factors bounded by r: f_t = r).

    Args:
        g: the sizes ‖g_0‖, …, ‖g_{T−1}‖ (numbers: mpmath, exact or float), T of them.
        factors: f_1, …, f_{T−1} (``factors[t − 1]`` bounds step t), T − 1 numbers.
        lower: check the lower bound instead.
        rtol: relative slack for rounding: ratio ≤ 1 + rtol (``lower``: ≥ 1 − rtol); a number or decimal string.

    Returns:
        (holds, detail): detail names the number of pairs and the extreme ratio ‖g_s‖ / (‖g_q‖ Π f_t).

    Raises:
        ShapeError: when there are not T − 1 factors for T sensitivities, or fewer than two sensitivities.
    """
    g, factors = list(g), list(factors)
    if len(g) < 2 or len(factors) != len(g) - 1:
        raise ShapeError(f"a path bound needs T ≥ 2 sensitivities and T − 1 factors; got {len(g)} and {len(factors)}")
    ctx = mpmath.MPContext()
    ctx.dps = 40
    num = lambda v: ctx.mpf(v) if not isinstance(v, sp.Basic) else ctx.mpf(sp.Float(v, 45)._mpf_)  # noqa: E731
    g, factors = [num(v) for v in g], [num(v) for v in factors]
    slack = num(exact(rtol) if isinstance(rtol, (str, int)) else rtol)
    ratios = []
    for q in range(1, len(g)):
        bound = g[q]
        for s in range(q - 1, -1, -1):
            bound = bound * factors[s]  # f_{s+1} joins the product as s moves back
            ratios.append(g[s] / bound if bound else (ctx.mpf(0) if not g[s] else ctx.inf))
    worst = min(ratios) if lower else max(ratios)
    ok = worst >= 1 - slack if lower else worst <= 1 + slack
    which = "smallest" if lower else "largest"
    return bool(ok), f"{which} ‖g_s‖/(‖g_q‖ Π f_t) {short(worst, 6)} over {len(ratios)} pairs"


# ---------------------------------------------------------------------------
# activation slopes (Table 4)
# ---------------------------------------------------------------------------

_Z = sp.Symbol("z", real=True)


@dataclass
class ActivationSlope:
    """One row of the activation-derivative table: φ, φ′ in closed form, and the slope's bound where there is one."""

    name: str
    phi: sp.Expr
    slope: sp.Expr
    written: sp.Expr
    bound: sp.Expr | None
    note: str


def activation_table(z: sp.Symbol = _Z) -> list[ActivationSlope]:
    """Table 4 of seed 004: identity, tanh, logistic sigmoid and ReLU with their derivatives.

    ``slope`` is sympy.diff of φ; ``written`` is the handout's form (1 − tanh², σ(1 − σ),
    the step with ReLU′(0) = 0 as torch's autograd). ``bound`` is the largest slope (None when unbounded).
    """
    return [
        ActivationSlope("identity", IDENTITY(z), sp.diff(IDENTITY(z), z), sp.S.One, sp.S.One,
                        "every transition contributes w_h"),
        ActivationSlope("tanh", sp.tanh(z), sp.diff(sp.tanh(z), z), 1 - sp.tanh(z) ** 2, sp.S.One,
                        "near one near zero, small in saturation"),
        ActivationSlope("sigmoid", sigmoid(z), sp.diff(sigmoid(z), z), sigmoid(z) * (1 - sigmoid(z)), sp.Rational(1, 4),
                        "at most 1/4, small in saturation"),
        ActivationSlope("relu", relu(z), sp.diff(relu(z), z), sp.Heaviside(z, 0), sp.S.One,
                        "1 for z > 0, 0 for z < 0; ReLU′(0) = 0 by torch's convention"),
    ]


# ---------------------------------------------------------------------------
# gated cells
# ---------------------------------------------------------------------------


def gru_carry(L, run: Recurrence, t: int, *, name: str | None = None):
    """Append diag(u_t): ∂h_t/∂h_{t−1} with the gates and the candidate held fixed (the direct carry)."""
    if run.kind != "gru":
        raise ConventionError(f"gru_carry needs a GRU recurrence; this one is a {run.kind}")
    _one_example(run)
    return L.define(name or f"C_{t}", diag(run.gates["u"][t]), note="direct carry ∂h_t/∂h_{t−1} at fixed gates")


def gru_jacobian(L, run: Recurrence, t: int, *, name: str | None = None):
    """Append the full GRU Jacobian ∂h_t/∂h_{t−1} (H×H) in closed form (module docstring), for either variant."""
    if run.kind != "gru":
        raise ConventionError(f"gru_jacobian needs a GRU recurrence; this one is a {run.kind}")
    _one_example(run)
    p = run.params
    h = _previous(run, t)
    r, u, n = run.gates["r"][t], run.gates["u"][t], run.gates["h̃"][t]
    dn = (1 - u) * (1 - n * n)  # ∂h/∂(candidate preactivation), per coordinate
    terms = [diag(u), diag((h - n) * u * (1 - u)) @ p.W_h["u"]]
    if run.variant == "cho2014":
        terms.append(diag(dn) @ p.W_h["n"] @ (diag(r) + diag(h * r * (1 - r)) @ p.W_h["r"]))
    else:
        rec = h @ p.W_h["n"].T
        if p.b_h is not None and p.b_h.get("n") is not None:
            rec = rec + p.b_h["n"]
        terms.append(diag(dn * r) @ p.W_h["n"])
        terms.append(diag(dn * rec * r * (1 - r)) @ p.W_h["r"])
    return L.define(name or f"J_{t}", ops.add(*terms), note="full ∂h_t/∂h_{t−1} of the GRU")


def lstm_carry(L, run: Recurrence, t: int, *, name: str | None = None):
    """Append diag(f_t): ∂c_t/∂c_{t−1} with the gates and the candidate held fixed (the direct carry)."""
    if run.kind != "lstm":
        raise ConventionError(f"lstm_carry needs an LSTM recurrence; this one is a {run.kind}")
    _one_example(run)
    return L.define(name or f"C_{t}", diag(run.gates["f"][t]), note="direct carry ∂c_t/∂c_{t−1} at fixed gates")


def lstm_jacobian(L, run: Recurrence, t: int, *, name: str | None = None):
    """Append the full LSTM Jacobian ∂(c_t, h_t)/∂(c_{t−1}, h_{t−1}) (2H×2H, blocks as in the module docstring)."""
    if run.kind != "lstm":
        raise ConventionError(f"lstm_jacobian needs an LSTM recurrence; this one is a {run.kind}")
    _one_example(run)
    p = run.params
    c_prev = _previous(run, t, "c")  # h_{t−1} enters only through the gates, whose values the rows already hold
    i, f, g, o = (run.gates[k][t] for k in ("i", "f", "c̃", "o"))
    c = run.c[t]
    tc = ops.Map(sp.tanh, c)
    dtc = 1 - tc * tc
    K = ops.add(diag(c_prev * f * (1 - f)) @ p.W_h["f"], diag(g * i * (1 - i)) @ p.W_h["i"],
                diag(i * (1 - g * g)) @ p.W_h["c"])
    K = L.define(f"K_{t}", K, note="∂c_t/∂h_{t−1}")
    top = ops.Concat([diag(f), K], axis=1)
    bottom = ops.Concat([diag(o * dtc * f), diag(tc * o * (1 - o)) @ p.W_h["o"] + diag(o * dtc) @ K], axis=1)
    return L.define(name or f"J_{t}", ops.Concat([top, bottom], axis=0),
                    note="full ∂(c_t, h_t)/∂(c_{t−1}, h_{t−1}), state order (c, h)")


# ---------------------------------------------------------------------------
# proofs
# ---------------------------------------------------------------------------


def state_jacobian(L, out, wrt, *, keep=()) -> sp.Matrix:
    """The Jacobian of row ``out`` with respect to the entries of ``wrt`` from the expanded ledger (SymPy).

    Rows of the result are the entries of ``out`` (row-major), columns the
    entries of ``wrt``. Names in ``keep`` stay symbols: keep the gates and the
    candidate to get a direct-carry derivative, keep nothing but ``wrt`` for
    the full one.
    """
    o = out if isinstance(out, str) else out.name
    w = wrt if isinstance(wrt, str) else wrt.name
    expr = L.expand(o, keep=list(keep) + [w])
    ys = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
    xs = list(L.entry_symbols(w))
    return jacobian(ys, xs)


def block_state_jacobian(L, outs, wrts, *, keep=()) -> sp.Matrix:
    """As :func:`state_jacobian` for stacked states: ∂(outs…)/∂(wrts…), e.g. ∂(c_t, h_t)/∂(c_{t−1}, h_{t−1})."""
    names = [w if isinstance(w, str) else w.name for w in wrts]
    ys = []
    for out in outs:
        e = L.expand(out if isinstance(out, str) else out.name, keep=list(keep) + names)
        ys += list(e) if isinstance(e, sp.MatrixBase) else [e]
    xs = [s for w in names for s in L.entry_symbols(w)]
    return jacobian(ys, xs)
