"""A statement a derivation proves and quotes with ``near=`` is held to the page's text, numbers included.

Handout #11 (seed 001) argues in symbols: "each product has variance $\\sigma^4$", "proportional to $BT^2D$",
"predicts the token at $i+1$", "each row $[h_0,h_1]$ gives logits $[h_0,h_1,-h_0-h_1]$". Its derivation proves
each of them and quotes the page's formula with ``near=``. An exponent, index or subscript edited in the quoted
formula makes the page state something the derivation did not prove: the audit fails at that line, with the
claim expected there. The seeds are read from ``$SYMSEQ_SEEDS`` or ``../shared/seeds`` (see ``test_audit``).
"""

import pytest

from symseq import Derivation
from test_audit import SEEDS, needs_seeds
from test_claim_words import _audit_json

H11 = "001_d42a515eb3cd140c.txt"

# (line, text before, text after): one edit of an integer inside a quoted formula per case
EDITS = [
    (37, r"zero-mean, with variance $\sigma^2$", r"zero-mean, with variance $\sigma^3$"),
    (37, r"Each product has variance $\sigma^4$", r"Each product has variance $\sigma^5$"),
    (37, r"gives variance $d_k\sigma^4$", r"gives variance $d_k\sigma^2$"),
    (37, r"gives variance $\sigma^4$. This", r"gives variance $\sigma^3$. This"),
    (67, r"proportional to $BT^2D$", r"proportional to $BT^3D$"),
    (67, r"takes $BHT^2$ entries", r"takes $BHT^1$ entries"),
    (105, r"predicts the token at $i+1$", r"predicts the token at $i+2$"),
    (105, r"The target at $i+1$ is not", r"The target at $i+2$ is not"),
    (129, r"Each row $[h_0,h_1]$", r"Each row $[h_0,h_2]$"),
    (129, r"gives logits $[h_0,h_1,-h_0-h_1]$", r"gives logits $[h_0,h_1,-h_0-h_2]$"),
]


W8 = "000_30e9e4099f2cd2dc.txt"

# Week 8 (seed 000) writes its decoder in general notation; its derivation proves each formula on symbolic
# ledgers and quotes it: (line, text before, text after)
W8_EDITS = [
    (48, r"predicts the token at $i+1$", r"predicts the token at $i+2$"),
    (48, r"but not $x_{i+1}$", r"but not $x_{i+2}$"),
    (50, r"0,& s>t,", r"1,& s>t,"),
    (62, r"[O^{(1)}\cdots O^{(h)}]W_O", r"[O^{(2)}\cdots O^{(h)}]W_O"),
    (62, r"{\mathbb{R}}^{h{d}_v\times d}", r"{\mathbb{R}}^{d\times h{d}_v}"),
    (74, r"(h_j-\mu {)}^2", r"(h_j-\mu {)}^3"),
    (84, r"Initialize $H^0$", r"Initialize $H^1$"),
    (84, r"$\ell =0,\dots ,L-1$", r"$\ell =1,\dots ,L-1$"),
    (86, r"{\mathrm{LN}}_{\ell ,1}(H^{\ell })", r"{\mathrm{LN}}_{\ell ,2}(H^{\ell })"),
    (86, r"H^{\ell +1}=U", r"H^{\ell +2}=U"),
    (90, r"ReLU}(h{W}_1+b_1)", r"ReLU}(h{W}_2+b_1)"),
    (92, r"where $W_1$ is", r"where $W_2$ is"),
    (96, r"{\sum }_{b=1}^v", r"{\sum }_{b=2}^v"),
]


CASES = [(H11, "handout11-self-attention", *e) for e in EDITS] + [(W8, "week08-decoder", *e) for e in W8_EDITS]


@needs_seeds
@pytest.mark.parametrize("seed, name, line, old, new", CASES, ids=[f"{c[0][:3]}-{c[2]}-{c[4][-10:]}" for c in CASES])
def test_an_integer_edited_in_a_quoted_formula_fails_at_its_line(seed, name, line, old, new, tmp_path, capsys):
    lines = (SEEDS / seed).read_text(encoding="utf-8").split("\n")
    assert lines[line - 1].count(old) == 1, lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    path = tmp_path / seed
    path.write_text("\n".join(lines), encoding="utf-8")
    status, rep = _audit_json(path, name, tmp_path / "edited.json")
    assert status == 1  # named at the line: the claim quoting it, and what else the edit breaks (a shape there)
    assert [line, line] in [m["lines"] for m in rep["missing"]], rep["missing"]
    assert all(e["line"] in (line, line + 2) for e in rep["errata"]), rep["errata"]  # W_2's shape on line 92


PAGE = """# Scaled scores

## Variance

With independent, centred coordinates of variance $\\sigma^2$, each product has variance $\\sigma^4$.
"""


def _variance_page(tmp_path, text: str):
    """A page of one's own and a derivation that proves its statement and quotes the page's formula."""
    import sympy as sp

    from symseq.derive.moments import dot_product_variance

    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    d = Derivation("variance-page", title="Scaled scores", source=str(page))
    sigma = sp.Symbol("σ", positive=True)

    @d.section("Variance")
    def variance(s):
        s.identity("a product of two centred coordinates has variance σ⁴",
                   dot_product_variance(1, sigma2=sigma**2) - sigma**4,
                   near=r"of variance $\sigma^2$, each product has variance $\sigma^4$")

    return page, d


@pytest.mark.parametrize("edit, fails", [(None, False), (("sigma^4", "sigma^6"), True),
                                         (("sigma^2", "sigma^3"), True), (("each product", "each  product"), False)])
def test_a_quoted_formula_on_a_page_of_ones_own(edit, fails, tmp_path):
    from symseq.audit import audit_document, read

    text = PAGE if edit is None else PAGE.replace(*edit)
    page, d = _variance_page(tmp_path, text)
    assert d.claims[0].check().status == "ok"
    rep = audit_document(read(page), [d])
    assert rep.failed is fails
    if fails:
        assert [m.lines for m in rep.missing] == [(5, 5)]


WEIGHTS = """# Weights

## Attention

The weights of row 1 are $a_{10} = 0.4$ and $a_{11} = 0.6$.
At position 1 the weight on position 1 is larger than the weight on position 0.
At position 2 the weight on position 0 is smaller than the weight on position 2.
"""


def _weights_page(tmp_path, text: str):
    """A page of one's own whose comparison at position 1 is claimed with ``near=`` quoting its line."""
    page = tmp_path / "weights.md"
    page.write_text(text, encoding="utf-8")
    d = Derivation("weights-page", title="Weights", source=str(page))

    @d.section("Attention")
    def attention(s):
        a10, a11 = s.given("a_{10}"), s.given("a_{11}")
        s.prove("a_11 > a_10", lambda: a11 > a10,
                near="At position 1 the weight on position 1 is larger than the weight on position 0")

    return page, d


@pytest.mark.parametrize("old, new, fails", [
    ("", "", False),
    ("is larger than", "is greater than", False),  # the same comparison in other words
    ("is larger than", "is bigger than", False),
    ("is larger than", "is smaller than", True),  # flipped: named at its own line, not at the next, alike one
    ("is larger than", "is less than", True),
])
def test_a_quoted_comparison_in_other_words_holds_and_a_flipped_one_fails_at_its_line(old, new, fails, tmp_path):
    from symseq.audit import audit_document, read

    page, d = _weights_page(tmp_path, WEIGHTS.replace(old, new) if old else WEIGHTS)
    rep = audit_document(read(page), [d])
    assert rep.failed is fails
    if fails:
        assert [m.lines for m in rep.missing] == [(6, 6)]
    else:  # the comparison counts as checked by the claim
        (by,) = [by for c, by in rep.comparisons if c.line == 6]
        assert by == d.claims[-1].id


def test_two_claims_that_read_the_same_printed_number_are_told_apart_without_comparing_their_values(tmp_path):
    """A page edited so that two claims of one line read the same number (a loss printed as the gradient beside
    it): the audit reports both wrong, and no claim is compared with another by its value (a whole ledger row
    cannot be one SymPy expression; comparing them raised WholeRowError and the audit exited 2)."""
    import sympy as sp

    from symseq import Derivation, ops
    from symseq.audit import audit_document, read

    page = tmp_path / "loss.md"
    page.write_text("# Loss\n\n## Result\n\nThe loss is 0.0412 and $\\partial\\mathcal L/\\partial h_0 = 0.0412$.\n",
                    encoding="utf-8")
    d = Derivation("loss-page", title="Loss", source=str(page))

    @d.section("Result")
    def result(s):
        L = s.ledger("a vector loss")
        e = L.define("e", L.parameter("h", [[sp.Rational(3, 10), sp.Rational(1, 5)]]) - L.input("y", [[0, 0]]))
        s.claim(L.define("ℒ", ops.Sum(e * e) / 2), near="The loss is", index=0)  # 0.065
        s.claim(e[0, 0], near="The loss is", index=1)  # 0.3

    rep = audit_document(read(page), [d])
    assert rep.failed and [(e.line, e.printed, e.correct) for e in rep.errata] == [(5, "0.0412", "0.0650"),
                                                                                   (5, "0.0412", "0.3000")]


@pytest.mark.parametrize("statement", [
    "the weight on position 1 (0.6) exceeds the weight on position 0 (0.4)",  # a sentence of one's own, with numbers
    "the larger weight is the one at the later position of the row",
])
def test_a_proved_sentence_may_hold_numbers_of_its_own_and_still_quote_the_page(statement, tmp_path):
    """A property stated as a sentence in the derivation's words, with numbers in it, and placed by ``near=``: the
    quote is what the page must print, not the sentence's numbers (0.6 and 0.4 are not looked for on line 6), so the
    clean page passes and the flipped word fails at its line."""
    from symseq.audit import audit_document, read

    for text, fails in ((WEIGHTS, False), (WEIGHTS.replace("is larger than", "is smaller than", 1), True)):
        page = tmp_path / "weights.md"
        page.write_text(text, encoding="utf-8")
        d = Derivation("weights-sentence", title="Weights", source=str(page))

        @d.section("Attention")
        def attention(s):
            s.prove(statement, lambda: True,
                    near="At position 1 the weight on position 1 is larger than the weight on position 0")

        rep = audit_document(read(page), [d])
        assert rep.failed is fails, rep.failures()
        assert [m.lines for m in rep.missing] == ([(6, 6)] if fails else [])
