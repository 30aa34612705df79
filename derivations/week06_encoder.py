"""Week 06 — the Transformer encoder, computed by hand: tokens, positions, attention, one block, task heads.

Source: seed handout ``004_daeab95066cb0286.txt`` (Week 06 notes), from "Words become positioned token
representations" to the end, one section per heading: token IDs and embeddings (Tables 7–8), sinusoidal positions at
the odd width D = 5, one and two heads (Tables 10–21), a pre-norm block and the final LayerNorm (Tables 23–31),
position, norm placement, task heads and masks (Table 33), the tutorial and patches. The parameters
(:func:`parameters`) and every printed value are read from the page, each claim's from its section.

Conventions read from the handout: rows are positions; weights are stored output × input (``orientation="out_in"``);
scores are divided by √3; masks are exact −∞; LayerNorm takes the population variance, ε = 10⁻⁵ inside the root,
γ = 1, β = 0; ReLU'(0) = 0; no √D embedding scale; only the MLP has biases. Tables printed to three significant
digits are checked at three. Table 34, the parameter counts 1,943 / 2,023 / 1,915 and the tutorial's settings come
from trained runs and are declared with ``section.reported``; Figures 4–6 and 8–11 are heatmaps of the ledgers.
"""

from __future__ import annotations

import re

import sympy as sp

from symseq import Derivation, Ledger, MaskError, blocks, exact, ops, relu
from symseq.derive import dot_product_variance, properties
from symseq.functions import partial
from symseq.numbers import short

derivation = Derivation("week06-encoder", title="Week 06 — Inside a Transformer encoder, computed by hand",
                        source="004_daeab95066cb0286.txt", description="tokens, odd-width positions, one and two "
                        "heads, a pre-norm block, final LayerNorm, masks and heads")

# --- the handout's example: its text, sizes and names ---
PREFIX, CONTINUATION = "A journey of a thousand miles begins", "with a single step."
T, K, D, D_K = 7, 9, 5, 3
EPS, ORIENT = exact("1e-5"), "out_in"
CLEARLY = "0.1"  # the least gap of two values the text calls distinct (by="0.01": a smaller change)
FEATURES, HEAD_FEATURES = [f"Feature {j}" for j in range(D)], [f"Feature {j}" for j in range(D_K)]
J_COLS = [f"j={j}" for j in range(D)]
TOKENS = blocks.tokenize(PREFIX)  # the handout's rule: lowercase, split at spaces, drop punctuation
VOCAB = blocks.Vocabulary.from_sequences(TOKENS, blocks.tokenize(CONTINUATION))  # K = 9, IDs from 0
IDS, ROWS = VOCAB.ids(TOKENS), [f"{t}: {w}" for t, w in enumerate(TOKENS)]
PAD_MASK = [1] * T + [0, 0]  # the prefix right-padded by two rows: 1 for a real token, 0 for padding
HEADS = [[f"W_{w}^{{[{i}]}}" for w in "QKV"] for i in (1, 2)]  # the page's names of each head's maps
HEAD_1 = {n: f"{n}^{{[1]}}" for n in "QKVSAO"}  # the one-head sections' names: q_6 is row 6 of Q^[1], S_60 of S^[1]
BLOCK = {n: f"{n}^{{(0)}}" for n in ("X", "U", "R", "B_att", "Z_mlp", "J_mlp", "B_mlp")}  # the block's names: u_6
SIZES = {"T": T, "K": K, "D": D, "d_k": D_K, "d_v": D_K}  # the sizes the page writes with symbols
MLP = ("W_1", "b_1", "W_2", "b_2")
PERMUTATION = (3, 0, 6, 1, 5, 2, 4)  # a fixed reordering of the seven rows: new row i is old row PERMUTATION[i]


@derivation.per_page
def parameters() -> dict:
    """The untrained parameters the page prints: E_vocab (Table 8, rows are token IDs), the heads' stored 3×5 maps
    (head 1's from its printed transposes, W_Qᵀ and W_Kᵀ on one line), the stored 5×6 W_O and the MLP (F = 4)."""
    page = derivation.whole_page
    p = {"E_vocab": sp.ImmutableMatrix([[exact(c) for c in row[-D:]] for row in page.table("Table 8")])}
    for n, near, k in zip(HEADS[0], (r"\mathbf W_Q^\top=", r"\mathbf W_Q^\top=", r"\mathbf W_V^\top="), (0, 1, 0)):
        p[n] = page.value(near=near, index=k).T
    return p | {n: page.value(n) for n in HEADS[1] + ["W_O", *MLP]}


def on(L: Ledger, *names: str) -> list:
    """The page's parameters ``names`` (see :func:`parameters`) as parameters of ledger ``L``."""
    return [L.parameter(n, parameters()[n]) for n in names]


def approximations(s, near: str) -> list[tuple[str, str]]:
    """(formula, value) of each ``\\(formula \\approx value\\)`` on the section's line holding ``near``."""
    inline = r"((?:(?!\\[()]).)+?)"  # text of one inline formula, up to its \approx or its closing \)
    return re.findall(r"\\\(" + inline + r"\\approx" + inline + r"\\\)", s.page.doc.line(s.page.line(near)))


def table(s, label: str, value, cols: list[str], *, what: str = ""):
    """Check the page's table ``label``, printed to three significant digits, one claim per entry."""
    return s.table(label, None, value, cols=cols, digits=3, exact=False, what=what)


# --- ledgers: positioned input, the heads on H^(0), the encoder block ---
def positioned_input(L: Ledger, ids=IDS) -> dict:
    """E_vocab, E_seq (lookup by ID), P (sinusoidal, T×D) and H^(0) = E_seq + P for the token IDs ``ids``."""
    E = L.parameter("E_vocab", parameters()["E_vocab"], note="Table 8, rows are token IDs")
    E_seq, P = blocks.embedding_lookup(L, E, ids), blocks.positions(L, len(ids), D)
    return {"E_vocab": E, "E_seq": E_seq, "P": P, "H0": blocks.add_positions(L, E_seq, P)}


@derivation.per_page
def input_ledger() -> tuple[Ledger, dict]:
    """Tokens to H^(0): small and exact (closed forms such as 1/5 + sin 3 are shown beside the decimals)."""
    L = Ledger("positioned input: E_seq = E_vocab[k_t], P sinusoidal, H^(0) = E_seq + P")
    return L, positioned_input(L)


@derivation.per_page
def attention_ledger() -> tuple[Ledger, dict]:
    """The standalone heads on H^(0): head 1 (unrestricted and causal), head 2, C = [O^[1] | O^[2]], B_att = C W_Oᵀ."""
    L = Ledger("one and two heads on H^(0), d_k = d_v = 3", exact_forms=False)
    r = positioned_input(L)
    heads, (W_O,) = [on(L, *h) for h in HEADS], on(L, "W_O")
    h1 = blocks.attention_head(L, r["H0"], *heads[0], orientation=ORIENT, tag="[1]")
    raw = L.define("QK^T", h1.Q @ h1.K.T, note="raw dot products q_t k_jᵀ, before dividing by √3")
    contrib = L.define("contrib_6", h1.A[6, :].T * h1.V, note="A_{6j} v_j for each source j (Table 14)")
    causal = blocks.scaled_dot_product(L, h1.Q, h1.K, h1.V, mask=blocks.masks.causal(T), tag="causal")
    h2 = blocks.attention_head(L, r["H0"], *heads[1], orientation=ORIENT, tag="[2]")
    C = L.define("C", ops.Concat([h1.O, h2.O], axis=1), note="head outputs side by side, T×6")
    B = blocks.linear(L, "B_att", C, W_O, orientation=ORIENT, note="attention branch C W_Oᵀ, T×5")
    return L, r | dict(h1=h1, h2=h2, raw=raw, contrib=contrib, causal=causal, C=C, B_att=B, heads=heads, W_O=W_O)


def block_ledger(title: str, *, norm="pre", permutation=None, block_masks=None, n_blocks=1, ids=IDS):
    """The encoder on H^(0) for the token IDs ``ids`` (or on Π H^(0)) with its final LayerNorm; a deeper stack
    reuses the one block's parameters at every depth."""
    L = Ledger(title, exact_forms=False)
    r = positioned_input(L, ids)
    H_in = r["H0"]
    if permutation is not None:
        Pi = ops.Const(properties.permutation_matrix(permutation), label="Π")
        H_in = L.define("ΠH^(0)", Pi @ r["H0"], note="rows of H^(0) reordered")
    heads, (W_O,), mlp = [on(L, *h) for h in HEADS], on(L, "W_O"), on(L, *MLP)
    ln = [tuple(L.parameter(f"{n}_{k}", [[v] * D]) for n, v in (("gamma", 1), ("beta", 0))) for k in (1, 2, "f")]
    block = blocks.BlockParams(heads, W_O, tuple(mlp), ln1=ln[0], ln2=ln[1])
    enc = blocks.encoder(L, H_in, [block] * n_blocks, orientation=ORIENT, eps=EPS, norm=norm, ln_final=ln[2],
                         names=blocks.ENCODER_NAMES, final=True, block_masks=block_masks)
    return L, r | dict(enc=enc, blk=enc.blocks[0])


@derivation.per_page
def walkthrough_block() -> tuple[Ledger, dict]:
    """The handout's pre-norm block on H^(0) with its final LayerNorm (N_layers = 1)."""
    return block_ledger("one pre-norm encoder block and the final LayerNorm")


def head_1(mask=None):
    """A builder ``f(L, X)`` of head 1's output on an input X (for :func:`properties.dependence`)."""
    return lambda L, X: blocks.attention_head(L, X, *on(L, *HEADS[0]), orientation=ORIENT, tag="[1]", mask=mask).O


def sparse_maps(s, head: int, row: str, at: str, *statements):
    """Head ``head``'s sparse maps on a symbolic input row ``row``: for each ``(statement, k, want)``, map k (W_Q,
    W_K, W_V) sends the row x to ``want(x)``."""
    x = sp.Matrix([sp.symbols(f"{row}_:{D}", real=True)])
    for statement, k, want in statements:
        s.identity(statement, x * parameters()[HEADS[head - 1][k]].T - sp.Matrix([want(list(x))]), at=at)


@derivation.section("Turn the completion into a sequence of token IDs")
def token_ids(s):
    s.note("The arrow before the continuation is not part of the input: the prefix alone is tokenised.")
    column = [row[1] for row in s.page.table("Table 7")]
    s.prove("the rule turns the prefix into the seven printed tokens (Table 7's input-token column)",
            lambda: (TOKENS == column, f"tokens = {TOKENS}"), at="input tokens")
    s.claim("7", len(TOKENS), what="T, positions in the prefix", at="input tokens", near=r"\(T=7\) positions")
    s.claim("6", len(set(TOKENS)), what="distinct types", at="vocabulary", near="six distinct token types")
    s.claim("9", len(VOCAB), what="K, with with, single, step", at="vocabulary", near=r"vocabulary size \(K=9\)")
    s.claim("9", len(VOCAB), what="K, vocabulary entries", at="three counts", near=r"\(K=9\) vocabulary entries")
    s.given(D, what="D, representation features", at="three counts")
    s.claim(sp.ImmutableMatrix(T, 1, IDS), at="Table 7", what="token ID")
    s.prove("both occurrences of a have the same ID but different positions", lambda: (
        IDS[0] == IDS[3] and TOKENS[0] == TOKENS[3] == "a", f"k_0 = k_3 = {IDS[0]}"), at="Table 7",
        near="The two occurrences of a have the same ID")
    # the vocabulary in another order (new ID i holds the old entry order[i]), the lookup's IDs relabelled to match
    order, Lv = [8, 6, 4, 2, 0, 1, 3, 5, 7], Ledger("the vocabulary in another order, IDs relabelled")
    E = Lv.parameter("E_vocab", parameters()["E_vocab"].extract(order, list(range(D))))
    s.agree("the order of the vocabulary is arbitrary: reordered entries with matching IDs select the same rows",
            blocks.embedding_lookup(Lv, E, [order.index(k) for k in IDS]), input_ledger()[1]["E_seq"],
            at="three counts", near="The order of vocabulary entries is arbitrary")


@derivation.section("Look up a five-coordinate embedding for each token")
def embeddings(s):
    L, r = input_ledger()
    s.use(L, sizes=SIZES)
    E_seq = r["E_seq"]
    s.note("Table 8 is the handout's chosen, untrained embedding table: an input, not checked against itself.")
    s.show_table("Table 8", r["E_vocab"], rows=[f"{k} {w}" for k, w in enumerate(VOCAB.tokens)], cols=J_COLS,
                 digits=None)
    s.claim_shape("1×D", E_seq[0, :], dims={"D": D}, what="e_t, one row of E_seq", at="lookup")
    s.given(r["E_vocab"], what="E_vocab, the embedding table", at="Table 8")
    s.claim_shape("7×5", E_seq, what="E_seq, one row per occurrence", at="E_seq")
    for t, which in ((0, "first"), (3, "second")):
        s.claim_line(r"\mathbf e_0=\mathbf e_3=", (E_seq[t, :], f"e_{t}, the {which} a"), at="e_0 = e_3", exact=True)
    s.agree("the first and fourth rows of E_seq are equal (lookup alone carries no position)", E_seq[0, :],
            E_seq[3, :], at="e_0 = e_3", near="their values match exactly")
    rows_a = {IDS[t] for t, w in enumerate(TOKENS) if w == "a"}  # the vocabulary rows the occurrences of a select
    s.prove("both occurrences of a select the same vocabulary row", lambda: (len(rows_a) == 1, f"rows {rows_a}"),
            at="Figure 4", near="Both occurrences of a select the same vocabulary row")
    s.heatmap("Figure 4", E_seq, rows=ROWS, cols=J_COLS, title="Embedding lookup: seven rows of five features")


@derivation.section("Supply position as a second vector")
def position_vectors(s):
    P, omega = input_ledger()[1]["P"], blocks.angular_frequencies(D)
    pairs = [(t, u) for t in range(T) for u in range(t + 1, T)]
    s.differ("each position gets its own vector: every two rows of P differ", [P[t, :] for t, _ in pairs],
             [P[u, :] for _, u in pairs], by=CLEARLY, at="positional encoding",
             near="a token appearing elsewhere receives a different position vector")
    halves = [sp.floor(sp.Rational(j, 2)) for j in range(D)]
    shared = all(omega[2 * m] == omega[2 * m + 1] for m in range(D // 2))
    s.prove(r"\lfloor j/2\rfloor is the integer part of j/2", lambda: (
        halves == [j // 2 for j in range(D)] and shared, f"⌊j/2⌋ = {halves} for j = 0, …, {D - 1}"),
        what="2m and 2m + 1 share m, so ω_j", at="angular frequencies", near="denote the integer part of")
    s.prove("neighbouring sine and cosine features share a frequency", lambda: (shared, f"ω = {omega}"),
            at="angular frequencies", near="Neighboring sine/cosine coordinates share a frequency")
    s.identity(r"\omega_j = 10000^{-2\lfloor j/2\rfloor/D}",
               *(omega[j] - sp.Integer(10000) ** sp.Rational(-2 * (j // 2), D) for j in range(D)),
               what=f"the angular frequencies at D = {D}", at="angular frequencies")
    s.given(D, what="D, the odd width", at="p_t at D = 5")  # the text sets the width, then prints every p_t at once
    for t in range(T):
        s.claim(r"(\sin t, \cos t, \sin\frac{t}{10000^{2/5}}, \cos\frac{t}{10000^{2/5}}, \sin\frac{t}{10000^{4/5}})",
                P[t, :], names={"t": sp.Integer(t)}, what=f"p_{t} from ω_j = 10000^(−2⌊j/2⌋/5)", at="p_t at D = 5")
    s.prove("the first pair turns fastest, the second pair more slowly and the last sine more slowly still", lambda: (
        omega[0] > omega[2] > omega[4], f"ω_0 = {omega[0]}, ω_2 = {omega[2]}, ω_4 = {omega[4]}"), at="position zero",
        near="The second pair changes more slowly")
    s.claim(P[0, :], name="p_0", what="p_0", at="position zero")
    s.claim(P[3, :], name="p_3", digits=3, what="p_3", at="position three")
    # a complete (sin, cos) pair at angle (t + Δ)ω is the pair at tω turned by the angle Δω
    tt = sp.Symbol("t", real=True)
    pair = lambda a: sp.Matrix([[sp.sin(a), sp.cos(a)]])  # noqa: E731
    turn = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])  # noqa: E731
    s.identity("each complete pair at t + Δ is a linear map of the pair at t with coefficients depending on Δ only",
               *((pair((tt + d) * w) - pair(tt * w) * turn(d * w)).applyfunc(lambda e: sp.expand_trig(sp.expand(e)))
                 for w in (omega[0], omega[2]) for d in (1, 2, 3)), at="even-width pairs")
    s.differ("the unpaired last sine has no fixed one-coordinate shift rule: P[t+1,4]/P[t,4] changes with t",
             P[2, 4] / P[1, 4], P[3, 4] / P[2, 4], by=CLEARLY, at="odd width")
    s.claim_shape("7×5", P, what="P, seven positions by five features", at="Figure 5")
    s.agree("the position vectors depend on the position, not on the word there", positioned_input(
        Ledger("positions under other words"), [8, 7, 6, 5, 4, 3, 2])["P"], P, at="Figure 5",
        near="These vectors depend on position, not on which word")
    s.heatmap("Figure 5", P, rows=[str(t) for t in range(T)], cols=J_COLS,
              title="Sinusoidal positions, D = 5 (the last sine unpaired)")


@derivation.section("Add token identity and position coordinate by coordinate")
def add_position(s):
    L, r = input_ledger()
    H0, E_seq, P = r["H0"], r["E_seq"], r["P"]
    s.claim_shape("7×5", H0, what="H^(0) = E_seq + P", at="H^(0)")
    for k, (node, what) in enumerate(((E_seq[0, :], "e_0"), (P[0, :], "p_0"), (H0[0, :], "h_0^(0) = e_0 + p_0"))):
        s.claim_line(r"\mathbf h_0^{(0)} &=", (node, what), at="h_0^(0)", first=k, exact=None if k == 1 else True)
    s.claim(H0[3, :], name="h_3^{(0)}", digits=3, what="h_3^(0)", at="h_3^(0)")
    for j, (formula, value) in enumerate(approximations(s, "its first coordinate is")):
        s.claim(formula, H0[3, j], what=f"h_{{3,{j}}}^(0)", at="h_3^(0)")
        s.claim(value, H0[3, j], what=f"h_{{3,{j}}}^(0) = {formula}", at="h_3^(0)")
    s.differ("the two occurrences of a are now distinct rows", H0[0, :], H0[3, :], by=CLEARLY, at="h_3^(0)",
             near="The two a occurrences are now distinct")
    s.agree("… while their token embedding is still the one shared row", E_seq[0, :], E_seq[3, :], at="h_3^(0)",
            near="their underlying token embedding is still shared")
    Hv, Pv, Ev = (L.value(n.name) for n in (H0, P, E_seq))
    apart = Ev.row(0) == Ev.row(3) and Pv.row(0) != Pv.row(3) and Hv.row(0) != Hv.row(3)
    s.prove("the second a combines the same embedding with a different position vector", lambda: (
        Ev.row(0) == Ev.row(3) and Pv.row(0) != Pv.row(3)), at="h_3^(0)",
        near="the same embedding combines with a different positional vector")
    rows_a = {IDS[t] for t, w in enumerate(TOKENS) if w == "a"}
    s.prove("both occurrences of a select the same vocabulary row", lambda: (len(rows_a) == 1, f"rows {rows_a}"),
            at="Pause and predict: the second a", near="Both occurrences select the same vocabulary row")
    s.prove("e_0 = e_3 but p_0 ≠ p_3, hence h_0^(0) ≠ h_3^(0)", lambda: apart, at="Pause and predict: the second a",
            near="its two occurrences have different positioned representations")
    s.note("The embeddings are not multiplied by √D before adding positions, as the original Transformer does.")
    s.heatmap("Figure 6", H0, rows=ROWS, cols=J_COLS, title="H^(0) = E_seq + P: positioned inputs")


@derivation.section("What this matrix is ready to do—and what it has not done")
def ready(s):
    r = input_ledger()[1]
    for name, key, shape in (("E_vocab", "E_vocab", "9×5"), ("E_seq", "E_seq", "7×5"), ("P", "P", "7×5"),
                             ("H^(0)", "H0", "7×5")):
        s.claim_shape(shape, r[key], what=name, at=f"Table 9, the {name} line")  # its own place: not shared
    W_o = s.ledger("a vocabulary head's stored weight").parameter("W_o", shape=(K, D))
    s.claim_shape("K×D", W_o, dims={"K": K, "D": D}, what="vocabulary head W_o (stored)", at="vocabulary head")
    s.claim_shape("9×5", W_o, what="vocabulary head W_o (stored)", at="vocabulary head")
    s.claim("6", VOCAB.id("with"), what="ID of with, the first continuation", at="desired continuation")
    s.claim_shape("7×5", r["H0"], what="the positioned input H^(0), the start of Figure 7's route", at="Figure 7")
    Le = Ledger("positioned rows from a symbolic embedding table")
    E_seq = blocks.embedding_lookup(Le, Le.parameter("E_vocab", shape=(K, D)), IDS)
    H = Le.expand(blocks.add_positions(Le, E_seq, blocks.positions(Le, T, D)).name, values=True)
    s.prove("each positioned row depends only on its own token's embedding and its position", lambda: (
        all(H.row(t).free_symbols == set(Le.entry_symbols("E_vocab").row(k)) for t, k in enumerate(IDS)),
        "row t of H^(0) involves row k_t of E_vocab and no other"), at="not yet contextual",
        near="each row depends only on its selected embedding and position")


@derivation.section("One attention head: give the same input three different roles")
def three_roles(s):
    L, r = attention_ledger()
    s.use(L)
    h1, maps = r["h1"], tuple(zip(r["heads"][0], ("W_Q", "W_K", "W_V")))
    s.given(h1.Q.shape[1], h1.V.shape[1], what=("d_k", "d_v"), at="one head")
    for W, n in maps:
        s.claim_shape("3×5", W, what=f"{n} stored output × input", at="projection maps")
        s.claim_shape("5×3", W.T, what=f"{n}ᵀ, the right multiplier", at="projection maps")
    s.given(*(W.T for W, _ in maps), what=tuple(f"{n}ᵀ as printed" for _, n in maps), at="projection maps")
    s.claim_shape("7×5", r["H0"], what="the positioned input H^(0)", at="route of Figure 7")
    s.claim_shape("5×3", maps[0][0].T, what="Wᵀ, the right factor of each product (7×5)(5×3)", at="route of Figure 7")
    for M, n in ((h1.Q, "Q_att"), (h1.K, "K_att"), (h1.V, "V_att")):
        s.claim_shape("7×3", M, what=f"{n} = H^(0) Wᵀ, (7×5)(5×3)", at="projection maps")
    s.given(K, what="K, beside K_att", at="one head")
    s.claim("√3", sp.sqrt(D_K), what="√d_k", at="route of Figure 7", near=r"divides the scores by \(\sqrt3\)")
    # head 1 with W_V left symbolic: the weights involve none of its entries, the output all of them
    Lw = Ledger("head 1 on a symbolic input with symbolic value weights, T = 3")
    hw = blocks.attention_head(Lw, Lw.input("X", shape=(3, D)), *on(Lw, *HEADS[0][:2]),
                               Lw.parameter("W_V", shape=(D_K, D)), orientation=ORIENT)
    W_V = set(Lw.entry_symbols("W_V"))
    in_A, in_O = (set().union(*(e.free_symbols for e in Lw.expand(n.name, values=True))) for n in (hw.A, hw.O))
    s.prove("queries and keys alone make the weights; the values supply the content of the output", lambda: (
        not (in_A & W_V) and W_V <= in_O, "A involves no entry of W_V; O involves every one"), at="projection maps",
        near="Queries and keys together determine the weights")
    sparse_maps(s, 1, "h", "projection maps", ("q_t = (h_{t,0}, h_{t,1}, h_{t,2})", 0, lambda x: x[:3]),
                ("k_t = ((h_{t,0}+h_{t,3})/2, h_{t,1}, (h_{t,2}+h_{t,4})/2)", 1,
                 lambda x: [(x[0] + x[3]) / 2, x[1], (x[2] + x[4]) / 2]),
                ("v_t = (h_{t,0}, h_{t,2}, (h_{t,3}+h_{t,4})/2)", 2, lambda x: [x[0], x[2], (x[3] + x[4]) / 2]))
    s.claim_line("the first a row is", (r["H0"][0, :], "h_0^(0), the first a"), (h1.K[0, :], "k_0"),
                 (h1.V[0, :], "v_0"), at="first a", exact=True)
    for label, node, what in (("Table 10", h1.Q, "query"), ("Table 11", h1.K, "key"), ("Table 12", h1.V, "value")):
        table(s, label, node, HEAD_FEATURES, what=what)


@derivation.section("Follow the “begins” query through seven matches")
def begins_query(s):
    s.use(attention_ledger()[0], names=HEAD_1, sizes=SIZES)
    r = attention_ledger()[1]
    h1, raw, root3 = r["h1"], r["raw"], sp.sqrt(D_K)
    s.claim(h1.Q[6, :], name="q_6", what="q_6", at="begins query")
    s.claim_line(r"\mathbf k_0=(", (h1.K[0, :], "k_0"), first=-1, exact=True, at="score of source 0")
    terms = [(x[i, j], f"{n}_{{{i},{j}}}") for j in range(D_K) for x, n, i in ((h1.Q, "q", 6), (h1.K, "k", 0))]
    s.claim_line(r"\mathbf q_6\mathbf k_0^\top", *terms, (raw[6, 0], "q_6 k_0ᵀ"), at="score of source 0")
    # √3 is printed three times (the scale, the S_6j formula, the S_60 value): three places, none shared
    s.claim("√3", root3, what="√d_k", at="scaled score, √d_k")
    s.claim("√3", root3, what="the divisor of S_6j", at="scaled score, S_6j")
    s.claim_line(r"S_{60}\approx", (raw[6, 0], "q_6 k_0ᵀ in S_60"), at="scaled score", first=1)
    s.claim("√3", root3, what="the divisor of S_60", at="scaled score, S_60")
    s.claim(h1.S[6, 0], what="S_60", at="score of source 0", near=r"S_{60}\approx")
    s.agree("S = Q_att K_attᵀ/√d_k with d_k = 3, the query/key width", h1.S * root3, raw, at="scaling")
    s.claim("d_k", dot_product_variance(D_K), names={"d_k": sp.Integer(D_K)}, what="Var(q·k)", at="scaling")
    s.claim("1", dot_product_variance(D_K, scaled=True), what="Var(q·k/√d_k)", at="scaling", near="gives variance one")
    table(s, "Table 13", ops.Concat([raw[6, :], h1.S[6, :], h1.A[6, :]], axis=0).T, ["Raw dot product", "S_6j", "A_6j"])


@derivation.section("Normalize across sources, not across features")
def normalize_sources(s):
    s.use(attention_ledger()[0], names=HEAD_1, sizes=SIZES)
    h1 = attention_ledger()[1]["h1"]
    s.claim(h1.A[6, :], name="A_{6,:}", digits=3, what="A_{6,:}", at="row softmax")
    shifted = h1.S[6, :] - h1.S[6, 6]  # m_6 = S_66: ReLU(S_6j − m_6) = 0 for every j says it is the row maximum
    e = ops.apply(sp.exp, shifted)
    s.agree("subtracting the row maximum gives the same distribution", e / ops.Sum(e, axis=1), h1.A[6, :],
            at="stable softmax", near="so this is the same distribution")
    top = sorted(s.values.numeric(shifted)[0], reverse=True)
    s.prove("after the shift the largest exponent is zero and every other one is negative", lambda: (
        top[0] == 0 and top[1] < 0, f"S_6j − m_6 ≤ {short(top[1], 3)} for j ≠ 6"), at="stable softmax",
        near="The largest exponent is now zero")
    s.agree("the full-precision weights of every query row sum to one", ops.Sum(h1.A, axis=1), sp.ones(T, 1),
            at="row softmax", near="Their full-precision sum is one")
    by_score, by_weight = (sorted(range(T), key=s.values.numeric(x[6, :])[0].__getitem__) for x in (h1.S, h1.A))
    s.prove("a larger score receives a larger weight: the begins row's weights rank the sources as its scores do",
            lambda: (by_score == by_weight, f"sources by score: {by_score}"), at="row softmax",
            near="a larger score receives a larger weight")
    raised = ops.SoftmaxRows(h1.S[6, :] + ops.Const(sp.Matrix([[sp.Rational(1, 10)] + [0] * (T - 1)]), label="e_0/10"))
    s.differ("raising the score of one source changes every other weight of the row too",
             [raised[0, j] for j in range(1, T)], [h1.A[6, j] for j in range(1, T)], by="1e-4", at="row softmax",
             near="Changing one source score changes the other normalized weights too")
    gap = sum(s.page.value("A_{6,:}")) - 1
    s.prove("the weights as printed, rounded, add up to slightly more than one", lambda: (
        0 < gap < sp.Rational(1, 1000), f"Σ printed A_6j − 1 = {gap}"), at="row softmax",
        near="a sum of rounded values may differ slightly")


@derivation.section("Use each weight to scale an entire value vector")
def weighted_values(s):
    s.use(attention_ledger()[0], names=HEAD_1, sizes=SIZES)
    r = attention_ledger()[1]
    h1, contrib = r["h1"], r["contrib"]
    for k, (node, what, options) in enumerate(((h1.A[6, 0], "A_60", {}), (h1.V[0, :], "v_0", {"exact": True}),
                                               (contrib[0, :], "A_60 v_0", {"digits": 3}))):
        s.claim_line(r"A_{60}\mathbf v_0", (node, what), **options, at="first source", first=k)
    s.claim(h1.O[6, :], name="o_6", near=r"\mathbf o_6\approx", digits=3, what="o_6", at="begins output")
    table(s, "Table 14", contrib, [f"Contribution {j}" for j in range(D_K)], what="A_6j v_j")
    s.agree("the column sums of Table 14 are o_6", ops.Sum(contrib, axis=0), h1.O[6, :], at="Table 14")
    weights, col0 = s.values.numeric(h1.A[6, :])[0], s.values.numeric(contrib[:, 0])[0]
    s.prove("the weights are nonnegative but the contributions to a feature have both signs, so they cancel",
            lambda: (min(weights) >= 0 and min(col0) < 0 < max(col0) and abs(sum(col0)) < sum(map(abs, col0)),
                     f"feature 0: |Σ| = {short(abs(sum(col0)), 3)} < Σ|·| = {short(sum(map(abs, col0)), 3)}"),
            at="Table 14",
            near="value coordinates can be negative, so contributions can cancel")
    s.heatmap("Figure 8", ops.Concat([contrib, h1.O[6, :]], axis=0), rows=ROWS + ["sum: o_6"], cols=HEAD_FEATURES,
              title="Weighted value vectors for the begins query")


@derivation.section("Stack the same calculation for all seven queries")
def all_queries(s):
    h1 = attention_ledger()[1]["h1"]
    s.claim("√3", sp.sqrt(D_K), what="√d_k in S = Q Kᵀ/√3", at="matrix form")
    s.claim_shape("7×7", h1.S, what="S = Q_att K_attᵀ/√3", at="matrix form", near=r"{\sqrt3} \in\mathbb R^{7\times7}")
    s.claim_shape("7×7", h1.A, what="A = softmax_rows(S)", at="matrix form",
                  near=r"\operatorname{softmax}_{\mathrm{rows}}(\mathbf S) \in\mathbb R^{7\times7}")
    s.claim_shape("7×3", h1.O, what="O = A V_att", at="matrix form")
    s.claim_shape("7×3", h1.Q, what="Q_att in the score product (7×3)(3×7)", at="score product")
    s.claim_shape("3×7", h1.K.T, what="K_attᵀ in the score product", at="score product")
    s.claim_shape("7×7", h1.A, what="A in the value product (7×7)(7×3)", at="value product")
    s.claim_shape("7×3", h1.V, what="V_att in the value product", at="value product")
    s.claim_shape("7×3", h1.O, what="the features this one head returns", at="one head's output")
    s.differ("another query over the same keys and values gets other weights (miles against begins)", h1.A[5, :],
             h1.A[6, :], by="0.01", at="matrix form",
             near="a different query induces different weights, even though it reads the same keys and values")
    scores = s.values.numeric(h1.S)[0]
    s.prove("scores can be negative and are no probabilities: a row of S does not sum to one", lambda: (
        min(scores) < 0 and abs(sum(scores[-T:]) - 1) > 0.1, f"min S = {short(min(scores), 3)}, Σ_j S_6j = "
        f"{short(sum(scores[-T:]), 3)}"), at="Figure 9", near="Scores can be negative")
    s.heatmap("Figure 9", h1.S, rows=ROWS, cols=ROWS, title="Scaled scores S: queries × sources")
    s.heatmap("Figure 10", h1.A, rows=ROWS, cols=ROWS, title="Attention weights A = softmax_rows(S)")
    table(s, "Table 15", h1.O, HEAD_FEATURES, what="one-head output")


@derivation.section("Change visibility with a mask")
def causal_mask(s):
    r = attention_ledger()[1]
    h1, causal, allowed = r["h1"], r["causal"], blocks.masks.causal(T)
    s.given(0, what="M_tj for a permitted source (j ≤ t)", at="mask")
    s.claim("0", causal.A[1, 2], what="exp(−∞), an excluded source's weight", at="mask", near=r"\(\exp(-\infty)=0\)")
    s.claim_line("Its causal weights are approximately", (causal.A[1, :], "causal A_{1,:}"), first=-1, digits=3,
                 at="journey query")
    table(s, "Table 16", ops.Concat([h1.A[1, :].T, causal.A[1, :].T], axis=1), ["Unrestricted A_1j", "Causal A_1j"])
    s.agree("at begins (t = 6) the causal and unrestricted rows are identical", causal.A[6, :], h1.A[6, :], at="t = 6")
    excluded = ops.Const(sp.Matrix(T, T, lambda t, j: 1 if j > t else 0))  # 1 where source j > t is excluded
    s.agree("excluded sources get weight exactly zero and each allowed row sums to one",
            [causal.A * excluded, ops.Sum(causal.A, axis=1)], [sp.zeros(T, T), sp.ones(T, 1)], at="Figure 11",
            near="Allowed sources are renormalized to sum to one")
    s.differ("zeroing the excluded weights of the unrestricted journey row instead leaves a total well below one",
             h1.A[1, 0] + h1.A[1, 1], 1, by=CLEARLY, at="mask", near="would leave the wrong total")
    s.prove("every query may read itself, so the causal mask leaves no row without a source", lambda: (
        blocks.masks.empty_rows(allowed) == [] and all(allowed[t, t] for t in range(T)),
        "the diagonal of the 7×7 causal mask is allowed"), at="mask", near="so no row is fully masked")
    dep_c, dep_u = (properties.dependence(head_1(mask), T, D).zero[1][2:] for mask in ("causal", None))
    s.prove("the causal output at position one does not depend on input rows 2–6; the unrestricted one does",
            lambda: (all(dep_c) and not any(dep_u), "∂o_1/∂x_j for j = 2, …, 6: exactly 0 with the causal mask, "
                     "nonzero without it"), at="information boundary")
    s.heatmap("Figure 11", causal.A, rows=ROWS, cols=ROWS, allowed=allowed,
              title="Causal attention weights (crosses: excluded sources)")


@derivation.section("Two heads, two sets of projection parameters")
def two_heads(s):
    s.use(attention_ledger()[0])
    r = attention_ledger()[1]
    h1, h2, maps = r["h1"], r["h2"], r["heads"][1]
    s.given(T, D, h2.Q.shape[1], h2.V.shape[1], what=("T", "D", "d_k of head 2", "d_v of head 2"), at="head 2")
    s.claim("√3", sp.sqrt(h2.Q.shape[1]), what="√d_k of both heads", at="two heads")
    s.given(*maps, what=tuple(f"W_{w}^[2] as printed" for w in "QKV"), at="head 2 maps")
    s.claim_shape("3×5", maps[0], what="each stored map of head 2", at="head 2 maps")
    s.claim_shape("5×3", maps[0].T, what="its right-multiplication transpose", at="head 2 maps")
    sparse_maps(s, 2, "h_6", "begins row", ("q_6^[2] = (h_63, h_64, 0.5 h_60 + 0.5 h_61)", 0,
                                            lambda x: [x[3], x[4], (x[0] + x[1]) / 2]))
    s.claim_line(r"\mathbf q_6^{[2]}&=", (h2.Q[6, :], "q_6^[2]"), at="begins row", first=2)
    sparse_maps(s, 2, "h_6", "begins row", ("v_6^[2] = (h_61, h_63, 0.5 h_60 + 0.5 h_64)", 2,
                                            lambda x: [x[1], x[3], (x[0] + x[4]) / 2]))
    s.claim_line(r"\mathbf q_6^{[2]}&=", (h2.V[6, :], "v_6^[2]"), at="begins row", first=5)
    weights = ops.Concat([h1.A[6, :].T, h2.A[6, :].T], axis=1)
    table(s, "Table 17", weights, ["Head 1 weight", "Head 2 weight"])
    s.agree("each column of Table 17 sums to one", ops.Sum(weights, axis=0), sp.ones(1, 2), at="Table 17")
    spread = [max(w) - min(w) for w in (s.values.numeric(h.A[6, :])[0] for h in (h1, h2))]
    s.prove("the second head spreads the begins query's weight more evenly than the first", lambda: (
        spread[1] < spread[0], f"max − min: head 2 {short(spread[1], 3)}, head 1 {short(spread[0], 3)}"),
        at="Table 17", near="The second head assigns a more even distribution")
    s.claim_line(r"\mathbf o_6^{[1]}\approx", (h1.O[6, :], "o_6^[1]"), (h2.O[6, :], "o_6^[2]"), at="o_6", digits=3)
    s.differ("the two heads' outputs differ, and so do their source weights and their value rows",
             [h1.O[6, :], h1.A[6, :], h1.V], [h2.O[6, :], h2.A[6, :], h2.V], by="0.01", at="o_6",
             near="The values differ because both the source weights and the value projections differ")


@derivation.section("Inspect all seven output rows from both heads")
def both_heads(s):
    s.use(attention_ledger()[0])
    r = attention_ledger()[1]
    table(s, "Table 18", r["h1"].O, HEAD_FEATURES, what="head 1 output")
    table(s, "Table 19", r["h2"].O, HEAD_FEATURES, what="head 2 output")


@derivation.section("Join features without joining positions")
def join_features(s):
    r = attention_ledger()[1]
    C, h1, h2 = r["C"], r["h1"], r["h2"]
    s.claim_shape("7×6", C, what="C = [O^[1] | O^[2]]", at="concatenation")
    s.claim_line(r"\mathbf c_6\approx", (C[6, :], "c_6"), digits=3, at="concatenation")
    s.agree("the first three columns of C are the first head's output, the next three the second head's",
            [C[:, :3], C[:, 3:]], [h1.O, h2.O], at="concatenation", near="The first three columns belong to head 1")
    s.claim("14", ops.Concat([h1.O, h2.O], axis=0).shape[0], what="rows if stacked along positions", at="concatenation")


@derivation.section("A linear output projection returns to model width")
def output_projection(s):
    s.use(attention_ledger()[0])
    r = attention_ledger()[1]
    C, B, W_O, h1, h2 = r["C"], r["B_att"], r["W_O"], r["h1"], r["h2"]
    s.claim_shape("5×6", W_O, what="W_O (stored)", at="output projection")
    s.claim_shape("7×5", B, what="B_att = C W_Oᵀ", at="output projection")
    s.given(W_O, what="W_O as printed", at="output projection")
    s.agree("B_{att,6,0} = c_{6,0} + 0.5 c_{6,3} (row 0 of W_O)", B[6, 0], C[6, 0] + C[6, 3] / 2, at="B_att,6,0",
            near=r"B_{\mathrm{att},6,0}=c_{6,0}+0.5c_{6,3}")
    s.claim_line(r"B_{\mathrm{att},6,0}=c_{6,0}", (C[6, 0], "c_{6,0}"), (W_O[0, 3], "W_O,0,3"), (C[6, 3], "c_{6,3}"),
                 (B[6, 0], "B_att,6,0"), at="B_att,6,0", first=1)
    s.claim_line(r"\mathbf b_{\mathrm{att},6}\approx", (B[6, :], "b_att,6"), digits=3, at="begins row")
    table(s, "Table 20", B, FEATURES, what="attention branch")
    # each stage's row of Table 21 prints one shape for every object of the stage (both heads)
    both = ((1, h1), (2, h2))
    shapes = [("7×5", r["H0"], "positioned input H^(0)", "Positioned input")]
    shapes += [("7×3", getattr(h, n), f"{n}^[{i}]", "queries") for i, h in both for n in "QKV"]
    shapes += [("7×7", h.A, f"A^[{i}]", "attention weights") for i, h in both]
    shapes += [("7×3", h.O, f"O^[{i}]", "Each head’s output") for i, h in both]
    shapes += [("7×6", C, "C", "Concatenated outputs"), ("6×5", W_O.T, "W_Oᵀ", "right multiplier"),
               ("7×5", B, "B_att", "Attention branch")]
    for shape, obj, what, stage in shapes:
        s.claim_shape(shape, obj, what=what, at=f"Table 21, {stage}")


@derivation.section("How this teaching example relates to standard implementations")
def standard_implementations(s):
    r = attention_ledger()[1]
    s.given(D, D, len(r["heads"]), D, r["h1"].Q.shape[1], what=("D", "embed_dim", "num_heads", "D in D→3",
                                                                "d_k in 5→3"), at="D = 5, two heads")
    s.claim("6", r["C"].shape[1], what="joined width", at="D = 5, two heads", near=r"a \(6\to5\) output linear map")
    s.given(r["B_att"].shape[1], what="D in 6→5", at="D = 5, two heads")
    s.note("torch's nn.MultiheadAttention splits the model width D equally across heads and refuses D = 5 with two "
           "heads; the ledger's heads take any widths (the torch cross-checks live with the attention blocks' tests).")


@derivation.section("Inside a complete Transformer encoder: read the block as two updates")
def block_updates(s):
    L, r = walkthrough_block()
    s.use(L)
    blk = r["blk"]
    for obj, what in ((blk.ln1.out, "X = LN_1(H^(0))"), (blk.mha.out, "B_att = MHA(X)"), (blk.U, "U"),
                      (blk.ln2.out, "R = LN_2(U)"), (blk.mlp.B, "B_mlp = MLP(R)"), (blk.out, "H^(1)")):
        s.claim_shape("7×5", obj, what=what, at="block equations")
    s.agree("the first addition carries the block input: U minus the attention branch is the positioned input",
            blk.U - blk.mha.out, r["H0"], at="block equations", near="The first addition preserves the block input")
    s.agree("the second addition carries U: the block output minus the MLP branch is U", blk.out - blk.mlp.B, blk.U,
            at="block equations", near="the second preserves the intermediate result")
    s.differ("neither addition carries the normalized input of its branch", [blk.U, blk.out],
             [blk.ln1.out + blk.mha.out, blk.ln2.out + blk.mlp.B], by="0.01", at="block equations",
             near="Neither addition carries the normalized branch input")
    W_1, _, W_2, _ = on(s.ledger("the MLP's stored weights"), *MLP)
    s.claim_shape("4×5", W_1, what="W_1 (F = 4 hidden features from D = 5)", at="MLP shapes", near=r"\(W_1\) has shape")
    s.claim_shape("5×4", W_2, what="W_2", at="MLP shapes", near=r"\(W_1\) has shape")
    F = sp.Integer(blk.mlp.Z.shape[1])  # the MLP hidden width (rows of W_1), stated in the caption and the text
    s.claim("4", F, what="F in Figure 13", near="two width-three heads, and F = 4")
    s.claim("4", F, what="F, the MLP hidden width (rows of W_1)", near=r"an MLP hidden width \(F=4\)")
    for fig, after in (("Figure 13", "; the numerical walkthrough"), ("Figure 14", ". Original course figure")):
        s.claim("7", blk.out.shape[0], what=f"T in {fig}", near="Here T = 7 and D = 5" + after)
        s.claim("5", blk.out.shape[1], what=f"D in {fig}", near="Here T = 7 and D = 5" + after)
    s.given(EPS, what="ε", at="notation")
    s.note("LN_1, LN_2 and the final LayerNorm each have their own γ and β; there is no dropout.")


@derivation.section("LayerNorm looks across features within one word")
def layer_norm_row(s):
    L, r = walkthrough_block()
    s.use(L, names=BLOCK, sizes=SIZES)
    ln1, H, X = r["blk"].ln1, r["H0"], r["blk"].ln1.out
    s.agree("μ_t and σ_t² are the mean and the population variance of row t over its five features",
            [ln1.mu, ln1.var], [ops.Sum(H, axis=1, mean=True), ops.Sum((H - ln1.mu) * (H - ln1.mu), axis=1, mean=True)],
            at="statistics")
    Ls = Ledger("LayerNorm of a symbolic row, D = 5")
    n = blocks.layer_norm(Ls, Ls.input("h", shape=(1, 5)), eps=0, name="LN")
    hs, mu, var = list(Ls.entry_symbols("h")), Ls.expand(n.mu.name)[0, 0], Ls.expand(n.var.name)[0, 0]
    s.claim(r"\frac15", partial(mu, hs[0]), what="the weight of each feature in μ_t", at="statistics, μ_t")
    s.claim(r"\frac15", sp.simplify(var / sum((h - mu) ** 2 for h in hs)), what="weight in σ_t²", at="statistics, σ_t²")
    s.given(L.handle("gamma_1"), L.handle("beta_1"), what=("γ of LN_1", "β of LN_1"), at="parameters")
    s.claim_line(r"\mathbf h_6^{(0)}\approx", (H[6, :], "h_6^(0)"), at="begins row")
    (_, mean), (_, variance) = approximations(s, r"Its mean is \(\mu_6")
    s.claim(mean, ln1.mu[6, 0], what="μ_6", at="begins row")
    s.claim(variance, ln1.var[6, 0], what="σ_6²", at="begins row")
    s.given(EPS, what="ε in X_60", at="begins row")
    s.claim(X[6, 0], name="X_{6,0}", what="X_60 = (h_60 − μ_6)/√(σ_6² + 10⁻⁵)", at="begins row")
    s.claim(X[6, :], name="x_6", what="x_6", at="begins row")
    mean = ops.Sum(X, axis=1, mean=True)
    s.agree("with γ = 1, β = 0 each normalized row has mean 0 and variance σ_t²/(σ_t² + ε)",
            [mean, ops.Sum((X - mean) * (X - mean), axis=1, mean=True)],
            [sp.zeros(T, 1), ln1.var / (ln1.var + EPS)], at="normalized rows")
    kept = s.values.numeric(ln1.var / (ln1.var + EPS))[0]
    s.prove("the variance of every normalized row is slightly below one", lambda: (
        all(1 - 1e-3 < v < 1 for v in kept), f"from {short(min(kept), 8)} to {short(max(kept), 8)}"),
        at="normalized rows", near="slightly below one")
    Lc = s.ledger("LayerNorm of a constant row (c, c, c, c, c), ε > 0")
    row = Lc.define("h", Lc.input("c") * ops.Const(sp.ones(1, D)))
    eps, beta, gamma = Lc.input("epsilon"), Lc.parameter("beta", shape=(1, D)), Lc.parameter("gamma", shape=(1, D))
    n = blocks.layer_norm(Lc, row, gamma, beta, eps=eps, name="LN")
    s.identity("a constant row is mapped to β (ε > 0 keeps the denominator nonzero)",
               sp.Matrix(Lc.expand(n.out.name, values=True)) - Lc.entry_symbols("beta"), at="constant row")
    rows = properties.dependence(lambda Ld, X: blocks.layer_norm(Ld, X, eps=EPS, name="LN").out, 2, 3)
    s.prove("LayerNorm moves no information between positions: row 0 of LN(H) uses only row 0 of H",
            lambda: (rows.zero[0][1], "row-wise: " + rows.pattern().replace("\n", " / ")), at="normalized rows")


@derivation.section("Recompute attention, then add the original input")
def recompute_attention(s):
    s.use(walkthrough_block()[0], names=BLOCK, sizes=SIZES)
    r, ra = walkthrough_block()[1], attention_ledger()[1]
    blk = r["blk"]
    with s.place("attention on X"):
        s.claim("√3", sp.sqrt(blk.mha.heads[0].Q.shape[1]), what="the divisor of the scores inside the block")
        s.differ("normalization changes every one of the seven input rows", [blk.ln1.out[t, :] for t in range(T)],
                 [r["H0"][t, :] for t in range(T)], by="0.01", near="normalization changes all seven input rows")
        s.differ("… and so the queries, keys, values and weights of both heads",
                 [getattr(h, n) for h in blk.mha.heads for n in "QKVA"],
                 [getattr(h, n) for h in (ra["h1"], ra["h2"]) for n in "QKVA"], by="0.01",
                 near="so it changes the queries, keys, values, and resulting mixtures")
        s.claim_line(r"\mathbf b_{\mathrm{att},6}\approx", (blk.mha.out[6, :], "b_att,6 inside the block"))
        s.claim_line("earlier unnormalized result", (ra["B_att"][6, :], "b_att,6 on H^(0)"), digits=3)
        s.differ("normalising the input changes the attention branch", blk.mha.out[6, :], ra["B_att"][6, :],
                 by=CLEARLY, near="This differs from the earlier unnormalized result")
        maps = [n for h in HEADS for n in h] + ["W_O"]
        same = all(walkthrough_block()[0].value(n) == attention_ledger()[0].value(n) for n in maps)
        inputs = [s.values.numeric(x)[0] for x in (blk.ln1.out, r["H0"])]
        s.prove("the block's heads use the walkthrough's parameters on a different input", lambda: (
            same and max(abs(a - b) for a, b in zip(*inputs)) > 0.1, "W_Q, W_K, W_V, W_O equal; X ≠ H^(0)"),
            near="The parameters are the same; their input is different")
    s.claim_line(r"\mathbf u_6=", (blk.U[6, :], "u_6 = h_6^(0) + b_att,6"), at="first residual")
    s.claim(blk.U[6, 0], name="u_{6,0}", what="u_60 = h_60^(0) + B_att,60", at="first residual")
    s.differ("the bypass does not put the normalized begins row into the sum", blk.U[6, :],
             blk.ln1.out[6, :] + blk.mha.out[6, :], by="0.01", at="first residual", near="It does not copy")


@derivation.section("The MLP transforms each contextual row separately")
def mlp_row(s):
    L, r = walkthrough_block()
    s.use(L, names=BLOCK, sizes=SIZES)
    blk = r["blk"]
    ln1, ln2, m, R, J = blk.ln1, blk.ln2, blk.mlp, blk.ln2.out, blk.mlp.J
    s.differ("the second normalization sees other statistics than the first", [ln2.mu, ln2.var], [ln1.mu, ln1.var],
             by="0.01", at="LN_2 of begins", near="whose statistics differ from those of the block input")
    s.claim_line("its mean is approximately", (ln2.mu[6, 0], "μ(u_6)"), (ln2.var[6, 0], "σ²(u_6)"), at="LN_2 of begins")
    s.claim_line(r"\mathbf r_6=", (R[6, :], "r_6 = LN_2(u_6)"), at="LN_2 of begins")
    s.given(*(L.handle(n) for n in MLP), what=("W_1 as printed", "b_1", "W_2 as printed", "b_2"), at="MLP parameters")
    s.claim_line(r"\mathbf z_{\mathrm{mlp},6}\approx", (m.Z[6, :], "z_mlp,6 = r_6 W_1ᵀ + b_1"), at="MLP of begins")
    s.claim_line(r"\mathbf j_{\mathrm{mlp},6}\approx", (J[6, :], "j_mlp,6"), at="MLP of begins", digits=3)
    W1, b1, W2, b2 = (parameters()[n] for n in MLP)
    formulas = (R[6, 0] + W1[0, 2] * R[6, 2] + b1[0], R[6, 2] + W1[2, 3] * R[6, 3] + b1[2],
                W2[0, 0] * J[6, 0] + W2[0, 2] * J[6, 2] + b2[0])
    for (statement, value), formula, node, what in zip(
            approximations(s, "the first preactivation is"), formulas, (m.Z[6, 0], m.Z[6, 2], m.B[6, 0]),
            ("z_mlp,6,0 (row 0 of W_1)", "z_mlp,6,2 (row 2 of W_1)", "B_mlp,6,0 (row 0 of W_2)")):
        s.agree(statement, node, formula, at="MLP of begins")
        s.claim(value, node, what=what, at="MLP of begins")
    s.claim_line(r"\mathbf b_{\mathrm{mlp},6}\approx", (m.B[6, :], "b_mlp,6"), at="MLP of begins")
    La = Ledger("the MLP's two maps without ReLU, on a symbolic row")
    W1a, b1a, W2a, b2a = on(La, *MLP)
    Z_lin = blocks.linear(La, "Z_lin", La.input("r", shape=(1, D)), W1a, b1a, orientation=ORIENT)
    lin = blocks.linear(La, "B_lin", Z_lin, W2a, b2a, orientation=ORIENT)
    s.identity("without the activation the two maps compose to one affine map",
               La.expand(lin.name, values=True) - (La.entry_symbols("r") * (W2 * W1).T + (b1 * W2.T + b2)),
               at="MLP of begins", near="their composition would remain affine")
    W1n, b1n, W2n, b2n = (L.handle(n) for n in MLP)
    s.agree("the same MLP parameters act on every position: each row of B_mlp is its own row of R through them",
            [m.B[t, :] for t in range(T)], [ops.apply(relu, R[t, :] @ W1n.T + b1n) @ W2n.T + b2n for t in range(T)],
            at="position-wise", near="The same MLP parameters act on every position")
    s.differ("ReLU makes the map nonlinear: the begins row's MLP output is not the affine composition's",
             m.B[6, :], (R[6, :] @ W1n.T + b1n) @ W2n.T + b2n, by="0.01", at="MLP of begins",
             near="ReLU makes this feature transformation nonlinear")
    rows_mlp = properties.dependence(lambda Ld, X: blocks.mlp(Ld, X, *on(Ld, *MLP), orientation=ORIENT).B, 3, D)
    rows_att = properties.dependence(head_1(), 3, D)
    s.prove("the MLP keeps each row to itself while attention mixes the rows", lambda: (
        all(rows_mlp.zero[i][j] == (i != j) for i in range(3) for j in range(3))
        and not any(rows_att.zero[i][j] for i in range(3) for j in range(3)),
        f"MLP {rows_mlp.pattern()}; attention {rows_att.pattern()}".replace("\n", " / ")), at="position-wise",
        near="the MLP mixes features within a row, while attention mixes information across rows")


@derivation.section("The second addition completes the block")
def second_addition(s):
    s.use(walkthrough_block()[0], names=BLOCK, sizes=SIZES)
    r = walkthrough_block()[1]
    blk = r["blk"]
    s.claim_line(r"\mathbf h_6^{(1)}=", (blk.out[6, :], "h_6^(1) = u_6 + b_mlp,6"), at="block output")
    s.claim(blk.out[6, 0], name="h_{6,0}^{(1)}", what="h_60^(1) = u_60 + B_mlp,60", at="block output")
    s.differ("the second addition adds neither the normalized row nor the original input row to the MLP branch",
             [blk.out[6, :], blk.out[6, :]], [blk.ln2.out[6, :] + blk.mlp.B[6, :], r["H0"][6, :] + blk.mlp.B[6, :]],
             by="0.01", at="block output", near="We do not add the normalized row")
    stages = [r["H0"], blk.ln1.out, blk.mha.out, blk.U, blk.ln2.out, blk.mlp.B, blk.out, r["enc"].out]
    table(s, "Table 23", ops.Concat([x[6, :] for x in stages], axis=0), FEATURES, what="begins row by stage")


@derivation.section("Inspect normalization statistics and all seven rows at each stage")
def all_stages(s):
    r = walkthrough_block()[1]
    blk = r["blk"]
    stats = ops.Concat([blk.ln1.mu, blk.ln1.var, blk.ln2.mu, blk.ln2.var], axis=1)
    table(s, "Table 24", stats, ["LN₁ mean", "LN₁ variance", "LN₂ mean", "LN₂ variance"])
    for label, node, what in (("Table 25", blk.ln1.out, "normalized X"), ("Table 26", blk.mha.out, "attention B_att"),
                              ("Table 27", blk.U, "residual1 U"), ("Table 28", blk.ln2.out, "mlp-normalized R"),
                              ("Table 29", blk.mlp.B, "mlp B_mlp"), ("Table 30", blk.out, "output H^(1)"),
                              ("Table 31", r["enc"].out, "final H_enc")):
        table(s, label, node, FEATURES, what=what)


@derivation.section("Stack blocks along depth, then normalize the final representation")
def stack(s):
    r = walkthrough_block()[1]
    enc, blk = r["enc"], r["blk"]
    s.given(len(enc.blocks), what="N_layers of the walkthrough", at="final LayerNorm")
    s.claim_line("the final begins row is approximately", (enc.out[6, :], "LN_final(h_6^(1))"), first=-1,
                 at="final LayerNorm")
    s.differ("the final normalization is a stage of its own: its begins row is not the block's", enc.out[6, :],
             blk.out[6, :], by=CLEARLY, at="final LayerNorm", near="This is a different stage from")
    L2, r2 = block_ledger("two blocks: depth changes, sequence length does not", n_blocks=2)
    s.use(L2)
    H2 = r2["enc"].blocks[1].out
    s.prove("depth changes, the sequence length does not: H^(2) of a two-block stack has the shape of H^(0)",
            lambda: (H2.shape == r2["H0"].shape == (T, D), f"H^(2) is {H2.shape[0]}×{H2.shape[1]}"), at="stacking")
    s.differ("a deeper stack normalises the last block's output instead", enc.out, r2["enc"].out, by="0.01",
             at="stacking", near="A deeper stack would normalize the last block")


@derivation.section("Why position is still necessary")
def position_needed(s):
    r = walkthrough_block()[1]
    Lp, rp = block_ledger("the block on Π H^(0): positioned rows reordered together", permutation=PERMUTATION)
    Lt, rt = block_ledger("tokens reordered, position vectors kept in place", ids=[IDS[i] for i in PERMUTATION])
    Lc, rc = block_ledger("causal block on H^(0)", block_masks=["causal"])
    Lcp, rcp = block_ledger("causal block on Π H^(0)", permutation=PERMUTATION, block_masks=["causal"])
    s.use(Lp, Lt, Lc, Lcp)
    a_at = [t for t, w in enumerate(TOKENS) if w == "a"]  # the word a at positions 0 and 3
    E_seq, H0 = (s.values.exact(r[n]) for n in ("E_seq", "H0"))
    s.prove("the word a gets a different input representation at each of its two positions: the same embedding "
            "row, different positioned rows", lambda: (
                E_seq.row(a_at[0]) == E_seq.row(a_at[1]) and H0.row(a_at[0]) != H0.row(a_at[1]),
                f"a at positions {a_at}: E_seq rows equal, H^(0) rows differ"), at="position breaks the tie",
            near="assigning a different input representation to a word at a different position")
    s.note(f"Π is the fixed reordering {PERMUTATION}; the statements hold for any and are checked at 50 digits.")
    blk, blk_p, Pi = r["blk"], rp["blk"], ops.Const(properties.permutation_matrix(PERMUTATION), label="Π")
    s.agree("without a mask, reordering the positioned rows reorders every output row the same way: O(ΠH) = ΠO(H)",
            [blk_p.mha.out, blk_p.out, rp["enc"].out], [Pi @ blk.mha.out, Pi @ blk.out, Pi @ r["enc"].out],
            at="permutation equivariance", near="permutes the output rows in the same way")
    s.agree("row softmax follows the same source reordering: A(ΠH) = ΠA(H)Πᵀ", [h.A for h in blk_p.mha.heads],
            [Pi @ h.A @ Pi.T for h in blk.mha.heads], at="permutation equivariance",
            near="row softmax follows the same source reordering")
    s.agree("LayerNorm and the shared MLP act row by row and commute with the reordering",
            [blk_p.ln1.out, blk_p.ln2.out, blk_p.mlp.B], [Pi @ blk.ln1.out, Pi @ blk.ln2.out, Pi @ blk.mlp.B],
            at="permutation equivariance", near="so both commute with that reordering")
    s.agree("the residual sums keep the reordering", blk_p.U, Pi @ blk.U, at="permutation equivariance",
            near="Residual sums preserve this property")
    s.differ("reordering the token embeddings while positions stay in place is not a mere reordering of the outputs",
             rt["enc"].out, Pi @ r["enc"].out, by="0.01", at="positions break the symmetry",
             near="changes the combinations entering the block")
    A, A_p = rc["blk"].mha.heads[0].A, rcp["blk"].mha.heads[0].A
    s.differ("a causal mask tied to position indices does not survive the reordering", A_p, Pi @ A @ Pi.T,
             by="0.01", at="permutation equivariance", near="does not generally survive an arbitrary permutation")


@derivation.section("Pre-norm, post-norm, and the backward path")
def pre_post(s):
    blk = walkthrough_block()[1]["blk"]
    Lq, rq = block_ledger("post-norm block with the same parameters", norm="post")
    s.use(Lq)
    s.differ("the same parameters give different intermediate numbers under post-norm", [blk.mha.out, blk.out],
             [rq["blk"].mha.out, rq["blk"].out], by="0.01", at="normalization placement",
             near="the same parameters do not produce the same intermediate numbers")
    s.agree("a post-norm block ends on a LayerNorm (its output rows have mean 0 with γ = 1, β = 0)",
            ops.Sum(rq["blk"].out, axis=1, mean=True), sp.zeros(T, 1), at="normalization placement")
    s.note("The residual gradient ∂L/∂h_i = g_i + Σ_j g_j ∂f_j/∂h_i (identity plus branch Jacobian) is checked with "
           "the closed-form gradients of the attention blocks, not on this example's numbers.")


@derivation.section("Task heads: choose a readout for the task")
def readout(s):
    L = s.ledger("a token-classification head on H_enc (T = 7, D = 5), C = 3 classes chosen here")
    C = 3
    blocks.linear(L, "S", L.input("H_enc", shape=(T, D)), L.parameter("W_o", shape=(C, D)),
                  L.parameter("b_o", shape=(1, C)), orientation=ORIENT, note="the logits s_t, one row per position")
    s.use(L, sizes=SIZES | {"C": C})  # (it binds the head's formula and its W_o ∈ ℝ^{C×D})
    s.given(PAD_MASK[0], PAD_MASK[-1], what=("m_t for a real input token", "m_t for padding"), at="masked mean pooling")


def encoder_stack(masks):
    """A builder ``f(L, X)`` for :func:`properties.dependence`: on a T×2 input, one block per entry of ``masks``
    (True: causal) of one attention head, a residual, a ReLU MLP and a residual, with small weights chosen here.
    LayerNorm, row-wise like the MLP, is left out: it makes the reverse-mode rows about forty times slower."""
    def build(L, X):
        H = X
        for i, masked in enumerate(masks):
            tag = f"({i})"
            par = lambda n, v: L.parameter(f"{n}^{tag}", v)  # noqa: E731
            h = blocks.attention_head(L, H, par("W_Q", [[1, -2]]), par("W_K", [["1/2", 1]]),
                                      par("W_V", [[1, 0], [2, -1]]), orientation=ORIENT,
                                      mask="causal" if masked else None, tag=tag)
            U = blocks.residual(L, f"U^{tag}", H, h.O)
            B = blocks.mlp(L, U, par("W_1", [[1, "1/2"], [-1, 1], [2, -1]]), None,
                           par("W_2", [[1, -1, "1/4"], [0, 2, 1]]), None, orientation=ORIENT, tag=tag)
            H = blocks.residual(L, f"H^{tag}", U, B.B)
        return H
    return build


@derivation.section("Padding changes visibility and output selection")
def padding(s):
    s.note("The handout's padding figure is schematic and adds no PAD token; here the prefix is right-padded to nine "
           "rows with a zero pad embedding to check its statements on head 1.")
    m = PAD_MASK
    _, valid = blocks.next_token_targets(IDS)
    s.given(0, m[0], what=("M_tj for a permitted source", "m_j of a permitted source"), at="mask values")
    s.prove(r"\sum_t v_t>0", lambda: (sum(valid) > 0, f"Σ_t v_t = {sum(valid)} valid targets in the prefix"),
            what="the token-loss mean has a positive denominator: the prefix has valid targets", at="token-loss mean")
    L = s.ledger("head 1 on the right-padded prefix (T = 9, two pad rows with a zero embedding)", exact_forms=False)
    E_seq = blocks.embedding_lookup(L, on(L, "E_vocab")[0], IDS)
    E_pad = L.define("E_pad", ops.Concat([E_seq, ops.Const(sp.zeros(2, D), label="0")], axis=0))
    H0 = blocks.add_positions(L, E_pad, blocks.positions(L, T + 2, D))
    head = blocks.attention_head(L, H0, *on(L, *HEADS[0]), orientation=ORIENT, tag="[1]",
                                 mask=blocks.masks.key_padding(m))
    s.differ("a zero pad embedding becomes nonzero after adding its position vector", [H0[T, :], H0[T + 1, :]],
             [sp.zeros(1, D)] * 2, by="0.01", at="padding", near="Even a zero pad embedding can become nonzero")
    s.agree("with key padding, pad sources get weight zero and the real rows are unchanged",
            [head.A[:, T:], head.O[:T, :]], [sp.zeros(T + 2, 2), attention_ledger()[1]["h1"].O], at="padding")
    s.differ("a source mask does not remove a padded query's output row", [head.O[T, :], head.O[T + 1, :]],
             [sp.zeros(1, D_K)] * 2, by="0.01", at="padding", near="A source mask does not remove a padded query")
    s.agree("masked mean pooling averages the real rows only", blocks.masked_mean_pool(L, head.O, m, name="o_bar"),
            ops.Sum(head.O[:T, :], axis=0, mean=True), at="padding")
    s.prove("right padding with a causal mask leaves every row a source", lambda: (
        blocks.masks.empty_rows(blocks.masks.padding_causal(m)) == [], "source 0 is real"), at="padding",
        near="leaves real sources available to the padded queries")

    def left_padding():  # the mask check the attention blocks make, on a causal mask padded on the left
        try:
            blocks.masks.check(blocks.masks.padding_causal([0, 0] + [1] * T))
        except MaskError as exc:
            return "query position 0" in str(exc), str(exc).split(";")[0]
        return False, "no error"
    s.prove("left padding with a causal mask leaves the first rows with no source, which is refused",
            left_padding, at="padding", near="padded query rows with no allowed source need explicit handling")
    s.prove("target validity is not input validity: the last real token has no next-token target", lambda: (
        m[T - 1] == 1 and not valid[T - 1], f"m = {m[:T]}, v = {[int(v) for v in valid]}"), at="token-loss mean",
        near="need not equal input-validity")
    losses = [[1, 2, 3], [6]]  # token losses of two sequences with three and one valid targets, chosen here
    s.differ("averaging each sequence first weights the targets differently when the lengths differ",
             sp.Rational(sum(map(sum, losses)), 4), sum(sp.Rational(sum(x), len(x)) for x in losses) / 2, by="0.5",
             at="token-loss mean", near="gives different weighting when lengths differ")


@derivation.section("Masked mean over valid targets")
def valid_targets(s):
    L, r = block_ledger("the walkthrough encoder with a tied vocabulary head, s = H_enc E_vocabᵀ")
    s.use(L)
    s.note("The handout leaves the vocabulary head's weights unspecified; tying it to E_vocab makes the loss "
           "computable, so the masked mean is checked as a property, not against printed numbers.")
    targets, valid = blocks.next_token_targets(IDS)
    logits = blocks.tied_logits(L, r["enc"].out, r["E_vocab"])
    rows = [t for t in range(T) if valid[t]]
    Z = logits[rows, :]  # −log p_{t,y_t} = log Σ_c exp Z_tc − Z_{t,y_t} on each row with a target
    s.agree("ℒ = Σ_t v_t[−log p_{t,y_t}] / Σ_t v_t over the six rows with a target",
            blocks.masked_cross_entropy(L, logits, targets, valid).loss,
            ops.Sum(ops.LogSumExpRows(Z) - ops.TakeAlong(Z, [targets[t] for t in rows]), mean=True), at="loss mean")


@derivation.section("Task heads: shift the target one position ahead")
def next_token(s):
    Lh = s.ledger("the vocabulary head's shapes")
    W_o = Lh.parameter("W_o", shape=(K, D))
    logits = blocks.next_token_logits(Lh, Lh.input("H_enc", shape=(T, D)), W_o, Lh.parameter("b_o", shape=(1, K)),
                                      orientation=ORIENT)
    s.claim("9", W_o.shape[0], what="C = K, the vocabulary head's classes", at="vocabulary head")
    s.given(W_o.shape[1], what="D, the contextual feature width", at="vocabulary head")
    s.claim_shape("9×5", W_o, what="W_o of the vocabulary head, C = K = 9", at="vocabulary head")
    s.prove("the head gives one row of nine logits per position", lambda: (logits.shape == (T, K), f"{logits.shape}"),
            at="vocabulary head")
    targets, _ = blocks.next_token_targets(IDS, continuation=VOCAB.id("with"))
    allowed = blocks.masks.causal(T)
    for t, nxt, seen in ((0, "journey", "a"), (1, "of", "a journey"), (5, "begins", "a journey of a thousand miles"),
                         (6, "with", "a journey of a thousand miles begins")):
        s.prove(f"position {t} ({TOKENS[t]}) predicts {nxt}", lambda t=t, nxt=nxt: (
            VOCAB.token(targets[t]) == nxt, f"y_{t} = k_{t + 1} = {targets[t]}"), at=f"Table 33, row {t}")
        s.prove(f"position {t} may use '{seen}'", lambda t=t, seen=seen: (
            " ".join(w for w, a in zip(TOKENS, allowed[t]) if a) == seen, f"sources 0..{t}"), at=f"Table 33, row {t}")
    bare_targets, bare_valid = blocks.next_token_targets(IDS)
    s.claim("6", sum(bare_valid), what="rows with a target", at="targets without a continuation", near="first six rows")
    s.prove("without the continuation the begins row has no target", lambda: (
        bare_targets[6] is None and not bare_valid[6], "y_6 undefined"), at="targets without a continuation",
        near="the begins row does not")
    open_dep = properties.dependence(encoder_stack([False]), 3, 2)
    late = properties.leakage(encoder_stack([False, True]), 3, 2)
    every = properties.causal_independence(encoder_stack([True, True]), 3, 2)
    s.prove("with unrestricted attention an earlier row reads a later input, its own target among them", lambda: (
        not open_dep.zero[1][2], "∂o_1/∂x_2 ≠ 0 without a mask"), at="causal stack",
        near="could read the future input begins")
    s.prove("a causal mask in the last block only cannot undo what an unrestricted first block mixed in", late.check,
            at="causal stack", near="A causal mask only in the last block cannot undo future information")
    s.prove("with a causal mask in every block no output reads a later input; the MLP and the residual paths alone "
            "make no boundary", lambda: (bool(every) and not open_dep.zero[0][1], every.detail), at="causal stack",
            near="they do not establish it on their own")
    s.prove("the second block's causal mask cannot remove the future already in its input", late.check,
            at="pause and predict", near="mask cannot remove that dependence from its own input")


@derivation.section("Teacher forcing is not the generation loop")
def generation(s):
    whole = block_ledger("the causal encoder on the whole prefix", block_masks=["causal"])[1]["enc"].out
    alone = [block_ledger(f"the causal encoder on the first {n} tokens", ids=IDS[:n], block_masks=["causal"])[1]
             for n in (3, 6)]
    s.agree("under a causal mask all rows of a known record are computed together: each row equals the last row of "
            "its own prefix computed alone", [whole[n - 1, :] for n in (3, 6)],
            [r["enc"].out[n - 1, :] for n, r in zip((3, 6), alone)], at="teacher forcing",
            near="All rows of a known record can be calculated together under a causal mask")
    seen = []

    def next_logits(prefix):
        seen.append(len(prefix))
        L, r = block_ledger(f"encoder on a {len(prefix)}-token prefix", ids=prefix)
        return s.values.numeric(blocks.tied_logits(L, r["enc"].out, r["E_vocab"])[len(prefix) - 1, :])[0]

    generated = blocks.greedy_generate(next_logits, IDS, steps=2)
    s.claim("8", seen[1], what="prefix length at the second step", at="generation loop")
    s.prove("each step appends its selection to the inputs and predicts again from the longer prefix", lambda: (
        len(generated) == 9 and seen == [7, 8], f"prefix lengths {seen}, IDs {generated}"), at="generation loop")
    s.note("No end-of-sequence token is defined, so the generation length (two steps here) is chosen outside the "
           "model; the head is tied to E_vocab for the loop's sake, and the text does not claim it selects with.")


@derivation.section("What does the tutorial experiment establish?")
def tutorial(s):
    L = s.ledger("a uniform predictor over four movements")
    Z = L.input("z", [[0, 0, 0, 0]])
    P, ce = blocks.probabilities(L, Z, name="p"), blocks.cross_entropy(L, Z, targets=[2], name="ell_uniform")
    s.claim("1/4", P[0, 2], what="expected accuracy of a uniform movement predictor", at="uniform baseline")
    s.claim(r"\log 4", ce.loss, what="its cross-entropy, nats", at="uniform baseline")
    s.claim_line("a uniform movement predictor has", (ce.loss, "log 4 in nats"), first=-1, at="uniform baseline")
    (rnn,) = [row for row in s.page.table("Table 34") if row[0] == "RNN"]
    mean = exact(rnn[2].split("±")[0].strip())  # delay 16, the column's mean as Table 34 prints it
    s.prove("at delay sixteen the RNN's mean accuracy in the table is below one half", lambda: (
        bool(mean < sp.Rational(1, 2)), f"RNN, delay 16: {mean}"), at="Table 34",
        near="the RNN mean is below one half")
    s.note("Table 34 and the parameter counts 1,943 / 2,023 / 1,915 report trained recipes: reported, not claimed.")
    s.reported("The stored comparison uses", paragraph=True,
               reason="the tutorial's training settings (splits, epochs, learning rate, clipping): runs not done here")
    s.reported("These trained recipes differ", paragraph=True,
               reason="widths and parameter counts of trained recipes the text does not specify enough to recount")
    s.reported("Table 34", reason="held-out accuracy of trained RNN, GRU and Transformer recipes: results of training")
    s.reported("At delay 8, all three recipes", paragraph=True, reason="the reading of Table 34's trained results")


@derivation.section("Attention's shorter path has a computation cost")
def cost(s):
    h1 = attention_ledger()[1]["h1"]
    one = properties.dependence(encoder_stack([False]), 3, 2)
    s.prove("one unrestricted attention block connects every pair of positions", lambda: (
        not any(one.zero[i][j] for i in range(3) for j in range(3)), one.pattern().replace("\n", " / ")),
        at="shorter path", near="full attention can connect any allowed pair in one layer")
    dims = {"T": sp.Integer(T), "d_k": sp.Integer(D_K), "d_v": sp.Integer(D_K)}
    for formula, count, what in (("T^2", h1.S.shape[0] * h1.S.shape[1], "entries of one score array"),
                                 ("T^2 d_k", h1.Q.shape[0] * h1.K.shape[0] * h1.Q.shape[1], "multiplications in Q Kᵀ"),
                                 ("T^2 d_v", h1.A.shape[0] * h1.A.shape[1] * h1.V.shape[1], "multiplications in A V")):
        s.claim(formula, sp.Integer(count), names=dims, what=what, at="cost")


@derivation.section("Images can supply tokens too")
def image_tokens(s):
    H_img, W_img, C_img, p, D_vit = 6, 6, 1, 3, 4
    L = s.ledger("a 6×6 grayscale image as four patch tokens")
    img = L.input("I", shape=(H_img, W_img))
    patches = [ops.Concat([img[a * p + i, b * p:(b + 1) * p] for i in range(p)], axis=1)
               for a in range(H_img // p) for b in range(W_img // p)]
    X = L.define("X_patch", ops.Concat(patches, axis=0), note="flattened patches, one row each")
    E_p = blocks.linear(L, "E_patch", X, L.parameter("W_patch", shape=(D_vit, p * p * C_img)), orientation=ORIENT)
    seq = L.define("X_seq", ops.Concat([L.parameter("x_class", shape=(1, D_vit)), E_p], axis=0),
                   note="class token prepended")
    H0 = blocks.add_positions(L, seq, blocks.learned_positions(L, L.parameter("P_table", shape=(8, D_vit)),
                                                               seq.shape[0]))
    dims = dict(zip(("H_{img}", "W_{img}", "p", "C_{img}"), map(sp.Integer, (H_img, W_img, p, C_img))))
    for formula, n, what, at in (("(H_{img}/p)(W_{img}/p)", X.shape[0], "N_patch", "patches"),
                                 ("4", X.shape[0], "patches", "Figure 17"),
                                 ("p^2 C_{img}", X.shape[1], "numbers per flattened patch", "patches"),
                                 ("9", X.shape[1], "input features per patch", "Figure 17"),
                                 ("4", E_p.shape[0], "feature rows after projection", "Figure 17")):
        s.claim(formula, sp.Integer(n), names=dims, what=what, at=at)
    s.prove("D=4", lambda: (E_p.shape == (4, D_vit) == (4, 4), f"E_patch is {E_p.shape[0]}×{E_p.shape[1]}"),
            what="projection to D = 4 gives four feature rows of width D", at="Figure 17")
    s.claim("5", H0.shape[0], what="T with the class token", at="Figure 17")
    flat, pixel = L.expand(X.name), L.entry_symbols("I")
    s.prove("patch 1 (top right) holds image columns 3–5 of rows 0–2, row by row", lambda: (
        list(flat.row(1)) == [pixel[i, j] for i in range(3) for j in range(3, 6)], "row-major"), at="patches")


@derivation.section("Optional exercises 3 and 4")
def exercises(s):
    L = s.ledger("exercise 3: one query over three sources")
    scores = L.input("s", sp.Matrix([[0, sp.log(2), sp.log(3)]]), note="the scores (0, log 2, log 3)")
    v = L.input("v", [[2], [-1], [4]], note="the scalar values of sources 0, 1, 2")
    a = L.define("a", ops.SoftmaxRows(scores))
    masked = L.define("a_masked", ops.SoftmaxRows(scores, blocks.masks.causal(3)[1:2, :]))  # source 2 excluded
    s.given(scores, v.T, what=("the scores (0, log 2, log 3)", "the scalar values (2, −1, 4)"), at="exercise 3")
    weights, renorm, values = L.value(a.name), L.value(masked.name), L.value(v.name)
    zeroed = sp.Matrix([[weights[0, 0], weights[0, 1], 0]])
    s.prove("excluding source 2 renormalises the two allowed weights; zeroing its normalised weight does not",
            lambda: (sp.simplify(sum(renorm) - 1) == 0 and sp.simplify(sum(zeroed) - 1) != 0,
                     f"renormalised {list(renorm)}, zeroed {list(zeroed)} (sum {sum(zeroed)})"), at="exercise 3")
    s.note(f"Exercise 3: here the renormalised output ({(renorm * values)[0, 0]}) and the zeroed-weight output "
           f"({(zeroed * values)[0, 0]}) coincide (unrestricted {(weights * values)[0, 0]}); the two rules differ in "
           f"their weights (sums {sum(renorm)} and {sum(zeroed)}), not in this particular output.")
    L4 = s.ledger("exercise 4: three heads, d_k = 2, d_v = 4, D = 5, T = 7")
    heads = [[L4.parameter(f"W_{w}^[{i}]", shape=(n, D)) for w, n in (("Q", 2), ("K", 2), ("V", 4))] for i in (1, 2, 3)]
    W_O4 = L4.parameter("W_O", shape=(D, 12))
    mha = blocks.multi_head(L4, L4.input("H", shape=(T, D)), heads, W_O4, orientation=ORIENT)
    s.given(mha.heads[0].Q.shape[1], mha.heads[0].V.shape[1], D, what=("d_k", "d_v", "D"), at="exercise 4")
    s.prove("three heads of width d_v = 4 join to 12 features, not the equal partition of D = 5", lambda: (
        mha.concat.shape == (T, 12) and 12 != D, f"concatenation {mha.concat.shape}"), at="exercise 4")
