"""Closed-form gradients: proved equal to reverse mode, exact at hand-computable points, equal to torch autograd.

Sources: Handout #11 (001) §2.1–§2.2 (the retrieval and its Jacobian), §5.1
(I + J_{g∘LN}); Week 8 (000) §2 (LayerNorm, J = I + J_F).
"""

import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, blocks, ops
from symseq.derive import attention_grads as ag
from symseq.derive.symbolic import reverse_jacobian, vanishes

from lazy_torch import needs_torch, torch

pytestmark = needs_torch


def test_softmax_jacobian_proved_and_exact_at_the_retrieval_weights():
    assert ag.prove_softmax_jacobian(3)
    assert ag.prove_softmax_jacobian(4)
    J = ag.softmax_jacobian([sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)])
    assert J == sp.Matrix([[sp.Rational(1, 4), -sp.Rational(1, 8), -sp.Rational(1, 8)],
                           [-sp.Rational(1, 8), sp.Rational(3, 16), -sp.Rational(1, 16)],
                           [-sp.Rational(1, 8), -sp.Rational(1, 16), sp.Rational(3, 16)]])
    assert J * sp.ones(3, 1) == sp.zeros(3, 1)  # rows sum to 0: a shared shift of the scores changes nothing


def test_a_wrong_jacobian_is_rejected():
    """The proof can fail: diag(a) + aᵀa is not the reverse-mode Jacobian."""
    L = Ledger()
    s = L.input("s", shape=(1, 3))
    a = L.define("a", ops.SoftmaxRows(s))
    J = reverse_jacobian(L, a, s)
    av = L.expand("a")
    assert vanishes(J - (sp.diag(*av) - av.T * av))
    assert not vanishes(J - (sp.diag(*av) + av.T * av))


@pytest.mark.parametrize("T,S,d_k,d_v,masked", [(2, 3, 2, 1, False), (3, 2, 1, 2, True)])
def test_attention_gradients_proved(T, S, d_k, d_v, masked):
    allowed = np.tril(np.ones((T, S), dtype=bool)) if masked else None
    p = ag.prove_attention_gradients(T, S, d_k, d_v, allowed=allowed, independent=(T * S <= 6))
    assert p, p.detail


@pytest.mark.parametrize("T,S,d_k,d_v,masked", [(1, 3, 2, 2, False), (2, 3, 2, 1, False), (3, 2, 1, 2, True)])
def test_the_independent_check_differentiates_the_loss_as_sympy_does(T, S, d_k, d_v, masked):
    # the independent stage takes ∂ℓ/∂Q, ∂ℓ/∂K, ∂ℓ/∂V of the expanded loss by partial: sympy.diff's own expression
    from symseq.functions import partial

    allowed = np.tril(np.ones((T, S), dtype=bool)) if masked else None
    p = ag.prove_attention_gradients(T, S, d_k, d_v, allowed=allowed, independent=False)
    L = p.value["ledger"]
    loss = L.expand("ℓ")
    for k in ("Q", "K", "V"):
        for e in L.entry_symbols(k):
            assert partial(loss, e) == sp.diff(loss, e)


def test_a_missing_transpose_in_grad_K_is_caught():
    """∇_K = ∇_S Q (transpose forgotten) does not even have the right shape; ∇_K = ∇_Sᵀ K is rejected."""
    p = ag.prove_attention_gradients(2, 2, 2, 1, independent=False)
    L, grads = p.value["ledger"], p.value["grads"]
    closed = p.value["closed"]
    wrong = L.define("∇_K_wrong", closed["S"].T @ L.handle("K") / ops.as_node(sp.sqrt(2)))
    assert not vanishes(L.expand(wrong.name) - L.expand(grads.name("K")))


def test_attention_gradients_match_torch_at_an_exact_point(rng):
    T, S, d_k, d_v = 3, 4, 2, 3
    allowed = np.tril(np.ones((T, S), dtype=bool), k=1)
    Q, K, V, G = (sp.Matrix(rng.integers(-3, 4, size=sh).tolist()) / 4
                  for sh in ((T, d_k), (S, d_k), (S, d_v), (T, d_v)))
    ours = ag.attention_gradients(Q, K, V, G, allowed=allowed)
    tq, tk, tv = (torch.tensor(np.array(M.tolist(), dtype=float), requires_grad=True) for M in (Q, K, V))
    sc = tq @ tk.T / np.sqrt(d_k)
    sc = sc.masked_fill(~torch.tensor(allowed), float("-inf"))
    o = torch.softmax(sc, dim=-1) @ tv
    (o * torch.tensor(np.array(G.tolist(), dtype=float))).sum().backward()
    for key, t in (("Q", tq), ("K", tk), ("V", tv)):
        np.testing.assert_allclose(np.array(ours[key].evalf(30).tolist(), dtype=float), t.grad.numpy(), atol=1e-14)
    np.testing.assert_allclose(np.array(ours["O"].evalf(30).tolist(), dtype=float), o.detach().numpy(), atol=1e-14)


def test_layer_norm_jacobian_proved_and_matches_torch():
    assert ag.prove_layer_norm_jacobian(3)
    assert ag.prove_layer_norm_jacobian(2, affine=False)
    x = [sp.Rational(1), sp.Rational(3), sp.Rational(-1, 2), sp.Rational(2)]
    gamma = [sp.Rational(1, 2), 2, -1, sp.Rational(3, 2)]
    J = ag.layer_norm_jacobian(sp.Matrix([x]), sp.Matrix([gamma]), sp.Rational(1, 100))
    f = lambda t: torch.nn.functional.layer_norm(t, (4,), torch.tensor([float(g) for g in gamma],  # noqa: E731
                                                                        dtype=torch.float64), None, 0.01)
    ref = torch.autograd.functional.jacobian(f, torch.tensor([float(v) for v in x], dtype=torch.float64))
    np.testing.assert_allclose(np.array(J.evalf(30).tolist(), dtype=float), ref.numpy(), atol=1e-14)


def test_residual_jacobians_proved():
    assert ag.prove_residual_jacobian(2, pre_norm=True)
    assert ag.prove_residual_jacobian(2, pre_norm=False)
    assert ag.residual_jacobian(sp.zeros(2, 2)) == sp.eye(2)


def test_cross_entropy_gradient_proved_and_matches_torch():
    assert ag.prove_cross_entropy_gradient(2, 3, [2, 0])
    assert ag.prove_cross_entropy_gradient(3, 2, [1, 1, 0], reduction="sum")
    Z = sp.Matrix([[3, 0, -3], [sp.Rational(3, 4), sp.Rational(9, 4), -3]])
    g = ag.cross_entropy_gradient(Z, [1, 2])
    tz = torch.tensor(np.array(Z.tolist(), dtype=float), requires_grad=True)
    torch.nn.functional.cross_entropy(tz, torch.tensor([1, 2])).backward()
    np.testing.assert_allclose(np.array(g.evalf(30).tolist(), dtype=float), tz.grad.numpy(), atol=1e-15)


def test_gradient_rows_print_as_matrix_formulas():
    from symseq.present.notation import Notation

    L = Ledger()
    Q, K, V = L.input("Q", shape=(2, 2)), L.input("K", shape=(3, 2)), L.input("V", shape=(3, 1))
    head = blocks.scaled_dot_product(L, Q, K, V)
    G = L.input("G", shape=(2, 1))
    rows = ag.attention_gradient_rows(L, Q, K, V, head.A, G)
    text = Notation("unicode", L).render(L[rows["V"].name].node)
    assert "ᵀ" in text and "G" in text
    with pytest.raises(Exception, match="upstream adjoint is 1×1"):
        ag.attention_gradient_rows(L, Q, K, V, head.A, L.input("G2", shape=(1, 1)), tag="x")
