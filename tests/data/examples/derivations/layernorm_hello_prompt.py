"""LayerNorm of the prompt "Hello, how are you?" (six tokens, four features), computed by hand and in torch.

Source: https://github.com/micwill755/transformer/blob/796de3411284cc66c1f1f20c3fc9ad80462129ad/lesson/docs/Layer_Normalization_Explained.md
(rendition: ``layernorm-hello-prompt.md``). Headings whose numbers are all the page's own arithmetic (Steps 2–5,
the ranges of "The Problem", the seesaw's means) have no section: the audit checks them from the printed operands.

Conventions read from the page: LayerNorm over the four features of each token, population variance
(``unbiased=False``), no gain or shift; the hand computation uses ε = 0, the script's ``manual_layer_norm``
ε = 1e-5 inside the root, and its "Hello" breakdown divides by ``torch.sqrt(variance)`` (ε = 0). ``Tensor.std``
without arguments is the sample standard deviation (correction 1): the script's printed stds are claimed as that.
Numbers of analogies that no computation produces are declared with ``section.reported``.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks, ops

derivation = Derivation(
    "layernorm-hello-prompt",
    title="Layer Normalization Explained: A Beginner's Guide",
    source="layernorm-hello-prompt.md",
    description="LayerNorm of a six-token prompt by hand and as a torch script's printed output",
)

ROWS = [["0.1", "0.3", "-0.2", "0.8"], ["0.0", "0.1", "0.4", "-0.1"], ["0.5", "-0.3", "0.2", "0.6"],
        ["0.2", "0.7", "-0.4", "0.3"], ["-0.1", "0.4", "0.8", "-0.2"], ["0.3", "-0.1", "0.1", "0.5"]]
TOKENS = ["Hello", ",", " how", " are", " you", "?"]
D = 4
ILLUSTRATIVE = "illustrative values of an analogy, not computed from any printed input"


def _prompt(s, title: str = "the prompt, 6 tokens × 4 features; LayerNorm with ε = 0"):
    """X, its LayerNorm at ε = 0 (n) and the population standard deviation per token."""
    L = s.ledger(title)
    X = L.input("X", ROWS, note="rows Hello , how are you ?")
    n = blocks.layer_norm(L, X, eps=0, name="LN")
    std = L.define("sigma", ops.Map(ops.SQRT, n.var), note="population standard deviation of each row")
    return L, X, n, std


def _row_stats(L, M, name: str):
    """Mean, population std and sample std (correction 1) of each row of M, as ledger rows."""
    mean = L.define(f"mean({name})", ops.mean(M, 1))
    return (mean, L.define(f"std_pop({name})", ops.std(M, 1, correction=0, mean_of=mean)),
            L.define(f"std({name})", ops.std(M, 1, correction=1, mean_of=mean)))


def _range(L, X, t: int, scale=1):
    row = list(L.value(X.name).row(t))
    return (max(row, key=lambda e: sp.N(e, 30)) - min(row, key=lambda e: sp.N(e, 30))) * scale


derivation.reported("What is Layer Normalization?", "out of 100 and others out of 1000",
                    reason=ILLUSTRATIVE + " (exam marks)")


@derivation.section("Without Layer Normalization")
def without(s):
    L, X, n, std = _prompt(s)
    s.given(X[0, :], X[0, :], what="Layer 1, the embedding of Hello (exploding, then vanishing)")
    s.reported("[15.2, -8.9, 22.1, -12.4]", "[156.7, -234.1, 89.3, -445.2]", "[2847.3, -1923.8, 5621.9, -3892.1]",
               "[0.01, 0.003, -0.02, 0.008]", "[0.0001, 0.00003, -0.0002, 0.00008]",
               "[0.000001, 0.0000003, -0.000002, 0.0000008]", reason=ILLUSTRATIVE + " (activations of later layers)")


@derivation.section("With Layer Normalization")
def with_ln(s):
    L, X, n, std = _prompt(s)
    mean, pop, _ = _row_stats(L, n.out, "LN")
    s.claim("0", mean[0, 0], what="mean of LN(Hello)", at="Mean ≈ 0")
    s.claim("1", pop[0, 0], what="standard deviation of LN(Hello)", at="Standard deviation ≈ 1")
    s.claim("[-0.41, 0.14, -1.24, 1.51]", n.out[0, :], what="Layer 1: LN(Hello) to two decimals", at="Layer 1")
    s.reported("[0.23, -0.87, 1.12, -0.48]", "[-1.05, 0.67, -0.31, 0.69]", "[0.88, -0.22, 1.33, -1.99]",
               reason=ILLUSTRATIVE + " (normalized activations of later layers)")


@derivation.section("Step 1: Token Embedding")
def step1(s):
    L, X, n, std = _prompt(s)
    s.given(sp.Integer(D), what="4 dimensions", at="4 dimensions")
    s.given(X[0, :], what="hello_features")


@derivation.section("Step 6: Verify the Result")
def step6(s):  # new_mean = (−0.412 + 0.137 + (−1.236) + 1.511) / 4 ≈ 0.000 is the page's own arithmetic
    L, X, n, std = _prompt(s)  # Hello is row 0
    mean, pop, _ = _row_stats(L, n.out, "LN")
    s.claim("0", mean[0, 0], what="the mean the rescaled features should have", at="comment")
    s.claim("1", pop[0, 0], what="the std the rescaled features should have", at="comment")
    s.claim("1.000", pop[0, 0], what="new_std (population)", at="new_std")


@derivation.section("Before Layer Normalization")
def before(s):
    L, X, n, std = _prompt(s)
    s.given(sp.Integer(D), what="4 dimensions each", at="comment")
    s.given(*(X[t, :] for t in range(6)), what=tuple(f"embedding of {w!r}" for w in TOKENS), at="embeddings")
    # each row's "mean=…" is checked by the audit from the rows printed above; the stds are claimed (five are
    # wrong) as √v, so that the rows normalized with them in the next section trace back to them
    for t, (w, p) in enumerate(zip(TOKENS, ("0.364", "0.208", "0.374", "0.424", "0.424", "0.245"))):
        s.claim(p, ops.Map(ops.SQRT, n.var)[t, 0], what=f"std of {w!r} (population)", near=f'"{w}"')


@derivation.section("After Layer Normalization")
def after(s):
    L, X, n, std = _prompt(s)
    mean, pop, _ = _row_stats(L, n.out, "LN")
    rows = ("[-0.481, 0.000, 1.442, -0.962]", "[0.668, -1.471, -0.134, 0.936]", "[0.000, 1.179, -1.415, 0.236]",
            "[-0.766, 0.412, 1.354, -1.000]", "[0.408, -1.225, -0.408, 1.225]")  # Hello's row and the comments'
    # "mean≈0, std≈1" are checked by the audit as its own arithmetic
    s.claim_rows(rows, n.out, start=1, what=tuple(f"LN of {w!r}" for w in TOKENS[1:]), at="LN")


@derivation.section("When Does Layer Norm Happen?")
def when(s):
    L, X, n, std = _prompt(s)
    s.given(X[0, :], what="the first row of the embeddings", at="flow")
    s.reported("12+ layers", reason="a typical depth named in passing, not a quantity of the example")
    layers = sp.Integer(12)
    s.given(layers, what="a 12-layer transformer", at="count")
    s.claim("24", 2 * layers, what="two LayerNorms per layer (before attention and before the feed-forward)",
            at="count")


@derivation.section("The Solution: Standard Scale")
def solution(s):  # Hello's row and its range 2.75 are checked by the audit from the printed row
    L, X, n, std = _prompt(s)
    mean, pop, _ = _row_stats(L, n.out, "LN")
    for t, row in ((0, None), (1, "[-0.48, 0.00, 1.44, -0.96]"), (2, "[0.67, -1.47, -0.13, 0.94]")):
        if row:
            s.claim(row, n.out[t, :], what=f"LN of {TOKENS[t]!r}, two decimals", at=f"row {t}")
            s.claim(("2.88", "2.94")[t - 1], _range(L, X, t, 1 / L.value(std.name)[t, 0]),
                    what=f"range of LN({TOKENS[t]!r})", at=f"row {t}")  # a true value, not only the row's
        s.claim("0", mean[t, 0], what=f"LN({TOKENS[t]!r}) is balanced around 0", at=f"row {t}",
                near=f'"{TOKENS[t]}"')


@derivation.section("**Standard Deviation = 1 (Consistent)**")
def std1(s):
    mm, km = sp.Rational(1, 1000), sp.Integer(1000)
    s.given(sp.Integer(1000), sp.Integer(2), sp.Rational(1, 2), what=("1000 mm", "2 m", "0.5 km"), at="different_units")
    s.claim("1", 1000 * mm, what="1000 mm in metres", at="same_units")
    s.claim("2", sp.Integer(2), what="2 m in metres", at="same_units")
    s.claim("500", sp.Rational(1, 2) * km, what="0.5 km in metres", at="same_units")


derivation.reported("Training Stability", "0.001", "15.7", "0.0001", "= 0.8", "= 1.2", "= 0.9",
                    reason=ILLUSTRATIVE + " (gradient sizes)")


@derivation.section('For Our "Hello" Example')
def hello_example(s):  # √0.1325 = 0.364 and both checks are the page's own arithmetic
    L, X, n, std = _prompt(s)  # Hello is row 0
    s.claim("0.1325", n.var[0, 0], what="variance", at="what we found")


@derivation.section("**What Actually Happens:**")
def actually(s):
    L, X, n, std = _prompt(s, "the prompt; LayerNorm with ε = 1e-5 (Hello is row 0)")
    s.claim("0.1325", blocks.layer_norm(L, X, eps="1e-5", name="LN_eps").var[0, 0], what="variance", at="Step 1")


@derivation.section("Complete Code Example")
def code(s):
    L, X, n, std = _prompt(s)
    s.given(sp.Rational(1, 100000), what="eps=1e-5", at="manual_layer_norm")
    s.given(sp.Integer(X.shape[0]), sp.Integer(D), what=("6 tokens", "4 features each"), at="comment")
    s.given(*(X[t, :] for t in range(6)), what=tuple(f"embedding of {w!r}" for w in TOKENS), at="torch.tensor")
    s.given(sp.Integer(D), sp.Integer(D), what=("nn.LayerNorm(4)", "4 features"), at="nn.LayerNorm")
    s.given(X[0, :], what="embeddings[0], the Hello row", at="hello")


def _matrix(rows) -> str:
    return "[" + ", ".join(rows) + "]"


@derivation.section("Expected Output")
def expected(s):
    L, X, n, std = _prompt(s, "the script's run: X, LN with ε = 1e-5 (manual_layer_norm), LN with ε = 0 (Hello)")
    ln = blocks.layer_norm(L, X, eps="1e-5", name="LN_eps")
    _, _, sample = _row_stats(L, X, "X")
    m_eps, _, sample_eps = _row_stats(L, ln.out, "LN_eps")
    m0, pop0, sample0 = _row_stats(L, n.out, "LN")
    s.given(X, what="Original embeddings (tensor, six rows)", at="Original embeddings")
    s.claim("[0.2500, 0.1000, 0.2500, 0.2000, 0.2250, 0.2000]", n.mu.T,
            what="Original means per token", at="means")
    s.claim("[0.3640, 0.2082, 0.3742, 0.4243, 0.4240, 0.2449]", sample.T,
            what="Original stds per token: embeddings.std(dim=-1), the sample std", at="stds")
    s.claim(_matrix(["[-0.4124,  0.1375, -1.2371,  1.5120]", "[-0.4804,  0.0000,  1.4414, -0.9610]",
                     "[ 0.6682, -1.4706, -0.1336,  0.9360]", "[ 0.0000,  1.1785, -1.4142,  0.2357]",
                     "[-0.7660,  0.4123,  1.3540, -1.0003]", "[ 0.4082, -1.2247, -0.4082,  1.2247]"]),
            ln.out, what="After manual layer norm (ε = 1e-5)", at="manual layer norm")
    s.claim("[-0.0000,  0.0000,  0.0000, -0.0000,  0.0000,  0.0000]", m_eps.T, what="New means per token",
            at="new means")
    s.claim("[1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000]", sample_eps.T,
            what="New stds per token: normalized_manual.std(dim=-1), the sample std", at="new stds")
    # the Hello breakdown's features, mean, std and normalized mean are checked by the audit from the printed tensors
    s.claim("0.132", n.var[0, 0], what="Variance (0.1325 printed to three decimals)", at="Hello")
    s.claim("[-0.4124,  0.1375, -1.2371,  1.5120]", n.out[0, :],
            what="Normalized 'Hello' = (hello − mean)/std_dev, ε = 0", at="Hello")
    s.claim("0", m0[0, 0], what="Normalized mean should be ≈0", at="Hello")
    s.claim("1.000000", sample0[0, 0], what="Normalized std: normalized_hello.std(), the sample std", at="Hello")
    s.claim("1", pop0[0, 0], what="Normalized std should be ≈1 (the population std of a normalized row)",
            at="Hello")


@derivation.section("🎯 **What Layer Normalization Does**")
def takeaways(s):
    L, X, n, std = _prompt(s)
    mean, pop, _ = _row_stats(L, n.out, "LN")
    s.claim("0", mean[0, 0], what="the mean after LayerNorm (Hello)")
    s.claim("1", pop[0, 0], what="the standard deviation after LayerNorm (Hello)")


@derivation.section("🎯 **When It Happens**")
def when_takeaway(s):
    per_layer, layers = sp.Integer(2), sp.Integer(12)
    s.claim("2", per_layer, what="LayerNorms per layer: before attention and before the feed-forward")
    s.claim("24", per_layer * layers, what="LayerNorms in a 12-layer model")
    s.given(layers, what="a 12-layer model")
