"""What the reader of printed mathematics (:mod:`symseq.read`) must read: one case per printed form, with its exact
value, through the reader's public names only.
"""

import csv
import inspect
from pathlib import Path

import pytest
import sympy as sp

from symseq.errors import ClaimError
from symseq.read import numbers, parse, parse_statement, read_number, read_printed, scan, value

R = sp.Rational
API = ("read_number", "PrintedNumber", "parse_statement", "parse", "value", "interval", "numbers", "read_printed",
       "Printed", "scan", "Token")


@pytest.mark.parametrize("name", API)
def test_name_imports_as_itself(name):
    obj = getattr(__import__("symseq.read", fromlist=[name]), name)  # as `from symseq.read import <name>`
    assert not inspect.ismodule(obj)


# printed text, exact value, half a unit of its last printed digit
NUMBERS = [
    ("−0.5", R(-1, 2), R(1, 20)), ("+3", 3, R(1, 2)), (".5", R(1, 2), R(1, 20)),
    ("1e-5", R(1, 100000), R(1, 200000)), ("2.5e−3", R(1, 400), R(1, 20000)), ("1E5", 100000, 50000),
    ("1.5×10^{-3}", R(3, 2000), R(1, 20000)),
    ("1.5 \\times 10^{-3}", R(3, 2000), R(1, 20000)),
    ("2·10^4", 20000, 5000),
    ("12,832", 12832, R(1, 2)),
    ("1\u202f000", 1000, R(1, 2)),
    ("1\u2009000", 1000, R(1, 2)),
    ("35%", R(7, 20), R(1, 200)),
    ("12.5%", R(1, 8), R(1, 2000)),
    ("12.5\\%", R(1, 8), R(1, 2000)),
]


@pytest.mark.parametrize("text, expected, half", NUMBERS)
def test_read_number(text, expected, half):
    """One text-to-value function: the exact value, the text as printed, half a unit of its last printed digit (a
    percentage's is the printed digit's over 100: 35% holds 0.35 ± 0.005)."""
    n = read_number(text)
    assert n is not None, f"{text!r} is not read as a number"
    assert (n.text, n.value, n.half_unit(None)) == (text, expected, half)


@pytest.mark.parametrize("text, expected", [
    (".5", R(1, 2)), ("−0.5", R(-1, 2)), ("2.5e−3", R(1, 400)), ("1E5", 100000),
    ("1.5×10^{-3}", R(3, 2000)), ("1.5 \\times 10^{-3}", R(3, 2000)), ("2·10^4", 20000),
    ("12,832", 12832),
    ("1\u202f000", 1000),
])
def test_parse_number(text, expected):
    assert value(parse(text)) == expected


@pytest.mark.parametrize("sentence, text, expected", [
    ("We use ε = 1e-5.", "1e-5", R(1, 100000)),
    ("The rate is 3e-4.", "3e-4", R(3, 10000)),
])
def test_scan_exponent_at_a_sentence_end(sentence, text, expected):
    tokens = [t for t in scan(sentence) if t.kind == "number"]
    assert [t.text for t in tokens] == [text]
    assert read_number(tokens[0].text).value == expected


def test_scientific_form_in_a_statement():
    assert value(parse_statement("0.003 / 2 = 1.5 \\times 10^{-3}").parts[-1]) == R(3, 2000)


def test_grouped_thousands_in_a_statement():
    st = parse_statement("(5*5*16+1)*32 = 12,832")
    assert value(st.parts[0]) == 12832 and value(st.parts[-1]) == 12832


@pytest.mark.parametrize("text, expected", [("[1,2]", (1, 2)), ("(3,4)", (3, 4)), ("[1,234]", (1, 234))])
def test_inside_brackets_a_comma_separates_entries(text, expected):
    """The one rule of thousands: a comma groups digits (12,832), except inside brackets, where it separates
    entries ([1,234] is two entries)."""
    assert value(parse(text)) == expected


def test_scan_grouped_thousands_and_lists():
    [t] = scan("We train 12,832 weights")
    assert (t.kind, t.text, t.script) == ("number", "12,832", "")
    assert sp.Rational(t.entries[0]) == 12832
    [v] = scan("[1,2]")
    assert v.kind == "vector" and len(v.entries) == 2


def test_percentage_in_a_statement():
    """The reader reads ``30%`` as the number 3/10 (marked as a percentage by its text) and evaluates ``0.3 × 100``
    to 30; it does not decide the statement. Whether ``0.3 × 100 = 30%`` holds (the page computes 30 and prints it
    with a % sign) is the audit's decision, made from this tree."""
    st = parse_statement("0.3 × 100 = 30%")
    assert value(st.parts[0]) == 30
    last = st.parts[-1]
    [n] = numbers(last)
    assert value(last) == R(3, 10) and n.value == R(3, 10) and n.text.endswith("%")


@pytest.mark.parametrize("text, expected", [
    ("\\frac{1}{4}", R(1, 4)), ("\\tfrac12", R(1, 2)), ("\\dfrac{3}{4}", R(3, 4)), ("\\sqrt{2}", sp.sqrt(2)),
    ("\\sqrt[3]{8}", 2),
    ("√0.25", R(1, 2)), ("1/\\sqrt{2}", 1 / sp.sqrt(2)),
    ("0.8 · [2, 0] + 0.2 · [0, 4]", (R(8, 5), R(4, 5))), ("0.5\\,(1, 3) + 0.5\\,(3, 1)", (2, 2)),
    pytest.param("\\begin{bmatrix}1 & 2\\\\ 3 & 4\\end{bmatrix}", ((1, 2), (3, 4))),
    pytest.param("\\begin{pmatrix}1 & 2\\\\ 3 & 4\\end{pmatrix}", ((1, 2), (3, 4))),
])
def test_parse_value(text, expected):
    assert value(parse(text)) == expected


@pytest.mark.parametrize("text, kind, shape, entries, half", [
    ("array([[0.1, 0.2], [0.3, 0.4]])", "matrix", (2, 2), [R(1, 10), R(1, 5), R(3, 10), R(2, 5)], R(1, 20)),
    ("tensor([0.2500, 1.0000], grad_fn=<AddBackward0>)", "vector", (1, 2), [R(1, 4), 1], R(1, 20000)),
    ("[[0.1 0.2]\n [0.3 0.4]]", "matrix", (2, 2), [R(1, 10), R(1, 5), R(3, 10), R(2, 5)], R(1, 20)),
])
def test_read_printed_arrays(text, kind, shape, entries, half):
    p = read_printed(text)
    assert (p.kind, p.shape) == (kind, shape)
    assert [e.value for e in p.entries] == entries and {e.half_unit(None) for e in p.entries} == {half}


@pytest.mark.parametrize("text, names", [
    ("4×3", None), ("4 x 3", None), ("T\\times d_k", {"T": sp.Integer(4), "d_k": sp.Integer(3)}),
    ("\\mathbb R^{T\\times D}", {"T": sp.Integer(4), "D": sp.Integer(3)}),
    ("\\mathbb{R}^{4\\times 3}", None),
    ("torch.Size([4, 3])", None),
])
def test_read_printed_shapes(text, names):
    p = read_printed(text, names, shape=True)
    assert p.kind == "shape" and p.entries == [4, 3] and all(isinstance(d, sp.Integer) for d in p.entries)


def _statement(text):
    return [value(part) for part in parse_statement(text).parts]


HOSTILE = {"√-exp1 = 2": "√-exp1 = 2", "10,000 characters of a sum": "1+" * 4999 + "1",
           "10,000 digits": "9" * 10000, "500 open parentheses": "(" * 500,
           "500 nested parentheses": "(" * 500 + "1" + ")" * 500}
ENTRIES = {"read_number": read_number, "read_printed": read_printed, "statement": _statement,
           "shape": lambda t: read_printed(t, shape=True)}
@pytest.mark.parametrize("what, entry", [
    (w, e) for w in HOSTILE for e in ENTRIES])
def test_hostile_text_raises_only_claim_error(what, entry):
    """Text that cannot be read or evaluated is a ClaimError (√ of a negative number a NotRealError, which is
    one); no other exception escapes, and the page scanner reads any line."""
    try:
        ENTRIES[entry](HOSTILE[what])
    except ClaimError:
        pass
    else:
        assert (what, entry) != ("√-exp1 = 2", "statement"), "√-exp1 is no real number"
    assert isinstance(scan(HOSTILE[what]), list)


# -- the page of these forms, audited with no derivation, against labels made by hand ----------------------------

FORMS = Path(__file__).parent / "data" / "forms"


def _labels():
    with open(FORMS / "number-forms.labels.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_the_forms_page_has_no_false_erratum_and_every_wrong_line_is_reported_whole():
    """``tests/data/forms/number-forms.md`` (grouped thousands, U+202F and U+2009 grouping, exponents at a
    sentence's end and with U+2212, ×10^{k}, percentages, roots, sums of scaled vectors), labelled by hand in
    ``number-forms.labels.tsv`` with true values from mpmath: no erratum on a line labelled right, and on each line
    labelled wrong an erratum whose printed number is the page's printed result read whole (or, for a list, one of
    its entries)."""
    from symseq.audit.arithmetic import audit_page
    from symseq.read.document import read

    rep = audit_page(read(FORMS / "number-forms.md"))
    errata: dict = {}
    for e in rep.errata:
        errata.setdefault(e.line, []).append(e.printed.replace("\u2212", "-"))
    labels = _labels()
    assert len(labels) >= 40 and sum(r["verdict"] == "wrong" for r in labels) >= 10
    for row in labels:
        line, printed = int(row["line"]), row["printed"].replace("\u2212", "-")
        if row["verdict"] == "ok":
            assert line not in errata, (line, printed, errata.get(line))
            continue
        entries = [x.strip() for x in printed.strip("[]()").split(",")] if printed[:1] in "[(" else [printed]
        assert any(p == printed or p in entries for p in errata.get(line, ())), (line, printed, errata.get(line))
    labelled = {int(r["line"]) for r in labels}
    assert not set(errata) - labelled, {k: v for k, v in errata.items() if k not in labelled}


def test_a_number_in_scientific_form_is_a_product_written_out_and_a_grouped_erratum_is_a_root():
    """``1\\,024 \\times 10^{-3} = 1.034`` computes 1.024 (a scientific factor is a product written out), and
    ``12 \\times 1,536 = 18,532`` is wrong from its own printed operands, a root cause, read whole."""
    from symseq.audit.arithmetic import audit_page
    from symseq.audit.causes import classify
    from symseq.read.document import parse as page

    doc = page("Scaling:\n$1\\,024 \\times 10^{-3} = 1.034$ and $2 \\times 10^{-3} = 0.002$\n"
               "$12 \\times 1,536 = 18,532$\n", fmt="markdown")
    rep = audit_page(doc)
    assert [(e.line, e.printed, e.correct) for e in rep.errata] == [(2, "1.034", "1.024"), (3, "18,532", "18,432")]
    causes = classify(doc, rep.errata)
    assert [c.kind for c in causes] == ["root", "root"] and all(c.traced for c in causes)
    assert all("gives" in c.reason for c in causes), [c.reason for c in causes]


def test_a_statements_parts_carry_their_spans_in_the_line():
    text = "e.g. (5*5*16+1)*32 = 12,832 \\approx 1.3e4"[5:]
    st = parse_statement(text)
    assert [text[a:b] for a, b in st.spans] == list(st.texts) == ["(5*5*16+1)*32", "12,832", "1.3e4"]


def test_an_error_in_a_formula_quotes_it_as_printed():
    """A declared name that is no plain name (``config.n_embd``) is read where it stands; an error quotes the
    formula as the claim prints it, never the reader's stand-in for that name."""
    from symseq.read import formula

    with pytest.raises(ClaimError) as err:
        formula("config.n_embd * q", {"config.n_embd": sp.Integer(4)})
    assert "'config.n_embd * q'" in str(err.value) and "'q'" in str(err.value)
    assert not any("\ue000" <= ch <= "\ue002" for ch in str(err.value))
