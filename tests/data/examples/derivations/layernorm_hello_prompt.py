"""LayerNorm of the prompt "Hello, how are you?" (six tokens, four features), computed by hand and in torch.

Source: https://github.com/micwill755/transformer/blob/796de3411284cc66c1f1f20c3fc9ad80462129ad/lesson/docs/Layer_Normalization_Explained.md
(rendition: ``layernorm-hello-prompt.md``). Headings whose numbers are all the page's own arithmetic (Steps 2–5,
the ranges of "The Problem", the seesaw's means) have no section: the audit checks them from the printed operands.

Conventions read from the page: LayerNorm over the four features of each token, population variance
(``unbiased=False``), no gain or shift; the hand computation uses ε = 0, the script's ``manual_layer_norm``
ε = 1e-5 inside the root, and its "Hello" breakdown divides by ``torch.sqrt(variance)`` (ε = 0). ``Tensor.std``
without arguments is the sample standard deviation (correction 1): the script's printed stds are claimed as that.
The embeddings and every printed value are read from the page; numbers of analogies that no computation produces
are declared with ``section.reported``.
"""

from __future__ import annotations

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.authoring.page import PageView, exact_value

derivation = Derivation("layernorm-hello-prompt", title="Layer Normalization Explained: A Beginner's Guide",
                        source="layernorm-hello-prompt.md",
                        description="LayerNorm of a six-token prompt by hand and as a torch script's printed output")
TOKENS, D = ["Hello", ",", " how", " are", " you", "?"], 4
ILLUSTRATIVE = "illustrative values of an analogy, not computed from any printed input"


def _prompt(s, title: str = "the prompt, 6 tokens × 4 features; LayerNorm with ε = 0"):
    """X (the rows of ``embeddings = [`` under "Before Layer Normalization"), its LayerNorm at ε = 0, and per token
    the mean, population std and sample std of the normalized rows, and the population std of X."""
    page = s.derivation.whole_page
    L = s.ledger(title)
    X = L.input("X", sp.Matrix(6, D, [exact_value(c) for c in page.numbers("embeddings = [", 6 * D)]))
    n = blocks.layer_norm(L, X, eps=0, name="LN")
    std = L.define("sigma", ops.Map(ops.SQRT, n.var), note="population standard deviation of each row")
    return L, X, n, std, _row_stats(L, n.out, "LN")


def _row_stats(L, M, name: str):
    """Mean, population std and sample std (correction 1) of each row of M, as ledger rows."""
    mean = L.define(f"mean({name})", ops.mean(M, 1))
    return (mean, L.define(f"std_pop({name})", ops.std(M, 1, correction=0, mean_of=mean)),
            L.define(f"std({name})", ops.std(M, 1, correction=1, mean_of=mean)))


def _rows(page, after: str, count: int) -> list[str]:
    """The vectors printed one per line on the ``count`` lines after the line holding ``after``, as printed."""
    first = page.line(after) + 1
    rows = PageView(page.doc, first, first + count - 1, page.where)
    return [rows.printed(near="[", index=0, occurrence=k) for k in range(count)]


derivation.reported("What is Layer Normalization?", "out of 100 and others out of 1000",
                    reason=ILLUSTRATIVE + " (exam marks)")


@derivation.section("Without Layer Normalization")
def without(s):
    L, X, *_ = _prompt(s)
    s.given(X[0, :], X[0, :], what="Layer 1, the embedding of Hello (exploding, then vanishing)")
    s.reported(*(s.page.printed(near=f"Layer {k}:", occurrence=o) for o in (0, 1) for k in (5, 10, 15)),
               reason=ILLUSTRATIVE + " (activations of later layers)")


@derivation.section("With Layer Normalization")
def with_ln(s):
    L, X, n, std, (mean, pop, _) = _prompt(s)
    s.claim(mean[0, 0], near="**Mean ≈", what="mean of LN(Hello)", at="Mean ≈ 0")
    s.claim(pop[0, 0], near="**Standard deviation ≈", what="standard deviation of LN(Hello)",
            at="Standard deviation ≈ 1")
    s.claim(n.out[0, :], near="Layer 1:", what="Layer 1: LN(Hello) to two decimals", at="Layer 1")
    s.reported(*(s.page.printed(near=f"Layer {k}:") for k in (5, 10, 15)),
               reason=ILLUSTRATIVE + " (normalized activations of later layers)")


@derivation.section("Step 1: Token Embedding")
def step1(s):
    L, X, *_ = _prompt(s)
    s.given(sp.Integer(D), what="4 dimensions", at="4 dimensions")
    s.given(X[0, :], what="hello_features")


@derivation.section("Step 6: Verify the Result")
def step6(s):  # new_mean = (−0.412 + 0.137 + (−1.236) + 1.511) / 4 ≈ 0.000 is the page's own arithmetic
    L, X, n, std, (mean, pop, _) = _prompt(s)  # Hello is row 0
    s.claim(mean[0, 0], near="should have", index=0, what="the mean the rescaled features should have", at="comment")
    s.claim(pop[0, 0], near="should have", index=1, what="the std the rescaled features should have", at="comment")
    s.claim(pop[0, 0], name="new_std", what="new_std (population)", at="new_std")


@derivation.section("Before Layer Normalization")
def before(s):
    L, X, n, std, _ = _prompt(s)
    s.given(sp.Integer(D), what="4 dimensions each", at="comment")
    s.given(*(X[t, :] for t in range(6)), what=tuple(f"embedding of {w!r}" for w in TOKENS), at="embeddings")
    # each row's "mean=…" is checked by the audit from the rows printed above; the stds are claimed (five are
    # wrong) as √v, so that the rows normalized with them in the next section trace back to them
    for t, w in enumerate(TOKENS):
        s.claim(ops.Map(ops.SQRT, n.var)[t, 0], name="std", near=f'"{w}"', what=f"std of {w!r} (population)")


@derivation.section("After Layer Normalization")
def after(s):  # Hello's row and the comments' "mean≈0, std≈1" are checked by the audit as its own arithmetic
    L, X, n, *_ = _prompt(s)
    rows = [s.page.printed(near=f'# "{w}"', index=0) for w in TOKENS[1:]]
    s.claim_rows(rows, n.out, start=1, what=tuple(f"LN of {w!r}" for w in TOKENS[1:]), at="LN")


@derivation.section("When Does Layer Norm Happen?")
def when(s):
    L, X, *_ = _prompt(s)
    s.given(X[0, :], what="the first row of the embeddings", at="flow")
    s.reported("12+ layers", reason="a typical depth named in passing, not a quantity of the example")
    layers = sp.Integer(12)
    s.given(layers, what="a 12-layer transformer", at="count")
    s.claim(2 * layers, near="Hence in a", index=1, what="two LayerNorms per layer (before attention and before the "
            "feed-forward)", at="count")


@derivation.section("The Solution: Standard Scale")
def solution(s):  # Hello's row and its range 2.75 are checked by the audit from the printed row
    L, X, n, std, (mean, _, _) = _prompt(s)
    for t, w in enumerate(TOKENS[:3]):
        if t:  # the row to two decimals, and its range: a true value, not only the printed row's
            s.claim(n.out[t, :], near=f'"{w}"', index=0, what=f"LN of {w!r}, two decimals", at=f"row {t}")
            row = list(L.value(X.name).row(t))
            s.claim((max(row, key=sp.N) - min(row, key=sp.N)) / L.value(std.name)[t, 0], near=f'"{w}"', index=1,
                    what=f"range of LN({w!r})", at=f"row {t}")
        s.claim(mean[t, 0], near=f'"{w}"', what=f"LN({w!r}) is balanced around 0", at=f"row {t}")


@derivation.section("**Standard Deviation = 1 (Consistent)**")
def std1(s):  # 1000mm, 2m, 0.5km in metres
    mm, m, km = (s.page.value(near="different_units", index=k) for k in range(3))
    s.given(mm, m, km, what=("1000 mm", "2 m", "half a km"), at="different_units")
    for k, (metres, what) in enumerate(zip((mm / 1000, m, km * 1000), ("1000 mm", "2 m", "half a km"))):
        s.claim(metres, near="same_units", index=k, what=f"{what} in metres", at="same_units")


@derivation.section("Training Stability")
def stability(s):  # the gradients with layer norm are quoted with their "= " (each number alone stands elsewhere)
    sizes = s.page.numbers("erratic", 6)
    s.reported(*sizes[:3], *(f"= {v}" for v in sizes[3:]), reason=ILLUSTRATIVE + " (gradient sizes)")


@derivation.section('For Our "Hello" Example')
def hello_example(s):  # √0.1325 = 0.364 and both checks are the page's own arithmetic
    L, X, n, *_ = _prompt(s)  # Hello is row 0
    s.claim(n.var[0, 0], name="variance", what="variance", at="what we found")


@derivation.section("**What Actually Happens:**")
def actually(s):
    L, X, *_ = _prompt(s, "the prompt; LayerNorm with ε = 1e-5 (Hello is row 0)")
    s.claim(blocks.layer_norm(L, X, eps="1e-5", name="LN_eps").var[0, 0], name="variance", what="variance",
            at="Step 1")


@derivation.section("Complete Code Example")
def code(s):
    L, X, *_ = _prompt(s)
    s.given(sp.Rational(1, 100000), what="eps=1e-5", at="manual_layer_norm")
    s.given(sp.Integer(X.shape[0]), sp.Integer(D), what=("6 tokens", "4 features each"), at="comment")
    s.given(*(X[t, :] for t in range(6)), what=tuple(f"embedding of {w!r}" for w in TOKENS), at="torch.tensor")
    s.given(sp.Integer(D), sp.Integer(D), what=("nn.LayerNorm(4)", "4 features"), at="nn.LayerNorm")
    s.given(X[0, :], what="embeddings[0], the Hello row", at="hello")


@derivation.section("Expected Output")
def expected(s):
    L, X, n, std, (m0, pop0, sample0) = _prompt(s, "the script's run: X, LN with ε = 1e-5 (manual_layer_norm), "
                                                   "LN with ε = 0 (Hello)")
    ln = blocks.layer_norm(L, X, eps="1e-5", name="LN_eps")
    _, _, sample = _row_stats(L, X, "X")
    m_eps, _, sample_eps = _row_stats(L, ln.out, "LN_eps")
    s.given(X, what="Original embeddings (tensor, six rows)", at="Original embeddings")
    s.claim(n.mu.T, near="Original means per token", what="Original means per token", at="means")
    s.claim(sample.T, near="Original stds per token", what="Original stds per token: embeddings.std(dim=-1), the "
            "sample std", at="stds")
    s.claim("[" + ", ".join(_rows(s.page, "After manual layer norm:", 6)) + "]", ln.out,
            what="After manual layer norm (ε = 1e-5)", at="manual layer norm")
    s.claim(m_eps.T, near="New means per token", what="New means per token", at="new means")
    s.claim(sample_eps.T, near="New stds per token", what="New stds per token: normalized_manual.std(dim=-1), "
            "the sample std", at="new stds")
    # the Hello breakdown's features, mean, std and normalized mean are checked by the audit from the printed tensors
    for node, words, index, what in (
            (n.var[0, 0], "Variance:", 0, "Variance (0.1325 printed to three decimals)"),
            (n.out[0, :], "Normalized 'Hello':", 0, "(hello − mean)/std_dev, ε = 0"),
            (m0[0, 0], "Normalized mean:", -1, "should be ≈0"),
            (sample0[0, 0], "Normalized std:", 0, "normalized_hello.std(), the sample std"),
            (pop0[0, 0], "Normalized std:", -1, "should be ≈1 (the population std of a normalized row)")):
        s.claim(node, near=words, index=index, what=f"{words} {what}", at="Hello")


@derivation.section("🎯 **What Layer Normalization Does**")
def takeaways(s):
    L, X, n, std, (mean, pop, _) = _prompt(s)
    s.claim(mean[0, 0], near="Brings the mean", index=0, what="the mean after LayerNorm (Hello)")
    s.claim(pop[0, 0], near="Brings the mean", index=1, what="the standard deviation after LayerNorm (Hello)")


@derivation.section("🎯 **When It Happens**")
def when_takeaway(s):
    per_layer, layers = sp.Integer(2), sp.Integer(12)
    s.claim(per_layer, near="per layer, across", index=0, what="LayerNorms per layer: before attention and before "
            "the feed-forward")
    s.claim(per_layer * layers, near="per layer, across", index=1, what="LayerNorms in a 12-layer model")
    s.given(layers, what="a 12-layer model")
