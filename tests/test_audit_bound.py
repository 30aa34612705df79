"""The page's formulas bound to the derivation's ledger rows by the page's own names (symseq.audit.bound).

Seed 004 (Week 06) prints the scalar RNN's forward and backward rows as formulas (Table 3, the substituted
sensitivities, the boxed gradients, the recurrence over t). Its derivation's ledger has the same names, so an
index, a time step or a factor edited in one of those formulas is a false statement at its line, though no claim
quotes the formula.
"""

import pytest
import sympy as sp

from symseq.audit import audit_document, read, relayout
from symseq.audit.bound import check, name_key
from symseq.authoring import bundled
from test_audit import SEEDS, needs_seeds

SEED = "004_daeab95066cb0286.txt"

# (line, text, edited text): each makes a formula of the seed false for the derivation's ledger
EDITS = [
    (127, "w_hh_0", "w_hh_1"),  # Table 3: z_1 = w_x x_1 + w_h h_1
    (130, "g_2^z=g_2^h", "g_3^z=g_2^h"),  # a step the three-step model does not have
    (164, "h_{-1}+", "h_{-2}+"),  # the boxed ∂ℒ/∂w_h
    (144, "w_h\\,\\phi'(z_0)", "w_h\\,\\phi'(z_1)"),  # the substituted g_0^z
    (166, "(\\widehat y-y)h_2", "(\\widehat y-y)h_1"),  # ∂ℒ/∂w_o
    (172, "\\phi'(z_2)h_1", "\\phi'(z_3)h_1"),  # the expanded ∂ℒ/∂w_h
    (71, "h_{t-1}", "h_{t-2}"),  # z_t = w_x x_t + w_h h_{t−2}: a two-step recurrence
    (131, "w_oh_2", "w_o^2h_2"),  # an exponent: ŷ = w_o² h_2
]


# the two-coordinate and general vector sections: entries (W_{x,01}, h_{t-1,1}), whole rows (\mathbf g_t^z),
# transposes, ⊙ and sums over t; (line, text, edited text, words of the reason)
VECTOR_EDITS = [
    (248, "x_{t,0},x_{t,1})", "x_{t,1},x_{t,1})", "two-coordinate RNN"),  # a vector written as its entries
    (248, "h_{t,0},h_{t,1})", "h_{t,0},h_{t,2})", "an entry that h_0 (1×2) does not have"),
    (256, "{bmatrix}W_{x,00}&W_{x,01}", "{bmatrix}W_{x,01}&W_{x,01}", "two-coordinate RNN"),  # a matrix of entries
    (256, "W_{h,10}&W_{h,11}", "W_{h,10}&W_{h,12}", "an entry that W_h (2×2) does not have"),
    (252, "W_{x,01}x_{t,1}", "W_{x,02}x_{t,1}", "an entry that W_x (2×2) does not have"),
    (252, "h_{t,0}&=\\phi(z_{t,0})", "h_{t,0}&=\\phi(z_{t,1})", "two-coordinate RNN"),
    (260, "W_{o,01}h_{T-1,1}", "W_{o,01}h_{T-2,1}", "two-coordinate RNN"),
    (290, "\\mathbf g_t^z\\mathbf W_h,", "\\mathbf g_t^z\\mathbf W_h^\\top,", "vector RNN"),
    (290, "\\odot\\phi'(\\mathbf z_t)", "\\odot\\phi(\\mathbf z_t)", "vector RNN"),
    (304, "=\\sum_{t=0}^{T-1}\\mathbf g_t^z", "=\\sum_{t=1}^{T-1}\\mathbf g_t^z", "vector RNN"),
    (304, "=\\mathbf e^\\top\\mathbf h_{T-1}", "=\\mathbf e^\\top\\mathbf h_{T-2}", "vector RNN"),
    (282, "+\\mathbf h_{t-1}\\mathbf W_h^\\top", "+\\mathbf h_{t-2}\\mathbf W_h^\\top", "D = 5, H = 3"),  # Table 5's
    (282, "=\\phi(\\mathbf z_t)", "=\\phi(\\mathbf z_{t-1})", "D = 5, H = 3"),
    (282, "=\\mathbf h_{T-1}\\mathbf W_o^\\top", "=\\mathbf h_{T-2}\\mathbf W_o^\\top", "D = 5, H = 3"),  # ŷ, bold in a hat
]

# the encoder's walkthrough of the begins row (Tables 13–23): the page writes q_6, S_{60}, \mathbf o_6^{[1]},
# \mathbf b_{\mathrm{att},6} and u_{6,0} for rows the ledgers name Q^{[1]}, S^{[1]}, O^{[1]}, B_att^{(0)}, U^{(0)}
ENCODER_EDITS = [
    (675, "+q_{6,1}k_{0,1}+", "+q_{6,1}k_{1,1}+", "q_{6,0}k_{0,0}"),  # the dot product q_6 k_0ᵀ, entry by entry
    (675, "=q_{6,0}k_{0,0}", "=q_{7,0}k_{0,0}", "q_7,0 names an entry that Q^{[1]} (7×3) does not have"),
    (681, "S_{6j}=\\frac{\\mathbf q_6", "S_{6j}=\\frac{\\mathbf q_5", "S_{6j}"),  # over every source j
    (681, "S_{60}\\approx", "S_{61}\\approx", "S_{61} is 0.148"),  # a printed value of another entry
    (848, "\\mathbf o_6^{[1]}\\approx", "\\mathbf o_6^{[2]}\\approx", "o_6^{[2]} is (0.1959"),  # of head 2
    (1009, "+\\mathbf b_{\\mathrm{att},6}", "+\\mathbf b_{\\mathrm{att},5}", "b_{\\mathrm{att},5}"),
    (1055, "+B_{\\mathrm{mlp},6,0}", "+B_{\\mathrm{mlp},6,1}", "B_{\\mathrm{mlp},6,1}"),
    (1055, "h_{6,0}^{(1)}=", "h_{6,0}^{(2)}=", "a number the ledger does not have (it has H^(0), H^{(1)})"),
]


@pytest.fixture(scope="module")
def week06():
    doc = read(SEEDS / SEED)
    ds = [d for d in bundled() if d.name in ("week06-rnn", "week06-encoder")]
    return doc, ds, audit_document(doc, ds)


def _edited(doc, line, old, new):
    lines = list(doc.lines)
    assert old in lines[line - 1], (line, old)
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return relayout(doc, lines)


@needs_seeds
def test_the_clean_seed_has_no_false_formula(week06):
    doc, ds, clean = week06
    assert check(doc, ds, clean.sections) == []
    assert not clean.failed


@needs_seeds
def test_the_report_lists_the_formulas_it_checked(week06):
    """Seed 004's formulas a ledger decided are listed (their lines, the equation, whether it holds): all hold on the
    clean page, the recurrence among them, and the JSON carries them (``formulas``)."""
    doc, ds, clean = week06
    assert clean.formulas and all(holds for _, _, holds in clean.formulas)
    assert (71, "z_t = w_xx_t+w_hh_{t-1}", True) in clean.formulas
    assert {"line": 71, "formula": "z_t = w_xx_t+w_hh_{t-1}", "holds": True} in clean.as_json()["formulas"]
    edited = audit_document(_edited(doc, 71, "h_{t-1}", "h_{t-2}"), ds)
    assert [(line, holds) for line, _, holds in edited.formulas if line == 71] == [(71, False)]


@needs_seeds
@pytest.mark.parametrize("line, old, new", EDITS, ids=[f"line{e[0]}" for e in EDITS])
def test_an_edited_formula_is_false_at_its_line(week06, line, old, new):
    doc, ds, clean = week06
    found = check(_edited(doc, line, old, new), ds, clean.sections)
    assert [b.line for b in found] == [line], found
    assert "three-step scalar RNN" in found[0].reason


@needs_seeds
def test_the_audit_fails_naming_the_formula_and_the_ledger_row(week06):
    doc, ds, _ = week06
    rep = audit_document(_edited(doc, 127, "w_hh_0", "w_hh_1"), ds)
    assert rep.failed
    (e,) = [e for e in rep.errata if e.line == 127]
    assert e.kind == "statement" and e.source == "the derivation's ledger, line 127"
    assert e.correct == "z_1 = h_0·w_h + w_x·x_1" and "w_xx_1+w_hh_1 ≠ z_1" in e.fault


@needs_seeds
@pytest.mark.parametrize("line, old, new, why", VECTOR_EDITS,
                         ids=[f"line{e[0]}-{k}" for k, e in enumerate(VECTOR_EDITS)])
def test_an_edited_vector_formula_is_false_at_its_line(week06, line, old, new, why):
    doc, ds, clean = week06
    found = check(_edited(doc, line, old, new), ds, clean.sections)
    assert [b.line for b in found] == [line], found
    assert why in found[0].reason


@needs_seeds
@pytest.mark.parametrize("seed, derivation, line, old, new, correct", [
    ("000_30e9e4099f2cd2dc.txt", "week08-decoder", 106, "V=I_2", "V=I_3", "I_2"),
    ("001_d42a515eb3cd140c.txt", "handout11-self-attention", 121, "W_V=I_2", "W_V=I_3", "I_2"),
])
def test_an_identity_of_the_wrong_size_is_false(seed, derivation, line, old, new, correct):
    """``W_V=I_3`` for the ledger's 2×2 ``W_V``: the identity's size is the matrix's."""
    doc = read(SEEDS / seed)
    ds = [d for d in bundled() if d.name == derivation]
    clean = audit_document(doc, ds)
    assert check(doc, ds, clean.sections) == []
    found = check(_edited(doc, line, old, new), ds, clean.sections)
    assert [(b.line, b.correct) for b in found] == [(line, correct)]
    assert "I_3 is 3×3" in found[0].reason


@pytest.mark.parametrize("text, env, key", [
    ("h_{t-1,0}", {"t": 2}, "h_1,0"),
    ("W_{x,01}", {}, "W_x,01"),
    ("g_{t,1}^z", {"t": 0}, "g_0,1^z"),
    ("\\mathbf h_{t-1}", {"t": 2}, "h_1"),
    ("h_{t-1}", {"t": 0}, "h_-1"),
    ("\\widehat y", {}, "ŷ"),
    ("\\hat{y}", {}, "ŷ"),
    ("\\mathcal L", {}, "ℒ"),
    ("g_0^z", {}, "g_0^z"),
    ("W_{hn}", {}, "W_hn"),
    ("x_t", {}, "x_t"),
])
def test_the_key_of_a_page_name(text, env, key):
    assert name_key(text, env) == key


def test_a_wrong_formula_on_a_small_page_of_ones_own():
    """A derivation of one's own: a page whose second formula names the wrong step."""
    from symseq.derive import bptt

    page = ["# The cell", "", "\\(z_1=w_xx_1+w_hh_0\\) and \\(h_1=\\phi(z_1)\\).", "",
            "\\(z_2=w_xx_2+w_hh_0\\)", ""]
    found = _checked_on(page, lambda: bptt.scalar_rnn("three-step scalar RNN")[0])
    assert [(b.line, b.correct) for b in found] == [(5, "z_2 = h_1·w_h + w_x·x_2")]


def test_a_wrong_vector_formula_on_a_small_page_of_ones_own():
    """A vector RNN of one's own (D = H = 2): a coordinate formula with a swapped index, a recursion with a
    transpose too many, a gradient summed from the wrong step, and an entry the 2×2 W_h does not have."""
    page = ["# The cell", "",
            "\\(z_{t,0}=W_{x,00}x_{t,0}+W_{x,01}x_{t,1}+W_{h,00}h_{t-1,0}+W_{h,01}h_{t-1,1}\\)", "",
            "\\(z_{t,1}=W_{x,10}x_{t,0}+W_{x,11}x_{t,1}+W_{h,01}h_{t-1,0}+W_{h,11}h_{t-1,1}\\)", "",
            "\\(\\mathbf g_{t-1}^h=\\mathbf g_t^z\\mathbf W_h\\) and "
            "\\(\\mathbf g_t^z=\\mathbf g_t^h\\odot\\phi'(\\mathbf z_t)\\)",
            "", "\\(\\mathbf g_{t-1}^h=\\mathbf g_t^z\\mathbf W_h^\\top\\)", "",
            "\\(\\nabla_{\\mathbf W_x}\\mathcal L=\\sum_{t=0}^{T-1}(\\mathbf g_t^z)^\\top\\mathbf x_t\\)", "",
            "\\(\\nabla_{\\mathbf W_x}\\mathcal L=\\sum_{t=1}^{T-1}(\\mathbf g_t^z)^\\top\\mathbf x_t\\)", "",
            "\\(g_{t-1,0}^h=g_{t,0}^z W_{h,00}+g_{t,1}^z W_{h,20}\\)", ""]
    found = _checked_on(page)
    assert [b.line for b in found] == [5, 9, 13, 15]
    assert "an entry that W_h (2×2) does not have" in found[-1].reason


def test_a_display_over_several_lines_is_read_whole_and_named_by_its_line():
    """A ``\\[ … \\]`` display whose equations run over three lines: one continued across a line break (its first
    line alone, ``z_{t,0}=W_{x,00}x_{t,0}``, would be false) holds; a sum from the wrong step on the display's
    third line is false at that line."""
    page = ["# The cell", "",
            "\\[ z_{t,0}=W_{x,00}x_{t,0}",
            "   +W_{x,01}x_{t,1}+W_{h,00}h_{t-1,0}+W_{h,01}h_{t-1,1}, \\qquad",
            "   \\nabla_{\\mathbf W_x}\\mathcal L=\\sum_{t=1}^{T-1}(\\mathbf g_t^z)^\\top\\mathbf x_t . \\]", ""]
    found = _checked_on(page)
    assert [b.line for b in found] == [5]
    assert "\\sum_{t=1}^{T-1}" in found[0].reason


def _head_ledger():
    """One causal head of one's own over T = 3 positions, d = d_k = 2, its rows named as a page names them (X, W_Q,
    Q, K, S …), and no row for d_k: its value comes from the page's declared shapes."""
    from symseq import Ledger, blocks

    L = Ledger("one causal head, T = 3, d = d_k = 2")
    X = L.input("X", [[1, 0], [0, 1], [1, 1]])
    W = [L.parameter(f"W_{n}", w) for n, w in zip("QKV", ([[1, 2], [3, 5]], [[2, 1], [1, 3]], [[1, 1], [0, 2]]))]
    blocks.attention_head(L, X, *W, orientation="in_out", mask="causal")
    return L


@pytest.mark.parametrize("scale, holds", [(r"\sqrt{d_k}", True), ("d_k", False), (r"\sqrt{d}", True),
                                          (r"\sqrt{T}", False), (r"\sqrt 2", True)])
def test_a_size_written_with_a_symbol_binds_through_the_declared_shapes(scale, holds):
    """``d_k`` and ``T`` are no rows: the page's ``\\mathbf Q\\in\\mathbb R^{T\\times d_k}`` binds them to the
    ledger's Q (3×2), so the scores' scale reads as √2 and a scale of d_k or √T makes the formula false."""
    page = ["# The cell", "", "With \\(\\mathbf X\\in\\mathbb R^{T\\times d}\\) and "
            "\\(\\mathbf Q,\\mathbf K\\in\\mathbb R^{T\\times d_k}\\),", "",
            f"\\(\\mathbf S=\\frac{{\\mathbf Q\\mathbf K^\\top}}{{{scale}}}\\)", ""]
    checked: list = []
    found = _checked_on(page, _head_ledger, checked)
    assert [b.line for b in found] == ([] if holds else [5])
    assert [(line, ok) for line, _, ok in checked] == [(5, holds)]
    if not holds:
        assert "\\mathbf S" in found[0].reason


@pytest.mark.parametrize("formula, holds", [
    (r"S_{ts}=\frac{1}{\sqrt{d_k}}\sum_{i=0}^{d_k-1}q_{t,i}k_{s,i}", True),
    (r"S_{ts}=\frac{1}{\sqrt{d_k}}\sum_{i=0}^{d_k-1}q_{t,i}k_{t,i}", False),  # the key of position t, not s
    (r"S_{ts}=\frac{\mathbf q_t\mathbf k_s^\top}{\sqrt{d_k}}", True),
    (r"S_{ts}=\frac{\mathbf q_s\mathbf k_t^\top}{\sqrt{d_k}}", False),
    (r"\mathbf o_t=\sum_{s=0}^{2}A_{ts}\mathbf v_s", True),
    (r"\mathbf o_t=\sum_{s=0}^{2}A_{st}\mathbf v_s", False),
])
def test_entry_formulas_over_two_positions_bind_rows_named_by_lowercase_letters(formula, holds):
    """``S_{ts}`` over both positions t and s, ``q_t`` the row t of ``Q`` and ``q_{t,i}`` its entry, and a sum whose
    bound is a size (``d_k-1``) the page declares: the score formulas of an attention page, checked entry by entry."""
    page = ["# The cell", "", "With \\(\\mathbf Q,\\mathbf K\\in\\mathbb R^{T\\times d_k}\\),", "",
            f"\\({formula}\\)", ""]
    checked: list = []
    found = _checked_on(page, _head_ledger, checked)
    assert [b.line for b in found] == ([] if holds else [5])
    assert [(line, ok) for line, _, ok in checked] == [(5, holds)]


def _mixture_ledger():
    """A GRU's mixture of one's own: h = (1 − z) ⊙ n + z ⊙ p over 1×2 rows (p the previous state)."""
    from symseq import Ledger

    L = Ledger("a GRU mixture, H = 2")
    z, n, p = (L.input(k, shape=(1, 2)) for k in "znp")
    L.define("h", (1 - z) * n + z * p)
    return L


@pytest.mark.parametrize("formula, holds", [
    (r"\mathbf h=(1-\mathbf z)\odot\mathbf n+\mathbf z\odot\mathbf p", True),
    (r"\mathbf h=\mathbf n+\mathbf z\odot(\mathbf p-\mathbf n)", True),
    (r"\mathbf h=(1-\mathbf z)\odot\mathbf p+\mathbf z\odot\mathbf n", False),  # the gates swapped
])
def test_a_number_added_to_a_vector_is_added_to_each_entry(formula, holds):
    page = ["# The cell", "", f"\\({formula}\\)", ""]
    checked: list = []
    found = _checked_on(page, _mixture_ledger, checked)
    assert [b.line for b in found] == ([] if holds else [3])
    assert [(line, ok) for line, _, ok in checked] == [(3, holds)]


@needs_seeds
@pytest.mark.parametrize("line, old, new, why", ENCODER_EDITS, ids=[f"line{e[0]}-{e[2][:14]}" for e in ENCODER_EDITS])
def test_an_edited_index_of_the_encoder_walkthrough_is_false_at_its_line(week06, line, old, new, why):
    """The sections of the begins walkthrough name the page's rows (``s.use(L, names={"Q": "Q^{[1]}", …})``), so
    an index edited in a formula, or in the name a printed value stands beside, is false at its line."""
    doc, ds, clean = week06
    here = [sec for sec in clean.sections if sec[2] and sec[2][0] <= line <= sec[2][1]]  # (the line's section)
    found = check(_edited(doc, line, old, new), ds, here)
    assert [b.line for b in found] == [line], found
    assert why in found[0].reason


@needs_seeds
@pytest.mark.parametrize("seed, derivation, line, old, new, correct", [
    (SEED, "week06-encoder", 497, "R^{K\\times D}", "R^{D\\times K}", "K×D"),  # E_vocab, K = 9 and D = 5
    (SEED, "week06-encoder", 1205, "R^{C\\times D}", "R^{D\\times C}", "C×D"),  # the classification head's W_o
    (SEED, "week06-rnn", 273, "\\(H\\times D\\)", "\\(D\\times H\\)", "H×D"),  # Table 5's W_x
    ("001_d42a515eb3cd140c.txt", "handout11-self-attention", 9, "R^{T\\times D}", "R^{D\\times T}", "T×D"),
])
def test_a_declared_shape_is_checked_against_its_row_with_the_sections_sizes(seed, derivation, line, old, new,
                                                                               correct):
    """``s.use(L, sizes={"K": 9, "D": 5})``: the page's ``E_{\\mathrm{vocab}}\\in\\mathbb R^{K\\times D}`` is
    read as 9×5 and compared with the ledger's row, so a transposed shape is false at its line."""
    doc = read(SEEDS / seed)
    ds = [d for d in bundled() if d.name == derivation]
    sections = audit_document(doc, ds).sections
    here = [sec for sec in sections if sec[2] and sec[2][0] <= line <= sec[2][1]]
    checked: list = []
    assert check(doc, ds, here, checked=checked) == []
    assert (line, True) in [(ln, ok) for ln, f, ok in checked if "∈" in f]
    found = check(_edited(doc, line, old, new), ds, here)
    assert [(b.line, b.correct) for b in found] == [(line, correct)], found
    assert "the declared shape does not hold" in found[0].reason


def _valued_ledger():
    """Two rows of one's own with values, H (2×2) and its row sums s, and a symbol w: the page names H ``Z``."""
    from symseq import Ledger

    L = Ledger("rows with values, H = [[1/4, 1/2], [3, -1]]")
    H = L.input("H", [[sp.Rational(1, 4), sp.Rational(1, 2)], [3, -1]])
    L.define("m", H * L.parameter("w"))
    return L


@pytest.mark.parametrize("printed, holds", [
    (r"\(z_{1,0}\approx3.0\)", True),
    (r"\(z_{0,1}=0.5\)", True),
    (r"\(z_{1,1}\approx-1\)", True),
    (r"\(z_{0,1}\approx0.25\)", False),  # the value of another entry
    (r"\(\mathbf z_1\approx(3,\;-1)\)", True),  # a row of numbers
    (r"\(\mathbf z_0\approx(3,\;-1)\)", False),
    (r"\(z_{0,0}+z_{1,0}=\frac{13}{4}\approx3.25\)", True),  # what lies between is the page's arithmetic
    (r"\(z_{0,0}+z_{1,0}=\frac{13}{4}\approx3.75\)", False),
    (r"\(\mathbf Z=\begin{bmatrix}0.25&0.5\\3&-1\end{bmatrix}\)", True),  # a printed matrix
    (r"\(\mathbf Z=\begin{bmatrix}0.25&0.5\\3&1\end{bmatrix}\)", False),  # … one entry's sign
    (r"\(\mathbf Z=\begin{bmatrix}0.25&0.5&3&-1\end{bmatrix}\)", False),  # … of another shape
    (r"\(\mathbf z_2\approx(3,\;-1)\)", False),  # a row the 2×2 matrix does not have
])
def test_a_printed_value_of_a_row_the_section_names_is_decided_as_a_claim(printed, holds):
    """``use(L, names={"Z": "H"})``: the page's ``z_{1,0}`` is entry (1, 0) of the ledger's ``H`` and ``\\mathbf
    z_1`` its row 1; a printed value at the end of a chain from them is decided by the claims' rounding."""
    checked: list = []
    found = _checked_on(["# The cell", "", printed, ""], _valued_ledger, checked, names={"Z": "H"})
    assert [b.line for b in found] == ([] if holds else [3])
    assert [(line, ok) for line, _, ok in checked][-1] == (3, holds)  # (after the equation z_{0,0}+z_{1,0}=13/4)
    assert all(ok for _, _, ok in checked[:-1])
    if not holds:
        assert "the printed value does not hold" in found[0].reason


def test_a_row_with_a_symbol_in_it_has_no_printed_value_to_check():
    """``m = H w`` reads the parameter w, which has no value: ``m_{0,0}\\approx 7`` is left alone."""
    checked: list = []
    assert _checked_on(["# The cell", "", r"\(m_{0,0}\approx7\)", ""], _valued_ledger, checked) == []
    assert checked == []


def test_use_names_a_row_the_ledger_does_not_have():
    from symseq import Derivation
    from symseq.errors import ClaimError

    d = Derivation("tiny-names", title="tiny", source="tiny.md")

    @d.section("The cell")
    def cell(s):
        s.use(_valued_ledger(), names={"Z": "G"})

    assert "no row 'G'" in d.sections[0].error and "name one of its rows (H, w, m)" in d.sections[0].error


def _checked_on(page: list[str], ledger=None, checked: list | None = None, names: dict | None = None,
                sizes: dict | None = None) -> list:
    """The false equations of ``page`` (its lines; one section, "The cell") on the ledger ``ledger()`` makes,
    by default the vector RNN of :func:`symseq.derive.bptt.vector_rnn` with D = H = 2 and T = 3."""
    from symseq import Derivation
    from symseq.derive import bptt
    from symseq.read.document import parse

    d = Derivation("tiny-vector", title="tiny", source="tiny.md")

    @d.section("The cell")
    def cell(s):
        s.use(ledger() if ledger else bptt.vector_rnn("vector RNN, D = H = 2")[0], names=names, sizes=sizes)
        s.claim(sp.Integer(2), 2, what="width", in_text=False)

    return check(parse("\n".join(page), path="tiny.md"), [d], [("tiny-vector", "The cell", (1, len(page)))],
                 checked=checked)


@needs_seeds
def test_audit_all_prints_the_formulas_it_checked_at_80_columns(week06):
    """``symseq audit --all``: a table of the formulas a ledger decided, each with whether it holds."""
    import io

    from rich.console import Console

    from symseq.present.audit import render

    _, _, clean = week06
    buf = io.StringIO()
    render(clean, Console(file=buf, width=80, no_color=True), "all")
    text = buf.getvalue()
    assert f"formulas checked on the derivation's ledgers ({len(clean.formulas)})" in text
    rows = [ln for ln in text.splitlines() if ln.rstrip().endswith((" yes", " no"))]
    assert "71    z_t = w_xx_t+w_hh_{t-1}" in text and len(rows) >= len(clean.formulas)
    assert max(len(ln) for ln in rows) <= 80


@needs_seeds
@pytest.mark.parametrize("line, old, new", [
    (224, "both positive and negative", "both negative and negative"),  # tanh takes both signs
    (312, "and the same shared head", "and the different shared head"),  # ŷ_t reads the one W_o, b_o
    (1177, "a different input representation", "a same input representation"),  # the word a at positions 0 and 3
])
def test_a_flipped_word_of_week06_that_a_claim_proves_fails_at_its_line(week06, line, old, new):
    """Sentences of Week 06 that its derivation proves on its ledgers and quotes with ``near=``: the clean page
    holds them, and the word flipped is a claim missing at that line."""
    doc, ds, clean = week06
    assert not clean.missing
    rep = audit_document(_edited(doc, line, old, new), ds)
    assert [m.lines for m in rep.missing] == [(line, line)], [(m.printed, m.lines) for m in rep.missing]


@pytest.mark.parametrize("shape, holds", [(r"2d\times d", True), (r"d\times 2d", False), (r"hd_v\times d", True)])
def test_a_declared_size_written_as_a_product_is_read_with_the_sections_sizes(shape, holds):
    """``W\\in\\mathbb R^{2d\\times d}`` for a 4×2 W with d = 2 (and h = 2, d_v = 2): a size that is a product of
    symbols is read with the section's sizes (it used to stop the audit with an internal error)."""
    from symseq import Ledger

    def ledger():
        L = Ledger("one 4×2 weight")
        L.parameter("W", shape=(4, 2))
        return L

    checked: list = []
    found = _checked_on(["# The cell", "", f"\\(W\\in\\mathbb R^{{{shape}}}\\)", ""], ledger, checked,
                        sizes={"d": 2, "h": 2, "d_v": 2})
    assert [b.line for b in found] == ([] if holds else [3])
    assert [(line, ok) for line, _, ok in checked] == [(3, holds)]


def test_a_printed_value_that_holds_on_the_ledger_counts_as_covered(tmp_path):
    """A value printed for a bound name that holds there is accounted for: the audit of a page whose numbers are
    all such values covers every one of them, with no claim written for it; an edited one is wrong at its line."""
    from symseq import Derivation
    from symseq.audit import audit_document, read

    text = "# The cell\n\nHere \\(z_{1,0}\\approx3.0\\) and \\(\\mathbf z_0\\approx(0.25,\\;0.5)\\).\n"
    for page_text, fails in ((text, False), (text.replace("3.0", "3.5"), True)):
        page = tmp_path / "cell.md"
        page.write_text(page_text, encoding="utf-8")
        d = Derivation("cell-values", title="Cell", source=str(page))

        @d.section("The cell")
        def cell(s):
            s.use(_valued_ledger(), names={"Z": "H"})

        rep = audit_document(read(page), [d])
        assert rep.failed is fails, rep.failures()
        if not fails:
            assert (rep.counts.covered, rep.counts.uncovered) == (2, 0)
            assert all("the derivation's ledger" in t.attribution.text() for t in rep.tokens
                       if t.attribution.verdict == "covered")
        else:
            assert [e.line for e in rep.errata] == [3]
