"""One GRU step computed by hand: the worked example of a public exercise page.

Source: Click4Ai, problem 131, "GRU Cell (Gated Recurrent Unit)",
https://click4ai.perfionixai.com/problems/gru-cell (rendition: ``gru-cell-click4ai.md``).

The page's convention: weights act on the row [x_t h_{t−1}] (each W is 2×4, no biases; rows are positions,
so a gate is combined Wᵀ), the reset gate multiplies h_{t−1} before the candidate's product (Cho et al. 2014),
and h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ ĥ (torch's z is the page's 1 − z). The gates of Steps 2–4 are the
page's own arithmetic from its printed matrices, checked by the audit with no claim. Printed wrongly:
tanh([0.55, 0.35]) = [0.500520, 0.336376] as [0.500, 0.337] (line 45) and h_t's second coordinate 0.197324 as
0.198 (line 47).
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, exact_matrix, ops, sigmoid

derivation = Derivation(
    "gru-cell-click4ai",
    title="Click4Ai problem 131 — one GRU step by hand",
    source="gru-cell-click4ai.md",
    description="gates, candidate and new state of one GRU step with 2×4 weights on [x; h], two inputs",
)
W = {"W_z": [["0.3", "0.2", "0.1", "0.4"], ["0.1", "0.5", "0.3", "0.2"]],
     "W_r": [["0.2", "0.4", "0.3", "0.1"], ["0.4", "0.1", "0.2", "0.3"]],
     "W_h": [["0.5", "0.1", "0.2", "0.3"], ["0.2", "0.3", "0.4", "0.1"]]}
ZERO = [["0.0", "0.0"]]


def gru_step(L, x, h, symbolic: bool = False):
    """The page's GRU step on a ledger: rows combined, z_t, r_t, cand_in = [x ; r_t * h], a_h, h_hat and h_t."""
    W_z, W_r, W_h = (L.parameter(n, **({"shape": (2, 4)} if symbolic else {"value": exact_matrix(v)}))
                     for n, v in W.items())
    combined = L.define("combined", ops.Concat([x, h], axis=1), note="[x_t ; h_{t−1}]")
    z = L.define("z_t", ops.Map(sigmoid, combined @ W_z.T), note="update gate")
    r = L.define("r_t", ops.Map(sigmoid, combined @ W_r.T), note="reset gate")
    cand_in = L.define("cand_in", ops.Concat([x, r * h], axis=1), note="[x_t ; r_t * h_{t−1}]")
    a_h = L.define("a_h", cand_in @ W_h.T, note="W_h @ [x_t ; r_t * h_{t−1}]")
    h_hat = L.define("h_hat", ops.Map(sp.tanh, a_h), note="candidate")
    h_t = L.define("h_t", (1 - z) * h + z * h_hat, note="new hidden state")
    return dict(W_z=W_z, W_r=W_r, W_h=W_h, combined=combined, cand_in=cand_in, a_h=a_h, h_hat=h_hat, h_t=h_t, x=x, h=h)


def example(s, title: str):
    L = s.ledger(title)
    return gru_step(L, L.input("x", exact_matrix([["1.0", "0.5"]])), L.input("h", exact_matrix(ZERO)))


@derivation.section("Formula")
def formula(s):
    zs, hp, hh, xs = sp.symbols("z_t h_prev h_hat x")
    s.identity("h_t = (1 - z_t) * h_{t-1} + z_t * h_hat", ((1 - zs) * hp + zs * hh) - (hp + zs * (hh - hp)),
               what="the new state interpolates between h_{t−1} (z = 0) and the candidate (z = 1)")
    s.identity("sigmoid(x) = 1 / (1 + exp(-x))", sigmoid(xs).rewrite(sp.exp) - 1 / (1 + sp.exp(-xs)),
               what="the logistic function used by both gates")


@derivation.section("Example")
def worked(s):
    p = example(s, "one GRU step of the example")
    s.given(p["x"], what="input x")
    s.given(p["h"], what="prev_hidden h")
    for n in W:  # printed as nested lists: one bracketed row after the other
        for i in range(2):
            s.given(p[n][i, :], what=f"{n}, row {i}")
    s.claim("[1.0, 0.5, 0.0, 0.0]", p["combined"], what="Step 1: combined = [x ; h]")
    s.claim("[1.0, 0.5, 0, 0]", p["cand_in"], what="Step 4: [x ; reset_hidden]")
    s.claim("[0.55, 0.35]", p["a_h"], what="Step 4: W_h @ [x ; reset_hidden]")
    s.claim("[0.500, 0.337]", p["h_hat"], what="Step 4: h_hat = tanh(...)")
    s.claim("[0.300, 0.198]", p["h_t"], what="Step 5: h_t")
    s.note("Step 5's 0.198 is 0.587 × 0.337 = 0.197819 from the page's own rounded z_t and (wrong) h_hat; from the "
           "exact values it is 0.586618 × 0.336376 = 0.197324, 0.197 to three decimals.")


@derivation.section("Explanation")
def explanation(s):
    zs, hp, hh = sp.symbols("z h_prev h_hat")
    h_t = (1 - zs) * hp + zs * hh
    for z, to, what in ((0, hp, "the old state is copied unchanged"), (1, hh, "the candidate replaces the old state")):
        s.identity(f"z={z}", h_t.subs(zs, z) - to, what=f"at z = {z} {what}")


@derivation.section("Constraints")
def constraints(s):  # numpy arrays: x and h_prev flat lists (one axis), each weight a nested list (two axes)
    p = example(s, "the example's arrays")
    for printed, at, axes in (("1", "x", len(p["x"].shape) - 1), ("1", "h_prev", len(p["h"].shape) - 1),
                              ("2", "weights", len(p["W_z"].shape))):
        s.claim(printed, sp.Integer(axes), what=f"axes of {at}", at=at)


@derivation.section("Test Cases")
def test_cases(s):
    p = example(s, "test case 1: the example")
    for case, n, v in ((1, "x", p["x"]), (1, "h", p["h"]), (2, "x", exact_matrix(ZERO)), (2, "h", exact_matrix(ZERO))):
        s.given(v, what=f"{n} of test case {case}", at=f"test case {case}")
    s.claim("(2,4)", sp.ImmutableMatrix([list(p["W_z"].shape)]), what="shape of Wz, Wr, Wh", at="test case 1")
    s.claim("2", sp.Integer(p["h_t"].shape[1]), what="h_new has shape (2,)", at="test case 1")
    L0 = s.ledger("test case 2: zero input, zero state, symbolic weights")  # zero in, zero out, for any W
    q = gru_step(L0, L0.input("x", exact_matrix(ZERO)), L0.input("h", exact_matrix(ZERO)), symbolic=True)
    s.claim("[0.0, 0.0]", sp.ImmutableMatrix(L0.expand(q["h_t"].name, values=True)),
            what="h for any W (symbolic weights, expanded)", at="test case 2")
