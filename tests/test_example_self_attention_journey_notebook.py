"""A public worked example kept as a notebook and audited from the ``.ipynb`` itself: self-attention without trainable
weights over "Your journey starts with one step" (six tokens in three dimensions).

Source: https://github.com/rasbt/LLMs-from-scratch/blob/01c4b8f645911ba52105eb9951ab469a76fb4d86/
ch03/01_main-chapter-code/ch03.ipynb, sections 3.3.1–3.3.2, kept as
``tests/data/examples/self-attention-journey-notebook.ipynb`` (its code cells, execution counts and outputs as
printed; the prose in other words) with its derivation in
``tests/data/examples/derivations/self_attention_journey_notebook.py``.

Every printed result (the scores X Xᵀ, the weights by sum and by softmax, the context vectors, the sums of the
rows) is recomputed here in plain mpmath from the six embeddings, read from the notebook's JSON with the standard
library: all 28 printed lines are correctly rounded, so the notebook has no erratum and audits with every number
covered. An edit to an output is reported at its cell and output line.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from mpmath import exp, mp, mpf

from symseq.audit import audit, parse

from example_helpers import EXAMPLES, rounds_to
from example_helpers import derivation, report  # noqa: F401 (the module's fixtures)

MD = EXAMPLES / "self-attention-journey-notebook.ipynb"
NAME = "self-attention-journey-notebook"
TEXT = MD.read_text(encoding="utf-8")
CELLS = json.loads(TEXT)["cells"]


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _printed(count: int) -> list[str]:
    """The printed lines of the code cell run as ``In [count]``."""
    (cell,) = [c for c in CELLS if c.get("execution_count") == count]
    return "".join("".join(o["text"]) for o in cell["outputs"]).splitlines()


def _numbers(line: str) -> list[str]:
    """The decimals of a printed line, as printed (``tensor([0.1385, …])`` → ["0.1385", …])."""
    import re

    return re.findall(r"-?\d+\.\d*", line)


def _cell_of(count: int) -> int:
    """The 1-based number of the cell run as ``In [count]``."""
    return next(k for k, c in enumerate(CELLS, start=1) if c.get("execution_count") == count)


def test_rendition_names_its_source():
    first = _source(CELLS[0]).splitlines()
    assert first[0].startswith("Source: https://github.com/rasbt/LLMs-from-scratch/blob/")
    assert "rendition" in first[1]
    nbformat.validate(nbformat.reads(TEXT, as_version=4))


def test_every_printed_result_recomputed_in_mpmath():
    mp.dps = 40
    (code,) = [_source(c) for c in CELLS if c.get("execution_count") == 2]
    X = [[mpf(v) for v in _numbers(ln)] for ln in code.splitlines() if ln.strip().startswith("[")]
    assert len(X) == 6 and all(len(r) == 3 for r in X)
    S = [[sum(a * b for a, b in zip(X[i], X[j])) for j in range(6)] for i in range(6)]
    A = [[exp(S[i][j]) / sum(exp(v) for v in S[i]) for j in range(6)] for i in range(6)]
    Z = [[sum(A[i][k] * X[k][d] for k in range(6)) for d in range(3)] for i in range(6)]
    plain = [v / sum(S[1]) for v in S[1]]

    def check(values, printed):
        assert len(values) == len(printed) and all(rounds_to(v, p) for v, p in zip(values, printed)), \
            list(zip(printed, values))

    check(S[1], _numbers(_printed(3)[0]))
    check([S[0][1]] * 2, [_numbers(ln)[0] for ln in _printed(4)])
    check(plain + [sum(plain)], _numbers(_printed(5)[0]) + _numbers(_printed(5)[1]))
    for count in (6, 7):  # the naive softmax and torch's: the same weights, summing to 1 ("tensor(1.)")
        check(A[1] + [sum(A[1])], _numbers(_printed(count)[0]) + ["1"])
        assert _printed(count)[1] == "Sum: tensor(1.)"
    check(Z[1], _numbers(_printed(8)[0]))
    for count in (9, 10):
        check([v for row in S for v in row], [v for ln in _printed(count) for v in _numbers(ln)])
    check([v for row in A for v in row], [v for ln in _printed(11) for v in _numbers(ln)])
    row_2 = [mpf(v) for v in _numbers(_source([c for c in CELLS if c.get("execution_count") == 12][0]))]
    check([sum(row_2)] + [sum(r) for r in A], [v for ln in _printed(12) for v in _numbers(ln)])
    check([v for row in Z for v in row], [v for ln in _printed(13) for v in _numbers(ln)])
    check(Z[1], _numbers(_printed(14)[0]))


def test_the_notebook_audits_with_every_number_covered(report):
    assert not report.failed, report.failures()
    c = report.counts
    assert c.uncovered == 0 and c.wrong == 0 and c.covered == c.quantity >= 46
    assert report.rendered  # lines are named by cell
    where = {report.where(t.line) for t in report.tokens if t.attribution.verdict == "covered"}
    assert f"cell {_cell_of(11)} (In [11]), output line 3" in where  # the third row of the weights
    assert f"cell {_cell_of(2)} (In [2]), line 6" in where  # the third embedding, an input printed in code


@pytest.mark.parametrize("count, k, old, new", [
    (11, 3, "0.2326", "0.2336"),  # a weight of row 3
    (13, 5, "0.5266", "-0.5266"),  # a context vector's entry, its sign flipped
    (3, 1, "1.4950", "1.4960"),  # a score of the query x^(2)
    (5, 2, "1.0000", "1.0001"),  # the sum of the weights by sum
])
def test_an_edited_output_is_wrong_at_its_cell_and_line(derivation, count, k, old, new):
    nb = nbformat.reads(TEXT, as_version=4)
    (cell,) = [c for c in nb.cells if c.get("execution_count") == count]
    lines = cell.outputs[0].text.splitlines(keepends=True)
    assert old in lines[k - 1]
    lines[k - 1] = lines[k - 1].replace(old, new, 1)
    cell.outputs[0].text = "".join(lines)
    rep = audit(parse(nbformat.writes(nb), path=MD.name), [derivation])
    assert rep.failed
    assert [(rep.where(e.line), e.printed, e.correct) for e in rep.errata] == [
        (f"cell {_cell_of(count)} (In [{count}]), output line {k}", new, old)]


def test_an_edited_input_in_code_is_wrong_where_the_code_prints_it(derivation):
    rep = audit(parse(TEXT.replace("[0.22, 0.58, 0.33]", "[0.22, 0.58, 0.38]"), path=MD.name), [derivation])
    assert rep.failed
    assert [rep.where(e.line) for e in rep.errata if e.kind == "input"] == [f"cell {_cell_of(2)} (In [2]), line 7"]


def test_two_cells_that_print_the_same_line_are_told_apart_by_their_execution_count(derivation):
    """Cells In [6] and In [7] both print ``Sum: tensor(1.)``: a claim names its cell (``at="In [7]"``), so the one
    deleted is missing in its own cell, not in the other."""
    for count in (6, 7):
        nb = nbformat.reads(TEXT, as_version=4)
        (cell,) = [c for c in nb.cells if c.get("execution_count") == count]
        cell.outputs[0].text = cell.outputs[0].text.replace("Sum: tensor(1.)", "Sum: tensor(.)")
        rep = audit(parse(nbformat.writes(nb), path=MD.name), [derivation])
        (m,) = rep.missing
        assert m.location.at == f"In [{count}]" and {rep.where(k) for k in m.lines} == {
            f"cell {_cell_of(count)} (In [{count}]), output line 2"}


@pytest.mark.parametrize("k", [1, 6])
def test_a_matrix_row_edited_or_deleted_at_either_end_is_missing_where_it_stood(derivation, k):
    for edit in (lambda ln: ln.replace("0.1", "1.1", 1), lambda ln: ""):
        nb = nbformat.reads(TEXT, as_version=4)
        (cell,) = [c for c in nb.cells if c.get("execution_count") == 11]
        lines = cell.outputs[0].text.splitlines(keepends=True)
        lines[k - 1] = edit(lines[k - 1]) + ("\n" if not edit(lines[k - 1]) else "")
        cell.outputs[0].text = "".join(lines)
        rep = audit(parse(nbformat.writes(nb), path=MD.name), [derivation])
        (m,) = rep.missing
        assert f"cell {_cell_of(11)} (In [11]), output line {k}" in {rep.where(x) for x in range(m.lines[0],
                                                                                                 m.lines[1] + 1)}
