"""BPTT, Jacobians and clipping (Week 06 handout, 004): symbolic forms, path products, torch references."""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import ConventionError, Ledger, ShapeError, evaluate, exact
from symseq.blocks import cells, heads
from symseq.derive import bptt, clipping, jacobians
from symseq.verify.autograd import gradient_check

# without torch, the torch references are skipped; the symbolic and numeric checks still run
from lazy_torch import needs_torch, torch

phi = sp.Function("phi")


def scalar(T=3, *, positions="final", loss_positions="sum", activation=phi, bias=False, head_bias=False,
           h_init=True):
    L = Ledger("scalar")
    xs = cells.sequence_inputs(L, T)
    w_x, w_h, w_o = L.parameter("w_x"), L.parameter("w_h"), L.parameter("w_o")
    b = L.parameter("b") if bias else None
    b_o = L.parameter("b_o") if head_bias else None
    run = cells.rnn(L, xs, w_x, w_h, b, phi=activation, h_init=L.input("h_{-1}") if h_init else None)
    head = heads.regression_head(L, run, w_o, b_o, positions=positions)
    loss = heads.squared_error(L, head, positions=loss_positions)
    return L, bptt.bptt(L, run, loss)


def test_table_3_order_pairs_each_forward_row_with_the_sensitivity_through_it():
    L, bp = scalar()
    assert bp.table() == [("z_0", "∂ℒ/∂h_{-1}"), ("h_0", "g_0^z"), ("z_1", "g_0^h"), ("h_1", "g_1^z"),
                          ("z_2", "g_1^h"), ("h_2", "g_2^z"), ("ŷ", "g_2^h"), ("ℒ", "e")]
    L2, bp2 = scalar(h_init=False)
    assert bp2.table()[0] == ("z_0", None)


def test_uses_are_one_contribution_per_position():
    L, bp = scalar(T=4)
    S = L.symbol
    assert set(bp.uses("w_x")) == {S(f"g_{t}^z") * S(f"x_{t}") for t in range(4)}
    assert len(bp.uses("w_o")) == 1


@pytest.mark.parametrize("positions", ["final", "all", [0, 2]])
def test_path_sums_equal_the_recursion_symbolically(positions):
    """T = 3, general φ, a cell bias and a head bias: every gradient, as a sum of path products."""
    L, bp = scalar(positions=positions, bias=True, head_bias=True)
    for wrt in ("w_x", "w_h", "w_o", "b", "h_init", "x_1"):
        assert bptt.expanded_equals_path_sum(bp, wrt) == 0, wrt
    assert sp.expand(bp.closed_form("b_o") - bptt.path_sum(bp, "b_o")) == 0


def test_path_sum_for_three_steps_is_the_handouts_bracket():
    L, bp = scalar()
    S = L.symbol
    d = {t: sp.Derivative(phi(S(f"z_{t}")), S(f"z_{t}")) for t in range(3)}
    bracket = (d[2] * S("w_h") * d[1] * S("w_h") * d[0] * S("x_0") + d[2] * S("w_h") * d[1] * S("x_1")
               + d[2] * S("x_2"))
    assert sp.expand(bptt.path_sum(bp, "w_x") - (S("ŷ") - S("y")) * S("w_o") * bracket) == 0


def test_path_sums_at_T_50_every_position_scored_match_the_recursion_numerically():
    T = 50
    L, bp = scalar(T=T, positions="all", loss_positions="mean", activation=sp.tanh)
    rng = np.random.default_rng(7)
    values = {it.name: mpmath.mpf(float(rng.normal())) for it in L.leaves}  # mpmath takes mpf, refuses floats
    values["w_h"] = "1.1"
    env = evaluate(L, "mpmath", dps=40, values=values)
    for wrt in ("w_x", "w_h", "w_o", "h_init"):
        name = bp.grads.name("h_{-1}" if wrt == "h_init" else wrt)
        got = bptt.path_sum_value(bp, wrt, bptt.factor_values(env, 40))
        assert abs(got - env[name]) <= mpmath.mpf(10) ** -35 * max(1, abs(env[name])), wrt


def test_path_sums_refuse_vector_states():
    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=2)
    run = cells.rnn(L, xs, L.parameter("W_x", shape=(2, 2)), L.parameter("W_h", shape=(2, 2)))
    head = heads.regression_head(L, run, L.parameter("W_o", shape=(1, 2)))
    bp = bptt.bptt(L, run, heads.squared_error(L, head))
    with pytest.raises(ConventionError, match="scalar Elman"):
        bptt.path_sum(bp, "w_x")


def test_mean_reductions_scale_only_the_direct_error():
    L = Ledger()
    xs = cells.sequence_inputs(L, 3, width=2, batch=4)
    p = cells.rnn_parameters(L, 2, 3, naming="handout")
    run = cells.rnn(L, xs, p.W_x, p.W_h, p.b)
    head = heads.regression_head(L, run, L.parameter("W_o", shape=(2, 3)), positions="all")
    loss = heads.squared_error(L, head, positions="mean", batch="mean")
    bp = bptt.bptt(L, run, loss)
    assert loss.scale == sp.Rational(1, 12)
    rng = np.random.default_rng(2)
    vals = {it.name: rng.normal(size=it.shape) for it in L.leaves}
    out = evaluate(L, "numpy", values=vals)
    for t in range(3):
        np.testing.assert_allclose(out[bp.e(t)], (out[f"ŷ_{t}"] - vals[f"y_{t}"]) / 12, rtol=1e-14, atol=0)
    # g_0^h = ∂ℒ/∂ŷ_0 W_o + g_1^z W_h: the recurrent term carries no extra 1/T or 1/B
    np.testing.assert_allclose(out[bp.g_h(0)], out[bp.e(0)] @ vals["W_o"] + out[bp.g_z(1)] @ vals["W_h"],
                               rtol=1e-13, atol=1e-16)


# ---------------------------------------------------------------------------
# Jacobians against torch.autograd.functional.jacobian
# ---------------------------------------------------------------------------

def one_step(kind, variant="torch", D=2, H=3):
    L = Ledger(kind)
    xs = cells.sequence_inputs(L, 1, width=D)
    h0 = L.input("h_{-1}", shape=(1, H))
    if kind == "rnn":
        p = cells.rnn_parameters(L, D, H, suffix="")
        run = cells.rnn(L, xs, p.W_x, p.W_h, p.b, h_init=h0)
        J = jacobians.elman_jacobian(L, run, 0)
    elif kind == "gru":
        p = cells.gru_parameters(L, D, H, suffix="")
        run = cells.gru(L, xs, p, variant=variant, h_init=h0)
        J = jacobians.gru_jacobian(L, run, 0)
    else:
        p = cells.lstm_parameters(L, D, H, suffix="")
        run = cells.lstm(L, xs, p, h_init=h0, c_init=L.input("c_{-1}", shape=(1, H)))
        J = jacobians.lstm_jacobian(L, run, 0)
    return L, run, J


@needs_torch
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_cell_jacobians_match_torch(kind, rng):
    torch.manual_seed(1)
    module = {"rnn": torch.nn.RNNCell, "gru": torch.nn.GRUCell, "lstm": torch.nn.LSTMCell}[kind](2, 3).double()
    L, run, J = one_step(kind)
    vals = cells.module_values(module)
    vals.update({"x_0": rng.normal(size=(1, 2)), "h_{-1}": rng.normal(size=(1, 3)), "c_{-1}": rng.normal(size=(1, 3))})
    vals = {k: v for k, v in vals.items() if k in L}
    ours = evaluate(L, "numpy", values=vals)[J.name]
    x = torch.tensor(vals["x_0"])
    if kind == "lstm":
        def f(state):
            c, h = state[:, :3], state[:, 3:]
            h2, c2 = module(x, (h, c))
            return torch.cat([c2, h2], dim=1)
        ref = torch.autograd.functional.jacobian(f, torch.tensor(np.hstack([vals["c_{-1}"], vals["h_{-1}"]])))
        ref = ref.reshape(6, 6).numpy()
    else:
        ref = torch.autograd.functional.jacobian(lambda h: module(x, h), torch.tensor(vals["h_{-1}"])).reshape(3, 3)
        ref = ref.numpy()
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


@needs_torch
def test_cho_gru_jacobian_matches_autograd_through_the_ledger(rng):
    L, run, J = one_step("gru", variant="cho2014")
    vals = {it.name: rng.normal(size=it.shape) for it in L.leaves}
    ours = evaluate(L, "numpy", values=vals)[J.name]
    k = torch.tensor(vals["h_{-1}"])

    def f(h):
        t = {n: torch.tensor(v) for n, v in vals.items()}
        t["h_{-1}"] = h
        return evaluate(L, "torch", values=t, targets=["h_0"])["h_0"]

    ref = torch.autograd.functional.jacobian(f, k).reshape(3, 3).numpy()
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def test_direct_carries_are_the_gates():
    L, run, J = one_step("gru")
    C = jacobians.gru_carry(L, run, 0)
    rng = np.random.default_rng(0)
    out = evaluate(L, "numpy", values={it.name: rng.normal(size=it.shape) for it in L.leaves})
    np.testing.assert_array_equal(out[C.name], np.diag(out["u_0"][0]))
    assert np.abs(out[J.name] - out[C.name]).max() > 1e-3  # the full Jacobian has more paths


def test_jacobian_product_is_the_row_sensitivity_map(rng):
    """g_s^h = g_q^h J_q ⋯ J_{s+1} at a tanh point (vector states, final-only loss), and the norm bound."""
    L = Ledger()
    xs = cells.sequence_inputs(L, 6, width=2)
    p = cells.rnn_parameters(L, 2, 3, naming="handout")
    run = cells.rnn(L, xs, p.W_x, p.W_h, p.b)
    head = heads.regression_head(L, run, L.parameter("W_o", shape=(2, 3)))
    bp = bptt.bptt(L, run, heads.squared_error(L, head))
    P = jacobians.jacobian_product(L, run, 5, 1)
    vals = {it.name: rng.normal(size=it.shape) for it in L.leaves}
    out = evaluate(L, "numpy", values=vals)
    np.testing.assert_allclose(out[bp.g_h(1)], out[bp.g_h(5)] @ out[P.name], rtol=1e-12, atol=1e-15)
    norms = np.prod([jacobians.spectral_norm(out[f"J_{t}"]) for t in range(2, 6)])
    assert np.linalg.norm(out[bp.g_h(1)]) <= float(jacobians.spectral_norm(out[bp.g_h(5)]) * norms) * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=9, max_size=9), st.lists(st.floats(-2, 2), min_size=6, max_size=6))
def test_spectral_norm_bound_holds_for_any_weights(w, z):
    """‖g J_2 J_1‖ ≤ ‖g‖ ‖J_2‖ ‖J_1‖ with J_t = diag(tanh′(z_t)) W_h, for sampled W_h, z_t and g."""
    W = np.array(w).reshape(3, 3)
    J = [np.diag(1 - np.tanh(np.array(z[3 * k:3 * k + 3])) ** 2) @ W for k in range(2)]
    g = np.array([[1.0, -2.0, 0.5]])
    lhs = np.linalg.norm(g @ J[1] @ J[0])
    rhs = float(jacobians.spectral_norm(g)) * float(jacobians.spectral_norm(J[1])) * float(jacobians.spectral_norm(J[0]))
    assert lhs <= rhs * (1 + 1e-12) + 1e-300


def test_spectral_norm_agrees_with_numpy(rng):
    M = rng.normal(size=(4, 3))
    assert float(jacobians.spectral_norm(M)) == pytest.approx(np.linalg.norm(M, 2), rel=1e-14)
    assert jacobians.spectral_norm(sp.Matrix([[3, 0], [0, -5]])) == 5


@needs_torch
def test_diag_node_has_the_right_adjoint(rng):
    L = Ledger()
    v = L.parameter("v", shape=(1, 3))
    W = L.parameter("W", shape=(3, 3))
    M = L.define("M", jacobians.diag(v) @ W)
    L.define("s", heads.HalfSquaredNorm(M))
    g = L.backward("s")
    for a in gradient_check(L, g, values={"v": rng.normal(size=(1, 3)), "W": rng.normal(size=(3, 3))}):
        assert a.ok(1e-13), a


def test_jacobian_errors():
    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=2, batch=2)
    run = cells.rnn(L, xs, L.parameter("W_x", shape=(2, 2)), L.parameter("W_h", shape=(2, 2)))
    with pytest.raises(ShapeError, match="per example"):
        jacobians.elman_jacobian(L, run, 1)
    with pytest.raises(ConventionError, match="needs a GRU"):
        jacobians.gru_jacobian(L, run, 1)
    L3 = Ledger()
    xs3 = cells.sequence_inputs(L3, 1, width=2)
    run3 = cells.gru(L3, xs3, cells.gru_parameters(L3, 2, 2))
    with pytest.raises(ConventionError, match="needs a given initial state"):
        jacobians.gru_jacobian(L3, run3, 0)


# ---------------------------------------------------------------------------
# clipping and the update
# ---------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("max_norm", [0.5, 1.0, 100.0])
def test_clipping_matches_torch_clip_grad_norm(max_norm, rng):
    grads = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=(1, 4))}
    params = [torch.nn.Parameter(torch.zeros(3, 4, dtype=torch.float64)), torch.nn.Parameter(torch.zeros(1, 4, dtype=torch.float64))]
    params[0].grad, params[1].grad = torch.tensor(grads["W"]), torch.tensor(grads["b"])
    total = torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm)
    ours = clipping.clip_by_global_norm(grads, max_norm, eps="1e-6")
    assert ours.norm == pytest.approx(total.item(), rel=1e-14)
    assert ours.clipped == (total.item() > max_norm)
    np.testing.assert_allclose(ours.grads["W"], params[0].grad.numpy(), rtol=1e-14, atol=0)
    np.testing.assert_allclose(ours.grads["b"], params[1].grad.numpy(), rtol=1e-14, atol=0)
    handout = clipping.clip_by_global_norm(grads, max_norm)
    assert clipping.global_norm(handout.grads) == pytest.approx(min(max_norm, total.item()), rel=1e-12)


def test_zero_gradient_and_exact_clipping():
    z = clipping.clip_by_global_norm({"W": np.zeros((2, 2))}, 1.0)
    assert not z.clipped and z.factor == 1.0 and np.all(z.grads["W"] == 0)
    r = clipping.clip_by_global_norm({"a": sp.Matrix([[6, 8]])}, exact("2.5"))
    assert r.norm == 10 and r.grads["a"] == sp.Matrix([[sp.Rational(3, 2), 2]])
    with pytest.raises(ConventionError, match="must be positive"):
        clipping.clip_by_global_norm({"a": sp.Matrix([[1]])}, 0)
    with pytest.raises(ShapeError, match="no gradients"):
        clipping.global_norm({})


def test_gradient_step():
    new = clipping.gradient_step({"w": sp.Integer(2), "W": sp.Matrix([[1, 1]])}, {"w": sp.Integer(4), "W": sp.Matrix([[10, 0]])},
                                 exact("0.1"))
    assert new == {"w": sp.Rational(8, 5), "W": sp.Matrix([[0, 1]])}
    with pytest.raises(ConventionError, match="learning rate"):
        clipping.gradient_step({"w": sp.Integer(1)}, {"w": sp.Integer(1)}, 0)
    with pytest.raises(ShapeError, match="no gradient"):
        clipping.gradient_step({"w": sp.Integer(1)}, {}, exact("0.1"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=7), st.floats(1e-3, 1e3))
def test_clipping_never_exceeds_tau_and_keeps_the_direction(g, tau):
    grads = {"g": np.array([g])}
    r = clipping.clip_by_global_norm(grads, tau)
    out = r.grads["g"]
    assert clipping.global_norm(r.grads) <= tau * (1 + 1e-12)
    assert r.clipped == (r.norm > tau)
    if r.clipped:
        np.testing.assert_allclose(out * r.norm / tau, grads["g"], rtol=1e-12, atol=1e-300)
    else:
        np.testing.assert_array_equal(out, grads["g"])


# ---------------------------------------------------------------------------
# the handout's models in one call (scalar_rnn, vector_rnn), and the checks built on them
# ---------------------------------------------------------------------------

def _torch_scalar_rnn(xs, w_x, w_h, w_o, ys, positions, mean=False):
    """The scalar Elman RNN written directly in torch (float64): h_t = tanh(w_x x_t + w_h h_{t−1}), h_{−1} = 0."""
    w = [torch.tensor(float(v), dtype=torch.float64, requires_grad=True) for v in (w_x, w_h, w_o)]
    h, hs = torch.zeros((), dtype=torch.float64), []
    for x in xs:
        h = torch.tanh(w[0] * float(x) + w[1] * h)
        hs.append(h)
    loss = sum(0.5 * (w[2] * hs[q] - float(y)) ** 2 for q, y in zip(positions, ys))
    loss = loss / len(positions) if mean else loss
    loss.backward()
    return float(loss.detach()), [float(v.grad) for v in w]


@needs_torch
@pytest.mark.parametrize("positions, loss_positions", [("final", "sum"), ("all", "mean"), ([1, 2], "sum")])
def test_scalar_rnn_matches_torch_autograd(positions, loss_positions):
    xs, ys = [exact("0.5"), -1, exact("0.25")], [exact("0.3"), exact("-0.2"), 1]
    pos = {"final": [2], "all": [0, 1, 2]}[positions] if isinstance(positions, str) else positions
    targets = {"y": ys[-1]} if positions == "final" else {f"y_{q}": ys[q] for q in pos}
    vals = {"x_0": xs[0], "x_1": xs[1], "x_2": xs[2], "w_x": exact("0.8"), "w_h": exact("0.6"), "w_o": exact("1.5"),
            **targets}
    L, run, bp = bptt.scalar_rnn("title kept", activation=sp.tanh, positions=positions, loss_positions=loss_positions,
                                 values=vals)
    assert L.title == "title kept" and L["h_{-1}"].value == 0 and run.T == 3 and L.exact_forms is False
    loss, grads = _torch_scalar_rnn(xs, vals["w_x"], vals["w_h"], vals["w_o"], [ys[q] for q in pos], pos,
                                    mean=loss_positions == "mean")
    out = evaluate(L, "mpmath", dps=30)
    assert float(out["ℒ"]) == pytest.approx(loss, rel=1e-13)
    for name, ref in zip(("w_x", "w_h", "w_o"), grads):
        assert float(out[bp.grads.name(name)]) == pytest.approx(ref, rel=1e-12), name


def test_scalar_rnn_is_symbolic_with_the_handouts_names():
    L, run, bp = bptt.scalar_rnn("three-step scalar RNN, general φ")
    S = L.symbol
    assert [it.name for it in L.leaves] == ["x_0", "x_1", "x_2", "w_x", "w_h", "w_o", "h_{-1}", "y"]
    assert L["z_1"].node.expr == S("w_x") * S("x_1") + S("w_h") * S("h_0")
    assert L["h_1"].node.expr == bptt.PHI(S("z_1"))
    assert sp.expand(L["ℒ"].node.expr - (S("ŷ") - S("y")) ** 2 / 2) == 0
    assert L[bp.g_h(1)].node.expr == S("g_2^z") * S("w_h") and bp.e() == "e"
    assert bptt.scalar_rnn("no initial state", h_init=False)[0].leaves[-1].name == "y"


@needs_torch
def test_vector_rnn_matches_torch_autograd(rng):
    """Biases, a head bias, a loss at every position, means over T = 3 positions and B = 2 examples."""
    T, D, H, C, B = 3, 3, 2, 2, 2
    L, run, bp = bptt.vector_rnn("vector", T=T, D=D, H=H, C=C, B=B, activation=sp.tanh, bias=True, head_bias=True,
                                 positions="all", loss_positions="mean", batch="mean")
    assert [L.shape(n) for n in ("x_0", "W_x", "W_h", "b_h", "W_o", "b_o", "ŷ_2", "y_2")] == [
        (B, D), (H, D), (H, H), (1, H), (C, H), (1, C), (B, C), (B, C)]
    vals = {it.name: rng.normal(size=it.shape) for it in L.leaves}
    tt = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in vals.items()}
    h, loss = torch.zeros(B, H, dtype=torch.float64), 0
    for t in range(T):
        h = torch.tanh(tt[f"x_{t}"] @ tt["W_x"].T + h @ tt["W_h"].T + tt["b_h"])
        loss = loss + 0.5 * ((h @ tt["W_o"].T + tt["b_o"] - tt[f"y_{t}"]) ** 2).sum()
    (loss / (T * B)).backward()
    out = evaluate(L, "numpy", values=vals)
    assert out["ℒ"] == pytest.approx(float(loss.detach()) / (T * B), rel=1e-13)
    for n in ("W_x", "W_h", "b_h", "W_o", "b_o", "x_1"):
        np.testing.assert_allclose(out[bp.grads.name(n)], tt[n].grad.numpy(), rtol=1e-11, atol=1e-14)


def test_loss_factor_reads_c_of_c_times_the_squared_error():
    assert bptt.loss_factor(bptt.scalar_rnn("scalar")[0]) == sp.Rational(1, 2)
    assert bptt.loss_factor(bptt.vector_rnn("1×1 head", C=1)[0]) == sp.Rational(1, 2)
    L = Ledger()
    yh, y = L.input("ŷ"), L.input("y")
    L.define("ℒ", 3 * (yh - y) ** 2)
    assert bptt.loss_factor(L) == 3


def test_widths_one_recovers_the_scalar_model():
    loss_diff, grad_diffs = bptt.widths_one()
    assert loss_diff == 0 and grad_diffs == [0, 0, 0]
    assert bptt.widths_one(T=2)[1] == [0, 0, 0]


def test_labelled_uses_sum_to_the_shared_gradient():
    L, per_use = bptt.labelled_uses(activation=sp.tanh)
    Ls, _, bps = bptt.scalar_rnn("shared", activation=sp.tanh, h_init=False)
    relabel = {L.symbol(f"w_x^[{t}]"): Ls.symbol("w_x") for t in range(3)}
    assert sp.simplify(sum(per_use).xreplace(relabel) - Ls.expand(bps.grads.name("w_x"))) == 0
    # the use at t = 2 alone: ∂ℒ/∂w_x^[2] = (ŷ − y) w_o (1 − h_2²) x_2, at a point
    point = {s: v for s, v in zip(sp.symbols("x_0 x_1 x_2 w_h w_o y", real=True), (1, -1, 2, sp.Rational(1, 2), 3, 0))}
    point.update({u: sp.Rational(1, 4) for u in relabel})
    h = [0]
    for t, x in enumerate((1, -1, 2)):
        h.append(sp.tanh(sp.Rational(1, 4) * x + sp.Rational(1, 2) * h[-1]))
    want = (3 * h[-1]) * 3 * (1 - h[-1] ** 2) * 2
    assert sp.N(per_use[2].xreplace(point) - want, 30) == 0


def test_final_loss_sensitivities_in_closed_form_for_the_identity():
    """φ = identity, w_h = 1/2, x_t = 1: h_3 = 15/8, g_t^h = h_3 (1/2)^(3−t), every factor 1/2."""
    g, f = bptt.final_loss_sensitivities("identity", sp.Rational(1, 2), [1, 1, 1, 1])
    assert [float(v) for v in g] == [15 / 64, 15 / 32, 15 / 16, 15 / 8]
    assert [float(v) for v in f] == [0.5, 0.5, 0.5]


def test_scalar_path_bound_holds_and_fails_as_it_should():
    xs = [1, 1, 1, 1]
    ok, detail = bptt.scalar_path_bound("identity", "0.5", xs, "0.5")
    assert ok and "over 6 pairs" in detail
    assert bptt.scalar_path_bound("identity", "0.5", xs, "0.5", lower=True)[0]
    assert not bptt.scalar_path_bound("identity", "0.5", xs, "0.4")[0]  # factors 0.5 exceed r = 0.4
    assert not bptt.scalar_path_bound("identity", "0.5", xs, "0.6", lower=True)[0]
    assert bptt.scalar_path_bound(sp.tanh, "0.9", [exact("0.3"), exact("-0.7"), 1, 0, exact("0.5")], "0.9")[0]


def test_the_path_sum_at_the_ledgers_mpmath_values_is_the_recursion():
    vals = {"x_0": 1, "x_1": exact("-0.5"), "x_2": 2, "x_3": exact("0.25"), "w_x": exact("0.7"),
            "w_h": exact("1.1"), "w_o": exact("-0.9"), "y": exact("0.5")}
    L, run, bp = bptt.scalar_rnn("four steps", T=4, activation=sp.tanh, values=vals)
    rows = evaluate(L, "mpmath", dps=50)
    assert rows[bp.grads.name("w_o")] < 0  # a negative gradient keeps its sign
    for w in ("w_x", "w_h", "w_o"):
        got = bptt.path_sum_value(bp, w, bptt.factor_values(rows))
        assert (got < 0) == (rows[bp.grads.name(w)] < 0), w
        assert abs(sp.N(sp.Float(got, 60), 60) - sp.Float(str(rows[bp.grads.name(w)]), 60)) < sp.Float("1e-40"), w
    assert bp.ref("g_1^h").shape == () and bp.ref("g_1^h").ledger is L


@pytest.mark.parametrize("global_dps", [15, 30, 50, 100])
def test_the_path_bounds_do_not_depend_on_mpmaths_global_precision(global_dps):
    """Every factor of the ReLU path (w_h = 1.2, active) equals r = 1.2: the lower bound holds with equality. It
    failed at a global 30 digits, where r was rounded to 30 digits and exceeded the factors computed at 40."""
    import mpmath

    from symseq.derive.bptt import scalar_path_bound
    from symseq.functions import relu
    from symseq.numbers import exact, to_mpf

    with mpmath.workdps(global_dps):
        ok, detail = scalar_path_bound(relu, exact("1.2"), [1] * 12, exact("1.2"), lower=True)
        assert ok, detail
    with mpmath.workdps(40):
        reference = mpmath.mpf("1.2")  # 1.2 rounded to 40 digits
    with mpmath.workdps(global_dps):
        assert to_mpf(exact("1.2"), 40) == reference
