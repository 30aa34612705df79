"""BPTT by hand through a two-unit tanh RNN in numpy, then one gradient step (a public notebook).

Source: https://github.com/thsis/INFOSYS/blob/4f708b909831c9a6582ec6405233a6611af9ae2f/models/RNN-backprop.ipynb,
rendered as ``rnn-bptt-numpy-notebook.md``. The model, as its code runs it: h_t = tanh(W x_t + U h_{t−1}) with
h_0 = 0 (the page's h1, h2, h3 are the ledger's h_0, h_1, h_2; W is the 2×1 input weight printed as a vector),
ŷ = w·h3 and, since the notebook names no loss, loss = ½(y − ŷ)², the loss the same repository's LSTM-backprop
notebook states. Its gradients are wrong: ∂loss/∂ŷ is taken as y − ŷ (the sign flipped), only the path through
h1 enters ∂loss/∂W, and the products of vectors are elementwise; ∂loss/∂U is printed as a 2-vector for a 2×2
matrix. The step W − η·∂loss/∂W, U − η·∂loss/∂U it then prints is right from those numbers and wrong in truth.
The arrays and η are read from the code that sets them, each result from the output cell that prints it (:func:`out`).
"""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.blocks import cells
from symseq.read import scan

derivation = Derivation("rnn-bptt-numpy-notebook", title="Backpropagation on RNN (a numpy notebook)",
                        source="rnn-bptt-numpy-notebook.md",
                        description="h_t = tanh(W x_t + U h_{t−1}), ŷ = w·h3, ½(y − ŷ)²: ∂/∂W, ∂/∂U, one step")


def out(s, k: int) -> str:
    """What the cell run as In [k] prints after ``Out[k]:``, as printed: a number or an array (its rows joined)."""
    first = s.page.line(f"Out[{k}]:")
    end = next((i for i in range(first + 1, s.page.last + 1) if s.page.doc.line(i).startswith("In [")), s.page.last + 1)
    rows = [t.text for i in range(first + 1, end) for t in scan(s.page.doc.line(i), i) if not t.script]
    return rows[0] if len(rows) == 1 else "[" + ", ".join(rows) + "]"


def _notebook(s):
    """The notebook's forward pass, its loss, the true gradients and the step η they give."""
    page = s.derivation.whole_page  # the code cells In [36] and [46]

    def array(name, k=0):  # the k-th list of ``name = np.array(…)``
        return page.value(near=f"{name} = np.array(", index=k)

    L = s.ledger("h_t = tanh(W x_t + U h_{t−1}), ŷ = w·h3, loss = ½(y − ŷ)²")
    xs = [L.input(f"x_{t}", [[v]]) for t, v in enumerate(array("x"))]
    W = L.parameter("W", array("W").T, note="printed as a vector")
    U = L.parameter("U", sp.Matrix.vstack(array("U"), array("U", 1)))
    w = L.parameter("w", array("w").T)
    y = L.input("y", [[page.value("y")]])
    run = cells.rnn(L, xs, W, U, phi=sp.tanh)
    yhat = blocks.linear(L, "y_", run.h[-1], w, orientation="in_out")
    err = L.define("e", yhat - y)
    L.define("loss", ops.Sum(err * err, None) * sp.Rational(1, 2))
    g, eta = L.backward("loss"), page.value("eta")
    steps = {k: L.define(f"{k}'", p - g[k] * eta, note=f"{k} − η ∂loss/∂{k}") for k, p in (("W", W), ("U", U))}
    return dict(L=L, x=array("x"), W=W, U=U, w=w, y=y, h=run.h, yhat=yhat, g=g, eta=eta, steps=steps)


@derivation.section("Forward pass")
def forward(s):
    r = _notebook(s)
    s.given(r["W"].T, what="W")
    s.given(r["U"][0, :], what="U, row 0")
    s.given(r["U"][1, :], what="U, row 1")
    s.given(r["w"].T, what="w")
    s.given(r["x"], what="x")
    s.given(r["y"][0, 0], what="y")
    for t in range(3):
        s.claim(out(s, 37 + t), r["h"][t], what=f"h{t + 1}", at=f"Out[{37 + t}]")
    s.claim(out(s, 40), r["yhat"][0, 0], what="y_ = w·h3", at="Out[40]")


@derivation.section("Backward pass")
def backward(s):
    r = _notebook(s)
    s.claim(out(s, 44), r["g"]["W"].T, what="dlossdW, ∂loss/∂W", at="Out[44]")
    s.claim(out(s, 45), r["g"]["U"], what="dlossdU, ∂loss/∂U (2×2)", at="Out[45]")
    s.note("∂loss/∂ŷ is written y − ŷ; for loss = ½(y − ŷ)² it is ŷ − y. Only h1's path enters ∂loss/∂W, "
           "and the chain's vectors are multiplied elementwise, not as Jacobians.")


@derivation.section("Gradient Descent")
def step(s):
    r = _notebook(s)
    s.given(r["eta"], what="eta")
    s.claim(out(s, 47), r["steps"]["W"].T, what="W after one step", at="Out[47]")
    s.claim(out(s, 48), r["steps"]["U"], what="U after one step", at="Out[48]")
