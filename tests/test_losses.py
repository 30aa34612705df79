"""Losses (symseq.blocks.losses): cross-entropy in nats (Week 8 handout, 000), evaluated stably on every backend."""

import functools

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import Ledger, ShapeError, blocks, compile, evaluate, ops


def test_cross_entropy_in_nats():
    L = Ledger()
    Z = L.input("Z", [[0, 0], [0, sp.log(3)]])
    ce = blocks.cross_entropy(L, Z, targets=[0, 1], reduction="sum")
    assert sp.simplify(L.value(ce.loss.name) - (sp.log(2) + sp.log(sp.Rational(4, 3)))) == 0
    with pytest.raises(ShapeError, match="2 targets for 1 scored positions"):
        blocks.cross_entropy(L, Z, targets=[0, 1], positions=[0], name="l2", tag="2")
    with pytest.raises(ShapeError, match="outside 0..1"):
        blocks.cross_entropy(L, Z, targets=[0, 5], name="l3", tag="3")


# --- log Σ exp(z_j − z_target), not logsumexp(z) − z_target (issue 12) --------------------------------------------


def _backends():
    import importlib.util

    return ["mpmath", "numpy"] + (["torch"] if importlib.util.find_spec("torch") else [])


def _float(v):
    v = v.detach().numpy() if hasattr(v, "detach") else v
    return np.array(np.asarray(v, dtype=object).tolist(), dtype=float)


@pytest.mark.parametrize("backend", _backends())
def test_equal_huge_logits_give_log_2_not_0(backend):
    """logsumexp(10¹⁶, 10¹⁶) − 10¹⁶ cancels to 0 in float64; the loss is log 2 (torch's F.cross_entropy agrees)."""
    L = Ledger()
    Z = L.input("Z", [[10**16, 10**16], [10**16, 0], [-(10**16), 3]])
    ce = blocks.cross_entropy(L, Z, targets=[0, 1, 1], reduction="sum")
    want = [float(mpmath.log(2)), 1e16, float(mpmath.log1p(mpmath.exp(-(10**16) - 3)))]
    for out in (evaluate(L, backend, dps=40), compile(L, [ce.per_position.name], backend=backend, dps=40)()):
        np.testing.assert_allclose(_float(out[ce.per_position.name])[:, 0], want, rtol=1e-15, atol=0)


def test_the_written_form_and_the_gradient_stay_the_textbooks():
    """ℓ prints as lse − z_target, its exact value is that closed form, and ∂ℓ/∂Z = softmax − onehot."""
    from symseq.present.notation import Notation

    L = Ledger()
    Z = L.input("Z", [[0, sp.log(3)]])
    ce = blocks.cross_entropy(L, Z, targets=[1])
    assert Notation("unicode", L).render(L[ce.per_position.name].node) == "lse − z_target"
    assert L.value(ce.per_position.name)[0, 0] == sp.log(4) - sp.log(3)
    g = L.backward(ce.loss.name)
    assert sp.simplify(L.value(g.name("Z")) - sp.Matrix([[sp.Rational(1, 4), -sp.Rational(1, 4)]])) == sp.zeros(1, 2)
    assert set(g) >= {"lse", "z_target", "ell"}  # the adjoints still run through the written rows


def test_a_masked_target_logit_is_an_error_not_nan():
    from symseq import EvaluationError

    L = Ledger()
    Z = L.input("Z", [[0, -sp.oo]])
    blocks.cross_entropy(L, Z, targets=[1])
    for backend in ("mpmath", "numpy"):
        with pytest.raises(EvaluationError, match=r"row z_target evaluates to -inf"):
            evaluate(L, backend)


# --- values and gradients against torch float64 on random logits, huge ones included -----------------------------

T, V = 3, 4
TARGETS = [2, 0, 3]


@functools.lru_cache(maxsize=None)
def _compiled(backend):
    L = Ledger("cross-entropy of a 3×4 logit matrix")
    Z = L.input("Z", shape=(T, V))
    ce = blocks.cross_entropy(L, Z, targets=TARGETS)
    g = L.backward(ce.loss.name)
    return L, compile(L, [ce.loss.name, ce.per_position.name, g.name("Z")], backend=backend), g.name("Z")


logit_rows = st.lists(st.floats(-10, 10, allow_nan=False), min_size=T * V, max_size=T * V)


@settings(max_examples=200, deadline=None)
@given(logit_rows, st.sampled_from([0.0, 1e16, -1e16, 3e17]), st.sampled_from([1e-3, 1.0, 100.0, 1e16]))
def test_values_and_gradients_match_torch_float64(noise, offset, scale):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    Z = offset + scale * np.array(noise).reshape(T, V)
    zt = torch.tensor(Z, dtype=torch.float64, requires_grad=True)
    ref = F.cross_entropy(zt, torch.tensor(TARGETS), reduction="mean")
    (ref_grad,) = torch.autograd.grad(ref, [zt])
    ref_rows = F.cross_entropy(zt.detach(), torch.tensor(TARGETS), reduction="none").numpy()
    for backend in ("numpy", "torch"):
        L, f, gname = _compiled(backend)
        out = f(Z=Z)
        np.testing.assert_allclose(float(out["loss"]), ref.item(), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(_float(out["ell"])[:, 0], ref_rows, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(_float(out[gname]), ref_grad.numpy(), rtol=0, atol=1e-15)
    # and the float64 rows against the exact loss of the same binary logits (mpmath at 30 digits)
    with mpmath.workdps(30):
        for t, c in enumerate(TARGETS):
            s = [mpmath.mpf(z) - mpmath.mpf(Z[t, c]) for z in Z[t]]
            exact_row = float(mpmath.log(mpmath.fsum(mpmath.exp(x) for x in s)))
            assert ref_rows[t] == pytest.approx(exact_row, rel=1e-13, abs=1e-15)
