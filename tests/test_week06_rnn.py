"""The Week 06 first-half derivation (seed 004): its claims are real, located, and fail when a digit is wrong.

Every claim is also checked by tests/test_derivations.py; these tests check what the claims are about.
"""

import importlib.util

import pytest

from symseq.present.terminal import verify_table
from symseq.authoring import PairedRowsSpec, bundled

D = next(d for d in bundled() if d.name == "week06-rnn")


def claims_where(text):
    return [c for c in D.claims if text in str(c.location)]


def test_the_derivation_covers_the_first_half_and_every_section_builds():
    titles = [s.title for s in D.sections]
    assert titles[0].startswith("Why order and available context") and "Optional exercises" in titles[-1]
    assert any(t.startswith("One scalar recurrent model") for t in titles)
    assert not [s.title for s in D.sections if s.error]
    assert len(D.claims) >= 150
    assert D.source == "004_daeab95066cb0286.txt"


def test_printed_numbers_are_claims_with_their_locations():
    printed = {(c.printed, c.location.section) for c in D.claims if c.kind == "value"}
    for number, section in [("0.410", "A GRU"), ("0.9(0.5)+0.1(-0.4)", "A GRU"), ("1/4", "How the activation"),
                            ("1.2", "Controlled experiments"), ("-0.32768", "Optional exercises")]:
        assert any(p == number and s.startswith(section) for p, s in printed), (number, section)


def test_table_3_is_recorded_in_the_handouts_order():
    s = next(s for s in D.sections if "Table 3" in s.title)
    spec = next(x for x in s.displays if isinstance(x, PairedRowsSpec))
    assert [f for f, _ in spec.pairs] == ["z_0", "h_0", "z_1", "h_1", "z_2", "h_2", "ŷ", "ℒ"]
    assert [b for _, b in spec.pairs] == ["∂ℒ/∂h_{-1}", "g_0^z", "g_0^h", "g_1^z", "g_1^h", "g_2^z", "g_2^h", "e"]


def test_symbolic_results_are_proved_identities():
    proved = [c for c in D.claims if c.kind == "property"]
    assert len(proved) >= 90
    for text in ("bracketed path sum for w_x", "Table 3, backward column", "two-path recursion", "direct carry",
                 "path products, T = 50"):
        hits = claims_where(text)
        assert hits and all(c.check().status == "ok" for c in hits), text


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_the_seeded_nn_rnn_output_is_reproduced_to_its_digits():
    out = {c.what: c for c in claims_where("printed output")}
    assert out["h_1"].printed == "[0.00930, 0.0915]" and out["loss"].printed == "0.208"
    for c in out.values():
        assert c.check().status == "ok", c.id
    wrong = out["loss"].restated("0.209")
    r = wrong.check()
    assert r.status == "mismatch" and r.rounded == ["0.208"]
    wrong_h = out["h_1"].restated("[0.00931, 0.0915]")
    assert wrong_h.check().status == "mismatch"


def test_the_torch_section_is_skipped_with_a_reason_when_torch_is_absent(monkeypatch):
    title, fn, requires = next(b for b in D._builders if "PyTorch" in b[0])
    assert requires == ("torch",)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    s = D._build(title, fn, requires)
    assert s.skipped.startswith("needs torch") and not s.claims and not s.error


def test_a_wrong_exact_answer_is_a_mismatch():
    (ex2,) = [c for c in claims_where("exercise 2") if c.printed == "-0.32768"]
    assert ex2.restated("-0.32767").check().status == "mismatch"
    (mix,) = [c for c in claims_where("mixture example") if c.printed == "0.410"]
    assert mix.restated("0.420").check().status == "mismatch"


def test_statements_with_square_brackets_print_as_written():
    from rich.console import Console

    console = Console(record=True, width=250)
    console.print(verify_table(D))
    text = console.export_text()
    assert "w_x^[t]" in text and "[one path product per use]" in text
