"""One query attending to two tokens, by hand: a public notebook on self-attention ("The dog ran quickly").

Source: https://github.com/BugCatcherXO/Building-LLama4-from-Scratch/blob/42e98a4468e666a39dd67e47fc1fa99e7f184b22/llama_4_Multi-Head-Latent-Attention_explanation.ipynb
(rendition: ``attention-dog-ran-quickly-notebook.ipynb``).

The computation, as the page states it: the score of "dog" for the query of "quickly" is Q_quickly · K_dog; with
the score of "quickly" itself taken as 1.2, softmax over the two scores gives the weights α_dog and α_quickly, and
the output is α_dog V_dog + α_quickly V_quickly. The page writes its formulas with the score rounded to 0.889; the
ledger computes from the exact score 0.8894, and every printed number holds either way. The page has no erratum,
which makes it the kind of page where an edit the audit misses would pass (tests/test_audit_mutations.py).
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, exact, ops

derivation = Derivation(
    "attention-dog-ran-quickly-notebook",
    title="Self-attention by hand for one query and two tokens (a notebook)",
    source="attention-dog-ran-quickly-notebook.ipynb",
    description="score Q·K, softmax over (0.8894, 1.2), the weighted sum of two values",
)
VECTORS = {"Q_quickly": ("0.22", "0.64", "0.73"), "K_dog": ("0.54", "0.36", "0.74"),
           "V_dog": ("0.12", "0.84", "0.51"), "V_quickly": ("0.62", "0.24", "0.33")}


def one_query(s, title: str):
    """The page's vectors on a ledger, the score, the two weights and the output."""
    L = s.ledger(title)
    v = {n: L.input(n, [[exact(x) for x in xs]]) for n, xs in VECTORS.items()}
    s_quickly = L.input("s_quickly", exact("1.2"))
    score = L.define("score", ops.Sum(v["Q_quickly"] * v["K_dog"], None))
    e_dog, e_quickly = sp.exp(L.symbol("score")), sp.exp(s_quickly)
    a_dog = L.define("alpha_dog", e_dog / (e_dog + e_quickly))
    a_quickly = L.define("alpha_quickly", e_quickly / (e_dog + e_quickly))
    out = L.define("output", v["V_dog"] * a_dog + v["V_quickly"] * a_quickly)
    return L, v, score, a_dog, a_quickly, out


@derivation.section('2. The example: "The dog ran quickly"')
def vectors(s):
    L, v, *_ = one_query(s, "the four vectors")
    for name, printed in (("Q_quickly", "Q_{quickly}"), ("K_dog", "K_{dog}"), ("V_dog", "V_{dog}"),
                          ("V_quickly", "V_{quickly}")):
        s.given(v[name], what=printed, at="Initial vectors")


@derivation.section("3. Step 1: Query–Key similarity")
def similarity(s):
    L, v, score, *_ = one_query(s, "the score of dog for the query of quickly")
    q, k = v["Q_quickly"], v["K_dog"]
    for i, printed in enumerate(("0.1188", "0.2304", "0.5402")):
        s.claim(printed, q[0, i] * k[0, i], what=f"Q_{{quickly}}[{i}] K_{{dog}}[{i}]")
    s.claim("0.889", score, what="score(dog, quickly) = Q_{quickly} · K_{dog}")


@derivation.section("4. Step 2: Softmax → Attention Weights")
def weights(s):
    L, v, score, a_dog, a_quickly, out = one_query(s, "softmax over the two scores")
    s.given(L.value("s_quickly"), what="the score of quickly, taken as 1.2", near="the score of quickly to be")
    # each weight as the page computes it, from its printed operands: the score it rounded to 0.889 and the 1.2
    operands = {"0.889": score, "1.2": L.symbol("s_quickly")}
    s.step(r"\frac{e^{0.889}}{e^{0.889} + e^{1.2}} \approx 0.42", result=a_dog, operands=operands, what="α_dog")
    s.step(r"\frac{e^{1.2}}{e^{0.889} + e^{1.2}} \approx 0.58", result=a_quickly, operands=operands,
           what="α_quickly")
    s.note("The page's formulas use the score rounded to 0.889; from the exact 0.8894 the weights are 0.42297 "
           "and 0.57703, which round the same.")


@derivation.section("5. Step 3: Combining Values")
def combining(s):
    L, v, score, a_dog, a_quickly, out = one_query(s, "the weighted sum of the values")
    s.claim("[0.41, 0.49, 0.41]", out, what="output(quickly) = α_dog V_dog + α_quickly V_quickly")
