"""Worked Example 1 of the CSE 751 LaTeX notes (``rnn-pos-tagging-bptt-notes.tex``, address on its line 1): a 5-unit
tanh RNN tags "the hair dryer is great": h^(t) = tanh(U h^(t−1) + W x^(t)), o^(t) = softmax(V h^(t)), L = mean_t
−log o^(t)[label], W = I₅, U = V = 0.5 I₅, h^(0) = 0, one-hot x^(t); then BPTT and W, U, V − η·∇ with η = 0.1 (the
0.5 and η read from the page). The page's column vectors are the ledger's rows (its δ ⊗ h is (∂L/∂S)ᵀH); every
printed value is read from the page's lines, its 5×5 matrices as the bare cells of their bmatrix, claimed cell by cell.
"""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.blocks import cells

derivation = Derivation("rnn-pos-tagging-notes", title="Worked Example 1 --- Vanilla RNN POS Tagging",
                        source="rnn-pos-tagging-bptt-notes.tex", description="a tanh RNN tagger: forward, BPTT, update")
LABELS, I = (0, 1, 1, 2, 4), sp.Integer


def _notes(s):
    """The page's rows: x^(t) (rows of X), h^(t), V h^(t), o^(t), the mean loss, its gradients and the step η."""
    page = s.derivation.whole_page  # U = 0.5 I_5 …, η = 0.1
    L = s.ledger("h = tanh(U h_prev + W x), o = softmax(V h), L = mean −log o[label]")
    X, W = L.input("X", sp.eye(5)), L.parameter("W", sp.eye(5))
    U, V = (L.parameter(k, sp.eye(5) * page.value(k)) for k in "UV")
    run = cells.rnn(L, X, W, U, phi=sp.tanh)
    S = blocks.linear(L, "S", L.define("H", ops.Concat(run.h, axis=0)), V, orientation="out_in")
    ce = blocks.cross_entropy(L, S, targets=list(LABELS), name="L")
    g, eta = L.backward("L"), page.value(r"\eta")
    m = {f"∇{k}": g[k] for k in "VWU"} | {f"{k}_new": L.define(f"{k}_new", p - eta * g[k]) for k, p in
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
    s.given("U", "V", what=("U's factor of I_5", "V's factor of I_5"))  # the 5 of I_5 is a subscript
    s.given(I(0), what="h^(0) = 0")
    s.given(r"U h^{(t-1)}", what="U h, the same factor times h")


@derivation.section("Forward Pass")
def forward(s):
    r = _notes(s)
    run, ell, L = r["run"], r["ce"].per_position, r["L"]
    for t in range(5):  # the lines of step t + 1: U h + W x = …, h = …, V h = …, o = …, L = −log(p) = loss
        step, tanh_line = f"W x^{{({t + 1})}}", rf"h^{{({t + 1})}} &= " + (r"\tanh" if t < 2 else "")
        uh = sp.zeros(1, 5) if t == 0 else L.define(f"Uh_{t}", run.h[t - 1] @ r["U"].T)
        s.claim(uh, near=step, index=0, what="U h")
        s.given(r["X"][t, :], what=f"x^({t + 1})")
        for near, k in [(step, 2)] * (t < 4) + [(tanh_line, 0)] * (t < 2):  # the sum (not at step 5), tanh's argument
            s.claim(run.z[t], near=near, index=k, what=f"step {t + 1}")
        s.claim(run.h[t], near=tanh_line, index=-1, what=f"step {t + 1}")
        for near in ((f"V h^{{({t + 1})}}", "o^{(1)}") if t == 0 else ("V h^{(2)}",) if t == 1 else ()):
            s.claim(r["S"][t, :], near=near, index=0, what=f"step {t + 1}")  # V h (step 1: and in softmax())
        s.claim(r["O"][t, :], near=f"o^{{({t + 1})}} &=", index=-1, what=f"step {t + 1}")
        s.claim(r["O"][t, LABELS[t]], near=f"L^{{({t + 1})}} &=", index=0, what=f"step {t + 1}")
        s.claim(ell[t, 0], near=f"L^{{({t + 1})}} &=", index=-1, what=f"step {t + 1}")
    for t in range(5):  # the total loss is the mean of the five losses, each copied from its step
        s.claim(ell[t, 0], near=r"L_{\text{total}}", index=t, what=f"L^({t + 1}) in the total loss", at="Total Loss")
    s.claim(r["ce"].loss, near=r"L_{\text{total}}", what="L_total, the mean of the five losses", at="Total Loss")


@derivation.section("Backward Pass (BPTT)")
def backward(s):
    r = _notes(s)
    rows = [s.page.printed(near=rf"\delta_{{\text{{out}}}}^{{({t})}} &=", index=0) for t in range(1, 6)]
    s.claim_rows(["[" + ", ".join(c.strip(" \\;[]") for c in row.split(",")) + "]" for row in rows],
                 r["m"]["δ_out"], what="δ_out (the page spaces its entries with \\;)")
    for printed, v in ((r"\frac{1}{5}", sp.Rational(1, 5)), ("5", I(r["X"].shape[0])), ("1", I(1))):
        s.claim(printed, v, what="the mean's 1/5 (its bounds are structural); δ_out/5; tanh' = 1 − tanh²")
    for name in ("V", "W", "U"):
        s.claim_cells(s.page.numbers(rf"\nabla {name} =", 25), r["m"][f"∇{name}"], what=f"∇{name}")
    s.given(I(0), what="h^(0), the reason given for ∇U's zero column")


@derivation.section(r"Weight Update ($\eta = 0.1$)")
def update(s):
    r = _notes(s)
    for name in ("W", "U", "V"):
        s.claim_cells(s.page.numbers(rf"{name}_{{\text{{new}}}} =", 25), r["m"][f"{name}_new"], what=f"{name}_new")
