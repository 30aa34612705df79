"""Structural numbers: each is set aside with its reason, and quantities stay quantities."""

import textwrap

from symseq.read.document import parse
from symseq.audit.structure import HARD, SOFT, claim_tokens, classify

TEXT = textwrap.dedent(r"""
    Week 8 — One Head

    Learning goals

    1. Write down a complete decoder with every component fixed.
    2. Compute a forward pass by hand.

    2. Residual updates and normalization

    With $h=(1,3)$ and $\epsilon=0$ we get $\mu =2$ as in Table 3 and §3.4.1 (Vaswani et al., 2017).
    With PyTorch 2.8 on CPU and torch.manual_seed(6), at $t=0,1,2$ the state $h_{t-1}$ and $x_{T-1}$ use T-1 steps.
    The token with ID 4 sits at position 2. See Weeks 04–05 and Handout #11.

    Table 3: The loss at each step.

    Position	Loss
    0	0.232674
    1	0.5

    import torch
    X = torch.tensor([[0.2, -0.1]])

    • Dosovitskiy et al., An Image Is Worth 16x16 Words: patches (2021).
""").strip("\n")


def _by_text(doc):
    out = {}
    for t in doc.tokens:
        out.setdefault((t.line, t.text), t)
    return out


def test_structural_reasons():
    doc = parse(TEXT)
    classify(doc)
    tok = _by_text(doc)

    def verdict(lineno, text):
        t = tok[(lineno, text)]
        return t.tier, t.rule

    assert verdict(1, "8") == (HARD, "label (table, figure, section, week, handout …)")
    assert verdict(5, "1")[1] == "list marker" and verdict(6, "2")[1] == "list marker"
    assert verdict(8, "2")[1] == "heading"
    assert verdict(10, "3")[1].startswith("label") and verdict(10, "3.4.1")[1].startswith("label")
    assert verdict(10, "2017") == (HARD, "year")
    assert verdict(11, "2.8") == (HARD, "software version")
    assert verdict(11, "0")[1] == "index value" and verdict(11, "2")[1] == "index value"
    reasons_11 = {t.rule for t in doc.tokens if t.line == 11}
    assert {"subscript index", "index arithmetic", "random seed"} <= reasons_11
    assert all(t.tier for t in doc.tokens if t.line == 11)
    assert verdict(12, "4") == (SOFT, "token ID")
    assert verdict(12, "2") == (SOFT, "position, row or feature number")
    assert verdict(12, "04")[1].startswith("label") and verdict(12, "05")[1].startswith("label")
    assert verdict(12, "11")[1].startswith("label")
    assert verdict(17, "0")[1] == "table row label" and verdict(18, "1")[1] == "table row label"
    assert verdict(21, "[0.2, -0.1]") == (SOFT, "code")
    assert verdict(23, "2021")[1] == "reference entry"


def test_quantities_stay_quantities():
    doc = parse(TEXT)
    classify(doc)
    quantities = [(t.line, t.key) for t in doc.tokens if not t.tier]
    assert (10, "(1,3)") in quantities and (10, "0") in quantities and (10, "2") in quantities
    assert (17, "0.232674") in quantities and (18, "0.5") in quantities


def test_seeds_and_index_arithmetic():
    doc = parse("Three initialization seeds, 6206/6207/6208, are kept; the range is 0 to T-1 with x_{t+1}.")
    classify(doc)
    reasons = {t.text: t.rule for t in doc.tokens}
    assert reasons["6206"] == reasons["6207"] == reasons["6208"] == "random seed"
    assert reasons["1"] in ("index arithmetic", "subscript index")
    assert reasons["0"] == ""  # a bare 0 in prose is a quantity


def test_a_script_label_named_in_the_prose_is_structural():
    doc = parse(r"The superscript \((0)\) denotes the input; the subscript 2 labels a head. "
                r"The exponent 2 squares, and the superscript \(h\) labels a derivative.")
    classify(doc)
    verdicts = [(t.text, t.tier, t.rule) for t in doc.tokens]
    named = "superscript or subscript label named in the text"
    assert verdicts == [("0", SOFT, named), ("2", SOFT, named), ("2", "", "")]  # an exponent's value stays a quantity


def test_a_claims_printed_string_drops_the_same_structural_numbers():
    assert [t.key for t in claim_tokens("B_{att,6,0} = c_{6,0} + 0.5 c_{6,3} (row 0 of W_O)")] == ["0.5"]
    assert [t.key for t in claim_tokens(r"\left(\begin{array}{cc}1/\sqrt{2}& -\infty \\ 0& 1/\sqrt{2}\end{array}\right)")] \
        == ["1/√2", "0", "1/√2"]


def test_tables_headings_and_code_are_found():
    doc = parse(TEXT)
    (table,) = doc.tables
    assert table.label == "Table 3" and table.header == 16 and table.rows == [17, 18]
    assert [h.text for h in doc.headings][:3] == ["Week 8 — One Head", "Learning goals",
                                                  "2. Residual updates and normalization"]
    assert doc.code == {20, 21}
    assert doc.references == {23}


def test_numbered_steps_are_list_markers_and_products_are_not():
    doc = parse("1 · Embed tokens and add positions.\n\n2 · Project with $W_Q=[1,0]$.\n\n3 · 4 = 12 by hand.\n")
    classify(doc)
    reasons = {(t.line, t.text): t.rule for t in doc.tokens}
    assert reasons[(1, "1")] == reasons[(3, "2")] == "list marker"
    assert reasons[(5, "3")] == "" and reasons[(5, "4")] == ""  # "3 · 4" is a product, not a step


def test_hash_numbers_are_references():
    doc = parse("Use #12's architecture section; §9.4 and #12 §7 guide it. The ratio 3#4 and \\#5 in LaTeX.\n")
    classify(doc)
    by = [(t.text, t.rule) for t in doc.tokens]
    assert by.count(("12", "numbered reference (#12)")) == 2
    assert ("5", "numbered reference (#12)") in by
    assert ("3", "") in by and ("4", "") in by  # '#' glued to a preceding number is not a reference


def test_assignments_from_dotted_calls_are_code_and_sentences_are_not():
    doc = parse(textwrap.dedent("""\
        Name the tensor axes.

        scores = torch.einsum("bid,bjd->bij", q, k) / math.sqrt(q.size(-1))
        weights = scores.softmax(dim=-1)

                q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)

        For example, y = torch.tanh(x) squashes every entry of the 3 rows into (-1, 1) as usual.
        """))
    classify(doc)
    assert doc.code == {3, 4, 6}
    assert {t.rule for t in doc.tokens if t.line in (3, 4, 6)} == {"code"}
    assert [t.text for t in doc.tokens if t.line == 8 and not t.tier] == ["3", "(-1, 1)"]
