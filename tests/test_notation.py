import sympy as sp

from symseq import Ledger
from symseq.present.notation import Notation, latex_name, unicode_name


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
    S = L.define("S", (Q @ Q.T) / sp.sqrt(2))
    n = Notation("unicode", L)
    assert n.render(L["Q"].node) == "H W_Q"
    assert n.render(L["S"].node) == "Q Qᵀ/√2"
    assert Notation("latex", L).render(L["S"].node) == r"\frac{Q Q^{\top}}{\sqrt{2}}"
