"""The first derivative pays no hidden one-time import (issue 15, build item 5)."""

import subprocess
import sys

PROGRAM = """
import sys
import sympy as sp
from symseq import Ledger
L = Ledger("scalar tanh RNN, T = 4")
w_x, w_h, w_o = L.parameter("w_x", "0.5"), L.parameter("w_h", "0.9"), L.parameter("w_o", "1.1")
h = L.input("h_{-1}", 0)
for t in range(4):
    h = L.define(f"h_{t}", sp.tanh(L.define(f"z_{t}", w_x * L.input(f"x_{t}", "0.1") + w_h * h)))
L.define("L", (L.define("yhat", w_o * h) - L.input("y", 1)) ** 2 / 2)
before = set(sys.modules)
g = L.backward("L")
print(sorted(m for m in set(sys.modules) - before if m.startswith("sympy")))
"""


def test_the_first_backward_pass_imports_no_sympy_module():
    # SymPy imports sympy.tensor.tensor (with sympy.combinatorics) on the first sum it builds: about 30 ms that
    # would land inside the first derivative; symseq.ledger imports it up front
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
