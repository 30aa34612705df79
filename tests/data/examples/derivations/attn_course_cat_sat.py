"""Lesson 3 of a public course: the attention scores of "The" in "The cat sat", by hand.

Source: the course lesson ``_course/07_attention_mechanism/03_calculating_attention_scores.md`` of
vukrosic/blueberry-llm-kimi-deepseek,
https://github.com/vukrosic/blueberry-llm-kimi-deepseek/blob/71a19b79dca80378aa5ab8d3d58dea56305328d9/_course/07_attention_mechanism/03_calculating_attention_scores.md
(rendered as ``attn-course-cat-sat.md``).

The page gives the query, key and value rows of the three words directly (no
embeddings or projection matrices), dots the first query q1 with the three
keys, divides by √d_k = √3, and applies softmax with the exponentials and their
sum rounded to two decimals. Every printed number holds.

Conventions read from the page: rows are positions; the score of query i on
key j is q_i · k_j; the scale is √d_k with d_k = 3, the width of q and k. The
written-out divisions ``1 / 1.732``, ``1.78 / 4.56`` and the sum
``1.78 + 1.78 + 1`` use the page's rounded numbers: they are checked exactly
against those displayed numbers, while each result (0.577, 1.78, 4.56, 0.39,
0.22) is checked against the exact value of the computation.

What is not claimed: the shares "39%", "39%" and "22%" of the closing
paragraph (a printed claim cannot be a percentage), and "sqrt(3)" as a formula
(a plain-text sqrt(...) is not read; the 3 under the root is claimed as d_k).
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, Ledger, blocks, exact

derivation = Derivation(
    "attn-course-cat-sat",
    title="Lesson 3: Calculating Attention Scores",
    source="attn-course-cat-sat.md",
    description="one query of 'The cat sat' against three keys: scores, scaling by √3, softmax by hand",
)

WORDS = ("The", "cat", "sat")
Q_ROWS = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
K_ROWS = [[1, 1, 0], [1, 1, 0], [0, 1, 1]]
V_ROWS = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def sentence_ledger():
    """The three words' rows as printed, and the head of the first query q1 over all three keys."""
    L = Ledger("'The cat sat': q1 against k1, k2, k3, d_k = 3")
    Q = L.input("Q", Q_ROWS, note="rows q1, q2, q3 as printed")
    K = L.input("K", K_ROWS, note="rows k1, k2, k3 as printed")
    V = L.input("V", V_ROWS, note="rows v1, v2, v3 as printed")
    q1 = L.define("q1", Q[0, :])
    raw = L.define("q1·Kᵀ", q1 @ K.T, note="raw scores")
    head = blocks.scaled_dot_product(L, q1, K, V, names={"S": "s", "A": "a", "O": "z1"})
    return L, Q, K, V, raw, head


@derivation.section("Lesson 3: Calculating Attention Scores")
def setup(s):
    L, Q, K, V, raw, head = sentence_ledger()
    s.use(L)
    s.claim("3", sp.Integer(Q.shape[1]), what="width of every query, key and value vector (3-dimensional)",
            near="each of them is 3-dimensional")
    for i, word in enumerate(WORDS):
        at = f'Word {i + 1} ("{word}")'
        s.given(Q[i, :], what=f"q{i + 1}", at=at)
        s.given(K[i, :], what=f"k{i + 1}", at=at)
        s.given(V[i, :], what=f"v{i + 1}", at=at)
    s.keep(ledger=L, head=head)


@derivation.section("Step 1: Calculate Scores")
def scores(s):
    L, Q, K, V, raw, head = sentence_ledger()
    s.use(L)
    written = {
        "The": ("[1, 1, 0]", "1*1 + 0*1 + 0*0", "1"),
        "cat": ("[1, 1, 0]", "1*1 + 0*1 + 0*0", "1"),
        "sat": ("[0, 1, 1]", "1*0 + 0*1 + 0*1", "0"),
    }
    for j, word in enumerate(WORDS):
        key, products, score = written[word]
        at = f'score for "The" on "{word}"'
        s.claim("[1, 0, 0]", Q[0, :], what="q1", at=at)
        s.claim(key, K[j, :], what=f"k{j + 1}", at=at)
        s.claim(products, raw[0, j], what=f"q1 · k{j + 1} written out", at=at)
        s.claim(score, raw[0, j], what=f"q1 · k{j + 1}", at=at)


@derivation.section("Step 2: Scale")
def scale(s):
    L, Q, K, V, raw, head = sentence_ledger()
    s.use(L)
    d_k = sp.Integer(K.shape[1])
    s.claim("3", d_k, what="d_k, the width of the keys")
    s.claim("3", d_k, what="d_k under the root of sqrt(3)", at="the divisor")
    s.claim("1.732", sp.sqrt(d_k), what="√3", at="the divisor")
    r = L.value(raw.name)
    shown = exact("1.732")  # the divisor as displayed
    for j, (division, result) in enumerate((("1 / 1.732", "0.577"), ("1 / 1.732", "0.577"), ("0 / 1.732", "0"))):
        at = f"scaled score {j + 1}"
        s.claim(division, r[0, j] / shown, what=f"q1 · k{j + 1} over the displayed divisor 1.732", at=at)
        s.claim(result, head.S[0, j], what=f"s_{j + 1} = q1 · k{j + 1} / √3", at=at)


@derivation.section("Step 3: Softmax")
def softmax(s):
    L, Q, K, V, raw, head = sentence_ledger()
    s.use(L)
    S, A = L.value(head.S.name), L.value(head.A.name)
    s.prove("every entry lies between 0 and 1 and the entries add up to 1", lambda: (
        all(0 < A[0, j] < 1 for j in range(3)) and sp.simplify(sum(A) - 1) == 0, f"a = {[sp.N(e, 6) for e in A]}"),
        at="softmax")
    s.claim("[0.577, 0.577, 0]", head.S, what="the scaled row passed to softmax", at="softmax")
    E = [sp.exp(S[0, j]) for j in range(3)]
    s.claim("e^0.577", sp.exp(exact("0.577")), what="e to the displayed s_1", at="exponential 1")
    s.claim("1.78", E[0], what="e^{s_1}", at="exponential 1")
    s.claim("e^0.577", sp.exp(exact("0.577")), what="e to the displayed s_2", at="exponential 2")
    s.claim("1.78", E[1], what="e^{s_2}", at="exponential 2")
    s.claim("e^0", sp.exp(S[0, 2]), what="e^{s_3}, written", at="exponential 3")
    s.claim("1", E[2], what="e^{s_3}", at="exponential 3")
    shown = [exact("1.78"), exact("1.78"), sp.Integer(1)]  # the exponentials as displayed
    s.claim("1.78 + 1.78 + 1", sum(shown), what="the sum of the displayed exponentials", at="sum")
    s.claim("4.56", sum(E), what="Σ_j e^{s_j}", at="sum")
    for j, (division, weight) in enumerate((("1.78 / 4.56", "0.39"), ("1.78 / 4.56", "0.39"), ("1 / 4.56", "0.22"))):
        at = f'attention weight for "{WORDS[j]}"'
        s.claim(division, shown[j] / exact("4.56"), what="the division with the displayed numbers", at=at)
        s.claim(weight, head.A[0, j], what=f"a_{j + 1}", at=at)
    s.note("The closing shares 39%, 39% and 22% restate a_1, a_2, a_3 as percentages; a printed claim cannot be a "
           "percentage, so they are not claimed.")
