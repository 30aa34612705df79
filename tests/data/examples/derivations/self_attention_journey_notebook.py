"""Self-attention without trainable weights over "Your journey starts with one step" (a public notebook).

Source: https://github.com/rasbt/LLMs-from-scratch/blob/01c4b8f645911ba52105eb9951ab469a76fb4d86/ch03/01_main-chapter-code/ch03.ipynb,
sections 3.3.1–3.3.2, kept as the notebook ``self-attention-journey-notebook.ipynb`` (audited as a notebook).

    ω = X Xᵀ (no scaling),   A = softmax_rows(ω),   Z = A X

with X the 6×3 embeddings of the code cell In [2], each row a token. The derivation reads what each code cell prints
by its execution count (:func:`printed`): the embeddings from the source of In [2], every result from the outputs;
where two cells print the same line (``Sum: tensor(1.)`` in In [6] and In [7]), a claim names its cell
(``at="In [7]"``). Step 2 also divides the scores of the query x^(2) by their sum, and In [12] sums the printed row 2
of the weights. The outputs print torch float32 tensors to four decimals; every one is the exact value rounded.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks
from symseq.authoring.page import exact_value
from symseq.read import scan

derivation = Derivation(
    "self-attention-journey-notebook",
    title="A simple self-attention over six 3-d tokens (LLMs from scratch, ch. 3, §3.3.1–3.3.2)",
    source="self-attention-journey-notebook.ipynb",
    description="scores X Xᵀ, softmax weights and context vectors, for the query x^(2) and for all six tokens",
)


def printed(s, cell: str, *, output: bool = True) -> list[str]:
    """The numbers, lists and tensor rows the code cell ``cell`` ("In [3]") prints, in order: in its output, or in its
    source (``output=False``); a matrix printed over several lines is one list per row (subscripts are not values)."""
    doc = s.page.doc
    first, last = doc.cell_range(cell)
    return [t.text for i in range(first, last + 1) if (i in doc.output) == output
            for t in scan(doc.line(i), i) if not t.script and t.kind != "shape"]


def matrix(rows: list[str]) -> str:
    """The printed rows of a matrix as one printed nested list."""
    return "[" + ", ".join(rows) + "]"


def _attention(s):
    L = s.ledger("one head with Q = K = V = X and no scaling")
    X = L.input("inputs", exact_value(matrix(printed(s, "In [2]", output=False))))
    head = blocks.scaled_dot_product(L, X, X, X, scale=1,
                                     names={"S": "attn_scores", "A": "attn_weights", "O": "all_context_vecs"})
    sums = L.define("row_sums", head.A @ sp.ones(6, 1), note="each row of the weights, summed")
    return L, X, head, sums


@derivation.section("3.3.1 A simple self-attention mechanism without trainable weights")
def one_query(s):
    L, X, head, sums = _attention(s)
    for i in range(6):  # the code cell prints the matrix one row a line
        s.given(X[i, :], what=f"inputs, row {i}")
    s.claim(*printed(s, "In [3]"), head.S[1, :], what="attn_scores_2")
    by_hand, by_dot = printed(s, "In [4]")
    s.claim(by_hand, head.S[0, 1], what="x^(1)·q^(2)", at="In [4], summed by hand")
    s.claim(by_dot, head.S[0, 1], what="x^(1)·q^(2)", at="In [4], torch.dot")
    scores = s.values.exact(head.S)[1, :]
    plain = scores / sum(scores)
    weights, total = printed(s, "In [5]")
    s.claim(weights, plain, what="attn_weights_2_tmp = ω/Σω")
    s.claim(total, sum(plain), what="its sum")
    s.claim(sums[1, 0], near="sum to 1. The plainest", index=-1, what="the weights sum to 1")
    for how, run in (("softmax_naive", "In [6]"), ("torch.softmax", "In [7]")):
        weights, total = printed(s, run)
        s.claim(weights, head.A[1, :], what=f"attn_weights_2 by {how}", at=run)
        s.claim(total, sums[1, 0], what="their sum, printed tensor(1.)", at=run, near="Sum: tensor(1.)")
    s.claim(*printed(s, "In [8]"), head.O[1, :], what="context_vec_2 = z^(2)")


@derivation.section("3.3.2 Computing attention weights for all input tokens")
def all_queries(s):
    L, X, head, sums = _attention(s)
    for how, run in (("two loops of torch.dot", "In [9]"), ("inputs @ inputs.T", "In [10]")):
        s.claim(matrix(printed(s, run)), head.S, what=f"attn_scores by {how}")
    s.claim(matrix(printed(s, "In [11]")), head.A, what="attn_weights")
    row_2 = s.page.printed(near="row_2_sum = sum(", index=0)
    s.given(exact_value(row_2), what="row 2 of attn_weights, as printed, summed in code", near="row_2_sum")
    _, row_2_sum, all_sums = printed(s, "In [12]")  # "Row 2 sum: 1.0", then the tensor of all row sums
    s.claim(row_2_sum, sum(exact_value(row_2)), what="row_2_sum, the sum of the printed row 2")
    s.claim(all_sums, sums.T, what="all row sums")
    s.claim(matrix(printed(s, "In [13]")), head.O, what="all_context_vecs")
    s.claim(s.page.printed(near="The second row is the context vector found above", index=0), head.O[1, :],
            what="z^(2) again, in the text")
    s.claim(printed(s, "In [14]")[-1], head.O[1, :], what="z^(2) again, in Previous 2nd context vector")
