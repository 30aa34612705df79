"""The audit's tokenizer: every numeric form the handouts print, as one token with its canonical key."""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symseq.read import number_value, scan, scan_words


def keys(text):
    return [(t.key, t.kind) for t in scan(text) if not t.script]


@pytest.mark.parametrize("text, expected", [
    ("loss is about $0.232674$ nats", [("0.232674", "number")]),
    (r"$$w=\frac{1}{1+e^{1/\sqrt{2}}}\simeq \mathrm{0.330238.}$$",
     [("1", "number"), ("1", "number"), ("1/√2", "root"), ("0.330238", "number")]),
    ("gives −0.99 and -1.09", [("-0.99", "number"), ("-1.09", "number")]),
    ("6: begins\t-0.579\t1.06\t0.65", [("6", "number"), ("-0.579", "number"), ("1.06", "number"),
                                       ("0.65", "number")]),
    ("a uniform predictor has accuracy \\(1/4\\)", [("1/4", "fraction")]),
    ("weights [0.8,0.4] and (0.2,0.9,0.4,1,-0.2)", [("(0.8,0.4)", "vector"), ("(0.2,0.9,0.4,1,-0.2)", "vector")]),
    (r"\approx(0.789,\;0.204,\;0.240)", [("(0.789,0.204,0.240)", "vector")]),
    ("Concatenation gives $[2,0.6\\;|\\;0.6,2]$", [("(2,0.6,0.6,2)", "vector")]),
    (r"\mathbf W^\top= \begin{bmatrix} \tfrac12&0\\0&1 \end{bmatrix}", [("[1/2,0;0,1]", "matrix")]),
    (r"shape \((7\times5)(5\times3)=7\times3\) and $4\times 4$",
     [("7×5", "shape"), ("5×3", "shape"), ("7×3", "shape"), ("4×4", "shape")]),
    (r"\mathbb R^{1\times D}", [("1×D", "shape")]),
    (r"stabilizer \(10^{-5}\) and 1e-3", [("1e-5", "number"), ("1e-3", "number")]),
    ("uses 4,096 training and 1,024 test episodes", [("4096", "number"), ("1024", "number")]),
    (r"\(0.2+\sin 3\approx0.341\)", [("0.2", "number"), ("3", "number"), ("0.341", "number")]),
    (r"\(-0.1+\cos 3\approx-1.09\)", [("-0.1", "number"), ("3", "number"), ("-1.09", "number")]),
    ("0.9(0.5)+0.1(-0.4)=0.410.", [("0.9", "number"), ("0.5", "number"), ("0.1", "number"), ("-0.4", "number"),
                                   ("0.410", "number")]),
    (r"\(\log4\approx1.39\)", [("4", "number"), ("1.39", "number")]),
    (r"keys $k_0=[\sqrt2\log2,0]$ and scores $[\log 2,0,\log2]$",
     [("(√2\\log2,0)", "vector"), ("(\\log2,0,\\log2)", "vector")]),
    (r"scores \((0,\ln 3,-2\log(2))\)", [("(0,\\log3,-2\\log2)", "vector")]),
    ("the 2w-1 term", [("2", "number"), ("1", "number")]),
    ("std = √0.1325 = 0.364, keys 0–-1", [("√0.1325", "root"), ("0.364", "number"), ("0", "number"),
                                          ("-1", "number")]),
    ("approximately 1×1.131+1×0=1.131", [("1", "number"), ("1.131", "number"), ("1", "number"), ("0", "number"),
                                         ("1.131", "number")]),
    ("the sum 1×0+1×0.141", [("1", "number"), ("0", "number"), ("1", "number"), ("0.141", "number")]),
    ("§3.4.1", [("3.4.1", "number")]),
    ("a 5% rate", [("5%", "number")]),
])
def test_numeric_forms(text, expected):
    assert keys(text) == expected


def test_subscripts_exponents_names_and_urls_are_marked():
    toks = scan(r"h_{t-1}, W_{x,00}, \sum_{t=0}^{2}, T^2, H^{(0)}, W2, nn-llm-unit-2, https://arxiv.org/abs/2010.11929")
    marks = [(t.text, t.script) for t in toks]
    assert ("1", "sub") in marks and ("00", "sub") in marks and ("0", "sub") in marks
    assert ("2", "sup") in marks and ("0", "sup") in marks
    assert ("2", "ident") in marks
    assert ("2010", "url") in marks and ("11929", "url") in marks
    assert all(t.script for t in toks)  # nothing here is a quantity


def test_a_decimal_exponent_without_braces_is_one_quantity():
    """e^0.577 raises e to a computed score: 0.577 is one number, not a superscript 0 and a quantity .577."""
    assert [(t.text, t.script) for t in scan("`e^0.577 = 1.78` and x^2.5, but T^2 and v^1.")] == [
        ("0.577", ""), ("1.78", ""), ("2.5", ""), ("2", "sup"), ("1", "sup")]


def test_digits_leading_a_file_name_are_part_of_the_name():
    toks = scan("Download 11_attention.py and run python 11_attention.py; $x_2$ and 10_{ab} differ")
    assert [(t.text, t.script) for t in toks] == [("11", "ident"), ("11", "ident"), ("2", "sub"), ("10", "")]


def test_a_superscript_that_is_a_formula_is_scanned():
    # the exponent of e is part of a formula: its numbers are quantities; a power of 2 is not
    assert keys(r"e^{-2(1-w)}") == [("-2", "number"), ("1", "number")]
    assert keys(r"W_O\in\mathbb R^{5\times6}") == [("5×6", "shape")]


def test_a_called_code_name_ending_in_an_underscore_is_not_a_subscript():
    # Python's clip_grad_norm_(…) in prose: its arguments are code, not a LaTeX subscript group
    line = "insert torch.nn.utils.clip_grad_norm_(list(rnn.parameters()), max_norm=1.0) after backward"
    assert keys(line) == [("1.0", "number")]
    # LaTeX subscripts in parentheses keep their mark: a one-letter base and a command such as \sum
    assert keys(r"x_(1) and \sum_(2) and h_{(0)}") == []


def test_a_sign_after_a_name_is_a_subtraction_and_after_a_command_a_sign():
    assert keys("T-1 and x - 2") == [("1", "number"), ("2", "number")]
    assert keys(r"\approx-1.09 and \simeq -0.5") == [("-1.09", "number"), ("-0.5", "number")]


def test_counts_with_thousands_separators_are_not_a_vector():
    assert keys("close (1,943/2,023/1,915)") == [("1943", "number"), ("2023", "number"), ("1915", "number")]
    assert keys("gives $(0,4)$") == [("(0,4)", "vector")]


def test_token_columns_locate_the_printed_text():
    line = "hence $\\mathrm{LN}(h)=(-1,1)$."
    (t,) = scan(line, 7)
    assert (t.line, line[t.start:t.end]) == (7, "(-1,1)")


def test_values_are_exact():
    assert number_value("0.2") == sp.Rational(1, 5)
    assert number_value("1e-5") == sp.Rational(1, 100000)
    assert number_value("1/√2") == 1 / sp.sqrt(2)
    assert number_value("√0.1325") == sp.sqrt(sp.Rational(53, 400))
    assert number_value("5%") == sp.Rational(1, 20)
    assert number_value("3.4.1") is None
    assert number_value("√2\\log2") == sp.sqrt(2) * sp.log(2)
    assert number_value("-0.5\\log3") == -sp.log(3) / 2


def test_number_words():
    assert [(w.text, w.value) for w in scan_words("seven positions and one head")] == [("seven", 7), ("one", 1)]


def test_a_number_with_a_huge_exponent_is_decided_by_its_exponent_never_built():
    # 1e99999999 would be a 41 MB integer (the audit of a 30-byte handout hung building it): beyond 10^±1000 a
    # number has no value for the audit, decided from its printed exponent
    assert number_value("1e1000") == sp.Integer(10) ** 1000
    assert number_value("-2.5e-1000") == -sp.Rational(5, 2) / sp.Integer(10) ** 1000
    assert number_value("1e1001") is None and number_value("1e-1001") is None
    assert number_value("1e99999999") is None and number_value("-1e-00099999999%") is None
    assert number_value("1" * 1001) is None and number_value("√" + "2" * 1001) is None
    (t,) = scan(r"so $x = 10^{99999999}$ here")
    assert t.key == "1e99999999" and number_value(t.key) is None


def test_a_huge_exponent_in_the_text_is_an_uncovered_number(tmp_path):
    from symseq import Derivation
    from symseq.audit import audit, parse

    d = Derivation("one-half", title="a half", source="half.txt")

    @d.section("A half")
    def half(s):
        s.claim("0.5", sp.Rational(1, 2), what="a half")

    rep = audit(parse("A half\n\nThe value is 0.5, not 1e99999999 or 0.6e99999999 here.\n", path="half.txt"), [d])
    assert [(t.text, t.attribution.verdict) for t in rep.tokens] == [("0.5", "covered"), ("1e99999999", "uncovered"),
                                                     ("0.6e99999999", "uncovered")]
    assert rep.ok


def _matching_by_scan(s, i):
    """The bracket closing s[i], counted one character at a time (the definition the table must agree with)."""
    depth = 0
    for j in range(i, len(s)):
        c = s[j]
        if c in "([" and (j == i or s[j - 1] != "\\"):
            depth += 1
        elif c in ")]" and not (j > 0 and s[j - 1] == "\\"):
            depth -= 1
            if depth == 0:
                return j if c == {"(": ")", "[": "]"}[s[i]] else -1
    return -1


def _group_by_scan(s, i):
    depth, j = 0, i
    while j < len(s):
        if s[j] == "{" and (j == 0 or s[j - 1] != "\\"):
            depth += 1
        elif s[j] == "}" and (j == 0 or s[j - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return s[i + 1:j], j + 1
        j += 1
    return s[i + 1:], len(s)


@given(st.text(alphabet="()[]{}\\a ", max_size=40))
@settings(max_examples=300, deadline=None)
def test_brackets_are_matched_as_a_scan_from_each_bracket_would(s):
    # the scanner reads bracket and brace depth from a table built once per line (a line of many brackets was
    # quadratic); it must agree with the count from each opening bracket
    from symseq.read.page import _group, _matching

    for i, c in enumerate(s):
        if c in "([":
            assert _matching(s, i, c) == _matching_by_scan(s, i)
        if c == "{":
            assert _group(s, i) == _group_by_scan(s, i)


def test_long_lines_are_scanned_like_short_ones():
    # the same tokens whatever precedes them on the line (the tests of the text before a position read at most
    # a few hundred characters back, the rest of the line is never copied)
    pad = "word " * 2000
    for text in (r"nn-llm-unit-2 and \approx-1.09 and 3\times D and 2\times 3 = 6 and (0.5,\;0.25)",
                 r"\frac{1}{2} and \sqrt{3} and x^{(0)} and \begin{bmatrix}1&0\\0&1\end{bmatrix} and [1, 2]"):
        assert keys(pad + text) == keys(text)
