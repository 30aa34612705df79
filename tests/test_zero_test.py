"""The zero test of the exact proofs: an expression is 0 when it expands to 0 with its exponentials and other
functions taken as symbols (symseq.derive.symbolic.zero_as_polynomial), else by SymPy's expand and simplify."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq.derive.attention_grads import prove_attention_gradients
from symseq.derive.symbolic import vanishes, zero_as_polynomial

x, y, z = sp.symbols("x y z", real=True)
phi = sp.Function("phi")


@pytest.mark.parametrize("expr", [
    sp.exp(x) * sp.exp(y) - sp.exp(x + y),
    sp.exp(x) - sp.exp(x / 2) * sp.exp(x / 2),
    sp.exp(x / 3) ** 3 * sp.exp(-x / 2) - sp.exp(x / 2),
    sp.exp(sp.sqrt(2) * x * y) - sp.exp(sp.sqrt(2) * x * y / 2) ** 2,
    (sp.exp(x) + 1) ** 2 - sp.exp(2 * x) - 2 * sp.exp(x) - 1,
    sp.tanh(x) * (sp.exp(y) - 1) - sp.tanh(x) * sp.exp(y) + sp.tanh(x),
    sp.sqrt(y) * (phi(x) + 1) ** 2 - sp.sqrt(y) * phi(x) ** 2 - 2 * sp.sqrt(y) * phi(x) - sp.sqrt(y),
])
def test_identities_over_exponentials_and_functions_are_zero(expr):
    assert zero_as_polynomial(expr) and vanishes(expr)


@pytest.mark.parametrize("expr", [
    sp.exp(x) - 1,
    sp.exp(2 * x) - sp.exp(x),
    sp.tanh(x) - sp.tanh(y),
    sp.exp(x + y) - sp.exp(x) * sp.exp(z),
])
def test_a_nonzero_expression_is_never_called_zero(expr):
    assert not zero_as_polynomial(expr)
    assert not vanishes(expr)


@pytest.mark.parametrize("expr", [
    sp.Sum(phi(x) * y, (x, 0, 3)) - 4 * phi(x) * y,  # x is bound by the sum: renaming phi(x) would make this 0
    sp.Derivative(phi(x), x),  # renaming phi(x) would make the derivative 0
])
def test_a_symbol_bound_by_a_sum_or_a_derivative_is_not_renamed(expr):
    assert not zero_as_polynomial(expr)


@pytest.mark.parametrize("expr, zero", [
    (sp.Derivative(phi(x), x), False),  # SymPy raised "Can't calculate derivative wrt …" at the exact point
    (sp.Derivative(phi(x), x) - phi(x), False),
    (sp.Derivative(x * phi(x), x) - x * sp.Derivative(phi(x), x) - phi(x), True),
    (sp.Derivative(x ** 3, x) - 2 * x, False),  # a derivative SymPy can take: decided at the point x = c
    (sp.Derivative(x ** 3, x) - 3 * x ** 2, True),
])
def test_derivatives_of_defined_and_undefined_functions_are_decided_without_an_error(expr, zero):
    assert vanishes(expr) is zero


def test_an_identity_that_needs_more_than_expansion_is_left_to_simplify():
    sigmoid_two_ways = 1 / (1 + sp.exp(-x)) - sp.exp(x) / (sp.exp(x) + 1)
    assert not zero_as_polynomial(sigmoid_two_ways)  # says nothing
    assert vanishes(sigmoid_two_ways)  # cancel or simplify proves it


_atoms = st.sampled_from([x, y, z, sp.exp(x), sp.exp(-y), sp.exp(x / 2), sp.exp(x + y), sp.exp(2 * z - x / 3),
                          sp.tanh(y), sp.sqrt(z ** 2 + 1), phi(x), sp.Integer(2), sp.Rational(-1, 3)])
_terms = st.lists(st.lists(_atoms, min_size=1, max_size=3).map(lambda fs: sp.Mul(*fs)), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(_terms, _terms)
def test_it_says_zero_only_when_the_value_is_zero(left, right):
    """At random points the difference's 40-digit value is 0 whenever the test says so (a property of soundness)."""
    expr = sp.Add(*left) - sp.Add(*right)
    if not zero_as_polynomial(expr):
        return
    concrete = expr.replace(phi, sp.Lambda(x, sp.sin(3 * x) + x ** 2))
    for point in ({x: sp.Rational(3, 7), y: sp.Rational(-5, 11), z: sp.Rational(2, 13)},
                  {x: sp.Rational(-8, 5), y: sp.Rational(9, 4), z: sp.Rational(-1, 3)}):
        assert abs(sp.N(concrete.xreplace(point), 40)) < mpmath.mpf("1e-35")


@settings(max_examples=40, deadline=None)
@given(_terms)
def test_a_sum_minus_a_shuffled_copy_of_it_is_zero(terms):
    expr = sp.Add(*terms)
    assert zero_as_polynomial(expr - sp.Add(*reversed(terms)))


def test_attention_gradients_are_proved_by_the_fast_test():
    """∇_Q, ∇_K, ∇_V, ∇_S of scaled dot-product attention (d_k = 2, so 1/√2 in every exponent) equal the closed
    forms and SymPy's own differentiation: each difference is zero as a polynomial in the exponentials."""
    proof = prove_attention_gradients()
    assert proof.holds, proof.detail
    L, closed, grads = proof.value["ledger"], proof.value["closed"], proof.value["grads"]
    diff = L.expand(closed["Q"].name) - L.expand(grads.name("Q"))
    assert all(zero_as_polynomial(e) for e in diff)


def test_an_expression_asked_again_is_decided_once(monkeypatch):
    # the same row sum is asked in several sections of a page: vanishes remembers what it decided per expression
    from symseq.derive import symbolic

    u = sp.Symbol("u_vanishes_again", real=True)
    decided = []
    real = symbolic._vanishes
    monkeypatch.setattr(symbolic, "_vanishes", lambda e: decided.append(e) or real(e))
    total = sp.exp(u) / (sp.exp(u) + 1) + 1 / (sp.exp(u) + 1) - 1
    assert vanishes(total) and vanishes(total) and vanishes(sp.Matrix([[total, 0], [total, total]]))
    assert not vanishes(total + u) and not vanishes(total + u)
    assert decided == [total, total + u]


def test_a_laurent_polynomial_is_zero_exactly_when_sympy_expands_it_to_zero():
    # zero_as_polynomial decides a Laurent polynomial in its symbols by sparse polynomial arithmetic: the answer
    # of sp.expand(x) == 0, on random sums, products and powers (negative powers of symbols only)
    import random

    from symseq.derive.symbolic import _laurent_zero

    rnd = random.Random(3)
    names = [x, y, sp.Dummy("d"), sp.Symbol("p_laurent", positive=True)]

    def made(depth):
        if depth == 0 or rnd.random() < 0.3:
            return rnd.choice(names + [sp.Integer(rnd.randint(-3, 3)), sp.Rational(rnd.randint(-5, 5), 3)])
        kind = rnd.random()
        if kind < 0.7:
            parts = [made(depth - 1) for _ in range(rnd.randint(2, 3))]
            return sp.Add(*parts) if kind < 0.35 else sp.Mul(*parts)
        base = made(depth - 1)
        return base ** rnd.choice([-2, -1, 2, 3] if base.is_Symbol else [0, 1, 2, 3])

    decided = zeros = 0
    for _ in range(300):
        e = made(4)
        e = e - sp.expand(e) + (x * (1 / x + y) - 1 - x * y if rnd.random() < 0.3 else 0) if rnd.random() < 0.5 else e
        answer = _laurent_zero(e)
        if answer is not None:
            assert answer == (sp.expand(e) == 0), e
            decided, zeros = decided + 1, zeros + answer
    assert decided > 100 and zeros > 30
    A, B = sp.symbols("A_laurent B_laurent", commutative=False)
    for other in (A * B - B * A, sp.I * x + 1, (x + 1) ** -1, sp.sqrt(x) * x, sp.pi * x, sp.Integer(0)):
        assert _laurent_zero(other) is None  # not a Laurent polynomial in commuting symbols: left to expand


def test_the_parts_renamed_by_the_zero_test_are_sympys_atoms():
    # one walk over the distinct subexpressions finds what expr.atoms gives; a node that binds symbols (two Subs
    # that differ only in their bound symbol are equal to SymPy) leaves it to has and atoms
    from symseq.derive.symbolic import _parts

    w = sp.exp(x) / (sp.exp(x) + sp.exp(y))
    e = w * (1 - w) * sp.sqrt(z) + sp.tanh(w) ** 2 + phi(x) * z ** sp.Rational(1, 3)
    assert _parts(e) == (e.atoms(sp.exp), e.atoms(sp.Function), e.atoms(sp.Pow))
    bound = sp.Subs(sp.Derivative(phi(x), x), x, y) * sp.Subs(sp.Derivative(phi(z), z), z, x)
    assert _parts(bound) is None and _parts(sp.Integral(x, (x, 0, y)) + sp.tanh(x)) is None
    assert not zero_as_polynomial(bound)


def test_an_expression_with_bound_symbols_is_decided_each_time(monkeypatch):
    # two Subs that differ only in their bound symbol are equal to SymPy: what vanishes decided for one is not
    # taken for the other
    from symseq.derive import symbolic

    decided = []
    real = symbolic._vanishes
    monkeypatch.setattr(symbolic, "_vanishes", lambda e: decided.append(e) or real(e))
    one, other = (sp.Subs(sp.Derivative(phi(s), s), s, y) * z - z * sp.Subs(sp.Derivative(phi(s), s), s, y)
                  + sp.Integral(s, (s, 0, x)) for s in sp.symbols("s_bound t_bound", real=True))
    assert vanishes(one) is vanishes(other)
    assert len(decided) == 2
