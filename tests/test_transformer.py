"""The Transformer block (symseq.blocks.transformer): pre-norm and post-norm encoder blocks, the MLP and the
stack, against an independent torch float64 implementation."""

import math

import numpy as np
import pytest

from symseq import ConventionError, Ledger, ShapeError, blocks, evaluate, ops
from symseq.verify.autograd import exact_binary, random_values

T, D, DK, DV, F = 4, 5, 3, 2, 6  # pairwise distinct, so a swapped axis cannot pass


def encoder_ledger(*, norm="pre", mask=None, block_masks=None, n_blocks=1):
    L = Ledger("encoder")
    H0 = L.input("H^(0)", shape=(T, D))
    params = []
    for ell in range(n_blocks):
        heads = [tuple(L.parameter(f"W_{w}^({ell},{i})", shape=(DK if w in "QK" else DV, D)) for w in "QKV")
                 for i in (1, 2)]
        W_O = L.parameter(f"W_O^({ell})", shape=(D, 2 * DV))
        mlp = (L.parameter(f"W_1^({ell})", shape=(F, D)), L.parameter(f"b_1^({ell})", shape=(1, F)),
               L.parameter(f"W_2^({ell})", shape=(D, F)), L.parameter(f"b_2^({ell})", shape=(1, D)))
        ln = [(L.parameter(f"gamma_{k}^({ell})", shape=(1, D)), L.parameter(f"beta_{k}^({ell})", shape=(1, D)))
              for k in (1, 2)]
        params.append(blocks.BlockParams(heads, W_O, mlp, ln1=ln[0], ln2=ln[1]))
    ln_f = (L.parameter("gamma_f", shape=(1, D)), L.parameter("beta_f", shape=(1, D)))
    enc = blocks.encoder(L, H0, params, orientation="out_in", eps="1e-5", norm=norm, ln_final=ln_f, mask=mask,
                         block_masks=block_masks, names=blocks.ENCODER_NAMES)
    G = L.input("G", shape=(T, D))
    L.define("loss", ops.Sum(enc.out * G, None))
    return L, enc


def torch_encoder(v, *, norm="pre", masks=(None,)):
    """An independent torch implementation of the encoder (nn.LayerNorm's convention, weights stored out×in)."""
    import torch

    def ln(x, g, b):
        return torch.nn.functional.layer_norm(x, (D,), g.reshape(-1), b.reshape(-1), eps=1e-5)

    def mha(x, ell, mask):
        outs = []
        for i in (1, 2):
            Q, K, V = (x @ v[f"W_{w}^({ell},{i})"].T for w in "QKV")
            S = Q @ K.T / math.sqrt(DK)
            if mask is not None:
                S = S.masked_fill(~torch.tensor(mask), float("-inf"))
            outs.append(torch.softmax(S, dim=-1) @ V)
        return torch.cat(outs, dim=1) @ v[f"W_O^({ell})"].T

    def mlp(x, ell):
        h = torch.relu(x @ v[f"W_1^({ell})"].T + v[f"b_1^({ell})"])
        return h @ v[f"W_2^({ell})"].T + v[f"b_2^({ell})"]

    H = v["H^(0)"]
    for ell, mask in enumerate(masks):
        g1, b1, g2, b2 = (v[f"{n}^({ell})"] for n in ("gamma_1", "beta_1", "gamma_2", "beta_2"))
        if norm == "pre":
            U = H + mha(ln(H, g1, b1), ell, mask)
            H = U + mlp(ln(U, g2, b2), ell)
        else:
            U = ln(H + mha(H, ell, mask), g1, b1)
            H = ln(U + mlp(U, ell), g2, b2)
    if norm == "pre":
        H = ln(H, v["gamma_f"], v["beta_f"])
    return (H * v["G"]).sum()


@pytest.mark.parametrize("norm, masks", [("pre", (None,)), ("post", (None,)), ("pre", ("causal", "causal"))])
def test_encoder_values_and_every_gradient_match_torch(rng, norm, masks):
    torch = pytest.importorskip("torch")
    L, enc = encoder_ledger(norm=norm, block_masks=list(masks), n_blocks=len(masks))
    g = L.backward("loss")
    values = random_values(L, rng, scale=0.8)
    ours = evaluate(L, "mpmath", values={n: exact_binary(a) for n, a in values.items()}, dps=30)
    ts = {n: torch.tensor(a, dtype=torch.float64, requires_grad=True) for n, a in values.items()}
    allowed = [None if m is None else blocks.masks.causal(T) for m in masks]
    loss = torch_encoder(ts, norm=norm, masks=allowed)
    assert float(ours["loss"]) == pytest.approx(loss.item(), rel=1e-12)
    names = [it.name for it in L.leaves]
    grads = torch.autograd.grad(loss, [ts[n] for n in names], allow_unused=True)
    for n, tg in zip(names, grads):
        ref = np.array(ours[g.name(n)], dtype=float) if n in g else np.zeros(L.shape(n))
        got = np.zeros(L.shape(n)) if tg is None else tg.numpy()
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10, err_msg=n)


def test_row_names_follow_the_handout():
    L, enc = encoder_ledger()
    blk = enc.blocks[0]
    assert [blk.ln1.out.name, blk.mha.out.name, blk.U.name, blk.ln2.out.name, blk.mlp.Z.name, blk.mlp.J.name,
            blk.mlp.B.name, blk.out.name, enc.out.name] == [
        "X^{(0)}", "B_att^{(0)}", "U^{(0)}", "R^{(0)}", "Z_mlp^{(0)}", "J_mlp^{(0)}", "B_mlp^{(0)}", "H^{(1)}", "H_enc"]
    assert (blk.mlp.Z.shape, blk.mha.concat.shape, blk.out.shape) == ((T, F), (T, 2 * DV), (T, D))


def test_causal_mask_only_in_the_last_block_leaks_the_future(rng):
    """∂(row 0 of H_enc)/∂(row 2 of H^(0)): exactly zero with a causal mask in every block, nonzero otherwise."""
    for masks, leaks in ((["causal", "causal"], False), ([None, "causal"], True)):
        L, enc = encoder_ledger(block_masks=masks, n_blocks=2)
        values = random_values(L, rng, scale=0.8)
        values["G"] = np.zeros((T, D))
        values["G"][0, :] = rng.normal(size=D)  # the loss reads row 0 only
        g = L.backward("loss")
        exact_vals = {n: exact_binary(a) for n, a in values.items()}
        grad = np.array(evaluate(L, "mpmath", values=exact_vals, dps=30)[g.name("H^(0)")], dtype=object)
        future = [x for row in grad[1:] for x in row]
        assert any(x != 0 for x in future) == leaks
        assert any(x != 0 for x in grad[0])


def test_encoder_errors():
    L = Ledger()
    H0 = L.input("H", shape=(T, D))
    with pytest.raises(ShapeError, match="at least one block"):
        blocks.encoder(L, H0, [], orientation="out_in", eps="1e-5")
    L2, enc = encoder_ledger()
    p = blocks.BlockParams([], None, (None, None, None, None))
    with pytest.raises(ConventionError, match="unknown norm placement 'middle'"):
        blocks.transformer_block(L, H0, p, orientation="out_in", eps="1e-5", norm="middle")
    with pytest.raises(ShapeError, match="block_masks has 1 entries for 2 blocks"):
        blocks.encoder(L, H0, [p, p], orientation="out_in", eps="1e-5", block_masks=[None])
    with pytest.raises(ConventionError, match="either mask .* or block_masks"):
        blocks.encoder(L, H0, [p], orientation="out_in", eps="1e-5", mask="causal", block_masks=[None])


def test_mlp_shapes_are_checked():
    L = Ledger()
    X = L.input("R", shape=(T, D))
    W_1 = L.parameter("W_1", shape=(F, D))
    W_2 = L.parameter("W_2", shape=(F, D))  # wrong: should be D×F for out_in
    with pytest.raises(ShapeError, match="B_mlp: X is 4×6 but W is 6×5"):
        blocks.mlp(L, X, W_1, None, W_2, None, orientation="out_in", names=blocks.ENCODER_NAMES.mlp)
