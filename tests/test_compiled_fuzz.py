"""The compiled NumPy program against the row-by-row interpreter on random element-wise and matrix programs.

The compiler writes results into temporaries nothing reads afterwards, reads a broadcast operand without copying
it, turns x + (−y) into x − y, computes a softmax in place and reads a block of columns as a view. Each of these
is safe only under conditions on what reads what, and later; here hypothesis builds small random programs in
which the same temporary is read several times, by views, by sums of three terms and after its last use as an
argument, and every row the compiled program gives, at its first call (stepping through the instructions) and
after it is written out as straight-line Python, must be the interpreter's to 1e-12.
"""

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from symseq import EvaluationError, Ledger, compile, evaluate, ops
from symseq.backends import compiled

SHAPE = (2, 3)


def build(choices: list) -> tuple:
    """A ledger of random rows over inputs A, B, C (2×3), from a list of (operation, operand indices, keep as a
    row) triples drawn by hypothesis. Every node has shape 2×3."""
    L = Ledger("a random program")
    pool = [L.input(n, shape=SHAPE) for n in "ABC"]
    rows = []
    for k, (op, picks, as_row) in enumerate(choices):
        a, b, c = (pool[-1 - i % len(pool)] for i in picks)  # the latest nodes first: temporaries
        if op == "add3":
            node = ops.Add(a, b, a)  # a sum of three that repeats its first term
        elif op == "add3b":
            node = ops.Add(b, a, c, a)  # … its second term
        elif op == "sub":
            node = a + ops.Neg(b)
        elif op == "mul":
            node = a * b
        elif op == "div":
            node = ops.Div(a, ops.Map(sp.exp, b))  # never a division by zero
        elif op == "tanh":
            node = ops.Map(sp.tanh, a)
        elif op == "rowsum":  # the softmax adjoint's shape: a − Broadcast(Σ_j b ⊙ c)
            node = a + ops.Neg(ops.Broadcast(ops.Sum(b * c, 1), SHAPE))
        elif op == "scale":
            node = ops.Broadcast(ops.Sum(b, 1), SHAPE) * a
        elif op == "softmax":
            node = ops.SoftmaxRows(a + b, "causal" if picks[2] % 2 else None, empty_rows="zero")
        elif op == "slice":  # a block of columns read after its matrix is used again
            node = ops.Concat([ops.Slice(a, slice(None), slice(0, 2)) * ops.Slice(b, slice(None), slice(1, 3)),
                               ops.Slice(a, slice(None), slice(2, 3))], axis=1)
        else:  # matmul: (a bᵀ) c
            node = (a @ b.T) @ c
        if as_row:
            node = L.define(f"R_{k}", node)
            rows.append(node.name)
        pool.append(node)
    if not rows or rows[-1] != f"R_{len(choices) - 1}":
        L.define("out", pool[-1])
        rows.append("out")
    return L, rows


OPS = ["add3", "add3b", "sub", "mul", "div", "tanh", "rowsum", "scale", "softmax", "slice", "matmul"]
step = st.tuples(st.sampled_from(OPS), st.tuples(*[st.integers(0, 12)] * 3), st.booleans())


@pytest.mark.parametrize("examples", [60, pytest.param(300, marks=pytest.mark.slow)])
def test_random_programs_compile_to_the_interpreters_numbers(examples):
    """Random straight-line programs (60 in the default run, 300 with -m slow) give the interpreter's numbers,
    stepped or generated, and never write the caller's arrays."""

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(step, min_size=1, max_size=10), st.integers(0, 2**32 - 1))
    @example([("mul", (0, 0, 0), False), ("add3", (0, 1, 0), False)], 0)  # X + A + X wrote X + A into X first
    @example([("tanh", (0, 0, 0), False), ("add3b", (0, 1, 2), True)], 0)
    @example([("mul", (0, 1, 0), False), ("rowsum", (0, 0, 0), False), ("softmax", (0, 1, 1), False)], 1)
    def program_gives_the_interpreters_numbers(choices, seed):
        L, rows = build(choices)
        rng = np.random.default_rng(seed)
        every = {n: rng.normal(size=(2,) + SHAPE) for n in "ABC"}
        try:
            ref = evaluate(L, "numpy", values=every, targets=rows)
        except EvaluationError:  # e^x overflowed in a chain of divisions: no number to compare
            assume(False)
        f = compile(L, rows)
        vals = {n: v for n, v in every.items() if n in f.program.inputs}
        copies = {n: v.copy() for n, v in vals.items()}
        first = f(vals)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(compiled, "_GENERATE_SECONDS", 0.0)
            later = f(vals)
        for out in (first, later):
            for n in rows:
                a, b = np.asarray(out[n], float), np.asarray(ref[n], float)
                assert a.shape == b.shape, n
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300, err_msg=n)
        for n in vals:
            np.testing.assert_array_equal(vals[n], copies[n])

    program_gives_the_interpreters_numbers()
