"""LayerNorm of the prompt "Hello, how are you?" (six tokens, four features), computed by hand and in torch.

Source: https://github.com/micwill755/transformer/blob/796de3411284cc66c1f1f20c3fc9ad80462129ad/lesson/docs/Layer_Normalization_Explained.md
(rendition: ``layernorm-hello-prompt.md``). Conventions read from the page: LayerNorm over the features of a token,
population variance, no gain or shift; ε = 0 by hand and in the script's "Hello" breakdown, ε = 1e-5 under the root in
``manual_layer_norm``; ``Tensor.std`` is the sample std. Headings with no section are the page's own arithmetic."""

import sympy as sp

from symseq import Derivation, blocks, ops
from symseq.authoring.page import exact_value

derivation = Derivation("layernorm-hello-prompt", title="Layer Normalization Explained: A Beginner's Guide",
                        source="layernorm-hello-prompt.md", description="LayerNorm of six tokens by hand and in torch")
TOKENS, D = ["Hello", ",", " how", " are", " you", "?"], 4
ILLUSTRATIVE = "illustrative values of an analogy, not computed from any printed input"
derivation.reported("What is Layer Normalization?", "out of 100 and others out of 1000", reason=ILLUSTRATIVE)
SECTIONS = ("Without Layer Normalization", "With Layer Normalization", "Step 1: Token Embedding",
            "Step 6: Verify the Result", "Before Layer Normalization", "After Layer Normalization",
            "When Does Layer Norm Happen?", "The Solution: Standard Scale", "**Standard Deviation = 1 (Consistent)**",
            "Training Stability", 'For Our "Hello" Example', "**What Actually Happens:**", "Complete Code Example",
            "Expected Output", "🎯 **What Layer Normalization Does**", "🎯 **When It Happens**")


def section(s):
    """Section ``s.title`` of the page, on a ledger of the prompt X (Hello is row 0) and its LayerNorms n and eps."""
    L = s.ledger("the prompt X; LayerNorm with ε = 0 (by hand) and with ε = 1e-5 (manual_layer_norm)")
    X = L.input("X", sp.Matrix(6, D, [exact_value(c) for c in s.derivation.whole_page.numbers("embeddings = [", 24)]))
    n, eps, stats = blocks.layer_norm(L, X, eps=0, name="LN"), blocks.layer_norm(L, X, eps="1e-5", name="LN_eps"), {}
    for M, name in ((n.out, "LN"), (X, "X"), (eps.out, "LN_eps")):  # stats[name]: mean, population std, sample std
        mu = L.define(f"mean({name})", ops.mean(M, 1))
        pop, sample = (ops.std(M, 1, correction=c, mean_of=mu) for c in (0, 1))
        stats[name] = (mu, L.define(f"std_pop({name})", pop), L.define(f"std({name})", sample))
    (mean, pop, sample), hello, rows = (c[0, 0] for c in stats["LN"]), X[0, :], [X[t, :] for t in range(6)]
    match s.title:
        case "Without Layer Normalization":
            s.given(hello, hello, what="Layer 1, the embedding of Hello (exploding, then vanishing)")
            s.reported(*(s.page.printed(near=f"Layer {k}:", occurrence=o) for o in range(2) for k in (5, 10, 15)),
                       reason=ILLUSTRATIVE)
        case "With Layer Normalization":
            s.claim(mean, near="**Mean ≈", what="mean of LN(Hello)")
            s.claim(pop, near="**Standard deviation ≈", what="std of LN(Hello)")
            s.claim(n.out[0, :], near="Layer 1:", what="Layer 1: LN(Hello) to two decimals")
            s.reported(*(s.page.printed(near=f"Layer {k}:") for k in (5, 10, 15)), reason=ILLUSTRATIVE)
        case "Step 1: Token Embedding":
            s.given(D, hello, what=("4 dimensions", "hello_features"))
        case "Step 6: Verify the Result":  # new_mean's sum is the page's own arithmetic
            s.claim_line("should have", (mean, "mean of LN(Hello)"), (pop, "std of LN(Hello)"))
            s.claim(pop, name="new_std", what="new_std (population)", at="new_std")
        case "Before Layer Normalization":  # the stds (five wrong) are claimed as √v, LN's rows trace back to them
            s.given(D, *rows, what=("4 dimensions each", *(f"embedding of {w!r}" for w in TOKENS)))
            for t, w in enumerate(TOKENS):  # each "mean=" is the page's own arithmetic
                s.claim(ops.Map(ops.SQRT, n.var)[t, 0], name="std", near=f'"{w}"', what=f"std of {w!r}")
        case "After Layer Normalization":  # Hello's row and each "mean≈0, std≈1" are the page's own arithmetic
            s.claim_rows([s.page.printed(near=f'# "{w}"', index=0) for w in TOKENS[1:]], n.out, start=1, at="LN")
        case "When Does Layer Norm Happen?":
            s.given(hello, 12, what=("the first row of the embeddings", "a 12-layer transformer"))
            s.reported("12+ layers", reason="a typical depth named in passing, not a quantity of the example")
            s.claim(2 * 12, near="Hence in a", index=1, what="two LayerNorms (attention, feed-forward) per layer")
        case "The Solution: Standard Scale":  # Hello's row and its range 2.75 are the page's own arithmetic
            for t, w in enumerate(TOKENS[:3]):
                if t:  # the row to two decimals and its true range (not only the printed row's)
                    ln = sorted(L.value("LN").row(t), key=sp.N)
                    s.claim_line(f'"{w}"', (n.out[t, :], f"LN({w!r})"), (ln[-1] - ln[0], f"range of LN({w!r})"))
                s.claim(stats["LN"][0][t, 0], near=f'"{w}"', what=f"mean of LN({w!r})")
        case "**Standard Deviation = 1 (Consistent)**":  # 1000mm, 2m, 0.5km in metres
            mm, m, km = (s.page.value(near="different_units", index=k) for k in range(3))
            s.given(mm, m, km, what=("1000 mm", "2 m", "half a km"))
            s.claim_line("same_units", (mm / 1000, "1000 mm in m"), (m, "2 m in m"), (km * 1000, "half a km in m"))
        case "Training Stability":  # the steady sizes are quoted with their "= " (each alone stands elsewhere)
            s.reported(*(f"= {v}" if k > 2 else v for k, v in enumerate(s.page.numbers("erratic", 6))),
                       reason=ILLUSTRATIVE + " (gradient sizes)")
        case 'For Our "Hello" Example' | "**What Actually Happens:**":  # the roots and checks: page arithmetic
            s.claim(n.var[0, 0], name="variance", what="variance of Hello")
        case "Complete Code Example":
            s.given(sp.Rational(1, 100000), 6, D, *rows, D, D, hello,
                    what="the script's inputs: eps, sizes, the embeddings, nn.LayerNorm(4), the Hello row")
        case "Expected Output":  # the Hello breakdown's features, mean, std and normalized mean: page arithmetic
            first = s.page.line("After manual layer norm:") + 1  # the matrix, one row per line
            manual = " ".join(s.page.doc.line(i).strip() for i in range(first, first + 6))[len("tensor("):-1]
            s.given(X, what="Original embeddings (tensor, six rows)")
            s.claim(manual, eps.out, what="After manual layer norm (ε = 1e-5)", at="manual")
            for node, words in ((n.mu.T, "Original means"), (stats["X"][2].T, "Original stds"),
                                (stats["LN_eps"][0].T, "New means"), (stats["LN_eps"][2].T, "New stds")):
                s.claim(node, near=f"{words} per token", what=f"{words} per token")
            s.claim(n.var[0, 0], near="Variance:", index=0, what="Variance (0.1325 printed to three decimals)")
            s.claim(n.out[0, :], near="Normalized 'Hello':", index=0, what="(hello − mean)/std_dev, ε = 0")
            s.claim(mean, near="Normalized mean:", what="Normalized mean (should be ≈0)")
            s.claim_line("Normalized std:", (sample, "normalized_hello.std(), the sample std"), (pop, "std ≈ 1"))
        case "🎯 **What Layer Normalization Does**":
            s.claim_line("Brings the mean", (mean, "mean of LN(Hello)"), (pop, "std of LN(Hello)"))
        case "🎯 **When It Happens**":
            s.claim_line("per layer, across", (2, "LayerNorms per layer"), (2 * 12, "LayerNorms in a 12-layer model"))
            s.given(12, what="a 12-layer model")


for title in SECTIONS:
    derivation.section(title)(section)
