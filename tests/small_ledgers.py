"""Small ledgers the core tests build for themselves (the bundled derivations are tested on their own)."""

import sympy as sp

from symseq import Ledger, blocks, ops


def two_token_ledger() -> tuple[Ledger, dict]:
    """Week 8 §4 (``000_30e9e4099f2cd2dc.txt``) from ledger operations: the tokens A, B as H = I₂ attend causally
    with W_Q = W_K = W_V = I₂ and scores divided by √2, the residual H' = H + A V, a readout Z = H' W_out with
    W_out = I₂, P = softmax_rows(Z) and the loss −log P_{1,1} (target B at position 1); loss = 0.232674446028972."""
    L = Ledger("two-token context AB, causal head, residual, identity readout")
    H = L.input("H", sp.eye(2))
    W_Q, W_K, W_V, W_out = (L.parameter(n, sp.eye(2)) for n in ("W_Q", "W_K", "W_V", "W_out"))
    S = L.define("S", (H @ W_Q) @ (H @ W_K).T / sp.sqrt(2))
    A = L.define("A", ops.SoftmaxRows(S, blocks.masks.causal(2)))
    Hp = L.define("H'", H + A @ (H @ W_V))
    Z = L.define("Z", Hp @ W_out)
    P = blocks.probabilities(L, Z)
    ce = blocks.cross_entropy(L, Z, targets=[1], positions=[1], name="loss")
    return L, {"A": A, "H'": Hp, "Z": Z, "P": P, "loss": ce.loss}
