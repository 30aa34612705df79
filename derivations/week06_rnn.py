"""Week 06 — Sequential Representation Learning, first half: recurrent memory and BPTT.

Source: seed handout ``004_daeab95066cb0286.txt`` (Week 06 chapter), from "Why order and available context
matter" to "Words become positioned token representations", and optional exercises 1 and 2 (``week06_encoder.py``
derives the rest). One section per heading, in the handout's order.

Conventions read from the handout: rows are positions (x_t is 1×D, h_t is 1×H); weights are stored output×input
and right-multiplied transposed (z_t = x_t W_xᵀ + h_{t−1} W_hᵀ + b_h, as torch); the loss is ½ the squared error
summed over output coordinates, with no mean unless stated; h_{−1} = 0; the GRU follows torch (reset after
W_hn h + b_hn; h_t = u ⊙ h_{t−1} + (1 − u) ⊙ h̃); the LSTM has gates i, f, o, a candidate c̃ and no peepholes. φ
stays general, an undefined function: what is stated for it is proved as a symbolic identity.

What the page prints is read from it (Table 4's slopes, Figure 3's factors, w_h and w_x, the GRU's mixture, the
seeded example's code and output, exercise 2's w_h); formulas are identities stated in the page's own LaTeX. Values
the page leaves unassigned are chosen here, and say so; worked values it does not print are properties.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from symseq import Derivation, Ledger, evaluate, exact, ops
from symseq.blocks import cells, heads
from symseq.derive import bptt as bptt_
from symseq.derive import clipping, jacobians
from symseq.functions import relu, sigmoid
from symseq.numbers import short

derivation = Derivation(
    "week06-rnn", title="Week 06 — Recurrent memory: BPTT in closed form, Jacobians, clipping, GRU and LSTM",
    source="004_daeab95066cb0286.txt",
    description="scalar and vector RNNs, backpropagation through time, gradient paths, gated cells, a seeded nn.RNN")

phi = bptt_.PHI  # the general activation φ, an undefined function
scalar_rnn, vector_rnn, loss_factor = bptt_.scalar_rnn, bptt_.vector_rnn, bptt_.loss_factor
E = Ledger.entry_symbols  # E(L, "W_x"): the entry symbols [W_{x,00}, …] of a matrix row or leaf


def chosen(**values) -> tuple[dict, str]:
    """Values chosen here, where the handout prints none: their exact values, and "name = value, …" to cite them."""
    return {k: exact(str(v)) for k, v in values.items()}, ", ".join(f"{k} = {v}" for k, v in values.items())


def parameters(L: Ledger) -> list[str]:
    """The names of the trainable parameters of ``L`` (θ), in ledger order."""
    return [it.name for it in L.leaves if it.kind == "parameter"]


def down_to(L: Ledger, bp, name: str, *kept: str):
    """Row ``name`` of ``L`` expanded down to the forward rows of the backward pass ``bp`` and the rows ``kept``."""
    return L.expand(name, keep=bptt_.forward_names(bp) + list(kept))


def half_square(L: Ledger, yhat: str = "ŷ", y: str = "y"):
    """ℒ − ½(ŷ − y)² on ``L`` (over scalars, or the entries of 1×1 rows): zero for the handout's loss."""
    if L.shape(yhat) == ():
        return L["ℒ"].node.expr - (L.symbol(yhat) - L.symbol(y)) ** 2 / 2
    return L.expand("ℒ", keep=[yhat]) - (E(L, yhat)[0] - E(L, y)[0]) ** 2 / 2


@derivation.section("Why order and available context matter")
def available_context(s):
    L = s.ledger("forecast x_3 from x_0, x_1, x_2 (scalar RNN, general φ)", exact_forms=False)
    xs = [L.input(f"x_{t}") for t in range(4)]
    run = cells.rnn(L, xs[:3], L.parameter("w_x"), L.parameter("w_h"), phi=phi)
    heads.squared_error(L, heads.regression_head(L, run, L.parameter("w_o")), [xs[3]])
    used = {sym.name for sym in L.expand("ŷ").free_symbols}
    with s.place("pause and predict: what may a forecast use?"):
        s.prove("the forecast ŷ uses the observed prefix x_0, x_1, x_2 and not x_3", lambda: (
            {"x_0", "x_1", "x_2"} <= used and "x_3" not in used, "ŷ depends on " + ", ".join(sorted(used))))
        s.identity("the true x_3 supplies the target of the loss: ℒ = ½(ŷ − x_3)²", half_square(L, y="x_3"))
    (n3, u3), (n10, u10) = [(len(parameters(Lt)), Lt[bp.grads.name("w_h")].meta["uses"])  # more uses, no new weights
                            for Lt, _, bp in (scalar_rnn(f"{T}-step scalar RNN", T=T) for T in (3, 10))]
    s.prove("T = 3 and T = 10 have the same three parameters; w_h is used T times", lambda: (
        n3 == n10 == 3 and u3 == 3 and u10 == 10, f"parameters {n3} and {n10}; uses of w_h {u3}, {u10}"),
        at="carry a representation through the sequence")
    x, h = sp.symbols("x h", real=True)  # step t's input and previous state, the same two symbols at every step
    cell = [L[f"z_{t}"].node.expr.xreplace({L.symbol(f"x_{t}"): x, L.symbol(f"h_{t - 1}"): h}) for t in (1, 2)]
    s.prove("each step applies the same transformation to the current observation and the previous state",
            lambda: (cell[0] == cell[1], f"z_t = {cell[0]} at t = 1 and t = 2"), at="carry a representation",
            near="apply the same small transformation repeatedly")


@derivation.section("One scalar recurrent model: the three-step problem")
def three_step_problem(s):
    L, run, bp = scalar_rnn("three-step scalar RNN, general φ")
    S = s.use(L).symbol
    s.claim("3", run.T, what="T, the sequence length (time steps t = 0, 1, 2)", at="T = 3")
    s.claim("3", len(parameters(L)), what="θ = (w_x, w_h, w_o)", near="The trainable parameters are the three weights")
    s.given(L.value("h_{-1}"), what="h_{−1}, the fixed initial state", at="initial state")
    s.identity("z_0 = w_x x_0 + w_h h_{−1} = w_x x_0 at h_{−1} = 0", L.expand("z_0", values=True) - S("w_x") * S("x_0"),
               at="Table 3, first forward row")
    s.identity("the cell reuses w_x and w_h at every step: z_t = w_x x_t + w_h h_{t−1}",
               *[L[f"z_{t}"].node.expr - (S("w_x") * S(f"x_{t}") + S("w_h") * S(f"h_{t - 1}")) for t in (1, 2)],
               at="the recurrent cell", near="The cell itself is the same at every time step")
    with s.place("prediction and loss"):
        s.identity("ŷ = w_o h_2", L["ŷ"].node.expr - S("w_o") * S("h_2"))
        s.identity(r"\mathcal L=\frac12(\widehat y-y)^2", half_square(L), what="the final-output loss")
        s.claim("1/2", loss_factor(L), what="the factor of ℒ that cancels the 2 of the square")
        s.identity("with this factor, ∂ℒ/∂ŷ = ŷ − y = e exactly", sp.diff(L["ℒ"].node.expr, S("ŷ")) - (S("ŷ") - S("y")))


@derivation.section("Match each forward operation to its backward calculation (Table 3)")
def table_3(s):
    L, run, bp = scalar_rnn("three-step scalar RNN, general φ")
    S, w_h = s.use(L).symbol, L.symbol("w_h")
    s.paired_rows("Table 3", L, bp.table())
    weights = [L[f"z_{t}"].node.expr.free_symbols & {S(n) for n in parameters(L)} for t in range(3)]
    s.prove("each unrolled box uses the same recurrent and input weights", lambda: (
        weights[0] == weights[1] == weights[2] == {S("w_x"), w_h}, f"the weights of z_0, z_1, z_2: {weights}"),
        at="unrolling", near="Each box uses the same")
    d = {t: sp.Derivative(phi(S(f"z_{t}")), S(f"z_{t}")) for t in range(3)}
    s.identity(r"\mathcal L=\tfrac12(\widehat y-y)^2", half_square(L), at="Table 3, forward column")
    for text, name, expected in (  # the backward column, from the loss row up
            ("∂ℒ/∂ŷ = ŷ − y = e", "e", S("ŷ") - S("y")), ("g_2^h = e w_o", "g_2^h", S("e") * S("w_o")),
            ("g_2^z = g_2^h φ′(z_2)", "g_2^z", S("g_2^h") * d[2]), ("g_1^h = g_2^z w_h", "g_1^h", S("g_2^z") * w_h),
            ("g_1^z = g_1^h φ′(z_1)", "g_1^z", S("g_1^h") * d[1]), ("g_0^h = g_1^z w_h", "g_0^h", S("g_1^z") * w_h),
            ("g_0^z = g_0^h φ′(z_0)", "g_0^z", S("g_0^h") * d[0]),
            ("∂ℒ/∂h_{−1} = g_0^z w_h", bp.adjoint("h_{-1}"), S("g_0^z") * w_h)):
        s.identity(text, L[name].node.expr - expected, at="Table 3, backward column")
    s.given(L.value("h_{-1}"), what="h_{−1}, fixed, where the backward pass stops", at="first row")
    params, dh = parameters(L), bp.adjoint("h_{-1}")
    s.prove("the fixed initial state receives a sensitivity ∂ℒ/∂h_{−1} but no update: it is an input, not a parameter",
            lambda: (L["h_{-1}"].kind == "input" and "h_{-1}" not in params and dh in L,
                     f"parameters {params}; ∂ℒ/∂h_{{−1}} = {L[dh].node.expr}"), at="first row")
    for t in (2, 1, 0):  # g_t^z = e w_o φ′(z_2) [w_h φ′(z_1)] … down to φ′(z_t)
        path = " w_h ".join(f"φ′(z_{k})" for k in range(2, t - 1, -1))
        s.identity(f"substituting the backward rows: g_{t}^z = e w_o {path}", down_to(L, bp, f"g_{t}^z", "e")
                   - S("e") * S("w_o") * w_h ** (2 - t) * sp.Mul(*[d[k] for k in range(t, 3)]), at="substitution")


@derivation.section("Why shared-weight gradients contain sums")
def shared_sums(s):
    L, run, bp = scalar_rnn("three-step scalar RNN, general φ")
    S, g = s.use(L).symbol, bp.grads.name
    h_in = ["h_{-1}", "h_0", "h_1"]  # the local inputs of w_h's three uses
    s.claim("3", L[g("w_x")].meta["uses"], what="uses of w_x, one contribution each", at="sum over uses")
    s.prove("the one shared w_x enters every step's preactivation", lambda: all(
        L[f"z_{t}"].node.expr.has(S("w_x")) for t in range(3)), at="sum over uses", near=r"The same \(w_x\) appears")
    s.identity("∂ℒ/∂w_x = g_0^z x_0 + g_1^z x_1 + g_2^z x_2", L[g("w_x")].node.expr
               - sum(S(f"g_{t}^z") * S(f"x_{t}") for t in range(3)), at="boxed gradient for w_x")
    s.identity("∂ℒ/∂w_h = g_0^z h_{−1} + g_1^z h_0 + g_2^z h_1", L[g("w_h")].node.expr
               - sum(S(f"g_{t}^z") * S(h) for t, h in enumerate(h_in)), at="boxed gradient for w_h")
    s.identity("∂ℒ/∂w_o = e h_2 = (ŷ − y) h_2", L[g("w_o")].node.expr - S("e") * S("h_2"),
               down_to(L, bp, g("w_o")) - (S("ŷ") - S("y")) * S("h_2"), at="boxed gradient for w_o")
    for w in ("w_x", "w_h"):  # the bracketed sums, every path written out, from first principles
        s.identity(f"∂ℒ/∂{w} expanded as (ŷ − y) w_o [one path product per use], equal to the recursion "
                   f"(T = 3, general φ)", bptt_.expanded_equals_path_sum(bp, w), at=f"bracketed path sum for {w}")
    s.identity("∂ℒ/∂x_0 = g_0^z w_x", L[bp.adjoint("x_0")].node.expr - S("g_0^z") * S("w_x"), at="input gradient")
    Lu, per_use = bptt_.labelled_uses()  # the three uses of w_x labelled apart; their gradients summed
    Ls, _, bp_s = scalar_rnn("three-step scalar RNN, h_{−1} left out", h_init=False)
    relabel = {Lu.symbol(f"w_x^[{t}]"): S("w_x") for t in range(3)}
    with s.place("use labels w_x^[0], w_x^[1], w_x^[2]"):
        s.identity("with w_x^[t] = w_x for every use, Σ_t ∂ℒ/∂w_x^[t] equals the shared ∂ℒ/∂w_x",
                   sum(per_use).xreplace(relabel) - Ls.expand(bp_s.grads.name("w_x")))
        ones = [sp.diff(u.xreplace(relabel), S("w_x")) - 1 for u in relabel]
        s.identity(r"\frac{\partial w_x^{[t]}}{\partial w_x}=1", *ones, what="each use moves one for one with w_x")
        moves = {sp.diff(u.xreplace(relabel), S("w_x")) for u in relabel}
        s.prove("each labelled use moves by the same amount as w_x", lambda: (len(moves) == 1, f"moves {moves}"),
                near="so each use changes by the same amount")
    vals, point = chosen(x_0=1, x_1=1, x_2=1, w_x="0.5", w_h="-0.5", w_o=1, y=1)
    Lt, _, bp_t = scalar_rnn(f"three-step tanh RNN at {point}", activation=sp.tanh, values=vals)
    ev = s.values.rows(s.use(Lt))
    s.note(f"The handout assigns no numbers to this model; the tanh instance {point} is chosen here.")
    contrib_x, dx0 = [ev[f"g_{t}^z"] * ev[f"x_{t}"] for t in range(3)], ev[bp_t.adjoint("x_0")]
    s.given(L.value("h_{-1}"), what="h_{−1} (the first w_h term vanishes)", at="first recurrent-weight term")
    with s.place("pause and predict: which use has no recurrent input?"):
        s.given(L.value("h_{-1}"), what="h_{−1}, the fixed initial state")
        s.identity("the first w_h contribution g_0^z h_{−1} vanishes: its local input h_{−1} is the fixed zero",
                   S("g_0^z") * L.value("h_{-1}"), ev["g_0^z"] * ev["h_{-1}"])
        s.prove("the first input still affects the loss: g_0^z x_0 and ∂ℒ/∂x_0 = g_0^z w_x are nonzero", lambda: (
            contrib_x[0] != 0 and dx0 != 0, f"g_0^z x_0 = {short(contrib_x[0])}, ∂ℒ/∂x_0 = {short(dx0)}"))
    s.prove("contributions to a shared weight can have opposite signs and cancel: |∂ℒ/∂w_x| < max_t |g_t^z x_t|",
            lambda: (min(contrib_x) < 0 < max(contrib_x) and abs(sum(contrib_x)) < max(abs(c) for c in contrib_x),
                     "g_t^z x_t = " + ", ".join(short(c) for c in contrib_x)), at="sums can cancel",
            near="the sum is not necessarily larger than each contribution")
    terms = sum(bp_t.ref(f"g_{t}^z") * bp_t.ref(h) for t, h in enumerate(h_in))
    s.agree("the sum of the three w_h contributions is the ledger's ∂ℒ/∂w_h", terms, bp_t.ref(bp_t.grads.name("w_h")),
            at="boxed gradient for w_h")


@derivation.section("What the products say about long-range gradients")
def long_range(s):
    L, run, bp = scalar_rnn("5-step scalar RNN, general φ, final loss", T=5)
    s.identity("∂h_t/∂h_{t−1} = φ′(z_t) w_h (t = 1)", jacobians.state_jacobian(s.use(L), "h_1", "h_0")[0, 0]
               - L.expand(jacobians.elman_jacobian(L, run, 1).name, keep=["h_0"]), at="transition factor")
    s.identity("∂ℒ/∂h_s = ∂ℒ/∂h_q Π_{t=s+1}^{q} [w_h φ′(z_t)] for every s < q (T = 5, no intervening losses)",
               *[down_to(L, bp, bp.g_h(s_), bp.g_h(q)) - L.symbol(bp.g_h(q)) * bptt_.state_sensitivity(bp, s_, q)
                 for q in range(1, 5) for s_ in range(q)], at="product over q − s transitions")
    hops = [sp.degree(down_to(L, bp, bp.g_z(t), "e"), L.symbol("w_h")) for t in range(5)]  # w_h factors to the loss
    s.prove("an earlier use passes through more recurrent transitions than a later one", lambda: (
        all(a > b for a, b in zip(hops, hops[1:])), f"w_h factors from use t = 0 … 4: {hops}"),
        at="one path per use", near="must pass through more recurrent transitions than one from a late use")
    small, large = "0.9", "1.2"
    s.note(f"The bounds are checked on two twelve-step trajectories chosen here: tanh with w_h = {small} and inputs "
           f"from [−1, 1] (factors at most {small}); ReLU with w_h = {large}, w_x = x_t = 1 (every factor {large}).")
    inputs = [exact(f"{v:.2f}") for v in np.random.default_rng(12).uniform(-1, 1, size=12)]
    s.prove("r<1", lambda: bptt_.scalar_path_bound(sp.tanh, exact(small), inputs, exact(small)), at="bound r<1",
            what="every factor at most r < 1: |∂ℒ/∂h_s| ≤ |∂ℒ/∂h_q| r^{q−s} (tanh)")
    s.prove("r>1", lambda: bptt_.scalar_path_bound(relu, exact(large), [1] * 12, exact(large), lower=True),
            at="bound r>1", what="a sustained lower bound r > 1: |∂ℒ/∂h_s| ≥ |∂ℒ/∂h_q| r^{q−s} (ReLU)",
            near="A sustained lower bound")
    g, f = bptt_.final_loss_sensitivities(relu, exact(large), [1] * 12)
    s.prove("factors of magnitude above one amplify the signal on its way back", lambda: (
        min(f) > 1 and g[0] > g[-1] > 0, f"factors ≥ {short(min(f), 4)}; |g_0|/|g_11| = {short(g[0] / g[-1], 4)}"),
        at="bound r>1", near="magnitude above one, they can instead amplify a nonzero signal")
    values = {f"x_{t}": sp.Rational(v) for t, v in enumerate(np.random.default_rng(6).normal(size=50))}
    Ln, _, bp_n = scalar_rnn("50-step tanh RNN, final loss", T=50, activation=sp.tanh,
                             values=values | chosen(w_x="0.7", w_h="0.95", w_o="1.3", y="0.25")[0])
    for w in ("w_x", "w_h"):  # T = 50: the path-product form against the recursion (final-only loss, tanh)
        Ln.define(f"P_{{{w}}}", bptt_.path_sum(bp_n, w), note=f"∂ℒ/∂{w} as a sum of path products")
        s.agree(f"T = 50: the path-product form of ∂ℒ/∂{w} equals the recursion to 45 digits",
                bp_n.ref(f"P_{{{w}}}"), bp_n.ref(bp_n.grads.name(w)), tol="1e-45", at="path products, T = 50")


def figure_3_w_h(s) -> tuple[str, sp.Rational]:
    """Figure 3's recurrent weight w_h, as the page prints it and exact."""
    text = s.derivation.whole_page.printed("w_h", near="we compute actual tanh trajectories", index=0)
    return text, exact(text)


@derivation.section("How the activation affects those factors (Table 4)")
def activation_slopes(s):
    w_h = figure_3_w_h(s)[1]  # |∂h_11/∂h_0|, the product of eleven factors |w_h φ′(z_t)|, for x_t = 0 and x_t = 1
    path = {x: sp.Mul(*bptt_.final_loss_sensitivities(sp.tanh, w_h, [x] * 12)[1]) for x in (0, 1)}
    detail = f"|∂h_11/∂h_0| = {short(path[0], 4)} with x_t = 0, {short(path[1], 4)} with x_t = 1"
    s.prove("one recurrent weight passes very different sensitivities along two input sequences (tanh, constant "
            "inputs zero and one, twelve steps)", lambda: (path[0] > 1 and path[1] < sp.Rational(1, 10**6), detail),
            at="preactivations", near="The same recurrent weight can therefore transmit very different sensitivities")
    z, p, u = sp.Symbol("z", real=True), sp.Symbol("p", positive=True), sp.Symbol("u", positive=True)
    sig, table = sigmoid(z), jacobians.activation_table(z)
    for row, printed in zip(table, s.page.table("Table 4")):  # each slope stated as the table prints it
        extra = [row.slope.subs(z, p) - 1, row.slope.subs(z, -p)] if row.name == "relu" else []
        s.identity(printed[1].replace(r"\(", "").replace(r"\)", ""), row.slope - row.written, *extra,
                   what=f"the slope of {row.name}", at=f"Table 4, {row.name}")
        if row.name == "sigmoid":
            s.claim("1/4", sp.diff(sig, z).subs(z, 0), what="σ′(0), the largest sigmoid slope", at="Table 4, sigmoid")
    s.identity("1/4 − σ(z)(1 − σ(z)) = (σ(z) − 1/2)² ≥ 0, so σ′ ≤ 1/4 everywhere",
               sp.Rational(1, 4) - sig * (1 - sig) - (sig - sp.Rational(1, 2)) ** 2, at="Table 4, sigmoid")
    s.claim("1", sp.diff(sp.tanh(z), z).subs(z, 0), at="Table 4, tanh", near="The slope is near one near zero")
    # Saturation: z → ∞ is u = e^{−z} → 0⁺, where each slope is a rational function of u (tanh′ = 4u²/(1 + u²)²).
    for f, what in ((sp.tanh(z), "tanh′(z) as z → ∞ (saturation)"), (sig, "σ′(z) as z → ∞ (saturation)")):
        limit = sp.limit(sp.cancel(sp.diff(f, z).rewrite(sp.exp).subs(z, -sp.log(u))), u, 0, "+")
        s.claim("0", limit, what=what, at="saturation", near="their derivatives approach zero")
    # ReLU's slopes: printed in its row's φ′ statement, claimed above, so not looked for again (in_text=False)
    for printed, at_z, what in (("1", 1, "ReLU′(z > 0)"), ("0", -1, "ReLU′(z < 0): the path is cut"),
                                ("0", 0, "ReLU′(0) by the implementation's convention (torch's autograd: 0)")):
        s.claim(printed, sp.diff(relu(z), z).subs(z, at_z), what=what, at="Table 4, ReLU", in_text=False)
    passed = [sp.diff(relu(z), z).subs(z, a) for a in (p, -p)]  # the slope at any positive and negative preactivation
    s.prove("ReLU passes the signal at a positive preactivation and cuts it at a negative one", lambda: (
        passed == [1, 0], f"ReLU′(p) = {passed[0]}, ReLU′(−p) = {passed[1]} for p > 0"), at="Table 4, ReLU",
        near="Positive preactivations pass the signal through the activation; a negative preactivation")
    s.note("ReLU is not differentiable at 0; the handout asks an implementation to fix a convention. symseq uses "
           "ReLU′(0) = 0 (the step H(z) with H(0) = 0), as torch's autograd; relu_at_zero(x, 1/2) records the other.")
    L, run, bp = scalar_rnn("four-step ReLU RNN", T=4, activation=relu)
    pos = {L.symbol(f"z_{t}"): sp.Symbol(f"p_{t}", positive=True) for t in range(4)}
    s.identity("on an active ReLU path (every z_t > 0) ∂h_3/∂h_0 = w_h³: no attenuation, the w_h factors remain",
               bptt_.state_sensitivity(bp, 0, 3).xreplace(pos) - L.symbol("w_h") ** 3, at="ReLU paths")
    Lr, run_r, _ = scalar_rnn("twelve-step ReLU RNN, w_h above one", T=12, activation=relu,
                              values={**{f"x_{t}": 1 for t in range(12)}, "w_x": 1, "w_h": w_h, "w_o": 1, "y": 0})
    hs, g = [Lr.value(h.name) for h in run_r.h], bptt_.final_loss_sensitivities(relu, w_h, [1] * 12)[0]
    s.prove("on an active ReLU path a recurrent weight above one amplifies the states and the gradients", lambda: (
        bool(w_h > 1) and all(bool(a < b) for a, b in zip(hs, hs[1:])) and g[0] > g[-1],
        f"w_h = {w_h}: h_11 = {short(hs[-1], 4)}, |g_0|/|g_11| = {short(g[0] / g[-1], 4)}"), at="ReLU paths",
        near="repeated magnitudes above one can amplify")
    Li = scalar_rnn("three-step identity-activation RNN", activation="identity")[0]
    yhat, xs = Li.expand("ŷ"), [Li.symbol(f"x_{t}") for t in range(3)]
    s.identity("identity activation: ŷ is affine in (x_0, x_1, x_2): every second derivative vanishes",
               *[sp.diff(yhat, a, b) for a in xs for b in xs], at="identity activation")
    s.show_table("Table 4: activation slopes", sp.Matrix([[r.slope] for r in table]),
                 rows=[r.name for r in table], cols=["φ′(z)"], digits=None)


@derivation.section("Why tanh is commonly used in a simple RNN")
def why_tanh(s):
    L, run, bp = scalar_rnn("three-step tanh RNN", activation=sp.tanh)
    S, z = s.use(L).symbol, sp.Symbol("z", real=True)
    back = {sp.tanh(S(f"z_{t}")): S(f"h_{t}") for t in range(3)}
    s.identity(r"\phi'(z_t)=1-h_t^2", *[down_to(L, bp, bp.g_z(t), bp.g_h(t)).xreplace(back)
                                       - S(bp.g_h(t)) * (1 - S(f"h_{t}") ** 2) for t in range(3)],
               what="with h_t = tanh(z_t), g_t^z = g_t^h (1 − h_t²)", at="tanh derivative")
    s.prove("tanh takes both signs: tanh(−z) = −tanh(z), negative for every positive z", lambda: (
        sp.tanh(-z) + sp.tanh(z) == 0 and sp.tanh(-1) < 0 < sp.tanh(1),
        f"tanh(±1) = ±{short(sp.N(sp.tanh(1), 30), 4)}"),
        at="bounded states", near="It supports both positive and negative values")
    for printed, end in (("-1", -sp.oo), ("1", sp.oo)):  # tanh's bounds
        s.claim(printed, sp.limit(sp.tanh(z), z, end), at="bounded states", near=r"stays between \(-1\) and \(1\)")
    w_h_text, w_h = figure_3_w_h(s)  # twelve steps: saturating with x_t = 1; with x_t = 0 every state is zero
    g, f = bptt_.final_loss_sensitivities(sp.tanh, w_h, [1] * 12)
    f0 = bptt_.final_loss_sensitivities(sp.tanh, w_h, [0] * 12)[1]
    s.prove(r"|w_h|>1", lambda: (w_h > 1 and max(f[3:]) < 1 and g[0] < g[-1] / 10 ** 6, f"factors from t = 4 on "
            f"at most {short(max(f[3:]), 4)}; |g_0|/|g_11| = {short(g[0] / g[-1], 4)}"), at="saturation",
            what=f"repeated saturation suppresses the signal although |w_h| > 1 (w_h = {w_h_text}, x_t = 1)")
    Lz, run_z, _ = scalar_rnn("twelve-step tanh RNN, zero input", T=12, activation=sp.tanh,
                              values={**{f"x_{t}": 0 for t in range(12)}, "w_x": 1, "w_h": w_h, "w_o": 1, "y": 0})
    states = [Lz.value(h.name) for h in run_z.h]
    detail = f"x_t = 0: h_t = 0, every |w_h φ′(z_t)| = {short(f0[0], 4)}, |∂h_11/∂h_0| = {short(sp.Mul(*f0), 4)}"
    s.prove("bounded tanh states do not bound the gradient: with zero input the states stay at zero while the "
            "sensitivity grows along the path", lambda: (all(h == 0 for h in states) and min(f0) > 1, detail),
            at="bounded states", near="bounded state values do not guarantee bounded gradients")


@derivation.section("Compute the complete gradient before an update")
def gradient_update(s):
    vals, point = chosen(x_0="0.5", x_1=-1, x_2="0.25", w_x="0.8", w_h="0.6", w_o="1.5", y=1)
    L, run, bp = scalar_rnn("three-step tanh RNN at a chosen point", activation=sp.tanh, values=vals)
    ev = s.values.rows(s.use(L))
    s.note(f"The point {point} is chosen here; the handout states the update rule without numbers.")
    names, eta = ("w_x", "w_h", "w_o"), exact("0.01")
    grads, params = {n: sp.Float(ev[bp.grads.name(n)], 40) for n in names}, {n: L[n].value for n in names}
    small, large = (clipping.gradient_step(params, grads, step) for step in (eta, 50))
    before, after = ev["ℒ"], [evaluate(L, "mpmath", dps=40, values=p)["ℒ"] for p in (small, large)]
    inner = sum((small[n] - params[n]) * grads[n] for n in names)
    s.prove(r"\eta>0", lambda: (eta > 0 and inner < 0, f"η = {eta}: (w_new − w)·∇ℒ = {short(inner)}"),
            what="a positive learning rate: the step −η∇ℒ points against the gradient", at="learning rate")
    s.prove("a small negative-gradient step decreases the loss", lambda: (after[0] < before, f"η = {eta}, ℒ: "
            f"{short(before, 10)} → {short(after[0], 10)}"), at="gradient descent", near="step decreases the loss")
    s.given(L.value("h_{-1}"), what="h_{−1}, from which the updated model's states are recomputed", at="updated model")
    s.prove("a large step can increase the loss", lambda: (after[1] > before, f"η = 50, ℒ: {short(before, 10)} → "
            f"{short(after[1], 10)}"), at="gradient descent", near="a large step can increase the loss")
    Lz, _, bp_z = scalar_rnn("tanh RNN at zero weights", activation=sp.tanh, values=vals | dict.fromkeys(names, 0))
    zeros_ = {n: s.use(Lz).value(bp_z.grads.name(n)) for n in names}
    stepped = clipping.gradient_step({n: sp.S.Zero for n in names}, zeros_, exact("0.1"))
    with s.place("zero gradient"):
        s.identity("at zero weights ∂ℒ/∂w_x, ∂ℒ/∂w_h and ∂ℒ/∂w_o all vanish: a zero gradient", *zeros_.values())
        s.prove("a zero gradient leaves every weight unchanged", lambda: (all(v == 0 for v in stepped.values()),
                str(stepped)), near="A zero gradient gives no update under this rule")


@derivation.section("Two coordinates are two coupled scalar updates")
def two_coordinates(s):
    L, run, bp = vector_rnn("two-coordinate RNN, D = H = 2, C = 1, general φ")
    Wx, Wh, Wo, x1, h0, z1, h2 = (E(s.use(L), n) for n in ("W_x", "W_h", "W_o", "x_1", "h_0", "z_1", "h_2"))
    z, h = L.expand("z_1", keep=["h_0"]), L.expand("h_1", keep=["z_1"])
    with s.place("coordinate equations"):
        for i in (0, 1):
            s.identity(f"z_{{t,{i}}} = W_{{x,{i}0}} x_{{t,0}} + W_{{x,{i}1}} x_{{t,1}} + W_{{h,{i}0}} h_{{t−1,0}} "
                       f"+ W_{{h,{i}1}} h_{{t−1,1}} (t = 1)", z[0, i] - Wx[i, :].dot(x1) - Wh[i, :].dot(h0))
        s.identity("the activation acts on each coordinate: h_{t,i} = φ(z_{t,i})", h - z1.applyfunc(phi))
    with s.place("scalar head"):
        s.identity("ŷ = W_{o,00} h_{T−1,0} + W_{o,01} h_{T−1,1}", L.expand("ŷ", keep=["h_2"])[0, 0] - Wo.dot(h2))
        s.identity(r"\mathcal L=\tfrac12(\widehat y-y)^2", half_square(L), what="one prediction, two hidden features")
    loss_diff, grad_diffs = bptt_.widths_one()  # widths of one recover the scalar model exactly
    s.identities(("setting D = H = C = 1 recovers the scalar model: the same loss", loss_diff),
                 ("… and the same three weight gradients", *grad_diffs), at="widths of one")


DIMS, D3 = {"D": 5, "H": 3, "C": 2}, {"D": 3, "H": 2, "C": 2}  # Table 5's sizes; those of the backward sections


@derivation.section("General forward pass: read the shapes with the equation (Table 5)")
def shapes(s):
    L, run, bp = vector_rnn("vector RNN, D = 5, H = 3, C = 2", **DIMS, bias=True, head_bias=True)
    s.use(L, sizes=DIMS)  # (its rows bind the page's forward equations and its shapes)
    shape = lambda *args, **kw: s.claim_shape(*args, dims=DIMS, **kw)  # noqa: E731
    for printed, name, what in (  # each in the row of Table 5 that names its symbol (ŷ shares a row with y)
            ("1×D", "x_1", "x_t"), ("1×H", "z_1", "z_t"), ("1×H", "h_1", "h_t"), ("H×D", "W_x", "W_x"),
            ("H×H", "W_h", "W_h"), ("C×H", "W_o", "W_o"), ("1×H", "b_h", "b_h"), ("1×C", "b_o", "b_o"),
            ("1×C", "ŷ", "ŷ"), ("1×C", "y", "y"), ("1×H", bp.g_h(1), "g_t^h"), ("1×H", bp.g_z(1), "g_t^z"),
            ("1×C", "e", "e")):
        shape(printed, L.shape(name), what=what, at=f"Table 5, {'y' if what == 'ŷ' else what}")
    x1, W_x, h0, W_h, h2, W_o = (L.handle(n) for n in ("x_1", "W_x", "h_0", "W_h", "h_2", "W_o"))
    with s.place("forward equation"):
        s.given(0, what="h_{−1}, the zero initial state of the vector model")
        s.identity(r"\mathcal L=\tfrac12\sum_{c=0}^{C-1}(\widehat y_c-y_c)^2",
                   L.expand("ℒ", keep=["ŷ"]) - sum((E(L, "ŷ") - E(L, "y")).applyfunc(lambda d: d ** 2)) / 2,
                   what="half the squared errors summed over the C = 2 output coordinates; no mean")
        s.identity("from the zero initial state the first step has no recurrent term: z_0 = x_0 W_xᵀ + b_h",
                   L.expand("z_0", keep=["x_0"]) - (E(L, "x_0") * E(L, "W_x").T + E(L, "b_h")))
        shape("1×D", x1, what="x_t, the left factor of x_t W_xᵀ: (1×D)(D×H)")
        shape("1×H", x1 @ W_x.T, what="x_t W_xᵀ", near=r"yielding \(1\times H\); the recurrent product")
        s.prove("the recurrent product h_{t−1} W_hᵀ has the shape of x_t W_xᵀ", lambda: (  # in words, no 1×H of its own
            (h0 @ W_h.T).shape == (x1 @ W_x.T).shape, f"both {(x1 @ W_x.T).shape}"),
            near="the recurrent product yields that same shape")
        shape("1×H", h2, what="h_{T−1}, the head's left factor", near=r"The head is \((1\times H)(H\times C)\)")
        shape("1×C", h2 @ W_o.T, what="h_{T−1} W_oᵀ: (1×H)(H×C)")
    for name, printed in (("W_x", "H×D"), ("W_h", "H×H"), ("W_o", "C×H")):
        shape(printed, L.shape(bp.grads.name(name)), what=f"∇_{name} ℒ", at="gradient shapes")
    shape_b = {b: (L.shape(bp.grads.name(b)), L.shape(b)) for b in ("b_h", "b_o")}
    s.prove("each bias gradient has its parameter's shape: ∇_{b_h} ℒ one row of H entries, ∇_{b_o} ℒ one of C",
            lambda: (shape_b == {"b_h": ((1, DIMS["H"]),) * 2, "b_o": ((1, DIMS["C"]),) * 2},
                     f"∇_b_h ℒ {shape_b['b_h'][0]}, ∇_b_o ℒ {shape_b['b_o'][0]}"), at="gradient shapes")
    s.identity(r"C=1", half_square(vector_rnn("vector RNN with C = 1", C=1)[0]),
               what="for C = 1, ℒ = ½ Σ_c (ŷ_c − y_c)² is the earlier loss ½(ŷ − y)²", at="loss")


@derivation.section("General backward pass: an outer product collects local derivatives")
def vector_backward(s):
    T = 3
    L, run, bp = vector_rnn("vector RNN, D = 3, H = 2, C = 2, biases", **D3, bias=True, head_bias=True)
    Wx, Wh, Wo, e = (E(s.use(L), n) for n in ("W_x", "W_h", "W_o", "e"))
    Gz, Gh, xs, hs = ([E(L, name(t)) for t in range(T)] for name in (bp.g_z, bp.g_h, "x_{}".format, "h_{}".format))
    slope = [E(L, f"z_{t}").applyfunc(lambda v: sp.Derivative(phi(v), v)) for t in range(T)]
    s.identities(("g_{T−1}^h = e W_o", down_to(L, bp, bp.g_h(T - 1), "e") - e * Wo),
                 *[(f"g_{t}^z = g_{t}^h ⊙ φ′(z_{t})", down_to(L, bp, bp.g_z(t), bp.g_h(t))
                    - Gh[t].multiply_elementwise(slope[t])) for t in range(T)],
                 *[(f"g_{t - 1}^h = g_{t}^z W_h", down_to(L, bp, bp.g_h(t - 1), bp.g_z(t)) - Gz[t] * Wh)
                   for t in range(1, T)], at="backward recursion")
    s.identity("two paths leave h_{t−1,0}: g_{t−1,0}^h = g_{t,0}^z W_{h,00} + g_{t,1}^z W_{h,10} (t = 2)",
               down_to(L, bp, bp.g_h(1), bp.g_z(2))[0, 0] - Gz[2].dot(Wh[:, 0]), at="two-coordinate example")
    G = {n: down_to(L, bp, n, *[bp.g_z(t) for t in range(T)], "e") for n in bp.grads.map.values()}
    g = lambda leaf: G[bp.grads.name(leaf)]  # noqa: E731  (the gradient of a parameter)
    s.identity("∂ℒ/∂W_{x,ij} = Σ_t g_{t,i}^z x_{t,j} for every entry (i, j)",
               *[g("W_x")[i, j] - sum(Gz[t][i] * xs[t][j] for t in range(T)) for i in range(2) for j in range(3)],
               at="entry gradient")
    gz, x0 = L.handle(bp.g_z(0)), L.handle("x_0")
    for printed, shape, what in (("H×1", gz.T.shape, "(g_t^z)ᵀ, a column"), ("1×D", x0.shape, "x_t, a row"),
                                 ("H×D", (gz.T @ x0).shape, "the outer product (g_t^z)ᵀ x_t: (H×1)(1×D)")):
        s.claim_shape(printed, shape, dims={"D": 3, "H": 2}, what=what, at="outer product")
    rows = sp.Matrix.vstack  # Σ_t (g_t^z)ᵀ r_t is Gᵀ R, with the g_t^z stacked as the rows of G and the r_t of R
    s.identities(("∇_{W_x} ℒ = Σ_t (g_t^z)ᵀ x_t (outer products, H×D)", g("W_x") - rows(*Gz).T * rows(*xs)),
                 ("∇_{W_h} ℒ = Σ_t (g_t^z)ᵀ h_{t−1} (h_{−1} = 0)", g("W_h") - rows(*Gz[1:]).T * rows(*hs[:-1])),
                 ("∇_{W_o} ℒ = eᵀ h_{T−1}", g("W_o") - e.T * hs[T - 1]),
                 ("∇_{b_h} ℒ = Σ_t g_t^z and ∇_{b_o} ℒ = e", g("b_h") - sp.ones(1, T) * rows(*Gz), g("b_o") - e),
                 at="gradient formulas")
    s.identity("∂ℒ/∂x_t = g_t^z W_x", *[G[bp.adjoint(f"x_{t}")] - Gz[t] * Wx for t in range(T)], at="input gradients")
    Lb, _, bpb = vector_rnn("vector tanh RNN, b_h = 0 at a chosen point", **D3, bias=True, activation=sp.tanh)
    rng = np.random.default_rng(4)
    vals = {it.name: sp.Matrix(rng.normal(size=it.shape)).applyfunc(sp.Rational) for it in Lb.leaves}
    vals["b_h"] = sp.zeros(1, 2)
    gb = evaluate(Lb, "mpmath", dps=30, values=vals, targets=[bpb.grads.name("b_h")])[bpb.grads.name("b_h")]
    s.prove("a trainable bias equal to zero can receive a nonzero derivative",
            lambda: (any(v != 0 for v in gb.flat), "∇_{b_h} ℒ = " + ", ".join(short(v) for v in gb.flat)),
            at="zero-valued bias", near="A zero-valued trainable bias can receive a nonzero derivative")
    s.identity(r"D=H=C=1", *bptt_.widths_one()[1], what="with widths one the outer products are ordinary products "
               "and the vector gradients are the three scalar weight gradients", at="widths of one")


@derivation.section("If every position has a target, two paths meet at each state")
def per_position(s):
    T = 3
    L, run, bp = vector_rnn("vector RNN with a loss at every position", **D3, head_bias=True, positions="all")
    Wh, Wo, es = E(s.use(L), "W_h"), E(L, "W_o"), [E(L, bp.e(t)) for t in range(T)]
    err = lambda L, t: E(L, f"ŷ_{t}") - E(L, f"y_{t}")  # noqa: E731  (ŷ_t − y_t, entry by entry)
    per_loss = sum(sum(err(L, t).applyfunc(lambda d: d ** 2)) for t in range(T)) / 2
    head = {n: set(E(L, n)) for n in ("W_o", "b_o")}
    reads = [set().union(*(e.free_symbols for e in L.expand(f"ŷ_{t}", keep=[f"h_{t}"]))) for t in range(T)]
    s.prove("every position's prediction ŷ_t = h_t W_oᵀ + b_o uses the one shared head W_o, b_o", lambda: (
        all(head["W_o"] | head["b_o"] <= r and not (r - head["W_o"] - head["b_o"] - set(E(L, f"h_{t}")))
            for t, r in enumerate(reads)), "ŷ_0, ŷ_1, ŷ_2 read W_o, b_o and their own h_t"),
        at="per-position loss", near="retain regression and the same shared head")
    s.identity(r"\ell_t=\tfrac12\sum_{c=0}^{C-1}(\widehat y_{t,c}-y_{t,c})^2",
               L.expand("ℒ", keep=[f"ŷ_{t}" for t in range(T)]) - per_loss, at="per-position loss",
               what="ℒ = Σ_t ℓ_t, each ℓ_t half the squared error over the C = 2 output coordinates")
    with s.place("two-path recursion"):
        for t in range(T - 1):
            s.identity(f"g_{t}^h = e_{t} W_o (current head) + g_{t + 1}^z W_h (future states)",
                       down_to(L, bp, bp.g_h(t), bp.e(t), bp.g_z(t + 1)) - (es[t] * Wo + E(L, bp.g_z(t + 1)) * Wh))
        s.identity(r"\mathbf g_T^z=\mathbf 0", down_to(L, bp, bp.g_h(T - 1), bp.e(T - 1)) - es[T - 1] * Wo,
                   what=f"the backward boundary: the last state has only its head path, g_{T - 1}^h = e_{T - 1} W_o")
    G = lambda name: down_to(L, bp, bp.grads.name(name), *[bp.e(t) for t in range(T)])  # noqa: E731
    s.identity("∇_{W_o} ℒ = Σ_t e_tᵀ h_t and ∇_{b_o} ℒ = Σ_t e_t",
               G("W_o") - sp.Matrix.vstack(*es).T * sp.Matrix.vstack(*[E(L, f"h_{t}") for t in range(T)]),
               G("b_o") - sp.ones(1, T) * sp.Matrix.vstack(*es), at="shared head")
    s.identities(*[(f"e_{t} = ŷ_{t} − y_{t}", L.expand(bp.e(t), keep=[f"ŷ_{t}"]) - err(L, t)) for t in range(T)],
                 at="error signals")
    Ls, _, bps = scalar_rnn("three-step scalar RNN, a loss at every position", positions="all")
    s.identity("the two-path recursion equals direct differentiation of the unrolled ℒ = Σ_t ℓ_t (each loss once)",
               *[Ls.expand(bps.grads.name(w)) - sp.diff(Ls.expand("ℒ"), Ls.symbol(w)) for w in ("w_x", "w_h", "w_o")],
               at="each later loss counted once")
    Lm, _, bpm = vector_rnn("vector RNN, mean over T = 3 positions and B = 2 examples", **D3, B=2, positions="all",
                            loss_positions="mean", batch="mean")
    at = "1/T and 1/B scaling"
    s.identities(*[(f"mean over positions and examples: ∂ℒ/∂ŷ_{t} = (ŷ_{t} − y_{t})/(T B) = e_{t}/6",
                    s.use(Lm).expand(bpm.e(t), keep=[f"ŷ_{t}"]) - err(Lm, t) / 6) for t in range(T)], at=at)
    s.identity("the recurrent signal is not divided again: g_t^h = ∂ℒ/∂ŷ_t W_o + g_{t+1}^z W_h, "
               "with no 1/T on the second term", down_to(Lm, bpm, bpm.g_h(0), bpm.e(0), bpm.g_z(1))
               - (E(Lm, bpm.e(0)) * E(Lm, "W_o") + E(Lm, bpm.g_z(1)) * E(Lm, "W_h")), at=at)
    s.prove("the direct error signals carry 1/(T B) = 1/6 for a mean over T = 3 positions and B = 2 examples",
            lambda: (bpm.loss.scale == sp.Rational(1, 6), f"scale {bpm.loss.scale}"), at=at)
    scaled = []  # a mean over B examples (B = 2, 3), with a sum or a mean over T = 2 positions
    for B, over_T in ((2, "sum"), (2, "mean"), (3, "sum"), (3, "mean")):
        Lb, _, bpb = vector_rnn(f"vector RNN, B = {B}, mean over examples", T=2, D=1, H=1, C=1, B=B,
                                positions="all", loss_positions=over_T, batch="mean")
        want = sp.Rational(1, B) / (2 if over_T == "mean" else 1)
        scaled += [bpb.loss.scale - want, Lb.expand(bpb.e(0), keep=["ŷ_0"]) - err(Lb, 0) * want]
    s.identity(r"1/B", *scaled, what="a mean over B examples adds the factor 1/B to ℒ and to each ∂ℒ/∂ŷ_t "
               "(B = 2 and B = 3), on top of 1/T for a mean over positions", at=at)
    draws = [sp.Rational(v) for v in np.random.default_rng(50).normal(size=100)]
    values = {**{f"x_{t}": draws[t] for t in range(50)}, **{f"y_{t}": draws[50 + t] for t in range(50)}}
    Ln, _, bpn = scalar_rnn("50-step tanh RNN, loss at each position (mean)", T=50, activation=sp.tanh, positions="all",
                            loss_positions="mean", values=values | chosen(w_x="0.9", w_h="1.05", w_o="0.8")[0])
    factors = bptt_.factor_values(s.values.rows(Ln))
    for w in ("w_x", "w_h", "w_o"):
        s.agree(f"T = 50, every position scored: Σ over all paths of ∂ℒ/∂{w} equals the recursion to 45 digits",
                bptt_.path_sum_value(bpn, w, factors), bpn.ref(bpn.grads.name(w)), tol="1e-45",
                at="path products, T = 50")


@derivation.section("Matrix paths can shrink, grow, and change direction")
def matrix_paths(s):
    L, run, bp = vector_rnn("vector RNN, H = 2, general φ, h_{−1} given", T=4, D=2, H=2, C=2, h_init=True)
    J = {t: down_to(s.use(L), bp, jacobians.elman_jacobian(L, run, t).name) for t in range(4)}
    s.identity("(J_t)_ij = ∂h_{t,i}/∂h_{t−1,j} equals diag(φ′(z_t)) W_h (t = 2)",
               jacobians.state_jacobian(L, "h_2", "h_1") - L.expand("J_2", keep=["h_1"]), at="Jacobian")
    s.identities(*[(f"g_{t - 1}^h = g_{t}^h J_{t}", down_to(L, bp, bp.g_h(t - 1), bp.g_h(t)) - E(L, bp.g_h(t)) * J[t])
                   for t in (1, 2, 3)], at="row sensitivity")
    P = jacobians.jacobian_product(L, run, 3, 0)
    s.identity("g_0^h = g_3^h J_3 J_2 J_1 (no losses in between)", down_to(L, bp, bp.g_h(0), bp.g_h(3))
               - E(L, bp.g_h(3)) * down_to(L, bp, P.name), at="Jacobian products")
    Ln, runn, bpn = vector_rnn("vector tanh RNN, H = 3, six steps", T=6, D=2, H=3, C=2, activation=sp.tanh, bias=True)
    J_names = [jacobians.elman_jacobian(s.use(Ln), runn, t).name for t in range(6)]
    rng = np.random.default_rng(20)
    vals = {it.name: sp.Matrix(rng.normal(size=it.shape) * 0.9).applyfunc(sp.Rational) for it in Ln.leaves}
    vals["W_h"] = sp.Matrix(rng.normal(size=(3, 3)) * 1.2).applyfunc(sp.Rational)
    ev = evaluate(Ln, "mpmath", dps=30, values=vals)
    norm = lambda M: jacobians.spectral_norm(M, dps=30)  # noqa: E731
    gn, Jn = [norm(ev[bpn.g_h(t)]) for t in range(6)], [norm(ev[n]) for n in J_names[1:]]
    s.prove("‖g_s^h‖₂ ≤ ‖g_q^h‖₂ Π_{t=s+1}^{q} ‖J_t‖₂ for every s < q (tanh, H = 3, T = 6)",
            lambda: jacobians.path_bound(gn, Jn, rtol="1e-25"), at="spectral-norm bound")
    J2, top = np.array(ev["J_2"].tolist(), dtype=float), float(Jn[1])  # rows v: J_2's left singular vectors, random
    rows_v = [*np.linalg.svd(J2)[0].T, *rng.normal(size=(200, 3))]
    stretch = [float(np.linalg.norm(v @ J2) / np.linalg.norm(v)) for v in rows_v]
    s.prove("the spectral norm is the largest stretch ‖v J‖/‖v‖ of a row vector: reached, never passed", lambda: (
        abs(stretch[0] - top) < 1e-12 and max(stretch) <= top * (1 + 1e-12) and min(stretch) < top / 2,
        f"‖J_2‖₂ = {short(top, 6)}, least stretch {short(min(stretch), 4)}"), at="spectral-norm bound",
        near="is the largest factor by which")
    half = sp.Rational(1, 2)
    shrink, grow = sp.Matrix([[half, half], [0, half]]), sp.diag(2, half)  # ‖·‖₂ about 0.81, and 2
    long_ = [norm(shrink ** 40), *(float((e * grow ** 40).norm()) for e in (sp.Matrix([[1, 0]]), sp.Matrix([[0, 1]])))]
    s.prove("a norm below one at every step shrinks every direction along a long path", lambda: (
        norm(shrink) < 1 and long_[0] < 1e-9, f"‖J‖₂ = {short(norm(shrink), 4)}, ‖J⁴⁰‖₂ = {short(long_[0], 4)}"),
        at="uniform norms", near="Uniform norms below one suppress every direction")
    s.prove("a norm above one amplifies the aligned direction, not every signal", lambda: (
        norm(grow) > 1 and long_[1] > 1 > long_[2], "‖J‖₂ = 2: ‖e_0 J⁴⁰‖ = 2⁴⁰, ‖e_1 J⁴⁰‖ = 2⁻⁴⁰"),
        at="uniform norms", near="Norms above one allow amplification but do not guarantee")
    commutator = norm(np.dot(ev["J_2"], ev["J_1"]) - np.dot(ev["J_1"], ev["J_2"]))
    s.prove("matrix products do not commute: J_2 J_1 ≠ J_1 J_2 at this point",
            lambda: (commutator > 1e-6, f"‖J_2J_1 − J_1J_2‖₂ = {short(commutator, 4)}"), at="order of the product")
    Lz = s.use(Ledger("tanh RNN with W_h = [[0, 2], [0, 0]]", exact_forms=True))
    run_z = cells.rnn(Lz, cells.sequence_inputs(Lz, 3, width=1), Lz.parameter("W_x", shape=(2, 1)),
                      Lz.parameter("W_h", [[0, 2], [0, 0]]), phi=sp.tanh)
    product = Lz.expand(jacobians.jacobian_product(Lz, run_z, 2, 0).name, values=True)
    s.identity("W_h has an entry 2 > 1, yet J_2 J_1 = 0 for every input and input weight", product,
               at="an entry above one is no criterion")
    s.prove("an entry of W_h above one does not make the path explode", lambda: (
        bool(max(Lz.value("W_h")) > 1) and product == sp.zeros(2, 2), "max entry 2; J_2 J_1 = 0"),
        at="an entry above one is no criterion", near="above one is not an explosion criterion")


@derivation.section("Controlled experiments separate path length from saturation (Figure 3)")
def figure_3(s):
    n = 30
    s.note(f"Figure 3 prints neither these values nor its range; they are recomputed for n = 0–{n - 1}, T = 1–{n}.")
    factors = [s.page.printed(near="hold a scalar transition derivative fixed at", index=k) for k in (1, 2, 3)]
    w_h_text, w_h, w_x = s.page.printed("w_h", index=0), s.page.value("w_h"), s.page.value("w_x")  # right panel
    s.gradient_paths("Figure 3", w_h=w_h_text, w_x=w_x, inputs=[0, 1], factors=factors, length=n)  # symseq figure
    left = sp.Matrix([[exact(r) ** k for r in factors] for k in range(n)])
    s.show_table("Figure 3 (left): |factor|^n", left, rows=[str(k) for k in range(n)], cols=factors)
    s.prove(f"fixed factors {', '.join(factors)}: |factor|^n shrinks, stays at one, grows with every extra transition",
            lambda: (all(left[k + 1, 0] < left[k, 0] and left[k + 1, 2] > left[k, 2] for k in range(n - 1))
                     and set(left[:, 1]) == {1}, f"at n = {n - 1}: {short(left[-1, 0])}, 1, {short(left[-1, 2])}"),
            at="Figure 3 (left)")
    for x in (0, 1):  # the right panel: ledgers L0 and L1; S_T is |∂h_{T−1}/∂h_0|
        L = s.ledger(f"tanh trajectory, w_h = {w_h_text}, w_x = {w_x}, x_t = {x}", exact_forms=False)
        run = cells.rnn(L, [L.input(f"x_{t}", x) for t in range(n)], L.parameter("w_x", w_x),
                        L.parameter("w_h", w_h), phi=sp.tanh)
        for T in range(1, n + 1):
            jacobians.jacobian_product(L, run, T - 1, 0, name=f"S_{T}")
    L0, L1 = s.ledgers
    at, at0 = "Figure 3 (right)", "Figure 3 (right), x_t = 0"
    v0, v1 = evaluate(L0, "exact"), s.values.rows(L1)
    h1, s1 = [v1[f"h_{t}"] for t in range(n)], [abs(v1[f"S_{T}"]) for T in range(1, n + 1)]
    s.given(w_h, what="w_h, the recurrent weight of both trajectories", at=at)
    s.prove("the same recurrent weight w_h amplifies with zero input and suppresses with input one",
            lambda: (L0.value("w_h") == L1.value("w_h") == w_h and v0[f"S_{n}"] > 1 > s1[-1],
                     f"|∂h_{n - 1}/∂h_0| = {short(v0[f'S_{n}'])} and {short(s1[-1], 4)}"), at=at,
            near="the same recurrent weight can amplify or suppress sensitivity")
    s.given(L0.value("w_x"), 0, what=("w_x, the input weight of both trajectories",
                                      "h_{−1}: both trajectories start from the zero state"), at=at)
    with s.place(at0):
        s.prove("zero input: every state stays exactly zero", lambda: (
            all(v0[f"h_{t}"] == 0 for t in range(n)), "h_t = 0"), near="all states remain zero")
        s.claim(s.page.printed(near="every transition derivative is", index=3), L0.handle("J_1"), ledger=L0,
                what="every transition derivative w_h tanh′(0) with zero input")
        s.prove("zero input: every transition derivative equals w_h exactly",
                lambda: (all(v0[f"J_{t}"] == w_h for t in range(1, n)), f"J_t = {w_h}"))
        s.prove("zero input: |∂h_{T−1}/∂h_0| = w_h^{T−1} grows although the states are bounded", lambda: (
            all(v0[f"S_{T}"] == w_h ** (T - 1) for T in range(1, n + 1)), f"at T = {n}: {short(v0[f'S_{n}'])}"))
    rising = all(a < b < 1 for a, b in zip(h1, h1[1:])) and all(b < a for a, b in zip(s1, s1[1:])) and s1[-1] < 1e-30
    s.prove(r"x_t=1", lambda: (rising, f"h_0 = {short(h1[0])}, h_{n - 1} = {short(h1[-1])}; |∂h_{{T−1}}/∂h_0| at "
            f"T = 2: {short(s1[1], 4)}, T = {n}: {short(s1[-1], 4)}"), at="Figure 3 (right), x_t = 1",
            what="input one: the states rise toward saturation and |∂h_{T−1}/∂h_0| shrinks with T although w_h > 1")
    s.prove(r"T=1", lambda: (v0["S_1"] == 1 and L1.value("S_1") == 1, "|∂h_0/∂h_0| = 1"),
            what="at T = 1 there are no transitions from h_0 to itself: the sensitivity is one for both inputs", at=at)
    right = [[ops.Ref(f"S_{T}", (), L) for L in (L0, L1)] for T in range(1, n + 1)]  # both positive: w_h > 0
    s.show_table("Figure 3 (right): |∂h_{T−1}/∂h_0|", right, rows=[str(T) for T in range(1, n + 1)],
                 cols=["x_t = 0", "x_t = 1"])
    Lg, _, bpg = scalar_rnn(f"ten-step tanh RNN, w_h = {w_h_text}, w_x = {w_x}, x_t = 1, final loss", T=10,
                            activation=sp.tanh, values={**{f"x_{t}": 1 for t in range(10)}, "w_x": w_x, "w_h": w_h,
                                                        "w_o": 1, "y": 0})
    ev = s.values.rows(s.use(Lg))
    first, total = ev["g_0^z"] * ev["x_0"], ev[bpg.grads.name("w_x")]
    s.prove("the t = 0 contribution to ∂ℒ/∂w_x is below 10⁻⁸ of the total, which is not small", lambda: (
        abs(first) < abs(total) / 10 ** 8 and abs(total) > 1e-2,
        f"g_0^z x_0 = {short(first, 4)}, ∂ℒ/∂w_x = {short(total, 4)}"), at="later uses supply the gradient")


@derivation.section("Clipping limits a large gradient; it cannot recover a lost one")
def clip(s):
    g = {"W": sp.Matrix([[3, 0], [0, 0]]), "b": sp.Matrix([[0, 4]])}
    norm = clipping.global_norm
    s.note("The handout prints no numbers here: g = (3, 0, 0, 0, 0, 4) and the thresholds are chosen, as properties.")
    r, r10 = (clipping.clip_by_global_norm(g, tau) for tau in (1, 10))
    with s.place("norm clipping, τ = 1"):
        s.agree("‖g‖₂ = 5 for the joined gradient (3, 0, 0, 0, 0, 4)", r.norm, 5)
        s.agree("τ g/‖g‖₂ = (3/5, 0, 0, 0, 0, 4/5) with τ = 1", sp.Matrix([[*r.grads["W"], *r.grads["b"]]]),
                sp.Matrix([[3, 0, 0, 0, 0, 4]]) / 5)
        s.agree("for a positive threshold the clipped length equals τ", norm(r.grads), 1,
                near="For a positive threshold")
        s.prove("clipping keeps the direction: g_clip is a positive multiple of g", lambda: r.factor > 0
                and all(r.grads[k] == g[k] * r.factor for k in g), near="keeps its direction")
        s.prove("a gradient longer than the threshold comes out shorter", lambda: (
            norm(r.grads) < r.norm, f"‖g_clip‖₂ = {norm(r.grads)} < ‖g‖₂ = {r.norm}"), near="has its length reduced")
    s.prove("‖g‖₂ ≤ τ: the gradient is unchanged", lambda: (not r10.clipped and r10.grads == g, "τ = 10"),
            at="first branch")
    rz = clipping.clip_by_global_norm({"W": sp.zeros(2, 2)}, 1)
    s.prove("the zero gradient takes the first branch (no division by zero) and stays zero", lambda: (
        not rz.clipped and rz.norm == 0 and rz.grads["W"] == sp.zeros(2, 2), "‖0‖ = 0 ≤ τ"), at="zero gradient",
        near="The zero gradient uses the first branch")
    tiny = {"W": sp.Matrix([[exact("1e-12"), 0], [0, exact("-1e-12")]])}
    rt = clipping.clip_by_global_norm(tiny, 1)
    s.prove("clipping cannot restore a vanished gradient: a tiny gradient comes out exactly as tiny", lambda: (
        not rt.clipped and rt.grads == tiny, f"‖g‖₂ = {sp.N(rt.norm, 4)}, unchanged by τ = 1"),
        at="vanished gradient", near="it cannot reconstruct information that vanished along an earlier path")
    eta = "0.1"
    step = clipping.gradient_step({k: sp.zeros(*v.shape) for k, v in g.items()}, r.grads, exact(eta))
    s.agree(f"the update length η‖g_clip‖₂ is at most ητ (η = {eta}, τ = 1: exactly {eta})", norm(step), eta,
            at="update length")


@derivation.section("A GRU learns how much to retain and how much to write")
def gru_section(s):
    z, v = sp.Symbol("z", real=True), sp.Symbol("v", real=True)
    s.claim("(0,1)", sp.Matrix([[sp.limit(sigmoid(z), z, -sp.oo), sp.limit(sigmoid(z), z, sp.oo)]]),
            what="a gate's range: the limits of σ, which no gate value reaches", at="gates")
    steps = {}  # one step of each variant, D = 1, H = 2, symbolic parameters, h_{−1} given; torch's is the handout's
    for variant in cells.GRU_VARIANTS:
        Lg = s.ledger(f"one GRU step, D = 1, H = 2, h_{{−1}} given ({variant})", exact_forms=False)
        xs, p = cells.sequence_inputs(Lg, 1, width=1), cells.gru_parameters(Lg, 1, 2, packed=False)
        steps[variant] = Lg, cells.gru(Lg, xs, p, variant=variant, h_init=Lg.input("h_{-1}", shape=(1, 2)))
    Lu, run_u = steps["torch"]
    for name, what in (("u_0", "u_t, the update gate"), ("r_0", "r_t, the reset gate"), ("h̃_0", "h̃_t")):
        s.claim_shape("1×H", Lu.shape(name), dims={"H": 2}, what=what, at="shapes")
    uu, hp, nn_ = E(Lu, "u_0"), E(Lu, "h_{-1}"), E(Lu, "h̃_0")
    s.identity(r"\mathbf h_t=\mathbf u_t\odot\mathbf h_{t-1} +(\mathbf 1-\mathbf u_t)\odot\widetilde{\mathbf h}_t",
               Lu.expand(run_u.h[0].name, keep=["u_0", "h̃_0", "h_{-1}"])
               - (uu.multiply_elementwise(hp) + (sp.ones(1, 2) - uu).multiply_elementwise(nn_)), at="state update")
    # the one-coordinate example as its line prints it: u, old state, candidate, the mixture, its value
    ex = [s.page.printed(near="For one coordinate", index=k) for k in range(8)]
    mixes = {u: cells.gru_mix(exact(u), exact(ex[1]), exact(ex[2])) for u in (ex[0], ex[5])}
    near_old, near_new = (abs(mixes[u] - exact(ex[1])) < abs(mixes[u] - exact(ex[2])) for u in (ex[0], ex[5]))
    s.prove("an update gate near one mostly keeps the old state; near zero it favours the candidate", lambda: (
        near_old and not near_new, f"h_t = {mixes[ex[0]]} at u = {ex[0]}, {mixes[ex[5]]} at u = {ex[5]}"),
        at="state update", near="largely retains the corresponding old state")
    L = s.ledger(f"one GRU coordinate: u = {ex[0]}, old state {ex[1]}, candidate {ex[2]}")
    u, h_prev, cand = (L.input(n, exact(x)) for n, x in zip(("u", "h_{t-1}", "h̃"), ex))
    one_minus, mix = L.define("1-u", 1 - u), L.define("h_t", cells.gru_mix(u, h_prev, cand))
    with s.place("mixture example"):
        s.given(u, h_prev, cand, what=("u, the update gate's coordinate", "the old state", "the candidate"))
        s.claim(f"{ex[3]}({ex[4]})+{ex[5]}({ex[6]})", mix, what=f"u h_{{t−1}} + (1 − u) h̃ (1 − u = {ex[5]})")
        s.prove("the candidate's weight is 1 − u", lambda: (L.value(one_minus.name) == 1 - L.value("u"),
                                                            f"1 − u = {L.value(one_minus.name)}"))
        s.claim(ex[7], mix, what="u h_{t−1} + (1 − u) h̃, the mixture's value")
    s.identity(r"\sigma(v)=1/(1+e^{-v})", sigmoid(v).rewrite(sp.exp) - 1 / (1 + sp.exp(-v)), at="gates")
    for variant, (Lg, run) in steps.items():  # the direct carry and the full Jacobian of one step
        C, J = jacobians.gru_carry(Lg, run, 0), jacobians.gru_jacobian(Lg, run, 0)
        full = jacobians.state_jacobian(Lg, "h_0", "h_{-1}")
        s.identity(f"holding gates and candidate fixed, ∂h_t/∂h_{{t−1}} = diag(u_t) ({variant})",
                   jacobians.state_jacobian(Lg, "h_0", "h_{-1}", keep=["u_0", "h̃_0"])
                   - Lg.expand(C.name, keep=["u_0"]), at="direct carry")
        s.identity(f"the full Jacobian adds the gate and candidate paths: closed form = ∂h_t/∂h_{{t−1}} ({variant})",
                   full - Lg.expand(J.name, keep=["h_{-1}"]), at="full Jacobian")
        extra = (full - Lg.expand(C.name, keep=["h_{-1}"])).expand()
        s.prove(f"the full Jacobian differs from the direct carry diag(u_t) ({variant})",
                lambda extra=extra: (any(e != 0 for e in extra), "gate and candidate terms ≠ 0"), at="full Jacobian")
    Lr = s.ledger("one GRU candidate, torch versus Cho et al. 2014", exact_forms=False)
    xs, p = cells.sequence_inputs(Lr, 1, width=1), cells.gru_parameters(Lr, 1, 2, packed=False)
    h0 = Lr.input("h_{-1}", shape=(1, 2))
    a, b = (cells.gru(Lr, xs, p, h_init=h0, variant=v, tag=tag) for v, tag in (("torch", "torch"), ("cho2014", "cho")))
    gap = Lr.expand(a.gates["h̃"][0].name) - Lr.expand(b.gates["h̃"][0].name)
    s.prove("gating h_{t−1} before W_hn (Cho et al. 2014) is a different model from torch's r ⊙ (h W_hnᵀ + b_hn)",
            lambda: (any(sp.expand(e) != 0 for e in gap), "they differ for general parameters"), at="reset placement")
    Whn, bhn = E(Lr, "W_{hn}"), E(Lr, "b_{hn}")
    s.identity("the two placements agree when W_hn is diagonal and b_hn = 0",
               gap.xreplace({Whn[0, 1]: 0, Whn[1, 0]: 0, bhn[0]: 0, bhn[1]: 0}), at="reset placement")


@derivation.section("An LSTM separates stored memory from the visible state")
def lstm_section(s):
    L = s.ledger("one LSTM step, D = 1, H = 2, h_{−1} and c_{−1} given", exact_forms=False)
    run = cells.lstm(L, cells.sequence_inputs(L, 1, width=1), cells.lstm_parameters(L, 1, 2, packed=False),
                     h_init=L.input("h_{-1}", shape=(1, 2)), c_init=L.input("c_{-1}", shape=(1, 2)))
    C, J = jacobians.lstm_carry(L, run, 0), jacobians.lstm_jacobian(L, run, 0)
    s.identity("holding gates and candidate fixed, ∂c_t/∂c_{t−1} = diag(f_t)",
               jacobians.state_jacobian(L, "c_0", "c_{-1}", keep=["f_0", "i_0", "c̃_0"])
               - L.expand(C.name, keep=["f_0"]), at="direct carry")
    f = dict(zip(E(L, "f_0"), (sp.Rational(9, 10), sp.Rational(99, 100))))  # forget values below one, held fixed
    carry = [L.expand(C.name, keep=["f_0"]).xreplace(f) ** n for n in (1, 500)]
    s.prove("forget values below one attenuate a long direct path: diag(f_t) multiplied over many steps", lambda: (
        bool(max(carry[0]) < 1 and max(carry[1]) < sp.Rational(1, 100)),
        f"f = (9/10, 99/100): after 500 steps {short(max(carry[1]), 4)}"), at="direct carry",
        near="Forget values below one still attenuate a long")
    s.identity("the full Jacobian ∂(c_t, h_t)/∂(c_{t−1}, h_{t−1}) equals its closed form (state order c, h)",
               jacobians.block_state_jacobian(L, ["c_0", "h_0"], ["c_{-1}", "h_{-1}"])
               - L.expand(J.name, keep=["c_{-1}", "h_{-1}"]), at="full Jacobian")
    dc_dh = jacobians.state_jacobian(L, "c_0", "h_{-1}")
    s.prove("dependencies through h_{t−1} add other paths: ∂c_t/∂h_{t−1} ≠ 0",
            lambda: (any(sp.expand(e) != 0 for e in dc_dh), "gates and candidate read h_{t−1}"), at="full Jacobian")
    s.note("Without peepholes the gates do not read c_{t−1}: within one step the full ∂c_t/∂c_{t−1} is diag(f_t) too; "
           "the other routes run through h_{t−1}. Table 6 (h_t, h_t and (c_t, h_t) carried) is descriptive.")


@derivation.section("PyTorch: a recurrent layer and a separate prediction head", requires=("torch",))
def pytorch_example(s):
    import torch
    from torch import nn

    torch.manual_seed(6)
    sizes = dict(zip("BTDHC", (int(k) for k in s.page.numbers("B, T, D, H, C =", 5))))  # the code's sizes
    B, T, D, H, C = sizes.values()
    rows = [s.page.value(near="X = torch.tensor(", index=t) for t in range(T)]  # X's rows, exact
    rnn, head = nn.RNN(D, H, nonlinearity="tanh", bias=False, batch_first=True), nn.Linear(H, C, bias=False)
    output, final = rnn(torch.tensor([[[float(v) for v in row] for row in rows]]))
    prediction = head(final[0])
    y = s.page.value(near="target = X.new_tensor(")
    loss = float(s.page.value(near="loss = ")) * (prediction - float(y)).square().sum()
    loss.backward()
    s.note(f"The handout ran PyTorch {s.page.printed(near='With PyTorch', index=0)}, this check {torch.__version__}; "
           "the weights are the module's float32 initialisation after torch.manual_seed(6), read exactly.")
    s.given(*sizes.values(), what=[f"{k} in the code" for k in sizes], at="sizes")
    shape = lambda *args, **kw: s.claim_shape(*args, dims=sizes, at="shapes", **kw)  # noqa: E731  (in the code's sizes)
    shape("B×T×H", output.shape, what="output")
    s.prove("final.shape == (1, B, H)", lambda: (final.shape == (1, B, H), f"final.shape = {tuple(final.shape)}"),
            what="final: one layer (and one direction) × batch × hidden", at="shapes")
    s.claim("1", final.shape[0], what="final's first axis: layers × directions", near="assert final.shape == (1, B, H)")
    shape("B×C", prediction.shape, what="head(final[0])")
    shape("B×H", final[0].shape, what="final[0]")
    shape("B×T×C", head(output).shape, what="head(output): a prediction at every position")
    s.prove("with one layer and one direction, final[0] is the last row of output (batch_first does not change it)",
            lambda: (bool(torch.equal(final[0], output[:, -1, :])), "final[0] == output[:, -1, :]"), at="shapes")
    s.prove("nn.RNN uses tanh by default", lambda: (nn.RNN(D, H).nonlinearity == "tanh", "nonlinearity='tanh'"),
            at="activation")
    values = cells.module_values(rnn, exact=True) | cells.module_values(head, exact=True, rename={"weight": "W_o"})
    L = s.ledger("nn.RNN(2, 2, bias=False) and nn.Linear(2, 1, bias=False), torch.manual_seed(6)", exact_forms=False)
    xs = [L.input(f"x_{t}", row) for t, row in enumerate(rows)]
    s.given(*xs, what=[f"x_{t}, row {t} of X" for t in range(T)], at="X")
    p = cells.rnn_parameters(L, D, H, bias=False, values=values)
    run = cells.rnn(L, xs, p.W_x, p.W_h, phi=sp.tanh)
    readout = heads.regression_head(L, run, L.parameter("W_o", values["W_o"]))
    lossr = heads.squared_error(L, readout, [L.input("y", [[y]])])
    bp = bptt_.bptt(L, run, lossr)
    for t in range(T):  # the printed output (three significant digits), each value read after its name
        s.claim(run.h[t], name=f"h_{t}", digits=3, what=f"h_{t}", at="printed output")
    s.claim(readout.yhat[0][0, 0], name="prediction", digits=3, what="prediction", at="printed output")
    s.claim(s.page.printed("loss", occurrence=1), lossr.loss, ledger=L, digits=3, what="loss", at="printed output")
    s.given(L.value("y")[0, 0], what="the target in the text", at="printed output",
            near="comparing that prediction with the target")
    s.given(L.value("y")[0, 0], what="target in the code", at="target", near="target = X.new_tensor(")
    s.claim("1/2", loss_factor(L), what="the factor the loss retains, as in the derivation", at="loss")
    max_norm = s.page.printed("max_norm")  # the handout's clip_grad_norm_(…, max_norm=…), after the loss
    s.given(exact(max_norm), what="max_norm, the clipping threshold τ of clip_grad_norm_", at="clipping")
    # torch's float32 results, read exactly; the gradients as they stand (clip_grad_norm_ below works in place)
    grads = {n: bp.grads.name(leaf) for n, leaf in (("weight_ih_l0",) * 2, ("weight_hh_l0",) * 2, ("weight", "W_o"))}
    mods = dict(rnn.named_parameters()) | dict(head.named_parameters())
    torch_grads = lambda: list(cells.module_values({n: mods[n].grad for n in grads}, exact=True).values())  # noqa: E731
    s.agree("the ledger reproduces torch's float32 output h_0, h_1, h_2 to 1e-6", list(run.h),
            list(cells.module_values(dict(enumerate(output[0])), exact=True).values()), tol="1e-6", at="reproduction")
    s.agree("the ledger's symbolic gradients match loss.backward() (float32) to 1e-6",
            [bp.ref(g) for g in grads.values()], torch_grads(), tol="1e-6", at="loss.backward()")
    rows = s.values.rows(L, grads.values())
    ours = {n: np.array(rows[g], dtype=float) for n, g in grads.items()}
    for tau in (max_norm, "0.1"):  # the handout's max_norm (‖g‖ is below it here), then one that clips
        ours = clipping.clip_by_global_norm(ours, tau, eps="1e-6").grads
        torch.nn.utils.clip_grad_norm_(list(mods.values()), max_norm=float(tau))
        s.agree(f"clip_by_global_norm(…, {tau}, eps=1e-6) reproduces torch.nn.utils.clip_grad_norm_(…, max_norm={tau})",
                list(cells.module_values(ours, exact=True).values()), torch_grads(), tol="1e-6", at="clipping")


@derivation.section("Optional exercises 1 and 2")
def exercises(s):
    s.note("The handout prints no answers; exercises 1 and 2 (3–6 concern attention) are stated here with this "
           "derivation's own answers, −0.32768 and 0.32768, which symseq audit lists as claims missing from the text.")
    L, run, bp = scalar_rnn("three-step scalar RNN, losses at positions 1 and 2", positions=[1, 2])
    S = s.use(L).symbol
    at = "exercise 1"
    s.identity(r"\mathcal L=\tfrac12(\widehat y_1-y_1)^2+\tfrac12(\widehat y_2-y_2)^2", L["ℒ"].node.expr
               - sum((S(f"ŷ_{t}") - S(f"y_{t}")) ** 2 for t in (1, 2)) / 2, what="with ŷ_t = w_o h_t", at=at)
    g_h = {t: L[bp.g_h(t)].node.expr for t in range(3)}
    s.identities(("direct head contributions: e_1 w_o into g_1^h and e_2 w_o into g_2^h (g_2^h = e_2 w_o)",
                  g_h[2] - S("e_2") * S("w_o")),
                 ("g_1^h = e_1 w_o + g_2^z w_h", g_h[1] - (S("e_1") * S("w_o") + S("g_2^z") * S("w_h"))),
                 ("g_0^h = g_1^z w_h (no loss at position 0)", g_h[0] - S("g_1^z") * S("w_h")),
                 ("the shared w_o now has two uses: ∂ℒ/∂w_o = e_1 h_1 + e_2 h_2 = (ŷ_1 − y_1) h_1 + (ŷ_2 − y_2) h_2",
                  L[bp.grads.name("w_o")].node.expr - (S("e_1") * S("h_1") + S("e_2") * S("h_2")),
                  down_to(L, bp, bp.grads.name("w_o"))
                  - sum((S(f"ŷ_{t}") - S(f"y_{t}")) * S(f"h_{t}") for t in (1, 2))), at=at)
    at = "exercise 2"
    w_h = s.given("w_h", what="w_h of the identity-activation RNN", at=at)
    Li = s.ledger(f"identity-activation scalar RNN, w_h = {w_h}")
    runi = cells.rnn(Li, [Li.input(f"x_{t}") for t in range(6)], Li.parameter("w_x"), Li.parameter("w_h", w_h),
                     phi="identity")
    P = jacobians.jacobian_product(Li, runi, 5, 0, name="∂h_{s+5}/∂h_s")
    s.identity("∂h_{s+5}/∂h_s = w_h^5: one factor w_h for each of the five transitions",
               Li.value(P.name) - Li.value("w_h") ** 5, at=at)
    s.claim("-0.32768", P, exact=True, what="∂h_{s+5}/∂h_s", at=at, in_text=False)
    s.prove("its sign is negative (an odd number of negative factors)", lambda: Li.value(P.name) < 0, at=at)
    s.claim("0.32768", sp.Abs(Li.value(P.name)), exact=True, what="its magnitude |w_h|^5", at=at, in_text=False)
