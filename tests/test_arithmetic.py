"""The statement grammar (symseq.read.arithmetic): printed arithmetic read exactly, never run as code."""

from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from symseq.errors import ClaimError
from symseq.read import MAX_DEPTH, interval, numbers, parse, parse_statement, value
from symseq.verify.steps import ends


@pytest.mark.parametrize("text, exact", [
    ("2.0 · 0.4621", sp.Rational(4621, 5000)),
    ("2.0 × 0.4621", sp.Rational(4621, 5000)),
    (r"2.0 \times 0.4621", sp.Rational(4621, 5000)),
    ("1e-3 + 10^{-3}", sp.Rational(1, 500)),
    ("−0.5 − −0.25", sp.Rational(-1, 4)),
    ("3 ÷ 4", sp.Rational(3, 4)),
    ("(-0.15)²", sp.Rational(9, 400)),
    ("-2^2", -4),
    ("2^3^2", 512),
    ("√64", 8),
    ("sqrt(0.25)", sp.Rational(1, 2)),
    (r"\sqrt{0.25} + \frac{1}{4} + \tfrac12", sp.Rational(5, 4)),
    ("e^{0.5}", sp.exp(sp.Rational(1, 2))),
    ("exp(-1)", sp.exp(-1)),
    ("log 2", sp.log(2)),
    (r"\ln 2", sp.log(2)),
    ("tanh(0.5)", sp.tanh(sp.Rational(1, 2))),
    ("σ(0)", sp.Rational(1, 2)),
    ("sigmoid(0)", sp.Rational(1, 2)),
    ("1×1.131+1×0", sp.Rational(1131, 1000)),
    ("2√2", 2 * sp.sqrt(2)),
    ("sum([0.1, 0.2, 0.7])", 1),
    ("mean([1, 2])", sp.Rational(3, 2)),
    ("[1, 2] · [3, 4]", 11),
])
def test_scalars_are_exact(text, exact):
    assert sp.simplify(value(parse(text)) - exact) == 0


def test_lists_products_and_softmax():
    assert value(parse("[[1, 2], [3, 4]] @ [[5, 6], [7, 8]]")) == ((19, 22), (43, 50))
    assert value(parse("[[1, 2], [3, 4]] · [1, 1]")) == (3, 7)
    assert value(parse("[0.1, 0.2] + 1")) == (sp.Rational(11, 10), sp.Rational(6, 5))
    a, b = value(parse("softmax([0, log 3])"))
    assert sp.simplify(a - sp.Rational(1, 4)) == 0 and sp.simplify(b - sp.Rational(3, 4)) == 0


def test_printed_precision_is_kept():
    n = numbers(parse("1.5 × 10^{-3} + 0.4620"))
    assert [x.value for x in n] == [sp.Rational(3, 2000), sp.Rational(231, 500)]
    assert n[0].half_unit(None) == sp.Rational(1, 20000)  # half a unit of the mantissa's last digit
    assert n[1].decimals == 4


def test_statements_split_at_relations():
    s = parse_statement(r"(0.1 - 0.25) / 0.364 = -0.15 / 0.364 \approx -0.412")
    assert s.relations == ("=", "≈")
    assert s.texts == ("(0.1 - 0.25) / 0.364", "-0.15 / 0.364", "-0.412")


def test_interval_widens_each_printed_decimal_by_half_a_unit():
    lo, hi = ends(interval(parse("2.0 · 0.4621")))
    assert lo <= 1.95 * 0.46205 + 1e-12 and hi >= 2.05 * 0.46215 - 1e-12
    lo, hi = ends(interval(parse("3 · 4")))  # integers stay exact
    assert lo == hi == 12
    lo, hi = ends(interval(parse("(0.0)^2")))  # an even power of an interval about zero starts at zero
    assert lo == 0


@pytest.mark.parametrize("text, words", [
    ("1/0", "division by zero"),
    ("log(-1)", "positive"),
    ("√-4", "not a real number"),
    ("softmax(3)", "softmax takes"),
    ("[1, 2] + [1, 2, 3]", "same shape"),
    ("x + 1", "'x' is not a number"),
    ("import os", "is not a number"),
    ("__import__('os')", "unexpected"),
    ("9^9^9^9", "beyond"),
    ("1e999999999", "exponent"),
    ("0e.0", "unexpected"),
    ("10^{10^{10}}", "beyond"),
    ("exp(exp(exp(100)))", "beyond"),
    ("(" * 200 + "1" + ")" * 200, "nested"),
    ("1+" * 2000 + "1", "longer than"),
    ("2 3", "unexpected"),
    ("", "empty"),
    ("= 3", "starts with a relation"),
])
def test_hostile_or_bad_text_raises_a_claim_error(text, words):
    with pytest.raises(ClaimError, match=words):
        value(parse_statement(text).parts[0]) if text and not text.startswith("=") else parse_statement(text)


# -- property tests: random trees printed and read back -------------------------------------------------------------

_decimals = st.builds(lambda i, d: (Fraction(i, 10**d), f"{i / 10**d:.{d}f}" if d else str(i)),
                      st.integers(0, 10**6), st.integers(0, 6))


def _leaf(draw):
    v, t = draw(_decimals)
    return v, t


@st.composite
def trees(draw, depth=0):
    """(exact Fraction value, printed text) of a random arithmetic tree over decimals."""
    if depth > 3 or draw(st.integers(0, 2)) == 0:
        return _leaf(draw)
    kind = draw(st.sampled_from(["+", "-", "*", "/", "neg", "paren", "sq"]))
    if kind == "neg":
        v, t = draw(trees(depth + 1))
        return -v, f"{draw(st.sampled_from(['-', '−']))}({t})"
    if kind == "paren":
        v, t = draw(trees(depth + 1))
        return v, draw(st.sampled_from([f"({t})", "{" + t + "}"]))
    if kind == "sq":
        v, t = draw(trees(depth + 1))
        return v * v, f"({t}){draw(st.sampled_from(['²', '^2', '^{2}']))}"
    (a, ta), (b, tb) = draw(trees(depth + 1)), draw(trees(depth + 1))
    if kind == "/":
        assume(b != 0)
        return a / b, f"({ta}) {draw(st.sampled_from(['/', '÷']))} ({tb})"
    if kind == "*":
        return a * b, f"({ta}) {draw(st.sampled_from(['·', '×', '*', chr(92) + 'cdot', chr(92) + 'times']))} ({tb})"
    return (a + b, f"{ta} + ({tb})") if kind == "+" else (a - b, f"{ta} {draw(st.sampled_from(['-', '−']))} ({tb})")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(trees())
def test_random_trees_read_back_to_their_exact_value(tree):
    v, text = tree
    assert value(parse(text)) == sp.Rational(v.numerator, v.denominator), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("0123456789.+-−×·*/^()[]{},=≈√²eE ")
                                + ["exp", "log", "tanh", "softmax", r"\frac", r"\sqrt", "σ", "sum", "9^9", "1e300",
                                   "10^{"]), max_size=40).map("".join))
def test_hostile_text_raises_only_the_projects_errors(text):
    try:
        s = parse_statement(text)
        for p in s.parts:
            value(p)
            interval(p)
    except ClaimError:
        pass


def test_depth_limit_is_a_claim_error_not_a_recursion_error():
    with pytest.raises(ClaimError):
        parse("-" * (MAX_DEPTH + 5) + "1")
    with pytest.raises(ClaimError):
        parse("√" * (MAX_DEPTH + 5) + "2")


def test_interval_contains_the_exact_value():
    for text in ["tanh(0.5) + 0.25", "softmax([0.1, 0.2, 0.3]) · [1, 2, 3]", "e^{-0.5} / 3.0", "σ(0.7) · 1.5"]:
        node = parse(text)
        with mpmath.workdps(30):
            exact = mpmath.mpf(sp.N(value(node), 30))
            lo, hi = ends(interval(node))
            assert lo <= exact <= hi


def test_bound_names_read_as_their_printed_values_and_unbound_ones_are_refused():
    from symseq.read import Ref, show
    from symseq.verify.steps import inner_steps

    names = {"W_z": parse("[[0.3, 0.2], [0.1, 0.5]]"), "h_6^(0)": parse("[-0.579, 1.06]"), "D": parse("8")}
    assert value(parse("W_z @ [1.0, 0.5]", names)) == (sp.Rational(2, 5), sp.Rational(7, 20))
    assert value(parse("h_{6,1}^{(0)} + 3D^2", names)) == sp.Rational(106, 100) + 192  # a layer, an entry, 3·D²
    assert isinstance(parse("\\mathbf h_6^{(0)}", names), Ref)
    with pytest.raises(ClaimError, match="'V' is not a number or a function"):
        parse("V @ [1.0, 0.5]", names)
    with pytest.raises(ClaimError):  # an entry beyond the bound list is no name
        parse("h_{6,2}^{(0)}", names)
    chain = parse_statement("tanh((0.9 * 0.7) + 0.3) = tanh(0.93) ≈ 0.731")
    (k, inner), = inner_steps(chain)
    assert k == 0 and inner.texts == ("0.9 * 0.7 + 0.3", "0.93") and show(inner.parts[0]) == "0.9 * 0.7 + 0.3"


def test_a_function_named_in_text_reads_as_the_function():
    """``\\text{softmax}(…)`` and ``\\operatorname{tanh}(…)``, as LaTeX notes write them (the CSE 751 notes)."""
    from symseq.verify.steps import decide

    assert [link.ok for link in decide(r"\text{softmax}([0.3808,0,0,0,0]) = [0.2679,0.1830,0.1830,0.1830,0.1830]")] \
        == [True]
    assert [link.ok for link in decide(r"\operatorname{tanh}(0.5) = 0.4621")] == [True]
