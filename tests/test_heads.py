"""Task heads: classification, pooling, next-token targets, masked cross-entropy, greedy generation (004)."""

import numpy as np
import pytest
import sympy as sp

from symseq import ConventionError, Ledger, MaskError, ShapeError, blocks, evaluate, ops
from symseq.verify.autograd import exact_binary


def test_token_classifier_with_distinct_sizes():
    L = Ledger()
    H = L.input("H_enc", [[1, 0], [0, 1], [1, 1]])  # T = 3, D = 2
    W_o = L.parameter("W_o", [[1, 0], [0, 1], [1, 1], [1, -1]])  # C = 4, stored C×D
    b_o = L.parameter("b_o", [[0, 0, 0, 1]])
    s = blocks.token_classifier(L, H, W_o, b_o, orientation="out_in")
    assert L.value(s.name) == sp.Matrix([[1, 0, 1, 2], [0, 1, 1, 0], [1, 1, 2, 1]])
    with pytest.raises(ConventionError, match="unknown weight orientation"):
        blocks.token_classifier(L, H, W_o, orientation="rows", name="s2")
    with pytest.raises(ShapeError, match="use orientation='out_in'"):
        blocks.next_token_logits(L, H, W_o, orientation="in_out", name="s3")


def test_tied_logits_reuse_the_embedding_table():
    L = Ledger()
    H = L.input("H_enc", [[1, 2], [0, -1]])  # T = 2, D = 2
    E = L.parameter("E_vocab", [[1, 0], [0, 1], [1, 1]])  # K = 3
    s = blocks.tied_logits(L, H, E)
    assert L.value(s.name) == sp.Matrix([[1, 2, 3], [0, -1, -1]])
    with pytest.raises(ShapeError, match="tying needs the model width D on both"):
        blocks.tied_logits(L, H, L.parameter("E3", shape=(3, 3)), name="bad")


def test_masked_mean_pool_averages_valid_rows_and_routes_gradients_to_them():
    L = Ledger()
    H = L.input("H", [[1, 2, 3], [100, 100, 100], [5, 6, 7], [-9, -9, -9]])  # T = 4, D = 3
    pooled = blocks.masked_mean_pool(L, H, [1, 0, 1, 0])
    assert pooled.shape == (1, 3)
    assert L.value(pooled.name) == sp.Matrix([[3, 4, 5]])
    w = L.input("w", [[1, 10, 100]])
    L.define("loss", ops.Sum(pooled * w, None))
    g = L.backward("loss")
    assert L.value(g.name("H")) == sp.Matrix([[sp.Rational(1, 2), 5, 50], [0, 0, 0], [sp.Rational(1, 2), 5, 50],
                                              [0, 0, 0]])
    with pytest.raises(MaskError, match="pooling mask marks no position as valid"):
        blocks.masked_mean_pool(L, H, [0, 0, 0, 0], name="p0")
    with pytest.raises(ShapeError, match="pooling mask has 3 entries but there are 4 positions"):
        blocks.masked_mean_pool(L, H, [1, 1, 0], name="p1")


def test_batched_masked_mean_pool_divides_each_sequence_by_its_own_count():
    """Pooling took one sequence only: a batch could not divide each sequence by its own number of valid rows."""
    L = Ledger()
    Hs = [L.input(f"H_{b}", rows) for b, rows in enumerate([
        [[1, 2], [3, 4], [50, 50], [60, 60]],      # 2 valid rows
        [[1, 0], [0, 1], [2, 2], [1, 1]],          # 4 valid rows
        [[-3, 9], [70, 70], [80, 80], [90, 90]],   # 1 valid row
    ])]  # B = 3, T = 4, D = 2
    m = [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]
    pooled = blocks.masked_mean_pool(L, Hs, m)
    assert pooled.shape == (3, 2)
    assert L.value(pooled.name) == sp.Matrix([[2, 3], [1, 1], [-3, 9]])
    w = L.input("w", [[1, 10], [100, 1000], [7, 70]])
    L.define("loss", ops.Sum(pooled * w, None))
    g = L.backward("loss")
    assert L.value(g.name("H_0")) == sp.Matrix([[sp.Rational(1, 2), 5], [sp.Rational(1, 2), 5], [0, 0], [0, 0]])
    assert L.value(g.name("H_1")) == sp.Matrix([[25, 250]] * 4)
    assert L.value(g.name("H_2")) == sp.Matrix([[7, 70], [0, 0], [0, 0], [0, 0]])
    # torch's key_padding_mask (True = padding) names its convention and gives the same rows
    same = blocks.masked_mean_pool(L, Hs, blocks.Mask.exclude(~np.array(m, dtype=bool)), name="h_bar_kpm")
    assert L.value(same.name) == L.value(pooled.name)


def test_batched_masked_mean_pool_names_the_batch_item_whose_mask_is_empty():
    L = Ledger()
    Hs = [L.input(f"H_{b}", shape=(3, 2)) for b in range(2)]
    with pytest.raises(MaskError, match="pooling mask: batch item 1 marks no position as valid"):
        blocks.masked_mean_pool(L, Hs, [[1, 0, 1], [0, 0, 0]])
    with pytest.raises(ShapeError, match="pooling mask has shape 2×4 but the batch is B×T = 2×3"):
        blocks.masked_mean_pool(L, Hs, [[1, 0, 1, 1], [1, 1, 1, 1]])
    with pytest.raises(ShapeError, match="pooling mask has shape 3×3 but the batch is B×T = 2×3"):
        blocks.masked_mean_pool(L, Hs, [[1, 0, 1]] * 3)
    with pytest.raises(MaskError, match=r"pooling mask: entry \(batch item 1, position 2\) is 0.5"):
        blocks.masked_mean_pool(L, Hs, [[1, 0, 1], [1, 1, 0.5]])
    with pytest.raises(ShapeError, match="inputs of the same shape T×D; got 3×2, 4×2"):
        blocks.masked_mean_pool(L, [Hs[0], L.input("H_4", shape=(4, 2))], [[1, 1, 1], [1, 1, 1]])
    assert "h_bar" not in L  # nothing was appended


def test_batched_masked_mean_pool_matches_torch_with_its_gradient(rng):
    torch = pytest.importorskip("torch")
    B, T, D = 3, 5, 2
    valid = rng.random((B, T)) < 0.6
    valid[:, 0] = True
    L = Ledger()
    Hs = [L.input(f"H_{b}", shape=(T, D)) for b in range(B)]
    pooled = blocks.masked_mean_pool(L, Hs, valid)
    G = L.input("G", shape=(B, D))
    L.define("loss", ops.Sum(pooled * G, None))
    grads = L.backward("loss")
    h, G_val = rng.normal(size=(B, T, D)), rng.normal(size=(B, D))
    names = [pooled.name] + [grads.name(f"H_{b}") for b in range(B)]
    ours = evaluate(L, "numpy", values={**{f"H_{b}": h[b] for b in range(B)}, "G": G_val}, targets=names)
    th = torch.tensor(h, requires_grad=True)
    m = torch.tensor(valid, dtype=torch.float64)[..., None]
    ref = (th * m).sum(dim=1) / m.sum(dim=1)  # (B, D), each sequence over its own count
    (ref * torch.tensor(G_val)).sum().backward()
    np.testing.assert_allclose(ours[pooled.name], ref.detach().numpy(), rtol=0, atol=1e-14)
    for b in range(B):
        np.testing.assert_allclose(ours[grads.name(f"H_{b}")], th.grad[b].numpy(), rtol=0, atol=1e-14)


def test_next_token_targets_shift_one_position():
    targets, valid = blocks.next_token_targets([0, 1, 2, 0, 3, 4, 5])
    assert targets == [1, 2, 0, 3, 4, 5, None] and valid == [True] * 6 + [False]
    targets, valid = blocks.next_token_targets([0, 1, 2, 0, 3, 4, 5], continuation=6)
    assert targets[-1] == 6 and all(valid)
    with pytest.raises(ShapeError, match="at least one input token"):
        blocks.next_token_targets([])


def test_masked_cross_entropy_is_the_mean_over_valid_targets_in_nats():
    L = Ledger()
    Z = L.input("Z", [[0, sp.log(3)], [sp.log(2), 0], [5, 5]])  # T = 3, C = 2
    ce = blocks.masked_cross_entropy(L, Z, [1, 0, 99], valid=[1, 1, 0])  # 99 is never read: its row is invalid
    # ℓ_0 = log 4 − log 3, ℓ_1 = log 3 − log 2: the mean is (log 2)/2
    assert sp.simplify(L.value(ce.loss.name) - sp.log(2) / 2) == 0
    ce2 = blocks.masked_cross_entropy(L, Z, [1, 0, None], name="loss2", tag="2")  # validity from None
    assert sp.simplify(L.value(ce2.loss.name) - sp.log(2) / 2) == 0
    with pytest.raises(MaskError, match="no target is valid"):
        blocks.masked_cross_entropy(L, Z, [None, None, None], name="l3", tag="3")
    with pytest.raises(ShapeError, match=r"rows \[2\] are marked valid but have no target"):
        blocks.masked_cross_entropy(L, Z, [1, 0, None], valid=[1, 1, 1], name="l4", tag="4")
    with pytest.raises(ShapeError, match="2 targets for 3 rows"):
        blocks.masked_cross_entropy(L, Z, [1, 0], name="l5", tag="5")
    with pytest.raises(ShapeError, match="outside 0..1"):
        blocks.masked_cross_entropy(L, Z, [1, 2, None], name="l6", tag="6")


def test_batch_mean_weights_every_valid_target_equally():
    L = Ledger()
    Za = L.input("Z_a", [[0, 0, 0], [1, 2, 3]])  # one valid target
    Zb = L.input("Z_b", [[0, sp.log(2), 0], [0, 0, 0], [sp.log(5), 0, 0], [0, 0, 0]])  # three valid targets
    ce = blocks.masked_cross_entropy(L, [Za, Zb], [[2, None], [1, 0, 0, None]])
    la = sp.log(3)  # uniform over three classes
    lb = [sp.log(4) - sp.log(2), sp.log(3), sp.log(7) - sp.log(5)]
    assert sp.simplify(L.value(ce.loss.name) - (la + sum(lb)) / 4) == 0
    mean_of_means = (la + sum(lb) / 3) / 2
    assert sp.N(L.value(ce.loss.name) - mean_of_means, 20) != 0


def test_masked_cross_entropy_matches_torch_loss_and_gradient(rng):
    torch = pytest.importorskip("torch")
    L = Ledger()
    Z = L.input("Z", shape=(5, 4))  # T = 5, C = 4
    targets, valid = [3, 0, 7, 1, 2], [1, 1, 0, 1, 0]  # target 7 is invalid and masked out
    ce = blocks.masked_cross_entropy(L, Z, targets, valid)
    g = L.backward(ce.loss.name)
    for _ in range(3):
        z = rng.normal(size=(5, 4)) * 2
        ours = evaluate(L, "mpmath", values={"Z": exact_binary(z)}, dps=30)
        zt = torch.tensor(z, dtype=torch.float64, requires_grad=True)
        y = torch.tensor([t if v else -100 for t, v in zip(targets, valid)])
        loss = torch.nn.functional.cross_entropy(zt, y, ignore_index=-100)
        (grad,) = torch.autograd.grad(loss, [zt])
        assert float(ours[ce.loss.name]) == pytest.approx(loss.item(), abs=1e-13)
        np.testing.assert_allclose(np.array(ours[g.name("Z")], dtype=float), grad.numpy(), rtol=0, atol=1e-13)


def test_greedy_generation_appends_the_argmax_with_ties_to_the_lowest_id():
    K = 4

    def successor(ids):  # the next token is (last + 1) mod K; exact logits
        return [sp.Integer(1) if k == (ids[-1] + 1) % K else sp.Integer(0) for k in range(K)]

    assert blocks.greedy_generate(successor, [2], steps=3) == [2, 3, 0, 1]
    assert blocks.greedy_generate(successor, [2], steps=5, eos=0) == [2, 3, 0]
    assert blocks.greedy_generate(successor, [1, 2], steps=0) == [1, 2]
    assert blocks.greedy_generate(lambda ids: [sp.log(2), sp.Integer(1), sp.log(2)], [0], steps=1) == [0, 1]
    assert blocks.greedy_generate(lambda ids: [sp.log(3), sp.log(3), 0], [0], steps=2) == [0, 0, 0]  # tie → 0
    near = sp.Rational(1, 10**40)  # decided at 50 digits, not in float32 or float64
    assert blocks.greedy_generate(lambda ids: [sp.Integer(1), 1 + near], [0], steps=1) == [0, 1]
    with pytest.raises(ShapeError, match="non-empty prefix"):
        blocks.greedy_generate(successor, [], steps=1)
    with pytest.raises(ShapeError, match="non-negative integer"):
        blocks.greedy_generate(successor, [0], steps=-1)
    with pytest.raises(ShapeError, match="returned 3 logits after returning 4"):
        blocks.greedy_generate(lambda ids: [0] * (4 if len(ids) == 1 else 3), [0], steps=2)
    with pytest.raises(ConventionError, match="logits must be numbers"):
        blocks.greedy_generate(lambda ids: [sp.Symbol("x"), 0], [0], steps=1)
