"""LayerNorm of the prompt "Hello, how are you?" (six tokens, four features), computed by hand and in torch.

Source: https://github.com/micwill755/transformer/blob/796de3411284cc66c1f1f20c3fc9ad80462129ad/lesson/docs/Layer_Normalization_Explained.md
(rendition: ``layernorm-hello-prompt.md``). Steps 2–5, the ranges of "The Problem" and the seesaw's means are the
page's own arithmetic, checked by the audit from the printed operands: no section. Conventions read from the page:
LayerNorm over the four features of each token, population variance, no gain or shift; ε = 0 by hand and in the
script's "Hello" breakdown (``torch.sqrt(variance)``), ε = 1e-5 inside the root in ``manual_layer_norm``;
``Tensor.std`` without arguments is the sample std (correction 1). Analogies' numbers are declared ``reported``.
"""

from types import SimpleNamespace

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.authoring.page import PageView, exact_value

derivation = Derivation("layernorm-hello-prompt", title="Layer Normalization Explained: A Beginner's Guide",
                        source="layernorm-hello-prompt.md",
                        description="LayerNorm of a six-token prompt by hand and as a torch script's printed output")
TOKENS, D = ["Hello", ",", " how", " are", " you", "?"], 4
EMBEDDINGS = tuple(f"embedding of {w!r}" for w in TOKENS)
ILLUSTRATIVE = "illustrative values of an analogy, not computed from any printed input"


def _prompt(s, title: str = "the prompt, 6 tokens × 4 features; LayerNorm with ε = 0"):
    """The section's ledger of the prompt X (the 24 numbers after ``embeddings = [``, Hello in row 0), its LayerNorm
    n at ε = 0, σ = √v, and the mean, population std and sample std of each row of n (``stats``)."""
    if "prompt" not in s.objects:
        L = s.ledger(title)
        X = L.input("X", sp.Matrix(6, D, [exact_value(c) for c in s.derivation.whole_page.numbers("embeddings = [", 24)]))
        n = blocks.layer_norm(L, X, eps=0, name="LN")
        L.define("sigma", ops.Map(ops.SQRT, n.var), note="population standard deviation of each row")
        s.keep(prompt=SimpleNamespace(L=L, X=X, n=n, stats=_row_stats(L, n.out, "LN")))
    return s.objects["prompt"]


def _row_stats(L, M, name: str):
    """Mean, population std and sample std (correction 1) of each row of M, as ledger rows."""
    mean = L.define(f"mean({name})", ops.mean(M, 1))
    return (mean, L.define(f"std_pop({name})", ops.std(M, 1, correction=0, mean_of=mean)),
            L.define(f"std({name})", ops.std(M, 1, correction=1, mean_of=mean)))


def _balanced(s, mean: tuple, std: tuple, at: tuple = ("", "")):
    """Claim the mean 0 and the population std 1 of LN(Hello): each the ``index``-th value of the line holding
    ``words``, for ``mean`` and ``std`` given as ``(words, index)``."""
    m, pop, _ = _prompt(s).stats
    s.claim(m[0, 0], near=mean[0], index=mean[1], what="the mean of LN(Hello)", at=at[0])
    s.claim(pop[0, 0], near=std[0], index=std[1], what="the standard deviation of LN(Hello)", at=at[1])


derivation.reported("What is Layer Normalization?", "out of 100 and others out of 1000",
                    reason=ILLUSTRATIVE + " (exam marks)")


@derivation.section("Without Layer Normalization")
def without(s):
    hello = _prompt(s).X[0, :]
    s.given(hello, hello, what="Layer 1, the embedding of Hello (exploding, then vanishing)")
    s.reported(*(s.page.printed(near=f"Layer {k}:", occurrence=o) for o in (0, 1) for k in (5, 10, 15)),
               reason=ILLUSTRATIVE + " (activations of later layers)")


@derivation.section("With Layer Normalization")
def with_ln(s):
    _balanced(s, ("**Mean ≈", -1), ("**Standard deviation ≈", -1))
    s.claim(_prompt(s).n.out[0, :], near="Layer 1:", what="Layer 1: LN(Hello) to two decimals")
    s.reported(*(s.page.printed(near=f"Layer {k}:") for k in (5, 10, 15)),
               reason=ILLUSTRATIVE + " (normalized activations of later layers)")


@derivation.section("Step 1: Token Embedding")
def step1(s):
    s.given(D, what="4 dimensions")
    s.given(_prompt(s).X[0, :], what="hello_features")


@derivation.section("Step 6: Verify the Result")
def step6(s):  # new_mean's sum is the page's own arithmetic
    _balanced(s, ("should have", 0), ("should have", 1))
    s.claim(_prompt(s).stats[1][0, 0], name="new_std", what="new_std (population)", at="new_std")


@derivation.section("Before Layer Normalization")
def before(s):  # each "mean=" is the page's own arithmetic; the stds (five wrong) are claimed as √v, whose rows the
    p = _prompt(s)  # next section normalizes with them, so that its errata trace back to them
    s.given(D, what="4 dimensions each")
    s.given(*(p.X[t, :] for t in range(6)), what=EMBEDDINGS)
    for t, w in enumerate(TOKENS):
        s.claim(ops.Map(ops.SQRT, p.n.var)[t, 0], name="std", near=f'"{w}"', what=f"std of {w!r} (population)")


@derivation.section("After Layer Normalization")
def after(s):  # Hello's row and the comments' "mean≈0, std≈1" are the page's own arithmetic
    rows = [s.page.printed(near=f'# "{w}"', index=0) for w in TOKENS[1:]]
    s.claim_rows(rows, _prompt(s).n.out, start=1, what=tuple(f"LN of {w!r}" for w in TOKENS[1:]), at="LN")


@derivation.section("When Does Layer Norm Happen?")
def when(s):
    s.given(_prompt(s).X[0, :], what="the first row of the embeddings")
    s.reported("12+ layers", reason="a typical depth named in passing, not a quantity of the example")
    with s.place("count"):
        s.given(12, what="a 12-layer transformer")
        s.claim(2 * 12, near="Hence in a", index=1, what="two LayerNorms (attention, feed-forward) per layer")


@derivation.section("The Solution: Standard Scale")
def solution(s):  # Hello's row and its range 2.75 are the page's own arithmetic
    p = _prompt(s)
    for t, w in enumerate(TOKENS[:3]):
        ln = list(p.L.value("LN").row(t))
        with s.place(f"row {t}"):
            if t:  # the row to two decimals, and the true range (not only the printed row's)
                s.claim(p.n.out[t, :], near=f'"{w}"', index=0, what=f"LN of {w!r}, two decimals")
                s.claim(max(ln, key=sp.N) - min(ln, key=sp.N), near=f'"{w}"', index=1, what=f"range of LN({w!r})")
            s.claim(p.stats[0][t, 0], near=f'"{w}"', what=f"LN({w!r}) is balanced around 0")


@derivation.section("**Standard Deviation = 1 (Consistent)**")
def std1(s):  # 1000mm, 2m, 0.5km in metres
    units = ("1000 mm", "2 m", "half a km")
    mm, m, km = (s.page.value(near="different_units", index=k) for k in range(3))
    s.given(mm, m, km, what=units)
    for k, metres in enumerate((mm / 1000, m, km * 1000)):
        s.claim(metres, near="same_units", index=k, what=f"{units[k]} in metres")


@derivation.section("Training Stability")
def stability(s):  # the gradients with layer norm are quoted with their "= " (each number alone stands elsewhere)
    sizes = s.page.numbers("erratic", 6)
    s.reported(*sizes[:3], *(f"= {v}" for v in sizes[3:]), reason=ILLUSTRATIVE + " (gradient sizes)")


@derivation.section('For Our "Hello" Example')
def hello_example(s):  # √0.1325 = 0.364 and both checks are the page's own arithmetic
    s.claim(_prompt(s).n.var[0, 0], name="variance", what="variance", at="what we found")


@derivation.section("**What Actually Happens:**")
def actually(s):
    p = _prompt(s, "the prompt; LayerNorm with ε = 1e-5 (Hello is row 0)")
    s.claim(blocks.layer_norm(p.L, p.X, eps="1e-5", name="LN_eps").var[0, 0], name="variance", what="variance",
            at="Step 1")


@derivation.section("Complete Code Example")
def code(s):
    X = _prompt(s).X
    s.given(sp.Rational(1, 100000), what="eps=1e-5")
    s.given(6, D, what=("6 tokens", "4 features each"))
    s.given(*(X[t, :] for t in range(6)), what=EMBEDDINGS)
    s.given(D, D, what=("nn.LayerNorm(4)", "4 features"))
    s.given(X[0, :], what="embeddings[0], the Hello row")


@derivation.section("Expected Output")
def expected(s):  # the Hello breakdown's features, mean, std and normalized mean are the page's own arithmetic
    p = _prompt(s, "the script's run: X, LN with ε = 1e-5 (manual_layer_norm), LN with ε = 0 (Hello)")
    ln, (m0, pop0, sample0) = blocks.layer_norm(p.L, p.X, eps="1e-5", name="LN_eps"), p.stats
    (_, _, sample), (m_eps, _, sample_eps) = _row_stats(p.L, p.X, "X"), _row_stats(p.L, ln.out, "LN_eps")
    first = s.page.line("After manual layer norm:") + 1  # the matrix, one row per line
    manual = "[" + ", ".join(PageView(s.page.doc, first, first + 5, s.page.where).printed(near="[", index=0,
                                                                                         occurrence=k) for k in range(6)) + "]"
    s.given(p.X, what="Original embeddings (tensor, six rows)")
    s.claim(p.n.mu.T, near="Original means per token", what="Original means per token")
    s.claim(sample.T, near="Original stds per token", what="Original stds per token (sample std)")
    s.claim(manual, ln.out, what="After manual layer norm (ε = 1e-5)", at="manual layer norm")
    s.claim(m_eps.T, near="New means per token", what="New means per token")
    s.claim(sample_eps.T, near="New stds per token", what="New stds per token (sample std)")
    with s.place("Hello"):
        for node, words, index, what in (
                (p.n.var[0, 0], "Variance:", 0, "Variance (0.1325 printed to three decimals)"),
                (p.n.out[0, :], "Normalized 'Hello':", 0, "(hello − mean)/std_dev, ε = 0"),
                (m0[0, 0], "Normalized mean:", -1, "should be ≈0"),
                (sample0[0, 0], "Normalized std:", 0, "normalized_hello.std(), the sample std"),
                (pop0[0, 0], "Normalized std:", -1, "should be ≈1 (the population std of a normalized row)")):
            s.claim(node, near=words, index=index, what=f"{words} {what}")


@derivation.section("🎯 **What Layer Normalization Does**")
def takeaways(s):
    _balanced(s, ("Brings the mean", 0), ("Brings the mean", 1))


@derivation.section("🎯 **When It Happens**")
def when_takeaway(s):
    s.claim(2, near="per layer, across", index=0, what="LayerNorms per layer: before attention and feed-forward")
    s.claim(2 * 12, near="per layer, across", index=1, what="LayerNorms in a 12-layer model")
    s.given(12, what="a 12-layer model")
