"""One attention head by autograd, by hand formulas and by a finite difference (``attn-backprop-demo-notebook.md``,
source on its line 1). Q = X W_Q (rows are tokens), S = QKᵀ/√d_k as the code sets it, P = softmax(S), A = P V,
L = ½‖A − T‖²; the outputs were printed for scale = 1 (the SCALE cell never ran). The inputs and every printed result
are read from the page, tensors printed in scientific notation cell by cell (a printed 0.00e+00 reads as code)."""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.authoring.page import exact_value

SETS = {"X": 3, "W_Q": 4, "W_K": 4, "W_V": 4, "T": 3}  # the code's inputs and their rows (4 entries each)


def _matrix(s, name, shift=0):  # the matrix the code sets as name = torch.tensor([…]), [0, 0] moved by shift
    v = [exact_value(x) for x in s.derivation.whole_page.numbers(f"{name} = torch.tensor([", 4 * SETS[name])]
    return sp.Matrix(SETS[name], 4, lambda i, j: v[4 * i + j] + (shift if (i, j) == (0, 0) else 0))


def _head(s, shift=0):
    """The page's head and loss, W_Q[0,0] moved by ``shift``; with the gradients of L when unshifted."""
    L = s.ledger(f"one head, L = ½‖A − T‖², W_Q[0,0] moved by {shift}")
    Xn, Tn = L.input("X", _matrix(s, "X")), L.input("T", _matrix(s, "T"))
    Ws = {k: L.parameter(k, _matrix(s, k, shift if k == "W_Q" else 0)) for k in ("W_Q", "W_K", "W_V")}
    head = blocks.attention_head(L, Xn, *Ws.values(), orientation="in_out", names={"A": "P", "O": "A"})
    loss = L.define("L", ops.Sum((head.O - Tn) * (head.O - Tn), None) * sp.Rational(1, 2))
    return dict(L=L, X=Xn, T=Tn, W=Ws, A=head.O, loss=loss, g=L.backward("L") if shift == 0 else None)


derivation = Derivation("attn-backprop-demo-notebook", title="Backpropagation Through Scaled Dot-Product Attention",
                        source="attn-backprop-demo-notebook.md",
                        description="one attention head: A, L and ∂L/∂W by autograd, by hand and by a difference")


@derivation.section("1. Tiny Self-Attention Setup")
def setup(s):
    r = _head(s)
    s.reported(s.derivation.whole_page.printed(near="Using PyTorch version:", index=0),
               reason="the torch version the notebook ran with (printed above this section)")
    s.claim("3", sp.Integer(r["X"].shape[0]), what="n, the sequence length")
    s.claim("4", sp.Integer(r["X"].shape[1]), what="d_model = d_k = d_v")
    s.given(*(r["X"][i, :] for i in range(3)), *(M[i, :] for M in r["W"].values() for i in range(4)),
            what="X, then W_Q, W_K, W_V, row by row")
    s.given("d_k")
    X = s.values.exact(r["X"])  # printed again in scientific notation, where a printed 0.00e+00 reads as code
    s.given(*(r["T"][i, :] for i in range(3)), *(r["X"][k // 4, k % 4] for k in range(12) if X[k // 4, k % 4]),
            what="T, then X as printed")
    for printed, node in [("[4, 4]", M) for M in r["W"].values()] + [("[3, 4]", r["T"])]:  # torch.Size as a vector
        s.claim(printed, sp.Matrix([node.shape]), what="a shape, printed as torch.Size")


@derivation.section("2. Forward Pass")
def forward(s):
    r = _head(s)
    s.claim(r"\tfrac12", sp.Rational(1, 2), what="the ½ of the loss")
    s.claim_cells(s.page.numbers("Attention output A:", 12), r["A"], what="A = P V ")
    s.claim(r["loss"], near="Loss L:", what="L")


@derivation.section("3. Backward Pass (with Autograd)")
def autograd(s):  # each heading is printed twice: by the code's print(), then in its output
    g = _head(s)["g"]
    for name in ("W_Q", "W_K", "W_V"):
        s.claim_cells(s.page.numbers(f"Autograd gradient dL/d{name}:", 16, occurrence=1), g[name], what=f"∂L/∂{name}")


@derivation.section("4. Manual Backpropagation")
def manual(s):
    for _ in range(2):
        s.claim(r"\frac{1}{\sqrt{d_k}}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="dL/dQ, dL/dK's scale")
    s.claim(_head(s)["loss"], near="Loss from manual forward:", what="L from the manual forward pass")


@derivation.section("5. Compare Manual vs Autograd Gradients")
def compare(s):
    g = _head(s)["g"]["W_Q"]
    s.reported(*s.page.numbers("Max |manual - autograd| for W_Q", 4),
               reason="max |manual − autograd|: float rounding noise of two summation orders (exactly 0)")
    for who in ("Autograd", "Manual  "):  # each printed by the code's print(), then in its output
        s.claim_cells(s.page.numbers(f"{who} dL/dW_Q:", 16, occurrence=1), g, what=f"{who.strip()} dL/dW_Q")


@derivation.section("6. Finite-Difference Check")
def finite_difference(s):
    eps = s.page.value("eps")
    r, up, down = _head(s), _head(s, eps), _head(s, -eps)
    s.given(eps, sp.Matrix([[0, 0]]), what="eps, then [i,j] as printed")
    diff = (up["L"].value("L") - down["L"].value("L")) / (2 * eps)  # the central difference of L in W_Q[0,0]
    s.claim(diff, near="Finite-diff grad for", index=-1, what="the central difference")
    for who in ("Autograd", "Manual"):
        s.claim(r["g"]["W_Q"][0, 0], near=f"{who} grad:", index=-1, what=f"{who.lower()} ∂L/∂W_Q[0,0]")


@derivation.section("7. What to Notice")
def notice(s):
    s.claim(r"1/\sqrt{d_k}", sp.Rational(1, 2), names={"d_k": sp.Integer(4)}, what="the scale")
