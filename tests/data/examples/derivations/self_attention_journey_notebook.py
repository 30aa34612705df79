"""Self-attention without trainable weights over "Your journey starts with one step" (a public notebook).

Source: https://github.com/rasbt/LLMs-from-scratch/blob/01c4b8f645911ba52105eb9951ab469a76fb4d86/ch03/01_main-chapter-code/ch03.ipynb,
sections 3.3.1–3.3.2, kept as the notebook ``self-attention-journey-notebook.ipynb`` (audited as a notebook).

    ω = X Xᵀ (no scaling),   A = softmax_rows(ω),   Z = A X

with X the 6×3 embeddings of the code cell, each row a token. Where two cells print the same line (``Sum: tensor(1.)``
in In [6] and In [7]), a claim names its cell by its execution count (``at="In [7]"``). Step 2 also divides the scores of the query x^(2)
by their sum. The outputs print torch float32 tensors to four decimals; every one is the exact value rounded.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks, exact

derivation = Derivation(
    "self-attention-journey-notebook",
    title="A simple self-attention over six 3-d tokens (LLMs from scratch, ch. 3, §3.3.1–3.3.2)",
    source="self-attention-journey-notebook.ipynb",
    description="scores X Xᵀ, softmax weights and context vectors, for the query x^(2) and for all six tokens",
)

INPUTS = [["0.43", "0.15", "0.89"], ["0.55", "0.87", "0.66"], ["0.57", "0.85", "0.64"],
          ["0.22", "0.58", "0.33"], ["0.77", "0.25", "0.10"], ["0.05", "0.80", "0.55"]]
WEIGHTS_2 = "[0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581]"


def _attention(s):
    L = s.ledger("one head with Q = K = V = X and no scaling")
    X = L.input("inputs", sp.Matrix([[exact(v) for v in row] for row in INPUTS]))
    head = blocks.scaled_dot_product(L, X, X, X, scale=1,
                                     names={"S": "attn_scores", "A": "attn_weights", "O": "all_context_vecs"})
    sums = L.define("row_sums", head.A @ sp.ones(6, 1), note="each row of the weights, summed")
    return L, X, head, sums


@derivation.section("3.3.1 A simple self-attention mechanism without trainable weights")
def one_query(s):
    L, X, head, sums = _attention(s)
    for i in range(6):  # the code cell prints the matrix one row a line
        s.given(X[i, :], what=f"inputs, row {i}")
    s.claim("[0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865]", head.S[1, :], what="attn_scores_2")
    s.claim("0.9544", head.S[0, 1], what="x^(1)·q^(2)", at="In [4], summed by hand")
    s.claim("0.9544", head.S[0, 1], what="x^(1)·q^(2)", at="In [4], torch.dot")
    scores = s.values.exact(head.S)[1, :]
    plain = scores / sum(scores)
    s.claim("[0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656]", plain, what="attn_weights_2_tmp = ω/Σω")
    s.claim("1.0000", sum(plain), what="its sum")
    s.claim("1", sums[1, 0], what="the weights sum to 1", near="sum to 1. The plainest")
    for how, run in (("softmax_naive", "In [6]"), ("torch.softmax", "In [7]")):
        s.claim(WEIGHTS_2, head.A[1, :], what=f"attn_weights_2 by {how}", at=run)
        s.claim("1", sums[1, 0], what="their sum, printed tensor(1.)", at=run, near="Sum: tensor(1.)")
    s.claim("[0.4419, 0.6515, 0.5683]", head.O[1, :], what="context_vec_2 = z^(2)")


@derivation.section("3.3.2 Computing attention weights for all input tokens")
def all_queries(s):
    L, X, head, sums = _attention(s)
    for how in ("two loops of torch.dot", "inputs @ inputs.T"):
        s.claim("[[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310], [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],"
                " [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605], [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],"
                " [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935], [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]]",
                head.S, what=f"attn_scores by {how}")
    s.claim("[[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452], [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],"
            " [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565], [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],"
            " [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295], [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]]",
            head.A, what="attn_weights")
    printed = sp.Matrix([[exact(v) for v in WEIGHTS_2.strip("[]").split(", ")]])
    s.given(printed, what="row 2 of attn_weights, as printed, summed in code", near="row_2_sum")
    s.claim("1.0", sum(printed), what="row_2_sum, the sum of the printed row 2")
    s.claim("[1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000]", sums.T, what="all row sums")
    s.claim("[[0.4421, 0.5931, 0.5790], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671],"
            " [0.4304, 0.6298, 0.5510], [0.4671, 0.5910, 0.5266], [0.4177, 0.6503, 0.5645]]",
            head.O, what="all_context_vecs")
    for where in ("the text", "Previous 2nd context vector"):
        s.claim("[0.4419, 0.6515, 0.5683]", head.O[1, :], what=f"z^(2) again, in {where}")
