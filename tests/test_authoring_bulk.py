"""The authoring helpers that state a run of claims in one call: a default place (``with s.place(...)``), every value
of one printed line (``s.claim_line``), identities in bulk (``s.identities``), and sizes given as Python ints."""

import pytest
import sympy as sp

from symseq import Derivation
from symseq.errors import ClaimError

PAGE = r"""# Example

The begins row is \(\mathbf o_6\approx(0.196,\;1.06,\;0.0863)\) and its mean is \(0.447\), a size of 3.

Plain line: z = [0.40, 0.35] and 0.5
"""


@pytest.fixture
def page(tmp_path, monkeypatch):
    path = tmp_path / "page.md"
    path.write_text(PAGE, encoding="utf-8")
    monkeypatch.setenv("SYMSEQ_PAGES", str(tmp_path))
    return path


def _one_section(build, source="t.txt"):
    d = Derivation("t", title="t", source=source)
    d.section("Example")(build)
    (s,) = d.sections
    assert not s.error, s.error
    return s


def test_a_place_block_gives_every_claim_input_and_proof_its_at_and_an_explicit_at_wins():
    def build(s):
        L = s.ledger()
        x = L.input("x", sp.Rational(1, 2))
        with s.place("Table 3, backward column"):
            s.claim("0.5", x, what="x")
            s.given(x, what="x as printed")
            s.identity("x − x = 0", x - x)
            s.claim_shape("1×2", (1, 2), what="a row")
            s.claim("0.5", x, what="elsewhere", at="another place")
            with s.place("inner"):
                s.prove("true", lambda: True)
            s.claim_rows(["[0.5]"], sp.Matrix([[sp.Rational(1, 2)]]), what="row")
        s.claim("0.5", x, what="after the block")

    s = _one_section(build)
    assert [c.location.at for c in s.claims] == ["Table 3, backward column"] * 3 + [
        "another place", "inner", "Table 3, backward column, row 0", ""]
    assert s.claims[0].location.table == "Table 3"
    assert (s.inputs[0].at, s.inputs[0].location.at) == ("Table 3, backward column",) * 2
    assert all(c.check().ok for c in s.claims)


def test_a_place_block_restores_the_outer_place_when_it_raises_and_refuses_an_empty_place():
    def build(s):
        with pytest.raises(RuntimeError):
            with s.place("outer"):
                raise RuntimeError("inside")
        s.prove("after", lambda: True)
        with pytest.raises(ClaimError, match="non-empty string"):
            with s.place(""):
                pass

    s = _one_section(build)
    assert [c.location.at for c in s.claims] == [""]


def test_claim_line_claims_the_values_of_one_line_in_order_without_latex_spacing(page):
    def build(s):
        L = s.ledger()
        o = L.input("o", [["0.196", "1.06", "0.0863"]])
        m = L.input("m", sp.Rational(447, 1000))
        s.claim_line(r"\mathbf o_6\approx", (o, "o_6"), (m, "its mean"), (3, "a size"), at="begins")
        s.claim_line("Plain line", (m, "0.5 is not the mean"), first=1, digits=1)

    s = _one_section(build, source=page.name)
    assert [(c.printed, c.what, c.location.at) for c in s.claims] == [
        ("(0.196,1.06,0.0863)", "o_6", "begins"), ("0.447", "its mean", "begins"), ("3", "a size", "begins"),
        ("0.5", "0.5 is not the mean", "")]
    assert [c.check().status for c in s.claims] == ["ok", "ok", "ok", "mismatch"]


def test_claim_line_refuses_bad_items_and_a_line_with_too_few_values_and_claims_nothing(page):
    errors = []

    def build(s):
        x = s.ledger().input("x", 1)
        for items in ([(x,)], [(x, "x")] * 5):
            try:
                s.claim_line("Plain line", *items)
            except ClaimError as exc:
                errors.append(str(exc))

    s = _one_section(build, source=page.name)
    assert not s.claims and len(errors) == 2
    assert "takes (value, what) pairs" in errors[0]
    assert "the lines holding 'Plain line'" in errors[1]


def test_identities_states_each_item_at_one_place_and_a_false_one_fails():
    a, b = sp.symbols("a b", real=True)

    def build(s):
        s.identities(("(a+b)² = a² + 2ab + b²", (a + b) ** 2 - (a * a + 2 * a * b + b * b)),
                     ("two differences", a - a, b - b), ("false", a - b), at="expansions")

    s = _one_section(build)
    assert [(c.printed, c.location.at) for c in s.claims] == [
        ("(a+b)² = a² + 2ab + b²", "expansions"), ("two differences", "expansions"), ("false", "expansions")]
    assert [c.check().status for c in s.claims] == ["ok", "ok", "mismatch"]


def test_identities_refuses_an_item_without_a_difference():
    def build(s):
        with pytest.raises(ClaimError, match=r"\(statement, difference, \.\.\.\) tuples"):
            s.identities(("no difference",))

    assert not _one_section(build).claims


def test_a_python_int_is_an_integer_for_claims_and_inputs():
    def build(s):
        s.claim("7", 7, what="T")
        s.claim("7", 8, what="a wrong count")
        s.given(7, 5, what=("T", "D"))

    s = _one_section(build)
    assert [c.check().status for c in s.claims] == ["ok", "mismatch"]
    assert [(type(g.value), g.value) for g in s.inputs] == [(sp.Integer, 7), (sp.Integer, 5)]
