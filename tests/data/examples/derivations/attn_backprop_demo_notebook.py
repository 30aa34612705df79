"""One attention head by autograd, by hand formulas and by a finite difference (``attn-backprop-demo-notebook.md``,
source on its line 1). Q = X W_Q (rows are tokens), S = QKᵀ/√d_k as the code sets it, P = softmax(S), A = P V,
L = ½‖A − T‖². The outputs were printed for scale = 1 (the SCALE cell never ran). Tensors printed in scientific
notation are read, and claimed, cell by cell (a printed 0.00e+00 reads as code)."""

import sympy as sp

from symseq import Derivation, blocks, exact, ops

INPUTS = {  # as the code sets them, row by row
    "X": "0.5 0.2 0.1 -0.1 0.0 0.3 -0.2 0.2 0.4 -0.1 0.0 0.3",
    "W_Q": "0.2 -0.1 0.0 0.3 0.1 0.0 0.2 -0.2 -0.1 0.3 0.1 0.0 0.0 0.2 -0.2 0.1",
    "W_K": "0.1 0.2 0.0 -0.1 0.0 0.1 0.3 0.0 0.2 -0.2 0.1 0.1 -0.1 0.0 0.2 0.2",
    "W_V": "0.3 0.1 0.0 -0.2 0.0 0.2 0.1 0.0 0.1 -0.1 0.2 0.1 0.0 0.1 -0.2 0.3",
    "T": "0.10 0.00 0.05 -0.05 0.00 0.10 -0.05 0.05 0.05 -0.05 0.10 0.00"}
PRINTED = {  # row by row, as the notebook prints them (precision 2, scientific notation)
    "A": "8.67e-02 7.33e-02 -2.00e-02 -2.34e-02 8.69e-02 7.33e-02 -1.98e-02 -2.36e-02 8.68e-02 7.32e-02 -2.01e-02 "
         "-2.33e-02",
    "W_Q": "-2.54e-04 -6.72e-05 6.62e-05 1.79e-04 1.59e-04 3.44e-05 -6.72e-05 -9.17e-05 -1.86e-04 -4.14e-05 7.43e-05 "
           "1.11e-04 1.40e-04 2.62e-05 -7.27e-05 -7.00e-05",
    "W_K": "-3.46e-05 -8.76e-06 -5.94e-05 -2.93e-04 -4.36e-05 2.58e-06 2.59e-05 -3.27e-05 -2.71e-05 -5.15e-06 "
           "-3.39e-05 -1.87e-04 7.44e-05 4.38e-06 2.08e-05 2.73e-04",
    "W_V": "3.32e-02 5.10e-02 -4.80e-02 -2.11e-02 1.47e-02 2.25e-02 -2.12e-02 -9.34e-03 -3.64e-03 -5.64e-03 5.31e-03 "
           "2.31e-03 1.47e-02 2.27e-02 -2.14e-02 -9.34e-03"}


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


derivation = Derivation("attn-backprop-demo-notebook", title="Backpropagation Through Scaled Dot-Product Attention",
                        source="attn-backprop-demo-notebook.md",
                        description="one attention head: A, L and ∂L/∂W by autograd, by hand and by a difference")
EPS = exact("1e-4")


@derivation.section("1. Tiny Self-Attention Setup")
def setup(s):
    r = _head(s)
    s.reported("2.9.0", reason="the torch version the notebook ran with (printed above this section)")
    s.claim("3", sp.Integer(r["X"].shape[0]), what="n, the sequence length")
    s.claim("4", sp.Integer(r["X"].shape[1]), what="d_model = d_k = d_v")
    s.given(*(r["X"][i, :] for i in range(3)), *(M[i, :] for M in r["W"].values() for i in range(4)),
            what="X, then W_Q, W_K, W_V, row by row")
    s.given(sp.Integer(4), what="d_k")
    s.given(*(r["T"][i, :] for i in range(3)), *(r["X"][k // 4, k % 4] for k, v in enumerate(INPUTS["X"].split())
                                                 if v != "0.0"), what="T, then X as printed")
    for printed, node in [("[4, 4]", M) for M in r["W"].values()] + [("[3, 4]", r["T"])]:  # torch.Size as a vector
        s.claim(printed, sp.Matrix([node.shape]), what="a shape, printed as torch.Size")


@derivation.section("2. Forward Pass")
def forward(s):
    r = _head(s)
    s.claim(r"\tfrac12", sp.Rational(1, 2), what="the ½ of the loss")
    s.claim_cells(PRINTED["A"], r["A"], what="A = P V ")
    s.claim("2.86e-02", r["loss"], what="L")


@derivation.section("3. Backward Pass (with Autograd)")
def autograd(s):
    r = _head(s)
    for name in ("W_Q", "W_K", "W_V"):
        s.claim_cells(PRINTED[name], r["g"][name], what=f"∂L/∂{name}")


@derivation.section("4. Manual Backpropagation")
def manual(s):
    for _ in range(2):
        s.claim(r"\frac{1}{\sqrt{d_k}}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="dL/dQ, dL/dK's scale")
    s.claim("2.86e-02", _head(s)["loss"], what="L from the manual forward pass")


@derivation.section("5. Compare Manual vs Autograd Gradients")
def compare(s):
    r = _head(s)
    s.reported("7.28e-12", "2.91e-11", "0.00e+00", "1.86e-09",
               reason="max |manual − autograd|: float rounding noise of two summation orders (exactly 0)")
    s.claim_cells(PRINTED["W_Q"], r["g"]["W_Q"], what="autograd ∂L/∂W_Q")
    s.claim_cells(PRINTED["W_Q"], r["g"]["W_Q"], what="manual ∂L/∂W_Q")


@derivation.section("6. Finite-Difference Check")
def finite_difference(s):
    r, up, down = _head(s), _head(s, EPS), _head(s, -EPS)
    s.given(EPS, sp.Matrix([[0, 0]]), what="eps, then [i,j] as printed")
    diff = (up["L"].value("L") - down["L"].value("L")) / (2 * EPS)
    s.claim("-2.51e-04", diff, what="the central difference of L in W_Q[0,0] at eps = 1e-4")
    for what in ("autograd", "manual"):
        s.claim("-2.54e-04", r["g"]["W_Q"][0, 0], what=f"{what} ∂L/∂W_Q[0,0]")


@derivation.section("7. What to Notice")
def notice(s):
    s.claim(r"1/\sqrt{d_k}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="the scale")
