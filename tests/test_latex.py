"""symseq latex: deterministic documents that compile with a real pdflatex, never clobbering a file."""

import os
import re
import subprocess
import sys

import pytest
import sympy as sp

from symseq import Ledger, ops
from symseq.cli import main
from symseq.present.latex import (derivation_latex, ledger_latex, matrix_table, printed_latex, proof_note,
                                  standalone_document)
from symseq.present.views import latex_label
from symseq.verify.claims import Result
from symseq.authoring import bundled

from present_helpers import DEMO_PATH, demo, pdflatex, pdftotext
from test_latex_leaks import INTERNAL, tex_leaks

BUNDLED = bundled()


def _cli_latex(args, seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed), COLUMNS="100")
    r = subprocess.run([sys.executable, "-m", "symseq.cli", "latex", *args], capture_output=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


@pytest.fixture(scope="module", params=BUNDLED, ids=[d.name for d in BUNDLED])
def compiled(request, tmp_path_factory):
    """Each bundled derivation's default ``symseq latex --standalone``, compiled once: its source, the
    pdflatex log, the number of pages and the PDF's text (pdftotext)."""
    d = request.param
    folder = tmp_path_factory.mktemp(d.name)
    tex = derivation_latex(d, standalone=True)
    log = pdflatex(tex, folder)
    pages = int(re.search(r"Output written on doc\.pdf \((\d+) pages?", log).group(1))
    return dict(derivation=d, tex=tex, log=log, pages=pages, text=pdftotext(folder / "doc.pdf"))


def test_every_bundled_derivation_compiles_and_is_deterministic(compiled):
    d = compiled["derivation"]
    there = _cli_latex([d.name, "--standalone"], seed=12345)  # another process, another hash seed
    assert compiled["tex"].encode("ascii") == there


def test_no_box_runs_more_than_5pt_off_the_page(compiled):
    """The LSTM Jacobian block of week06-rnn ran 142 pt off the page; now nothing runs over 5 pt."""
    over = [float(w) for w in re.findall(r"Overfull \\hbox \(([0-9.]+)pt too wide\)", compiled["log"])]
    assert [w for w in over if w > 5] == []


# An underscore is part of a code identifier or a file name when words of two or more characters stand on both
# sides (clip_grad_norm_, max_norm, 000_30e9e4099f2cd2dc.txt); anywhere else (d_k, W_Q, h_{t}) it is a name
# that was not typeset.
_IDENTIFIER = re.compile(r"\w{2,}(?:_(?:\w{2,})?)+")


def test_the_pdf_text_shows_no_plain_text_forms(compiled):
    """No SymPy plain text (2*H_{00}, -3*log(2)/4), no name with its braces or underscores (c_{t-1}, d_k) and
    no "difference(s)" in what a reader sees."""
    text = compiled["text"]
    lines = text.splitlines()
    assert [ln for ln in lines if "*" in ln] == []
    assert [ln for ln in lines if "difference(s)" in ln] == []
    assert [ln for ln in lines if "{" in ln or "}" in ln] == []
    assert [ln for ln in lines if "_" in _IDENTIFIER.sub("", ln)] == []


def test_every_bundled_derivation_typesets_no_leak(compiled):
    """Before: Week 06's Figure 3 (right) typeset "cannot be shown: … contains the SymPy Float", μ_{H_enc} set as
    μ_{H_e}nc, NumPy slices (QKV_{[:,0:2]}, Z_{[1,:]}), embed_dim as a subscript, |factor|^n with an accent."""
    assert tex_leaks(compiled["tex"]) == []
    text = compiled["text"]
    assert [ln for ln in text.splitlines() if any(w in ln for w in INTERNAL)] == []
    assert "_{[" not in compiled["tex"] and "\\_" not in re.sub(r"\\texttt\{[^{}]*\}", "", compiled["tex"])


def test_the_handouts_symbols_replace_code_names(compiled):
    d, tex = compiled["derivation"], compiled["tex"]
    if d.name == "week06-encoder":
        assert r"\boldsymbol{\mu}_{H_{\mathrm{enc}}}" in tex and "H_enc" not in tex and "embed\\_dim" not in tex
    if d.name == "week06-rnn":
        assert r"$|\mathrm{factor}|^{n}$" in tex
        assert r"$W_{h}$ = $\begin{pmatrix}0 & 2 \\ 0 & 0\end{pmatrix}$" in tex  # a Python list in a heading
        assert r"\ensuremath{\hat{y}} = $w_{o}$ $h_{2}$" in tex and r"$w_{h}^{3}$" in tex
        # Figure 3 (right): exact values of both trajectories' |∂h_{T−1}/∂h_0|, never a SymPy Float
        assert "2 & $1.2$ & $0.1$ \\\\" in tex and "30 & $198$ & $1.06 \\times 10^{-35}$ \\\\" in tex
    if d.name == "handout11-self-attention":
        assert r"\mathbf{Q} &= \mathrm{QKV}_{:,0..7}" in tex and r"{\mathrm{QKV}^{[0]}}_{:,0..1}" in tex
    if d.name == "week08-decoder":
        assert r"\mathbf{Z}_{1,:}" in tex


def test_week08_fits_in_six_pages(compiled):
    if compiled["derivation"].name == "week08-decoder":
        assert compiled["pages"] <= 6


def test_demo_compiles_and_is_deterministic(tmp_path):
    args = ["--no-bundled", "--path", str(DEMO_PATH), "present-demo", "--standalone"]
    first, second = _cli_latex(args, seed=1), _cli_latex(args, seed=2)
    assert first == second
    assert first.decode("ascii") == derivation_latex(demo(), standalone=True)
    log = pdflatex(first.decode("ascii"), tmp_path)
    assert "Output written" in log


def test_paired_table_keeps_table_3_order():
    tex = derivation_latex(demo(), demo().sections[:1])
    body = tex.split(r"Forward pass & Backward pass \\")[1].split(r"\bottomrule")[0]
    rows = [r for r in body.splitlines() if " & " in r]
    assert rows[0].startswith(r"$z_{0} = w_{h} h_{-1} + w_{x} x_{0} = w_{x} x_{0}$ & "
                              r"$\frac{\partial \mathcal{L}}{\partial h_{-1}} = g_{0}^{z} w_{h}$")
    assert [r.split(" = ")[0] for r in rows] == ["$z_{0}", "$h_{0}", "$z_{1}", "$h_{1}", "$z_{2}", "$h_{2}",
                                                 r"$\hat{y}", r"$\mathcal{L}"]
    assert rows[6].endswith(r"$g_{2}^{h} = e w_{o}$ \\")


def test_parameter_gradients_are_boxed_and_steps_aligned():
    """By default a parameter's gradient is boxed where its step is; ``full`` repeats it boxed after the steps."""
    tex = derivation_latex(demo(), demo().sections[:1])
    assert r"\begin{align*}" in tex and r"\begin{gather*}" not in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{x}}} &= g_{0}^{z} x_{0} + g_{1}^{z} x_{1} + g_{2}^{z} x_{2}" in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{o}}} &= e h_{2}" in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial x_{0}}" not in tex  # inputs are not boxed
    full = derivation_latex(demo(), demo().sections[:1], full=True)
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{x}} = g_{0}^{z} x_{0} + g_{1}^{z} x_{1} + g_{2}^{z} x_{2}}" in full
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{o}} = e h_{2}}" in full
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial x_{0}}" not in full


def test_booktabs_table_rounded_as_the_handout():
    tex = derivation_latex(demo(), demo().sections[2:3], claims=False)
    assert r"\textbf{Table 1: positioned inputs} (three significant digits)" in tex
    assert r"0: a & $0.2$ & $0.9$ & $0.4$ & $1$ & $-0.2$ \\" in tex
    assert r"4: thousand & $-0.357$ & $-1.05$ & $0.3$ & $1.49$ & $-0.098$ \\" in tex
    assert r" & Raw dot product & $S_{6j}$ & $A_{6j}$ \\" in tex
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    heat = tex.split(r"\textbf{Figure 2: causal weights}")[1].split(r"\end{tabular}")[0]
    assert heat.count(r"$\times$") == 21


def test_matrix_notation():
    d = [d for d in BUNDLED if d.name == "week08-decoder"][0]
    tex = derivation_latex(d)
    assert r"\odot" in tex and r"\circ" not in tex
    assert r"\mathbf{S} &= \frac{\mathbf{Q} \mathbf{K}^{\top}}{\sqrt{2}}" in tex
    assert r"\operatorname{softmax}_{\mathrm{rows}}\left(\mathbf{S}_{\mathrm{causal}}\right)" in tex
    assert "PermuteDims" not in tex and "ArrayTensorProduct" not in tex


def test_unicode_names_become_commands(tmp_path):
    L = Ledger("names with ŷ, ε and ∂")
    x = L.input("x̂", "0.5")
    eps = L.input("ε", "0.001")
    yhat = L.define("ŷ", x * 2 + eps)
    L.define("ℓ", (yhat - 1) ** 2)
    L.backward("ℓ")
    W = L.input("W_{out}", [[1, 2], [3, 4]])
    h = L.define("h̃^(1)", ops.Map(sp.tanh, W @ W.T))
    L.define("Ŝ", h * h)
    tex = ledger_latex(L)
    assert tex.isascii()
    assert r"\hat{y} &= 2 \hat{x} + \epsilon" in tex
    assert r"\frac{\partial \ell}{\partial \hat{y}}" in tex
    assert r"\tilde{h}^{(1)}" in tex and r"\odot" in tex
    pdflatex(standalone_document(tex), tmp_path)


def test_two_head_attention_table_as_a_new_user_would(tmp_path):
    # README, "LaTeX for a handout": a table of two heads' weights for one query, compiled.
    d = demo()
    heads = [s for s in d.sections if s.title.startswith("§3")][0].objects["heads"]
    A1, A2 = heads.heads[0].A, heads.heads[1].A
    tokens = ["0: a", "1: journey", "2: of", "3: a", "4: thousand", "5: miles", "6: begins"]
    tex = matrix_table(ops.Concat([A1[6, :].T, A2[6, :].T], axis=1), label="Table 17", rows=tokens,
                       cols=["Head 1 weight", "Head 2 weight"], digits=3)
    assert r"6: begins & $0.275$ & $0.144$ \\" in tex
    pdflatex(standalone_document(tex), tmp_path)


def test_cli_never_clobbers_and_writes_atomically(tmp_path, capsys):
    out = tmp_path / "sub" / "demo.tex"
    args = ["latex", "--no-bundled", "--path", str(DEMO_PATH), "present-demo", "-o", str(out)]
    assert main(args) == 2 and not out.parent.exists()  # a missing folder is made only when asked
    assert "the folder" in capsys.readouterr().err
    args.append("--mkdir")
    assert main(args) == 0
    first = out.read_text()
    assert first.startswith("% symseq latex present-demo")
    out.write_text("my edits")
    assert main(args) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert out.read_text() == "my edits"
    assert main(args + ["--force", "--standalone"]) == 0
    assert out.read_text().startswith(r"\documentclass")
    assert [p.name for p in out.parent.iterdir()] == ["demo.tex"]  # no temporary file left behind
    assert oct(out.stat().st_mode & 0o777) != "0o600"


def test_cli_fragment_to_stdout(capsys):
    assert main(["latex", "--no-bundled", "--path", str(DEMO_PATH), "present-demo", "--section", "§1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("% symseq latex present-demo") and r"\documentclass" not in out
    assert r"\subsection*{\S{}1 Forward and backward rows}" in out and r"\S{}2" not in out


def test_stacked_and_side_by_side_blocks_compile_inside_align(tmp_path):
    L = Ledger("blocks")
    a = L.input("a", [[1, 2]])
    b = L.input("b", [[3, 4], [5, 6]])
    c = L.define("C", ops.Concat([a, b], axis=0))
    L.define("D", ops.Concat([ops.Concat([c, c], axis=1), ops.Concat([c, c], axis=1)], axis=0))
    pdflatex(standalone_document(ledger_latex(L)), tmp_path)


def test_long_gradients_continue_on_further_lines_and_stay_on_the_page(tmp_path):
    import re

    L = Ledger("scalar RNN, T = 12")
    w_x, w_h = L.parameter("w_x"), L.parameter("w_h")
    h = L.input("h_{-1}", 0)
    for t in range(12):
        h = L.define(f"h_{t}", sp.tanh(L.define(f"z_{t}", w_x * L.input(f"x_{t}") + w_h * h)))
    L.define("L", (h - L.input("y")) ** 2 / 2)
    L.backward("L")
    tex = ledger_latex(L, values=False)
    # Σ_t g_t^z h_{t−1} has twelve terms: too wide for one line, so the box holds an aligned block
    boxed = [b for b in tex.split("\n") if b.startswith(r"\boxed{\begin{aligned}") and r"{\partial w_{h}} &= " in b]
    assert len(boxed) == 1 and r"\\ &\quad + " in boxed[0], tex[-2000:]
    assert boxed[0].count("h_{") == 12  # every term kept
    log = pdflatex(standalone_document(tex), tmp_path)
    assert not re.search(r"Overfull \\hbox", log), re.findall(r"Overfull \\hbox \([0-9.]+pt", log)


# ---------------------------------------------------------------------------
# issue 14: short by default, the handout's own text, no plain-text forms
# ---------------------------------------------------------------------------

def _week08():
    return [d for d in BUNDLED if d.name == "week08-decoder"][0]


def _claim(d, test):
    return next(c for s in d.sections for c in s.claims if test(c))


def test_a_ledger_several_sections_use_is_typeset_once():
    """Week 8's §4 ledger is used by three sections: its steps are typeset once, and referred to after."""
    d = _week08()
    step = r"\mathbf{S}_{\mathrm{causal}} &= \mathbf{S} + \mathbf{M}"
    short, full = derivation_latex(d), derivation_latex(d, full=True)
    assert short.count(step) == 1 and full.count(step) >= 3
    assert short.count(r"The steps and values of \emph{\S{}4 two-token context AB}") == 2


def test_the_entries_of_a_printed_table_are_one_row_of_claims():
    d = [d for d in BUNDLED if d.name == "week06-encoder"][0]
    tex = derivation_latex(d, d.sections[:8])
    assert r"Table 11, key & 21 entries & three significant digits & $\checkmark$ \\" in tex
    assert "Table 11, row 0" not in tex
    assert "Table 11, row 0" in derivation_latex(d, d.sections[:8], full=True)


def test_the_printed_column_shows_what_the_handout_printed():
    """p(B|AB) is printed 1/(1+e^{-2(1-w)}); SymPy's rewrite e^{2w-2} + 1 is not what the handout says."""
    c = _claim(_week08(), lambda c: c.printed == r"\frac{1}{1+e^{-2(1-w)}}")
    assert printed_latex(c) == r"$\frac{1}{1+e^{-2(1-w)}}$"
    w = _claim(_week08(), lambda c: c.printed == "0.330238")
    assert printed_latex(w) == "$0.330238$"


def test_a_proof_note_is_text_never_sympys_plain_form():
    c = _claim(_week08(), lambda c: c.printed == "the first representation does not depend on the second token")
    r = c.check()
    assert r.ok and "2*H_{00}" in r.message
    assert proof_note(c, r) == ""  # held: the detail in SymPy's plain text is left out
    failed = Result("mismatch", message="H'[0,:] = [2*H_{00}, 3*H_{01}]")
    assert proof_note(c, failed) == r"\texttt{H'[0,:] = [2*H\_\{00\}, 3*H\_\{01\}]}"  # a failure is shown as it is
    assert proof_note(c, Result("ok", message="1 difference simplifies to 0")) == "1 difference simplifies to 0"
    assert proof_note(c, Result("ok", message="3 differences simplify to 0")) == "3 differences simplify to 0"


def test_names_in_sentences_are_typeset():
    assert latex_label("decoder at T=4, d=6, d_k=2, d_v=3") == "decoder at T=4, d=6, $d_{k}$=2, $d_{v}$=3"
    assert latex_label("the gates do not read c_{t−1}, so") == "the gates do not read $c_{t-1}$, so"
    assert latex_label("h(W_1W_2) + b_2") == "h($W_{1}$$W_{2}$) + $b_{2}$"
    assert latex_label("torch.nn.utils.clip_grad_norm_(..., max_norm=1.0)") == (
        r"\texttt{torch.nn.utils.clip\_grad\_norm\_}(..., \texttt{max\_norm}=1.0)")
    assert latex_label("Source 000_30e9e4099f2cd2dc.txt") == r"Source 000\_30e9e4099f2cd2dc.txt"
    assert latex_label("ω_j = 10000^(−2⌊j/2⌋/D)") == r"$\omega_{j}$ = 10000${}^{(-2\lfloor j/2\rfloor/D)}$"


def test_the_fragment_compiles_with_the_packages_it_names(tmp_path):
    d = demo()
    tex = derivation_latex(d)
    needs = tex.splitlines()[1]
    assert needs == "% needs \\usepackage{amsmath,amssymb,booktabs,longtable,array,graphicx}"
    preamble = "\\documentclass{article}\n" + needs[len("% needs "):] + "\n"
    pdflatex(preamble + "\\begin{document}\n" + tex + "\\end{document}\n", tmp_path)


def test_a_matrix_wider_than_the_page_shrinks_to_fit(tmp_path):
    L = Ledger("a wide row")
    x = L.input("x", shape=(1, 3))
    L.define("Y", ops.Concat([ops.Concat([ops.Map(sp.tanh, x @ x.T @ x + x) for _ in range(6)], axis=1)] * 2,
                             axis=0))
    tex = ledger_latex(L, values=False, compact=True)
    assert r"\resizebox{0.8\linewidth}{!}" in tex
    log = pdflatex(standalone_document(tex), tmp_path)
    assert not re.search(r"Overfull \\hbox \((?:[6-9]|\d\d+)", log), re.findall(r"Overfull \\hbox \([0-9.]+pt", log)


def test_a_numeric_step_shows_its_values_put_in():
    """handcalcs' three lines: the formula, the formula with the values of its names, the result."""
    L = Ledger("one step")
    w, x, b = L.parameter("w_x", "0.5"), L.input("x_0", -2), L.input("b", "0.25")
    L.define("z_0", w * x + b)
    tex = ledger_latex(L, compact=True)
    assert r"z_{0} &= b + w_{x} x_{0} = 0.25 + 0.5 \cdot \left(-2\right) = - \frac{3}{4} \approx -0.75" in tex, tex
