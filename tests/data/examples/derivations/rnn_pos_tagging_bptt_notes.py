"""Worked Example 1 of the CSE 751 LaTeX notes (``rnn-pos-tagging-bptt-notes.tex``, address on its line 1): a 5-unit
tanh RNN tags "the hair dryer is great": h^(t) = tanh(U h^(t−1) + W x^(t)), o^(t) = softmax(V h^(t)), L = mean_t
−log o^(t)[label], W = I₅, U = V = 0.5 I₅, h^(0) = 0, one-hot x^(t); then BPTT and W, U, V − 0.1·∇. The page's
column vectors are the ledger's rows (its δ ⊗ h is (∂L/∂S)ᵀH); its 5×5 matrices are bmatrix rows of bare cells,
read cell by cell and claimed so.
"""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.blocks import cells

derivation = Derivation("rnn-pos-tagging-notes", title="Worked Example 1 --- Vanilla RNN POS Tagging",
                        source="rnn-pos-tagging-bptt-notes.tex", description="a tanh RNN tagger: forward, BPTT, update")
LABELS, I, HALF = (0, 1, 1, 2, 4), sp.Integer, sp.Rational(1, 2)
STEPS = [s.split() for s in (  # per step: U h^(t-1), U h + W x, h, V h, o, o[label], L ("-": not printed)
    "[0,0,0,0,0] [1,0,0,0,0] [0.7616,0,0,0,0] [0.3808,0,0,0,0] [0.2679,0.1830,0.1830,0.1830,0.1830] 0.2679 1.3173 | "
    "[0.3808,0,0,0,0] [0.3808,1,0,0,0] [0.3634,0.7616,0,0,0] [0.1817,0.3808,0,0,0] "
    "[0.2118,0.2584,0.1766,0.1766,0.1766] 0.2584 1.3531 | [0.1817,0.3808,0,0,0] [0.1817,0.3808,1,0,0] "
    "[0.1797,0.3634,0.7616,0,0] - [0.1900,0.2083,0.2542,0.1737,0.1737] 0.2083 1.5687 | [0.0899,0.1817,0.3808,0,0] "
    "[0.0899,0.1817,0.3808,1,0] [0.0896,0.1797,0.3634,0.7616,0] - [0.1802,0.1885,0.2067,0.2522,0.1723] 0.2067 1.5766 "
    "| [0.0448,0.0899,0.1817,0.3808,0] - [0.0448,0.0896,0.1797,0.3634,0.7616] - [0.1756,0.1795,0.1878,0.2059,0.2512] "
    "0.2512 1.3814").split(" | ")]

PRINTED = {  # 25 entries each, row by row: δ_out (a row per step), ∇V, ∇W, ∇U, then W, U, V after the step
    "δ_out": "-0.7321 0.1830 0.1830 0.1830 0.1830 0.2118 -0.7416 0.1766 0.1766 0.1766 0.1900 -0.7917 0.2542 0.1737 "
             "0.1737 0.1802 0.1885 -0.7933 0.2522 0.1723 0.1756 0.1795 0.1878 0.2059 -0.7488",
    "∇V": "-0.0845 0.0557 0.0484 0.0402 0.0267 -0.0495 -0.1605 -0.1004 0.0418 0.0273 0.0373 0.0202 -0.0122 -0.1072 "
          "0.0286 0.0533 0.0523 0.0522 0.0534 0.0314 0.0433 0.0323 0.0121 -0.0282 -0.1141",
    "∇W": "-0.0240 0.0319 0.0312 0.0266 0.0175 -0.0033 -0.0431 -0.0571 0.0269 0.0178 0.0266 0.0166 -0.0021 -0.0610 "
          "0.0182 0.0333 0.0299 0.0245 0.0143 0.0179 0.0317 0.0267 0.0181 0.0015 -0.0314",
    "∇U": "0.0420 0.0366 0.0266 0.0133 0 -0.0472 -0.0305 0.0269 0.0136 0 0.0025 -0.0205 -0.0398 0.0138 0 0.0359 "
          "0.0271 0.0174 0.0136 0 0.0244 0.0087 -0.0103 -0.0239 0",
    "W_new": "1.0024 -0.0032 -0.0031 -0.0027 -0.0018 0.0003 1.0043 0.0057 -0.0027 -0.0018 -0.0027 -0.0017 1.0002 "
             "0.0061 -0.0018 -0.0033 -0.0030 -0.0025 0.9986 -0.0018 -0.0032 -0.0027 -0.0018 -0.0002 1.0031",
    "U_new": "0.4958 -0.0037 -0.0027 -0.0013 0 0.0047 0.5030 -0.0027 -0.0014 0 -0.0003 0.0021 0.5040 -0.0014 0 "
             "-0.0036 -0.0027 -0.0017 0.4986 0 -0.0024 -0.0009 0.0010 0.0024 0.5",
    "V_new": "0.5084 -0.0056 -0.0048 -0.0040 -0.0027 0.0049 0.5160 0.0100 -0.0042 -0.0027 -0.0037 -0.0020 0.5012 "
             "0.0107 -0.0029 -0.0053 -0.0052 -0.0052 0.4947 -0.0031 -0.0043 -0.0032 -0.0012 0.0028 0.5114",
}


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
    s.given(*(r["X"][t, :] for t in range(5)), *(I(k) for k in (*range(5), *LABELS)),
            what="x^(t); the tag indices 0..4; the true labels")


@derivation.section("One-Hot True Label Vectors for the Vanilla RNN Example")
def one_hot(s):  # "index 4 rather than 3": the "index 3" after it reads as an index (structural)
    r = _notes(s)
    s.given(*(I(k) for k in range(5)), *(v for k in LABELS for v in (sp.eye(5)[k, :], I(k))), I(4), I(3),
            what="tag indices; y^(t) and its index; ADJ at 4 rather than 3")
    s.claim("5", I(r["O"].shape[1]), what="probabilities per softmax")


@derivation.section("Assumed Weight Matrices")
def weights(s):
    s.given(HALF, HALF, I(0), HALF, what="U = 0.5 I, V = 0.5 I, h^(0) = 0, U h = 0.5 h (the 5 of I_5 is a subscript)")


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
    for t, step in enumerate(STEPS):  # the total loss is the mean of the five losses, each copied from its step
        s.claim(step[6], ell[t, 0], what=f"L^({t + 1}) in the total loss", at="Total Loss")
    s.claim("1.4394", r["ce"].loss, what="L_total, the mean of the five losses", at="Total Loss")


@derivation.section("Backward Pass (BPTT)")
def backward(s):
    r = _notes(s)
    d = PRINTED["δ_out"].split()
    s.claim_rows(["[" + ", ".join(d[5 * t:5 * t + 5]) + "]" for t in range(5)], r["m"]["δ_out"], what="δ_out")
    for printed, v in ((r"\frac{1}{5}", sp.Rational(1, 5)), ("5", I(r["X"].shape[0])), ("1", I(1))):
        s.claim(printed, v, what="the mean's 1/5 (its bounds are structural); δ_out/5; tanh' = 1 − tanh²")
    for name in ("∇V", "∇W", "∇U"):
        s.claim_cells(PRINTED[name], r["m"][name], what=name)
    s.given(I(0), what="h^(0), the reason given for ∇U's zero column")


@derivation.section(r"Weight Update ($\eta = 0.1$)")
def update(s):
    r = _notes(s)
    for name in ("W_new", "U_new", "V_new"):
        s.claim_cells(PRINTED[name], r["m"][name], what=name)
