"""In Jupyter, ledgers, claims, sections, derivations and reports display as plain text and as LaTeX that MathJax
and pdflatex both accept, registered by type name; a derivation's display stays small."""

import os
import re
import subprocess
import sys

import pytest
import sympy as sp

from symseq.present.jupyter import DERIVATION_LATEX_LIMIT, latex, text
from symseq.present.latex import repr_latex

from present_helpers import demo, pdflatex


def _balanced(s):
    s = s.replace(r"\{", "").replace(r"\}", "")
    return s.count("{") == s.count("}")


def test_jupyter_latex_is_mathjax_math():
    d = demo()
    L = d.sections[1].ledgers[0]
    led = repr_latex(L)
    assert led.startswith("$$\\begin{aligned}") and led.endswith("\\end{aligned}$$") and _balanced(led)
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{x}}}" in led
    assert r"h_{0} &= \tanh{\left(z_{0} \right)} = \tanh{\left(\frac{1}{2} \right)} \approx 0.462117" in led
    claim = repr_latex(d.sections[1].claims[0])
    assert claim.startswith("$$") and claim.endswith(r"\checkmark$$") and _balanced(claim)
    sec = repr_latex(d.sections[2])
    assert r"\begin{array}{llll}" in sec and _balanced(sec)
    whole = repr_latex(d)
    assert whole.count("$$") % 2 == 0 and r"\textbf{Presentation demo" in whole
    assert "_repr_latex_" not in vars(type(L)) and "_repr_latex_" not in vars(type(d))  # the core renders nothing


class _Formatter:
    """What IPython's text/latex and text/plain formatters offer for registration: for_type_by_name."""

    def __init__(self):
        self.by_name = {}

    def for_type_by_name(self, module, name, func):
        self.by_name[(module, name)] = func

    def __call__(self, obj):  # IPython looks types up by (module, class name)
        return self.by_name[(type(obj).__module__, type(obj).__name__)](obj)


class _Pretty:
    """IPython's pretty printer as the text/plain hooks see it: p.text(...)."""

    def __init__(self):
        self.out = ""

    def text(self, s):
        self.out += s


def test_registered_with_ipython_by_type_name():
    import types

    from symseq.present.jupyter import register
    from symseq.verify.report import verify

    fmt, plain = _Formatter(), _Formatter()
    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(
        formatters={"text/latex": fmt, "text/plain": plain}))
    assert register(shell)
    d = demo()
    L, c, s = d.sections[1].ledgers[0], d.sections[1].claims[0], d.sections[2]
    for obj in (L, c, s):
        assert fmt(obj) == repr_latex(obj)
    assert fmt(d) == latex(d)
    for obj in (L, c, s, d, verify([d])):
        p = _Pretty()
        plain.by_name[(type(obj).__module__, type(obj).__name__)](obj, p, False)
        assert p.out == text(obj) and "object at 0x" not in p.out
    assert register() is False  # no shell running: nothing registered


def test_a_real_ipython_shell_shows_text_and_latex():
    """IPython's own formatters (``pip install 'symseq[notebook]'``): every object gets text/plain and text/latex.
    IPython comes with the test extra, so CI runs this; elsewhere it is skipped when IPython is absent."""
    if not os.environ.get("CI"):
        pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    from symseq.present.jupyter import register

    shell = InteractiveShell.instance()
    try:
        assert register(shell)
        d = demo()
        for obj in (d.sections[1].ledgers[0], d.sections[1].claims[0], d.sections[2], d):
            data, _ = shell.display_formatter.format(obj)
            assert data["text/plain"] == text(obj) and data["text/latex"] == latex(obj)
    finally:
        InteractiveShell.clear_instance()


def test_verify_does_not_import_presentation_at_load():
    code = ("import sys, symseq, symseq.authoring, symseq.verify.claims, symseq.verify.report, symseq.ledger;"
            "print(any(m.startswith('symseq.present') for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


def test_sections_show_their_tables_and_paired_rows():
    import re

    d = demo()
    rows = repr_latex(d.sections[0])
    assert r"$$\text{Table 3: forward rows beside backward rows}$$" in rows
    assert (r"z_{0} = w_{h} h_{-1} + w_{x} x_{0} = w_{x} x_{0} & "
            r"\frac{\partial \mathcal{L}}{\partial h_{-1}} = g_{0}^{z} w_{h} \\") in rows
    tables = repr_latex(d.sections[2])
    assert r"\text{0: a} & 0.2 & 0.9 & 0.4 & 1 & -0.2 \\" in tables
    assert tables.count(r"\times") >= 42  # the masked scores and weights
    for block in re.findall(r"\$\$(.*?)\$\$", rows + tables, re.S):
        assert _balanced(block)
        assert block.count(r"\begin{") == block.count(r"\end{")


def _wrong_claim_derivation():
    from symseq import Derivation

    d = Derivation("t-jupyter", title="Jupyter test", source="t.txt")

    @d.section("§1 one row")
    def one(s):
        L = s.ledger("a half")
        x = L.input("x", sp.Rational(1, 2))
        y = L.define("y", 2 * x)
        s.claim("1", y, what="y")
        s.claim("0.6", x, what="x, misprinted")

    return d


def test_plain_reprs_say_what_an_object_holds():
    """Before: ``<symseq.ledger.Ledger object at 0x…>``, and a claim's or section's dataclass dump of every field."""
    from symseq.verify.report import verify

    d = demo()
    L, s = d.sections[1].ledgers[0], d.sections[1]
    assert repr(L) == ("Ledger('tanh RNN with x = (0.5, −1, 2)': leaves x_0, x_1, x_2, w_x, w_h, w_o, … "
                       "(8 in all); 8 forward rows, 15 adjoint rows)")
    assert repr(s) == "Section('§2 A numeric tanh RNN' of present-demo: 1 ledger, 1 claim, 2 displays)"
    assert repr(s.claims[0]) == "Claim('present-demo::§2 A numeric tanh RNN::2 z_0 = 2 w_x x_0 = 1', printed '1': ok)"
    w = _wrong_claim_derivation()
    bad = w.sections[0].claims[1]
    assert repr(bad).startswith("Claim('t-jupyter::§1 one row::x, misprinted', printed '0.6': mismatch: ")
    assert "correct 0.5" in repr(bad)
    assert repr(verify([w])) == "Report(1 derivation(s), 2 claims: ok 1, mismatch 1; fails)"
    assert repr(d) == "Derivation('present-demo', source='tests/data/present_demo.py', sections=3)"


def test_plain_text_displays_read_like_symseq_show():
    d = demo()
    led = text(d.sections[1].ledgers[0]).splitlines()
    assert led[0] == "tanh RNN with x = (0.5, −1, 2)"
    assert any(re.match(r" h₀ +tanh\(z₀\) +scalar +tanh\(1/2\) ≈ 0\.462117$", ln) for ln in led), led
    assert all(len(ln) <= 100 and ln == ln.rstrip() for ln in led)
    w = _wrong_claim_derivation()
    ok, bad = (text(c) for c in w.sections[0].claims)
    assert ok.splitlines()[0] == "OK  t-jupyter · §1 one row · y"
    assert bad.splitlines()[0] == "MISMATCH  t-jupyter · §1 one row · x, misprinted"
    assert "printed 0.6" in bad and "correct 0.5" in bad
    sec = text(w.sections[0])
    assert sec.splitlines()[0] == "§1 one row  (t-jupyter): 1 ledger, 2 claims, 0 displays; 1 ok, 1 mismatch"
    summary = text(d).splitlines()
    assert summary[0].endswith("(present-demo, tests/data/present_demo.py): 3 sections, 41 claims")
    assert summary[1:4] == ["  [0] §1 Forward and backward rows — 1 ledger, 0 claims: no claims",
                            "  [1] §2 A numeric tanh RNN — 1 ledger, 1 claim: 1 ok",
                            "  [2] §3 Attention over seven positions — 1 ledger, 40 claims: 40 ok"]


# Commands MathJax 3 (TeX input with the ams extension, as Jupyter loads it) and pdflatex with amsmath and amssymb
# both know, as the displays use them; anything else fails the test below until checked in both.
MATHJAX_AND_PDFLATEX = set("""
    text textbf mathbf mathrm mathcal boldsymbol operatorname frac tfrac sqrt surd left right middle quad
    allowbreak checkmark boxed hline partial approx top times wedge sim odot cdot hat widehat tilde widetilde bar
    nabla infty to leftarrow neq leq geq in circ pm ldots cdots lVert rVert lfloor rfloor sum prod tanh sin cos log exp
    max min mathtt alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau
    upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell begin end
""".split())
ENVIRONMENTS = {"aligned", "array", "pmatrix", "bmatrix"}


def mathjax_problems(display: str) -> list[str]:
    """What keeps a Jupyter LaTeX display from being mathematics as MathJax typesets it: text outside ``$$``, a
    block that pylatexenc cannot parse or whose braces or environments do not close, a command or environment
    outside :data:`MATHJAX_AND_PDFLATEX` and :data:`ENVIRONMENTS`, LaTeX source shown escaped (``\\backslash``,
    ``\\text{begin}``) and an underscore shown as a character outside ``\\mathtt`` (a name set as code)."""
    from pylatexenc.latexwalker import LatexWalker, LatexWalkerError

    problems = []
    if re.sub(r"\$\$.*?\$\$", "", display, flags=re.S).strip():
        problems.append("text outside $$ … $$")
    for block in re.findall(r"\$\$(.*?)\$\$", display, re.S):
        try:
            LatexWalker(block, tolerant_parsing=False).get_latex_nodes()
        except LatexWalkerError as exc:
            problems.append(f"does not parse: {exc}")
        if not _balanced(block) or block.count(r"\begin{") != block.count(r"\end{"):
            problems.append(f"unbalanced: {block[:120]}")
        unknown = set(re.findall(r"\\([A-Za-z]+)", block)) - MATHJAX_AND_PDFLATEX
        if unknown:
            problems.append(f"commands MathJax may not know: {sorted(unknown)}")
        if set(re.findall(r"\\begin\{([a-z*]+)\}", block)) - ENVIRONMENTS:
            problems.append("an environment MathJax does not typeset")
        if re.search(r"\\text\{(begin|end|left|right|frac)\}|\\backslash", block):
            problems.append(f"LaTeX source shown escaped: {block[:160]}")
        if "\\_" in re.sub(r"\\mathtt\{[^{}]*\}", "", block):
            problems.append(f"an underscore shown as a character: {block[:160]}")
    return problems


def test_mathjax_problems_are_found():
    assert mathjax_problems(r"$$\begin{aligned}x &= 1\end{aligned}$$") == []
    assert mathjax_problems(r"$$\backslash \text{begin}\{\text{array}\}$$")
    assert mathjax_problems(r"$$\begin{tabular}{l}x\end{tabular}$$")
    assert mathjax_problems(r"$$\text{embed}\_\text{dim}$$") and not mathjax_problems(r"$$\mathtt{embed\_dim}$$")
    assert mathjax_problems(r"$$\resizebox{x}$$") and mathjax_problems("$$x$$ and text") and mathjax_problems("$${x$$")


def _one_of_each_kind():
    """One claim of each kind and printed form of the bundled derivations: a decimal, a vector, a matrix printed
    as a LaTeX environment, a formula from a LaTeX source, a shape, a property stated in words and one stated
    with LaTeX, and a claim whose quantity is named with LaTeX commands."""
    from symseq.authoring import bundled

    def form(c):
        p = c.printed
        return (c.kind, "\\begin" in p, "\\" in p, "[" in p or "(" in p, "\\" in (c.what or ""))

    seen = {}
    for d in bundled():
        for s in d.sections:
            for c in s.claims:
                seen.setdefault(form(c), c)
    return list(seen.values())


def test_a_claim_of_every_kind_displays_as_mathjax_mathematics(tmp_path):
    """A claim printed as LaTeX showed its source escaped (``\\backslash \\text{begin}\\{\\text{array}\\}…``) and
    code names were set as text with underscores; now every kind of claim is mathematics, and compiles."""
    claims = _one_of_each_kind()
    assert {c.kind for c in claims} == {"value", "shape", "property"} and len(claims) >= 8
    assert any("\\begin{array}" in c.printed for c in claims)
    shown = [latex(c) for c in claims]
    for c, out in zip(claims, shown):
        assert mathjax_problems(out) == [], (c.printed, out)
    matrix = next(out for c, out in zip(claims, shown) if "\\begin{array}" in c.printed)
    assert re.search(r"\\begin\{array\}\{c+\}", matrix)
    doc = "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n" + "\n".join(shown) + \
        "\n\\end{document}\n"
    pdflatex(doc, tmp_path, encoding="utf-8")


def _every_display(d):
    """The LaTeX display of a derivation and of each of its sections, ledgers and claims."""
    out = [latex(d)]
    for s in d.sections:
        out += [latex(s)] + [latex(L) for L in s.ledgers] + [latex(c) for c in s.claims]
    return out


def test_the_latex_of_every_bundled_object_compiles_with_pdflatex_and_uses_only_mathjax_commands(tmp_path):
    """Before, Week 8's first ledger title "decoder at T=4, d=6, d_k=2, …" put a bare _ in \\text (pdflatex:
    Missing $ inserted), "O⁽¹⁾" became a double superscript, and "Why divide by √d_k" a Unicode error."""
    from symseq.authoring import bundled

    for d in bundled():
        shown = _every_display(d)
        body = "\n\n".join(shown)
        assert [p for out in shown for p in mathjax_problems(out)] == []
        used = set(re.findall(r"\\([A-Za-z]+)", body))
        assert used <= MATHJAX_AND_PDFLATEX, (d.name, sorted(used - MATHJAX_AND_PDFLATEX))
        assert set(re.findall(r"\\begin\{([a-z*]+)\}", body)) <= ENVIRONMENTS
        assert body.count("$$") % 2 == 0
        doc = "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n" + body + \
            "\n\\end{document}\n"
        log = pdflatex(doc, tmp_path, d.name, encoding="utf-8")
        assert "Unicode character" not in log


@pytest.mark.parametrize("bad", ["d_k and {x}", "O⁽¹⁾ 10⁻⁸", "√d_k", "a#b 50% c&d p$q u\\v x~y ^ < > |",
                                 "日本", "café — §4"])
def test_mathjax_text_compiles_with_pdflatex(bad, tmp_path):
    from symseq.present.tex import mathjax_text

    out = mathjax_text(bad)
    assert set(re.findall(r"\\([A-Za-z]+)", out)) <= MATHJAX_AND_PDFLATEX | {"backslash"}
    pdflatex("\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n$$" + out
             + "$$\n\\end{document}\n", tmp_path, encoding="utf-8")


def test_a_derivation_display_stays_small():
    """A derivation shows one line per section with its counts (29 KB of LaTeX for Week 8 before, 134 KB for the
    Week 06 encoder); each section is shown in full on its own."""
    from symseq.authoring import bundled

    for d in bundled():
        shown, plain = latex(d), text(d)
        assert len(shown.encode()) <= DERIVATION_LATEX_LIMIT and len(plain.encode()) <= DERIVATION_LATEX_LIMIT
        assert shown.count(r" \\" + "\n") == len(d.sections)  # a row per section
        assert len(plain.splitlines()) == len(d.sections) + 2
        total = sum(len(s.claims) for s in d.sections)
        assert f"{total} claims" in plain.splitlines()[0]


def test_a_section_display_stays_bounded_and_names_what_it_leaves_out():
    # Week 06's "Why position is still necessary" showed 89 KB of text and a 27 KB LaTeX display before
    from symseq.authoring import bundled
    from symseq.present.jupyter import SECTION_LIMIT

    cut = []
    for d in bundled():
        for s in d.sections:
            shown, plain = latex(s), text(s)
            assert len(shown) <= SECTION_LIMIT and len(plain) <= SECTION_LIMIT + 400, (d.name, s.title)
            if "not shown" in plain:
                cut.append(s)
                assert re.search(r"… \d+ more ledgers? not shown \(.+\): display s\.ledgers\[\d+\]", plain)
                assert f"symseq show {d.name} '" in plain
    assert cut  # the largest sections do get cut
