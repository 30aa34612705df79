"""Softmax + cross-entropy for one sample, forward and backward by hand: a lab note rendered as
``softmax-ce-backward-lab.md`` (source on its line 1). z = XW (rows are samples), p = softmax(z), Loss = −log p_1,
grad = p − y = ∂Loss/∂z, Xᵀ·grad = ∂Loss/∂W, ΔW = −lr·Xᵀ·grad. X, W, y_true, lr and each claim's printed text are read
from the page (a bmatrix cell by cell, its sums of products as printed formulas). From its own rounded numbers:
e^{−1.9} printed 0.149 (0.150) makes p_0 0.098 (0.099) and all after it wrong; 2.0 × 0.242 = 0.484 (0.485) is drift."""

import sympy as sp

from symseq import Derivation, blocks, ops

derivation = Derivation("softmax-ce-backward-lab", title="Softmax + cross-entropy, forward and backward by hand",
                        source="softmax-ce-backward-lab.md", description="z = XW, softmax, −log p_1 and its gradients")


def bmatrices(s, near: str) -> list[list[list[str]]]:
    """The cells (rows of printed strings) of each bmatrix the section prints from its line holding ``near`` on."""
    text = " ".join(s.page.doc.line(i) for i in range(s.page.line(near), s.page.last + 1))
    bodies = [b.split(r"\end{bmatrix}")[0] for b in text.split(r"\begin{bmatrix}")[1:]]
    return [[[c.strip() for c in row.split("&")] for row in b.split(r"\\") if row.strip()] for b in bodies]


def _page(s):
    """The page's quantities: X, W, z, the shifted logits, their exponentials and sum, p, the loss and its gradients."""
    inputs = s.derivation.whole_page  # printed in Setup and Section 5
    L = s.ledger("one sample: z = XW, p = softmax(z), Loss = −log p_1")
    r = dict(L=L, X=L.input("X", inputs.value("X")), y=inputs.value("y_true"), W=L.parameter("W", inputs.value("W")),
             lr=inputs.value(near="learning rate of"))
    r["z"] = z = blocks.linear(L, "z", r["X"], r["W"], orientation="in_out")
    r["P"] = blocks.probabilities(L, z, name="y_pred")
    r["Loss"] = blocks.cross_entropy(L, z, targets=[1], name="Loss").loss
    r["grad"], r["dW"] = (g := L.backward("Loss"))["z"], g["W"]
    r["shift"], u, r["X.T"] = L.define("z-max", z - z[0, 1]), sp.Symbol("u"), L.define("X.T", r["X"].T)
    r["e"] = L.define("exp", ops.Map(sp.Lambda(u, sp.exp(u)), r["shift"]))
    r["sum"], r["step"] = L.define("sum", ops.Sum(r["e"], None)), L.define("ΔW", r["dW"] * -r["lr"])
    r.update({f"{k}.shape[{a}]": sp.Integer(r[k].shape[a]) for k in "XW" for a in (0, 1)})
    return r


def state(s, r, rows):
    """Each row (printed, value, what) a claim in the page's order, or an input where printed is None; printed (words,
    k) is the k-th value on the line holding the words, a value one of ``r`` by name or (name, entry), or an integer."""
    for printed, v, what in rows:
        printed = s.page.printed(near=printed[0], index=printed[1]) if isinstance(printed, tuple) else printed
        v = sp.Integer(v) if isinstance(v, int) else r[v] if isinstance(v, str) else r[v[0]][0, v[1]] \
            if isinstance(v, tuple) else v
        s.given(v, what=what) if printed is None else s.claim(printed, v, what=what)


def _section(title, *rows):
    derivation.section(title)(lambda s: state(s, _page(s), rows))


_section("🧩 **Setup**", (None, "X", "X"), (("sample,", 1), "X.shape[0]", "samples"),
         (("sample,", 2), "X.shape[1]", "features"), (None, "W", "W"), (("features →", 0), "W.shape[0]", "features"),
         (("features →", 1), "W.shape[1]", "classes"), (None, "y", "y_true"),
         (("is the right one", -1), 1, "the correct class"))


@derivation.section("**1. Forward Pass — Compute Logits**")
def forward(s):
    r, (_, _, products, differences, logits) = _page(s), bmatrices(s, "Logits =")
    state(s, r, [(None, "X", "X"), (None, "W", "W")] + [  # each z_j as a sum of products (in parentheses), then a sum
        (f[1:-1] if f.startswith("(") and f.endswith(")") else f, ("z", j % 3), f"z_{j % 3}")
        for j, f in enumerate(products[0] + differences[0])] + [(f"[{', '.join(logits[0])}]", "z", "logits")])


LOGITS, EXP, SUM, SOFTMAX = r"\text{logits} - \max", r"\exp =", r"\text{sum} =", r"\text{softmax} ="
_section("**2. Apply Softmax**", (("Now the softmax of", 0), "z", "logits"), ((LOGITS, 0), "z", "logits"),
         ((LOGITS, 1), ("z", 1), "max"), ((LOGITS, 2), "shift", "logits − max"),
         ((EXP, 0), ("shift", 0), "exponent of e^(z_0 − max)"),  # e^0's exponent is a superscript, not a value
         ((EXP, 1), ("shift", 2), "exponent of e^(z_2 − max)"), ((EXP, 2), "e", "exp(logits − max)"),
         *(((SUM, j), ("e", j), f"summand, entry {j}") for j in range(3)), ((SUM, 3), "sum", "sum"),
         *(row for j in range(3) for row in (((SOFTMAX, 2 * j), ("e", j), "numerator"),  # e_j / sum, one after another
                                             ((SOFTMAX, 2 * j + 1), "sum", "sum"))),
         ((SOFTMAX, 6), "P", "softmax"), ((r"y_{\text{pred}} =", 0), "P", "y_pred"))
_section("**3. Categorical Cross-Entropy Loss**", (None, "y", "the target"),
         (("is the right one", -1), 1, "the correct class"), ((r"= -\log(", 0), ("P", 1), "p_1"),
         ((r"= -\log(", 1), "Loss", "Loss"))
_section("**4. Backward Pass — Gradient of Loss**", ((r"\text{grad} =", 0), "P", "y_pred"), (None, "y", "y_true"),
         ((r"\text{grad} =", 2), "grad", "grad = y_pred − y_true = ∂Loss/∂z"))  # y_pred − y_true = grad, one line


@derivation.section("**5. Compute Weight Gradient**")
def weight_gradient(s):
    r, (_, grad, products, update, step) = _page(s), bmatrices(s, r"\text{W update} = X")
    state(s, r, [((near, 0), sp.Matrix([r[k].shape]), f"shape of {k}") for near, k in (
        ("`X` is shape", "X"), ("`grad` is shape", "grad"), ("So `X.T` is", "X.T"))]
          + [(None, "X.T", "X.T"), (f"[[{', '.join(grad[0])}]]", "grad", "grad")]
          + [row for i, cells in enumerate(products) for j, cell in enumerate(cells)  # x_i * grad_j
             for row in ((None, ("X", i), f"x_{i}"), (cell.split("*")[1].strip(), ("grad", j), f"grad_{j}"))]
          + [(x, r["dW"][k // 3, k % 3], f"W update = Xᵀ·grad = ∂Loss/∂W, entry {k}")
             for k, x in enumerate(update[0] + update[1])] + [(None, r["lr"], "learning rate")]
          + [((r"\Delta W = ", 0), -r["lr"], "−lr")]
          + [(x, r["step"][k // 3, k % 3], f"ΔW = −lr · W update, entry {k}") for k, x in enumerate(step[0] + step[1])])


_section("✅ Final Summary", (("Multiply input by weights", -1), "z", "logits"), (("Apply softmax", -1), "P", "y_pred"),
         (("cross-entropy loss", -1), "Loss", "loss"), (("Get gradient", -1), "grad", "gradient"))
