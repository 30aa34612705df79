import fractions

import pytest
import sympy as sp

from symseq import ConventionError, ShapeError, exact, exact_matrix


def test_decimal_strings_are_rationals():
    assert exact("0.2") == sp.Rational(1, 5)
    assert exact("-1.5e-3") == sp.Rational(-3, 2000)
    assert exact("1/4") == sp.Rational(1, 4)
    assert exact("−0.1") == sp.Rational(-1, 10)
    assert exact(fractions.Fraction(2, 3)) == sp.Rational(2, 3)


def test_floats_are_refused_with_the_fix():
    with pytest.raises(ConventionError, match=r"not exact.*'0.1'"):
        exact(0.1)


def test_text_is_not_sympified():
    with pytest.raises(ConventionError, match="cannot read"):
        exact("__import__('os')")
    with pytest.raises(ConventionError):
        exact("sqrt(2)")


def test_matrix_rows_are_positions_and_ragged_rows_fail():
    m = exact_matrix([["0.2", "-0.1"], [0, 1]])
    assert m.shape == (2, 2) and m[0, 0] == sp.Rational(1, 5)
    assert exact_matrix([1, 2, 3]).shape == (1, 3)
    with pytest.raises(ShapeError, match="different lengths"):
        exact_matrix([[1, 2], [3]])


def test_sympy_floats_are_refused_too():
    with pytest.raises(ConventionError, match=r"SymPy Float 0.2.*'0.2'"):
        exact_matrix(sp.Matrix([[1, 0], [0, 0.2]]))
    with pytest.raises(ConventionError, match="SymPy Float"):
        exact(sp.eye(2)[0, 0] * 0.2)
    with pytest.raises(ConventionError, match=r"as a float it is 0\.2000000000000000111"):
        exact(0.2)


def test_rows_with_sympy_floats_are_refused():
    from symseq import Ledger

    L = Ledger()
    x = L.input("x", 1)
    with pytest.raises(ConventionError, match="row y"):
        L.define("y", x * 0.5)


def test_every_display_rounds_half_away_from_zero_as_the_claims_are_decided():
    import mpmath

    from symseq.numbers import decimal_text, handout_decimal, rounded_text
    from symseq.present.terminal import short_value
    from symseq.verify.claims import Claim

    with mpmath.workdps(50):
        tie = mpmath.mpf("0.125")  # exact in binary: a true tie
    assert decimal_text(tie, 2) == "0.13" and rounded_text(tie, decimals=2) == "0.13"
    assert handout_decimal(tie, 2).text == "0.13"
    assert short_value(["0.125"], (), 2) == "0.13"  # the value column of symseq verify
    assert Claim("0.13", "value", sp.Rational(1, 8)).check().ok
    assert Claim("0.12", "value", sp.Rational(1, 8)).check().ok  # both within half a unit: a tie holds either way
    assert Claim("0.125", "value", sp.Rational(1, 8)).check().rounded == ["0.125"]
    assert decimal_text("-0.000001234567", 3, fixed=(-6, 12)) == "-1.23e-6"
    assert decimal_text(sp.Rational(2, 3), 5) == "0.66667" and decimal_text(3, 4, integer=True) == "3"
    assert decimal_text(mpmath.mpf("-inf")) == "-inf" and decimal_text(0) == "0"


def test_one_home_for_rounding():
    """Decimals are rounded in symseq/numbers.py only: no other module of the package, and no bundled
    derivation, calls mpmath.nstr, quantizes a Decimal, or rounds half up on its own."""
    import ast
    from pathlib import Path

    import symseq

    import symseq.derivations

    root = Path(symseq.__file__).parent
    bundled = Path(next(iter(symseq.derivations.__path__)))
    offenders = []
    for f in [*root.rglob("*.py"), *bundled.glob("*.py")]:
        if f.name == "numbers.py" and f.parent == root:
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("nstr", "quantize") \
                    or isinstance(node, ast.Name) and node.id == "round_half_up":
                offenders.append(f"{f.name}:{node.lineno}")
    assert not offenders, offenders


def test_an_mpf_of_another_context_keeps_its_precision_when_rounded():
    import mpmath

    from symseq.numbers import decimal_text, handout_decimal, to_decimal

    ctx = mpmath.MPContext()
    ctx.dps = 50
    third = ctx.mpf(1) / 3  # a kernel's own context, as the mpmath backend evaluates rows
    assert str(to_decimal(third)).startswith("0." + "3" * 48)
    assert decimal_text(third, 30) == "0." + "3" * 30
    with mpmath.workdps(50):
        tie = ctx.mpf(1) / 8 + ctx.mpf(10) ** -30  # just above 0.125: rounds up at two digits only with every digit
    assert handout_decimal(tie, 2).text == "0.13" and decimal_text(tie, 2) == "0.13"
    assert decimal_text(ctx.mpf("-inf")) == "-inf"


def test_rounding_to_many_decimals_keeps_every_digit():
    """A printed 1e-225 has 225 decimals; a value rounded like it needs more digits than the default context."""
    from symseq.numbers import rounded_text

    out = rounded_text("0.8463", decimals=225)
    assert out == "0.8463" + "0" * 221
    assert rounded_text("1e300", decimals=4) == "1" + "0" * 300 + ".0000"
