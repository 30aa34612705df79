"""symseq show (present/show.py): paired rows in recorded order, tables with the handout's rounding, plain pipes."""

import io
import re

import numpy as np
import pytest
from rich.console import Console

from symseq.cli import main
from symseq.present.show import ledger_display
from symseq.present.terminal import check_all

from present_helpers import DEMO_PATH, demo
from data.present_demo import H_PRINTED, H_VALUES, TOKENS, W_K, W_Q

SHOW = ["--no-color", "show", "--no-bundled", "--path", str(DEMO_PATH), "present-demo"]


def _show(capsys, *extra, width=140, monkeypatch=None):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(SHOW + list(extra)) == 0
    return capsys.readouterr().out


def test_paired_rows_print_side_by_side_in_recorded_order(capsys, monkeypatch):
    out = _show(capsys, "§1", monkeypatch=monkeypatch)
    expected = [  # Week 06's Table 3: forward downward, backward upward from the loss
        ("z₀ = wₕ h₋₁ + wₓ x₀ = wₓ x₀", "∂L/∂h₋₁ = g₀ᶻ wₕ"),
        ("h₀ = φ(z₀)", "g₀ᶻ = g₀ʰ φ′(z₀)"),
        ("z₁ = wₕ h₀ + wₓ x₁", "g₀ʰ = g₁ᶻ wₕ"),
        ("h₁ = φ(z₁)", "g₁ᶻ = g₁ʰ φ′(z₁)"),
        ("z₂ = wₕ h₁ + wₓ x₂", "g₁ʰ = g₂ᶻ wₕ"),
        ("h₂ = φ(z₂)", "g₂ᶻ = g₂ʰ φ′(z₂)"),
        ("ŷ = wₒ h₂", "g₂ʰ = e wₒ"),
        ("L = (ŷ − y)²/2", "e = ŷ − y"),
    ]
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "forward pass" in ln and "backward pass" in ln)
    rows = [ln for ln in lines[start + 2:start + 2 + len(expected)]]
    for line, (fwd, bwd) in zip(rows, expected):
        assert fwd in line and bwd in line, (line, fwd, bwd)
        assert line.index(fwd) < line.index(bwd)


def test_numeric_pairs_show_values_beside_formulas(capsys, monkeypatch):
    out = _show(capsys, "§2", monkeypatch=monkeypatch)
    line = next(ln for ln in out.splitlines() if ln.lstrip().startswith("h₀ = tanh(z₀)"))
    assert "tanh(1/2) ≈ 0.462117" in line  # exact closed form beside its decimal
    assert "g₀ᶻ = g₀ʰ (1 − tanh²(z₀))" in line


def _table_rows(out, title, n):
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    body = [ln for ln in lines[start + 1:] if ln.strip() and not set(ln.strip()) <= set("─━")]
    return body[1:1 + n]  # after the header


def test_table_prints_with_the_handouts_rounding(capsys, monkeypatch):
    out = _show(capsys, "§3", monkeypatch=monkeypatch)
    assert "Table 1: positioned inputs  (three significant digits)" in out
    rows = _table_rows(out, "Table 1", 7)
    for line, token, printed in zip(rows, TOKENS, H_PRINTED):
        assert line.split()[-5:] == printed, line
        assert line.strip().startswith(token)


def test_begins_table_matches_an_independent_float_computation(capsys, monkeypatch):
    H = np.array(H_VALUES, dtype=float)
    Q, K = H @ np.array(W_Q, dtype=float).T, H @ np.array(W_K, dtype=float).T
    raw = Q[6] @ K.T
    S = raw / np.sqrt(3)
    A = np.exp(S - S.max()) / np.exp(S - S.max()).sum()
    out = _show(capsys, "§3", monkeypatch=monkeypatch)
    rows = _table_rows(out, "Table 3: the begins query", 7)
    for j, line in enumerate(rows):
        assert line.split()[-3:] == [format(raw[j], ".3g"), format(S[j], ".3g"), format(A[j], ".3g")], line


def test_heatmap_marks_masked_entries(capsys, monkeypatch):
    out = _show(capsys, "§3", monkeypatch=monkeypatch)
    rows = _table_rows(out, "Figure 1: causal scores", 7)
    for i, line in enumerate(rows):
        assert line.count("×") == 6 - i, line
    assert "−∞" not in "\n".join(rows)


def test_claims_show_with_status(capsys, monkeypatch):
    out = _show(capsys, "§3", monkeypatch=monkeypatch)
    line = next(ln for ln in out.splitlines() if "Table 2: the first row divided by three, row 0: a, Feature 0" in ln)
    assert "0.0667" in line and line.rstrip().endswith("ok")


def test_plain_output_when_piped(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["show", "--no-bundled", "--path", str(DEMO_PATH), "present-demo"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # no colour codes, no progress bar, no cursor movement
    assert "checking" not in out


def test_width_aware(capsys, monkeypatch):
    out = _show(capsys, "§3", width=72, monkeypatch=monkeypatch)
    assert max(len(ln) for ln in out.splitlines()) <= 72
    # a 7×3 grid does not fit beside its formula in 72 columns: the row prints with its grid below it
    assert re.search(r"^Q = H⁽⁰⁾ W_Qᵀ", out, re.M)


def test_ledger_grid_shows_exact_forms_beside_decimals():
    from symseq.present.views import ledger_values
    from symseq.authoring import bundled

    d = [d for d in bundled() if d.name == "week08-decoder"][0]
    L = [s for s in d.sections if s.title.startswith("§4")][0].ledgers[0]
    num, ex = ledger_values(L)
    buf = io.StringIO()
    Console(file=buf, width=140, no_color=True).print(ledger_display(L, values=num, exact=ex))
    text = buf.getvalue()
    assert "1/√2 ≈ 0.707107" in text  # S = QKᵀ/√2 on the diagonal
    assert "softmax_rows(S_causal)" in text
    assert "−∞" in text  # the masked score


def test_progress_only_on_a_terminal():
    d = demo()
    term = io.StringIO()
    check_all([d], out=Console(file=term, force_terminal=True, width=100))
    assert "checking" in term.getvalue() or "building" in term.getvalue()
    piped = io.StringIO()
    check_all([d], out=Console(file=piped, force_terminal=False, width=100))
    assert piped.getvalue() == ""


def test_verify_piped_has_no_progress(capsys):
    assert main(["verify", "--no-bundled", "--path", str(DEMO_PATH)]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out and "building" not in out and "checking claims" not in out


def test_unknown_section_lists_the_sections(capsys):
    assert main(SHOW + ["§9"]) == 2
    err = capsys.readouterr().err
    assert "§1 Forward and backward rows" in err


def test_large_matrices_show_their_leading_block():
    from symseq import Ledger
    from symseq.present.views import ledger_values

    L = Ledger("a 20×15 matrix")
    X = L.input("X", [[i * j for j in range(15)] for i in range(20)])
    L.define("Y", X * 2)
    num, ex = ledger_values(L)
    buf = io.StringIO()
    Console(file=buf, width=100, no_color=True).print(ledger_display(L, values=num, exact=ex, width=100))
    text = buf.getvalue()
    assert text.count("first 12 of 20 rows, 12 of 15 columns") == 2
    row11 = [ln.split() for ln in text.splitlines() if ln.split()[:1] == ["11"]]
    assert row11[1] == ["11"] + [str(2 * 11 * j) for j in range(12)]  # Y = 2X, exact integers


def test_a_broken_display_is_reported_and_the_rest_still_shows_then_it_fails(monkeypatch):
    from symseq.errors import ClaimError

    import sympy as sp

    from symseq import Derivation
    from symseq.present.show import show

    d = Derivation("broken-demo", title="a display with too few labels", source="test")

    @d.section("§1")
    def one(s):
        s.show_table("bad table", sp.eye(2), rows=["only one"])
        s.show_table("good table", sp.eye(2), digits=3)

    buf = io.StringIO()
    with pytest.raises(ClaimError, match=r"broken-demo · §1 · bad table: the display cannot be rendered: bad table "
                                         r"rows: 1 labels for 2 rows"):
        show(d, d.sections, Console(file=buf, width=100, no_color=True))
    text = buf.getvalue()
    assert "bad table: cannot be shown: bad table rows: 1 labels for 2 rows" in text
    assert "good table" in text


def test_square_brackets_are_text_not_markup():
    from symseq import Ledger
    from symseq.present.views import ledger_values

    L = Ledger("uses [t] of a shared weight")
    w = L.input("w_x^[t]", 2)
    L.define("y", w * 3)
    num, ex = ledger_values(L)
    buf = io.StringIO()
    Console(file=buf, width=100, no_color=True).print(ledger_display(L, values=num, exact=ex))
    text = buf.getvalue()
    assert "3 wₓ^{[t]}" in text and "uses [t] of a shared weight" in text


def test_no_color_after_the_command(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["show", "--no-bundled", "--path", str(DEMO_PATH), "present-demo", "§1", "--no-color"]) == 0
    assert "z₀ = wₕ h₋₁ + wₓ x₀ = wₓ x₀" in capsys.readouterr().out


def test_heatmap_caption_names_the_figure_and_its_title():
    import sympy as sp

    from symseq import Derivation
    from symseq.present.show import show

    d = Derivation("caption-demo", title="captions", source="test")

    @d.section("§1")
    def one(s):
        s.heatmap("Figure 8", sp.Matrix([[1, -2], [3, 4], [5, 6]]), rows=["a", "b", "sum"], cols=["f0", "f1"],
                  title="Weighted values")

    buf = io.StringIO()
    show(d, d.sections, Console(file=buf, width=100, no_color=True))
    text = buf.getvalue()
    assert "Figure 8: Weighted values" in text
    assert "queries" not in text and "masked" not in text  # rows and columns are not the same positions


def _bundled_or_skip(name):
    from symseq.authoring import bundled

    found = [d for d in bundled() if d.name == name]
    if not found:
        pytest.skip(f"{name} is not bundled on this branch")
    return found[0]


def _section_with(d, label):
    from symseq.authoring import PairedRowsSpec, TableSpec

    for s in d.sections:
        for x in s.displays:
            if isinstance(x, (PairedRowsSpec, TableSpec)) and x.label == label:
                return s
    raise AssertionError(f"{d.name} records no display labelled {label!r}")


def test_week06_rnn_table_3_in_the_handouts_row_order():
    # Week 06 handout (004), Table 3: forward downward, backward upward from the loss, row for row
    from symseq.present.show import show

    d = _bundled_or_skip("week06-rnn")
    buf = io.StringIO()
    show(d, [_section_with(d, "Table 3")], Console(file=buf, width=140, no_color=True))
    lines = buf.getvalue().splitlines()
    start = next(i for i, ln in enumerate(lines) if "forward pass" in ln and "backward pass" in ln)
    expected = [("z₀ = ", "∂ℒ/∂h₋₁ = g₀ᶻ wₕ"), ("h₀ = φ(z₀)", "g₀ᶻ = g₀ʰ φ′(z₀)"), ("z₁ = ", "g₀ʰ = g₁ᶻ wₕ"),
                ("h₁ = φ(z₁)", "g₁ᶻ = g₁ʰ φ′(z₁)"), ("z₂ = ", "g₁ʰ = g₂ᶻ wₕ"), ("h₂ = φ(z₂)", "g₂ᶻ = g₂ʰ φ′(z₂)"),
                ("ŷ = wₒ h₂", "g₂ʰ = e wₒ"), ("ℒ = ", "e = ŷ − y")]
    for line, (fwd, bwd) in zip(lines[start + 2:], expected):
        assert line.lstrip().startswith(fwd) and bwd in line, (line, fwd, bwd)
    assert "z₀ = wₕ h₋₁ + wₓ x₀ = wₓ x₀" in lines[start + 2]


def test_week06_encoder_table_13_with_the_handouts_rounding():
    # Week 06 handout (004), Table 13: the begins query's raw score, scaled score and weight per source
    from symseq.present.show import show

    d = _bundled_or_skip("week06-encoder")
    buf = io.StringIO()
    show(d, [_section_with(d, "Table 13")], Console(file=buf, width=140, no_color=True))
    printed = [["0: a", "0.672", "0.388", "0.185"], ["1: journey", "0.257", "0.148", "0.146"],
               ["2: of", "-0.617", "-0.356", "0.0881"], ["3: a", "-1.45", "-0.839", "0.0544"],
               ["4: thousand", "-1.38", "-0.797", "0.0567"], ["5: miles", "0.776", "0.448", "0.197"],
               ["6: begins", "1.34", "0.774", "0.273"]]
    rows = _table_rows(buf.getvalue(), "Table 13", 7)
    for line, want in zip(rows, printed):
        assert line.split()[-3:] == want[1:] and line.strip().startswith(want[0]), line


def test_a_claims_place_is_read_from_its_location_not_from_a_comma_in_the_section_title():
    from symseq import Derivation, Ledger
    from symseq.present.show import claims_table

    d = Derivation("t-where", title="t", source="t.txt")

    @d.section("Pre-norm, post-norm, and the backward path")
    def section(s):
        L = s.ledger()
        y = L.define("y", 2 * L.input("x", "0.25"))
        s.claim("0.5", y, what="y")
        s.claim("0.50", y, what="y again", at="Table 9, row 0")

    console = Console(width=140, file=io.StringIO(), color_system=None)
    console.print(claims_table("claims", d.claims))
    out = console.file.getvalue()
    first = next(ln for ln in out.splitlines() if " y " in f" {ln} " and "again" not in ln)
    assert "post-norm" not in first and "backward path" not in first
    assert "Table 9, row 0" in next(ln for ln in out.splitlines() if "again" in ln)
    assert [str(c.location) for c in d.claims] == ["Pre-norm, post-norm, and the backward path",
                                                   "Pre-norm, post-norm, and the backward path, Table 9, row 0"]
    assert d.claims[1].location.table == "Table 9" and d.claims[0].location.at == ""
