"""A scalar tanh RNN run for three steps, by hand and in numpy: a public tutorial notebook.

Source: AyanPaul2210/Deep-Learning-Tutorial, notebook "48. Recurrent Neural
Network (RNN) - Sequence Processing Example",
https://github.com/AyanPaul2210/Deep-Learning-Tutorial/blob/1e0eaedddceaf6b71fb14db2bb134c19e5ed96a3/Deep-Learning-Codes/48.%20Recurrent%20Neural%20Network%20(RNN)%20-%20Sequence%20Processing%20Example.ipynb
(rendition: ``rnn-forward-tanh-notebook.md``).

The model, as the notebook states it: h_t = tanh(W_xh x_t + W_hh h_{t−1} + b)
with scalars x = (0.7, 0.5, 0.2), h0 = 0.1, W_xh = 0.9, W_hh = 0.5, b = 0.3.
The ledger's rows z_0, h_0, z_1, h_1, z_2, h_2 are the notebook's steps 1, 2
and 3 (its h1, h2, h3); its initial state h0 is the ledger's input ``h_init``.

The hand solution cuts its decimals instead of rounding them and carries the
cut values forward. What that prints wrongly (lines of the rendition):
line 34, h2 = tanh(1.1265) = 0.809818… printed 0.809 (correct 0.810); line 37,
the same h2 reused as an operand, 0.809 (correct 0.810), the preactivation
0.18 + 0.5·h2 + 0.3 = 0.884915 printed 0.8845 (correct 0.8849; 0.8845 is the
sum with the page's cut operand 0.5 · 0.809 = 0.4045) and h3 = 0.708873
printed 0.708 (correct 0.709; even tanh(0.8845) = 0.708667 rounds to 0.709).
The numpy run at the end prints all three states correctly to six decimals.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, exact
from symseq.blocks import cells

derivation = Derivation(
    "rnn-forward-tanh-notebook",
    title="A three-step scalar tanh RNN by hand and in numpy (tutorial notebook 48)",
    source="rnn-forward-tanh-notebook.md",
    description="hidden states of h_t = tanh(0.9 x_t + 0.5 h_{t-1} + 0.3) for x = (0.7, 0.5, 0.2), h0 = 0.1",
)

INPUTS = ("0.7", "0.5", "0.2")


def three_steps(L):
    """The notebook's recurrence on a ledger; returns the leaves and the Recurrence (rows z_t, h_t, t = 0, 1, 2)."""
    xs = [L.input(f"x_{t + 1}", exact(v)) for t, v in enumerate(INPUTS)]
    h0 = L.input("h_init", exact("0.1"), note="the notebook's h0")
    w_x = L.parameter("W_xh", exact("0.9"))
    w_h = L.parameter("W_hh", exact("0.5"))
    b = L.parameter("b", exact("0.3"))
    run = cells.rnn(L, xs, w_x, w_h, b, phi=sp.tanh, h_init=h0)
    # scalar leaves are symbols of the ledger: the printed inputs are declared with their exact values
    value = {n: L.value(n) for n in ("x_1", "x_2", "x_3", "h_init", "W_xh", "W_hh", "b")}
    return dict(x=[value[f"x_{t + 1}"] for t in range(3)], h0=value["h_init"], W_xh=value["W_xh"],
                W_hh=value["W_hh"], b=value["b"], run=run)


@derivation.section("Problem Statement")
def problem(s):
    L = s.ledger("the notebook's inputs and parameters")
    p = three_steps(L)
    s.given(p["x"][0], what="x1", at="Time Step 1")
    s.given(p["h0"], what="h0, the initial hidden state", at="Time Step 1")
    s.given(p["x"][1], what="x2", at="Time Step 2")
    s.given(p["x"][2], what="x3", at="Time Step 3")
    s.given(p["W_xh"], what="W_xh", at="parameters")
    s.given(p["W_hh"], what="W_hh", at="parameters")
    s.given(p["b"], what="b", at="parameters")


@derivation.section("Manual Solution")
def manual(s):
    L = s.ledger("three steps of h_t = tanh(W_xh x_t + W_hh h_(t-1) + b)")
    p = three_steps(L)
    z, h = p["run"].z, p["run"].h
    operand = [p["h0"], h[0], h[1]]
    for t in range(3):
        at = f"Step {t + 1}"
        s.given(p["W_xh"], what="W_xh", at=at)
        s.given(p["x"][t], what=f"x{t + 1}", at=at)
        s.given(p["W_hh"], what="W_hh", at=at)
        if t == 0:
            s.given(operand[0], what="h0", at=at)
        else:
            s.claim(["0.753", "0.809"][t - 1], operand[t], what=f"h{t}, the previous state, as an operand", at=at)
        s.given(p["b"], what="b", at=at)
        s.claim(["0.98", "1.1265", "0.8845"][t], z[t], what=f"the preactivation of h{t + 1}", at=at)
        s.claim(["0.753", "0.809", "0.708"][t], h[t], what=f"h{t + 1}", at=at)
    s.note("The hand solution truncates: tanh(1.1265) = 0.809818 is written 0.809 and tanh(0.8845) = 0.708667 is "
           "written 0.708; rounded they are 0.810 and 0.709.")
    s.note("Step 3's preactivation 0.8845 is 0.18 + 0.4045 + 0.3, computed from the page's own truncated h2 "
           "(0.5 × 0.809 = 0.4045); with the exact h2 = 0.809829 it is 0.884915, 0.8849 to four decimals. "
           "Step 2's 1.1265 is likewise 0.45 + 0.3765 + 0.3 from the rounded h1 = 0.753, but it also holds for "
           "the exact value 1.126533.")
    s.keep(ledger=L, parts=p)


@derivation.section("Compute hidden states for the sequence")
def numpy_run(s):
    L = s.ledger("the notebook's loop, exactly")
    p = three_steps(L)
    for t, printed in enumerate(("0.753066", "0.809829", "0.708873")):
        s.claim(printed, p["run"].h[t], what=f"h_{t + 1} printed by the loop (format .6f)", at=f"Time Step {t + 1}")
