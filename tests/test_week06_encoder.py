"""The Week 06 encoder derivation (004, second half): its claims, tables, figures and notes."""

import re
from collections import Counter

import numpy as np
import pytest

from symseq import evaluate
from symseq.derivations import week06_encoder as w6
from symseq.authoring import HeatmapSpec, TableSpec

D = w6.derivation

# Claims per printed table: every number (rows × columns), and for Table 33 its target and visible-prefix cells.
TABLE_ENTRIES = {7: 7, 10: 21, 11: 21, 12: 21, 13: 21, 14: 21, 15: 21, 16: 14, 17: 14, 18: 21, 19: 21, 20: 35,
                 23: 40, 24: 28, 25: 35, 26: 35, 27: 35, 28: 35, 29: 35, 30: 35, 31: 35, 33: 8}


def test_every_section_builds_and_cites_the_handout():
    assert D.source == "004_daeab95066cb0286.txt"
    assert [s.title for s in D.sections if s.error] == []
    assert "004_daeab95066cb0286.txt" in w6.__doc__ and "Table 34" in w6.__doc__


def test_claim_count_and_kinds():
    kinds = Counter(c.kind for c in D.claims)
    assert len(D.claims) >= 771  # every printed number of the part is claimed (the audit's coverage decides which)
    assert kinds["value"] >= 650 and kinds["shape"] >= 55 and kinds["property"] >= 50


def test_every_printed_table_entry_is_a_claim():
    per_table = Counter()
    for c in D.claims:
        m = re.search(r"Table (\d+), row ", c.location.at)
        if m:
            per_table[int(m.group(1))] += 1
    assert dict(per_table) == TABLE_ENTRIES
    three_digit = [c for c in D.claims if re.search(r"Table (1[0-9]|2[0-9]|3[01]), row ", c.location.at)]
    assert all(c.digits == 3 for c in three_digit)


def test_a_wrong_digit_is_caught():
    claim = next(c for c in D.claims if (c.location.table, c.location.row, c.location.column)
                 == ("Table 31", "6: begins", "Feature 0"))
    assert claim.printed == "-1.68" and claim.check().ok
    wrong = claim.restated("-1.67")
    r = wrong.check()
    assert r.status == "mismatch" and "correct -1.68" in r.message
    zero = next(c for c in D.claims if (c.location.table, c.location.row, c.location.column)
                == ("Table 16", "2: of", "Causal A_1j"))
    assert zero.printed == "0" and zero.check().method == "exact zero"


def test_figures_are_recorded_with_masks():
    displays = [d for s in D.sections for d in s.displays]
    heatmaps = {d.label: d for d in displays if isinstance(d, HeatmapSpec)}
    assert set(heatmaps) == {"Figure 4", "Figure 5", "Figure 6", "Figure 8", "Figure 9", "Figure 10", "Figure 11"}
    allowed = np.asarray(heatmaps["Figure 11"].allowed)
    assert allowed.shape == (7, 7) and allowed[1, 2] == False and allowed[2, 1] == True  # noqa: E712
    assert heatmaps["Figure 8"].value.shape == (8, 3)  # seven weighted values and their column sums
    tables = {d.label for d in displays if isinstance(d, TableSpec)}
    assert {f"Table {n}" for n in TABLE_ENTRIES if n != 33} | {"Table 8"} <= tables


def test_omissions_are_noted():
    notes = " ".join(n for s in D.sections for n in s.notes)
    for phrase in ("Table 8 is the handout's chosen", "not multiplied by √D", "Table 34", "no PAD token"):
        assert phrase in notes


def test_the_handout_block_agrees_across_backends():
    pytest.importorskip("torch")
    L, r = w6.walkthrough_block()
    exact50 = evaluate(L, "mpmath", dps=50)[r["enc"].out.name]
    fast = evaluate(L, "torch")[r["enc"].out.name].numpy()
    np.testing.assert_allclose(fast, np.array(exact50, dtype=float), rtol=0, atol=1e-13)
    # The begins row of Table 31 to the printed digits.
    np.testing.assert_allclose(fast[6], [-1.68, 1.05, 0.439, 0.75, -0.562], rtol=5e-3)
