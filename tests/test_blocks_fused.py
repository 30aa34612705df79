"""Fused W_QKV and its split, gated feed-forward maps, post-norm blocks, and the attention error cases.

Sources: Handout #11 (001) §4.2 (fused projection), §5.1 (post-norm and
pre-norm), §9.3 (gated FFN, RMSNorm); issue list of bad inputs (d_k of Q and K
differing, a mask of the wrong shape, a query with no allowed source, ε = 0 on
a constant row).
"""

import numpy as np
import pytest
import sympy as sp

from symseq import ConventionError, EvaluationError, Ledger, MaskError, ShapeError, blocks, evaluate
from symseq.derive.symbolic import vanishes
from symseq.verify.autograd import exact_binary

from lazy_torch import F, needs_torch, torch

pytestmark = needs_torch


def test_fused_split_equals_separate_projections():
    """X W_QKV split into three adjacent groups and h head slices equals X W_Q⁽ⁱ⁾, X W_K⁽ⁱ⁾, X W_V⁽ⁱ⁾ (symbolic)."""
    T, D, h, d_k, d_v = 3, 5, 2, 3, 2
    L = Ledger()
    X = L.input("X", shape=(T, D))
    W = L.parameter("W_QKV", shape=(D, h * (2 * d_k + d_v)))
    qkv = blocks.split_qkv(L, X, W, n_heads=h, d_k=d_k, d_v=d_v, orientation="in_out")
    Xs, Ws = L.entry_symbols("X"), L.entry_symbols("W_QKV")
    for i, (Q, K, V) in enumerate(qkv.heads):
        W_Q = Ws[:, i * d_k:(i + 1) * d_k]
        W_K = Ws[:, h * d_k + i * d_k:h * d_k + (i + 1) * d_k]
        W_V = Ws[:, 2 * h * d_k + i * d_v:2 * h * d_k + (i + 1) * d_v]
        for node, Wp in ((Q, W_Q), (K, W_K), (V, W_V)):
            assert vanishes(L.expand(node.name) - Xs * Wp)


def test_split_follows_nanogpt_view_and_transpose():
    """Head i of our split holds the columns that view(B,T,nh,hs).transpose(1,2) gives head i."""
    B, T, D, nh = 1, 2, 6, 3
    hs = D // nh
    labels = torch.arange(T * 3 * D).view(B, T, 3 * D)
    q, k, v = labels.split(D, dim=2)
    q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
    L = Ledger()
    X = L.input("X", sp.eye(T))
    W = L.parameter("W", sp.Matrix(T * 3 * D, 1, list(range(T * 3 * D))).reshape(T, 3 * D))
    qkv = blocks.split_qkv(L, X, W, n_heads=nh, orientation="in_out")
    for i, (Q, _, _) in enumerate(qkv.heads):
        assert np.array_equal(np.array(L.value(Q.name).tolist(), dtype=np.int64), q[0, i].numpy())


def test_head_width_errors_are_clear():
    L = Ledger()
    X = L.input("X", shape=(4, 5))
    with pytest.raises(ShapeError, match="not 3·h·d for h=2"):
        blocks.split_qkv(L, X, L.parameter("W1", shape=(5, 16)), n_heads=2, orientation="in_out")
    with pytest.raises(ShapeError, match="need 2·h·d_k \\+ h·d_v = 14"):
        blocks.split_qkv(L, X, L.parameter("W2", shape=(5, 16)), n_heads=2, d_k=3, d_v=1, orientation="in_out")
    with pytest.raises(ShapeError, match="give both d_k and d_v"):
        blocks.split_qkv(L, X, L.parameter("W3", shape=(5, 16)), n_heads=2, d_k=3, orientation="in_out")
    with pytest.raises(ConventionError, match="n_heads must be a positive integer"):
        blocks.split_qkv(L, X, L.parameter("W4", shape=(5, 15)), n_heads=0, orientation="in_out")


def test_batch_mask_errors_name_the_batch_item_and_query_position():
    T, D = 3, 2
    L = Ledger()
    Xs = [L.input(f"X{b}", shape=(T, D)) for b in range(2)]
    W = L.parameter("W_QKV", shape=(D, 3 * D))
    W_O = L.parameter("W_O", shape=(D, D))
    masks = np.ones((2, T, T), dtype=bool)
    masks[1, 2] = False
    with pytest.raises(MaskError, match=r"batch item 1: query position 2 has no allowed source"):
        blocks.batched_self_attention(L, Xs, W, W_O, masks=masks, n_heads=1, orientation="in_out")
    with pytest.raises(ShapeError, match=r"batch mask has shape 2×3×2 but the batch needs B×T×T = 2×3×3"):
        blocks.batched_self_attention(L, Xs, W, W_O, masks=masks[:, :, :2], n_heads=1, orientation="in_out")
    rows = blocks.batched_self_attention(L, Xs, W, W_O, masks=masks, n_heads=1, orientation="in_out",
                                         empty_rows="zero")
    vals = {"X0": np.ones((T, D)), "X1": np.arange(T * D).reshape(T, D) / 7, "W_QKV": np.eye(D, 3 * D),
            "W_O": np.eye(D)}
    out = evaluate(L, "numpy", values=vals, targets=[rows[1].heads[0].A.name])
    assert np.all(out[rows[1].heads[0].A.name][2] == 0)


def test_mask_of_the_wrong_shape_names_both_shapes():
    L = Ledger()
    Q = L.input("Q", shape=(3, 2))
    with pytest.raises(ShapeError, match="mask has shape 2×3 but the scores are 3×3"):
        blocks.scaled_dot_product(L, Q, Q, Q, mask=np.ones((2, 3), dtype=bool))
    with pytest.raises(ShapeError, match="mask has shape 3×2 but the scores are 3×3"):
        blocks.fused_self_attention(L, Q, L.parameter("W", shape=(2, 6)), L.parameter("W_O", shape=(2, 2)),
                                    n_heads=1, orientation="in_out", mask=np.ones((3, 2), dtype=bool))
    with pytest.raises(MaskError, match="unknown mask 'future'"):
        blocks.fused_self_attention(L, Q, L.parameter("W2", shape=(2, 6)), L.parameter("W_O2", shape=(2, 2)),
                                    n_heads=1, orientation="in_out", mask="future")


def test_rms_norm_zero_row_with_zero_eps_names_the_row():
    L = Ledger()
    X = L.input("X", [[1, 2], [0, 0]])
    n = blocks.rms_norm(L, X, eps=0, name="RMS")
    with pytest.raises(EvaluationError, match=r"row RMS evaluates to .* at entry \[1, 0\].*all zeros.*ε > 0"):
        L.value(n.out.name)
    # RMSNorm does not subtract the mean: (1, 2) has mean square 5/2
    L2 = Ledger()
    n2 = blocks.rms_norm(L2, L2.input("X", [[1, 2]]), eps=0, name="RMS")
    assert L2.value(n2.out.name) == sp.Matrix([[1, 2]]) / sp.sqrt(sp.Rational(5, 2))


@pytest.mark.parametrize("activation,reference", [
    ("glu", lambda x: torch.sigmoid(x)), ("reglu", lambda x: torch.relu(x)), ("geglu", lambda x: F.gelu(x)),
    ("geglu_tanh", lambda x: F.gelu(x, approximate="tanh")), ("swiglu", lambda x: F.silu(x))])
def test_gated_feed_forward_matches_torch(rng, activation, reference):
    T, D, m = 7, 5, 4
    L = Ledger()
    X = L.input("X", shape=(T, D))
    Wg, Wu = L.parameter("W_gate", shape=(m, D)), L.parameter("W_up", shape=(m, D))
    Wd = L.parameter("W_down", shape=(D, m))
    bg = L.parameter("b_gate", shape=(1, m))
    ff = blocks.gated_feed_forward(L, X, Wg, Wu, Wd, b_gate=bg, orientation="out_in", activation=activation)
    G = L.input("G", shape=(T, D))
    from symseq import ops

    L.define("ℓ", ops.Sum(G * ff.out, None))
    grads = L.backward("ℓ")
    vals = {n: rng.normal(size=L.shape(n)) for n in ("X", "W_gate", "W_up", "W_down", "b_gate", "G")}
    t = {n: torch.tensor(v, requires_grad=True) for n, v in vals.items()}
    y = (reference(t["X"] @ t["W_gate"].T + t["b_gate"]) * (t["X"] @ t["W_up"].T)) @ t["W_down"].T
    (y * t["G"]).sum().backward()
    names = [ff.out.name] + [grads.name(n) for n in ("X", "W_gate", "W_up", "W_down", "b_gate")]
    exact_vals = {n: exact_binary(np.asarray(v)) for n, v in vals.items()}  # the same binary values as torch
    ours = evaluate(L, "mpmath", dps=30, values=exact_vals, targets=names)

    def arr(v):
        return np.array([[float(x) for x in row] for row in v])

    np.testing.assert_allclose(arr(ours[ff.out.name]), y.detach().numpy(), atol=1e-12, rtol=0)
    for n in ("X", "W_gate", "W_up", "W_down", "b_gate"):
        np.testing.assert_allclose(arr(ours[grads.name(n)]), t[n].grad.numpy(), atol=1e-11, rtol=0)


def test_gated_feed_forward_errors():
    L = Ledger()
    X = L.input("X", shape=(2, 3))
    with pytest.raises(ConventionError, match="unknown gate activation 'swish'"):
        blocks.gated_feed_forward(L, X, X, X, X, orientation="in_out", activation="swish")
    with pytest.raises(ShapeError, match="W_gate gives 4 gates but W_up gives 5 features"):
        blocks.gated_feed_forward(L, X, L.parameter("Wg", shape=(3, 4)), L.parameter("Wu", shape=(3, 5)),
                                  L.parameter("Wd", shape=(4, 3)), orientation="in_out")
    with pytest.raises(ShapeError, match="W_down maps to width 2 but the input has width 3"):
        blocks.gated_feed_forward(L, X, L.parameter("Wg2", shape=(3, 4)), L.parameter("Wu2", shape=(3, 4)),
                                  L.parameter("Wd2", shape=(4, 2)), orientation="in_out")


@pytest.mark.parametrize("norm_first", [False, True])
def test_post_and_pre_norm_blocks_match_transformer_encoder_layer(rng, norm_first):
    """nn.TransformerEncoderLayer (no biases, dropout 0, ReLU): post-norm by default, pre-norm with norm_first."""
    T, D, h, m = 7, 6, 2, 5
    d_k = D // h
    mod = torch.nn.TransformerEncoderLayer(D, h, dim_feedforward=m, dropout=0.0, batch_first=True, bias=False,
                                           norm_first=norm_first, dtype=torch.float64)
    with torch.no_grad():
        for p in mod.parameters():
            p.copy_(torch.tensor(rng.normal(size=tuple(p.shape)) * 0.5))
    L = Ledger()
    X = L.input("X", shape=(T, D))
    W_in = mod.self_attn.in_proj_weight.detach().numpy()
    heads = []
    for i in range(h):
        heads.append(tuple(L.parameter(f"W_{n}^({i + 1})", shape=(d_k, D)) for n in "QKV"))
    params = blocks.BlockParams(heads, L.parameter("W_O", shape=(D, D)),
                                (L.parameter("W_1", shape=(m, D)), None, L.parameter("W_2", shape=(D, m)), None),
                                (L.parameter("gamma_1", shape=(1, D)), None), (L.parameter("gamma_2", shape=(1, D)), None))
    if norm_first:
        blk = blocks.transformer_block(L, X, params, orientation="out_in", tag="(0)", eps="1e-5", mask=None)
    else:
        blk = blocks.transformer_block(L, X, params, orientation="out_in", tag="(0)", eps="1e-5", norm="post")
    vals = {"X": rng.normal(size=(T, D)), "W_O": mod.self_attn.out_proj.weight.detach().numpy(),
            "W_1": mod.linear1.weight.detach().numpy(), "W_2": mod.linear2.weight.detach().numpy(),
            "gamma_1": mod.norm1.weight.detach().numpy()[None], "gamma_2": mod.norm2.weight.detach().numpy()[None]}
    for i in range(h):
        for g, n in enumerate("QKV"):
            vals[f"W_{n}^({i + 1})"] = W_in[g * D + i * d_k:g * D + (i + 1) * d_k]
    y = mod(torch.tensor(vals["X"])[None])[0].detach().numpy()
    exact_vals = {n: exact_binary(np.asarray(v)) for n, v in vals.items()}  # the same binary values as torch
    ours = evaluate(L, "mpmath", dps=30, values=exact_vals, targets=[blk.out.name])[blk.out.name]
    np.testing.assert_allclose(np.array([[float(x) for x in r] for r in ours]), y, atol=1e-12, rtol=0)
