"""A one-unit LSTM run for three steps with hand-picked weights, printed to four decimals (a public Colab notebook).

Source: https://github.com/Yasmeen-Akl/DL-lSTM-/blob/419d0cb5fdf0fa6ed1b42f0094792cf142b2bbb2/Untitled10.ipynb,
rendered in ``lstm-scalar-notebook.md`` (the code cell, then the text it printed).

    f_t = σ(Wf x_t + Whf h_{t−1} + bf)        i_t = σ(Wi x_t + Whi h_{t−1} + bi)
    c̃_t = tanh(Wc x_t + Whc h_{t−1} + bc)     C_t = f_t C_{t−1} + i_t c̃_t
    o_t = σ(Wo x_t + Who h_{t−1} + bo)        h_t = o_t tanh(C_t),      y = Wy h_3 + by

with x = (1, 2, 3), h_0 = C_0 = 0 and every bias 0. The notebook has one bias per gate; the cell of
``symseq.blocks.cells`` has torch's two (b_ih, b_hh), so the second is set to zero.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, exact
from symseq.blocks import cells

derivation = Derivation(
    "lstm-scalar-notebook",
    title="A three-step scalar LSTM printed to four decimals (Colab notebook Untitled10)",
    source="lstm-scalar-notebook.md",
    description="the gates, cell and hidden states of a one-unit LSTM for x = (1, 2, 3), and the readout y = 4 h_3",
)

# (W, Wh, b) of each gate, as the code's tuple assignments print them
GATES = {"f": ("0.5", "0.1", "0"), "i": ("0.6", "0.2", "0"), "c": ("0.7", "0.3", "0"), "o": ("0.8", "0.4", "0")}
X = (1, 2, 3)
PRINTED = {  # what each step prints, in its order
    "f": ("f_t, the forget gate", "0.6225", "0.7361", "0.8269"),
    "i": ("i_t, the input gate", "0.6457", "0.7775", "0.8730"),
    "c̃": ("Ct_tilde, the candidate memory", "0.6044", "0.9009", "0.9798"),
    "C": ("C_t, the cell state", "0.3902", "0.9877", "1.6721"),
    "o": ("o_t, the output gate", "0.6900", "0.8459", "0.9344"),
    "h": ("h_t, the hidden state", "0.2564", "0.6398", "0.8707"),
}


def _one(v):
    return sp.Matrix([[exact(v)]])


@derivation.section("Untitled10.ipynb")
def notebook(s):
    L = s.ledger("the notebook's LSTM, exactly")
    values = {}
    for a, (wx, wh, b) in GATES.items():
        values[f"W_{{x{a}}}"], values[f"W_{{h{a}}}"] = _one(wx), _one(wh)
        values[f"b_{{x{a}}}"], values[f"b_{{h{a}}}"] = _one(b), _one("0")
    p = cells.lstm_parameters(L, 1, 1, packed=False, values=values)
    xs = [L.input(f"x_{t + 1}", _one(x)) for t, x in enumerate(X)]
    run = cells.lstm(L, xs, p)
    Wy, by = L.parameter("W_y", _one(4)), L.parameter("b_y", _one(0))
    y = L.define("y", run.h[-1] * Wy + by, note="the readout")

    # the code's inputs, in the order it assigns them
    for a in GATES:
        s.given(p.W_x[a], what=f"W{a}")
        s.given(p.W_h[a], what=f"Wh{a}")
        s.given(p.b_x[a], what=f"b{a}")
    s.given(Wy, what="Wy")
    s.given(by, what="by")
    s.given(exact(0), what="h, the initial hidden state")
    s.given(exact(0), what="C, the initial cell state")
    s.given(sp.Matrix([X]), what="X, the input sequence")

    # what each step prints
    values_of = {"f": run.gates["f"], "i": run.gates["i"], "c̃": run.gates["c̃"], "C": run.c, "o": run.gates["o"],
                 "h": run.h}
    for t in range(3):
        at = f"Time step {t + 1}"
        s.claim(str(X[t]), xs[t][0, 0], what="Input", at=at, near=f"Time step {t + 1}: Input")
        for k, (label, *printed) in PRINTED.items():
            s.claim(printed[t], values_of[k][t][0, 0], what=label, at=at)
    s.claim("3.4827", y[0, 0], what="Final output y = Wy h_3 + by", at="Final output")
    s.keep(ledger=L, run=run)
