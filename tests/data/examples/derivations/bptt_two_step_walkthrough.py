"""Backpropagation through time by hand through two steps of a scalar tanh RNN: a public walkthrough.

Source: https://prachub.com/resources/detailed-backpropagation-walkthrough (rendition:
``bptt-two-step-walkthrough.md``; the page's stored text ends in the second step of its backward pass, and so
does the rendition).

The model, as the page states it: h_t = tanh(W_x x_t + W_h h_{t−1} + b), y_t = W_y h_t and
L = ½(y_1 − 1)² + ½(y_2 − 2)², with x = (1, 2), h_0 = 0, W_x = 0.5, W_h = 0.1, b = 0, W_y = 2; a_t is the
preactivation. The ledger numbers time as the page does (h_1, h_2). The inputs are read where "Given Values" prints
them, and each claim's printed value from its section: the final value of a statement ``y_1 = … = v``, or the k-th
number on a line.

The page's own arithmetic (each "= … =" chain) is checked by the audit with no claim. What only true values decide
is claimed here: tanh(1.04621) = 0.780329 is printed 0.7790, and every number after it that is computed from h_2
(y_2, L_2, L, ∂L/∂y_2, ∂L/∂h_2, tanh′(a_2), ∂L/∂a_2 and the t = 2 terms of ∂L/∂W_x and ∂L/∂W_h) is off by more
than its last digit. Two steps are wrong even from the page's printed operands: ½(0.9242 − 1)² = 0.00287 (printed
0.00288) and ½(1.558 − 2)² = 0.0977 (printed 0.0978); (0.7790)² = 0.6068 (printed 0.6069).
tests/test_example_bptt_two_step_walkthrough.py recomputes each erratum in plain mpmath.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation
from symseq.blocks import cells

derivation = Derivation(
    "bptt-two-step-walkthrough",
    title="Backpropagation through time, two steps of a scalar tanh RNN by hand (a walkthrough)",
    source="bptt-two-step-walkthrough.md",
    description="h_t = tanh(W_x x_t + W_h h_{t-1} + b), y_t = W_y h_t, L = ½(y_1 − 1)² + ½(y_2 − 2)²: forward pass "
                "and the t = 2 gradients",
)
# the ledger's names of the inputs, the page's names and the subsection of "Given Values" that prints them
INPUTS = {"x_1": ("x_1", "Inputs"), "x_2": ("x_2", "Inputs"), "h_0": ("h_0", "Inputs"), "W_x": ("W_x", "Weights"),
          "W_h": ("W_h", "Weights"), "b": ("b", "Weights"), "W_y": ("W_y", "Weights"),
          "y_1^target": ("y_1^{target}", "Target Outputs"), "y_2^target": ("y_2^{target}", "Target Outputs")}


def two_steps(s, title: str):
    """The page's model on a ledger: a_t, h_t, y_t for t = 1, 2, the two losses, their sum and its adjoints."""
    page = s.derivation.whole_page  # the inputs, in "Given Values"
    L = s.ledger(title)
    v = {n: (L.parameter if n[0] in "Wb" else L.input)(n, page.value(printed)) for n, (printed, _) in INPUTS.items()}
    run = cells.rnn(L, [v["x_1"], v["x_2"]], v["W_x"], v["W_h"], v["b"], phi=sp.tanh, h_init=v["h_0"], start=1,
                    names={"z": "a"})
    y = [L.define(f"y_{t}", v["W_y"] * run.h[t - 1]) for t in (1, 2)]
    losses = [L.define(f"L_{t}", (y[t - 1] - v[f"y_{t}^target"]) ** 2 / 2) for t in (1, 2)]
    total = L.define("L", losses[0] + losses[1])
    return L, v, run, y, losses + [total], L.backward("L")


@derivation.section("Given Values")
def given(s):
    L, v, run, y, losses, g = two_steps(s, "the page's inputs, weights, targets and loss")
    for name, (_, at) in INPUTS.items():
        s.given(L.value(name), what=name, at=at)
    s.claim(r"\frac{1}{2}(y_1 - 1)^2 + \frac{1}{2}(y_2 - 2)^2", losses[2], what="the loss function",
            names={"y_1": L.value("y_1"), "y_2": L.value("y_2")}, at="Loss Function")


@derivation.section("1. FORWARD PASS")
def forward(s):
    L, v, run, y, losses, g = two_steps(s, "two steps forward and the loss")
    h1, h2 = run.h
    p = s.page.printed
    # the lines "= \tanh(…) \approx h_1" and "= \tanh(W_x x_2 + W_h h_1) = \tanh(a_2) \approx h_2"
    _, w_h1, a2, h2_printed = (p(near=r"\approx", index=k, occurrence=1) for k in range(4))
    s.claim(p(near=r"\approx", index=-1), h1, what="h_1 = tanh(W_x x_1)", at="Step 1: t = 1")
    s.claim(p("y_1"), y[0], what="y_1 = W_y h_1", at="Step 1: t = 1")
    s.claim(w_h1, v["W_h"] * h1, what="W_h h_1", at="Step 2: t = 2", near=r"\approx")
    s.claim(a2, run.z[1], what="a_2, the preactivation of h_2", at="Step 2: t = 2", near=r"\approx")
    s.claim(h2_printed, h2, what="h_2 = tanh(a_2)", at="Step 2: t = 2", near=r"\approx")
    s.claim(p("y_2"), y[1], what="y_2 = W_y h_2", at="Step 2: t = 2")
    s.claim(p(near="L_1 =", index=-1), losses[0], what="L_1", at="Loss Calculation")
    s.claim(p(near="L_2 =", index=-1), losses[1], what="L_2", at="Loss Calculation")
    s.claim(p("L"), losses[2], what="L = L_1 + L_2", at="Loss Calculation")
    s.note(f"tanh({a2}) is {sp.N(L.value(h2.name), 6)}: {h2_printed} is off in its third decimal, and y_2, L_2 and L "
           f"are computed from it.")


@derivation.section("2. BACKWARD PASS (BPTT)")
def backward(s):
    L, v, run, y, losses, g = two_steps(s, "the gradients at t = 2")
    h1, h2 = run.h
    at, p = "Step 1: Gradients at t = 2", s.page.printed
    tanh_prime = r"\tanh'(a_2) = 1 - h_2^2"  # its line: = 1 - (h_2)^2 = 1 - h_2² = tanh′(a_2)
    s.claim(p(near="y_2^{target} =", index=-1), g["y_2"], what="∂L/∂y_2 = y_2 − 2", at=at)
    s.claim(p("W_y"), v["W_y"], what="∂y_2/∂h_2 = W_y", at=at)
    s.claim(p(near=r"\frac{\partial L}{\partial h_2} =", index=-1), g["h_2"], what="∂L/∂h_2", at=at)
    s.claim(p(near=tanh_prime, index=-2), h2 ** 2, what="h_2²", at=at)
    s.claim(p(near=tanh_prime, index=-1), 1 - h2 ** 2, what="tanh′(a_2) = 1 − h_2²", at=at)
    s.claim(p(near=r"\tanh'(h_2)", index=-1), g["a_2"], what="∂L/∂a_2", at=at)
    for w, x, by in (("W_x", v["x_2"], "x_2"), ("W_h", h1, "h_1")):  # the t = 2 terms of the weights' gradients
        s.claim(p(near=f"{{\\partial {w}}}", index=-1), g["a_2"] * x, what=f"the t = 2 term of ∂L/∂{w}, ∂L/∂a_2 · {by}",
                at=at)
    s.note("∂L/∂a_2 is ∂L/∂h_2 · tanh′(a_2); the page writes the second factor tanh′(h_2).")
