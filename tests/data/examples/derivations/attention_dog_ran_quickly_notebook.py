"""One query attending to two tokens, by hand: a public notebook on self-attention ("The dog ran quickly").

Source: https://github.com/BugCatcherXO/Building-LLama4-from-Scratch/blob/42e98a4468e666a39dd67e47fc1fa99e7f184b22/llama_4_Multi-Head-Latent-Attention_explanation.ipynb
(rendition: ``attention-dog-ran-quickly-notebook.ipynb``).

The computation, as the page states it: the score of "dog" for the query of "quickly" is Q_quickly · K_dog; with
the score of "quickly" itself taken as 1.2, softmax over the two scores gives the weights α_dog and α_quickly, and
the output is α_dog V_dog + α_quickly V_quickly. The four vectors and the score of quickly are read where section 2
and Step 2 print them, and each claim's printed text from its section. The page writes its formulas with the score
rounded to 0.889; the ledger computes from the exact score 0.8894, and every printed number holds either way. The
page has no erratum, which makes it the kind of page where an edit the audit misses would pass
(tests/test_audit_mutations.py).
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, ops

derivation = Derivation(
    "attention-dog-ran-quickly-notebook",
    title="Self-attention by hand for one query and two tokens (a notebook)",
    source="attention-dog-ran-quickly-notebook.ipynb",
    description="score Q·K, softmax over it and the score of quickly, the weighted sum of two values",
)
VECTORS = {"Q_quickly": "Q_{quickly}", "K_dog": "K_{dog}", "V_dog": "V_{dog}", "V_quickly": "V_{quickly}"}
SCORE_OF_QUICKLY = "the score of quickly to be"  # the words of the line that takes it as ≈ 1.2 (Step 2)


def one_query(s, title: str):
    """The page's vectors on a ledger, the score, the two weights and the output."""
    page = s.derivation.whole_page  # the inputs, wherever printed
    L = s.ledger(title)
    v = {n: L.input(n, page.value(printed)) for n, printed in VECTORS.items()}
    s_quickly = L.input("s_quickly", page.value(near=SCORE_OF_QUICKLY))
    score = L.define("score", ops.Sum(v["Q_quickly"] * v["K_dog"], None))
    e_dog, e_quickly = sp.exp(L.symbol("score")), sp.exp(s_quickly)
    a_dog = L.define("alpha_dog", e_dog / (e_dog + e_quickly))
    a_quickly = L.define("alpha_quickly", e_quickly / (e_dog + e_quickly))
    out = L.define("output", v["V_dog"] * a_dog + v["V_quickly"] * a_quickly)
    return L, v, score, a_dog, a_quickly, out


@derivation.section('2. The example: "The dog ran quickly"')
def vectors(s):
    L, v, *_ = one_query(s, "the four vectors")
    for name, printed in VECTORS.items():
        s.given(v[name], what=printed, at="Initial vectors")


@derivation.section("3. Step 1: Query–Key similarity")
def similarity(s):
    L, v, score, *_ = one_query(s, "the score of dog for the query of quickly")
    q, k = v["Q_quickly"], v["K_dog"]
    for i in range(3):  # = 0.1188 + 0.2304 + 0.5402 \approx 0.889, the products first
        s.claim(s.page.printed(near=r"\approx", index=i), q[0, i] * k[0, i], what=f"Q_{{quickly}}[{i}] K_{{dog}}[{i}]")
    s.claim(s.page.printed(near=r"\approx", index=3), score, what="score(dog, quickly) = Q_{quickly} · K_{dog}")


@derivation.section("4. Step 2: Softmax → Attention Weights")
def weights(s):
    L, v, score, a_dog, a_quickly, out = one_query(s, "softmax over the two scores")
    s.given(L.value("s_quickly"), what="the score of quickly, as Step 2 takes it", near=SCORE_OF_QUICKLY)
    # each weight as the page computes it, from its printed operands: the score as Step 1 rounds it, and the score of
    # quickly as printed above the formulas
    rounded = s.derivation.whole_page.printed(near=r"\approx", index=3)
    operands = {rounded: score, s.page.printed(near=SCORE_OF_QUICKLY, index=0): L.symbol("s_quickly")}
    for name, weight in ((r"\alpha_{dog} =", a_dog), (r"\alpha_{quickly} =", a_quickly)):
        formula = s.page.doc.line(s.page.line(name)).split(name, 1)[1].strip()  # \frac{e^{…}}{…} \approx …
        s.step(formula, result=weight, operands=operands, what=f"α_{name[8:-3]}")
    s.note(f"The page's formulas use the score rounded to {rounded}; from the exact {float(L.value('score')):g} the "
           f"weights are {sp.N(L.value('alpha_dog'), 5)} and {sp.N(L.value('alpha_quickly'), 5)}, which round the same.")


@derivation.section("5. Step 3: Combining Values")
def combining(s):
    L, v, score, a_dog, a_quickly, out = one_query(s, "the weighted sum of the values")
    s.claim(s.page.printed(near=r"\text{approx}", index=0), out,
            what="output(quickly) = α_dog V_dog + α_quickly V_quickly")
