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
