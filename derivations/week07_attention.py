"""Week 7 — Attention: read the relevant preceding context.

Source: seed handout ``003_b76f00753924d0c1.txt``. The handout has no
numbered sections; the sections here follow its order: the two prompts
A = [you, like] and B = [we, like], the uniform-average baseline, the
projections of "like", the scores and their scaling, the gradient paths, the
√d_k argument, softmax sensitivity and shifts, the axes of the T×T matrix, the
causal mask, weight orientation and the mask buffer, batching, heads and W_O,
the size of the score tensors, and the [B,T,C] interface.

What the handout leaves out: the rows of X for "you" and "we" and every row of
W_Q, W_K, W_V except the second (the one x_like selects) are not printed; the
keys of "you" and "we" appear only through rounded dot products (1.131 and 0,
0 and 0.141). The module takes those keys as printed, checks every claim that
depends on them over the whole interval of keys that round to the printed
digits, and leaves the values of "you" and "we" symbolic.

Conventions read from the handout: rows are positions; Q = X W_Q with W of
shape [C, d_head] (``orientation="in_out"``, as ``x @ w_q``); scores are
divided by √d_k with d_k = 2; the causal mask excludes later positions.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symseq import Derivation, Ledger, blocks, exact, ops
from symseq.derive import attention_grads as grads_cf
from symseq.derive import properties
from symseq.derive import dot_product_variance, vanishes
from symseq.functions import jacobian

derivation = Derivation(
    "week07-attention",
    title="Week 7 — Attention: read the relevant preceding context",
    source="003_b76f00753924d0c1.txt",
    description="two prompts sharing a final token: projections, scores, scaling, masks, heads and sizes",
)

SQRT2 = sp.sqrt(2)
X_LIKE = [0, 1, 0, 0]  # the one-hot input row of "like"
Q_LIKE, V_LIKE = [1, 1], [0, 1]  # second rows of W_Q and W_V, printed as q_like and v_like
K_LIKE = [exact("0.2") * SQRT2, exact("0.2") * SQRT2]
K_YOU = [exact("1.131"), 0]  # printed to three decimals: 1×1.131 + 1×0
K_WE = [0, exact("0.141")]  # printed to three decimals: 1×0 + 1×0.141


@derivation.section("Two prompts with the same final token")
def prompts(s):
    A, B = ["you", "like"], ["we", "like"]
    s.prove("the two prompts end in the same token", lambda: (A[-1] == B[-1] and A[0] != B[0], f"A = {A}, B = {B}"),
            near="Their final token is identical")
    L = Ledger("uniform average of the visible prefix, T = 2")
    s.use(L)
    X = L.input("X", shape=(2, 4))
    zero = L.input("S_0", [[0, 0], [0, 0]], note="equal scores: no query involved")
    Abar = L.define("A_avg", ops.SoftmaxRows(zero, blocks.masks.causal(2)))
    Oavg = L.define("O_avg", Abar @ X)
    s.claim("[0.5,0.5]", Abar[1, :], what="fixed weights at the final position t = 1", at="uniform baseline")
    s.prove("the baseline's weights do not change with the current query", lambda: (
        not L.expand(Abar.name, values=True).free_symbols,
        "A_avg involves no input"), at="uniform baseline",
        near="these reading weights do not change with the current query")
    xs = L.entry_symbols("X")
    s.identity("its output at t = 1 is the plain average of the two rows", L.expand(Oavg.name, values=True).row(1)
               - (xs.row(0) + xs.row(1)) / 2, at="uniform baseline")
    used = L.expand(Oavg.name, values=True).row(1).free_symbols
    LA, _, hA = prompt_ledger(K_YOU, "A")
    LB, _, hB = prompt_ledger(K_WE, "B")
    first = [Lp.value("K").row(0) for Lp in (LA, LB)]
    reads = [Lp.value(h.A.name)[0, 0] for Lp, h in ((LA, hA), (LB, hB))]
    s.prove("the final 'like' of each prompt reads different earlier information: another first key, with weight",
            lambda: (first[0] != first[1] and all(sp.N(a, 30) > 0 for a in reads),
                     f"k_you = {list(first[0])}, k_we = {list(first[1])}; weights on them "
                     f"{[sp.N(a, 6) for a in reads]}"), at="two prompts", near="read different earlier information")
    s.prove("different inputs give the baseline different averages: its final output reads both input rows", lambda: (
        set(xs) <= used, "the final row of O_avg involves every entry of X"), at="uniform baseline",
        near="Different inputs can give different averages")


@derivation.section("Queries, keys and values of 'like'")
def like_rows(s):
    s.note("Only the second rows of W_Q, W_K, W_V are printed (through q_like, k_like, v_like); the other rows and "
           "the rows of X for 'you' and 'we' are not. The selection is proved for arbitrary weights.")
    L = Ledger("x_like times arbitrary 4×2 projections")
    s.use(L)
    x = L.input("x_like", [X_LIKE])
    rows = {}
    for n in ("Q", "K", "V"):
        W = L.parameter(f"W_{n}", shape=(4, 2))
        rows[n] = (L.define(f"{n.lower()}_like", x @ W), L.entry_symbols(f"W_{n}"))
    s.identity("multiplying x_like = [0,1,0,0] by each W selects its second row",
               *[L.expand(r.name, values=True) - W.row(1) for r, W in rows.values()])
    three = [L.expand(r.name, values=True) for r, _ in rows.values()]
    printed = [sp.Matrix([Q_LIKE]), sp.Matrix([K_LIKE]), sp.Matrix([V_LIKE])]
    s.prove("query, key and value of 'like' come from the same x_like through different parameters", lambda: (
        all(not vanishes(three[i] - three[j]) and printed[i] != printed[j] for i, j in ((0, 1), (0, 2), (1, 2))),
        "x_like W_Q, x_like W_K, x_like W_V differ pairwise; so do the printed q_like, k_like, v_like"),
        near="All three come from the same x_t but use different parameters")
    s.given(L.handle("x_like"), what="x_like")
    s.given(sp.Matrix([Q_LIKE]), what="q_like, the second row of W_Q")
    s.given(sp.Matrix([V_LIKE]), what="v_like, the second row of W_V")
    Lk = Ledger("the printed key of 'like'")
    s.use(Lk)
    k = Lk.input("k_like", [K_LIKE])
    s.claim("[0.2√2,0.2√2]", k, what="k_like, exactly")
    s.claim("[0.283,0.283]", k, what="k_like = [0.2√2, 0.2√2]")


def round_to(x, decimals: int):
    """``x`` rounded half up to ``decimals`` places, exactly (the handout's displayed key entries)."""
    scale = sp.Integer(10) ** decimals
    return sp.floor(x * scale + sp.Rational(1, 2)) / scale


def prompt_ledger(first_key, name, *, values: bool = False):
    """The final row of one prompt: q_like = [1,1] against the keys of its two positions, d_k = 2."""
    L = Ledger(f"prompt {name}: the final query against both keys")
    q = L.input("q_like", [Q_LIKE])
    K = L.input("K", [first_key, K_LIKE], note="rows: the first token's key (as printed), k_like")
    V = L.input("V", shape=(2, 2)) if values else L.input("V", [[0, 0], V_LIKE], note="v_you is not printed")
    raw = L.define("qKᵀ", q @ K.T, note="raw scores")
    head = blocks.scaled_dot_product(L, q, K, V, names={"S": "s", "A": "a", "O": "o"})
    return L, raw, head


def final_outputs_gap():
    """o_A − o_B at the final position when both prompts' first value is the same symbolic v = (v_0, v_1): the
    weights of each prompt's final row (keys as printed) times the values (v, v_like)."""
    LA, _, hA = prompt_ledger(K_YOU, "A")
    LB, _, hB = prompt_ledger(K_WE, "B")
    aA, aB = LA.value(hA.A.name), LB.value(hB.A.name)
    v, v_like = sp.Matrix([sp.symbols("v_0 v_1", real=True)]), sp.Matrix([V_LIKE])
    return (aA[0, 0] * v + aA[0, 1] * v_like) - (aB[0, 0] * v + aB[0, 1] * v_like)


@derivation.section("Scores and scaling")
def scores(s):
    s.note("The keys of 'you' and 'we' are taken as printed, [1.131, 0] and [0, 0.141]; the handout computes the "
           "scaled rows from unrounded scores, so the checks below hold for every key that rounds to the printed "
           "digits (the end points of each interval are checked; the scores are monotone in the key).")
    s.note("The written-out sum 1×0.283+1×0.283 uses k_like's entries as displayed: it is checked exactly with "
           "k_like rounded to three decimals, while the score 0.566 is checked against the exact q_like·k_like = 0.4√2.")
    LA, rawA, hA = prompt_ledger(K_YOU, "A")
    LB, rawB, hB = prompt_ledger(K_WE, "B")
    s.use(LA, LB)
    Lq = Ledger("the final query: x_like times W_Q, of which only the second row is printed")
    s.use(Lq)
    q_final = Lq.define("q", Lq.input("x_like", [X_LIKE]) @ Lq.parameter("W_Q", shape=(4, 2)))
    row = dict(zip(Lq.entry_symbols("W_Q").row(1), Q_LIKE))  # the printed second row, q_like
    s.claim("[1,1]", Lq.expand(q_final.name, values=True).xreplace(row), what="the final 'like' query x_like W_Q",
            at="prompt A")
    Lr = Ledger("the displayed products, with k_like rounded to three decimals")
    s.use(Lr)
    k_shown = Lr.input("k_like^{rounded}", [[round_to(e, 3) for e in K_LIKE]])
    shown = Lr.define("q_like·k_like^{rounded}", Lr.input("q_like", [Q_LIKE]) @ k_shown.T)
    s.claim("1×1.131+1×0", rawA[0, 0], what="q_like · k_you written out", at="prompt A")
    s.claim("1.131", rawA[0, 0], what="q_like · k_you", at="prompt A")
    s.claim("1×0.283+1×0.283", shown[0, 0], what="q_like · k_like written out with the displayed entries of k_like",
            at="prompt A")
    s.claim("0.566", rawA[0, 1], what="q_like · k_like = 0.4√2", at="prompt A")
    s.claim("1×0+1×0.141", rawB[0, 0], what="q_like · k_we written out", at="prompt B")
    s.claim("0.141", rawB[0, 0], what="q_like · k_we", at="prompt B")
    s.claim("0.566", rawB[0, 1], what="q_like · k_like", at="prompt B")
    s.agree("the score of the 'like' key is the same in both prompts", rawB[0, 1], rawA[0, 1], at="prompt B",
            near="key remains approximately")
    s.claim("2", sp.Integer(LA.shape("q_like")[1]), what="d_k, the width of q and k", at="scaling",
            near="Here d_k=")
    s.claim("[0.8,0.4]", hA.S, what="final row divided by √d_k", at="prompt A")
    s.claim("[0.1,0.4]", hB.S, what="final row divided by √d_k", at="prompt B")
    s.claim("[1.131,0.566]", rawA, what="displayed raw scores, rounded", at="prompt A")
    s.claim("[0.141,0.566]", rawB, what="displayed raw scores, rounded", at="prompt B")
    ends = {"you": [exact("1.1305"), exact("1.1315")], "we": [exact("0.1405"), exact("0.1415")]}
    ok = all(abs(k / SQRT2 - exact("0.8")) <= exact("0.05") for k in ends["you"]) and all(
        abs(k / SQRT2 - exact("0.1")) <= exact("0.05") for k in ends["we"])
    s.prove("the scaled rows [0.8, 0.4] and [0.1, 0.4] hold for every key that rounds to the printed digits",
            lambda: (ok, f"k_you/√2 ∈ [{sp.N(ends['you'][0] / SQRT2, 6)}, {sp.N(ends['you'][1] / SQRT2, 6)}], "
                         f"k_we/√2 ∈ [{sp.N(ends['we'][0] / SQRT2, 6)}, {sp.N(ends['we'][1] / SQRT2, 6)}]"),
            at="scaling")
    s.prove("the final position can read both columns: its row has nothing to mask", lambda: (
        bool(blocks.masks.causal(2)[1].all()), "causal row t = 1 allows positions 0 and 1"), at="scaling",
        near="The final position can read both columns")
    aA, aB = LA.value(hA.A.name), LB.value(hB.A.name)
    s.show_table("weights of the final row, prompt A", hA.A, cols=["you", "like"], digits=6)
    s.show_table("weights of the final row, prompt B", hB.A, cols=["we", "like"], digits=6)
    s.prove("the first-position keys produce different weights for A and B", lambda: (
        sp.N(aA[0, 0] - aB[0, 0], 30) != 0, f"a_A = {[sp.N(e, 6) for e in aA]}, a_B = {[sp.N(e, 6) for e in aB]}"),
        at="both prompts end in 'like'", near="The first-position keys produce different weights")
    gap = final_outputs_gap()
    s.prove("both prompts end in 'like', yet their final head outputs differ (even for equal first values)",
            lambda: (not vanishes(gap), f"o_A − o_B = {[sp.N(e, 6) for e in gap]}"), at="both prompts end in 'like'",
            near="yet their head outputs differ")
    v, v_like = sp.Matrix([sp.symbols("v_0 v_1", real=True)]), sp.Matrix([[0, 1]])
    oA = aA[0, 0] * v + aA[0, 1] * v_like
    oB = aB[0, 0] * v + aB[0, 1] * v_like
    s.identity("with the same first value v the outputs differ by (a_A,0 − a_B,0)(v − v_like)",
               oA - oB - (aA[0, 0] - aB[0, 0]) * (v - v_like), at="both prompts end in 'like'")
    LV, _, hV = prompt_ledger(K_YOU, "A, symbolic values", values=True)
    dO = jacobian(LV.expand(hV.O.name, values=True), LV.entry_symbols("V").row(0))
    s.prove("the first token's value also reaches the output (the 'you' and 'we' values matter)", lambda: (
        all(dO[i, i] != 0 for i in range(2)), f"∂o/∂v_first = a_0 I = {sp.N(dO[0, 0], 6)} I"),
        at="both prompts end in 'like'", near="Both differences affect the result")


@derivation.section("Gradient paths through P, S and V")
def gradient_paths(s):
    L = Ledger("one head with a vocabulary readout, symbolic X and weights")
    s.use(L)
    X = L.input("X", shape=(2, 4))
    W = {n: L.parameter(f"W_{n}", shape=(4, 2)) for n in ("Q", "K", "V")}
    head = blocks.attention_head(L, X, W["Q"], W["K"], W["V"], orientation="in_out", mask="causal")
    Z = L.define("Z", head.O @ L.parameter("W_out", shape=(2, 3)), note="logits")
    ce = blocks.cross_entropy(L, Z, [1, 2])
    g = L.backward(ce.loss.name)
    s.prove("both paths contribute to the gradient of the shared input X", lambda: (
        L[g.name("X")].meta["uses"] == 3, "∂ℓ/∂X is the sum of 3 contributions: through Q, K and V"),
        near="Both paths contribute to the gradient of the shared input X")
    S_syms = L.expand(head.S.name).free_symbols
    s.prove("V does not participate in the QKᵀ score calculation", lambda: (
        not (S_syms & set(L.entry_symbols("W_V"))), "S involves X, W_Q, W_K only"))
    G = L.handle(g.name(head.O.name))
    cf = grads_cf.attention_gradient_rows(L, head.Q, head.K, head.V, head.A, G, tag="cf")
    keep = [head.Q.name, head.K.name, head.V.name, head.A.name, G.name]  # any upstream adjoint ∂ℓ/∂O, any weights

    def form(name):
        return L.expand(name, keep=keep)

    s.identity("the value path: ∂ℓ/∂V = Aᵀ ∂ℓ/∂O, which does not pass through S",
               form(g.name(head.V.name)) - form(cf["V"].name))
    s.identity("the score path to W_Q: ∂ℓ/∂W_Q = Xᵀ ∇_S K/√d_k with ∇_S = A ⊙ (∇_A − ((∇_A ⊙ A)1)1ᵀ)",
               form(g.name("W_Q")) - L.entry_symbols("X").T * form(cf["Q"].name))
    s.identity("the score path to W_K: ∂ℓ/∂W_K = Xᵀ ∇_Sᵀ Q/√d_k",
               form(g.name("W_K")) - L.entry_symbols("X").T * form(cf["K"].name))


@derivation.section("Why divide by √d_k")
def scaling_argument(s):
    s.claim("1", dot_product_variance(1), what="variance of one product q_i k_i", at="unit-variance model")
    for d_k in (2, 4, 8):
        s.claim("d_k", dot_product_variance(d_k), names={"d_k": sp.Integer(d_k)}, what=f"Var(q·k), d_k = {d_k}",
                at="unit-variance model")
        s.claim("√d_k", sp.sqrt(dot_product_variance(d_k)), names={"d_k": sp.Integer(d_k)},
                what=f"standard deviation, d_k = {d_k}", at="unit-variance model")
        s.claim("1", dot_product_variance(d_k, scaled=True), what=f"Var(q·k/√d_k), d_k = {d_k}",
                at="unit-variance model")


@derivation.section("Softmax sensitivity, shifts and scaling")
def sensitivity(s):
    L = Ledger("a score row with a large difference")
    s.use(L)
    a = L.define("a", ops.SoftmaxRows(L.input("s", [[0, 20]])))
    J = grads_cf.softmax_jacobian(L.value(a.name))
    s.prove("large differences within a row make softmax nearly one-hot and locally insensitive", lambda: (
        max(abs(sp.N(e, 30)) for e in J) < sp.Float("1e-8"),
        f"a = {[sp.N(e, 6) for e in L.value(a.name)]}, max |∂a/∂s| = {max(abs(sp.N(e, 6)) for e in J)}"),
        near="Large differences within a score row can make Softmax nearly one-hot")
    s.prove("adding the same constant to every score of a row does not change softmax",
            properties.shift_invariance(2, 2, blocks.masks.causal(2)).check,
            near="Adding the same large constant to every score does not change Softmax")
    Lc = Ledger("prompt A's row shifted by 1000")
    s.use(Lc)
    row = Lc.input("s", [["0.8", "0.4"]])
    same = Lc.define("a_shift", ops.SoftmaxRows(row + 1000))
    base = Lc.define("a", ops.SoftmaxRows(row))
    s.identity("[0.8, 0.4] and [1000.8, 1000.4] give the same weights", Lc.value(same.name) - Lc.value(base.name))
    Lp = Ledger("positive scaling of prompt A's row")
    c = Lp.input("c", note="a positive scale")
    w = ops.SoftmaxRows(Lp.input("s", [["0.8", "0.4"]]) * c)
    wv = Lp.define("a_c", w)
    wc = Lp.expand(wv.name, values=True)
    s.identity("positive scaling keeps the order: a_0/a_1 = e^{0.4c} > 1 for every c > 0",
               sp.simplify(wc[0, 0] / wc[0, 1]) - sp.exp(sp.Rational(2, 5) * c))
    cp = sp.Symbol("c", positive=True)
    ratio = sp.simplify(wc[0, 0] / wc[0, 1]).xreplace({c: cp})
    s.prove("positive scaling preserves the row's ordering: the larger score keeps the larger weight", lambda: (
        bool(sp.simplify(sp.log(ratio)).is_positive),
        f"a_0/a_1 = {ratio} > 1 for every positive c (scores 0.8 > 0.4)"),
        near="Positive scaling preserves the row's ordering")
    spread = [sp.N((wc[0, 0] - wc[0, 1]).subs(c, cv), 12) for cv in (sp.Rational(1, 2), 1, 10)]
    s.prove("but it changes the spread of the weights", lambda: (
        spread[0] < spread[1] < spread[2], f"a_0 − a_1 at c = 1/2, 1, 10: {[sp.N(x, 6) for x in spread]}"),
        near="while changing its spread")


@derivation.section("The axes of the T×T matrix")
def axes(s):
    s.note("The separate axis-check example the handout mentions is not in the text; the axes are checked on the "
           "two-token prompt.")
    LA, rawA, hA = prompt_ledger(K_YOU, "A")
    L = Ledger("prompt A with both rows, symbolic X, T = 2")
    s.use(L)
    X = L.input("X", shape=(2, 4))
    head = blocks.attention_head(L, X, L.parameter("W_Q", shape=(4, 2)), L.parameter("W_K", shape=(4, 2)),
                                 L.parameter("W_V", shape=(4, 2)), orientation="in_out", mask="causal")
    s.claim_shape("T×T", head.A, dims={"T": 2}, what="[T,T] = [2,2]")
    s.claim("[2,2]", sp.Matrix([list(head.A.shape)]), what="[T,T], the shape of each weight matrix")
    s.prove("row t is the query position: each row is a distribution over key positions",
            properties.rows_sum_to_one(L, head.A).check, near="row t is the query position requesting information")
    s.prove("column j is the key position and the corresponding value position",
            properties.convex_combination(L, head.O, head.V).check, near="Column j is the key position")


def _layer(L, X, tag, masked):
    D = X.shape[1]
    h = blocks.attention_head(L, X, L.parameter(f"W_Q^{{{tag}}}", shape=(D, 1)),
                              L.parameter(f"W_K^{{{tag}}}", shape=(D, 1)), L.parameter(f"W_V^{{{tag}}}", shape=(D, D)),
                              orientation="in_out", mask="causal" if masked else None, tag=tag)
    return blocks.residual(L, f"H^{{{tag}}}", X, h.O)


@derivation.section("The causal mask")
def causal(s):
    open_dep = properties.dependence(lambda L, X: _layer(L, X, "(0)", False), 2, 2)
    s.prove("without a mask position t = 0 reads 'like' at position 1, its own answer", lambda: (
        not open_dep.zero[0][1], f"∂o_{{0,{open_dep.witness[(0, 1)][0]}}}/∂x_{{1,{open_dep.witness[(0, 1)][1]}}} = "
                                 f"{open_dep.witness[(0, 1)][2]}"))
    s.prove("with the causal mask t = 0 uses only 'you'",
            properties.causal_independence(lambda L, X: _layer(L, X, "(0)", True), 2, 2).check)
    allowed = blocks.masks.causal(4)
    s.prove("position t = 3 can read positions 0, 1, 2, 3, not only its predecessor", lambda: (
        [j for j in range(4) if allowed[3, j]] == [0, 1, 2, 3], "row 3 of the 4×4 causal mask"))
    L = Ledger("causal weights over symbolic scores, T = 4")
    s.use(L)
    A = L.define("A", ops.SoftmaxRows(L.input("S", shape=(4, 4)), allowed))
    row3 = L.expand(A.name).row(3)
    s.prove("the mask defines visibility, not the relative weights among visible positions", lambda: (
        all(e.free_symbols for e in row3), "each weight of row 3 depends on the scores S_3j"),
        near="The mask defines visibility")
    Tmax, T = 8, 3
    s.prove("[:T,:T] of the maximum-length mask is the mask of the current length", lambda: (
        np.array_equal(blocks.masks.causal(Tmax)[:T, :T], blocks.masks.causal(T)), "T_max = 8, T = 3"),
        at="register_buffer", near="selects the relevant part of the maximum-length mask")
    Ls = Ledger("self-attention's queries, keys and values of one symbolic X, T = 2, C = 4")
    Xs = Ls.input("X", shape=(2, 4))
    hs = blocks.attention_head(Ls, Xs, *(Ls.parameter(f"W_{n}", shape=(4, 2)) for n in "QKV"), orientation="in_out",
                               mask="causal")
    xs = set(Ls.entry_symbols("X"))
    uses = [set().union(*(e.free_symbols for e in Ls.expand(n.name))) for n in (hs.Q, hs.K, hs.V)]
    s.prove("'self': queries, keys and values come from the same input X", lambda: (
        all(u & xs == xs and u - xs == set(Ls.entry_symbols(f"W_{n}")) for u, n in zip(uses, "QKV")),
        "Q, K and V each involve every entry of X and their own W, no other input"),
        near="come from the same input sequence representations")
    s.prove("'self' does not restrict a token to itself: the current and all earlier positions", lambda: (
        all([j for j in range(4) if allowed[t, j]] == list(range(t + 1)) for t in range(4)), "rows of the mask"),
        near="It does not restrict a token to itself")


@derivation.section("Weight orientation")
def orientation(s):
    L = Ledger("x @ w_q against nn.Linear's stored weight")
    s.use(L)
    X = L.input("X", shape=(2, 4))
    W = L.parameter("w_q", shape=(4, 2), note="[C, d_head], as x @ w_q")
    Wt = L.parameter("weight", shape=(2, 4), note="[d_head, C], as nn.Linear(C, d_head).weight")
    a = L.define("X_w_q", blocks.project(X, W, orientation="in_out"))
    b = L.define("X_weightᵀ", blocks.project(X, Wt, orientation="out_in"))
    s.claim_shape("C×d_head", W, dims={"C": 4, "d_head": 2}, what="w_q")
    s.claim_shape("d_head×C", Wt, dims={"C": 4, "d_head": 2}, what="nn.Linear(C, d_head).weight")
    s.identity("the two calculations are equivalent when weight = w_qᵀ",
               L.expand(a.name) - L.expand(b.name).xreplace(dict(zip(L.entry_symbols("weight"),
                                                                      L.entry_symbols("w_q").T))))


@derivation.section("Batching and heads")
def batching(s):
    L = Ledger("prompts A and B in one batch, C = 4, two heads of width 2")
    s.use(L)
    Xs = [L.input(f"X^{{[{b}]}}", shape=(2, 4)) for b in range(2)]
    items = blocks.batched_self_attention(L, Xs, L.parameter("W_QKV", shape=(4, 12)), L.parameter("W_O", shape=(4, 4)),
                                          n_heads=2, orientation="in_out", masks="causal")
    A0 = L.expand(items[0].heads[0].A.name)
    other = set(L.entry_symbols("X^{[1]}"))
    s.prove("prompt A's score slice involves only its own tokens: batching does not join the prompts", lambda: (
        not (set().union(*(e.free_symbols for e in A0)) & other), "A^{[0],1} has no symbol of X^{[1]}"),
        near="Batching computes them together without concatenating them into one text")
    Lh = Ledger("two heads with their own W_Q, W_K, W_V")
    s.use(Lh)
    X = Lh.input("X", shape=(2, 4))
    heads = [tuple(Lh.parameter(f"W_{n}^({i})", shape=(4, 2)) for n in "QKV") for i in (1, 2)]
    mha = blocks.multi_head(Lh, X, heads, Lh.parameter("W_O", shape=(4, 4)), orientation="in_out", mask="causal")
    q2 = Lh.expand(mha.heads[1].Q.name).free_symbols
    s.prove("head 2 receives the same X, not head 1's output", lambda: (
        not (q2 & set().union(*(Lh.entry_symbols(f"W_{n}^(1)") for n in "QKV"))) and q2 & set(Lh.entry_symbols("X")),
        "Q^{(2)} involves X and W_Q^{(2)} only"), near="Head 2 receives the same X")
    feats = {n: [Lh.expand(getattr(h, n).name) for h in mha.heads] for n in ("Q", "V")}
    s.prove("each head's own W_Q, W_K, W_V give it different matching features and value representations",
            lambda: (all(not vanishes(a - b) for a, b in feats.values()),
                     "Q^{(1)} ≠ Q^{(2)} and V^{(1)} ≠ V^{(2)} for symbolic X and weights"),
            near="allowing different matching features and value representations")
    mixed = Lh.expand(mha.out.name)
    per_head = [set().union(*(e.free_symbols for e in Lh.expand(h.O.name))) - set(Lh.entry_symbols("X"))
                for h in mha.heads]
    s.prove("W_O does more than fit the shape: every output feature combines both heads", lambda: (
        all(all(e.free_symbols & ph for ph in per_head) for e in mixed),
        "each entry of MHA(X) involves the weights of head 1 and of head 2"),
        near="The output projection does more than satisfy a shape requirement")
    s.claim_shape("T×C", mha.concat, dims={"T": 2, "C": 4}, what="two two-feature records side by side")
    cat = Lh.expand(mha.concat.name)
    s.identity("after concatenation the heads' features stand side by side, each head's unchanged",
               cat[:, :2] - Lh.expand(mha.heads[0].O.name), cat[:, 2:] - Lh.expand(mha.heads[1].O.name),
               near="features are merely side by side")
    s.claim_shape("T×C", mha.out, dims={"T": 2, "C": 4}, what="W_O supplies the [B,T,C] interface")
    gap = final_outputs_gap()
    s.prove("prompts A and B already leave the head with different final outputs", lambda: (
        not vanishes(gap), f"o_A − o_B = {[sp.N(e, 6) for e in gap]}"),
        near="already have different final-position head outputs")
    W_O = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"w^O_{{{i}{j}}}"))
    W_lm = sp.Matrix(2, 3, lambda i, j: sp.Symbol(f"w^lm_{{{i}{j}}}"))
    s.prove("W_O and the head after it can turn the different outputs into different H values and logits", lambda: (
        not vanishes(gap * W_O) and not vanishes(gap * W_O * W_lm),
        "(o_A − o_B) W_O and (o_A − o_B) W_O W_lm are not zero for symbolic W_O (2×2) and head W_lm (2×3)"),
        near="can produce different H values, allowing the language-model head to produce different logits")


@derivation.section("Sizes of the score tensors")
def sizes(s):
    B, n_head, T = 2, 2, 2
    L = Ledger("B = 2 prompts, two heads, T = 2")
    s.use(L)
    Xs = [L.input(f"X^{{[{b}]}}", shape=(T, 4)) for b in range(B)]
    items = blocks.batched_self_attention(L, Xs, L.parameter("W_QKV", shape=(4, 12)), L.parameter("W_O", shape=(4, 4)),
                                          n_heads=n_head, orientation="in_out", masks="causal")
    per_head = {h.S.shape[0] * h.S.shape[1] for it in items for h in it.heads}
    s.claim("T^2", sp.Integer(per_head.pop()), names={"T": sp.Integer(T)}, what="entries of one head's score matrix")
    total = sum(h.S.shape[0] * h.S.shape[1] for it in items for h in it.heads)
    weights = sum(h.A.shape[0] * h.A.shape[1] for it in items for h in it.heads)
    s.claim_shape("B×n_head×T^2", (len(items), len(items[0].heads), total // (len(items) * len(items[0].heads))),
                  dims={"B": B, "n_head": n_head, "T": T}, what="score entries across the batch and all heads")
    s.prove("across the batch and all heads there are B×n_head×T² score entries, and as many weights", lambda: (
        total == weights == B * n_head * T**2, f"{total} scores, {weights} weights = 2·2·2²"))
    s.prove("the weights need the same number of entries as the scores, head by head", lambda: (
        all(h.A.shape == h.S.shape for it in items for h in it.heads) and weights == total,
        f"each head: A and S are {T}×{T}; {weights} weights and {total} scores in all"),
        near="weights need the same number of entries")
    masked = [h.S_masked for it in items for h in it.heads]
    s.prove("the causal mask forbids future reads, but the dense matrix still holds every T×T entry", lambda: (
        all(m.shape == (T, T) for m in masked) and items[0].heads[0].allowed.sum() == T * (T + 1) // 2,
        "S_masked is T×T with −∞ above the diagonal"))


@derivation.section("The [B,T,C] interface")
def interface(s):
    B, T, C = 2, 2, 4
    L = Ledger("token and position embeddings, then multi-head attention, [B,T,C] = [2,2,4]")
    s.use(L)
    E = L.parameter("E", shape=(3, C), note="embeddings of you, we, like")
    P = L.parameter("P", shape=(T, C), note="position embeddings")
    W_QKV, W_O = L.parameter("W_QKV", shape=(C, 3 * C)), L.parameter("W_O", shape=(C, C))
    tokens = [L.define(f"E_w^{{[{b}]}}", ops.TakeRows(E, ids, label="w")) for b, ids in enumerate(([0, 2], [1, 2]))]
    Xs = [L.define(f"X^{{[{b}]}}", tokens[b] + P) for b in range(B)]
    items = blocks.batched_self_attention(L, Xs, W_QKV, W_O, n_heads=2, orientation="in_out", masks="causal")
    for b in range(B):
        s.claim_shape("T×C", Xs[b], dims={"T": T, "C": C}, what=f"prompt {'AB'[b]}: token plus position embeddings")
        s.claim_shape("T×C", items[b].out, dims={"T": T, "C": C}, what=f"prompt {'AB'[b]}: attention after W_O")

    def batch_shape(nodes):
        """[B,T,C] of a batch whose items share one T×C shape."""
        (shape,) = {n.shape for n in nodes}
        return sp.Matrix([[len(nodes), *shape]])

    s.claim("[2,2,4]", batch_shape(tokens), what="[B,T,C] of the embedded prompts", at="interface")
    s.claim("[2,2,4]", batch_shape(Xs), what="[B,T,C] after adding position embeddings", at="positions added")
    s.claim("[2,2,4]", batch_shape([it.out for it in items]), what="[B,T,C] of multi-head attention after W_O",
            at="attention added to the residual stream")
    res = [blocks.residual(L, f"H^{{[{b}]}}", Xs[b], items[b].out) for b in range(B)]
    s.prove("the attention output can be added to the residual stream: [B,T,C] is kept", lambda: (
        all(r.shape == (T, C) for r in res), f"{B} items of {T}×{C}"))
