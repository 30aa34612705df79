import pytest
import sympy as sp

from symseq import ConventionError, EvaluationError
from symseq.functions import gelu, gelu_tanh, logsumexp, partial, relu, relu_at_zero, sigmoid, softmax

x = sp.Symbol("x", real=True)


def test_relu_derivative_at_zero_follows_torch_by_default():
    d = sp.diff(relu(x), x)
    assert d.subs(x, 0) == 0
    assert d.subs(x, 1) == 1 and d.subs(x, -1) == 0


def test_relu_half_convention_is_explicit():
    assert sp.diff(relu_at_zero(x, sp.S.Half), x).subs(x, 0) == sp.S.Half
    assert sp.diff(relu_at_zero(x, 0), x).subs(x, 0) == 0
    with pytest.raises(ConventionError, match="must be 0"):
        relu_at_zero(x, 1)


def test_relu_values():
    assert relu(sp.Rational(-1, 2)) == 0 and relu(sp.Rational(3, 2)) == sp.Rational(3, 2) and relu(0) == 0


def test_sigmoid_derivative_and_bound():
    assert sp.simplify(sp.diff(sigmoid(x), x) - sigmoid(x) * (1 - sigmoid(x))) == 0
    assert sigmoid(0) == sp.S.Half
    # σ'(0) = 1/4 is the maximum of σ(1-σ)
    assert sp.diff(sigmoid(x), x).subs(x, 0) == sp.Rational(1, 4)


def test_softmax_closed_form_and_masking():
    assert softmax(0, 0, sp.sqrt(2) / 2) == 1 / (1 + sp.exp(sp.sqrt(2) / 2))
    assert softmax(1, 1, -sp.oo) == 0
    assert softmax(0, 1, -sp.oo) == 1
    with pytest.raises(EvaluationError, match="all masked"):
        softmax(0, -sp.oo, -sp.oo)


def test_softmax_jacobian_is_diag_minus_outer():
    a, b, c = sp.symbols("a b c", real=True)
    xs = (a, b, c)
    J = sp.Matrix(3, 3, lambda i, j: sp.diff(softmax(i, *xs), xs[j]))
    p = sp.Matrix([softmax(i, *xs) for i in range(3)])
    assert sp.simplify(J - (sp.diag(*p) - p * p.T)) == sp.zeros(3, 3)


def test_logsumexp_derivative_is_softmax_and_masked_entries_drop():
    a, b = sp.symbols("a b", real=True)
    assert sp.diff(logsumexp(a, b), b) == softmax(1, a, b)
    assert logsumexp(2, -sp.oo) == 2
    assert logsumexp(0, 0) == sp.log(2)


def test_gelu_forms():
    assert gelu(0) == 0 and gelu_tanh(0) == 0
    assert sp.diff(gelu(x), x).subs(x, 0) == sp.S.Half
    assert sp.N(gelu(sp.Integer(1)).rewrite(sp.erf), 15) == pytest.approx(0.841344746068543, rel=1e-14)


def test_latex_of_functions():
    assert sp.latex(sigmoid(x)) == r"\sigma\left(x\right)"
    assert "ReLU" in sp.latex(relu(x))


def test_a_relu_written_as_max_or_min_with_zero_is_refused():
    from symseq.functions import require_explicit_relu

    with pytest.raises(ConventionError, match=r"Max\(0, x\).*symseq\.relu\(x\).*relu_at_zero"):
        require_explicit_relu(sp.tanh(sp.Max(x, 0)))
    with pytest.raises(ConventionError, match=r"symseq\.-relu\(-x\)|-relu\(-x\)"):
        require_explicit_relu(sp.Min(0, x))
    require_explicit_relu(sp.Max(x, sp.Rational(1, 4)) + relu(x))  # a Max without a zero, and relu itself: fine
    assert sp.diff(sp.Max(x, 0), x).subs(x, 0) == sp.S.Half  # why: SymPy's tie convention is not ReLU'(0) = 0


def _asked(monkeypatch):
    """The objects SymPy's assumptions system is asked about, from now on (it caches per object, so new symbols)."""
    import sys

    assumptions = sys.modules["sympy.core.assumptions"]  # the module (sympy.core.assumptions is also a name in it)
    asked, ask = [], assumptions._ask

    def counting(fact, obj):
        asked.append(obj)
        return ask(fact, obj)

    monkeypatch.setattr(assumptions, "_ask", counting)
    return asked


@pytest.mark.parametrize("make", [
    lambda u, v: sp.tanh(u), lambda u, v: sigmoid(u) * v + sp.exp(-u ** 2), lambda u, v: relu(u - v) ** 2,
    lambda u, v: softmax(0, u, v), lambda u, v: gelu(u) / (1 + v ** 2), lambda u, v: sp.log(1 + sp.exp(u * v)),
    lambda u, v: v, lambda u, v: sp.Integer(3),
    # a bound u (Lambda, Subs) is not the free u: the question whether a subexpression uses x is its free symbols'
    lambda u, v: sp.Lambda(u, u * v)(v) + u, lambda u, v: v * sp.Subs(sp.Function("f")(u).diff(u), u, v) + u * v,
    lambda u, v: sp.tanh(u * v) * sp.tanh(u * v + 1) * (u + v) ** 3])
def test_partial_is_sympys_derivative(make):
    u, v = sp.symbols("u v", real=True)
    e = make(u, v)
    for x in (u, v):
        assert partial(e, x) == sp.diff(e, x)


def test_partial_asks_the_assumptions_system_nothing_about_the_derivative(monkeypatch):
    # sympy.diff asks whether 1 − tanh(u)² is zero: 5–25 ms of assumption queries (is tanh(u) real? is Im(u) a
    # multiple of π?) for each new expression, most of a small backward pass
    u = sp.Symbol("u_partial_fresh", real=True)
    asked = _asked(monkeypatch)
    d = partial(sp.tanh(u), u)
    assert d == 1 - sp.tanh(u) ** 2
    assert d not in asked  # whether 1 − tanh(u)² is zero: the query that runs through tanh, Im(u) and π
