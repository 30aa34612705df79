"""The formats the audit reads: notebooks (nbformat), saved HTML pages, Markdown with math and LaTeX, by suffix or
``--format``; where a report says a number is (``cell 2 (In [36]), output line 1``); names with digits in them.

The fixtures are in ``tests/data/formats``: one small file per format; the hostile cases (a notebook with no cells,
a page with only scripts, a notebook that is not JSON or of an unknown version, an output of 10,000 numbers) are
built here.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import sympy as sp
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from symseq import Derivation, exact
from symseq.audit import AuditError, audit, audit_file, parse, read
from symseq.read.document import relayout
from symseq.read.formats import SUFFIXES, Place, format_of
from symseq.audit.mutate import Mutation, judge
from symseq.audit.structure import classify
from symseq.cli import main

DATA = Path(__file__).resolve().parent / "data" / "formats"
NOTEBOOK, PAGE, MARKDOWN, LATEX = (DATA / f"small.{x}" for x in ("ipynb", "html", "md", "tex"))


def _tokens(doc):
    """(line text of the token's place, token text, "q" for a quantity or the structural reason) of every token."""
    classify(doc)
    return [(doc.where(t.line), t.text, "q" if not t.tier else t.rule) for t in doc.tokens]


def _small_notebook_derivation():
    d = Derivation("small-notebook", title="two steps of a scalar RNN", source="small.ipynb")

    @d.section("Two steps of a scalar RNN")
    def first(s):
        s.given(exact("0.5"), what="w_x")
        s.given(exact(0), what="h_0")
        s.given(exact("0.5"), what="the argument of tanh")
        s.claim("1.0", exact("0.5") * 2, what="dh3dh2 = 2 W1")
        s.claim("0.4621", sp.tanh(sp.Rational(1, 2)), what="h_1")

    @d.section("The second step")
    def second(s):
        s.claim("0.8977", sp.tanh(exact("0.5") * 2 + exact("0.46")), what="h_2, from the printed h_1")

    return d


# --- notebooks -------------------------------------------------------------------------------------------------


def test_a_notebook_is_read_cell_by_cell_with_the_place_of_each_line():
    doc = read(NOTEBOOK)
    assert doc.format == "notebook"
    where = {doc.line(i): doc.where(i) for i in range(1, doc.n + 1) if doc.line(i)}
    assert where["# Two steps of a scalar RNN"] == "cell 1, line 1"
    assert where["W1 = 0.5"] == "cell 2 (In [36]), line 2"
    assert where["1.0"] == "cell 2 (In [36]), output line 1"  # stream text, its colour codes dropped
    assert where["0.4621"] == "cell 2 (In [36]), output line 2"  # the text/plain of an execute_result
    assert where["0.8977"] == "cell 4 (In [37]), output line 1"  # (the figure's <Figure size …> is not read)
    assert where["raw text: r = 3.5"] == "cell 5, line 1"
    assert not any("Traceback" in ln or "Figure" in ln for ln in doc.lines)  # an error's traceback is no result
    assert [(h.text, h.marked) for h in doc.headings] == [("Two steps of a scalar RNN", True),
                                                       ("The second step", True)]
    assert doc.places[doc.lines.index("0.4621")] == Place(2, 2, "output", 36)


def test_code_is_soft_structural_outputs_are_quantities_and_prompts_are_never_tokens():
    toks = _tokens(read(NOTEBOOK))
    code = [(w[len("cell 2 (In [36]), "):], t, why) for w, t, why in toks if w.startswith("cell 2 (In [36]), line")]
    assert code == [("line 2", "1", "part of a name"), ("line 2", "0.5", "code"), ("line 3", "3", "part of a name"),
                    ("line 3", "2", "part of a name"), ("line 3", "1", "part of a name"), ("line 3", "2", "code"),
                    ("line 4", "3", "part of a name"), ("line 4", "2", "part of a name"),
                    ("line 5", "1", "part of a name")]
    outputs = [(w, t, why) for w, t, why in toks if "output" in w]
    assert outputs == [("cell 2 (In [36]), output line 1", "1.0", "q"),
                       ("cell 2 (In [36]), output line 2", "0.4621", "q"),
                       ("cell 4 (In [37]), output line 1", "0.8977", "q")]
    assert not [t for _, t, _ in toks if t in ("36", "37")]  # execution counts are metadata, not text
    fenced = [why for w, t, why in toks if w == "cell 3, line 4"]  # a fence inside a markdown cell is code
    assert fenced == ["part of a name", "code", "code", "code"]


def test_a_notebook_audits_from_the_file_and_reports_places():
    d = _small_notebook_derivation()
    rep = audit_file(NOTEBOOK, [d])
    assert not rep.failed, rep.failures()
    assert [rep.where(t.line) for t in rep.uncovered()] == ["cell 5, line 1"]
    record = rep.as_json()
    assert {r["where"] for r in record["tokens"] if r["class"] == "covered"} >= {
        "cell 1, line 3", "cell 2 (In [36]), output line 2", "cell 4 (In [37]), output line 1"}
    text = NOTEBOOK.read_text(encoding="utf-8").replace('"0.8977"', '"0.8987"')
    rep = audit(parse(text, path=NOTEBOOK.name), [d])
    assert [(rep.where(e.line), e.printed, e.correct) for e in rep.errata] == [
        ("cell 4 (In [37]), output line 1", "0.8987", "0.8977")]
    assert rep.as_json()["errata"][0]["where"] == "cell 4 (In [37]), output line 1"


def test_an_edited_copy_of_a_notebook_keeps_its_cells():
    d = _small_notebook_derivation()
    doc = read(NOTEBOOK)
    k = doc.lines.index("0.8977") + 1
    edited = relayout(doc, Mutation("last", k, 0, 6, "0.8977", "0.8978").apply(doc.lines))
    assert edited.places == doc.places and edited.code == doc.code and edited.line(k) == "0.8978"
    verdict = judge(Mutation("last", k, 0, 6, "0.8977", "0.8978"), doc, [d])
    assert verdict.caught


@pytest.mark.parametrize("text, why", [
    ("{not json", "not JSON"),
    ('{"nbformat": 99, "nbformat_minor": 0, "cells": [], "metadata": {}}', "Unsupported nbformat version 99"),
    ("[1, 2]", "not a notebook"),
    ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code", "source": 5, '
     '"metadata": {}, "outputs": [], "execution_count": null}]}', "cell 1's source is a int, not text"),
    ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": ["# a heading"]}',
     "is not a notebook nbformat can read"),
])
def test_an_unreadable_notebook_is_an_audit_error_that_says_why(text, why):
    with pytest.raises(AuditError, match="nbformat|notebook|cell") as err:
        parse(text, path="broken.ipynb")
    assert why in str(err.value)


def test_an_unreadable_notebook_exits_2_with_one_line_and_no_traceback(tmp_path, capsys):
    bad = tmp_path / "small.ipynb"
    bad.write_text("{not json")
    assert main(["--no-color", "audit", str(bad), "-d", "week08-decoder"]) == 2
    err = capsys.readouterr().err
    assert "is not a notebook nbformat can read (not JSON)" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_notebook_with_no_cells_reads_as_an_empty_text_and_fails_the_audit_saying_why():
    empty = nbformat.writes(new_notebook())
    doc = parse(empty, path="empty.ipynb")
    assert doc.lines == [] and doc.tokens == []
    rep = audit(doc, [_small_notebook_derivation()])
    assert rep.failed and "no section of small-notebook found in the text" in rep.failures()[0]


def test_ten_thousand_printed_numbers_are_read_one_token_each():
    """The size of an output does not change how it is read (the time is measured in the report, not here)."""
    nb = new_notebook(cells=[new_markdown_cell("# Numbers"), new_code_cell(
        "print(x)", execution_count=1,
        outputs=[new_output("stream", name="stdout", text="\n".join(f"0.{k:04d}" for k in range(10_000)) + "\n")])])
    doc = parse(nbformat.writes(nb), path="many.ipynb")
    toks = _tokens(doc)
    assert len(toks) == 10_000 and {why for _, _, why in toks} == {"q"}
    assert toks[-1][:2] == ("cell 2 (In [1]), output line 10000", "0.9999")


# --- HTML pages ------------------------------------------------------------------------------------------------


def test_a_saved_page_keeps_headings_paragraphs_tables_code_and_math():
    doc = read(PAGE)
    assert doc.format == "html"
    assert [(h.text, h.marked) for h in doc.headings] == [("One head by hand", True), ("Step 2: the output", True)]
    assert doc.line(3) == (r"The scores are \(s = q \cdot k = 0.25\) and the weight of the 2nd key is "
                           r"\(w_{2} = 0.4378\).")  # MathJax's source once, KaTeX's annotation once
    assert [(t.label, [doc.line(r) for r in t.rows]) for t in doc.tables] == [
        ("Table 1", ["1\t0.5622", "2\t0.4378"])]
    code = [doc.line(i) for i in sorted(doc.code)]
    assert code == ["W1 = 0.5  # dh3dh2 is a name", "print(W1 * 2)"]
    assert [doc.line(i) for i in sorted(doc.output)] == ["1.0"]  # a pre block of printed output
    assert r"\[o = 0.5622 \cdot 1 + 0.4378 \cdot 3\]" in doc.lines  # MathJax's display math
    text = "\n".join(doc.lines)
    for dropped in ("Home", "Page 2", "answer", "42", "track", "margin", "Attention in 3 steps"):
        assert dropped not in text  # nav, script, style and title are dropped
    assert doc.where(3) == "HTML line 13" and doc.where(9) == "HTML line 22"


def test_the_numbers_of_a_page_are_classified_as_in_any_other_format():
    toks = [(t, why) for _, t, why in _tokens(read(PAGE))]
    assert [t for t, why in toks if why == "q"] == ["0.25", "0.4378", "0.5622", "0.4378", "1.0", "0.5622", "1",
                                                     "0.4378", "3", "1.8756"]
    assert ("2", "ordinal (2nd)") in toks and ("2", "subscript index") in toks and ("1", "table row label") in toks


def test_a_page_with_only_scripts_is_an_empty_text():
    page = "<html><head><script>var x = 0.5;</script><style>p {width: 3px}</style></head>" \
           "<body><script src='a.js'></script><noscript>Enable 2 scripts</noscript></body></html>"
    doc = parse(page, path="scripts.html")
    assert doc.lines == [] and doc.tokens == []
    rep = audit(doc, [_small_notebook_derivation()])
    assert rep.failed and "no section of small-notebook found" in rep.failures()[0]


def test_malformed_html_is_read_as_far_as_it_goes():
    doc = parse("<p>First 0.5<p>Second <b>0.25</i><table><tr><td>1<td>0.75", path="bad.html")
    assert doc.lines == ["First 0.5", "", "Second 0.25", "", "1\t0.75"]
    doc = parse("<table><tr><td>1<td>0.5<tr><td><p>2</p><td>0.25</table>", path="rows.html")  # rows left open
    assert doc.lines == ["1\t0.5", "2\t0.25"] and len(doc.tables) == 1


# --- Markdown and LaTeX ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [MARKDOWN, LATEX], ids=lambda p: p.suffix)
def test_numbers_inside_math_are_read_and_subscripts_are_not_quantities(path):
    toks = _tokens(read(path))
    quantities = [t for _, t, why in toks if why == "q"]
    assert "0.5" in quantities and r"\frac{1}{2}" in quantities and "10^{-3}" in quantities
    subscripts = [t for _, t, why in toks if why == "subscript index"]
    assert subscripts and set(subscripts) <= {"0", "1", "2"}
    assert not [t for _, t, why in toks if why == "q" and t in ("1", "3")], toks  # x_1, W1, dh3dh2, h_t2


# --- names with digits, in every format -------------------------------------------------------------------------


NAMES = "dh3dh2 = 0.5, W1 = 0.25, h_t2 = 0.125 and x_2 = 0.75; In [36]: and Out[36]: are prompts"


@pytest.mark.parametrize("fmt, text", [
    ("text", NAMES),
    ("markdown", NAMES),
    ("latex", NAMES.replace("_", r"\_")),
    ("html", f"<p>{NAMES}</p>"),
    ("notebook", nbformat.writes(new_notebook(cells=[new_markdown_cell(NAMES)]))),
])
def test_digits_inside_names_and_prompts_are_never_quantities(fmt, text):
    doc = parse(text, path=f"names.{'ipynb' if fmt == 'notebook' else 'txt'}", fmt=fmt)
    quantities = [t for _, t, why in _tokens(doc) if why == "q"]
    assert quantities == ["0.5", "0.25", "0.125", "0.75"]


# --- detection ------------------------------------------------------------------------------------------------


def test_the_format_follows_the_suffix_and_format_overrides_it(tmp_path):
    assert {s: format_of(f"x{s.upper()}") for s in SUFFIXES} == SUFFIXES
    assert format_of("notes.rst") == "text"
    copy = tmp_path / "notebook.txt"
    copy.write_text(NOTEBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    assert read(copy).format == "text"
    assert read(copy, fmt="notebook").lines == read(NOTEBOOK).lines
    with pytest.raises(AuditError, match="unknown format 'word'; use one of text, markdown, latex, notebook, html"):
        parse("x", fmt="word")


def test_the_cli_reads_a_notebook_by_its_suffix_and_by_format(tmp_path, capsys):
    module = tmp_path / "derivations" / "small_notebook.py"
    module.parent.mkdir()
    module.write_text(
        "import sympy as sp\nfrom symseq import Derivation, exact\n"
        "derivation = Derivation('small-notebook', title='t', source='small.ipynb')\n"
        "@derivation.section('The second step')\ndef second(s):\n"
        "    s.claim('0.8977', sp.tanh(exact('0.5') * 2 + exact('0.46')), what='h_2')\n")
    out = tmp_path / "report.json"
    assert main(["--no-color", "audit", str(NOTEBOOK), "--no-bundled", "--path", str(tmp_path),
                 "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    (h2,) = [r for r in record["tokens"] if r["text"] == "0.8977"]
    assert h2["class"] == "covered" and h2["where"] == "cell 4 (In [37]), output line 1"
    assert "cell 4 (In [37]), output line 1" not in capsys.readouterr().out  # nothing uncovered or wrong there
    renamed = tmp_path / "small.json"
    renamed.write_text(NOTEBOOK.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["--no-color", "audit", str(renamed), "-d", "small-notebook", "--no-bundled", "--path",
                 str(tmp_path), "--format", "notebook"]) == 0


@pytest.mark.parametrize("text, label", [
    (r"the scores $\omega_{22} = x^{(2)} q^{(2)\top}$ of the query", "superscript (exponent or depth/head label)"),
    (r"the output $h^{(1)'}$ of the first layer", "superscript (exponent or depth/head label)"),
    ("the 2nd input and the 3rd row", "ordinal (2nd)"),
])
def test_labels_written_around_a_number_are_not_quantities(text, label):
    toks = _tokens(parse(text, path="labels.md"))
    assert toks and all(why != "q" for _, _, why in toks), toks
    assert label in {why for _, _, why in toks}


# --- hostile input ----------------------------------------------------------------------------------------------

_PIECES = ["<p>", "</p>", "<table>", "<tr>", "<td>", "</td>", "</tr>", "</table>", "<pre>", "</pre>", "<h2>", "</h2>",
           "<script>", "</script>", '<script type="math/tex">', '<script type="math/tex; mode=display">', "<math>",
           '<annotation encoding="application/x-tex">', "</annotation>", "</math>", '<span class="katex-html">',
           "</span>", "<nav>", "</nav>", "<br>", "<br/>", "<code>", "</code>", "&amp;", "&#x31;", "0.5", "x_2", "\n",
           "<!--", "-->", "<![CDATA[", "]]>", "<", ">", "\\(", "\\)", "Table 1:"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_any_html_reads_into_a_document(pieces):
    doc = parse("".join(pieces), path="random.html")
    assert len(doc.places) == doc.n and all(isinstance(ln, str) and "\n" not in ln for ln in doc.lines)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["cells", "cell_type", "source", "outputs", "output_type", "text", "data",
                                         "text/plain", "nbformat", "nbformat_minor", "metadata", "execution_count"]),
                        inner, max_size=4), max_leaves=12))
def test_any_json_is_a_notebook_or_an_audit_error(value):
    try:
        doc = parse(json.dumps(value), path="random.ipynb")
    except AuditError:
        return
    assert len(doc.places) == doc.n


def test_a_byte_order_mark_before_a_notebook_or_page_is_not_text():
    assert parse("\ufeff" + NOTEBOOK.read_text(encoding="utf-8"), path="bom.ipynb").lines == read(NOTEBOOK).lines
    assert parse("\ufeff<h1>One</h1><p>0.5</p>", path="bom.html").lines == ["# One", "", "0.5"]


def test_a_claims_location_names_a_notebook_cell_by_its_execution_count_or_its_number():
    doc = read(NOTEBOOK)
    run_36 = doc.cell_range("In [36]")
    assert run_36 == doc.cell_range("Out[36]") == doc.cell_range("step one, cell 2")
    assert {doc.where(k) for k in range(*run_36)} >= {"cell 2 (In [36]), line 1", "cell 2 (In [36]), output line 1"}
    assert doc.where(run_36[1]) == "cell 2 (In [36]), output line 2"
    assert doc.cell_range("In [99]") is None and doc.cell_range("Table 2") is None
    assert read(MARKDOWN).cell_range("In [1]") is None  # only a notebook has cells


def test_two_equal_outputs_are_told_apart_by_the_cell_a_claim_names():
    nb = new_notebook(cells=[new_markdown_cell("# Sums"), *(new_code_cell(
        "print(w.sum())", execution_count=n, outputs=[new_output("stream", name="stdout", text="Sum: 1\n")])
        for n in (6, 7))])
    d = Derivation("sums", title="two sums", source="sums.ipynb")

    @d.section("Sums")
    def sums(s):
        for run in ("In [6]", "In [7]"):
            s.claim("1", exact("0.25") * 4, what="the sum", at=run)

    text = nbformat.writes(nb)
    assert not audit(parse(text, path="sums.ipynb"), [d]).failed
    nb.cells[1].outputs[0].text = "Sum: \n"  # the first one deleted: missing in its own cell
    rep = audit(parse(nbformat.writes(nb), path="sums.ipynb"), [d])
    (m,) = rep.missing
    assert m.location.at == "In [6]" and rep.where(m.lines[0]).startswith("cell 2 (In [6])")
