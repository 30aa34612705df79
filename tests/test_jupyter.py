"""In Jupyter, ledgers, claims, sections and derivations display as LaTeX (MathJax), registered by type name."""

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
    """What IPython's text/latex formatter offers for registration: for_type_by_name."""

    def __init__(self):
        self.by_name = {}

    def for_type_by_name(self, module, name, func):
        self.by_name[(module, name)] = func

    def __call__(self, obj):  # IPython looks types up by (module, class name)
        return self.by_name[(type(obj).__module__, type(obj).__name__)](obj)


def test_registered_with_ipython_by_type_name():
    import types

    from symseq.present.jupyter import register

    fmt = _Formatter()
    shell = types.SimpleNamespace(display_formatter=types.SimpleNamespace(formatters={"text/latex": fmt}))
    assert register(shell)
    d = demo()
    L, c, s = d.sections[1].ledgers[0], d.sections[1].claims[0], d.sections[2]
    for obj in (L, c, s, d):
        assert fmt(obj) == repr_latex(obj)
    assert register() is False  # no shell running: nothing registered


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
