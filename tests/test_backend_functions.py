"""Every function of symseq.functions evaluates alike on every backend, with the same conventions."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from symseq import Ledger, compile, evaluate, ops
from symseq.functions import gelu, gelu_tanh, logsumexp, relu, relu_at_zero, sigmoid, softmax

x = sp.Symbol("x", real=True)
POINTS = ["-3", "-1/2", "0", "1/3", "2"]
CASES = {
    "sigmoid": sigmoid(x),
    "relu": relu(x),
    "relu'(0)=0": sp.diff(relu(x), x),
    "relu'(0)=1/2": sp.diff(relu_at_zero(x, sp.S.Half), x),
    "gelu": gelu(x),
    "gelu_tanh": gelu_tanh(x),
    "tanh'": sp.diff(sp.tanh(x), x),
    "max": sp.Max(x, sp.Rational(1, 4)),
    "sqrt2*int": sp.sqrt(2) * 3 * x,
}


def exact_value(expr, point):
    return sp.N(expr.subs(x, sp.Rational(point)), 40)


def backends():
    out = ["numpy", "mpmath"]
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        out.append("torch")
    return out


def build(expr):
    L = Ledger()
    X = L.input("X", [[sp.Rational(p) for p in POINTS]])
    s = L.input("s", "0.5")
    L.define("Y", ops.Map(sp.Lambda(x, expr), X))
    L.define("y", expr.subs(x, s))
    return L


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("backend", backends())
def test_function_on_backend(name, backend):
    expr = CASES[name]
    L = build(expr)
    for out in (evaluate(L, backend, dps=40), compile(L, ["Y", "y"], backend=backend, dps=40)()):
        Y = out["Y"]
        Y = Y.detach().numpy() if hasattr(Y, "detach") else Y
        for j, p in enumerate(POINTS):
            ref = float(exact_value(expr, p)) if expr.subs(x, sp.Rational(p)).is_number else None
            got = float(np.asarray(Y, dtype=object)[0, j])
            assert got == pytest.approx(ref, rel=1e-14, abs=1e-15), (name, backend, p)


def test_relu_derivative_convention_is_the_same_everywhere():
    L = build(sp.diff(relu(x), x))
    for b in backends():
        Y = evaluate(L, b)["Y"]
        Y = Y.detach().numpy() if hasattr(Y, "detach") else np.asarray(Y, dtype=object)
        assert float(Y[0, 2]) == 0.0, b  # ReLU'(0) = 0


@pytest.mark.parametrize("backend", backends())
def test_softmax_and_logsumexp_are_stable(backend):
    L = Ledger()
    a, b_, c = L.input("a", 1000), L.input("b", 999), L.input("c", -sp.oo)
    L.define("p", softmax(0, a, b_, c))
    L.define("m", softmax(2, a, b_, c))
    L.define("lse", logsumexp(a, b_, c))
    Z = L.input("Z", [[1000, 999, -1000]])
    L.define("P", ops.SoftmaxRows(Z))
    L.define("LSE", ops.LogSumExpRows(Z))
    out = evaluate(L, backend, dps=40)
    e1 = 1 / (1 + mpmath.exp(-1))
    assert float(out["p"]) == pytest.approx(float(e1), rel=1e-14)
    assert float(out["m"]) == 0.0
    assert float(out["lse"]) == pytest.approx(1000 + float(mpmath.log(1 + mpmath.exp(-1))), rel=1e-15)
    P = out["P"]
    P = P.detach().numpy() if hasattr(P, "detach") else np.asarray(P, dtype=object)
    assert float(P[0, 0]) == pytest.approx(float(e1), rel=1e-14)


def test_torch_handles_what_lambdify_printers_miss():
    torch = pytest.importorskip("torch")
    L = Ledger()
    X = L.input("X", [[1, 2], [3, 4]])
    s = L.input("s", 2)
    L.define("Y", (X @ X.T) * sp.sqrt(2) + ops.Map(sp.Lambda(x, sp.Max(x, 2) + sp.Heaviside(x - 2, 0)), X))
    L.define("y", sp.sqrt(2) * s + sp.Max(s, 3))
    out = compile(L, ["Y", "y"], backend="torch")()
    M = np.array([[1, 2], [3, 4]])
    ref = (M @ M.T) * np.sqrt(2) + np.maximum(M, 2) + (M > 2)
    np.testing.assert_allclose(out["Y"].numpy(), ref, rtol=1e-15)
    assert float(out["y"]) == pytest.approx(2 * np.sqrt(2) + 3, rel=1e-15)
    assert out["Y"].dtype == torch.float64
