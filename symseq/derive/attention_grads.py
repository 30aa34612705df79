"""Closed-form gradients of attention, LayerNorm, residuals and cross-entropy, proved against reverse mode.

Rows are positions. Ḡ is the adjoint (upstream gradient) of a row's output.

Softmax of one row, a = softmax(s), a and s 1×n::

    ∂a/∂s = diag(a) − aᵀ a                      (n×n; J_ij = a_i (δ_ij − a_j))

Scaled dot-product attention, Q: T×d_k, K: S×d_k, V: S×d_v, Ḡ = ∂ℓ/∂O: T×d_v::

    S = Q Kᵀ/√d_k (+ M),  A = softmax_rows(S),  O = A V
    ∇_V = Aᵀ Ḡ                                  S×d_v
    ∇_A = Ḡ Vᵀ                                  T×S
    ∇_S = A ⊙ (∇_A − ((∇_A ⊙ A) 1) 1ᵀ)          T×S   (row t: ∇_A[t] (diag(a_t) − a_tᵀ a_t); 0 where masked)
    ∇_Q = ∇_S K/√d_k                            T×d_k
    ∇_K = ∇_Sᵀ Q/√d_k                           S×d_k

LayerNorm of one row x (1×d), μ = mean(x), v = mean((x − μ)²), σ = √(v + ε), x̂ = (x − μ)/σ::

    ∂LN(x)_i/∂x_j = (γ_i/σ) (δ_ij − 1/d − x̂_i x̂_j/d)

Residual y = x + F(x):  J_y = I + J_F.  Cross-entropy of logits Z (N×v) against
targets c_t, mean over the N rows, ℓ = (1/N) Σ_t (logsumexp(Z_t) − Z_{t,c_t}) in nats::

    ∂ℓ/∂Z = (P − Y)/N,  P = softmax_rows(Z), Y the one-hot rows of the targets

Each ``prove_*`` function builds a small case with symbolic entries, derives
the gradient with the ledger's reverse mode (:meth:`symseq.Ledger.backward`),
and proves it equal to the closed form exactly (the difference simplifies to
0); the attention proof also compares with SymPy's own differentiation of the
expanded loss, which shares no rule with the ledger.

Sources: Handout #11 (``001_d42a515eb3cd140c.txt``) §2.2 and §5.1; Week 7
(``003_b76f00753924d0c1.txt``), the gradient paths through P, S and V; Week 8
(``000_30e9e4099f2cd2dc.txt``) §2 (J = I + J_F); Vaswani et al. (2017) eq. (1).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .. import ops
from ..blocks.attention import scaled_dot_product
from ..blocks.norms import layer_norm
from ..numbers import exact
from ..errors import ShapeError
from ..ledger import Ledger
from ..blocks._naming import tagged
from .symbolic import Proof, reverse_jacobian, vanishes

__all__ = [
    "softmax_jacobian", "attention_gradient_rows", "attention_gradients", "layer_norm_jacobian",
    "residual_jacobian", "cross_entropy_gradient", "prove_softmax_jacobian", "prove_attention_gradients",
    "prove_layer_norm_jacobian", "prove_residual_jacobian", "prove_cross_entropy_gradient",
]


# ---------------------------------------------------------------------------
# closed forms on exact matrices
# ---------------------------------------------------------------------------


def _row(a) -> sp.Matrix:
    a = sp.Matrix(a)
    if a.rows != 1 and a.cols == 1:
        a = a.T
    if a.rows != 1:
        raise ShapeError(f"expected one row (1×n) of weights; got {a.rows}×{a.cols}")
    return a


def softmax_jacobian(a) -> sp.Matrix:
    """diag(a) − aᵀ a for one row of softmax weights a (1×n, or a list): the n×n Jacobian ∂a/∂s.

    Entry (i, j) is a_i(δ_ij − a_j): positive on the diagonal, negative off it
    when every a_i > 0, so raising one score raises its own weight and lowers
    the others (001, §2.2). Raises ShapeError unless ``a`` is one row or column.
    """
    a = _row(a)
    return sp.diag(*a) - a.T * a


def attention_gradients(Q, K, V, G, *, allowed=None, scale=None) -> dict:
    """Exact closed-form gradients of O = softmax_rows(QKᵀ/scale + M) V for upstream Ḡ (see module docstring).

    Args:
        Q: T×d_k, K: S×d_k, V: S×d_v, G: T×d_v (SymPy matrices; rows are positions).
        allowed: optional T×S boolean matrix of allowed sources (True = may be read), or a
            :class:`~symseq.ops.Mask` naming its convention; checked by :func:`symseq.ops.allowed_matrix`.
        scale: the divisor of the scores; default √d_k.

    Returns:
        dict with ``S``, ``A``, ``O`` and the gradients ``V``, ``A_bar`` (∇_A),
        ``S_bar`` (∇_S), ``Q``, ``K`` as SymPy matrices.

    Raises:
        ShapeError: when the shapes do not fit (d_k of Q and K, positions of K and V, Ḡ's shape).
        MaskError: when a query row has no allowed source.
    """
    Q, K, V, G = (sp.Matrix(x) for x in (Q, K, V, G))
    if Q.cols != K.cols:
        raise ShapeError(f"Q is {Q.rows}×{Q.cols} and K is {K.rows}×{K.cols}: queries and keys need the same d_k")
    if K.rows != V.rows:
        raise ShapeError(f"K has {K.rows} positions but V has {V.rows}; each key needs its value")
    if G.shape != (Q.rows, V.cols):
        raise ShapeError(f"the upstream adjoint is {G.rows}×{G.cols} but O is {Q.rows}×{V.cols}")
    c = sp.sqrt(Q.cols) if scale is None else exact(scale, what="scale")
    S = Q * K.T / c
    ok = ops.allowed_matrix(allowed, S.shape) if allowed is not None else np.ones(S.shape, dtype=bool)
    A = sp.zeros(*S.shape)
    for t in range(S.rows):
        js = [j for j in range(S.cols) if ok[t, j]]
        z = sum(sp.exp(S[t, j]) for j in js)
        for j in js:
            A[t, j] = sp.exp(S[t, j]) / z
    A_bar = G * V.T
    S_bar = sp.zeros(*S.shape)
    for t in range(S.rows):
        S_bar[t, :] = A_bar[t, :] * softmax_jacobian(A[t, :])
    return {"S": S, "A": A, "O": A * V, "V": A.T * G, "A_bar": A_bar, "S_bar": S_bar,
            "Q": S_bar * K / c, "K": S_bar.T * Q / c}


def layer_norm_jacobian(x, gamma=None, eps=0) -> sp.Matrix:
    """∂LN(x)/∂x for one row x (1×d): entry (i, j) = (γ_i/σ)(δ_ij − 1/d − x̂_i x̂_j/d), σ = √(v + ε).

    ``gamma`` is the gain row (1×d) or None for unit gain. Population variance
    and ε inside the root, as torch.nn.LayerNorm (Week 8, 000, §2).
    """
    x = _row(x)
    d = x.cols
    mu = sum(x) / d
    var = sum((e - mu) ** 2 for e in x) / d
    sigma = sp.sqrt(var + exact(eps, what="ε"))
    xh = [(e - mu) / sigma for e in x]
    g = [sp.S.One] * d if gamma is None else list(_row(gamma))
    return sp.Matrix(d, d, lambda i, j: g[i] / sigma * (sp.KroneckerDelta(i, j) - sp.Rational(1, d) - xh[i] * xh[j] / d))


def residual_jacobian(J_F) -> sp.Matrix:
    """I + J_F: the Jacobian of y = x + F(x) given the Jacobian J_F of F (square)."""
    J_F = sp.Matrix(J_F)
    if J_F.rows != J_F.cols:
        raise ShapeError(f"a residual sum needs F to keep the width: J_F is {J_F.rows}×{J_F.cols}")
    return sp.eye(J_F.rows) + J_F


def cross_entropy_gradient(Z, targets, *, reduction: str = "mean") -> sp.Matrix:
    """∂ℓ/∂Z = (P − Y)/N (``mean``) or P − Y (``sum``) for logits Z (N×v) and one target class per row."""
    Z = sp.Matrix(Z)
    targets = [int(c) for c in targets]
    if len(targets) != Z.rows:
        raise ShapeError(f"{len(targets)} targets for {Z.rows} rows of logits")
    P = sp.zeros(*Z.shape)
    for t in range(Z.rows):
        z = sum(sp.exp(e) for e in Z.row(t))
        for j in range(Z.cols):
            P[t, j] = sp.exp(Z[t, j]) / z
    Y = sp.Matrix(Z.rows, Z.cols, lambda t, j: 1 if j == targets[t] else 0)
    return (P - Y) / (Z.rows if reduction == "mean" else 1)


# ---------------------------------------------------------------------------
# closed forms as ledger rows (matrix formulas that print as the handouts write them)
# ---------------------------------------------------------------------------


def attention_gradient_rows(L, Q, K, V, A, G, *, scale=None, tag: str | None = None) -> dict:
    """Append the closed-form gradient rows ∇_V, ∇_A, ∇_S, ∇_Q, ∇_K of one head to ledger ``L``.

    Args:
        Q, K, V, A: handles of the head's T×d_k queries, S×d_k keys, S×d_v values and T×S weights.
        G: handle of the T×d_v upstream adjoint ∂ℓ/∂O (an input or the ledger's own adjoint row).
        scale: the divisor of the scores (default √d_k).
        tag: superscript for the row names.

    Returns:
        dict from ``"V"``, ``"A"``, ``"S"``, ``"Q"``, ``"K"`` to the handles of the new rows.
    """
    if G.shape != (A.shape[0], V.shape[1]):
        raise ShapeError(f"the upstream adjoint is {G.shape[0]}×{G.shape[1]} but O is {A.shape[0]}×{V.shape[1]}")
    c = ops.as_node(sp.sqrt(Q.shape[1]) if scale is None else scale)
    out = {"V": L.define(tagged("∇_V", tag), A.T @ G, note="Aᵀ Ḡ")}
    out["A"] = L.define(tagged("∇_A", tag), G @ V.T, note="Ḡ Vᵀ")
    dA = out["A"]
    out["S"] = L.define(tagged("∇_S", tag), A * (dA - ops.Broadcast(ops.Sum(dA * A, 1), A.shape)),
                        note="each row times diag(a) − aᵀa")
    out["Q"] = L.define(tagged("∇_Q", tag), out["S"] @ K / c, note="∇_S K/√d_k")
    out["K"] = L.define(tagged("∇_K", tag), out["S"].T @ Q / c, note="∇_Sᵀ Q/√d_k")
    return out


# ---------------------------------------------------------------------------
# proofs against the ledger's reverse mode
# ---------------------------------------------------------------------------


def prove_softmax_jacobian(n: int = 3) -> Proof:
    """The reverse-mode Jacobian of a symbolic softmax row (1×n) equals diag(a) − aᵀa, exactly."""
    L = Ledger(f"softmax of a symbolic row, n={n}")
    s = L.input("s", shape=(1, n))
    a = L.define("a", ops.SoftmaxRows(s))
    J = reverse_jacobian(L, a, s)
    closed = softmax_jacobian(L.expand("a"))
    direct = sp.Matrix(L.expand("a")).jacobian(list(L.entry_symbols("s")))
    ok = vanishes(J - closed) and vanishes(direct - closed)
    return Proof("∂a/∂s = diag(a) − aᵀa", ok,
                 f"{n}×{n} entries of the reverse-mode Jacobian and of SymPy's jacobian equal diag(a) − aᵀa"
                 if ok else "the Jacobians differ", value=closed)


def prove_attention_gradients(T: int = 2, S: int = 3, d_k: int = 2, d_v: int = 2, *, allowed=None,
                              independent: bool = True) -> Proof:
    """∇_Q, ∇_K, ∇_V, ∇_S from the ledger's reverse mode equal the closed forms, for symbolic Q, K, V, Ḡ.

    ``allowed`` is an optional T×S mask. With ``independent`` the closed forms
    are also compared with SymPy's differentiation of the expanded scalar
    Σ Ḡ ⊙ O (no ledger rule involved), by :func:`symseq.functions.partial`:
    the expression ``sympy.diff`` returns, without its assumption queries on
    every derivative it builds (a tenth of the time).
    """
    from ..functions import partial

    L = Ledger(f"attention gradients, T={T}, S={S}, d_k={d_k}, d_v={d_v}")
    Q, K, V = L.input("Q", shape=(T, d_k)), L.input("K", shape=(S, d_k)), L.input("V", shape=(S, d_v))
    head = scaled_dot_product(L, Q, K, V, mask=allowed)
    G = L.input("Ḡ", shape=(T, d_v), note="upstream adjoint ∂ℓ/∂O")
    L.define("ℓ", ops.Sum(G * head.O, None))
    grads = L.backward("ℓ")
    closed = attention_gradient_rows(L, Q, K, V, head.A, G, tag="cf")
    pairs = [("V", "V"), ("Q", "Q"), ("K", "K"), ("S", head.S.name)]
    bad = [k for k, n in pairs if not vanishes(L.expand(closed[k].name) - L.expand(grads.name(n)))]
    checked = [k for k, _ in pairs]
    if independent and not bad:
        loss = L.expand("ℓ")
        for k in ("Q", "K", "V"):
            syms = L.entry_symbols(k)
            direct = syms.applyfunc(lambda e: partial(loss, e))  # sympy.diff's expression, built without its queries
            if not vanishes(direct - L.expand(closed[k].name)):
                bad.append(f"{k} (SymPy)")
        checked += ["Q, K, V against SymPy's diff"]
    ok = not bad
    return Proof("∇_V = AᵀḠ, ∇_S = A ⊙ (∇_A − ((∇_A ⊙ A)1)1ᵀ), ∇_Q = ∇_S K/√d_k, ∇_K = ∇_Sᵀ Q/√d_k", ok,
                 ("equal to the ledger's reverse mode: " + ", ".join(checked)) if ok else f"differ: {bad}",
                 value={"ledger": L, "closed": closed, "grads": grads, "head": head})


def prove_layer_norm_jacobian(d: int = 3, *, affine: bool = True) -> Proof:
    """The reverse-mode Jacobian of LayerNorm of a symbolic row (gain γ, symbolic ε) equals the closed form."""
    L = Ledger(f"LayerNorm of a symbolic row, d={d}")
    x = L.input("x", shape=(1, d))
    eps = L.input("epsilon", note="ε")
    gamma = L.parameter("gamma", shape=(1, d)) if affine else None
    beta = L.parameter("beta", shape=(1, d)) if affine else None
    n = layer_norm(L, x, gamma, beta, eps=eps, name="LN")
    J = reverse_jacobian(L, n.out, x)
    closed = layer_norm_jacobian(L.entry_symbols("x"), L.entry_symbols("gamma") if affine else None, L.symbol("epsilon"))
    direct = sp.Matrix(L.expand(n.out.name)).jacobian(list(L.entry_symbols("x")))
    ok = vanishes(J - closed) and vanishes(direct - closed)
    return Proof("∂LN(x)_i/∂x_j = (γ_i/σ)(δ_ij − 1/d − x̂_i x̂_j/d)", ok,
                 f"{d}×{d} entries equal to reverse mode and to SymPy's jacobian" if ok else "the Jacobians differ",
                 value=closed)


def prove_residual_jacobian(d: int = 3, *, pre_norm: bool = True) -> Proof:
    """For y = x + g(LN(x)) (pre-norm, g = tanh(· W)) the reverse-mode Jacobian is I + J_{g∘LN}, exactly.

    With ``pre_norm=False`` the update is y = x + tanh(x W). Both Jacobians come
    from the ledger's reverse mode; J_F also from SymPy's jacobian.
    """
    L = Ledger(f"residual update, d={d}")
    x = L.input("x", shape=(1, d))
    W = L.parameter("W", shape=(d, d))
    inner = layer_norm(L, x, eps=L.input("epsilon"), name="LN").out if pre_norm else x
    F = L.define("F", ops.Map(sp.tanh, inner @ W))
    y = L.define("y", x + F)
    J_y = reverse_jacobian(L, y, x)
    J_F = reverse_jacobian(L, F, x)
    direct = sp.Matrix(L.expand("F")).jacobian(list(L.entry_symbols("x")))
    ok = vanishes(J_y - residual_jacobian(J_F)) and vanishes(J_F - direct)
    what = "x + g(LN(x))" if pre_norm else "x + F(x)"
    return Proof(f"d({what})/dx = I + J", ok, f"{d}×{d} entries: reverse mode of y equals I + reverse mode of F"
                 if ok else "the Jacobians differ", value=J_y)


def prove_cross_entropy_gradient(N: int = 2, v: int = 3, targets=None, *, reduction: str = "mean") -> Proof:
    """∂ℓ/∂Z from the ledger's reverse mode through logsumexp equals (P − Y)/N for symbolic logits Z (N×v)."""
    from ..blocks.losses import cross_entropy

    targets = list(range(N)) if targets is None else [int(c) for c in targets]
    targets = [c % v for c in targets]
    L = Ledger(f"cross-entropy of symbolic logits, N={N}, v={v}")
    Z = L.input("Z", shape=(N, v))
    ce = cross_entropy(L, Z, targets, reduction=reduction)
    grads = L.backward(ce.loss.name)
    ours = L.expand(grads.name("Z"))
    closed = cross_entropy_gradient(L.entry_symbols("Z"), targets, reduction=reduction)
    ok = vanishes(ours - closed)
    return Proof("∂ℓ/∂Z = (P − Y)/N" if reduction == "mean" else "∂ℓ/∂Z = P − Y", ok,
                 f"{N}×{v} entries equal to reverse mode through logsumexp" if ok else "the gradients differ",
                 value=closed)
