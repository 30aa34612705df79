"""The page's own mathematics checked beyond its arithmetic: shapes written with symbols against the formulas that
use them, numbered names defined in a row, and a statement whose printed result a claim holds but whose own
operands make it false. Each check is tried on the seed handouts unedited (nothing flagged) and with the edit it
exists to catch (caught at the edited line)."""

from __future__ import annotations

import pytest

from symseq.audit import audit_document, parse, read
from symseq.audit.arithmetic import numbered_lists, numbered_runs
from symseq.audit.shapes import misfits
from symseq.authoring import bundled
from test_audit import SEEDS, needs_seeds

WEEK8 = "000_30e9e4099f2cd2dc.txt"
HANDOUT11 = "001_d42a515eb3cd140c.txt"
ALL_SEEDS = [WEEK8, HANDOUT11, "003_b76f00753924d0c1.txt", "004_daeab95066cb0286.txt"]


def _edited(seed: str, line: int, before: str, after: str):
    lines = (SEEDS / seed).read_text(encoding="utf-8").split("\n")
    assert before in lines[line - 1], (line, before)
    lines[line - 1] = lines[line - 1].replace(before, after, 1)
    return parse("\n".join(lines), path=seed, fmt="text")


@needs_seeds
@pytest.mark.parametrize("seed", ALL_SEEDS)
def test_the_unedited_seeds_have_no_misfitting_shape_and_no_broken_run(seed):
    doc = read(SEEDS / seed)
    assert misfits(doc) == []
    assert numbered_runs(doc) == []
    assert numbered_lists(doc) == []


# Week 8's table of objects and its formulas: each shape transposed is blamed where it is declared, and the shape
# that fits Q = HW_Q, O = AV, FF(h) = ReLU(hW_1 + b_1)W_2 + b_2 and Z = LN_f(H^L)W_out + b_out is named
@needs_seeds
@pytest.mark.parametrize("line, before, after, correct", [
    (29, r"T\times d", r"d\times T", "T×d"),
    (30, r"d\times d_k", r"d_k\times d", "d×d_k"),
    (31, r"d\times d_v", r"d_v\times d", "d×d_v"),
    (32, r"T\times d_k", r"d_k\times T", "T×d_k"),
    (33, r"T\times d_v", r"d_v\times T", "T×d_v"),
    (35, r"T\times d_v", r"d_v\times T", "—"),  # the row of AV: an expression, checked as an equation
    (36, r"T\times v", r"v\times T", "T×v"),
    (92, r"d\times m", r"m\times d", "d×m"),
    (96, r"d\times v", r"v\times d", "d×v"),
])
def test_a_transposed_symbolic_shape_is_caught_where_it_is_declared(line, before, after, correct):
    found = misfits(_edited(WEEK8, line, before, after))
    assert [(m.line, m.correct) for m in found] == [(line, correct)], found
    assert "does not fit" in found[0].reason


@needs_seeds
def test_two_shapes_on_one_line_either_of_which_may_be_wrong_are_named_together():
    found = misfits(_edited(WEEK8, 92, r"$m\times d$", r"$d\times m$"))  # W_2 written as W_1's shape
    assert [(m.line, m.correct) for m in found] == [(92, "—")]
    assert "W_1 (d×m) or W_2 (d×m)" in found[0].reason


def test_a_transposed_shape_breaks_a_formula_of_a_display_written_over_several_lines():
    page = ("# Head\n\nThe input $\\mathbf X$ has shape $T\\times d$.\n\n\\[\n"
            "\\mathbf Q = \\mathbf X \\mathbf W_Q, \\qquad \\mathbf K = \\mathbf X \\mathbf W_K,\n\\]\n\n"
            "with $\\mathbf W_Q, \\mathbf W_K \\in \\mathbb R^{d\\times d_k}$, so "
            "$\\mathbf Q, \\mathbf K \\in \\mathbb R^{T\\times d_k}$.\n")
    assert misfits(parse(page, path="page.md")) == []
    found = misfits(parse(page.replace("R^{T\\times d_k}", "R^{d_k\\times T}"), path="page.md"))
    assert [(m.line, m.correct) for m in found] == [(9, "T×d_k")], found
    assert "\\mathbf Q = \\mathbf X \\mathbf W_Q" in found[0].reason  # the formula of the display, line 6


def test_the_product_rule_in_words_is_checked():
    ok = parse(r"Multiplying an $a\times b$ matrix by a $b\times c$ matrix produces an $a\times c$ matrix.",
               path="p.md", fmt="markdown")
    assert misfits(ok) == []
    bad = parse(r"Multiplying an $a\times b$ matrix by a $b\times c$ matrix produces an $c\times a$ matrix.",
                path="p.md", fmt="markdown")
    assert [(m.line, m.correct) for m in misfits(bad)] == [(1, "a×c")]


def test_shapes_of_names_no_formula_uses_and_formulas_of_unknown_functions_flag_nothing():
    text = "\n".join([r"Let $X\in\mathbb R^{T\times D}$ and $W\in\mathbb R^{D\times H}$.",
                      r"Then $Y=\mathrm{Attn}(X)W$ and $Z=g(X)+b$.",  # unknown functions: shapes unknown
                      r"Elsewhere $P\in\mathbb R^{K\times K}$."])
    assert misfits(parse(text, path="p.md", fmt="markdown")) == []
    wrong = text.replace(r"$Y=\mathrm{Attn}(X)W$", r"$Y=WX$")  # (D×H)(T×D): inner sizes H and T differ
    found = misfits(parse(wrong, path="p.md", fmt="markdown"))
    # either declaration, both on line 1, would make Y = WX fit: the two are named there
    assert [m.line for m in found] == [1] and "X (T×D) or W (D×H)" in found[0].reason, found


@needs_seeds
@pytest.mark.parametrize("line, before, after, correct", [
    (23, "$k_1=", "$k_2=", "k_1"),   # k_2 now given two values
    (55, "$v_0=", "$v_1=", "v_0"),
    (119, "$p_2=", "$p_3=", "p_2"),  # the run p_0, p_1, p_3 skips a number
])
def test_a_renamed_vector_in_a_run_of_definitions_is_caught_at_its_line(line, before, after, correct):
    found = numbered_runs(_edited(HANDOUT11, line, before, after))
    assert [(b.line, b.correct) for b in found] == [(line, correct)], found


def test_a_name_restated_with_its_value_or_two_separate_names_are_no_broken_run():
    doc = parse("Take $x_1=2$, $x_1=2$ again, and $y_1=1$, $y_3=4$.\n", path="p.md", fmt="markdown")
    assert numbered_runs(doc) == []


WEEK06 = "004_daeab95066cb0286.txt"


@needs_seeds
@pytest.mark.parametrize("line, before, after, correct", [
    (152, "w_x^{[0]},w_x^{[1]}", "w_x^{[1]},w_x^{[1]}", "w_x^{[0]}"),  # the labels of w_x's three uses
    (152, "w_x^{[1]},w_x^{[2]}", "w_x^{[1]},w_x^{[3]}", "w_x^{[2]}"),
    (186, r"\(g_1^zh_0\)", r"\(g_2^zh_0\)", "g_1^zh_0"),  # the three contributions to ∂ℒ/∂w_h
    (186, r"\(g_2^zh_1\)", r"\(g_2^zh_2\)", "g_2^zh_1"),
])
def test_an_index_edited_in_an_enumeration_is_caught_at_its_line(line, before, after, correct):
    found = numbered_lists(_edited(WEEK06, line, before, after))
    assert [(b.line, b.correct) for b in found] == [(line, correct)], found
    assert "breaks the run of the enumeration" in found[0].reason


@pytest.mark.parametrize("text", [
    r"The odd states \(x_1\), \(x_3\) and \(x_5\) are kept.",  # a skip on purpose: no one item is off
    r"The rows \(h_{t,0},h_{t,1},h_{t,2}\) share the 0 of nothing.",
    r"Take \(h_0\), \(W_h\), and \(h_1\).",  # not one name
])
def test_an_enumeration_that_runs_or_skips_on_purpose_is_left_alone(text):
    assert numbered_lists(parse(text + "\n", path="p.md", fmt="markdown")) == []


def _derivation(name: str):
    return [d for d in bundled() if d.name == name]


@needs_seeds
@pytest.mark.parametrize("seed, derivation, line, before, after, gives", [
    (HANDOUT11, "handout11-self-attention", 51, "3D^2=192", "3D^3=192", "1536"),  # an exponent changed
    (WEEK8, "week08-decoder", 132, "e^{2w-1}", "e^{2w-2}", "0.792412"),
])
def test_a_false_statement_whose_result_a_claim_holds_fails_at_its_line(seed, derivation, line, before, after, gives):
    ds = _derivation(derivation)
    assert not audit_document(read(SEEDS / seed), ds).failed
    rep = audit_document(_edited(seed, line, before, after), ds)
    assert rep.failed
    wrong = [e for e in rep.errata if e.kind == "statement"]
    assert [e.line for e in wrong] == [line]
    assert f"its printed operands give {gives}" in wrong[0].fault


def test_a_one_number_bracket_as_a_divisor_groups():
    from symseq.verify.steps import decide

    assert [k.ok for k in decide("1/[1+e^{0}] = 0.5")] == [True]


@needs_seeds
def test_the_audit_shows_a_printed_decimal_near_its_rounding_boundary_at_each_line_that_prints_it():
    # p(B|AB) = 0.792411504249…: printed 0.792412, 0.42% of a unit from the boundary 0.7924115 (a note, no failure)
    rep = audit_document(read(SEEDS / WEEK8), _derivation("week08-decoder"))
    notes = rep.boundary_notes()
    assert not rep.failed
    assert [line for line, _, _ in notes] == [118, 132, 159, 180]
    assert all("0.7924115" in note for _, _, note in notes)
    assert rep.as_json()["boundary_notes"][0]["line"] == 118


@needs_seeds
def test_a_comparison_word_a_claim_quotes_is_caught_at_its_line_when_flipped_and_the_others_are_listed():
    seed = "003_b76f00753924d0c1.txt"
    ds = _derivation("week07-attention")
    rep = audit_document(read(SEEDS / seed), ds)
    checked = [c for c, by in rep.comparisons if by is not None]
    assert checked and len(rep.unchecked_comparisons) == len(rep.comparisons) - len(checked) > 0
    assert all(c.use == "statement" for c, _ in rep.comparisons)
    assert rep.as_json()["comparisons"][0]["word"] == rep.comparisons[0][0].word
    for c in checked:  # each flipped: the claim quoting it is missing, expected at the word's own line
        lines = (SEEDS / seed).read_text(encoding="utf-8").split("\n")
        lines[c.line - 1] = lines[c.line - 1][:c.start] + c.flipped + lines[c.line - 1][c.end:]
        got = audit_document(parse("\n".join(lines), path=seed, fmt="text"), ds)
        assert got.failed and (c.line, c.line) in [m.lines for m in got.missing], (c, got.missing)


def test_questions_and_quoted_words_are_no_comparisons_to_check():
    from symseq.audit.words import comparisons

    doc = parse('Is the loss larger? The word "smaller" is a label. The mean is larger than 2.\n', path="p.md",
                fmt="markdown")
    assert [(c.word, c.use) for c in comparisons(doc)] == [("larger", "question"), ("smaller", "quoted"),
                                                           ("larger", "statement")]


def _page(text: str):
    from symseq.audit.arithmetic import audit_arithmetic

    return audit_arithmetic(parse(text, path="page.md", fmt="markdown"))


def test_a_softmax_printed_under_its_labelled_scores_is_checked():
    import mpmath

    rep = _page("- Scaled scores: [1.25, 0, -0.625]\n- Softmax: [0.6011, 0.1711, 0.2278]\n")
    (st,) = rep.statements
    assert st.line == 2 and st.status == "wrong"
    mpmath.mp.dps = 30
    e = [mpmath.exp(x) for x in (mpmath.mpf("1.25"), 0, mpmath.mpf("-0.625"))]
    assert mpmath.nstr(e[0] / sum(e), 4) == "0.6945"
    assert _page("- Scaled scores: [1.25, 0, -0.625]\n- Softmax: [0.6945, 0.1990, 0.1065]\n").statements[0].ok
    # a list not labelled as scores is not taken as the softmax's input
    assert _page("- Values: [1.25, 0, -0.625]\n- Softmax: [0.6011, 0.1711, 0.2278]\n").statements == []


def test_a_chain_whose_head_cannot_be_evaluated_is_checked_from_its_next_part():
    # softmax of one number is no arithmetic; the chain after it is: 22026.4658 / 22027.4725 = 0.99995430…
    rep = _page(r"$$\text{softmax}(10) = \frac{22026.4658}{22027.4725} = 0.9999545$$" + "\n")
    (st,) = rep.statements
    assert st.status == "wrong" and "correct 0.9999543" in st.links[-1].message


def test_a_truncated_result_is_said_to_be_truncated():
    from symseq.verify.steps import decide

    (link,) = decide("e^{10}/(e^{10}+e^0+e^{-5}) = 0.9999")
    assert not link.ok and "correct 1.0000" in link.message and "truncated" in link.message
    (link,) = decide("1/3 = 0.34")
    assert not link.ok and "truncated" not in link.message


def test_a_statement_that_says_its_value_is_undefined_is_no_erratum():
    for text in ("The normalized value is (3.0 − 3.0)/√0 = 0 / 0 = undefined.\n",
                 "So (3.0 − 3.0)/√0 = 0 / 0 is NaN\n"):
        assert _page(text).cannot_hold == []
    assert [b.line for b in _page("Then 1 / 0 = 5 here.\n").cannot_hold] == [1]  # a number printed for it


def test_a_derivation_whose_source_is_a_relative_path_is_attached_to_that_page(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from symseq.audit import for_source

    (tmp_path / "pages").mkdir()
    (tmp_path / "derivations").mkdir()
    page = tmp_path / "pages" / "x.md"
    page.write_text("1 + 1 = 2\n", encoding="utf-8")
    other = tmp_path / "x.md"
    other.write_text("1 + 1 = 2\n", encoding="utf-8")
    mine = SimpleNamespace(source="pages/x.md", file=str(tmp_path / "derivations" / "mine.py"))
    beside = SimpleNamespace(source="../pages/x.md", file=str(tmp_path / "derivations" / "mine.py"))
    plain = SimpleNamespace(source="x.md", file=None)
    monkeypatch.chdir(tmp_path)
    assert for_source("pages/x.md", [mine, beside, plain]) == [mine, beside, plain]
    assert for_source(str(page), [mine, beside]) == [mine, beside]
    assert for_source("x.md", [mine, beside]) == []  # another file of the same name
    assert for_source(other, [plain]) == [plain]


def test_a_line_that_restarts_with_the_name_completes_the_statement_above_it():
    import mpmath

    (st,) = _page("z = 0.3(0.574) + 0.2(0.3) + 0.1\nz = 0.151\n").statements
    assert (st.first, st.line, st.status) == (1, 2, "wrong")
    assert mpmath.mpf("0.3") * mpmath.mpf("0.574") + mpmath.mpf("0.2") * mpmath.mpf("0.3") + mpmath.mpf("0.1") \
        == mpmath.mpf("0.3322")
    assert _page("z = 0.3(0.574) + 0.2(0.3) + 0.1\nz = 0.3322\n").statements[0].ok
    assert _page("z = 0.5\nz = 0.7\n").statements == []  # two values, no computation: nothing to check


@needs_seeds
def test_text_printed_twice_or_with_merge_conflict_markers_fails_at_its_line():
    from symseq.audit.arithmetic import audit_page, repeated_text

    lines = (SEEDS / HANDOUT11).read_text(encoding="utf-8").split("\n")
    assert repeated_text(read(SEEDS / HANDOUT11)) == []
    twice = parse("\n".join(lines + lines[20:40]), path=HANDOUT11, fmt="text")
    (b,) = repeated_text(twice)
    assert b.line == len(lines) + 1 and "print lines 21–" in b.reason
    merged = lines[:10] + ["<<<<<<< HEAD"] + lines[10:12] + ["======="] + lines[12:14] + [">>>>>>> fix"] + lines[14:]
    rep = audit_page(parse("\n".join(merged), path=HANDOUT11, fmt="text"))
    assert rep.failed and [e.line for e in rep.errata if "merge-conflict" in e.fault] == [11]
    assert repeated_text(parse("a\n=======\nb\n", path="p.md", fmt="markdown")) == []  # a rule of = signs


def _tanh_page(*printed: str):
    """A derivation of a page that prints tanh(0.5) = 0.4621 and the steps ``printed`` of tanh(0.5) − 0.5."""
    import sympy as sp

    from symseq import Derivation

    d = Derivation("tanh-page", title="tanh", source="tanh.md")

    @d.section("1. The difference")
    def diff(s):
        h = sp.tanh(sp.Rational(1, 2))
        s.claim("0.4621", h, what="tanh(0.5)")
        for k, step in enumerate(printed):
            s.step(step, result=h - sp.Rational(1, 2), what=f"the difference, as printed {k}")

    return d


def test_a_step_computed_from_more_digits_than_it_prints_holds_with_its_true_value(tmp_path):
    import mpmath

    from symseq.audit import audit_file

    # tanh(0.5) = 0.46211715…, printed 0.4621; tanh(0.5) − 0.5 = −0.03788284…, printed −0.03788: from the printed
    # 0.4621 the difference is −0.0379, within the rounding of 0.4621, and the printed result is the true value
    assert mpmath.nstr(mpmath.tanh(mpmath.mpf("0.5")) - mpmath.mpf("0.5"), 4) == "-0.03788"
    ok, bad = [c.check() for c in _tanh_page("0.4621 - 0.5 = -0.03788", "0.4621 - 0.5 = -0.03790").claims[1:]]
    assert ok.status == "ok" and "holds only from unrounded operands" in ok.message
    assert bad.status != "ok" and "not the true value" in bad.message
    path = tmp_path / "tanh.md"
    path.write_text("# 1. The difference\n\ntanh(0.5) = 0.4621, and 0.4621 - 0.5 = -0.03788.\n", encoding="utf-8")
    rep = audit_file(path, [_tanh_page("0.4621 - 0.5 = -0.03788")])
    assert not rep.failed and rep.errata == []


def test_a_display_line_that_starts_with_an_operator_is_not_a_statement_of_its_own():
    # the sum 0.2840[1 0] + 0.1400[1 1] + 0.5760[2 1] = [1.5760, 0.7160] over three lines of an aligned display:
    # its last line alone (+0.5760[2 1] ≈ [1.5760 0.7160]) is no statement
    page = ("$$\n\\begin{aligned}\no\n&=0.2840\\begin{bmatrix}1&0\\end{bmatrix}\n+0.1400\\begin{bmatrix}1&1\\end{bmatrix}\n"
            "+0.5760\\begin{bmatrix}2&1\\end{bmatrix}\\\\\n&\\approx\\begin{bmatrix}1.5760&0.7160\\end{bmatrix}.\n"
            "\\end{aligned}\n$$\n")
    assert _page(page).errata == []
    # a bullet is no operator
    assert [s.line for s in _page("- a\n+ 2 + 2 = 4\n").statements] == [2]


def test_a_named_value_followed_by_a_remark_in_brackets_is_a_rounded_result():
    import mpmath

    # P = 0.4315 (rounded), then −ln(0.4315) = 0.8404: within the rounding of 0.4315 (the page computed from more
    # digits), so no erratum
    rep = _page('P("shoe")_new = 0.4315   (up from 0.2012)\nLoss_new = -ln(0.4315) = 0.8404   (down)\n')
    assert rep.errata == [] and [s.status for s in rep.statements] == ["drift"]
    lo, hi = (-mpmath.log(mpmath.mpf(v)) for v in ("0.43155", "0.43145"))
    assert lo < mpmath.mpf("0.84045") and hi > mpmath.mpf("0.84035")
    assert mpmath.nstr(-mpmath.log(mpmath.mpf("0.4315")), 4) == "0.8405"


def test_a_list_printed_over_lines_and_labelled_as_its_layer_norm_is_checked():
    import mpmath

    x = ["1.0", "2.0", "3.0", "6.0"]
    mpmath.mp.dps = 30
    xs = [mpmath.mpf(v) for v in x]
    mu = sum(xs) / 4
    sd = mpmath.sqrt(sum((v - mu) ** 2 for v in xs) / 4 + mpmath.mpf("1e-5"))
    right = [round(float((v - mu) / sd), 4) for v in xs]
    assert right == [-1.069, -0.5345, 0.0, 1.6036]
    page = ("Before:\n```python\nresidual = [ 1.0, 2.0,\n              3.0, 6.0]\n```\n\n**After (layer norm):**\n"
            "```python\nout = [ -1.0690, -0.5345,\n         0.0000, 1.6036]\n```\n")
    assert [s.status for s in _page(page).statements] == ["ok"]
    wrong = page.replace("1.6036", "1.6063")
    rep = _page(wrong)
    assert [s.status for s in rep.statements] == ["wrong"] and rep.statements[0].line in (9, 10)  # the list's lines
    # two normalised lists in a row: the second is no layer norm of the first
    assert _page(page.replace("Before:", "Normalized:")).statements == []


@needs_seeds
@pytest.mark.parametrize("before, after", [("[0.1,0.4]", "[0.4,0.1]"), ("[0.8,0.4]", "[0.8,1.4]")])
def test_a_value_printed_with_one_slip_where_its_claim_is_expected_is_named_wrong_at_its_line(before, after):
    seed = "003_b76f00753924d0c1.txt"
    ds = _derivation("week07-attention")
    rep = audit_document(_edited(seed, 23, before, after), ds)
    assert rep.failed and rep.missing == []
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(23, after, before)]


@needs_seeds
def test_a_claim_whose_value_is_printed_right_but_not_placed_is_no_erratum(tmp_path):
    # Week 8 with its headings blanked: claims that cannot be placed stay missing, none is turned into an erratum
    # at a token that prints the claim's own value
    heads = {h.line for h in read(SEEDS / WEEK8).headings}
    lines = (SEEDS / WEEK8).read_text(encoding="utf-8").splitlines()
    lines = ["Part" if i in heads else ln for i, ln in enumerate(lines, start=1)]
    rep = audit_document(parse("\n".join(lines), path=WEEK8, fmt="text"), _derivation("week08-decoder"))
    assert all(e.printed != e.correct for e in rep.errata)


_PE_PAGE = """The encoding:

$$P_{pos,2i} = \\sin\\Big(\\frac{pos}{10000^{2i/d}}\\Big), \\quad P_{pos,2i+1} = \\cos\\Big(\\frac{pos}{10000^{2i/d}}\\Big)$$

Take $d = 4$.

| Position | PE vector |
| -------- | --------- |
| 0        | \\[0.0, 1.0, 0.0, 1.0] |
| 1        | \\[ROW1] |

PE(2) = [ROW2]
"""


def _pe_page(row1: str, row2: str) -> str:
    return _PE_PAGE.replace("ROW1", row1).replace("ROW2", row2)


def test_rows_of_a_stated_sinusoidal_positional_encoding_are_checked_entry_by_entry():
    import mpmath

    mpmath.mp.dps = 30

    def pe(pos, j, d=4):  # Vaswani et al. 2017, §3.5, computed here on its own
        angle = mpmath.mpf(pos) / mpmath.power(10000, mpmath.mpf(2 * (j // 2)) / d)
        return mpmath.cos(angle) if j % 2 else mpmath.sin(angle)

    right1 = ", ".join(mpmath.nstr(pe(1, j), 3, strip_zeros=False) for j in range(4))
    right2 = ", ".join(mpmath.nstr(pe(2, j), 3, strip_zeros=False) for j in range(4))
    assert right1 == "0.841, 0.540, 0.0100, 1.00" and right2 == "0.909, -0.416, 0.0200, 1.00"
    rep = _page(_pe_page(right1, right2))
    assert [(s.line, s.status) for s in rep.statements] == [(9, "ok"), (10, "ok"), (12, "ok")]
    # the row of position 1 with sin(1) repeated in dimension 2 (the slip of a stranger's page), and cos(2) unsigned
    rep = _page(_pe_page("0.841, 0.540, 0.841, 1.00", "0.909, 0.416, 0.0200, 1.00"))
    assert [(s.line, s.status) for s in rep.statements] == [(9, "ok"), (10, "wrong"), (12, "wrong")]
    # a page that does not state the cosine at the odd indices (another layout) is not read as this encoding
    other = _pe_page(right1, right2).replace("P_{pos,2i+1}", "P_{pos,i+d/2}")
    assert _page(other).statements == []


def test_a_softmax_labelled_list_is_checked_against_scores_a_few_lines_above_it():
    import mpmath

    page = ("Scaled scores: $\\frac{[10, 0, -5]}{2} = [5, 0, -2.5]$\n\n- $e^5 = 148.41$\n- $e^0 = 1.00$\n"
            "- $e^{-2.5} = 0.082$\n\nSum = 149.492\n\nSoftmax output: [0.9929, 0.0067, 0.0005]\n")
    mpmath.mp.dps = 30
    e = [mpmath.exp(x) for x in (5, 0, mpmath.mpf("-2.5"))]
    assert mpmath.nstr(e[0] / sum(e), 4) == "0.9928"  # the page's 0.9929 is wrong
    line = page.split("\n").index("Softmax output: [0.9929, 0.0067, 0.0005]") + 1
    assert [s.status for s in _page(page).statements if s.line == line] == ["wrong"]
    assert [s.status for s in _page(page.replace("0.9929", "0.9928")).statements if s.line == line] == ["ok"]


_CODE_PAGE = """Weights times values:

```python
import torch

attn_weights = torch.tensor([[0.5, 0.3, 0.2],
                             [0.1, 0.7, 0.2]])
V = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
output = attn_weights @ V
print(output)
# tensor([[ROW0],
#         [3.2000, 4.2000]])
print(torch.softmax(torch.tensor([1.0, 2.0]), dim=-1))
# tensor([SOFT])
```
"""


def test_what_a_code_block_prints_under_print_is_checked_against_its_literals():
    import mpmath

    mpmath.mp.dps = 30
    row0 = [0.5 * 1.0 + 0.3 * 3.0 + 0.2 * 5.0, 0.5 * 2.0 + 0.3 * 4.0 + 0.2 * 6.0]
    assert [mpmath.nstr(mpmath.mpf(x), 2) for x in row0] == ["2.4", "3.4"]
    soft = mpmath.exp(1) / (mpmath.exp(1) + mpmath.exp(2))
    assert mpmath.nstr(soft, 4) == "0.2689"
    page = _CODE_PAGE.replace("ROW0", "2.4000, 3.4000").replace("SOFT", "0.2689, 0.7311")
    rep = _page(page)
    assert [(s.line, s.status) for s in rep.statements] == [(11, "ok"), (14, "ok")]
    assert rep.statements[0].text.startswith("output = attn_weights @ V")
    # the printed product of a stranger's page (2.2 for 2.4), and a softmax printed in the wrong order
    page = _CODE_PAGE.replace("ROW0", "2.2000, 3.2000").replace("SOFT", "0.7311, 0.2689")
    assert [(s.line, s.status) for s in _page(page).statements] == [(11, "wrong"), (14, "wrong")]
    # a name bound inside a loop is not known after it: its print is not read
    loop = page.replace("output = attn_weights @ V", "for _ in range(2):\n    output = attn_weights @ V")
    assert [s.line for s in _page(loop).statements] == [15]
    # a method that may change an array in place (V.add_(1)) before the print: the print is not read
    inplace = page.replace("output = attn_weights @ V\n", "output = attn_weights @ V\noutput.add_(1)\n")
    assert [s.line for s in _page(inplace).statements] == [15]


@needs_seeds
@pytest.mark.parametrize("line, old, new, fits", [
    # W_o in Table 5, against ŷ = h_{T−1} W_oᵀ + b_o in an aligned display
    (274, "C\\times H", "H\\times C", "C×H"),
    (273, "H\\times D", "D\\times H", None),  # W_x, against z_t = x_t W_xᵀ + h_{t−1} W_hᵀ + b_h
    (271, "1\\times D", "D\\times 1", None),  # a row x_t written as a column
    (275, "1\\times C", "C\\times 1", "1×C"),  # b_o
])
def test_a_transposed_shape_of_table_5_breaks_the_aligned_formulas(line, old, new, fits):
    """Seed 004's Table 5 declares the shapes of the vector RNN; its formulas sit in an aligned display and name
    h_{t−1} and h_{T−1}, which take the shape declared for h_t."""
    doc = read(SEEDS / "004_daeab95066cb0286.txt")
    assert misfits(doc) == []
    lines = list(doc.lines)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    from symseq.read.document import relayout

    found = misfits(relayout(doc, lines))
    assert [b.line for b in found] == [line], found
    assert fits is None or found[0].correct == fits
