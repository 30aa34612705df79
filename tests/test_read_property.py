"""A printed number X in the places a page prints it: the scanner finds X as one number token spanning exactly X,
and the reader gives it the exact value the test computes on its own (with fractions.Fraction).

X is a mantissa (an integer, or a decimal, also ``.5``) with an optional sign (``-`` or U+2212 ``−``) and an
optional exponent ``e±k`` (either minus), or an integer of at least 1000 with its thousands grouped (``,``, U+202F
or U+2009), or either followed by ``%``. A sign belongs to X: in every context X follows a space (after ``is``,
``=``), ``(``, ``$``, ``|`` or the start of the line, where a sign is no subtraction.
"""

from fractions import Fraction

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq.read import parse, read_number, scan, value


MINUS = "\u2212"
SENTENCE = "The value is {}."
CONTEXTS = (SENTENCE, "{}, and more", "({})", "${}$", "| a | {} |", "{}", "f(x) = {}")
SEPARATORS = (",", "\u202f", "\u2009")


@st.composite
def printed(draw, form: str = ""):
    """(context, X, exact value of X). ``form`` forces one form: grouped, percent, unicode exponent (``e−k``) or
    sentence exponent (an exponent before a sentence's full stop); "" draws the others."""
    others = CONTEXTS[1:] if form == "unicode exponent" else CONTEXTS  # (an exponent before "." is its own form)
    context = SENTENCE if form == "sentence exponent" else draw(st.sampled_from(others))
    sign = draw(st.sampled_from(("", "-", MINUS)))
    if form == "grouped":
        whole = draw(st.integers(1000, 10**10))
        seps = SEPARATORS[1:] if context == "({})" else SEPARATORS  # in brackets a comma separates entries
        text, exact = f"{whole:,}".replace(",", draw(st.sampled_from(seps))), Fraction(whole)
    else:
        whole = draw(st.integers(0, 10**7))
        digits = draw(st.text("0123456789", max_size=5))
        if digits:
            text = ("" if whole == 0 and draw(st.booleans()) else str(whole)) + "." + digits
            exact = whole + Fraction(int(digits), 10 ** len(digits))
        else:
            text, exact = str(whole), Fraction(whole)
        exponent = form in ("unicode exponent", "sentence exponent") or (
            form == "" and context != SENTENCE and draw(st.booleans()))
        if exponent:
            k = draw(st.integers(0, 20))
            minus = MINUS if form == "unicode exponent" else "-"
            esign = draw(st.sampled_from((minus,) if form == "unicode exponent" else ("", "+", minus)))
            text += draw(st.sampled_from("eE")) + esign + str(k)
            exact *= Fraction(10) ** (-k if esign == minus else k)
    text = sign + text
    exact = -exact if sign else exact
    if form == "percent":
        text, exact = text + "%", exact / 100
    return context.format(text), text, exact


def check(case):
    context, x, exact = case
    tokens = scan(context)
    assert [(t.kind, t.text, t.script) for t in tokens] == [("number", x, "")], context
    [t] = tokens
    assert context[t.start:t.end] == x
    n = read_number(t.text)
    assert n is not None and n.value == exact, (x, n)
    if not x.endswith("%"):
        assert value(parse(x)) == sp.Rational(exact.numerator, exact.denominator)


@settings(max_examples=200, deadline=None)
@given(st.one_of(printed(), *(printed(f) for f in ("grouped", "percent", "unicode exponent", "sentence exponent"))))
def test_scanned_and_read(case):
    check(case)
