"""Sinusoidal positional encodings at d_model = 4, worked by hand for "India is great".

Source: https://github.com/sansin5982/GenAI-Fundamentals/blob/9caf9808fc6ec2a513eb7969113f95b285cb5658/chapters/Transformer/Positional_Encoding.md
(rendition: ``positional-encoding-d4.md``).

Conventions read from the page: PE(pos, 2i) = sin(pos/10000^{2i/d}), PE(pos, 2i+1) = cos(pos/10000^{2i/d}),
positions counted from 0, the final input is the embedding plus the encoding entry by entry (no √d scaling). The
page uses two sets of embeddings: the table of Step 1 ([0.1, 0.3, 0.4, 0.5], …) and another for the worked "India"
sum ([0.45, -0.32, 0.12, 0.99]) and the partial sums of "is" and "great"; each is declared where it is printed.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks

derivation = Derivation(
    "positional-encoding-d4",
    title="Positional encoding at d_model = 4, computed by hand",
    source="positional-encoding-d4.md",
    description="sinusoidal positions 0, 1, 2 at width 4, and embedding + encoding for 'India is great'",
)

D, T = 4, 3


def _positions(s, title: str = "sinusoidal positions, d_model = 4, pos = 0, 1, 2"):
    L = s.ledger(title)
    P = blocks.positions(L, T, D)
    return L, P


@derivation.section("🧭 Solution:")
def solution(s):
    L, P = _positions(s)
    omega = blocks.angular_frequencies(D)
    wave = lambda f, j: sp.Matrix([f(t / sp.Integer(10000) ** sp.Rational(j, D)) for t in range(T)])  # noqa: E731
    sines = ([P[:, 0], P[:, 2]], [wave(sp.sin, 0), wave(sp.sin, 2)])  # PE(t, 2i) = sin(t/10000^{2i/4}), t = 0, 1, 2
    cosines = ([P[:, 1], P[:, 3]], [wave(sp.cos, 0), wave(sp.cos, 2)])  # PE(t, 2i+1) = cos(t/10000^{2i/4})
    s.agree("even indices (2i)", *sines, what="the even coordinates are sines")
    s.agree(r"PE(pos, 2i) = \sin\left(\frac{pos}{10000^{\frac{2i}{d_{\text{model}}}}}\right)", *sines,
            what="the sine formula, at d_model = 4")
    s.agree("odd indices (2i + 1)", *cosines, what="the odd coordinates are cosines")
    s.agree(r"PE(pos, 2i + 1) = \cos\left(\frac{pos}{10000^{\frac{2i}{d_{\text{model}}}}}\right)", *cosines,
            what="the cosine formula, at d_model = 4")
    s.agree("counted from 0", P[0, :], sp.Matrix([[0, 1, 0, 1]]), what="positions are counted from 0: PE(0) = "
            "[sin 0, cos 0, sin 0, cos 0]")
    s.prove("a pair (2i, 2i+1) shares one frequency", lambda: (
        omega[0] == omega[1] and omega[2] == omega[3], f"ω = {omega}"))


@derivation.section("Example")
def example(s):
    L, P = _positions(s)
    s.given(sp.Integer(P.shape[1]), sp.Integer(P.shape[0]), what="d_model, then the number of positions")


@derivation.section("🧮 Manual Positional Encoding (d=4)")
def manual(s):
    L, P = _positions(s)
    s.claim(r"[\sin(0),\cos(0),\sin(0),\cos(0)]", P[0, :], what="PE(0) as sines and cosines of 0", at="position 0")
    # PE(0) = … = [0,1,0,1] and each PE(pos, i) = sin(…) ≈ … written out for positions 1 and 2 are the
    # page's own arithmetic, which the audit checks with no claim (cos(2/100) ≈ -0.9988 among its errata)
    s.note("The page prints PE(1,2) ≈ 0.0.00999 and PE(1,3) ≈ 0.0.9999: two dots, no reading of either is a "
           "number, so neither can be stated as a claim; the values are sin(1/100) = 0.00999983… and "
           "cos(1/100) = 0.99995000…")
    s.claim("[0.841,0.540,0.00999,0.9999]", P[1, :], what="PE(1)", at="PE(1)")
    s.claim("[0.909,−0.416,0.02,0.9998]", P[2, :], what="PE(2)", at="PE(2)")
    # the summary table: one vector per row, each entry to its printed digits
    s.claim_rows(["[0.0, 1.0, 0.0, 1.0]", "[0.84, 0.54, 0.00999, 0.9999]", "[0.909, -0.4016, 0.02, 0.9908]"], P,
                 what="table row of a position", at="PE table")


@derivation.section("🧮 Final Input to the Model")
def final_input(s):
    L, P = _positions(s, "the worked case: 'India' at position 0")
    e = L.input("e_India", [["0.45", "-0.32", "0.12", "0.99"]], note="the worked case's embedding of India")
    x = L.define("FinalInput", e + P[0, :])
    s.given(e, what="Embedding of India (worked case)", at="Embedding")
    s.claim("[0.0, 1.0, 0.0, 1.0]", P[0, :], what="PositionalEncoding at position 0", at="PositionalEncoding")
    s.claim("[0.45, 0.68, 0.12, 1.99]", x, what="FinalInput = Embedding + PositionalEncoding", at="FinalInput")


def _embeddings(s, title: str):
    L, P = _positions(s, title)
    E = L.input("E", [["0.1", "0.3", "0.4", "0.5"], ["0.2", "0.1", "0.6", "0.3"], ["0.4", "0.3", "0.9", "0.1"]],
                note="rows India, is, great")
    H = blocks.add_positions(L, E, P, name="Final")
    return L, P, E, H


@derivation.section("🔶 Step 1: Token Embedding")
def token_embedding(s):
    L, P, E, H = _embeddings(s, "token embeddings of India, is, great")
    s.given(E[0, :], E[1, :], E[2, :], what="embeddings of India, is, great")


@derivation.section("🟣 Step 2: Positional Encoding")
def step2_encoding(s):
    L, P = _positions(s)
    s.claim_rows(["[0.00, 1.00, 0.00, 1.00]", "[0.84, 0.54, 0.009, 1.00]", "[1.82, -0.42, 0.018, 0.99]"], P,
                 what="sample encoding", at="sample")


@derivation.section('Example: "India" (Position 0)')
def step3_india(s):
    L, P = _positions(s, "partial sums for 'is' and 'great' (India's sum is the page's own arithmetic)")
    e_is = L.input("e_is_01", [["0.22", "0.11"]], note="an embedding of is printed only here")
    e_great = L.input("e_great_01", [["0.91", "-0.44"]],
                      note="an embedding of great printed only here")
    s.given(e_is[0, 0], what="first entry of the embedding of is", at="is")
    s.claim("0.84", P[1, 0], what="PE(1,0) in the sum for is", at="is")
    s.given(e_is[0, 1], what="second entry of the embedding of is", at="is")
    s.claim("0.54", P[1, 1], what="PE(1,1) in the sum for is", at="is")
    s.given(e_great[0, 0], what="first entry of the embedding of great", at="great")
    s.claim("1.82", P[2, 0], what="PE(2,0) in the sum for great", at="great")
    s.given(e_great[0, 1], what="second entry of the embedding of great", at="great")
    s.claim("-0.42", P[2, 1], what="PE(2,1) in the sum for great", at="great")


@derivation.section("Final Embeddings:")
def final_embeddings(s):
    L, P, E, H = _embeddings(s, "E + P for India, is, great")
    rows = (("India", "[0, 1, 0, 1]", "[0.1, 1.3, 0.4, 1.5]"),
            ("is", "[0.841, 0.540, 0.00999, 0.9999]", "[1.041, 0.640, 0.60999, 1.2999]"),
            ("great", "[0.909, -0.416, 0.02, 0.9998]", "[1.309, -0.116, 0.92, 1.0998]"))
    for t, (w, pe, final) in enumerate(rows):
        s.given(E[t, :], what=f"word embedding of {w}", at=f"row {w}")
        s.claim(pe, P[t, :], what=f"positional encoding of {w} (position {t})", at=f"row {w}")
        s.claim(final, H[t, :], what=f"final vector of {w}", at=f"row {w}")
