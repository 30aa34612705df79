"""Worked Example 1 of the CSE 751 LaTeX notes, up to the loss (``rnn-pos-tagging-bptt-notes.tex``, address on its
line 1; ``rnn_pos_tagging_bptt_notes_bptt.py`` checks its BPTT and update). A 5-unit tanh RNN tags "the hair dryer is
great": h^(t) = tanh(U h^(t−1) + W x^(t)), o^(t) = softmax(V h^(t)), L = mean_t −log o^(t)[label], W = I₅,
U = V = 0.5 I₅, h^(0) = 0, one-hot x^(t). The page's column vectors are the ledger's rows. Every printed number holds.
"""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.blocks import cells

derivation = Derivation("rnn-pos-tagging-notes-forward", title="Worked Example 1 --- Vanilla RNN POS Tagging",
                        source="rnn-pos-tagging-bptt-notes.tex", description="a tanh RNN tagger: the forward pass")
LABELS, I, HALF = (0, 1, 1, 2, 4), sp.Integer, sp.Rational(1, 2)
STEPS = [s.split() for s in (  # per step: U h^(t-1), U h + W x, h, V h, o, o[label], L ("-": not printed)
    "[0,0,0,0,0] [1,0,0,0,0] [0.7616,0,0,0,0] [0.3808,0,0,0,0] [0.2679,0.1830,0.1830,0.1830,0.1830] 0.2679 1.3173 | "
    "[0.3808,0,0,0,0] [0.3808,1,0,0,0] [0.3634,0.7616,0,0,0] [0.1817,0.3808,0,0,0] "
    "[0.2118,0.2584,0.1766,0.1766,0.1766] 0.2584 1.3531 | [0.1817,0.3808,0,0,0] [0.1817,0.3808,1,0,0] "
    "[0.1797,0.3634,0.7616,0,0] - [0.1900,0.2083,0.2542,0.1737,0.1737] 0.2083 1.5687 | [0.0899,0.1817,0.3808,0,0] "
    "[0.0899,0.1817,0.3808,1,0] [0.0896,0.1797,0.3634,0.7616,0] - [0.1802,0.1885,0.2067,0.2522,0.1723] 0.2067 1.5766 "
    "| [0.0448,0.0899,0.1817,0.3808,0] - [0.0448,0.0896,0.1797,0.3634,0.7616] - [0.1756,0.1795,0.1878,0.2059,0.2512] "
    "0.2512 1.3814").split(" | ")]


def _notes(s):
    """The page's rows: x^(t) (rows of X), h^(t), V h^(t), o^(t), the mean loss, its gradients and the step η = 0.1."""
    L = s.ledger("h = tanh(U h_prev + W x), o = softmax(V h), L = mean −log o[label]")
    X, W, U, V = L.input("X", sp.eye(5)), L.parameter("W", sp.eye(5)), *(L.parameter(k, sp.eye(5) / 2) for k in "UV")
    run = cells.rnn(L, X, W, U, phi=sp.tanh)
    S = blocks.linear(L, "S", L.define("H", ops.Concat(run.h, axis=0)), V, orientation="out_in")
    ce = blocks.cross_entropy(L, S, targets=list(LABELS), name="L")
    g = L.backward("L")
    m = {f"∇{k}": g[k] for k in "VWU"} | {f"{k}_new": L.define(f"{k}_new", p - g[k] / 10) for k, p in
                                         (("W", W), ("U", U), ("V", V))}
    m["δ_out"] = L.define("δ_out", g["S"] * 5, note="o − y, the gradient of each step's own loss (L is their mean)")
    return dict(L=L, X=X, U=U, run=run, S=S, O=blocks.probabilities(L, S, name="o"), ce=ce, m=m)


@derivation.section("Setup")
def setup(s):
    r = _notes(s)
    for _ in range(3):
        s.claim("5", I(r["X"].shape[1]), what="input, hidden and output neurons")
    for v in [r["X"][t, :] for t in range(5)] + [I(k) for k in (*range(5), *LABELS)]:
        s.given(v, what="x^(t); the tag indices 0..4; the true labels")


@derivation.section("One-Hot True Label Vectors for the Vanilla RNN Example")
def one_hot(s):  # "index 4 rather than 3": the "index 3" after it reads as an index (structural)
    r = _notes(s)
    for v in [I(k) for k in range(5)] + [v for k in LABELS for v in (sp.eye(5)[k, :], I(k))] + [I(4), I(3)]:
        s.given(v, what="tag indices; y^(t) and its index; ADJ at 4 rather than 3")
    s.claim("5", I(r["O"].shape[1]), what="probabilities per softmax")


@derivation.section("Assumed Weight Matrices")
def weights(s):
    for v in (HALF, HALF, I(0), HALF):
        s.given(v, what="U = 0.5 I, V = 0.5 I, h^(0) = 0, U h = 0.5 h (the 5 of I_5 is a subscript)")


@derivation.section("Forward Pass")
def forward(s):
    r = _notes(s)
    run, ell = r["run"], r["ce"].per_position
    for t, (uh, z, h, vh, o, p, loss) in enumerate(STEPS):
        s.claim(uh, sp.zeros(1, 5) if t == 0 else r["L"].define(f"Uh_{t}", run.h[t - 1] @ r["U"].T), what="U h")
        s.given(r["X"][t, :], what=f"x^({t + 1})")
        for printed, node, n in ((z, run.z[t], 2 if t < 2 else 1), (h, run.h[t], 1), (vh, r["S"][t, :], 2 - t),
                                 (o, r["O"][t, :], 1), (p, r["O"][t, LABELS[t]], 1), (loss, ell[t, 0], 1)):
            for _ in range(n if printed != "-" else 0):  # printed twice: as a result, then as an argument
                s.claim(printed, node, what=f"step {t + 1}")
    for t in range(5):
        s.claim(STEPS[t][6], ell[t, 0], what=f"L^({t + 1}) in the total")
    s.claim("5", I(r["X"].shape[0]), what="steps averaged")
    s.claim("1.4394", r["ce"].loss, what="L_total")
