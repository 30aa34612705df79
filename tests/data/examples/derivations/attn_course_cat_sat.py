"""Lesson 3 of a public course: the attention scores of "The" in "The cat sat", by hand.

Source: the course lesson ``_course/07_attention_mechanism/03_calculating_attention_scores.md`` of
vukrosic/blueberry-llm-kimi-deepseek,
https://github.com/vukrosic/blueberry-llm-kimi-deepseek/blob/71a19b79dca80378aa5ab8d3d58dea56305328d9/_course/07_attention_mechanism/03_calculating_attention_scores.md
(rendered as ``attn-course-cat-sat.md``).

The page gives the query, key and value rows of the three words directly, dots the first query q1 with the three
keys, divides by √d_k = √3 (rows are positions, d_k = 3 the width of q and k), and applies softmax with the
exponentials and their sum rounded to two decimals. Every printed number holds. The audit checks the written-out
arithmetic; each result and copy it uses is claimed here, not the shares "39%", "39%", "22%" (a claim prints no %).
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks

derivation = Derivation(
    "attn-course-cat-sat",
    title="Lesson 3: Calculating Attention Scores",
    source="attn-course-cat-sat.md",
    description="one query of 'The cat sat' against three keys: scores, scaling by √3, softmax by hand",
)
WORDS = ("The", "cat", "sat")
ROWS = {"Q": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "K": [[1, 1, 0], [1, 1, 0], [0, 1, 1]],
        "V": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]}


def sentence(s):
    """The three words' rows as printed (rows q1, q2, q3 …), and the head of the first query q1 over all keys."""
    L = s.ledger("'The cat sat': q1 against k1, k2, k3, d_k = 3")
    Q, K, V = (L.input(n, rows) for n, rows in ROWS.items())
    return Q, K, V, blocks.scaled_dot_product(L, Q[0, :], K, V, names={"S": "s", "A": "a", "O": "z1"})


@derivation.section("Lesson 3: Calculating Attention Scores")
def setup(s):
    Q, K, V, head = sentence(s)
    s.claim("3", sp.Integer(Q.shape[1]), what="width of every query, key and value vector (3-dimensional)",
            near="each of them is 3-dimensional")
    for i, word in enumerate(WORDS):
        for n, M in (("q", Q), ("k", K), ("v", V)):
            s.given(M[i, :], what=f"{n}{i + 1}", at=f'Word {i + 1} ("{word}")')


@derivation.section("Step 1: Calculate Scores")
def scores(s):
    s.note("q1 · k1, q1 · k2, q1 · k3 written out are the page's own exact arithmetic: checked with no claim.")


@derivation.section("Step 2: Scale")
def scale(s):
    Q, K, V, head = sentence(s)
    s.claim("3", sp.Integer(K.shape[1]), what="d_k, the width of the keys")
    for j, (raw, result) in enumerate((("1", "0.577"), ("1", "0.577"), ("0", "0"))):  # √3 copied as 1.732 in each
        for printed, v in (("1.732", sp.sqrt(K.shape[1])), (result, head.S[0, j])):
            s.claim(printed, v, what=f"s_{j + 1} = q1 · k{j + 1} / √3", near=f"{raw} / 1.732 =", at=f"s_{j + 1}")


@derivation.section("Step 3: Softmax")
def softmax(s):
    Q, K, V, head = sentence(s)
    S, A = s.values.exact(head.S), s.values.exact(head.A)
    s.prove("every entry lies between 0 and 1 and the entries add up to 1", lambda: (
        all(0 < A[0, j] < 1 for j in range(3)) and sp.simplify(sum(A) - 1) == 0, f"a = {[sp.N(e, 6) for e in A]}"),
        at="softmax")
    s.claim("[0.577, 0.577, 0]", head.S, what="the scaled row passed to softmax", at="softmax")
    E, printed = [sp.exp(S[0, j]) for j in range(3)], ("1.78", "1.78", "1")
    for j, written in enumerate(("e^0.577", "e^0.577", "e^0")):  # a decimal exponent is a copy of s_j (e^0's is not)
        exponent = [(written[2:], S[0, j], "the exponent s_")] if "." in written else []
        for p, v, what in exponent + [(printed[j], E[j], "e^s_")]:
            s.claim(p, v, what=f"{what}{j + 1}", near=f"{written} = {printed[j]}", at=f"e^s_{j + 1}")
    for j, (p, v) in enumerate(zip(printed + ("4.56",), E + [sum(E)])):  # the sum of the copies of e^{s_j}
        s.claim(p, v, what="Σ_j e^{s_j}" if j == 3 else f"e^{{s_{j + 1}}} in the sum", near="Sum =", at=f"sum {j}")
    for j, weight in enumerate(("0.39", "0.39", "0.22")):  # a_j = e^{s_j} / Σ, from the copies of both
        for p, v in ((printed[j], E[j]), ("4.56", sum(E)), (weight, head.A[0, j])):
            s.claim(p, v, what=f"a_{j + 1}", near=f'weight for "{WORDS[j]}"', at=f"a_{j + 1}")
