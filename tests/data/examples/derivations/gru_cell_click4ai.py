"""One GRU step by hand: Click4Ai problem 131, https://click4ai.perfionixai.com/problems/gru-cell ("GRU Cell").

The page's convention: weights act on the row [x_t h_{t−1}] (each W is 2×4, no biases; rows are positions,
so a gate is combined Wᵀ), the reset gate multiplies h_{t−1} before the candidate's product (Cho et al. 2014),
and h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ ĥ (torch's z is the page's 1 − z). Rendition: ``gru-cell-click4ai.md``.
"""

import sympy as sp

from symseq import Derivation, exact_matrix, ops, sigmoid

derivation = Derivation("gru-cell-click4ai", title="Click4Ai problem 131 — one GRU step by hand",
                        source="gru-cell-click4ai.md", description="gates, candidate and new state of one GRU step")
W = ("W_z", "W_r", "W_h")
X1, ZERO = [[1, sp.Rational(1, 2)]], [[0, 0]]  # the example's x and h (test case 1), and test case 2's x
Z, H_PREV, H_HAT, XS = sp.symbols("z_t h_prev h_hat x")
MIX = (1 - Z) * H_PREV + Z * H_HAT  # the page's h_t


def gru_step(s, title: str, x=X1, weights=None):
    """The page's GRU step on a new ledger from x and h = 0 (symbolic weights without ``weights``): combined,
    z_t, r_t, cand_in, a_h, h_hat and h_t."""
    L = s.ledger(title)
    x, h = L.input("x", x), L.input("h", ZERO)
    W_z, W_r, W_h = (L.parameter(n, weights[n] if weights else None, shape=(2, 4)) for n in W)
    combined = L.define("combined", ops.Concat([x, h], axis=1), note="[x_t ; h_{t−1}]")
    z = L.define("z_t", ops.Map(sigmoid, combined @ W_z.T), note="update gate")
    r = L.define("r_t", ops.Map(sigmoid, combined @ W_r.T), note="reset gate")
    cand_in = L.define("cand_in", ops.Concat([x, r * h], axis=1), note="[x_t ; r_t * h_{t−1}]")
    a_h = L.define("a_h", cand_in @ W_h.T, note="W_h @ [x_t ; r_t * h_{t−1}]")
    h_hat = L.define("h_hat", ops.Map(sp.tanh, a_h), note="candidate")
    h_t = L.define("h_t", (1 - z) * h + z * h_hat, note="new hidden state")
    return dict(L=L, x=x, h=h, W_z=W_z, combined=combined, cand_in=cand_in, a_h=a_h, h_hat=h_hat, h_t=h_t)


@derivation.section("Formula")
def formula(s):
    s.identity("h_t = (1 - z_t) * h_{t-1} + z_t * h_hat", MIX - (H_PREV + Z * (H_HAT - H_PREV)),
               what="the new state interpolates between h_{t−1} (z = 0) and the candidate (z = 1)")
    s.identity("sigmoid(x) = 1 / (1 + exp(-x))", sigmoid(XS).rewrite(sp.exp) - 1 / (1 + sp.exp(-XS)),
               what="the logistic function used by both gates")


@derivation.section("Example")
def worked(s):
    x, h = s.given("x", "h", what=("input x", "prev_hidden h"))
    p = gru_step(s, "one GRU step of the example", x, weights=dict(zip(W, s.given(*W))))
    s.claim(p["combined"], what="Step 1: combined = [x ; h]")
    s.claim(p["cand_in"], near="h_hat = tanh", index=0, what="Step 4: [x ; reset_hidden]")
    s.claim(p["a_h"], near="h_hat = tanh", index=1, what="Step 4: W_h @ [x ; reset_hidden]")
    s.claim(p["h_hat"], what="Step 4: h_hat = tanh(...)")
    s.claim(p["h_t"], what="Step 5: h_t")


@derivation.section("Explanation")
def explanation(s):
    for z, to, what in ((0, H_PREV, "the old state is copied unchanged"), (1, H_HAT, "the candidate replaces it")):
        s.identity(f"z={z}", MIX.subs(Z, z) - to, what=f"at z = {z} {what}")


@derivation.section("Constraints")
def constraints(s):  # numpy arrays: x and h_prev flat lists (one axis), each weight a nested list (two axes)
    p = gru_step(s, "the example's arrays")
    for printed, at, axes in (("1", "x", len(p["x"].shape) - 1), ("1", "h_prev", len(p["h"].shape) - 1),
                              ("2", "weights", len(p["W_z"].shape))):  # a row of the ledger is a 1D array
        s.claim(printed, sp.Integer(axes), what=f"axes of {at}", at=at)


@derivation.section("Test Cases")
def test_cases(s):
    q = gru_step(s, "test case 2: zero input, zero state, symbolic weights", ZERO)  # for any W
    s.given(exact_matrix(X1), exact_matrix(ZERO), what=("x of test case 1", "h of test case 1"), at="test case 1")
    s.given(exact_matrix(ZERO), exact_matrix(ZERO), what=("x of test case 2", "h of test case 2"), at="test case 2")
    s.claim("(2,4)", sp.ImmutableMatrix([list(q["W_z"].shape)]), what="shape of Wz, Wr, Wh", at="test case 1")
    s.claim("2", sp.Integer(q["h_t"].shape[1]), what="h_new has shape (2,)", at="test case 1")
    s.claim("[0.0, 0.0]", sp.ImmutableMatrix(q["L"].expand(q["h_t"].name, values=True)),
            what="h for any W (symbolic weights, expanded)", at="test case 2")
