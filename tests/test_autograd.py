"""The ledger's gradients against torch autograd in float64 (Week 8 handout, 000, §4, and random points)."""

import math

import numpy as np
import pytest

from symseq import Ledger, blocks
from small_ledgers import two_token_ledger
from symseq.verify.autograd import exact_binary, gradient_check, leaf_arrays, random_values

from lazy_torch import needs_torch, torch

pytestmark = needs_torch


def torch_two_token(H, W_Q, W_K, W_V, W_out):
    """An independent torch implementation of §4: causal head, residual, readout, loss at position 2."""
    Q, K, V = H @ W_Q, H @ W_K, H @ W_V
    S = Q @ K.T / math.sqrt(Q.shape[1])
    mask = torch.triu(torch.ones(2, 2, dtype=torch.bool), diagonal=1)
    A = torch.softmax(S.masked_fill(mask, float("-inf")), dim=-1)
    Z = (H + A @ V) @ W_out
    return torch.nn.functional.cross_entropy(Z[1:2], torch.tensor([1]))


NAMES = ["H", "W_Q", "W_K", "W_V", "W_out"]


def compare_with_independent_torch(L, g, values):
    arrays = leaf_arrays(L, values)
    ts = {n: torch.tensor(arrays[n], dtype=torch.float64, requires_grad=True) for n in NAMES}
    loss = torch_two_token(*(ts[n] for n in NAMES))
    grads = torch.autograd.grad(loss, [ts[n] for n in NAMES])
    from symseq import evaluate

    ours = evaluate(L, "mpmath", dps=30, values={n: exact_binary(a) for n, a in arrays.items()})
    assert float(ours["loss"]) == pytest.approx(loss.item(), rel=1e-14)
    for n, tg in zip(NAMES, grads):
        ref = np.array([[float(x) for x in row] for row in ours[g.name(n)]])
        np.testing.assert_allclose(tg.numpy(), ref, rtol=0, atol=1e-12)


def test_section4_gradients_match_independent_torch():
    L, r = two_token_ledger()
    g = L.backward("loss")
    compare_with_independent_torch(L, g, None)


def test_random_points_match_independent_torch(rng):
    L, r = two_token_ledger()
    g = L.backward("loss")
    for _ in range(5):
        compare_with_independent_torch(L, g, random_values(L, rng))


def test_generic_check_through_the_torch_backend(rng):
    L, r = two_token_ledger()
    g = L.backward("loss")
    for values in (None, random_values(L, rng)):
        for agreement in gradient_check(L, g, values=values):
            assert agreement.ok(1e-12), agreement


def test_full_decoder_block_gradients(rng):
    """A pre-norm decoder with two heads, LayerNorm (ε>0), ReLU MLP and readout: every parameter gradient."""
    L = Ledger("decoder")
    T, d, dk, dv, h, m, v = 4, 5, 3, 2, 2, 6, 7
    H0 = L.input("H^(0)", shape=(T, d))
    params, head = blocks.decoder_parameters(L, d=d, d_k=dk, d_v=dv, h=h, m=m, v=v, n_blocks=2)
    dec = blocks.decoder(L, H0, params, W_out=head["W_out"], b_out=head["b_out"], ln_f=head["ln_f"],
                         orientation="in_out", eps="1e-5")
    ce = blocks.cross_entropy(L, dec.logits, targets=[1, 6, 0, 3])
    g = L.backward(ce.loss.name)
    values = random_values(L, rng, scale=0.7)
    checks = gradient_check(L, g, values=values)
    assert len(checks) == len(L.leaves)
    for a in checks:
        assert a.ok(1e-12), a


def test_scalar_leaves_are_checked():
    """A scalar leaf used to crash the mpmath side (cannot create mpf from array(0.5))."""
    import sympy as sp

    L = Ledger()
    x, w = L.input("x", sp.Rational(1, 2)), L.parameter("w", 2)
    h = L.define("h", sp.tanh(w * x))
    g = L.backward(h.name)
    for values in (None, {"x": 0.25, "w": np.float64(-1.5)}, {"x": np.asarray(0.75)}):
        checks = gradient_check(L, g, values=values)
        assert [a.name for a in checks] == ["x", "w"] and all(a.ok(1e-14) for a in checks), checks
    (dw,) = [a for a in gradient_check(L, g) if a.name == "w"]
    assert dw.scale == pytest.approx(0.5 * (1 - math.tanh(1) ** 2), rel=1e-15)  # ∂h/∂w = x (1 − tanh²(wx))


def test_float32_values_are_checked_in_float64_and_said_so():
    from symseq import ShapeError
    from symseq.errors import PrecisionWarning

    L, r = two_token_ledger()
    g = L.backward("loss")
    values = {"H": np.array([[0.1, 0.2], [0.3, 0.4]], dtype=np.float32)}
    with pytest.warns(PrecisionWarning, match=r"H \(float32\) given in less than float64.*checked in float64"):
        checks = gradient_check(L, g, values=values)
    given = {a.name: a.given for a in checks}
    assert given["H"] == "float32" and given["W_Q"] == "exact"
    assert all(a.ok(1e-12) for a in checks)
    with pytest.warns(PrecisionWarning, match=r"W_Q \(float32\)"):
        gradient_check(L, g, values={"W_Q": torch.eye(2, dtype=torch.float32)})
    with pytest.raises(ShapeError, match="value given for H has shape 3 but H is 2×2"):
        gradient_check(L, g, values={"H": np.ones(3)})
