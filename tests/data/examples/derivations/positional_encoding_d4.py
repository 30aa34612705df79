"""Sinusoidal positional encodings at d_model = 4, worked by hand for "India is great".

Source: https://github.com/sansin5982/GenAI-Fundamentals/blob/9caf9808fc6ec2a513eb7969113f95b285cb5658/chapters/Transformer/Positional_Encoding.md
(rendition: ``positional-encoding-d4.md``). PE(pos, 2i) = sin(pos/10000^{2i/d}), PE(pos, 2i+1) = cos(…), positions
from 0, final input = embedding + encoding (no √d scaling). Two sets of embeddings, each read where it is printed:
Step 1's table, and another for the worked "India" sum and the partial sums of "is" and "great".
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks

derivation = Derivation("positional-encoding-d4", title="Positional encoding at d_model = 4, computed by hand",
                        source="positional-encoding-d4.md", description="sinusoidal positions 0, 1, 2 at width 4, "
                        "and embedding + encoding for 'India is great'")
D, T, WORDS = 4, 3, ("India", "is", "great")


def _positions(s, title: str = "sinusoidal positions, d_model = 4, pos = 0, 1, 2", embedded: bool = False):
    """L and P; ``embedded``: also E, the rows of Step 1's table (first lines "| India |", …), and E + P."""
    L = s.ledger(title)
    P = blocks.positions(L, T, D)
    if not embedded:
        return L, P
    page = s.derivation.whole_page
    E = L.input("E", sp.Matrix.vstack(*(page.value(near=f"| {w} ") for w in WORDS)), note="rows India, is, great")
    return L, P, E, blocks.add_positions(L, E, P, name="Final")


@derivation.section("🧭 Solution:")
def solution(s):  # PE(t, 2i + j) = f(t/10000^{2i/4}) at t = 0, 1, 2, with f = sin for j = 0 and cos for j = 1
    L, P = _positions(s)
    wave = lambda f, j: sp.Matrix([f(t / sp.Integer(10000) ** sp.Rational(j, D)) for t in range(T)])  # noqa: E731
    for j, f, kind, words in ((0, sp.sin, "sine", "even indices (2i)"), (1, sp.cos, "cosine", "odd indices (2i + 1)")):
        pair = ([P[:, j], P[:, j + 2]], [wave(f, 0), wave(f, 2)])
        s.agree(words, *pair, what=f"the {words.split()[0]} coordinates are {kind}s")
        formula = s.page.doc.line(s.page.line(f"PE(pos, 2i{' + 1' * j}) =")).strip()  # as the page prints it
        s.agree(formula, *pair, what=f"the {kind} formula, at d_model = 4")
    s.agree("counted from 0", P[0, :], sp.Matrix([[0, 1, 0, 1]]), what="positions count from 0: PE(0) = [0, 1, 0, 1]")
    omega = blocks.angular_frequencies(D)
    s.prove("a pair (2i, 2i+1) shares one frequency", lambda: (omega[::2] == omega[1::2], f"ω = {omega}"))


@derivation.section("Example")
def example(s):
    s.given(sp.Integer(D), sp.Integer(T), what="d_model, then the number of positions")


@derivation.section("🧮 Manual Positional Encoding (d=4)")
def manual(s):
    L, P = _positions(s)
    s.claim(r"[\sin(0),\cos(0),\sin(0),\cos(0)]", P[0, :], what="PE(0) as sines and cosines of 0", at="position 0")
    # PE(0) = … = [0,1,0,1] and PE(pos, i) = sin(…) ≈ … are the page's own arithmetic (cos(2/100) among its errata)
    s.note("PE(1,2) and PE(1,3) are printed with two decimal points: no number to claim (sin(1/100), cos(1/100))")
    for t in (1, 2):
        s.claim(P[t, :], name=f"PE({t})", what=f"PE({t})", at=f"PE({t})")
    s.claim_rows([s.page.printed(near="|", occurrence=t) for t in range(3)], P, what="table row", at="PE table")


@derivation.section("🧮 Final Input to the Model")
def final_input(s):
    L, P = _positions(s, "the worked case: 'India' at position 0")
    e = L.input("e_India", s.given("**Embedding**", what="Embedding of India (worked case)", at="Embedding"))
    x = L.define("FinalInput", e + P[0, :])
    s.claim(P[0, :], name="**PositionalEncoding**", what="PositionalEncoding at position 0", at="PositionalEncoding")
    s.claim(x, name="**FinalInput**", what="FinalInput = Embedding + PositionalEncoding", at="FinalInput")


@derivation.section("🔶 Step 1: Token Embedding")
def token_embedding(s):
    L, P, E, H = _positions(s, "token embeddings of India, is, great", True)
    s.given(E[0, :], E[1, :], E[2, :], what="embeddings of India, is, great")


@derivation.section("🟣 Step 2: Positional Encoding")
def step2_encoding(s):
    L, P = _positions(s)
    s.claim_rows([s.page.printed(near="|", occurrence=t) for t in range(3)], P, what="sample encoding", at="sample")


@derivation.section('Example: "India" (Position 0)')
def step3_india(s):  # India's sum is the page's own arithmetic; "is" and "great" print e + PE for two entries
    L, P = _positions(s, "partial sums for 'is' and 'great'")
    for t, w in ((1, "is"), (2, "great")):  # the line prints the position, then e_k + PE(t, k) for k = 0, 1
        for k in range(2):
            s.given(s.page.value(near=f'"{w}" at', index=1 + 2 * k), what=f"entry {k} of an embedding of {w}", at=w)
            s.claim(P[t, k], near=f'"{w}" at', index=2 + 2 * k, what=f"PE({t},{k}) in the sum for {w}", at=w)


@derivation.section("Final Embeddings:")
def final_embeddings(s):
    L, P, E, H = _positions(s, "E + P for India, is, great", True)
    for t, w in enumerate(WORDS):  # the row prints the word embedding, the encoding and their sum
        s.given(E[t, :], what=f"word embedding of {w}", at=f"row {w}")
        s.claim(P[t, :], near=f"| {w} ", index=1, what=f"positional encoding of {w} (position {t})", at=f"row {w}")
        s.claim(H[t, :], near=f"| {w} ", index=2, what=f"final vector of {w}", at=f"row {w}")
