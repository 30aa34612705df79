"""A small derivation that records every kind of display, for the presentation tests.

Not a handout: a three-step scalar RNN with its backward rows paired in the
order of Week 06's Table 3 (handout 004), a numeric tanh RNN, one causal
attention head over seven positions (7×7 scores and weights with masked
entries, a 7×5 input table to three significant digits, the last query's
raw score, scaled score and weight), two unmasked heads compared, and the
parameters of a gradient-path figure.
"""

import sympy as sp

from symseq import Derivation, blocks, ops

derivation = Derivation("present-demo", title="Presentation demo — RNN rows, attention tables, heatmaps",
                        source="tests/data/present_demo.py")

phi = sp.Function("phi")
TOKENS = ["0: a", "1: journey", "2: of", "3: a", "4: thousand", "5: miles", "6: begins"]
FEATURES = [f"Feature {j}" for j in range(5)]

# 7×5 inputs given to three significant digits, several with trailing zeros (0.150 prints as 0.15).
H_VALUES = [
    ["0.200", "0.900", "0.400", "1.00", "-0.200"],
    ["1.34", "0.840", "-0.175", "1.10", "0.0500"],
    ["0.809", "-0.216", "0.0502", "0.700", "0.100"],
    ["0.341", "-1.09", "0.475", "1.00", "-0.200"],
    ["-0.357", "-1.05", "0.300", "1.49", "-0.0980"],
    ["-0.859", "0.784", "-0.175", "1.19", "0.305"],
    ["-0.579", "1.06", "0.650", "0.789", "0.204"],
]
# The same table as a handout prints it: three significant digits, trailing zeros dropped.
H_PRINTED = [
    ["0.2", "0.9", "0.4", "1", "-0.2"],
    ["1.34", "0.84", "-0.175", "1.1", "0.05"],
    ["0.809", "-0.216", "0.0502", "0.7", "0.1"],
    ["0.341", "-1.09", "0.475", "1", "-0.2"],
    ["-0.357", "-1.05", "0.3", "1.49", "-0.098"],
    ["-0.859", "0.784", "-0.175", "1.19", "0.305"],
    ["-0.579", "1.06", "0.65", "0.789", "0.204"],
]
# Sparse maps stored output × input (3×5), right-multiplied by their transposes.
W_Q = [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0]]
W_K = [["0.5", 0, 0, "0.5", 0], [0, 1, 0, 0, 0], [0, 0, "0.5", 0, "0.5"]]
W_V = [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, "0.5", "0.5"]]
W_Q2 = [[0, 0, 0, 1, 0], [0, 0, 0, 0, 1], ["0.5", "0.5", 0, 0, 0]]
W_K2 = [[0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, "0.5", 0, 0, "0.5"]]
W_V2 = [[0, 1, 0, 0, 0], [0, 0, 0, 1, 0], ["0.5", 0, 0, 0, "0.5"]]

TABLE3_PAIRS = [("z_0", "∂L/∂h_{-1}"), ("h_0", "g_0^z"), ("z_1", "g_0^h"), ("h_1", "g_1^z"),
                ("z_2", "g_1^h"), ("h_2", "g_2^z"), ("yhat", "g_2^h"), ("L", "e")]


def scalar_rnn(L, *, activation=phi, xs=None, w=None, y=None):
    """z_t = w_x x_t + w_h h_{t−1}, h_t = φ(z_t), ŷ = w_o h_2, L = ½(ŷ − y)², and its backward rows."""
    w = w or {}
    x = [L.input(f"x_{t}", None if xs is None else xs[t]) for t in range(3)]
    w_x, w_h, w_o = (L.parameter(n, w.get(n)) for n in ("w_x", "w_h", "w_o"))
    h = L.input("h_{-1}", 0, note="fixed initial state")
    target = L.input("y", y)
    for t in range(3):
        z = L.define(f"z_{t}", w_x * x[t] + w_h * h)
        h = L.define(f"h_{t}", activation(z))
    yhat = L.define("yhat", w_o * h, display="ŷ", latex=r"\hat{y}")
    L.define("L", sp.Rational(1, 2) * (yhat - target) ** 2, latex=r"\mathcal{L}")
    names = {f"z_{t}": f"g_{t}^z" for t in range(3)} | {f"h_{t}": f"g_{t}^h" for t in range(3)} | {"yhat": "e"}
    return L.backward("L", names=names)


@derivation.section("§1 Forward and backward rows")
def rows(s):
    L = s.ledger("three-step scalar RNN")
    scalar_rnn(L)
    s.paired_rows("Table 3: forward rows beside backward rows", L, TABLE3_PAIRS)
    s.note("The activation φ is left symbolic; φ′ is its derivative.")


@derivation.section("§2 A numeric tanh RNN")
def numeric(s):
    L = s.ledger("tanh RNN with x = (0.5, −1, 2)")
    g = scalar_rnn(L, activation=sp.tanh, xs=["0.5", -1, 2], w={"w_x": 1, "w_h": "1.2", "w_o": "0.5"}, y="0.3")
    s.paired_rows("forward and backward values", L, TABLE3_PAIRS)
    s.claim("1", L.value("z_0") * 2, what="2 z_0 = 2 w_x x_0 = 1")
    s.keep(gradients=g)
    s.gradient_paths("Figure 3: gradient paths", w_h="1.2", w_x=1, inputs=[0, 1], factors=["0.8", 1, "1.2"], length=12)


@derivation.section("§3 Attention over seven positions")
def attention(s):
    L = s.ledger("one causal head, two unmasked heads", exact_forms=False)
    H = L.input("H^(0)", H_VALUES)
    s.table("Table 1: positioned inputs", H_PRINTED, H, rows=TOKENS, cols=FEATURES, digits=3)
    s.table("Table 2: the first row divided by three", [["0.0667", "0.3", "0.133", "0.333", "-0.0667"]],
            H[0, :] / 3, rows=TOKENS[:1], cols=FEATURES, digits=3)
    head = blocks.attention_head(L, H, L.parameter("W_Q", W_Q), L.parameter("W_K", W_K), L.parameter("W_V", W_V),
                                 orientation="out_in", mask="causal", names={"S_masked": "S_causal"})
    s.heatmap("Figure 1: causal scores", head.S_masked, rows=TOKENS, cols=TOKENS, allowed=head.allowed)
    s.heatmap("Figure 2: causal weights", head.A, rows=TOKENS, cols=TOKENS, allowed=head.allowed)
    raw = head.Q @ head.K.T
    begins = ops.Concat([raw[6, :].T, head.S[6, :].T, head.A[6, :].T], axis=1)
    s.show_table("Table 3: the begins query", begins, rows=TOKENS, cols=["Raw dot product", "S_{6j}", "A_{6j}"])
    heads = blocks.multi_head(L, H, [(L.parameter("W_Q^[1]", W_Q), L.parameter("W_K^[1]", W_K),
                                      L.parameter("W_V^[1]", W_V)),
                                     (L.parameter("W_Q^[2]", W_Q2), L.parameter("W_K^[2]", W_K2),
                                      L.parameter("W_V^[2]", W_V2))],
                              L.parameter("W_O", sp.eye(6)[:5, :]), orientation="out_in", tag="u")
    A1, A2 = heads.heads[0].A, heads.heads[1].A
    s.heatmap("Head 1 weights", A1, rows=TOKENS, cols=TOKENS)
    s.heatmap("Head 2 weights", A2, rows=TOKENS, cols=TOKENS)
    s.show_table("Table 4: two heads, begins query", ops.Concat([A1[6, :].T, A2[6, :].T], axis=1), rows=TOKENS,
                 cols=["Head 1 weight", "Head 2 weight"])
    s.keep(head=head, heads=heads)
