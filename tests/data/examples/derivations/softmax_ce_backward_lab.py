"""Softmax + cross-entropy for one sample, forward and backward by hand: a lab note, rendered as
``softmax-ce-backward-lab.md`` (source address on its line 1). z = XW (rows are samples), p = softmax(z), Loss =
−log p_1, grad = p − y = ∂Loss/∂z, Xᵀ·grad = ∂Loss/∂W, ΔW = −0.1·Xᵀ·grad. From its own rounded numbers: e^{−1.9}
printed 0.149 (0.150) makes p_0 0.098 (0.099) and all that follows wrong; 2.0 × 0.242 = 0.484 (0.485) is rounding
drift. Its multi-line 2×3 bmatrix rows are read cell by cell, its shapes ``(1, 2)`` as tuples."""

import sympy as sp

from symseq import Derivation, blocks, exact, ops

derivation = Derivation("softmax-ce-backward-lab", title="Softmax + cross-entropy, forward and backward by hand",
                        source="softmax-ce-backward-lab.md", description="z = XW, softmax, −log p_1 and its gradients")
P_PRINTED, G_PRINTED = "[0.098, 0.659, 0.242]", "[0.098, -0.341, 0.242]"


def _page(s):
    """The page's rows: X, W, z, the shifted logits, their exponentials and sum, p, the loss and its gradients."""
    L = s.ledger("one sample: z = XW, p = softmax(z), Loss = −log p_1")
    r = dict(L=L, X=L.input("X", [["1.0", "2.0"]]), y=sp.Matrix([[0, 1, 0]]),
             W=L.parameter("W", [["0.2", "-0.3", "0.5"], ["-0.5", "0.7", "-0.2"]]))
    r["z"] = z = blocks.linear(L, "z", r["X"], r["W"], orientation="in_out")
    r["P"] = blocks.probabilities(L, z, name="y_pred")
    r["Loss"] = blocks.cross_entropy(L, z, targets=[1], name="Loss").loss
    r["grad"], r["dW"] = (g := L.backward("Loss"))["z"], g["W"]
    r["shift"], u = L.define("z-max", z - z[0, 1]), sp.Symbol("u")
    r["e"] = L.define("exp", ops.Map(sp.Lambda(u, sp.exp(u)), r["shift"]))
    r["sum"], r["step"] = L.define("sum", ops.Sum(r["e"], None)), L.define("ΔW", r["dW"] * exact("-0.1"))
    return r


def _claims(s, r, rows):
    """(printed or None for an input, key of ``r``/function of ``r``/value, entry, what) in the page's order."""
    for printed, key, entry, what in rows:
        v = r[key] if isinstance(key, str) else key(r) if callable(key) else key
        v = v if entry is None else v[entry // v.shape[1], entry % v.shape[1]]
        s.given(v, what=what) if printed is None else s.claim(printed, v, what=what)


def _section(title, rows):
    derivation.section(title)(lambda s: _claims(s, _page(s), rows))


def _cells(printed: str, key: str, what: str):
    return [(p, key, j, f"{what}, entry {j}") for j, p in enumerate(printed.split())]


def _size(name: str, axis: int):
    return lambda r: sp.Integer(r[name].shape[axis])


_section("🧩 **Setup**", [(None, "X", None, "X"), ("1", _size("X", 0), None, "samples"), ("2", _size("X", 1), None,
         "features"), (None, "W", None, "W"), ("2", _size("W", 0), None, "features"), ("3", _size("W", 1), None,
         "classes"), (None, "y", None, "y_true"), ("1", sp.Integer(1), None, "the correct class")])
_section("**1. Forward Pass — Compute Logits**", [(None, "X", None, "X"), (None, "W", None, "W")] + [
    (f, "z", j % 3, f"z_{j % 3}") for j, f in enumerate(("1*0.2 + 2*(-0.5)", "1*(-0.3) + 2*0.7", "1*0.5 + 2*(-0.2)",
                                                         "0.2 - 1.0", "-0.3 + 1.4", "0.5 - 0.4"))] + [
    ("[-0.8, 1.1, 0.1]", "z", None, "logits")])
_section("**2. Apply Softmax**", [("[-0.8, 1.1, 0.1]", "z", None, "logits")] * 2 + [
    ("1.1", "z", 1, "max"), ("[-1.9, 0, -1.0]", "shift", None, "logits − max"),
    ("-1.9", "shift", 0, "exponent of e^{-1.9}"), ("-1.0", "shift", 2, "exponent of e^{-1.0}"),  # e^0: an exponent
    ("[0.149, 1.0, 0.368]", "e", None, "exp(logits − max)")] + _cells("0.149 1.0 0.368", "e", "summand") + [
    ("1.517", "sum", None, "sum")] + [row for j, p in enumerate(("0.149", "1.0", "0.368"))
                                     for row in ((p, "e", j, "numerator"), ("1.517", "sum", None, "sum"))] + [
    (P_PRINTED, "P", None, "softmax"), (P_PRINTED, "P", None, "y_pred")])
_section("**3. Categorical Cross-Entropy Loss**", [(None, "y", None, "the target"), ("1", sp.Integer(1), None,
         "the correct class"), ("0.659", "P", 1, "p_1"), ("0.417", "Loss", None, "Loss")])
_section("**4. Backward Pass — Gradient of Loss**", [(P_PRINTED, "P", None, "y_pred"), (None, "y", None, "y_true"),
         (G_PRINTED, "grad", None, "grad = y_pred − y_true = ∂Loss/∂z")])
_section("**5. Compute Weight Gradient**", [
    (p, lambda r, k=k, t=t: sp.Matrix([r[k].T.shape if t else r[k].shape]), None, f"shape of {k}{'.T' * t}")
    for p, k, t in (("(1, 2)", "X", 0), ("(1, 3)", "grad", 0), ("(2, 1)", "X", 1))] + [
    (None, lambda r: r["L"].define("X.T", r["X"].T), None, "X.T"), (f"[{G_PRINTED}]", "grad", None, "grad")] + [
    row for i in range(2) for j, p in enumerate(("0.098", "-0.341", "0.242"))
    for row in ((None, "X", i, f"x_{i}"), (p, "grad", j, f"grad_{j}"))] + _cells(
    "0.098 -0.341 0.242 0.196 -0.682 0.484", "dW", "W update = Xᵀ·grad = ∂Loss/∂W") + [
    (None, exact("0.1"), None, "learning rate"), ("-0.1", exact("-0.1"), None, "−lr")] + _cells(
    "-0.0098 0.0341 -0.0242 -0.0196 0.0682 -0.0484", "step", "ΔW = −0.1 · W update"))
_section("✅ Final Summary", [("[-0.8, 1.1, 0.1]", "z", None, "logits"), (P_PRINTED, "P", None, "y_pred"),
                             ("0.417", "Loss", None, "loss"), (G_PRINTED, "grad", None, "gradient")])
