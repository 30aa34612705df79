"""Week 8 — One Head, and a Decoder Computed by Hand.

Source: seed handout ``000_30e9e4099f2cd2dc.txt`` (Week 8 notes, Unit 2).
Sections follow the handout: the table of objects and shapes, §1 One head,
§2 Residual updates and normalization, §3 The decoder, complete, §4 The
forward pass by hand, the three checkpoints, and the table of key claims.

Conventions read from the handout: rows are positions; Q = H W_Q with W_Q of
shape d×d_k (``orientation="in_out"``); the causal mask replaces forbidden
scores by −∞ before the row softmax; LayerNorm uses the population variance
with ε inside the root; the readout softmax runs over token labels.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, Ledger, blocks, ops
from symseq.derive import attention_grads as grads_cf
from symseq.derive import dot_product_variance, properties, vanishes
from symseq.functions import jacobian, partial, relu

derivation = Derivation(
    "week08-decoder",
    title="Week 8 — One Head, and a Decoder Computed by Hand",
    source="000_30e9e4099f2cd2dc.txt",
    description="a complete decoder, its shapes, LayerNorm and residuals, and the two-token forward pass by hand",
)

# Sizes for the shape table: pairwise distinct, so a swapped axis cannot pass.
DIMS = {"T": 4, "d": 6, "d_k": 2, "d_v": 3, "v": 5, "m": 7, "h": 2}


def symbolic_decoder(L: Ledger, *, n_blocks: int = 1):
    """A complete pre-norm decoder (§3) with symbolic parameters at the sizes in DIMS."""
    T, d = DIMS["T"], DIMS["d"]
    H0 = L.input("H^(0)", shape=(T, d))
    params, head = blocks.decoder_parameters(L, d=d, d_k=DIMS["d_k"], d_v=DIMS["d_v"], h=DIMS["h"],
                                             m=DIMS["m"], v=DIMS["v"], n_blocks=n_blocks)
    dec = blocks.decoder(L, H0, params, W_out=head["W_out"], b_out=head["b_out"], ln_f=head["ln_f"],
                         orientation="in_out", eps=L.input("epsilon", note="LayerNorm regulator ε"))
    return H0, params, head, dec


def causal_weights(L: Ledger, T: int = 3) -> sp.Matrix:
    """The closed form of A = softmax_rows(S + M) (T×T) for symbolic scores S (T×T) and the causal mask M, on ``L``
    (§1 and the key claims: every masked row is a distribution over the accessible positions)."""
    S = L.input("S", shape=(T, T))
    L.define("A", ops.SoftmaxRows(S, blocks.masks.causal(T)))
    return L.expand("A")


def linear_feed_forward_gap() -> sp.Matrix:
    """(hW_1 + b_1)W_2 + b_2 − [h(W_1W_2) + (b_1W_2 + b_2)] for symbolic h (1×3), W_1 (3×4), b_1, W_2 (4×3) and
    b_2, a 1×3 matrix: zero entry by entry when the feed-forward map without its nonlinearity is one affine map
    (§3 and the key claims)."""
    La = Ledger("feed-forward without ReLU, d=3, m=4")
    x = La.input("h", shape=(1, 3))
    W1, b1 = La.parameter("W_1", shape=(3, 4)), La.parameter("b_1", shape=(1, 4))
    W2, b2 = La.parameter("W_2", shape=(4, 3)), La.parameter("b_2", shape=(1, 3))
    ff = La.define("FF_lin", (x @ W1 + b1) @ W2 + b2)
    h_, W1_, b1_, W2_, b2_ = (La.entry_symbols(n) for n in ("h", "W_1", "b_1", "W_2", "b_2"))
    return La.expand(ff.name) - (h_ * (W1_ * W2_) + (b1_ * W2_ + b2_))


def feed_forward_rows() -> list:
    """§3's FF(h) = ReLU(h W_1 + b_1) W_2 + b_2 (d = 2, m = 3, symbolic parameters) on a symbolic 3×2 input H and
    on one symbolic row h with the same parameters: the differences FF(H)_i − FF(h_i), one 1×2 row per position i
    (all zero when the map acts on each row alone, with the same parameters everywhere)."""
    L = Ledger("feed-forward on three rows and on one row, d = 2, m = 3")
    W_1, b_1 = L.parameter("W_1", shape=(2, 3)), L.parameter("b_1", shape=(1, 3))
    W_2, b_2 = L.parameter("W_2", shape=(3, 2)), L.parameter("b_2", shape=(1, 2))
    rows = blocks.mlp(L, L.input("H", shape=(3, 2)), W_1, b_1, W_2, b_2, orientation="in_out", tag="rows")
    one = blocks.mlp(L, L.input("h", shape=(1, 2)), W_1, b_1, W_2, b_2, orientation="in_out", tag="row")
    H, h = L.entry_symbols("H"), list(L.entry_symbols("h"))
    out, single = L.expand(rows.B.name), L.expand(one.B.name)
    return [out.row(i).xreplace(dict(zip(H.row(i), h))) - single for i in range(3)]


def attention_mixes_positions() -> bool:
    """Whether a causal head (d = d_k = 2, symbolic weights) makes row 1 of its output depend on input row 0
    (§3: "Attention mixes positions")."""
    return not causal_dependence(2).zero[1][0]


def causal_dependence(T: int = 4):
    """∂o_i/∂x_j of a causal head (d = d_k = 2, symbolic weights) over T positions (§1: position i may use x_i and
    earlier, not x_{i+1})."""
    return properties.dependence(lambda L, X: blocks.attention_head(
        L, X, L.parameter("W_Q", shape=(2, 2)), L.parameter("W_K", shape=(2, 2)), L.parameter("W_V", shape=(2, 2)),
        orientation="in_out", mask="causal").O, T, 2)


def head_entries(T: int = 3, d_k: int = 2):
    """§1's entry formulas on a causal head of symbolic weights (T = 3, d = d_k = d_v = 2): the differences
    S_ts − q_t·k_s/√d_k, A_ts − e^{S_ts}/Σ_{j≤t} e^{S_tj} (s ≤ t) or A_ts (s > t), and o_t − Σ_{s≤t} A_ts v_s,
    each over the head's own rows (all zero when the page's formulas are the head's)."""
    L = Ledger("one causal head, T = 3, d = d_k = d_v = 2")
    X = L.input("H", shape=(T, 2))
    head = blocks.attention_head(L, X, *(L.parameter(f"W_{n}", shape=(2, d_k)) for n in "QKV"),
                                 orientation="in_out", mask="causal")
    Q, K, V, S, A, O = (L.entry_symbols(r.name) for r in (head.Q, head.K, head.V, head.S, head.A, head.O))
    keep = [head.Q.name, head.K.name, head.V.name, head.S.name, head.A.name]
    s_rows, a_rows, o_rows = (L.expand(r.name, keep=keep) for r in (head.S, head.A, head.O))
    scores = [s_rows[t, u] - Q.row(t).dot(K.row(u)) / sp.sqrt(d_k) for t in range(T) for u in range(T)]
    weights = [a_rows[t, u] - (sp.exp(S[t, u]) / sum(sp.exp(S[t, j]) for j in range(t + 1)) if u <= t else 0)
               for t in range(T) for u in range(T)]
    masked = {A[t, u]: 0 for t in range(T) for u in range(t + 1, T)}  # A_ts = 0 for s > t (the weights' formula)
    outputs = [o_rows[t, c].xreplace(masked) - sum(A[t, u] * V[u, c] for u in range(t + 1))
               for t in range(T) for c in range(2)]
    return scores, weights, outputs


def layer_norm_formulas(d: int = 3) -> list[tuple]:
    """§2's three formulas on a symbolic row h (1×d) with gain γ and shift b (d = 3, ε symbolic): (statement,
    difference) for μ(h) = (1/d) Σ_j h_j, v(h) = (1/d) Σ_j (h_j − μ)² and LN(h)_j = γ_j (h_j − μ)/√(v + ε) + b_j,
    each over the LayerNorm's own rows (zero when the page's formulas are the block's)."""
    L = Ledger(f"LayerNorm of a symbolic row with gain and shift, d = {d}")
    ln = blocks.layer_norm(L, L.input("h", shape=(1, d)), L.parameter("γ", shape=(1, d)),
                           L.parameter("b", shape=(1, d)), eps=L.input("ϵ"), name="LN")
    h, g, b = (L.entry_symbols(n) for n in ("h", "γ", "b"))
    mu, v = L.symbol(ln.mu.name) if ln.mu.shape == () else L.entry_symbols(ln.mu.name)[0, 0], \
        L.entry_symbols(ln.var.name)[0, 0]
    out = L.expand(ln.out.name, keep=[ln.mu.name, ln.var.name])
    return [("μ(h) = Σ_j h_j / d, the mean of the row", L.expand(ln.mu.name)[0, 0] - sum(h) / d),
            ("v(h) = Σ_j (h_j − μ)² / d, the population variance", L.expand(ln.var.name, keep=[ln.mu.name])[0, 0]
             - sum((e - mu) ** 2 for e in h) / d),
            ("LN(h)_j = γ_j (h_j − μ)/√(v + ϵ) + b_j", out - sp.Matrix(
                [[g[j] * (h[j] - mu) / sp.sqrt(v + L.symbol("ϵ")) + b[j] for j in range(d)]]))]


def softmax_index_sets() -> tuple[tuple, tuple]:
    """The shapes of the attention weights A (T×T: each row a distribution over the T positions) and of the readout
    probabilities P = softmax_rows(Z) (T×v: each row a distribution over the v token labels) of the decoder at the
    sizes in DIMS, where T = 4 and v = 5 differ (§1 and "What the week establishes")."""
    L = Ledger("decoder at the sizes of the table, with its readout probabilities")
    _, _, _, dec = symbolic_decoder(L)
    P = blocks.probabilities(L, dec.logits)
    return dec.blocks[0].mha.heads[0].A.shape, P.shape


def index_sets_differ(shapes: tuple[tuple, tuple]) -> tuple[bool, str]:
    """Whether the attention softmax (rows of A) runs over the T positions and the readout softmax (rows of P) over
    the v labels, two index sets of different sizes here; with the detail."""
    (a_rows, a_cols), (p_rows, p_cols) = shapes
    ok = a_rows == a_cols == DIMS["T"] and p_rows == DIMS["T"] and p_cols == DIMS["v"] and a_cols != p_cols
    return ok, f"A is {a_rows}×{a_cols} (over positions), P is {p_rows}×{p_cols} (over labels)"


@derivation.section("The objects and their dimensions")
def objects(s):
    L = s.ledger("decoder at T=4, d=6, d_k=2, d_v=3, v=5, m=7, h=2")
    H0, params, head, dec = symbolic_decoder(L)
    W_Q, W_K, W_V = params[0].heads[0]
    h1 = dec.blocks[0].mha.heads[0]
    table = [
        ("T×d", H0, "H"), ("d×d_k", W_Q, "W_Q"), ("d×d_k", W_K, "W_K"), ("d×d_v", W_V, "W_V"),
        ("T×d_k", h1.Q, "Q"), ("T×d_k", h1.K, "K"), ("T×d_v", h1.V, "V"),
        ("T×T", h1.S, "S"), ("T×T", h1.A, "A"), ("T×d_v", h1.O, "AV"), ("T×v", dec.logits, "Z"),
    ]
    for printed, obj, what in table:
        s.claim_shape(printed, obj, dims=DIMS, what=what, at="table of objects")
    s.claim_shape("a×c", (2, 5), dims={"a": 2, "c": 5},
                  what="an a×b matrix times a b×c matrix (a=2, b=3, c=5)", at="shapes")
    A = sp.Matrix(2, 3, lambda i, j: sp.Symbol(f"a_{i}{j}"))
    B = sp.Matrix(3, 5, lambda i, j: sp.Symbol(f"b_{i}{j}"))
    s.claim_shape("a×c", (A * B).shape, dims={"a": 2, "c": 5}, what="the product computed", at="shapes")
    s.keep(ledger=L, decoder=dec)


@derivation.section("§1 One head")
def one_head(s):
    # Three projections, three combinations of the input coordinates: Q, K and V of a symbolic input differ.
    Lp = Ledger("one head's projections of a symbolic input, d=3, d_k=d_v=2")
    Hp = Lp.input("H", shape=(2, 3))
    proj = blocks.attention_head(Lp, Hp, *(Lp.parameter(f"W_{n}", shape=(3, 2)) for n in "QKV"),
                                 orientation="in_out", mask="causal")
    Qe, Ke, Ve = (Lp.expand(n.name) for n in (proj.Q, proj.K, proj.V))
    s.prove("queries, keys and values are different combinations of the input coordinates", lambda: (
        not vanishes(Qe - Ke) and not vanishes(Ke - Ve) and not vanishes(Qe - Ve),
        "H W_Q, H W_K and H W_V differ pairwise for symbolic H"), at="projections",
        near="use different combinations of the input coordinates")
    # Every row of a causally masked attention matrix is a probability distribution:
    # proved for symbolic scores of three positions.
    Lc = s.ledger("causal attention over symbolic scores, T=3")
    A_sym = causal_weights(Lc)
    s.identity("every masked attention row sums to 1 over the accessible prefix",
               *[sum(A_sym.row(i)) - 1 for i in range(3)], at="causal mask")
    s.prove("entries above the diagonal are exactly 0 and the rest are positive",
            lambda: (all(A_sym[i, j] == 0 for i in range(3) for j in range(i + 1, 3))
                     and all(A_sym[i, j].is_positive for i in range(3) for j in range(i + 1)),
                     "A_ts = 0 for s > t; A_ts = e^{S_ts}/Σ_{j≤t} e^{S_tj} > 0 for s ≤ t"),
            at="causal mask")
    s.claim("0", A_sym[0, 1], what="A_ts for s > t (position 1 does not see position 2)", at="causal mask")
    allowed = blocks.masks.causal(3)
    s.prove("every row keeps its own position: the causal mask leaves no row without a source", lambda: (
        all(allowed[i, i] for i in range(3)) and blocks.masks.empty_rows(allowed) == [],
        "the diagonal of the 3×3 causal mask is allowed"), at="causal mask",
        near="Every row has at least its diagonal entry available")
    dep = causal_dependence()
    s.prove("output row i of a causal head reads x_0 … x_i and not x_{i+1}, the token it predicts", lambda: (
        all(dep.zero[i][i + 1] and not dep.zero[i][i] for i in range(3)), "∂o_i/∂x_{i+1} = 0, ∂o_i/∂x_i ≠ 0"),
        at="causal mask", near=r"predicts the token at $i+1$ and may use $x_i$ and earlier but not $x_{i+1}$")
    scores, weights, outputs = head_entries()
    with s.place("causal mask"):  # the three entry formulas as the page prints them, on the head's own rows
        s.identity("S_ts = q_t·k_s/√d_k", *scores, near=r"S_{ts}=\frac{q_t\cdot k_s}{\sqrt{d_k}}")
        s.identity("A_ts = e^{S_ts}/Σ_{j≤t} e^{S_tj} where s ≤ t, and zero where s > t", *weights,
                   near=r"A_{ts}=\{\begin{array}{ll}\frac{e^{S_{ts}}}{{\sum }_{j\le t}{e}^{S_{tj}}},"
                        r"& s\le t,\\ 0,& s>t,")
        s.identity("o_t = Σ_{s≤t} A_ts v_s", *outputs, near=r"{o}_t=\sum _{s\le t}{A}_{ts}{v}_s")
    # The two softmaxes: A over the T positions, P over the v labels.
    index_sets = softmax_index_sets()
    s.prove("the attention softmax and the readout softmax run over different index sets: positions and labels",
            lambda: index_sets_differ(index_sets), at="two softmaxes", near="they run over different index sets")
    # The Boltzmann reading: with energies E = −S, A_ts = e^{−E_ts}/Σ_{j≤t} e^{−E_tj}.
    E = -Lc.entry_symbols("S")
    s.identity("the softmax over positions is a Boltzmann average with the negative scores as energies",
               *[A_sym[t, j] - sp.exp(-E[t, j]) / sum(sp.exp(-E[t, k]) for k in range(t + 1))
                 for t in range(3) for j in range(t + 1)],
               at="temperature", near="with the negative scores as effective energies")
    # A score gap g growing like √d_k freezes the average: ∂a/∂s = diag(a) − aᵀa tends to zero.
    Lf = Ledger("a score row (0, g) whose gap g grows like √d_k")
    g = sp.Symbol("g", positive=True)
    J_g = grads_cf.softmax_jacobian(Lf.value(Lf.define("a", ops.SoftmaxRows(Lf.input("s", [[0, g]]))).name))
    steep = [J_g[0, 0].subs(g, sp.sqrt(d_k)) for d_k in (1, 4, 16, 64, 256)]
    s.prove("as the score scale grows, the softmax freezes onto one site with vanishing gradient", lambda: (
        all(sp.N(a - b, 30) > 0 for a, b in zip(steep, steep[1:])) and sp.limit(J_g[0, 0], g, sp.oo) == 0
        and all(sp.limit(e, g, sp.oo) == 0 for e in J_g),
        f"∂a_0/∂s_0 at g = √d_k, d_k = 1, 4, 16, 64, 256: {[sp.N(e, 4) for e in steep]}; every entry → 0"),
        at="temperature", near="with vanishing gradient to move it")
    # Why divide by √d_k: independent, centred, unit-variance coordinates.
    for d_k in (1, 2, 3, 4, 8):
        s.claim("d_k", dot_product_variance(d_k), names={"d_k": sp.Integer(d_k)},
                what=f"Var(q·k) at d_k={d_k}", at="scaling")
        s.claim("1", dot_product_variance(d_k, scaled=True), what=f"Var(q·k/√d_k) at d_k={d_k}", at="scaling")
    for d_k in (1, 2, 3, 4, 8):
        s.claim(r"1/\sqrt{d_k}", 1 / sp.sqrt(dot_product_variance(d_k)), names={"d_k": sp.Integer(d_k)},
                what=f"the temperature scale that returns the score variance to one, d_k={d_k}",
                at="temperature scale")
    s.claim_shape("h d_v×d", (DIMS["h"] * DIMS["d_v"], DIMS["d"]), dims=DIMS, what="W_O", at="multi-head")
    Lm = s.ledger("two heads, d=6, d_v=3")
    H = Lm.input("H", shape=(DIMS["T"], DIMS["d"]))
    heads = [(Lm.parameter(f"W_Q^({i})", shape=(6, 2)), Lm.parameter(f"W_K^({i})", shape=(6, 2)),
              Lm.parameter(f"W_V^({i})", shape=(6, 3))) for i in (1, 2)]
    W_O = Lm.parameter("W_O", shape=(6, 6))
    mha = blocks.multi_head(Lm, H, heads, W_O, orientation="in_out", mask="causal")
    s.claim_shape("T×h d_v", mha.concat, dims=DIMS, what="[O⁽¹⁾ O⁽²⁾]", at="multi-head")
    s.claim_shape("T×d", mha.out, dims=DIMS, what="MHA(H)", at="multi-head")
    cat = Lm.expand(mha.concat.name)
    s.identity("concatenation keeps each head's retrieved coordinates as they are, side by side",
               cat[:, :3] - Lm.expand(mha.heads[0].O.name), cat[:, 3:] - Lm.expand(mha.heads[1].O.name),
               at="multi-head", near="Concatenation preserves each head")
    maps = [[Lm.entry_symbols(W.name) for W in head] for head in heads]  # each head's W_Q, W_K, W_V entries
    renamed = {a: b for one, two in zip(*maps) for a, b in zip(one, two)}
    s.identity("the heads run the same construction: head 2's output is head 1's with head 2's projections",
               Lm.expand(mha.heads[0].O.name).xreplace(renamed) - Lm.expand(mha.heads[1].O.name), at="multi-head",
               near="Several heads run the same construction")
    shared = {x for m in maps[0] for x in m} & {x for m in maps[1] for x in m}
    s.prove("each head has projections of its own: no entry of head 1's W_Q, W_K, W_V is one of head 2's",
            lambda: (not shared, f"{len(renamed)} entries each, {len(shared)} shared"), at="multi-head",
            near="with different projections")
    s.identity("MHA(H) = [O⁽¹⁾ ⋯ O⁽ʰ⁾] W_O: the heads' outputs side by side, times W_O",
               Lm.expand(mha.out.name, keep=[o.O.name for o in mha.heads])
               - Lm.entry_symbols(mha.heads[0].O.name).row_join(Lm.entry_symbols(mha.heads[1].O.name))
               * Lm.entry_symbols("W_O"), at="multi-head", near=r"\mathrm{MHA}(H)=[O^{(1)}\cdots O^{(h)}]W_O")
    Lw = Ledger("two heads, d = 4, d_v = 3: h d_v = 6 differs from d")  # so that h d_v×d and d×h d_v differ
    wide = blocks.multi_head(Lw, Lw.input("H", shape=(3, 4)), [tuple(Lw.parameter(f"W_{n}^({i})", shape=(4, w))
                             for n, w in zip("QKV", (2, 2, 3))) for i in (1, 2)],
                             Lw.parameter("W_O", shape=(6, 4)), orientation="in_out", mask="causal")
    s.prove("W_O is h d_v×d: it maps the heads' side-by-side outputs (T×h d_v) back to the width d", lambda: (
        Lw.shape("W_O") == (6, 4) and wide.concat.shape == (3, 6) and wide.out.shape == (3, 4),
        f"[O⁽¹⁾ O⁽²⁾] {wide.concat.shape} · W_O {Lw.shape('W_O')} = {wide.out.shape}"), at="multi-head",
        near=r"W_O\in {\mathbb{R}}^{h{d}_v\times d}")
    per_row = feed_forward_rows()
    s.identity("the feed-forward sublayer treats each position on its own: row i of its output is the map of row i",
               *per_row, at="feed-forward sublayer", near="transforms coordinates at each position separately")
    s.identity("the feed-forward sublayer uses one set of parameters at every position: FF(H)_i is FF(h_i)",
               *per_row, at="feed-forward sublayer", near="with the same parameters everywhere along")


@derivation.section("§2 Residual updates and normalization")
def residual_and_norm(s):
    # A residual connection whose change is zero returns its input.
    L0 = Ledger("residual with a zero change, one row, d = 3")
    h0 = L0.input("h", shape=(1, 3))
    kept = blocks.residual(L0, "h'", h0, L0.input("F", [[0, 0, 0]], note="a change set to zero"))
    s.identity("setting the change to zero leaves the input as it was", L0.expand(kept.name, values=True)
               - L0.entry_symbols("h"), at="residual connection", near="setting the change to zero preserves the input")
    # J = I + J_F for H' = H + F(H), with F a LayerNorm followed by a tanh layer (one row, d = 3).
    L = s.ledger("residual around F(h) = tanh(LN(h) W)")
    h = L.input("h", shape=(1, 3))
    W = L.parameter("W", shape=(3, 3))
    ln = blocks.layer_norm(L, h, eps=L.input("epsilon"), name="LN")
    F = L.define("F", ops.Map(sp.tanh, ln.out @ W))
    blocks.residual(L, "h'", h, F)
    hs = list(L.entry_symbols("h"))
    J = jacobian(L.expand("h'"), hs)
    J_F = jacobian(L.expand("F"), hs)
    s.identity("for H' = H + F(H) the Jacobian is I + J_F", J - (sp.eye(3) + J_F), at="residual Jacobian")
    # J_F can reinforce or cancel directions: a branch repeating its input doubles the identity, one undoing it
    # cancels it.
    Lj = Ledger("residual around F(h) = h and F(h) = −h, one row, d = 2")
    hj = Lj.input("h", shape=(1, 2))
    same, undo = (blocks.residual(Lj, name, hj, F) for name, F in (("h+h", hj), ("h-h", Lj.define("-h", -hj))))
    hjs = list(Lj.entry_symbols("h"))
    s.identity("the branch can reinforce the identity path (a repeating branch doubles it) or cancel it (an undoing "
               "branch leaves no derivative)", jacobian(Lj.expand(same.name), hjs) - 2 * sp.eye(2),
               jacobian(Lj.expand(undo.name), hjs), at="residual Jacobian",
               near="can reinforce or cancel directions")

    # LayerNorm with ε = 0, unit gain, zero shift: zero sum and squared norm d.
    for d in (2, 3, 4):
        Ld = s.ledger(f"LayerNorm of a symbolic row, d={d}, ε=0")
        x = Ld.input("h", shape=(1, d))
        n = blocks.layer_norm(Ld, x, eps=0, name="LN")
        y = Ld.expand(n.out.name)
        hs = list(Ld.entry_symbols("h"))
        mu, var = Ld.expand(n.mu.name)[0, 0], Ld.expand(n.var.name)[0, 0]
        # μ(h) = (1/d) Σ_j h_j and v(h) = (1/d) Σ_j (h_j − μ)²: the weight 1/d of each coordinate.
        s.claim(r"\frac{1}{d}", partial(mu, hs[0]), names={"d": sp.Integer(d)}, what=f"weight of h_0 in μ(h), d={d}",
                at="mean μ(h)")
        s.claim(r"\frac{1}{d}", sp.simplify(var / sum((h_j - mu) ** 2 for h_j in hs)), names={"d": sp.Integer(d)},
                what=f"v(h) over Σ_j (h_j − μ)², d={d}", at="variance v(h)")
        s.identity(f"LN(h) has zero coordinate sum (d={d}, ε=0)", sum(y), at="normalization")
        s.identity(f"LN(h) has squared norm d (d={d}, ε=0)", sum(e**2 for e in y) - d, at="normalization")
    # With ε > 0 the squared norm is d·v/(v + ε) < d.
    Le = s.ledger("LayerNorm of a symbolic row, d=3, ε>0")
    x = Le.input("h", shape=(1, 3))
    eps = Le.input("epsilon")
    n = blocks.layer_norm(Le, x, eps=eps, name="LN")
    y, v = Le.expand(n.out.name), Le.expand(n.var.name)[0, 0]
    s.identity("with ε > 0 the squared norm is d·v/(v + ε)", sum(e**2 for e in y) - 3 * v / (v + eps),
               at="normalization")
    s.identities(*layer_norm_formulas(), at="normalization",
                 near=r"\mu (h)=\frac{1}{d}\sum _j{h}_j,v(h)=\frac{1}{d}\sum _j(h_j-\mu {)}^2,"
                      r"\mathrm{LN}(h{)}_j={\gamma }_j\frac{h_j-\mu }{\sqrt{v+ϵ}}+b_j")
    vp, ep = sp.Symbol("v", positive=True), sp.Symbol("epsilon", positive=True)
    s.prove("with ε > 0 the squared norm is smaller than d (v > 0)",
            lambda: (sp.simplify(3 - 3 * vp / (vp + ep)).is_positive, "d − d·v/(v+ε) = d·ε/(v+ε) > 0"),
            at="normalization")
    # ε > 0 keeps v + ε away from zero for every row, a constant row (v = 0) included.
    real = {e: sp.Symbol(e.name, real=True) for e in Le.entry_symbols("h")}
    v_real = v.xreplace(real)
    Lk = Ledger("LayerNorm of the constant row (2, 2, 2), ε = 1/10")
    nk = blocks.layer_norm(Lk, Lk.input("h", [[2, 2, 2]]), eps="1/10", name="LN")
    s.prove("the positive regulator avoids division by zero: v + ε stays positive for every row, a constant row "
            "included",
            lambda: ((v_real + ep).is_positive and Lk.value(nk.var.name)[0, 0] == 0
                     and Lk.value(nk.out.name) == sp.zeros(1, 3),
                     "v(h) ≥ 0 as a mean of squares; the constant row has v = 0 and LN = (0, 0, 0) at ε = 1/10"),
            at="normalization", near="positive $ϵ$ avoids division by zero")
    # The squared norm of LN(h) with a positive regulator against none, at h = (1, 3, 2).
    Lr = Ledger("LayerNorm of h = (1, 3, 2) with ε = 1/10 and with ε = 0")
    hr = Lr.input("h", [[1, 3, 2]])
    sq = []
    for tag, e in (("ε", "1/10"), ("0", 0)):
        out = blocks.layer_norm(Lr, hr, eps=e, name=f"LN_{tag}").out
        sq.append(Lr.value(Lr.define(f"|LN_{tag}(h)|^2", ops.Sum(out * out, None)).name))
    s.prove("with a positive regulator the squared norm of the normalized row is smaller than without one",
            lambda: (bool(sq[0] < sq[1]),
                     f"|LN(h)|² at h = (1, 3, 2): {sq[0]} with ε = 1/10, {sq[1]} with ε = 0"),
            at="normalization", near="With a positive regulator the squared norm is smaller")
    # Learned gains and shifts move the row off that sphere (symbolic γ and β, ε = 0).
    Lg = Ledger("LayerNorm with learned gain and shift, d = 3, no regulator")
    yg = Lg.expand(blocks.layer_norm(Lg, Lg.input("h", shape=(1, 3)), Lg.parameter("gamma", shape=(1, 3)),
                                     Lg.parameter("beta", shape=(1, 3)), eps=0, name="LN").out.name)
    s.prove("with learned gains and shifts the normalized row has neither zero sum nor squared norm d in general",
            lambda: (not vanishes(sum(yg)) and not vanishes(sum(e**2 for e in yg) - 3),
                     "Σ_j LN(h)_j and Σ_j LN(h)_j² − 3 are not identically zero in γ, β"), at="normalization",
            near="with learned gains and shifts the geometry changes again")

    # The two-number example: h = (1, 3), unit gain, zero shift, ε = 0.
    Lx = s.ledger("h = (1, 3), ε = 0")
    h = Lx.input("h", [[1, 3]])
    n = blocks.layer_norm(Lx, h, eps=0, name="LN")
    r = blocks.residual(Lx, "h+LN(h)", h, n.out)
    norm = Lx.define("|h+LN(h)|", sp.sqrt(Lx.define("|h+LN(h)|^2", ops.Sum(r * r, None))))
    mean = Lx.define("mean(h+LN(h))", ops.Sum(r, None, mean=True))
    s.given(h, what="h", at="example h=(1,3)")
    s.given(sp.Integer(0), what="ε", at="example h=(1,3)")
    s.claim("2", n.mu[0, 0], what="μ", at="example h=(1,3)")
    s.claim("1", n.var[0, 0], what="v", at="example h=(1,3)")
    s.claim("(-1,1)", n.out, what="LN(h)", at="example h=(1,3)")
    s.claim("(0,4)", r, what="h + LN(h)", at="example h=(1,3)")
    s.claim("4", norm, what="norm of h + LN(h)", at="example h=(1,3)")
    s.prove("h + LN(h) has nonzero mean", lambda: (Lx.value(mean.name) != 0, f"mean = {Lx.value(mean.name)}"),
            at="example h=(1,3)")
    s.keep(ledger=Lx)


@derivation.section("§3 The decoder, complete")
def decoder_complete(s):
    L = s.ledger("pre-norm decoder, one block, symbolic parameters")
    H0, params, head, dec = symbolic_decoder(L)
    W_1, b_1, W_2, b_2 = params[0].mlp
    s.identity("the feed-forward map acts on each row alone, with one set of parameters for every position",
               *feed_forward_rows(), at="feed-forward", near="acts on each row independently with the same parameters")
    s.claim_shape("d×m", W_1, dims=DIMS, what="W_1", at="feed-forward")
    s.claim_shape("m×d", W_2, dims=DIMS, what="W_2", at="feed-forward")
    s.prove("W_1 is d×m and W_2 is m×d: the first widens each row to the hidden width, the second narrows it back",
            lambda: (W_1.shape == (DIMS["d"], DIMS["m"]) and W_2.shape == (DIMS["m"], DIMS["d"]),
                     f"W_1 {W_1.shape}, W_2 {W_2.shape}"), at="feed-forward",
            near=r"where $W_1$ is $d\times m$, $W_2$ is $m\times d$")
    mixes = attention_mixes_positions()
    s.prove("attention mixes positions while the feed-forward sublayer keeps each position to itself", lambda: (
        mixes and all(vanishes(d) for d in feed_forward_rows()),
        "a causal head's row 1 reads input row 0; FF(H)_i is FF of row i alone"), at="feed-forward",
        near="Attention mixes positions; this sublayer transforms the coordinates within each position")
    s.claim_shape("d×v", head["W_out"], dims=DIMS, what="W_out", at="readout")
    s.claim_shape("T×v", dec.logits, dims=DIMS, what="Z", at="readout")
    s.claim_shape("T×d", dec.blocks[0].U, dims=DIMS, what="U⁰", at="blocks")
    s.claim_shape("T×d", dec.blocks[0].out, dims=DIMS, what="H¹", at="blocks")
    # Without the nonlinearity the two feed-forward matrices collapse to one affine map.
    s.identity("without a nonlinearity, (hW_1 + b_1)W_2 + b_2 = h(W_1W_2) + (b_1W_2 + b_2)",
               linear_feed_forward_gap(), at="feed-forward")
    # ReLU keeps the pieces apart: the same map with ReLU differs at a point where a hidden unit is negative.
    Lr = s.ledger("feed-forward with ReLU at one point")
    xr = Lr.input("h", [[1, -2, 0]])
    W1r = Lr.parameter("W_1", [[1, 0], [0, 1], [0, 0]])
    W2r = Lr.parameter("W_2", [[1, 0, 0], [0, 1, 0]])
    hid = Lr.define("m", ops.Map(relu, xr @ W1r))
    out = Lr.define("FF", hid @ W2r)
    s.claim("0", hid[0, 1], what="ReLU(a) = max(0, a) at the hidden unit a = −2", at="feed-forward")
    s.prove("ReLU keeps the pieces apart: at h = (1, −2, 0) the negative hidden unit is cut",
            lambda: (Lr.value(out.name) == sp.Matrix([[1, 0, 0]]), f"ReLU(hW_1)W_2 = {list(Lr.value(out.name))}"),
            at="feed-forward")
    with s.place("blocks"):  # the page's equations of §3, each on the decoder's own rows
        for statement, *proof, near in decoder_equations(L, H0, params, head, dec):
            s.identity(statement, *proof, near=near)
        s.prove("block ℓ takes H^ℓ to H^{ℓ+1}, for ℓ from zero up to L minus one (two blocks checked)",
                lambda: stacked(2), near=r"For blocks $\ell =0,\dots ,L-1$")
        s.identity("H^0 selects the tokens' rows of the embedding table: one-hot rows times E", *embedding_rows(),
                   near=r"Initialize $H^0$ by selecting the token embedding rows")
    s.keep(ledger=L, decoder=dec)


def decoder_equations(L: Ledger, H0, params, head, dec) -> list[tuple]:
    """§3's equations on the symbolic decoder (one block, the sizes in DIMS), as (statement, difference …, the
    page's formula): U = H + MHA(LN_1(H)) and H' = U + FF(LN_2(U)), each with the difference of its sum and the
    rows its branch reads (MHA reads H only through LN_1: no entry of H in MHA's closed form over LN_1); FF(h) =
    ReLU(hW_1 + b_1)W_2 + b_2 over LN_2's rows; Z = LN_f(H^L)W_out + b_out and the readout softmax."""
    b = dec.blocks[0]
    E = L.entry_symbols
    T = DIMS["T"]
    W_1, b_1, W_2, b_2 = (E(p.name) for p in params[0].mlp)

    def branch_reads(row, through, source) -> sp.Matrix:  # 0 when ``row`` reads ``source`` only via ``through``
        free = L.expand(row.name, keep=[through.name]).free_symbols
        return sp.Matrix([[len(free & set(E(source.name))), int(not free & set(E(through.name)))]])

    P = blocks.probabilities(L, dec.logits)
    Z = E(dec.logits.name)
    soft = sp.Matrix(T, DIMS["v"], lambda t, a: sp.exp(Z[t, a]) / sum(sp.exp(Z[t, c]) for c in range(DIMS["v"])))
    return [
        ("U^ℓ = H^ℓ + MHA_ℓ(LN_{ℓ,1}(H^ℓ))", L.expand(b.U.name, keep=[H0.name, b.mha.out.name])
         - (E(H0.name) + E(b.mha.out.name)), branch_reads(b.mha.out, b.ln1.out, H0),
         r"U^{\ell }=H^{\ell }+{\mathrm{MHA}}_{\ell }({\mathrm{LN}}_{\ell ,1}(H^{\ell }))"),
        ("H^{ℓ+1} = U^ℓ + FF_ℓ(LN_{ℓ,2}(U^ℓ))", L.expand(b.out.name, keep=[b.U.name, b.mlp.B.name])
         - (E(b.U.name) + E(b.mlp.B.name)), branch_reads(b.mlp.B, b.ln2.out, b.U),
         r"H^{\ell +1}=U^{\ell }+{\mathrm{FF}}_{\ell }({\mathrm{LN}}_{\ell ,2}(U^{\ell }))"),
        ("FF(h) = ReLU(hW_1 + b_1)W_2 + b_2, row by row", L.expand(b.mlp.B.name, keep=[b.ln2.out.name])
         - (E(b.ln2.out.name) * W_1 + sp.ones(T, 1) * b_1).applyfunc(relu) * W_2 - sp.ones(T, 1) * b_2,
         r"\mathrm{FF}(h)=\mathrm{ReLU}(h{W}_1+b_1)W_2+b_2"),
        ("Z = LN_f(H^L) W_out + b_out", L.expand(dec.logits.name, keep=[dec.final.out.name])
         - (E(dec.final.out.name) * E(head["W_out"].name) + sp.ones(T, 1) * E(head["b_out"].name)),
         r"Z={\mathrm{LN}}_f(H^L)W_{\mathrm{out}}+b_{\mathrm{out}}"),
        ("row t of P, the next token's distribution: P_ta = e^{Z_ta} / Σ_b e^{Z_tb}, over the v labels",
         L.expand(P.name, keep=[dec.logits.name]) - soft,
         r"p(x_{t+1}=a\mid x_{\le t})=\frac{e^{Z_{ta}}}{{\sum }_{b=1}^v{e}^{Z_{tb}}}"),
    ]


def stacked(n_blocks: int) -> tuple[bool, str]:
    """Whether a decoder of ``n_blocks`` blocks numbers them ℓ = 0 … n_blocks − 1, block ℓ reading H^(ℓ) and
    writing H^(ℓ+1) (§3's loop over blocks); with the rows it has."""
    L = Ledger(f"pre-norm decoder, {n_blocks} blocks, symbolic parameters")
    _, _, _, dec = symbolic_decoder(L, n_blocks=n_blocks)
    outs = [b.out.name for b in dec.blocks]
    reads = [f"H^({k})" if k == 0 else f"H^{{({k})}}" for k in range(n_blocks)]
    ok = outs == [f"H^{{({k + 1})}}" for k in range(n_blocks)] and all(
        set(L.entry_symbols(r)) & L.expand(b.ln1.out.name, keep=[r]).free_symbols for r, b in zip(reads, dec.blocks))
    return ok, f"block outputs {outs}"


def embedding_rows(v: int = 3, d: int = 2) -> list:
    """H^0 = one-hot(x) E selects the tokens' rows of a symbolic embedding table E (v×d) for the tokens (1, 0, 2):
    the difference from E's rows 1, 0, 2 (zero)."""
    E = sp.Matrix(v, d, lambda i, j: sp.Symbol(f"E_{{{i}{j}}}"))
    tokens = (1, 0, 2)
    onehot = sp.Matrix(len(tokens), v, lambda t, i: int(tokens[t] == i))
    return [onehot * E - sp.Matrix.vstack(*[E.row(i) for i in tokens])]


def two_token_ledger(*, residual: bool = True, first_value_zero: bool = False) -> tuple[Ledger, dict]:
    """§4: the two-token context AB with H = Q = K = V = I_2, causal attention, residual and identity readout."""
    L = Ledger("§4 two-token context AB" + ("" if residual else ", no residual")
               + (", first value zero" if first_value_zero else ""))
    H = L.input("H", sp.eye(2), note="rows: tokens A and B as basis vectors")
    W_Q = L.parameter("W_Q", sp.eye(2))
    W_K = L.parameter("W_K", sp.eye(2))
    W_V = L.parameter("W_V", sp.Matrix([[0, 0], [0, 1]]) if first_value_zero else sp.eye(2))
    head = blocks.attention_head(L, H, W_Q, W_K, W_V, orientation="in_out", mask="causal",
                                 names={"S_masked": "S_causal"})
    Hp = blocks.residual(L, "H'", H, head.O) if residual else head.O
    W_out = L.parameter("W_out", sp.eye(2), note="two-label identity readout")
    Z = blocks.linear(L, "Z", Hp, W_out, orientation="in_out")
    P = blocks.probabilities(L, Z)
    ce = blocks.cross_entropy(L, Z, targets=[1], positions=[1], name="loss")
    return L, {"head": head, "H'": Hp, "Z": Z, "P": P, "loss": ce.loss}


@derivation.section("§4 The forward pass by hand")
def forward_by_hand(s):
    L, r = two_token_ledger()
    s.use(L)
    head, Hp, P, loss = r["head"], r["H'"], r["P"], r["loss"]
    w = L.value(head.A.name)[1, 0]
    s.claim(r"\left(\begin{array}{cc}1/\sqrt{2}& -\infty \\ 0& 1/\sqrt{2}\end{array}\right)", head.S_masked,
            what="S_causal")
    s.claim("I/√2", head.S, names={"I": sp.eye(2)}, what="unmasked score matrix")
    s.claim("1", head.A[0, 0], what="position 1 attends only to itself", near="its attention weight is one")
    s.claim(r"\frac{1}{1+e^{1/\sqrt{2}}}", head.A[1, 0], what="w, weight on position 1 at position 2")
    s.claim("0.330238", head.A[1, 0], what="w")
    s.claim(r"\begin{array}{cc}1& 0\\ w& 1-w\end{array}", head.A, names={"w": w}, what="A")
    s.claim(r"\begin{array}{cc}2& 0\\ w& 2-w\end{array}", Hp, names={"w": w}, what="H' = H + AV")
    s.claim("(w,2-w)", Hp[1, :], names={"w": w}, what="second token after the residual")
    s.claim(r"\frac{1}{1+e^{-2(1-w)}}", P[1, 1], names={"w": w}, what="p(B|AB)")
    s.claim("0.792412", P[1, 1], what="p(B|AB)")
    s.claim("0.232674", loss, what="loss −log p(B|AB), nats")
    s.identity("rows of A sum to 1", *[sum(L.value(head.A.name).row(i)) - 1 for i in range(2)],
               at="rows are receiving positions")
    # The zero in the upper-right corner: the first row does not depend on the second token.
    Ls = Ledger("§4 with a symbolic input H")
    Hs = Ls.input("H", shape=(2, 2))
    hs = blocks.attention_head(Ls, Hs, Ls.parameter("W_Q", sp.eye(2)), Ls.parameter("W_K", sp.eye(2)),
                               Ls.parameter("W_V", sp.eye(2)), orientation="in_out", mask="causal")
    Hps = blocks.residual(Ls, "H'", Hs, hs.O)
    first = Ls.expand(Hps.name, values=True).row(0)
    second_token = set(Ls.entry_symbols("H").row(1))
    s.prove("the first representation does not depend on the second token",
            lambda: (not (first.free_symbols & second_token), f"H'[0,:] = {list(first)}"),
            at="rows are receiving positions",
            near="prevents the first representation from depending on the second token")
    Pv, Av = L.value(P.name), L.value(head.A.name)
    s.prove("the vocabulary probabilities are another normalization: none of them is an entry of A", lambda: (
        all(sp.N(p - a, 30) != 0 for p in Pv for a in Av), f"P = {[sp.N(p, 6) for p in Pv]}"),
        at="rows are receiving positions", near="The final vocabulary probabilities are a different normalization")
    # The intervention: the first value set to zero, keys (and queries) kept.
    Lz, rz = two_token_ledger(first_value_zero=True)
    s.agree("with the keys kept and the first value zeroed the attention weights stay as they were",
            rz["head"].A, head.A, at="intervention", near="the attention weights are unchanged")
    s.differ("… while the retrieved vectors change", rz["head"].O, head.O, by="0.1", at="intervention",
             near="and the retrieved vector changes")
    s.keep(ledger=L, parts=r, w=w)


@derivation.section("Checkpoints with answers")
def checkpoints(s):
    # 1. Shapes for T=4, d=6, d_k=2, d_v=3.
    L = s.ledger("one head at T=4, d=6, d_k=2, d_v=3")
    H = L.input("H", shape=(4, 6))
    head = blocks.attention_head(L, H, L.parameter("W_Q", shape=(6, 2)), L.parameter("W_K", shape=(6, 2)),
                                 L.parameter("W_V", shape=(6, 3)), orientation="in_out", mask="causal")
    for what, size in (("T", H.shape[0]), ("d", H.shape[1]), ("d_k", head.Q.shape[1]), ("d_v", head.V.shape[1])):
        s.given(sp.Integer(size), what=what, at="checkpoint 1")
    s.claim_shape("4×4", head.Q @ head.K.T, what="QKᵀ", at="checkpoint 1")
    s.claim_shape("4×3", head.O, what="AV", at="checkpoint 1")
    # 2. Remove the residual.
    Ln, rn = two_token_ledger(residual=False)
    s.use(Ln)
    w = Ln.value(rn["head"].A.name)[1, 0]
    s.claim("(w,1-w)", rn["H'"][1, :], names={"w": w}, what="last row without the residual", at="checkpoint 2")
    s.claim("1/[1+e^{2w-1}]", rn["P"][1, 1], names={"w": w}, what="p(B) without the residual", at="checkpoint 2")
    s.claim("0.584075", rn["P"][1, 1], what="p(B) without the residual", at="checkpoint 2")
    Lr, rr = two_token_ledger()
    s.claim("0.792412", rr["P"][1, 1], what="p(B|AB) with the residual", at="checkpoint 2")
    s.differ("the residual's contribution to p(B) is not a small perturbation: it moves p(B) by more than a tenth",
             rr["P"][1, 1], rn["P"][1, 1], by="0.1", at="checkpoint 2",
             near="is a computed contribution, not an assumed small perturbation")
    # 3. Set the first value to zero, keeping queries and keys.
    Lz, rz = two_token_ledger(first_value_zero=True)
    s.use(Lz)
    s.identity("attention stays A when the first value is zeroed (keys fixed)",
               Lz.value(rz["head"].A.name) - Lr.value(rr["head"].A.name), at="checkpoint 3", near="Attention stays $A$")
    s.claim("(0,2-w)", rz["H'"][1, :], names={"w": w}, what="last residual row with v_1 = 0", at="checkpoint 3")
    p_new, p_old = Lz.value(rz["P"].name)[1, 1], Lr.value(rr["P"].name)[1, 1]
    s.prove("its vocabulary probabilities change", lambda: (sp.N(p_new - p_old, 30) != 0,
                                                           f"p(B) {sp.N(p_old, 8)} → {sp.N(p_new, 8)}"),
            at="checkpoint 3", near="its vocabulary probabilities change")


@derivation.section("The practical session — Laboratory 4, part I")
def laboratory(s):
    L, r = two_token_ledger()
    s.use(L)
    s.claim("0.792412", r["P"][1, 1], what="p(B|AB), which the laboratory must recover by hand",
            at="reproducing §3.4.2")


@derivation.section("Key claims and status")
def key_claims(s):
    L, r = two_token_ledger()
    s.use(L)
    # The claims in words, each decided again here, in the table's order.
    A_sym = causal_weights(Ledger("causal attention over symbolic scores, T=3"))
    s.prove("every masked attention row is a distribution over the positions it may consult", lambda: (
        all(vanishes(sum(A_sym.row(i)) - 1) for i in range(3))
        and all(A_sym[i, j] == 0 for i in range(3) for j in range(i + 1, 3))
        and all(A_sym[i, j].is_positive for i in range(3) for j in range(i + 1)),
        "rows sum to 1 over s ≤ t, positive there and exactly 0 beyond"),
        near="Every masked attention row is a probability distribution over accessible positions")
    Ln = Ledger("LayerNorm of a symbolic row, d=3, no regulator")
    y = Ln.expand(blocks.layer_norm(Ln, Ln.input("h", shape=(1, 3)), eps=0, name="LN").out.name)
    s.identity("before gain and shift and with no regulator, the normalized row has zero sum and squared norm d",
               sum(y), sum(e**2 for e in y) - 3, near="a normalized vector has zero sum and squared norm")
    Lx = Ledger("h = (1, 3), no regulator")
    hx = Lx.input("h", [[1, 3]])
    rx = Lx.value(blocks.residual(Lx, "h+LN(h)", hx, blocks.layer_norm(Lx, hx, eps=0, name="LN").out).name)
    s.prove("the residual sum of the two-number example is off that sphere: nonzero sum, squared norm not d",
            lambda: (sum(rx) != 0 and sum(e**2 for e in rx) != rx.cols, f"h + LN(h) = {list(rx)}"),
            near="A residual sum need not remain on that sphere")
    s.claim("0.330238", r["head"].A[1, 0], what="w")
    s.claim("0.792412", r["P"][1, 1], what="p(B|AB)")
    s.claim("0.232674", r["loss"], what="loss, nats")
    Lz, rz = two_token_ledger(first_value_zero=True)
    s.agree("changing a value while its key stays leaves the attention weights as they were", rz["head"].A,
            r["head"].A, near="Changing a value with its key fixed leaves the attention weights unchanged")
    s.identity("without a nonlinearity the two feed-forward matrices make one affine map", linear_feed_forward_gap(),
               near="Without a nonlinearity the feed-forward matrices collapse to one affine map")


@derivation.section("What the week establishes")
def established(s):
    index_sets = softmax_index_sets()
    s.prove("the two softmaxes run over different index sets: positions for A, token labels for P",
            lambda: index_sets_differ(index_sets), near="The two softmaxes run over different index sets")
