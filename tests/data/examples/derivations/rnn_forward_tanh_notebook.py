"""A scalar tanh RNN run for three steps, by hand and in numpy: a public tutorial notebook.

Source: AyanPaul2210/Deep-Learning-Tutorial, notebook "48. Recurrent Neural
Network (RNN) - Sequence Processing Example",
https://github.com/AyanPaul2210/Deep-Learning-Tutorial/blob/1e0eaedddceaf6b71fb14db2bb134c19e5ed96a3/Deep-Learning-Codes/48.%20Recurrent%20Neural%20Network%20(RNN)%20-%20Sequence%20Processing%20Example.ipynb
(rendition: ``rnn-forward-tanh-notebook.md``).

The model, as the notebook states it: h_t = tanh(W_xh x_t + W_hh h_{t−1} + b) with scalars x = (0.7, 0.5, 0.2),
h_0 = 0.1, W_xh = 0.9, W_hh = 0.5, b = 0.3; the ledger numbers time as the notebook does (h_1, h_2, h_3).

The hand solution's three steps (lines 31, 34, 37) are the page's own arithmetic, which the audit checks with no
claim: it finds tanh(1.1265) ≈ 0.809 and tanh(0.8845) ≈ 0.708 wrong even from their printed operands (0.810, 0.709).
What only true values decide is claimed here: step 3 reuses the wrong h_2 = 0.809 (0.810) and gets the
preactivation 0.8845 (0.8849) from it. The numpy run at the end prints all three states correctly to six decimals;
tests/test_example_rnn_forward_tanh_notebook.py recomputes each erratum in plain mpmath.
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
INPUTS = {"x_1": "0.7", "x_2": "0.5", "x_3": "0.2", "h_0": "0.1", "W_xh": "0.9", "W_hh": "0.5", "b": "0.3"}


def three_steps(s, title: str):
    """The notebook's recurrence on a ledger: rows z_t, h_t for t = 1, 2, 3 from h_0."""
    L = s.ledger(title)
    v = {n: (L.parameter if n[0] in "Wb" else L.input)(n, exact(x)) for n, x in INPUTS.items()}
    return L, cells.rnn(L, [v["x_1"], v["x_2"], v["x_3"]], v["W_xh"], v["W_hh"], v["b"], phi=sp.tanh,
                        h_init=v["h_0"], start=1)


@derivation.section("Problem Statement")
def problem(s):
    L, run = three_steps(s, "the notebook's inputs and parameters")
    for name, at in (("x_1", "Time Step 1"), ("h_0", "Time Step 1"), ("x_2", "Time Step 2"), ("x_3", "Time Step 3"),
                     ("W_xh", "parameters"), ("W_hh", "parameters"), ("b", "parameters")):
        s.given(L.value(name), what=name.replace("_", ""), at=at)


@derivation.section("Manual Solution")
def manual(s):
    L, run = three_steps(s, "three steps of h_t = tanh(W_xh x_t + W_hh h_(t-1) + b)")
    s.claim("0.809", run.h[1], what="h2, the previous state, as an operand", near="h3 = tanh(")
    s.claim("0.8845", run.z[2], what="the preactivation of h3", near="h3 = tanh(")
    s.note("The hand solution truncates: tanh(1.1265) = 0.809818 is written 0.809 and tanh(0.8845) = 0.708667 is "
           "written 0.708; rounded they are 0.810 and 0.709.")
    s.note("Step 3's preactivation 0.8845 is 0.18 + 0.4045 + 0.3, computed from the page's own truncated h2 "
           "(0.5 × 0.809 = 0.4045); with the exact h2 = 0.809829 it is 0.884915, 0.8849 to four decimals.")


@derivation.section("Compute hidden states for the sequence")
def numpy_run(s):
    L, run = three_steps(s, "the notebook's loop, exactly")
    for t, printed in enumerate(("0.753066", "0.809829", "0.708873")):
        s.claim(printed, run.h[t], what=f"h_{t + 1} printed by the loop (format .6f)", at=f"Time Step {t + 1}")
