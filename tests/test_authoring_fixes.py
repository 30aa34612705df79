"""Authoring frictions met by a new user writing a derivation for a public worked example (issue 13, item 4).

Each test states a real value or a real message: scalar inputs declared with ``s.given``, shapes as NumPy and
PyTorch print them, wrong matrix entries by (row, column), a ledger that names what it holds, recurrent cells with
the page's time origin, arrays printed by NumPy and PyTorch, identities decided numerically first, same-named
symbols with other assumptions, and per-time-step BPTT terms against torch autograd.
"""

import numpy as np
import pytest
import sympy as sp

from symseq import Derivation, Ledger, LedgerError, exact
from symseq.audit import audit, parse
from symseq.verify.report import verify


def _one_section(build, source="page.md", title="1 Step"):
    d = Derivation("fixes", title="a worked example", source=source)
    d.section(title)(build)
    return d


# -- 1. s.given on a scalar input ------------------------------------------------------------------------------


def _scalar_given(s):
    L = s.ledger("one step")
    x = L.input("x", exact("0.7"))
    w = L.parameter("w", exact("0.9"))
    z = L.define("z", w * x)
    s.given(x, what="x")
    s.given(w, what="w")
    s.claim("0.63", z, what="z")


PAGE = "# 1 Step\n\nWith x = 0.7 and w = 0.9 we get z = 0.63.\n"


def test_a_scalar_input_is_declared_with_given_and_audited():
    """A scalar ledger leaf (a SymPy symbol) given as an input: covered as printed, wrong where the page edits it.

    Before, the audit listed both inputs as missing with 'pass ledger=…', a parameter given() did not have."""
    d = _one_section(_scalar_given)
    rep = audit(parse(PAGE, path="page.md"), [d])
    assert not rep.failed and not rep.missing
    assert (rep.counts.covered, rep.counts.quantity) == (3, 3)
    assert d.sections[0].inputs[0].value == sp.Rational(7, 10)
    rep = audit(parse(PAGE.replace("w = 0.9", "w = 0.8"), path="page.md"), [d])
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(3, "0.8", "0.9")]



def _matrix_in_code(s):
    L = s.ledger("W x")
    W = L.parameter("W", [["0.1", "0.2"], ["0.3", "0.4"]])
    x = L.input("x", [["1.0", "2.0"]])
    s.given(W, x, what=("W", "x"))
    s.claim("[0.5 1.1]", L.define("y", x @ W.T), what="W x")


CODE_PAGE = ("# 1 Step\n\n```python\nW = np.asarray([[0.1, 0.2], [0.3, 0.4]])\nx = np.array([1.0, 2.0])\n"
             "print(W @ x)\n```\n\n```\n[0.5 1.1]\n```\n")
REPL_PAGE = "# 1 Step\n\n```python\n>>> W\narray([[0.1, 0.2],\n       [0.3, 0.4]])\n>>> x = np.array([1.0, 2.0])\n```\n" \
    "\n```\n[0.5 1.1]\n```\n"


@pytest.mark.parametrize("page", [CODE_PAGE, REPL_PAGE], ids=["nested list in code", "array as NumPy prints it"])
def test_a_matrix_input_printed_row_by_row_in_code_is_found_and_an_edited_entry_is_named(page):
    """A matrix literal in code (``np.asarray([[0.1, 0.2], [0.3, 0.4]])``) or as NumPy prints it is one input.

    Before, its rows were two vectors and the input was "missing from the text"; an edited entry is now an erratum
    of the input at its (row, column)."""
    d = _one_section(_matrix_in_code)
    rep = audit(parse(page, path="page.md"), [d])
    assert not rep.failed and not rep.missing and rep.counts.covered == rep.counts.quantity == 5
    rep = audit(parse(page.replace("0.3, 0.4]]", "0.3, 0.5]]"), path="page.md"), [d])
    assert not rep.missing
    assert [(e.printed, e.correct, e.fault.split(":")[0]) for e in rep.errata] == [("0.5", "0.4", "entry [1, 1]")]

def test_a_scalar_input_without_a_value_or_ledger_is_a_section_error_that_says_how_to_fix_it():
    def no_value(s):
        s.given(s.ledger().input("x"), what="x")

    def other_ledger(s):
        s.given(Ledger("not registered").input("x", exact("0.7")), what="x")

    err = _one_section(no_value).sections[0].error
    assert "given(x, what='x')" in err and "no value for x" in err and "L.input('x', exact('0.7'))" in err
    err = _one_section(other_ledger).sections[0].error
    assert "no ledger of this section defines" in err and "s.use(L)" in err and "ledger=..." in err


def test_given_takes_the_ledger_its_advice_names():
    def two_ledgers(s):
        a, b = s.ledger("a"), s.ledger("b")
        a.input("x", exact("0.7"))
        s.given(b.input("x", exact("0.5")), what="x", ledger=b)

    assert _one_section(two_ledgers).sections[0].inputs[0].value == sp.Rational(1, 2)


# -- 3. shapes as NumPy and PyTorch print them -----------------------------------------------------------------


@pytest.mark.parametrize("printed", ["[3, 4]", "(3, 4)", "torch.Size([3, 4])", "3 x 4", "3×4", r"3 \times 4",
                                     "3x4", "[T, d]"])
def test_a_shape_is_read_in_the_forms_numpy_and_pytorch_print(printed):
    d = _one_section(lambda s: s.claim_shape(printed, (3, 4), dims={"T": 3, "d": 4}, what="X"))
    assert d.claims[0].check().status == "ok", d.claims[0].check().message
    d = _one_section(lambda s: s.claim_shape(printed, (4, 3), dims={"T": 3, "d": 4}, what="X"))
    r = d.claims[0].check()
    assert r.status == "mismatch" and r.message.endswith("the object is 4×3")


@pytest.mark.parametrize("printed", ["3 by 4", "[3; 4]", "[]", "3", "[3.5, 4]"])
def test_another_form_of_shape_is_refused_with_the_accepted_forms(printed):
    r = _one_section(lambda s: s.claim_shape(printed, (3, 4))).claims[0].check()
    assert r.status == "error" and f"cannot read the shape {printed!r}" in r.message
    if printed != "[3.5, 4]":
        assert "'[4, 3]', '(4, 3)', 'torch.Size([4, 3])'" in r.message
    else:
        assert "not a whole number" in r.message


def test_a_one_dimensional_printed_shape_says_why_it_is_not_a_row():
    r = _one_section(lambda s: s.claim_shape("torch.Size([4])", (1, 4))).claims[0].check()
    assert r.status == "mismatch" and "symseq holds a vector as a 1×4 matrix" in r.message


# -- 7. a wrong matrix entry by (row, column), every one listed ------------------------------------------------


def _matrix_claims(s):
    L = s.ledger()
    A = L.input("A", sp.Matrix(3, 4, lambda i, j: sp.Rational(4 * i + j, 10)))
    s.claim("[0,0.1,0.2,0.3; 0.4,0.5,0.6,0.7; 0.9,0.9,1.0,1.1]", A, what="A")
    B = L.input("B", sp.Matrix(5, 5, lambda i, j: 5 * i + j))
    s.claim("[" + "; ".join(",".join(str(5 * i + j + (i >= 1)) for j in range(5)) for i in range(5)) + "]", B,
            what="B")


def test_a_wrong_matrix_entry_is_named_by_row_and_column():
    d = _one_section(_matrix_claims)
    r = d.claims[0].check()
    assert r.message == ("1 of 12 entries wrong: entry [2, 0]: printed 0.9, correct 0.8 (value 0.800000000000), off by "
                         "+1.00 units of the last digit")


def test_every_wrong_entry_is_in_the_json_and_the_terminal_says_how_many_more():
    from symseq.present.terminal import SHOWN_ENTRIES, problems

    d = _one_section(_matrix_claims)
    rep = verify([d])
    rec = rep.as_json()["claims"][1]
    assert rec["message"].startswith("20 of 25 entries wrong: entry [1, 0]: printed 6, correct 5 (value 5.00000000000)")
    assert all(f"entry [{i}, {j}]: printed {5 * i + j + 1}, correct {5 * i + j}" in rec["message"]
               for i in range(1, 5) for j in range(5))
    line = problems(rep)[1]
    assert line.count("printed") == SHOWN_ENTRIES
    assert line.endswith(f"; and {20 - SHOWN_ENTRIES} more (symseq verify --json FILE lists every one)")


# -- 8. an unknown name lists the names a ledger holds ---------------------------------------------------------


def test_an_unknown_name_lists_the_ledger_and_suggests_a_close_one():
    L = Ledger()
    for n in ("H", "W_Q", "W_K", "W_V", "S"):
        L.input(n, 1)
    with pytest.raises(LedgerError) as e:
        L["Q"]
    assert str(e.value) == "'Q' is not in this ledger; it holds 5 names: H, W_Q, W_K, W_V, S"
    with pytest.raises(LedgerError, match=r"'W_q' is not in this ledger \(did you mean 'W_Q'\?\)"):
        L["W_q"]
    with pytest.raises(LedgerError, match=r"\(did you mean 'W_V'\?\)"):
        L["W_v0"]


def test_a_long_ledger_lists_twenty_names_then_how_many_more():
    L = Ledger()
    for t in range(25):
        L.input(f"x_{t}", t)
    with pytest.raises(LedgerError) as e:
        L["y"]
    assert str(e.value).endswith("x_18, x_19, … and 5 more") and "it holds 25 names: x_0, x_1," in str(e.value)


# -- 2. recurrent cells with the page's time origin and row names -------------------------------------------------


def _notebook_rnn(L, **kw):
    """Tutorial notebook 48 (tests/data/examples/rnn-forward-tanh-notebook.md): h_t = tanh(0.9 x_t + 0.5 h_{t−1} + 0.3),
    x = (0.7, 0.5, 0.2), the page's initial state h_0 = 0.1, steps numbered 1, 2, 3."""
    from symseq.blocks import cells

    xs = [L.input(f"x_{t}", exact(v)) for t, v in zip((1, 2, 3), ("0.7", "0.5", "0.2"))]
    h0 = L.input("h_0", exact("0.1"))
    return cells.rnn(L, xs, L.parameter("W_xh", exact("0.9")), L.parameter("W_hh", exact("0.5")),
                     L.parameter("b", exact("0.3")), phi=sp.tanh, h_init=h0, **kw)


def test_an_rnn_numbered_from_one_takes_the_pages_initial_state_h_0():
    L = Ledger("notebook 48")
    run = _notebook_rnn(L, start=1)
    assert [h.name for h in run.h] == ["h_1", "h_2", "h_3"] and [z.name for z in run.z] == ["z_1", "z_2", "z_3"]
    # the notebook's loop prints 0.753066, 0.809829, 0.708873 (format .6f)
    assert [f"{float(sp.N(L.value(f'h_{t}'), 20)):.6f}" for t in (1, 2, 3)] == ["0.753066", "0.809829", "0.708873"]
    assert L.value("z_1") == sp.Rational(98, 100)  # 0.9·0.7 + 0.5·0.1 + 0.3, the page's 0.98


def test_the_default_time_origin_is_unchanged_and_its_clash_says_how_to_fix_it():
    with pytest.raises(LedgerError, match=r"'h_0' of step t = 0 is already defined .*start=1 gives h_1, … and "
                                          r"leaves 'h_0' to the initial state"):
        _notebook_rnn(Ledger())
    L = Ledger()
    from symseq.blocks import cells

    run = cells.rnn(L, [L.input("x_0", 1), L.input("x_1", 2)], L.parameter("w_x", 1), L.parameter("w_h", 1))
    assert [r.name for r in run.z + run.h] == ["z_0", "z_1", "h_0", "h_1"] and run.start == 0


def test_rows_take_the_pages_names():
    L = Ledger()
    run = _notebook_rnn(L, start=1, names={"z": "a", "h": lambda t: f"s^{{({t})}}"})
    assert [r.name for r in run.z + run.h] == ["a_1", "a_2", "a_3", "s^{(1)}", "s^{(2)}", "s^{(3)}"]
    assert f"{float(sp.N(L.value('s^{(3)}'), 20)):.6f}" == "0.708873"


def test_an_unknown_row_key_or_origin_is_refused_with_the_keys():
    from symseq import ConventionError, ShapeError

    with pytest.raises(ConventionError, match="names= has no row 'y'; its rows are 'z', 'h'"):
        _notebook_rnn(Ledger(), names={"y": "a"})
    with pytest.raises(ShapeError, match="start, the time index of the first step as the page numbers it, must be an "
                                         "integer"):
        _notebook_rnn(Ledger(), start="1")


def test_gated_cells_and_sequence_inputs_take_the_time_origin_and_names():
    from symseq.blocks import cells

    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=2, start=1)
    assert [x.name for x in xs] == ["x_1", "x_2"]
    h0 = L.input("h_0", shape=(1, 3))
    run = cells.gru(L, xs, cells.gru_parameters(L, 2, 3), h_init=h0, start=1, names={"u": "z", "h̃": "n"})
    assert [r.name for r in run.gates["u"] + run.gates["h̃"] + run.h] == ["z_1", "z_2", "n_1", "n_2", "h_1", "h_2"]
    L = Ledger()
    xs = cells.sequence_inputs(L, 2, width=2, start=1)
    run = cells.lstm(L, xs, cells.lstm_parameters(L, 2, 3), h_init=L.input("h_0", shape=(1, 3)),
                     c_init=L.input("c_0", shape=(1, 3)), start=1, names={"c̃": "g"})
    assert [r.name for r in run.gates["c̃"] + run.c + run.h] == ["g_1", "g_2", "c_1", "c_2", "h_1", "h_2"]


def test_bptt_names_the_sensitivities_at_the_pages_time():
    from symseq.blocks import cells, heads
    from symseq.derive import bptt

    L = Ledger()
    run = _notebook_rnn(L, start=1)
    head = heads.regression_head(L, run, L.parameter("w_o", 1), positions="final")
    bp = bptt.bptt(L, run, heads.squared_error(L, head, targets=[L.input("y", exact("0.5"))]))
    assert [bp.adjoint(h) for h in run.h] == ["g_1^h", "g_2^h", "g_3^h"] and bp.adjoint(run.z[0]) == "g_1^z"


# -- 5. identities decided numerically first; 6. same-named symbols -----------------------------------------------


def _point_of(message):
    """The point a false identity's message names: {'w_h': 7/4, ...} (exact rationals as printed)."""
    import re

    body = message.split(" at ", 1)[1].split(":")[0]
    return {name: sp.Rational(value) for name, value in re.findall(r"([^\s,=]+) = (-?\d+(?:/\d+)?)", body)}


def test_a_false_identity_over_a_deep_expression_fails_at_once_with_a_point_and_its_value():
    """∂ℒ/∂w_x of a three-step tanh RNN against the same with w_h scaled by 1.01: SymPy's simplify ran for
    minutes and printed a page; now the message names a point and the value there, which plain SymPy confirms."""
    from symseq.derive import bptt

    def deep(s):
        L, run, bp = bptt.scalar_rnn("three tanh steps", T=3, activation=sp.tanh)
        s.use(L)
        g = L.expand(bp.grads.name("w_x"))
        s.identity("a wrong closed form", g - g.subs(L.symbol("w_h"), L.symbol("w_h") * sp.Rational(101, 100)))
        s.keep(ledger=L, g=g)

    d = _one_section(deep)
    r = d.claims[0].check()
    assert r.status == "mismatch" and r.message.startswith("the difference is not zero at ") and len(r.message) < 300
    L, g = d.sections[0].objects["ledger"], d.sections[0].objects["g"]
    point = {L.symbol(n): v for n, v in _point_of(r.message).items()}
    assert set(point) == g.free_symbols
    e = g - g.subs(L.symbol("w_h"), L.symbol("w_h") * sp.Rational(101, 100))
    value = sp.N(e.xreplace(point), 30)  # evaluated independently, by SymPy's own evalf
    assert abs(value) > 1e-3 and r.message.endswith(f"it is {sp.N(value, 12)}".rstrip("0"))


def test_a_false_identity_given_as_two_sides_shows_both_values():
    def sides(s):
        L = s.ledger()
        y = L.input("y_1")
        s.identity("½(y − 1)² = (y − 1)²/3", ((y - 1) ** 2 / 2, (y - 1) ** 2 / 3))

    r = _one_section(sides).claims[0].check()
    assert r.status == "mismatch"
    y = _point_of(r.message)["y_1"]
    left, right = (y - 1) ** 2 / 2, (y - 1) ** 2 / 3
    assert f"left {sp.N(left, 12)}".rstrip("0") in r.message and f"right {sp.N(right, 12)}".rstrip("0") in r.message


def test_a_true_identity_still_holds_and_a_general_phi_is_refuted_by_a_concrete_one():
    def ids(s):
        L = s.ledger()
        z = L.input("z")
        phi = sp.Function("phi")
        s.identity("tanh′ = 1 − tanh²", sp.diff(sp.tanh(z), z) - (1 - sp.tanh(z) ** 2))
        s.identity("(φ²)′ = 2 φ φ′", sp.diff(phi(z) ** 2, z) - 2 * phi(z) * sp.diff(phi(z), z))
        s.identity("(φ²)′ = φ′ (false)", sp.diff(phi(z) ** 2, z) - sp.diff(phi(z), z))

    ok, also_ok, false = (c.check() for c in _one_section(ids).claims)
    assert (ok.status, ok.message, also_ok.status) == ("ok", "1 difference simplifies to 0", "ok")
    assert false.status == "mismatch" and " with phi(u) = " in false.message


def test_simplification_has_a_bounded_time_and_says_so():
    from symseq.derive.symbolic import identity_proof

    x = sp.Symbol("x", real=True)
    p = identity_proof([sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1], seconds=1e-6)
    assert not p.holds and "it is zero to 20 digits at 3 point(s)" in p.detail
    assert "SymPy did not reduce it to 0 within 1e-06 s" in p.detail
    assert identity_proof([sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1]).holds


def test_an_identity_with_a_plain_symbol_beside_the_ledgers_names_the_clash_and_the_fix():
    """The issue's message was 'the difference (y_1 − 1)²/2 − (y_1 − 1)²/2 is not zero'."""
    def clash(s):
        L = s.ledger("squared error")
        L.define("ℓ", (L.input("y_1") - 1) ** 2 / 2)
        s.identity("ℓ = (y_1 − 1)²/2", L.expand("ℓ") - (sp.Symbol("y_1") - 1) ** 2 / 2)
        s.identity("ℓ = (y_1 − 1)²/2 with the ledger's symbol", L.expand("ℓ") - (L.symbol("y_1") - 1) ** 2 / 2)

    plain, fixed = (c.check() for c in _one_section(clash).claims)
    assert plain.status == "mismatch" and fixed.status == "ok"
    assert plain.message == (
        "the name 'y_1' stands for 2 different SymPy symbols (a symbol with no assumptions; the ledger 'squared "
        "error''s y_1 with real=True), which SymPy never takes for equal: build every side from the ledger's own "
        "symbols (L.symbol('y_1'), or the handle the ledger returned), not from a new sp.Symbol")


# -- 4. arrays as NumPy and PyTorch print them ---------------------------------------------------------------------

W = sp.Matrix([[sp.Rational(1, 10), sp.Rational(2, 10)], [sp.Rational(3, 10), sp.Rational(4, 10)]])


@pytest.mark.parametrize("printed", [
    "array([[0.1, 0.2],\n       [0.3, 0.4]])",
    "[[0.1 0.2]\n [0.3 0.4]]",
    "tensor([[0.1000, 0.2000],\n        [0.3000, 0.4000]])",
    "tensor([[0.1000, 0.2000],\n        [0.3000, 0.4000]], grad_fn=<AddmmBackward0>)",
    "tensor([[0.1000, 0.2000], [0.3000, 0.4000]], dtype=torch.float64, requires_grad=True)",
    "array([[1.e-01, 2.e-01],\n       [3.e-01, 4.e-01]])",
])
def test_a_matrix_printed_by_numpy_or_pytorch_is_one_claim(printed):
    d = _one_section(lambda s: s.claim(printed, s.ledger().input("W", W), what="W"))
    r = d.claims[0].check()
    assert r.status == "ok" and r.shape == (2, 2), r.message


def test_a_printed_array_keeps_each_entrys_digits_and_names_a_wrong_one():
    """tensor prints 0.2500 to four decimals: 0.2501 is wrong there; NumPy's 1. is 1 to no decimals."""
    def build(s):
        L = s.ledger()
        v = L.input("v", sp.Matrix([[sp.Rational(1, 4), 1, sp.Rational(-3, 10)]]))
        s.claim("tensor([ 0.2500,  1.0000, -0.3000])", v, what="v")
        s.claim("[0.25 1.   -0.3 ]", v, what="v, NumPy")
        s.claim("tensor([ 0.2501,  1.0000, -0.3000])", v, what="v, edited")
        s.claim("tensor(0.2500, grad_fn=<SelectBackward0>)", v[0, 0], what="v_0")
        s.claim("np.float64(0.25)", v[0, 0], what="v_0, NumPy 2")

    ok, numpy_ok, edited, scalar, np_scalar = (c.check() for c in _one_section(build).claims)
    assert (ok.status, numpy_ok.status, scalar.status, np_scalar.status) == ("ok",) * 4
    assert edited.status == "mismatch" and edited.message.startswith(
        "1 of 3 entries wrong: entry [0]: printed 0.2501, correct 0.2500")


@pytest.mark.parametrize("printed, why", [
    ("tensor([1., nan])", "a nan or inf entry is no value a page can claim"),
    ("array([0.1, ..., 0.5])", "NumPy or PyTorch left entries out"),
    ("tensor([0.1], names=('x',))", "expected only dtype=..., grad_fn=..., requires_grad=..., device=..."),
    ("[[[0.1 0.2]]]", "more than two dimensions"),
    ("array([[0.1, 0.2]]", "with balanced brackets"),
])
def test_an_array_that_cannot_be_read_says_why(printed, why):
    r = _one_section(lambda s: s.claim(printed, s.ledger().input("W", W), what="W")).claims[0].check()
    assert r.status == "error" and why in r.message


def test_an_array_is_read_never_run():
    """Text shaped like a call is data: nothing is evaluated (a name inside the brackets is not a number)."""
    r = _one_section(lambda s: s.claim("tensor([__import__('os').getpid(), 1])", s.ledger().input("W", W))) \
        .claims[0].check()
    assert r.status == "error" and "is not a number" in r.message


# -- 10. symseq new NAME -----------------------------------------------------------------------------------------


def test_symseq_new_writes_a_starter_that_verifies_audits_and_runs_under_pytest(tmp_path, monkeypatch, capsys):
    import os
    import subprocess
    import sys

    from symseq.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["new", "my-example"]) == 0
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "conftest.py", "derivations", "derivations/my_example.py"]
    text = (tmp_path / "derivations" / "my_example.py").read_text()
    for call in ('s.ledger(', 'L.input("x", exact("0.5"))', "s.claim(", "s.given(", 'source="my-worked-example.md"'):
        assert call in text
    capsys.readouterr()
    assert main(["verify", "my-example"]) == 0
    assert capsys.readouterr().out.strip().endswith("2 claims in 1 derivation(s): 2 ok")
    # the page the starter stands for audits clean: its inputs and both printed numbers are covered
    (tmp_path / "my-worked-example.md").write_text(
        "# 1. One tanh step\n\nTake x = 0.5, w = 0.8 and b = 0.1. Then z = w x + b = 0.5 and h = tanh(z) = 0.462117.\n")
    assert main(["audit", "my-worked-example.md"]) == 0
    assert "5 quantity tokens — 5 covered, 0 wrong" in capsys.readouterr().out
    # the folder named with --path from elsewhere: its derivations/ is searched, not the conftest.py beside it
    monkeypatch.chdir(tmp_path.parent)
    assert main(["verify", "my-example", "--path", str(tmp_path), "--no-cache"]) == 0
    assert capsys.readouterr().out.strip().endswith("2 claims in 1 derivation(s): 2 ok")
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr


def test_symseq_new_never_overwrites_and_writes_nothing_else(tmp_path, monkeypatch, capsys):
    from symseq.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "conftest.py").write_text("# the author's own\n")
    assert main(["new", "my_example"]) == 0
    assert (tmp_path / "conftest.py").read_text() == "# the author's own\n"
    before = (tmp_path / "derivations" / "my_example.py").read_text()
    capsys.readouterr()
    assert main(["new", "my-example"]) == 2  # the same module file
    assert "derivations/my_example.py already exists; symseq new never overwrites a file" in capsys.readouterr().err
    assert (tmp_path / "derivations" / "my_example.py").read_text() == before
    assert main(["new", "week08-decoder"]) == 2
    assert "bundled with symseq" in capsys.readouterr().err
    assert main(["new", "../escape"]) == 2
    assert "is not a derivation name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["conftest.py", "derivations", "my_example.py"]


# -- 9. per-time-step gradient terms of BPTT -----------------------------------------------------------------------


def _rational(rng, shape):
    return sp.Matrix(*shape, lambda i, j: sp.Rational(int(rng.integers(-9, 10)), 10))


@pytest.mark.parametrize("start", [0, 1])
def test_each_steps_term_is_the_gradient_of_a_per_step_copy_of_the_weight(rng, start):
    """(g_t^z)ᵀ x_t, (g_t^z)ᵀ h_{t−1} and 1ᵀ g_t^z against torch autograd (float64) on a copy of W_x, W_h, b used at
    step t only; and the terms add up to the ledger's gradient. T = 3, B = 2, D = 3, H = 2, C = 1, every position
    scored, a mean over positions and examples."""
    torch = pytest.importorskip("torch")
    from symseq.blocks import cells, heads
    from symseq.derive import bptt
    from symseq.values import Values

    T, B, D, H = 3, 2, 3, 2
    L = Ledger("per-step terms")
    xs = [L.input(f"x_{t + start}", _rational(rng, (B, D))) for t in range(T)]
    h0 = L.input("h_init", _rational(rng, (B, H)))
    W_x, W_h, b = (L.parameter(n, _rational(rng, s)) for n, s in (("W_x", (H, D)), ("W_h", (H, H)), ("b_h", (1, H))))
    run = cells.rnn(L, xs, W_x, W_h, b, phi="tanh", h_init=h0, start=start)
    head = heads.regression_head(L, run, L.parameter("W_o", _rational(rng, (1, H))), positions="all")
    ys = [L.input(f"y_{t + start}", _rational(rng, (B, 1))) for t in range(T)]
    bp = bptt.bptt(L, run, heads.squared_error(L, head, ys, positions="mean", batch="mean"))

    def tensor(name):
        return torch.tensor([[float(v) for v in row] for row in L.value(name).tolist()], dtype=torch.float64)

    copies = {r: [tensor(n).clone().requires_grad_(True) for _ in range(T)] for r, n in
              (("W_x", "W_x"), ("W_h", "W_h"), ("b", "b_h"))}
    h, loss = tensor("h_init"), 0
    for k in range(T):
        z = tensor(f"x_{k + start}") @ copies["W_x"][k].T + h @ copies["W_h"][k].T + copies["b"][k]
        h = torch.tanh(z)
        loss = loss + 0.5 * ((h @ tensor("W_o").T - tensor(f"y_{k + start}")) ** 2).sum() / (T * B)
    loss.backward()
    V = Values()
    assert abs(float(V.numeric(bp.ref(bp.loss.name))[0][0]) - loss.item()) < 1e-12
    for role, leaf in (("W_x", W_x), ("W_h", "W_h"), ("b", "b_h")):
        total = 0
        for k in range(T):
            term = bptt.step_term(bp, leaf, k + start)
            got = np.array([float(v) for v in V.numeric(term, ledger=L)[0]])
            want = copies[role][k].grad.numpy().ravel()
            assert np.allclose(got, want, rtol=0, atol=1e-12), (role, k)
            total = total + got
        whole = np.array([float(v) for v in V.numeric(bp.ref(bp.adjoint(leaf)))[0]])
        assert np.allclose(total, whole, rtol=0, atol=1e-12), role


def test_a_scalar_rnns_step_term_is_a_claim_and_a_bad_step_is_refused():
    """The three-step scalar tanh RNN of notebook 48 with a final loss ½(h_3 − 1/2)²: ∂ℒ/∂w_x at t = 2 is
    g_2^z x_2, claimed like any value (its value checked against the closed form, differentiated by SymPy)."""
    from symseq.blocks import heads
    from symseq.derive import bptt

    def build(s):
        L = s.ledger("notebook 48, final loss")
        run = _notebook_rnn(L, start=1)
        head = heads.regression_head(L, run, L.parameter("w_o", 1), positions="final")
        bp = bptt.bptt(L, run, heads.squared_error(L, head, [L.input("y", exact("0.5"))]))
        term = bptt.step_term(bp, "W_x", 2)
        # the same term from first principles: only the second use of W_xh varies
        w2 = sp.Symbol("w2", real=True)
        h = sp.Rational(1, 10)
        for t, x in zip((1, 2, 3), (sp.Rational(7, 10), sp.Rational(1, 2), sp.Rational(1, 5))):
            h = sp.tanh((w2 if t == 2 else sp.Rational(9, 10)) * x + sp.Rational(1, 2) * h + sp.Rational(3, 10))
        direct = sp.diff((h - sp.Rational(1, 2)) ** 2 / 2, w2).subs(w2, sp.Rational(9, 10))
        s.claim(f"{float(sp.N(direct, 20)):.6f}", term, what="∂ℒ/∂W_xh at t = 2")
        s.agree("the step term is the derivative by the second use of W_xh", term, direct)
        s.keep(bp=bp)

    d = _one_section(build)
    assert [c.check().status for c in d.claims] == ["ok", "ok"], [c.check().message for c in d.claims]
    bp = d.sections[0].objects["bp"]
    with pytest.raises(LedgerError, match=r"t = 0 is no step of this recurrence; its steps are t = 1, …, 3"):
        bptt.step_term(bp, "W_x", 0)
    from symseq import ConventionError

    with pytest.raises(ConventionError, match="none of the cell's shared weights"):
        bptt.step_term(bp, "w_o", 1)


def test_an_identity_is_evaluated_in_one_mpmath_context_per_precision(monkeypatch):
    # a context costs 1–3 ms to make; identity proofs made one for every term at every point, about a thousand in
    # symseq verify
    import mpmath
    import sympy as sp

    from symseq.derive.symbolic import identity_proof

    x, y = sp.symbols("x_ctx_test y_ctx_test", real=True)
    identity_proof([sp.tanh(x) * sp.cosh(x) - sp.sinh(x), (x + y) ** 2 - x**2 - 2 * x * y - y**2], digits=41).check()
    made = []
    init = mpmath.MPContext.__init__
    monkeypatch.setattr(mpmath.MPContext, "__init__", lambda self, *a, **k: made.append(1) or init(self, *a, **k))
    proof = identity_proof([sp.tanh(x) * sp.cosh(x) - sp.sinh(x), (x + y) ** 2 - x**2 - 2 * x * y - y**2], digits=41)
    assert proof.check() == (True, "2 differences simplify to 0")
    assert made == []
    wrong = identity_proof([sp.tanh(x) * sp.cosh(x) - sp.cosh(x)], digits=41)
    assert not wrong.holds and "is not zero at x_ctx_test = " in wrong.detail and made == []


def test_an_identity_evaluates_each_subexpression_once_per_point(monkeypatch):
    # the size of the terms (the scale a nonzero value is measured against) was evaluated again term by term
    import sympy as sp

    from symseq.backends import scalar
    from symseq.derive.symbolic import IDENTITY_POINTS, identity_proof

    x, y = sp.symbols("x_once_test y_once_test", real=True)
    planned = []
    plan = scalar.plan
    monkeypatch.setattr(scalar, "plan", lambda e, lib: planned.append(e) or plan(e, lib))
    assert identity_proof([sp.sin(x + y) ** 2 + sp.cos(x + y) ** 2 - 1]).holds
    assert planned.count(sp.sin(x + y)) == planned.count(x + y) == IDENTITY_POINTS


def test_a_claim_of_a_ledger_record_says_to_claim_its_handle():
    """``L["y"]`` is the ledger's record of a row (its name, shape, node), not a value: the error names the handle."""
    from symseq.errors import ClaimError
    from symseq.ledger import Ledger
    from symseq.verify.claims import Claim, as_quantity

    L = Ledger("t")
    L.input("x", "0.5")
    L.define("y", L.handle("x") * 2)
    with pytest.raises(ClaimError, match=r"cannot use a value of type Item; L\['y'\] is the ledger's record of the "
                                         r"row: claim its handle, L.handle\('y'\)"):
        as_quantity(Claim("1", "value", L["y"]))
