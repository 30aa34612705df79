"""A public coding exercise on scaled dot-product attention, with its worked example and test cases.

Source: https://amanailab.com/code-lab/scaled-dot-product-attention, rendered as
``attn-codelab-amanailab.md``.

The page states Attention(Q, K, V) = softmax(Q Kᵀ/√d_k) V and gives two
self-contained cases: Q = K = I₂ with V = [[1,2],[3,4]] (d_k = 2), and the
single query [1,0] against the keys I₂ with V = [[10,20],[30,40]]; the answers
are printed to 5 decimals.

Every printed output is wrong (the claims keep the printed strings; symseq decides): with scores I/√2 each row's
weights are 0.669762 and 0.330238, so the outputs are [[1.66048, 2.66048], [2.33952, 3.33952]] and [16.60477,
26.60477]. Conventions read from the page: rows are positions, softmax is over each row, d_k is the keys' width.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, Ledger, blocks

derivation = Derivation(
    "attn-codelab-amanailab",
    title="Scaled Dot-Product Attention (a coding exercise)",
    source="attn-codelab-amanailab.md",
    description="softmax(QKᵀ/√d_k)V for Q = K = I₂ and for one query: the printed answers, all wrong",
)

EYE = [[1, 0], [0, 1]]
V_SMALL = [[1, 2], [3, 4]]
V_LARGE = [[10, 20], [30, 40]]


def attention_ledger(title, q_rows, k_rows, v_rows):
    """softmax(Q Kᵀ/√d_k) V for the printed rows."""
    L = Ledger(title)
    Q, K, V = L.input("Q", q_rows), L.input("K", k_rows), L.input("V", v_rows)
    return L, Q, K, V, blocks.scaled_dot_product(L, Q, K, V, names={"O": "Output"})


def given_rows(s, M, what, at=""):
    """A matrix printed as a nested list [[..],[..]]: the audit reads each inner list as one row vector."""
    for i in range(M.shape[0]):
        s.given(M[i, :], what=f"{what}, row {i}", at=at)


@derivation.section("Scaled Dot-Product Attention")
def worked_example(s):
    L, Q, K, V, head = attention_ledger("Q = K = I₂, V = [[1,2],[3,4]]", EYE, EYE, V_SMALL)
    s.use(L)
    given_rows(s, Q, "Q = K, printed once as Q = K = [[1,0],[0,1]]")
    given_rows(s, V, "V")
    s.claim("2", sp.Integer(K.shape[1]), what="d_k, the width of the keys")
    s.claim("[[1.66082, 2.66082], [2.33918, 3.33918]]", head.O, what="Output")
    s.given(sp.Integer(5), what="decimal places of the printed answers")


@derivation.section("Test Cases (2 visible · 1 hidden)")
def test_cases(s):
    L1, Q1, K1, V1, h1 = attention_ledger("case 1: Q = K = I₂, V = [[1,2],[3,4]]", EYE, EYE, V_SMALL)
    s.use(L1)
    s.claim_shape("2×2", Q1, what="Q and K of case 1, the identity", at="Case 1")
    for name, M in (("Q", Q1), ("K", K1), ("V", V1)):
        given_rows(s, M, what=name, at="Case 1")
    s.claim("[[1.66082, 2.66082], [2.33918, 3.33918]]", h1.O, what="Expected", at="Case 1")
    L2, Q2, K2, V2, h2 = attention_ledger("case 2: the query [1,0], K = I₂, V = [[10,20],[30,40]]",
                                          [[1, 0]], EYE, V_LARGE)
    s.use(L2)
    for name, M in (("Q, a single query", Q2), ("K", K2), ("V", V2)):
        given_rows(s, M, what=name, at="Case 2")
    s.claim("[[16.60882, 26.60882]]", h2.O, what="Expected", at="Case 2")
