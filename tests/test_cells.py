"""Recurrent cells against the torch.nn modules people run (float64), their conventions, and their errors.

Week 06 handout (004), first half; torch.nn.RNN/GRU/LSTM and their Cell variants are the references: the
ledger's parameters are loaded into the module, and outputs and every gradient must agree to 1e-10.
"""

import numpy as np
import pytest
import sympy as sp

from symseq import ConventionError, Ledger, ShapeError, evaluate
from symseq.blocks import cells, heads

# without torch, the module references are skipped; conventions and errors are still checked
from lazy_torch import needs_torch, torch

T, B, D, H, C = 5, 2, 4, 3, 2  # pairwise distinct where it matters: a swapped axis cannot pass
TOL = 1e-10


def build(kind, *, positions="all", loss_positions="mean", batch="mean", suffix="_l0", variant="torch",
          nonlinearity="tanh", bias=True):
    L = Ledger(kind)
    xs = cells.sequence_inputs(L, T, width=D, batch=B)
    h0 = L.input("h_{-1}", shape=(B, H))
    c0 = L.input("c_{-1}", shape=(B, H)) if kind == "lstm" else None
    if kind == "rnn":
        p = cells.rnn_parameters(L, D, H, suffix=suffix, bias=bias)
        run = cells.rnn(L, xs, p.W_x, p.W_h, p.b, phi=nonlinearity, h_init=h0)
    elif kind == "gru":
        p = cells.gru_parameters(L, D, H, suffix=suffix, bias=bias)
        run = cells.gru(L, xs, p, h_init=h0, variant=variant)
    else:
        p = cells.lstm_parameters(L, D, H, suffix=suffix, bias=bias)
        run = cells.lstm(L, xs, p, h_init=h0, c_init=c0)
    W_o, b_o = L.parameter("W_o", shape=(C, H)), L.parameter("b_o", shape=(1, C))
    head = heads.regression_head(L, run, W_o, b_o, positions=positions)
    loss = heads.squared_error(L, head, positions=loss_positions, batch=batch)
    return L, run, head, loss, L.backward(loss.name)


def point(L, module, rng):
    """Random values for every leaf of the ledger, with its recurrent parameters loaded into ``module``."""
    vals = {it.name: rng.normal(size=it.shape) * 0.8 for it in L.leaves}
    own = dict(module.named_parameters())
    assert set(own) <= set(vals), sorted(set(own) - set(vals))
    module.load_state_dict({n: torch.tensor(vals[n]).reshape(p.shape) for n, p in own.items()})
    return vals


def torch_loss(head_out, vals, positions, *, mean_t=True, mean_b=True):
    W_o, b_o = torch.tensor(vals["W_o"]), torch.tensor(vals["b_o"])
    total = 0
    for t in positions:
        y = torch.tensor(vals[f"y_{t}"] if f"y_{t}" in vals else vals["y"])
        total = total + 0.5 * ((head_out[:, t, :] @ W_o.T + b_o - y) ** 2).sum()
    return total / ((len(positions) if mean_t else 1) * (B if mean_b else 1))


def leaf_tensors(vals, names):
    return {n: torch.tensor(vals[n], requires_grad=True) for n in names}


def compare(L, g, vals, module_params, ts, loss_t, out_t=None, out_rows=None):
    loss_t.backward()
    ours = evaluate(L, "numpy", values=vals)
    assert float(ours[g.loss]) == pytest.approx(loss_t.item(), rel=1e-13)
    if out_t is not None:
        got = np.stack([ours[h.name] for h in out_rows], axis=1)
        np.testing.assert_allclose(got, out_t.detach().numpy(), rtol=0, atol=TOL)
    for n, prm in module_params.items():
        np.testing.assert_allclose(ours[g.name(n)].reshape(prm.grad.shape), prm.grad.numpy(), rtol=0, atol=TOL,
                                   err_msg=n)
    for n, tensor in ts.items():
        np.testing.assert_allclose(ours[g.name(n)], tensor.grad.numpy(), rtol=0, atol=TOL, err_msg=n)


MODULES = {"rnn": "RNN", "gru": "GRU", "lstm": "LSTM"}


@needs_torch
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("seed,bias", [(0, True), (1, True), (2, False)])
def test_every_gradient_matches_the_torch_module(kind, seed, bias):
    module = getattr(torch.nn, MODULES[kind])(D, H, bias=bias, batch_first=True).double()
    L, run, head, loss, g = build(kind, bias=bias)
    vals = point(L, module, np.random.default_rng(seed))
    X = torch.tensor(np.stack([vals[f"x_{t}"] for t in range(T)], axis=1), requires_grad=True)
    ts = leaf_tensors(vals, ["h_{-1}"] + (["c_{-1}"] if kind == "lstm" else []))
    state = ts["h_{-1}"][None] if kind != "lstm" else (ts["h_{-1}"][None], ts["c_{-1}"][None])
    out, _ = module(X, state)
    loss_t = torch_loss(out, vals, range(T))
    compare(L, g, vals, dict(module.named_parameters()), ts, loss_t, out, run.h)
    ours = evaluate(L, "numpy", values=vals)
    for t in range(T):
        np.testing.assert_allclose(ours[g.name(f"x_{t}")], X.grad[:, t, :].numpy(), rtol=0, atol=TOL)


@needs_torch
def test_relu_elman_and_a_final_only_summed_loss(rng):
    module = torch.nn.RNN(D, H, nonlinearity="relu", batch_first=True).double()
    L, run, head, loss, g = build("rnn", positions="final", loss_positions="sum", batch="sum", nonlinearity="relu")
    vals = point(L, module, rng)
    ts = leaf_tensors(vals, ["h_{-1}"])
    X = torch.tensor(np.stack([vals[f"x_{t}"] for t in range(T)], axis=1))
    out, _ = module(X, ts["h_{-1}"][None])
    loss_t = torch_loss(out, vals, [T - 1], mean_t=False, mean_b=False)
    compare(L, g, vals, dict(module.named_parameters()), ts, loss_t, out, run.h)


@needs_torch
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_cell_modules_stepped_by_hand(kind, rng):
    """nn.RNNCell / GRUCell / LSTMCell (parameters without the _l0 suffix), called once per position."""
    module = {"rnn": torch.nn.RNNCell, "gru": torch.nn.GRUCell, "lstm": torch.nn.LSTMCell}[kind](D, H).double()
    L, run, head, loss, g = build(kind, suffix="")
    vals = point(L, module, rng)
    ts = leaf_tensors(vals, ["h_{-1}"] + (["c_{-1}"] if kind == "lstm" else []))
    h, c = ts["h_{-1}"], ts.get("c_{-1}")
    outs = []
    for t in range(T):
        x = torch.tensor(vals[f"x_{t}"])
        if kind == "lstm":
            h, c = module(x, (h, c))
        else:
            h = module(x, h)
        outs.append(h)
    out = torch.stack(outs, dim=1)
    compare(L, g, vals, dict(module.named_parameters()), ts, torch_loss(out, vals, range(T)), out, run.h)


def cho_gru_by_hand(X, h, w_ih, w_hh, b_ih, b_hh):
    """Cho et al. (2014), eqs. (5)-(8), written independently: reset applied to h before W_hn."""
    W_xr, W_xu, W_xn = w_ih.chunk(3)
    W_hr, W_hu, W_hn = w_hh.chunk(3)
    b_xr, b_xu, b_xn = b_ih.reshape(-1).chunk(3)
    b_hr, b_hu, b_hn = b_hh.reshape(-1).chunk(3)
    outs = []
    for t in range(X.shape[1]):
        x = X[:, t, :]
        r = torch.sigmoid(x @ W_xr.T + b_xr + h @ W_hr.T + b_hr)
        u = torch.sigmoid(x @ W_xu.T + b_xu + h @ W_hu.T + b_hu)
        n = torch.tanh(x @ W_xn.T + b_xn + (r * h) @ W_hn.T + b_hn)
        h = u * h + (1 - u) * n
        outs.append(h)
    return torch.stack(outs, dim=1)


@needs_torch
def test_cho_variant_matches_its_equations_and_differs_from_torch(rng):
    module = torch.nn.GRU(D, H, batch_first=True).double()
    L, run, head, loss, g = build("gru", variant="cho2014")
    vals = point(L, module, rng)
    names = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    ts = leaf_tensors(vals, names + ["h_{-1}"])
    X = torch.tensor(np.stack([vals[f"x_{t}"] for t in range(T)], axis=1))
    out = cho_gru_by_hand(X, ts["h_{-1}"], *(ts[n] for n in names))
    compare(L, g, vals, {}, ts, torch_loss(out, vals, range(T)), out, run.h)
    # torch's GRU on the same parameters gives other states: the reset gate sits elsewhere.
    torch_out, _ = module(X, torch.tensor(vals["h_{-1}"])[None])
    assert np.abs(torch_out.detach().numpy() - out.detach().numpy()).max() > 1e-3


def test_cho_and_torch_agree_exactly_where_they_should(rng):
    """r ⊙ (h W_hnᵀ + b_hn) = (r ⊙ h) W_hnᵀ + b_hn when W_hn is diagonal and b_hn = 0; both at h_{-1} = 0 if b_hn = 0."""
    ledgers = {}
    for variant in cells.GRU_VARIANTS:
        L = Ledger(variant)
        xs = cells.sequence_inputs(L, 4, width=2, batch=2)
        cells.gru(L, xs, cells.gru_parameters(L, 2, 3, packed=False), variant=variant)
        ledgers[variant] = L
    Lt, Lc = ledgers["torch"], ledgers["cho2014"]
    b_hn = Lt.entry_symbols("b_{hn}")
    no_bias = {b: 0 for b in b_hn}
    first = Lt.expand("h_0") - Lc.expand("h_0")
    assert all(sp.expand(e) == 0 for e in first.xreplace(no_bias))  # the first step from h_{-1} = 0
    assert any(sp.expand(e) != 0 for e in first)  # ... unless b_hn ≠ 0: torch gates it, Cho et al. do not
    vals = {it.name: rng.normal(size=it.shape) for it in Lt.leaves}
    h = {v: evaluate(ledgers[v], "numpy", values=vals)["h_3"] for v in ledgers}
    assert np.abs(h["torch"] - h["cho2014"]).max() > 1e-3
    vals["W_{hn}"] = np.diag(np.diag(vals["W_{hn}"]))
    vals["b_{hn}"] = np.zeros((1, 3))
    h = {v: evaluate(ledgers[v], "numpy", values=vals)["h_3"] for v in ledgers}
    np.testing.assert_allclose(h["torch"], h["cho2014"], rtol=0, atol=1e-15)


def test_scalar_rnn_with_a_general_phi_and_optional_initial_state():
    phi = sp.Function("phi")
    L = Ledger()
    xs = cells.sequence_inputs(L, 2)
    w_x, w_h, b = L.parameter("w_x"), L.parameter("w_h"), L.parameter("b")
    run = cells.rnn(L, xs, w_x, w_h, b, phi=phi)
    S = L.symbol
    assert L["z_0"].node.expr == S("w_x") * S("x_0") + S("b")  # h_{-1} = 0: its term is left out
    assert L["z_1"].node.expr == S("w_x") * S("x_1") + S("w_h") * S("h_0") + S("b")
    assert L["h_1"].node.expr == phi(S("z_1"))
    L2 = Ledger()
    xs2 = cells.sequence_inputs(L2, 1)
    cells.rnn(L2, xs2, L2.parameter("w_x"), L2.parameter("w_h"), phi="identity", h_init=L2.input("h_{-1}", 2))
    assert L2.value("h_0") == 2 * L2.symbol("w_h") + L2.symbol("w_x") * L2.symbol("x_0")
    assert run.T == 2 and run.scalar


def test_a_T_by_D_matrix_is_one_example_whose_rows_are_positions():
    L = Ledger()
    X = L.input("X", [[1, 2], [3, 4], [5, 6]])
    W_x = L.parameter("W_x", [[1, 0], [0, 1], [1, 1]])  # H = 3, D = 2
    W_h = L.parameter("W_h", sp.zeros(3, 3))
    run = cells.rnn(L, X, W_x, W_h, phi="identity")
    assert run.T == 3 and L.value("h_2") == sp.Matrix([[5, 6, 11]])


@needs_torch
def test_module_values_are_the_exact_binary_fractions():
    torch.manual_seed(0)
    m = torch.nn.RNN(2, 3, bias=True)
    v = cells.module_values(m, exact=True)
    w = m.weight_ih_l0.detach()
    assert v["weight_ih_l0"].shape == (3, 2) and v["bias_hh_l0"].shape == (1, 3)
    assert all(sp.Rational(*float(w[i, j]).as_integer_ratio()) == v["weight_ih_l0"][i, j]
               for i in range(3) for j in range(2))


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_inconsistent_widths_name_all_three_shapes():
    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=4, batch=2)
    with pytest.raises(ShapeError, match=r"x_t is 2×4, W_x is 3×5 and W_h is 3×3"):
        cells.rnn(L, xs, L.parameter("W_x", shape=(3, 5)), L.parameter("W_h", shape=(3, 3)))
    with pytest.raises(ShapeError, match=r"x_t is 2×4, W_x is 3×4 and W_h is 2×2"):
        cells.rnn(L, xs, L.parameter("W_x2", shape=(3, 4)), L.parameter("W_h2", shape=(2, 2)))
    p = cells.gru_parameters(L, 5, 3, packed=False)
    with pytest.raises(ShapeError, match=r"x_t is 2×4, W_\{xr\} is 3×5 and W_\{hr\} is 3×3"):
        cells.gru(L, xs, p)


def test_an_empty_sequence_says_T_must_be_at_least_one():
    L = Ledger()
    with pytest.raises(ShapeError, match="T must be at least 1"):
        cells.rnn(L, [], L.parameter("w_x"), L.parameter("w_h"))
    with pytest.raises(ShapeError, match="T, the number of positions, must be an integer ≥ 1"):
        cells.sequence_inputs(L, 0)


def test_unknown_gru_variant_lists_the_valid_ones():
    L = Ledger()
    xs = cells.sequence_inputs(L, 1, width=2)
    p = cells.gru_parameters(L, 2, 2)
    with pytest.raises(ConventionError, match=r"unknown GRU variant 'chung'.*'torch', 'cho2014'"):
        cells.gru(L, xs, p, variant="chung")


def test_other_bad_inputs():
    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=2)
    W_x, W_h = L.parameter("W_x", shape=(3, 2)), L.parameter("W_h", shape=(3, 3))
    with pytest.raises(ConventionError, match="unknown activation 'softplus'"):
        cells.rnn(L, xs, W_x, W_h, phi="softplus")
    with pytest.raises(ShapeError, match="bias is 1×2 but must be 1×3"):
        cells.rnn(L, xs, W_x, W_h, L.parameter("b", shape=(1, 2)))
    with pytest.raises(ShapeError, match="initial state is 1×2 but must be 1×3"):
        cells.rnn(L, xs, W_x, W_h, h_init=L.input("h0", shape=(1, 2)))
    with pytest.raises(ShapeError, match="scalar cell needs a scalar bias"):
        cells.rnn(L, [L.input("s_0")], L.parameter("w_x"), L.parameter("w_h"), h_init=L.input("hm", shape=(1, 1)))
    with pytest.raises(ShapeError, match="x_1 is 2×2 but x_0 is 1×2"):
        cells.rnn(L, [xs[0], L.input("x_b", shape=(2, 2))], W_x, W_h)
    run = cells.rnn(L, xs, W_x, W_h)
    with pytest.raises(ShapeError, match=r"W_o must be C×3"):
        heads.regression_head(L, run, L.parameter("W_o", shape=(1, 2)))
    head = heads.regression_head(L, run, L.parameter("W_o2", shape=(1, 3)))
    with pytest.raises(ConventionError, match="unknown reduction over positions 'median'"):
        heads.squared_error(L, head, positions="median")


@pytest.mark.parametrize("D, H", [(2, -1), (2, 0), (0, 2), (2, 1.5), (2, True)])
def test_parameter_widths_must_be_positive_integers(D, H):
    what = "hidden width H" if (D, H) != (0, 2) else "input width D"
    for make in (cells.rnn_parameters, cells.gru_parameters, cells.lstm_parameters):
        with pytest.raises(ShapeError, match=rf"the {what} must be a positive integer .*got {H if what[0] == 'h' else D}"):
            make(Ledger(), D, H)
