import sympy as sp

from symseq import Ledger, ops
from symseq.functions import sigmoid
from symseq.present.notation import Notation, latex_name, unicode_name
from symseq.present.tex import tex_math


def test_names_follow_the_handouts():
    assert unicode_name("g_0^z") == "g₀ᶻ"
    assert unicode_name("h_{-1}") == "h₋₁"
    assert unicode_name("H^(0)") == "H⁽⁰⁾"
    assert unicode_name("W_Q") == "W_Q"
    assert unicode_name("phi") == "φ"
    assert latex_name("g_0^z") == "g_{0}^{z}"
    assert latex_name("W_out") == r"W_{\mathrm{out}}"


def test_w_prints_as_in_the_handout():
    n = Notation("unicode")
    w = 1 / (1 + sp.exp(1 / sp.sqrt(2)))
    assert n.expr(w) == "1/(1 + e^{1/√2})"
    assert Notation("latex").expr(w) == r"\frac{1}{1 + e^{\frac{1}{\sqrt{2}}}}"


def test_rows_print_as_formulas():
    L = Ledger()
    H = L.input("H", shape=(2, 3))
    W = L.parameter("W_Q", shape=(3, 2))
    Q = L.define("Q", H @ W)
    L.define("S", (Q @ Q.T) / sp.sqrt(2))
    n = Notation("unicode", L)
    assert n.render(L["Q"].node) == "H W_Q"
    assert n.render(L["S"].node) == "Q Qᵀ/√2"
    assert Notation("latex", L).render(L["S"].node) == r"\frac{Q Q^{\top}}{\sqrt{2}}"


def test_adjoint_of_tanh_is_parenthesised():
    L = Ledger()
    z = L.input("z_0", shape=(1, 3))
    h = L.define("h_0", ops.Map(sp.tanh, z))
    L.define("L", ops.Sum(h, None))
    L.backward("L", names={"z_0": "g_0^z", "h_0": "g_0^h"})
    assert Notation("unicode", L).render(L["g_0^z"].node) == "g₀ʰ ⊙ (1 − tanh²(z₀))"
    assert Notation("latex", L).render(L["g_0^z"].node) == (
        r"g_{0}^{h} \odot \left(1 - \tanh^{2}{\left(z_{0} \right)}\right)")


def test_latex_never_stacks_two_superscripts():
    L = Ledger()
    g = L.input("g_0^z", shape=(1, 3))
    x = L.input("x_0", shape=(1, 2))
    W = L.input("W_Q", shape=(2, 2))
    L.define("G", g.T @ x)
    L.define("w", W[0, 1])
    n = Notation("latex", L)
    assert n.render(L["G"].node) == r"{g_{0}^{z}}^{\top} x_{0}"
    assert n.render(L["w"].node) == r"{W_{Q}}_{01}"
    assert Notation("latex", L, bold=True).render(L["G"].node) == r"{\mathbf{g}_{0}^{z}}^{\top} \mathbf{x}_{0}"


def test_softmax_names_its_axis_and_sqrt_needs_no_extra_parentheses():
    L = Ledger()
    S = L.input("S", shape=(2, 2))
    L.define("A", ops.SoftmaxRows(S))
    v = L.input("v", shape=(2, 1))
    L.define("r", ops.Map(sp.Lambda(sp.Symbol("t"), sp.sqrt(sp.Symbol("t"))), v + 1))
    assert Notation("unicode", L).render(L["A"].node) == "softmax_rows(S)"
    assert Notation("latex", L).render(L["A"].node) == r"\operatorname{softmax}_{\mathrm{rows}}\left(S\right)"
    assert Notation("latex", L).render(L["r"].node) == r"\sqrt{v + 1}"
    assert Notation("unicode", L).render(L["r"].node) == "√(v + 1)"


def test_root_denominators_print_as_the_handouts():
    I, x = sp.Symbol("I"), sp.Symbol("x")
    assert Notation("unicode").expr(I / sp.sqrt(2)) == "I/√2"
    assert Notation("latex").expr(I / sp.sqrt(2)) == r"\frac{I}{\sqrt{2}}"
    assert Notation("latex").expr(-x / sp.sqrt(2)) == r"- \frac{x}{\sqrt{2}}"


def test_display_names_serve_latex_too():
    L = Ledger()
    L.input("yhat", display="ŷ")
    assert Notation("latex", L).name("yhat") == r"\hat{y}"
    assert unicode_name("S_masked") == "S_masked"


def test_stacked_blocks_use_a_matrix_environment():
    L = Ledger()
    a = L.input("a", shape=(1, 2))
    b = L.input("b", shape=(2, 2))
    L.define("C", ops.Concat([a, b], axis=0))
    L.define("D", ops.Concat([b, b], axis=1))
    n = Notation("latex", L)
    assert n.render(L["C"].node) == r"\begin{bmatrix}a \\ b\end{bmatrix}"  # not a bare \\ inside an align
    assert n.render(L["D"].node) == r"\left[b \;\middle|\; b\right]"


def test_a_negated_factor_keeps_its_parentheses():
    """x·(−y) built unevaluated (as an author may write it) printed as "x - y" in LaTeX and "x −y" in Unicode."""
    x, y = sp.symbols("x y")
    e = sp.Mul(x, -y, evaluate=False)
    assert Notation("latex").expr(e) == r"x \left(- y\right)"
    assert Notation("unicode").expr(e) == "x (−y)"
    assert Notation("latex").expr(sp.Mul(x, -1, evaluate=False)) == r"\left(-1\right) x"
    L = Ledger()
    L.input("a"), L.input("b")
    L.define("p", ops.Scalar(sp.Mul(L["a"].symbol, -L["b"].symbol, evaluate=False)))
    assert Notation("latex", L).render(L["p"].node) == r"a \left(- b\right)"


def test_two_numbers_in_a_product_are_not_run_together():
    x = sp.Symbol("x")
    e = sp.Mul(2, 3, x, evaluate=False)  # 2·3·x printed "2 3 x" reads as 23x
    assert Notation("unicode").expr(e) == "2·3 x"
    assert Notation("latex").expr(e) == r"2 \cdot 3 x"


def test_indexing_prints_one_reading():
    L = Ledger()
    X = L.input("X", shape=(12, 12))
    W = L.input("W", shape=(3, 2))
    n, u = Notation("latex", L), Notation("unicode", L)
    # entry (1, 10) and entry (11, 0) printed alike as X_{110}
    assert n.render(X[1, 10]) == "X_{1,10}" and n.render(X[11, 0]) == "X_{11,0}" and n.render(X[0, 1]) == "X_{01}"
    # rows (0, 2) and columns (1, 3) printed as X_{0,2,1,3}: where do the rows end? Index sets are braced
    assert n.render(ops.Slice(X, [0, 2], [1, 3])) == r"X_{\{0,2\},\{1,3\}}"
    assert u.render(ops.Slice(X, [0, 2], [1, 3])) == "X[{0,2}, {1,3}]"
    # a run of rows, both ends included, as the entries are numbered from 0 (NumPy's X[0:2, :])
    assert n.render(ops.Slice(X, slice(0, 2), slice(None))) == "X_{0..1,:}"
    assert u.render(ops.Slice(X, slice(0, 2), slice(None))) == "X[0..1, :]"
    assert n.render(ops.Slice(X, slice(None), slice(4, 8))) == "X_{:,4..7}"
    assert n.render(ops.Slice(X, 1, slice(None))) == "X_{1,:}"
    # a subscript after a superscript sits on the same base: H^{(0)}_{01} is H_{01} to the (0)
    H = L.input("H^(0)", shape=(2, 2))
    assert n.render(H[0, 1]) == "{H^{(0)}}_{01}"
    # rows 0 and 2 of W printed W[0,2] in Unicode, the same as its entry (0, 2)
    assert u.render(ops.TakeRows(W, [0, 2])) == "W[{0,2}, :]" != u.render(W[0, 1])
    assert n.render(ops.TakeRows(W, [2])) == "W_{2,:}"
    assert n.render(ops.TakeRows(W, [0, 2], label="k_t")) == "W[k_t]"


def test_products_inside_an_entrywise_function_of_a_matrix_are_hadamard():
    """σ′ of a matrix printed (1 − σ(Z)) σ(Z): two matrices side by side are their matrix product."""
    L = Ledger()
    Z = L.input("Z", shape=(2, 3))
    Y = L.input("Y", shape=(2, 3))
    A = L.define("A", ops.Map(sigmoid, Z))
    L.define("loss", ops.Sum(A * Y, None))
    L.backward("loss", names={"Z": "g^Z", "A": "g^A"})
    assert Notation("unicode", L).render(L["g^Z"].node) == "g^A ⊙ ((1 − σ(Z)) ⊙ σ(Z))"
    assert Notation("latex", L).render(L["g^Z"].node) == (
        r"g^{A} \odot \left(\left(1 - \sigma\left(Z\right)\right) \odot \sigma\left(Z\right)\right)")
    u = sp.Symbol("u")
    assert Notation("latex", L).render(ops.Map(sp.Lambda(u, -2 * u * sp.exp(u) / (1 + u)), Z)) == (
        r"- 2 \frac{Z \odot e^{Z}}{Z + 1}")
    L.input("z")
    z = ops.Ref("z", (), L)  # a scalar argument keeps the ordinary product
    assert Notation("unicode", L).render(ops.Map(sp.Lambda(u, u * sp.tanh(u)), z)) == "z tanh(z)"


def test_a_sum_never_runs_two_signs_together():
    L = Ledger()
    X, Y = L.input("X", shape=(2, 2)), L.input("Y", shape=(2, 2))
    L.input("a")
    a = ops.Ref("a", (), L)
    n, u = Notation("latex", L), Notation("unicode", L)
    assert u.render(ops.Add(X, ops.Neg(ops.Neg(Y)))) == "X − (−Y)"  # was X − −Y
    assert n.render(ops.Add(X, ops.Neg(ops.Neg(Y)))) == r"X - \left(-Y\right)"
    assert u.render(ops.Add(a, ops.Scalar(-L["a"].symbol / 2))) == "a − a/2"  # was a + −a/2
    assert n.render(ops.Add(a, ops.Const(-sp.sqrt(3) / 2))) == r"a - \frac{\sqrt{3}}{2}"
    v = sp.Symbol("v")
    assert u.render(ops.Add(X, ops.Map(sp.Lambda(v, -2 * v), Y))) == "X + (−2 Y)"  # was X + −2 Y


def test_a_fraction_drops_only_parentheses_around_all_of_its_part():
    L = Ledger()
    X, Y = L.input("X", shape=(2, 2)), L.input("Y", shape=(2, 2))
    u = sp.Symbol("u")
    top = ops.Map(sp.Lambda(u, sp.diff(sigmoid(u), u)), X)  # (1 − σ(X)) ⊙ σ(X): not one parenthesised group
    assert Notation("latex", L).render(top / Y) == (
        r"\frac{\left(1 - \sigma\left(X\right)\right) \odot \sigma\left(X\right)}{Y}")
    assert Notation("latex", L).render((X + Y) / Y) == r"\frac{X + Y}{Y}"


def test_what_prints_with_a_slash_or_a_superscript_is_grouped():
    L = Ledger()
    X = L.input("X", shape=(2, 3))
    L.input("a")
    a = L["a"].symbol
    u, v = Notation("unicode", L), Notation("latex", L)
    t = sp.Symbol("t")
    assert u.render(ops.Div(X, ops.Const(sp.Rational(1, 2)))) == "X / (1/2)"  # was X / 1/2, read (X/1)/2
    assert u.render(ops.Div(X, ops.Scalar(1 / a))) == "X / (1/a)"
    E = ops.Map(sp.exp, X)
    assert u.render(ops.Map(sp.Lambda(t, 1 - t**2), E)) == "1 − (e^X)²"  # was 1 − e^X², read e^(X²)
    assert u.render(E.T) == "(e^X)ᵀ" and v.render(E.T) == r"\left(e^{X}\right)^{\top}"
    assert v.render(ops.Entry(E, 1, 2)) == r"\left(e^{X}\right)_{12}"
    assert v.render(ops.Map(sp.Lambda(t, 1 - t**2), E)) == r"1 - \left(e^{X}\right)^{2}"


def test_a_root_takes_one_word_or_parentheses():
    """√σ(Y) and √W_Q read as (√σ)(Y) and (√W)_Q: the root of more than one word is parenthesised."""
    L = Ledger()
    Y = L.input("Y", shape=(2, 2))
    W = L.input("W_Q", shape=(2, 2))
    t = sp.Symbol("t")
    root = sp.Lambda(t, sp.sqrt(t))
    u = Notation("unicode", L)
    assert u.render(ops.Map(root, ops.Map(sigmoid, Y))) == "√(σ(Y))"
    assert u.render(ops.Map(root, W)) == "√(W_Q)"
    assert u.render(ops.Map(root, Y)) == "√Y"
    assert u.expr(sp.sqrt(2) * sp.Symbol("x")) == "√2 x"
    assert tex_math(u.render(ops.Map(root, ops.Map(sigmoid, Y)))) == r"\sqrt{\sigma(Y)}"  # LaTeX reads it the same


def test_a_negated_negative_keeps_its_parentheses():
    a = sp.Symbol("a")
    e = sp.Mul(-1, -a, evaluate=False)  # −(−a) printed "- - a"
    assert Notation("latex").expr(e) == r"- \left(- a\right)"
    assert Notation("unicode").expr(e) == "−(−a)"
