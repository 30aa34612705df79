"""The authoring API (symseq.authoring.derivation): properties stated with agree, differ and identity."""

import sympy as sp

from symseq import Derivation, ops
from symseq.verify.report import verify


def _derive(build):
    d = Derivation("t", title="t", source="t.txt")
    d.section("one section")(build)
    verify([d])
    return {c.printed: c.check() for c in d.sections[0].claims}


def test_agree_decides_two_ways_of_computing_one_quantity():
    def build(s):
        L = s.ledger("scores")
        Q = L.input("Q", [[1, 2], [3, 4]])
        K = L.input("K", [["0.5", 0], [0, 2]])
        S = L.define("S", Q @ K.T / sp.sqrt(2))
        A = L.define("A", ops.SoftmaxRows(S))
        s.agree("S √2 = Q Kᵀ", S * sp.sqrt(2), Q @ K.T)
        s.agree("rows of A sum to one", ops.Sum(A, axis=1), sp.ones(2, 1))
        s.agree("pairwise lists", [S[0, 0], S[1, 1]], [sp.sqrt(2) / 4, 4 * sp.sqrt(2)])
        s.agree("a wrong closed form", S[0, 0], sp.Rational(1, 3))
        s.agree("shapes differ", S, S[0, :])

    r = _derive(build)
    assert r["S √2 = Q Kᵀ"].ok and r["S √2 = Q Kᵀ"].message == "largest difference 0"
    assert r["rows of A sum to one"].ok
    assert r["pairwise lists"].ok
    wrong = r["a wrong closed form"]
    assert not wrong.ok and wrong.message.startswith("largest difference 0.0202")  # 1/3 − √2/4 = 0.02022…
    assert not r["shapes differ"].ok and "(2, 2) and (1, 2)" in r["shapes differ"].message


def test_agree_tolerance_and_differ_threshold():
    def build(s):
        L = s.ledger("two numbers")
        x = L.input("x", sp.Rational(1, 3))
        y = L.define("y", x + sp.Rational(1, 10**30))
        s.agree("within 1e-40: no", x, y)
        s.agree("within 1e-29: yes", x, y, tol="1e-29")
        s.differ("by more than 1e-31: yes", x, y, by="1e-31")
        s.differ("by more than 1e-29: no", x, y, by="1e-29")

        s.differ("each pair differs: no", [x, x], [y, x], by="1e-31")
        s.differ("each pair differs: yes", [x, y], [y, x], by="1e-31")

    r = _derive(build)
    assert not r["each pair differs: no"].ok and r["each pair differs: yes"].ok
    assert r["each pair differs: no"].message == "largest difference 1e-30 (pair 0); 0 (pair 1)"
    assert not r["within 1e-40: no"].ok and r["within 1e-29: yes"].ok
    assert r["by more than 1e-31: yes"].ok and not r["by more than 1e-29: no"].ok


def test_agree_refuses_lists_of_different_lengths():
    d = Derivation("t", title="t", source="t.txt")

    @d.section("one section")
    def build(s):
        L = s.ledger("x")
        x = L.input("x", 1)
        s.agree("lists", [x, x], [x])

    verify([d])
    result = d.sections[0].claims[0].check()
    assert not result.ok and "same length" in result.message


def test_identity_evaluates_derivatives_at_a_point_before_simplifying():
    z = sp.Symbol("z", real=True)
    phi = sp.Function("phi")
    at_point = sp.diff(phi(z) ** 2, z).subs(z, 0)  # a Subs of a derivative of an undefined function

    def build(s):
        s.identity("d(φ²)/dz at 0 = 2 φ(0) φ′(0)", at_point - 2 * phi(0) * sp.Subs(sp.diff(phi(z), z), z, 0))
        s.identity("(z + 1)² = z² + 2z + 1", (z + 1) ** 2 - (z**2 + 2 * z + 1))
        s.identity("a false one", (z + 1) ** 2 - (z**2 + 1))

    r = _derive(build)
    assert r["d(φ²)/dz at 0 = 2 φ(0) φ′(0)"].ok
    assert r["(z + 1)² = z² + 2z + 1"].ok
    assert not r["a false one"].ok and "2*z" in r["a false one"].message


def test_use_refuses_what_is_not_a_ledger():
    d = Derivation("t", title="t", source="t.txt")

    @d.section("one section")
    def build(s):
        s.use("not a ledger")

    error = d.sections[0].error  # headed by the author's file and line
    assert error.endswith(f"test_authoring.py:{build.__code__.co_firstlineno + 2}: ClaimError: one section: use() "
                          f"registers ledgers; got a str")


def test_a_statement_in_words_is_decided_by_the_numbers_and_its_words_must_stay_in_the_text(tmp_path):
    """s.differ(..., near=the handout's words): verify fails when the numbers say otherwise, the audit fails when
    the words are no longer in the text (a statement without numbers is otherwise not looked for)."""
    from symseq.audit import audit, read

    def derivation(by):
        d = Derivation("t-words", title="t", source="t.md")

        @d.section("Section A")
        def a(s):
            L = s.ledger()
            x = L.define("x", L.input("u", [[1, 2]]) * 2)
            s.claim("(2,4)", x, what="x")
            s.differ("doubling gives a different result", x, L.handle("u"), by=by, near="gives a different result")

        return d

    assert verify([derivation("0.5")]).ok and not verify([derivation("5")]).ok  # (2, 4) − (1, 2) is at most 2
    said = tmp_path / "said.md"
    said.write_text("# Section A\n\nDoubling (1, 2) gives (2, 4).\nDoubling gives a different result.\n")
    gone = tmp_path / "gone.md"
    gone.write_text("# Section A\n\nDoubling (1, 2) gives (2, 4).\nDoubling leaves it unchanged.\n")
    assert audit(read(str(said)), [derivation("0.5")]).missing == []
    missing = audit(read(str(gone)), [derivation("0.5")]).missing
    assert [(m.printed, m.near) for m in missing] == [("doubling gives a different result", "gives a different result")]


# issue 13, "each derivation is under 80 lines": given and reported take several values, one declaration each
GIVEN_PAGE = """# Rows

## 1. The rows

X = [0.1, 0.2]
then [0.3, 0.4]
and again [0.1, 0.25]

Layer 5: [15.2, -8.9] and Layer 10: [156.7, -234.1]
"""


def _rows_page(tmp_path, build):
    from symseq.audit import audit_file

    d = Derivation("rows", title="rows", source="rows.md")
    d.section("1. The rows")(build)
    path = tmp_path / "rows.md"
    path.write_text(GIVEN_PAGE, encoding="utf-8")
    return d, audit_file(path, [d])


def test_given_with_several_values_declares_each_printed_row_in_order(tmp_path):
    def build(s):
        L = s.ledger("X")
        X = L.input("X", [["0.1", "0.2"], ["0.3", "0.4"]])
        s.given(X[0, :], X[1, :], X[0, :], what="the rows of X, then row 0 again")
        s.reported("[15.2, -8.9]", "[156.7, -234.1]", reason="illustrative")

    d, rep = _rows_page(tmp_path, build)
    (s,) = d.sections
    assert not s.error, s.error
    assert [g.seq for g in s.inputs] == [0, 1, 2] and [g.what for g in s.inputs] == ["the rows of X, then row 0 again"] * 3
    assert sp.Matrix(s.inputs[1].value.shape) == sp.Matrix([1, 2])
    cls = {(t.line, t.text): t.attribution.verdict for t in rep.tokens}
    # the third printed row differs from row 0 of X in its second entry (0.25 against 0.2): the input mismatch is wrong
    assert cls[(5, "[0.1, 0.2]")] == cls[(6, "[0.3, 0.4]")] == "covered"
    assert cls[(7, "[0.1, 0.25]")] == "wrong" and rep.failed
    assert cls[(9, "[15.2, -8.9]")] == cls[(9, "[156.7, -234.1]")] == "reported"
    assert [r.where for r in s.reported_numbers] == ["[15.2, -8.9]", "[156.7, -234.1]"]


def test_given_and_reported_refuse_a_bad_value_among_several_and_record_none():
    import pytest

    from symseq.errors import ClaimError

    d = Derivation("t", title="t", source="t.txt")
    seen = {}

    def build(s):
        L = s.ledger("x")
        x = L.input("x", sp.Rational(7, 10))
        with pytest.raises(ClaimError, match="where=' '"):
            s.reported("Table 1", " ", reason="trained")
        with pytest.raises(ClaimError, match="no ledger of this section defines"):
            s.given(x, sp.Symbol("y"), what="x, then y")
        with pytest.raises(ClaimError, match=r"2 input\(s\) takes one description .* got what=\('x',\)"):
            s.given(x, x, what=("x",))
        seen["counts"] = (len(s.reported_numbers), len(s.inputs))
        seen["one"] = s.given(x, what="x")
        seen["two"] = s.given(x, 2 * x, what=("x", "twice x"))

    d.section("one section")(build)
    assert not d.sections[0].error, d.sections[0].error
    assert seen["counts"] == (0, 0)
    assert seen["one"].value == sp.Rational(7, 10)  # one value: one Given, not a list
    assert [(g.what, g.value, g.seq) for g in seen["two"]] == [("x", sp.Rational(7, 10), 1),
                                                                ("twice x", sp.Rational(7, 5), 2)]


def test_claim_rows_claims_each_printed_row_and_skips_none():
    d = Derivation("t", title="t", source="t.txt")

    @d.section("table")
    def build(s):
        L = s.ledger()
        H = L.input("H", [["0.1", "1.3"], ["0.2", "0.5"], ["0.9", "1.1"]])
        s.claim_rows(["[0.2, 0.5]", None], H, start=1, what="H", at="Table 1")
        s.claim_rows(["[0.1, 1.3]", "[0.2, 0.6]"], H, what=("first", "second"))

    verify([d])
    claims = d.sections[0].claims
    assert [(c.printed, c.what, c.location.at, c.check().ok) for c in claims] == [
        ("[0.2, 0.5]", "H, row 1", "Table 1, row 1", True),
        ("[0.1, 1.3]", "first", "", True), ("[0.2, 0.6]", "second", "", False)]


def test_claim_cells_claims_a_matrix_cell_by_cell_and_names_a_wrong_cell():
    d = Derivation("t", title="t", source="t.txt")

    @d.section("bmatrix")
    def build(s):
        L = s.ledger()
        s.claim_cells("0.5 0 0 0.4", L.input("U", [["0.5", 0], [0, "0.5"]]), what="U")

    verify([d])
    claims = d.sections[0].claims
    assert [(c.what, c.check().ok) for c in claims] == [("U[0,0]", True), ("U[0,1]", True), ("U[1,0]", True),
                                                         ("U[1,1]", False)]


def test_claim_rows_and_cells_refuse_a_count_that_does_not_fit_and_claim_nothing():
    d = Derivation("t", title="t", source="t.txt")
    errors = []

    @d.section("bad")
    def build(s):
        U = s.ledger().input("U", [[1, 2], [3, 4]])
        for call in (lambda: s.claim_cells("1 2 3", U, what="U"), lambda: s.claim_rows(["[1, 2]"] * 3, U),
                     lambda: s.claim_rows(["[1, 2]", "[3, 4]"], U, what=("only one",))):
            try:
                call()
            except Exception as exc:
                errors.append(str(exc))

    (s,) = d.sections
    assert not s.error and not s.claims and len(errors) == 3
    assert "3 printed cell(s) for a matrix of shape 2×2" in errors[0]
    assert "needs a matrix with 3 rows at least; it has 2" in errors[1]
    assert "one string per printed row (2)" in errors[2]


def test_a_derivation_section_of_reported_numbers_only():
    d = Derivation("t", title="t", source="t.txt")
    d.reported("Training", "0.001", "15.7", reason="illustrative gradient sizes")
    (s,) = d.sections
    assert (s.title, [(r.where, r.reason) for r in s.reported_numbers]) == (
        "Training", [("0.001", "illustrative gradient sizes"), ("15.7", "illustrative gradient sizes")])
