"""What a display shows: the handouts' rounding, labels, and the views of recorded tables."""

from decimal import Decimal

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq import ClaimError
from symseq.numbers import handout_decimal
from symseq.present.views import (heatmap_view, label_parts, table_view, unicode_label,
                                  latex_label)
from symseq.authoring import HeatmapSpec, TableSpec

from present_helpers import demo


@pytest.mark.parametrize("value, digits, text", [
    ("0.150", 3, "0.15"),          # trailing zeros dropped, as Week 06's tables print
    ("0.300", 3, "0.3"),
    ("1.00", 3, "1"),
    ("-0.175", 3, "-0.175"),
    ("0.05021", 3, "0.0502"),
    ("0.08809", 3, "0.0881"),
    ("1.3449", 3, "1.34"),
    ("9.996", 3, "10"),
    ("123456", 3, "123000"),
    ("0.0000123456", 3, "1.23e-05"),
    ("0", 3, "0"),
])
def test_significant_digits_as_the_handouts_print(value, digits, text):
    assert handout_decimal(sp.Rational(value), digits).text == text
    assert handout_decimal(mpmath.mpf(sp.Rational(value).p) / sp.Rational(value).q, digits).text == text


def test_exact_ties_round_away_from_zero():
    assert handout_decimal(sp.Rational("0.1235"), 3).text == "0.124"
    assert handout_decimal(sp.Rational("-0.1235"), 3).text == "-0.124"
    assert handout_decimal(sp.Rational("0.125"), decimals=2).text == "0.13"


def test_fixed_decimals_keep_the_printed_width():
    assert handout_decimal(sp.Rational(3, 20), decimals=3).text == "0.150"
    assert handout_decimal(sp.Rational(-1, 10**6), decimals=2).text == "0.00"  # no negative zero


def test_infinity_is_special():
    assert handout_decimal(mpmath.ninf, 3).special == "-inf"


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**12, 10**12).filter(bool), st.integers(1, 10**9), st.integers(1, 6))
def test_rounded_value_is_within_half_a_unit_of_the_last_digit(p, q, digits):
    x = sp.Rational(p, q)
    d = handout_decimal(x, digits, sci_below=-400, sci_above=400)
    shown = Decimal(d.text)
    sig = len(d.text.lstrip("-").replace(".", "").lstrip("0").rstrip("0") or "0")
    assert sig <= digits
    e = Decimal(p) / Decimal(q)
    half = Decimal(10) ** (Decimal(abs(e)).adjusted() - digits + 1) / 2
    assert abs(shown - e) <= half * Decimal("1.0000001")


def test_labels_typeset_handout_symbols():
    assert label_parts("Raw dot product") == [("text", "Raw dot product")]
    assert label_parts("S_{6j}") == [("name", "S_{6j}")]
    assert label_parts("W_Q, W_K") == [("name", "W_Q"), ("text", ", "), ("name", "W_K")]
    assert label_parts("Var at d_k=2") == [("text", "Var at d_k=2")]
    assert unicode_label("A_{6j}") == "A₆ⱼ"
    assert unicode_label("H^(0) rows") == "H⁽⁰⁾ rows"
    assert latex_label("Causal $A_{1j}$") == "Causal $A_{1j}$"
    assert latex_label("0: a") == "0: a"


def test_table_view_rounds_to_three_significant_digits():
    d = demo()
    spec = [x for s in d.sections for x in s.displays if isinstance(x, TableSpec)
            and x.label.startswith("Table 1")][0]
    v = table_view(spec)
    assert v.rounding == "three significant digits"
    assert [c.text.text for c in v.cells[0]] == ["0.2", "0.9", "0.4", "1", "-0.2"]
    assert [c.text.text for c in v.cells[4]] == ["-0.357", "-1.05", "0.3", "1.49", "-0.098"]
    assert not any(c.differs for row in v.cells for c in row)
    assert v.rows[6] == "6: begins" and v.cols[4] == "Feature 4"


def test_table_view_flags_a_printed_entry_that_disagrees():
    d = demo()
    spec = [x for s in d.sections for x in s.displays if isinstance(x, TableSpec)
            and x.label.startswith("Table 2")][0]
    wrong = TableSpec(spec.label, spec.value, [["0.0667", "0.3", "0.134", "0.333", "-0.0667"]], spec.rows,
                      spec.cols, 3)
    cells = table_view(wrong).cells[0]
    assert [c.differs for c in cells] == [False, False, True, False, False]
    assert cells[2].text.text == "0.133"


def test_table_view_without_digits_keeps_the_printed_decimals():
    spec = TableSpec("t", sp.Matrix([[sp.Rational(3, 20), sp.Rational(1, 3)]]), [["0.150", "0.33"]], None, None,
                     None)
    assert [c.text.text for c in table_view(spec).cells[0]] == ["0.150", "0.33"]


def test_wrong_label_count_is_a_clear_error():
    spec = TableSpec("t", sp.eye(2), None, ["only one"], None, 3)
    with pytest.raises(ClaimError, match="1 labels for 2 rows"):
        table_view(spec)


def test_heatmap_view_marks_masked_entries():
    d = demo()
    spec = [x for s in d.sections for x in s.displays if isinstance(x, HeatmapSpec)
            and x.label.startswith("Figure 1")][0]
    v = heatmap_view(spec)
    assert v.masked.sum() == 21  # 7×7 causal: the strict upper triangle
    assert np.array_equal(v.masked, ~np.tril(np.ones((7, 7), dtype=bool)))
    assert all(np.isneginf(v.values[v.masked]))  # masked scores are exact −∞
    weights = heatmap_view([x for s in d.sections for x in s.displays if isinstance(x, HeatmapSpec)
                            and x.label.startswith("Figure 2")][0])
    np.testing.assert_allclose(weights.values.sum(axis=1), 1.0, rtol=1e-14)
    assert (weights.values[weights.masked] == 0).all()


def test_a_tie_computed_in_binary_still_rounds_away_from_zero():
    from symseq import Ledger

    L = Ledger("halves")
    H = L.input("H", [["0.341", "1.00"], ["-0.341", "-1.00"], ["0.249", "0.0"]])
    W = L.parameter("W", [["0.5", "0.5"]])
    K = L.define("K", H @ W.T)  # 0.6705, −0.6705 and 0.1245: exact ties at three significant digits
    with mpmath.workdps(50):
        near = [mpmath.mpf(str(x)) for x in ("0.6705", "-0.6705", "0.1245")]
    assert [handout_decimal(x, 3).text for x in near] != ["0.671", "-0.671", "0.125"]  # binary falls short
    spec = TableSpec("K", K, None, None, None, 3)
    assert [row[0].text.text for row in table_view(spec).cells] == ["0.671", "-0.671", "0.125"]
    spec2 = TableSpec("K", K, [["0.67"], ["-0.67"], ["0.12"]], None, None, None)  # as printed: two decimals
    assert [row[0].text.text for row in table_view(spec2).cells] == ["0.67", "-0.67", "0.12"]


def test_a_table_of_formulas_keeps_them():
    z = sp.Symbol("z")
    spec = TableSpec("Table 4: slopes", sp.Matrix([[1], [1 - sp.tanh(z) ** 2], [sp.Rational(1, 4)]]), None,
                     ["identity", "tanh", "σ′(0)"], ["φ′(z)"], None)
    cells = [row[0] for row in table_view(spec).cells]
    assert cells[0].expr is None and cells[0].text.text == "1"
    assert cells[1].expr == 1 - sp.tanh(z) ** 2
    assert cells[2].text.text == "0.25"
    from symseq.present.latex import table_latex
    from symseq.present.show import table_display

    tex = table_latex(spec)
    assert r"tanh & $1 - \tanh^{2}{\left(z \right)}$ \\" in tex
    import io

    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=80, no_color=True).print(table_display(table_view(spec)))
    assert "1 − tanh²(z)" in buf.getvalue()
