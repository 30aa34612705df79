"""symseq latex: deterministic documents that compile with a real pdflatex, never clobbering a file."""

import os
import subprocess
import sys

import pytest
import sympy as sp

from symseq import Ledger, ops
from symseq.cli import main
from symseq.present.latex import derivation_latex, ledger_latex, matrix_table, standalone_document
from symseq.authoring import bundled

from present_helpers import DEMO_PATH, demo, pdflatex

BUNDLED = bundled()


def _cli_latex(args, seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed), COLUMNS="100")
    r = subprocess.run([sys.executable, "-m", "symseq.cli", "latex", *args], capture_output=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


@pytest.mark.parametrize("d", BUNDLED, ids=[d.name for d in BUNDLED])
def test_every_bundled_derivation_compiles_and_is_deterministic(d, tmp_path):
    here = derivation_latex(d, standalone=True).encode("ascii")  # this process
    there = _cli_latex([d.name, "--standalone"], seed=12345)  # another process, another hash seed
    assert here == there
    pdflatex(here.decode("ascii"), tmp_path)


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
    tex = derivation_latex(demo(), demo().sections[:1])
    assert r"\begin{align*}" in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{x}} = g_{0}^{z} x_{0} + g_{1}^{z} x_{1} + g_{2}^{z} x_{2}}" in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{o}} = e h_{2}}" in tex
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial x_{0}}" not in tex  # inputs are not boxed


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
