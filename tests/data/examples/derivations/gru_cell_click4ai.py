"""One GRU step computed by hand: the worked example of a public exercise page.

Source: Click4Ai, problem 131, "GRU Cell (Gated Recurrent Unit)",
https://click4ai.perfionixai.com/problems/gru-cell (rendition: ``gru-cell-click4ai.md``).

The page's convention, read from its formulas: column vectors, weights that
act on the concatenation [x_t ; h_{t−1}] (each W is 2×4, no biases), the reset
gate applied to h_{t−1} before the candidate's product (Cho et al. 2014), and
h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ ĥ: a coordinate of z near one *writes* the
candidate (torch's nn.GRU is the other way round, so the page's z is torch's
1 − z). Here rows are positions: combined is the 1×4 row [x h] and each gate
is combined W_zᵀ.

What the page prints wrongly (line numbers of the rendition): on line 45 the
candidate tanh([0.55, 0.35]) = [0.500520, 0.336376] prints as [0.500, 0.337]
(correct [0.501, 0.336]: the first entry looks truncated, the second is one
unit high); on line 47 the new state's second coordinate z·ĥ = 0.586618 ·
0.336376 = 0.197324 prints as 0.198 (correct 0.197). That 0.198 is the product
of the page's own rounded operands (0.587 · 0.337 = 0.197819); it is claimed
against the exact value, as every number here is.
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

X = ["1.0", "0.5"]
H_PREV = ["0.0", "0.0"]
W = {
    "W_z": [["0.3", "0.2", "0.1", "0.4"], ["0.1", "0.5", "0.3", "0.2"]],
    "W_r": [["0.2", "0.4", "0.3", "0.1"], ["0.4", "0.1", "0.2", "0.3"]],
    "W_h": [["0.5", "0.1", "0.2", "0.3"], ["0.2", "0.3", "0.4", "0.1"]],
}


def gru_step(L, x, h, weights):
    """The page's GRU step on a ledger: rows combined, a_z, z_t, a_r, r_t, reset_hidden, cand_in, a_h, h_hat, h_t."""
    W_z, W_r, W_h = (L.parameter(n, v) if v is not None else L.parameter(n, shape=(2, 4)) for n, v in weights)
    combined = L.define("combined", ops.Concat([x, h], axis=1), note="[x_t ; h_{t−1}]")
    a_z = L.define("a_z", combined @ W_z.T, note="W_z @ combined")
    z = L.define("z_t", ops.Map(sigmoid, a_z), note="update gate")
    a_r = L.define("a_r", combined @ W_r.T, note="W_r @ combined")
    r = L.define("r_t", ops.Map(sigmoid, a_r), note="reset gate")
    reset_hidden = L.define("reset_hidden", r * h, note="r_t * h_{t−1}")
    cand_in = L.define("cand_in", ops.Concat([x, reset_hidden], axis=1), note="[x_t ; r_t * h_{t−1}]")
    a_h = L.define("a_h", cand_in @ W_h.T, note="W_h @ [x_t ; r_t * h_{t−1}]")
    h_hat = L.define("h_hat", ops.Map(sp.tanh, a_h), note="candidate")
    h_t = L.define("h_t", (1 - z) * h + z * h_hat, note="new hidden state")
    return dict(W_z=W_z, W_r=W_r, W_h=W_h, combined=combined, a_z=a_z, z=z, a_r=a_r, r=r,
                reset_hidden=reset_hidden, cand_in=cand_in, a_h=a_h, h_hat=h_hat, h_t=h_t)


def example_ledger(L):
    x = L.input("x", exact_matrix([X]))
    h = L.input("h", exact_matrix([H_PREV]))
    parts = gru_step(L, x, h, [(n, exact_matrix(v)) for n, v in W.items()])
    parts.update(x=x, h=h)
    return parts


@derivation.section("Formula")
def formula(s):
    zs, hp, hh, xs = sp.symbols("z_t h_prev h_hat x")
    s.identity("h_t = (1 - z_t) * h_{t-1} + z_t * h_hat",
               ((1 - zs) * hp + zs * hh) - (hp + zs * (hh - hp)),
               what="the new state interpolates between h_{t−1} (z = 0) and the candidate (z = 1)")
    s.identity("sigmoid(x) = 1 / (1 + exp(-x))", sigmoid(xs).rewrite(sp.exp) - 1 / (1 + sp.exp(-xs)),
               what="the logistic function used by both gates")


@derivation.section("Example")
def example(s):
    L = s.ledger("one GRU step of the example")
    p = example_ledger(L)
    s.given(p["x"], what="input x")
    s.given(p["h"], what="prev_hidden h")
    for n in ("W_z", "W_r", "W_h"):  # printed as nested lists: one bracketed row after the other
        for i in range(2):
            s.given(p[n][i, :], what=f"{n}, row {i}")
    s.claim("[1.0, 0.5, 0.0, 0.0]", p["combined"], what="Step 1: combined = [x ; h]")
    s.claim("[0.40, 0.35]", p["a_z"], what="Step 2: W_z @ combined")
    s.claim("[0.599, 0.587]", p["z"], what="Step 2: z_t")
    s.claim("[0.40, 0.45]", p["a_r"], what="Step 3: W_r @ combined")
    s.claim("[0.599, 0.611]", p["r"], what="Step 3: r_t")
    s.claim("[0, 0]", p["reset_hidden"], what="Step 4: reset_hidden = r_t * h")
    s.claim("[1.0, 0.5, 0, 0]", p["cand_in"], what="Step 4: [x ; reset_hidden]")
    s.claim("[0.55, 0.35]", p["a_h"], what="Step 4: W_h @ [x ; reset_hidden]")
    s.claim("[0.500, 0.337]", p["h_hat"], what="Step 4: h_hat = tanh(...)")
    zs, hp, hh = sp.symbols("z_t h h_hat")
    s.identity("(1-z_t) * h + z_t * h_hat", ((1 - zs) * hp + zs * hh) - (hp + zs * (hh - hp)),
               what="Step 5 restates the update of the formula")
    s.claim("[0.300, 0.198]", p["h_t"], what="Step 5: h_t")
    s.note("The page prints tanh(0.55) as 0.500 and tanh(0.35) as 0.337; they are 0.500520 and 0.336376 "
           "(0.501 and 0.336 to three decimals).")
    s.note("Step 5's second coordinate, 0.198, is 0.587 × 0.337 = 0.197819 computed from the page's own "
           "rounded z_t and (wrong) h_hat; from the exact values it is 0.586618 × 0.336376 = 0.197324, "
           "0.197 to three decimals. The first coordinate, 0.599 × 0.500 = 0.2995, is 0.299655 exactly and "
           "prints as 0.300 either way.")
    s.keep(ledger=L, parts=p)


@derivation.section("Explanation")
def explanation(s):
    zs, hp, hh = sp.symbols("z h_prev h_hat")
    h_t = (1 - zs) * hp + zs * hh
    s.identity("z=0", h_t.subs(zs, 0) - hp, what="at z = 0 the old state is copied unchanged")
    s.identity("z=1", h_t.subs(zs, 1) - hh, what="at z = 1 the candidate replaces the old state")


@derivation.section("Constraints")
def constraints(s):
    L = s.ledger("the example's arrays")
    p = example_ledger(L)
    # The page's arrays are numpy arrays: x and h_prev flat lists (one axis), each weight a nested list (two axes).
    s.claim("1", sp.Integer(len(sp.Matrix([X]).shape) - 1), what="axes of x: a 1D array (a flat list of 2)",
            at="x")
    s.claim("1", sp.Integer(len(sp.Matrix([H_PREV]).shape) - 1), what="axes of h_prev: a 1D array", at="h_prev")
    s.claim("2", sp.Integer(len(p["W_z"].shape)), what="axes of each weight: 2D arrays", at="weights")


@derivation.section("Test Cases")
def test_cases(s):
    L = s.ledger("test case 1: the example")
    p = example_ledger(L)
    s.given(p["x"], what="x of test case 1", at="test case 1")
    s.given(p["h"], what="h of test case 1", at="test case 1")
    s.claim("(2,4)", sp.ImmutableMatrix([list(p["W_z"].shape)]), what="shape of Wz, Wr, Wh as numpy prints it",
            at="test case 1")
    s.claim("2", sp.Integer(p["h_t"].shape[1]), what="h_new has shape (2,)", at="test case 1")
    s.given(exact_matrix([["0.0", "0.0"]]), what="x of test case 2", at="test case 2")
    s.given(exact_matrix([["0.0", "0.0"]]), what="h of test case 2", at="test case 2")
    # Test case 2: zero input and zero state give a zero new state for any weights (symbolic W).
    L0 = s.ledger("test case 2: zero input, zero state, symbolic weights")
    x0 = L0.input("x", exact_matrix([["0.0", "0.0"]]))
    h0 = L0.input("h", exact_matrix([["0.0", "0.0"]]))
    q = gru_step(L0, x0, h0, [(n, None) for n in W])
    # Expanded with the zero inputs substituted and the weights left as symbols: exactly zero for every W.
    s.claim("[0.0, 0.0]", sp.ImmutableMatrix(L0.expand(q["h_t"].name, values=True)),
            what="h for any W (symbolic weights, expanded)", at="test case 2")
