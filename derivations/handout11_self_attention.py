"""Handout #11 — Self-Attention and Next-Token Prediction.

Source: seed handout ``001_d42a515eb3cd140c.txt``. Sections follow the
handout: §1 weights computed from the input, §2.1 the three-key retrieval, §2.2 how routing learns, §3.1 the
√d_k scaling and its two softmax examples, §3.2 the full matrix operation, §4
heads and parameter counts, §4.1 two heads on one query, §4.2 the fused
projection, §5 and §5.1 the block in its post-norm and pre-norm arrangements,
§6 and §6.1 the vocabulary head and the order statement, §7.1–§7.3 generation,
teacher forcing and the need for a causal mask in every block, §7.4 the
A B C A trace to the mean loss, §8 the lab's einsum strings, and §9 the
implementation readings (nanoGPT's head reshape, pre-norm, gated FFN, RMSNorm).

Conventions read from the handout: rows are positions; Q = X W_Q with W_Q of
shape D×d_k (``orientation="in_out"``); scores are divided by √d_k; masked
scores are excluded before the row softmax; cross-entropy is
logsumexp(z) − z_target in nats. The handout's displayed equations and tables
(the X, S, A, U and logit matrices of §7.4, the post-norm formula of §5.1, the
teacher-forcing table of §7.2) are not in the text; each section notes what it
checks in their place. The inputs the text prints (q and the keys of §2.1, the
two scores of §3.1 and their divisor √64, D and H of §4, the values and weights
of §4.1, the position rows, W_Q, W_K and W_vocab of §7.4) are declared with
``section.given`` at the values computed with, so ``symseq audit`` reports an
edited input as wrong.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symseq import Derivation, Ledger, blocks, ops
from symseq.derive import attention_grads as grads_cf
from symseq.derive import properties
from symseq.derive import dot_product_variance
from symseq.derive import reverse_jacobian, vanishes
from symseq.errors import ShapeError
from symseq.functions import relu

derivation = Derivation(
    "handout11-self-attention",
    title="Handout #11 — Self-Attention and Next-Token Prediction",
    source="001_d42a515eb3cd140c.txt",
    description="retrieval, √d_k scaling, heads and parameter counts, order, causal masks, the A B C A trace",
)

LOG2 = sp.log(2)


def _retrieval() -> tuple[Ledger, object, object]:
    """§2.1: one query q = [1,0] against k_0 = [√2 log 2, 0], k_1 = [0,1], k_2 = [0,−1]; values from §4.1."""
    L = Ledger("the retrieval: one query, three keys, d_k = 2")
    q = L.input("q", [[1, 0]])
    K = L.input("K", [[sp.sqrt(2) * LOG2, 0], [0, 1], [0, -1]], note="rows k_0, k_1, k_2")
    V = L.input("V", [[2, 0], [0, 2], [4, 4]], note="rows v_0, v_1, v_2 (given with the two heads)")
    head = blocks.scaled_dot_product(L, q, K, V, names={"S": "s", "A": "a", "O": "y"})
    E = L.define("e^s", ops.Map(sp.exp, head.S), note="exponentials of the scaled scores")
    return L, head, E


@derivation.section("1Content-dependent retrieval")
def content_dependent(s):
    L, head, _ = _retrieval()
    Lo = Ledger("the retrieval's query against its keys in another order (k_1, k_0, k_2)")
    other = blocks.scaled_dot_product(Lo, Lo.input("q", [[1, 0]]),
                                      Lo.input("K", [[0, 1], [sp.sqrt(2) * LOG2, 0], [0, -1]]),
                                      Lo.input("V", [[0, 2], [2, 0], [4, 4]]), names={"S": "s", "A": "a", "O": "y"})
    s.differ("the mixing weights are computed from the input: other keys give the same query other weights",
             other.A, head.A, by="0.1", near="computes a different set of mixing weights for every input")
    Lx = Ledger("self-attention's three projections of one symbolic input X, T = 3, D = 2")
    X = Lx.input("X", shape=(3, 2))
    own = _head(Lx, X)
    s.use(Lx, sizes={"T": 3, "D": 2})  # (it binds the page's X ∈ ℝ^{T×D} and the projections of its rows)
    inputs = [set().union(*(e.free_symbols for e in Lx.expand(n.name))) & set(Lx.entry_symbols("X"))
              for n in (own.Q, own.K, own.V)]
    params = [set().union(*(e.free_symbols for e in Lx.expand(n.name))) - set(Lx.entry_symbols("X"))
              for n in (own.Q, own.K, own.V)]
    s.prove("queries, keys and values are learned projections of the same input X", lambda: (
        all(i == set(Lx.entry_symbols("X")) for i in inputs) and all(p == set(Lx.entry_symbols(w))
                                                                  for p, w in zip(params, ("W_Q", "W_K", "W_V"))),
        "Q, K and V each involve every entry of X and their own projection, no other input"),
        near="learned projections of the same input")


@derivation.section("§2 Compute one query's answer")
def one_query(s):
    Lv = Ledger("one query against three keys, d_k = 2, values of width d_v = 3")
    q, K, V = Lv.input("q", shape=(1, 2)), Lv.input("K", shape=(3, 2)), Lv.input("V", shape=(3, 3))
    wide = blocks.scaled_dot_product(Lv, q, K, V, names={"S": "s", "A": "a", "O": "y"})
    s.prove("values may have a different width d_v from the query/key width d_k", lambda: (
        q.shape[1] == K.shape[1] != V.shape[1] == wide.O.shape[1],
        f"d_k = {q.shape[1]}, d_v = {V.shape[1]}: y is {wide.O.shape[0]}×{wide.O.shape[1]}"),
        near="Values may have a different width")

    def mismatched() -> str:
        Lm = Ledger("a query of width 2 against keys of width 3")
        try:
            blocks.scaled_dot_product(Lm, Lm.input("q", shape=(1, 2)), Lm.input("K", shape=(3, 3)),
                                      Lm.input("V", shape=(3, 2)))
        except ShapeError as e:
            return str(e)
        return ""

    refused = mismatched()
    s.prove("compatible queries and keys must have the same width: q · k needs equal widths", lambda: (
        bool(refused) and wide.S.shape == (1, 3), refused or "a query of width 2 was scored against keys of width 3"),
        near="keys must have the same width")


@derivation.section("§2.1 A complete numerical retrieval")
def retrieval(s):
    L, head, E = _retrieval()
    s.use(L)
    s.claim("2", sp.Integer(L.shape("q")[1]), what="d_k, the width of q and of every key", at="d_k = 2")
    s.given(L.handle("q"), what="q")
    for j in range(3):
        s.given(L.handle("K")[j, :], what=f"k_{j}")
    s.claim(r"[\log 2,0,0]", head.S, what="scaled scores q k_jᵀ/√2")
    s.claim("[2,1,1]", E, what="exponentials of the scaled scores")
    s.claim("[1/2,1/4,1/4]", head.A, what="attention weights")
    s.claim(head.O, name="y", what="y = Σ_j a_j v_j")
    y, V = L.value(head.O.name), L.value("V")
    s.prove("the output need not equal any individual value", lambda: (
        all(y != V.row(j) for j in range(3)), f"y = {list(y)}; values {[list(V.row(j)) for j in range(3)]}"),
        near="The output need not equal any individual value")
    p = properties.convex_combination(L, head.O, L.handle("V"))
    s.prove("before dropout y is a convex combination of the values: nonnegative weights summing to one", p.check,
            near="it is a convex combination of the values")
    s.prove("the weights sum to one", properties.rows_sum_to_one(L, head.A).check,
            near="nonnegative weights sum to one")
    # A later residual addition y + q is not held to the values' convex hull: its barycentric weights in the
    # triangle v_0, v_1, v_2 are not all nonnegative.
    Lr = Ledger("a residual addition after the retrieval: y + q")
    u = Lr.value(blocks.residual(Lr, "y+q", Lr.input("y", L.value(head.O.name)), Lr.input("q", [[1, 0]])).name)
    bary = sp.Matrix([[*V.col(0)], [*V.col(1)], [1, 1, 1]]).solve(sp.Matrix([u[0], u[1], 1]))
    s.prove("a later residual addition leaves the convex hull of the values", lambda: (
        min(bary) < 0, f"y + q = {list(u)} = Σ_j λ_j v_j with λ = {list(bary)}"),
        near="are not constrained to this convex hull")
    s.heatmap("a", head.A, rows=["q"], cols=["k_0", "k_1", "k_2"])


@derivation.section("§2.2 How the routing learns")
def routing(s):
    L, head, _ = _retrieval()
    s.use(L)
    J = reverse_jacobian(L, head.A, head.S)
    a = L.value(head.A.name)
    s.claim(r"\begin{array}{ccc}1/4&-1/8&-1/8\\-1/8&3/16&-1/16\\-1/8&-1/16&3/16\end{array}", J,
            what="∂a/∂s at a = [1/2, 1/4, 1/4] from reverse mode (the weights' Jacobian; not printed, derived)",
            at="competition for a fixed total", in_text=False)
    s.prove("raising one score increases its own weight and reduces the others", lambda: (
        all((J[i, j] > 0) if i == j else (J[i, j] < 0) for i in range(3) for j in range(3))
        and J == grads_cf.softmax_jacobian(a), "∂a_i/∂s_i = a_i(1 − a_i) > 0, ∂a_j/∂s_i = −a_i a_j < 0"),
        at="competition for a fixed total", near="Raising one score increases its own weight and reduces the others")
    s.prove("they compete for a fixed total: the weights' changes sum to zero", lambda: (
        J * sp.ones(3, 1) == sp.zeros(3, 1) and sp.ones(1, 3) * J == sp.zeros(1, 3), "rows and columns of J sum to 0"),
        at="competition for a fixed total", near="because they compete for a fixed total")
    s.prove("∂a/∂s = diag(a) − aᵀa for a symbolic row of three scores", grads_cf.prove_softmax_jacobian(3).check)
    proof = grads_cf.prove_attention_gradients(1, 3, 2, 2)
    s.prove("value path and query/key path: ∇_V = AᵀḠ, ∇_Q = ∇_S K/√d_k, ∇_K = ∇_Sᵀ Q/√d_k", proof.check,
            at="both paths receive gradients")
    Lg = Ledger("gradients of ℓ = y·[1, 1] at the retrieval's point")
    q = Lg.input("q", [[1, 0]])
    K = Lg.input("K", [[sp.sqrt(2) * LOG2, 0], [0, 1], [0, -1]])
    V = Lg.input("V", [[2, 0], [0, 2], [4, 4]])
    h = blocks.scaled_dot_product(Lg, q, K, V, names={"S": "s", "A": "a", "O": "y"})
    Lg.define("ℓ", ops.Sum(h.O, None))
    g = Lg.backward("ℓ")
    s.use(Lg)
    gq, gv = Lg.value(g.name("q")), Lg.value(g.name("V"))
    s.prove("both paths receive gradients from a loss on y", lambda: (
        any(e != 0 for e in gq) and any(e != 0 for e in gv), f"∂ℓ/∂q = {list(gq)}, ∂ℓ/∂V ≠ 0"),
        at="both paths receive gradients", near="Both paths receive gradients")


@derivation.section("§3.1 Why divide by the square root?")
def scaling(s):
    sigma = sp.Symbol("σ", positive=True)
    s.identity("each product q_i k_i has variance σ⁴", dot_product_variance(1, sigma2=sigma**2) - sigma**4,
               at="variance argument", near=r"with variance $\sigma^2$. Each product has variance $\sigma^4$")
    for d in (2, 3, 8):  # d_k stays general on the page; the identities are proved at these widths
        s.identity("summing d_k independent products gives variance d_k σ⁴",
                   dot_product_variance(d, sigma2=sigma**2) - d * sigma**4, what=f"d_k = {d}",
                   at="variance argument", near=r"independent products gives variance $d_k\sigma^4$")
        s.identity("dividing by √d_k gives variance σ⁴", dot_product_variance(d, sigma2=sigma**2, scaled=True)
                   - sigma**4, what=f"d_k = {d}", at="variance argument",
                   near=r"Dividing by $\sqrt{d_k}$ gives variance $\sigma^4$")
    L = Ledger("two scores [0, 8], raw and divided by √64")
    s.use(L)
    Sr = L.input("s", [[0, 8]])
    scale = sp.sqrt(64)  # √d_k with d_k = 64
    raw = L.define("a_raw", ops.SoftmaxRows(Sr))
    scaled = L.define("s/√64", Sr / ops.as_node(scale))
    a = L.define("a_scaled", ops.SoftmaxRows(scaled))
    s.given(L.handle("s"), what="the two scores", at="two scores")
    two = "For two scores"  # the line that prints the scores, their softmax, √64 and the scaled softmax
    s.claim(raw, near=two, index=1, what="softmax([0, 8])", at="two scores")
    s.given(scale, what="the divisor √d_k, d_k = 64", at="two scores")
    s.claim("8", scale, what="√64", at="two scores")
    s.claim("[0,1]", scaled, what="scores divided by √64", at="two scores")
    s.claim(a, near=two, index=5, what="softmax([0, 1])", at="two scores")
    J_raw = grads_cf.softmax_jacobian(L.value("a_raw"))
    J_scaled = grads_cf.softmax_jacobian(L.value("a_scaled"))
    s.prove("the second distribution has more room for score changes to alter its weights", lambda: (
        sp.N(J_scaled[0, 0] - J_raw[0, 0], 30) > 0,
        f"∂a_0/∂s_0 = a_0(1 − a_0): {sp.N(J_raw[0, 0], 6)} raw, {sp.N(J_scaled[0, 0], 6)} scaled"),
        at="two scores", near="The second distribution has more room")


@derivation.section("§3.2 The full matrix operation")
def full_matrix(s):
    L = Ledger("symbolic scores, T = 3")
    s.use(L)
    Sc = L.input("S", shape=(3, 3))
    A = L.define("A", ops.SoftmaxRows(Sc))
    s.prove("every row sums to one", properties.rows_sum_to_one(L, A).check, at="rows are queries",
            near="Every row sums to one")
    Av = L.expand("A")
    point = {e: sp.Integer(i % 4) for i, e in enumerate(L.entry_symbols("S"))}
    col = sum(Av.col(0)).xreplace(point)
    s.prove("columns generally do not sum to one", lambda: (sp.N(col - 1, 30) != 0,
                                                           f"column 0 sums to {sp.N(col, 8)} at S = (0 1 2; 3 0 1; 2 3 0)"),
            at="columns are keys", near="columns generally do not")
    Lb = Ledger("a batch of two sequences")
    s.use(Lb)
    Xs = [Lb.input(f"X^{{[{b}]}}", shape=(3, 2)) for b in range(2)]
    items = blocks.batched_self_attention(Lb, Xs, Lb.parameter("W_QKV", shape=(2, 6)), Lb.parameter("W_O", shape=(2, 2)),
                                          n_heads=1, orientation="in_out")
    other = set(Lb.entry_symbols("X^{[1]}"))
    A0 = Lb.expand(items[0].heads[0].A.name)
    s.prove("each batch item has its own attention matrix", lambda: (
        not (set().union(*(e.free_symbols for e in A0)) & other), "A^{[0]} does not involve X^{[1]}"),
        at="batching", near="Each batch item has its own attention matrix")


def _count(L) -> int:
    return sum(int(np.prod(it.shape)) if it.shape else 1 for it in L.leaves if it.kind == "parameter")


@derivation.section("§4 Multiple heads: separate routing decisions")
def heads(s):
    D = 8
    counts = {}
    for H in (1, 2, 4, 8):
        L = Ledger(f"D = 8, H = {H}, no biases")
        X = L.input("X", shape=(3, D))
        W = L.parameter("W_QKV", shape=(D, 3 * D))
        r = blocks.fused_self_attention(L, X, W, L.parameter("W_O", shape=(D, D)), n_heads=H, orientation="in_out")
        counts[H] = (L, r)
    L, r = counts[2]
    s.use(L)
    s.given(sp.Integer(L.shape("X")[1]), what="D, the model width", at="D = 8, H = 2")
    s.given(sp.Integer(len(r.qkv.heads)), what="H, the number of heads", at="D = 8, H = 2")
    s.claim("4", sp.Integer(r.qkv.d_k), what="features per head, d_h = D/H", at="D = 8, H = 2")
    s.claim_shape("T×D", r.concat, dims={"T": 3, "D": D}, what="concatenated heads", at="D = 8, H = 2")
    s.claim("3D^2", sp.Integer(int(np.prod(L.shape("W_QKV")))), names={"D": sp.Integer(D)}, what="Q, K, V projections",
            at="D = 8, H = 2")
    s.claim("192", sp.Integer(int(np.prod(L.shape("W_QKV")))), what="Q, K, V projection parameters", at="D = 8, H = 2")
    s.claim("D^2", sp.Integer(int(np.prod(L.shape("W_O")))), names={"D": sp.Integer(D)}, what="W_O", at="D = 8, H = 2")
    s.claim("64", sp.Integer(int(np.prod(L.shape("W_O")))), what="W_O parameters", at="D = 8, H = 2")
    s.claim("256", sp.Integer(_count(L)), what="total parameters", at="D = 8, H = 2")
    s.prove("changing the head count at fixed D changes the head width but not the parameter count", lambda: (
        all(_count(Lh) == 256 for Lh, _ in counts.values())
        and [rh.qkv.d_k for _, rh in counts.values()] == [8, 4, 2, 1],
        "H = 1, 2, 4, 8: d_h = 8, 4, 2, 1; 256 parameters each"), near="Changing the head count while holding")
    Lt = Ledger("two heads with their own projections, symbolic X, T = 3, D = 2")
    Xt = Lt.input("X", shape=(3, 2))
    own = [tuple(Lt.parameter(f"W_{n}^({i})", shape=(2, 1) if n != "V" else (2, 2)) for n in "QKV") for i in (1, 2)]
    two = blocks.multi_head(Lt, Xt, own, Lt.parameter("W_O", shape=(4, 2)), orientation="in_out")
    t = 2  # one query position, the last
    mixes = [Lt.expand(h.A.name).row(t) for h in two.heads]
    answers = [Lt.expand(h.O.name).row(t) for h in two.heads]
    s.prove("two heads retrieve two different mixtures at the same position", lambda: (
        not vanishes(mixes[0] - mixes[1]) and not vanishes(answers[0] - answers[1]),
        "at the last position the two heads' weights, and their outputs, differ for symbolic X and projections"),
        near="retrieve two different mixtures at the same position")


@derivation.section("§4.1 Two heads answer the same query differently")
def two_heads(s):
    s.note("The handout gives the two heads' weights but not their scores: any scores log a_j + c give these weights "
           "(c a constant per head), so the scores are checked only up to that constant and the outputs from the "
           "weights.")
    L = Ledger("two heads on one query, values of the retrieval")
    s.use(L)
    V = L.input("V", [[2, 0], [0, 2], [4, 4]])
    sums = "For head 1, the sum is"  # each head's sum: "a_0 v_0 + a_1 v_1 + a_2 v_2 = answer", head 1 then head 2
    weights = [[s.page.printed(near=sums, index=8 * h + 1 + 2 * j) for j in range(3)] for h in range(2)]
    A1, A2 = (L.input(f"a^({h + 1})", [w]) for h, w in enumerate(weights))
    at = "values of §2.1"
    for j in range(3):
        s.given(V[j, :], what=f"v_{j}", at=at)
    s.differ("the two heads route differently: their weights on the positions differ", A1, A2, by="0.5", at=at,
             near="their routing differs")
    # the values each head's sum multiplies, as that sum prints them
    in_sums = [L.input(f"V^(sum{h + 1})", [[*s.page.value(near=sums, index=8 * h + 2 + 2 * j)] for j in range(3)])
               for h in range(2)]
    s.agree("both heads' sums multiply the same values, the retrieval's: their value projections agree", in_sums,
            [V, V], at=at, near="value projections produce the same values")
    O1 = L.define("y^(1)", A1 @ V)
    O2 = L.define("y^(2)", A2 @ V)
    joined = ops.Concat([O1, O2], axis=1)
    cat = L.define("y_cat", joined)
    W_O = L.parameter("W_O", sp.eye(4))
    out = L.define("MHA", cat @ W_O)
    avg = L.define("mean", (O1 + O2) / 2)
    answers = [s.page.printed(near=sums, index=8 * h + 7) for h in range(2)]
    for h, (A, O, w) in enumerate(((A1, O1, weights[0]), (A2, O2, weights[1])), start=1):
        for j in range(3):  # each head's sum prints its weights and the three values again, then the sum
            s.given(A[0, j], what=f"head {h}'s weight on position {j}", at=f"head {h}'s sum")
            s.given(V[j, :], what=f"v_{j} in head {h}'s sum", at=f"head {h}'s sum")
        s.claim(answers[h - 1], O, what=f"head {h}: " + " + ".join(f"{a} v_{j}" for j, a in enumerate(w)))
    joined_printed = f"[{answers[0][1:-1]} | {answers[1][1:-1]}]"  # the page's [2,0.6\;|\;0.6,2]: both answers
    s.claim(joined_printed, cat, what="concatenation", at="concatenation")
    s.agree("after concatenation each head's answer is still there on its own columns", [cat[:, :2], cat[:, 2:]],
            [O1, O2], at="concatenation", near="separately available")
    s.claim("2", sp.Integer(len(joined.children)), what="H, the heads whose outputs are joined", at="H = 2")
    s.claim("2", sp.Integer(O1.shape[1]), what="d_h, the width of each head's output", at="d_h = 2")
    s.claim("4", sp.Integer(cat.shape[1]), what="D = H·d_h with H = 2, d_h = 2", at="D = 4")
    s.claim(joined_printed, out, what="W_O = I_4 preserves the four features", at="concatenation")
    s.claim_shape(r"4\times4", W_O, what="a learned map that can mix the four features")
    s.claim(avg, near="Averaging the two answers", index=-1, what="averaging the two answers")
    Ls = Ledger("the heads swapped")
    cat_s = Ls.define("y_cat_swapped", ops.Concat([Ls.input(n, L.value(n)) for n in ("y^(2)", "y^(1)")], axis=1))
    s.prove("concatenation is not averaging: swapping the heads changes the concatenation, not the average", lambda: (
        Ls.value(cat_s.name) != L.value(cat.name), "the average is the same for both orders"),
        near="Concatenation is not averaging")
    a1, a2 = L.value("a^(1)"), L.value("a^(2)")
    s.prove("head 1 emphasizes position 0; head 2 emphasizes position 1", lambda: (
        max(range(3), key=lambda j: a1[j]) == 0 and max(range(3), key=lambda j: a2[j]) == 1, "argmax of each row"))
    Lc = Ledger("scores consistent with the weights")
    s.use(Lc)
    c = Lc.input("c")
    sc = Lc.define("s^(1)", Lc.input("ln_a^(1)", a1.applyfunc(sp.log)) + c)
    w = Lc.define("softmax(s^(1))", ops.SoftmaxRows(sc))
    s.prove("scores log a_j + c reproduce head 1's weights for every constant c", lambda: (
        vanishes(Lc.expand(w.name, values=True) - a1), "softmax(log a + c) = a"))
    Lp = Ledger("finite unmasked scores")
    s.use(Lp)
    wp = Lp.define("a", ops.SoftmaxRows(Lp.input("s", shape=(1, 3))))
    s.prove("finite unmasked softmax scores give positive weights, so position 2 is still read", lambda: (
        all(e.is_positive for e in Lp.expand(wp.name)), "e^{s_j}/Σ_k e^{s_k} > 0 for real s"),
        near="finite unmasked softmax scores give positive weights")


@derivation.section("§4.2 Fused projection is the same algebra")
def fused(s):
    B, H, T, d_h = 2, 2, 3, 2
    D = H * d_h
    L = Ledger("fused W_QKV, B = 2, H = 2, T = 3, d_h = 2")
    s.use(L)
    Xs = [L.input(f"X^{{[{b}]}}", shape=(T, D)) for b in range(B)]
    W = L.parameter("W_QKV", shape=(D, 3 * D))
    items = blocks.batched_self_attention(L, Xs, W, L.parameter("W_O", shape=(D, D)), n_heads=H,
                                          orientation="in_out")
    s.claim_shape("D×3D", W, dims={"D": D}, what="W_QKV = [W_Q W_K W_V]")
    Xsym, Wsym = L.entry_symbols("X^{[0]}"), L.entry_symbols("W_QKV")
    parts = [L.expand(items[0].qkv.Q.name), L.expand(items[0].qkv.K.name), L.expand(items[0].qkv.V.name)]
    s.identity("one product X W_QKV returns the three adjacent groups X W_Q, X W_K, X W_V",
               *[parts[g] - Xsym * Wsym[:, g * D:(g + 1) * D] for g in range(3)], at="split")
    s.prove("the split does not force Q = K = V", lambda: (parts[0] != parts[1] and parts[1] != parts[2], "distinct"),
            at="split")
    labels = np.arange(B * T * 3 * D).reshape(B, T, 3 * D)
    q = labels[:, :, :D].reshape(B, T, H, d_h).transpose(0, 2, 1, 3)  # [B, H, T, d_h]
    Ll = Ledger("column labels through the split")
    lab = Ll.parameter("W", sp.Matrix(labels[0].tolist()))
    qkv = blocks.split_qkv(Ll, Ll.input("I", sp.eye(T)), lab, n_heads=H, orientation="in_out")
    s.prove("reshaping to [B,H,T,d_h] gives head i the i-th block of d_h adjacent columns", lambda: (
        all(np.array_equal(np.array(Ll.value(qkv.heads[i][0].name).tolist(), dtype=np.int64), q[0, i])
            for i in range(H)), "labels of Q's columns through reshape and transpose"), at="split")
    weights = np.empty((B, H), dtype=object)
    for b, it in enumerate(items):
        for i, hd in enumerate(it.heads):
            weights[b, i] = hd.A.shape
    shape = (B, H) + weights[0, 0]
    s.prove("attention weights now have shape [B,H,T,T]", lambda: (shape == (B, H, T, T), f"{shape}"))
    mults = sum(hd.Q.shape[0] * hd.K.shape[0] * hd.Q.shape[1] + hd.A.shape[0] * hd.A.shape[1] * hd.V.shape[1]
                for it in items for hd in it.heads)
    s.prove("score/value arithmetic is proportional to B T² D at fixed width", lambda: (
        mults == 2 * B * T**2 * D, f"{mults} multiplications = 2·B·T²·D"), near="stays proportional to $BT^2D$")
    entries = sum(hd.A.shape[0] * hd.A.shape[1] for it in items for hd in it.heads)
    s.prove("storing all heads' weights takes B H T² entries", lambda: (entries == B * H * T**2,
                                                                          f"{entries} = {B}·{H}·{T}²"),
            near="weights takes $BHT^2$ entries")
    L1 = Ledger("one head of the same width D = 4, B = 2, T = 3")
    one = blocks.batched_self_attention(L1, [L1.input(f"X^{{[{b}]}}", shape=(T, D)) for b in range(B)],
                                        L1.parameter("W_QKV", shape=(D, 3 * D)), L1.parameter("W_O", shape=(D, D)),
                                        n_heads=1, orientation="in_out")
    mults_1 = sum(hd.Q.shape[0] * hd.K.shape[0] * hd.Q.shape[1] + hd.A.shape[0] * hd.A.shape[1] * hd.V.shape[1]
                  for it in one for hd in it.heads)
    entries_1 = sum(hd.A.shape[0] * hd.A.shape[1] for it in one for hd in it.heads)
    s.prove("one head and two heads of the same width do the same score and value arithmetic but store "
            "different numbers of weights", lambda: (mults_1 == mults and entries_1 != entries,
                                           f"{mults_1} and {mults} multiplications; {entries_1} and {entries} weights"),
            near="Similar arithmetic cost does not imply identical activation memory")


def _block_params(L, d, m, *, tag="(0)"):
    return blocks.BlockParams(
        [(L.parameter(f"W_Q^{tag}", shape=(d, 1)), L.parameter(f"W_K^{tag}", shape=(d, 1)),
          L.parameter(f"W_V^{tag}", shape=(d, d)))], L.parameter(f"W_O^{tag}", shape=(d, d)),
        (L.parameter(f"W_1^{tag}", shape=(d, m)), L.parameter(f"b_1^{tag}", shape=(1, m)),
         L.parameter(f"W_2^{tag}", shape=(m, d)), L.parameter(f"b_2^{tag}", shape=(1, d))),
        (L.parameter(f"gamma_1^{tag}", shape=(1, d)), L.parameter(f"beta_1^{tag}", shape=(1, d))),
        (L.parameter(f"gamma_2^{tag}", shape=(1, d)), L.parameter(f"beta_2^{tag}", shape=(1, d))))


@derivation.section("§5 Build a block: mix positions, then transform features")
def block(s):
    D = 3
    L = Ledger("feed-forward with D_ff = 4D")
    s.use(L)
    X = L.input("X", shape=(4, D))
    W_1 = L.parameter("W_1", shape=(D, 4 * D))
    ff = blocks.mlp(L, X, W_1, L.parameter("b_1", shape=(1, 4 * D)), L.parameter("W_2", shape=(4 * D, D)),
                    L.parameter("b_2", shape=(1, D)), orientation="in_out")
    s.claim("4D", sp.Integer(W_1.shape[1]), names={"D": sp.Integer(D)}, what="D_ff, the width W_1 expands to")
    s.claim_shape("T×D", ff.B, dims={"T": 4, "D": D}, what="back to width D")

    def ffn(Lf, Xf):
        return blocks.mlp(Lf, Xf, Lf.parameter("W_1", shape=(2, 3)), None, Lf.parameter("W_2", shape=(3, 2)),
                          None, orientation="in_out").B

    dep = properties.dependence(ffn, 3, 2)
    s.prove("the FFN itself does not communicate between rows: ∂FF(X)_i/∂x_j = 0 for j ≠ i", lambda: (
        all(dep.zero[i][j] == (i != j) for i in range(3) for j in range(3)), dep.pattern().replace("\n", " / ")))

    def after_attention(Lf, Xf):
        return ffn(Lf, blocks.residual(Lf, "U", Xf, _head(Lf, Xf).O))

    ctx = properties.dependence(after_attention, 3, 2)
    s.prove("position-wise is not context-free: after attention, the FFN's output at one row reads the other rows",
            lambda: (not ctx.zero[0][1] and not ctx.zero[0][2], ctx.pattern().replace("\n", " / ")),
            near="does not mean context-free")
    La = Ledger("feed-forward without a nonlinearity")
    x = La.input("x", shape=(1, 2))
    lin = La.define("FF_lin", (x @ La.parameter("W_1", shape=(2, 3)) + La.parameter("b_1", shape=(1, 3)))
                    @ La.parameter("W_2", shape=(3, 2)) + La.parameter("b_2", shape=(1, 2)))
    xs, W1, b1, W2, b2 = (La.entry_symbols(n) for n in ("x", "W_1", "b_1", "W_2", "b_2"))
    s.identity("a linear-only pair collapses to a single linear map",
               La.expand(lin.name) - (xs * (W1 * W2) + b1 * W2 + b2),
               near="A linear-only pair would collapse to a single linear map")
    Ln = Ledger("feed-forward with ReLU at a point, its negative and zero")
    fr = blocks.mlp(Ln, Ln.input("X", [[1, -2], [-1, 2], [0, 0]]), Ln.parameter("W_1", [[1, 0, 0], [0, 1, 0]]), None,
                    Ln.parameter("W_2", [[1, 0], [0, 1], [0, 0]]), None, orientation="in_out").B
    s.differ("with the nonlinearity between them the pair is no longer one affine map (a point, its negative and zero "
             "do not add up as an affine map's values would)", fr[0, :] + fr[1, :], fr[2, :] * 2, by="0.5",
             near="the intervening nonlinearity matters")


@derivation.section("§5.1 Two arrangements you should recognize")
def arrangements(s):
    s.note("The post-norm and pre-norm formulas are displayed equations missing from the text; they are read as "
           "U = LN(X + MHA(X)), H = LN(U + FFN(U)) and U = X + MHA(LN(X)), H = U + FFN(LN(U)).")
    D, m = 3, 4
    for kind in ("post-norm", "pre-norm"):
        L = Ledger(f"{kind} block, T = 4, D = 3")
        s.use(L)
        X = L.input("X", shape=(4, D))
        p = _block_params(L, D, m)
        blk = (blocks.transformer_block(L, X, p, orientation="in_out", tag="(0)", eps="1e-5", norm="post") if kind == "post-norm"
               else blocks.transformer_block(L, X, p, orientation="in_out", tag="(0)", eps="1e-5", mask=None))
        s.claim_shape("T×D", blk.out, dims={"T": 4, "D": D}, what=f"{kind} output: the residual width stays D")

    def ln(Lf, Xf):
        return blocks.layer_norm(Lf, Xf, eps="1/10", name="LN").out

    dep = properties.dependence(ln, 3, 2)
    s.prove("LayerNorm normalizes across the features of a token, not across positions", lambda: (
        all(dep.zero[i][j] == (i != j) for i in range(3) for j in range(3)), dep.pattern().replace("\n", " / ")),
        near="LayerNorm normalizes across features within a token")
    s.prove("in pre-norm, d(x + g(LN(x)))/dx = I + J_{g∘LN}", grads_cf.prove_residual_jacobian(2, pre_norm=True).check)
    Lq = Ledger("post-norm sublayer y = LN(x + g(x)), d = 2")
    x = Lq.input("x", shape=(1, 2))
    g = Lq.define("g", ops.Map(sp.tanh, x @ Lq.parameter("W", shape=(2, 2))))
    r = Lq.define("r", x + g)
    y = blocks.layer_norm(Lq, r, eps=Lq.input("epsilon"), name="LN").out
    J_yx = reverse_jacobian(Lq, y, x)
    J_yr = reverse_jacobian(Lq, y, r)
    J_rx = reverse_jacobian(Lq, r, x)
    s.prove("in post-norm the sublayer's Jacobian is J_LN (I + J_g): every path passes through the LayerNorm", lambda: (
        vanishes(J_yx - J_yr * J_rx) and vanishes(J_rx - (sp.eye(2) + reverse_jacobian(Lq, g, x))),
        "reverse-mode Jacobians, exactly"))


@derivation.section("§6 Depth, positions, and a vocabulary head")
def depth(s):
    T, D, Vocab = 3, 2, 5
    L = Ledger("two pre-norm blocks and a tied vocabulary head")
    s.use(L)
    E = L.parameter("E", shape=(Vocab, D), note="token embedding table")
    X = L.define("X", ops.TakeRows(E, [4, 0, 2], label="w"))
    H = X
    for ell in range(2):
        H = blocks.transformer_block(L, H, _block_params(L, D, 4, tag=f"({ell})"), orientation="in_out", tag=f"({ell})",
                                 eps="1e-5", mask="causal").out
    Z = L.define("Z", H @ E.T, note="tied logits h_i Eᵀ")
    s.claim_shape("T×D", H, dims={"T": T, "D": D}, what="after L blocks, per sequence of the batch")
    s.claim_shape("T×Vocab", Z, dims={"T": T, "Vocab": Vocab}, what="vocabulary logits")
    s.claim_shape("Vocab×D", E, dims={"Vocab": Vocab, "D": D}, what="E")
    Lt = Ledger("tied logits of one row")
    h = Lt.input("h", shape=(1, D))
    Et = Lt.parameter("E", shape=(Vocab, D))
    zt = Lt.define("z", h @ Et.T)
    hs, Es = Lt.entry_symbols("h"), Lt.entry_symbols("E")
    s.identity("with tied embeddings the logit of token w is h_i · E[w]",
               *[Lt.expand(zt.name)[0, w] - (hs * Es.row(w).T)[0, 0] for w in range(Vocab)])


def _head(L, X, d_k=1):
    D = X.shape[1]
    return blocks.attention_head(L, X, L.parameter("W_Q", shape=(D, d_k)), L.parameter("W_K", shape=(D, d_k)),
                                 L.parameter("W_V", shape=(D, D)), orientation="in_out")


@derivation.section("§6.1 A precise statement about order")
def order(s):
    s.note("The sinusoidal scheme is not built here (no frequencies are printed in this handout); the statements "
           "about positions are checked with position rows given as exact inputs.")
    s.prove("unmasked self-attention without positions is permutation equivariant: A(ΠX) = Π A(X) Πᵀ",
            properties.permutation_equivariance(lambda L, X: _head(L, X).A, 3, 2, [2, 1, 0], kind="pairs").check)
    s.prove("swapping rows 0 and 2 swaps their contextual outputs",
            properties.permutation_equivariance(lambda L, X: _head(L, X).O, 3, 2, [2, 1, 0]).check)
    s.prove("reordering the input rows reorders the output rows the same way: O(ΠX) = Π O(X) for a cyclic Π",
            properties.permutation_equivariance(lambda L, X: _head(L, X).O, 3, 2, [1, 2, 0]).check,
            near="reorders output rows the same way")

    def block(L, X):
        p = blocks.BlockParams([(L.parameter("W_Q", [[1], [-2]]), L.parameter("W_K", [["1/2"], [1]]),
                                 L.parameter("W_V", [[1, 2], [0, -1]]))], L.parameter("W_O", [[1, "1/3"], [2, 1]]),
                               (L.parameter("W_1", [[1, -1, 2], ["1/2", 1, -1]]), None,
                                L.parameter("W_2", [[1, 0], [-1, 2], ["1/4", 1]]), None))
        return blocks.transformer_block(L, X, p, orientation="in_out", tag="(0)", eps="1/10", mask=None).out

    s.prove("shared FFNs and token-wise normalization preserve equivariance (a whole unmasked block)",
            properties.permutation_equivariance(block, 3, 2, [2, 1, 0]).check,
            near="Shared FFNs and token-wise normalization preserve this property")
    Lm = Ledger("outputs move")
    Xm = Lm.input("X", [[1, 0], [0, 1], [1, 1]])
    Pm = ops.Const(properties.permutation_matrix([2, 1, 0]), label="Π")
    o1 = _head(Lm, Xm).O
    Lm2 = Ledger("outputs move, permuted input")
    o2 = _head(Lm2, Lm2.define("ΠX", Pm @ Lm2.input("X", [[1, 0], [0, 1], [1, 1]]))).O
    A1, A2 = Lm.expand(o1.name, values=True), Lm2.expand(o2.name, values=True)
    s.prove("it is not invariant: the outputs move with the rows", lambda: (
        not vanishes(A2 - A1), "f(ΠX) − f(X) ≠ 0 for symbolic weights at X = (1 0; 0 1; 1 1)"),
        near="It is not invariant: outputs do move")

    def with_positions(L, X):
        P = L.input("P", [[0, 0], [0, "1/2"], ["1/2", "1/2"]], note="position rows p_i")
        return _head(L, L.define("X+P", X + P)).O

    broken = properties.permutation_equivariance(with_positions, 3, 2, [2, 1, 0])
    s.prove("adding position vectors breaks the equivariance (a nonzero entry of f(ΠX) − Π f(X))",
            lambda: (not broken, broken.detail))
    Lp = Ledger("one token at two positions")
    s.use(Lp)
    Ep = Lp.parameter("E", shape=(3, 2))
    Pp = Lp.input("P", [[0, 0], [0, "1/2"], ["1/2", "1/2"]])
    Xp = Lp.define("X", ops.TakeRows(Ep, [0, 0, 1], label="w") + Pp)
    xv = Lp.expand(Xp.name, values=True)
    s.prove("the same token at two positions now starts with different vectors", lambda: (
        xv.row(0) != xv.row(1), f"x_0 − x_1 = {list(xv.row(0) - xv.row(1))}"),
        near="The same token at two positions now starts with different vectors")
    Ll = Ledger("learned absolute positions")
    s.claim_shape("T_max×D", Ll.parameter("P", shape=(16, 4)), dims={"T_max": 16, "D": 4},
                  what="learned absolute embeddings: T_max·D trainable parameters")
    Lsin = Ledger("sinusoidal positions, T_max = 16, D = 4")
    blocks.positions(Lsin, 16, 4)
    trainable = [it.name for it in Lsin.leaves if it.kind == "parameter"]
    s.prove("fixed sinusoidal encodings add no trainable parameters", lambda: (
        not trainable, f"parameters of the sinusoidal rows: {trainable or 'none'}"),
        near="fixed sinusoidal encodings do not")
    # Pair k of features holds sin(ω_k t) and cos(ω_k t): read ω_k from row t = 1, check every row, compare pairs.
    Psin = Lsin.value("P")
    omega = [sp.atan2(Psin[1, 2 * k], Psin[1, 2 * k + 1]) for k in range(2)]
    fits = all(abs(sp.N(Psin[t, 2 * k] - sp.sin(omega[k] * t), 30)) < sp.Float("1e-25")
               and abs(sp.N(Psin[t, 2 * k + 1] - sp.cos(omega[k] * t), 30)) < sp.Float("1e-25")
               for t in range(16) for k in range(2))
    s.prove("each even/odd feature pair is a sine and a cosine of one frequency, and the pairs' frequencies differ",
            lambda: (fits and abs(sp.N(omega[0] - omega[1], 30)) > sp.Float("0.1"),
                     f"ω_0 = {sp.N(omega[0], 6)}, ω_1 = {sp.N(omega[1], 6)} (T_max = 16, D = 4)"),
            near="use sine and cosine at different frequencies")


# ---------------------------------------------------------------------------
# §7.4 model, reused by §7.1
# ---------------------------------------------------------------------------

VOCAB = ["A", "B", "C"]


def trace_ledger(tokens=("A", "B", "C"), *, p_extra=None, targets=("B", "C", "A")) -> tuple[Ledger, dict]:
    """§7.4: E, positions, one causal head (d_k = 1, d_v = 2), residual, ReLU FFN, untied vocabulary head, loss."""
    T = len(tokens)
    L = Ledger(f"{' '.join(tokens)} → {' '.join(targets)}" if targets else ' '.join(tokens))
    E = L.parameter("E", [[1, 0], [0, "1/2"], ["1/2", "1/2"]], note="rows E[A], E[B], E[C]")
    rows = [[0, 0], [0, "1/2"], ["1/2", "1/2"]]
    P = L.input("p", rows[:T], note="position rows p_0, p_1, p_2") if T <= 3 else None
    if T > 3:  # p_3 is not given: keep it symbolic
        P = L.define("p", ops.Concat([L.input("p_{0:3}", rows), L.input("p_3", shape=(1, 2))], axis=0))
    ids = [VOCAB.index(t) for t in tokens]
    Erows = L.define("E_w", ops.TakeRows(E, ids, label="w"), note="rows E[w_i]")
    X = L.define("X", Erows + P)
    W_Q = L.parameter("W_Q", [[1], [0]])
    W_K = L.parameter("W_K", [[LOG2], [0]])
    W_V = L.parameter("W_V", sp.eye(2))
    head = blocks.attention_head(L, X, W_Q, W_K, W_V, orientation="in_out", mask="causal")
    U = blocks.residual(L, "U", X, head.O)
    W_1 = L.parameter("W_1", sp.eye(2))
    W_2 = L.parameter("W_2", sp.eye(2) / 2)
    F = L.define("FFN", ops.Map(relu, U @ W_1) @ W_2)
    H = blocks.residual(L, "H", U, F)
    W_vocab = L.parameter("W_vocab", [[1, 0, -1], [0, 1, -1]])
    Z = L.define("Z", H @ W_vocab, note="logits over A, B, C")
    out = {"E[w]": Erows, "X": X, "head": head, "U": U, "FFN": F, "H": H, "Z": Z}
    if targets is not None:
        out["P"] = blocks.probabilities(L, Z)
        out["ce"] = blocks.cross_entropy(L, Z, [VOCAB.index(t) for t in targets], name="loss")
    return L, out


@derivation.section("§7.1 Generation appends one token at a time")
def generation(s):
    s.note("Position p_3 is not given; the four-token check keeps it symbolic, so it holds for every p_3.")
    L3, r3 = trace_ledger()
    L4, r4 = trace_ledger(("A", "B", "C", "A"), targets=None)
    s.use(L3, L4)
    H3, H4 = L3.value(r3["H"].name), L4.expand(r4["H"].name, values=True)
    s.prove("appending a token does not change earlier positions' representations (causal model)", lambda: (
        vanishes(H4[:3, :] - H3), "rows 0–2 of H for A B C A equal H for A B C, for any p_3"),
        near="do not change merely because a later token was appended")
    Z3, Z4 = L3.value(r3["Z"].name), L4.expand(r4["Z"].name, values=True)
    Pv = L3.value(r3["P"].name)
    greedy = [max(range(3), key=lambda j: sp.N(Pv[i, j], 30)) for i in range(3)]
    largest = [max(range(3), key=lambda j: sp.N(Z3[i, j], 30)) for i in range(3)]
    smallest = [min(range(3), key=lambda j: sp.N(Z3[i, j], 30)) for i in range(3)]
    s.prove("greedy decoding selects the largest logit: the most probable token is the one of largest logit",
            lambda: (greedy == largest and all(a != b for a, b in zip(largest, smallest)),
                     f"A B C: most probable {[VOCAB[j] for j in greedy]}, largest logit "
                     f"{[VOCAB[j] for j in largest]}, smallest {[VOCAB[j] for j in smallest]}"),
            near="select the largest logit for greedy decoding")
    s.prove("extending the prompt changes the next-position prediction", lambda: (
        Z4.row(3).free_symbols != set() or Z4.row(3) != Z3.row(2), "row 3's logits depend on the new token"),
        near="Extending the prompt changes the next-position prediction")


@derivation.section("§7.2 Training supplies all gold prefixes together")
def teacher_forcing(s):
    s.note("The input/target table of this section is not in the text; the shift it shows is checked on the tokens.")
    stream = ["the", "cat", "sat", "on", "the", "mat", "<eos>"]
    inputs, targets = stream[:-1], stream[1:]
    s.prove("output at input position i predicts the token at i + 1", lambda: (
        all(targets[i] == stream[i + 1] for i in range(len(inputs))) and len(inputs) == 6,
        f"inputs {inputs}; targets {targets}"), near="predicts the token at $i+1$")
    s.prove("the target at i is the input at i + 1, outside the context x_0 … x_i", lambda: (
        all(targets[i] == inputs[i + 1] for i in range(len(inputs) - 1)), "targets[i] == inputs[i + 1]"),
        near="The target at $i+1$ is not")


@derivation.section("§7.3 Why shifting the targets is insufficient")
def shifting(s):
    T, D = 4, 2

    def layer(L, X, tag, masked):
        h = blocks.attention_head(L, X, L.parameter(f"W_Q^{{{tag}}}", shape=(D, 1)),
                                  L.parameter(f"W_K^{{{tag}}}", shape=(D, 1)), L.parameter(f"W_V^{{{tag}}}", shape=(D, D)),
                                  orientation="in_out", mask="causal" if masked else None, tag=tag)
        return blocks.residual(L, f"H^{{{tag}}}", X, h.O)

    def stack(masks):
        def build(L, X):
            H = X
            for i, m in enumerate(masks):
                H = layer(L, H, f"({i})", m)
            return H
        return build

    open_dep = properties.dependence(stack([False]), T, D)
    s.prove("with unrestricted attention the query at 'the' reads the key and value of 'cat' (∂o_0/∂x_1 ≠ 0)",
            lambda: (not open_dep.zero[0][1], f"∂o_{{0,{open_dep.witness[(0, 1)][0]}}}/∂x_{{1,"
                     f"{open_dep.witness[(0, 1)][1]}}} = {open_dep.witness[(0, 1)][2]}"))
    s.prove("the same problem recurs at every position except the last", lambda: (
        all(not open_dep.zero[i][i + 1] for i in range(T - 1)), "∂o_i/∂x_{i+1} ≠ 0 for i < T − 1; "
                                                                 "the last position has no later input"),
            near="The same problem recurs at every position except the last")
    s.prove("a causal mask in every block: every output at i depends only on inputs j ≤ i",
            properties.causal_independence(stack([True, True]), T, D).check)
    s.prove("masking only the final block is insufficient: an earlier block copies the future into an allowed row",
            properties.leakage(stack([False, True]), T, D).check, near="masking only the final block is insufficient")


@derivation.section("§7.4 One sequence, from embeddings to loss")
def trace(s):
    factor = s.page.printed("H")  # the page's H = kU
    s.note("The matrices X, S, A, U, H and the logits are displayed tables missing from the text; they are derived "
           "and shown, and the numbers the text prints are checked. The FFN's weights are not printed: any "
           f"ReLU(U W_1) W_2 with W_1 W_2 = ½ I gives the stated H = {factor} U when U ≥ 0; we take W_1 = I, "
           "W_2 = ½ I.")
    L, r = trace_ledger()
    s.use(L)
    head, Ew, X = r["head"], r["E[w]"], r["X"]
    stream = ["A", "B", "C", "A"]
    s.prove("the three input rows are A B C at positions 0, 1, 2; their targets are B C A", lambda: (
        stream[:-1] == ["A", "B", "C"] and stream[1:] == ["B", "C", "A"], "inputs and targets of A B C A"))
    s.claim("2", sp.Integer(X.shape[1]), what="D, the width of the embedding rows", at="D = 2")
    s.claim("1", sp.Integer(head.Q.shape[1]), what="d_k, the width of Q = X W_Q", at="d_k = 1")
    s.claim("2", sp.Integer(head.V.shape[1]), what="d_v, the width of V = X W_V", at="d_v = 2")
    s.claim("[1,0]", Ew[0, :], what="E[A]", at="1 · embed")
    s.claim("[0,1/2]", Ew[1, :], what="E[B]", at="1 · embed")
    s.claim("[1/2,1/2]", Ew[2, :], what="E[C]", at="1 · embed")
    for i in range(3):
        s.given(L.handle("p")[i, :], what=f"p_{i}", at="1 · embed")
    s.given(L.handle("W_Q").T, what="W_Q, printed transposed", at="2 · project")
    s.given(L.handle("W_K").T, what="W_K, printed transposed", at="2 · project")
    s.show_table("X = E[w] + P", X, rows=["A@0", "B@1", "C@2"], cols=["0", "1"])
    s.claim_shape("T×d_k", head.Q, dims={"T": 3, "d_k": 1}, what="Q", at="2 · project")
    s.claim_shape("T×d_v", head.V, dims={"T": 3, "d_v": 2}, what="V", at="2 · project")
    s.claim("[1,0,1]", head.Q.T, what="Q = X W_Q (printed transposed)", at="2 · project")
    s.claim(r"[\log 2,0,\log 2]", head.K.T, what="K = X W_K (printed transposed)", at="2 · project")
    s.identity("V = X", L.value(head.V.name) - L.value(X.name), at="2 · project")
    s.claim("1", sp.Integer(head.Q.shape[1]), what="d_k, restated for the scale", at="2 · project, d_k = 1")
    s.claim("1", sp.sqrt(head.Q.shape[1]), what="the scale √d_k with d_k = 1", at="2 · project")
    # Row i may read keys 0…i: the first and last key the mask allows, as the text prints them
    allowed = head.allowed.tolist()
    s.prove("each row reads a contiguous prefix of the keys", lambda: (
        all(row == [True] * (sum(row)) + [False] * (len(row) - sum(row)) for row in allowed), f"mask {allowed}"),
        at="3 · retrieve")
    for i, row in enumerate(allowed):
        keys = [k for k, a in enumerate(row) if a]
        if i:
            s.claim("0", sp.Integer(keys[0]), what=f"the first key row {i} may read", at=f"3 · retrieve, row {i}")
        s.claim(str(i), sp.Integer(keys[-1]), what=f"the last key row {i} may read", at=f"3 · retrieve, row {i}")
    S, A = L.value(head.S.name), L.value(head.A.name)
    s.prove("raw future scores exist in S but are excluded before normalization", lambda: (
        S[0, 2] == LOG2 and A[0, 2] == 0 and S[1, 2] == 0 and A[1, 2] == 0, f"S[0,2] = {S[0, 2]}, A[0,2] = 0"),
        at="3 · retrieve", near="but are excluded before normalization")
    s.show_table("S", head.S, digits=4)
    s.heatmap("A (causal)", head.A, rows=["A@0", "B@1", "C@2"], cols=["0", "1", "2"], allowed=head.allowed)
    e2 = L.define("e^{S_2}", ops.Map(sp.exp, head.S[2, :]))
    s.claim("[2,1,2]", e2, what="row 2's exponentials", at="3 · retrieve")
    row2 = "Row 2, for example"  # its exponentials, then a_20 v_0 + a_21 v_1 + a_22 v_2 = its retrieval
    for j in range(3):
        s.claim(head.A[2, j], near=row2, index=2 + 2 * j, what=f"row 2's weight on key {j}", at=f"3 · retrieve, a_2{j}")
        s.claim(head.V[j, :], near=row2, index=3 + 2 * j, what=f"v_{j}", at="3 · retrieve")
    s.claim(head.O[2, :], near=row2, index=-1, what="row 2 retrieves ⅖v_0 + ⅕v_1 + ⅖v_2", at="3 · retrieve")
    U, H = L.value(r["U"].name), L.value(r["H"].name)
    s.prove("every entry of U is nonnegative, so ReLU(U) = U", lambda: (
        all(e >= 0 for e in U), f"U = {U.tolist()}"), at="4 · residual and FFN")
    s.claim(factor, H[0, 0] / U[0, 0], what=f"the factor H = {factor}U, at entry (0, 0)", at="4 · residual and FFN")
    s.identity(f"the second residual produces H = {factor}U", H - s.page.value("H") * U, at="4 · residual and FFN")
    s.show_table("U", r["U"], digits=4)
    s.show_table("H", r["H"], digits=4)
    Lh = Ledger("logits of a symbolic row")
    hrow = Lh.input("h", shape=(1, 2))
    zrow = Lh.define("z", hrow @ Lh.parameter("W_vocab", [[1, 0, -1], [0, 1, -1]]))
    h0, h1 = Lh.entry_symbols("h")
    s.given(L.handle("W_vocab"), what="the untied head W_vocab", at="5 · logits and loss")
    s.identity("each row (h_0, h_1) gives logits (h_0, h_1, −h_0 − h_1)",
               Lh.expand(zrow.name, values=True) - sp.Matrix([[h0, h1, -h0 - h1]]), at="5 · logits and loss",
               near=r"Each row $[h_0,h_1]$ gives logits $[h_0,h_1,-h_0-h_1]$")
    s.show_table("Z", r["Z"], rows=["A@0", "B@1", "C@2"], cols=VOCAB, digits=4)
    ce, P = r["ce"], r["P"]
    Pv = L.value(P.name)
    for i, c in enumerate([1, 2, 0]):  # the ledger computes ℓ_i as logsumexp(z_i) − z_{i,target}
        s.claim(r"-\log p", ce.per_position[i, 0], names={"p": Pv[i, c]},
                what=f"ℓ_{i} = logsumexp(z_{i}) − z_{{{i},target}} = −log p_{i}({VOCAB[c]})", at="5 · logits and loss")
    s.show_table("ℓ_i (nats)", ce.per_position, rows=["A→B", "B→C", "C→A"], digits=6)
    s.claim(ce.loss, near="The mean loss over the three scored rows", index=0,
            what="mean loss over the three scored rows, nats", at="5 · logits and loss")
    s.keep(ledger=L, parts=r)


@derivation.section("§8 Optional lab: verify attention before building an LM")
def lab(s):
    Lr, retrieval_head, _ = _retrieval()
    s.claim(retrieval_head.O, near="verifies the retrieval answer", index=0, what="the retrieval answer the lab verifies",
            ledger=Lr)
    L, axes = Ledger("a batch of two, T = 3, d_k = 2, d_v = 2"), "§8.1 name the tensor axes"
    s.use(L)
    Q = [L.input(f"Q^{{[{b}]}}", shape=(3, 2)) for b in range(2)]
    K = [L.input(f"K^{{[{b}]}}", shape=(3, 2)) for b in range(2)]
    V = [L.input(f"V^{{[{b}]}}", shape=(3, 2)) for b in range(2)]
    heads_ = [blocks.scaled_dot_product(L, Q[b], K[b], V[b], tag=f"[{b}]") for b in range(2)]
    q = np.array([np.array(L.entry_symbols(f"Q^{{[{b}]}}").tolist(), dtype=object) for b in range(2)])
    k = np.array([np.array(L.entry_symbols(f"K^{{[{b}]}}").tolist(), dtype=object) for b in range(2)])
    scores = np.einsum("bid,bjd->bij", q, k) / sp.sqrt(2)
    s.prove('einsum("bid,bjd->bij", q, k)/√d_k computes each batch item\'s scores Q Kᵀ/√d_k', lambda: (
        all(vanishes(sp.Matrix(scores[b].tolist()) - L.expand(heads_[b].S.name)) for b in range(2)),
        "both items, symbolic"), at=axes)
    last_two = (-2, -1)  # the final two axes, counted from the end whatever the batch rank
    kt = np.swapaxes(k, *last_two)
    s.claim("(-2, -1)", sp.Matrix([last_two]), what="the axes the code swaps for Kᵀ",
            near="scores = q @ k.transpose(-2, -1)")
    s.claim("(-2,-1)", sp.Matrix([last_two]), what="the axes transpose swaps for Kᵀ",
            near="transpose(-2,-1) works for both")
    s.prove("swapping the last two axes transposes only the final two dimensions of a batch of keys", lambda: (
        kt.shape == (2, 2, 3) and all((kt[b] == k[b].T).all() for b in range(2)), f"{k.shape} → {kt.shape}"))
    w = np.array([np.array(L.expand(heads_[b].A.name).tolist(), dtype=object) for b in range(2)])
    v = np.array([np.array(L.entry_symbols(f"V^{{[{b}]}}").tolist(), dtype=object) for b in range(2)])
    y = np.einsum("bij,bje->bie", w, v)
    s.prove('einsum("bij,bje->bie", weights, v) computes each item\'s A V', lambda: (
        all(vanishes(sp.Matrix(y[b].tolist()) - L.expand(heads_[b].O.name)) for b in range(2)), "both items"),
        at=axes)


@derivation.section("§9 Implementation readings")
def readings(s):
    head_axis, pre_norm = "§9.1 head axis", "§9.2 pre-norm"
    gated, rms_at, separate = (f"§9.3 {w}" for w in ("gated FFN", "RMSNorm", "separate heads"))  # workshop
    B, T, C, nh = 2, 3, 6, 2
    hs = C // nh
    # the excerpt names hs but prints no value for it (its "three families" are q, k and v)
    s.claim("3", sp.Integer(hs), what="hs = C // nh at C = 6, nh = 2", at=head_axis, in_text=False)
    labels = np.arange(B * T * 3 * C).reshape(B, T, 3 * C)
    q, k, v = labels[..., :C], labels[..., C:2 * C], labels[..., 2 * C:]
    Ll = Ledger("column labels through the fused split")
    qkv = blocks.split_qkv(Ll, Ll.input("I", sp.eye(T)), Ll.parameter("c_attn", sp.Matrix(labels[1].tolist())),
                           n_heads=nh, orientation="in_out")
    ok = True
    perm = (0, 2, 1, 3)  # (B, T, nh, hs) → (B, nh, T, hs)
    for g, arr in enumerate((q, k, v)):
        heads_t = arr.reshape(B, T, nh, hs).transpose(*perm)  # (B, nh, T, hs)
        for i in range(nh):
            ok &= np.array_equal(np.array(Ll.value(qkv.heads[i][g].name).tolist(), dtype=np.int64), heads_t[1, i])
    swapped = sp.Matrix([[i for i, p in enumerate(perm) if p != i]])
    for g in "kqv":
        s.claim("(1, 2)", swapped, what=f"the axes {g}.view(…).transpose swaps to put the head axis second",
                near=f"{g} = {g}.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)")
    s.prove("the view to (B, T, nh, hs) and the transpose give head i the i-th block of hs adjacent features of "
            "q, k, v",
            lambda: (bool(ok), "labels of item 1 through split and reshape"), at=head_axis)
    L = Ledger("nanoGPT MLP, n_embd = 3")
    s.use(L)
    X = L.input("x", shape=(4, 3))
    from symseq.functions import gelu

    ff = blocks.mlp(L, X, L.parameter("c_fc", shape=(3, 12)), None, L.parameter("c_proj", shape=(12, 3)),
                    None, orientation="in_out", activation=gelu, names="mlp")
    s.claim("4 * config.n_embd", sp.Integer(ff.J.shape[1]), names={"config.n_embd": sp.Integer(3)},
            what="width of the MLP's expansion, before GELU", at=pre_norm)
    s.claim_shape("T×D", ff.B, dims={"T": 4, "D": 3}, what="contraction back to D", at=pre_norm)
    Lg = Ledger("gated FFN, D = 3, D_ff = 5")
    s.use(Lg)
    Xg = Lg.input("x", shape=(4, 3))
    g = blocks.gated_feed_forward(Lg, Xg, Lg.parameter("W_gate", shape=(3, 5)), Lg.parameter("W_up", shape=(3, 5)),
                                  Lg.parameter("W_down", shape=(5, 3)), orientation="in_out")
    s.claim_shape("T×D_ff", g.gate_pre, dims={"T": 4, "D_ff": 5}, what="gates", at=gated)
    s.claim_shape("T×D_ff", g.up, dims={"T": 4, "D_ff": 5}, what="features", at=gated)
    s.claim_shape("T×D", g.out, dims={"T": 4, "D": 3}, what="the D_ff → D map", at=gated)
    xs = Lg.entry_symbols("x")
    Wg, Wu = Lg.entry_symbols("W_gate"), Lg.entry_symbols("W_up")
    silu = lambda z: z / (1 + sp.exp(-z))  # noqa: E731
    want = (xs * Wg).applyfunc(silu).multiply_elementwise(xs * Wu)
    s.identity("features and gates are multiplied elementwise before the D_ff → D map",
               (Lg.expand(g.hidden.name).applyfunc(lambda e: e.rewrite(sp.exp)) - want), at=gated)
    Lr = Ledger("RMSNorm and LayerNorm of a shifted row")
    x = Lr.input("x", shape=(1, 3))
    c = Lr.input("c")
    shifted = Lr.define("x+c", x + c)
    rms = blocks.rms_norm(Lr, x, eps=0, name="RMS")
    rms_c = blocks.rms_norm(Lr, shifted, eps=0, name="RMS_c")
    ln = blocks.layer_norm(Lr, x, eps=0, name="LN")
    ln_c = blocks.layer_norm(Lr, shifted, eps=0, name="LN_c")
    s.identity("RMSNorm rescales by the root-mean-square: its output has mean square 1 (ε = 0)",
               sum(e**2 for e in Lr.expand(rms.out.name)) / 3 - 1, at=rms_at)
    s.identity("LayerNorm subtracts the mean first: adding c to every feature changes nothing",
               Lr.expand(ln_c.out.name) - Lr.expand(ln.out.name), at=rms_at)
    diff = Lr.expand(rms_c.out.name) - Lr.expand(rms.out.name)
    s.prove("RMSNorm does not subtract the mean: adding c to every feature changes its output", lambda: (
        not vanishes(diff), "a nonzero difference at an exact point"), at=rms_at,
        near="rather than subtracting their mean first")
    Lh = Ledger("separately parameterised heads against one fused projection")
    Xh = Lh.input("X", shape=(2, 3))
    Ws = {f"{n}{i}": Lh.parameter(f"W_{n}^({i})", shape=(3, 1)) for n in "QKV" for i in (1, 2)}
    W_O = Lh.parameter("W_O", shape=(2, 3))
    sep = blocks.multi_head(Lh, Xh, [(Ws["Q1"], Ws["K1"], Ws["V1"]), (Ws["Q2"], Ws["K2"], Ws["V2"])], W_O,
                            orientation="in_out", tag="sep")
    fused = Lh.define("W_QKV", ops.Concat([Ws[k] for k in ("Q1", "Q2", "K1", "K2", "V1", "V2")], axis=1))
    fz = blocks.fused_self_attention(Lh, Xh, fused, W_O, n_heads=2, orientation="in_out", tag="fused")
    s.identity("torch.cat([h(x) for h in heads]) equals the fused projection with the heads' weights side by side",
               Lh.expand(sep.out.name) - Lh.expand(fz.out.name), at=separate)
