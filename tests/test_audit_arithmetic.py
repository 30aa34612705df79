"""The derivation-free audit (symseq.audit.arithmetic): a page's own arithmetic, checked against hand labels."""

import importlib.util
import json
import sys
from pathlib import Path

import mpmath
import pytest

from symseq.audit import parse
from symseq.audit.arithmetic import audit_arithmetic, statements_of
from symseq.cli import main

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("arithmetic_coverage", ROOT / "benchmarks" / "arithmetic_coverage.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["arithmetic_coverage"] = bench  # its dataclasses look their module up
_spec.loader.exec_module(bench)


def _audit(text: str, fmt: str = "markdown"):
    return audit_arithmetic(parse(text, path="page.md", fmt=fmt))


@pytest.mark.parametrize("path", bench.files(), ids=lambda p: p.name)
def test_no_false_errata_and_every_decided_label_is_right(path):
    s = bench.score(path)
    assert not s.false_errata, [st.text for st in s.false_errata]
    assert not s.false_all_clear, [(lab.text, got) for lab, got in s.false_all_clear]
    assert not s.unlabelled, [st.text for st in s.unlabelled]
    # the audit may leave for a derivation (drift) what a reader decides from the page, never the reverse
    assert all(got == "drift" for lab, got in s.wrong_verdicts), [(lab.text, got) for lab, got in s.wrong_verdicts]


@pytest.mark.xfail(strict=True, reason="issue 13 goal not met: 78 of 348 independently labelled statements "
                                       "are decided (22%); most of the rest use named or tabulated printed values")
def test_at_least_half_of_the_labelled_statements_are_decided():
    labelled = decided = 0
    for p in bench.files():
        s = bench.score(p)
        labelled += len(s.labels)
        decided += len(s.decided)
    assert labelled and decided / labelled >= 0.5, (decided, labelled)


def test_chains_continue_on_the_next_line_and_names_are_not_read():
    rep = _audit("```python\nmean = (0.1 + 0.3 + (-0.2) + 0.8) / 4\n     = 1.0 / 4\n     = 0.25\n```\n")
    st, = rep.statements
    assert (st.first, st.line, st.status) == (2, 4, "ok")
    assert st.text == "(0.1 + 0.3 + (-0.2) + 0.8) / 4 = 1.0 / 4 = 0.25"


def test_a_wrong_result_is_an_erratum_with_its_line_and_correct_value():
    rep = _audit("Some prose.\n\n- `e^0.577 = 1.87`\n- `1 / 1.732 = 0.577`\n")
    bad, = rep.errata
    link, = bad.wrong
    assert bad.line == 3 and link.printed == ["1.87"] and link.correct == ["1.78"]
    with mpmath.workdps(30):  # independently: e^0.577 = 1.7806…
        assert mpmath.nstr(mpmath.exp(mpmath.mpf("0.577")), 3) == "1.78"
    assert {t.text: t.cls for t in rep.tokens if t.line == 3}["1.87"] == "wrong"
    assert {t.text: t.cls for t in rep.tokens if t.line == 4} == {"1": "covered", "1.732": "covered", "0.577": "covered"}


def test_a_result_within_the_rounding_of_its_operands_is_left_for_a_derivation():
    rep = _audit("h = tanh([0.55, 0.35]) = [0.500, 0.337]\n")
    st, = rep.statements
    assert st.status == "drift" and not rep.errata and not rep.failed


def test_softmax_and_means_stated_in_words():
    rep = _audit("For two scores [0,8], softmax is approximately [0.000335,0.999665].\n"
                 "unbalanced = [5, 6, 7, 8]  # mean = 6.5\n"
                 "For scores [1, 2], softmax gives [0.5, 0.5].\n")
    assert [(s.line, s.status) for s in rep.statements] == [(1, "ok"), (2, "ok"), (3, "wrong")]


def test_prose_code_and_definitions_are_not_statements():
    doc = parse("Time Step 1: x1 = 0.7, with h0 = 0.1\nq1 = [1, 0, 0]\nx = x + attention_output  # residual\n"
                "for t in range(3): h = tanh(W * x)\nThe year = 2017, see 3.5.\n", path="p.md", fmt="markdown")
    assert statements_of(doc) == []


def test_cli_audits_the_arithmetic_when_no_derivation_has_the_file(tmp_path, capsys):
    f = tmp_path / "page.md"
    f.write_text("The variance:\n\n    (0.0225 + 0.0025 + 0.2025 + 0.3025) / 4 = 0.5300 / 4 = 0.1326\n",
                 encoding="utf-8")
    out = tmp_path / "report.json"
    assert main(["--no-color", "audit", str(f), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "errata (1)" in text and "0.1326" in text and "0.1325" in text
    record = json.loads(out.read_text())
    assert record["failed"] and record["statements"][0]["status"] == "wrong"
    f.write_text("The variance: (0.0225 + 0.0025 + 0.2025 + 0.3025) / 4 = 0.1325\n", encoding="utf-8")
    assert main(["--no-color", "audit", str(f)]) == 0


def test_hostile_text_is_read_with_bounded_work():
    # long lines of relations, brackets and spaces: each side is tried over at most SIDE characters
    text = ("1 " * 3000 + "= ") * 20 + "\n" + "(" * 5000 + "= 1\n" + "9^9^9^9 = 1\n" + "1e99999 = 1\n"
    rep = _audit(text, fmt="text")
    assert not rep.errata


@pytest.mark.parametrize("name", ["layernorm-hello-prompt.md", "attn-course-cat-sat.md", "positional-encoding-d4.md"])
def test_an_edited_result_digit_never_passes(name):
    """Each result the audit finds right, with its last digit moved by one, is wrong (or left for a derivation
    when within its operands' rounding), never right."""
    path = bench.EXAMPLES / name
    doc = parse(path.read_text(encoding="utf-8"), path=name, fmt="markdown")
    rep = audit_arithmetic(doc)
    lines = doc.lines
    edits = 0
    for st in rep.statements:
        if st.status != "ok":
            continue
        line, a, b = st.spans[-1]
        text = lines[line - 1]
        digits = [i for i in range(a, b) if text[i].isdigit()]
        if not digits:
            continue
        i = digits[-1]
        for new in {str((int(text[i]) + 1) % 10), str((int(text[i]) + 9) % 10)}:
            edited = list(lines)
            edited[line - 1] = text[:i] + new + text[i + 1:]
            again = audit_arithmetic(parse("\n".join(edited), path=name, fmt="markdown"))
            same = [s for s in again.statements if s.line == st.line and s.spans[-1][1:] == st.spans[-1][1:]]
            assert len(same) == 1 and same[0].status != "ok", (line, edited[line - 1])
            edits += 1
    assert edits >= 10
