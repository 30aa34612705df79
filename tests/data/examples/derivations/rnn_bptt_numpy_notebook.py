"""BPTT by hand through a two-unit tanh RNN in numpy, then one gradient step (a public notebook).

Source: https://github.com/thsis/INFOSYS/blob/4f708b909831c9a6582ec6405233a6611af9ae2f/models/RNN-backprop.ipynb,
rendered as ``rnn-bptt-numpy-notebook.md``. The model, as its code runs it: h_t = tanh(W x_t + U h_{t−1}) with
h_0 = 0 (the page's h1, h2, h3 are the ledger's h_0, h_1, h_2; W is the 2×1 input weight printed as a vector),
ŷ = w·h3 and, since the notebook names no loss, loss = ½(y − ŷ)², the loss the same repository's LSTM-backprop
notebook states. Its gradients are wrong: ∂loss/∂ŷ is taken as y − ŷ (the sign flipped), only the path through
h1 enters ∂loss/∂W, and the products of vectors are elementwise; ∂loss/∂U is printed as a 2-vector for a 2×2
matrix. The step W − η·∂loss/∂W, U − η·∂loss/∂U it then prints is right from those numbers and wrong in truth.
"""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.blocks import cells

derivation = Derivation("rnn-bptt-numpy-notebook", title="Backpropagation on RNN (a numpy notebook)",
                        source="rnn-bptt-numpy-notebook.md",
                        description="h_t = tanh(W x_t + U h_{t−1}), ŷ = w·h3, ½(y − ŷ)²: ∂/∂W, ∂/∂U, one step")
X, ETA = ("0.2", "0.3", "0.4"), sp.Rational(1, 1000)


def _notebook(s):
    """The notebook's forward pass, its loss, the true gradients and the step η = 0.001 they give."""
    L = s.ledger("h_t = tanh(W x_t + U h_{t−1}), ŷ = w·h3, loss = ½(y − ŷ)²")
    xs = [L.input(f"x_{t}", [[v]]) for t, v in enumerate(X)]
    W = L.parameter("W", [["2.0"], ["1.0"]], note="printed as the vector [2.0, 1.0]")
    U = L.parameter("U", [["1.0", "2.0"], ["3.0", "4.0"]])
    w = L.parameter("w", [["2.0"], ["4.0"]])
    y = L.input("y", [["7.0"]])
    run = cells.rnn(L, xs, W, U, phi=sp.tanh)
    yhat = blocks.linear(L, "y_", run.h[-1], w, orientation="in_out")
    err = L.define("e", yhat - y)
    L.define("loss", ops.Sum(err * err, None) * sp.Rational(1, 2))
    g = L.backward("loss")
    steps = {k: L.define(f"{k}'", p - g[k] * ETA, note=f"{k} − η ∂loss/∂{k}") for k, p in (("W", W), ("U", U))}
    return dict(L=L, x=xs, W=W, U=U, w=w, y=y, h=run.h, yhat=yhat, g=g, steps=steps)


@derivation.section("Forward pass")
def forward(s):
    r = _notebook(s)
    s.given(r["W"].T, what="W")
    s.given(r["U"][0, :], what="U, row 0")
    s.given(r["U"][1, :], what="U, row 1")
    s.given(r["w"].T, what="w")
    s.given(sp.Matrix([[sp.Rational(v) for v in X]]), what="x")
    s.given(r["y"][0, 0], what="y")
    for t, printed in enumerate(("[0.37994896, 0.19737532]", "[0.87975882, 0.97711011]", "[0.9986059 , 0.99999815]")):
        s.claim(printed, r["h"][t], what=f"h{t + 1}", at=f"Out[{37 + t}]")
    s.claim("5.99720442000804", r["yhat"][0, 0], what="y_ = w·h3", at="Out[40]")


@derivation.section("Backward pass")
def backward(s):
    r = _notebook(s)
    s.claim("[0.00034735, 0.00272708]", r["g"]["W"].T, what="dlossdW, ∂loss/∂W", at="Out[44]")
    s.claim("[0.00053191, 0.00212484]", r["g"]["U"], what="dlossdU, ∂loss/∂U (2×2)", at="Out[45]")
    s.note("∂loss/∂ŷ is written y − ŷ; for loss = ½(y − ŷ)² it is ŷ − y. Only h1's path enters ∂loss/∂W, "
           "and the chain's vectors are multiplied elementwise, not as Jacobians.")


@derivation.section("Gradient Descent")
def step(s):
    r = _notebook(s)
    s.given(ETA, what="eta")
    s.claim("[1.99999965, 0.99999727]", r["steps"]["W"].T, what="W after one step", at="Out[47]")
    s.claim("[[0.99999947, 1.99999788], [2.99999947, 3.99999788]]", r["steps"]["U"], what="U after one step",
            at="Out[48]")
