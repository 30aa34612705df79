"""Errors for misuse of the ledger and its backends: a division by zero or no number given as an input, a
non-integer count of steps, exact inputs that a backend cannot tell apart, and NumPy's own warnings."""

import warnings

import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, blocks, compile, evaluate
from symseq.errors import ConventionError, EvaluationError, PrecisionWarning, ShapeError

from lazy_torch import needs_torch

BIG = 3 * sp.Integer(10) ** 84


@pytest.mark.parametrize("text", ["1/0", "0/0", "-3/0"])
def test_an_input_that_divides_by_zero_is_refused(text):
    """"1/0" raised ZeroDivisionError from Python's Fraction."""
    with pytest.raises(ConventionError, match=rf"a: '{text}' divides by zero; a fraction needs a denominator"):
        Ledger("t").input("a", text)


@pytest.mark.parametrize("value", [sp.zoo, sp.nan, [[1, sp.nan]], sp.Rational(1, 0)])
def test_an_input_that_is_no_number_is_refused(value):
    with pytest.raises(ConventionError, match="the value holds (nan|zoo), which is no number"):
        Ledger("t").parameter("a", value)


def test_infinite_inputs_stay_allowed():
    L = Ledger("t")
    assert L.value(L.input("m", [[0, -sp.oo]]).name)[0, 1] == -sp.oo


@pytest.mark.parametrize("T", [2.7, 2.0, "2", True, 0])
def test_sequence_inputs_refuses_a_count_that_is_not_a_positive_integer(T):
    """sequence_inputs(L, 2.7) made 2 steps without a word."""
    with pytest.raises(ShapeError, match=r"sequence_inputs: T, the number of positions, must be an integer ≥ 1"):
        blocks.sequence_inputs(Ledger("t"), T)


def test_sequence_inputs_refuses_a_width_or_batch_that_is_not_a_positive_integer():
    with pytest.raises(ShapeError, match="width, the number of features of each x_t, must be a positive integer; "
                                         "got 1.5"):
        blocks.sequence_inputs(Ledger("t"), 2, width=1.5)
    with pytest.raises(ShapeError, match="batch, the number of rows of each x_t, must be a positive integer"):
        blocks.sequence_inputs(Ledger("t"), 2, width=3, batch=0)
    assert [x.shape for x in blocks.sequence_inputs(Ledger("t"), 2, width=3, batch=2)] == [(2, 3), (2, 3)]


def softmax_of_near_equal():
    L = Ledger("near")
    Z = L.input("Z", [[BIG + 1, BIG - 1]])
    blocks.probabilities(L, Z)
    return L


@pytest.mark.parametrize("backend", ["numpy", "mpmath", pytest.param("torch", marks=needs_torch)])
def test_exact_inputs_a_backend_cannot_tell_apart_warn(backend):
    """A softmax of 3·10⁸⁴ ± 1 came back uniform from NumPy, torch and mpmath at 50 digits with no warning."""
    L = softmax_of_near_equal()
    with pytest.warns(PrecisionWarning, match=r"holds the exact inputs Z\[0, 0\] = 3.0000000E\+84 and Z\[0, 1\] = "
                                              r"3.0000000E\+84, which differ by 2, as the same number.* about 87 "
                                              r"significant digits"):
        P = evaluate(L, backend)["P"]
    assert float(P[0, 0]) == 0.5  # what the warning is about: the difference is lost
    exact = sp.exp(2) / (1 + sp.exp(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert abs(evaluate(L, "mpmath", dps=90)["P"][0, 0] - sp.N(exact, 30)) < 1e-25  # enough digits: no warning
        assert sp.simplify(evaluate(L, "exact")["P"][0, 0] - exact) == 0


def test_a_compiled_program_warns_as_evaluate_does():
    L = softmax_of_near_equal()
    with pytest.warns(PrecisionWarning, match="the numpy backend .float64. holds the exact inputs Z"):
        compile(L, ["P"])


def test_inputs_of_two_leaves_are_compared_and_equal_inputs_are_not():
    L = Ledger("two")
    a, b = L.input("a", sp.Rational(1, 3)), L.input("b", "0.33333333333333333333")
    L.define("d", a - b)
    with pytest.warns(PrecisionWarning, match=r"inputs a = 1/3 and b = 0.33333333, which differ by "
                                              r"1/300000000000000000000.* about 22 significant digits"):
        evaluate(L, "numpy")
    L = Ledger("equal")
    L.define("s", L.input("x", [[sp.Rational(1, 3), sp.Rational(1, 3)]]) * 2)
    L.input("y", [["0.5", 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(L, "numpy")  # equal exact values converted alike are no loss


def test_infinite_input_gives_the_clear_error_and_no_numpy_warning():
    """evaluate printed NumPy's "RuntimeWarning: invalid value encountered in subtract" before the error."""
    L = Ledger("inf")
    blocks.probabilities(L, L.input("Z", [[sp.oo, 1]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EvaluationError, match="row P evaluates to nan at entry"):
            evaluate(L, "numpy")
        f = compile(L, ["P"], inputs=["Z"])
        for _ in range(2):
            with pytest.raises(EvaluationError, match="row P evaluates to nan at entry"):
                f(Z=np.array([[np.inf, 1.0]]))


def test_an_overflow_gives_the_clear_error_and_no_numpy_warning():
    L = Ledger("overflow")
    L.define("y", sp.exp(L.input("x", 1000)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EvaluationError, match="row y evaluates to inf"):
            evaluate(L, "numpy")
