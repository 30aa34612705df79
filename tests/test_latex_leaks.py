"""The LaTeX of every bundled derivation holds mathematics and words only: no internal message, no ``_`` outside
mathematics (but in the typewriter type of code and file names), no NumPy slice in a subscript, no code name set
as mathematics; and a display that cannot be rendered is an error, never typeset."""

import re

import pytest
import sympy as sp
from pylatexenc import macrospec
from pylatexenc.latexwalker import (LatexCharsNode, LatexEnvironmentNode, LatexGroupNode, LatexMacroNode,
                                    LatexMathNode, LatexWalker, get_default_latex_context_db)

from symseq import Derivation
from symseq.cli import main
from symseq.errors import ClaimError
from symseq.present.latex import derivation_latex, section_latex
from symseq.present.views import latex_label

MATH_ENVIRONMENTS = {"align*", "gather*", "aligned", "pmatrix", "bmatrix", "matrix", "array"}
TEXT_IN_MATH = {"text", "textbf", "textit", "texttt", "mbox", "hbox", "emph"}
# An internal message in a handout: a renderer's excuse, a Python exception or traceback, a character with no LaTeX
# spelling. ("SymPy" alone is not one: claims name "SymPy's diff" as their reference.)
INTERNAL = ("cannot be shown", "cannot be rendered", "SymPy Float", "Traceback", "Error", "[U+")


def _context():
    db = get_default_latex_context_db()
    one = ("ensuremath", "boxed", "text", "texttt", "textbf", "textit", "emph", "mathrm", "mathbf", "boldsymbol",
           "operatorname", "hbox", "mathtt", "paragraph", "subsection", "section")
    db.add_context_category("symseq", prepend=True, macros=[macrospec.std_macro(m, False, 1) for m in one]
                            + [macrospec.std_macro("resizebox", False, 3)])
    return db


def tex_leaks(tex: str) -> list[str]:
    """What of ``tex`` is not mathematics or words, read with pylatexenc (math mode followed through ``$…$``,
    math environments, ``\\ensuremath`` and ``\\text`` inside math):

    * an underscore in text, bare or escaped (``\\_``), except inside ``\\texttt`` (code, a file name);
    * a slice in a subscript (``_{[``) or NumPy's half-open range in one (``_{:,0:2}``);
    * a code name set letter by letter as mathematics: a subscript of two letters or more without braces
      (``\\mu_{H_enc}``, set μ_{H_e}nc), two words as a name and its subscript (``\\mathrm{embed}_{\\mathrm{dim}}``);
    * a caret or circumflex set as a text accent (``\\textasciicircum``, ``\\^{y}``);
    * an internal message (:data:`INTERNAL`).
    """
    out = []
    nodes, _, _ = LatexWalker(tex, latex_context=_context(), tolerant_parsing=True).get_latex_nodes()

    def line(pos):
        return tex.count("\n", 0, pos) + 1

    def visit(ns, math, code=False):
        for n in ns or []:
            if isinstance(n, LatexCharsNode) and "_" in n.chars and not math and not code:
                out.append(f"line {line(n.pos)}: _ in text: {n.chars[:60]!r}")
            elif isinstance(n, LatexMathNode):
                visit(n.nodelist, True)
            elif isinstance(n, LatexEnvironmentNode):
                visit(n.nodelist, math or n.environmentname in MATH_ENVIRONMENTS, code)
            elif isinstance(n, LatexGroupNode):
                visit(n.nodelist, math, code)
            elif isinstance(n, LatexMacroNode):
                if n.macroname == "_" and not math and not code:
                    out.append(f"line {line(n.pos)}: \\_ in text: {tex[max(0, n.pos - 30):n.pos + 20]!r}")
                inner = True if n.macroname == "ensuremath" else False if n.macroname in TEXT_IN_MATH else math
                visit(n.nodeargd.argnlist if n.nodeargd else [], inner, code or n.macroname == "texttt")

    visit(nodes, False)
    body = re.sub(r"(?m)^%.*$", "", tex)  # comments are not typeset
    code_free = re.sub(r"\\texttt\{[^{}]*\}", "", body)
    for what, pattern in (("a slice in a subscript", r"_\{\["), ("a half-open range", r"_\{[^{}]*\d:\d"),
                          ("a code name as a subscript", r"(?<!\\)_[A-Za-z]{2}"),
                          ("two words as a name", r"\\mathrm\{(?!softmax|logsumexp)[a-z]{2,}\}_\{\\mathrm\{[a-z]{2,}\}\}"),
                          ("a caret as a text accent", r"\\textasciicircum|\\\^\{"),
                          ("an internal message", "|".join(re.escape(w) for w in INTERNAL))):
        out += [f"line {line(m.start())}: {what}: {code_free[max(0, m.start() - 30):m.end() + 20]!r}"
                for m in re.finditer(pattern, code_free)]
    return out


def test_tex_leaks_finds_each_kind_of_leak():
    assert tex_leaks(r"Source: \texttt{004\_d.txt}. $\mu_{H_{\mathrm{enc}}}$ and $Z_{1,:}$, $X_{:,0..1}$.") == []
    for leak in (r"a \_ b", r"$Z_{[1,:]}$", r"$Q_{:,0:2}$", r"$\mu_{H_enc}$", r"$\mathrm{embed}_{\mathrm{dim}}$",
                 r"factor\textasciicircum{}n", r"the forecast \^{y}", r"x cannot be shown: value contains the SymPy Float",
                 r"\begin{tabular}{l}a_b\end{tabular}"):
        assert tex_leaks(leak), leak


@pytest.mark.parametrize("label, tex", [
    ("Figure 3 (left): |factor|^n", r"Figure 3 (left): $|\mathrm{factor}|^{n}$"),
    ("every z_t > 0: ∂h_3/∂h_0 = w_h³", r"every $z_{t}$ \textgreater{} 0: $\partial h_{3}$/$\partial h_{0}$ = "
                                         r"$w_{h}^{3}$"),
    ("x_t W_xᵀ", r"$x_{t}$ $W_{x}^{\top}$"),
    ("tanh RNN with W_h = [[0, 2], [0, 0]]", r"tanh RNN with $W_{h}$ = $\begin{pmatrix}0 & 2 \\ 0 & 0\end{pmatrix}$"),
    ("two scores [0, 8]", r"two scores $[0, 8]$"),
    ("output (batch_first does not change it)", r"output (\texttt{batch\_first} does not change it)"),
    ("A = softmax_rows(S)", r"A = $\mathrm{softmax}_{\mathrm{rows}}$(S)"),
    ("the forecast ŷ, café", r"the forecast \ensuremath{\hat{y}}, caf\'e"),
    ("μ_{H_enc} of final H_enc", r"$\mu_{H_{\mathrm{enc}}}$ of final $H_{\mathrm{enc}}$"),
    (r"h_{3,0}^(0) = 0.2+\sin 3", r"$h_{3,0}^{(0)}$ = 0.2+$\sin$ 3"),
])
def test_labels_are_mathematics_and_words(label, tex):
    assert latex_label(label) == tex
    assert tex_leaks(tex) == []


def _float_derivation():
    d = Derivation("float-demo", title="a table with a SymPy Float", source="test")

    @d.section("§1 Tables")
    def one(s):
        s.show_table("Table 1", sp.Matrix([[sp.Float(1.0, 15)]]))
        s.show_table("Table 2", sp.eye(2))

    return d


def test_a_display_that_cannot_be_rendered_is_an_error_naming_it():
    """Before, "Table 1 cannot be shown: … the SymPy Float …" was typeset into the handout and the run passed."""
    d = _float_derivation()
    with pytest.raises(ClaimError, match=r"float-demo · §1 Tables · Table 1: the display cannot be rendered: .*Float"):
        derivation_latex(d)
    with pytest.raises(ClaimError, match="Table 1"):
        section_latex(d.sections[0])


def test_symseq_latex_exits_2_naming_the_display(tmp_path, monkeypatch, capsys):
    (tmp_path / "derivations").mkdir()
    (tmp_path / "derivations" / "float_demo.py").write_text(
        "import sympy as sp\nfrom symseq import Derivation\n\n"
        "derivation = Derivation('float-demo', title='a table with a SymPy Float', source='test')\n\n\n"
        "@derivation.section('§1 Tables')\ndef one(s):\n"
        "    s.show_table('Table 1', sp.Matrix([[sp.Float(1.0, 15)]]))\n")
    monkeypatch.chdir(tmp_path)
    assert main(["latex", "float-demo", "--no-bundled", "--no-cache"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "float-demo · §1 Tables · Table 1: the display cannot be rendered" in err
    assert main(["show", "float-demo", "--no-bundled", "--no-cache"]) == 2
    assert "Table 1: the display cannot be rendered" in capsys.readouterr().err
