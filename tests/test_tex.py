"""Unicode names and sentences become ASCII LaTeX that compiles (present/tex.py)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from symseq.present.notation import latex_name
from symseq.present.tex import mathjax_text, tex_math, tex_text

from present_helpers import pdflatex


def test_math_commands_for_the_handouts_unicode():
    assert tex_math("ŷ − y") == r"\hat{y} - y"
    assert tex_math("x̂") == r"\hat{x}"  # base letter and combining hat
    assert tex_math("ε") == r"\epsilon"
    assert tex_math("∂ℒ/∂W_Q") == r"\partial\mathcal{L}/\partial W_Q"
    assert tex_math("g₀ᶻ") == "g_{0}^{z}"
    assert tex_math("H⁽⁰⁾") == "H^{(0)}"
    assert tex_math("Wᵀ") == r"W^{\top}"
    assert tex_math("a ⊙ b") == r"a \odot b"
    assert tex_math("1/√2") == r"1/\sqrt{2}"
    assert tex_math("√(v + ε)") == r"\sqrt{v + \epsilon}"
    assert tex_math("αx") == r"\alpha x"  # a control word never swallows the next letter


def test_text_escapes_specials_and_typography():
    assert tex_text("Week 8 — One Head §4") == r"Week 8 --- One Head \S{}4"
    assert tex_text("50% & $5 #1 a_b {c} ~ ^ \\") == (
        r"50\% \& \$5 \#1 a\_b \{c\} \textasciitilde{} \textasciicircum{} \textbackslash{}")
    assert tex_text("p(B|AB)") == r"p(B\textbar{}AB)"
    assert tex_text("café") == r"caf\'e"
    assert tex_text("φ′(z₀)") == r"\ensuremath{\phi}\ensuremath{'}(z\ensuremath{_{0}})"
    assert tex_text("日") == "[U+65E5]"  # no LaTeX spelling: visible, and still compiles


def test_names_with_unicode_become_commands():
    assert latex_name("ŷ") == r"\hat{y}"
    assert latex_name("∂L/∂ŷ") == r"\frac{\partial L}{\partial \hat{y}}"
    assert latex_name("ε_t") == r"\epsilon_{t}"
    assert latex_name("h̃_1") == r"\tilde{h}_{1}"
    assert latex_name("W_Q", bold=True) == r"\mathbf{W}_{Q}"
    assert latex_name("mu_LN", bold=True) == r"\boldsymbol{\mu}_{\mathrm{LN}}"
    assert latex_name("v_{LN_1}^{(0)}") == r"v_{\mathrm{LN}_{1}}^{(0)}"
    assert latex_name("a#b") == r"a\#b"
    assert latex_name("p%") == r"p\%"


def _balanced(s):
    depth = 0
    for i, ch in enumerate(s):
        if ch in "{}" and i > 0 and s[i - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_becomes_ascii_with_balanced_braces(s):
    out = tex_text(s)
    assert out.isascii()
    assert _balanced(out)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_mathjax_text_keeps_braces_out_of_text_runs(s):
    out = mathjax_text(s)
    for run in out.split(r"\text{")[1:]:
        body = run.split("}")[0]
        assert "{" not in body and "\\" not in body


def test_a_page_of_unicode_compiles(tmp_path):
    names = ["ŷ", "x̂", "ε_t", "h̃_1", "∂L/∂ŷ", "W_out", "g_0^z", "H^(0)", "S_{6j}", "φ′", "σ", "Δ_W", "ℒ", "a#b",
             "50%", "x~y", "c&d", "p$q", "u\\v"]
    sentences = ["Week 8 — One Head, and a Decoder", "§4 The forward pass by hand", "p(B|AB) ≈ 0.79 ± 0.01",
                 "loss −log p, nats", "Var(q·k/√d_k) at d_k=2", "[O⁽¹⁾ O⁽²⁾] is T×h d_v", "café naïve Größe",
                 "10 % & $ # _ { } ~ ^ \\ < > |", "日本", "≤ ≥ ≠ → ∈ ∇ ⊙ ⊗ ∞"]
    body = "\n".join([f"${latex_name(n)}$ \\par" for n in names] + [tex_text(s) + r"\par" for s in sentences]
                     + [f"${tex_math(s)}$\\par" for s in ["ŷ − y", "g₀ᶻ ⊙ (1 − tanh²(z₀))", "√(v + ε)", "Wᵀ"]])
    doc = "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    assert doc.isascii()
    pdflatex(doc, tmp_path)


def test_composed_symbols_stay_whole():
    assert tex_text("p₀ ≠ p₃") == r"p\ensuremath{_{0}} \ensuremath{\neq} p\ensuremath{_{3}}"
    assert tex_math("½(ŷ − y)²") == r"\tfrac{1}{2}(\hat{y} - y)^{2}"


def test_formulas_from_a_latex_source_are_typeset_and_compile(tmp_path):
    from symseq.present.tex import source_formula_text

    cases = {
        r"\mathcal L=\frac12(\widehat y-y)^2": r"$\mathcal L=\frac12(\widehat y-y)^2$",
        r"\phi'(z)=1 for z>0; 0 for z<0": r"$\phi'(z)=1$ for $z>0; 0$ for $z<0$",
        r"\mu_t = \frac15 Σ_c h_{t,c} (population variance)": r"$\mu_t = \frac15 \Sigma_c h_{t,c}$ (population variance)",
        r"\lfloor j/2\rfloor is the integer part of j/2": r"$\lfloor j/2\rfloor$ is the integer part of $j/2$",
        r"\newcommand x": r"\texttt{\textbackslash{}newcommand x}",  # not a formula command: shown verbatim
        r"\frac{1}{2": r"\texttt{\textbackslash{}frac\{1\}\{2}",  # unbalanced
    }
    for src, want in cases.items():
        assert source_formula_text(src) == want
    doc = ("\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n"
           + "\n".join(source_formula_text(s) + r"\par" for s in cases) + "\n\\end{document}\n")
    pdflatex(doc, tmp_path)


def test_a_subscript_that_is_a_word_is_upright():
    """d_head set d with subscript h followed by "ead"; the word is the subscript, upright."""
    assert tex_math("T×d_head", words=True) == r"T\times d_{\mathrm{head}}"
    assert tex_math("d_{model}", words=True) == r"d_{\mathrm{model}}"
    assert tex_math("d_k") == "d_k" and tex_math("A_{ij}") == "A_{ij}"  # one letter, or two indices, stay
