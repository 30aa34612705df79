"""In Jupyter, ledgers, claims, sections and derivations display as LaTeX (MathJax), lazily imported."""

import subprocess
import sys

from symseq.present.latex import repr_latex

from present_helpers import demo


def _balanced(s):
    s = s.replace(r"\{", "").replace(r"\}", "")
    return s.count("{") == s.count("}")


def test_jupyter_latex_is_mathjax_math():
    d = demo()
    L = d.sections[1].ledgers[0]
    led = L._repr_latex_()
    assert led.startswith("$$\\begin{aligned}") and led.endswith("\\end{aligned}$$") and _balanced(led)
    assert r"\boxed{\frac{\partial \mathcal{L}}{\partial w_{x}}}" in led
    assert r"h_{0} &= \tanh{\left(z_{0} \right)} = \tanh{\left(\frac{1}{2} \right)} \approx 0.462117" in led
    claim = d.sections[1].claims[0]._repr_latex_()
    assert claim.startswith("$$") and claim.endswith(r"\checkmark$$") and _balanced(claim)
    sec = d.sections[2]._repr_latex_()
    assert r"\begin{array}{llll}" in sec and _balanced(sec)
    whole = d._repr_latex_()
    assert whole.count("$$") % 2 == 0 and r"\textbf{Presentation demo" in whole
    assert repr_latex(L) == led


def test_verify_does_not_import_presentation_at_load():
    code = ("import sys, symseq, symseq.verify.derivation, symseq.verify.claims, symseq.ledger;"
            "print(any(m.startswith('symseq.present') for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


def test_sections_show_their_tables_and_paired_rows():
    import re

    d = demo()
    rows = d.sections[0]._repr_latex_()
    assert r"$$\text{Table 3: forward rows beside backward rows}$$" in rows
    assert (r"z_{0} = w_{h} h_{-1} + w_{x} x_{0} = w_{x} x_{0} & "
            r"\frac{\partial \mathcal{L}}{\partial h_{-1}} = g_{0}^{z} w_{h} \\") in rows
    tables = d.sections[2]._repr_latex_()
    assert r"\text{0: a} & 0.2 & 0.9 & 0.4 & 1 & -0.2 \\" in tables
    assert tables.count(r"\times") >= 42  # the masked scores and weights
    for block in re.findall(r"\$\$(.*?)\$\$", rows + tables, re.S):
        assert _balanced(block)
        assert block.count(r"\begin{") == block.count(r"\end{")
