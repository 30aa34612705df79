"""Relations between printed tables, found and checked with no derivation (symseq.audit.tables)."""

import os

import mpmath
import pytest

from symseq.audit import parse
from symseq.audit import tables
from symseq.audit.arithmetic import audit_arithmetic
from test_audit import SEEDS, W6

A = [[0.2, 0.9, 0.4, 1.0, -0.2], [1.34, 0.84, -0.175, 0.7, 0.1], [0.809, -0.216, 0.0502, 0.3, 0.5],
     [0.341, -1.09, 0.475, 0.997, -0.198], [-0.357, -1.05, 0.3, 0.2, 0.4], [-0.859, 0.784, -0.175, 0.6, -0.3]]
B = [[-0.817, 0.315, 0.131, 0.686, -0.144], [0.347, -0.107, 0.022, 1.28, -0.295], [0.398, 0.378, 0.221, 1.42, -0.306],
     [0.0512, 0.661, 0.32, 1.34, -0.413], [-0.212, 0.643, 0.303, 1.3, -0.585], [-1.18, 0.454, 0.0757, 0.755, -0.528]]


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _table(label: str, rows, caption: str = "rows of one stage") -> str:
    head = "| position | f0 | f1 | f2 | f3 | f4 |\n|---|---|---|---|---|---|\n"
    body = "".join(f"| {i} | " + " | ".join(_fmt(x) for x in r) + " |\n" for i, r in enumerate(rows))
    return f"{label}: {caption}.\n\n{head}{body}\n"


def _page(*tabs) -> str:
    return "# A stage-by-stage example\n\n" + "".join(_table(f"Table {k + 1}", t) for k, t in enumerate(tabs))


def _sum(a, b):
    return [[float(_fmt(x + y)) for x, y in zip(r, s)] for r, s in zip(a, b)]


def _audit(text: str):
    return audit_arithmetic(parse(text, path="page.md", fmt="markdown"))


def test_a_table_that_is_the_sum_of_two_others_is_checked_row_by_row():
    rep = _audit(_page(A, B, _sum(A, B)))
    rows = [s for s in rep.statements if " + " in s.text]
    assert len(rows) == 6 and all(s.status in ("ok", "drift") for s in rows)
    assert rows[0].text.startswith("(0.2, 0.9, 0.4, 1, -0.2) + (-0.817, 0.315")
    third = {t.line for t in rep.tokens if t.attribution.verdict == "covered"}
    assert third == {s.line for s in rows}  # the sums' numbers are checked; the operands are not claimed


def test_one_wrong_entry_in_a_summed_table_is_an_erratum_on_its_row():
    c = _sum(A, B)
    c[3][1] = 0.332  # printed for −1.09 + 0.661 = −0.429
    rep = _audit(_page(A, B, c))
    bad, = rep.errata
    link, = bad.wrong
    assert link.wrong == [1] and link.printed[1] == "0.332" and link.correct[1] == "-0.429"
    assert all(s.status != "wrong" for s in rep.statements if s is not bad)


def test_two_wrong_rows_leave_the_relation_unclaimed_rather_than_guessed():
    c = _sum(A, B)
    c[1][0], c[4][2] = 9.99, -7.77
    rep = _audit(_page(A, B, c))
    assert not [s for s in rep.statements if " + " in s.text]  # not found: its numbers stay uncovered
    assert not rep.errata


def test_unrelated_tables_give_no_statement():
    other = [[round(0.37 * i - 0.11 * j, 3) + 0.5 for j in range(5)] for i in range(6)]
    rep = _audit(_page(A, B, other))
    assert not rep.statements


def _ln(row):
    with mpmath.workdps(30):
        m = mpmath.fsum(row) / len(row)
        v = mpmath.fsum((x - m) ** 2 for x in row) / len(row)
        return [(x - m) / mpmath.sqrt(v) for x in row]


def test_layer_norm_of_each_row():
    normed = [[float(_fmt(float(x))) for x in _ln([mpmath.mpf(str(_fmt(v))) for v in r])] for r in A]
    rep = _audit(_page(A, normed))
    rows = [s for s in rep.statements if s.text.startswith("LayerNorm")]
    assert len(rows) == 6 and all(s.status in ("ok", "drift") for s in rows)


def test_a_short_entry_is_read_at_the_precision_of_its_table():
    g = tables.grids(parse(_page(A, B, _sum(A, B)), path="p.md", fmt="markdown"))[2]
    short = g.cells[4][3][0].number  # 0.2 + 1.3 = 1.5, printed by %.3g among three-digit numbers: 1.50
    assert (short.text, short.decimals, g.shown[4][3]) == ("1.50", 2, "1.5")
    mixed = tables.grids(parse(_page(A, B), path="p.md", fmt="markdown"))[0]
    assert mixed.cells[0][0][0].number.text == "0.2"  # no precision most entries share: as printed


def test_a_dot_product_with_a_one_decimal_vector_is_never_taken_for_a_relation():
    # every small number lies within the rounding of (0.2, −0.1, 0.4, 0, −0.2)·row: no evidence of anything
    page = "The input is (0.2, -0.1, 0.4, 0, -0.2).\n\n" + _page(A, [[0.101, 0.113, 0.0757, 0.139, 0.101]] * 6)
    assert not _audit(page).statements


def test_a_stopped_search_says_so(monkeypatch):
    monkeypatch.setattr(tables, "BUDGET", 3)
    rep = _audit(_page(A, B, _sum(A, B)))
    note, = [r for line, _, r in rep.unread if line == 0]
    assert "stopped after 3 candidates" in note


@pytest.fixture(scope="module")
def week06():
    path = SEEDS / W6
    if not path.is_file():
        assert not os.environ.get("CI"), f"the seed {path} is missing"
        pytest.skip(f"no seed handout at {path}")
    return audit_arithmetic(parse(path.read_text(encoding="utf-8"), path=W6))


def _at(rep, line: int, start: str):
    s, = [s for s in rep.statements if s.line == line and s.text.startswith(start)]
    return s


def test_week06_stage_tables_are_related_without_a_derivation(week06):
    # Table 30 = Table 27 + Table 29 (row 0): 0.531 + 0.434 = 0.965, printed 0.966, and 1.69 + 0.319 = 2.009,
    # printed "2" (2.00 in a table of three significant digits): within the operands' rounding, not wrong …
    s = _at(week06, 1140, "(-0.617, 1.21")
    link = s.links[0]
    assert s.status == "drift" and [link.printed[i] for i in link.wrong] == ["0.966", "2.00"]
    # … Table 28 = LayerNorm(Table 27) (row 0): from the printed row the first entry is 0.813, printed 0.818;
    # within the rounding of the printed operands, so a derivation decides (the page computed unrounded).
    row = [mpmath.mpf(x) for x in ("-0.617", "1.21", "0.531", "1.69", "-0.344")]
    assert mpmath.nstr(_ln(row)[1], 3) == "0.813"
    s = _at(week06, 1118, "LayerNorm(-0.617")
    assert s.status == "drift"
    # Table 13: S = raw / √3 and A = softmax(S), entry by entry
    assert _at(week06, 688, "0.672/√3").status == "ok"
    assert _at(week06, 688, "softmax(0.388").status == "ok"
    # Table 24: the LN₂ mean and population variance of Table 27's rows
    assert _at(week06, 1075, "(mean, population variance) of (1.69").status == "ok"
    assert not week06.errata
