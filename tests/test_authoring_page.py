"""A derivation reads its page: inputs by the page's names, printed values by name, line or table
(:mod:`symseq.authoring.page`)."""

import pytest
import sympy as sp

from symseq import Derivation
from symseq.authoring.page import PageView, exact_value, find_page, printed_parts, read_page, search_path
from symseq.errors import ClaimError

PAGE = """\
# Example

input x = [1.0, 0.5], prev_hidden h = [0.0, 0.0]

W = [[0.3, 0.2], [0.1, 0.5]] (the weights)

Update: z = sigmoid(W @ x) = sigmoid([0.40, 0.35]) = [0.599, 0.587]

y = 2 · 0.25 = 0.5, so the result is small.

Table 1: two rows.

| row | a | b |
|---|---|---|
| 0: first | 0.25 | 1.5 |
| 1: second | 0.125 | 3 |

# Other

z = 7
"""


@pytest.fixture
def page(tmp_path):
    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    return path


def view(path, first=1, last=None):
    doc = read_page(path)
    return PageView(doc, first, last or doc.n, "test page")


def test_a_name_reads_the_value_printed_after_it(page):
    v = view(page)
    assert v.printed("x") == "[1.0, 0.5]"  # the chain ends at the words that start another statement
    assert v.printed("h") == "[0.0, 0.0]"
    assert v.printed("W") == "[[0.3, 0.2], [0.1, 0.5]]"
    assert v.printed("z") == "[0.599, 0.587]"  # the final result; sigmoid([0.40, 0.35]) computes
    assert v.printed("y") == "0.5"  # 2 · 0.25 computes: not a value
    assert v.printed("z", occurrence=1) == "7"
    assert v.value("W") == sp.ImmutableMatrix([[sp.Rational(3, 10), sp.Rational(1, 5)], [sp.Rational(1, 10), sp.Rational(1, 2)]])
    assert v.value("x") == sp.ImmutableMatrix([[1, sp.Rational(1, 2)]])


def test_a_name_in_a_formula_reads_only_that_formula(tmp_path):
    """A statement written in ``\\( … \\)`` ends with it (the next formula's numbers are another name's), a
    factor after a fraction is no remark (``\\tfrac12(\\hat y-y)^2`` prints no value), and the ``=`` of a sum's
    bound is no link of the chain."""
    path = tmp_path / "page.md"
    path.write_text("# Forward\n\n"
                    "Then \\(\\mathbf z_0 = (0.5, 0.2)\\), so \\(\\mathbf h_0 = (0.4621,\\ 0.1974)\\).\n\n"
                    "\\(\\mathcal L = \\tfrac12(\\hat y - y)^2\\) and \\(\\mathcal L = 0.0871\\).\n\n"
                    "\\[ g = \\sum_{t=0}^{2} x_t = 1.5 \\]\n", encoding="utf-8")
    v = view(path)
    assert v.printed("\\mathbf z_0") == "(0.5, 0.2)"
    assert v.printed("\\mathbf h_0") == "(0.4621,\\ 0.1974)"  # LaTeX's spacing between entries is no entry
    assert v.value("\\mathbf h_0") == sp.ImmutableMatrix([[sp.Rational(4621, 10000), sp.Rational(1974, 10000)]])
    assert v.printed("\\mathcal L") == "0.0871"
    assert v.printed("g") == "1.5" and v.printed("g", index=0) == "1.5"


def test_near_reads_any_printed_value_of_its_line(page):
    v = view(page)
    assert v.printed(near="Update:", index=0) == "[0.40, 0.35]"  # an argument counts here
    assert v.printed(near="Update:") == "[0.599, 0.587]"
    assert v.numbers("Update:", 3) == ["0.40", "0.35", "0.599"]  # the bare numbers, across a list's brackets


def test_a_table_is_read_cell_by_cell(page):
    assert view(page).table("Table 1") == [["0: first", "0.25", "1.5"], ["1: second", "0.125", "3"]]


def test_what_the_page_does_not_print_is_a_clear_error(page):
    v = view(page)
    with pytest.raises(ClaimError, match=r"prints 0 value\(s\) for 'q'.*No line of the section holds it"):
        v.printed("q")
    with pytest.raises(ClaimError, match="no table 'Table 9'; its labelled tables are Table 1"):
        v.table("Table 9")
    with pytest.raises(ClaimError, match="a name .* or words of its line"):
        v.printed()
    with pytest.raises(ClaimError, match="not a printed number or list"):
        exact_value("sigmoid(2)")


def test_a_section_reads_its_own_lines(page):
    doc = read_page(page)
    other = PageView(doc, doc.n - 1, doc.n, "Other")
    assert other.printed("z") == "7"


def test_a_nested_list_is_one_input_per_row_as_the_audit_reads_it():
    assert printed_parts("[[0.3, 0.2], [0.1, 0.5]]") == [sp.ImmutableMatrix([[sp.Rational(3, 10), sp.Rational(1, 5)]]),
                                                       sp.ImmutableMatrix([[sp.Rational(1, 10), sp.Rational(1, 2)]])]


def test_a_derivation_reads_inputs_and_claims_from_its_page(page, monkeypatch):
    monkeypatch.setenv("SYMSEQ_PAGES", str(page.parent))
    d = Derivation("page-test", title="t", source=page.name)

    @d.section("Example")
    def example(s):
        L = s.ledger()
        W = L.parameter("W", s.given("W"))
        x = L.input("x", s.given("x"))
        L.define("Wx", x @ W.T)
        s.claim(L.handle("Wx"), near="Update:", index=0)  # 0.3 + 0.1 = 0.4, 0.1 + 0.25 = 0.35
        s.table("Table 1", None, sp.ImmutableMatrix([[sp.Rational(1, 4), sp.Rational(3, 2)],
                                                     [sp.Rational(1, 8), 3]]))

    s = d.sections[0]
    assert not s.error, s.error
    assert [c.printed for c in s.claims] == ["[0.40, 0.35]", "0.25", "1.5", "0.125", "3"]
    assert all(c.check().status == "ok" for c in s.claims)
    assert [c.location.at for c in s.claims[1:3]] == ["Table 1, row 0: first, 0", "Table 1, row 0: first, 1"]
    assert len(s.inputs) == 3  # W's two printed rows and x
    assert s.inputs[0].value == sp.ImmutableMatrix([[sp.Rational(3, 10), sp.Rational(1, 5)]])


def test_a_wrong_number_on_the_page_fails_the_claim_that_reads_it(page, monkeypatch):
    page.write_text(PAGE.replace("[0.40, 0.35]", "[0.40, 0.36]"), encoding="utf-8")
    monkeypatch.setenv("SYMSEQ_PAGES", str(page.parent))
    d = Derivation("page-test", title="t", source=page.name)

    @d.section("Example")
    def example(s):
        L = s.ledger()
        W, x = L.parameter("W", s.given("W")), L.input("x", s.given("x"))
        s.claim(L.define("Wx", x @ W.T), near="Update:", index=0)

    (c,) = d.sections[0].claims
    assert c.printed == "[0.40, 0.36]" and c.check().status == "mismatch"


def test_a_page_not_found_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMSEQ_PAGES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ClaimError, match=f"'absent.md' that this derivation reads was not found; looked in {tmp_path}"):
        find_page("absent.md")
    d = Derivation("page-test", title="t", source="absent.md")

    @d.section("Example")
    def example(s):
        s.given("W")

    assert "was not found" in d.sections[0].error and "SYMSEQ_PAGES" in d.sections[0].error
    assert tmp_path in search_path()


def test_claim_without_a_place_is_refused(page, monkeypatch):
    monkeypatch.setenv("SYMSEQ_PAGES", str(page.parent))
    d = Derivation("page-test", title="t", source=page.name)

    @d.section("Example")
    def example(s):
        s.claim(sp.Integer(2))  # a number has no name on the page, and no near= says where

    assert "give the page's name of the value" in d.sections[0].error


def test_per_page_builds_once_for_each_page_the_derivation_reads(tmp_path):
    """@derivation.per_page: what sections share is built once per page, again after use_page names another."""
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text("# A\n\nw = 0.5\n", encoding="utf-8")
    second.write_text("# A\n\nw = 0.25\n", encoding="utf-8")
    d = Derivation("t-per-page", title="t", source="first.md")
    d.use_page(first)
    built = []

    @d.per_page
    def weight():
        """The page's w."""
        built.append(d.page_path.name)
        return d.whole_page.value("w")

    assert weight() == sp.Rational(1, 2) and weight() is weight() and built == ["first.md"]
    assert weight.__name__ == "weight" and weight.__doc__ == "The page's w."
    d.use_page(second)
    assert weight() == sp.Rational(1, 4) and built == ["first.md", "second.md"]
    d.use_page(first)
    assert weight() == sp.Rational(1, 2) and built == ["first.md", "second.md"]  # the first page's result is kept
