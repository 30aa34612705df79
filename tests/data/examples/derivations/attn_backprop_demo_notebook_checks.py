"""Backpropagation through one scaled dot-product attention head (a course notebook): the hand formulas, the
comparison and the finite difference (``attn-backprop-demo-notebook.md``, address on its line 1; its setup, forward
pass and autograd gradients are in ``attn_backprop_demo_notebook.py``, whose conventions hold here). The float32
central difference prints −2.51e-04 where the difference itself, at eps = 1e-4, is −1.27e-04 (−2.54e-04 even for
the unscaled head the outputs come from: float32 cancellation). The |manual − autograd| maxima are reported.
"""

import sympy as sp

from symseq import Derivation, blocks, exact, ops

INPUTS = {  # as the code sets them, row by row
    "X": "0.5 0.2 0.1 -0.1 0.0 0.3 -0.2 0.2 0.4 -0.1 0.0 0.3",
    "W_Q": "0.2 -0.1 0.0 0.3 0.1 0.0 0.2 -0.2 -0.1 0.3 0.1 0.0 0.0 0.2 -0.2 0.1",
    "W_K": "0.1 0.2 0.0 -0.1 0.0 0.1 0.3 0.0 0.2 -0.2 0.1 0.1 -0.1 0.0 0.2 0.2",
    "W_V": "0.3 0.1 0.0 -0.2 0.0 0.2 0.1 0.0 0.1 -0.1 0.2 0.1 0.0 0.1 -0.2 0.3",
    "T": "0.10 0.00 0.05 -0.05 0.00 0.10 -0.05 0.05 0.05 -0.05 0.10 0.00"}
PRINTED = {"W_Q": "-2.54e-04 -6.72e-05 6.62e-05 1.79e-04 1.59e-04 3.44e-05 -6.72e-05 -9.17e-05 -1.86e-04 -4.14e-05 "
                   "7.43e-05 1.11e-04 1.40e-04 2.62e-05 -7.27e-05 -7.00e-05"}  # row by row, as printed


def _matrix(name, shift=0):
    v = [exact(x) for x in INPUTS[name].split()]
    return sp.Matrix(len(v) // 4, 4, lambda i, j: v[4 * i + j] + (shift if (i, j) == (0, 0) else 0))


def _head(s, shift=0):
    """The page's head and loss, W_Q[0,0] moved by ``shift``; with the gradients of L when unshifted."""
    L = s.ledger(f"one head, L = ½‖A − T‖², W_Q[0,0] moved by {shift}")
    Xn, Tn = L.input("X", _matrix("X")), L.input("T", _matrix("T"))
    Ws = {k: L.parameter(k, _matrix(k, shift if k == "W_Q" else 0)) for k in ("W_Q", "W_K", "W_V")}
    head = blocks.attention_head(L, Xn, *Ws.values(), orientation="in_out", names={"A": "P", "O": "A"})
    loss = L.define("L", ops.Sum((head.O - Tn) * (head.O - Tn), None) * sp.Rational(1, 2))
    return dict(L=L, X=Xn, T=Tn, W=Ws, A=head.O, loss=loss, g=L.backward("L") if shift == 0 else None)


def _cells(s, r, name, what):
    M = r["g"][name]
    for k, p in enumerate(PRINTED[name].split()):
        s.claim(p, M[k // 4, k % 4], what=f"{what}[{k // 4},{k % 4}]")


derivation = Derivation("attn-backprop-demo-notebook-checks", title="Backpropagation Through Scaled Dot-Product "
                        "Attention, the checks", source="attn-backprop-demo-notebook.md",
                        description="one attention head: the hand gradients, the comparison, a central difference")
EPS = exact("1e-4")


@derivation.section("4. Manual Backpropagation")
def manual(s):
    for _ in range(2):
        s.claim(r"\frac{1}{\sqrt{d_k}}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="the scale, dL/dQ, dL/dK")
    s.claim("2.86e-02", _head(s)["loss"], what="L from the manual forward pass")


@derivation.section("5. Compare Manual vs Autograd Gradients")
def compare(s):
    r = _head(s)
    for printed in ("7.28e-12", "2.91e-11", "0.00e+00", "1.86e-09"):
        s.reported(printed, reason="max |manual − autograd|: float rounding noise of two summation orders (exactly 0)")
    _cells(s, r, "W_Q", "autograd ∂L/∂W_Q")
    _cells(s, r, "W_Q", "manual ∂L/∂W_Q")


@derivation.section("6. Finite-Difference Check")
def finite_difference(s):
    r, up, down = _head(s), _head(s, EPS), _head(s, -EPS)
    s.given(EPS, what="eps")
    s.given(sp.Matrix([[0, 0]]), what="[i,j] as printed")
    diff = (up["L"].value("L") - down["L"].value("L")) / (2 * EPS)
    s.claim("-2.51e-04", diff, what="the central difference of L in W_Q[0,0] at eps = 1e-4")
    for what in ("autograd", "manual"):
        s.claim("-2.54e-04", r["g"]["W_Q"][0, 0], what=f"{what} ∂L/∂W_Q[0,0]")


@derivation.section("7. What to Notice")
def notice(s):
    s.claim(r"1/\sqrt{d_k}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="the scale")
