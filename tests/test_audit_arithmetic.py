"""The derivation-free audit (symseq.audit.arithmetic): a page's own arithmetic, checked against hand labels."""

import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import mpmath
import pytest

from symseq.audit import parse
from symseq.audit.arithmetic import audit_arithmetic, statements_of
from symseq.audit.report import AuditReport
from symseq.cli import main

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("arithmetic_coverage", ROOT / "benchmarks" / "arithmetic_coverage.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["arithmetic_coverage"] = bench  # its dataclasses look their module up
_spec.loader.exec_module(bench)
score = functools.lru_cache(bench.score)  # each page is scored once, for the two tests that read its score


def _verdict(arith):
    """The audit of a page with no derivation (its verdict, errata and failures) from its arithmetic ``arith``."""
    return AuditReport.of_page(arith)


def _audit(text: str, fmt: str = "markdown"):
    return audit_arithmetic(parse(text, path="page.md", fmt=fmt))


@pytest.mark.parametrize("path", bench.files(), ids=lambda p: p.name)
def test_no_false_errata_and_every_decided_label_is_right(path):
    s = score(path)
    assert not s.false_errata, [st.text for st in s.false_errata]
    assert not s.false_all_clear, [(lab.text, got) for lab, got in s.false_all_clear]
    assert not s.unlabelled, [st.text for st in s.unlabelled]
    # the audit may leave for a derivation (drift) what a reader decides from the page, never the reverse
    assert all(got == "drift" for lab, got in s.wrong_verdicts), [(lab.text, got) for lab, got in s.wrong_verdicts]


def test_at_least_half_of_the_labelled_statements_are_decided():
    paths = bench.files()
    if os.environ.get("CI"):  # the seeds hold most of the labels: in CI they must be there
        assert sum(p.parent == bench.SEEDS for p in paths) == 4, bench.SEEDS
    labelled = decided = 0
    for p in paths:
        s = score(p)
        labelled += len(s.labels)
        decided += len(s.decided)
    assert labelled and decided / labelled >= 0.5, (decided, labelled)


def test_chains_continue_on_the_next_line_and_names_are_not_read():
    rep = _audit("```python\nmean = (0.1 + 0.3 + (-0.2) + 0.8) / 4\n     = 1.0 / 4\n     = 0.25\n```\n")
    inner, st = rep.statements  # the rewrite's inner result 1.0 (line 3) is a step of its own
    assert (st.first, st.line, st.status) == (2, 4, "ok")
    assert st.text == "(0.1 + 0.3 + (-0.2) + 0.8) / 4 = 1.0 / 4 = 0.25"
    assert (inner.first, inner.line, inner.text, inner.status) == (2, 3, "0.1 + 0.3 + (-0.2) + 0.8 = 1.0", "ok")


def test_a_wrong_result_is_an_erratum_with_its_line_and_correct_value():
    rep = _audit("Some prose.\n\n- `e^0.577 = 1.87`\n- `1 / 1.732 = 0.577`\n")
    bad, = rep.errata
    link, = bad.wrong
    assert bad.line == 3 and link.printed == ["1.87"] and link.correct == ["1.78"]
    with mpmath.workdps(30):  # independently: e^0.577 = 1.7806…
        assert mpmath.nstr(mpmath.exp(mpmath.mpf("0.577")), 3) == "1.78"
    assert {t.text: t.attribution.verdict for t in rep.tokens if t.line == 3}["1.87"] == "wrong"
    assert {t.text: t.attribution.verdict for t in rep.tokens if t.line == 4} == {"1": "covered", "1.732": "covered", "0.577": "covered"}


def test_a_result_within_the_rounding_of_its_operands_is_left_for_a_derivation():
    # 0.55 and 0.35 printed in place are exact inputs: tanh(0.55) = 0.50052 prints 0.501, so 0.500 is wrong
    st, = _audit("h = tanh([0.55, 0.35]) = [0.500, 0.337]\n").statements
    assert st.status == "wrong"
    with mpmath.workdps(30):
        assert mpmath.nstr(mpmath.tanh(mpmath.mpf("0.55")), 3) == "0.501"
    # printed as the exact result of W_h x first (0.5 + 0.1·0.5 = 0.55), they are exact there too: 0.500 is wrong
    rep = _audit("W_h = [[0.5, 0.1], [0.2, 0.3]]\n\nh = tanh(W_h @ [1.0, 0.5]) = tanh([0.55, 0.35]) = [0.500, 0.337]\n")
    st = next(s for s in rep.statements if s.text.startswith("tanh(W_h"))
    assert st.status == "wrong" and _verdict(rep).failed
    # printed as a rounded result (W_h [1.0, 0.49] = [0.549, 0.347]), they may be rounded: [0.500, 0.337] is then
    # within their rounding (tanh over 0.35 ± 0.005 spans 0.3364 … 0.3410)
    rep = _audit("W_h = [[0.5, 0.1], [0.2, 0.3]]\n\n"
                 "h = tanh(W_h @ [1.0, 0.49]) = tanh([0.55, 0.35]) = [0.500, 0.337]\n")
    st = next(s for s in rep.statements if s.text.startswith("tanh(W_h"))
    assert st.status == "drift" and not rep.errata and not _verdict(rep).failed
    with mpmath.workdps(30):
        assert mpmath.tanh(mpmath.mpf("0.345")) < mpmath.mpf("0.3365") < mpmath.mpf("0.3375") < mpmath.tanh(
            mpmath.mpf("0.355"))


def test_a_chain_printed_from_exact_inputs_keeps_its_intermediate_exact():
    """(0.2·0.3 + 0.4·(−0.2))/√2 = −0.02/√2: −0.02 is the exact value of the inputs' sum, not a rounded one, so
    the result printed after it is decided at its printed digits (−0.0141, not −0.0144)."""
    text = "For example $S_{10} = (0.2 \\cdot 0.3 + 0.4 \\cdot (-0.2)) / \\sqrt{2} = -0.02 / \\sqrt{2} = {}$.\n"
    with mpmath.workdps(30):
        assert mpmath.nstr(mpmath.mpf("-0.02") / mpmath.sqrt(2), 3) == "-0.0141"
    assert not _audit(text.replace("{}", "-0.0141")).errata
    bad, = _audit(text.replace("{}", "-0.0144")).errata
    assert bad.line == 1 and bad.wrong[-1].printed == ["-0.0144"] and bad.wrong[-1].correct == ["-0.0141"]


def test_a_computation_printed_again_with_another_result_is_an_erratum_at_the_copy():
    """A line printed again below itself with one number changed, its own arithmetic left within rounding, is a
    second, false value of the same computation: an erratum at the copy (the audit of a page with no derivation)."""
    from symseq.audit.arithmetic import audit_page

    line = "The tripled state is $3h = 3 \\cdot 0.2913 = {}$ as the table prints it.\n"
    page = "# Step\n\nThe state is $h = \\tanh(0.3) = 0.2913$.\n" + line.replace("{}", "0.8739")
    with mpmath.workdps(30):  # 3 tanh(0.3) = 0.87394…; 3 × (0.2913 ± 0.00005) spans 0.87375 … 0.87405
        assert mpmath.nstr(3 * mpmath.tanh(mpmath.mpf("0.3")), 4) == "0.8739"
    assert not audit_page(parse(page, path="page.md")).failed
    copy = audit_arithmetic(parse(page + line.replace("{}", "0.8740"), path="page.md"))
    assert not copy.errata  # alone, the copy's 0.8740 is within the rounding of 0.2913
    rep = audit_page(parse(page + line.replace("{}", "0.8740"), path="page.md"))
    assert rep.failed and [(e.line, e.printed, e.correct) for e in rep.errata] == [(5, "0.8740", "0.8739")]


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


@pytest.mark.parametrize("name", [pytest.param("layernorm-hello-prompt.md", marks=pytest.mark.slow),
                                  "attn-course-cat-sat.md", "positional-encoding-d4.md",
                                  pytest.param("gru-cell-click4ai.md", marks=pytest.mark.slow)])
def test_an_edited_result_digit_never_passes(name):
    """Each result the audit finds right, with its last digit moved by one, is wrong (or left for a derivation
    when within its operands' rounding), never right. (The two pages with the most results to edit are in the slow
    run.)"""
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


def test_names_bound_to_printed_values_are_read_in_order_and_a_later_binding_shadows():
    page = ("W = [[0.3, 0.2], [0.1, 0.5]]\n\nx = [1.0, 0.5]\n\ny = W @ x = [0.40, 0.35]\n\n"
            "W = [[1, 0], [0, 1]]\n\nz = W @ x = [1.0, 0.5]\n\nu = V @ x = [0.4, 0.35]\n")
    rep = _audit(page)
    assert [(s.line, s.status) for s in rep.statements] == [(5, "ok"), (9, "ok")]  # V is bound nowhere
    with mpmath.workdps(30):  # independently: [[0.3, 0.2], [0.1, 0.5]] @ [1.0, 0.5] = [0.4, 0.35]
        W, x = mpmath.matrix([["0.3", "0.2"], ["0.1", "0.5"]]), mpmath.matrix(["1.0", "0.5"])
        assert [mpmath.nstr(v, 2) for v in W * x] == ["0.4", "0.35"]
    # an edited digit of the printed matrix makes the step that uses it wrong, and so does an edited result
    assert [s.status for s in _audit(page.replace("0.1, 0.5]]", "0.9, 0.5]]", 1)).statements] == ["wrong", "ok"]
    assert [s.status for s in _audit(page.replace("[0.40, 0.35]", "[0.40, 0.55]")).statements] == ["wrong", "ok"]


def test_a_name_bound_by_a_rounded_result_carries_its_printed_precision():
    page = "a = tanh(0.98) ≈ 0.753\n\nb = 2 · a ≈ {}\n"
    with mpmath.workdps(30):  # 2·0.753 = 1.506; a ∈ [0.7525, 0.7535] allows 2a up to 1.507, not 1.509
        assert mpmath.nstr(2 * mpmath.tanh(mpmath.mpf("0.98")), 4) == "1.506"
    assert [s.status for s in _audit(page.format("1.506")).statements] == ["ok", "ok"]
    assert [s.status for s in _audit(page.format("1.507")).statements] == ["ok", "drift"]
    assert [s.status for s in _audit(page.format("1.509")).statements] == ["ok", "wrong"]


def test_a_bound_name_is_a_factor_only_when_written_against_it():
    rep = _audit("At D=8, H=2 the projections hold 3D^2=192 parameters.\n\nj = 0 j = 1 j = 2\n")
    assert [(s.text, s.status) for s in rep.statements] == [("3D^2 = 192", "ok")]


def test_the_last_factor_of_a_product_is_not_the_name_a_chain_binds():
    """``y_2 = W_y h_2 = 2.0 · 0.7790 = 1.558`` binds y_2, not h_2 (bptt-two-step-walkthrough, line 39): read as h_2 =
    1.558, the h_2 of 1 − h_2² on a later line made (0.7790)² a false erratum. A word before a name ("the state h
    = 0.5") is prose, and the name is bound."""
    page = ("h_2 = tanh(1.04621) ≈ 0.7803\n\ny_2 = W_y h_2 = 2.0 · 0.7803 = 1.5606\n\n"
            "t = 1 - h_2^2 = 1 - (0.7803)^2 = 0.3911\n")
    with mpmath.workdps(30):
        assert mpmath.nstr(1 - mpmath.mpf("0.7803") ** 2, 4) == "0.3911"
    rep = _audit(page)
    assert [s.status for s in rep.statements] == ["ok", "ok", "ok"] and not rep.errata
    assert [s.status for s in _audit(page.replace("0.3911", "0.3921")).statements][-1] == "wrong"  # still read
    rep = _audit("the state h = 0.5\n\nz = 2 · h = 1.0\n")
    assert [(s.text, s.status) for s in rep.statements] == [("2 · h = 1.0", "ok")]


def test_a_greek_letter_in_latex_is_a_name_a_chain_binds():
    """``\\alpha_{dog} = … ≈ 0.42``, then ``\\alpha_{dog} \\cdot V_{dog} = 0.42 \\cdot [0.12, 0.84]``: the copy of
    α_dog is checked against the 0.42 bound to it (attention-dog-ran-quickly-notebook, line 101). ``\\sigma`` stays
    the sigmoid."""
    page = ("$\\alpha_{dog} = 0.42$\n\n$V_{dog} = [0.12, 0.84]$\n\n"
            "$o = \\alpha_{dog} \\cdot V_{dog} = A \\cdot [0.12, 0.84] = R$\n")
    with mpmath.workdps(30):  # 0.42 · [0.12, 0.84] = [0.0504, 0.3528]; 0.43 · [0.12, 0.84] = [0.0516, 0.3612]
        for a, out in (("0.42", ["0.05", "0.35"]), ("0.43", ["0.05", "0.36"])):
            assert all(abs(mpmath.mpf(a) * mpmath.mpf(x) - mpmath.mpf(o)) <= mpmath.mpf("0.005")
                       for x, o in zip(("0.12", "0.84"), out))
    assert [s.status for s in _audit(page.replace("A", "0.42").replace("R", "[0.05, 0.35]")).statements] == ["ok"]
    # 0.43 · [0.12, 0.84] = [0.05, 0.36] holds from its printed operands, but 0.43 is not the 0.42 of α_dog
    assert [s.status for s in _audit(page.replace("A", "0.43").replace("R", "[0.05, 0.36]")).statements] == ["wrong"]
    assert [s.status for s in _audit("$\\sigma(0) = 0.5$\n").statements] == ["ok"]


def test_inner_results_of_a_rewrite_are_steps_of_their_own():
    rep = _audit("h1 = tanh((0.9 * 0.7) + (0.5 * 0.1) + 0.3) = tanh(0.98) ≈ 0.753\n")
    assert sorted((s.text, s.status) for s in rep.statements) == [
        ("0.9 * 0.7 + 0.5 * 0.1 + 0.3 = 0.98", "ok"),
        ("tanh((0.9 * 0.7) + (0.5 * 0.1) + 0.3) = tanh(0.98) ≈ 0.753", "ok")]
    with mpmath.workdps(30):
        assert mpmath.mpf("0.9") * mpmath.mpf("0.7") + mpmath.mpf("0.5") * mpmath.mpf("0.1") + mpmath.mpf("0.3") \
            == mpmath.mpf("0.98")
    for printed, status in (("0.97", "wrong"), ("0.58", "wrong")):  # 0.9, 0.7, … are inputs, exact as printed
        edited = _audit(f"h1 = tanh((0.9 * 0.7) + (0.5 * 0.1) + 0.3) = tanh({printed}) ≈ 0.753\n")
        inner = next(s for s in edited.statements if s.text.endswith(f"= {printed}"))
        assert inner.status == status and inner.wrong[0].correct == ["0.98"]
        assert inner.spans[-1] == (1, 50, 54)  # the inner result itself


def test_statistics_of_a_labelled_row_or_of_the_list_just_above():
    page = ("```python\nrows = [\n    [0.1, 0.3, -0.2, 0.8],   # \"Hello\"\n    [0.0, 0.1, 0.4, -0.1],   # \",\"\n]\n"
            "\"Hello\": mean=0.25, std=0.364\n\",\"    : mean=0.10, std={}\n```\n\n"
            "features: [0.5, -0.3, 0.2, 0.6]\nMean: 0.25\nStandard deviation: 0.350\n")
    with mpmath.workdps(30):  # population std of [0, 0.1, 0.4, -0.1] is √0.035 = 0.187; the sample one √(0.14/3) = 0.216
        row = [mpmath.mpf(x) for x in ("0.0", "0.1", "0.4", "-0.1")]
        sq = sum((x - sum(row) / 4) ** 2 for x in row)
        assert (mpmath.nstr(mpmath.sqrt(sq / 4), 3), mpmath.nstr(mpmath.sqrt(sq / 3), 3)) == ("0.187", "0.216")
    got = [(s.line, s.status) for s in _audit(page.format("0.187")).statements]
    assert got == [(6, "ok"), (6, "ok"), (7, "ok"), (7, "ok"), (11, "ok"), (12, "ok")]
    assert [s.status for s in _audit(page.format("0.216")).statements][3] == "ok"  # the sample convention holds
    assert [s.status for s in _audit(page.format("0.208")).statements][3] == "wrong"  # neither convention holds
    assert _audit(page.format("0.187").replace("Mean: 0.25", "Mean: 0.35")).statements[4].status == "wrong"


def test_hostile_names_stay_bounded():
    from symseq.audit.arithmetic import MAX_NAMES

    lines = [", ".join(f"x{i} = {i}" for i in range(k, k + 50)) for k in range(0, MAX_NAMES + 50, 50)]
    many = "\n".join(lines) + "\ny = x2049 + x100 = 2149\nz = x0 + 1 = 1\n"
    rep = _audit(many, fmt="text")  # the oldest names leave the bounded table: x0 is no longer bound
    assert [(s.text, s.status) for s in rep.statements] == [("x2049 + x100 = 2149", "ok")]
    deep = "a_" + "_".join(["b"] * 2000) + " = [1, 2]\n\n" + "c = " + " + ".join(["a"] * 400) + " = 1\n"
    assert not _audit(deep, fmt="text").errata


def test_latex_names_layers_and_entries_of_bound_lists():
    page = ("\\[ \\mathbf h_6^{(0)}\\approx(-0.579,\\;1.06,\\;0.650). \\]\n\n"
            "\\[ \\mathbf b_{\\mathrm{att},6}\\approx(-1.38,\\;0.546,\\;0.102). \\]\n\n"
            "\\[ \\mathbf u_6=\\mathbf h_6^{(0)}+\\mathbf b_{\\mathrm{att},6} \\approx(-1.96,\\;1.61,\\;0.752). \\]\n\n"
            "\\[ \\mathbf r_6=\\operatorname{LN}_2(\\mathbf u_6) \\approx(-1.78,\\;0.998,\\;0.333). \\]\n\n"
            "The first preactivation is \\(r_{6,0}-0.5r_{6,2}+0.1\\approx-1.85\\).\n")
    rep = _audit(page, fmt="text")
    assert [(s.line, s.status) for s in rep.statements] == [(5, "ok"), (9, "ok")]
    with mpmath.workdps(30):  # h^{(0)} is a layer, not a power: -0.579 + (-1.38) = -1.959; -1.78 - 0.5·0.333 + 0.1
        assert mpmath.nstr(mpmath.mpf("-0.579") + mpmath.mpf("-1.38"), 3) == "-1.96"
        assert mpmath.nstr(mpmath.mpf("-1.78") - mpmath.mpf("0.5") * mpmath.mpf("0.333") + mpmath.mpf("0.1"), 3) \
            == "-1.85"
    assert [s.status for s in _audit(page.replace("-1.85", "-1.95"), fmt="text").statements] == ["ok", "wrong"]
    # a symbol bound far above is not read: pages reuse symbols for other quantities
    from symseq.audit.arithmetic import NAME_REACH

    far = page.replace("\n\nThe first", "\n\n" + "Prose.\n\n" * NAME_REACH + "The first")
    assert [s.line for s in _audit(far, fmt="text").statements] == [5]


def test_a_name_is_bound_from_the_end_of_its_chain_on():
    rep = _audit("q = 1\n\nq = q + 1 = 2, and then p = q + 1 = 3\n", fmt="text")
    assert [(s.text, s.status) for s in rep.statements] == [("q + 1 = 2", "ok"), ("q + 1 = 3", "ok")]


def test_the_causes_of_an_erratum_printed_by_a_statistic_of_a_labelled_row_are_classified():
    from types import SimpleNamespace

    from symseq.audit.causes import classify

    page = "```python\nrows = [\n    [0.0, 0.1, 0.4, -0.1],   # \",\"\n]\n\",\": mean=0.10, std=0.208\n```\n"
    erratum = SimpleNamespace(line=5, printed="0.208", source=None)  # as a derivation's claim reports it
    cause, = classify(parse(page, path="page.md", fmt="markdown"), [erratum])
    assert cause.kind == "root"  # (an IndexError before: the statistic had no span for its list)


def test_an_operand_is_rounded_only_where_the_page_printed_it_as_a_result():
    """A printed input is exact as printed: a dot product of one-decimal inputs that is off by 0.08 is wrong, not
    "within the rounding" of inputs read as ±0.05 (a public page passed that way). A number the page printed as a
    result before may be rounded, and a result within that rounding is left for a derivation."""
    page = ("Query = [0.3, 0.4, 0.1], Key = [0.1, 0.3, 0.6]\n\n"
            "Dot Product (sitting, The)=0.3×0.1+0.4×0.3+0.1×0.6=0.13\n")
    rep = _audit(page)
    (st,) = rep.statements
    assert st.status == "wrong" and _verdict(rep).failed
    mpmath.mp.dps = 30
    assert mpmath.mpf("0.3") * mpmath.mpf("0.1") + mpmath.mpf("0.4") * mpmath.mpf("0.3") + \
        mpmath.mpf("0.1") * mpmath.mpf("0.6") - mpmath.mpf("0.21") < mpmath.mpf("1e-25")
    # 3 × 0.4621 = 1.3863, printed 1.3864: wrong from an input 0.4621, within rounding from a result 0.4621
    assert _audit("Take 0.4621.\n\n3 · 0.4621 = 1.3864\n").statements[-1].status == "wrong"
    drift = _audit("h = tanh(0.5) = 0.4621\n\n3 · 0.4621 = 1.3864\n").statements
    assert [s.status for s in drift] == ["ok", "drift"]
    # a named value printed with three decimals or more is a result the page rounded (h = 0.4621 is tanh(0.5));
    # one printed with fewer is an input, exact as printed
    assert _audit("Take h = 0.4621.\n\n3 · 0.4621 = 1.3864\n").statements[-1].status == "drift"
    assert _audit("Take w = 0.46.\n\n3 · 0.46 = 1.39\n").statements[-1].status == "wrong"
    # a result printed after a computation the grammar cannot read is a rounded result too
    assert _audit("var = ((0.1474 - 0.035146)^2 + ... )/16 = 0.008837\n\n"
                  "√(0.008837 + 0.00001) = 0.094056\n").statements[-1].status == "drift"
    lo, hi = (mpmath.sqrt(mpmath.mpf(v) + mpmath.mpf("0.00001")) for v in ("0.0088365", "0.0088375"))
    assert lo < mpmath.mpf("0.094056") < hi and mpmath.sqrt(mpmath.mpf("0.008847")) > mpmath.mpf("0.0940565")
    # within one chain, a result the chain printed may be rounded: tanh(0.5) = 0.4621, then 3 · 0.4621
    assert [k.ok or k.within_rounding for k in _audit("3 tanh(0.5) = 3 · 0.4621 = 1.3864\n").statements[0].links] \
        == [True, True]


def test_a_chain_written_one_display_per_step_is_one_statement():
    page = ("The score:\n\n\\[\ns = q \\cdot k\n\\]\n\n\\[\n= (0.22)(0.54) + (0.64)(0.36)\n\\]\n\n"
            "\\[\n= 0.1188 + 0.2304\n\\]\n\n$$= 0.3492$$\n\nSome prose.\n\n$$= 0.5$$\n")
    rep = _audit(page)
    chain = [s for s in rep.statements if s.text.startswith("(0.22)")]
    assert len(chain) == 1 and chain[0].status == "ok" and chain[0].line == 15, [s.text for s in rep.statements]
    assert chain[0].text.endswith("= 0.3492")  # prose ends the chain: "= 0.5" is not read as its next link


def test_an_operand_copied_wrong_is_the_erratum_not_the_result():
    """After W_xh = 0.9, ``(0.0 · 0.7) + (0.5 · 0.1) + 0.3 = 0.98``: one digit of one operand makes it hold (0.9, which
    the page printed before), so that operand is wrong, not the result."""
    rep = _audit("Weights: W_xh = 0.9, W_hh = 0.5, b = 0.3.\n\n"
                 "h1 = tanh((0.0 * 0.7) + (0.5 * 0.1) + 0.3) = tanh(0.98) ≈ 0.753\n")
    assert mpmath.mpf("0.9") * mpmath.mpf("0.7") + mpmath.mpf("0.05") + mpmath.mpf("0.3") == mpmath.mpf("0.98")
    classes = {t.text: t.attribution.verdict for t in rep.tokens if t.line == 3}
    assert classes["0.0"] == "wrong" and classes["0.98"] == "covered" and classes["0.753"] == "covered"
    assert {s.repair[3:] for s in rep.errata} == {("0.0", "0.9")}


def test_a_result_printed_wrongly_keeps_the_blame_when_its_operand_is_the_chains_own():
    # tanh(1.1265) ≈ 0.809: 1.1255 would make it hold too (one digit), but 1.1265 is printed by the chain itself
    rep = _audit("x = 0.9 * 0.5 + 0.5 * 0.753 + 0.3 = 1.1265 and tanh(1.1265) ≈ 0.809\n")
    with mpmath.workdps(30):
        assert mpmath.nstr(mpmath.tanh(mpmath.mpf("1.1255")), 3) == "0.809"  # the repair that must not be taken
        assert abs(mpmath.tanh(mpmath.mpf("1.1265")) - mpmath.mpf("0.810")) < mpmath.mpf("0.0005")
    classes = {t.text: t.attribution.verdict for t in rep.tokens}
    assert classes["0.809"] == "wrong" and all(s.repair is None for s in rep.errata)


def test_a_rewrite_wrong_at_a_number_printed_inside_it_gives_that_numbers_correct_value(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("h1 = tanh((0.9 * 0.7) + (0.5 * 0.1) + 0.3) = tanh(0.99) ≈ 0.753\n", encoding="utf-8")
    assert main(["--no-color", "audit", str(page), "--no-local"]) == 1
    out = capsys.readouterr().out
    assert "0.99" in out and "0.98" in out and "—" not in out.split("errata")[1].split("\n")[3]
    rep = _audit(page.read_text(encoding="utf-8"))
    outer = next(s for s in rep.errata if s.text.startswith("tanh"))
    inner = next(link for link in outer.wrong if link.kind == "rewrite").inner
    assert (inner.printed, inner.correct) == (["0.99"], ["0.98"])


def test_a_named_vector_printed_again_wrongly_is_caught_even_when_the_dot_product_agrees():
    """``q1 = [1, 0, 0]``, then ``q1 . k1 = [1, 0, 1] . [1, 1, 0] = 1``: the printed dot product is still 1, but the
    vector printed for q1 is not q1. Only that vector is wrong, at its third entry."""
    text = ("- `q1 = [1, 0, 0]`\n- `k1 = [1, 1, 0]`\n\n"
            "Score: `q1 . k1 = [1, 0, 1] . [1, 1, 0] = 1*1 + 0*1 + 0*0 = 1`\n")
    assert 1 * 1 + 0 * 1 + 1 * 0 == 1 * 1 + 0 * 1 + 0 * 0 == 1  # the edit leaves every value as it was
    rep = _audit(text)
    classes = {t.text: t.attribution.verdict for t in rep.tokens if t.line == 4}
    assert classes["[1, 0, 1]"] == "wrong" and classes["[1, 1, 0]"] == "covered"
    (bad,) = rep.errata
    (copy,) = [link.inner for link in bad.wrong]
    assert copy.copy and (copy.left, copy.printed, copy.correct) == ("q1", ["[1, 0, 1]"], ["[1, 0, 0]"])
    assert _audit(text.replace("[1, 0, 1] .", "[1, 0, 0] .")).errata == []  # the true copy passes


def test_a_copy_with_a_sign_changed_is_caught_even_when_the_dot_product_agrees():
    """``q1 = [1, 0, 0]``, ``k3 = [0, 1, 1]``, then ``q1 . k3 = [-1, 0, 0] . [0, 1, 1] = 1*0 + 0*1 + 0*1 = 0``:
    every product is still 0, but −1 is not q1's first entry, and the term 1*0 is not (−1)·0 written out."""
    text = ("- `q1 = [1, 0, 0]`\n- `k3 = [0, 1, 1]`\n\n"
            "Score: `q1 . k3 = [-1, 0, 0] . [0, 1, 1] = 1*0 + 0*1 + 0*1 = 0`\n")
    assert -1 * 0 + 0 * 1 + 0 * 1 == 1 * 0 + 0 * 1 + 0 * 1 == 0
    rep = _audit(text)
    (bad,) = rep.errata
    (copy,) = [link.inner for link in bad.wrong]
    assert copy.copy and (copy.left, copy.printed, copy.correct) == ("q1", ["[-1, 0, 0]"], ["[1, 0, 0]"])
    assert _audit(text.replace("[-1, 0, 0] .", "[1, 0, 0] .")).errata == []
    assert len(_audit("Dot: `[1, 0, 0] . [0, 1, 1] = -1*0 + 0*1 + 0*1 = 0`\n").errata) == 1  # a term's sign


def test_a_copy_may_print_fewer_digits_of_the_named_value():
    rep = _audit("- `w = 0.5773`\n\nThen `2 * w = 2 * 0.577 = 1.154`\n")
    assert rep.errata == [] and {t.text: t.attribution.verdict for t in rep.tokens if t.line == 3}["0.577"] == "covered"


def test_a_dot_product_written_out_with_a_term_that_is_not_the_lists_entry_is_caught():
    """``[1, 0, 0] · [1, 1, 0] = 1*1 + 0*2 + 0*0 = 1``: the sum is still 1, but 0*2 is not the second entries'
    product; the 2 alone is wrong (correct 1). Written from a wrong copy of q1, the terms are not blamed."""
    rep = _audit("Dot: `[1, 0, 0] . [1, 1, 0] = 1*1 + 0*2 + 0*0 = 1`\n")
    assert 1 * 1 + 0 * 2 + 0 * 0 == 1
    (bad,) = rep.errata
    assert [t.text for t in rep.tokens if t.attribution.verdict == "wrong"] == ["2"]
    (term,) = [link.inner for link in bad.wrong]
    assert (term.printed, term.correct, term.at) == (["2"], ["1"], 3)
    assert _audit("Dot: `[1, 0, 0] . [1, 1, 0] = 1*1 + 0*1 + 0*0 = 1`\n").errata == []
    assert _audit("Dot: `[1, 0, 0] . [1, 1, 0] = 1*1 + 1*0 + 0*0 = 1`\n").errata == []  # factors in either order
    copied = _audit("- `q1 = [1, 0, 0]`\n- `k1 = [1, 1, 0]`\n\n"
                    "Score: `q1 . k1 = [1, 0, 1] . [1, 1, 0] = 1*1 + 0*1 + 0*0 = 1`\n")
    assert [t.text for t in copied.tokens if t.attribution.verdict == "wrong"] == ["[1, 0, 1]"]


def test_an_operand_that_breaks_the_copy_of_a_list_printed_before_is_the_erratum():
    """``[0.1, 0.3, -0.2, 0.8]``, then ``(0.2 + 0.3 + (-0.2) + 0.8) / 4 = 1.0 / 4``: 0.2 → 0.1, 0.3 → 0.2 and
    0.8 → 0.7 each make it hold; only the first mends the copy of the list, so 0.2 is the wrong number."""
    rep = _audit("features = [0.1, 0.3, -0.2, 0.8]\n\nmean = (0.2 + 0.3 + (-0.2) + 0.8) / 4 = 1.0 / 4 = 0.25\n")
    assert sum(map(mpmath.mpf, ("0.1", "0.3", "-0.2", "0.8"))) == mpmath.mpf("1.0")
    wrong = [(t.text, t.start) for t in rep.tokens if t.attribution.verdict == "wrong"]
    assert wrong == [("0.2", 8)]
    assert {s.repair[3:] for s in rep.errata} == {("0.2", "0.1")}


# -- a number lost from a statement: an operator with nothing on one side ------------------------------------------

LOST = [  # each a statement of the worked examples with one number deleted, as a slip or an edit leaves it
    ("`1 /  = 0.577`", "no number after it"), ("` / 1.732 = 0.577`", "no number before it"),
    ("`1 / 1.732 = `", "ends or begins"), ("`e^0.577 = `", "ends or begins"),
    ("`q1 . k1 =  . [1, 1, 0] = 1`", "a product with one factor"),
    ("`q1 . k1 = [1, 0, 0] .  = 1*1 + 0*1 + 0*0 = 1`", "a product with one factor"),
    ("`q1 . k1 = [1, , 0] . [1, 1, 0] = 1`", "an empty entry"), ("`[, 0, 0] . [1, 1, 0] = 0`", "an empty entry"),
    ("`s = 1* + 0*1 + 0*0 = 1`", "no number after it"), ("`sqrt() ≈ 1.732`", "a function of nothing"),
    ("$L = \\frac{1.3173 + 1.3531}{} = 1.4394$", "an empty argument"), ("$x = 1 + 2 = = 3$", "a relation"),
    # LaTeX's \cdot (bptt-two-step-walkthrough, lines 32 and 39): the rest of the chain still held, and passed
    ("$$= \\tanh( \\cdot 1 + 0.1 \\cdot 0) = \\tanh(0.5) \\approx 0.4621$$", "no number before it"),
    ("$$y_2 = W_y h_2 = 2.0 \\cdot  = 1.558$$", "no number after it"),
    ("$$= -0.3475 \\times  = -0.695$$", "no number after it"),
    # attention-dog-ran-quickly-notebook, lines 63 and 80
    ("$= (0.22)(0.54) + (0.64)(0.36) + (0.73)()$", "an empty factor"),
    ("$= (0.22)(0.54) + ()(0.36)$", "an empty factor"), ("(and taking the score to be ≈ ):", "nothing after it"),
]
WORDS = ["commas (,) and periods (.)", "| Large (e.g., 1024+) | GPU/TPU |", "speed (0.84×) and (1.2×)",
         "shape (2,) and (3, 4)", "==================", "see https://example.org/a/b/ and `src/`", "and/or 3 items",
         "x = 1 + 2 +", "`a += 1`", "12+ layers, 2× faster", "`tensor([0.1, 0.2])`", "{}^{14}C has 6 protons",
         "$a \\times b = 3$ for $a = 1$", "(*) a footnote, 3 of them", "as shown[^1] and [^2]",
         "[^1]: a note with 2 numbers, 3 = 3", "see https://example.org/plot?x=/2&y=*3 for 2 runs",
         "$f(\\cdot)$ and $g(\\cdot, 2)$ with $2 \\times 3 = 6$", "call f() or print() 2 times; the sign (=) and (≈)"]


@pytest.mark.parametrize("text,why", LOST)
def test_a_statement_that_lost_a_number_fails_at_its_line(text, why):
    rep = _audit(f"Some words.\n\n{text}\n")
    assert [(g.line, why in g.reason) for g in rep.cannot_hold] == [(3, True)], rep.cannot_hold
    assert _verdict(rep).failed and rep.cannot_hold


@pytest.mark.parametrize("text", WORDS)
def test_words_and_code_around_numbers_are_not_a_lost_number(text):
    assert _audit(f"{text}\n").cannot_hold == []


def test_the_worked_example_with_a_number_deleted_fails_the_derivation_audit_at_that_line():
    from example_helpers import EXAMPLES, example_derivation
    from symseq.audit import audit_document, read

    doc = read(EXAMPLES / "attn-course-cat-sat.md")
    d = [example_derivation("attn-course-cat-sat")]
    assert not audit_document(doc, d).failed
    k = next(i for i, ln in enumerate(doc.lines) if "`1 / 1.732 = 0.577`" in ln)
    lines = list(doc.lines)
    lines[k] = lines[k].replace("1 / 1.732 = 0.577", "1 /  = 0.577")
    rep = audit_document(parse("\n".join(lines), path="attn-course-cat-sat.md", fmt="markdown"), d)
    assert rep.failed and [(e.line, e.correct, e.kind) for e in rep.errata] == [(k + 1, "—", "statement")]
    assert rep.errata[0].fault == "an operator with no number after it"


@pytest.mark.parametrize("text,why", [("`sqrt(-3) ≈ 1.732`", "square root of -3"), ("`1 / 0 = 5`", "division by zero"),
                                      ("`log(-2) = 0.69`", "logarithm of -2")])
def test_a_number_printed_for_a_value_that_is_not_real_cannot_hold(text, why):
    rep = _audit(f"Here {text}.\n")
    assert [(g.line, why in g.reason) for g in rep.cannot_hold] == [(1, True)], rep.cannot_hold
    assert _verdict(rep).failed and not rep.unread


@pytest.mark.parametrize("text,printed,correct", [
    ("$\\sqrt{-64} = 8$", "-64", "64"),  # the sign edit of the seed 001 that had no correct number
    ("`sqrt(-3) ≈ 1.732`", "-3", "3"),
    ("`log(-2) = 0.6931`", "-2", "2"),
    ("`1 / 0 = 5`", "1 / 0 = 5", "—"),  # no sign to blame
    ("`sqrt(-3) + sqrt(-3) = 7`", "sqrt(-3) + sqrt(-3) = 7", "—"),  # no single sign makes it hold
])
def test_a_value_that_is_not_real_is_put_down_to_the_one_minus_sign_that_explains_it(text, printed, correct):
    """A statement with no real value whose one operand without its minus sign makes it hold names that operand,
    with the unsigned number as the correction (checked: √64 = 8, √3 = 1.732…, ln 2 = 0.69314…)."""
    import mpmath

    assert mpmath.sqrt(64) == 8 and abs(mpmath.sqrt(3) - mpmath.mpf("1.732")) < mpmath.mpf("0.0005")
    assert abs(mpmath.log(2) - mpmath.mpf("0.6931")) < mpmath.mpf("0.00005")
    rep = _audit(f"Here {text}.\n")
    assert [(g.line, g.text, g.correct) for g in rep.cannot_hold] == [(1, printed, correct)], rep.cannot_hold
    assert _verdict(rep).failed


@pytest.mark.parametrize("text,lost", [
    ("ADJ sits at index 4 rather than : index 3 belongs to ADV.", True),  # the 3 after "than" deleted
    ("It needs 12 than ; the rest is padding.", True),
    ("- `e^ = 1.78`", True),  # the exponent 0.577 deleted
    ("- `e^0.577 = 1.78` and a footnote[^1] = here", False),
    ("ADJ sits at index 4 rather than 3: index 3 belongs to ADV.", False),
    ("It is 4 times faster than the loop.", False),
    ("A value of 0.5 or more than that.", False),
    ("more than 3.", False),
    ("Head 2 puts a larger weight on position 0 than\nhead 1 does.", False),  # the paragraph goes on below
    ("Head 2 puts a larger weight on position 0 than\n\nHead 1 does.", True),  # … a new paragraph: lost
])
def test_a_comparison_or_power_that_lost_its_number_cannot_hold(text, lost):
    rep = _audit(f"{text}\n")
    assert len(rep.cannot_hold) == (1 if lost else 0), rep.cannot_hold


def test_zero_to_the_power_zero_is_a_convention_not_a_failure():
    rep = _audit("By convention `0^0 = 1`.\n")
    assert not rep.cannot_hold and not _verdict(rep).failed
